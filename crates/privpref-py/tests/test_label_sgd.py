"""Label-private SGD (Ghazi et al. (2021)) from Python: the same bits as
``privpref fit --solver sgd --label-mechanism ...`` on the same .npy files and --seed, the
guarantee, the released labels' flip rate against the K-RR closed form, and every validation
path."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

import privpref
from privpref.errors import DataError, DtypeError, ParameterError, ShapeError

REPO = pathlib.Path(__file__).resolve().parents[3]
CLI = pathlib.Path(os.environ.get("PRIVPREF_CLI", REPO / "target" / "release" / "privpref"))
needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"privpref CLI not built at {CLI}")

N, D = 600, 4


def _pairwise(n=N, d=D, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    theta = np.array([1.0, -0.5, 0.25, 0.0][:d])
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ theta))).astype(np.uint8)
    return x, y


def _public_prior(x):
    """A prior computed from the public features only (a fixed public direction)."""
    p1 = 1.0 / (1.0 + np.exp(-(x @ np.array([0.8, -0.3, 0.0, 0.1]))))
    return np.ascontiguousarray(np.stack([1.0 - p1, p1], axis=1))


def _cli(tmp_path, arrays, args):
    paths = {}
    for name, a in arrays.items():
        p = tmp_path / f"{name}.npy"
        np.save(p, a)
        paths[name] = str(p)
    out = tmp_path / "out.json"
    cmd = [str(CLI), "fit", "--x", paths["x"], "--y", paths["y"], "--solver", "sgd", "--out", str(out)]
    for a in args:
        cmd.append(paths.get(a[1:], a) if a.startswith("@") else a)
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


X, Y = _pairwise()
PRIOR = _public_prior(X)
CLUSTERS = (np.arange(N) % 7).astype(np.int64)

# (python kwargs, CLI arguments, extra arrays). Default constraint theta-b, as the CLI.
CASES = {
    "krr": (
        dict(mechanism="krr", eps=1.0, radius=3.0),
        ["--loss", "mle", "--label-mechanism", "krr", "--eps", "1", "--radius", "3"],
        {},
    ),
    "krr-ball-invsqrt-nodebias-theta0": (
        dict(
            mechanism="krr",
            eps=0.5,
            constraint="ball",
            radius=2.0,
            step="invsqrt:0.3",
            debias=False,
            theta0=np.array([0.1, 0.2, -0.1, 0.0]),
        ),
        ["--loss", "mle", "--label-mechanism", "krr", "--eps", "0.5", "--constraint", "ball", "--radius", "2",
         "--step", "invsqrt:0.3", "--no-debias", "--theta0", "@theta0"],
        {"theta0": np.array([0.1, 0.2, -0.1, 0.0])},
    ),
    "rrtopk-prior": (
        dict(mechanism="rrtopk", eps=1.0, top_k=1, prior=PRIOR, constraint="ball", radius=3.0, lipschitz=5.0),
        ["--loss", "mle", "--label-mechanism", "rrtopk", "--top-k", "1", "--prior", "@prior", "--eps", "1",
         "--constraint", "ball", "--radius", "3", "--lipschitz", "5"],
        {"prior": PRIOR},
    ),
    "rr-prior-public": (
        dict(mechanism="rr-prior", eps=2.0, prior=PRIOR, constraint="ball", radius=3.0),
        ["--loss", "mle", "--label-mechanism", "rr-prior", "--prior", "@prior", "--eps", "2",
         "--constraint", "ball", "--radius", "3"],
        {"prior": PRIOR},
    ),
    "rr-prior-histogram": (
        dict(mechanism="rr-prior", eps=1.0, clusters=CLUSTERS, prior_eps=0.5, constraint="ball", radius=3.0),
        ["--loss", "mle", "--label-mechanism", "rr-prior", "--clusters", "@clusters", "--prior-eps", "0.5",
         "--eps", "1", "--constraint", "ball", "--radius", "3"],
        {"clusters": CLUSTERS},
    ),
    "normal-analytic": (
        dict(mechanism="normal", eps=1.0, delta=1e-5, constraint="ball", radius=3.0),
        ["--loss", "mle", "--label-mechanism", "normal", "--eps", "1", "--delta", "1e-5",
         "--constraint", "ball", "--radius", "3"],
        {},
    ),
    "normal-classic-sensitivity": (
        dict(mechanism="normal", eps=0.5, delta=1e-6, sigma_rule="classic", sensitivity=20.0, radius=3.0,
             step="const:0.01"),
        ["--loss", "mle", "--label-mechanism", "normal", "--eps", "0.5", "--delta", "1e-6", "--sigma-rule",
         "classic", "--sensitivity", "20", "--radius", "3", "--step", "const:0.01"],
        {},
    ),
}


@needs_cli
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_the_cli(tmp_path, name):
    kwargs, args, extra = CASES[name]
    cli = _cli(tmp_path, {"x": X, "y": Y, **extra}, args + ["--seed", "11"])
    fit = privpref.label_private_sgd(X, Y, seed=11, **kwargs)
    assert np.array_equal(fit.theta, np.array(cli["theta"])), (fit.theta, cli["theta"])
    g = fit.guarantee
    assert g.eps == cli["guarantee"]["eps"] and g.delta == cli["guarantee"]["delta"]
    assert g.unit == "item" and g.model == "central" and not g.holds_for_real_data
    assert fit.termination == "completed" and not fit.converged
    assert fit.counts["iterations"] == cli["iterations"] == N
    assert fit.detail["labels"] == 2
    if cli["mean_k"] is None:
        assert fit.detail["mean_k"] is None
    else:
        assert fit.detail["mean_k"] == cli["mean_k"]
    if cli["normal"] is not None:
        assert fit.detail["normal"]["sigma"] == cli["normal"]["sigma"]
        assert fit.detail["normal"]["sensitivity"] == cli["normal"]["sensitivity"]
        assert fit.detail["released"] == []
    else:
        assert len(fit.detail["released"]) == N
    if cli["histogram_prior"] is not None:
        assert fit.detail["histogram_prior"] == cli["histogram_prior"]
        assert g.eps == pytest.approx(1.5)


@needs_cli
def test_multi_stage_same_bits_as_the_cli(tmp_path):
    args = ["--loss", "mle", "--label-mechanism", "rr-prior", "--stages", "3", "--stage-fractions", "0.5,0.3,0.2",
            "--temperature", "0.7", "--reuse", "--eps", "1", "--constraint", "ball", "--radius", "3", "--seed", "5"]
    cli = _cli(tmp_path, {"x": X, "y": Y}, args)
    fit = privpref.multi_stage(
        X, Y, eps=1.0, stages=3, stage_fractions=[0.5, 0.3, 0.2], temperature=0.7, reuse=True,
        constraint="ball", radius=3.0, seed=5,
    )
    assert np.array_equal(fit.theta, np.array(cli["theta"]))
    assert [s["samples"] for s in fit.detail["stages"]] == [s["samples"] for s in cli["stages"]] == [300, 180, 120]
    assert [s["reused"] for s in fit.detail["stages"]] == [s["reused"] for s in cli["stages"]]
    assert fit.guarantee.eps == cli["guarantee"]["eps"] == 1.0
    # The default temperature is the CLI's (1).
    cli2 = _cli(tmp_path, {"x": X, "y": Y}, ["--loss", "mle", "--label-mechanism", "rr-prior", "--stages", "2",
                                             "--eps", "1", "--radius", "3", "--seed", "6"])
    fit2 = privpref.multi_stage(X, Y, eps=1.0, stages=2, radius=3.0, seed=6)
    assert np.array_equal(fit2.theta, np.array(cli2["theta"]))


@needs_cli
def test_softmax_and_kwise_same_bits_as_the_cli(tmp_path):
    rng = np.random.default_rng(3)
    n, d, k = 300, 3, 3
    x = rng.normal(size=(n, d))
    c = rng.integers(0, k, size=n).astype(np.uint8)
    cli = _cli(tmp_path, {"x": x, "y": c}, ["--loss", "softmax", "--k", "3", "--label-mechanism", "krr", "--eps", "1",
                                           "--constraint", "ball", "--radius", "4", "--seed", "2"])
    fit = privpref.label_private_sgd(x, c, loss="softmax", k=3, mechanism="krr", eps=1.0, constraint="ball",
                                     radius=4.0, seed=2)
    assert fit.theta.shape == (k * d,)
    assert np.array_equal(fit.theta, np.array(cli["theta"]))
    g = rng.normal(size=(n, k, d))
    cli = _cli(tmp_path, {"x": g, "y": c}, ["--loss", "pl-top1", "--k", "3", "--label-mechanism", "krr", "--eps",
                                           "1", "--radius", "3", "--seed", "4"])
    fit = privpref.label_private_sgd(g, c, loss="pl-top1", mechanism="krr", eps=1.0, radius=3.0, seed=4)
    assert np.array_equal(fit.theta, np.array(cli["theta"]))


@needs_cli
def test_float32_features_are_widened_as_the_cli_does(tmp_path):
    x32 = X.astype(np.float32)
    cli = _cli(tmp_path, {"x": x32, "y": Y}, ["--loss", "mle", "--label-mechanism", "krr", "--eps", "1", "--radius",
                                             "3", "--seed", "9"])
    fit = privpref.label_private_sgd(x32, Y, mechanism="krr", eps=1.0, radius=3.0, seed=9)
    assert np.array_equal(fit.theta, np.array(cli["theta"]))
    # A Fortran-order view is copied to C order: same answer.
    fit_f = privpref.label_private_sgd(np.asfortranarray(x32), Y.astype(bool), mechanism="krr", eps=1.0,
                                       radius=3.0, seed=9)
    assert np.array_equal(fit.theta, fit_f.theta)


def test_seeds_reproduce_and_the_csprng_does_not():
    kw = dict(mechanism="krr", eps=1.0, radius=3.0)
    a = privpref.label_private_sgd(X, Y, seed=1, **kw)
    b = privpref.label_private_sgd(X, Y, seed=1, **kw)
    c = privpref.label_private_sgd(X, Y, seed=2, **kw)
    assert np.array_equal(a.theta, b.theta) and not np.array_equal(a.theta, c.theta)
    s1 = privpref.label_private_sgd(X, Y, **kw)
    s2 = privpref.label_private_sgd(X, Y, **kw)
    assert not np.array_equal(s1.theta, s2.theta)
    assert s1.guarantee.holds_for_real_data and not a.guarantee.holds_for_real_data
    assert a.guarantee.seed == 1 and s1.guarantee.seed is None
    assert not a.theta.flags.writeable


def test_krr_release_flips_at_the_closed_form_rate():
    """Binary K-RR keeps the label with probability e^ε/(e^ε+1); the released labels of a pass
    flip at 1/(e^ε+1) within a binomial 4.5-sigma band."""
    n, eps = 20000, 0.7
    x, y = _pairwise(n=n, seed=4)
    fit = privpref.label_private_sgd(x, y, mechanism="krr", eps=eps, radius=2.0, seed=3)
    rel = fit.detail["released"]
    assert [r["sample"] for r in rel] == list(range(n))
    released = np.array([r["label"] for r in rel])
    assert all(r["set"] is None for r in rel[:10])
    p = 1.0 / (math.exp(eps) + 1.0)
    rate = float(np.mean(released != y))
    assert abs(rate - p) < 4.5 * math.sqrt(p * (1 - p) / n), (rate, p)
    assert fit.detail["mean_k"] == 2.0
    # The estimate points the right way (one pass on 20000 samples).
    truth = np.array([1.0, -0.5, 0.25, 0.0])
    truth = truth - truth.mean()
    cos = fit.theta @ truth / (np.linalg.norm(fit.theta) * np.linalg.norm(truth))
    assert cos > 0.8, cos


def test_normal_guarantee_is_approximate_dp():
    fit = privpref.label_private_sgd(X, Y, mechanism="normal", eps=1.0, delta=1e-5, radius=3.0, seed=0)
    assert fit.guarantee.delta == 1e-5 and fit.guarantee.eps == 1.0
    nr = fit.detail["normal"]
    assert nr["max_realised_sensitivity"] <= nr["sensitivity"]
    assert nr["rank_min"] == nr["rank_max"] == 1  # K = 2: one label-dependent direction
    assert nr["calibration"] == "analytic"


BAD = [
    (dict(mechanism="bogus"), ParameterError),
    (dict(mechanism="rrtopk", prior=PRIOR), ParameterError),  # no top_k
    (dict(mechanism="rr-prior"), ParameterError),  # no prior
    (dict(mechanism="krr", prior=PRIOR), ParameterError),  # takes no prior
    (dict(mechanism="krr", delta=1e-5), ParameterError),
    (dict(mechanism="krr", sigma_rule="classic"), ParameterError),
    (dict(mechanism="krr", top_k=1), ParameterError),
    (dict(mechanism="normal"), ParameterError),  # no delta
    (dict(mechanism="normal", delta=1e-5, sigma_rule="wild"), ParameterError),
    (dict(mechanism="rr-prior", prior=PRIOR, clusters=CLUSTERS), ParameterError),
    (dict(mechanism="rr-prior", clusters=CLUSTERS), ParameterError),  # no prior_eps
    (dict(mechanism="rr-prior", prior=PRIOR, prior_eps=0.5), ParameterError),
    (dict(mechanism="rrtopk", top_k=3, prior=PRIOR), ParameterError),  # k > K
    (dict(mechanism="krr", eps=0.0), ParameterError),
    (dict(mechanism="krr", eps=float("nan")), ParameterError),
    (dict(mechanism="krr", constraint="none", radius=None), ParameterError),  # theory step, unbounded
    (dict(mechanism="krr", step="newton"), ParameterError),
    (dict(mechanism="krr", step="const:-1"), ParameterError),
    (dict(mechanism="krr", lipschitz=-1.0), ParameterError),
    (dict(mechanism="krr", loss="probit"), ParameterError),
    (dict(mechanism="krr", k=3), ParameterError),
    (dict(mechanism="krr", k=-1), ParameterError),
    (dict(mechanism="krr", seed=-1), ParameterError),
    (dict(mechanism="krr", constraint="cube"), ParameterError),
    (dict(mechanism="krr", theta0=np.zeros(3)), ShapeError),
    (dict(mechanism="rr-prior", prior=PRIOR[:10]), ShapeError),
    (dict(mechanism="rr-prior", prior=np.ones((N, 2))), ParameterError),  # rows do not sum to 1
    (dict(mechanism="rr-prior", prior=np.ones((N, 2), dtype=complex) / 2), DtypeError),
    (dict(mechanism="rr-prior", clusters=np.arange(10), prior_eps=0.5), ShapeError),
    (dict(mechanism="rr-prior", clusters=-np.ones(N, dtype=np.int64), prior_eps=0.5), DataError),
    (dict(mechanism="rr-prior", clusters=np.zeros(N), prior_eps=0.5), DtypeError),
    (dict(mechanism="rr-prior", clusters=CLUSTERS, prior_eps=-1.0), ParameterError),
]


@pytest.mark.parametrize("kwargs,exc", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_options(kwargs, exc):
    kw = dict(eps=1.0, radius=3.0)
    kw.update(kwargs)
    with pytest.raises(exc):
        privpref.label_private_sgd(X, Y, **kw)


def test_bad_data():
    kw = dict(mechanism="krr", eps=1.0, radius=3.0)
    with pytest.raises(DataError) as e:
        privpref.label_private_sgd(X, np.where(np.arange(N) == 5, 2, Y), **kw)
    assert e.value.row == 5
    with pytest.raises(DataError):
        privpref.label_private_sgd(X, np.where(np.arange(N) == 5, 300, Y.astype(np.int64)), **kw)
    with pytest.raises(DtypeError):
        privpref.label_private_sgd(X, Y.astype(float), **kw)
    xn = X.copy()
    xn[7, 2] = np.nan
    with pytest.raises(DataError) as e:
        privpref.label_private_sgd(xn, Y, **kw)
    assert (e.value.row, e.value.column) == (7, 2)
    with pytest.raises(ShapeError):
        privpref.label_private_sgd(X, Y[:-1], **kw)
    with pytest.raises(ShapeError):
        privpref.label_private_sgd(X[:, :, None], Y, **kw)  # 3-D features for the binary model
    with pytest.raises(ShapeError):
        privpref.label_private_sgd(X, Y, loss="pl-top1", **kw)  # 2-D features for pl-top1
    with pytest.raises(DataError):  # a class >= K
        privpref.label_private_sgd(X, np.full(N, 3, np.uint8), loss="softmax", k=3, **kw)
    with pytest.raises(ParameterError):  # softmax needs k
        privpref.label_private_sgd(X, Y, loss="softmax", **kw)


def test_multi_stage_validation():
    kw = dict(eps=1.0, radius=3.0)
    with pytest.raises(ParameterError):
        privpref.multi_stage(X, Y, stages=1, **kw)
    with pytest.raises(ParameterError):
        privpref.multi_stage(X, Y, stages=2, stage_fractions=[0.5], **kw)
    with pytest.raises(ParameterError):
        privpref.multi_stage(X, Y, stages=2, stage_fractions=[0.7, 0.7], **kw)
    with pytest.raises(ParameterError):
        privpref.multi_stage(X, Y, stages=2, temperature=0.0, **kw)
    with pytest.raises(ParameterError):
        privpref.multi_stage(X, Y, stages=2, clusters=CLUSTERS, **kw)  # no prior_eps
    fit = privpref.multi_stage(X, Y, stages=2, clusters=CLUSTERS, prior_eps=0.25, seed=1, **kw)
    assert fit.guarantee.eps == pytest.approx(1.25)
    assert len(fit.detail["stages"]) == 2 and len(fit.detail["released"]) == N
