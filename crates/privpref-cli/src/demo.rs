//! `privpref demo`: the seed-000 comparison on built-in synthetic data, as a table.

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use privpref::Result;
use privpref_experiments::{seed000_comparison, Cell, Estimator, Seed000Config};
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
    let cfg = Seed000Config {
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
    let cells = pool.install(|| seed000_comparison(&cfg, &|| bar.inc(1)))?;
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

fn print_table(cfg: &Seed000Config, cells: &[Cell], wall: f64, threads: usize) -> std::io::Result<()> {
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "privpref demo: local label-DP reward estimation (Chowdhury, Zhou & Natarajan, AISTATS 2024, §6)\n\
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
    o.flush()
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
    std::fs::write(&p, s).map_err(|e| privpref::Error::Io {
        path: p.display().to_string(),
        message: e.to_string(),
    })
}
