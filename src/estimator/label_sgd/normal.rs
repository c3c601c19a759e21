//! LP-Normal-SGD's noise (Ghazi et al. (2021), Alg. 6, Prop. 11): Gaussian noise only in the
//! subspace where the candidate gradients differ.
//!
//! **The release.** With the candidate gradients `G_0, …, G_{K−1}` of one sample (they depend on
//! `θ_t` and the public features only), let `Q ∈ ℝ^{r×p}` have orthonormal rows spanning
//! (numerically) `V = span{G_k − G_0 : k ≥ 1}`, and `c_k = Q(G_k − G_0) ∈ ℝ^r`. The step uses
//!
//! `g̃ = G_0 + Qᵀ(c_y + z)`,  `z ~ N(0, σ² I_r)`.
//!
//! When `Q` spans `V` exactly, `Qᵀc_y = G_y − G_0`, so `g̃ = G_y + Qᵀz`: the paper's
//! `G_y + QQᵀb̃` with the noise in `span{G_k − G_0} ⊆ span(G)` rather than in all of `span(G)`
//! (the `span{G_0}` direction needs no noise because `G_0` does not depend on the label).
//!
//! **Privacy does not depend on the rank decision.** Only `c_y` depends on the label; `G_0` and
//! `Q` are label-free. So the step is the Gaussian mechanism on `c_y ∈ ℝ^r` with sensitivity
//! `max_{k,k'} ‖c_k − c_k'‖ ≤ ‖G_k − G_k'‖` (`Q` has orthonormal rows) — whatever `r` is. This
//! realised sensitivity is computed at every step and checked against the calibrated `Δ`
//! (a violation is an error, nothing is released). Under-estimating the rank (dropping a small
//! singular direction) only biases the step by the dropped part `(I − QᵀQ)(G_y − G_0)`; it can
//! no longer leak the label. In the paper's form `G_y + QQᵀb̃` it would: a direction in which the
//! candidate gradients differ but that the rank decision dropped gets no noise.
//! The rank tolerance is still conservative: a direction is kept when its residual after two
//! Gram–Schmidt passes exceeds `tol · max_k ‖G_k − G_0‖` with `tol = 1e-12` by default
//! (over-estimating only adds noise).

use super::pass::NormalStats;
use super::LabelModel;
use crate::error::{Error, Result};
use crate::privacy::calibrate::{analytic_gaussian_std, gaussian_mechanism_std};
use crate::privacy::NoiseRng;
use rand_distr::{Distribution, StandardNormal};

/// How LP-Normal-SGD's σ is calibrated for the per-step Gaussian mechanism of sensitivity `Δ`
/// (Prop. 11 leaves the constant `C` of `σ = C·L√(ln(1/δ))/ε` unspecified; these are the
/// standard calibrations, not the paper's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum GaussianCalibration {
    /// Balle & Wang (2018): the smallest σ meeting the exact privacy profile (any ε > 0).
    #[default]
    Analytic,
    /// Dwork & Roth (2014) Thm A.1: `σ = Δ √(2 ln(1.25/δ))/ε`, valid for `ε < 1` only.
    Classic,
}

impl GaussianCalibration {
    /// Parses `analytic` or `classic`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`sigma-rule`) otherwise.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "analytic" => Ok(GaussianCalibration::Analytic),
            "classic" => Ok(GaussianCalibration::Classic),
            other => Err(Error::param(
                "sigma-rule",
                format!("unknown calibration `{other}` (expected analytic or classic)"),
            )),
        }
    }
    /// The name.
    pub fn name(&self) -> &'static str {
        match self {
            GaussianCalibration::Analytic => "analytic",
            GaussianCalibration::Classic => "classic",
        }
    }
    /// σ for sensitivity `Δ` at `(ε, δ)`.
    ///
    /// # Errors
    /// The errors of [`analytic_gaussian_std`] / [`gaussian_mechanism_std`] (the classic rule
    /// needs `ε < 1`).
    pub fn sigma(&self, sensitivity: f64, eps: f64, delta: f64) -> Result<f64> {
        match self {
            GaussianCalibration::Analytic => analytic_gaussian_std(sensitivity, eps, delta),
            GaussianCalibration::Classic => gaussian_mechanism_std(sensitivity, eps, delta),
        }
    }
}

/// LP-Normal-SGD's `(σ, Δ)`: the stated sensitivity, or the largest per-sample label sensitivity
/// of the public features (canonical losses), raised by a relative `1e-9` so that the realised
/// sensitivities (computed with rounding) stay below it.
pub(crate) fn normal_calibration<M: LabelModel>(
    model: &M,
    eps: f64,
    delta: f64,
    calibration: GaussianCalibration,
    sensitivity: Option<f64>,
) -> Result<(f64, f64)> {
    let sens = match sensitivity {
        Some(s) => s,
        None => {
            let mut worst = 0.0f64;
            for i in 0..model.n() {
                match model.label_sensitivity(i) {
                    Some(s) => worst = worst.max(s),
                    None => {
                        return Err(Error::param(
                            "sensitivity",
                            "LP-Normal-SGD needs the label sensitivity Δ for a loss whose gradient differences depend on θ: state it (--sensitivity)",
                        ))
                    }
                }
            }
            if worst == 0.0 {
                // No label ever changes a gradient: any σ is private; keep the calibration finite.
                f64::MIN_POSITIVE
            } else {
                worst * (1.0 + 1e-9)
            }
        }
    };
    Ok((calibration.sigma(sens, eps, delta)?, sens))
}

/// Default relative rank tolerance (module docs).
pub const DEFAULT_RANK_TOL: f64 = 1e-12;

/// An orthonormal basis (rows of `q`, `r × p`) of `span{v_1, …, v_m}` for the rows `v_j` of
/// `vectors` (`m × p`), by modified Gram–Schmidt applied twice ("twice is enough": orthogonal to
/// working precision). A vector is kept when its residual norm exceeds `tol · max_j ‖v_j‖`.
/// Returns `r`; `q` must hold `m·p` values (the first `r·p` are written).
pub fn orthonormal_basis(vectors: &[f64], p: usize, tol: f64, q: &mut [f64]) -> usize {
    let m = vectors.len() / p;
    let scale = vectors
        .chunks_exact(p)
        .map(|v| v.iter().map(|a| a * a).sum::<f64>().sqrt())
        .fold(0.0, f64::max);
    if scale == 0.0 {
        return 0;
    }
    let mut r = 0;
    for j in 0..m {
        let (done, rest) = q.split_at_mut(r * p);
        let w = &mut rest[..p];
        w.copy_from_slice(&vectors[j * p..(j + 1) * p]);
        for _pass in 0..2 {
            for b in done.chunks_exact(p) {
                let c: f64 = b.iter().zip(w.iter()).map(|(x, y)| x * y).sum();
                for (wi, bi) in w.iter_mut().zip(b) {
                    *wi -= c * bi;
                }
            }
        }
        let nrm = w.iter().map(|a| a * a).sum::<f64>().sqrt();
        if nrm > tol * scale {
            w.iter_mut().for_each(|a| *a /= nrm);
            r += 1;
        }
    }
    r
}

/// LP-Normal-SGD's step direction `g̃ = G_0 + Qᵀ(c_y + z)` of one sample (module docs), its
/// buffers and the statistics of a pass.
pub(crate) struct NormalStep {
    /// The candidate gradients `G_k` in parameter space (`K × p`).
    gfull: Vec<f64>,
    /// `G_k − G_0`, `k ≥ 1` (`(K−1) × p`).
    diffs: Vec<f64>,
    /// The rows of `Q` (`r × p` used).
    q: Vec<f64>,
    /// `c_k = Q(G_k − G_0)` (`K × r` used).
    coords: Vec<f64>,
    /// `g̃`.
    dir: Vec<f64>,
    stats: NormalStats,
}

impl NormalStep {
    /// Buffers for `K` labels and `p` parameters (none unless `used`).
    pub fn new(k: usize, p: usize, used: bool) -> Self {
        let (gfull, diffs, q, dir) = if used {
            (vec![0.0; k * p], vec![0.0; (k - 1) * p], vec![0.0; k * p], vec![0.0; p])
        } else {
            Default::default()
        };
        NormalStep {
            gfull,
            diffs,
            q,
            coords: vec![0.0; k * k],
            dir,
            stats: NormalStats {
                rank_min: usize::MAX,
                ..NormalStats::default()
            },
        }
    }

    /// The statistics of the steps so far.
    pub fn stats(&self) -> NormalStats {
        self.stats
    }

    /// Computes `g̃` of sample `i` from its candidate score gradients `grads` (`K × m`) with the
    /// rank tolerance `tol`, `(σ, Δ)` of the calibration and noise from `rng`.
    ///
    /// # Errors
    /// [`Error::Privacy`] when the realised label sensitivity exceeds `Δ` (nothing is drawn).
    pub fn direction<M: LabelModel>(
        &mut self,
        model: &M,
        i: usize,
        grads: &[f64],
        tol: f64,
        (sigma, delta_sens): (f64, f64),
        rng: &mut NoiseRng,
    ) -> Result<()> {
        let (kk, m, p) = (model.num_labels(), model.num_scores(), model.dim());
        self.gfull.fill(0.0);
        for (k, row) in self.gfull.chunks_exact_mut(p).enumerate() {
            model.lift_add(i, &grads[k * m..(k + 1) * m], 1.0, row);
        }
        let (g0, rest) = self.gfull.split_at(p);
        for (dk, gk) in self.diffs.chunks_exact_mut(p).zip(rest.chunks_exact(p)) {
            for ((d, a), b) in dk.iter_mut().zip(gk).zip(g0) {
                *d = a - b;
            }
        }
        let r = orthonormal_basis(&self.diffs, p, tol, &mut self.q);
        let (q, coords) = (&self.q, &mut self.coords);
        // c_0 = 0, c_k = Q(G_k − G_0).
        coords[..kk * r.max(1)].fill(0.0);
        for k in 1..kk {
            let dk = &self.diffs[(k - 1) * p..k * p];
            for j in 0..r {
                coords[k * r + j] = q[j * p..(j + 1) * p].iter().zip(dk).map(|(a, b)| a * b).sum();
            }
        }
        let mut sens = 0.0f64;
        for a in 0..kk {
            for b in a + 1..kk {
                let dist = (0..r)
                    .map(|j| (coords[a * r + j] - coords[b * r + j]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                sens = sens.max(dist);
            }
        }
        if sens > delta_sens {
            return Err(Error::Privacy(format!(
                "LP-Normal-SGD at sample {i}: the gradient's label sensitivity {sens:e} exceeds the calibrated Δ = {delta_sens:e}; nothing was released (state a larger --sensitivity)"
            )));
        }
        let st = &mut self.stats;
        st.max_sens = st.max_sens.max(sens);
        st.rank_min = st.rank_min.min(r);
        st.rank_max = st.rank_max.max(r);
        st.rank_sum += r;
        let y = usize::from(model.label(i));
        self.dir.copy_from_slice(&self.gfull[..p]);
        for j in 0..r {
            let z: f64 = StandardNormal.sample(rng);
            let zj = sigma * z;
            let cj = coords[y * r + j] + zj;
            for (dv, qv) in self.dir.iter_mut().zip(&q[j * p..(j + 1) * p]) {
                *dv = cj.mul_add(*qv, *dv);
            }
        }
        Ok(())
    }

    /// `θ ← θ + α g̃`.
    pub(crate) fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        for (th, dv) in theta.iter_mut().zip(&self.dir) {
            *th += alpha * dv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basis_is_orthonormal_and_drops_dependent_vectors() {
        let v = [1.0, 1.0, 0.0, 2.0, 2.0, 0.0, 0.0, 1.0, 1.0];
        let mut q = vec![0.0; 9];
        let r = orthonormal_basis(&v, 3, 1e-12, &mut q);
        assert_eq!(r, 2);
        for a in 0..r {
            for b in 0..r {
                let ip: f64 = (0..3).map(|j| q[a * 3 + j] * q[b * 3 + j]).sum();
                let want = if a == b { 1.0 } else { 0.0 };
                assert!((ip - want).abs() < 1e-15);
            }
        }
        assert_eq!(orthonormal_basis(&[0.0; 6], 3, 1e-12, &mut q), 0);
    }

    #[test]
    fn calibrations_match_reference_values() {
        // Reference values of the analytic and classic Gaussian mechanisms.
        let a = GaussianCalibration::Analytic;
        let c = GaussianCalibration::Classic;
        assert!((a.sigma(1.0, 1.0, 1e-5).unwrap() - 3.7306).abs() < 5e-4);
        assert!((a.sigma(1.0, 0.5, 1e-5).unwrap() - 7.0318).abs() < 5e-4);
        assert!((c.sigma(1.0, 0.5, 1e-5).unwrap() - 9.6896).abs() < 5e-4);
        assert!((c.sigma(2.0, 0.5, 1e-5).unwrap() - 19.379221).abs() < 1e-5);
        assert!((c.sigma(2.0, 0.9, 1e-6).unwrap() - 11.775117).abs() < 1e-5);
        assert!(c.sigma(1.0, 1.5, 1e-5).is_err());
        assert!(a.sigma(1.0, 3.0, 1e-5).is_ok());
        assert_eq!(GaussianCalibration::parse("classic").unwrap(), c);
        assert!(GaussianCalibration::parse("x").is_err());
    }
}
