#!/usr/bin/env python3
"""Reference epsilons for the PLD accountant (src/privacy/pld/) from Google's `dp_accounting`.

Writes tests/data/pld_reference.json (committed; `cargo test` never runs Python).

For every point (q, sigma, T, delta) and relation:

    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.privacy_accountant import NeighboringRelation
    acc = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=REL, value_discretization_interval=1e-4)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), T)
    eps = acc.get_epsilon(delta)

with REL = ADD_OR_REMOVE_ONE (our `add-remove`) and REPLACE_ONE (our antipodal replace pair:
dp_accounting's REPLACE adjacency with sampling compares q N(x+1) + (1-q) N(x) with
q N(x-1) + (1-q) N(x), the same pair mirrored). dp_accounting's defaults: connect-the-dots,
pessimistic estimate, log mass truncation bound -50, tail mass truncation 1e-15.

Run: python3 tests/reference/gen_pld.py   (needs `pip install dp-accounting==0.6.0`; about 3 minutes)
"""
import json
import os
import sys
import time
from importlib.metadata import version

from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation
from dp_accounting.pld import pld_privacy_accountant

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "pld_reference.json")

# (q, sigma, T, delta): the task's headline point, the user-wise DP-SGD settings of
# bench-results/user_level.md, and others.
POINTS = [
    (0.001, 0.8, 10000, 1e-5),
    (0.05, 3.1739, 400, 1e-5),
    (0.05, 1.5570, 400, 1e-5),
    (0.01, 1.1, 1000, 1e-5),
    (0.1, 2.0, 100, 1e-5),
    (0.02, 1.0, 2000, 1e-6),
    (1.0, 5.0, 20, 1e-5),
]
RELATIONS = {
    "add-remove": NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace": NeighboringRelation.REPLACE_ONE,
}
GRID = 1e-4


def eps_of(q, sigma, steps, delta, rel):
    acc = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=rel, value_discretization_interval=GRID)
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)
    return acc.get_epsilon(delta)


def main():
    rows = []
    for (q, sigma, steps, delta) in POINTS:
        for name, rel in RELATIONS.items():
            t0 = time.time()
            eps = eps_of(q, sigma, steps, delta, rel)
            rows.append({"q": q, "sigma": sigma, "steps": steps, "delta": delta,
                         "neighbours": name, "epsilon": eps,
                         "seconds": round(time.time() - t0, 2)})
            print(rows[-1], file=sys.stderr)
    out = {
        "generator": {
            "script": "tests/reference/gen_pld.py",
            "dp_accounting": version("dp-accounting"),
            "python": sys.version.split()[0],
            "call": "PLDAccountant(neighboring_relation=REL, value_discretization_interval=1e-4)"
                    ".compose(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T).get_epsilon(delta)",
            "relations": {"add-remove": "ADD_OR_REMOVE_ONE", "replace": "REPLACE_ONE"},
        },
        "points": rows,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
