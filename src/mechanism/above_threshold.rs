//! AboveThreshold (the sparse vector technique), the concentration test of AdapUserPriv-SGD
//! (Zhang et al. (2025), "Towards User-level Private RLHF", App. B.1 Alg. 3, with the two
//! corrections below; Dwork & Roth (2014), Thm 3.23, for the mechanism itself).

use crate::error::{check_eps, Error, Result};
use crate::rng::uniform_f64;
use rand::Rng;

/// `Lap(b)` by inversion from one 53-bit uniform on the open interval `(0, 1)`:
/// `u = (k + ½)·2^-53`, `X = b·ln(2u)` for `u < ½` and `X = −b·ln(2 − 2u)` otherwise.
///
/// Floating-point caveat (Mironov 2012): the set of representable outputs of a textbook
/// Laplace sampler is not translation invariant, so the realised mechanism can leak the last
/// bits; this sampler is the textbook one, as in the paper.
pub fn laplace<R: Rng + ?Sized>(b: f64, rng: &mut R) -> f64 {
    let u = uniform_f64(rng) + 0.5 / (1u64 << 53) as f64;
    if u < 0.5 {
        b * (2.0 * u).ln()
    } else {
        -b * (2.0 - 2.0 * u).ln()
    }
}

/// How the Laplace noises of [`AboveThreshold`] are calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum AtCalibration {
    /// `Lap(2Δ/ε)` on the threshold and `Lap(4Δ/ε)` on each query for queries of sensitivity
    /// `Δ` (Dwork & Roth 2014, Thm 3.23): `ε`-DP for the whole stream. AdapUserPriv-SGD's
    /// concentration score has sensitivity `2(ñ−1)/ñ < 2` (changing one user's gradient flips up
    /// to `2(ñ−1)` ordered pairs), so it uses `Δ = 2` where the paper calibrates for 1:
    /// `Lap(4/ε)` and `Lap(8/ε)`.
    #[default]
    Corrected,
    /// The paper's constants `Lap(2/ε)` and `Lap(4/ε)` (sensitivity 1) whatever the query's
    /// sensitivity. With the concentration score (sensitivity < 2) the test then costs up to
    /// `2ε`, which the guarantee records.
    PaperFaithful,
}

/// AboveThreshold with a **single** noisy threshold per instance (the paper's Alg. 2 appears to
/// draw a fresh one at every step, which the privacy proof does not allow), in the mirrored
/// form of the paper (it halts at the first query *below* the threshold):
///
/// ```text
/// T̂ = T + Lap(b_T)                           drawn once, at construction
/// query q_t:  ν_t ~ Lap(b_q);  q_t + ν_t < T̂  →  ⊥ (false), and the instance halts
///                               otherwise     →  ⊤ (true)
/// ```
///
/// with `(b_T, b_q) = (2Δ/ε, 4Δ/ε)` ([`AtCalibration::Corrected`], `Δ` the queries' sensitivity)
/// or `(2/ε, 4/ε)` ([`AtCalibration::PaperFaithful`]). The whole adaptively chosen stream costs
/// `ε` once because at most one ⊥ is released (Dwork & Roth 2014, Thm 3.23, applied to `−q_t`
/// and `−T`). Exact single-query check (paper constants, `ε = 0.5`, `T = 16`):
/// `P[⊥ | q = 16] = 0.5`, `P[⊥ | q = 17] = 0.458531` ([`AboveThreshold::halt_probability`]).
///
/// The noisy threshold is private state: it is never exposed.
#[derive(Debug, Clone)]
pub struct AboveThreshold {
    threshold: f64,
    eps: f64,
    sensitivity: f64,
    calibration: AtCalibration,
    noisy_threshold: f64,
    queries: u64,
    halted: bool,
}

impl AboveThreshold {
    /// A fresh instance: draws the threshold noise from `rng` (one Laplace draw).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `threshold` is finite, `eps > 0` finite and
    /// `sensitivity > 0` finite.
    pub fn new<R: Rng + ?Sized>(
        threshold: f64,
        eps: f64,
        sensitivity: f64,
        calibration: AtCalibration,
        rng: &mut R,
    ) -> Result<Self> {
        if !threshold.is_finite() {
            return Err(Error::param("threshold", format!("must be finite, got {threshold}")));
        }
        check_eps(eps)?;
        if !(sensitivity.is_finite() && sensitivity > 0.0) {
            return Err(Error::param(
                "sensitivity",
                format!("must be finite and > 0, got {sensitivity}"),
            ));
        }
        let mut at = AboveThreshold {
            threshold,
            eps,
            sensitivity,
            calibration,
            noisy_threshold: threshold,
            queries: 0,
            halted: false,
        };
        at.noisy_threshold = threshold + laplace(at.threshold_noise_scale(), rng);
        Ok(at)
    }

    /// The effective sensitivity the noise is calibrated for: `Δ` (corrected) or 1 (paper).
    fn calibrated_sensitivity(&self) -> f64 {
        match self.calibration {
            AtCalibration::Corrected => self.sensitivity,
            AtCalibration::PaperFaithful => 1.0,
        }
    }
    /// The Laplace scale of the threshold noise: `2Δ/ε` (or `2/ε`).
    pub fn threshold_noise_scale(&self) -> f64 {
        2.0 * self.calibrated_sensitivity() / self.eps
    }
    /// The Laplace scale of each query's noise: `4Δ/ε` (or `4/ε`).
    pub fn query_noise_scale(&self) -> f64 {
        4.0 * self.calibrated_sensitivity() / self.eps
    }
    /// The privacy cost of the whole stream for queries of the stated sensitivity: `ε`
    /// (corrected), `max(1, Δ)·ε` (paper-faithful constants with sensitivity `Δ`).
    pub fn privacy_cost(&self) -> f64 {
        match self.calibration {
            AtCalibration::Corrected => self.eps,
            AtCalibration::PaperFaithful => self.eps * self.sensitivity.max(1.0),
        }
    }
    /// The public threshold `T`.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    /// Queries answered so far.
    pub fn queries(&self) -> u64 {
        self.queries
    }
    /// Whether the instance has answered ⊥ (and halted).
    pub fn halted(&self) -> bool {
        self.halted
    }

    /// Answers one query: `true` (⊤, above) or `false` (⊥, below; the instance halts).
    ///
    /// # Errors
    /// [`Error::Privacy`] if the instance has already halted (answering more would spend more
    /// than `ε`); [`Error::InvalidParam`] for a non-finite value.
    pub fn query<R: Rng + ?Sized>(&mut self, value: f64, rng: &mut R) -> Result<bool> {
        if self.halted {
            return Err(Error::Privacy(
                "AboveThreshold has halted: it answers no query after its first ⊥".into(),
            ));
        }
        if !value.is_finite() {
            return Err(Error::param("query", format!("must be finite, got {value}")));
        }
        self.queries += 1;
        let noisy = value + laplace(self.query_noise_scale(), rng);
        if noisy < self.noisy_threshold {
            self.halted = true;
            Ok(false)
        } else {
            Ok(true)
        }
    }

    /// `P[⊥]` for the first query on value `q` of a fresh instance with these parameters,
    /// `P[ν − ζ < T − q]` with `ν ~ Lap(b_q)`, `ζ ~ Lap(b_T)` independent:
    /// for `x ≥ 0`, `P[ν − ζ > x] = (b_q² e^{−x/b_q} − b_T² e^{−x/b_T}) / (2(b_q² − b_T²))`
    /// (`b_q = 2b_T`). For audits and tests.
    pub fn halt_probability(&self, q: f64) -> f64 {
        let (bq, bt) = (self.query_noise_scale(), self.threshold_noise_scale());
        let x = (self.threshold - q).abs();
        let upper = (bq * bq * (-x / bq).exp() - bt * bt * (-x / bt).exp()) / (2.0 * (bq * bq - bt * bt));
        if self.threshold - q >= 0.0 {
            1.0 - upper
        } else {
            upper
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn single_query_probabilities() {
        let at = AboveThreshold::new(16.0, 0.5, 1.0, AtCalibration::PaperFaithful, &mut simulation_rng(0)).unwrap();
        assert!((at.halt_probability(16.0) - 0.5).abs() < 1e-15);
        assert!((at.halt_probability(17.0) - 0.458_531).abs() < 5e-7);
        assert!(at.halt_probability(16.0) / at.halt_probability(17.0) <= 0.5f64.exp());
        // Single queries of sensitivity 2: below e^ε with the corrected noise.
        let at = AboveThreshold::new(40.0, 1.0, 2.0, AtCalibration::Corrected, &mut simulation_rng(1)).unwrap();
        let mut worst = 0.0f64;
        for k in 0..400 {
            let q = 20.0 + 0.1 * k as f64;
            for (a, b) in [(q, q + 2.0), (q + 2.0, q)] {
                let (pa, pb) = (at.halt_probability(a), at.halt_probability(b));
                worst = worst.max(pa / pb).max((1.0 - pa) / (1.0 - pb));
            }
        }
        assert!(worst <= 1f64.exp(), "{worst}");
    }

    /// `P[output = ⊤^{k−1} ⊥]` for query values `q_1 = … = q_{k−1} = a`, `q_k = b` (threshold
    /// 0): `∫ p_ζ(z) S(z − a)^{k−1} F(z − b) dz` with `S(x) = P[ν ≥ x]`, `F = 1 − S`, by the
    /// trapezoid rule on a fine grid.
    fn stream_probability(bt: f64, bq: f64, k: i32, a: f64, b: f64) -> f64 {
        let cdf = |x: f64, s: f64| {
            if x < 0.0 {
                0.5 * (x / s).exp()
            } else {
                1.0 - 0.5 * (-x / s).exp()
            }
        };
        let (lo, hi, n) = (-60.0 * bt, 60.0 * bt, 400_000);
        let h = (hi - lo) / n as f64;
        (0..=n)
            .map(|i| {
                let z = lo + i as f64 * h;
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                w * (-(z.abs()) / bt).exp() / (2.0 * bt) * (1.0 - cdf(z - a, bq)).powi(k - 1) * cdf(z - b, bq)
            })
            .sum::<f64>()
            * h
    }

    /// The privacy loss of a whole stream (k = 100 queries, neighbours shift every query by the
    /// sensitivity 2 in the worst direction): the corrected noise attains e^ε and never exceeds
    /// it; the paper's constants reach e^{2ε}.
    #[test]
    fn stream_privacy_loss_corrected_vs_paper() {
        let eps = 1.0f64;
        let ratio = |bt: f64, bq: f64, c: f64| {
            stream_probability(bt, bq, 100, c + 1.0, c - 1.0) / stream_probability(bt, bq, 100, c - 1.0, c + 1.0)
        };
        for c in [0.0, 5.0, 10.0] {
            let corr = ratio(4.0 / eps, 8.0 / eps, c);
            assert!(corr <= eps.exp() * (1.0 + 1e-9), "c={c}: corrected ratio {corr}");
            let paper = ratio(2.0 / eps, 4.0 / eps, c);
            assert!(paper > corr, "c={c}");
            if c == 0.0 {
                assert!((corr / eps.exp() - 1.0).abs() < 1e-6, "attained: {corr}");
                assert!(
                    paper > 7.3 && paper <= (2.0 * eps).exp() * (1.0 + 1e-9),
                    "paper ratio {paper}"
                );
            }
        }
    }

    /// Seeded statistics of the two noise scales: E|X| = b and Var X = 2b² for X ~ Lap(b).
    #[test]
    fn noise_scales_are_as_calibrated() {
        let n = 40_000;
        for (cal, eps, sens, bt, bq) in [
            (AtCalibration::Corrected, 0.5, 2.0, 8.0, 16.0),
            (AtCalibration::Corrected, 2.0, 2.0, 2.0, 4.0),
            (AtCalibration::PaperFaithful, 0.5, 2.0, 4.0, 8.0),
        ] {
            let mut rng = simulation_rng(17);
            let (mut abs_t, mut sq_t, mut mean_t) = (0.0, 0.0, 0.0);
            let (mut abs_q, mut sq_q) = (0.0, 0.0);
            for _ in 0..n {
                let at = AboveThreshold::new(3.0, eps, sens, cal, &mut rng).unwrap();
                assert_eq!(at.threshold_noise_scale(), bt);
                assert_eq!(at.query_noise_scale(), bq);
                let z = at.noisy_threshold - 3.0;
                abs_t += z.abs();
                sq_t += z * z;
                mean_t += z;
                let v = laplace(at.query_noise_scale(), &mut rng);
                abs_q += v.abs();
                sq_q += v * v;
            }
            let nf = n as f64;
            // E|X| has sd b/√n (Var|X| = b²): 5 sd = 2.5% at n = 40000.
            assert!((abs_t / nf / bt - 1.0).abs() < 0.025, "{cal:?}: E|ζ| = {}", abs_t / nf);
            assert!((abs_q / nf / bq - 1.0).abs() < 0.025, "{cal:?}: E|ν| = {}", abs_q / nf);
            // Var: sd of the sample second moment is √(24b⁴−4b⁴)/√n = √20 b²/√n: 5 sd ≈ 11% of 2b².
            assert!((sq_t / nf / (2.0 * bt * bt) - 1.0).abs() < 0.12);
            assert!((sq_q / nf / (2.0 * bq * bq) - 1.0).abs() < 0.12);
            assert!((mean_t / nf).abs() < 5.0 * (2.0f64).sqrt() * bt / nf.sqrt());
        }
    }

    /// The empirical first-query halting rate of fresh instances matches the closed form.
    #[test]
    fn halting_rate_matches_closed_form() {
        let n = 40_000;
        let mut rng = simulation_rng(99);
        for &q in &[30.0, 38.0, 40.0, 45.0, 60.0] {
            let mut halts = 0usize;
            let mut p = 0.0;
            for _ in 0..n {
                let mut at = AboveThreshold::new(40.0, 1.0, 2.0, AtCalibration::Corrected, &mut rng).unwrap();
                p = at.halt_probability(q);
                if !at.query(q, &mut rng).unwrap() {
                    halts += 1;
                    assert!(at.halted());
                    assert!(at.query(q, &mut rng).is_err());
                }
            }
            let r = halts as f64 / n as f64;
            let z = (r - p) / (p * (1.0 - p) / n as f64).sqrt();
            assert!(z.abs() < 5.0, "q={q}: rate {r} vs {p} (z = {z})");
        }
    }

    #[test]
    fn invalid_parameters() {
        let mut rng = simulation_rng(0);
        assert!(AboveThreshold::new(f64::NAN, 1.0, 1.0, AtCalibration::Corrected, &mut rng).is_err());
        assert!(AboveThreshold::new(1.0, 0.0, 1.0, AtCalibration::Corrected, &mut rng).is_err());
        assert!(AboveThreshold::new(1.0, 1.0, -1.0, AtCalibration::Corrected, &mut rng).is_err());
        let mut at = AboveThreshold::new(1.0, 1.0, 1.0, AtCalibration::Corrected, &mut rng).unwrap();
        assert!(at.query(f64::INFINITY, &mut rng).is_err());
        assert_eq!(at.privacy_cost(), 1.0);
        let p = AboveThreshold::new(1.0, 1.0, 2.0, AtCalibration::PaperFaithful, &mut rng).unwrap();
        assert_eq!(p.privacy_cost(), 2.0);
    }
}
