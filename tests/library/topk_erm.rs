//! The debiased loss for RRTop-k labels (Ghazi et al. (2021), Sec. G): its expectation over the
//! mechanism's outputs, by exact enumeration with the mechanism's own transition matrix, for
//! every true label — unbiased inside the top set (Lemma 18), the mean loss over the top set
//! outside it — and the debiased risk's gradient against finite differences.

use privpref::data::MulticlassView;
use privpref::estimator::label_sgd::topk_erm::{debiased_topk_expectation, debiased_topk_loss, debiased_topk_risk};
use privpref::estimator::label_sgd::MulticlassModel;
use privpref::loss::PlTop1;
use privpref::mechanism::{simulation_rng, top_k, RrTopK, TopDraw};
use privpref::Error;
use rand::RngExt;

fn random_prior(kk: usize, rng: &mut impl rand::Rng) -> Vec<f64> {
    let w: Vec<f64> = (0..kk).map(|_| rng.random::<f64>() + 1e-3).collect();
    let s: f64 = w.iter().sum();
    w.iter().map(|v| v / s).collect()
}

#[test]
fn expectation_by_enumeration_for_every_true_label() {
    let mut rng = simulation_rng(77);
    let mut outside_biased = 0;
    for _ in 0..60 {
        let kk = rng.random_range(2..=9usize);
        let prior = random_prior(kk, &mut rng);
        // Arbitrary loss values ℓ(u; j): the identities hold for any values.
        let values: Vec<f64> = (0..kk).map(|_| 5.0 * rng.random::<f64>() - 1.0).collect();
        for k in 1..=kk {
            for eps in [0.1, 1.0, 3.0, 9.0] {
                let mech = RrTopK::new(eps, k).unwrap();
                let m = mech.transition_matrix(&prior).unwrap();
                let set = top_k(&prior, k);
                for y in 0..kk {
                    // E[ℓ̃ | y] = Σ_{ỹ ∈ Y_k} P(ỹ | y) ℓ̃(ỹ) (no mass outside Y_k).
                    let mass: f64 = set.iter().map(|&j| m[y * kk + usize::from(j)]).sum();
                    assert!((mass - 1.0).abs() < 1e-14);
                    let e: f64 = set
                        .iter()
                        .map(|&j| m[y * kk + usize::from(j)] * debiased_topk_loss(&values, j, &set, eps).unwrap())
                        .sum();
                    let want = if set.contains(&(y as u8)) {
                        values[y]
                    } else {
                        set.iter().map(|&j| values[usize::from(j)]).sum::<f64>() / k as f64
                    };
                    let scale = values.iter().map(|v| v.abs()).fold(1.0, f64::max)
                        * (1.0 + 2.0 * k as f64 / (-(-eps).exp_m1()));
                    assert!(
                        (e - want).abs() <= 1e-13 * scale,
                        "K {kk} k {k} eps {eps} y {y}: {e} vs {want}"
                    );
                    let closed = debiased_topk_expectation(&values, y as u8, &set).unwrap();
                    assert!((closed - want).abs() <= 1e-15 * want.abs().max(1.0));
                    if !set.contains(&(y as u8)) && (want - values[y]).abs() > 1e-3 {
                        outside_biased += 1;
                    }
                }
            }
        }
    }
    // For k < K the loss is not unbiased for labels outside the top set (it cannot be).
    assert!(outside_biased > 100, "{outside_biased}");
}

#[test]
fn k_equal_to_num_labels_is_exactly_unbiased_and_k_one_is_the_plain_loss() {
    let values = [0.3, 2.0, -0.7, 1.1];
    let prior = [0.1, 0.4, 0.2, 0.3];
    let all = top_k(&prior, 4);
    for eps in [0.2, 2.0] {
        let m = RrTopK::new(eps, 4).unwrap().transition_matrix(&prior).unwrap();
        for y in 0..4 {
            let e: f64 = (0..4u8)
                .map(|j| m[y * 4 + usize::from(j)] * debiased_topk_loss(&values, j, &all, eps).unwrap())
                .sum();
            assert!((e - values[y]).abs() < 1e-12, "eps {eps} y {y}");
        }
        assert_eq!(debiased_topk_loss(&values, 1, &[1], eps).unwrap(), values[1]);
    }
}

#[test]
fn risk_gradient_matches_finite_differences() {
    let (n, d, kk, k) = (40, 3, 5, 3);
    let mut rng = simulation_rng(5);
    let x: Vec<f64> = (0..n * d).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
    let y: Vec<u8> = (0..n).map(|_| rng.random_range(0..kk as u8)).collect();
    let view = MulticlassView::new(&x, n, d, kk, &y).unwrap();
    let model = MulticlassModel::new(view, PlTop1).unwrap();
    let mech = RrTopK::new(1.0, k).unwrap();
    let releases: Vec<TopDraw> = y
        .iter()
        .map(|&yi| mech.sample(yi, &random_prior(kk, &mut rng), &mut rng).unwrap())
        .collect();
    let theta: Vec<f64> = (0..d * kk).map(|_| rng.random::<f64>() - 0.5).collect();
    let (v, g) = debiased_topk_risk(&model, &theta, &releases, 1.0).unwrap();
    assert!(v.is_finite());
    for j in 0..theta.len() {
        let h = 1e-5;
        let mut tp = theta.clone();
        tp[j] += h;
        let mut tm = theta.clone();
        tm[j] -= h;
        let num = (debiased_topk_risk(&model, &tp, &releases, 1.0).unwrap().0
            - debiased_topk_risk(&model, &tm, &releases, 1.0).unwrap().0)
            / (2.0 * h);
        assert!((g[j] - num).abs() < 1e-8, "coordinate {j}: {} vs {num}", g[j]);
    }
    // Typed errors: wrong lengths, a release outside its set, a repeated label.
    assert!(matches!(
        debiased_topk_risk(&model, &theta[1..], &releases, 1.0),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        debiased_topk_risk(&model, &theta, &releases[1..], 1.0),
        Err(Error::Shape(_))
    ));
    let mut bad = releases.clone();
    bad[3] = TopDraw {
        label: 4,
        set: vec![0, 1, 2],
    };
    assert!(matches!(
        debiased_topk_risk(&model, &theta, &bad, 1.0),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        debiased_topk_loss(&[1.0, 2.0, 3.0], 0, &[0, 0], 1.0),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        debiased_topk_loss(&[1.0, f64::NAN], 0, &[0, 1], 1.0),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        debiased_topk_loss(&[1.0, 2.0], 0, &[0, 1], 0.0),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        debiased_topk_expectation(&[1.0, 2.0], 2, &[0]),
        Err(Error::InvalidParam { .. })
    ));
}
