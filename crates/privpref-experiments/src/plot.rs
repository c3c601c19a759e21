//! Minimal SVG line plots for the experiment reports (no plotting dependency): one or more
//! panels side by side, each with log or linear axes, polylines with markers, and a legend.

use std::fmt::Write as _;

/// One curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// CSS colour.
    pub color: String,
    /// Abscissae.
    pub xs: Vec<f64>,
    /// Ordinates (non-finite points, and non-positive ones on a log axis, are skipped).
    pub ys: Vec<f64>,
    /// Dashed line (e.g. a theoretical prediction).
    pub dashed: bool,
}

/// One panel.
#[derive(Debug, Clone, Default)]
pub struct Panel {
    /// Title above the panel.
    pub title: String,
    /// x-axis label.
    pub xlabel: String,
    /// y-axis label.
    pub ylabel: String,
    /// Logarithmic x axis.
    pub xlog: bool,
    /// Logarithmic y axis.
    pub ylog: bool,
    /// Curves.
    pub series: Vec<Series>,
}

/// A palette of distinguishable colours, cycled by index.
pub fn color(i: usize) -> String {
    const C: [&str; 8] = [
        "#444444", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf",
    ];
    C[i % C.len()].to_string()
}

fn axis_range(v: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v {
        if x.is_finite() && (!log || x > 0.0) {
            let t = if log { x.log10() } else { x };
            lo = lo.min(t);
            hi = hi.max(t);
        }
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if log {
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    } else {
        let pad = if hi > lo {
            0.05 * (hi - lo)
        } else {
            0.5 * lo.abs().max(1.0)
        };
        let step = nice_step(hi - lo + 2.0 * pad);
        (((lo - pad) / step).floor() * step, ((hi + pad) / step).ceil() * step)
    }
}

/// A step of the form {1, 2, 5}·10^k giving about five intervals over `span`.
fn nice_step(span: f64) -> f64 {
    let raw = span / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    }
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-2 {
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The SVG document for `panels` (side by side) with one legend of all distinct labels.
pub fn svg(panels: &[Panel]) -> String {
    let (pw, ph, ml, mt, mb, gap) = (300.0, 240.0, 60.0, 30.0, 45.0, 70.0);
    let k = panels.len().max(1) as f64;
    let width = ml + k * (pw + gap);
    let mut labels: Vec<(String, String, bool)> = Vec::new();
    for p in panels {
        for s in &p.series {
            if !labels.iter().any(|l| l.0 == s.label) {
                labels.push((s.label.clone(), s.color.clone(), s.dashed));
            }
        }
    }
    let legend_rows = labels.len().div_ceil(3);
    let height = mt + ph + mb + 18.0 * legend_rows as f64 + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (pi, p) in panels.iter().enumerate() {
        let x0 = ml + pi as f64 * (pw + gap);
        let (ax0, ax1) = axis_range(p.series.iter().flat_map(|c| c.xs.iter().cloned()), p.xlog);
        let (ay0, ay1) = axis_range(p.series.iter().flat_map(|c| c.ys.iter().cloned()), p.ylog);
        let tx = |v: f64| if p.xlog { v.log10() } else { v };
        let ty = |v: f64| if p.ylog { v.log10() } else { v };
        let px = |v: f64| x0 + (tx(v) - ax0) / (ax1 - ax0) * pw;
        let py = |v: f64| mt + ph - (ty(v) - ay0) / (ay1 - ay0) * ph;
        let _ = writeln!(
            s,
            r#"<rect x="{x0:.1}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text>"#,
            x0 + pw / 2.0,
            mt - 10.0,
            esc(&p.title)
        );
        // Ticks: decades on log axes, 5 intervals on linear ones.
        let ticks = |a0: f64, a1: f64, log: bool| -> Vec<f64> {
            if log {
                let mut t = Vec::new();
                let mut e = a0;
                while e <= a1 + 1e-9 {
                    t.push(10f64.powf(e));
                    e += 1.0;
                }
                t
            } else {
                let step = nice_step(a1 - a0);
                let k = ((a1 - a0) / step).round() as usize;
                (0..=k).map(|i| a0 + step * i as f64).collect()
            }
        };
        for v in ticks(ay0, ay1, p.ylog) {
            let y = py(v);
            let _ = writeln!(
                s,
                r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 + pw,
                x0 - 4.0,
                y + 4.0,
                fmt_tick(v)
            );
        }
        for v in ticks(ax0, ax1, p.xlog) {
            let x = px(v);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{mt}" x2="{x:.1}" y2="{:.1}" stroke="#dddddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                mt + ph,
                mt + ph + 14.0,
                fmt_tick(v)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x0 + pw / 2.0,
            mt + ph + 30.0,
            esc(&p.xlabel)
        );
        let (yx, yy) = (x0 - 42.0, mt + ph / 2.0);
        let _ = writeln!(
            s,
            r#"<text x="{yx:.1}" y="{yy:.1}" transform="rotate(-90 {yx:.1} {yy:.1})" text-anchor="middle">{}</text>"#,
            esc(&p.ylabel)
        );
        for c in &p.series {
            let pts: Vec<(f64, f64)> =
                c.xs.iter()
                    .zip(&c.ys)
                    .filter(|(x, y)| x.is_finite() && y.is_finite() && (!p.xlog || **x > 0.0) && (!p.ylog || **y > 0.0))
                    .map(|(&x, &y)| (px(x), py(y)))
                    .collect();
            let line: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let dash = if c.dashed { r#" stroke-dasharray="6 4""# } else { "" };
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                line.join(" "),
                c.color
            );
            if !c.dashed {
                for (x, y) in &pts {
                    let _ = writeln!(s, r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{}"/>"#, c.color);
                }
            }
        }
    }
    for (i, (label, col, dashed)) in labels.iter().enumerate() {
        let x = ml + (i % 3) as f64 * 250.0;
        let y = mt + ph + mb + 14.0 + 18.0 * (i / 3) as f64;
        let dash = if *dashed { r#" stroke-dasharray="6 4""# } else { "" };
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{col}" stroke-width="2"{dash}/><text x="{:.1}" y="{y:.1}">{}</text>"#,
            y - 4.0,
            x + 20.0,
            y - 4.0,
            x + 25.0,
            esc(label)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_well_formed_and_skips_bad_points() {
        let p = Panel {
            title: "a < b".into(),
            xlabel: "n".into(),
            ylabel: "err".into(),
            xlog: true,
            ylog: true,
            series: vec![Series {
                label: "x".into(),
                color: color(1),
                xs: vec![1e3, 1e4, 1e5],
                ys: vec![0.1, f64::NAN, 0.01],
                dashed: false,
            }],
        };
        let s = svg(&[p.clone(), p]);
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("a &lt; b"));
        assert_eq!(s.matches("<circle").count(), 4);
        assert!(!s.contains("NaN"));
    }
}
