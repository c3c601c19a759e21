//! The feature validation of [`PairwiseView::new`](super::PairwiseView::new) taken block by
//! block inside the first pass of a fit, so that a fit of data no one has validated yet reads
//! `X` once fewer ([`crate::estimator::fit_features`]).
//!
//! The validation finds the first row with a non-finite feature and the magnitude summary
//! ([`Magnitude`]): a minimum, integer sums and a maximum, which are exact in any order. A
//! [`FeatureScan`] keeps them in atomics and a flag per block of the passes' grid
//! ([`crate::par::stream_blocks`]); the first pass that reads a block through the kernels scans
//! it too, while its rows are in cache. [`FeatureScan::finish`] scans the blocks no pass read
//! and gives the verdict: the same first bad row, the same summary and so the same error or
//! the same [`Magnitude`] as the validation of the whole matrix at construction.

use super::{bad_row_error, scan_range, Features, Magnitude};
use crate::error::Result;
use crate::par::Blocks;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

/// The validation state of an `n × d` feature matrix, scanned one block at a time.
pub(crate) struct FeatureScan {
    d: usize,
    /// Whether the fit can use the features as they are (the caller's rule: no normalisation).
    accept: fn(&Magnitude) -> bool,
    blocks: Blocks,
    scanned: Vec<AtomicBool>,
    /// Blocks not yet scanned.
    left: AtomicUsize,
    /// Blocks scanned by [`FeatureScan::finish`] rather than by a pass (a test probe).
    standalone: AtomicUsize,
    /// The first row with a non-finite feature (`usize::MAX`: none yet).
    bad_row: AtomicUsize,
    exp_sum: AtomicI64,
    rows: AtomicUsize,
    max_abs_bits: AtomicU64,
}

impl FeatureScan {
    /// A scan of `n × d` features over the passes' block grid; `accept` says whether finite
    /// features of a given summary can be fitted as they are ([`FeatureScan::complete_verdict`]).
    pub(crate) fn new(n: usize, d: usize, accept: fn(&Magnitude) -> bool) -> Self {
        let blocks = crate::par::stream_blocks(n, d);
        FeatureScan {
            d,
            accept,
            blocks,
            scanned: (0..blocks.count()).map(|_| AtomicBool::new(false)).collect(),
            left: AtomicUsize::new(blocks.count()),
            standalone: AtomicUsize::new(0),
            bad_row: AtomicUsize::new(usize::MAX),
            exp_sum: AtomicI64::new(0),
            rows: AtomicUsize::new(0),
            max_abs_bits: AtomicU64::new(0),
        }
    }

    /// Scans rows `r` of `x` if they are a block of the grid not yet scanned (a pass calls this
    /// after reading the rows, which are then in cache). Other ranges are left to
    /// [`FeatureScan::finish`].
    #[inline]
    pub(crate) fn visit(&self, x: Features<'_>, r: Range<usize>) {
        let rows = self.blocks.rows;
        if r.is_empty() || !r.start.is_multiple_of(rows) {
            return;
        }
        let b = r.start / rows;
        if b >= self.scanned.len() || self.blocks.range(b) != r {
            return;
        }
        if self.scanned[b].load(Ordering::Relaxed) || self.scanned[b].swap(true, Ordering::AcqRel) {
            return;
        }
        self.scan_block(x, b);
    }

    fn scan_block(&self, x: Features<'_>, b: usize) {
        let r = self.blocks.range(b);
        let (bad, m) = match x {
            Features::F64(v) => scan_range(v, self.d, r.clone()),
            Features::F32(v) => scan_range(v, self.d, r.clone()),
        };
        if bad != usize::MAX {
            self.bad_row.fetch_min(bad, Ordering::AcqRel);
        }
        self.exp_sum.fetch_add(m.exp_sum, Ordering::AcqRel);
        self.rows.fetch_add(m.rows, Ordering::AcqRel);
        self.max_abs_bits.fetch_max(m.max_abs.to_bits(), Ordering::AcqRel);
        self.left.fetch_sub(1, Ordering::AcqRel);
    }

    /// Once every block is scanned: whether the features are finite and `accept`ed as they
    /// are. `None` while blocks are left.
    pub(crate) fn complete_verdict(&self) -> Option<bool> {
        if self.left.load(Ordering::Acquire) != 0 {
            return None;
        }
        Some(self.bad_row.load(Ordering::Acquire) == usize::MAX && (self.accept)(&self.summary()))
    }

    fn summary(&self) -> Magnitude {
        Magnitude {
            exp_sum: self.exp_sum.load(Ordering::Acquire),
            rows: self.rows.load(Ordering::Acquire),
            max_abs: f64::from_bits(self.max_abs_bits.load(Ordering::Acquire)),
        }
    }

    /// Scans the blocks no pass has read (in parallel on the current pool) and returns the
    /// verdict: the error of the first non-finite feature, else the magnitude summary — the
    /// result of the validation at construction. `x` must be the features the passes read.
    pub(crate) fn finish(&self, x: Features<'_>) -> Result<Magnitude> {
        if self.left.load(Ordering::Acquire) != 0 {
            (0..self.scanned.len()).into_par_iter().for_each(|b| {
                if !self.scanned[b].swap(true, Ordering::AcqRel) {
                    self.standalone.fetch_add(1, Ordering::Relaxed);
                    self.scan_block(x, b);
                }
            });
        }
        let bad = self.bad_row.load(Ordering::Acquire);
        if bad != usize::MAX {
            return Err(match x {
                Features::F64(v) => bad_row_error(v, self.d, bad),
                Features::F32(v) => bad_row_error(v, self.d, bad),
            });
        }
        Ok(self.summary())
    }

    /// Blocks that [`FeatureScan::finish`] had to scan itself (0 when the fit's passes read
    /// them all).
    #[cfg(test)]
    pub(crate) fn standalone_blocks(&self) -> usize {
        self.standalone.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for FeatureScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeatureScan")
            .field("blocks_left", &self.left.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
