"""privpref.fit vs scikit-learn's LogisticRegression from the same Python process, on the same
arrays: the unpenalised logistic MLE without intercept on the peers harness's BTL data.

Per shape the data are generated once (common.btl, the data of benches/peers), the reference θ
is privpref's Newton answer (Newton-CG for d ≥ 1000, where dense Newton costs n·d² per
iteration), then for each thread count, inside threadpoolctl's threadpool_limits(t) (BLAS and
OpenMP, so scikit-learn's loss and BLAS calls use t threads) and with privpref's threads=t,
ROUNDS rounds run every candidate once, alternating the order (privpref, scikit-learn, privpref,
... in even rounds; reversed in odd rounds). A candidate whose first fit took longer than
--once-above seconds runs in the first round only. A scikit-learn solver listed in --skip is
not run (its time in benches/peers said it would exceed ~120 s).

Candidates: privpref auto, lbfgs, lbfgs with polish_iters=0 ("lbfgs-nopolish");
scikit-learn lbfgs and newton-cholesky (penalty=None, fit_intercept=False, tol=1e-10,
max_iter=100000). Times: time.perf_counter around fit alone (privpref.fit includes its
argument checks and result conversion). Checks: max |Δθ| against the reference, and the mean
log-loss gradient recomputed in numpy (max |∇|).

Usage (from the repository root): python benches/python/vs_sklearn.py
    [--shapes 100000x10,... --threads 1,2 --rounds 5 --out target/py-bench/vs_sklearn.json]
"""

import argparse
import gc
import json
import os
import statistics as st
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import privpref  # noqa: E402
import sklearn  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

DEFAULT_SHAPES = "100000x10,1000000x10,1000000x100,100000x1000,200000x2000"
PRIVPREF = {"auto": {"solver": "auto"}, "lbfgs": {"solver": "lbfgs"},
            "lbfgs-nopolish": {"solver": "lbfgs", "polish_iters":0}}
SKLEARN = ["lbfgs", "newton-cholesky"]


def sk_model(solver):
    major_minor = tuple(int(v) for v in sklearn.__version__.split(".")[:2])
    # scikit-learn 1.8 deprecates penalty=None in favour of C=np.inf.
    unpenalised = {"C": np.inf} if major_minor >= (1, 8) else {"penalty": None}
    return LogisticRegression(fit_intercept=False, tol=1e-10, max_iter=100000, solver=solver, **unpenalised)


def run_privpref(x, y, name, threads):
    t0 = time.perf_counter()
    f = privpref.fit(x, y, threads=threads, **PRIVPREF[name])
    dt = time.perf_counter() - t0
    return {"time": dt, "theta": np.array(f.theta), "iterations": int(f.counts["iterations"]),
            "converged": bool(f.converged), "solver_used": f.solver, "elapsed_s": f.counts["elapsed_s"]}


def run_sklearn(x, y, name):
    m = sk_model(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        m.fit(x, y)
        dt = time.perf_counter() - t0
    return {"time": dt, "theta": m.coef_[0].copy(), "iterations": int(np.max(m.n_iter_)),
            "converged": not any(issubclass(w.category, ConvergenceWarning) for w in caught)}


def grad_inf(x, y, theta):
    """max |∇| of the mean log-loss at theta, in blocks."""
    g = np.zeros(x.shape[1])
    step = max(1, (1 << 24) // x.shape[1])
    for i in range(0, x.shape[0], step):
        xb = x[i:i + step]
        g += xb.T @ (1.0 / (1.0 + np.exp(-(xb @ theta))) - y[i:i + step])
    return float(np.max(np.abs(g / x.shape[0])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5, help="rounds for shapes with n·d ≤ 1e7")
    ap.add_argument("--rounds-large", type=int, default=3, help="rounds for shapes with n·d > 1e7")
    ap.add_argument("--once-above", type=float, default=10.0)
    ap.add_argument("--skip", default="newton-cholesky@200000x2000@1",
                    help="comma-separated SOLVER@NxD@THREADS scikit-learn runs not made")
    ap.add_argument("--quiet-load", type=float, default=1.5)
    ap.add_argument("--out", default=os.path.join(common.ROOT, "target", "py-bench", "vs_sklearn.json"))
    a = ap.parse_args()
    skip = set(s for s in a.skip.split(",") if s)
    threads = [int(t) for t in a.threads.split(",")]
    res = {"started": common.now(), "machine": common.machine(), "versions": common.versions(),
           "command": "python benches/python/vs_sklearn.py " + " ".join(sys.argv[1:]),
           "skipped": sorted(skip), "blocks": []}

    # Warm-up: imports, first calls, privpref's pools.
    xw, yw = common.btl(2000, 10)
    for t in threads:
        with threadpool_limits(limits=t):
            for name in PRIVPREF:
                run_privpref(xw, yw, name, t)
            for name in SKLEARN:
                run_sklearn(xw, yw, name)

    for shape in a.shapes.split(","):
        n, d = (int(v) for v in shape.lower().split("x"))
        t0 = time.perf_counter()
        x, y = common.btl(n, d)
        gen_s = time.perf_counter() - t0
        ref_solver = "newton" if d < 1000 else "newton-cg"
        t0 = time.perf_counter()
        ref = privpref.fit(x, y, solver=ref_solver, threads=max(threads))
        ref_s = time.perf_counter() - t0
        ref_theta = np.array(ref.theta)
        print(f"{n}x{d}: data {gen_s:.1f} s, reference {ref_solver} {ref_s:.2f} s "
              f"(converged {ref.converged})", file=sys.stderr)
        rounds = a.rounds if n * d <= 10**7 else a.rounds_large
        for t in threads:
            load0 = common.wait_quiet(a.quiet_load)
            cands = [("privpref", s) for s in PRIVPREF] + [("scikit-learn", s) for s in SKLEARN
                                                           if f"{s}@{n}x{d}@{t}" not in skip]
            # privpref and scikit-learn alternate: p, s, p, s, p.
            p = [c for c in cands if c[0] == "privpref"]
            s = [c for c in cands if c[0] == "scikit-learn"]
            order = []
            while p or s:
                if p:
                    order.append(p.pop(0))
                if s:
                    order.append(s.pop(0))
            runs = {c: [] for c in cands}
            loads = []
            with threadpool_limits(limits=t):
                for r in range(rounds):
                    for c in (order if r % 2 == 0 else order[::-1]):
                        if r > 0 and runs[c][0]["time"] > a.once_above:
                            continue
                        gc.collect()
                        out = run_privpref(x, y, c[1], t) if c[0] == "privpref" else run_sklearn(x, y, c[1])
                        runs[c].append(out)
                        print(f"  {n}x{d} t={t} round {r} {c[0]} {c[1]}: {out['time']:.3f} s", file=sys.stderr)
                    loads.append(common.load1())
            block = {"shape": [n, d], "threads": t, "reference": ref_solver, "reference_s": ref_s,
                     "reference_converged": bool(ref.converged), "data_s": gen_s, "load_start": load0,
                     "loads": loads, "fits": []}
            for c, outs in runs.items():
                last = outs[-1]
                block["fits"].append({
                    "tool": c[0], "solver": c[1], "times": [o["time"] for o in outs],
                    "median": st.median(o["time"] for o in outs), "iterations": last["iterations"],
                    "converged": last["converged"], "solver_used": last.get("solver_used"),
                    "dtheta": float(np.max(np.abs(last["theta"] - ref_theta))),
                    "grad": grad_inf(x, y, last["theta"]),
                    "same_theta_every_round": all(np.array_equal(o["theta"], last["theta"]) for o in outs),
                })
            res["blocks"].append(block)
            res["finished"] = common.now()
            os.makedirs(os.path.dirname(a.out), exist_ok=True)
            with open(a.out, "w") as f:
                json.dump(res, f, indent=1)
        del x, y, ref
        gc.collect()
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
