//! Where GCSORT's runtime rules differ from DFSORT's for statements both read alike:
//! [`gcsort_rules`] makes DFSORT control statements (parsed by [`crate::parse_control`]) run
//! as GCSORT runs them, for `oxsort gcsort`. The DFSORT doors keep DFSORT's rules.

use oxsort_format::FindRepRule;

use crate::Control;

/// Makes `control` run by GCSORT's rules: every `FINDREP` (of `INREC`, `OUTREC` and the
/// `OUTFIL` groups) as GCSORT runs it (see [`FindRepRule::Gcsort`]).
pub fn gcsort_rules(control: &mut Control) {
    let outfil = control.outfil.iter_mut().filter_map(|o| o.reformat.as_mut());
    for r in control.inrec.iter_mut().chain(control.outrec.iter_mut()).chain(outfil) {
        r.set_findrep_rule(FindRepRule::Gcsort);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsort_format::{Edit, Reformat};

    fn rules(r: &Option<Reformat>) -> Vec<FindRepRule> {
        let mut out = Vec::new();
        let mut take = |e: &Edit| {
            if let Edit::FindRep(f) = e {
                out.push(f.rule);
            }
        };
        match r {
            Some(Reformat::Edit(e)) | Some(Reformat::Parse { edit: e, .. }) => take(e),
            Some(Reformat::IfThen { clauses, .. }) => clauses.iter().for_each(|c| take(&c.edit)),
            None => {}
        }
        out
    }

    #[test]
    fn every_findrep_follows_gcsort() {
        let text = "SORT FIELDS=COPY\n INREC FINDREP=(IN=C'A',OUT=C'B')\n\
                    OUTREC IFTHEN=(WHEN=INIT,FINDREP=(IN=C'C',OUT=C'D'))\n\
                    OUTFIL FNAMES=X,FINDREP=(IN=C'E',OUT=C'F')\n";
        let mut c = crate::parse_control(text).unwrap();
        assert_eq!(rules(&c.inrec), [FindRepRule::Dfsort], "DFSORT's unless asked");
        gcsort_rules(&mut c);
        assert_eq!(rules(&c.inrec), [FindRepRule::Gcsort]);
        assert_eq!(rules(&c.outrec), [FindRepRule::Gcsort]);
        assert_eq!(rules(&c.outfil[0].reformat), [FindRepRule::Gcsort]);
    }
}
