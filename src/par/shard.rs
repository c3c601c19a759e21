//! Passes over rows spread across processes, with the bits of one process.
//!
//! A [`Collective`] is a group of processes (MPI ranks, or threads in tests) that hold the same
//! `n × d` rows and each reduce a contiguous part of them. A [`Shard`] is one member's part: a
//! contiguous run of the *units* of the row passes' block grid ([`stream_blocks`]), the subtrees
//! at depth [`chunk_depth`] of the midpoint tree of [`super::tree_reduce`] (so the Hessian pass's
//! chunks never straddle two members).
//!
//! A distributed reduction is the single-process tree, cut differently:
//!
//! 1. each member reduces the *maximal* subtrees of the global tree that lie inside its blocks
//!    — at most about `2·log₂(blocks)` of them, each on its own threads as before;
//! 2. the members exchange these partial results ([`Collective::all_gather`]: `O(log blocks)`
//!    vectors per member, never per-row data);
//! 3. every member completes the same tree above them.
//!
//! Every internal node of the global tree is computed from the same two children with the same
//! `combine`, whoever computed them, so the result has the bits of [`super::tree_reduce`] for any
//! number of members and threads. Per-row outputs (the scores `Xθ`) are written only for the
//! member's own rows; every pass that reads them is a reduction over the same grid, so a member
//! never reads rows it did not write.

use super::{Blocks, Par};
use std::collections::HashMap;
use std::ops::Range;

/// Target bytes of row data per block of the streaming passes over `X` (1 MiB; the K-wise
/// passes use it too, with `K·d` values a row).
pub(crate) const STREAM_BLOCK_BYTES: usize = 1 << 20;
/// The deepest chunking of the Hessian accumulation (16 chunks).
const CHUNK_DEPTH: usize = 4;
/// Bytes of `d × d` chunk accumulators allowed before the chunk depth is lowered.
const CHUNK_BYTES: usize = 256 << 20;

/// The block grid of every pass over the rows of an `n × d` matrix: about 1 MiB of `f64` row
/// data per block, at least 64 rows. Depends only on `(n, d)`.
pub fn stream_blocks(n: usize, d: usize) -> Blocks {
    Blocks::new(n, d, STREAM_BLOCK_BYTES, 64)
}

/// The chunk depth for `d` columns: the largest `k ≤ 4` (at least 1) with `2^k · 8d² ≤ 256 MiB`
/// — so at most that much (or two accumulators, for `d > 4096`) is ever allocated for the
/// Hessian pass's accumulators, whatever the thread count: `d ≤ 1448` gets 16 chunks,
/// `d = 2048` 8, `d = 4096` 2. The chunks are also the units a [`Shard`] owns.
pub fn chunk_depth(d: usize) -> usize {
    let acc = 8 * d * d;
    let mut k = CHUNK_DEPTH;
    while k > 1 && (acc << k) > CHUNK_BYTES {
        k -= 1;
    }
    k
}

/// A group of processes that each hold the same rows and reduce a part of them.
///
/// Implementations: the MPI communicator of the `mpi` feature (`privpref::par::mpi`), and
/// [`ThreadGroup`] (threads of one process, for tests). Every member must call the methods in
/// the same order — they are collective operations.
pub trait Collective: Sync + std::fmt::Debug {
    /// This member's index, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of members.
    fn size(&self) -> usize;
    /// Every member's `mine`, concatenated in rank order (an all-gather of variable length).
    fn all_gather(&self, mine: &[f64]) -> Vec<f64>;
    /// Copies member 0's `buf` into every member's `buf` (all of the same length).
    fn broadcast(&self, buf: &mut [u8]);
}

/// A value that a reduction can send between processes: flattened to `f64`s and read back.
/// Counts (`usize`) travel as `f64`, exact below `2^53`.
pub trait Partial: Sized {
    /// Appends the value to `out`.
    fn put(&self, out: &mut Vec<f64>);
    /// Reads a value written by [`Partial::put`] from the front of `src`, advancing it.
    fn take(src: &mut &[f64]) -> Self;
}

fn take_one(src: &mut &[f64]) -> f64 {
    let (v, rest) = src.split_first().expect("a partial result was cut short");
    *src = rest;
    *v
}

impl Partial for f64 {
    fn put(&self, out: &mut Vec<f64>) {
        out.push(*self);
    }
    fn take(src: &mut &[f64]) -> Self {
        take_one(src)
    }
}

impl Partial for usize {
    fn put(&self, out: &mut Vec<f64>) {
        out.push(*self as f64);
    }
    fn take(src: &mut &[f64]) -> Self {
        take_one(src) as usize
    }
}

impl Partial for () {
    fn put(&self, _: &mut Vec<f64>) {}
    fn take(_: &mut &[f64]) -> Self {}
}

impl Partial for Vec<f64> {
    fn put(&self, out: &mut Vec<f64>) {
        out.push(self.len() as f64);
        out.extend_from_slice(self);
    }
    fn take(src: &mut &[f64]) -> Self {
        let len = take_one(src) as usize;
        let (v, rest) = src.split_at(len);
        *src = rest;
        v.to_vec()
    }
}

impl<A: Partial, B: Partial> Partial for (A, B) {
    fn put(&self, out: &mut Vec<f64>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn take(src: &mut &[f64]) -> Self {
        let a = A::take(src);
        (a, B::take(src))
    }
}

impl<A: Partial, B: Partial, C: Partial> Partial for (A, B, C) {
    fn put(&self, out: &mut Vec<f64>) {
        self.0.put(out);
        self.1.put(out);
        self.2.put(out);
    }
    fn take(src: &mut &[f64]) -> Self {
        let a = A::take(src);
        let b = B::take(src);
        (a, b, C::take(src))
    }
}

/// How a [`Shard`] cuts the rows between the members of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Whole Hessian chunks per member ([`Shard::new`]): every solver, dense Newton included.
    WholeChunks,
    /// Units fine enough for every member ([`Shard::hessian_free`]): L-BFGS and Newton-CG.
    HessianFree,
}

/// One member's part of the rows of an `n × d` matrix held by every member of a
/// [`Collective`]: a contiguous run of the depth-[`chunk_depth`] subtrees of the row passes'
/// block grid ([`stream_blocks`]), about `1/size` of them. Members beyond the number of those
/// subtrees (16 for `d ≤ 1448`, 2 at `d = 4096`) own no rows and only take part in the
/// exchanges.
#[derive(Clone, Copy)]
pub struct Shard<'a> {
    comm: &'a dyn Collective,
    /// The rows `start..end`.
    start: usize,
    end: usize,
    /// Cut for the Hessian-free solvers ([`Shard::hessian_free`]).
    fine: bool,
    /// Every member's rows are whole Hessian chunks (the same on every member).
    whole: bool,
}

impl std::fmt::Debug for Shard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.size())
            .field("rows", &self.rows())
            .finish()
    }
}

/// The depth-`depth` nodes of the midpoint tree over `lo..hi` (single blocks where the tree is
/// shallower), in order.
fn units(lo: usize, hi: usize, depth: usize, out: &mut Vec<Range<usize>>) {
    if depth == 0 || hi - lo == 1 {
        out.push(lo..hi);
        return;
    }
    let mid = lo + (hi - lo) / 2;
    units(lo, mid, depth - 1, out);
    units(mid, hi, depth - 1, out);
}

impl<'a> Shard<'a> {
    /// Member `comm.rank()`'s part of `n` rows of width `d`, in whole Hessian chunks: every pass
    /// of every solver runs distributed, with the single-process bits. At most `2^chunk_depth(d)`
    /// members own rows (16 for `d ≤ 1448`, 8 at `d = 2048`, 2 at `d = 4096`).
    pub fn new(comm: &'a dyn Collective, n: usize, d: usize) -> Self {
        Self::cut(comm, n, d, chunk_depth(d), false)
    }

    /// Member `comm.rank()`'s part in units of the block tree fine enough for every member: the
    /// subtrees at depth `max(chunk_depth(d), ⌈log₂ P⌉ + 3)` (at least 8 per member where the
    /// tree is that deep). For the Hessian-free solvers (L-BFGS, Newton-CG), whose passes all
    /// keep the single-process bits on any cut; the dense Hessian's chunks may then straddle two
    /// members, so dense Newton refuses such a view ([`Shard::whole_chunks`]).
    pub fn hessian_free(comm: &'a dyn Collective, n: usize, d: usize) -> Self {
        let p = comm.size().max(1);
        let depth = chunk_depth(d).max(p.next_power_of_two().trailing_zeros() as usize + 3);
        Self::cut(comm, n, d, depth, true)
    }

    /// The cut `cut` of `n` rows of width `d` for `comm`.
    pub fn with_cut(comm: &'a dyn Collective, n: usize, d: usize, cut: Cut) -> Self {
        match cut {
            Cut::WholeChunks => Self::new(comm, n, d),
            Cut::HessianFree => Self::hessian_free(comm, n, d),
        }
    }

    /// The member's part when the members hold the rows in parts (`starts` and `counts` of
    /// every member, in rank order, each start on a block of [`stream_blocks`]`(n, d)`).
    pub(crate) fn from_parts(comm: &'a dyn Collective, n: usize, d: usize, starts: &[usize], counts: &[usize]) -> Self {
        let blocks = stream_blocks(n, d);
        let mut chunks = Vec::new();
        units(0, blocks.count(), chunk_depth(d), &mut chunks);
        let whole = (0..starts.len()).all(|m| {
            counts[m] == 0
                || chunks
                    .binary_search_by(|c| blocks.range(c.start).start.cmp(&starts[m]))
                    .is_ok()
        });
        let r = comm.rank();
        let (start, end) = if counts[r] > 0 {
            (starts[r], starts[r] + counts[r])
        } else {
            (0, 0)
        };
        Shard {
            comm,
            start,
            end,
            fine: true,
            whole,
        }
    }

    /// The same kind of cut of `n` rows of width `d` for the same group.
    pub fn like(&self, n: usize, d: usize) -> Self {
        let cut = if self.fine { Cut::HessianFree } else { Cut::WholeChunks };
        Self::with_cut(self.comm, n, d, cut)
    }

    fn cut(comm: &'a dyn Collective, n: usize, d: usize, depth: usize, fine: bool) -> Self {
        let blocks = stream_blocks(n, d);
        let mut us = Vec::new();
        units(0, blocks.count(), depth, &mut us);
        let (p, r) = (comm.size().max(1), comm.rank());
        let part = |r: usize| (r * us.len() / p, (r + 1) * us.len() / p);
        let (ua, ub) = part(r);
        let (start, end) = if ua < ub {
            (blocks.range(us[ua].start).start, blocks.range(us[ub - 1].end - 1).end)
        } else {
            (0, 0)
        };
        // Every member's first block must start a chunk (computed alike on every member).
        let mut chunks = Vec::new();
        units(0, blocks.count(), chunk_depth(d), &mut chunks);
        let whole = (0..p).all(|m| {
            let (a, _) = part(m);
            a >= us.len() || chunks.binary_search_by(|c| c.start.cmp(&us[a].start)).is_ok()
        });
        Shard {
            comm,
            start,
            end,
            fine,
            whole,
        }
    }

    /// Whether every member's rows are whole chunks of the dense Hessian pass (so dense Newton
    /// keeps the single-process bits): always for [`Shard::new`]; for [`Shard::hessian_free`]
    /// when its units are no finer than the chunks.
    pub fn whole_chunks(&self) -> bool {
        self.whole
    }
    /// The rows this member reduces.
    pub fn rows(&self) -> Range<usize> {
        self.start..self.end
    }
    /// The group.
    pub fn collective(&self) -> &'a dyn Collective {
        self.comm
    }
    /// The first of this member's rows.
    pub(crate) fn start(&self) -> usize {
        self.start
    }
    /// The blocks of `blocks` whose first row is one of this member's rows (for the grid the
    /// shard was cut from, exactly the blocks of its units).
    fn own_blocks(&self, blocks: Blocks) -> Range<usize> {
        if self.start >= self.end {
            return 0..0;
        }
        let first = |row: usize| row.div_ceil(blocks.rows);
        first(self.start)..first(self.end).min(blocks.count())
    }

    /// [`super::tree_reduce`] over `blocks` across the group: the same bits on every member.
    pub(crate) fn tree_reduce<T, L, C>(&self, blocks: Blocks, par: Par, leaf: &L, combine: &C) -> T
    where
        T: Send + Partial,
        L: Fn(usize) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
    {
        let parts = owned_nodes(blocks.count(), self.own_blocks(blocks))
            .into_iter()
            .map(|(r, _)| {
                let t = super::reduce_range(r.start, r.end, par, leaf, combine);
                (r, t)
            })
            .collect();
        self.finish(blocks.count(), parts, combine)
    }

    /// [`super::tree_reduce_rows`] across the group: `out` holds this member's rows
    /// ([`Shard::rows`], `k` values each), which its leaves write; the reduced value has the
    /// same bits on every member.
    pub(crate) fn tree_reduce_rows<T, O, L, C>(
        &self,
        blocks: Blocks,
        k: usize,
        par: Par,
        out: &mut [O],
        leaf: &L,
        combine: &C,
    ) -> T
    where
        T: Send + Partial,
        O: Send,
        L: Fn(usize, &mut [O]) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
    {
        assert_eq!(
            out.len(),
            (self.end - self.start) * k,
            "tree_reduce_rows: output length"
        );
        let parts = owned_nodes(blocks.count(), self.own_blocks(blocks))
            .into_iter()
            .map(|(r, _)| {
                let rows =
                    (blocks.range(r.start).start - self.start) * k..(blocks.range(r.end - 1).end - self.start) * k;
                let t = super::reduce_rows(blocks, k, r.start, r.end, par, &mut out[rows], leaf, combine);
                (r, t)
            })
            .collect();
        self.finish(blocks.count(), parts, combine)
    }

    /// The maximal subtrees of the global tree over `blocks` inside this member's blocks, with
    /// their depths (for reductions that treat levels differently, like the Hessian chunks).
    pub(crate) fn owned_nodes(&self, blocks: Blocks) -> Vec<(Range<usize>, usize)> {
        owned_nodes(blocks.count(), self.own_blocks(blocks))
    }

    /// Exchanges this member's subtree results and completes the tree over `0..nblocks` with
    /// `combine`: the same value on every member.
    pub(crate) fn finish<T, C>(&self, nblocks: usize, parts: Vec<(Range<usize>, T)>, combine: &C) -> T
    where
        T: Partial,
        C: Fn(T, T) -> T,
    {
        let mut mine = Vec::new();
        for (r, t) in &parts {
            mine.push(r.start as f64);
            mine.push(r.end as f64);
            t.put(&mut mine);
        }
        // Each member's message is its node count, then the nodes.
        let mut msg = vec![parts.len() as f64];
        msg.extend_from_slice(&mine);
        drop(parts);
        let all = self.comm.all_gather(&msg);
        let mut src = &all[..];
        let mut got: HashMap<(usize, usize), T> = HashMap::new();
        for _ in 0..self.comm.size() {
            let count = take_one(&mut src) as usize;
            for _ in 0..count {
                let lo = take_one(&mut src) as usize;
                let hi = take_one(&mut src) as usize;
                got.insert((lo, hi), T::take(&mut src));
            }
        }
        complete(0, nblocks, &mut got, combine)
    }
}

/// The maximal nodes `(blocks, depth)` of the midpoint tree over `0..nblocks` that lie inside
/// `own`, in order.
fn owned_nodes(nblocks: usize, own: Range<usize>) -> Vec<(Range<usize>, usize)> {
    fn walk(lo: usize, hi: usize, depth: usize, own: &Range<usize>, out: &mut Vec<(Range<usize>, usize)>) {
        if hi <= own.start || lo >= own.end {
            return;
        }
        if own.start <= lo && hi <= own.end {
            out.push((lo..hi, depth));
            return;
        }
        let mid = lo + (hi - lo) / 2;
        walk(lo, mid, depth + 1, own, out);
        walk(mid, hi, depth + 1, own, out);
    }
    let mut out = Vec::new();
    if !own.is_empty() {
        walk(0, nblocks, 0, &own, &mut out);
    }
    out
}

/// The node `lo..hi` of the midpoint tree from the exchanged subtree results.
fn complete<T, C: Fn(T, T) -> T>(lo: usize, hi: usize, got: &mut HashMap<(usize, usize), T>, combine: &C) -> T {
    if let Some(t) = got.remove(&(lo, hi)) {
        return t;
    }
    assert!(hi - lo > 1, "block {lo} was reduced by no member of the group");
    let mid = lo + (hi - lo) / 2;
    let a = complete(lo, mid, got, combine);
    let b = complete(mid, hi, got, combine);
    combine(a, b)
}

/// A [`Collective`] of threads in one process (for tests and examples of the distributed
/// passes without MPI): [`ThreadGroup::run`] calls `f` on `size` threads, each with its member.
#[derive(Debug)]
pub struct ThreadGroup {
    rank: usize,
    shared: std::sync::Arc<GroupState>,
}

#[derive(Debug)]
struct GroupState {
    size: usize,
    slots: std::sync::Mutex<Vec<Vec<f64>>>,
    bytes: std::sync::Mutex<Vec<u8>>,
    barrier: std::sync::Barrier,
}

impl ThreadGroup {
    /// Runs `f(member)` on `size` scoped threads (each a member of one group) and returns the
    /// results in rank order.
    pub fn run<R: Send>(size: usize, f: impl Fn(&ThreadGroup) -> R + Sync) -> Vec<R> {
        let size = size.max(1);
        let shared = std::sync::Arc::new(GroupState {
            size,
            slots: std::sync::Mutex::new(vec![Vec::new(); size]),
            bytes: std::sync::Mutex::new(Vec::new()),
            barrier: std::sync::Barrier::new(size),
        });
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let member = ThreadGroup {
                        rank,
                        shared: shared.clone(),
                    };
                    let f = &f;
                    s.spawn(move || f(&member))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a group member panicked"))
                .collect()
        })
    }
}

impl Collective for ThreadGroup {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn all_gather(&self, mine: &[f64]) -> Vec<f64> {
        let st = &self.shared;
        st.slots.lock().expect("poisoned")[self.rank] = mine.to_vec();
        st.barrier.wait();
        let all = st.slots.lock().expect("poisoned").concat();
        st.barrier.wait();
        all
    }
    fn broadcast(&self, buf: &mut [u8]) {
        let st = &self.shared;
        if self.rank == 0 {
            *st.bytes.lock().expect("poisoned") = buf.to_vec();
        }
        st.barrier.wait();
        buf.copy_from_slice(&st.bytes.lock().expect("poisoned"));
        st.barrier.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_nodes_tile_the_range() {
        for nblocks in [1usize, 2, 7, 16, 33, 100] {
            for a in 0..nblocks {
                for b in a + 1..=nblocks {
                    let nodes = owned_nodes(nblocks, a..b);
                    let mut at = a;
                    for (r, _) in &nodes {
                        assert_eq!(r.start, at);
                        at = r.end;
                    }
                    assert_eq!(at, b);
                    assert!(nodes.len() <= 2 * (usize::BITS - nblocks.leading_zeros()) as usize);
                }
            }
        }
    }

    #[test]
    fn shards_partition_the_rows_on_unit_boundaries() {
        for (n, d) in [
            (1usize, 3usize),
            (100, 5),
            (100_000, 10),
            (1_000_000, 100),
            (5000, 3000),
        ] {
            for p in 1..=20 {
                let rows: Vec<Range<usize>> = ThreadGroup::run(p, |g| Shard::new(g, n, d).rows());
                let mut at = 0;
                for r in rows.iter().filter(|r| !r.is_empty()) {
                    assert_eq!(r.start, at, "n = {n}, d = {d}, p = {p}");
                    at = r.end;
                }
                assert_eq!(at, n);
            }
        }
    }

    #[test]
    fn distributed_tree_reduce_is_the_single_process_bits() {
        let (n, d) = (50_000usize, 64usize);
        let v: Vec<f64> = (0..n)
            .map(|i| 1.0 / (1.0 + i as f64) * if i % 3 == 0 { 1e8 } else { 1.0 })
            .collect();
        let blocks = stream_blocks(n, d);
        assert!(blocks.count() > 16);
        let leaf = |b: usize| (v[blocks.range(b)].iter().sum::<f64>(), vec![b as f64, 1.0]);
        let comb = |(a, mut x): (f64, Vec<f64>), (b, y): (f64, Vec<f64>)| {
            x.iter_mut().zip(&y).for_each(|(p, q)| *p += q);
            (a + b, x)
        };
        let want = super::super::tree_reduce(blocks.count(), Par::Seq, &leaf, &comb);
        for p in 1..=5 {
            let got = ThreadGroup::run(p, |g| Shard::new(g, n, d).tree_reduce(blocks, Par::Seq, &leaf, &comb));
            for (s, x) in got {
                assert_eq!(s.to_bits(), want.0.to_bits(), "p = {p}");
                assert_eq!(x, want.1);
            }
        }
    }
}
