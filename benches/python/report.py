"""Writes bench-results/python.md from target/py-bench/{overhead,vs_sklearn}.json (the outputs of
overhead.py and vs_sklearn.py). A conclusions paragraph is taken from --conclusions (a text
file) when given.

Usage: python benches/python/report.py [--conclusions FILE] [--out bench-results/python.md]
"""

import argparse
import glob
import json
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

BENCH = os.path.join(common.ROOT, "target", "py-bench")


def ms(v):
    return f"{v * 1e3:.2f}"


def huge(s, side):
    v = [p[side].get("anon_huge_kb") for p in s["pairs"]]
    return "?" if None in v else f"{st.median(v) / 1024:.0f}"


def overhead_table(o):
    lines = [
        "| solver | threads | iterations | Rust median | Python median | Python − Rust | outside the solver: Rust | outside the solver: Python | pair ratio median | min | max | huge pages MiB Rust / Python | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
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
            f"{huge(s, 'rust')} / {huge(s, 'python')} | {min(loads):.2f}–{max(loads):.2f} |")
        per_pair.append(f"| {s['solver']} | {s['threads']} | " + " ".join(
            f"{p['ratio']:.3f}{'ᴾ' if p['first'] == 'python' else ''}" for p in s["pairs"]) + " |")
    return lines, per_pair


def overhead_section(o, extra=None):
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
        "(argument checks, options, thread hand-off, result conversion). Times in ms. X lies on transparent huge "
        "pages on both sides: numpy advises them for arrays of 4 MiB or more, and the Rust peer copies X into a "
        "buffer advised the same way (`huge pages`: the process's AnonHugePages after loading, median).", "",
    ]
    table, per_pair = overhead_table(o)
    lines += table
    lines += ["", "Per-pair ratios in order (ᴾ: Python ran first in that pair):", "",
              "| solver | threads | ratios |", "|---|---|---|", *per_pair, ""]
    if extra:
        table, per_pair = overhead_table(extra)
        lines += [
            "### Earlier run: the Rust peer on 4 KiB pages", "",
            "The first run of the same command, before the Rust peer advised huge pages: numpy had put X on "
            "transparent huge pages (the machine's THP mode is `madvise`, and numpy advises them for arrays of 4 MiB "
            "or more), the Rust `Vec` was on 4 KiB pages. Kept because it shows what the page size alone is worth "
            f"on the memory-bound L-BFGS passes. Started {extra['started']}.", "",
            *table, "", "| solver | threads | ratios |", "|---|---|---|", *per_pair, ""]
    return lines


def merge_reruns(v, reruns):
    """Blocks of the re-runs replace the same (shape, threads) blocks of the main run in the summary;
    the replaced blocks stay in the list of all fits, marked."""
    blocks = []
    for b in v["blocks"]:
        b = dict(b, run="main")
        blocks.append(b)
    for r in reruns:
        for rb in r["blocks"]:
            new = dict(rb, run=f"re-run {r['started']}", command=r["command"])
            at = len(blocks)
            for i, b in enumerate(blocks):
                if b["shape"] == rb["shape"] and b["threads"] == rb["threads"] and b["run"] == "main":
                    b["run"] = "main (replaced)"
                    at = i + 1
            blocks.insert(at, new)
    return blocks


def handoff_section(h):
    lines = [
        "### Where the extra time goes", "",
        "`benches/python/handoff.py`: four variants in rotating order on the same files, each process a warm-up and "
        "then timed calls: `rust` (the peer as above), `rust-handoff` (the peer calling the way the binding's `run` "
        "does — a scoped helper thread per call runs `pool.install(fit_features)` and sends the result over a channel "
        "while the caller waits in 50 ms `recv_timeout` slices — without Python), `python` (`privpref.fit`), and "
        "`rust-4k` (the peer with X on 4 KiB pages, `PEER_MADVISE_HUGEPAGE=0`). Medians over all calls; `solver`: the "
        "solver's own `elapsed_s`; `outside`: call − solver, per call. "
        f"Started {h['started']}, finished {h.get('finished', '?')}. Command: `{h['command']}`.", "",
        "| shape | solver | threads | calls per process | variant | call | solver | outside | call / rust call | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for b in h["blocks"]:
        n, d = b["shape"]
        base = b["variants"]["rust"]["call_median"]
        small = n * d < 10**6
        unit, k = ("µs", 1e6) if small else ("ms", 1e3)
        for v, r in b["variants"].items():
            lines.append(
                f"| ({n}, {d}) | {b['solver']} | {b['threads']} | {b['reps']} | {v} | {r['call_median'] * k:.{0 if small else 2}f} {unit} | "
                f"{r['solver_median'] * k:.{0 if small else 2}f} {unit} | {r['outside_median'] * 1e6:.0f} µs | "
                f"{r['call_median'] / base:.4f} | {min(b['loads']):.2f}–{max(b['loads']):.2f} |")
    return lines + [""]


def sklearn_section(v, reruns=()):
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
        f"Not run: {', '.join(v['skipped']) or 'none'} (in `bench-results/peers.md` scikit-learn's newton-cholesky took "
        "157.7 s at (200000, 2000) with 1 thread, over the ~120 s limit; with 2 threads it took 84.9 s there, so it ran "
        "once here).", "",
        "| shape | threads | privpref auto | privpref lbfgs | privpref lbfgs-nopolish | sklearn lbfgs | sklearn newton-cholesky | fastest privpref | fastest sklearn | **sklearn-fastest / privpref-fastest** | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    full = ["", "### All fits", "",
            "| shape | threads | run | tool | solver | median s | all times (s) | iterations | converged | max abs grad | max abs dθ | θ same every round |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    blocks = merge_reruns(v, reruns)
    for r in reruns:
        lines.insert(-3, f"Re-run ({r['started']}): `{r['command']}`; its blocks replace the main run's in this "
                     "table (marked `re-run`); both are in the list of all fits. Reason: from round 1 of the main run's block "
                     "another engineer's build raised the load to 3.6–3.8 (its privpref fits went from 1.36 s to 2.46 s).")
        lines.insert(-3, "")
    for b in blocks:
        n, d = b["shape"]
        by = {(f["tool"], f["solver"]): f for f in b["fits"]}

        def cell(k):
            f = by.get(k)
            return f"{f['median']:.3f}" if f else "not run"
        main = b["run"] != "main (replaced)"
        pp = [f for f in b["fits"] if f["tool"] == "privpref"]
        sk = [f for f in b["fits"] if f["tool"] == "scikit-learn"]
        bp = min(pp, key=lambda f: f["median"])
        bs = min(sk, key=lambda f: f["median"])
        if main:
            lines.append(
            f"| ({n}, {d}){' (re-run)' if b['run'] != 'main' else ''} | {b['threads']} | {cell(('privpref', 'auto'))} | {cell(('privpref', 'lbfgs'))} | "
            f"{cell(('privpref', 'lbfgs-nopolish'))} | {cell(('scikit-learn', 'lbfgs'))} | "
            f"{cell(('scikit-learn', 'newton-cholesky'))} | {bp['solver']} {bp['median']:.3f} | "
            f"{bs['solver']} {bs['median']:.3f} | **{bs['median'] / bp['median']:.2f}** | "
            f"{b['load_start']:.2f}, {', '.join(f'{x:.2f}' for x in b['loads'])} |")
        for f in b["fits"]:
            flag = "" if f["converged"] else " (not converged)"
            used = f" ({f['solver_used']})" if f.get("solver_used") and f["solver"] == "auto" else ""
            full.append(
                f"| ({n}, {d}) | {b['threads']} | {b['run']} | {f['tool']} | {f['solver']}{used} | {f['median']:.3f} | "
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
    reruns = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(BENCH, "vs_sklearn-rerun*.json")))]
    lines = [
        "# Python package benchmark: call overhead and scikit-learn side by side", "",
        f"Machine: {m['cpu']} (lscpu: KVM guest, 1 socket × 2 cores, 1 thread per core, 32 MiB L3), "
        f"{m['logical CPUs']} logical CPUs, 24 GB RAM, transparent huge pages `madvise`; a shared VM — other "
        "engineers were compiling and testing during the run, see the load columns. "
        f"Date: {o['started'][:10]}. Versions: Python {ver['python']}, numpy {ver['numpy']}, scipy {ver['scipy']}, "
        f"scikit-learn {ver['scikit-learn']}, threadpoolctl {ver['threadpoolctl']}; privpref at commit "
        f"`{ver['privpref commit']}` (HEAD of the benchmark branch at run time: the library and Python package "
        "of 6d9c1f4 plus the benchmark files; the package built by `pip install crates/privpref-py`, maturin, "
        "release profile).", "",
        "Commands (from the repository root; `benches/python/run.sh` runs all of them):", "",
        "```sh",
        "# measured when `uptime` load was below ~1 where possible; raw results (target/py-bench/*.json) are copied",
        "# to bench-results/python-raw/, with the first overhead run (Rust peer on 4 KiB pages) as overhead-rust-4k-pages.json",
        "python3 -m venv /work/venv-bench && /work/venv-bench/bin/pip install -r benches/python/requirements.txt",
        "(cd crates/privpref-py && /work/venv-bench/bin/pip install .)",
        "cargo build --release -p privpref-cli --example py_overhead_peer",
        f"/work/venv-bench/bin/{o['command']}",
        f"/work/venv-bench/bin/{v['command']}",
        *[f"/work/venv-bench/bin/{r['command']}  # re-run" for r in reruns],
        "/work/venv-bench/bin/python benches/python/handoff.py",
        "/work/venv-bench/bin/python benches/python/report.py --conclusions benches/python/conclusions.md",
        "```", "",
    ]
    if a.conclusions and os.path.exists(a.conclusions):
        lines += ["## Conclusions", "", open(a.conclusions).read().strip(), ""]
    extra_path = os.path.join(BENCH, "overhead-rust-4k-pages.json")
    extra = json.load(open(extra_path)) if os.path.exists(extra_path) else None
    lines += overhead_section(o, extra)
    hp = os.path.join(BENCH, "handoff.json")
    if os.path.exists(hp):
        lines += handoff_section(json.load(open(hp)))
    lines += sklearn_section(v, reruns)
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
