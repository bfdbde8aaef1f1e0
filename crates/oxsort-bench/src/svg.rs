//! Line charts as standalone SVG: no script, no fonts to fetch, readable in any browser and
//! printable. Phases are drawn as labelled bands behind the lines, reference values (the I/O
//! floor) as dashed horizontal lines.
//!
//! ```text
//!   title                                   ■ read  ■ write  - - floor
//!   y ┤ input        │ output
//!     ┤   ╱‾‾‾‾╲     │  ╱‾‾‾╲
//!     ┤- -╱- - -╲- - │-╱- - -╲- -          (floor)
//!     ┼──────────────┴──────────── x
//! ```

use std::fmt::Write as _;

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// CSS colour.
    pub color: String,
    /// Points in data units, in x order.
    pub points: Vec<(f64, f64)>,
}

/// A labelled span of the x axis (a phase).
#[derive(Clone, Debug)]
pub struct Band {
    /// Label drawn at the top of the band.
    pub label: String,
    /// Start, x units.
    pub x0: f64,
    /// End, x units.
    pub x1: f64,
}

/// A horizontal reference line.
#[derive(Clone, Debug)]
pub struct HLine {
    /// Legend label.
    pub label: String,
    /// Value, y units.
    pub y: f64,
    /// CSS colour.
    pub color: String,
}

/// A line chart.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Background of the plot area (each chart of a report has its own, so a rendering can be
    /// checked plot by plot).
    pub plot_fill: String,
    /// Lines.
    pub series: Vec<Series>,
    /// Phase bands.
    pub bands: Vec<Band>,
    /// Reference lines.
    pub hlines: Vec<HLine>,
}

/// Width of a chart in SVG units (CSS pixels).
pub const WIDTH: f64 = 760.0;
/// Height of a chart.
pub const HEIGHT: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 44.0;

/// Escapes text for XML content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

/// Round tick values covering `[lo, hi]`: steps of 1, 2 or 5 times a power of ten.
pub fn ticks(lo: f64, hi: f64, at_most: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / at_most.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step =
        [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(mag * 10.0);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

impl Chart {
    /// The chart as an `<svg>` element (no XML declaration, so it can sit inside HTML).
    pub fn to_svg(&self) -> String {
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x_max, mut y_max) = (0.0f64, 0.0f64);
        for &(x, y) in pts {
            if x.is_finite() {
                x_max = x_max.max(x);
            }
            if y.is_finite() {
                y_max = y_max.max(y);
            }
        }
        for b in &self.bands {
            x_max = x_max.max(b.x1);
        }
        for h in &self.hlines {
            y_max = y_max.max(h.y);
        }
        if x_max <= 0.0 {
            x_max = 1.0;
        }
        y_max = if y_max <= 0.0 { 1.0 } else { y_max * 1.08 };
        let pw = WIDTH - LEFT - RIGHT;
        let ph = HEIGHT - TOP - BOTTOM;
        let sx = |x: f64| LEFT + x / x_max * pw;
        let sy = |y: f64| TOP + ph - y.clamp(0.0, y_max) / y_max * ph;

        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="xMinYMin meet" style="display:block;height:auto" role="img" aria-label="{t}" font-family="sans-serif" font-size="12">"#,
            t = escape(&self.title)
        );
        let _ = write!(s, r#"<title>{}</title>"#, escape(&self.title));
        let _ =
            write!(s, r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##);
        let _ = write!(
            s,
            r#"<rect class="plot" x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="{}"/>"#,
            escape(&self.plot_fill)
        );
        for (i, b) in self.bands.iter().enumerate() {
            let (x0, x1) = (sx(b.x0), sx(b.x1));
            if i % 2 == 1 {
                let _ = write!(
                    s,
                    r##"<rect class="band" x="{x0:.1}" y="{TOP}" width="{:.1}" height="{ph}" fill="#000000" fill-opacity="0.05"/>"##,
                    (x1 - x0).max(0.0)
                );
            }
            let _ = write!(
                s,
                r##"<line x1="{x0:.1}" y1="{TOP}" x2="{x0:.1}" y2="{:.1}" stroke="#888888" stroke-width="1"/><text x="{:.1}" y="{:.1}" fill="#555555">{}</text>"##,
                TOP + ph,
                x0 + 3.0,
                TOP + 13.0,
                escape(&b.label)
            );
        }
        // Axes and ticks.
        for t in ticks(0.0, y_max, 5) {
            let y = sy(t);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                fmt_tick(t)
            );
        }
        for t in ticks(0.0, x_max, 8) {
            let x = sx(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#444444"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 5.0,
                TOP + ph + 18.0,
                fmt_tick(t)
            );
        }
        let _ = write!(
            s,
            r##"<path d="M{LEFT} {TOP} V{:.1} H{:.1}" fill="none" stroke="#444444"/>"##,
            TOP + ph,
            LEFT + pw
        );
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            HEIGHT - 6.0,
            escape(&self.x_label)
        );
        let _ = write!(
            s,
            r#"<text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        for h in &self.hlines {
            let y = sy(h.y);
            let _ = write!(
                s,
                r#"<line class="ref" x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-width="2" stroke-dasharray="6 4"/>"#,
                LEFT + pw,
                escape(&h.color)
            );
        }
        for se in &self.series {
            let mut d = String::new();
            for (i, &(x, y)) in
                se.points.iter().filter(|(x, y)| x.is_finite() && y.is_finite()).enumerate()
            {
                let _ = write!(d, "{}{:.1} {:.1}", if i == 0 { "M" } else { " L" }, sx(x), sy(y));
            }
            if !d.is_empty() {
                let _ = write!(
                    s,
                    r#"<path class="series" d="{d}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round"/>"#,
                    escape(&se.color)
                );
            }
        }
        // Title and legend.
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="18" font-size="14" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        let mut lx = LEFT;
        let legend = self
            .series
            .iter()
            .map(|x| (&x.name, &x.color, false))
            .chain(self.hlines.iter().map(|h| (&h.label, &h.color, true)));
        for (name, color, dashed) in legend {
            let dash = if dashed { r#" stroke-dasharray="6 4""# } else { "" };
            let _ = write!(
                s,
                r#"<line x1="{lx:.1}" y1="32" x2="{:.1}" y2="32" stroke="{}" stroke-width="3"{dash}/><text x="{:.1}" y="36">{}</text>"#,
                lx + 18.0,
                escape(color),
                lx + 22.0,
                escape(name)
            );
            lx += 30.0 + 7.0 * name.chars().count() as f64;
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        Chart {
            title: "I/O <throughput> & floor".into(),
            x_label: "seconds".into(),
            y_label: "MB/s".into(),
            plot_fill: "#f4f8ff".into(),
            series: vec![Series {
                name: "read".into(),
                color: "#1f77b4".into(),
                points: vec![(0.0, 0.0), (1.0, 500.0), (2.0, 250.0), (3.0, f64::NAN)],
            }],
            bands: vec![
                Band { label: "input".into(), x0: 0.0, x1: 1.5 },
                Band { label: "output".into(), x0: 1.5, x1: 3.0 },
            ],
            hlines: vec![HLine { label: "floor".into(), y: 800.0, color: "#d62728".into() }],
        }
    }

    #[test]
    fn well_formed_with_scaled_points() {
        let svg = chart().to_svg();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let title = doc.descendants().find(|n| n.has_tag_name("title")).unwrap();
        assert_eq!(title.text(), Some("I/O <throughput> & floor"));
        let path = doc.descendants().find(|n| n.attribute("class") == Some("series")).unwrap();
        let d = path.attribute("d").unwrap();
        // Three finite points; the NaN is left out. x = 0 maps to the left edge, and y = 0 to
        // the bottom of the plot area.
        assert_eq!(d.matches('L').count(), 2, "{d}");
        assert!(d.starts_with(&format!("M{LEFT:.1} {:.1}", HEIGHT - BOTTOM)), "{d}");
        // The floor (the largest value) sits below the top: the y range has head room.
        let r = doc.descendants().find(|n| n.attribute("class") == Some("ref")).unwrap();
        let y: f64 = r.attribute("y1").unwrap().parse().unwrap();
        assert!(y > TOP && y < TOP + 30.0, "{y}");
        let labels: Vec<_> = doc.descendants().filter_map(|n| n.text()).collect();
        assert!(labels.contains(&"input") && labels.contains(&"output"));
    }

    #[test]
    fn empty_chart_still_draws() {
        let svg = Chart::default().to_svg();
        roxmltree::Document::parse(&svg).expect("well-formed XML");
    }

    #[test]
    fn round_ticks() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(0.0, 1000.0, 4), vec![0.0, 500.0, 1000.0]);
        // 0.7 / 5 = 0.14 rounds up to a step of 0.2.
        let t = ticks(0.0, 0.7, 5);
        assert_eq!(t.len(), 4);
        assert!((t[3] - 0.6).abs() < 1e-9);
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }
}
