//! Compensated (doubled-precision) value and gradient, for iterative refinement.

use super::row_ops::labels_f64;
use super::{Rows, MAX_BATCH};
use crate::data::Features;
use crate::loss::{Loss, LossOut};
use crate::par::Par;
use pulp::{Arch, Simd, WithSimd};

/// `(s, e)` with `s = fl(a + b)` and `s + e = a + b` exactly (Knuth's TwoSum).
#[inline(always)]
pub(super) fn two_sum<S: Simd>(simd: S, a: S::f64s, b: S::f64s) -> (S::f64s, S::f64s) {
    let s = simd.add_f64s(a, b);
    let bb = simd.sub_f64s(s, a);
    let e = simd.add_f64s(simd.sub_f64s(a, simd.sub_f64s(s, bb)), simd.sub_f64s(b, bb));
    (s, e)
}

/// Scalar TwoSum.
#[inline(always)]
pub(super) fn two_sum_s(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `xᵀv` as an unevaluated sum `hi + lo`, accurate as if computed in twice the working precision
/// (Ogita, Rump & Oishi 2005, Algorithm Dot2: error-free products by FMA, TwoSum accumulation).
#[inline(always)]
pub(super) fn dot2<S: Simd>(simd: S, x: &[f64], v: &[f64]) -> (f64, f64) {
    let d = v.len();
    let lanes = S::F64_LANES;
    let full = d / lanes * lanes;
    let (xh, _) = S::as_simd_f64s(&x[..full]);
    let (vh, _) = S::as_simd_f64s(&v[..full]);
    let z = simd.splat_f64s(0.0);
    let (mut p, mut s) = (z, z);
    #[inline(always)]
    fn step<S: Simd>(simd: S, a: S::f64s, b: S::f64s, p: &mut S::f64s, s: &mut S::f64s) {
        let h = simd.mul_f64s(a, b);
        let r = simd.mul_add_f64s(a, b, simd.neg_f64s(h));
        let (t, q) = two_sum(simd, *p, h);
        *p = t;
        *s = simd.add_f64s(*s, simd.add_f64s(q, r));
    }
    for j in 0..xh.len() {
        step(simd, xh[j], vh[j], &mut p, &mut s);
    }
    if full < d {
        step(
            simd,
            simd.partial_load_f64s(&x[full..]),
            simd.partial_load_f64s(&v[full..]),
            &mut p,
            &mut s,
        );
    }
    // Combine the lanes: TwoSum over the partial sums, plain sum of the small parts.
    let mut pl = [0.0f64; 16];
    let mut sl = [0.0f64; 16];
    simd.partial_store_f64s(&mut pl[..lanes], p);
    simd.partial_store_f64s(&mut sl[..lanes], s);
    let (mut hi, mut lo) = (0.0, 0.0);
    for k in 0..lanes {
        let (t, q) = two_sum_s(hi, pl[k]);
        hi = t;
        lo += q + sl[k];
    }
    two_sum_s(hi, lo)
}

struct CompensatedValueGrad<'a, L> {
    x: Features<'a>,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    theta: &'a [f64],
    loss: &'a L,
}

/// Double-double accumulator: `(hi, lo)` per component.
type Dd = (Vec<f64>, Vec<f64>);

impl<L: Loss> WithSimd for CompensatedValueGrad<'_, L> {
    type Output = ((f64, f64), Dd);
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let d = self.theta.len();
        let rows = self.y.len();
        let mut th = [0.0; MAX_BATCH];
        let mut tl = [0.0; MAX_BATCH];
        let mut yb = [0.0; MAX_BATCH];
        let mut vb = [0.0; MAX_BATCH];
        let mut g1 = [0.0; MAX_BATCH];
        let mut g2 = [0.0; MAX_BATCH];
        let (mut ghi, mut glo) = (vec![0.0; d], vec![0.0; d]);
        let (mut vhi, mut vlo) = (0.0, 0.0);
        let mut xb = vec![0.0; MAX_BATCH * d];
        let mut r0 = 0;
        while r0 < rows {
            let m = MAX_BATCH.min(rows - r0);
            self.x.copy_into(r0 * d, &mut xb[..m * d]);
            for i in 0..m {
                let xi = &xb[i * d..(i + 1) * d];
                (th[i], tl[i]) = dot2(simd, xi, self.theta);
            }
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            self.loss.eval_simd(
                simd,
                &th[..m],
                &yb[..m],
                LossOut {
                    value: Some(&mut vb[..m]),
                    d1: Some(&mut g1[..m]),
                    d2: Some(&mut g2[..m]),
                },
            );
            for i in 0..m {
                let wi = self.w.map_or(1.0, |w| w[r0 + i]);
                // ℓ(t_hi + t_lo) ≈ ℓ(t_hi) + ℓ'(t_hi) t_lo, ℓ'(t_hi + t_lo) ≈ ℓ'(t_hi) + ℓ''(t_hi) t_lo.
                let v = wi * vb[i];
                let (a, e) = two_sum_s(vhi, v);
                vhi = a;
                vlo += e + wi * g1[i] * tl[i];
                let c = wi * g1[i];
                let cl = wi * g2[i] * tl[i];
                let xi = &xb[i * d..(i + 1) * d];
                for j in 0..d {
                    let h = c * xi[j];
                    let r = c.mul_add(xi[j], -h);
                    let (a, e) = two_sum_s(ghi[j], h);
                    ghi[j] = a;
                    glo[j] += e + r + cl * xi[j];
                }
            }
            r0 += m;
        }
        ((vhi, vlo), (ghi, glo))
    }
}

/// Value and gradient sums like [`value_grad`](super::value_grad), but computed as if in twice
/// the working precision: scores by Dot2 with a first-order correction of `ℓ` and `ℓ'`, and
/// double-double accumulation of the sums. The remaining error is dominated by the loss functions' own
/// rounding (a few ulps of each `ℓ'(t_i)`), not by cancellation in `xᵀθ` or in the sums. Used by
/// the solvers' final refinement step; about as costly as two or three ordinary passes.
pub fn value_grad_compensated<L: Loss>(rows: Rows<'_>, loss: &L, theta: &[f64], grad: &mut [f64], par: Par) -> f64 {
    let d = rows.d;
    assert_eq!(theta.len(), d);
    assert_eq!(grad.len(), d);
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        arch.dispatch(CompensatedValueGrad {
            x: rows
                .x
                .slice((r.start - rows.data_first) * d, (r.end - rows.data_first) * d),
            y: rows.y_at(r.clone()),
            w: rows.w_at(r.clone()),
            theta,
            loss,
        })
    };
    let combine = |((va, ea), (mut ga, mut la)): ((f64, f64), Dd), ((vb, eb), (gb, lb)): ((f64, f64), Dd)| {
        let (v, e) = two_sum_s(va, vb);
        for j in 0..ga.len() {
            let (s, q) = two_sum_s(ga[j], gb[j]);
            ga[j] = s;
            la[j] += q + lb[j];
        }
        ((v, ea + eb + e), (ga, la))
    };
    let ((v, e), (gh, gl)) = rows.reduce(blocks, par, &leaf, &combine);
    for j in 0..d {
        grad[j] = gh[j] + gl[j];
    }
    v + e
}

#[cfg(test)]
mod compensated_tests {
    use super::*;

    struct D2<'a>(&'a [f64], &'a [f64]);
    impl WithSimd for D2<'_> {
        type Output = (f64, f64);
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) -> (f64, f64) {
            dot2(simd, self.0, self.1)
        }
    }

    #[test]
    fn dot2_is_accurate_to_doubled_precision() {
        // A row of the ill-conditioned reference fixture; exact value from mpmath (60 digits).
        let x = [
            0.0001856517791748047,
            1738.2125854492188,
            -1.134054183959961,
            -1.1332875164225698,
            0.6318502426147461,
        ];
        let th = [
            330.9773378962141,
            0.0009885688206428508,
            254.79563318078593,
            -254.15888419590758,
            -0.7879532392481075,
        ];
        // mpmath (60 digits): 0.3649576355969544449000015…; its nearest double is 0.36495763559695443.
        let exact = 0.364_957_635_596_954_43_f64;
        for (hi, lo) in [
            Arch::new().dispatch(D2(&x, &th)),
            pulp::Scalar::new().vectorize(D2(&x, &th)),
        ] {
            assert!(
                (hi - exact).abs() <= f64::EPSILON * exact,
                "hi = {hi:.20e}, lo = {lo:e}, exact {exact:.20e}"
            );
        }
    }
}
