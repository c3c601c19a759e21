//! Label corruption before or after local privatisation: CTL, LTC and CLC (Zhou, Wu & Orabona
//! (2025), Def. 3.3–3.4 and Remark 3.5).
//!
//! An **α-corruption** replaces the labels of at most `αn` samples by arbitrary values in
//! `{0, 1}`; the adversary may inspect the whole dataset (features, clear labels and the current
//! labels). Features are never corrupted. The orders ([`Pipeline`]):
//!
//! ```text
//! CTL:  y ──corrupt──► ȳ ──RR_ε──► z          (corruption, then LDP)
//! LTC:  y ──RR_ε──► ỹ ──corrupt──► z          (LDP, then corruption)
//! CLC:  y ──corrupt(α₁)──► ȳ ──RR_ε──► ỹ ──corrupt(α₂)──► z
//! ```
//!
//! The analyzer receives `(x_i, z_i)` only. In CTL one corrupted label moves the debiased label
//! `ŷ = c(ε)(z + σ(ε) − 1)` by at most 1 in expectation; in LTC the adversary writes `z`
//! directly and moves `ŷ` by up to `c(ε) = coth(ε/2)`: the source of the extra `c(ε)` in the LTC
//! bounds (Thm 5.4, 5.7).
//!
//! The adversaries ([`Adversary`]). The paper's theory allows any adversary and its experiment
//! uses the oblivious mask; the other strategies are ours, built to probe the bounds:
//!
//! | variant | what it does | budget |
//! |---|---|---|
//! | [`Adversary::ObliviousMask`] | each label set to `1 − y` with prob. `α` (the paper's App. D) | `αn` in expectation |
//! | [`Adversary::FixedCount`] | flips exactly `⌊αn⌋` uniformly chosen current labels | exactly `⌊αn⌋` |
//! | [`Adversary::Constant`] | `⌊αn⌋` uniformly chosen rows get the constant label `c` (flip-to-constant) | `⌊αn⌋` |
//! | [`Adversary::MarginFlip`] | the `⌊αn⌋` rows of largest margin `|xᵀθ|` get the label against the margin, `1[xᵀθ < 0]` (margin-targeted, adaptive) | `⌊αn⌋` |
//! | [`Adversary::DirectionalPush`] | the `⌊αn⌋` samples of largest `|vᵀx|` get label `1[vᵀx > 0]` | `⌊αn⌋` |
//! | [`Adversary::InformedPush`] | as above, spending the budget only where the current label disagrees with `1[vᵀx > 0]` (LTC-informed) | `⌊αn⌋` |
//! | [`Adversary::TargetRows`] | given rows set to a given label (the hidden-direction design, [`hidden_direction_design`]) | `|rows|` |
//!
//! With the oblivious mask the closed forms are (our derivation, checked by Monte Carlo in the
//! tests; `q = σ(−ε)`): flip rate
//! `P[z ≠ y] = q + α(1 − 2q)` (CTL), `q + α(1 − q)` (LTC); bias of the debiased label
//! `|E[ŷ | y] − y| = α` (CTL), `α e^ε/(e^ε − 1)` (LTC); ratio LTC/CTL `(1 + c(ε))/2`; LTC destroys
//! all signal (flip rate `≥ ½`) once `α ≥ (e^ε − 1)/(2e^ε)` ([`ltc_signal_threshold`]).
//!
//! **Reproducibility.** Every transform takes the RNG explicitly and consumes it in a fixed,
//! documented order.

use crate::error::{Error, Result};
use crate::mechanism::{uniform_f64, Mechanism, RandomizedResponse};
use rand::Rng;

/// A label adversary with corruption fraction `α ∈ [0, ½)` (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Adversary {
    /// The paper's experiment (Zhou, Wu & Orabona (2025), App. D): independently for each sample,
    /// with probability `alpha` the current label is set to the wrong label `1 − y_i` (`y` = clear
    /// label). Before RR this is a flip of `y`; after RR it overrides whatever RR reported.
    /// Oblivious (ignores features); respects the budget only in expectation.
    ObliviousMask {
        /// Corruption probability `α`.
        alpha: f64,
    },
    /// Flips exactly `⌊αn⌋` current labels at uniformly chosen distinct rows (partial
    /// Fisher–Yates). Oblivious; respects the budget exactly.
    FixedCount {
        /// Corruption fraction `α`.
        alpha: f64,
    },
    /// Flip-to-constant: `⌊αn⌋` distinct rows chosen uniformly (partial Fisher–Yates) get the
    /// label `label`. Oblivious; respects the budget exactly.
    Constant {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The label written (0 or 1).
        label: u8,
    },
    /// Margin-targeted, adaptive: the `⌊αn⌋` rows with the largest margin `|x_iᵀθ|` under the
    /// adversary's parameter `θ` (typically the truth) get the label that contradicts it,
    /// `1[x_iᵀθ < 0]` — the most informative comparisons are reversed, shrinking the estimate
    /// along `θ`. A [`Adversary::DirectionalPush`] along `−θ`, restricted to high-margin rows.
    MarginFlip {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The adversary's parameter `θ` (length `d`).
        theta: Vec<f64>,
    },
    /// Adaptive, worst-case-like: among the `⌊αn⌋` samples with the largest `|vᵀx_i|` (ties by
    /// row index), sets the current label to `1[vᵀx_i > 0]`. Maximises
    /// `⟨Σ_i (ŷ_i − y_i) x_i, v⟩`, dragging the estimate along `v`.
    DirectionalPush {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The direction `v` (length `d`; need not be normalised).
        direction: Vec<f64>,
    },
    /// LTC-informed push: like [`Adversary::DirectionalPush`] but only rows
    /// whose current label differs from `1[vᵀx_i > 0]` are candidates, so every unit of budget
    /// changes a label.
    InformedPush {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The direction `v` (length `d`).
        direction: Vec<f64>,
    },
    /// Sets the current label of every listed row to `label` (the hidden-direction design, with
    /// [`hidden_direction_design`]). The budget is the number of rows.
    TargetRows {
        /// Rows to corrupt.
        rows: Vec<usize>,
        /// The label written.
        label: u8,
    },
}

fn check_alpha(alpha: f64) -> Result<()> {
    if !(alpha.is_finite() && (0.0..0.5).contains(&alpha)) {
        return Err(Error::param("alpha", format!("must be in [0, 0.5), got {alpha}")));
    }
    Ok(())
}

impl Adversary {
    /// Checks `α ∈ [0, ½)`, the direction (length `d`, finite, non-zero) and the rows (`< n`) and
    /// label (`0` or `1`).
    pub fn validate(&self, n: usize, d: usize) -> Result<()> {
        match self {
            Adversary::ObliviousMask { alpha } | Adversary::FixedCount { alpha } => check_alpha(*alpha),
            Adversary::Constant { alpha, label } => {
                check_alpha(*alpha)?;
                if *label > 1 {
                    return Err(Error::param("label", format!("must be 0 or 1, got {label}")));
                }
                Ok(())
            }
            Adversary::DirectionalPush { alpha, direction }
            | Adversary::InformedPush { alpha, direction }
            | Adversary::MarginFlip {
                alpha,
                theta: direction,
            } => {
                check_alpha(*alpha)?;
                if direction.len() != d {
                    return Err(Error::Shape(format!(
                        "adversary direction has {} entries but d = {d}",
                        direction.len()
                    )));
                }
                if let Some(j) = direction.iter().position(|v| !v.is_finite()) {
                    return Err(Error::param("direction", format!("entry {j} is not finite")));
                }
                if direction.iter().all(|&v| v == 0.0) {
                    return Err(Error::param("direction", "is the zero vector"));
                }
                Ok(())
            }
            Adversary::TargetRows { rows, label } => {
                if *label > 1 {
                    return Err(Error::param("label", format!("must be 0 or 1, got {label}")));
                }
                if let Some(&r) = rows.iter().find(|&&r| r >= n) {
                    return Err(Error::param("rows", format!("row {r} is out of range (n = {n})")));
                }
                if 2 * rows.len() >= n.max(1) {
                    return Err(Error::param(
                        "rows",
                        format!("{} of {n} rows is not an α < 1/2 corruption", rows.len()),
                    ));
                }
                Ok(())
            }
        }
    }

    /// The number of labels the adversary may change on `n` samples: `⌊αn⌋` (the oblivious mask:
    /// its expectation `αn`, rounded down), or the number of target rows.
    pub fn budget(&self, n: usize) -> usize {
        match self {
            Adversary::ObliviousMask { alpha }
            | Adversary::FixedCount { alpha }
            | Adversary::Constant { alpha, .. }
            | Adversary::MarginFlip { alpha, .. }
            | Adversary::DirectionalPush { alpha, .. }
            | Adversary::InformedPush { alpha, .. } => (alpha * n as f64).floor() as usize,
            Adversary::TargetRows { rows, .. } => rows.len(),
        }
    }

    /// Corrupts `labels` in place (the current labels: clear labels in CTL, RR outputs in LTC)
    /// and returns the number of labels changed. `x` is the row-major `n × d` feature matrix,
    /// `y` the clear labels.
    ///
    /// Randomness: [`Adversary::ObliviousMask`] draws one [`uniform_f64`] per row in row order;
    /// [`Adversary::FixedCount`] and [`Adversary::Constant`] draw `⌊αn⌋` uniforms (partial
    /// Fisher–Yates over the row indices); the others draw nothing.
    ///
    /// # Errors
    /// Shape mismatches and invalid parameters ([`Adversary::validate`]).
    pub fn corrupt<R: Rng + ?Sized>(
        &self,
        x: &[f64],
        d: usize,
        y: &[u8],
        labels: &mut [u8],
        rng: &mut R,
    ) -> Result<usize> {
        let n = labels.len();
        if y.len() != n || x.len() != n * d {
            return Err(Error::Shape(format!(
                "corrupt: {n} labels, {} clear labels, {} feature values for d = {d}",
                y.len(),
                x.len()
            )));
        }
        self.validate(n, d)?;
        let mut changed = 0;
        let mut set = |i: usize, v: u8, labels: &mut [u8]| {
            if labels[i] != v {
                labels[i] = v;
                changed += 1;
            }
        };
        match self {
            Adversary::ObliviousMask { alpha } => {
                for (i, &yi) in y.iter().enumerate() {
                    if uniform_f64(rng) < *alpha {
                        set(i, 1 - yi, labels);
                    }
                }
            }
            Adversary::FixedCount { alpha } | Adversary::Constant { alpha, .. } => {
                let k = (alpha * n as f64).floor() as usize;
                let mut idx: Vec<usize> = (0..n).collect();
                for j in 0..k {
                    let r = j + ((uniform_f64(rng) * (n - j) as f64) as usize).min(n - j - 1);
                    idx.swap(j, r);
                    let i = idx[j];
                    let v = match self {
                        Adversary::Constant { label, .. } => *label,
                        _ => 1 - labels[i],
                    };
                    set(i, v, labels);
                }
            }
            Adversary::MarginFlip { alpha, theta } => {
                let k = (alpha * n as f64).floor() as usize;
                let m: Vec<f64> = x
                    .chunks_exact(d)
                    .map(|r| r.iter().zip(theta).map(|(a, b)| a * b).sum())
                    .collect();
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by(|&a, &b| m[b].abs().total_cmp(&m[a].abs()).then(a.cmp(&b)));
                for &i in order.iter().take(k) {
                    set(i, u8::from(m[i] < 0.0), labels);
                }
            }
            Adversary::DirectionalPush { alpha, direction } | Adversary::InformedPush { alpha, direction } => {
                let informed = matches!(self, Adversary::InformedPush { .. });
                let k = (alpha * n as f64).floor() as usize;
                let proj: Vec<f64> = x
                    .chunks_exact(d)
                    .map(|r| r.iter().zip(direction).map(|(a, b)| a * b).sum())
                    .collect();
                let mut cand: Vec<usize> = (0..n)
                    .filter(|&i| !informed || labels[i] != u8::from(proj[i] > 0.0))
                    .collect();
                cand.sort_by(|&a, &b| proj[b].abs().total_cmp(&proj[a].abs()).then(a.cmp(&b)));
                for &i in cand.iter().take(k) {
                    set(i, u8::from(proj[i] > 0.0), labels);
                }
            }
            Adversary::TargetRows { rows, label } => {
                for &i in rows {
                    set(i, *label, labels);
                }
            }
        }
        Ok(changed)
    }
}

/// The order of corruption and local privatisation (Zhou, Wu & Orabona (2025), Def. 3.4,
/// Remark 3.5).
#[derive(Debug, Clone, PartialEq)]
pub enum Pipeline {
    /// No corruption: `z = RR_ε(y)`.
    Clean,
    /// Corruption-then-LDP: `z = RR_ε(A(y))`.
    Ctl(Adversary),
    /// LDP-then-corruption: `z = A(RR_ε(y))`.
    Ltc(Adversary),
    /// Corruption, LDP, corruption: `z = A₂(RR_ε(A₁(y)))` (Zhou, Wu & Orabona (2025), Remark 3.5,
    /// App. E.4).
    Clc(Adversary, Adversary),
}

/// What [`Pipeline::apply`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Corrupted {
    /// The labels the analyzer receives.
    pub z: Vec<u8>,
    /// Labels changed by the adversary before RR.
    pub changed_before: usize,
    /// Labels changed by the adversary after RR.
    pub changed_after: usize,
}

impl Pipeline {
    /// Runs the pipeline on clear labels `y` with randomized response `rr`. RNG order: the
    /// first adversary's draws (if any), then RR (one uniform per label, in row order), then the
    /// second adversary's draws.
    ///
    /// # Errors
    /// Shape mismatches, labels outside `{0, 1}`, invalid adversary parameters.
    pub fn apply<R: Rng + ?Sized>(
        &self,
        x: &[f64],
        d: usize,
        y: &[u8],
        rr: &RandomizedResponse,
        rng: &mut R,
    ) -> Result<Corrupted> {
        let (before, after) = match self {
            Pipeline::Clean => (None, None),
            Pipeline::Ctl(a) => (Some(a), None),
            Pipeline::Ltc(a) => (None, Some(a)),
            Pipeline::Clc(a, b) => (Some(a), Some(b)),
        };
        let mut cur = y.to_vec();
        let changed_before = match before {
            Some(a) => a.corrupt(x, d, y, &mut cur, rng)?,
            None => 0,
        };
        let mut z = rr.randomize(&cur, rng)?;
        let changed_after = match after {
            Some(a) => a.corrupt(x, d, y, &mut z, rng)?,
            None => 0,
        };
        Ok(Corrupted {
            z,
            changed_before,
            changed_after,
        })
    }
}

/// `c(ε) = coth(ε/2) = (e^ε + 1)/(e^ε − 1)`: the privacy factor of Zhou, Wu & Orabona (2025),
/// Alg. 1, the scale of the debiased label `ŷ = c(ε)(z + σ(ε) − 1)`. Its reciprocal `tanh(ε/2)`
/// is the `c_ε` of Chowdhury, Zhou & Natarajan (2024).
pub fn rr_privacy_factor(eps: f64) -> f64 {
    1.0 / (0.5 * eps).tanh()
}

/// The closed forms of the oblivious mask at privacy `ε` and corruption `α` (see the module docs):
/// `(flip rate CTL, flip rate LTC, |bias| CTL, |bias| LTC)` with `q = σ(−ε)`:
/// `q + α(1 − 2q)`, `q + α(1 − q)`, `α`, `α e^ε/(e^ε − 1)`.
pub fn oblivious_mask_closed_forms(eps: f64, alpha: f64) -> (f64, f64, f64, f64) {
    let q = 1.0 / (1.0 + eps.exp());
    (
        q + alpha * (1.0 - 2.0 * q),
        q + alpha * (1.0 - q),
        alpha,
        alpha / (-(-eps).exp_m1()),
    )
}

/// The corruption fraction at which LTC with the oblivious mask destroys all signal (flip rate
/// `q + α(1 − q) ≥ ½`): `α* = (e^ε − 1)/(2e^ε)` (0.0476 at ε = 0.1, 0.197 at
/// ε = 0.5). CTL keeps signal for every `α < ½`.
pub fn ltc_signal_threshold(eps: f64) -> f64 {
    -0.5 * (-eps).exp_m1()
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    fn grid(n: usize, d: usize) -> Vec<f64> {
        (0..n * d).map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0).collect()
    }

    #[test]
    fn fixed_count_flips_exactly_the_budget_at_distinct_rows() {
        let (n, d) = (1000, 3);
        let x = grid(n, d);
        let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
        let mut z = y.clone();
        let a = Adversary::FixedCount { alpha: 0.1 };
        let k = a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(1)).unwrap();
        assert_eq!(k, 100);
        assert_eq!(y.iter().zip(&z).filter(|(a, b)| a != b).count(), 100);
        assert_eq!(a.budget(n), 100);
    }

    #[test]
    fn directional_push_picks_the_largest_projections() {
        let (n, d) = (200, 2);
        let x = grid(n, d);
        let y = vec![0u8; n];
        let v = vec![1.0, -0.5];
        let mut z = y.clone();
        let a = Adversary::DirectionalPush {
            alpha: 0.05,
            direction: v.clone(),
        };
        a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(0)).unwrap();
        let proj: Vec<f64> = x.chunks(d).map(|r| r[0] * v[0] + r[1] * v[1]).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| proj[b].abs().total_cmp(&proj[a].abs()).then(a.cmp(&b)));
        for (rank, &i) in order.iter().enumerate() {
            let expect = if rank < 10 { u8::from(proj[i] > 0.0) } else { 0 };
            assert_eq!(z[i], expect, "row {i} rank {rank}");
        }
    }

    #[test]
    fn informed_push_changes_exactly_the_budget() {
        let (n, d) = (400, 3);
        let x = grid(n, d);
        let y: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
        let mut z = y.clone();
        let a = Adversary::InformedPush {
            alpha: 0.1,
            direction: vec![0.3, 1.0, -2.0],
        };
        assert_eq!(a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(0)).unwrap(), 40);
    }

    #[test]
    fn constant_and_margin_flip() {
        let (n, d) = (500, 2);
        let x = grid(n, d);
        let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
        let mut z = y.clone();
        let a = Adversary::Constant { alpha: 0.2, label: 1 };
        let k = a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(2)).unwrap();
        // 100 rows set to 1: about half were 1 already; every change is 0 -> 1.
        assert!(k > 20 && k < 80, "{k}");
        assert!(y.iter().zip(&z).all(|(&a, &b)| a == b || (a == 0 && b == 1)));
        let theta = vec![1.0, 0.5];
        let mut z = y.clone();
        Adversary::MarginFlip {
            alpha: 0.1,
            theta: theta.clone(),
        }
        .corrupt(&x, d, &y, &mut z, &mut simulation_rng(0))
        .unwrap();
        let m: Vec<f64> = x.chunks(d).map(|r| r[0] + 0.5 * r[1]).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| m[b].abs().total_cmp(&m[a].abs()).then(a.cmp(&b)));
        for (rank, &i) in order.iter().enumerate() {
            let expect = if rank < 50 { u8::from(m[i] < 0.0) } else { y[i] };
            assert_eq!(z[i], expect, "row {i}");
        }
    }

    #[test]
    fn invalid_parameters_are_typed_errors() {
        let x = grid(10, 2);
        let y = vec![0u8; 10];
        let mut z = y.clone();
        let mut rng = simulation_rng(0);
        for a in [
            Adversary::FixedCount { alpha: 0.5 },
            Adversary::FixedCount { alpha: -0.1 },
            Adversary::ObliviousMask { alpha: f64::NAN },
            Adversary::DirectionalPush {
                alpha: 0.1,
                direction: vec![1.0],
            },
            Adversary::DirectionalPush {
                alpha: 0.1,
                direction: vec![0.0, 0.0],
            },
            Adversary::TargetRows {
                rows: vec![10],
                label: 1,
            },
            Adversary::TargetRows {
                rows: vec![1],
                label: 2,
            },
            Adversary::Constant { alpha: 0.1, label: 2 },
            Adversary::MarginFlip {
                alpha: 0.1,
                theta: vec![1.0, 2.0, 3.0],
            },
            Adversary::TargetRows {
                rows: (0..5).collect(),
                label: 1,
            },
        ] {
            assert!(a.corrupt(&x, 2, &y, &mut z, &mut rng).is_err(), "{a:?}");
        }
        assert!(Adversary::FixedCount { alpha: 0.1 }
            .corrupt(&x, 2, &y[..5], &mut z, &mut rng)
            .is_err());
    }

    #[test]
    fn closed_forms_of_the_spec() {
        // Threshold 0.0476 at ε = 0.1, 0.197 at ε = 0.5; ratio (1 + c)/2.
        assert!((ltc_signal_threshold(0.1) - 0.04758).abs() < 1e-4);
        assert!((ltc_signal_threshold(0.5) - 0.19673).abs() < 1e-4);
        assert!((rr_privacy_factor(1.0) - 2.163953).abs() < 1e-6);
        for (eps, r) in [(1.0, 1.582), (0.5, 2.541), (0.1, 10.51)] {
            let (_, _, bc, bl) = oblivious_mask_closed_forms(eps, 0.1);
            assert!((bl / bc - r).abs() < 2e-3, "eps {eps}: {}", bl / bc);
            assert!((bl / bc - (1.0 + rr_privacy_factor(eps)) / 2.0).abs() < 1e-12);
        }
        // At the threshold the LTC flip rate is exactly 1/2.
        for eps in [0.1, 0.5, 1.0, 3.0] {
            let (_, fl, _, _) = oblivious_mask_closed_forms(eps, ltc_signal_threshold(eps));
            assert!((fl - 0.5).abs() < 1e-15);
        }
    }

    #[test]
    fn hidden_design_is_orthogonal_off_the_hidden_rows() {
        let theta = [0.5, -0.5, 0.0, 0.0];
        let e = [0.0, 0.0, 1.0, -1.0];
        let (data, adv) = hidden_direction_design(400, &theta, &e, 0.05, 1.0, &mut simulation_rng(3)).unwrap();
        let Adversary::TargetRows { rows, label } = &adv else {
            panic!("TargetRows expected")
        };
        assert_eq!(rows.len(), 20);
        assert_eq!(*label, 1);
        for (i, r) in data.x.chunks(4).enumerate() {
            let p = (r[2] - r[3]) / 2f64.sqrt();
            if i < 380 {
                assert!(p.abs() < 1e-12);
            } else {
                assert!((p - 1.0).abs() < 1e-12);
            }
        }
    }
}
