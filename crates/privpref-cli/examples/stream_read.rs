//! Times one streaming read of a feature matrix (the sum of all its values) the way `privpref
//! fit` would hold it: the `.npy` file loaded by the CLI's loader (`npy::load_matrix`:
//! memory-mapped when its layout allows, `float32` kept as `f32`), the read run on a rayon pool
//! of `THREADS` threads built as the CLI builds its pool for `--threads`. The read is the
//! library's bandwidth baseline, `kernels::stream_sum` (`stream_sum_f32` for `float32` data),
//! with the blocks and threading of the fit's passes.
//!
//! The first read (which also faults the map's pages in, as a fit's first pass does) is timed
//! on its own and serves as the warm-up; then `REPEATS` reads (default 7) are timed and their
//! median reported. Prints one JSON object:
//! `{"x", "n", "d", "dtype", "mapped", "threads", "bytes", "first_s", "median_s", "min_s",
//! "max_s", "repeats", "gb_per_s", "sum"}` (`gb_per_s` = bytes / median, in 10⁹ bytes/s).
//!
//! Usage: `cargo run --release -p privpref-cli --example stream_read -- X.npy THREADS [REPEATS]`.
//! Used by the peer benchmark (`benches/peers/run.py`) for its "passes' worth" column.

use privpref::data::{npy, Features};
use privpref::kernels;
use privpref::par::Par;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: stream_read X.npy THREADS [REPEATS]";
    let (path, threads, repeats) = match &args[..] {
        [p, t] => (p.clone(), t.parse::<usize>()?, 7),
        [p, t, r] => (p.clone(), t.parse::<usize>()?, r.parse::<usize>()?),
        _ => return Err(usage.into()),
    };
    if threads == 0 || repeats == 0 {
        return Err(format!("THREADS and REPEATS must be at least 1; {usage}").into());
    }
    let x = npy::load_matrix(&path)?;
    let (n, d) = (x.n(), x.d());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let read = || -> (f64, f64) {
        let t0 = Instant::now();
        let s = match x.features() {
            Features::F64(v) => kernels::stream_sum(v, d, Par::Rayon),
            Features::F32(v) => kernels::stream_sum_f32(v, d, Par::Rayon),
        };
        (std::hint::black_box(s), t0.elapsed().as_secs_f64())
    };
    let (sum, first) = pool.install(read);
    let mut times: Vec<f64> = (0..repeats).map(|_| pool.install(read).1).collect();
    times.sort_by(f64::total_cmp);
    let median = if repeats % 2 == 1 {
        times[repeats / 2]
    } else {
        0.5 * (times[repeats / 2 - 1] + times[repeats / 2])
    };
    let (dtype, bytes) = match x.features() {
        Features::F64(v) => ("float64", v.len() * 8),
        Features::F32(v) => ("float32", v.len() * 4),
    };
    let out = serde_json::json!({
        "x": path,
        "n": n,
        "d": d,
        "dtype": dtype,
        "mapped": x.is_mapped(),
        "threads": threads,
        "bytes": bytes,
        "first_s": first,
        "median_s": median,
        "min_s": times[0],
        "max_s": times[repeats - 1],
        "repeats": repeats,
        "gb_per_s": bytes as f64 / median / 1e9,
        "sum": sum,
    });
    println!("{out}");
    // As the CLI does after a fit: the map's teardown on the pool's threads.
    pool.install(|| x.release());
    Ok(())
}
