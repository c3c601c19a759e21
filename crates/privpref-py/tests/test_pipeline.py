"""End to end from Python: a central fit or a private MLE with its private covariance, then a
pessimistic policy, each step the same bits as the CLI on the same files and seeds."""

from __future__ import annotations

import numpy as np
import pytest

import privpref
from conftest import btl


def _data(tmp_path):
    x, y, _ = btl(2000, 5, seed=31)
    x /= np.max(np.linalg.norm(x, axis=1))  # ‖x‖ ≤ 1 = 2L with L = 0.5
    states = np.random.default_rng(32).normal(size=(200, 4, 5)) / 3.0
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "s.npy", states)
    return x, y, states


def test_objective_perturbation_then_pessimism_matches_the_cli(cli, tmp_path):
    x, y, states = _data(tmp_path)
    fit = privpref.objective_perturbation(
        x, y, eps=1.0, delta=1e-5, feature_bound=0.5, constraint="ball", radius=1.0, seed=5
    )
    assert fit.guarantee.model == "central" and fit.guarantee.holds_for_real_data is False
    code, cfit, err = cli(
        ["fit", "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", "--loss", "mle", "--central", "--eps", 1,
         "--delta", 1e-5, "--feature-bound", 0.5, "--constraint", "ball", "--radius", 1, "--seed", 5,
         "--out", tmp_path / "fit.json"]
    )
    assert code == 0, err
    assert np.array_equal(fit.theta, np.array(cfit["theta"]))
    pol = privpref.pessimistic_policy(fit, states, x=x)
    code, cpol, err = cli(
        ["policy", "--theta", tmp_path / "fit.json", "--states", tmp_path / "s.npy", "--x", tmp_path / "x.npy",
         "--out", tmp_path / "pol.json"]
    )
    assert cpol is not None, err
    assert np.array_equal(pol.actions, np.array(cpol["actions"], dtype=np.uint32))
    assert (pol.value, pol.gap, pol.rule) == (cpol["value"], cpol["gap"], cpol["rule"])
    assert pol.guarantee == fit.guarantee


def test_private_mle_with_its_private_covariance(cli, tmp_path):
    x, y, states = _data(tmp_path)
    fit = privpref.private_mle(x, y, eps=1.0, delta=1e-9, feature_bound=0.5, constraint="ball", radius=1.0, seed=6)
    cov = privpref.private_covariance(x, eps=1.0, delta=1e-9, feature_bound=0.5, seed=7)
    assert cov.matrix.shape == (5, 5) and cov.guarantee.model == "central"
    pol = privpref.pessimistic_policy(fit, states, covariance=cov)
    greedy = privpref.greedy_policy(fit, states, covariance=cov)
    assert np.array_equal(greedy.actions, np.argmax(states @ fit.theta, axis=1).astype(np.uint32))
    assert isinstance(pol.rule, str) and pol.rule
    code, _, err = cli(
        ["covariance", "--x", tmp_path / "x.npy", "--eps", 1, "--delta", 1e-9, "--feature-bound", 0.5, "--seed", 7,
         "--out", tmp_path / "cov.json"]
    )
    assert code == 0, err
    code, cfit, err = cli(
        ["fit", "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", "--loss", "mle", "--central", "--mechanism",
         "private-mle", "--eps", 1, "--delta", 1e-9, "--feature-bound", 0.5, "--constraint", "ball", "--radius", 1,
         "--seed", 6, "--out", tmp_path / "fit.json"]
    )
    assert code == 0, err
    code, cpol, err = cli(
        ["policy", "--theta", tmp_path / "fit.json", "--states", tmp_path / "s.npy", "--covariance",
         tmp_path / "cov.json", "--out", tmp_path / "pol.json"]
    )
    assert cpol is not None, err
    assert np.array_equal(pol.actions, np.array(cpol["actions"], dtype=np.uint32))
    assert (pol.value, pol.gap) == (cpol["value"], cpol["gap"])
    with pytest.raises(privpref.errors.ParameterError):
        privpref.pessimistic_policy(fit, states, x=x)  # the features are private here
