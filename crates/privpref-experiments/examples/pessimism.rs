//! Pessimism vs greedy when coverage is poor (seeds 001/004: the pessimistic policy of
//! Algorithm 3 / Algorithm 2 with `η = 1` should beat the greedy plug-in policy `η = 0` when
//! the data cover the comparator but not every policy).
//!
//! `cargo run --release --example pessimism [reps] [p_rare] [multipliers]` prints one table per
//! radius multiplier and writes `bench-results/pessimism.md` (defaults: 30 repetitions,
//! `p_rare = 0.005`, multipliers `1,0.1,0.03` — 1 is the explicit, guaranteed radius of
//! `privpref::policy::radius`; smaller ones are tighter sets **without** the guarantee, the
//! `multiplier` field of the radius rules). See `privpref_experiments::pessimism` for the design.

use privpref_experiments::pessimism::{mean_se, pessimism_vs_greedy, PessimismConfig};
use std::time::Instant;

fn main() -> Result<(), privpref::Error> {
    let args: Vec<String> = std::env::args().collect();
    let mut cfg = PessimismConfig::default();
    if let Some(r) = args.get(1).and_then(|v| v.parse().ok()) {
        cfg.reps = r;
    }
    if let Some(p) = args.get(2).and_then(|v| v.parse().ok()) {
        cfg.p_rare = p;
    }
    let mults: Vec<f64> = args
        .get(3)
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1.0, 0.1, 0.03]);
    let b = cfg.bandit.clone();
    let mut md = String::new();
    md.push_str("# Pessimism vs greedy under poor coverage\n\n");
    md.push_str(&format!(
        "Command: `cargo run --release --example pessimism {} {} {}` (shared 2-vCPU machine).\n\n",
        cfg.reps,
        cfg.p_rare,
        mults.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(",")
    ));
    let mut tables = String::new();
    for &mult in &mults {
        cfg.radius_multiplier = mult;
        let t = Instant::now();
        let cells = pessimism_vs_greedy(&cfg, &|| {})?;
        let secs = t.elapsed().as_secs_f64();
        let mut md = String::new();
        md.push_str(&format!(
            "## Γ multiplier {mult}{} ({secs:.1} s)\n\n",
            if mult == 1.0 {
                " (explicit radius: guaranteed coverage w.p. ≥ 1 − η)"
            } else {
                " (tighter than the explicit radius: no guarantee)"
            }
        ));
        if mult == mults[0] {
            tables.push_str(&format!(
        "Design (`privpref::sim::bandit`, `privpref_experiments::pessimism`): d = {}, A = {} actions of which {} rare, rare block of {} directions (weight {}, shared direction m = {}), ‖θ*‖ = {} (uniform direction, rare-block part turned to +e₁ when `covered_optimum` = {}: rare actions worse in truth), Θ_B = ball B = {}; the behaviour policy compares a rare action with probability p_rare = {}; {} public states; v = mean feature of the uniform policy over common actions (public). Local ε = {}, central (ε, δ) = ({}, 1/(2n²)), η = {}; radii: the explicit ones of `policy::radius` times each table's multiplier. {} repetitions; SubOpt = J(π*) − J(π) with θ* on the public states; mean ± standard error.\n\n",
        b.d, b.actions, b.rare_actions, b.rare_dim, b.rare_weight, b.rare_mean, cfg.theta_norm, cfg.covered_optimum, cfg.radius, cfg.p_rare, cfg.states,
        cfg.eps_local, cfg.eps_central, cfg.eta, cfg.reps
    ));
        }
        md.push_str("| estimator | n | SubOpt greedy | SubOpt pessimistic | pess. better / worse | rare-action share greedy / pess. | mean Γ | mean λ | fallbacks | FW not converged |\n|---|---|---|---|---|---|---|---|---|---|\n");
        let mut all_w = 0;
        let mut all_l = 0;
        for c in &cells {
            let (gm, gs) = mean_se(&c.greedy);
            let (pm, ps) = mean_se(&c.pessimistic);
            let (w, l) = c.wins_losses();
            all_w += w;
            all_l += l;
            md.push_str(&format!(
            "| {} | {} | {gm:.4} ± {gs:.4} | {pm:.4} ± {ps:.4} | {w} / {l} | {:.3} / {:.3} | {:.3} | {:.4} | {} | {} |\n",
            c.estimator.name(),
            c.n,
            mean_se(&c.greedy_rare).0,
            mean_se(&c.pessimistic_rare).0,
            mean_se(&c.radius).0,
            mean_se(&c.lambda).0,
            c.fallbacks,
            c.unconverged
        ));
        }
        md.push_str(&format!(
            "\nOver all cells: pessimism strictly better in {all_w} repetitions, strictly worse in {all_l}.\n\n"
        ));
        print!("{md}");
        tables.push_str(&md);
    }
    md.push_str(&tables);
    let _ = std::fs::create_dir_all("bench-results");
    std::fs::write("bench-results/pessimism.md", &md).map_err(|e| privpref::Error::Io {
        path: "bench-results/pessimism.md".into(),
        message: e.to_string(),
    })?;
    Ok(())
}
