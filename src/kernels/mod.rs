//! Passes over the row-major feature matrix `X` (`n × d`).
//!
//! Every pass cuts the rows into fixed blocks ([`Blocks`], sized from `d` only), runs one
//! `pulp` dispatch per block (AVX-512 / AVX2 / scalar chosen at run time), and combines block
//! results with the fixed-shape tree of [`crate::par`]: results are bit-identical for any
//! number of threads on a given machine.
//!
//! `f32` features are read as they are stored: each SIMD vector of a row is loaded and widened
//! to `f64` in registers (`row_elem`), and everything after the load is the `f64` kernel's
//! arithmetic in the same order, so the results are the bits of the same pass on the widened
//! values. The passes that read the rows in a dot-product loop first (`value_grad`,
//! `hess_vec`, `matvec`, `value_grad_hessian`) prefetch the rows 12 KiB ahead, for both storage
//! types (`row_elem::Ahead`: 1.7× faster `f64` passes at d = 100 on one thread).
//! [`value_grad_compensated`] widens a copy of each mini-batch (it needs the row twice in
//! doubled precision).
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
//! * `abs_grad`: `Σ_i |w_i ℓ'(t_i)| |x_i|` in one pass (the scale of the KKT certificate).
//! * [`matvec`]: `X v`.
//! * [`loss_sum`]: `Σ w_i ℓ(t_i + α s_i)`, O(n) with no access to `X` (line searches).
//! * [`stream_sum`] ([`stream_sum_f32`] for `f32` storage): a plain read of `X` — the
//!   memory-bandwidth baseline of the benchmarks.

mod compensated;
pub mod fused;
pub mod gram;
pub mod group;
mod loss_sum;
mod products;
mod row_elem;
mod row_ops;
mod stream;
mod value_grad;
/// The SIMD and scalar math of the kernels, now [`crate::math::simd`] (kept under this name).
pub use crate::math::simd as simd_math;

pub use compensated::value_grad_compensated;
pub use fused::value_grad_hessian;
pub use loss_sum::loss_sum;
pub(crate) use loss_sum::loss_sum_scaled;
pub use products::{hess_vec, hessian, matvec};
pub use stream::{stream_sum, stream_sum_f32};
pub(crate) use value_grad::abs_grad;
pub use value_grad::value_grad;
pub(crate) use value_grad::value_grad_scale;

use crate::data::scan::FeatureScan;
use crate::data::Features;
use crate::par::{tree_reduce, tree_reduce_rows, Blocks, Par, Partial, Shard};

/// Maximum rows per mini-batch inside a block (loss evaluated on this many scores at once).
const MAX_BATCH: usize = 64;
/// Target bytes of row data per mini-batch (fits L1 so the second touch of the rows is cheap).
const BATCH_BYTES: usize = 12 * 1024;

/// Borrowed inputs of a pass: features, labels, optional weights.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    /// Row-major `n × d` features (`f64`, or `f32` read as such and widened to `f64` in
    /// registers: the bits of the widened values).
    pub x: Features<'a>,
    /// Columns.
    pub d: usize,
    /// Labels (length `n`).
    pub y: &'a [u8],
    /// Optional weights (length `n`).
    pub w: Option<&'a [f64]>,
    /// This process's part of the rows when they are reduced by a group of processes
    /// ([`crate::par::Shard`]); `None`: all of them, in this process.
    pub shard: Option<Shard<'a>>,
    /// The validation of features not validated yet, which the passes take block by block
    /// while the rows are in cache (`None`: validated).
    pub(crate) scan: Option<&'a FeatureScan>,
    /// Rows of the matrix (`y.len()` unless `x`, `y`, `w` hold a shard's rows only).
    pub(crate) n_all: usize,
    /// The row of the matrix that `x`, `y` and `w` start at (0 unless they hold a shard's
    /// rows only: [`Rows::held`] then).
    pub(crate) data_first: usize,
}

impl<'a> Rows<'a> {
    /// The rows of validated features `x` (`n × d`, row-major), labels `y` and optional
    /// weights `w`, all in this process.
    pub fn new(x: Features<'a>, d: usize, y: &'a [u8], w: Option<&'a [f64]>) -> Self {
        Rows {
            x,
            d,
            y,
            w,
            shard: None,
            scan: None,
            n_all: y.len(),
            data_first: 0,
        }
    }
}

impl Rows<'_> {
    /// Rows of the matrix.
    #[inline]
    pub fn n(&self) -> usize {
        self.n_all
    }
    /// The labels of rows `r` of the matrix.
    #[inline]
    pub(crate) fn y_at(&self, r: std::ops::Range<usize>) -> &[u8] {
        &self.y[r.start - self.data_first..r.end - self.data_first]
    }
    /// The weights of rows `r` of the matrix, if any.
    #[inline]
    pub(crate) fn w_at(&self, r: std::ops::Range<usize>) -> Option<&[f64]> {
        self.w.map(|w| &w[r.start - self.data_first..r.end - self.data_first])
    }
    /// The rows whose per-row values (scores, a direction's scores) this process holds: its
    /// shard's rows when the rows are sharded, else all. Per-row buffers of the passes cover
    /// exactly these rows (so a process of a group holds O(n/P) of them).
    #[inline]
    pub fn held(&self) -> std::ops::Range<usize> {
        match &self.shard {
            Some(s) => s.rows(),
            None => 0..self.n(),
        }
    }
    /// `r` (rows of the matrix, inside [`Rows::held`]) as positions in the per-row buffers.
    #[inline]
    pub(crate) fn local(&self, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let first = self.held().start;
        r.start - first..r.end - first
    }
    fn stream_blocks(&self) -> Blocks {
        crate::par::stream_blocks(self.n(), self.d)
    }
    fn par(&self, par: Par) -> Par {
        par.for_bytes(self.x.len() * self.x.value_bytes())
    }
    /// [`tree_reduce`] over `blocks`, across the group when the rows are sharded.
    fn reduce<T, L, C>(&self, blocks: Blocks, par: Par, leaf: &L, combine: &C) -> T
    where
        T: Send + Partial,
        L: Fn(usize) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
    {
        self.reduce_with(blocks, self.par(par), leaf, combine)
    }
    /// [`Rows::reduce`] with the parallelism already decided (passes that do not read `X`).
    fn reduce_with<T, L, C>(&self, blocks: Blocks, par: Par, leaf: &L, combine: &C) -> T
    where
        T: Send + Partial,
        L: Fn(usize) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
    {
        match &self.shard {
            None => tree_reduce(blocks.count(), par, leaf, combine),
            Some(s) => s.tree_reduce(blocks, par, leaf, combine),
        }
    }
    /// Returns `f(x)` on rows `r` of the matrix as stored (`f64` or `f32`, no copy), then lets a
    /// pending validation scan them while they are in cache.
    #[inline]
    fn with_rows<T>(&self, r: std::ops::Range<usize>, f: impl FnOnce(Features<'_>) -> T) -> T {
        let (f0, d) = (self.data_first, self.d);
        let out = f(self.x.slice((r.start - f0) * d, (r.end - f0) * d));
        if let Some(s) = self.scan {
            s.visit(self.x, r);
        }
        out
    }
    /// [`tree_reduce_rows`] over `blocks`, across the group when the rows are sharded (`out`
    /// holds the [`Rows::held`] rows: a process writes its own).
    fn reduce_rows<T, O, L, C>(&self, blocks: Blocks, k: usize, par: Par, out: &mut [O], leaf: &L, combine: &C) -> T
    where
        T: Send + Partial,
        O: Send,
        L: Fn(usize, &mut [O]) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
    {
        let par = self.par(par);
        match &self.shard {
            None => tree_reduce_rows(blocks, k, par, out, leaf, combine),
            Some(s) => s.tree_reduce_rows(blocks, k, par, out, leaf, combine),
        }
    }
}

/// A reduction over the row ranges of the passes' blocks: `leaf(rows)` for each block, combined
/// along the fixed tree (across the group when `rows` are sharded, so only the process's own
/// rows are visited). For O(n) passes over per-row data such as the scores.
pub(crate) fn reduce_blocks<T, L, C>(rows: Rows<'_>, par: Par, leaf: &L, combine: &C) -> T
where
    T: Send + Partial,
    L: Fn(std::ops::Range<usize>) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    let blocks = rows.stream_blocks();
    rows.reduce(blocks, par, &|b| leaf(blocks.range(b)), combine)
}

/// Rows per mini-batch for rows of `d` values: a multiple of 4 in `[4, MAX_BATCH]`.
#[inline]
fn batch_rows(d: usize) -> usize {
    ((BATCH_BYTES / (8 * d.max(1))) / 4 * 4).clamp(4, MAX_BATCH)
}

#[cfg(test)]
mod f32_tests {
    //! Every pass that reads `f32` rows directly gives the bits of the same pass on the values
    //! widened to `f64`, for widths on both sides of the scalar/SIMD switch (`SMALL_D = 12`) and
    //! with every tail of an AVX2 (4) and AVX-512 (8) vector.
    use super::*;
    use crate::loss::{Logistic, Loss, RrNoisyChannel};

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// All the passes on `r32` and on `r64` (the same values), compared bit for bit.
    fn same_bits<L: Loss>(r32: Rows<'_>, r64: Rows<'_>, loss: &L, par: Par, what: &str) {
        let (n, d) = (r64.n(), r64.d);
        let theta: Vec<f64> = (0..d)
            .map(|j| 0.4 * ((j % 7) as f64 - 3.0) / (d as f64).sqrt())
            .collect();
        let v: Vec<f64> = (0..d).map(|j| ((j * 5 % 11) as f64 - 5.0) / 7.0).collect();
        let mut out = [Vec::new(), Vec::new()];
        for (k, rows) in [r32, r64].into_iter().enumerate() {
            let o = &mut out[k];
            let (mut s, mut g) = (vec![0.0; n], vec![0.0; d]);
            o.push(value_grad(rows, loss, &theta, &mut s, &mut g, par).to_bits());
            o.extend(bits(&s));
            o.extend(bits(&g));
            let (mut s2, mut g2, mut a) = (vec![0.0; n], vec![0.0; d], vec![0.0; d]);
            o.push(value_grad_scale(rows, loss, &theta, &mut s2, &mut g2, &mut a, par).to_bits());
            o.extend(bits(&s2).into_iter().chain(bits(&g2)).chain(bits(&a)));
            abs_grad(rows, loss, &s, &mut a, par);
            o.extend(bits(&a));
            let mut m = vec![0.0; n];
            matvec(rows, &v, &mut m, par);
            o.extend(bits(&m));
            hess_vec(rows, loss, &s, &v, &mut g2, par);
            o.extend(bits(&g2));
            let mut h = vec![0.0; d * d];
            o.push(hessian(rows, loss, &s, &mut h, par) as u64);
            o.extend(bits(&h));
            let (val, nneg) = value_grad_hessian(rows, loss, &theta, &mut s2, &mut g2, &mut h, par);
            o.extend([val.to_bits(), nneg as u64]);
            o.extend(bits(&s2).into_iter().chain(bits(&g2)).chain(bits(&h)));
        }
        assert_eq!(out[0].len(), out[1].len());
        if let Some(i) = (0..out[0].len()).find(|&i| out[0][i] != out[1][i]) {
            panic!("{what}: f32 storage differs from the widened f64 at output value {i}");
        }
    }

    #[test]
    fn every_pass_on_f32_rows_gives_the_bits_of_the_widened_rows() {
        for d in [1usize, 3, 7, 11, 12, 13, 17, 100, 101] {
            // About 2.6 MB of f64 rows: three row blocks, the last one short, and a last
            // mini-batch shorter than the others.
            let n = 2_600_000 / (8 * d) + 7;
            let mut s = 0x2545F4914F6CDD1Du64;
            let mut next = || {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            };
            // f32 values with all 24 bits of significand used, some subnormal and some zero.
            let x32: Vec<f32> = (0..n * d)
                .map(|i| match i % 97 {
                    0 => 0.0,
                    1 => f32::MIN_POSITIVE / 3.0,
                    _ => (next() * 3.0) as f32,
                })
                .collect();
            let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
            let y: Vec<u8> = (0..n).map(|_| u8::from(next() > 0.1)).collect();
            let w: Vec<f64> = (0..n).map(|_| next() + 1.0).collect();
            for weights in [None, Some(&w[..])] {
                let r32 = Rows::new(Features::F32(&x32), d, &y, weights);
                let r64 = Rows::new(Features::F64(&x64), d, &y, weights);
                for par in [Par::Seq, Par::Rayon] {
                    let what = format!("d = {d}, weights {}, {par:?}", weights.is_some());
                    same_bits(r32, r64, &Logistic, par, &format!("logistic, {what}"));
                    let rr = RrNoisyChannel::new(0.4).unwrap();
                    same_bits(r32, r64, &rr, par, &format!("mle-rr, {what}"));
                }
            }
        }
    }
}
