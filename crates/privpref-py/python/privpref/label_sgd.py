"""Label-private SGD (Ghazi et al. (2021)): LP-RR-SGD, RRTop-k, RR-with-prior, LP-Normal-SGD, multi-stage training."""

from __future__ import annotations

__all__: list = []
