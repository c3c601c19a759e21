//! The finite-horizon MDP variant ("Provable protection of human judgements" (anon., 2025),
//! Sec. 5 / App. C, whose display of the objective is garbled; the intended one is
//! `Ĵ(π) = min_{θ ∈ C} ⟨θ, ψ(π) − v⟩`) with the expected cumulative feature
//! `ψ(π) = E_π[Σ_{h=1}^{H} φ(s_h, a_h)]` of a Markov policy in a tabular MDP with **known**
//! stationary transitions `P(s'|s, a)` and initial distribution `ρ₀`; `C` is built from the
//! trajectory estimator `(θ̃_τ, Σ̃_τ)` (for `H = 1` this is the bandit problem).
//!
//! `{ψ(π)}` over Markov stochastic policies is the linear image of the occupancy polytope, so
//! `Ĵ` is again concave over a polytope. Frank–Wolfe as in the bandit case: the
//! linear-maximisation oracle is backward induction with reward `⟨θ_min, φ(s, a)⟩`, returning a
//! deterministic Markov policy and `h(θ) = Σ_s ρ₀(s)V₁(s) − ⟨θ, v⟩ ≥ max Ĵ` (the certificate);
//! iterates are mixtures of occupancies `d_h(s, a)`, executed as `π_h(a|s) = d_h(s,a)/Σ_b d_h(s,b)`.
//! No purification is implemented for this variant; the deterministic answer reported is the
//! best Frank–Wolfe vertex (its `Ĵ` is exact, with the inner certificate). Sequential: meant for
//! small tabular MDPs.

use super::confidence::ConfidenceSet;
use crate::error::{Error, Result};
use crate::math::roots::brent;

/// A tabular finite-horizon MDP with features.
#[derive(Debug, Clone, Copy)]
pub struct Mdp<'a> {
    /// Number of states `S`.
    pub states: usize,
    /// Actions per state `A`.
    pub actions: usize,
    /// Horizon `H ≥ 1`.
    pub horizon: usize,
    /// Features, row-major `S × A × d`.
    pub phi: &'a [f64],
    /// Feature dimension `d`.
    pub d: usize,
    /// Transitions, row-major `S × A × S` (each `(s, a)` row a probability vector).
    pub transitions: &'a [f64],
    /// Initial distribution `ρ₀` (length `S`).
    pub initial: &'a [f64],
}

/// Result of [`pessimistic_mdp_policy`].
#[derive(Debug, Clone)]
pub struct MdpPolicyReport {
    /// Certified lower bound on `Ĵ` of the stochastic Markov policy.
    pub value: f64,
    /// Certified upper bound on `max Ĵ` over Markov policies.
    pub upper_bound: f64,
    /// `upper_bound − value`.
    pub gap: f64,
    /// Whether `gap ≤ tol_rel·max(|value|, |upper|)`.
    pub converged: bool,
    /// Iterations (= oracle calls).
    pub iterations: usize,
    /// The stochastic Markov policy `π_h(a|s)`, row-major `H × S × A`.
    pub policy: Vec<f64>,
    /// The best deterministic vertex found, `H × S` actions.
    pub deterministic: Vec<u32>,
    /// Its `Ĵ` (certified lower bound).
    pub deterministic_value: f64,
    /// `ψ(π) − v` of the stochastic policy.
    pub g: Vec<f64>,
}

impl Mdp<'_> {
    fn validate(&self) -> Result<()> {
        let (s, a, d) = (self.states, self.actions, self.d);
        if s == 0 || a == 0 || d == 0 || self.horizon == 0 {
            return Err(Error::Shape("MDP needs S, A, d, H >= 1".into()));
        }
        if self.phi.len() != s * a * d || self.transitions.len() != s * a * s || self.initial.len() != s {
            return Err(Error::Shape(format!(
                "MDP arrays: phi {} (want {}), transitions {} (want {}), initial {} (want {s})",
                self.phi.len(),
                s * a * d,
                self.transitions.len(),
                s * a * s,
                self.initial.len()
            )));
        }
        let prob_ok =
            |p: &[f64]| p.iter().all(|x| x.is_finite() && *x >= 0.0) && (p.iter().sum::<f64>() - 1.0).abs() <= 1e-9;
        if !prob_ok(self.initial) {
            return Err(Error::param("initial", "is not a probability vector"));
        }
        for (i, row) in self.transitions.chunks_exact(s).enumerate() {
            if !prob_ok(row) {
                return Err(Error::param(
                    "transitions",
                    format!("row (state {}, action {}) is not a probability vector", i / a, i % a),
                ));
            }
        }
        if self.phi.iter().any(|x| !x.is_finite()) {
            return Err(Error::param("phi", "has a non-finite entry"));
        }
        Ok(())
    }

    fn feat(&self, s: usize, a: usize) -> &[f64] {
        let o = (s * self.actions + a) * self.d;
        &self.phi[o..o + self.d]
    }

    /// Backward induction for reward `⟨θ, φ⟩`: the greedy deterministic Markov policy (`H × S`)
    /// and `Σ_s ρ₀(s) V₁(s)`.
    pub(crate) fn best_response(&self, theta: &[f64]) -> (Vec<u32>, f64) {
        let (ns, na) = (self.states, self.actions);
        let r: Vec<f64> = (0..ns * na)
            .map(|i| self.feat(i / na, i % na).iter().zip(theta).map(|(a, b)| a * b).sum())
            .collect();
        let mut v_next = vec![0.0; ns];
        let mut pol = vec![0u32; self.horizon * ns];
        for h in (0..self.horizon).rev() {
            let mut v = vec![0.0; ns];
            for s in 0..ns {
                let mut best = (f64::NEG_INFINITY, 0usize);
                for a in 0..na {
                    let row = &self.transitions[(s * na + a) * ns..(s * na + a + 1) * ns];
                    let q = r[s * na + a] + row.iter().zip(&v_next).map(|(p, x)| p * x).sum::<f64>();
                    if q > best.0 {
                        best = (q, a);
                    }
                }
                v[s] = best.0;
                pol[h * ns + s] = best.1 as u32;
            }
            v_next = v;
        }
        let val = self.initial.iter().zip(&v_next).map(|(p, x)| p * x).sum();
        (pol, val)
    }

    /// Occupancy `d_h(s, a)` (`H × S × A`) of a deterministic Markov policy.
    pub fn occupancy(&self, pol: &[u32]) -> Vec<f64> {
        let (ns, na) = (self.states, self.actions);
        let mut occ = vec![0.0; self.horizon * ns * na];
        let mut mu = self.initial.to_vec();
        for h in 0..self.horizon {
            let mut next = vec![0.0; ns];
            for s in 0..ns {
                let a = pol[h * ns + s] as usize;
                occ[(h * ns + s) * na + a] = mu[s];
                let row = &self.transitions[(s * na + a) * ns..(s * na + a + 1) * ns];
                for (x, p) in next.iter_mut().zip(row) {
                    *x += mu[s] * p;
                }
            }
            mu = next;
        }
        occ
    }

    /// `ψ = Σ_{h,s,a} d_h(s, a) φ(s, a)`.
    pub fn cumulative_feature(&self, occ: &[f64]) -> Vec<f64> {
        let (ns, na) = (self.states, self.actions);
        let mut psi = vec![0.0; self.d];
        for (i, &w) in occ.iter().enumerate() {
            if w != 0.0 {
                let sa = i % (ns * na);
                for (p, f) in psi.iter_mut().zip(self.feat(sa / na, sa % na)) {
                    *p += w * f;
                }
            }
        }
        psi
    }
}

/// Frank–Wolfe for the MDP variant (module docs). `v` is the public reference vector (e.g.
/// `ψ(π_ref)`), `None` for 0.
///
/// # Errors
/// Shapes, invalid probabilities, `d` mismatch.
pub fn pessimistic_mdp_policy(
    mdp: &Mdp<'_>,
    v: Option<&[f64]>,
    set: &ConfidenceSet,
    tol_rel: f64,
    max_iter: usize,
) -> Result<MdpPolicyReport> {
    mdp.validate()?;
    if mdp.d != set.dim() {
        return Err(Error::Shape(format!(
            "MDP features have d = {}, theta has {}",
            mdp.d,
            set.dim()
        )));
    }
    let v = match v {
        Some(v) if v.len() == mdp.d => v.to_vec(),
        Some(v) => {
            return Err(Error::Shape(format!(
                "reference has {} entries, expected {}",
                v.len(),
                mdp.d
            )))
        }
        None => vec![0.0; mdp.d],
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let sub = |a: Vec<f64>| -> Vec<f64> { a.iter().zip(&v).map(|(x, y)| x - y).collect() };
    let (pol0, _) = mdp.best_response(set.centre());
    let mut occ = mdp.occupancy(&pol0);
    let mut g = sub(mdp.cumulative_feature(&occ));
    let mut best_det = (set.minimize(&g).lower, pol0);
    let mut upper = if set.contains_origin() { 0.0 } else { f64::INFINITY };
    let mut it = 0;
    let (lower, converged) = loop {
        let cur = set.minimize(&g);
        let (pol, val) = mdp.best_response(&cur.theta);
        upper = upper.min(val - dot(&cur.theta, &v));
        let gap = (upper - cur.lower).max(0.0);
        if gap <= tol_rel * cur.lower.abs().max(upper.abs()) {
            break (cur.lower, true);
        }
        if it >= max_iter {
            break (cur.lower, false);
        }
        it += 1;
        let vocc = mdp.occupancy(&pol);
        let s_vec = sub(mdp.cumulative_feature(&vocc));
        let sv = set.minimize(&s_vec).lower;
        if sv > best_det.0 {
            best_det = (sv, pol.clone());
        }
        let dir: Vec<f64> = s_vec.iter().zip(&g).map(|(a, b)| a - b).collect();
        let deriv = |gm: f64| -> f64 {
            let p: Vec<f64> = g.iter().zip(&dir).map(|(a, b)| a + gm * b).collect();
            dot(&set.minimize(&p).theta, &dir)
        };
        let d0 = dot(&cur.theta, &dir);
        if d0 <= 0.0 {
            break (cur.lower, false);
        }
        let d1 = deriv(1.0);
        let gamma = if d1 >= 0.0 { 1.0 } else { brent(deriv, 0.0, 1.0, d0, d1) };
        for (o, x) in occ.iter_mut().zip(&vocc) {
            *o = (1.0 - gamma) * *o + gamma * x;
        }
        g.iter_mut().zip(&dir).for_each(|(a, b)| *a += gamma * b);
    };
    let (ns, na) = (mdp.states, mdp.actions);
    let mut policy = vec![0.0; occ.len()];
    for (row_o, row_p) in occ.chunks_exact(na).zip(policy.chunks_exact_mut(na)) {
        let tot: f64 = row_o.iter().sum();
        if tot > 0.0 {
            row_p.iter_mut().zip(row_o).for_each(|(p, o)| *p = o / tot);
        } else {
            row_p.iter_mut().for_each(|p| *p = 1.0 / na as f64);
        }
    }
    let _ = ns;
    Ok(MdpPolicyReport {
        value: lower,
        upper_bound: upper,
        gap: (upper - lower).max(0.0),
        converged,
        iterations: it,
        policy,
        deterministic: best_det.1,
        deterministic_value: best_det.0,
        g,
    })
}
