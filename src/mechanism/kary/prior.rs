//! The prior-based mechanisms: RRTop-k and RR-with-prior (Ghazi et al. (2021), main paper
//! Alg. 1–2), randomized response restricted to the labels of largest prior mass.

use super::{check_label, check_num_labels, draw_rr, rr_probs};
use crate::error::{check_eps, Error, Result};
use crate::privacy::{NoiseRng, PrivatizedLabels, Randomizer};
use rand::Rng;

/// One draw of a prior-based mechanism ([`RrTopK::sample`], [`RrWithPrior::sample`]): the
/// output label and the top set `Y_k` it lies in (in decreasing prior mass; `k = set.len()`).
/// The set depends only on the prior, never on the input label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopDraw {
    /// The randomised label `ỹ ∈ Y_k`.
    pub label: u8,
    /// `Y_k`.
    pub set: Vec<u8>,
}

/// The `k` labels of largest prior mass, ties broken by the smaller label index (independent of
/// the example's label), in decreasing order of mass.
pub fn top_k(prior: &[f64], k: usize) -> Vec<u8> {
    let mut idx: Vec<usize> = (0..prior.len()).collect();
    idx.sort_by(|&a, &b| prior[b].total_cmp(&prior[a]).then(a.cmp(&b)));
    idx.truncate(k);
    idx.into_iter().map(|i| i as u8).collect()
}

/// Validates a prior over `K` labels: finite, non-negative, summing to 1 within 1e-9.
fn check_prior(prior: &[f64], row: usize) -> Result<()> {
    check_num_labels(prior.len())?;
    let sum: f64 = prior.iter().sum();
    if prior.iter().any(|p| !(p.is_finite() && *p >= 0.0)) || (sum - 1.0).abs() > 1e-9 {
        return Err(Error::param(
            "prior",
            format!("row {row}: a prior must be finite, non-negative and sum to 1 (sum {sum})"),
        ));
    }
    Ok(())
}

/// RRTop-k (Ghazi et al. (2021), main paper Alg. 1): randomized response restricted to the top-`k`
/// labels of a prior; a label outside the top set is replaced by a uniform draw from it.
/// ε-label-LDP for every prior; `k = K` is K-RR, `k = 1` outputs the top label (0-DP).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrTopK {
    eps: f64,
    k: usize,
}

impl RrTopK {
    /// RRTop-`k` at level `eps`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `ε > 0` is finite and `1 ≤ k ≤ 256`.
    pub fn new(eps: f64, k: usize) -> Result<Self> {
        check_eps(eps)?;
        if !(1..=256).contains(&k) {
            return Err(Error::param("k", format!("needs 1 ≤ k ≤ 256, got {k}")));
        }
        Ok(RrTopK { eps, k })
    }
    /// The privacy level.
    pub fn eps(&self) -> f64 {
        self.eps
    }
    /// The size `k` of the top set.
    pub fn k(&self) -> usize {
        self.k
    }
    /// The `K × K` transition matrix for `prior` (row-major, `[y·K + ỹ]`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an invalid prior or `k > K`.
    pub fn transition_matrix(&self, prior: &[f64]) -> Result<Vec<f64>> {
        check_prior(prior, 0)?;
        let kk = prior.len();
        if self.k > kk {
            return Err(Error::param("k", format!("k = {} exceeds the K = {kk} labels", self.k)));
        }
        let top = top_k(prior, self.k);
        let (keep, other) = rr_probs(self.eps, self.k);
        let mut t = vec![0.0; kk * kk];
        for y in 0..kk {
            let inside = top.contains(&(y as u8));
            for &j in &top {
                let j = usize::from(j);
                t[y * kk + j] = match (inside, j == y) {
                    (true, true) => keep,
                    (true, false) => other,
                    (false, _) => 1.0 / self.k as f64,
                };
            }
        }
        Ok(t)
    }
    /// Randomises `labels` (length `n`), label `i` under prior row `i` of `priors` (`n × K`,
    /// row-major). Each label must be randomised once; real data needs
    /// [`secure_rng`](crate::mechanism::secure_rng).
    ///
    /// # Errors
    /// [`Error::Shape`] for mismatched lengths; [`Error::InvalidParam`] for an invalid prior
    /// row or `k > K`; [`Error::Data`] for a label `≥ K`.
    pub fn randomize<R: Rng + ?Sized>(&self, labels: &[u8], priors: &[f64], rng: &mut R) -> Result<Vec<u8>> {
        let kk = check_priors(labels, priors)?;
        if self.k > kk {
            return Err(Error::param("k", format!("k = {} exceeds the K = {kk} labels", self.k)));
        }
        let keep = rr_probs(self.eps, self.k).0;
        labels
            .iter()
            .zip(priors.chunks_exact(kk))
            .enumerate()
            .map(|(row, (&y, p))| {
                check_prior(p, row)?;
                check_label(y, kk, row)?;
                let top = top_k(p, self.k);
                let pos = top.iter().position(|&j| j == y);
                Ok(draw_rr(&top, pos, keep, rng))
            })
            .collect()
    }
    /// [`RrTopK::randomize`] (the same draws), returning the labels with their provenance:
    /// [`Randomizer::RrTopK`] at this `ε` and `k` over the `K` labels of the priors, privatised
    /// by the library with `rng`'s generator. The priors must not depend on the samples' own
    /// labels (the guarantee's note says so).
    ///
    /// # Errors
    /// As [`RrTopK::randomize`].
    pub fn privatize(&self, labels: &[u8], priors: &[f64], rng: &mut NoiseRng) -> Result<PrivatizedLabels> {
        let out = self.randomize(labels, priors, rng)?;
        let randomizer = Randomizer::RrTopK {
            eps: self.eps,
            k: self.k,
            num_labels: priors.len() / labels.len(),
        };
        Ok(PrivatizedLabels::library(out, randomizer, rng))
    }
}

impl RrTopK {
    /// Randomises one label `y` under its prior (the draw of [`RrTopK::randomize`] for one
    /// row). Returns `ỹ` and `Y_k`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an invalid prior or `k > K`; [`Error::Data`] for `y ≥ K`.
    pub fn sample<R: Rng + ?Sized>(&self, y: u8, prior: &[f64], rng: &mut R) -> Result<TopDraw> {
        check_prior(prior, 0)?;
        let kk = prior.len();
        if self.k > kk {
            return Err(Error::param("k", format!("k = {} exceeds the K = {kk} labels", self.k)));
        }
        check_label(y, kk, 0)?;
        let set = top_k(prior, self.k);
        let pos = set.iter().position(|&j| j == y);
        let label = draw_rr(&set, pos, rr_probs(self.eps, self.k).0, rng);
        Ok(TopDraw { label, set })
    }
}

/// Shape checks shared by the prior-based mechanisms; returns `K`.
fn check_priors(labels: &[u8], priors: &[f64]) -> Result<usize> {
    if labels.is_empty() {
        return Err(Error::Shape("no labels".into()));
    }
    if !priors.len().is_multiple_of(labels.len()) {
        return Err(Error::Shape(format!(
            "priors has {} values, not a multiple of the {} labels",
            priors.len(),
            labels.len()
        )));
    }
    let kk = priors.len() / labels.len();
    check_num_labels(kk)?;
    Ok(kk)
}

/// RR-with-prior (Ghazi et al. (2021), main paper Alg. 2): RRTop-`k*` with the `k` that maximises
/// the probability of reporting the true label when it is distributed as the prior,
/// `k* = argmax_k (E/(E+k−1)) Σ_{j≤k} p_(j)` (smallest `k` on ties).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RrWithPrior {
    eps: f64,
}

impl RrWithPrior {
    /// RR-with-prior at level `eps`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `ε > 0` is finite.
    pub fn new(eps: f64) -> Result<Self> {
        check_eps(eps)?;
        Ok(RrWithPrior { eps })
    }
    /// The privacy level.
    pub fn eps(&self) -> f64 {
        self.eps
    }
    /// `k*` for `prior` (the paper's formula; smallest `k` on ties).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an invalid prior.
    pub fn choose_k(&self, prior: &[f64]) -> Result<usize> {
        check_prior(prior, 0)?;
        Ok(self.k_star(prior))
    }
    /// The selection weights `w_k = (E/(E+k−1))·Σ_{j≤k} p_(j)`, `k = 1..K` (index `k − 1`):
    /// the probability that RRTop-`k` reports the true label when it is distributed as the
    /// prior; `k*` maximises it.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an invalid prior.
    pub fn weights(&self, prior: &[f64]) -> Result<Vec<f64>> {
        check_prior(prior, 0)?;
        let order = top_k(prior, prior.len());
        let mut mass = 0.0;
        Ok(order
            .iter()
            .enumerate()
            .map(|(i, &j)| {
                mass += prior[usize::from(j)];
                rr_probs(self.eps, i + 1).0 * mass
            })
            .collect())
    }
    fn k_star(&self, prior: &[f64]) -> usize {
        self.top_set(prior).len()
    }
    /// `Y_{k*}`: the `k*` labels of largest prior mass, in decreasing order (ties by the smaller
    /// index), from one sort of the prior.
    fn top_set(&self, prior: &[f64]) -> Vec<u8> {
        let mut order = top_k(prior, prior.len());
        let (mut best, mut best_k, mut mass) = (f64::NEG_INFINITY, 1, 0.0);
        for (i, &j) in order.iter().enumerate() {
            mass += prior[usize::from(j)];
            let w = rr_probs(self.eps, i + 1).0 * mass;
            if w > best {
                best = w;
                best_k = i + 1;
            }
        }
        order.truncate(best_k);
        order
    }
    /// Randomises one label `y` under its prior (the draw of [`RrWithPrior::randomize`] for
    /// one row): `ỹ` and `Y_{k*}` (`k* = set.len()`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an invalid prior; [`Error::Data`] for `y ≥ K`.
    pub fn sample<R: Rng + ?Sized>(&self, y: u8, prior: &[f64], rng: &mut R) -> Result<TopDraw> {
        check_prior(prior, 0)?;
        check_label(y, prior.len(), 0)?;
        let set = self.top_set(prior);
        let k = set.len();
        let pos = set.iter().position(|&j| j == y);
        let label = draw_rr(&set, pos, rr_probs(self.eps, k).0, rng);
        Ok(TopDraw { label, set })
    }
    /// The `K × K` transition matrix for `prior`: RRTop-`k*`'s.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for an invalid prior.
    pub fn transition_matrix(&self, prior: &[f64]) -> Result<Vec<f64>> {
        RrTopK::new(self.eps, self.choose_k(prior)?)?.transition_matrix(prior)
    }
    /// Randomises `labels` under their prior rows (`n × K`); returns `ỹ` and the `k*` of each
    /// row (the experiments report its mean).
    ///
    /// # Errors
    /// As [`RrTopK::randomize`].
    pub fn randomize<R: Rng + ?Sized>(
        &self,
        labels: &[u8],
        priors: &[f64],
        rng: &mut R,
    ) -> Result<(Vec<u8>, Vec<usize>)> {
        let kk = check_priors(labels, priors)?;
        let mut out = Vec::with_capacity(labels.len());
        let mut ks = Vec::with_capacity(labels.len());
        for (row, (&y, p)) in labels.iter().zip(priors.chunks_exact(kk)).enumerate() {
            check_prior(p, row)?;
            check_label(y, kk, row)?;
            let top = self.top_set(p);
            let k = top.len();
            let pos = top.iter().position(|&j| j == y);
            out.push(draw_rr(&top, pos, rr_probs(self.eps, k).0, rng));
            ks.push(k);
        }
        Ok((out, ks))
    }
    /// [`RrWithPrior::randomize`] (the same draws), returning the labels with their provenance
    /// ([`Randomizer::RrWithPrior`] at this `ε` over the `K` labels of the priors, privatised by
    /// the library with `rng`'s generator) and the `k*` of each row.
    ///
    /// # Errors
    /// As [`RrTopK::randomize`].
    pub fn privatize(
        &self,
        labels: &[u8],
        priors: &[f64],
        rng: &mut NoiseRng,
    ) -> Result<(PrivatizedLabels, Vec<usize>)> {
        let (out, ks) = self.randomize(labels, priors, rng)?;
        let randomizer = Randomizer::RrWithPrior {
            eps: self.eps,
            num_labels: priors.len() / labels.len(),
        };
        Ok((PrivatizedLabels::library(out, randomizer, rng), ks))
    }
}
