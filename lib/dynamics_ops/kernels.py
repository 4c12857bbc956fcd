"""Launches per training step, and CPU seconds, of the code here against another commit's.

    python -m dynamics_ops.kernels                     # against 9306148 (before issue 41, item 3)
    python -m dynamics_ops.kernels --against HEAD~3    # any commit this repository holds
    python -m dynamics_ops.bench kernels               # the same, from the bench

Three runners train a few hundred steps each, on both sides: weight decay's equilibrium run
(one model, SGD, with the rotation meter), an IMP run of two rounds (three seeds batched by
``train_many``) and grokking's run (one model, full batch). For each it prints:

- **launches per step**, counted on the stand-in device by :class:`dynamics_ops.gpuwork.Counter`
  (the same counter for both sides) as the difference between runs of two lengths over the
  difference in steps: the setup cancels, and so do most evaluations (their number grows
  little with the steps). Counts do not depend on the machine:
  on a GPU, where a small model's step is its launches, they are what the step costs;
- **seconds** of the same runs on the CPU, the two sides taking turns three times (the median
  of each), with their ratio. The CPU launches no kernels, but each operation still costs
  PyTorch's dispatch, so fewer operations are faster there too, by less;
- **same numbers**: whether the two sides' timed runs give the same numbers, bit for bit (a
  digest of every number of the result, clock readings left out).

The other commit's ``lib/dynamics`` is taken with ``git archive`` into a temporary folder and
imported in a subprocess beside this ``dynamics_ops``; nothing in the working tree changes.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BEFORE = "9306148"  # the last commit before the fewer-kernels change
RUNNERS = ("weight decay: equilibrium run (SGD, 1 model)", "lottery: IMP, 2 rounds (3 seeds batched)",
           "grokking: one run (full batch)")
ROOT = Path(__file__).resolve().parents[2]
_RUN_SETTINGS = {f"DYNAMICS_{k}" for k in ("PROFILE", "SEED", "DEVICE", "THREADS", "DRY_RUN", "TF32")}


def _run(name: str, steps: int, data=None) -> None:
    """One runner for ``steps`` steps of each training, at the cpu profile's sizes."""
    import dataclasses

    if name == RUNNERS[0]:
        from dynamics.weight_decay import experiments as W

        return W.run_equilibrium(dataclasses.replace(W.equilibrium_configs("cpu")[1], steps=steps), 0,
                                 bars=False)
    if name == RUNNERS[1]:
        from dynamics.lottery import experiments as L

        return L.run_imp(_lottery_config(steps), data=data, controls=False, bars=False)
    import dynamics.grokking as G

    run = G.run(dataclasses.replace(G.GrokConfig.for_profile("cpu"), steps=steps), 0)
    return dict(history=run.history, model=run.model.state_dict())


def fingerprint(result) -> str:
    """A digest of a result's numbers, clock readings left out (:data:`verify.CLOCK`): the
    same on both sides when a change leaves every number as it was."""
    import hashlib

    import numpy as np
    import torch

    from dynamics.train import History
    from dynamics_ops.verify import CLOCK

    h = hashlib.sha256()

    def walk(x):
        if isinstance(x, History):
            walk(dict(steps=x.steps, diverged_at=x.diverged_at, metrics=x.metrics))
        elif hasattr(x, "to_dict"):
            walk(x.to_dict())
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                if k not in CLOCK:
                    h.update(str(k).encode())
                    walk(x[k])
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, torch.Tensor):
            walk(x.detach().cpu().numpy())
        elif isinstance(x, np.ndarray):
            h.update(np.ascontiguousarray(x).tobytes())
        else:
            h.update(repr(x).encode())
    walk(result)
    return h.hexdigest()[:16]


def _lottery_config(steps: int):
    import dataclasses

    import dynamics.lottery as L

    return dataclasses.replace(L.LotteryConfig.for_profile("cpu"), steps=steps, rounds=1, seeds=3, evals=2)


def worker(short: int, long: int, timed: int, count: bool) -> dict:
    """In the subprocess: per runner, launches per step (``count``) and seconds of ``timed`` steps."""
    import time

    from dynamics import runtime
    from dynamics.lottery import experiments as L
    from dynamics_ops import gpuwork, standin

    out = {}
    for name in RUNNERS:
        row = {}
        if count:
            totals = []
            for steps in (short, long):
                with standin.active():
                    runtime.setup(profile="cpu", seed=0, quiet=True)  # the stand-in's cuda
                    data = L.load_data(_lottery_config(steps)) if name == RUNNERS[1] else None
                    with gpuwork.Counter() as c:
                        _run(name, steps, data)
                totals.append(c.total[0])
            trainings = 2 if name == RUNNERS[1] else 1
            row["launches"] = (totals[1] - totals[0]) / (long - short) / trainings
        runtime.setup(profile="cpu", seed=0, quiet=True)  # the book's threads, on the CPU
        data = L.load_data(_lottery_config(timed)) if name == RUNNERS[1] else None
        _run(name, min(timed, 20), data)  # warm up
        start = time.perf_counter()
        result = _run(name, timed, data)
        row["seconds"] = time.perf_counter() - start
        row["numbers"] = fingerprint(result)
        out[name] = row
    return out


def _side(lib: Path, tmp: Path, label: str) -> dict:
    """PYTHONPATH for a subprocess that imports ``lib``'s dynamics and this dynamics_ops."""
    mix = tmp / f"path-{label}"
    mix.mkdir(exist_ok=True)
    for pkg, target in (("dynamics", lib / "dynamics"), ("dynamics_ops", Path(__file__).parent)):
        link = mix / pkg
        if not link.exists():
            link.symlink_to(target, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k not in _RUN_SETTINGS}  # setup() sets them
    return dict(env, PYTHONPATH=str(mix), DYNAMICS_PROGRESS="0")


def _archive(commit: str, dest: Path) -> Path:
    """``commit``'s lib/ extracted into ``dest`` (a clear error when the repository lacks it)."""
    got = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
                         capture_output=True, text=True)
    if got.returncode:
        raise SystemExit(f"--against {commit}: not a commit of {ROOT} ({got.stderr.strip()}); "
                         f"a shallow clone may lack it")
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", got.stdout.strip(), "lib"],
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest / "lib"


def compare(against: str = BEFORE, tiny: bool = False, repeats: int = 3, patch=None) -> dict:
    """``{runner: {"before": {...}, "after": {...}}}``: launches per step (counted once), the
    median seconds of ``repeats`` alternating runs of each side, and each side's
    :func:`fingerprint` of the timed run's numbers. ``patch(lib)`` edits the other commit's
    extracted ``lib`` first (the tests' constructed regression)."""
    short, long, timed = (12, 24, 12) if tiny else (200, 400, 600)
    sides = {"before": None, "after": ROOT / "lib"}
    results = {s: [] for s in sides}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sides["before"] = _archive(against, tmp)
        if patch is not None:
            patch(sides["before"])
        for r in range(repeats):
            order = list(sides.items()) if r % 2 == 0 else list(sides.items())[::-1]
            for side, lib in order:  # alternating, so that neither side always goes first
                code = (f"import json, dynamics_ops.kernels as k; print(json.dumps(k.worker("
                        f"{short}, {long}, {timed}, {r == 0})))")
                done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      env=_side(lib, tmp, side), cwd=tmp)
                if done.returncode:
                    raise RuntimeError(f"the {side} side failed:\n{done.stderr[-3000:]}")
                results[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {name: {side: dict(launches=runs[0][name]["launches"], numbers=runs[0][name]["numbers"],
                              seconds=statistics.median(r[name]["seconds"] for r in runs))
                   for side, runs in results.items()} for name in RUNNERS}


def table(result: dict, against: str) -> str:
    lines = [f"| runner | launches/step {against} | now | ratio | seconds {against} | now | ratio | "
             f"same numbers |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, r in result.items():
        b, a = r["before"], r["after"]
        lines.append(f"| {name} | {b['launches']:.1f} | {a['launches']:.1f} | "
                     f"{b['launches'] / a['launches']:.2f}x | {b['seconds']:.2f} | {a['seconds']:.2f} | "
                     f"{b['seconds'] / a['seconds']:.2f}x | {'yes' if b['numbers'] == a['numbers'] else 'NO'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics_ops.kernels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default=BEFORE, help=f"the other commit (default {BEFORE})")
    parser.add_argument("--tiny", action="store_true", help="a few steps: proves it runs")
    args = parser.parse_args(argv)
    print(table(compare(args.against, args.tiny), args.against))
    return 0


if __name__ == "__main__":
    sys.exit(main())
