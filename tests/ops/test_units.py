"""dynamics.units and dynamics_ops.precompute: a precompute as units that survive a kill.

The unit tests run a toy plan in-process; the end-to-end test kills ``python -m
dynamics_ops.precompute all`` with SIGKILL once inside every chapter that precomputes, at a
random unit, resumes it (after corrupting one stored unit and truncating another), and
checks that every file it writes equals an uninterrupted run's, bit for bit, except the
fields that are clock readings. It runs the smoke profile as a dry run (``DYNAMICS_DRY_RUN=2``:
two steps per training, the ends of each grid), which goes through every unit and every
assembly at a fraction of the cost.
"""
from __future__ import annotations

import importlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dynamics import CHAPTERS, results, units
from dynamics.results import ROOT
from dynamics_ops.precompute import Runner
from dynamics_ops.verify import CLOCK  # payload fields that are clock readings

# provenance fields that describe the run rather than its results (with the CLOCK fields of
# the payload): everything else must be identical
RUN_FIELDS = {"date", "wall_time_s", "note", "sample"}  # sample: the cheapest unit, by the clock


# ----------------------------------------------------------------------------- a toy plan


def toy_plan(calls: list, values=(1, 2, 3, 4), scale: float = 1.0, profile: str = "smoke") -> Runner:
    """A toy chapter's plan (four squares), ready to run."""
    p = units.Plan("toy", profile)
    for v in p.grid(values):
        p.unit(f"square {v}", lambda v=v: calls.append(v) or dict(v=v, sq=scale * v * v),
               config=dict(v=v, scale=scale))
    p.output("toy_squares", lambda parts: dict(squares=[r["sq"] for r in parts.values()]),
             command="python -m dynamics_ops.precompute toy", note=lambda t: f"{len(t['results'])} units")
    return Runner(p)


def test_a_plan_stores_each_unit_and_reuses_it(out):
    calls = []
    paths = toy_plan(calls).run()
    assert calls == [1, 2, 3, 4] and paths == [out / "toy_squares.json"]
    assert json.loads(paths[0].read_text())["payload"] == {"squares": [1.0, 4.0, 9.0, 16.0]}
    assert len(list((out / "units" / "toy").glob("*.json"))) == 4
    again = []
    toy_plan(again).run()
    assert again == []  # every unit stored with a matching key: nothing recomputed
    changed = []
    toy_plan(changed, scale=2.0).run()  # another config: every key changed
    assert changed == [1, 2, 3, 4]
    assert json.loads(paths[0].read_text())["payload"] == {"squares": [2.0, 8.0, 18.0, 32.0]}


def test_units_may_live_elsewhere_than_the_results(out, monkeypatch, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("drive")
    monkeypatch.setenv("DYNAMICS_UNITS_DIR", str(elsewhere))
    toy_plan([]).run()
    assert len(list((elsewhere / "toy").glob("*.json"))) == 4 and not (out / "units").exists()
    assert (out / "toy_squares.json").exists()


def test_minutes_stop_after_the_unit_in_progress_and_say_what_is_left(out):
    calls, said = [], []
    p = toy_plan(calls)
    assert p.run(minutes=1e-9, log=said.append) == [] and calls == [] and p.left == 4
    assert "4 of 4 units left" in said[-1] and "run the same command again" in said[-1]
    p = toy_plan(calls)
    p.run(deadline=time.monotonic() + 3600)
    assert calls == [1, 2, 3, 4] and p.left == 0


def test_what_is_said_when_a_run_resumes_or_runs_out_of_time(out):
    """Counts, never an estimate of time (the units differ 20-fold in cost)."""
    said = []
    p = toy_plan([])
    p.run(deadline=0.0, log=said.append)  # out of time before the first unit
    assert said == ["toy: out of time with 4 of 4 units left; run the same command again to "
                    "continue"]
    p.compute(p.units[3])  # one unit done (in an earlier session)
    said.clear()
    p.run(deadline=0.0, log=said.append)
    assert said[0] == f"toy: 1 of 4 units already computed (in {out / 'units' / 'toy'}), 3 to go"


def test_a_corrupt_or_foreign_unit_file_is_named_and_recomputed(out):
    calls, said = [], []
    p = toy_plan(calls)
    p.run()
    first, second, third = (p.path(u) for u in p.units[:3])
    first.write_text(first.read_text()[:25])                           # truncated
    second.write_text("\x00garbage")                                   # corrupt
    blob = json.loads(third.read_text())
    blob["key"]["seed"] = 99                                           # another unit's key
    third.write_text(json.dumps(blob))
    calls.clear()
    toy_plan(calls).run(log=said.append)
    assert calls == [1, 2, 3]
    assert sum(str(first) in s and "corrupt or truncated" in s for s in said) == 1
    assert sum(str(second) in s and "corrupt or truncated" in s for s in said) == 1
    assert sum(str(third) in s and "another unit's key" in s for s in said) == 1
    assert json.loads((out / "toy_squares.json").read_text())["payload"]["squares"][0] == 1.0


def test_unit_keys_hold_what_determines_a_unit(out, monkeypatch):
    p = toy_plan([])
    key = p.key(p.units[0])
    assert key == dict(chapter="toy", unit="square 1", config=dict(v=1, scale=1.0), seed=0,
                       profile="smoke", dynamics=importlib.import_module("dynamics").__version__,
                       dry_run=None, source=None)  # a toy chapter has no source of its own
    # a chapter's unit carries the digest of the code it runs: a change there makes it stale
    real = Runner(units.Plan("grokking", "smoke"))
    real.plan.unit("u", lambda: 0)
    assert real.key(real.units[0])["source"] == results.source_digest("grokking")
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    dry = toy_plan([])
    assert dry.key(dry.units[0])["dry_run"] == 2 and len(dry.units) == 2  # the ends of the grid
    p.seed = 5
    assert p.key(p.units[0])["seed"] == 5


def test_a_dry_run_keeps_the_ends_of_a_grid(out, monkeypatch):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    p = units.Plan("toy", "smoke")
    assert p.batch(range(6)) == [0, 5]
    for v in p.grid(range(10)):
        p.unit(f"u{v}", lambda: 0)
    p.output("toy_cut", lambda parts: list(parts))
    Runner(p).run()
    assert [u.name for u in p.units] == ["u0", "u9"]


def test_declaring_mistakes_are_clear_errors(out):
    p = units.Plan("toy", "smoke")
    p.unit("a", lambda: 1)
    with pytest.raises(ValueError, match="two units named 'a'"):
        p.unit("a", lambda: 2)
    with pytest.raises(ValueError, match="needs declared units"):
        p.output("x", lambda parts: parts, units=["nope"])


def test_the_command_stops_on_time_and_says_how_many_units_are_left(out, capsys):
    from dynamics_ops import precompute

    assert precompute.main(["grokking", "--profile", "smoke", "--minutes", "1e-9"]) == 75
    said = capsys.readouterr().out
    assert "grokking: out of time with 2 of 2 units left" in said
    assert "2 units left after 1e-09 minutes: run the same command again" in said
    assert not list(out.glob("*.json"))


# ----------------------------------------------------------------------------- kill and resume


def _env(out: Path) -> dict:
    env = dict(os.environ, DYNAMICS_RESULTS_DIR=str(out), DYNAMICS_DRY_RUN="2",
               DYNAMICS_PROFILE="smoke", DYNAMICS_PROGRESS="0", DYNAMICS_SEED="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "lib"), os.environ.get("PYTHONPATH")])))
    env.pop("DYNAMICS_UNITS_DIR", None)
    env.pop("DYNAMICS_LEDGER", None)
    return env


# ``python -m dynamics_ops.precompute`` that says "stored <path>" on stdout after each unit it
# stores and waits for a line on stdin before it goes on: a test kills it after the unit it
# chose, however fast the machine (no polling of the folder, no seconds waited)
PACED = """
import runpy, sys
from dynamics import results
write = results.write_atomic
def paced(path, text):
    write(path, text)
    if path.parent.parent.name == "units":
        print("stored", path, flush=True)
        sys.stdin.readline()
results.write_atomic = paced
sys.argv[0] = "dynamics_ops.precompute"
runpy.run_module("dynamics_ops.precompute", run_name="__main__", alter_sys=True)
"""


def _precompute(out: Path, kill_at: int | None = None) -> subprocess.CompletedProcess | int:
    """``python -m dynamics_ops.precompute all --profile smoke`` into ``out``; with ``kill_at``,
    SIGKILL it once that many units are stored (returns how many there were then)."""
    args = ["all", "--profile", "smoke"]
    if kill_at is None:
        return subprocess.run([sys.executable, "-m", "dynamics_ops.precompute", *args], env=_env(out),
                              cwd=ROOT, capture_output=True, text=True, timeout=900)
    stored = lambda: len(list((out / "units").glob("*/*.json")))  # noqa: E731
    proc = subprocess.Popen([sys.executable, "-c", PACED, *args], env=_env(out), cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    count = stored()
    if count < kill_at:
        for line in proc.stdout:  # ends early if the run does
            if line.startswith("stored "):
                count += 1
                if count >= kill_at:
                    break  # the run waits on stdin: killed right after this unit
                proc.stdin.write("\n")  # go on to the next unit
                proc.stdin.flush()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    return stored()


def _comparable(blob, key=None):
    if isinstance(blob, dict):
        return {k: ("<clock>" if k in CLOCK else _comparable(v, k)) for k, v in blob.items()}
    if isinstance(blob, list):
        return ["<clock>" if key in CLOCK else _comparable(v, key) for v in blob]
    return blob


def _files(out: Path) -> dict:
    found = {}
    for path in sorted(out.glob("*.json")):
        blob = json.loads(path.read_text())
        for k in RUN_FIELDS:
            blob["provenance"].pop(k)
        found[path.name] = blob
    return found


def test_a_precompute_killed_once_in_every_chapter_resumes_to_the_same_files(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    counts = {}
    for chapter, theme in CHAPTERS.items():
        module = importlib.import_module(f"dynamics.{theme}.experiments")
        if hasattr(module, "precompute_plan"):
            counts[chapter] = len(module.precompute_plan("smoke").units)
    assert counts
    whole = _precompute(tmp_path / "whole")
    assert whole.returncode == 0, whole.stdout + whole.stderr

    resumed, rng, offset = tmp_path / "resumed", random.Random(), 0
    for chapter, n in counts.items():  # one kill inside each chapter, at a random unit
        _precompute(resumed, kill_at=offset + rng.randrange(n))
        offset += n
    stored = sorted((resumed / "units").glob("*/*.json"))
    assert 0 < len(stored) <= sum(counts.values())
    truncated, corrupt = rng.sample(stored, 2)
    truncated.write_text(truncated.read_text()[: len(truncated.read_text()) // 2])
    corrupt.write_bytes(b"\xff\xfe not json")
    last = _precompute(resumed)
    assert last.returncode == 0, last.stdout + last.stderr
    for path in (truncated, corrupt):
        assert f"{path} is corrupt or truncated" in last.stdout  # named, then recomputed

    a, b = _files(tmp_path / "whole"), _files(resumed)
    assert sorted(a) == sorted(b) and len(a) >= len(counts)
    for name in a:
        assert json.dumps(_comparable(a[name])) == json.dumps(_comparable(b[name])), name


def test_only_keeps_the_named_files_and_the_units_they_need(out):
    from dynamics_ops.precompute import main, only

    p = units.Plan("toy", "smoke")
    for v in (1, 2):
        p.unit(f"a {v}", lambda v=v: v)
    p.output("toy_a", lambda parts: list(parts.values()))
    p.unit("b", lambda: 3)
    p.output("toy_b", lambda parts: list(parts.values()))
    only(p, ["toy_b"])
    assert [o.name for o in p.outputs] == ["toy_b"] and [u.name for u in p.units] == ["b"]
    with pytest.raises(SystemExit):  # a file the chapter does not write: named, with the ones it does
        main(["lottery_tickets", "--profile", "smoke", "--only", "lottery_nothing"])

