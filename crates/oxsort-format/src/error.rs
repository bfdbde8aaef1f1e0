//! Error types: one for malformed specifications text ([`ParseError`]), one for a key
//! specification that cannot work with a record layout ([`SpecError`]) and one for a record
//! whose key cannot be extracted ([`KeyError`]).

use std::fmt;

/// Where in the parsed text a [`ParseError`] was found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// A line of a text (DFSORT control statements, an nsort specification file passed as a
    /// string, a `--fields` value). Both numbers are 1-based.
    Line {
        /// 1-based line number.
        line: usize,
        /// 1-based column (in bytes).
        column: usize,
    },
    /// An element of a command line (nsort arguments, GNU sort flags). Both numbers are 1-based.
    Argument {
        /// 1-based index of the argument in the slice given to the parser.
        index: usize,
        /// 1-based column (in bytes) inside that argument.
        column: usize,
    },
    /// A line of an nsort specification file named by `-specification=FILE`.
    File {
        /// The file name as written after `-specification=`.
        path: String,
        /// 1-based line number.
        line: usize,
        /// 1-based column (in bytes).
        column: usize,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line { line, column } => write!(f, "line {line}, column {column}"),
            Location::Argument { index, column } => {
                write!(f, "argument {index}, column {column}")
            }
            Location::File { path, line, column } => {
                write!(f, "{path}: line {line}, column {column}")
            }
        }
    }
}

/// A malformed statement, directive or flag: where it is, what was expected there and what
/// was found instead.
///
/// Displays as `line 1, column 23: order must be A or D, found 'Q'`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct ParseError {
    /// Where the problem is.
    pub location: Location,
    /// What was expected, or what is wrong (`order must be A or D`).
    pub expected: String,
    /// The text found at that place; `None` when the statement or input ended there.
    pub found: Option<String>,
}

impl ParseError {
    /// An error at `location`.
    pub fn new(location: Location, expected: impl Into<String>, found: Option<String>) -> Self {
        ParseError { location, expected: expected.into(), found }
    }

    /// The message without its location: `order must be A or D, found 'Q'`.
    pub fn message(&self) -> String {
        match &self.found {
            Some(found) => format!("{}, found '{found}'", self.expected),
            None => format!("{}, found end of input", self.expected),
        }
    }

    /// The error in a one-line value that a front end names (`what`, such as
    /// `--fields '1,10,CQ,A'` or `fields='1,10,CQ,A'`): `WHAT: column 7: message`.
    pub fn in_value(&self, what: &str) -> String {
        match &self.location {
            Location::Line { column, .. } | Location::Argument { column, .. } => {
                format!("{what}: column {column}: {}", self.message())
            }
            _ => format!("{what}: {self}"),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message())
    }
}

/// A key specification that is wrong in itself or for a record layout. Detected before any
/// record is read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// A fixed record size outside 1..=65535.
    #[error("record size must be 1 to {max} bytes, found {size}", max = crate::MAX_RECORD_SIZE)]
    RecordSize {
        /// The size asked for.
        size: usize,
    },
    /// The longest RDW-prefixed record outside 4..=65535.
    #[error(
        "the longest variable record (RDW included) must be 4 to {most} bytes, found {max}",
        most = crate::MAX_RECORD_SIZE
    )]
    VariableMax {
        /// The length asked for.
        max: usize,
    },
    /// A field that ends past the end of a fixed-size record.
    #[error(
        "key field {field} ends at byte {end} (1-based), past the end of the {record_len}-byte \
         records"
    )]
    FieldPastRecord {
        /// 1-based index of the field in the key.
        field: usize,
        /// 1-based position of the field's last byte.
        end: usize,
        /// The fixed record length.
        record_len: usize,
    },
    /// A field whose length does not suit its type (`FI` longer than 8 bytes, `FL` not 4 or 8).
    #[error("key field {field}: a {kind} field must be {allowed} bytes long, found {len}")]
    FieldLength {
        /// 1-based index of the field in the key.
        field: usize,
        /// The type's name (`FI`, `PD`...).
        kind: &'static str,
        /// The allowed lengths, in words (`1 to 8`).
        allowed: &'static str,
        /// The length given.
        len: usize,
    },
    /// A binary type placed on a delimited column, whose length varies.
    #[error("key field {field}: a {kind} field needs a fixed position and length, not a column")]
    ColumnType {
        /// 1-based index of the field in the key.
        field: usize,
        /// The type's name.
        kind: &'static str,
    },
    /// A key without fields.
    #[error("the key has no fields")]
    NoFields,
    /// No key given, and fixed records shorter than the default key (bytes 1 to 10).
    #[error("the default key (bytes 1 to 10) ends past the {record_len}-byte records: give a key")]
    DefaultKeyPastRecord {
        /// The fixed record length.
        record_len: usize,
    },
    /// A raw key that is empty, longer than an entry's prefix or past the record's end.
    #[error(
        "a raw key of {len} bytes at offset {offset} must be 1 to 10 bytes inside the \
         {record_len}-byte records"
    )]
    RawKey {
        /// 0-based offset.
        offset: usize,
        /// Length.
        len: usize,
        /// The fixed record length.
        record_len: usize,
    },
    /// An `INREC`/`OUTREC` item that reads past the end of the records it reshapes.
    #[error(
        "{statement} item {item} ends at byte {end} (1-based), past the end of the \
         {record_len}-byte records"
    )]
    ReformatPastRecord {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
        /// 1-based index of the item in its list.
        item: usize,
        /// 1-based position of the item's last byte.
        end: usize,
        /// The record length it reads.
        record_len: usize,
    },
    /// A reformatting that RDW-prefixed records do not take.
    #[error("{statement} on RDW-prefixed records (RECORD TYPE=V): {why}")]
    VariableReformat {
        /// `INREC`, `OUTREC`, `SUM` or `OUTFIL`.
        statement: &'static str,
        /// What it takes there.
        why: String,
    },
    /// An `INREC`/`OUTREC` that makes records of no bytes or longer than the maximum.
    #[error(
        "{statement} makes {len}-byte records; records must be 1 to {max} bytes",
        max = crate::MAX_RECORD_SIZE
    )]
    ReformatLength {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
        /// The length it makes.
        len: usize,
    },
    /// `INREC`/`OUTREC` on delimited records.
    #[error("{statement} needs fixed-length records (RECORD TYPE=F,LENGTH=n or a record size)")]
    ReformatNeedsFixed {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
    },
    /// An `OUTFIL` statement that cannot apply to the records.
    #[error("OUTFIL (line {line}): {why}")]
    Outfil {
        /// Line of the statement.
        line: usize,
        /// What is wrong.
        why: String,
    },
}

/// Why a record's key could not be built. The engine adds the record number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A variable-length record too short to hold a fixed-position field (DFSORT's default;
    /// `OPTION VLSHRT` sorts such fields first instead).
    #[error(
        "key field {field} (bytes {start} to {end}, 1-based) lies past the end of the \
         {len}-byte record"
    )]
    ShortRecord {
        /// 1-based index of the field in the key (or in the INCLUDE/OMIT condition).
        field: usize,
        /// 1-based first byte of the field.
        start: usize,
        /// 1-based last byte of the field.
        end: usize,
        /// The record's length (without its terminator).
        len: usize,
    },
    /// A packed decimal field with a digit nibble above 9 or an invalid sign nibble.
    #[error("key field {field}: invalid packed decimal data at byte {position} (0x{byte:02X})")]
    InvalidPacked {
        /// 1-based index of the field.
        field: usize,
        /// 1-based position of the bad byte in the record.
        position: usize,
        /// The bad byte.
        byte: u8,
    },
    /// A zoned decimal field with a bad digit, zone or sign.
    #[error("key field {field}: invalid zoned decimal data at byte {position} (0x{byte:02X})")]
    InvalidZoned {
        /// 1-based index of the field.
        field: usize,
        /// 1-based position of the bad byte in the record.
        position: usize,
        /// The bad byte.
        byte: u8,
    },
    /// A field of `SUM FIELDS=(...)` holding invalid packed or zoned decimal data (or a sign
    /// and digits, for `CSL` and `CST`).
    #[error(
        "SUM field {field} ({format}): invalid {} data at byte {position} (0x{byte:02X})",
        match *format { "PD" => "packed decimal", "ZD" | "CLO" => "zoned decimal", _ => "sign and digits" }
    )]
    SumData {
        /// 1-based index of the field in `SUM FIELDS=(...)`.
        field: usize,
        /// The field's format (`PD`, `ZD`).
        format: &'static str,
        /// 1-based position of the bad byte in the record.
        position: usize,
        /// The bad byte.
        byte: u8,
    },
    /// A field of an `INREC`/`OUTREC` that lies past the end of the record it reads (after an
    /// `IFTHEN` clause made it shorter).
    #[error(
        "{statement}: bytes {start} to {end} (1-based) lie past the end of the {len}-byte record"
    )]
    ReformatShort {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
        /// 1-based first byte.
        start: usize,
        /// 1-based last byte.
        end: usize,
        /// The record's length at that step.
        len: usize,
    },
    /// Invalid packed or zoned data in a field an `INREC`/`OUTREC` item edits or converts:
    /// the record DFSORT stops on with a data exception (S0C7).
    #[error(
        "{statement} item {item}: invalid {format} data at byte {position} (0x{byte:02X}), a \
         decimal data exception (DFSORT's S0C7)"
    )]
    ReformatData {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
        /// 1-based index of the item in its list.
        item: usize,
        /// The field's format (`PD`, `ZD`).
        format: &'static str,
        /// 1-based position of the bad byte in the record.
        position: usize,
        /// The bad byte.
        byte: u8,
    },
    /// `FINDREP` shifted non-blank bytes past the record's end (`OVERRUN=ERROR`, the default).
    #[error(
        "{statement} FINDREP shifted non-blank bytes past the end of the record (OVERRUN=TRUNC \
         drops them; MAXLEN=n lengthens the records)"
    )]
    FindRepOverrun {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
    },
    /// A lookup item (`p,m,CHANGE=(...)`) whose field equals no `find` constant and has no
    /// `NOMATCH=`: DFSORT stops the job (ICE218A).
    #[error(
        "{statement} item {item}: bytes {start} to {end} hold {value}, which no CHANGE find \
         constant matches and there is no NOMATCH= (DFSORT's ICE218A)"
    )]
    LookupNoMatch {
        /// `INREC`, `OUTREC` or `OUTFIL`.
        statement: &'static str,
        /// 1-based index of the item in its list (the numbers are `u32` to keep the error
        /// small).
        item: u32,
        /// 1-based first byte of the field looked up.
        start: u32,
        /// 1-based last byte.
        end: u32,
        /// The field's value, as `C'..'` or `X'..'` (boxed: it keeps the error small).
        value: Box<str>,
    },
    /// A GCSORT `FINDREP` replaced with an `OUT` longer than its `IN` (GCSORT's
    /// `OVERRUN=ERROR`, the default, stops the job whatever the bytes past the end).
    #[error(
        "{statement} FINDREP: the record length exceeds its maximum size (an OUT longer than          its IN, and OVERRUN=ERROR, GCSORT's default; OVERRUN=TRUNC cuts the record at its          length)"
    )]
    GcsortFindRepOverrun {
        /// `INREC` or `OUTREC`.
        statement: &'static str,
    },
}
