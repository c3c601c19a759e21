use privpref::kernels::{self, Rows};
use privpref::loss::{Logistic, Loss};
use privpref::par::Par;
fn main() {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("tests/data/fixtures/illcond-mle-none.json").unwrap()).unwrap();
    let f = |k: &str| {
        v[k].as_array()
            .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect::<Vec<f64>>())
    };
    let x = f("x").unwrap();
    let th = f("expected_theta").unwrap();
    for i in 0..3 {
        let row = &x[i * 5..(i + 1) * 5];
        let y = [0u8];
        let rows = Rows {
            x: row,
            d: 5,
            y: &y,
            w: None,
        };
        let mut g = [0.0; 5];
        let val = kernels::value_grad_compensated(rows, &Logistic, &th, &mut g, Par::Seq);
        let naive: f64 = row.iter().zip(&th).map(|(a, b)| a * b).sum();
        // ℓ'(t) = σ(t) for y = 0: g[1]/x1 recovers it; invert σ to estimate t.
        let s = g[1] / row[1];
        println!(
            "row {i}: naive t = {naive:.20e}, implied t from ℓ' = {:.20e}, value {val:.17e} vs ℓ(naive) {:.17e}",
            (s / (1.0 - s)).ln(),
            Logistic.value(naive, 0)
        );
    }
}
