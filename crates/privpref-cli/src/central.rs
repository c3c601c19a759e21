//! Central-DP commands: `privpref fit --central ...` (objective perturbation, Chowdhury, Zhou &
//! Natarajan (2024), Algorithm 2, or the private MLE of "Provable protection of human judgements"
//! (anon., 2025), Algorithm 1) and `privpref covariance ...` (the same anonymous paper, Algorithm
//! 2), with their K-wise versions (Thm 4.3: `fit --central --mechanism private-mle --loss
//! pl-top1|pl-ranking --k K`, `covariance --k K`). JSON output includes the guarantee.

use clap::Args;
use privpref::data::{npy, FeatureBound, GroupLabels, GroupView, PairwiseView};
use privpref::estimator::central::{default_beta, objective_perturbation, ObjPertOptions, OutputPerturbation};
use privpref::estimator::private_mle::{private_covariance, private_mle, CovarianceOptions, PrivateMleOptions};
use privpref::estimator::private_mle_kwise::{private_covariance_kwise, private_mle_kwise};
use privpref::feasible::FeasibleSet;
use privpref::loss::GroupLossSpec;
use privpref::privacy::{Guarantee, Neighbouring, NoiseRng};
use privpref::Error;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The options of `fit` that only `--central` uses.
#[derive(Args, Default)]
pub struct CentralArgs {
    /// Central label DP by objective perturbation (Chowdhury, Zhou & Natarajan 2024, Algorithm 2)
    /// instead of a plain fit:
    /// needs --loss mle, --eps, --delta and --feature-bound. With --loss pl-top1|pl-ranking --k K
    /// and --mechanism private-mle: the K-wise private MLE (anon. 2025, Thm 4.3).
    #[arg(long)]
    pub central: bool,
    /// --central: objpert (Chowdhury, Zhou & Natarajan 2024, Algorithm 2; label DP) | private-mle
    /// (anon. 2025, Algorithm 1; standard DP of the record, spends eps/2, delta/2).
    #[arg(long)]
    pub mechanism: Option<String>,
    /// --central: δ ∈ (0, 1).
    #[arg(long)]
    pub delta: Option<f64>,
    /// --central: the feature bound L (‖φ‖ ≤ L, so every row needs ‖x‖ ≤ 2L; never read from the data).
    /// With --horizon H it is the per-step bound of trajectory comparisons.
    #[arg(long)]
    pub feature_bound: Option<f64>,
    /// --central: the rows are trajectory comparisons of H steps (x = Σ_h per-step differences):
    /// the noise is calibrated to H·L and rows need ‖x‖ ≤ 2HL (default 1: pairwise).
    #[arg(long)]
    pub horizon: Option<usize>,
    /// --central objpert: ridge β > 0 of (β/2n)‖θ‖² (default √n/B).
    #[arg(long)]
    pub beta: Option<f64>,
    /// --central objpert: certified KKT tolerance for the exactness of the minimiser (default 1e-9).
    #[arg(long)]
    pub kkt_tol: Option<f64>,
    /// --central objpert: output perturbation radius τ (certified ‖θ̂ − θ_exact‖ ≤ τ).
    #[arg(long)]
    pub output_radius: Option<f64>,
    /// --central objpert: ε share of the output perturbation (with --output-radius).
    #[arg(long)]
    pub output_eps: Option<f64>,
    /// --central objpert: δ share of the output perturbation (with --output-radius).
    #[arg(long)]
    pub output_delta: Option<f64>,
    /// --central private-mle: failure probability η (default 0.05).
    #[arg(long)]
    pub eta: Option<f64>,
    /// --central private-mle: regulariser α of α‖θ‖² (default max(2γλ, 4L²/(εn))).
    #[arg(long)]
    pub alpha: Option<f64>,
    /// --central private-mle: optimisation accuracy β ∈ (0, 1/n) (default min(1/n, α/(dn²))).
    #[arg(long)]
    pub accuracy: Option<f64>,
    /// --central: release an explicitly unguaranteed result ("guarantee": null) instead of
    /// failing when the exactness certificate does not hold.
    #[arg(long)]
    pub allow_unguaranteed: bool,
}

impl CentralArgs {
    /// The first central-only option given without `--central`, if any.
    pub fn stray(&self) -> Option<&'static str> {
        self.stray_except(None)
    }

    /// [`CentralArgs::stray`] ignoring `skip` (an option another mode uses too, e.g. `delta`).
    pub fn stray_except(&self, skip: Option<&str>) -> Option<&'static str> {
        [
            ("mechanism", self.mechanism.is_some()),
            ("delta", self.delta.is_some()),
            ("feature-bound", self.feature_bound.is_some()),
            ("horizon", self.horizon.is_some()),
            ("beta", self.beta.is_some()),
            ("kkt-tol", self.kkt_tol.is_some()),
            ("output-radius", self.output_radius.is_some()),
            ("output-eps", self.output_eps.is_some()),
            ("output-delta", self.output_delta.is_some()),
            ("eta", self.eta.is_some()),
            ("alpha", self.alpha.is_some()),
            ("accuracy", self.accuracy.is_some()),
            ("allow-unguaranteed", self.allow_unguaranteed),
        ]
        .into_iter()
        .find(|(n, given)| *given && Some(*n) != skip)
        .map(|(n, _)| n)
    }
}

/// JSON of a guarantee (`null` for none).
pub fn guarantee_json(g: Option<&Guarantee>) -> Value {
    serde_json::to_value(g).expect("a Guarantee serialises to JSON")
}

/// Everything `fit --central` needs from the common fit arguments.
pub struct CentralInput<'a> {
    pub view: PairwiseView<'a>,
    pub set: FeasibleSet,
    pub eps: Option<f64>,
    pub seed: Option<u64>,
    pub control: privpref::solver::Control,
}

/// An error naming the first of `options` (name, given) that was given: only `--mechanism
/// {mechanism}` reads them.
fn refuse_options(options: &[(&'static str, bool)], mechanism: &str) -> Result<(), Error> {
    match options.iter().find(|(_, given)| *given) {
        Some((name, _)) => Err(Error::param(
            name,
            format!("--{name} applies only to --mechanism {mechanism}"),
        )),
        None => Ok(()),
    }
}

/// An error naming the first option given that only `--mechanism objpert` reads.
fn refuse_objpert_options(c: &CentralArgs) -> Result<(), Error> {
    refuse_options(
        &[
            ("beta", c.beta.is_some()),
            ("kkt-tol", c.kkt_tol.is_some()),
            ("output-radius", c.output_radius.is_some()),
            ("output-eps", c.output_eps.is_some()),
            ("output-delta", c.output_delta.is_some()),
        ],
        "objpert",
    )
}

fn required(v: Option<f64>, name: &'static str) -> Result<f64, Error> {
    v.ok_or_else(|| Error::param(name, format!("--central needs --{name}")))
}

/// Runs `fit --central` and returns its JSON (without the timing/threads fields).
pub fn run(c: &CentralArgs, inp: CentralInput<'_>) -> Result<Value, Error> {
    let eps = required(inp.eps, "eps")?;
    let delta = required(c.delta, "delta")?;
    let l = required(c.feature_bound, "feature-bound")?;
    let horizon = c.horizon.unwrap_or(1);
    let bound = FeatureBound::trajectory(horizon, l)?;
    let mech = c.mechanism.as_deref().unwrap_or("objpert");
    // Distributed over ranks: the same noise on every rank, drawn from a key that rank 0 takes
    // from OS entropy (a seed is the same everywhere already).
    let mut rng = match (inp.seed, inp.view.shard()) {
        (None, Some(shard)) => NoiseRng::secure_shared(shard.collective())?,
        (seed, _) => NoiseRng::from_seed(seed)?,
    };
    let (n, d) = (inp.view.n(), inp.view.d());
    match mech {
        "objpert" => {
            refuse_options(
                &[
                    ("eta", c.eta.is_some()),
                    ("alpha", c.alpha.is_some()),
                    ("accuracy", c.accuracy.is_some()),
                ],
                "private-mle",
            )?;
            let beta = match c.beta {
                Some(b) => b,
                None => default_beta(n, &inp.set)?,
            };
            let mut o = ObjPertOptions::new(eps, delta, bound, beta, inp.set);
            if let Some(t) = c.kkt_tol {
                o.kkt_tol = t;
            }
            o.output = match (c.output_radius, c.output_eps, c.output_delta) {
                (None, None, None) => None,
                (Some(radius), Some(e2), Some(d2)) => Some(OutputPerturbation::new(radius, e2, d2)),
                _ => {
                    return Err(Error::param(
                        "output-radius",
                        "output perturbation needs all of --output-radius, --output-eps and --output-delta",
                    ))
                }
            };
            o.allow_unguaranteed = c.allow_unguaranteed;
            o.control = inp.control;
            let f = objective_perturbation(inp.view, &o, &mut rng)?;
            let r = &f.report;
            Ok(json!({
                "theta": f.theta,
                "guarantee": guarantee_json(f.guarantee.as_ref()),
                "refusal": f.refusal(),
                "central": true,
                "mechanism": "objpert",
                "kkt_residual": f.report.certificate.projected_gradient,
                "kkt_tol": f.detail.kkt_tol,
                "distance_bound": f.detail.distance_bound,
                "converged": r.converged(),
                "termination": r.termination.as_str(),
                "iterations": r.counts.iterations,
                "solver": r.solver,
                "loss": "mle",
                "constraint": inp.set.name(),
                "radius": inp.set.radius(),
                "beta": f.detail.beta,
                "feature_bound_per_step": l,
                "horizon": horizon,
                "noise_std": f.detail.noise_std,
                "output_noise_std": f.detail.output_noise_std,
                "n": n,
                "d": d,
                "elapsed_s": r.counts.elapsed.as_secs_f64(),
                "seed": inp.seed,
                "diagnostics_note": "only theta is covered by the guarantee; kkt_residual, iterations and converged describe the non-private solve",
            }))
        }
        "private-mle" => {
            refuse_objpert_options(c)?;
            let mut o = PrivateMleOptions::new(eps, delta, bound, inp.set);
            if let Some(e) = c.eta {
                o.eta = e;
            }
            o.alpha = c.alpha;
            o.accuracy = c.accuracy;
            o.allow_unguaranteed = c.allow_unguaranteed;
            o.control = inp.control;
            let f = private_mle(inp.view, &o, &mut rng)?;
            let r = &f.report;
            let k = &f.detail.calibration;
            Ok(json!({
                "theta": f.theta,
                "guarantee": guarantee_json(f.guarantee.as_ref()),
                "refusal": f.refusal(),
                "central": true,
                "mechanism": "private-mle",
                "gap_certificate": f.detail.gap_certificate,
                "accuracy": k.accuracy,
                "alpha": k.alpha,
                "alpha_min": k.alpha_min,
                "lambda": k.lambda,
                "gamma": k.gamma,
                "feature_bound_per_step": l,
                "horizon": horizon,
                "objective_noise_std": k.objective_noise_std,
                "output_noise_std": k.output_noise_std,
                "kkt_residual": r.certificate.kkt_residual,
                "converged": r.converged(),
                "termination": r.termination.as_str(),
                "iterations": r.counts.iterations,
                "solver": r.solver,
                "loss": "mle",
                "constraint": inp.set.name(),
                "radius": inp.set.radius(),
                "n": n,
                "d": d,
                "elapsed_s": r.counts.elapsed.as_secs_f64(),
                "seed": inp.seed,
                "diagnostics_note": "only theta is covered by the guarantee; the certificate, residual and iterations describe the non-private solve",
            }))
        }
        other => Err(Error::param(
            "mechanism",
            format!("unknown central mechanism `{other}` (expected objpert or private-mle)"),
        )),
    }
}

/// Everything `fit --central --loss pl-top1|pl-ranking --k K` needs.
pub struct KwiseCentralInput<'a> {
    pub view: GroupView<'a>,
    pub loss: GroupLossSpec,
    pub set: FeasibleSet,
    pub eps: Option<f64>,
    pub seed: Option<u64>,
    pub control: privpref::solver::Control,
}

/// Runs `fit --central --mechanism private-mle` on K-wise data: the K-wise private MLE of
/// "Provable protection of human judgements" (anon., 2025), Thm 4.3 (Algorithm 1 on the
/// Plackett–Luce likelihood); returns its JSON (without the timing/threads fields).
pub fn run_kwise(c: &CentralArgs, inp: KwiseCentralInput<'_>) -> Result<Value, Error> {
    match c.mechanism.as_deref() {
        Some("private-mle") => {}
        other => {
            return Err(Error::param(
                "mechanism",
                format!(
                    "K-wise central fits run the private MLE (anon. 2025, Thm 4.3): give --mechanism private-mle{}",
                    other.map_or(String::new(), |m| format!(
                        " (got `{m}`; objpert is the pairwise logistic loss)"
                    ))
                ),
            ))
        }
    }
    refuse_objpert_options(c)?;
    let eps = required(inp.eps, "eps")?;
    let delta = required(c.delta, "delta")?;
    let l = required(c.feature_bound, "feature-bound")?;
    let horizon = c.horizon.unwrap_or(1);
    let bound = FeatureBound::trajectory(horizon, l)?;
    let mut rng = NoiseRng::from_seed(inp.seed)?;
    let mut o = PrivateMleOptions::new(eps, delta, bound, inp.set);
    if let Some(e) = c.eta {
        o.eta = e;
    }
    o.alpha = c.alpha;
    o.accuracy = c.accuracy;
    o.allow_unguaranteed = c.allow_unguaranteed;
    o.control = inp.control;
    let (n, k, d) = (inp.view.n(), inp.view.k(), inp.view.d());
    let f = private_mle_kwise(inp.view, inp.loss, &o, &mut rng)?;
    let r = &f.report;
    let cal = &f.detail.calibration;
    let top = match inp.loss {
        GroupLossSpec::PlRanking { top } => top.unwrap_or(k - 1),
        _ => 1,
    };
    Ok(json!({
        "theta": f.theta,
        "guarantee": guarantee_json(f.guarantee.as_ref()),
        "refusal": f.refusal(),
        "central": true,
        "mechanism": "private-mle",
        "gap_certificate": f.detail.gap_certificate,
        "accuracy": cal.accuracy,
        "alpha": cal.alpha,
        "alpha_min": cal.alpha_min,
        "lambda": cal.lambda,
        "gamma": cal.gamma,
        "grad_bound": cal.grad_bound,
        "hessian_trace_bound": cal.hessian_trace_bound,
        "feature_bound_per_step": l,
        "horizon": horizon,
        "objective_noise_std": cal.objective_noise_std,
        "output_noise_std": cal.output_noise_std,
        "kkt_residual": r.certificate.kkt_residual,
        "converged": r.converged(),
        "termination": r.termination.as_str(),
        "iterations": r.counts.iterations,
        "solver": r.solver,
        "loss": inp.loss.name(),
        "k": k,
        "top": top,
        "constraint": inp.set.name(),
        "radius": inp.set.radius(),
        "n": n,
        "d": d,
        "elapsed_s": r.counts.elapsed.as_secs_f64(),
        "seed": inp.seed,
        "diagnostics_note": "only theta is covered by the guarantee; the certificate, residual and iterations describe the non-private solve",
    }))
}

/// `privpref covariance`: the private data covariance of "Provable protection of human judgements"
/// (anon., 2025), Algorithm 2 (corrected calibration).
#[derive(Args)]
pub struct CovarianceArgs {
    /// Pairwise feature differences, float64/float32 .npy of shape n × d; with --k, K-wise
    /// features, float64 .npy of shape n × K × d.
    #[arg(long)]
    pub x: PathBuf,
    /// K-wise data of K alternatives per sample: releases Σ_{D_K} (anon. 2025, Thm 4.3), the mean
    /// over samples of (2/(K(K−1))) Σ_{j<k} (φ_j − φ_k)(φ_j − φ_k)ᵀ; every row needs ‖φ‖ ≤ L.
    #[arg(long)]
    pub k: Option<usize>,
    /// ε ∈ (0, 1] of the (θ̃, Σ̃) pair; the covariance spends ε/2.
    #[arg(long)]
    pub eps: f64,
    /// δ ∈ (0, 1/n²]; the covariance spends δ/2.
    #[arg(long)]
    pub delta: f64,
    /// The feature bound L (every row needs ‖x‖ ≤ 2L); with --horizon H the per-step bound.
    #[arg(long)]
    pub feature_bound: f64,
    /// The rows are trajectory comparisons of H steps: the sensitivity uses H·L (default 1).
    #[arg(long, default_value_t = 1)]
    pub horizon: usize,
    /// replace-one | add-remove.
    #[arg(long, default_value = "replace-one")]
    pub relation: String,
    /// PSD repair: raise eigenvalues below this public floor to it.
    #[arg(long, default_value_t = 0.0)]
    pub eigen_floor: f64,
    /// Skip the PSD repair.
    #[arg(long)]
    pub no_repair: bool,
    /// Seed a simulation generator instead of the OS-seeded CSPRNG (simulations only).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the JSON result here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `privpref covariance` and returns its JSON.
pub fn run_covariance(a: &CovarianceArgs) -> Result<Value, Error> {
    let relation = match a.relation.as_str() {
        "replace-one" => Neighbouring::ReplaceRecord,
        "add-remove" => Neighbouring::AddRemoveRecord,
        other => {
            return Err(Error::param(
                "relation",
                format!("unknown relation `{other}` (expected replace-one or add-remove)"),
            ))
        }
    };
    let mut o = CovarianceOptions::new(a.eps, a.delta, FeatureBound::trajectory(a.horizon, a.feature_bound)?);
    o.relation = relation;
    o.eigen_floor = if a.no_repair { None } else { Some(a.eigen_floor) };
    let mut rng = NoiseRng::from_seed(a.seed)?;
    let (n, d, c) = match a.k {
        None => {
            let m = npy::load_matrix(&a.x)?;
            let (n, d) = (m.n(), m.d());
            // `private_covariance` takes `&[f64]`: float64 features are the mapped file itself,
            // float32 features are widened into a copy.
            let x = super::features_f64(&m);
            (n, d, private_covariance(&x, n, d, &o, &mut rng)?)
        }
        Some(k_arg) => {
            let (x, n, k, d) = npy::read_array3(&a.x)?;
            if k != k_arg {
                return Err(Error::Shape(format!(
                    "--k {k_arg} but {} holds {k} alternatives per sample (shape {n} × {k} × {d})",
                    a.x.display()
                )));
            }
            // Σ_{D_K} does not read the labels: any valid ones do.
            let choices = vec![0u8; n];
            let view = GroupView::new(&x, n, k, d, GroupLabels::Choice(&choices), None)?;
            (n, d, private_covariance_kwise(view, &o, &mut rng)?)
        }
    };
    let rows: Vec<Vec<f64>> = c.matrix.chunks_exact(d).map(|r| r.to_vec()).collect();
    Ok(json!({
        "covariance": rows,
        "k": a.k,
        "n": n,
        "d": d,
        "noise_std": c.noise_std,
        "min_eigenvalue_before_repair": c.min_eigenvalue_before_repair,
        "eigenvalues_floored": c.eigenvalues_floored,
        "eigen_floor": o.eigen_floor,
        "feature_bound_per_step": a.feature_bound,
        "horizon": a.horizon,
        "guarantee": guarantee_json(Some(&c.guarantee)),
        "seed": a.seed,
    }))
}
