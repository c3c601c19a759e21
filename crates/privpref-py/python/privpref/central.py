"""Central DP: objective perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2), the private MLE and the private covariance ("Provable protection of human judgements" (anon., 2024), Algorithms 1 and 2)."""

from __future__ import annotations

__all__: list = []
