//! Synthetic contextual bandits for pessimistic policy optimisation (our design: the anonymous
//! 2024 paper has no experiments; `A` unit feature vectors per state, `L = 1`), with a
//! **coverage knob**:
//!
//! * features `φ(s, a) ∈ ℝ^d`, `‖φ‖ = 1`. The first `d − k` coordinates are the *common* block,
//!   the last `k` the *rare* block. Common actions (`a < A − A_rare`) have
//!   `φ = (u, 0)`, `u` uniform on the unit sphere of the common block; rare actions have
//!   `φ = (√(1 − w²) u, w r)`, `r = v/‖v‖`, `v = −m e₁ + (1 − m) z`, `z` uniform on the unit
//!   sphere of the rare block, `e₁` its first axis (`w` = `rare_weight`, `m` = `rare_mean`;
//!   `m = 0`: `r` uniform; `m > 0`: rare actions share the direction `−e₁`, so a `θ*` with a
//!   positive `e₁` component makes them worse in truth; `r = −e₁` in the null event `v = 0`);
//! * the preference data (private) is collected by a behaviour policy that compares two distinct
//!   common actions with probability `1 − p_rare` and a common with a rare action with
//!   probability `p_rare` (uniformly within each group), on fresh states:
//!   `x = φ(s, a¹) − φ(s, a⁰)`, `y ~ Bernoulli(σ(⟨θ*, x⟩))`. Small `p_rare` = poor coverage of the
//!   rare block: `Σ_D` has eigenvalues `O(p_rare)` there;
//! * the public state sample on which policies are chosen and evaluated is drawn separately.
//!
//! Draw order (fixed): per state, actions in index order; per action the common-block normals,
//! then (rare actions) the rare-block normals. Per comparison: the state's features, then one
//! uniform for the group, two for the actions, one for the label.

use crate::data::PairwiseData;
use crate::error::{Error, Result};
use crate::math::simd::scalar::sigmoid;
use crate::mechanism::{mix_seed, simulation_rng, uniform_f64};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;

/// Shape of the bandit (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct BanditConfig {
    /// Feature dimension `d`.
    pub d: usize,
    /// Actions per state `A`.
    pub actions: usize,
    /// Rare actions `A_rare < A` (the last ones).
    pub rare_actions: usize,
    /// Dimension `k < d` of the rare block.
    pub rare_dim: usize,
    /// Weight `w ∈ (0, 1]` of the rare block in rare actions' features.
    pub rare_weight: f64,
    /// Shared direction `m ∈ [0, 1]` of the rare block (module docs).
    pub rare_mean: f64,
}

impl BanditConfig {
    fn validate(&self) -> Result<()> {
        if self.d < 2 || self.rare_dim == 0 || self.rare_dim >= self.d {
            return Err(Error::param(
                "rare_dim",
                format!("need 1 <= k < d, got k = {}, d = {}", self.rare_dim, self.d),
            ));
        }
        if self.actions < 3 || self.rare_actions == 0 || self.rare_actions + 2 > self.actions {
            return Err(Error::param(
                "rare_actions",
                format!(
                    "need A >= 3 and 1 <= A_rare <= A - 2, got A = {}, A_rare = {}",
                    self.actions, self.rare_actions
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.rare_mean) {
            return Err(Error::param(
                "rare_mean",
                format!("must be in [0, 1], got {}", self.rare_mean),
            ));
        }
        if !(self.rare_weight > 0.0 && self.rare_weight <= 1.0) {
            return Err(Error::param(
                "rare_weight",
                format!("must be in (0, 1], got {}", self.rare_weight),
            ));
        }
        Ok(())
    }

    fn unit<R: Rng + ?Sized>(k: usize, rng: &mut R, out: &mut [f64]) {
        loop {
            for o in out.iter_mut().take(k) {
                *o = StandardNormal.sample(rng);
            }
            let n = out[..k].iter().map(|v| v * v).sum::<f64>().sqrt();
            if n > 0.0 {
                out[..k].iter_mut().for_each(|v| *v /= n);
                return;
            }
        }
    }

    /// The `A × d` features of one state (draw order in the module docs).
    pub fn state<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) {
        let (d, k) = (self.d, self.rare_dim);
        let dc = d - k;
        let first_rare = self.actions - self.rare_actions;
        for a in 0..self.actions {
            let row = &mut out[a * d..(a + 1) * d];
            row.iter_mut().for_each(|v| *v = 0.0);
            Self::unit(dc, rng, &mut row[..dc]);
            if a >= first_rare {
                let w = self.rare_weight;
                let s = (1.0 - w * w).sqrt();
                row[..dc].iter_mut().for_each(|v| *v *= s);
                Self::unit(k, rng, &mut row[dc..]);
                let m = self.rare_mean;
                row[dc..].iter_mut().for_each(|v| *v *= 1.0 - m);
                row[dc] -= m;
                let nr = row[dc..].iter().map(|v| v * v).sum::<f64>().sqrt();
                if nr > 0.0 {
                    row[dc..].iter_mut().for_each(|v| *v *= w / nr);
                } else {
                    // v = 0 (possible for k = 1, m = ½): the shared direction −e₁.
                    row[dc..].iter_mut().for_each(|v| *v = 0.0);
                    row[dc] = -w;
                }
            }
        }
    }

    /// `m` public states, row-major `m × A × d`.
    ///
    /// # Errors
    /// Invalid configuration.
    pub fn states<R: Rng + ?Sized>(&self, m: usize, rng: &mut R) -> Result<Vec<f64>> {
        self.validate()?;
        let w = self.actions * self.d;
        let mut phi = vec![0.0; m * w];
        for s in 0..m {
            self.state(rng, &mut phi[s * w..(s + 1) * w]);
        }
        Ok(phi)
    }

    /// `n` BTL comparisons from the behaviour policy (module docs) with parameter `theta`.
    ///
    /// # Errors
    /// Invalid configuration, `p_rare ∉ [0, 1]`, `theta` of the wrong length.
    pub fn preferences<R: Rng + ?Sized>(
        &self,
        n: usize,
        p_rare: f64,
        theta: &[f64],
        rng: &mut R,
    ) -> Result<PairwiseData> {
        self.validate()?;
        if !(0.0..=1.0).contains(&p_rare) {
            return Err(Error::param("p_rare", format!("must be in [0, 1], got {p_rare}")));
        }
        if theta.len() != self.d || n == 0 {
            return Err(Error::Shape(format!(
                "theta has {} entries (d = {}), n = {n}",
                theta.len(),
                self.d
            )));
        }
        let d = self.d;
        let common = self.actions - self.rare_actions;
        let mut feats = vec![0.0; self.actions * d];
        let mut x = Vec::with_capacity(n * d);
        let mut y = Vec::with_capacity(n);
        let pick = |rng: &mut R, k: usize| ((uniform_f64(rng) * k as f64) as usize).min(k - 1);
        for _ in 0..n {
            self.state(rng, &mut feats);
            let rare = uniform_f64(rng) < p_rare;
            let (a0, a1) = if rare {
                (pick(rng, common), common + pick(rng, self.rare_actions))
            } else {
                let a0 = pick(rng, common);
                let mut a1 = pick(rng, common - 1);
                if a1 >= a0 {
                    a1 += 1;
                }
                (a0, a1)
            };
            let mut t = 0.0;
            for j in 0..d {
                let v = feats[a1 * d + j] - feats[a0 * d + j];
                t += v * theta[j];
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

/// `n × A × d` i.i.d. unit feature vectors (uniform directions), generated in parallel in
/// fixed chunks of 4096 states, chunk `c` from `simulation_rng(mix_seed(seed, c))`: the same
/// array for any thread count. For benchmarks and large tests.
pub fn unit_features(n: usize, a: usize, d: usize, seed: u64) -> Vec<f64> {
    const CHUNK: usize = 4096;
    let w = a * d;
    let mut phi = vec![0.0; n * w];
    phi.par_chunks_mut(CHUNK * w).enumerate().for_each(|(c, block)| {
        let mut rng = simulation_rng(mix_seed(seed, c as u64));
        for row in block.chunks_exact_mut(d) {
            BanditConfig::unit(d, &mut rng, row);
        }
    });
    phi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_have_unit_norm_and_blocks() {
        let cfg = BanditConfig {
            d: 6,
            actions: 5,
            rare_actions: 2,
            rare_dim: 2,
            rare_weight: 0.8,
            rare_mean: 0.0,
        };
        let phi = cfg.states(10, &mut simulation_rng(1)).unwrap();
        for (i, row) in phi.chunks_exact(6).enumerate() {
            let n: f64 = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!((n - 1.0).abs() < 1e-14);
            let a = i % 5;
            let rare_mass: f64 = row[4..].iter().map(|v| v * v).sum();
            if a < 3 {
                assert_eq!(rare_mass, 0.0);
            } else {
                assert!((rare_mass - 0.64).abs() < 1e-14);
            }
        }
        let th = [0.1; 6];
        let data = cfg.preferences(200, 0.1, &th, &mut simulation_rng(2)).unwrap();
        let rare_rows = data.x.chunks_exact(6).filter(|r| r[4] != 0.0).count();
        assert!(rare_rows > 5 && rare_rows < 50, "{rare_rows}");
        let u1 = unit_features(5000, 2, 3, 7);
        let u2 = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| unit_features(5000, 2, 3, 7));
        assert_eq!(u1, u2);
        assert!(cfg.states(1, &mut simulation_rng(0)).is_ok());
        let bad = BanditConfig { rare_dim: 6, ..cfg };
        assert!(bad.states(1, &mut simulation_rng(0)).is_err());
    }
}
