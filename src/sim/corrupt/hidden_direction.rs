//! The hidden-direction design: data on which an adversary owns one direction of the estimate.

use super::adversary::check_alpha;
use super::Adversary;
use crate::error::{Error, Result};
use crate::mechanism::uniform_f64;
use rand::Rng;

/// The hidden-direction design (ours; it attains the `√α` seminorm term of Zhou, Wu & Orabona
/// (2025), Thm 5.4, without coverage): `n` BTL comparisons with parameter `theta` where the first
/// `n − m` rows have features `x = P_e⊥ (φ¹ − φ⁰)` (Gaussian, orthogonal to the unit direction
/// `e`) and the last `m = ⌊αn⌋` rows are `x = scale·e`, labels from `Bernoulli(σ(xᵀθ))`.
/// Returns the data and the [`Adversary::TargetRows`] that corrupts all `m` hidden rows to label
/// `1` — no other sample covers `e`, so the estimate along `e` is the adversary's: it runs to the
/// boundary of `Θ_{B'}`, and `‖θ̂ − θ‖_{Σ̂} ≈ scale·√α·|Δ_e|` with `|Δ_e| ≈ √(B'² − ‖θ̂_⊥‖²)`
/// (3.87·√α for `B' = 4`, `‖θ‖ = 1`, `e ⟂ θ`, in our simulations).
///
/// Draw order: for each row, `d` + `d` standard normals (the Gaussian rows) or none (hidden rows),
/// then one uniform for the label.
///
/// # Errors
/// Invalid `α`, a zero or mis-sized `e`, non-finite `theta`, `n = 0`.
pub fn hidden_direction_design<R: Rng + ?Sized>(
    n: usize,
    theta: &[f64],
    e: &[f64],
    alpha: f64,
    scale: f64,
    rng: &mut R,
) -> Result<(crate::data::PairwiseData, Adversary)> {
    use rand_distr::{Distribution, StandardNormal};
    check_alpha(alpha)?;
    let d = theta.len();
    if e.len() != d {
        return Err(Error::Shape(format!("direction e has {} entries but d = {d}", e.len())));
    }
    let en = e.iter().map(|v| v * v).sum::<f64>().sqrt();
    if !(en.is_finite() && en > 0.0) {
        return Err(Error::param("e", "must be finite and non-zero"));
    }
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::param("scale", format!("must be finite and > 0, got {scale}")));
    }
    if n == 0 {
        return Err(Error::param("n", "must be >= 1, got 0"));
    }
    let u: Vec<f64> = e.iter().map(|v| v / en).collect();
    let m = (alpha * n as f64).floor() as usize;
    let mut x = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    let mut row = vec![0.0; d];
    for i in 0..n {
        if i < n - m {
            for r in row.iter_mut() {
                let a: f64 = StandardNormal.sample(rng);
                *r = -a;
            }
            for r in row.iter_mut() {
                let b: f64 = StandardNormal.sample(rng);
                *r += b;
            }
            let p: f64 = row.iter().zip(&u).map(|(a, b)| a * b).sum();
            for (r, uj) in row.iter_mut().zip(&u) {
                *r -= p * uj;
            }
        } else {
            for (r, uj) in row.iter_mut().zip(&u) {
                *r = scale * uj;
            }
        }
        let t: f64 = row.iter().zip(theta).map(|(a, b)| a * b).sum();
        if !t.is_finite() {
            return Err(Error::param("theta", "gives a non-finite score"));
        }
        y.push(u8::from(uniform_f64(rng) < crate::math::simd::scalar::sigmoid(t)));
        x.extend_from_slice(&row);
    }
    let data = crate::data::PairwiseData {
        x,
        y,
        weights: None,
        n,
        d,
    };
    Ok((
        data,
        Adversary::TargetRows {
            rows: (n - m..n).collect(),
            label: 1,
        },
    ))
}
