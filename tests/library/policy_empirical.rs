//! The data-driven radii of `privpref::policy::empirical` (asymptotic/empirical, not
//! guaranteed) and the sub-optimality diagnostics of `privpref::policy::diagnostics`, against
//! closed forms and a seeded coverage check.

// Small fixed-size loops index several arrays at once: clearer with the index.
#![allow(clippy::needless_range_loop)]

use privpref::data::{Features, PairwiseView};
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, uniform_f64, Mechanism, RandomizedResponse};
use privpref::policy::diagnostics::suboptimality_bound;
use privpref::policy::empirical::{gaussian_quantile_radius, model_law, sandwich_law, CentralNoise, ErrorLaw};
use privpref::policy::{Reference, StateActions};
use privpref::sim::btl_pairs;
use privpref::Error;

fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// The `(1 − η)`-quantile of `χ²_4`: `P(χ²_4 > x) = e^{−x/2}(1 + x/2)`, solved by bisection.
fn chi2_4_quantile(eta: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 100.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if (-mid / 2.0).exp() * (1.0 + mid / 2.0) > eta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// With `V = s²M⁻¹`, `‖Z‖²_M = s²χ²_d` for any `M = Σ + λI`: the radius is `s·√(χ²_{d,1−η})`.
/// A wrong metric (`Σ` or `λ` dropped, `V` and `M` swapped) or a wrong quantile rank moves it far
/// outside the Monte-Carlo band (20 000 draws: standard error of the quantile ≈ 0.5%).
#[test]
fn gaussian_quantile_is_the_chi_quantile() {
    let d = 4;
    // Σ = AAᵀ for a fixed non-diagonal A.
    let a = [
        1.0, 0.3, 0.0, 0.2, 0.0, 0.5, 0.4, 0.0, 0.1, 0.0, 2.0, 0.3, 0.0, 0.7, 0.0, 0.05,
    ];
    let mut sigma = vec![0.0; 16];
    for i in 0..d {
        for j in 0..d {
            sigma[i * d + j] = (0..d).map(|k| a[i * d + k] * a[j * d + k]).sum();
        }
    }
    let lambda = 0.1;
    // M⁻¹ by Gauss–Jordan, written out here.
    let mut m = sigma.clone();
    for i in 0..d {
        m[i * d + i] += lambda;
    }
    let mut inv = [0.0; 16];
    for i in 0..d {
        inv[i * d + i] = 1.0;
    }
    for c in 0..d {
        let p = m[c * d + c];
        for j in 0..d {
            m[c * d + j] /= p;
            inv[c * d + j] /= p;
        }
        for r in 0..d {
            if r != c {
                let f = m[r * d + c];
                for j in 0..d {
                    m[r * d + j] -= f * m[c * d + j];
                    inv[r * d + j] -= f * inv[c * d + j];
                }
            }
        }
    }
    let s = 0.37;
    let law = ErrorLaw {
        mean: vec![0.0; d],
        cov: inv.iter().map(|v| s * s * v).collect(),
        bias_map: None,
    };
    let eta = 0.05;
    let q = gaussian_quantile_radius(&law, Some(&sigma), lambda, eta, 20_000, None, &mut simulation_rng(5)).unwrap();
    let want = s * chi2_4_quantile(eta).sqrt();
    assert!((chi2_4_quantile(eta) - 9.487_729).abs() < 1e-5);
    assert!((q / want - 1.0).abs() < 0.02, "quantile {q}, closed form {want}");
    // A mean shifts it: Z ~ N(μ, 0) gives exactly ‖μ‖_M.
    let law0 = ErrorLaw {
        mean: vec![0.3, -0.2, 0.1, 0.0],
        cov: vec![0.0; 16],
        bias_map: None,
    };
    let q0 = gaussian_quantile_radius(&law0, None, 4.0, eta, 100, None, &mut simulation_rng(1)).unwrap();
    assert!((q0 - 2.0 * (0.09f64 + 0.04 + 0.01).sqrt()).abs() < 1e-12);
}

/// The worst case of a bias `Aθ*` over `‖θ*‖ ≤ B`: with `V = 0` the radius is exactly
/// `max_{‖θ‖ ≤ B} ‖Aθ‖_M`, found here by brute force over 200 000 directions of the circle
/// (`d = 2`, `A` and `M` not diagonal, not commuting). With noise it adds to the quantile.
/// `√λ_min` instead of `√λ_max`, `MA` for `AᵀMA` or a forgotten `B` would miss by far more than
/// the 1e-9 relative tolerance of the brute force's grid.
#[test]
fn bias_map_adds_its_worst_case_over_the_ball() {
    let a = [0.7, -0.3, 0.2, 0.05];
    let (sigma, lambda, b) = ([2.0, 0.6, 0.6, 0.5], 0.1, 1.7);
    let m = [sigma[0] + lambda, sigma[1], sigma[2], sigma[3] + lambda];
    let mut brute = 0.0f64;
    let k = 200_000;
    for i in 0..k {
        let t = std::f64::consts::PI * i as f64 / k as f64;
        let th = [b * t.cos(), b * t.sin()];
        let z = [a[0] * th[0] + a[1] * th[1], a[2] * th[0] + a[3] * th[1]];
        let q = z[0] * (m[0] * z[0] + m[1] * z[1]) + z[1] * (m[2] * z[0] + m[3] * z[1]);
        brute = brute.max(q.sqrt());
    }
    let law = ErrorLaw {
        mean: vec![0.0; 2],
        cov: vec![0.0; 4],
        bias_map: Some(a.to_vec()),
    };
    let r = gaussian_quantile_radius(&law, Some(&sigma), lambda, 0.05, 100, Some(b), &mut simulation_rng(1)).unwrap();
    assert!((r / brute - 1.0).abs() < 1e-9, "{r} vs brute force {brute}");
    // With noise: the Gaussian quantile plus the same bias term (same draws).
    let noisy = ErrorLaw {
        cov: vec![0.04, 0.01, 0.01, 0.09],
        ..law.clone()
    };
    let plain = ErrorLaw {
        bias_map: None,
        ..noisy.clone()
    };
    let q = gaussian_quantile_radius(&plain, Some(&sigma), lambda, 0.05, 500, None, &mut simulation_rng(2)).unwrap();
    let r = gaussian_quantile_radius(&noisy, Some(&sigma), lambda, 0.05, 500, Some(b), &mut simulation_rng(2)).unwrap();
    assert!((r - q - brute).abs() < 1e-9 * r, "{r} vs {q} + {brute}");
    // A bias map needs the ball.
    for bad in [None, Some(0.0), Some(f64::INFINITY)] {
        assert!(matches!(
            gaussian_quantile_radius(&law, None, lambda, 0.05, 100, bad, &mut simulation_rng(1)),
            Err(Error::InvalidParam { .. })
        ));
    }
}

/// A discrete design `x ∈ {e₁, e₂}` (each half of the rows) with `n = 2·10⁵` BTL labels: the
/// sandwich at `θ̂` tends to the inverse Fisher information, `V = diag(1/(½σ'(θ₁)), 1/(½σ'(θ₂)))/n`
/// (correct model: `G = H`); for the debiased RR loss (ε = 1) to the closed form
/// `V_jj = E[ℓ̂'²]/(n·½·(c_εσ'(θ_j))²)`, `E[ℓ̂'²] = p̃(c_εσ(−θ_j) + σ̄_ε)² + (1 − p̃)(c_εσ(θ_j) + σ̄_ε)²`,
/// `p̃ = σ̄_ε + c_εσ(θ_j)`. A missing `1/n`, `H⁻¹G` without the second `H⁻¹`, or `G` from the
/// clear labels would be off by far more than the 3% tolerance.
#[test]
fn sandwich_tends_to_the_closed_form() {
    let theta = [0.8, -0.5];
    let n = 200_000;
    let mut rng = simulation_rng(11);
    let mut x = vec![0.0; 2 * n];
    let mut y = vec![0u8; n];
    for i in 0..n {
        let j = i % 2;
        x[2 * i + j] = 1.0;
        y[i] = u8::from(uniform_f64(&mut rng) < sigmoid(theta[j]));
    }
    let ds = |t: f64| sigmoid(t) * sigmoid(-t);
    let view = PairwiseView::new(&x, n, 2, &y, None).unwrap();
    let m = fit(view, &FitOptions::new(LossSpec::Mle, FeasibleSet::ball(10.0).unwrap())).unwrap();
    let law = sandwich_law(Features::F64(&x), &y, n, 2, &m.theta, LossSpec::Mle).unwrap();
    for j in 0..2 {
        let want = 1.0 / (0.5 * ds(theta[j])) / n as f64;
        assert!(
            (law.cov[j * 2 + j] / want - 1.0).abs() < 0.03,
            "{j}: {} vs {want}",
            law.cov[j * 2 + j]
        );
    }
    assert!(law.cov[1].abs() < 1e-12 && law.mean == vec![0.0, 0.0]);
    // Debiased RR at ε = 1 on randomised labels.
    let eps: f64 = 1.0;
    let yt = RandomizedResponse::new(eps)
        .unwrap()
        .randomize(&y, &mut simulation_rng(12))
        .unwrap();
    let spec = LossSpec::DebiasedRr { eps };
    let m = fit(
        view.with_labels(&yt).unwrap(),
        &FitOptions::new(spec, FeasibleSet::ball(10.0).unwrap()),
    )
    .unwrap();
    let law = sandwich_law(Features::F64(&x), &yt, n, 2, &m.theta, spec).unwrap();
    let (c, flip) = ((eps / 2.0).tanh(), sigmoid(-eps));
    for j in 0..2 {
        let t = theta[j];
        let p = flip + c * sigmoid(t);
        let g = p * (c * sigmoid(-t) + flip).powi(2) + (1.0 - p) * (c * sigmoid(t) + flip).powi(2);
        let h = 0.5 * c * ds(t);
        let want = 0.5 * g / (h * h) / n as f64;
        assert!(
            (law.cov[j * 2 + j] / want - 1.0).abs() < 0.03,
            "rr {j}: {} vs {want}",
            law.cov[j * 2 + j]
        );
    }
}

/// The model law of objective perturbation on the same discrete design, closed form:
/// `K = H + (β/n)I`, `V_jj = (H_jj/n + (s_w/n)²)/K_jj²`, bias map `A_jj = −(β/n)/K_jj`; of the private
/// MLE: `K = H + 2αI`, `V_jj = (H_jj/n + (s_b/n)²)/K_jj² + ν²`, `A_jj = −2α/K_jj`.
#[test]
fn model_law_closed_form() {
    let n = 1000;
    let theta = [0.4, -1.1];
    let mut x = vec![0.0; 2 * n];
    for i in 0..n {
        x[2 * i + i % 2] = 1.0;
    }
    let hjj = |t: f64| 0.5 * sigmoid(t) * sigmoid(-t);
    let (sw, beta) = (3.0, 20.0);
    let l = model_law(
        Features::F64(&x),
        n,
        2,
        &theta,
        CentralNoise::ObjPert { noise_std: sw, beta },
    )
    .unwrap();
    let nf = n as f64;
    for j in 0..2 {
        let (h, k) = (hjj(theta[j]), hjj(theta[j]) + beta / nf);
        let v = (h / nf + (sw / nf).powi(2)) / (k * k);
        assert!((l.cov[j * 3] / v - 1.0).abs() < 1e-12);
        assert_eq!(l.mean[j], 0.0);
        let a = l.bias_map.as_ref().unwrap();
        assert!((a[j * 3] + beta / nf / k).abs() < 1e-12);
        assert!(a[1].abs() < 1e-15 && a[2].abs() < 1e-15);
    }
    let (alpha, sb, nu) = (0.01, 5.0, 0.02);
    let l = model_law(
        Features::F64(&x),
        n,
        2,
        &theta,
        CentralNoise::PrivateMle {
            alpha,
            objective_noise_std: sb,
            output_noise_std: nu,
        },
    )
    .unwrap();
    for j in 0..2 {
        let (h, k) = (hjj(theta[j]), hjj(theta[j]) + 2.0 * alpha);
        let v = (h / nf + (sb / nf).powi(2)) / (k * k) + nu * nu;
        assert!((l.cov[j * 3] / v - 1.0).abs() < 1e-12);
        assert_eq!(l.mean[j], 0.0);
        assert!((l.bias_map.as_ref().unwrap()[j * 3] + 2.0 * alpha / k).abs() < 1e-12);
    }
}

/// Seeded coverage: 200 repetitions of the MLE and of the debiased RR estimator (ε = 1) at
/// `n = 4000`, `d = 3` (BTL, `x ~ N(0, 2I)`, `θ*` fixed, ball `B = 10` not binding): the share of
/// `‖θ* − θ̂‖_M ≤ Γ_sandwich` must lie in [0.90, 0.99] (target 0.95; binomial s.d. 0.015). With
/// `Γ` halved the coverage would be `P(χ²₃ ≤ 7.81/4) ≈ 0.42`; doubled, `≈ 1.0000` (200/200
/// has probability 0.95²⁰⁰ ≈ 4·10⁻⁵ at the right radius).
#[test]
fn sandwich_radius_covers_at_n_4000() {
    let (n, d, reps, eta) = (4000, 3, 200, 0.05);
    let theta = [0.6, -0.4, 0.3];
    let lambda = 0.01;
    for spec in [LossSpec::Mle, LossSpec::DebiasedRr { eps: 1.0 }] {
        let mut covered = 0;
        for r in 0..reps {
            let data = btl_pairs(n, &theta, &mut simulation_rng(1000 + r)).unwrap();
            let y = match spec {
                LossSpec::DebiasedRr { eps } => RandomizedResponse::new(eps)
                    .unwrap()
                    .randomize(&data.y, &mut simulation_rng(5000 + r))
                    .unwrap(),
                _ => data.y.clone(),
            };
            let view = PairwiseView::new(&data.x, n, d, &y, None).unwrap();
            let m = fit(view, &FitOptions::new(spec, FeasibleSet::ball(10.0).unwrap())).unwrap();
            let law = sandwich_law(Features::F64(&data.x), &y, n, d, &m.theta, spec).unwrap();
            let mut sigma = vec![0.0; d * d];
            for row in data.x.chunks_exact(d) {
                for i in 0..d {
                    for j in 0..d {
                        sigma[i * d + j] += row[i] * row[j] / n as f64;
                    }
                }
            }
            let g = gaussian_quantile_radius(
                &law,
                Some(&sigma),
                lambda,
                eta,
                1000,
                None,
                &mut simulation_rng(9000 + r),
            )
            .unwrap();
            let z: Vec<f64> = theta.iter().zip(&m.theta).map(|(a, b)| a - b).collect();
            let q: f64 = (0..d)
                .map(|i| z[i] * ((0..d).map(|j| sigma[i * d + j] * z[j]).sum::<f64>() + lambda * z[i]))
                .sum();
            covered += usize::from(q.sqrt() <= g);
        }
        let share = covered as f64 / reps as f64;
        assert!((0.90..=0.99).contains(&share), "{}: coverage {share}", spec.name());
    }
}

#[test]
fn empirical_inputs_are_checked() {
    let x = [1.0, 0.0, 0.0, 1.0];
    let theta = [0.1, 0.2];
    // Label out of range, wrong label count, wrong theta length.
    let e = sandwich_law(Features::F64(&x), &[0, 2], 2, 2, &theta, LossSpec::Mle).unwrap_err();
    assert!(matches!(e, Error::InvalidParam { .. }), "{e}");
    assert!(matches!(
        sandwich_law(Features::F64(&x), &[0], 2, 2, &theta, LossSpec::Mle),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        sandwich_law(Features::F64(&x), &[0, 1], 2, 2, &[0.1], LossSpec::Mle),
        Err(Error::Shape(_))
    ));
    // Non-convex loss refused; a feature column of zeros makes H singular.
    assert!(matches!(
        sandwich_law(Features::F64(&x), &[0, 1], 2, 2, &theta, LossSpec::MleRr { eps: 1.0 }),
        Err(Error::InvalidParam { .. })
    ));
    let xz = [1.0, 0.0, 2.0, 0.0];
    assert!(matches!(
        sandwich_law(Features::F64(&xz), &[0, 1], 2, 2, &theta, LossSpec::Mle),
        Err(Error::Numerical(_))
    ));
    let bad = CentralNoise::ObjPert {
        noise_std: -1.0,
        beta: 1.0,
    };
    assert!(matches!(
        model_law(Features::F64(&x), 2, 2, &theta, bad),
        Err(Error::InvalidParam { .. })
    ));
    let law = ErrorLaw {
        mean: vec![0.0; 2],
        cov: vec![1.0, 0.0, 0.0, 1.0],
        bias_map: None,
    };
    let mut rng = simulation_rng(1);
    for (eta, draws, lambda) in [(0.0, 100, 1.0), (0.05, 10, 1.0), (0.05, 100, -1.0), (1.0, 100, 1.0)] {
        assert!(matches!(
            gaussian_quantile_radius(&law, None, lambda, eta, draws, None, &mut rng),
            Err(Error::InvalidParam { .. })
        ));
    }
    assert!(matches!(
        gaussian_quantile_radius(&law, Some(&[1.0]), 1.0, 0.05, 100, None, &mut rng),
        Err(Error::Shape(_))
    ));
}

/// Two states, two actions, `d = 2`: `φ(s, 0) = e₁`, `φ(s, 1) = e₂` in state 0 and
/// `φ(1, 0) = (1, 1)`, `φ(1, 1) = (0, 2)` in state 1, weights `ρ = (¼, ¾)`. Comparator
/// `π† = (1, 1)`, reference `π_ref = (0, 0)`: `g = ¼(−1, 1) + ¾(−1, 1) = (−1, 1)`. With
/// `Σ = [[2, 1], [1, 1]]`, `λ = 1`: `M = [[3, 1], [1, 2]]`, `M⁻¹ = [[2, −1], [−1, 3]]/5`,
/// `gᵀM⁻¹g = (2 + 2 + 3)/5 = 7/5`; the bound is `2Γ√(7/5)`.
#[test]
fn suboptimality_bound_two_states_closed_form() {
    let phi = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 2.0];
    let w = [1.0, 3.0];
    let st = StateActions::new(&phi, 2, 2, 2, Some(&w)).unwrap();
    let sigma = [2.0, 1.0, 1.0, 1.0];
    let b = suboptimality_bound(
        &st,
        &Reference::Actions(&[1, 1]),
        &Reference::Actions(&[0, 0]),
        Some(&sigma),
        1.0,
        0.5,
    )
    .unwrap();
    assert!((b.direction[0] + 1.0).abs() < 1e-15 && (b.direction[1] - 1.0).abs() < 1e-15);
    assert!(
        (b.coverage_term - (7.0f64 / 5.0).sqrt()).abs() < 1e-14,
        "{}",
        b.coverage_term
    );
    assert!((b.bound - 2.0 * 0.5 * (7.0f64 / 5.0).sqrt()).abs() < 1e-14);
    // Comparator = reference: nothing to lose.
    let z = suboptimality_bound(
        &st,
        &Reference::Actions(&[0, 1]),
        &Reference::Actions(&[0, 1]),
        None,
        1.0,
        3.0,
    )
    .unwrap();
    assert_eq!(z.bound, 0.0);
    // Σ = 0, λ = 0 is not positive definite; negative Γ and a bad comparator are refused.
    assert!(suboptimality_bound(&st, &Reference::Actions(&[1, 1]), &Reference::None, None, 0.0, 1.0).is_err());
    assert!(suboptimality_bound(&st, &Reference::Actions(&[1, 1]), &Reference::None, None, 1.0, -1.0).is_err());
    assert!(suboptimality_bound(&st, &Reference::Actions(&[2, 1]), &Reference::None, None, 1.0, 1.0).is_err());
}
