"""The exceptions privpref raises.

Every error of the Rust library arrives as one of these classes, with the library's message.
Bad input is a ``ValueError`` (``DataError``, ``ShapeError``, ``ParameterError``,
``ProvenanceError``); a result that cannot be given is a ``RuntimeError``
(``NotConvergedError``, ``GuaranteeRefusedError``, ``NumericalError``, ``PrivacyError``;
``MemoryLimitError`` is also a ``MemoryError``); an
array of the wrong kind is a ``TypeError`` (``DtypeError``). All derive from ``PrivprefError``.
"""

from __future__ import annotations

__all__ = [
    "PrivprefError",
    "DataError",
    "ShapeError",
    "ParameterError",
    "ProvenanceError",
    "DtypeError",
    "NotConvergedError",
    "GuaranteeRefusedError",
    "NumericalError",
    "PrivacyError",
    "MemoryLimitError",
    "FileError",
    "PrivacyWarning",
]


class PrivprefError(Exception):
    """Base class of every privpref error."""


class DataError(PrivprefError, ValueError):
    """An entry of the input data is invalid (NaN or infinite feature, label out of range,
    negative weight, ...). ``input`` names the array, ``row`` and ``column`` the entry
    (``column`` is ``None`` for a row-level error), ``kind`` says what is wrong. In a 3-D
    array the middle index is ``alternative`` (K-wise features) or ``action`` (the policy's
    ``states``: ``row`` is the state, ``column`` the feature)."""

    input: str
    row: int
    column: "int | None"
    kind: str


class ShapeError(PrivprefError, ValueError):
    """Inputs have inconsistent or empty shapes."""


class ParameterError(PrivprefError, ValueError):
    """A parameter is outside its valid range; ``name`` names it."""

    name: str


class ProvenanceError(PrivprefError, ValueError):
    """The labels' provenance does not fit the estimator (another mechanism, ε or K):
    fitting anyway would attach a guarantee the labels do not have. ``expected`` and
    ``found`` say what."""


class DtypeError(PrivprefError, TypeError):
    """An array has a dtype privpref cannot read (complex, object, strings, or float labels)."""


class NotConvergedError(PrivprefError, RuntimeError):
    """A solver stopped without its KKT certificate (raised by ``Fit.certified()``)."""


class GuaranteeRefusedError(PrivprefError, RuntimeError):
    """A privacy guarantee was refused: the condition its proof needs (an exact minimiser,
    certified by the KKT residual) does not hold. Nothing was released."""


class NumericalError(PrivprefError, RuntimeError):
    """A numerical failure that makes a result meaningless."""


class MemoryLimitError(PrivprefError, RuntimeError, MemoryError):
    """The computation would need more memory than the limit (the memory available to the
    process unless set): nothing was allocated. ``needed`` and ``limit`` are in bytes;
    ``alternative`` says what to do instead (e.g. the L-BFGS solver)."""

    what: str
    needed: int
    limit: int
    alternative: str


class PrivacyError(PrivprefError, RuntimeError):
    """A privacy-accounting or mechanism failure (e.g. OS entropy unavailable)."""


class FileError(PrivprefError, OSError):
    """File input or output failed."""


class PrivacyWarning(UserWarning):
    """A result that runs but is weaker than it may look: labels whose provenance no trusted
    key vouches for (an unsigned record, or one signed by a key not trusted), a fit with a
    private loss that carries no privacy guarantee (labels without provenance), or a pessimistic
    policy whose confidence set covers the whole parameter set (pessimism is vacuous). Silence it
    with ``warnings.simplefilter("ignore", privpref.errors.PrivacyWarning)``."""
