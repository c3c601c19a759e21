//! The debiased loss for RRTop-k labels and its empirical risk (Ghazi et al. (2021), supplement
//! Sec. G, Lemma 18 and Thm 17): ERM on labels released once by RRTop-k with a label-independent
//! prior.
//!
//! With `E = e^ε`, `q_k = 1/(E+k−1)`, `f_k = (E+k−1)/(E−1) = 1/(1 − k q_k)` and `Y_k` the top-`k`
//! set of the sample's prior, the debiased loss of a release `ỹ ∈ Y_k` is
//!
//! `ℓ̃(u; ỹ) = f_k (ℓ(u; ỹ) − q_k Σ_{j∈Y_k} ℓ(u; j))`.
//!
//! **What it debiases, exactly.** Over the mechanism's outputs (all in `Y_k`):
//!
//! * `y ∈ Y_k`: `E[ℓ̃(u; ỹ) | y] = ℓ(u; y)` (Lemma 18): RR over `Y_k` keeps `y` with
//!   probability `E q_k` and moves to each other label of `Y_k` with `q_k`;
//! * `y ∉ Y_k`: `ỹ` is uniform on `Y_k`, so `E[ℓ̃(u; ỹ) | y] = f_k (1/k − q_k) Σ_{Y_k} ℓ =
//!   (1/k) Σ_{j∈Y_k} ℓ(u; j)`: the mean loss over the top set, **not** `ℓ(u; y)`. The bias is
//!   `(1/k) Σ_{j∈Y_k} ℓ(u; j) − ℓ(u; y)`.
//!
//! **Why no loss can do better for `k < K`.** Every output of RRTop-k lies in `Y_k`, and every
//! true label outside `Y_k` has the same output distribution, uniform on `Y_k`: in the `K × k`
//! channel matrix from labels to outputs the `K − k` rows of those labels are equal, so it has
//! no left inverse. Any function `g(ỹ)` of the release has one and the same expectation for all
//! labels outside `Y_k`, so no `g` has expectation `ℓ(u; y)` for each of them unless their
//! losses coincide. The exact debiased
//! ERM therefore exists only for the labels inside the top set; the risk below is unbiased
//! for the clear risk up to the term `E[((1/k) Σ_{Y_k} ℓ − ℓ(u; y)) 1{y ∉ Y_k}]`, which Thm 17
//! bounds by `P[y ∉ Y_k]` for losses in `[0, 1]`. With `k = K` (K-RR) it is exactly unbiased.
//!
//! For canonical-link models (softmax cross-entropy, logistic) `ℓ(u; j) = A(u) − u_j` and
//! `f_k(1 − k q_k) = 1`, so `ℓ̃(u; ỹ) = A(u) − f_k u_ỹ + f_k q_k Σ_{Y_k} u_j`: convex in `u`,
//! but unbounded below (linear terms), so the ERM needs a bounded parameter set.

use super::model::LabelModel;
use super::pass::{debias_factors, debiased_score_gradient};
use crate::error::{check_eps, Error, Result};
use crate::mechanism::TopDraw;

/// Checks a release `(label, set)` over `K` labels: `1 ≤ k ≤ K` distinct labels `< K`,
/// `label ∈ set`.
fn check_release(label: u8, set: &[u8], kk: usize, row: usize) -> Result<()> {
    let bad = |msg: String| Error::param("releases", format!("release {row}: {msg}"));
    if set.is_empty() || set.len() > kk {
        return Err(bad(format!("top set has {} labels, needs 1 to K = {kk}", set.len())));
    }
    for (i, &j) in set.iter().enumerate() {
        if usize::from(j) >= kk {
            return Err(bad(format!("top-set label {j} is not below K = {kk}")));
        }
        if set[..i].contains(&j) {
            return Err(bad(format!("top-set label {j} appears twice")));
        }
    }
    if !set.contains(&label) {
        return Err(bad(format!(
            "released label {label} is not in its top set (RRTop-k only releases labels of the set)"
        )));
    }
    Ok(())
}

/// `ℓ̃(u; ỹ) = f_k (ℓ(u; ỹ) − q_k Σ_{j∈Y_k} ℓ(u; j))` (Ghazi et al. (2021), Sec. G) from the
/// clear-label losses `values[j] = ℓ(u; j)` of all `K` labels, the release `label = ỹ` and its
/// top set `set = Y_k`. With `k = 1` it is `ℓ(u; ỹ)` (`f_1 (1 − q_1) = 1`).
///
/// # Errors
/// [`Error::InvalidParam`] for an invalid `eps`; [`Error::InvalidParam`] also for a set that is empty,
/// too large, repeats a label or does not contain `label`, or a non-finite loss value.
pub fn debiased_topk_loss(values: &[f64], label: u8, set: &[u8], eps: f64) -> Result<f64> {
    check_eps(eps)?;
    check_release(label, set, values.len(), 0)?;
    if let Some(j) = values.iter().position(|v| !v.is_finite()) {
        return Err(Error::param(
            "values",
            format!("the loss value of label {j} is not finite"),
        ));
    }
    Ok(debiased_value(values, label, set, eps))
}

fn debiased_value(values: &[f64], label: u8, set: &[u8], eps: f64) -> f64 {
    if set.len() == 1 {
        return values[usize::from(label)];
    }
    let (f, q) = debias_factors(eps, set.len());
    let sum: f64 = set.iter().map(|&j| values[usize::from(j)]).sum();
    f * (values[usize::from(label)] - q * sum)
}

/// The exact expectation of [`debiased_topk_loss`] over RRTop-k's outputs for the true label
/// `y` (module docs): `ℓ(u; y)` when `y ∈ Y_k`, `(1/k) Σ_{j∈Y_k} ℓ(u; j)` otherwise.
///
/// # Errors
/// [`Error::InvalidParam`] for an invalid set (as [`debiased_topk_loss`]) or `y ≥ K`.
pub fn debiased_topk_expectation(values: &[f64], y: u8, set: &[u8]) -> Result<f64> {
    let kk = values.len();
    if usize::from(y) >= kk {
        return Err(Error::param("y", format!("label {y} is not below K = {kk}")));
    }
    check_release(set.first().copied().unwrap_or(0), set, kk, 0)?;
    if set.contains(&y) {
        Ok(values[usize::from(y)])
    } else {
        Ok(set.iter().map(|&j| values[usize::from(j)]).sum::<f64>() / set.len() as f64)
    }
}

/// The debiased empirical risk `L̃(θ) = (1/n) Σ_i ℓ̃(Φ_iθ; ỹ_i)` of RRTop-k releases and its
/// gradient `(1/n) Σ_i Φ_iᵀ f_k(G_ỹ − q_k Σ_{Y_k} G_j)` (the objective of the debiased ERM of
/// Ghazi et al. (2021), Sec. G; the gradient is that of their Cor. 10 SGD). `releases[i]` is
/// sample `i`'s release (label and top set, as [`RrTopK::sample`](crate::mechanism::RrTopK::sample)
/// returns it); the model's own labels are not read.
///
/// The risk is unbiased for the clear empirical risk only over samples whose true label lies in
/// their top set (module docs).
///
/// # Errors
/// [`Error::Shape`] for `theta` or `releases` of the wrong length; [`Error::InvalidParam`] for
/// an invalid `eps` or naming the first invalid release.
pub fn debiased_topk_risk<M: LabelModel>(
    model: &M,
    theta: &[f64],
    releases: &[TopDraw],
    eps: f64,
) -> Result<(f64, Vec<f64>)> {
    check_eps(eps)?;
    let (n, kk, m, p) = (model.n(), model.num_labels(), model.num_scores(), model.dim());
    if theta.len() != p {
        return Err(Error::Shape(format!("theta has {} entries, expected {p}", theta.len())));
    }
    if releases.len() != n {
        return Err(Error::Shape(format!("{} releases for {n} samples", releases.len())));
    }
    for (i, r) in releases.iter().enumerate() {
        check_release(r.label, &r.set, kk, i)?;
    }
    let (mut u, mut v, mut s) = (vec![0.0; m], vec![0.0; kk], vec![0.0; model.scratch_len()]);
    let (mut grads, mut g) = (vec![0.0; kk * m], vec![0.0; m]);
    let mut value = 0.0;
    let mut grad = vec![0.0; p];
    for (i, r) in releases.iter().enumerate() {
        model.scores(i, theta, &mut u);
        model.eval_all(&u, &mut v, Some(&mut grads), &mut s);
        value += debiased_value(&v, r.label, &r.set, eps);
        debiased_score_gradient(&grads, m, r.label, Some(&r.set), eps, true, &mut g);
        model.lift_add(i, &g, 1.0, &mut grad);
    }
    let inv = 1.0 / n as f64;
    grad.iter_mut().for_each(|x| *x *= inv);
    Ok((value * inv, grad))
}
