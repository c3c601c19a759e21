//! Local label randomisers (label-LDP mechanisms) and the crate's RNG policy.
//!
//! A [`Mechanism`] maps each private label `y ∈ {0, …, K−1}` to a randomised label `ỹ` drawn
//! from row `y` of its transition matrix `T[y, ỹ] = P[ỹ | y]`. It is ε-label-LDP (Chowdhury,
//! Zhou & Natarajan (2024), Def. 2.3) when `T[i, j] ≤ e^ε · T[i', j]` for all inputs
//! `i, i'` and outputs `j`. Local label DP implies central label DP (Remark 2.4), and every
//! estimator computed from the randomised labels alone is post-processing, so it inherits the
//! guarantee.
//!
//! Rules:
//! * randomise each label **exactly once** and store `ỹ`; reuse it for every epoch and refit;
//! * keep mechanisms separate from estimators: estimators take already-randomised labels and the
//!   [`transition_matrix`](Mechanism::transition_matrix) (the debiased losses need it);
//! * privatise with the mechanisms' `privatize` methods ([`RandomizedResponse::privatize`],
//!   [`KaryRr::privatize`], [`RrTopK::privatize`], [`RrWithPrior::privatize`],
//!   [`UserLevelRr::privatize`]): they take a [`NoiseRng`](crate::privacy::NoiseRng) and return
//!   [`PrivatizedLabels`](crate::privacy::PrivatizedLabels) whose
//!   [`Provenance`](crate::privacy::Provenance) records the randomiser, `ε` (and `K`, `k`, the
//!   user counts) and the generator; a local guarantee is attached only to labels with a
//!   provenance. [`Mechanism::randomize`] returns raw labels without one (for simulations);
//! * the RNG is an explicit argument. Real data must be privatised with [`secure_rng`] (a CSPRNG
//!   seeded from OS entropy); seeded generators ([`simulation_rng`]) are for simulations only.
//!
//! | mechanism | `P[ỹ = y]` | `P[ỹ = y' ≠ y]` | paper |
//! |---|---|---|---|
//! | [`RandomizedResponse`] (K = 2) | `σ(ε) = e^ε/(1+e^ε)` | `σ(−ε) = 1/(1+e^ε)` | Chowdhury, Zhou & Natarajan (2024), eq. 2 |
//! | [`KaryRr`] (K labels) | `e^ε/(e^ε+K−1)` | `1/(e^ε+K−1)` each | Chowdhury, Zhou & Natarajan (2024), eq. 12; Ghazi et al. (2021), Alg. 5 |
//! | [`RrTopK`], [`RrWithPrior`] | see [`kary`](self::KaryRr) (per-sample prior) | | Ghazi et al. (2021), main paper Alg. 1–2 |
//! | [`UserLevelRr`] (user budget ε) | `σ(ε/m_u)` for each of user `u`'s `m_u` labels | `σ(−ε/m_u)` | Zhang et al. (2025), Sec. 4.1 |
//!
//! [`DiscreteLaplace`] is the exact integer noise of the private histogram prior (Ghazi et al.
//! (2021), Alg. 4; Canonne, Kamath & Steinke 2020, Algorithms 1–2).
//!
//! [`AboveThreshold`] (sparse vector, one noisy threshold per run) is the concentration test of
//! AdapUserPriv-SGD (Zhang et al. (2025), Alg. 3, calibrated for the concentration score's
//! sensitivity 2 where the paper uses 1).

mod above_threshold;
mod discrete_laplace;
mod kary;
mod rr;
mod user_rr;

pub use crate::rng::{mix_seed, secure_rng, simulation_rng, uniform_f64, SecureRng, SimRng};
pub use above_threshold::{laplace, AboveThreshold, AtCalibration};
pub use discrete_laplace::DiscreteLaplace;
pub use kary::{top_k, KaryRr, RrTopK, RrWithPrior, TopDraw};
pub use rr::RandomizedResponse;
pub use user_rr::UserLevelRr;

use crate::error::Result;
use rand::Rng;

/// A local label randomiser with `K` labels `{0, …, K−1}` (see the module docs).
///
/// Contract: [`randomize`](Mechanism::randomize) draws output `j` for input `i` with
/// probability `transition_matrix()[i*K + j]`, independently across labels, and
/// `max_{i,i',j} T[i,j]/T[i',j] = e^{eps()}` (pure ε-label-LDP, Chowdhury, Zhou & Natarajan,
/// AISTATS 2024, Def. 2.3).
pub trait Mechanism {
    /// The privacy level ε > 0: `P[ỹ = j | y = i] ≤ e^ε · P[ỹ = j | y = i']` for all `i, i', j`.
    fn eps(&self) -> f64;

    /// The number of labels `K`; inputs and outputs lie in `{0, …, K−1}`.
    fn num_labels(&self) -> usize;

    /// The `K × K` transition matrix, row-major: entry `[i*K + j] = P[ỹ = j | y = i]`. Each
    /// row sums to 1 (to rounding).
    fn transition_matrix(&self) -> Vec<f64>;

    /// Randomises every label once, independently, returning `ỹ` (same length and order).
    ///
    /// The output carries no provenance, so estimators attach no local guarantee to it; the
    /// mechanisms' `privatize` methods return the same draws with their provenance.
    ///
    /// Privatising real data: pass [`secure_rng()`](secure_rng)`?`. A seeded
    /// [`SimRng`] is for simulations only. Each label must be randomised exactly once: store
    /// and reuse the output; calling this again on the same labels spends another ε.
    ///
    /// # Errors
    /// [`Error::Data`](crate::Error::Data) naming the first row whose label is `≥ K`.
    fn randomize<R: Rng + ?Sized>(&self, labels: &[u8], rng: &mut R) -> Result<Vec<u8>>;
}
