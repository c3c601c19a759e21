//! The fused value + gradient + Hessian pass ([`value_grad_hessian`]) and the chunked Hessian
//! accumulation it shares with [`super::hessian`].
//!
//! One read of `X` gives, for the row blocks of the streaming passes (1 MiB each),
//!
//! * the scores `t_i = x_iᵀθ`, the value `Σ w_i ℓ(t_i)` and the gradient `Σ w_i ℓ'(t_i) x_i`,
//!   with **exactly** the arithmetic of [`super::value_grad`] (same blocks, same mini-batches,
//!   same reduction tree — the same bits);
//! * `H = Σ w_i ℓ''(t_i) x_i x_iᵀ`: while a mini-batch is in L1, its rows are scaled by
//!   `√|w_i ℓ''(t_i)|` into a panel (about 2 MiB); a full panel is one Gram product
//!   `H += PᵀP` ([`super::gram`]: faer, or OpenBLAS `dsyrk` with the `openblas` feature), rows
//!   with `ℓ'' < 0` (possible for `mle-rr`) going to a second part of the panel that is
//!   subtracted. For `d < 12` (`SMALL_D`) the lower triangle is accumulated row by row instead.
//!
//! **Reduction.** The value and gradient are combined over blocks by the midpoint tree of
//! [`crate::par`]. The Hessian is accumulated in place along the blocks of each *chunk*, the
//! subtrees at depth [`chunk_depth`] of that same tree (at most 16 chunks; fewer for `d > 1448`
//! so that the accumulators never exceed 256 MiB), and the chunks' matrices are added along the
//! tree above. Both shapes depend on `(n, d)` only, so the results are bit-identical for any
//! thread count. Memory: one `d × d` accumulator per live chunk (never more than the number of
//! chunks) and one panel per running chunk — `O(d²)` plus the panel, instead of a fresh
//! `d × d` matrix per row block.
//!
//! [`super::hessian`] runs the same leaves on given scores (curvature and panels only), so the
//! Hessian of the fused pass and of a separate Hessian pass at the same scores are the same bits.

mod chunked;

pub use chunked::chunk_depth;

use super::row_elem::{Ahead, RowElem};
use super::row_ops::{batch_sum, labels_f64, RowOps, SMALL_D};
use super::{batch_rows, gram, Rows, MAX_BATCH};
use crate::data::Features;
use crate::loss::{Loss, LossOut};
use crate::par::Par;
use chunked::{chunked_reduce, symmetrize_into, HessAcc};
use pulp::{Arch, Simd, WithSimd};

/// [`super::value_grad`]'s mini-batch loop (the same operations in the same order, so the
/// same scores, value and gradient bits), then the curvature of the batch and its scaled rows.
struct FusedValueGradHess<'a, 'h, L> {
    x: Features<'a>,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    theta: &'a [f64],
    loss: &'a L,
    scores: &'a mut [f64],
    grad: &'a mut [f64],
    acc: &'h mut HessAcc,
}

impl<L: Loss> WithSimd for FusedValueGradHess<'_, '_, L> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        match self.x {
            Features::F64(x) => self.run(simd, x),
            Features::F32(x) => self.run(simd, x),
        }
    }
}

impl<L: Loss> FusedValueGradHess<'_, '_, L> {
    #[inline(always)]
    fn run<S: Simd, E: RowElem>(self, simd: S, x: &[E]) -> f64 {
        let d = self.theta.len();
        let rows = self.y.len();
        let ops = RowOps::new(simd, self.theta);
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut vb = [0.0; MAX_BATCH];
        let mut gb = [0.0; MAX_BATCH];
        let mut cb = [0.0; MAX_BATCH];
        let mut value = 0.0;
        let mut r0 = 0;
        let mut ahead = Ahead::new(x);
        while r0 < rows {
            let m = bsz.min(rows - r0);
            let xb = &x[r0 * d..(r0 + m) * d];
            let tb = &mut self.scores[r0..r0 + m];
            ops.dots_with(xb, tb, |i| ahead.to((r0 + i + 1) * d));
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            // ℓ, ℓ' and ℓ'' in one evaluation: every loss computes each output lane by lane from
            // the same intermediates whichever outputs are requested, so these are the bits of
            // value_grad's (ℓ, ℓ') and of the Hessian pass's ℓ'' (checked for every loss by
            // tests/determinism.rs).
            self.loss.eval_simd(
                simd,
                tb,
                &yb[..m],
                LossOut {
                    value: Some(&mut vb[..m]),
                    d1: Some(&mut gb[..m]),
                    d2: Some(&mut cb[..m]),
                },
            );
            let wb = self.w.map(|w| &w[r0..r0 + m]);
            value += batch_sum(&vb[..m], wb);
            if let Some(wb) = wb {
                for (g, &wi) in gb[..m].iter_mut().zip(wb) {
                    *g *= wi;
                }
                for (c, &wi) in cb[..m].iter_mut().zip(wb) {
                    *c *= wi;
                }
            }
            ops.axpys(xb, &gb[..m], self.grad);
            self.acc.add_rows(xb, &cb[..m]);
            r0 += m;
        }
        value
    }
}

/// `c_i = w_i ℓ''(t_i; y_i)` for one mini-batch.
#[inline(always)]
fn curvature<S: Simd, L: Loss>(simd: S, loss: &L, t: &[f64], y: &[f64], w: Option<&[f64]>, c: &mut [f64]) {
    loss.eval_simd(
        simd,
        t,
        y,
        LossOut {
            d2: Some(&mut *c),
            ..Default::default()
        },
    );
    if let Some(w) = w {
        for (ci, wi) in c.iter_mut().zip(w) {
            *ci *= wi;
        }
    }
}

/// The Hessian-only leaf: curvature from given scores and the scaled rows, with the mini-batches
/// of [`FusedValueGradHess`].
struct CurvatureRows<'a, 'h, L> {
    x: Features<'a>,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    scores: &'a [f64],
    d: usize,
    loss: &'a L,
    acc: &'h mut HessAcc,
}

impl<L: Loss> WithSimd for CurvatureRows<'_, '_, L> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        match self.x {
            Features::F64(x) => self.run(simd, x),
            Features::F32(x) => self.run(simd, x),
        }
    }
}

impl<L: Loss> CurvatureRows<'_, '_, L> {
    #[inline(always)]
    fn run<S: Simd, E: RowElem>(self, simd: S, x: &[E]) {
        let d = self.d;
        let rows = self.y.len();
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut cb = [0.0; MAX_BATCH];
        let mut r0 = 0;
        while r0 < rows {
            let m = bsz.min(rows - r0);
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            let wb = self.w.map(|w| &w[r0..r0 + m]);
            curvature(simd, self.loss, &self.scores[r0..r0 + m], &yb[..m], wb, &mut cb[..m]);
            self.acc.add_rows(&x[r0 * d..(r0 + m) * d], &cb[..m]);
            r0 += m;
        }
    }
}

/// The fused pass: writes `scores[i] = x_iᵀθ`, `grad = Σ w_i ℓ'(t_i) x_i` and the full symmetric
/// `h = Σ w_i ℓ''(t_i) x_i x_iᵀ` (column-major `d × d`); returns `(Σ w_i ℓ(t_i), rows with
/// ℓ'' < 0)` (sums, not means). One read of `X`. The scores, value and gradient are the bits of
/// [`super::value_grad`], the Hessian the bits of [`super::hessian`] at those scores; all are
/// bit-identical for any thread count.
pub fn value_grad_hessian<L: Loss>(
    rows: Rows<'_>,
    loss: &L,
    theta: &[f64],
    scores: &mut [f64],
    grad: &mut [f64],
    h: &mut [f64],
    par: Par,
) -> (f64, usize) {
    let d = rows.d;
    assert_eq!(theta.len(), d);
    assert_eq!(grad.len(), d);
    assert_eq!(h.len(), d * d);
    assert_eq!(scores.len(), rows.held().len());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize, sc: &mut [f64], acc: &mut HessAcc| {
        let r = blocks.range(b);
        let mut g = vec![0.0; d];
        let v = rows.with_rows(r.clone(), |x| {
            arch.dispatch(FusedValueGradHess {
                x,
                y: rows.y_at(r.clone()),
                w: rows.w_at(r.clone()),
                theta,
                loss,
                scores: sc,
                grad: &mut g,
                acc: &mut *acc,
            })
        });
        (v, g)
    };
    let combine = |(va, mut ga): (f64, Vec<f64>), (vb, gb): (f64, Vec<f64>)| {
        for (a, b) in ga.iter_mut().zip(&gb) {
            *a += b;
        }
        (va + vb, ga)
    };
    let ((v, g), hl, nneg) = chunked_reduce(
        blocks,
        1,
        d,
        rows.par(par),
        rows.shard.as_ref(),
        scores,
        &leaf,
        &combine,
    );
    grad.copy_from_slice(&g);
    symmetrize_into(&hl, d, h);
    (v, nneg)
}

/// `H = Σ w_i ℓ''(t_i) x_i x_iᵀ` at given scores (the Hessian half of [`value_grad_hessian`]),
/// full symmetric into `h`; returns the rows with `ℓ'' < 0`.
pub(super) fn hessian_from_scores<L: Loss>(rows: Rows<'_>, loss: &L, scores: &[f64], h: &mut [f64], par: Par) -> usize {
    let d = rows.d;
    assert_eq!(h.len(), d * d);
    assert_eq!(scores.len(), rows.held().len());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize, _: &mut [f64], acc: &mut HessAcc| {
        let r = blocks.range(b);
        rows.with_rows(r.clone(), |x| {
            arch.dispatch(CurvatureRows {
                x,
                y: rows.y_at(r.clone()),
                w: rows.w_at(r.clone()),
                scores: &scores[rows.local(r.clone())],
                d,
                loss,
                acc: &mut *acc,
            })
        });
    };
    let ((), hl, nneg) = chunked_reduce(
        blocks,
        0,
        d,
        rows.par(par),
        rows.shard.as_ref(),
        &mut [],
        &leaf,
        &|(), ()| (),
    );
    symmetrize_into(&hl, d, h);
    nneg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Features;
    use crate::loss::RrNoisyChannel;

    pub(super) fn data(n: usize, d: usize) -> (Vec<f64>, Vec<u8>, Vec<f64>) {
        let mut s = 7u64;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let x: Vec<f64> = (0..n * d).map(|_| next() * 2.0).collect();
        let y: Vec<u8> = (0..n).map(|_| u8::from(next() > 0.0)).collect();
        let w: Vec<f64> = (0..n).map(|_| next() + 1.0).collect();
        (x, y, w)
    }

    /// `Σ c_i x_i x_iᵀ` by the definition, for comparison.
    pub(super) fn naive<L: Loss>(x: &[f64], y: &[u8], w: &[f64], d: usize, loss: &L, t: &[f64]) -> Vec<f64> {
        let mut h = vec![0.0; d * d];
        for i in 0..y.len() {
            let c = w[i] * loss.d2(t[i], y[i]);
            for a in 0..d {
                for b in 0..d {
                    h[a * d + b] += c * x[i * d + a] * x[i * d + b];
                }
            }
        }
        h
    }

    #[test]
    fn chunked_hessian_matches_the_definition_with_negative_curvature() {
        // The small-d and the panel paths, one and several chunks.
        for (n, d) in [(3000usize, 5usize), (3000, 40), (1000, 300), (40_000, 20)] {
            let (x, y, w) = data(n, d);
            let theta: Vec<f64> = (0..d).map(|j| 0.3 * ((j % 7) as f64 - 3.0)).collect();
            let rows = Rows::new(Features::F64(&x), d, &y, Some(&w));
            let loss = RrNoisyChannel::new(0.5).unwrap();
            let mut t = vec![0.0; n];
            let mut g = vec![0.0; d];
            let mut h = vec![0.0; d * d];
            let (_, nneg) = value_grad_hessian(rows, &loss, &theta, &mut t, &mut g, &mut h, Par::Seq);
            let want = naive(&x, &y, &w, d, &loss, &t);
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (a, b) in h.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-12 * scale, "n={n} d={d}: {a} vs {b}");
            }
            let neg = (0..n).filter(|&i| loss.d2(t[i], y[i]) < 0.0).count();
            assert_eq!(nneg, neg);
            assert!(neg > 0, "the test needs negative curvature rows");
            let mut h2 = vec![0.0; d * d];
            assert_eq!(hessian_from_scores(rows, &loss, &t, &mut h2, Par::Seq), nneg);
            assert!(h.iter().zip(&h2).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
    }
}
