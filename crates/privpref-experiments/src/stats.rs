//! Summary statistics of the experiments: means, standard errors, log-log slopes with bootstrap
//! confidence intervals.

use privpref::mechanism::{simulation_rng, uniform_f64};

/// Mean of the finite values (`NaN` if none).
pub fn mean(v: &[f64]) -> f64 {
    let f: Vec<f64> = v.iter().cloned().filter(|x| x.is_finite()).collect();
    if f.is_empty() {
        return f64::NAN;
    }
    f.iter().sum::<f64>() / f.len() as f64
}

/// Standard error of the mean of the finite values (`NaN` with fewer than two).
pub fn std_err(v: &[f64]) -> f64 {
    let f: Vec<f64> = v.iter().cloned().filter(|x| x.is_finite()).collect();
    let k = f.len() as f64;
    if k < 2.0 {
        return f64::NAN;
    }
    let m = f.iter().sum::<f64>() / k;
    (f.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (k - 1.0) / k).sqrt()
}

/// Least-squares slope of `log y` on `log x` over the points with `x, y > 0` and finite (`NaN`
/// with fewer than two distinct abscissae).
pub fn loglog_slope(x: &[f64], y: &[f64]) -> f64 {
    let pts: Vec<(f64, f64)> = x
        .iter()
        .zip(y)
        .filter(|(a, b)| a.is_finite() && b.is_finite() && **a > 0.0 && **b > 0.0)
        .map(|(a, b)| (a.ln(), b.ln()))
        .collect();
    let k = pts.len() as f64;
    if k < 2.0 {
        return f64::NAN;
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx == 0.0 {
        return f64::NAN;
    }
    sxy / sxx
}

/// A slope with a two-sided percentile bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlopeCi {
    /// Slope of the log mean on the log abscissa, on the full data.
    pub slope: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
}

impl SlopeCi {
    /// Whether `v` lies in `[lo, hi]`.
    pub fn contains(&self, v: f64) -> bool {
        self.lo <= v && v <= self.hi
    }
}

/// The log-log slope of the mean of `per_x[k]` (the repetitions at abscissa `x[k]`) against
/// `x`, with a 95 % percentile bootstrap interval from `boot` resamples of the repetitions
/// (seeded: the same inputs give the same interval). When every abscissa has the same number of
/// repetitions, repetition indices are resampled jointly (paired: nested or common-random-number
/// designs keep their correlation); otherwise each abscissa is resampled on its own.
pub fn bootstrap_slope(x: &[f64], per_x: &[Vec<f64>], boot: usize, seed: u64) -> SlopeCi {
    let means: Vec<f64> = per_x.iter().map(|v| mean(v)).collect();
    let slope = loglog_slope(x, &means);
    let paired = per_x.windows(2).all(|w| w[0].len() == w[1].len());
    let mut rng = simulation_rng(seed);
    let mut slopes = Vec::with_capacity(boot);
    let mut m = vec![0.0; per_x.len()];
    for _ in 0..boot {
        if paired {
            let r = per_x.first().map_or(0, |v| v.len());
            let idx: Vec<usize> = (0..r)
                .map(|_| ((uniform_f64(&mut rng) * r as f64) as usize).min(r - 1))
                .collect();
            for (k, v) in per_x.iter().enumerate() {
                m[k] = mean(&idx.iter().map(|&i| v[i]).collect::<Vec<_>>());
            }
        } else {
            for (k, v) in per_x.iter().enumerate() {
                let r = v.len();
                let s: Vec<f64> = (0..r)
                    .map(|_| v[((uniform_f64(&mut rng) * r as f64) as usize).min(r - 1)])
                    .collect();
                m[k] = mean(&s);
            }
        }
        let s = loglog_slope(x, &m);
        if s.is_finite() {
            slopes.push(s);
        }
    }
    slopes.sort_by(f64::total_cmp);
    let q = |p: f64| -> f64 {
        if slopes.is_empty() {
            return f64::NAN;
        }
        slopes[((p * (slopes.len() - 1) as f64).round() as usize).min(slopes.len() - 1)]
    };
    SlopeCi {
        slope,
        lo: q(0.025),
        hi: q(0.975),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_power_law_has_a_degenerate_interval() {
        let x = [1e3, 2e3, 4e3, 8e3];
        let per: Vec<Vec<f64>> = x.iter().map(|&n: &f64| vec![n.powf(-0.5); 10]).collect();
        let ci = bootstrap_slope(&x, &per, 200, 1);
        assert!((ci.slope + 0.5).abs() < 1e-12);
        assert!((ci.lo + 0.5).abs() < 1e-12 && (ci.hi + 0.5).abs() < 1e-12);
    }

    #[test]
    fn noisy_power_law_interval_covers_the_truth() {
        let x = [1e3, 2e3, 4e3, 8e3, 16e3];
        let mut rng = simulation_rng(9);
        let per: Vec<Vec<f64>> = x
            .iter()
            .map(|&n: &f64| (0..200).map(|_| n.powf(-0.5) * (0.5 + uniform_f64(&mut rng))).collect())
            .collect();
        let ci = bootstrap_slope(&x, &per, 500, 2);
        assert!(ci.contains(-0.5), "{ci:?}");
        assert!(ci.hi - ci.lo < 0.1, "{ci:?}");
        assert_eq!(ci, bootstrap_slope(&x, &per, 500, 2));
    }
}

/// The Wilson score interval for a binomial proportion, `k` successes in `m` trials, at the
/// normal quantile `z` (1.959964 for 95%): centre `(p̂ + z²/2m)/(1 + z²/m)`, half-width
/// `z√(p̂(1−p̂)/m + z²/4m²)/(1 + z²/m)` (Wilson, 1927). `(NaN, NaN)` for `m = 0`.
pub fn wilson(k: usize, m: usize, z: f64) -> (f64, f64) {
    if m == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (mf, p) = (m as f64, k as f64 / m as f64);
    let den = 1.0 + z * z / mf;
    let c = (p + z * z / (2.0 * mf)) / den;
    let h = z * (p * (1.0 - p) / mf + z * z / (4.0 * mf * mf)).sqrt() / den;
    (c - h, c + h)
}

/// The empirical `q`-quantile of `v` as the order statistic of rank `⌈q·m⌉` (the smallest `c`
/// with a share `≥ q` of the values `≤ c`); `NaN` values sort last; `NaN` for an empty `v`.
pub fn upper_quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = (q * s.len() as f64).ceil() as usize;
    s[rank.clamp(1, s.len()) - 1]
}

#[cfg(test)]
mod wilson_tests {
    use super::*;

    #[test]
    fn wilson_matches_the_closed_form_and_covers() {
        // 95 of 100 at z = 1.96: (0.88825, 0.97846) (Wilson's formula, computed by hand:
        // centre (0.95 + 0.019208)/1.038416, half 1.96·√(0.000475 + 0.00009604)/1.038416).
        let (lo, hi) = wilson(95, 100, 1.96);
        assert!(
            (lo - 0.888_25).abs() < 1e-4 && (hi - 0.978_46).abs() < 1e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson(0, 10, 1.96);
        assert!(lo.abs() < 1e-15 && hi > 0.2 && hi < 0.35);
        assert_eq!(upper_quantile(&[3.0, 1.0, 2.0, 4.0], 0.5), 2.0);
        assert_eq!(upper_quantile(&[3.0, 1.0, 2.0, 4.0], 0.51), 3.0);
    }
}
