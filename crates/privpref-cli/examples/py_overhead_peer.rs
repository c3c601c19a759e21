//! The Rust side of the Python-overhead benchmark (`benches/python/overhead.py`): loads
//! `X.npy` (`n × d` float64) and `y.npy` (uint8 labels) once, then times
//! `privpref::estimator::fit_features(Features::F64(&x), n, d, &y, None, &opts)` in-process,
//! with the options `privpref.fit(X, y, solver=S, threads=T)` builds (loss `mle`, constraint
//! `none`, `Control` defaults with `tol_rel = 1e-10`, `tol_abs = 0`, `max_iter = 100` and an
//! interrupt flag, the solver's default settings), on a rayon pool of `T` workers built once.
//!
//! Usage: `cargo run --release -p privpref-cli --example py_overhead_peer -- X.npy y.npy SOLVER
//! THREADS REPS [POLISH_ITERS]`. One warm-up call, then `REPS` timed calls; prints one JSON line:
//! `{"times": [seconds…], "elapsed_s": [the solver's own time…], "theta_bits": ["016x"…], "iterations": k, "converged": b}` (the bits
//! of the last call's θ, to compare with the Python side's bit for bit).
//!
//! Pages: numpy (>= 1.22, Linux) advises the kernel to back every array of 4 MiB or more with
//! transparent huge pages (`madvise(MADV_HUGEPAGE)` on the fresh allocation, before the data are
//! written; `NUMPY_MADVISE_HUGEPAGE=0` turns it off). The peer copies `X` into a buffer advised
//! the same way, so that both sides read `X` through the same page size, unless
//! `PEER_MADVISE_HUGEPAGE=0`. The JSON line also gives the process's `AnonHugePages` (kB, from
//! `/proc/self/smaps_rollup`) after loading, as the Python side does.
//!
//! `PEER_HANDOFF=1` makes each call the way the binding's `run` does (a helper thread per call,
//! a channel, the caller waiting in 50 ms slices), without Python.
//!
//! It lives in the CLI crate because that crate already builds the library with `npy`.

use privpref::data::npy;
use privpref::data::Features;
use privpref::estimator::{fit_features, FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::solver::lbfgs::LbfgsOptions;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: py_overhead_peer X.npy y.npy SOLVER THREADS REPS [POLISH_ITERS]";
    let (xp, yp, solver, threads, reps) = match &args[..] {
        [x, y, s, t, r, ..] => (x, y, s.as_str(), t.parse::<usize>()?, r.parse::<usize>()?),
        _ => return Err(usage.into()),
    };
    let polish: Option<usize> = args.get(5).map(|p| p.parse()).transpose()?;

    let (x, n, d) = npy::read_matrix(xp)?;
    let x = if std::env::var("PEER_MADVISE_HUGEPAGE").as_deref() == Ok("0") {
        x
    } else {
        hugepage_copy(x)
    };
    let huge_kb = anon_huge_kb();
    let y = npy::read_labels(yp, 2)?;

    // As crates/privpref-py/src/options.rs (SolveArgs::fit_options) builds them.
    let mut opts = FitOptions::new(LossSpec::parse("mle", None)?, FeasibleSet::parse("none", None)?);
    opts.solver = match SolverKind::parse(solver)? {
        kind @ (SolverKind::Lbfgs | SolverKind::Auto) => {
            let mut o = LbfgsOptions::default();
            if let Some(k) = polish {
                o.polish_iters = k;
            }
            if kind == SolverKind::Lbfgs {
                Solver::Lbfgs(o)
            } else {
                Solver::Auto(o)
            }
        }
        other => other.into(),
    };
    opts.control.max_iter = 100;
    opts.control.tol_rel = 1e-10;
    opts.control.tol_abs = 0.0;
    opts.control.interrupt = Some(Arc::new(AtomicBool::new(false)));
    opts.validate()?;

    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let fit_once = || pool.install(|| fit_features(Features::F64(&x), n, d, &y, None, &opts));
    // PEER_HANDOFF=1: the call goes the way the Python binding's `run` makes it (a scoped helper
    // thread per call runs it and sends the result over a channel, while the calling thread
    // waits in 50 ms slices), to tell the cost of that hand-off from the cost of Python.
    let handoff = std::env::var("PEER_HANDOFF").as_deref() == Ok("1");
    let call = || {
        if !handoff {
            return fit_once();
        }
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            s.spawn(move || {
                let _ = tx.send(fit_once());
            });
            loop {
                match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                    Ok(r) => return r,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(e) => panic!("the helper thread ended without a result: {e}"),
                }
            }
        })
    };

    let mut fit = call()?; // warm-up
    let (mut times, mut inner) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        let t0 = Instant::now();
        let f = call();
        times.push(t0.elapsed().as_secs_f64());
        fit = f?;
        inner.push(fit.report.counts.elapsed.as_secs_f64());
    }
    let secs = |v: &[f64]| v.iter().map(|t| format!("{t:.9}")).collect::<Vec<_>>().join(", ");
    let bits: Vec<String> = fit.theta.iter().map(|v| format!("\"{:016x}\"", v.to_bits())).collect();
    println!(
        "{{\"times\": [{}], \"elapsed_s\": [{}], \"theta_bits\": [{}], \"iterations\": {}, \"converged\": {}, \"anon_huge_kb\": {}}}",
        secs(&times),
        secs(&inner),
        bits.join(", "),
        fit.report.counts.iterations,
        fit.report.converged(),
        huge_kb
    );
    Ok(())
}

/// `x` copied into a fresh buffer advised `MADV_HUGEPAGE` before it is written, as numpy's
/// allocator does for arrays of 4 MiB or more (`npy_alloc`: from the first page boundary inside
/// the allocation to its end).
fn hugepage_copy(x: Vec<f64>) -> Vec<f64> {
    // The C library's madvise (std links it on Linux); MADV_HUGEPAGE from <sys/mman.h>.
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    const PAGE: usize = 4096;
    let bytes = std::mem::size_of_val(&x[..]);
    let mut buf: Vec<f64> = Vec::with_capacity(x.len());
    if bytes >= 1 << 22 {
        let p = buf.as_mut_ptr() as usize;
        let offset = PAGE - p % PAGE;
        // SAFETY: [p + offset, p + bytes) lies inside the allocation just made, not yet written.
        unsafe { madvise((p + offset) as *mut std::ffi::c_void, bytes - offset, MADV_HUGEPAGE) };
    }
    buf.extend_from_slice(&x);
    buf
}

/// `AnonHugePages` of this process in kB (`/proc/self/smaps_rollup`; -1 if unreadable).
fn anon_huge_kb() -> i64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(-1)
}
