"""The RDP accountant of the Poisson-subsampled Gaussian: (ε, δ) of T steps, and the smallest noise multiplier for a target ε."""

from __future__ import annotations

__all__: list = []
