# Type stub of the extension module privpref._native (crates/privpref-py/src). The public API is
# the Python package around it; these functions take the arrays the package has already
# checked (C-contiguous, exact dtypes) and return (theta, json) for the package's result types.
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class PrivatizedLabels:
    @property
    def labels(self) -> npt.NDArray[np.uint8]: ...
    @property
    def provenance_json(self) -> str: ...
    @property
    def guarantee_json(self) -> str: ...
    def __len__(self) -> int: ...

FitOut = Tuple[npt.NDArray[np.float64], str]

def fit(
    x: npt.NDArray[np.floating],
    y: Optional[npt.NDArray[np.uint8]],
    labels: Optional[PrivatizedLabels],
    weights: Optional[npt.NDArray[np.float64]],
    loss: str,
    eps: Optional[float],
    constraint: str,
    radius: Optional[float],
    ridge: float,
    linear_term: Optional[List[float]],
    theta0: Optional[List[float]],
    solver: str,
    tol: float,
    tol_abs: float,
    max_iter: int,
    memory: Optional[int],
    polish_iters: Optional[int],
    batch: Optional[int],
    epochs: Optional[int],
    step: Optional[str],
    shuffle: bool,
    average: Optional[str],
    seed: Optional[int],
    threads: Optional[int],
    progress: Optional[Callable[[Dict[str, Any]], None]] = ...,
) -> FitOut: ...
def fit_kwise_dense(
    x: npt.NDArray[np.float64],
    index: Optional[npt.NDArray[np.uint32]],
    y: Optional[npt.NDArray[np.uint8]],
    labels: Optional[PrivatizedLabels],
    weights: Optional[npt.NDArray[np.float64]],
    loss: str,
    eps: Optional[float],
    top: Optional[int],
    constraint: str,
    radius: Optional[float],
    ridge: float,
    theta0: Optional[List[float]],
    solver: str,
    tol: float,
    tol_abs: float,
    max_iter: int,
    memory: Optional[int],
    polish_iters: Optional[int],
    batch: Optional[int],
    epochs: Optional[int],
    step: Optional[str],
    shuffle: bool,
    average: Optional[str],
    seed: Optional[int],
    threads: Optional[int],
) -> FitOut: ...
def fit_dpo(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.uint8],
    eps: Optional[float],
    beta: float,
    theta_sft: List[float],
    radius: float,
    threads: Optional[int] = None,
) -> FitOut: ...
def _feature_address(x: npt.NDArray[np.floating]) -> int: ...
def privatize_rr(y: npt.NDArray[np.uint8], eps: float, seed: Optional[int] = None) -> PrivatizedLabels: ...
def privatize_krr(y: npt.NDArray[np.uint8], eps: float, k: int, seed: Optional[int] = None) -> PrivatizedLabels: ...
def privatize_rr_top_k(
    y: npt.NDArray[np.uint8], eps: float, k: int, priors: npt.NDArray[np.float64], seed: Optional[int] = None
) -> PrivatizedLabels: ...
def privatize_rr_with_prior(
    y: npt.NDArray[np.uint8], eps: float, priors: npt.NDArray[np.float64], seed: Optional[int] = None
) -> Tuple[PrivatizedLabels, List[int]]: ...
def privatize_user_rr(
    y: npt.NDArray[np.uint8], counts: List[int], eps: float, seed: Optional[int] = None
) -> PrivatizedLabels: ...
def asserted_labels(
    y: npt.NDArray[np.uint8],
    mechanism: str,
    eps: float,
    k: Optional[int] = None,
    num_labels: Optional[int] = None,
    counts: Optional[List[int]] = None,
) -> PrivatizedLabels: ...

class SigningKey:
    @staticmethod
    def generate() -> "SigningKey": ...
    @staticmethod
    def from_pem(pem: str) -> "SigningKey": ...
    def to_pem(self) -> str: ...
    @property
    def public_key_pem(self) -> str: ...
    @property
    def key_id(self) -> str: ...

def sign_record(labels: PrivatizedLabels, file_bytes: bytes, labels_file: str, key: SigningKey) -> str: ...
def verify_record(
    y: npt.NDArray[np.uint8], record_json: str, file_bytes: bytes, trusted_pems: List[str]
) -> Tuple[PrivatizedLabels, str, Optional[str]]: ...

# --- central, accounting, policy, label_sgd, user_level: below ---
def objective_perturbation(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.uint8],
    eps: float,
    delta: float,
    feature_bound: float,
    beta: Optional[float],
    constraint: str,
    radius: Optional[float],
    horizon: Optional[int],
    kkt_tol: Optional[float],
    output_radius: Optional[float],
    output_eps: Optional[float],
    output_delta: Optional[float],
    allow_unguaranteed: bool,
    seed: Optional[int],
    tol: float,
    tol_abs: float,
    max_iter: int,
    threads: Optional[int],
) -> FitOut: ...
def private_mle(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.uint8],
    eps: float,
    delta: float,
    feature_bound: float,
    constraint: str,
    radius: Optional[float],
    horizon: Optional[int],
    eta: Optional[float],
    alpha: Optional[float],
    accuracy: Optional[float],
    allow_unguaranteed: bool,
    seed: Optional[int],
    tol: float,
    tol_abs: float,
    max_iter: int,
    threads: Optional[int],
) -> FitOut: ...
def private_covariance(
    x: npt.NDArray[np.floating],
    eps: float,
    delta: float,
    feature_bound: float,
    relation: str,
    eigen_floor: Optional[float],
    horizon: Optional[int],
    seed: Optional[int],
) -> Tuple[npt.NDArray[np.float64], str]: ...
def rdp_epsilon(
    sampling_rate: float,
    noise_multiplier: float,
    steps: int,
    delta: float,
    neighbours: str,
    conversion: str,
    accounting: str,
    orders: Union[None, str, Sequence[float]] = None,
) -> str: ...
def calibrate_noise(
    sampling_rate: float,
    steps: int,
    delta: float,
    epsilon: float,
    neighbours: str,
    conversion: str,
    accounting: str,
    orders: Union[None, str, Sequence[float]] = None,
) -> str: ...
def policy(
    theta: List[float],
    states: npt.NDArray[np.float64],
    fit_info: str,
    x: Optional[npt.NDArray[np.floating]],
    covariance: Optional[npt.NDArray[np.float64]],
    greedy: bool,
    eta: float,
    radius_multiplier: float,
    lambda_multiplier: float,
    lam: Optional[float],
    confidence_radius: Optional[float],
    set: Optional[str],
    radius: Optional[float],
    reference_actions: Optional[npt.NDArray[np.uint32]],
    reference_vector: Optional[npt.NDArray[np.float64]],
    weights: Optional[npt.NDArray[np.float64]],
    tol: float,
    max_passes: int,
    strict_gap: bool,
    threads: Optional[int],
) -> Tuple[npt.NDArray[np.uint32], str]: ...
def label_sgd(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.uint8],
    loss: str,
    k: Optional[int],
    mechanism: str,
    eps: float,
    delta: Optional[float],
    top_k: Optional[int],
    prior: Optional[npt.NDArray[np.float64]],
    clusters: Optional[npt.NDArray[np.uint32]],
    prior_eps: Optional[float],
    sigma_rule: Optional[str],
    sensitivity: Optional[float],
    constraint: str,
    radius: Optional[float],
    step: Optional[str],
    lipschitz: Optional[float],
    debias: bool,
    theta0: Optional[List[float]],
    stages: Optional[int],
    stage_fractions: Optional[List[float]],
    temperature: Optional[float],
    reuse: bool,
    seed: Optional[int],
    threads: Optional[int],
) -> FitOut: ...
def fit_user_rr(
    x: npt.NDArray[np.floating],
    y: Optional[npt.NDArray[np.uint8]],
    labels: Optional[PrivatizedLabels],
    counts: List[int],
    eps: float,
    constraint: str,
    radius: Optional[float],
    solver: str,
    tol: float,
    tol_abs: float,
    max_iter: int,
    memory: Optional[int],
    polish_iters: Optional[int],
    threads: Optional[int],
) -> FitOut: ...
def user_dpsgd(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.uint8],
    counts: List[int],
    eps: float,
    delta: float,
    expected_users: float,
    steps: int,
    clip: float,
    lr: float,
    loss: str,
    loss_eps: Optional[float],
    noise_multiplier: Optional[float],
    records_per_user: Optional[int],
    sampler_name: str,
    constraint: str,
    radius: Optional[float],
    theta0: Optional[List[float]],
    output: str,
    neighbours: str,
    conversion: str,
    accounting: str,
    seed: Optional[int],
    threads: Optional[int],
) -> FitOut: ...
def aup_rlhf_fit(
    x: npt.NDArray[np.floating],
    y: npt.NDArray[np.uint8],
    counts: List[int],
    eps: float,
    delta: float,
    feature_bound: float,
    phases: int,
    use_all_users: Optional[bool],
    expected_users: Optional[float],
    steps: int,
    lr: float,
    tau: Optional[float],
    sampler_name: str,
    at_calibration: str,
    realized_batch: bool,
    constraint: str,
    radius: Optional[float],
    theta0: Optional[List[float]],
    noise_multiplier: Optional[float],
    neighbours: str,
    conversion: str,
    accounting: str,
    seed: Optional[int],
    threads: Optional[int],
) -> FitOut: ...
