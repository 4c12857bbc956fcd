"""dynamics_ops.kernels: launches per step and numbers of the code here against another
commit's. Known answer: against this very commit with one constructed change, a loss scaled
by 1.5 inside train(), the two runners that train through train() count exactly two launches
a step more (the forward's multiply and its backward) and give other numbers; the runner
that trains through train_many counts the same and gives the same numbers."""
from __future__ import annotations

import subprocess

import pytest

from dynamics_ops import kernels


def _scale_the_loss(lib):
    path = lib / "dynamics" / "train.py"
    text = path.read_text()
    line = "            loss_value = loss_fn(out, yb)\n"
    assert text.count(line) == 1, "train()'s loss line moved: update this test's patch"
    path.write_text(text.replace(line, "            loss_value = loss_fn(out, yb) * 1.5\n"))


def test_a_constructed_change_is_counted_and_seen_on_the_runners_it_touches():
    head = subprocess.run(["git", "-C", str(kernels.ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode:
        pytest.fail(f"the test needs the repository's git history: {head.stderr}")
    result = kernels.compare(head.stdout.strip(), tiny=True, repeats=1, patch=_scale_the_loss)
    assert list(result) == list(kernels.RUNNERS)
    equilibrium, imp, grok = (result[n] for n in kernels.RUNNERS)
    for r in (equilibrium, grok):  # train(): two launches a step more, other numbers
        assert r["before"]["launches"] - r["after"]["launches"] == 2.0, r
        assert r["before"]["numbers"] != r["after"]["numbers"]
    assert imp["before"]["launches"] == imp["after"]["launches"] > 0  # train_many: untouched
    assert imp["before"]["numbers"] == imp["after"]["numbers"]
    for r in result.values():
        assert r["before"]["seconds"] > 0 and r["after"]["seconds"] > 0
    rows = kernels.table(result, "HEAD").splitlines()[2:]
    assert [row.endswith("| NO |") for row in rows] == [True, False, True]


def test_an_unknown_commit_is_a_clear_error():
    with pytest.raises(SystemExit, match="--against nosuchcommit: not a commit"):
        kernels.compare("nosuchcommit", tiny=True, repeats=1)
