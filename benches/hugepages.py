"""Paired before/after CLI fits: two builds of `privpref` (OLD and NEW) fit the same .npy files
alternately, PAIRS times per (file, solver, threads); per pair the ratio new/old of the solver
time the CLI reports (`elapsed_s`), summarised by its median and range. While each fit runs,
/proc/PID/smaps_rollup is polled (every 20 ms) for the largest AnonHugePages (anonymous memory
on transparent huge pages) and FilePmdMapped (file pages mapped as 2 MiB) seen.

Data (written once to DATA, default target/hugepages-data): the peer benchmark's BTL design
(benches/peers/run.py: θ* uniform on the sphere of radius 1, x = φ1 − φ0 with φ ~ N(0, I),
y ~ Bernoulli(σ(xᵀθ*))), n × d = 1e6 × 100 float64, saved three ways: C order (`x_c.npy`, which
the CLI memory-maps), Fortran order (`x_f.npy`) and big-endian (`x_be.npy`), which the CLI
reads into memory (transposed / byte-swapped).

Usage (from the repository root; numpy needed):
  OLD=/tmp/privpref_before NEW=target/release/privpref python3 benches/hugepages.py \
      [--pairs 9] [--configs x_f:lbfgs:2,x_f:lbfgs:1,x_be:lbfgs:2,x_c:lbfgs:2]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# The peer benchmark's data, bit for bit (benches/python/common.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from common import btl  # noqa: E402


def make_data(data, n, d, seed=2026):
    os.makedirs(data, exist_ok=True)
    paths = {k: os.path.join(data, f"{k}.npy") for k in ("x_c", "x_f", "x_be", "y")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    x, y = btl(n, d, seed)
    np.save(paths["x_c"], x)
    np.save(paths["x_f"], np.asfortranarray(x))
    np.save(paths["x_be"], x.astype(">f8"))
    np.save(paths["y"], y)
    return paths


def rollup(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("AnonHugePages", "FilePmdMapped"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def fit(binary, x, y, solver, threads, out):
    p = subprocess.Popen([binary, "fit", "--x", x, "--y", y, "--loss", "mle", "--constraint", "none",
                          "--solver", solver, "--threads", str(threads), "--out", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    top = {"AnonHugePages": 0, "FilePmdMapped": 0}
    while p.poll() is None:
        for k, v in rollup(p.pid).items():
            top[k] = max(top[k], v)
        time.sleep(0.02)
    if p.returncode != 0:
        sys.exit(f"{binary} failed: {p.stderr.read().decode()}")
    with open(out) as f:
        r = json.load(f)
    return r["elapsed_s"], r["iterations"], top


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--configs", default="x_f:lbfgs:2,x_f:lbfgs:1,x_be:lbfgs:2,x_c:lbfgs:2")
    ap.add_argument("--data", default="target/hugepages-data")
    args = ap.parse_args()
    old, new = os.environ["OLD"], os.environ["NEW"]
    paths = make_data(args.data, 1_000_000, 100)
    out = os.path.join(args.data, "fit.json")
    load = lambda: open("/proc/loadavg").read().split()[:3]
    print(f"# start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load {load()}", flush=True)
    rows = []
    for c in args.configs.split(","):
        xk, solver, threads = c.split(":")
        ratios, told, tnew, hp = [], [], [], {}
        for i in range(args.pairs + 1):
            # Alternate which binary goes first; pair 0 warms the page cache and is dropped.
            order = [("old", old), ("new", new)] if i % 2 == 0 else [("new", new), ("old", old)]
            res = {}
            for name, b in order:
                res[name] = fit(b, paths[xk], paths["y"], solver, threads, out)
            if i == 0:
                continue
            (to, it_o, hp_o), (tn, it_n, hp_n) = res["old"], res["new"]
            assert it_o == it_n, (it_o, it_n)
            ratios.append(tn / to)
            told.append(to)
            tnew.append(tn)
            hp = {"old": hp_o, "new": hp_n}
            print(f"{c} pair {i}: old {to:.4f} s, new {tn:.4f} s, new/old {tn / to:.3f}, "
                  f"AnonHugePages MiB old/new {hp_o['AnonHugePages'] >> 10}/{hp_n['AnonHugePages'] >> 10}, "
                  f"FilePmdMapped MiB old/new {hp_o['FilePmdMapped'] >> 10}/{hp_n['FilePmdMapped'] >> 10}",
                  flush=True)
        rows.append((xk, solver, threads, statistics.median(ratios), min(ratios), max(ratios),
                     statistics.median(told), statistics.median(tnew), hp, it_o))
    print(f"# end {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load {load()}")
    print()
    print("| X file | solver | threads | iterations | median new/old | min | max | median old s | median new s "
          "| AnonHugePages MiB old / new | FilePmdMapped MiB old / new |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for xk, solver, threads, med, lo, hi, mo, mn, hp, it in rows:
        print(f"| {xk} | {solver} | {threads} | {it} | {med:.3f} | {lo:.3f} | {hi:.3f} | {mo:.3f} | {mn:.3f} "
              f"| {hp['old']['AnonHugePages'] >> 10} / {hp['new']['AnonHugePages'] >> 10} "
              f"| {hp['old']['FilePmdMapped'] >> 10} / {hp['new']['FilePmdMapped'] >> 10} |")


if __name__ == "__main__":
    main()
