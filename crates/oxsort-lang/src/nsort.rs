//! nsort's command-line and specification-file language.
//!
//! Directives start with `-`, take an optional value after `=` (blanks around `=` and after
//! commas are allowed, so NeoSort's `-key = offset:0, size:10, ascending, char` works), and
//! may be abbreviated to any unique prefix (`-mem`, `-proc`, `-stat`, `-out`, `-spec`); so may
//! the words inside values (`off`, `char`, `tr`). Supported:
//!
//! ```text
//!  -format=size:N | delimiter:C          fixed N-byte or C-terminated records
//!  -field=name:F,size:N,offset:O|position:P,TYPE[,delimiter:C]
//!  -key=F[,ascending|descending] | -key=offset:O,size:N,TYPE,ascending|descending
//!  -memory=N[k|m|g|t]  -processes=N  -method=radix|merge  -touch  -statistics
//!  -in_file=PATH[,direct|buffered][,transfer_size=N][,count=N]   (repeatable)
//!  -out_file=PATH[,direct|buffered][,transfer_size=N][,count=N][,preallocate]
//!  -temp_file=DIR[,...same options]                                 (repeatable)
//!  -specification=FILE                   the same directives, one or more per line
//! ```
//!
//! TYPE is `character`, `integer`, `unsigned`, `float`, `double`, `decimal`, `packed` or
//! `zoned`; binary types are little-endian unless `big_endian` is given (the byte order of the
//! machines the published nsort runs used). Sizes take binary suffixes (`16M` = 16 MiB).
//! A field with `delimiter:C` is a delimited column: the n-th `-field` declared is column n,
//! and all fields then use the same delimiter. Anything else is an error naming it.

use oxsort_format::ColumnSpan;
use oxsort_format::{Endian, FieldType, KeyField, KeySpec, ShortFields};
use oxsort_format::{Location, ParseError};
use oxsort_format::{RecordLayout, MAX_RECORD_SIZE};

/// The words of a field definition (`-field=` and inline `-key=`).
const FIELD_WORDS: &[&str] = &[
    "name",
    "size",
    "offset",
    "position",
    "delimiter",
    "character",
    "integer",
    "unsigned",
    "float",
    "double",
    "decimal",
    "packed",
    "zoned",
    "ascending",
    "descending",
    "big_endian",
    "little_endian",
];

/// nsort's `-method`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NsortMethod {
    /// `-method=radix`.
    Radix,
    /// `-method=merge`.
    Merge,
}

/// An input, output or temporary file (directory) with its I/O options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct NsortFile {
    /// The path as written.
    pub path: String,
    /// `direct` (`true`) or `buffered` (`false`); `None` if not given.
    pub direct: Option<bool>,
    /// `transfer_size=N` (`tr=N`), in bytes.
    pub transfer_size: Option<u64>,
    /// `count=N`: transfers in flight.
    pub count: Option<u32>,
    /// `preallocate`.
    pub preallocate: bool,
}

/// A parsed nsort command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NsortCommand {
    /// From `-format`; `None` if not given (the caller's default applies).
    pub layout: Option<RecordLayout>,
    /// The key from the `-key` directives (in order); without any, the whole record.
    pub key: KeySpec,
    /// `-memory`, in bytes.
    pub memory: Option<u64>,
    /// `-processes`.
    pub processes: Option<u32>,
    /// `-method`.
    pub method: Option<NsortMethod>,
    /// `-touch`: pre-fault the memory.
    pub touch: bool,
    /// `-statistics`: print statistics at the end.
    pub statistics: bool,
    /// `-in_file`s in order.
    pub inputs: Vec<NsortFile>,
    /// `-out_file`.
    pub output: Option<NsortFile>,
    /// `-temp_file`s in order.
    pub temps: Vec<NsortFile>,
}

/// Parses an nsort command line (arguments as the shell split them, without the program
/// name). `-specification=FILE` is an error here, as this crate reads no files: use
/// [`parse_nsort_with`].
pub fn parse_nsort(args: &[String]) -> Result<NsortCommand, ParseError> {
    parse_nsort_with(args, |_| {
        Err("reading a specification file needs parse_nsort_with and a loader".to_string())
    })
}

/// Parses an nsort command line; `load` returns the text of a `-specification` file (or a
/// message saying why it could not be read).
pub fn parse_nsort_with(
    args: &[String],
    mut load: impl FnMut(&str) -> Result<String, String>,
) -> Result<NsortCommand, ParseError> {
    let mut text = String::new();
    let mut starts = Vec::new();
    for a in args {
        starts.push(text.len());
        text.push_str(a);
        text.push(' ');
    }
    let src = Source { text: &text, origin: Origin::Args(&starts) };
    let mut st = State::default();
    st.run(&src, &mut load, 0)?;
    st.finish(&src)
}

/// Parses the text of an nsort specification file: directives, one or more per line, `#`
/// starting a comment. Errors report lines and columns of `text`.
pub fn parse_nsort_spec(text: &str) -> Result<NsortCommand, ParseError> {
    let src = Source { text, origin: Origin::Text };
    let mut st = State::default();
    let mut load = |_: &str| Err("reading a specification file needs parse_nsort_with".to_string());
    st.run(&src, &mut load, 0)?;
    st.finish(&src)
}

/// Nesting limit for specification files naming other specification files.
const MAX_SPEC_DEPTH: usize = 8;

enum Origin<'a> {
    /// Arguments joined with one blank; the byte offset where each starts.
    Args(&'a [usize]),
    /// Text given directly.
    Text,
    /// A specification file.
    File(&'a str),
}

struct Source<'a> {
    text: &'a str,
    origin: Origin<'a>,
}

impl Source<'_> {
    fn loc(&self, offset: usize) -> Location {
        match &self.origin {
            Origin::Args(starts) => {
                let index = starts.partition_point(|&s| s <= offset).max(1);
                Location::Argument { index, column: offset - starts[index - 1] + 1 }
            }
            Origin::Text | Origin::File(_) => {
                let before = &self.text.as_bytes()[..offset.min(self.text.len())];
                let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                let column =
                    offset - before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1) + 1;
                match &self.origin {
                    Origin::File(path) => Location::File { path: path.to_string(), line, column },
                    _ => Location::Line { line, column },
                }
            }
        }
    }

    fn err(&self, offset: usize, expected: impl Into<String>, found: Option<&str>) -> ParseError {
        ParseError::new(self.loc(offset), expected, found.map(str::to_string))
    }
}

/// A piece of a directive's value (between commas) with its offset.
#[derive(Debug, Clone)]
struct Item {
    text: String,
    at: usize,
}

impl Item {
    /// Splits `name:value` or `name=value`.
    fn split(&self) -> (&str, Option<&str>) {
        match self.text.find([':', '=']) {
            Some(i) if !self.text.starts_with(['\'', '"']) => {
                (&self.text[..i], Some(&self.text[i + 1..]))
            }
            _ => (&self.text, None),
        }
    }
}

const DIRECTIVES: &[&str] = &[
    "format",
    "field",
    "key",
    "memory",
    "processes",
    "method",
    "touch",
    "statistics",
    "in_file",
    "out_file",
    "temp_file",
    "specification",
];

/// Resolves `word` to the one entry of `names` it equals or is a prefix of.
fn resolve<'n>(word: &str, names: &[&'n str]) -> Result<&'n str, Vec<&'n str>> {
    let w = word.to_ascii_lowercase();
    if let Some(exact) = names.iter().find(|n| **n == w) {
        return Ok(exact);
    }
    let hits: Vec<&str> =
        names.iter().copied().filter(|n| !w.is_empty() && n.starts_with(&w)).collect();
    if hits.len() == 1 {
        Ok(hits[0])
    } else {
        Err(hits)
    }
}

struct FieldDef {
    name: String,
    field: KeyField,
    separator: Option<u8>,
}

/// A `-key` as written: a reference to a `-field` (resolved at the end, so a key may name a
/// field defined later) or an inline definition.
enum KeyEntry {
    Named { name: String, descending: bool, loc: Location },
    Inline { field: KeyField, separator: Option<u8> },
}

#[derive(Default)]
struct State {
    layout: Option<RecordLayout>,
    fields: Vec<FieldDef>,
    keys: Vec<KeyEntry>,
    /// Where the first `-key` is, for errors about the whole key.
    first_key: Option<Location>,
    memory: Option<u64>,
    processes: Option<u32>,
    method: Option<NsortMethod>,
    touch: bool,
    statistics: bool,
    inputs: Vec<NsortFile>,
    output: Option<NsortFile>,
    temps: Vec<NsortFile>,
}

impl State {
    fn run(
        &mut self,
        src: &Source<'_>,
        load: &mut dyn FnMut(&str) -> Result<String, String>,
        depth: usize,
    ) -> Result<(), ParseError> {
        let bytes = src.text.as_bytes();
        let spec_file = !matches!(src.origin, Origin::Args(_));
        let mut i = 0;
        let ws = |b: u8| b == b' ' || b == b'\t' || b == b'\n' || b == b'\r';
        loop {
            while i < bytes.len() && ws(bytes[i]) {
                i += 1;
            }
            if i >= bytes.len() {
                return Ok(());
            }
            if spec_file && bytes[i] == b'#' {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            let dir_at = i;
            if bytes[i] == b'-' {
                i += 1;
            } else if !spec_file {
                let end = (i..bytes.len()).find(|&j| ws(bytes[j])).unwrap_or(bytes.len());
                return Err(src.err(
                    i,
                    "expected a directive starting with '-'",
                    Some(&src.text[i..end]),
                ));
            }
            let name_at = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let name = &src.text[name_at..i];
            let mut j = i;
            while j < bytes.len() && ws(bytes[j]) && !(spec_file && bytes[j] == b'\n') {
                j += 1;
            }
            let value = if j < bytes.len() && bytes[j] == b'=' {
                j += 1;
                let (items, end) = read_value(src, j);
                i = end;
                Some(items)
            } else {
                if i < bytes.len() && !ws(bytes[i]) {
                    let end = (i..bytes.len()).find(|&k| ws(bytes[k])).unwrap_or(bytes.len());
                    return Err(src.err(
                        dir_at,
                        "expected '=' or a blank after the directive name",
                        Some(&src.text[dir_at..end]),
                    ));
                }
                None
            };
            let directive = resolve(name, DIRECTIVES).map_err(|hits| {
                let shown = &src.text[dir_at..i.min(bytes.len())];
                let shown = shown.split_whitespace().next().unwrap_or(shown);
                if hits.is_empty() {
                    src.err(
                        dir_at,
                        "a directive oxsort supports (-format, -field, -key, -memory, \
                         -processes, -method, -touch, -statistics, -in_file, -out_file, \
                         -temp_file, -specification)",
                        Some(shown),
                    )
                } else {
                    src.err(
                        dir_at,
                        format!("an unambiguous directive (could be -{})", hits.join(", -")),
                        Some(shown),
                    )
                }
            })?;
            self.directive(src, directive, dir_at, value, load, depth)?;
        }
    }

    fn directive(
        &mut self,
        src: &Source<'_>,
        directive: &str,
        at: usize,
        value: Option<Vec<Item>>,
        load: &mut dyn FnMut(&str) -> Result<String, String>,
        depth: usize,
    ) -> Result<(), ParseError> {
        let flag = matches!(directive, "touch" | "statistics");
        let items = match (value, flag) {
            (Some(items), false) => items,
            (None, true) => Vec::new(),
            (Some(items), true) => {
                return Err(src.err(
                    items.first().map_or(at, |i| i.at),
                    format!("no value after -{directive}"),
                    items.first().map(|i| i.text.as_str()),
                ))
            }
            (None, false) => {
                return Err(src.err(
                    at,
                    format!("'=' and a value after -{directive}"),
                    Some(&format!("-{directive}")),
                ))
            }
        };
        let first = |what: &str| -> Result<Item, ParseError> {
            items.first().cloned().ok_or_else(|| src.err(at, what.to_string(), None))
        };
        let single = |what: &str| -> Result<Item, ParseError> {
            let item = first(what)?;
            if let Some(extra) = items.get(1) {
                return Err(src.err(
                    extra.at,
                    format!("only one value after -{directive}"),
                    Some(&extra.text),
                ));
            }
            Ok(item)
        };
        match directive {
            "touch" => self.touch = true,
            "statistics" => self.statistics = true,
            "memory" => {
                let item = single("a memory size such as 13500M")?;
                self.memory = Some(size(src, &item, "a memory size such as 13500M")?);
            }
            "processes" => {
                let item = single("a number of processes")?;
                let n = size(src, &item, "a number of processes")?;
                if n == 0 || n > u32::MAX as u64 {
                    return Err(src.err(
                        item.at,
                        "a number of processes of at least 1",
                        Some(&item.text),
                    ));
                }
                self.processes = Some(n as u32);
            }
            "method" => {
                let item = single("radix or merge")?;
                self.method = Some(match resolve(&item.text, &["radix", "merge"]) {
                    Ok("radix") => NsortMethod::Radix,
                    Ok(_) => NsortMethod::Merge,
                    Err(_) => {
                        return Err(src.err(item.at, "method radix or merge", Some(&item.text)))
                    }
                });
            }
            "format" => self.format(src, &items, at)?,
            "field" => self.field(src, &items, at)?,
            "key" => self.key(src, &items, at)?,
            "in_file" => self.inputs.push(file(src, &items, at, false)?),
            "out_file" => {
                if self.output.is_some() {
                    return Err(src.err(at, "only one -out_file", Some("-out_file")));
                }
                self.output = Some(file(src, &items, at, true)?)
            }
            "temp_file" => self.temps.push(file(src, &items, at, true)?),
            "specification" => {
                let item = single("a specification file name")?;
                if depth >= MAX_SPEC_DEPTH {
                    return Err(src.err(
                        item.at,
                        format!("specification files nested at most {MAX_SPEC_DEPTH} deep"),
                        Some(&item.text),
                    ));
                }
                let text = load(&item.text).map_err(|why| {
                    src.err(
                        item.at,
                        format!("a readable specification file ({why})"),
                        Some(&item.text),
                    )
                })?;
                let inner = Source { text: &text, origin: Origin::File(&item.text) };
                self.run(&inner, load, depth + 1)?;
            }
            _ => unreachable!("every name in DIRECTIVES is handled"),
        }
        Ok(())
    }

    fn format(&mut self, src: &Source<'_>, items: &[Item], at: usize) -> Result<(), ParseError> {
        if items.is_empty() {
            return Err(src.err(at, "size:N or delimiter:C after -format=", None));
        }
        for item in items {
            let (word, val) = item.split();
            let what = resolve(word, &["size", "delimiter", "record_delimiter"]).map_err(|_| {
                src.err(
                    item.at,
                    "a format attribute oxsort supports (size:N, delimiter:C)",
                    Some(&item.text),
                )
            })?;
            let Some(val) = val else {
                return Err(src.err(item.at, format!("a value after {what}:"), Some(&item.text)));
            };
            self.layout = Some(match what {
                "size" => {
                    let n = size(src, item, "a record size")?;
                    if !(1..=MAX_RECORD_SIZE as u64).contains(&n) {
                        return Err(src.err(
                            item.at,
                            format!("a record size of 1 to {MAX_RECORD_SIZE}"),
                            Some(&item.text),
                        ));
                    }
                    RecordLayout::Fixed(n as usize)
                }
                _ => RecordLayout::Delimited(delimiter(src, item, val)?),
            });
        }
        Ok(())
    }

    /// Reads field attributes: position, size, type, direction, delimiter, name.
    fn attributes(
        &self,
        src: &Source<'_>,
        items: &[Item],
        allow_name: bool,
    ) -> Result<Attrs, ParseError> {
        let mut a = Attrs::default();
        for item in items {
            let (word, val) = item.split();
            let w = resolve(word, FIELD_WORDS).map_err(|hits| {
                if hits.is_empty() {
                    src.err(item.at, "a field attribute oxsort supports (name, size, offset, position, delimiter, character, integer, unsigned, float, double, decimal, packed, zoned, ascending, descending)", Some(&item.text))
                } else {
                    src.err(item.at, format!("an unambiguous attribute (could be {})", hits.join(", ")), Some(&item.text))
                }
            })?;
            let needs_value = matches!(w, "name" | "size" | "offset" | "position" | "delimiter");
            if needs_value != val.is_some() {
                let msg =
                    if needs_value { format!("{w}:VALUE") } else { format!("{w} without a value") };
                return Err(src.err(item.at, msg, Some(&item.text)));
            }
            let number = || size(src, item, &format!("a number after {w}:"));
            match w {
                "name" if allow_name => a.name = Some(val.unwrap_or_default().to_string()),
                "size" => a.size = Some(number()? as usize),
                "offset" => a.offset = Some(number()? as usize),
                "position" => {
                    let p = number()?;
                    if p == 0 {
                        return Err(src.err(item.at, "a 1-based position", Some(&item.text)));
                    }
                    a.offset = Some(p as usize - 1);
                }
                "delimiter" => a.delimiter = Some(delimiter(src, item, val.unwrap_or_default())?),
                "ascending" | "descending" => a.descending = Some(w == "descending"),
                "big_endian" => a.endian = Some(Endian::Big),
                "little_endian" => a.endian = Some(Endian::Little),
                "character" | "integer" | "unsigned" | "float" | "double" | "decimal"
                | "packed" | "zoned" => {
                    if a.kind.is_some() {
                        return Err(src.err(item.at, "only one type per field", Some(&item.text)));
                    }
                    a.kind = Some((w, item.at));
                }
                _ => {
                    return Err(src.err(
                        item.at,
                        format!("{w} is not allowed here"),
                        Some(&item.text),
                    ))
                }
            }
        }
        Ok(a)
    }

    /// Builds a key field from attributes.
    fn build(
        &self,
        src: &Source<'_>,
        a: &Attrs,
        at: usize,
        column: usize,
    ) -> Result<(KeyField, Option<u8>), ParseError> {
        let (word, kind_at) = a.kind.unwrap_or(("character", at));
        let endian = a.endian.unwrap_or(Endian::Little);
        let kind = match word {
            "character" => FieldType::Char,
            "integer" => FieldType::Signed(endian),
            "unsigned" => FieldType::Unsigned(endian),
            "float" | "double" => FieldType::Float(endian),
            "decimal" => FieldType::Decimal,
            "packed" => FieldType::Packed,
            _ => FieldType::Zoned,
        };
        let descending = a.descending.unwrap_or(false);
        if let Some(sep) = a.delimiter {
            if a.offset.is_some() || a.size.is_some() {
                return Err(src.err(
                    at,
                    "a delimited field takes no offset, position or size",
                    None,
                ));
            }
            let field = KeyField::columns(ColumnSpan::field(column), kind, descending);
            if matches!(
                kind,
                FieldType::Signed(_)
                    | FieldType::Unsigned(_)
                    | FieldType::Float(_)
                    | FieldType::Packed
            ) {
                return Err(src.err(kind_at, format!("a type that works on delimited text (character, decimal, zoned), not {word}"), Some(word)));
            }
            return Ok((field, Some(sep)));
        }
        let default_size = match word {
            "integer" | "unsigned" | "float" => Some(4),
            "double" => Some(8),
            _ => None,
        };
        let Some(len) = a.size.or(default_size) else {
            return Err(src.err(at, "size:N for this field", None));
        };
        let offset = a.offset.unwrap_or(0);
        if word == "float" && a.size.is_some_and(|s| s != 4) || word == "double" && len != 8 {
            return Err(src.err(
                kind_at,
                format!("size {} for a {word} field", if word == "float" { 4 } else { 8 }),
                Some(&len.to_string()),
            ));
        }
        kind.allowed_lengths(len).map_err(|allowed| {
            src.err(
                at,
                format!("a {word} field {allowed} bytes long"),
                Some(&format!("size:{len}")),
            )
        })?;
        Ok((KeyField::bytes(offset, len, kind, descending), None))
    }

    fn field(&mut self, src: &Source<'_>, items: &[Item], at: usize) -> Result<(), ParseError> {
        let a = self.attributes(src, items, true)?;
        let Some(name) = a.name.clone() else {
            return Err(src.err(at, "name:NAME in -field", None));
        };
        if self.fields.iter().any(|f| f.name.eq_ignore_ascii_case(&name)) {
            return Err(src.err(at, "a field name not defined before", Some(&name)));
        }
        let (field, sep) = self.build(src, &a, at, self.fields.len())?;
        if let Some(prev) = self.fields.first() {
            if prev.separator != sep {
                return Err(src.err(at, "the same delimiter for every field (delimited and fixed fields, or two delimiters, cannot be mixed)", Some(&name)));
            }
        }
        self.fields.push(FieldDef { name, field, separator: sep });
        Ok(())
    }

    fn key(&mut self, src: &Source<'_>, items: &[Item], at: usize) -> Result<(), ParseError> {
        let Some(first) = items.first() else {
            return Err(src.err(at, "a field name or a field definition after -key=", None));
        };
        let (word, val) = first.split();
        let defined =
            val.is_none() && self.fields.iter().any(|f| f.name.eq_ignore_ascii_case(word));
        // Every field word but `name` (the only word starting with `n`) defines a field inline.
        let is_attr = resolve(word, FIELD_WORDS).is_ok_and(|w| w != "name");
        if self.first_key.is_none() {
            self.first_key = Some(src.loc(at));
        }
        if defined || (!is_attr && val.is_none()) {
            let a = self.attributes(src, &items[1..], false)?;
            if a.offset.is_some() || a.size.is_some() || a.kind.is_some() || a.delimiter.is_some() {
                return Err(src.err(
                    items[1].at,
                    "only ascending or descending after a field name",
                    Some(&items[1].text),
                ));
            }
            self.keys.push(KeyEntry::Named {
                name: word.to_string(),
                descending: a.descending.unwrap_or(false),
                loc: src.loc(first.at),
            });
        } else {
            let a = self.attributes(src, items, false)?;
            let column = if a.delimiter.is_some() { self.fields.len() } else { 0 };
            let (field, separator) = self.build(src, &a, at, column)?;
            self.keys.push(KeyEntry::Inline { field, separator });
        }
        Ok(())
    }

    fn finish(self, src: &Source<'_>) -> Result<NsortCommand, ParseError> {
        let mut fields = Vec::new();
        let mut separator = None;
        for entry in &self.keys {
            let (field, sep) = match entry {
                KeyEntry::Named { name, descending, loc } => {
                    let Some(def) = self.fields.iter().find(|f| f.name.eq_ignore_ascii_case(name))
                    else {
                        return Err(ParseError::new(
                            loc.clone(),
                            "a field defined by -field=name:...",
                            Some(name.clone()),
                        ));
                    };
                    (KeyField { descending: *descending, ..def.field }, def.separator)
                }
                KeyEntry::Inline { field, separator } => (*field, *separator),
            };
            if sep.is_some() {
                if separator.is_some() && separator != sep {
                    let loc = self.first_key.clone().unwrap_or_else(|| src.loc(0));
                    return Err(ParseError::new(loc, "the same delimiter in every key", None));
                }
                separator = sep;
            }
            fields.push(field);
        }
        let key = if fields.is_empty() {
            KeySpec::whole_record(self.layout.unwrap_or_default())
        } else {
            KeySpec { fields, separator, short_fields: ShortFields::Error }
        };
        if let Err(e) = key.check_layout(self.layout.unwrap_or(RecordLayout::LINES)) {
            let loc = self.first_key.clone().unwrap_or_else(|| src.loc(0));
            return Err(ParseError::new(loc, "a key that fits the records", Some(e.to_string())));
        }
        Ok(NsortCommand {
            layout: self.layout,
            key,
            memory: self.memory,
            processes: self.processes,
            method: self.method,
            touch: self.touch,
            statistics: self.statistics,
            inputs: self.inputs,
            output: self.output,
            temps: self.temps,
        })
    }
}

#[derive(Default)]
struct Attrs {
    name: Option<String>,
    size: Option<usize>,
    offset: Option<usize>,
    delimiter: Option<u8>,
    kind: Option<(&'static str, usize)>,
    descending: Option<bool>,
    /// Binary nsort types default to little-endian.
    endian: Option<Endian>,
}

/// Reads a value starting at `i`: items separated by commas, blanks allowed after `=`, around
/// commas and after `:`; quotes keep commas and blanks. Returns the items and the end offset.
fn read_value(src: &Source<'_>, mut i: usize) -> (Vec<Item>, usize) {
    let bytes = src.text.as_bytes();
    let blank = |b: u8| b == b' ' || b == b'\t';
    let ws = |b: u8| blank(b) || b == b'\n' || b == b'\r';
    let in_args = matches!(src.origin, Origin::Args(_));
    // Blanks between arguments are ' '; inside a spec file a newline ends the value.
    let skippable = |b: u8| if in_args { ws(b) } else { blank(b) };
    while i < bytes.len() && skippable(bytes[i]) {
        i += 1;
    }
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut cur_at = i;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        if let Some(q) = quote {
            cur.push(b as char);
            if b == q && !cur.ends_with("\\'") {
                quote = None;
            }
            i += 1;
            continue;
        }
        if b == b'\'' || b == b'"' {
            quote = Some(b);
            if cur.is_empty() {
                cur_at = i;
            }
            cur.push(b as char);
            i += 1;
            continue;
        }
        if b == b',' {
            items.push(Item { text: std::mem::take(&mut cur), at: cur_at });
            i += 1;
            while i < bytes.len() && skippable(bytes[i]) {
                i += 1;
            }
            cur_at = i;
            continue;
        }
        if ws(b) {
            // The value goes on if the next non-blank is a comma or the piece ends in ':'.
            let mut j = i;
            while j < bytes.len() && skippable(bytes[j]) {
                j += 1;
            }
            if cur.ends_with([':', '=']) && j < bytes.len() && bytes[j] != b'-' {
                i = j;
                continue;
            }
            if j < bytes.len() && bytes[j] == b',' {
                i = j;
                continue;
            }
            break;
        }
        if cur.is_empty() {
            cur_at = i;
        }
        cur.push(b as char);
        i += 1;
    }
    if !cur.is_empty() || !items.is_empty() {
        items.push(Item { text: cur, at: cur_at });
    }
    (items, i)
}

/// A number with an optional binary suffix (k, m, g, t).
fn size(src: &Source<'_>, item: &Item, what: &str) -> Result<u64, ParseError> {
    let (_, val) = item.split();
    let text = val.unwrap_or(&item.text).trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(src.err(item.at, what.to_string(), Some(&item.text))),
    };
    let n: u64 =
        digits.parse().map_err(|_| src.err(item.at, what.to_string(), Some(&item.text)))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| src.err(item.at, format!("{what} below 2^64"), Some(&item.text)))
}

/// A delimiter: a character, quoted or not, an escape (`\n`, `\t`, `\0`) or a name
/// (`newline`, `nl`, `lf`, `tab`, `nul`, `null`, `comma`, `space`).
fn delimiter(src: &Source<'_>, item: &Item, val: &str) -> Result<u8, ParseError> {
    let v = val.trim();
    let unquoted = v
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| v.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        .unwrap_or(v);
    let b = match unquoted.to_ascii_lowercase().as_str() {
        "\\n" | "newline" | "nl" | "lf" => b'\n',
        "\\t" | "tab" => b'\t',
        "\\0" | "nul" | "null" => 0,
        "comma" => b',',
        "space" => b' ',
        s if s.len() == 1 => unquoted.as_bytes()[0],
        _ => {
            return Err(src.err(
                item.at,
                "a one-byte delimiter ('\\n', ',', nul, tab...)",
                Some(&item.text),
            ))
        }
    };
    Ok(b)
}

/// `PATH[,direct|buffered][,transfer_size=N][,count=N][,preallocate]`.
fn file(
    src: &Source<'_>,
    items: &[Item],
    at: usize,
    preallocate_ok: bool,
) -> Result<NsortFile, ParseError> {
    let Some(path) = items.first() else {
        return Err(src.err(at, "a file name", None));
    };
    if path.text.is_empty() {
        return Err(src.err(path.at, "a file name", Some("")));
    }
    let mut f = NsortFile { path: path.text.clone(), ..NsortFile::default() };
    for item in &items[1..] {
        let (word, val) = item.split();
        let names: &[&str] = if preallocate_ok {
            &["direct", "buffered", "transfer_size", "count", "preallocate"]
        } else {
            &["direct", "buffered", "transfer_size", "count"]
        };
        let w = resolve(word, names).map_err(|_| {
            src.err(
                item.at,
                format!("a file option oxsort supports ({})", names.join(", ")),
                Some(&item.text),
            )
        })?;
        let wants_value = matches!(w, "transfer_size" | "count");
        if wants_value != val.is_some() {
            let msg = if wants_value { format!("{w}=N") } else { format!("{w} without a value") };
            return Err(src.err(item.at, msg, Some(&item.text)));
        }
        match w {
            "direct" => f.direct = Some(true),
            "buffered" => f.direct = Some(false),
            "preallocate" => f.preallocate = true,
            "transfer_size" => {
                f.transfer_size = Some(size(src, item, "a transfer size such as 16M")?)
            }
            _ => {
                let n = size(src, item, "a count")?;
                f.count = Some(
                    u32::try_from(n)
                        .map_err(|_| src.err(item.at, "a count below 2^32", Some(&item.text)))?,
                );
            }
        }
    }
    Ok(f)
}
