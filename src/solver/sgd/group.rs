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
//! `ĝ = Σ_k ∇log p_k/(e^ε + K − 1) − ∇log p_ỹ`. Everything runs on the calling thread.

use super::lanes::{self, One};
use super::minibatch::Scratch;
use super::one_pass::{Setup, State};
use crate::loss::GroupLoss;
use crate::objective::GroupObjective;
use pulp::Arch;
use std::ops::Range;

/// Runs steps `steps` (positions for `batch = 1`, batch indices otherwise; `order[p]` is the
/// sample at position `p`). `_sc` is the pairwise steps' buffer, unused here.
pub(crate) fn group_steps<L: GroupLoss>(
    obj: &GroupObjective<'_, L>,
    setup: &Setup,
    order: Option<&[usize]>,
    batch: usize,
    steps: Range<usize>,
    st: &mut State,
    sc: &mut Scratch,
) {
    let data = obj.data();
    let loss = obj.loss();
    let (n, k, d) = (data.n(), data.k(), data.d());
    let mut u = vec![0.0; k];
    let mut g = vec![0.0; k];
    let mut scratch = vec![0.0; loss.scratch_len(k)];
    let _ = sc;
    let mut acc = vec![0.0; d];
    let arch = Arch::new();
    for step in steps {
        let (p0, p1) = (step * batch, ((step + 1) * batch).min(n));
        let m = p1 - p0;
        acc.fill(0.0);
        for p in p0..p1 {
            let i = order.map_or(p, |o| o[p]);
            for (r, ur) in u.iter_mut().enumerate() {
                *ur = lanes::dot(One, data.row(i, r), &st.theta);
            }
            loss.eval(&u, data.order_of(i), Some(&mut g), None, &mut scratch);
            let w = data.weight(i);
            for (r, &gr) in g.iter().enumerate() {
                let c = w * gr;
                for (a, x) in acc.iter_mut().zip(data.row(i, r)) {
                    *a = c.mul_add(*x, *a);
                }
            }
        }
        let c = setup.n / (m as f64 * setup.total_weight);
        st.t += 1;
        let eta = setup.sched.eta(st.t);
        let gsum = &acc[..];
        let State { theta, avg, t } = &mut *st;
        let inv_k = 1.0 / *t as f64;
        arch.dispatch(
            #[inline(always)]
            || {
                lanes::step(One, gsum, theta, c, -eta, setup.beta_w, &setup.bw, setup.proj);
                if let Some(a) = avg.as_deref_mut() {
                    lanes::average(One, a, theta, inv_k);
                }
            },
        );
    }
}
