//! The probit losses for randomized-response labels (`probit-rr`, `debiased-probit`; Chowdhury,
//! Zhou & Natarajan (2024), Sec. 4.4): values against an independent `erfc` evaluation,
//! derivatives against finite differences and closed forms, the tails, unbiasedness of the
//! debiased loss by exact enumeration over `ỹ`, the convexity certificates, the fit's typed
//! errors, and consistency of both estimators at `n = 2e5`, `ε = 1`.

use privpref::data::PairwiseView;
use privpref::estimator::{fit, fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Loss, LossSpec, Probit, ProbitRrDebiased, ProbitRrNoisyChannel};
use privpref::mechanism::{simulation_rng, RandomizedResponse};
use privpref::privacy::NoiseRng;
use privpref::sim::{theta_star, thurstone_pairs};
use privpref::Error;

const EPS: [f64; 5] = [0.1, 0.5, 1.0, 3.0, 8.0];

/// `Φ(s)` from libm's `erfc` (independent of the library's continued fractions).
fn cdf(s: f64) -> f64 {
    0.5 * libm::erfc(-s / std::f64::consts::SQRT_2)
}

fn pdf(s: f64) -> f64 {
    (-0.5 * s * s).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// RR keep/flip probabilities written as `e^ε/(1+e^ε)`, `1/(1+e^ε)`.
fn keep_flip(eps: f64) -> (f64, f64) {
    let e = eps.exp();
    (e / (1.0 + e), 1.0 / (1.0 + e))
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// Central difference with Richardson extrapolation (error O(h⁴)).
fn fd(f: impl Fn(f64) -> f64, t: f64, h: f64) -> f64 {
    let d = |h: f64| (f(t + h) - f(t - h)) / (2.0 * h);
    (4.0 * d(h / 2.0) - d(h)) / 3.0
}

fn grid() -> Vec<f64> {
    let mut g: Vec<f64> = (-80..=80).map(|i| i as f64 * 0.25).collect();
    g.extend([-37.5, -30.0, -25.0, 25.0, 30.0]);
    g
}

#[test]
fn noisy_channel_value_and_derivatives() {
    for eps in EPS {
        let l = ProbitRrNoisyChannel::new(eps).unwrap();
        let (keep, flip) = keep_flip(eps);
        for t in grid() {
            for y in [0u8, 1] {
                let s = if y == 1 { t } else { -t };
                // P(ỹ = y | t) = (1 − ρ)Φ(s) + ρ(1 − Φ(s)), ρ = 1/(1 + e^ε).
                let p = keep * cdf(s) + flip * (1.0 - cdf(s));
                let v = l.value(t, y);
                assert!(rel(v, -p.ln()) < 1e-12, "eps {eps} t {t} y {y}: {v} vs {}", -p.ln());
                // ℓ' = −(2y−1)(σ_ε − σ̄_ε)φ(s)/p.
                let g = -(2.0 * y as f64 - 1.0) * (keep - flip) * pdf(s) / p;
                let d1 = l.d1(t, y);
                assert!(
                    (d1 - g).abs() <= 1e-12 * g.abs() + 1e-300,
                    "d1 eps {eps} t {t}: {d1} vs {g}"
                );
                // ℓ'' by differences of ℓ' (scale-free: relative to |ℓ'| nearby).
                let h = 1e-3;
                let d2 = l.d2(t, y);
                let num = fd(|u| l.d1(u, y), t, h);
                let scale = d1.abs().max(l.d1(t + h, y).abs()).max(d2.abs());
                assert!(
                    (d2 - num).abs() <= 1e-7 * scale + 1e-300,
                    "d2 eps {eps} t {t} y {y}: {d2} vs {num}"
                );
            }
            // A proper likelihood: the two labels' probabilities add to 1.
            let total = (-l.value(t, 1)).exp() + (-l.value(t, 0)).exp();
            assert!((total - 1.0).abs() < 1e-14, "eps {eps} t {t}: {total}");
        }
    }
}

#[test]
fn debiased_value_and_derivatives() {
    for eps in EPS {
        let l = ProbitRrDebiased::new(eps).unwrap();
        let (keep, flip) = keep_flip(eps);
        for t in grid().into_iter().filter(|t| t.abs() <= 25.0) {
            for y in [0u8, 1] {
                // ℓ̂ = −(ỹ − σ̄)log Φ(t) − (σ − ỹ)log Φ(−t).
                let yf = y as f64;
                let want = -(yf - flip) * cdf(t).ln() - (keep - yf) * cdf(-t).ln();
                let v = l.value(t, y);
                assert!(
                    (v - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "eps {eps} t {t} y {y}: {v} vs {want}"
                );
                let h = 1e-3 * t.abs().max(1.0);
                let d1 = l.d1(t, y);
                let n1 = fd(|u| l.value(u, y), t, h);
                assert!(
                    (d1 - n1).abs() <= 1e-7 * d1.abs().max(1.0),
                    "d1 eps {eps} t {t}: {d1} vs {n1}"
                );
                let d2 = l.d2(t, y);
                let n2 = fd(|u| l.d1(u, y), t, h);
                assert!(
                    (d2 - n2).abs() <= 1e-7 * d1.abs().max(1.0),
                    "d2 eps {eps} t {t}: {d2} vs {n2}"
                );
            }
        }
    }
}

#[test]
fn tails_are_finite_and_tend_to_their_limits() {
    for eps in EPS {
        let nc = ProbitRrNoisyChannel::new(eps).unwrap();
        let db = ProbitRrDebiased::new(eps).unwrap();
        let (keep, flip) = keep_flip(eps);
        for t in [10.0, 40.0, 1e3, 1e5, 1e150] {
            for sgn in [-1.0, 1.0] {
                let t = sgn * t;
                for y in [0u8, 1] {
                    for (name, v) in [
                        ("nc value", nc.value(t, y)),
                        ("nc d1", nc.d1(t, y)),
                        ("nc d2", nc.d2(t, y)),
                        ("db value", db.value(t, y)),
                        ("db d1", db.d1(t, y)),
                        ("db d2", db.d2(t, y)),
                    ] {
                        assert!(v.is_finite(), "{name} at eps {eps}, t {t}, y {y}: {v}");
                    }
                    let s = if y == 1 { t } else { -t };
                    // Noisy channel: ℓ → −log σ_ε (s → ∞) or −log σ̄_ε (s → −∞).
                    if s.abs() >= 40.0 {
                        let lim = if s > 0.0 { -keep.ln() } else { -flip.ln() };
                        assert!(rel(nc.value(t, y), lim) < 1e-12, "nc limit eps {eps} t {t}");
                    }
                    // Debiased: the σ_ε P(s) term dominates for s → −∞, −σ̄_ε P(−s) for s → ∞,
                    // with P(−x) = x²/2 + log x + ½ log 2π + o(1), ℓ̂' → (2y−1)·(−σ̄|s|·sign…).
                    if s.abs() >= 1e3 && s.abs() <= 1e5 {
                        let x = s.abs();
                        let p_far = 0.5 * x * x + x.ln() + 0.5 * (2.0 * std::f64::consts::PI).ln();
                        let want = if s < 0.0 { keep * p_far } else { -flip * p_far };
                        assert!(
                            rel(db.value(t, y), want) < 1e-9,
                            "db tail eps {eps} t {t}: {} vs {want}",
                            db.value(t, y)
                        );
                        // ℓ̂'' → σ_ε·1 for s → −∞ (A → 1 there, A(−s) → 0), → −σ̄_ε for s → ∞.
                        let d2 = if s < 0.0 { keep } else { -flip };
                        assert!((db.d2(t, y) - d2).abs() < 1e-5, "db d2 tail eps {eps} t {t}");
                    }
                }
            }
        }
    }
}

#[test]
fn debiased_is_unbiased_by_enumeration() {
    // E_ỹ[ℓ̂(t; ỹ) | y] = c_ε ℓ_probit(t; y), and the same for ℓ̂' and ℓ̂'' (the SGD-RR gradient
    // of the paper: E[ĝ] = (2σ(ε) − 1) g), by summing over ỹ ∈ {0, 1}.
    for eps in [0.05, 0.3, 1.0, 2.0, 5.0, 12.0] {
        let l = ProbitRrDebiased::new(eps).unwrap();
        let (keep, flip) = keep_flip(eps);
        let c = keep - flip;
        for t in (-60..=60).map(|i| i as f64 * 0.2) {
            for y in [0u8, 1] {
                let p = |yt: u8| if yt == y { keep } else { flip };
                let e = |f: &dyn Fn(u8) -> f64| p(0) * f(0) + p(1) * f(1);
                for (what, got, want, scale) in [
                    (
                        "value",
                        e(&|yt| l.value(t, yt)),
                        c * Probit.value(t, y),
                        Probit.value(t, y).abs().max(1.0),
                    ),
                    (
                        "d1",
                        e(&|yt| l.d1(t, yt)),
                        c * Probit.d1(t, y),
                        Probit.d1(t, y).abs().max(1.0),
                    ),
                    ("d2", e(&|yt| l.d2(t, yt)), c * Probit.d2(t, y), 1.0),
                ] {
                    assert!(
                        (got - want).abs() <= 1e-13 * scale,
                        "{what} eps {eps} t {t} y {y}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn convexity_certificates() {
    let grid = |tmax: f64| (0..=400).map(move |i| -tmax + 2.0 * tmax * i as f64 / 400.0);
    for eps in [0.1, 0.5, 1.0, 2.0, 4.0] {
        let db = ProbitRrDebiased::new(eps).unwrap();
        let nc = ProbitRrNoisyChannel::new(eps).unwrap();
        for tmax in [0.01, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0] {
            // Debiased: the certificate is exact (σ_ε A(T) ≥ σ̄_ε A(−T)).
            let min_db = grid(tmax)
                .flat_map(|t| [db.d2(t, 0), db.d2(t, 1)])
                .fold(f64::INFINITY, f64::min);
            assert_eq!(
                db.convex_on(tmax),
                min_db >= 0.0,
                "debiased eps {eps} T {tmax}: min ℓ̂'' {min_db}"
            );
            // Noisy channel: sufficient only.
            if nc.convex_on(tmax) {
                let min_nc = grid(tmax)
                    .flat_map(|t| [nc.d2(t, 0), nc.d2(t, 1)])
                    .fold(f64::INFINITY, f64::min);
                assert!(min_nc >= 0.0, "noisy channel eps {eps} T {tmax}: min ℓ'' {min_nc}");
            }
        }
        // Both are non-convex somewhere: the noisy channel in its left tail, ...
        assert!(nc.d2(-6.0, 1) < 0.0 && nc.d2(6.0, 0) < 0.0);
        // ... the debiased loss where σ_ε A(s) < σ̄_ε A(−s): A(s) → 0 for s → ∞.
        assert!(db.d2(6.0, 1) < 0.0 && db.d2(-6.0, 0) < 0.0);
    }
    // Worked values (independent erfc evaluation of A = h(s + h), h = φ/Φ): ε = 0.5, ỹ = 1.
    let a = |s: f64| {
        let h = pdf(s) / cdf(s);
        h * (s + h)
    };
    let (keep, flip) = keep_flip(0.5);
    let db = ProbitRrDebiased::new(0.5).unwrap();
    for s in [1.0, 3.0] {
        let want = keep * a(s) - flip * a(-s);
        assert!(
            want < 0.0 && (db.d2(s, 1) - want).abs() < 1e-13,
            "s {s}: {} vs {want}",
            db.d2(s, 1)
        );
    }
}

#[test]
fn spec_names_and_typed_errors() {
    assert_eq!(
        LossSpec::parse("probit-rr", Some(1.0)).unwrap(),
        LossSpec::ProbitRr { eps: 1.0 }
    );
    assert_eq!(
        LossSpec::parse("debiased-probit", Some(0.5)).unwrap(),
        LossSpec::DebiasedProbit { eps: 0.5 }
    );
    assert_eq!(LossSpec::ProbitRr { eps: 1.0 }.name(), "probit-rr");
    assert_eq!(LossSpec::DebiasedProbit { eps: 1.0 }.eps(), Some(1.0));
    for bad in [None, Some(0.0), Some(f64::NAN), Some(-1.0)] {
        assert!(matches!(
            LossSpec::parse("probit-rr", bad),
            Err(Error::InvalidParam { .. })
        ));
        assert!(matches!(
            LossSpec::parse("debiased-probit", bad),
            Err(Error::InvalidParam { .. })
        ));
    }
    assert!(matches!(
        ProbitRrNoisyChannel::new(0.0),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        ProbitRrDebiased::new(f64::INFINITY),
        Err(Error::InvalidParam { .. })
    ));

    let theta = theta_star(3, 1.0, false, &mut simulation_rng(3)).unwrap();
    let data = thurstone_pairs(500, &theta, &mut simulation_rng(4)).unwrap();
    let labels = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(9))
        .unwrap();
    let view = PairwiseView::new(&data.x, data.n, data.d, labels.labels(), None).unwrap();
    // Another ε than the labels': a provenance mismatch, for both losses.
    for spec in [LossSpec::ProbitRr { eps: 2.0 }, LossSpec::DebiasedProbit { eps: 2.0 }] {
        let opts = FitOptions::new(spec, FeasibleSet::ball(3.0).unwrap());
        assert!(matches!(
            fit_privatized(view, &labels, &opts),
            Err(Error::ProvenanceMismatch { .. })
        ));
    }
    // The debiased probit loss is unbounded below and not convex: a bounded set is required.
    let free = FeasibleSet::parse("none", None).unwrap();
    let opts = FitOptions::new(LossSpec::DebiasedProbit { eps: 1.0 }, free);
    assert!(matches!(
        fit_privatized(view, &labels, &opts),
        Err(Error::InvalidParam { name: "constraint", .. })
    ));
    assert!(matches!(
        fit(view, &opts),
        Err(Error::InvalidParam { name: "constraint", .. })
    ));
    // At the labels' ε the guarantee is attached.
    let opts = FitOptions::new(LossSpec::ProbitRr { eps: 1.0 }, FeasibleSet::ball(3.0).unwrap());
    let m = fit_privatized(view, &labels, &opts).unwrap();
    assert_eq!(m.guarantee.as_ref().unwrap().eps, 1.0);
}

/// `(θ̂, standard errors)` of the two estimators on `n` probit comparisons randomised at `ε`.
fn consistency_case(
    spec: LossSpec,
    theta: &[f64],
    x: &[f64],
    yt: &privpref::privacy::PrivatizedLabels,
    n: usize,
    d: usize,
) -> (Vec<f64>, Vec<f64>) {
    let view = PairwiseView::new(x, n, d, yt.labels(), None).unwrap();
    let m = fit_privatized(view, yt, &FitOptions::new(spec, FeasibleSet::ball(4.0).unwrap())).unwrap();
    let rep = m.report.into_result().unwrap();
    assert!(!rep.certificate.on_boundary);
    // Sandwich covariance H⁻¹ V H⁻¹ at θ* with the expectations over ỹ taken exactly:
    // P(ỹ = 1 | t) = σ̄ + c Φ(t), H = Σ E[ℓ''] x xᵀ, V = Σ E[ℓ'²] x xᵀ.
    let eps = spec.eps().unwrap();
    let (keep, flip) = keep_flip(eps);
    let (mut h, mut v) = (vec![0.0; d * d], vec![0.0; d * d]);
    privpref::with_loss!(spec, |l| {
        for i in 0..n {
            let xi = &x[i * d..(i + 1) * d];
            let t: f64 = xi.iter().zip(theta).map(|(a, b)| a * b).sum();
            let p1 = flip + (keep - flip) * cdf(t);
            let eh = p1 * l.d2(t, 1) + (1.0 - p1) * l.d2(t, 0);
            let ev = p1 * l.d1(t, 1).powi(2) + (1.0 - p1) * l.d1(t, 0).powi(2);
            for a in 0..d {
                for b in 0..d {
                    h[a * d + b] += eh * xi[a] * xi[b];
                    v[a * d + b] += ev * xi[a] * xi[b];
                }
            }
        }
    })
    .unwrap();
    let hinv = invert(&h, d);
    let mut cov = vec![0.0; d * d];
    for a in 0..d {
        for b in 0..d {
            cov[a * d + b] = (0..d)
                .flat_map(|i| (0..d).map(move |j| (i, j)))
                .map(|(i, j)| hinv[a * d + i] * v[i * d + j] * hinv[j * d + b])
                .sum();
        }
    }
    let se = (0..d).map(|a| cov[a * d + a].sqrt()).collect();
    (rep.theta, se)
}

/// Gauss–Jordan inverse of a small SPD matrix.
fn invert(m: &[f64], d: usize) -> Vec<f64> {
    let mut a = m.to_vec();
    let mut inv: Vec<f64> = (0..d * d).map(|i| if i % (d + 1) == 0 { 1.0 } else { 0.0 }).collect();
    for c in 0..d {
        let p = a[c * d + c];
        for j in 0..d {
            a[c * d + j] /= p;
            inv[c * d + j] /= p;
        }
        for r in 0..d {
            if r != c {
                let f = a[r * d + c];
                for j in 0..d {
                    a[r * d + j] -= f * a[c * d + j];
                    inv[r * d + j] -= f * inv[c * d + j];
                }
            }
        }
    }
    inv
}

#[test]
fn both_estimators_are_consistent_at_eps_1() {
    let (n, d) = (200_000, 3);
    let theta = theta_star(d, 1.0, false, &mut simulation_rng(21)).unwrap();
    let data = thurstone_pairs(n, &theta, &mut simulation_rng(22)).unwrap();
    let yt = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(23))
        .unwrap();
    for spec in [LossSpec::ProbitRr { eps: 1.0 }, LossSpec::DebiasedProbit { eps: 1.0 }] {
        let (est, se) = consistency_case(spec, &theta, &data.x, &yt, n, d);
        for j in 0..d {
            let z = (est[j] - theta[j]) / se[j];
            assert!(
                z.abs() < 4.0,
                "{}: coordinate {j}: θ̂ {} θ* {} se {} (z = {z:.2})",
                spec.name(),
                est[j],
                theta[j],
                se[j]
            );
            // Not trivially loose: the standard error is small against θ*.
            assert!(se[j] < 0.05, "{}: se {}", spec.name(), se[j]);
        }
    }
}
