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
//! The sample is every [`SAMPLE_STRIDE`]-th row of the whole matrix (deterministic: the same
//! bits at any thread count; the rows keep their storage type). When the rows are held in parts
//! by the members of a group ([`PairwiseView::new_shard`], e.g. a shard file per MPI rank), each
//! member contributes its sampled rows and every member runs on the gathered sample, so the
//! fit has the bits of the single-process fit. It is taken only when it is large next to `d`
//! ([`SAMPLE_ROWS_PER_FEATURE`]): with fewer rows per feature the sample's minimiser and
//! curvature are too far from the full ones to save a pass (measured in
//! `bench-results/fits.md`). A sample run that does not converge, or meets invalid data, is
//! dropped and the full run starts cold; its cost is bounded by [`SAMPLE_MAX_ITERATIONS`]
//! passes over the sample.

use crate::data::{Features, PairwiseView};
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::objective::Objective;
use crate::par::Collective;
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

/// Whether a fit of `data` starts from a row sample (module docs): the sample has
/// `SAMPLE_ROWS_PER_FEATURE · d` rows or more, and at most [`SAMPLE_MAX_VALUES`] values.
/// Depends only on `(n, d)`, so every member of a group decides alike.
pub(crate) fn applies(data: &PairwiseView<'_>) -> bool {
    let m = data.n().div_ceil(SAMPLE_STRIDE);
    data.n() / SAMPLE_STRIDE >= SAMPLE_ROWS_PER_FEATURE.saturating_mul(data.d())
        && m.saturating_mul(data.d()) <= SAMPLE_MAX_VALUES
}

/// The most values of `X` the sample copies (1 GiB of `f64`); larger matrices start cold.
pub const SAMPLE_MAX_VALUES: usize = 1 << 27;

/// The sample's rows (in the storage type of `X`: one of `x64`, `x32` is used), labels and
/// weights.
#[derive(Default)]
struct Sample {
    x64: Vec<f64>,
    x32: Vec<f32>,
    y: Vec<u8>,
    w: Option<Vec<f64>>,
}

impl Sample {
    /// Every `SAMPLE_STRIDE`-th row of the whole matrix of `data`, on every member of its
    /// group when the members hold the rows in parts.
    fn of(data: &PairwiseView<'_>) -> Sample {
        let d = data.d();
        // The first held row whose index in the whole matrix is a multiple of the stride.
        let skip = data.data_first().next_multiple_of(SAMPLE_STRIDE) - data.data_first();
        let mut own = Sample {
            y: data.y().iter().skip(skip).step_by(SAMPLE_STRIDE).copied().collect(),
            w: data
                .weights()
                .map(|w| w.iter().skip(skip).step_by(SAMPLE_STRIDE).copied().collect()),
            ..Sample::default()
        };
        let f32_rows = match data.features() {
            Features::F64(x) => {
                own.x64 = strided(x, d, skip, SAMPLE_STRIDE);
                false
            }
            Features::F32(x) => {
                own.x32 = strided(x, d, skip, SAMPLE_STRIDE);
                true
            }
        };
        match data.shard() {
            Some(shard) if !data.holds_all_rows() => own.gathered(shard.collective(), d, f32_rows),
            _ => own,
        }
    }

    /// Every member's sample rows, in rank order (the members' parts follow each other in
    /// that order): each row travels as its `d` features, label and weight (`f32` and `u8`
    /// values are exact as `f64`).
    fn gathered(self, group: &dyn Collective, d: usize, f32_rows: bool) -> Sample {
        let weighted = self.w.is_some();
        let width = d + 1 + usize::from(weighted);
        let mut mine = Vec::with_capacity(self.y.len() * width);
        for (i, &label) in self.y.iter().enumerate() {
            if f32_rows {
                mine.extend(self.x32[i * d..(i + 1) * d].iter().map(|&v| f64::from(v)));
            } else {
                mine.extend_from_slice(&self.x64[i * d..(i + 1) * d]);
            }
            mine.push(f64::from(label));
            if let Some(w) = &self.w {
                mine.push(w[i]);
            }
        }
        let all = group.all_gather(&mine);
        let mut out = Sample {
            y: Vec::with_capacity(all.len() / width),
            w: weighted.then(Vec::new),
            ..Sample::default()
        };
        for row in all.chunks_exact(width) {
            if f32_rows {
                out.x32.extend(row[..d].iter().map(|&v| v as f32));
            } else {
                out.x64.extend_from_slice(&row[..d]);
            }
            out.y.push(row[d] as u8);
            if let Some(w) = &mut out.w {
                w.push(row[d + 1]);
            }
        }
        out
    }
}

/// Every `stride`-th row of `x` (`d` values a row) from row `skip`, in order.
fn strided<T: Copy>(x: &[T], d: usize, skip: usize, stride: usize) -> Vec<T> {
    x.chunks_exact(d)
        .skip(skip)
        .step_by(stride)
        .flatten()
        .copied()
        .collect()
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
    let Sample { x64, x32, y, w } = Sample::of(data);
    let m = y.len();
    let view = match data.features() {
        Features::F64(_) => PairwiseView::new(&x64, m, d, &y, w.as_deref()),
        Features::F32(_) => PairwiseView::new_f32(&x32, m, d, &y, w.as_deref()),
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
    let (report, curvature) = lbfgs::solve_seeded(&obj, set, None, &opts, &sctl, Curvature::default(), None).ok()?;
    let rows_read = report.data_passes() * m;
    let converged = report.converged() && report.theta.iter().all(|v| v.is_finite());
    Some(SampleStart {
        start: converged.then_some((report.theta, curvature)),
        rows_read,
        elapsed: started.elapsed(),
    })
}
