"""Results: ``Fit`` (the estimate, its certificate and counts, the privacy guarantee),
``Certificate`` and ``Guarantee``.

They are built from the Rust library's own serialisation (the JSON keys of the CLI), so Python
and the CLI report the same fields; ``theta`` is passed as a numpy array, bit for bit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

import numpy as np

from .errors import NotConvergedError

__all__ = ["Fit", "Certificate", "Guarantee"]


@dataclass(frozen=True)
class Guarantee:
    """The privacy guarantee of a release: ``(eps, delta)``-DP in the ``model`` (``local`` or
    ``central``) for the ``unit`` (``item`` or ``user``) under the ``neighbouring`` relation,
    by ``mechanism``, with the ``noise`` source. ``holds_for_real_data`` is ``False`` when the
    noise came from a seeded simulation generator. ``feature_bound``, ``exactness_tol``,
    ``radius`` and ``notes`` are the assumptions the calibration relied on."""

    eps: float
    delta: float
    model: str
    unit: str
    neighbouring: str
    mechanism: str
    noise: str
    seed: Optional[int]
    holds_for_real_data: bool
    feature_bound: Optional[float] = None
    exactness_tol: Optional[float] = None
    radius: Optional[float] = None
    notes: List[str] = field(default_factory=list)

    @classmethod
    def _from_dict(cls, d: Optional[Dict[str, Any]]) -> "Optional[Guarantee]":
        if d is None:
            return None
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def as_dict(self) -> Dict[str, Any]:
        """The guarantee as a plain dict (the CLI's JSON keys)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __str__(self) -> str:
        dp = f"({self.eps:g}, {self.delta:g})-DP" if self.delta else f"{self.eps:g}-DP"
        real = "" if self.holds_for_real_data else " [simulation only: seeded noise]"
        return f"{dp}, {self.model}, per {self.unit} ({self.neighbouring}), {self.mechanism}{real}"


@dataclass(frozen=True)
class Certificate:
    """What is known about the optimality of the returned point, all computed at it.

    ``kkt_residual`` is the relative KKT residual (converged means ``kkt_residual <= kkt_tol``);
    ``projected_gradient`` is ``‖θ − Π(θ − ∇F(θ))‖``; ``suboptimality_bound`` bounds
    ``F(θ) − min F`` where one exists; ``certified_global`` says the point is a proven global
    minimiser."""

    objective: Optional[float]
    kkt_residual: Optional[float]
    kkt_tol: Optional[float]
    projected_gradient: Optional[float]
    suboptimality_bound: Optional[float]
    on_boundary: bool
    multiplier: Optional[float]
    certified_global: bool

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "Certificate":
        return cls(**{f.name: d.get(f.name) for f in fields(cls)})


def _nan(v: Optional[float]) -> float:
    return float("nan") if v is None else float(v)


@dataclass(frozen=True, repr=False)
class Fit:
    """The result of an estimator.

    ``theta`` is the released estimate (numpy, float64). ``converged`` is true only when the
    KKT certificate holds (``certificate.kkt_residual <= certificate.kkt_tol``);
    ``termination`` says how the solver stopped (``converged``, ``max-iterations``,
    ``no-minimizer``, ``completed`` for fixed-budget SGD, ...). ``guarantee`` is the privacy
    guarantee of ``theta`` (``None``: not private; ``no_guarantee_reason`` says why).
    ``counts`` holds the work done (iterations, passes over X, ``elapsed_s``); ``detail`` what
    only this estimator produces (the configuration and the labels' provenance of a local fit,
    the noise scales of a central release, ...); ``report`` the solver's whole report."""

    theta: np.ndarray
    converged: bool
    termination: str
    solver: str
    certificate: Certificate
    counts: Dict[str, Any]
    guarantee: Optional[Guarantee]
    no_guarantee_reason: Optional[str]
    refusal: Optional[str]
    detail: Any
    report: Dict[str, Any]

    @classmethod
    def _from_native(cls, out: Any) -> "Fit":
        theta, text = out
        d = json.loads(text)
        report = d["report"]
        theta.setflags(write=False)
        return cls(
            theta=theta,
            converged=report["termination"] == "converged",
            termination=report["termination"],
            solver=report["solver"],
            certificate=Certificate._from_dict(d["certificate"]),
            counts=d["counts"],
            guarantee=Guarantee._from_dict(d.get("guarantee")),
            no_guarantee_reason=d.get("no_guarantee_reason"),
            refusal=d.get("refusal"),
            detail=d.get("detail"),
            report=report,
        )

    @property
    def approximate(self) -> bool:
        """A fixed-budget result without a KKT certificate (SGD's ``completed``)."""
        return self.termination == "completed"

    def certified(self) -> "Fit":
        """This fit if its KKT certificate holds; otherwise raises ``NotConvergedError``
        (the library's ``SolveReport::into_result``)."""
        if self.converged:
            return self
        c = self.certificate
        err = NotConvergedError(
            f"{self.solver} did not converge: {self.termination} (relative KKT residual "
            f"{_nan(c.kkt_residual):.3e}, tolerance {_nan(c.kkt_tol):.3e}, "
            f"{self.counts.get('iterations')} iterations)"
        )
        err.solver, err.termination = self.solver, self.termination
        err.kkt_residual, err.kkt_tol = _nan(c.kkt_residual), _nan(c.kkt_tol)
        err.iterations = self.counts.get("iterations")
        raise err

    def scores(self, x: Any) -> np.ndarray:
        """The reward differences ``x @ theta`` of pairwise features ``x`` (n × d)."""
        return np.asarray(x, dtype=np.float64) @ self.theta

    def predict_proba(self, x: Any) -> np.ndarray:
        """``P(y = 1 | x) = σ(xᵀθ)`` under the Bradley–Terry–Luce model."""
        t = self.scores(x)
        return 0.5 * (1.0 + np.tanh(0.5 * t))

    def __repr__(self) -> str:
        c = self.certificate
        lines = [f"Fit({self.solver}: {self.termination}"]
        theta = np.array2string(self.theta, precision=4, threshold=8, max_line_width=100)
        lines.append(f"  theta = {theta}  (d = {self.theta.shape[0]})")
        tol = c.kkt_tol
        if not tol and isinstance(self.detail, dict) and self.detail.get("kkt_tol"):
            tol = self.detail["kkt_tol"]  # objective perturbation certifies its own tolerance
        lines.append(
            f"  certificate: KKT residual {_nan(c.kkt_residual):.2e} (tol {_nan(tol):.0e}), "
            f"objective {_nan(c.objective):.6g}, "
            f"{'global minimiser' if c.certified_global else 'not certified global'}"
            + (", on the boundary" if c.on_boundary else "")
        )
        passes = self.counts.get("data_passes")
        lines.append(
            f"  work: {self.counts.get('iterations')} iterations"
            + (f", {passes} passes over X" if passes else "")
            + f", {self.counts.get('elapsed_s', float('nan')):.3g} s"
        )
        if self.guarantee is not None:
            lines.append(f"  guarantee: {self.guarantee}")
        else:
            lines.append(f"  guarantee: none ({self.no_guarantee_reason or 'not private'})")
        return "\n".join(lines) + ")"
