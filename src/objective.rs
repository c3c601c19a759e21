//! The objective every solver minimises:
//!
//! `F(θ) = (1/W) Σ_i w_i ℓ(x_iᵀθ; y_i) + (β/2W) ‖θ‖² + (1/W) ⟨b, θ⟩`, `W = Σ_i w_i`
//!
//! (`W = n` without weights). This is exactly the scaling of objective perturbation,
//! Algorithm 2 of Chowdhury, Zhou & Natarajan (2024) (App. D): the mean loss plus `β/(2n)‖θ‖² +
//! wᵀθ/n`. Because the ridge and linear terms are divided by `W` too, a row of weight 2 is
//! *exactly* the row duplicated.
//!
//! * gradient `∇F = (Xᵀ(w ⊙ ℓ'(Xθ)) + βθ + b)/W` — one fused pass over `X` ([`Objective::evaluate`]),
//! * Hessian `∇²F = (Xᵀ diag(w ⊙ ℓ''(Xθ)) X + βI)/W` — dense, by row blocks through faer,
//! * value, gradient and Hessian together in one pass ([`Objective::evaluate_with_hessian`], used
//!   by Newton),
//! * Hessian-vector products in one pass,
//! * line searches in O(n) from cached scores `Xθ` and a direction's scores `Xs`.
//!
//! The cache is explicit: an [`Eval`] holds `θ`, the scores `Xθ`, the value and the gradient
//! of the last evaluation; Hessian and line-search calls read its scores.

pub(crate) mod group;
mod smooth;

pub use group::GroupObjective;
pub use smooth::{SecondOrderObjective, SmoothObjective};

use crate::data::PairwiseView;
use crate::error::{Error, Result};
use crate::kernels::{self, Rows};
use crate::loss::Loss;
use crate::par::Par;

/// `F(θ)` for a loss on pairwise data, with optional ridge `β` and linear term `b`.
#[derive(Debug, Clone)]
pub struct Objective<'a, L: Loss> {
    data: PairwiseView<'a>,
    loss: L,
    ridge: f64,
    linear: Option<Vec<f64>>,
    par: Par,
}

/// The state of one evaluation: `θ`, scores `t = Xθ`, `F(θ)` and `∇F(θ)`.
#[derive(Debug, Clone)]
pub struct Eval {
    /// The point.
    pub theta: Vec<f64>,
    /// `t = Xθ` (length `n`).
    pub scores: Vec<f64>,
    /// `F(θ)`.
    pub value: f64,
    /// `∇F(θ)` (full space; not projected).
    pub grad: Vec<f64>,
}

impl Eval {
    /// An empty state for `n` rows and `d` features.
    pub fn new(n: usize, d: usize) -> Self {
        Eval {
            theta: vec![0.0; d],
            scores: vec![0.0; n],
            value: f64::NAN,
            grad: vec![0.0; d],
        }
    }
}

/// Adds `β|θ_j| + |b_j|` to the loss-term magnitudes and divides by `W` (shared by
/// [`Objective::grad_scale`] and [`group::GroupObjective::grad_scale`]).
pub(crate) fn finish_grad_scale(out: &mut [f64], theta: &[f64], ridge: f64, linear: Option<&[f64]>, w: f64) {
    for (j, o) in out.iter_mut().enumerate() {
        let mut extra = ridge * theta[j].abs();
        if let Some(b) = linear {
            extra += b[j].abs();
        }
        *o = (*o + extra) / w;
    }
}

/// The ridge `β` of `(β/2W)‖θ‖²` if it is finite and `≥ 0` (shared by [`Objective`] and
/// [`group::GroupObjective`]).
pub(crate) fn check_ridge(beta: f64) -> Result<f64> {
    if !(beta.is_finite() && beta >= 0.0) {
        return Err(Error::param("ridge", format!("must be finite and >= 0, got {beta}")));
    }
    Ok(beta)
}

/// The linear term `b` of `(1/W)⟨b, θ⟩` if it has `d` finite entries.
pub(crate) fn check_linear_term(b: Vec<f64>, d: usize) -> Result<Vec<f64>> {
    if b.len() != d {
        return Err(Error::Shape(format!("linear term has {} entries but d = {d}", b.len())));
    }
    if let Some(j) = b.iter().position(|v| !v.is_finite()) {
        return Err(Error::param(
            "linear-term",
            format!("entry {j} is not finite ({})", b[j]),
        ));
    }
    Ok(b)
}

/// The rows of the block `r` in the evenly spaced sample of stride `step` (every `step`-th row
/// from row 0), or `None` when the block holds none.
fn sampled_rows(r: std::ops::Range<usize>, step: usize) -> Option<std::iter::StepBy<std::ops::Range<usize>>> {
    let first = r.start.div_ceil(step) * step;
    (first < r.end).then(|| (first..r.end).step_by(step))
}

impl<'a, L: Loss> Objective<'a, L> {
    /// The plain mean loss (`β = 0`, `b = 0`), parallel over the current rayon pool.
    pub fn new(data: PairwiseView<'a>, loss: L) -> Self {
        Objective {
            data,
            loss,
            ridge: 0.0,
            linear: None,
            par: Par::Rayon,
        }
    }
    /// Adds `(β/2W)‖θ‖²`; `β` must be finite and `≥ 0`.
    pub fn with_ridge(mut self, beta: f64) -> Result<Self> {
        self.ridge = check_ridge(beta)?;
        Ok(self)
    }
    /// Adds `(1/W)⟨b, θ⟩`; `b` must have `d` finite entries.
    pub fn with_linear_term(mut self, b: Vec<f64>) -> Result<Self> {
        self.linear = Some(check_linear_term(b, self.data.d())?);
        Ok(self)
    }
    /// Sets the parallelism of the passes over `X`.
    pub fn with_par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
    /// The data.
    pub fn data(&self) -> &PairwiseView<'a> {
        &self.data
    }
    /// The loss.
    pub fn loss(&self) -> &L {
        &self.loss
    }
    /// `β`.
    pub fn ridge(&self) -> f64 {
        self.ridge
    }
    /// `b`, if any.
    pub fn linear_term(&self) -> Option<&[f64]> {
        self.linear.as_deref()
    }
    /// Number of parameters `d`.
    pub fn dim(&self) -> usize {
        self.data.d()
    }
    /// The parallelism policy.
    pub fn par(&self) -> Par {
        self.par
    }
    fn rows(&self) -> Rows<'a> {
        Rows {
            x: self.data.features(),
            d: self.data.d(),
            y: self.data.y(),
            w: self.data.weights(),
            shard: self.data.shard(),
            scan: self.data.scan(),
            n_all: self.data.n(),
            data_first: self.data.data_first(),
        }
    }
    /// `W = Σ w_i`.
    pub fn total_weight(&self) -> f64 {
        self.data.total_weight()
    }
    /// The O(d) penalty part `(β/2)‖θ‖² + ⟨b, θ⟩` (not yet divided by `W`).
    fn penalty(&self, theta: &[f64]) -> f64 {
        let mut p = 0.0;
        if self.ridge != 0.0 {
            p += 0.5 * self.ridge * theta.iter().map(|v| v * v).sum::<f64>();
        }
        if let Some(b) = &self.linear {
            p += b.iter().zip(theta).map(|(a, c)| a * c).sum::<f64>();
        }
        p
    }

    /// Evaluates `F`, `∇F` and the scores at `theta` into `ev` — one fused pass over `X`.
    pub fn evaluate(&self, theta: &[f64], ev: &mut Eval) {
        let d = self.dim();
        assert_eq!(theta.len(), d, "evaluate: theta has the wrong length");
        ev.theta.clear();
        ev.theta.extend_from_slice(theta);
        ev.scores.resize(self.rows().held().len(), 0.0);
        ev.grad.resize(d, 0.0);
        let s = kernels::value_grad(self.rows(), &self.loss, theta, &mut ev.scores, &mut ev.grad, self.par);
        self.finish_value_grad(theta, s, ev);
    }

    /// [`Objective::evaluate`] and [`Objective::hessian_into`] at `theta` in **one** pass over `X`
    /// ([`kernels::value_grad_hessian`]): the same bits as the two calls, for one read of the
    /// data instead of two. Returns the number of rows with `ℓ'' < 0`.
    pub fn evaluate_with_hessian(&self, theta: &[f64], ev: &mut Eval, h: &mut [f64]) -> usize {
        let d = self.dim();
        assert_eq!(theta.len(), d, "evaluate_with_hessian: theta has the wrong length");
        assert_eq!(h.len(), d * d, "evaluate_with_hessian: h must hold d × d values");
        ev.theta.clear();
        ev.theta.extend_from_slice(theta);
        ev.scores.resize(self.rows().held().len(), 0.0);
        ev.grad.resize(d, 0.0);
        let (s, nneg) = kernels::value_grad_hessian(
            self.rows(),
            &self.loss,
            theta,
            &mut ev.scores,
            &mut ev.grad,
            h,
            self.par,
        );
        self.finish_value_grad(theta, s, ev);
        self.finish_hessian(h);
        nneg
    }

    /// Adds the ridge and linear terms to the loss sums and divides by `W`.
    fn finish_value_grad(&self, theta: &[f64], s: f64, ev: &mut Eval) {
        let w = self.total_weight();
        for (g, t) in ev.grad.iter_mut().zip(theta) {
            *g += self.ridge * t;
        }
        if let Some(b) = &self.linear {
            for (g, bj) in ev.grad.iter_mut().zip(b) {
                *g += bj;
            }
        }
        ev.grad.iter_mut().for_each(|g| *g /= w);
        ev.value = (s + self.penalty(theta)) / w;
    }

    /// Divides the Hessian sum by `W` and adds the ridge.
    fn finish_hessian(&self, h: &mut [f64]) {
        let d = self.dim();
        let w = self.total_weight();
        h.iter_mut().for_each(|v| *v /= w);
        for j in 0..d {
            h[j * d + j] += self.ridge / w;
        }
    }

    /// `F(θ)` and `∇F(θ)` (into `grad`) computed as if in twice the working precision
    /// ([`kernels::value_grad_compensated`]). For the final refinement of ill-conditioned
    /// problems, where rounding in `xᵀθ` (large `‖θ‖`, nearly collinear columns) would otherwise
    /// limit the accuracy of `θ`.
    pub fn value_grad_compensated(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let s = kernels::value_grad_compensated(self.rows(), &self.loss, theta, grad, self.par);
        let w = self.total_weight();
        for (j, g) in grad.iter_mut().enumerate() {
            let mut extra = self.ridge * theta[j];
            if let Some(b) = &self.linear {
                extra += b[j];
            }
            *g = (*g + extra) / w;
        }
        (s + self.penalty(theta)) / w
    }

    /// `F(θ)` alone (allocates an [`Eval`]; use [`Objective::evaluate`] in loops).
    pub fn value(&self, theta: &[f64]) -> f64 {
        let mut ev = Eval::new(self.data.n(), self.dim());
        self.evaluate(theta, &mut ev);
        ev.value
    }

    /// `out = X s`, the scores of a direction (one pass), for [`Objective::line_value`].
    pub fn direction_scores(&self, s: &[f64], out: &mut [f64]) {
        kernels::matvec(self.rows(), s, out, self.par);
    }

    /// `F(θ + α s)` from the cached scores of `ev` (at `θ`) and `xs = X s`: O(n), no access to `X`.
    pub fn line_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64) -> f64 {
        let sum = kernels::loss_sum(self.rows(), &self.loss, &ev.scores, Some(xs), alpha, self.par);
        let th: Vec<f64> = ev.theta.iter().zip(s).map(|(t, v)| alpha.mul_add(*v, *t)).collect();
        (sum + self.penalty(&th)) / self.total_weight()
    }

    /// `F(c·(θ + α s))` from the cached scores of `ev` (at `θ`) and `xs = X s`: the objective
    /// along a projection arc onto a ball (`c = min(1, B/‖θ + α s‖)`), O(n), no access to `X`.
    /// `c = 1` is [`Objective::line_value`].
    pub fn arc_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64, scale: f64) -> f64 {
        let sum = kernels::loss_sum_scaled(self.rows(), &self.loss, &ev.scores, Some(xs), alpha, scale, self.par);
        let th: Vec<f64> = ev
            .theta
            .iter()
            .zip(s)
            .map(|(t, v)| scale * alpha.mul_add(*v, *t))
            .collect();
        (sum + self.penalty(&th)) / self.total_weight()
    }

    /// The dense Hessian `∇²F` at `ev`'s point, column-major `d × d` into `h`. Returns the
    /// number of rows with negative curvature `ℓ'' < 0` (non-convex losses only).
    pub fn hessian_into(&self, ev: &Eval, h: &mut [f64]) -> usize {
        let nneg = kernels::hessian(self.rows(), &self.loss, &ev.scores, h, self.par);
        self.finish_hessian(h);
        nneg
    }

    /// The recession slope `F∞(θ) = lim_{r→∞} F(rθ)/r` at `ev`'s point (from its cached
    /// scores, O(n)), with the absolute size of its terms: `(F∞, Σ|terms|)`, both divided by
    /// `W`. `None` when `β > 0` (the objective is then coercive). For a convex loss,
    /// `F∞(θ) < 0` proves the objective unbounded below along the ray `{rθ}`.
    pub fn recession_slope(&self, ev: &Eval) -> Option<(f64, f64)> {
        if self.ridge > 0.0 {
            return None;
        }
        let y = self.data.y();
        let w = self.data.weights();
        let first = self.rows().held().start;
        let f0 = self.data.data_first();
        let leaf = |rows: std::ops::Range<usize>| {
            let (mut r, mut a) = (0.0, 0.0);
            for i in rows {
                let v = self.loss.recession(ev.scores[i - first], y[i - f0]) * w.map_or(1.0, |w| w[i - f0]);
                r += v;
                a += v.abs();
            }
            (r, a)
        };
        let (mut r, mut a) = kernels::reduce_blocks(self.rows(), self.par, &leaf, &|p: (f64, f64), q: (f64, f64)| {
            (p.0 + q.0, p.1 + q.1)
        });
        if let Some(b) = &self.linear {
            let lin: f64 = b.iter().zip(&ev.theta).map(|(x, y)| x * y).sum();
            r += lin;
            a += lin.abs();
        }
        let wt = self.total_weight();
        Some((r / wt, a / wt))
    }

    /// Whether some score `x_iᵀθ` at `ev`'s point is non-zero.
    pub(crate) fn scores_nonzero(&self, ev: &Eval) -> bool {
        let r = self.rows();
        let leaf = |rows: std::ops::Range<usize>| usize::from(ev.scores[r.local(rows)].iter().any(|&t| t != 0.0));
        kernels::reduce_blocks(r, self.par, &leaf, &|a, b| a + b) > 0
    }

    /// The stride of the evenly spaced, fixed row sample of about `rows` rows (every
    /// `⌈n/rows⌉`-th row, from row 0; the same rows for any thread and process count), or
    /// `None` when `n ≤ 2·rows` (a full pass is then about as cheap).
    fn sample_step(&self, rows: usize) -> Option<usize> {
        let n = self.data.n();
        (rows > 0 && n > 2 * rows).then(|| n.div_ceil(rows))
    }

    /// Weighted column second moments over an evenly spaced, fixed sample of about `rows`
    /// rows (every `⌈n/rows⌉`-th row, from row 0; the same rows for any thread count):
    /// `m_j = Σ_{i∈S} w_i x_ij² / Σ_{i∈S} w_i`. `None` when `n ≤ 2·rows` (the full pass is then
    /// about as cheap) or the sampled weights are all zero. Reads `rows·d` values, not `X`.
    pub fn column_second_moments_sample(&self, rows: usize) -> Option<Vec<f64>> {
        // The sampled rows of each block, in order; the blocks along the fixed tree (so a
        // member of a group reads the sampled rows it holds; a block without one adds nothing).
        let step = self.sample_step(rows)?;
        let leaf = |r: std::ops::Range<usize>| {
            let Some(sampled) = sampled_rows(r, step) else {
                return (Vec::new(), 0.0);
            };
            self.weighted_squares(sampled)
        };
        let combine = |(mut a, wa): (Vec<f64>, f64), (b, wb): (Vec<f64>, f64)| {
            if a.is_empty() {
                return (b, wa + wb);
            }
            if !b.is_empty() {
                a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
            }
            (a, wa + wb)
        };
        let (mut m, wt) = kernels::reduce_blocks(self.rows(), self.par, &leaf, &combine);
        if !(wt > 0.0) {
            return None;
        }
        m.iter_mut().for_each(|v| *v /= wt);
        Some(m)
    }

    /// The curvature of the fixed sample of rows of [`Objective::column_second_moments_sample`]
    /// at `ev`'s point: `H_S = (1/W_S) Σ_{i∈S} w_i max(ℓ''(t_i), 0) x_i x_iᵀ + (β/W) I`,
    /// column-major `d × d` ([`SecondOrderObjective::hessian_sample`]). The sampled rows, scaled
    /// by `√(w_i max(ℓ''_i, 0))`, are gathered in row order along the fixed tree (so across
    /// processes too) and multiplied by [`kernels::gram::sample_gram`]. With `columns`
    /// (ascending, in `0..d`), only those entries of each row are gathered: the principal
    /// submatrix of `H_S` on them, `|columns| × |columns|`. `None` when `n ≤ 2·rows` or the
    /// sampled weights are all zero.
    pub(crate) fn hessian_sample(&self, ev: &Eval, rows: usize, columns: Option<&[usize]>) -> Option<Vec<f64>> {
        let step = self.sample_step(rows)?;
        let d = self.dim();
        let width = columns.map_or(d, <[usize]>::len);
        let x = self.data.features();
        let (y, w) = (self.data.y(), self.data.weights());
        let held = self.rows().held().start;
        let f0 = self.data.data_first();
        let leaf = |r: std::ops::Range<usize>| {
            let Some(sampled) = sampled_rows(r, step) else {
                return (Vec::new(), 0.0);
            };
            let mut out = Vec::with_capacity(sampled.len() * width);
            let mut buf = vec![0.0; d];
            let mut wt = 0.0;
            for i in sampled {
                let wi = w.map_or(1.0, |w| w[i - f0]);
                wt += wi;
                let c = (wi * self.loss.d2(ev.scores[i - held], y[i - f0])).max(0.0).sqrt();
                let row = x.row(i - f0, d, &mut buf);
                match columns {
                    Some(cols) => out.extend(cols.iter().map(|&j| c * row[j])),
                    None => out.extend(row.iter().map(|v| c * v)),
                }
            }
            (out, wt)
        };
        let combine = |(mut a, wa): (Vec<f64>, f64), (b, wb): (Vec<f64>, f64)| {
            a.extend_from_slice(&b);
            (a, wa + wb)
        };
        let (sample, wt) = kernels::reduce_blocks(self.rows(), self.par, &leaf, &combine);
        if !(wt > 0.0) {
            return None;
        }
        let mut h = kernels::gram::sample_gram(&sample, width, 1.0 / wt, self.par);
        let ridge = self.ridge / self.total_weight();
        for j in 0..width {
            h[j * width + j] += ridge;
        }
        Some(h)
    }

    /// `(Σ_{i∈rows} w_i x_i², Σ_{i∈rows} w_i)` (column-wise squares), summed in the order given.
    fn weighted_squares(&self, rows: impl Iterator<Item = usize>) -> (Vec<f64>, f64) {
        let d = self.dim();
        let x = self.data.features();
        let w = self.data.weights();
        let f0 = self.data.data_first();
        let mut m = vec![0.0; d];
        let mut buf = vec![0.0; d];
        let mut wt = 0.0;
        for i in rows {
            let wi = w.map_or(1.0, |w| w[i - f0]);
            wt += wi;
            for (mj, xij) in m.iter_mut().zip(x.row(i - f0, d, &mut buf)) {
                *mj += wi * xij * xij;
            }
        }
        (m, wt)
    }

    /// Weighted column second moments `m_j = (1/W) Σ_i w_i x_ij²` (one pass over `X`,
    /// deterministic for any thread count): the scale of the Hessian's diagonal, used as a
    /// diagonal preconditioner by L-BFGS on badly scaled columns.
    pub fn column_second_moments(&self) -> Vec<f64> {
        let leaf = |rows: std::ops::Range<usize>| self.weighted_squares(rows).0;
        let combine = |mut a: Vec<f64>, b: Vec<f64>| {
            a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
            a
        };
        let mut m = kernels::reduce_blocks(self.rows(), self.par, &leaf, &combine);
        let wt = self.total_weight();
        m.iter_mut().for_each(|v| *v /= wt);
        m
    }

    /// [`Objective::evaluate`] and [`Objective::grad_scale`] at `theta` in one pass over `X`
    /// ([`kernels::value_grad_scale`]; the same bits as the two calls).
    pub(crate) fn evaluate_scaled(&self, theta: &[f64], ev: &mut Eval, scale: &mut [f64]) {
        let d = self.dim();
        assert_eq!(theta.len(), d, "evaluate_scaled: theta has the wrong length");
        ev.theta.clear();
        ev.theta.extend_from_slice(theta);
        ev.scores.resize(self.rows().held().len(), 0.0);
        ev.grad.resize(d, 0.0);
        let s = kernels::value_grad_scale(
            self.rows(),
            &self.loss,
            theta,
            &mut ev.scores,
            &mut ev.grad,
            scale,
            self.par,
        );
        self.finish_value_grad(theta, s, ev);
        finish_grad_scale(scale, theta, self.ridge, self.linear.as_deref(), self.total_weight());
    }

    /// The magnitudes of the terms of each gradient coordinate at `ev`'s point,
    /// `a_j = (1/W)(Σ_i w_i |ℓ'(t_i)| |x_ij| + β|θ_j| + |b_j|)` (one pass over `X` from the cached
    /// scores): `|∂F/∂θ_j| ≤ a_j`, and `a` is the scale of the solvers' relative KKT certificate
    /// ([`crate::solver::certificate`]).
    pub(crate) fn grad_scale(&self, ev: &Eval, out: &mut [f64]) {
        kernels::abs_grad(self.rows(), &self.loss, &ev.scores, out, self.par);
        finish_grad_scale(out, &ev.theta, self.ridge, self.linear.as_deref(), self.total_weight());
    }

    /// [`Objective::grad_scale`] estimated from the fixed sample of rows of
    /// [`Objective::column_second_moments_sample`] (every `⌈n/rows⌉`-th row, from the cached
    /// scores; reads `rows·d` values, not `X`): `(Σ_S w_i |ℓ'(t_i)| |x_i|)/(Σ_S w_i)` plus the
    /// ridge and linear terms. `None` when `n ≤ 2·rows` or the sampled weights are all zero.
    /// Only a guide (the solvers' cheap stopping test); certificates use the full pass.
    pub(crate) fn grad_scale_sample(&self, ev: &Eval, rows: usize) -> Option<Vec<f64>> {
        let step = self.sample_step(rows)?;
        let d = self.dim();
        let x = self.data.features();
        let (y, w) = (self.data.y(), self.data.weights());
        let held = self.rows().held().start;
        let f0 = self.data.data_first();
        // The sampled rows of each block, summed in order; the blocks along the fixed tree. A
        // block without a sampled row gives an empty vector (no allocation, nothing to add):
        // there are far more blocks than sampled rows at large n.
        let leaf = |r: std::ops::Range<usize>| {
            let Some(sampled) = sampled_rows(r, step) else {
                return (Vec::new(), 0.0);
            };
            let mut m = vec![0.0; d];
            let mut buf = vec![0.0; d];
            let mut wt = 0.0;
            for i in sampled {
                let wi = w.map_or(1.0, |w| w[i - f0]);
                wt += wi;
                let c = (wi * self.loss.d1(ev.scores[i - held], y[i - f0])).abs();
                for (mj, xij) in m.iter_mut().zip(x.row(i - f0, d, &mut buf)) {
                    *mj += c * xij.abs();
                }
            }
            (m, wt)
        };
        let combine = |(mut a, wa): (Vec<f64>, f64), (b, wb): (Vec<f64>, f64)| {
            if a.is_empty() {
                return (b, wa + wb);
            }
            a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
            (a, wa + wb)
        };
        let (mut m, wt) = kernels::reduce_blocks(self.rows(), self.par, &leaf, &combine);
        if !(wt > 0.0) {
            return None;
        }
        // Mean of the sampled terms, then the ridge and linear terms over W as in grad_scale.
        let scale = self.total_weight() / wt;
        m.iter_mut().for_each(|v| *v *= scale);
        finish_grad_scale(
            &mut m,
            &ev.theta,
            self.ridge,
            self.linear.as_deref(),
            self.total_weight(),
        );
        Some(m)
    }

    /// `out = ∇²F v` at `ev`'s point, in one pass over `X`.
    pub fn hess_vec(&self, ev: &Eval, v: &[f64], out: &mut [f64]) {
        kernels::hess_vec(self.rows(), &self.loss, &ev.scores, v, out, self.par);
        let w = self.total_weight();
        for (o, vj) in out.iter_mut().zip(v) {
            *o = (*o + self.ridge * vj) / w;
        }
    }
}
