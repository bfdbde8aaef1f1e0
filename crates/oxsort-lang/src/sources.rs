//! The places a sort's description comes from, reconciled into one [`SortSpec`].
//!
//! A front end can be told the layout, the key and the mode in several ways at once: flags for
//! the layout (`--lines`, `--nul`, `--record-size`), DFSORT control statements (`RECORD`,
//! `SORT`/`MERGE FIELDS=`, `COPY`, `INCLUDE`/`OMIT`, `SUM FIELDS=NONE`), a key in DFSORT's field
//! syntax, and GNU sort's key flags. [`SpecSources::reconcile`] decides, in one place for every
//! front end, which combinations hold and what they mean:
//!
//! ```text
//!  layout   --lines/--nul ─┐                    ┌ conflicts: a record size with delimited
//!           --record-size ─┼─> one layout ──────┤   records; a RECORD LENGTH that differs
//!           RECORD ────────┘  (default: 100 B)  └   from the record size or meets delimited
//!  key      control FIELDS= ─┐                  ┌ conflicts: two key sources; a key given to a
//!           --fields ────────┼─> at most one ───┤   copy; GNU flags on fixed records
//!           GNU -k/-n/-r ... ┘                  └ default on delimited records: GNU sort's
//!                                                 whole-line key (built by the front end)
//!  mode     MERGE / COPY in the control, or the front end's merge
//! ```
//!
//! Conflicts come back as [`SourceConflict`]; [`SourceConflict::describe`] words them with a
//! front end's own names for the sources (its [`Vocabulary`]: `--fields` or `fields=`, the
//! control file's path or `control`).

use crate::dfsort::Control;
use oxsort_format::KeySpec;
use oxsort_format::RecordLayout;
use oxsort_format::SpecError;
use oxsort_format::{Mode, SortSpec};

/// What a front end was given, each source already parsed.
#[derive(Clone, Debug, Default)]
pub struct SpecSources {
    /// Delimited records asked for (`--lines`, `--nul`).
    pub delimited: Option<RecordLayout>,
    /// Fixed records of this size asked for (`--record-size`).
    pub record_size: Option<usize>,
    /// RDW-prefixed variable records asked for (`--rdw`, a JCL `RECFM=VB`, GCSORT's
    /// `RECORD V`): a [`RecordLayout::Variable`].
    pub variable: Option<RecordLayout>,
    /// DFSORT control statements.
    pub control: Option<Control>,
    /// A key in DFSORT's field syntax (`--fields`).
    pub fields: Option<KeySpec>,
    /// Whether GNU sort key flags were given (their key comes from the `gnu` builder of
    /// [`SpecSources::reconcile`]).
    pub gnu_flags: bool,
    /// Keep one record per key (`-u`).
    pub unique: bool,
    /// The inputs are presorted: merge them.
    pub merge: bool,
}

/// Two sources that do not agree; the front end names the sources in its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceConflict {
    /// A fixed record size together with delimited records.
    #[error("a record size gives fixed records; it cannot go with delimited records")]
    RecordSizeWithDelimited,
    /// A record size that is not one.
    #[error(transparent)]
    RecordSize(SpecError),
    /// The control's `RECORD LENGTH=` differs from the record size asked for.
    #[error("RECORD LENGTH={length} conflicts with the record size {record_size}")]
    ControlLength {
        /// The control's length.
        length: usize,
        /// The record size asked for.
        record_size: usize,
    },
    /// The control's fixed records together with delimited records.
    #[error("RECORD TYPE=F,LENGTH={length} (fixed records) conflicts with delimited records")]
    ControlFixedWithDelimited {
        /// The control's length.
        length: usize,
    },
    /// RDW-prefixed records together with a record size or delimited records.
    #[error("RDW-prefixed records cannot go with a record size or delimited records")]
    VariableWithOther,
    /// The control's fixed records together with RDW-prefixed records.
    #[error("RECORD TYPE=F,LENGTH={length} (fixed records) conflicts with RDW-prefixed records")]
    ControlFixedWithVariable {
        /// The control's length.
        length: usize,
    },
    /// The control's RDW-prefixed records together with fixed or delimited records.
    #[error("RECORD TYPE=V (RDW-prefixed records) conflicts with fixed or delimited records")]
    ControlVariableWithOther {
        /// The other records are fixed ones of the record size asked for (else delimited).
        fixed: bool,
    },
    /// A copy (no key) and a key in field syntax.
    #[error("a copy (FIELDS=COPY or OPTION COPY) has no key, but a key is given")]
    CopyWithFields,
    /// The control's `FIELDS=` and a key in field syntax.
    #[error("a key and the {statement} FIELDS= of the control statements both give the key")]
    FieldsWithControlKey {
        /// `SORT` or `MERGE`.
        statement: &'static str,
    },
    /// GNU sort key flags on fixed records.
    #[error("GNU sort key flags are for delimited text")]
    GnuNeedsDelimited,
    /// GNU sort key flags and another key source.
    #[error("GNU sort key flags and another key both give the key")]
    GnuWithKey {
        /// The other source is the key in field syntax (else the control statements).
        fields: bool,
    },
}

/// How a front end names the sources of a sort's description, so that one
/// [`SourceConflict::describe`] words a conflict for every door: `--record-size` on the
/// command line, `record_size=` in Python.
pub trait Vocabulary {
    /// The record size as given, with its value when there is one: `--record-size 100`.
    fn record_size(&self, size: Option<usize>) -> String;
    /// The delimited records asked for: `--lines`.
    fn delimited(&self) -> String;
    /// Every way to ask for delimited records: `--lines or --nul`.
    fn delimited_options(&self) -> String;
    /// RDW-prefixed records as asked for: `--rdw (or RECFM=V/VB)`.
    fn variable(&self) -> String;
    /// Where the control statements came from, to start a message with: a file's path.
    fn control(&self) -> String;
    /// The key in DFSORT's field syntax: `--fields`.
    fn fields(&self) -> String;
    /// The GNU sort key options given: `-k -t`.
    fn gnu(&self) -> String;
    /// What the GNU sort key options are, after [`Vocabulary::gnu`]: `are GNU sort flags`.
    fn gnu_are(&self) -> String;
}

impl SourceConflict {
    /// The conflict in the words of a front end.
    pub fn describe(&self, v: &dyn Vocabulary) -> String {
        match self {
            SourceConflict::RecordSizeWithDelimited => format!(
                "{} gives fixed records; it cannot go with {}",
                v.record_size(None),
                v.delimited_options()
            ),
            SourceConflict::RecordSize(e) => format!("{}: {e}", v.record_size(None)),
            SourceConflict::ControlLength { length, record_size } => format!(
                "{}: RECORD LENGTH={length} conflicts with {}",
                v.control(),
                v.record_size(Some(*record_size))
            ),
            SourceConflict::ControlFixedWithDelimited { length } => format!(
                "{}: RECORD TYPE=F,LENGTH={length} (fixed records) conflicts with {}",
                v.control(),
                v.delimited()
            ),
            SourceConflict::VariableWithOther => format!(
                "{} gives RDW-prefixed records; it cannot go with {}, {}",
                v.variable(),
                v.record_size(None),
                v.delimited_options()
            ),
            SourceConflict::ControlFixedWithVariable { length } => format!(
                "{}: RECORD TYPE=F,LENGTH={length} (fixed records) conflicts with {} \
                 (RDW-prefixed records)",
                v.control(),
                v.variable()
            ),
            SourceConflict::ControlVariableWithOther { fixed } => format!(
                "{}: RECORD TYPE=V (RDW-prefixed records) conflicts with {}",
                v.control(),
                if *fixed { v.record_size(None) } else { v.delimited() }
            ),
            SourceConflict::CopyWithFields => format!(
                "{}: a copy (FIELDS=COPY or OPTION COPY) has no key, but {} gives one",
                v.control(),
                v.fields()
            ),
            SourceConflict::FieldsWithControlKey { statement } => format!(
                "{} and the {statement} FIELDS= of {} both give the key: keep one",
                v.fields(),
                v.control()
            ),
            SourceConflict::GnuNeedsDelimited => format!(
                "{} {} for delimited text: add {} (for fixed records give the key with {})",
                v.gnu(),
                v.gnu_are(),
                v.delimited_options(),
                v.fields()
            ),
            SourceConflict::GnuWithKey { fields } => format!(
                "{} and {} both give the key: keep one",
                v.gnu(),
                if *fields {
                    v.fields()
                } else {
                    format!("the control statements of {}", v.control())
                }
            ),
        }
    }
}

/// Why [`SpecSources::reconcile`] failed: the sources conflict, or the GNU key did not build.
#[derive(Debug)]
pub enum ReconcileError<E> {
    /// Two sources disagree.
    Conflict(SourceConflict),
    /// The front end's GNU key builder failed.
    Gnu(E),
}

impl<E> From<SourceConflict> for ReconcileError<E> {
    fn from(c: SourceConflict) -> Self {
        ReconcileError::Conflict(c)
    }
}

impl SpecSources {
    /// The one [`SortSpec`] the sources describe. `gnu(unique)` builds GNU sort's key from the
    /// front end's GNU flags (the whole line when there are none) and says whether it asks for
    /// `-u`; it is called for delimited records that no other source gives a key.
    pub fn reconcile<E>(
        self,
        gnu: impl FnOnce(bool) -> Result<(KeySpec, bool), E>,
    ) -> Result<SortSpec, ReconcileError<E>> {
        let mut layout = self.delimited;
        if let Some(n) = self.record_size {
            if self.delimited.is_some() {
                return Err(SourceConflict::RecordSizeWithDelimited.into());
            }
            layout = Some(RecordLayout::fixed(n).map_err(SourceConflict::RecordSize)?);
        }
        if let Some(v) = self.variable {
            if layout.is_some() {
                return Err(SourceConflict::VariableWithOther.into());
            }
            layout = Some(v);
        }
        let mut spec = SortSpec {
            unique: self.unique,
            mode: if self.merge { Mode::Merge } else { Mode::Sort },
            ..SortSpec::default()
        };
        let mut control_key = false;
        if let Some(c) = self.control {
            if let Some(RecordLayout::Fixed(length)) = c.record {
                layout = match layout {
                    Some(RecordLayout::Fixed(record_size)) if record_size != length => {
                        return Err(SourceConflict::ControlLength { length, record_size }.into())
                    }
                    Some(RecordLayout::Delimited(_)) => {
                        return Err(SourceConflict::ControlFixedWithDelimited { length }.into())
                    }
                    Some(RecordLayout::Variable(_)) => {
                        return Err(SourceConflict::ControlFixedWithVariable { length }.into())
                    }
                    _ => Some(RecordLayout::Fixed(length)),
                };
            }
            if let Some(RecordLayout::Variable(max)) = c.record {
                layout = match layout {
                    None => Some(RecordLayout::Variable(max)),
                    // Both give a longest record (RECORD LENGTH= and an LRECL): the smaller holds.
                    Some(RecordLayout::Variable(m)) => Some(RecordLayout::Variable(m.min(max))),
                    Some(other) => {
                        let fixed = matches!(other, RecordLayout::Fixed(_));
                        return Err(SourceConflict::ControlVariableWithOther { fixed }.into());
                    }
                };
            }
            if c.copy {
                if self.fields.is_some() {
                    return Err(SourceConflict::CopyWithFields.into());
                }
                spec.mode = Mode::Copy;
            } else if c.merge {
                spec.mode = Mode::Merge;
            }
            if let Some(key) = c.key {
                if self.fields.is_some() {
                    let statement = if c.merge { "MERGE" } else { "SORT" };
                    return Err(SourceConflict::FieldsWithControlKey { statement }.into());
                }
                spec.key = Some(key);
                control_key = true;
            }
            // EQUALS and NOEQUALS (`c.equals`) both hold: oxsort always sorts stably.
            spec.unique |= c.sum_none;
            spec.filter = c.filter;
            spec.inrec = c.inrec;
            spec.outrec = c.outrec;
            spec.sum = c.sum;
            spec.outfil = c.outfil;
            spec.skiprec = c.skiprec;
            spec.stopaft = c.stopaft;
        }
        let has_fields = self.fields.is_some();
        if let Some(key) = self.fields {
            spec.key = Some(key);
        }
        if self.gnu_flags {
            if self.delimited.is_none() {
                return Err(SourceConflict::GnuNeedsDelimited.into());
            }
            if has_fields || control_key {
                return Err(SourceConflict::GnuWithKey { fields: has_fields }.into());
            }
        }
        if self.delimited.is_some() && spec.key.is_none() && spec.mode != Mode::Copy {
            // GNU sort's semantics for delimited text: the whole line when no key is given.
            let (key, unique) = gnu(spec.unique).map_err(ReconcileError::Gnu)?;
            spec.key = Some(key);
            spec.unique |= unique;
        }
        if let Some(l) = layout {
            spec.layout = l;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_control, parse_fields, GnuArgs, GnuEnv};

    /// The key and `-u` of GNU sort arguments, in the C locale.
    fn gnu_key(argv: &[String]) -> Result<(KeySpec, bool), String> {
        let g = GnuArgs::parse(argv, &GnuEnv::default()).map_err(|e| e.to_string())?;
        let opts = g.c_locale_options();
        Ok((opts.key_spec(), opts.unique))
    }

    fn gnu<'a>(argv: &'a [&'a str]) -> impl FnOnce(bool) -> Result<(KeySpec, bool), String> + 'a {
        move |unique| {
            let mut a: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            if unique {
                a.push("-u".into());
            }
            gnu_key(&a)
        }
    }

    fn conflict(s: SpecSources) -> SourceConflict {
        match s.reconcile(gnu(&[])) {
            Err(ReconcileError::Conflict(c)) => c,
            other => panic!("expected a conflict, got {other:?}"),
        }
    }

    #[test]
    fn layouts_keys_and_modes_combine() {
        // Nothing given: the benchmark's records and key.
        assert_eq!(SpecSources::default().reconcile(gnu(&[])).unwrap(), SortSpec::default());
        // A control file's RECORD and key, with a matching record size.
        let c = parse_control(" SORT FIELDS=(1,4,CH,A)\n RECORD TYPE=F,LENGTH=20\n").unwrap();
        let s =
            SpecSources { record_size: Some(20), control: Some(c.clone()), ..Default::default() }
                .reconcile(gnu(&[]))
                .unwrap();
        assert_eq!(s.layout, RecordLayout::Fixed(20));
        assert_eq!(s.key, c.key);
        // Delimited records without a key get GNU's whole-line key; -u carries into it.
        let s = SpecSources {
            delimited: Some(RecordLayout::LINES),
            unique: true,
            ..Default::default()
        }
        .reconcile(gnu(&["-r"]))
        .unwrap();
        assert_eq!(s.key, Some(gnu_key(&["-r".into(), "-u".into()]).unwrap().0));
        assert!(s.unique);
        // A copy keeps no key, even on delimited records; a merge statement merges.
        let copy = parse_control(" SORT FIELDS=COPY\n").unwrap();
        let s = SpecSources {
            delimited: Some(RecordLayout::LINES),
            control: Some(copy),
            ..Default::default()
        }
        .reconcile(gnu(&[]))
        .unwrap();
        assert_eq!((s.mode, s.key), (Mode::Copy, None));
        let merge = parse_control(" MERGE FIELDS=(1,2,CH,A)\n").unwrap();
        let s = SpecSources { control: Some(merge), ..Default::default() }.reconcile(gnu(&[]));
        assert_eq!(s.unwrap().mode, Mode::Merge);
    }

    #[test]
    fn every_conflict_is_named() {
        let lines = Some(RecordLayout::LINES);
        let fields = Some(parse_fields("1,4,CH,A").unwrap());
        let control = |t: &str| Some(parse_control(t).unwrap());
        assert_eq!(
            conflict(SpecSources { delimited: lines, record_size: Some(8), ..Default::default() }),
            SourceConflict::RecordSizeWithDelimited
        );
        assert!(matches!(
            conflict(SpecSources { record_size: Some(0), ..Default::default() }),
            SourceConflict::RecordSize(SpecError::RecordSize { size: 0 })
        ));
        let rec50 = control(" RECORD TYPE=F,LENGTH=50\n");
        assert_eq!(
            conflict(SpecSources {
                record_size: Some(100),
                control: rec50.clone(),
                ..Default::default()
            }),
            SourceConflict::ControlLength { length: 50, record_size: 100 }
        );
        assert_eq!(
            conflict(SpecSources { delimited: lines, control: rec50, ..Default::default() }),
            SourceConflict::ControlFixedWithDelimited { length: 50 }
        );
        assert_eq!(
            conflict(SpecSources {
                control: control(" OPTION COPY\n"),
                fields: fields.clone(),
                ..Default::default()
            }),
            SourceConflict::CopyWithFields
        );
        assert_eq!(
            conflict(SpecSources {
                control: control(" MERGE FIELDS=(1,2,CH,A)\n"),
                fields: fields.clone(),
                ..Default::default()
            }),
            SourceConflict::FieldsWithControlKey { statement: "MERGE" }
        );
        assert_eq!(
            conflict(SpecSources { gnu_flags: true, ..Default::default() }),
            SourceConflict::GnuNeedsDelimited
        );
        assert_eq!(
            conflict(SpecSources {
                delimited: lines,
                gnu_flags: true,
                fields,
                ..Default::default()
            }),
            SourceConflict::GnuWithKey { fields: true }
        );
        assert_eq!(
            conflict(SpecSources {
                delimited: lines,
                gnu_flags: true,
                control: control(" SORT FIELDS=(1,2,CH,A)\n"),
                ..Default::default()
            }),
            SourceConflict::GnuWithKey { fields: false }
        );
        // The GNU key builder's own error comes back as is.
        let bad = SpecSources { delimited: lines, gnu_flags: true, ..Default::default() };
        assert!(matches!(bad.reconcile(gnu(&["-k0"])), Err(ReconcileError::Gnu(_))));
    }

    /// Names as a made-up front end spells them.
    struct Words;

    impl Vocabulary for Words {
        fn record_size(&self, size: Option<usize>) -> String {
            size.map_or("SIZE".into(), |n| format!("SIZE={n}"))
        }
        fn delimited(&self) -> String {
            "LINES".into()
        }
        fn delimited_options(&self) -> String {
            "LINES or NUL".into()
        }
        fn variable(&self) -> String {
            "RDW".into()
        }
        fn control(&self) -> String {
            "ctl".into()
        }
        fn fields(&self) -> String {
            "FIELDS".into()
        }
        fn gnu(&self) -> String {
            "KEYS".into()
        }
        fn gnu_are(&self) -> String {
            "are GNU keys".into()
        }
    }

    #[test]
    fn conflicts_are_worded_with_the_front_ends_names() {
        let c = SourceConflict::ControlLength { length: 50, record_size: 100 };
        assert_eq!(c.describe(&Words), "ctl: RECORD LENGTH=50 conflicts with SIZE=100");
        let c = SourceConflict::GnuNeedsDelimited;
        assert_eq!(
            c.describe(&Words),
            "KEYS are GNU keys for delimited text: add LINES or NUL (for fixed records give the \
             key with FIELDS)"
        );
        let c = SourceConflict::ControlVariableWithOther { fixed: true };
        assert_eq!(
            c.describe(&Words),
            "ctl: RECORD TYPE=V (RDW-prefixed records) conflicts with SIZE"
        );
    }
}
