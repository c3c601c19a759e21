use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::loss::Logistic;
use privpref::objective::Objective;
use privpref::solver::{newton, Control};
fn main() {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("tests/data/fixtures/illcond-mle-none.json").unwrap()).unwrap();
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
    let view = PairwiseView::new(&x, 400, 5, &y, None).unwrap();
    let obj = Objective::new(view, Logistic);
    let r = newton::solve(&obj, &FeasibleSet::Unconstrained, None, &Control::default()).unwrap();
    let mut g = vec![0.0; 5];
    obj.value_grad_compensated(&r.theta, &mut g);
    println!(
        "THETA {}",
        r.theta.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(" ")
    );
    println!("GC {:?}", g);
}
