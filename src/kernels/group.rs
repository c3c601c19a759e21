//! Passes over K-wise data ([`GroupView`]): sample `i` has `K` feature rows `φ_ik` and scores
//! `u_ik = φ_ikᵀθ`; a [`GroupLoss`] maps the `K` scores to a value, a score gradient and a `K × K`
//! score Hessian block, which these passes lift to `θ`-space:
//!
//! * [`value_grad`]: `Σ_i w_i ℓ_i(u_i)` and `Σ_i w_i Φ_iᵀ ∂ℓ_i/∂u` with the scores, one read of
//!   the features (fused);
//! * [`hessian`]: `Σ_i w_i Φ_iᵀ H_i Φ_i`: each block `w_i H_i` is factored as `Σ_r s_r l_r l_rᵀ`
//!   (diagonal-pivoted Cholesky, `r ≤ K` terms; `K − 1` for the Plackett–Luce blocks, whose rows
//!   sum to zero), the rows `l_rᵀΦ_i` are stacked per block and multiplied by the Gram product of
//!   [`super::gram`];
//! * [`hess_vec`], [`matvec`], [`loss_sum`] (O(nK) line searches from cached scores),
//!   [`value_grad_compensated`] (doubled precision for Newton's refinement),
//!   [`centered_second_moments`] and [`pair_covariance`] (the `Σ_{D_K}` of the PL theory).
//!
//! Rows are read through [`GroupView::row`], so the dense `n × K × d` layout and the
//! item-indexed layout (item table + index) run the same code and nothing of size `n·K·d` is
//! built. Like the pairwise passes ([`super`]), every pass cuts the samples into fixed blocks
//! sized from `(K, d)` only and combines block results with the fixed-shape tree of
//! [`crate::par`]: bit-identical results for any number of threads.

use super::gram;
// TwoSum and Dot2 of the pairwise compensated pass (the same arithmetic).
use super::compensated::{dot2, two_sum as two_sum_v, two_sum_s as two_sum};
use crate::data::GroupView;
use crate::loss::GroupLoss;
use crate::par::{tree_reduce, tree_reduce_rows, Blocks, Par};
use pulp::{Arch, Simd, WithSimd};

/// Target bytes of feature data per block of the streaming passes.
const STREAM_BLOCK_BYTES: usize = 1 << 20;
/// Target bytes of stacked factor rows per block of the Hessian pass.
const HESS_BLOCK_BYTES: usize = 1 << 21;

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

// ---------------------------------------------------------------------------------------------
// Fused value + gradient.

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

// ---------------------------------------------------------------------------------------------
// Scores of a direction.

struct MatVecBlock<'s, 'a> {
    v: &'s GroupView<'a>,
    s: &'s [f64],
    rows: std::ops::Range<usize>,
    out: &'s mut [f64],
}

impl WithSimd for MatVecBlock<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let k = self.v.k();
        for (b, i) in self.rows.clone().enumerate() {
            for r in 0..k {
                self.out[b * k + r] = dot(simd, self.v.row(i, r), self.s);
            }
        }
    }
}

/// `out[i·K + k] = φ_ikᵀ s` (the same dot products as the scores of [`value_grad`]).
pub fn matvec(v: &GroupView<'_>, s: &[f64], out: &mut [f64], par: Par) {
    let k = v.k();
    assert_eq!(s.len(), v.d());
    assert_eq!(out.len(), v.n() * k);
    let blocks = stream_blocks(v);
    let arch = Arch::new();
    let leaf = |b: usize, o: &mut [f64]| {
        arch.dispatch(MatVecBlock {
            v,
            s,
            rows: blocks.range(b),
            out: o,
        })
    };
    tree_reduce_rows(blocks, k, par_for(v, par), out, &leaf, &|(), ()| ());
}

// ---------------------------------------------------------------------------------------------
// O(nK) loss sums for line searches.

/// `Σ_i w_i ℓ_i(c·(t_i + α s_i))` (`s = None`: `Σ w_i ℓ_i(c·t_i)`) from cached scores `t` and a
/// direction's scores `s` (each `n·K`), no access to the features.
///
/// The sum uses the blocks, the per-sample accumulation and the tree of [`value_grad`], so at
/// `α = 0, c = 1` it returns the fused pass's value bit for bit, and along a line the rounding of
/// the long sum is the same at every trial point: a line search compares values whose
/// difference is the objective's change, not a difference of summation orders (which, for `n`
/// in the thousands, can exceed the change near the minimiser).
#[allow(clippy::too_many_arguments)]
pub fn loss_sum<L: GroupLoss>(
    v: &GroupView<'_>,
    loss: &L,
    t: &[f64],
    s: Option<&[f64]>,
    alpha: f64,
    scale: f64,
    par: Par,
) -> f64 {
    let (n, k) = (v.n(), v.k());
    assert_eq!(t.len(), n * k);
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let mut u = vec![0.0; k];
        let mut scratch = vec![0.0; loss.scratch_len(k)];
        let mut acc = 0.0;
        for i in blocks.range(b) {
            let ti = &t[i * k..(i + 1) * k];
            match s {
                Some(s) => {
                    let si = &s[i * k..(i + 1) * k];
                    for r in 0..k {
                        u[r] = alpha.mul_add(si[r], ti[r]);
                    }
                }
                None => u.copy_from_slice(ti),
            }
            if scale != 1.0 {
                u.iter_mut().for_each(|x| *x *= scale);
            }
            let li = loss.eval(&u, v.order_of(i), None, None, &mut scratch);
            if v.weights().is_some() {
                acc += v.weight(i) * li;
            } else {
                acc += li;
            }
        }
        acc
    };
    tree_reduce(blocks.count(), par_for(v, par), &leaf, &|a, b| a + b)
}

// ---------------------------------------------------------------------------------------------
// Hessian.

/// Factors the symmetric `k × k` block `a` (row-major, overwritten) as `Σ_r s_r l_r l_rᵀ`
/// (`s_r = ±1`) by diagonal pivoting: the largest remaining `|a_pp|` gives
/// `l = a[:,p]/√|a_pp|`. Remainders below `tol` (relative to the largest initial
/// entry) are dropped; a remainder with negligible diagonal but a non-negligible off-diagonal
/// entry `a_ij` (indefinite blocks only) is split as
/// `(|a_ij|/2)[(e_i ± e_j)(e_i ± e_j)ᵀ − (e_i ∓ e_j)(e_i ∓ e_j)ᵀ]`. Calls `emit(sign, l)`;
/// returns the number of negative terms. `l` is a `k`-long scratch vector (the caller's, so
/// that nothing is allocated per sample). Inlined into the SIMD context of its caller (so `emit`
/// can use the caller's SIMD operations without a call per intrinsic).
#[inline(always)]
fn factor_block(a: &mut [f64], k: usize, l: &mut [f64], mut emit: impl FnMut(f64, &[f64])) -> usize {
    let scale = a[..k * k].iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if !(scale > 0.0) {
        return 0;
    }
    let tol = 32.0 * f64::EPSILON * scale;
    let l = &mut l[..k];
    let mut nneg = 0;
    for _ in 0..2 * k {
        let (mut p, mut best) = (0, 0.0);
        for i in 0..k {
            let v = a[i * k + i].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        if best > tol {
            let app = a[p * k + p];
            let sign = app.signum();
            let inv = 1.0 / best.sqrt();
            for i in 0..k {
                l[i] = a[i * k + p] * inv;
            }
            for i in 0..k {
                for j in 0..k {
                    a[i * k + j] -= sign * l[i] * l[j];
                }
            }
            a[p * k + p] = 0.0;
            if sign < 0.0 {
                nneg += 1;
            }
            emit(sign, l);
            continue;
        }
        // Negligible diagonal: look for an off-diagonal remainder (indefinite blocks).
        let (mut bi, mut bj, mut off) = (0, 0, 0.0);
        for i in 0..k {
            for j in i + 1..k {
                if a[i * k + j].abs() > off {
                    off = a[i * k + j].abs();
                    bi = i;
                    bj = j;
                }
            }
        }
        if off <= tol {
            break;
        }
        let aij = a[bi * k + bj];
        let c = (0.5 * aij.abs()).sqrt();
        let sg = aij.signum();
        l.fill(0.0);
        l[bi] = c;
        l[bj] = sg * c;
        emit(1.0, l);
        l[bj] = -sg * c;
        emit(-1.0, l);
        nneg += 1;
        a[bi * k + bj] = 0.0;
        a[bj * k + bi] = 0.0;
    }
    nneg
}

struct HessRows<'s, 'a, L> {
    v: &'s GroupView<'a>,
    loss: &'s L,
    scores: &'s [f64],
    rows: std::ops::Range<usize>,
    pos: &'s mut Vec<f64>,
    neg: &'s mut Vec<f64>,
}

impl<L: GroupLoss> WithSimd for HessRows<'_, '_, L> {
    type Output = usize;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> usize {
        let v = self.v;
        let (k, d) = (v.k(), v.d());
        let mut h = vec![0.0; k * k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        let mut lvec = vec![0.0; k];
        let mut nneg_samples = 0;
        for i in self.rows.clone() {
            let w = v.weight(i);
            if w == 0.0 {
                continue;
            }
            let u = &self.scores[i * k..(i + 1) * k];
            self.loss.eval(u, v.order_of(i), None, Some(&mut h), &mut scratch);
            if w != 1.0 {
                h.iter_mut().for_each(|x| *x *= w);
            }
            let (pos, neg) = (&mut *self.pos, &mut *self.neg);
            let nneg = factor_block(
                &mut h,
                k,
                &mut lvec,
                #[inline(always)]
                |sign, l| {
                    let out = if sign > 0.0 { &mut *pos } else { &mut *neg };
                    let at = out.len();
                    out.resize(at + d, 0.0);
                    axpys(simd, v, i, l, &mut out[at..]);
                },
            );
            if nneg > 0 {
                nneg_samples += 1;
            }
        }
        nneg_samples
    }
}

/// `H = Σ_i w_i Φ_iᵀ (∂²ℓ_i/∂u²) Φ_i` (sum, not mean) at the scores `scores`, written in full
/// into the column-major `d × d` buffer `h`. Returns the number of samples whose block has
/// negative curvature (none for the convex group losses).
pub fn hessian<L: GroupLoss>(v: &GroupView<'_>, loss: &L, scores: &[f64], h: &mut [f64], par: Par) -> usize {
    let (n, k, d) = (v.n(), v.k(), v.d());
    assert_eq!(h.len(), d * d);
    assert_eq!(scores.len(), n * k);
    // About K factor rows of d values per sample.
    let blocks = Blocks::new(n, k * d, HESS_BLOCK_BYTES, 8);
    let arch = Arch::new();
    let leaf = |b: usize| -> (Vec<f64>, usize) {
        let r = blocks.range(b);
        let mut pos = Vec::with_capacity(r.len() * k * d);
        let mut neg = Vec::new();
        let nneg = arch.dispatch(HessRows {
            v,
            loss,
            scores,
            rows: r,
            pos: &mut pos,
            neg: &mut neg,
        });
        let mut hb = vec![0.0; d * d];
        gram::syrk_lower(&mut hb, &pos, pos.len() / d, d, 1.0, false);
        if !neg.is_empty() {
            gram::syrk_lower(&mut hb, &neg, neg.len() / d, d, -1.0, true);
        }
        (hb, nneg)
    };
    let combine = |(mut a, na): (Vec<f64>, usize), (b, nb): (Vec<f64>, usize)| {
        for j in 0..d {
            for i in j..d {
                a[j * d + i] += b[j * d + i];
            }
        }
        (a, na + nb)
    };
    let (hl, nneg) = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    for j in 0..d {
        for i in j..d {
            let x = hl[j * d + i];
            h[j * d + i] = x;
            h[i * d + j] = x;
        }
    }
    nneg
}

struct HessVecBlock<'s, 'a, L> {
    v: &'s GroupView<'a>,
    loss: &'s L,
    scores: &'s [f64],
    x: &'s [f64],
    rows: std::ops::Range<usize>,
    out: &'s mut [f64],
}

impl<L: GroupLoss> WithSimd for HessVecBlock<'_, '_, L> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let v = self.v;
        let k = v.k();
        let mut h = vec![0.0; k * k];
        let mut z = vec![0.0; k];
        let mut y = vec![0.0; k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        for i in self.rows.clone() {
            for (r, zr) in z.iter_mut().enumerate() {
                *zr = dot(simd, v.row(i, r), self.x);
            }
            self.loss.eval(
                &self.scores[i * k..(i + 1) * k],
                v.order_of(i),
                None,
                Some(&mut h),
                &mut scratch,
            );
            let w = v.weight(i);
            for (a, ya) in y.iter_mut().enumerate() {
                let row = &h[a * k..(a + 1) * k];
                *ya = w * row.iter().zip(&z).map(|(p, q)| p * q).sum::<f64>();
            }
            axpys(simd, v, i, &y, self.out);
        }
    }
}

/// `out = Σ_i w_i Φ_iᵀ H_i (Φ_i x)` (sum) at the scores `scores`, one pass over the features.
pub fn hess_vec<L: GroupLoss>(v: &GroupView<'_>, loss: &L, scores: &[f64], x: &[f64], out: &mut [f64], par: Par) {
    let d = v.d();
    assert_eq!(x.len(), d);
    assert_eq!(out.len(), d);
    let blocks = stream_blocks(v);
    let arch = Arch::new();
    let leaf = |b: usize| {
        let mut o = vec![0.0; d];
        arch.dispatch(HessVecBlock {
            v,
            loss,
            scores,
            x,
            rows: blocks.range(b),
            out: &mut o,
        });
        o
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
        a
    };
    let r = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    out.copy_from_slice(&r);
}

/// `out_j = Σ_i Σ_k |w_i ∂ℓ_i/∂u_ik| |φ_ikj|` (sum) at the scores `scores`: the magnitude of the
/// terms of each gradient coordinate (the scale of the solvers' relative KKT certificate). One
/// pass over the features, sequential per block, deterministic for any thread count.
pub fn abs_grad<L: GroupLoss>(v: &GroupView<'_>, loss: &L, scores: &[f64], out: &mut [f64], par: Par) {
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

// ---------------------------------------------------------------------------------------------
// Compensated value and gradient.

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

/// Value and gradient sums like [`value_grad`], as if in twice the working precision: scores by
/// Dot2 with a first-order correction of `ℓ` and `∂ℓ/∂u` (`ℓ(u + δ) ≈ ℓ(u) + gᵀδ`,
/// `g(u + δ) ≈ g(u) + Hδ`), double-double accumulation of the sums (SIMD over the columns).
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

// ---------------------------------------------------------------------------------------------
// Data moments.

/// `m_j = Σ_i w_i (1/K) Σ_k (φ_ikj − φ̄_ij)²` (sum over samples; `φ̄_i` the sample's mean row):
/// the scale of the `j`-th diagonal entry of a Plackett–Luce Hessian (features enter only
/// through differences within a sample, so the within-sample spread is what matters).
pub fn centered_second_moments(v: &GroupView<'_>, par: Par) -> Vec<f64> {
    let (k, d) = (v.k(), v.d());
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let mut m = vec![0.0; d];
        let mut mean = vec![0.0; d];
        for i in blocks.range(b) {
            mean.fill(0.0);
            for r in 0..k {
                mean.iter_mut().zip(v.row(i, r)).for_each(|(a, x)| *a += x);
            }
            mean.iter_mut().for_each(|a| *a /= k as f64);
            let w = v.weight(i) / k as f64;
            for r in 0..k {
                for ((mj, x), mu) in m.iter_mut().zip(v.row(i, r)).zip(&mean) {
                    let c = x - mu;
                    *mj += w * c * c;
                }
            }
        }
        m
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
        a
    };
    tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine)
}

/// `Σ_{D_K}` of the Plackett–Luce theory ("Provable protection of human judgements" (anon., 2024),
/// Sec. 4.2): `(1/W) Σ_i w_i (2/(K(K−1))) Σ_{k<l} (φ_ik − φ_il)(φ_ik − φ_il)ᵀ`, computed as `(1/W)
/// Σ_i w_i (2/(K−1)) Σ_k (φ_ik − φ̄_i)(φ_ik − φ̄_i)ᵀ` (the identity `Σ_{k<l} x_kl x_klᵀ = K Σ_k
/// (φ_k − φ̄)(φ_k − φ̄)ᵀ`). Column-major `d × d`, both triangles.
pub fn pair_covariance(v: &GroupView<'_>, par: Par) -> Vec<f64> {
    let (k, d) = (v.k(), v.d());
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let r = blocks.range(b);
        let mut rows = Vec::with_capacity(r.len() * k * d);
        let mut mean = vec![0.0; d];
        for i in r {
            mean.fill(0.0);
            for q in 0..k {
                mean.iter_mut().zip(v.row(i, q)).for_each(|(a, x)| *a += x);
            }
            mean.iter_mut().for_each(|a| *a /= k as f64);
            let s = (2.0 * v.weight(i) / (k as f64 - 1.0)).sqrt();
            for q in 0..k {
                rows.extend(v.row(i, q).iter().zip(&mean).map(|(x, mu)| s * (x - mu)));
            }
        }
        let mut g = vec![0.0; d * d];
        gram::syrk_lower(&mut g, &rows, rows.len() / d, d, 1.0, false);
        g
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        for j in 0..d {
            for i in j..d {
                a[j * d + i] += b[j * d + i];
            }
        }
        a
    };
    let gl = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    let w = v.total_weight();
    let mut g = vec![0.0; d * d];
    for j in 0..d {
        for i in j..d {
            let x = gl[j * d + i] / w;
            g[j * d + i] = x;
            g[i * d + j] = x;
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_reconstructs_psd_and_indefinite_blocks() {
        // diag(p) − ppᵀ (rank K − 1) and an indefinite block with a zero diagonal.
        let p = [0.5, 0.3, 0.15, 0.05];
        let k = 4;
        let mut a: Vec<f64> = (0..16)
            .map(|t| {
                let (i, j) = (t / k, t % k);
                (if i == j { p[i] } else { 0.0 }) - p[i] * p[j]
            })
            .collect();
        let orig = a.clone();
        let mut rec = [0.0; 16];
        let mut terms = 0;
        let nneg = factor_block(&mut a, k, &mut [0.0; 4], |s, l| {
            terms += 1;
            for i in 0..k {
                for j in 0..k {
                    rec[i * k + j] += s * l[i] * l[j];
                }
            }
        });
        assert_eq!(nneg, 0);
        assert_eq!(terms, 3);
        for (x, y) in rec.iter().zip(&orig) {
            assert!((x - y).abs() < 1e-15, "{x} {y}");
        }
        let mut b = vec![0.0, 2.0, 2.0, 0.0];
        let orig = b.clone();
        let mut rec = [0.0; 4];
        let nneg = factor_block(&mut b, 2, &mut [0.0; 2], |s, l| {
            for i in 0..2 {
                for j in 0..2 {
                    rec[i * 2 + j] += s * l[i] * l[j];
                }
            }
        });
        assert_eq!(nneg, 1);
        for (x, y) in rec.iter().zip(&orig) {
            assert!((x - y).abs() < 1e-15);
        }
    }
}
