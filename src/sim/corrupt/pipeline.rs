//! The orders of corruption and local privatisation: CTL, LTC and CLC.

use super::Adversary;
use crate::error::Result;
use crate::mechanism::{Mechanism, RandomizedResponse};
use rand::Rng;

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
