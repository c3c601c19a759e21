"""Overhead of the Python call over the Rust call: privpref.fit(X, y, solver=S, threads=T) from
Python vs privpref::estimator::fit_features(...) in a Rust program, same .npy files, same options.

For each (solver, threads): one check pair (REPS = 1) whose θ must be bit-identical between the
two sides, then PAIRS pairs of processes, each process timing REPS calls after one warm-up; the
order within a pair alternates (rust first in even pairs, python first in odd ones). Per pair the
ratio is median(python) / median(rust); the medians over all calls are reported too, and the
time outside the solver (call time − the solver's own elapsed_s) on each side. X lies on
transparent huge pages on both sides (numpy advises them for large arrays; the Rust peer copies
X into a buffer advised the same way), or on neither with --hugepage 0.

Usage (from the repository root, after `cargo build --release -p privpref-cli --example
py_overhead_peer` and `pip install crates/privpref-py` into the running Python):
    python benches/python/overhead.py [--n 100000 --d 100 --pairs 9 --reps 15
        --settings lbfgs:1,lbfgs:2,newton:1,newton:2 --out target/py-bench/overhead.json]
"""

import argparse
import json
import os
import statistics as st
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PEER = os.path.join(common.ROOT, "target", "release", "examples", "py_overhead_peer")
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overhead_child.py")


def run_side(side, xp, yp, solver, threads, reps, hugepage):
    cmd = ([PEER] if side == "rust" else [sys.executable, CHILD]) + [xp, yp, solver, str(threads), str(reps)]
    env = dict(os.environ, NUMPY_MADVISE_HUGEPAGE=str(hugepage), PEER_MADVISE_HUGEPAGE=str(hugepage))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    r = json.loads(out.stdout)
    r["load"] = common.load1()
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--settings", default="lbfgs:1,lbfgs:2,newton:1,newton:2")
    ap.add_argument("--hugepage", type=int, choices=(0, 1), default=1,
                    help="1: X on transparent huge pages on both sides (numpy's default allocator "
                         "advice, copied by the Rust peer); 0: neither side advises them")
    ap.add_argument("--quiet-load", type=float, default=1.5,
                    help="wait (up to 120 s) for the 1-min load average to fall below this before each setting")
    ap.add_argument("--out", default=os.path.join(common.ROOT, "target", "py-bench", "overhead.json"))
    a = ap.parse_args()
    xp, yp = common.btl_files(a.n, a.d)
    results = {"started": common.now(), "machine": common.machine(), "versions": common.versions(),
               "n": a.n, "d": a.d, "pairs": a.pairs, "reps": a.reps, "hugepage": a.hugepage,
               "command": "python benches/python/overhead.py " + " ".join(sys.argv[1:]), "settings": []}
    for spec in a.settings.split(","):
        solver, threads = spec.split(":")
        threads = int(threads)
        load0 = common.wait_quiet(a.quiet_load)
        # The check pair: θ bit for bit.
        rc = run_side("rust", xp, yp, solver, threads, 1, a.hugepage)
        pc = run_side("python", xp, yp, solver, threads, 1, a.hugepage)
        if rc["theta_bits"] != pc["theta_bits"]:
            raise SystemExit(f"{solver}:{threads}: θ differs between Rust and Python:\n{rc['theta_bits']}\n{pc['theta_bits']}")
        s = {"solver": solver, "threads": threads, "load_start": load0, "iterations": rc["iterations"],
             "converged": rc["converged"], "theta_identical": True, "pairs": []}
        for i in range(a.pairs):
            order = ["rust", "python"] if i % 2 == 0 else ["python", "rust"]
            pair = {}
            for side in order:
                r = run_side(side, xp, yp, solver, threads, a.reps, a.hugepage)
                if r["theta_bits"] != rc["theta_bits"]:
                    raise SystemExit(f"{solver}:{threads}: {side} θ changed in pair {i}")
                pair[side] = {"times": r["times"], "elapsed_s": r["elapsed_s"], "load": r["load"],
                              "anon_huge_kb": r["anon_huge_kb"]}
            pair["first"] = order[0]
            pair["ratio"] = st.median(pair["python"]["times"]) / st.median(pair["rust"]["times"])
            s["pairs"].append(pair)
            print(f"{solver}:{threads} pair {i} ({order[0]} first): rust {st.median(pair['rust']['times']) * 1e3:.2f} ms, "
                  f"python {st.median(pair['python']['times']) * 1e3:.2f} ms, ratio {pair['ratio']:.4f}, "
                  f"load {pair['python']['load']:.2f}", file=sys.stderr)
        results["settings"].append(s)
        results["finished"] = common.now()
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
