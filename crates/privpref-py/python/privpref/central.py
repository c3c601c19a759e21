"""Central DP: objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2), the private MLE and the private covariance ("Provable protection of human judgements" (anon., 2025), Algorithms 1 and 2).

The estimators see the clear labels (a trusted curator) and release a noisy estimate with an
``(eps, delta)`` central guarantee. They are configured as the CLI's ``privpref fit --central``
and ``privpref covariance`` (same defaults, same checks, same noise draws): the same data and
``seed`` give the same bits.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import numpy as np

from . import _arrays, _ints, _native
from ._results import Fit, Guarantee
from .errors import DtypeError, ParameterError

__all__ = ["objective_perturbation", "private_mle", "private_covariance", "PrivateCovariance"]


def _count(v: Any, name: str, minimum: int = 0) -> int:
    """``v`` as an int in ``minimum..2**64`` (a ``ParameterError`` naming it otherwise)."""
    try:
        i = operator.index(v)
    except TypeError:
        raise DtypeError(f"{name} must be an integer, got {type(v).__name__}") from None
    if not minimum <= i < 2**64:
        err = ParameterError(f"invalid parameter `{name}`: must be an integer in {minimum}..2^64, got {i}")
        err.name = name
        raise err
    return i


def _opt_count(v: Any, name: str, minimum: int = 0) -> Optional[int]:
    return None if v is None else _count(v, name, minimum)


def _opt_float(v: Optional[float]) -> Optional[float]:
    return None if v is None else float(v)


def objective_perturbation(
    x: Any,
    y: Any,
    *,
    eps: float,
    delta: float,
    feature_bound: float,
    beta: Optional[float] = None,
    constraint: str = "none",
    radius: Optional[float] = None,
    horizon: Optional[int] = None,
    kkt_tol: float = 1e-9,
    output_radius: Optional[float] = None,
    output_eps: Optional[float] = None,
    output_delta: Optional[float] = None,
    allow_unguaranteed: bool = False,
    seed: Optional[int] = None,
    tol: float = 1e-10,
    tol_abs: float = 0.0,
    max_iter: int = 100,
    threads: Optional[int] = None,
) -> Fit:
    """Central label-DP reward model by objective perturbation.

    Chowdhury, Zhou & Natarajan (2024), Algorithm 2 (Thm 5.2): draws ``w ~ N(0, s_w² I_d)`` with
    ``s_w = L √(8 ln(2/δ) + 4ε) / ε`` and releases the exact minimiser

    ``θ̂ = argmin_{θ ∈ Θ} (1/n) Σᵢ ℓ(xᵢᵀθ; yᵢ) + (β/2n)‖θ‖² + (1/n)⟨w, θ⟩``

    of the logistic loss ``ℓ`` on the clear labels. The guarantee is ``(eps, delta)``-label DP
    in the central model. It covers the exact minimiser only: the solver (projected Newton)
    certifies the KKT residual ``‖θ − Π(θ − ∇F(θ))‖ ≤ kkt_tol``, and when it cannot the release
    is refused (``GuaranteeRefusedError``), unless ``allow_unguaranteed``.

    Parameters
    ----------
    x : array (n, d)
        Feature differences. C-contiguous float64 or float32 is read in place; anything else is
        copied once. Every row needs ``‖xᵢ‖ ≤ 2L`` (``2HL`` with ``horizon``); a row above is a
        ``DataError`` naming it (rows are never clipped).
    y : array (n,) of int or bool
        Clear labels in {0, 1}.
    eps, delta : float
        The total budget: ``eps > 0``, ``delta ∈ (0, 1)``.
    feature_bound : float
        ``L`` with ``‖φ‖ ≤ L`` (stated a priori, never read from the data). With ``horizon=H``
        it is the per-step bound of trajectory comparisons and the noise is calibrated to
        ``H·L``.
    beta : float, optional
        The ridge ``β > 0`` of ``(β/2n)‖θ‖²``. Default ``√n / B``, the choice of the utility
        bound (Thm 5.3), which needs a bounded set (``constraint="theta-b"`` or ``"ball"`` with
        ``radius=B``); without one ``beta`` must be given.
    constraint : {"none", "theta-b", "ball", "sum-zero"}
        The feasible set ``Θ``; ``radius`` is its norm bound ``B``.
    horizon : int, optional
        Trajectory comparisons of ``H`` steps (default 1: pairwise comparisons).
    kkt_tol : float
        The certified tolerance of the exactness check (default ``1e-9``).
    output_radius, output_eps, output_delta : float, optional
        Output perturbation (all three or none): when the certified distance to the exact
        minimiser is at most ``τ = output_radius``, ``θ̂ + N(0, ν² I)`` with
        ``ν = 2τ √(2 ln(1.25/δ₂)) / ε₂`` is released, and ``(ε₂, δ₂)`` is taken from the total
        ``(eps, delta)``.
    allow_unguaranteed : bool
        Return a refused release with ``guarantee=None`` and ``refusal`` set instead of raising
        ``GuaranteeRefusedError``.
    seed : int, optional
        ``None`` (default): noise from the OS-seeded CSPRNG. An int seeds a simulation
        generator: reproducible, and the guarantee then holds for simulations only.
    tol, tol_abs, max_iter
        The solver's stopping rule (the tolerance is tightened to what ``kkt_tol`` needs).
    threads : int, optional
        Worker threads (default: one per core). Results do not depend on it.

    Returns
    -------
    Fit
        ``theta`` (the release), ``guarantee`` (central), ``refusal`` (``None`` unless refused
        with ``allow_unguaranteed``), and ``detail`` with ``noise_std``, ``beta``, ``kkt_tol``,
        ``distance_bound`` and ``output_noise_std``. Only ``theta`` is covered by the guarantee:
        the certificate, counts and report describe the non-private solve.
    """
    xa = _arrays.features(x, 2)
    n, _ = xa.shape
    ya = _arrays.labels(y, n)
    out = _native.objective_perturbation(
        xa,
        ya,
        float(eps),
        float(delta),
        float(feature_bound),
        _opt_float(beta),
        constraint,
        _opt_float(radius),
        _opt_count(horizon, "horizon"),
        _opt_float(kkt_tol),
        _opt_float(output_radius),
        _opt_float(output_eps),
        _opt_float(output_delta),
        bool(allow_unguaranteed),
        _opt_count(seed, "seed"),
        float(tol),
        float(tol_abs),
        _count(max_iter, "max_iter"),
        _ints.threads(threads),
    )
    return Fit._from_native(out)


def private_mle(
    x: Any,
    y: Any,
    *,
    eps: float,
    delta: float,
    feature_bound: float,
    constraint: str = "ball",
    radius: float,
    horizon: Optional[int] = None,
    eta: float = 0.05,
    alpha: Optional[float] = None,
    accuracy: Optional[float] = None,
    allow_unguaranteed: bool = False,
    seed: Optional[int] = None,
    tol: float = 1e-10,
    tol_abs: float = 0.0,
    max_iter: int = 100,
    threads: Optional[int] = None,
) -> Fit:
    """Central DP reward model by the private MLE (standard DP of the whole record).

    "Provable protection of human judgements" (anon., 2025), Algorithm 1, with corrected
    constants: draws ``b ~ N(0, s_b² I)``, finds ``θ̂ ∈ Θ_B`` with
    ``ℓ̃(θ̂) − min ℓ̃ < β`` for

    ``ℓ̃(θ) = (1/n) Σᵢ ℓ(xᵢᵀθ; yᵢ) + α‖θ‖² + ⟨b, θ⟩/n``

    (certified by a gap bound), and releases ``θ̃ = θ̂ + w``, ``w ~ N(0, ν² I)``,
    ``ν² = 40 β ln(1/δ) / (α ε²)``. The gradient bound is ``G = 2L``, the defaults
    ``α = max(2γλ, 4L²/(εn))`` and ``β = min(1/n, α/(d n²))``. The release spends
    ``(eps/2, delta/2)`` of the pair it forms with ``private_covariance``; its guarantee states
    what it spends. When the gap certificate is not below ``β`` the release is refused
    (``GuaranteeRefusedError``), unless ``allow_unguaranteed``.

    Parameters
    ----------
    x, y
        As in ``objective_perturbation`` (rows need ``‖xᵢ‖ ≤ 2L``).
    eps : float
        ``ε ∈ (0, 1]`` of the pair.
    delta : float
        ``δ ∈ (0, 1/n²]``.
    feature_bound : float
        ``L`` (a priori; with ``horizon=H`` the per-step bound).
    constraint : {"ball", "theta-b"}
        A bounded feasible set (``ball`` is the paper's ``Θ_B``; ``theta-b`` adds ``Σθ = 0``),
        of norm bound ``radius``.
    eta : float
        The failure probability ``η`` of the calibration (default 0.05).
    alpha, accuracy : float, optional
        Overrides of ``α`` (at least its minimum) and of the accuracy ``β ∈ (0, 1/n)``.
    allow_unguaranteed, seed, tol, tol_abs, max_iter, threads
        As in ``objective_perturbation``.

    Returns
    -------
    Fit
        ``theta`` (the release ``θ̃``), ``guarantee`` (central), ``refusal``, and ``detail`` with
        ``calibration`` (``alpha``, ``accuracy``, noise scales, ...) and ``gap_certificate``.
    """
    xa = _arrays.features(x, 2)
    n, _ = xa.shape
    ya = _arrays.labels(y, n)
    out = _native.private_mle(
        xa,
        ya,
        float(eps),
        float(delta),
        float(feature_bound),
        constraint,
        _opt_float(radius),
        _opt_count(horizon, "horizon"),
        _opt_float(eta),
        _opt_float(alpha),
        _opt_float(accuracy),
        bool(allow_unguaranteed),
        _opt_count(seed, "seed"),
        float(tol),
        float(tol_abs),
        _count(max_iter, "max_iter"),
        _ints.threads(threads),
    )
    return Fit._from_native(out)


@dataclass(frozen=True, repr=False)
class PrivateCovariance:
    """A private covariance release (``private_covariance``).

    ``matrix`` is the released symmetric ``d × d`` matrix (after the PSD repair, if any);
    ``noise_std`` the standard deviation ``s_G`` of the i.i.d. entries of the noise ``G`` before
    symmetrisation; ``min_eigenvalue_before_repair`` the smallest eigenvalue of the noisy matrix
    before the repair; ``eigenvalues_floored`` how many eigenvalues the floor raised;
    ``eigen_floor`` the floor (``None``: no repair); ``guarantee`` the ``(eps/2, delta/2)``
    central guarantee."""

    matrix: np.ndarray
    guarantee: Guarantee
    noise_std: float
    min_eigenvalue_before_repair: float
    eigenvalues_floored: int
    eigen_floor: Optional[float]
    n: int
    d: int
    detail: Dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        m = np.array2string(self.matrix, precision=4, threshold=16, max_line_width=100)
        return (
            f"PrivateCovariance(d = {self.d}, n = {self.n}, noise_std = {self.noise_std:.4g},\n"
            f"  min eigenvalue before repair {self.min_eigenvalue_before_repair:.4g}, "
            f"{self.eigenvalues_floored} floored (floor {self.eigen_floor}),\n"
            f"  matrix = {m}\n"
            f"  guarantee: {self.guarantee})"
        )


def private_covariance(
    x: Any,
    *,
    eps: float,
    delta: float,
    feature_bound: float,
    relation: str = "replace-one",
    eigen_floor: float = 0.0,
    repair: bool = True,
    horizon: Optional[int] = None,
    seed: Optional[int] = None,
) -> PrivateCovariance:
    """The private second-moment matrix of the features, by the Gaussian mechanism.

    "Provable protection of human judgements" (anon., 2025), Algorithm 2, with the classic
    Gaussian calibration: releases

    ``Σ̃ = Σ_D + (G + Gᵀ)/2``, ``Σ_D = (1/n) Σᵢ xᵢ xᵢᵀ``, ``G`` with i.i.d. ``N(0, s_G²)``
    entries, ``s_G = Δ_F √(2 ln(1.25/(δ/2))) / (ε/2)``,

    where ``Δ_F`` is the Frobenius sensitivity of ``Σ_D`` for rows with ``‖xᵢ‖ ≤ 2L``:
    ``√2 · 4L²/n`` (replace-one) or ``4L²/n`` (add-remove), with ``H·L`` for ``L`` under
    ``horizon=H``. Eigenvalues below ``eigen_floor`` are then raised to it (post-processing).
    Spends ``(eps/2, delta/2)``; with ``private_mle`` the pair is ``(eps, delta)``-DP.

    Parameters
    ----------
    x : array (n, d)
        Feature differences (float64 read in place; float32 widened into a copy). Every row
        needs ``‖xᵢ‖ ≤ 2L`` (``2HL`` with ``horizon``).
    eps : float
        ``ε ∈ (0, 1]`` of the pair.
    delta : float
        ``δ ∈ (0, 1/n²]``.
    feature_bound : float
        ``L`` (a priori; with ``horizon=H`` the per-step bound).
    relation : {"replace-one", "add-remove"}
        The neighbouring relation of records.
    eigen_floor : float
        The public floor of the PSD repair (default 0).
    repair : bool
        ``False``: release the noisy matrix without the repair.
    horizon : int, optional
        Trajectory comparisons of ``H`` steps (default 1).
    seed : int, optional
        ``None``: the OS-seeded CSPRNG; an int: a seeded simulation generator.

    Returns
    -------
    PrivateCovariance
    """
    xa = _arrays.features(x, 2)
    floor = float(eigen_floor) if repair else None
    matrix, text = _native.private_covariance(
        xa,
        float(eps),
        float(delta),
        float(feature_bound),
        relation,
        floor,
        _opt_count(horizon, "horizon"),
        _opt_count(seed, "seed"),
    )
    d = json.loads(text)
    matrix.setflags(write=False)
    return PrivateCovariance(
        matrix=matrix,
        guarantee=Guarantee._from_dict(d["guarantee"]),
        noise_std=d["noise_std"],
        min_eigenvalue_before_repair=d["min_eigenvalue_before_repair"],
        eigenvalues_floored=d["eigenvalues_floored"],
        eigen_floor=d.get("eigen_floor"),
        n=d["n"],
        d=d["d"],
        detail={k: v for k, v in d.items() if k not in ("guarantee",)},
    )
