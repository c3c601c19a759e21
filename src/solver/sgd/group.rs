//! Projected SGD steps on K-wise data ([`GroupObjective`]): single-sample steps (`batch = 1`,
//! Algorithm 1 of Chowdhury, Zhou & Natarajan (2024) for Plackett–Luce with K-RR, App. C.4, when
//! the loss is `pl-krr`) and mini-batch steps. A step on the samples `𝓑` (`m = |𝓑|` consecutive
//! positions of the visiting order):
//!
//! ```text
//! G   = Σ_{i∈𝓑} w_i Φ_iᵀ ∂ℓ(Φ_iθ_t; o_i)/∂u
//! g_t = (n / (m W)) G + (β θ_t + b)/W                  (unbiased for ∇F under uniform batches)
//! θ_{t+1} = Π(θ_t − η_t g_t)
//! ```
//!
//! with the update and projection of the canonical arithmetic of [`super::lanes`] (the pairwise
//! step with the row `x` replaced by `G`). With `pl-krr`, unit weights and no ridge or linear
//! term, the single-sample `g_t = Φ_iᵀ(c p − w)` is exactly the paper's
//! `ĝ = Σ_k ∇log p_k/(e^ε + K − 1) − ∇log p_ỹ`. The loop is the engine's ([`engine::drive`])
//! with a K-wise hook. Everything runs on the calling thread.

use super::engine::{self, Flow, Iterates, StepHook};
use super::lanes::{self, One, Proj};
use super::minibatch::Scratch;
use super::one_pass::Setup;
use crate::error::Result;
use crate::loss::GroupLoss;
use crate::objective::GroupObjective;
use pulp::{Arch, Simd, WithSimd};
use std::ops::Range;

/// The K-wise step hook: `G = Σ_{i∈𝓑} w_i Φ_iᵀ ∂ℓ/∂u` of the next batch, `c = n/(mW)`.
struct GroupStep<'s, 'a, L: GroupLoss> {
    obj: &'s GroupObjective<'a, L>,
    order: Option<&'s [usize]>,
    batch: usize,
    setup: &'s Setup,
    /// The next batch index (the position for `batch = 1`).
    next: usize,
    u: Vec<f64>,
    g: Vec<f64>,
    scratch: Vec<f64>,
    acc: Vec<f64>,
    c: f64,
}

impl<L: GroupLoss> StepHook<Proj> for GroupStep<'_, '_, L> {
    #[inline(always)]
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let (data, loss) = (self.obj.data(), self.obj.loss());
        let n = data.n();
        let step = self.next;
        self.next += 1;
        let (p0, p1) = (step * self.batch, ((step + 1) * self.batch).min(n));
        let m = p1 - p0;
        self.acc.fill(0.0);
        for p in p0..p1 {
            let i = self.order.map_or(p, |o| o[p]);
            for (r, ur) in self.u.iter_mut().enumerate() {
                *ur = lanes::dot(One, data.row(i, r), theta);
            }
            loss.eval(&self.u, data.order_of(i), Some(&mut self.g), None, &mut self.scratch);
            let w = data.weight(i);
            for (r, &gr) in self.g.iter().enumerate() {
                let c = w * gr;
                for (a, x) in self.acc.iter_mut().zip(data.row(i, r)) {
                    *a = c.mul_add(*x, *a);
                }
            }
        }
        self.c = self.setup.n / (m as f64 * self.setup.total_weight);
        Ok(Flow::Continue)
    }
    #[inline(always)]
    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        self.setup.penalised_step(&self.acc, self.c, alpha, theta, Proj::NONE);
    }
    #[inline(always)]
    fn descend(&self, alpha: f64, theta: &mut [f64], proj: &Proj) {
        self.setup.penalised_step(&self.acc, self.c, alpha, theta, *proj);
    }
}

struct Steps<'s, 'a, L: GroupLoss> {
    hook: GroupStep<'s, 'a, L>,
    steps: usize,
    st: &'s mut Iterates,
}

impl<L: GroupLoss> WithSimd for Steps<'_, '_, L> {
    type Output = Result<Flow>;
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) -> Result<Flow> {
        let Steps { mut hook, steps, st } = self;
        let setup = hook.setup;
        engine::drive(&mut hook, &setup.proj, &setup.sched, st, steps)
    }
}

/// Runs steps `steps` (positions for `batch = 1`, batch indices otherwise; `order[p]` is the
/// sample at position `p`). `_sc` is the pairwise steps' buffer, unused here.
pub(crate) fn group_steps<L: GroupLoss>(
    obj: &GroupObjective<'_, L>,
    setup: &Setup,
    order: Option<&[usize]>,
    batch: usize,
    steps: Range<usize>,
    st: &mut Iterates,
    _sc: &mut Scratch,
) -> Result<Flow> {
    let (k, d) = (obj.data().k(), obj.data().d());
    Arch::new().dispatch(Steps {
        hook: GroupStep {
            obj,
            order,
            batch,
            setup,
            next: steps.start,
            u: vec![0.0; k],
            g: vec![0.0; k],
            scratch: vec![0.0; obj.loss().scratch_len(k)],
            acc: vec![0.0; d],
            c: 0.0,
        },
        steps: steps.len(),
        st,
    })
}
