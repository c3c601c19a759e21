//! Validation of K-wise data: dimensions, labels (choices and rankings) and weights, with
//! errors located by sample, row and column.

use super::{GroupLabels, MAX_K};
use crate::data::check_weights;
use crate::error::{DataErrorKind, Error, GroupLocation, Location, Result};

pub(super) fn group_err(
    input: &'static str,
    sample: usize,
    row: Option<usize>,
    col: Option<usize>,
    kind: DataErrorKind,
) -> Error {
    Error::GroupData {
        input,
        at: GroupLocation { sample, row, col },
        kind,
    }
}

pub(super) fn check_dims(n: usize, k: usize, d: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::Shape("no samples (n = 0)".into()));
    }
    if !(2..=MAX_K).contains(&k) {
        return Err(Error::Shape(format!(
            "each sample needs 2 ≤ K ≤ {MAX_K} alternatives, got K = {k}"
        )));
    }
    if d == 0 {
        return Err(Error::Shape("no features (d = 0)".into()));
    }
    Ok(())
}

/// Validates the labels; returns `(order, width)`.
pub(super) fn check_group_labels<'a>(labels: GroupLabels<'a>, n: usize, k: usize) -> Result<(&'a [u8], usize)> {
    match labels {
        GroupLabels::Choice(y) => {
            if y.len() != n {
                return Err(Error::Shape(format!(
                    "y has {} chosen indices but there are {n} samples",
                    y.len()
                )));
            }
            if let Some(i) = y.iter().position(|&l| usize::from(l) >= k) {
                return Err(group_err(
                    "y",
                    i,
                    None,
                    None,
                    DataErrorKind::LabelOutOfRange {
                        label: i128::from(y[i]),
                        bound: k as u64,
                    },
                ));
            }
            Ok((y, 1))
        }
        GroupLabels::Ranking(r) => {
            if r.len() != n * k {
                return Err(Error::Shape(format!(
                    "the ranking has {} values, expected n·K = {n}·{k}",
                    r.len()
                )));
            }
            let mut seen = [false; MAX_K];
            for (i, row) in r.chunks_exact(k).enumerate() {
                seen[..k].fill(false);
                for (pos, &l) in row.iter().enumerate() {
                    let l_us = usize::from(l);
                    if l_us >= k {
                        return Err(group_err(
                            "y",
                            i,
                            None,
                            Some(pos),
                            DataErrorKind::LabelOutOfRange {
                                label: i128::from(l),
                                bound: k as u64,
                            },
                        ));
                    }
                    if seen[l_us] {
                        return Err(group_err(
                            "y",
                            i,
                            None,
                            Some(pos),
                            DataErrorKind::DuplicateInRanking { label: l },
                        ));
                    }
                    seen[l_us] = true;
                }
            }
            Ok((r, k))
        }
    }
}

pub(super) fn check_group_weights(w: &[f64], n: usize) -> Result<f64> {
    check_weights(w, n).map_err(|e| match e {
        Error::Data {
            input,
            at: Location { row, .. },
            kind,
        } => group_err(input, row, None, None, kind),
        other => other,
    })
}
