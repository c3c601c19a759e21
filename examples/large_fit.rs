//! One exact fit at a large shape, with the solver's counts, wall time and peak extra memory.
//!
//! Usage: `large_fit [n] [d] [loss] [threads] [solver] [reps] [set] [signal]` (defaults 1e6,
//! 100, mle, all cores, newton, 1, theta-b, 1). `loss` is a CLI loss name, with `:EPS` for the RR losses
//! (`mle-rr:1`, `debiased-rr:1`); `solver` is `newton`, `newton-cg`, `lbfgs` or `auto`; `set` is
//! `theta-b`, `ball` (radius 2 for both), `sum-zero` or `none`; `signal` is `‖θ*‖` (larger: more
//! confident labels, smaller curvature, a worse-conditioned Hessian). Data: BTL pairs, `θ*`
//! sum-zero, seeds 1 and 2 (the RR losses see labels privatised at their ε, seed 3).
//!
//! Memory, two ways: (1) the **peak extra heap** of the fit, from a counting global allocator
//! (live bytes requested from the allocator, peak during the fit minus the level before it:
//! exact, and not fooled by memory the allocator keeps from earlier frees); (2) the **peak extra
//! resident memory**: before each fit the peak resident set is reset (`/proc/self/clear_refs`,
//! value 5) and the figure is `VmHWM` after the fit minus `VmRSS` before it (Linux only, `n/a`
//! elsewhere; after the first run it undercounts, as freed memory stays resident for reuse). The line also gives the accounting the issue asks for: the row-block working set
//! (the 2 MiB Hessian panel or 1 MiB stream block per thread), the `O(n)` score caches and the
//! `O(d²)` matrices of dense Newton.

use privpref::estimator::{fit, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, Mechanism, RandomizedResponse};
use privpref::sim::{btl_pairs, theta_star};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The system allocator, counting live heap bytes and their peak (exact and independent of
/// what the allocator keeps resident after frees, unlike `VmHWM`).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: forwards every call to `System` unchanged; the counters are side effects only.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `VmRSS` and `VmHWM` of this process in bytes (`None` off Linux).
fn rss_hwm() -> Option<(u64, u64)> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = s.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Resets `VmHWM` to the current resident set (Linux ≥ 4.0).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

fn main() -> privpref::Result<()> {
    let arg = |i: usize| std::env::args().nth(i);
    let n: usize = arg(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let d: usize = arg(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let loss_arg = arg(3).unwrap_or("mle".into());
    let (name, eps) = match loss_arg.split_once(':') {
        Some((l, e)) => (
            l.to_string(),
            Some(
                e.parse::<f64>()
                    .map_err(|_| privpref::Error::param("loss", format!("bad ε in `{loss_arg}`")))?,
            ),
        ),
        None => (loss_arg.clone(), None),
    };
    let loss = LossSpec::parse(&name, eps)?;
    let threads: usize = arg(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let solver = SolverKind::parse(&arg(5).unwrap_or("newton".into()))?;
    let reps: usize = arg(6).and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let set = FeasibleSet::parse(
        &arg(7).unwrap_or("theta-b".into()),
        match arg(7).as_deref() {
            None | Some("theta-b") | Some("ball") => Some(2.0),
            _ => None,
        },
    )?;
    let t0 = Instant::now();
    let signal: f64 = arg(8).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let theta = theta_star(d, signal, true, &mut simulation_rng(1))?;
    let mut data = btl_pairs(n, &theta, &mut simulation_rng(2))?;
    if let Some(e) = loss.eps() {
        data.y = RandomizedResponse::new(e)?.randomize(&data.y, &mut simulation_rng(3))?;
    }
    eprintln!("generated n = {n}, d = {d} in {:.2} s", t0.elapsed().as_secs_f64());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let mut opts = FitOptions::new(loss, set);
    opts.solver = solver.into();
    let view = data.view()?;
    let mut times = Vec::new();
    let mut first_peak = String::from("n/a");
    for rep in 0..reps {
        let reset = reset_peak();
        let before = rss_hwm();
        let live0 = LIVE.load(Ordering::Relaxed);
        PEAK.store(live0, Ordering::Relaxed);
        let t1 = Instant::now();
        let m = pool.install(|| fit(view, &opts))?;
        let wall = t1.elapsed().as_secs_f64();
        times.push(wall);
        let after = rss_hwm();
        let heap_peak = PEAK.load(Ordering::Relaxed).saturating_sub(live0);
        let r = &m.report;
        let peak = match (reset, before, after) {
            (true, Some((rss0, _)), Some((_, hwm))) => format!("{:.1} MB", mb(hwm.saturating_sub(rss0))),
            _ => "n/a".into(),
        };
        if rep == 0 {
            first_peak = format!(
                "{} heap_peak_mb={:.1}",
                peak.trim_end_matches(" MB"),
                mb(heap_peak as u64)
            );
        }
        let t = pool.current_num_threads();
        // Accounting of what a fit may hold besides X (bytes).
        let block = t as f64 * (2u64 << 20) as f64;
        let scores = 4.0 * 8.0 * n as f64;
        let dense = if r.counts.hessian_evals > 0 {
            // The pass's chunk accumulators (at most 2^k), and Newton's h, reduced copy, Helmert
            // temporary and up to three Cholesky factors; plus faer's GEMM workspace, allocated
            // once per thread on a thread's first product (64 MiB of address space, measured).
            let chunks = 1usize << privpref::kernels::fused::chunk_depth(d);
            (chunks + 6) as f64 * 8.0 * (d * d) as f64 + t as f64 * 67.1e6
        } else {
            0.0
        };
        println!(
            "[{}/{reps}] {} -> {} {:?}: {} iterations, {} data passes ({} value+grad, {} Hessians of which {} fused, {} CG, {} direction, {} compensated), {} line-search evals, KKT {:.2e} (tol {:.2e}), {:.3} s on {} threads, peak extra memory {} resident, {:.1} MB heap (bound: {:.1} MB panels/blocks + {:.1} MB O(n) scores + {:.1} MB O(d²) and GEMM workspace)",
            rep + 1,
            solver.name(),
            r.solver,
            r.termination,
            r.counts.iterations,
            r.data_passes(),
            r.counts.grad_evals,
            r.counts.hessian_evals,
            r.counts.fused_evals,
            r.counts.cg_iterations,
            r.counts.direction_passes,
            r.counts.compensated_evals,
            r.counts.line_search_evals,
            r.certificate.kkt_residual,
            r.certificate.kkt_tol,
            wall,
            t,
            peak,
            mb(heap_peak as u64),
            block / 1e6,
            scores / 1e6,
            dense / 1e6,
        );
    }
    let n_threads = pool.current_num_threads();
    times.sort_by(f64::total_cmp);
    // One summary line for tables: min and max wall over the runs.
    println!(
        "SUMMARY n={n} d={d} loss={loss_arg} set={} signal={signal} threads={n_threads} solver={} reps={reps} min_s={:.3} max_s={:.3} peak_mb={first_peak}",
        set.name(),
        solver.name(),
        times[0],
        times[reps - 1],
    );
    if reps > 1 {
        println!(
            "wall over {reps} runs: min {:.3} s, median {:.3} s, max {:.3} s",
            times[0],
            times[reps / 2],
            times[reps - 1]
        );
    }
    Ok(())
}
