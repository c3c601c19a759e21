"""Memory planned before it is allocated: a computation whose d × d matrices exceed the memory
available raises `MemoryLimitError` (a `MemoryError`) naming the size and the alternative,
before allocating; the O(n + d) solvers fit the same data."""

from __future__ import annotations

import numpy as np
import pytest

import privpref
from privpref.errors import MemoryLimitError


def test_wide_design_is_refused_by_dense_newton_and_fitted_by_newton_cg():
    r = np.random.default_rng(0)
    n, d = 10, 200_000  # a 200000 × 200000 Hessian: 320 GB
    x = r.normal(size=(n, d)) / np.sqrt(d)
    y = (r.random(n) < 0.5).astype(np.uint8)
    with pytest.raises(MemoryLimitError, match=r"200000 × 200000.*TiB.*lbfgs") as e:
        privpref.fit(x, y, loss="mle", radius=2.0, solver="newton")
    assert isinstance(e.value, MemoryError)
    with pytest.raises(MemoryLimitError, match="200000 × 200000"):
        privpref.private_covariance(x, eps=1.0, delta=1e-9, feature_bound=1.0)
    f = privpref.fit(x, y, loss="mle", radius=2.0, solver="newton-cg")
    assert f.converged
