"""Schedules and weight averaging: the method itself: configs, models, measures (no plotting, no training loops)."""
from __future__ import annotations

__all__ = []
