"""User-level label DP (Zhang et al. (2025), "Towards User-level Private Reinforcement Learning
with Human Feedback").

Each of ``U`` users holds ``m_u`` comparisons, in consecutive rows: ``counts[u] = m_u``, summing
to ``n``. Features, user identities and counts are public, labels private; neighbouring datasets
differ in the labels of one user. Three estimators:

* ``fit_user_rr``: each label randomised once by RR at ``ε/m_u``
  (``UserLevelRR(eps).privatize(y, counts)``), then the exact debiased estimator over a
  bounded set (pure ε-DP per user, local).
* ``user_dpsgd``: user-wise DP-SGD (Poisson user sampling, per-user averaged and clipped
  gradients, Gaussian noise once per step; ``(ε, δ)`` per user from the RDP accountant).
* ``aup_rlhf``: AUP-RLHF / AdapUserPriv-SGD (AboveThreshold concentration test, outlier-robust
  mean, Gaussian noise; ``(ε, δ)`` as claimed by the paper).
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from . import _arrays, _ints, _native
from ._local import _labels_or_private
from ._results import Fit
from .errors import DtypeError, ParameterError, ShapeError
from .mechanisms import _seed

__all__ = ["fit_user_rr", "user_dpsgd", "aup_rlhf"]


def _counts(counts: Any) -> List[int]:
    """Per-user comparison counts as a list of non-negative ints (the engine checks that they
    are positive and sum to n)."""
    c = np.asarray(counts)
    if c.dtype.kind not in "iu":
        raise DtypeError(f"counts must be an integer array (comparisons per user), got dtype {c.dtype}")
    if c.ndim != 1:
        raise ShapeError(f"shape error: counts must be 1-dimensional, got shape {c.shape}")
    if c.size and (c < 0).any():
        u = int(np.flatnonzero(c < 0)[0])
        err = ParameterError(f"invalid parameter `counts`: user {u} has a negative count ({int(c[u])})")
        err.name = "counts"
        raise err
    return [int(v) for v in c]


def _count(name: str, v: Any) -> int:
    """A non-negative integer parameter (the engine checks its own lower bound)."""
    return _ints.count(v, name)


def _x(x: Any) -> np.ndarray:
    return _arrays.features(x, 2)


def _theta0(theta0: Any, d: int) -> Optional[list]:
    return _arrays.vector(theta0, d, "theta0")


def fit_user_rr(
    x: Any,
    y_private: Any,
    counts: Sequence[int],
    *,
    eps: float,
    constraint: str = "theta-b",
    radius: Optional[float] = None,
    solver: str = "newton",
    tol: float = 1e-10,
    tol_abs: float = 0.0,
    max_iter: int = 100,
    memory: Optional[int] = None,
    polish_iters: Optional[int] = None,
    threads: Optional[int] = None,
) -> Fit:
    """The user-level debiased RR estimator (Zhang et al. (2025), Sec. 4.1, eq. 2), exactly.

    On labels ``ỹ`` randomised by user-level RR at user budget ``ε`` (row ``i`` of user ``u``
    flipped with probability ``σ(−ε/m_u)``), minimises over the feasible set

    ``ℓ̂(θ) = (1/N) Σ_i [c_i softplus(s_i) + σ̄_i s_i]``, ``s_i = (1−2ỹ_i) x_iᵀθ``,
    ``c_i = tanh(ε/(2m_u))``, ``σ̄_i = σ(−ε/m_u)``

    — the debiased loss of Chowdhury, Zhou & Natarajan (2024) at ``ε/m_u`` — and returns the
    minimiser with its KKT certificate. The loss is unbounded below: give a bounded set.

    Parameters
    ----------
    x : array (n, d)
        Feature differences (float64 or float32, read in place when C-contiguous).
    y_private : PrivatizedLabels or array (n,)
        Labels from ``UserLevelRR(eps).privatize(y, counts)``: their provenance is checked (the
        mechanism must be user-level RR at this ``eps`` with these ``counts``, else
        ``ProvenanceError``) and the fit carries their guarantee (pure ε-DP per user, local).
        A plain array of 0/1 labels is fitted without a guarantee.
    counts : sequence of int
        ``m_u`` for each user, in row order (positive, summing to n).
    eps : float
        The user budget ``ε`` the labels were randomised with.
    constraint : {"theta-b", "ball", "sum-zero", "none"}
        The feasible set (default ``Θ_B = {Σθ = 0, ‖θ‖ ≤ B}``); ``radius`` is ``B``.
    solver : {"newton", "auto", "newton-cg", "lbfgs"}
        The exact solver (default Newton, the library's default for this estimator).
    tol, tol_abs, max_iter, memory, polish_iters
        The stopping rule and L-BFGS settings, as in ``fit``.
    threads : int, optional
        Worker threads.

    Returns
    -------
    Fit
        ``theta``, ``converged`` and ``certificate``; ``guarantee`` (unit ``user``) with
        privatised labels. Ctrl-C stops the solver at its next iteration.
    """
    xa = _x(x)
    n = xa.shape[0]
    ya, private = _labels_or_private(y_private, n)
    out = _native.fit_user_rr(
        xa,
        ya,
        private,
        _counts(counts),
        float(eps),
        constraint,
        None if radius is None else float(radius),
        solver,
        float(tol),
        float(tol_abs),
        _ints.count(max_iter, "max_iter"),
        _ints.opt_count(memory, "memory"),
        _ints.opt_count(polish_iters, "polish_iters"),
        _ints.threads(threads),
    )
    return Fit._from_native(out)


def user_dpsgd(
    x: Any,
    y: Any,
    counts: Sequence[int],
    *,
    eps: float,
    delta: float,
    expected_users: float,
    steps: int,
    clip: float,
    lr: float,
    loss: str = "mle",
    loss_eps: Optional[float] = None,
    noise_multiplier: Optional[float] = None,
    records_per_user: Optional[int] = None,
    sampler: str = "poisson",
    constraint: str = "none",
    radius: Optional[float] = None,
    theta0: Any = None,
    output: str = "last",
    neighbours: str = "replace",
    conversion: str = "improved",
    accountant: str = "rdp",
    seed: Optional[int] = None,
    threads: Optional[int] = None,
) -> Fit:
    """User-wise DP-SGD (Zhang et al. (2025), App. B.1 Alg. 4, after Chua et al. (2024)).

    With ``q = ñ/U`` and ``σ`` the smallest noise multiplier whose accountant gives at most
    ``ε`` at ``δ`` after ``T`` steps, each step

    ``U_t ← each user with probability q``;
    ``g_u = (1/m_u) Σ_{j∈u} ℓ'(x_jᵀθ_t; y_j) x_j``;  ``ĝ_u = g_u / max(1, ‖g_u‖/C)``;
    ``θ_{t+1} = Π(θ_t − η (Σ_{u∈U_t} ĝ_u + N(0, σ²C²I)) / ñ)``

    (the noise is added to the sum before dividing by ``ñ``; the paper prints it after, ``ñ``
    times too much for the sensitivity ``C/ñ`` of the mean). Each step is a Poisson-subsampled
    Gaussian mechanism on clipped per-user vectors, so the guarantee is ``(ε_acc, δ)`` per user
    with ``ε_acc ≤ ε``.

    Parameters
    ----------
    x : array (n, d)
        Feature differences (float64 or float32).
    y : array (n,)
        Clear labels in {0, 1}.
    counts : sequence of int
        ``m_u`` per user, in row order (positive, summing to n).
    eps, delta : float
        The target ``(ε, δ)`` per user.
    expected_users : float
        ``ñ``, the expected users per step (``0 < ñ ≤ U``; ``q = ñ/U``).
    steps : int
        ``T``.
    clip : float
        ``C``, the clip norm of a user's averaged gradient.
    lr : float
        ``η``, the constant step size.
    loss : {"mle", "probit", "mle-rr", "debiased-rr"}
        The pairwise loss of the per-user gradients (default the BTL negative log-likelihood,
        ``ℓ' = σ(t) − y``); ``loss_eps`` is the ε of the RR losses. Clipping bounds every user's
        contribution whatever the loss, so the guarantee does not depend on it.
    noise_multiplier : float, optional
        A fixed ``σ`` instead of the calibration (the guarantee then reports its ε).
    records_per_user : int, optional
        Records of each sampled user read per step (default all).
    sampler : {"poisson", "fixed-size"}
        Fixed-size sampling is the paper's pseudo-code; the accountant does not cover it, so the
        fit then has no guarantee (``refusal`` says why) unless ``ñ = U``.
    constraint, radius
        The projection after each step (default none).
    theta0 : array (d,), optional
        Start (default 0).
    output : {"last", "average", "tail-average"}
        The last iterate, the average of the iterates, or the average of the last half.
    neighbours : {"replace", "add-remove", "replace-sensitivity2", "replace-numeric"}
        The accountant's relation (default ``replace``: user-level label DP is a replace
        relation; ``add-remove`` is paper-faithful but understates the loss).
    conversion : {"improved", "classic"}
        RDP → (ε, δ) conversion.
    accountant : {"rdp", "pld"}
        Which accountant calibrates ``σ`` (and reports ε): Rényi DP (default) or the privacy
        loss distribution (connect-the-dots, pessimistic; tighter, so less noise for the same
        target). Under ``pld`` the replace relations use the antipodal pair, a numerical finding
        (the guarantee's ``neighbours_proven`` says so); ``add-remove`` is proven under both.
    seed : int, optional
        ``None``: the OS-seeded CSPRNG; an integer: the seeded simulation generator (the
        guarantee says simulation only).
    threads : int, optional
        Worker threads.

    Returns
    -------
    Fit
        ``theta``, ``termination="completed"`` (fixed budget, no certificate), ``guarantee``
        (central, unit ``user``, label change) and ``detail``: ``noise_multiplier``,
        ``noise_std`` (per coordinate on the averaged gradient), ``accounting`` (the
        accountant's ε, best order, ...).

    The GIL is released while the run goes; Ctrl-C stops the run at its next interrupt check
    (every 256 steps) and raises ``KeyboardInterrupt`` once it has stopped; no fit is returned.
    """
    xa = _x(x)
    n, d = xa.shape
    out = _native.user_dpsgd(
        xa,
        _arrays.labels(y, n),
        _counts(counts),
        float(eps),
        float(delta),
        float(expected_users),
        _count("steps", steps),
        float(clip),
        float(lr),
        loss,
        None if loss_eps is None else float(loss_eps),
        None if noise_multiplier is None else float(noise_multiplier),
        None if records_per_user is None else _count("records_per_user", records_per_user),
        sampler,
        constraint,
        None if radius is None else float(radius),
        _theta0(theta0, d),
        output,
        neighbours,
        conversion,
        accountant,
        _seed(seed),
        _ints.threads(threads),
    )
    return Fit._from_native(out)


def aup_rlhf(
    x: Any,
    y: Any,
    counts: Sequence[int],
    *,
    eps: float,
    delta: float,
    feature_bound: float,
    phases: int = 1,
    use_all_users: Optional[bool] = None,
    expected_users: Optional[float] = None,
    steps: int = 200,
    lr: float = 0.5,
    tau: Optional[float] = None,
    sampler: str = "poisson",
    at_calibration: str = "corrected",
    realized_batch: bool = False,
    constraint: str = "none",
    radius: Optional[float] = None,
    theta0: Any = None,
    noise_multiplier: Optional[float] = None,
    neighbours: str = "replace",
    conversion: str = "improved",
    accountant: str = "rdp",
    seed: Optional[int] = None,
    threads: Optional[int] = None,
) -> Fit:
    """AUP-RLHF (Zhang et al. (2025), Alg. 1–2): AdapUserPriv-SGD on phases of users.

    The users are split into ``phases`` parts ``n_i = ⌊U/2^{k+1−i}⌋`` (in user order) and each
    runs AdapUserPriv-SGD, warm-started from the previous phase. Per phase, with ``σ``
    calibrated to ``(ε/2, δ/2)`` and one AboveThreshold instance at ``ε/2`` (threshold
    ``4ñ/5``, sensitivity 2):

    ``s_t = (1/max(ñ,|U_t|)) Σ_{u,v∈U_t} 1(‖g_u − g_v‖ ≤ τ)``; halt if AboveThreshold says so;
    ``f_u = Σ_v 1(‖g_v − g_u‖ ≤ 2τ)``, keep ``u`` with probability
    ``clip((f_u − ñ/2)/(ñ/6), 0, 1)``;
    ``g̃_t = mean of the kept g_u + N(0, (2√2 τ σ √(ln(e^ε T/δ)) / ñ)² I)``;
    ``θ_{t+1} = Π(θ_t − η g̃_t)``

    and the average of the iterates is returned. The guarantee is ``(ε, δ)`` per user "as claimed
    by the paper" (the robust mean rests on the Liu & Asi (2024) analysis).

    Parameters
    ----------
    x, y, counts
        As in ``user_dpsgd`` (rows with ``‖x‖ > 2L`` are a ``DataError``).
    eps, delta : float
        The budget of each phase (phases use disjoint users).
    feature_bound : float
        ``L`` with ``‖φ‖ ≤ L`` (so ``‖x‖ ≤ 2L``).
    phases : int
        ``k`` (default 1, as in the paper's experiments).
    use_all_users : bool, optional
        Let the users the phase sizes leave out join the last phase (default: true for one
        phase).
    expected_users : float, optional
        ``ñ`` per step (default ``None``: every user of the phase each step).
    steps : int
        ``T`` per phase (default 200).
    lr : float
        ``η`` (default 0.5).
    tau : float, optional
        ``τ`` of the concentration test (default ``min(τ_theory, 4L)``).
    sampler : {"poisson", "fixed-size"}
        User sampling (fixed-size is not covered by the accountant).
    at_calibration : {"corrected", "paper"}
        AboveThreshold noise for sensitivity 2 (default) or the paper's constants (the test
        then costs up to ``2·ε/2``, which the guarantee records).
    realized_batch : bool
        Use ``|U_t|`` instead of ``ñ`` in the thresholds and the noise.
    constraint, radius, theta0, noise_multiplier, neighbours, conversion, accountant, seed, threads
        As in ``user_dpsgd``.

    Returns
    -------
    Fit
        ``theta``, ``termination="completed"``, ``guarantee`` (unit ``user``) and ``detail``:
        ``noise_multiplier``, ``noise_std``, ``accounting`` and ``halted``
        (``{"phase", "step"}`` if AboveThreshold stopped the run, else ``None``).

    The GIL is released while the run goes; Ctrl-C stops the run at its next interrupt check
    (before each phase and every 256 steps) and raises ``KeyboardInterrupt`` once it has
    stopped; no fit is returned.
    """
    xa = _x(x)
    n, d = xa.shape
    out = _native.aup_rlhf_fit(
        xa,
        _arrays.labels(y, n),
        _counts(counts),
        float(eps),
        float(delta),
        float(feature_bound),
        _count("phases", phases),
        use_all_users,
        None if expected_users is None else float(expected_users),
        _count("steps", steps),
        float(lr),
        None if tau is None else float(tau),
        sampler,
        at_calibration,
        bool(realized_batch),
        constraint,
        None if radius is None else float(radius),
        _theta0(theta0, d),
        None if noise_multiplier is None else float(noise_multiplier),
        neighbours,
        conversion,
        accountant,
        _seed(seed),
        _ints.threads(threads),
    )
    return Fit._from_native(out)
