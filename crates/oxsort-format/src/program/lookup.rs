//! DFSORT's lookup items: `p,m,CHANGE=(v,find,set,...)[,NOMATCH=(set)]` ([`Lookup`]).
//!
//! ```text
//!  20:14,1,CHANGE=(8,C'1',C'SHIP',C'2',C'HOLD',C'3',21,3),NOMATCH=(C'?')
//!  byte 14 = '2'  ─► "HOLD    "        (the set constant, blanks to v = 8 bytes)
//!  byte 14 = '3'  ─► bytes 21-23 + 5 blanks
//!  byte 14 = '9'  ─► "?       "        (NOMATCH)
//!  no NOMATCH and no match: the record is an error that stops the job (DFSORT's ICE218A)
//! ```
//!
//! The input field is compared with each `find` constant in the order written; the first equal
//! one gives its `set`. The parser pads `find` constants to the field's length (`C'..'` with
//! blanks, `X'..'` with binary zeros) and `set` constants to `v` bytes with blanks, as DFSORT
//! does; a `set` field of `n` bytes (`n <= v`) is padded with blanks when the record is built.

/// What a lookup puts in the output: a constant (already `v` bytes) or an input field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LookupSet {
    /// `C'..'` or `X'..'`, padded with blanks to the output length.
    Const(Vec<u8>),
    /// `q,n`: bytes of the input record (0-based offset), padded with blanks to the output
    /// length.
    Field {
        /// 0-based offset.
        offset: usize,
        /// Length in bytes (at most the output length).
        len: usize,
    },
}

/// `p,m,CHANGE=(v,find,set,...)[,NOMATCH=(set)]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lookup {
    /// 0-based offset of the field looked up.
    pub offset: usize,
    /// Its length (every `find` constant has this length).
    pub len: usize,
    /// `v`: the output length.
    pub out_len: usize,
    /// `(find, set)` pairs in the order written.
    pub table: Vec<(Vec<u8>, LookupSet)>,
    /// `NOMATCH=(set)`; without it, a field no `find` equals is an error.
    pub nomatch: Option<LookupSet>,
}

impl Lookup {
    /// Every input range the item reads (0-based offset, length): its field, then its set
    /// fields.
    pub(crate) fn reads(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let set_field = |s: &LookupSet| match s {
            LookupSet::Field { offset, len } => Some((*offset, *len)),
            LookupSet::Const(_) => None,
        };
        std::iter::once((self.offset, self.len))
            .chain(self.table.iter().filter_map(move |(_, s)| set_field(s)))
            .chain(self.nomatch.iter().filter_map(set_field))
    }

    /// Moves every input offset at or past `base` to `base`'s replacement `to` (for `%nn`
    /// fields, see [`crate::PARSED_BASE`]).
    pub(crate) fn rebase(&mut self, base: usize, to: usize) {
        let mv = |o: &mut usize| {
            if *o >= base {
                *o = *o - base + to;
            }
        };
        mv(&mut self.offset);
        for s in self.table.iter_mut().map(|(_, s)| s).chain(self.nomatch.iter_mut()) {
            if let LookupSet::Field { offset, .. } = s {
                mv(offset);
            }
        }
    }

    /// Writes the item for the record `rec` into `out` (of [`Lookup::out_len`] bytes). `Err`
    /// with the field's bytes when no `find` equals it and there is no `NOMATCH`. The caller
    /// has checked that `rec` holds every range of [`Lookup::reads`].
    pub(crate) fn write(&self, rec: &[u8], out: &mut [u8]) -> Result<(), Vec<u8>> {
        let field = &rec[self.offset..self.offset + self.len];
        let set = match self.table.iter().find(|(find, _)| find.as_slice() == field) {
            Some((_, set)) => set,
            None => match &self.nomatch {
                Some(set) => set,
                None => return Err(field.to_vec()),
            },
        };
        let bytes = match set {
            LookupSet::Const(c) => c.as_slice(),
            LookupSet::Field { offset, len } => &rec[*offset..offset + len],
        };
        let n = bytes.len().min(out.len());
        out[..n].copy_from_slice(&bytes[..n]);
        out[n..].fill(b' ');
        Ok(())
    }
}

/// How a field's value is shown in a message: its characters when all are printable ASCII,
/// else its bytes in hexadecimal.
pub(crate) fn show_value(bytes: &[u8]) -> String {
    if bytes.iter().all(|b| (b' '..=b'~').contains(b)) {
        format!("C'{}'", String::from_utf8_lossy(bytes).replace('\'', "''"))
    } else {
        let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
        format!("X'{hex}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Lookup {
        Lookup {
            offset: 1,
            len: 2,
            out_len: 5,
            table: vec![
                (b"AB".to_vec(), LookupSet::Const(b"one  ".to_vec())),
                (b"C ".to_vec(), LookupSet::Field { offset: 3, len: 2 }),
                (b"AB".to_vec(), LookupSet::Const(b"never".to_vec())),
            ],
            nomatch: None,
        }
    }

    #[test]
    fn first_equal_find_gives_its_set() {
        let mut out = [0u8; 5];
        table().write(b"xABxy", &mut out).unwrap();
        assert_eq!(&out, b"one  ");
        table().write(b"xC xy", &mut out).unwrap();
        assert_eq!(&out, b"xy   ");
    }

    #[test]
    fn no_match_is_an_error_or_nomatch() {
        let mut out = [0u8; 5];
        assert_eq!(table().write(b"xAbxy", &mut out), Err(b"Ab".to_vec()));
        let mut t = table();
        t.nomatch = Some(LookupSet::Field { offset: 0, len: 3 });
        t.write(b"xAbxy", &mut out).unwrap();
        assert_eq!(&out, b"xAb  ");
        assert_eq!(t.reads().collect::<Vec<_>>(), vec![(1, 2), (3, 2), (0, 3)]);
    }

    #[test]
    fn values_show_as_text_or_hex() {
        assert_eq!(show_value(b"A'1"), "C'A''1'");
        assert_eq!(show_value(&[0x0C, 0x41]), "X'0C41'");
    }
}
