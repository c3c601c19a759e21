//! The inner minimum `min_{θ ∈ C}⟨θ, g⟩` (`privpref::policy::inner`): closed forms (ellipsoid,
//! sum-zero slice with the centre in the plane and the general slice formula), an independent brute
//! force in 2-D (boundary curves parametrised by rays, intersection points refined by bisection)
//! for the ball-binding cases including a weakly covered direction, and KKT / weak-duality
//! certificates on random instances in higher dimension.

use privpref::feasible::FeasibleSet;
use privpref::mechanism::simulation_rng;
use privpref::policy::ConfidenceSet;
use rand_distr::{Distribution, StandardNormal};

type Rng = privpref::mechanism::SimRng;

fn normal(rng: &mut Rng, k: usize) -> Vec<f64> {
    (0..k).map(|_| StandardNormal.sample(rng)).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `M x = b` by Gaussian elimination with partial pivoting (independent of the library's eigen path).
fn solve(m: &[f64], b: &[f64]) -> Vec<f64> {
    let d = b.len();
    let mut a = m.to_vec();
    let mut x = b.to_vec();
    for c in 0..d {
        let p = (c..d)
            .max_by(|&i, &j| a[i * d + c].abs().total_cmp(&a[j * d + c].abs()))
            .unwrap();
        for j in 0..d {
            a.swap(c * d + j, p * d + j);
        }
        x.swap(c, p);
        for i in c + 1..d {
            let f = a[i * d + c] / a[c * d + c];
            for j in c..d {
                a[i * d + j] -= f * a[c * d + j];
            }
            x[i] -= f * x[c];
        }
    }
    for c in (0..d).rev() {
        let mut v = x[c];
        for j in c + 1..d {
            v -= a[c * d + j] * x[j];
        }
        x[c] = v / a[c * d + c];
    }
    x
}

fn mnorm2(m: &[f64], v: &[f64]) -> f64 {
    let d = v.len();
    (0..d).map(|i| v[i] * dot(&m[i * d..(i + 1) * d], v)).sum()
}

/// Random `Σ = (1/m)XᵀX` whose last `weak` coordinates are barely covered.
fn covariance(rng: &mut Rng, d: usize, weak: usize) -> Vec<f64> {
    let m = 50;
    let mut s = vec![0.0; d * d];
    for _ in 0..m {
        let mut x = normal(rng, d);
        for v in x.iter_mut().skip(d - weak) {
            *v *= 1e-3;
        }
        for i in 0..d {
            for j in 0..d {
                s[i * d + j] += x[i] * x[j] / m as f64;
            }
        }
    }
    s
}

fn with_lambda(s: &[f64], d: usize, lam: f64) -> Vec<f64> {
    let mut m = s.to_vec();
    for i in 0..d {
        m[i * d + i] += lam;
    }
    m
}

#[test]
fn ellipsoid_closed_form() {
    let mut rng = simulation_rng(1);
    for d in [1usize, 2, 5, 20] {
        for _ in 0..10 {
            let s = covariance(&mut rng, d, d / 3);
            let lam = 0.05;
            let m = with_lambda(&s, d, lam);
            let c = normal(&mut rng, d);
            let g = normal(&mut rng, d);
            let gamma = 0.7;
            let set = ConfidenceSet::new(&c, Some(&s), lam, gamma, FeasibleSet::Unconstrained).unwrap();
            let r = set.minimize(&g);
            let minv_g = solve(&m, &g);
            let want = dot(&c, &g) - gamma * dot(&g, &minv_g).sqrt();
            let scale = dot(&c, &g).abs() + gamma * dot(&g, &minv_g).sqrt();
            assert!((r.lower - want).abs() <= 1e-13 * scale, "{} vs {want}", r.lower);
            assert!((r.upper - want).abs() <= 1e-13 * scale, "{} vs {want}", r.upper);
            // The minimiser: θ̂ − Γ M⁻¹g/‖g‖_{M⁻¹}.
            let nrm = dot(&g, &minv_g).sqrt();
            for j in 0..d {
                let t = c[j] - gamma * minv_g[j] / nrm;
                assert!((r.theta[j] - t).abs() <= 1e-12 * (1.0 + t.abs()), "{j}");
            }
            assert!(
                mnorm2(&m, &r.theta.iter().zip(&c).map(|(a, b)| a - b).collect::<Vec<_>>())
                    <= gamma * gamma * (1.0 + 1e-12)
            );
        }
    }
}

#[test]
fn sum_zero_slice_closed_forms() {
    let mut rng = simulation_rng(2);
    for d in [2usize, 3, 6, 15] {
        for case in 0..10 {
            let s = covariance(&mut rng, d, 1);
            let lam = 0.1;
            let m = with_lambda(&s, d, lam);
            let mut c = normal(&mut rng, d);
            let in_plane = case % 2 == 0;
            if in_plane {
                let mean = c.iter().sum::<f64>() / d as f64;
                c.iter_mut().for_each(|v| *v -= mean);
            }
            let g = normal(&mut rng, d);
            let ones = vec![1.0; d];
            let minv1 = solve(&m, &ones);
            let minv_g = solve(&m, &g);
            let one_minv1 = minv1.iter().sum::<f64>();
            let s1: f64 = c.iter().sum();
            let dist2 = s1 * s1 / one_minv1;
            let gamma = (dist2 + 0.3).sqrt();
            let set = ConfidenceSet::new(&c, Some(&s), lam, gamma, FeasibleSet::SumZero).unwrap();
            assert!(set.fallback().is_none());
            let r = set.minimize(&g);
            // General slice: centre θ_c = c − M⁻¹1 (1ᵀc)/(1ᵀM⁻¹1), radius² Γ² − (1ᵀc)²/(1ᵀM⁻¹1),
            // value ⟨θ_c, g⟩ − r·sqrt(gᵀM⁻¹g − (1ᵀM⁻¹g)²/(1ᵀM⁻¹1)) (the sum-zero closed form).
            let thc: Vec<f64> = c.iter().zip(&minv1).map(|(a, b)| a - b * s1 / one_minv1).collect();
            let q = dot(&g, &minv_g) - minv_g.iter().sum::<f64>().powi(2) / one_minv1;
            let want = dot(&thc, &g) - (gamma * gamma - dist2).sqrt() * q.sqrt();
            let scale = dot(&thc, &g).abs() + gamma * q.sqrt();
            assert!(
                (r.lower - want).abs() <= 1e-12 * scale,
                "d={d} case={case}: {} vs {want}",
                r.lower
            );
            assert!((r.upper - r.lower).abs() <= 1e-12 * scale);
            assert!(r.theta.iter().sum::<f64>().abs() <= 1e-12 * (1.0 + scale));
            if in_plane {
                // The sum-zero closed form with θ̂ in the plane:
                // ⟨θ̂, g⟩ − Γ √(gᵀM⁻¹g − (1ᵀM⁻¹g)²/(1ᵀM⁻¹1)).
                let want_b = dot(&c, &g) - gamma * q.sqrt();
                assert!((r.lower - want_b).abs() <= 1e-12 * scale);
            }
        }
    }
}

/// A 2-D plane `{o + a p₁ + b p₂}` in ℝ^d and the constraints in ambient coordinates.
struct Plane2 {
    p1: Vec<f64>,
    p2: Vec<f64>,
}

struct Problem<'a> {
    c: &'a [f64],
    m: &'a [f64],
    gamma: f64,
    ball: f64,
    g: &'a [f64],
}

impl Problem<'_> {
    fn feasible(&self, th: &[f64]) -> bool {
        let dlt: Vec<f64> = th.iter().zip(self.c).map(|(a, b)| a - b).collect();
        // Points computed on a boundary curve sit on it only up to rounding: 1e-12 slack.
        mnorm2(self.m, &dlt) <= self.gamma * self.gamma * (1.0 + 1e-12)
            && dot(th, th) <= self.ball * self.ball * (1.0 + 1e-12)
    }
}

/// Brute-force minimum of ⟨g, θ⟩ over the feasible set restricted to the plane: both boundary
/// curves (ellipse slice by rays from an interior point `z0`, circle by angle) on a grid of `n`
/// points each, the best feasible point refined — on an arc by golden section, at a curve end
/// by bisection to the feasibility boundary.
fn brute_force_2d(pr: &Problem<'_>, pl: &Plane2, z0: &[f64], n: usize) -> f64 {
    let d = pr.c.len();
    let at = |a: f64, b: f64| -> Vec<f64> { (0..d).map(|j| a * pl.p1[j] + b * pl.p2[j]).collect() };
    // Ellipse point along direction t from z0.
    let ell = |t: f64| -> Vec<f64> {
        let u = at(t.cos(), t.sin());
        let w: Vec<f64> = z0.iter().zip(pr.c).map(|(a, b)| a - b).collect();
        let a = mnorm2(pr.m, &u);
        let dd = pr.m.len() / d;
        let b: f64 = (0..dd).map(|i| u[i] * dot(&pr.m[i * dd..(i + 1) * dd], &w)).sum();
        let c0 = mnorm2(pr.m, &w) - pr.gamma * pr.gamma;
        let s = (-b + (b * b - a * c0).sqrt()) / a;
        z0.iter().zip(&u).map(|(z, u)| z + s * u).collect()
    };
    let circ = |t: f64| -> Vec<f64> { at(pr.ball * t.cos(), pr.ball * t.sin()) };
    let mut best = f64::INFINITY;
    for curve in 0..2 {
        let pt = |t: f64| if curve == 0 { ell(t) } else { circ(t) };
        let h = 2.0 * std::f64::consts::PI / n as f64;
        let mut bi = None;
        let mut bv = f64::INFINITY;
        for i in 0..n {
            let th = pt(i as f64 * h);
            if pr.feasible(&th) {
                let v = dot(pr.g, &th);
                if v < bv {
                    bv = v;
                    bi = Some(i);
                }
            }
        }
        let Some(i) = bi else { continue };
        let t0 = i as f64 * h;
        let f = |t: f64| {
            let th = pt(t);
            if pr.feasible(&th) {
                dot(pr.g, &th)
            } else {
                f64::INFINITY
            }
        };
        // Golden section on [t0 − h, t0 + h] (infeasible points count as +∞).
        let (mut lo, mut hi) = (t0 - h, t0 + h);
        let gr = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..200 {
            let x1 = hi - gr * (hi - lo);
            let x2 = lo + gr * (hi - lo);
            if f(x1) <= f(x2) {
                hi = x2;
            } else {
                lo = x1;
            }
        }
        bv = bv.min(f(0.5 * (lo + hi)));
        // Bisection to the feasibility boundary towards each infeasible neighbour.
        for nb in [t0 - h, t0 + h] {
            if f(nb).is_infinite() {
                let (mut a, mut b) = (t0, nb);
                for _ in 0..200 {
                    let mid = 0.5 * (a + b);
                    if f(mid).is_finite() {
                        a = mid;
                    } else {
                        b = mid;
                    }
                }
                bv = bv.min(f(a));
            }
        }
        best = best.min(bv);
    }
    best
}

fn check_against_brute_force(sum_zero: bool, seed: u64, weak: bool) -> (f64, f64, f64, bool) {
    let mut rng = simulation_rng(seed);
    let d = if sum_zero { 3 } else { 2 };
    let s = if weak {
        // Σ covers the first direction only: the second is covered by λ alone.
        let mut s = vec![0.0; d * d];
        s[0] = 1.0;
        if sum_zero {
            // cover (1, −1, 0)/√2 only.
            s = vec![0.5, -0.5, 0.0, -0.5, 0.5, 0.0, 0.0, 0.0, 0.0];
        }
        s
    } else {
        covariance(&mut rng, d, 0)
    };
    let lam = if weak { 0.01 } else { 0.2 };
    let m = with_lambda(&s, d, lam);
    let ball = 1.0;
    let mut c = normal(&mut rng, d);
    if sum_zero {
        let mean = c.iter().sum::<f64>() / d as f64;
        c.iter_mut().for_each(|v| *v -= mean);
    }
    let cn = dot(&c, &c).sqrt();
    c.iter_mut().for_each(|v| *v *= 0.6 / cn);
    // Γ ≥ 2B√λ as in the explicit radii: the ellipsoid leaves the ball along weak directions.
    let gamma = if weak { 2.0 * ball * lam.sqrt() * 1.5 } else { 0.5 };
    let g = if weak {
        // Aim at the weakly covered direction.
        if sum_zero {
            let mut g = vec![1.0, 1.0, -2.0];
            g[0] += 0.3 * normal(&mut rng, 1)[0];
            g
        } else {
            vec![0.2 * normal(&mut rng, 1)[0], 1.0]
        }
    } else {
        normal(&mut rng, d)
    };
    let set_kind = if sum_zero {
        FeasibleSet::theta_b(ball).unwrap()
    } else {
        FeasibleSet::ball(ball).unwrap()
    };
    let set = ConfidenceSet::new(&c, Some(&s), lam, gamma, set_kind).unwrap();
    assert!(set.fallback().is_none());
    let r = set.minimize(&g);
    let ell_only = set.ellipsoid_value(&g);
    let (p1, p2) = if sum_zero {
        let a = [1.0, -1.0, 0.0].map(|v: f64| v / 2f64.sqrt()).to_vec();
        let b = [1.0, 1.0, -2.0].map(|v: f64| v / 6f64.sqrt()).to_vec();
        (a, b)
    } else {
        (vec![1.0, 0.0], vec![0.0, 1.0])
    };
    // Interior point: c itself is in the plane and inside the ball (‖c‖ = 0.6 < 1).
    let pr = Problem {
        c: &c,
        m: &m,
        gamma,
        ball,
        g: &g,
    };
    let bf = brute_force_2d(&pr, &Plane2 { p1, p2 }, &c, 200_000);
    // The returned point is feasible (checked in ambient coordinates) and attains `upper`.
    let slack: Vec<f64> = r.theta.iter().zip(&c).map(|(a, b)| a - b).collect();
    assert!(mnorm2(&m, &slack) <= gamma * gamma * (1.0 + 1e-13));
    assert!(dot(&r.theta, &r.theta) <= ball * ball * (1.0 + 1e-13));
    assert!(!sum_zero || r.theta.iter().sum::<f64>().abs() <= 1e-14);
    assert!((dot(&g, &r.theta) - r.upper).abs() <= 1e-14);
    (r.lower, r.upper, bf, r.ball_active && ell_only < r.lower - 1e-9)
}

#[test]
fn ball_binding_matches_brute_force() {
    let mut active = 0;
    for seed in 0..24 {
        for sum_zero in [false, true] {
            let (lo, up, bf, _) = check_against_brute_force(sum_zero, 100 + seed, false);
            let scale = bf.abs().max(1.0);
            assert!(lo <= up + 1e-15, "certificate order");
            assert!(
                (lo - bf).abs() <= 1e-9 * scale,
                "seed {seed} sz {sum_zero}: lower {lo} brute {bf}"
            );
            assert!(
                (up - bf).abs() <= 1e-9 * scale,
                "seed {seed} sz {sum_zero}: upper {up} brute {bf}"
            );
            active += 1;
        }
    }
    assert_eq!(active, 48);
}

#[test]
fn ball_binds_along_weakly_covered_directions() {
    for seed in 0..12 {
        for sum_zero in [false, true] {
            let (lo, up, bf, binds) = check_against_brute_force(sum_zero, 300 + seed, true);
            assert!(
                binds,
                "seed {seed} sz {sum_zero}: the ball should bind and beat the ellipsoid-only value"
            );
            assert!((lo - bf).abs() <= 1e-9 * bf.abs().max(1.0), "seed {seed}: {lo} vs {bf}");
            assert!((up - bf).abs() <= 1e-9 * bf.abs().max(1.0), "seed {seed}: {up} vs {bf}");
        }
    }
}

/// KKT of the returned point with its multipliers: `P(g + μ₁M(θ − c) + μ₂θ) = 0`, complementary
/// slackness, feasibility, and `upper − lower` at the rounding level, on random instances up to
/// d = 40 where the ball often binds.
#[test]
fn kkt_certificates_in_higher_dimension() {
    let mut rng = simulation_rng(7);
    let mut both = 0;
    for d in [3usize, 8, 20, 40] {
        for case in 0..25 {
            let sum_zero = case % 2 == 1;
            let s = covariance(&mut rng, d, d / 2);
            let lam = 0.02;
            let m = with_lambda(&s, d, lam);
            let mut c = normal(&mut rng, d);
            if sum_zero {
                let mean = c.iter().sum::<f64>() / d as f64;
                c.iter_mut().for_each(|v| *v -= mean);
            }
            let cn = dot(&c, &c).sqrt();
            c.iter_mut().for_each(|v| *v *= 0.7 / cn);
            let gamma = 0.5;
            let kind = if sum_zero {
                FeasibleSet::theta_b(1.0).unwrap()
            } else {
                FeasibleSet::ball(1.0).unwrap()
            };
            let set = ConfidenceSet::new(&c, Some(&s), lam, gamma, kind).unwrap();
            let g = normal(&mut rng, d);
            let r = set.minimize(&g);
            let (mu1, mu2) = r.multipliers;
            let th = &r.theta;
            let dlt: Vec<f64> = th.iter().zip(&c).map(|(a, b)| a - b).collect();
            let mut res: Vec<f64> = (0..d)
                .map(|i| g[i] + mu1 * dot(&m[i * d..(i + 1) * d], &dlt) + mu2 * th[i])
                .collect();
            if sum_zero {
                let mean = res.iter().sum::<f64>() / d as f64;
                res.iter_mut().for_each(|v| *v -= mean);
                assert!(th.iter().sum::<f64>().abs() < 1e-12);
            }
            let gn = dot(&g, &g).sqrt();
            let rn = dot(&res, &res).sqrt();
            assert!(rn <= 1e-8 * gn, "d={d} case={case}: KKT residual {rn:e}");
            let ce = mnorm2(&m, &dlt) - gamma * gamma;
            let cb = dot(th, th) - 1.0;
            assert!(ce <= 1e-12 && cb <= 1e-12, "feasibility {ce:e} {cb:e}");
            if mu1 > 0.0 {
                assert!(ce.abs() <= 1e-8, "slackness (ellipsoid) {ce:e}");
            }
            if mu2 > 0.0 {
                assert!(cb.abs() <= 1e-8, "slackness (ball) {cb:e}");
            }
            if mu1 > 0.0 && mu2 > 0.0 {
                both += 1;
            }
            assert!(
                r.upper - r.lower <= 1e-12 * (1.0 + r.lower.abs()),
                "gap {:e}",
                r.upper - r.lower
            );
            assert!(r.lower >= set.ellipsoid_value(&g) - 1e-12);
        }
    }
    assert!(both >= 10, "only {both} cases with both constraints active");
}

#[test]
fn empty_intersections_fall_back() {
    // θ̂ far outside the ball with a small radius: the ball misses the ellipsoid.
    let c = [3.0, 0.0];
    let set = ConfidenceSet::new(&c, None, 1.0, 0.5, FeasibleSet::ball(1.0).unwrap()).unwrap();
    assert!(set.fallback().unwrap().contains("ball misses"), "{:?}", set.fallback());
    assert_eq!(set.used_set(), FeasibleSet::Unconstrained);
    // θ̂ off the plane by more than Γ (M = I: distance |1ᵀc|/√d).
    let c = [1.0, 1.0, 1.0];
    let set = ConfidenceSet::new(&c, None, 1.0, 0.5, FeasibleSet::theta_b(10.0).unwrap()).unwrap();
    assert!(set.fallback().unwrap().contains("plane misses"));
    assert_eq!(set.used_set(), FeasibleSet::Unconstrained);
    // Invalid inputs are typed errors.
    assert!(ConfidenceSet::new(&[1.0, 2.0], None, 0.0, 1.0, FeasibleSet::Unconstrained).is_err());
    assert!(ConfidenceSet::new(&[1.0, f64::NAN], None, 1.0, 1.0, FeasibleSet::Unconstrained).is_err());
    assert!(ConfidenceSet::new(&[1.0, 2.0], None, 1.0, -1.0, FeasibleSet::Unconstrained).is_err());
    assert!(ConfidenceSet::new(&[1.0, 2.0], Some(&[1.0]), 1.0, 1.0, FeasibleSet::Unconstrained).is_err());
}
