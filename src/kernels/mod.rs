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
    /// Row-major `n × d` features (`f64`, or `f32` widened to `f64` a mini-batch at a time).
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
    /// Calls `f(x, lo, hi)` on rows `r` as `f64` ([`with_f64_rows`]), then lets a pending
    /// validation scan them while they are in cache.
    #[inline]
    fn with_f64(&self, r: std::ops::Range<usize>, chunk: usize, f: impl FnMut(&[f64], usize, usize)) {
        let f0 = self.data_first;
        with_f64_rows(self.x, r.start - f0..r.end - f0, self.d, chunk, f);
        if let Some(s) = self.scan {
            s.visit(self.x, r);
        }
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
fn batch_rows(d: usize) -> usize {
    ((BATCH_BYTES / (8 * d.max(1))) / 4 * 4).clamp(4, MAX_BATCH)
}
