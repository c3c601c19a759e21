"""Where the Python call's extra time goes: the Rust peer called directly, the Rust peer with the
binding's thread hand-off (PEER_HANDOFF=1: a helper thread per call, a channel, the caller
waiting in 50 ms slices, as crates/privpref-py/src/run.rs does, without Python), the Rust peer
with X on 4 KiB pages (PEER_MADVISE_HUGEPAGE=0; the others have X on transparent huge pages, as
numpy gives them), and privpref.fit from Python, in rotating order, on the same .npy files. Reports per variant the
median call time and the median time outside the solver (call − the solver's elapsed_s).

Usage: python benches/python/handoff.py [--shapes 100000x100,1000x10 --settings lbfgs:1,lbfgs:2
    --rounds 6 --reps 15 --out target/py-bench/handoff.json]
"""

import argparse
import json
import os
import statistics as st
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from overhead import CHILD, PEER  # noqa: E402

VARIANTS = {"rust": ([PEER], {"PEER_HANDOFF": "0"}), "rust-handoff": ([PEER], {"PEER_HANDOFF": "1"}),
            "python": ([sys.executable, CHILD], {}),
            "rust-4k": ([PEER], {"PEER_HANDOFF": "0", "PEER_MADVISE_HUGEPAGE": "0"})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="100000x100,1000x10")
    ap.add_argument("--settings", default="lbfgs:1,lbfgs:2")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", default=os.path.join(common.ROOT, "target", "py-bench", "handoff.json"))
    a = ap.parse_args()
    res = {"started": common.now(), "command": "python benches/python/handoff.py " + " ".join(sys.argv[1:]),
           "blocks": []}
    names = list(VARIANTS)
    for shape in a.shapes.split(","):
        n, d = (int(v) for v in shape.split("x"))
        xp, yp = common.btl_files(n, d)
        reps = a.reps if n * d >= 10**6 else a.reps * 20
        for spec in a.settings.split(","):
            solver, threads = spec.split(":")
            runs = {v: [] for v in names}
            loads = []
            for r in range(a.rounds):
                order = names[r % len(names):] + names[:r % len(names)]
                for v in order:
                    cmd, env = VARIANTS[v]
                    out = subprocess.run(cmd + [xp, yp, solver, threads, str(reps)], check=True,
                                         capture_output=True, text=True,
                                         env=dict(os.environ, **{"NUMPY_MADVISE_HUGEPAGE": "1",
                                                                 "PEER_MADVISE_HUGEPAGE": "1", **env}))
                    runs[v].append(json.loads(out.stdout))
                loads.append(common.load1())
            block = {"shape": [n, d], "solver": solver, "threads": int(threads), "reps": reps, "loads": loads,
                     "variants": {}}
            for v in names:
                calls = [t for o in runs[v] for t in o["times"]]
                outside = [t - e for o in runs[v] for t, e in zip(o["times"], o["elapsed_s"])]
                inner = [e for o in runs[v] for e in o["elapsed_s"]]
                block["variants"][v] = {"call_median": st.median(calls), "outside_median": st.median(outside),
                                        "solver_median": st.median(inner),
                                        "process_medians": [st.median(o["times"]) for o in runs[v]],
                                        "anon_huge_kb": [o["anon_huge_kb"] for o in runs[v]]}
            res["blocks"].append(block)
            print(f"{n}x{d} {spec}: " + ", ".join(
                f"{v} call {b['call_median'] * 1e3:.3f} ms outside {b['outside_median'] * 1e6:.0f} us"
                for v, b in block["variants"].items()) + f" (load {min(loads):.2f}-{max(loads):.2f})",
                file=sys.stderr)
    res["finished"] = common.now()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
