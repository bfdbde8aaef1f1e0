//! GCSORT's echo of a job's statements, printed under `Operation` when `GCSORT_STATISTICS` is
//! 1 or 2 (GCSORT's `job_print`), in its order and forms:
//!
//! ```text
//!  INPUT FILE :                                   each USE: name, FIXED|VARIABLE, (min,max), ORG
//!  \tin.dat FIXED (80,80) SQ
//!  OUTPUT FILE :
//!  \tout.dat FIXED (80,80) SQ
//!  SORT FIELDS : (1,5,CH,A,9,4,BI,D)               or MERGE FIELDS; FIELDS = COPY for a copy
//!  SKIPREC = 2                                     STOPAFT = n
//!  INCLUDE COND : (1,3,CH,EQ,C'ABC',OR,5,2,ZD,GT,Z'10')     conditions in order, no
//!  OMIT COND : (...)                                          parentheses; decimal constants Z'..'
//!  OUTREC FIELDS : (1,5,11:C'abc',3X)              INREC and OUTREC items as written
//!  INREC FIELDS : (...)
//!  SUM FIELDS = NONE                               or SUM  FIELDS : (5,4,ZD,...)
//!  OPTION  VLSCMP VLSHRT
//!  OUTFIL :                                        each group:
//!  \tFNAMES/FILES:                                   its files, as the GIVE file's format
//!  \t\tout1.dat FIXED (80,80) SQ
//!  \t\tINCLUDE : (1,1,CH,EQ,C'A')                    or OMIT : (...)
//!  \t\tOUTREC : (1,10)                               the group's BUILD/OUTREC/FIELDS items
//!  \t\tSPLIT                                         STARTREC = n, ENDREC = n
//! ```
//!
//! The conditions, SUM fields and OUTFIL groups come from the parsed statements; the items of
//! INREC, OUTREC and an OUTFIL's reformatting from their text (the parsed form has already
//! turned `11:` into blanks), which the GCSORT door keeps one statement a line.

use oxsort_format::{
    CompareOp, Condition, FieldRef, Filter, JoinItem, JoinSide, JoinSpec, Operand, Outfil, Split,
};
use oxsort_lang::{Control, GcsortFile, GcsortJob};

/// GCSORT's echo of `job`'s statements (`control` is `job.control` parsed); for a JOINKEYS
/// job, GCSORT's description of the join (`join_echo`).
pub fn statements_echo(job: &GcsortJob, control: &Control) -> String {
    if let Some(spec) = &control.join {
        return join_echo(job, control, spec);
    }
    let mut s = String::from("INPUT FILE :\n");
    for f in &job.uses {
        s += &format!("\t{}\n", file_line(&f.name, f));
    }
    if let Some(give) = &job.give {
        s += &format!("OUTPUT FILE :\n\t{}\n", file_line(&give.name, give));
    }
    if let (Some(key), false) = (&control.key, control.copy) {
        let fields: Vec<String> = key
            .fields
            .iter()
            .filter_map(|f| match f.loc {
                oxsort_format::FieldLoc::Bytes { offset, len } => Some(format!(
                    "{},{len},{},{}",
                    offset + 1,
                    type_name(f.kind.name()),
                    order(f.descending)
                )),
                _ => None,
            })
            .collect();
        let verb = if control.merge { "MERGE" } else { "SORT" };
        s += &format!("{verb} FIELDS : ({})\n", fields.join(","));
    }
    if control.copy {
        s += "FIELDS = COPY \n";
    }
    if let Some(n) = control.skiprec {
        s += &format!("SKIPREC = {n}\n");
    }
    if let Some(n) = control.stopaft {
        s += &format!("STOPAFT = {n}\n");
    }
    if let Some(filter) = &control.filter {
        let what = if filter.omit { "OMIT" } else { "INCLUDE" };
        s += &format!("{what} COND : ({})\n", condition(&filter.condition));
    }
    for stage in ["OUTREC", "INREC"] {
        s += &stage_items(job, stage);
    }
    if control.sum_none {
        s += "SUM FIELDS = NONE\n";
    } else if let Some(sum) = &control.sum {
        let fields: Vec<String> = sum
            .iter()
            .map(|f| format!("{},{},{}", f.offset + 1, f.len, type_name(f.kind.name())))
            .collect();
        s += &format!("SUM  FIELDS : ({})\n", fields.join(","));
    }
    if control.vlscmp || control.vlshrt {
        s += "OPTION ";
        s += if control.vlscmp { " VLSCMP" } else { "" };
        s += if control.vlshrt { " VLSHRT" } else { "" };
        s += "\n";
    }
    s += &outfil_groups(job, control);
    s
}

/// GCSORT's description of a JOINKEYS job (GCSORT prints no files for it):
///
/// ```text
///  JOIN F1 FIELDS : (1,10,CH,A)             each file's keys (as CH): then `, SORTED` and
///  JOIN F2 FIELDS : (5,10,CH,A) , SORTED      `, STOPAFT=n` each ending a line, then a line's
///                                             end; its INCLUDE/OMIT condition follows with no
///                                             name and no line's end, as GCSORT prints it
///  REFORMAT FIELDS = (1,50,F2:51,49,F2:B)   each item after the first named by its file
///                                             (`?` by the file of the item before it) and `?`
///                                             as B; `()` without REFORMAT
///  JOIN UNPAIRED  Full outer join - Unpaired  the kind of join, in GCSORT's words
///  OUTFIL : ...                              the main task's OUTFIL groups and OUTREC
///  OUTREC FIELDS : (...)
/// ```
fn join_echo(job: &GcsortJob, control: &Control, spec: &JoinSpec) -> String {
    let mut s = String::new();
    for side in [JoinSide::F1, JoinSide::F2] {
        let input = spec.input(side);
        if !input.keys.is_empty() {
            let keys: Vec<String> = input
                .keys
                .iter()
                .map(|k| format!("{},{},CH,{}", k.offset + 1, k.len, order(k.descending)))
                .collect();
            s += &format!("JOIN {} FIELDS : ({}) ", side.name(), keys.join(","));
            if input.sorted {
                s += ", SORTED\n";
            }
            if let Some(n) = input.stopaft {
                s += &format!(", STOPAFT={n}\n");
            }
            s += "\n";
        }
        if let Some(filter) = &input.filter {
            s += &condition(&filter.condition);
        }
    }
    let mut file = None;
    let items: Vec<String> = spec
        .reformat
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, item)| {
            let text = match *item {
                JoinItem::Field { side, offset, len } => {
                    file = Some(side);
                    format!("{},{len}", offset + 1)
                }
                JoinItem::Indicator => "B".to_string(),
            };
            match file {
                Some(side) if i > 0 => format!("{}:{text}", side.name()),
                _ => text,
            }
        })
        .collect();
    s += &format!("REFORMAT FIELDS = ({})\n", items.join(","));
    let kind = match (spec.unpaired_f1, spec.unpaired_f2, spec.only) {
        (false, false, _) => " Inner Join (Default) ",
        (true, true, false) => " Full outer join - Unpaired",
        (true, false, false) => "  Left outer join - Unpaired, F1",
        (false, true, false) => " Right outer join - Unpaired, F2",
        (true, true, true) => " Unpaired from F1 - Unpaired, F1, F2, Only",
        (true, false, true) => " Unpaired from F1 - Unpaired, F1, Only",
        (false, true, true) => " Unpaired from F2 - Unpaired, F2, Only",
    };
    s += &format!("JOIN UNPAIRED {kind}\n");
    s += &outfil_groups(job, control);
    s += &stage_items(job, "OUTREC");
    s
}

/// `A` or `D`.
fn order(descending: bool) -> &'static str {
    if descending {
        "D"
    } else {
        "A"
    }
}

/// `STAGE FIELDS : (items)` for the first INREC or OUTREC statement, its items as written;
/// empty without one.
fn stage_items(job: &GcsortJob, stage: &str) -> String {
    job.control
        .lines()
        .filter(|l| statement_name(l).eq_ignore_ascii_case(stage))
        .find_map(|l| operand_value(l, &["FIELDS", "BUILD", "OVERLAY", "FINDREP", "IFTHEN"]))
        .map(|items| format!("{stage} FIELDS : ({items})\n"))
        .unwrap_or_default()
}

/// `OUTFIL : ` and each group ([`outfil_group`]); empty without OUTFIL.
fn outfil_groups(job: &GcsortJob, control: &Control) -> String {
    if control.outfil.is_empty() {
        return String::new();
    }
    let groups: String = control.outfil.iter().map(|g| outfil_group(job, g)).collect();
    format!("OUTFIL : \n{groups}")
}

/// A file as GCSORT prints it: `name FIXED|VARIABLE (min,max) ORG`.
fn file_line(name: &str, f: &GcsortFile) -> String {
    let (org, record) = &f.written;
    let parts: Vec<&str> = record.split(',').collect();
    let (form, min, max) = match parts.as_slice() {
        ["F", n] => ("FIXED", *n, *n),
        [_, min, max] => ("VARIABLE", *min, *max),
        _ => ("UNKNOWN", "0", "0"),
    };
    format!("{name} {form} ({min},{max}) {org}")
}

/// GCSORT's name of a type oxsort names `name`: its `FL` is oxsort's `LF` (the machine's byte
/// order).
fn type_name(name: &'static str) -> &'static str {
    match name {
        "LF" => "FL",
        k => k,
    }
}

/// A condition as GCSORT prints it: each comparison `p,m,f,OP,` and its constant (or
/// `p,m,f,OP,p2,m2,f2`), joined by `,AND,` and `,OR,` in the order written, without the
/// parentheses.
fn condition(c: &Condition) -> String {
    match c {
        Condition::Compare { left, op, right, .. } => compare(left, *op, right),
        Condition::And(a, b) => format!("{},AND,{}", condition(a), condition(b)),
        Condition::Or(a, b) => format!("{},OR,{}", condition(a), condition(b)),
        Condition::All => "ALL".to_string(),
        Condition::Nothing => "NONE".to_string(),
        // A kind of condition GCSORT has no print form for.
        _ => String::new(),
    }
}

/// One comparison.
fn compare(left: &FieldRef, op: CompareOp, right: &Operand) -> String {
    let field = |f: &FieldRef| format!("{},{},{}", f.offset + 1, f.len, type_name(f.kind.name()));
    let op_name = match (op, right) {
        (CompareOp::Eq, Operand::Substring(_)) => "SS",
        (CompareOp::Eq, _) => "EQ",
        (CompareOp::Ne, _) => "NE",
        (CompareOp::Gt, _) => "GT",
        (CompareOp::Ge, _) => "GE",
        (CompareOp::Lt, _) => "LT",
        (CompareOp::Le, _) => "LE",
    };
    let value = match right {
        Operand::Field(f) => return format!("{},{op_name},{}", field(left), field(f)),
        Operand::Chars(b) | Operand::Substring(b) => {
            format!("C'{}'", String::from_utf8_lossy(b))
        }
        Operand::Hex(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
            format!("X'{hex}'")
        }
        Operand::Number { negative, digits, .. } => {
            format!("Z'{}{digits}'", if *negative { "-" } else { "" })
        }
    };
    format!("{},{op_name},{value}", field(left))
}

/// The value of the first operand of `line` named one of `names` (`NAME=value`), as written
/// without its outer parentheses and without blanks outside quotes (`None` without one).
fn operand_value(line: &str, names: &[&str]) -> Option<String> {
    let line = line.trim_start();
    oxsort_lang::split_operands(&line[statement_name(line).len()..]).into_iter().find_map(|op| {
        let (name, value) = op.split_once('=')?;
        names.iter().any(|n| n.eq_ignore_ascii_case(name.trim())).then_some(())?;
        let value = value.trim();
        let inner = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')).unwrap_or(value);
        Some(unblank(inner))
    })
}

/// `text` without the blanks outside quotes.
fn unblank(text: &str) -> String {
    let mut quoted = false;
    text.chars()
        .filter(|&c| {
            if c == '\'' {
                quoted = !quoted;
            }
            quoted || c != ' '
        })
        .collect()
}

/// The statement name a control line starts with.
fn statement_name(line: &str) -> &str {
    let line = line.trim_start();
    &line[..line.find(' ').unwrap_or(line.len())]
}

/// One OUTFIL group: its files (as written, in the GIVE file's format), its condition, its
/// reformatting, `SPLIT`, `STARTREC` and `ENDREC`.
fn outfil_group(job: &GcsortJob, group: &Outfil) -> String {
    let mut s = String::from("\tFNAMES/FILES:\n");
    let line = statement_line(job, group);
    let format = job.give.as_ref().or(job.uses.first());
    for (_, name) in group_names(job, group) {
        match format {
            Some(f) => s += &format!("\t\t{}\n", file_line(&name, f)),
            None => s += &format!("\t\t{name} FIXED (0,0) SQ\n"),
        }
    }
    if let Some(Filter { omit, condition: c, .. }) = &group.filter {
        let what = if *omit { "OMIT" } else { "INCLUDE" };
        s += &format!("\t\t{what} : ({})\n", condition(c));
    }
    if let Some(items) = operand_value(line, &["OUTREC", "BUILD", "FIELDS", "OVERLAY"]) {
        s += &format!("\t\tOUTREC : ({items})\n");
    }
    if group.split != Split::None {
        s += "\t\tSPLIT \n";
    }
    if let Some(n) = group.startrec {
        s += &format!("\t\tSTARTREC = {n}\n");
    }
    if let Some(n) = group.endrec {
        s += &format!("\t\tENDREC = {n}\n");
    }
    s
}

/// The outputs of every OUTFIL group of `control` (`job.control` parsed): each DD name and
/// the name as written in the job.
pub fn outfil_names(job: &GcsortJob, control: &Control) -> Vec<(String, String)> {
    control.outfil.iter().flat_map(|g| group_names(job, g)).collect()
}

/// The outputs of one OUTFIL group: each DD name and the name as written.
fn group_names(job: &GcsortJob, group: &Outfil) -> Vec<(String, String)> {
    // `FNAMES=a` or `FNAMES=(a,b)`, as written.
    let written: Vec<String> = operand_value(statement_line(job, group), &["FNAMES", "FILES"])
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let name = |i: usize, dd: &String| match job.fnames.iter().find(|(alias, _)| alias == dd) {
        Some((_, w)) => w.clone(),
        None => written.get(i).cloned().unwrap_or_else(|| dd.clone()),
    };
    group.names.iter().enumerate().map(|(i, dd)| (dd.clone(), name(i, dd))).collect()
}

/// The control line of an OUTFIL group's statement.
fn statement_line<'a>(job: &'a GcsortJob, group: &Outfil) -> &'a str {
    job.control.lines().nth(group.line.wrapping_sub(1)).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names stand for themselves; there are no TAKE files.
    struct Names;

    impl oxsort_lang::GcsortFiles for Names {
        fn path(&self, name: &str) -> std::path::PathBuf {
            name.into()
        }
        fn read(&mut self, _: &std::path::Path) -> std::io::Result<String> {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }

    fn echo(text: &str) -> String {
        let job = oxsort_lang::parse_gcsort(text, "job", &mut Names).unwrap();
        statements_echo(&job, &oxsort_lang::parse_control(&job.control).unwrap())
    }

    #[test]
    fn the_echo_gives_files_fields_and_options() {
        assert_eq!(
            echo(
                "MERGE FIELDS=(5,4,FL,D,1,2,CH,A) USE a ORG SQ RECORD V,10,300 \
                 USE b ORG LSF RECORD F,20 GIVE c ORG SQ RECORD F,20 SUM FIELDS=NONE \
                 OPTION SKIPREC=2,STOPAFT=9,VLSCMP"
            ),
            "INPUT FILE :\n\ta VARIABLE (10,300) SQ\n\tb FIXED (20,20) LSF\n\
             OUTPUT FILE :\n\tc FIXED (20,20) SQ\nMERGE FIELDS : (5,4,FL,D,1,2,CH,A)\n\
             SKIPREC = 2\nSTOPAFT = 9\nSUM FIELDS = NONE\nOPTION  VLSCMP\n"
        );
        assert_eq!(
            echo("SORT FIELDS=COPY USE a ORG LS RECORD F,5 GIVE b ORG LS RECORD F,5"),
            "INPUT FILE :\n\ta FIXED (5,5) LS\nOUTPUT FILE :\n\tb FIXED (5,5) LS\nFIELDS = COPY \n"
        );
    }

    /// The lines of the echo after the files and the key.
    fn statements(text: &str) -> Vec<String> {
        let files = " USE in ORG SQ RECORD F,20 GIVE out ORG SQ RECORD F,20";
        echo(&format!("SORT FIELDS=(1,2,CH,A) {text}{files}"))
            .lines()
            .skip(5)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn conditions_lose_their_parentheses_and_keep_their_order() {
        assert_eq!(
            statements(
                "INCLUDE COND=((1,3,CH,EQ,C'A B',OR,1,3,CH,EQ,X'c1c2'),AND,\
                 (5,2,ZD,GT,-10,OR,7,2,CH,NE,9,2,CH))"
            ),
            ["INCLUDE COND : (1,3,CH,EQ,C'A B',OR,1,3,CH,EQ,X'C1C2',AND,5,2,ZD,GT,Z'-10',OR,\
              7,2,CH,NE,9,2,CH)"]
        );
        assert_eq!(
            statements("OMIT COND=(1,3,EQ,C'X',&,4,1,EQ,C'Y'),FORMAT=CH"),
            ["OMIT COND : (1,3,CH,EQ,C'X',AND,4,1,CH,EQ,C'Y')"]
        );
    }

    #[test]
    fn reformats_and_sums_echo_their_items() {
        assert_eq!(
            statements("INREC FIELDS=(1,10, 11:C'a b',3X) OUTREC BUILD=(1,20) SUM FIELDS=(5,4,ZD)"),
            [
                "OUTREC FIELDS : (1,20)",
                "INREC FIELDS : (1,10,11:C'a b',3X)",
                "SUM  FIELDS : (5,4,ZD)"
            ]
        );
    }

    /// The echo of a join of two 20-byte files with `statements`.
    fn join(statements: &str) -> Vec<String> {
        let files = " USE a ORG SQ RECORD F,20 USE b ORG SQ RECORD F,20 GIVE c ORG SQ RECORD F,30";
        echo(&format!("{statements}{files}")).lines().map(str::to_string).collect()
    }

    #[test]
    fn a_join_describes_its_keys_reformat_and_kind() {
        assert_eq!(
            join(
                "JOINKEYS FILES=F1,FIELDS=(1,10,A,15,2,D) JOINKEYS FILES=F2,FIELDS=(5,10,A,1,2,D) \
                 JOIN UNPAIRED,F1,F2 REFORMAT FIELDS=(F1:1,10,11,5,F2:15,4,?),FILL=C'*'"
            ),
            [
                "JOIN F1 FIELDS : (1,10,CH,A,15,2,CH,D) ",
                "JOIN F2 FIELDS : (5,10,CH,A,1,2,CH,D) ",
                "REFORMAT FIELDS = (1,10,F1:11,5,F2:15,4,F2:B)",
                "JOIN UNPAIRED  Full outer join - Unpaired",
            ]
        );
        // SORTED and STOPAFT each end a line before the key line's own end; a file's
        // condition follows unnamed, run into the next line, as GCSORT prints it.
        assert_eq!(
            join(
                "JOINKEYS FILE=F1,FIELDS=(1,10,A),SORTED,STOPAFT=5,\
                 INCLUDE=(12,1,CH,EQ,C'Y') JOINKEYS FILE=F2,FIELDS=(1,10,A) \
                 REFORMAT FIELDS=(?,F2:1,20) OUTREC BUILD=(1,21,9X)"
            ),
            [
                "JOIN F1 FIELDS : (1,10,CH,A) , SORTED",
                ", STOPAFT=5",
                "",
                "12,1,CH,EQ,C'Y'JOIN F2 FIELDS : (1,10,CH,A) ",
                "REFORMAT FIELDS = (B,F2:1,20)",
                "JOIN UNPAIRED  Inner Join (Default) ",
                "OUTREC FIELDS : (1,21,9X)",
            ]
        );
    }

    #[test]
    fn each_kind_of_join_has_its_words() {
        let kind = |join_statement: &str| {
            let keys = "JOINKEYS FILE=F1,FIELDS=(1,2,A) JOINKEYS FILE=F2,FIELDS=(1,2,A) ";
            let reformat =
                if join_statement.contains("ONLY") { "" } else { " REFORMAT FIELDS=(F1:1,20)" };
            join(&format!("{keys}{join_statement}{reformat}")).last().cloned().unwrap()
        };
        for (statement, words) in [
            ("JOIN UNPAIRED", " Full outer join - Unpaired"),
            ("JOIN UNPAIRED,F1", "  Left outer join - Unpaired, F1"),
            ("JOIN UNPAIRED,F2", " Right outer join - Unpaired, F2"),
            ("JOIN UNPAIRED,F1,F2,ONLY", " Unpaired from F1 - Unpaired, F1, F2, Only"),
            ("JOIN UNPAIRED,F1,ONLY", " Unpaired from F1 - Unpaired, F1, Only"),
            ("JOIN UNPAIRED,F2,ONLY", " Unpaired from F2 - Unpaired, F2, Only"),
        ] {
            assert_eq!(kind(statement), format!("JOIN UNPAIRED {words}"), "{statement}");
        }
    }

    #[test]
    fn outfil_groups_list_their_files_and_clauses() {
        assert_eq!(
            statements(
                "OUTFIL FNAMES=f_one,INCLUDE=(1,1,CH,EQ,C'A'),OUTREC=(1,10),STARTREC=2 \
                 OUTFIL FILES=two,three,SPLIT"
            ),
            [
                "OUTFIL : ",
                "\tFNAMES/FILES:",
                "\t\tf_one FIXED (20,20) SQ",
                "\t\tINCLUDE : (1,1,CH,EQ,C'A')",
                "\t\tOUTREC : (1,10)",
                "\t\tSTARTREC = 2",
                "\tFNAMES/FILES:",
                "\t\ttwo FIXED (20,20) SQ",
                "\t\tthree FIXED (20,20) SQ",
                "\t\tSPLIT ",
            ]
        );
    }
}
