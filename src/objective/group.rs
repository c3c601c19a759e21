//! The K-wise objective: a [`GroupLoss`] lifted over the feature blocks of a [`GroupView`],
//!
//! `F(θ) = (1/W) Σ_i w_i ℓ(Φ_i θ; o_i) + (β/2W) ‖θ‖² + (1/W) ⟨b, θ⟩`,
//!
//! with `∇F = (Σ_i w_i Φ_iᵀ ∂ℓ_i/∂u + βθ + b)/W` and
//! `∇²F = (Σ_i w_i Φ_iᵀ (∂²ℓ_i/∂u²) Φ_i + βI)/W` (the loss gives the `K × K` score-space block,
//! the objective turns it into `Φᵀ·block·Φ`). The scaling is the pairwise objective's
//! ([`Objective`](super::Objective)), so ridge, linear term and weights mean the same. It
//! implements [`SmoothObjective`], so the exact solvers (projected Newton, projected L-BFGS) and
//! projected SGD minimise it unchanged.
//!
//! The feasible set acts on `θ ∈ ℝ^d` as in the pairwise case. With the sum-zero constraint of
//! `Θ_B`, note that Plackett–Luce scores only identify `θ` through differences of features
//! within a sample: for one-hot (tabular) item features the sum-zero condition is exactly the
//! identifiability constraint of the item utilities.

use super::{Eval, SecondOrderObjective, SmoothObjective};
use crate::data::GroupView;
use crate::error::{Error, Result};
use crate::kernels::group as kern;
use crate::loss::GroupLoss;
use crate::par::Par;

/// `F(θ)` for a group loss on K-wise data, with optional ridge `β` and linear term `b` (module
/// docs).
#[derive(Debug, Clone)]
pub struct GroupObjective<'a, L: GroupLoss> {
    data: GroupView<'a>,
    loss: L,
    ridge: f64,
    linear: Option<Vec<f64>>,
    par: Par,
}

impl<'a, L: GroupLoss> GroupObjective<'a, L> {
    /// The plain mean loss (`β = 0`, `b = 0`), parallel over the current rayon pool.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when the loss does not apply to the data: the number of
    /// alternatives ([`GroupLoss::check_k`]), or a loss that reads more ranked positions than the
    /// labels hold (a ranking loss on chosen indices).
    pub fn new(data: GroupView<'a>, loss: L) -> Result<Self> {
        loss.check_k(data.k())?;
        if loss.positions() > data.width() {
            return Err(Error::param(
                "loss",
                format!(
                    "`{}` reads the top {} positions of a ranking, but the labels hold {} per sample (give an n × K ranking)",
                    loss.name(),
                    loss.positions(),
                    data.width()
                ),
            ));
        }
        Ok(GroupObjective {
            data,
            loss,
            ridge: 0.0,
            linear: None,
            par: Par::Rayon,
        })
    }
    /// Adds `(β/2W)‖θ‖²`; `β` must be finite and `≥ 0`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`ridge`).
    pub fn with_ridge(mut self, beta: f64) -> Result<Self> {
        self.ridge = super::check_ridge(beta)?;
        Ok(self)
    }
    /// Adds `(1/W)⟨b, θ⟩`; `b` must have `d` finite entries.
    ///
    /// # Errors
    /// [`Error::Shape`] or [`Error::InvalidParam`] (`linear-term`).
    pub fn with_linear_term(mut self, b: Vec<f64>) -> Result<Self> {
        self.linear = Some(super::check_linear_term(b, self.data.d())?);
        Ok(self)
    }
    /// Sets the parallelism of the passes over the features.
    pub fn with_par(mut self, par: Par) -> Self {
        self.par = par;
        self
    }
    /// The data.
    pub fn data(&self) -> &GroupView<'a> {
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
    /// `W = Σ w_i`.
    pub fn total_weight(&self) -> f64 {
        self.data.total_weight()
    }
    /// The parallelism policy.
    pub fn par(&self) -> Par {
        self.par
    }
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
    /// An empty [`Eval`] for this objective (scores of length `n·K`).
    pub fn new_eval(&self) -> Eval {
        Eval::new(self.data.n() * self.data.k(), self.dim())
    }

    /// Evaluates `F`, `∇F` and the scores `u_ik = φ_ikᵀθ` at `theta` into `ev` — one fused pass.
    pub fn evaluate(&self, theta: &[f64], ev: &mut Eval) {
        let d = self.dim();
        assert_eq!(theta.len(), d, "evaluate: theta has the wrong length");
        ev.theta.clear();
        ev.theta.extend_from_slice(theta);
        ev.scores.resize(self.data.n() * self.data.k(), 0.0);
        ev.grad.resize(d, 0.0);
        let s = kern::value_grad(&self.data, &self.loss, theta, &mut ev.scores, &mut ev.grad, self.par);
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

    /// `F(θ)` alone (allocates an [`Eval`]).
    pub fn value(&self, theta: &[f64]) -> f64 {
        let mut ev = self.new_eval();
        self.evaluate(theta, &mut ev);
        ev.value
    }

    /// `F(θ)` and `∇F(θ)` as if in twice the working precision
    /// ([`kern::value_grad_compensated`]).
    pub fn value_grad_compensated(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let s = kern::value_grad_compensated(&self.data, &self.loss, theta, grad, self.par);
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

    /// `F(c·(θ + α s))` from the cached scores of `ev` and `xs = Φ s` (O(nK)).
    pub fn arc_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64, scale: f64) -> f64 {
        let sum = kern::loss_sum(&self.data, &self.loss, &ev.scores, Some(xs), alpha, scale, self.par);
        let th: Vec<f64> = ev
            .theta
            .iter()
            .zip(s)
            .map(|(t, v)| scale * alpha.mul_add(*v, *t))
            .collect();
        (sum + self.penalty(&th)) / self.total_weight()
    }

    /// The dense Hessian `∇²F` at `ev`'s point (column-major `d × d`).
    pub fn hessian_into(&self, ev: &Eval, h: &mut [f64]) -> usize {
        let d = self.dim();
        let nneg = kern::hessian(&self.data, &self.loss, &ev.scores, h, self.par);
        let w = self.total_weight();
        h.iter_mut().for_each(|v| *v /= w);
        for j in 0..d {
            h[j * d + j] += self.ridge / w;
        }
        nneg
    }

    /// The magnitudes of the terms of each gradient coordinate at `ev`'s point,
    /// `a_j = (1/W)(Σ_i w_i Σ_k |∂ℓ_i/∂u_ik| |φ_ikj| + β|θ_j| + |b_j|)` (one pass; the scale of
    /// the solvers' relative KKT certificate, [`crate::solver::certificate`]).
    pub(crate) fn grad_scale(&self, ev: &Eval, out: &mut [f64]) {
        kern::abs_grad(&self.data, &self.loss, &ev.scores, out, self.par);
        super::finish_grad_scale(out, &ev.theta, self.ridge, self.linear.as_deref(), self.total_weight());
    }

    /// [`GroupObjective::grad_scale`] estimated from every `⌈n/rows⌉`-th sample (from the
    /// cached scores; a guide for the solvers' cheap stopping test, never a certificate). `None`
    /// when `n ≤ 2·rows` or the sampled weights are all zero.
    pub(crate) fn grad_scale_sample(&self, ev: &Eval, rows: usize) -> Option<Vec<f64>> {
        let (n, k, d) = (self.data.n(), self.data.k(), self.dim());
        if rows == 0 || n <= 2 * rows {
            return None;
        }
        let mut m = vec![0.0; d];
        let mut g = vec![0.0; k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        let mut wt = 0.0;
        for i in (0..n).step_by(n.div_ceil(rows)) {
            let w = self.data.weight(i);
            wt += w;
            self.loss.eval(
                &ev.scores[i * k..(i + 1) * k],
                self.data.order_of(i),
                Some(&mut g),
                None,
                &mut scratch,
            );
            for (r, gr) in g.iter().enumerate() {
                let c = (w * gr).abs();
                m.iter_mut()
                    .zip(self.data.row(i, r))
                    .for_each(|(mj, x)| *mj += c * x.abs());
            }
        }
        if !(wt > 0.0) {
            return None;
        }
        let scale = self.total_weight() / wt;
        m.iter_mut().for_each(|v| *v *= scale);
        super::finish_grad_scale(
            &mut m,
            &ev.theta,
            self.ridge,
            self.linear.as_deref(),
            self.total_weight(),
        );
        Some(m)
    }

    /// The recession slope `F∞(θ)` at `ev`'s point with the size of its terms (divided by
    /// `W`); `None` when `β > 0`.
    pub fn recession_slope(&self, ev: &Eval) -> Option<(f64, f64)> {
        if self.ridge > 0.0 {
            return None;
        }
        let k = self.data.k();
        let (mut r, mut a) = (0.0, 0.0);
        for i in 0..self.data.n() {
            let v = self
                .loss
                .recession(&ev.scores[i * k..(i + 1) * k], self.data.order_of(i))
                * self.data.weight(i);
            r += v;
            a += v.abs();
        }
        if let Some(b) = &self.linear {
            let lin: f64 = b.iter().zip(&ev.theta).map(|(x, y)| x * y).sum();
            r += lin;
            a += lin.abs();
        }
        let wt = self.total_weight();
        Some((r / wt, a / wt))
    }
}

impl<L: GroupLoss> SmoothObjective for GroupObjective<'_, L> {
    const CONVEX: bool = L::CONVEX;
    fn dim(&self) -> usize {
        self.data.d()
    }
    fn num_samples(&self) -> usize {
        self.data.n()
    }
    fn num_scores(&self) -> usize {
        self.data.n() * self.data.k()
    }
    fn total_weight(&self) -> f64 {
        self.data.total_weight()
    }
    fn ridge(&self) -> f64 {
        self.ridge
    }
    fn linear_term(&self) -> Option<&[f64]> {
        self.linear.as_deref()
    }
    fn evaluate(&self, theta: &[f64], ev: &mut Eval) {
        GroupObjective::evaluate(self, theta, ev)
    }
    fn direction_scores(&self, s: &[f64], out: &mut [f64]) {
        kern::matvec(&self.data, s, out, self.par)
    }
    fn line_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64) -> f64 {
        GroupObjective::arc_value(self, ev, s, xs, alpha, 1.0)
    }
    fn arc_value(&self, ev: &Eval, s: &[f64], xs: &[f64], alpha: f64, scale: f64) -> f64 {
        GroupObjective::arc_value(self, ev, s, xs, alpha, scale)
    }
    fn grad_scale(&self, ev: &Eval, out: &mut [f64]) {
        GroupObjective::grad_scale(self, ev, out)
    }
    fn grad_scale_sample(&self, ev: &Eval, rows: usize) -> Option<Vec<f64>> {
        GroupObjective::grad_scale_sample(self, ev, rows)
    }
    fn recession_slope(&self, ev: &Eval) -> Option<(f64, f64)> {
        GroupObjective::recession_slope(self, ev)
    }
    fn column_second_moments(&self) -> Vec<f64> {
        let mut m = kern::centered_second_moments(&self.data, self.par);
        let w = self.total_weight();
        m.iter_mut().for_each(|v| *v /= w);
        m
    }
    fn convex_on_ball(&self, _radius: f64, _sum_zero: bool) -> bool {
        L::CONVEX
    }
}

impl<L: GroupLoss> SecondOrderObjective for GroupObjective<'_, L> {
    fn value_grad_compensated(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        GroupObjective::value_grad_compensated(self, theta, grad)
    }
    fn hessian_into(&self, ev: &Eval, h: &mut [f64]) -> usize {
        GroupObjective::hessian_into(self, ev, h)
    }
    fn hess_vec(&self, ev: &Eval, v: &[f64], out: &mut [f64]) {
        kern::hess_vec(&self.data, &self.loss, &ev.scores, v, out, self.par);
        let w = self.total_weight();
        for (o, vj) in out.iter_mut().zip(v) {
            *o = (*o + self.ridge * vj) / w;
        }
    }
}
