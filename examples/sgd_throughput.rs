//! Quick throughput probe of the SGD engines (not a benchmark; see benches/sgd.rs).
use privpref::data::PairwiseView;
use privpref::feasible::FeasibleSet;
use privpref::loss::RrDebiased;
use privpref::objective::Objective;
use privpref::solver::sgd::{
    self, Averaging, ReplicaBlock, ReplicaOptions, ReplicaProblem, ReplicaSteps, Schedule, StepRule,
};
use privpref::solver::Control;
use std::time::Instant;

fn fill(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn main() {
    let loss = RrDebiased::new(1.0).unwrap();
    for set in [
        FeasibleSet::Unconstrained,
        FeasibleSet::ball(2.0).unwrap(),
        FeasibleSet::SumZero,
        FeasibleSet::theta_b(2.0).unwrap(),
    ] {
        if std::env::var("SET").is_ok_and(|v| v != set.name()) {
            continue;
        }
        println!("{set:?}");
        for (n, d, r) in [
            (10_000usize, 5usize, 8usize),
            (10_000, 5, 20),
            (10_000, 5, 100),
            (2000, 100, 64),
            (1000, 5, 16),
            (1000, 5, 8),
        ] {
            if std::env::var("ONLY").is_ok_and(|v| v != format!("{d}x{r}")) {
                continue;
            }
            let x = fill(n * d * r, 1);
            let y: Vec<u8> = (0..n * r).map(|i| (i % 3 == 0) as u8).collect();
            let blk = ReplicaBlock::new(&x, &y, n, d, r).unwrap();
            let prob = ReplicaProblem {
                loss,
                set,
                ridge: 0.0,
                linear_term: None,
            };
            let opts = ReplicaOptions::new(ReplicaSteps::Shared(Schedule::Const(0.1)));
            let mut best = f64::MAX;
            for _ in 0..std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(5) {
                let t = Instant::now();
                let o = sgd::replicated::run(&blk, &prob, &opts, &Control::default()).unwrap();
                std::hint::black_box(o);
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!(
                "replicated n={n} d={d} R={r}: {:.3} ms, {:.2} ns per lane-step, {:.2e} samples·features/s",
                best * 1e3,
                best * 1e9 / (n * r) as f64,
                (n * r * d) as f64 / best
            );
        }
    }
    let set = FeasibleSet::theta_b(2.0).unwrap();
    for (n, d) in [(1_000_000usize, 5usize), (200_000, 100)] {
        if std::env::var("ONLY").is_ok_and(|v| v != format!("{d}")) {
            continue;
        }
        let x = fill(n * d, 2);
        let y: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
        let view = PairwiseView::new(&x, n, d, &y, None).unwrap();
        let obj = Objective::new(view, loss);
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let o = sgd::one_pass(&obj, &set, None, StepRule::Const(0.1), Averaging::Last).unwrap();
            std::hint::black_box(o);
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "one_pass n={n} d={d}: {:.3} ms, {:.2} ns per step, {:.2e} samples·features/s",
            best * 1e3,
            best * 1e9 / n as f64,
            (n * d) as f64 / best
        );
    }
}
