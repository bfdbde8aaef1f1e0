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
//! A level may be `backward` for some characters: en_US.UTF-8 reverses the second level of
//! digits, punctuation and signs (the rule set of its `<SPECIAL>` section), not of letters;
//! fr_CA.UTF-8 that of Latin letters too. Each maximal run of consecutive characters that
//! reverse a level is walked backwards there. `strxfrm` walks every character of the run;
//! `strcoll`, which GNU sort calls, skips the second-to-last of a run of two or more that a
//! forward character follows (glibc 2.36). The images built here follow `strcoll`, so that
//! their byte order is GNU sort's order:
//!
//! ```text
//!  level 2 of "ab123cd" in en_US.UTF-8     a  b  1  2  3  c  d
//!  the run of backward characters                [1  2  3]         a letter follows
//!  strxfrm walks                           a  b  3  2  1  c  d
//!  strcoll walks (and the table builds)    a  b  3     1  c  d     '2' skipped
//! ```
//!
//! Where a locale's levels are plain concatenations for a set of characters, the image of a
//! string of them is built from per-character weights: a table look-up per character and
//! level instead of glibc's walk through its tables (about 3.5 us for a 100-byte line).
//! Characters in contractions ("ch", "sz") or in context rules are kept out (but for one
//! that contracts only with a few characters it follows, U+00B7 after "l": strings without
//! such a pair are built), as are those
//! whose direction on a level some rule sets reverse and others not could not be learnt: a
//! string holding one is transformed by glibc whole, and its image is mended where `strcoll`
//! walks a reversed run otherwise (see [`mend_glibc_image`]).
//!
//! Every character is checked when first asked for: its own image gives its weights (split by
//! the level shape the locale declares); its direction on each level whose rule sets differ
//! is learnt from `strcoll` (see [`Admitted::direction`]); then one `strxfrm` of
//! `c c x1 c x2 ... c xk c`, over the k characters admitted before it, must equal what the
//! table builds walking as `strxfrm` does. So every ordered pair of admitted characters is
//! known to concatenate, reversed runs included. The primary level alone is checked the same
//! way, for characters whose later levels do not concatenate (their first bytes still build a
//! sort prefix).

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// glibc's `sort_backward` bit of a level's rule (`locale/localeinfo.h`).
const SORT_BACKWARD: u8 = 2;

/// glibc's `sort_position` bit of a level's rule (`locale/localeinfo.h`).
const SORT_POSITION: u8 = 4;

/// The most levels a locale may declare here (glibc's locales have at most 4; one bit each in
/// [`Entry::backward`]).
const MAX_LEVELS: usize = 8;

/// The most rule sets a locale may have: glibc keeps a character's rule set in the top byte of
/// its weight index.
const MAX_RULE_SETS: usize = 256;

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

/// The longest strings that probe a character's direction against the reference characters
/// (all strings of 1 to 3 of the character and 3 references holding the character: 45).
const PROBE_LEN: usize = 3;

/// The longest strings that probe the first references' directions together (all strings of
/// 1 to 4 of the 3 candidates: 120). A run followed by a forward character needs 3.
const SEED_PROBE_LEN: usize = 4;

/// How many first characters (ASCII letters and digits) the references are sought with.
const SEED_PIVOTS: usize = 3;

/// Letters of other scripts the references are sought among first: a locale may give
/// every ASCII character the same direction on a level (fr_CA.UTF-8 reverses the accents of
/// Latin letters and of digits and punctuation alike, not those of Greek or Cyrillic), and
/// an accent's weight differs from a plain letter's.
const SEED_LETTERS: [char; 3] = ['é', 'α', 'д'];

/// The most characters a character may contract with when it follows them (U+00B7 after
/// "l" or "L") and still be admitted whole: strings without such a pair are built from the
/// table; a character contracting with more stays out.
const MAX_CONTRACTING: usize = 4;

/// How many probe pairs `strcoll` is asked about for each pair of hypotheses it tells apart:
/// the first decides, the others check.
const CHECKS_PER_SPLIT: usize = 3;

/// One character's weights.
#[derive(Clone)]
pub(crate) struct Entry {
    /// The weights of every level, one level after another.
    bytes: Box<[u8]>,
    /// Where each level's weights end in `bytes` (as many as the locale has levels).
    ends: Box<[usize]>,
    /// Bit `l`: the character's rule reverses level `l` (`backward`).
    backward: u8,
    /// The admitted characters this one contracts with when it follows them (U+00B7 after
    /// "l"): a string holding such a pair is transformed by glibc whole. Empty for nearly all.
    contracts_after: Box<[char]>,
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

/// The locale's collation rules as the table needs them, read once from a locale that has
/// levels.
struct Shape {
    /// Whether each level has the `position` rule (the same in every rule set).
    position: Box<[bool]>,
    /// Bit `l`: every rule set reverses level `l`.
    backward: u8,
    /// Bit `l`: some rule sets reverse level `l` and others do not; each character's direction
    /// there is learnt.
    mixed: u8,
}

impl Shape {
    /// Bit `l`: some characters reverse level `l`.
    #[inline]
    fn reversing(&self) -> u8 {
        self.backward | self.mixed
    }
}

/// The locale's rules (see [`Shape`]).
static SHAPE: OnceLock<Shape> = OnceLock::new();

/// The characters admitted so far, in order.
static ADMITTED: Mutex<Admitted> = Mutex::new(Admitted {
    primary: Vec::new(),
    full: Vec::new(),
    ascii_first: false,
    references: [const { None }; MAX_LEVELS],
});

/// The admitted characters (under [`ADMITTED`]'s lock).
struct Admitted {
    /// Every admitted character (its primary weight concatenates).
    primary: Vec<(char, &'static Entry)>,
    /// Those whose every level concatenates.
    full: Vec<(char, &'static Entry)>,
    /// Printable ASCII has been checked (before the first character beyond it).
    ascii_first: bool,
    /// Per level whose rule sets differ in direction: characters whose direction there is
    /// known, which probe the others' (see [`Admitted::direction`]); empty when none could
    /// be found, `None` before they are sought.
    references: [Option<Vec<Probe>>; MAX_LEVELS],
}

/// The directions of characters the table does not admit whole (bit `l`: the character
/// reverses level `l`), learnt when [`mend_glibc_image`] needs one beside a run; `None` where
/// `strcoll` did not tell. Pages of [`PAGE_BITS`] characters, as the table's.
static OTHER_DIRECTIONS: [OnceLock<Box<[DirectionSlot]>>; (char::MAX as usize >> PAGE_BITS) + 1] =
    [const { OnceLock::new() }; (char::MAX as usize >> PAGE_BITS) + 1];

/// One character's learnt directions in [`OTHER_DIRECTIONS`]: fixed once decided.
type DirectionSlot = OnceLock<Option<u8>>;

/// A character and its entry, for the direction probes.
#[derive(Clone)]
struct Probe {
    c: char,
    entry: Entry,
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

/// The locale's rules (see [`SHAPE`]); `None` when the locale has no levels (C, POSIX), more
/// than [`MAX_LEVELS`], or rules the table does not build (see [`read_shape`]).
fn shape() -> Option<&'static Shape> {
    if let Some(s) = SHAPE.get() {
        return Some(s);
    }
    let s = read_shape()?;
    Some(SHAPE.get_or_init(|| s))
}

/// Reads the number of levels and every rule set from glibc's `LC_COLLATE` data
/// (`_NL_COLLATE_NRULES`, `_NL_COLLATE_RULESETS`: `nrules` bytes a set, each with the
/// `forward`/`backward`/`position` bits of a level). glibc does not say how many rule sets
/// there are; it writes the items of `LC_COLLATE` one after the other, so the rule sets
/// reach to the next item (`_NL_COLLATE_TABLEMB`), with all-zero padding to its alignment
/// (skipped). `None`, and no table, when that layout does not hold, when the rule sets
/// disagree on a level's `position` (`strcoll` takes it from the first character's set), or
/// when a level with `position`, or the first level, is reversed anywhere.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn read_shape() -> Option<Shape> {
    /// `_NL_ITEM (LC_COLLATE, 0..=2)` of glibc's `langinfo.h`.
    const NRULES: libc::nl_item = (libc::LC_COLLATE << 16) as libc::nl_item;
    const RULESETS: libc::nl_item = NRULES + 1;
    const TABLEMB: libc::nl_item = NRULES + 2;
    // SAFETY: nl_langinfo accepts any item; for this one glibc returns the word value in the
    // pointer's place (its `values[]` union), read here as an integer, never dereferenced.
    let nrules = unsafe { libc::nl_langinfo(NRULES) } as usize as u32 as usize;
    if nrules == 0 || nrules > MAX_LEVELS {
        return None;
    }
    // SAFETY: nl_langinfo accepts any item; the pointers are only compared here.
    let (sets, next) =
        unsafe { (libc::nl_langinfo(RULESETS).cast::<u8>(), libc::nl_langinfo(TABLEMB)) };
    let len = (next as usize).checked_sub(sets as usize)?;
    if sets.is_null() || len < nrules || len > MAX_RULE_SETS * nrules {
        return None;
    }
    // SAFETY: with 1..=MAX_LEVELS rules glibc's RULESETS item points at the rule sets, and
    // the next item of the same locale data follows them `len` bytes on (checked above to be
    // at least one set and at most as many as a locale can have): the bytes between are the
    // rule sets and padding, in the one mapping of the locale's data. They are copied at once.
    let rules = unsafe { std::slice::from_raw_parts(sets, len) }.to_vec();
    let sets: Vec<&[u8]> =
        rules.chunks_exact(nrules).filter(|set| set.iter().any(|&r| r != 0)).collect();
    let first = sets.first()?;
    let mut shape = Shape {
        position: first.iter().map(|r| r & SORT_POSITION != 0).collect(),
        backward: 0,
        mixed: 0,
    };
    for l in 0..nrules {
        let reversed = sets.iter().filter(|set| set[l] & SORT_BACKWARD != 0).count();
        if sets.iter().any(|set| (set[l] & SORT_POSITION != 0) != shape.position[l])
            || (reversed > 0 && (l == 0 || shape.position[l]))
        {
            return None;
        }
        if reversed == sets.len() {
            shape.backward |= 1 << l;
        } else if reversed > 0 {
            shape.mixed |= 1 << l;
        }
    }
    Some(shape)
}

/// Other C libraries: no table (every collated key is transformed whole).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn read_shape() -> Option<Shape> {
    None
}

impl Admitted {
    /// Decides `c`'s entry; admits it when at least its primary weight concatenates.
    fn admit(&mut self, c: char) -> Option<&'static Entry> {
        if c == '\0' || self.primary.len() >= MAX_TABLE_CHARS {
            return None;
        }
        let shape = shape()?;
        let image = lone_image(c);
        // An image the table cannot cut into levels still gives the primary weight.
        let (mut entry, whole) = match split_levels(&image, shape) {
            Some(e) => (e, true),
            None => (primary_entry(&image, shape.position.len())?, false),
        };
        entry.backward = shape.backward;
        if entry.primary().contains(&0) || !self.concatenates(c, &entry, shape, true) {
            return None;
        }
        entry.full = whole
            && self.learn_directions(c, &mut entry, shape)
            && (self.concatenates(c, &entry, shape, false)
                || self.contracts_after_few(c, &mut entry, shape));
        let entry: &'static Entry = Box::leak(Box::new(entry));
        self.primary.push((c, entry));
        if entry.full {
            self.full.push((c, entry));
        }
        Some(entry)
    }

    /// Sets `c`'s direction on every level whose rule sets differ (see [`Self::direction`]);
    /// false when one could not be learnt.
    fn learn_directions(&mut self, c: char, e: &mut Entry, shape: &Shape) -> bool {
        for l in (0..shape.position.len()).filter(|l| shape.mixed & (1 << l) != 0) {
            match self.direction(c, e, l, shape) {
                Some(true) => e.backward |= 1 << l,
                Some(false) => e.backward &= !(1 << l),
                None => return false,
            }
        }
        true
    }

    /// Whether `c` (entry `e`) reverses level `l`, learnt from `strcoll`: the table builds the
    /// images of every string of 1 to [`PROBE_LEN`] characters drawn from `c` and the level's
    /// reference characters (whose directions are known), once as if `c` reversed the level
    /// and once as if not; where the two orders of those images differ, `strcoll` is asked
    /// about neighbours that tell them apart ([`CHECKS_PER_SPLIT`] of them), and every answer
    /// must be the one hypothesis's. Then one `strxfrm` of `c c r1 c r2 ... c`, over the
    /// references, must be what the table builds (so `c` does not contract with them). `None`
    /// when no probe tells the two apart, when `strcoll` agrees with neither, or when the
    /// level has no references.
    fn direction(&mut self, c: char, e: &Entry, l: usize, shape: &Shape) -> Option<bool> {
        let references = self.references(l, shape);
        if let Some(r) = references.iter().find(|r| r.c == c) {
            return Some(r.entry.backward & (1 << l) != 0);
        }
        if references.is_empty() {
            return None;
        }
        let unknown = [Probe { c, entry: e.clone() }];
        let backward = solve(l, shape, references, &unknown, PROBE_LEN)?[0]?;
        let mut learnt = unknown[0].clone();
        learnt.entry.backward =
            if backward { e.backward | (1 << l) } else { e.backward & !(1 << l) };
        let mut check = vec![&learnt, &learnt];
        for r in references {
            check.extend([r, &learnt]);
        }
        matches_strxfrm(&check, shape).then_some(backward)
    }

    /// When the whole-image check of `c` fails: whether that is only because `c` contracts
    /// with up to [`MAX_CONTRACTING`] admitted characters it follows (U+00B7 after "l"), each
    /// pair checked on its own: `strxfrm` of `c c` and of `c x`, for every character `x`
    /// admitted whole, must be what the table builds, and of `x c` too but for those (then
    /// kept in [`Entry::contracts_after`]).
    fn contracts_after_few(&self, c: char, e: &mut Entry, shape: &Shape) -> bool {
        let lone = Probe { c, entry: e.clone() };
        if !matches_strxfrm(&[&lone, &lone], shape) {
            return false;
        }
        let mut after = Vec::new();
        for &(x, xe) in &self.full {
            let x_probe = Probe { c: x, entry: xe.clone() };
            if !matches_strxfrm(&[&lone, &x_probe], shape) {
                return false;
            }
            if !matches_strxfrm(&[&x_probe, &lone], shape) {
                after.push(x);
                if after.len() > MAX_CONTRACTING {
                    return false;
                }
            }
        }
        // Nothing found: the whole check failed for a longer context, and `c` stays out.
        e.contracts_after = after.into();
        !e.contracts_after.is_empty()
    }

    /// The references of level `l` (see [`Admitted::references`]), sought on first use.
    fn references(&mut self, l: usize, shape: &Shape) -> &[Probe] {
        self.references[l].get_or_insert_with(|| seek_references(l, shape))
    }

    /// Whether glibc's image of `c c x1 c x2 ... c xk c`, over the admitted characters, is
    /// what the table builds: its first level only (`primary_only`, over every admitted
    /// character), or the whole image (over those admitted whole, walking reversed runs as
    /// `strxfrm` does).
    fn concatenates(&self, c: char, e: &Entry, shape: &Shape, primary_only: bool) -> bool {
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
            build_start(&entries, shape, &mut built, usize::MAX, Walk::Strxfrm);
            image == built
        }
    }
}

/// glibc's image of `c` alone.
fn lone_image(c: char) -> Vec<u8> {
    let mut utf8 = [0u8; 4];
    let mut image = Vec::new();
    crate::strxfrm(c.encode_utf8(&mut utf8).as_bytes(), &mut image);
    image
}

/// Whether glibc's `strxfrm` of the string of `probes` is what the table builds for it,
/// walking reversed runs as `strxfrm` does.
fn matches_strxfrm(probes: &[&Probe], shape: &Shape) -> bool {
    let text: String = probes.iter().map(|p| p.c).collect();
    let entries: Vec<&Entry> = probes.iter().map(|p| &p.entry).collect();
    let (mut image, mut built) = (Vec::new(), Vec::new());
    crate::strxfrm(text.as_bytes(), &mut image);
    build_start(&entries, shape, &mut built, usize::MAX, Walk::Strxfrm);
    image == built
}

/// The first references of level `l`, learnt together: a pivot `p` (one of the first
/// [`SEED_PIVOTS`] ASCII letters and digits with weights on the first level and on `l`), the
/// first printable ASCII character `i` without weights before `l` (so strings with and
/// without it tie there, and `l` decides), and a third character `y`: first letters of
/// other scripts ([`SEED_LETTERS`]), then printable ASCII from its end back (letters, last,
/// and digits, first, are often of different rule sets). [`solve`] must learn all three
/// directions from the strings of 1 to [`SEED_PROBE_LEN`] of them (which takes two
/// directions among them, or a run reversed whole that changes the order), and `strxfrm` of
/// a string holding each ordered pair of them must be what the table builds. Empty when no
/// choice does: then no character is built whole from the table.
fn seek_references(l: usize, shape: &Shape) -> Vec<Probe> {
    let candidates: Vec<Probe> = SEED_LETTERS
        .into_iter()
        .chain((' '..='~').rev())
        .filter_map(|c| {
            let mut entry = split_levels(&lone_image(c), shape)?;
            entry.backward = shape.backward;
            Some(Probe { c, entry })
        })
        .collect();
    let ascii = |p: &&Probe| p.c.is_ascii();
    let Some(i) =
        candidates.iter().rev().filter(ascii).find(|p| (0..l).all(|k| p.entry.level(k).is_empty()))
    else {
        return Vec::new();
    };
    let pivots = candidates.iter().rev().filter(ascii).filter(|p| {
        p.c.is_ascii_alphanumeric() && !p.entry.level(0).is_empty() && !p.entry.level(l).is_empty()
    });
    for p in pivots.take(SEED_PIVOTS) {
        for y in candidates.iter().filter(|y| y.c != p.c && y.c != i.c) {
            let mut seeds = [p.clone(), y.clone(), i.clone()];
            let Some(found) = solve(l, shape, &[], &seeds, SEED_PROBE_LEN) else {
                continue;
            };
            for (seed, backward) in seeds.iter_mut().zip(&found) {
                match backward {
                    Some(true) => seed.entry.backward |= 1 << l,
                    Some(false) => seed.entry.backward &= !(1 << l),
                    None => break,
                }
            }
            let [p, y, i] = &seeds;
            // pp py yy yi ii ip pi iy yp: every ordered pair.
            if found.iter().all(Option::is_some)
                && matches_strxfrm(&[p, p, y, y, i, i, p, i, y, p], shape)
            {
                return seeds.into();
            }
        }
    }
    Vec::new()
}

/// Learns the directions on level `l` of the `unknown` characters (up to a few: each
/// combination is a hypothesis) from glibc's `strcoll`, given the `known` ones: the table
/// builds, under every hypothesis, the images of all strings of 1 to `max_len` characters
/// of both that hold an unknown one, as `strcoll` walks them; while two remaining
/// hypotheses order those strings differently, `strcoll` is asked about up to
/// [`CHECKS_PER_SPLIT`] neighbours of the one's order that the other orders otherwise, and
/// the hypotheses whose order differs from an answer are dropped. Per unknown character,
/// its direction when every remaining hypothesis gives the same; `None` when none remains
/// (`strcoll` follows no hypothesis: a contraction, say) or a probe holds a NUL.
fn solve(
    l: usize,
    shape: &Shape,
    known: &[Probe],
    unknown: &[Probe],
    max_len: usize,
) -> Option<Vec<Option<bool>>> {
    let symbols: Vec<&Probe> = known.iter().chain(unknown).collect();
    let k = known.len();
    let mut strings: Vec<Vec<usize>> = Vec::new();
    let mut frontier: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..max_len {
        frontier = frontier
            .iter()
            .flat_map(|s| (0..symbols.len()).map(move |x| [&s[..], &[x]].concat()))
            .collect();
        strings.extend(frontier.iter().filter(|s| s.iter().any(|&x| x >= k)).cloned());
    }
    let texts: Vec<String> =
        strings.iter().map(|s| s.iter().map(|&x| symbols[x].c).collect()).collect();
    let variants: Vec<[Entry; 2]> = unknown
        .iter()
        .map(|u| {
            let mut forward = u.entry.clone();
            forward.backward &= !(1 << l);
            let mut backward = u.entry.clone();
            backward.backward |= 1 << l;
            [forward, backward]
        })
        .collect();
    let hypotheses = 1usize << unknown.len();
    let images: Vec<Vec<Vec<u8>>> = (0..hypotheses)
        .map(|h| {
            strings
                .iter()
                .map(|s| {
                    let entries: Vec<&Entry> = s
                        .iter()
                        .map(|&x| match x.checked_sub(k) {
                            None => &known[x].entry,
                            Some(u) => &variants[u][(h >> u) & 1],
                        })
                        .collect();
                    let mut image = Vec::new();
                    build_start(&entries, shape, &mut image, usize::MAX, Walk::Strcoll);
                    image
                })
                .collect()
        })
        .collect();
    let mut alive: Vec<usize> = (0..hypotheses).collect();
    let mut alike: Vec<(usize, usize)> = Vec::new();
    loop {
        let mut split = Vec::new();
        'find: for (n, &a) in alive.iter().enumerate() {
            for &b in &alive[n + 1..] {
                if alike.contains(&(a, b)) {
                    continue;
                }
                split = telling_apart(&images[a], &images[b]);
                if split.is_empty() {
                    alike.push((a, b));
                } else {
                    break 'find;
                }
            }
        }
        if split.is_empty() {
            break;
        }
        for (x, y) in split {
            let answer = crate::strcoll(texts[x].as_bytes(), texts[y].as_bytes())?;
            alive.retain(|&h| images[h][x].cmp(&images[h][y]) == answer);
        }
        if alive.is_empty() {
            return None;
        }
    }
    Some(
        (0..unknown.len())
            .map(|u| {
                let first = (alive[0] >> u) & 1;
                alive.iter().all(|h| (h >> u) & 1 == first).then_some(first == 1)
            })
            .collect(),
    )
}

/// Up to [`CHECKS_PER_SPLIT`] pairs of strings that neighbour in the order of images `a` and
/// that images `b` order otherwise; empty when both orders are the same (if every pair of
/// neighbours keeps its order, ties included, so does every pair).
fn telling_apart(a: &[Vec<u8>], b: &[Vec<u8>]) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..a.len()).collect();
    order.sort_by(|&x, &y| a[x].cmp(&a[y]));
    order
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|&(x, y)| a[x].cmp(&a[y]) != b[x].cmp(&b[y]))
        .take(CHECKS_PER_SPLIT)
        .collect()
}

/// A lone character's entry (not yet `full`, forward on every level), its image cut into
/// levels; `None` when the image does not have the locale's shape: each level but the last
/// ends at a [`LEVEL_END`]; the last, with the `position` rule, is empty or `0x01` (one
/// character since the last weight) and the weight. (A locale counting positions on an
/// earlier level has none.)
fn split_levels(image: &[u8], shape: &Shape) -> Option<Entry> {
    let shape = &shape.position;
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
                // The separator before an empty last level is left out (see `build_start`).
                None if l + 2 == shape.len() => std::mem::take(&mut rest),
                None => return None,
            }
        };
        bytes.extend_from_slice(piece);
        ends.push(bytes.len());
    }
    Some(Entry {
        bytes: bytes.into_boxed_slice(),
        ends: ends.into_boxed_slice(),
        backward: 0,
        contracts_after: Box::new([]),
        full: false,
    })
}

/// The entry of a character whose image is not cut into levels: its primary weight only (up
/// to the first level's end), never `full`.
fn primary_entry(image: &[u8], levels: usize) -> Option<Entry> {
    let end = image.iter().position(|&b| b == LEVEL_END)?;
    let bytes: Box<[u8]> = image[..end].into();
    Some(Entry {
        bytes,
        ends: vec![end; levels].into_boxed_slice(),
        backward: 0,
        contracts_after: Box::new([]),
        full: false,
    })
}

/// How a level is walked where characters reverse it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// As glibc's `strcoll` compares (GNU sort's order): each run of characters that reverse
    /// the level backwards, without the run's second-to-last character when the run has two
    /// or more and a forward character follows it (see the module's diagram).
    Strcoll,
    /// As glibc's `strxfrm` writes: each such run backwards, every character of it.
    Strxfrm,
}

/// Appends the image of the string of `entries`' characters (see the module's diagrams), or
/// only its first levels once they hold at least `want` bytes: returns whether the image is
/// whole. Walked as `strcoll` does, the image's byte order is `strcoll`'s; walked as
/// `strxfrm` does, it is glibc's `strxfrm` image, byte for byte.
fn build_start(
    entries: &[&Entry],
    shape: &Shape,
    out: &mut Vec<u8>,
    want: usize,
    walk: Walk,
) -> bool {
    let start = out.len();
    let mut level_start = start;
    for (l, &position) in shape.position.iter().enumerate() {
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
            // Never reversed (see `read_shape`).
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
        } else if shape.reversing() & (1 << l) != 0 {
            push_walked(entries, l, walk, out);
        } else {
            for e in entries {
                out.extend_from_slice(e.level(l));
            }
        }
    }
    // glibc leaves out the separator before an empty last level, when the image has at
    // least 2 bytes with it (`do_xfrm`: "we can avoid the \1 byte").
    if shape.position.len() > 1 && out.len() == level_start && out.len() - start >= 2 {
        out.pop();
    }
    true
}

/// Appends the weights of level `l` of `entries`, each run of characters that reverse it
/// walked backwards as `walk` says.
#[inline]
fn push_walked(entries: &[&Entry], l: usize, walk: Walk, out: &mut Vec<u8>) {
    let bit = 1u8 << l;
    let mut i = 0;
    while i < entries.len() {
        if entries[i].backward & bit == 0 {
            out.extend_from_slice(entries[i].level(l));
            i += 1;
            continue;
        }
        let run_start = i;
        while i < entries.len() && entries[i].backward & bit != 0 {
            i += 1;
        }
        // strcoll's walk skips the second-to-last character of a run that a forward
        // character follows.
        let skip = walk == Walk::Strcoll && i < entries.len();
        push_run(&entries[run_start..i], l, skip, out);
    }
}

/// Appends the weights of level `l` of a run of characters that reverse it, backwards:
/// without the run's second-to-last character when `skip` and the run has two or more.
#[inline]
fn push_run(run: &[&Entry], l: usize, skip: bool, out: &mut Vec<u8>) {
    let Some((last, before)) = run.split_last() else {
        return;
    };
    out.extend_from_slice(last.level(l));
    let before = match before.split_last() {
        Some((_, skipped)) if skip => skipped,
        _ => before,
    };
    for e in before.iter().rev() {
        out.extend_from_slice(e.level(l));
    }
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

/// Whether the text `before` a character of entry `e` ends with a character `e` contracts
/// with (rare: kept off the per-character path).
#[cold]
fn follows_contracting(e: &Entry, before: &[u8]) -> bool {
    let start = before.len().saturating_sub(4);
    let previous = (start..before.len()).find_map(|i| {
        crate::next_char(&before[i..]).filter(|&(_, n)| i + n == before.len()).map(|(c, _)| c)
    });
    previous.is_some_and(|p| e.contracts_after.contains(&p))
}

/// Appends the image of `s` built from the table (its byte order is `strcoll`'s) when every
/// character of `s` (UTF-8, no NUL) is admitted whole and none follows a character it
/// contracts with; returns false, appending nothing, otherwise.
pub(crate) fn xfrm_from_table(s: &[u8], out: &mut Vec<u8>) -> bool {
    xfrm_start_from_table(s, out, usize::MAX).is_some()
}

/// Appends at least the first `want` bytes of the image of [`xfrm_from_table`] (whole
/// levels), when [`xfrm_from_table`] builds it: `Some(whole)`,
/// whether all of the image was appended; `None`, appending nothing, otherwise.
pub(crate) fn xfrm_start_from_table(s: &[u8], out: &mut Vec<u8>, want: usize) -> Option<bool> {
    let shape = SHAPE.get().or_else(|| {
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
                Some(e) if e.full => {
                    if !e.contracts_after.is_empty()
                        && follows_contracting(e, &s[..s.len() - rest.len()])
                    {
                        return None;
                    }
                    entries.push(e);
                }
                _ => return None,
            }
            rest = &rest[n..];
        }
        Some(build_start(&entries, shape, out, want, Walk::Strcoll))
    })
}

/// The direction bits of `c` (bit `l`: `c` reverses level `l`) on the levels whose rule sets
/// differ: from its entry when admitted whole, else learnt from `strcoll` as an admission
/// does (see [`Admitted::direction`]) and kept; `None` when unknown.
fn direction_bits(c: char, shape: &Shape) -> Option<u8> {
    if let Some(e) = entry(c).filter(|e| e.full) {
        return Some(e.backward);
    }
    let page = OTHER_DIRECTIONS[c as usize >> PAGE_BITS]
        .get_or_init(|| (0..1 << PAGE_BITS).map(|_| OnceLock::new()).collect());
    *page[c as usize & ((1 << PAGE_BITS) - 1)].get_or_init(|| {
        split_levels(&lone_image(c), shape).and_then(|mut e| {
            e.backward = shape.backward;
            let mut admitted = ADMITTED.lock().unwrap_or_else(PoisonError::into_inner);
            admitted.learn_directions(c, &mut e, shape).then_some(e.backward)
        })
    })
}

/// Where level `l` of an image lies (its weights, without the separators).
fn level_bounds(image: &[u8], l: usize) -> Option<(usize, usize)> {
    let mut start = 0;
    for _ in 0..l {
        start += image[start..].iter().position(|&b| b == LEVEL_END)? + 1;
    }
    let end =
        image[start..].iter().position(|&b| b == LEVEL_END).map_or(image.len(), |e| start + e);
    Some((start, end))
}

/// Mends glibc's `strxfrm` image of `s` (UTF-8, no NUL), appended at `out[start..]`, so that
/// its byte order is `strcoll`'s, GNU sort's: on a level whose rule sets differ in direction,
/// `strxfrm` walks every character of a reversed run where `strcoll` skips the run's
/// second-to-last (see the module's diagram). Such a run is two or more characters admitted
/// whole that reverse the level, with a forward character after it and none before it. The
/// level of the image of `s` without the skipped characters is `strcoll`'s walk of `s`: it
/// takes the place of that level in the image of `s`. Every level of the shorter image must be
/// shorter by just the skipped characters' weights (a pair that contracts once a character
/// is out would show). A run whose neighbour's direction is not known (a character not
/// assigned), or whose skipped character weighs nothing on the level, is left as it is.
///
/// ```text
///  "ő1 2zs" in hu_HU.UTF-8, level 2    ő  [1  ␠  2]  zs     a run, then "zs" (forward)
///  strxfrm's level 2                   ő   2  ␠  1   zs
///  strcoll's walk                      ő   2     1   zs     '␠', second-to-last, skipped
///  = strxfrm's level 2 of "ő12zs"      ő   2     1   zs
/// ```
pub(crate) fn mend_glibc_image(s: &[u8], out: &mut Vec<u8>, start: usize) {
    let Some(shape) = SHAPE.get().filter(|shape| shape.mixed != 0) else {
        return;
    };
    if !may_skip(s, shape) {
        return;
    }
    // Each character's byte offset, the character whose rule it walks by and its entry when
    // admitted whole. A pair that contracts ("l·") is one element, never in a run, which
    // walks by the rule of its first character (its letter's, not its punctuation's).
    let mut chars: Vec<(usize, char, Option<&'static Entry>)> = Vec::with_capacity(s.len());
    let mut at = 0;
    while at < s.len() {
        let Some((c, n)) = crate::next_char(&s[at..]) else {
            return;
        };
        let e = entry(c).filter(|e| e.full);
        match (e, chars.last_mut()) {
            (Some(e), Some(previous)) if e.contracts_after.contains(&previous.1) => {
                previous.2 = None;
                let first = previous.1;
                chars.push((at, first, None));
            }
            _ => chars.push((at, c, e)),
        }
        at += n;
    }
    let levels = shape.position.len();
    for l in (0..levels).rev().filter(|l| shape.mixed & (1 << l) != 0) {
        let skipped = skipped_in_runs(&chars, l, shape);
        if skipped.is_empty() {
            continue;
        }
        let mut without = Vec::with_capacity(s.len());
        let mut from = 0;
        for &i in &skipped {
            without.extend_from_slice(&s[from..chars[i].0]);
            from = chars.get(i + 1).map_or(s.len(), |c| c.0);
        }
        without.extend_from_slice(&s[from..]);
        let mut image = Vec::new();
        crate::strxfrm(&without, &mut image);
        // Every level of the shorter image is shorter by the skipped characters' weights.
        let whole = &out[start..];
        let agrees = (0..levels).filter(|&j| !shape.position[j]).all(|j| {
            let weights: usize =
                skipped.iter().filter_map(|&i| chars[i].2).map(|e| e.level(j).len()).sum();
            match (level_bounds(whole, j), level_bounds(&image, j)) {
                (Some((a, b)), Some((c, d))) => d - c + weights == b - a,
                _ => false,
            }
        });
        let (Some((a, b)), Some((c, d)), true) =
            (level_bounds(whole, l), level_bounds(&image, l), agrees)
        else {
            continue;
        };
        out.splice(start + a..start + b, image[c..d].iter().copied());
    }
}

/// The characters [`QUICK_REVERSES`] keeps: those of one and two UTF-8 bytes (Latin, Greek,
/// Cyrillic, Hebrew, Arabic...).
const QUICK_CHARS: usize = 0x800;

/// Where to cut glibc's image of a string for [`crate::xfrm_start`] (its first levels, up to
/// the first that reaches `want` bytes) when those levels come before any level
/// [`mend_glibc_image`] may change; `None` when the whole image (mended) is needed.
pub(crate) fn unmended_levels(image: &[u8], want: usize) -> Option<usize> {
    let shape = SHAPE.get().filter(|shape| shape.mixed != 0)?;
    let mut end = 0;
    for l in 0..shape.position.len() - 1 {
        if shape.mixed & (1 << l) != 0 {
            return None;
        }
        end += image[end..].iter().position(|&b| b == LEVEL_END)?;
        if end >= want {
            return Some(end);
        }
        end += 1;
    }
    None
}

/// For each character below [`QUICK_CHARS`] admitted whole, bits of the levels whose rule
/// sets differ that it reverses (low byte) and of those it also weighs on (high byte);
/// [`UNKNOWN`] before it is first asked for. The quick look of [`may_skip`].
static QUICK_REVERSES: [AtomicU16; QUICK_CHARS] = [const { AtomicU16::new(UNKNOWN) }; QUICK_CHARS];

/// A [`QUICK_REVERSES`] slot not yet filled (level 0 is never reversed: no bit 0).
const UNKNOWN: u16 = 1;

/// Whether `s` may hold a run that `strcoll` walks otherwise than `strxfrm`: on a level whose
/// rule sets differ, a character admitted whole that reverses it and weighs on it, another
/// that reverses it next, and a character after them. A byte look-up per ASCII character;
/// most strings end here (a comma and a space before a word, say, reverse the level and weigh
/// nothing on it).
fn may_skip(s: &[u8], shape: &Shape) -> bool {
    let reverses = |c: char| {
        entry(c).filter(|e| e.full).map_or(0, |e| {
            let bits = e.backward & shape.mixed;
            let weighs = (0..MAX_LEVELS)
                .filter(|&l| bits & (1 << l) != 0 && !e.level(l).is_empty())
                .fold(0u8, |w, l| w | (1 << l));
            u16::from(bits) | u16::from(weighs) << 8
        })
    };
    // The previous character's and the one before it's.
    let (mut one, mut two) = (0u16, 0u16);
    let mut at = 0;
    while at < s.len() {
        let Some((c, n)) = crate::next_char(&s[at..]) else {
            return false;
        };
        at += n;
        let bits = match QUICK_REVERSES.get(c as usize) {
            Some(slot) => match slot.load(Ordering::Relaxed) {
                UNKNOWN => {
                    let bits = reverses(c);
                    slot.store(bits, Ordering::Relaxed);
                    bits
                }
                bits => bits,
            },
            None => reverses(c),
        };
        if (two >> 8) & one & 0xFF != 0 {
            return true;
        }
        (two, one) = (one, bits);
    }
    false
}

/// The characters `strcoll` skips on level `l` (indices into `chars`, ascending): the
/// second-to-last of each run of two or more characters that reverse the level, with a
/// character that walks it forwards after the run and none that reverses it before; but for
/// a run beside a character whose direction is not known, one whose skipped character weighs
/// nothing on the level, and one whose characters around the skipped one contract.
fn skipped_in_runs(
    chars: &[(usize, char, Option<&'static Entry>)],
    l: usize,
    shape: &Shape,
) -> Vec<usize> {
    let bit = 1u8 << l;
    let reverses = |i: usize| chars[i].2.is_some_and(|e| e.backward & bit != 0);
    let forward = |i: usize| direction_bits(chars[i].1, shape).is_some_and(|d| d & bit == 0);
    let mut skipped = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !reverses(i) {
            i += 1;
            continue;
        }
        let run_start = i;
        while i < chars.len() && reverses(i) {
            i += 1;
        }
        if i - run_start < 2 || i == chars.len() {
            continue;
        }
        let skip = i - 2;
        let weighs = chars[skip].2.is_some_and(|e| !e.level(l).is_empty());
        // Without the skipped character, the run's last follows the one before it.
        let contract = skip.checked_sub(1).is_some_and(|before| {
            chars[i - 1].2.is_some_and(|e| e.contracts_after.contains(&chars[before].1))
        });
        if weighs && !contract && forward(i) && (run_start == 0 || forward(run_start - 1)) {
            skipped.push(skip);
        }
    }
    skipped
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry of one weight byte on a level of its own, reversing it or not.
    fn entry(weight: u8, backward: bool) -> Entry {
        Entry {
            bytes: Box::new([weight]),
            ends: Box::new([1]),
            backward: u8::from(backward),
            contracts_after: Box::new([]),
            full: true,
        }
    }

    fn walked(s: &str, walk: Walk) -> String {
        // Digits reverse the level, letters do not; each weighs its own byte.
        let entries: Vec<Entry> = s.bytes().map(|b| entry(b, b.is_ascii_digit())).collect();
        let refs: Vec<&Entry> = entries.iter().collect();
        let mut out = Vec::new();
        push_walked(&refs, 0, walk, &mut out);
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn strxfrm_reverses_each_run_whole() {
        assert_eq!(walked("ab123cd45", Walk::Strxfrm), "ab321cd54");
        assert_eq!(walked("1a", Walk::Strxfrm), "1a");
        assert_eq!(walked("", Walk::Strxfrm), "");
    }

    #[test]
    fn strcoll_skips_the_second_to_last_of_a_run_a_forward_character_follows() {
        assert_eq!(walked("ab123cd", Walk::Strcoll), "ab31cd");
        assert_eq!(walked("12a", Walk::Strcoll), "2a");
        assert_eq!(walked("1234a5", Walk::Strcoll), "421a5");
        // A run of one, or one that ends the string, is walked whole.
        assert_eq!(walked("1a2b", Walk::Strcoll), "1a2b");
        assert_eq!(walked("a123", Walk::Strcoll), "a321");
        assert_eq!(walked("12", Walk::Strcoll), "21");
    }

    #[test]
    fn neighbours_tell_orders_apart() {
        let a: Vec<Vec<u8>> = vec![vec![1], vec![2], vec![3]];
        assert!(telling_apart(&a, &a).is_empty());
        let b: Vec<Vec<u8>> = vec![vec![1], vec![3], vec![2]];
        assert_eq!(telling_apart(&a, &b), [(1, 2)]);
        let tie: Vec<Vec<u8>> = vec![vec![1], vec![2], vec![2]];
        assert_eq!(telling_apart(&a, &tie), [(1, 2)]);
    }
}
