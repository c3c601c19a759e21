// Usage: probe_fixture NAME — solves one reference fixture and prints the report.
use privpref::data::PairwiseView;
use privpref::estimator::{fit, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
fn main() {
    let name = std::env::args().nth(1).unwrap();
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
    let w = f("weights");
    let view = PairwiseView::new(&x, n, d, &y, w.as_deref()).unwrap();
    let mut o = FitOptions::new(
        LossSpec::parse(v["loss"].as_str().unwrap(), v["eps"].as_f64()).unwrap(),
        FeasibleSet::parse(v["constraint"].as_str().unwrap(), v["radius"].as_f64()).unwrap(),
    );
    o.ridge = v["ridge"].as_f64().unwrap_or(0.0);
    o.linear_term = f("linear_term");
    let m = fit(view, &o).unwrap();
    println!("{:#?}", m.report);
    println!("expected {:?}", f("expected_theta"));
}
