"""Schedules and weight averaging: the chapter's runs (``run``) and, if it precomputes, ``precompute_plan``."""
from __future__ import annotations

__all__ = []
