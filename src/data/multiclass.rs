//! K-class (multinomial) data: one feature vector `x_i ∈ ℝ^d` and one class `y_i ∈ {0, …, K−1}`
//! per sample, for the linear softmax model `P(y = k | x) = softmax(W x)_k` with
//! `W ∈ ℝ^{K×d}` (the convex learning setting of Ghazi et al. (2021):
//! multinomial logistic regression).
//!
//! The parameter is `θ = vec(W)` row-major (`W_k = θ[k·d .. (k+1)·d]`), so the class scores are
//! `u_k = W_k·x`. This is the K-wise (Plackett–Luce top-1) model with the Kronecker feature block
//! `Φ_i = I_K ⊗ x_iᵀ` (row `k` holds `x_i` in block `k`, zeros elsewhere):
//! [`MulticlassView::group_features`] builds that dense `n × K × (K·d)` array for the exact
//! K-wise solvers ([`crate::estimator::fit_kwise`]); the label-private SGD of
//! [`crate::estimator::label_sgd`] works on the view directly (`O(K·d)` per sample, no copy).
//!
//! `W` and `W + 1vᵀ` give the same probabilities; gradients `(p − e_y) xᵀ` have columns summing
//! to zero, so SGD from `W = 0` stays on the identified subspace `{W : 1ᵀW = 0}`.

use super::check_finite_rows;
use crate::data::group::MAX_K;
use crate::error::{DataErrorKind, Error, Location, Result};

/// Borrowed, validated K-class data (module docs).
#[derive(Debug, Clone, Copy)]
pub struct MulticlassView<'a> {
    x: &'a [f64],
    y: &'a [u8],
    n: usize,
    d: usize,
    k: usize,
}

impl<'a> MulticlassView<'a> {
    /// `x`: `n × d` row-major features; `y`: `n` classes in `0..K`. Requires `n ≥ 1`, `d ≥ 1`,
    /// `2 ≤ K ≤ 256`, finite features.
    ///
    /// # Errors
    /// [`Error::Shape`] for inconsistent sizes; [`Error::Data`] naming the row (and column) of
    /// the first non-finite feature or out-of-range class.
    pub fn new(x: &'a [f64], n: usize, d: usize, k: usize, y: &'a [u8]) -> Result<Self> {
        if n == 0 || d == 0 {
            return Err(Error::Shape(format!(
                "need n ≥ 1 samples and d ≥ 1 features, got n = {n}, d = {d}"
            )));
        }
        if !(2..=MAX_K).contains(&k) {
            return Err(Error::Shape(format!("need 2 ≤ K ≤ {MAX_K} classes, got K = {k}")));
        }
        if n.checked_mul(d) != Some(x.len()) {
            return Err(Error::Shape(format!(
                "x has {} values, expected n·d = {n}·{d}",
                x.len()
            )));
        }
        if y.len() != n {
            return Err(Error::Shape(format!(
                "y has {} labels but there are {n} samples",
                y.len()
            )));
        }
        check_finite_rows(x, d)?;
        if let Some(row) = y.iter().position(|&l| usize::from(l) >= k) {
            return Err(Error::Data {
                input: "y",
                at: Location { row, col: None },
                kind: DataErrorKind::LabelOutOfRange {
                    label: i128::from(y[row]),
                    bound: k as u64,
                },
            });
        }
        Ok(MulticlassView { x, y, n, d, k })
    }
    /// The same features with other labels (validated).
    ///
    /// # Errors
    /// As [`MulticlassView::new`].
    pub fn with_labels<'b>(&self, y: &'b [u8]) -> Result<MulticlassView<'b>>
    where
        'a: 'b,
    {
        MulticlassView::new(self.x, self.n, self.d, self.k, y)
    }
    /// Samples `n`.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Features `d`.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Classes `K`.
    pub fn k(&self) -> usize {
        self.k
    }
    /// Parameters `K·d`.
    pub fn dim(&self) -> usize {
        self.k * self.d
    }
    /// Row `i` of `x`.
    pub fn row(&self, i: usize) -> &'a [f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }
    /// The classes.
    pub fn y(&self) -> &'a [u8] {
        self.y
    }
    /// The features (`n × d`).
    pub fn x(&self) -> &'a [f64] {
        self.x
    }
    /// `max_i ‖x_i‖`.
    pub fn max_row_norm(&self) -> f64 {
        self.x
            .chunks_exact(self.d)
            .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
            .fold(0.0, f64::max)
    }
    /// The dense Kronecker features `Φ_i = I_K ⊗ x_iᵀ` as an `n × K × (K·d)` row-major array
    /// (`K²·d·n` values), for [`GroupView::new`](crate::data::GroupView::new) with `K`
    /// alternatives and `K·d` features: then the Plackett–Luce top-1 loss is the softmax
    /// cross-entropy of `W = θ` reshaped `K × d`.
    ///
    /// # Errors
    /// [`Error::Shape`] if `n·K²·d` overflows.
    pub fn group_features(&self) -> Result<Vec<f64>> {
        let (n, d, k) = (self.n, self.d, self.k);
        let len = n
            .checked_mul(k * k)
            .and_then(|v| v.checked_mul(d))
            .ok_or_else(|| Error::Shape(format!("n·K²·d = {n}·{k}²·{d} overflows")))?;
        let mut out = vec![0.0; len];
        let p = k * d;
        for i in 0..n {
            let xi = self.row(i);
            for c in 0..k {
                let start = (i * k + c) * p + c * d;
                out[start..start + d].copy_from_slice(xi);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_and_kronecker_features() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [0u8, 2];
        let v = MulticlassView::new(&x, 2, 2, 3, &y).unwrap();
        assert_eq!(v.dim(), 6);
        let g = v.group_features().unwrap();
        assert_eq!(g.len(), 2 * 3 * 6);
        // sample 1, class 2: x_1 in the last block.
        assert_eq!(&g[(3 + 2) * 6..(3 + 3) * 6], &[0.0, 0.0, 0.0, 0.0, 3.0, 4.0]);
        assert!((v.max_row_norm() - 5.0).abs() < 1e-15);
        assert!(MulticlassView::new(&x, 2, 2, 2, &y)
            .unwrap_err()
            .to_string()
            .contains("row 1"));
        assert!(MulticlassView::new(&x, 2, 2, 1, &y).is_err());
        assert!(MulticlassView::new(&x[..3], 2, 2, 3, &y).is_err());
        let bad = [1.0, f64::NAN, 3.0, 4.0];
        assert!(MulticlassView::new(&bad, 2, 2, 3, &y)
            .unwrap_err()
            .to_string()
            .contains("column 1"));
    }
}
