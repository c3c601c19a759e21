//! The models label-private SGD trains: a linear score map `u = Φ_i θ` (one score for a binary
//! linear model, `K` for a softmax / K-wise model) and a clear-label loss `ℓ(u; k)` evaluated for
//! **every** candidate label `k` (the debiased gradient (7) of Ghazi et al. (2021) and the subspace
//! of LP-Normal-SGD need all `K` candidate gradients `G_k = Φ_iᵀ ∂ℓ(u; k)/∂u`).
//!
//! | model | data | scores `u` | loss | labels |
//! |---|---|---|---|---|
//! | [`PairwiseModel`] (binary linear) | [`PairwiseView`] `x_i ∈ ℝ^d` | `t = x_iᵀθ` | [`Loss`] (`mle`: `softplus((1−2y)t)`) | `K = 2` |
//! | [`GroupModel`] (K-wise) | [`GroupView`] `Φ_i ∈ ℝ^{K×d}` | `u = Φ_iθ` | [`GroupLoss`] (`pl-top1`: `LSE(u) − u_y`) | `K` alternatives |
//! | [`MulticlassModel`] (K-class softmax) | [`MulticlassView`] `x_i ∈ ℝ^d` | `u_k = W_k x_i`, `θ = vec(W)` | [`GroupLoss`] (`pl-top1` = cross-entropy) | `K` classes |
//!
//! The loss must be a **clear-label** loss ([`LabelLoss`]): the debiasing is done by the
//! algorithm, not by the loss (the RR-debiased losses of [`crate::loss`] are for labels that were
//! privatised beforehand).

use crate::data::{GroupView, MulticlassView, PairwiseView};
use crate::error::{Error, Result};
use crate::loss::{GroupLoss, Logistic, Loss, PlTop1, Probit};
use crate::math::norm;

/// A clear-label loss usable by label-private SGD, with the two facts the algorithms need.
pub trait LabelLoss {
    /// `sup_u ‖∂ℓ(u; k)/∂u‖₂` over scores and labels, if finite: `1` for the logistic loss
    /// (`|σ(t) − y| < 1`), `√2` for softmax cross-entropy (`‖p − e_k‖ < √2`); `None` for
    /// probit (its derivative grows like `|t|`). Gives the Lipschitz constant `L` of the theory
    /// step.
    fn score_grad_bound(&self) -> Option<f64>;
    /// Whether `∂ℓ(u; k)/∂u − ∂ℓ(u; k')/∂u` does not depend on `u` (canonical-link GLMs:
    /// logistic, softmax: the difference is `e_{k'} − e_k`, resp. `±1`). Then the label
    /// sensitivity of the gradient is a function of the public features only.
    fn canonical(&self) -> bool;
}

impl LabelLoss for Logistic {
    fn score_grad_bound(&self) -> Option<f64> {
        Some(1.0)
    }
    fn canonical(&self) -> bool {
        true
    }
}

impl LabelLoss for Probit {
    fn score_grad_bound(&self) -> Option<f64> {
        None
    }
    fn canonical(&self) -> bool {
        false
    }
}

impl LabelLoss for PlTop1 {
    fn score_grad_bound(&self) -> Option<f64> {
        Some(std::f64::consts::SQRT_2)
    }
    fn canonical(&self) -> bool {
        true
    }
}

/// A model for label-private SGD (module docs): per sample `i`, scores `u = Φ_i θ ∈ ℝ^m`, the
/// clear label `y_i ∈ {0, …, K−1}`, and `ℓ(u; k)` with its score gradient for every `k`.
pub trait LabelModel: Sync {
    /// Samples `n`.
    fn n(&self) -> usize;
    /// Labels `K`.
    fn num_labels(&self) -> usize;
    /// Parameters `p`.
    fn dim(&self) -> usize;
    /// Scores per sample `m`.
    fn num_scores(&self) -> usize;
    /// The clear label of sample `i` (read once, when the sample is used).
    fn label(&self, i: usize) -> u8;
    /// Length of the scratch buffer [`LabelModel::eval_all`] needs.
    fn scratch_len(&self) -> usize;
    /// `u = Φ_i θ` into `u` (length `m`).
    fn scores(&self, i: usize, theta: &[f64], u: &mut [f64]);
    /// `ℓ(u; k)` for every label `k` into `values` (length `K`) and, with `grads` (`K × m`,
    /// row `k`), `∂ℓ(u; k)/∂u`.
    fn eval_all(&self, u: &[f64], values: &mut [f64], grads: Option<&mut [f64]>, scratch: &mut [f64]);
    /// `acc += c · Φ_iᵀ g` (`g` of length `m`, `acc` of length `p`).
    fn lift_add(&self, i: usize, g: &[f64], c: f64, acc: &mut [f64]);
    /// An upper bound on `sup_{θ,k} ‖∇_θ ℓ(θ; x_i, k)‖` (the Lipschitz constant of sample `i`),
    /// if the loss has one.
    fn lipschitz(&self, i: usize) -> Option<f64>;
    /// `max_{k,k'} ‖∇_θ ℓ(θ; x_i, k) − ∇_θ ℓ(θ; x_i, k')‖` when it does not depend on `θ`
    /// (canonical losses): the label sensitivity of sample `i`'s gradient (LP-Normal-SGD).
    fn label_sensitivity(&self, i: usize) -> Option<f64>;
}

fn no_weights(w: bool) -> Result<()> {
    if w {
        return Err(Error::param(
            "weights",
            "label-private SGD processes a stream of unweighted samples; sample weights are not supported",
        ));
    }
    Ok(())
}

/// The binary linear model `t = x_iᵀθ` with a pointwise [`Loss`] (`K = 2` labels). Features must
/// be `f64`; weights are not supported.
#[derive(Debug, Clone)]
pub struct PairwiseModel<'a, L> {
    x: &'a [f64],
    y: &'a [u8],
    n: usize,
    d: usize,
    loss: L,
}

impl<'a, L: Loss + LabelLoss> PairwiseModel<'a, L> {
    /// The model on `data` with `loss`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for weighted data or `f32` features.
    pub fn new(data: &PairwiseView<'a>, loss: L) -> Result<Self> {
        data.require_all_rows("label-private SGD")?;
        no_weights(data.weights().is_some())?;
        let x = data.x().ok_or_else(|| {
            Error::param(
                "x",
                "label-private SGD needs float64 features (widen float32 data first)",
            )
        })?;
        Ok(PairwiseModel {
            x,
            y: data.y(),
            n: data.n(),
            d: data.d(),
            loss,
        })
    }
    fn row(&self, i: usize) -> &'a [f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }
}

impl<L: Loss + LabelLoss> LabelModel for PairwiseModel<'_, L> {
    fn n(&self) -> usize {
        self.n
    }
    fn num_labels(&self) -> usize {
        2
    }
    fn dim(&self) -> usize {
        self.d
    }
    fn num_scores(&self) -> usize {
        1
    }
    fn label(&self, i: usize) -> u8 {
        self.y[i]
    }
    fn scratch_len(&self) -> usize {
        0
    }
    fn scores(&self, i: usize, theta: &[f64], u: &mut [f64]) {
        u[0] = self.row(i).iter().zip(theta).map(|(a, b)| a * b).sum();
    }
    fn eval_all(&self, u: &[f64], values: &mut [f64], grads: Option<&mut [f64]>, _scratch: &mut [f64]) {
        for (k, v) in values.iter_mut().enumerate().take(2) {
            *v = self.loss.value(u[0], k as u8);
        }
        if let Some(g) = grads {
            g[0] = self.loss.d1(u[0], 0);
            g[1] = self.loss.d1(u[0], 1);
        }
    }
    fn lift_add(&self, i: usize, g: &[f64], c: f64, acc: &mut [f64]) {
        let s = c * g[0];
        for (a, x) in acc.iter_mut().zip(self.row(i)) {
            *a = s.mul_add(*x, *a);
        }
    }
    fn lipschitz(&self, i: usize) -> Option<f64> {
        self.loss.score_grad_bound().map(|b| b * norm(self.row(i)))
    }
    fn label_sensitivity(&self, i: usize) -> Option<f64> {
        // Canonical: ℓ'(t; 0) − ℓ'(t; 1) = 1, so G_0 − G_1 = x_i.
        self.loss.canonical().then(|| norm(self.row(i)))
    }
}

/// The K-wise model `u = Φ_i θ` with a top-1 [`GroupLoss`] (`K` alternatives, the chosen one is
/// the label). Weights are not supported.
#[derive(Debug, Clone)]
pub struct GroupModel<'a, L> {
    data: GroupView<'a>,
    loss: L,
}

impl<'a, L: GroupLoss + LabelLoss> GroupModel<'a, L> {
    /// The model on `data` with `loss`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for weighted data, or a loss that reads more than the top-1
    /// position or does not apply to `K` alternatives.
    pub fn new(data: GroupView<'a>, loss: L) -> Result<Self> {
        no_weights(data.weights().is_some())?;
        loss.check_k(data.k())?;
        if loss.positions() != 1 {
            return Err(Error::param(
                "loss",
                format!(
                    "label-private SGD randomises one label per sample; `{}` reads a ranking",
                    loss.name()
                ),
            ));
        }
        Ok(GroupModel { data, loss })
    }
}

impl<L: GroupLoss + LabelLoss> LabelModel for GroupModel<'_, L> {
    fn n(&self) -> usize {
        self.data.n()
    }
    fn num_labels(&self) -> usize {
        self.data.k()
    }
    fn dim(&self) -> usize {
        self.data.d()
    }
    fn num_scores(&self) -> usize {
        self.data.k()
    }
    fn label(&self, i: usize) -> u8 {
        self.data.chosen(i)
    }
    fn scratch_len(&self) -> usize {
        self.loss.scratch_len(self.data.k())
    }
    fn scores(&self, i: usize, theta: &[f64], u: &mut [f64]) {
        for (r, ur) in u.iter_mut().enumerate() {
            *ur = self.data.row(i, r).iter().zip(theta).map(|(a, b)| a * b).sum();
        }
    }
    fn eval_all(&self, u: &[f64], values: &mut [f64], grads: Option<&mut [f64]>, scratch: &mut [f64]) {
        let k = self.data.k();
        match grads {
            Some(g) => {
                for (c, (v, row)) in values.iter_mut().zip(g.chunks_exact_mut(k)).enumerate() {
                    *v = self.loss.eval(u, &[c as u8], Some(row), None, scratch);
                }
            }
            None => {
                for (c, v) in values.iter_mut().enumerate() {
                    *v = self.loss.eval(u, &[c as u8], None, None, scratch);
                }
            }
        }
    }
    fn lift_add(&self, i: usize, g: &[f64], c: f64, acc: &mut [f64]) {
        for (r, &gr) in g.iter().enumerate() {
            let s = c * gr;
            for (a, x) in acc.iter_mut().zip(self.data.row(i, r)) {
                *a = s.mul_add(*x, *a);
            }
        }
    }
    fn lipschitz(&self, i: usize) -> Option<f64> {
        // ‖Φᵀg‖ ≤ ‖Φ‖_F ‖g‖.
        let fro = (0..self.data.k())
            .map(|r| self.data.row(i, r).iter().map(|v| v * v).sum::<f64>())
            .sum::<f64>()
            .sqrt();
        self.loss.score_grad_bound().map(|b| b * fro)
    }
    fn label_sensitivity(&self, i: usize) -> Option<f64> {
        // Canonical: G_k − G_k' = Φᵀ(e_k' − e_k) = φ_k' − φ_k.
        if !self.loss.canonical() {
            return None;
        }
        let k = self.data.k();
        let mut worst = 0.0f64;
        for a in 0..k {
            for b in a + 1..k {
                let dist = self
                    .data
                    .row(i, a)
                    .iter()
                    .zip(self.data.row(i, b))
                    .map(|(p, q)| (p - q) * (p - q))
                    .sum::<f64>()
                    .sqrt();
                worst = worst.max(dist);
            }
        }
        Some(worst)
    }
}

/// The K-class linear softmax model `u_k = W_k·x_i`, `θ = vec(W)` row-major (`K × d`), with a
/// top-1 [`GroupLoss`] (`pl-top1` is the cross-entropy `LSE(Wx) − (Wx)_y`). Equals
/// [`GroupModel`] on the Kronecker features of [`MulticlassView::group_features`], at `O(K·d)`
/// per sample.
#[derive(Debug, Clone)]
pub struct MulticlassModel<'a, L> {
    data: MulticlassView<'a>,
    loss: L,
}

impl<'a, L: GroupLoss + LabelLoss> MulticlassModel<'a, L> {
    /// The model on `data` with `loss`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a loss that reads more than the top-1 position or does not
    /// apply to `K` classes.
    pub fn new(data: MulticlassView<'a>, loss: L) -> Result<Self> {
        loss.check_k(data.k())?;
        if loss.positions() != 1 {
            return Err(Error::param(
                "loss",
                format!(
                    "label-private SGD randomises one label per sample; `{}` reads a ranking",
                    loss.name()
                ),
            ));
        }
        Ok(MulticlassModel { data, loss })
    }
    /// The data.
    pub fn data(&self) -> &MulticlassView<'a> {
        &self.data
    }
}

impl<L: GroupLoss + LabelLoss> LabelModel for MulticlassModel<'_, L> {
    fn n(&self) -> usize {
        self.data.n()
    }
    fn num_labels(&self) -> usize {
        self.data.k()
    }
    fn dim(&self) -> usize {
        self.data.dim()
    }
    fn num_scores(&self) -> usize {
        self.data.k()
    }
    fn label(&self, i: usize) -> u8 {
        self.data.y()[i]
    }
    fn scratch_len(&self) -> usize {
        self.loss.scratch_len(self.data.k())
    }
    fn scores(&self, i: usize, theta: &[f64], u: &mut [f64]) {
        let d = self.data.d();
        let x = self.data.row(i);
        for (ur, w) in u.iter_mut().zip(theta.chunks_exact(d)) {
            *ur = w.iter().zip(x).map(|(a, b)| a * b).sum();
        }
    }
    fn eval_all(&self, u: &[f64], values: &mut [f64], grads: Option<&mut [f64]>, scratch: &mut [f64]) {
        let k = self.data.k();
        match grads {
            Some(g) => {
                for (c, (v, row)) in values.iter_mut().zip(g.chunks_exact_mut(k)).enumerate() {
                    *v = self.loss.eval(u, &[c as u8], Some(row), None, scratch);
                }
            }
            None => {
                for (c, v) in values.iter_mut().enumerate() {
                    *v = self.loss.eval(u, &[c as u8], None, None, scratch);
                }
            }
        }
    }
    fn lift_add(&self, i: usize, g: &[f64], c: f64, acc: &mut [f64]) {
        let d = self.data.d();
        let x = self.data.row(i);
        for (&gk, a) in g.iter().zip(acc.chunks_exact_mut(d)) {
            let s = c * gk;
            for (ak, xj) in a.iter_mut().zip(x) {
                *ak = s.mul_add(*xj, *ak);
            }
        }
    }
    fn lipschitz(&self, i: usize) -> Option<f64> {
        // ‖g xᵀ‖_F = ‖g‖‖x‖.
        self.loss.score_grad_bound().map(|b| b * norm(self.data.row(i)))
    }
    fn label_sensitivity(&self, i: usize) -> Option<f64> {
        // Canonical: G_k − G_k' = (e_k' − e_k) xᵀ, of norm √2‖x‖.
        self.loss
            .canonical()
            .then(|| std::f64::consts::SQRT_2 * norm(self.data.row(i)))
    }
}
