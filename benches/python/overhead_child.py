"""The Python side of the overhead benchmark (run by overhead.py, one process per pair member):
loads X.npy / y.npy with numpy, calls privpref.fit(X, y, solver=S, threads=T) once as a warm-up,
then REPS times, each timed with time.perf_counter around the call alone. Prints one JSON line
like the Rust peer's: times, the solver's own elapsed_s per call, the bits of the last θ,
iterations, converged, and the process's AnonHugePages after loading.

Usage: python overhead_child.py X.npy y.npy SOLVER THREADS REPS [POLISH_ITERS]
"""

import json
import sys
import time

import numpy as np

import privpref


def anon_huge_kb():
    """AnonHugePages of this process in kB (numpy advises huge pages for arrays of 4 MiB or more
    unless NUMPY_MADVISE_HUGEPAGE=0); -1 if unreadable."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                if line.startswith("AnonHugePages:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def main():
    xp, yp, solver, threads, reps = sys.argv[1:6]
    threads, reps = int(threads), int(reps)
    kw = {"solver": solver, "threads": threads}
    if len(sys.argv) > 6:
        kw["polish_iters"] = int(sys.argv[6])
    x = np.load(xp)
    y = np.load(yp)
    huge_kb = anon_huge_kb()
    fit = privpref.fit(x, y, **kw)  # warm-up (also builds the pool of `threads` workers)
    times, inner = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        fit = privpref.fit(x, y, **kw)
        times.append(time.perf_counter() - t0)
        inner.append(fit.counts["elapsed_s"])
    theta = np.ascontiguousarray(fit.theta, dtype=np.float64)
    print(json.dumps({"times": times, "elapsed_s": inner,
                      "theta_bits": [f"{b:016x}" for b in theta.view(np.uint64)],
                      "iterations": int(fit.counts["iterations"]), "converged": bool(fit.converged),
                      "anon_huge_kb": huge_kb}))


if __name__ == "__main__":
    main()
