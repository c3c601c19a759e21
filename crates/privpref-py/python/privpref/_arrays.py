"""numpy inputs to the buffers the Rust engine borrows.

Features: a C-contiguous float64 or float32 array in native byte order is passed as it is and
read in place (no copy; float32 stays float32). Anything else is copied once, to float64 (or
float32 if it was float32) in C order: a Fortran-order or non-contiguous view (the engine reads
rows), a byte-swapped array, integer or bool features, float16. Labels: any integer or bool
dtype; values outside 0..255 are a ``DataError`` naming the row. Weights: float64.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .errors import DataError, DtypeError, ShapeError

__all__ = ["features", "labels", "weights", "vector"]


def features(x: Any, ndim: int = 2, name: str = "x") -> np.ndarray:
    """``x`` as a C-contiguous float64/float32 array of ``ndim`` dimensions (no copy when it
    already is one)."""
    a = np.asarray(x)
    if a.ndim != ndim:
        shape = "n × d" if ndim == 2 else "n × K × d"
        raise ShapeError(f"shape error: {name} must be {ndim}-dimensional ({shape}), got shape {a.shape}")
    kind = a.dtype.kind
    if kind == "f" and a.dtype.itemsize in (4, 8):
        target = a.dtype.newbyteorder("=")
    elif kind in "fiub":
        target = np.dtype(np.float64)
    else:
        raise DtypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    if a.dtype == target and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=target)


def labels(y: Any, n: Optional[int] = None, name: str = "y", ndim: int = 1) -> np.ndarray:
    """``y`` as a C-contiguous uint8 array (bool and uint8 arrays are not copied when
    contiguous); values outside 0..255 raise ``DataError``."""
    a = np.asarray(y)
    if a.ndim != ndim:
        raise ShapeError(f"shape error: {name} must be {ndim}-dimensional, got shape {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ShapeError(f"shape error: {name} has {a.shape[0]} rows, x has {n}")
    if a.dtype == np.bool_:
        return np.ascontiguousarray(a).view(np.uint8)
    if a.dtype.kind not in "iu":
        raise DtypeError(f"{name} must be an integer or bool array (labels), got dtype {a.dtype}")
    if a.dtype != np.uint8:
        if a.size:
            bad = (a < 0) | (a > 255)
            if bad.any():
                flat = int(np.flatnonzero(bad.reshape(-1))[0])
                row = flat if ndim == 1 else flat // a.shape[1]
                value = int(a.reshape(-1)[flat])
                err = DataError(
                    f"invalid data in {name} at row {row}: label {value} is out of range (labels must be between 0 and 255)"
                )
                err.input, err.row, err.column, err.kind = name, row, None, "label out of range"
                raise err
        return np.ascontiguousarray(a, dtype=np.uint8)
    return np.ascontiguousarray(a)


def weights(w: Any, n: int, name: str = "weights") -> Optional[np.ndarray]:
    """Optional frequency weights as C-contiguous float64 of length ``n``."""
    if w is None:
        return None
    a = np.asarray(w)
    if a.dtype.kind not in "fiub":
        raise DtypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 1 or a.shape[0] != n:
        raise ShapeError(f"shape error: {name} must have shape ({n},), got {a.shape}")
    return a


def vector(v: Any, d: int, name: str) -> Optional[list]:
    """An optional length-``d`` real vector as a list of floats."""
    if v is None:
        return None
    a = np.asarray(v, dtype=np.float64)
    if a.ndim != 1 or a.shape[0] != d:
        raise ShapeError(f"shape error: {name} must have shape ({d},), got {np.shape(v)}")
    return a.tolist()
