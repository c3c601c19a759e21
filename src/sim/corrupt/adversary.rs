//! The label adversaries and how each spends its budget.

use crate::error::{Error, Result};
use crate::mechanism::uniform_f64;
use rand::Rng;

/// A label adversary with corruption fraction `α ∈ [0, ½)` (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Adversary {
    /// The paper's experiment (Zhou, Wu & Orabona (2025), App. D): independently for each sample,
    /// with probability `alpha` the current label is set to the wrong label `1 − y_i` (`y` = clear
    /// label). Before RR this is a flip of `y`; after RR it overrides whatever RR reported.
    /// Oblivious (ignores features); respects the budget only in expectation.
    ObliviousMask {
        /// Corruption probability `α`.
        alpha: f64,
    },
    /// Flips exactly `⌊αn⌋` current labels at uniformly chosen distinct rows (partial
    /// Fisher–Yates). Oblivious; respects the budget exactly.
    FixedCount {
        /// Corruption fraction `α`.
        alpha: f64,
    },
    /// Flip-to-constant: `⌊αn⌋` distinct rows chosen uniformly (partial Fisher–Yates) get the
    /// label `label`. Oblivious; respects the budget exactly.
    Constant {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The label written (0 or 1).
        label: u8,
    },
    /// Margin-targeted, adaptive: the `⌊αn⌋` rows with the largest margin `|x_iᵀθ|` under the
    /// adversary's parameter `θ` (typically the truth) get the label that contradicts it,
    /// `1[x_iᵀθ < 0]` — the most informative comparisons are reversed, shrinking the estimate
    /// along `θ`. A [`Adversary::DirectionalPush`] along `−θ`, restricted to high-margin rows.
    MarginFlip {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The adversary's parameter `θ` (length `d`).
        theta: Vec<f64>,
    },
    /// Adaptive, worst-case-like: among the `⌊αn⌋` samples with the largest `|vᵀx_i|` (ties by
    /// row index), sets the current label to `1[vᵀx_i > 0]`. Maximises
    /// `⟨Σ_i (ŷ_i − y_i) x_i, v⟩`, dragging the estimate along `v`.
    DirectionalPush {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The direction `v` (length `d`; need not be normalised).
        direction: Vec<f64>,
    },
    /// LTC-informed push: like [`Adversary::DirectionalPush`] but only rows
    /// whose current label differs from `1[vᵀx_i > 0]` are candidates, so every unit of budget
    /// changes a label.
    InformedPush {
        /// Corruption fraction `α`.
        alpha: f64,
        /// The direction `v` (length `d`).
        direction: Vec<f64>,
    },
    /// Sets the current label of every listed row to `label` (the hidden-direction design, with
    /// [`hidden_direction_design`](super::hidden_direction_design)). The budget is the number of
    /// rows.
    TargetRows {
        /// Rows to corrupt.
        rows: Vec<usize>,
        /// The label written.
        label: u8,
    },
}

pub(super) fn check_alpha(alpha: f64) -> Result<()> {
    if !(alpha.is_finite() && (0.0..0.5).contains(&alpha)) {
        return Err(Error::param("alpha", format!("must be in [0, 0.5), got {alpha}")));
    }
    Ok(())
}

impl Adversary {
    /// Checks `α ∈ [0, ½)`, the direction (length `d`, finite, non-zero) and the rows (`< n`) and
    /// label (`0` or `1`).
    pub fn validate(&self, n: usize, d: usize) -> Result<()> {
        match self {
            Adversary::ObliviousMask { alpha } | Adversary::FixedCount { alpha } => check_alpha(*alpha),
            Adversary::Constant { alpha, label } => {
                check_alpha(*alpha)?;
                if *label > 1 {
                    return Err(Error::param("label", format!("must be 0 or 1, got {label}")));
                }
                Ok(())
            }
            Adversary::DirectionalPush { alpha, direction }
            | Adversary::InformedPush { alpha, direction }
            | Adversary::MarginFlip {
                alpha,
                theta: direction,
            } => {
                check_alpha(*alpha)?;
                if direction.len() != d {
                    return Err(Error::Shape(format!(
                        "adversary direction has {} entries but d = {d}",
                        direction.len()
                    )));
                }
                if let Some(j) = direction.iter().position(|v| !v.is_finite()) {
                    return Err(Error::param("direction", format!("entry {j} is not finite")));
                }
                if direction.iter().all(|&v| v == 0.0) {
                    return Err(Error::param("direction", "is the zero vector"));
                }
                Ok(())
            }
            Adversary::TargetRows { rows, label } => {
                if *label > 1 {
                    return Err(Error::param("label", format!("must be 0 or 1, got {label}")));
                }
                if let Some(&r) = rows.iter().find(|&&r| r >= n) {
                    return Err(Error::param("rows", format!("row {r} is out of range (n = {n})")));
                }
                if 2 * rows.len() >= n.max(1) {
                    return Err(Error::param(
                        "rows",
                        format!("{} of {n} rows is not an α < 1/2 corruption", rows.len()),
                    ));
                }
                Ok(())
            }
        }
    }

    /// The number of labels the adversary may change on `n` samples: `⌊αn⌋` (the oblivious mask:
    /// its expectation `αn`, rounded down), or the number of target rows.
    pub fn budget(&self, n: usize) -> usize {
        match self {
            Adversary::ObliviousMask { alpha }
            | Adversary::FixedCount { alpha }
            | Adversary::Constant { alpha, .. }
            | Adversary::MarginFlip { alpha, .. }
            | Adversary::DirectionalPush { alpha, .. }
            | Adversary::InformedPush { alpha, .. } => (alpha * n as f64).floor() as usize,
            Adversary::TargetRows { rows, .. } => rows.len(),
        }
    }

    /// Corrupts `labels` in place (the current labels: clear labels in CTL, RR outputs in LTC)
    /// and returns the number of labels changed. `x` is the row-major `n × d` feature matrix,
    /// `y` the clear labels.
    ///
    /// Randomness: [`Adversary::ObliviousMask`] draws one [`uniform_f64`] per row in row order;
    /// [`Adversary::FixedCount`] and [`Adversary::Constant`] draw `⌊αn⌋` uniforms (partial
    /// Fisher–Yates over the row indices); the others draw nothing.
    ///
    /// # Errors
    /// Shape mismatches and invalid parameters ([`Adversary::validate`]).
    pub fn corrupt<R: Rng + ?Sized>(
        &self,
        x: &[f64],
        d: usize,
        y: &[u8],
        labels: &mut [u8],
        rng: &mut R,
    ) -> Result<usize> {
        let n = labels.len();
        if y.len() != n || x.len() != n * d {
            return Err(Error::Shape(format!(
                "corrupt: {n} labels, {} clear labels, {} feature values for d = {d}",
                y.len(),
                x.len()
            )));
        }
        self.validate(n, d)?;
        let mut changed = 0;
        let mut set = |i: usize, v: u8, labels: &mut [u8]| {
            if labels[i] != v {
                labels[i] = v;
                changed += 1;
            }
        };
        match self {
            Adversary::ObliviousMask { alpha } => {
                for (i, &yi) in y.iter().enumerate() {
                    if uniform_f64(rng) < *alpha {
                        set(i, 1 - yi, labels);
                    }
                }
            }
            Adversary::FixedCount { alpha } | Adversary::Constant { alpha, .. } => {
                let k = (alpha * n as f64).floor() as usize;
                let mut idx: Vec<usize> = (0..n).collect();
                for j in 0..k {
                    let r = j + ((uniform_f64(rng) * (n - j) as f64) as usize).min(n - j - 1);
                    idx.swap(j, r);
                    let i = idx[j];
                    let v = match self {
                        Adversary::Constant { label, .. } => *label,
                        _ => 1 - labels[i],
                    };
                    set(i, v, labels);
                }
            }
            Adversary::MarginFlip { alpha, theta } => {
                let k = (alpha * n as f64).floor() as usize;
                let m: Vec<f64> = x
                    .chunks_exact(d)
                    .map(|r| r.iter().zip(theta).map(|(a, b)| a * b).sum())
                    .collect();
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by(|&a, &b| m[b].abs().total_cmp(&m[a].abs()).then(a.cmp(&b)));
                for &i in order.iter().take(k) {
                    set(i, u8::from(m[i] < 0.0), labels);
                }
            }
            Adversary::DirectionalPush { alpha, direction } | Adversary::InformedPush { alpha, direction } => {
                let informed = matches!(self, Adversary::InformedPush { .. });
                let k = (alpha * n as f64).floor() as usize;
                let proj: Vec<f64> = x
                    .chunks_exact(d)
                    .map(|r| r.iter().zip(direction).map(|(a, b)| a * b).sum())
                    .collect();
                let mut cand: Vec<usize> = (0..n)
                    .filter(|&i| !informed || labels[i] != u8::from(proj[i] > 0.0))
                    .collect();
                cand.sort_by(|&a, &b| proj[b].abs().total_cmp(&proj[a].abs()).then(a.cmp(&b)));
                for &i in cand.iter().take(k) {
                    set(i, u8::from(proj[i] > 0.0), labels);
                }
            }
            Adversary::TargetRows { rows, label } => {
                for &i in rows {
                    set(i, *label, labels);
                }
            }
        }
        Ok(changed)
    }
}
