//! Synthetic user-level preference data: `n` users × `m_u` BTL comparisons (the data model of
//! Zhang et al. (2025), Sec. 3.1).

use crate::data::{PairwiseData, UserIndex};
use crate::error::{Error, Result};
use crate::math::simd::scalar::sigmoid;
use crate::mechanism::uniform_f64;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// How the feature differences `x = φ(s, a¹) − φ(s, a⁰)` are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UserFeatures {
    /// `φ⁰, φ¹ ~ N(0, I_d)`, `x = φ¹ − φ⁰ ~ N(0, 2I_d)` (as [`btl_pairs`](super::btl_pairs)):
    /// unbounded, so no feature bound `L` holds exactly.
    Gaussian,
    /// `x` uniform on the sphere `‖x‖ = radius` (`g ~ N(0, I_d)`, `x = radius·g/‖g‖`, shrunk by
    /// a few ulps when rounding lands above the radius, so `‖x‖ ≤ radius` exactly): the
    /// bound `‖x‖ ≤ 2L` holds with `L = radius/2` (our sanity check of the RR-vs-DP-SGD trend in m
    /// uses radius 1).
    Sphere {
        /// `‖x‖`.
        radius: f64,
    },
}

/// User-level data: the comparisons (rows grouped by user) and the user index.
#[derive(Debug, Clone, PartialEq)]
pub struct UserLevelData {
    /// Features and clear labels.
    pub data: PairwiseData,
    /// Which rows belong to which user.
    pub users: UserIndex,
}

/// BTL comparisons for users with `counts[u]` comparisons each, parameter `θ = theta`:
/// `y ~ Bernoulli(σ(xᵀθ))`, `y = 1` meaning `a¹` preferred; users are i.i.d. (the paper's
/// model: every user's items come from the same distribution).
///
/// **Draw order** (fixed; the same seed gives the same data): users in order, their comparisons
/// in order; per comparison `d` standard normals (`Gaussian`: `d` for `φ⁰` then `d` for `φ¹`, as
/// [`btl_pairs`](super::btl_pairs)), then one [`uniform_f64`] for the label
/// (`y = [u < σ(xᵀθ)]`). With equal counts, the first `n'` users of an `n`-user draw equal the
/// `n'`-user draw.
///
/// # Errors
/// [`Error::InvalidParam`] for an empty `theta` or a non-finite entry, a non-positive or
/// non-finite sphere radius; errors of [`UserIndex::from_counts`] (no users, an empty user).
pub fn btl_users<R: Rng + ?Sized>(
    counts: &[usize],
    theta: &[f64],
    features: UserFeatures,
    rng: &mut R,
) -> Result<UserLevelData> {
    let users = UserIndex::from_counts(counts)?;
    let d = theta.len();
    if d == 0 {
        return Err(Error::param("theta", "is empty (d = 0)"));
    }
    if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
        return Err(Error::param("theta", format!("entry {j} is not finite ({})", theta[j])));
    }
    if let UserFeatures::Sphere { radius } = features {
        if !(radius.is_finite() && radius > 0.0) {
            return Err(Error::param("radius", format!("must be finite and > 0, got {radius}")));
        }
    }
    let n = users.n_rows();
    let nd = n
        .checked_mul(d)
        .ok_or_else(|| Error::param("counts", format!("n·d = {n}·{d} overflows")))?;
    let mut x = Vec::with_capacity(nd);
    let mut y = Vec::with_capacity(n);
    let mut row = vec![0.0; d];
    for _ in 0..n {
        match features {
            UserFeatures::Gaussian => {
                for r in row.iter_mut() {
                    *r = StandardNormal.sample(rng);
                }
                for r in row.iter_mut() {
                    let p1: f64 = StandardNormal.sample(rng);
                    *r = p1 - *r;
                }
            }
            UserFeatures::Sphere { radius } => loop {
                for r in row.iter_mut() {
                    *r = StandardNormal.sample(rng);
                }
                let len = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                if len > 0.0 {
                    row.iter_mut().for_each(|v| *v = *v / len * radius);
                    // Rounding may leave ‖x‖ a few ulps above the radius: shrink until it is not
                    // (feature-bound checks are strict).
                    while row.iter().map(|v| v * v).sum::<f64>().sqrt() > radius {
                        row.iter_mut().for_each(|v| *v *= 1.0 - f64::EPSILON);
                    }
                    break;
                }
            },
        }
        let t: f64 = row.iter().zip(theta).map(|(a, b)| a * b).sum();
        y.push(u8::from(uniform_f64(rng) < sigmoid(t)));
        x.extend_from_slice(&row);
    }
    Ok(UserLevelData {
        data: PairwiseData {
            x,
            y,
            weights: None,
            n,
            d,
        },
        users,
    })
}

/// [`btl_users`] with `n_users` users of `m` comparisons each.
///
/// # Errors
/// As [`btl_users`].
pub fn btl_users_equal<R: Rng + ?Sized>(
    n_users: usize,
    m: usize,
    theta: &[f64],
    features: UserFeatures,
    rng: &mut R,
) -> Result<UserLevelData> {
    btl_users(&vec![m; n_users], theta, features, rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn shapes_norms_and_reproducibility() {
        let theta = [0.5, -0.5, 0.0];
        let a = btl_users(
            &[2, 5, 1],
            &theta,
            UserFeatures::Sphere { radius: 1.0 },
            &mut simulation_rng(3),
        )
        .unwrap();
        let b = btl_users(
            &[2, 5, 1],
            &theta,
            UserFeatures::Sphere { radius: 1.0 },
            &mut simulation_rng(3),
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.data.n, 8);
        assert_eq!(a.users.rows(1), 2..7);
        for r in a.data.x.chunks(3) {
            let n = r.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(n <= 1.0 && n > 1.0 - 1e-14);
        }
        // Nested: the first users of a bigger draw are the smaller draw.
        let big = btl_users_equal(5, 3, &theta, UserFeatures::Gaussian, &mut simulation_rng(4)).unwrap();
        let small = btl_users_equal(2, 3, &theta, UserFeatures::Gaussian, &mut simulation_rng(4)).unwrap();
        assert_eq!(&big.data.x[..18], &small.data.x[..]);
        assert_eq!(&big.data.y[..6], &small.data.y[..]);
        // Gaussian features are the btl_pairs features.
        let pairs = crate::sim::btl_pairs(15, &theta, &mut simulation_rng(4)).unwrap();
        assert_eq!(pairs.x, big.data.x);
        assert_eq!(pairs.y, big.data.y);
    }

    #[test]
    fn invalid_parameters() {
        let mut rng = simulation_rng(0);
        assert!(btl_users(&[], &[1.0], UserFeatures::Gaussian, &mut rng).is_err());
        assert!(btl_users(&[1, 0], &[1.0], UserFeatures::Gaussian, &mut rng).is_err());
        assert!(btl_users(&[1], &[], UserFeatures::Gaussian, &mut rng).is_err());
        assert!(btl_users(&[1], &[f64::NAN], UserFeatures::Gaussian, &mut rng).is_err());
        assert!(btl_users(&[1], &[1.0], UserFeatures::Sphere { radius: 0.0 }, &mut rng).is_err());
    }
}
