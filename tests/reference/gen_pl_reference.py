#!/usr/bin/env python3
"""High-precision references for the K-wise (Plackett-Luce) estimators.

Writes tests/data/pl_reference.json (one list of cases). Every answer is computed in mpmath at
50 significant digits by a method that shares nothing with the Rust solvers:

* closed forms for tabular (one-hot item) designs where all K items are shown every time:
  PL top-1 MLE = centred log choice frequencies; the debiased K-RR loss = centred log of the
  unbiased frequencies f_k = ((e^eps + K - 1) q_k - 1)/(e^eps - 1) (closed-form case
  T11 of README.md); K = 2 with consistent pairwise logits (case T3) -> (-ln 3, 0, ln 3);
* Hunter's MM iteration (Hunter 2004, "MM algorithms for generalized Bradley-Terry models",
  sec. 5) for tabular designs with varying choice sets and for (top-J) rankings, which decompose
  into choices from the not-yet-ranked pools: gamma_j <- W_j / sum_{stages s with j in pool_s}
  1/sum_{l in pool_s} gamma_l, iterated to a relative change below 1e-45; theta = centred log
  gamma (the sum-zero constraint of Theta_B is the identifiability constraint of tabular
  designs);
* general (dense random) features: damped Newton in mpmath on the Helmert-reduced coordinates
  (interior answers), or a 1-D minimisation over the circle ||theta|| = B of the 2-D sum-zero
  subspace (d = 3) for an answer on the boundary, certified by the KKT conditions with a
  positive multiplier.

Each case records the exact data (dyadic doubles), the loss, the constraint and the expected
theta (rounded to the nearest double with repr) and objective F = mean loss. Certificates are
checked here (gradient / KKT residual < 1e-30); a failing case aborts.

Run: python3 tests/reference/gen_pl_reference.py   (needs only mpmath; a few seconds)
"""
import json
import os
import random

import mpmath as mp

mp.mp.dps = 50


def lse(v):
    m = max(v)
    return m + mp.log(mp.fsum(mp.exp(x - m) for x in v))


def softmax(v):
    m = max(v)
    e = [mp.exp(x - m) for x in v]
    s = mp.fsum(e)
    return [x / s for x in e]


def sample_loss(u, labels, loss, top, eps):
    """Value, score gradient and score Hessian of one sample."""
    k = len(u)
    g = [mp.mpf(0)] * k
    h = [[mp.mpf(0)] * k for _ in range(k)]
    if loss == "pl-krr":
        y = labels[0]
        q = 1 / (mp.e ** eps + k - 1)
        w = [(1 if j == y else 0) - q for j in range(k)]
        c = mp.fsum(w)
        p = softmax(u)
        val = c * lse(u) - mp.fsum(wj * uj for wj, uj in zip(w, u))
        g = [c * p[j] - w[j] for j in range(k)]
        h = [[c * ((p[a] if a == b else 0) - p[a] * p[b]) for b in range(k)] for a in range(k)]
        return val, g, h
    stages = 1 if loss == "pl-top1" else top
    pool = list(range(k))
    val = mp.mpf(0)
    for j in range(stages):
        o = labels[j]
        pu = [u[i] for i in pool]
        val += lse(pu) - u[o]
        p = softmax(pu)
        for a, ia in enumerate(pool):
            g[ia] += p[a]
            for b, ib in enumerate(pool):
                h[ia][ib] += (p[a] if a == b else 0) - p[a] * p[b]
        g[o] -= 1
        pool.remove(o)
    return val, g, h


def objective(case, theta, need_hess=True):
    """F(theta) = mean loss, its gradient and (with need_hess) Hessian (theta-space)."""
    n, k, d = case["n"], case["k"], case["d"]
    x = case["x_mp"]
    width = case["width"]
    f = mp.mpf(0)
    grad = [mp.mpf(0)] * d
    hess = [[mp.mpf(0)] * d for _ in range(d)]
    for i in range(n):
        rows = [x[(i * k + r) * d:(i * k + r + 1) * d] for r in range(k)]
        u = [mp.fsum(a * b for a, b in zip(row, theta)) for row in rows]
        lab = case["labels"][i * width:(i + 1) * width]
        v, g, h = sample_loss(u, lab, case["loss"], case.get("top"), case.get("eps_mp"))
        f += v
        for j in range(d):
            grad[j] += mp.fsum(g[r] * rows[r][j] for r in range(k))
        if need_hess:
            for a in range(d):
                for b in range(d):
                    hess[a][b] += mp.fsum(h[r][s] * rows[r][a] * rows[s][b] for r in range(k) for s in range(k))
    return f / n, [v / n for v in grad], [[v / n for v in row] for row in hess]


def helmert(d):
    """d x (d-1) orthonormal basis of {sum theta = 0} (column k: (1,..,1,-k,0..)/sqrt(k(k+1)))."""
    cols = []
    for kk in range(1, d):
        c = [mp.mpf(0)] * d
        for i in range(kk):
            c[i] = mp.mpf(1)
        c[kk] = mp.mpf(-kk)
        s = mp.sqrt(kk * (kk + 1))
        cols.append([v / s for v in c])
    return cols


def newton(case, sum_zero):
    d = case["d"]
    basis = helmert(d) if sum_zero else [[mp.mpf(1 if i == j else 0) for i in range(d)] for j in range(d)]
    m = len(basis)
    uvec = [mp.mpf(0)] * m

    def theta_of(uv):
        return [mp.fsum(uv[c] * basis[c][i] for c in range(m)) for i in range(d)]

    for it in range(200):
        th = theta_of(uvec)
        f, g, h = objective(case, th)
        gr = [mp.fsum(basis[c][i] * g[i] for i in range(d)) for c in range(m)]
        gn = mp.sqrt(mp.fsum(v * v for v in gr))
        if gn < mp.mpf(10) ** -42:
            hr = mp.matrix([[mp.fsum(basis[a][i] * h[i][j] * basis[b][j] for i in range(d) for j in range(d))
                             for b in range(m)] for a in range(m)])
            lam = min(mp.eigsy(hr)[0])
            assert lam > mp.mpf(10) ** -20, f"{case['name']}: reduced Hessian not PD ({lam})"
            return th, f, gn
        hr = mp.matrix([[mp.fsum(basis[a][i] * h[i][j] * basis[b][j] for i in range(d) for j in range(d))
                         for b in range(m)] for a in range(m)])
        step = mp.lu_solve(hr, mp.matrix([-v for v in gr]))
        t = mp.mpf(1)
        dec = mp.fsum(gr[c] * step[c] for c in range(m))
        while gn > mp.mpf(10) ** -8:  # damped phase; the local phase takes full steps
            cand = [uvec[c] + t * step[c] for c in range(m)]
            fc, _, _ = objective(case, theta_of(cand), need_hess=False)
            if fc <= f + mp.mpf("1e-4") * t * dec or t < mp.mpf(10) ** -30:
                break
            t /= 2
        uvec = [uvec[c] + t * step[c] for c in range(m)]
        assert mp.sqrt(mp.fsum(v * v for v in uvec)) < 1e3, f"{case['name']}: diverging (no minimiser?)"
    raise AssertionError(f"{case['name']}: Newton did not converge")


def boundary_circle(case, radius):
    """d = 3, sum-zero: minimise F over theta(t) = B(cos t h1 + sin t h2)."""
    assert case["d"] == 3
    h1, h2 = helmert(3)
    B = mp.mpf(radius)

    def th(t):
        return [B * (mp.cos(t) * a + mp.sin(t) * b) for a, b in zip(h1, h2)]

    def dth(t):
        return [B * (-mp.sin(t) * a + mp.cos(t) * b) for a, b in zip(h1, h2)]

    grid = [2 * mp.pi * i / 720 for i in range(720)]
    vals = [objective(case, th(t), need_hess=False)[0] for t in grid]
    t0 = grid[min(range(720), key=lambda i: vals[i])]

    def df(t):
        _, g, _ = objective(case, th(t), need_hess=False)
        return mp.fsum(a * b for a, b in zip(g, dth(t)))

    t = mp.findroot(df, t0, tol=mp.mpf(10) ** -45)
    theta = th(t)
    f, g, _ = objective(case, theta, need_hess=False)
    mean = mp.fsum(g) / 3
    pg = [v - mean for v in g]
    mu = -mp.fsum(a * b for a, b in zip(pg, theta)) / (B * B)
    res = mp.sqrt(mp.fsum((a + mu * b) ** 2 for a, b in zip(pg, theta)))
    assert mu > mp.mpf(10) ** -6, f"{case['name']}: multiplier {mu} not positive"
    assert res < mp.mpf(10) ** -30, f"{case['name']}: KKT residual {res}"
    return theta, f, res, mu


def hunter_mm(case):
    """Tabular (one-hot, d = number of items) choice / ranking data: Hunter's MM."""
    n, k, d, width = case["n"], case["k"], case["d"], case["width"]
    stages = 1 if case["loss"] == "pl-top1" else case["top"]
    items = []  # item id of each alternative
    for i in range(n):
        row = []
        for r in range(k):
            v = case["x"][(i * k + r) * d:(i * k + r + 1) * d]
            assert sorted(v) == [0.0] * (d - 1) + [1.0], "not one-hot"
            row.append(v.index(1.0))
        items.append(row)
    wins = [0] * d
    pools = []
    for i in range(n):
        lab = case["labels"][i * width:(i + 1) * width]
        pool = list(range(k))
        for j in range(stages):
            pools.append([items[i][r] for r in pool])
            wins[items[i][lab[j]]] += 1
            pool.remove(lab[j])
    assert all(w > 0 for w in wins), "every item must win at least once"
    gam = [mp.mpf(1)] * d
    for it in range(200000):
        den = [mp.mpf(0)] * d
        for pool in pools:
            s = mp.fsum(gam[j] for j in pool)
            for j in pool:
                den[j] += 1 / s
        new = [wins[j] / den[j] for j in range(d)]
        tot = mp.fsum(new)
        new = [v / tot for v in new]
        change = max(abs(a - b) / b for a, b in zip(new, gam))
        gam = new
        if change < mp.mpf(10) ** -45:
            break
    else:
        raise AssertionError(f"{case['name']}: MM did not converge")
    logs = [mp.log(v) for v in gam]
    mean = mp.fsum(logs) / d
    return [v - mean for v in logs]


def one_hot_x(items_per_sample, d):
    x = []
    for row in items_per_sample:
        for it in row:
            x.extend([1.0 if j == it else 0.0 for j in range(d)])
    return x


def finish(case, theta, f, source, cert):
    print(f"  {case['name']}", flush=True)
    g = objective(case, theta, need_hess=False)[1]
    if case["constraint"] == "theta-b":
        mean = mp.fsum(g) / case["d"]
        pg = [v - mean for v in g]
    else:
        pg = g
    gn = mp.sqrt(mp.fsum(v * v for v in pg))
    if cert == "interior":
        assert gn < mp.mpf(10) ** -30, f"{case['name']}: gradient {gn}"
        nrm = mp.sqrt(mp.fsum(v * v for v in theta))
        if case["radius"] is not None:
            assert nrm < (1 - mp.mpf(10) ** -6) * case["radius"], f"{case['name']}: not interior"
    out = {k: v for k, v in case.items() if not k.endswith("_mp")}
    out["source"] = source
    out["expected_theta"] = [float(v) for v in theta]
    out["expected_objective"] = float(f)
    out["on_boundary"] = cert == "boundary"
    return out


def main():
    rnd = random.Random(20240607)
    cases = []

    def base(name, loss, k, d, x, labels, width, constraint="theta-b", radius=10.0, top=None, eps=None):
        n = len(labels) // width
        c = {
            "name": name,
            "loss": loss,
            "top": top,
            "eps": eps,
            "k": k,
            "d": d,
            "n": n,
            "width": width,
            "x": x,
            "labels": labels,
            "constraint": constraint,
            "radius": radius,
        }
        c["x_mp"] = [mp.mpf(v) for v in x]
        c["eps_mp"] = mp.mpf(eps) if eps is not None else None
        return c

    # 1. Tabular top-1, all K items shown: MLE = centred log frequencies (closed form).
    counts = [5, 3, 2, 6]
    y = [j for j, c in enumerate(counts) for _ in range(c)]
    rnd.shuffle(y)
    c = base("tabular-top1-all-items", "pl-top1", 4, 4, one_hot_x([[0, 1, 2, 3]] * len(y), 4), y, 1)
    logs = [mp.log(v) for v in counts]
    th = [v - mp.fsum(logs) / 4 for v in logs]
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "closed form: centred log choice counts", "interior"))

    # 1b. Same with permuted item order per sample (alternative r shows item perm[r]).
    rows, ys = [], []
    for j, cnt in enumerate(counts):
        for _ in range(cnt):
            perm = [0, 1, 2, 3]
            rnd.shuffle(perm)
            rows.append(perm)
            ys.append(perm.index(j))
    c = base("tabular-top1-all-items-permuted", "pl-top1", 4, 4, one_hot_x(rows, 4), ys, 1)
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "closed form: centred log choice counts", "interior"))

    # 2. Debiased K-RR, all items shown: centred log unbiased frequencies (case T11 generalised).
    eps = float(mp.log(3))
    tcounts = [8, 6, 5, 9]  # privatised choice counts
    nn = sum(tcounts)
    e = mp.e ** mp.mpf(eps)
    fhat = [((e + 3) * mp.mpf(cnt) / nn - 1) / (e - 1) for cnt in tcounts]
    assert all(0 < v < 1 for v in fhat)
    y = [j for j, cnt in enumerate(tcounts) for _ in range(cnt)]
    c = base("tabular-krr-all-items", "pl-krr", 4, 4, one_hot_x([[0, 1, 2, 3]] * nn, 4), y, 1, eps=eps)
    logs = [mp.log(v) for v in fhat]
    th = [v - mp.fsum(logs) / 4 for v in logs]
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "closed form: centred log unbiased K-RR frequencies", "interior"))

    # 2b. Case T11 exactly: K = 3, eps = ln 2, counts (4, 3, 3) -> (2/3 ln3, -1/3 ln3, -1/3 ln3).
    eps2 = float(mp.log(2))
    y = [0] * 4 + [1] * 3 + [2] * 3
    c = base("t11-krr", "pl-krr", 3, 3, one_hot_x([[0, 1, 2]] * 10, 3), y, 1, radius=5.0, eps=eps2)
    # The stored eps is the double nearest ln 2: evaluate the closed form at that double.
    e = mp.e ** mp.mpf(eps2)
    fhat = [((e + 2) * mp.mpf(cnt) / 10 - 1) / (e - 1) for cnt in (4, 3, 3)]
    logs = [mp.log(v) for v in fhat]
    th = [v - mp.fsum(logs) / 3 for v in logs]
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "closed form T11 at the stored eps", "interior"))

    # 3. K = 2 tabular pairs with consistent logits (case T3): (-ln 3, 0, ln 3).
    rows, ys = [], []
    for (a, b, wins_b, tot) in [(0, 1, 3, 4), (1, 2, 3, 4), (0, 2, 9, 10)]:
        for t in range(tot):
            rows.append([a, b])
            ys.append(1 if t < wins_b else 0)
    c = base("t3-k2-pairs", "pl-top1", 2, 3, one_hot_x(rows, 3), ys, 1, radius=2.0)
    l3 = mp.log(3)
    th = [-l3, mp.mpf(0), l3]
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "closed form T3: BTL with consistent logits", "interior"))

    # 4. Tabular top-1 with varying choice sets (every 3-subset of 5 items): Hunter's MM.
    rows, ys = [], []
    util = [0.8, 0.1, -0.3, 0.5, -1.1]
    subsets = [[a, b, cc] for a in range(5) for b in range(a + 1, 5) for cc in range(b + 1, 5)]
    for rep in range(4):
        for s in subsets:
            perm = s[:]
            rnd.shuffle(perm)
            z = [util[it] - mp.log(-mp.log(rnd.random())) for it in perm]
            rows.append(perm)
            ys.append(max(range(3), key=lambda r: z[r]))
    c = base("tabular-top1-subsets", "pl-top1", 3, 5, one_hot_x(rows, 5), ys, 1)
    th = hunter_mm(c)
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "Hunter MM (choice sets), dps=50", "interior"))

    # 5. Tabular full rankings of 4 of 6 items, and top-2 of the same data: Hunter's MM.
    rows, ranks = [], []
    util6 = [1.0, 0.4, 0.0, -0.2, -0.7, 0.3]
    for rep in range(40):
        perm = rnd.sample(range(6), 4)
        z = [util6[it] - mp.log(-mp.log(rnd.random())) for it in perm]
        order = sorted(range(4), key=lambda r: -z[r])
        rows.append(perm)
        ranks.extend(order)
    c = base("tabular-ranking-full", "pl-ranking", 4, 6, one_hot_x(rows, 6), ranks, 4, top=3)
    th = hunter_mm(c)
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "Hunter MM (ranking stages), dps=50", "interior"))
    c = base("tabular-ranking-top2", "pl-ranking", 4, 6, one_hot_x(rows, 6), ranks, 4, top=2)
    th = hunter_mm(c)
    cases.append(finish(c, th, objective(c, th, need_hess=False)[0], "Hunter MM (ranking stages), dps=50", "interior"))

    # 6. Dense random features (dyadic), interior answers by mpmath Newton.
    def dyadic():
        return rnd.randint(-2048, 2048) / 1024.0

    def random_case(name, loss, k, d, n, width, constraint, radius, top=None, eps=None, theta_star=None):
        x = [dyadic() for _ in range(n * k * d)]
        labels = []
        for i in range(n):
            u = [sum(x[(i * k + r) * d + j] * theta_star[j] for j in range(d)) for r in range(k)]
            z = [u[r] - float(mp.log(-mp.log(rnd.random()))) for r in range(k)]
            order = sorted(range(k), key=lambda r: -z[r])
            labels.extend(order[:width])
        if loss == "pl-krr":
            q = 1 / (mp.e ** eps + k - 1)
            keep = 1 - (k - 1) * q
            for i in range(n):
                if rnd.random() >= keep:
                    others = [r for r in range(k) if r != labels[i]]
                    labels[i] = rnd.choice(others)
        return base(name, loss, k, d, x, labels, width, constraint=constraint, radius=radius, top=top, eps=eps)

    ts = [0.6, -0.2, -0.4]
    c = random_case("random-top1-thetab", "pl-top1", 4, 3, 40, 1, "theta-b", 10.0, theta_star=ts)
    th, f, _ = newton(c, True)
    cases.append(finish(c, th, f, "mpmath Newton (Helmert-reduced), dps=50", "interior"))
    c = random_case("random-top1-none", "pl-top1", 5, 4, 50, 1, "none", None, theta_star=[0.5, -0.5, 0.3, 0.1])
    th, f, _ = newton(c, False)
    cases.append(finish(c, th, f, "mpmath Newton, dps=50", "interior"))
    c = random_case("random-ranking-full", "pl-ranking", 4, 3, 30, 4, "theta-b", 10.0, top=3, theta_star=ts)
    th, f, _ = newton(c, True)
    cases.append(finish(c, th, f, "mpmath Newton (Helmert-reduced), dps=50", "interior"))
    c = random_case("random-ranking-top2", "pl-ranking", 5, 3, 30, 5, "theta-b", 10.0, top=2, theta_star=ts)
    th, f, _ = newton(c, True)
    cases.append(finish(c, th, f, "mpmath Newton (Helmert-reduced), dps=50", "interior"))
    c = random_case("random-krr-interior", "pl-krr", 3, 3, 200, 1, "theta-b", 10.0, eps=2.0, theta_star=ts)
    th, f, _ = newton(c, True)
    cases.append(finish(c, th, f, "mpmath Newton (Helmert-reduced), dps=50", "interior"))

    # 7. Debiased K-RR on the boundary (unbounded below; few samples, small eps): d = 3.
    c = random_case("random-krr-boundary", "pl-krr", 3, 3, 12, 1, "theta-b", 0.75, eps=0.5, theta_star=ts)
    th, f, res, mu = boundary_circle(c, 0.75)
    out = finish(c, th, f, "mpmath 1-D minimisation on the circle ||theta|| = B, KKT-certified, dps=50", "boundary")
    out["multiplier"] = float(mu)
    cases.append(out)

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "data", "pl_reference.json")
    with open(path, "w") as fh:
        json.dump({"generator": "tests/reference/gen_pl_reference.py", "dps": 50, "cases": cases}, fh, indent=1)
        fh.write("\n")
    for c in cases:
        print(f"{c['name']:34s} {c['loss']:10s} n={c['n']:3d} K={c['k']} d={c['d']} F={c['expected_objective']:.17g} "
              f"boundary={c['on_boundary']}")


if __name__ == "__main__":
    main()
