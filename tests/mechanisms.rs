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
/// induced channel `p̃₁(t) = σ̄_ε + c_ε σ(t)`, `c_ε = tanh(ε/2)` (spec §2).
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
