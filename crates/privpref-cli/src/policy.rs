//! `privpref policy`: the pessimistic (or greedy) policy of a fitted `θ̂` on a public state
//! sample ("Provable protection of human judgements" (anon., 2025), Algorithm 3; Zhou, Wu & Orabona
//! (2025), Algorithm 2 with `η ∈ {0, 1}`; `privpref::policy`).
//!
//! `λ` and `Γ` come from the rule that matches the fit in `result.json` (the explicit radii of
//! `privpref::policy::radius`): the anonymous 2025 paper's for `--mechanism private-mle` results
//! (with the private covariance of `privpref covariance`), the objective-perturbation radius for
//! `objpert` results, that of Zhou, Wu & Orabona (2025) for `mle` and `debiased-rr` fits (with
//! `--x`, the public pairwise features of the fit: `Σ̂ = (1/n)Σxxᵀ` and `X_max`). `--lambda` and
//! `--confidence-radius` override them.
//!
//! `--empirical-radius` replaces the explicit `Γ` by the data-driven radius of
//! `privpref::policy::empirical` (same `λ`), **asymptotic/empirical, not guaranteed**: the
//! sandwich on the labels the fit saw (`--y`, the privatised labels for debiased-rr) for `mle` and
//! `debiased-rr` fits, the linearised parametric bootstrap at the released `θ` on `--x` (labels
//! unused) plus the ridge bias's worst case over the ball `Θ_B` for `objpert` fits; refused for
//! `private-mle` fits, whose features are private.
//!
//! The JSON's `diagnostics` report, for two comparators (the greedy policy of `θ̂` and the
//! returned policy), the coverage term `‖g(π†)‖_{M⁻¹}` of Zhou, Wu & Orabona (2025), bound (6),
//! and the sub-optimality bound `2Γ‖g(π†)‖_{M⁻¹}` (also "Provable protection of human judgements"
//! (anon., 2025), Thm 4.2 as its proof gives), `g(π†) = E_ρφ(s, π†(s)) − v`
//! (`privpref::policy::diagnostics`), with whether `Γ` is a guaranteed radius.

use crate::ranks::Ranks;
use clap::Args;
use privpref::data::{npy, FeatureBound};
use privpref::feasible::FeasibleSet;
use privpref::mechanism::simulation_rng;
use privpref::par::Par;
use privpref::policy::diagnostics::suboptimality_bound;
use privpref::policy::empirical::{empirical_fit_calibration, EmpiricalInputs};
use privpref::policy::radius::{design_moments, fit_calibration, Calibration, FitRule, RuleError, RuleInputs};
use privpref::policy::{
    greedy_policy, pessimistic_policy, ConfidenceSet, PolicyMethod, PolicyOptions, Reference, StateActions,
};
use privpref::Error;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `privpref policy` arguments.
#[derive(Args)]
pub struct PolicyArgs {
    /// The JSON result of `privpref fit` (θ̂ and how it was obtained).
    #[arg(long)]
    pub theta: PathBuf,
    /// Public state sample: float64 .npy of shape n × A × d (features φ(s, a)).
    #[arg(long)]
    pub states: PathBuf,
    /// Private covariance JSON written by `privpref covariance` (Σ̃; required for private-mle fits).
    #[arg(long)]
    pub covariance: Option<PathBuf>,
    /// The fit's pairwise features X.npy (label-DP fits only: plain Σ̂ = (1/n)Σxxᵀ and X_max).
    #[arg(long)]
    pub x: Option<PathBuf>,
    /// λ of Σ + λI (default: the rule's).
    #[arg(long)]
    pub lambda: Option<f64>,
    /// Confidence radius Γ (default: the rule's explicit radius).
    #[arg(long)]
    pub confidence_radius: Option<f64>,
    /// Failure probability η of the radius (default 0.05).
    #[arg(long, default_value_t = 0.05)]
    pub eta: f64,
    /// Multiplier of Γ (1 = the guaranteed explicit radius).
    #[arg(long, default_value_t = 1.0)]
    pub radius_multiplier: f64,
    /// Multiplier of the default λ (the Zhou, Wu & Orabona 2025 and objpert rules).
    #[arg(long, default_value_t = 1.0)]
    pub lambda_multiplier: f64,
    /// Use the data-driven radius (ASYMPTOTIC/EMPIRICAL, NOT GUARANTEED) instead of the explicit
    /// one: sandwich for mle / debiased-rr fits (needs --x and --y), linearised parametric
    /// bootstrap plus the ridge bias's worst case over the ball for objpert fits (needs --x;
    /// labels unused).
    #[arg(long)]
    pub empirical_radius: bool,
    /// The labels the fit saw (uint8 .npy; the privatised labels for debiased-rr): for
    /// --empirical-radius on mle / debiased-rr fits.
    #[arg(long)]
    pub y: Option<PathBuf>,
    /// Monte-Carlo draws of the empirical radius.
    #[arg(long, default_value_t = 4000)]
    pub empirical_draws: usize,
    /// Seed of those draws (simulation of a known distribution: no privacy at stake).
    #[arg(long, default_value_t = 0)]
    pub empirical_seed: u64,
    /// Θ_B of the confidence set: theta-b | ball | sum-zero | none (default: the fit's constraint).
    #[arg(long)]
    pub set: Option<String>,
    /// B of theta-b / ball (default: the fit's radius).
    #[arg(long)]
    pub radius: Option<f64>,
    /// Reference policy: integer .npy of one action per state (v = its mean feature).
    #[arg(long)]
    pub reference_actions: Option<PathBuf>,
    /// Reference vector v: float .npy of length d.
    #[arg(long)]
    pub reference_vector: Option<PathBuf>,
    /// State weights ρ (non-negative float .npy of length n; default uniform).
    #[arg(long)]
    pub weights: Option<PathBuf>,
    /// η = 0: the greedy policy of θ̂ only (no Frank–Wolfe).
    #[arg(long)]
    pub greedy: bool,
    /// Relative duality-gap tolerance (relative to max(|Ĵ|, upper bound), or to the
    /// objective's range when the optimum is near 0; see privpref::policy).
    #[arg(long, default_value_t = 1e-6)]
    pub tol: f64,
    /// Require the gap relative to |Ĵ| only (no range floor).
    #[arg(long)]
    pub strict_gap: bool,
    /// Maximum passes over the states.
    #[arg(long, default_value_t = 2000)]
    pub max_passes: usize,
    /// `smoothed` (Newton on the smoothed dual, then Frank–Wolfe if it stalls) or
    /// `frank-wolfe` (Frank–Wolfe alone); both stop at the same certified gap.
    #[arg(long, default_value = "smoothed")]
    pub method: String,
    /// Worker threads, 1 to 256 (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the JSON here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the deterministic policy as a uint32 .npy of action indices.
    #[arg(long)]
    pub actions_out: Option<PathBuf>,
    /// Accept a θ̂ whose fit is not certified (`converged` is not true in --theta: a solver that
    /// stopped early, an approximate SGD run). The policy's certificate is then conditional on
    /// that θ̂, and the JSON says so (`theta_certified: false`).
    #[arg(long)]
    pub allow_uncertified_theta: bool,
}

fn io(path: &std::path::Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn read_json(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    serde_json::from_str(&text).map_err(|e| io(path, format!("not valid JSON: {e}")))
}

fn num(v: &Value, key: &str, path: &Path) -> Result<f64, Error> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| io(path, format!("missing or non-numeric field `{key}`")))
}

fn float_vec(v: &Value, key: &str, path: &Path) -> Result<Vec<f64>, Error> {
    let arr = v
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| io(path, format!("missing array field `{key}`")))?;
    arr.iter()
        .map(|x| {
            x.as_f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| io(path, format!("field `{key}` has a non-finite or non-numeric entry")))
        })
        .collect()
}

/// The feature bound a private-MLE fit ran with: per-step `L` and horizon `H` (trajectories;
/// `H = 1` otherwise), or its guarantee's `L`.
fn private_mle_bound(res: &Value, g: &Value, path: &Path) -> Result<FeatureBound, Error> {
    match res.get("feature_bound_per_step").and_then(Value::as_f64) {
        Some(step) => {
            let h = res.get("horizon").and_then(Value::as_u64).unwrap_or(1);
            FeatureBound::trajectory(h as usize, step)
        }
        None => FeatureBound::pairwise(num(g, "feature_bound", path)?),
    }
}

/// The radius rule of the fit in `result.json` (`path`), from its `mechanism` or `loss` and the
/// fields that rule needs.
fn fit_rule(res: &Value, path: &Path) -> Result<FitRule, Error> {
    Ok(match res.get("mechanism").and_then(Value::as_str) {
        Some("private-mle") => {
            let g = res
                .get("guarantee")
                .filter(|g| !g.is_null())
                .ok_or_else(|| io(path, "private-mle result without a guarantee"))?;
            let (eps, delta, bound) = (
                num(g, "eps", path)?,
                num(g, "delta", path)?,
                private_mle_bound(res, g, path)?,
            );
            let alpha = res.get("alpha").and_then(Value::as_f64);
            let accuracy = res.get("accuracy").and_then(Value::as_f64);
            let count = |key: &str| {
                res.get(key)
                    .and_then(Value::as_u64)
                    .map(|v| v as usize)
                    .ok_or_else(|| io(path, format!("K-wise private-mle result without an integer `{key}`")))
            };
            // The K-wise private MLE (Thm 4.3/4.4 of the anonymous 2025 paper): `k` and `top` = J.
            if res.get("k").is_some_and(|k| !k.is_null()) {
                FitRule::PrivateMleKwise {
                    eps,
                    delta,
                    bound,
                    alpha,
                    accuracy,
                    k: count("k")?,
                    stages: count("top")?,
                }
            } else {
                FitRule::PrivateMle {
                    eps,
                    delta,
                    bound,
                    alpha,
                    accuracy,
                }
            }
        }
        Some("objpert") => FitRule::ObjPert {
            noise_std: num(res, "noise_std", path)?,
            beta: num(res, "beta", path)?,
        },
        Some(m) => FitRule::Other(m.to_string()),
        None => match res.get("loss").and_then(Value::as_str) {
            Some("mle") => FitRule::Local { eps: None },
            Some("debiased-rr") => FitRule::Local {
                eps: Some(num(res, "eps", path)?),
            },
            Some(l) => FitRule::Other(l.to_string()),
            None => FitRule::Other("unknown".into()),
        },
    })
}

/// Runs `privpref policy` and returns the JSON (and the deterministic actions).
/// What every rank reads and computes on its own before the policy optimisation.
struct Prepared {
    theta: Vec<f64>,
    set: ConfidenceSet,
    phi: Vec<f64>,
    n: usize,
    na: usize,
    d: usize,
    weights: Option<Vec<f64>>,
    ref_actions: Option<Vec<u32>>,
    ref_vec: Option<Vec<f64>>,
    opts: PolicyOptions,
    common: Value,
    sigma: Option<Vec<f64>>,
    lambda: f64,
    gamma: f64,
    guaranteed: bool,
}

/// `privpref policy` (`mpirun -np P` too: every rank reads the same files and runs its part of
/// the states in each Frank–Wolfe pass, [`StateActions::distributed`]; every rank gets the same
/// bits, and only rank 0 writes `--actions-out`). Returns the JSON and whether it converged.
pub fn run(a: &PolicyArgs, ranks: &Ranks) -> Result<(Value, bool), Error> {
    let p = ranks.agree(prepare(a))?;
    let len = |v: Option<usize>| v.unwrap_or(0);
    ranks.same_shapes(
        &[
            p.n,
            p.na,
            p.d,
            len(p.weights.as_ref().map(Vec::len)),
            len(p.ref_actions.as_ref().map(Vec::len)),
            len(p.ref_vec.as_ref().map(Vec::len)),
        ],
        "states, actions, features, weights, reference actions, reference vector",
    )?;
    let st = ranks.agree(StateActions::new(&p.phi, p.n, p.na, p.d, p.weights.as_deref()))?;
    let st = match ranks.group() {
        Some(g) => st.distributed(g),
        None => st,
    };
    let reference = match (&p.ref_actions, &p.ref_vec) {
        (Some(r), _) => Reference::Actions(r),
        (_, Some(v)) => Reference::Vector(v),
        _ => Reference::None,
    };
    let (theta, set, opts) = (&p.theta, &p.set, &p.opts);
    let (mut out, actions, greedy_actions, converged) = if a.greedy {
        let g = greedy_policy(&st, theta, &reference, set, Par::Rayon)?;
        let ga = g.actions.clone();
        (
            json!({
                "eta_switch": 0,
                "policy": "greedy",
                "plug_in_value": g.plug_in_value,
                "value": g.pessimistic_value,
            }),
            g.actions,
            ga,
            true,
        )
    } else {
        let r = pessimistic_policy(&st, &reference, set, opts)?;
        let conv = r.termination == privpref::policy::PolicyTermination::Converged;
        let vacuous = vacuity(set);
        if let (Some(why), true) = (&vacuous, ranks.is_root()) {
            eprintln!("privpref: note: pessimism is vacuous: {why}; --greedy drops pessimism (and its guarantee), more data or a larger eps shrinks the radius");
        }
        (
            json!({
                "vacuous": vacuous.is_some(),
                "vacuous_reason": vacuous,
                "covering_radius": set.covering_radius(),
                "eta_switch": 1,
                "policy": "pessimistic",
                "value": r.deterministic_value,
                "stochastic_value": r.value,
                "upper_bound": r.upper_bound,
                "gap": r.gap,
                "rel_gap": r.rel_gap,
                "objective_range": r.range,
                "gap_over_range": r.gap / r.range,
                "termination": r.termination.as_str(),
                "converged": conv,
                "method": opts.method.as_str(),
                "iterations": r.iterations,
                "smoothed_passes": r.smoothed_passes,
                "temperature": r.temperature,
                "passes": r.passes,
                "randomized_states_fw": r.randomized_fw,
                "randomized_states_purified": r.purify.randomized_after,
                "rounded_states": r.rounded_states,
                "rounding_bound": r.rounding_bound,
                "greedy_value": r.greedy.pessimistic_value,
                "greedy_plug_in_value": r.greedy.plug_in_value,
                "theta_min": r.theta_min,
                "elapsed_s": r.elapsed.as_secs_f64(),
            }),
            r.actions,
            r.greedy.actions.clone(),
            conv,
        )
    };
    let diag = |acts: &[u32]| -> Result<Value, Error> {
        let b = suboptimality_bound(
            &st,
            &Reference::Actions(acts),
            &reference,
            p.sigma.as_deref(),
            p.lambda,
            p.gamma,
        )?;
        Ok(json!({"coverage_term": b.coverage_term, "subopt_bound": b.bound}))
    };
    let diagnostics = json!({
        "comparator_greedy": diag(&greedy_actions)?,
        "comparator_returned_policy": diag(&actions)?,
        "radius_guaranteed": p.guaranteed,
        "note": "SubOpt(pi, comparator) <= subopt_bound = 2 Gamma ||E_rho phi(s, comparator(s)) - v||_{(Sigma + lambda I)^-1} (Zhou, Wu & Orabona 2025, bound (6); anon. 2025, Thm 4.2 as its proof gives) on the event that theta* is in the confidence set: guaranteed only when radius_guaranteed",
    });
    if let (Some(o), Some(c)) = (out.as_object_mut(), p.common.as_object()) {
        for (k, v) in c {
            o.insert(k.clone(), v.clone());
        }
        o.insert("actions".into(), json!(actions));
        o.insert("diagnostics".into(), diagnostics);
        o.insert("ranks".into(), json!(ranks.size()));
    }
    if let (Some(path), true) = (&a.actions_out, ranks.is_root()) {
        super::atomic::write_with(path, |tmp| npy::write_u32(tmp, &actions))?;
    }
    Ok((out, converged))
}

/// Why pessimism over `set` is vacuous, when it is: the confidence radius reaches past the whole
/// bounded parameter set ([`ConfidenceSet::covers_parameter_set`]), so every policy's pessimistic
/// value is at most the reference's (0) whatever θ̂ is, and the optimisation — however well it
/// converges — can only return a policy no better than the reference.
fn vacuity(set: &ConfidenceSet) -> Option<String> {
    if !set.covers_parameter_set() {
        return None;
    }
    let used = set.used_set();
    Some(format!(
        "the confidence radius {:.4} covers the whole {} set of radius {} (every radius from {:.4} does), so every policy's pessimistic value is at most 0, the reference's, whatever theta says (converged: true only says this problem is solved)",
        set.radius(),
        used.name(),
        used.radius().unwrap_or(f64::NAN),
        set.covering_radius().unwrap_or(f64::NAN),
    ))
}

/// Reads the inputs and computes the confidence set (each rank on its own).
fn prepare(a: &PolicyArgs) -> Result<Prepared, Error> {
    let res = read_json(&a.theta)?;
    let theta = float_vec(&res, "theta", &a.theta)?;
    let d = theta.len();
    if d == 0 {
        return Err(io(&a.theta, "`theta` is empty"));
    }
    // A certified policy needs a certified θ̂: the confidence set is centred on it.
    let theta_certified = res.get("converged").and_then(Value::as_bool) == Some(true);
    if !theta_certified && !a.allow_uncertified_theta {
        let why = res
            .get("termination")
            .and_then(Value::as_str)
            .unwrap_or("no `converged: true`");
        return Err(Error::param(
            "theta",
            format!(
                "the fit in {} is not certified ({why}): a policy on it would certify nothing; refit until it converges, or pass --allow-uncertified-theta",
                a.theta.display()
            ),
        ));
    }
    let private_mle = res.get("mechanism").and_then(Value::as_str) == Some("private-mle");
    // Θ_B.
    let set_name = match &a.set {
        Some(s) => s.clone(),
        None => res
            .get("constraint")
            .and_then(Value::as_str)
            .unwrap_or("none")
            .to_string(),
    };
    let radius_b = a.radius.or_else(|| res.get("radius").and_then(Value::as_f64));
    let set_kind = FeasibleSet::parse(
        &set_name,
        if matches!(set_name.as_str(), "theta-b" | "ball") {
            radius_b
        } else {
            None
        },
    )?;
    // Σ and X_max.
    if private_mle && a.x.is_some() {
        return Err(Error::param(
            "x",
            "the features are private under the private MLE (standard DP): pass the private covariance (--covariance), not --x",
        ));
    }
    if a.x.is_some() && a.covariance.is_some() {
        return Err(Error::param("covariance", "give either --covariance or --x, not both"));
    }
    let mut x_loaded = None;
    let (sigma, x_max): (Option<Vec<f64>>, Option<f64>) = if let Some(p) = &a.covariance {
        let c = read_json(p)?;
        let rows = c
            .get("covariance")
            .and_then(Value::as_array)
            .ok_or_else(|| io(p, "missing `covariance` (expected the output of `privpref covariance`)"))?;
        let mut m = Vec::with_capacity(d * d);
        for r in rows {
            let r = r.as_array().ok_or_else(|| io(p, "`covariance` rows must be arrays"))?;
            for x in r {
                m.push(
                    x.as_f64()
                        .filter(|f| f.is_finite())
                        .ok_or_else(|| io(p, "non-finite covariance entry"))?,
                );
            }
        }
        if rows.len() != d || m.len() != d * d {
            return Err(Error::Shape(format!(
                "covariance is {} values in {} rows, expected d x d = {d} x {d}",
                m.len(),
                rows.len()
            )));
        }
        (Some(m), None)
    } else if let Some(p) = &a.x {
        let m = npy::load_matrix(p)?;
        let (n, dx) = (m.n(), m.d());
        if dx != d {
            return Err(Error::Shape(format!("--x has d = {dx} columns, theta has {d}")));
        }
        // Row by row from the (mapped) file: float32 rows are widened one at a time.
        let (s, xmax) = design_moments(m.features(), n, d)?;
        x_loaded = Some(m);
        (Some(s), Some(xmax))
    } else {
        (None, None)
    };
    // λ and Γ.
    let n_fit = res.get("n").and_then(Value::as_u64).map(|v| v as usize);
    if a.empirical_radius && a.confidence_radius.is_some() {
        return Err(Error::param(
            "empirical-radius",
            "give either --empirical-radius or --confidence-radius, not both",
        ));
    }
    if a.y.is_some() && !a.empirical_radius {
        return Err(Error::param("y", "--y is only read with --empirical-radius"));
    }
    let rule: Option<Calibration> = if a.lambda.is_some() && a.confidence_radius.is_some() {
        None
    } else {
        let mut inp = RuleInputs::new(n_fit, d, radius_b, x_max, sigma.is_some());
        (inp.eta, inp.radius_multiplier, inp.lambda_multiplier) = (a.eta, a.radius_multiplier, a.lambda_multiplier);
        let fr = fit_rule(&res, &a.theta)?;
        let cal = if a.empirical_radius {
            if private_mle {
                return Err(Error::param(
                    "empirical-radius",
                    "not available for private-mle fits: the data-driven radius needs public features, and under standard DP they are private",
                ));
            }
            let m = x_loaded
                .as_ref()
                .ok_or_else(|| Error::param("x", "--empirical-radius needs the fit's public features (--x)"))?;
            let labels = match (&fr, &a.y) {
                (FitRule::Local { .. }, Some(p)) => {
                    let y = npy::read_labels(p, 2)?;
                    if y.len() != m.n() {
                        return Err(Error::Shape(format!("--y has {} labels, --x has {} rows", y.len(), m.n())));
                    }
                    Some(y)
                }
                (FitRule::Local { .. }, None) => {
                    return Err(Error::param(
                        "y",
                        "--empirical-radius on an mle / debiased-rr fit needs the labels the fit saw (--y; the privatised labels for debiased-rr)",
                    ))
                }
                (_, Some(_)) => {
                    return Err(Error::param(
                        "y",
                        "the labels must not enter the radius of a central-DP fit: drop --y",
                    ))
                }
                _ => None,
            };
            if n_fit.is_some_and(|nf| nf != m.n()) {
                return Err(Error::Shape(format!(
                    "--x has {} rows, the fit has n = {:?}",
                    m.n(),
                    n_fit
                )));
            }
            let inputs = EmpiricalInputs {
                x: m.features(),
                labels: labels.as_deref(),
                theta: &theta,
                sigma: sigma.as_deref(),
                draws: a.empirical_draws,
            };
            empirical_fit_calibration(&fr, &inp, &inputs, &mut simulation_rng(a.empirical_seed))
        } else {
            fit_calibration(&fr, &inp)
        };
        Some(cal.map_err(|e| match e {
            RuleError::MissingCovariance => Error::param(
                "covariance",
                "a private-mle fit needs the private covariance (--covariance from `privpref covariance`)",
            ),
            RuleError::MissingSampleSize => io(&a.theta, "missing field `n`"),
            RuleError::MissingRadius => Error::param("radius", "the radius rule needs B (--radius)"),
            RuleError::MissingFeatures(what) => Error::param(
                "x",
                format!(
                    "{what} needs the fit's features (--x) for Σ̂ and X_max, or give --lambda and --confidence-radius"
                ),
            ),
            RuleError::NoRule(name) => Error::param(
                "confidence-radius",
                format!("no explicit radius rule for a `{name}` fit: give --lambda and --confidence-radius"),
            ),
            RuleError::Invalid(e) => e,
        })?)
    };
    let lambda = a.lambda.or(rule.as_ref().map(|r| r.lambda)).unwrap_or(0.0);
    let gamma = a.confidence_radius.or(rule.as_ref().map(|r| r.radius)).unwrap_or(0.0);
    let set = ConfidenceSet::new(&theta, sigma.as_deref(), lambda, gamma, set_kind)?;
    // States, weights, reference.
    let (phi, n, na, ds) = npy::read_array3(&a.states)?;
    if ds != d {
        return Err(Error::Shape(format!("states have d = {ds} features, theta has {d}")));
    }
    let weights = a.weights.as_ref().map(npy::read_vector).transpose()?;
    if a.reference_actions.is_some() && a.reference_vector.is_some() {
        return Err(Error::param(
            "reference-vector",
            "give at most one of --reference-actions and --reference-vector",
        ));
    }
    let ref_actions: Option<Vec<u32>> = match &a.reference_actions {
        Some(p) => {
            if na > 256 {
                return Err(Error::param(
                    "reference-actions",
                    "supported for at most 256 actions per state",
                ));
            }
            Some(npy::read_labels(p, na as u32)?.into_iter().map(u32::from).collect())
        }
        None => None,
    };
    let ref_vec = a.reference_vector.as_ref().map(npy::read_vector).transpose()?;
    if !(a.tol.is_finite() && a.tol >= 0.0) {
        return Err(Error::param("tol", format!("must be finite and >= 0, got {}", a.tol)));
    }
    let mut opts = PolicyOptions::default();
    opts.tol_rel = a.tol;
    opts.tol_abs = if a.strict_gap { Some(0.0) } else { None };
    opts.max_passes = a.max_passes;
    opts.method = match a.method.as_str() {
        "smoothed" => PolicyMethod::Smoothed,
        "frank-wolfe" => PolicyMethod::FrankWolfe,
        other => {
            return Err(Error::param(
                "method",
                format!("must be smoothed or frank-wolfe, got {other:?}"),
            ))
        }
    };
    opts.par = Par::Rayon;
    let common = json!({
        "theta_certified": theta_certified,
        "lambda": lambda,
        "confidence_radius": gamma,
        "rule": rule.as_ref().map(|r| r.rule),
        "radius_terms": rule.as_ref().map(|r| r.terms.iter().map(|(k, v)| json!({"name": k, "value": v})).collect::<Vec<_>>()),
        "curvature_gamma": rule.as_ref().map(|r| r.gamma),
        "eta": a.eta,
        "radius_multiplier": a.radius_multiplier,
        "radius_kind": if a.empirical_radius { "empirical (asymptotic/empirical, not guaranteed)" } else if a.confidence_radius.is_some() { "given" } else { "explicit" },
        "set_requested": set.requested_set().name(),
        "set_used": set.used_set().name(),
        "set_radius": set.used_set().radius(),
        "set_fallback": set.fallback(),
        "n_states": n,
        "actions_per_state": na,
        "d": d,
        "guarantee": res.get("guarantee").cloned().unwrap_or(Value::Null),
        "guarantee_note": "the policy is post-processing of the released theta (and covariance): it carries their guarantee; the states, weights and reference must be public",
    });
    Ok(Prepared {
        theta,
        set,
        phi,
        n,
        na,
        d,
        weights,
        ref_actions,
        ref_vec,
        opts,
        common,
        guaranteed: !a.empirical_radius
            && a.confidence_radius.is_none()
            && a.lambda.is_none()
            && a.radius_multiplier >= 1.0,
        sigma,
        lambda,
        gamma,
    })
}
