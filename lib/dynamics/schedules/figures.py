"""Schedules and weight averaging: static figures, sliders and tables."""
from __future__ import annotations

__all__ = []
