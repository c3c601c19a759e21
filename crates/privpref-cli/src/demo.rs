//! `privpref demo`: the local-model comparison of Chowdhury, Zhou & Natarajan (2024) on built-in
//! synthetic data, as a table, with a verdict.

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use privpref::Result;
use privpref_experiments::{local_comparison, Cell, Estimator, LocalComparisonConfig};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct DemoArgs {
    /// Repetitions per (ε, n).
    #[arg(long, default_value_t = 20)]
    reps: usize,
    /// Feature dimension.
    #[arg(long, default_value_t = 5)]
    d: usize,
    /// Privacy levels, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.1,0.5,1")]
    eps: Vec<f64>,
    /// Sample sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,3000,10000,30000,100000")]
    n: Vec<usize>,
    /// ‖θ*‖.
    #[arg(long, default_value_t = 1.0)]
    theta_norm: f64,
    /// B of Θ_B.
    #[arg(long, default_value_t = 2.0)]
    radius: f64,
    /// Base seed.
    #[arg(long, default_value_t = 2024)]
    seed: u64,
    /// Worker threads, 1 to 256 (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Also write the per-repetition errors as CSV into this directory.
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

pub fn run(a: DemoArgs) -> Result<()> {
    let cfg = LocalComparisonConfig {
        d: a.d,
        theta_norm: a.theta_norm,
        radius: a.radius,
        eps: a.eps.clone(),
        ns: a.n.clone(),
        reps: a.reps,
        seed: a.seed,
    };
    let pool = crate::pool(a.threads)?;
    let jobs = (cfg.ns.len() * cfg.reps) as u64;
    let bar = ProgressBar::new(jobs);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} fitting {pos}/{len} (n, repetition) jobs [{elapsed_precise}] {wide_bar} eta {eta}",
        )
        .expect("valid template"),
    );
    let t0 = Instant::now();
    let cells = pool.install(|| local_comparison(&cfg, &|| bar.inc(1)))?;
    bar.finish_and_clear();
    let wall = t0.elapsed().as_secs_f64();
    // A lost table (closed pipe, full disk) is an error, not a silent success.
    print_table(&cfg, &cells, wall, pool.current_num_threads()).map_err(|e| crate::stdout_err(&e))?;
    if let Some(dir) = &a.out_dir {
        write_csv(dir, &cells)?;
        eprintln!("privpref: wrote {}", dir.join("demo_errors.csv").display());
    }
    Ok(())
}

fn find(cells: &[Cell], est: Estimator, eps: Option<f64>, n: usize) -> Option<&Cell> {
    cells.iter().find(|c| c.estimator == est && c.eps == eps && c.n == n)
}

fn fmt_err(c: Option<&Cell>) -> String {
    match c {
        Some(c) => format!("{:.4} ± {:.4}", c.mean(), c.std_err()),
        None => "-".into(),
    }
}

fn print_table(cfg: &LocalComparisonConfig, cells: &[Cell], wall: f64, threads: usize) -> std::io::Result<()> {
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "privpref demo: local label-DP reward estimation (Chowdhury, Zhou & Natarajan, AISTATS 2024, Sec. 6)\n\
         BTL pairs, d = {}, ‖θ*‖ = {}, Θ_B with B = {}, exact projected Newton, {} repetitions per cell, seed {}\n\
         ℓ2 error ‖θ̂ − θ*‖ (mean ± standard error); RR/MLE = debiased-RR error / MLE error (theory: ∝ coth(ε/2))\n",
        cfg.d, cfg.theta_norm, cfg.radius, cfg.reps, cfg.seed
    )?;
    writeln!(
        o,
        "{:>5} {:>7} | {:>17} | {:>17} | {:>17} | {:>6} | {:>11}",
        "eps", "n", "MLE (clear)", "MLE-RR", "debiased RR", "RR/MLE", "coth(eps/2)"
    )?;
    writeln!(
        o,
        "{}",
        "-".repeat(5 + 1 + 7 + 3 + 17 + 3 + 17 + 3 + 17 + 3 + 6 + 3 + 11)
    )?;
    for &eps in &cfg.eps {
        for &n in &cfg.ns {
            let mle = find(cells, Estimator::Mle, None, n);
            let rr = find(cells, Estimator::MleRr, Some(eps), n);
            let db = find(cells, Estimator::DebiasedRr, Some(eps), n);
            let ratio = match (mle, db) {
                (Some(m), Some(d)) => format!("{:.2}", d.mean() / m.mean()),
                _ => "-".into(),
            };
            writeln!(
                o,
                "{:>5} {:>7} | {:>17} | {:>17} | {:>17} | {:>6} | {:>11.2}",
                eps,
                n,
                fmt_err(mle),
                fmt_err(rr),
                fmt_err(db),
                ratio,
                1.0 / (0.5 * eps).tanh()
            )?;
        }
    }
    writeln!(o)?;
    let mut notes = Vec::new();
    for est in [Estimator::Mle, Estimator::MleRr, Estimator::DebiasedRr] {
        let cs: Vec<&Cell> = cells.iter().filter(|c| c.estimator == est).collect();
        let fits: usize = cs.iter().map(|c| c.errors.len()).sum();
        let conv: usize = cs.iter().map(|c| c.converged).sum();
        let cert: usize = cs.iter().map(|c| c.certified).sum();
        let secs: f64 = cs.iter().map(|c| c.solve_seconds).sum();
        notes.push(format!(
            "{:<12} {:>5} fits, {:>5} converged, {:>5} certified global, solver time {:.2} s",
            est.name(),
            fits,
            conv,
            cert,
            secs
        ));
    }
    for nline in notes {
        writeln!(o, "{nline}")?;
    }
    for c in cells {
        for (rep, term) in &c.failures {
            writeln!(
                o,
                "  not converged: {} eps={} n={} repetition {}: {} (error still included in the table)",
                c.estimator.name(),
                c.eps.map(|e| e.to_string()).unwrap_or_default(),
                c.n,
                rep,
                term.describe()
            )?;
        }
    }
    writeln!(o, "(MLE-RR is non-convex for |xᵀθ| > ε/2: its fits are stationary points, certified global only when ε ≥ 2B·max‖Px‖.)")?;
    writeln!(o, "wall time {wall:.2} s on {threads} thread(s)")?;
    writeln!(o)?;
    for line in verdict(cfg, cells) {
        writeln!(o, "{line}")?;
    }
    o.flush()
}

/// The band around `coth(ε/2)` within which a measured error ratio debiased RR / MLE is said to
/// agree with theory. Thm 4.2 of Chowdhury, Zhou & Natarajan (2024) bounds the debiased-RR error
/// by `coth(ε/2)` times the clear-label rate up to an unspecified constant, so the prediction is
/// the order of the ratio, not its value; a factor 2 either way is the stated tolerance.
const AGREEMENT_FACTOR: f64 = 2.0;

/// The demo's conclusion, in words, from the numbers of the table.
///
/// * The trivial estimate `θ̂ = 0` has error `‖0 − θ*‖ = ‖θ*‖` (= `cfg.theta_norm`) in every
///   repetition; a cell (estimator, ε, n) is *worse than trivial* when its mean error is above it.
/// * The ratio check uses the cells where debiased RR beats the trivial estimate (elsewhere the
///   ball `Θ_B`, not the privacy noise, limits its error and the ratio says nothing about the
///   theory): the ratio agrees when `RR/MLE ÷ coth(ε/2)` lies in
///   `[1/AGREEMENT_FACTOR, AGREEMENT_FACTOR]`.
fn verdict(cfg: &LocalComparisonConfig, cells: &[Cell]) -> Vec<String> {
    let trivial = cfg.theta_norm;
    let cells_word = |k: usize| {
        if k == 1 {
            "1 cell".to_string()
        } else {
            format!("{k} cells")
        }
    };
    let mut judged = Vec::new(); // (eps, n, ratio / coth)
    let mut unjudged = 0usize;
    for &eps in &cfg.eps {
        for &n in &cfg.ns {
            let (Some(m), Some(d)) = (
                find(cells, Estimator::Mle, None, n),
                find(cells, Estimator::DebiasedRr, Some(eps), n),
            ) else {
                continue;
            };
            if d.mean() < trivial && m.mean() > 0.0 {
                judged.push((eps, n, d.mean() / m.mean() * (0.5 * eps).tanh()));
            } else {
                unjudged += 1;
            }
        }
    }
    let mut lines = Vec::new();
    if judged.is_empty() {
        lines.push(
            "Verdict: no cell can be compared with theory: debiased RR does not beat the trivial estimate θ = 0 \
             anywhere (use larger n or ε)."
                .to_string(),
        );
    } else {
        let lo = judged.iter().map(|j| j.2).fold(f64::INFINITY, f64::min);
        let hi = judged.iter().map(|j| j.2).fold(f64::NEG_INFINITY, f64::max);
        let off: Vec<&(f64, usize, f64)> = judged
            .iter()
            .filter(|j| !(j.2 >= 1.0 / AGREEMENT_FACTOR && j.2 <= AGREEMENT_FACTOR))
            .collect();
        let agree = judged.len() - off.len();
        let head = if off.is_empty() {
            "Verdict: the measured error ratios agree with theory.".to_string()
        } else if agree == 0 {
            "Verdict: the measured error ratios do NOT agree with theory.".to_string()
        } else {
            format!(
                "Verdict: the measured error ratios agree with theory in {agree} of {} cells.",
                judged.len()
            )
        };
        let range = if format!("{lo:.2}") == format!("{hi:.2}") {
            format!("{lo:.2}")
        } else {
            format!("{lo:.2}–{hi:.2}")
        };
        let mut line = format!(
            "{head} In the {} where debiased RR beats θ = 0, RR/MLE is {range} × coth(ε/2)",
            cells_word(judged.len())
        );
        if off.is_empty() {
            line.push('.');
        } else {
            let list: Vec<String> = off.iter().map(|(e, n, q)| format!("(ε={e}, n={n}: {q:.2})")).collect();
            line.push_str(&format!("; outside the band: {}.", list.join(", ")));
        }
        lines.push(line);
        let mut note = format!(
            "  (Agreement means within a factor {AGREEMENT_FACTOR} of coth(ε/2), the privacy factor of Thm 4.2, \
             which holds up to a constant; each error is a mean over {} repetition{}.",
            cfg.reps,
            if cfg.reps == 1 { "" } else { "s" }
        );
        if unjudged > 0 {
            note.push_str(&format!(
                " The {} where debiased RR does not beat θ = 0 {} not judged: there the ball Θ_B, not the \
                 privacy noise, limits the error.",
                cells_word(unjudged),
                if unjudged == 1 { "is" } else { "are" }
            ));
        }
        note.push(')');
        lines.push(note);
    }
    let mut worse = Vec::new();
    for (est, label) in [
        (Estimator::Mle, "MLE (clear)"),
        (Estimator::MleRr, "MLE-RR"),
        (Estimator::DebiasedRr, "debiased RR"),
    ] {
        let at: Vec<String> = cells
            .iter()
            .filter(|c| c.estimator == est && c.mean() > trivial)
            .map(|c| match c.eps {
                Some(e) => format!("(ε={e}, n={})", c.n),
                None => format!("(n={})", c.n),
            })
            .collect();
        if !at.is_empty() {
            worse.push(format!("{label} at {}", at.join(", ")));
        }
    }
    if worse.is_empty() {
        lines.push(format!(
            "No cell is worse than the trivial estimate θ = 0 (whose error is ‖θ*‖ = {trivial} in every repetition)."
        ));
    } else {
        lines.push(format!(
            "Worse than the trivial estimate θ = 0 (mean error above its error ‖θ*‖ = {trivial}): {}.",
            worse.join("; ")
        ));
    }
    lines
}

fn write_csv(dir: &std::path::Path, cells: &[Cell]) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| privpref::Error::Io {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let p = dir.join("demo_errors.csv");
    let mut s = String::from("estimator,eps,n,repetition,l2_error\n");
    for c in cells {
        for (r, e) in c.errors.iter().enumerate() {
            let eps = c.eps.map(|v| v.to_string()).unwrap_or_default();
            s.push_str(&format!("{},{},{},{},{:.17e}\n", c.estimator.name(), eps, c.n, r, e));
        }
    }
    super::atomic::write_bytes(&p, s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(estimator: Estimator, eps: Option<f64>, n: usize, err: f64) -> Cell {
        Cell {
            estimator,
            eps,
            n,
            errors: vec![err, err],
            converged: 2,
            certified: 2,
            solve_seconds: 0.0,
            failures: Vec::new(),
        }
    }

    fn cfg(eps: Vec<f64>, ns: Vec<usize>) -> LocalComparisonConfig {
        LocalComparisonConfig {
            d: 5,
            theta_norm: 1.0,
            radius: 2.0,
            eps,
            ns,
            reps: 2,
            seed: 1,
        }
    }

    #[test]
    fn verdict_agrees_when_every_ratio_is_near_coth() {
        // ε = 1: coth(0.5) = 2.164; RR/MLE = 0.25/0.1 = 2.5 → ratio ÷ coth = 1.16.
        let cells = vec![
            cell(Estimator::Mle, None, 1000, 0.1),
            cell(Estimator::MleRr, Some(1.0), 1000, 0.3),
            cell(Estimator::DebiasedRr, Some(1.0), 1000, 0.25),
        ];
        let v = verdict(&cfg(vec![1.0], vec![1000]), &cells);
        assert!(
            v[0].starts_with("Verdict: the measured error ratios agree with theory."),
            "{v:?}"
        );
        assert!(
            v[0].contains("In the 1 cell where debiased RR beats θ = 0, RR/MLE is 1.16 × coth(ε/2)."),
            "{v:?}"
        );
        assert!(
            v[2].starts_with("No cell is worse than the trivial estimate θ = 0"),
            "{v:?}"
        );
    }

    #[test]
    fn verdict_names_disagreeing_and_worse_than_trivial_cells() {
        // ε = 1, n = 1000: ratio 10 → ÷ coth = 4.6, outside the band; ε = 0.1, n = 1000: RR error
        // 1.5 > ‖θ*‖ = 1, not judged and worse than θ = 0.
        let cells = vec![
            cell(Estimator::Mle, None, 1000, 0.05),
            cell(Estimator::DebiasedRr, Some(1.0), 1000, 0.5),
            cell(Estimator::DebiasedRr, Some(0.1), 1000, 1.5),
            cell(Estimator::MleRr, Some(0.1), 1000, 1.2),
        ];
        let v = verdict(&cfg(vec![0.1, 1.0], vec![1000]), &cells);
        assert!(
            v[0].starts_with("Verdict: the measured error ratios do NOT agree with theory"),
            "{v:?}"
        );
        assert!(v[0].contains("outside the band: (ε=1, n=1000: 4.62)."), "{v:?}");
        assert!(
            v[1].contains("The 1 cell where debiased RR does not beat θ = 0 is not judged"),
            "{v:?}"
        );
        assert_eq!(
            v[2],
            "Worse than the trivial estimate θ = 0 (mean error above its error ‖θ*‖ = 1): MLE-RR at (ε=0.1, n=1000); \
             debiased RR at (ε=0.1, n=1000)."
        );
    }

    #[test]
    fn verdict_without_a_judgeable_cell_says_so() {
        let cells = vec![
            cell(Estimator::Mle, None, 100, 0.5),
            cell(Estimator::DebiasedRr, Some(0.1), 100, 2.0),
        ];
        let v = verdict(&cfg(vec![0.1], vec![100]), &cells);
        assert!(
            v[0].starts_with("Verdict: no cell can be compared with theory"),
            "{v:?}"
        );
        assert!(v[1].contains("debiased RR at (ε=0.1, n=100)"), "{v:?}");
    }
}
