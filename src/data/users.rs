//! Users over rows: which comparisons belong to which user (Zhang et al. (2025), Sec. 3).
//!
//! User `u` owns the contiguous rows `offsets[u] .. offsets[u+1]` of a pairwise dataset; counts
//! `m_u = offsets[u+1] − offsets[u] ≥ 1` may differ (ragged). The users, their counts and all
//! features are public; only labels are private (user-level *label* DP, Def. 2 of Zhang et al.,
//! "Towards User-level Private RLHF"). Two label vectors are **user-level neighbours** when they
//! differ only in the labels of one user (up to all `m_u` of them): a *replace* relation on a
//! fixed set of users ([`UserIndex::differing_user`]).

use crate::error::{DataErrorKind, Error, Location, Result};
use std::ops::Range;

/// Contiguous user blocks over `n` rows (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserIndex {
    offsets: Vec<usize>,
}

impl UserIndex {
    /// Users with the given comparison counts, in row order: user `u` owns
    /// `Σ_{v<u} m_v .. Σ_{v≤u} m_v`.
    ///
    /// # Errors
    /// [`Error::Shape`] if there are no users; [`Error::InvalidParam`] (`user-counts`) naming the
    /// first user with 0 comparisons, or if the total overflows.
    pub fn from_counts(counts: &[usize]) -> Result<Self> {
        if counts.is_empty() {
            return Err(Error::Shape("no users".into()));
        }
        let mut offsets = Vec::with_capacity(counts.len() + 1);
        offsets.push(0usize);
        let mut total = 0usize;
        for (u, &m) in counts.iter().enumerate() {
            if m == 0 {
                return Err(Error::param("user-counts", format!("user {u} has no comparisons")));
            }
            total = total
                .checked_add(m)
                .ok_or_else(|| Error::param("user-counts", "the total number of comparisons overflows"))?;
            offsets.push(total);
        }
        Ok(UserIndex { offsets })
    }

    /// `n_users` users with `m` comparisons each (the paper's setting).
    ///
    /// # Errors
    /// As [`UserIndex::from_counts`].
    pub fn equal(n_users: usize, m: usize) -> Result<Self> {
        UserIndex::from_counts(&vec![m; n_users])
    }

    /// From block offsets `0 = o_0 < o_1 < … < o_U = n`.
    ///
    /// # Errors
    /// [`Error::Shape`] if there are fewer than two offsets, the first is not 0, or they are
    /// not strictly increasing (an empty user).
    pub fn from_offsets(offsets: Vec<usize>) -> Result<Self> {
        if offsets.len() < 2 {
            return Err(Error::Shape("user offsets need at least two entries (0 and n)".into()));
        }
        if offsets[0] != 0 {
            return Err(Error::Shape(format!(
                "user offsets must start at 0, got {}",
                offsets[0]
            )));
        }
        if let Some(u) = offsets.windows(2).position(|w| w[1] <= w[0]) {
            return Err(Error::Shape(format!(
                "user offsets must be strictly increasing: user {u} spans {}..{}",
                offsets[u],
                offsets[u + 1]
            )));
        }
        Ok(UserIndex { offsets })
    }

    /// From one user id per row. Rows must be grouped by user (each user's rows consecutive;
    /// users may appear in any order); users are numbered in order of first appearance.
    ///
    /// # Errors
    /// [`Error::Shape`] for no rows; [`Error::Data`] (`input = "users"`, kind
    /// [`DataErrorKind::UserNotContiguous`]) naming the first row whose user already had a block
    /// that ended earlier.
    pub fn from_user_ids(ids: &[u64]) -> Result<Self> {
        if ids.is_empty() {
            return Err(Error::Shape("no rows (n = 0)".into()));
        }
        let mut seen = std::collections::HashSet::new();
        let mut offsets = vec![0usize];
        seen.insert(ids[0]);
        for (row, w) in ids.windows(2).enumerate() {
            if w[1] != w[0] {
                if !seen.insert(w[1]) {
                    return Err(Error::Data {
                        input: "users",
                        at: Location {
                            row: row + 1,
                            col: None,
                        },
                        kind: DataErrorKind::UserNotContiguous { user: w[1] },
                    });
                }
                offsets.push(row + 1);
            }
        }
        offsets.push(ids.len());
        Ok(UserIndex { offsets })
    }

    /// Number of users `U`.
    pub fn n_users(&self) -> usize {
        self.offsets.len() - 1
    }
    /// Number of rows `n = Σ_u m_u`.
    pub fn n_rows(&self) -> usize {
        *self.offsets.last().expect("non-empty")
    }
    /// The rows of user `u`.
    pub fn rows(&self, u: usize) -> Range<usize> {
        self.offsets[u]..self.offsets[u + 1]
    }
    /// `m_u`, the number of comparisons of user `u`.
    pub fn count(&self, u: usize) -> usize {
        self.offsets[u + 1] - self.offsets[u]
    }
    /// The block offsets (`U + 1` entries).
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }
    /// `max_u m_u`.
    pub fn max_count(&self) -> usize {
        (0..self.n_users()).map(|u| self.count(u)).max().unwrap_or(0)
    }
    /// `Some(m)` when every user has `m` comparisons.
    pub fn equal_count(&self) -> Option<usize> {
        let m = self.count(0);
        (0..self.n_users()).all(|u| self.count(u) == m).then_some(m)
    }
    /// The user owning row `i` (binary search).
    ///
    /// # Panics
    /// If `i ≥ n_rows()`.
    pub fn user_of_row(&self, i: usize) -> usize {
        assert!(i < self.n_rows(), "row {i} out of range (n = {})", self.n_rows());
        self.offsets.partition_point(|&o| o <= i) - 1
    }

    /// Checks that the index covers exactly `n` rows.
    ///
    /// # Errors
    /// [`Error::Shape`] otherwise.
    pub(crate) fn check_rows(&self, n: usize) -> Result<()> {
        if self.n_rows() == n {
            Ok(())
        } else {
            Err(Error::Shape(format!(
                "the user index covers {} rows but the data has {n}",
                self.n_rows()
            )))
        }
    }

    /// User-level neighbouring (Def. 2 of the paper, a replace relation): `Ok(None)` if `y` and
    /// `y2` are equal, `Ok(Some(u))` if they differ only in rows of user `u`.
    ///
    /// # Errors
    /// [`Error::Shape`] for lengths other than `n_rows()`; [`Error::InvalidParam`] (`labels`)
    /// when two or more users differ (not neighbours).
    pub fn differing_user(&self, y: &[u8], y2: &[u8]) -> Result<Option<usize>> {
        self.check_rows(y.len())?;
        self.check_rows(y2.len())?;
        let mut who = None;
        for u in 0..self.n_users() {
            let r = self.rows(u);
            if y[r.clone()] != y2[r] {
                if let Some(v) = who {
                    return Err(Error::param(
                        "labels",
                        format!("users {v} and {u} both differ: not user-level neighbours"),
                    ));
                }
                who = Some(u);
            }
        }
        Ok(who)
    }

    /// The user-level neighbour of `y` in which user `u`'s labels are replaced by `labels`
    /// (length `m_u`).
    ///
    /// # Errors
    /// [`Error::Shape`] for wrong lengths or `u ≥ U`.
    pub fn replace_user(&self, y: &[u8], u: usize, labels: &[u8]) -> Result<Vec<u8>> {
        self.check_rows(y.len())?;
        if u >= self.n_users() {
            return Err(Error::Shape(format!(
                "user {u} out of range ({} users)",
                self.n_users()
            )));
        }
        if labels.len() != self.count(u) {
            return Err(Error::Shape(format!(
                "user {u} has {} comparisons, got {} labels",
                self.count(u),
                labels.len()
            )));
        }
        let mut out = y.to_vec();
        out[self.rows(u)].copy_from_slice(labels);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_agree() {
        let a = UserIndex::from_counts(&[2, 1, 3]).unwrap();
        let b = UserIndex::from_offsets(vec![0, 2, 3, 6]).unwrap();
        let c = UserIndex::from_user_ids(&[7, 7, 1, 9, 9, 9]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a.n_users(), 3);
        assert_eq!(a.n_rows(), 6);
        assert_eq!(a.rows(2), 3..6);
        assert_eq!(a.count(1), 1);
        assert_eq!(a.max_count(), 3);
        assert_eq!(a.equal_count(), None);
        assert_eq!(UserIndex::equal(4, 5).unwrap().equal_count(), Some(5));
        let who: Vec<usize> = (0..6).map(|i| a.user_of_row(i)).collect();
        assert_eq!(who, [0, 0, 1, 2, 2, 2]);
    }

    #[test]
    fn invalid_indices_are_typed_errors() {
        assert!(matches!(UserIndex::from_counts(&[]), Err(Error::Shape(_))));
        assert!(matches!(
            UserIndex::from_counts(&[2, 0, 1]),
            Err(Error::InvalidParam {
                name: "user-counts",
                ..
            })
        ));
        assert!(matches!(UserIndex::from_offsets(vec![0]), Err(Error::Shape(_))));
        assert!(matches!(UserIndex::from_offsets(vec![1, 3]), Err(Error::Shape(_))));
        assert!(matches!(
            UserIndex::from_offsets(vec![0, 2, 2, 5]),
            Err(Error::Shape(_))
        ));
        match UserIndex::from_user_ids(&[1, 1, 2, 1]) {
            Err(Error::Data {
                input: "users",
                at,
                kind: DataErrorKind::UserNotContiguous { user: 1 },
            }) => assert_eq!(at.row, 3),
            other => panic!("{other:?}"),
        }
        assert!(UserIndex::from_user_ids(&[]).is_err());
        let a = UserIndex::from_counts(&[2, 2]).unwrap();
        assert!(a.check_rows(5).is_err());
    }

    #[test]
    fn neighbouring() {
        let a = UserIndex::from_counts(&[2, 3]).unwrap();
        let y = [0, 1, 1, 0, 1];
        assert_eq!(a.differing_user(&y, &y).unwrap(), None);
        let y2 = a.replace_user(&y, 1, &[0, 1, 0]).unwrap();
        assert_eq!(y2, [0, 1, 0, 1, 0]);
        assert_eq!(a.differing_user(&y, &y2).unwrap(), Some(1));
        let y3 = a.replace_user(&y2, 0, &[1, 1]).unwrap();
        assert!(matches!(
            a.differing_user(&y, &y3),
            Err(Error::InvalidParam { name: "labels", .. })
        ));
        assert!(a.replace_user(&y, 0, &[1]).is_err());
        assert!(a.replace_user(&y, 2, &[1]).is_err());
        assert!(a.differing_user(&y, &y[..4]).is_err());
    }
}
