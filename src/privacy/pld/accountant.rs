//! The PLD accountant: `δ(ε)` and `ε(δ)` of `T` Poisson-subsampled Gaussian steps, and the
//! calibration of the noise multiplier.

use super::discretise::discretise;
use super::fft::self_compose;
use super::pairs::{Pair, PairKind};
use super::pmf::LossPmf;
use super::{check_grid, check_tail, Discretisation};
use crate::error::{check_delta, check_eps, Error, Result};
use crate::privacy::rdp::Neighbours;

/// Whether the PLD accountant's bound is a theorem for `neighbours`: only
/// [`Neighbours::AddRemove`] (the replace relations use the antipodal pair, whose worst-case
/// status is a numerical finding; module docs).
pub fn proven(neighbours: Neighbours) -> bool {
    neighbours == Neighbours::AddRemove
}

/// The PLD accountant: a relation, a grid width, a discretisation and a tail truncation.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PldAccountant {
    /// The relation (module docs for what each one uses).
    pub neighbours: Neighbours,
    /// The grid width `h` of the losses (default `1e-4`, as Google's `dp_accounting`).
    pub grid: f64,
    /// The discretisation (default [`Discretisation::ConnectDots`]).
    pub discretisation: Discretisation,
    /// The tail mass truncated (pessimistically) after every convolution (default `1e-15`).
    pub tail_mass: f64,
}

impl PldAccountant {
    /// The accountant for `neighbours` with the defaults `h = 1e-4`, connect-the-dots,
    /// tail mass `1e-15`.
    pub fn new(neighbours: Neighbours) -> Self {
        PldAccountant {
            neighbours,
            grid: 1e-4,
            discretisation: Discretisation::ConnectDots,
            tail_mass: 1e-15,
        }
    }

    /// The same with grid width `h`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (named `pld-grid`) unless `h ∈ [1e-7, 1]`.
    pub fn with_grid(mut self, h: f64) -> Result<Self> {
        check_grid(h)?;
        self.grid = h;
        Ok(self)
    }

    /// The same with another discretisation.
    pub fn with_discretisation(mut self, d: Discretisation) -> Self {
        self.discretisation = d;
        self
    }

    /// The dominating pairs of one step (one or two directions).
    fn pairs(&self, q: f64, sigma: f64) -> Vec<Pair> {
        let both = |s: f64| {
            vec![
                Pair {
                    kind: PairKind::Remove,
                    q,
                    sigma: s,
                },
                Pair {
                    kind: PairKind::Add,
                    q,
                    sigma: s,
                },
            ]
        };
        match self.neighbours {
            Neighbours::AddRemove => both(sigma),
            Neighbours::ReplaceSensitivity2 => both(0.5 * sigma),
            Neighbours::Replace | Neighbours::ReplaceNumeric => vec![Pair {
                kind: PairKind::Antipodal,
                q,
                sigma,
            }],
        }
    }

    /// The composed privacy loss distribution(s) of `steps` steps at `(q, σ)`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for `q ∉ (0, 1]`, `σ` not finite and `> 0`, `steps = 0`, an invalid
    /// grid or tail mass, or a grid too fine for the loss range ([`super::MAX_LEN`] points).
    pub fn distribution(&self, q: f64, sigma: f64, steps: u64) -> Result<Pld> {
        check_inputs(q, sigma, steps)?;
        check_grid(self.grid)?;
        check_tail(self.tail_mass)?;
        let mut directions = Vec::with_capacity(2);
        for pair in self.pairs(q, sigma) {
            let one = discretise(&pair, self.grid, self.discretisation)?;
            directions.push(self_compose(&one, steps, self.tail_mass)?);
        }
        Ok(Pld { directions })
    }

    /// `δ(ε)` of `steps` steps (the larger of the two directions for add/remove).
    ///
    /// # Errors
    /// As [`distribution`](Self::distribution); [`Error::InvalidParam`] unless `ε ≥ 0` finite.
    pub fn delta(&self, q: f64, sigma: f64, steps: u64, eps: f64) -> Result<f64> {
        if !(eps.is_finite() && eps >= 0.0) {
            return Err(Error::param("eps", format!("must be finite and >= 0, got {eps}")));
        }
        Ok(self.distribution(q, sigma, steps)?.delta(eps))
    }

    /// The smallest `ε` with `δ(ε) ≤ δ` after `steps` steps at `(q, σ)`.
    ///
    /// # Errors
    /// As [`distribution`](Self::distribution); [`Error::InvalidParam`] unless `δ ∈ (0, 1)`;
    /// [`Error::Privacy`] when the mass at `+∞` alone reaches `δ` (noise far too small).
    pub fn epsilon(&self, q: f64, sigma: f64, steps: u64, delta: f64) -> Result<PldEpsilon> {
        check_delta(delta)?;
        let eps = self.distribution(q, sigma, steps)?.epsilon(delta);
        if !eps.is_finite() {
            return Err(Error::Privacy(format!(
                "the PLD accountant gives an infinite epsilon at delta = {delta} (q = {q}, sigma = {sigma}, steps = {steps}): noise far too small"
            )));
        }
        Ok(PldEpsilon {
            epsilon: eps,
            delta,
            sampling_rate: q,
            noise_multiplier: sigma,
            steps,
            grid: self.grid,
        })
    }

    /// The noise multiplier for a target `(ε, δ)` after `steps` steps at rate `q`: bisection on
    /// `σ` with the invariant "`ε(σ_hi) ≤ ε`", stopped at relative width `1e-6`; returns `σ_hi`
    /// and its `ε`, so the result never undershoots the target.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for invalid inputs; [`Error::Privacy`] when no `σ ≤ 1e6` meets the
    /// target, or `σ < 1e-4` already does (check the inputs).
    pub fn calibrate_sigma(&self, q: f64, steps: u64, eps: f64, delta: f64) -> Result<(f64, PldEpsilon)> {
        check_inputs(q, 1.0, steps)?;
        check_eps(eps)?;
        check_delta(delta)?;
        let eps_at = |s: f64| -> Result<f64> { Ok(self.distribution(q, s, steps)?.epsilon(delta)) };
        let ok = |s: f64| -> Result<bool> { Ok(eps_at(s)? <= eps) };
        let (mut lo, mut hi) = (0.5, 1.0);
        if ok(hi)? {
            loop {
                if lo < 1e-4 {
                    return Err(Error::Privacy(format!(
                        "target eps = {eps} is met by any noise multiplier down to 1e-4: check the inputs"
                    )));
                }
                // Very small σ can make the grid too long: treat as "not met".
                match self.distribution(q, lo, steps) {
                    Ok(d) if d.epsilon(delta) <= eps => {
                        hi = lo;
                        lo *= 0.5;
                    }
                    Ok(_) | Err(Error::InvalidParam { .. }) => break,
                    Err(e) => return Err(e),
                }
            }
        } else {
            loop {
                lo = hi;
                hi *= 2.0;
                if hi > 1e6 {
                    return Err(Error::Privacy(format!(
                        "target eps = {eps} at delta = {delta} is not met by any noise multiplier <= 1e6"
                    )));
                }
                if ok(hi)? {
                    break;
                }
            }
        }
        while hi / lo - 1.0 > 1e-6 {
            let mid = 0.5 * (lo + hi);
            if ok(mid)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let rep = self.epsilon(q, hi, steps, delta)?;
        Ok((hi, rep))
    }
}

/// The composed privacy loss distribution(s): one per direction of the relation.
#[derive(Debug, Clone, PartialEq)]
pub struct Pld {
    directions: Vec<LossPmf>,
}

impl Pld {
    /// The distributions, one per direction (remove, add; or the single replace pair).
    pub fn directions(&self) -> &[LossPmf] {
        &self.directions
    }
    /// `δ(ε)`: the largest over the directions.
    pub fn delta(&self, eps: f64) -> f64 {
        self.directions.iter().map(|d| d.delta(eps)).fold(0.0, f64::max)
    }
    /// `ε(δ)`: the largest over the directions (`+∞` if one is).
    pub fn epsilon(&self, delta: f64) -> f64 {
        self.directions.iter().map(|d| d.epsilon(delta)).fold(0.0, f64::max)
    }
}

/// The result of [`PldAccountant::epsilon`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PldEpsilon {
    /// `ε` for the given `δ`.
    pub epsilon: f64,
    /// `δ`.
    pub delta: f64,
    /// Sampling rate `q`.
    pub sampling_rate: f64,
    /// Noise multiplier `σ`.
    pub noise_multiplier: f64,
    /// Number of steps.
    pub steps: u64,
    /// The grid width `h`.
    pub grid: f64,
}

fn check_inputs(q: f64, sigma: f64, steps: u64) -> Result<()> {
    if !(q > 0.0 && q <= 1.0) {
        return Err(Error::param("sampling-rate", format!("must be in (0, 1], got {q}")));
    }
    crate::privacy::rdp::check_noise_multiplier(sigma)?;
    if steps == 0 {
        return Err(Error::param("steps", "must be >= 1, got 0"));
    }
    Ok(())
}
