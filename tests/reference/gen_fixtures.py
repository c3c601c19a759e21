#!/usr/bin/env python3
"""Generate the solver fixtures tests/data/fixtures/<name>.json (needs only mpmath).

    python3 tests/reference/gen_fixtures.py                 # all cases (about 10-20 min, 2 processes)
    python3 tests/reference/gen_fixtures.py -k '^t7' -j 1  # cases whose name matches a regex
    python3 tests/reference/gen_fixtures.py --list          # list case names

Every answer is produced by solve_reference.solve (mpmath, DPS digits) and must pass its KKT
certificate; cases with a closed form (T1-T8, listed in README.md) are additionally compared with it.  A case
that fails any check aborts the run: nothing uncertified is written.  A summary table with the
achieved KKT residuals is written to tests/reference/SUMMARY.md.
"""

import argparse
import json
import math
import multiprocessing
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mpmath as mp  # noqa: E402
from mpmath import mpf  # noqa: E402

import solve_reference as sr  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(REPO, "tests", "data", "fixtures")
SUMMARY = os.path.join(HERE, "SUMMARY.md")

LN3 = math.log(3.0)  # the double nearest ln 3; the fixtures store and use this value
SOURCE_SOLVER = "mpmath reference solver, dps=%d" % sr.DPS


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------

def to_double(x):
    """Correctly rounded double nearest to the mpf x."""
    f = float(x)
    cands = [f, math.nextafter(f, math.inf), math.nextafter(f, -math.inf)]
    return min(cands, key=lambda c: abs(mpf(c) - x))


def dyadic(v, bits=20):
    """Round a float to a multiple of 2^-bits (exact binary data)."""
    return round(v * (1 << bits)) / (1 << bits)


def grouped(d, groups):
    """groups: list of (row, n_g, k_g): n_g copies of row, the first k_g with label 1."""
    x, y = [], []
    for row, n_g, k_g in groups:
        assert len(row) == d
        for r in range(n_g):
            x.extend(float(v) for v in row)
            y.append(1 if r < k_g else 0)
    return x, y


def e(d, j):
    v = [0.0] * d
    v[j] = 1.0
    return v


def pair(d, i, j):
    """tabular pair i -> j: x = e_j - e_i."""
    v = [0.0] * d
    v[j] += 1.0
    v[i] -= 1.0
    return v


def gauss_matrix(rng, n, d, scale=1.0, bits=20):
    return [dyadic(rng.gauss(0.0, scale), bits) for _ in range(n * d)]


def sigmoid_f(t):
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def labels(rng, x, n, d, theta, model="logit"):
    y = []
    for i in range(n):
        t = sum(x[i * d + j] * theta[j] for j in range(d))
        p = sigmoid_f(t) if model == "logit" else 0.5 * math.erfc(-t / math.sqrt(2))
        y.append(1 if rng.random() < p else 0)
    return y


def rr(rng, y, eps):
    flip = 1.0 / (1.0 + math.exp(eps))
    return [1 - v if rng.random() < flip else v for v in y]


def centred(v):
    m = sum(v) / len(v)
    return [a - m for a in v]


def model_of(loss):
    return "probit" if loss == "probit" else "logit"


def loss_eps(loss, eps):
    return eps if loss in ("mle-rr", "debiased-rr") else None


def private(loss):
    return loss in ("mle-rr", "debiased-rr")


def round_down(v, q=256):
    return math.floor(v * q) / q


# ----------------------------------------------------------------------------------------------
# case registry
# ----------------------------------------------------------------------------------------------

CASES = []


def case(name, loss, x, y, n, d, *, constraint, radius=None, eps=None, ridge=0.0, linear_term=None,
         weights=None, source=None, closed_form=None, cf_tol=1e-30, cf_multiplier=None,
         expect_status="converged", expect_boundary=None, justification=None, hints=(),
         same_as=None):
    """closed_form: callable(eps_mpf) -> list of mpf (theta) or None.
    justification (mle-rr only): 'convex' (checked) or a text naming the closed-form argument."""
    CASES.append(dict(name=name, loss=loss, x=[float(v) for v in x], y=[int(v) for v in y], n=n, d=d,
                      constraint=constraint, radius=radius if radius is None or isinstance(radius, tuple) else float(radius),
                      eps=None if eps is None else float(eps), ridge=float(ridge),
                      linear_term=None if linear_term is None else [float(v) for v in linear_term],
                      weights=None if weights is None else [float(v) for v in weights],
                      source=source or SOURCE_SOLVER, closed_form=closed_form, cf_tol=cf_tol,
                      cf_multiplier=cf_multiplier, expect_status=expect_status,
                      expect_boundary=expect_boundary, justification=justification,
                      hints=[list(h) for h in hints], same_as=same_as))


def logit(p):
    return mp.log(p / (1 - p))


def zbar(ybar, eps):
    """unbiased RR frequency (ybar - sigma(-eps)) / tanh(eps/2)."""
    return (ybar - sr.sigmoid(-eps)) / mp.tanh(eps / 2)


# ---------------------------------- closed forms T1-T8 (README.md) -----------------------------

def add_closed_form_cases():
    L3 = lambda e_: mp.log(3)  # noqa: E731

    # T1 one-hot, sum-zero active, logits already sum to zero
    x, y = grouped(3, [(e(3, 0), 4, 3), (e(3, 1), 4, 1), (e(3, 2), 4, 2)])
    case("t1-mle-thetab", "mle", x, y, 12, 3, constraint="theta-b", radius=2.0,
         source="closed form T1", expect_boundary=False,
         closed_form=lambda e_: [mp.log(3), -mp.log(3), mpf(0)])
    case("t1-probit-thetab", "probit", x, y, 12, 3, constraint="theta-b", radius=2.0,
         source="closed form, grouped-design lemma applied to T1 with probit: Phi^-1 of the group means",
         expect_boundary=False,
         closed_form=lambda e_: [mp.sqrt(2) * mp.erfinv(mpf(1) / 2), -mp.sqrt(2) * mp.erfinv(mpf(1) / 2),
                                 mpf(0)])

    # T2 d=2: (a, -a)
    x, y = grouped(2, [(e(2, 0), 5, 4), (e(2, 1), 3, 1)])
    case("t2-mle-thetab-a", "mle", x, y, 8, 2, constraint="theta-b", radius=5.0,
         source="closed form T2", expect_boundary=False,
         closed_form=lambda e_: [mp.log(3), -mp.log(3)])
    x, y = grouped(2, [(e(2, 0), 3, 1), (e(2, 1), 3, 2)])
    case("t2-mle-thetab-b", "mle", x, y, 6, 2, constraint="theta-b", radius=5.0,
         source="closed form T2, equal counts", expect_boundary=False,
         closed_form=lambda e_: [-mp.log(2), mp.log(2)])

    # T3 tabular pairs with consistent logits
    x, y = grouped(3, [(pair(3, 0, 1), 4, 3), (pair(3, 1, 2), 4, 3), (pair(3, 0, 2), 10, 9)])
    case("t3-mle-thetab", "mle", x, y, 18, 3, constraint="theta-b", radius=2.0,
         source="closed form T3", expect_boundary=False,
         closed_form=lambda e_: [-mp.log(3), mpf(0), mp.log(3)])

    # T4 same design, RR labels, eps = ln 3 (stored as the nearest double: the closed form is exact
    # only for the real ln 3, so agreement is at the 1e-16 level)
    x, y = grouped(3, [(pair(3, 0, 1), 8, 5), (pair(3, 1, 2), 8, 5), (pair(3, 0, 2), 10, 7)])
    for loss in ("debiased-rr", "mle-rr"):
        case("t4-%s-thetab" % loss, loss, x, y, 26, 3, constraint="theta-b", radius=2.0, eps=LN3,
             source="closed form T4; expected_theta solved for the stored eps",
             expect_boundary=False, cf_tol=1e-14,
             closed_form=lambda e_: [-mp.log(3), mpf(0), mp.log(3)],
             justification="grouped-design lemma: every group term is individually minimised (Gibbs)")

    # T5 boundary / unbounded below: x = (-1, 1) x4, all labels 1, eps = ln 3, B = 1
    x, y = grouped(2, [([-1.0, 1.0], 4, 4)])
    for loss in ("debiased-rr", "mle-rr", "mle", "probit"):
        def mu5(e_, loss=loss):
            lo = sr.Loss(loss, e_ if private(loss) else None)
            return -mp.sqrt(2) * lo.eval(mp.sqrt(2), 1)[1]
        case("t5-%s-thetab" % loss, loss, x, y, 4, 2, constraint="theta-b", radius=1.0,
             eps=loss_eps(loss, LN3), source="closed form T5", expect_boundary=True,
             closed_form=lambda e_: [-1 / mp.sqrt(2), 1 / mp.sqrt(2)], cf_multiplier=mu5,
             justification="monotone: F(-a, a) = l(2a; 1) is strictly decreasing in a")
        case("t5-%s-none" % loss, loss, x, y, 4, 2, constraint="none", eps=loss_eps(loss, LN3),
             source="closed form T5: no minimiser without the ball",
             expect_status="no-minimizer", hints=[[-1.0, 1.0]])

    # T6 symmetric data -> 0
    rows = [[1.0, -0.5, 0.25], [-0.75, 1.0, 0.5], [0.5, 0.5, -1.0], [0.25, -1.0, 0.75]]
    xs, ys = [], []
    for r in rows:
        xs += r + r
        ys += [1, 0]
    xn, yn = [], []
    for k, r in enumerate(rows):
        xn += r + [-v for v in r]
        yn += [k % 2, k % 2]
    for loss in ("mle", "mle-rr", "debiased-rr", "probit"):
        eps = loss_eps(loss, 0.5)
        just = "symmetric data: each pair of terms is minimised at t = 0 (Gibbs / symmetry)"
        case("t6-sym-%s-thetab" % loss, loss, xs, ys, 8, 3, constraint="theta-b", radius=1.0, eps=eps,
             source="closed form T6", expect_boundary=False, justification=just,
             closed_form=lambda e_: [mpf(0)] * 3)
        case("t6-sym-%s-none" % loss, loss, xs, ys, 8, 3, constraint="none", eps=eps,
             source="closed form T6", justification=just,
             closed_form=lambda e_: [mpf(0)] * 3)
        case("t6-negx-%s-ball" % loss, loss, xn, yn, 8, 3, constraint="ball", radius=1.0, eps=eps,
             source="closed form T6, pairs (x,y),(-x,y)", expect_boundary=False, justification=just,
             closed_form=lambda e_: [mpf(0)] * 3)
    case("t6-objpert-mle-thetab", "mle", xs, ys, 8, 3, constraint="theta-b", radius=1.0, ridge=1.0,
         linear_term=[0.0, 0.0, 0.0], source="closed form T6, objective perturbation with w = 0",
         expect_boundary=False, closed_form=lambda e_: [mpf(0)] * 3)

    # T7 d = 1, ball
    x, y = grouped(1, [([2.0], 6, 4), ([-2.0], 2, 0)])
    case("t7-mle-ball", "mle", x, y, 8, 1, constraint="ball", radius=5.0, source="closed form T7",
         expect_boundary=False, closed_form=lambda e_: [mp.log(3) / 2])
    case("t7-mle-ball-clipped", "mle", x, y, 8, 1, constraint="ball", radius=0.25,
         source="closed form T7, clipped to [-B, B]", expect_boundary=True,
         closed_form=lambda e_: [mpf(0.25)])
    for k_, n_, tag, bnd in ((5, 8, "5of8", False), (7, 10, "7of10", False), (4, 4, "4of4", True),
                             (0, 4, "0of4", True)):
        x, y = grouped(1, [([1.0], n_, k_)])
        for loss in ("debiased-rr", "mle-rr"):
            if bnd:
                cf = (lambda e_, s=(1 if k_ else -1): [mpf(5 * s)])
            else:
                cf = (lambda e_, p=mpf(k_) / n_: [logit(zbar(p, e_))])
            case("t7-%s-ball-%s" % (loss, tag), loss, x, y, n_, 1, constraint="ball", radius=5.0, eps=LN3,
                 source="closed form T7, logit(zbar) at the stored eps", expect_boundary=bnd,
                 closed_form=cf,
                 justification="1-D, one group: l is unimodal in t (Gibbs) / monotone when zbar outside [0,1]")
    x, y = grouped(1, [([1.0], 4, 3)])
    case("t7-probit-ball", "probit", x, y, 4, 1, constraint="ball", radius=5.0,
         source="closed form T7, Phi^-1(3/4)", expect_boundary=False,
         closed_form=lambda e_: [mp.sqrt(2) * mp.erfinv(mpf(1) / 2)])

    # T8 objective perturbation inverse test: w := -(sum_i (sigma(x_i.th) - y_i) x_i + beta th)
    X8 = [[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, -1.0], [-1.0, 0.0, 1.0]]
    y8 = [1, 0, 1, 1]
    th0 = [mpf(2) / 10, -mpf(1) / 10, -mpf(1) / 10]
    w8 = [th0[j] * 1 for j in range(3)]
    for xi, yi in zip(X8, y8):
        t = sum(mpf(xi[j]) * th0[j] for j in range(3))
        for j in range(3):
            w8[j] += (sr.sigmoid(t) - yi) * xi[j]
    w8 = [to_double(-v) for v in w8]
    x8 = [v for r in X8 for v in r]
    for cons in ("theta-b", "ball", "none"):
        case("t8-objpert-mle-%s" % cons.replace("-", ""), "mle", x8, y8, 4, 3, constraint=cons,
             radius=None if cons == "none" else 2.0, ridge=1.0, linear_term=w8,
             source="closed form T8; expected_theta solved for the stored (double) w",
             expect_boundary=None if cons == "none" else False, cf_tol=1e-14,
             closed_form=lambda e_: [mpf(2) / 10, -mpf(1) / 10, -mpf(1) / 10])
    x, y = grouped(1, [([1.0], 10, 7)])

    def t8_1d(e_):
        return [mp.findroot(lambda a: 10 * sr.sigmoid(a) - 7 + 2 * a - mpf(1.5), mpf(0.8))]
    for cons in ("ball", "none"):
        case("t8-objpert-1d-mle-%s" % cons, "mle", x, y, 10, 1, constraint=cons,
             radius=None if cons == "none" else 2.0, ridge=2.0, linear_term=[-1.5],
             source="closed form T8 1-D variant: root of n sigma(a) - k + beta a + w",
             expect_boundary=None if cons == "none" else False, closed_form=t8_1d)

    # grouped design without constraint (d = 2, full rank): global minimiser by the grouped lemma
    x, y = grouped(2, [(e(2, 0), 8, 5), (e(2, 1), 8, 3)])
    for loss in ("debiased-rr", "mle-rr"):
        case("grouped-%s-none" % loss, loss, x, y, 16, 2, constraint="none", eps=LN3,
             source="closed form, grouped-design lemma: logit(zbar_g) at the stored eps",
             closed_form=lambda e_: [logit(zbar(mpf(5) / 8, e_)), logit(zbar(mpf(3) / 8, e_))],
             justification="grouped-design lemma: each group term globally minimised (Gibbs); rows span R^2")

    # 1-D, |x| differ: mle-rr and debiased differ (convex: eps >= 2 B max|x|)
    x, y = grouped(1, [([1.0], 12, 7), ([2.0], 10, 6), ([-1.0], 8, 4), ([0.5], 10, 6)])
    for loss in ("debiased-rr", "mle-rr"):
        case("t7x-%s-ball-unequal-x" % loss, loss, x, y, 40, 1, constraint="ball", radius=0.5, eps=2.0,
             expect_boundary=False, justification="convex")


# ---------------------------------- generated cases ---------------------------------------------

def add_random_cases():
    losses = ("mle", "debiased-rr", "probit", "mle-rr")

    # random Gaussian data, theta-b and ball, interior and boundary (same data for both regimes)
    for li, loss in enumerate(losses):
        for cons, d in (("theta-b", 4), ("ball", 4)):
            rng = random.Random(1000 + 10 * li + (0 if cons == "theta-b" else 1))
            if loss == "mle-rr":
                n, eps, xs, tscale = 400, 4.0, 1.0, 0.35
            else:
                n, eps, xs, tscale = 200, 1.0, 1.0, 1.0
            x = gauss_matrix(rng, n, d, xs)
            th = [rng.gauss(0, 1) for _ in range(d)]
            if cons == "theta-b":
                th = centred(th)
            nt = math.sqrt(sum(v * v for v in th))
            th = [v * tscale / nt for v in th]
            y = labels(rng, x, n, d, th, model_of(loss))
            if private(loss):
                y = rr(rng, y, eps)
            tag = cons.replace("-", "")
            common = dict(eps=loss_eps(loss, eps), justification="convex" if loss == "mle-rr" else None)
            if loss == "mle-rr":
                # largest radius with a convexity proof (eps >= 2 B max |P x_i|)
                p0 = sr.Problem(loss, x, y, n, d, eps=eps, constraint=cons, radius=1.0)
                rows = [p0.project_subspace(r) for r in p0.X]
                Bmax = round_down(eps / (2 * float(max(sr.norm(r) for r in rows))))
                CASES_DESIGN.append(("rand-%s-%s" % (loss, tag), Bmax))
                B_in, B_out = Bmax, ("frac", 0.5, Bmax)
            else:
                B_in, B_out = 8.0, ("frac", 0.5, None)
            case("rand-%s-%s-interior" % (loss, tag), loss, x, y, n, d, constraint=cons, radius=B_in,
                 expect_boundary=False, **common)
            case("rand-%s-%s-boundary" % (loss, tag), loss, x, y, n, d, constraint=cons, radius=B_out,
                 expect_boundary=True, **common)

    # random, no constraint (finite minimiser), d = 3
    for li, loss in enumerate(("mle", "debiased-rr", "probit")):
        rng = random.Random(2000 + li)
        n, d, eps = 300, 3, 2.0
        x = gauss_matrix(rng, n, d)
        th = [0.8, -0.5, 0.3]
        y = labels(rng, x, n, d, th, model_of(loss))
        if private(loss):
            y = rr(rng, y, eps)
        case("rand-%s-none" % loss, loss, x, y, n, d, constraint="none", eps=loss_eps(loss, eps))
    # debiased, small n, small eps: unbounded below
    rng = random.Random(2100)
    n, d, eps = 20, 3, 0.5
    x = gauss_matrix(rng, n, d)
    y = rr(rng, labels(rng, x, n, d, [0.8, -0.5, 0.3]), eps)
    case("rand-debiased-rr-none-unbounded", "debiased-rr", x, y, n, d, constraint="none", eps=eps,
         expect_status="no-minimizer")

    # separable data: ball -> boundary, none -> no minimiser
    for li, loss in enumerate(losses):
        rng = random.Random(3000 + li)
        n, d = 40, 3
        u = [1.0, -2.0, 0.5]
        x = []
        y = []
        while len(y) < n:
            row = [dyadic(rng.gauss(0, 1)) for _ in range(d)]
            t = sum(a * b for a, b in zip(row, u))
            if abs(t) < 0.25:
                continue
            x += row
            y.append(1 if t > 0 else 0)
        if loss == "mle-rr":
            eps = 2.0
            B = round_down(eps / (2 * max(math.sqrt(sum(v * v for v in x[i * d:(i + 1) * d])) for i in range(n))))
        else:
            eps, B = 1.0, 1.0
        case("sep-%s-ball" % loss, loss, x, y, n, d, constraint="ball", radius=B, eps=loss_eps(loss, eps),
             expect_boundary=True, justification="convex" if loss == "mle-rr" else None)
        case("sep-%s-none" % loss, loss, x, y, n, d, constraint="none", eps=loss_eps(loss, eps),
             expect_status="no-minimizer", hints=[u])

    # n < d
    for li, loss in enumerate(losses):
        rng = random.Random(4000 + li)
        n, d = 5, 12
        x = gauss_matrix(rng, n, d)
        y = [1, 0, 1, 1, 0]
        if loss == "mle-rr":
            eps = 4.0
            B = round_down(eps / (2 * max(math.sqrt(sum(v * v for v in x[i * d:(i + 1) * d])) for i in range(n))))
        else:
            eps, B = 1.0, 1.0
        case("nltd-%s-ball" % loss, loss, x, y, n, d, constraint="ball", radius=B, eps=loss_eps(loss, eps),
             expect_boundary=True, justification="convex" if loss == "mle-rr" else None)

    # badly conditioned columns: col 0 * 1e-3, col 1 * 1e3, col 3 = col 2 + 2^-10 noise
    for li, loss in enumerate(losses):
        rng = random.Random(5000 + li)
        n, d = 400, 5
        x = gauss_matrix(rng, n, d)
        for i in range(n):
            x[i * d + 0] = x[i * d + 0] * 1e-3
            x[i * d + 1] = x[i * d + 1] * 1e3
            x[i * d + 3] = x[i * d + 2] + dyadic(rng.gauss(0, 1)) / 1024.0
        th = [300.0, 1e-3, 0.4, 0.3, -0.8]
        eps = 3.0
        y = labels(rng, x, n, d, th, model_of(loss))
        if private(loss):
            y = rr(rng, y, eps)
        if loss == "mle-rr":
            B = round_down(eps / (2 * max(math.sqrt(sum(v * v for v in x[i * d:(i + 1) * d])) for i in range(n))),
                           q=1 << 20)
            case("illcond-%s-ball" % loss, loss, x, y, n, d, constraint="ball", radius=B, eps=eps,
                 justification="convex")
        else:
            case("illcond-%s-none" % loss, loss, x, y, n, d, constraint="none", eps=loss_eps(loss, eps))
            if loss == "mle":
                case("illcond-%s-ball" % loss, loss, x, y, n, d, constraint="ball", radius=4.0,
                     eps=loss_eps(loss, eps), expect_boundary=True)

    # sample weights (with zeros) and the duplicated-rows companion
    for li, loss in enumerate(losses):
        rng = random.Random(6000 + li)
        n, d = 60, 4
        eps = 4.0 if loss == "mle-rr" else 1.0
        x = gauss_matrix(rng, n, d, 0.5 if loss == "mle-rr" else 1.0)
        th = centred([0.5, -1.0, 0.2, 0.3])
        y = labels(rng, x, n, d, th, model_of(loss))
        if private(loss):
            y = rr(rng, y, eps)
        wts = [float(rng.choice((0, 1, 1, 2))) for _ in range(n)]
        xd, yd = [], []
        for i in range(n):
            for _ in range(int(wts[i])):
                xd += x[i * d:(i + 1) * d]
                yd.append(y[i])
        if loss == "mle-rr":
            p0 = sr.Problem(loss, x, y, n, d, eps=eps, constraint="theta-b", radius=1.0, weights=wts)
            B = round_down(eps / (2 * float(max(sr.norm(p0.project_subspace(p0.X[i])) for i in range(n)))))
        else:
            B = 4.0
        just = "convex" if loss == "mle-rr" else None
        case("weights-%s-thetab" % loss, loss, x, y, n, d, constraint="theta-b", radius=B, eps=loss_eps(loss, eps),
             weights=wts, justification=just)
        case("weights-dup-%s-thetab" % loss, loss, xd, yd, len(yd), d, constraint="theta-b", radius=B,
             eps=loss_eps(loss, eps), justification=just, same_as="weights-%s-thetab" % loss)
    # fractional weights
    rng = random.Random(6100)
    n, d = 50, 3
    x = gauss_matrix(rng, n, d)
    y = labels(rng, x, n, d, [1.0, -0.5, 0.25])
    wts = [rng.choice((0.0, 0.25, 0.5, 1.5, 3.0)) for _ in range(n)]
    case("weights-frac-mle-ball", "mle", x, y, n, d, constraint="ball", radius=4.0, weights=wts)
    case("weights-frac-mle-ball-boundary", "mle", x, y, n, d, constraint="ball", radius=0.5, weights=wts,
         expect_boundary=True)

    # ridge and linear term together
    for li, loss in enumerate(losses):
        rng = random.Random(7000 + li)
        n, d = 100, 4
        eps = 4.0 if loss == "mle-rr" else 1.0
        x = gauss_matrix(rng, n, d, 0.5 if loss == "mle-rr" else 1.0)
        th = centred([0.6, -0.4, 0.1, 0.2])
        y = labels(rng, x, n, d, th, model_of(loss))
        if private(loss):
            y = rr(rng, y, eps)
        b = [dyadic(rng.gauss(0, 3.0), 10) for _ in range(d)]
        beta = 4.0
        if loss == "mle-rr":
            p0 = sr.Problem(loss, x, y, n, d, eps=eps, constraint="theta-b", radius=1.0)
            B = round_down(eps / (2 * float(max(sr.norm(p0.project_subspace(r)) for r in p0.X))))
            case("ridge-linear-%s-thetab" % loss, loss, x, y, n, d, constraint="theta-b", radius=B, eps=eps,
                 ridge=beta, linear_term=b, justification="convex")
            continue
        case("ridge-linear-%s-thetab" % loss, loss, x, y, n, d, constraint="theta-b", radius=4.0,
             eps=loss_eps(loss, eps), ridge=beta, linear_term=b, expect_boundary=False)
        case("ridge-linear-%s-ball-boundary" % loss, loss, x, y, n, d, constraint="ball", radius=0.25,
             eps=loss_eps(loss, eps), ridge=beta, linear_term=b, expect_boundary=True)
        case("ridge-linear-%s-none" % loss, loss, x, y, n, d, constraint="none", eps=loss_eps(loss, eps),
             ridge=beta, linear_term=b)
    # weights together with ridge and linear term: pins the 1/W (not 1/n) scaling of beta and b
    rng = random.Random(7100)
    n, d = 40, 3
    x = gauss_matrix(rng, n, d)
    y = labels(rng, x, n, d, [1.0, -0.5, -0.5])
    wts = [float(rng.choice((0, 1, 2, 2, 3))) for _ in range(n)]
    b = [dyadic(rng.gauss(0, 3.0), 10) for _ in range(d)]
    xd, yd = [], []
    for i in range(n):
        for _ in range(int(wts[i])):
            xd += x[i * d:(i + 1) * d]
            yd.append(y[i])
    case("weights-ridge-linear-mle-thetab", "mle", x, y, n, d, constraint="theta-b", radius=4.0, ridge=3.0,
         linear_term=b, weights=wts, expect_boundary=False)
    case("weights-dup-ridge-linear-mle-thetab", "mle", xd, yd, len(yd), d, constraint="theta-b", radius=4.0,
         ridge=3.0, linear_term=b, expect_boundary=False, same_as="weights-ridge-linear-mle-thetab")

    # debiased, unbounded data made well-posed by the ridge (coercive: debiased decreases at most linearly)
    rng = random.Random(2100)
    n, d, eps = 20, 3, 0.5
    x = gauss_matrix(rng, n, d)
    y = rr(rng, labels(rng, x, n, d, [0.8, -0.5, 0.3]), eps)
    case("ridge-debiased-rr-none-unbounded-data", "debiased-rr", x, y, n, d, constraint="none", eps=eps,
         ridge=1.0)


CASES_DESIGN = []


# ----------------------------------------------------------------------------------------------
# running one case
# ----------------------------------------------------------------------------------------------

def make_problem(c, radius):
    return sr.Problem(c["loss"], c["x"], c["y"], c["n"], c["d"], eps=c["eps"], constraint=c["constraint"],
                      radius=radius, ridge=c["ridge"], linear_term=c["linear_term"], weights=c["weights"])


def resolve_radius(c):
    r = c["radius"]
    if isinstance(r, tuple):  # ("frac", f, cap): f * |free solution|, capped, rounded to 1/256
        _, f, capv = r
        p = make_problem(c, 1000.0)
        free = sr.solve(p)
        if free.on_boundary:
            raise sr.CertificateError("design: free solution not interior")
        B = round_down(f * float(sr.norm(free.theta)))
        if capv is not None:
            B = min(B, capv)
        return B
    return r


def run_case(c):
    t0 = time.time()
    radius = c["radius"]
    if isinstance(radius, tuple):
        radius = resolve_radius(c)
    prob = make_problem(c, radius)
    name = c["name"]
    notes = []
    if c["loss"] == "mle-rr" and c["expect_status"] == "converged":
        just = c["justification"]
        if just is None:
            raise sr.CertificateError("%s: mle-rr case without a global-optimality justification" % name)
        if just == "convex":
            if not prob.convex_on_feasible_set():
                raise sr.CertificateError("%s: mle-rr convexity condition fails" % name)
            notes.append("mle-rr convex on the feasible set (eps >= 2 B max|P x_i|)")
        else:
            notes.append("mle-rr global by: " + just)
    res = sr.solve(prob, none_hints=c["hints"])
    notes += res.notes
    if res.status != c["expect_status"]:
        raise sr.CertificateError("%s: status %s, expected %s" % (name, res.status, c["expect_status"]))
    if c["expect_boundary"] is not None and res.on_boundary != c["expect_boundary"]:
        raise sr.CertificateError("%s: on_boundary %s, expected %s" % (name, res.on_boundary, c["expect_boundary"]))
    cf_diff = None
    mu_diff = None
    if c["closed_form"] is not None and res.status == "converged":
        epsm = mpf(c["eps"]) if c["eps"] is not None else None
        cf = c["closed_form"](epsm)
        cf_diff = max(abs(a - b) for a, b in zip(cf, res.theta))
        if not cf_diff <= c["cf_tol"]:
            raise sr.CertificateError("%s: closed form differs by %s" % (name, mp.nstr(cf_diff, 3)))
        if c["cf_multiplier"] is not None:
            mu_diff = abs(c["cf_multiplier"](epsm) - res.multiplier)
            if not mu_diff <= c["cf_tol"]:
                raise sr.CertificateError("%s: closed-form multiplier differs by %s" % (name, mp.nstr(mu_diff, 3)))
    ms = None
    if c["loss"] == "mle-rr" and res.status == "converged" and c["constraint"] != "none":
        dist, gap = sr.multistart_check(prob, res.theta)
        ms = (dist, gap)
        if dist > 1e-5 or gap < -1e-12:
            raise sr.CertificateError("%s: multistart found a different point (dist %g, gap %g)" % (name, dist, gap))
    fx = {
        "name": name,
        "source": c["source"],
        "loss": c["loss"],
        "eps": c["eps"],
        "constraint": c["constraint"],
        "radius": None if c["constraint"] == "none" else float(radius),
        "ridge": c["ridge"],
        "linear_term": c["linear_term"],
        "n": c["n"],
        "d": c["d"],
        "x": c["x"],
        "y": c["y"],
        "weights": c["weights"],
        "expected_status": res.status,
        "expected_theta": None if res.theta is None else [to_double(v) for v in res.theta],
        "expected_objective": None if res.objective is None else to_double(res.objective),
        "on_boundary": res.on_boundary,
        "multiplier": None if res.multiplier is None else to_double(res.multiplier),
    }
    summary = dict(name=name, loss=c["loss"], constraint=c["constraint"], status=res.status,
                   on_boundary=res.on_boundary, n=c["n"], d=c["d"],
                   kkt=None if res.kkt_residual is None else float(res.kkt_residual),
                   min_eig=None if res.min_eig is None else float(res.min_eig),
                   mu=None if res.multiplier is None else float(res.multiplier),
                   cf_diff=None if cf_diff is None else float(cf_diff),
                   mu_diff=None if mu_diff is None else float(mu_diff), multistart=ms,
                   notes=notes, seconds=time.time() - t0, same_as=c["same_as"])
    return fx, summary


def write_fixture(fx):
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, fx["name"] + ".json")
    lines = ['  %s: %s' % (json.dumps(k), json.dumps(v, allow_nan=False)) for k, v in fx.items()]
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
    # round-trip check
    with open(path) as f:
        back = json.load(f)
    assert back == fx, path
    return path


def _worker(idx):
    c = CASES[idx]
    try:
        return run_case(c), None
    except Exception as ex:  # noqa: BLE001
        return None, "%s: %s: %s" % (c["name"], type(ex).__name__, ex)


def fmt(v, spec=".1e"):
    return "-" if v is None else format(v, spec)


def write_summary(rows):
    rows = sorted(rows, key=lambda r: r["name"])
    kkts = [r["kkt"] for r in rows if r["kkt"] is not None]
    out = ["# Fixture summary (generated by gen_fixtures.py; do not edit)", "",
           "Working precision: mpmath dps=%d. KKT residual = |P grad F + mu theta| in the 1/W-scaled"
           " objective, recomputed from the original data. Certificate tolerance: 1e-30 * (sum_i w_i |x_i| + |b| + 1)/W."
           % sr.DPS, "",
           "Max KKT residual over all fixtures: %s" % fmt(max(kkts) if kkts else None), "",
           "| name | loss | constraint | status | on_boundary | n | d | KKT residual | lambda_min (reduced Hessian of F, + mu I on the boundary) | mu | closed-form diff | notes |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        notes = list(r["notes"])
        if r["multistart"]:
            notes.append("multistart: max dist %.1e, min gap %.1e" % r["multistart"])
        if r["same_as"]:
            notes.append("same answer as %s (checked)" % r["same_as"])
        out.append("| %s | %s | %s | %s | %s | %d | %d | %s | %s | %s | %s | %s |" % (
            r["name"], r["loss"], r["constraint"], r["status"],
            "-" if r["on_boundary"] is None else str(r["on_boundary"]).lower(), r["n"], r["d"],
            fmt(r["kkt"]), fmt(r["min_eig"], ".3e"), fmt(r["mu"], ".6g"), fmt(r["cf_diff"]),
            "; ".join(notes).replace("|", "/")))
    with open(SUMMARY, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default=None, help="only cases whose name matches this regular expression")
    ap.add_argument("-j", type=int, default=2, help="processes")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-summary", action="store_true")
    args = ap.parse_args()
    add_closed_form_cases()
    add_random_cases()
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    import re
    sel = [i for i, c in enumerate(CASES) if args.k is None or re.search(args.k, c["name"])]
    if args.list:
        for i in sel:
            c = CASES[i]
            print(c["name"], c["loss"], c["constraint"], c["n"], c["d"])
        return
    t0 = time.time()
    # longest first
    sel.sort(key=lambda i: -CASES[i]["n"] * CASES[i]["d"] ** 2)
    if args.j > 1:
        with multiprocessing.Pool(args.j) as pool:
            outs = pool.map(_worker, sel, chunksize=1)
    else:
        outs = [_worker(c) for c in sel]
    errors = [err for _, err in outs if err]
    done = [o for o, err in outs if o]
    by_name = {fx["name"]: fx for fx, _ in done}
    for fx, s in done:
        if s["same_as"] and s["same_as"] in by_name:
            other = by_name[s["same_as"]]
            if fx["expected_theta"] != other["expected_theta"]:
                diff = max(abs(a - b) for a, b in zip(fx["expected_theta"], other["expected_theta"]))
                if diff > 0:
                    errors.append("%s: differs from %s by %g" % (fx["name"], s["same_as"], diff))
    if errors:
        print("FAILED cases (nothing written):", file=sys.stderr)
        for e_ in errors:
            print("  " + e_, file=sys.stderr)
        sys.exit(1)
    for fx, s in done:
        write_fixture(fx)
        print("%-45s %-12s %-8s %-13s bnd=%-5s kkt=%s cf=%s %.1fs" % (
            s["name"], s["loss"], s["constraint"], s["status"], s["on_boundary"], fmt(s["kkt"]),
            fmt(s["cf_diff"]), s["seconds"]))
    if args.k is None and not args.no_summary:
        write_summary([s for _, s in done])
    print("%d fixtures in %.0f s" % (len(done), time.time() - t0))


if __name__ == "__main__":
    main()
