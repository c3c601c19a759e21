"""Central DP from Python: objective perturbation, the private MLE and the private covariance.

Compared bit for bit with the CLI (`privpref fit --central`, `privpref covariance`) on the same
.npy data and seed; the guarantee's fields; the refusal path; input validation."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import privpref
from privpref.errors import (
    DataError,
    DtypeError,
    GuaranteeRefusedError,
    ParameterError,
    PrivprefError,
    ShapeError,
)

REPO = pathlib.Path(__file__).resolve().parents[3]
CLI = pathlib.Path(os.environ.get("PRIVPREF_CLI", REPO / "target" / "release" / "privpref"))
needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"the CLI is not built ({CLI})")

N, D = 200, 3


def _btl(n=N, d=D, seed=1):
    rng = np.random.default_rng(seed)
    theta = np.array([0.8, -0.5, 0.3])[:d]
    x = rng.normal(size=(n, d)) / np.sqrt(d)
    p = 1.0 / (1.0 + np.exp(-x @ theta))
    y = (rng.random(n) < p).astype(np.uint8)
    return x, y


X, Y = _btl()
# L with every row at most 2L (the bound is stated, never read from the data: here the test
# states one that holds).
L = float(np.max(np.linalg.norm(X, axis=1)) / 2 + 0.01)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("central")
    np.save(d / "x.npy", X)
    np.save(d / "x32.npy", X.astype(np.float32))
    np.save(d / "y.npy", Y)
    return d


def cli(*args):
    out = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def cli_fit(files, *extra, x="x.npy"):
    return cli("fit", "--x", files / x, "--y", files / "y.npy", "--loss", "mle", "--central", *extra)


def theta_of(v):
    return np.array(v["theta"], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# objective perturbation
# ---------------------------------------------------------------------------------------------


@needs_cli
@pytest.mark.parametrize("xfile", ["x.npy", "x32.npy"])
def test_objpert_matches_cli_bits(files, xfile):
    v = cli_fit(
        files,
        "--eps", 0.5, "--delta", 1e-4, "--feature-bound", L,
        "--constraint", "theta-b", "--radius", 2, "--seed", 9,
        x=xfile,
    )
    x = np.load(files / xfile)
    f = privpref.objective_perturbation(
        x, Y, eps=0.5, delta=1e-4, feature_bound=L, constraint="theta-b", radius=2, seed=9
    )
    assert isinstance(f, privpref.Fit)
    assert np.array_equal(f.theta, theta_of(v))
    # beta=None is the CLI's default sqrt(n)/B.
    assert f.detail["beta"] == v["beta"] == np.sqrt(N) / 2
    assert f.detail["noise_std"] == v["noise_std"]
    assert f.detail["kkt_tol"] == v["kkt_tol"] == 1e-9
    assert f.guarantee.as_dict() == privpref.Guarantee._from_dict(v["guarantee"]).as_dict()
    assert f.refusal is None and v["refusal"] is None


@needs_cli
def test_objpert_options_match_cli_bits(files):
    # Explicit beta, an unconstrained set, a trajectory horizon and output perturbation.
    step = L / 3
    v = cli_fit(
        files,
        "--eps", 0.9, "--delta", 1e-4, "--feature-bound", step, "--horizon", 3,
        "--constraint", "none", "--beta", 3, "--output-radius", 1e-6,
        "--output-eps", 0.2, "--output-delta", 1e-5, "--seed", 4,
    )
    f = privpref.objective_perturbation(
        X, Y, eps=0.9, delta=1e-4, feature_bound=step, horizon=3, beta=3.0,
        output_radius=1e-6, output_eps=0.2, output_delta=1e-5, seed=4,
    )
    assert np.array_equal(f.theta, theta_of(v))
    assert f.detail["output_noise_std"] == v["output_noise_std"] > 0
    assert f.detail["noise_std"] == v["noise_std"]
    assert f.guarantee.feature_bound == v["guarantee"]["feature_bound"] == 3 * step
    assert "output perturbation" in f.guarantee.mechanism


def test_objpert_guarantee_fields():
    f = privpref.objective_perturbation(X, Y, eps=0.5, delta=1e-4, feature_bound=L, beta=3.0, seed=9)
    g = f.guarantee
    assert (g.eps, g.delta, g.model, g.unit, g.neighbouring) == (0.5, 1e-4, "central", "item", "label-change")
    assert g.seed == 9 and g.holds_for_real_data is False
    assert g.feature_bound == L and g.exactness_tol == 1e-9
    assert f.converged and f.certificate.projected_gradient <= 1e-9
    # The noise scale is s_w = L sqrt(8 ln(2/δ) + 4ε)/ε (Chowdhury, Zhou & Natarajan 2024).
    assert np.isclose(f.detail["noise_std"], L * np.sqrt(8 * np.log(2 / 1e-4) + 4 * 0.5) / 0.5, rtol=1e-14)
    # Reproducible with the seed; without it, the CSPRNG: a different draw, a real guarantee.
    f2 = privpref.objective_perturbation(X, Y, eps=0.5, delta=1e-4, feature_bound=L, beta=3.0, seed=9)
    assert np.array_equal(f.theta, f2.theta)
    f3 = privpref.objective_perturbation(X, Y, eps=0.5, delta=1e-4, feature_bound=L, beta=3.0)
    assert f3.guarantee.holds_for_real_data is True and f3.guarantee.seed is None
    assert not np.array_equal(f.theta, f3.theta)


def test_objpert_is_the_perturbed_minimiser():
    # An independent check of what is released: θ̂ minimises the Algorithm-2 objective with the
    # drawn w, so its gradient (1/n)Σ(σ(xᵀθ) − y)x + (β/n)θ + w/n is ~0. Recover w from the
    # gradient of the data part and check its size against s_w.
    beta = 3.0
    f = privpref.objective_perturbation(X, Y, eps=0.5, delta=1e-4, feature_bound=L, beta=beta, seed=5)
    t = f.theta
    s = 1.0 / (1.0 + np.exp(-X @ t))
    w = -(X.T @ (s - Y) + beta * t)
    sw = f.detail["noise_std"]
    assert np.all(np.abs(w) < 6 * sw) and np.linalg.norm(w) > 0.01 * sw


@needs_cli
def test_objpert_refusal(files):
    kw = dict(eps=1.0, delta=1e-5, feature_bound=L, constraint="theta-b", radius=2, seed=1)
    with pytest.raises(GuaranteeRefusedError) as e:
        privpref.objective_perturbation(X, Y, kkt_tol=1e-300, **kw)
    assert e.value.tolerance == 1e-300 and e.value.achieved > 1e-300
    # A solver stopped after one iteration cannot certify the default tolerance either.
    with pytest.raises(GuaranteeRefusedError):
        privpref.objective_perturbation(X, Y, max_iter=1, **kw)
    f = privpref.objective_perturbation(X, Y, kkt_tol=1e-300, allow_unguaranteed=True, **kw)
    assert f.guarantee is None and "exact minimiser" in f.refusal
    v = cli_fit(
        files, "--eps", 1, "--delta", 1e-5, "--feature-bound", L, "--constraint", "theta-b",
        "--radius", 2, "--seed", 1, "--kkt-tol", 1e-300, "--allow-unguaranteed",
    )
    assert v["guarantee"] is None
    assert np.array_equal(f.theta, theta_of(v))


def test_objpert_row_above_2L_is_named():
    x = X.copy()
    x[17] = 2.5 * L / np.sqrt(D)  # ‖x_17‖ = 2.5 L > 2L
    with pytest.raises(DataError) as e:
        privpref.objective_perturbation(x, Y, eps=1.0, delta=1e-5, feature_bound=L, beta=1.0, seed=0)
    assert e.value.row == 17 and "17" in str(e.value)
    assert np.isclose(e.value.norm, 2.5 * L) and e.value.limit == 2 * L


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(eps=0.0), "eps"),
        (dict(eps=-1.0), "eps"),
        (dict(eps=float("nan")), "eps"),
        (dict(eps=float("inf")), "eps"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(delta=-1e-5), "delta"),
        (dict(feature_bound=0.0), "feature-bound"),
        (dict(feature_bound=-1.0), "feature-bound"),
        (dict(beta=0.0), "beta"),
        (dict(beta=None), "beta"),  # no radius: the default sqrt(n)/B is undefined
        (dict(kkt_tol=0.0), "kkt-tol"),
        (dict(horizon=0), "horizon"),
        (dict(output_radius=1e-6), "output-radius"),
        (dict(output_radius=1e-6, output_eps=2.0, output_delta=1e-6), "output-eps"),
        (dict(output_radius=1e-6, output_eps=0.1, output_delta=1e-3), "output-delta"),
        (dict(constraint="ball"), "radius"),
        (dict(threads=0), "threads"),
        (dict(seed=-1), "seed"),
        (dict(seed=2**64), "seed"),
        (dict(max_iter=-1), "max_iter"),
        (dict(horizon=-2), "horizon"),
    ],
)
def test_objpert_bad_parameters(kw, name):
    args = dict(eps=1.0, delta=1e-5, feature_bound=L, beta=1.0, seed=0)
    args.update(kw)
    with pytest.raises(ParameterError) as e:
        privpref.objective_perturbation(X, Y, **args)
    assert e.value.name == name, e.value


def test_objpert_bad_arrays():
    kw = dict(eps=1.0, delta=1e-5, feature_bound=L, beta=1.0, seed=0)
    with pytest.raises(DtypeError):
        privpref.objective_perturbation(X, Y.astype(np.float64), **kw)
    with pytest.raises(DtypeError):
        privpref.objective_perturbation(X.astype(np.complex128), Y, **kw)
    with pytest.raises(DtypeError):
        privpref.objective_perturbation(X, Y, **{**kw, "seed": 1.5})
    with pytest.raises(ShapeError):
        privpref.objective_perturbation(X[:, 0], Y, **kw)
    with pytest.raises(ShapeError):
        privpref.objective_perturbation(X, Y[:-1], **kw)
    x = X.copy()
    x[3, 1] = np.nan
    with pytest.raises(DataError) as e:
        privpref.objective_perturbation(x, Y, **kw)
    assert e.value.row == 3
    y = Y.copy()
    y[5] = 2
    with pytest.raises(DataError) as e:
        privpref.objective_perturbation(X, y, **kw)
    assert e.value.row == 5
    # A Fortran-order or integer array is copied, with the same result.
    f = privpref.objective_perturbation(X, Y, **kw)
    g = privpref.objective_perturbation(np.asfortranarray(X), Y.astype(np.int64), **kw)
    assert np.array_equal(f.theta, g.theta)


# ---------------------------------------------------------------------------------------------
# private MLE
# ---------------------------------------------------------------------------------------------


@needs_cli
def test_private_mle_matches_cli_bits(files):
    v = cli_fit(
        files, "--mechanism", "private-mle", "--eps", 1, "--delta", 1e-5, "--feature-bound", L,
        "--constraint", "ball", "--radius", 2, "--seed", 3,
    )
    f = privpref.private_mle(X, Y, eps=1.0, delta=1e-5, feature_bound=L, radius=2, seed=3)
    assert np.array_equal(f.theta, theta_of(v))
    c = f.detail["calibration"]
    for k in ("accuracy", "alpha", "alpha_min", "lambda", "gamma", "objective_noise_std", "output_noise_std"):
        assert c[k] == v[k], k
    assert f.detail["gap_certificate"] == v["gap_certificate"] < c["accuracy"]
    g = f.guarantee
    # It spends half of the pair's budget.
    assert (g.eps, g.delta, g.model, g.neighbouring) == (0.5, 5e-6, "central", "replace-record")
    assert g.as_dict() == privpref.Guarantee._from_dict(v["guarantee"]).as_dict()
    # Overrides go through as the CLI's.
    v2 = cli_fit(
        files, "--mechanism", "private-mle", "--eps", 1, "--delta", 1e-5, "--feature-bound", L,
        "--constraint", "theta-b", "--radius", 2, "--seed", 3, "--eta", 0.1, "--alpha", 0.5,
        "--accuracy", 1e-4,
    )
    f2 = privpref.private_mle(
        X, Y, eps=1.0, delta=1e-5, feature_bound=L, constraint="theta-b", radius=2, seed=3,
        eta=0.1, alpha=0.5, accuracy=1e-4,
    )
    assert np.array_equal(f2.theta, theta_of(v2))
    assert f2.detail["calibration"]["alpha"] == 0.5


def test_private_mle_checks():
    kw = dict(eps=1.0, delta=1e-5, feature_bound=L, radius=2, seed=3)
    with pytest.raises(ParameterError):  # δ above 1/n²
        privpref.private_mle(X, Y, **{**kw, "delta": 1e-3})
    with pytest.raises(ParameterError) as e:  # ε ≤ 1 in the paper
        privpref.private_mle(X, Y, **{**kw, "eps": 2.0})
    assert e.value.name == "eps"
    with pytest.raises(ParameterError):
        privpref.private_mle(X, Y, **{**kw, "eps": 0.0})
    with pytest.raises(ParameterError):  # an unbounded set
        privpref.private_mle(X, Y, **{**kw, "constraint": "none", "radius": None})
    x = X.copy()
    x[42] *= 10 * L / np.linalg.norm(x[42])
    with pytest.raises(DataError) as e:
        privpref.private_mle(x, Y, **kw)
    assert e.value.row == 42
    with pytest.raises(TypeError):  # radius is required
        privpref.private_mle(X, Y, eps=1.0, delta=1e-5, feature_bound=L)
    f = privpref.private_mle(X, Y, **{**kw, "accuracy": 1e-300, "allow_unguaranteed": True})
    assert f.guarantee is None and f.refusal
    with pytest.raises(GuaranteeRefusedError):
        privpref.private_mle(X, Y, **{**kw, "accuracy": 1e-300})


# ---------------------------------------------------------------------------------------------
# private covariance
# ---------------------------------------------------------------------------------------------


@needs_cli
@pytest.mark.parametrize(
    "xfile, extra, kw",
    [
        ("x.npy", [], {}),
        ("x32.npy", ["--relation", "add-remove", "--no-repair"], dict(relation="add-remove", repair=False)),
        ("x.npy", ["--eigen-floor", "0.01", "--horizon", "2"], dict(eigen_floor=0.01, horizon=2)),
    ],
)
def test_covariance_matches_cli_bits(files, xfile, extra, kw):
    fb = L / 2 if kw.get("horizon") else L
    v = cli("covariance", "--x", files / xfile, "--eps", 0.5, "--delta", 1e-5, "--feature-bound", fb, "--seed", 7, *extra)
    c = privpref.private_covariance(np.load(files / xfile), eps=0.5, delta=1e-5, feature_bound=fb, seed=7, **kw)
    assert isinstance(c, privpref.PrivateCovariance)
    assert c.matrix.shape == (D, D) and c.matrix.dtype == np.float64
    assert np.array_equal(c.matrix, np.array(v["covariance"]))
    assert c.noise_std == v["noise_std"]
    assert c.min_eigenvalue_before_repair == v["min_eigenvalue_before_repair"]
    assert c.eigenvalues_floored == v["eigenvalues_floored"]
    assert c.eigen_floor == v["eigen_floor"]
    assert c.guarantee.as_dict() == privpref.Guarantee._from_dict(v["guarantee"]).as_dict()
    assert (c.guarantee.eps, c.guarantee.delta, c.guarantee.model) == (0.25, 5e-6, "central")


def test_covariance_closed_form():
    c = privpref.private_covariance(X, eps=0.5, delta=1e-5, feature_bound=L, seed=7, repair=False)
    # s_G = Δ √(2 ln(1.25/(δ/2)))/(ε/2), Δ = √2·4L²/n (replace-one).
    sens = np.sqrt(2) * 4 * L**2 / N
    assert np.isclose(c.noise_std, sens * np.sqrt(2 * np.log(1.25 / 5e-6)) / 0.25, rtol=1e-14)
    assert np.array_equal(c.matrix, c.matrix.T)
    # Σ_D + noise: the noise (the difference from numpy's second moment) is of the size s_G.
    noise = c.matrix - X.T @ X / N
    assert np.max(np.abs(noise)) < 6 * c.noise_std and np.max(np.abs(noise)) > 0
    assert c.eigen_floor is None and c.eigenvalues_floored == 0
    assert np.isclose(c.min_eigenvalue_before_repair, np.linalg.eigvalsh(c.matrix).min(), rtol=1e-10, atol=1e-14)
    # With the repair (default floor 0) the release is PSD.
    r = privpref.private_covariance(X, eps=0.5, delta=1e-5, feature_bound=L, seed=7)
    assert np.linalg.eigvalsh(r.matrix).min() >= -1e-12
    assert "PrivateCovariance" in repr(r)
    with pytest.raises(ValueError):
        r.matrix[0, 0] = 1.0  # read-only


def test_covariance_checks():
    kw = dict(eps=0.5, delta=1e-5, feature_bound=L, seed=1)
    for bad in (dict(eps=0.0), dict(eps=1.5), dict(delta=0.0), dict(delta=1e-3), dict(feature_bound=-1.0),
                dict(relation="label-change"), dict(horizon=0)):
        with pytest.raises(ParameterError):
            privpref.private_covariance(X, **{**kw, **bad})
    x = X.copy()
    x[9] = 3 * L
    with pytest.raises(DataError) as e:
        privpref.private_covariance(x, **kw)
    assert e.value.row == 9
    with pytest.raises(ShapeError):
        privpref.private_covariance(X[0], **kw)
    with pytest.raises(DtypeError):
        privpref.private_covariance(X.astype(str), **kw)


def test_errors_are_privpref_errors():
    with pytest.raises(PrivprefError):
        privpref.objective_perturbation(X, Y, eps=-1.0, delta=1e-5, feature_bound=L, beta=1.0)
