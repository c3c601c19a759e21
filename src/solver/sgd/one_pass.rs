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
//! replicated engine, bit for bit); `ℓ'` comes from [`Loss::eval_simd`].

use super::lanes::{self, One, Proj};
use super::step::Schedule;
use super::Averaging;
use crate::data::PairwiseView;
use crate::error::Result;
use crate::feasible::FeasibleSet;
use crate::kernels::Rows;
use crate::loss::{Loss, LossOut};
use crate::objective::{Objective, SmoothObjective};
use pulp::{Arch, Simd, WithSimd};
use std::ops::Range;

/// The iterate, its running average and the step counter.
#[derive(Debug, Clone)]
pub(crate) struct State {
    /// `θ_{t+1}`.
    pub theta: Vec<f64>,
    /// Polyak–Ruppert average of `θ_2 … θ_{t+1}` (when averaging).
    pub avg: Option<Vec<f64>>,
    /// Steps done.
    pub t: usize,
}

impl State {
    /// `θ₁ = Π(θ0)` (default 0).
    pub fn new(d: usize, theta0: Option<&[f64]>, proj: Proj, average: Averaging) -> Self {
        let mut theta = theta0.map_or_else(|| vec![0.0; d], <[f64]>::to_vec);
        Arch::new().dispatch(
            #[inline(always)]
            || lanes::project(One, &mut theta, proj),
        );
        State {
            avg: (average == Averaging::Polyak).then(|| vec![0.0; d]),
            theta,
            t: 0,
        }
    }
    /// The point the algorithm returns: the average (Polyak) or the last iterate.
    pub fn output(&self) -> &[f64] {
        self.avg.as_deref().unwrap_or(&self.theta)
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
}

struct Pass<'s, 'a, L> {
    rows: Rows<'a>,
    loss: &'s L,
    order: Option<&'s [usize]>,
    pos: Range<usize>,
    setup: &'s Setup,
    st: &'s mut State,
}

impl<L: Loss> WithSimd for Pass<'_, '_, L> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let o = One;
        let Pass {
            rows,
            loss,
            order,
            pos,
            setup,
            st,
        } = self;
        let d = rows.d;
        let State { theta, avg, t } = st;
        let th = &mut theta[..d];
        let bw = &setup.bw[..d];
        let (mut sb, mut yb, mut gb) = ([0.0f64], [0.0f64], [0.0f64]);
        let mut buf = vec![0.0; d];
        for p in pos {
            let i = order.map_or(p, |o| o[p]);
            let row = rows.x.row(i, d, &mut buf);
            sb[0] = lanes::dot(o, row, th);
            yb[0] = rows.y[i] as f64;
            loss.eval_simd(
                simd,
                &sb,
                &yb,
                LossOut {
                    d1: Some(&mut gb),
                    ..Default::default()
                },
            );
            let mut c = gb[0];
            if let Some(w) = rows.w {
                c *= (setup.n * w[i]) / setup.total_weight;
            }
            *t += 1;
            let eta = setup.sched.eta(*t);
            lanes::step(o, row, th, c, -eta, setup.beta_w, bw, setup.proj);
            if let Some(a) = avg.as_deref_mut() {
                lanes::average(o, &mut a[..d], th, 1.0 / *t as f64);
            }
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
    st: &mut State,
) {
    let data = obj.data();
    let rows = Rows {
        x: data.features(),
        d: data.d(),
        y: data.y(),
        w: data.weights(),
    };
    Arch::new().dispatch(Pass {
        rows,
        loss: obj.loss(),
        order,
        pos,
        setup,
        st,
    });
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
    let mut st = State::new(obj.dim(), theta0, setup.proj, average);
    let mut scratch = super::minibatch::Scratch::default();
    obj.sgd_steps(&setup, None, 1, 0..obj.num_samples(), &mut st, &mut scratch);
    Ok(match st.avg {
        Some(a) => a,
        None => st.theta,
    })
}

/// `PairwiseView` rows as kernel rows.
pub(crate) fn rows_of<'a>(data: &PairwiseView<'a>) -> Rows<'a> {
    Rows {
        x: data.features(),
        d: data.d(),
        y: data.y(),
        w: data.weights(),
    }
}
