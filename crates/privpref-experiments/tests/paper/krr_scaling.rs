//! The debiased K-RR estimator's error scales like the privacy factor
//! `(e^ε + K − 1)/(e^ε − 1)` across ε, within 15% (seeded simulation,
//! `privpref_experiments::krr_scaling`; why the factor is exact asymptotically is derived in
//! its module docs).
//!
//! Test size: K = 4, d = 5, n = 4000, ‖θ*‖ = 0.5, B = 5, ε ∈ {0.5, 1, 2, 4} (factors 7.17, 3.33,
//! 1.63, 1.07: a 6.7× range), 120 repetitions. The Monte-Carlo standard error of each RMSE is
//! about 3% (120 repetitions × 4 free coordinates), so the 15% band is several standard errors
//! wide. The full run (n = 20000, 200 repetitions, ε from 0.25) is
//! `cargo run --release --example krr_scaling`.

use privpref_experiments::{krr_scaling, KrrScalingConfig};

#[test]
fn krr_error_scales_like_the_privacy_factor() {
    let cfg = KrrScalingConfig {
        n: 4000,
        eps: vec![0.5, 1.0, 2.0, 4.0],
        reps: 120,
        ..KrrScalingConfig::default()
    };
    let rows = krr_scaling(&cfg).unwrap();
    for r in &rows {
        eprintln!(
            "eps {:?}: factor {:.4}, RMSE {:.5}, RMSE/factor {:.5}, converged {}, boundary {}",
            r.eps, r.factor, r.rmse, r.normalized, r.converged, r.on_boundary
        );
        assert_eq!(r.converged, cfg.reps, "every fit converges");
        assert_eq!(r.on_boundary, 0, "B = 5 never binds at this size");
    }
    let krr: Vec<_> = rows.iter().filter(|r| r.eps.is_some()).collect();
    // The error falls with ε, by about the factor ...
    for w in krr.windows(2) {
        assert!(w[1].rmse < w[0].rmse, "RMSE not decreasing in ε");
    }
    let first = krr.first().unwrap();
    let last = krr.last().unwrap();
    let ratio = first.rmse / last.rmse;
    let want = first.factor / last.factor;
    assert!(
        (ratio / want - 1.0).abs() <= 0.15,
        "RMSE ratio {ratio:.3} vs factor ratio {want:.3}"
    );
    // ... and RMSE/factor is the same at every ε within 15%.
    let (lo, hi) = krr.iter().fold((f64::INFINITY, 0.0f64), |(a, b), r| {
        (a.min(r.normalized), b.max(r.normalized))
    });
    assert!(
        hi / lo <= 1.15,
        "RMSE/factor spans {lo:.5} .. {hi:.5} (ratio {:.3})",
        hi / lo
    );
    // The clear-label MLE is below every private estimate.
    let mle = rows.iter().find(|r| r.eps.is_none()).unwrap();
    assert!(krr.iter().all(|r| r.rmse > mle.rmse));
}
