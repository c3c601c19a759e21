use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::loss::*;
use privpref::objective::Objective;
use privpref::solver::{newton, Control};

fn rows(spec: &[(&[f64], u8, usize)]) -> (Vec<f64>, Vec<u8>, usize) {
    let mut x = vec![];
    let mut y = vec![];
    let mut n = 0;
    for (r, l, c) in spec {
        for _ in 0..*c {
            x.extend_from_slice(r);
            y.push(*l);
            n += 1;
        }
    }
    (x, y, n)
}

#[test]
fn t1_t3_t5() {
    let l3 = 3f64.ln();
    // T1
    let (x, y, n) = rows(&[
        (&[1., 0., 0.], 1, 3),
        (&[1., 0., 0.], 0, 1),
        (&[0., 1., 0.], 1, 1),
        (&[0., 1., 0.], 0, 3),
        (&[0., 0., 1.], 1, 2),
        (&[0., 0., 1.], 0, 2),
    ]);
    let v = PairwiseView::new(&x, n, 3, &y, None).unwrap();
    let r = newton::solve(
        &Objective::new(v, Logistic),
        &FeasibleSet::theta_b(2.0).unwrap(),
        None,
        &Control::default(),
    )
    .unwrap();
    println!("T1 {:?}", r);
    assert!(r.converged());
    for (a, b) in r.theta.iter().zip([l3, -l3, 0.0]) {
        assert!((a - b).abs() < 1e-10, "{a} {b}");
    }
    // T3
    let (x, y, n) = rows(&[
        (&[-1., 1., 0.], 1, 3),
        (&[-1., 1., 0.], 0, 1),
        (&[0., -1., 1.], 1, 3),
        (&[0., -1., 1.], 0, 1),
        (&[-1., 0., 1.], 1, 9),
        (&[-1., 0., 1.], 0, 1),
    ]);
    let v = PairwiseView::new(&x, n, 3, &y, None).unwrap();
    let r = newton::solve(
        &Objective::new(v, Logistic),
        &FeasibleSet::theta_b(2.0).unwrap(),
        None,
        &Control::default(),
    )
    .unwrap();
    println!("T3 {:?}", r);
    for (a, b) in r.theta.iter().zip([-l3, 0.0, l3]) {
        assert!((a - b).abs() < 1e-10, "{a} {b}");
    }
    // T4 debiased and mle-rr
    let (x, y, n) = rows(&[
        (&[-1., 1., 0.], 1, 5),
        (&[-1., 1., 0.], 0, 3),
        (&[0., -1., 1.], 1, 5),
        (&[0., -1., 1.], 0, 3),
        (&[-1., 0., 1.], 1, 7),
        (&[-1., 0., 1.], 0, 3),
    ]);
    let v = PairwiseView::new(&x, n, 3, &y, None).unwrap();
    let r = newton::solve(
        &Objective::new(v, RrDebiased::new(l3).unwrap()),
        &FeasibleSet::theta_b(2.0).unwrap(),
        None,
        &Control::default(),
    )
    .unwrap();
    println!("T4 deb {:?}", r);
    for (a, b) in r.theta.iter().zip([-l3, 0.0, l3]) {
        assert!((a - b).abs() < 1e-10, "{a} {b}");
    }
    let r = newton::solve(
        &Objective::new(v, RrNoisyChannel::new(l3).unwrap()),
        &FeasibleSet::theta_b(2.0).unwrap(),
        None,
        &Control::default(),
    )
    .unwrap();
    println!("T4 mlerr {:?}", r);
    for (a, b) in r.theta.iter().zip([-l3, 0.0, l3]) {
        assert!((a - b).abs() < 1e-10, "{a} {b}");
    }
    // T5
    let (x, y, n) = rows(&[(&[-1., 1.], 1, 4)]);
    let v = PairwiseView::new(&x, n, 2, &y, None).unwrap();
    let s = 0.5f64.sqrt();
    for set in [FeasibleSet::theta_b(1.0).unwrap()] {
        let r = newton::solve(
            &Objective::new(v, RrDebiased::new(l3).unwrap()),
            &set,
            None,
            &Control::default(),
        )
        .unwrap();
        println!("T5 deb {:?}", r);
        assert!(r.converged());
        for (a, b) in r.theta.iter().zip([-s, s]) {
            assert!((a - b).abs() < 1e-10, "{a} {b}");
        }
        let r = newton::solve(
            &Objective::new(v, Logistic),
            &set,
            None,
            &Control::default(),
        )
        .unwrap();
        println!("T5 mle {:?}", r);
        let r = newton::solve(
            &Objective::new(v, RrNoisyChannel::new(l3).unwrap()),
            &set,
            None,
            &Control::default(),
        )
        .unwrap();
        println!("T5 mlerr {:?}", r);
    }
    for set in [FeasibleSet::SumZero, FeasibleSet::Unconstrained] {
        let r = newton::solve(
            &Objective::new(v, RrDebiased::new(l3).unwrap()),
            &set,
            None,
            &Control::default(),
        )
        .unwrap();
        println!("T5 none deb {:?} {:?}", r.termination, r.theta);
        let r = newton::solve(
            &Objective::new(v, Logistic),
            &set,
            None,
            &Control::default(),
        )
        .unwrap();
        println!(
            "T5 none mle {:?} {:?} it={}",
            r.termination, r.theta, r.iterations
        );
        let r = newton::solve(&Objective::new(v, Probit), &set, None, &Control::default()).unwrap();
        println!(
            "T5 none probit {:?} {:?} it={}",
            r.termination, r.theta, r.iterations
        );
        let r = newton::solve(
            &Objective::new(v, RrNoisyChannel::new(l3).unwrap()),
            &set,
            None,
            &Control::default(),
        )
        .unwrap();
        println!(
            "T5 none mlerr {:?} {:?} it={}",
            r.termination, r.theta, r.iterations
        );
    }
    // T8
    let x = [1., -1., 0., 0., 1., -1., 1., 0., -1., -1., 0., 1.];
    let y = [1, 0, 1, 1];
    let v = PairwiseView::new(&x, 4, 3, &y, None).unwrap();
    let obj = Objective::new(v, Logistic)
        .with_ridge(1.0)
        .unwrap()
        .with_linear_term(vec![0.076672449565, -0.825557483188, 0.748885033623])
        .unwrap();
    let r = newton::solve(
        &obj,
        &FeasibleSet::theta_b(2.0).unwrap(),
        None,
        &Control::default(),
    )
    .unwrap();
    println!("T8 {:?}", r);
}
