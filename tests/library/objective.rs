//! The objective's scaling, derivatives and caches against independent computations.

use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, Loss, Probit, RrDebiased, RrNoisyChannel};
use privpref::objective::{Eval, Objective};
use privpref::solver::{newton, Control};

fn data(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<u8>, Vec<f64>) {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let x: Vec<f64> = (0..n * d).map(|_| next() * 2.0).collect();
    let y: Vec<u8> = (0..n).map(|_| (next() > 0.0) as u8).collect();
    let w: Vec<f64> = (0..n).map(|_| next() + 0.6).collect();
    (x, y, w)
}

/// F by a plain scalar loop over the loss's reference scalar functions.
#[allow(clippy::too_many_arguments)]
fn naive_value<L: Loss>(
    loss: &L,
    x: &[f64],
    y: &[u8],
    w: &[f64],
    d: usize,
    beta: f64,
    b: &[f64],
    theta: &[f64],
) -> f64 {
    let wsum: f64 = w.iter().sum();
    let mut s = 0.0;
    for i in 0..y.len() {
        let t: f64 = (0..d).map(|j| x[i * d + j] * theta[j]).sum();
        s += w[i] * loss.value(t, y[i]);
    }
    let pen =
        0.5 * beta * theta.iter().map(|v| v * v).sum::<f64>() + b.iter().zip(theta).map(|(a, c)| a * c).sum::<f64>();
    (s + pen) / wsum
}

fn check_loss<L: Loss>(loss: L, d: usize) {
    let n = 257;
    let (x, y, w) = data(n, d, 7);
    let view = PairwiseView::new(&x, n, d, &y, Some(&w)).unwrap();
    let b: Vec<f64> = (0..d).map(|j| 0.3 * (j % 7) as f64 - 0.7).collect();
    let beta = 1.7;
    let obj = Objective::new(view, loss.clone())
        .with_ridge(beta)
        .unwrap()
        .with_linear_term(b.clone())
        .unwrap();
    let theta: Vec<f64> = (0..d).map(|j| 0.4 - 0.15 * (j % 6) as f64).collect();
    let mut ev = Eval::new(n, d);
    obj.evaluate(&theta, &mut ev);
    let f_naive = naive_value(&loss, &x, &y, &w, d, beta, &b, &theta);
    assert!(
        (ev.value - f_naive).abs() <= 1e-13 * f_naive.abs().max(1.0),
        "{}: value {} vs {}",
        loss.name(),
        ev.value,
        f_naive
    );
    // Gradient vs central differences of the naive value.
    let h = 1e-6;
    for j in 0..d {
        let (mut tp, mut tm) = (theta.clone(), theta.clone());
        tp[j] += h;
        tm[j] -= h;
        let fd = (naive_value(&loss, &x, &y, &w, d, beta, &b, &tp) - naive_value(&loss, &x, &y, &w, d, beta, &b, &tm))
            / (2.0 * h);
        assert!(
            (ev.grad[j] - fd).abs() <= 1e-7 * fd.abs().max(1.0),
            "{}: grad[{j}] {} vs fd {}",
            loss.name(),
            ev.grad[j],
            fd
        );
    }
    // Hessian vs central differences of the gradient; hess_vec vs Hessian.
    let mut hm = vec![0.0; d * d];
    obj.hessian_into(&ev, &mut hm);
    let mut ep = Eval::new(n, d);
    let mut em = Eval::new(n, d);
    for j in 0..d {
        let (mut tp, mut tm) = (theta.clone(), theta.clone());
        tp[j] += h;
        tm[j] -= h;
        obj.evaluate(&tp, &mut ep);
        obj.evaluate(&tm, &mut em);
        for i in 0..d {
            let fd = (ep.grad[i] - em.grad[i]) / (2.0 * h);
            assert!(
                (hm[j * d + i] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
                "{}: H[{i},{j}] {} vs {}",
                loss.name(),
                hm[j * d + i],
                fd
            );
            assert_eq!(hm[j * d + i], hm[i * d + j], "Hessian not symmetric");
        }
    }
    let v: Vec<f64> = (0..d).map(|j| (j as f64).sin()).collect();
    let mut hv = vec![0.0; d];
    obj.hess_vec(&ev, &v, &mut hv);
    for i in 0..d {
        let want: f64 = (0..d).map(|j| hm[j * d + i] * v[j]).sum();
        assert!(
            (hv[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{}: Hv",
            loss.name()
        );
    }
    // O(n) line value vs a full evaluation at θ + αs.
    let s: Vec<f64> = (0..d).map(|j| 0.2 * (j as f64).cos()).collect();
    let mut xs = vec![0.0; n];
    obj.direction_scores(&s, &mut xs);
    for alpha in [0.0, 0.3, 1.0, -2.0] {
        let lv = obj.line_value(&ev, &s, &xs, alpha);
        let th: Vec<f64> = theta.iter().zip(&s).map(|(t, v)| t + alpha * v).collect();
        let full = obj.value(&th);
        assert!(
            (lv - full).abs() <= 1e-13 * full.abs().max(1.0),
            "{}: line value α={alpha}: {lv} vs {full}",
            loss.name()
        );
    }
}

#[test]
fn objective_value_gradient_hessian_and_line_values() {
    // d = 6 runs the scalar small-d kernels, d = 37 the SIMD ones (full vectors plus a tail).
    for d in [6, 37] {
        check_loss(Logistic, d);
        check_loss(Probit, d);
        check_loss(RrDebiased::new(0.8).unwrap(), d);
        check_loss(RrNoisyChannel::new(0.8).unwrap(), d);
    }
}

#[test]
fn weight_two_equals_duplicated_row() {
    // Frequency semantics, including the ridge and linear terms (both divided by W = Σw).
    let (n, d) = (60, 4);
    let (x, y, _) = data(n, d, 3);
    let w: Vec<f64> = (0..n).map(|i| [1.0, 2.0, 0.0, 3.0][i % 4]).collect();
    let (mut xd, mut yd) = (vec![], vec![]);
    for i in 0..n {
        for _ in 0..w[i] as usize {
            xd.extend_from_slice(&x[i * d..(i + 1) * d]);
            yd.push(y[i]);
        }
    }
    let nd = yd.len();
    let b = vec![0.3, -0.2, 0.1, 0.05];
    let weighted = PairwiseView::new(&x, n, d, &y, Some(&w)).unwrap();
    let dup = PairwiseView::new(&xd, nd, d, &yd, None).unwrap();
    for set in [FeasibleSet::theta_b(0.4).unwrap(), FeasibleSet::ball(5.0).unwrap()] {
        let solve = |v| {
            let obj = Objective::new(v, RrDebiased::new(1.1).unwrap())
                .with_ridge(2.0)
                .unwrap()
                .with_linear_term(b.clone())
                .unwrap();
            newton::solve(&obj, &set, None, &Control::default()).unwrap()
        };
        let (a, c) = (solve(weighted), solve(dup));
        assert!(a.converged() && c.converged(), "{a:?}\n{c:?}");
        assert!(
            (a.certificate.objective - c.certificate.objective).abs() < 1e-14,
            "objective {} vs {}",
            a.certificate.objective,
            c.certificate.objective
        );
        for (p, q) in a.theta.iter().zip(&c.theta) {
            assert!((p - q).abs() < 1e-12, "{set:?}: {p} vs {q}");
        }
    }
}
