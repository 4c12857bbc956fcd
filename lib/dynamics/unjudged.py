"""The claims rows not yet moved onto the claims engine (issue 38), by theme: none now. Every
row of every chapter is judged by the engine (``tests/test_claims_engine.py`` holds the ledger
empty); the tests that render a table of hand-made rows name theirs here for their duration.

A claims row made without the engine's numbers (``evidence``: :func:`dynamics.evidence.judge`)
must start with one of these statements' openings, or :func:`dynamics.evidence.audit` refuses
it. The list only shrinks: ``tests/test_claims_engine.py`` holds each entry to a statement
still written in its theme's code, so the entry of a row moved onto the engine must go with it.
"""
NOT_YET_JUDGED: dict[str, tuple[str, ...]] = {}
