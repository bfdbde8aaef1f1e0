//! How a report looks: plots that take the page's width, and disks named for what the machine
//! can know of them.

use oxsort_bench::machine::{Disk, Machine};
use oxsort_bench::svg::{Chart, Series};

#[test]
fn plots_scale_to_the_width_of_the_page() {
    let chart = Chart {
        title: "t".into(),
        series: vec![Series {
            name: "read".into(),
            color: "#1f77b4".into(),
            points: vec![(0.0, 1.0), (1.0, 2.0)],
        }],
        ..Chart::default()
    };
    let svg = chart.to_svg();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    // As wide as what holds it, its height from the drawing's proportions: not a fixed
    // pixel size that leaves part of the page empty.
    assert_eq!(root.attribute("width"), Some("100%"), "{svg:.200}");
    assert_eq!(root.attribute("height"), None, "{svg:.200}");
    let vb: Vec<f64> = root
        .attribute("viewBox")
        .expect("a viewBox to scale")
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(vb.len(), 4);
    assert!(vb[2] > vb[3], "wider than tall: {vb:?}");
}

#[test]
fn a_virtio_disk_is_not_called_rotational() {
    let disk = |virtio, rotational| Disk {
        name: "vda".into(),
        size_bytes: 1 << 30,
        rotational,
        virtio,
        model: String::new(),
        scheduler: "none".into(),
    };
    // The kernel reports a virtio disk as rotational by default.
    assert!(disk(true, true).medium().starts_with("virtual"));
    assert!(!disk(true, true).medium().contains("rotational"));
    assert_eq!(disk(false, true).medium(), "rotational");
    assert_eq!(disk(false, false).medium(), "non-rotational");
    // This machine's disks, as probed.
    let m = Machine::probe(&[std::env::temp_dir()], true);
    for d in &m.disks {
        let driver = std::fs::read_link(format!("/sys/block/{}/device/driver", d.name));
        let virtio = driver.is_ok_and(|p| p.to_string_lossy().ends_with("virtio_blk"));
        assert_eq!(d.virtio, virtio, "{}", d.name);
    }
}
