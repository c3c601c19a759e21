//! The inner minimum `min_{θ ∈ C} ⟨θ, g⟩` over the confidence set
//! `C = {θ : ‖θ − c‖_M ≤ Γ} ∩ S ∩ {‖θ‖ ≤ B}` (the inner minimum of "Provable
//! protection of human judgements" (anon., 2025), Algorithm 3, and of Zhou, Wu & Orabona (2025),
//! Algorithm 2; the closed forms and the dual are derived here), with `S` the sum-zero plane `{1ᵀθ
//! = 0}` or `ℝ^d`.
//!
//! **Reduction.** With the sum-zero plane, `θ = U z` for the orthonormal Helmert basis `U` of
//! `1^⊥` (`‖θ‖ = ‖z‖`, `⟨θ, g⟩ = ⟨z, Uᵀg⟩`). The slice of the ellipsoid is the ellipsoid
//! `‖z − z_c‖_{M_U} ≤ r` with `M_U = UᵀMU`, centre `z_c = Uᵀθ_c`,
//! `θ_c = c − M⁻¹1·(1ᵀc)/(1ᵀM⁻¹1)` (the `M`-nearest point of the plane to `c`) and
//! `r² = Γ² − (1ᵀc)²/(1ᵀM⁻¹1)` (the `M`-distance² of `c` to the plane; the slice is empty when
//! `r² < 0`). Without the plane, `z = θ`, `A = M`, `r = Γ`. Everything below works in the
//! eigenbasis `A = QΛQᵀ` (`ĝ = QᵀUᵀg`, `ĉ = Qᵀz_c`), where one evaluation costs `O(k)`.
//!
//! **Ellipsoid alone** (closed form, Cauchy–Schwarz in the `A`-inner product):
//! `min = ⟨ĉ, ĝ⟩ − r‖ĝ‖_{Λ⁻¹}`, attained at `ẑ_E = ĉ − r Λ⁻¹ĝ/‖ĝ‖_{Λ⁻¹}`. With the sum-zero
//! plane (and `c` in it) this is `⟨c̃, g⟩ − r sqrt(gᵀM⁻¹g − (1ᵀM⁻¹g)²/(1ᵀM⁻¹1))`.
//!
//! **Ball binding (exact).** If `‖ẑ_E‖ > B`, the ball-only minimiser `−Bĝ/‖ĝ‖` is tried (exact
//! when it lies in the ellipsoid), otherwise both constraints are active. Lagrangian
//! `⟨ĝ, z⟩ + (μ₁/2)(‖z − ĉ‖²_Λ − r²) + (μ₂/2)(‖z‖² − B²)` is minimised by
//! `ẑ_k(μ) = (μ₁Λ_kĉ_k − ĝ_k)/(μ₁Λ_k + μ₂)`; the dual `D(μ₁, μ₂)` is concave. For fixed `μ₂` the
//! best `μ₁` is the root of the decreasing `φ(μ₁) = Σ_k Λ_k(ĝ_k + μ₂ĉ_k)²/(μ₁Λ_k + μ₂)² − r²`
//! (or 0 when `φ(0) ≤ 0`); the best `μ₂` is the root of the non-increasing
//! `ψ(μ₂) = ‖ẑ(μ₁*(μ₂), μ₂)‖² − B²` (`∂D/∂μ = ½(constraint values)` by Danskin). Both are found
//! by Brent's method to the floating-point resolution: a nested 1-D/1-D Lagrange multiplier
//! problem, `O(k)` per evaluation.
//!
//! **Certificate.** Every answer carries a lower bound (the dual value `D(μ₁, μ₂)` at the
//! multipliers found — a valid bound for *any* `μ ≥ 0` by weak duality; the closed form in the
//! one-constraint cases) and an upper bound `⟨θ, g⟩` at a point `θ` that is feasible: the
//! primal point `ẑ(μ)` is pulled towards a strictly interior (Slater) point of `C` until it
//! satisfies both constraints. `upper − lower` bounds the error of both.
//!
//! **Empty sets.** If the plane misses the ellipsoid (`r² < 0`) or the ball misses the slice
//! (`min_{z ∈ E} ‖z‖ ≥ B`, found by the same 1-D multiplier method), construction reports it; the
//! caller ([`ConfidenceSet`](super::ConfidenceSet)) falls back to a larger valid set (dropping the
//! ball keeps `θ* ∈ C` on the good event).

mod quadratic;

pub(crate) use quadratic::QuadraticStep;

use crate::error::{Error, Result};
use crate::feasible::helmert;
use crate::math::dot;
use crate::math::roots::root_decreasing;
use faer::{MatRef, Side};

/// The result of one inner minimisation.
#[derive(Debug, Clone, PartialEq)]
pub struct InnerMin {
    /// A feasible minimiser `θ ∈ C` (ambient coordinates, length `d`).
    pub theta: Vec<f64>,
    /// `⟨θ, g⟩` at `theta`: an upper bound on the minimum.
    pub upper: f64,
    /// A certified lower bound on the minimum (closed form or dual value).
    pub lower: f64,
    /// The multipliers `(μ₁, μ₂)` of the ellipsoid and the ball (`μ₂ = 0` when the ball is
    /// inactive or absent; `(0, 0)` for `g` orthogonal to the set's directions).
    pub multipliers: (f64, f64),
    /// Whether the ball constraint is active at the answer.
    pub ball_active: bool,
}

/// Why a requested set is empty.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Emptiness {
    /// The sum-zero plane misses the ellipsoid: `Γ² < (1ᵀc)²/(1ᵀM⁻¹1)` (value given: `r²`).
    SliceMissesEllipsoid(f64),
    /// The ball misses the ellipsoid (slice): `min_{θ ∈ E} ‖θ‖` (value given) `≥ B`.
    BallMissesEllipsoid(f64),
}

/// The reduced, eigen-decomposed inner problem (module docs).
#[derive(Debug, Clone)]
pub(crate) struct InnerSolver {
    d: usize,
    k: usize,
    sum_zero: bool,
    /// `Q`, row-major `k × k` (column `j` = eigenvector `j`).
    q: Vec<f64>,
    lam: Vec<f64>,
    chat: Vec<f64>,
    r: f64,
    ball: Option<f64>,
    /// A strictly interior point (eigen coordinates); `ĉ` without a ball.
    slater: Vec<f64>,
}

/// Symmetric eigendecomposition of a row-major `k × k` matrix: (eigenvalues ascending, `Q`
/// row-major).
pub(crate) fn eigh(a: &[f64], k: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    let evd = MatRef::from_row_major_slice(a, k, k)
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::Numerical(format!("eigendecomposition of the confidence-set matrix: {e:?}")))?;
    let lam: Vec<f64> = (0..k).map(|j| evd.S().column_vector()[j]).collect();
    let u = evd.U();
    let mut q = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..k {
            q[i * k + j] = u[(i, j)];
        }
    }
    Ok((lam, q))
}

/// Shapes, finiteness and ranges of [`InnerSolver::new`]'s inputs.
fn check_inputs(c: &[f64], m: &[f64], gamma: f64, sum_zero: bool, ball: Option<f64>) -> Result<()> {
    let d = c.len();
    if d == 0 || m.len() != d * d {
        return Err(Error::Shape(format!(
            "confidence set: centre has {d} entries, matrix {} (expected d x d with d >= 1)",
            m.len()
        )));
    }
    if sum_zero && d < 2 {
        return Err(Error::param("d", "the sum-zero plane needs d >= 2"));
    }
    if c.iter().chain(m).any(|v| !v.is_finite()) {
        return Err(Error::param(
            "theta",
            "confidence-set centre or matrix has a non-finite entry",
        ));
    }
    if !(gamma.is_finite() && gamma >= 0.0) {
        return Err(Error::param(
            "confidence-radius",
            format!("must be finite and >= 0, got {gamma}"),
        ));
    }
    if let Some(b) = ball {
        crate::error::check_radius(b)?;
    }
    Ok(())
}

/// `(M + Mᵀ)/2` of a row-major `d × d` matrix (symmetric up to rounding; quadratic forms only
/// see this part).
fn symmetrize(m: &[f64], d: usize) -> Vec<f64> {
    let mut ms = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            ms[i * d + j] = 0.5 * (m[i * d + j] + m[j * d + i]);
        }
    }
    ms
}

/// The slice of the ellipsoid `‖θ − c‖_M ≤ Γ` by the sum-zero plane in Helmert coordinates
/// (module docs): `(d − 1, M_U, z_c, r)`, from the eigendecomposition `(lam_m, q_m)` of `ms`;
/// `Err` when the plane misses the ellipsoid (`r² < 0`).
fn reduce_to_plane(
    c: &[f64],
    ms: &[f64],
    lam_m: &[f64],
    q_m: &[f64],
    gamma: f64,
) -> std::result::Result<(usize, Vec<f64>, Vec<f64>, f64), Emptiness> {
    let d = c.len();
    // w = M⁻¹1 through the eigendecomposition.
    let mut t1 = vec![0.0; d];
    for j in 0..d {
        t1[j] = (0..d).map(|i| q_m[i * d + j]).sum::<f64>() / lam_m[j];
    }
    let w: Vec<f64> = (0..d).map(|i| dot(&q_m[i * d..(i + 1) * d], &t1)).collect();
    let one_w: f64 = w.iter().sum();
    let s1: f64 = c.iter().sum();
    let r2 = gamma * gamma - s1 * s1 / one_w;
    if r2 < 0.0 {
        return Err(Emptiness::SliceMissesEllipsoid(r2));
    }
    let mut thc: Vec<f64> = c.iter().zip(&w).map(|(ci, wi)| ci - wi * s1 / one_w).collect();
    crate::feasible::center(&mut thc);
    let mut zc = vec![0.0; d - 1];
    helmert::apply_t(&thc, &mut zc);
    let mut a = vec![0.0; (d - 1) * (d - 1)];
    helmert::reduce(ms, d, &mut a);
    Ok((d - 1, a, zc, r2.sqrt()))
}

impl InnerSolver {
    /// Builds the solver for centre `c`, the symmetric positive definite `m` (row-major
    /// `d × d`, e.g. `Σ̃ + λI`), radius `gamma`, the sum-zero plane if `sum_zero`, the ball if
    /// `ball = Some(B)`. `Ok(Err(_))` when the set is empty.
    ///
    /// # Errors
    /// Shapes, non-finite entries, `m` not positive definite, `gamma < 0`.
    pub fn new(
        c: &[f64],
        m: &[f64],
        gamma: f64,
        sum_zero: bool,
        ball: Option<f64>,
    ) -> Result<std::result::Result<Self, Emptiness>> {
        check_inputs(c, m, gamma, sum_zero, ball)?;
        let d = c.len();
        let ms = symmetrize(m, d);
        let (lam_m, q_m) = eigh(&ms, d)?;
        if !(lam_m[0] > 0.0) {
            return Err(Error::param(
                "lambda",
                format!(
                    "Σ̃ + λI is not positive definite (smallest eigenvalue {:e}): raise λ",
                    lam_m[0]
                ),
            ));
        }
        let (k, a, zc, r) = if sum_zero {
            match reduce_to_plane(c, &ms, &lam_m, &q_m, gamma) {
                Ok(reduced) => reduced,
                Err(empty) => return Ok(Err(empty)),
            }
        } else {
            (d, ms, c.to_vec(), gamma)
        };
        let (lam, q) = if sum_zero { eigh(&a, k)? } else { (lam_m, q_m) };
        if !(lam[0] > 0.0) {
            return Err(Error::Numerical(format!(
                "the reduced confidence-set matrix is not positive definite ({:e})",
                lam[0]
            )));
        }
        let mut chat = vec![0.0; k];
        for j in 0..k {
            chat[j] = (0..k).map(|i| q[i * k + j] * zc[i]).sum();
        }
        let mut s = InnerSolver {
            d,
            k,
            sum_zero,
            q,
            lam,
            chat: chat.clone(),
            r,
            ball,
            slater: chat,
        };
        if let Some(b) = ball {
            if let Some(empty) = s.place_slater(b)? {
                return Ok(Err(empty));
            }
        }
        Ok(Ok(s))
    }

    /// With the ball `‖z‖ ≤ b` and `‖ĉ‖ ≥ b`: moves the Slater point from `ĉ` to a strictly
    /// interior point of the intersection, between the ellipsoid's point nearest to the origin
    /// and `ĉ`. `Some` when the ball misses the ellipsoid.
    fn place_slater(&mut self, b: f64) -> Result<Option<Emptiness>> {
        let cn = dot(&self.chat, &self.chat).sqrt();
        if !(cn >= b) {
            return Ok(None);
        }
        let near = self.nearest_to_origin()?;
        let rho = dot(&near, &near).sqrt();
        if rho >= b * (1.0 - 1e-9) || self.r == 0.0 {
            return Ok(Some(Emptiness::BallMissesEllipsoid(rho)));
        }
        // Strictly interior: move from the nearest point towards the ellipsoid centre.
        let dist: f64 = near
            .iter()
            .zip(&self.chat)
            .map(|(a, c)| (c - a) * (c - a))
            .sum::<f64>()
            .sqrt();
        let tau = (0.5 * (b - rho) / dist).min(0.5);
        self.slater = near.iter().zip(&self.chat).map(|(a, c)| a + tau * (c - a)).collect();
        Ok(None)
    }

    /// The point of the ellipsoid nearest to the origin (eigen coordinates):
    /// `z(ν) = νΛĉ/(1 + νΛ)`, `ν` the root of `Σ Λĉ²/(1 + νΛ)² = r²` (decreasing in `ν`); `0`
    /// when `0 ∈ E` (`‖ĉ‖²_Λ ≤ r²`).
    fn nearest_to_origin(&self) -> Result<Vec<f64>> {
        let el = |nu: f64| -> f64 {
            self.lam
                .iter()
                .zip(&self.chat)
                .map(|(l, c)| l * c * c / ((1.0 + nu * l) * (1.0 + nu * l)))
                .sum::<f64>()
                - self.r * self.r
        };
        let e0 = el(0.0);
        if e0 <= 0.0 {
            return Ok(vec![0.0; self.k]);
        }
        let nu = root_decreasing(el, e0, 1.0 / self.lam[self.k - 1])
            .ok_or_else(|| Error::Numerical("confidence set: nearest point to the origin not found".into()))?;
        Ok(self
            .lam
            .iter()
            .zip(&self.chat)
            .map(|(l, c)| nu * l * c / (1.0 + nu * l))
            .collect())
    }

    /// Whether `θ = 0` lies in the set; then `h(0) = 0` bounds `max_π Ĵ(π)` from above
    /// (the θ-dual of the policy problem).
    pub fn contains_origin(&self) -> bool {
        let e: f64 = self.lam.iter().zip(&self.chat).map(|(l, c)| l * c * c).sum();
        e <= self.r * self.r
    }

    /// With the ball: the confidence radius `Γ*` from which the ellipsoid contains the whole
    /// parameter set (`{‖z‖ ≤ B}`, in the plane with the sum-zero constraint), so that `C` is
    /// that set: `‖z − ĉ‖²_Λ ≤ λ_max(A)(B + ‖ĉ‖)²` on the ball, hence every `Γ` with
    /// `Γ² ≥ λ_max(A)(B + ‖ĉ‖)² + (Γ² − r²)` (the second term, the `M`-distance² of the centre to
    /// the plane, does not depend on `Γ`) makes the set cover it. A sufficient test: a smaller
    /// `Γ` may cover it too. `None` without a ball (an unbounded set is never covered).
    pub fn covering_radius(&self, gamma: f64) -> Option<f64> {
        let b = self.ball?;
        let lam_max = self.lam.iter().copied().fold(0.0, f64::max);
        let reach = b + dot(&self.chat, &self.chat).sqrt();
        let off_plane = (gamma * gamma - self.r * self.r).max(0.0);
        Some((lam_max * reach * reach + off_plane).sqrt())
    }

    /// An upper bound on `max_{θ ∈ C} ‖θ‖`: `min(B, ‖ĉ‖ + r/√λ_min(A))` (plus, with the plane,
    /// nothing: `‖θ‖ = ‖z‖`).
    pub fn max_norm_bound(&self) -> f64 {
        let e = dot(&self.chat, &self.chat).sqrt() + self.r / self.lam[0].sqrt();
        match self.ball {
            Some(b) => e.min(b),
            None => e,
        }
    }

    fn to_eig(&self, g: &[f64]) -> Vec<f64> {
        let u = if self.sum_zero {
            let mut u = vec![0.0; self.k];
            helmert::apply_t(g, &mut u);
            u
        } else {
            g.to_vec()
        };
        let k = self.k;
        let mut gh = vec![0.0; k];
        for (i, &ui) in u.iter().enumerate().take(k) {
            let row = &self.q[i * k..(i + 1) * k];
            for j in 0..k {
                gh[j] += row[j] * ui;
            }
        }
        gh
    }

    fn eig_to_ambient(&self, z: &[f64]) -> Vec<f64> {
        let k = self.k;
        let u: Vec<f64> = (0..k).map(|i| dot(&self.q[i * k..(i + 1) * k], z)).collect();
        if self.sum_zero {
            let mut th = vec![0.0; self.d];
            helmert::apply(&u, &mut th);
            th
        } else {
            u
        }
    }

    /// `(‖z − ĉ‖²_Λ − r², ‖z‖² − B²)`.
    fn constraints(&self, z: &[f64]) -> (f64, f64) {
        let e: f64 = z
            .iter()
            .zip(&self.chat)
            .zip(&self.lam)
            .map(|((a, c), l)| l * (a - c) * (a - c))
            .sum();
        let b = self.ball.map_or(f64::NEG_INFINITY, |b| dot(z, z) - b * b);
        (e - self.r * self.r, b)
    }

    /// Pulls `z` towards the Slater point until both constraints hold.
    fn repair(&self, z: Vec<f64>) -> Vec<f64> {
        let (ce, cb) = self.constraints(&z);
        if ce <= 0.0 && cb <= 0.0 {
            return z;
        }
        let dz: Vec<f64> = z.iter().zip(&self.slater).map(|(a, s)| a - s).collect();
        // Largest τ with q(τ) = a τ² + 2bτ + c0 ≤ 0 (c0 < 0 at the interior point).
        let root = |a: f64, b: f64, c0: f64| -> f64 {
            if a <= 0.0 {
                return 1.0;
            }
            let disc = (b * b - a * c0).max(0.0);
            // (−b + √disc)/a computed without cancellation: = −c0/(b + √disc) when b > 0.
            let t = if b > 0.0 {
                -c0 / (b + disc.sqrt())
            } else {
                (-b + disc.sqrt()) / a
            };
            t.clamp(0.0, 1.0)
        };
        let mut tau: f64 = 1.0;
        if ce > 0.0 {
            let sc: Vec<f64> = self.slater.iter().zip(&self.chat).map(|(s, c)| s - c).collect();
            let a: f64 = dz.iter().zip(&self.lam).map(|(x, l)| l * x * x).sum();
            let b: f64 = dz.iter().zip(&sc).zip(&self.lam).map(|((x, y), l)| l * x * y).sum();
            let c0: f64 = sc.iter().zip(&self.lam).map(|(y, l)| l * y * y).sum::<f64>() - self.r * self.r;
            tau = tau.min(root(a, b, c0));
        }
        if cb > 0.0 {
            let bb = self.ball.unwrap_or(f64::INFINITY);
            let a = dot(&dz, &dz);
            let b = dot(&dz, &self.slater);
            let c0 = dot(&self.slater, &self.slater) - bb * bb;
            tau = tau.min(root(a, b, c0));
        }
        // One ulp-level step inside, so that rounding cannot leave the point outside.
        let tau = tau * (1.0 - 4.0 * f64::EPSILON);
        self.slater.iter().zip(&dz).map(|(s, x)| s + tau * x).collect()
    }

    fn finish(&self, z: Vec<f64>, gh: &[f64], lower: f64, multipliers: (f64, f64)) -> InnerMin {
        let z = self.repair(z);
        let upper = dot(&z, gh);
        let ball_active = multipliers.1 > 0.0;
        InnerMin {
            theta: self.eig_to_ambient(&z),
            upper,
            lower: lower.min(upper),
            multipliers,
            ball_active,
        }
    }

    /// The ellipsoid-only value `⟨ĉ, ĝ⟩ − r‖ĝ‖_{Λ⁻¹}` (a lower bound whenever a ball is present:
    /// the set is then smaller).
    pub fn ellipsoid_value(&self, g: &[f64]) -> f64 {
        let gh = self.to_eig(g);
        let w2: f64 = gh.iter().zip(&self.lam).map(|(x, l)| x * x / l).sum();
        dot(&self.chat, &gh) - self.r * w2.sqrt()
    }

    /// `min_{θ ∈ C} ⟨θ, g⟩` with its certificate (module docs).
    ///
    /// # Panics
    /// If `g.len() != d` (callers check shapes).
    pub fn minimize(&self, g: &[f64]) -> InnerMin {
        assert_eq!(g.len(), self.d, "inner minimum: g has the wrong length");
        let gh = self.to_eig(g);
        let gn2 = dot(&gh, &gh);
        if gn2 == 0.0 || !gn2.is_finite() {
            // Every point of C is a minimiser (value 0 on the reduced space).
            let z = self.slater.clone();
            let v = dot(&z, &gh);
            return InnerMin {
                theta: self.eig_to_ambient(&z),
                upper: v,
                lower: v,
                multipliers: (0.0, 0.0),
                ball_active: false,
            };
        }
        let w2: f64 = gh.iter().zip(&self.lam).map(|(x, l)| x * x / l).sum();
        let s = w2.sqrt();
        let lower_e = dot(&self.chat, &gh) - self.r * s;
        let ze: Vec<f64> = if self.r > 0.0 {
            self.chat
                .iter()
                .zip(&gh)
                .zip(&self.lam)
                .map(|((c, g), l)| c - self.r * g / (l * s))
                .collect()
        } else {
            self.chat.clone()
        };
        let mu1_e = if self.r > 0.0 { s / self.r } else { f64::INFINITY };
        let b = match self.ball {
            None => return self.finish(ze, &gh, lower_e, (mu1_e, 0.0)),
            Some(b) => b,
        };
        if dot(&ze, &ze) <= b * b {
            return self.finish(ze, &gh, lower_e, (mu1_e, 0.0));
        }
        let gn = gn2.sqrt();
        let zb: Vec<f64> = gh.iter().map(|g| -b * g / gn).collect();
        if self.constraints(&zb).0 <= 0.0 {
            return self.finish(zb, &gh, -b * gn, (0.0, gn / b));
        }
        // Both constraints active: nested multiplier problem.
        let lam = &self.lam;
        let chat = &self.chat;
        let r2 = self.r * self.r;
        let phi = |mu1: f64, mu2: f64| -> f64 {
            lam.iter()
                .zip(chat)
                .zip(&gh)
                .map(|((l, c), g)| {
                    let num = g + mu2 * c;
                    let den = mu1 * l + mu2;
                    l * num * num / (den * den)
                })
                .sum::<f64>()
                - r2
        };
        let mu1_of = |mu2: f64| -> f64 {
            let f0 = phi(0.0, mu2);
            if f0 <= 0.0 {
                return 0.0;
            }
            // Scale: the ellipsoid-alone multiplier ‖ĝ + μ₂ĉ‖_{Λ⁻¹}/r.
            let sc: f64 = lam
                .iter()
                .zip(chat)
                .zip(&gh)
                .map(|((l, c), g)| (g + mu2 * c) * (g + mu2 * c) / l)
                .sum::<f64>()
                .sqrt()
                / self.r;
            root_decreasing(|m| phi(m, mu2), f0, sc.max(f64::MIN_POSITIVE)).unwrap_or(f64::MAX)
        };
        let z_of = |mu1: f64, mu2: f64| -> Vec<f64> {
            lam.iter()
                .zip(chat)
                .zip(&gh)
                .map(|((l, c), g)| (mu1 * l * c - g) / (mu1 * l + mu2))
                .collect()
        };
        let psi = |mu2: f64| -> f64 {
            let z = z_of(mu1_of(mu2), mu2);
            dot(&z, &z) - b * b
        };
        let psi0 = dot(&ze, &ze) - b * b;
        let mu2 = match root_decreasing(psi, psi0, gn / b) {
            Some(m) => m,
            None => {
                // Cannot happen with a Slater point; fall back to the ellipsoid value (valid).
                return self.finish(ze, &gh, lower_e, (mu1_e, 0.0));
            }
        };
        let mu1 = mu1_of(mu2);
        let z = z_of(mu1, mu2);
        let (ce, cb) = self.constraints(&z);
        let dual = dot(&z, &gh) + 0.5 * mu1 * ce + 0.5 * mu2 * cb;
        // The dual value is a bound for any μ ≥ 0; never report less than the ellipsoid bound.
        let lower = dual.max(lower_e);
        self.finish(z, &gh, lower, (mu1, mu2))
    }
}
