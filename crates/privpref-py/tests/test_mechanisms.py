"""The label randomisers from Python: the CLI's bits for the same seed, transition frequencies
against the exact probabilities, provenance and guarantees."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privpref
from privpref import errors


def _within(count, n, p, sigmas=5.0):
    """A binomial count within `sigmas` standard deviations of n·p."""
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p)) + 1


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_rr_flips_with_probability_sigma_of_minus_eps(eps):
    n = 200_000
    y = np.arange(n) % 2
    out = privpref.RandomizedResponse(eps).privatize(y, seed=1).labels
    flipped = int(np.sum(out != y))
    assert _within(flipped, n, 1.0 / (1.0 + math.exp(eps)))
    assert out.dtype == np.uint8 and not out.flags.writeable


@pytest.mark.parametrize("k", [2, 3, 7])
def test_krr_transition_probabilities(k):
    eps, n = 1.0, 210_000
    y = np.arange(n) % k
    out = privpref.KaryRR(eps, k).privatize(y, seed=2).labels
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    assert _within(int(np.sum(out == y)), n, keep)
    for j in range(k):
        rows = y == 0
        if j:
            assert _within(int(np.sum(out[rows] == j)), int(rows.sum()), (1 - keep) / (k - 1))


def test_seeded_krr_matches_the_cli(cli, tmp_path):
    y = (np.arange(5000) * 7919) % 5
    np.save(tmp_path / "y.npy", y.astype(np.int64))
    code, _, err = cli(
        ["privatize", "--y", tmp_path / "y.npy", "--mechanism", "krr", "--k", 5, "--eps", 0.7, "--seed", 21, "--out", tmp_path / "o.npy"]
    )
    assert code == 0, err
    ours = privpref.KaryRR(0.7, 5).privatize(y, seed=21)
    assert np.array_equal(np.load(tmp_path / "o.npy"), ours.labels)
    assert ours.provenance["mechanism"] == "krr" and ours.provenance["k"] == 5


def test_rr_top_k_reports_only_top_labels():
    n, K, k = 20_000, 6, 2
    rng = np.random.default_rng(3)
    priors = rng.dirichlet(np.ones(K), size=n)
    y = rng.integers(0, K, size=n)
    out = privpref.RRTopK(1.0, k).privatize(y, priors, seed=4)
    top = np.argsort(-priors, axis=1, kind="stable")[:, :k]
    assert np.all((out.labels[:, None] == top).any(axis=1))
    assert out.guarantee.eps == 1.0


def test_rr_with_prior_chooses_k_per_sample():
    n, K = 5000, 4
    rng = np.random.default_rng(5)
    priors = rng.dirichlet(np.ones(K) * 0.3, size=n)
    y = rng.integers(0, K, size=n)
    out = privpref.RRWithPrior(2.0).privatize(y, priors, seed=6)
    assert out.chosen_k.shape == (n,) and out.chosen_k.min() >= 1 and out.chosen_k.max() <= K
    assert len(out) == n and out.provenance["mechanism"] == "rr-prior"


def test_user_level_rr_spends_eps_over_each_users_labels():
    counts = [1, 4, 10] * 20_000
    n = sum(counts)
    y = np.zeros(n, dtype=np.uint8)
    out = privpref.UserLevelRR(2.0).privatize(y, counts, seed=7).labels
    m = np.repeat(counts, counts)
    for mu in (1, 4, 10):
        rows = m == mu
        assert _within(int(out[rows].sum()), int(rows.sum()), 1.0 / (1.0 + math.exp(2.0 / mu)))
    g = privpref.UserLevelRR(2.0).privatize(y, counts, seed=7).guarantee
    assert (g.eps, g.unit) == (2.0, "user")


def test_asserted_labels_carry_an_asserted_guarantee():
    y = np.array([0, 1, 1, 0, 1])
    a = privpref.PrivatizedLabels.asserted(y, "rr", 0.5)
    assert a.provenance["origin"] == "asserted-by-caller" and a.guarantee.eps == 0.5
    assert np.array_equal(a.labels, y)
    with pytest.raises(errors.ParameterError):
        privpref.PrivatizedLabels.asserted(y, "krr", 0.5)
    with pytest.raises(errors.ParameterError):
        privpref.PrivatizedLabels.asserted(y, "laplace", 0.5)
    assert "PrivatizedLabels(n=5" in repr(a)
