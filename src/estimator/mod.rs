//! Estimators of Chowdhury, Zhou & Natarajan (2024) on pairwise data, as one
//! entry point: a loss, a feasible set, optional ridge / linear term, and a solver.
//!
//! * non-private MLE (eq. 8): `loss = Mle` on clear labels;
//! * MLE-RR (eq. 3): `loss = MleRr { eps }` on labels privatised by
//!   [`RandomizedResponse`](crate::mechanism::RandomizedResponse) at the same `eps`;
//! * debiased RR (eqs. 4–6, the paper's local estimator `θ̂_RR`): `loss = DebiasedRr { eps }`
//!   over `Θ_B` (the loss is unbounded below: keep the ball);
//! * Thurstone MLE (Sec. 4.4): `loss = Probit`.
//!
//! Label-private convex learning by one-pass SGD that privatises each label when it is used
//! (Ghazi et al. (2021): LP-RR-SGD, RRTop-k, RR-with-prior, LP-Normal-SGD, multi-stage training) is
//! in [`label_sgd`].
//!
//! User-level label DP (Zhang et al. (2025): user-level RR, user-wise DP-SGD, AUP-RLHF) is in
//! [`user_level`].
//!
//! The local estimators are post-processing of `ε`-label-LDP labels, hence `ε`-label-LDP
//! themselves; this module does not randomise labels (see [`crate::mechanism`]).
//!
//! **Guarantees follow the labels.** [`fit`] takes raw labels and attaches no local guarantee,
//! whatever the loss (the debiased loss is a valid estimator, but nothing shows its labels were
//! randomised, at which `ε`, or with which generator); the model says why
//! ([`Fit::no_guarantee`]). [`fit_privatized`] takes
//! [`PrivatizedLabels`] and attaches the guarantee of their
//! [`Provenance`]: library-privatised (CSPRNG, or simulation-only
//! for a seeded generator), recorded, or asserted by the caller. A loss calibrated to another
//! randomiser, `ε` or `K` than the labels' is [`Error::ProvenanceMismatch`].
//! # Example
//!
//! The MLE on the closed-form case T1 (`tests/reference/README.md`): the exact answer is known.
//! ```
//! use privpref::{data::PairwiseView, estimator::{fit, FitOptions}, feasible::FeasibleSet, loss::LossSpec};
//! // One-hot rows, 3 of 4 preferred for item 0, 1 of 4 for item 1, 2 of 4 for item 2.
//! let mut x = Vec::new();
//! let mut y = Vec::new();
//! for (j, wins) in [(0usize, 3usize), (1, 1), (2, 2)] {
//!     for k in 0..4 {
//!         let mut row = [0.0; 3];
//!         row[j] = 1.0;
//!         x.extend_from_slice(&row);
//!         y.push((k < wins) as u8);
//!     }
//! }
//! let view = PairwiseView::new(&x, 12, 3, &y, None)?;
//! // The default tolerance (a relative KKT residual of 1e-10) gives about 9 digits; ask for 12.
//! let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0)?);
//! opts.control.tol_rel = 1e-13;
//! let model = fit(view, &opts)?;
//! let l3 = 3f64.ln();
//! assert!(model.report.converged());
//! for (a, b) in model.theta.iter().zip([l3, -l3, 0.0]) {
//!     assert!((a - b).abs() < 1e-12);
//! }
//! # Ok::<(), privpref::Error>(())
//! ```

use crate::data::scan::FeatureScan;
use crate::data::{check_shape, Features, PairwiseView};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::loss::{Loss, LossSpec};
use crate::model::{Fit, FitConfig, Local, NoGuarantee};
use crate::objective::{Objective, SecondOrderObjective};
use crate::privacy::{Guarantee, PrivatizedLabels, Provenance, Randomizer};
use crate::solver::lbfgs::LbfgsOptions;
use crate::solver::sgd::SgdObjective;
use crate::solver::sgd::SgdOptions;
use crate::solver::{lbfgs, newton, newton_cg, sgd, Control, SolveReport, Termination};
use crate::with_loss;
use sample_start::SampleStart;

pub mod central;
pub(crate) mod kwise;
pub mod label_sgd;
pub(crate) mod normalize;
pub mod private_mle;
pub mod private_mle_kwise;
pub mod robust;
pub mod sample_start;
pub mod user_level;

pub use kwise::{fit_kwise, fit_kwise_privatized};

/// Which solver to use. The default is [`SolverKind::Auto`], the fastest certified solver for
/// the loss and the shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SolverKind {
    /// Exact projected Newton ([`crate::solver::newton`]).
    Newton,
    /// Hessian-free truncated Newton-CG ([`crate::solver::newton_cg`]): no `d × d` matrix,
    /// one pass over the data per CG iteration.
    NewtonCg,
    /// Projected L-BFGS ([`crate::solver::lbfgs`]).
    Lbfgs,
    /// Projected SGD: one-pass SGD-RR (Algorithm 1 of Chowdhury, Zhou & Natarajan (2024)) or
    /// mini-batch ([`crate::solver::sgd`]).
    Sgd,
    /// An exact solver chosen from the loss and the shape ([`auto_solver`]), with a
    /// second-order fallback ([`auto_fallback`]): when the first solver is L-BFGS and it stops
    /// without converging (iteration budget, failed line search), dense Newton (`d ≤`
    /// [`AUTO_DENSE_NEWTON_MAX_D`]) or Newton-CG (larger `d`) continues from its point. For a
    /// convex loss with `n > 16d` L-BFGS also stops after [`AUTO_PROBE_ITERS`] iterations if
    /// its measured rate says it would need more than twice as many again (an ill-conditioned
    /// design), and the fallback continues from its point — for `d > 64` Newton-CG with the
    /// row-sample preconditioner. From the default start, where a row sample judges the design
    /// for at most half a pass's worth of flops — `4·128` rows on 128 of the columns (`d > 128`,
    /// `n·d ≥ 1.2·10⁶`), or `4d` rows on all of them (`n ≥ 0.56·d²`) — a sample that shows
    /// conditioning beyond what column scaling removes sends the fit to the fallback without
    /// the probe (Newton-CG's own take-or-decline test, on fewer rows; a column subset's
    /// condition number is at most the design's). The report is
    /// the last solver's, with the counts and time of both. Dense Newton is never
    /// chosen when its planned memory exceeds
    /// [`Control::memory_limit`](crate::solver::Control::memory_limit)
    /// ([`newton::fits`]): L-BFGS, then Newton-CG, instead. The
    /// default.
    #[default]
    Auto,
}

/// Largest `d` for which [`SolverKind::Auto`] falls back to dense Newton rather than
/// Newton-CG. Measured (`bench-results/fits.md`, `n·d = 2e7`, well-conditioned BTL data):
/// Newton-CG is 1.2× faster at `d = 10`, on a par at `d = 30`, and 1.4–8.6× faster from
/// `d = 100` (where dense Newton's `n·d²` Hessians dominate). The fallback runs when L-BFGS has
/// failed, i.e. on ill-conditioned problems, where CG needs more iterations while dense Newton's
/// cost does not change. The cut at 64, between the measured d = 30 (on a par) and d = 100
/// (Newton-CG ahead), is a judgement, not a measurement: no fallback run on ill-conditioned data
/// at d = 30–100 was timed.
pub const AUTO_DENSE_NEWTON_MAX_D: usize = 64;

/// Largest `d` for which [`SolverKind::Auto`] starts a non-convex loss (`mle-rr`) with dense
/// Newton instead of L-BFGS. Measured at `d = 10` (n = 2e6, 2 threads): Newton 0.31–0.42 s,
/// L-BFGS 0.31–0.57 s, Newton-CG 0.43–1.2 s (1 thread: 0.66–0.75, 0.54–0.59, 0.85–0.90 s); at
/// `d = 30` L-BFGS 0.13–0.31 s against Newton 0.24–0.52 s.
pub const AUTO_NONCONVEX_NEWTON_MAX_D: usize = 16;

/// The first solver [`SolverKind::Auto`] runs for a loss with convexity `convex` on `n`
/// samples in dimension `d`.
///
/// Measured with `examples/large_fit` (`benches/fits_matrix.sh`, `bench-results/fits.md`: BTL
/// data, `Θ_B` with `B = 2` and sum-zero with `‖θ*‖ = 4`, 1 and 2 threads, shared machine):
///
/// * **convex loss** (`mle`, `debiased-rr`, `probit`, the K-wise losses) → **L-BFGS** at every
///   shape. It reached the KKT tolerance fastest at every measured shape, `d` from 10 to 2000
///   and `n` from 1e4 to 2e6: 1.5–2.5× faster than Newton-CG and 2–17× faster than dense Newton
///   (11–52 passes of `O(nd)` against Newton-CG's 23–98 passes and dense Newton's `O(nd²)`
///   Hessians).
/// * **non-convex loss** (`mle-rr`) → **dense Newton** for `d ≤`
///   [`AUTO_NONCONVEX_NEWTON_MAX_D`] (on a par with L-BFGS there, and the previous rule),
///   **L-BFGS** beyond: from `d = 30` to `d = 2000` it was 1.4–9× faster than Newton-CG,
///   and dense Newton took 16–27 s at `(2e4, 1000)` (33 iterations) and did not converge
///   within 100 iterations at `(1e4, 2000)`, where L-BFGS converged in 2.9–5.7 s.
///
/// `n` does not move the choice of solver within the measured range: every solver's cost per
/// pass is proportional to `n` (dense Newton's `d³/3` Cholesky is negligible against its `n·d²`
/// Hessian while `n ≥ d/3`, which holds wherever dense Newton is chosen). It moves how L-BFGS
/// starts: with `n ≥ 4096·d` rows and a convex loss it starts from a run on every 32nd row
/// ([`sample_start`]), which cut the full passes over `X` from 10–12 to 6–9 (plus about 0.3 of
/// a pass on the sample) at the peer benchmark's shapes with `n/d ≥ 10⁴`
/// (`bench-results/fits.md`). Newton-CG is the first choice only on very wide data (below); it
/// is the fallback for large `d` ([`auto_fallback`]),
/// where a second-order method is wanted after L-BFGS has failed and dense Newton costs
/// `n·d²` per iteration and `8d²` bytes — and, for a convex loss with `n > 16d`, on a design
/// a cheap row sample shows ill-conditioned (from the default start, where the sample costs at
/// most half a pass's worth of flops: `4·128` rows on 128 columns, or `4d` rows on all `d`), or
/// after L-BFGS has shown a slow rate in
/// its first [`AUTO_PROBE_ITERS`] iterations (those measurements were all on isotropic designs;
/// on a rotated power-law design of condition number `d` at `(2·10⁵, 512)` L-BFGS took 210
/// passes, the sample-preconditioned Newton-CG 22, auto with the probe 34 and with the sample
/// judgement 22, `bench-results/peers-powerlaw-accurate-stop.md`; at `(10⁵, 2048)` and
/// `(2.5·10⁵, 4096)` in `f32` Newton-CG 38 and 39, auto with the probe 48 and 50 and with the
/// column-subset judgement 38 and 39, `bench-results/auto-column-subset.md`).
///
/// * **very wide data** (convex loss, `d ≥` [`AUTO_WIDE_RATIO`]`·n`) → **Newton-CG**: the
///   Hessian has rank at most `n`, so CG needs about `n` products per step, each a cheap pass
///   over `n` rows; see the constant for the measurements.
pub fn auto_solver(convex: bool, n: usize, d: usize) -> SolverKind {
    if !convex && d <= AUTO_NONCONVEX_NEWTON_MAX_D {
        SolverKind::Newton
    } else if convex && d / AUTO_WIDE_RATIO >= n.max(1) {
        SolverKind::NewtonCg
    } else {
        SolverKind::Lbfgs
    }
}

/// [`SolverKind::Auto`] starts a convex loss with Newton-CG when `d ≥ AUTO_WIDE_RATIO · n`.
/// Measured on Gaussian features (`fit --loss mle`, `Θ_B` with `B = 2` and unconstrained with
/// ridge 1, 2-core shared machine, 2026-12-03): at `(10, 200 000)` with unit-variance entries
/// (`‖x‖ ≈ 450`, separable) Newton-CG converged in 6.5 s and 0.8 s where L-BFGS took 69 s (not
/// converged after its 1000 iterations) and 6.9 s; at `(100, 20 000)` the two were level
/// (Newton-CG/L-BFGS 0.20/0.19 s and 0.09/0.20 s); at `(1000, 50 000)` L-BFGS was 1.4–2.5×
/// faster, at `(1000, 5000)` level in the ball and 1.9× faster unconstrained.
pub const AUTO_WIDE_RATIO: usize = 1000;

/// The solver [`SolverKind::Auto`] continues with when L-BFGS stops without converging: dense
/// Newton for `d ≤` [`AUTO_DENSE_NEWTON_MAX_D`], Newton-CG beyond (see the constant).
pub fn auto_fallback(n: usize, d: usize) -> SolverKind {
    let _ = n;
    if d <= AUTO_DENSE_NEWTON_MAX_D {
        SolverKind::Newton
    } else {
        SolverKind::NewtonCg
    }
}

impl SolverKind {
    /// Parses the CLI name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "newton" => Ok(SolverKind::Newton),
            "newton-cg" => Ok(SolverKind::NewtonCg),
            "lbfgs" => Ok(SolverKind::Lbfgs),
            "sgd" => Ok(SolverKind::Sgd),
            "auto" => Ok(SolverKind::Auto),
            other => Err(Error::param(
                "solver",
                format!("unknown solver `{other}` (expected newton, newton-cg, lbfgs, sgd or auto)"),
            )),
        }
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            SolverKind::Newton => "newton",
            SolverKind::NewtonCg => "newton-cg",
            SolverKind::Lbfgs => "lbfgs",
            SolverKind::Sgd => "sgd",
            SolverKind::Auto => "auto",
        }
    }
}

/// The solver of a fit, carrying its own settings: the settings of a solver that does not run
/// cannot be given. The default is [`Solver::Auto`] with default L-BFGS settings.
///
/// ```
/// use privpref::estimator::{Solver, SolverKind};
/// use privpref::solver::lbfgs::LbfgsOptions;
///
/// let mut lbfgs = LbfgsOptions::default();
/// lbfgs.memory = 20;
/// let solver = Solver::Lbfgs(lbfgs);
/// assert_eq!((solver.kind(), solver.name()), (SolverKind::Lbfgs, "lbfgs"));
/// assert_eq!(Solver::from(SolverKind::Newton), Solver::Newton);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Solver {
    /// Exact projected Newton ([`crate::solver::newton`]).
    Newton,
    /// Hessian-free truncated Newton-CG ([`crate::solver::newton_cg`]).
    NewtonCg,
    /// Projected L-BFGS ([`crate::solver::lbfgs`]) with its settings.
    Lbfgs(LbfgsOptions),
    /// Projected SGD ([`crate::solver::sgd`]) with its settings.
    Sgd(SgdOptions),
    /// The rule of [`SolverKind::Auto`]; the settings are those of its L-BFGS stage.
    Auto(LbfgsOptions),
}

impl Default for Solver {
    fn default() -> Self {
        Solver::Auto(LbfgsOptions::default())
    }
}

impl From<SolverKind> for Solver {
    /// The solver `kind` with default settings.
    fn from(kind: SolverKind) -> Self {
        match kind {
            SolverKind::Newton => Solver::Newton,
            SolverKind::NewtonCg => Solver::NewtonCg,
            SolverKind::Lbfgs => Solver::Lbfgs(LbfgsOptions::default()),
            SolverKind::Sgd => Solver::Sgd(SgdOptions::default()),
            SolverKind::Auto => Solver::Auto(LbfgsOptions::default()),
        }
    }
}

impl Solver {
    /// Which solver this is.
    pub fn kind(&self) -> SolverKind {
        match self {
            Solver::Newton => SolverKind::Newton,
            Solver::NewtonCg => SolverKind::NewtonCg,
            Solver::Lbfgs(_) => SolverKind::Lbfgs,
            Solver::Sgd(_) => SolverKind::Sgd,
            Solver::Auto(_) => SolverKind::Auto,
        }
    }
    /// The CLI name ([`SolverKind::name`]).
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
    /// Checks the settings ([`LbfgsOptions::validate`], [`SgdOptions::validate`]).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the first invalid setting.
    pub fn validate(&self) -> Result<()> {
        match self {
            Solver::Lbfgs(o) | Solver::Auto(o) => o.validate(),
            Solver::Sgd(o) => o.validate(),
            Solver::Newton | Solver::NewtonCg => Ok(()),
        }
    }
}

/// Everything [`fit`] (and, with `S = `[`GroupLossSpec`](crate::loss::GroupLossSpec),
/// [`fit_kwise`]) needs besides the data.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FitOptions<S = LossSpec> {
    /// The loss.
    pub loss: S,
    /// The feasible set.
    pub set: FeasibleSet,
    /// Ridge `β ≥ 0`.
    pub ridge: f64,
    /// Linear term `b` (length `d`), e.g. the objective-perturbation noise.
    pub linear_term: Option<Vec<f64>>,
    /// The solver and its settings.
    pub solver: Solver,
    /// Stopping rules and parallelism.
    pub control: Control,
    /// Warm start.
    pub theta0: Option<Vec<f64>>,
}

impl<S> FitOptions<S> {
    /// Defaults: no ridge, no linear term, [`Solver::Auto`], default [`Control`].
    pub fn new(loss: S, set: FeasibleSet) -> Self {
        FitOptions {
            loss,
            set,
            ridge: 0.0,
            linear_term: None,
            solver: Solver::default(),
            control: Control::default(),
            theta0: None,
        }
    }

    /// Checks every setting: the ridge (finite, `≥ 0`), the linear term and warm start
    /// (finite), [`Control::validate`] and [`Solver::validate`]. [`fit`] and [`fit_kwise`] call
    /// it first.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the first invalid setting.
    pub fn validate(&self) -> Result<()> {
        if !(self.ridge.is_finite() && self.ridge >= 0.0) {
            return Err(Error::param(
                "ridge",
                format!("must be finite and >= 0, got {}", self.ridge),
            ));
        }
        for (name, v) in [("linear-term", &self.linear_term), ("theta0", &self.theta0)] {
            if let Some(j) = v.as_deref().and_then(|b| b.iter().position(|x| !x.is_finite())) {
                return Err(Error::param(name, format!("entry {j} is not finite")));
            }
        }
        self.control.validate()?;
        self.solver.validate()
    }
}

fn solve_auto<O: SecondOrderObjective + SgdObjective, S>(
    obj: &O,
    opts: &FitOptions<S>,
    lbfgs_opts: &LbfgsOptions,
    start: Option<SampleStart>,
) -> Result<SolveReport> {
    let (n, d) = (obj.num_samples(), obj.dim());
    let theta0 = opts.theta0.as_deref();
    // Rows distributed for the Hessian-free solvers: no dense Newton, first or second.
    // Nor when its d × d matrices do not fit in memory.
    let dense = obj.dense_hessian_available() && newton::fits(obj.num_scores(), d, &opts.control);
    match auto_solver(O::CONVEX, n, d) {
        SolverKind::Newton if dense => newton::solve(obj, &opts.set, theta0, &opts.control),
        SolverKind::NewtonCg => newton_cg::solve(obj, &opts.set, theta0, &opts.control),
        _ => {
            // A design a cheap row sample shows ill-conditioned (from the default start): the
            // second-order fallback straight away.
            if theta0.is_none()
                && start.is_none()
                && newton_cg::sample_looks_ill_conditioned(obj, &opts.set, &opts.control) == Some(true)
            {
                return match auto_fallback(n, d) {
                    SolverKind::Newton if dense => newton::solve(obj, &opts.set, None, &opts.control),
                    _ => newton_cg::solve(obj, &opts.set, None, &opts.control),
                };
            }
            // A convex loss on data tall enough for Newton-CG's sample preconditioner: L-BFGS
            // stops early when its rate shows an ill-conditioned design.
            let probe = (O::CONVEX && newton_cg::offers_sample(n, d)).then_some(AUTO_PROBE_ITERS);
            let first = solve_lbfgs(obj, opts, lbfgs_opts, probe, start)?.0;
            let retry = matches!(
                first.termination,
                Termination::MaxIterations | Termination::LineSearchFailed
            );
            if !retry {
                return Ok(first);
            }
            let start = Some(&first.theta[..]);
            let mut second = match auto_fallback(n, d) {
                SolverKind::Newton if dense => newton::solve(obj, &opts.set, start, &opts.control)?,
                _ => newton_cg::solve(obj, &opts.set, start, &opts.control)?,
            };
            second.counts += &first.counts;
            Ok(second)
        }
    }
}

/// The iterations after which [`SolverKind::Auto`]'s L-BFGS stops when it is slow to converge
/// (`lbfgs::slow_to_converge`: at its mean rate so far it would need more than twice as many
/// again). Measured on the rotated power-law design at `(2·10⁵, 512)` (`fit --loss mle
/// --constraint none`, 2026-12-03): L-BFGS alone 210 passes; a probe of 20 iterations then
/// Newton-CG 73, of 10 then Newton-CG 63, Newton-CG alone 51.
pub const AUTO_PROBE_ITERS: usize = 10;

/// L-BFGS from `opts.theta0`, or from the row sample's point and curvature `start`, whose work
/// the report then includes ([`sample_start`]); stopped early when slow with `probe`
/// (`lbfgs::solve_seeded`). With the run's curvature pairs.
fn solve_lbfgs<O: SecondOrderObjective, S>(
    obj: &O,
    opts: &FitOptions<S>,
    lbfgs_opts: &LbfgsOptions,
    probe: Option<usize>,
    start: Option<SampleStart>,
) -> Result<(SolveReport, lbfgs::Curvature)> {
    let ctl = &opts.control;
    let Some(sample) = start else {
        return lbfgs::solve_seeded(
            obj,
            &opts.set,
            opts.theta0.as_deref(),
            lbfgs_opts,
            ctl,
            Default::default(),
            probe,
        );
    };
    let (theta0, curvature) = match sample.start {
        Some((theta, curvature)) => (Some(theta), curvature),
        None => (opts.theta0.clone(), Default::default()),
    };
    let (mut report, pairs) =
        lbfgs::solve_seeded(obj, &opts.set, theta0.as_deref(), lbfgs_opts, ctl, curvature, probe)?;
    report.counts.sample_rows += sample.rows_read;
    report.counts.elapsed += sample.elapsed;
    Ok((report, pairs))
}

/// Runs the solver `opts.solver` on `obj` (any [`SmoothObjective`]: the pairwise objective of
/// [`fit`], the K-wise objective of [`fit_kwise`]).
pub(crate) fn run_solver<O: SecondOrderObjective + SgdObjective, S>(
    obj: &O,
    opts: &FitOptions<S>,
) -> Result<SolveReport> {
    run_solver_from(obj, opts, None)
}

/// [`run_solver`], L-BFGS (alone or as `auto`'s first stage) starting from `start` when given.
fn run_solver_from<O: SecondOrderObjective + SgdObjective, S>(
    obj: &O,
    opts: &FitOptions<S>,
    start: Option<SampleStart>,
) -> Result<SolveReport> {
    let theta0 = opts.theta0.as_deref();
    match &opts.solver {
        Solver::Newton => newton::solve(obj, &opts.set, theta0, &opts.control),
        Solver::NewtonCg => newton_cg::solve(obj, &opts.set, theta0, &opts.control),
        Solver::Lbfgs(o) => solve_lbfgs(obj, opts, o, None, start).map(|(r, _)| r),
        Solver::Sgd(o) => sgd::solve(obj, &opts.set, theta0, o, &opts.control),
        Solver::Auto(o) => solve_auto(obj, opts, o, start),
    }
}

/// The row-sample start of a fit of `data` with `loss` ([`sample_start`]), when it applies: a
/// convex loss, no warm start, L-BFGS (asked for, or `auto`'s choice) with
/// [`LbfgsOptions::sample_start`], and many rows per feature ([`sample_start::applies`]).
fn sample_start_for<L: Loss>(data: &PairwiseView<'_>, loss: &L, opts: &FitOptions) -> Option<SampleStart> {
    let lbfgs = match &opts.solver {
        Solver::Lbfgs(o) => o.sample_start,
        Solver::Auto(o) => o.sample_start && auto_solver(L::CONVEX, data.n(), data.d()) == SolverKind::Lbfgs,
        _ => false,
    };
    if !(lbfgs && L::CONVEX && opts.theta0.is_none() && sample_start::applies(data)) {
        return None;
    }
    sample_start::run(
        data,
        loss,
        opts.ridge,
        opts.linear_term.as_deref(),
        &opts.set,
        &opts.control,
    )
}

/// Fits `θ̂ = argmin_{θ ∈ set} F(θ)` (see [`crate::objective`]) on raw labels. `Err` for
/// invalid input; a solver that did not converge returns `Ok` with a report saying so — call
/// [`SolveReport::into_result`](crate::solver::SolveReport::into_result) to turn that into an error.
///
/// The labels carry no provenance, so the model carries **no local guarantee**, even with the
/// `mle-rr` or `debiased-rr` loss; [`Fit::no_guarantee`] says so. Fit labels
/// privatised by a mechanism (or with an asserted provenance) with [`fit_privatized`].
pub fn fit(data: PairwiseView<'_>, opts: &FitOptions) -> Result<Fit> {
    let mut model = fit_raw(data, opts)?;
    model.no_guarantee = Some(no_provenance(opts.loss.name(), opts.loss.eps()));
    Ok(model)
}

/// Fits `θ̂` as [`fit`] on privatised labels, and attaches the local guarantee of their
/// provenance ([`Provenance::guarantee`]): `ε`, the randomiser, and the generator (a seeded
/// simulation generator makes it simulation-only; an asserted provenance says "asserted by the
/// caller"). `data` must be built on `labels.labels()`.
///
/// The loss must fit the labels: `mle-rr`, `debiased-rr`, `probit-rr` and `debiased-probit` at
/// `ε` need labels randomised by binary randomized response at exactly that `ε`
/// ([`Randomizer::Rr`]); the clear-label losses
/// (`mle`, `probit`) accept labels of any binary randomiser, and the guarantee (which holds by
/// post-processing) notes that the estimate is biased.
///
/// ```
/// use privpref::{data::PairwiseView, estimator::{fit_privatized, FitOptions},
///     feasible::FeasibleSet, loss::LossSpec, mechanism::RandomizedResponse,
///     privacy::{NoiseRng, PrivacyModel}};
/// let x = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0.5];
/// let y = [1u8, 0, 1, 0];
/// let private = RandomizedResponse::new(1.0)?.privatize(&y, &mut NoiseRng::secure()?)?;
/// let view = PairwiseView::new(&x, 4, 2, private.labels(), None)?;
/// let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(1.0)?);
/// let g = fit_privatized(view, &private, &opts)?.guarantee.unwrap();
/// assert_eq!((g.eps, g.model), (1.0, PrivacyModel::Local));
/// assert!(g.holds_for_real_data());
/// // The same labels at another ε: a typed error, nothing fitted.
/// let opts3 = FitOptions::new(LossSpec::DebiasedRr { eps: 3.0 }, FeasibleSet::theta_b(1.0)?);
/// assert!(matches!(fit_privatized(view, &private, &opts3),
///     Err(privpref::Error::ProvenanceMismatch { .. })));
/// # Ok::<(), privpref::Error>(())
/// ```
///
/// # Errors
/// [`Error::ProvenanceMismatch`] when `data`'s labels are not `labels`, or the loss is
/// calibrated to another randomiser or `ε`, or the labels are not binary; otherwise as [`fit`].
pub fn fit_privatized(data: PairwiseView<'_>, labels: &PrivatizedLabels, opts: &FitOptions) -> Result<Fit> {
    labels.check_same(data.y())?;
    let p = labels.provenance();
    if p.randomizer().num_labels() != 2 {
        return Err(Error::ProvenanceMismatch {
            expected: "labels randomised over 2 labels (a pairwise fit)".into(),
            found: format!("randomised by {}", p.randomizer()),
        });
    }
    let expected = match opts.loss {
        LossSpec::MleRr { eps }
        | LossSpec::DebiasedRr { eps }
        | LossSpec::ProbitRr { eps }
        | LossSpec::DebiasedProbit { eps } => Some(Randomizer::Rr { eps }),
        LossSpec::Mle | LossSpec::Probit => None,
    };
    let guarantee = local_guarantee(p, expected.as_ref(), &loss_words(opts.loss.name(), opts.loss.eps()))?;
    let mut model = fit_raw(data, opts)?;
    model.guarantee = Some(guarantee);
    model.detail.provenance = Some(p.clone());
    Ok(model)
}

/// [`fit`] on features no one has validated yet, with the validation taken inside the fit's
/// first pass: the result of `fit(PairwiseView::new(x, n, d, y, weights)?, opts)` (or
/// [`PairwiseView::new_f32`]), the same bits and the same errors, with one read of `X` fewer.
///
/// The first pass over `X` of Newton, Newton-CG and L-BFGS (and of `auto`) also scans each
/// block of rows for non-finite values and the magnitude summary while the block is in cache;
/// the solver stops right after that pass when the scan rejects the data, and the verdict of
/// the validation always comes first: a non-finite feature is the same [`Error::Data`] as
/// from [`PairwiseView::new`], and features that need normalisation (typical magnitude
/// outside `2^±32`) or are out of scale are then fitted, or refused, exactly as by [`fit`].
/// The SGD solvers validate first, as [`fit`] does. Nothing computed on unvalidated data is
/// returned. For data validated once and fitted many times, build the view and call [`fit`].
///
/// ```
/// use privpref::{data::{Features, PairwiseView}, estimator::{fit, fit_features, FitOptions},
///     feasible::FeasibleSet, loss::LossSpec};
/// let x = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0.5];
/// let y = [1u8, 0, 1, 0];
/// let opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(1.0)?);
/// let once = fit_features(Features::F64(&x), 4, 2, &y, None, &opts)?;
/// let twice = fit(PairwiseView::new(&x, 4, 2, &y, None)?, &opts)?;
/// assert_eq!(once.theta, twice.theta);
/// let bad = [1.0, 0.0, 0.0, 1.0, f64::NAN, 1.0, -1.0, 0.5];
/// assert!(matches!(fit_features(Features::F64(&bad), 4, 2, &y, None, &opts),
///     Err(privpref::Error::Data { .. })));
/// # Ok::<(), privpref::Error>(())
/// ```
///
/// # Errors
/// As [`PairwiseView::new`], then as [`fit`].
pub fn fit_features(
    x: Features<'_>,
    n: usize,
    d: usize,
    y: &[u8],
    weights: Option<&[f64]>,
    opts: &FitOptions,
) -> Result<Fit> {
    with_deferred_scan(x, n, d, y, weights, |view| fit(view, opts))
}

/// [`fit_privatized`] on features no one has validated yet, validated inside the fit's first
/// pass as by [`fit_features`]: the result of `fit_privatized(PairwiseView::new(x, n, d,
/// labels.labels(), weights)?, labels, opts)`, bit for bit, with one read of `X` fewer.
///
/// # Errors
/// As [`PairwiseView::new`], then as [`fit_privatized`].
pub fn fit_privatized_features(
    x: Features<'_>,
    n: usize,
    d: usize,
    labels: &PrivatizedLabels,
    weights: Option<&[f64]>,
    opts: &FitOptions,
) -> Result<Fit> {
    with_deferred_scan(x, n, d, labels.labels(), weights, |view| {
        fit_privatized(view, labels, opts)
    })
}

/// Runs `f` on a view of `x` whose features the fit's first pass validates
/// ([`PairwiseView::deferred`]); the validation's error, if any, wins over `f`'s outcome.
fn with_deferred_scan(
    x: Features<'_>,
    n: usize,
    d: usize,
    y: &[u8],
    weights: Option<&[f64]>,
    f: impl FnOnce(PairwiseView<'_>) -> Result<Fit>,
) -> Result<Fit> {
    check_shape(x.len(), n, d)?;
    let scan = FeatureScan::new(n, d, normalize::fits_unnormalised);
    let view = PairwiseView::deferred(x, n, d, y, weights, &scan)?;
    let out = f(view);
    scan.finish(x)?;
    out
}

/// Why a local fit on labels without provenance carries no guarantee.
pub(crate) fn no_provenance(loss: &str, eps: Option<f64>) -> NoGuarantee {
    NoGuarantee::NoProvenance(match eps {
        Some(e) => format!(
            "the labels carry no provenance: the `{loss}` loss at eps = {e} is a valid estimator for labels randomised at eps = {e}, but nothing shows these labels were randomised, at which eps, or with which generator (privatise them with a mechanism's privatize method, or assert their provenance, and fit the privatised labels)"
        ),
        None => format!("the labels carry no provenance: the `{loss}` loss on clear labels is not private"),
    })
}

/// The local guarantee of labels of provenance `p` fitted with a loss described by `what`
/// (e.g. "the `debiased-rr` loss at eps = 1"): `p` must be `expected` when the loss is
/// calibrated to a randomiser; a clear-label loss (`expected = None`) keeps the guarantee
/// (post-processing) with a note on the bias.
pub(crate) fn local_guarantee(p: &Provenance, expected: Option<&Randomizer>, what: &str) -> Result<Guarantee> {
    match expected {
        Some(r) => {
            p.require(r, what)?;
            Ok(p.guarantee())
        }
        None => {
            let mut g = p.guarantee();
            g.assumptions.notes.push(format!(
                "{what} does not model the randomisation, so the estimate is biased; the guarantee holds (post-processing of the privatised labels)"
            ));
            Ok(g)
        }
    }
}

/// How a loss is named in provenance messages: "the `name` loss" and its `ε`, if any.
pub(crate) fn loss_words(name: &str, eps: Option<f64>) -> String {
    match eps {
        Some(e) => format!("the `{name}` loss at eps = {e}"),
        None => format!("the `{name}` loss"),
    }
}

/// [`fit`] without a guarantee or a reason (the callers attach them).
pub(crate) fn fit_raw(data: PairwiseView<'_>, opts: &FitOptions) -> Result<Fit> {
    if let Some(scan) = data.scan() {
        // Features validated by the first pass ([`fit_features`]): the SGD solvers sample rows
        // and take no full first pass, so they validate first.
        let solved = match opts.solver {
            Solver::Sgd(_) => None,
            _ => Some(opts.validate().and_then(|()| solve_pairwise(data, opts))),
        };
        // The verdict first: a data error wins, and only data that fit as they are keep the
        // solve (otherwise it is redone as `fit` does it, normalised or refused).
        let data = data.validated(scan.finish(data.features())?);
        return match solved {
            Some(r) if normalize::fits_unnormalised(&data.magnitude()) => Ok(local_fit(r?, opts)),
            _ => fit_raw(data, opts),
        };
    }
    opts.validate()?;
    if let Solver::Sgd(_) = opts.solver {
        data.require_all_rows("SGD")?;
    }
    // Features far from unit size are solved on X·2^{-e}, exactly equivalent ([`normalize`]).
    let e = normalize::exponent(&data.magnitude());
    normalize::check_range(&data, e)?;
    let report = if e == 0 {
        solve_pairwise(data, opts)?
    } else {
        let x = normalize::scaled_features(&data, e);
        let view = data.with_features(Features::F64(&x));
        let up = normalize::pow2(e);
        let down = normalize::pow2(-e);
        let mut o = opts.clone();
        o.set = normalize::scaled_set(opts.set, e)?;
        o.ridge = opts.ridge * down * down;
        o.linear_term = opts.linear_term.as_ref().map(|b| b.iter().map(|v| v * down).collect());
        o.theta0 = opts.theta0.as_ref().map(|t| t.iter().map(|v| v * up).collect());
        let mut r = solve_pairwise(view, &o)?;
        normalize::unscale_report(&mut r, e);
        r
    };
    Ok(local_fit(report, opts))
}

/// The local fit of a solver's `report` under `opts` (no guarantee yet: the callers attach it).
pub(crate) fn local_fit<S: Copy>(report: SolveReport, opts: &FitOptions<S>) -> Fit<Local<S>> {
    let config = FitConfig::new(
        opts.loss,
        opts.set,
        opts.ridge,
        opts.linear_term.is_some(),
        opts.solver.name(),
    );
    Fit::new(report.theta.clone(), report, Local::new(config))
}

/// The pairwise objective of `opts` on `data`, solved. A loss unbounded below and not convex
/// (`debiased-probit`) needs a bounded feasible set: without one no minimiser need exist and no
/// recession certificate applies.
fn solve_pairwise(data: PairwiseView<'_>, opts: &FitOptions) -> Result<SolveReport> {
    if matches!(opts.loss, LossSpec::DebiasedProbit { .. }) && opts.set.radius().is_none() {
        return Err(Error::param(
            "constraint",
            "the `debiased-probit` loss is unbounded below and not convex: it needs a bounded feasible set (theta-b or ball)",
        ));
    }
    with_loss!(opts.loss, |loss| {
        let mut obj = Objective::new(data, loss)
            .with_ridge(opts.ridge)?
            .with_par(opts.control.par);
        if let Some(b) = &opts.linear_term {
            obj = obj.with_linear_term(b.clone())?;
        }
        let start = sample_start_for(&data, obj.loss(), opts);
        run_solver_from(&obj, opts, start)?
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;
    use crate::sim::{btl_pairs, theta_star};

    /// The exact solvers' first pass scans every block: the validation reads no row on its
    /// own, and a NaN stops the solver after that pass.
    #[test]
    fn the_first_pass_validates_every_block() {
        let theta = theta_star(16, 2.0, true, &mut simulation_rng(3)).unwrap();
        let dat = btl_pairs(100_000, &theta, &mut simulation_rng(4)).unwrap();
        let (n, d) = (dat.n, dat.d);
        for solver in [Solver::Newton, Solver::NewtonCg, Solver::Lbfgs(LbfgsOptions::default())] {
            let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(5.0).unwrap());
            opts.solver = solver;
            let scan = FeatureScan::new(n, d, normalize::fits_unnormalised);
            assert!(crate::par::stream_blocks(n, d).count() > 4);
            let view = PairwiseView::deferred(Features::F64(&dat.x), n, d, &dat.y, None, &scan).unwrap();
            let model = fit(view, &opts).unwrap();
            assert!(model.report.termination.is_converged());
            assert_eq!(scan.standalone_blocks(), 0, "{}", opts.solver.name());

            let mut x = dat.x.clone();
            x[n / 2 * d] = f64::NAN;
            let scan = FeatureScan::new(n, d, normalize::fits_unnormalised);
            let view = PairwiseView::deferred(Features::F64(&x), n, d, &dat.y, None, &scan).unwrap();
            let Err(Error::Numerical(m)) = solve_pairwise(view, &opts) else {
                panic!("the solver went on after the first pass");
            };
            assert!(m.contains("validation"), "{m}");
            assert_eq!(scan.standalone_blocks(), 0);
        }
    }
}
