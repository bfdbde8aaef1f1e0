//! GCSORT take files as GCSORT's own examples and help text write them, read into their files
//! and DFSORT statements: each job's statements must then parse as DFSORT's, with the key,
//! the files and the record formats the GCSORT text says.

use std::path::{Path, PathBuf};

use oxsort_format::{FieldType, KeyField};
use oxsort_lang::{parse_control, parse_gcsort, GcsortFiles, GcsortJob, GcsortOrg};

/// Names stand for themselves; no TAKE file is read.
struct Plain;

impl GcsortFiles for Plain {
    fn path(&self, name: &str) -> PathBuf {
        PathBuf::from(name)
    }
    fn read(&mut self, path: &Path) -> std::io::Result<String> {
        Err(std::io::Error::new(std::io::ErrorKind::NotFound, path.display().to_string()))
    }
}

/// The job and its DFSORT control, both read without error.
fn read(text: &str) -> (GcsortJob, oxsort_lang::Control) {
    let job = parse_gcsort(text, "job.prm", &mut Plain).unwrap();
    let control = parse_control(&job.control)
        .unwrap_or_else(|e| panic!("{}\n{}", job.locate(&e), job.control));
    (job, control)
}

fn ch(pos: usize, len: usize, descending: bool) -> KeyField {
    KeyField::bytes(pos - 1, len, FieldType::Char, descending)
}

#[test]
fn fields_without_equals_and_a_record_split_over_lines() {
    // The help text's `FIELDS({Pos},{Len},{FormatType},{Order}, ...)`, and an ORG whose value
    // is on the next line, the GIVE after it on that line.
    let (job, c) = read(
        "* Zoned\nSORT FIELDS(4,1,CH,A) \n\
         SUM FIELDS=(1,3,ZD,5,3,ZD) \n\
         USE D:\\GNU_COBOL\\Files\\SQZD03 RECORD F,396 ORG \n\
         SQ GIVE  D:\\GNU_COBOL\\Files\\SQZD03.SRT  RECORD F,396 ORG SQ\n",
    );
    assert_eq!(c.key.unwrap().fields, vec![ch(4, 1, false)]);
    assert_eq!(c.sum.map(|s| s.len()), Some(2));
    assert_eq!(job.uses[0].org, GcsortOrg::Fixed(396));
    assert_eq!(job.uses[0].path, PathBuf::from("D:\\GNU_COBOL\\Files\\SQZD03"));
    assert_eq!(job.give.unwrap().path, PathBuf::from("D:\\GNU_COBOL\\Files\\SQZD03.SRT"));
}

#[test]
fn statements_after_give_with_blanks_around_equals_and_a_blank_between_operands() {
    let (job, c) = read(
        "USE in.txt ORG LS RECORD F,3000  \n\
         GIVE out.txt ORG LS RECORD F,3000    \n\
         SORT FIELDS=(5,6,A),FORMAT=CH,EQUALS\n\
         \x20     SUM FIELDS = (NONE)\n\
         INCLUDE COND=(37,1,EQ,C'C') FORMAT=CH\n",
    );
    assert_eq!(c.key.unwrap().fields, vec![ch(5, 6, false)]);
    assert!(c.sum_none && c.equals == Some(true));
    assert!(c.filter.is_some());
    assert_eq!(job.sort_files().unwrap().org, GcsortOrg::LinesFixed { len: 3000, trim: true });
}

#[test]
fn a_condition_continued_by_trailing_commas_and_tabs_for_blanks() {
    let (_, c) = read(
        "USE  in.dat\t\tRECORD F,3000 ORG LS \nGIVE out.dat RECORD F,3000 ORG LS\n\
         MERGE FIELDS=COPY\n\
         OMIT    COND=(01,12,EQ,C'000000003030',OR,\n\
         \x20             01,12,EQ,C'000000000000',OR,\n\
         \x20             01,12,EQ,C'000000000001'),FORMAT=CH\n\
         \t\tOPTION  VLSHRT,VLSCMP,EQUALS\n",
    );
    assert!(c.copy && c.filter.is_some() && c.vlshrt && c.vlscmp);
}

#[test]
fn a_join_on_the_command_line_as_gcsort_tests_write_it() {
    // GCSORT's own join test: every statement on one command line, the files line sequential.
    let (job, c) = read(
        "JOINKEYS FILES=F1,FIELDS=(1,6,A) JOINKEYS FILES=F2,FIELDS=(1,6,A)  \
         REFORMAT FIELDS=(?,F1:1,26,F2:1,23) USE  files/inpjoin01.txt ORG LS RECORD F,250  \
         USE  files/inpjoin02.txt ORG LS RECORD F,250  GIVE out.srt ORG LS  RECORD F,250 ",
    );
    assert!(job.join && c.join.is_some());
    let f = job.join_files().unwrap();
    assert_eq!((f.f1.1, f.f2.1, f.give.1), (250, 250, 250));
}

#[test]
fn outfil_groups_named_by_environment_variables() {
    let (job, c) = read(
        "USE in.txt ORG LS RECORD F,3000\nGIVE out.txt ORG LS RECORD F,3000\n\
         MERGE   FIELDS=COPY\n\
         OUTFIL INCLUDE=(01,03,CH,EQ,C'201',AND,24,03,CH,LE,C'999'),FNAMES=FOUT201_1\n\
         OUTFIL SAVE,FNAMES=FOUT201_SAVE\n",
    );
    assert_eq!(c.outfil.len(), 2);
    let written: Vec<&str> = job.fnames.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(written, ["FOUT201_1", "FOUT201_SAVE"]);
    assert_eq!(c.outfil[0].names, [job.fnames[0].0.clone()]);
}

#[test]
fn any_case_as_gcsort_syntax_is_case_insensitive() {
    let (job, c) = read(
        "sort fields=(1,1,ch,d) use s.txt org ls record f,3 give lc.out org lsf record f,3 \
         include cond=(3,1,ch,ne,c'3')",
    );
    assert_eq!(c.key.unwrap().fields, vec![ch(1, 1, true)]);
    assert!(c.filter.is_some());
    assert_eq!(job.uses[0].org, GcsortOrg::LinesFixed { len: 3, trim: true });
    assert_eq!(job.give.unwrap().org, GcsortOrg::LinesFixed { len: 3, trim: false });
}
