//! Parallelism policy and the deterministic block reduction every pass over the data uses.
//!
//! Work over `n` rows is cut into blocks whose size depends only on the data shape (never on
//! the thread count). Each block is reduced sequentially, and block results are combined by a
//! binary tree whose shape depends only on the number of blocks. Rayon may run subtrees on any
//! thread, but the arithmetic is the same, so results are bit-identical for 1, 2 or 64 threads.
//!
//! The library never builds or resizes a global thread pool: [`Par::Rayon`] runs on whatever
//! pool the caller installed (`rayon::ThreadPool::install`), [`Par::Seq`] runs on the calling
//! thread.
//!
//! The same tree also spans processes: [`Shard`] cuts it between the members of a
//! [`Collective`] (MPI ranks with the `mpi` feature: `par::mpi::Mpi`), which exchange only the
//! results of the subtrees they hold — the same bits for any number of processes.

#[cfg(feature = "mpi")]
pub mod mpi;
mod shard;

pub(crate) use shard::STREAM_BLOCK_BYTES;
pub use shard::{chunk_depth, stream_blocks, Collective, Cut, Partial, Shard, ThreadGroup};

/// How a pass over the data may use threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Par {
    /// Run on the calling thread only.
    Seq,
    /// Split work over the current rayon pool (the caller chooses its size).
    #[default]
    Rayon,
}

impl Par {
    /// The policy to use for a pass touching `bytes` bytes: small passes run sequentially
    /// because forking costs more than it saves (`PAR_MIN_BYTES`).
    #[inline]
    pub(crate) fn for_bytes(self, bytes: usize) -> Par {
        if bytes < PAR_MIN_BYTES {
            Par::Seq
        } else {
            self
        }
    }
}

/// Passes over fewer bytes than this run sequentially whatever the policy (256 KiB).
pub(crate) const PAR_MIN_BYTES: usize = 1 << 18;

/// Subtrees of the reduction smaller than this many blocks are not forked further.
const MIN_FORK_BLOCKS: usize = 2;

/// Deterministic tree reduction over blocks `0..nblocks`.
///
/// `leaf(b)` computes block `b`'s partial result; `combine(a, b)` merges the results of two
/// adjacent block ranges (left, right). The tree splits every range at its midpoint, so its
/// shape depends only on `nblocks`; [`Par::Rayon`] only changes which thread evaluates a
/// subtree. `nblocks` must be at least 1.
pub(crate) fn tree_reduce<T, L, C>(nblocks: usize, par: Par, leaf: &L, combine: &C) -> T
where
    T: Send,
    L: Fn(usize) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    assert!(nblocks > 0, "tree_reduce needs at least one block");
    reduce_range(0, nblocks, par, leaf, combine)
}

pub(crate) fn reduce_range<T, L, C>(lo: usize, hi: usize, par: Par, leaf: &L, combine: &C) -> T
where
    T: Send,
    L: Fn(usize) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    if hi - lo == 1 {
        return leaf(lo);
    }
    let mid = lo + (hi - lo) / 2;
    let (a, b) = if par == Par::Rayon && hi - lo >= MIN_FORK_BLOCKS {
        rayon::join(
            || reduce_range(lo, mid, par, leaf, combine),
            || reduce_range(mid, hi, par, leaf, combine),
        )
    } else {
        (
            reduce_range(lo, mid, Par::Seq, leaf, combine),
            reduce_range(mid, hi, Par::Seq, leaf, combine),
        )
    };
    combine(a, b)
}

/// Row blocking for a pass over an `n × d` row-major matrix: `rows` rows per block (the last
/// block may be shorter). Depends only on `(n, d)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocks {
    /// Total rows.
    pub n: usize,
    /// Rows per block.
    pub rows: usize,
}

impl Blocks {
    /// Blocks of about `target_bytes` of row data (at least `min_rows` rows) for rows of
    /// `d` f64 values.
    pub fn new(n: usize, d: usize, target_bytes: usize, min_rows: usize) -> Self {
        let row_bytes = d.max(1) * std::mem::size_of::<f64>();
        let rows = (target_bytes / row_bytes).max(min_rows).max(1);
        Blocks { n, rows }
    }
    /// Number of blocks (at least 1 even when `n == 0`).
    pub fn count(&self) -> usize {
        self.n.div_ceil(self.rows).max(1)
    }
    /// Row range of block `b`.
    pub fn range(&self, b: usize) -> std::ops::Range<usize> {
        let lo = (b * self.rows).min(self.n);
        let hi = ((b + 1) * self.rows).min(self.n);
        lo..hi
    }
}

/// Like [`tree_reduce`], but each leaf also gets exclusive access to its rows of a per-row
/// output buffer `out` (`k` values per row, so block `b` gets
/// `out[range(b).start·k .. range(b).end·k]`). The slice is split along the same tree, so no
/// two leaves alias.
pub(crate) fn tree_reduce_rows<T, O, L, C>(
    blocks: Blocks,
    k: usize,
    par: Par,
    out: &mut [O],
    leaf: &L,
    combine: &C,
) -> T
where
    T: Send,
    O: Send,
    L: Fn(usize, &mut [O]) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    assert_eq!(out.len(), blocks.n * k, "tree_reduce_rows: output length");
    reduce_rows(blocks, k, 0, blocks.count(), par, out, leaf, combine)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_rows<T, O, L, C>(
    blocks: Blocks,
    k: usize,
    lo: usize,
    hi: usize,
    par: Par,
    out: &mut [O],
    leaf: &L,
    combine: &C,
) -> T
where
    T: Send,
    O: Send,
    L: Fn(usize, &mut [O]) -> T + Sync,
    C: Fn(T, T) -> T + Sync,
{
    if hi - lo == 1 {
        return leaf(lo, out);
    }
    let mid = lo + (hi - lo) / 2;
    let split = (blocks.range(mid).start - blocks.range(lo).start) * k;
    let (left, right) = out.split_at_mut(split);
    let (a, b) = if par == Par::Rayon && hi - lo >= MIN_FORK_BLOCKS {
        rayon::join(
            || reduce_rows(blocks, k, lo, mid, par, left, leaf, combine),
            || reduce_rows(blocks, k, mid, hi, par, right, leaf, combine),
        )
    } else {
        (
            reduce_rows(blocks, k, lo, mid, Par::Seq, left, leaf, combine),
            reduce_rows(blocks, k, mid, hi, Par::Seq, right, leaf, combine),
        )
    };
    combine(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_reduce_sums_in_fixed_order() {
        // Values chosen so that summation order changes the floating-point result.
        let v: Vec<f64> = (0..1000)
            .map(|i| 1.0 / (1.0 + i as f64) * if i % 3 == 0 { 1e8 } else { 1.0 })
            .collect();
        let blocks = Blocks { n: v.len(), rows: 7 };
        let leaf = |b: usize| v[blocks.range(b)].iter().sum::<f64>();
        let comb = |a: f64, b: f64| a + b;
        let s_seq = tree_reduce(blocks.count(), Par::Seq, &leaf, &comb);
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let s_par = pool.install(|| tree_reduce(blocks.count(), Par::Rayon, &leaf, &comb));
            assert_eq!(s_seq.to_bits(), s_par.to_bits(), "threads = {threads}");
        }
        let exact: f64 = v.iter().sum();
        assert!((s_seq - exact).abs() <= 1e-6 * exact.abs());
    }

    #[test]
    fn blocks_cover_all_rows_once() {
        for (n, d) in [(0, 3), (1, 1), (10, 4), (100_000, 7)] {
            let b = Blocks::new(n, d, 4096, 16);
            let mut covered = 0;
            for i in 0..b.count() {
                let r = b.range(i);
                assert_eq!(r.start, covered);
                covered = r.end;
            }
            assert_eq!(covered, n);
        }
    }
}
