//! [`SmoothObjective`]: what the solvers need from an objective, and its implementation for the
//! pairwise [`Objective`].
//!
//! The solvers ([`newton`](crate::solver::newton), [`lbfgs`](crate::solver::lbfgs),
//! [`sgd`](crate::solver::sgd)) are generic over this trait, so the same code minimises the
//! pairwise objective of a pointwise [`Loss`] and the K-wise objective of a
//! [`GroupLoss`](crate::loss::GroupLoss) ([`GroupObjective`](super::group::GroupObjective)).
//! Every objective has the form
//!
//! `F(θ) = (1/W) Σ_i w_i ℓ_i(Φ_i θ) + (β/2W)‖θ‖² + (1/W)⟨b, θ⟩`
//!
//! where `Φ_i` is one row `x_iᵀ` (pairwise) or the `K × d` feature block of a group, and the
//! "scores" cached by an [`Eval`] are the stacked `Φ_i θ` (length [`num_scores`]).
//!
//! The capabilities are separate traits, so an objective implements what its solvers need:
//! [`SmoothObjective`] (value, gradient, line values, certificate scales: L-BFGS and the
//! certificate), [`SecondOrderObjective`] (Hessian and Hessian-vector products: Newton and
//! Newton-CG) and, in the solver layer, `solver::sgd::SgdObjective` (the SGD schedule and steps).
//! A user's own objective can implement the first two and run on the exact solvers. The
//! implementations for [`Objective`] forward to its inherent methods.
//!
//! [`num_scores`]: SmoothObjective::num_scores

use super::{Eval, Objective};
use crate::loss::Loss;

/// A smooth objective `F(θ)` over `θ ∈ ℝ^d` with cached scores (module docs): what L-BFGS and
/// the relative KKT certificate need. Implemented by [`Objective`] (pairwise) and
/// [`GroupObjective`](super::group::GroupObjective) (K-wise).
pub trait SmoothObjective: Sync {
    /// The loss is convex in the scores for every label (then `F` is convex).
    const CONVEX: bool;
    /// Number of parameters `d`.
    fn dim(&self) -> usize;
    /// Number of samples `n` (rows, or groups).
    fn num_samples(&self) -> usize;
    /// Length of the score vector of an [`Eval`] and of [`SmoothObjective::direction_scores`]
    /// (`n` pairwise, `n·K` for groups; on rows shared by a group, the process's own rows).
    fn num_scores(&self) -> usize;
    /// `W = Σ w_i`.
    fn total_weight(&self) -> f64;
    /// `β`.
    fn ridge(&self) -> f64;
    /// `b`, if any.
    fn linear_term(&self) -> Option<&[f64]>;
    /// An empty [`Eval`] of the right sizes.
    fn new_eval(&self) -> Eval {
        Eval::new(self.num_scores(), self.dim())
    }
    /// Evaluates `F`, `∇F` and the scores at `theta` into `ev`.
    fn evaluate(&self, theta: &[f64], ev: &mut Eval);
    /// The scores of a direction `s` (`Φ s`, stacked), for the O(n) line searches.
    fn direction_scores(&self, s: &[f64], out: &mut [f64]);
    /// `F(θ + α s)` from the cached scores of `ev` (at `θ`) and `xs = Φ s`.
    fn line_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64) -> f64;
    /// `F(c·(θ + α s))` from the cached scores (projection arc onto a ball).
    fn arc_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64, scale: f64) -> f64;
    /// The magnitudes `a_j` of the terms of each gradient coordinate at `ev`'s point (one pass;
    /// the scale of the relative KKT certificate, [`crate::solver::certificate`]).
    fn grad_scale(&self, ev: &Eval, out: &mut [f64]);
    /// [`SmoothObjective::evaluate`] then [`SmoothObjective::grad_scale`] at `theta`, in one pass
    /// where the objective has a fused pass (pairwise: the same bits as the two calls).
    fn evaluate_scaled(&self, theta: &[f64], ev: &mut Eval, scale: &mut [f64]) {
        self.evaluate(theta, ev);
        self.grad_scale(ev, scale);
    }
    /// Whether [`SmoothObjective::evaluate_scaled`] reads the data once (a fused pass).
    fn fused_scale(&self) -> bool {
        false
    }
    /// [`SmoothObjective::grad_scale`] estimated from a fixed sample of about `rows` rows without
    /// a pass over `X` (a guide for the solvers' cheap stopping test, never a certificate);
    /// `None` when not offered (the default) or not worth it.
    fn grad_scale_sample(&self, _ev: &Eval, _rows: usize) -> Option<Vec<f64>> {
        None
    }
    /// The recession slope `F∞(θ) = lim_{r→∞} F(rθ)/r` at `ev`'s point and the absolute size of
    /// its terms, both divided by `W`; `None` when `β > 0`.
    fn recession_slope(&self, ev: &Eval) -> Option<(f64, f64)>;
    /// Whether some score at `ev`'s point is non-zero (`Xθ ≠ 0`).
    fn scores_nonzero(&self, ev: &Eval) -> bool {
        ev.scores.iter().any(|&t| t != 0.0)
    }
    /// Column scales of the Hessian's diagonal (L-BFGS's diagonal preconditioner).
    fn column_second_moments(&self) -> Vec<f64>;
    /// The same scales from a fixed sample of about `rows` rows, without a pass over `X`
    /// (L-BFGS's cheap check whether preconditioning can be needed); `None` when not offered
    /// (the default) or not worth it.
    fn column_second_moments_sample(&self, _rows: usize) -> Option<Vec<f64>> {
        None
    }
    /// A sufficient certificate that `F` is convex on the ball of radius `radius` (intersected
    /// with the sum-zero subspace when `sum_zero`). Called only when `CONVEX` is false.
    fn convex_on_ball(&self, radius: f64, sum_zero: bool) -> bool;
    /// Whether a validation of the data that the passes take along (a fit of data not
    /// validated before it, [`crate::estimator::fit_features`]) has finished and found data the
    /// fit cannot use as they are: the solvers then stop after their first pass, and the
    /// caller reports the validation's verdict. `false` by default.
    fn features_rejected(&self) -> bool {
        false
    }
}

/// The second-order capability of a [`SmoothObjective`]: Hessians, Hessian-vector products and
/// a compensated gradient (what projected Newton and Newton-CG need).
pub trait SecondOrderObjective: SmoothObjective {
    /// `F(θ)` and `∇F(θ)` (into `grad`) computed as if in twice the working precision (final
    /// refinement of Newton).
    fn value_grad_compensated(&self, theta: &[f64], grad: &mut [f64]) -> f64;
    /// The dense Hessian `∇²F` at `ev`'s point, column-major `d × d` into `h`. Returns the
    /// number of samples with negative curvature (non-convex losses only).
    fn hessian_into(&self, ev: &Eval, h: &mut [f64]) -> usize;
    /// [`SmoothObjective::evaluate`] then [`SecondOrderObjective::hessian_into`] at `theta`, in one
    /// pass over the data where the objective has a fused pass (pairwise: the same bits as the
    /// two calls). Returns the number of samples with negative curvature.
    fn evaluate_with_hessian(&self, theta: &[f64], ev: &mut Eval, h: &mut [f64]) -> usize {
        self.evaluate(theta, ev);
        self.hessian_into(ev, h)
    }
    /// Whether [`SecondOrderObjective::evaluate_with_hessian`] reads the data once (a fused pass)
    /// rather than twice.
    fn fused_hessian(&self) -> bool {
        false
    }
    /// `out = ∇²F v` at `ev`'s point.
    fn hess_vec(&self, ev: &Eval, v: &[f64], out: &mut [f64]);
    /// The curvature of a fixed, evenly spaced sample `S` of about `rows` rows at `ev`'s point
    /// (Newton-CG's preconditioner, [`crate::solver::newton_cg`]):
    /// `H_S = (1/W_S) Σ_{i∈S} w_i max(ℓ''(t_i), 0) x_i x_iᵀ + (β/W) I`, `W_S = Σ_{i∈S} w_i`,
    /// column-major `d × d` (both triangles). An unbiased estimate of the data part of `∇²F`
    /// when the loss is convex. `m·d²` flops on `m ≈ rows` rows, no pass over `X`; the same bits
    /// for any thread and process count. With `columns` (ascending indices in `0..d`), the
    /// principal submatrix of `H_S` on those columns, `|columns| × |columns|`, at `m·|columns|²`
    /// flops (a cheap look at the design's conditioning: by Cauchy interlacing its condition
    /// number is at most that of `H_S`). `None` when not offered (the default), when the data
    /// have no more than `2·rows` rows or the sampled weights are all zero.
    fn hessian_sample(&self, _ev: &Eval, _rows: usize, _columns: Option<&[usize]>) -> Option<Vec<f64>> {
        None
    }
    /// Whether the dense Hessian can be formed with the single-process bits (false for rows
    /// distributed in units finer than the Hessian's chunks: [`crate::par::Shard::whole_chunks`]).
    fn dense_hessian_available(&self) -> bool {
        true
    }
}

impl<L: Loss> SmoothObjective for Objective<'_, L> {
    const CONVEX: bool = L::CONVEX;
    fn dim(&self) -> usize {
        Objective::dim(self)
    }
    fn num_samples(&self) -> usize {
        self.data().n()
    }
    fn num_scores(&self) -> usize {
        // The rows this process holds (all, or its shard's on a distributed view).
        self.data().shard().map_or(self.data().n(), |s| s.rows().len())
    }
    fn total_weight(&self) -> f64 {
        Objective::total_weight(self)
    }
    fn ridge(&self) -> f64 {
        Objective::ridge(self)
    }
    fn linear_term(&self) -> Option<&[f64]> {
        Objective::linear_term(self)
    }
    fn evaluate(&self, theta: &[f64], ev: &mut Eval) {
        Objective::evaluate(self, theta, ev)
    }
    fn direction_scores(&self, s: &[f64], out: &mut [f64]) {
        Objective::direction_scores(self, s, out)
    }
    fn line_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64) -> f64 {
        Objective::line_value(self, ev, s, xs, alpha)
    }
    fn arc_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64, scale: f64) -> f64 {
        Objective::arc_value(self, ev, s, xs, alpha, scale)
    }
    fn grad_scale(&self, ev: &Eval, out: &mut [f64]) {
        Objective::grad_scale(self, ev, out)
    }
    fn evaluate_scaled(&self, theta: &[f64], ev: &mut Eval, scale: &mut [f64]) {
        Objective::evaluate_scaled(self, theta, ev, scale)
    }
    fn fused_scale(&self) -> bool {
        true
    }
    fn grad_scale_sample(&self, ev: &Eval, rows: usize) -> Option<Vec<f64>> {
        Objective::grad_scale_sample(self, ev, rows)
    }
    fn recession_slope(&self, ev: &Eval) -> Option<(f64, f64)> {
        Objective::recession_slope(self, ev)
    }
    fn scores_nonzero(&self, ev: &Eval) -> bool {
        Objective::scores_nonzero(self, ev)
    }
    fn column_second_moments(&self) -> Vec<f64> {
        Objective::column_second_moments(self)
    }
    fn column_second_moments_sample(&self, rows: usize) -> Option<Vec<f64>> {
        Objective::column_second_moments_sample(self, rows)
    }
    fn convex_on_ball(&self, radius: f64, sum_zero: bool) -> bool {
        self.loss().convex_on(radius * self.data().max_row_norm(sum_zero))
    }
    fn features_rejected(&self) -> bool {
        self.data().scan().and_then(|s| s.complete_verdict()) == Some(false)
    }
}

impl<L: Loss> SecondOrderObjective for Objective<'_, L> {
    fn value_grad_compensated(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        Objective::value_grad_compensated(self, theta, grad)
    }
    fn hessian_into(&self, ev: &Eval, h: &mut [f64]) -> usize {
        Objective::hessian_into(self, ev, h)
    }
    fn evaluate_with_hessian(&self, theta: &[f64], ev: &mut Eval, h: &mut [f64]) -> usize {
        Objective::evaluate_with_hessian(self, theta, ev, h)
    }
    fn fused_hessian(&self) -> bool {
        true
    }
    fn hess_vec(&self, ev: &Eval, v: &[f64], out: &mut [f64]) {
        Objective::hess_vec(self, ev, v, out)
    }
    fn hessian_sample(&self, ev: &Eval, rows: usize, columns: Option<&[usize]>) -> Option<Vec<f64>> {
        Objective::hessian_sample(self, ev, rows, columns)
    }
    fn dense_hessian_available(&self) -> bool {
        self.data().shard().is_none_or(|s| s.whole_chunks())
    }
}
