//! K-ary label randomisers: K-RR, RRTop-k and RR-with-prior (Ghazi et al. (2021), *Deep Learning
//! with Label Differential Privacy*: K-RR in Alg. 5 of the supplement, RRTop-k and RR-with-prior
//! in Alg. 1–2 of the main paper; K-RR on K-wise choices as in Chowdhury, Zhou & Natarajan
//! (2024), Sec. 4.4, eq. 12).
//!
//! With `E = e^ε`, written in the overflow-free form `1/(1 + (k−1)e^{−ε})`:
//!
//! | mechanism | `P[ỹ = y]` | `P[ỹ = y' ≠ y]` |
//! |---|---|---|
//! | [`KaryRr`] (K labels) | `E/(E+K−1)` | `1/(E+K−1)` each |
//! | [`RrTopK`], `y ∈ Y_k` | `E/(E+k−1)` | `1/(E+k−1)` for `y' ∈ Y_k`, 0 outside |
//! | [`RrTopK`], `y ∉ Y_k` | 0 | `1/k` for `y' ∈ Y_k`, 0 outside |
//!
//! `Y_k` is the set of the `k` labels of largest prior mass, ties broken by the smaller label
//! index (a rule that does not look at `y`). [`RrWithPrior`] runs RRTop-`k*` with
//! `k* = argmax_k (E/(E+k−1))·Σ_{j≤k} p_(j)` (smallest `k` on ties) — the paper's formula, not
//! the authors' reference code, which divides by `1 + (k−2)e^{−ε}` instead of
//! `1 + (k−1)e^{−ε}`. All three are ε-label-LDP for every prior
//! (the prior must not depend on the example's own label).

mod prior;

pub use prior::{top_k, RrTopK, RrWithPrior, TopDraw};

use super::Mechanism;
use crate::error::{check_eps, DataErrorKind, Error, Location, Result};
use crate::privacy::{NoiseRng, PrivatizedLabels, Randomizer};
use crate::rng::uniform_f64;
use rand::Rng;

/// `P[ỹ = y]` and `P[ỹ = y' ≠ y]` of randomized response over `k` labels:
/// `(1/(1 + (k−1)e^{−ε}), e^{−ε}/(1 + (k−1)e^{−ε}))`.
fn rr_probs(eps: f64, k: usize) -> (f64, f64) {
    let em = (-eps).exp();
    let den = 1.0 + (k as f64 - 1.0) * em;
    (1.0 / den, em / den)
}

/// Draws from randomized response over `set` (input `pos` = the true label's index in `set`,
/// or `None` when it is outside: then uniform over `set`).
fn draw_rr<R: Rng + ?Sized>(set: &[u8], pos: Option<usize>, keep: f64, rng: &mut R) -> u8 {
    let k = set.len();
    let pick = |u: f64, m: usize| ((u * m as f64) as usize).min(m - 1);
    match pos {
        None => set[pick(uniform_f64(rng), k)],
        Some(p) => {
            if k == 1 || uniform_f64(rng) < keep {
                set[p]
            } else {
                let j = pick(uniform_f64(rng), k - 1);
                set[if j >= p { j + 1 } else { j }]
            }
        }
    }
}

fn check_label(y: u8, k: usize, row: usize) -> Result<()> {
    if usize::from(y) >= k {
        return Err(Error::Data {
            input: "y",
            at: Location { row, col: None },
            kind: DataErrorKind::LabelOutOfRange {
                label: i128::from(y),
                bound: k as u64,
            },
        });
    }
    Ok(())
}

/// The labels `0, 1, …, 255`: `&LABELS[..k]` is the label set of a `K`-label mechanism (no
/// allocation per draw).
const LABELS: [u8; 256] = {
    let mut a = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        a[i] = i as u8;
        i += 1;
    }
    a
};

fn check_num_labels(k: usize) -> Result<()> {
    if !(2..=256).contains(&k) {
        return Err(Error::param("k", format!("needs 2 ≤ K ≤ 256 labels, got {k}")));
    }
    Ok(())
}

/// K-ary randomized response: keep the label with probability `E/(E+K−1)`, otherwise report one
/// of the other `K−1` labels uniformly. Exactly ε-label-LDP; `K = 2` is
/// [`super::RandomizedResponse`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KaryRr {
    eps: f64,
    k: usize,
}

impl KaryRr {
    /// K-RR with `k` labels at level `eps`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `ε > 0` is finite and `2 ≤ k ≤ 256`.
    pub fn new(eps: f64, k: usize) -> Result<Self> {
        check_eps(eps)?;
        check_num_labels(k)?;
        Ok(KaryRr { eps, k })
    }
    /// `P[ỹ = y] = E/(E+K−1)`.
    pub fn keep_probability(&self) -> f64 {
        rr_probs(self.eps, self.k).0
    }
    /// `P[ỹ = y'] = 1/(E+K−1)` for each `y' ≠ y`.
    pub fn other_probability(&self) -> f64 {
        rr_probs(self.eps, self.k).1
    }
    /// Randomises one label (the draw of [`Mechanism::randomize`] for one row: the same
    /// coins in the same order). For algorithms that privatise each label when it is used
    /// (LP-RR-SGD, Ghazi et al. (2021), Alg. 5); each label must still be randomised once only.
    ///
    /// # Errors
    /// [`Error::Data`] (row 0) for a label `≥ K`.
    pub fn sample<R: Rng + ?Sized>(&self, y: u8, rng: &mut R) -> Result<u8> {
        check_label(y, self.k, 0)?;
        Ok(draw_rr(
            &LABELS[..self.k],
            Some(usize::from(y)),
            self.keep_probability(),
            rng,
        ))
    }
    /// Randomises every label once ([`Mechanism::randomize`], the same draws) and returns the
    /// labels with their provenance: [`Randomizer::Krr`] at this `ε` and `K`, privatised by the
    /// library with `rng`'s generator (simulation-only for [`NoiseRng::seeded`]).
    ///
    /// # Errors
    /// As [`Mechanism::randomize`].
    pub fn privatize(&self, labels: &[u8], rng: &mut NoiseRng) -> Result<PrivatizedLabels> {
        let out = self.randomize(labels, rng)?;
        Ok(PrivatizedLabels::library(
            out,
            Randomizer::Krr {
                eps: self.eps,
                k: self.k,
            },
            rng,
        ))
    }
}

impl Mechanism for KaryRr {
    fn eps(&self) -> f64 {
        self.eps
    }
    fn num_labels(&self) -> usize {
        self.k
    }
    fn transition_matrix(&self) -> Vec<f64> {
        let (keep, other) = rr_probs(self.eps, self.k);
        let k = self.k;
        (0..k * k).map(|p| if p / k == p % k { keep } else { other }).collect()
    }
    fn randomize<R: Rng + ?Sized>(&self, labels: &[u8], rng: &mut R) -> Result<Vec<u8>> {
        for (row, &y) in labels.iter().enumerate() {
            check_label(y, self.k, row)?;
        }
        let all = &LABELS[..self.k];
        let keep = self.keep_probability();
        Ok(labels
            .iter()
            .map(|&y| draw_rr(all, Some(usize::from(y)), keep, rng))
            .collect())
    }
}

#[cfg(test)]
mod tests;
