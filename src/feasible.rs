//! Feasible sets and their exact Euclidean projections.
//!
//! `Θ_B = {θ : 1ᵀθ = 0, ‖θ‖₂ ≤ B}` is the parameter set of Chowdhury, Zhou & Natarajan (2024)
//! (Assumption 2.1). Its
//! projection is exact in closed form: centre first, then shrink radially,
//! `Π(v) = Pv · min(1, B/‖Pv‖)` with `P = I − 11ᵀ/d` (the ball's centre lies in the subspace, so
//! the radial shrink of `Pv` is the nearest point; shrink-then-centre would be wrong).

use crate::error::{check_radius, Result};
use std::fmt;

/// The radius `B` of a norm ball: finite and at least [`f64::MIN_POSITIVE`] (`2^−1022`, the
/// smallest normal double), checked once by [`Radius::new`] (the only way to build one), so a
/// [`FeasibleSet`] never holds a radius that would turn a projection into NaN (`B < 0` or NaN),
/// leave the set unbounded (`B = ∞`), or have too few significant bits for the projection and
/// the certificate (a subnormal `B`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Radius(f64);

impl Radius {
    /// A validated radius.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) named `radius` unless `r` is finite
    /// and `≥ f64::MIN_POSITIVE`.
    pub fn new(r: f64) -> Result<Self> {
        check_radius(r)?;
        if r < f64::MIN_POSITIVE {
            return Err(crate::Error::param(
                "radius",
                format!("must be at least {:e} (a normal double; a subnormal radius has too few significant bits), got {r:e}", f64::MIN_POSITIVE),
            ));
        }
        Ok(Radius(r))
    }
    /// The value `B`.
    #[inline]
    pub fn get(self) -> f64 {
        self.0
    }
}

impl From<Radius> for f64 {
    fn from(r: Radius) -> f64 {
        r.0
    }
}

impl TryFrom<f64> for Radius {
    type Error = crate::Error;
    fn try_from(r: f64) -> Result<Self> {
        Radius::new(r)
    }
}

impl fmt::Display for Radius {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The set `θ` is constrained to. See the module docs. The bounded sets hold a validated
/// [`Radius`]; build them with [`FeasibleSet::theta_b`], [`FeasibleSet::ball`] (from an `f64`)
/// or the variants with a [`Radius`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum FeasibleSet {
    /// `Θ_B = {1ᵀθ = 0, ‖θ‖ ≤ radius}` (the paper's set; CLI `theta-b`).
    ThetaB {
        /// `B` (finite, `> 0`).
        radius: Radius,
    },
    /// `{‖θ‖ ≤ radius}` (CLI `ball`).
    Ball {
        /// `B` (finite, `> 0`).
        radius: Radius,
    },
    /// `{1ᵀθ = 0}` without a norm bound (CLI `sum-zero`).
    SumZero,
    /// `ℝ^d` (CLI `none`). Losses that are unbounded below, or data without a finite
    /// minimiser, end with [`Termination::NoMinimizer`](crate::solver::Termination).
    Unconstrained,
}

/// `{"constraint": name, "radius": B or null}`, the CLI's keys.
#[cfg(feature = "serde")]
impl serde::Serialize for FeasibleSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("constraint", self.name())?;
        m.serialize_entry("radius", &self.radius())?;
        m.end()
    }
}

impl FeasibleSet {
    /// `Θ_B` with a validated radius.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) named `radius` unless `radius` is
    /// finite and `> 0`.
    pub fn theta_b(radius: f64) -> Result<Self> {
        Ok(FeasibleSet::ThetaB {
            radius: Radius::new(radius)?,
        })
    }
    /// The centred ball with a validated radius.
    ///
    /// # Errors
    /// As [`FeasibleSet::theta_b`].
    pub fn ball(radius: f64) -> Result<Self> {
        Ok(FeasibleSet::Ball {
            radius: Radius::new(radius)?,
        })
    }
    /// Parses the CLI name (`theta-b`, `ball`, `sum-zero`, `none`); `radius` is required by
    /// (and only allowed for) the bounded sets.
    pub fn parse(name: &str, radius: Option<f64>) -> Result<Self> {
        use crate::error::Error;
        let need =
            |r: Option<f64>| r.ok_or_else(|| Error::param("radius", format!("constraint `{name}` needs --radius")));
        match name {
            "theta-b" => FeasibleSet::theta_b(need(radius)?),
            "ball" => FeasibleSet::ball(need(radius)?),
            "sum-zero" | "none" => {
                if let Some(r) = radius {
                    return Err(Error::param(
                        "radius",
                        format!("constraint `{name}` takes no radius (got {r})"),
                    ));
                }
                Ok(if name == "none" {
                    FeasibleSet::Unconstrained
                } else {
                    FeasibleSet::SumZero
                })
            }
            other => Err(Error::param(
                "constraint",
                format!("unknown constraint `{other}` (expected theta-b, ball, sum-zero or none)"),
            )),
        }
    }
    /// [`parse`](Self::parse) with the default of the CLI and the Python `fit`: a named
    /// constraint as given; none named, `Θ_B` (`theta-b`) when a radius is given and the
    /// unconstrained set (`none`) when not. So `radius = 2` alone means `Θ_B = {Σθ = 0, ‖θ‖ ≤ 2}`.
    pub fn parse_default(name: Option<&str>, radius: Option<f64>) -> Result<Self> {
        let name = name.unwrap_or(if radius.is_some() { "theta-b" } else { "none" });
        Self::parse(name, radius)
    }
    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            FeasibleSet::ThetaB { .. } => "theta-b",
            FeasibleSet::Ball { .. } => "ball",
            FeasibleSet::SumZero => "sum-zero",
            FeasibleSet::Unconstrained => "none",
        }
    }
    /// Whether `1ᵀθ = 0` is imposed.
    pub fn sum_zero(&self) -> bool {
        matches!(self, FeasibleSet::ThetaB { .. } | FeasibleSet::SumZero)
    }
    /// The ball radius `B`, if bounded (finite and `> 0`).
    pub fn radius(&self) -> Option<f64> {
        self.bound().map(Radius::get)
    }
    /// The ball radius as a [`Radius`], if bounded.
    pub fn bound(&self) -> Option<Radius> {
        match *self {
            FeasibleSet::ThetaB { radius } | FeasibleSet::Ball { radius } => Some(radius),
            _ => None,
        }
    }
    /// Projects `v` onto the set in place (exact; see the module docs).
    pub fn project(&self, v: &mut [f64]) {
        if self.sum_zero() {
            center(v);
        }
        if let Some(b) = self.radius() {
            let nrm = norm(v);
            if nrm > b {
                let s = b / nrm;
                v.iter_mut().for_each(|x| *x *= s);
            }
        }
    }
    /// Whether `v` lies in the set up to `tol` (absolute, on `|1ᵀv|/√d` and `‖v‖ − B`).
    pub fn contains(&self, v: &[f64], tol: f64) -> bool {
        let sum_ok = !self.sum_zero() || v.iter().sum::<f64>().abs() / (v.len() as f64).sqrt() <= tol;
        let ball_ok = self.radius().is_none_or(|b| norm(v) <= b + tol);
        sum_ok && ball_ok
    }
    /// The KKT (projected-gradient) residual `‖θ − Π(θ − g)‖₂`: zero exactly at the
    /// minimisers of a convex objective with gradient `g` over the set.
    ///
    /// Evaluated without cancellation when the projection does not clip: then
    /// `θ − Π(θ − g) = Pg + (θ − Pθ)` (`P` the centring projector, or `I`), so a gradient far
    /// below the rounding level of `θ` is still measured rather than absorbed into `θ − g`.
    pub fn kkt_residual(&self, theta: &[f64], grad: &[f64]) -> f64 {
        let mut pz: Vec<f64> = theta.iter().zip(grad).map(|(t, g)| t - g).collect();
        if self.sum_zero() {
            center(&mut pz);
        }
        if let Some(b) = self.radius() {
            let nz = norm(&pz);
            if nz > b {
                let s = b / nz;
                return theta
                    .iter()
                    .zip(&pz)
                    .map(|(t, z)| (t - s * z) * (t - s * z))
                    .sum::<f64>()
                    .sqrt();
            }
        }
        let mut pg = grad.to_vec();
        let mut pt = theta.to_vec();
        if self.sum_zero() {
            center(&mut pg);
            center(&mut pt);
        }
        pg.iter()
            .zip(theta.iter().zip(&pt))
            .map(|(g, (t, p))| g + (t - p))
            .map(|r| r * r)
            .sum::<f64>()
            .sqrt()
    }
}

/// `v ← v − mean(v)·1`.
pub fn center(v: &mut [f64]) {
    if v.is_empty() {
        return;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    v.iter_mut().for_each(|x| *x -= m);
}

pub use crate::math::norm;

/// The orthonormal Helmert basis `U` (`d × (d−1)`) of the subspace `{1ᵀθ = 0}`:
/// column `k` (1-based) is `(1,…,1, −k, 0,…,0)/√(k(k+1))` with `k` ones. `θ = Uu` gives
/// `‖θ‖ = ‖u‖`; products with `U` and `Uᵀ` cost O(d).
pub mod helmert {
    #[inline]
    fn c(k: usize) -> f64 {
        1.0 / ((k * (k + 1)) as f64).sqrt()
    }
    /// `θ = U u` (`u` has `d − 1` entries, `θ` has `d`).
    pub fn apply(u: &[f64], theta: &mut [f64]) {
        let m = u.len();
        assert_eq!(theta.len(), m + 1);
        let mut suffix = 0.0; // Σ_{k > j} u_k c_k
        for j in (0..=m).rev() {
            let own = if j >= 1 { -(j as f64) * u[j - 1] * c(j) } else { 0.0 };
            theta[j] = own + suffix;
            if j >= 1 {
                suffix += u[j - 1] * c(j);
            }
        }
    }
    /// `u = Uᵀ θ`.
    pub(crate) fn apply_t(theta: &[f64], u: &mut [f64]) {
        let m = u.len();
        assert_eq!(theta.len(), m + 1);
        let mut prefix = 0.0; // Σ_{i < k} θ_i
        for k in 1..=m {
            prefix += theta[k - 1];
            u[k - 1] = (prefix - k as f64 * theta[k]) * c(k);
        }
    }
    /// `Uᵀ H U` for a symmetric column-major `d × d` matrix `h`, written column-major into
    /// `out` (`(d−1) × (d−1)`).
    pub fn reduce(h: &[f64], d: usize, out: &mut [f64]) {
        let m = d - 1;
        assert_eq!(h.len(), d * d);
        assert_eq!(out.len(), m * m);
        // T = Uᵀ H (m × d): column j of T is Uᵀ (column j of H).
        let mut t = vec![0.0; m * d];
        for j in 0..d {
            apply_t(&h[j * d..(j + 1) * d], &mut t[j * m..(j + 1) * m]);
        }
        // out = T U = (Uᵀ Tᵀ)ᵀ: row i of out is Uᵀ (row i of T).
        let mut row = vec![0.0; d];
        let mut red = vec![0.0; m];
        for i in 0..m {
            for j in 0..d {
                row[j] = t[j * m + i];
            }
            apply_t(&row, &mut red);
            for k in 0..m {
                out[k * m + i] = red[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_examples_spec_1_2() {
        let s6 = 6f64.sqrt();
        let mut v = [3.0, 0.0, 0.0];
        FeasibleSet::theta_b(1.0).unwrap().project(&mut v);
        for (a, b) in v.iter().zip([2.0 / s6, -1.0 / s6, -1.0 / s6]) {
            assert!((a - b).abs() < 1e-15);
        }
        let mut v = [1.0, 2.0, 3.0];
        FeasibleSet::theta_b(10.0).unwrap().project(&mut v);
        assert_eq!(v, [-1.0, 0.0, 1.0]);
        let mut v = [1.0, 2.0, 3.0];
        FeasibleSet::theta_b(0.5).unwrap().project(&mut v);
        let s = 1.0 / (2.0 * 2f64.sqrt());
        for (a, b) in v.iter().zip([-s, 0.0, s]) {
            assert!((a - b).abs() < 1e-15);
        }
        // d = 1 with sum-zero: the set is {0}.
        let mut v = [5.0];
        FeasibleSet::theta_b(1.0).unwrap().project(&mut v);
        assert_eq!(v, [0.0]);
    }

    #[test]
    fn projection_is_nearest_point_against_brute_force() {
        // Brute force: sample many feasible points; none may be closer than the projection.
        let mut state = 12345u64;
        let mut rnd = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        for set in [
            FeasibleSet::theta_b(0.7).unwrap(),
            FeasibleSet::ball(0.7).unwrap(),
            FeasibleSet::SumZero,
        ] {
            for _ in 0..20 {
                let v: Vec<f64> = (0..4).map(|_| 2.0 * rnd()).collect();
                let mut p = v.clone();
                set.project(&mut p);
                assert!(set.contains(&p, 1e-12));
                let dist = |z: &[f64]| z.iter().zip(&v).map(|(a, b)| (a - b) * (a - b)).sum::<f64>();
                let dp = dist(&p);
                for _ in 0..2000 {
                    let mut z: Vec<f64> = (0..4).map(|_| rnd()).collect();
                    set.project(&mut z);
                    assert!(dist(&z) >= dp - 1e-12);
                }
            }
        }
    }

    #[test]
    fn kkt_residual_measures_gradients_below_the_rounding_of_theta() {
        let theta = [0.5, -0.25, -0.25]; // exactly sum-zero in binary
        let g = [3e-18, -1e-18, -2e-18];
        let r = FeasibleSet::theta_b(2.0).unwrap().kkt_residual(&theta, &g);
        let want = (9e-36f64 + 1e-36 + 4e-36).sqrt();
        assert!((r - want).abs() <= 1e-3 * want, "{r} vs {want}");
        // Boundary: the clipped projection; a gradient along θ is absorbed by the multiplier.
        let t = [0.6, -0.8];
        assert!(FeasibleSet::ball(1.0).unwrap().kkt_residual(&t, &[-0.6, 0.8]) < 1e-15);
        assert!(FeasibleSet::ball(1.0).unwrap().kkt_residual(&t, &[0.8, 0.6]) > 0.5);
    }

    #[test]
    fn helmert_is_orthonormal_basis() {
        for d in [2usize, 3, 7] {
            let m = d - 1;
            // Columns: U e_k.
            let mut cols = vec![vec![0.0; d]; m];
            for (k, col) in cols.iter_mut().enumerate() {
                let mut e = vec![0.0; m];
                e[k] = 1.0;
                helmert::apply(&e, col);
                assert!(col.iter().sum::<f64>().abs() < 1e-15);
            }
            for a in 0..m {
                for b in 0..m {
                    let ip: f64 = cols[a].iter().zip(&cols[b]).map(|(x, y)| x * y).sum();
                    assert!((ip - if a == b { 1.0 } else { 0.0 }).abs() < 1e-15);
                }
            }
            // apply_t is the transpose and reduce matches UᵀHU.
            let h: Vec<f64> = (0..d * d).map(|i| ((i * 7 % 11) as f64) - 5.0).collect();
            let hs: Vec<f64> = (0..d * d).map(|i| h[i] + h[(i % d) * d + i / d]).collect(); // symmetric
            let mut red = vec![0.0; m * m];
            helmert::reduce(&hs, d, &mut red);
            for a in 0..m {
                for b in 0..m {
                    let mut hb = vec![0.0; d];
                    for i in 0..d {
                        hb[i] = (0..d).map(|j| hs[j * d + i] * cols[b][j]).sum();
                    }
                    let want: f64 = cols[a].iter().zip(&hb).map(|(x, y)| x * y).sum();
                    assert!((red[b * m + a] - want).abs() < 1e-12, "d={d} a={a} b={b}");
                }
            }
        }
    }
}
