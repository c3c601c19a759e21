//! The comparison of Chowdhury, Zhou & Natarajan (2024) (`privpref demo`) on a reduced grid: every
//! exact fit must converge.
//!
//! This sub-grid (ε = 0.1, n ∈ {1000, 10000}, 20 repetitions, the demo's seed) contains fits
//! whose last Newton steps are at the rounding level on the sphere ‖θ‖ = B; it failed when the
//! solver gave up on a rounding-limited slope instead of trying the full step.

use privpref_experiments::{local_comparison, Estimator, LocalComparisonConfig};

#[test]
fn demo_subgrid_every_fit_converges_and_convex_fits_are_certified() {
    let cfg = LocalComparisonConfig {
        eps: vec![0.1],
        ns: vec![1000, 10_000],
        reps: 20,
        ..LocalComparisonConfig::default()
    };
    let cells = local_comparison(&cfg, &|| {}).unwrap();
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

/// Two debiased-RR fits of the `fig1` grid (d = 3, n = 4000, ε = 0.1, seed 2025, repetitions 52
/// and 95 of `experiments::central::central_vs_local`) whose Armijo search accepted no step at a
/// KKT residual of 6e-11 (tolerance 3e-12): the loss's summands are large and of both signs at
/// small ε, so the decrease is below F's rounding. Newton now takes the full step when it halves
/// the KKT residual; both fits must converge.
#[test]
fn rounding_limited_debiased_fits_of_the_fig1_grid_converge() {
    use privpref_experiments::central::{central_vs_local, CentralConfig, CentralEstimator};
    let cfg = CentralConfig {
        d: 3,
        ns: vec![4000],
        eps: vec![0.1],
        reps: 96,
        seed: 2025,
        ..CentralConfig::default()
    };
    let cells = central_vs_local(&cfg, &|| {}).unwrap();
    let local = cells.iter().find(|c| c.estimator == CentralEstimator::LocalRr).unwrap();
    assert_eq!(local.errors.len(), 96);
    assert_eq!(local.failures, 0, "non-converged debiased-RR fits");
    assert!(cells.iter().all(|c| c.failures == 0));
}
