"""Label randomisers. Each ``privatize`` returns ``PrivatizedLabels``: the randomised labels
with their provenance (mechanism, ε, K, generator), which the fits read to attach a guarantee.

Noise: ``seed=None`` (the default) draws from the OS-seeded ChaCha20 CSPRNG — the only choice
for real data. An integer ``seed`` uses the seeded simulation generator; the labels are then
marked "simulation only" and their guarantee says ``holds_for_real_data=False``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence

import numpy as np

from . import _arrays, _native
from ._results import Guarantee

__all__ = [
    "PrivatizedLabels",
    "RandomizedResponse",
    "KaryRR",
    "RRTopK",
    "RRWithPrior",
    "UserLevelRR",
]


class PrivatizedLabels:
    """Labels released by a mechanism, with their provenance.

    ``labels`` is a read-only uint8 array; ``provenance`` a dict (mechanism, eps, k, generator,
    origin); ``guarantee`` the local guarantee the labels carry. Pass the object itself as ``y``
    to ``fit`` / ``fit_kwise`` and the fit carries that guarantee.
    """

    __slots__ = ("_native", "chosen_k")

    def __init__(self, native: Any, chosen_k: Optional[np.ndarray] = None) -> None:
        self._native = native
        self.chosen_k = chosen_k

    @classmethod
    def asserted(
        cls,
        y: Any,
        mechanism: str,
        eps: float,
        *,
        k: Optional[int] = None,
        num_labels: Optional[int] = None,
        counts: Optional[Sequence[int]] = None,
    ) -> "PrivatizedLabels":
        """Labels randomised elsewhere, on the caller's word: ``mechanism`` is ``rr``, ``krr``
        (needs ``k``), ``rrtopk`` (``k`` and ``num_labels``), ``rr-prior`` (``num_labels``) or
        ``user-rr`` (``counts``), the names of the provenance. The guarantee says "asserted by
        the caller"."""
        ya = _arrays.labels(y)
        cnt = None if counts is None else [int(c) for c in counts]
        return cls(_native.asserted_labels(ya, mechanism, float(eps), k, num_labels, cnt))

    @property
    def labels(self) -> np.ndarray:
        return self._native.labels

    @property
    def provenance(self) -> Dict[str, Any]:
        return json.loads(self._native.provenance_json)

    @property
    def guarantee(self) -> Guarantee:
        g = Guarantee._from_dict(json.loads(self._native.guarantee_json))
        assert g is not None
        return g

    @property
    def eps(self) -> float:
        return self.guarantee.eps

    def __len__(self) -> int:
        return len(self._native)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.labels
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        p = self.provenance
        return f"PrivatizedLabels(n={len(self)}, {self.guarantee}, origin={p.get('origin')})"


def _seed(seed: Optional[int]) -> Optional[int]:
    from . import _ints

    return _ints.opt_count(seed, "seed")


class RandomizedResponse:
    """Binary randomized response at ``eps``: each label kept with probability
    ``σ(ε) = e^ε / (1 + e^ε)``, flipped otherwise (Chowdhury, Zhou & Natarajan (2024), eq. 2).
    Pure ε-label-LDP per comparison."""

    def __init__(self, eps: float) -> None:
        self.eps = float(eps)

    def privatize(self, y: Any, *, seed: Optional[int] = None) -> PrivatizedLabels:
        """Randomise each label of ``y`` (0/1, any integer or bool dtype) once."""
        return PrivatizedLabels(_native.privatize_rr(_arrays.labels(y), self.eps, _seed(seed)))

    def __repr__(self) -> str:
        return f"RandomizedResponse(eps={self.eps:g})"


class KaryRR:
    """K-ary randomized response at ``eps`` over ``k`` labels: the true label with probability
    ``e^ε / (e^ε + k − 1)``, each other one with ``1 / (e^ε + k − 1)``."""

    def __init__(self, eps: float, k: int) -> None:
        self.eps, self.k = float(eps), int(k)

    def privatize(self, y: Any, *, seed: Optional[int] = None) -> PrivatizedLabels:
        return PrivatizedLabels(_native.privatize_krr(_arrays.labels(y), self.eps, self.k, _seed(seed)))

    def __repr__(self) -> str:
        return f"KaryRR(eps={self.eps:g}, k={self.k})"


class RRTopK:
    """RRTop-k (Ghazi et al. (2021)): randomized response over the ``k`` labels of largest
    prior mass; a label outside them is replaced by a uniform draw from them. ``priors`` is
    (n, K), one prior per sample that must not depend on the sample's own label."""

    def __init__(self, eps: float, k: int) -> None:
        self.eps, self.k = float(eps), int(k)

    def privatize(self, y: Any, priors: Any, *, seed: Optional[int] = None) -> PrivatizedLabels:
        p = np.ascontiguousarray(priors, dtype=np.float64)
        return PrivatizedLabels(_native.privatize_rr_top_k(_arrays.labels(y), self.eps, self.k, p, _seed(seed)))

    def __repr__(self) -> str:
        return f"RRTopK(eps={self.eps:g}, k={self.k})"


class RRWithPrior:
    """RR-with-prior (Ghazi et al. (2021), Alg. 2): RRTop-k* with the per-sample k* that
    maximises the probability of reporting the true label under the prior. ``chosen_k`` of the
    result holds each sample's k*."""

    def __init__(self, eps: float) -> None:
        self.eps = float(eps)

    def privatize(self, y: Any, priors: Any, *, seed: Optional[int] = None) -> PrivatizedLabels:
        p = np.ascontiguousarray(priors, dtype=np.float64)
        native, ks = _native.privatize_rr_with_prior(_arrays.labels(y), self.eps, p, _seed(seed))
        return PrivatizedLabels(native, np.asarray(ks, dtype=np.int64))

    def __repr__(self) -> str:
        return f"RRWithPrior(eps={self.eps:g})"


class UserLevelRR:
    """User-level randomized response with user budget ``eps`` (Zhang et al. (2025), Sec. 4.1):
    user u's ``m_u`` labels (consecutive rows, ``counts[u] = m_u``) each through binary RR at
    ``ε / m_u``, so that all of one user's labels together are ε-DP."""

    def __init__(self, eps: float) -> None:
        self.eps = float(eps)

    def privatize(self, y: Any, counts: Sequence[int], *, seed: Optional[int] = None) -> PrivatizedLabels:
        cnt = [int(c) for c in np.asarray(counts).reshape(-1)]
        return PrivatizedLabels(_native.privatize_user_rr(_arrays.labels(y), cnt, self.eps, _seed(seed)))

    def __repr__(self) -> str:
        return f"UserLevelRR(eps={self.eps:g})"
