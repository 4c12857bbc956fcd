"""The published data are the code's: every file in ``data/`` that a precompute writes records
the digest of the code it depends on, which must be the current code's, and keeps a sample
unit, which the current code must compute again to the file's own tolerance
(:mod:`dynamics_ops.verify`; the mechanism's own tests are in test_verify.py).

The files written before files kept a digest and a sample are listed below, each with the
command that regenerates it: the list can only shrink (a file regenerated must leave it, a
new file cannot join it), and the pages say under each of their figures that such a file is
not yet checked against the code (dynamics.results.describe).
"""
from __future__ import annotations

import subprocess
import sys

from dynamics import results
from dynamics_ops import verify

# written before data files recorded their code (issue 39): regenerate each with the command
# its check prints (python -m dynamics_ops.precompute <chapter> --profile cpu --only <file>)
NOT_YET_REGENERATED: set[str] = set()
BUDGET_S = 60  # seconds of samples computed again per CI run (cheapest first; recorded seconds)


def test_every_data_file_is_the_codes():
    known = verify.outputs()
    heads = {n: verify.check(n, compute=False, chapter=c) for n, c in known.items()}
    before = {n for n, r in heads.items() if r.source_file is None}
    assert before == NOT_YET_REGENERATED, (
        "the files without a recorded digest have changed: regenerated "
        f"{sorted(NOT_YET_REGENERATED - before)} (take them off NOT_YET_REGENERATED), new "
        f"{sorted(before - NOT_YET_REGENERATED)} (regenerate them)")
    checked = sorted(set(heads) - before)
    bad = [heads[n].line() for n in checked if not heads[n].ok]
    assert not bad, "data files that are not the current code's:\n" + "\n".join(bad)
    if checked:  # the samples, computed again at each file's profile in a process of its own
        out = subprocess.run([sys.executable, "-m", "dynamics_ops.verify", "--budget", str(BUDGET_S),
                              *checked], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr[-3000:]
        assert any("the code's" in line and "sample" in line for line in out.stdout.splitlines()) \
            or all(heads[n].timings for n in checked), out.stdout


def test_a_page_says_when_its_file_is_not_yet_checked_against_the_code():
    """Every file listed says so under its figures; and a file's provenance without a recorded
    digest (constructed from a published file's, its digest removed) says so too, where the
    same provenance with its digest does not."""
    for name in NOT_YET_REGENERATED:
        _, prov = results.load(name)
        assert "Not yet checked against the current code" in results.describe(prov), name
    _, prov = results.load("grokking_phase")
    assert "Not yet checked against the current code" not in results.describe(prov)
    unchecked = {k: v for k, v in prov.items() if k != "source"}
    assert "Not yet checked against the current code" in results.describe(unchecked)
