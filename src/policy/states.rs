//! The public state sample of the policy problem: a dense `n × A × d` feature array
//! `φ(s, a)` (row-major: state, then action, then feature), borrowed and validated once,
//! state weights `ρ_s` and the reference vector `v`. The states, `ρ` and `v` must be public or
//! data-independent — never the private training prompts under standard DP — for the policy to
//! be post-processing of the private release.

use crate::error::{DataErrorKind, Error, Location, Result};
use crate::par::{Collective, Shard};

/// Borrowed, validated `φ(s, a)` with state weights.
#[derive(Debug, Clone, Copy)]
pub struct StateActions<'a> {
    phi: &'a [f64],
    n: usize,
    a: usize,
    d: usize,
    weights: Option<&'a [f64]>,
    weight_sum: f64,
    /// This process's part of the states when a group of processes shares the passes.
    shard: Option<Shard<'a>>,
}

/// The reference the policy is compared with (`v` in `Ĵ(π) = min_θ ⟨θ, g(π) − v⟩`).
#[derive(Debug, Clone, Copy, Default)]
pub enum Reference<'a> {
    /// `v = 0` (Algorithm 3 of "Provable protection of human judgements" (anon., 2025) without
    /// a reference).
    #[default]
    None,
    /// A public vector `v` (length `d`).
    Vector(&'a [f64]),
    /// A deterministic reference policy (one action per state): `v = Σ_s ρ_s φ(s, π_ref(s))`
    /// (Zhou, Wu & Orabona (2025), Algorithm 2).
    Actions(&'a [u32]),
    /// A stochastic reference policy, row-major `n × A` probabilities.
    Distribution(&'a [f64]),
}

impl<'a> StateActions<'a> {
    /// Wraps `phi` (length `n·A·d`). `weights` (length `n`, non-negative, finite, positive sum)
    /// are normalised to `ρ_s = w_s/Σw`; `None` means `ρ_s = 1/n`.
    ///
    /// # Errors
    /// [`Error::Shape`] for inconsistent or empty shapes; [`Error::StateData`] (input
    /// `"states"`, naming the state, action and feature) for a non-finite feature; weights
    /// errors.
    pub fn new(phi: &'a [f64], n: usize, a: usize, d: usize, weights: Option<&'a [f64]>) -> Result<Self> {
        if n == 0 || a == 0 || d == 0 {
            return Err(Error::Shape(format!(
                "states must have n, A, d >= 1, got {n} x {a} x {d}"
            )));
        }
        let len = n
            .checked_mul(a)
            .and_then(|x| x.checked_mul(d))
            .ok_or_else(|| Error::Shape("n x A x d overflows".into()))?;
        if phi.len() != len {
            return Err(Error::Shape(format!(
                "states have {} values, expected n x A x d = {n} x {a} x {d}",
                phi.len()
            )));
        }
        if a > u32::MAX as usize {
            return Err(Error::Shape("too many actions".into()));
        }
        if let Some(i) = phi.iter().position(|v| !v.is_finite()) {
            return Err(Error::StateData {
                input: "states",
                state: i / (a * d),
                action: i / d % a,
                feature: i % d,
                kind: if phi[i].is_nan() {
                    DataErrorKind::NaN
                } else {
                    DataErrorKind::Infinite
                },
            });
        }
        let mut weight_sum = n as f64;
        if let Some(w) = weights {
            if w.len() != n {
                return Err(Error::Shape(format!(
                    "weights have {} entries, expected n = {n}",
                    w.len()
                )));
            }
            for (row, &v) in w.iter().enumerate() {
                let kind = if !v.is_finite() {
                    Some(DataErrorKind::NonFiniteWeight)
                } else if v < 0.0 {
                    Some(DataErrorKind::NegativeWeight)
                } else {
                    None
                };
                if let Some(kind) = kind {
                    return Err(Error::Data {
                        input: "weights",
                        at: Location { row, col: None },
                        kind,
                    });
                }
            }
            weight_sum = w.iter().sum();
            if !(weight_sum > 0.0 && weight_sum.is_finite()) {
                return Err(Error::param(
                    "weights",
                    format!("must have a finite positive sum, got {weight_sum}"),
                ));
            }
        }
        Ok(StateActions {
            phi,
            n,
            a,
            d,
            weights,
            weight_sum,
            shard: None,
        })
    }

    /// The same states, shared by a group of processes that each hold all of them (e.g. MPI
    /// ranks that read the same file): every Frank–Wolfe pass runs on this process's part of
    /// the states and exchanges only the partial sums of whole subtrees of the pass's block
    /// tree, and the per-state results (the policy and the greedy actions) are gathered where
    /// a result needs them all, so every process gets the bits of the single-process answer.
    /// Every member must make the same calls on the same data (they are collective).
    pub fn distributed(self, comm: &'a dyn Collective) -> Self {
        StateActions {
            shard: Some(Shard::hessian_free(comm, self.n, self.a * self.d)),
            ..self
        }
    }

    /// This process's part of the states, when [`StateActions::distributed`].
    pub fn shard(&self) -> Option<Shard<'a>> {
        self.shard
    }
    /// Number of states `n`.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Actions per state `A`.
    pub fn actions(&self) -> usize {
        self.a
    }
    /// Feature dimension `d`.
    pub fn d(&self) -> usize {
        self.d
    }
    /// The whole array.
    pub fn phi(&self) -> &'a [f64] {
        self.phi
    }
    /// `φ(s, ·)`: `A × d` row-major.
    #[inline]
    pub fn state(&self, s: usize) -> &'a [f64] {
        let w = self.a * self.d;
        &self.phi[s * w..(s + 1) * w]
    }
    /// `φ(s, a)`.
    #[inline]
    pub fn feature(&self, s: usize, a: usize) -> &'a [f64] {
        let o = (s * self.a + a) * self.d;
        &self.phi[o..o + self.d]
    }
    /// Raw weight `w_s` (1 without weights); `ρ_s = w_s / weight_sum`.
    #[inline]
    pub(crate) fn raw_weight(&self, s: usize) -> f64 {
        self.weights.map_or(1.0, |w| w[s])
    }
    /// `Σ_s w_s` (`n` without weights).
    pub(crate) fn weight_sum(&self) -> f64 {
        self.weight_sum
    }
    /// `ρ_s`.
    pub(crate) fn rho(&self, s: usize) -> f64 {
        self.raw_weight(s) / self.weight_sum
    }

    /// `Σ_s ρ_s Σ_a π_s(a) φ(s, a)` for a dense row-major `n × A` policy (sequential, exact
    /// order; used for checks and small problems).
    pub(crate) fn mean_feature(&self, probs: &[f64]) -> Vec<f64> {
        let mut g = vec![0.0; self.d];
        for s in 0..self.n {
            let w = self.raw_weight(s);
            for a in 0..self.a {
                let p = probs[s * self.a + a];
                if p != 0.0 {
                    for (gj, f) in g.iter_mut().zip(self.feature(s, a)) {
                        *gj += w * p * f;
                    }
                }
            }
        }
        g.iter_mut().for_each(|x| *x /= self.weight_sum);
        g
    }

    /// The reference vector `v` of `reference`.
    ///
    /// # Errors
    /// Wrong lengths, action indices `≥ A`, probabilities that are negative, non-finite or do
    /// not sum to 1 (within `1e-9`) in a state.
    pub fn reference_vector(&self, reference: &Reference<'_>) -> Result<Vec<f64>> {
        match *reference {
            Reference::None => Ok(vec![0.0; self.d]),
            Reference::Vector(v) => {
                if v.len() != self.d {
                    return Err(Error::Shape(format!(
                        "reference vector has {} entries, expected d = {}",
                        v.len(),
                        self.d
                    )));
                }
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(Error::param("reference", "reference vector has a non-finite entry"));
                }
                Ok(v.to_vec())
            }
            Reference::Actions(acts) => {
                if acts.len() != self.n {
                    return Err(Error::Shape(format!(
                        "reference policy has {} actions, expected one per state (n = {})",
                        acts.len(),
                        self.n
                    )));
                }
                let mut probs = vec![0.0; self.n * self.a];
                for (s, &a) in acts.iter().enumerate() {
                    if a as usize >= self.a {
                        return Err(Error::Data {
                            input: "reference",
                            at: Location { row: s, col: None },
                            kind: DataErrorKind::LabelOutOfRange {
                                label: a as i128,
                                bound: self.a as u64,
                            },
                        });
                    }
                    probs[s * self.a + a as usize] = 1.0;
                }
                Ok(self.mean_feature(&probs))
            }
            Reference::Distribution(p) => {
                if p.len() != self.n * self.a {
                    return Err(Error::Shape(format!(
                        "reference distribution has {} entries, expected n x A = {} x {}",
                        p.len(),
                        self.n,
                        self.a
                    )));
                }
                for s in 0..self.n {
                    let row = &p[s * self.a..(s + 1) * self.a];
                    let sum: f64 = row.iter().sum();
                    if row.iter().any(|x| !x.is_finite() || *x < 0.0) || (sum - 1.0).abs() > 1e-9 {
                        return Err(Error::param(
                            "reference",
                            format!("reference distribution of state {s} is not a probability vector"),
                        ));
                    }
                }
                Ok(self.mean_feature(p))
            }
        }
    }
}
