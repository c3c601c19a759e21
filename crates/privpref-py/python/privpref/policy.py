"""Pessimistic and greedy policies over a public state sample, with a certified duality gap.

Given a released reward model ``θ̂`` (a :class:`privpref.Fit`) and a public sample of states with
the features ``φ(s, a)`` of their actions (an ``n × A × d`` array), the pessimistic policy
maximises the worst-case value over a confidence set around ``θ̂``
("Provable protection of human judgements" (anon., 2025), Algorithm 3; Zhou, Wu & Orabona
(2025), Algorithm 2 with ``η = 1``)::

    Ĵ(π) = min_{θ ∈ C} ⟨θ, Σ_s ρ_s Σ_a π_s(a) φ(s, a) − v⟩,
    C = {θ ∈ Θ_B : ‖θ − θ̂‖_{Σ + λI} ≤ Γ},

solved by Frank–Wolfe over stochastic policies with a certified duality gap, then purified and
rounded to a deterministic policy. The greedy policy (``η = 0``) is ``argmax_a ⟨θ̂, φ(s, a)⟩``
(Chowdhury, Zhou & Natarajan (2024), Sec. 4.3). A policy is post-processing of ``θ̂`` (and of
``Σ̃``): it carries the fit's guarantee, provided the states, weights and reference are public.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import numpy as np

from . import _arrays, _ints, _native
from ._results import Fit, Guarantee
from .errors import DataError, DtypeError, ParameterError, PrivacyWarning, ShapeError

__all__ = ["Policy", "pessimistic_policy", "greedy_policy"]


@dataclass(frozen=True, repr=False)
class Policy:
    """A deterministic policy over a public state sample, with its certified values.

    Attributes
    ----------
    actions : ndarray of uint32, shape (n,)
        The chosen action of each state.
    policy : {"pessimistic", "greedy"}
        Which policy this is.
    value : float
        ``Ĵ(π)`` of ``actions``: a certified lower bound on the worst-case value over the
        confidence set ``C`` (for the greedy policy, ``Ĵ`` of the greedy actions).
    stochastic_value, upper_bound, gap, rel_gap : float or None
        The pessimistic policy's certificate: ``Ĵ`` (lower bound) of the optimised stochastic
        policy, an upper bound on ``max_π Ĵ(π)``, their difference and the difference relative to
        ``max(|value|, |upper bound|)``. ``None`` for the greedy policy.
    objective_range : float or None
        ``R_C (Σ_s ρ_s max_a ‖φ(s, a)‖ + ‖v‖)``, a bound on ``|Ĵ|``: the absolute gap tolerance
        is ``tol`` times it unless ``strict_gap``.
    termination : str
        ``converged`` (gap within tolerance), ``max-passes`` or ``stalled``; ``greedy`` for the
        greedy policy (one pass, nothing to certify).
    converged : bool
        The duality-gap certificate holds (always ``True`` for the greedy policy). A run that
        stops without its certificate is returned with ``converged=False`` (the CLI exits 3).
    iterations, passes : int
        Frank–Wolfe iterations and passes over the states (greedy: 0 and 1).
    greedy_value, plug_in_value : float
        ``Ĵ`` and the plug-in value ``⟨θ̂, g(π̂)⟩`` of the greedy policy ``π̂`` of ``θ̂``.
    rounded_states, rounding_bound : int or None, float or None
        States rounded from the purified stochastic policy, and the bound on the value lost.
    theta_min : ndarray or None
        The worst-case ``θ ∈ C`` at the final stochastic policy.
    lam, confidence_radius : float
        ``λ`` of ``Σ + λI`` and the radius ``Γ`` used.
    rule : str or None
        The radius rule that gave them (``None`` when both were given).
    radius_terms : dict
        The terms of ``Γ`` by name (before ``radius_multiplier``).
    set_used : str
        The ``Θ_B`` intersected with the ellipsoid (``set_fallback`` says why it differs from
        the requested one, if it does).
    guarantee : Guarantee or None
        The fit's privacy guarantee (a policy is post-processing).
    report : dict
        Every field, with the keys of ``privpref policy``'s JSON.
    """

    actions: np.ndarray
    policy: str
    value: float
    stochastic_value: Optional[float]
    upper_bound: Optional[float]
    gap: Optional[float]
    rel_gap: Optional[float]
    objective_range: Optional[float]
    termination: str
    converged: bool
    iterations: int
    passes: int
    greedy_value: float
    plug_in_value: float
    rounded_states: Optional[int]
    rounding_bound: Optional[float]
    theta_min: Optional[np.ndarray]
    lam: float
    confidence_radius: float
    rule: Optional[str]
    radius_terms: Dict[str, float]
    set_used: str
    set_fallback: Optional[str]
    guarantee: Optional[Guarantee]
    report: Dict[str, Any] = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        """Same as ``converged``: the duality gap met its tolerance."""
        return self.converged

    @classmethod
    def _from_native(cls, out: Any, guarantee: Optional[Guarantee]) -> "Policy":
        actions, text = out
        d = json.loads(text)
        actions.setflags(write=False)
        d["guarantee"] = None if guarantee is None else guarantee.as_dict()
        d["guarantee_note"] = (
            "the policy is post-processing of the released theta (and covariance): it carries their "
            "guarantee; the states, weights and reference must be public"
        )
        greedy = d["policy"] == "greedy"
        theta_min = d.get("theta_min")
        if theta_min is not None:
            theta_min = np.asarray(theta_min, dtype=np.float64)
            theta_min.setflags(write=False)
        return cls(
            actions=actions,
            policy=d["policy"],
            value=d["value"],
            stochastic_value=d.get("stochastic_value"),
            upper_bound=d.get("upper_bound"),
            gap=d.get("gap"),
            rel_gap=d.get("rel_gap"),
            objective_range=d.get("objective_range"),
            termination="greedy" if greedy else d["termination"],
            converged=True if greedy else bool(d["converged"]),
            iterations=0 if greedy else d["iterations"],
            passes=1 if greedy else d["passes"],
            greedy_value=d["value"] if greedy else d["greedy_value"],
            plug_in_value=d["plug_in_value"] if greedy else d["greedy_plug_in_value"],
            rounded_states=d.get("rounded_states"),
            rounding_bound=d.get("rounding_bound"),
            theta_min=theta_min,
            lam=d["lambda"],
            confidence_radius=d["confidence_radius"],
            rule=d.get("rule"),
            radius_terms={t["name"]: t["value"] for t in (d.get("radius_terms") or [])},
            set_used=d["set_used"],
            set_fallback=d.get("set_fallback"),
            guarantee=guarantee,
            report=d,
        )

    def __repr__(self) -> str:
        n = self.actions.shape[0]
        a = self.report.get("actions_per_state")
        counts = np.bincount(self.actions.astype(np.int64), minlength=a or 0)
        head = "greedy" if self.policy == "greedy" else f"pessimistic: {self.termination}"
        lines = [f"Policy({head}, {n} states x {a} actions"]
        lines.append(f"  actions per choice = {np.array2string(counts, threshold=8)}")
        if self.policy == "pessimistic":
            lines.append(
                f"  value {self.value:.6g} (stochastic {self.stochastic_value:.6g}, upper bound "
                f"{self.upper_bound:.6g}, gap {self.gap:.2e}, relative {self.rel_gap:.2e})"
            )
            lines.append(
                f"  greedy value {self.greedy_value:.6g}; {self.iterations} iterations, "
                f"{self.passes} passes, {self.rounded_states} states rounded"
            )
        else:
            lines.append(f"  value {self.value:.6g} (plug-in {self.plug_in_value:.6g})")
        lines.append(
            f"  confidence set: lambda {self.lam:.4g}, radius {self.confidence_radius:.4g}, "
            f"set {self.set_used}" + (f" (fallback: {self.set_fallback})" if self.set_fallback else "")
        )
        if self.rule:
            lines.append(f"  rule: {self.rule}")
        if self.guarantee is not None:
            lines.append(f"  guarantee: {self.guarantee} (post-processing)")
        else:
            lines.append("  guarantee: none")
        return "\n".join(lines) + ")"


def _param(name: str, message: str) -> ParameterError:
    err = ParameterError(f"invalid parameter `{name}`: {message}")
    err.name = name
    return err


def _fit_info(fit: Fit, n: Optional[int]) -> Dict[str, Any]:
    """The fields of the fit that ``privpref policy`` reads from ``result.json``, from a
    ``Fit``'s ``detail`` and ``guarantee``."""
    detail = fit.detail if isinstance(fit.detail, dict) else {}
    config = detail.get("config") if isinstance(detail.get("config"), dict) else {}
    g = fit.guarantee
    mechanism = (g.mechanism if g is not None else "") or ""
    info: Dict[str, Any] = {
        "constraint": config.get("constraint"),
        "radius": config.get("radius"),
        "guarantee": None if g is None else g.as_dict(),
    }
    if isinstance(detail.get("calibration"), dict) or mechanism.startswith("private MLE"):
        cal = detail.get("calibration") or {}
        info.update(mechanism="private-mle", loss="mle", alpha=cal.get("alpha"), accuracy=cal.get("accuracy"))
    elif ("noise_std" in detail and "beta" in detail) or mechanism.startswith("objective perturbation"):
        info.update(mechanism="objpert", loss="mle", noise_std=detail.get("noise_std"), beta=detail.get("beta"))
    else:
        info.update(loss=config.get("loss"), eps=config.get("eps"))
    if info.get("constraint") is None:
        info.pop("constraint")
    if n is not None:
        info["n"] = int(n)
    return info


def _covariance(covariance: Any, d: int):
    """``(matrix, n)`` of a private covariance: a ``PrivateCovariance``-like object (its
    ``matrix`` or ``covariance`` attribute, and ``n`` if it has one), a dict with the key
    ``covariance`` (the JSON of ``privpref covariance``), or a (d, d) array."""
    if covariance is None:
        return None, None
    n = None
    m = covariance
    if isinstance(covariance, dict):
        m, n = covariance.get("covariance"), covariance.get("n")
    elif not isinstance(covariance, np.ndarray):
        for name in ("matrix", "covariance"):
            if hasattr(covariance, name):
                m = getattr(covariance, name)
                break
        n = getattr(covariance, "n", None)
    a = np.asarray(m)
    if a.dtype.kind not in "fiub":
        raise DtypeError(f"covariance must hold real numbers, got dtype {a.dtype}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape != (d, d):
        raise ShapeError(f"shape error: covariance must have shape ({d}, {d}), got {a.shape}")
    return a, n


def _reference_actions(r: Any, n: int, k: int) -> Optional[np.ndarray]:
    if r is None:
        return None
    a = np.asarray(r)
    if a.dtype.kind not in "iub":
        raise DtypeError(f"reference_actions must be an integer array (one action per state), got dtype {a.dtype}")
    if a.ndim != 1 or a.shape[0] != n:
        raise ShapeError(f"shape error: reference_actions must have shape ({n},), got {a.shape}")
    bad = (a < 0) | (a >= k)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        err = DataError(
            f"invalid data in reference_actions at row {row}: action {int(a[row])} is out of range (0..{k})"
        )
        err.input, err.row, err.column, err.kind = "reference_actions", row, None, "action out of range"
        raise err
    return np.ascontiguousarray(a, dtype=np.uint32)


def _run(
    fit: Fit,
    states: Any,
    *,
    greedy: bool,
    x: Any,
    covariance: Any,
    n: Optional[int],
    eta: float,
    radius_multiplier: float,
    lambda_multiplier: float,
    lam: Optional[float],
    confidence_radius: Optional[float],
    set: Optional[str],
    radius: Optional[float],
    reference_actions: Any,
    reference_vector: Any,
    weights: Any,
    tol: float,
    max_passes: int,
    strict_gap: bool,
    threads: Optional[int],
) -> Policy:
    if not isinstance(fit, Fit):
        raise TypeError(f"fit must be a privpref.Fit, got {type(fit).__name__}")
    theta = np.asarray(fit.theta, dtype=np.float64)
    d = theta.shape[0]
    s = _arrays.features(states, 3, "states")
    if s.dtype != np.float64:
        s = np.ascontiguousarray(s, dtype=np.float64)
    ns, k, ds = s.shape
    if ds != d:
        raise ShapeError(f"shape error: states have d = {ds} features, theta has {d}")
    eta = float(eta)
    if not (0.0 < eta < 1.0):
        raise _param("eta", f"failure probability must be in (0, 1), got {eta}")
    max_passes = _ints.count(max_passes, "max_passes", 1)
    xa = None
    if x is not None:
        xa = _arrays.features(x, 2, "x")
        if xa.shape[1] != d:
            raise ShapeError(f"shape error: x has d = {xa.shape[1]} columns, theta has {d}")
    cov, cov_n = _covariance(covariance, d)
    if n is None:
        n = xa.shape[0] if xa is not None else cov_n
    info = _fit_info(fit, n)
    v = _arrays.vector(reference_vector, d, "reference_vector")
    out = _native.policy(
        theta.tolist(),
        s,
        json.dumps(info),
        xa,
        cov,
        bool(greedy),
        eta,
        float(radius_multiplier),
        float(lambda_multiplier),
        None if lam is None else float(lam),
        None if confidence_radius is None else float(confidence_radius),
        set,
        None if radius is None else float(radius),
        _reference_actions(reference_actions, ns, k),
        None if v is None else np.asarray(v, dtype=np.float64),
        _arrays.weights(weights, ns),
        float(tol),
        int(max_passes),
        bool(strict_gap),
        _ints.threads(threads),
    )
    result = Policy._from_native(out, fit.guarantee)
    if result.report.get("vacuous"):
        warnings.warn(
            f"pessimism is vacuous: the confidence radius {result.confidence_radius:.4f} covers the whole "
            f"{result.set_used} set (every radius from {result.report['covering_radius']:.4f} does), so every "
            "policy's pessimistic value is at most 0, the reference's, whatever theta says (converged only "
            "says this problem is solved); greedy_policy drops pessimism, more data or a larger eps "
            "shrinks the radius",
            PrivacyWarning,
            stacklevel=3,
        )
    return result


_COMMON_DOC = """
    Parameters
    ----------
    fit : Fit
        The released reward model: from ``privpref.fit`` (losses ``mle`` and ``debiased-rr``),
        ``privpref.objective_perturbation`` or ``privpref.private_mle``. How it was obtained
        (its ``detail`` and ``guarantee``) selects the radius rule.
    states : array (n, A, d)
        Public states: the features ``φ(s, a)`` of the ``A`` actions of each of ``n`` states.
        A C-contiguous float64 array is read in place (no copy); anything else is copied once
        to float64.
    x : array (m, d), optional
        The fit's pairwise features (public under label DP): ``Σ̂ = (1/m) Σ xxᵀ`` and
        ``X_max = maxᵢ ‖xᵢ‖`` of the Zhou, Wu & Orabona (2025) and objective-perturbation rules.
        Read in place when C-contiguous float64/float32. Not allowed for a private-MLE fit
        (its features are private).
    covariance : array (d, d) or PrivateCovariance, optional
        The private covariance ``Σ̃`` of "Provable protection of human judgements" (anon.,
        2024), Algorithm 2, for a private-MLE fit: a plain (d, d) numpy array, an object with a
        ``matrix`` (or ``covariance``) attribute and ``n`` (e.g. ``privpref.private_covariance``'s
        result), or the dict of ``privpref covariance``'s JSON.
    n : int, optional
        The fit's sample size (the radius rules need it). Default: the rows of ``x``, or the
        covariance's ``n``. A plain covariance array needs ``n=`` for the private-MLE rule.
    eta : float
        Failure probability of the radius, in (0, 1) (default 0.05).
    radius_multiplier, lambda_multiplier : float
        Multipliers of ``Γ`` and of the default ``λ`` (1: the guaranteed explicit rule).
    lam, confidence_radius : float, optional
        Override ``λ`` and ``Γ``; with both, no rule is needed (any fit).
    set : {"theta-b", "ball", "sum-zero", "none"}, optional
        ``Θ_B`` of the confidence set (default: the fit's constraint); ``radius`` its ``B``
        (default: the fit's radius).
    reference_actions : int array (n,), optional
        A public reference policy (one action per state): ``v = Σ_s ρ_s φ(s, π_ref(s))``.
    reference_vector : array (d,), optional
        A public reference vector ``v`` (at most one of the two references).
    weights : array (n,), optional
        Non-negative state weights ``ρ`` (default uniform).
    tol, strict_gap, max_passes
        Relative duality-gap tolerance (relative to ``max(|Ĵ|, upper bound)``, or to the
        objective's range when the optimum is near 0 unless ``strict_gap``), and the maximum
        passes over the states.
    threads : int, optional
        Worker threads (default: one per core). Results do not depend on it.

    Returns
    -------
    Policy
        ``actions`` (uint32), the certified values, the confidence set used and the fit's
        ``guarantee``.

    ``λ`` and ``Γ`` follow the rule of the fit, as ``privpref policy`` does: Zhou, Wu & Orabona
    (2025), Thm 5.4 (``λ = X_max² d ln(n/η)/n``, ``Γ = 2f/γ + 2B√λ``) for ``mle`` and
    ``debiased-rr`` fits; the objective-perturbation radius
    (``Γ = 2f/γ + B√(4λ + β/(γn))``) for Chowdhury, Zhou & Natarajan (2024), Algorithm 2; the
    private-MLE radius ``Γ = √(3/2)(R1 + … + R5)`` of "Provable protection of human judgements"
    (anon., 2025) with ``Σ̃``. The GIL is released while the policy is computed.
"""


def pessimistic_policy(
    fit: Fit,
    states: Any,
    *,
    x: Any = None,
    covariance: Any = None,
    n: Optional[int] = None,
    eta: float = 0.05,
    radius_multiplier: float = 1.0,
    lambda_multiplier: float = 1.0,
    lam: Optional[float] = None,
    confidence_radius: Optional[float] = None,
    set: Optional[str] = None,
    radius: Optional[float] = None,
    reference_actions: Any = None,
    reference_vector: Any = None,
    weights: Any = None,
    tol: float = 1e-6,
    max_passes: int = 2000,
    strict_gap: bool = False,
    threads: Optional[int] = None,
) -> Policy:
    return _run(
        fit,
        states,
        greedy=False,
        x=x,
        covariance=covariance,
        n=n,
        eta=eta,
        radius_multiplier=radius_multiplier,
        lambda_multiplier=lambda_multiplier,
        lam=lam,
        confidence_radius=confidence_radius,
        set=set,
        radius=radius,
        reference_actions=reference_actions,
        reference_vector=reference_vector,
        weights=weights,
        tol=tol,
        max_passes=max_passes,
        strict_gap=strict_gap,
        threads=threads,
    )


def greedy_policy(
    fit: Fit,
    states: Any,
    *,
    x: Any = None,
    covariance: Any = None,
    n: Optional[int] = None,
    eta: float = 0.05,
    radius_multiplier: float = 1.0,
    lambda_multiplier: float = 1.0,
    lam: Optional[float] = None,
    confidence_radius: Optional[float] = None,
    set: Optional[str] = None,
    radius: Optional[float] = None,
    reference_actions: Any = None,
    reference_vector: Any = None,
    weights: Any = None,
    tol: float = 1e-6,
    max_passes: int = 2000,
    strict_gap: bool = False,
    threads: Optional[int] = None,
) -> Policy:
    return _run(
        fit,
        states,
        greedy=True,
        x=x,
        covariance=covariance,
        n=n,
        eta=eta,
        radius_multiplier=radius_multiplier,
        lambda_multiplier=lambda_multiplier,
        lam=lam,
        confidence_radius=confidence_radius,
        set=set,
        radius=radius,
        reference_actions=reference_actions,
        reference_vector=reference_vector,
        weights=weights,
        tol=tol,
        max_passes=max_passes,
        strict_gap=strict_gap,
        threads=threads,
    )


pessimistic_policy.__doc__ = (
    """The pessimistic policy of a released reward model over public states, certified.

    Maximises ``Ĵ(π) = min_{θ ∈ C} ⟨θ, Σ_s ρ_s Σ_a π_s(a) φ(s, a) − v⟩`` over stochastic
    policies, ``C = {θ ∈ Θ_B : ‖θ − θ̂‖_{Σ+λI} ≤ Γ}`` ("Provable protection of human
    judgements" (anon., 2025), Algorithm 3; Zhou, Wu & Orabona (2025), Algorithm 2 with
    ``η = 1``), by Frank–Wolfe from the greedy policy with a certified duality gap (an upper
    bound ``min_τ h(θ_τ)`` on ``max Ĵ``), then purifies to at most ``d`` randomised states and
    rounds them; ``value`` is ``Ĵ`` of the returned deterministic ``actions``. A run that stops
    without its certificate (``max-passes``, ``stalled``) returns the policy with
    ``converged=False``.
"""
    + _COMMON_DOC
)

greedy_policy.__doc__ = (
    """The greedy policy of a released reward model: ``π̂(s) = argmax_a ⟨θ̂, φ(s, a)⟩``.

    Zhou, Wu & Orabona (2025), Algorithm 2 with ``η = 0``; the plug-in policy of Chowdhury,
    Zhou & Natarajan (2024), Sec. 4.3 (lowest action index on ties). One pass over the states;
    ``value`` is its pessimistic value ``Ĵ(π̂)`` under the same confidence set as
    ``pessimistic_policy`` (so the same arguments apply), ``plug_in_value`` is ``⟨θ̂, g(π̂)⟩``.
    ``tol``, ``strict_gap`` and ``max_passes`` are accepted and unused.
"""
    + _COMMON_DOC
)
