//! # privpref
//!
//! Reward models from pairwise (and K-wise) preference feedback under **label differential
//! privacy**, with exact solvers that return the minimiser together with an optimality
//! certificate.
//!
//! A comparison shows two actions; its features `x = φ(s, a¹) − φ(s, a⁰) ∈ ℝ^d` are public and
//! its label `y ∈ {0, 1}` (1 = `a¹` preferred) is private. Under the Bradley–Terry–Luce model
//! `P(y = 1) = σ(xᵀθ*)`. Every estimator minimises one objective over a feasible set (by default
//! `Θ_B = {1ᵀθ = 0, ‖θ‖ ≤ B}`),
//!
//! `F(θ) = (1/W) Σ_i w_i ℓ(x_iᵀθ; y_i) + (β/2W) ‖θ‖² + (1/W) ⟨b, θ⟩`,  `W = Σ_i w_i`,
//!
//! with a loss that matches how the labels were privatised: the logistic loss on clear labels,
//! the noisy-channel or debiased loss on labels randomised by [`mechanism::RandomizedResponse`],
//! objective perturbation for the central model, and so on. The estimators, their formulas and
//! the papers they come from (Chowdhury, Zhou & Natarajan (2024); "Provable protection of human
//! judgements" (anon., 2025); Ghazi et al. (2021); Zhang et al. (2025); Zhou, Wu & Orabona
//! (2025)) are listed in `docs/papers.md`; `ARCHITECTURE.md` describes the layers.
//!
//! A local guarantee follows the labels' provenance ([`privacy::Provenance`]), not the loss: the
//! mechanisms' `privatize` methods return [`privacy::PrivatizedLabels`],
//! [`estimator::fit_privatized`] attaches their guarantee (and rejects a loss at another ε), and
//! [`estimator::fit`] on raw labels attaches none.
//!
//! ## Example
//!
//! Randomise each label once, then fit the debiased randomized-response estimator exactly:
//!
//! ```
//! use privpref::data::PairwiseView;
//! use privpref::estimator::{fit_privatized, FitOptions};
//! use privpref::feasible::FeasibleSet;
//! use privpref::loss::LossSpec;
//! use privpref::mechanism::{simulation_rng, RandomizedResponse};
//! use privpref::privacy::NoiseRng;
//! use privpref::sim::{btl_pairs, theta_star};
//!
//! // Simulated data: x is n×d row-major (feature differences), y the clear labels.
//! let theta_true = theta_star(5, 1.0, true, &mut simulation_rng(1))?;
//! let data = btl_pairs(20_000, &theta_true, &mut simulation_rng(2))?;
//! // Each label is randomised once, with a CSPRNG; the labels keep their provenance (ε = 1).
//! let y_private = RandomizedResponse::new(1.0)?.privatize(&data.y, &mut NoiseRng::secure()?)?;
//! let view = PairwiseView::new(&data.x, data.n, data.d, y_private.labels(), None)?;
//! // The debiased RR estimator over Θ_B = {Σθ = 0, ‖θ‖ ≤ 2}, solved exactly.
//! let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(2.0)?);
//! let model = fit_privatized(view, &y_private, &opts)?;
//! assert_eq!(model.guarantee.as_ref().map(|g| g.eps), Some(1.0));
//! let report = model.report.into_result()?; // Err unless the KKT certificate holds
//! assert!(report.certificate.kkt_residual <= report.certificate.kkt_tol);
//! # Ok::<(), privpref::Error>(())
//! ```
//!
//! ## Modules, bottom to top
//!
//! * [`math`], [`par`]: scalar and SIMD special functions, dot products, a root finder; the
//!   deterministic block reduction every pass uses. [`error`]: the typed [`Error`].
//!   [`rng`]: the secure and the simulation generators.
//! * [`data`]: borrowed, validated views ([`data::PairwiseView`], K-wise [`data::GroupView`],
//!   K-class [`data::MulticlassView`], [`data::UserIndex`]) and `.npy` I/O (feature `npy`).
//!   [`feasible`]: `Θ_B`, ball, sum-zero, unconstrained, with exact projections.
//! * [`loss`]: pointwise losses ([`loss::Loss`]) and group losses of `K` scores
//!   ([`loss::GroupLoss`]), with stable scalar forms and SIMD batches.
//! * [`kernels`]: fused, deterministic passes over the features (value and gradient in one
//!   read, Hessians, Hessian-vector products).
//! * [`objective`]: `F` for pairwise ([`objective::Objective`]) and K-wise
//!   ([`objective::GroupObjective`]) data, behind [`objective::SmoothObjective`] and
//!   [`objective::SecondOrderObjective`].
//! * [`solver`]: projected Newton, Newton-CG, L-BFGS and SGD, each reporting a KKT certificate
//!   ([`solver::SolveReport`]) and its progress to an optional [`solver::Observer`].
//! * [`privacy`]: the [`privacy::Guarantee`] attached to every release, noise calibrations and
//!   the RDP accountant. [`mechanism`]: label randomisers (randomized response, K-RR, RRTop-k,
//!   RR-with-prior, user-level RR), discrete Laplace, AboveThreshold.
//! * [`model`]: the fitted model. [`estimator`]: one entry point per data kind,
//!   [`estimator::fit`] (pairwise) and [`estimator::fit_kwise`] (K-wise), plus the central,
//!   robust, user-level and label-private SGD estimators.
//! * [`policy`]: confidence sets, exact inner minima and certified pessimistic policies.
//!   [`sim`]: seeded data generators for simulations.
//!
//! ## Guarantees
//!
//! * **Exactness.** A solver reports `converged` only when the relative KKT residual of
//!   [`solver::certificate`] at the returned point is below the tolerance (default `1e-10`);
//!   otherwise the report says how it stopped ([`solver::Termination`]), including a proven
//!   `NoMinimizer` when the objective is unbounded below.
//! * **Privacy.** Every fitted model carries a [`privacy::Guarantee`] (or `None` when it is not
//!   private). Mechanisms take the random generator explicitly; real data must be privatised
//!   with the CSPRNG of [`mechanism::secure_rng`] or [`privacy::NoiseRng::secure`].
//! * **Determinism.** Results are bit-identical for any number of threads.
//! * **Errors.** Invalid input is a typed [`Error`] naming the row and column, never a panic.
#![warn(missing_docs)]

pub mod data;
pub mod error;
pub mod kernels;
pub mod loss;
pub mod math;
pub mod mechanism;
pub mod par;
pub mod rng;
pub mod sim;

pub use error::{Error, Result};
pub mod estimator;
pub mod feasible;
pub mod model;
pub mod objective;
pub mod policy;
pub mod prelude;
pub mod privacy;
pub mod solver;

/// The README's code blocks, compiled and run as doc-tests so that the README example stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The test profile's checks reach the library's own code. `cargo test --profile checked` (the
/// README's test command) turns on debug assertions and integer-overflow checks together; a
/// profile with debug assertions but without overflow checks fails here. Under `release` (no
/// debug assertions) there is nothing to check.
#[cfg(test)]
mod profile_checks {
    #[test]
    fn an_integer_overflow_panics_when_debug_assertions_are_on() {
        let overflowed = std::panic::catch_unwind(|| std::hint::black_box(u32::MAX) + std::hint::black_box(1u32));
        assert_eq!(
            overflowed.is_err(),
            cfg!(debug_assertions),
            "overflow checks differ from debug assertions"
        );
    }

    #[test]
    fn a_shape_product_that_overflows_usize_panics_when_debug_assertions_are_on() {
        // The unchecked form of the .npy shape product (the library uses checked_mul there).
        let shape = std::hint::black_box([usize::MAX / 2 + 1, 2]);
        let overflowed = std::panic::catch_unwind(|| shape.iter().product::<usize>());
        assert_eq!(
            overflowed.is_err(),
            cfg!(debug_assertions),
            "overflow checks differ from debug assertions"
        );
    }
}
