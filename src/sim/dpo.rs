//! Log-linear contextual bandits for the DPO reduction (Zhou, Wu & Orabona (2025), Sec. 4.2,
//! Prop. 4.6, App. E.3): a synthetic stand-in, without language models, for the paper's DPO
//! experiment.
//!
//! A finite set of public states `s` (uniform state distribution `ρ`), `A` actions per state,
//! features `φ(s, a) ∈ ℝ^d`, and the log-linear policy class
//!
//! ```text
//! π_θ(a | s) = exp(⟨θ, φ(s, a)⟩) / Σ_{a'} exp(⟨θ, φ(s, a')⟩).
//! ```
//!
//! With `π*, π_sft ∈ Π` (parameters `θ*`, `θ_sft`), the KL-regularised optimum
//! `π*(a|s) ∝ π_sft(a|s) exp(r*(s,a)/β)` has reward `r*(s, a) = β⟨θ* − θ_sft, φ(s, a)⟩ + const(s)`,
//! so BTL preferences between `a⁰, a¹ ~ π_sft(·|s)` follow logistic regression on
//! `x = φ(s, a¹) − φ(s, a⁰)` with `θ_true = β(θ* − θ_sft)` (Prop. 4.6). The sub-optimality of a
//! policy is the unregularised reward gap `SubOpt(π) = E_{s~ρ}[⟨r*(s,·), π*(·|s) − π(·|s)⟩]`
//! (the `const(s)` cancels).
//!
//! Features are drawn with `⟨1, φ(s, a)⟩ = 0` and `‖φ(s, a)‖ = 1` (Assumption 4.1), so every
//! difference `x` is sum-zero and the constraint `⟨1, θ⟩ = 0` of `Θ_B` changes no preference
//! probability (for general features the sum-zero constraint would restrict `θ`).

use crate::data::PairwiseData;
use crate::error::{Error, Result};
use crate::math::simd::scalar::sigmoid;
use crate::mechanism::uniform_f64;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// A contextual bandit with `states × actions` feature vectors of length `d` (see the module
/// docs). `phi[(s·actions + a)·d + j] = φ(s, a)_j`.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextualBandit {
    /// Features, row-major `(states · actions) × d`.
    pub phi: Vec<f64>,
    /// Number of states (uniformly weighted).
    pub states: usize,
    /// Actions per state.
    pub actions: usize,
    /// Feature dimension.
    pub d: usize,
}

impl ContextualBandit {
    /// Random features: for each `(s, a)` in order, `g ~ N(0, I_d)` (index order), centred
    /// (`g − ḡ1`) and normalised, so `⟨1, φ⟩ = 0` and `‖φ‖ = 1`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if `states = 0`, `actions < 2` or `d < 2`.
    pub fn random<R: Rng + ?Sized>(states: usize, actions: usize, d: usize, rng: &mut R) -> Result<Self> {
        if states == 0 {
            return Err(Error::param("states", "must be >= 1, got 0"));
        }
        if actions < 2 {
            return Err(Error::param("actions", format!("must be >= 2, got {actions}")));
        }
        if d < 2 {
            return Err(Error::param("d", format!("must be >= 2 (sum-zero features), got {d}")));
        }
        let mut phi = Vec::with_capacity(states * actions * d);
        let mut g = vec![0.0; d];
        for _ in 0..states * actions {
            loop {
                for v in g.iter_mut() {
                    *v = StandardNormal.sample(rng);
                }
                let m = g.iter().sum::<f64>() / d as f64;
                g.iter_mut().for_each(|v| *v -= m);
                let nrm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
                if nrm > 1e-12 {
                    g.iter_mut().for_each(|v| *v /= nrm);
                    break;
                }
            }
            phi.extend_from_slice(&g);
        }
        Ok(ContextualBandit {
            phi,
            states,
            actions,
            d,
        })
    }

    /// `φ(s, a)`.
    pub fn feature(&self, s: usize, a: usize) -> &[f64] {
        let i = (s * self.actions + a) * self.d;
        &self.phi[i..i + self.d]
    }

    fn check_theta(&self, name: &'static str, theta: &[f64]) -> Result<()> {
        if theta.len() != self.d {
            return Err(Error::Shape(format!(
                "{name} has {} entries but d = {}",
                theta.len(),
                self.d
            )));
        }
        if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
            return Err(Error::param(name, format!("entry {j} is not finite")));
        }
        Ok(())
    }

    /// `π_θ(· | s)` into `out` (length `actions`), by the max-shifted softmax (no overflow).
    pub(crate) fn policy_probs(&self, theta: &[f64], s: usize, out: &mut [f64]) {
        let mut mx = f64::NEG_INFINITY;
        for (a, o) in out.iter_mut().enumerate() {
            *o = self.feature(s, a).iter().zip(theta).map(|(x, t)| x * t).sum();
            mx = mx.max(*o);
        }
        let mut z = 0.0;
        for o in out.iter_mut() {
            *o = (*o - mx).exp();
            z += *o;
        }
        out.iter_mut().for_each(|o| *o /= z);
    }

    /// The expected reward `J_r(π_θ) = (1/S) Σ_s Σ_a π_θ(a|s) ⟨r, φ(s, a)⟩` of the log-linear
    /// policy with parameter `policy` under the linear reward with parameter `reward`.
    ///
    /// # Errors
    /// Shape mismatches or non-finite parameters.
    pub(crate) fn expected_reward(&self, policy: &[f64], reward: &[f64]) -> Result<f64> {
        self.check_theta("policy", policy)?;
        self.check_theta("reward", reward)?;
        let mut p = vec![0.0; self.actions];
        let mut j = 0.0;
        for s in 0..self.states {
            self.policy_probs(policy, s, &mut p);
            let mut js = 0.0;
            for (a, pa) in p.iter().enumerate() {
                js += pa * self.feature(s, a).iter().zip(reward).map(|(x, r)| x * r).sum::<f64>();
            }
            j += js;
        }
        Ok(j / self.states as f64)
    }

    /// `SubOpt(π_θ) = J_{r*}(π_{θ*}) − J_{r*}(π_θ)` with `r* = β(θ* − θ_sft)` (Zhou, Wu & Orabona
    /// (2025), Prop. 4.6; the unregularised reward gap to the KL-optimal `π* = π_{θ*}`). Can be
    /// negative: `π*` maximises the KL-regularised objective, not the reward alone.
    ///
    /// # Errors
    /// Shape mismatches, non-finite parameters, `β ≤ 0`.
    pub fn suboptimality(&self, theta_star: &[f64], theta_sft: &[f64], beta: f64, theta: &[f64]) -> Result<f64> {
        check_beta(beta)?;
        self.check_theta("theta_sft", theta_sft)?;
        let r: Vec<f64> = theta_star.iter().zip(theta_sft).map(|(a, b)| beta * (a - b)).collect();
        Ok(self.expected_reward(theta_star, &r)? - self.expected_reward(theta, &r)?)
    }

    /// `n` DPO preference records (Zhou, Wu & Orabona (2025), Sec. 4.2): for each record, a state
    /// `s` uniform over the states, two actions `a⁰, a¹ ~ π_sft(·|s)` independently, `x = φ(s, a¹)
    /// − φ(s, a⁰)` and `y ~ Bernoulli(σ(⟨θ_true, x⟩))`, `θ_true = β(θ* − θ_sft)` (Prop. 4.6).
    /// Records with `a⁰ = a¹` have `x = 0` and carry no information, as in the model.
    ///
    /// Draw order per record: one uniform for `s`, one for `a⁰`, one for `a¹` (inverse CDF of
    /// `π_sft(·|s)`), one for `y`.
    ///
    /// # Errors
    /// `n = 0`, `β ≤ 0`, shape mismatches, non-finite parameters.
    pub fn dpo_pairs<R: Rng + ?Sized>(
        &self,
        theta_star: &[f64],
        theta_sft: &[f64],
        beta: f64,
        n: usize,
        rng: &mut R,
    ) -> Result<PairwiseData> {
        check_beta(beta)?;
        self.check_theta("theta_star", theta_star)?;
        self.check_theta("theta_sft", theta_sft)?;
        if n == 0 {
            return Err(Error::param("n", "must be >= 1, got 0"));
        }
        let d = self.d;
        let theta_true: Vec<f64> = theta_star.iter().zip(theta_sft).map(|(a, b)| beta * (a - b)).collect();
        // π_sft(·|s) for every state, once.
        let mut sft = vec![0.0; self.states * self.actions];
        for s in 0..self.states {
            self.policy_probs(theta_sft, s, &mut sft[s * self.actions..(s + 1) * self.actions]);
        }
        let draw = |p: &[f64], u: f64| -> usize {
            let mut c = 0.0;
            for (a, pa) in p.iter().enumerate() {
                c += pa;
                if u < c {
                    return a;
                }
            }
            p.len() - 1
        };
        let mut x = Vec::with_capacity(n * d);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let s = ((uniform_f64(rng) * self.states as f64) as usize).min(self.states - 1);
            let p = &sft[s * self.actions..(s + 1) * self.actions];
            let a0 = draw(p, uniform_f64(rng));
            let a1 = draw(p, uniform_f64(rng));
            let (f0, f1) = (self.feature(s, a0), self.feature(s, a1));
            let mut t = 0.0;
            for j in 0..d {
                let v = f1[j] - f0[j];
                t += v * theta_true[j];
                x.push(v);
            }
            y.push(u8::from(uniform_f64(rng) < sigmoid(t)));
        }
        Ok(PairwiseData {
            x,
            y,
            weights: None,
            n,
            d,
        })
    }
}

fn check_beta(beta: f64) -> Result<()> {
    if !(beta.is_finite() && beta > 0.0) {
        return Err(Error::param("beta", format!("must be finite and > 0, got {beta}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn features_are_sum_zero_unit_vectors() {
        let b = ContextualBandit::random(7, 4, 5, &mut simulation_rng(1)).unwrap();
        for f in b.phi.chunks(5) {
            assert!(f.iter().sum::<f64>().abs() < 1e-14);
            assert!((f.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-14);
        }
    }

    #[test]
    fn optimal_policy_has_zero_suboptimality_and_softmax_is_stable() {
        let b = ContextualBandit::random(20, 5, 4, &mut simulation_rng(2)).unwrap();
        let ts = [1.0, -0.5, 0.0, -0.5];
        let tsft = [0.2, 0.1, -0.4, 0.1];
        assert_eq!(b.suboptimality(&ts, &tsft, 0.5, &ts).unwrap(), 0.0);
        let mut p = vec![0.0; 5];
        b.policy_probs(&[1e3, -1e3, 0.0, 0.0], 0, &mut p);
        assert!(p.iter().all(|v| v.is_finite()) && (p.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn pair_labels_follow_the_reduction() {
        // The empirical frequency of y = 1 among records with a given x matches σ(⟨θ_true, x⟩):
        // checked through the mean residual Σ (y − σ(t)) x / n ≈ 0 (a consequence of E[y|x] = σ(t)).
        let b = ContextualBandit::random(3, 3, 3, &mut simulation_rng(4)).unwrap();
        let (ts, tsft, beta) = ([0.8, -0.4, -0.4], [0.0, 0.3, -0.3], 2.0);
        let data = b.dpo_pairs(&ts, &tsft, beta, 200_000, &mut simulation_rng(5)).unwrap();
        let tt: Vec<f64> = ts.iter().zip(&tsft).map(|(a, c)| beta * (a - c)).collect();
        let mut r = [0.0; 3];
        for (row, &y) in data.x.chunks(3).zip(&data.y) {
            let t: f64 = row.iter().zip(&tt).map(|(a, c)| a * c).sum();
            for j in 0..3 {
                r[j] += (y as f64 - sigmoid(t)) * row[j];
            }
        }
        for v in r {
            assert!((v / 200_000.0).abs() < 0.01, "{v}");
        }
    }

    #[test]
    fn invalid_input_is_typed() {
        let b = ContextualBandit::random(2, 2, 2, &mut simulation_rng(0)).unwrap();
        let mut rng = simulation_rng(0);
        assert!(b.dpo_pairs(&[0.0, 0.0], &[0.0, 0.0], 0.0, 10, &mut rng).is_err());
        assert!(b.dpo_pairs(&[0.0], &[0.0, 0.0], 1.0, 10, &mut rng).is_err());
        assert!(b.dpo_pairs(&[0.0, 0.0], &[0.0, f64::NAN], 1.0, 10, &mut rng).is_err());
        assert!(b.dpo_pairs(&[0.0, 0.0], &[0.0, 0.0], 1.0, 0, &mut rng).is_err());
        assert!(ContextualBandit::random(2, 1, 2, &mut rng).is_err());
    }
}
