#!/usr/bin/env python3
"""Independent high-precision reference for the RDP accountant (src/privacy/rdp/).

Writes tests/data/rdp_reference.json (committed; `cargo test` never runs Python).

Everything here is computed with mpmath from the *definitions*, not from the series the Rust code
uses:

* add/remove sampled Gaussian (Mironov, Talwar & Zhang 2019), A_a = E_{z~N(0,s^2)}[(mu(z)/mu0(z))^a]
  with mu = (1-q)N(0,s^2) + qN(1,s^2):
    - integer orders: the plain binomial sum  sum_k C(a,k)(1-q)^(a-k) q^k exp((k^2-k)/(2 s^2))
      (all O(1) terms, exact at 60 digits; the Rust code sums the positive A-1 form instead);
    - fractional orders: tanh-sinh quadrature of the defining integral (the Rust code uses the
      two-sided erfc series);
  RDP = ln(A)/(a-1).
* replace-one antipodal pair: quadrature of P^a Q^(1-a),
  P = (1-q)N(0,s^2)+qN(1,s^2), Q = (1-q)N(0,s^2)+qN(-1,s^2).
* proven replace bound: ((a-1/2)/(a-1)) RDP_sgm(2a) + RDP_sgm(2a-1).
* (eps, delta): classic  eps = T rdp + ln(1/delta)/(a-1);
                improved eps = max(0, T rdp + ln((a-1)/a) - (ln delta + ln a)/(a-1)),
  minimised over the same order grid as the Rust code (the floats k/10 etc. are identical).
* calibrations: the exact boundary sigma* = min over orders of the root of eps_a(sigma) = target
  (eps is the minimum over orders of functions decreasing in sigma), found by bisection to 1e-20.

Run: python3 tests/reference/gen_rdp.py   (needs mpmath; about 5-10 minutes)
"""
import json
import os
import sys
import time

import mpmath
from mpmath import mp, mpf

mp.dps = 40

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "rdp_reference.json")


def default_orders():
    v = [k / 10 for k in range(11, 110)]
    v += [float(k) for k in range(11, 64)]
    v += [128.0, 256.0, 512.0, 1024.0]
    return v


def integer_orders(mx):
    return [float(k) for k in range(2, mx + 1)]


_cache = {}


def sgm_log_a(q, s, a):
    """ln A_a (mpf) for the add/remove sampled Gaussian."""
    key = (q, s, a)
    if key in _cache:
        return _cache[key]
    qm, sm, am = mpf(q), mpf(s), mpf(a)
    if q == 1.0:
        r = am * (am - 1) / (2 * sm * sm)
    elif float(a).is_integer():
        n = int(a)
        tot = mpf(0)
        for k in range(n + 1):
            tot += mpmath.binomial(n, k) * (1 - qm) ** (n - k) * qm ** k * mpmath.exp(mpf(k * k - k) / (2 * sm * sm))
        r = mpmath.log(tot)
    else:
        c = 1 / (sm * mpmath.sqrt(2 * mp.pi))

        def f(z):
            return c * mpmath.exp(-z * z / (2 * sm * sm)) * ((1 - qm) + qm * mpmath.exp((2 * z - 1) / (2 * sm * sm))) ** am

        z0 = sm * sm * mpmath.log(1 / qm - 1) + mpf(1) / 2
        pts = sorted(set([mpf(0), mpf(1), am, z0]))
        pts = [-mpmath.inf, pts[0] - 12 * sm] + pts + [pts[-1] + 12 * sm, mpmath.inf]
        v, err = mpmath.quad(f, pts, error=True, maxdegree=10)
        if not (err <= mpf(10) ** -18 * abs(v - 1)):
            raise RuntimeError(f"quadrature error {err} too large for A-1 = {v-1} at {key}")
        r = mpmath.log(v)
    _cache[key] = r
    return r


def sgm_rdp(q, s, a):
    return sgm_log_a(q, s, a) / (mpf(a) - 1)


def replace_numeric_rdp(q, s, a):
    qm, sm, am = mpf(q), mpf(s), mpf(a)
    if q == 1.0:
        return 2 * am / (sm * sm)
    c = 1 / (sm * mpmath.sqrt(2 * mp.pi))

    def f(z):
        phi0 = mpmath.exp(-z * z / (2 * sm * sm))
        p = (1 - qm) * phi0 + qm * mpmath.exp(-(z - 1) ** 2 / (2 * sm * sm))
        qq = (1 - qm) * phi0 + qm * mpmath.exp(-(z + 1) ** 2 / (2 * sm * sm))
        return c * p ** am * qq ** (1 - am)

    pts = sorted(set([mpf(-1), mpf(0), mpf(1), am]))
    pts = [-mpmath.inf, pts[0] - 12 * sm] + pts + [pts[-1] + 12 * sm, mpmath.inf]
    v, err = mpmath.quad(f, pts, error=True, maxdegree=10)
    if not (err <= mpf(10) ** -18 * abs(v - 1)):
        raise RuntimeError(f"quadrature error {err} too large at {(q, s, a)}")
    return mpmath.log(v) / (am - 1)


def step_rdp(q, s, a, rel):
    if rel == "add-remove":
        return sgm_rdp(q, s, a)
    if rel == "replace":
        am = mpf(a)
        return (am - mpf(1) / 2) / (am - 1) * sgm_rdp(q, s, 2 * a) + sgm_rdp(q, s, 2 * a - 1)
    if rel == "replace-sensitivity2":
        return sgm_rdp(q, s / 2, a)
    if rel == "replace-numeric":
        return replace_numeric_rdp(q, s, a)
    raise ValueError(rel)


def eps_at(rdp, a, delta, conv):
    am = mpf(a)
    d = mpf(delta)
    if conv == "classic":
        return rdp + mpmath.log(1 / d) / (am - 1)
    e = rdp + mpmath.log((am - 1) / am) - (mpmath.log(d) + mpmath.log(am)) / (am - 1)
    return max(e, mpf(0))


def epsilon(q, s, steps, delta, orders, rel, conv):
    best = None
    for a in orders:
        e = eps_at(steps * step_rdp(q, s, a, rel), a, delta, conv)
        if best is None or e < best[0]:
            best = (e, a)
    return best


def calibrate(q, steps, target, delta, orders, conv):
    """Exact boundary sigma* (add/remove)."""
    t = mpf(target)

    def eps_sigma(s):
        return epsilon(q, s, steps, delta, orders, "add-remove", conv)[0]

    lo, hi = mpf("0.05"), mpf(64)
    assert eps_sigma(hi) <= t and eps_sigma(lo) > t
    # Coarse bisection over all orders, then each candidate order alone to 1e-22.
    for _ in range(22):
        mid = (lo + hi) / 2
        if eps_sigma(mid) <= t:
            hi = mid
        else:
            lo = mid
    sc = float(hi)
    cands = []
    for a in orders:
        cands.append((eps_at(steps * sgm_rdp(q, sc, a), a, delta, conv), a))
    cands.sort()
    best = None
    for _, a in cands[:4]:
        # Solve eps_a(sigma) = t by bisection in mpf (sigma enters through mpf directly).
        l, h = lo * mpf("0.9"), hi * mpf("1.1")

        def ea(s):
            return eps_at(steps * rdp_mp(q, s, a), a, delta, conv)

        if ea(h) > t:
            continue
        if ea(l) <= t:
            raise RuntimeError("bracket")
        while h / l - 1 > mpf(10) ** -22:
            m = (l + h) / 2
            if ea(m) <= t:
                h = m
            else:
                l = m
        if best is None or h < best[0]:
            best = (h, a)
    return best


def rdp_mp(q, s, a):
    """sgm RDP with an mpf sigma (no caching; integer orders or q = 1 only)."""
    qm, am = mpf(q), mpf(a)
    if q == 1.0:
        return am / (2 * s * s)
    assert float(a).is_integer(), "calibration references use integer orders only"
    n = int(a)
    tot = mpf(0)
    for k in range(n + 1):
        tot += mpmath.binomial(n, k) * (1 - qm) ** (n - k) * qm ** k * mpmath.exp(mpf(k * k - k) / (2 * s * s))
    return mpmath.log(tot) / (am - 1)


def num(x):
    return {"value": float(x), "digits": mpmath.nstr(x, 25)}


def main():
    t0 = time.time()
    out = {
        "generator": "tests/reference/gen_rdp.py (mpmath %s, %d digits)" % (mpmath.__version__, mp.dps),
        "orders": {"default": default_orders(), "int256": integer_orders(256)},
    }

    # 1. Per-order RDP, add/remove, on a (q, sigma, order) grid.
    qs = [1e-5, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 0.999, 1.0]
    sigmas = [0.5, 0.8, 1.0, 1.5, 2.0, 5.0, 10.0, 30.0]
    sel = [1.1, 1.5, 2.0, 2.5, 3.0, 3.7, 5.0, 7.3, 10.9, 16.0, 32.0, 63.0, 128.0, 256.0, 1024.0]
    per = []
    for q in qs:
        for s in sigmas:
            for a in sel:
                per.append({"q": q, "sigma": s, "order": a, "rdp": num(sgm_rdp(q, s, a))})
    # Small noise multipliers (A far beyond the double range for large orders).
    for q in [0.001, 0.1, 0.5]:
        for s in [0.1, 0.25]:
            for a in [1.5, 2.0, 3.7, 10.4, 32.0, 256.0]:
                per.append({"q": q, "sigma": s, "order": a, "rdp": num(sgm_rdp(q, s, a))})
    out["sgm_per_order"] = per
    print(f"per-order: {len(per)} values, {time.time()-t0:.0f} s", file=sys.stderr)

    # 2. Replace-one antipodal pair by quadrature (the points of the table in the tests included).
    rn = []
    for (q, s) in [(0.01, 1.0), (0.1, 1.0), (0.1, 2.0), (0.5, 1.0), (0.05, 3.0), (0.001, 0.7), (0.3, 5.0), (1.0, 2.0)]:
        for a in [1.5, 2.0, 3.5, 4.0, 8.0, 16.0, 32.0]:
            rn.append({"q": q, "sigma": s, "order": a, "rdp": num(replace_numeric_rdp(q, s, a))})
    out["replace_numeric_per_order"] = rn
    print(f"replace-numeric: {len(rn)} values, {time.time()-t0:.0f} s", file=sys.stderr)

    # 3. (eps, delta) on a grid, full default order grid and the integer grid 2..256.
    eps_cases = []
    pairs = [(0.01, 1.0), (0.1, 2.0), (0.001, 0.8), (0.05, 1.2), (0.3, 3.0), (1.0, 5.0), (0.02, 0.7), (0.2, 10.0)]
    steps_list = [1, 10, 100, 1000, 10000]
    deltas = [1e-3, 1e-5, 1e-8]
    for (q, s) in pairs:
        for grid in ["default", "int256"]:
            orders = out["orders"][grid]
            for T in steps_list:
                for d in deltas:
                    for conv in ["improved", "classic"]:
                        e, a = epsilon(q, s, T, d, orders, "add-remove", conv)
                        eps_cases.append({"q": q, "sigma": s, "steps": T, "delta": d, "grid": grid,
                                          "neighbours": "add-remove", "conversion": conv,
                                          "epsilon": num(e), "order": a})
        print(f"eps pair {(q, s)}: {time.time()-t0:.0f} s", file=sys.stderr)
    # Replace relations on two pairs (default grid).
    for (q, s) in [(0.01, 1.0), (0.1, 2.0)]:
        for rel in ["replace", "replace-sensitivity2"]:
            for T in [10, 1000]:
                for d in [1e-5]:
                    e, a = epsilon(q, s, T, d, out["orders"]["default"], rel, "improved")
                    eps_cases.append({"q": q, "sigma": s, "steps": T, "delta": d, "grid": "default",
                                      "neighbours": rel, "conversion": "improved",
                                      "epsilon": num(e), "order": a})
        print(f"replace eps {(q, s)}: {time.time()-t0:.0f} s", file=sys.stderr)
    out["epsilon"] = eps_cases

    # 4. The two reference points of the issue (add/remove, delta = 1e-5), both grids/conversions.
    refs = []
    for (q, s, T) in [(0.01, 1.0, 1000), (0.1, 2.0, 100)]:
        for grid in ["default", "int256"]:
            for conv in ["improved", "classic"]:
                e, a = epsilon(q, s, T, 1e-5, out["orders"][grid], "add-remove", conv)
                refs.append({"q": q, "sigma": s, "steps": T, "delta": 1e-5, "grid": grid, "conversion": conv,
                             "epsilon": num(e), "order": a})
    out["reference_points"] = refs

    # 5. Calibrations (integer grid 2..256, improved): the reference cases of tests/library/rdp.rs.
    cal = []
    for (q, T, e, d) in [(0.02, 500, 3.0, 1e-5), (0.01, 1000, 1.0, 1e-5), (1.0, 1, 1.0, 1e-5),
                         (1.0, 100, 8.0, 1e-5), (0.02, 500, 1.5, 5e-6), (0.1, 100, 2.0, 1e-5)]:
        sstar, a = calibrate(q, T, e, d, out["orders"]["int256"], "improved")
        cal.append({"q": q, "steps": T, "epsilon": e, "delta": d, "grid": "int256", "conversion": "improved",
                    "sigma_star": num(sstar), "order": a})
        print(f"calibration {(q, T, e, d)} -> {mpmath.nstr(sstar, 12)} (order {a}), {time.time()-t0:.0f} s",
              file=sys.stderr)
    out["calibration"] = cal

    with open(OUT, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"wrote {OUT} in {time.time()-t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
