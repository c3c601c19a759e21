//! Compensated (doubled-precision) value and gradient over K-wise data.

use super::{par_for, stream_blocks};
use crate::data::GroupView;
// TwoSum and Dot2 of the pairwise compensated pass (the same arithmetic).
use crate::kernels::compensated::{dot2, two_sum as two_sum_v, two_sum_s as two_sum};
use crate::loss::GroupLoss;
use crate::par::{tree_reduce, Par};
use pulp::{Arch, Simd, WithSimd};

/// One double-double update per lane: `(hi, lo) += c·x + cl·x`.
#[inline(always)]
fn dd_step<S: Simd>(simd: S, c: S::f64s, cl: S::f64s, x: S::f64s, hi: S::f64s, lo: S::f64s) -> (S::f64s, S::f64s) {
    let h = simd.mul_f64s(c, x);
    let pe = simd.mul_add_f64s(c, x, simd.neg_f64s(h));
    let (s, e) = two_sum_v(simd, hi, h);
    let small = simd.add_f64s(simd.add_f64s(e, pe), simd.mul_f64s(cl, x));
    (s, simd.add_f64s(lo, small))
}

/// `(ghi, glo) += c·x + cl·x` in double-double, per coordinate: `h = c x` exactly as
/// `h + fma(c, x, −h)`, TwoSum into `ghi`, the small parts and `cl·x` into `glo`.
#[inline(always)]
fn axpy_dd<S: Simd>(simd: S, c: f64, cl: f64, x: &[f64], ghi: &mut [f64], glo: &mut [f64]) {
    let (cv, clv) = (simd.splat_f64s(c), simd.splat_f64s(cl));
    let (xh, xt) = S::as_simd_f64s(x);
    let (hh, ht) = S::as_mut_simd_f64s(ghi);
    let (lh, lt) = S::as_mut_simd_f64s(glo);
    for ((&xv, hv), lv) in xh.iter().zip(hh.iter_mut()).zip(lh.iter_mut()) {
        (*hv, *lv) = dd_step(simd, cv, clv, xv, *hv, *lv);
    }
    if !xt.is_empty() {
        let (a, b) = dd_step(
            simd,
            cv,
            clv,
            simd.partial_load_f64s(xt),
            simd.partial_load_f64s(ht),
            simd.partial_load_f64s(lt),
        );
        simd.partial_store_f64s(ht, a);
        simd.partial_store_f64s(lt, b);
    }
}

struct CompBlock<'s, 'a, L> {
    v: &'s GroupView<'a>,
    loss: &'s L,
    theta: &'s [f64],
    rows: std::ops::Range<usize>,
}

/// A block's compensated sums: `((value hi, value lo), (gradient hi, gradient lo))`.
type CompOut = ((f64, f64), (Vec<f64>, Vec<f64>));

impl<L: GroupLoss> WithSimd for CompBlock<'_, '_, L> {
    type Output = CompOut;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> CompOut {
        let v = self.v;
        let (k, d) = (v.k(), v.d());
        let mut uh = vec![0.0; k];
        let mut ul = vec![0.0; k];
        let mut g = vec![0.0; k];
        let mut h = vec![0.0; k * k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        let (mut ghi, mut glo) = (vec![0.0; d], vec![0.0; d]);
        let (mut vhi, mut vlo) = (0.0, 0.0);
        for i in self.rows.clone() {
            for r in 0..k {
                (uh[r], ul[r]) = dot2(simd, v.row(i, r), self.theta);
            }
            let li = self
                .loss
                .eval(&uh, v.order_of(i), Some(&mut g), Some(&mut h), &mut scratch);
            let w = v.weight(i);
            let corr: f64 = g.iter().zip(&ul).map(|(a, b)| a * b).sum();
            let (s, e) = two_sum(vhi, w * li);
            vhi = s;
            vlo += e + w * corr;
            for r in 0..k {
                let c = w * g[r];
                let cl = w * h[r * k..(r + 1) * k].iter().zip(&ul).map(|(a, b)| a * b).sum::<f64>();
                axpy_dd(simd, c, cl, v.row(i, r), &mut ghi, &mut glo);
            }
        }
        ((vhi, vlo), (ghi, glo))
    }
}

/// Value and gradient sums like [`value_grad`](super::value_grad), as if in twice the working
/// precision: scores by Dot2 with a first-order correction of `ℓ` and `∂ℓ/∂u`
/// (`ℓ(u + δ) ≈ ℓ(u) + gᵀδ`, `g(u + δ) ≈ g(u) + Hδ`), double-double accumulation of the sums
/// (SIMD over the columns).
/// For Newton's final refinement; about as costly as a few ordinary passes.
pub fn value_grad_compensated<L: GroupLoss>(
    v: &GroupView<'_>,
    loss: &L,
    theta: &[f64],
    grad: &mut [f64],
    par: Par,
) -> f64 {
    let d = v.d();
    assert_eq!(theta.len(), d);
    assert_eq!(grad.len(), d);
    let blocks = stream_blocks(v);
    let arch = Arch::new();
    let leaf = |b: usize| -> CompOut {
        arch.dispatch(CompBlock {
            v,
            loss,
            theta,
            rows: blocks.range(b),
        })
    };
    let combine = |((va, ea), (mut ga, mut la)): CompOut, ((vb, eb), (gb, lb)): CompOut| {
        let (s, e) = two_sum(va, vb);
        for j in 0..ga.len() {
            let (t, q) = two_sum(ga[j], gb[j]);
            ga[j] = t;
            la[j] += q + lb[j];
        }
        ((s, ea + eb + e), (ga, la))
    };
    let ((val, e), (gh, gl)) = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    for j in 0..d {
        grad[j] = gh[j] + gl[j];
    }
    val + e
}
