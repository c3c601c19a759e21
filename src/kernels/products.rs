//! Products with `X` at given scores: `X v`, the Hessian-vector product and the dense Hessian.

use super::row_elem::{Ahead, RowElem};
use super::row_ops::{labels_f64, RowOps};
use super::{batch_rows, fused, Rows, MAX_BATCH};
use crate::data::Features;
use crate::loss::{Loss, LossOut};
use crate::par::Par;
use pulp::{Arch, Simd, WithSimd};

struct MatVec<'a> {
    x: Features<'a>,
    v: &'a [f64],
    out: &'a mut [f64],
}

impl WithSimd for MatVec<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let ops = RowOps::new(simd, self.v);
        let d = self.v.len();
        match self.x {
            Features::F64(x) => ops.dots(x, self.out),
            Features::F32(x) => {
                let mut ahead = Ahead::new(x);
                ops.dots_with(x, self.out, |i| ahead.to((i + 1) * d))
            }
        }
    }
}

/// `out = X v`.
pub fn matvec(rows: Rows<'_>, v: &[f64], out: &mut [f64], par: Par) {
    let d = rows.d;
    assert_eq!(v.len(), d);
    assert_eq!(out.len(), rows.held().len());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize, o: &mut [f64]| {
        rows.with_rows(blocks.range(b), |x| arch.dispatch(MatVec { x, v, out: o }));
    };
    rows.reduce_rows(blocks, 1, par, out, &leaf, &|(), ()| ());
}

struct HessVec<'a, L> {
    x: Features<'a>,
    y: &'a [u8],
    w: Option<&'a [f64]>,
    scores: &'a [f64],
    v: &'a [f64],
    loss: &'a L,
    out: &'a mut [f64],
}

impl<L: Loss> WithSimd for HessVec<'_, L> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        match self.x {
            Features::F64(x) => self.run(simd, x),
            Features::F32(x) => self.run(simd, x),
        }
    }
}

impl<L: Loss> HessVec<'_, L> {
    #[inline(always)]
    fn run<S: Simd, E: RowElem>(self, simd: S, x: &[E]) {
        let d = self.v.len();
        let rows = self.y.len();
        let ops = RowOps::new(simd, self.v);
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut hb = [0.0; MAX_BATCH];
        let mut xv = [0.0; MAX_BATCH];
        let mut r0 = 0;
        let mut ahead = Ahead::new(x);
        while r0 < rows {
            let m = bsz.min(rows - r0);
            let xb = &x[r0 * d..(r0 + m) * d];
            ops.dots_with(xb, &mut xv[..m], |i| ahead.to((r0 + i + 1) * d));
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            self.loss.eval_simd(
                simd,
                &self.scores[r0..r0 + m],
                &yb[..m],
                LossOut {
                    d2: Some(&mut hb[..m]),
                    ..Default::default()
                },
            );
            for i in 0..m {
                xv[i] *= hb[i];
            }
            if let Some(w) = self.w {
                for i in 0..m {
                    xv[i] *= w[r0 + i];
                }
            }
            ops.axpys(xb, &xv[..m], self.out);
            r0 += m;
        }
    }
}

/// `out = Xᵀ diag(w ℓ''(t)) X v` at the scores `t`, in one pass.
pub fn hess_vec<L: Loss>(rows: Rows<'_>, loss: &L, scores: &[f64], v: &[f64], out: &mut [f64], par: Par) {
    let d = rows.d;
    assert_eq!(v.len(), d);
    assert_eq!(out.len(), d);
    assert_eq!(scores.len(), rows.held().len());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        let mut o = vec![0.0; d];
        rows.with_rows(r.clone(), |x| {
            arch.dispatch(HessVec {
                x,
                y: rows.y_at(r.clone()),
                w: rows.w_at(r.clone()),
                scores: &scores[rows.local(r.clone())],
                v,
                loss,
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

/// `H = Xᵀ diag(w ℓ''(t)) X` (sum, not mean) at the scores `t`, written in full (both
/// triangles) into the column-major `d × d` buffer `h`. Returns the number of rows with
/// negative curvature (`ℓ'' < 0`, only for non-convex losses).
///
/// The rows are scaled by `√|w ℓ''|` a mini-batch at a time into panels of about 2 MiB, each a
/// Gram product ([`gram`](super::gram)); the accumulation is chunked as in
/// [`fused`](super::fused), whose [`value_grad_hessian`](super::value_grad_hessian) computes the
/// same bits together with the value and gradient.
pub fn hessian<L: Loss>(rows: Rows<'_>, loss: &L, scores: &[f64], h: &mut [f64], par: Par) -> usize {
    fused::hessian_from_scores(rows, loss, scores, h, par)
}
