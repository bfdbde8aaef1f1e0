//! Line sequential files as GnuCOBOL reads and writes them for a record of fixed length `n`
//! (GCSORT's `ORG LS RECORD F,n`): a line read is the record, filled out with blanks to `n`
//! bytes (a longer line keeps its first `n`); a record written is a line, its trailing
//! blanks taken off (`ORG LSF` keeps them). A line ends at `\n`; a `\r` before it is part of
//! the line end, not of the record; a last line without its `\n` is still a line.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The blank that fills out a short line.
const BLANK: u8 = b' ';

/// Copies the lines of `from` to `to` as records of `n` bytes each; returns the count of
/// lines longer than `n` (cut to `n`).
pub fn lines_to_records(from: impl Read, to: impl Write, n: usize) -> io::Result<u64> {
    let mut input = BufReader::with_capacity(1 << 20, from);
    let mut out = BufWriter::with_capacity(1 << 20, to);
    let mut line = Vec::new();
    let mut cut = 0;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        if line.len() > n {
            cut += 1;
            line.truncate(n);
        }
        line.resize(n, BLANK);
        out.write_all(&line)?;
    }
    out.flush()?;
    Ok(cut)
}

/// Copies the `n`-byte records of `from` to `to` as lines of the GIVE file's `width`: each
/// record cut to `width` bytes or filled out with blanks to it, then its trailing blanks
/// taken off when `trim` (`ORG LS`) or kept (`ORG LSF`). A last record shorter than `n` is an
/// error: the data is no file of `n`-byte records.
pub fn records_to_lines(
    from: impl Read,
    to: impl Write,
    n: usize,
    width: usize,
    trim: bool,
) -> io::Result<()> {
    let fill = vec![BLANK; width.saturating_sub(n)];
    each_record(from, to, n, |record, out| {
        let kept = &record[..n.min(width)];
        if trim {
            let end = kept.iter().rposition(|&b| b != BLANK).map_or(0, |p| p + 1);
            out.write_all(&kept[..end])?;
        } else {
            out.write_all(kept)?;
            out.write_all(&fill)?;
        }
        out.write_all(b"\n")
    })
}

/// Calls `write` with each `n`-byte record of `from` and the buffered `to`; a last record
/// shorter than `n` is an error: the data is no file of `n`-byte records.
fn each_record<W: Write>(
    from: impl Read,
    to: W,
    n: usize,
    mut write: impl FnMut(&[u8], &mut BufWriter<W>) -> io::Result<()>,
) -> io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 20, from);
    let mut out = BufWriter::with_capacity(1 << 20, to);
    let mut record = vec![0u8; n];
    loop {
        let got = read_full(&mut input, &mut record)?;
        if got == 0 {
            break;
        }
        if got < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the last record has {got} bytes, not {n}"),
            ));
        }
        write(&record, &mut out)?;
    }
    out.flush()
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Where line sequential files stay as fixed-length records while a job runs: a private
/// temp directory made on first use in `base` ([`oxsort_io::TempDir`]: removed with
/// everything in it when the staging is dropped or the process is interrupted, and swept by
/// `oxsort clean` after a kill).
#[derive(Debug)]
pub struct Staging {
    base: PathBuf,
    dir: Option<oxsort_io::TempDir>,
    files: usize,
}

impl Staging {
    /// A staging whose directory will be made in `base`.
    pub fn new(base: impl Into<PathBuf>) -> Staging {
        Staging { base: base.into(), dir: None, files: 0 }
    }

    /// A new path in the staging directory (made now if need be).
    pub fn path(&mut self) -> io::Result<PathBuf> {
        if self.dir.is_none() {
            self.dir = Some(oxsort_io::TempDir::new(&self.base).map_err(io::Error::other)?);
        }
        let dir = self.dir.as_ref().expect("made above").path();
        self.files += 1;
        Ok(dir.join(format!("records-{}", self.files)))
    }

    /// Where the staging directory is (to be) made.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The `n`-byte records of `staged` written as lines of `width` to `to`
    /// ([`records_to_lines`]), whole or not at all: into a temporary file beside `to`
    /// ([`oxsort_io::AtomicOutput`], removed if the process is interrupted), put under the name
    /// `to` when complete.
    pub fn deliver(
        &self,
        staged: &Path,
        to: &Path,
        n: usize,
        width: usize,
        trim: bool,
    ) -> io::Result<()> {
        self.deliver_with(to, |out| records_to_lines(File::open(staged)?, out, n, width, trim))
    }

    /// The `n`-byte records of `staged` written to `to` as records of `m` bytes
    /// ([`records_to_fixed`]), whole or not at all: into a temporary file beside `to`
    /// ([`oxsort_io::AtomicOutput`], removed if the process is interrupted), put under the name
    /// `to` when complete.
    pub fn deliver_fixed(&self, staged: &Path, to: &Path, n: usize, m: usize) -> io::Result<()> {
        self.deliver_with(to, |out| records_to_fixed(File::open(staged)?, out, n, m))
    }

    /// `to` written by `write`, whole or not at all: into a temporary file beside `to`
    /// ([`oxsort_io::AtomicOutput`], removed if the process is interrupted), put under the
    /// name `to` when complete.
    fn deliver_with(
        &self,
        to: &Path,
        write: impl FnOnce(&mut AtOffset<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        let out = oxsort_io::AtomicOutput::create(to, &oxsort_io::IoOptions::default())
            .map_err(io::Error::other)?;
        write(&mut AtOffset { file: out.file(), offset: 0 })?;
        // Dropped without commit on an error above: the temporary goes with it.
        out.commit().map_err(io::Error::other)
    }
}

/// Copies the `n`-byte records of `from` to `to` as records of `m` bytes: each cut to `m`
/// bytes or filled out with blanks to it, as a COBOL program writes a record to a file of
/// fixed `m`-byte records. A last record shorter than `n` is an error.
pub fn records_to_fixed(from: impl Read, to: impl Write, n: usize, m: usize) -> io::Result<()> {
    let fill = vec![BLANK; m.saturating_sub(n)];
    each_record(from, to, n, |record, out| {
        out.write_all(&record[..n.min(m)])?;
        out.write_all(&fill)
    })
}

/// A [`Write`] over a file written at increasing offsets.
struct AtOffset<'a> {
    file: &'a oxsort_io::DirectFile,
    offset: u64,
}

impl Write for AtOffset<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write_at(buf, self.offset).map_err(io::Error::other)?;
        self.offset += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_filled_out_and_cut() {
        let mut out = Vec::new();
        let cut = lines_to_records(&b"ab\r\nabcdef\n\nxyz"[..], &mut out, 4).unwrap();
        assert_eq!(out, b"ab  abcd    xyz ");
        assert_eq!(cut, 1);
    }

    #[test]
    fn records_lose_their_trailing_blanks_in_ls_only() {
        let mut out = Vec::new();
        records_to_lines(&b"ab  a b     "[..], &mut out, 4, 4, true).unwrap();
        assert_eq!(out, b"ab\na b\n\n");
        let mut out = Vec::new();
        records_to_lines(&b"ab  a b "[..], &mut out, 4, 4, false).unwrap();
        assert_eq!(out, b"ab  \na b \n");
        assert!(records_to_lines(&b"ab  a"[..], Vec::new(), 4, 4, true).is_err());
    }

    #[test]
    fn records_are_cut_or_filled_to_the_give_width() {
        let mut out = Vec::new();
        records_to_lines(&b"abcdxy z"[..], &mut out, 4, 2, false).unwrap();
        assert_eq!(out, b"ab\nxy\n");
        let mut out = Vec::new();
        records_to_lines(&b"abcdxy z"[..], &mut out, 4, 6, false).unwrap();
        assert_eq!(out, b"abcd  \nxy z  \n");
        let mut out = Vec::new();
        records_to_lines(&b"abc xy z"[..], &mut out, 4, 3, true).unwrap();
        assert_eq!(out, b"abc\nxy\n");
    }

    #[test]
    fn records_are_cut_or_filled_to_fixed_records() {
        let mut out = Vec::new();
        records_to_fixed(&b"abcdefgh"[..], &mut out, 4, 6).unwrap();
        assert_eq!(out, b"abcd  efgh  ");
        out.clear();
        records_to_fixed(&b"abcdefgh"[..], &mut out, 4, 3).unwrap();
        assert_eq!(out, b"abcefg");
        assert!(records_to_fixed(&b"abcdef"[..], &mut Vec::new(), 4, 4).is_err());
    }

    #[test]
    fn a_delivery_writes_a_temporary_beside_the_output_first() {
        // The temporary is oxsort_io's AtomicOutput, registered for removal on a signal.
        let dir = tempfile::tempdir().unwrap();
        let st = Staging::new(dir.path());
        let names = || -> Vec<String> {
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        };
        st.deliver_with(&dir.path().join("out"), |out| {
            let during = names();
            assert!(during.len() == 1 && during[0] != "out", "{during:?}");
            out.write_all(b"x")
        })
        .unwrap();
        assert_eq!(names(), ["out"]);
        assert_eq!(std::fs::read(dir.path().join("out")).unwrap(), b"x");
    }

    #[test]
    fn a_staging_delivers_whole_and_leaves_nothing() {
        let base = std::env::temp_dir().join(format!("oxsort-ls-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let lines = base.join("in.txt");
        std::fs::write(&lines, "b\na  z\n").unwrap();
        let out = base.join("out.txt");
        {
            let mut st = Staging::new(&base);
            let staged = st.path().unwrap();
            let cut =
                lines_to_records(File::open(&lines).unwrap(), File::create(&staged).unwrap(), 3)
                    .unwrap();
            assert_eq!((std::fs::read(&staged).unwrap(), cut), (b"b  a  ".to_vec(), 1));
            st.deliver(&staged, &out, 3, 3, true).unwrap();
            assert_eq!(std::fs::read_to_string(&out).unwrap(), "b\na\n");
            // Records of another length: an error, and the output as it was.
            assert!(st.deliver(&staged, &out, 4, 4, true).is_err());
            assert_eq!(std::fs::read_to_string(&out).unwrap(), "b\na\n");
        }
        let mut left: Vec<_> =
            std::fs::read_dir(&base).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, ["in.txt", "out.txt"]);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
