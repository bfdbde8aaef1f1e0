//! `oxsort bench CATEGORY` at small sizes: the category's rules (the size found really sorted
//! within the budget; the next step would not have, by the prediction), the report's fields,
//! well-formed HTML with its SVG plots, clear errors before any data is generated, nothing left
//! behind. And the HTML report rendered in headless Chromium, its plots checked pixel by pixel.

mod common;

use std::path::{Path, PathBuf};

use common::{oxsort, run, stderr};
use serde_json::Value;

/// A fresh directory under the target's temp dir (on disk, not tmpfs, so direct I/O works).
fn workdir(name: &str) -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tempfile::Builder::new().prefix(name).tempdir_in(base).unwrap()
}

/// Runs a category with its data in `dir/data` and its report in `dir/report`; returns the
/// parsed `report.json` and the report directory.
fn bench(dir: &Path, args: &[&str]) -> (Value, PathBuf) {
    // One category at a time: they time sorts against a budget, and two at once would share
    // the cores and each other's disk.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let report = dir.join("report");
    let o =
        run(oxsort().arg("bench").args(args).arg("--dir").arg(&data).arg("--report").arg(&report));
    assert!(o.status.success(), "oxsort bench {args:?} failed:\n{}", stderr(&o));
    // Generated data is removed (no --keep).
    let left: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    assert!(left.is_empty(), "data left behind: {left:?}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    (json, report)
}

/// The step between sizes: two significant digits, at least 1000 records.
fn step(n: u64) -> u64 {
    let digits = n.to_string().len() as u32;
    10u64.pow(digits.saturating_sub(2)).max(1000)
}

/// Fields every report has, checked against this machine.
fn check_common(r: &Value, category: &str) {
    assert_eq!(r["category"], category);
    let m = &r["machine"];
    assert!(!m["cpu_model"].as_str().unwrap().is_empty());
    assert_eq!(
        m["cores"].as_u64().unwrap() as usize,
        std::thread::available_parallelism().unwrap().get()
    );
    assert!(m["memory_bytes"].as_u64().unwrap() > 100 << 20);
    assert_eq!(
        m["kernel"].as_str().unwrap(),
        std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap().trim()
    );
    assert!(!m["file_systems"].as_array().unwrap().is_empty());
    let sw = &r["software"];
    assert_eq!(sw["version"], env!("CARGO_PKG_VERSION"));
    assert!(!sw["commit"].as_str().unwrap().is_empty());
    assert!(sw["build"].as_str().unwrap().contains("profile"));
    let cmds = r["commands"].as_array().unwrap();
    assert!(cmds[0].as_str().unwrap().starts_with(&format!("oxsort bench {category}")));
    assert!(cmds.iter().any(|c| c.as_str().unwrap().starts_with("oxsort sort ")));
    let f = &r["floor"];
    let (rd, wr, f1) = (
        f["read_s"].as_f64().unwrap(),
        f["write_s"].as_f64().unwrap(),
        f["floor1_s"].as_f64().unwrap(),
    );
    assert!(rd > 0.0 && wr > 0.0 && (f1 - rd - wr).abs() < 1e-9);
    // Every sort was validated by valsort, with a transcript.
    let transcripts = r["transcripts"].as_array().unwrap();
    let valsorts: Vec<_> = transcripts
        .iter()
        .filter(|t| t["title"].as_str().unwrap().starts_with("valsort"))
        .collect();
    let runs: usize =
        r["variants"].as_array().unwrap().iter().map(|v| v["runs"].as_array().unwrap().len()).sum();
    assert_eq!(valsorts.len(), runs);
    for t in valsorts {
        let text = t["text"].as_str().unwrap();
        assert!(
            text.contains("SUCCESS - all records are in order") && text.contains("(matches)"),
            "{text}"
        );
    }
    for v in r["variants"].as_array().unwrap() {
        for run in v["runs"].as_array().unwrap() {
            assert_eq!(run["valid"], true);
            assert_eq!(run["bytes"].as_u64().unwrap(), run["records"].as_u64().unwrap() * 100);
            assert_eq!(run["stats"]["records"], run["records"]);
            assert_eq!(
                run["stats"]["checksum"].as_str().unwrap(),
                run["input_checksum"].as_str().unwrap()
            );
            assert!(!run["phases"].as_array().unwrap().is_empty());
        }
    }
    let tl = &r["timeline"];
    assert!(tl["samples"].as_array().unwrap().len() >= 2);
}

/// The HTML parses as XML, with the three plots, each drawing at least one line.
fn check_html(report: &Path) {
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    let body = html.strip_prefix("<!DOCTYPE html>\n").expect("doctype");
    let doc = roxmltree::Document::parse(body).expect("report.html is well-formed");
    let svgs: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("svg")).collect();
    assert_eq!(svgs.len(), 3, "three plots");
    for svg in svgs {
        let series: Vec<_> =
            svg.descendants().filter(|n| n.attribute("class") == Some("series")).collect();
        assert!(!series.is_empty());
        assert!(
            series.iter().any(|p| p.attribute("d").unwrap().contains('L')),
            "a line, not a dot"
        );
    }
    // Nothing runs and nothing is fetched.
    assert!(!html.contains("<script") && !html.contains(" src=") && !html.contains(" href="));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("## Machine") && md.contains("## Commands") && md.contains("## Transcripts")
    );
    let csv = std::fs::read_to_string(report.join("timeline.csv")).unwrap();
    assert!(csv.starts_with("t_s,phase,read_bytes,write_bytes"));
}

/// A size search's rules, for every variant.
fn check_search(r: &Value, budget: f64) {
    for v in r["variants"].as_array().unwrap() {
        let found = v["records"].as_u64().unwrap();
        assert!(found > 0);
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs[0]["purpose"], "calibration");
        // The size found really sorted within the budget, and was the largest that did.
        let ok: Vec<&Value> = runs.iter().filter(|x| x["within_budget"] == true).collect();
        let best = ok.iter().map(|x| x["records"].as_u64().unwrap()).max().unwrap();
        assert_eq!(found, best);
        let run = ok.iter().find(|x| x["records"].as_u64().unwrap() == found).unwrap();
        assert!(run["seconds"].as_f64().unwrap() <= budget);
        assert_eq!(v["seconds"].as_f64().unwrap(), run["seconds"].as_f64().unwrap());
        // Every confirming run's verdict matches its time.
        for x in runs.iter().filter(|x| x["purpose"] == "confirm") {
            assert_eq!(x["within_budget"] == true, x["seconds"].as_f64().unwrap() <= budget);
        }
        // The next step would not have sorted within the budget, by the final model (or it
        // was measured not to, or the disk caps it and the report says so).
        let next = &v["next_step"];
        assert_eq!(next[0].as_u64().unwrap(), found + step(found));
        let m = &v["model"];
        let passes = run["passes"].as_u64().unwrap() as f64;
        let predicted = m["intercept_s"].as_f64().unwrap()
            + m["slope_s_per_byte"].as_f64().unwrap()
                * (found + step(found)) as f64
                * 100.0
                * passes;
        assert!(
            predicted <= next[1].as_f64().unwrap() + 1e-9,
            "the plan cannot take fewer passes for more data"
        );
        let notes: Vec<&str> =
            r["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        let capped = notes.iter().any(|n| n.contains("capped"));
        // On a machine so busy that sort times swing by a factor of two, the search may run
        // out of confirming runs or time first; then the report must say so.
        let name = v["name"].as_str().unwrap();
        let stopped = notes.iter().any(|n| n.starts_with(&format!("{name}: the search stopped")));
        if notes.iter().any(|n| n.starts_with(&format!("{name}: the search stopped after 12"))) {
            let confirms = runs.iter().filter(|x| x["purpose"] == "confirm").count();
            assert_eq!(confirms, 12);
        }
        if stopped {
            eprintln!("note: the {name} search stopped before settling (a busy machine)");
        }
        // No model with a negative fixed cost.
        assert!(m["intercept_s"].as_f64().unwrap() >= 0.0, "{m}");
        assert!(
            next[1].as_f64().unwrap() > budget || capped || stopped,
            "next step {next} fits {budget} s: {v}"
        );
    }
}

#[test]
fn minutesort_finds_the_largest_size_within_the_budget() {
    let dir = workdir("minutesort");
    let t = std::time::Instant::now();
    let (r, report) = bench(dir.path(), &["minutesort", "--seconds", "3"]);
    let took = t.elapsed().as_secs_f64();
    // A bounded multiple of the budget: the search's limit (12 budgets), one sort stopped at
    // two budgets past it, and the report.
    assert!(took < 3.0 * 12.0 + 3.0 * 2.0 + 10.0, "minutesort --seconds 3 took {took:.1} s");
    // The disk's floor is measured on as many bytes as the size found, at least: a floor from
    // a small calibration reads slower than the sort it is drawn under.
    let floor_bytes = r["floor"]["bytes"].as_u64().unwrap();
    let found_bytes = r["variants"][0]["records"].as_u64().unwrap() * 100;
    assert!(floor_bytes >= found_bytes, "floor on {floor_bytes} bytes, Indy sorted {found_bytes}");
    check_common(&r, "minutesort");
    check_html(&report);
    check_search(&r, 3.0);
    let names: Vec<_> =
        r["variants"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Indy", "Daytona"]);
    let daytona = &r["variants"][1];
    assert!(daytona["key"].as_str().unwrap().contains("1,10,CH,A"));
    let cmds = r["commands"].as_array().unwrap();
    assert!(cmds.iter().any(|c| c.as_str().unwrap().ends_with("--fields 1,10,CH,A")));
    // MinuteSort uses binary records.
    assert!(r["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| !t["title"].as_str().unwrap().contains("gensort -a")));
    assert_eq!(r["variants"][0]["metric"]["label"], "MEASURED");
}

#[test]
fn pennysort_budget_from_the_price_and_ascii_records() {
    let dir = workdir("pennysort");
    // A penny of a $270,000 machine buys 94,608,000 x 0.01 / 270,000 = 3.504 s.
    let (r, report) = bench(dir.path(), &["pennysort", "--price", "270000", "--indy-only"]);
    check_common(&r, "pennysort");
    check_html(&report);
    let budget = 94_608_000.0 * 0.01 / 270_000.0;
    check_search(&r, budget);
    assert!(r["rules"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains("3.504 s")));
    let gens: Vec<_> = r["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.as_str().unwrap().starts_with("gensort"))
        .collect();
    assert!(
        !gens.is_empty() && gens.iter().all(|c| c.as_str().unwrap().starts_with("gensort -a "))
    );
}

#[test]
fn free_space_or_max_size_caps_the_search_and_the_report_says_so() {
    let dir = workdir("capped");
    let (r, _) = bench(
        dir.path(),
        &["minutesort", "--seconds", "3", "--max-size", "20000000", "--indy-only"],
    );
    let v = &r["variants"][0];
    assert_eq!(v["records"].as_u64().unwrap(), 200_000);
    let notes: Vec<_> =
        r["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.contains("capped by --max-size 20000000")), "{notes:?}");
    for run in v["runs"].as_array().unwrap() {
        assert!(run["records"].as_u64().unwrap() <= 200_000);
    }
}

#[test]
fn joulesort_estimate_is_labelled_with_its_model() {
    let dir = workdir("joulesort");
    let (r, report) = bench(dir.path(), &["joulesort", "--records", "300000"]);
    check_common(&r, "joulesort");
    check_html(&report);
    for v in r["variants"].as_array().unwrap() {
        let m = &v["metric"];
        let run = &v["runs"][0];
        let e = &run["energy"];
        // This machine has no RAPL and no meter was given.
        if std::path::Path::new("/sys/class/powercap").exists() {
            continue;
        }
        assert_eq!(m["label"], "ESTIMATE");
        assert_eq!(e["label"], "ESTIMATE");
        assert_eq!(e["source"], "estimate");
        assert!(e["model"].as_str().unwrap().contains("25 W x wall s + 10 J/CPU-s"));
        let j = e["joules"].as_f64().unwrap();
        // At least the static power over the sort's wall time.
        assert!(j >= 25.0 * run["seconds"].as_f64().unwrap());
        assert!(
            (m["value"].as_f64().unwrap() - 300_000.0 / j).abs()
                < 1e-6 * m["value"].as_f64().unwrap()
        );
    }
    let notes = r["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().starts_with("ESTIMATE: E = 25 W")));
    assert!(r["rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x.as_str().unwrap().contains("not one of the classes")));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(md.contains("(ESTIMATE)"));
}

#[test]
fn joulesort_with_a_meter_command() {
    let dir = workdir("joulemeter");
    // A "meter" whose joules are the seconds of the clock: the energy must come out as the
    // time between its two readings, which brackets the sort.
    let (r, _) = bench(
        dir.path(),
        &["joulesort", "--records", "200000", "--indy-only", "--meter", "date +%s.%N"],
    );
    let run = &r["variants"][0]["runs"][0];
    assert_eq!(run["energy"]["source"], "meter");
    let j = run["energy"]["joules"].as_f64().unwrap();
    let s = run["seconds"].as_f64().unwrap();
    assert!(j >= s && j < s + 2.0, "meter {j} J vs sort {s} s");
    assert!(r["variants"][0]["metric"]["label"].as_str().unwrap().starts_with("MEASURED"));
}

#[test]
fn graysort_and_cloudsort_are_labelled_models() {
    let dir = workdir("gray");
    let (r, report) = bench(dir.path(), &["graysort", "--records", "300000", "--nodes", "50"]);
    check_common(&r, "graysort");
    check_html(&report);
    let run = &r["variants"][0]["runs"][0];
    assert_eq!(run["passes"], 2, "100 TB takes two passes, so the node's rate is a two-pass rate");
    let rate = run["bytes"].as_f64().unwrap() / run["seconds"].as_f64().unwrap();
    let m = &r["variants"][0]["metric"];
    assert_eq!(m["label"], "MODEL");
    let tb_min = 50.0 * rate * 60.0 / 1e12;
    assert!((m["value"].as_f64().unwrap() - tb_min).abs() < 1e-9 * tb_min.max(1.0));
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("Ray scale-out does not exist")));

    let dir = workdir("cloud");
    let (r, _) = bench(
        dir.path(),
        &["cloudsort", "--records", "300000", "--nodes", "20", "--node-price", "2.5"],
    );
    let run = &r["variants"][0]["runs"][0];
    let rate = run["bytes"].as_f64().unwrap() / run["seconds"].as_f64().unwrap();
    let cost = 2.5 * 20.0 * (1e14 / (20.0 * rate)) / 3600.0;
    let m = &r["variants"][0]["metric"];
    assert_eq!((m["label"].as_str().unwrap(), m["unit"].as_str().unwrap()), ("MODEL", "USD"));
    assert!((m["value"].as_f64().unwrap() - cost).abs() < 1e-6 * cost);
}

#[test]
fn bad_arguments_fail_before_any_data() {
    let dir = workdir("bad");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["pennysort", "--price", "0"], "--price 0"),
        (&["pennysort", "--price", "-3"], "--price -3"),
        (&["minutesort", "--seconds", "1"], "--seconds 1"),
        (
            &["joulesort", "--records", "1000", "--meter", "exit 7"],
            "--meter command `exit 7`: failed",
        ),
        (&["joulesort", "--records", "1000", "--meter", "echo no joules"], "printed no number"),
        (&["cloudsort", "--node-price", "-1"], "--node-price -1"),
        (&["minutesort", "--seconds", "3", "--max-size", "1000"], "--max-size 1000: not enough"),
    ];
    for (args, msg) in cases {
        let report = dir.path().join("report");
        let o = run(oxsort()
            .arg("bench")
            .args(*args)
            .arg("--dir")
            .arg(&data)
            .arg("--report")
            .arg(&report));
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(msg), "{args:?}: {e}");
        assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0, "{args:?} generated data");
        assert!(!report.exists(), "{args:?} created a report");
    }
}

/// Pixels of `png` as RGB rows.
fn decode(png_path: &Path) -> (usize, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb: Vec<u8> = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| if channels >= 3 { [p[0], p[1], p[2]] } else { [p[0], p[0], p[0]] })
        .collect();
    (info.width as usize, info.height as usize, rgb)
}

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

#[test]
fn html_report_renders_in_chromium_with_its_plots() {
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"].iter().find(|b| {
        std::process::Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success())
    }) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium must be installed in CI (.ci/run installs the Debian package)"
        );
        eprintln!("SKIPPED: no chromium on this machine (apt-get install chromium); the render test needs it");
        return;
    };
    let dir = workdir("render");
    let (_, report) = bench(dir.path(), &["joulesort", "--records", "1000000", "--indy-only"]);
    let shot = dir.path().join("shot.png");
    // Under `timeout`, so a browser that hangs fails the test instead of stalling CI.
    let o = run(std::process::Command::new("timeout").arg("120").arg(chromium).args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--window-size=1000,1400",
        &format!("--screenshot={}", shot.display()),
        &format!("file://{}", report.join("report.html").canonicalize().unwrap().display()),
    ]));
    assert!(shot.exists(), "no screenshot: {}", stderr(&o));
    let (w, h, px) = decode(&shot);
    let at = |x: usize, y: usize| -> [u8; 3] {
        let i = (y * w + x) * 3;
        [px[i], px[i + 1], px[i + 2]]
    };
    let near = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 3);
    // Each plot's area has its own background colour: find it, then look inside it for a
    // drawn series. Series are solid lines that run along the whole time axis; reference lines
    // are dashed (6 px on, 4 off) and text, grid and axes are grey. So the longest run of
    // adjacent columns holding a saturated pixel is a series if it spans nearly the whole plot
    // (a series is drawn in steps from the first sample to the last), whatever the data (a
    // flat line counts: short sorts on a loaded machine draw flat ones).
    // A series at zero lies on the bottom edge, over the axis and partly below the fill, so
    // the search reaches a few rows past the fill (the axis is grey; the legend sits 10 rows
    // above the plot).
    const EDGE: usize = 3;
    for fill in oxsort_bench::report::PLOT_FILLS {
        let fill = hex(fill);
        let (mut x0, mut y0, mut x1, mut y1) = (w, h, 0, 0);
        for y in 0..h {
            for x in 0..w {
                if near(at(x, y), fill) {
                    (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
                }
            }
        }
        assert!(x1 > x0 + 300 && y1 > y0 + 100, "plot area of {fill:?} not found on the page");
        let saturated = |p: [u8; 3]| p.iter().max().unwrap() - p.iter().min().unwrap() > 60;
        let (mut run, mut longest) = (0, 0);
        for x in x0..=x1 {
            let rows = y0.saturating_sub(EDGE)..=(y1 + EDGE).min(h - 1);
            run = if rows.into_iter().any(|y| saturated(at(x, y))) { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        let width = x1 - x0;
        assert!(
            longest * 10 >= width * 9,
            "plot with background {fill:?} looks blank: the longest drawn line spans {longest} of {width} columns"
        );
    }
}

#[test]
fn a_missing_data_directory_is_created() {
    let dir = workdir("newdata");
    let data = dir.path().join("data").join("new");
    let report = dir.path().join("report");
    let o = run(oxsort()
        .args(["bench", "joulesort", "--records", "1000", "--indy-only", "--dir"])
        .arg(&data)
        .arg("--report")
        .arg(&report));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(report.join("report.json").exists());
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0, "data left behind");
}
