"""The claims rows not yet moved onto the claims engine (issue 38), by theme.

A claims row made without the engine's numbers (``evidence``: :func:`dynamics.evidence.judge`)
must start with one of these statements' openings, or :func:`dynamics.evidence.audit` refuses
it. The list only shrinks: ``tests/test_claims_engine.py`` holds each entry to a statement
still written in its theme's code, so the entry of a row moved onto the engine must go with it.
"""
NOT_YET_JUDGED: dict[str, tuple[str, ...]] = {}
