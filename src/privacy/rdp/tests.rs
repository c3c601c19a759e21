use super::*;

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

#[test]
fn closed_forms() {
    // q = 1: the Gaussian mechanism α/(2σ²) (q=1, σ=2, α=5 gives 0.625).
    assert!(rel(sgm_rdp(1.0, 2.0, 5.0).unwrap(), 0.625) < 1e-15);
    assert!(rel(sgm_rdp(1.0, 2.0, 5.5).unwrap(), 5.5 / 8.0) < 1e-15);
    // α = 2: log(1 + q²(e^{1/σ²} − 1)) (q = 0.01, σ = 1 gives 1.7181342e-4).
    for &(q, s) in &[(0.01f64, 1.0f64), (0.3, 0.7), (1e-5, 3.0)] {
        let want = (q * q * (1.0 / (s * s)).exp_m1()).ln_1p();
        assert!(rel(sgm_rdp(q, s, 2.0).unwrap(), want) < 1e-14, "{q} {s}");
    }
    assert!(rel(sgm_rdp(0.01, 1.0, 2.0).unwrap(), 1.718_134_2e-4) < 1e-7);
}

#[test]
fn per_order_reference_values() {
    // Values of Google's dp_accounting (8 digits).
    for &(q, s, a, want) in &[
        (0.01, 1.1, 2.0, 1.285_100_8e-4),
        (0.01, 1.1, 8.0, 5.840_703e-4),
        (0.01, 1.1, 32.0, 8.469_416_4),
        (0.1, 2.0, 2.0, 2.836_228_3e-3),
        (0.1, 2.0, 8.0, 1.372_543_0e-2),
        (0.1, 2.0, 32.0, 1.627_202_3),
    ] {
        let got = sgm_rdp(q, s, a).unwrap();
        assert!(rel(got, want) < 1e-6, "q={q} σ={s} α={a}: {got} vs {want}");
    }
}

#[test]
fn fractional_orders_interpolate_integer_ones() {
    // RDP is non-decreasing in α; the fractional series must sit between its neighbours.
    for &(q, s) in &[(0.01, 1.0), (0.1, 2.0), (0.5, 0.8), (0.001, 5.0), (0.9, 1.0)] {
        for k in 2..10 {
            let lo = sgm_rdp(q, s, k as f64).unwrap();
            let hi = sgm_rdp(q, s, k as f64 + 1.0).unwrap();
            for f in [0.1, 0.5, 0.9] {
                let m = sgm_rdp(q, s, k as f64 + f).unwrap();
                assert!(
                    lo <= m * (1.0 + 1e-13) && m <= hi * (1.0 + 1e-13),
                    "q={q} σ={s} α={k}+{f}"
                );
            }
        }
    }
}

#[test]
fn replace_modes_order() {
    // add/remove ≤ numeric antipodal ≤ proven replace; numeric ≤ sensitivity 2 on these points.
    for &(q, s, a) in &[
        (0.01, 1.0, 2.0),
        (0.1, 1.0, 4.0),
        (0.1, 2.0, 8.0),
        (0.5, 1.0, 2.0),
        (0.05, 3.0, 3.5),
    ] {
        let ar = step_rdp(q, s, a, Neighbours::AddRemove).unwrap();
        let num = step_rdp(q, s, a, Neighbours::ReplaceNumeric).unwrap();
        let tri = step_rdp(q, s, a, Neighbours::Replace).unwrap();
        let s2 = step_rdp(q, s, a, Neighbours::ReplaceSensitivity2).unwrap();
        assert!(
            ar < num && num < tri && num < s2,
            "q={q} σ={s} α={a}: {ar} {num} {tri} {s2}"
        );
    }
    // Quadrature of the antipodal pair, computed independently (3–4 digits).
    for &(q, s, a, want) in &[
        (0.01, 1.0, 2.0, 4.6e-4),
        (0.1, 1.0, 4.0, 0.1074),
        (0.1, 2.0, 8.0, 0.0411),
        (0.5, 1.0, 2.0, 0.8309),
    ] {
        let got = replace_numeric_rdp(q, s, a).unwrap();
        assert!(rel(got, want) < 0.01, "q={q} σ={s} α={a}: {got} vs {want}");
    }
}

#[test]
fn conversions() {
    let c = RdpCurve::sampled_gaussian(&integer_orders(256), 0.1, 2.0, 100, Neighbours::AddRemove).unwrap();
    // dp_accounting: 2.586652 (improved) / 3.017247 (classic).
    assert!(rel(c.epsilon(1e-5, Conversion::Improved).unwrap().epsilon, 2.586_652) < 1e-6);
    assert!(rel(c.epsilon(1e-5, Conversion::Classic).unwrap().epsilon, 3.017_247) < 1e-6);
}

#[test]
fn invalid_inputs() {
    let name = |r: Result<f64>| match r {
        Err(Error::InvalidParam { name, .. }) => name,
        other => panic!("expected InvalidParam, got {other:?}"),
    };
    assert_eq!(name(sgm_rdp(0.0, 1.0, 2.0)), "sampling-rate");
    assert_eq!(name(sgm_rdp(1.5, 1.0, 2.0)), "sampling-rate");
    assert_eq!(name(sgm_rdp(f64::NAN, 1.0, 2.0)), "sampling-rate");
    assert_eq!(name(sgm_rdp(0.1, 0.0, 2.0)), "noise-multiplier");
    assert_eq!(name(sgm_rdp(0.1, f64::INFINITY, 2.0)), "noise-multiplier");
    assert_eq!(name(sgm_rdp(0.1, 1.0, 1.0)), "orders");
    assert_eq!(name(sgm_rdp(0.1, 1.0, f64::NAN)), "orders");
    let acc = Accountant::default();
    assert!(matches!(
        acc.epsilon(0.1, 1.0, 0, 1e-5),
        Err(Error::InvalidParam { name: "steps", .. })
    ));
    assert!(matches!(
        acc.epsilon(0.1, 1.0, 10, 0.0),
        Err(Error::InvalidParam { name: "delta", .. })
    ));
    assert!(matches!(
        acc.calibrate_sigma(0.1, 10, -1.0, 1e-5),
        Err(Error::InvalidParam { name: "eps", .. })
    ));
    assert!(RdpCurve::zero(&[]).is_err());
}

#[test]
fn a_huge_noise_multiplier_gives_a_tiny_upper_bound_not_an_error() {
    let q = 0.01f64;
    for &sigma in &[1e8f64, 1e12, 1e300] {
        for &alpha in &[1.5f64, 2.5, 11.2, 63.5] {
            let v = sgm_rdp(q, sigma, alpha).unwrap();
            // Convexity of x^α: A_α ≤ 1 − q + q·e^{α(α−1)/(2σ²)}, so
            // ε(α) ≤ ln(1 + q·expm1(α(α−1)/(2σ²)))/(α − 1) (the unsampled Gaussian's, times q).
            let hi = (q * (alpha * (alpha - 1.0) / (2.0 * sigma * sigma)).exp_m1()).ln_1p() / (alpha - 1.0);
            // The divergence is non-decreasing in the order: the integer order below (exact,
            // positive binomial sum) is a lower bound of the true value, hence of an upper bound.
            let lo = if alpha >= 2.0 {
                sgm_rdp(q, sigma, alpha.floor()).unwrap()
            } else {
                0.0
            };
            assert!(
                v.is_finite() && v >= lo && v <= hi,
                "σ = {sigma:e}, α = {alpha}: {lo:e} <= {v:e} <= {hi:e}"
            );
        }
    }
    // Leading order at σ = 1e8: ε(α) ≈ α q²/(2σ²) (the α = 2 closed form's q²(e^{1/σ²} − 1)/2
    // per unit of order); the bound of α = 11.2 is that of ⌈α⌉ = 12, within 12/11.2 of it.
    let (sigma, alpha) = (1e8f64, 11.2f64);
    let lead = alpha * q * q / (2.0 * sigma * sigma);
    let v = sgm_rdp(q, sigma, alpha).unwrap();
    assert!(v >= lead * 0.8 && v <= lead * 12.0 / 11.2 * 1.01, "{v:e} vs {lead:e}");
}
