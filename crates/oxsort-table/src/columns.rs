//! [`SortColumn`]: a sort key by column name, and its written form
//! `NAME[:asc|:desc][:nulls_first|:nulls_last]`.

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
    /// `descending`, `nulls-first`, `nulls-last`).
    pub fn parse(spec: &str) -> Result<SortColumn> {
        let bad = |why: &str| TableError::BadColumnSpec { spec: spec.into(), why: why.into() };
        let mut parts = spec.split(':');
        let name = parts.next().unwrap_or_default();
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

    /// Reads a comma-separated list of keys; a column named twice is refused.
    pub fn parse_list(list: &str) -> Result<Vec<SortColumn>> {
        let cols = list.split(',').map(SortColumn::parse).collect::<Result<Vec<_>>>()?;
        check_distinct(&cols)?;
        Ok(cols)
    }
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
    }
}
