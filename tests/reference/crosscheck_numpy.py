#!/usr/bin/env python3
"""OPTIONAL independent cross-check of the committed fixtures with numpy + scipy (float64).

Not needed to regenerate or use the fixtures (CI needs no Python); run it in any environment with
numpy and scipy:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy scipy
    /tmp/venv/bin/python tests/reference/crosscheck_numpy.py

For every fixture it
  * re-evaluates the objective at expected_theta in float64 and compares with expected_objective;
  * computes the float64 KKT residual at the (rounded) expected_theta;
  * solves the problem again with scipy SLSQP (sum-zero equality and ball inequality constraints)
    from several starts and reports the distance to expected_theta and whether SLSQP found a
    lower objective (it must not, beyond float64 noise);
  * for "no-minimizer" fixtures, checks that unconstrained L-BFGS does not converge to a point with
    a small gradient and a bounded norm.
"""

import glob
import json
import os
import sys

import numpy as np
from scipy import optimize, special

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "fixtures")


def sp(t):
    return np.logaddexp(0.0, t)


def make(fx):
    X = np.array(fx["x"], dtype=float).reshape(fx["n"], fx["d"])
    y = np.array(fx["y"], dtype=float)
    w = np.ones(fx["n"]) if fx["weights"] is None else np.array(fx["weights"], dtype=float)
    W = w.sum()
    beta = fx["ridge"] or 0.0
    b = np.zeros(fx["d"]) if fx["linear_term"] is None else np.array(fx["linear_term"], dtype=float)
    loss, eps = fx["loss"], fx["eps"]
    s = 2 * y - 1
    if eps is not None:
        se, sb, c = special.expit(eps), special.expit(-eps), np.tanh(eps / 2)

    def lvals(t):
        if loss == "mle":
            return sp(-s * t), special.expit(t) - y
        if loss == "debiased-rr":
            l1 = se * sp(-t) - sb * sp(t)
            l0 = se * sp(t) - sb * sp(-t)
            d1 = -(se * special.expit(-t) + sb * special.expit(t))
            d0 = se * special.expit(t) + sb * special.expit(-t)
            return np.where(y == 1, l1, l0), np.where(y == 1, d1, d0)
        if loss == "mle-rr":
            st = s * t
            p = sb + c * special.expit(st)
            ds = special.expit(st) * special.expit(-st)
            return -np.log(p), -s * c * ds / p
        if loss == "probit":
            st = s * t
            lp = special.log_ndtr(st)
            h = np.exp(-0.5 * st * st - 0.5 * np.log(2 * np.pi) - lp)
            return -lp, -s * h
        raise ValueError(loss)

    def F(th):
        l, _ = lvals(X @ th)
        return (w @ l + 0.5 * beta * th @ th + b @ th) / W

    def G(th):
        _, d = lvals(X @ th)
        return (X.T @ (w * d) + beta * th + b) / W

    return F, G


def main():
    files = sorted(glob.glob(os.path.join(FIX, "*.json")))
    worst = {"obj_rel": 0.0, "kkt": 0.0, "dist": 0.0}
    bad = 0
    rng = np.random.default_rng(0)
    for path in files:
        fx = json.load(open(path))
        F, G = make(fx)
        d = fx["d"]
        cons = fx["constraint"]
        B = fx["radius"]
        name = fx["name"]
        if fx["expected_status"] == "no-minimizer":
            r = optimize.minimize(F, np.zeros(d), jac=G, method="L-BFGS-B",
                                  options=dict(maxiter=5000, gtol=1e-12))
            gn = np.linalg.norm(G(r.x))
            ok = not (gn < 1e-10 and np.linalg.norm(r.x) < 1e3)
            bad += not ok
            print("%-45s no-minimizer: L-BFGS |x|=%.3g |g|=%.2e %s" % (name, np.linalg.norm(r.x), gn,
                                                                      "ok" if ok else "SUSPICIOUS"))
            continue
        th = np.array(fx["expected_theta"])
        f = F(th)
        obj_rel = abs(f - fx["expected_objective"]) / max(1.0, abs(fx["expected_objective"]))
        g = G(th)
        if cons == "theta-b":
            g = g - g.mean()
        if fx["on_boundary"]:
            mu = -g @ th / B ** 2
            kkt = np.linalg.norm(g + mu * th)
        else:
            kkt = np.linalg.norm(g)
        kkt /= max(1.0, np.abs(np.array(fx["x"])).max())
        # SLSQP from several starts
        cs = []
        if cons == "theta-b":
            cs.append(dict(type="eq", fun=lambda t: np.array([t.sum()]), jac=lambda t: np.ones((1, d))))
        if cons in ("theta-b", "ball"):
            cs.append(dict(type="ineq", fun=lambda t: np.array([B * B - t @ t]), jac=lambda t: -2 * t[None, :]))
        best = None
        for k in range(4):
            x0 = np.zeros(d) if k == 0 else rng.normal(size=d) * (0.5 * B / np.sqrt(d) if B else 1.0)
            if cons == "theta-b":
                x0 = x0 - x0.mean()
            r = optimize.minimize(F, x0, jac=G, method="SLSQP", constraints=cs,
                                  options=dict(maxiter=2000, ftol=1e-16))
            if best is None or r.fun < best.fun:
                best = r
        scale = max(1.0, np.linalg.norm(th))
        dist = np.linalg.norm(best.x - th) / scale
        lower = best.fun < f - 1e-12 * max(1.0, abs(f)) and (
            cons == "none" or (best.x @ best.x <= B * B * (1 + 1e-12) and (cons != "theta-b" or abs(best.x.sum()) < 1e-12)))
        flag = ""
        if obj_rel > 1e-13:
            flag += " OBJECTIVE"
        if lower:
            flag += " SLSQP-LOWER"
        if dist > 1e-4:
            flag += " FAR(%.1e)" % dist
        bad += bool(flag)
        worst["obj_rel"] = max(worst["obj_rel"], obj_rel)
        worst["kkt"] = max(worst["kkt"], kkt)
        worst["dist"] = max(worst["dist"], dist)
        print("%-45s obj rel diff %.1e  float64 KKT %.1e  SLSQP dist %.1e  dF %.1e%s" % (
            name, obj_rel, kkt, dist, best.fun - f, flag or "  ok"))
    print()
    print("%d fixtures; max objective rel diff %.2e; max float64 KKT residual at rounded theta %.2e; "
          "max SLSQP relative distance %.2e; %d flagged" % (len(files), worst["obj_rel"], worst["kkt"],
                                                              worst["dist"], bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
