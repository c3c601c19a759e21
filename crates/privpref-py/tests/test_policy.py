"""privpref.pessimistic_policy / greedy_policy against `privpref policy` on the same .npy data
(bit-identical actions, equal values and gaps), against numpy (the greedy policy is an argmax),
and their input validation."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import privpref
from privpref import errors
from privpref._results import Certificate, Fit, Guarantee

REPO = Path(__file__).resolve().parents[3]
CLI = Path(os.environ.get("PRIVPREF_CLI", REPO / "target" / "release" / "privpref"))
needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"privpref CLI not built at {CLI}")

N, D, S, A = 2000, 5, 200, 4
RADIUS = 2.0


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(20250117)
    x = rng.normal(size=(N, D))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]  # ‖x‖ ≤ 1 (central fits: L = 1)
    theta = np.array([1.0, -0.5, 0.25, 0.0, 0.5])
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-3.0 * x @ theta))).astype(np.uint8)
    states = rng.normal(size=(S, A, D)) / np.sqrt(D)
    d = tmp_path_factory.mktemp("policy")
    np.save(d / "X.npy", x)
    np.save(d / "y.npy", y)
    np.save(d / "S.npy", states)
    return {"dir": d, "x": x, "y": y, "states": states}


def cli(*args, code=(0,)):
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    assert p.returncode in code, p.stderr
    return p


def cli_json(path):
    return json.loads(Path(path).read_text())


FIT_ARGS = {
    "mle": (["--loss", "mle"], {"loss": "mle"}),
    "debiased-rr": (["--loss", "debiased-rr", "--eps", "1"], {"loss": "debiased-rr", "eps": 1.0}),
}


def fit_both(data, kind):
    """The CLI fit (its JSON) and the Python fit on the same data, theta checked bit for bit."""
    d = data["dir"]
    cli_args, py_args = FIT_ARGS[kind]
    out = d / f"fit-{kind}.json"
    cli("fit", "--x", d / "X.npy", "--y", d / "y.npy", *cli_args, "--constraint", "ball",
        "--radius", RADIUS, "--out", out)
    c = cli_json(out)
    f = privpref.fit(data["x"], data["y"], constraint="ball", radius=RADIUS, **py_args)
    assert f.converged
    assert np.array_equal(f.theta, np.array(c["theta"])), "the Python fit differs from the CLI's"
    return out, f


COMPARED = ["value", "stochastic_value", "upper_bound", "gap", "rel_gap", "objective_range",
            "termination", "converged", "iterations", "passes", "randomized_states_fw",
            "randomized_states_purified", "rounded_states", "rounding_bound", "greedy_value",
            "greedy_plug_in_value", "theta_min", "lambda", "confidence_radius", "rule",
            "radius_terms", "curvature_gamma", "eta", "radius_multiplier", "set_requested",
            "set_used", "set_radius", "set_fallback", "n_states", "actions_per_state", "d",
            "policy", "eta_switch", "plug_in_value"]


def assert_same(p, c):
    """A Python Policy equals the CLI's policy JSON: the actions bit for bit, every value."""
    assert p.actions.dtype == np.uint32
    assert np.array_equal(p.actions, np.array(c["actions"], dtype=np.uint32))
    for k in COMPARED:
        assert (k in p.report) == (k in c), k
        if k in c:
            assert p.report[k] == c[k], (k, p.report[k], c[k])
    assert p.value == c["value"] and p.lam == c["lambda"]
    assert p.confidence_radius == c["confidence_radius"]
    if c["policy"] == "pessimistic":
        assert (p.gap, p.upper_bound, p.stochastic_value) == (c["gap"], c["upper_bound"], c["stochastic_value"])
        assert p.converged == c["converged"] and p.termination == c["termination"]


@needs_cli
@pytest.mark.parametrize("kind", ["mle", "debiased-rr"])
def test_pessimistic_equals_cli(data, kind):
    d = data["dir"]
    fit_json, f = fit_both(data, kind)
    out = d / f"pol-{kind}.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--x", d / "X.npy", "--out", out, code=(0, 3))
    c = cli_json(out)
    p = privpref.pessimistic_policy(f, data["states"], x=data["x"])
    assert_same(p, c)
    assert p.policy == "pessimistic" and p.guarantee is None and c["guarantee"] is None
    want = "Zhou, Wu & Orabona (2025)"
    assert want in p.rule
    # Sanity of the certificate: value ≤ stochastic value ≤ upper bound (up to rounding).
    assert p.value <= p.upper_bound + 1e-12 and p.gap >= 0
    assert p.greedy_value <= p.upper_bound + 1e-12
    assert "Policy(pessimistic" in repr(p)


@needs_cli
def test_greedy_equals_cli_and_numpy_argmax(data):
    d = data["dir"]
    fit_json, f = fit_both(data, "mle")
    out = d / "pol-greedy.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--x", d / "X.npy", "--greedy", "--out", out)
    c = cli_json(out)
    p = privpref.greedy_policy(f, data["states"], x=data["x"])
    assert_same(p, c)
    scores = data["states"] @ f.theta  # (S, A)
    assert np.array_equal(p.actions, np.argmax(scores, axis=1).astype(np.uint32))
    # The plug-in value ⟨θ̂, mean φ(s, π̂(s))⟩, recomputed.
    plug = scores[np.arange(S), p.actions].mean()
    assert abs(p.plug_in_value - plug) <= 1e-12 * max(1.0, abs(plug))
    assert p.converged and p.termination == "greedy" and p.passes == 1
    assert repr(p).startswith("Policy(greedy, 200 states x 4 actions")


@needs_cli
def test_options_equal_cli(data):
    """Weights, a reference policy, Θ_B and the multipliers reach the library as the CLI's."""
    d = data["dir"]
    fit_json, f = fit_both(data, "mle")
    rng = np.random.default_rng(5)
    w = rng.random(S) + 0.1
    ref = rng.integers(0, A, size=S).astype(np.int64)
    np.save(d / "w.npy", w)
    np.save(d / "ref.npy", ref)
    out = d / "pol-opts.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--x", d / "X.npy", "--weights", d / "w.npy",
        "--reference-actions", d / "ref.npy", "--set", "theta-b", "--radius", 3, "--eta", 0.1,
        "--radius-multiplier", 0.02, "--lambda-multiplier", 2, "--tol", 1e-5, "--out", out, code=(0, 3))
    c = cli_json(out)
    p = privpref.pessimistic_policy(f, data["states"], x=data["x"], weights=w, reference_actions=ref,
                                    set="theta-b", radius=3, eta=0.1, radius_multiplier=0.02,
                                    lambda_multiplier=2, tol=1e-5)
    assert_same(p, c)
    assert p.report["set_requested"] == "theta-b"
    # θ̂ is not sum-zero here: the ellipsoid misses the plane and the set falls back, saying why.
    assert (p.set_used == "theta-b") == (p.set_fallback is None)
    # float32 features: Σ̂ from the widened rows, as the CLI reads a float32 .npy.
    x32 = data["x"].astype(np.float32)
    np.save(d / "X32.npy", x32)
    out = d / "pol-32.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--x", d / "X32.npy", "--greedy",
        "--lambda", 0.01, "--out", out)
    assert_same(privpref.greedy_policy(f, data["states"], x=x32, lam=0.01), cli_json(out))


@needs_cli
def test_explicit_lambda_and_radius_need_no_features(data):
    d = data["dir"]
    fit_json, f = fit_both(data, "mle")
    v = np.full(D, 0.01)
    np.save(d / "v.npy", v)
    out = d / "pol-explicit.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--lambda", 0.5, "--confidence-radius", 0.2,
        "--reference-vector", d / "v.npy", "--out", out, code=(0, 3))
    c = cli_json(out)
    p = privpref.pessimistic_policy(f, data["states"], lam=0.5, confidence_radius=0.2, reference_vector=v)
    assert_same(p, c)
    assert p.rule is None and p.radius_terms == {}


def central_fit(data, mechanism):
    """A central fit by the CLI, as the ``privpref.Fit`` the Python central estimators return
    (the library's serialisation of their detail), and the CLI's JSON."""
    d = data["dir"]
    out = d / f"fit-{mechanism}.json"
    cli("fit", "--x", d / "X.npy", "--y", d / "y.npy", "--loss", "mle", "--central", "--mechanism", mechanism,
        "--constraint", "ball", "--radius", RADIUS, "--eps", 1, "--delta", 1e-8, "--feature-bound", 1,
        "--seed", 3, "--out", out)
    c = cli_json(out)
    config = {"loss": "mle", "constraint": "ball", "radius": RADIUS, "ridge": 0.0, "linear_term": True,
              "solver": c["solver"]}
    if mechanism == "objpert":
        detail = {"config": config, "kkt_tol": c["kkt_tol"], "distance_bound": c["distance_bound"],
                  "noise_std": c["noise_std"], "output_noise_std": c["output_noise_std"], "beta": c["beta"]}
    else:
        detail = {"config": config, "gap_certificate": c["gap_certificate"],
                  "calibration": {"alpha": c["alpha"], "accuracy": c["accuracy"], "lambda": c["lambda"],
                                  "gamma": c["gamma"], "alpha_min": c["alpha_min"]}}
    theta = np.array(c["theta"])
    cert = Certificate(None, None, None, None, None, False, None, False)
    f = Fit(theta=theta, converged=True, termination="converged", solver=c["solver"], certificate=cert,
            counts={}, guarantee=Guarantee._from_dict(c["guarantee"]), no_guarantee_reason=None, refusal=None,
            detail=detail, report={})
    return out, f


@needs_cli
def test_objective_perturbation_rule_equals_cli(data):
    d = data["dir"]
    fit_json, f = central_fit(data, "objpert")
    out = d / "pol-objpert.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--x", d / "X.npy", "--out", out, code=(0, 3))
    c = cli_json(out)
    p = privpref.pessimistic_policy(f, data["states"], x=data["x"])
    assert_same(p, c)
    assert "objective perturbation" in p.rule
    assert p.guarantee == f.guarantee and p.guarantee.eps == 1.0
    assert p.report["guarantee"] == f.guarantee.as_dict()


@needs_cli
def test_private_mle_rule_equals_cli(data):
    d = data["dir"]
    fit_json, f = central_fit(data, "private-mle")
    cov_json = d / "cov.json"
    cli("covariance", "--x", d / "X.npy", "--eps", 1, "--delta", 1e-8, "--feature-bound", 1, "--seed", 4,
        "--out", cov_json)
    cov = cli_json(cov_json)
    sigma = np.array(cov["covariance"])
    out = d / "pol-pmle.json"
    cli("policy", "--theta", fit_json, "--states", d / "S.npy", "--covariance", cov_json, "--greedy", "--out", out)
    c = cli_json(out)
    p = privpref.greedy_policy(f, data["states"], covariance=sigma, n=N)
    assert_same(p, c)
    assert "private MLE" in p.rule and p.guarantee == f.guarantee
    # The JSON dict of `privpref covariance` carries n itself.
    assert_same(privpref.greedy_policy(f, data["states"], covariance=cov), c)
    # A plain matrix without n: the rule cannot be evaluated.
    with pytest.raises(errors.ParameterError, match="sample size"):
        privpref.greedy_policy(f, data["states"], covariance=sigma)
    # The features are private under the private MLE.
    with pytest.raises(errors.ParameterError, match="private"):
        privpref.greedy_policy(f, data["states"], x=data["x"])


def small_fit():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, D))
    y = (rng.random(300) < 1 / (1 + np.exp(-x @ np.ones(D)))).astype(np.uint8)
    return x, privpref.fit(x, y, constraint="ball", radius=RADIUS)


def test_validation():
    x, f = small_fit()
    st = np.random.default_rng(2).normal(size=(20, 3, D))
    with pytest.raises(errors.ShapeError):
        privpref.pessimistic_policy(f, st[:, 0, :], x=x)  # 2-D states
    with pytest.raises(errors.ShapeError):
        privpref.greedy_policy(f, st[..., :3], x=x)  # d mismatch
    with pytest.raises(errors.ShapeError):
        privpref.pessimistic_policy(f, st, x=x[:, :3])
    for eta in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(errors.ParameterError) as e:
            privpref.pessimistic_policy(f, st, x=x, eta=eta)
        assert e.value.name == "eta"
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st)  # the rule needs x
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, radius_multiplier=0.0)
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, tol=-1.0)
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, max_passes=0)
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, set="cube")
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, covariance=np.eye(D))
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, reference_actions=np.zeros(20, np.int64),
                                    reference_vector=np.zeros(D))
    with pytest.raises(errors.DataError) as e:
        privpref.pessimistic_policy(f, st, x=x, reference_actions=np.full(20, 3))
    assert e.value.row == 0
    with pytest.raises(errors.ShapeError):
        privpref.pessimistic_policy(f, st, x=x, reference_actions=np.zeros(19, np.int64))
    with pytest.raises(errors.ShapeError):
        privpref.pessimistic_policy(f, st, x=x, weights=np.ones(19))
    with pytest.raises(errors.DataError):
        privpref.pessimistic_policy(f, st, x=x, weights=-np.ones(20))
    bad = st.copy()
    bad[4, 1, 2] = np.nan
    with pytest.raises(errors.DataError) as e:
        privpref.pessimistic_policy(f, bad, x=x)
    # Named by its three indices (state, action, feature), not a flattened column.
    assert e.value.input == "states" and e.value.row == 4
    assert e.value.action == 1 and e.value.column == 2
    assert "at state 4, action 1, feature 2: feature is NaN" in str(e.value)
    with pytest.raises(errors.DtypeError):
        privpref.pessimistic_policy(f, st.astype(complex), x=x)
    with pytest.raises(errors.ShapeError):
        privpref.greedy_policy(f, st, covariance=np.eye(D + 1), lam=0.1, confidence_radius=0.1)
    with pytest.raises(errors.ParameterError):
        privpref.pessimistic_policy(f, st, x=x, threads=0)
    with pytest.raises(TypeError):
        privpref.pessimistic_policy(f.theta, st, x=x)
    # A fit with no radius rule (probit) needs lam and confidence_radius.
    probit = replace(f, detail={**f.detail, "config": {**f.detail["config"], "loss": "probit"}})
    with pytest.raises(errors.ParameterError, match="no explicit radius rule"):
        privpref.pessimistic_policy(probit, st, x=x)
    p = privpref.pessimistic_policy(probit, st, lam=0.1, confidence_radius=0.1)
    assert p.actions.shape == (20,)


def test_states_read_in_place_and_copied_when_needed():
    x, f = small_fit()
    st = np.random.default_rng(3).normal(size=(30, 3, D))
    p = privpref.greedy_policy(f, st, x=x)
    # Fortran order and float32 are copied to C-order float64: same policy.
    assert np.array_equal(privpref.greedy_policy(f, np.asfortranarray(st), x=x).actions, p.actions)
    p32 = privpref.greedy_policy(f, st.astype(np.float32), x=x)
    assert np.array_equal(p32.actions, np.argmax(st.astype(np.float32).astype(np.float64) @ f.theta, axis=1))
    # A C-contiguous float64 array is handed to the engine as it is (borrowed, not copied).
    from privpref import _arrays

    assert _arrays.features(st, 3, "states") is st
    assert privpref._native._feature_address(st) == st.ctypes.data
    # The policy object is immutable.
    with pytest.raises(Exception):
        p.actions[0] = 1
    with pytest.raises(Exception):
        p.value = 0.0


def test_max_passes_returns_uncertified():
    x, f = small_fit()
    st = np.random.default_rng(4).normal(size=(50, 4, D))
    p = privpref.pessimistic_policy(f, st, x=x, max_passes=1, strict_gap=True, tol=0.0)
    assert not p.converged and not p.certified
    assert p.termination in ("max-passes", "stalled")
    assert p.actions.shape == (50,)
