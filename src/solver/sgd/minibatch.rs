//! Mini-batch projected SGD steps and the per-epoch shuffle.
//!
//! A step on the batch `𝓑` (`m = |𝓑|` rows, consecutive positions of the visiting order):
//!
//! ```text
//! G   = Σ_{i∈𝓑} w_i ℓ'(x_iᵀθ_t; y_i) x_i                 (kernels::value_grad, Par::Seq)
//! g_t = (n / (m W)) G + (β θ_t + b)/W                   (unbiased for ∇F under uniform batches)
//! θ_{t+1} = Π(θ_t − η_t g_t)
//! ```
//!
//! The update and projection use the canonical arithmetic of [`super::lanes`]; the loop is the
//! engine's ([`engine::drive`]) with a batch hook. Rows of a shuffled batch are gathered into a
//! contiguous buffer first. Everything runs on the calling thread, so results do not depend on
//! the thread count.

use super::engine::{self, Flow, Iterates, StepHook};
use super::lanes::Proj;
use super::one_pass::{rows_of, Setup};
use crate::data::Features;
use crate::error::Result;
use crate::kernels::{self, Rows};
use crate::loss::Loss;
use crate::objective::Objective;
use crate::par::Par;
use crate::rng::{mix_seed, simulation_rng};
use pulp::{Arch, Simd, WithSimd};
use rand::Rng;
use std::ops::Range;

/// Reusable buffers of the batch steps.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    x: Vec<f64>,
    y: Vec<u8>,
    w: Vec<f64>,
    scores: Vec<f64>,
    grad: Vec<f64>,
}

/// The batch step hook: `G` of the next batch by the fused kernel, `c = n/(mW)`.
struct BatchStep<'s, 'a, L> {
    all: Rows<'a>,
    loss: &'s L,
    order: Option<&'s [usize]>,
    batch: usize,
    setup: &'s Setup,
    sc: &'s mut Scratch,
    /// The next batch index.
    next: usize,
    c: f64,
}

impl<L: Loss> StepHook<Proj> for BatchStep<'_, '_, L> {
    #[inline(always)]
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let (all, sc) = (self.all, &mut *self.sc);
        let (n, d) = (all.y.len(), all.d);
        let k = self.next;
        self.next += 1;
        let p0 = k * self.batch;
        let p1 = ((k + 1) * self.batch).min(n);
        let m = p1 - p0;
        let rows = match self.order {
            None => Rows::new(
                all.x.slice(p0 * d, p1 * d),
                d,
                &all.y[p0..p1],
                all.w.map(|w| &w[p0..p1]),
            ),
            Some(ord) => {
                sc.x.clear();
                sc.y.clear();
                sc.w.clear();
                for &i in &ord[p0..p1] {
                    let at = sc.x.len();
                    sc.x.resize(at + d, 0.0);
                    all.x.copy_into(i * d, &mut sc.x[at..]);
                    sc.y.push(all.y[i]);
                    if let Some(w) = all.w {
                        sc.w.push(w[i]);
                    }
                }
                Rows::new(Features::F64(&sc.x), d, &sc.y, all.w.map(|_| &sc.w[..]))
            }
        };
        sc.scores.resize(m, 0.0);
        kernels::value_grad(rows, self.loss, theta, &mut sc.scores, &mut sc.grad, Par::Seq);
        self.c = self.setup.n / (m as f64 * self.setup.total_weight);
        Ok(Flow::Continue)
    }
    #[inline(always)]
    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        self.setup
            .penalised_step(&self.sc.grad, self.c, alpha, theta, Proj::NONE);
    }
    #[inline(always)]
    fn descend(&self, alpha: f64, theta: &mut [f64], proj: &Proj) {
        self.setup.penalised_step(&self.sc.grad, self.c, alpha, theta, *proj);
    }
}

struct Batches<'s, 'a, L> {
    hook: BatchStep<'s, 'a, L>,
    steps: usize,
    st: &'s mut Iterates,
}

impl<L: Loss> WithSimd for Batches<'_, '_, L> {
    type Output = Result<Flow>;
    #[inline(always)]
    fn with_simd<S: Simd>(self, _simd: S) -> Result<Flow> {
        let Batches { mut hook, steps, st } = self;
        let setup = hook.setup;
        engine::drive(&mut hook, &setup.proj, &setup.sched, st, steps)
    }
}

/// Runs batch steps `steps` (batch `k` covers positions `k·batch .. min((k+1)·batch, n)`).
pub(crate) fn run<L: Loss>(
    obj: &Objective<'_, L>,
    setup: &Setup,
    order: Option<&[usize]>,
    batch: usize,
    steps: Range<usize>,
    st: &mut Iterates,
    sc: &mut Scratch,
) -> Result<Flow> {
    sc.grad.resize(obj.dim(), 0.0);
    Arch::new().dispatch(Batches {
        hook: BatchStep {
            all: rows_of(obj.data()),
            loss: obj.loss(),
            order,
            batch,
            setup,
            sc,
            next: steps.start,
            c: 0.0,
        },
        steps: steps.len(),
        st,
    })
}

/// A uniformly random permutation of `0..n` for epoch `epoch`: Fisher–Yates driven by
/// `simulation_rng(mix_seed(seed, epoch))` (xoshiro256++), with unbiased bounded draws
/// (Lemire's multiply-and-reject). Same `(seed, epoch)` → same permutation on every platform.
pub(crate) fn epoch_permutation(n: usize, seed: u64, epoch: u64) -> Vec<usize> {
    let mut rng = simulation_rng(mix_seed(seed, epoch));
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = bounded(&mut rng, i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// A uniform integer in `0..s` (`s ≥ 1`), Lemire (2019): `⌊r·s / 2^64⌋` with rejection of the
/// biased low products.
fn bounded<R: Rng + ?Sized>(rng: &mut R, s: u64) -> u64 {
    let mut m = rng.next_u64() as u128 * s as u128;
    if (m as u64) < s {
        let thresh = s.wrapping_neg() % s;
        while (m as u64) < thresh {
            m = rng.next_u64() as u128 * s as u128;
        }
    }
    (m >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_permutation_and_seeded() {
        let a = epoch_permutation(1000, 7, 0);
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        assert_eq!(a, epoch_permutation(1000, 7, 0));
        assert_ne!(a, epoch_permutation(1000, 7, 1));
        assert_ne!(a, epoch_permutation(1000, 8, 0));
        assert_eq!(epoch_permutation(0, 1, 1), Vec::<usize>::new());
        assert_eq!(epoch_permutation(1, 1, 1), vec![0]);
    }

    #[test]
    fn permutation_is_uniform_on_three_elements() {
        // 6 permutations of 3 elements, 60000 draws: each ≈ 10000 ± 5σ (σ ≈ 91).
        let mut counts = std::collections::HashMap::new();
        for e in 0..60_000u64 {
            *counts.entry(epoch_permutation(3, 99, e)).or_insert(0usize) += 1;
        }
        assert_eq!(counts.len(), 6);
        for (p, c) in counts {
            assert!((c as f64 - 10_000.0).abs() < 460.0, "{p:?}: {c}");
        }
    }
}
