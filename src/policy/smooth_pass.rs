//! The pass of the smoothed dual ([`super::smoothed`]): at `θ` and temperature `τ > 0`, every
//! state's softmax policy `p_s(a) ∝ exp(⟨θ, φ(s, a)⟩/τ)` (actions more than [`TRUNCATION`]`·τ`
//! below the best get probability 0), and the sums
//!
//! * `Σ_s w_s max_a s_a` (`s_a = ⟨θ, φ(s, a)⟩`): the upper bound `h(θ)`;
//! * `Σ_s w_s (max_a s_a + τ log Σ_a e^{(s_a − max)/τ})`: the smoothed dual `h_τ(θ)`, and the
//!   same at a second temperature `τ'` (the previous step's, to judge it);
//! * `Σ_s w_s Σ_a p_s(a) φ(s, a)`: `∇h_τ(θ)`, the mean feature of the softmax policy;
//! * `Σ_s w_s Σ_a p_s(a) s_a`: the policy's score, so `h − score` is the smoothing's loss;
//! * `(1/τ) Σ_s w_s Cov_{p_s}(φ(s, ·))`: `∇²h_τ(θ)`, from the mixed states (those with two
//!   or more actions of positive probability) whose index is a multiple of `stride`, each
//!   weighted by `stride` (an evenly spaced sample that caps the `A·d²` cost per state; the
//!   sample depends only on the state index, so the bits do not depend on the threads).
//!
//! The softmax policy is written to `probs` (when non-empty), the greedy actions to `actions`.
//! Blocks and the reduction tree are those of [`super::pass`].

use super::pass::{axpy, dot, run_kernel, BlockKernel};
use super::states::StateActions;
use crate::par::{Par, Partial};
use pulp::{Arch, Simd, WithSimd};

/// Actions whose score is more than `TRUNCATION·τ` below the best get probability 0
/// (`e^{−30} ≈ 9e-14`): the policy stays deterministic wherever the softmax is, to the
/// resolution that matters.
pub(crate) const TRUNCATION: f64 = 30.0;

/// Sums of one smoothed pass (unnormalised: multiply by `1/Σw`; `hessian` also by `1/τ`).
#[derive(Debug, Clone)]
pub(crate) struct SmoothSums {
    /// `Σ_s w_s Σ_a p_s(a) φ(s, a)`.
    pub mean: Vec<f64>,
    /// `Σ_{sampled mixed s} stride·w_s Σ_a p_s(a)(φ(s,a) − μ_s)(φ(s,a) − μ_s)ᵀ`, row-major `d × d`.
    pub hessian: Vec<f64>,
    /// `Σ_s w_s max_a s_a`.
    pub max_score: f64,
    /// `Σ_s w_s (max_a s_a + τ log Z_s)`.
    pub soft_max: f64,
    /// The same at the previous temperature `τ'` (to judge the previous step).
    pub soft_max_prev: f64,
    /// `Σ_s w_s Σ_a p_s(a) s_a`.
    pub policy_score: f64,
    /// Number of mixed states.
    pub mixed: f64,
}

impl SmoothSums {
    fn zero(d: usize) -> Self {
        SmoothSums {
            mean: vec![0.0; d],
            hessian: vec![0.0; d * d],
            max_score: 0.0,
            soft_max: 0.0,
            soft_max_prev: 0.0,
            policy_score: 0.0,
            mixed: 0.0,
        }
    }
}

impl Partial for SmoothSums {
    fn put(&self, out: &mut Vec<f64>) {
        self.mean.put(out);
        self.hessian.put(out);
        out.extend([
            self.max_score,
            self.soft_max,
            self.soft_max_prev,
            self.policy_score,
            self.mixed,
        ]);
    }
    fn take(src: &mut &[f64]) -> Self {
        let mean = Vec::take(src);
        let hessian = Vec::take(src);
        SmoothSums {
            mean,
            hessian,
            max_score: f64::take(src),
            soft_max: f64::take(src),
            soft_max_prev: f64::take(src),
            policy_score: f64::take(src),
            mixed: f64::take(src),
        }
    }
}

struct Smooth<'a> {
    states: &'a StateActions<'a>,
    theta: &'a [f64],
    tau: f64,
    tau_prev: f64,
    stride: usize,
}

struct SmoothBlock<'a, 'b> {
    k: &'a Smooth<'b>,
    lo: usize,
    probs: &'a mut [f64],
    actions: &'a mut [u32],
}

impl WithSimd for SmoothBlock<'_, '_> {
    type Output = SmoothSums;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> SmoothSums {
        let st = self.k.states;
        let (na, d, tau) = (st.actions(), st.d(), self.k.tau);
        let (th, tt) = S::as_simd_f64s(self.k.theta);
        let mut out = SmoothSums::zero(d);
        let mut scores = vec![0.0; na];
        let mut p = vec![0.0; na];
        let mut mu = vec![0.0; d];
        let mut diff = vec![0.0; d];
        for (i, act) in self.actions.iter_mut().enumerate() {
            let s = self.lo + i;
            let w = st.raw_weight(s);
            let feats = st.state(s);
            let mut best = f64::NEG_INFINITY;
            let mut arg = 0usize;
            for (a, sc) in scores.iter_mut().enumerate() {
                let v = dot(simd, &feats[a * d..(a + 1) * d], th, tt);
                *sc = v;
                if v > best {
                    best = v;
                    arg = a;
                }
            }
            let mut z = 0.0;
            let mut support = 0usize;
            for (pa, &sc) in p.iter_mut().zip(&scores) {
                let e = (sc - best) / tau;
                *pa = if e > -TRUNCATION { e.exp() } else { 0.0 };
                if *pa > 0.0 {
                    support += 1;
                }
                z += *pa;
            }
            p.iter_mut().for_each(|v| *v /= z);
            let z_prev: f64 = if self.k.tau_prev == tau {
                z
            } else {
                scores.iter().map(|&sc| ((sc - best) / self.k.tau_prev).exp()).sum()
            };
            mu.iter_mut().for_each(|v| *v = 0.0);
            let mut score = 0.0;
            for (a, &pa) in p.iter().enumerate() {
                if pa > 0.0 {
                    axpy(simd, pa, &feats[a * d..(a + 1) * d], &mut mu);
                    score += pa * scores[a];
                }
            }
            axpy(simd, w, &mu, &mut out.mean);
            out.max_score += w * best;
            out.soft_max += w * (best + tau * z.ln());
            out.soft_max_prev += w * (best + self.k.tau_prev * z_prev.ln());
            out.policy_score += w * score;
            if support >= 2 {
                out.mixed += 1.0;
                if s.is_multiple_of(self.k.stride) {
                    let ws = w * self.k.stride as f64;
                    for (a, &pa) in p.iter().enumerate() {
                        if pa == 0.0 {
                            continue;
                        }
                        let f = &feats[a * d..(a + 1) * d];
                        diff.iter_mut().zip(f).zip(&mu).for_each(|((o, x), m)| *o = x - m);
                        for (r, &di) in diff.iter().enumerate() {
                            axpy(simd, ws * pa * di, &diff, &mut out.hessian[r * d..(r + 1) * d]);
                        }
                    }
                }
            }
            if !self.probs.is_empty() {
                self.probs[i * na..(i + 1) * na].copy_from_slice(&p);
            }
            *act = arg as u32;
        }
        out
    }
}

impl BlockKernel for Smooth<'_> {
    type Sums = SmoothSums;
    fn block(&self, lo: usize, probs: &mut [f64], actions: &mut [u32]) -> SmoothSums {
        Arch::new().dispatch(SmoothBlock {
            k: self,
            lo,
            probs,
            actions,
        })
    }
    fn add(mut a: SmoothSums, b: SmoothSums) -> SmoothSums {
        a.mean.iter_mut().zip(&b.mean).for_each(|(x, y)| *x += y);
        a.hessian.iter_mut().zip(&b.hessian).for_each(|(x, y)| *x += y);
        a.max_score += b.max_score;
        a.soft_max += b.soft_max;
        a.soft_max_prev += b.soft_max_prev;
        a.policy_score += b.policy_score;
        a.mixed += b.mixed;
        a
    }
}

/// One smoothed pass at `theta` and temperature `tau > 0` (module docs; `soft_max_prev` at
/// `tau_prev > 0`); the Hessian from the mixed states with index `≡ 0 (mod stride)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    states: &StateActions<'_>,
    theta: &[f64],
    tau: f64,
    tau_prev: f64,
    stride: usize,
    probs: &mut [f64],
    actions: &mut [u32],
    par: Par,
) -> SmoothSums {
    assert_eq!(theta.len(), states.d());
    assert!(tau > 0.0 && tau_prev > 0.0 && stride >= 1);
    let kernel = Smooth {
        states,
        theta,
        tau,
        tau_prev,
        stride,
    };
    run_kernel(states, &kernel, probs, actions, par)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pass's gradient and Hessian are those of its smoothed value: central differences of
    /// `h_τ` give the mean feature, central differences of the mean feature give the Hessian.
    #[test]
    fn gradient_and_hessian_are_the_derivatives_of_the_smoothed_value() {
        let (n, na, d) = (300, 4, 3);
        let mut seed = 3u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let phi: Vec<f64> = (0..n * na * d).map(|_| rnd()).collect();
        let w: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
        let st = StateActions::new(&phi, n, na, d, Some(&w)).unwrap();
        let theta = [0.4, -0.2, 0.7];
        let tau = 0.05;
        let at = |t: &[f64]| run(&st, t, tau, tau, 1, &mut [], &mut vec![0u32; n], Par::Seq);
        let base = at(&theta);
        let h = 1e-5;
        for j in 0..d {
            let mut tp = theta;
            let mut tm = theta;
            tp[j] += h;
            tm[j] -= h;
            let (sp, sm) = (at(&tp), at(&tm));
            let fd = (sp.soft_max - sm.soft_max) / (2.0 * h);
            assert!(
                (fd - base.mean[j]).abs() < 1e-6 * base.mean[j].abs().max(1.0),
                "{j}: {fd} {}",
                base.mean[j]
            );
            for i in 0..d {
                let fd = (sp.mean[i] - sm.mean[i]) / (2.0 * h);
                let hij = base.hessian[i * d + j] / tau;
                assert!((fd - hij).abs() < 1e-5 * hij.abs().max(1.0), "({i}, {j}): {fd} {hij}");
            }
        }
        // The smoothing's loss is bounded by τ·log A per unit weight, and h ≤ h_τ.
        let wsum: f64 = w.iter().sum();
        assert!(base.max_score <= base.soft_max && base.soft_max <= base.max_score + tau * (na as f64).ln() * wsum);
        assert!(base.policy_score <= base.max_score);
    }
}
