//! The fused value + gradient pass (optionally with the certificate's scale from the same rows)
//! and the gradient magnitudes `Σ |w ℓ'| |x|` on their own.

use super::row_elem::{Ahead, RowElem};
use super::row_ops::{batch_sum, labels_f64, RowOps};
use super::{batch_rows, Rows, MAX_BATCH};
use crate::data::Features;
use crate::loss::{Loss, LossOut};
use crate::par::Par;
use pulp::{Arch, Simd, WithSimd};

/// The fused pass; with `SCALE`, also `scale += Σ |w_i ℓ'_i| |x_i|` (the term magnitudes of the
/// certificate) from the same rows, which are then in L1. Without `SCALE` the extra code is
/// compiled out.
struct FusedValueGrad<'a, L, const SCALE: bool> {
    x: Features<'a>,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    theta: &'a [f64],
    loss: &'a L,
    scores: &'a mut [f64],
    grad: &'a mut [f64],
    scale: &'a mut [f64],
}

impl<L: Loss, const SCALE: bool> WithSimd for FusedValueGrad<'_, L, SCALE> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        match self.x {
            Features::F64(x) => self.run(simd, x),
            Features::F32(x) => self.run(simd, x),
        }
    }
}

impl<L: Loss, const SCALE: bool> FusedValueGrad<'_, L, SCALE> {
    #[inline(always)]
    fn run<S: Simd, E: RowElem>(self, simd: S, x: &[E]) -> f64 {
        let d = self.theta.len();
        let rows = self.y.len();
        let ops = RowOps::new(simd, self.theta);
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut vb = [0.0; MAX_BATCH];
        let mut gb = [0.0; MAX_BATCH];
        let mut value = 0.0;
        let mut r0 = 0;
        let mut ahead = Ahead::new(x);
        while r0 < rows {
            let m = bsz.min(rows - r0);
            let xb = &x[r0 * d..(r0 + m) * d];
            let tb = &mut self.scores[r0..r0 + m];
            ops.dots_with(xb, tb, |i| ahead.to((r0 + i + 1) * d));
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            self.loss.eval_simd(
                simd,
                tb,
                &yb[..m],
                LossOut {
                    value: Some(&mut vb[..m]),
                    d1: Some(&mut gb[..m]),
                    d2: None,
                },
            );
            let wb = self.w.map(|w| &w[r0..r0 + m]);
            value += batch_sum(&vb[..m], wb);
            if let Some(wb) = wb {
                for (g, &wi) in gb[..m].iter_mut().zip(wb) {
                    *g *= wi;
                }
            }
            ops.axpys(xb, &gb[..m], self.grad);
            if SCALE {
                let mut cb = [0.0; MAX_BATCH];
                for (c, g) in cb[..m].iter_mut().zip(&gb[..m]) {
                    *c = g.abs();
                }
                ops.axpys_abs::<E, true>(xb, &cb[..m], self.scale);
            }
            r0 += m;
        }
        value
    }
}

/// The fused pass: writes `scores[i] = x_iᵀθ` and `grad = Σ w_i ℓ'(t_i; y_i) x_i`, returns
/// `Σ w_i ℓ(t_i; y_i)` (sums, not means). One read of `X`; deterministic for any thread count.
pub fn value_grad<L: Loss>(
    rows: Rows<'_>,
    loss: &L,
    theta: &[f64],
    scores: &mut [f64],
    grad: &mut [f64],
    par: Par,
) -> f64 {
    fused_pass::<L, false>(rows, loss, theta, scores, grad, &mut [], par)
}

/// [`value_grad`] and, from the same read of `X`, `scale_j = Σ_i |w_i ℓ'(t_i)| |x_ij|` (the
/// magnitudes of [`abs_grad`], the certificate's scale). The value, gradient and scores are the
/// same bits as [`value_grad`]'s, the scale the same bits as [`abs_grad`]'s at these scores.
pub(crate) fn value_grad_scale<L: Loss>(
    rows: Rows<'_>,
    loss: &L,
    theta: &[f64],
    scores: &mut [f64],
    grad: &mut [f64],
    scale: &mut [f64],
    par: Par,
) -> f64 {
    assert_eq!(scale.len(), rows.d);
    fused_pass::<L, true>(rows, loss, theta, scores, grad, scale, par)
}

fn fused_pass<L: Loss, const SCALE: bool>(
    rows: Rows<'_>,
    loss: &L,
    theta: &[f64],
    scores: &mut [f64],
    grad: &mut [f64],
    scale: &mut [f64],
    par: Par,
) -> f64 {
    let d = rows.d;
    assert_eq!(theta.len(), d);
    assert_eq!(grad.len(), d);
    assert_eq!(scores.len(), rows.held().len());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize, sc: &mut [f64]| {
        let r = blocks.range(b);
        let mut g = vec![0.0; d];
        let mut a = vec![0.0; if SCALE { d } else { 0 }];
        let v = rows.with_rows(r.clone(), |x| {
            arch.dispatch(FusedValueGrad::<L, SCALE> {
                x,
                y: rows.y_at(r.clone()),
                w: rows.w_at(r.clone()),
                theta,
                loss,
                scores: sc,
                grad: &mut g,
                scale: &mut a,
            })
        });
        (v, g, a)
    };
    let combine = |(va, mut ga, mut aa): (f64, Vec<f64>, Vec<f64>), (vb, gb, ab): (f64, Vec<f64>, Vec<f64>)| {
        for (x, y) in ga.iter_mut().zip(&gb) {
            *x += y;
        }
        for (x, y) in aa.iter_mut().zip(&ab) {
            *x += y;
        }
        (va + vb, ga, aa)
    };
    let (v, g, a) = rows.reduce_rows(blocks, 1, par, scores, &leaf, &combine);
    grad.copy_from_slice(&g);
    if SCALE {
        scale.copy_from_slice(&a);
    }
    v
}

struct AbsGrad<'a, L> {
    x: Features<'a>,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    scores: &'a [f64],
    loss: &'a L,
    zeros: &'a [f64],
    out: &'a mut [f64],
}

impl<L: Loss> WithSimd for AbsGrad<'_, L> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        match self.x {
            Features::F64(x) => self.run(simd, x),
            Features::F32(x) => self.run(simd, x),
        }
    }
}

impl<L: Loss> AbsGrad<'_, L> {
    #[inline(always)]
    fn run<S: Simd, E: RowElem>(self, simd: S, x: &[E]) {
        let d = self.zeros.len();
        let rows = self.y.len();
        let ops = RowOps::new(simd, self.zeros);
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut gb = [0.0; MAX_BATCH];
        let mut r0 = 0;
        while r0 < rows {
            let m = bsz.min(rows - r0);
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            self.loss.eval_simd(
                simd,
                &self.scores[r0..r0 + m],
                &yb[..m],
                LossOut {
                    d1: Some(&mut gb[..m]),
                    ..Default::default()
                },
            );
            for (i, g) in gb[..m].iter_mut().enumerate() {
                *g = (*g * self.w.map_or(1.0, |w| w[r0 + i])).abs();
            }
            ops.axpys_abs::<E, true>(&x[r0 * d..(r0 + m) * d], &gb[..m], self.out);
            r0 += m;
        }
    }
}

/// `out_j = Σ_i |w_i ℓ'(t_i; y_i)| |x_ij|` at the scores `t` (sums, not means), in one pass: the
/// magnitude of the terms of each gradient coordinate, the scale of the solvers' relative KKT
/// certificate ([`crate::solver::certificate`]). Deterministic for any thread count.
pub(crate) fn abs_grad<L: Loss>(rows: Rows<'_>, loss: &L, scores: &[f64], out: &mut [f64], par: Par) {
    let d = rows.d;
    assert_eq!(out.len(), d);
    assert_eq!(scores.len(), rows.held().len());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let zeros = vec![0.0; d];
    let leaf = |b: usize| {
        let r = blocks.range(b);
        let mut o = vec![0.0; d];
        rows.with_rows(r.clone(), |x| {
            arch.dispatch(AbsGrad {
                x,
                y: rows.y_at(r.clone()),
                w: rows.w_at(r.clone()),
                scores: &scores[rows.local(r.clone())],
                loss,
                zeros: &zeros,
                out: &mut o,
            })
        });
        o
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        for (x, y) in a.iter_mut().zip(&b) {
            *x += y;
        }
        a
    };
    let o = rows.reduce(blocks, par, &leaf, &combine);
    out.copy_from_slice(&o);
}

#[cfg(test)]
mod scale_tests {
    use super::*;
    use crate::data::Features;
    use crate::loss::{Logistic, RrDebiased};

    /// The fused value+gradient+scale pass gives the bits of `value_grad` and `abs_grad`, with
    /// and without weights, for several widths (the scalar and SIMD row kernels).
    #[test]
    fn fused_scale_pass_is_the_two_passes_bit_for_bit() {
        for &(n, d) in &[(700usize, 3usize), (1500, 17), (300, 64)] {
            let x: Vec<f64> = (0..n * d).map(|i| ((i * 37 % 101) as f64 - 50.0) / 17.0).collect();
            let y: Vec<u8> = (0..n).map(|i| ((i * 7) % 3 == 0) as u8).collect();
            let w: Vec<f64> = (0..n).map(|i| 0.5 + (i % 5) as f64).collect();
            let theta: Vec<f64> = (0..d).map(|j| ((j * 13 % 7) as f64 - 3.0) / 5.0).collect();
            for weights in [None, Some(&w[..])] {
                let rows = Rows::new(Features::F64(&x), d, &y, weights);
                let rr = RrDebiased::new(0.7).unwrap();
                for pass in 0..2 {
                    let (mut s1, mut g1, mut s2, mut g2) = (vec![0.0; n], vec![0.0; d], vec![0.0; n], vec![0.0; d]);
                    let (mut a1, mut a2) = (vec![0.0; d], vec![0.0; d]);
                    let (v1, v2) = if pass == 0 {
                        let v1 = value_grad(rows, &Logistic, &theta, &mut s1, &mut g1, Par::Seq);
                        abs_grad(rows, &Logistic, &s1, &mut a1, Par::Seq);
                        let v2 = value_grad_scale(rows, &Logistic, &theta, &mut s2, &mut g2, &mut a2, Par::Seq);
                        (v1, v2)
                    } else {
                        let v1 = value_grad(rows, &rr, &theta, &mut s1, &mut g1, Par::Seq);
                        abs_grad(rows, &rr, &s1, &mut a1, Par::Seq);
                        let v2 = value_grad_scale(rows, &rr, &theta, &mut s2, &mut g2, &mut a2, Par::Seq);
                        (v1, v2)
                    };
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(v1.to_bits(), v2.to_bits(), "value, d = {d}");
                    assert_eq!(bits(&s1), bits(&s2), "scores, d = {d}");
                    assert_eq!(bits(&g1), bits(&g2), "gradient, d = {d}");
                    assert_eq!(bits(&a1), bits(&a2), "scale, d = {d}");
                    // And the scale is what it says: Σ |w ℓ'| |x|.
                    for j in 0..d {
                        let want: f64 = (0..n)
                            .map(|i| {
                                let wi = weights.map_or(1.0, |w| w[i]);
                                let l1 = if pass == 0 {
                                    Logistic.d1(s1[i], y[i])
                                } else {
                                    rr.d1(s1[i], y[i])
                                };
                                (wi * l1).abs() * x[i * d + j].abs()
                            })
                            .sum();
                        assert!((a2[j] - want).abs() <= 1e-12 * want.max(1e-300), "d = {d}, j = {j}");
                    }
                }
            }
        }
    }
}
