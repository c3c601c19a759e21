//! Zhou, Wu & Orabona (2025): identities of the debiased labels and loss (14), corruption
//! transforms and the DPO reduction.

use privpref::estimator::robust::{debiased_label, fit_dpo, fit_loss14, loss14};
use privpref::kernels::simd_math::scalar::{sigmoid, softplus};
use privpref::loss::{Loss, RrDebiased};
use privpref::mechanism::{simulation_rng, RandomizedResponse};
use privpref::sim::corrupt::{oblivious_mask_closed_forms, rr_privacy_factor, Adversary, Pipeline};
use privpref::sim::dpo::ContextualBandit;
use privpref::sim::{btl_pairs, theta_star};

/// c(ε) = coth(ε/2) reference values; ŷ values; E[ŷ | y] = y and Var(ŷ | y) = e^ε/(e^ε − 1)².
#[test]
fn rr_constants_and_debiased_labels() {
    for (eps, c) in [(0.1, 20.016664), (0.5, 4.082988), (1.0, 2.163953), (2.0, 1.313035)] {
        assert!((rr_privacy_factor(eps) - c).abs() < 1e-6, "c({eps})");
    }
    assert!((debiased_label(1, 1.0) - 1.581977).abs() < 1e-6);
    assert!((debiased_label(0, 1.0) + 0.581977).abs() < 1e-6);
    for eps in [0.1, 0.5, 1.0, 3.0] {
        let rr = RandomizedResponse::new(eps).unwrap();
        let (s, q) = (rr.keep_probability(), rr.flip_probability());
        for y in [0u8, 1] {
            let m = s * debiased_label(y, eps) + q * debiased_label(1 - y, eps);
            assert!((m - y as f64).abs() < 1e-12, "E[ŷ|y={y}] at eps {eps}: {m}");
            let v = s * (debiased_label(y, eps) - m).powi(2) + q * (debiased_label(1 - y, eps) - m).powi(2);
            let pred = eps.exp() / eps.exp_m1().powi(2);
            assert!(
                (v - pred).abs() < 1e-10 * pred.max(1.0),
                "Var at eps {eps}: {v} vs {pred}"
            );
        }
        // c(ε) is the jump of ŷ.
        assert!((debiased_label(1, eps) - debiased_label(0, eps) - rr_privacy_factor(eps)).abs() < 1e-12);
    }
    assert_eq!(debiased_label(1, f64::INFINITY), 1.0);
}

/// Loss (14) = coth(ε/2) × the debiased loss of Chowdhury, Zhou & Natarajan (2024), for both
/// labels, on a grid of scores; rDPO/TRL-robust form equals loss (14) without rescaling; and E_RR[f
/// | y] = clean logistic loss softplus(u) − y u.
#[test]
fn loss14_is_the_debiased_loss_rescaled_and_unbiased() {
    for eps in [0.1, 0.7, 2.0] {
        let deb = RrDebiased::new(eps).unwrap();
        let c = rr_privacy_factor(eps);
        let q = RandomizedResponse::new(eps).unwrap().flip_probability();
        for k in 0..=120 {
            let u = -6.0 + 0.1 * k as f64;
            for z in [0u8, 1] {
                let f = loss14(u, z, eps);
                let scaled = c * deb.value(u, z);
                assert!(
                    (f - scaled).abs() <= 1e-12 * (1.0 + f.abs()),
                    "eps {eps} u {u} z {z}: {f} vs {scaled}"
                );
                // Derivative: ∂f/∂u = σ(u) − ŷ = c·ℓ'.
                let df = sigmoid(u) - debiased_label(z, eps);
                assert!((df - c * deb.d1(u, z)).abs() <= 1e-12 * (1.0 + df.abs()));
                // rDPO: [(1−q)ℓ(observed) − q ℓ(flipped)]/(1 − 2q), ℓ = −log σ(±u).
                let l = |zz: u8| if zz == 1 { softplus(-u) } else { softplus(u) };
                let rdpo = ((1.0 - q) * l(z) - q * l(1 - z)) / (1.0 - 2.0 * q);
                assert!(
                    (rdpo - f).abs() <= 1e-10 * (1.0 + f.abs()),
                    "rDPO eps {eps} u {u}: {rdpo} vs {f}"
                );
            }
            let s = 1.0 - q;
            for y in [0u8, 1] {
                let e = s * loss14(u, y, eps) + q * loss14(u, 1 - y, eps);
                let clean = softplus(u) - y as f64 * u;
                assert!((e - clean).abs() <= 1e-11 * (1.0 + clean.abs()));
            }
        }
    }
}

/// At small ε the debiased loss is unbounded below; the constrained
/// estimator ends on the sphere ‖θ̂‖ = B' and is certified.
#[test]
fn loss14_needs_the_ball() {
    let mut rng = simulation_rng(7);
    let theta = theta_star(3, 1.0, true, &mut rng).unwrap();
    let data = btl_pairs(200, &theta, &mut rng).unwrap();
    let z = RandomizedResponse::new(0.2).unwrap();
    use privpref::mechanism::Mechanism;
    let zl = z.randomize(&data.y, &mut rng).unwrap();
    let view = data.view().unwrap().with_labels(&zl).unwrap();
    let m = fit_loss14(view, Some(0.2), 4.0).unwrap();
    assert!(m.report.converged());
    let nrm = m.theta.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((nrm - 4.0).abs() < 1e-9, "‖θ̂‖ = {nrm}");
}

/// Oblivious-mask flip rates and biases, CTL and LTC, and CLC, by Monte
/// Carlo (5·10⁵ labels; tolerances ≥ 4 standard errors).
#[test]
fn oblivious_mask_matches_the_closed_forms() {
    let n = 500_000;
    let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    let x = vec![0.0; n];
    for (eps, alpha) in [(1.0, 0.1), (0.5, 0.05)] {
        let rr = RandomizedResponse::new(eps).unwrap();
        let (fc, fl, bc, bl) = oblivious_mask_closed_forms(eps, alpha);
        let a = Adversary::ObliviousMask { alpha };
        let bias_se = (eps.exp() / eps.exp_m1().powi(2) / n as f64).sqrt();
        for (k, p) in [Pipeline::Ctl(a.clone()), Pipeline::Ltc(a.clone())].iter().enumerate() {
            let z = p.apply(&x, 1, &y, &rr, &mut simulation_rng(10 + k as u64)).unwrap().z;
            let flip = z.iter().zip(&y).filter(|(a, b)| a != b).count() as f64 / n as f64;
            let bias = z
                .iter()
                .zip(&y)
                .map(|(&zi, &yi)| (debiased_label(zi, eps) - yi as f64) * (1.0 - 2.0 * yi as f64))
                .sum::<f64>()
                / n as f64;
            let (pf, pb) = if k == 0 { (fc, bc) } else { (fl, bl) };
            assert!(
                (flip - pf).abs() < 0.003,
                "eps {eps} alpha {alpha} order {k}: flip {flip} vs {pf}"
            );
            assert!(
                (bias - pb).abs() < 5.0 * bias_se,
                "eps {eps} alpha {alpha} order {k}: bias {bias} vs {pb}"
            );
        }
        // CLC: corrupt (α₁) → RR → corrupt (α₂); P[z ≠ y] = α₂ + (1 − α₂)(q + α₁(1 − 2q)).
        let (a1, a2) = (alpha, 0.5 * alpha);
        let p = Pipeline::Clc(
            Adversary::ObliviousMask { alpha: a1 },
            Adversary::ObliviousMask { alpha: a2 },
        );
        let out = p.apply(&x, 1, &y, &rr, &mut simulation_rng(3)).unwrap();
        let flip = out.z.iter().zip(&y).filter(|(a, b)| a != b).count() as f64 / n as f64;
        let q = rr.flip_probability();
        let pred = a2 + (1.0 - a2) * (q + a1 * (1.0 - 2.0 * q));
        assert!((flip - pred).abs() < 0.003, "CLC flip {flip} vs {pred}");
        assert!(out.changed_before > 0 && out.changed_after > 0);
    }
}

/// The pipelines consume the RNG in the documented order and are reproducible.
#[test]
fn pipelines_are_reproducible_and_ctl_changes_precede_rr() {
    let mut rng = simulation_rng(1);
    let theta = theta_star(4, 1.0, true, &mut rng).unwrap();
    let data = btl_pairs(3000, &theta, &mut rng).unwrap();
    let rr = RandomizedResponse::new(1.0).unwrap();
    let a = Adversary::DirectionalPush {
        alpha: 0.05,
        direction: vec![1.0, -1.0, 0.0, 0.0],
    };
    for p in [Pipeline::Ctl(a.clone()), Pipeline::Ltc(a.clone())] {
        let z1 = p.apply(&data.x, 4, &data.y, &rr, &mut simulation_rng(5)).unwrap();
        let z2 = p.apply(&data.x, 4, &data.y, &rr, &mut simulation_rng(5)).unwrap();
        assert_eq!(z1, z2);
        assert!(z1.changed_before + z1.changed_after <= 150);
    }
    // LTC with a deterministic adversary = the adversary applied to RR's output.
    let ltc = Pipeline::Ltc(a.clone())
        .apply(&data.x, 4, &data.y, &rr, &mut simulation_rng(9))
        .unwrap();
    let mut z = Pipeline::Clean
        .apply(&data.x, 4, &data.y, &rr, &mut simulation_rng(9))
        .unwrap()
        .z;
    a.corrupt(&data.x, 4, &data.y, &mut z, &mut simulation_rng(0)).unwrap();
    assert_eq!(ltc.z, z);
}

/// The DPO reduction (Zhou, Wu & Orabona (2025), Prop. 4.6). Labels of `dpo_pairs` follow BTL with
/// θ_true = β(θ* − θ_sft); with many clean records the fit recovers θ_true and the returned policy
/// parameter θ̂' = θ̂/β + θ_sft is close to θ*, with small sub-optimality; invalid input is typed.
#[test]
fn dpo_reduction_recovers_the_policy() {
    let mut rng = simulation_rng(11);
    let b = ContextualBandit::random(200, 6, 4, &mut rng).unwrap();
    let ts = theta_star(4, 1.0, true, &mut rng).unwrap();
    let tsft = theta_star(4, 1.0, true, &mut rng).unwrap();
    let beta = 0.5;
    let data = b.dpo_pairs(&ts, &tsft, beta, 100_000, &mut rng).unwrap();
    let fitd = fit_dpo(data.view().unwrap(), None, beta, &tsft, 2.0 * beta).unwrap();
    let tt: Vec<f64> = ts.iter().zip(&tsft).map(|(a, c)| beta * (a - c)).collect();
    let err_true: f64 = fitd
        .detail
        .theta_true
        .iter()
        .zip(&tt)
        .map(|(a, c)| (a - c).powi(2))
        .sum::<f64>()
        .sqrt();
    let err_pol: f64 = fitd
        .theta
        .iter()
        .zip(&ts)
        .map(|(a, c)| (a - c).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(err_true < 0.05, "‖θ̂ − θ_true‖ = {err_true}");
    assert!((err_pol - err_true / beta).abs() < 1e-12, "the map θ̂' = θ̂/β + θ_sft");
    let so = b.suboptimality(&ts, &tsft, beta, &fitd.theta).unwrap();
    let so_sft = b.suboptimality(&ts, &tsft, beta, &tsft).unwrap();
    assert!(
        so.abs() < 0.1 * so_sft.abs(),
        "SubOpt {so} vs the SFT policy's {so_sft}"
    );
    assert!(fit_dpo(data.view().unwrap(), None, 0.0, &tsft, 1.0).is_err());
    assert!(fit_dpo(data.view().unwrap(), None, beta, &tsft[..3], 1.0).is_err());
}
