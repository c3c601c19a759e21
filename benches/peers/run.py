"""Peer benchmark: the exact unpenalised logistic MLE (no intercept) by privpref and by
scikit-learn on the same data, with wall and CPU times, agreement checks and one Markdown table.

Data per shape (n, d), seeded: θ* uniform on the sphere of radius 1, x_i = φ_i¹ − φ_i⁰ with
φ ~ N(0, I) (drawn directly as √2·N(0, I), the same distribution), y_i ~ Bernoulli(σ(x_iᵀθ*)).
Written once as float64 / uint8 .npy files under target/peers-data.

Every fit runs in a fresh process with the thread count set through the environment
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS for numpy/scipy/scikit-learn;
`--threads` for privpref). Times exclude data generation. For scikit-learn the timed region is
`fit` only (data already loaded); for privpref the wall time is the whole CLI run (it includes
reading the .npy files) and the `fit s` column is the solver time the CLI reports (`elapsed_s`).
CPU time: `time.process_time()` around `fit` for scikit-learn, the children's rusage for privpref.

Agreement: every answer is compared with privpref's Newton answer (max |Δθ|) and its mean
log-loss gradient is recomputed here in numpy (max |∇|, the unconstrained KKT residual).

Usage (from the repository root): `benches/peers/run.sh [--shapes 20000x10,5000x100]
[--threads 1,2] [--out bench-results/peers.md]`.
"""

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

DEFAULT_SHAPES = "100000x10,1000000x10,1000000x100,100000x1000,200000x2000"
SKLEARN_SOLVERS = ["lbfgs", "newton-cg", "newton-cholesky", "liblinear"]
# privpref runs: (label, CLI solver arguments). "lbfgs-nopolish" stops at the first iterate
# meeting the KKT tolerance (`--polish-iters 0`), as scikit-learn's solvers stop at theirs.
PRIVPREF_SOLVERS = ["newton", "lbfgs", "auto", "lbfgs-nopolish"]
PRIVPREF_ARGS = {"newton": ["--solver", "newton"], "lbfgs": ["--solver", "lbfgs"],
                 "auto": ["--solver", "auto"],
                 "lbfgs-nopolish": ["--solver", "lbfgs", "--polish-iters", "0"]}
DATA_DIR = "target/peers-data"


def make_data(n, d, seed=2026):
    """Writes (if missing) and returns the paths of the x / y .npy files of shape (n, d)."""
    os.makedirs(DATA_DIR, exist_ok=True)
    xp = os.path.join(DATA_DIR, f"x_{n}x{d}.npy")
    yp = os.path.join(DATA_DIR, f"y_{n}x{d}.npy")
    if not (os.path.exists(xp) and os.path.exists(yp)):
        rng = np.random.default_rng([seed, n, d])
        theta = rng.standard_normal(d)
        theta /= np.linalg.norm(theta)
        x = np.empty((n, d))
        y = np.empty(n, dtype=np.uint8)
        step = max(1, (1 << 24) // d)
        for i in range(0, n, step):
            j = min(n, i + step)
            xb = np.sqrt(2.0) * rng.standard_normal((j - i, d))
            p = 1.0 / (1.0 + np.exp(-(xb @ theta)))
            x[i:j] = xb
            y[i:j] = rng.random(j - i) < p
        np.save(xp, x)
        np.save(yp, y)
    return xp, yp


SKLEARN_CHILD = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.exceptions import ConvergenceWarning
xp, yp, solver = sys.argv[1:4]
x = np.load(xp); y = np.load(yp)
if solver == "liblinear":
    # liblinear has no unpenalised mode: C = 1e12 makes the ridge negligible.
    model = LogisticRegression(penalty="l2", C=1e12, fit_intercept=False, tol=1e-10,
                               max_iter=100000, solver=solver)
else:
    model = LogisticRegression(penalty=None, fit_intercept=False, tol=1e-10,
                               max_iter=100000, solver=solver)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ConvergenceWarning)
    c0, w0 = time.process_time(), time.perf_counter()
    model.fit(x, y)
    w1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"theta": model.coef_[0].tolist(), "wall": w1 - w0, "cpu": c1 - c0,
                  "fit": w1 - w0, "n_iter": int(np.max(model.n_iter_)),
                  "warning": any(issubclass(w.category, ConvergenceWarning) for w in caught)}))
"""


def timed_out(limit):
    """The record of a fit stopped after `limit` seconds (no answer)."""
    return {"theta": None, "wall": float("nan"), "cpu": float("nan"), "fit": float("nan"),
            "n_iter": 0, "warning": True, "timeout": limit}


def run_sklearn(xp, yp, solver, threads, limit):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    try:
        out = subprocess.run([sys.executable, "-c", SKLEARN_CHILD, xp, yp, solver],
                             env=env, check=True, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return timed_out(limit)
    return json.loads(out.stdout)


def run_privpref(binary, xp, yp, solver, threads, limit):
    out_json = os.path.join(DATA_DIR, "privpref_out.json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    try:
        subprocess.run([binary, "fit", "--x", xp, "--y", yp, "--loss", "mle", "--constraint", "none",
                        *PRIVPREF_ARGS[solver], "--threads", str(threads), "--out", out_json],
                       check=True, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return timed_out(limit)
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out_json) as f:
        r = json.load(f)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"theta": r["theta"], "wall": wall, "cpu": cpu, "fit": r["elapsed_s"],
            "n_iter": r["iterations"], "warning": not r["converged"]}


def grad_inf(x, y, theta):
    """max |∇| of the mean log-loss at theta, in blocks (float64)."""
    n = x.shape[0]
    g = np.zeros(x.shape[1])
    step = max(1, (1 << 24) // x.shape[1])
    for i in range(0, n, step):
        xb = x[i:i + step]
        t = xb @ theta
        g += xb.T @ (1.0 / (1.0 + np.exp(-t)) - y[i:i + step])
    return float(np.max(np.abs(g / n)))


def versions():
    import scipy
    import sklearn
    import threadpoolctl
    return (f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"scikit-learn {sklearn.__version__}, threadpoolctl {threadpoolctl.__version__}")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def fmt_row(r):
    """One Markdown row of the main table."""
    tool = r["tool"]
    if r.get("timeout"):
        return (f"| {r['shape']} | {r['threads']} | {tool} | > {r['timeout']:.0f} (stopped) | – | – | – | – | – "
                f"| > {r['timeout'] / r['best']:.0f} | – |")
    flag = " !" if r["warning"] else ""
    return (f"| {r['shape']} | {r['threads']} | {tool}{flag} | {r['fit']:.3f} | {r['wall']:.3f} | "
            f"{r['cpu']:.3f} | {r['iters']} | {r['grad']:.1e} | {r['dtheta']:.1e} | "
            f"{r['ratio_fit']:.2f} | {r['ratio_wall']:.2f} |")


def summary_rows(res_by_block):
    """The issue's targets per shape and thread count: fastest scikit-learn fit / fastest privpref
    fit (target >= 5), newton-cholesky and liblinear / fastest privpref (target >= 20). A stopped
    fit counts with its time limit (a lower bound on its ratio, marked '>')."""
    out = []
    for (shape, t), res in res_by_block:
        best = min(r["fit"] for (tool, _), r in res.items() if tool == "privpref" and not r.get("timeout"))
        best_name = min(((r["fit"], s) for (tool, s), r in res.items()
                         if tool == "privpref" and not r.get("timeout")))[1]

        def ratio(keys):
            vals = [(res[k].get("timeout") or res[k]["fit"], bool(res[k].get("timeout"))) for k in keys]
            v, lower = min(vals)
            return f"{'> ' if lower else ''}{v / best:.2f}"
        sk = [k for k in res if k[0] == "scikit-learn"]
        fastest = min(sk, key=lambda k: res[k].get("timeout") or res[k]["fit"])
        out.append(f"| {shape} | {t} | {best_name} {best:.3f} | {fastest[1]} | {ratio([fastest])} | "
                   f"{ratio([('scikit-learn', 'newton-cholesky')])} | {ratio([('scikit-learn', 'liblinear')])} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated NxD")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default="bench-results/peers.md")
    ap.add_argument("--privpref", default="target/release/privpref")
    ap.add_argument("--timeout", type=float, default=900.0,
                    help="seconds after which one fit is stopped and reported as '> limit'")
    ap.add_argument("--title", default="Peer benchmark: exact logistic MLE, privpref vs scikit-learn")
    a = ap.parse_args()
    shapes = [tuple(int(v) for v in s.lower().split("x")) for s in a.shapes.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    rows = []
    blocks = []
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for n, d in shapes:
        xp, yp = make_data(n, d)
        x = np.load(xp, mmap_mode="r")
        y = np.load(yp).astype(np.float64)
        for t in threads:
            res = {}
            for s in PRIVPREF_SOLVERS:
                res[("privpref", s)] = run_privpref(a.privpref, xp, yp, s, t, a.timeout)
                print(f"{n}x{d} t={t} privpref {s}: {res[('privpref', s)]['wall']:.3f} s", file=sys.stderr)
            for s in SKLEARN_SOLVERS:
                res[("scikit-learn", s)] = run_sklearn(xp, yp, s, t, a.timeout)
                print(f"{n}x{d} t={t} sklearn {s}: {res[('scikit-learn', s)]['wall']:.3f} s", file=sys.stderr)
            ref = np.array(res[("privpref", "newton")]["theta"] or res[("privpref", "lbfgs")]["theta"])
            done = [s for s in PRIVPREF_SOLVERS if not res[("privpref", s)].get("timeout")]
            best = min(res[("privpref", s)]["fit"] for s in done)
            best_wall = min(res[("privpref", s)]["wall"] for s in done)
            blocks.append(((f"({n}, {d})", t), res))
            for (tool, s), r in res.items():
                row = {"shape": f"({n}, {d})", "threads": t, "tool": f"{tool} {s}",
                       "timeout": r.get("timeout"), "best": best}
                if not r.get("timeout"):
                    th = np.array(r["theta"])
                    row.update({
                        "wall": r["wall"], "cpu": r["cpu"], "fit": r["fit"], "iters": r["n_iter"],
                        "grad": grad_inf(x, y, th), "dtheta": float(np.max(np.abs(th - ref))),
                        "ratio_fit": r["fit"] / best, "ratio_wall": r["wall"] / best_wall,
                        "warning": r["warning"],
                    })
                rows.append(row)
            write_table(a, started, rows, blocks)
    print(f"wrote {a.out}", file=sys.stderr)


def write_table(a, started, rows, blocks):
    """Writes the whole table so far (called after every shape and thread count, so a run that is
    stopped part-way keeps what it measured)."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# {a.title}", "",
        f"Machine: {cpu_model()}, {os.cpu_count()} logical CPUs. Started: {started}; last row: {now}.",
        f"Command: `benches/peers/run.sh --shapes {a.shapes} --threads {a.threads} --timeout {a.timeout:g}`.",
        f"Versions: {versions()}; privpref at `{a.privpref}`.", "",
        "Unpenalised logistic MLE without intercept on BTL data (x = φ¹ − φ⁰, φ ~ N(0, I), ‖θ*‖ = 1). "
        "scikit-learn: `LogisticRegression(penalty=None, fit_intercept=False, tol=1e-10)` (liblinear: "
        "`penalty='l2', C=1e12`, its closest setting); privpref: `fit --loss mle --constraint none` "
        "(KKT tolerance 1e-10 relative; by default L-BFGS then polishes up to 10 iterations while the "
        "residual falls, `lbfgs-nopolish` = `--polish-iters 0` stops at the tolerance). `fit s`: the fit alone (scikit-learn's `fit`; privpref's "
        "reported solver time); `wall s` for privpref includes starting the CLI and reading the .npy "
        "files. Ratios are to the fastest privpref solver of the same shape and thread count, in "
        "the same run. `max |∇|`: mean log-loss gradient recomputed in numpy; `max |Δθ|`: against "
        "privpref's Newton answer. `!`: the solver reported non-convergence. A fit still running "
        f"after {a.timeout:g} s is stopped and shown as `> limit` (its ratio is then a lower bound).", "",
        "## Targets", "",
        "Fastest scikit-learn fit / fastest privpref fit (target ≥ 5) and newton-cholesky, liblinear / "
        "fastest privpref fit (target ≥ 20), fit times of the same run.", "",
        "| shape | threads | fastest privpref (s) | fastest scikit-learn | its ratio | newton-cholesky ratio | liblinear ratio |",
        "|---|---|---|---|---|---|---|",
        *summary_rows(blocks), "",
        "## All fits", "",
        "| shape | threads | solver | fit s | wall s | CPU s | iterations | max abs grad | max abs dθ | fit / best privpref | wall / best privpref |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *[fmt_row(r) for r in rows],
    ]
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
