//! SIMD building blocks of the row passes, inlined into each pass's dispatch: row dot
//! products, batched `acc += Σ c_r x_r` updates, labels and sums of a mini-batch.
//!
//! The rows are `f64` or `f32` ([`RowElem`]): an `f32` value is widened as it is loaded and
//! everything after the load is the `f64` arithmetic, so both storages give the same bits.

use super::row_elem::RowElem;
use pulp::Simd;

/// SIMD vectors of the gradient held in registers by the batched update.
const AXPY_TILE: usize = 8;

/// Below this many columns the row kernels use plain scalar loops: a row is shorter than one or
/// two SIMD registers, so masked loads and horizontal sums would cost more than they save.
pub(super) const SMALL_D: usize = 12;

/// Scalar `out[r] = rows[r]ᵀ v` for small `d`, four rows at a time for instruction-level
/// parallelism. Each row is one sequential sum over `j`, whatever its position.
#[inline(always)]
fn dots_small<E: RowElem>(rows: &[E], v: &[f64], out: &mut [f64], mut before: impl FnMut(usize)) {
    let d = v.len();
    for (i, (o, r)) in out.iter_mut().zip(rows.chunks_exact(d)).enumerate() {
        before(i);
        let mut a = 0.0;
        for j in 0..d {
            a += r[j].to_f64() * v[j];
        }
        *o = a;
    }
}

/// Scalar `acc += Σ_r coef[r]·rows[r]` for small `d`: four rows per update of a local
/// accumulator (one dependency chain per four rows instead of one per row).
#[inline(always)]
fn axpys_small<E: RowElem, const ABS: bool>(rows: &[E], coef: &[f64], acc: &mut [f64]) {
    let v = |x: E| {
        let x = x.to_f64();
        if ABS {
            x.abs()
        } else {
            x
        }
    };
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
fn dot1<S: Simd, E: RowElem>(simd: S, x: &[E], vh: &[S::f64s], vt: Option<S::f64s>, full: usize) -> f64 {
    let h0 = &x[..full];
    let z = simd.splat_f64s(0.0);
    let (mut c0, mut c1, mut c2, mut c3) = (z, z, z, z);
    let quads = vh.len() / 4;
    for p in 0..quads {
        let j = 4 * p;
        let [x0, x1, x2, x3] = E::vecs::<S, 4>(simd, h0, j);
        c0 = simd.mul_add_e_f64s(x0, vh[j], c0);
        c1 = simd.mul_add_e_f64s(x1, vh[j + 1], c1);
        c2 = simd.mul_add_e_f64s(x2, vh[j + 2], c2);
        c3 = simd.mul_add_e_f64s(x3, vh[j + 3], c3);
    }
    let j = 4 * quads;
    match vh.len() - j {
        0 => {}
        1 => {
            let [x0] = E::vecs::<S, 1>(simd, h0, j);
            c0 = simd.mul_add_e_f64s(x0, vh[j], c0);
        }
        2 => {
            let [x0, x1] = E::vecs::<S, 2>(simd, h0, j);
            c0 = simd.mul_add_e_f64s(x0, vh[j], c0);
            c1 = simd.mul_add_e_f64s(x1, vh[j + 1], c1);
        }
        _ => {
            let [x0, x1, x2] = E::vecs::<S, 3>(simd, h0, j);
            c0 = simd.mul_add_e_f64s(x0, vh[j], c0);
            c1 = simd.mul_add_e_f64s(x1, vh[j + 1], c1);
            c2 = simd.mul_add_e_f64s(x2, vh[j + 2], c2);
        }
    }
    if let Some(vt) = vt {
        c0 = simd.mul_add_e_f64s(E::partial(simd, &x[full..]), vt, c0);
    }
    simd.reduce_sum_f64s(simd.add_f64s(simd.add_f64s(c0, c1), simd.add_f64s(c2, c3)))
}

/// The row kernels of one pass, with `v` split once into its SIMD head and tail.
pub(super) struct RowOps<'v, S: Simd> {
    simd: S,
    v: &'v [f64],
    vh: &'v [S::f64s],
    vt: Option<S::f64s>,
    full: usize,
    d: usize,
}

impl<'v, S: Simd> RowOps<'v, S> {
    #[inline(always)]
    pub(super) fn new(simd: S, v: &'v [f64]) -> Self {
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
    pub(super) fn dots<E: RowElem>(&self, rows: &[E], out: &mut [f64]) {
        self.dots_with(rows, out, |_| {})
    }

    /// [`RowOps::dots`], calling `before(i)` before row `i` is read (for
    /// [`Ahead`](super::row_elem::Ahead)).
    #[inline(always)]
    pub(super) fn dots_with<E: RowElem>(&self, rows: &[E], out: &mut [f64], mut before: impl FnMut(usize)) {
        if self.d < SMALL_D {
            return dots_small(rows, self.v, out, before);
        }
        for (i, (o, row)) in out.iter_mut().zip(rows.chunks_exact(self.d)).enumerate() {
            before(i);
            *o = dot1(self.simd, row, self.vh, self.vt, self.full);
        }
    }

    /// `acc += Σ_r coef[r]·rows[r]`. The columns are taken in tiles of [`AXPY_TILE`] SIMD
    /// vectors held in registers across the whole batch, so `acc` is read and written once per
    /// tile and batch (no store-to-load chain through memory, no 4K aliasing with the rows).
    /// Tile widths are compile-time constants ([`axpy_tile`]), so the accumulators stay in
    /// registers (a runtime-length copy into the tile would force it onto the stack).
    #[inline(always)]
    pub(super) fn axpys<E: RowElem>(&self, rows: &[E], coef: &[f64], acc: &mut [f64]) {
        self.axpys_abs::<E, false>(rows, coef, acc)
    }

    /// [`RowOps::axpys`] on the rows as given (`ABS = false`) or on their absolute values.
    #[inline(always)]
    pub(super) fn axpys_abs<E: RowElem, const ABS: bool>(&self, rows: &[E], coef: &[f64], acc: &mut [f64]) {
        if self.d < SMALL_D {
            return axpys_small::<E, ABS>(rows, coef, acc);
        }
        let simd = self.simd;
        let d = self.d;
        let full = self.full;
        let (acc_h, acc_t) = S::as_mut_simd_f64s(acc);
        let nvec = acc_h.len();
        let mut t0 = 0;
        while t0 + AXPY_TILE <= nvec {
            axpy_tile::<S, E, AXPY_TILE, ABS>(simd, rows, coef, d, full, t0, acc_h);
            t0 += AXPY_TILE;
        }
        match nvec - t0 {
            0 => {}
            1 => axpy_tile::<S, E, 1, ABS>(simd, rows, coef, d, full, t0, acc_h),
            2 => axpy_tile::<S, E, 2, ABS>(simd, rows, coef, d, full, t0, acc_h),
            3 => axpy_tile::<S, E, 3, ABS>(simd, rows, coef, d, full, t0, acc_h),
            4 => axpy_tile::<S, E, 4, ABS>(simd, rows, coef, d, full, t0, acc_h),
            5 => axpy_tile::<S, E, 5, ABS>(simd, rows, coef, d, full, t0, acc_h),
            6 => axpy_tile::<S, E, 6, ABS>(simd, rows, coef, d, full, t0, acc_h),
            _ => axpy_tile::<S, E, 7, ABS>(simd, rows, coef, d, full, t0, acc_h),
        }
        if !acc_t.is_empty() {
            let mut a = simd.partial_load_f64s(acc_t);
            for (r, &c) in coef.iter().enumerate() {
                let x = E::partial(simd, &rows[r * d + full..(r + 1) * d]);
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
fn axpy_tile<S: Simd, E: RowElem, const N: usize, const ABS: bool>(
    simd: S,
    rows: &[E],
    coef: &[f64],
    d: usize,
    full: usize,
    t0: usize,
    acc_h: &mut [S::f64s],
) {
    let mut a = [simd.splat_f64s(0.0); N];
    a.copy_from_slice(&acc_h[t0..t0 + N]);
    for (r, &c) in coef.iter().enumerate() {
        let xt = E::vecs::<S, N>(simd, &rows[r * d..r * d + full], t0);
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
pub(super) fn labels_f64(y: &[u8], out: &mut [f64]) {
    for (o, &l) in out.iter_mut().zip(y) {
        *o = l as f64;
    }
}

/// Sum of a batch, optionally weighted, in a fixed sequential order.
#[inline(always)]
pub(super) fn batch_sum(v: &[f64], w: Option<&[f64]>) -> f64 {
    match w {
        None => v.iter().sum(),
        Some(w) => v.iter().zip(w).map(|(a, b)| a * b).sum(),
    }
}
