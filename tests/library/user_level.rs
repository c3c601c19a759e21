//! User-level label DP (Zhang et al. 2025): exact privacy of user-level RR over all label vectors
//! of a small user, its flip rates, the exact debiased estimator (equal and ragged counts, KKT of
//! the paper's gradient, computed independently), user-wise DP-SGD (noise scale, clipping,
//! guarantee, reproducibility) and AUP-RLHF (guarantee, halting, noise formula, validation).
//!
//! `cargo test --release --test library user_level -- --nocapture` prints the measured numbers.

use privpref::data::{PairwiseView, UserIndex};
use privpref::estimator::user_level::{
    aup_rlhf, fit_user_rr, fit_user_rr_privatized, theory, user_dpsgd, AupBatch, AupOptions, UserDpSgdOptions,
    UserLevelDetail, UserOutput, UserRrOptions, UserSampler,
};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, Loss, LossSpec, Probit};
use privpref::mechanism::{simulation_rng, AtCalibration, RandomizedResponse, UserLevelRr};
use privpref::privacy::rdp::{Accountant, Neighbours};
use privpref::privacy::{NoiseRng, PrivacyModel, PrivacyUnit};
use privpref::sim::{btl_users, btl_users_equal, theta_star, UserFeatures};
use privpref::Error;

fn labels(m: usize, bits: usize) -> Vec<u8> {
    (0..m).map(|j| ((bits >> j) & 1) as u8).collect()
}

/// For m ∈ 1..5 and ε ∈ {0.5, 1, 3, 8}, the largest ratio
/// `P[ỹ | y] / P[ỹ | y']` over all input pairs and outputs is exactly `e^ε` (attained when all
/// labels differ); without the split (ε per label) it would be `e^{mε}`.
#[test]
fn user_rr_is_exactly_eps_dp_per_user() {
    let mut worst_rel = 0.0f64;
    for m in 1..=5usize {
        for &eps in &[0.5, 1.0, 3.0, 8.0] {
            let mech = UserLevelRr::new(eps).unwrap();
            let mut max_ratio = 0.0f64;
            for a in 0..(1usize << m) {
                for b in 0..(1usize << m) {
                    let (y, y2) = (labels(m, a), labels(m, b));
                    for o in 0..(1usize << m) {
                        let out = labels(m, o);
                        let r = mech.user_likelihood(&y, &out) / mech.user_likelihood(&y2, &out);
                        assert!(r <= eps.exp() * (1.0 + 1e-12), "m={m} ε={eps}: {r}");
                        max_ratio = max_ratio.max(r);
                    }
                }
            }
            let rel = (max_ratio / eps.exp() - 1.0).abs();
            assert!(rel < 1e-9, "m={m} ε={eps}: max ratio {max_ratio} vs e^ε");
            worst_rel = worst_rel.max(rel);
            // Each user's output probabilities sum to one.
            let y = labels(m, 0b10110 & ((1 << m) - 1));
            let total: f64 = (0..(1usize << m))
                .map(|o| mech.user_likelihood(&y, &labels(m, o)))
                .sum();
            assert!((total - 1.0).abs() < 1e-14);
            // Without the split: per-label ε gives e^{mε} at the user level.
            let per_label = RandomizedResponse::new(eps).unwrap();
            let k = per_label.keep_probability() / per_label.flip_probability();
            assert!((k.powi(m as i32) / (m as f64 * eps).exp() - 1.0).abs() < 1e-9);
        }
    }
    println!("user-level RR: max ratio / e^ε − 1 = {worst_rel:.2e} (m ≤ 5, 4 ε)");
}

/// The empirical flip rate of user-level RR is 1 − σ(ε/m_u) for each user size.
#[test]
fn user_rr_flip_rates() {
    let users = UserIndex::from_counts(&[1, 3, 10, 50]).unwrap();
    let reps = 4000usize;
    let mech = UserLevelRr::new(2.0).unwrap();
    let y: Vec<u8> = (0..users.n_rows()).map(|i| (i % 2) as u8).collect();
    let mut flips = vec![0usize; users.n_users()];
    let mut rng = simulation_rng(21);
    for _ in 0..reps {
        let out = mech.randomize(&users, &y, &mut rng).unwrap();
        for (u, f) in flips.iter_mut().enumerate() {
            *f += users.rows(u).filter(|&i| out[i] != y[i]).count();
        }
    }
    for (u, &f) in flips.iter().enumerate() {
        let m = users.count(u);
        let n = (reps * m) as f64;
        let p = 1.0 - mech.keep_probability(m);
        let rate = f as f64 / n;
        let z = (rate - p) / (p * (1.0 - p) / n).sqrt();
        println!("m = {m}: flip rate {rate:.4} vs {p:.4} (z = {z:.2})");
        assert!(z.abs() < 5.0, "m = {m}: z = {z}");
    }
    assert_eq!(mech.guarantee().unit, PrivacyUnit::User);
    assert_eq!(mech.guarantee().delta, 0.0);
}

/// The debiased objective of Zhang et al. (2025), eq. 2, its gradient `−(1/N)Σ(ỹ − p̃_θ(x))x` with
/// `p̃ = sσ(u) + (1−s)(1−σ(u))`, `s = σ(ε/m_u)`, computed here independently.
fn spec_gradient(x: &[f64], y: &[u8], users: &UserIndex, eps: f64, theta: &[f64]) -> Vec<f64> {
    let d = theta.len();
    let n = y.len();
    let mut g = vec![0.0; d];
    let sig = |t: f64| 1.0 / (1.0 + (-t).exp());
    for u in 0..users.n_users() {
        let s = sig(eps / users.count(u) as f64);
        for i in users.rows(u) {
            let r = &x[i * d..(i + 1) * d];
            let t: f64 = r.iter().zip(theta).map(|(a, b)| a * b).sum();
            let p = s * sig(t) + (1.0 - s) * (1.0 - sig(t));
            for j in 0..d {
                g[j] -= (f64::from(y[i]) - p) * r[j] / n as f64;
            }
        }
    }
    g
}

/// The KKT residual of `Θ_B` for gradient `g` at `θ`: ‖θ − Π(θ − g)‖.
fn kkt(set: &FeasibleSet, theta: &[f64], g: &[f64]) -> f64 {
    let mut v: Vec<f64> = theta.iter().zip(g).map(|(a, b)| a - b).collect();
    set.project(&mut v);
    theta.iter().zip(&v).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt()
}

#[test]
fn user_rr_estimator_is_the_exact_constrained_minimiser() {
    let d = 4;
    let theta = theta_star(d, 0.8, true, &mut simulation_rng(1)).unwrap();
    let set = FeasibleSet::theta_b(1.0).unwrap();
    for (counts, eps) in [
        (vec![5usize; 60], 2.0),                               // equal counts
        ((0..60).map(|u| 1 + u % 9).collect::<Vec<_>>(), 3.0), // ragged
    ] {
        let ud = btl_users(
            &counts,
            &theta,
            UserFeatures::Sphere { radius: 2.0 },
            &mut simulation_rng(2),
        )
        .unwrap();
        let mech = UserLevelRr::new(eps).unwrap();
        let private = mech.privatize(&ud.users, &ud.data.y, &mut NoiseRng::seeded(3)).unwrap();
        let yt = private.labels().to_vec();
        let view = PairwiseView::new(&ud.data.x, ud.data.n, d, &yt, None).unwrap();
        let model = fit_user_rr_privatized(view, &ud.users, &private, &UserRrOptions::new(eps, set)).unwrap();
        assert!(model.report.converged(), "{:?}", model.report.termination);
        let g = spec_gradient(&ud.data.x, &yt, &ud.users, eps, &model.theta);
        let res = kkt(&set, &model.theta, &g);
        println!(
            "counts {:?}…: KKT residual of the paper's objective {res:.2e}",
            &counts[..4]
        );
        assert!(res < 1e-9, "KKT residual {res}");
        let gu = model.guarantee.as_ref().unwrap();
        assert_eq!(
            (gu.eps, gu.delta, gu.unit, gu.model),
            (eps, 0.0, PrivacyUnit::User, PrivacyModel::Local)
        );
        // L-BFGS reaches the same point.
        let mut o = UserRrOptions::new(eps, set);
        o.solver = privpref::estimator::SolverKind::Lbfgs.into();
        let m2 = fit_user_rr(view, &ud.users, &o).unwrap();
        let diff = model
            .theta
            .iter()
            .zip(&m2.theta)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(diff < 1e-7, "Newton vs L-BFGS: {diff}");
    }
    // Errors: weights given, index not covering the rows, ε ≤ 0.
    let ud = btl_users_equal(4, 2, &[0.5, -0.5], UserFeatures::Gaussian, &mut simulation_rng(4)).unwrap();
    let w = vec![1.0; 8];
    let v = PairwiseView::new(&ud.data.x, 8, 2, &ud.data.y, Some(&w)).unwrap();
    assert!(matches!(
        fit_user_rr(v, &ud.users, &UserRrOptions::new(1.0, set)),
        Err(Error::InvalidParam { name: "weights", .. })
    ));
    let v = ud.data.view().unwrap();
    let wrong = UserIndex::equal(3, 2).unwrap();
    assert!(matches!(
        fit_user_rr(v, &wrong, &UserRrOptions::new(1.0, set)),
        Err(Error::Shape(_))
    ));
    assert!(fit_user_rr(v, &ud.users, &UserRrOptions::new(0.0, set)).is_err());
}

fn dpsgd_data() -> (privpref::sim::UserLevelData, Vec<f64>) {
    let theta = theta_star(3, 1.0, true, &mut simulation_rng(5)).unwrap();
    let ud = btl_users_equal(
        40,
        6,
        &theta,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(6),
    )
    .unwrap();
    (ud, theta)
}

/// "Noise added once per step with the correct scaling": with the full batch (q = 1) the
/// clipped sum is deterministic, so `θ_1 − (θ_0 − ηΣĝ/ñ) = −η·N(0, σ²C²)/ñ` per coordinate.
#[test]
fn user_dpsgd_noise_scale_and_clipping() {
    let (ud, _) = dpsgd_data();
    let view = ud.data.view().unwrap();
    let (n_users, d) = (40usize, 3usize);
    let (eta, clip, sigma) = (0.7, 0.05, 2.5);
    let theta0 = vec![0.3, -0.1, -0.2];
    // The deterministic part, computed here: per-user averaged logistic gradients, clipped.
    let sig = |t: f64| 1.0 / (1.0 + (-t).exp());
    let mut sum = vec![0.0; d];
    for u in 0..n_users {
        let mut g = vec![0.0; d];
        for i in ud.users.rows(u) {
            let r = &ud.data.x[i * d..(i + 1) * d];
            let t: f64 = r.iter().zip(&theta0).map(|(a, b)| a * b).sum();
            for j in 0..d {
                g[j] += (sig(t) - f64::from(ud.data.y[i])) * r[j] / 6.0;
            }
        }
        let nrm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        let s = (clip / nrm).min(1.0);
        sum.iter_mut().zip(&g).for_each(|(a, b)| *a += s * b);
    }
    let mean: Vec<f64> = theta0
        .iter()
        .zip(&sum)
        .map(|(t, s)| t - eta * s / n_users as f64)
        .collect();
    let mut opts = UserDpSgdOptions::new(1.0, 1e-5, n_users as f64, 1, clip, eta);
    opts.noise_multiplier = Some(sigma);
    opts.theta0 = Some(theta0.clone());
    let reps = 3000;
    let (mut s1, mut s2) = (vec![0.0; d], vec![0.0; d]);
    for r in 0..reps {
        let fit = user_dpsgd(view, &ud.users, &opts, &mut NoiseRng::seeded(r)).unwrap();
        for j in 0..d {
            let z = fit.theta[j] - mean[j];
            s1[j] += z;
            s2[j] += z * z;
        }
        if r == 0 {
            assert!((fit.detail.noise_std - sigma * clip / n_users as f64).abs() < 1e-15);
        }
    }
    let want = eta * sigma * clip / n_users as f64;
    for j in 0..d {
        let m = s1[j] / reps as f64;
        let sd = (s2[j] / reps as f64 - m * m).sqrt();
        println!("coordinate {j}: noise mean {m:.2e}, sd {sd:.5e} vs ησC/ñ = {want:.5e}");
        assert!(m.abs() < 5.0 * want / (reps as f64).sqrt());
        assert!((sd / want - 1.0).abs() < 0.07, "sd {sd} vs {want}");
    }
}

#[test]
fn user_dpsgd_guarantee_and_reproducibility() {
    let (ud, _) = dpsgd_data();
    let view = ud.data.view().unwrap();
    let mut opts = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 50, 1.0, 0.5);
    opts.set = FeasibleSet::theta_b(2.0).unwrap();
    opts.output = UserOutput::Average;
    let a = user_dpsgd(view, &ud.users, &opts, &mut NoiseRng::seeded(7)).unwrap();
    let b = user_dpsgd(view, &ud.users, &opts, &mut NoiseRng::seeded(7)).unwrap();
    assert_eq!(a.theta, b.theta);
    let g = a.guarantee.as_ref().unwrap();
    assert!(g.eps <= 2.0 && g.eps > 1.99, "{}", g.eps);
    assert_eq!(
        (g.delta, g.unit, g.model),
        (1e-5, PrivacyUnit::User, PrivacyModel::Central)
    );
    assert!(!g.holds_for_real_data());
    // The accountant (proven replace relation) certifies the same ε for the returned σ.
    let acc = Accountant::default();
    let e = acc
        .epsilon(8.0 / 40.0, a.detail.noise_multiplier, 50, 1e-5)
        .unwrap()
        .epsilon;
    assert_eq!(e, g.eps);
    // Add/remove accounting needs less noise for the same target (it protects less).
    let mut ar = opts.clone();
    ar.accountant = Accountant::new(privpref::privacy::rdp::default_orders(), Neighbours::AddRemove).unwrap();
    let c = user_dpsgd(view, &ud.users, &ar, &mut NoiseRng::seeded(7)).unwrap();
    assert!(c.detail.noise_multiplier < a.detail.noise_multiplier);
    // Fixed-size sampling: no guarantee, with a reason.
    let mut fs = opts.clone();
    fs.sampler = UserSampler::FixedSize;
    let f = user_dpsgd(view, &ud.users, &fs, &mut NoiseRng::seeded(7)).unwrap();
    assert!(f.guarantee.is_none() && f.refusal().is_some());
    // A secure run is reproducible only in distribution, and its guarantee holds for real data.
    let s = user_dpsgd(view, &ud.users, &opts, &mut NoiseRng::secure().unwrap()).unwrap();
    assert!(s.guarantee.unwrap().holds_for_real_data());
    // Records-per-user subsampling runs and stays in Θ_B.
    let mut k = opts.clone();
    k.records_per_user = Some(2);
    let r = user_dpsgd(view, &ud.users, &k, &mut NoiseRng::seeded(1)).unwrap();
    assert!(r.theta.iter().map(|v| v * v).sum::<f64>().sqrt() <= 2.0 + 1e-12);
}

/// The per-user gradients come from the loss: with the full batch, no clipping and noise of
/// standard deviation `ησC/ñ ≈ 2·10⁻⁹`, one step of user-wise DP-SGD with the probit loss is `θ_0 − (η/ñ) Σ_u g_u` with
/// `g_u = (1/m_u) Σ_j ℓ'(x_jᵀθ_0; y_j) x_j` and the probit `ℓ'`, computed here.
#[test]
fn user_dpsgd_takes_the_gradient_of_any_pairwise_loss() {
    let (ud, _) = dpsgd_data();
    let view = ud.data.view().unwrap();
    let (n_users, d, eta) = (40usize, 3usize, 0.7);
    let theta0 = vec![0.3, -0.1, -0.2];
    let probit: fn(f64, u8) -> f64 = |t, y| Probit.d1(t, y);
    let logistic: fn(f64, u8) -> f64 = |t, y| Logistic.d1(t, y);
    for (spec, loss) in [(LossSpec::Probit, probit), (LossSpec::Mle, logistic)] {
        let mut want = theta0.clone();
        for u in 0..n_users {
            for i in ud.users.rows(u) {
                let r = &ud.data.x[i * d..(i + 1) * d];
                let t: f64 = r.iter().zip(&theta0).map(|(a, b)| a * b).sum();
                let g = loss(t, ud.data.y[i]);
                for j in 0..d {
                    want[j] -= eta * g * r[j] / 6.0 / n_users as f64;
                }
            }
        }
        let mut opts = UserDpSgdOptions::new(1.0, 1e-5, n_users as f64, 1, 100.0, eta);
        opts.noise_multiplier = Some(1e-9);
        opts.theta0 = Some(theta0.clone());
        opts.loss = spec;
        let fit = user_dpsgd(view, &ud.users, &opts, &mut NoiseRng::seeded(3)).unwrap();
        for j in 0..d {
            assert!(
                (fit.theta[j] - want[j]).abs() < 1e-7,
                "{spec:?}: {:?} vs {want:?}",
                fit.theta
            );
        }
        assert!(fit
            .guarantee
            .unwrap()
            .assumptions
            .notes
            .iter()
            .any(|n| n.contains(spec.name())));
    }
}

#[test]
fn user_dpsgd_rejects_invalid_options() {
    let (ud, _) = dpsgd_data();
    let view = ud.data.view().unwrap();
    let base = UserDpSgdOptions::new(1.0, 1e-5, 8.0, 10, 1.0, 0.5);
    let bad = |f: &dyn Fn(&mut UserDpSgdOptions)| -> &'static str {
        let mut o = base.clone();
        f(&mut o);
        match user_dpsgd(view, &ud.users, &o, &mut NoiseRng::seeded(0)) {
            Err(Error::InvalidParam { name, .. }) => name,
            other => panic!("expected InvalidParam, got {:?}", other.map(|r| r.theta)),
        }
    };
    assert_eq!(bad(&|o| o.eps = 0.0), "eps");
    assert_eq!(bad(&|o| o.delta = 1.0), "delta");
    assert_eq!(bad(&|o| o.batch_users = 41.0), "batch-users");
    assert_eq!(bad(&|o| o.batch_users = 0.0), "batch-users");
    assert_eq!(bad(&|o| o.steps = 0), "steps");
    assert_eq!(bad(&|o| o.clip = -1.0), "clip");
    assert_eq!(bad(&|o| o.step_size = f64::NAN), "step-size");
    assert_eq!(bad(&|o| o.records_per_user = Some(0)), "records-per-user");
    assert_eq!(bad(&|o| o.noise_multiplier = Some(0.0)), "noise-multiplier");
    assert_eq!(bad(&|o| o.loss = LossSpec::DebiasedRr { eps: -1.0 }), "eps");
    let wrong = UserIndex::equal(40, 5).unwrap();
    assert!(matches!(
        user_dpsgd(view, &wrong, &base, &mut NoiseRng::seeded(0)),
        Err(Error::Shape(_))
    ));
}

fn pbf_opts(o: &AupOptions) -> AupOptions {
    let mut b = o.clone();
    b.batch = AupBatch::Users(150.0);
    b
}

fn aup(view: PairwiseView<'_>, users: &UserIndex, o: &AupOptions, seed: u64) -> privpref::model::Fit<UserLevelDetail> {
    aup_rlhf(view, users, o, &mut NoiseRng::seeded(seed)).unwrap()
}

#[test]
fn aup_guarantee_noise_and_halting() {
    let theta = theta_star(3, 1.0, true, &mut simulation_rng(9)).unwrap();
    let ud = btl_users_equal(
        200,
        5,
        &theta,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(10),
    )
    .unwrap();
    let view = ud.data.view().unwrap();
    let mut o = AupOptions::new(4.0, 1e-5, 0.5);
    o.steps = 30;
    o.set = FeasibleSet::theta_b(1.0).unwrap();
    let a = aup(view, &ud.users, &o, 1);
    let b = aup(view, &ud.users, &o, 1);
    assert_eq!(a.theta, b.theta);
    // τ = min(theory, 4L) = 4L = 2: the test passes by construction (full batch, s = ñ).
    assert_eq!(a.detail.halted, None);
    assert_eq!(a.report.counts.iterations, 30);
    let g = a.guarantee.as_ref().unwrap();
    assert!(g.eps <= 4.0 && g.eps > 3.99, "{}", g.eps);
    assert_eq!(
        (g.unit, g.model, g.delta),
        (PrivacyUnit::User, PrivacyModel::Central, 1e-5)
    );
    assert!(g.mechanism.contains("as claimed by the paper"));
    // Noise: σ from (ε/2, δ/2) at q = 1, std = 2√2 τ σ √(ln(e^ε T/δ))/ñ.
    let acc = Accountant::default();
    let cal = acc.calibrate_sigma(1.0, 30, 2.0, 0.5e-5).unwrap();
    assert_eq!(a.detail.noise_multiplier, cal.noise_multiplier);
    let want = theory::oracle_noise_std(cal.noise_multiplier, 2.0, 4.0, 30, 1e-5, 200.0);
    assert!((a.detail.noise_std / want - 1.0).abs() < 1e-14);
    // Paper-faithful AboveThreshold constants: the test costs 2·ε/2, recorded.
    let mut p = o.clone();
    p.at_calibration = AtCalibration::PaperFaithful;
    let pf = aup(view, &ud.users, &p, 1);
    let gp = pf.guarantee.unwrap();
    assert!(gp.eps > 5.99 && gp.eps <= 6.0, "{}", gp.eps);
    // A tiny τ: the concentration score is |U|/ñ = 1 ≪ 4ñ/5 and the run halts at once.
    let mut h = o.clone();
    h.tau = Some(1e-9);
    let hf = aup(view, &ud.users, &h, 2);
    assert_eq!(hf.detail.halted, Some((1, 1)));
    assert_eq!(hf.report.counts.iterations, 1);
    assert_eq!(hf.theta, vec![0.0; 3]);
    assert!(hf
        .guarantee
        .unwrap()
        .assumptions
        .notes
        .iter()
        .any(|n| n.contains("halted")));
    // Phases: k = 2 without use_all_users uses n/4 + n/2 users.
    let mut k2 = o.clone();
    k2.phases = 2;
    let f2 = aup(view, &ud.users, &k2, 3);
    // Phases of 50 and 100 users: with ñ = 50 the margin ñ/5 = 10 of the test is small against
    // the query noise Lap(8/ε_AT) = Lap(4), so a halt within 30 queries is likely.
    match f2.detail.halted {
        None => assert_eq!(f2.report.counts.iterations, 60),
        Some((phase, t)) => assert_eq!(f2.report.counts.iterations as u64, (phase as u64 - 1) * 30 + t),
    }
    // Poisson sub-batches run; fixed-size sub-batches get no guarantee.
    let mut pb = o.clone();
    pb.batch = AupBatch::Users(150.0);
    pb.tau = Some(2.0);
    let pbf = aup(view, &ud.users, &pb, 4);
    assert!(pbf.guarantee.is_some());
    // With the realised batch in the test's threshold, the margin is |U_t|/5 and τ = 4L passes.
    let mut rb = pbf_opts(&o);
    rb.realized_batch = true;
    assert_eq!(aup(view, &ud.users, &rb, 5).detail.halted, None);
    pb.sampler = UserSampler::FixedSize;
    let fs = aup(view, &ud.users, &pb, 4);
    assert!(fs.guarantee.is_none() && fs.refusal().is_some());
}

#[test]
fn aup_validates_inputs() {
    let ud = btl_users_equal(
        20,
        3,
        &[0.5, -0.5],
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(11),
    )
    .unwrap();
    let view = ud.data.view().unwrap();
    let o = AupOptions::new(1.0, 1e-5, 0.5);
    // ‖x‖ = 1 > 2L for L = 0.4: the row is named.
    let mut small = o.clone();
    small.feature_bound = 0.4;
    assert!(matches!(
        aup_rlhf(view, &ud.users, &small, &mut NoiseRng::seeded(0)),
        Err(Error::FeatureBound { row: 0, .. })
    ));
    let name = |f: &dyn Fn(&mut AupOptions)| -> &'static str {
        let mut b = o.clone();
        f(&mut b);
        match aup_rlhf(view, &ud.users, &b, &mut NoiseRng::seeded(0)) {
            Err(Error::InvalidParam { name, .. }) => name,
            other => panic!("expected InvalidParam, got {:?}", other.map(|r| r.theta)),
        }
    };
    assert_eq!(name(&|b| b.eps = -1.0), "eps");
    assert_eq!(name(&|b| b.delta = 0.0), "delta");
    assert_eq!(name(&|b| b.phases = 0), "phases");
    assert_eq!(name(&|b| b.steps = 0), "steps");
    assert_eq!(name(&|b| b.step_size = 0.0), "step-size");
    assert_eq!(name(&|b| b.tau = Some(-1.0)), "tau");
    assert_eq!(name(&|b| b.batch = AupBatch::Users(0.0)), "batch-users");
    assert_eq!(name(&|b| b.feature_bound = f64::INFINITY), "feature-bound");
    // Too many phases for 20 users: the first phase would be empty.
    let mut many = o.clone();
    many.phases = 6;
    assert!(matches!(
        aup_rlhf(view, &ud.users, &many, &mut NoiseRng::seeded(0)),
        Err(Error::Shape(_))
    ));
}

/// The caller's interrupt flag: set before the call, user-wise DP-SGD and AUP-RLHF stop at the
/// first check (no step) with `Interrupted`, the start point (every output rule: an average with
/// no term falls back to the iterate) and no guarantee; never set, a flag changes no bit over
/// more steps than one check interval (256), nor the guarantee.
#[test]
fn interrupt_flag_stops_the_run_and_an_unset_flag_changes_nothing() {
    use privpref::solver::Termination;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let (ud, _) = dpsgd_data();
    let view = ud.data.view().unwrap();
    let unset = || Some(Arc::new(AtomicBool::new(false)));
    let set = || Some(Arc::new(AtomicBool::new(true)));
    let check_stopped = |f: &privpref::model::Fit<UserLevelDetail>, budget: usize, theta0: &[f64]| {
        assert_eq!(f.report.termination, Termination::Interrupted);
        assert_eq!(f.report.counts.iterations, 0);
        assert_eq!(f.guarantee, None);
        let reason = f.no_guarantee.as_ref().unwrap().to_string();
        assert_eq!(
            reason,
            format!(
                "interrupted by the caller after 0 of {budget} steps; the run is incomplete and carries no guarantee"
            )
        );
        assert_eq!(f.theta, theta0);
    };
    for output in [UserOutput::Last, UserOutput::Average, UserOutput::TailAverage] {
        let mut plain = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 5000, 1.0, 0.05);
        plain.output = output;
        plain.theta0 = Some(vec![0.1, -0.2, 0.3]);
        let want = user_dpsgd(view, &ud.users, &plain, &mut NoiseRng::seeded(21)).unwrap();
        let mut o = plain.clone();
        o.interrupt = unset();
        let got = user_dpsgd(view, &ud.users, &o, &mut NoiseRng::seeded(21)).unwrap();
        assert_eq!(got.theta, want.theta);
        assert_eq!(got.guarantee, want.guarantee);
        assert!(got.guarantee.is_some());
        assert_eq!(got.report.termination, Termination::Completed);
        assert_eq!(got.report.counts.iterations, 5000);
        o.interrupt = set();
        let f = user_dpsgd(view, &ud.users, &o, &mut NoiseRng::seeded(21)).unwrap();
        check_stopped(&f, 5000, &[0.1, -0.2, 0.3]);
    }
    for phases in [1, 2] {
        let mut plain = AupOptions::new(4.0, 1e-5, 0.5);
        plain.steps = 4500;
        plain.step_size = 0.01;
        plain.phases = phases;
        plain.set = FeasibleSet::theta_b(1.0).unwrap();
        let want = aup_rlhf(view, &ud.users, &plain, &mut NoiseRng::seeded(22)).unwrap();
        let mut o = plain.clone();
        o.interrupt = unset();
        let got = aup_rlhf(view, &ud.users, &o, &mut NoiseRng::seeded(22)).unwrap();
        assert_eq!(got.theta, want.theta);
        assert_eq!(got.guarantee, want.guarantee);
        assert_eq!(got.detail.halted, want.detail.halted);
        assert_eq!(got.report.counts.iterations, want.report.counts.iterations);
        assert_eq!(got.report.termination, Termination::Completed);
        o.interrupt = set();
        let f = aup_rlhf(view, &ud.users, &o, &mut NoiseRng::seeded(22)).unwrap();
        check_stopped(&f, 4500 * phases, &[0.0; 3]);
        assert_eq!(f.detail.halted, None);
    }
}
