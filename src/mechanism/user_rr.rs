//! User-level randomized response (Zhang et al. (2025), "Towards User-level Private RLHF",
//! Sec. 4.1).

use super::rr::RandomizedResponse;
use super::Mechanism;
use crate::data::{check_labels, UserIndex};
use crate::error::{check_eps, Result};
use crate::math::simd::scalar::sigmoid;
use crate::privacy::{Guarantee, NoiseRng, PrivatizedLabels, Randomizer};
use rand::Rng;

/// User-level randomized response with user budget `ε`: every label of user `u` (who has `m_u`
/// comparisons) goes independently through binary RR at level `ε/m_u`:
///
/// ```text
/// P[ỹ = y] = σ(ε/m_u) = e^{ε/m_u}/(1 + e^{ε/m_u}),   P[ỹ ≠ y] = σ(−ε/m_u).
/// ```
///
/// For two label vectors `y, y' ∈ {0,1}^{m_u}` of one user and any output `ỹ`, the likelihood
/// ratio is a product of `m_u` factors in `[e^{−ε/m_u}, e^{ε/m_u}]`, so the mechanism is pure
/// `ε`-DP at the user level (all of one user's labels may change), with equality when all `m_u`
/// labels differ. The paper splits evenly with equal `m`; for ragged counts `ε/m_u` is used per
/// user, which is fine because `m_u` is public. Without the split (ε per label) the
/// user-level loss would be `m_u ε`.
///
/// Randomise each label exactly once and store the output (see [`RandomizedResponse`]); draws
/// are one [`uniform_f64`](super::uniform_f64) per label, in row order, exactly as
/// [`RandomizedResponse::randomize`] at `ε/m_u` on each user's block in turn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UserLevelRr {
    eps: f64,
}

impl UserLevelRr {
    /// User-level RR with user budget `eps`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) unless `eps` is finite and `> 0`.
    pub fn new(eps: f64) -> Result<Self> {
        check_eps(eps)?;
        Ok(UserLevelRr { eps })
    }

    /// The user budget ε.
    pub fn eps(&self) -> f64 {
        self.eps
    }

    /// The per-label level `ε/m` for a user with `m ≥ 1` comparisons.
    pub fn label_eps(&self, m: usize) -> f64 {
        self.eps / m as f64
    }

    /// `σ(ε/m)`, the probability that one of the user's labels is kept (for example
    /// 0.5249792 for m = 10, ε = 1; 0.7310586 for m = 1, ε = 1).
    pub fn keep_probability(&self, m: usize) -> f64 {
        sigmoid(self.label_eps(m))
    }

    /// `P[ỹ_user = out | y_user = y]` for one user with `m = y.len()` comparisons:
    /// `Π_j (σ(ε/m) if out_j = y_j else σ(−ε/m))`, in log space. For exact privacy tests.
    ///
    /// # Panics
    /// If the lengths differ or are 0.
    pub fn user_likelihood(&self, y: &[u8], out: &[u8]) -> f64 {
        assert_eq!(y.len(), out.len());
        assert!(!y.is_empty());
        let e = self.label_eps(y.len());
        let (lk, lf) = (-(-e).exp().ln_1p(), -e.exp().ln_1p()); // ln σ(e), ln σ(−e)
        y.iter()
            .zip(out)
            .map(|(a, b)| if a == b { lk } else { lf })
            .sum::<f64>()
            .exp()
    }

    /// Randomises all labels, user by user (rows grouped by `users`).
    ///
    /// # Errors
    /// [`Error::Shape`](crate::Error::Shape) if `users` does not cover `labels.len()` rows;
    /// [`Error::Data`](crate::Error::Data) naming the first label not in {0, 1} (no randomness
    /// consumed then).
    pub fn randomize<R: Rng + ?Sized>(&self, users: &UserIndex, labels: &[u8], rng: &mut R) -> Result<Vec<u8>> {
        users.check_rows(labels.len())?;
        check_labels(labels, 2)?;
        let mut out = Vec::with_capacity(labels.len());
        for u in 0..users.n_users() {
            let rr = RandomizedResponse::new(self.label_eps(users.count(u)))?;
            out.extend(rr.randomize(&labels[users.rows(u)], rng)?);
        }
        Ok(out)
    }

    /// The K-ary analogue for choices among `k` alternatives (K-wise data): every choice of user
    /// `u` goes through K-ary RR at `ε/m_u` ([`KaryRr`](super::KaryRr): keep with probability
    /// `e^{ε/m_u}/(e^{ε/m_u} + K − 1)`, else one of the other `K − 1` uniformly), so the user's
    /// likelihood ratio is a product of `m_u` factors in `[e^{−ε/m_u}, e^{ε/m_u}]`: pure `ε`-DP
    /// per user. Draws: [`KaryRr::sample`](super::KaryRr::sample) per choice, in row order.
    ///
    /// # Errors
    /// [`Error::Shape`](crate::Error::Shape) if `users` does not cover the choices;
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for `k ∉ [2, 256]`;
    /// [`Error::Data`](crate::Error::Data) for a choice `≥ k` (no randomness consumed then).
    pub fn randomize_choices<R: Rng + ?Sized>(
        &self,
        users: &UserIndex,
        choices: &[u8],
        k: usize,
        rng: &mut R,
    ) -> Result<Vec<u8>> {
        users.check_rows(choices.len())?;
        super::KaryRr::new(self.eps, k)?;
        if k < 256 {
            check_labels(choices, k as u8)?;
        }
        let mut out = Vec::with_capacity(choices.len());
        for u in 0..users.n_users() {
            let rr = super::KaryRr::new(self.label_eps(users.count(u)), k)?;
            for &y in &choices[users.rows(u)] {
                out.push(rr.sample(y, rng)?);
            }
        }
        Ok(out)
    }

    /// [`UserLevelRr::randomize`] (the same draws), returning the labels with their
    /// provenance: [`Randomizer::UserLevelRr`] with this user budget and the counts of
    /// `users`, privatised by the library with `rng`'s generator (simulation-only for
    /// [`NoiseRng::seeded`]). Fit them with
    /// [`fit_user_rr_privatized`](crate::estimator::user_level::fit_user_rr_privatized).
    ///
    /// # Errors
    /// As [`UserLevelRr::randomize`].
    pub fn privatize(&self, users: &UserIndex, labels: &[u8], rng: &mut NoiseRng) -> Result<PrivatizedLabels> {
        let out = self.randomize(users, labels, rng)?;
        let counts = (0..users.n_users()).map(|u| users.count(u)).collect();
        Ok(PrivatizedLabels::library(
            out,
            Randomizer::UserLevelRr { eps: self.eps, counts },
            rng,
        ))
    }

    /// The guarantee of any estimator computed from labels the caller states this mechanism
    /// randomised with a CSPRNG: pure `ε`-DP, local model, unit user, label-change relation,
    /// **asserted by the caller** ([`Guarantee::user_level_rr`]). Labels from
    /// [`UserLevelRr::privatize`] carry their own provenance and guarantee.
    pub fn guarantee(&self) -> Guarantee {
        Guarantee::user_level_rr(self.eps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn keep_probabilities_match_closed_form() {
        for &(m, e, want) in &[
            (10, 1.0, 0.524_979_2),
            (10, 3.0, 0.574_442_5),
            (50, 8.0, 0.539_914_9),
            (1, 1.0, 0.731_058_6),
        ] {
            let k = UserLevelRr::new(e).unwrap().keep_probability(m);
            assert!((k - want).abs() < 6e-8, "m={m} ε={e}: {k}");
        }
    }

    #[test]
    fn draws_are_blockwise_rr() {
        let users = UserIndex::from_counts(&[3, 1, 5]).unwrap();
        let y: Vec<u8> = (0..9).map(|i| (i % 2) as u8).collect();
        let mech = UserLevelRr::new(2.0).unwrap();
        let out = mech.randomize(&users, &y, &mut simulation_rng(4)).unwrap();
        let mut rng = simulation_rng(4);
        let mut want = Vec::new();
        for u in 0..3 {
            let rr = RandomizedResponse::new(2.0 / users.count(u) as f64).unwrap();
            want.extend(rr.randomize(&y[users.rows(u)], &mut rng).unwrap());
        }
        assert_eq!(out, want);
        assert!(mech.randomize(&users, &y[..8], &mut rng).is_err());
        let mut bad = y.clone();
        bad[4] = 2;
        assert!(mech.randomize(&users, &bad, &mut rng).is_err());
    }
}
