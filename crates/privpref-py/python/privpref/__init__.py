"""privpref: reward models from preference feedback under label differential privacy.

Exact, certified estimators on the privpref Rust engine: every fit returns the minimiser with
its KKT certificate, and the privacy guarantee that follows the labels' provenance.

>>> import numpy as np, privpref
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(5000, 4)); theta = np.array([1.0, -0.5, 0.25, 0.0])
>>> y = (rng.random(5000) < 1 / (1 + np.exp(-X @ theta))).astype(np.uint8)
>>> y_private = privpref.RandomizedResponse(eps=1.0).privatize(y)      # OS-seeded CSPRNG
>>> model = privpref.fit(X, y_private, loss="debiased-rr", eps=1.0, constraint="ball", radius=5)
>>> model.converged, model.guarantee.eps
(True, 1.0)
"""

from . import accounting, central, errors, label_sgd, policy, user_level
from .accounting import *  # noqa: F401,F403
from .central import *  # noqa: F401,F403
from .label_sgd import *  # noqa: F401,F403
from .policy import *  # noqa: F401,F403
from .user_level import *  # noqa: F401,F403
from ._native import __version__
from ._local import fit, fit_dpo, fit_kwise
from ._results import Certificate, Fit, Guarantee
from .mechanisms import (
    KaryRR,
    PrivatizedLabels,
    RandomizedResponse,
    RRTopK,
    RRWithPrior,
    SigningKey,
    UserLevelRR,
)

__all__ = [
    "__version__",
    "errors",
    "fit",
    "fit_kwise",
    "fit_dpo",
    "Fit",
    "Certificate",
    "Guarantee",
    "PrivatizedLabels",
    "SigningKey",
    "RandomizedResponse",
    "KaryRR",
    "RRTopK",
    "RRWithPrior",
    "UserLevelRR",
]
__all__ += accounting.__all__ + central.__all__ + label_sgd.__all__ + policy.__all__ + user_level.__all__
