//! # privpref
//!
//! Reward models from pairwise preference feedback under **label differential privacy**, with
//! exact, certified solvers.
//!
//! A comparison `i` shows two actions; `x_i = φ(s_i, a_i¹) − φ(s_i, a_i⁰) ∈ ℝ^d` is public and the
//! label `y_i ∈ {0, 1}` (1 = `a¹` preferred) is private. Under the Bradley–Terry–Luce model
//! `P(y_i = 1) = σ(x_iᵀθ*)`. Every estimator minimises, over a feasible set (by default
//! `Θ_B = {1ᵀθ = 0, ‖θ‖ ≤ B}`),
//!
//! `F(θ) = (1/W) Σ_i w_i ℓ(x_iᵀθ; y_i) + (β/2W) ‖θ‖² + (1/W) ⟨b, θ⟩`,  `W = Σ_i w_i`,
//!
//! with one of the losses of [`loss`] (seed 000 = Chowdhury, Zhou & Natarajan, "Differentially
//! Private Reward Estimation with Preference Feedback", AISTATS 2024):
//!
//! | estimator | loss | privacy | reference |
//! |---|---|---|---|
//! | non-private MLE | `softplus((1−2y)t)` | none | seed 000 eq. 8 |
//! | MLE-RR | `−log(σ̄_ε + c_ε σ(±t))` on RR labels | ε-label-LDP | seed 000 eq. 3 |
//! | debiased RR `θ̂_RR` | `c_ε softplus(s) + σ̄_ε s`, `s = (1−2ỹ)t` | ε-label-LDP | seed 000 eqs. 4–6 |
//! | Thurstone MLE | `−log Φ((2y−1)t)` | none | seed 000 §4.4 |
//!
//! Labels are privatised by [`mechanism::RandomizedResponse`] (keep with probability `σ(ε)`);
//! the local estimators are post-processing, hence ε-label-LDP.
//!
//! **K-wise preferences.** A sample shows `K` alternatives with feature rows `φ_ik` (a block
//! `Φ_i`, [`data::GroupView`]) and reports the chosen one or a ranking `o` (best first). With
//! scores `u = Φ_iθ`, the same objective is minimised with a [`loss::GroupLoss`]
//! ([`estimator::fit_kwise`]):
//!
//! | estimator | loss `ℓ(u; o)` | privacy | reference |
//! |---|---|---|---|
//! | Plackett–Luce top-1 MLE (`pl-top1`) | `LSE(u) − u_y` | none | seed 000 eq. 11 |
//! | Plackett–Luce ranking MLE (`pl-ranking`, top-`J`) | `Σ_{j<J} [LSE_{k∈R_j} u_k − u_{o_j}]` | none | seed 001 §4.2 |
//! | debiased K-RR top-1 (`pl-krr`) | `c_{K,ε} LSE(u) − wᵀu`, `w_k = 1(ỹ=k) − 1/(e^ε+K−1)` | ε-label-LDP ([`mechanism::KaryRr`]) | seed 000 §4.4, App. C.4 |
//!
//! (`R_j` = alternatives not ranked before stage `j`, `c_{K,ε} = (e^ε−1)/(e^ε+K−1)`.) With
//! `K = 2`, `pl-top1` is the BTL loss on `x = φ₁ − φ₀` and `pl-krr` is `debiased-rr`; trajectory
//! comparisons reduce to pairwise data ([`data::trajectory_pairs`], seed 001 §5).
//!
//! Central estimators ([`estimator::central`], [`estimator::private_mle`]) see clear labels and
//! randomise the release:
//!
//! | estimator | objective / release | privacy | reference |
//! |---|---|---|---|
//! | objective perturbation | `mean ℓ + (β/2n)‖θ‖² + (1/n)⟨w,θ⟩`, `w ~ N(0, s_w²I)`, `s_w = L√(8 ln(2/δ)+4ε)/ε`, exact minimiser | `(ε, δ)`-label DP | seed 000 Alg. 2, Thm 5.2 |
//! | private MLE | `mean ℓ + α‖θ‖² + ⟨b,θ⟩/n`, certified `β`-minimiser `+ w` | `(ε/2, δ/2)`-DP | seed 001 Alg. 1 (corrected constants) |
//! | private covariance | `(1/n)Σxxᵀ + G_sym`, eigenvalue floor | `(ε/2, δ/2)`-DP | seed 001 Alg. 2 (corrected calibration) |
//!
//! Every fitted model carries a [`privacy::Guarantee`] (or `None` when not private).
//!
//! ## Layers
//! * [`data`]: borrowed, validated views ([`data::PairwiseView`], K-wise [`data::GroupView`])
//!   and `.npy` I/O;
//! * [`loss`]: pointwise losses with stable scalar forms and SIMD batches ([`loss::Loss`]), and
//!   group losses of `K` scores with their `K × K` Hessian blocks ([`loss::GroupLoss`]);
//! * [`kernels`]: fused, deterministic passes over `X` (value + gradient in one read);
//! * [`objective`]: `F`, its gradient, Hessian, Hessian-vector products, O(n) line searches —
//!   pairwise ([`objective::Objective`]) or K-wise ([`objective::GroupObjective`], the group
//!   loss lifted as `Φᵀ·block·Φ`), both behind [`objective::SmoothObjective`];
//! * [`feasible`]: `Θ_B`, ball, sum-zero, unconstrained, with exact projections;
//! * [`solver`]: exact projected Newton, projected L-BFGS and projected SGD over any
//!   [`objective::SmoothObjective`], all reporting a KKT certificate ([`solver::SolveReport`]) and progress to an
//!   optional [`solver::Observer`];
//! * [`estimator`]: one entry point per data kind, [`estimator::fit`] (pairwise) and
//!   [`estimator::fit_kwise`] (K-wise); [`experiments`]: paper experiments.
//!
//! ## Guarantees
//! * **Exactness.** Newton and L-BFGS stop on the projected-gradient (KKT) residual
//!   `‖θ − Π(θ − ∇F(θ))‖ ≤ max(1e-12, 1e-10·‖P∇F(0)‖)`; Newton then refines `θ` with gradients
//!   computed in doubled precision, L-BFGS polishes with a few more iterations. A report that did not converge says so
//!   ([`solver::Termination`]); without a norm bound, a loss that is unbounded below on the
//!   data ends with a certificate (`NoMinimizer`), not a loop.
//! * **Determinism.** Results are bit-identical for any number of threads.
//! * **Errors.** Invalid input is a typed [`Error`] naming the row and column, never a panic.
//!
//! ## Example
//! ```
//! use privpref::{data::PairwiseView, estimator::{fit, FitOptions}, feasible::FeasibleSet, loss::LossSpec};
//! // Spec T1: one-hot rows, 3 of 4 preferred for item 0, 1 of 4 for item 1, 2 of 4 for item 2.
//! let mut x = Vec::new();
//! let mut y = Vec::new();
//! for (j, wins) in [(0usize, 3usize), (1, 1), (2, 2)] {
//!     for k in 0..4 {
//!         let mut row = [0.0; 3];
//!         row[j] = 1.0;
//!         x.extend_from_slice(&row);
//!         y.push((k < wins) as u8);
//!     }
//! }
//! let view = PairwiseView::new(&x, 12, 3, &y, None)?;
//! let model = fit(view, &FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0)?))?;
//! let l3 = 3f64.ln();
//! assert!(model.report.converged());
//! for (a, b) in model.theta.iter().zip([l3, -l3, 0.0]) {
//!     assert!((a - b).abs() < 1e-12);
//! }
//! # Ok::<(), privpref::Error>(())
//! ```
#![warn(missing_docs)]

pub mod data;
pub mod error;
pub mod kernels;
pub mod loss;
pub mod mechanism;
pub mod par;
pub mod sim;

pub use error::{Error, Result};
pub mod estimator;
pub mod experiments;
pub mod feasible;
pub mod model;
pub mod objective;
pub mod privacy;
pub mod solver;
