//! What a distributed fit sends between processes: the number of collective exchanges and the
//! bytes each rank contributes and receives, per solver iteration, for groups of P ranks. The
//! group is threads of this process (`privpref::par::ThreadGroup`), which makes exactly the
//! exchanges that MPI ranks make (the same calls with the same buffers), counted here by a
//! wrapper around it.
//!
//! Usage: `cargo run --release --example mpi_traffic -- [N] [D]` (default 200000 100).

use privpref::estimator::{fit, FitOptions, Solver};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::par::{Collective, ThreadGroup};
use privpref::sim::{btl_pairs, theta_star};
use privpref::solver::lbfgs::LbfgsOptions;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A member of a group that counts its exchanges and their sizes.
#[derive(Debug)]
struct Counting<'a> {
    inner: &'a dyn Collective,
    exchanges: AtomicUsize,
    sent: AtomicUsize,
    received: AtomicUsize,
}

impl Collective for Counting<'_> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }
    fn size(&self) -> usize {
        self.inner.size()
    }
    fn all_gather(&self, mine: &[f64]) -> Vec<f64> {
        let all = self.inner.all_gather(mine);
        self.exchanges.fetch_add(1, Ordering::Relaxed);
        self.sent.fetch_add(8 * mine.len(), Ordering::Relaxed);
        self.received.fetch_add(8 * all.len(), Ordering::Relaxed);
        all
    }
    fn broadcast(&self, buf: &mut [u8]) {
        self.inner.broadcast(buf);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let n = args.first().copied().unwrap_or(200_000);
    let d = args.get(1).copied().unwrap_or(100);
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1))?;
    let data = btl_pairs(n, &theta, &mut simulation_rng(2))?;
    let view = data.view()?;
    println!(
        "n = {n}, d = {d}: exchanges and bytes per solver iteration (rank 0; every rank sends O(log blocks) partials)"
    );
    println!("| solver | P | iterations | exchanges / iter | sent by rank 0 / iter | received by each rank / iter |");
    println!("|---|---|---|---|---|---|");
    for (name, solver) in [
        ("newton", Solver::Newton),
        ("newton-cg", Solver::NewtonCg),
        ("lbfgs", Solver::Lbfgs(LbfgsOptions::default())),
    ] {
        let mut opts = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(10.0)?);
        opts.solver = solver;
        let want = fit(view, &opts)?;
        for p in [2usize, 4] {
            let out = ThreadGroup::run(p, |g| {
                let c = Counting {
                    inner: g,
                    exchanges: AtomicUsize::new(0),
                    sent: AtomicUsize::new(0),
                    received: AtomicUsize::new(0),
                };
                let f = fit(view.distributed(&c), &opts).expect("the distributed fit");
                let load = |a: &AtomicUsize| a.load(Ordering::Relaxed);
                (f, load(&c.exchanges), load(&c.sent), load(&c.received))
            });
            let (f, ex, sent, recv) = &out[0];
            assert_eq!(f.theta, want.theta, "the distributed fit has the single-process bits");
            let it = f.report.counts.iterations.max(1) as f64;
            println!(
                "| {name} | {p} | {} | {:.1} | {:.1} KiB | {:.1} KiB |",
                f.report.counts.iterations,
                *ex as f64 / it,
                *sent as f64 / it / 1024.0,
                *recv as f64 / it / 1024.0
            );
        }
    }
    Ok(())
}
