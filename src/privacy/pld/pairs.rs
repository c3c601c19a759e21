//! The dominating pairs `(P, Q)` of one Poisson-subsampled Gaussian step, their privacy loss
//! `L(x) = ln(P(x)/Q(x))` (increasing in `x` for every pair here) and its inverse.
//!
//! All pairs are one-dimensional mixtures of `N(m, σ²)` (sensitivity normalised to `C = 1`):
//!
//! | pair | `P` | `Q` | `L(x)` |
//! |---|---|---|---|
//! | remove | `(1−q)N(0,σ²) + qN(1,σ²)` | `N(0,σ²)` | `g(u₊)` |
//! | add (mirrored `x → −x`) | `N(0,σ²)` | `(1−q)N(0,σ²) + qN(−1,σ²)` | `−g(u₋)` |
//! | antipodal (replace-one) | `(1−q)N(0,σ²) + qN(1,σ²)` | `(1−q)N(0,σ²) + qN(−1,σ²)` | `g(u₊) − g(u₋)` |
//!
//! with `g(u) = ln(1 − q + q·eᵘ)`, `u₊ = (2x−1)/(2σ²)`, `u₋ = (−2x−1)/(2σ²)`.

use crate::math::special::ndtr_interval;
use crate::privacy::rdp::log_space::ln_add_exp;

/// A two-component Gaussian mixture as `(weight, mean)` pairs (a zero weight: one component).
type Mixture = [(f64, f64); 2];

/// Which dominating pair (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PairKind {
    /// Remove one unit: `P` = the subsampled mixture, `Q = N(0, σ²)`.
    Remove,
    /// Add one unit: `P = N(0, σ²)`, `Q` = the subsampled mixture (mirrored so `L` increases).
    Add,
    /// Replace one unit's contribution `a → −a`: the antipodal pair of the RDP module's
    /// `replace-numeric` relation.
    Antipodal,
}

/// One dominating pair at `(q, σ)`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pair {
    pub kind: PairKind,
    pub q: f64,
    pub sigma: f64,
}

impl Pair {
    /// `g(u) = ln(1 − q + q eᵘ)`.
    fn g(&self, u: f64) -> f64 {
        ln_add_exp((-self.q).ln_1p(), self.q.ln() + u)
    }

    /// `u` with `g(u) = l`, for `l > ln(1−q)`: `u = ln(eˡ − 1 + q) − ln q`; `−∞` at or below
    /// the lower end of `g`'s range.
    fn g_inv(&self, l: f64) -> f64 {
        let q = self.q;
        let ln_num = if l > 0.0 {
            // eˡ − (1−q) = eˡ(1 − (1−q)e^{−l}).
            l + (-(1.0 - q) * (-l).exp()).ln_1p()
        } else {
            let v = l.exp_m1() + q;
            if v > 0.0 {
                v.ln()
            } else {
                f64::NEG_INFINITY
            }
        };
        ln_num - q.ln()
    }

    /// The privacy loss `L(x) = ln(P(x)/Q(x))`, non-decreasing in `x`.
    pub fn loss(&self, x: f64) -> f64 {
        let s2 = self.sigma * self.sigma;
        let up = (2.0 * x - 1.0) / (2.0 * s2);
        let um = (-2.0 * x - 1.0) / (2.0 * s2);
        match self.kind {
            PairKind::Remove => self.g(up),
            PairKind::Add => -self.g(um),
            PairKind::Antipodal => self.g(up) - self.g(um),
        }
    }

    /// The `x` with `L(x) = l` (`±∞` outside the range of `L`).
    pub fn x_of_loss(&self, l: f64) -> f64 {
        let s2 = self.sigma * self.sigma;
        match self.kind {
            PairKind::Remove => s2 * self.g_inv(l) + 0.5,
            PairKind::Add => -(s2 * self.g_inv(-l) + 0.5),
            PairKind::Antipodal => {
                // L is odd in x; for l ≥ 0, t = e^{x/σ²} solves q c t² + (1−q)(1−eˡ) t − eˡ q c = 0,
                // c = e^{−1/(2σ²)}: ln t = l/2 + asinh((1−q) sinh(l/2) / (q c)).
                let (a, sign) = if l >= 0.0 { (l, 1.0) } else { (-l, -1.0) };
                let q = self.q;
                let x = if q == 1.0 {
                    0.5 * s2 * a
                } else {
                    // ln r = ln(1−q) + ln sinh(a/2) − ln q + 1/(2σ²).
                    let half = 0.5 * a;
                    let ln_sinh = if half > 20.0 {
                        half - std::f64::consts::LN_2
                    } else {
                        half.sinh().ln()
                    };
                    let ln_r = (-q).ln_1p() + ln_sinh - q.ln() + 0.5 / s2;
                    let asinh_r = if ln_r > 20.0 {
                        std::f64::consts::LN_2 + ln_r
                    } else {
                        ln_r.exp().asinh()
                    };
                    s2 * (half + asinh_r)
                };
                sign * x
            }
        }
    }

    /// The mixture components `(weight, mean)` of `P` and of `Q`.
    fn components(&self) -> (Mixture, Mixture) {
        let q = self.q;
        let mix_up = [(1.0 - q, 0.0), (q, 1.0)];
        let mix_down = [(1.0 - q, 0.0), (q, -1.0)];
        let point = [(1.0, 0.0), (0.0, 0.0)];
        match self.kind {
            PairKind::Remove => (mix_up, point),
            PairKind::Add => (point, mix_down),
            PairKind::Antipodal => (mix_up, mix_down),
        }
    }

    /// `(P(x₀ < X ≤ x₁), Q(x₀ < X ≤ x₁))` for `x₀ ≤ x₁` (each component's normal interval
    /// computed from the tail on its side: no cancellation of two values near 1).
    pub fn masses(&self, x0: f64, x1: f64) -> (f64, f64) {
        let (p, q) = self.components();
        let s = self.sigma;
        let m = |c: &Mixture| -> f64 {
            c.iter()
                .filter(|(w, _)| *w > 0.0)
                .map(|&(w, mu)| w * ndtr_interval((x0 - mu) / s, (x1 - mu) / s))
                .sum()
        };
        (m(&p), m(&q))
    }

    /// An interval of `x` outside which `P` has mass below `2Φ(−z)`.
    pub fn x_range(&self, z: f64) -> (f64, f64) {
        let (p, _) = self.components();
        let lo = p
            .iter()
            .filter(|c| c.0 > 0.0)
            .map(|c| c.1)
            .fold(f64::INFINITY, f64::min);
        let hi = p
            .iter()
            .filter(|c| c.0 > 0.0)
            .map(|c| c.1)
            .fold(f64::NEG_INFINITY, f64::max);
        (lo - z * self.sigma, hi + z * self.sigma)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_loss_round_trips() {
        for kind in [PairKind::Remove, PairKind::Add, PairKind::Antipodal] {
            for &(q, sigma) in &[(0.001, 0.8), (0.05, 3.0), (0.5, 0.3), (1.0, 1.0)] {
                let p = Pair { kind, q, sigma };
                for &x in &[-3.0, -0.7, 0.0, 0.2, 0.5, 1.3, 4.0] {
                    let l = p.loss(x);
                    if !l.is_finite() || l.abs() > 300.0 {
                        continue;
                    }
                    let x2 = p.x_of_loss(l);
                    // The loss is flat where one component dominates: compare losses.
                    assert!(
                        (p.loss(x2) - l).abs() <= 1e-9 * (1.0 + l.abs()),
                        "{kind:?} q={q} s={sigma} x={x}: L={l}, x2={x2}, L(x2)={}",
                        p.loss(x2)
                    );
                }
            }
        }
    }

    #[test]
    fn loss_is_the_log_density_ratio() {
        // Direct densities (the normalising constants cancel).
        let dens = |c: &Mixture, s: f64, x: f64| -> f64 {
            c.iter()
                .map(|&(w, m)| w * (-(x - m) * (x - m) / (2.0 * s * s)).exp())
                .sum()
        };
        for kind in [PairKind::Remove, PairKind::Add, PairKind::Antipodal] {
            let p = Pair {
                kind,
                q: 0.2,
                sigma: 1.3,
            };
            let (cp, cq) = p.components();
            for &x in &[-2.0, 0.0, 0.4, 2.5] {
                let want = (dens(&cp, 1.3, x) / dens(&cq, 1.3, x)).ln();
                assert!((p.loss(x) - want).abs() < 1e-12, "{kind:?} {x}");
            }
        }
    }
}
