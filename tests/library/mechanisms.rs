//! Mechanisms and synthetic data: exact privacy of the transition matrix, statistical checks of
//! the sampler (seeded, fast sizes), reproducibility, RNG policy, input validation.
//!
//! Run with `--nocapture` to see the measured numbers (ratio errors, flip rates, z-scores).

use privpref::data::PairwiseData;
use privpref::error::{DataErrorKind, Location};
use privpref::mechanism::{secure_rng, simulation_rng, Mechanism, RandomizedResponse, SecureRng, SimRng};
use privpref::sim::{btl_pairs, theta_star, thurstone_pairs};
use privpref::Error;
use rand::Rng;

const LN3: f64 = 1.098_612_288_668_109_8;
const PRIVACY_EPS: [f64; 6] = [1e-6, 0.1, 1.0, LN3, 10.0, 700.0];

// ---------------------------------------------------------------------------------------------
// Exact privacy of the transition matrix
// ---------------------------------------------------------------------------------------------

#[test]
fn rr_transition_matrix_is_exactly_eps_ldp() {
    let mut worst = 0.0f64;
    for &eps in &PRIVACY_EPS {
        let rr = RandomizedResponse::new(eps).unwrap();
        assert_eq!(rr.eps(), eps);
        let k = rr.num_labels();
        assert_eq!(k, 2);
        let t = rr.transition_matrix();
        assert_eq!(t.len(), k * k);
        let bound = eps.exp();
        for i in 0..k {
            let row_sum: f64 = t[i * k..(i + 1) * k].iter().sum();
            assert!(
                (row_sum - 1.0).abs() <= 2.0 * f64::EPSILON,
                "eps={eps}: row {i} sums to {row_sum}"
            );
            for j in 0..k {
                assert!(t[i * k + j] > 0.0, "eps={eps}: T[{i},{j}] = 0");
            }
        }
        // For every output j and every pair of inputs (i, i'): T[i,j]/T[i',j] <= e^eps.
        let mut max_ratio = 0.0f64;
        for j in 0..k {
            for i in 0..k {
                for i2 in 0..k {
                    let r = t[i * k + j] / t[i2 * k + j];
                    assert!(
                        r <= bound * (1.0 + 1e-14),
                        "eps={eps}: T[{i},{j}]/T[{i2},{j}] = {r} > e^eps = {bound}"
                    );
                    max_ratio = max_ratio.max(r);
                }
            }
        }
        // ... with equality attained (the mechanism is not more private than claimed).
        let rel = (max_ratio / bound - 1.0).abs();
        assert!(
            rel <= 1e-14,
            "eps={eps}: max ratio {max_ratio} vs e^eps {bound}: rel err {rel:e}"
        );
        // Stable flip probability, never 1 − σ(ε): relative accuracy even at ε = 700.
        let flip_ref = 1.0 / (1.0 + eps.exp());
        assert!((rr.flip_probability() / flip_ref - 1.0).abs() <= 1e-15, "eps={eps}");
        assert_eq!(rr.keep_probability(), t[0]);
        assert_eq!(rr.flip_probability(), t[1]);
        println!(
            "eps = {eps:>10}: keep = {:.17e}, flip = {:.17e}, |max ratio / e^eps - 1| = {rel:.3e}",
            t[0], t[1]
        );
        worst = worst.max(rel);
    }
    println!("worst relative ratio error over eps in {PRIVACY_EPS:?}: {worst:.3e}");
}

// ---------------------------------------------------------------------------------------------
// Statistical behaviour of the sampler
// ---------------------------------------------------------------------------------------------

/// Observed flip rates for constant inputs: within 5 binomial standard deviations of σ(−ε).
#[test]
fn rr_flip_rate_matches_sigma_minus_eps() {
    let n = 1_000_000usize;
    let mut rng = simulation_rng(20_240_501);
    for &eps in &[0.1, 0.5, 1.0, LN3, 3.0, 10.0] {
        let rr = RandomizedResponse::new(eps).unwrap();
        let p = rr.flip_probability();
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        for label in [0u8, 1] {
            let out = rr.randomize(&vec![label; n], &mut rng).unwrap();
            let flips = out.iter().filter(|&&z| z != label).count();
            let z = (flips as f64 - n as f64 * p) / sd;
            println!(
                "eps = {eps:.4}, y = {label}: flip rate {:.6} (sigma(-eps) = {p:.6}), z = {z:+.2}",
                flips as f64 / n as f64
            );
            assert!(z.abs() < 5.0, "eps={eps}, y={label}: {flips} flips of {n}, z = {z}");
        }
    }
}

/// Pearson chi-square of the 2×2 empirical transition matrix (2 degrees of freedom: one per
/// input row), inputs drawn at random; threshold 27.63 = the 1e-6 upper quantile of χ²₂.
#[test]
fn rr_empirical_transition_matrix_chi_square() {
    let n = 1_000_000usize;
    let mut rng = simulation_rng(99);
    let labels: Vec<u8> = (0..n).map(|_| (rng.next_u64() >> 63) as u8).collect();
    for &eps in &[0.1, 1.0, LN3, 5.0] {
        let rr = RandomizedResponse::new(eps).unwrap();
        let out = rr.randomize(&labels, &mut rng).unwrap();
        let mut counts = [[0usize; 2]; 2];
        for (&y, &z) in labels.iter().zip(&out) {
            counts[y as usize][z as usize] += 1;
        }
        let t = rr.transition_matrix();
        let mut chi2 = 0.0;
        for i in 0..2 {
            let row: usize = counts[i].iter().sum();
            for j in 0..2 {
                let e = row as f64 * t[i * 2 + j];
                chi2 += (counts[i][j] as f64 - e).powi(2) / e;
            }
        }
        println!("eps = {eps:.4}: counts {counts:?}, chi2 = {chi2:.3} (df 2)");
        assert!(chi2 < 27.63, "eps={eps}: chi2 = {chi2}");
    }
}

// ---------------------------------------------------------------------------------------------
// Reproducibility and the RNG policy
// ---------------------------------------------------------------------------------------------

#[test]
fn rr_same_seed_same_output_different_seed_differs() {
    let rr = RandomizedResponse::new(1.0).unwrap();
    let labels: Vec<u8> = (0..10_000).map(|i| (i % 2) as u8).collect();
    let a = rr.randomize(&labels, &mut simulation_rng(1)).unwrap();
    let b = rr.randomize(&labels, &mut simulation_rng(1)).unwrap();
    let c = rr.randomize(&labels, &mut simulation_rng(2)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    // Works through a trait object for the RNG too (R: ?Sized).
    let dyn_rng: &mut dyn rand::Rng = &mut simulation_rng(1);
    assert_eq!(rr.randomize(&labels, dyn_rng).unwrap(), a);
}

#[test]
fn secure_rng_works_and_streams_differ() {
    let mut r1: SecureRng = secure_rng().unwrap();
    let mut r2: SecureRng = secure_rng().unwrap();
    let a: Vec<u64> = (0..4).map(|_| r1.next_u64()).collect();
    let b: Vec<u64> = (0..4).map(|_| r2.next_u64()).collect();
    assert_ne!(a, b);
    let rr = RandomizedResponse::new(LN3).unwrap();
    let n = 100_000;
    let out = rr.randomize(&vec![1u8; n], &mut r1).unwrap();
    let flips = out.iter().filter(|&&z| z == 0).count() as f64;
    let z = (flips - n as f64 * 0.25) / (n as f64 * 0.25 * 0.75).sqrt();
    println!(
        "secure_rng, eps = ln 3: flip rate {:.5} (0.25), z = {z:+.2}",
        flips / n as f64
    );
    assert!(z.abs() < 5.0);
}

// ---------------------------------------------------------------------------------------------
// Input validation
// ---------------------------------------------------------------------------------------------

#[test]
fn rr_rejects_invalid_eps() {
    for bad in [
        0.0,
        -0.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -f64::MIN_POSITIVE,
    ] {
        match RandomizedResponse::new(bad) {
            Err(Error::InvalidParam { name: "eps", .. }) => {}
            other => panic!("eps = {bad}: expected InvalidParam, got {other:?}"),
        }
    }
    assert!(RandomizedResponse::new(f64::MIN_POSITIVE).is_ok());
}

#[test]
fn rr_rejects_out_of_range_label_with_row() {
    let rr = RandomizedResponse::new(1.0).unwrap();
    let e = rr.randomize(&[0, 1, 1, 2, 0, 3], &mut simulation_rng(0)).unwrap_err();
    match e {
        Error::Data {
            at: Location { row: 3, col: None },
            kind: DataErrorKind::LabelOutOfRange { label: 2, bound: 2 },
            ..
        } => {}
        other => panic!("expected Data error at row 3, got {other:?}"),
    }
    assert!(e.to_string().contains("row 3"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Synthetic data
// ---------------------------------------------------------------------------------------------

#[test]
fn theta_star_sum_zero_and_exact_norm() {
    let mut rng = simulation_rng(2024);
    let mut worst_norm = 0.0f64;
    let mut worst_sum = 0.0f64;
    for d in [2usize, 3, 5, 10, 50] {
        for norm in [0.1, 1.0, 3.0, 1e3] {
            let t = theta_star(d, norm, true, &mut rng).unwrap();
            let len = t.iter().map(|v| v * v).sum::<f64>().sqrt();
            let sum: f64 = t.iter().sum();
            worst_norm = worst_norm.max((len / norm - 1.0).abs());
            worst_sum = worst_sum.max(sum.abs() / norm);
            assert!((len / norm - 1.0).abs() < 1e-14);
            assert!(sum.abs() / norm < 1e-14 * d as f64);
            let t = theta_star(d, norm, false, &mut rng).unwrap();
            let len = t.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!((len / norm - 1.0).abs() < 1e-14);
        }
    }
    println!("theta_star: worst |norm/target - 1| = {worst_norm:.3e}, worst |sum|/norm = {worst_sum:.3e}");
    assert!(matches!(
        theta_star(1, 1.0, true, &mut rng),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        theta_star(3, f64::NAN, true, &mut rng),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        theta_star(3, 0.0, true, &mut rng),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        theta_star(3, f64::INFINITY, true, &mut rng),
        Err(Error::InvalidParam { .. })
    ));
}

/// Compares the labels with their model probabilities `p_i = link(x_iᵀθ)`, conditionally on the
/// drawn features: overall, in four score bins, and along the score (`Σ (y−p) t`), each as a
/// z-score with the exact conditional variance `Σ p(1−p)` (resp. `Σ p(1−p) t²`).
fn check_labels_against_link(name: &str, data: &PairwiseData, theta: &[f64], link: fn(f64) -> f64) {
    let d = data.d;
    let scores: Vec<f64> = data
        .x
        .chunks(d)
        .map(|r| r.iter().zip(theta).map(|(a, b)| a * b).sum())
        .collect();
    let zscore = |sel: &dyn Fn(f64) -> f64| {
        let (mut num, mut var) = (0.0, 0.0);
        for (&t, &y) in scores.iter().zip(&data.y) {
            let p = link(t);
            let w = sel(t);
            num += w * (y as f64 - p);
            var += w * w * p * (1.0 - p);
        }
        num / var.sqrt()
    };
    let n = data.n as f64;
    let mean_y = data.y.iter().map(|&y| y as f64).sum::<f64>() / n;
    let mean_p = scores.iter().map(|&t| link(t)).sum::<f64>() / n;
    let z_all = zscore(&|_| 1.0);
    println!("{name}: mean y = {mean_y:.5}, mean link(x'theta) = {mean_p:.5}, z = {z_all:+.2}");
    assert!(z_all.abs() < 5.0, "{name}: overall z = {z_all}");
    let z_slope = zscore(&|t| t);
    println!("{name}: sum (y - p) t: z = {z_slope:+.2}");
    assert!(z_slope.abs() < 5.0, "{name}: slope z = {z_slope}");
    for (lo, hi) in [(f64::NEG_INFINITY, -1.0), (-1.0, 0.0), (0.0, 1.0), (1.0, f64::INFINITY)] {
        let z = zscore(&|t| if t >= lo && t < hi { 1.0 } else { 0.0 });
        let (cnt, sy, sp) = scores
            .iter()
            .zip(&data.y)
            .filter(|(&t, _)| t >= lo && t < hi)
            .fold((0usize, 0.0, 0.0), |(c, sy, sp), (&t, &y)| {
                (c + 1, sy + y as f64, sp + link(t))
            });
        println!(
            "{name}: t in [{lo}, {hi}): n = {cnt}, mean y = {:.4}, mean p = {:.4}, z = {z:+.2}",
            sy / cnt as f64,
            sp / cnt as f64
        );
        assert!(z.abs() < 5.0, "{name}: bin [{lo},{hi}) z = {z}");
    }
}

fn sigmoid(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

fn probit(t: f64) -> f64 {
    0.5 * libm::erfc(-t / std::f64::consts::SQRT_2)
}

fn check_features(name: &str, data: &PairwiseData) {
    // x = φ¹ − φ⁰ ~ N(0, 2 I): per-coordinate mean 0 and variance 2 (5σ bounds).
    let (n, d) = (data.n, data.d);
    for j in 0..d {
        let col = data.x.iter().skip(j).step_by(d);
        let (s, ss) = col.fold((0.0, 0.0), |(s, ss), &v| (s + v, ss + v * v));
        let mean = s / n as f64;
        let var = ss / n as f64 - mean * mean;
        // sd(mean) = sqrt(2/n); sd(var) ≈ 2·sqrt(2/n) for a Gaussian.
        let tol = 5.0 * (2.0 / n as f64).sqrt();
        assert!(mean.abs() < tol, "{name}: column {j} mean {mean}");
        assert!((var - 2.0).abs() < 2.0 * tol, "{name}: column {j} variance {var}");
    }
}

#[test]
fn btl_pairs_label_frequencies_match_model() {
    let mut rng = simulation_rng(7);
    let theta = theta_star(5, 2.0, true, &mut rng).unwrap();
    let data = btl_pairs(200_000, &theta, &mut rng).unwrap();
    assert_eq!(
        (data.n, data.d, data.x.len(), data.y.len()),
        (200_000, 5, 1_000_000, 200_000)
    );
    assert!(data.weights.is_none());
    data.view().unwrap();
    check_features("btl", &data);
    check_labels_against_link("btl", &data, &theta, sigmoid);
}

#[test]
fn thurstone_pairs_label_frequencies_match_model() {
    let mut rng = simulation_rng(8);
    let theta = theta_star(5, 1.0, false, &mut rng).unwrap();
    let data = thurstone_pairs(200_000, &theta, &mut rng).unwrap();
    data.view().unwrap();
    check_features("thurstone", &data);
    check_labels_against_link("thurstone", &data, &theta, probit);
    // The probit and logistic links differ enough to be told apart at this n: the BTL link on
    // Thurstone data must fail the slope check (a sanity check that the test has power).
    let d = data.d;
    let (mut num, mut var) = (0.0, 0.0);
    for (r, &y) in data.x.chunks(d).zip(&data.y) {
        let t: f64 = r.iter().zip(&theta).map(|(a, b)| a * b).sum();
        let p = sigmoid(t);
        num += (y as f64 - p) * t;
        var += p * (1.0 - p) * t * t;
    }
    let z_wrong = num / var.sqrt();
    println!("thurstone data under the BTL link: slope z = {z_wrong:+.1}");
    assert!(z_wrong.abs() > 5.0);
}

#[test]
fn generators_are_reproducible_by_seed_and_nested() {
    let theta = [0.6, -0.2, -0.4];
    for generator in [btl_pairs::<SimRng>, thurstone_pairs::<SimRng>] {
        let a = generator(1000, &theta, &mut simulation_rng(5)).unwrap();
        let b = generator(1000, &theta, &mut simulation_rng(5)).unwrap();
        let c = generator(1000, &theta, &mut simulation_rng(6)).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.x, c.x);
        assert_ne!(a.y, c.y);
        // First m rows of an n-sample draw = the m-sample draw (documented draw order).
        let m = generator(300, &theta, &mut simulation_rng(5)).unwrap();
        assert_eq!(&a.x[..900], &m.x[..]);
        assert_eq!(&a.y[..300], &m.y[..]);
    }
    // Same generator state → same features for both links.
    let a = btl_pairs(100, &theta, &mut simulation_rng(5)).unwrap();
    let b = thurstone_pairs(100, &theta, &mut simulation_rng(5)).unwrap();
    assert_eq!(a.x, b.x);
    // theta_star too.
    let t1 = theta_star(7, 1.0, true, &mut simulation_rng(3)).unwrap();
    let t2 = theta_star(7, 1.0, true, &mut simulation_rng(3)).unwrap();
    assert_eq!(t1, t2);
}

#[test]
fn generators_reject_invalid_input() {
    let mut rng = simulation_rng(0);
    assert!(matches!(
        btl_pairs(0, &[1.0], &mut rng),
        Err(Error::InvalidParam { name: "n", .. })
    ));
    assert!(matches!(
        btl_pairs(5, &[], &mut rng),
        Err(Error::InvalidParam { name: "theta", .. })
    ));
    assert!(matches!(
        thurstone_pairs(5, &[f64::NAN], &mut rng),
        Err(Error::InvalidParam { name: "theta", .. })
    ));
}

/// End to end: simulate, privatise once, and check the privatised label rate matches the
/// induced channel `p̃₁(t) = σ̄_ε + c_ε σ(t)`, `c_ε = tanh(ε/2)` (Chowdhury, Zhou & Natarajan
/// (2024), eq. 2).
#[test]
fn privatised_btl_labels_follow_the_induced_channel() {
    const EPS: f64 = 0.5;
    fn induced(t: f64) -> f64 {
        sigmoid(-EPS) + (0.5 * EPS).tanh() * sigmoid(t)
    }
    let mut rng = simulation_rng(31);
    let theta = theta_star(4, 1.5, true, &mut rng).unwrap();
    let data = btl_pairs(200_000, &theta, &mut rng).unwrap();
    let rr = RandomizedResponse::new(EPS).unwrap();
    let noisy = rr.randomize(&data.y, &mut rng).unwrap();
    let noisy_data = PairwiseData { y: noisy, ..data };
    check_labels_against_link("btl + RR(0.5)", &noisy_data, &theta, induced);
}

// ---------------------------------------------------------------------------------------------
// K-ary mechanisms of Ghazi et al. (2021) and the discrete Laplace of its histogram prior
// ---------------------------------------------------------------------------------------------

use privpref::mechanism::{top_k, DiscreteLaplace, KaryRr, RrTopK, RrWithPrior};

/// `max_{y,y'} T[y,ỹ]/T[y',ỹ]` over outputs reachable from every input (`∞` if some output is
/// reachable from one input only).
fn max_likelihood_ratio(t: &[f64], k: usize) -> f64 {
    let mut worst = 1.0f64;
    for j in 0..k {
        let col: Vec<f64> = (0..k).map(|i| t[i * k + j]).collect();
        let hi = col.iter().cloned().fold(0.0, f64::max);
        let lo = col.iter().cloned().fold(f64::INFINITY, f64::min);
        if hi > 0.0 {
            worst = worst.max(if lo > 0.0 { hi / lo } else { f64::INFINITY });
        }
    }
    worst
}

#[test]
fn krr_matrix_reference_values() {
    // Rows sum to 1, the ratio is e^ε exactly; K = 10: ε = 1 diagonal 0.2319693,
    // off-diagonal 0.0853367; ε = 2 diagonal 0.4508531.
    for (k, eps) in [(2usize, 1.0), (10, 1.0), (10, 2.0), (100, 4.0)] {
        let t = KaryRr::new(eps, k).unwrap().transition_matrix();
        for i in 0..k {
            assert!((t[i * k..(i + 1) * k].iter().sum::<f64>() - 1.0).abs() < 1e-13);
        }
        let r = max_likelihood_ratio(&t, k);
        assert!((r / eps.exp() - 1.0).abs() < 1e-14, "K={k} ε={eps}: {r}");
    }
    let m = KaryRr::new(1.0, 10).unwrap();
    assert!((m.keep_probability() - 0.231_969_3).abs() < 1e-7);
    assert!((m.other_probability() - 0.085_336_7).abs() < 1e-7);
    assert!((KaryRr::new(2.0, 10).unwrap().keep_probability() - 0.450_853_1).abs() < 1e-7);
}

#[test]
fn rrtopk_ratio_over_random_priors() {
    // 200 random priors, K ∈ 2..11, ε ∈ {0.1, …, 8}, every k: the largest likelihood ratio
    // is e^ε for k ≥ 2 and 1 for k = 1; no mass outside Y_k; RR-with-prior's matrix likewise.
    let mut rng = simulation_rng(2002);
    let epss = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0];
    let mut worst = 0.0f64;
    for case in 0..200 {
        let k = 2 + case % 10;
        let eps = epss[case % epss.len()];
        let raw: Vec<f64> = (0..k)
            .map(|_| -(privpref::mechanism::uniform_f64(&mut rng) + 1e-12).ln())
            .collect();
        let s: f64 = raw.iter().sum();
        let prior: Vec<f64> = raw.iter().map(|v| v / s).collect();
        for kk in 1..=k {
            let t = RrTopK::new(eps, kk).unwrap().transition_matrix(&prior).unwrap();
            let top = top_k(&prior, kk);
            for y in 0..k {
                for j in 0..k {
                    if !top.contains(&(j as u8)) {
                        assert_eq!(t[y * k + j], 0.0);
                    }
                }
            }
            let r = max_likelihood_ratio(&t, k);
            let want = if kk == 1 { 1.0 } else { eps.exp() };
            worst = worst.max((r / want - 1.0).abs());
        }
        let t = RrWithPrior::new(eps).unwrap().transition_matrix(&prior).unwrap();
        assert!(max_likelihood_ratio(&t, k) <= eps.exp() * (1.0 + 1e-14));
    }
    println!("RRTop-k: worst relative error of the ratio against e^ε (or 1) = {worst:.2e}");
    assert!(worst < 1e-14);
    // A worked example: p = (.5,.3,.1,.05,.05), ε = 2, k = 3.
    let p = [0.5, 0.3, 0.1, 0.05, 0.05];
    let t = RrTopK::new(2.0, 3).unwrap().transition_matrix(&p).unwrap();
    assert!((t[0] - 0.786_986_0).abs() < 1e-7);
    assert!((t[1] - 0.106_507_0).abs() < 1e-7);
    assert!((t[3 * 5] - 1.0 / 3.0).abs() < 1e-15);
}

#[test]
fn rr_with_prior_k_star_spec_values() {
    // k* by the paper's formula (Ghazi et al. 2021, main paper Alg. 2).
    let p = [0.5, 0.3, 0.1, 0.05, 0.05];
    let check = |eps: f64, prior: &[f64], want_w: &[f64], want_k: usize| {
        let m = RrWithPrior::new(eps).unwrap();
        let w = m.weights(prior).unwrap();
        for (a, b) in w.iter().zip(want_w) {
            assert!((a - b).abs() < 5e-5, "ε={eps}: w = {w:?}");
        }
        let k = m.choose_k(prior).unwrap();
        assert_eq!(k, want_k, "ε={eps}");
        // Σ_y p_y P[ỹ = y | y] = w_{k*}.
        let t = m.transition_matrix(prior).unwrap();
        let kk = prior.len();
        let hit: f64 = (0..kk).map(|y| prior[y] * t[y * kk + y]).sum();
        assert!((hit - w[k - 1]).abs() < 1e-15, "{hit} vs {}", w[k - 1]);
    };
    check(1.0, &p, &[0.5, 0.5848, 0.5185, 0.4516, 0.4046], 2);
    check(2.0, &p, &[0.5, 0.7046, 0.7083, 0.6757, 0.6488], 3);
    assert_eq!(RrWithPrior::new(0.1).unwrap().choose_k(&p).unwrap(), 1);
    check(0.5, &[0.9, 0.05, 0.05], &[0.9, 0.5913, 0.4519], 1);
    let u = vec![0.1; 10];
    let m = RrWithPrior::new(2.0).unwrap();
    assert_eq!(m.choose_k(&u).unwrap(), 10);
    assert!((m.weights(&u).unwrap()[9] - 0.450_853_1).abs() < 1e-7);
}

#[test]
fn single_label_draws_follow_the_transition_rows() {
    // The per-label draws used by LP-RR-SGD (one implementation with `randomize`: the same
    // coins give the same outputs) and their frequencies (χ², 1 − 1e-6 quantiles).
    let (k, n) = (6usize, 120_000usize);
    let krr = KaryRr::new(0.9, k).unwrap();
    let mut a = simulation_rng(5);
    let mut b = simulation_rng(5);
    let labels: Vec<u8> = (0..500).map(|i| (i % k) as u8).collect();
    let batch = krr.randomize(&labels, &mut a).unwrap();
    let single: Vec<u8> = labels.iter().map(|&y| krr.sample(y, &mut b).unwrap()).collect();
    assert_eq!(batch, single);
    let prior = [0.05, 0.3, 0.25, 0.2, 0.15, 0.05];
    let wp = RrWithPrior::new(1.5).unwrap();
    let t = wp.transition_matrix(&prior).unwrap();
    let mut rng = simulation_rng(6);
    for y in 0..k as u8 {
        let mut counts = vec![0usize; k];
        for _ in 0..n {
            let d = wp.sample(y, &prior, &mut rng).unwrap();
            assert_eq!(d.set, top_k(&prior, wp.choose_k(&prior).unwrap()));
            counts[usize::from(d.label)] += 1;
        }
        let mut chi2 = 0.0;
        let mut df = 0;
        for j in 0..k {
            let e = t[usize::from(y) * k + j] * n as f64;
            if e == 0.0 {
                assert_eq!(counts[j], 0);
            } else {
                chi2 += (counts[j] as f64 - e).powi(2) / e;
                df += 1;
            }
        }
        // df − 1 ≤ 4 degrees of freedom: 1 − 1e-6 quantile of χ²_4 is 33.4.
        assert!(df <= 5 && chi2 < 33.4, "y = {y}: χ² = {chi2} (df {})", df - 1);
    }
    assert!(krr.sample(6, &mut rng).is_err());
    assert!(wp.sample(0, &[0.5, 0.6], &mut rng).is_err());
}

#[test]
fn discrete_laplace_is_exact_in_distribution() {
    // 10⁶ draws against the pmf tanh(a/2)e^{−a|z|}: χ² over the bins
    // |z| ≤ z_max (each sign) plus two tails; mean 0 and variance 2e^{−a}/(1−e^{−a})².
    for (num, den) in [(2u64, 1u64), (40, 1), (3, 7)] {
        let dl = DiscreteLaplace::with_scale(num, den).unwrap();
        let a = dl.a();
        let mut rng = simulation_rng(900 + num);
        let m = 1_000_000;
        let draws = dl.sample_n(m, &mut rng);
        let zmax = ((-(1e-5f64).ln()) / a).ceil() as i64; // tail mass ~1e-5
        let mut counts = std::collections::HashMap::new();
        let (mut s1, mut s2) = (0.0, 0.0);
        for &z in &draws {
            let key = z.clamp(-zmax - 1, zmax + 1);
            *counts.entry(key).or_insert(0usize) += 1;
            s1 += z as f64;
            s2 += (z as f64).powi(2);
        }
        let mut chi2 = 0.0;
        let mut cells = 0;
        let tail = |zz: i64| -> f64 { (-a * zz as f64).exp() / (1.0 + (-a).exp()) }; // P(Z ≥ zz), zz ≥ 1
        let mut pooled_e = 0.0;
        let mut pooled_o = 0.0;
        for z in -zmax - 1..=zmax + 1 {
            let p = if z.abs() == zmax + 1 { tail(zmax + 1) } else { dl.pmf(z) };
            let e = p * m as f64;
            let o = *counts.get(&z).unwrap_or(&0) as f64;
            if e < 5.0 {
                pooled_e += e;
                pooled_o += o;
                continue;
            }
            chi2 += (o - e).powi(2) / e;
            cells += 1;
        }
        if pooled_e > 0.0 {
            chi2 += (pooled_o - pooled_e).powi(2) / pooled_e.max(1e-300);
            cells += 1;
        }
        let df = (cells - 1) as f64;
        // Wilson–Hilferty 1 − 1e-6 quantile of χ²_df (z = 4.753).
        let q = df * (1.0 - 2.0 / (9.0 * df) + 4.753 * (2.0 / (9.0 * df)).sqrt()).powi(3);
        let mean = s1 / m as f64;
        let var = s2 / m as f64 - mean * mean;
        let want_var = 2.0 * (-a).exp() / (1.0 - (-a).exp()).powi(2);
        println!("scale {num}/{den}: χ² = {chi2:.1} on {df} df (limit {q:.1}); mean {mean:.4}, variance {var:.4} vs {want_var:.4}");
        assert!(chi2 < q, "χ² {chi2} ≥ {q}");
        assert!(mean.abs() < 5.0 * (want_var / m as f64).sqrt());
        assert!((var / want_var - 1.0).abs() < 0.02);
    }
    // The privacy ratio of the pmf: e^a for a unit shift (1.0253151 for a = 0.025).
    let dl = DiscreteLaplace::with_scale(40, 1).unwrap();
    for z in -5..5 {
        let r = dl.pmf(z) / dl.pmf(z + 1);
        assert!((r.max(1.0 / r) - 0.025f64.exp()).abs() < 1e-12);
    }
    assert!((dl.pmf(0) / dl.pmf(1) - 1.025_315_1).abs() < 1e-7);
    // Calibration for the histogram prior: ε_p with sensitivity 2 ⇒ a ≤ ε_p/2.
    let h = DiscreteLaplace::for_privacy(0.05, 2).unwrap();
    assert!(h.a() <= 0.025 && h.a() > 0.025 * (1.0 - 1e-5));
}
