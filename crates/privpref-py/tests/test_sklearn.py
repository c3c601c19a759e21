"""privpref.sklearn: scikit-learn's estimator checks, and the estimators against independent
computations (scikit-learn's LogisticRegression, privpref.fit on the same privatised labels,
numpy recomputations of the predictions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import privpref  # noqa: E402
from privpref import errors  # noqa: E402
from privpref.sklearn import CentralDPRewardModel, LabelDPRewardModel  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

CLI = Path(os.environ.get("PRIVPREF_CLI", Path(__file__).resolve().parents[3] / "target" / "release" / "privpref"))
needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"the privpref CLI is not built at {CLI}")
SK_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2])
HAS_CENTRAL = hasattr(privpref, "objective_perturbation")


def btl_data(n=2000, d=5, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    theta = scale * np.linspace(1.0, -0.5, d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x @ theta))).astype(np.int64)
    return x, y, theta


# ---------------------------------------------------------------------------------------------
# scikit-learn's estimator checks.

ESTIMATORS = [
    LabelDPRewardModel(random_state=0),
    LabelDPRewardModel(eps=None),
]
if HAS_CENTRAL:
    # The checks' data have rows up to ‖x‖ ≈ 145 and the feature bound is stated, never read
    # from the data (a row above 2L is a DataError), so L = 100. At ε = 1 the objective noise
    # s_w ∝ L/ε then swamps the checks' 20 to 200 samples and the accuracy checks fail
    # (check_classifiers_train needs training accuracy > 0.83; check_classifiers_classes, on
    # scikit-learn < 1.6, both classes predicted on 20 samples): ε = 1000 keeps them meaningful.
    ESTIMATORS.append(CentralDPRewardModel(eps=1000.0, feature_bound=100.0, random_state=0))


def _expected_failed(estimator):
    return estimator._expected_failed_checks()


if SK_VERSION >= (1, 6):
    _checks = parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed)
else:  # the estimators' _more_tags carry `_xfail_checks`
    _checks = parametrize_with_checks(ESTIMATORS)


@_checks
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def test_expected_failed_checks_are_minimal():
    """Every expected failure does fail: run each listed check and require an AssertionError
    (so the list cannot silently grow stale)."""
    from sklearn.utils import estimator_checks as ec

    listed = 0
    for est in ESTIMATORS:
        for name in est._expected_failed_checks():
            listed += 1
            fn_name, _, kw = name.partition("(")
            kwargs = dict(p.split("=") for p in kw.rstrip(")").split(",")) if kw else {}
            if fn_name == "check_sample_weights_invariance":  # scikit-learn < 1.6 lists it by name only
                kwargs = {"kind": "zeros"}
            fn = getattr(ec, fn_name)
            with pytest.raises(AssertionError):
                fn(type(est).__name__, clone(est), **kwargs)
    assert listed >= 1


# ---------------------------------------------------------------------------------------------
# Against independent computations.


def test_mle_agrees_with_logistic_regression():
    """eps=None, constraint='none' is LogisticRegression without penalty or intercept."""
    x, y, _ = btl_data()
    m = LabelDPRewardModel(eps=None, constraint="none").fit(x, y)
    assert m.fit_.converged and m.guarantee_ is None
    lr = LogisticRegression(C=np.inf, fit_intercept=False, solver="newton-cg", tol=1e-12, max_iter=10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lr.fit(x, y)
    np.testing.assert_allclose(m.coef_, lr.coef_, rtol=0, atol=1e-8)
    # The same predictions, probabilities and decision values.
    np.testing.assert_allclose(m.predict_proba(x), lr.predict_proba(x), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(m.predict(x), lr.predict(x))


def test_theta_is_privpref_fit_on_the_same_privatised_labels():
    """fit(X, y) with random_state=s randomises y exactly as RandomizedResponse(eps)
    .privatize(y, seed=s) and fits privpref.fit on it: the same bits."""
    x, y, _ = btl_data(seed=1)
    for loss in ("debiased-rr", "mle-rr"):
        m = LabelDPRewardModel(eps=0.7, loss=loss, radius=3.0, random_state=123).fit(x, y)
        yp = privpref.RandomizedResponse(0.7).privatize(y.astype(np.uint8), seed=123)
        ref = privpref.fit(x, yp, loss=loss, eps=0.7, constraint="ball", radius=3.0)
        assert np.array_equal(m.coef_[0], ref.theta)
        assert m.guarantee_ == ref.guarantee
        assert m.guarantee_.eps == 0.7 and not m.guarantee_.holds_for_real_data
        # Passing the privatised labels themselves: no second randomisation, the same fit.
        m2 = LabelDPRewardModel(eps=0.7, loss=loss, radius=3.0).fit(x, yp)
        assert np.array_equal(m2.coef_[0], ref.theta)
        np.testing.assert_array_equal(m2.classes_, [0, 1])


@needs_cli
def test_theta_is_the_cli_fit_on_the_cli_privatised_labels(tmp_path):
    """Independent of the Python bindings: `privpref privatize --seed s` then `privpref fit` on
    the same .npy files give, bit for bit, the estimator's coef_ with random_state=s (and the
    CLI's labels are the estimator's randomised labels)."""
    x, y, _ = btl_data(n=1500, seed=11)
    labels = np.where(y == 1, 7, 3)  # any two labels: 7 (the larger) is class 1
    np.save(tmp_path / "X.npy", x)
    np.save(tmp_path / "y.npy", y.astype(np.uint8))
    for loss, eps, seed in (("debiased-rr", 0.8, 42), ("mle-rr", 2.0, 7)):
        yp = tmp_path / f"yp{seed}.npy"
        subprocess.run(
            [str(CLI), "privatize", "--y", str(tmp_path / "y.npy"), "--mechanism", "rr", "--eps", str(eps),
             "--seed", str(seed), "--out", str(yp)],
            check=True, capture_output=True,
        )
        out = subprocess.run(
            [str(CLI), "fit", "--x", str(tmp_path / "X.npy"), "--y", str(yp), "--loss", loss, "--eps", str(eps),
             "--constraint", "ball", "--radius", "4"],
            check=True, capture_output=True, text=True,
        )
        cli = json.loads(out.stdout)
        m = LabelDPRewardModel(eps=eps, loss=loss, radius=4.0, random_state=seed).fit(x, labels)
        assert np.array_equal(m.coef_[0], np.array(cli["theta"]))
        np.testing.assert_array_equal(m.classes_, [3, 7])
        assert cli["guarantee"]["eps"] == m.guarantee_.eps and not cli["guarantee"]["holds_for_real_data"]


@needs_cli
def test_mle_is_the_cli_fit(tmp_path):
    x, y, _ = btl_data(n=1000, seed=12)
    np.save(tmp_path / "X.npy", x)
    np.save(tmp_path / "y.npy", y.astype(np.uint8))
    out = subprocess.run(
        [str(CLI), "fit", "--x", str(tmp_path / "X.npy"), "--y", str(tmp_path / "y.npy"), "--loss", "mle",
         "--constraint", "ball", "--radius", "5"],
        check=True, capture_output=True, text=True,
    )
    m = LabelDPRewardModel(eps=None).fit(x, y)
    assert np.array_equal(m.coef_[0], np.array(json.loads(out.stdout)["theta"]))


def test_randomized_labels_for_model_selection():
    """cross_val_score slices y into arrays: PrivatizedLabels would be randomised again inside
    fit; randomized_labels=True fits the already-randomised array as it is (asserted guarantee)."""
    from sklearn.model_selection import KFold, cross_val_score

    x, y, _ = btl_data(n=900, seed=15)
    yp = privpref.RandomizedResponse(1.0).privatize(y.astype(np.uint8), seed=3)
    ya = np.asarray(yp.labels)
    m = LabelDPRewardModel(randomized_labels=True).fit(x, ya)
    ref = privpref.fit(x, yp, loss="debiased-rr", eps=1.0, constraint="ball", radius=5.0)
    assert np.array_equal(m.coef_[0], ref.theta)
    assert m.guarantee_.eps == 1.0 and "assert" in str(m.fit_.detail).lower()
    scores = cross_val_score(LabelDPRewardModel(randomized_labels=True), x, ya, cv=KFold(3))
    folds = np.array_split(np.arange(900), 3)
    for k, test in enumerate(folds):
        train = np.setdiff1d(np.arange(900), test)
        f = privpref.fit(x[train], privpref.PrivatizedLabels.asserted(ya[train], "rr", 1.0), loss="debiased-rr",
                         eps=1.0, constraint="ball", radius=5.0)
        assert scores[k] == np.mean((x[test] @ f.theta > 0) == ya[test])
    with pytest.raises(errors.ParameterError, match="eps"):
        LabelDPRewardModel(eps=None, randomized_labels=True).fit(x, ya)


def test_csprng_by_default():
    x, y, _ = btl_data(n=500)
    a = LabelDPRewardModel().fit(x, y)
    b = LabelDPRewardModel().fit(x, y)
    assert a.guarantee_.holds_for_real_data and a.guarantee_.seed is None
    assert not np.array_equal(a.coef_, b.coef_)  # two independent randomisations


def test_random_state_generators_are_seeds():
    x, y, _ = btl_data(n=500)
    a = LabelDPRewardModel(random_state=np.random.RandomState(5)).fit(x, y)
    b = LabelDPRewardModel(random_state=np.random.RandomState(5)).fit(x, y)
    c = LabelDPRewardModel(random_state=np.random.default_rng(5)).fit(x, y)
    assert np.array_equal(a.coef_, b.coef_)
    assert not a.guarantee_.holds_for_real_data and not c.guarantee_.holds_for_real_data


def test_debiased_estimate_is_consistent():
    """Debiasing works: at eps=2, n=20000, θ̂ is close to the truth; the non-private MLE closer."""
    x, y, theta = btl_data(n=20_000, seed=3)
    m = LabelDPRewardModel(eps=2.0, radius=5.0, random_state=0).fit(x, y)
    assert np.linalg.norm(m.coef_[0] - theta) < 0.25
    assert m.fit_.converged


def test_predictions_recomputed():
    x, y, _ = btl_data(n=800, seed=4)
    labels = np.where(y == 1, "first", "second")  # sorted: "first" < "second"
    m = LabelDPRewardModel(random_state=1).fit(x, labels)
    np.testing.assert_array_equal(m.classes_, ["first", "second"])
    t = x @ m.coef_[0]
    p = m.predict_proba(x)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p[:, 1], 1.0 / (1.0 + np.exp(-t)), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.predict_log_proba(x), np.log(p), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(m.decision_function(x), t)
    np.testing.assert_array_equal(m.predict(x), np.where(t > 0, "second", "first"))
    assert m.score(x, labels) == np.mean(m.predict(x) == labels)
    assert m.intercept_.tolist() == [0.0] and m.coef_.shape == (1, 5) and m.n_features_in_ == 5
    # class 1 = "second" (the larger label) means label 0 of y: the fit used y01 = (labels == "second").
    ref = privpref.fit(
        x,
        privpref.RandomizedResponse(1.0).privatize((labels == "second").astype(np.uint8), seed=1),
        loss="debiased-rr",
        eps=1.0,
        constraint="ball",
        radius=5.0,
    )
    assert np.array_equal(m.coef_[0], ref.theta)


def test_sample_weight_is_frequency_weight():
    x, y, _ = btl_data(n=600, seed=5)
    w = np.random.default_rng(0).integers(0, 4, size=600).astype(float)
    m = LabelDPRewardModel(eps=None, constraint="ball", radius=2.0).fit(x, y, sample_weight=w)
    xr, yr = np.repeat(x, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    ref = LabelDPRewardModel(eps=None, constraint="ball", radius=2.0).fit(xr, yr)
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=0, atol=1e-9)


def test_float32_is_read_as_float32():
    x, y, _ = btl_data(n=500, seed=6)
    x32 = x.astype(np.float32)
    m = LabelDPRewardModel(random_state=2).fit(x32, y)
    yp = privpref.RandomizedResponse(1.0).privatize(y.astype(np.uint8), seed=2)
    ref = privpref.fit(x32, yp, loss="debiased-rr", eps=1.0, constraint="ball", radius=5.0)
    assert np.array_equal(m.coef_[0], ref.theta)


def test_unbounded_debiased_loss_warns():
    """Without a norm bound the debiased loss can have no minimiser (small n·ε²): a
    ConvergenceWarning; the default ball gives the certified minimiser."""
    x, y, _ = btl_data(n=100, seed=7)
    with pytest.warns(sklearn.exceptions.ConvergenceWarning, match="no-minimizer"):
        m = LabelDPRewardModel(eps=0.1, constraint="none", random_state=0).fit(x, y)
    assert m.fit_.termination == "no-minimizer"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = LabelDPRewardModel(eps=0.1, random_state=0).fit(x, y)
    assert m.fit_.converged and abs(np.linalg.norm(m.coef_) - 5.0) < 1e-9  # on the ball's boundary


def test_validation_errors():
    x, y, _ = btl_data(n=100)
    with pytest.raises(ValueError, match="binary"):
        LabelDPRewardModel().fit(x, np.arange(100) % 3)
    with pytest.raises(ValueError, match="one class"):
        LabelDPRewardModel().fit(x, np.ones(100))
    with pytest.raises(ValueError, match="Unknown label type"):
        LabelDPRewardModel().fit(x, np.linspace(0, 1, 100))
    with pytest.raises(errors.ParameterError, match="loss"):
        LabelDPRewardModel(loss="mle").fit(x, y)
    with pytest.raises(errors.ParameterError, match="eps"):
        LabelDPRewardModel(eps=-1.0).fit(x, y)
    with pytest.raises(errors.ParameterError, match="random_state"):
        LabelDPRewardModel(random_state=-3).fit(x, y)
    with pytest.raises(errors.ParameterError, match="random_state"):
        LabelDPRewardModel(random_state="seed").fit(x, y)
    with pytest.raises(errors.ParameterError):
        LabelDPRewardModel(constraint="cube").fit(x, y)
    with pytest.raises(errors.ParameterError, match="radius"):
        LabelDPRewardModel(radius=None).fit(x, y)
    with pytest.raises(errors.DataError):
        LabelDPRewardModel(eps=None).fit(x, y, sample_weight=-np.ones(100))
    yp = privpref.RandomizedResponse(1.0).privatize(y.astype(np.uint8), seed=0)
    with pytest.raises(errors.ProvenanceError):
        LabelDPRewardModel(eps=2.0).fit(x, yp)
    with pytest.raises(errors.ParameterError, match="eps"):
        LabelDPRewardModel(eps=None).fit(x, yp)
    with pytest.raises(ValueError, match="rows"):
        LabelDPRewardModel().fit(x[:50], yp)
    with pytest.raises(NotFittedError):
        LabelDPRewardModel().predict(x)
    m = LabelDPRewardModel(random_state=0).fit(x, y)
    with pytest.raises(ValueError, match="features"):
        m.predict(x[:, :3])


def test_import_privpref_does_not_import_sklearn():
    code = "import sys, privpref; assert 'sklearn' not in sys.modules, 'sklearn imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------------------------
# Central DP.

central = pytest.mark.skipif(not HAS_CENTRAL, reason="privpref.objective_perturbation is not in this build")


@central
def test_central_theta_is_objective_perturbation():
    x, y, _ = btl_data(n=2000, seed=8)
    x = x / np.linalg.norm(x, axis=1).max() * 2.0  # ‖x‖ ≤ 2 = 2L
    m = CentralDPRewardModel(eps=1.0, delta=1e-6, radius=3.0, random_state=9).fit(x, y)
    ref = privpref.objective_perturbation(
        x, y.astype(np.uint8), eps=1.0, delta=1e-6, feature_bound=1.0, constraint="ball", radius=3.0, seed=9
    )
    assert np.array_equal(m.coef_[0], ref.theta)
    assert m.guarantee_ == ref.guarantee and m.guarantee_.delta == 1e-6
    assert m.guarantee_.model == "central" and not m.guarantee_.holds_for_real_data
    p = m.predict_proba(x)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-15)


@central
def test_central_feature_bound_is_enforced():
    x, y, _ = btl_data(n=200, seed=8)
    with pytest.raises(errors.DataError):
        CentralDPRewardModel(feature_bound=0.1, random_state=0).fit(x, y)


@central
@needs_cli
def test_central_theta_is_the_cli_central_fit(tmp_path):
    x, y, _ = btl_data(n=1500, seed=13)
    x = x / np.linalg.norm(x, axis=1).max() * 1.5
    np.save(tmp_path / "X.npy", x)
    np.save(tmp_path / "y.npy", y.astype(np.uint8))
    out = subprocess.run(
        [str(CLI), "fit", "--x", str(tmp_path / "X.npy"), "--y", str(tmp_path / "y.npy"), "--loss", "mle",
         "--central", "--eps", "0.5", "--delta", "1e-6", "--feature-bound", "1", "--constraint", "ball",
         "--radius", "4", "--seed", "21"],
        check=True, capture_output=True, text=True,
    )
    cli = json.loads(out.stdout)
    m = CentralDPRewardModel(eps=0.5, delta=1e-6, radius=4.0, random_state=21).fit(x, y)
    assert np.array_equal(m.coef_[0], np.array(cli["theta"]))
    assert cli["guarantee"]["delta"] == 1e-6 and cli["guarantee"]["model"] == m.guarantee_.model == "central"


@central
def test_central_validation_errors():
    x, y, _ = btl_data(n=200, seed=14)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    with pytest.raises(errors.ParameterError, match="beta"):
        CentralDPRewardModel(constraint="none").fit(x, y)  # the default β = √n/B needs a radius
    m = CentralDPRewardModel(constraint="none", beta=10.0, random_state=0).fit(x, y)
    assert m.fit_.detail["beta"] == 10.0
    with pytest.raises(errors.ParameterError, match="delta"):
        CentralDPRewardModel(delta=0.0).fit(x, y)
    with pytest.raises(TypeError):
        CentralDPRewardModel().fit(x, y, sample_weight=np.ones(200))  # weights change the sensitivity
    with pytest.raises(ValueError, match="Only binary"):
        CentralDPRewardModel().fit(x, np.arange(200) % 3)
