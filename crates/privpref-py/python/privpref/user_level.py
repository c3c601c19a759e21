"""User-level label DP (Zhang et al. (2025)): user-level RR with the exact debiased estimator, user-wise DP-SGD, AUP-RLHF."""

from __future__ import annotations

__all__: list = []
