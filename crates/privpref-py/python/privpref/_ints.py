"""Integer keyword arguments checked before they reach the native module.

The native functions take Rust integers (``usize``/``u64``); a Python int outside their range
(``threads=-1``, ``max_iter=10**30``) would otherwise fail inside PyO3 with a bare
``OverflowError`` that names no parameter. Here it is a ``ParameterError`` naming the
parameter and its allowed range, and a non-integer a ``DtypeError``.
"""

import operator
from typing import Any, Optional

from .errors import DtypeError, ParameterError

#: The largest value of the native ``usize``/``u64`` arguments (64-bit platforms).
U64_MAX = 2**64 - 1
#: The most worker threads ``threads=`` accepts (the native ``MAX_THREADS``, the CLI's limit).
MAX_THREADS = 256


def count(v: Any, name: str, minimum: int = 0, maximum: int = U64_MAX) -> int:
    """``v`` as an int in ``minimum..=maximum``; a ``ParameterError`` naming it otherwise."""
    if isinstance(v, bool):
        raise DtypeError(f"{name} must be an integer, got bool")
    try:
        i = operator.index(v)
    except TypeError:
        raise DtypeError(f"{name} must be an integer, got {type(v).__name__}") from None
    if not minimum <= i <= maximum:
        hi = "2^64 - 1" if maximum == U64_MAX else str(maximum)
        err = ParameterError(f"invalid parameter `{name}`: must be an integer in {minimum}..={hi}, got {i}")
        err.name = name
        raise err
    return i


def opt_count(v: Any, name: str, minimum: int = 0, maximum: int = U64_MAX) -> Optional[int]:
    """``None``, or :func:`count` of ``v``."""
    return None if v is None else count(v, name, minimum, maximum)


def threads(v: Any) -> Optional[int]:
    """``threads=``: ``None`` (one per core) or ``1..=MAX_THREADS``."""
    return opt_count(v, "threads", 1, MAX_THREADS)
