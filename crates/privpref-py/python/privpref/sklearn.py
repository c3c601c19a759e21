"""scikit-learn estimators: Bradley–Terry–Luce reward models under label or central DP.

Import this module explicitly (``import privpref.sklearn``); scikit-learn is an optional
dependency of privpref (``pip install privpref[sklearn]``) and ``import privpref`` never loads it.

The estimators are binary classifiers on pairwise features: a row of ``X`` is the feature
difference ``x = φ(s, a¹) − φ(s, a⁰)`` of a pair of responses, and class 1 (the larger of the two
labels, in sorted order) means "the first response ``a¹`` is preferred". Under the
Bradley–Terry–Luce (BTL) model ``P(y = 1 | x) = σ(xᵀθ)``, so ``decision_function(X) = X @ θ``
is the reward difference ``r(a¹) − r(a⁰)``.

* :class:`LabelDPRewardModel` — label differential privacy in the local model: the labels are
  randomised once with randomized response at ``eps`` inside ``fit`` and the debiased RR loss of
  Chowdhury, Zhou & Natarajan (2024) is minimised exactly (or ``eps=None``: the non-private
  maximum-likelihood estimate).
* :class:`CentralDPRewardModel` — central differential privacy by objective perturbation
  (Chowdhury, Zhou & Natarajan (2024), Algorithm 2) on clear labels held by a trusted curator.

Example (``X``: n × d feature differences of response pairs, ``y``: 1 where the first response
was preferred)::

    from privpref.sklearn import LabelDPRewardModel
    model = LabelDPRewardModel(eps=1.0, radius=5.0).fit(X, y)   # y randomised in fit (CSPRNG)
    model.guarantee_                                           # 1-DP per comparison (label LDP)
    model.predict_proba(X_new)[:, 1]                           # P(first response preferred)

    # Model selection spending ε once: privatise once, then fit the randomised array.
    y_rr = np.asarray(privpref.RandomizedResponse(1.0).privatize(y).labels)
    GridSearchCV(LabelDPRewardModel(eps=1.0, randomized_labels=True),
                 {"radius": [2, 5, 10]}).fit(X, y_rr)

Both follow scikit-learn's estimator API (``get_params`` / ``set_params``, ``clone``,
pipelines, ``cross_val_score``) and pass ``check_estimator`` except for the checks listed in
their ``_expected_failed_checks`` (randomised labels make those inapplicable; each entry says
why).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Dict, Optional

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted
except ImportError as e:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError(
        "privpref.sklearn needs scikit-learn >= 1.2: pip install 'privpref[sklearn]' (or scikit-learn)"
    ) from e

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:  # pragma: no cover - scikit-learn < 1.6
    _sk_validate_data = None

from . import _local
from ._results import Fit, Guarantee
from .errors import ParameterError, ShapeError
from .mechanisms import PrivatizedLabels, RandomizedResponse

__all__ = ["LabelDPRewardModel", "CentralDPRewardModel"]

_FLOATS = (np.float64, np.float32)


def _validate(est: Any, X: Any, y: Any = "no_validation", reset: bool = True, **kw: Any) -> Any:
    """scikit-learn's input validation (``validate_data`` from 1.6, ``_validate_data`` before):
    checks types, shapes, finiteness and sets or checks ``n_features_in_`` /
    ``feature_names_in_``."""
    if _sk_validate_data is not None:
        return _sk_validate_data(est, X, y, reset=reset, **kw)
    return est._validate_data(X, y, reset=reset, **kw)  # pragma: no cover


def _seed_from(random_state: Any) -> Optional[int]:
    """``None`` → ``None`` (the CSPRNG); an int → itself; a ``RandomState`` / ``Generator`` → a
    64-bit seed drawn from it (then the noise is a seeded simulation, as with an int)."""
    if random_state is None:
        return None
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        s = int(random_state)
        if not 0 <= s < 2**64:
            err = ParameterError(f"invalid parameter `random_state`: an int seed must be in 0..2^64, got {s}")
            err.name = "random_state"
            raise err
        return s
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    err = ParameterError(
        "invalid parameter `random_state`: None (OS-seeded CSPRNG), an int, a numpy RandomState "
        f"or a numpy Generator, got {random_state!r}"
    )
    err.name = "random_state"
    raise err


def _radius(constraint: str, radius: Optional[float]) -> Optional[float]:
    """The radius for the norm-bounded sets; ``None`` for the others (which take none), so that
    ``constraint="none"`` works without also setting ``radius=None``."""
    return radius if constraint in ("ball", "theta-b") else None


def _binary_targets(est: Any, y: np.ndarray, sample_weight: Optional[np.ndarray]) -> np.ndarray:
    """Set ``classes_`` (sorted) and return ``y`` mapped to 0/1 as uint8."""
    check_classification_targets(y)
    classes, y01 = np.unique(y, return_inverse=True)
    if classes.shape[0] > 2:
        raise ValueError(
            f"Only binary classification is supported: {type(est).__name__} is a pairwise "
            f"preference classifier, and y has "
            f"{classes.shape[0]} classes {classes.tolist()}; a K-wise comparison is privpref.fit_kwise"
        )
    present = classes
    if sample_weight is not None and (sample_weight >= 0).all():  # negative weights: privpref's DataError
        present = np.unique(y[sample_weight > 0])
    if present.shape[0] < 2:
        raise ValueError(
            f"{type(est).__name__} needs samples of 2 classes, but the data (the rows of "
            f"positive sample_weight) contains only one class: {present.tolist()}"
        )
    est.classes_ = classes
    return y01.reshape(-1).astype(np.uint8)


class _RewardModelBase(ClassifierMixin, BaseEstimator):
    """Shared prediction methods: ``decision_function = X @ θ``, ``predict_proba = σ(X @ θ)``."""

    # Set by fit.
    coef_: np.ndarray
    intercept_: np.ndarray
    classes_: np.ndarray
    fit_: Fit
    guarantee_: Optional[Guarantee]
    n_iter_: np.ndarray
    n_features_in_: int

    def _set_fit(self, fit: Fit) -> None:
        self.fit_ = fit
        self.coef_ = np.array(fit.theta, dtype=np.float64).reshape(1, -1)
        self.intercept_ = np.zeros(1)
        self.guarantee_ = fit.guarantee
        self.n_iter_ = np.array([max(int(fit.counts.get("iterations") or 0), 1)], dtype=np.int32)

    def decision_function(self, X: Any) -> np.ndarray:
        """The reward differences ``X @ θ`` (shape ``(n,)``): positive means class
        ``classes_[1]`` ("first response preferred") is the more likely."""
        check_is_fitted(self)
        X = _validate(self, X, reset=False, dtype=_FLOATS)
        return np.asarray(X @ self.coef_[0], dtype=np.float64)

    def predict_proba(self, X: Any) -> np.ndarray:
        """``[1 − σ(xᵀθ), σ(xᵀθ)]`` per row (shape ``(n, 2)``, columns in ``classes_`` order),
        the BTL probabilities; computed as ``(1 ∓ tanh(xᵀθ/2))/2`` for accuracy in both tails."""
        h = np.tanh(0.5 * self.decision_function(X))
        return np.column_stack([0.5 * (1.0 - h), 0.5 * (1.0 + h)])

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log predict_proba(X)``, computed stably as ``−log(1 + e^{∓xᵀθ})``."""
        t = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, t), -np.logaddexp(0.0, -t)])

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``xᵀθ > 0``, else ``classes_[0]``."""
        t = self.decision_function(X)  # checks fitted first
        return self.classes_[(t > 0).astype(np.intp)]

    def _warn_unconverged(self, fit: Fit) -> None:
        if not fit.converged:
            c = fit.certificate
            warnings.warn(
                f"{type(self).__name__}: {fit.solver} stopped without its KKT certificate "
                f"({fit.termination}; relative KKT residual {c.kkt_residual}, tolerance {c.kkt_tol}). "
                "For the debiased loss use a norm bound (constraint='ball' or 'theta-b' with a radius); "
                "for the MLE on separable data use a constraint or ridge; or raise max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )

    # scikit-learn >= 1.6 tags.
    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = False
        return tags

    # scikit-learn < 1.6 tags.
    def _more_tags(self) -> Dict[str, Any]:
        return {"binary_only": True, "_xfail_checks": self._expected_failed_checks()}

    def _expected_failed_checks(self) -> Dict[str, str]:
        return {}


class LabelDPRewardModel(_RewardModelBase):
    """A BTL reward model under ε-label differential privacy (local model, randomized response).

    ``fit(X, y)`` randomises each label once with binary randomized response at ``eps`` — keep
    it with probability ``σ(ε) = e^ε/(1 + e^ε)``, flip it otherwise (Chowdhury, Zhou & Natarajan
    (2024), eq. 2), an ε-label-LDP release per comparison — and then minimises, exactly, the
    debiased RR loss of the same paper (eqs. 4–5) on the randomised labels ``ỹ``:

        ``ℓ̂(θ; x, ỹ) = σ(ε)·softplus(s) − σ(−ε)·softplus(−s)``,  ``s = (1 − 2ỹ) xᵀθ``,

    whose expectation over the randomisation is ``tanh(ε/2)`` times the logistic loss of the
    clear labels. The loss is convex but can be unbounded below (a direction along which the
    randomised labels look separable — typical at small ``n`` or small ε): a minimiser is
    guaranteed only over a bounded set, hence the defaults ``constraint="ball", radius=5.0`` (``‖θ‖ ≤ 5``; the theory needs ``‖θ*‖ ≤ radius``, so pick
    ``radius`` from what is known about the scale of the reward). ``loss="mle-rr"`` instead
    maximises the likelihood of the noisy channel ``P(ỹ = 1 | x) = (1−σ(ε)) + (2σ(ε)−1)σ(xᵀθ)``
    (non-convex; a local minimiser is certified).

    ``eps=None`` fits the non-private maximum-likelihood estimate (logistic loss on the clear
    labels; ``loss`` is then ignored). With ``constraint="none"`` that is
    ``LogisticRegression(C=np.inf, fit_intercept=False)`` (no penalty, no intercept).

    If ``y`` is a :class:`privpref.PrivatizedLabels` (labels randomised elsewhere, e.g. by the
    users' devices with ``RandomizedResponse(eps).privatize``), it is used as it is — no second
    randomisation — and its ε must equal ``eps`` (else ``ProvenanceError``); ``classes_`` is then
    ``[0, 1]``. scikit-learn's model selection (``cross_val_score``, ``GridSearchCV``) slices
    ``y`` into plain arrays, which would be randomised again; for those, privatise once and pass
    the labels as an array with ``randomized_labels=True``.

    Parameters
    ----------
    eps : float or None, default=1.0
        The label-privacy budget ε > 0 of randomized response; ``None``: no privacy (MLE).
    loss : {"debiased-rr", "mle-rr"}, default="debiased-rr"
        The loss on the randomised labels.
    constraint : {"ball", "theta-b", "sum-zero", "none"}, default="ball"
        The feasible set: ``{‖θ‖ ≤ B}``, ``{Σθ = 0, ‖θ‖ ≤ B}``, ``{Σθ = 0}`` or ℝ^d.
    radius : float, default=5.0
        ``B``, the norm bound of ``"ball"`` and ``"theta-b"`` (ignored by the other sets).
    solver : {"auto", "newton", "newton-cg", "lbfgs"}, default="auto"
        ``auto`` picks the fastest certified solver for the loss and shape.
    tol : float, default=1e-10
        Relative KKT tolerance of the certificate.
    max_iter : int, default=100
        Solver iterations.
    random_state : None, int, RandomState or Generator, default=None
        The randomisation's noise. ``None`` (the default, and the only choice for real data)
        draws from the OS-seeded ChaCha20 CSPRNG. An int (or a seed drawn from a numpy
        ``RandomState`` / ``Generator``) uses privpref's seeded *simulation* generator:
        reproducible, but anyone who knows the seed can undo the randomisation, so the
        guarantee then holds for simulations only (``guarantee_.holds_for_real_data`` is
        ``False``).
    threads : int or None, default=None
        Worker threads of the fit (default: one per core); the result does not depend on it.
    randomized_labels : bool, default=False
        ``y`` (an array) was already randomised with randomized response at ``eps``, e.g.
        ``np.asarray(privpref.RandomizedResponse(eps).privatize(y).labels)``: fit it as it is,
        and the guarantee says "asserted by the caller". For cross-validation and grid search
        over one privatisation (the scores are then accuracies on randomised held-out labels,
        ``(1 − 2σ(−ε))·acc + σ(−ε)`` in expectation: the same ranking of models).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels in sorted order; ``classes_[1]`` is "first response preferred".
    coef_ : ndarray of shape (1, d)
        ``θ̂``, as ``LogisticRegression.coef_``.
    intercept_ : ndarray of shape (1,)
        Always ``[0.0]``: the BTL model has no intercept (swapping the two responses negates
        ``x`` and must swap the probabilities, ``P(y=1 | −x) = 1 − P(y=1 | x)``).
    fit_ : privpref.Fit
        The whole result: ``theta``, the KKT ``certificate``, ``counts``, ``guarantee``.
    guarantee_ : privpref.Guarantee or None
        ε-label-LDP per comparison (``None`` when ``eps=None``).
    n_iter_ : ndarray of shape (1,)
        Solver iterations (at least 1).
    n_features_in_ : int
        ``d``. ``feature_names_in_`` too when ``X`` has string column names.

    Notes
    -----
    Privacy accounting: every call to ``fit`` on clear labels draws a fresh randomisation, and
    by composition ``k`` fits on the same labels are ``kε``-label-DP, not ``ε`` (cross-validation
    refits!). To spend ε once, privatise once —
    ``yp = privpref.RandomizedResponse(eps).privatize(y)`` — and pass ``yp`` to every fit.
    ``classes_`` and the refusal of one-class data are computed from the clear labels: the label
    values (e.g. {0, 1}) are treated as public.
    """

    def __init__(
        self,
        eps: Optional[float] = 1.0,
        loss: str = "debiased-rr",
        constraint: str = "ball",
        radius: Optional[float] = 5.0,
        solver: str = "auto",
        tol: float = 1e-10,
        max_iter: int = 100,
        random_state: Any = None,
        threads: Optional[int] = None,
        randomized_labels: bool = False,
    ) -> None:
        self.eps = eps
        self.loss = loss
        self.constraint = constraint
        self.radius = radius
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.threads = threads
        self.randomized_labels = randomized_labels

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> "LabelDPRewardModel":
        """Randomise ``y`` once at ``eps`` (unless it is already ``PrivatizedLabels``, or
        ``eps=None``) and fit θ exactly.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Pairwise feature differences (float64 or float32; float32 is read as float32).
        y : array-like of shape (n,) with two distinct values, or PrivatizedLabels
            The preferences (the larger label = first response preferred).
        sample_weight : array-like of shape (n,), optional
            Frequency weights (weight 2 counts the row twice in the loss; the row is still
            randomised once).

        Returns
        -------
        self
        """
        if self.eps is None:
            loss, eps = "mle", None
        else:
            if self.loss not in ("debiased-rr", "mle-rr"):
                err = ParameterError(
                    f"invalid parameter `loss`: 'debiased-rr' or 'mle-rr' (eps=None fits the MLE), got {self.loss!r}"
                )
                err.name = "loss"
                raise err
            loss, eps = self.loss, float(self.eps)
        if self.randomized_labels and eps is None:
            err = ParameterError("invalid parameter `eps`: randomized_labels=True needs the ε of the randomisation")
            err.name = "eps"
            raise err
        if isinstance(y, PrivatizedLabels):
            if self.eps is None:
                err = ParameterError(
                    "invalid parameter `eps`: privatised labels need the ε of their mechanism, got eps=None"
                )
                err.name = "eps"
                raise err
            X = _validate(self, X, dtype=_FLOATS)
            if len(y) != X.shape[0]:
                raise ShapeError(f"shape error: the privatised labels have {len(y)} rows, X has {X.shape[0]}")
            sw = None if sample_weight is None else _check_sample_weight(sample_weight, X, dtype=np.float64)
            self.classes_ = np.array([0, 1])
            labels: Any = y
        else:
            X, y = _validate(self, X, y, dtype=_FLOATS)
            sw = None if sample_weight is None else _check_sample_weight(sample_weight, X, dtype=np.float64)
            y01 = _binary_targets(self, y, sw)
            if eps is None:
                labels = y01
            elif self.randomized_labels:
                labels = PrivatizedLabels.asserted(y01, "rr", eps)
            else:
                labels = RandomizedResponse(eps).privatize(y01, seed=_seed_from(self.random_state))
        fit = _local.fit(
            X,
            labels,
            loss=loss,
            eps=eps,
            constraint=self.constraint,
            radius=_radius(self.constraint, self.radius),
            weights=sw,
            solver=self.solver,
            tol=self.tol,
            max_iter=self.max_iter,
            threads=self.threads,
        )
        self._set_fit(fit)
        self._warn_unconverged(fit)
        return self

    def _expected_failed_checks(self) -> Dict[str, str]:
        """scikit-learn's checks that do not apply to a randomised-label fit, with the reason
        (``expected_failed_checks`` of ``parametrize_with_checks`` from scikit-learn 1.6, the
        ``_xfail_checks`` tag before). Only the sample-weight equivalences: randomized response
        draws one coin per row, so a row of weight 2 and the same row twice — or a row of weight
        0 and no row — see different coins."""
        if self.eps is None:
            return {}
        from sklearn.utils import estimator_checks as ec

        twice = (
            "a row of weight 2 is randomised once and the same row repeated twice is randomised "
            "twice, independently: the randomised labels, hence the fits, differ"
        )
        zeros = (
            "rows of weight 0 still take their coins of the randomisation stream, so removing them "
            "changes the other rows' randomised labels"
        )
        out = {}
        for name in ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence"):
            if hasattr(ec, name):
                out[name] = twice
        if hasattr(ec, "check_sample_weights_invariance"):  # scikit-learn < 1.6 (kind=zeros fails)
            new_api = "expected_failed_checks" in ec.parametrize_with_checks.__code__.co_varnames
            out["check_sample_weights_invariance(kind=zeros)" if new_api else "check_sample_weights_invariance"] = zeros
        return out


class CentralDPRewardModel(_RewardModelBase):
    """A BTL reward model under central (ε, δ)-differential privacy, by objective perturbation.

    A trusted curator holds the clear labels and releases

        ``θ̂ = argmin_{θ ∈ Θ} (1/n) Σᵢ ℓ(xᵢᵀθ; yᵢ) + (β/2n)‖θ‖² + (1/n)⟨b, θ⟩``,

    with ``ℓ`` the logistic loss and ``b`` Gaussian noise calibrated to ``eps``, ``delta``, the
    feature bound ``L`` and ``β`` (Chowdhury, Zhou & Natarajan (2024), Algorithm 2). The
    guarantee — (ε, δ)-DP for one comparison's label, replace-one neighbouring — needs the exact
    minimiser: privpref certifies it (relative KKT residual ≤ ``kkt_tol``) and refuses to release
    otherwise (``GuaranteeRefusedError``).

    Parameters
    ----------
    eps, delta : float, default=1.0, 1e-5
        The privacy budget.
    feature_bound : float, default=1.0
        ``L``, a *stated* bound on the feature vectors (``‖φ‖ ≤ L``, so ``‖x‖ ≤ 2L`` for a
        difference); never read from the data — it calibrates the noise, and a row with
        ``‖x‖ > 2L`` is a ``DataError`` (scale or clip your features first).
    beta : float or None, default=None
        The ridge ``β`` (at least the minimum the calibration needs); ``None``: privpref's
        default ``√n / B`` with ``B = radius``.
    constraint : {"ball", "theta-b", "sum-zero", "none"}, default="ball"
        The feasible set; ``radius`` is its ``B``.
    radius : float, default=5.0
    kkt_tol : float, default=1e-9
        The certified exactness tolerance of the guarantee (do not tighten it on real data
        without measuring the refusal rate).
    tol, max_iter : float, int or None, default=None
        The solver's stopping rule; ``None``: ``privpref.objective_perturbation``'s defaults.
    random_state : None, int, RandomState or Generator, default=None
        ``None``: OS-seeded CSPRNG (real data); a seed: simulation-only noise (the guarantee
        says ``holds_for_real_data=False``).
    threads : int or None, default=None

    Attributes
    ----------
    As :class:`LabelDPRewardModel`; ``guarantee_`` is the central (ε, δ) guarantee and
    ``intercept_`` is ``[0.0]`` (BTL has no intercept).

    Notes
    -----
    Only ``coef_`` (θ̂) is covered by the guarantee. ``fit_.report`` and ``fit_.certificate``
    describe the solve of the perturbed objective on the clear labels (objective value,
    multiplier, iterations): they are diagnostics for the curator, not for release.
    A refusal (``GuaranteeRefusedError``) depends on the data too; the library measured none at
    its defaults. Every ``fit`` is a fresh release: ``k`` fits on the same data compose to
    ``(kε, kδ)``. ``classes_`` (the label values) are treated as public. No ``sample_weight``:
    weights would change the sensitivity the noise is calibrated to.
    """

    def __init__(
        self,
        eps: float = 1.0,
        delta: float = 1e-5,
        feature_bound: float = 1.0,
        beta: Optional[float] = None,
        constraint: str = "ball",
        radius: Optional[float] = 5.0,
        kkt_tol: float = 1e-9,
        tol: Optional[float] = None,
        max_iter: Optional[int] = None,
        random_state: Any = None,
        threads: Optional[int] = None,
    ) -> None:
        self.eps = eps
        self.delta = delta
        self.feature_bound = feature_bound
        self.beta = beta
        self.constraint = constraint
        self.radius = radius
        self.kkt_tol = kkt_tol
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.threads = threads

    def fit(self, X: Any, y: Any) -> "CentralDPRewardModel":
        """Release θ̂ by objective perturbation on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Pairwise feature differences, ``‖x‖ ≤ 2 · feature_bound``.
        y : array-like of shape (n,) with two distinct values
            The clear preferences.

        Returns
        -------
        self
        """
        from .central import objective_perturbation

        X, y = _validate(self, X, y, dtype=_FLOATS)
        y01 = _binary_targets(self, y, None)
        solve = {k: v for k, v in (("tol", self.tol), ("max_iter", self.max_iter)) if v is not None}
        fit = objective_perturbation(
            X,
            y01,
            eps=float(self.eps),
            delta=float(self.delta),
            feature_bound=float(self.feature_bound),
            beta=self.beta,
            constraint=self.constraint,
            radius=_radius(self.constraint, self.radius),
            kkt_tol=self.kkt_tol,
            seed=_seed_from(self.random_state),
            threads=self.threads,
            **solve,
        )
        self._set_fit(fit)
        return self
