//! A privacy loss distribution on the grid `{k·h}` plus an atom at `+∞`: its privacy profile
//! `δ(ε)`, the smallest `ε` for a `δ`, and the pessimistic truncation of its tails.

use crate::privacy::rdp::log_space::Sum;

/// A discrete privacy loss distribution: mass `mass[i]` at loss `(offset + i)·h`, mass `inf` at
/// `+∞`, and `fp_error`, an upper bound on the ℓ₂ norm of the floating-point error of `mass`
/// (from the FFT convolutions; see the `privacy::pld` module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct LossPmf {
    pub(super) h: f64,
    pub(super) offset: i64,
    pub(super) mass: Vec<f64>,
    pub(super) inf: f64,
    pub(super) fp_error: f64,
}

impl LossPmf {
    /// The grid width `h`.
    pub fn grid(&self) -> f64 {
        self.h
    }
    /// The smallest loss on the grid.
    pub fn min_loss(&self) -> f64 {
        self.offset as f64 * self.h
    }
    /// The grid masses, from [`min_loss`](Self::min_loss) upwards in steps of `h`.
    pub fn masses(&self) -> &[f64] {
        &self.mass
    }
    /// The mass at `+∞` (counted in `δ` at every `ε`).
    pub fn infinity_mass(&self) -> f64 {
        self.inf
    }
    /// The bound on the ℓ₂ norm of the floating-point error of the grid masses.
    pub fn fp_error(&self) -> f64 {
        self.fp_error
    }

    /// What `δ` carries for the floating-point error, at every `ε ≥ 0`: `fp_error·‖f₀‖₂` with
    /// `f₀(l) = (1 − e^{−l})₊` on the grid (Cauchy–Schwarz; `0 ≤ (1 − e^{ε−l})₊ ≤ f₀(l)` for
    /// `ε ≥ 0`).
    fn fp_term(&self) -> f64 {
        if self.fp_error == 0.0 {
            return 0.0;
        }
        let sq: f64 = (0..self.mass.len())
            .map(|i| (self.offset + i as i64) as f64 * self.h)
            .filter(|&l| l > 0.0)
            .map(|l| {
                let f = -(-l).exp_m1();
                f * f
            })
            .sum();
        self.fp_error * sq.sqrt()
    }

    /// The privacy profile `δ(ε) = Σ_{l > ε} p(l)(1 − e^{ε−l}) + p(+∞)` (plus the
    /// floating-point term), for `ε ≥ 0`.
    pub fn delta(&self, eps: f64) -> f64 {
        let mut s = Sum::default();
        for (i, &p) in self.mass.iter().enumerate() {
            let l = (self.offset + i as i64) as f64 * self.h;
            if l > eps && p > 0.0 {
                s.add(-p * (eps - l).exp_m1());
            }
        }
        (s.value() + self.inf + self.fp_term()).min(1.0)
    }

    /// The smallest `ε ≥ 0` with `δ(ε) ≤ δ`, exact for this distribution (the profile is
    /// `A − e^ε B` between two grid points); `+∞` if `p(+∞)` plus the floating-point term
    /// already reach `δ`.
    pub fn epsilon(&self, delta: f64) -> f64 {
        let target = delta - self.inf - self.fp_term();
        if !(target > 0.0) {
            return f64::INFINITY;
        }
        let n = self.mass.len();
        let h = self.h;
        let decay = (-h).exp();
        // Walking down from the top: tail = Σ_{k≥j} p_k, w = Σ_{k≥j} p_k e^{l_j − l_k}.
        let mut tail = Sum::default();
        let mut w = 0.0f64;
        for j in (0..n).rev() {
            let l_j = (self.offset + j as i64) as f64 * h;
            // δ at l_j uses the points above j: tail − e^{−h}·w (before adding p_j).
            let d_at = tail.value() - decay * w;
            if d_at > target {
                // ε in (l_j, l_{j+1}]: tail − e^{ε − l_{j+1}} w = target.
                let eps = l_j + h + ((tail.value() - target) / w).ln();
                return eps.max(0.0);
            }
            if l_j <= 0.0 {
                // δ(0) ≤ δ(l_j) ≤ target.
                return 0.0;
            }
            tail.add(self.mass[j]);
            w = self.mass[j] + decay * w;
        }
        // Below the lowest grid point: δ(ε) = tail − e^{ε − l_0} w.
        if tail.value() <= target || w <= 0.0 {
            return 0.0;
        }
        let eps = self.min_loss() + ((tail.value() - target) / w).ln();
        eps.max(0.0)
    }

    /// Pessimistic truncation: the lowest grid masses whose sum stays `≤ tail` are moved up to
    /// the lowest mass kept (losses rounded up), the highest ones whose sum stays `≤ tail` to
    /// `+∞`. Negative entries (floating-point noise of the FFT; the true masses are `≥ 0`) are
    /// set to 0 first, which only brings them closer to the true value.
    pub(super) fn truncate(&mut self, tail: f64) {
        for p in self.mass.iter_mut() {
            if *p < 0.0 {
                *p = 0.0;
            }
        }
        let n = self.mass.len();
        let mut lo = 0usize;
        let mut acc_lo = 0.0;
        while lo + 1 < n && acc_lo + self.mass[lo] <= tail {
            acc_lo += self.mass[lo];
            lo += 1;
        }
        let mut hi = n; // exclusive
        let mut acc_hi = 0.0;
        while hi > lo + 1 && acc_hi + self.mass[hi - 1] <= tail {
            acc_hi += self.mass[hi - 1];
            hi -= 1;
        }
        self.mass.truncate(hi);
        self.mass.drain(..lo);
        if let Some(first) = self.mass.first_mut() {
            *first += acc_lo;
        }
        self.offset += lo as i64;
        self.inf += acc_hi;
    }

    /// The ℓ₁ and ℓ₂ norms of the grid masses.
    pub(super) fn norms(&self) -> (f64, f64) {
        let l1: f64 = self.mass.iter().map(|p| p.abs()).sum();
        let l2: f64 = self.mass.iter().map(|p| p * p).sum::<f64>().sqrt();
        (l1, l2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pmf(offset: i64, mass: Vec<f64>, inf: f64) -> LossPmf {
        LossPmf {
            h: 0.5,
            offset,
            mass,
            inf,
            fp_error: 0.0,
        }
    }

    #[test]
    fn epsilon_inverts_delta() {
        // Losses −0.5, 0, …, 2.0 with unequal masses.
        let p = pmf(-1, vec![0.3, 0.2, 0.2, 0.1, 0.1, 0.05], 0.001);
        for &d in &[0.002, 0.01, 0.05, 0.1, 0.2] {
            let e = p.epsilon(d);
            assert!(e.is_finite() && e >= 0.0);
            if e > 0.0 {
                assert!(
                    (p.delta(e) - d).abs() < 1e-12,
                    "delta {d}: eps {e} gives {}",
                    p.delta(e)
                );
            } else {
                assert!(p.delta(0.0) <= d + 1e-15);
            }
        }
        assert_eq!(p.epsilon(0.0005), f64::INFINITY);
    }

    #[test]
    fn truncation_moves_mass_up() {
        let mut p = pmf(0, vec![1e-17, 2e-17, 0.5, 0.5 - 4e-17, 1e-17], 0.0);
        p.truncate(3.5e-17);
        assert_eq!(p.offset, 2);
        assert_eq!(p.mass.len(), 2);
        assert!((p.mass[0] - (0.5 + 3e-17)).abs() < 1e-20 && p.inf == 1e-17);
    }
}
