"""Label randomisers. Each ``privatize`` returns ``PrivatizedLabels``: the randomised labels
with their provenance (mechanism, ε, K, generator), which the fits read to attach a guarantee.

Noise: ``seed=None`` (the default) draws from the OS-seeded ChaCha20 CSPRNG — the only choice
for real data. An integer ``seed`` uses the seeded simulation generator; the labels are then
marked "simulation only" and their guarantee says ``holds_for_real_data=False``.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _native
from ._results import Guarantee

__all__ = [
    "PrivatizedLabels",
    "SigningKey",
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

    def save(self, path: Union[str, os.PathLike], signing_key: "SigningKey") -> Path:
        """Writes the labels to ``path`` (``.npy``, uint8) and their provenance record, signed
        with ``signing_key``, to ``path + ".provenance.json"`` — the files ``privpref
        privatize`` writes, which ``privpref fit`` and :meth:`load` verify. Only labels a
        privpref mechanism privatised can be recorded (``ParameterError`` otherwise). Neither
        file may exist already. Returns the side-car's path."""
        path = Path(path)
        sidecar = Path(str(path) + ".provenance.json")
        for p in (path, sidecar):
            if p.exists():
                raise FileExistsError(f"{p}: exists; save never replaces a file")
        with open(path, "xb") as f:
            np.save(f, np.ascontiguousarray(self.labels, dtype=np.uint8), allow_pickle=False)
        try:
            record = _native.sign_record(self._native, path.read_bytes(), path.name, signing_key._native)
            with open(sidecar, "x", encoding="utf-8") as f:
                f.write(record)
        except BaseException:
            path.unlink()
            raise
        return sidecar

    @classmethod
    def load(
        cls,
        path: Union[str, os.PathLike],
        *,
        trusted_keys: Sequence[Union[str, os.PathLike]] = (),
        sidecar: Optional[Union[str, os.PathLike]] = None,
    ) -> "PrivatizedLabels":
        """Reads labels written by ``privpref privatize`` or :meth:`save` with their provenance
        record (``path + ".provenance.json"`` unless ``sidecar`` is given), verified against
        ``trusted_keys`` (paths to SPKI PEM public keys, or the PEM text itself).

        A record signed by a trusted key gives the labels its provenance (``origin``
        ``signed-record``, ``verified_by`` the key id). A record edited after it was signed, or
        of another file, is a ``ProvenanceError``. An unsigned record, or one signed by a key
        not in ``trusted_keys``, gives a provenance marked as an unverified record, whose
        guarantee does not hold for real data, with a ``PrivacyWarning``."""
        path = Path(path)
        sidecar = Path(str(path) + ".provenance.json") if sidecar is None else Path(sidecar)
        file_bytes = path.read_bytes()
        y = np.load(path, allow_pickle=False)
        y = _arrays.labels(y)
        record = sidecar.read_text(encoding="utf-8")
        pems = [_pem_text(k) for k in trusted_keys]
        native, how, key = _native.verify_record(y, record, file_bytes, pems)
        if how == "unsigned":
            warnings.warn(
                f"{sidecar} is not signed: the labels' guarantee is marked as an unverified record "
                "and does not hold for real data",
                _privacy_warning(),
                stacklevel=2,
            )
        elif how == "untrusted-key":
            warnings.warn(
                f"{sidecar} is signed by key {key}, which is not among trusted_keys: the labels' "
                "guarantee is marked as an unverified record and does not hold for real data",
                _privacy_warning(),
                stacklevel=2,
            )
        return cls(native)


def _privacy_warning() -> type:
    from .errors import PrivacyWarning

    return PrivacyWarning


def _pem_text(k: Union[str, os.PathLike]) -> str:
    if isinstance(k, str) and k.lstrip().startswith("-----BEGIN"):
        return k
    return Path(k).read_text(encoding="utf-8")


class SigningKey:
    """An Ed25519 secret key that signs provenance records (:meth:`PrivatizedLabels.save`), the
    same keys as ``privpref keygen`` writes (PKCS#8 PEM; the public key is SPKI PEM).

    A valid signature proves that the holder of this key recorded that privpref randomised
    exactly those bytes with those parameters; it cannot prove the key holder honest. Keep the
    secret key private (:meth:`save` writes it with mode 0600, :meth:`load` refuses a key file
    others may read)."""

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    @classmethod
    def generate(cls) -> "SigningKey":
        """A new key from operating-system entropy."""
        return cls(_native.SigningKey.generate())

    @classmethod
    def from_pem(cls, pem: str) -> "SigningKey":
        return cls(_native.SigningKey.from_pem(pem))

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "SigningKey":
        """Reads a secret key file; refused (``PermissionError``) when the group or others may
        read or write it."""
        path = Path(path)
        mode = stat.S_IMODE(path.stat().st_mode)
        if os.name == "posix" and mode & 0o077:
            raise PermissionError(f"{path}: the signing key has mode {mode:04o}; chmod 600 {path}")
        return cls.from_pem(path.read_text(encoding="utf-8"))

    def save(self, directory: Union[str, os.PathLike]) -> Tuple[Path, Path]:
        """Writes ``signing-key.pem`` (mode 0600) and ``signing-key.pub.pem`` into
        ``directory`` (created with mode 0700), never replacing a key; returns both paths."""
        d = Path(directory)
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        secret, public = d / "signing-key.pem", d / "signing-key.pub.pem"
        for p in (secret, public):
            if p.exists():
                raise FileExistsError(f"{p}: a key is already there; save never replaces a key")
        fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self._native.to_pem())
        with open(public, "x", encoding="utf-8") as f:
            f.write(self.public_key_pem)
        return secret, public

    @property
    def public_key_pem(self) -> str:
        return self._native.public_key_pem

    @property
    def key_id(self) -> str:
        return self._native.key_id

    def __repr__(self) -> str:
        return f"SigningKey(key_id={self.key_id})"


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
