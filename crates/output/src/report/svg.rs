//! Charts of the results site, drawn as SVG text: the 2015 report's Tool1-vs-Tool2 execution-time
//! scatter (Fig. 1: log-log, one point per run, failed runs on the border lines, disagreements in
//! red) and cactus (quantile) plots. Pure functions of their data; no JavaScript.

use std::fmt::Write as _;

/// One examination instance both tools took part in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// CPU seconds of the first tool's run; `None` when it computed no value (cannot compute,
    /// time-out, memory-out, crash): drawn on the right border line.
    pub x: Option<f64>,
    /// The same for the second tool (top border line).
    pub y: Option<f64>,
    /// The two tools gave different values for at least one value.
    pub disagree: bool,
    /// Which examination instance the point is (an index into the page's list of names, for
    /// the page's script to name the point under the pointer).
    pub label: u32,
}

/// A tool's line in a cactus plot: the CPU seconds of its solved runs, in any order.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub times: Vec<f64>,
}

/// Colours of the tools' lines (colour-blind friendly, repeated beyond 12 tools).
const PALETTE: [&str; 12] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000", "#f0e442",
    "#999999", "#882255", "#44aa99", "#117733",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A log10 axis from `lo` to `hi` seconds mapped onto `[from, to]` pixels.
struct LogAxis {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
    /// `lo.log10()` and `hi.log10()`, computed once (a chart places thousands of points).
    log_lo: f64,
    log_hi: f64,
}

impl LogAxis {
    fn new(lo: f64, hi: f64, from: f64, to: f64) -> LogAxis {
        LogAxis {
            lo,
            hi,
            from,
            to,
            log_lo: lo.log10(),
            log_hi: hi.log10(),
        }
    }

    fn pos(&self, v: f64) -> f64 {
        let v = v.clamp(self.lo, self.hi);
        self.from + (v.log10() - self.log_lo) / (self.log_hi - self.log_lo) * (self.to - self.from)
    }

    /// The powers of ten within the axis.
    fn decades(&self) -> impl Iterator<Item = f64> + '_ {
        let (a, b) = (
            self.lo.log10().ceil() as i32,
            self.hi.log10().floor() as i32,
        );
        (a..=b).map(|e| 10f64.powi(e))
    }
}

/// The time range of a chart: from the decade below the fastest run (at least 1 ms) to `limit`
/// seconds (the CPU-time limit, or the slowest run if it is larger).
fn range(times: impl Iterator<Item = f64>, limit: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::MAX, limit.max(1.0));
    for t in times {
        lo = lo.min(t.max(1e-3));
        hi = hi.max(t);
    }
    if lo == f64::MAX || lo >= hi {
        lo = 0.01;
    }
    (10f64.powf(lo.log10().floor()), hi)
}

fn label(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.0}s")
    } else if seconds >= 0.01 {
        format!("{seconds:.2}s")
    } else {
        format!("{:.0}ms", seconds * 1e3)
    }
}

/// XML text escaping for names placed in the SVG.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Appends `v` as `format!("{v:.1}")` does (the charts' coordinates: hundreds of thousands per
/// site), without the formatter's exact decimal expansion where the rounding is plain: for a
/// positive `v` below a million, `v * 10` is within 1e-9 of the exact product, so a fraction
/// more than 1e-6 away from one half rounds the same way as the exact value. Anything else
/// (near a tie, negative, huge, not finite) goes through the formatter.
fn push_one_decimal(out: &mut String, v: f64) {
    let t = v * 10.0;
    let fraction = t - t.floor();
    if v.is_sign_positive() && v < 1e6 && (fraction - 0.5).abs() > 1e-6 {
        let n = t.round() as u64;
        let _ = write!(out, "{}.{}", n / 10, n % 10);
    } else {
        let _ = write!(out, "{v:.1}");
    }
}

/// Dots as one path of zero-length segments with round caps: small files even with thousands of
/// runs.
/// The points as one path of zero-length strokes; `labels` (one per point, in order) in its
/// `data-i` attribute.
fn dots(out: &mut String, points: &[(f64, f64)], labels: &[u32], color: &str, class: &str) {
    if points.is_empty() {
        return;
    }
    let _ = write!(out, r#"<path class="{class}" data-i=""#);
    for (n, l) in labels.iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{l}");
    }
    let _ = write!(
        out,
        r#"" stroke="{color}" stroke-width="5" stroke-linecap="round" fill="none" d=""#
    );
    for (x, y) in points {
        out.push('M');
        push_one_decimal(out, *x);
        out.push(' ');
        push_one_decimal(out, *y);
        out.push_str("h0");
    }
    out.push_str(r#""/>"#);
}

/// Rule-free picture of the 2015 report's Fig. 1: `x_name`'s CPU time against `y_name`'s, one
/// point per examination instance, log-log, with the diagonal; runs that computed nothing sit on
/// the border lines beyond the limit; disagreements are red.
pub fn scatter(x_name: &str, y_name: &str, pairs: &[Pair], limit: f64) -> String {
    const SIZE: f64 = 300.0;
    const M: f64 = 46.0; // margin for the labels
    const BORDER: f64 = 14.0; // the failed runs' line, beyond the plot area
    let (lo, hi) = range(pairs.iter().flat_map(|p| [p.x, p.y]).flatten(), limit);
    let ax = LogAxis::new(lo, hi, M, M + SIZE);
    let ay = LogAxis::new(lo, hi, M + SIZE + BORDER, M + BORDER);
    let fail_x = M + SIZE + BORDER;
    let fail_y = M;
    let w = M + SIZE + BORDER + 12.0;
    let h = M + SIZE + BORDER + 50.0;
    let mut out = String::with_capacity(2048 + pairs.len() * 14);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart scatter" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img" aria-label="{} vs {}: CPU time per run">"#,
        escape(x_name),
        escape(y_name)
    );
    let _ = write!(
        out,
        "<title>{} (x) vs {} (y): CPU time per run, log-log</title>",
        escape(x_name),
        escape(y_name)
    );
    // Plot area, grid and diagonal.
    let (x0, x1, y0, y1) = (ax.pos(lo), ax.pos(hi), ay.pos(lo), ay.pos(hi));
    let _ = write!(
        out,
        r##"<rect x="{x0:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" fill="#fff" stroke="#444"/>"##,
        x1 - x0,
        y0 - y1
    );
    for d in ax.decades() {
        let (x, y) = (ax.pos(d), ay.pos(d));
        let _ = write!(
            out,
            r##"<path d="M{x:.1} {y0:.1}V{y1:.1}M{x0:.1} {y:.1}H{x1:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            y0 + 13.0,
            label(d),
            x0 - 4.0,
            y + 3.0,
            label(d)
        );
    }
    let _ = write!(
        out,
        r##"<path d="M{x0:.1} {y0:.1}L{x1:.1} {y1:.1}" stroke="#888" stroke-dasharray="4 3"/>"##
    );
    // Border lines of the failed runs.
    let _ = write!(
        out,
        r##"<path d="M{fail_x:.1} {y0:.1}V{fail_y:.1}H{x0:.1}" stroke="#c60" stroke-dasharray="2 2" fill="none"/><text x="{:.1}" y="{:.1}" font-size="9" fill="#c60">failed</text>"##,
        x0,
        fail_y - 3.0
    );
    // Points: agreeing first, disagreements on top.
    let place = |p: &Pair| {
        let x = p.x.map_or(fail_x, |t| ax.pos(t));
        let y = p.y.map_or(fail_y, |t| ay.pos(t));
        (x, y)
    };
    let agreeing: Vec<&Pair> = pairs
        .iter()
        .filter(|p| !p.disagree && (p.x.is_some() || p.y.is_some()))
        .collect();
    let disagreeing: Vec<&Pair> = pairs.iter().filter(|p| p.disagree).collect();
    let labels = |ps: &[&Pair]| ps.iter().map(|p| p.label).collect::<Vec<u32>>();
    let agree: Vec<_> = agreeing.iter().map(|p| place(p)).collect();
    let disagree: Vec<_> = disagreeing.iter().map(|p| place(p)).collect();
    dots(&mut out, &agree, &labels(&agreeing), "#1f5fa8", "agree");
    dots(
        &mut out,
        &disagree,
        &labels(&disagreeing),
        "#d00000",
        "disagree",
    );
    // Axis names and counts.
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{} (CPU time)</text>"#,
        (x0 + x1) / 2.0,
        y0 + 28.0,
        escape(x_name)
    );
    let _ = write!(
        out,
        r#"<text transform="translate(12 {:.1}) rotate(-90)" font-size="12" text-anchor="middle">{} (CPU time)</text>"#,
        (y0 + y1) / 2.0,
        escape(y_name)
    );
    let _ = write!(
        out,
        r##"<text x="{x0:.1}" y="{:.1}" font-size="10">{} runs, {} disagreements (red), both failed: {}</text>"##,
        y0 + 42.0,
        pairs.len(),
        disagree.len(),
        pairs
            .iter()
            .filter(|p| p.x.is_none() && p.y.is_none())
            .count()
    );
    out.push_str("</svg>");
    out
}

/// Cactus (quantile) plot: for each tool, its solved runs sorted by CPU time; the n-th point is
/// the time within which it solved n runs.
pub fn cactus(series: &[Series], limit: f64) -> String {
    const W: f64 = 560.0;
    const H: f64 = 300.0;
    const M: f64 = 50.0;
    let most = series
        .iter()
        .map(|s| s.times.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let (lo, hi) = range(series.iter().flat_map(|s| s.times.iter().copied()), limit);
    let ay = LogAxis::new(lo, hi, M + H, M);
    let x_of = |n: usize| M + n as f64 / most as f64 * W;
    let legend = 16.0 * series.len() as f64;
    let (w, h) = (M + W + 170.0, M + H + 40.0 + (legend - H).max(0.0));
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart cactus" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img" aria-label="cactus plot"><title>Runs solved within a CPU time, per tool</title>"#
    );
    let _ = write!(
        out,
        r##"<rect x="{M}" y="{M}" width="{W}" height="{H}" fill="#fff" stroke="#444"/>"##
    );
    for d in ay.decades() {
        let y = ay.pos(d);
        let _ = write!(
            out,
            r##"<path d="M{M} {y:.1}H{:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            M + W,
            M - 4.0,
            y + 3.0,
            label(d)
        );
    }
    for i in 0..=4 {
        let n = most * i / 4;
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{n}</text>"#,
            x_of(n),
            M + H + 13.0
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">runs solved</text>"#,
        M + W / 2.0,
        M + H + 30.0
    );
    for (i, s) in series.iter().enumerate() {
        let mut times = s.times.clone();
        times.sort_by(|a, b| a.total_cmp(b));
        if !times.is_empty() {
            let _ = write!(
                out,
                r#"<path class="line" stroke="{}" stroke-width="1.5" fill="none" d=""#,
                color(i)
            );
            for (n, t) in times.iter().enumerate() {
                out.push(if n == 0 { 'M' } else { 'L' });
                push_one_decimal(&mut out, x_of(n + 1));
                out.push(' ');
                push_one_decimal(&mut out, ay.pos(*t));
            }
            // The tool's name under the pointer (the browser's tooltip, no script needed).
            let _ = write!(
                out,
                r#""><title>{}: {} runs solved</title></path>"#,
                escape(&s.name),
                times.len()
            );
        }
        let y = M + 8.0 + 16.0 * i as f64;
        let _ = write!(
            out,
            r#"<path d="M{:.1} {y:.1}h18" stroke="{}" stroke-width="3"/><text x="{:.1}" y="{:.1}" font-size="11">{} ({})</text>"#,
            M + W + 10.0,
            color(i),
            M + W + 32.0,
            y + 4.0,
            escape(&s.name),
            times.len()
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg)
            .unwrap_or_else(|e| panic!("not well-formed SVG: {e}\n{svg}"))
    }

    #[test]
    fn one_decimal_is_the_formatters() {
        let mut values = vec![
            0.0,
            -0.0,
            0.04,
            0.05,
            0.05000001,
            0.15,
            0.25,
            0.35,
            0.95,
            0.96,
            1.0,
            9.95,
            9.96,
            99.95,
            123.45,
            346.0,
            1e6,
            1e6 - 0.05,
            2.5e7,
            -1.25,
            f64::NAN,
            f64::INFINITY,
        ];
        // Every tenth and twentieth up to 400 (the charts' range), nudged both ways.
        for k in 0..8000 {
            let v = k as f64 / 20.0;
            values.extend([v, v.next_up(), v.next_down(), v + 1e-7, v - 1e-7]);
        }
        // And pseudo-random coordinates.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push((x >> 11) as f64 / (1u64 << 53) as f64 * 500.0);
        }
        for v in values {
            let mut fast = String::new();
            push_one_decimal(&mut fast, v);
            assert_eq!(fast, format!("{v:.1}"), "{v:e}");
        }
    }

    #[test]
    fn scatter_puts_failed_runs_on_the_border_and_disagreements_in_red() {
        let pairs = [
            Pair {
                x: Some(1.0),
                y: Some(10.0),
                disagree: false,
                label: 0,
            },
            Pair {
                x: None,
                y: Some(0.5),
                disagree: false,
                label: 0,
            },
            Pair {
                x: Some(2.0),
                y: Some(2.0),
                disagree: true,
                label: 0,
            },
            Pair {
                x: None,
                y: None,
                disagree: false,
                label: 0,
            },
        ];
        let svg = scatter("A<&>", "B", &pairs, 60.0);
        let doc = parse(&svg);
        let path = |class: &str| {
            doc.descendants()
                .find(|n| n.attribute("class") == Some(class))
                .map(|n| n.attribute("d").unwrap().to_string())
        };
        // Two agreeing points drawn (the run both failed is counted, not drawn), one red.
        let agree = path("agree").unwrap();
        assert_eq!(agree.matches('M').count(), 2, "{agree}");
        let red = path("disagree").unwrap();
        assert_eq!(red.matches('M').count(), 1);
        // The failed x sits on the right border line: x = 46 + 300 + 14 = 360.
        assert!(agree.contains("M360.0 "), "{agree}");
        // On the diagonal: equal times give equal offsets from the corner.
        let (x, y) = red
            .trim_start_matches('M')
            .trim_end_matches("h0")
            .split_once(' ')
            .unwrap();
        let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
        assert!(
            ((x - 46.0) - (46.0 + 14.0 + 300.0 - y)).abs() < 0.2,
            "{x} {y}"
        );
        assert!(svg.contains("A&lt;&amp;&gt;"));
        assert!(svg.contains("4 runs, 1 disagreements (red), both failed: 1"));
    }

    #[test]
    fn cactus_draws_one_sorted_line_per_tool() {
        let svg = cactus(
            &[
                Series {
                    name: "a".into(),
                    times: vec![3.0, 1.0, 2.0],
                },
                Series {
                    name: "b".into(),
                    times: vec![],
                },
            ],
            60.0,
        );
        let doc = parse(&svg);
        let lines: Vec<_> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("line"))
            .collect();
        assert_eq!(lines.len(), 1, "a tool that solved nothing has no line");
        let d = lines[0].attribute("d").unwrap();
        // y grows downwards: sorted times give non-increasing y.
        let ys: Vec<f64> = d
            .split(['M', 'L'])
            .filter(|s| !s.is_empty())
            .map(|p| p.split(' ').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(ys.len(), 3);
        assert!(ys.windows(2).all(|w| w[1] <= w[0]), "{ys:?}");
        assert!(svg.contains("a (3)") && svg.contains("b (0)"));
    }

    #[test]
    fn the_axis_covers_the_limit_and_the_fastest_run() {
        assert_eq!(range([0.05, 3.0].into_iter(), 60.0), (0.01, 60.0));
        assert_eq!(range([0.0].into_iter(), 10.0), (0.001, 10.0));
        assert_eq!(range(std::iter::empty(), 10.0), (0.01, 10.0));
        // A run slower than the limit widens the axis.
        assert_eq!(range([0.5, 100.0].into_iter(), 10.0), (0.1, 100.0));
    }
}
