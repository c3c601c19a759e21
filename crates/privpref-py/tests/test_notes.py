"""Weak results are said, not silent (a ``PrivacyWarning``), and the default feasible set is the
CLI's: ``theta-b`` when a radius is given, ``none`` when not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import privpref
from privpref.errors import ParameterError, PrivacyWarning


def _data(n=400, d=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ np.array([1.0, -1.0, 0.0])))).astype(np.uint8)
    return x, y


def test_radius_alone_means_theta_b():
    x, y = _data()
    f = privpref.fit(x, y, radius=0.1)
    assert abs(f.theta.sum()) < 1e-12
    assert abs(np.linalg.norm(f.theta) - 0.1) < 1e-9  # the unconstrained MLE is far outside
    same = privpref.fit(x, y, constraint="theta-b", radius=0.1)
    np.testing.assert_array_equal(f.theta, same.theta)


def test_no_radius_means_unconstrained_and_named_constraints_still_work():
    x, y = _data()
    free = privpref.fit(x, y)
    np.testing.assert_array_equal(free.theta, privpref.fit(x, y, constraint="none").theta)
    assert abs(free.theta.sum()) > 1e-4 and np.linalg.norm(free.theta) > 0.5
    ball = privpref.fit(x, y, constraint="ball", radius=0.1)
    assert abs(np.linalg.norm(ball.theta) - 0.1) < 1e-9 and abs(ball.theta.sum()) > 1e-6
    with pytest.raises(ParameterError, match="takes no radius"):
        privpref.fit(x, y, constraint="none", radius=2)
    with pytest.raises(ParameterError, match="needs --radius"):
        privpref.fit(x, y, constraint="theta-b")


def test_cli_and_python_defaults_agree(cli, tmp_path):
    x, y = _data()
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    for extra, kwargs in [(["--radius", "0.1"], {"radius": 0.1}), ([], {})]:
        code, out, err = cli(["fit", "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", "--loss", "mle",
                              "--out", tmp_path / "f.json", *extra])
        assert code == 0, err
        np.testing.assert_allclose(privpref.fit(x, y, **kwargs).theta, out["theta"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("loss", ["debiased-rr", "mle-rr"])
def test_a_private_loss_on_plain_labels_warns(loss):
    x, y = _data()
    with pytest.warns(PrivacyWarning, match="no local privacy guarantee: the labels carry no provenance") as w:
        f = privpref.fit(x, y, loss=loss, eps=1.0, radius=2)
    assert f.guarantee is None
    assert "RandomizedResponse(eps=1.0).privatize(y)" in str(w[0].message)
    assert f.no_guarantee_reason in str(w[0].message)


def test_no_warning_with_a_guarantee_or_a_clear_label_loss():
    x, y = _data()
    private = privpref.RandomizedResponse(eps=1.0).privatize(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        f = privpref.fit(x, private, loss="debiased-rr", eps=1.0, radius=2)
        privpref.fit(x, y, loss="mle", radius=2)
    assert f.guarantee.eps == 1.0


def test_pl_krr_on_plain_choices_warns():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(100, 3, 2))
    y = rng.integers(0, 3, size=100).astype(np.uint8)
    with pytest.warns(PrivacyWarning, match=r"KaryRR\(eps=1.0, k=3\)"):
        f = privpref.fit_kwise(x, y, loss="pl-krr", eps=1.0, radius=2)
    assert f.guarantee is None


def test_pessimism_over_a_set_the_radius_covers_warns_and_says_vacuous():
    x, y = _data()
    f = privpref.fit(x, y, radius=2)
    states = np.random.default_rng(2).normal(size=(20, 4, 3))
    # M = λI, θ̂ in the plane: the ellipsoid holds Θ_B once Γ ≥ √λ (B + ‖θ̂‖).
    cover = np.sqrt(0.5) * (2 + np.linalg.norm(f.theta))
    with pytest.warns(PrivacyWarning, match="pessimism is vacuous"):
        p = privpref.pessimistic_policy(f, states, lam=0.5, confidence_radius=100.0)
    assert p.report["vacuous"] is True
    assert abs(p.report["covering_radius"] - cover) <= 1e-9 * cover
    assert p.upper_bound <= 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        q = privpref.pessimistic_policy(f, states, lam=0.5, confidence_radius=0.2)
    assert q.report["vacuous"] is False
