//! [`SortColumn`]: a sort key by column name, and its written form
//! `NAME[:asc|:desc][:nulls_first|:nulls_last]`, where a NAME holding `:` or `,` (or starting
//! with a quote) is written in double quotes, a quote in it doubled: `"a:desc":desc`.

use crate::error::{Result, TableError};

/// One sort key: a column by name, its direction and where its nulls go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortColumn {
    /// The column's name in the schema.
    pub name: String,
    /// Largest first.
    pub descending: bool,
    /// Nulls before every value (default: after, as DuckDB orders them).
    pub nulls_first: bool,
}

impl SortColumn {
    /// The column `name`, ascending, nulls last.
    pub fn new(name: impl Into<String>) -> SortColumn {
        SortColumn { name: name.into(), descending: false, nulls_first: false }
    }

    /// Reads one key: `NAME[:asc|:desc][:nulls_first|:nulls_last]` (also `ascending`,
    /// `descending`, `nulls-first`, `nulls-last`); NAME may be quoted (see the module's text).
    pub fn parse(spec: &str) -> Result<SortColumn> {
        let bad = |why: &str| TableError::BadColumnSpec { spec: spec.into(), why: why.into() };
        let mut parts = split_unquoted(spec, ':').into_iter();
        let name = parts.next().unwrap_or_default();
        let name = match name.strip_prefix('"') {
            Some(quoted) => match quoted.strip_suffix('"') {
                Some(inner) if !inner.replace("\"\"", "").contains('"') => {
                    inner.replace("\"\"", "\"")
                }
                _ => return Err(bad("a quoted name ends with its quote (a quote in it doubled)")),
            },
            None => name.to_string(),
        };
        if name.is_empty() {
            return Err(bad("no column name"));
        }
        let mut col = SortColumn::new(name);
        let (mut dir, mut nulls) = (false, false);
        for p in parts {
            let p = p.to_ascii_lowercase().replace('-', "_");
            let (is_dir, is_nulls) = match p.as_str() {
                "asc" | "ascending" => (true, false),
                "desc" | "descending" => {
                    col.descending = true;
                    (true, false)
                }
                "nulls_first" | "first" => {
                    col.nulls_first = true;
                    (false, true)
                }
                "nulls_last" | "last" => (false, true),
                _ => {
                    return Err(bad(&format!(
                        "unknown option '{p}' (asc, desc, nulls_first, nulls_last)"
                    )))
                }
            };
            if (is_dir && dir) || (is_nulls && nulls) {
                return Err(bad("an option given twice"));
            }
            dir |= is_dir;
            nulls |= is_nulls;
        }
        Ok(col)
    }

    /// Reads a comma-separated list of keys (a comma in a quoted name is the name's); a column
    /// named twice is refused.
    pub fn parse_list(list: &str) -> Result<Vec<SortColumn>> {
        let cols = SortColumn::parse_each(list)?;
        check_distinct(&cols)?;
        Ok(cols)
    }

    /// Reads a comma-separated list of keys as [`SortColumn::parse_list`] does, without checking
    /// that they are distinct (a caller reading several lists checks them together).
    pub fn parse_each(list: &str) -> Result<Vec<SortColumn>> {
        split_unquoted(list, ',').into_iter().map(SortColumn::parse).collect()
    }
}

/// `s` cut at each `sep` outside double quotes: a quote opens at the start of a piece only, and
/// inside one a doubled quote is a quote (as a CSV field is quoted).
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut quoted, mut start) = (false, 0);
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if quoted && c == '"' {
            if chars.next_if(|&(_, n)| n == '"').is_none() {
                quoted = false;
            }
        } else if !quoted && c == '"' && i == start {
            quoted = true;
        } else if !quoted && c == sep {
            pieces.push(&s[start..i]);
            start = i + c.len_utf8();
        }
    }
    pieces.push(&s[start..]);
    pieces
}

/// Refuses a list that names a column twice (the second key could never decide anything, and
/// its direction would contradict the first's).
pub fn check_distinct(cols: &[SortColumn]) -> Result<()> {
    for (i, c) in cols.iter().enumerate() {
        if cols[..i].iter().any(|d| d.name == c.name) {
            return Err(TableError::BadColumnSpec {
                spec: c.name.clone(),
                why: "the column is named twice".into(),
            });
        }
    }
    if cols.is_empty() {
        return Err(TableError::NoColumns);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_with_their_options() {
        let cols = SortColumn::parse_list("a,b:desc:nulls_first,c:nulls-first:ASC").unwrap();
        assert_eq!(cols[0], SortColumn::new("a"));
        assert_eq!(cols[1], SortColumn { name: "b".into(), descending: true, nulls_first: true });
        assert_eq!(cols[2], SortColumn { name: "c".into(), descending: false, nulls_first: true });
    }

    #[test]
    fn bad_keys_are_named() {
        let e = SortColumn::parse_list("a:down").unwrap_err().to_string();
        assert!(e.contains("'a:down'") && e.contains("down"), "{e}");
        assert!(SortColumn::parse_list("a,,b").is_err());
        assert!(SortColumn::parse("a:desc:asc").is_err());
        let e = SortColumn::parse_list("a,b,a:desc").unwrap_err().to_string();
        assert!(e.contains("named twice"), "{e}");
        for unclosed in ["\"a:desc", "\"a\"b\"", "\"a\"x:desc"] {
            let e = SortColumn::parse(unclosed).unwrap_err().to_string();
            assert!(e.contains("quoted name"), "{unclosed}: {e}");
        }
    }

    #[test]
    fn quoted_names_hold_colons_commas_and_quotes() {
        let cols = SortColumn::parse_list(r#""a:desc":desc,"x,y","say ""hi:"",":nulls_first,b"#);
        let cols = cols.unwrap();
        assert_eq!(
            cols[0],
            SortColumn { name: "a:desc".into(), descending: true, nulls_first: false }
        );
        assert_eq!(cols[1], SortColumn::new("x,y"));
        let hi = SortColumn { name: r#"say "hi:","#.into(), descending: false, nulls_first: true };
        assert_eq!(cols[2], hi);
        assert_eq!(cols[3], SortColumn::new("b"));
        // A quote inside a name not quoted is the name's.
        assert_eq!(SortColumn::parse(r#"a"b:desc"#).unwrap().name, r#"a"b"#);
        assert!(SortColumn::parse(r#""""#).unwrap_err().to_string().contains("no column"));
    }
}

/// A column's type given for a CSV or TSV input, in place of the one inferred from its first
/// rows: written `NAME=TYPE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnType {
    /// The column's name in the header.
    pub name: String,
    /// Its type.
    pub data_type: arrow_schema::DataType,
}

impl ColumnType {
    /// Reads `NAME=TYPE`. TYPE is one of `bool`, `int8`..`int64`, `uint8`..`uint64`,
    /// `float16`..`float64`, `string` (`utf8`), `large_string`, `binary`, `date32` (`date`),
    /// `date64`, `timestamp` (microseconds, no zone), or an Arrow type as Arrow writes it
    /// (`Decimal128(10, 2)`, `Timestamp(Millisecond, Some("UTC"))`).
    pub fn parse(spec: &str) -> Result<ColumnType> {
        use arrow_schema::{DataType as T, TimeUnit};
        let bad = |why: String| TableError::BadColumnType { spec: spec.into(), why };
        // The last `=`: a name may hold one, a type never does.
        let (name, ty) = spec.rsplit_once('=').ok_or_else(|| bad("not NAME=TYPE".into()))?;
        if name.is_empty() {
            return Err(bad("no column name".into()));
        }
        let data_type = match ty.trim().to_ascii_lowercase().as_str() {
            "bool" | "boolean" => T::Boolean,
            "int8" => T::Int8,
            "int16" => T::Int16,
            "int32" | "int" => T::Int32,
            "int64" | "long" => T::Int64,
            "uint8" => T::UInt8,
            "uint16" => T::UInt16,
            "uint32" => T::UInt32,
            "uint64" => T::UInt64,
            "float16" | "half" => T::Float16,
            "float32" | "float" => T::Float32,
            "float64" | "double" => T::Float64,
            "string" | "utf8" | "str" => T::Utf8,
            "large_string" | "large_utf8" => T::LargeUtf8,
            "binary" => T::Binary,
            "date" | "date32" => T::Date32,
            "date64" => T::Date64,
            "timestamp" => T::Timestamp(TimeUnit::Microsecond, None),
            _ => ty.trim().parse::<T>().map_err(|_| {
                bad(format!(
                    "'{ty}' is not a column type (bool, int8..int64, uint8..uint64, \
                     float16..float64, string, large_string, binary, date32, date64, timestamp, \
                     or an Arrow type such as Decimal128(10, 2))"
                ))
            })?,
        };
        Ok(ColumnType { name: name.to_string(), data_type })
    }
}
