"""Writes bench-results/python.md from target/py-bench/{overhead,vs_sklearn}.json (the outputs of
overhead.py and vs_sklearn.py). A conclusions paragraph is taken from --conclusions (a text
file) when given.

Usage: python benches/python/report.py [--conclusions FILE] [--out bench-results/python.md]
"""

import argparse
import json
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

BENCH = os.path.join(common.ROOT, "target", "py-bench")


def ms(v):
    return f"{v * 1e3:.2f}"


def overhead_section(o):
    lines = [
        "## 1. Overhead of the Python call over the Rust call", "",
        f"Data: {o['n']} × {o['d']} float64 BTL features and uint8 labels (the peers harness's generator, "
        "`benches/python/common.py`), saved once as .npy. Loss `mle`, constraint `none`, tol 1e-10, "
        "max_iter 100, the solver's default settings. Rust: `crates/privpref-cli/examples/py_overhead_peer.rs` "
        "reads the files once and times `privpref::estimator::fit_features(Features::F64(&x), n, d, &y, None, &opts)` "
        "inside `pool.install` on a rayon pool of `threads` workers; Python: `benches/python/overhead_child.py` "
        "loads the files with numpy and times `privpref.fit(X, y, solver=S, threads=T)` (time.perf_counter "
        f"around the call). Each process: one warm-up call, then {o['reps']} timed calls. "
        f"{o['pairs']} pairs of processes per setting, the order inside a pair alternating (Rust first in "
        "pairs 0, 2, …; Python first in 1, 3, …). Before timing, one Rust and one Python process each ran one fit "
        "and their θ were compared bit for bit (and every timed process's last θ again): identical in every "
        "setting.", "",
        f"Started {o['started']}, finished {o.get('finished', '?')}. Command: `{o['command']}`.", "",
        "`ratio` = median(Python call times) / median(Rust call times) of the same pair; `outside the solver` = "
        "median of (call time − the solver's own `elapsed_s`) on each side: the fixed cost of each call "
        "(argument checks, options, thread hand-off, result conversion). Times in ms.", "",
        "| solver | threads | iterations | Rust median | Python median | Python − Rust | outside the solver: Rust | outside the solver: Python | pair ratio median | min | max | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    per_pair = []
    for s in o["settings"]:
        rt = [t for p in s["pairs"] for t in p["rust"]["times"]]
        pt = [t for p in s["pairs"] for t in p["python"]["times"]]
        r_out = [t - e for p in s["pairs"] for t, e in zip(p["rust"]["times"], p["rust"]["elapsed_s"])]
        p_out = [t - e for p in s["pairs"] for t, e in zip(p["python"]["times"], p["python"]["elapsed_s"])]
        ratios = [p["ratio"] for p in s["pairs"]]
        loads = [p[k]["load"] for p in s["pairs"] for k in ("rust", "python")]
        lines.append(
            f"| {s['solver']} | {s['threads']} | {s['iterations']} | {ms(st.median(rt))} | {ms(st.median(pt))} | "
            f"{ms(st.median(pt) - st.median(rt))} | {ms(st.median(r_out))} | {ms(st.median(p_out))} | "
            f"**{st.median(ratios):.4f}** | {min(ratios):.4f} | {max(ratios):.4f} | "
            f"{min(loads):.2f}–{max(loads):.2f} |")
        per_pair.append(f"| {s['solver']} | {s['threads']} | " + " ".join(
            f"{p['ratio']:.3f}{'ᴾ' if p['first'] == 'python' else ''}" for p in s["pairs"]) + " |")
    lines += ["", "Per-pair ratios in order (ᴾ: Python ran first in that pair):", "",
              "| solver | threads | ratios |", "|---|---|---|", *per_pair, ""]
    return lines


def sklearn_section(v):
    lines = [
        "## 2. privpref.fit vs scikit-learn from the same Python process", "",
        "Same arrays, same process (`benches/python/vs_sklearn.py`). Per shape the data are generated once "
        "(the peers harness's generator) and freed after. Per thread count t: `threadpoolctl.threadpool_limits(t)` "
        "around everything (BLAS and OpenMP: scikit-learn's loss and gradient threads) and `threads=t` for privpref. "
        "scikit-learn: `LogisticRegression(penalty=None, fit_intercept=False, tol=1e-10, max_iter=100000, solver=…)`; "
        "privpref: `privpref.fit(X, y, solver=S)` for auto, lbfgs and lbfgs with `polish_iters=0` (`lbfgs-nopolish`). "
        "Rounds run every candidate once, privpref and scikit-learn alternating, order reversed every other round; "
        "a candidate slower than 10 s in its first round runs once. Times: time.perf_counter around `fit`, "
        "median over rounds, seconds. `max |Δθ|` against privpref's Newton answer (Newton-CG for d ≥ 1000), "
        "`max |∇|` the mean log-loss gradient recomputed in numpy.", "",
        f"Started {v['started']}, finished {v.get('finished', '?')}. Command: `{v['command']}`. "
        f"Not run: {', '.join(v['skipped']) or 'none'}.", "",
        "| shape | threads | privpref auto | privpref lbfgs | privpref lbfgs-nopolish | sklearn lbfgs | sklearn newton-cholesky | fastest privpref | fastest sklearn | **sklearn-fastest / privpref-fastest** | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    full = ["", "### All fits", "",
            "| shape | threads | tool | solver | median s | all times (s) | iterations | converged | max abs grad | max abs dθ | θ same every round |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in v["blocks"]:
        n, d = b["shape"]
        by = {(f["tool"], f["solver"]): f for f in b["fits"]}

        def cell(k):
            f = by.get(k)
            return f"{f['median']:.3f}" if f else "not run"
        pp = [f for f in b["fits"] if f["tool"] == "privpref"]
        sk = [f for f in b["fits"] if f["tool"] == "scikit-learn"]
        bp = min(pp, key=lambda f: f["median"])
        bs = min(sk, key=lambda f: f["median"])
        lines.append(
            f"| ({n}, {d}) | {b['threads']} | {cell(('privpref', 'auto'))} | {cell(('privpref', 'lbfgs'))} | "
            f"{cell(('privpref', 'lbfgs-nopolish'))} | {cell(('scikit-learn', 'lbfgs'))} | "
            f"{cell(('scikit-learn', 'newton-cholesky'))} | {bp['solver']} {bp['median']:.3f} | "
            f"{bs['solver']} {bs['median']:.3f} | **{bs['median'] / bp['median']:.2f}** | "
            f"{b['load_start']:.2f}, {', '.join(f'{x:.2f}' for x in b['loads'])} |")
        for f in b["fits"]:
            flag = "" if f["converged"] else " (not converged)"
            used = f" ({f['solver_used']})" if f.get("solver_used") and f["solver"] == "auto" else ""
            full.append(
                f"| ({n}, {d}) | {b['threads']} | {f['tool']} | {f['solver']}{used} | {f['median']:.3f} | "
                f"{', '.join(f'{t:.3f}' for t in f['times'])} | {f['iterations']} | {f['converged']}{flag} | "
                f"{f['grad']:.1e} | {f['dtheta']:.1e} | {f['same_theta_every_round']} |")
    seen = {}
    for b in v["blocks"]:
        seen.setdefault(tuple(b["shape"]), f"({b['shape'][0]}, {b['shape'][1]}) {b['reference']} {b['reference_s']:.2f} s")
    refs = "; ".join(seen.values())
    return lines + ["", f"Reference fits (threads = 2, not part of the comparison): {refs}."] + full + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conclusions")
    ap.add_argument("--out", default=os.path.join(common.ROOT, "bench-results", "python.md"))
    a = ap.parse_args()
    o = json.load(open(os.path.join(BENCH, "overhead.json")))
    v = json.load(open(os.path.join(BENCH, "vs_sklearn.json")))
    m, ver = o["machine"], o["versions"]
    lines = [
        "# Python package benchmark: call overhead and scikit-learn side by side", "",
        f"Machine: {m['cpu']}, {m['logical CPUs']} logical CPUs (a shared VM; other engineers were compiling "
        "during the run, see the load columns). "
        f"Date: {o['started'][:10]}. Versions: Python {ver['python']}, numpy {ver['numpy']}, scipy {ver['scipy']}, "
        f"scikit-learn {ver['scikit-learn']}, threadpoolctl {ver['threadpoolctl']}; privpref at commit "
        f"`{ver['privpref commit']}` (the Python package built by `pip install crates/privpref-py`, maturin, "
        "release profile).", "",
        "Commands (from the repository root; `benches/python/run.sh` runs all of them):", "",
        "```sh",
        "python3 -m venv /work/venv-bench && /work/venv-bench/bin/pip install -r benches/python/requirements.txt",
        "(cd crates/privpref-py && /work/venv-bench/bin/pip install .)",
        "cargo build --release -p privpref-cli --example py_overhead_peer",
        f"/work/venv-bench/bin/{o['command']}",
        f"/work/venv-bench/bin/{v['command']}",
        "/work/venv-bench/bin/python benches/python/report.py --conclusions benches/python/conclusions.md",
        "```", "",
    ]
    if a.conclusions and os.path.exists(a.conclusions):
        lines += ["## Conclusions", "", open(a.conclusions).read().strip(), ""]
    lines += overhead_section(o) + sklearn_section(v)
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
