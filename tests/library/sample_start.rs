//! The row-sample start of L-BFGS (`privpref::estimator::sample_start`): a fit that starts from
//! the sample's point and curvature reaches the cold start's answer with a certificate that an
//! independent recomputation confirms, gives the same bits at any thread count and for `f32`
//! features as for the same values in `f64`, reports its work, applies only where documented,
//! and leaves the data's errors as they were.

use crate::common::independent_kkt;
use privpref::data::{Features, PairwiseData, PairwiseView};
use privpref::estimator::sample_start::{SAMPLE_ROWS_PER_FEATURE, SAMPLE_STRIDE};
use privpref::estimator::{fit, fit_features, FitOptions, Solver};
use privpref::feasible::{norm, FeasibleSet};
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::model::Fit;
use privpref::objective::Objective;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::lbfgs::LbfgsOptions;
use privpref::solver::Termination;
use privpref::{with_loss, Error};

/// Rows for which the sample applies at `d` (twice the minimum).
fn rows(d: usize) -> usize {
    2 * SAMPLE_STRIDE * SAMPLE_ROWS_PER_FEATURE * d
}

fn data(n: usize, d: usize, signal: f64, seed: u64) -> PairwiseData {
    let theta = theta_star(d, signal, true, &mut simulation_rng(seed)).unwrap();
    btl_pairs(n, &theta, &mut simulation_rng(seed + 1)).unwrap()
}

fn options(loss: LossSpec, set: FeasibleSet, sample_start: bool) -> FitOptions {
    let mut o = FitOptions::new(loss, set);
    let mut l = LbfgsOptions::default();
    l.sample_start = sample_start;
    o.solver = Solver::Lbfgs(l);
    o
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// The independent relative KKT residual of `m` on `view` under `o`.
fn recomputed_kkt(view: PairwiseView<'_>, o: &FitOptions, m: &Fit) -> f64 {
    with_loss!(o.loss, |loss| {
        let mut obj = Objective::new(view, loss).with_ridge(o.ridge).unwrap();
        if let Some(b) = &o.linear_term {
            obj = obj.with_linear_term(b.clone()).unwrap();
        }
        independent_kkt(&obj, &o.set, &m.theta).relative
    })
    .unwrap()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn the_sample_start_reaches_the_cold_answer_with_a_true_certificate() {
    let d = 6;
    let n = rows(d);
    let sets = [
        FeasibleSet::Unconstrained,
        FeasibleSet::theta_b(0.8).unwrap(),
        FeasibleSet::ball(3.0).unwrap(),
    ];
    let losses = [LossSpec::Mle, LossSpec::Probit, LossSpec::DebiasedRr { eps: 1.5 }];
    let pd = data(n, d, 1.5, 3);
    let view = pd.view().unwrap();
    for set in sets {
        for loss in losses {
            let cold = fit(view, &options(loss, set, false)).unwrap();
            let o = options(loss, set, true);
            let warm = fit(view, &o).unwrap();
            let what = format!("{} on {}", loss.name(), set.name());
            assert_eq!(cold.report.counts.sample_rows, 0, "{what}");
            assert!(
                warm.report.counts.sample_rows >= n / SAMPLE_STRIDE,
                "{what}: no sample run"
            );
            assert_eq!(cold.report.termination, warm.report.termination, "{what}");
            if !cold.report.converged() {
                // The debiased loss has no minimiser on ℝ^d here: both runs say so.
                assert_eq!(
                    (loss.name(), warm.report.termination),
                    ("debiased-rr", Termination::NoMinimizer),
                    "{what}"
                );
                continue;
            }
            let k = recomputed_kkt(view, &o, &warm);
            assert!(k <= warm.report.certificate.kkt_tol, "{what}: recomputed KKT {k:e}");
            // Both are certified minimisers of a strictly convex objective: they agree to the
            // tolerance's resolution.
            let diff = max_diff(&cold.theta, &warm.theta);
            assert!(diff <= 1e-7 * norm(&cold.theta).max(1.0), "{what}: |Δθ| = {diff:e}");
        }
    }
}

#[test]
fn the_sample_objective_keeps_weights_ridge_and_linear_term_per_unit_weight() {
    let d = 5;
    let n = rows(d);
    let mut pd = data(n, d, 1.0, 11);
    pd.weights = Some((0..n).map(|i| 0.5 + (i % 7) as f64 * 0.25).collect());
    let view = pd.view().unwrap();
    let fits: Vec<Fit> = [false, true]
        .into_iter()
        .map(|sample_start| {
            let mut o = options(LossSpec::Mle, FeasibleSet::Unconstrained, sample_start);
            o.ridge = 40.0;
            o.linear_term = Some((0..d).map(|j| 30.0 * (j as f64 - 2.0)).collect());
            let m = fit(view, &o).unwrap();
            assert!(m.report.converged());
            assert!(recomputed_kkt(view, &o, &m) <= m.report.certificate.kkt_tol);
            assert_eq!(m.report.counts.sample_rows > 0, sample_start);
            m
        })
        .collect();
    // The ridge makes the objective strongly convex: the two answers agree.
    assert!(max_diff(&fits[0].theta, &fits[1].theta) <= 1e-8);
}

#[test]
fn the_sample_start_gives_the_same_bits_at_any_thread_count_and_for_f32_features() {
    let d = 7;
    let n = rows(d) + 13;
    let pd = data(n, d, 1.0, 21);
    // Values exactly representable in f32, so both storages hold the same numbers.
    let x32: Vec<f32> = pd.x.iter().map(|&v| v as f32).collect();
    let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
    let o = options(LossSpec::Mle, FeasibleSet::Unconstrained, true);
    let run = |threads: usize, f32: bool| {
        in_pool(threads, || {
            let view = if f32 {
                PairwiseView::new_f32(&x32, n, d, &pd.y, None).unwrap()
            } else {
                PairwiseView::new(&x64, n, d, &pd.y, None).unwrap()
            };
            let m = fit(view, &o).unwrap();
            assert!(m.report.counts.sample_rows > 0);
            m.theta.iter().map(|v| v.to_bits()).collect::<Vec<u64>>()
        })
    };
    let one = run(1, false);
    for (threads, f32) in [(2, false), (3, false), (1, true), (2, true)] {
        assert!(run(threads, f32) == one, "{threads} threads, f32 = {f32}");
    }
}

#[test]
fn the_sample_start_applies_only_where_documented() {
    let d = 4;
    let n = rows(d);
    let pd = data(n, d, 1.0, 31);
    let view = pd.view().unwrap();
    let sampled = |o: &FitOptions, v: PairwiseView<'_>| fit(v, o).unwrap().report.counts.sample_rows > 0;
    // auto chooses L-BFGS for a convex loss: sampled.
    let mut auto = FitOptions::new(LossSpec::Mle, FeasibleSet::Unconstrained);
    assert!(sampled(&auto, view));
    // Switched off in auto's L-BFGS settings.
    let mut off = LbfgsOptions::default();
    off.sample_start = false;
    auto.solver = Solver::Auto(off);
    assert!(!sampled(&auto, view));
    // A warm start wins over the sample.
    let mut warm = options(LossSpec::Mle, FeasibleSet::Unconstrained, true);
    warm.theta0 = Some(vec![0.1; d]);
    assert!(!sampled(&warm, view));
    // A non-convex loss (its sample could lead to another KKT point): no sample.
    let rr = options(LossSpec::MleRr { eps: 2.0 }, FeasibleSet::theta_b(1.0).unwrap(), true);
    assert!(!sampled(&rr, view));
    // Other solvers: no sample.
    for s in ["newton", "newton-cg"] {
        let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::Unconstrained);
        o.solver = privpref::estimator::SolverKind::parse(s).unwrap().into();
        assert!(!sampled(&o, view), "{s}");
    }
    // Too few rows per feature for the sample.
    let small = SAMPLE_STRIDE * SAMPLE_ROWS_PER_FEATURE * d - 1;
    let v = PairwiseView::new(&pd.x[..small * d], small, d, &pd.y[..small], None).unwrap();
    assert!(!sampled(&options(LossSpec::Mle, FeasibleSet::Unconstrained, true), v));
}

#[test]
fn a_bad_feature_is_the_same_error_inside_and_outside_the_sample() {
    let d = 3;
    let n = rows(d);
    let pd = data(n, d, 1.0, 41);
    let o = options(LossSpec::Mle, FeasibleSet::Unconstrained, true);
    // Row 0 is in the sample (every SAMPLE_STRIDE-th row from 0), row 1 is not.
    for row in [0, 1, SAMPLE_STRIDE, n - 1] {
        let mut x = pd.x.clone();
        x[row * d + 2] = f64::NAN;
        let e = fit_features(Features::F64(&x), n, d, &pd.y, None, &o).unwrap_err();
        match e {
            Error::Data { input, at, .. } => {
                assert_eq!((input, at.row, at.col), ("x", row, Some(2)), "row {row}");
            }
            other => panic!("row {row}: {other}"),
        }
    }
}

/// Rows held in parts by the members of a group (a shard file per MPI rank): the members
/// gather the sample (every `SAMPLE_STRIDE`-th row of the whole matrix, whatever the part
/// boundaries) and the fit has the single-process bits, for `f64` and `f32` features.
#[test]
fn rows_held_in_parts_sample_the_whole_matrix_and_give_the_single_process_bits() {
    use privpref::par::{Collective, ThreadGroup};
    let d = 7;
    let n = rows(d) + 13;
    let pd = data(n, d, 1.0, 23);
    let x32: Vec<f32> = pd.x.iter().map(|&v| v as f32).collect();
    let o = options(LossSpec::Mle, FeasibleSet::Unconstrained, true);
    let grid = privpref::par::stream_blocks(n, d);
    // The parts start at block boundaries, which are not multiples of the stride here.
    assert!(!grid.rows.is_multiple_of(SAMPLE_STRIDE));
    let part = |r: usize, p: usize| {
        let nb = grid.count();
        let (b0, b1) = (r * nb / p, (r + 1) * nb / p);
        (b0 * grid.rows).min(n)..(b1 * grid.rows).min(n)
    };
    for f32 in [false, true] {
        let features = |rows: std::ops::Range<usize>| {
            if f32 {
                Features::F32(&x32[rows.start * d..rows.end * d])
            } else {
                Features::F64(&pd.x[rows.start * d..rows.end * d])
            }
        };
        let want = fit_features(features(0..n), n, d, &pd.y, None, &o).unwrap();
        assert!(want.report.counts.sample_rows > 0);
        for p in [2, 3] {
            for threads in [1, 2] {
                let got = ThreadGroup::run(p, |g| {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    pool.install(|| {
                        let rows = part(g.rank(), p);
                        let v =
                            PairwiseView::new_shard(features(rows.clone()), d, &pd.y[rows], None, g as &dyn Collective)
                                .unwrap();
                        assert!(!v.holds_all_rows());
                        fit(v, &o).unwrap()
                    })
                });
                for (m, f) in got.iter().enumerate() {
                    assert_eq!(f.report.counts.sample_rows, want.report.counts.sample_rows);
                    assert!(
                        f.theta.iter().zip(&want.theta).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "f32 {f32}, P = {p}, threads {threads}, member {m}"
                    );
                }
            }
        }
    }
}
