//! The plan as a person reads it (`oxsort explain`): every size the sort will use.

use std::fmt::Write;

use super::{MergeSchedule, Passes, Plan};
use oxsort_io::human_bytes;

impl Plan {
    /// The plan as a person reads it (`oxsort explain`).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let size = |b: Option<u64>| b.map_or("unknown size".to_string(), human_bytes);
        let g = &self.geometry;
        let _ = writeln!(s, "oxsort plan");
        for i in &self.inputs {
            let shown = match (i.bytes, i.expected) {
                (None, Some(e)) => format!("about {}, expected", human_bytes(e)),
                (b, _) => size(b),
            };
            let _ = writeln!(s, "  input        {} ({shown})", i.name);
        }
        match self.record_size {
            Some(r) => {
                // INREC reshapes the records read: both sizes when they differ.
                let sorted = self.records.map(|n| n * r as u64);
                let bytes = match (sorted, self.input_bytes) {
                    (Some(a), Some(b)) if a != b => {
                        format!("{} sorted, {} read", human_bytes(a), human_bytes(b))
                    }
                    _ => size(self.input_bytes),
                };
                let _ = writeln!(
                    s,
                    "  records      {} of {r} bytes ({bytes})",
                    self.records.map_or("unknown".to_string(), |n| n.to_string()),
                );
            }
            None => {
                let _ = writeln!(s, "  records      {}, {}", self.layout, size(self.input_bytes));
            }
        }
        let _ = writeln!(
            s,
            "  memory       {} budget, {} threads",
            human_bytes(self.memory),
            self.threads
        );
        let load = match self.record_size {
            Some(_) => format!(
                "memory holds {} chunks ({} records)",
                g.arena_chunks,
                g.arena_chunks << g.chunk_log2
            ),
            None => {
                format!("memory holds {} of records with their entries", human_bytes(g.arena_bytes))
            }
        };
        let _ = writeln!(
            s,
            "  chunks       {} per read, {} read or populated ahead; {load}",
            human_bytes(g.chunk_bytes as u64),
            g.read_ahead_chunks
        );
        let _ = writeln!(
            s,
            "  output       parts of up to {} records, {} in flight, {} staging",
            g.part_records,
            g.window_parts,
            human_bytes(g.staging_bytes as u64)
        );
        match &self.passes {
            Passes::One => {
                let _ = writeln!(s, "  passes       one: the input fits in memory");
                if self.input_mapped {
                    let _ = writeln!(
                        s,
                        "  input read   mapped: its pages come from the page cache, read ahead, \
                         not copied into memory of the sort's own"
                    );
                }
            }
            Passes::Stream { load_chunks } => {
                let per_load = match self.record_size {
                    Some(_) => format!("{} records", load_chunks << g.chunk_log2),
                    None => human_bytes(g.arena_bytes),
                };
                let _ = writeln!(
                    s,
                    "  passes       one, streamed (a copy): loads of up to {per_load} written in \
                     input order as they are read; no temp files"
                );
            }
            Passes::Two { runs, run_chunks, schedule } => {
                let _ = writeln!(
                    s,
                    "  passes       two: {runs} runs of up to {} records",
                    run_chunks << g.chunk_log2
                );
                write_schedule(&mut s, schedule);
            }
            Passes::Unknown { run_chunks } => {
                let per_run = match self.record_size {
                    Some(_) => format!("{} records", run_chunks << g.chunk_log2),
                    None => human_bytes(g.arena_bytes),
                };
                let _ = writeln!(
                    s,
                    "  passes       decided while reading: one if the input fits, else runs of up \
                     to {per_run} merged up to {} at a time",
                    self.merge.fan_in
                );
                if self.input_mapped {
                    let _ = writeln!(
                        s,
                        "  input read   mapped if the first piece's records say one load holds \
                         them all (pages from the page cache, not copied), else read"
                    );
                }
            }
        }
        if let Some(e) = &self.estimates {
            let shape = |e: &super::cost::Estimate| {
                format!(
                    "{:.1} s (disk {:.1} + fresh memory {:.1} + CPU {:.1})",
                    e.seconds, e.disk_s, e.memory_s, e.cpu_s
                )
            };
            let one = e.one.as_ref().map_or("does not fit".to_string(), shape);
            let _ = writeln!(s, "  estimate     one pass {one}; two passes {}", shape(&e.two));
            let _ = writeln!(
                s,
                "  rates        disk {:.1} GB/s read, {:.1} GB/s write (assumed); fresh memory {} \
                 s/GiB of CPU, {} of hugetlb pool free",
                e.rates.read_bps / 1e9,
                e.rates.write_bps / 1e9,
                super::cost::FRESH_S_PER_GIB,
                human_bytes(e.rates.pool_free)
            );
        }
        let _ = writeln!(
            s,
            "  memory use   input phase {}, merge phase {}",
            human_bytes(self.memory_input_phase),
            human_bytes(self.memory_merge_phase)
        );
        if self.temp.is_empty() {
            let _ = writeln!(s, "  temp         none");
        }
        for t in &self.temp {
            let reused = if t.reused > 0 {
                format!(" ({} of it kept by the interrupted sort)", human_bytes(t.reused))
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "  temp         {}: {} at peak{reused}, {} free",
                t.dir.display(),
                human_bytes(t.bytes),
                human_bytes(t.free)
            );
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note         {n}");
        }
        for o in &self.outfil {
            let _ = writeln!(s, "  outfil       {o}");
        }
        if !self.outfil.is_empty() {
            let _ = writeln!(
                s,
                "  outfil       one pass: each record after SUM/OUTREC is dealt to the OUTFIL \
                 outputs as it is written; all are renamed together when the sort succeeded"
            );
        }
        match self.output_free {
            None if !self.outfil.is_empty() && self.output == "/dev/null" => {
                let _ = writeln!(s, "  output       none besides the OUTFIL outputs");
            }
            Some(free) => {
                let _ = writeln!(
                    s,
                    "  output       {} ({} free there)",
                    self.output,
                    human_bytes(free)
                );
            }
            None => {
                let _ = writeln!(s, "  output       standard output");
            }
        }
        for w in &self.warnings {
            let _ = writeln!(s, "  warning      {w}");
        }
        s
    }
}

/// One line per merge level.
fn write_schedule(s: &mut String, schedule: &MergeSchedule) {
    let n = schedule.levels.len();
    for (i, l) in schedule.levels.iter().enumerate() {
        let into =
            if i + 1 == n { "the output".to_string() } else { format!("{} runs", l.outputs) };
        let _ = writeln!(
            s,
            "  merge {}/{n}    {} runs, {} at a time, into {into}; read blocks of up to {} per \
             run, {} in all",
            i + 1,
            l.inputs,
            l.fan_in.min(l.inputs),
            human_bytes(l.block as u64),
            human_bytes(l.memory)
        );
    }
}
