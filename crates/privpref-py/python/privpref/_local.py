"""The local estimators: ``fit`` (pairwise) and ``fit_kwise`` (Plackett–Luce)."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from . import _arrays, _ints, _native
from ._results import Fit
from .errors import PrivacyWarning
from .mechanisms import PrivatizedLabels

__all__ = ["fit", "fit_kwise", "fit_dpo"]

# The losses calibrated to randomised labels: fitted on labels without provenance, they carry no
# guarantee, and the user is told (PrivacyWarning).
_PRIVATE_LOSSES = {"mle-rr", "debiased-rr", "probit-rr", "debiased-probit", "pl-krr"}


def _constraint(constraint: Optional[str], radius: Optional[float]) -> str:
    """The default feasible set, as the CLI's: ``theta-b`` when a radius is given, ``none``
    when not; a named constraint as given."""
    if constraint is not None:
        return constraint
    return "theta-b" if radius is not None else "none"


def _warn_no_guarantee(result: Fit, loss: str, eps: Optional[float], k: Optional[int] = None) -> None:
    if result.guarantee is not None or loss not in _PRIVATE_LOSSES:
        return
    how = f"KaryRR(eps={eps}, k={k}).privatize(y)" if k is not None else f"RandomizedResponse(eps={eps}).privatize(y)"
    warnings.warn(
        f"no local privacy guarantee: {result.no_guarantee_reason or 'the labels carry no provenance'}; "
        f"fit the labels {how} returns (randomised once, with their provenance) to get one",
        PrivacyWarning,
        stacklevel=3,
    )


def _labels_or_private(y: Any, n: int, ndim: int = 1):
    if isinstance(y, PrivatizedLabels):
        if len(y) != n:
            from .errors import ShapeError

            raise ShapeError(f"shape error: the privatised labels have {len(y)} rows, x has {n}")
        return None, y._native
    return _arrays.labels(y, n, ndim=ndim), None


def fit(
    x: Any,
    y: Any,
    *,
    loss: str = "mle",
    eps: Optional[float] = None,
    constraint: Optional[str] = None,
    radius: Optional[float] = None,
    weights: Any = None,
    ridge: float = 0.0,
    linear_term: Any = None,
    theta0: Any = None,
    solver: str = "auto",
    tol: float = 1e-10,
    tol_abs: float = 0.0,
    max_iter: int = 100,
    memory: Optional[int] = None,
    polish_iters: Optional[int] = None,
    batch: Optional[int] = None,
    epochs: Optional[int] = None,
    step: Optional[str] = None,
    shuffle: bool = False,
    average: Optional[str] = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> Fit:
    """Fit a linear reward model to pairwise preferences, exactly.

    Minimises ``F(θ) = (1/W) Σ wᵢ ℓ(xᵢᵀθ; yᵢ) + (β/2W)‖θ‖² + (1/W)⟨b, θ⟩`` over the feasible set
    and returns the minimiser with its KKT certificate.

    Parameters
    ----------
    x : array (n, d)
        Feature differences ``φ(s, a¹) − φ(s, a⁰)``. A C-contiguous float64 or float32 array is
        read in place (no copy; float32 stays float32, accumulated in float64); anything else
        (Fortran order, a strided view, integers) is copied once to C-contiguous float64.
    y : array (n,) of int or bool, or PrivatizedLabels
        Labels in {0, 1} (1 = the first action preferred). Labels from a mechanism
        (``RandomizedResponse(eps).privatize(y)``) carry their provenance, and the fit carries
        their guarantee; a loss at another ε is a ``ProvenanceError``. Plain labels carry none:
        with a private loss (``mle-rr``, ``debiased-rr``, ...) the fit then has
        ``guarantee=None`` and a ``PrivacyWarning`` says so.
    loss : {"mle", "mle-rr", "debiased-rr", "probit"}
        The logistic likelihood on clear labels, the noisy-channel likelihood of RR labels
        (non-convex), the debiased RR loss of Chowdhury, Zhou & Natarajan (2024) (convex,
        unbounded below without a norm bound), or the Thurstone (probit) likelihood.
    eps : float
        The ε of the RR losses.
    constraint : {"theta-b", "ball", "sum-zero", "none"}, optional
        The feasible set: ``Θ_B = {Σθ = 0, ‖θ‖ ≤ B}``, ``{‖θ‖ ≤ B}``, ``{Σθ = 0}`` or ℝ^d;
        ``radius`` is ``B``. Default (as the CLI's ``fit``): ``"theta-b"`` when ``radius`` is
        given, ``"none"`` when not — ``radius=2`` alone means ``Θ_B`` with ``B = 2``.
    weights : array (n,), optional
        Frequency weights (weight 2 is the row twice).
    ridge, linear_term : float, array (d,)
        ``β`` and ``b`` of the objective.
    theta0 : array (d,), optional
        Warm start.
    solver : {"auto", "newton", "newton-cg", "lbfgs", "sgd"}
        ``auto`` picks the fastest certified solver for the loss and shape.
    tol, tol_abs, max_iter
        The stopping rule: relative KKT tolerance, absolute tolerance (0: off), and the
        iteration budget in Newton iterations (L-BFGS may take 10 iterations per unit).
    memory, polish_iters
        L-BFGS settings. ``batch``, ``epochs``, ``step``, ``shuffle``, ``average``, ``seed``:
        SGD settings (``step``: ``const:ETA``, ``invt:C``, ``theory``, ``lambda:L``,
        ``statement``). A setting for another solver is a ``ParameterError``.
    threads : int, optional
        Worker threads (default: one per core). Results do not depend on it.
    progress : callable, optional
        Called with a dict — ``solver``, ``iteration``, ``data_passes``, ``objective``,
        ``kkt_residual``, ``elapsed_s`` — about every 50 ms while an exact solver runs (on the
        calling thread, holding the GIL), and once with the last progress when it ends. An
        exception it raises stops the solver and is raised. Not called for ``solver="sgd"``.
        Results do not depend on it.

    Returns
    -------
    Fit
        ``theta``, ``converged``, ``certificate``, ``counts`` and ``guarantee``. A fit that
        stops without its certificate is returned with ``converged=False``; call
        ``.certified()`` to raise ``NotConvergedError`` instead.

    The GIL is released while the fit runs; Ctrl-C stops the solver at its next iteration and
    raises ``KeyboardInterrupt``.
    """
    xa = _arrays.features(x, 2)
    n, d = xa.shape
    ya, private = _labels_or_private(y, n)
    out = _native.fit(
        xa,
        ya,
        private,
        _arrays.weights(weights, n),
        loss,
        eps,
        _constraint(constraint, radius),
        radius,
        float(ridge),
        _arrays.vector(linear_term, d, "linear_term"),
        _arrays.vector(theta0, d, "theta0"),
        solver,
        float(tol),
        float(tol_abs),
        _ints.count(max_iter, "max_iter"),
        _ints.opt_count(memory, "memory"),
        _ints.opt_count(polish_iters, "polish_iters"),
        _ints.opt_count(batch, "batch"),
        _ints.opt_count(epochs, "epochs"),
        step,
        bool(shuffle),
        average,
        _ints.opt_count(seed, "seed"),
        _ints.threads(threads),
        progress,
    )
    result = Fit._from_native(out)
    _warn_no_guarantee(result, loss, eps)
    return result


def fit_kwise(
    x: Any,
    y: Any,
    *,
    loss: str = "pl-top1",
    eps: Optional[float] = None,
    top: Optional[int] = None,
    index: Any = None,
    constraint: Optional[str] = None,
    radius: Optional[float] = None,
    weights: Any = None,
    ridge: float = 0.0,
    theta0: Any = None,
    solver: str = "auto",
    tol: float = 1e-10,
    tol_abs: float = 0.0,
    max_iter: int = 100,
    memory: Optional[int] = None,
    polish_iters: Optional[int] = None,
    batch: Optional[int] = None,
    epochs: Optional[int] = None,
    step: Optional[str] = None,
    shuffle: bool = False,
    average: Optional[str] = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
) -> Fit:
    """Fit a Plackett–Luce reward model to K-wise preferences, exactly.

    ``x`` is (n, K, d): the features of each sample's K alternatives (float64; copied once if
    not C-contiguous float64). With ``index`` (n, K) of item numbers, ``x`` is instead the
    (m, d) table of item features (e.g. one embedding per response) and alternative k of
    sample i is item ``index[i, k]``: nothing of size n·K·d is built. ``y`` is (n,) chosen alternatives in 0..K, (n, K) rankings
    (best first), or ``PrivatizedLabels`` from ``KaryRR(eps, K).privatize``.
    ``loss``: ``pl-top1`` (choice MLE), ``pl-ranking`` (full or top-``top`` ranking MLE), or
    ``pl-krr`` (the debiased top-1 loss of K-RR choices at ``eps``; convex, unbounded below
    without a norm bound). Other arguments as in ``fit`` (the same default ``constraint``:
    ``"theta-b"`` with a ``radius``, ``"none"`` without; the same ``PrivacyWarning`` for
    ``pl-krr`` on choices without provenance).
    """
    idx = None
    if index is not None:
        idx = _index(index)
        xa = _arrays.features(x, 2)
        n, k, d = idx.shape[0], idx.shape[1], xa.shape[1]
    else:
        xa = _arrays.features(x, 3)
        n, k, d = xa.shape
    if xa.dtype != np.float64:
        xa = np.ascontiguousarray(xa, dtype=np.float64)
    ndim = 1
    if not isinstance(y, PrivatizedLabels):
        ndim = np.ndim(y)
    ya, private = _labels_or_private(y, n, ndim=ndim if ndim in (1, 2) else 1)
    out = _native.fit_kwise_dense(
        xa,
        idx,
        ya,
        private,
        _arrays.weights(weights, n),
        loss,
        eps,
        top,
        _constraint(constraint, radius),
        radius,
        float(ridge),
        _arrays.vector(theta0, d, "theta0"),
        solver,
        float(tol),
        float(tol_abs),
        _ints.count(max_iter, "max_iter"),
        _ints.opt_count(memory, "memory"),
        _ints.opt_count(polish_iters, "polish_iters"),
        _ints.opt_count(batch, "batch"),
        _ints.opt_count(epochs, "epochs"),
        step,
        bool(shuffle),
        average,
        _ints.opt_count(seed, "seed"),
        _ints.threads(threads),
    )
    result = Fit._from_native(out)
    _warn_no_guarantee(result, loss, eps, k)
    return result


def _index(index: Any) -> np.ndarray:
    """An (n, K) item index as C-contiguous uint32; negative or too large entries are a
    ``DataError``."""
    from .errors import DataError, DtypeError, ShapeError

    a = np.asarray(index)
    if a.ndim != 2:
        raise ShapeError(f"shape error: index must be 2-dimensional (n × K), got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise DtypeError(f"index must be an integer array, got dtype {a.dtype}")
    if a.dtype != np.uint32 and a.size:
        bad = (a < 0) | (a > np.iinfo(np.uint32).max)
        if bad.any():
            i, k = np.argwhere(bad)[0]
            err = DataError(f"invalid data in index at sample {i}, column {k}: item index {a[i, k]} is out of range")
            err.input, err.row, err.column, err.kind = "index", int(i), int(k), "index out of range"
            raise err
    return np.ascontiguousarray(a, dtype=np.uint32)


def fit_dpo(
    x: Any,
    y: Any,
    *,
    eps: Optional[float],
    beta: float,
    theta_sft: Any,
    radius: float,
    threads: Optional[int] = None,
) -> Fit:
    """DPO with a log-linear policy class, by the reduction of Zhou, Wu & Orabona (2025),
    Prop. 4.6.

    Fits loss (14) — the debiased RR loss at ``eps`` (``eps=None``: the clean MLE) — exactly
    over ``Θ_{B'} = {Σθ = 0, ‖θ‖ ≤ B'}`` (``radius`` = B'), which estimates
    ``θ_true = β(θ* − θ_sft)``, and returns the policy parameter ``θ̂' = θ̂/β + θ_sft`` as
    ``theta``; ``detail["theta_true"]`` is ``θ̂``. ``y`` holds the (randomised, possibly
    corrupted) labels as observed, so no guarantee is attached. A fit that does not converge
    raises ``NotConvergedError``.
    """
    xa = _arrays.features(x, 2)
    if xa.dtype != np.float64:
        xa = np.ascontiguousarray(xa, dtype=np.float64)
    n, d = xa.shape
    sft = _arrays.vector(theta_sft, d, "theta_sft")
    return Fit._from_native(
        _native.fit_dpo(xa, _arrays.labels(y, n), eps, float(beta), sft, float(radius), _ints.threads(threads))
    )
