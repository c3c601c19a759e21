//! Closed forms of the theory of Ghazi et al. (2021) used as checks (Lemma 19, Prop. 13 and
//! Fact 14 of their supplement).

use crate::error::{check_delta, check_eps, Error, Result};

/// Lemma 19: the debiased RRTop-k loss is `L·(1 + k p)/(1 − k p) = L·(E + 2k − 1)/(E − 1)`
/// Lipschitz, `p = 1/(E + k − 1)`; the same factor is Thm 17's deviation constant. Evaluated as
/// `(1 + (2k−1)e^{−ε})/(−expm1(−ε))`. Value: 4.4918602 at `(k, ε) = (3, 1)`.
pub fn debiased_lipschitz_factor(eps: f64, k: usize) -> f64 {
    let em = (-eps).exp();
    (1.0 + (2.0 * k as f64 - 1.0) * em) / -(-eps).exp_m1()
}

/// Prop. 13's lower-bound constant `c(ε, δ) = (1 − √((E + δ)/(E + 1)))/2`: every
/// `(ε, δ)`-label-DP algorithm has excess empirical risk at least `c·DL/√n` on the instance of
/// Prop. 13 (`x_i = e_i`, two labels, a linear loss). Values: 0.0724902 (ε = 1, δ = 0), 0.0646976
/// (1, 0.1), 0.1377228 (0.1, 0), 0.1043250 (0.5, 0.01).
///
/// # Errors
/// [`Error::InvalidParam`] unless `ε > 0` finite and `δ ∈ [0, 1)`.
pub fn lower_bound_constant(eps: f64, delta: f64) -> Result<f64> {
    check_eps(eps)?;
    if delta != 0.0 {
        check_delta(delta)?;
    }
    let e = eps.exp();
    Ok(0.5 * (1.0 - ((e + delta) / (e + 1.0)).sqrt()))
}

/// Group privacy (Fact 14): an `(ε, δ)`-label-DP algorithm is
/// `(kε, δ·(e^{kε} − 1)/(e^ε − 1))`-DP for datasets differing in `k` labels. Returns the pair.
/// Values of the factor: 2.6487213 (k = 2, ε = 0.5), 16.337994 (k = 10, ε = 0.1).
///
/// # Errors
/// [`Error::InvalidParam`] unless `ε > 0` finite, `δ ∈ [0, 1)` and `k ≥ 1`.
pub fn group_privacy(k: u32, eps: f64, delta: f64) -> Result<(f64, f64)> {
    check_eps(eps)?;
    if !(0.0..1.0).contains(&delta) {
        return Err(Error::param("delta", format!("must be in [0, 1), got {delta}")));
    }
    if k == 0 {
        return Err(Error::param("k", "must be at least 1"));
    }
    let kf = f64::from(k);
    Ok((kf * eps, delta * (kf * eps).exp_m1() / eps.exp_m1()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        assert!((debiased_lipschitz_factor(1.0, 3) - 4.491_860_2).abs() < 1e-7);
        for (e, d, want) in [
            (1.0, 0.0, 0.072_490_2),
            (1.0, 0.1, 0.064_697_6),
            (0.1, 0.0, 0.137_722_8),
            (0.5, 0.01, 0.104_325_0),
        ] {
            assert!((lower_bound_constant(e, d).unwrap() - want).abs() < 1e-7, "{e} {d}");
        }
        assert!(group_privacy(2, 0.5, 1.0).is_err());
        assert!((group_privacy(2, 0.5, 0.5).unwrap().1 / 0.5 - 2.648_721_3).abs() < 1e-7);
        assert!((group_privacy(10, 0.1, 0.5).unwrap().1 / 0.5 - 16.337_994).abs() < 1e-6);
        assert!(group_privacy(0, 0.1, 0.0).is_err());
        assert!(lower_bound_constant(0.0, 0.0).is_err());
    }
}
