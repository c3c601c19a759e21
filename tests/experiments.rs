//! The seed-000 comparison (`privpref demo`) on a reduced grid: every exact fit must converge.
//!
//! This sub-grid (ε = 0.1, n ∈ {1000, 10000}, 20 repetitions, the demo's seed) contains fits
//! whose last Newton steps are at the rounding level on the sphere ‖θ‖ = B; it failed when the
//! solver gave up on a rounding-limited slope instead of trying the full step.

use privpref::experiments::{seed000_comparison, Estimator, Seed000Config};

#[test]
fn demo_subgrid_every_fit_converges_and_convex_fits_are_certified() {
    let cfg = Seed000Config {
        eps: vec![0.1],
        ns: vec![1000, 10_000],
        reps: 20,
        ..Seed000Config::default()
    };
    let cells = seed000_comparison(&cfg, &|| {}).unwrap();
    assert_eq!(cells.len(), 2 * 3, "three estimators at two sizes");
    for c in &cells {
        assert_eq!(c.errors.len(), cfg.reps);
        assert!(
            c.failures.is_empty(),
            "{} n = {}: not converged: {:?}",
            c.estimator.name(),
            c.n,
            c.failures
        );
        if c.estimator != Estimator::MleRr {
            assert_eq!(c.certified, cfg.reps, "{} n = {}", c.estimator.name(), c.n);
        }
        assert!(c.errors.iter().all(|e| e.is_finite() && *e <= 2.0 * cfg.radius));
    }
}
