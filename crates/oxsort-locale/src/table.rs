//! The locale's collation weights per character, at every level, checked against glibc.
//!
//! glibc's `strxfrm` writes each level's weights in turn, the levels separated by `0x01`; a
//! level with the `position` rule (en_US.UTF-8's fourth, the last resort among punctuation)
//! writes before each weight how many characters since the last weight it wrote (1 + the
//! ignored ones between), UTF-8 encoded:
//!
//! ```text
//!  strxfrm("a,B")  =  51 5e | 01 | 02 02 | 01 | 02 07 | 01 | 01 e2 94 92  01 c7 9b  01 e2 ad b1
//!                     level 1     level 2     level 3      level 4: (1, 'a') (1, ',') (1, 'B')
//!  (',' has no weight on levels 1-3; 'B' differs from 'b' on level 3, case)
//! ```
//!
//! When no character of the string has a weight on the last level, glibc leaves out the
//! separator before it (so `strxfrm("ä")` in sv_SE.UTF-8, whose fourth level ignores it, is
//! `c6 a2 01 02 02 01 02 02`).
//!
//! Where a locale's levels are plain concatenations for a set of characters, the image of a
//! string of them is built from per-character weights: a table look-up per character and
//! level instead of glibc's walk through its tables (about 3.5 us for a 100-byte line).
//! Characters in contractions ("ch", "sz"), in context rules, or in runs glibc reverses (a
//! `backward` level holding two different weights) are kept out: a string holding one is
//! transformed by glibc whole.
//!
//! Every character is checked when first asked for: its own image gives its weights (split by
//! the level shape the locale declares); then one `strxfrm` of `c c x1 c x2 ... c xk c`, over
//! the k characters admitted before it, must equal what the table builds. So every ordered
//! pair of admitted characters is known to concatenate. The primary level alone is checked
//! the same way, for characters whose later levels do not concatenate (their first bytes
//! still build a sort prefix).

use std::sync::{Mutex, OnceLock, PoisonError};

/// glibc's `sort_position` bit of a level's rule (`locale/localeinfo.h`).
const SORT_POSITION: u8 = 4;

/// The most levels a locale may declare here (glibc's locales have at most 4).
const MAX_LEVELS: usize = 8;

/// The byte glibc's `strxfrm` writes after each level's weights but the last.
const LEVEL_END: u8 = 0x01;

/// How many characters the table admits at most: each admission transforms strings twice as
/// long as the table, so text of thousands of distinct characters (CJK) stops paying for
/// checks and goes to `strxfrm` whole past this many. Latin-1, Latin Extended-A and B, Greek,
/// Cyrillic and ASCII together are about 1,000 characters.
pub const MAX_TABLE_CHARS: usize = 1500;

/// Characters per page of the table (2^8): a page is made when one of its characters is
/// first asked for.
const PAGE_BITS: usize = 8;

/// One character's weights.
pub(crate) struct Entry {
    /// The weights of every level, one level after another.
    bytes: Box<[u8]>,
    /// Where each level's weights end in `bytes` (as many as the locale has levels).
    ends: Box<[usize]>,
    /// The whole image of a string of `full` characters is built from their levels; otherwise
    /// only the first level (the primary weight) is known to concatenate.
    pub(crate) full: bool,
}

impl Entry {
    /// The weights of level `l`.
    #[inline]
    fn level(&self, l: usize) -> &[u8] {
        let start = if l == 0 { 0 } else { self.ends[l - 1] };
        &self.bytes[start..self.ends[l]]
    }

    /// The first level's weight.
    #[inline]
    pub(crate) fn primary(&self) -> &[u8] {
        &self.bytes[..self.ends[0]]
    }
}

/// One character's entry: `Some` when admitted, fixed once decided.
type Slot = OnceLock<Option<&'static Entry>>;

/// The table's pages, indexed by code point >> [`PAGE_BITS`].
static PAGES: [OnceLock<Box<[Slot]>>; (char::MAX as usize >> PAGE_BITS) + 1] =
    [const { OnceLock::new() }; (char::MAX as usize >> PAGE_BITS) + 1];

/// The level shape of the locale's collation, once read from a locale that has levels:
/// whether each level has the `position` rule.
static SHAPE: OnceLock<Box<[bool]>> = OnceLock::new();

/// The characters admitted so far, in order.
static ADMITTED: Mutex<Admitted> =
    Mutex::new(Admitted { primary: Vec::new(), full: Vec::new(), ascii_first: false });

/// The admitted characters (under [`ADMITTED`]'s lock).
struct Admitted {
    /// Every admitted character (its primary weight concatenates).
    primary: Vec<(char, &'static Entry)>,
    /// Those whose every level concatenates.
    full: Vec<(char, &'static Entry)>,
    /// Printable ASCII has been checked (before the first character beyond it).
    ascii_first: bool,
}

/// The entry of `c`, deciding it (with glibc's help) on the first call.
#[inline]
pub(crate) fn entry(c: char) -> Option<&'static Entry> {
    let own = slot(c);
    if let Some(e) = own.get() {
        return *e;
    }
    let mut admitted = ADMITTED.lock().unwrap_or_else(PoisonError::into_inner);
    if !c.is_ascii() && !admitted.ascii_first && shape().is_some() {
        // Printable ASCII before the first other character, whatever the text: of the two
        // letters of a contraction the one checked second stays out, and it should not be
        // the common one ("l·": U+00B7). (Not before: ASCII text checks only the characters
        // it holds, which keeps a small sort's start-up short.)
        admitted.ascii_first = true;
        for a in ' '..='~' {
            slot(a).get_or_init(|| admitted.admit(a));
        }
    }
    *own.get_or_init(|| admitted.admit(c))
}

/// The table's slot of `c` (its page made on first use).
#[inline]
fn slot(c: char) -> &'static Slot {
    let page = PAGES[c as usize >> PAGE_BITS]
        .get_or_init(|| (0..1 << PAGE_BITS).map(|_| OnceLock::new()).collect());
    &page[c as usize & ((1 << PAGE_BITS) - 1)]
}

/// The locale's level shape (see [`SHAPE`]); `None` when the locale has no levels (C,
/// POSIX) or more than [`MAX_LEVELS`].
fn shape() -> Option<&'static [bool]> {
    if let Some(s) = SHAPE.get() {
        return Some(s);
    }
    let s = read_shape()?;
    Some(SHAPE.get_or_init(|| s))
}

/// Reads the number of levels and the first rule set's `position` flags from glibc's
/// `LC_COLLATE` data (`_NL_COLLATE_NRULES`, `_NL_COLLATE_RULESETS`). A rule set of other
/// characters that differs shows in their checks, which then fail.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn read_shape() -> Option<Box<[bool]>> {
    /// `_NL_ITEM (LC_COLLATE, 0)` and `_NL_ITEM (LC_COLLATE, 1)` of glibc's `langinfo.h`.
    const NRULES: libc::nl_item = (libc::LC_COLLATE << 16) as libc::nl_item;
    const RULESETS: libc::nl_item = NRULES + 1;
    // SAFETY: nl_langinfo accepts any item; for this one glibc returns the word value in the
    // pointer's place (its `values[]` union), read here as an integer, never dereferenced.
    let nrules = unsafe { libc::nl_langinfo(NRULES) } as usize as u32 as usize;
    if nrules == 0 || nrules > MAX_LEVELS {
        return None;
    }
    // SAFETY: with 1..=MAX_LEVELS rules glibc's RULESETS item points at the rule sets, at
    // least `nrules` bytes (one per level of the first set); the bytes are copied at once.
    let rules = unsafe {
        let p = libc::nl_langinfo(RULESETS).cast::<u8>();
        if p.is_null() {
            return None;
        }
        std::slice::from_raw_parts(p, nrules).to_vec()
    };
    Some(rules.iter().map(|r| r & SORT_POSITION != 0).collect())
}

/// Other C libraries: no table (every collated key is transformed whole).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn read_shape() -> Option<Box<[bool]>> {
    None
}

impl Admitted {
    /// Decides `c`'s entry; admits it when at least its primary weight concatenates.
    fn admit(&mut self, c: char) -> Option<&'static Entry> {
        if c == '\0' || self.primary.len() >= MAX_TABLE_CHARS {
            return None;
        }
        let shape = shape()?;
        let mut utf8 = [0u8; 4];
        let own = c.encode_utf8(&mut utf8).as_bytes();
        let mut image = Vec::new();
        crate::strxfrm(own, &mut image);
        // An image the table cannot cut into levels still gives the primary weight.
        let (mut entry, whole) = match split_levels(&image, shape) {
            Some(e) => (e, true),
            None => (primary_entry(&image, shape.len())?, false),
        };
        if entry.primary().contains(&0) || !self.concatenates(c, &entry, shape, true) {
            return None;
        }
        entry.full = whole && self.concatenates(c, &entry, shape, false);
        let entry: &'static Entry = Box::leak(Box::new(entry));
        self.primary.push((c, entry));
        if entry.full {
            self.full.push((c, entry));
        }
        Some(entry)
    }

    /// Whether glibc's image of `c c x1 c x2 ... c xk c`, over the admitted characters, is
    /// what the table builds: its first level only (`primary_only`, over every admitted
    /// character), or the whole image (over those admitted whole).
    fn concatenates(&self, c: char, e: &Entry, shape: &[bool], primary_only: bool) -> bool {
        let others = if primary_only { &self.primary } else { &self.full };
        let mut probe = String::with_capacity(4 * (2 * others.len() + 2));
        let mut entries = Vec::with_capacity(2 * others.len() + 2);
        probe.push(c);
        probe.push(c);
        entries.extend([e, e]);
        for &(x, xe) in others {
            probe.push(x);
            probe.push(c);
            entries.extend([xe, e]);
        }
        let mut image = Vec::new();
        crate::strxfrm(probe.as_bytes(), &mut image);
        let mut built = Vec::with_capacity(image.len());
        if primary_only {
            for x in &entries {
                built.extend_from_slice(x.primary());
            }
            image.starts_with(&built) && image.get(built.len()) == Some(&LEVEL_END)
        } else {
            build(&entries, shape, &mut built);
            image == built
        }
    }
}

/// A lone character's entry (not yet `full`), its image cut into levels; `None` when the
/// image does not have the locale's shape: each level but the last ends at a [`LEVEL_END`];
/// the last, with the `position` rule, is empty or `0x01` (one character since the last
/// weight) and the weight. (A locale counting positions on an earlier level has none.)
fn split_levels(image: &[u8], shape: &[bool]) -> Option<Entry> {
    if shape[..shape.len() - 1].contains(&true) {
        // A count byte 0x01 before a level's end could not be told from it.
        return None;
    }
    let mut bytes = Vec::with_capacity(image.len());
    let mut ends = Vec::with_capacity(shape.len());
    let mut rest = image;
    for (l, &position) in shape.iter().enumerate() {
        let piece = if l + 1 == shape.len() {
            let piece = std::mem::take(&mut rest);
            match piece {
                [] => piece,
                [1, weight @ ..] if position => weight,
                _ if position => return None,
                _ => piece,
            }
        } else {
            match rest.iter().position(|&b| b == LEVEL_END) {
                Some(end) => {
                    let piece = &rest[..end];
                    rest = &rest[end + 1..];
                    piece
                }
                // The separator before an empty last level is left out (see `build`).
                None if l + 2 == shape.len() => std::mem::take(&mut rest),
                None => return None,
            }
        };
        bytes.extend_from_slice(piece);
        ends.push(bytes.len());
    }
    Some(Entry { bytes: bytes.into_boxed_slice(), ends: ends.into_boxed_slice(), full: false })
}

/// The entry of a character whose image is not cut into levels: its primary weight only (up
/// to the first level's end), never `full`.
fn primary_entry(image: &[u8], levels: usize) -> Option<Entry> {
    let end = image.iter().position(|&b| b == LEVEL_END)?;
    let bytes: Box<[u8]> = image[..end].into();
    Some(Entry { bytes, ends: vec![end; levels].into_boxed_slice(), full: false })
}

/// Appends the image glibc's `strxfrm` writes for the string of `entries`' characters, whose
/// levels concatenate (see the module's diagram).
fn build(entries: &[&Entry], shape: &[bool], out: &mut Vec<u8>) {
    build_start(entries, shape, out, usize::MAX);
}

/// Appends the image of [`build`], or only its first levels once they hold at least `want`
/// bytes: returns whether the image is whole.
fn build_start(entries: &[&Entry], shape: &[bool], out: &mut Vec<u8>, want: usize) -> bool {
    let start = out.len();
    let mut level_start = start;
    for (l, &position) in shape.iter().enumerate() {
        if l > 0 {
            if out.len() - start >= want {
                // The levels so far are the image's first bytes: the rest starts with the
                // level's end.
                return false;
            }
            out.push(LEVEL_END);
            level_start = out.len();
        }
        if position {
            let mut since = 1u32;
            for e in entries {
                let w = e.level(l);
                if w.is_empty() {
                    since += 1;
                } else {
                    push_count(since, out);
                    out.extend_from_slice(w);
                    since = 1;
                }
            }
        } else {
            for e in entries {
                out.extend_from_slice(e.level(l));
            }
        }
    }
    // glibc leaves out the separator before an empty last level, when the image has at
    // least 2 bytes with it (`do_xfrm`: "we can avoid the \1 byte").
    if shape.len() > 1 && out.len() == level_start && out.len() - start >= 2 {
        out.pop();
    }
    true
}

/// glibc's `utf8_encode` of a position count (1 byte below 0x80).
#[inline]
fn push_count(n: u32, out: &mut Vec<u8>) {
    match char::from_u32(n) {
        Some(c) if n < 0x80 => out.push(c as u8),
        Some(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        // A count past the code points never occurs: lines are shorter.
        None => out.extend_from_slice(&n.to_be_bytes()),
    }
}

thread_local! {
    /// The entries of the string being built, reused across calls.
    static ENTRIES: std::cell::RefCell<Vec<&'static Entry>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Appends `strxfrm(s)` built from the table when every character of `s` (UTF-8, no NUL) is
/// admitted whole; returns false, appending nothing, otherwise.
pub(crate) fn xfrm_from_table(s: &[u8], out: &mut Vec<u8>) -> bool {
    xfrm_start_from_table(s, out, usize::MAX).is_some()
}

/// Appends at least the first `want` bytes of `strxfrm(s)` (whole levels), built from the
/// table when every character of `s` (UTF-8, no NUL) is admitted whole: `Some(whole)`, whether
/// all of the image was appended; `None`, appending nothing, otherwise.
pub(crate) fn xfrm_start_from_table(s: &[u8], out: &mut Vec<u8>, want: usize) -> Option<bool> {
    let shape = SHAPE.get().map(|s| &**s).or_else(|| {
        // Not read yet: the first character's look-up reads it.
        let first = crate::next_char(s)?.0;
        entry(first)?;
        shape()
    })?;
    ENTRIES.with(|entries| {
        let mut entries = entries.borrow_mut();
        entries.clear();
        let mut rest = s;
        while !rest.is_empty() {
            let (c, n) = crate::next_char(rest)?;
            match entry(c) {
                Some(e) if e.full => entries.push(e),
                _ => return None,
            }
            rest = &rest[n..];
        }
        Some(build_start(&entries, shape, out, want))
    })
}
