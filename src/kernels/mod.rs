//! Passes over the row-major feature matrix `X` (`n × d`).
//!
//! Every pass cuts the rows into fixed blocks ([`Blocks`], sized from `d` only), runs one
//! `pulp` dispatch per block (AVX-512 / AVX2 / scalar chosen at run time), and combines block
//! results with the fixed-shape tree of [`crate::par`]: results are bit-identical for any
//! number of threads on a given machine.
//!
//! * [`value_grad`]: the fused pass. For each mini-batch of rows (kept in L1), scores
//!   `t_i = x_iᵀθ` (4 rows at a time), then the loss on the batch with SIMD, then
//!   `g += Σ w_i ℓ'(t_i) x_i` (4 rows per update of `g`). One read of `X`.
//! * [`value_grad_hessian`] ([`fused`]): value, gradient and `Xᵀ diag(w ℓ''(t)) X` in one read
//!   of `X` — the mini-batches of [`value_grad`], whose rows are also scaled by `√|w ℓ''|` into
//!   panels, each a Gram product ([`gram`]: faer, or OpenBLAS `dsyrk` with the `openblas`
//!   feature; rows with `ℓ'' < 0`, possible for `mle-rr`, are subtracted).
//! * [`hessian`]: the Hessian half of that pass at given scores (the same bits).
//! * [`hess_vec`]: `Xᵀ (w ℓ''(t) ⊙ X v)` in one pass.
//! * [`abs_grad`]: `Σ_i |w_i ℓ'(t_i)| |x_i|` in one pass (the scale of the KKT certificate).
//! * [`matvec`]: `X v`.
//! * [`loss_sum`]: `Σ w_i ℓ(t_i + α s_i)`, O(n) with no access to `X` (line searches).
//! * [`stream_sum`]: a plain read of `X` — the memory-bandwidth baseline of the benchmarks.

pub mod fused;
pub mod gram;
pub mod group;
/// The SIMD and scalar math of the kernels, now [`crate::math::simd`] (kept under this name).
pub use crate::math::simd as simd_math;

pub use fused::value_grad_hessian;

use crate::data::Features;
use crate::loss::{Loss, LossOut};
use crate::par::{tree_reduce, tree_reduce_rows, Blocks, Par};
use pulp::{Arch, Simd, WithSimd};

/// Target bytes of row data per block of the streaming passes.
const STREAM_BLOCK_BYTES: usize = 1 << 20;
/// SIMD vectors of the gradient held in registers by the batched update.
const AXPY_TILE: usize = 8;
/// Maximum rows per mini-batch inside a block (loss evaluated on this many scores at once).
pub const MAX_BATCH: usize = 64;
/// Target bytes of row data per mini-batch (fits L1 so the second touch of the rows is cheap).
const BATCH_BYTES: usize = 12 * 1024;

/// Borrowed inputs of a pass: features, labels, optional weights.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    /// Row-major `n × d` features (`f64`, or `f32` widened to `f64` a mini-batch at a time).
    pub x: Features<'a>,
    /// Columns.
    pub d: usize,
    /// Labels (length `n`).
    pub y: &'a [u8],
    /// Optional weights (length `n`).
    pub w: Option<&'a [f64]>,
}

impl Rows<'_> {
    /// Rows.
    #[inline]
    pub fn n(&self) -> usize {
        self.y.len()
    }
    fn stream_blocks(&self) -> Blocks {
        Blocks::new(self.n(), self.d, STREAM_BLOCK_BYTES, 64)
    }
    fn par(&self, par: Par) -> Par {
        par.for_bytes(self.x.len() * self.x.value_bytes())
    }
}

/// Calls `f(x, lo, hi)` on rows `rows` of `x` as `f64`: `x` holds rows `rows.start + lo ..
/// rows.start + hi`. `f64` storage: one call with the whole range, no copy. `f32` storage:
/// chunks of `chunk` rows widened into a scratch buffer (L1/L2-resident), in order — with
/// `chunk` equal to the kernel's mini-batch, the arithmetic is the same as one call on the
/// widened rows, so the results are the same bits.
#[inline]
fn with_f64_rows(
    x: Features<'_>,
    rows: std::ops::Range<usize>,
    d: usize,
    chunk: usize,
    mut f: impl FnMut(&[f64], usize, usize),
) {
    match x {
        Features::F64(x) => f(&x[rows.start * d..rows.end * d], 0, rows.len()),
        Features::F32(x) => {
            let chunk = chunk.max(1);
            let mut buf = vec![0.0; chunk.min(rows.len()) * d];
            let mut lo = 0;
            while lo < rows.len() {
                let hi = (lo + chunk).min(rows.len());
                let b = &mut buf[..(hi - lo) * d];
                for (o, &v) in b.iter_mut().zip(&x[(rows.start + lo) * d..(rows.start + hi) * d]) {
                    *o = f64::from(v);
                }
                f(b, lo, hi);
                lo = hi;
            }
        }
    }
}

/// Rows per mini-batch for rows of `d` values: a multiple of 4 in `[4, MAX_BATCH]`.
#[inline]
pub fn batch_rows(d: usize) -> usize {
    ((BATCH_BYTES / (8 * d.max(1))) / 4 * 4).clamp(4, MAX_BATCH)
}

// ---------------------------------------------------------------------------------------------
// SIMD building blocks (inlined into each pass's dispatch).

/// Below this many columns the row kernels use plain scalar loops: a row is shorter than one or
/// two SIMD registers, so masked loads and horizontal sums would cost more than they save.
pub const SMALL_D: usize = 12;

/// Scalar `out[r] = rows[r]ᵀ v` for small `d`, four rows at a time for instruction-level
/// parallelism. Each row is one sequential sum over `j`, whatever its position.
#[inline(always)]
fn dots_small(rows: &[f64], v: &[f64], out: &mut [f64]) {
    let d = v.len();
    for (o, r) in out.iter_mut().zip(rows.chunks_exact(d)) {
        let mut a = 0.0;
        for j in 0..d {
            a += r[j] * v[j];
        }
        *o = a;
    }
}

/// Scalar `acc += Σ_r coef[r]·rows[r]` for small `d`: four rows per update of a local
/// accumulator (one dependency chain per four rows instead of one per row).
#[inline(always)]
fn axpys_small<const ABS: bool>(rows: &[f64], coef: &[f64], acc: &mut [f64]) {
    let v = |x: f64| if ABS { x.abs() } else { x };
    let d = acc.len();
    let mut loc = [0.0f64; SMALL_D];
    let loc = &mut loc[..d];
    let m = coef.len();
    let mut r = 0;
    while r + 4 <= m {
        let x = &rows[r * d..(r + 4) * d];
        let (c0, c1, c2, c3) = (coef[r], coef[r + 1], coef[r + 2], coef[r + 3]);
        for j in 0..d {
            loc[j] += (c0 * v(x[j]) + c1 * v(x[d + j])) + (c2 * v(x[2 * d + j]) + c3 * v(x[3 * d + j]));
        }
        r += 4;
    }
    while r < m {
        let x = &rows[r * d..(r + 1) * d];
        for j in 0..d {
            loc[j] += coef[r] * v(x[j]);
        }
        r += 1;
    }
    for (a, l) in acc.iter_mut().zip(loc.iter()) {
        *a += l;
    }
}

/// One row's dot product: SIMD vector `j` of the row goes to chain `j mod 4`, the tail to
/// chain 0, and the chains are summed as `(c0 + c1) + (c2 + c3)`.
#[inline(always)]
fn dot1<S: Simd>(simd: S, x: &[f64], vh: &[S::f64s], vt: Option<S::f64s>, full: usize) -> f64 {
    let (h0, _) = S::as_simd_f64s(&x[..full]);
    let z = simd.splat_f64s(0.0);
    let (mut c0, mut c1, mut c2, mut c3) = (z, z, z, z);
    let quads = vh.len() / 4;
    for p in 0..quads {
        let j = 4 * p;
        c0 = simd.mul_add_e_f64s(h0[j], vh[j], c0);
        c1 = simd.mul_add_e_f64s(h0[j + 1], vh[j + 1], c1);
        c2 = simd.mul_add_e_f64s(h0[j + 2], vh[j + 2], c2);
        c3 = simd.mul_add_e_f64s(h0[j + 3], vh[j + 3], c3);
    }
    let j = 4 * quads;
    match vh.len() - j {
        0 => {}
        1 => c0 = simd.mul_add_e_f64s(h0[j], vh[j], c0),
        2 => {
            c0 = simd.mul_add_e_f64s(h0[j], vh[j], c0);
            c1 = simd.mul_add_e_f64s(h0[j + 1], vh[j + 1], c1);
        }
        _ => {
            c0 = simd.mul_add_e_f64s(h0[j], vh[j], c0);
            c1 = simd.mul_add_e_f64s(h0[j + 1], vh[j + 1], c1);
            c2 = simd.mul_add_e_f64s(h0[j + 2], vh[j + 2], c2);
        }
    }
    if let Some(vt) = vt {
        c0 = simd.mul_add_e_f64s(simd.partial_load_f64s(&x[full..]), vt, c0);
    }
    simd.reduce_sum_f64s(simd.add_f64s(simd.add_f64s(c0, c1), simd.add_f64s(c2, c3)))
}

/// The row kernels of one pass, with `v` split once into its SIMD head and tail.
struct RowOps<'v, S: Simd> {
    simd: S,
    v: &'v [f64],
    vh: &'v [S::f64s],
    vt: Option<S::f64s>,
    full: usize,
    d: usize,
}

impl<'v, S: Simd> RowOps<'v, S> {
    #[inline(always)]
    fn new(simd: S, v: &'v [f64]) -> Self {
        let d = v.len();
        let full = d / S::F64_LANES * S::F64_LANES;
        let vt = if full < d {
            Some(simd.partial_load_f64s(&v[full..]))
        } else {
            None
        };
        RowOps {
            simd,
            v,
            vh: S::as_simd_f64s(&v[..full]).0,
            vt,
            full,
            d,
        }
    }

    /// `out[r] = rows[r]ᵀ v`, one row after the other (rows stream in address order: reading
    /// four rows in an interleaved order measured 62 ns/row from DRAM against 45 for this, at
    /// d = 100 on a Zen 3; the four FMA chains of [`dot1`] cover the FMA latency instead).
    #[inline(always)]
    fn dots(&self, rows: &[f64], out: &mut [f64]) {
        if self.d < SMALL_D {
            return dots_small(rows, self.v, out);
        }
        for (o, row) in out.iter_mut().zip(rows.chunks_exact(self.d)) {
            *o = dot1(self.simd, row, self.vh, self.vt, self.full);
        }
    }

    /// `acc += Σ_r coef[r]·rows[r]`. The columns are taken in tiles of [`AXPY_TILE`] SIMD
    /// vectors held in registers across the whole batch, so `acc` is read and written once per
    /// tile and batch (no store-to-load chain through memory, no 4K aliasing with the rows).
    /// Tile widths are compile-time constants ([`axpy_tile`]), so the accumulators stay in
    /// registers (a runtime-length copy into the tile would force it onto the stack).
    #[inline(always)]
    fn axpys(&self, rows: &[f64], coef: &[f64], acc: &mut [f64]) {
        self.axpys_abs::<false>(rows, coef, acc)
    }

    /// [`RowOps::axpys`] on the rows as given (`ABS = false`) or on their absolute values.
    #[inline(always)]
    fn axpys_abs<const ABS: bool>(&self, rows: &[f64], coef: &[f64], acc: &mut [f64]) {
        if self.d < SMALL_D {
            return axpys_small::<ABS>(rows, coef, acc);
        }
        let simd = self.simd;
        let d = self.d;
        let full = self.full;
        let (acc_h, acc_t) = S::as_mut_simd_f64s(acc);
        let nvec = acc_h.len();
        let mut t0 = 0;
        while t0 + AXPY_TILE <= nvec {
            axpy_tile::<S, AXPY_TILE, ABS>(simd, rows, coef, d, full, t0, acc_h);
            t0 += AXPY_TILE;
        }
        match nvec - t0 {
            0 => {}
            1 => axpy_tile::<S, 1, ABS>(simd, rows, coef, d, full, t0, acc_h),
            2 => axpy_tile::<S, 2, ABS>(simd, rows, coef, d, full, t0, acc_h),
            3 => axpy_tile::<S, 3, ABS>(simd, rows, coef, d, full, t0, acc_h),
            4 => axpy_tile::<S, 4, ABS>(simd, rows, coef, d, full, t0, acc_h),
            5 => axpy_tile::<S, 5, ABS>(simd, rows, coef, d, full, t0, acc_h),
            6 => axpy_tile::<S, 6, ABS>(simd, rows, coef, d, full, t0, acc_h),
            _ => axpy_tile::<S, 7, ABS>(simd, rows, coef, d, full, t0, acc_h),
        }
        if !acc_t.is_empty() {
            let mut a = simd.partial_load_f64s(acc_t);
            for (r, &c) in coef.iter().enumerate() {
                let x = simd.partial_load_f64s(&rows[r * d + full..(r + 1) * d]);
                let x = if ABS { simd.abs_f64s(x) } else { x };
                a = simd.mul_add_e_f64s(simd.splat_f64s(c), x, a);
            }
            simd.partial_store_f64s(acc_t, a);
        }
    }
}

/// One register tile of [`RowOps::axpys`]: SIMD vectors `t0 .. t0 + N` of `acc` updated by
/// every row of the batch, in row order (so the bits do not depend on the tiling).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn axpy_tile<S: Simd, const N: usize, const ABS: bool>(
    simd: S,
    rows: &[f64],
    coef: &[f64],
    d: usize,
    full: usize,
    t0: usize,
    acc_h: &mut [S::f64s],
) {
    let mut a = [simd.splat_f64s(0.0); N];
    a.copy_from_slice(&acc_h[t0..t0 + N]);
    for (r, &c) in coef.iter().enumerate() {
        let (xh, _) = S::as_simd_f64s(&rows[r * d..r * d + full]);
        let xt = &xh[t0..t0 + N];
        let c = simd.splat_f64s(c);
        for k in 0..N {
            let x = if ABS { simd.abs_f64s(xt[k]) } else { xt[k] };
            a[k] = simd.mul_add_e_f64s(c, x, a[k]);
        }
    }
    acc_h[t0..t0 + N].copy_from_slice(&a);
}

/// Labels of a batch as `0.0`/`1.0`.
#[inline(always)]
fn labels_f64(y: &[u8], out: &mut [f64]) {
    for (o, &l) in out.iter_mut().zip(y) {
        *o = l as f64;
    }
}

/// Sum of a batch, optionally weighted, in a fixed sequential order.
#[inline(always)]
fn batch_sum(v: &[f64], w: Option<&[f64]>) -> f64 {
    match w {
        None => v.iter().sum(),
        Some(w) => v.iter().zip(w).map(|(a, b)| a * b).sum(),
    }
}

// ---------------------------------------------------------------------------------------------
// Fused value + gradient.

/// The fused pass; with `SCALE`, also `scale += Σ |w_i ℓ'_i| |x_i|` (the term magnitudes of the
/// certificate) from the same rows, which are then in L1. Without `SCALE` the extra code is
/// compiled out.
struct FusedValueGrad<'a, L, const SCALE: bool> {
    x: &'a [f64],
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
        let d = self.theta.len();
        let rows = self.y.len();
        let ops = RowOps::new(simd, self.theta);
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut vb = [0.0; MAX_BATCH];
        let mut gb = [0.0; MAX_BATCH];
        let mut value = 0.0;
        let mut r0 = 0;
        while r0 < rows {
            let m = bsz.min(rows - r0);
            let xb = &self.x[r0 * d..(r0 + m) * d];
            let tb = &mut self.scores[r0..r0 + m];
            ops.dots(xb, tb);
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
                ops.axpys_abs::<true>(xb, &cb[..m], self.scale);
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
pub fn value_grad_scale<L: Loss>(
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
    assert_eq!(scores.len(), rows.n());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize, sc: &mut [f64]| {
        let r = blocks.range(b);
        let mut g = vec![0.0; d];
        let mut a = vec![0.0; if SCALE { d } else { 0 }];
        let mut v = 0.0;
        with_f64_rows(rows.x, r.clone(), d, batch_rows(d), |x, lo, hi| {
            let (s, z) = (r.start + lo, r.start + hi);
            v += arch.dispatch(FusedValueGrad::<L, SCALE> {
                x,
                y: &rows.y[s..z],
                w: rows.w.map(|w| &w[s..z]),
                theta,
                loss,
                scores: &mut sc[lo..hi],
                grad: &mut g,
                scale: &mut a,
            });
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
    let (v, g, a) = tree_reduce_rows(blocks, 1, rows.par(par), scores, &leaf, &combine);
    grad.copy_from_slice(&g);
    if SCALE {
        scale.copy_from_slice(&a);
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Matrix-vector product and Hessian-vector product.

struct MatVec<'a> {
    x: &'a [f64],
    v: &'a [f64],
    out: &'a mut [f64],
}

impl WithSimd for MatVec<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        RowOps::new(simd, self.v).dots(self.x, self.out)
    }
}

/// `out = X v`.
pub fn matvec(rows: Rows<'_>, v: &[f64], out: &mut [f64], par: Par) {
    let d = rows.d;
    assert_eq!(v.len(), d);
    assert_eq!(out.len(), rows.n());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize, o: &mut [f64]| {
        let r = blocks.range(b);
        with_f64_rows(rows.x, r, d, batch_rows(d), |x, lo, hi| {
            arch.dispatch(MatVec {
                x,
                v,
                out: &mut o[lo..hi],
            })
        });
    };
    tree_reduce_rows(blocks, 1, rows.par(par), out, &leaf, &|_, _| ());
}

struct HessVec<'a, L> {
    x: &'a [f64],
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
        let d = self.v.len();
        let rows = self.y.len();
        let ops = RowOps::new(simd, self.v);
        let bsz = batch_rows(d);
        let mut yb = [0.0; MAX_BATCH];
        let mut hb = [0.0; MAX_BATCH];
        let mut xv = [0.0; MAX_BATCH];
        let mut r0 = 0;
        while r0 < rows {
            let m = bsz.min(rows - r0);
            let xb = &self.x[r0 * d..(r0 + m) * d];
            ops.dots(xb, &mut xv[..m]);
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
    assert_eq!(scores.len(), rows.n());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        let mut o = vec![0.0; d];
        with_f64_rows(rows.x, r.clone(), d, batch_rows(d), |x, lo, hi| {
            let (a, z) = (r.start + lo, r.start + hi);
            arch.dispatch(HessVec {
                x,
                y: &rows.y[a..z],
                w: rows.w.map(|w| &w[a..z]),
                scores: &scores[a..z],
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
    let o = tree_reduce(blocks.count(), rows.par(par), &leaf, &combine);
    out.copy_from_slice(&o);
}

struct AbsGrad<'a, L> {
    x: &'a [f64],
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
            ops.axpys_abs::<true>(&self.x[r0 * d..(r0 + m) * d], &gb[..m], self.out);
            r0 += m;
        }
    }
}

/// `out_j = Σ_i |w_i ℓ'(t_i; y_i)| |x_ij|` at the scores `t` (sums, not means), in one pass: the
/// magnitude of the terms of each gradient coordinate, the scale of the solvers' relative KKT
/// certificate ([`crate::solver::certificate`]). Deterministic for any thread count.
pub fn abs_grad<L: Loss>(rows: Rows<'_>, loss: &L, scores: &[f64], out: &mut [f64], par: Par) {
    let d = rows.d;
    assert_eq!(out.len(), d);
    assert_eq!(scores.len(), rows.n());
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let zeros = vec![0.0; d];
    let leaf = |b: usize| {
        let r = blocks.range(b);
        let mut o = vec![0.0; d];
        with_f64_rows(rows.x, r.clone(), d, batch_rows(d), |x, lo, hi| {
            let (a, z) = (r.start + lo, r.start + hi);
            arch.dispatch(AbsGrad {
                x,
                y: &rows.y[a..z],
                w: rows.w.map(|w| &w[a..z]),
                scores: &scores[a..z],
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
    let o = tree_reduce(blocks.count(), rows.par(par), &leaf, &combine);
    out.copy_from_slice(&o);
}

// ---------------------------------------------------------------------------------------------
// Dense Hessian.

/// `H = Xᵀ diag(w ℓ''(t)) X` (sum, not mean) at the scores `t`, written in full (both
/// triangles) into the column-major `d × d` buffer `h`. Returns the number of rows with
/// negative curvature (`ℓ'' < 0`, only for non-convex losses).
///
/// The rows are scaled by `√|w ℓ''|` a mini-batch at a time into panels of about 2 MiB, each a
/// Gram product ([`gram`]); the accumulation is chunked as in [`fused`], whose
/// [`value_grad_hessian`] computes the same bits together with the value and gradient.
pub fn hessian<L: Loss>(rows: Rows<'_>, loss: &L, scores: &[f64], h: &mut [f64], par: Par) -> usize {
    fused::hessian_from_scores(rows, loss, scores, h, par)
}

// ---------------------------------------------------------------------------------------------
// O(n) loss sums for line searches.

struct LossSum<'a, L> {
    y: &'a [u8],
    w: Option<&'a [f64]>,
    t: &'a [f64],
    s: Option<&'a [f64]>,
    alpha: f64,
    scale: f64,
    loss: &'a L,
}

impl<L: Loss> WithSimd for LossSum<'_, L> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        let mut yb = [0.0; MAX_BATCH];
        let mut tb = [0.0; MAX_BATCH];
        let mut vb = [0.0; MAX_BATCH];
        let n = self.y.len();
        let mut acc = 0.0;
        let mut r0 = 0;
        while r0 < n {
            let m = MAX_BATCH.min(n - r0);
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            match self.s {
                Some(s) => {
                    for i in 0..m {
                        tb[i] = self.alpha.mul_add(s[r0 + i], self.t[r0 + i]);
                    }
                }
                None => tb[..m].copy_from_slice(&self.t[r0..r0 + m]),
            }
            if self.scale != 1.0 {
                tb[..m].iter_mut().for_each(|v| *v *= self.scale);
            }
            self.loss.eval_simd(
                simd,
                &tb[..m],
                &yb[..m],
                LossOut {
                    value: Some(&mut vb[..m]),
                    ..Default::default()
                },
            );
            acc += batch_sum(&vb[..m], self.w.map(|w| &w[r0..r0 + m]));
            r0 += m;
        }
        acc
    }
}

/// `Σ_i w_i ℓ(t_i + α s_i; y_i)` (or `Σ w_i ℓ(t_i)` when `s` is `None`): O(n), no access to `X`.
pub fn loss_sum<L: Loss>(
    y: &[u8],
    w: Option<&[f64]>,
    loss: &L,
    t: &[f64],
    s: Option<&[f64]>,
    alpha: f64,
    par: Par,
) -> f64 {
    loss_sum_scaled(y, w, loss, t, s, alpha, 1.0, par)
}

/// `Σ_i w_i ℓ(c·(t_i + α s_i); y_i)`: the loss along a projection arc `c(α)·(θ + α s)` (radial
/// projection onto a ball), O(n) from cached scores. `c = 1` gives [`loss_sum`] bit for bit.
#[allow(clippy::too_many_arguments)]
pub fn loss_sum_scaled<L: Loss>(
    y: &[u8],
    w: Option<&[f64]>,
    loss: &L,
    t: &[f64],
    s: Option<&[f64]>,
    alpha: f64,
    scale: f64,
    par: Par,
) -> f64 {
    let n = y.len();
    assert_eq!(t.len(), n);
    let blocks = Blocks::new(n, 1, 1 << 16, 64);
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        arch.dispatch(LossSum {
            y: &y[r.clone()],
            w: w.map(|w| &w[r.clone()]),
            t: &t[r.clone()],
            s: s.map(|s| &s[r.clone()]),
            alpha,
            scale,
            loss,
        })
    };
    tree_reduce(blocks.count(), par.for_bytes(n * 24), &leaf, &|a, b| a + b)
}

// ---------------------------------------------------------------------------------------------
// Bandwidth baseline.

struct StreamSum<'a> {
    x: &'a [f64],
}

impl WithSimd for StreamSum<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        let (h, t) = S::as_simd_f64s(self.x);
        let z = simd.splat_f64s(0.0);
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let mut it = h.chunks_exact(4);
        for c in &mut it {
            a0 = simd.add_f64s(a0, c[0]);
            a1 = simd.add_f64s(a1, c[1]);
            a2 = simd.add_f64s(a2, c[2]);
            a3 = simd.add_f64s(a3, c[3]);
        }
        for c in it.remainder() {
            a0 = simd.add_f64s(a0, *c);
        }
        let s = simd.add_f64s(simd.add_f64s(a0, a1), simd.add_f64s(a2, a3));
        simd.reduce_sum_f64s(s) + t.iter().sum::<f64>()
    }
}

/// Sum of all entries of `x`, with the same blocking and threading as the fused pass: the
/// "plain memory-streaming pass" that kernel bandwidth is reported against.
pub fn stream_sum(x: &[f64], d: usize, par: Par) -> f64 {
    let n = x.len() / d.max(1);
    let blocks = Blocks::new(n, d, STREAM_BLOCK_BYTES, 64);
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        arch.dispatch(StreamSum {
            x: &x[r.start * d..r.end * d],
        })
    };
    tree_reduce(blocks.count(), par.for_bytes(x.len() * 8), &leaf, &|a, b| a + b)
}

// ---------------------------------------------------------------------------------------------
// Compensated (doubled-precision) value and gradient, for iterative refinement.

/// `(s, e)` with `s = fl(a + b)` and `s + e = a + b` exactly (Knuth's TwoSum).
#[inline(always)]
fn two_sum<S: Simd>(simd: S, a: S::f64s, b: S::f64s) -> (S::f64s, S::f64s) {
    let s = simd.add_f64s(a, b);
    let bb = simd.sub_f64s(s, a);
    let e = simd.add_f64s(simd.sub_f64s(a, simd.sub_f64s(s, bb)), simd.sub_f64s(b, bb));
    (s, e)
}

/// Scalar TwoSum.
#[inline(always)]
fn two_sum_s(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `xᵀv` as an unevaluated sum `hi + lo`, accurate as if computed in twice the working precision
/// (Ogita, Rump & Oishi 2005, Algorithm Dot2: error-free products by FMA, TwoSum accumulation).
#[inline(always)]
fn dot2<S: Simd>(simd: S, x: &[f64], v: &[f64]) -> (f64, f64) {
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

/// Value and gradient sums like [`value_grad`], but computed as if in twice the working
/// precision: scores by Dot2 with a first-order correction of `ℓ` and `ℓ'`, and double-double
/// accumulation of the sums. The remaining error is dominated by the loss functions' own
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
            x: rows.x.slice(r.start * d, r.end * d),
            y: &rows.y[r.clone()],
            w: rows.w.map(|w| &w[r.clone()]),
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
    let ((v, e), (gh, gl)) = tree_reduce(blocks.count(), rows.par(par), &leaf, &combine);
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

#[cfg(test)]
mod scale_tests {
    use super::*;
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
                let rows = Rows {
                    x: Features::F64(&x),
                    d,
                    y: &y,
                    w: weights,
                };
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
