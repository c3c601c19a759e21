"""Peer benchmark: the exact unpenalised logistic MLE (no intercept) by privpref and by
scikit-learn on the same data, with wall and CPU times, agreement checks and one Markdown table.

Data per shape (n, d), seeded: θ* uniform on the sphere of radius 1, x_i = φ_i¹ − φ_i⁰ with
φ ~ N(0, I) (drawn directly as √2·N(0, I), the same distribution), y_i ~ Bernoulli(σ(x_iᵀθ*)).
Written once as float64 / uint8 .npy files under target/peers-data; with `--dtypes …,f32` the
same features are also cast to float32 and written as a float32 .npy file (the labels are
shared), which privpref maps and reads as f32 and scikit-learn receives as a float32 array.

Every fit runs in a fresh process with the thread count set through the environment
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS for numpy/scipy/scikit-learn;
`--threads` for privpref). Times exclude data generation. For scikit-learn the timed region is
`fit` only (data already loaded); for privpref the wall time is the whole CLI run (it includes
reading the .npy files) and the `fit s` column is the solver time the CLI reports (`elapsed_s`).
CPU time: `time.process_time()` around `fit` for scikit-learn, the children's rusage for privpref.

Agreement: every answer is compared with privpref's Newton answer on the same dtype's data
(max |Δθ|, flagged above 1e-8) and its mean log-loss gradient is recomputed here in numpy, in
float64 on the features that fit saw (max |∇|, the unconstrained KKT residual).

Streaming-read reference: for each shape, dtype and thread count, the example
`crates/privpref-cli/examples/stream_read.rs` loads the .npy file with the CLI's loader and
times the library's streaming read of X (`kernels::stream_sum`, `stream_sum_f32`) on a pool of
that many threads (median of `--stream-repeats` reads after one warm-up read). "Passes' worth"
= fit time / that read time. privpref's `data_passes` (reads of X by the solver, from its JSON)
and the time per pass are reported too.

Usage (from the repository root): `benches/peers/run.sh [--shapes 20000x10,5000x100]
[--threads 1,2] [--dtypes f64,f32] [--out bench-results/peers.md]`.
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
                 "newton-cg": ["--solver", "newton-cg"],
                 "auto": ["--solver", "auto"],
                 "lbfgs-nopolish": ["--solver", "lbfgs", "--polish-iters", "0"]}
DATA_DIR = "target/peers-data"
DTYPES = {"f64": np.float64, "f32": np.float32}
# Targets for the fastest privpref fit's passes' worth (fit time / one streaming read of X).
PASSES_TARGET_N1E6_D100 = 6.0
PASSES_TARGET_D1000 = 10.0
# Answers further than this from privpref's Newton answer on the same data are flagged.
AGREEMENT_TOL = 1e-8


def fwht(a):
    """The orthonormal Walsh–Hadamard transform of each row of `a` (width a power of two)."""
    a = a.copy()
    m = a.shape[1]
    h = 1
    while h < m:
        v = a.reshape(a.shape[0], -1, 2, h)
        s, t = v[:, :, 0, :] + v[:, :, 1, :], v[:, :, 0, :] - v[:, :, 1, :]
        v[:, :, 0, :], v[:, :, 1, :] = s, t
        h *= 2
    return a / np.sqrt(m)


def make_data(n, d, design="isotropic", seed=2026):
    """Writes (if missing) and returns the paths of the x / y .npy files of shape (n, d).

    `isotropic`: x ~ N(0, 2I). `powerlaw`: the law of the library's `sim::power_law_pairs`
    with condition number d — x ~ N(0, 2QΛQᵀ), λ_k ∝ 1/k with trace d, Q = HD/√d (H
    Walsh–Hadamard, D random signs), so every column has variance 2 and column scaling leaves
    the condition number d as it is (d a power of two). `colscale`: x = S z, z ~ N(0, 2I),
    S = diag(s), s_j = 10^(4j/(d−1) − 2) (column scales spread geometrically over 1e4, so
    XᵀX has condition number about 1e8 that a diagonal scaling removes), and θ = S⁻¹u with u
    the random unit vector, so xᵀθ = zᵀu has the isotropic law."""
    os.makedirs(DATA_DIR, exist_ok=True)
    tag = f"{n}x{d}" if design == "isotropic" else f"{design}_{n}x{d}"
    xp = os.path.join(DATA_DIR, f"x_{tag}.npy")
    yp = os.path.join(DATA_DIR, f"y_{tag}.npy")
    if design == "powerlaw" and d & (d - 1):
        raise SystemExit(f"--design powerlaw needs d a power of two, got {d}")
    if not (os.path.exists(xp) and os.path.exists(yp)):
        rng = np.random.default_rng([seed, n, d])
        theta = rng.standard_normal(d)
        theta /= np.linalg.norm(theta)
        lam = 1.0 / np.arange(1, d + 1)
        root = np.sqrt(lam * d / lam.sum())
        signs = rng.choice([-1.0, 1.0], size=d)
        scales = 10.0 ** (4.0 * np.arange(d) / max(d - 1, 1) - 2.0)
        if design == "colscale":
            theta = theta / scales
        x = np.lib.format.open_memmap(xp + ".tmp", mode="w+", dtype=np.float64, shape=(n, d))
        y = np.empty(n, dtype=np.uint8)
        step = max(1, (1 << 24) // d)
        for i in range(0, n, step):
            j = min(n, i + step)
            xb = np.sqrt(2.0) * rng.standard_normal((j - i, d))
            if design == "powerlaw":
                xb = fwht(xb * (root * signs))
            elif design == "colscale":
                xb = xb * scales
            p = 1.0 / (1.0 + np.exp(-(xb @ theta)))
            x[i:j] = xb
            y[i:j] = rng.random(j - i) < p
        x.flush()
        del x
        os.replace(xp + ".tmp", xp)
        np.save(yp, y)
    return xp, yp


def make_f32(xp, n, d):
    """Writes (if missing) and returns the path of the float32 cast of the float64 features at
    `xp` (rounded to nearest by numpy's cast), written in blocks through a temporary file."""
    xp32 = os.path.join(DATA_DIR, "x32_" + os.path.basename(xp)[2:])
    if not os.path.exists(xp32):
        x = np.load(xp, mmap_mode="r")
        tmp = xp32 + ".tmp"
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(n, d))
        step = max(1, (1 << 24) // d)
        for i in range(0, n, step):
            out[i:i + step] = x[i:i + step].astype(np.float32)
        out.flush()
        del out
        os.replace(tmp, xp32)
    return xp32


SKLEARN_CHILD = r"""
import json, sys, time, warnings
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.exceptions import ConvergenceWarning
xp, yp, solver = sys.argv[1:4]
x = np.load(xp); y = np.load(yp)
x_dtype = str(x.dtype)
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
                  "x_dtype": x_dtype, "coef_dtype": str(model.coef_.dtype),
                  "warning": any(issubclass(w.category, ConvergenceWarning) for w in caught)}))
"""


GLUM_CHILD = r"""
import json, sys, time, warnings
import numpy as np
from glum import GeneralizedLinearRegressor
xp, yp, solver = sys.argv[1:4]
x = np.load(xp); y = np.load(yp).astype(np.float64)
model = GeneralizedLinearRegressor(family="binomial", alpha=0, fit_intercept=False, solver=solver,
                                   gradient_tol=1e-10, max_iter=10000)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    c0, w0 = time.process_time(), time.perf_counter()
    model.fit(x, y)
    w1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"theta": np.asarray(model.coef_, dtype=np.float64).tolist(), "wall": w1 - w0,
                  "cpu": c1 - c0, "fit": w1 - w0, "n_iter": int(np.max(model.n_iter_)),
                  "x_dtype": str(x.dtype), "coef_dtype": str(model.coef_.dtype),
                  "warning": any("converge" in str(w.message).lower() for w in caught)}))
"""


def timed_out(limit):
    """The record of a fit stopped after `limit` seconds (no answer)."""
    return {"theta": None, "wall": float("nan"), "cpu": float("nan"), "fit": float("nan"),
            "n_iter": 0, "warning": True, "timeout": limit}


def run_sklearn(xp, yp, solver, threads, limit, child=SKLEARN_CHILD):
    env = dict(os.environ)
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    try:
        out = subprocess.run([sys.executable, "-c", child, xp, yp, solver],
                             env=env, check=True, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return timed_out(limit)
    except subprocess.CalledProcessError as e:
        # A peer that raises (e.g. scikit-learn's newton-cg on float32 data): recorded as such,
        # with its last error line, and counted like a stopped fit in the ratios.
        last = (e.stderr or "").strip().splitlines()[-1:] or ["no message"]
        print(f"scikit-learn {solver} failed: {last[0]}", file=sys.stderr)
        return dict(timed_out(limit), failed=last[0])
    return json.loads(out.stdout)


def run_privpref(binary, xp, yp, solver, threads, limit, dtype):
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
    want = {"f64": "float64", "f32": "float32"}[dtype]
    if r.get("x_dtype") != want:
        raise RuntimeError(f"privpref read {xp} as {r.get('x_dtype')}, expected {want}")
    return {"theta": r["theta"], "wall": wall, "cpu": cpu, "fit": r["elapsed_s"],
            "n_iter": r["iterations"], "passes": r["data_passes"], "warning": not r["converged"]}


def run_stream(binary, xp, threads, repeats, limit):
    """One streaming read of X in privpref's configuration (the example stream_read: the CLI's
    loader, a pool of `threads` threads): its JSON, or None when it ran past `limit`."""
    try:
        out = subprocess.run([binary, xp, str(threads), str(repeats)],
                             check=True, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout)


def grad_inf(x, y, theta):
    """max |∇| of the mean log-loss at theta, in blocks, in float64 (float32 features are
    widened block by block: the gradient of the problem on the data as stored)."""
    n = x.shape[0]
    g = np.zeros(x.shape[1])
    step = max(1, (1 << 24) // x.shape[1])
    for i in range(0, n, step):
        xb = np.asarray(x[i:i + step], dtype=np.float64)
        t = xb @ theta
        g += xb.T @ (1.0 / (1.0 + np.exp(-t)) - y[i:i + step])
    return float(np.max(np.abs(g / n)))


def versions():
    import scipy
    import sklearn
    import threadpoolctl
    try:
        import glum
        extra = f", glum {glum.__version__}"
    except ImportError:
        extra = ""
    return (f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"scikit-learn {sklearn.__version__}, threadpoolctl {threadpoolctl.__version__}{extra}")


def git_commit():
    """The checked-out commit (short), with '+ changes' when the work tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], check=True,
                               capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return f"commit {head}{' + uncommitted changes' if dirty else ''}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def fmt_passes_target(n, d):
    """The passes' worth target of shape (n, d), or None: ≤ 6 at (1e6, 100), ≤ 10 at d ≥ 1000."""
    if d >= 1000:
        return PASSES_TARGET_D1000
    if (n, d) == (1000000, 100):
        return PASSES_TARGET_N1E6_D100
    return None


def fmt_row(r):
    """One Markdown row of the main table."""
    tool = r["tool"]
    lead = f"| {r['shape']} | {r['dtype']} | {r['threads']} |"
    if r.get("failed"):
        return (f"{lead} {tool} | failed: {r['failed'].replace('|', '/')} | – | – | – | – | – | – | – | – "
                f"| – | – |")
    if r.get("timeout"):
        worth = f"> {r['timeout'] / r['stream']:.0f}" if r["stream"] else "–"
        return (f"{lead} {tool} | > {r['timeout']:.0f} (stopped) | – | – | – | – | – | {worth} | – | – "
                f"| > {r['timeout'] / r['best']:.0f} | – |")
    flag = " !" if r["warning"] else ""
    passes = r.get("passes")
    per_pass = f"{r['fit'] / passes:.2e}" if passes else "–"
    worth = f"{r['fit'] / r['stream']:.1f}" if r["stream"] else "–"
    far = " ✗" if r["dtheta"] > AGREEMENT_TOL else ""
    return (f"{lead} {tool}{flag} | {r['fit']:.3f} | {r['wall']:.3f} | "
            f"{r['cpu']:.3f} | {r['iters']} | {passes if passes is not None else '–'} | {per_pass} | "
            f"{worth} | {r['grad']:.1e} | {r['dtheta']:.1e}{far} | "
            f"{r['ratio_fit']:.2f} | {r['ratio_wall']:.2f} |")


def summary_rows(blocks):
    """Per shape, dtype and thread count: the fastest privpref fit and its passes' worth (with
    its target where the issue sets one), and the issue's ratios: fastest peer fit /
    fastest privpref fit (target >= 5), newton-cholesky and liblinear / fastest privpref
    (target >= 20). A stopped fit counts with its time limit (a lower bound on its ratio,
    marked '>')."""
    out = []
    for b in blocks:
        res = b["res"]
        best, best_name = min((r["fit"], s) for (tool, s), r in res.items()
                              if tool == "privpref" and not r.get("timeout"))

        def ratio(keys):
            vals = [(res[k].get("timeout") or res[k]["fit"], bool(res[k].get("timeout")))
                    for k in keys if k in res]
            if not vals:
                return "not run"
            v, lower = min(vals)
            return f"{'> ' if lower else ''}{v / best:.2f}"
        peers = [k for k in res if k[0] != "privpref"]
        fastest = min(peers, key=lambda k: res[k].get("timeout") or res[k]["fit"])
        ref = b.get("ref")
        agreeing = [k for k in peers if not res[k].get("timeout") and ref is not None
                    and float(np.max(np.abs(np.array(res[k]["theta"]) - ref))) <= AGREEMENT_TOL]
        if agreeing:
            close = min(agreeing, key=lambda k: res[k]["fit"])
            close_cell = f"{' '.join(close)} {ratio([close])}"
        else:
            close_cell = "none"
        stream = b["stream"]["median_s"] if b["stream"] else None
        worth = best / stream if stream else None
        target = fmt_passes_target(b["n"], b["d"])
        if target is None:
            tgt = "–"
        elif worth is None:
            tgt = f"≤ {target:g}: no read time"
        else:
            tgt = f"≤ {target:g}: {'met' if worth <= target else 'missed'}"
        out.append(f"| {b['shape']} | {b['dtype']} | {b['threads']} | {best_name} {best:.3f} | "
                   f"{f'{worth:.1f}' if worth is not None else '–'} | {tgt} | {' '.join(fastest)} | "
                   f"{ratio([fastest])} | {close_cell} | {ratio([('scikit-learn', 'newton-cholesky')])} | "
                   f"{ratio([('scikit-learn', 'liblinear')])} |")
    return out


def stream_rows(blocks):
    """The streaming-read reference of every shape, dtype and thread count."""
    out = []
    for b in blocks:
        st = b["stream"]
        lead = f"| {b['shape']} | {b['dtype']} | {b['threads']} |"
        if not st:
            out.append(f"{lead} – | – | stopped | – | – |")
            continue
        out.append(f"{lead} {st['bytes'] / 1e6:.1f} | {'yes' if st['mapped'] else 'no (copy)'} | "
                   f"{st['first_s']:.2e} | {st['median_s']:.2e} | {st['gb_per_s']:.1f} |")
    return out


def sklearn_f32_note(rows):
    """What scikit-learn's `coef_` dtype was on float32 data, per solver (from this run)."""
    seen = {}
    for r in rows:
        if r["dtype"] == "f32" and r["tool"].startswith("scikit-learn") and r.get("coef_dtype"):
            seen.setdefault(r["tool"].split(" ", 1)[1], set()).add(r["coef_dtype"])
    if not seen:
        return ""
    parts = [f"{s} {'/'.join(sorted(v))}" for s, v in seen.items()]
    return f" In this run, scikit-learn's `coef_` on float32 data was: {', '.join(parts)}."


def main():
    global PRIVPREF_SOLVERS, SKLEARN_SOLVERS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated NxD")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--dtypes", default="f64",
                    help="comma-separated feature dtypes among f64, f32 (f32: the f64 data cast to float32)")
    ap.add_argument("--out", default="bench-results/peers.md")
    ap.add_argument("--design", default="isotropic", choices=["isotropic", "powerlaw", "colscale"],
                    help="the features' law (make_data)")
    ap.add_argument("--solvers", default=",".join(PRIVPREF_SOLVERS),
                    help=f"privpref solvers, from {','.join(PRIVPREF_ARGS)}")
    ap.add_argument("--sklearn-solvers", default=",".join(SKLEARN_SOLVERS))
    ap.add_argument("--glum-solvers", default="",
                    help="glum solvers (e.g. irls-cd,lbfgs; glum is not in requirements.txt: "
                         "install it into the venv first)")
    ap.add_argument("--privpref", default="target/release/privpref")
    ap.add_argument("--stream-read", default="target/release/examples/stream_read",
                    help="the stream_read example binary (the streaming-read reference)")
    ap.add_argument("--stream-repeats", type=int, default=7,
                    help="timed streaming reads after the warm-up read; their median is reported")
    ap.add_argument("--timeout", type=float, default=900.0,
                    help="seconds after which one fit is stopped and reported as '> limit'")
    ap.add_argument("--title", default="Peer benchmark: exact logistic MLE, privpref vs scikit-learn")
    a = ap.parse_args()
    PRIVPREF_SOLVERS = [v for v in a.solvers.split(",") if v]
    SKLEARN_SOLVERS = [v for v in a.sklearn_solvers.split(",") if v]
    if any(v not in PRIVPREF_ARGS for v in PRIVPREF_SOLVERS):
        ap.error(f"--solvers: choose from {','.join(PRIVPREF_ARGS)}")
    shapes = [tuple(int(v) for v in s.lower().split("x")) for s in a.shapes.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    dtypes = [t.strip().lower() for t in a.dtypes.split(",")]
    unknown = [t for t in dtypes if t not in DTYPES]
    if unknown:
        ap.error(f"unknown dtype(s) {', '.join(unknown)}: use f64 and/or f32")
    if a.stream_repeats < 1:
        ap.error("--stream-repeats must be at least 1")
    rows = []
    blocks = []
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    for n, d in shapes:
        xp64, yp = make_data(n, d, a.design)
        y = np.load(yp).astype(np.float64)
        for dt in dtypes:
            xp = xp64 if dt == "f64" else make_f32(xp64, n, d)
            x = np.load(xp, mmap_mode="r")
            for t in threads:
                tag = f"{n}x{d} {dt} t={t}"
                stream = run_stream(a.stream_read, xp, t, a.stream_repeats, a.timeout)
                if stream is not None and stream["dtype"] != {"f64": "float64", "f32": "float32"}[dt]:
                    raise RuntimeError(f"stream_read read {xp} as {stream['dtype']}")
                print(f"{tag} streaming read: "
                      f"{stream['median_s'] if stream else float('nan'):.2e} s", file=sys.stderr)
                res = {}
                for s in PRIVPREF_SOLVERS:
                    res[("privpref", s)] = run_privpref(a.privpref, xp, yp, s, t, a.timeout, dt)
                    print(f"{tag} privpref {s}: {res[('privpref', s)]['wall']:.3f} s", file=sys.stderr)
                for s in SKLEARN_SOLVERS:
                    res[("scikit-learn", s)] = run_sklearn(xp, yp, s, t, a.timeout)
                    print(f"{tag} sklearn {s}: {res[('scikit-learn', s)]['wall']:.3f} s", file=sys.stderr)
                for s in [v for v in a.glum_solvers.split(",") if v]:
                    res[("glum", s)] = run_sklearn(xp, yp, s, t, a.timeout, child=GLUM_CHILD)
                    print(f"{tag} glum {s}: {res[('glum', s)]['wall']:.3f} s", file=sys.stderr)
                # The reference answer: privpref's Newton, else its Newton-CG, else its L-BFGS
                # (the first of them run and finished; dense Newton's n·d² Hessians are left out
                # at the widest shapes).
                ref = next(np.array(res[("privpref", s)]["theta"]) for s in ("newton", "newton-cg", "lbfgs")
                           if res.get(("privpref", s), {}).get("theta"))
                done = [s for s in PRIVPREF_SOLVERS if not res[("privpref", s)].get("timeout")]
                best = min(res[("privpref", s)]["fit"] for s in done)
                best_wall = min(res[("privpref", s)]["wall"] for s in done)
                shape = f"({n}, {d})"
                blocks.append({"shape": shape, "n": n, "d": d, "dtype": dt, "threads": t,
                               "res": res, "stream": stream, "ref": ref})
                for (tool, s), r in res.items():
                    row = {"shape": shape, "dtype": dt, "threads": t, "tool": f"{tool} {s}",
                           "timeout": r.get("timeout"), "failed": r.get("failed"), "best": best,
                           "stream": stream["median_s"] if stream else None}
                    if not r.get("timeout"):
                        th = np.array(r["theta"])
                        row.update({
                            "wall": r["wall"], "cpu": r["cpu"], "fit": r["fit"], "iters": r["n_iter"],
                            "passes": r.get("passes"), "coef_dtype": r.get("coef_dtype"),
                            "grad": grad_inf(x, y, th), "dtheta": float(np.max(np.abs(th - ref))),
                            "ratio_fit": r["fit"] / best, "ratio_wall": r["wall"] / best_wall,
                            "warning": r["warning"],
                        })
                    rows.append(row)
                write_table(a, started, rows, blocks)
    print(f"wrote {a.out}", file=sys.stderr)


def write_table(a, started, rows, blocks):
    """Writes the whole table so far (called after every shape, dtype and thread count, so a
    run that is stopped part-way keeps what it measured)."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# {a.title}", "",
        f"Machine: {cpu_model()}, {os.cpu_count()} logical CPUs. Started: {started}; last row: {now}.",
        f"Command: `benches/peers/run.sh --shapes {a.shapes} --threads {a.threads} --dtypes {a.dtypes} "
        f"--timeout {a.timeout:g} --stream-repeats {a.stream_repeats} --design {a.design} "
        f"--solvers {a.solvers} --sklearn-solvers {a.sklearn_solvers} --glum-solvers {a.glum_solvers} "
        f"--out {a.out}`.",
        f"Versions: {versions()}; privpref at `{a.privpref}` ({git_commit()}), streaming read by "
        f"`{a.stream_read}`.", "",
        ("Unpenalised logistic MLE without intercept on BTL data (x = φ¹ − φ⁰, φ ~ N(0, I), ‖θ*‖ = 1). "
         if a.design == "isotropic" else
         "Unpenalised logistic MLE without intercept on BTL data on a column-scaled design (x = Sz, "
         "z ~ N(0, 2I), S = diag(10^(4j/(d−1) − 2)): column scales spread over 1e4, XᵀX of condition "
         "number about 1e8 that a diagonal scaling removes; θ* = S⁻¹u, ‖u‖ = 1, so xᵀθ* has the "
         "isotropic law; `make_data` in `benches/peers/run.py`). "
         if a.design == "colscale" else
         "Unpenalised logistic MLE without intercept on BTL data on a rotated power-law design "
         "(x ~ N(0, 2QΛQᵀ), λ_k ∝ 1/k with trace d, condition number d, Q = HD/√d Walsh–Hadamard "
         "with random signs, so every column has variance 2 and column scaling does nothing; "
         "`make_data` in `benches/peers/run.py`, the law of `privpref::sim::power_law_pairs`; "
         "‖θ*‖ = 1). ") +
        "scikit-learn: `LogisticRegression(penalty=None, fit_intercept=False, tol=1e-10)` (liblinear: "
        "`penalty='l2', C=1e12`, its closest setting); privpref: `fit --loss mle --constraint none` "
        "(KKT tolerance 1e-10 relative; by default L-BFGS then polishes up to 10 iterations while the "
        "residual falls, `lbfgs-nopolish` = `--polish-iters 0` stops at the tolerance). `fit s`: the fit alone (scikit-learn's `fit`; privpref's "
        "reported solver time); `wall s` for privpref includes starting the CLI and reading the .npy "
        "files. Ratios are to the fastest privpref solver of the same shape, dtype and thread count, in "
        "the same run. `max |∇|`: mean log-loss gradient recomputed in numpy (float64, on the features "
        "as stored); `max |Δθ|`: against privpref's Newton answer on the same dtype's data, `✗` when "
        f"above {AGREEMENT_TOL:g}. `!`: the solver reported non-convergence. A fit still running "
        f"after {a.timeout:g} s is stopped and shown as `> limit` (its ratio is then a lower bound).", "",
        "dtype `f64`: the features as float64. `f32`: the same float64 draws cast to float32 and written "
        "as a float32 .npy file; privpref maps it and reads it as f32 (each SIMD vector widened to f64 "
        "in registers inside its passes, accumulated in f64), scikit-learn is given the float32 array. "
        "scikit-learn 1.5's `LogisticRegression.fit` validates X with `dtype=np.float64` for `lbfgs` "
        "(a float64 copy of X made inside `fit`, so inside its fit time) and with "
        "`[np.float64, np.float32]` for the other solvers, which keep the float32 X: newton-cg and "
        "newton-cholesky evaluate the loss and its derivatives on it, from a float32 start "
        "(`w0` takes X's dtype), and liblinear copies X into its own rows of doubles (as it does for "
        "float64 input)." + sklearn_f32_note(rows), "",
        "`passes' worth` = fit time / the time of one streaming read of X (the sum of all its values) "
        "in privpref's configuration: the example `crates/privpref-cli/examples/stream_read.rs` loads "
        "the .npy file with the CLI's loader (memory-mapped, f32 kept as f32) and runs the library's "
        "`kernels::stream_sum` (`stream_sum_f32`) on a pool of the same thread count; the median of "
        f"{a.stream_repeats} reads after one warm-up read (Streaming reads table). `data passes`: "
        "privpref's `data_passes` (the reads of X its solver counts, from the fit's JSON; the features' "
        "validation is taken with the first of them); `s / pass` = fit time / data passes. privpref's fit time also includes faulting the "
        "mapped file's pages in on its first pass, which the median read (after the warm-up) does not.", "",
        "## Targets", "",
        "Fastest privpref fit and its passes' worth (target ≤ 6 at (1e6, 100), ≤ 10 at d ≥ 1000); "
        "fastest peer (scikit-learn or glum) fit / fastest privpref fit (target ≥ 5) and newton-cholesky, liblinear / "
        "fastest privpref fit (target ≥ 20), fit times of the same run.", "",
        "| shape | dtype | threads | fastest privpref (s) | its passes' worth | passes' worth target | fastest peer | its ratio | fastest peer within the agreement bound, its ratio | newton-cholesky ratio | liblinear ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *summary_rows(blocks), "",
        "## Streaming reads", "",
        "One read of X in privpref's configuration: the first read (pages faulted in) and the median "
        f"of the {a.stream_repeats} reads after it; GB/s = bytes of X / median.", "",
        "| shape | dtype | threads | X (MB) | memory-mapped | first read s | median read s | GB/s |",
        "|---|---|---|---|---|---|---|---|",
        *stream_rows(blocks), "",
        "## All fits", "",
        "| shape | dtype | threads | solver | fit s | wall s | CPU s | iterations | data passes | s / pass | passes' worth | max abs grad | max abs dθ | fit / best privpref | wall / best privpref |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *[fmt_row(r) for r in rows],
    ]
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
