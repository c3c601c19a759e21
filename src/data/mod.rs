//! Borrowed, validated views over caller-owned buffers.
//!
//! A [`PairwiseView`] holds the pairwise feature differences `x_i = φ(s_i, a_i¹) − φ(s_i, a_i⁰)`
//! as a row-major `n × d` slice, binary labels `y_i ∈ {0, 1}` (`1` = `a¹` preferred) and optional
//! non-negative sample weights with *frequency* semantics: weight `k` is the same as the row
//! repeated `k` times (Chowdhury, Zhou & Natarajan (2024), Sec. 2, eq. 1). Nothing is copied. All
//! validation happens once, at construction, with errors that name the row and column.
//! ([`crate::estimator::fit_features`] instead validates the features inside the first pass of
//! a fit, with the same outcome and one read of them fewer.)
//!
//! A [`UserIndex`] groups rows into users (contiguous blocks, ragged counts allowed) for
//! user-level label DP.

pub(crate) mod group;
pub(crate) mod multiclass;
#[cfg(feature = "npy")]
pub mod npy;
mod users;

pub use users::UserIndex;
mod bound;
pub(crate) mod scan;
pub(crate) mod trajectory;

pub use bound::FeatureBound;

pub use group::{GroupData, GroupFeatures, GroupLabels, GroupView};
pub use multiclass::MulticlassView;
pub use trajectory::{trajectory_pairs, TrajectoryPairs};

use crate::error::{DataErrorKind, Error, Location, Result};
use crate::par::{Collective, Cut, Shard};
use rayon::prelude::*;

/// Row-major feature storage of a view: `f64`, or `f32` read as is and widened to `f64` in
/// registers by the kernels (half the memory traffic, no `f64` copy; every sum and the answer
/// stay in `f64`).
///
/// A fit on `f32` features gives the same bits as a fit on the same values widened to `f64`
/// (the widening is exact and the kernels apply the same arithmetic in the same order); the
/// answer differs from a fit on the original `f64` data only through the rounding of the data
/// to `f32` (relative `2⁻²⁴ ≈ 6e-8` per value), amplified by the problem's conditioning.
#[derive(Debug, Clone, Copy)]
pub enum Features<'a> {
    /// Double precision.
    F64(&'a [f64]),
    /// Single precision, widened to `f64` in registers as the kernels load it, accumulated in
    /// `f64`.
    F32(&'a [f32]),
}

impl<'a> Features<'a> {
    /// Number of values.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Features::F64(x) => x.len(),
            Features::F32(x) => x.len(),
        }
    }
    /// Whether there are no values.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes per value (8 or 4).
    #[inline]
    pub(crate) fn value_bytes(&self) -> usize {
        match self {
            Features::F64(_) => 8,
            Features::F32(_) => 4,
        }
    }
    /// Values `start..end` (a contiguous range of rows).
    #[inline]
    pub fn slice(&self, start: usize, end: usize) -> Features<'a> {
        match self {
            Features::F64(x) => Features::F64(&x[start..end]),
            Features::F32(x) => Features::F32(&x[start..end]),
        }
    }
    /// Values `start..start + out.len()` widened to `f64` into `out`.
    #[inline]
    pub(crate) fn copy_into(&self, start: usize, out: &mut [f64]) {
        match self {
            Features::F64(x) => {
                let len = out.len();
                out.copy_from_slice(&x[start..start + len]);
            }
            Features::F32(x) => {
                let len = out.len();
                for (o, &v) in out.iter_mut().zip(&x[start..start + len]) {
                    *o = f64::from(v);
                }
            }
        }
    }
    /// Row `i` (of `d` values) as `f64`: borrowed for `f64` storage, widened into `buf` (length
    /// `d`) for `f32`.
    #[inline]
    pub fn row<'s>(&'s self, i: usize, d: usize, buf: &'s mut [f64]) -> &'s [f64] {
        match self {
            Features::F64(x) => &x[i * d..(i + 1) * d],
            Features::F32(_) => {
                self.copy_into(i * d, &mut buf[..d]);
                &buf[..d]
            }
        }
    }
    /// Value `i` as `f64`.
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        match self {
            Features::F64(x) => x[i],
            Features::F32(x) => f64::from(x[i]),
        }
    }
}

/// Borrowed pairwise preference data: features `x` (`n × d`, row-major, `f64` or `f32`), labels
/// `y ∈ {0,1}`, optional weights. See the module docs.
#[derive(Debug, Clone, Copy)]
pub struct PairwiseView<'a> {
    x: Features<'a>,
    y: &'a [u8],
    weights: Option<&'a [f64]>,
    n: usize,
    d: usize,
    total_weight: f64,
    magnitude: Magnitude,
    horizon: usize,
    shard: Option<Shard<'a>>,
    /// Features not validated yet: the fit's first pass scans them ([`scan::FeatureScan`]),
    /// and `magnitude` is a placeholder until then. Only [`crate::estimator::fit_features`]
    /// makes such a view, and nothing else sees it.
    scan: Option<&'a scan::FeatureScan>,
    /// The row of the matrix that `x`, `y` and `weights` start at: 0, or the first of the
    /// member's rows when they hold only those ([`PairwiseView::new_shard`]).
    data_first: usize,
}

impl<'a> PairwiseView<'a> {
    /// Validates and wraps the buffers. `x.len()` must be `n·d` with `n, d ≥ 1`; features must
    /// be finite; labels must be 0 or 1; weights (if any) finite, non-negative, not all zero.
    pub fn new(x: &'a [f64], n: usize, d: usize, y: &'a [u8], weights: Option<&'a [f64]>) -> Result<Self> {
        check_shape(x.len(), n, d)?;
        if y.len() != n {
            return Err(Error::Shape(format!("y has {} labels but x has {n} rows", y.len())));
        }
        let magnitude = check_finite_rows(x, d)?;
        Self::finish(Features::F64(x), n, d, y, weights, magnitude)
    }

    /// As [`PairwiseView::new`] with single-precision features (see [`Features`]): the kernels
    /// read half the bytes and accumulate in `f64`.
    pub fn new_f32(x: &'a [f32], n: usize, d: usize, y: &'a [u8], weights: Option<&'a [f64]>) -> Result<Self> {
        check_shape(x.len(), n, d)?;
        if y.len() != n {
            return Err(Error::Shape(format!("y has {} labels but x has {n} rows", y.len())));
        }
        let magnitude = check_finite_rows(x, d)?;
        Self::finish(Features::F32(x), n, d, y, weights, magnitude)
    }

    fn finish(
        x: Features<'a>,
        n: usize,
        d: usize,
        y: &'a [u8],
        weights: Option<&'a [f64]>,
        magnitude: Magnitude,
    ) -> Result<Self> {
        check_labels(y, 2)?;
        let total_weight = match weights {
            None => n as f64,
            Some(w) => check_weights(w, n)?,
        };
        Ok(PairwiseView {
            x,
            y,
            weights,
            n,
            d,
            total_weight,
            magnitude,
            horizon: 1,
            shard: None,
            scan: None,
            data_first: 0,
        })
    }

    /// A view of an `n × d` matrix whose rows are held in parts by the members of `group`
    /// (e.g. MPI ranks that each read a shard file): this member's `x` (its rows, row-major),
    /// labels `y` and weights, the members' parts following each other in rank order. Every
    /// pass of a fit on the view reads only the member's rows and the fits have the bits of the
    /// single-process fit on the whole matrix. A collective call.
    ///
    /// Each part but the last must hold a multiple of the passes' block rows
    /// (`par::stream_blocks(n, d).rows`, `max(⌊131072/d⌋, 64)` rows), so that no block is split
    /// between members.
    ///
    /// # Errors
    /// As [`PairwiseView::new`] (the same error on every member, naming the row of the whole
    /// matrix); [`Error::Shape`] for parts off the block boundaries; weights are not supported
    /// yet ([`Error::InvalidParam`]).
    pub fn new_shard(
        x: Features<'a>,
        d: usize,
        y: &'a [u8],
        weights: Option<&'a [f64]>,
        group: &'a dyn Collective,
    ) -> Result<Self> {
        if d == 0 {
            return Err(Error::Shape("no features (d = 0)".into()));
        }
        let held = x.len() / d;
        // Every member learns every member's outcome of the local checks and its row count.
        let local = if !x.len().is_multiple_of(d) {
            Err(Error::Shape(format!(
                "x has {} values, not a multiple of d = {d}",
                x.len()
            )))
        } else if y.len() != held {
            Err(Error::Shape(format!("y has {} labels but x has {held} rows", y.len())))
        } else if weights.is_some() {
            Err(Error::param(
                "weights",
                "weights are not supported yet on rows held in parts",
            ))
        } else {
            Ok(())
        };
        let counts = group.all_gather(&[held as f64, f64::from(u8::from(local.is_err()))]);
        local?;
        if let Some(m) = counts.chunks_exact(2).position(|c| c[1] != 0.0) {
            return Err(Error::Shape(format!(
                "member {m} of the group holds rows of another shape"
            )));
        }
        let counts: Vec<usize> = counts.chunks_exact(2).map(|c| c[0] as usize).collect();
        let n: usize = counts.iter().sum();
        let rank = group.rank();
        let first: usize = counts[..rank].iter().sum();
        let starts: Vec<usize> = counts
            .iter()
            .scan(0, |a, &c| {
                let s = *a;
                *a += c;
                Some(s)
            })
            .collect();
        check_shape(n * d, n, d)?;
        let block = crate::par::stream_blocks(n, d).rows;
        if let Some(m) = (0..counts.len()).find(|&m| counts[m] > 0 && !starts[m].is_multiple_of(block)) {
            return Err(Error::Shape(format!(
                "member {m}'s rows start at row {} of {n}, not a multiple of the passes' {block} rows per block (every part but the last must hold a multiple of {block} rows)",
                starts[m]
            )));
        }
        let shard = Shard::from_parts(group, n, d, &starts, &counts);
        // Features, then labels: this member's first bad row (as a row of the whole matrix),
        // exchanged with its column and kind, so that every member builds the same error.
        let (bad, mag) = match x {
            Features::F64(v) => scan_rows(v, d),
            Features::F32(v) => scan_rows(v, d),
        };
        let bad_msg = if bad == usize::MAX {
            [-1.0, 0.0, 0.0]
        } else {
            let e = match x {
                Features::F64(v) => bad_row_error(v, d, bad),
                Features::F32(v) => bad_row_error(v, d, bad),
            };
            let (col, nan) = match e {
                Error::Data { at, kind, .. } => (at.col.unwrap_or(0), matches!(kind, DataErrorKind::NaN)),
                _ => (0, true),
            };
            [(first + bad) as f64, col as f64, f64::from(u8::from(nan))]
        };
        let label = y.iter().position(|&l| l >= 2);
        let label_msg = label.map_or([-1.0, 0.0], |i| [(first + i) as f64, f64::from(y[i])]);
        let mine = [
            &bad_msg[..],
            &label_msg[..],
            &[mag.exp_sum as f64, mag.rows as f64, mag.max_abs][..],
        ]
        .concat();
        let all = group.all_gather(&mine);
        let mut total = Magnitude::default();
        let (mut first_bad, mut first_label): (Option<&[f64]>, Option<&[f64]>) = (None, None);
        for m in all.chunks_exact(8) {
            if m[0] >= 0.0 && first_bad.is_none_or(|b| m[0] < b[0]) {
                first_bad = Some(&m[0..3]);
            }
            if m[3] >= 0.0 && first_label.is_none_or(|b| m[3] < b[0]) {
                first_label = Some(&m[3..5]);
            }
            total.exp_sum += m[5] as i64;
            total.rows += m[6] as usize;
            total.max_abs = total.max_abs.max(m[7]);
        }
        if let Some(b) = first_bad {
            return Err(Error::Data {
                input: "x",
                at: Location {
                    row: b[0] as usize,
                    col: Some(b[1] as usize),
                },
                kind: if b[2] != 0.0 {
                    DataErrorKind::NaN
                } else {
                    DataErrorKind::Infinite
                },
            });
        }
        if let Some(l) = first_label {
            return Err(Error::Data {
                input: "y",
                at: Location {
                    row: l[0] as usize,
                    col: None,
                },
                kind: DataErrorKind::LabelOutOfRange {
                    label: l[1] as i128,
                    bound: 2,
                },
            });
        }
        Ok(PairwiseView {
            x,
            y,
            weights: None,
            n,
            d,
            total_weight: n as f64,
            magnitude: total,
            horizon: 1,
            shard: Some(shard),
            scan: None,
            data_first: first,
        })
    }

    /// Whether the view holds every row of the matrix (false for [`PairwiseView::new_shard`]
    /// with more than one member holding rows).
    #[inline]
    pub fn holds_all_rows(&self) -> bool {
        self.x.len() == self.n * self.d
    }

    /// An error for `what`, which reads every row, on a view holding only a member's rows.
    pub(crate) fn require_all_rows(&self, what: &str) -> Result<()> {
        if self.holds_all_rows() {
            return Ok(());
        }
        Err(Error::param(
            "data",
            format!("{what} reads every row: it is not supported on rows held in parts (PairwiseView::new_shard); use an exact solver (Newton, Newton-CG, L-BFGS), or a view of the whole matrix"),
        ))
    }

    /// The row of the matrix that [`PairwiseView::features`], [`PairwiseView::y`] and
    /// [`PairwiseView::weights`] start at (0 unless the view holds a member's rows only).
    #[inline]
    pub fn data_first(&self) -> usize {
        self.data_first
    }

    /// A view whose features are validated by the first pass of the fit through `scan`
    /// rather than here: the shapes, labels and weights are checked as by
    /// [`PairwiseView::new`], and when one of those fails the features are scanned first, so
    /// that the error is the one `new` gives. The fit must call [`scan::FeatureScan::finish`]
    /// before it trusts anything computed on the view.
    pub(crate) fn deferred(
        x: Features<'a>,
        n: usize,
        d: usize,
        y: &'a [u8],
        weights: Option<&'a [f64]>,
        scan: &'a scan::FeatureScan,
    ) -> Result<Self> {
        check_shape(x.len(), n, d)?;
        if y.len() != n {
            return Err(Error::Shape(format!("y has {} labels but x has {n} rows", y.len())));
        }
        match Self::finish(x, n, d, y, weights, Magnitude::default()) {
            Ok(view) => Ok(PairwiseView {
                scan: Some(scan),
                ..view
            }),
            Err(e) => {
                scan.finish(x)?;
                Err(e)
            }
        }
    }

    /// The scan of features not validated yet, if any ([`PairwiseView::deferred`]).
    #[inline]
    pub(crate) fn scan(&self) -> Option<&'a scan::FeatureScan> {
        self.scan
    }

    /// The same view with its features validated: `magnitude` from the finished scan.
    pub(crate) fn validated(self, magnitude: Magnitude) -> Self {
        PairwiseView {
            magnitude,
            scan: None,
            ..self
        }
    }

    /// [`PairwiseView::new`] / [`PairwiseView::new_f32`] for rows that every member of `group`
    /// holds (e.g. MPI ranks that memory-map the same file), cut as `cut` says
    /// ([`PairwiseView::distributed`], [`PairwiseView::distributed_hessian_free`]). Each member
    /// checks the features of its own rows only and the members combine the outcomes (exactly:
    /// the first bad row and the magnitude summary are a minimum, integer sums and a maximum),
    /// so every member returns the same view, or the same error, as the single-process
    /// constructor; labels and weights (O(n)) are checked whole on every member. A collective
    /// call: every member must make it.
    pub fn new_distributed(
        x: Features<'a>,
        n: usize,
        d: usize,
        y: &'a [u8],
        weights: Option<&'a [f64]>,
        group: &'a dyn Collective,
        cut: Cut,
    ) -> Result<Self> {
        check_shape(x.len(), n, d)?;
        if y.len() != n {
            return Err(Error::Shape(format!("y has {} labels but x has {n} rows", y.len())));
        }
        let shard = Shard::with_cut(group, n, d, cut);
        let own = shard.rows();
        let (bad, mag) = match x {
            Features::F64(v) => scan_rows(&v[own.start * d..own.end * d], d),
            Features::F32(v) => scan_rows(&v[own.start * d..own.end * d], d),
        };
        // Exchange [first bad row or -1, exponent sum, non-zero rows, max |x|]: all exact in f64.
        let bad = if bad == usize::MAX {
            -1.0
        } else {
            (own.start + bad) as f64
        };
        let all = group.all_gather(&[bad, mag.exp_sum as f64, mag.rows as f64, mag.max_abs]);
        let mut first_bad = usize::MAX;
        let mut total = Magnitude::default();
        for m in all.chunks_exact(4) {
            if m[0] >= 0.0 {
                first_bad = first_bad.min(m[0] as usize);
            }
            total.exp_sum += m[1] as i64;
            total.rows += m[2] as usize;
            total.max_abs = total.max_abs.max(m[3]);
        }
        if first_bad != usize::MAX {
            return Err(match x {
                Features::F64(v) => bad_row_error(v, d, first_bad),
                Features::F32(v) => bad_row_error(v, d, first_bad),
            });
        }
        let view = Self::finish(x, n, d, y, weights, total)?;
        Ok(PairwiseView {
            shard: Some(shard),
            ..view
        })
    }

    /// The same rows, reduced by a group of processes that each hold all of them (e.g. MPI
    /// ranks that memory-map the same file): every pass over `X` of the fits on this view runs
    /// on this process's part ([`Shard`]) and exchanges only the partial sums of whole subtrees
    /// of the block tree, so every process gets the bits of the single-process fit. Every
    /// member must make the same calls on the same data (they are collective operations).
    pub fn distributed(self, comm: &'a dyn Collective) -> Self {
        PairwiseView {
            shard: Some(Shard::new(comm, self.n, self.d)),
            ..self
        }
    }
    /// As [`PairwiseView::distributed`], cut for the Hessian-free solvers (L-BFGS, Newton-CG):
    /// every member owns rows whatever `d` ([`Shard::hessian_free`]), where the whole-chunk cut
    /// of [`PairwiseView::distributed`] gives rows to at most `2^chunk_depth(d)` members (2 at
    /// `d = 4096`). Dense Newton (and what runs on it: objective perturbation, the private MLE)
    /// refuses such a view unless its cut happens to keep whole chunks.
    pub fn distributed_hessian_free(self, comm: &'a dyn Collective) -> Self {
        PairwiseView {
            shard: Some(Shard::hessian_free(comm, self.n, self.d)),
            ..self
        }
    }
    /// The same view on other features of the same shape (the rows it holds; e.g. rescaled by
    /// a power of two, which keeps them finite), not validated again.
    pub(crate) fn with_features<'b>(&self, x: Features<'b>) -> PairwiseView<'b>
    where
        'a: 'b,
    {
        assert_eq!(x.len(), self.x.len(), "with_features: another shape");
        PairwiseView { x, ..*self }
    }
    /// This process's part of the rows, when the view is [`PairwiseView::distributed`].
    #[inline]
    pub fn shard(&self) -> Option<Shard<'a>> {
        self.shard
    }

    /// Number of samples (rows).
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of features (columns).
    #[inline]
    pub fn d(&self) -> usize {
        self.d
    }
    /// Row-major features, `n·d` values, in their stored precision.
    #[inline]
    pub fn features(&self) -> Features<'a> {
        self.x
    }
    /// Row-major `f64` features (`None` for `f32` storage: use [`PairwiseView::row_into`]).
    #[inline]
    pub fn x(&self) -> Option<&'a [f64]> {
        match self.x {
            Features::F64(x) => Some(x),
            Features::F32(_) => None,
        }
    }
    /// Row `i` of the features, widened to `f64` into `out` (length `d`).
    #[inline]
    pub fn row_into(&self, i: usize, out: &mut [f64]) {
        self.x.copy_into((i - self.data_first) * self.d, out)
    }
    /// Labels.
    #[inline]
    pub fn y(&self) -> &'a [u8] {
        self.y
    }
    /// Sample weights, if any.
    #[inline]
    pub fn weights(&self) -> Option<&'a [f64]> {
        self.weights
    }
    /// The size of the features (from the validation pass).
    #[inline]
    pub fn magnitude(&self) -> Magnitude {
        self.magnitude
    }
    /// The horizon `H` of the compared items: 1 for pairwise comparisons, `H` for the summed
    /// per-step differences of trajectory comparisons of `H` steps
    /// ([`TrajectoryPairs::view`]). Central-DP estimators require a [`FeatureBound`] with this
    /// horizon.
    #[inline]
    pub fn horizon(&self) -> usize {
        self.horizon
    }
    /// The same view marked as trajectory comparisons of `horizon` steps.
    pub(crate) fn with_horizon(self, horizon: usize) -> Self {
        PairwiseView { horizon, ..self }
    }
    /// `Σ w_i` (equals `n` without weights): the effective sample size used by the objective.
    #[inline]
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }
    /// The same features and weights with other labels (e.g. privatised ones), validated.
    pub fn with_labels<'b>(&self, y: &'b [u8]) -> Result<PairwiseView<'b>>
    where
        'a: 'b,
    {
        if y.len() != self.n {
            return Err(Error::Shape(format!(
                "y has {} labels but x has {} rows",
                y.len(),
                self.n
            )));
        }
        check_labels(y, 2)?;
        Ok(PairwiseView { y, ..*self })
    }
    /// `max_i ‖x_i‖₂`, or with `centered`, `max_i ‖P x_i‖₂` where `P = I − 11ᵀ/d` (the bound on
    /// `|x_iᵀθ| / ‖θ‖` over the sum-zero subspace). On a distributed view each member scans
    /// its own rows and the members take the maximum of theirs (exact: the same value
    /// everywhere); a collective call then.
    pub fn max_row_norm(&self, centered: bool) -> f64 {
        let rows = self.shard.map_or(0..self.n, |s| s.rows());
        let mine = self.max_row_norm_of(rows, centered);
        match self.shard {
            None => mine,
            Some(s) => s.collective().all_gather(&[mine]).into_iter().fold(0.0, f64::max),
        }
    }

    fn max_row_norm_of(&self, rows: std::ops::Range<usize>, centered: bool) -> f64 {
        let d = self.d;
        rows.into_par_iter()
            .map_init(
                || vec![0.0; d],
                |buf, i| {
                    self.row_into(i, buf);
                    let ss: f64 = buf.iter().map(|v| v * v).sum();
                    if centered {
                        let m: f64 = buf.iter().sum::<f64>() / d as f64;
                        (ss - d as f64 * m * m).max(0.0).sqrt()
                    } else {
                        ss.sqrt()
                    }
                },
            )
            .reduce(|| 0.0, f64::max)
    }
}

/// Owned pairwise data (from a file or a simulator); [`PairwiseData::view`] validates it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairwiseData {
    /// Row-major `n × d` features.
    pub x: Vec<f64>,
    /// Labels in {0, 1}.
    pub y: Vec<u8>,
    /// Optional sample weights.
    pub weights: Option<Vec<f64>>,
    /// Rows.
    pub n: usize,
    /// Columns.
    pub d: usize,
}

impl PairwiseData {
    /// A validated view of this data.
    pub fn view(&self) -> Result<PairwiseView<'_>> {
        PairwiseView::new(&self.x, self.n, self.d, &self.y, self.weights.as_deref())
    }
}

/// Checks `len == n·d` with `n, d ≥ 1`.
pub(crate) fn check_shape(len: usize, n: usize, d: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::Shape("no samples (n = 0)".into()));
    }
    if d == 0 {
        return Err(Error::Shape("no features (d = 0)".into()));
    }
    match n.checked_mul(d) {
        Some(nd) if nd == len => Ok(()),
        _ => Err(Error::Shape(format!("x has {len} values, expected n·d = {n}·{d}"))),
    }
}

/// Lanes of [`row_max_abs_bits`]: independent accumulators the compiler keeps in vector
/// registers.
const ROW_LANES: usize = 8;

/// The bits of `max_j |r_j|` (a non-negative double, so its bits order as the values do), or
/// `None` when the row holds a NaN or an infinity. Each lane keeps its own running maximum
/// and its own `Σ r_j·0`, which is `0` for finite values and NaN once a lane has met a NaN or
/// ±inf; both are exact in any order, so the lanes change no result, only the speed (the
/// scalar fold over the bits does not vectorise on the baseline x86-64).
#[inline]
fn row_max_abs_bits<T: Copy + Into<f64>>(r: &[T]) -> Option<u64> {
    let mut max = [0.0f64; ROW_LANES];
    let mut probe = [0.0f64; ROW_LANES];
    let mut step = |k: usize, v: f64| {
        let a = v.abs();
        max[k] = if a > max[k] { a } else { max[k] };
        probe[k] += v * 0.0;
    };
    let mut chunks = r.chunks_exact(ROW_LANES);
    for c in &mut chunks {
        for (k, v) in c.iter().enumerate() {
            step(k, (*v).into());
        }
    }
    for (k, v) in chunks.remainder().iter().enumerate() {
        step(k, (*v).into());
    }
    if probe.iter().any(|p| p.is_nan()) {
        return None;
    }
    Some(max.iter().fold(0.0f64, |m, &a| if a > m { a } else { m }).to_bits())
}

/// First non-finite feature, reported with its row and column.
pub(crate) fn check_finite_rows<T: RowScan>(x: &[T], d: usize) -> Result<Magnitude> {
    let (bad_row, mag) = scan_rows(x, d);
    if bad_row != usize::MAX {
        return Err(bad_row_error(x, d, bad_row));
    }
    Ok(mag)
}

/// The first row of `x` with a non-finite feature (`usize::MAX` if none) and the magnitude
/// summary of the rows: one pass, exact in any order.
fn scan_rows<T: RowScan>(x: &[T], d: usize) -> (usize, Magnitude) {
    // Tasks of SCAN_TASK_ROWS rows, combined exactly (integer sums, max, min): the result does
    // not depend on the thread count.
    const SCAN_TASK_ROWS: usize = 1024;
    let d = d.max(1);
    let n = x.len() / d;
    let combine = |(b1, m1): (usize, Magnitude), (b2, m2): (usize, Magnitude)| (b1.min(b2), m1.plus(m2));
    (0..n.div_ceil(SCAN_TASK_ROWS))
        .into_par_iter()
        .map(|t| scan_range(x, d, t * SCAN_TASK_ROWS..((t + 1) * SCAN_TASK_ROWS).min(n)))
        .reduce(|| (usize::MAX, Magnitude::default()), combine)
}

/// The first row in `r` with a non-finite feature (`usize::MAX` if none; the rows after it
/// are not summarised) and the magnitude summary of rows `r` of `x`.
pub(crate) fn scan_range<T: RowScan>(x: &[T], d: usize, r: std::ops::Range<usize>) -> (usize, Magnitude) {
    let mut m = Magnitude::default();
    let mut bad = usize::MAX;
    T::rows_max_abs_bits(&x[r.start * d..r.end * d], d, |i, bits| match bits {
        Some(bits) => {
            m = m.plus(row_summary(bits));
            true
        }
        None => {
            bad = r.start + i;
            false
        }
    });
    (bad, m)
}

/// The magnitude summary of one finite row whose largest `|x|` has the bits `bits`.
#[inline]
fn row_summary(bits: u64) -> Magnitude {
    let mut m = Magnitude::default();
    if bits > 0 {
        m.max_abs = f64::from_bits(bits);
        m.exp_sum = (bits >> 52) as i64 - 1023;
        m.rows = 1;
    }
    m
}

/// Feature values the validation scans: [`row_max_abs_bits`] of each row, in SIMD for `f64`.
pub(crate) trait RowScan: Copy + Into<f64> + Sync {
    /// Calls `f(i, row_max_abs_bits(row i))` for the rows of `x` (`d` values each) in order,
    /// until `f` returns `false`.
    fn rows_max_abs_bits(x: &[Self], d: usize, f: impl FnMut(usize, Option<u64>) -> bool);
}

impl RowScan for f32 {
    fn rows_max_abs_bits(x: &[f32], d: usize, mut f: impl FnMut(usize, Option<u64>) -> bool) {
        for (i, r) in x.chunks_exact(d).enumerate() {
            if !f(i, row_max_abs_bits(r)) {
                return;
            }
        }
    }
}

impl RowScan for f64 {
    fn rows_max_abs_bits(x: &[f64], d: usize, f: impl FnMut(usize, Option<u64>) -> bool) {
        pulp::Arch::new().dispatch(MaxAbsRows { x, d, f });
    }
}

/// [`row_max_abs_bits`] of each row in SIMD: two vectors of running maxima of `|x|` and two of
/// `Σ x·0` (NaN once a NaN or ±inf is met). Maxima are exact in any order, so the bits are
/// those of the scalar definition.
struct MaxAbsRows<'a, F> {
    x: &'a [f64],
    d: usize,
    f: F,
}

impl<F: FnMut(usize, Option<u64>) -> bool> pulp::WithSimd for MaxAbsRows<'_, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(mut self, simd: S) {
        let zero = simd.splat_f64s(0.0);
        for (i, row) in self.x.chunks_exact(self.d).enumerate() {
            let (h, t) = S::as_simd_f64s(row);
            let (mut m0, mut m1, mut p0, mut p1) = (zero, zero, zero, zero);
            let mut pairs = h.chunks_exact(2);
            for v in &mut pairs {
                m0 = simd.max_f64s(m0, simd.abs_f64s(v[0]));
                m1 = simd.max_f64s(m1, simd.abs_f64s(v[1]));
                p0 = simd.mul_add_e_f64s(v[0], zero, p0);
                p1 = simd.mul_add_e_f64s(v[1], zero, p1);
            }
            for &v in pairs.remainder() {
                m0 = simd.max_f64s(m0, simd.abs_f64s(v));
                p0 = simd.mul_add_e_f64s(v, zero, p0);
            }
            let mut max = simd.reduce_max_f64s(simd.max_f64s(m0, m1));
            let mut probe = simd.reduce_sum_f64s(simd.add_f64s(p0, p1));
            for &v in t {
                let a = v.abs();
                max = if a > max { a } else { max };
                probe += v * 0.0;
            }
            let bits = (!probe.is_nan()).then_some(max.to_bits());
            if !(self.f)(i, bits) {
                return;
            }
        }
    }
}

/// The error for the first non-finite feature of row `row` of `x`.
fn bad_row_error<T: Copy + Into<f64>>(x: &[T], d: usize, row: usize) -> Error {
    let finite = |v: &T| Into::<f64>::into(*v).is_finite();
    let r = &x[row * d..(row + 1) * d];
    let col = r.iter().position(|v| !finite(v)).unwrap_or(0);
    let kind = if Into::<f64>::into(r[col]).is_nan() {
        DataErrorKind::NaN
    } else {
        DataErrorKind::Infinite
    };
    Error::Data {
        input: "x",
        at: Location { row, col: Some(col) },
        kind,
    }
}

/// The size of the features, from the validation pass: the largest `|x_ij|` and the binary
/// exponents of the rows' largest entries (their mean, rounded, is the typical magnitude
/// `2^e` that the pairwise fits normalise away, `crate::estimator::normalize`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Magnitude {
    /// Sum over non-zero rows of `⌊log₂ max_j |x_ij|⌋`.
    exp_sum: i64,
    /// Non-zero rows.
    rows: usize,
    /// `max_ij |x_ij|`.
    max_abs: f64,
}

impl Magnitude {
    /// `e`: the rounded mean binary exponent of the rows' largest entries (0 without non-zero
    /// rows). One huge row moves it by its own exponent over `n`.
    pub(crate) fn exponent(&self) -> i32 {
        if self.rows == 0 {
            0
        } else {
            (self.exp_sum as f64 / self.rows as f64).round() as i32
        }
    }
    /// `max_ij |x_ij|`.
    pub(crate) fn max_abs(&self) -> f64 {
        self.max_abs
    }
    /// The summary of two sets of rows together (exact in any order).
    fn plus(self, o: Magnitude) -> Magnitude {
        Magnitude {
            exp_sum: self.exp_sum + o.exp_sum,
            rows: self.rows + o.rows,
            max_abs: self.max_abs.max(o.max_abs),
        }
    }
}

/// First label `>= bound`, reported with its row.
pub(crate) fn check_labels(y: &[u8], bound: u8) -> Result<()> {
    if let Some(row) = y.iter().position(|&l| l >= bound) {
        return Err(Error::Data {
            input: "y",
            at: Location { row, col: None },
            kind: DataErrorKind::LabelOutOfRange {
                label: i128::from(y[row]),
                bound: bound as u64,
            },
        });
    }
    Ok(())
}

/// Validates weights and returns their sum.
pub(crate) fn check_weights(w: &[f64], n: usize) -> Result<f64> {
    if w.len() != n {
        return Err(Error::Shape(format!(
            "weights has {} values but x has {n} rows",
            w.len()
        )));
    }
    for (row, &v) in w.iter().enumerate() {
        let kind = if !v.is_finite() {
            DataErrorKind::NonFiniteWeight
        } else if v < 0.0 {
            DataErrorKind::NegativeWeight
        } else {
            continue;
        };
        return Err(Error::Data {
            input: "weights",
            at: Location { row, col: None },
            kind,
        });
    }
    let total: f64 = w.iter().sum();
    if !(total > 0.0) {
        return Err(Error::param("weights", "all sample weights are zero"));
    }
    if !total.is_finite() {
        return Err(Error::param("weights", "the sum of the sample weights overflows"));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition `row_max_abs_bits` computes in lanes: the integer maximum of the bits with
    /// the sign cleared, `None` when that maximum has all exponent bits set (NaN or ±inf).
    fn row_max_abs_bits_scalar(r: &[f64]) -> Option<u64> {
        let bits = r.iter().fold(0u64, |m, v| m.max(v.to_bits() & 0x7fff_ffff_ffff_ffff));
        (bits < 0x7ff0_0000_0000_0000).then_some(bits)
    }

    #[test]
    fn row_max_abs_bits_matches_the_scalar_definition() {
        let specials = [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE / 4.0, // subnormal
            5e-324,
            -1.5,
            2.0,
            f64::MAX,
            -f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let simd_bits = |r: &[f64]| {
            let mut out = None;
            f64::rows_max_abs_bits(r, r.len(), |_, b| {
                out = Some(b);
                true
            });
            out.unwrap()
        };
        for len in [0usize, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100] {
            for k in 0..600 {
                // Specials in about 1/5 or 1/50 of the entries, or none (finite long rows).
                let every = [5, 50, u64::MAX][k % 3];
                let r: Vec<f64> = (0..len)
                    .map(|_| {
                        let u = next();
                        if u % every == 0 {
                            specials[(u >> 8) as usize % specials.len()]
                        } else {
                            ((u >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2f64.powi((u % 61) as i32 - 30)
                        }
                    })
                    .collect();
                assert_eq!(row_max_abs_bits(&r), row_max_abs_bits_scalar(&r), "{r:?}");
                if len > 0 {
                    assert_eq!(simd_bits(&r), row_max_abs_bits_scalar(&r), "{r:?}");
                }
                let r32: Vec<f32> = r.iter().map(|&v| v as f32).collect();
                let widened: Vec<f64> = r32.iter().map(|&v| f64::from(v)).collect();
                assert_eq!(row_max_abs_bits(&r32), row_max_abs_bits_scalar(&widened), "{r32:?}");
            }
        }
    }

    #[test]
    fn errors_name_row_and_column() {
        let x = [1.0, 2.0, 3.0, f64::NAN, 5.0, 6.0];
        let e = PairwiseView::new(&x, 3, 2, &[0, 1, 0], None).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    input: "x",
                    at: Location { row: 1, col: Some(1) },
                    kind: DataErrorKind::NaN
                }
            ),
            "{e}"
        );
        let x = [1.0, f64::NEG_INFINITY];
        let e = PairwiseView::new(&x, 1, 2, &[0], None).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    at: Location { row: 0, col: Some(1) },
                    kind: DataErrorKind::Infinite,
                    ..
                }
            ),
            "{e}"
        );
        let x = [1.0; 6];
        let e = PairwiseView::new(&x, 3, 2, &[0, 1, 2], None).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    input: "y",
                    at: Location { row: 2, col: None },
                    kind: DataErrorKind::LabelOutOfRange { label: 2, bound: 2 }
                }
            ),
            "{e}"
        );
        assert!(matches!(
            PairwiseView::new(&x, 3, 2, &[0, 1], None),
            Err(Error::Shape(_))
        ));
        assert!(matches!(
            PairwiseView::new(&x, 2, 2, &[0, 1], None),
            Err(Error::Shape(_))
        ));
        assert!(matches!(PairwiseView::new(&[], 0, 2, &[], None), Err(Error::Shape(_))));
        assert!(matches!(
            PairwiseView::new(&[], 3, 0, &[0, 0, 0], None),
            Err(Error::Shape(_))
        ));
        let e = PairwiseView::new(&x, 3, 2, &[0, 1, 1], Some(&[1.0, -1.0, 1.0])).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    input: "weights",
                    at: Location { row: 1, col: None },
                    kind: DataErrorKind::NegativeWeight
                }
            ),
            "{e}"
        );
        let e = PairwiseView::new(&x, 3, 2, &[0, 1, 1], Some(&[0.0, 0.0, 0.0])).unwrap_err();
        assert!(matches!(e, Error::InvalidParam { name: "weights", .. }), "{e}");
        let e = PairwiseView::new(&x, 3, 2, &[0, 1, 1], Some(&[1.0, f64::NAN, 0.0])).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    kind: DataErrorKind::NonFiniteWeight,
                    ..
                }
            ),
            "{e}"
        );
        assert!(matches!(
            PairwiseView::new(&x, 3, 2, &[0, 1, 1], Some(&[1.0])),
            Err(Error::Shape(_))
        ));
    }

    #[test]
    fn total_weight_and_norms() {
        let x = [3.0, 4.0, 1.0, 1.0];
        let v = PairwiseView::new(&x, 2, 2, &[1, 0], Some(&[2.0, 0.5])).unwrap();
        assert_eq!(v.total_weight(), 2.5);
        assert_eq!(v.max_row_norm(false), 5.0);
        // P(3,4) = (-0.5, 0.5): norm sqrt(0.5)
        assert!((v.max_row_norm(true) - 0.5f64.sqrt()).abs() < 1e-15);
        let v = PairwiseView::new(&x, 2, 2, &[1, 0], None).unwrap();
        assert_eq!(v.total_weight(), 2.0);
    }
}
