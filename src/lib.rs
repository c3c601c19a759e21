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
//! the local estimators are post-processing, hence ε-label-LDP. The guarantee follows the labels'
//! provenance ([`privacy::Provenance`]), not the loss: the mechanisms' `privatize` methods return
//! [`privacy::PrivatizedLabels`], [`estimator::fit_privatized`] attaches their guarantee (and
//! rejects a loss at another ε), and [`estimator::fit`] on raw labels attaches none.
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
//! Robustness (seed 004 = Zhou, Wu & Orabona, ICML 2025): labels corrupted before or after
//! privatisation ([`sim::corrupt`]: CTL, LTC, CLC and the adversaries of the spec), the loss-(14)
//! estimator `f = softplus(u) − ŷu = coth(ε/2)·ℓ_debiased` (one code path with the debiased RR
//! loss) and the DPO reduction `θ_true = β(θ* − θ_sft)` ([`estimator::robust`], [`sim::dpo`]).
//! The paper experiments are the `privpref-experiments` crate of the workspace
//! (`privpref experiment NAME`).
//!
//! ## Label-private convex learning (seed 002)
//!
//! Seed 002 = Ghazi, Golowich, Kumar, Manurangsi & Zhang, "Deep Learning with Label Differential
//! Privacy" (NeurIPS 2021, supplement; spec `label-dp-sgd-and-priors.md`). The trainer holds the
//! clear labels and privatises each one **once, when its sample is used** by one pass of
//! projected SGD ([`estimator::label_sgd`]); models are the binary linear model, the K-wise
//! Plackett–Luce model and the K-class softmax ([`data::MulticlassView`]) on the same
//! [`loss::Loss`] / [`loss::GroupLoss`] layer:
//!
//! | algorithm | release per sample | gradient | privacy | reference |
//! |---|---|---|---|---|
//! | LP-RR-SGD | `ỹ ~ K-RR_ε(y)` ([`mechanism::KaryRr`]) | `f_K(G_ỹ − q_K Σ_k G_k)`, `f_k = (E+k−1)/(E−1)`, `q_k = 1/(E+k−1)` | `ε` | Alg. 5, eq. (7), Thm 9 |
//! | top-k prior | RRTop-k over the prior's top `k` ([`mechanism::RrTopK`]) | the same over `Y_k` | `ε` | Cor. 10, §G |
//! | RR-with-prior | RRTop-`k*`, `k* = argmax_k (E/(E+k−1))Σ_{j≤k} p_(j)` ([`mechanism::RrWithPrior`]) | the same over `Y_{k*}` | `ε` | Alg. 2 |
//! | LP-Normal-SGD | `G_0 + Qᵀ(Q(G_y − G_0) + z)`, `z ~ N(0, σ²I_r)`, `Q` spanning the candidate-gradient differences | that vector | `(ε, δ)`, σ analytic or classic | Alg. 6, Prop. 11 |
//! | multi-stage (LP-MST) | stage `s` uses RR-with-prior with the stage-`s−1` model's prior | per release | `ε` (parallel over stages) | §3.1 |
//! | histogram prior | per-cluster label counts + one exact discrete Laplace draw per bin ([`mechanism::DiscreteLaplace`]) | — | `ε_p` (adds to `ε`) | Alg. 4 |
//!
//! (`G_k` = the gradient under candidate label `k`, `E = e^ε`.) LP-Normal-SGD's privacy does not
//! depend on the rank decision: only `Q(G_y − G_0)` depends on the label, and its realised
//! sensitivity is checked against the calibrated `Δ` at every step. The debiased ERM with the
//! exact solvers ([`estimator::fit_kwise`] with `pl-krr`) is the comparison point
//! (`crates/privpref-experiments/examples/label_sgd.rs`).
//!
//! ## Pessimistic policies ([`policy`])
//!
//! From a released `θ̂` (and covariance `Σ̃`) and a **public** state sample with `A` actions per
//! state and features `φ(s, a)` (a borrowed dense `n × A × d` array):
//!
//! | piece | formula | reference |
//! |---|---|---|
//! | confidence set | `C = {θ ∈ Θ_B : ‖θ − θ̂‖_{Σ̃+λI} ≤ Γ}`, `Θ_B` ball / sum-zero ball / plane / none | seed 001 eq. 2, seed 004 Alg. 2 |
//! | `λ`, `Γ` | explicit: seed 001 `√(3/2)(R1+…+R5)` with `λ = 2s_G(2√d + √(2 ln(1/η)))`; seed 004 `2f/γ + 2B√λ` with `λ = X_max² d ln(n/η)/n`; objective perturbation (derived) | [`policy::radius`] |
//! | inner minimum | `min_C ⟨θ, u⟩ = ⟨θ̂, u⟩ − Γ‖u‖_{M⁻¹}` (ellipsoid); exact nested Lagrange multipliers when the ball binds, with a certified lower bound and a feasible minimiser | spec A §6.2 |
//! | policy | `max_π min_C ⟨θ, g(π)⟩`, `g(π) = Σ_s ρ_s Σ_a π_s(a)φ(s,a) − v`: Frank–Wolfe (one parallel deterministic pass per iteration), certified gap `min_τ h(θ_τ) − Ĵ(π)`, purification to `≤ d` randomised states, rounding | spec A §6.3, spec B §6.4 |
//! | greedy (`η = 0`) | `π̂(s) = argmax_a ⟨θ̂, φ(s, a)⟩` | seed 004 Alg. 2 |
//! | MDP | `ψ(π) = E_π Σ_h φ(s_h, a_h)`, Frank–Wolfe with backward induction | seed 001 §5, spec A §6.4 |
//!
//! The policy is post-processing of `(θ̂, Σ̃)`; the states, weights, reference and `λ`, `Γ` must
//! be public.
//!
//! ## User-level label DP (seed 003)
//!
//! When user `u` contributes `m_u` comparisons (a [`data::UserIndex`]) and neighbouring datasets
//! differ in *all* labels of one user (Zhang et al., "Towards User-level Private RLHF", Def. 2;
//! spec `user-level-label-dp.md`), [`estimator::user_level`] provides:
//!
//! | estimator | mechanism | privacy | reference |
//! |---|---|---|---|
//! | user-level RR ([`mechanism::UserLevelRr`] + [`estimator::user_level::fit_user_rr`]) | each label by RR at `ε/m_u`; exact debiased estimator over `Θ_B` | pure `ε` per user, local | seed 003 §4.1 |
//! | user-wise DP-SGD ([`estimator::user_level::user_dpsgd`]) | Poisson users (rate `q`), per-user averaged gradient clipped to `C`, `(Σ + N(0, σ²C²I))/ñ` | `(ε, δ)` from the RDP accountant | seed 003 Alg. 4, noise placement fixed |
//! | AUP-RLHF ([`estimator::user_level::aup_rlhf`]) | phases of AdapUserPriv-SGD: AboveThreshold concentration test (sensitivity 2, one noisy threshold per run), outlier-robust mean, Gaussian noise `2√2τσ√(ln(e^εT/δ))/ñ` | `(ε, δ)` as claimed by the paper | seed 003 Alg. 1–3, spec §11 fixes |
//!
//! The accountant [`privacy::rdp`] computes the Rényi DP of the Poisson-subsampled Gaussian
//! (Mironov, Talwar & Zhang 2019) at integer orders (a cancellation-free positive sum) and
//! fractional orders (the two-sided erfc series), composes, converts to `(ε, δ)` (Mironov 2017 or
//! Canonne, Kamath & Steinke 2020) and calibrates the noise multiplier conservatively (the
//! returned `σ` always meets the target). Label DP is a *replace-one* relation: the default
//! [`privacy::rdp::Neighbours::Replace`] is a proven bound through the weak triangle inequality;
//! add/remove (the usual DP-SGD accountant) is available as the paper-faithful choice.
//!
//! ## Layers
//! * [`data`]: borrowed, validated views ([`data::PairwiseView`], K-wise [`data::GroupView`],
//!   K-class [`data::MulticlassView`]) and `.npy` I/O;
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
//!   [`estimator::fit_kwise`] (K-wise), plus the central, robust, user-level and label-private
//!   SGD ([`estimator::label_sgd`]) estimators;
//! * [`policy`]: confidence sets, exact inner minima and certified pessimistic policies.
//!
//! ## Guarantees
//! * **Exactness.** Every solver certifies its answer by the relative KKT residual of
//!   [`solver::certificate`]: each coordinate of the KKT conditions at most `1e-10` of the
//!   magnitude of its terms, recomputed at the returned point — invariant to the units of the
//!   features and not fooled by one dominating row. Newton (and Newton-CG) refine `θ` with
//!   gradients computed in doubled precision, L-BFGS polishes with a few more iterations. A
//!   report that did not converge says so
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
pub mod privacy;
pub mod solver;
