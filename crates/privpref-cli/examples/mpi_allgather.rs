//! Latency and throughput of the exchange the distributed fits make
//! (`privpref::par::Collective::all_gather` over MPI), for messages of 1 to 10⁶ `f64` per rank.
//!
//! Usage: `mpirun -np P target/release/examples/mpi_allgather` (built with
//! `cargo build --release -p privpref-cli --features mpi --example mpi_allgather`).
//! Rank 0 prints the median time of an exchange over the repetitions.

use privpref::par::mpi::Mpi;
use privpref::par::Collective;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let world = Mpi::init()?;
    let p = world.size();
    if world.rank() == 0 {
        println!("ranks = {p}: median time of one all-gather (every rank sends `values`, receives P·values)");
        println!("| values per rank | bytes per rank | median µs | received GB/s per rank |");
        println!("|---|---|---|---|");
    }
    for values in [1usize, 100, 10_000, 1_000_000] {
        let reps = if values >= 1_000_000 { 20 } else { 500 };
        let mine = vec![world.rank() as f64; values];
        // Warm-up, then timed repetitions (each rank times its own; rank 0 reports).
        for _ in 0..5 {
            std::hint::black_box(world.all_gather(&mine));
        }
        let mut t = Vec::with_capacity(reps);
        for _ in 0..reps {
            let s = Instant::now();
            let all = world.all_gather(&mine);
            t.push(s.elapsed().as_secs_f64());
            assert_eq!(all.len(), values * p);
        }
        t.sort_by(f64::total_cmp);
        let med = t[reps / 2];
        if world.rank() == 0 {
            println!(
                "| {values} | {} | {:.1} | {:.2} |",
                8 * values,
                med * 1e6,
                (8 * values * p) as f64 / med / 1e9
            );
        }
    }
    Ok(())
}
