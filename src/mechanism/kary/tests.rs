use super::*;
use crate::mechanism::simulation_rng;

/// `max T[i,j]/T[i',j]` over outputs reachable from some input; `∞` if an output is
/// reachable from one input and not from another.
fn max_ratio(t: &[f64], k: usize) -> f64 {
    let mut worst = 1.0f64;
    for j in 0..k {
        let col: Vec<f64> = (0..k).map(|i| t[i * k + j]).collect();
        let (lo, hi) = col
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
        if hi == 0.0 {
            continue;
        }
        worst = worst.max(if lo == 0.0 { f64::INFINITY } else { hi / lo });
    }
    worst
}

fn rows_sum_to_one(t: &[f64], k: usize) {
    for i in 0..k {
        let s: f64 = t[i * k..(i + 1) * k].iter().sum();
        assert!((s - 1.0).abs() < 1e-14, "row {i} sums to {s}");
    }
}

#[test]
fn krr_matrix_is_exact_and_its_ratio_is_e_eps() {
    for (eps, k) in [(0.1, 2), (1.0, 5), (3.0, 10), (0.5, 256), (800.0, 3)] {
        let m = KaryRr::new(eps, k).unwrap();
        let t = m.transition_matrix();
        rows_sum_to_one(&t, k);
        let e = f64::exp(eps.min(700.0));
        assert!((t[0] - e / (e + k as f64 - 1.0)).abs() < 1e-15 || eps > 700.0);
        if eps < 700.0 {
            let r = max_ratio(&t, k);
            assert!((r / eps.exp() - 1.0).abs() < 1e-12, "K={k} ε={eps}: ratio {r}");
        }
    }
    // K = 2 is binary RR.
    let b = crate::mechanism::RandomizedResponse::new(0.7)
        .unwrap()
        .transition_matrix();
    let t = KaryRr::new(0.7, 2).unwrap().transition_matrix();
    for (a, c) in t.iter().zip(&b) {
        assert!((a - c).abs() < 1e-15);
    }
}

#[test]
fn rrtopk_matrix_ratio_and_special_cases() {
    let prior = [0.1, 0.4, 0.05, 0.3, 0.15];
    assert_eq!(top_k(&prior, 3), vec![1, 3, 4]);
    assert_eq!(
        top_k(&[0.25, 0.25, 0.25, 0.25], 2),
        vec![0, 1],
        "ties: smaller index first"
    );
    for eps in [0.2, 1.0, 4.0] {
        for k in 1..=5 {
            let t = RrTopK::new(eps, k).unwrap().transition_matrix(&prior).unwrap();
            rows_sum_to_one(&t, 5);
            let r = max_ratio(&t, 5);
            assert!(r <= eps.exp() * (1.0 + 1e-12), "k={k} ε={eps}: {r}");
            if k > 1 {
                // Attained: y = ỹ ∈ Y_k against y' ∈ Y_k \ {ỹ}.
                assert!((r / eps.exp() - 1.0).abs() < 1e-12, "k={k} ε={eps}: {r}");
            } else {
                assert_eq!(r, 1.0);
            }
        }
        // k = K is K-RR for any prior.
        let t = RrTopK::new(eps, 5).unwrap().transition_matrix(&prior).unwrap();
        let krr = KaryRr::new(eps, 5).unwrap().transition_matrix();
        for (a, b) in t.iter().zip(&krr) {
            assert!((a - b).abs() < 1e-15);
        }
    }
    assert!(RrTopK::new(1.0, 6).unwrap().transition_matrix(&prior).is_err());
    assert!(RrTopK::new(1.0, 2).unwrap().transition_matrix(&[0.5, 0.6]).is_err());
}

#[test]
fn rr_with_prior_uses_the_paper_formula() {
    // Examples where the paper's k* and the reference code's differ: 3 vs 2, 3 vs 2, 2 vs 1.
    let m = |eps| RrWithPrior::new(eps).unwrap();
    assert_eq!(m(2.0).choose_k(&[0.5, 0.3, 0.1, 0.05, 0.05]).unwrap(), 3);
    assert_eq!(m(1.0).choose_k(&[0.4, 0.35, 0.25]).unwrap(), 3);
    assert_eq!(m(0.5).choose_k(&[0.6, 0.4]).unwrap(), 2);
    // Uniform prior: k* = K (K-RR).
    for (k, eps) in [(2usize, 0.01), (5, 1.0), (10, 5.0), (100, 20.0)] {
        assert_eq!(m(eps).choose_k(&vec![1.0 / k as f64; k]).unwrap(), k);
    }
    // A point-mass prior: k* = 1.
    assert_eq!(m(1.0).choose_k(&[0.0, 1.0, 0.0]).unwrap(), 1);
}

/// Pearson χ² of counts against probabilities (cells of probability 0 must be empty).
fn chi2(counts: &[usize], probs: &[f64], n: usize) -> f64 {
    let mut c = 0.0;
    for (&o, &p) in counts.iter().zip(probs) {
        if p == 0.0 {
            assert_eq!(o, 0, "an impossible output was drawn");
            continue;
        }
        let e = p * n as f64;
        c += (o as f64 - e).powi(2) / e;
    }
    c
}

#[test]
fn draws_follow_the_transition_rows() {
    // Seeded χ² tests, 200 000 draws per input; the bounds are the 1 − 1e-6 quantiles for
    // K − 1 = 4 and k − 1 = 2 degrees of freedom (survival e^{−x/2}(1 + x/2) and e^{−x/2}):
    // 33.4 and 27.7.
    let n = 200_000;
    let mut rng = simulation_rng(4242);
    let krr = KaryRr::new(0.8, 5).unwrap();
    let t = krr.transition_matrix();
    for y in 0..5u8 {
        let out = krr.randomize(&vec![y; n], &mut rng).unwrap();
        let mut counts = [0usize; 5];
        out.iter().for_each(|&o| counts[usize::from(o)] += 1);
        let c = chi2(&counts, &t[usize::from(y) * 5..usize::from(y) * 5 + 5], n);
        assert!(c < 33.4, "K-RR y={y}: χ² = {c}");
    }
    let prior = [0.1, 0.4, 0.05, 0.3, 0.15];
    let top = RrTopK::new(1.5, 3).unwrap();
    let t = top.transition_matrix(&prior).unwrap();
    let priors: Vec<f64> = prior.iter().copied().cycle().take(5 * n).collect();
    for y in 0..5u8 {
        let out = top.randomize(&vec![y; n], &priors, &mut rng).unwrap();
        let mut counts = [0usize; 5];
        out.iter().for_each(|&o| counts[usize::from(o)] += 1);
        let c = chi2(&counts, &t[usize::from(y) * 5..usize::from(y) * 5 + 5], n);
        assert!(c < 27.7, "RRTop-3 y={y}: χ² = {c}");
    }
    let wp = RrWithPrior::new(2.0).unwrap();
    let (out, ks) = wp.randomize(&vec![3; 1000], &priors[..5000], &mut rng).unwrap();
    assert!(ks.iter().all(|&k| k == wp.choose_k(&prior).unwrap()));
    let allowed = top_k(&prior, ks[0]);
    assert!(out.iter().all(|o| allowed.contains(o)));
}

#[test]
fn invalid_inputs_are_typed_errors() {
    assert!(KaryRr::new(0.0, 3).is_err());
    assert!(KaryRr::new(1.0, 1).is_err());
    assert!(KaryRr::new(f64::NAN, 3).is_err());
    let mut rng = simulation_rng(1);
    let e = KaryRr::new(1.0, 3).unwrap().randomize(&[0, 3], &mut rng).unwrap_err();
    assert!(e.to_string().contains("row 1"), "{e}");
    assert!(RrTopK::new(1.0, 0).is_err());
    let top = RrTopK::new(1.0, 2).unwrap();
    assert!(top.randomize(&[0, 1], &[0.5, 0.5, 0.5], &mut rng).is_err());
    assert!(top.randomize(&[0], &[0.5, 0.6], &mut rng).is_err());
    assert!(top.randomize(&[2], &[0.5, 0.5], &mut rng).is_err());
    assert!(RrWithPrior::new(-1.0).is_err());
    assert!(RrWithPrior::new(1.0).unwrap().choose_k(&[f64::NAN, 1.0]).is_err());
}
