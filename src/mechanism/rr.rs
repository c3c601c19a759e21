//! Binary randomized response (Chowdhury, Zhou & Natarajan (2024), eq. 2).

use super::Mechanism;
use crate::data::check_labels;
use crate::error::{check_eps, Result};
use crate::math::simd::scalar::sigmoid;
use crate::privacy::{NoiseRng, PrivatizedLabels, Randomizer};
use crate::rng::uniform_f64;
use rand::Rng;

/// Binary randomized response `RR_ε` on labels `y ∈ {0, 1}` (Chowdhury, Zhou & Natarajan
/// (2024), eq. 2):
///
/// ```text
/// P[ỹ = y]     = σ(ε)  = e^ε / (1 + e^ε)      (keep)
/// P[ỹ = 1 − y] = σ(−ε) = 1 / (1 + e^ε)        (flip)
/// ```
///
/// with `σ(t) = 1/(1 + e^{−t})`. The likelihood ratio `P[ỹ | y] / P[ỹ | y'] ∈ {1, e^{±ε}}` is at
/// most `e^ε`, with equality, so `RR_ε` is (exactly, not more than) ε-label-LDP (Def. 2.3), and
/// by post-processing every estimator computed from its output is ε-label-DP (Remark 2.4).
///
/// Both probabilities are computed stably from `e^{−ε}`: `σ(ε) = 1/(1 + e^{−ε})` and
/// `σ(−ε) = e^{−ε}/(1 + e^{−ε})`; the flip probability is never formed as `1 − σ(ε)`, which
/// would lose all relative accuracy for large `ε`.
///
/// **Randomise each label exactly once** (at the labeller) and store `ỹ`; training for several
/// epochs, or refitting, must reuse the stored output. Randomising the same label again spends
/// another ε of privacy budget (sequential composition), and averaging repeated draws recovers
/// the clear label.
///
/// Sampling: label `i` is flipped iff `u_i < σ(−ε)`, where `u_i` is
/// [`uniform_f64`](super::uniform_f64) (53 random bits, one `next_u64()` per label, in label
/// order). The realised flip probability is `⌈σ(−ε)·2^53⌉/2^53 ≥ σ(−ε)` (it exceeds the nominal
/// value by at most `2^-53`), so the realised likelihood ratio is never larger than the
/// nominal one: the implemented mechanism is ε-LDP, up to the last-bit rounding of `σ(−ε)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomizedResponse {
    eps: f64,
    keep: f64,
    flip: f64,
}

impl RandomizedResponse {
    /// Binary RR with privacy level `eps`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) unless `eps` is finite and `> 0`
    /// (at `ε = 0` the output is pure noise and the debiased estimators divide by
    /// `c_ε = tanh(ε/2) = 0`; `ε = ∞` is no privacy at all).
    pub fn new(eps: f64) -> Result<Self> {
        check_eps(eps)?;
        Ok(RandomizedResponse {
            eps,
            keep: sigmoid(eps),
            flip: sigmoid(-eps),
        })
    }

    /// `σ(ε) = e^ε/(1 + e^ε)`: the probability that a label is reported unchanged.
    #[inline]
    pub fn keep_probability(&self) -> f64 {
        self.keep
    }

    /// `σ(−ε) = 1/(1 + e^ε)`: the probability that a label is flipped (computed directly, not
    /// as `1 − σ(ε)`).
    #[inline]
    pub fn flip_probability(&self) -> f64 {
        self.flip
    }

    /// Randomises every label once ([`Mechanism::randomize`], the same draws) and returns the
    /// labels with their [`Provenance`](crate::privacy::Provenance):
    /// [`Randomizer::Rr`] at this `ε`, privatised by the library with `rng`'s generator. Real
    /// data: [`NoiseRng::secure`]; a [`NoiseRng::seeded`] generator makes the provenance (and
    /// every guarantee built on it) simulation-only.
    ///
    /// # Errors
    /// As [`Mechanism::randomize`].
    pub fn privatize(&self, labels: &[u8], rng: &mut NoiseRng) -> Result<PrivatizedLabels> {
        let out = self.randomize(labels, rng)?;
        Ok(PrivatizedLabels::library(out, Randomizer::Rr { eps: self.eps }, rng))
    }
}

impl Mechanism for RandomizedResponse {
    /// ε.
    fn eps(&self) -> f64 {
        self.eps
    }

    /// 2.
    fn num_labels(&self) -> usize {
        2
    }

    /// `[σ(ε), σ(−ε), σ(−ε), σ(ε)]` (row `i` = input label, column `j` = output label).
    fn transition_matrix(&self) -> Vec<f64> {
        vec![self.keep, self.flip, self.flip, self.keep]
    }

    /// `ỹ_i = y_i XOR [u_i < σ(−ε)]`, one 53-bit uniform `u_i` per label, in label order.
    ///
    /// # Errors
    /// [`Error::Data`](crate::Error::Data) naming the first row whose label is not 0 or 1; no
    /// randomness is consumed in that case.
    fn randomize<R: Rng + ?Sized>(&self, labels: &[u8], rng: &mut R) -> Result<Vec<u8>> {
        check_labels(labels, 2)?;
        let flip = self.flip;
        Ok(labels.iter().map(|&y| y ^ u8::from(uniform_f64(rng) < flip)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    /// The flip probability actually realised by [`Mechanism::randomize`]:
    /// `P[u < σ(−ε)] = ⌈σ(−ε)·2^53⌉ / 2^53` for `u` uniform on the 53-bit grid of `[0, 1)`.
    fn realised_flip_probability(rr: &RandomizedResponse) -> f64 {
        let scale = (1u64 << 53) as f64;
        (rr.flip_probability() * scale).ceil() / scale
    }

    /// The realised mechanism (53-bit grid) is never less private than the nominal one.
    #[test]
    fn realised_mechanism_is_eps_ldp() {
        for &eps in &[1e-6, 0.1, 1.0, 3f64.ln(), 10.0, 36.0, 37.0, 40.0, 700.0] {
            let rr = RandomizedResponse::new(eps).unwrap();
            let p = realised_flip_probability(&rr);
            assert!(p >= rr.flip_probability());
            assert!(p - rr.flip_probability() <= 2f64.powi(-53));
            // (1 − p)/p ≤ e^ε, to rounding.
            let ratio = (1.0 - p) / p;
            assert!(ratio <= eps.exp() * (1.0 + 1e-14), "eps = {eps}: {ratio} > e^eps");
        }
    }

    #[test]
    fn flips_iff_u_below_flip_probability() {
        // Reproduce the draws by hand: the mechanism consumes one next_u64 per label.
        let rr = RandomizedResponse::new(0.5).unwrap();
        let labels: Vec<u8> = (0..1000).map(|i| (i % 3 == 0) as u8).collect();
        let out = rr.randomize(&labels, &mut simulation_rng(42)).unwrap();
        let mut rng = simulation_rng(42);
        for (i, (&y, &z)) in labels.iter().zip(&out).enumerate() {
            let u = uniform_f64(&mut rng);
            assert_eq!(z, if u < rr.flip_probability() { 1 - y } else { y }, "row {i}");
        }
    }

    #[test]
    fn invalid_labels_consume_no_randomness() {
        let rr = RandomizedResponse::new(1.0).unwrap();
        let mut rng = simulation_rng(3);
        assert!(rr.randomize(&[0, 1, 7], &mut rng).is_err());
        assert_eq!(rng, simulation_rng(3));
    }

    #[test]
    fn empty_input_gives_empty_output() {
        let rr = RandomizedResponse::new(1.0).unwrap();
        assert!(rr.randomize(&[], &mut simulation_rng(0)).unwrap().is_empty());
    }
}
