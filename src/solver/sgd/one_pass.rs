//! Single-sample projected SGD steps: Algorithm 1 (SGD-RR) of Chowdhury, Zhou & Natarajan
//! (2024) when run once over the data in order.
//!
//! Step `t` visits row `i = i_t` (data order, or a permutation per epoch):
//!
//! ```text
//! s_t = x_iᵀ θ_t
//! g_t = (n w_i / W) ℓ'(s_t; y_i) x_i + (β θ_t + b)/W
//! θ_{t+1} = Π(θ_t − η_t g_t)
//! ```
//!
//! the stochastic gradient of `F(θ) = (1/W)Σ w ℓ + (β/2W)‖θ‖² + (1/W)⟨b, θ⟩`. With the debiased
//! RR loss, unit weights and no ridge or linear term, `g_t = ℓ̂'(s_t; ỹ_t) x_t` is exactly the
//! gradient `(∇log p₀ + ∇log p₁)/(e^ε + 1) − ∇log p_ỹ` of Algorithm 1 (their eq. (10)). The
//! arithmetic of each step is the canonical sequence of `lanes` (shared with the
//! replicated engine, bit for bit); `ℓ'` comes from [`Loss::eval_simd`]. The steps are the
//! engine's (`engine::drive` with a row hook), run inside one SIMD dispatch.

use super::engine::{self, Flow, IterateMean, Iterates, StepHook};
use super::lanes::{self, One, Proj};
use super::step::Schedule;
use super::Averaging;
use crate::data::{Features, PairwiseView};
use crate::error::Result;
use crate::feasible::FeasibleSet;
use crate::kernels::Rows;
use crate::loss::{Loss, LossOut};
use crate::objective::{Objective, SmoothObjective};
use pulp::{Arch, Simd, WithSimd};
use std::ops::Range;

/// The engine's average for the solver's [`Averaging`].
pub(crate) fn iterate_mean(average: Averaging, d: usize) -> IterateMean {
    match average {
        Averaging::Last => IterateMean::Last,
        Averaging::Polyak => IterateMean::polyak(d),
    }
}

/// Constants of a run: projection, schedule, penalty terms divided by `W`.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub proj: Proj,
    pub sched: Schedule,
    /// `β/W`.
    pub beta_w: f64,
    /// `b/W` (zeros without a linear term).
    pub bw: Vec<f64>,
    /// `n/W` (the weight factor is `(n w_i)/W`).
    pub n: f64,
    pub total_weight: f64,
}

impl Setup {
    pub fn new<O: SmoothObjective>(obj: &O, set: &FeasibleSet, sched: Schedule) -> Self {
        let w = obj.total_weight();
        Setup {
            proj: Proj::of(set),
            sched,
            beta_w: obj.ridge() / w,
            bw: obj
                .linear_term()
                .map_or_else(|| vec![0.0; obj.dim()], |b| b.iter().map(|v| v / w).collect()),
            n: obj.num_samples() as f64,
            total_weight: w,
        }
    }
    /// `θ ← Π(θ + α(c·v + (β/W)θ + b/W))` in the canonical lane arithmetic, with the projection
    /// `proj` (fused: the centring sums are accumulated during the update).
    #[inline(always)]
    pub(crate) fn penalised_step(&self, v: &[f64], c: f64, alpha: f64, theta: &mut [f64], proj: Proj) {
        let d = v.len();
        lanes::step(One, v, &mut theta[..d], c, alpha, self.beta_w, &self.bw[..d], proj);
    }
}

/// Where the single-sample steps read their rows.
trait RowSource {
    /// Makes row `i` the current row.
    fn load(&mut self, i: usize);
    /// The current row.
    fn row(&self) -> &[f64];
}

/// `f64` features: the current row is borrowed.
struct F64Rows<'a> {
    x: &'a [f64],
    d: usize,
    cur: &'a [f64],
}

impl RowSource for F64Rows<'_> {
    #[inline(always)]
    fn load(&mut self, i: usize) {
        self.cur = &self.x[i * self.d..(i + 1) * self.d];
    }
    #[inline(always)]
    fn row(&self) -> &[f64] {
        self.cur
    }
}

/// `f32` features: the current row is widened into a buffer.
struct F32Rows<'a> {
    x: Features<'a>,
    buf: Vec<f64>,
}

impl RowSource for F32Rows<'_> {
    #[inline(always)]
    fn load(&mut self, i: usize) {
        let d = self.buf.len();
        self.x.copy_into(i * d, &mut self.buf);
    }
    #[inline(always)]
    fn row(&self) -> &[f64] {
        &self.buf
    }
}

/// The single-sample step hook: `g_t = (n w_i / W) ℓ'(x_iᵀθ_t; y_i) x_i + (βθ_t + b)/W` for the
/// row `i` at the next position of the visiting order.
struct RowStep<'s, 'a, L, S, R> {
    simd: S,
    src: R,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    loss: &'s L,
    order: Option<&'s [usize]>,
    setup: &'s Setup,
    /// The next position of the visiting order.
    next: usize,
    /// The current row's factor `c = (n w_i/W) ℓ'`.
    c: f64,
}

impl<L: Loss, S: Simd, R: RowSource> StepHook<Proj> for RowStep<'_, '_, L, S, R> {
    #[inline(always)]
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let p = self.next;
        self.next += 1;
        let i = self.order.map_or(p, |o| o[p]);
        self.src.load(i);
        let row = self.src.row();
        let sb = [lanes::dot(One, row, &theta[..row.len()])];
        let yb = [self.y[i] as f64];
        let mut gb = [0.0f64];
        self.loss.eval_simd(
            self.simd,
            &sb,
            &yb,
            LossOut {
                d1: Some(&mut gb),
                ..Default::default()
            },
        );
        let mut c = gb[0];
        if let Some(w) = self.w {
            c *= (self.setup.n * w[i]) / self.setup.total_weight;
        }
        self.c = c;
        Ok(Flow::Continue)
    }
    #[inline(always)]
    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        self.setup
            .penalised_step(self.src.row(), self.c, alpha, theta, Proj::NONE);
    }
    #[inline(always)]
    fn descend(&self, alpha: f64, theta: &mut [f64], proj: &Proj) {
        self.setup.penalised_step(self.src.row(), self.c, alpha, theta, *proj);
    }
}

struct Pass<'s, 'a, L> {
    rows: Rows<'a>,
    loss: &'s L,
    order: Option<&'s [usize]>,
    pos: Range<usize>,
    setup: &'s Setup,
    st: &'s mut Iterates,
}

impl<'s, 'a, L: Loss> Pass<'s, 'a, L> {
    /// The steps with the rows read from `src`.
    #[inline(always)]
    fn steps<S: Simd, R: RowSource>(self, simd: S, src: R) -> Result<Flow> {
        let mut hook = RowStep {
            simd,
            src,
            y: self.rows.y,
            w: self.rows.w,
            loss: self.loss,
            order: self.order,
            setup: self.setup,
            next: self.pos.start,
            c: 0.0,
        };
        let setup = self.setup;
        engine::drive(&mut hook, &setup.proj, &setup.sched, self.st, self.pos.len())
    }
}

impl<L: Loss> WithSimd for Pass<'_, '_, L> {
    type Output = Result<Flow>;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Result<Flow> {
        let d = self.rows.d;
        match self.rows.x {
            Features::F64(x) => self.steps(simd, F64Rows { x, d, cur: &[] }),
            x @ Features::F32(_) => self.steps(simd, F32Rows { x, buf: vec![0.0; d] }),
        }
    }
}

/// Runs the single-sample steps for positions `pos` of the visiting order (`order[p]` is the
/// row of position `p`; data order without one).
pub(crate) fn run<L: Loss>(
    obj: &Objective<'_, L>,
    setup: &Setup,
    order: Option<&[usize]>,
    pos: Range<usize>,
    st: &mut Iterates,
) -> Result<Flow> {
    Arch::new().dispatch(Pass {
        rows: rows_of(obj.data()),
        loss: obj.loss(),
        order,
        pos,
        setup,
        st,
    })
}

/// Algorithm 1 of Chowdhury, Zhou & Natarajan (2024) without the solver's bookkeeping: one pass of
/// projected SGD over the rows in data order, from `θ₁ = Π(θ0)` (default 0), returning `θ_{n+1}`
/// (or the Polyak–Ruppert average of `θ_2 … θ_{n+1}`). No evaluation passes, no observer; use
/// [`super::solve`] for a report with the objective and KKT residual. The result is bit-identical
/// to [`super::solve`] with `batch = 1, epochs = 1, shuffle = false`.
///
/// # Errors
/// As [`super::solve`] for `theta0` and the step rule.
pub fn one_pass<O: super::SgdObjective>(
    obj: &O,
    set: &FeasibleSet,
    theta0: Option<&[f64]>,
    step: super::StepRule,
    average: Averaging,
) -> Result<Vec<f64>> {
    super::super::check_theta0(theta0, obj.dim())?;
    let sched = obj.sgd_schedule(&step, set)?;
    let setup = Setup::new(obj, set, sched);
    let mut st = Iterates::start(obj.dim(), theta0, &setup.proj, iterate_mean(average, obj.dim()));
    let mut scratch = super::minibatch::Scratch::default();
    obj.sgd_steps(&setup, None, 1, 0..obj.num_samples(), &mut st, &mut scratch)?;
    Ok(st.into_output())
}

/// `PairwiseView` rows as kernel rows, all of them in this process (the SGD steps are
/// sequential: a distributed view's SGD runs whole on every process, with the same bits).
pub(crate) fn rows_of<'a>(data: &PairwiseView<'a>) -> Rows<'a> {
    Rows::new(data.features(), data.d(), data.y(), data.weights())
}
