//! K-wise (grouped) preference data: each sample shows `K` alternatives and reports the chosen
//! one or a ranking of them (Plackett–Luce data; Chowdhury, Zhou & Natarajan (2024), Sec. 4.4,
//! eq. 11; "Provable protection of human judgements" (anon., 2025), Sec. 4.2).
//!
//! Sample `i` has a `K × d` feature block `Φ_i` whose row `k` is `φ_ik = φ(s_i, a_ik)` — raw
//! features, not differences: the Plackett–Luce probabilities are invariant to adding a common
//! vector to all rows of a block. Two storage layouts, both borrowed and validated once:
//!
//! * **dense** ([`GroupView::new`]): `x` is `n × K × d`, row-major (`φ_ik` at
//!   `x[(i·K + k)·d ..]`);
//! * **item-indexed** ([`GroupView::from_items`]): an item table `items` (`m × d`) and an index
//!   array (`n × K`, `u32`) naming the item of each alternative; rows are read through the index
//!   on the fly, so nothing of size `n·K·d` is ever built.
//!
//! Labels ([`GroupLabels`]) are the chosen alternative (`n` values in `0..K`) or a ranking
//! (`n × K`, best first, each row a permutation of `0..K`). A ranking also serves the top-1
//! losses (its first entry is the choice). Optional sample weights have frequency semantics, as
//! in [`PairwiseView`](super::PairwiseView).
//!
//! **K = 2 is pairwise.** With `K = 2` the Plackett–Luce model is BTL on `x = φ_i1 − φ_i0` with
//! `y = 1` when alternative 1 is chosen; [`GroupView::to_pairwise`] builds that pairwise data, so
//! every pairwise estimator (including the Thurstone/probit MLE) applies to two-alternative
//! groups through one code path.

mod check;

use super::{check_finite_rows, PairwiseData};
use crate::error::{DataErrorKind, Error, Location, Result};
use check::{check_dims, check_group_labels, check_group_weights, group_err};

/// Largest number of alternatives per sample (labels are stored as `u8`).
pub const MAX_K: usize = 256;

/// Feature storage of a [`GroupView`] (see the module docs).
#[derive(Debug, Clone, Copy)]
pub enum GroupFeatures<'a> {
    /// `n × K × d` row-major.
    Dense(&'a [f64]),
    /// An `m × d` item table and an `n × K` index into it.
    Items {
        /// Row-major `m × d` item features.
        items: &'a [f64],
        /// Number of items `m`.
        m: usize,
        /// `n × K` item indices (row-major), each `< m`.
        index: &'a [u32],
    },
}

/// The labels of K-wise data (see the module docs).
#[derive(Debug, Clone, Copy)]
pub enum GroupLabels<'a> {
    /// The chosen alternative of each sample: `n` values in `0..K`.
    Choice(&'a [u8]),
    /// A full ranking of each sample, best first: `n × K` values (row-major), each row a
    /// permutation of `0..K`.
    Ranking(&'a [u8]),
}

/// Borrowed, validated K-wise preference data (module docs).
#[derive(Debug, Clone, Copy)]
pub struct GroupView<'a> {
    features: GroupFeatures<'a>,
    order: &'a [u8],
    width: usize,
    weights: Option<&'a [f64]>,
    n: usize,
    k: usize,
    d: usize,
    total_weight: f64,
}

impl<'a> GroupView<'a> {
    /// Dense layout: `x` holds `n` blocks of `K × d` features, row-major (`φ_ik` at
    /// `x[(i·K + k)·d ..]`). Requires `n ≥ 1`, `2 ≤ K ≤ 256`, `d ≥ 1`, `x.len() = n·K·d`, finite
    /// features, valid labels ([`GroupLabels`]) and valid weights.
    ///
    /// # Errors
    /// [`Error::Shape`] for inconsistent sizes; [`Error::GroupData`] naming the sample, row and
    /// column of the first invalid feature, label or weight.
    pub fn new(
        x: &'a [f64],
        n: usize,
        k: usize,
        d: usize,
        labels: GroupLabels<'a>,
        weights: Option<&'a [f64]>,
    ) -> Result<Self> {
        check_dims(n, k, d)?;
        match n.checked_mul(k).and_then(|nk| nk.checked_mul(d)) {
            Some(len) if len == x.len() => {}
            _ => {
                return Err(Error::Shape(format!(
                    "x has {} values, expected n·K·d = {n}·{k}·{d}",
                    x.len()
                )))
            }
        }
        check_finite_rows(x, d).map_err(|e| match e {
            Error::Data {
                at: Location { row, col },
                kind,
                ..
            } => group_err("x", row / k, Some(row % k), col, kind),
            other => other,
        })?;
        Self::finish(GroupFeatures::Dense(x), n, k, d, labels, weights)
    }

    /// Item-indexed layout: alternative `k` of sample `i` is item `index[i·K + k]` of the
    /// row-major `m × d` table `items` (module docs). Nothing of size `n·K·d` is built.
    ///
    /// # Errors
    /// As [`GroupView::new`]; a non-finite item feature is an [`Error::Data`] on input `items`
    /// (row = item), an index `≥ m` an [`Error::GroupData`] on input `index`.
    #[allow(clippy::too_many_arguments)]
    pub fn from_items(
        items: &'a [f64],
        m: usize,
        d: usize,
        index: &'a [u32],
        n: usize,
        k: usize,
        labels: GroupLabels<'a>,
        weights: Option<&'a [f64]>,
    ) -> Result<Self> {
        check_dims(n, k, d)?;
        if m == 0 {
            return Err(Error::Shape("the item table is empty (m = 0)".into()));
        }
        match m.checked_mul(d) {
            Some(len) if len == items.len() => {}
            _ => {
                return Err(Error::Shape(format!(
                    "items has {} values, expected m·d = {m}·{d}",
                    items.len()
                )))
            }
        }
        if index.len() != n * k {
            return Err(Error::Shape(format!(
                "index has {} values, expected n·K = {n}·{k}",
                index.len()
            )));
        }
        check_finite_rows(items, d).map_err(|e| match e {
            Error::Data { at, kind, .. } => Error::Data {
                input: "items",
                at,
                kind,
            },
            other => other,
        })?;
        if let Some(p) = index.iter().position(|&j| j as usize >= m) {
            return Err(group_err(
                "index",
                p / k,
                None,
                Some(p % k),
                DataErrorKind::IndexOutOfRange {
                    index: u64::from(index[p]),
                    bound: m as u64,
                },
            ));
        }
        Self::finish(GroupFeatures::Items { items, m, index }, n, k, d, labels, weights)
    }

    fn finish(
        features: GroupFeatures<'a>,
        n: usize,
        k: usize,
        d: usize,
        labels: GroupLabels<'a>,
        weights: Option<&'a [f64]>,
    ) -> Result<Self> {
        let (order, width) = check_group_labels(labels, n, k)?;
        let total_weight = match weights {
            None => n as f64,
            Some(w) => check_group_weights(w, n)?,
        };
        Ok(GroupView {
            features,
            order,
            width,
            weights,
            n,
            k,
            d,
            total_weight,
        })
    }

    /// The same features and weights with other labels (e.g. privatised choices), validated.
    ///
    /// # Errors
    /// As [`GroupView::new`] for the labels.
    pub fn with_labels<'b>(&self, labels: GroupLabels<'b>) -> Result<GroupView<'b>>
    where
        'a: 'b,
    {
        let (order, width) = check_group_labels(labels, self.n, self.k)?;
        Ok(GroupView { order, width, ..*self })
    }

    /// Number of samples `n`.
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }
    /// Alternatives per sample `K`.
    #[inline]
    pub fn k(&self) -> usize {
        self.k
    }
    /// Features per alternative `d`.
    #[inline]
    pub fn d(&self) -> usize {
        self.d
    }
    /// The feature storage.
    #[inline]
    pub fn features(&self) -> GroupFeatures<'a> {
        self.features
    }
    /// Listed positions per sample: 1 for chosen indices, `K` for rankings.
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }
    /// Whether the labels are full rankings.
    #[inline]
    pub(crate) fn is_ranking(&self) -> bool {
        self.width == self.k
    }
    /// The labels of sample `i`, best first (length [`GroupView::width`]).
    #[inline]
    pub(crate) fn order_of(&self, i: usize) -> &'a [u8] {
        &self.order[i * self.width..(i + 1) * self.width]
    }
    /// The chosen (top-ranked) alternative of sample `i`.
    #[inline]
    pub fn chosen(&self, i: usize) -> u8 {
        self.order[i * self.width]
    }
    /// All labels, `n × width`, row-major.
    #[inline]
    pub fn order(&self) -> &'a [u8] {
        self.order
    }
    /// Sample weights, if any.
    #[inline]
    pub fn weights(&self) -> Option<&'a [f64]> {
        self.weights
    }
    /// Weight of sample `i` (1 without weights).
    #[inline]
    pub fn weight(&self, i: usize) -> f64 {
        self.weights.map_or(1.0, |w| w[i])
    }
    /// `W = Σ w_i` (`n` without weights).
    #[inline]
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }
    /// Row `r` (alternative `r`) of sample `i`: `φ_ir`, `d` values.
    #[inline]
    pub fn row(&self, i: usize, r: usize) -> &'a [f64] {
        let d = self.d;
        match self.features {
            GroupFeatures::Dense(x) => {
                let at = (i * self.k + r) * d;
                &x[at..at + d]
            }
            GroupFeatures::Items { items, index, .. } => {
                let at = index[i * self.k + r] as usize * d;
                &items[at..at + d]
            }
        }
    }

    /// `max_{i,k} ‖P(φ_ik − φ̄_i)‖₂` with `φ̄_i` the mean row of sample `i` and `P` the centring
    /// projector `I − 11ᵀ/d` when `sum_zero` (else `I`). For `θ` in the feasible set of radius
    /// `B`, every score difference within a sample obeys `|u_ik − u_il| ≤ 2B·` this value.
    pub(crate) fn max_centered_row_norm(&self, sum_zero: bool) -> f64 {
        let (k, d) = (self.k, self.d);
        let mut mean = vec![0.0; d];
        let mut best = 0.0f64;
        for i in 0..self.n {
            mean.fill(0.0);
            for r in 0..k {
                mean.iter_mut().zip(self.row(i, r)).for_each(|(m, v)| *m += v);
            }
            mean.iter_mut().for_each(|m| *m /= k as f64);
            for r in 0..k {
                let row = self.row(i, r);
                let (mut ss, mut s) = (0.0, 0.0);
                for (v, m) in row.iter().zip(&mean) {
                    let c = v - m;
                    ss += c * c;
                    s += c;
                }
                if sum_zero {
                    ss -= s * s / d as f64;
                }
                best = best.max(ss.max(0.0).sqrt());
            }
        }
        best
    }

    /// For `K = 2`: the equivalent pairwise data `x_i = φ_i1 − φ_i0`, `y_i = 1` iff alternative 1
    /// is chosen (Plackett–Luce with two alternatives is BTL on the difference; a ranking of two
    /// is its choice). Weights are kept.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`k`) unless `K = 2`.
    pub fn to_pairwise(&self) -> Result<PairwiseData> {
        if self.k != 2 {
            return Err(Error::param(
                "k",
                format!("only two-alternative samples reduce to pairs (K = {})", self.k),
            ));
        }
        let d = self.d;
        let mut x = Vec::with_capacity(self.n * d);
        let mut y = Vec::with_capacity(self.n);
        for i in 0..self.n {
            let (a, b) = (self.row(i, 0), self.row(i, 1));
            x.extend(b.iter().zip(a).map(|(p, q)| p - q));
            y.push(self.chosen(i));
        }
        Ok(PairwiseData {
            x,
            y,
            weights: self.weights.map(<[f64]>::to_vec),
            n: self.n,
            d,
        })
    }
}

/// Owned K-wise data (from a simulator or a file); [`GroupData::ranking_view`] validates it.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupData {
    /// `n × K × d` features, row-major.
    pub x: Vec<f64>,
    /// Full rankings, `n × K`, best first (the choice is the first column).
    pub ranking: Vec<u8>,
    /// Optional sample weights.
    pub weights: Option<Vec<f64>>,
    /// Samples.
    pub n: usize,
    /// Alternatives per sample.
    pub k: usize,
    /// Features per alternative.
    pub d: usize,
}

impl GroupData {
    /// A validated view with the full rankings as labels.
    pub fn ranking_view(&self) -> Result<GroupView<'_>> {
        GroupView::new(
            &self.x,
            self.n,
            self.k,
            self.d,
            GroupLabels::Ranking(&self.ranking),
            self.weights.as_deref(),
        )
    }
    /// The chosen alternatives (first column of the rankings).
    pub fn choices(&self) -> Vec<u8> {
        self.ranking.chunks_exact(self.k).map(|r| r[0]).collect()
    }
}

#[cfg(test)]
mod tests;
