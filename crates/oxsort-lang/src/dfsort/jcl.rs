//! The DD statements of a JCL step: which data set each DD names, and its record format.
//!
//! ```text
//!  //SORTIN   DD DSN=PROD.SALES.DAILY,DISP=SHR,       <- name, operands (a trailing ','
//!  //            DCB=(RECFM=FB,LRECL=80)              <-   continues on the next // line)
//!  //         DD DSN=PROD.SALES.EXTRA,DISP=SHR        <- no name: concatenated to SORTIN
//!  //SORTOUT  DD SYSOUT=*                            <- standard output
//!  //SYSIN    DD *                                   <- in-stream data (the control statements)
//! ```
//!
//! Only what a sort needs is kept: the data set names (`DSN=`/`DSNAME=`), `SYSOUT`, in-stream
//! and `DUMMY` DDs, and `RECFM`/`LRECL` (in `DCB=(...)` or on their own). Other operands
//! (`DISP`, `SPACE`, `UNIT`, ...) are accepted and ignored.
//!
//! A pure text-to-structure module: it reads no file (the caller hands it the text).

/// A DD statement that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JclError {
    /// A DD statement without a name that follows no named DD.
    #[error("line {line}: a DD statement without a name must follow a named DD")]
    Unnamed {
        /// The statement's line.
        line: usize,
    },
    /// An `LRECL=` that is no record length.
    #[error("line {line}: //{dd} DD LRECL={value}: expected a record length")]
    Lrecl {
        /// The statement's line.
        line: usize,
        /// The DD name.
        dd: String,
        /// The value as written.
        value: String,
    },
}

type Result<T> = std::result::Result<T, JclError>;

/// One DD statement (with the data sets concatenated to it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JclDd {
    /// The DD name, upper case.
    pub name: String,
    /// 1-based line of the statement.
    pub line: usize,
    /// The data set names, in concatenation order.
    pub dsns: Vec<String>,
    /// `SYSOUT=...`: written to standard output.
    pub sysout: bool,
    /// `DD *` or `DD DATA`: in-stream data.
    pub instream: bool,
    /// `DUMMY` (or `DSN=NULLFILE`): an empty input, a discarded output.
    pub dummy: bool,
    /// `RECFM=`, upper case.
    pub recfm: Option<String>,
    /// `LRECL=`.
    pub lrecl: Option<usize>,
}

/// Whether `text` is a JCL step rather than bare control statements.
pub fn is_jcl(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("//"))
}

/// The DD statements of a JCL text, in order; errors name the line.
pub fn dd_statements(text: &str) -> Result<Vec<JclDd>> {
    let mut dds: Vec<JclDd> = Vec::new();
    // The statement being continued: its operands so far and whether it is a DD.
    let mut pending: Option<(String, bool, usize, String)> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let ln = i + 1;
        if !line.starts_with("//") || line.starts_with("//*") {
            continue;
        }
        let body = &line[2..];
        if let Some((name, is_dd, start, mut operands)) = pending.take() {
            operands.push_str(first_field(body.trim_start()));
            if operands.ends_with(',') {
                pending = Some((name, is_dd, start, operands));
            } else if is_dd {
                add_dd(&mut dds, &name, start, &operands)?;
            }
            continue;
        }
        let name_len = body.find(|c: char| c.is_ascii_whitespace()).unwrap_or(body.len());
        let name = body[..name_len].to_ascii_uppercase();
        let rest = body[name_len..].trim_start();
        let op_len = rest.find(|c: char| c.is_ascii_whitespace()).unwrap_or(rest.len());
        let op = rest[..op_len].to_ascii_uppercase();
        if op.is_empty() {
            continue;
        }
        let operands = first_field(rest[op_len..].trim_start()).to_string();
        let is_dd = op == "DD";
        if operands.ends_with(',') {
            pending = Some((name, is_dd, ln, operands));
        } else if is_dd {
            add_dd(&mut dds, &name, ln, &operands)?;
        }
    }
    if let Some((name, true, start, operands)) = pending {
        add_dd(&mut dds, &name, start, operands.trim_end_matches(','))?;
    }
    Ok(dds)
}

/// The operand field: up to the first blank outside quotes (the rest is a comment).
fn first_field(s: &str) -> &str {
    let mut quote = false;
    for (i, c) in s.char_indices() {
        if c == '\'' {
            quote = !quote;
        } else if c.is_ascii_whitespace() && !quote {
            return &s[..i];
        }
    }
    s
}

fn add_dd(dds: &mut Vec<JclDd>, name: &str, line: usize, operands: &str) -> Result<()> {
    let mut dd = JclDd { name: name.to_string(), line, ..JclDd::default() };
    let mut ops = super::split_operands(operands);
    if let Some(first) = ops.first() {
        match first.to_ascii_uppercase().as_str() {
            "*" | "DATA" => {
                dd.instream = true;
                ops.remove(0);
            }
            "DUMMY" => {
                dd.dummy = true;
                ops.remove(0);
            }
            _ => {}
        }
    }
    for op in ops {
        let Some((key, value)) = op.split_once('=') else { continue };
        let key = key.to_ascii_uppercase();
        match key.as_str() {
            "DSN" | "DSNAME" => {
                let v = value.trim_matches('\'');
                if v.eq_ignore_ascii_case("NULLFILE") {
                    dd.dummy = true;
                } else {
                    dd.dsns.push(v.to_string());
                }
            }
            "SYSOUT" => dd.sysout = true,
            "DCB" => {
                let inner = value.strip_prefix('(').and_then(|v| v.strip_suffix(')'));
                for sub in super::split_operands(inner.unwrap_or(value)) {
                    if let Some((k, v)) = sub.split_once('=') {
                        dcb_operand(&mut dd, &k.to_ascii_uppercase(), v, line)?;
                    }
                }
            }
            "RECFM" | "LRECL" => dcb_operand(&mut dd, &key, value, line)?,
            _ => {}
        }
    }
    if name.is_empty() {
        // A concatenation: the data sets go to the DD above.
        let Some(prev) = dds.last_mut() else {
            return Err(JclError::Unnamed { line });
        };
        prev.dsns.extend(dd.dsns);
        prev.dummy |= dd.dummy;
        return Ok(());
    }
    dds.push(dd);
    Ok(())
}

/// The in-stream data of the DD `name` (`//name DD *` or `DD DATA`, up to `/*` or the next `//`
/// line), every other line of `text` left blank so that line numbers stay the file's; `None`
/// when the step has no such DD.
pub fn instream_text(text: &str, name: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let (mut inside, mut found) = (false, false);
    for line in text.split('\n') {
        let body = line.strip_suffix('\r').unwrap_or(line);
        if body.starts_with("//") || body.starts_with("/*") {
            inside = false;
            let words: Vec<String> =
                body[2..].split_whitespace().take(3).map(|w| w.to_ascii_uppercase()).collect();
            if let [dd, op, what] = words.as_slice() {
                let what = what.split(',').next().unwrap_or("");
                if dd.eq_ignore_ascii_case(name) && op == "DD" && (what == "*" || what == "DATA") {
                    inside = true;
                    found = true;
                }
            }
        } else if inside {
            out.push_str(body);
        }
        out.push('\n');
    }
    found.then_some(out)
}

fn dcb_operand(dd: &mut JclDd, key: &str, value: &str, line: usize) -> Result<()> {
    match key {
        "RECFM" => dd.recfm = Some(value.to_ascii_uppercase()),
        "LRECL" => match value.parse::<usize>() {
            Ok(n) if n > 0 => dd.lrecl = Some(n),
            _ => {
                return Err(JclError::Lrecl { line, dd: dd.name.clone(), value: value.to_string() })
            }
        },
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dd_statements_with_continuations_concatenations_and_dcb() {
        let text = "//JOB1 JOB (ACCT),'X'\n//S1 EXEC PGM=SORT\n\
                    //SORTIN DD DSN=A.B,DISP=SHR,\n//    DCB=(RECFM=FB,LRECL=80)  comment\n\
                    //       DD DSN='C.D',DISP=SHR\n//SORTOUT DD SYSOUT=*\n//*comment\n\
                    //SORTOF01 DD DSN=OUT.ONE,DISP=(NEW,CATLG),RECFM=FB,LRECL=40\n\
                    //SYSIN DD *\n SORT FIELDS=COPY\n/*\n";
        let dds = dd_statements(text).unwrap();
        let names: Vec<_> = dds.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["SORTIN", "SORTOUT", "SORTOF01", "SYSIN"]);
        assert_eq!(dds[0].dsns, ["A.B", "C.D"]);
        assert_eq!((dds[0].recfm.as_deref(), dds[0].lrecl, dds[0].line), (Some("FB"), Some(80), 3));
        assert!(dds[1].sysout && dds[3].instream);
        assert_eq!((dds[2].dsns[0].as_str(), dds[2].lrecl), ("OUT.ONE", Some(40)));
        let cntl = instream_text(text, "sysin").unwrap();
        assert_eq!(cntl.lines().nth(9), Some(" SORT FIELDS=COPY"));
        assert!(cntl.lines().filter(|l| !l.is_empty()).count() == 1);
        assert!(instream_text(text, "JNF1CNTL").is_none());
        let err = dd_statements("//X DD DSN=A,LRECL=ABC\n").unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("LRECL=ABC"), "{err}");
    }
}
