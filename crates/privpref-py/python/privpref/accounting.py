"""The accountant of the Poisson-subsampled Gaussian: (ε, δ) of T steps, and the smallest noise multiplier for a target ε.

Two accountants (``accountant=``):

* ``"rdp"`` (default): Rényi DP of the subsampled Gaussian mechanism (Mironov, Talwar & Zhang
  2019), composed over ``T`` steps and converted to ``(ε, δ)`` by the improved conversion
  (Canonne, Kamath & Steinke 2020, Prop. 12) or the classic one (Mironov 2017, Prop. 3),
  minimised over a grid of orders;
* ``"pld"``: the privacy loss distribution, discretised pessimistically (connect-the-dots,
  Doroshenko et al. 2022) and composed by FFT, with the FFT's worst-case rounding added to δ:
  an upper bound on ε that is tighter than RDP (e.g. 0.783 instead of 1.384 at ``q = 0.001``,
  ``σ = 0.8``, ``T = 10 000``, ``δ = 1e-5``). Its replace relations use the antipodal pair, a
  numerical finding, not a proof (``neighbours_proven`` is false for them).

The same accountants as the CLI's ``privpref account`` and ``privpref calibrate``.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, fields
from typing import Any, Optional, Sequence, Union

from . import _native
from .errors import DtypeError, ParameterError

__all__ = ["Accounting", "rdp_epsilon", "calibrate_noise"]


@dataclass(frozen=True)
class Accounting:
    """The privacy of ``steps`` Poisson-subsampled Gaussian steps.

    ``epsilon`` at ``delta``, attained at the Rényi ``order`` where the composed RDP is
    ``rdp_at_order``; ``sampling_rate`` ``q``, ``noise_multiplier`` ``σ`` (noise standard
    deviation over the ℓ₂ sensitivity), ``steps`` ``T``; ``neighbours`` the relation protected
    (``neighbours_proven``: the bound is a theorem for it), ``conversion`` the RDP → (ε, δ)
    conversion. ``target_epsilon`` is the target of ``calibrate_noise`` (``None`` from
    ``rdp_epsilon``); ``orders`` names the order grid (``default``, ``integers:MAX`` or
    ``list``) of ``num_orders`` orders. ``accounting`` is ``"rdp"`` or ``"pld"``; under
    ``"pld"`` the RDP fields (``order``, ``rdp_at_order``, ``conversion``, ``orders``,
    ``num_orders``) are ``None``."""

    epsilon: float
    order: Optional[float]
    rdp_at_order: Optional[float]
    delta: float
    sampling_rate: float
    noise_multiplier: float
    steps: int
    neighbours: str
    neighbours_proven: bool
    conversion: Optional[str]
    target_epsilon: Optional[float]
    orders: Optional[str]
    num_orders: Optional[int]
    accounting: str = "rdp"

    @classmethod
    def _from_json(cls, text: str) -> "Accounting":
        d = json.loads(text)
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})


def _steps(steps: Any) -> int:
    try:
        t = operator.index(steps)
    except TypeError:
        raise DtypeError(f"steps must be an integer, got {type(steps).__name__}") from None
    if t < 1 or t >= 2**64:
        err = ParameterError(f"invalid parameter `steps`: must be an integer >= 1, got {t}")
        err.name = "steps"
        raise err
    return t


def _orders(orders: Union[None, str, Sequence[float]]) -> Any:
    if orders is None or isinstance(orders, str):
        return orders
    try:
        return [float(a) for a in orders]
    except (TypeError, ValueError):
        err = ParameterError(
            "invalid parameter `orders`: expected \"default\", \"integers:MAX\" or a sequence of orders"
        )
        err.name = "orders"
        raise err from None


def rdp_epsilon(
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
    *,
    neighbours: str = "replace",
    conversion: str = "improved",
    orders: Union[None, str, Sequence[float]] = None,
    accountant: str = "rdp",
) -> Accounting:
    """``(ε, δ)`` of ``steps`` Poisson-subsampled Gaussian steps.

    Each step samples every unit with probability ``q`` and adds ``N(0, σ² C²)`` noise to a sum
    of contributions of norm at most ``C``. Its RDP at order ``α`` is that of the subsampled
    Gaussian mechanism (Mironov, Talwar & Zhang 2019); ``T`` steps compose to ``T·ε_step(α)``,
    and the conversion gives, for the improved rule (Canonne, Kamath & Steinke 2020),

    ``ε = min_α max(0, T·ε_step(α) + ln((α−1)/α) − (ln δ + ln α)/(α−1))``

    or, for the classic rule (Mironov 2017), ``ε = min_α T·ε_step(α) + ln(1/δ)/(α−1)``.

    Parameters
    ----------
    sampling_rate : float
        Poisson sampling rate ``q ∈ (0, 1]``.
    noise_multiplier : float
        ``σ > 0``.
    steps : int
        ``T ≥ 1``.
    delta : float
        ``δ ∈ (0, 1)``.
    neighbours : {"replace", "add-remove", "replace-sensitivity2", "replace-numeric"}
        ``replace`` (default; replace one unit's contribution, proven through the weak triangle
        inequality: ``((α−½)/(α−1))·ε_SGM(2α) + ε_SGM(2α−1)`` per step), ``add-remove`` (the
        standard DP-SGD accountant); the last two are numerical findings, not proofs.
    conversion : {"improved", "classic"}
    orders : None, "default", "integers:MAX", a comma-separated string, or a sequence of floats
        The order grid: the default ``{1.1, …, 10.9} ∪ {11, …, 63} ∪ {128, 256, 512, 1024}``,
        ``2, 3, …, MAX`` (``MAX ≤ 1024``), or at most 1024 orders in ``(1, 1e4]`` (a string
        such as ``"1.5,2,4"`` is read as the CLI's ``--orders``).
    accountant : {"rdp", "pld"}
        Rényi DP (default; ``conversion`` and ``orders`` apply to it only) or the privacy loss
        distribution (module docs): never looser than RDP.

    Returns
    -------
    Accounting
    """
    out = _native.rdp_epsilon(
        float(sampling_rate),
        float(noise_multiplier),
        _steps(steps),
        float(delta),
        neighbours,
        conversion,
        accountant,
        _orders(orders),
    )
    return Accounting._from_json(out)


def calibrate_noise(
    sampling_rate: float,
    steps: int,
    delta: float,
    epsilon: float,
    *,
    neighbours: str = "replace",
    conversion: str = "improved",
    orders: Union[None, str, Sequence[float]] = None,
    accountant: str = "rdp",
) -> Accounting:
    """The smallest noise multiplier ``σ`` whose ``steps`` steps are ``(epsilon, delta)``-DP.

    Bisection on ``σ`` (``ε`` decreases in ``σ``) with the invariant
    ``ε(σ_hi) ≤ epsilon·(1 − 1e-10)``, stopped when ``σ_hi/σ_lo − 1 ≤ 1e-10``: the returned
    ``σ`` never undershoots, its ``ε`` (the ``epsilon`` of the result) is at most the target
    (``target_epsilon``). Accounting as in ``rdp_epsilon`` (same arguments; under
    ``accountant="pld"`` the bisection stops at relative width 1e-6, as the CLI says in its
    ``conservative`` field). A target that cannot be
    certified for any ``σ ≤ 1e8`` is a ``PrivacyError``.

    Returns
    -------
    Accounting
        With ``noise_multiplier`` the calibrated ``σ`` and ``target_epsilon`` set.
    """
    out = _native.calibrate_noise(
        float(sampling_rate),
        _steps(steps),
        float(delta),
        float(epsilon),
        neighbours,
        conversion,
        accountant,
        _orders(orders),
    )
    return Accounting._from_json(out)
