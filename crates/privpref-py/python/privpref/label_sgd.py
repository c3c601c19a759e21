"""Label-private SGD on clear labels (Ghazi et al. (2021), "Deep Learning with Label
Differential Privacy"): one pass of projected SGD in which each sample's label is privatised
once, when it is used, and the gradient is debiased for the mechanism; and multi-stage training
(LP-MST) on top of it.

The options, their defaults and the order of the random draws are those of
``privpref fit --solver sgd --label-mechanism ...``: the same inputs and ``seed`` give the same
``theta``, bit for bit.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from . import _arrays, _ints, _native
from ._results import Fit
from .errors import DataError, DtypeError, ParameterError, ShapeError
from .mechanisms import _seed

__all__ = ["label_private_sgd", "multi_stage"]


def _x(x: Any, loss: str) -> np.ndarray:
    a = _arrays.features(x, 3 if loss == "pl-top1" else 2)
    if a.dtype != np.float64:
        # The label-private models read float64 rows (the CLI widens float32 files the same way).
        a = np.ascontiguousarray(a, dtype=np.float64)
    return a


def _prior(prior: Any, n: int) -> Optional[np.ndarray]:
    if prior is None:
        return None
    p = np.asarray(prior)
    if p.dtype.kind not in "fiub":
        raise DtypeError(f"prior must hold real numbers, got dtype {p.dtype}")
    p = np.ascontiguousarray(p, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != n:
        raise ShapeError(f"shape error: prior must have shape (n, K) with n = {n}, got {p.shape}")
    return p


def _clusters(clusters: Any, n: int) -> Optional[np.ndarray]:
    if clusters is None:
        return None
    c = np.asarray(clusters)
    if c.dtype.kind not in "iu":
        raise DtypeError(f"clusters must be an integer array (cluster ids), got dtype {c.dtype}")
    if c.ndim != 1 or c.shape[0] != n:
        raise ShapeError(f"shape error: clusters must have shape ({n},), got {c.shape}")
    if c.size and c.dtype != np.uint32:
        bad = (c < 0) | (c >= 2**32)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            err = DataError(
                f"invalid data in clusters at row {row}: cluster id {int(c[row])} is out of range (0..2^32)"
            )
            err.input, err.row, err.column, err.kind = "clusters", row, None, "label out of range"
            raise err
    return np.ascontiguousarray(c, dtype=np.uint32)


def _opt_float(v: Optional[float]) -> Optional[float]:
    return None if v is None else float(v)


def _opt_int(v: Optional[int], name: str) -> Optional[int]:
    return _ints.opt_count(v, name)


def _run(
    x: Any,
    y: Any,
    *,
    loss: str,
    k: Optional[int],
    mechanism: str,
    eps: float,
    delta: Optional[float],
    top_k: Optional[int],
    prior: Any,
    clusters: Any,
    prior_eps: Optional[float],
    sigma_rule: Optional[str],
    sensitivity: Optional[float],
    constraint: str,
    radius: Optional[float],
    step: Optional[str],
    lipschitz: Optional[float],
    debias: bool,
    theta0: Any,
    stages: Optional[int],
    stage_fractions: Optional[Sequence[float]],
    temperature: Optional[float],
    reuse: bool,
    seed: Optional[int],
    threads: Optional[int],
) -> Fit:
    xa = _x(x, loss)
    n = xa.shape[0]
    ya = _arrays.labels(y, n)
    if theta0 is not None:
        # d entries (K·d for softmax: vec(W), row-major K × d); the engine checks the length.
        theta0 = np.asarray(theta0, dtype=np.float64).reshape(-1).tolist()
    fractions = None if stage_fractions is None else [float(r) for r in stage_fractions]
    out = _native.label_sgd(
        xa,
        ya,
        loss,
        _opt_int(k, "k"),
        mechanism,
        float(eps),
        _opt_float(delta),
        _opt_int(top_k, "top_k"),
        _prior(prior, n),
        _clusters(clusters, n),
        _opt_float(prior_eps),
        sigma_rule,
        _opt_float(sensitivity),
        constraint,
        _opt_float(radius),
        step,
        _opt_float(lipschitz),
        bool(debias),
        theta0,
        _opt_int(stages, "stages"),
        fractions,
        _opt_float(temperature),
        bool(reuse),
        _seed(seed),
        _ints.threads(threads),
    )
    return Fit._from_native(out)


def label_private_sgd(
    x: Any,
    y: Any,
    *,
    mechanism: str,
    eps: float,
    loss: str = "mle",
    k: Optional[int] = None,
    top_k: Optional[int] = None,
    prior: Any = None,
    clusters: Any = None,
    prior_eps: Optional[float] = None,
    delta: Optional[float] = None,
    sigma_rule: Optional[str] = None,
    sensitivity: Optional[float] = None,
    constraint: str = "theta-b",
    radius: Optional[float] = None,
    step: Optional[str] = None,
    lipschitz: Optional[float] = None,
    debias: bool = True,
    theta0: Any = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
) -> Fit:
    """Label-private SGD on clear labels (Ghazi et al. (2021)).

    One pass of projected SGD over the samples in data order,
    ``θ_{t+1} = Π_W(θ_t − η_t ĝ_t)`` from ``θ_1 = Π_W(θ_0)``; the last iterate is returned.
    Sample ``t``'s label is read and privatised once, when it is used, and ``ĝ_t`` is the
    gradient debiased for the mechanism. With ``E = e^ε``, ``G_j`` the gradient under candidate
    label ``j`` and ``Y_k`` the ``k`` labels of largest prior mass:

    * ``krr`` (LP-RR-SGD, Alg. 5): ``ỹ ~ K-RR_ε(y)``,
      ``ĝ = ((E+K−1)/(E−1)) (G_ỹ − Σ_j G_j/(E+K−1))`` (eq. 7, unbiased);
    * ``rrtopk`` (Cor. 10): RRTop-k over ``Y_k``; ``ĝ`` as above with ``K → k`` and the sum
      over ``Y_k``;
    * ``rr-prior`` (Alg. 2): RRTop-k* with ``k* = argmax_k (E/(E+k−1)) Σ_{j≤k} p_(j)``; ``ĝ``
      as ``rrtopk`` with ``k = k*``;
    * ``normal`` (LP-Normal-SGD, Alg. 6): ``ĝ = G_0 + Qᵀ(Q(G_y − G_0) + z)``,
      ``z ~ N(0, σ²I)``, noise only in the span of the label-dependent directions.

    The randomising mechanisms are ``ε``-label DP; ``normal`` is ``(ε, δ)``. A private
    histogram prior adds its ``ε_p`` by basic composition (``ε_p + ε``).

    Parameters
    ----------
    x : array (n, d), or (n, K, d) for ``loss="pl-top1"``
        Public features (pairwise differences for ``mle``). Read as float64 (float32 and other
        layouts are copied once, as the CLI widens float32 files).
    y : array (n,) of int or bool
        The **clear** labels: {0, 1} for ``mle``, classes in ``0..K`` for ``softmax``, the
        chosen alternative for ``pl-top1``. Each is privatised by the mechanism when used.
    mechanism : {"krr", "rrtopk", "rr-prior", "normal"}
        The label mechanism (the CLI's ``--label-mechanism``).
    eps : float
        Each label's privacy level ``ε > 0``.
    loss : {"mle", "softmax", "pl-top1"}
        The binary linear model (logistic), K-class softmax regression (``θ = vec(W)``,
        row-major K × d) or the K-wise Plackett–Luce choice model.
    k : int, optional
        Classes for ``softmax`` (required); alternatives for ``pl-top1`` (checked against
        ``x``); 2 for ``mle``.
    top_k : int, optional
        ``rrtopk``: the size ``k`` of the top set (``1 ≤ k ≤ K``).
    prior : array (n, K), optional
        ``rrtopk`` / ``rr-prior``: a public per-sample prior (rows sum to 1) that does not
        depend on the sample's own label.
    clusters, prior_eps : array (n,) of int, float
        ``rrtopk`` / ``rr-prior``: public cluster ids and ``ε_p`` of the private histogram prior
        (Ghazi et al. (2021), Alg. 4: per-cluster label counts plus exact discrete Laplace noise).
    delta : float
        ``normal``: ``δ ∈ (0, 1)``.
    sigma_rule : {"analytic", "classic"}, optional
        ``normal``: σ by the analytic Gaussian mechanism (Balle & Wang (2018); default) or the
        classic one (``ε < 1``).
    sensitivity : float, optional
        ``normal``: the label sensitivity ``Δ`` of a sample's gradient (default: from the
        features); checked at every step.
    constraint : {"theta-b", "ball", "sum-zero", "none"}
        The convex set ``W``; ``radius`` is its ``B``.
    step : str, optional
        ``theory`` (default: Thm 9's ``η_t = D/(G√t)`` with ``D = 2B``; needs a radius),
        ``theory:C``, ``invsqrt:C`` (``C/√t``) or ``const:ETA``.
    lipschitz : float, optional
        ``L`` of the theory step (default: the model's bound from the features).
    debias : bool
        ``False`` uses plain gradients on the randomised labels (biased, same privacy).
    theta0 : array, optional
        Start (projected onto ``W``; default 0).
    seed : int, optional
        ``None`` (default): the OS-seeded CSPRNG, the only choice for real labels. An integer
        seeds the simulation generator (reproducible; the guarantee says simulation only).
    threads : int, optional
        Worker threads. The pass itself is sequential.

    Returns
    -------
    Fit
        ``theta`` (the last iterate), ``termination="completed"`` (a fixed one-pass budget: no
        KKT certificate, and no objective value — a statistic of the clear labels would not be
        covered by the guarantee), ``guarantee`` (central, per item, label change), and
        ``detail``: ``released`` (every released label: sample, label and the label set it was
        randomised over), ``mean_k``, ``lipschitz``, ``normal`` (σ, Δ, realised sensitivity,
        subspace ranks), ``labels`` (K), ``histogram_prior``.

    The GIL is released while the run goes; Ctrl-C stops the pass at its next interrupt check
    (every 256 steps) and raises ``KeyboardInterrupt`` once it has stopped; no fit is
    returned. (A histogram prior is computed before the pass, without a check.)
    """
    return _run(
        x,
        y,
        loss=loss,
        k=k,
        mechanism=mechanism,
        eps=eps,
        delta=delta,
        top_k=top_k,
        prior=prior,
        clusters=clusters,
        prior_eps=prior_eps,
        sigma_rule=sigma_rule,
        sensitivity=sensitivity,
        constraint=constraint,
        radius=radius,
        step=step,
        lipschitz=lipschitz,
        debias=debias,
        theta0=theta0,
        stages=None,
        stage_fractions=None,
        temperature=None,
        reuse=False,
        seed=seed,
        threads=threads,
    )


def multi_stage(
    x: Any,
    y: Any,
    *,
    eps: float,
    stages: int,
    stage_fractions: Optional[Sequence[float]] = None,
    temperature: float = 1.0,
    reuse: bool = False,
    loss: str = "mle",
    k: Optional[int] = None,
    clusters: Any = None,
    prior_eps: Optional[float] = None,
    constraint: str = "theta-b",
    radius: Optional[float] = None,
    step: Optional[str] = None,
    lipschitz: Optional[float] = None,
    debias: bool = True,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
) -> Fit:
    """Multi-stage label-private training LP-MST (Ghazi et al. (2021), Alg. 3) with
    RR-with-prior.

    The samples are split at random (public coins) into ``stages`` parts of fractions
    ``r_1, …, r_T`` (default equal). Stage 1 privatises its labels by K-RR (or RR-with-prior
    under the histogram prior, with ``clusters`` and ``prior_eps``); stage ``s ≥ 2`` by
    RR-with-prior under the prior ``p_i = softmax(−ℓ(Φ_i θ_{s−1}; ·)/t)`` of the previous
    stage's model at temperature ``t``; each stage then makes one pass of label-private SGD,
    warm-started from ``θ_{s−1}``. Each label is randomised once and the priors depend only on
    other samples' releases, so the stages compose in parallel: ``ε`` overall (``ε_p + ε`` with
    the histogram prior). ``reuse=True`` also trains on earlier stages' releases whose label is
    among the top-``⌊k̄⌋`` of the current model (post-processing).

    Parameters
    ----------
    x, y, eps, loss, k, clusters, prior_eps, constraint, radius, step, lipschitz, debias, seed, threads
        As in ``label_private_sgd`` (the mechanism is ``rr-prior``).
    stages : int
        ``T ≥ 2``.
    stage_fractions : sequence of float, optional
        ``r_1, …, r_T`` (positive, summing to at most 1).
    temperature : float
        ``t > 0`` of the model priors (default 1, as the CLI).
    reuse : bool
        Reuse earlier stages' releases.

    Returns
    -------
    Fit
        ``theta = θ_T`` with the composed guarantee; ``detail.stages`` holds each stage's
        samples, reused and filtered-out releases, mean ``k*``, steps, ``θ_s`` and guarantee,
        ``detail.released`` every release.

    Ctrl-C stops training at its next interrupt check (before each stage and every 256 steps)
    and raises ``KeyboardInterrupt`` once it has stopped; no fit is returned.
    """
    return _run(
        x,
        y,
        loss=loss,
        k=k,
        mechanism="rr-prior",
        eps=eps,
        delta=None,
        top_k=None,
        prior=None,
        clusters=clusters,
        prior_eps=prior_eps,
        sigma_rule=None,
        sensitivity=None,
        constraint=constraint,
        radius=radius,
        step=step,
        lipschitz=lipschitz,
        debias=debias,
        theta0=None,
        stages=int(stages),
        stage_fractions=stage_fractions,
        temperature=float(temperature),
        reuse=reuse,
        seed=seed,
        threads=threads,
    )
