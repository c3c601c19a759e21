use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::loss::Logistic;
use privpref::objective::{Eval, Objective};
use privpref::solver::{newton, Control};
fn main() {
    let name = std::env::args().nth(1).unwrap_or("illcond-mle-none".into());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("tests/data/fixtures/{name}.json")).unwrap()).unwrap();
    let f = |k: &str| {
        v[k].as_array()
            .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect::<Vec<f64>>())
    };
    let x = f("x").unwrap();
    let y: Vec<u8> = v["y"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_u64().unwrap() as u8)
        .collect();
    let (n, d) = (v["n"].as_u64().unwrap() as usize, v["d"].as_u64().unwrap() as usize);
    let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let obj = Objective::new(view, Logistic);
    let want = f("expected_theta").unwrap();
    let r = newton::solve(&obj, &FeasibleSet::Unconstrained, None, &Control::default()).unwrap();
    println!(
        "report kkt={:.3e} refine_steps={} comp={}",
        r.kkt_residual, r.refinement_steps, r.compensated_evals
    );
    let set = FeasibleSet::Unconstrained;
    for (nm, th) in [("ref", &want), ("ours", &r.theta)] {
        let mut g = vec![0.0; d];
        let fc = obj.value_grad_compensated(th, &mut g);
        let mut ev = Eval::new(n, d);
        obj.evaluate(th, &mut ev);
        println!(
            "{nm}: comp kkt {:.3e} g={:?} F={:.17e}\n      plain kkt {:.3e} g={:?} F={:.17e}",
            set.kkt_residual(th, &g),
            g,
            fc,
            set.kkt_residual(th, &ev.grad),
            ev.grad,
            ev.value
        );
    }
    let mut ev = Eval::new(n, d);
    obj.evaluate(&want, &mut ev);
    let mut h = vec![0.0; d * d];
    obj.hessian_into(&ev, &mut h);
    let hm = faer::MatRef::from_column_major_slice(&h, d, d);
    let e = hm.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
    println!("eigs {:?}", e);
    let diff: Vec<f64> = r.theta.iter().zip(&want).map(|(a, b)| a - b).collect();
    println!("diff {:?}", diff);
}
