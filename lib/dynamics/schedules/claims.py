"""Schedules and weight averaging: the page's numbers and the claims table (``claims``, ``published_claims``)."""
from __future__ import annotations

__all__ = ["page_claims", "published_claims"]


def published_claims() -> list[dict]:
    """The claims table evaluated on the published (cpu) data in ``data/``: rows made with
    :func:`dynamics.plots.claims.claim` (each names its control, window and seeds);
    tests/test_published_claims.py asserts every row the prose asserts."""
    raise NotImplementedError("schedules: write the chapter's claims (see another theme's claims)")


def page_claims(*args, **kwargs) -> list[dict]:
    """The page's claims table, judged by :mod:`dynamics.evidence` on seeds 0-2."""
    raise NotImplementedError("schedules: the claims table is written with the sections")
