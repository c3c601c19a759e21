"""Pessimistic and greedy policies over a public state sample, with a certified duality gap."""

from __future__ import annotations

__all__: list = []
