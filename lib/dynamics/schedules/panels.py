"""Schedules and weight averaging: live panels (``*_panel``): a figure the reader re-runs with widgets."""
from __future__ import annotations

__all__ = []
