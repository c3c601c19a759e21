//! The start of an L-BFGS fit from a row sample (progressive sampling: Byrd, Chin, Nocedal &
//! Wu 2012, "Sample size selection in optimization methods for machine learning").
//!
//! With many rows per feature, the minimiser `θ̂_S` of the objective on a uniform sample `S` of
//! `m` rows is within `O(√(d/m))` of the full `θ̂`, and the curvature of the sample objective is
//! within the same relative distance of the full one (both are means over rows). L-BFGS from
//! `θ = 0` spends its first passes over `X` finding that neighbourhood and learning the
//! curvature; a run on the sample finds both for `1/SAMPLE_STRIDE` of the cost per pass. The
//! full run then starts at `θ̂_S` with the sample run's curvature pairs
//! (the pairs seed its inverse-Hessian model), and it is the full run, on the full objective, that certifies
//! the returned point, exactly as without the sample.
//!
//! The sample is every [`SAMPLE_STRIDE`]-th row (deterministic: the same bits at any thread
//! count; the rows keep their storage type). It is taken only when it is large next to `d`
//! ([`SAMPLE_ROWS_PER_FEATURE`]): with fewer rows per feature the sample's minimiser and
//! curvature are too far from the full ones to save a pass (measured in
//! `bench-results/fits.md`). A sample run that does not converge, or meets invalid data, is
//! dropped and the full run starts cold; its cost is bounded by [`SAMPLE_MAX_ITERATIONS`]
//! passes over the sample.

use crate::data::{Features, PairwiseView};
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::objective::Objective;
use crate::solver::lbfgs::{self, Curvature, LbfgsOptions, ITERS_PER_MAX_ITER};
use crate::solver::Control;
use std::time::{Duration, Instant};

/// The sample is every `SAMPLE_STRIDE`-th row of `X`.
pub const SAMPLE_STRIDE: usize = 32;
/// The sample is taken only with at least this many of its rows per feature (`n ≥
/// SAMPLE_STRIDE · SAMPLE_ROWS_PER_FEATURE · d`).
pub const SAMPLE_ROWS_PER_FEATURE: usize = 128;
/// Relative KKT tolerance of the run on the sample: its minimiser is `O(√(d/m))` from the
/// full one, so a tighter tolerance buys nothing.
pub const SAMPLE_TOL: f64 = 1e-4;
/// L-BFGS iterations allowed on the sample.
pub const SAMPLE_MAX_ITERATIONS: usize = 50;

/// What the run on the sample hands to the full run.
#[derive(Debug)]
pub(crate) struct SampleStart {
    /// The sample's minimiser (the full run's `θ₀`) and the sample run's curvature pairs;
    /// `None` when that run did not converge (the full run starts cold).
    pub start: Option<(Vec<f64>, Curvature)>,
    /// Rows of `X` the sample run read (its passes times the sample's rows).
    pub rows_read: usize,
    /// Its wall time, with the copy of the sample.
    pub elapsed: Duration,
}

/// Whether a fit of `data` starts from a row sample (module docs): every row is held here (not
/// a member's share of rows) and the sample has `SAMPLE_ROWS_PER_FEATURE · d` rows or more.
pub(crate) fn applies(data: &PairwiseView<'_>) -> bool {
    data.holds_all_rows() && data.n() / SAMPLE_STRIDE >= SAMPLE_ROWS_PER_FEATURE.saturating_mul(data.d())
}

/// Every `stride`-th row of `x` (`d` values a row), in order.
fn strided<T: Copy>(x: &[T], d: usize, stride: usize) -> Vec<T> {
    x.chunks_exact(d).step_by(stride).flatten().copied().collect()
}

/// The L-BFGS run on the sample of `data` for the objective with `loss`, ridge `ridge` and
/// linear term `linear` on `set`, under the limits of `ctl` (interrupt, deadline, parallelism;
/// no observer). `None` when the sample's data are invalid (the full run then reports the data's
/// error itself); no start point when the sample run does not converge.
pub(crate) fn run<L: Loss>(
    data: &PairwiseView<'_>,
    loss: &L,
    ridge: f64,
    linear: Option<&[f64]>,
    set: &FeasibleSet,
    ctl: &Control,
) -> Option<SampleStart> {
    let started = Instant::now();
    let d = data.d();
    let y: Vec<u8> = data.y().iter().step_by(SAMPLE_STRIDE).copied().collect();
    let w: Option<Vec<f64>> = data
        .weights()
        .map(|w| w.iter().step_by(SAMPLE_STRIDE).copied().collect());
    let m = y.len();
    let (x64, x32) = match data.features() {
        Features::F64(x) => (strided(x, d, SAMPLE_STRIDE), Vec::new()),
        Features::F32(x) => (Vec::new(), strided(x, d, SAMPLE_STRIDE)),
    };
    let view = if x32.is_empty() {
        PairwiseView::new(&x64, m, d, &y, w.as_deref())
    } else {
        PairwiseView::new_f32(&x32, m, d, &y, w.as_deref())
    }
    .ok()?;
    // The same objective per unit weight: the ridge and linear term scale with the weight.
    let share = view.total_weight() / data.total_weight();
    if !(share.is_finite() && share > 0.0) {
        return None;
    }
    let mut obj = Objective::new(view, loss.clone())
        .with_ridge(ridge * share)
        .ok()?
        .with_par(ctl.par);
    if let Some(b) = linear {
        obj = obj.with_linear_term(b.iter().map(|v| v * share).collect()).ok()?;
    }
    let mut sctl = ctl.clone();
    sctl.tol_rel = SAMPLE_TOL;
    sctl.tol_abs = 0.0;
    sctl.max_iter = SAMPLE_MAX_ITERATIONS.div_ceil(ITERS_PER_MAX_ITER);
    sctl.observer = None;
    let opts = LbfgsOptions {
        polish_iters: 0,
        sample_start: false,
        ..LbfgsOptions::default()
    };
    let (report, curvature) = lbfgs::solve_seeded(&obj, set, None, &opts, &sctl, Curvature::default()).ok()?;
    let rows_read = report.data_passes() * m;
    let converged = report.converged() && report.theta.iter().all(|v| v.is_finite());
    Some(SampleStart {
        start: converged.then_some((report.theta, curvature)),
        rows_read,
        elapsed: started.elapsed(),
    })
}
