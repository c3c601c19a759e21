#!/usr/bin/env python3
"""Cross-check the printed reference numbers of the closed-form cases T1-T14 (README.md) and the
constants of Chowdhury, Zhou & Natarajan (2024) used in the tests (gamma, the objective-perturbation
noise s_w, RR constants) against mpmath (dps=50) and against the committed fixtures.

    python3 tests/reference/check_printed_values.py

For a printed value with k decimals the allowed difference is half a unit in its last printed place
(the printing precision); for a value printed with 16-17 significant digits (a double's repr) it is
2 ulp of that double.  A row is flagged MISMATCH when the difference exceeds it.  Fixture values for
eps = ln 3 are solved for the stored double eps (not the real ln 3), so they may differ from the
real-ln3 closed form by ~1e-16.
"""

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mpmath as mp  # noqa: E402
from mpmath import mpf  # noqa: E402

import solve_reference as sr  # noqa: E402

FIX = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "fixtures")
rows = []
# printed numbers known to be wrong beyond their printed precision
KNOWN_ERRATA = {
    "T8 1-D variant [fixture t8-objpert-1d-mle-ball, theta_0]":
        "printed 0.8000616536096503; the root is 0.80006165360964956 (7.6e-16 off)",
}


def printed_tol(s):
    s = s.strip().lstrip("+-")
    digits = s.lower().split("e")[0].replace(".", "").lstrip("0")
    if len(digits) >= 16:
        # a double's repr: accept the value within 2 ulp of that double
        return 2 * math.ulp(float(s))
    if "e" in s.lower():
        mant, ex = s.lower().split("e")
        dec = len(mant.split(".")[1]) if "." in mant else 0
        return 0.5 * 10 ** (int(ex) - dec)
    dec = len(s.split(".")[1]) if "." in s else 0
    return 0.5 * 10 ** (-dec)


def chk(label, printed, value):
    """printed: the value as printed; value: mpf computed here."""
    diff = abs(mpf(printed) - value)
    tol = printed_tol(printed)
    ok = diff <= tol * (1 + 1e-9)
    rows.append((label, printed, mp.nstr(value, 17), float(diff), tol, ok))


def fixture(name):
    with open(os.path.join(FIX, name + ".json")) as f:
        return json.load(f)


def chk_fixture(label, name, printed_list):
    fx = fixture(name)
    for j, p in enumerate(printed_list):
        chk("%s [fixture %s, theta_%d]" % (label, name, j), p, mpf(fx["expected_theta"][j]))


def main():
    mp.mp.dps = sr.DPS
    ln3 = mp.log(3)
    s = sr.sigmoid

    # section 0 / 8 conventions
    chk("ln 3", "1.0986122886681098", ln3)
    # 1.5 gamma
    chk("gamma(L=B=1) = sigma'(2)", "0.10499358540350652", sr.dsigmoid(mpf(2)))
    # 3.6 A(0) = 2/pi; debiased-probit curvature example (eps = 0.5, y~ = 1)
    h = lambda t: mp.npdf(t) / mp.ncdf(t)  # noqa: E731
    A = lambda t: h(t) * (t + h(t))  # noqa: E731
    chk("A(0) = 2/pi", "0.6366197723675814", A(mpf(0)))
    e5 = mpf("0.5")
    d2 = lambda t: (1 - s(-e5)) * A(t) + (s(e5) - 1) * A(-t)  # noqa: E731
    chk("debiased probit l''(1), eps=0.5", "-0.0719", d2(mpf(1)))
    chk("debiased probit l''(3), eps=0.5", "-0.343", d2(mpf(3)))
    # 4 noise calibration s_w = L sqrt(8 log(2/delta) + 4 eps)/eps, L = 1, delta = 1e-3
    for eps, printed in ((1, "8.0502931423"), (mpf("0.5"), "15.8502012197"), (mpf("0.1"), "78.2350430922")):
        sw = mp.sqrt(8 * mp.log(2 / mpf("1e-3")) + 4 * mpf(eps)) / mpf(eps)
        chk("s_w(eps=%s)" % mp.nstr(eps, 2), printed, sw)
    # 6 quick reference numbers
    for a, printed in (("0.05", "20.017"), ("0.25", "4.083"), ("0.5", "2.164")):
        chk("coth(%s)" % a, printed, mp.coth(mpf(a)))
    chk("coth(0.05)/coth(0.5)", "9.25", mp.coth(mpf("0.05")) / mp.coth(mpf("0.5")))
    chk("coth(0.25)/coth(0.5)", "1.89", mp.coth(mpf("0.25")) / mp.coth(mpf("0.5")))

    # T1
    chk_fixture("T1 MLE", "t1-mle-thetab", ["1.0986122886681098", "-1.0986122886681098", "0"])
    chk("T1 norm sqrt2 ln3", "1.5537", mp.sqrt(2) * ln3)
    # T2
    chk_fixture("T2 (n1=5,k1=4,n2=3,k2=1)", "t2-mle-thetab-a", ["1.0986122886681098", "-1.0986122886681098"])
    chk_fixture("T2 equal counts", "t2-mle-thetab-b", ["-0.6931471805599453", "0.6931471805599453"])
    # T3, T4
    chk_fixture("T3 MLE", "t3-mle-thetab", ["-1.0986122886681098", "0", "1.0986122886681098"])
    chk_fixture("T4 debiased", "t4-debiased-rr-thetab", ["-1.0986122886681098", "0", "1.0986122886681098"])
    chk_fixture("T4 MLE-RR", "t4-mle-rr-thetab", ["-1.0986122886681098", "0", "1.0986122886681098"])
    # T5 reference values of the debiased sum loss 2[softplus(2a) - 3a]
    for a, printed in ((0, "1.386"), (1, "-1.746"), (5, "-10.0"), (20, "-40"), (100, "-200")):
        lo = sr.Loss("debiased-rr", math.log(3))
        val = 4 * lo.eval(mpf(2 * a), 1, 0)[0]
        chk("T5 L(-a,a) at a=%d (eps = double ln3)" % a, printed, val)
    for loss in ("debiased-rr", "mle-rr", "mle"):
        chk_fixture("T5 %s" % loss, "t5-%s-thetab" % loss, ["-0.7071067811865476", "0.7071067811865476"])
        fx = fixture("t5-%s-thetab" % loss)
        rows.append(("T5 %s multiplier > 0 (fixture: %r)" % (loss, fx["multiplier"]), "> 0", "", 0.0, 0.0,
                     fx["multiplier"] > 0))
    for loss in ("debiased-rr", "mle-rr", "mle"):
        fx = fixture("t5-%s-none" % loss)
        rows.append(("T5 %s none: %s" % (loss, fx["expected_status"]), "no-minimizer", "", 0.0, 0.0,
                     fx["expected_status"] == "no-minimizer"))
    # T6
    for loss in ("mle", "mle-rr", "debiased-rr"):
        chk_fixture("T6 %s" % loss, "t6-sym-%s-thetab" % loss, ["0", "0", "0"])
    chk_fixture("T6 objective perturbation w=0", "t6-objpert-mle-thetab", ["0", "0", "0"])
    # T7
    chk_fixture("T7 MLE c=2", "t7-mle-ball", ["0.5493061443"])
    chk_fixture("T7 debiased 5/8", "t7-debiased-rr-ball-5of8", ["1.0986122886681098"])
    chk_fixture("T7 MLE-RR 5/8", "t7-mle-rr-ball-5of8", ["1.0986122886681098"])
    chk_fixture("T7 debiased 7/10", "t7-debiased-rr-ball-7of10", ["2.1972245773"])
    chk_fixture("T7 MLE-RR 7/10", "t7-mle-rr-ball-7of10", ["2.1972245773"])
    chk_fixture("T7 debiased 4/4 -> +B", "t7-debiased-rr-ball-4of4", ["5"])
    chk_fixture("T7 debiased 0/4 -> -B", "t7-debiased-rr-ball-0of4", ["-5"])
    chk_fixture("T7 MLE-RR 4/4 -> +B", "t7-mle-rr-ball-4of4", ["5"])
    chk_fixture("T7 MLE-RR 0/4 -> -B", "t7-mle-rr-ball-0of4", ["-5"])
    chk_fixture("T7 probit Phi^-1(3/4)", "t7-probit-ball", ["0.6744897501960817"])
    # T7 claim: MLE-RR == debiased in 1-D when all |x| are equal, for every count (x = 1, n = 8)
    worst = mpf(0)
    for k in range(9):
        th = []
        for loss in ("debiased-rr", "mle-rr"):
            prob = sr.Problem(loss, [1.0] * 8, [1] * k + [0] * (8 - k), 8, 1, eps=math.log(3),
                              constraint="ball", radius=5.0)
            th.append(sr.solve(prob).theta[0])
        worst = max(worst, abs(th[0] - th[1]))
    rows.append(("T7 MLE-RR == debiased, 1-D, x=1, n=8, k=0..8: max diff %s" % mp.nstr(worst, 3),
                 "equal", "", float(worst), 1e-30, worst <= 1e-30))
    # T8: w, the answer, the wrong scaling, the 1-D root
    X8 = [[1, -1, 0], [0, 1, -1], [1, 0, -1], [-1, 0, 1]]
    y8 = [1, 0, 1, 1]
    th0 = [mpf(2) / 10, -mpf(1) / 10, -mpf(1) / 10]
    w = list(th0)
    for xi, yi in zip(X8, y8):
        t = sum(xi[j] * th0[j] for j in range(3))
        for j in range(3):
            w[j] += (s(t) - yi) * xi[j]
    w = [-v for v in w]
    for j, printed in enumerate(("0.076672449565", "-0.825557483188", "0.748885033623")):
        chk("T8 w_%d" % j, printed, w[j])
    chk_fixture("T8 objective perturbation", "t8-objpert-mle-thetab", ["0.2", "-0.1", "-0.1"])
    fx = fixture("t8-objpert-mle-thetab")
    # wrong scaling: mean loss + beta/2 |th|^2 + w.th  ==  (1/n)[sum l + (n beta)/2 |th|^2 + (n w).th]
    wrong = sr.Problem("mle", fx["x"], fx["y"], 4, 3, constraint="theta-b", radius=2.0, ridge=4.0,
                       linear_term=[4 * v for v in fx["linear_term"]])
    thw = sr.solve(wrong).theta
    for j, printed in enumerate(("0.0142", "0.4890", "-0.5032")):
        chk("T8 wrong scaling theta_%d" % j, printed, thw[j])
    chk_fixture("T8 1-D variant", "t8-objpert-1d-mle-ball", ["0.8000616536096503"])
    # T9 gradient identity
    t = mpf("0.3")
    chk("T9 sigma(0.3)", "0.574442516811659", s(t))
    for eps, m1p, m0p, e1p, e0p, cp in (
            (math.log(3), "-0.46277874159417", "0.53722125840583", "-0.21277874159417", "0.28722125840583", None),
            (0.5, "-0.48176763835652", "0.51823236164348", "-0.10422696955838", "0.14069169284533",
             "0.24491866240371")):
        lo = sr.Loss("debiased-rr", eps)
        m1, m0 = lo.eval(t, 1)[1], lo.eval(t, 0)[1]
        chk("T9 m1 eps=%.4g" % eps, m1p, m1)
        chk("T9 m0 eps=%.4g" % eps, m0p, m0)
        chk("T9 E[g|y=1] eps=%.4g" % eps, e1p, lo.se * m1 + lo.sb * m0)
        chk("T9 E[g|y=0] eps=%.4g" % eps, e0p, lo.se * m0 + lo.sb * m1)
        if cp:
            chk("T9 c_eps eps=%.4g" % eps, cp, lo.c)
    # T10 K-RR / PL identity, K = 3, eps = ln 2
    Phi = [[1, 0], [0, 1], [-1, -1]]
    th = [mpf("0.5"), mpf("-0.5")]
    u = [Phi[k][0] * th[0] + Phi[k][1] * th[1] for k in range(3)]
    Z = mp.fsum(mp.exp(v) for v in u)
    pk = [mp.exp(v) / Z for v in u]
    for k, printed in enumerate(("0.506480391056", "0.186323723226", "0.307195885718")):
        chk("T10 p_%d" % k, printed, pk[k])
    phib = [mp.fsum(pk[k] * Phi[k][j] for k in range(3)) for j in range(2)]
    chk("T10 phibar_0", "0.199284505337", phib[0])
    chk("T10 phibar_1", "-0.120872162493", phib[1])
    K, ee = 3, mpf(2)
    g = []
    for yk in range(3):
        g.append([(sum(Phi[k][j] for k in range(3)) - K * phib[j]) / (ee + K - 1) - (Phi[yk][j] - phib[j])
                  for j in range(2)])
    printed_g = (("-0.950178873666", "-0.030218040623"), ("0.049821126334", "-1.030218040623"),
                 ("1.049821126334", "0.969781959377"))
    for yk in range(3):
        for j in range(2):
            chk("T10 g(y~=%d)_%d" % (yk, j), printed_g[yk][j], g[yk][j])
    mix = [g[0][j] / 2 + g[1][j] / 4 + g[2][j] / 4 for j in range(2)]
    chk("T10 E[g|y=0]_0", "-0.200178873666", mix[0])
    chk("T10 E[g|y=0]_1", "-0.030218040623", mix[1])
    # T11
    chk("T11 (2/3) ln 3", "0.7324081924", 2 * ln3 / 3)
    chk("T11 -(1/3) ln 3", "-0.3662040962", -ln3 / 3)
    fhat = [((ee + K - 1) * mpf(c) / 10 - 1) / (ee - 1) for c in (4, 3, 3)]
    for k, printed in enumerate(("0.6", "0.2", "0.2")):
        chk("T11 fhat_%d" % k, printed, fhat[k])
    # T12
    lo = sr.Loss("debiased-rr", 0.5)
    lr = sr.Loss("mle-rr", 0.5)
    chk("T12 debiased l(800;1), eps=0.5", "-302.03253504", lo.eval(mpf(800), 1, 0)[0])
    chk("T12 debiased l(-800;1), eps=0.5", "497.96746496", lo.eval(mpf(-800), 1, 0)[0])
    chk("T12 mle-rr l(800;1), eps=0.5", "0.474076984", lr.eval(mpf(800), 1, 0)[0])
    chk("T12 mle-rr l(-800;1), eps=0.5", "0.974076984", lr.eval(mpf(-800), 1, 0)[0])
    dz = abs(lo.eval(mpf(0), 1, 0)[0] - lo.c * mp.log(2)) + abs(lr.eval(mpf(0), 1, 0)[0] - mp.log(2))
    rows.append(("T12 debiased l(0) = c ln2 and mle-rr l(0) = ln2", "identity", "", float(dz), 1e-45, dz < 1e-45))

    # report
    w1 = max(len(r[0]) for r in rows)
    bad = 0
    print("%-*s  %-22s %-24s %-9s %-9s %s" % (w1, "check", "printed", "computed", "|diff|", "tol", "ok"))
    known = 0
    for label, printed, val, diff, tol, ok in rows:
        verdict = "ok"
        if not ok:
            if label in KNOWN_ERRATA:
                known += 1
                verdict = "KNOWN MISPRINT: " + KNOWN_ERRATA[label]
            else:
                bad += 1
                verdict = "MISMATCH"
        print("%-*s  %-22s %-24s %-9.2e %-9.1e %s" % (w1, label, printed, val, diff, tol, verdict))
    fx_rows = [r for r in rows if "[fixture" in r[0]]
    print()
    print("max |fixture - printed value| over %d closed-form fixture components: %.3e"
          % (len(fx_rows), max(r[3] for r in fx_rows)))
    print("max |fixture - printed value| / printed tolerance (excluding known misprints): %.3f"
          % max(r[3] / r[4] for r in fx_rows if r[0] not in KNOWN_ERRATA))
    print("%d checks, %d mismatches, %d known misprints" % (len(rows), bad, known))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
