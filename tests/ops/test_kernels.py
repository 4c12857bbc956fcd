"""dynamics_ops.kernels: launches per step of the code here against another commit's. Known
answer: against this very commit, both sides count the same launches."""
from __future__ import annotations

import subprocess

import pytest

from dynamics_ops import kernels


def test_against_the_same_code_every_count_is_equal():
    head = subprocess.run(["git", "-C", str(kernels.ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode:
        pytest.fail(f"the test needs the repository's git history: {head.stderr}")
    result = kernels.compare(head.stdout.strip(), tiny=True, repeats=1)
    assert set(result) == set(kernels.RUNNERS)
    for name, r in result.items():
        assert r["before"]["launches"] == r["after"]["launches"] > 0, name
        assert r["before"]["seconds"] > 0 and r["after"]["seconds"] > 0
    assert "1.00x" in kernels.table(result, "HEAD")


def test_an_unknown_commit_is_a_clear_error():
    with pytest.raises(SystemExit, match="--against nosuchcommit: not a commit"):
        kernels.compare("nosuchcommit", tiny=True, repeats=1)
