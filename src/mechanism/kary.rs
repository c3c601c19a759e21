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
    /// [`super::secure_rng`].
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    /// `max T[i,j]/T[i',j]` over outputs reachable from some input; `∞` if an output is
    /// reachable from one input and not from another.
    fn max_ratio(t: &[f64], k: usize) -> f64 {
        let mut worst = 1.0f64;
        for j in 0..k {
            let col: Vec<f64> = (0..k).map(|i| t[i * k + j]).collect();
            let (lo, hi) = col
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
            if hi == 0.0 {
                continue;
            }
            worst = worst.max(if lo == 0.0 { f64::INFINITY } else { hi / lo });
        }
        worst
    }

    fn rows_sum_to_one(t: &[f64], k: usize) {
        for i in 0..k {
            let s: f64 = t[i * k..(i + 1) * k].iter().sum();
            assert!((s - 1.0).abs() < 1e-14, "row {i} sums to {s}");
        }
    }

    #[test]
    fn krr_matrix_is_exact_and_its_ratio_is_e_eps() {
        for (eps, k) in [(0.1, 2), (1.0, 5), (3.0, 10), (0.5, 256), (800.0, 3)] {
            let m = KaryRr::new(eps, k).unwrap();
            let t = m.transition_matrix();
            rows_sum_to_one(&t, k);
            let e = f64::exp(eps.min(700.0));
            assert!((t[0] - e / (e + k as f64 - 1.0)).abs() < 1e-15 || eps > 700.0);
            if eps < 700.0 {
                let r = max_ratio(&t, k);
                assert!((r / eps.exp() - 1.0).abs() < 1e-12, "K={k} ε={eps}: ratio {r}");
            }
        }
        // K = 2 is binary RR.
        let b = crate::mechanism::RandomizedResponse::new(0.7)
            .unwrap()
            .transition_matrix();
        let t = KaryRr::new(0.7, 2).unwrap().transition_matrix();
        for (a, c) in t.iter().zip(&b) {
            assert!((a - c).abs() < 1e-15);
        }
    }

    #[test]
    fn rrtopk_matrix_ratio_and_special_cases() {
        let prior = [0.1, 0.4, 0.05, 0.3, 0.15];
        assert_eq!(top_k(&prior, 3), vec![1, 3, 4]);
        assert_eq!(
            top_k(&[0.25, 0.25, 0.25, 0.25], 2),
            vec![0, 1],
            "ties: smaller index first"
        );
        for eps in [0.2, 1.0, 4.0] {
            for k in 1..=5 {
                let t = RrTopK::new(eps, k).unwrap().transition_matrix(&prior).unwrap();
                rows_sum_to_one(&t, 5);
                let r = max_ratio(&t, 5);
                assert!(r <= eps.exp() * (1.0 + 1e-12), "k={k} ε={eps}: {r}");
                if k > 1 {
                    // Attained: y = ỹ ∈ Y_k against y' ∈ Y_k \ {ỹ}.
                    assert!((r / eps.exp() - 1.0).abs() < 1e-12, "k={k} ε={eps}: {r}");
                } else {
                    assert_eq!(r, 1.0);
                }
            }
            // k = K is K-RR for any prior.
            let t = RrTopK::new(eps, 5).unwrap().transition_matrix(&prior).unwrap();
            let krr = KaryRr::new(eps, 5).unwrap().transition_matrix();
            for (a, b) in t.iter().zip(&krr) {
                assert!((a - b).abs() < 1e-15);
            }
        }
        assert!(RrTopK::new(1.0, 6).unwrap().transition_matrix(&prior).is_err());
        assert!(RrTopK::new(1.0, 2).unwrap().transition_matrix(&[0.5, 0.6]).is_err());
    }

    #[test]
    fn rr_with_prior_uses_the_paper_formula() {
        // Examples where the paper's k* and the reference code's differ: 3 vs 2, 3 vs 2, 2 vs 1.
        let m = |eps| RrWithPrior::new(eps).unwrap();
        assert_eq!(m(2.0).choose_k(&[0.5, 0.3, 0.1, 0.05, 0.05]).unwrap(), 3);
        assert_eq!(m(1.0).choose_k(&[0.4, 0.35, 0.25]).unwrap(), 3);
        assert_eq!(m(0.5).choose_k(&[0.6, 0.4]).unwrap(), 2);
        // Uniform prior: k* = K (K-RR).
        for (k, eps) in [(2usize, 0.01), (5, 1.0), (10, 5.0), (100, 20.0)] {
            assert_eq!(m(eps).choose_k(&vec![1.0 / k as f64; k]).unwrap(), k);
        }
        // A point-mass prior: k* = 1.
        assert_eq!(m(1.0).choose_k(&[0.0, 1.0, 0.0]).unwrap(), 1);
    }

    /// Pearson χ² of counts against probabilities (cells of probability 0 must be empty).
    fn chi2(counts: &[usize], probs: &[f64], n: usize) -> f64 {
        let mut c = 0.0;
        for (&o, &p) in counts.iter().zip(probs) {
            if p == 0.0 {
                assert_eq!(o, 0, "an impossible output was drawn");
                continue;
            }
            let e = p * n as f64;
            c += (o as f64 - e).powi(2) / e;
        }
        c
    }

    #[test]
    fn draws_follow_the_transition_rows() {
        // Seeded χ² tests, 200 000 draws per input; the bounds are the 1 − 1e-6 quantiles for
        // K − 1 = 4 and k − 1 = 2 degrees of freedom (survival e^{−x/2}(1 + x/2) and e^{−x/2}):
        // 33.4 and 27.7.
        let n = 200_000;
        let mut rng = simulation_rng(4242);
        let krr = KaryRr::new(0.8, 5).unwrap();
        let t = krr.transition_matrix();
        for y in 0..5u8 {
            let out = krr.randomize(&vec![y; n], &mut rng).unwrap();
            let mut counts = [0usize; 5];
            out.iter().for_each(|&o| counts[usize::from(o)] += 1);
            let c = chi2(&counts, &t[usize::from(y) * 5..usize::from(y) * 5 + 5], n);
            assert!(c < 33.4, "K-RR y={y}: χ² = {c}");
        }
        let prior = [0.1, 0.4, 0.05, 0.3, 0.15];
        let top = RrTopK::new(1.5, 3).unwrap();
        let t = top.transition_matrix(&prior).unwrap();
        let priors: Vec<f64> = prior.iter().copied().cycle().take(5 * n).collect();
        for y in 0..5u8 {
            let out = top.randomize(&vec![y; n], &priors, &mut rng).unwrap();
            let mut counts = [0usize; 5];
            out.iter().for_each(|&o| counts[usize::from(o)] += 1);
            let c = chi2(&counts, &t[usize::from(y) * 5..usize::from(y) * 5 + 5], n);
            assert!(c < 27.7, "RRTop-3 y={y}: χ² = {c}");
        }
        let wp = RrWithPrior::new(2.0).unwrap();
        let (out, ks) = wp.randomize(&vec![3; 1000], &priors[..5000], &mut rng).unwrap();
        assert!(ks.iter().all(|&k| k == wp.choose_k(&prior).unwrap()));
        let allowed = top_k(&prior, ks[0]);
        assert!(out.iter().all(|o| allowed.contains(o)));
    }

    #[test]
    fn invalid_inputs_are_typed_errors() {
        assert!(KaryRr::new(0.0, 3).is_err());
        assert!(KaryRr::new(1.0, 1).is_err());
        assert!(KaryRr::new(f64::NAN, 3).is_err());
        let mut rng = simulation_rng(1);
        let e = KaryRr::new(1.0, 3).unwrap().randomize(&[0, 3], &mut rng).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
        assert!(RrTopK::new(1.0, 0).is_err());
        let top = RrTopK::new(1.0, 2).unwrap();
        assert!(top.randomize(&[0, 1], &[0.5, 0.5, 0.5], &mut rng).is_err());
        assert!(top.randomize(&[0], &[0.5, 0.6], &mut rng).is_err());
        assert!(top.randomize(&[2], &[0.5, 0.5], &mut rng).is_err());
        assert!(RrWithPrior::new(-1.0).is_err());
        assert!(RrWithPrior::new(1.0).unwrap().choose_k(&[f64::NAN, 1.0]).is_err());
    }
}
