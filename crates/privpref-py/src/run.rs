//! Running a library call from Python: the GIL released, on the caller's choice of worker
//! threads, interruptible by Ctrl-C, and never a crash.
//!
//! The call runs on a helper thread (borrowing the caller's arrays) while the calling thread,
//! without the GIL, waits for it. Every 50 ms the calling thread takes the GIL back to let
//! Python run its signal handlers; when one raises (Ctrl-C: `KeyboardInterrupt`), the solver's
//! interrupt flag ([`privpref::solver::Control::interrupt`]) is set, the solver stops at its
//! next check (between iterations), and the exception is raised once it has stopped, so no
//! work outlives the call. A panic inside the library (a bug) becomes a `RuntimeError` of
//! `privpref.errors.PrivprefError`'s family instead of aborting the interpreter.
//!
//! With a `progress` callable ([`run_observed`]), the solver's observer keeps the latest
//! progress, and the waiting thread, at each poll that finds a new one, calls the callable with
//! it as a dict — on the caller's thread, with the GIL — and once more with the last one when
//! the run ends. An exception it raises stops the solver like Ctrl-C does and is raised.

use privpref::solver::{Observer, Progress, SharedObserver};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The most worker threads `threads=` accepts (the CLI's limit).
pub const MAX_THREADS: usize = 256;

/// How often the waiting thread checks for signals.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `f` with the GIL released, on a pool of `threads` workers (`None`: rayon's global
/// pool), handing it the interrupt flag to put in its [`Control`](privpref::solver::Control).
/// Library errors become the exceptions of [`crate::errors`].
pub fn run<T, F>(py: Python<'_>, threads: Option<usize>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(Arc<AtomicBool>) -> privpref::Result<T> + Send,
{
    run_observed(py, threads, None, |flag, _| f(flag))
}

/// One progress call of a solver, as the callback sees it.
#[derive(Clone, Copy, Debug)]
struct Snapshot {
    solver: &'static str,
    iteration: usize,
    data_passes: Option<usize>,
    objective: f64,
    kkt_residual: f64,
}

/// An observer that keeps the latest progress for the waiting thread.
#[derive(Default)]
struct Latest {
    snapshot: Mutex<Option<Snapshot>>,
}

impl Latest {
    fn take(&self) -> Option<Snapshot> {
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl Observer for Latest {
    fn on_progress(&self, p: &Progress<'_>) {
        *self.snapshot.lock().unwrap_or_else(|p| p.into_inner()) = Some(Snapshot {
            solver: p.solver,
            iteration: p.iteration,
            data_passes: p.data_passes,
            objective: p.objective,
            kkt_residual: p.kkt_residual,
        });
    }
}

/// Calls `callback` with `s` as a dict (`solver`, `iteration`, `data_passes` (None for SGD),
/// `objective`, `kkt_residual` (NaN when not computed), `elapsed_s` since the call began).
fn deliver(py: Python<'_>, callback: &Bound<'_, PyAny>, s: Snapshot, start: Instant) -> PyResult<()> {
    let d = PyDict::new(py);
    d.set_item("solver", s.solver)?;
    d.set_item("iteration", s.iteration)?;
    d.set_item("data_passes", s.data_passes)?;
    d.set_item("objective", s.objective)?;
    d.set_item("kkt_residual", s.kkt_residual)?;
    d.set_item("elapsed_s", start.elapsed().as_secs_f64())?;
    callback.call1((d,)).map(|_| ())
}

/// [`run`], handing `f` an observer too when `progress` is a callable: the callable then
/// receives the solver's progress (module docs). `f` puts the observer in its
/// [`Control`](privpref::solver::Control).
pub fn run_observed<T, F>(
    py: Python<'_>,
    threads: Option<usize>,
    progress: Option<&Bound<'_, PyAny>>,
    f: F,
) -> PyResult<T>
where
    T: Send,
    F: FnOnce(Arc<AtomicBool>, Option<SharedObserver>) -> privpref::Result<T> + Send,
{
    let start = Instant::now();
    let latest = progress.map(|_| Arc::new(Latest::default()));
    let observer = latest.clone().map(|l| l as SharedObserver);
    let pool = pool(threads).map_err(|e| crate::errors::to_py(py, e))?;
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = channel();
    // `detach` needs `Sync` captures; the receiver is only ever used by this thread.
    let rx = Mutex::new(rx);
    let recv = |timeout: Option<Duration>| {
        let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
        match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        }
    };
    let outcome = std::thread::scope(|s| {
        let worker_flag = flag.clone();
        s.spawn(move || {
            let call = AssertUnwindSafe(move || match &pool {
                Some(p) => p.install(|| f(worker_flag, observer)),
                None => f(worker_flag, observer),
            });
            // The receiver outlives this thread (the scope joins it first).
            let _ = tx.send(catch_unwind(call));
        });
        loop {
            match py.detach(|| recv(Some(SIGNAL_POLL))) {
                Ok(done) => return Ok(done),
                Err(RecvTimeoutError::Timeout) => {
                    let shown = match (progress, latest.as_ref().and_then(|l| l.take())) {
                        (Some(cb), Some(s)) => deliver(py, cb, s, start),
                        _ => Ok(()),
                    };
                    if let Err(stop) = py.check_signals().and(shown) {
                        flag.store(true, Ordering::Relaxed);
                        // Wait for the solver to stop at its next check.
                        let _ = py.detach(|| recv(None));
                        return Err(stop);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "privpref: the worker thread ended without a result",
                    ))
                }
            }
        }
    })?;
    if let (Some(cb), Some(s)) = (progress, latest.as_ref().and_then(|l| l.take())) {
        deliver(py, cb, s, start)?;
    }
    match outcome {
        Ok(result) => result.map_err(|e| crate::errors::to_py(py, e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(PyRuntimeError::new_err(format!(
                "privpref: internal error (please report it): {what}"
            )))
        }
    }
}

/// The worker pools built so far, by size.
type Pools = Vec<(usize, Arc<rayon::ThreadPool>)>;

/// The pool of `threads` workers, built once per size and kept (`None`: the global pool).
fn pool(threads: Option<usize>) -> privpref::Result<Option<Arc<rayon::ThreadPool>>> {
    let Some(t) = threads else { return Ok(None) };
    if t == 0 || t > MAX_THREADS {
        return Err(privpref::Error::param(
            "threads",
            format!("must be in 1..={MAX_THREADS}, got {t}"),
        ));
    }
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == t) {
        return Ok(Some(p.clone()));
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(t)
        .build()
        .map_err(|e| privpref::Error::param("threads", format!("cannot start worker threads: {e}")))?;
    let p = Arc::new(p);
    pools.push((t, p.clone()));
    Ok(Some(p))
}
