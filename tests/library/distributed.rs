//! Fits on rows reduced by a group of processes ([`PairwiseView::distributed`]) have the bits of
//! the single-process fit, for any group size and thread count. The group here is threads of
//! this process ([`ThreadGroup`]); the MPI ranks of the `mpi` feature run the same code with
//! another transport (checked by `.ci/run` with `mpirun`).

use privpref::data::{FeatureBound, PairwiseView};
use privpref::estimator::central::{objective_perturbation, ObjPertOptions};
use privpref::estimator::{fit, FitOptions, Solver};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::par::{Collective, Shard, ThreadGroup};
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::lbfgs::LbfgsOptions;

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// `(n, d)` with 8 row blocks, so groups of 2–4 split the rows at block boundaries.
fn data() -> privpref::data::PairwiseData {
    let d = 32;
    let theta = theta_star(d, 2.0, true, &mut simulation_rng(11)).unwrap();
    btl_pairs(30_000, &theta, &mut simulation_rng(12)).unwrap()
}

/// Runs `f` on a group of `p` members, each on its own rayon pool of `threads` threads.
fn on_group<R: Send>(p: usize, threads: usize, f: impl Fn(&dyn Collective) -> R + Sync) -> Vec<R> {
    ThreadGroup::run(p, |g| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| f(g))
    })
}

#[test]
fn the_shards_split_the_rows() {
    let data = data();
    let view = data.view().unwrap();
    let rows = on_group(3, 1, |g| {
        view.distributed(g).shard().map(|s: Shard<'_>| s.rows()).unwrap()
    });
    assert_eq!(rows.first().unwrap().start, 0);
    assert_eq!(rows.last().unwrap().end, data.n);
    assert!(rows.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()));
}

#[test]
fn exact_fits_are_the_single_process_bits_for_any_group() {
    let data = data();
    let view = data.view().unwrap();
    // Θ_B with the constraint inactive (large radius) and active (small radius).
    for radius in [50.0, 0.5] {
        for solver in [Solver::Newton, Solver::NewtonCg, Solver::Lbfgs(LbfgsOptions::default())] {
            let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(radius).unwrap());
            opts.solver = solver;
            let want = fit(view, &opts).unwrap();
            assert_eq!(
                want.report.certificate.on_boundary,
                radius < 1.0,
                "radius {radius}: the fixture's constraint"
            );
            assert!(want.report.certificate.certified_global);
            for p in 1..=4 {
                for threads in [1, 2] {
                    let got = on_group(p, threads, |g| fit(view.distributed(g), &opts).unwrap());
                    for (rank, f) in got.iter().enumerate() {
                        assert_eq!(
                            bits(&f.theta),
                            bits(&want.theta),
                            "{solver:?}, radius {radius}, {p} members × {threads} threads, rank {rank}"
                        );
                        let mut counts = f.report.counts.clone();
                        counts.elapsed = want.report.counts.elapsed;
                        assert_eq!(counts, want.report.counts, "the same iterations and passes");
                    }
                }
            }
        }
    }
}

#[test]
fn objective_perturbation_is_the_single_process_bits_for_any_group() {
    let data = data();
    let view = data.view().unwrap();
    let l = view.max_row_norm(false);
    let opts = ObjPertOptions::new(
        1.0,
        1e-6,
        FeatureBound::pairwise(l).unwrap(),
        3.0,
        FeasibleSet::theta_b(1.0).unwrap(),
    );
    let want = objective_perturbation(view, &opts, &mut NoiseRng::seeded(5)).unwrap();
    for p in [2, 3, 4] {
        let got = on_group(p, 2, |g| {
            objective_perturbation(view.distributed(g), &opts, &mut NoiseRng::seeded(5)).unwrap()
        });
        for f in &got {
            assert_eq!(bits(&f.theta), bits(&want.theta), "{p} members");
        }
    }
}

#[test]
fn a_group_larger_than_the_units_leaves_members_idle_and_agrees() {
    // 8 blocks: members 9..12 own no rows but take part in every exchange.
    let data = data();
    let view = data.view().unwrap();
    let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(5.0).unwrap());
    let want = fit(view, &opts).unwrap();
    let got = on_group(12, 1, |g| {
        let v = view.distributed(g);
        (v.shard().unwrap().rows().len(), fit(v, &opts).unwrap())
    });
    assert!(got.iter().any(|(rows, _)| *rows == 0));
    for (_, f) in &got {
        assert_eq!(bits(&f.theta), bits(&want.theta));
    }
}

#[test]
fn views_that_are_not_distributed_have_no_shard() {
    let data = data();
    assert!(data.view().unwrap().shard().is_none());
}

#[test]
fn the_shared_csprng_is_the_same_on_every_member_and_fresh_each_time() {
    use rand::Rng;
    let draws = || {
        on_group(3, 1, |g| {
            let mut r = NoiseRng::secure_shared(g).unwrap();
            assert_eq!(r.source(), privpref::privacy::NoiseSource::Secure);
            (0..4).map(|_| r.next_u64()).collect::<Vec<u64>>()
        })
    };
    let (a, b) = (draws(), draws());
    assert!(a.iter().all(|v| *v == a[0]), "every member draws the same noise");
    assert_ne!(a[0], b[0], "a new key each time");
}

/// 200 000 × 32: 49 row blocks, 16 Hessian chunks of about 3 blocks.
fn many_blocks() -> privpref::data::PairwiseData {
    let d = 32;
    let theta = theta_star(d, 2.0, true, &mut simulation_rng(21)).unwrap();
    btl_pairs(200_000, &theta, &mut simulation_rng(22)).unwrap()
}

#[test]
fn hessian_free_cuts_keep_the_bits_and_dense_newton_refuses_them() {
    let data = many_blocks();
    let view = data.view().unwrap();
    for solver in [Solver::NewtonCg, Solver::Lbfgs(LbfgsOptions::default())] {
        let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(0.5).unwrap());
        opts.solver = solver;
        let want = fit(view, &opts).unwrap();
        for p in [3, 5] {
            let got = on_group(p, 1, |g| {
                let v = view.distributed_hessian_free(g);
                (v.shard().unwrap().whole_chunks(), fit(v, &opts).unwrap())
            });
            for (whole, f) in &got {
                assert!(!whole, "{p} members: the cut should split some Hessian chunk");
                assert_eq!(bits(&f.theta), bits(&want.theta), "{solver:?}, {p} members");
            }
        }
    }
    let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(0.5).unwrap());
    opts.solver = Solver::Newton;
    let errs = on_group(3, 1, |g| fit(view.distributed_hessian_free(g), &opts).unwrap_err());
    for e in errs {
        assert!(matches!(e, privpref::Error::InvalidParam { .. }), "{e}");
        assert!(e.to_string().contains("Hessian-free"), "{e}");
    }
    // The whole-chunk cut of the same rows runs dense Newton with the single-process bits.
    let want = fit(view, &opts).unwrap();
    for f in on_group(3, 2, |g| fit(view.distributed(g), &opts).unwrap()) {
        assert_eq!(bits(&f.theta), bits(&want.theta));
    }
}

#[test]
fn distributed_validation_agrees_with_the_single_process_checks() {
    use privpref::data::Features;
    use privpref::par::Cut;
    let mut data = many_blocks();
    let (n, d) = (data.n, data.d);
    let single = data.view().unwrap();
    for cut in [Cut::WholeChunks, Cut::HessianFree] {
        let views = on_group(3, 1, |g| {
            let v = PairwiseView::new_distributed(Features::F64(&data.x), n, d, &data.y, None, g, cut).unwrap();
            (v.magnitude(), v.shard().unwrap().rows())
        });
        for (m, _) in &views {
            assert_eq!(*m, single.magnitude(), "the magnitude summary is exact");
        }
        assert!(views[2].1.start > 0);
    }
    // A NaN in the last member's rows and an infinity in the first's: every member reports the
    // first bad row, as the single-process check does.
    data.x[190_000 * d + 7] = f64::NAN;
    data.x[1000 * d + 3] = f64::INFINITY;
    let want = data.view().unwrap_err().to_string();
    assert!(want.contains("row 1000"), "{want}");
    let errs = on_group(3, 2, |g| {
        PairwiseView::new_distributed(Features::F64(&data.x), n, d, &data.y, None, g, Cut::HessianFree)
            .unwrap_err()
            .to_string()
    });
    assert!(errs.iter().all(|e| *e == want), "{errs:?}");
}

#[test]
fn a_feature_bound_violation_in_any_members_rows_is_the_single_process_error() {
    let mut data = many_blocks();
    let d = data.d;
    // Row 170 000 (the last member's rows at 3) gets a norm far above the bound.
    data.x[170_000 * d] = 1e3;
    let view = data.view().unwrap();
    let opts = ObjPertOptions::new(
        1.0,
        1e-6,
        FeatureBound::pairwise(20.0).unwrap(),
        3.0,
        FeasibleSet::theta_b(1.0).unwrap(),
    );
    let want = objective_perturbation(view, &opts, &mut NoiseRng::seeded(5))
        .unwrap_err()
        .to_string();
    assert!(want.contains("170000"), "{want}");
    let got = on_group(3, 1, |g| {
        objective_perturbation(view.distributed(g), &opts, &mut NoiseRng::seeded(5))
            .unwrap_err()
            .to_string()
    });
    assert!(got.iter().all(|e| *e == want), "{got:?}");
}

#[test]
fn weighted_fits_are_the_single_process_bits_for_any_group() {
    let data = many_blocks();
    let w: Vec<f64> = (0..data.n).map(|i| 0.25 + (i % 7) as f64 * 0.5).collect();
    let view = PairwiseView::new(&data.x, data.n, data.d, &data.y, Some(&w)).unwrap();
    for (solver, cut_free) in [
        (Solver::Newton, false),
        (Solver::NewtonCg, true),
        (Solver::Lbfgs(LbfgsOptions::default()), true),
    ] {
        let mut opts = FitOptions::new(LossSpec::Probit, FeasibleSet::theta_b(0.8).unwrap());
        opts.solver = solver;
        let want = fit(view, &opts).unwrap();
        for f in on_group(3, 2, |g| {
            let v = if cut_free {
                view.distributed_hessian_free(g)
            } else {
                view.distributed(g)
            };
            fit(v, &opts).unwrap()
        }) {
            assert_eq!(bits(&f.theta), bits(&want.theta), "{solver:?}");
        }
    }
}

#[test]
fn the_largest_row_norm_is_agreed_by_every_member() {
    let mut data = many_blocks();
    // The largest row sits in the last member's rows at 3 members.
    data.x[180_000 * data.d] = 50.0;
    let view = data.view().unwrap();
    for centered in [false, true] {
        let want = view.max_row_norm(centered);
        for p in [2, 3] {
            for got in on_group(p, 1, |g| view.distributed_hessian_free(g).max_row_norm(centered)) {
                assert_eq!(got.to_bits(), want.to_bits(), "{p} members, centered = {centered}");
            }
        }
    }
}

/// The policy problem's report as bits (everything but the elapsed time).
fn policy_bits(r: &privpref::policy::PolicyReport) -> String {
    let b = |v: &[f64]| bits(v);
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
        b(&r.probs),
        r.actions,
        r.value.to_bits(),
        r.upper_bound.to_bits(),
        b(&r.theta_min),
        b(&r.g),
        r.passes,
        r.iterations,
        r.purify,
        r.rounded_states,
        r.deterministic_value.to_bits(),
        r.greedy.actions,
        b(&r.greedy.g),
        r.termination,
        r.randomized_fw,
    )
}

#[test]
fn the_policy_pass_over_shared_states_is_the_single_process_bits() {
    use privpref::policy::{
        greedy_policy, pessimistic_policy, ConfidenceSet, PolicyMethod, PolicyOptions, Reference, StateActions,
    };
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = simulation_rng(31);
    // 40 000 states × 4 actions × 8 features: 10 blocks of the pass.
    let (n, a, d) = (40_000, 4, 8);
    let mut phi: Vec<f64> = (0..n * a * d).map(|_| StandardNormal.sample(&mut rng)).collect();
    for v in phi.chunks_exact_mut(d) {
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
    }
    let w: Vec<f64> = (0..n).map(|i| 1.0 + (i % 5) as f64).collect();
    let plain = StateActions::new(&phi, n, a, d, None).unwrap();
    let weighted = StateActions::new(&phi, n, a, d, Some(&w)).unwrap();
    // Σ from 30 random directions, one of them poorly covered, and a centre of norm 0.8: the
    // worst-case θ moves with the policy, so Frank–Wolfe randomises states.
    let mut sigma = vec![0.0; d * d];
    for _ in 0..30 {
        let mut x: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
        x[d - 1] *= 0.05;
        for i in 0..d {
            for j in 0..d {
                sigma[i * d + j] += x[i] * x[j] / 30.0;
            }
        }
    }
    let mut centre: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
    let cn = centre.iter().map(|x| x * x).sum::<f64>().sqrt();
    centre.iter_mut().for_each(|v| *v *= 0.8 / cn);
    let set = ConfidenceSet::new(&centre, Some(&sigma), 0.02, 0.3, FeasibleSet::ball(1.0).unwrap()).unwrap();
    let acts: Vec<u32> = (0..n).map(|i| (i % a) as u32).collect();
    for (st, reference) in [
        (plain, Reference::None),
        (plain, Reference::Actions(&acts)),
        (weighted, Reference::None),
    ] {
        for (deterministic, method) in [
            (true, PolicyMethod::Smoothed),
            (false, PolicyMethod::Smoothed),
            (true, PolicyMethod::FrankWolfe),
        ] {
            let mut opts = PolicyOptions::default();
            opts.deterministic = deterministic;
            opts.method = method;
            let one = pessimistic_policy(&st, &reference, &set, &opts).unwrap();
            // A real run: smoothed Newton or Frank–Wolfe steps that randomise states (then purified).
            assert!(
                one.smoothed_passes + one.iterations >= 3 && one.randomized_fw > 0,
                "{} {} {:?} {:?}",
                one.smoothed_passes + one.iterations,
                one.randomized_fw,
                one.termination,
                one.purify
            );
            let want = policy_bits(&one);
            let greedy = greedy_policy(&st, &centre, &reference, &set, privpref::par::Par::Rayon).unwrap();
            for p in [1, 2, 3, 4, 12] {
                for threads in [1, 2] {
                    let got = on_group(p, threads, |g| {
                        let sd = st.distributed(g);
                        let r = pessimistic_policy(&sd, &reference, &set, &opts).unwrap();
                        let gr = greedy_policy(&sd, &centre, &reference, &set, privpref::par::Par::Rayon).unwrap();
                        (policy_bits(&r), gr.actions, bits(&gr.g), gr.pessimistic_value.to_bits())
                    });
                    for (rank, (r, ga, gg, gv)) in got.into_iter().enumerate() {
                        assert_eq!(r, want, "P = {p}, threads {threads}, member {rank}");
                        assert_eq!(ga, greedy.actions, "greedy, P = {p}, member {rank}");
                        assert_eq!(gg, bits(&greedy.g));
                        assert_eq!(gv, greedy.pessimistic_value.to_bits());
                    }
                }
            }
        }
    }
}

/// A member holds the per-row caches (the scores of an evaluation) of its own rows only:
/// O(n/P) memory per process, the members' parts adding up to the n rows.
#[test]
fn each_member_holds_the_scores_of_its_own_rows() {
    use privpref::objective::{Objective, SmoothObjective};
    let data = data();
    let view = data.view().unwrap();
    for p in [1, 2, 3, 4] {
        let held = on_group(p, 1, |g| {
            let dv = view.distributed_hessian_free(g);
            let obj = Objective::new(dv, privpref::loss::Logistic);
            let mut ev = obj.new_eval();
            obj.evaluate(&vec![0.1; data.d], &mut ev);
            (ev.scores.len(), dv.shard().unwrap().rows().len(), obj.num_scores())
        });
        for &(scores, rows, num) in &held {
            assert_eq!((scores, num), (rows, rows), "P = {p}");
        }
        assert_eq!(held.iter().map(|h| h.0).sum::<usize>(), data.n, "P = {p}");
        if p > 1 {
            assert!(held.iter().all(|h| h.0 < data.n));
        }
    }
}

/// Each member holding only its rows ([`PairwiseView::new_shard`], e.g. a shard file per MPI
/// rank): the exact fits have the single-process bits, and bad data in any member's rows is the
/// single-process error.
#[test]
fn rows_held_in_parts_give_the_single_process_bits_and_errors() {
    use privpref::data::Features;
    let data = data();
    let (n, d) = (data.n, data.d);
    let view = data.view().unwrap();
    let grid = privpref::par::stream_blocks(n, d);
    // Member r of p holds blocks r·B/p .. (r+1)·B/p.
    let part = |r: usize, p: usize| {
        let nb = grid.count();
        let (b0, b1) = (r * nb / p, (r + 1) * nb / p);
        (b0 * grid.rows).min(n)..(b1 * grid.rows).min(n)
    };
    for radius in [50.0, 0.5] {
        for solver in [Solver::Newton, Solver::NewtonCg, Solver::Lbfgs(LbfgsOptions::default())] {
            let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(radius).unwrap());
            opts.solver = solver;
            let want = fit(view, &opts).unwrap();
            for p in [1, 2, 3, 4] {
                for threads in [1, 2] {
                    let got = on_group(p, threads, |g| {
                        let rows = part(g.rank(), p);
                        let v = PairwiseView::new_shard(
                            Features::F64(&data.x[rows.start * d..rows.end * d]),
                            d,
                            &data.y[rows],
                            None,
                            g,
                        )
                        .unwrap();
                        assert_eq!(v.n(), n);
                        bits(&fit(v, &opts).unwrap().theta)
                    });
                    for (m, t) in got.iter().enumerate() {
                        assert_eq!(
                            t,
                            &bits(&want.theta),
                            "radius {radius}, {solver:?}, P = {p}, threads {threads}, member {m}"
                        );
                    }
                }
            }
        }
    }
    // A NaN in the last member's rows, then a label out of range: the single-process errors.
    let mut x = data.x.clone();
    x[(n - 5) * d + 3] = f64::NAN;
    let mut y = data.y.clone();
    y[n / 2] = 3;
    for (x, y) in [(&x, &data.y), (&data.x, &y)] {
        let want = PairwiseView::new(x, n, d, y, None).unwrap_err().to_string();
        let got = on_group(3, 1, |g| {
            let rows = part(g.rank(), 3);
            PairwiseView::new_shard(Features::F64(&x[rows.start * d..rows.end * d]), d, &y[rows], None, g)
                .unwrap_err()
                .to_string()
        });
        assert!(got.iter().all(|e| e == &want), "{got:?} vs {want}");
    }
    // What reads every row refuses such a view (SGD, the central estimators), with a clear error.
    let got = on_group(2, 1, |g| {
        let rows = part(g.rank(), 2);
        let v = PairwiseView::new_shard(
            Features::F64(&data.x[rows.start * d..rows.end * d]),
            d,
            &data.y[rows],
            None,
            g,
        )
        .unwrap();
        assert!(!v.holds_all_rows());
        let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(5.0).unwrap());
        opts.solver = Solver::Sgd(privpref::solver::sgd::SgdOptions::one_pass(
            privpref::solver::sgd::StepRule::InvT(0.5),
        ));
        let sgd = fit(v, &opts).unwrap_err().to_string();
        let op = objective_perturbation(
            v,
            &ObjPertOptions::new(
                1.0,
                1e-6,
                FeatureBound::pairwise(12.0).unwrap(),
                1.0,
                FeasibleSet::theta_b(1.0).unwrap(),
            ),
            &mut NoiseRng::seeded(7),
        )
        .unwrap_err()
        .to_string();
        (sgd, op)
    });
    for (sgd, op) in got {
        assert!(
            sgd.contains("rows held in parts") && op.contains("rows held in parts"),
            "{sgd} / {op}"
        );
    }
    // Parts off the block boundaries: an error on every member.
    let got = on_group(2, 1, |g| {
        let rows = if g.rank() == 0 { 0..100 } else { 100..n };
        PairwiseView::new_shard(
            Features::F64(&data.x[rows.start * d..rows.end * d]),
            d,
            &data.y[rows],
            None,
            g,
        )
        .unwrap_err()
        .to_string()
    });
    assert!(got.iter().all(|e| e.contains("multiple of")), "{got:?}");
}
