//! The fused value + gradient pass over K-wise data, and the gradient magnitudes
//! `Σ |w ∂ℓ/∂u| |φ|` (the certificate's scale).

use super::{axpys, dot, par_for, stream_blocks};
use crate::data::GroupView;
use crate::loss::GroupLoss;
use crate::par::{tree_reduce, tree_reduce_rows, Par};
use pulp::{Arch, Simd, WithSimd};

struct FusedBlock<'s, 'a, L> {
    v: &'s GroupView<'a>,
    loss: &'s L,
    theta: &'s [f64],
    rows: std::ops::Range<usize>,
    scores: &'s mut [f64],
    grad: &'s mut [f64],
}

impl<L: GroupLoss> WithSimd for FusedBlock<'_, '_, L> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        let v = self.v;
        let k = v.k();
        let mut g = vec![0.0; k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        let mut value = 0.0;
        for (b, i) in self.rows.clone().enumerate() {
            let u = &mut self.scores[b * k..(b + 1) * k];
            for (r, ur) in u.iter_mut().enumerate() {
                *ur = dot(simd, v.row(i, r), self.theta);
            }
            let li = self.loss.eval(u, v.order_of(i), Some(&mut g), None, &mut scratch);
            let w = v.weight(i);
            if v.weights().is_some() {
                value += w * li;
                g.iter_mut().for_each(|x| *x *= w);
            } else {
                value += li;
            }
            axpys(simd, v, i, &g, self.grad);
        }
        value
    }
}

/// The fused pass: writes the scores `scores[i·K + k] = φ_ikᵀθ` and
/// `grad = Σ_i w_i Φ_iᵀ ∂ℓ_i/∂u`, returns `Σ_i w_i ℓ_i` (sums, not means). One read of the
/// features; deterministic for any thread count.
pub fn value_grad<L: GroupLoss>(
    v: &GroupView<'_>,
    loss: &L,
    theta: &[f64],
    scores: &mut [f64],
    grad: &mut [f64],
    par: Par,
) -> f64 {
    let (k, d) = (v.k(), v.d());
    assert_eq!(theta.len(), d);
    assert_eq!(grad.len(), d);
    assert_eq!(scores.len(), v.n() * k);
    let blocks = stream_blocks(v);
    let arch = Arch::new();
    let leaf = |b: usize, sc: &mut [f64]| {
        let mut g = vec![0.0; d];
        let val = arch.dispatch(FusedBlock {
            v,
            loss,
            theta,
            rows: blocks.range(b),
            scores: sc,
            grad: &mut g,
        });
        (val, g)
    };
    let combine = |(va, mut ga): (f64, Vec<f64>), (vb, gb): (f64, Vec<f64>)| {
        ga.iter_mut().zip(&gb).for_each(|(a, b)| *a += b);
        (va + vb, ga)
    };
    let (val, g) = tree_reduce_rows(blocks, k, par_for(v, par), scores, &leaf, &combine);
    grad.copy_from_slice(&g);
    val
}

/// `out_j = Σ_i Σ_k |w_i ∂ℓ_i/∂u_ik| |φ_ikj|` (sum) at the scores `scores`: the magnitude of the
/// terms of each gradient coordinate (the scale of the solvers' relative KKT certificate). One
/// pass over the features, sequential per block, deterministic for any thread count.
pub(crate) fn abs_grad<L: GroupLoss>(v: &GroupView<'_>, loss: &L, scores: &[f64], out: &mut [f64], par: Par) {
    let (k, d) = (v.k(), v.d());
    assert_eq!(out.len(), d);
    assert_eq!(scores.len(), v.n() * k);
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let mut o = vec![0.0; d];
        let mut g = vec![0.0; k];
        let mut scratch = vec![0.0; loss.scratch_len(k)];
        for i in blocks.range(b) {
            loss.eval(
                &scores[i * k..(i + 1) * k],
                v.order_of(i),
                Some(&mut g),
                None,
                &mut scratch,
            );
            let w = v.weight(i);
            for (r, gr) in g.iter().enumerate() {
                let c = (w * gr).abs();
                for (oj, x) in o.iter_mut().zip(v.row(i, r)) {
                    *oj += c * x.abs();
                }
            }
        }
        o
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
        a
    };
    let r = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    out.copy_from_slice(&r);
}
