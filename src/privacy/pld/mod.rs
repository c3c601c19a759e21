//! Privacy-loss-distribution (PLD) accountant for the Poisson-subsampled Gaussian mechanism
//! (SGM): `δ(ε)` of `T` steps computed from the distribution of the privacy loss itself, tighter
//! than the Rényi-DP accountant of [`super::rdp`] (at `q = 0.001`, `σ = 0.8`, `T = 10 000`,
//! `δ = 1e-5`: `ε ≈ 0.78` instead of `≈ 1.38`; `bench-results/accounting.md`).
//!
//! **Privacy loss distribution** (Meiser & Mohammadi 2018;
//! Koskela, Jälkö & Honkela 2020). For a pair `(P, Q)` the privacy loss is `L = ln(P(X)/Q(X))`,
//! `X ∼ P`, and the hockey-stick divergence is
//! `δ(ε) = H_{e^ε}(P‖Q) = E[(1 − e^{ε−L})₊] = Σ_{l>ε} p(l)(1 − e^{ε−l}) + p(+∞)`.
//! The losses of independent steps add, so the PLD of `T` steps is the `T`-fold convolution.
//! With a *dominating pair* for every step (for every history), the product of the pairs
//! dominates the adaptive composition (Zhu, Dong & Wang 2022, "Optimal accounting of
//! differential privacy via characteristic function").
//!
//! **Dominating pairs of one step** (sensitivity normalised to `C = 1`, `σ` the noise
//! multiplier; `pairs.rs`):
//! * [`Neighbours::AddRemove`]: remove `P = (1−q)N(0,σ²) + qN(1,σ²)`, `Q = N(0,σ²)`, and add (the
//!   same pair reversed); each direction is composed separately and `δ` is the larger of the two
//!   (`ε` the larger of the two `ε`s). Proven (the pairs of Mironov, Talwar & Zhang 2019;
//!   dominating pairs of Poisson subsampling in Zhu, Dong & Wang 2022).
//! * [`Neighbours::Replace`] and [`Neighbours::ReplaceNumeric`] (replace one user's contribution
//!   `a → b`, `‖a‖, ‖b‖ ≤ C`, the user sampled with probability `q` in both worlds): the
//!   antipodal pair `P = (1−q)N(0,σ²) + qN(1,σ²)`, `Q = (1−q)N(0,σ²) + qN(−1,σ²)` of the RDP
//!   module's `replace-numeric` relation (symmetric under `x → −x`, so one direction). **Assumed,
//!   not proven**: that this pair is the worst case over the ball is a numerical finding (the RDP
//!   module's), not a theorem. The RDP module's *proven* replace bound (weak triangle inequality
//!   of Rényi divergences) has no PLD counterpart here; [`proven`] is `false` for it.
//! * [`Neighbours::ReplaceSensitivity2`]: the add/remove pairs at noise multiplier `σ/2`
//!   (not proven for `q < 1`, as in the RDP module).
//!
//! **Pessimistic discretisation** (`discretise.rs`). The grid is `{k·h}` (default `h = 1e-4`);
//! the `x` with `L(x) = k·h` is known in closed form (every `L` here is increasing in `x`), so the
//! `P`- and `Q`-masses of `L ∈ (l_k, l_{k+1}]` are differences of normal CDFs.
//! * [`Discretisation::ConnectDots`] (default; Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
//!   2022, "Connect the dots"): the mass `m` of the interval goes to its two ends, `m − β` at
//!   `l_k` and `β = (m − e^{l_k} m_Q)/(1 − e^{−h})` at `l_{k+1}`, which keeps `m` and the
//!   `Q`-mass `m_Q = E_P[e^{−L}; interval]`. **Soundness**: with `y = e^{−l}`, the integrand
//!   `(1 − e^{ε − s} y)₊` of `δ(ε)` (`s` the loss of the other steps) is convex in `y`, and the
//!   split is a mean-preserving spread in `y`, so by Jensen it never decreases `δ(ε)`, at any
//!   `ε`, for any number of composed steps (condition on the other steps).
//! * [`Discretisation::RoundUp`] ("privacy buckets", Meiser & Mohammadi 2018; Koskela, Jälkö &
//!   Honkela 2020): the whole mass goes to `l_{k+1}`. Sound because the integrand is
//!   non-decreasing in each step's loss. Its error grows like `T·h/2` in the loss (e.g. `0.5` at
//!   `T = 10 000`, `h = 1e-4`), the connect-the-dots one is second order in `h`.
//! * Tails: `P`-mass beyond 10 standard deviations of `P`'s components (below `1.6e-23`) is put at
//!   `+∞` (upper side; counted in `δ`) or rounded up to the lowest grid point (lower side). After
//!   every convolution the lowest masses summing to at most `tail_mass` (default `1e-15`) are
//!   rounded up to the lowest mass kept and the highest ones go to `+∞` (`fft.rs`).
//!
//! Every step of the construction moves loss up or spreads it in `y = e^{−l}`, so the computed
//! `δ(ε)` is an upper bound on the true `δ(ε)` in exact arithmetic. The floating-point error of
//! the FFT is bounded and added to `δ` (`fft.rs`); the normal CDFs and the weights `β` carry
//! relative errors of order `1e-12` that are not bounded rigorously.
//!
//! **Discretisation error** (measured, `tests/library/pld.rs` and `bench-results/accounting.md`):
//! at `q = 1` (exact profile of the Gaussian mechanism with `σ/√T`) the excess in `δ` is below
//! `1e-3` relative (measured `2e-7`); against Google's `dp_accounting` 0.6.0 (the same
//! connect-the-dots construction) our `ε` is never smaller and `|Δε| ≤ 1e-3` (measured `≤ 7e-6`
//! for `T ≤ 1000`, `5.8e-4` at `T = 10 000`, where the worst-case FFT error bound added to `δ`
//! dominates the gap).
//!
//! **ε for a δ**: the smallest `ε ≥ 0` with `δ(ε) ≤ δ`, exact for the discrete distribution (the
//! profile is `A − e^ε B` between grid points). **Calibration** ([`PldAccountant::calibrate_sigma`]):
//! bisection on `σ` keeping "the upper end meets the target" (relative width `1e-6`), so the
//! returned `σ` never undershoots, as in the RDP accountant.

mod accountant;
mod discretise;
mod fft;
mod pairs;
mod pmf;

pub use accountant::{proven, Pld, PldAccountant, PldEpsilon};
pub use pmf::LossPmf;

use crate::error::{Error, Result};

#[cfg(doc)]
use crate::privacy::rdp::Neighbours;

/// The largest number of grid points of one distribution (and of an FFT), `2²²`.
pub const MAX_LEN: usize = 1 << 22;

/// How one step's continuous privacy loss is put on the grid (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Discretisation {
    /// Split each interval's mass between its two ends, keeping its `P`- and `Q`-mass
    /// (Doroshenko et al. 2022).
    #[default]
    ConnectDots,
    /// Round every loss up to the next grid point (Meiser & Mohammadi 2018).
    RoundUp,
}

impl Discretisation {
    /// The name: `connect-dots` or `round-up`.
    pub fn name(&self) -> &'static str {
        match self {
            Discretisation::ConnectDots => "connect-dots",
            Discretisation::RoundUp => "round-up",
        }
    }
}

/// Checks a grid width `h`, finite and in `[1e-7, 1]`.
fn check_grid(h: f64) -> Result<()> {
    if h.is_finite() && (1e-7..=1.0).contains(&h) {
        Ok(())
    } else {
        Err(Error::param("pld-grid", format!("must be in [1e-7, 1], got {h}")))
    }
}

/// Checks a tail truncation mass in `[0, 1e-6]`.
fn check_tail(t: f64) -> Result<()> {
    if (0.0..=1e-6).contains(&t) {
        Ok(())
    } else {
        Err(Error::param("pld-tail-mass", format!("must be in [0, 1e-6], got {t}")))
    }
}
