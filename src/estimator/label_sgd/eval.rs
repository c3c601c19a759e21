//! Evaluation of a trained model on (test) data: mean loss, accuracy, and the excess risk of a
//! well-specified likelihood model against the true parameter.

use super::LabelModel;
use crate::error::{Error, Result};

fn check_theta<M: LabelModel>(model: &M, theta: &[f64]) -> Result<()> {
    if theta.len() != model.dim() {
        return Err(Error::Shape(format!(
            "theta has {} entries, expected {}",
            theta.len(),
            model.dim()
        )));
    }
    Ok(())
}

/// `(1/n) Σ_i ℓ(Φ_iθ; y_i)` on the model's (clear) labels.
///
/// # Errors
/// [`Error::Shape`] for a `theta` of the wrong length.
pub fn mean_loss<M: LabelModel>(model: &M, theta: &[f64]) -> Result<f64> {
    check_theta(model, theta)?;
    let (k, m) = (model.num_labels(), model.num_scores());
    let (mut u, mut v, mut s) = (vec![0.0; m], vec![0.0; k], vec![0.0; model.scratch_len()]);
    let mut total = 0.0;
    for i in 0..model.n() {
        model.scores(i, theta, &mut u);
        model.eval_all(&u, &mut v, None, &mut s);
        total += v[usize::from(model.label(i))];
    }
    Ok(total / model.n() as f64)
}

/// The fraction of samples whose label has the smallest loss `ℓ(Φ_iθ; k)` (the most likely label
/// for likelihood losses; ties to the smaller label).
///
/// # Errors
/// [`Error::Shape`] for a `theta` of the wrong length.
pub fn accuracy<M: LabelModel>(model: &M, theta: &[f64]) -> Result<f64> {
    check_theta(model, theta)?;
    let (k, m) = (model.num_labels(), model.num_scores());
    let (mut u, mut v, mut s) = (vec![0.0; m], vec![0.0; k], vec![0.0; model.scratch_len()]);
    let mut hits = 0usize;
    for i in 0..model.n() {
        model.scores(i, theta, &mut u);
        model.eval_all(&u, &mut v, None, &mut s);
        let mut best = 0;
        for (j, &vj) in v.iter().enumerate() {
            if vj < v[best] {
                best = j;
            }
        }
        hits += usize::from(best == usize::from(model.label(i)));
    }
    Ok(hits as f64 / model.n() as f64)
}

/// The excess risk of `theta` over the true parameter `theta_star` of a well-specified
/// likelihood model, with the label expectation taken exactly:
///
/// `(1/n) Σ_i Σ_k p*_ik (ℓ(Φ_iθ; k) − ℓ(Φ_iθ*; k))`,  `p*_ik = e^{−ℓ(Φ_iθ*; k)}` (normalised),
///
/// which for the logistic and softmax losses (`−ℓ(u; k)` = log-probabilities) is the mean
/// `KL(p*(x_i) ‖ p_θ(x_i))` over the features, `≥ 0`. Only the features are sampled: an
/// estimate of the population excess risk `L(θ, P) − L(θ*, P)` without the label noise (the
/// labels of `model` are not read).
///
/// # Errors
/// [`Error::Shape`] for parameters of the wrong length.
pub fn excess_risk<M: LabelModel>(model: &M, theta: &[f64], theta_star: &[f64]) -> Result<f64> {
    check_theta(model, theta)?;
    check_theta(model, theta_star)?;
    let (k, m) = (model.num_labels(), model.num_scores());
    let mut u = vec![0.0; m];
    let (mut v, mut vs, mut s) = (vec![0.0; k], vec![0.0; k], vec![0.0; model.scratch_len()]);
    let mut total = 0.0;
    for i in 0..model.n() {
        model.scores(i, theta_star, &mut u);
        model.eval_all(&u, &mut vs, None, &mut s);
        model.scores(i, theta, &mut u);
        model.eval_all(&u, &mut v, None, &mut s);
        let lo = vs.iter().cloned().fold(f64::INFINITY, f64::min);
        let z: f64 = vs.iter().map(|&a| (lo - a).exp()).sum();
        let mut e = 0.0;
        for (&a, &b) in vs.iter().zip(&v) {
            e += (lo - a).exp() / z * (b - a);
        }
        total += e;
    }
    Ok(total / model.n() as f64)
}
