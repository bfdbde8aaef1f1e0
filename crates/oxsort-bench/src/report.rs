//! The report a submission needs, in one directory: `report.json` (everything), `report.md`
//! (for people and papers) and `report.html` (the same with SVG plots drawn here: no script,
//! no network). Plots: read and write throughput over time with the phases marked and the I/O
//! floor as a line, CPU use per kind of thread, memory.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::energy::Energy;
use crate::floor::Floor;
use crate::machine::{Machine, Software};
use crate::rules::{LinearModel, ScaleModel};
use crate::svg::{escape, Band, Chart, HLine, Series};
use crate::timeline::Timeline;
use crate::{BenchError, Result};

/// Background of each plot area, distinct so that a rendering can be checked plot by plot.
pub const PLOT_FILLS: [&str; 3] = ["#eef4fb", "#eefaf0", "#fbf3ea"];

/// Per-phase figures of one sort.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PhaseRow {
    /// `input`, `merge`, `output`.
    pub name: String,
    /// Wall seconds.
    pub elapsed_s: f64,
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One timed sort of a category.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Run {
    /// `calibration`, `confirm` or `measure`.
    pub purpose: String,
    /// Records sorted.
    pub records: u64,
    /// Bytes sorted.
    pub bytes: u64,
    /// Passes of the plan.
    pub passes: u32,
    /// Wall seconds of the sort (reading the input to the output durable and renamed).
    pub seconds: f64,
    /// What the model predicted before the run, if it was predicted.
    pub predicted_s: Option<f64>,
    /// Whether it met the category's budget (size searches only).
    pub within_budget: Option<bool>,
    /// The I/O floor of this size: the measured floor1 scaled to the bytes and passes.
    pub floor_s: Option<f64>,
    /// Per-phase figures.
    pub phases: Vec<PhaseRow>,
    /// Peak memory.
    pub peak_memory_bytes: u64,
    /// Whether valsort of the whole output matched the input's record count and checksum.
    pub valid: bool,
    /// The input's checksum (gensort -c).
    pub input_checksum: String,
    /// Energy, for JouleSort.
    pub energy: Option<Energy>,
    /// The engine's own statistics, as it reports them.
    pub stats: serde_json::Value,
}

/// One way of running the category (Indy, Daytona) and what it found.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Variant {
    /// `Indy` or `Daytona`.
    pub name: String,
    /// How the key is sorted (fast path, or the general typed-key path).
    pub key: String,
    /// Every timed run, in order.
    pub runs: Vec<Run>,
    /// The final model of sort time, for size searches.
    pub model: Option<LinearModel>,
    /// The size found (size searches) or measured.
    pub records: u64,
    /// Seconds of the run that established it.
    pub seconds: f64,
    /// The next size step and its predicted time (size searches): must exceed the budget or
    /// the disk.
    pub next_step: Option<(u64, f64)>,
    /// The category's metric for this variant.
    pub metric: Option<Metric>,
}

/// A category's figure of merit.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Metric {
    /// What it is (`records sorted in 60 s`, `records per joule`, ...).
    pub name: String,
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// `MEASURED`, `ESTIMATE` or `MODEL`.
    pub label: String,
}

/// A transcript of a tool's output.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Transcript {
    /// What ran (`gensort ...`, `valsort ...`).
    pub title: String,
    /// What it printed.
    pub text: String,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `minutesort`, `pennysort`, `joulesort`, `graysort`, `cloudsort`.
    pub category: String,
    /// One line saying what was run.
    pub title: String,
    /// When, UTC (RFC 3339).
    pub created_utc: String,
    /// The machine.
    pub machine: Machine,
    /// The software.
    pub software: Software,
    /// The command line of this report, then each command it amounts to.
    pub commands: Vec<String>,
    /// The category's rules as applied (budget, record format, caps).
    pub rules: Vec<String>,
    /// The I/O floor measured in the same session.
    pub floor: Option<Floor>,
    /// Indy, Daytona.
    pub variants: Vec<Variant>,
    /// The scale-out model (GraySort, CloudSort).
    pub scale: Option<ScaleModel>,
    /// Things a reader must know (caps, estimates, missing pieces).
    pub notes: Vec<String>,
    /// gensort and valsort transcripts.
    pub transcripts: Vec<Transcript>,
    /// The timeline of the run the plots show.
    pub timeline: Option<Timeline>,
    /// Which run the timeline is of.
    pub timeline_of: String,
}

/// Files a report directory holds.
#[derive(Clone, Debug)]
pub struct Written {
    /// `report.json`.
    pub json: PathBuf,
    /// `report.md`.
    pub md: PathBuf,
    /// `report.html`.
    pub html: PathBuf,
}

/// Per-interval values `(start, end, value)` as a step line: each value is the interval's
/// average, so it is drawn flat across the whole interval, and the line covers the time axis
/// from the first sample to the last.
fn steps(intervals: impl Iterator<Item = (f64, f64, f64)>) -> Vec<(f64, f64)> {
    intervals.flat_map(|(t0, t1, v)| [(t0, v), (t1, v)]).collect()
}

fn gb(b: u64) -> String {
    format!("{:.3} GB", b as f64 / 1e9)
}

impl Report {
    /// Writes `report.json`, `report.md`, `report.html` (and the timeline as `timeline.csv`)
    /// into `dir`, creating it.
    pub fn write(&self, dir: &Path) -> Result<Written> {
        fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
        let put = |name: &str, text: String| -> Result<PathBuf> {
            let p = dir.join(name);
            fs::write(&p, text).map_err(|e| BenchError::io(&p, e))?;
            Ok(p)
        };
        let json =
            serde_json::to_string_pretty(self).map_err(|e| BenchError::Invalid(e.to_string()))?;
        if let Some(tl) = &self.timeline {
            put("timeline.csv", tl.to_csv())?;
        }
        Ok(Written {
            json: put("report.json", json + "\n")?,
            md: put("report.md", self.to_markdown())?,
            html: put("report.html", self.to_html())?,
        })
    }

    /// The three plots, as SVG.
    pub fn plots(&self) -> Vec<String> {
        let Some(tl) = &self.timeline else { return Vec::new() };
        let bands: Vec<Band> = tl
            .phases()
            .iter()
            .map(|p| Band { label: p.phase.to_string(), x0: p.start_s, x1: p.end_s })
            .collect();
        let rates = tl.rates();
        let mut hlines = Vec::new();
        if let Some(f) = &self.floor {
            hlines.push(HLine {
                label: format!("read floor {:.0} MB/s", f.read_mb_s()),
                y: f.read_mb_s(),
                color: "#1f77b4".into(),
            });
            hlines.push(HLine {
                label: format!("write floor {:.0} MB/s", f.write_mb_s()),
                y: f.write_mb_s(),
                color: "#d62728".into(),
            });
        }
        let io = Chart {
            title: format!("Read and write throughput ({})", self.timeline_of),
            x_label: "seconds".into(),
            y_label: "MB/s".into(),
            plot_fill: PLOT_FILLS[0].into(),
            series: vec![
                Series {
                    name: "read".into(),
                    color: "#1f77b4".into(),
                    points: steps(rates.iter().map(|r| (r.0, r.1, r.2))),
                },
                Series {
                    name: "write".into(),
                    color: "#d62728".into(),
                    points: steps(rates.iter().map(|r| (r.0, r.1, r.3))),
                },
            ],
            bands: bands.clone(),
            hlines,
        };
        const COLORS: [&str; 8] = [
            "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
        ];
        let cpu = tl.cpu();
        let mut series = vec![Series {
            name: "all threads".into(),
            // Saturated, unlike the grey of axes, grid and text, and unlike every kind's colour.
            color: "#0b3d91".into(),
            points: steps(cpu.iter().map(|c| (c.0, c.1, c.3))),
        }];
        for (k, name) in tl.kinds.iter().enumerate() {
            let pts = steps(cpu.iter().map(|c| (c.0, c.1, c.2[k])));
            if pts.iter().any(|p| p.1 > 0.0) && name != "timeline" {
                series.push(Series {
                    name: name.clone(),
                    color: COLORS[(series.len() - 1) % COLORS.len()].into(),
                    points: pts,
                });
            }
        }
        let cores = self.machine.cores as f64;
        let cpu = Chart {
            title: "CPU use by kind of thread".into(),
            x_label: "seconds".into(),
            y_label: "cores busy".into(),
            plot_fill: PLOT_FILLS[1].into(),
            series,
            bands: bands.clone(),
            hlines: vec![HLine {
                label: format!("{cores} cores"),
                y: cores,
                color: "#999999".into(),
            }],
        };
        let mem = Chart {
            title: "Memory (resident + hugetlb pool pages)".into(),
            x_label: "seconds".into(),
            y_label: "MiB".into(),
            plot_fill: PLOT_FILLS[2].into(),
            series: vec![Series {
                name: "memory".into(),
                color: "#9467bd".into(),
                points: tl
                    .samples
                    .iter()
                    .map(|s| (s.t_s, s.memory_bytes as f64 / (1 << 20) as f64))
                    .collect(),
            }],
            bands,
            hlines: Vec::new(),
        };
        vec![io.to_svg(), cpu.to_svg(), mem.to_svg()]
    }

    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# {}\n", self.title);
        let _ = writeln!(
            s,
            "Created {} UTC by oxsort {} ({}).\n",
            self.created_utc, self.software.version, self.software.commit
        );
        s.push_str(&self.body_markdown());
        s
    }

    fn body_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "## Result\n");
        for v in &self.variants {
            if let Some(m) = &v.metric {
                let _ = writeln!(
                    s,
                    "- **{}**: {} = **{}** {} ({})",
                    v.name,
                    m.name,
                    fmt_num(m.value),
                    m.unit,
                    m.label
                );
            }
        }
        if let Some(m) = &self.scale {
            let _ = writeln!(
                s,
                "- {} nodes: 100 TB in {:.0} s, {:.3} TB/min{} ({})",
                m.nodes,
                m.seconds,
                m.tb_per_min,
                m.cost_usd.map(|c| format!(", ${c:.2}")).unwrap_or_default(),
                m.assumptions
            );
        }
        let _ = writeln!(s, "\n## Rules applied\n");
        for r in &self.rules {
            let _ = writeln!(s, "- {r}");
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "\n## Notes\n");
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        let m = &self.machine;
        let _ = writeln!(s, "\n## Machine\n");
        let _ = writeln!(s, "- CPU: {} ({} cores)", m.cpu_model, m.cores);
        let _ = writeln!(
            s,
            "- Memory: {:.1} GiB; hugetlb pool {:.1} GiB",
            m.memory_bytes as f64 / (1u64 << 30) as f64,
            m.hugetlb_pool_bytes as f64 / (1u64 << 30) as f64
        );
        let _ = writeln!(s, "- Kernel: {} ({})", m.kernel, m.os);
        for d in &m.disks {
            let _ = writeln!(
                s,
                "- Disk {}: {}, {}, scheduler {}{}",
                d.name,
                gb(d.size_bytes),
                d.medium(),
                d.scheduler,
                if d.model.is_empty() { String::new() } else { format!(", {}", d.model) }
            );
        }
        for f in &m.file_systems {
            let _ = writeln!(
                s,
                "- {}: {} on {} ({}, {}), {} free",
                f.dir.display(),
                f.fs_type,
                f.device,
                f.mount,
                f.options,
                gb(f.free_bytes)
            );
        }
        let _ = writeln!(
            s,
            "- Page cache dropped before each timed run: {}",
            if m.cache_dropped { "yes" } else { "no (not root)" }
        );
        let _ = writeln!(s, "\n## Software\n");
        let _ = writeln!(s, "- oxsort {} commit {}", self.software.version, self.software.commit);
        let _ = writeln!(s, "- Build: {}", self.software.build);
        let _ = writeln!(s, "\n## Commands\n\n```sh");
        for c in &self.commands {
            let _ = writeln!(s, "{c}");
        }
        let _ = writeln!(s, "```");
        if let Some(f) = &self.floor {
            let _ = writeln!(s, "\n## I/O floor\n");
            let _ = writeln!(
                s,
                "{}: read {:.3} s ({:.0} MB/s), write {:.3} s ({:.0} MB/s), both at once {:.3} s; \
                 floor1 {:.3} s, floor2 {:.3} s for {}.",
                f.method,
                f.read_s,
                f.read_mb_s(),
                f.write_s,
                f.write_mb_s(),
                f.mixed_s,
                f.floor1_s,
                f.floor2_s,
                gb(f.bytes)
            );
        }
        for v in &self.variants {
            let _ = writeln!(s, "\n## {}: {}\n", v.name, v.key);
            if let Some(m) = &v.model {
                let _ = writeln!(
                    s,
                    "Model: t = {:.3} s + {:.3} ns/byte x bytes x passes.",
                    m.intercept_s,
                    m.slope_s_per_byte * 1e9
                );
            }
            if let Some((n, t)) = v.next_step {
                let _ = writeln!(s, "Next step: {n} records, predicted {t:.2} s.");
            }
            let _ = writeln!(s, "\n| run | records | GB | passes | predicted s | s | floor s | x floor | within | valsort | energy |");
            let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|");
            for r in &v.runs {
                let _ = writeln!(
                    s,
                    "| {} | {} | {:.3} | {} | {} | {:.3} | {} | {} | {} | {} | {} |",
                    r.purpose,
                    r.records,
                    r.bytes as f64 / 1e9,
                    r.passes,
                    r.predicted_s.map(|p| format!("{p:.3}")).unwrap_or_default(),
                    r.seconds,
                    r.floor_s.map(|p| format!("{p:.3}")).unwrap_or_default(),
                    r.floor_s
                        .filter(|f| *f > 0.0)
                        .map(|f| format!("{:.2}", r.seconds / f))
                        .unwrap_or_default(),
                    r.within_budget.map(|b| if b { "yes" } else { "no" }).unwrap_or(""),
                    if r.valid { "SUCCESS" } else { "FAILED" },
                    r.energy
                        .as_ref()
                        .map(|e| format!("{:.1} J {}", e.joules, e.label))
                        .unwrap_or_default()
                );
            }
            for r in &v.runs {
                if let Some(m) = r.energy.as_ref().and_then(|e| e.model.as_ref()) {
                    let _ = writeln!(
                        s,
                        "\nEnergy of the {} run of {} records: {m}.",
                        r.purpose, r.records
                    );
                }
            }
            // The run that set the result (the last one when none matches).
            let shown = v
                .runs
                .iter()
                .rev()
                .find(|r| r.records == v.records && r.within_budget != Some(false))
                .or(v.runs.last());
            if let Some(r) = shown {
                let _ =
                    writeln!(s, "\nPhases of the {} run of {} records:\n", r.purpose, r.records);
                let _ = writeln!(s, "| phase | elapsed s | user s | sys s | read | written |");
                let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|");
                for p in &r.phases {
                    let _ = writeln!(
                        s,
                        "| {} | {:.3} | {:.3} | {:.3} | {} | {} |",
                        p.name,
                        p.elapsed_s,
                        p.user_s,
                        p.sys_s,
                        gb(p.read_bytes),
                        gb(p.write_bytes)
                    );
                }
            }
        }
        if !self.transcripts.is_empty() {
            let _ = writeln!(s, "\n## Transcripts\n");
            for t in &self.transcripts {
                let _ = writeln!(s, "`{}`\n\n```\n{}```\n", t.title, t.text);
            }
        }
        s
    }

    /// The report as HTML (well-formed XHTML, so any XML parser reads it too), the plots inline.
    pub fn to_html(&self) -> String {
        let mut s = String::new();
        s.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
        let _ = writeln!(s, "<title>{}</title>", escape(&self.title));
        s.push_str(
            "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;color:#222}\
             table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
             td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:.5em;overflow-x:auto}\
             .label{font-weight:bold;color:#a40}figure{margin:1em 0}@media print{figure{break-inside:avoid}}</style>\n</head>\n<body>\n",
        );
        let _ = writeln!(s, "<h1>{}</h1>", escape(&self.title));
        let _ = writeln!(
            s,
            "<p>Created {} UTC by oxsort {} ({}).</p>",
            escape(&self.created_utc),
            escape(&self.software.version),
            escape(&self.software.commit)
        );
        let plots = self.plots();
        if !plots.is_empty() {
            s.push_str("<h2>Plots</h2>\n");
            for p in plots {
                let _ = writeln!(s, "<figure>{p}</figure>");
            }
        }
        s.push_str(&markdown_to_html(&self.body_markdown()));
        s.push_str("</body>\n</html>\n");
        s
    }
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The small Markdown subset `body_markdown` writes (headings, lists, tables, code blocks,
/// `**bold**`, `` `code` ``) turned into escaped HTML.
fn markdown_to_html(md: &str) -> String {
    let mut out = String::new();
    let mut lines = md.lines().peekable();
    let inline = |t: &str| {
        let mut o = String::new();
        let mut bold = false;
        let mut code = false;
        let mut rest = t;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix("**") {
                o.push_str(if bold { "</strong>" } else { "<strong>" });
                bold = !bold;
                rest = r;
            } else if let Some(r) = rest.strip_prefix('`') {
                o.push_str(if code { "</code>" } else { "<code>" });
                code = !code;
                rest = r;
            } else {
                let c = rest.chars().next().unwrap_or(' ');
                o.push_str(&escape(&c.to_string()));
                rest = &rest[c.len_utf8()..];
            }
        }
        if code {
            o.push_str("</code>");
        }
        if bold {
            o.push_str("</strong>");
        }
        o.replace("ESTIMATE", "<span class=\"label\">ESTIMATE</span>")
            .replace("MODEL", "<span class=\"label\">MODEL</span>")
    };
    while let Some(line) = lines.next() {
        if let Some(h) = line.strip_prefix("## ") {
            let _ = writeln!(out, "<h2>{}</h2>", inline(h));
        } else if line.starts_with("```") {
            out.push_str("<pre>");
            for l in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                let _ = writeln!(out, "{}", escape(l));
            }
            out.push_str("</pre>\n");
        } else if line.starts_with("- ") {
            out.push_str("<ul>\n");
            let mut l = line;
            loop {
                let _ = writeln!(out, "<li>{}</li>", inline(&l[2..]));
                match lines.peek() {
                    Some(n) if n.starts_with("- ") => l = lines.next().unwrap_or_default(),
                    _ => break,
                }
            }
            out.push_str("</ul>\n");
        } else if line.starts_with('|') {
            out.push_str("<table>\n");
            let cells = |l: &str| -> Vec<String> {
                l.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
            };
            let _ = writeln!(
                out,
                "<tr>{}</tr>",
                cells(line).iter().map(|c| format!("<th>{}</th>", inline(c))).collect::<String>()
            );
            while let Some(n) = lines.peek() {
                if !n.starts_with('|') {
                    break;
                }
                let n = lines.next().unwrap_or_default();
                if n.starts_with("|---") {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "<tr>{}</tr>",
                    cells(n).iter().map(|c| format!("<td>{}</td>", inline(c))).collect::<String>()
                );
            }
            out.push_str("</table>\n");
        } else if !line.trim().is_empty() {
            let _ = writeln!(out, "<p>{}</p>", inline(line));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Sample;

    fn report() -> Report {
        let samples = (0..30)
            .map(|i| Sample {
                t_s: i as f64 * 0.1,
                phase: if i < 15 { "input" } else { "output" },
                read_bytes: if i < 15 { i * 50_000_000 } else { 750_000_000 },
                write_bytes: if i < 15 { 0 } else { (i - 15) * 50_000_000 },
                memory_bytes: 100 << 20,
                user_s: 0.1,
                sys_s: 0.05,
                per_kind: vec![(0.1, 0.0), (0.0, 0.05)],
            })
            .collect();
        Report {
            category: "minutesort".into(),
            title: "MinuteSort <test> & co".into(),
            created_utc: "2026-11-23T12:00:00Z".into(),
            machine: Machine::probe(&[], false),
            software: Software {
                version: "0.1.0".into(),
                commit: "abc".into(),
                build: "release".into(),
            },
            commands: vec!["oxsort bench minutesort --seconds 3".into()],
            rules: vec!["budget 3 s".into()],
            floor: Some(Floor {
                bytes: 1,
                read_s: 1.0,
                write_s: 1.0,
                mixed_s: 1.5,
                floor1_s: 2.0,
                floor2_s: 3.0,
                direct: true,
                method: "m".into(),
            }),
            variants: vec![Variant {
                name: "Indy".into(),
                key: "fast".into(),
                runs: vec![Run {
                    purpose: "confirm".into(),
                    records: 10,
                    valid: true,
                    phases: vec![PhaseRow::default()],
                    ..Run::default()
                }],
                metric: Some(Metric {
                    name: "records in 3 s".into(),
                    value: 10.0,
                    unit: "records".into(),
                    label: "ESTIMATE".into(),
                }),
                ..Variant::default()
            }],
            scale: None,
            notes: vec!["a note with <markup>".into()],
            transcripts: vec![Transcript {
                title: "valsort out".into(),
                text: "Records: 10\nSUCCESS\n".into(),
            }],
            timeline: Some(Timeline {
                interval_s: 0.1,
                kinds: vec!["sort".into(), "io".into()],
                samples,
            }),
            timeline_of: "Indy".into(),
        }
    }

    #[test]
    fn html_is_well_formed_with_three_plots() {
        let html = report().to_html();
        let body = html.strip_prefix("<!DOCTYPE html>\n").unwrap();
        let doc = roxmltree::Document::parse(body).expect("well-formed");
        let svgs: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("svg")).collect();
        assert_eq!(svgs.len(), 3);
        for svg in &svgs {
            let lines =
                svg.descendants().filter(|n| n.attribute("class") == Some("series")).count();
            assert!(lines >= 1);
        }
        // The floor is drawn on the throughput plot, phases are labelled.
        assert_eq!(
            svgs[0].descendants().filter(|n| n.attribute("class") == Some("ref")).count(),
            2
        );
        let texts: Vec<&str> = svgs[0].descendants().filter_map(|n| n.text()).collect();
        assert!(texts.contains(&"input") && texts.contains(&"output"));
        // Escaped text survives, and the estimate label is marked.
        assert!(doc.descendants().any(|n| n.text() == Some("MinuteSort <test> & co")));
        assert!(html.contains("<span class=\"label\">ESTIMATE</span>"));
        assert!(!html.contains("<script"));
    }

    #[test]
    fn writes_all_files() {
        let dir = tempfile::tempdir().unwrap();
        let w = report().write(&dir.path().join("r")).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&w.json).unwrap()).unwrap();
        assert_eq!(v["category"], "minutesort");
        assert_eq!(v["variants"][0]["metric"]["label"], "ESTIMATE");
        assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
        let md = fs::read_to_string(&w.md).unwrap();
        assert!(md.contains("| confirm | 10 |"), "{md}");
        assert!(dir.path().join("r/timeline.csv").exists());
    }
}
