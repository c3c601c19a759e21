"""Ctrl-C stops the stochastic estimators (label-private SGD, LP-MST, user-wise DP-SGD,
AUP-RLHF) inside the library, not when they return: each run below takes several seconds
uninterrupted (checked against a time budget), and `KeyboardInterrupt` must arrive well before
that. The module works afterwards."""

from __future__ import annotations

import _thread
import threading
import time

import numpy as np
import pytest

import privpref

# When the interrupt is sent, and how soon after it the call must have returned. The runs
# check their flag every 256 steps (at most ~0.15 s here), so two seconds are generous on a
# loaded machine.
FIRE_AFTER = 0.3
STOP_WITHIN = 2.0


def _interrupt(call):
    """Runs `call()` with Ctrl-C sent after FIRE_AFTER seconds; returns the seconds it took to
    raise KeyboardInterrupt."""
    timer = threading.Timer(FIRE_AFTER, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        timer.join()
    return time.perf_counter() - start


def _label_data(n=20_000, d=60, k=20, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    y = rng.integers(0, k, size=n).astype(np.uint8)
    return x, y


# LP-Normal-SGD projects each sample's K candidate gradients onto their subspace (about 0.6 ms a
# step with K = 20, d = 60): a one-pass run over these samples takes about ten seconds.
_LP_KW = dict(
    loss="softmax",
    k=20,
    mechanism="normal",
    eps=1.0,
    delta=1e-6,
    constraint="ball",
    radius=5.0,
    step="const:0.001",
    seed=0,
    threads=1,
)


def _user_data(users=200, per_user=5, d=10, seed=1):
    rng = np.random.default_rng(seed)
    n = users * per_user
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = (rng.random(n) < 0.5).astype(np.uint8)
    return x, y, [per_user] * users


# Two million steps on 200 users (about 20 sampled per step): far longer than the budget.
_DP_KW = dict(eps=2.0, delta=1e-5, expected_users=20.0, steps=2_000_000, clip=1.0, lr=0.01, seed=0, threads=1)


def test_ctrl_c_interrupts_label_private_sgd():
    x, y = _label_data()
    elapsed = _interrupt(lambda: privpref.label_private_sgd(x, y, **_LP_KW))
    assert elapsed < FIRE_AFTER + STOP_WITHIN, f"label_private_sgd took {elapsed:.2f} s to stop"
    # The run really is long: a tenth of the samples alone takes a good share of the budget.
    start = time.perf_counter()
    fit = privpref.label_private_sgd(x[:2000], y[:2000], **_LP_KW)
    short = time.perf_counter() - start
    assert fit.termination == "completed" and fit.guarantee is not None
    assert 10 * short > FIRE_AFTER + STOP_WITHIN, f"the full run would take only ~{10 * short:.2f} s"


def test_ctrl_c_interrupts_multi_stage():
    x, y = _label_data(n=400_000, d=20, k=20)
    kw = dict(loss="softmax", k=20, eps=1.0, stages=2, constraint="ball", radius=5.0, seed=0, threads=1)
    elapsed = _interrupt(lambda: privpref.multi_stage(x, y, **kw))
    assert elapsed < FIRE_AFTER + STOP_WITHIN, f"multi_stage took {elapsed:.2f} s to stop"
    fit = privpref.multi_stage(x[:2000], y[:2000], **kw)
    assert fit.termination == "completed" and fit.guarantee is not None


def test_ctrl_c_interrupts_user_dpsgd():
    x, y, counts = _user_data()
    elapsed = _interrupt(lambda: privpref.user_dpsgd(x, y, counts, **_DP_KW))
    assert elapsed < FIRE_AFTER + STOP_WITHIN, f"user_dpsgd took {elapsed:.2f} s to stop"
    # The module works afterwards, and the run is long: 1% of its steps takes a good share of
    # the budget.
    kw = dict(_DP_KW, steps=_DP_KW["steps"] // 100)
    start = time.perf_counter()
    fit = privpref.user_dpsgd(x, y, counts, **kw)
    short = time.perf_counter() - start
    assert fit.termination == "completed" and fit.guarantee is not None
    assert 100 * short > FIRE_AFTER + STOP_WITHIN, f"the full run would take only ~{100 * short:.2f} s"


def test_ctrl_c_interrupts_aup_rlhf():
    # The full batch of 200 users: the concentration score exceeds its threshold by 40, far
    # beyond AboveThreshold's noise, so the run does not halt by itself.
    x, y, counts = _user_data()
    kw = dict(eps=4.0, delta=1e-5, feature_bound=0.6, steps=2_000_000, lr=0.01, seed=0, threads=1)
    elapsed = _interrupt(lambda: privpref.aup_rlhf(x, y, counts, **kw))
    assert elapsed < FIRE_AFTER + STOP_WITHIN, f"aup_rlhf took {elapsed:.2f} s to stop"
    # The module works afterwards, and the run is long: 1/400 of its steps, not halted, takes a
    # good share of the budget.
    start = time.perf_counter()
    fit = privpref.aup_rlhf(x, y, counts, **dict(kw, steps=kw["steps"] // 400))
    short = time.perf_counter() - start
    assert fit.termination == "completed" and fit.detail["halted"] is None
    assert 400 * short > FIRE_AFTER + STOP_WITHIN, f"the full run would take only ~{400 * short:.2f} s"
