//! The chunked Hessian accumulation: per-chunk `d × d` accumulators fed by panels of scaled
//! rows (Gram products), reduced along the fixed midpoint tree of the row blocks.

use super::{gram, RowElem, SMALL_D};
use crate::par::{Blocks, Par, Partial, Shard};

/// The depth of the reduction tree at which the Hessian accumulators live ([`crate::par`]):
/// at most `2^4 = 16` chunks, so the Gram products run on up to 16 threads (fewer for large `d`).
pub use crate::par::chunk_depth;
/// Target bytes of scaled rows per Gram product.
const PANEL_BYTES: usize = 1 << 21;
/// Fewest rows per Gram product (large `d`: keeps the products' inner dimension ≥ 128).
const PANEL_MIN_ROWS: usize = 128;

/// Rows per panel of scaled rows for `d` columns.
fn panel_rows(d: usize) -> usize {
    (PANEL_BYTES / (8 * d.max(1))).max(PANEL_MIN_ROWS)
}

/// The Hessian accumulator of one chunk: the lower triangle of `Σ c_i x_i x_iᵀ` (column-major
/// `d × d`) and the panel of scaled rows not yet multiplied.
pub(super) struct HessAcc {
    d: usize,
    h: Vec<f64>,
    /// `cap × d`: rows with `c ≥ 0` from the front, rows with `c < 0` from the back.
    panel: Vec<f64>,
    cap: usize,
    npos: usize,
    nneg: usize,
    /// Rows with `c < 0` seen.
    neg_rows: usize,
}

impl HessAcc {
    fn new(d: usize) -> Self {
        Self::with_panel(d, panel_rows(d))
    }

    fn with_panel(d: usize, cap: usize) -> Self {
        HessAcc {
            d,
            h: vec![0.0; d * d],
            panel: Vec::new(),
            cap,
            npos: 0,
            nneg: 0,
            neg_rows: 0,
        }
    }

    /// Adds `Σ_r c[r] x_r x_rᵀ` for the row-major rows `x` (`c.len()` rows of `d` values).
    /// Inlined into the SIMD kernels, so the small-`d` loops are compiled for their instruction
    /// set.
    #[inline(always)]
    pub(super) fn add_rows<E: RowElem>(&mut self, x: &[E], c: &[f64]) {
        let d = self.d;
        debug_assert_eq!(x.len(), c.len() * d);
        self.neg_rows += c.iter().filter(|&&v| v < 0.0).count();
        if d < SMALL_D {
            add_rows_small(&mut self.h, x, c, d);
        } else {
            self.add_rows_panel(x, c);
        }
    }

    /// The panel path of [`HessAcc::add_rows`].
    fn add_rows_panel<E: RowElem>(&mut self, x: &[E], c: &[f64]) {
        let d = self.d;
        if self.panel.is_empty() {
            self.panel = vec![0.0; self.cap * d];
        }
        for (xi, &ci) in x.chunks_exact(d).zip(c) {
            // √h_i x_i for h_i ≥ 0 (front), √(−h_i) x_i for h_i < 0 (back).
            let (dst, s) = if ci >= 0.0 {
                self.npos += 1;
                (self.npos - 1, ci.sqrt())
            } else {
                self.nneg += 1;
                (self.cap - self.nneg, (-ci).sqrt())
            };
            for (o, v) in self.panel[dst * d..(dst + 1) * d].iter_mut().zip(xi) {
                *o = v.to_f64() * s;
            }
            if self.npos + self.nneg == self.cap {
                self.flush();
            }
        }
    }

    /// Multiplies out the panel: `H += PₚᵀPₚ − PₙᵀPₙ`.
    fn flush(&mut self) {
        let d = self.d;
        if self.npos > 0 {
            gram::syrk_lower(&mut self.h, &self.panel[..self.npos * d], self.npos, d, 1.0, true);
        }
        if self.nneg > 0 {
            let lo = (self.cap - self.nneg) * d;
            gram::syrk_lower(&mut self.h, &self.panel[lo..], self.nneg, d, -1.0, true);
        }
        self.npos = 0;
        self.nneg = 0;
    }

    /// The chunk's lower triangle and its count of negative-curvature rows.
    fn finish(mut self) -> (Vec<f64>, usize) {
        self.flush();
        (self.h, self.neg_rows)
    }
}

/// Direct accumulation of the lower triangle for small `d`, four rows per update of `h`
/// (`h_kj += (a₀x₀ₖ + a₁x₁ₖ) + (a₂x₂ₖ + a₃x₃ₖ)`, `a_r = c_r x_rj`): a quarter of the loads and
/// stores of `h` of a row-at-a-time update. The grouping follows the rows of the call, which are
/// the kernels' fixed mini-batches, so the bits do not depend on the thread count.
#[inline(always)]
fn add_rows_small<E: RowElem>(h: &mut [f64], x: &[E], c: &[f64], d: usize) {
    let m = c.len();
    let mut r = 0;
    while r + 4 <= m {
        let x0 = &x[r * d..(r + 1) * d];
        let x1 = &x[(r + 1) * d..(r + 2) * d];
        let x2 = &x[(r + 2) * d..(r + 3) * d];
        let x3 = &x[(r + 3) * d..(r + 4) * d];
        let v = |x: &[E], k: usize| x[k].to_f64();
        for j in 0..d {
            let (a0, a1, a2, a3) = (
                c[r] * v(x0, j),
                c[r + 1] * v(x1, j),
                c[r + 2] * v(x2, j),
                c[r + 3] * v(x3, j),
            );
            let col = &mut h[j * d..(j + 1) * d];
            for (k, hk) in col.iter_mut().enumerate().skip(j) {
                *hk += (a0 * v(x0, k) + a1 * v(x1, k)) + (a2 * v(x2, k) + a3 * v(x3, k));
            }
        }
        r += 4;
    }
    for (xi, &ci) in x[r * d..].chunks_exact(d).zip(&c[r..]) {
        for j in 0..d {
            let cj = ci * xi[j].to_f64();
            let col = &mut h[j * d..(j + 1) * d];
            for (hk, xk) in col.iter_mut().zip(xi).skip(j) {
                *hk += cj * xk.to_f64();
            }
        }
    }
}

/// Adds the lower triangle of `b` into `a` (column-major `d × d`).
fn add_lower(a: &mut [f64], b: &[f64], d: usize) {
    for j in 0..d {
        for (x, y) in a[j * d + j..(j + 1) * d].iter_mut().zip(&b[j * d + j..(j + 1) * d]) {
            *x += y;
        }
    }
}

/// Runs `leaf(b, out_b, acc)` on every block and reduces: the per-block results `T` by
/// `combine` along the midpoint tree of [`crate::par::tree_reduce_rows`] (the same tree, so the
/// same bits as that function with the same leaves), and the Hessian accumulators per chunk
/// (subtree at depth [`chunk_depth`], blocks in order), added along the tree above. `out` has
/// `k` values per row; leaf `b` gets its rows of it. Returns `(T, lower triangle, negative rows)`.
///
/// With a `shard`, this process computes the maximal subtrees inside its rows (whole chunks or
/// nodes above them: a shard owns whole chunks) and the group completes the tree above them
/// ([`Shard`]): the same bits; `out` then holds the shard's rows only.
#[allow(clippy::too_many_arguments)]
pub(super) fn chunked_reduce<T, L, C>(
    blocks: Blocks,
    k: usize,
    d: usize,
    par: Par,
    shard: Option<&Shard<'_>>,
    out: &mut [f64],
    leaf: &L,
    combine: &C,
) -> (T, Vec<f64>, usize)
where
    T: Send + Partial,
    L: Fn(usize, &mut [f64], &mut HessAcc) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    let top = chunk_depth(d);
    let Some(shard) = shard else {
        assert_eq!(out.len(), blocks.n * k, "chunked_reduce: output length");
        return node(blocks, k, d, 0, blocks.count(), top, par, out, leaf, combine);
    };
    // `out` holds the shard's rows.
    let first = shard.start();
    assert_eq!(out.len(), shard.rows().len() * k, "chunked_reduce: output length");
    let parts = shard
        .owned_nodes(blocks)
        .into_iter()
        .map(|(r, depth)| {
            let left = top.checked_sub(depth).expect("a shard owns whole Hessian chunks");
            let rows = (blocks.range(r.start).start - first) * k..(blocks.range(r.end - 1).end - first) * k;
            let t = node(blocks, k, d, r.start, r.end, left, par, &mut out[rows], leaf, combine);
            (r, t)
        })
        .collect();
    shard.finish(
        blocks.count(),
        parts,
        &|(ta, mut ha, na): (T, Vec<f64>, usize), (tb, hb, nb)| {
            add_lower(&mut ha, &hb, d);
            (combine(ta, tb), ha, na + nb)
        },
    )
}

/// Splits `out` between the block ranges `lo..mid` and `mid..hi`.
fn split_out(blocks: Blocks, k: usize, lo: usize, mid: usize, out: &mut [f64]) -> (&mut [f64], &mut [f64]) {
    let split = (blocks.range(mid).start - blocks.range(lo).start) * k;
    out.split_at_mut(split)
}

/// A node of the tree with `depth` levels left above the chunks.
#[allow(clippy::too_many_arguments)]
fn node<T, L, C>(
    blocks: Blocks,
    k: usize,
    d: usize,
    lo: usize,
    hi: usize,
    depth: usize,
    par: Par,
    out: &mut [f64],
    leaf: &L,
    combine: &C,
) -> (T, Vec<f64>, usize)
where
    T: Send,
    L: Fn(usize, &mut [f64], &mut HessAcc) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    if depth == 0 || hi - lo == 1 {
        let mut acc = HessAcc::new(d);
        let t = chunk(blocks, k, lo, hi, out, &mut acc, leaf, combine);
        let (h, nneg) = acc.finish();
        return (t, h, nneg);
    }
    let mid = lo + (hi - lo) / 2;
    let (left, right) = split_out(blocks, k, lo, mid, out);
    let ((ta, mut ha, na), (tb, hb, nb)) = if par == Par::Rayon {
        rayon::join(
            || node(blocks, k, d, lo, mid, depth - 1, par, left, leaf, combine),
            || node(blocks, k, d, mid, hi, depth - 1, par, right, leaf, combine),
        )
    } else {
        (
            node(blocks, k, d, lo, mid, depth - 1, par, left, leaf, combine),
            node(blocks, k, d, mid, hi, depth - 1, par, right, leaf, combine),
        )
    };
    add_lower(&mut ha, &hb, d);
    (combine(ta, tb), ha, na + nb)
}

/// One chunk, sequentially: the per-block results along the midpoint tree, the Hessian
/// accumulated in block order into `acc`.
#[allow(clippy::too_many_arguments)]
fn chunk<T, L, C>(
    blocks: Blocks,
    k: usize,
    lo: usize,
    hi: usize,
    out: &mut [f64],
    acc: &mut HessAcc,
    leaf: &L,
    combine: &C,
) -> T
where
    L: Fn(usize, &mut [f64], &mut HessAcc) -> T,
    C: Fn(T, T) -> T,
{
    if hi - lo == 1 {
        return leaf(lo, out, acc);
    }
    let mid = lo + (hi - lo) / 2;
    let (left, right) = split_out(blocks, k, lo, mid, out);
    let a = chunk(blocks, k, lo, mid, left, acc, leaf, combine);
    let b = chunk(blocks, k, mid, hi, right, acc, leaf, combine);
    combine(a, b)
}

/// Writes the full symmetric matrix (both triangles) from the lower triangle `hl`.
pub(super) fn symmetrize_into(hl: &[f64], d: usize, h: &mut [f64]) {
    for j in 0..d {
        for i in j..d {
            let v = hl[j * d + i];
            h[j * d + i] = v;
            h[i * d + j] = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{data, naive};
    use super::*;
    use crate::loss::{Loss, RrNoisyChannel};

    #[test]
    fn panels_flushed_mid_chunk_add_up() {
        // A panel of 7 rows: many flushes, with positive and negative rows interleaved.
        let (n, d) = (100, 15);
        let (x, y, w) = data(n, d);
        let loss = RrNoisyChannel::new(0.5).unwrap();
        let t: Vec<f64> = (0..n).map(|i| 4.0 * ((i % 9) as f64 - 4.0)).collect();
        let c: Vec<f64> = (0..n).map(|i| w[i] * loss.d2(t[i], y[i])).collect();
        assert!(c.iter().any(|&v| v < 0.0) && c.iter().any(|&v| v > 0.0));
        let mut acc = HessAcc::with_panel(d, 7);
        for (xs, cs) in x.chunks(13 * d).zip(c.chunks(13)) {
            acc.add_rows(xs, cs);
        }
        let (hl, nneg) = acc.finish();
        assert_eq!(nneg, c.iter().filter(|&&v| v < 0.0).count());
        let want = naive(&x, &y, &w, d, &loss, &t);
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for j in 0..d {
            for i in j..d {
                let (a, b) = (hl[j * d + i], want[j * d + i]);
                assert!((a - b).abs() <= 1e-13 * scale, "({i},{j}): {a} vs {b}");
            }
        }
    }

    #[test]
    fn chunk_depth_bounds_the_accumulators() {
        assert_eq!(chunk_depth(100), 4);
        assert_eq!(chunk_depth(1448), 4);
        assert_eq!(chunk_depth(1449), 3);
        assert_eq!(chunk_depth(2048), 3);
        assert_eq!(chunk_depth(4096), 1);
        assert_eq!(chunk_depth(10_000), 1);
        for d in [1usize, 500, 1500, 3000, 4096] {
            assert!((8 * d * d) << chunk_depth(d) <= 256 << 20);
        }
    }

    #[test]
    fn panel_rows_are_at_least_the_minimum() {
        assert_eq!(panel_rows(100), (1 << 21) / 800);
        assert_eq!(panel_rows(5000), PANEL_MIN_ROWS);
    }
}
