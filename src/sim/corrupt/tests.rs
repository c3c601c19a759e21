use super::*;
use crate::mechanism::simulation_rng;

fn grid(n: usize, d: usize) -> Vec<f64> {
    (0..n * d).map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0).collect()
}

#[test]
fn fixed_count_flips_exactly_the_budget_at_distinct_rows() {
    let (n, d) = (1000, 3);
    let x = grid(n, d);
    let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    let mut z = y.clone();
    let a = Adversary::FixedCount { alpha: 0.1 };
    let k = a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(1)).unwrap();
    assert_eq!(k, 100);
    assert_eq!(y.iter().zip(&z).filter(|(a, b)| a != b).count(), 100);
    assert_eq!(a.budget(n), 100);
}

#[test]
fn directional_push_picks_the_largest_projections() {
    let (n, d) = (200, 2);
    let x = grid(n, d);
    let y = vec![0u8; n];
    let v = vec![1.0, -0.5];
    let mut z = y.clone();
    let a = Adversary::DirectionalPush {
        alpha: 0.05,
        direction: v.clone(),
    };
    a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(0)).unwrap();
    let proj: Vec<f64> = x.chunks(d).map(|r| r[0] * v[0] + r[1] * v[1]).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| proj[b].abs().total_cmp(&proj[a].abs()).then(a.cmp(&b)));
    for (rank, &i) in order.iter().enumerate() {
        let expect = if rank < 10 { u8::from(proj[i] > 0.0) } else { 0 };
        assert_eq!(z[i], expect, "row {i} rank {rank}");
    }
}

#[test]
fn informed_push_changes_exactly_the_budget() {
    let (n, d) = (400, 3);
    let x = grid(n, d);
    let y: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let mut z = y.clone();
    let a = Adversary::InformedPush {
        alpha: 0.1,
        direction: vec![0.3, 1.0, -2.0],
    };
    assert_eq!(a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(0)).unwrap(), 40);
}

#[test]
fn constant_and_margin_flip() {
    let (n, d) = (500, 2);
    let x = grid(n, d);
    let y: Vec<u8> = (0..n).map(|i| (i % 2) as u8).collect();
    let mut z = y.clone();
    let a = Adversary::Constant { alpha: 0.2, label: 1 };
    let k = a.corrupt(&x, d, &y, &mut z, &mut simulation_rng(2)).unwrap();
    // 100 rows set to 1: about half were 1 already; every change is 0 -> 1.
    assert!(k > 20 && k < 80, "{k}");
    assert!(y.iter().zip(&z).all(|(&a, &b)| a == b || (a == 0 && b == 1)));
    let theta = vec![1.0, 0.5];
    let mut z = y.clone();
    Adversary::MarginFlip {
        alpha: 0.1,
        theta: theta.clone(),
    }
    .corrupt(&x, d, &y, &mut z, &mut simulation_rng(0))
    .unwrap();
    let m: Vec<f64> = x.chunks(d).map(|r| r[0] + 0.5 * r[1]).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| m[b].abs().total_cmp(&m[a].abs()).then(a.cmp(&b)));
    for (rank, &i) in order.iter().enumerate() {
        let expect = if rank < 50 { u8::from(m[i] < 0.0) } else { y[i] };
        assert_eq!(z[i], expect, "row {i}");
    }
}

#[test]
fn invalid_parameters_are_typed_errors() {
    let x = grid(10, 2);
    let y = vec![0u8; 10];
    let mut z = y.clone();
    let mut rng = simulation_rng(0);
    for a in [
        Adversary::FixedCount { alpha: 0.5 },
        Adversary::FixedCount { alpha: -0.1 },
        Adversary::ObliviousMask { alpha: f64::NAN },
        Adversary::DirectionalPush {
            alpha: 0.1,
            direction: vec![1.0],
        },
        Adversary::DirectionalPush {
            alpha: 0.1,
            direction: vec![0.0, 0.0],
        },
        Adversary::TargetRows {
            rows: vec![10],
            label: 1,
        },
        Adversary::TargetRows {
            rows: vec![1],
            label: 2,
        },
        Adversary::Constant { alpha: 0.1, label: 2 },
        Adversary::MarginFlip {
            alpha: 0.1,
            theta: vec![1.0, 2.0, 3.0],
        },
        Adversary::TargetRows {
            rows: (0..5).collect(),
            label: 1,
        },
    ] {
        assert!(a.corrupt(&x, 2, &y, &mut z, &mut rng).is_err(), "{a:?}");
    }
    assert!(Adversary::FixedCount { alpha: 0.1 }
        .corrupt(&x, 2, &y[..5], &mut z, &mut rng)
        .is_err());
}

#[test]
fn closed_forms_of_the_spec() {
    // Threshold 0.0476 at ε = 0.1, 0.197 at ε = 0.5; ratio (1 + c)/2.
    assert!((ltc_signal_threshold(0.1) - 0.04758).abs() < 1e-4);
    assert!((ltc_signal_threshold(0.5) - 0.19673).abs() < 1e-4);
    assert!((rr_privacy_factor(1.0) - 2.163953).abs() < 1e-6);
    for (eps, r) in [(1.0, 1.582), (0.5, 2.541), (0.1, 10.51)] {
        let (_, _, bc, bl) = oblivious_mask_closed_forms(eps, 0.1);
        assert!((bl / bc - r).abs() < 2e-3, "eps {eps}: {}", bl / bc);
        assert!((bl / bc - (1.0 + rr_privacy_factor(eps)) / 2.0).abs() < 1e-12);
    }
    // At the threshold the LTC flip rate is exactly 1/2.
    for eps in [0.1, 0.5, 1.0, 3.0] {
        let (_, fl, _, _) = oblivious_mask_closed_forms(eps, ltc_signal_threshold(eps));
        assert!((fl - 0.5).abs() < 1e-15);
    }
}

#[test]
fn hidden_design_is_orthogonal_off_the_hidden_rows() {
    let theta = [0.5, -0.5, 0.0, 0.0];
    let e = [0.0, 0.0, 1.0, -1.0];
    let (data, adv) = hidden_direction_design(400, &theta, &e, 0.05, 1.0, &mut simulation_rng(3)).unwrap();
    let Adversary::TargetRows { rows, label } = &adv else {
        panic!("TargetRows expected")
    };
    assert_eq!(rows.len(), 20);
    assert_eq!(*label, 1);
    for (i, r) in data.x.chunks(4).enumerate() {
        let p = (r[2] - r[3]) / 2f64.sqrt();
        if i < 380 {
            assert!(p.abs() < 1e-12);
        } else {
            assert!((p - 1.0).abs() < 1e-12);
        }
    }
}
