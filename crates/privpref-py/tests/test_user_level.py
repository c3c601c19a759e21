"""User-level label DP (Zhang et al. (2025)) from Python. The CLI does not expose these
estimators, so the tests check: user-level RR's flip rate per user size against σ(−ε/m_u);
the debiased estimator's KKT conditions recomputed in numpy from the paper's loss; user-wise
DP-SGD against a numpy recomputation of its update (noise negligible); determinism under a seed;
the guarantee fields; and every validation path."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privpref
from privpref.errors import DataError, DtypeError, ParameterError, ProvenanceError, ShapeError


def _users(counts, d=3, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.sum(counts))
    x = rng.normal(size=(n, d)) / math.sqrt(d)
    theta = np.array([1.5, -1.0, 0.5][:d])
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ theta))).astype(np.uint8)
    return x, y, theta


COUNTS = np.array([1, 2, 3, 5, 8] * 80)  # 400 users, 1520 rows, ragged
X, Y, THETA = _users(COUNTS)
N = X.shape[0]


def _sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


# ------------------------------------------------------------------------------------------------
# User-level RR and the debiased estimator
# ------------------------------------------------------------------------------------------------


def test_user_rr_flip_rate_per_user_size():
    """Row i of user u is flipped with probability σ(−ε/m_u): within 4.5 binomial sigmas for each
    user size, on 40000 rows per size."""
    eps = 2.0
    sizes = [1, 2, 5, 20]
    counts = np.repeat(sizes, [40000 // m for m in sizes])
    n = int(counts.sum())
    y = (np.arange(n) % 2).astype(np.uint8)
    yp = privpref.UserLevelRR(eps).privatize(y, counts, seed=8)
    flipped = yp.labels != y
    m_row = np.repeat(counts, counts)
    for m in sizes:
        rows = m_row == m
        p = _sigmoid(-eps / m)
        rate = flipped[rows].mean()
        assert abs(rate - p) < 4.5 * math.sqrt(p * (1 - p) / rows.sum()), (m, rate, p)
    g = yp.guarantee
    assert g.unit == "user" and g.eps == eps and g.delta == 0.0 and not g.holds_for_real_data


def _kkt_ball(theta, grad, radius):
    """The KKT residual of min F over {‖θ‖ ≤ R}: ‖∇F + μθ‖ with μ ≥ 0 the multiplier."""
    r = np.linalg.norm(theta)
    if r < radius * (1 - 1e-8):
        return np.linalg.norm(grad), 0.0
    mu = -grad @ theta / r**2
    return np.linalg.norm(grad + mu * theta), mu


def test_fit_user_rr_converges_and_satisfies_the_papers_kkt():
    """The fit on user-level RR labels meets the KKT conditions of the paper's loss
    ℓ̂(θ) = (1/N) Σ [c_i softplus(s_i) + σ̄_i s_i], recomputed here in numpy."""
    eps = 3.0
    counts = np.array([1, 2, 4] * 1000)
    x, y, theta = _users(counts, seed=1)
    yp = privpref.UserLevelRR(eps).privatize(y, counts, seed=3)
    fit = privpref.fit_user_rr(x, yp, counts, eps=eps, constraint="ball", radius=10.0)
    assert fit.converged and fit.certified() is fit
    assert fit.certificate.kkt_residual <= fit.certificate.kkt_tol
    g = fit.guarantee
    assert (g.unit, g.model, g.eps, g.delta) == ("user", "local", eps, 0.0)
    assert g.neighbouring and not g.holds_for_real_data
    # The paper's gradient at theta.
    m = np.repeat(counts, counts).astype(float)
    c, sbar = np.tanh(eps / (2 * m)), _sigmoid(-eps / m)
    sign = 1.0 - 2.0 * yp.labels
    s = sign * (x @ fit.theta)
    grad = ((c * _sigmoid(s) + sbar) * sign) @ x / len(y)
    res, mu = _kkt_ball(fit.theta, grad, 10.0)
    assert mu >= -1e-12
    assert res < 1e-8, res
    # Consistent: the estimate points at the truth.
    cos = fit.theta @ theta / (np.linalg.norm(fit.theta) * np.linalg.norm(theta))
    assert cos > 0.9, cos


def test_fit_user_rr_equal_counts_and_raw_labels():
    counts = np.full(300, 4)
    x, y, _ = _users(counts, seed=2)
    yp = privpref.UserLevelRR(2.0).privatize(y, counts, seed=5)
    fit = privpref.fit_user_rr(x, yp, counts, eps=2.0, radius=5.0)
    assert fit.converged and fit.guarantee.unit == "user"
    # The same labels without provenance: the same bits, no guarantee.
    raw = privpref.fit_user_rr(x, np.array(yp.labels), counts, eps=2.0, radius=5.0)
    assert np.array_equal(raw.theta, fit.theta)
    assert raw.guarantee is None and raw.no_guarantee_reason
    # Equal counts m: the debiased RR loss at ε/m, the same minimiser as fit(loss="debiased-rr").
    ref = privpref.fit(x, np.array(yp.labels), loss="debiased-rr", eps=0.5, constraint="theta-b", radius=5.0,
                       solver="newton")
    np.testing.assert_allclose(fit.theta, ref.theta, rtol=0, atol=1e-9)
    # float32 features are read in place; the fit agrees closely.
    f32 = privpref.fit_user_rr(x.astype(np.float32), yp, counts, eps=2.0, radius=5.0)
    assert f32.converged


def test_fit_user_rr_provenance():
    counts = np.array([2, 3] * 50)
    x, y, _ = _users(counts, seed=3)
    with pytest.raises(ProvenanceError):  # item-level RR labels
        privpref.fit_user_rr(x, privpref.RandomizedResponse(1.0).privatize(y, seed=1), counts, eps=1.0, radius=3.0)
    yp = privpref.UserLevelRR(1.0).privatize(y, counts, seed=1)
    with pytest.raises(ProvenanceError):  # another ε
        privpref.fit_user_rr(x, yp, counts, eps=2.0, radius=3.0)
    with pytest.raises(ProvenanceError):  # another partition of the same rows
        privpref.fit_user_rr(x, yp, np.array([3, 2] * 50), eps=1.0, radius=3.0)
    asserted = privpref.PrivatizedLabels.asserted(yp.labels, "user-rr", 1.0, counts=counts)
    fit = privpref.fit_user_rr(x, asserted, counts, eps=1.0, radius=3.0)
    assert fit.guarantee is not None and fit.guarantee.unit == "user"


def test_fit_user_rr_validation():
    counts = np.array([2, 3] * 50)
    x, y, _ = _users(counts, seed=3)
    yp = privpref.UserLevelRR(1.0).privatize(y, counts, seed=1)
    with pytest.raises(ShapeError):  # counts sum to 249, not 250
        privpref.fit_user_rr(x, y, np.array([2, 3] * 49 + [2, 2]), eps=1.0, radius=3.0)
    with pytest.raises(ShapeError):
        privpref.fit_user_rr(x[:-1], yp, counts, eps=1.0, radius=3.0)
    with pytest.raises(ParameterError):  # a user without comparisons
        privpref.fit_user_rr(x, y, np.array([0, 5] + [2, 3] * 49), eps=1.0, radius=3.0)
    with pytest.raises(ParameterError):
        privpref.fit_user_rr(x, y, np.array([-1, 6] + [2, 3] * 49), eps=1.0, radius=3.0)
    with pytest.raises(DtypeError):
        privpref.fit_user_rr(x, y, counts.astype(float), eps=1.0, radius=3.0)
    with pytest.raises(ShapeError):
        privpref.fit_user_rr(x, y, counts.reshape(2, -1), eps=1.0, radius=3.0)
    with pytest.raises(ShapeError):  # no users
        privpref.fit_user_rr(x, y, np.array([], dtype=int), eps=1.0, radius=3.0)
    with pytest.raises(DataError):
        privpref.fit_user_rr(x, np.where(np.arange(250) == 4, 2, y), counts, eps=1.0, radius=3.0)
    with pytest.raises(DataError):
        privpref.fit_user_rr(x, np.where(np.arange(250) == 4, -1, y.astype(np.int64)), counts, eps=1.0, radius=3.0)
    with pytest.raises(ParameterError):
        privpref.fit_user_rr(x, y, counts, eps=0.0, radius=3.0)
    with pytest.raises(ParameterError):
        privpref.fit_user_rr(x, y, counts, eps=1.0, constraint="ball")  # no radius
    with pytest.raises(ParameterError):
        privpref.fit_user_rr(x, y, counts, eps=1.0, radius=3.0, solver="magic")
    with pytest.raises(ParameterError):
        privpref.fit_user_rr(x, y, counts, eps=1.0, radius=3.0, threads=0)


# ------------------------------------------------------------------------------------------------
# User-wise DP-SGD
# ------------------------------------------------------------------------------------------------

DP = dict(eps=3.0, delta=1e-5, expected_users=80.0, steps=200, clip=1.0, lr=1.0)


def test_user_dpsgd_seed_guarantee_and_noise_scale():
    a = privpref.user_dpsgd(X, Y, COUNTS, seed=4, **DP)
    b = privpref.user_dpsgd(X, Y, COUNTS, seed=4, **DP)
    c = privpref.user_dpsgd(X, Y, COUNTS, seed=5, **DP)
    assert np.array_equal(a.theta, b.theta) and not np.array_equal(a.theta, c.theta)
    g = a.guarantee
    assert (g.unit, g.model, g.delta) == ("user", "central", 1e-5)
    assert g.eps <= 3.0 and g.eps > 3.0 * (1 - 1e-6)
    assert not g.holds_for_real_data and g.seed == 4
    det = a.detail
    assert det["accounting"]["epsilon"] == g.eps
    assert det["accounting"]["sampling_rate"] == pytest.approx(80.0 / 400)
    assert det["accounting"]["steps"] == 200
    # Noise on the averaged gradient: σ C / ñ.
    assert det["noise_std"] == pytest.approx(det["noise_multiplier"] * 1.0 / 80.0, rel=1e-15)
    assert det["halted"] is None
    assert a.termination == "completed" and a.counts["iterations"] == 200
    s1 = privpref.user_dpsgd(X, Y, COUNTS, **DP)
    s2 = privpref.user_dpsgd(X, Y, COUNTS, **DP)
    assert not np.array_equal(s1.theta, s2.theta) and s1.guarantee.holds_for_real_data
    # Useful: with ε = 3 on 400 users, the estimate points at the truth.
    cos = a.theta @ THETA / (np.linalg.norm(a.theta) * np.linalg.norm(THETA))
    assert cos > 0.8, cos


def test_user_dpsgd_and_aup_with_the_pld_accountant():
    # The PLD accountant calibrates a smaller σ for the same (ε, δ) per user; the guarantee's ε is
    # the PLD accountant's at that σ (recomputed here), still at most the target.
    r = privpref.user_dpsgd(X, Y, COUNTS, seed=4, neighbours="add-remove", **DP)
    p = privpref.user_dpsgd(X, Y, COUNTS, seed=4, neighbours="add-remove", accountant="pld", **DP)
    assert p.detail["noise_multiplier"] < 0.97 * r.detail["noise_multiplier"]
    assert p.guarantee.eps <= 3.0
    acc = privpref.rdp_epsilon(80.0 / 400, p.detail["noise_multiplier"], 200, 1e-5, neighbours="add-remove",
                               accountant="pld")
    assert p.guarantee.eps == pytest.approx(acc.epsilon, rel=1e-12)
    a = privpref.aup_rlhf(X, Y, COUNTS, seed=1, neighbours="add-remove", **AUP)
    b = privpref.aup_rlhf(X, Y, COUNTS, seed=1, neighbours="add-remove", accountant="pld", **AUP)
    assert b.detail["noise_multiplier"] < a.detail["noise_multiplier"]
    assert b.guarantee.eps <= 3.0 * (1 + 1e-9)
    with pytest.raises(ParameterError):
        privpref.user_dpsgd(X, Y, COUNTS, seed=4, accountant="prv", **DP)


def test_user_dpsgd_matches_a_numpy_recomputation():
    """With every user in every step (ñ = U, q = 1) and a negligible noise multiplier, the
    iterates are θ_{t+1} = θ_t − η Σ_u clip_C(g_u(θ_t))/U, recomputed here."""
    counts = np.array([1, 2, 3, 5] * 10)
    x, y, _ = _users(counts, seed=6)
    u = len(counts)
    steps, clip, lr = 30, 0.05, 2.0
    fit = privpref.user_dpsgd(x, y, counts, eps=1.0, delta=1e-5, expected_users=float(u), steps=steps, clip=clip,
                              lr=lr, noise_multiplier=1e-9, seed=0)
    starts = np.concatenate([[0], np.cumsum(counts)])
    theta = np.zeros(x.shape[1])
    for _ in range(steps):
        total = np.zeros_like(theta)
        for k in range(u):
            rows = slice(starts[k], starts[k + 1])
            g = (_sigmoid(x[rows] @ theta) - y[rows]) @ x[rows] / counts[k]
            total += g / max(1.0, np.linalg.norm(g) / clip)
        theta = theta - lr * total / u
    np.testing.assert_allclose(fit.theta, theta, rtol=0, atol=1e-7)
    assert fit.detail["noise_multiplier"] == 1e-9
    # Averaged output: the mean of θ_1..θ_T (θ_1 = 0) differs from the last iterate.
    avg = privpref.user_dpsgd(x, y, counts, eps=1.0, delta=1e-5, expected_users=float(u), steps=steps, clip=clip,
                              lr=lr, noise_multiplier=1e-9, seed=0, output="average")
    assert not np.allclose(avg.theta, fit.theta)


def test_user_dpsgd_fixed_size_sampling_is_refused_a_guarantee():
    fit = privpref.user_dpsgd(X, Y, COUNTS, sampler="fixed-size", seed=1, **DP)
    assert fit.guarantee is None and "fixed-size" in fit.refusal


@pytest.mark.parametrize(
    "change,exc",
    [
        (dict(eps=0.0), ParameterError),
        (dict(delta=1.5), ParameterError),
        (dict(expected_users=0.0), ParameterError),
        (dict(expected_users=401.0), ParameterError),
        (dict(steps=0), ParameterError),
        (dict(steps=-3), ParameterError),
        (dict(clip=0.0), ParameterError),
        (dict(lr=-1.0), ParameterError),
        (dict(records_per_user=0), ParameterError),
        (dict(loss="pl-top1"), ParameterError),
        (dict(loss="debiased-rr"), ParameterError),  # needs loss_eps
        (dict(sampler="round-robin"), ParameterError),
        (dict(output="best"), ParameterError),
        (dict(neighbours="swap"), ParameterError),
        (dict(conversion="magic"), ParameterError),
        (dict(constraint="ball"), ParameterError),
        (dict(theta0=np.zeros(2)), ShapeError),
        (dict(seed=-2), ParameterError),
    ],
)
def test_user_dpsgd_bad_parameters(change, exc):
    kw = dict(DP, seed=0)
    kw.update(change)
    with pytest.raises(exc):
        privpref.user_dpsgd(X, Y, COUNTS, **kw)


def test_user_level_bad_data():
    bad_counts = COUNTS.copy()
    bad_counts[0] += 1
    for f, kw in [(privpref.user_dpsgd, DP), (privpref.aup_rlhf, dict(eps=3.0, delta=1e-5, feature_bound=2.0))]:
        with pytest.raises(ShapeError):
            f(X, Y, bad_counts, seed=0, **kw)
        with pytest.raises(ParameterError):
            f(X, Y, np.concatenate([[0], COUNTS]), seed=0, **kw)
        with pytest.raises(DataError):
            f(X, np.where(np.arange(N) == 9, 2, Y), COUNTS, seed=0, **kw)
        with pytest.raises(DataError):
            f(X, np.where(np.arange(N) == 9, 256, Y.astype(np.int64)), COUNTS, seed=0, **kw)
        with pytest.raises(DtypeError):
            f(X, Y.astype(np.float64), COUNTS, seed=0, **kw)
        with pytest.raises(ShapeError):
            f(X, Y[:-1], COUNTS, seed=0, **kw)
        xn = X.copy()
        xn[3, 1] = np.inf
        with pytest.raises(DataError):
            f(xn, Y, COUNTS, seed=0, **kw)


# ------------------------------------------------------------------------------------------------
# AUP-RLHF
# ------------------------------------------------------------------------------------------------

AUP = dict(eps=3.0, delta=1e-5, feature_bound=2.0, steps=100, lr=0.5)


def test_aup_rlhf_seed_and_guarantee():
    a = privpref.aup_rlhf(X, Y, COUNTS, seed=1, **AUP)
    b = privpref.aup_rlhf(X, Y, COUNTS, seed=1, **AUP)
    c = privpref.aup_rlhf(X, Y, COUNTS, seed=2, **AUP)
    assert np.array_equal(a.theta, b.theta) and not np.array_equal(a.theta, c.theta)
    g = a.guarantee
    assert (g.unit, g.model, g.delta) == ("user", "central", 1e-5)
    assert g.eps <= 3.0 * (1 + 1e-9) and g.feature_bound == 2.0
    assert not g.holds_for_real_data
    assert "halted" in a.detail and a.detail["noise_std"] > 0
    assert a.termination == "completed"
    # Two phases on disjoint users, an explicit τ and a user batch: still (ε, δ) per user.
    p = privpref.aup_rlhf(X, Y, COUNTS, seed=1, phases=2, use_all_users=True, tau=1.0, expected_users=50.0, **AUP)
    assert p.guarantee.unit == "user" and p.guarantee.eps <= 3.0 * (1 + 1e-9)
    # The paper's AboveThreshold constants cost up to 2·ε/2, which the guarantee records.
    q = privpref.aup_rlhf(X, Y, COUNTS, seed=1, at_calibration="paper", **AUP)
    assert q.guarantee.eps > g.eps


@pytest.mark.parametrize(
    "change,exc",
    [
        (dict(feature_bound=0.1), DataError),  # a row with ‖x‖ > 2L
        (dict(feature_bound=-1.0), ParameterError),
        (dict(eps=-1.0), ParameterError),
        (dict(delta=0.0), ParameterError),
        (dict(phases=0), ParameterError),
        (dict(phases=-1), ParameterError),
        (dict(steps=0), ParameterError),
        (dict(lr=0.0), ParameterError),
        (dict(tau=-1.0), ParameterError),
        (dict(expected_users=0.0), ParameterError),
        (dict(at_calibration="loose"), ParameterError),
        (dict(sampler="nope"), ParameterError),
        (dict(neighbours="swap"), ParameterError),
        (dict(theta0=np.zeros(5)), ShapeError),
    ],
)
def test_aup_rlhf_bad_parameters(change, exc):
    kw = dict(AUP, seed=0)
    kw.update(change)
    with pytest.raises(exc):
        privpref.aup_rlhf(X, Y, COUNTS, **kw)
