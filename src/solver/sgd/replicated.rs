//! One-pass projected SGD on `R` independent datasets at once ("many replications").
//!
//! Each replication `r` is its own run of Algorithm 1 (Chowdhury, Zhou & Natarajan (2024)) on rows
//! `(x_{t,r}, y_{t,r})`, `t = 1..n`, with the objective
//! `F_r(θ) = (1/n) Σ_t ℓ(x_{t,r}ᵀθ; y_{t,r}) + (β/2n)‖θ‖² + (1/n)⟨b_r, θ⟩` (the loss, `β` and the
//! feasible set are shared; the linear term, e.g. objective-perturbation noise, is per
//! replication). The `d × R` parameter block is advanced one time step at a time, vectorised
//! over replications: `S::F64_LANES` replications per SIMD vector, with exactly the per-lane
//! operation sequence of the single-run solver (`lanes`). Hence replication `r` gives
//! **the same bits** as [`super::solve`] (batch 1, one epoch, data order) on a
//! [`PairwiseView`](crate::data::PairwiseView) of its rows, for any `R` and any position `r`.
//!
//! Layout ([`ReplicaBlock`]): time-major, then feature, then replication —
//! `x[(t·d + j)·R + r]`, `y[t·R + r]` — so with `R = 1` it is the ordinary row-major `n × d`
//! matrix, and each time step reads one contiguous `d × R` panel.

mod chunks;

use super::lanes::Proj;
use super::step::Schedule;
use super::Averaging;
use crate::error::{DataErrorKind, Error, Location, Result};
use crate::feasible::FeasibleSet;
use crate::loss::Loss;
use crate::solver::{Control, SolveReport, Termination};
use chunks::Engine;
use pulp::Arch;
use std::time::{Duration, Instant};

/// A validated, borrowed block of `R` replications of `n` rows with `d` features each
/// (layout in the module docs).
#[derive(Debug, Clone, Copy)]
pub struct ReplicaBlock<'a> {
    x: &'a [f64],
    y: &'a [u8],
    n: usize,
    d: usize,
    r: usize,
}

impl<'a> ReplicaBlock<'a> {
    /// Wraps `x` (`n·d·R` values, `x[(t·d + j)·R + r]`) and labels `y` (`n·R` values in
    /// `{0, 1}`, `y[t·R + r]`).
    ///
    /// # Errors
    /// [`Error::Shape`] if `n`, `d` or `R` is 0 or a length does not match;
    /// [`Error::ReplicaData`] naming the replication, row and column of the first non-finite
    /// feature or label outside `{0, 1}`.
    pub fn new(x: &'a [f64], y: &'a [u8], n: usize, d: usize, replications: usize) -> Result<Self> {
        let r = replications;
        if r == 0 {
            return Err(Error::Shape("no replications (R = 0)".into()));
        }
        if n == 0 {
            return Err(Error::Shape("no samples (n = 0)".into()));
        }
        if d == 0 {
            return Err(Error::Shape("no features (d = 0)".into()));
        }
        let want = n.checked_mul(d).and_then(|v| v.checked_mul(r));
        if want != Some(x.len()) {
            return Err(Error::Shape(format!(
                "x has {} values, expected n·d·R = {n}·{d}·{r}",
                x.len()
            )));
        }
        if let Some(p) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::ReplicaData {
                input: "x",
                replication: p % r,
                at: Location {
                    row: p / (d * r),
                    col: Some(p / r % d),
                },
                kind: if x[p].is_nan() {
                    DataErrorKind::NaN
                } else {
                    DataErrorKind::Infinite
                },
            });
        }
        let block = ReplicaBlock { x, y: &[], n, d, r };
        block.with_labels(y)
    }

    /// The first `n` time steps (rows of every replication), without re-validating: O(1).
    ///
    /// # Errors
    /// [`Error::Shape`] unless `1 ≤ n ≤` [`Self::n`].
    pub fn prefix(&self, n: usize) -> Result<ReplicaBlock<'a>> {
        if n == 0 || n > self.n {
            return Err(Error::Shape(format!("prefix of {n} rows of a block of {}", self.n)));
        }
        Ok(ReplicaBlock {
            x: &self.x[..n * self.d * self.r],
            y: &self.y[..n * self.r],
            n,
            ..*self
        })
    }

    /// The same features with other labels (`n·R` values in `{0, 1}`), validated.
    pub fn with_labels<'b>(&self, y: &'b [u8]) -> Result<ReplicaBlock<'b>>
    where
        'a: 'b,
    {
        if y.len() != self.n * self.r {
            return Err(Error::Shape(format!(
                "y has {} labels, expected n·R = {}·{}",
                y.len(),
                self.n,
                self.r
            )));
        }
        if let Some(p) = y.iter().position(|&v| v > 1) {
            return Err(Error::ReplicaData {
                input: "y",
                replication: p % self.r,
                at: Location {
                    row: p / self.r,
                    col: None,
                },
                kind: DataErrorKind::LabelOutOfRange {
                    label: i128::from(y[p]),
                    bound: 2,
                },
            });
        }
        Ok(ReplicaBlock { y, ..*self })
    }

    /// Rows per replication `n`.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Features `d`.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Replications `R`.
    pub fn replications(&self) -> usize {
        self.r
    }
    /// The features, `x[(t·d + j)·R + r]`.
    pub fn x(&self) -> &'a [f64] {
        self.x
    }
    /// The labels, `y[t·R + r]`.
    pub fn y(&self) -> &'a [u8] {
        self.y
    }
    /// Replication `r` as an ordinary row-major `n × d` matrix and its labels (copies).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`replication`) if `r ≥ R`.
    pub fn replica(&self, r: usize) -> Result<(Vec<f64>, Vec<u8>)> {
        if r >= self.r {
            return Err(Error::param(
                "replication",
                format!("{r} is out of range (R = {})", self.r),
            ));
        }
        let x = (0..self.n * self.d).map(|p| self.x[p * self.r + r]).collect();
        let y = (0..self.n).map(|t| self.y[t * self.r + r]).collect();
        Ok((x, y))
    }
}

/// Step sizes of a replicated run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplicaSteps<'a> {
    /// One schedule for every replication (e.g. the paper's `η = 0.1`).
    Shared(Schedule),
    /// `η_t = η_r`, one constant per replication (length `R`; e.g. the `statement` rule
    /// resolved per replication).
    PerReplicaConst(&'a [f64]),
    /// `η_t = 1/(λ_r t)`, one `λ` per replication (length `R`; e.g. the `theory` rule resolved
    /// per replication with [`theory_constants`](super::theory_constants)).
    PerReplicaLambda(&'a [f64]),
}

/// Settings of [`run`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ReplicaOptions<'a> {
    /// Step sizes.
    pub steps: ReplicaSteps<'a>,
    /// Last iterate (Algorithm 1) or Polyak–Ruppert average.
    pub average: Averaging,
    /// Warm starts, `d × R` (`θ0[j·R + r]`), projected per replication (default 0).
    pub theta0: Option<&'a [f64]>,
    /// Steps `t` (strictly increasing, in `1..=n`) after which to record every replication's
    /// returned point — the one-pass output on the first `t` rows, since no step rule depends
    /// on `n`.
    pub checkpoints: &'a [usize],
}

impl<'a> ReplicaOptions<'a> {
    /// Last iterate, zero start, no checkpoints.
    pub fn new(steps: ReplicaSteps<'a>) -> Self {
        ReplicaOptions {
            steps,
            average: Averaging::Last,
            theta0: None,
            checkpoints: &[],
        }
    }
}

/// The shared objective of a replicated run (see the module docs).
#[derive(Debug, Clone)]
pub struct ReplicaProblem<'a, L: Loss> {
    /// The loss (shared).
    pub loss: L,
    /// The feasible set (shared).
    pub set: FeasibleSet,
    /// Ridge `β ≥ 0` (shared).
    pub ridge: f64,
    /// Per-replication linear term `b`, `d × R` (`b[j·R + r]`).
    pub linear_term: Option<&'a [f64]>,
}

/// The points of every replication after some number of steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Steps done.
    pub step: usize,
    /// `d × R` (`θ[j·R + r]`).
    pub theta: Vec<f64>,
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct ReplicaOutput {
    /// Features `d`.
    pub d: usize,
    /// Replications `R`.
    pub replications: usize,
    /// Returned points (`θ_{t+1}` or the average), `d × R` (`θ[j·R + r]`).
    pub theta: Vec<f64>,
    /// The recorded checkpoints.
    pub checkpoints: Vec<Checkpoint>,
    /// Steps done (`n` unless stopped).
    pub steps: usize,
    /// [`Termination::Completed`], or `Interrupted` / `Timeout`.
    pub termination: Termination,
    /// Replications whose returned point is not finite.
    pub non_finite: Vec<usize>,
    /// Wall time.
    pub elapsed: Duration,
}

/// Column `r` of a `d × R` block.
pub fn replication_of(block: &[f64], d: usize, replications: usize, r: usize) -> Vec<f64> {
    (0..d).map(|j| block[j * replications + r]).collect()
}

impl ReplicaOutput {
    /// Replication `r`'s returned point.
    pub fn theta_of(&self, r: usize) -> Vec<f64> {
        replication_of(&self.theta, self.d, self.replications, r)
    }
}

/// Steps between checks of the caller's interrupt flag and deadline.
const STOP_CHECK: usize = 4096;

/// Runs one pass of projected SGD on every replication of `block` (module docs).
///
/// `ctl`: the interrupt flag and deadline are checked every 4096 steps; an observer gets
/// `on_start` (solver `sgd-replicated`, `n`, `d`, budget `n`), `on_progress` every
/// `observe_every` steps with replication 0's iterate (objective and KKT residual `NaN`) and
/// `on_end` with a report of replication 0 (no objective). Tolerances and `max_iter` are not
/// used.
///
/// # Errors
/// [`Error::InvalidParam`] for a ridge that is negative or not finite, a non-finite linear term
/// or warm start, step constants that are not finite and `> 0`, or bad checkpoints;
/// [`Error::Shape`] for lengths that do not match `d × R` / `R`.
pub fn run<L: Loss>(
    block: &ReplicaBlock<'_>,
    prob: &ReplicaProblem<'_, L>,
    opts: &ReplicaOptions<'_>,
    ctl: &Control,
) -> Result<ReplicaOutput> {
    ctl.validate()?;
    let start = Instant::now();
    let (n, d, r) = (block.n, block.d, block.r);
    if !(prob.ridge.is_finite() && prob.ridge >= 0.0) {
        return Err(Error::param(
            "ridge",
            format!("must be finite and >= 0, got {}", prob.ridge),
        ));
    }
    let check_block = |v: &[f64], name: &'static str| -> Result<()> {
        if v.len() != d * r {
            return Err(Error::Shape(format!(
                "{name} has {} values, expected d·R = {d}·{r}",
                v.len()
            )));
        }
        if let Some(p) = v.iter().position(|x| !x.is_finite()) {
            return Err(Error::param(
                name,
                format!("entry (feature {}, replication {}) is not finite", p / r, p % r),
            ));
        }
        Ok(())
    };
    if let Some(b) = prob.linear_term {
        check_block(b, "linear-term")?;
    }
    if let Some(t0) = opts.theta0 {
        check_block(t0, "theta0")?;
    }
    match opts.steps {
        ReplicaSteps::Shared(s) => check_schedule(&s)?,
        ReplicaSteps::PerReplicaConst(v) | ReplicaSteps::PerReplicaLambda(v) => {
            if v.len() != r {
                return Err(Error::Shape(format!(
                    "per-replication steps have {} values, expected R = {r}",
                    v.len()
                )));
            }
            if let Some(p) = v.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(Error::param(
                    "step",
                    format!("replication {p}: the constant must be finite and > 0, got {}", v[p]),
                ));
            }
        }
    }
    if let Some(w) = opts.checkpoints.windows(2).find(|w| w[0] >= w[1]) {
        return Err(Error::param(
            "checkpoints",
            format!("must be strictly increasing ({} then {})", w[0], w[1]),
        ));
    }
    if let Some(&c) = opts.checkpoints.iter().find(|&&c| c == 0 || c > n) {
        return Err(Error::param("checkpoints", format!("{c} is outside 1..={n}")));
    }
    ctl.notify_start("sgd-replicated", n, d, n);
    let mut out = Arch::new().dispatch(Engine {
        block: *block,
        prob,
        opts,
        ctl,
        proj: Proj::of(&prob.set),
    });
    out.elapsed = start.elapsed();
    if ctl.observer.is_some() {
        let mut rep = SolveReport::blank("sgd-replicated", out.theta_of(0), Termination::Completed);
        rep.termination = out.termination;
        rep.counts.iterations = out.steps;
        rep.counts.elapsed = out.elapsed;
        ctl.notify_end(&rep);
    }
    Ok(out)
}

fn check_schedule(s: &Schedule) -> Result<()> {
    let positive = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(Error::param("step", format!("{name} must be finite and > 0, got {v}")))
        }
    };
    match *s {
        Schedule::Const(v) => positive("η", v),
        Schedule::InvT(v) => positive("c", v),
        Schedule::InvLambdaT(v) => positive("λ", v),
        Schedule::InvSqrtT { c, g } => positive("c", c).and_then(|()| positive("G", g)),
    }
}

#[cfg(test)]
mod prefix_tests {
    use super::*;

    #[test]
    fn prefix_is_the_block_of_the_first_rows() {
        let (n, d, r) = (5, 2, 3);
        let x: Vec<f64> = (0..n * d * r).map(|i| i as f64).collect();
        let y: Vec<u8> = (0..n * r).map(|i| (i % 2) as u8).collect();
        let b = ReplicaBlock::new(&x, &y, n, d, r).unwrap();
        let p = b.prefix(3).unwrap();
        let want = ReplicaBlock::new(&x[..3 * d * r], &y[..3 * r], 3, d, r).unwrap();
        assert_eq!((p.n(), p.d(), p.replications()), (3, d, r));
        assert_eq!(p.x(), want.x());
        assert_eq!(p.y(), want.y());
        assert!(b.prefix(0).is_err());
        assert!(b.prefix(n + 1).is_err());
        assert_eq!(b.prefix(n).unwrap().x(), b.x());
    }
}
