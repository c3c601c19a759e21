#!/usr/bin/env python3
"""Generate tests/data/loss_reference.csv: high-precision reference values of the four
pointwise losses of `privpref::loss` and of their first two derivatives in t.

Requires only mpmath (tested with 1.3.0). Run from the repository root:

    python3 tests/reference/gen_loss_reference.py

The CSV is committed; `tests/library/losses.rs` reads it (CI does not need Python).

Definitions (Chowdhury, Zhou & Natarajan (2024), eqs. 3-5 and 8, Sec. 4.4; see docs/papers.md),
implemented literally,
NOT via the forms the Rust code uses:

    σ(t) = 1/(1+e^{−t}),  σ_ε = σ(ε), σ̄_ε = σ(−ε)
    mle          ℓ(t;y)  = −y log σ(t) − (1−y) log(1−σ(t))
    mle-rr       ℓ(t;y)  = −log p̃_y(t),  p̃₁ = σ_ε σ(t) + σ̄_ε σ(−t),  p̃₀ = 1 − p̃₁
    debiased-rr  ℓ̂(t;1) = −(σ_ε log σ(t) − σ̄_ε log(1−σ(t)))
                 ℓ̂(t;0) = −(σ_ε log(1−σ(t)) − σ̄_ε log σ(t))
    probit       ℓ(t;y)  = −y log Φ(t) − (1−y) log Φ(−t),  Φ(x) = erfc(−x/√2)/2

Precision. `mp.dps = 50` is the target accuracy of every output. Literal forms such as
1 − σ(t) or log(1 + e^{−t}) cancel catastrophically for large |t|, so each point is evaluated
with a working precision raised by the number of digits the literal form loses
(|t|·log10(e) for the logistic forms), plus 30 guard digits. For probit, log Φ(x) with x > 0 is
evaluated as log1p(−Φ(−x)) (the exact symmetry Φ(x) = 1 − Φ(−x)); otherwise 1 − Φ(−x) would
need x²/(2 ln 10) extra digits (≈ 217 000 at x = 1000).

Derivatives: ANALYTIC formulas obtained by differentiating the definitions above by hand
(chain rule on σ, p̃ and Φ, using σ' = σ(1−σ) and φ' = −xφ), evaluated in mpmath at the same
raised precision. They are cross-checked against `mpmath.diff` (numerical differentiation at
elevated precision) of the literal value function at every grid point with |t| ≤ 40; the script
aborts if any cross-check differs by more than 1e-30 relative to the scale of the terms.

Exact zeros: at the inflection points of mle-rr (ℓ''(t;1) = 0 at t = −ε/2, ℓ''(t;0) = 0 at
t = ε/2), which the grid hits exactly for ε = 2 (t = ∓1) and ε = 5 (t = ∓2.5), the computed
value is rounding noise far below the size of the terms. Any second derivative smaller than
1e-40 times the magnitude of its terms is written as exactly 0 (this is also checked against
the closed form σ'(t) − σ'(t ± ε), which is exactly zero there).

Grid: t ∈ {0, ±1e-12, ±1e-8, ±1e-3, ±0.3, ±0.5, ±1, ±2.5, ±5, ±10, ±20, ±37, ±40, ±100,
±500, ±700, ±720, ±1000}, y ∈ {0, 1}, ε ∈ {1e-3, 0.1, 0.5, ln 3, 2, 5, 30} for the RR losses.
t and ε are Python floats, written with repr() (which Rust parses back to the same f64), and
evaluated at exactly that binary value, mpf(float).

Supplementary dense grid (appended after the main grid): t = −40 + 0.37k + 0.011
(k = 0..216, |t| ≤ 40), y ∈ {0, 1}, for probit (the tails, where erfc / exp(−t²/2) accuracy
matters) and for mle-rr at ε = 30 (where l'' is a small difference of O(1) quantities in a
naive evaluation).

Output values are written with 20 significant digits; values below the double range (e.g.
1e-217000) are written as they are and parse to 0.0 in Rust.
"""

import math
import os
import sys

import mpmath
from mpmath import mp, mpf

mp.dps = 50
TARGET_DPS = 50
GUARD = 30
OUT_DIGITS = 20

T_POS = [1e-12, 1e-8, 1e-3, 0.3, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 37.0, 40.0, 100.0, 500.0,
         700.0, 720.0, 1000.0]
T_GRID = [0.0] + [s * v for v in T_POS for s in (-1.0, 1.0)]
EPS_GRID = [1e-3, 0.1, 0.5, math.log(3.0), 2.0, 5.0, 30.0]
T_DENSE = [-40.0 + 0.37 * k + 0.011 for k in range(217)]


def work_dps(t, eps=0.0):
    """Digits needed so that the literal forms keep TARGET_DPS correct digits."""
    return TARGET_DPS + GUARD + int(math.ceil((abs(t) + abs(eps)) * math.log10(math.e)))


def sig(x):
    return 1 / (1 + mp.exp(-x))


def dsig(x):
    s = sig(x)
    return s * (1 - s)


def d2sig(x):
    s = sig(x)
    return s * (1 - s) * (1 - 2 * s)


# ---------------------------------------------------------------- mle
def mle_value(t, y):
    return -y * mp.log(sig(t)) - (1 - y) * mp.log(1 - sig(t))


def mle_all(t, y):
    s = sig(t)
    v = mle_value(t, y)
    # d/dt log σ = 1 − σ ; d/dt log(1−σ) = −σ
    d1 = -y * (1 - s) + (1 - y) * s
    d2 = s * (1 - s)
    return v, d1, d2, abs(d2)


# ---------------------------------------------------------------- mle-rr
def rr_p1(t, eps):
    return sig(eps) * sig(t) + sig(-eps) * sig(-t)


def mlerr_value(t, y, eps):
    p1 = rr_p1(t, eps)
    p = p1 if y == 1 else 1 - p1
    return -mp.log(p)


def mlerr_all(t, y, eps):
    ke, fl = sig(eps), sig(-eps)
    p1 = rr_p1(t, eps)
    # d/dt σ(−t) = −σ'(−t); d²/dt² σ(−t) = σ''(−t)
    dp1 = ke * dsig(t) - fl * dsig(-t)
    d2p1 = ke * d2sig(t) + fl * d2sig(-t)
    if y == 1:
        p, dp, d2p = p1, dp1, d2p1
    else:
        p, dp, d2p = 1 - p1, -dp1, -d2p1
    v = -mp.log(p)
    d1 = -dp / p
    a, b = -d2p / p, (dp / p) ** 2
    d2 = a + b
    scale = abs(a) + abs(b)
    return v, d1, d2, scale


# ---------------------------------------------------------------- debiased-rr
def deb_value(t, y, eps):
    ke, fl = sig(eps), sig(-eps)
    ls, l1ms = mp.log(sig(t)), mp.log(1 - sig(t))
    if y == 1:
        return -(ke * ls - fl * l1ms)
    return -(ke * l1ms - fl * ls)


def deb_all(t, y, eps):
    ke, fl = sig(eps), sig(-eps)
    s = sig(t)
    v = deb_value(t, y, eps)
    if y == 1:
        d1 = -(ke * (1 - s) + fl * s)
        d2 = ke * s * (1 - s) - fl * s * (1 - s)
    else:
        d1 = ke * s + fl * (1 - s)
        d2 = ke * s * (1 - s) - fl * s * (1 - s)
    return v, d1, d2, (ke + fl) * s * (1 - s)


# ---------------------------------------------------------------- probit
def Phi(x):
    return mp.erfc(-x / mp.sqrt(2)) / 2


def log_Phi(x):
    if x > 0:
        return mp.log1p(-Phi(-x))  # Φ(x) = 1 − Φ(−x), exact
    return mp.log(Phi(x))


def npdf(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def probit_value(t, y):
    return -y * log_Phi(t) - (1 - y) * log_Phi(-t)


def probit_all(t, y):
    v = probit_value(t, y)
    ph = npdf(t)
    if y == 1:
        h = ph / mp.exp(log_Phi(t))  # φ(t)/Φ(t)
        d1 = -h
        d2 = h * (t + h)  # −d/dt[φ/Φ] = (φ/Φ)(t + φ/Φ)
        scale = h * (abs(t) + h)
    else:
        h = ph / mp.exp(log_Phi(-t))  # φ(t)/Φ(−t)
        d1 = h
        d2 = h * (h - t)  # d/dt[φ(t)/Φ(−t)] = (φ/Φ(−t))(φ/Φ(−t) − t)
        scale = h * (abs(t) + h)
    return v, d1, d2, scale


def fmt(x):
    x = mpf(x)
    if x == 0:
        return "0"
    return mpmath.nstr(x, OUT_DIGITS, strip_zeros=False, min_fixed=0, max_fixed=0)


def crosscheck(fvalue, t, d1, d2, scale2):
    """Compare the analytic derivatives with mpmath.diff of the literal value function."""
    n1 = mp.diff(fvalue, t, 1)
    n2 = mp.diff(fvalue, t, 2)
    e1 = abs(n1 - d1) / max(abs(d1), mpf(10) ** -300)
    e2 = abs(n2 - d2) / max(abs(d2), scale2, mpf(10) ** -300)
    return max(e1, e2)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_path = os.path.join(root, "data", "loss_reference.csv")
    rows = []
    worst_check = mpf(0)
    zeros = 0
    cases = [("mle", None, T_GRID), ("probit", None, T_GRID)]
    cases += [("mle-rr", e, T_GRID) for e in EPS_GRID] + [("debiased-rr", e, T_GRID) for e in EPS_GRID]
    cases += [("probit", None, T_DENSE), ("mle-rr", 30.0, T_DENSE)]
    for name, eps, ts in cases:
        for t in ts:
            for y in (0, 1):
                with mp.workdps(work_dps(t, eps or 0.0)):
                    tm = mpf(t)
                    em = mpf(eps) if eps is not None else None
                    if name == "mle":
                        v, d1, d2, sc = mle_all(tm, y)
                        fv = lambda u: mle_value(u, y)
                    elif name == "probit":
                        v, d1, d2, sc = probit_all(tm, y)
                        fv = lambda u: probit_value(u, y)
                    elif name == "mle-rr":
                        v, d1, d2, sc = mlerr_all(tm, y, em)
                        fv = lambda u: mlerr_value(u, y, em)
                        # closed-form check of d2 (σ'(t) − σ'(t ± ε)), only as a cross-check
                        alt = dsig(tm) - dsig(tm + em if y == 1 else tm - em)
                        assert abs(alt - d2) <= mpf(10) ** -45 * max(sc, abs(d2)), (name, eps, t, y)
                    else:
                        v, d1, d2, sc = deb_all(tm, y, em)
                        fv = lambda u: deb_value(u, y, em)
                    if sc != 0 and abs(d2) < mpf(10) ** -40 * sc:
                        d2 = mpf(0)
                        zeros += 1
                    if abs(t) <= 40:
                        err = crosscheck(fv, tm, d1, d2, sc)
                        if err > mpf(10) ** -30:
                            sys.exit(f"diff cross-check failed: {name} eps={eps} t={t} y={y}: {err}")
                        worst_check = max(worst_check, err)
                    rows.append((name, "" if eps is None else repr(eps), repr(t), str(y),
                                 fmt(v), fmt(d1), fmt(d2)))
    with open(out_path, "w") as f:
        f.write("loss,eps,t,y,value,d1,d2\n")
        for r in rows:
            f.write(",".join(r) + "\n")
    print(f"wrote {len(rows)} rows to {out_path}; worst analytic-vs-diff disagreement "
          f"{mpmath.nstr(worst_check, 3)}; exact zeros of d2: {zeros}")


if __name__ == "__main__":
    main()
