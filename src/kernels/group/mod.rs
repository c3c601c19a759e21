//! Passes over K-wise data ([`GroupView`]): sample `i` has `K` feature rows `φ_ik` and scores
//! `u_ik = φ_ikᵀθ`; a [`GroupLoss`](crate::loss::GroupLoss) maps the `K` scores to a value, a
//! score gradient and a `K × K` score Hessian block, which these passes lift to `θ`-space:
//!
//! * [`value_grad`]: `Σ_i w_i ℓ_i(u_i)` and `Σ_i w_i Φ_iᵀ ∂ℓ_i/∂u` with the scores, one read of
//!   the features (fused);
//! * [`hessian`]: `Σ_i w_i Φ_iᵀ H_i Φ_i`: each block `w_i H_i` is factored as `Σ_r s_r l_r l_rᵀ`
//!   (diagonal-pivoted Cholesky, `r ≤ K` terms; `K − 1` for the Plackett–Luce blocks, whose rows
//!   sum to zero), the rows `l_rᵀΦ_i` are stacked per block and multiplied by the Gram product of
//!   [`super::gram`];
//! * [`hess_vec`], [`matvec`], [`loss_sum`] (O(nK) line searches from cached scores),
//!   [`value_grad_compensated`] (doubled precision for Newton's refinement),
//!   `centered_second_moments` and `pair_covariance` (the `Σ_{D_K}` of the PL theory).
//!
//! Rows are read through [`GroupView::row`], so the dense `n × K × d` layout and the
//! item-indexed layout (item table + index) run the same code and nothing of size `n·K·d` is
//! built. Like the pairwise passes ([`super`]), every pass cuts the samples into fixed blocks
//! sized from `(K, d)` only and combines block results with the fixed-shape tree of
//! [`crate::par`]: bit-identical results for any number of threads.

mod compensated;
mod hessian;
mod line_search;
mod moments;
mod value_grad;

pub use compensated::value_grad_compensated;
pub use hessian::{hess_vec, hessian};
pub use line_search::{loss_sum, matvec};
pub(crate) use moments::{centered_second_moments, pair_covariance};
pub(crate) use value_grad::abs_grad;
pub use value_grad::value_grad;

use crate::data::GroupView;
use crate::par::{Blocks, Par, STREAM_BLOCK_BYTES};
use pulp::Simd;

fn stream_blocks(v: &GroupView<'_>) -> Blocks {
    Blocks::new(v.n(), v.k() * v.d(), STREAM_BLOCK_BYTES, 16)
}

fn par_for(v: &GroupView<'_>, par: Par) -> Par {
    par.for_bytes(v.n() * v.k() * v.d() * 8)
}

// ---------------------------------------------------------------------------------------------
// SIMD row helpers.

/// `xᵀv`: four FMA chains over the SIMD vectors (vector `j` to chain `j mod 4`, the tail to
/// chain 0), summed as `(c0 + c1) + (c2 + c3)`.
#[inline(always)]
fn dot<S: Simd>(simd: S, x: &[f64], v: &[f64]) -> f64 {
    let (xh, xt) = S::as_simd_f64s(x);
    let (vh, vt) = S::as_simd_f64s(v);
    let z = simd.splat_f64s(0.0);
    let (mut c0, mut c1, mut c2, mut c3) = (z, z, z, z);
    let mut j = 0;
    while j + 4 <= xh.len() {
        c0 = simd.mul_add_e_f64s(xh[j], vh[j], c0);
        c1 = simd.mul_add_e_f64s(xh[j + 1], vh[j + 1], c1);
        c2 = simd.mul_add_e_f64s(xh[j + 2], vh[j + 2], c2);
        c3 = simd.mul_add_e_f64s(xh[j + 3], vh[j + 3], c3);
        j += 4;
    }
    while j < xh.len() {
        c0 = simd.mul_add_e_f64s(xh[j], vh[j], c0);
        j += 1;
    }
    if !xt.is_empty() {
        c0 = simd.mul_add_e_f64s(simd.partial_load_f64s(xt), simd.partial_load_f64s(vt), c0);
    }
    simd.reduce_sum_f64s(simd.add_f64s(simd.add_f64s(c0, c1), simd.add_f64s(c2, c3)))
}

/// `acc += Σ_r coef[r]·rows[r]` over the `K` rows of one sample, four rows per sweep of `acc`.
#[inline(always)]
fn axpys<S: Simd>(simd: S, v: &GroupView<'_>, i: usize, coef: &[f64], acc: &mut [f64]) {
    let k = coef.len();
    let (ah, at) = S::as_mut_simd_f64s(acc);
    let mut r = 0;
    while r + 4 <= k {
        let (x0, t0) = S::as_simd_f64s(v.row(i, r));
        let (x1, t1) = S::as_simd_f64s(v.row(i, r + 1));
        let (x2, t2) = S::as_simd_f64s(v.row(i, r + 2));
        let (x3, t3) = S::as_simd_f64s(v.row(i, r + 3));
        let (c0, c1, c2, c3) = (
            simd.splat_f64s(coef[r]),
            simd.splat_f64s(coef[r + 1]),
            simd.splat_f64s(coef[r + 2]),
            simd.splat_f64s(coef[r + 3]),
        );
        for (j, a) in ah.iter_mut().enumerate() {
            let s01 = simd.mul_add_e_f64s(c1, x1[j], simd.mul_f64s(c0, x0[j]));
            let s23 = simd.mul_add_e_f64s(c3, x3[j], simd.mul_f64s(c2, x2[j]));
            *a = simd.add_f64s(*a, simd.add_f64s(s01, s23));
        }
        if !at.is_empty() {
            let mut a = simd.partial_load_f64s(at);
            for (c, t) in [(c0, t0), (c1, t1), (c2, t2), (c3, t3)] {
                a = simd.mul_add_e_f64s(c, simd.partial_load_f64s(t), a);
            }
            simd.partial_store_f64s(at, a);
        }
        r += 4;
    }
    while r < k {
        let (x, t) = S::as_simd_f64s(v.row(i, r));
        let c = simd.splat_f64s(coef[r]);
        for (a, &xv) in ah.iter_mut().zip(x) {
            *a = simd.mul_add_e_f64s(c, xv, *a);
        }
        if !at.is_empty() {
            let a = simd.mul_add_e_f64s(c, simd.partial_load_f64s(t), simd.partial_load_f64s(at));
            simd.partial_store_f64s(at, a);
        }
        r += 1;
    }
}
