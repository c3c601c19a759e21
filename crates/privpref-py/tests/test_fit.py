"""The pairwise and K-wise fits from Python: the same bits as the Rust engine behind the CLI on
every reference fixture, agreement with scikit-learn, threads and dtypes, results."""

from __future__ import annotations

import json

import numpy as np
import pytest

import privpref
from conftest import REPO, btl

FIXTURES = sorted((REPO / "tests" / "data" / "fixtures").glob("*.json"))


def _fixture(path):
    fx = json.loads(path.read_text())
    x = np.array(fx["x"], dtype=np.float64).reshape(fx["n"], fx["d"])
    y = np.array(fx["y"], dtype=np.uint8)
    w = None if fx["weights"] is None else np.array(fx["weights"], dtype=np.float64)
    b = None if fx["linear_term"] is None else np.array(fx["linear_term"], dtype=np.float64)
    return fx, x, y, w, b


def test_there_are_fixtures():
    assert len(FIXTURES) >= 100


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_same_bits_as_the_cli_and_the_reference_answer(path, cli, tmp_path):
    fx, x, y, w, b = _fixture(path)
    kwargs = dict(loss=fx["loss"], eps=fx["eps"], constraint=fx["constraint"], radius=fx["radius"], ridge=fx["ridge"])
    model = privpref.fit(x, y, weights=w, linear_term=b, solver="newton", **kwargs)

    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    args = ["fit", "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", "--loss", fx["loss"], "--constraint", fx["constraint"]]
    if fx["eps"] is not None:
        args += ["--eps", repr(fx["eps"])]
    if fx["radius"] is not None:
        args += ["--radius", repr(fx["radius"])]
    if fx["ridge"]:
        args += ["--ridge", repr(fx["ridge"])]
    if w is not None:
        np.save(tmp_path / "w.npy", w)
        args += ["--weights", tmp_path / "w.npy"]
    if b is not None:
        np.save(tmp_path / "b.npy", b)
        args += ["--linear-term", tmp_path / "b.npy"]
    out = tmp_path / "out.json"
    code, result, err = cli(args + ["--solver", "newton", "--out", out])
    assert result is not None, err
    assert np.array_equal(model.theta, np.array(result["theta"])), "theta differs from the CLI's bits"
    assert model.termination == result["termination"]
    assert model.certificate.kkt_residual == result["kkt_residual"]
    assert model.counts["iterations"] == result["iterations"]

    if fx["expected_status"] == "converged":
        assert model.converged and code == 0
        assert np.max(np.abs(model.theta - np.array(fx["expected_theta"]))) <= 1e-8
        f = fx["expected_objective"]
        assert abs(model.certificate.objective - f) <= 1e-10 * max(abs(f), 1.0)
    else:
        assert model.termination == fx["expected_status"] and not model.converged and code == 3
        with pytest.raises(privpref.errors.NotConvergedError):
            model.certified()


@pytest.mark.parametrize("solver", ["auto", "newton", "lbfgs", "newton-cg"])
def test_unpenalised_mle_agrees_with_scikit_learn(solver):
    sklearn = pytest.importorskip("sklearn.linear_model")
    x, y, _ = btl(3000, 6, seed=1)
    model = privpref.fit(x, y, solver=solver).certified()
    try:
        lr = sklearn.LogisticRegression(C=np.inf, fit_intercept=False, solver="newton-cg", tol=1e-14, max_iter=10_000)
        lr.fit(x, y)
    except (ValueError, TypeError):  # scikit-learn < 1.2 has no C=inf semantics
        lr = sklearn.LogisticRegression(penalty="none", fit_intercept=False, solver="newton-cg", tol=1e-14, max_iter=10_000)
        lr.fit(x, y)
    assert np.max(np.abs(model.theta - lr.coef_[0])) <= 1e-8
    p = model.predict_proba(x)
    assert np.allclose(p, lr.predict_proba(x)[:, 1], atol=1e-9)


def test_thread_count_does_not_change_the_bits():
    x, y, _ = btl(40_000, 20, seed=2)
    fits = [privpref.fit(x, y, solver=s, threads=t).theta for s in ("lbfgs", "newton") for t in (1, 2, 3)]
    for s in range(2):
        for t in range(1, 3):
            assert np.array_equal(fits[3 * s], fits[3 * s + t])


def test_progress_callback_sees_the_run_and_changes_no_bits():
    x, y, _ = btl(40_000, 20, seed=2)
    for solver in ("lbfgs", "newton", "newton-cg"):
        seen = []
        model = privpref.fit(x, y, solver=solver, progress=seen.append)
        assert np.array_equal(model.theta, privpref.fit(x, y, solver=solver).theta)
        assert seen, solver
        last = seen[-1]
        assert set(last) == {"solver", "iteration", "data_passes", "objective", "kkt_residual", "elapsed_s"}
        assert last["solver"] == solver
        assert 0 < last["iteration"] <= model.counts["iterations"]
        assert 0 < last["data_passes"] <= model.counts["data_passes"]
        assert np.isfinite(last["kkt_residual"]) and last["elapsed_s"] >= 0
        iterations = [s["iteration"] for s in seen]
        assert iterations == sorted(iterations)


def test_an_exception_in_the_progress_callback_stops_the_fit():
    x, y, _ = btl(5_000, 10, seed=3)

    def boom(progress):
        raise ValueError(f"stop at iteration {progress['iteration']}")

    with pytest.raises(ValueError, match="stop at iteration"):
        privpref.fit(x, y, solver="lbfgs", progress=boom)


def test_float32_stays_float32_and_fits_as_the_widened_data():
    x, y, _ = btl(5000, 8, seed=3)
    x32 = x.astype(np.float32)
    assert privpref._arrays.features(x32) is x32
    a = privpref.fit(x32, y, solver="lbfgs")
    b = privpref.fit(x32.astype(np.float64), y, solver="lbfgs")
    assert np.array_equal(a.theta, b.theta)


def test_layouts_and_dtypes_give_the_same_answer():
    x, y, _ = btl(2000, 5, seed=4)
    ref = privpref.fit(x, y).theta
    for variant in (np.asfortranarray(x), x[:, ::-1][:, ::-1], x.astype(">f8"), list(map(list, x))):
        assert np.array_equal(privpref.fit(variant, y).theta, ref)
    for yv in (y.astype(bool), y.astype(np.int64), y.astype(np.uint64), list(y)):
        assert np.array_equal(privpref.fit(x, yv).theta, ref)
    xi = np.round(x * 10).astype(np.int32)
    assert np.array_equal(privpref.fit(xi, y).theta, privpref.fit(xi.astype(np.float64), y).theta)


def test_weights_are_frequency_weights():
    x, y, _ = btl(500, 4, seed=5)
    w = np.ones(500)
    w[:100] = 2.0
    a = privpref.fit(x, y, weights=w, solver="newton").theta
    xx = np.vstack([x, x[:100]])
    yy = np.concatenate([y, y[:100]])
    b = privpref.fit(xx, yy, solver="newton").theta
    assert np.max(np.abs(a - b)) <= 1e-12


def test_private_fit_carries_the_labels_guarantee():
    x, y, theta = btl(20_000, 5, seed=6)
    yp = privpref.RandomizedResponse(1.0).privatize(y)
    m = privpref.fit(x, yp, loss="debiased-rr", eps=1.0, constraint="ball", radius=4.0).certified()
    g = m.guarantee
    assert (g.eps, g.delta, g.model, g.unit, g.holds_for_real_data) == (1.0, 0.0, "local", "item", True)
    assert m.detail["provenance"]["mechanism"] == "rr"
    assert np.array_equal(m.theta, privpref.fit(x, yp.labels, loss="debiased-rr", eps=1.0, constraint="ball", radius=4.0).theta)
    raw = privpref.fit(x, yp.labels, loss="debiased-rr", eps=1.0, constraint="ball", radius=4.0)
    assert raw.guarantee is None and "provenance" in raw.no_guarantee_reason
    with pytest.raises(privpref.errors.ProvenanceError):
        privpref.fit(x, yp, loss="debiased-rr", eps=0.5, constraint="ball", radius=4.0)
    # Any fit of the privatised labels is post-processing: the naive MLE keeps the guarantee.
    assert privpref.fit(x, yp, loss="mle").guarantee.eps == 1.0


def test_seeded_privatisation_is_reproducible_and_marked_simulation_only():
    y = np.arange(1000) % 2
    a = privpref.RandomizedResponse(0.5).privatize(y, seed=7)
    b = privpref.RandomizedResponse(0.5).privatize(y, seed=7)
    c = privpref.RandomizedResponse(0.5).privatize(y, seed=8)
    assert np.array_equal(a.labels, b.labels) and not np.array_equal(a.labels, c.labels)
    assert a.guarantee.holds_for_real_data is False and a.guarantee.seed == 7
    assert a.provenance["seed"] == 7
    s = privpref.RandomizedResponse(0.5).privatize(y)
    assert s.guarantee.holds_for_real_data is True and s.guarantee.seed is None


def test_privatised_labels_fit_like_the_cli_with_the_same_seed(cli, tmp_path):
    x, y, _ = btl(3000, 4, seed=9)
    yp = privpref.RandomizedResponse(1.0).privatize(y, seed=11)
    np.save(tmp_path / "y.npy", y)
    code, summary, err = cli(
        ["privatize", "--y", tmp_path / "y.npy", "--mechanism", "rr", "--eps", "1", "--seed", "11", "--out", tmp_path / "yp.npy"],
    )
    assert code == 0, err
    assert np.array_equal(np.load(tmp_path / "yp.npy"), yp.labels)


def test_kwise_fit_same_bits_as_the_cli(cli, tmp_path):
    rng = np.random.default_rng(12)
    n, k, d = 3000, 4, 5
    x = rng.normal(size=(n, k, d))
    theta = rng.normal(size=d)
    u = x @ theta + rng.gumbel(size=(n, k))
    choice = np.argmax(u, axis=1).astype(np.uint8)
    ranking = np.argsort(-u, axis=1).astype(np.uint8)
    np.save(tmp_path / "x.npy", x)
    for loss, y, extra in (("pl-top1", choice, {}), ("pl-ranking", ranking, {}), ("pl-ranking", ranking, {"top": 2})):
        m = privpref.fit_kwise(x, y, loss=loss, solver="newton", **extra).certified()
        np.save(tmp_path / "y.npy", y)
        args = ["fit", "--x", tmp_path / "x.npy", "--y", tmp_path / "y.npy", "--loss", loss, "--constraint", "none", "--solver", "newton", "--k", k]
        if "top" in extra:
            args += ["--top", extra["top"]]
        code, result, err = cli(args + ["--out", tmp_path / "o.json"])
        assert code == 0, err
        assert np.array_equal(m.theta, np.array(result["theta"]))
    yk = privpref.KaryRR(1.0, k).privatize(choice, seed=3)
    m = privpref.fit_kwise(x, yk, loss="pl-krr", eps=1.0, constraint="ball", radius=5.0).certified()
    assert m.guarantee.eps == 1.0 and m.detail["provenance"]["mechanism"] == "krr"


def test_result_objects_read_well():
    x, y, _ = btl(1000, 3, seed=13)
    m = privpref.fit(x, y)
    text = repr(m)
    assert "converged" in text and "KKT residual" in text and "guarantee: none" in text
    assert m.theta.flags.writeable is False and m.theta.dtype == np.float64
    assert set(m.counts) >= {"iterations", "data_passes", "elapsed_s"}
    assert m.certificate.certified_global is True
    assert m.certified() is m
    assert m.detail["config"]["loss"] == "mle"


def test_sgd_returns_an_approximate_result():
    x, y, _ = btl(2000, 3, seed=14)
    m = privpref.fit(x, y, solver="sgd", constraint="ball", radius=2.0, step="const:0.05", epochs=2, seed=1)
    assert m.approximate and not m.converged
    again = privpref.fit(x, y, solver="sgd", constraint="ball", radius=2.0, step="const:0.05", epochs=2, seed=1)
    assert np.array_equal(m.theta, again.theta)


def test_dpo_reduction_is_the_loss_14_fit_shifted():
    x, y, _ = btl(4000, 5, seed=15)
    z = privpref.RandomizedResponse(1.0).privatize(y, seed=2).labels
    sft = np.array([0.1, -0.2, 0.0, 0.05, 0.05])
    d = privpref.fit_dpo(x, z, eps=1.0, beta=0.5, theta_sft=sft, radius=2.0)
    plain = privpref.fit(x, z, loss="debiased-rr", eps=1.0, constraint="theta-b", radius=2.0).certified()
    assert np.array_equal(np.array(d.detail["theta_true"]), plain.theta)
    assert np.array_equal(d.theta, plain.theta / 0.5 + sft)
    assert d.guarantee is None
    with pytest.raises(privpref.errors.ParameterError):
        privpref.fit_dpo(x, z, eps=1.0, beta=0.0, theta_sft=sft, radius=2.0)
    with pytest.raises(privpref.errors.ShapeError):
        privpref.fit_dpo(x, z, eps=1.0, beta=1.0, theta_sft=sft[:3], radius=2.0)


def test_kwise_item_table_gives_the_dense_bits():
    rng = np.random.default_rng(16)
    m, n, k, d = 50, 2000, 3, 4
    items = rng.normal(size=(m, d))
    index = rng.integers(0, m, size=(n, k))
    dense = items[index]
    theta = rng.normal(size=d)
    choice = np.argmax(dense @ theta + rng.gumbel(size=(n, k)), axis=1)
    a = privpref.fit_kwise(items, choice, index=index, solver="newton").certified()
    b = privpref.fit_kwise(dense, choice, solver="newton").certified()
    assert np.array_equal(a.theta, b.theta)
    bad = index.copy()
    bad[7, 1] = m
    with pytest.raises(privpref.errors.DataError) as e:
        privpref.fit_kwise(items, choice, index=bad)
    assert e.value.input == "index" and e.value.row == 7
    bad[7, 1] = -1
    with pytest.raises(privpref.errors.DataError):
        privpref.fit_kwise(items, choice, index=bad)
