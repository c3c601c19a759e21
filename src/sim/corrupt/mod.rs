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

mod adversary;
mod closed_forms;
mod hidden_direction;
mod pipeline;

pub use adversary::Adversary;
pub use closed_forms::{ltc_signal_threshold, oblivious_mask_closed_forms, rr_privacy_factor};
pub use hidden_direction::hidden_direction_design;
pub use pipeline::{Corrupted, Pipeline};

#[cfg(test)]
mod tests;
