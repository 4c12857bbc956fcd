"""Regenerate a chapter's precomputed results (the static figures of the book).

    python -m dynamics_ops.precompute grokking --profile gpu
    python -m dynamics_ops.precompute all --profile cpu
    python -m dynamics_ops.precompute lottery_tickets --profile cpu --only lottery_pai

Each theme module that has figures computed in advance defines
``precompute_plan(profile) -> dynamics.units.Plan``: its experiments at that profile's scale
as independent units (a run, a grid cell), and the ``data/<name>.json`` files assembled from
them. Every unit is stored under ``<results dir>/units/<chapter>/`` as it finishes, so the
same command run again continues where an interrupted one stopped (a unit whose config,
seed, profile or library version changed is computed again):

    python -m dynamics_ops.precompute all --profile gpu --minutes 9   # repeat until it exits 0

``--minutes N`` stops after the unit in progress once N minutes have passed, writes the files
whose units are all done, says how many units are left and exits with status 75; 0 means
everything is written. It runs under :func:`dynamics.setup` (the book's threads, device and
matmul precision). As a dry run (``DYNAMICS_DRY_RUN=2 DYNAMICS_RESULTS_DIR=/tmp/x``) it
proves a profile end to end in minutes without touching ``data/`` (``python -m dynamics_ops.bench
gpu`` does this per chapter).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import sys
import time
from pathlib import Path

from dynamics import CHAPTERS, results
from dynamics.runtime import (PROFILES, bars_enabled, dry_run, get_profile, progress_bars,
                              folder, seed_everything, setup)
from dynamics.units import Output, Plan, Unit

# ----------------------------------------------------------------------------- running a plan

UNITS_DIR = "units"  # under the results directory


def _config(config):
    return config.to_dict() if hasattr(config, "to_dict") else config


def _digest(key: dict) -> str:
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class UnitFileError(ValueError):
    """A stored unit that cannot be used (corrupt, truncated, another key)."""




def unit_key(unit: Unit, chapter: str, profile: str, seed: int) -> dict:
    """What determines a unit's result, and so names its stored file: its chapter, name,
    config, seed, profile, the library's version, the dry run's steps and the digest of the
    source it runs (:func:`dynamics.results.source_digest`)."""
    from dynamics import __version__

    return dict(chapter=chapter, unit=unit.name, config=results._plain(_config(unit.config)),
                seed=int(seed if unit.seed is None else unit.seed), profile=profile,
                dynamics=__version__, dry_run=dry_run(),
                # the code: a change to the theme or the core it runs through makes the unit stale
                source=results.source_digest(chapter) if chapter in CHAPTERS else None)


class Runner:
    """Runs a :class:`dynamics.units.Plan`, storing each unit as it finishes.

    :meth:`run` computes each unit in turn (torch, numpy and python seeded with the
    plan's seed before each, so a unit never depends on the ones before it) and stores its
    result atomically as ``<results dir>/units/<chapter>/<hash>.json`` (or under
    ``$DYNAMICS_UNITS_DIR``); the hash is of the
    unit's **key**: chapter, name, config, seed, profile, ``dynamics.__version__`` and the dry
    run's steps. Running again reuses every stored unit whose key still matches and computes
    the rest; a unit file that is corrupt, truncated or holds another key is named and
    recomputed, never used. Each output is assembled from its units' results *as stored* (read
    back from their JSON), so a run resumed after a kill writes the same file as one that
    never stopped. ``minutes`` stops cleanly after the unit in progress once that much time has
    passed; the outputs whose units are all done are written, the rest wait for the next run.
    
    The progress bar counts units (no time left of its own: a precompute's units differ 20-fold
    in cost, a grid's shallow and deep ends, so an extrapolation from the units done misleads).
    
    A dry run (``DYNAMICS_DRY_RUN``): :meth:`Plan.grid` and :meth:`Plan.batch` keep the two ends
    of an axis.
    """

    def __init__(self, plan: Plan):
        self.plan = plan
        self.chapter, self.profile = plan.chapter, plan.profile
        self.left = len(plan.units)

    @property
    def seed(self) -> int:
        return self.plan.seed

    @seed.setter
    def seed(self, value: int) -> None:
        self.plan.seed = int(value)

    @property
    def units(self) -> list:
        return self.plan.units

    def folder(self) -> Path:
        """Where this chapter's units are stored: ``$DYNAMICS_UNITS_DIR/<chapter>`` (on Colab,
        a folder on Google Drive outlives the runtime), else ``<results dir>/units/<chapter>``."""
        return (folder("DYNAMICS_UNITS_DIR") or results.results_dir() / UNITS_DIR) / self.chapter

    def key(self, unit: Unit) -> dict:
        return unit_key(unit, self.chapter, self.profile, self.seed)

    def path(self, unit: Unit) -> Path:
        return self.folder() / f"{_digest(self.key(unit))}.json"

    def load(self, unit: Unit) -> dict | None:
        """The stored record of ``unit`` (``result``, ``seconds``, ``cpu_seconds``), None if
        there is none; :class:`UnitFileError` if its file cannot be used."""
        path = self.path(unit)
        if not path.exists():
            return None
        try:
            blob = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, OSError) as err:
            raise UnitFileError(f"unit {unit.name!r}: {path} is corrupt or truncated ({err})") from None
        if not isinstance(blob, dict) or not {"key", "result", "seconds"} <= set(blob):
            raise UnitFileError(f"unit {unit.name!r}: {path} is incomplete (no key, result or seconds)")
        if blob["key"] != json.loads(json.dumps(self.key(unit))):
            raise UnitFileError(f"unit {unit.name!r}: {path} holds another unit's key")
        return blob

    def compute(self, unit: Unit) -> dict:
        """Run ``unit`` (seeded with its seed, without progress bars of its own) and store it
        atomically; returns its record as read back from its file."""
        seed_everything(self.key(unit)["seed"])
        start, cpu = time.perf_counter(), time.process_time()
        with progress_bars(False):
            value = unit.run()  # one bar, over the units: none inside them
        record = dict(key=self.key(unit),
                      seconds=time.perf_counter() - start, cpu_seconds=time.process_time() - cpu,
                      device=results.provenance(self.profile)["device"],
                      result=results._plain(value))
        text = json.dumps(record, allow_nan=False) + "\n"
        path = self.path(unit)
        path.parent.mkdir(parents=True, exist_ok=True)
        results.write_atomic(path, text)
        return json.loads(text)  # what a resumed run reads back: the same for both

    # ------------------------------------------------------------------ running

    def run(self, minutes: float | None = None, deadline: float | None = None,
            log=print) -> list[Path]:
        """Compute the units not stored yet (until ``minutes`` have passed, or the
        ``time.monotonic()`` ``deadline``), then write every output whose units are all
        stored. Returns the paths written; ``self.left`` is the number of units still to do."""
        if minutes is not None:
            deadline = time.monotonic() + 60 * float(minutes)
        done: dict[str, dict] = {}
        todo = []
        for u in self.units:
            try:
                record = self.load(u)
            except UnitFileError as err:
                log(f"{self.chapter}: {err}; computing it again")
                record = None
            if record is None:
                todo.append(u)
            else:
                done[u.name] = record
        if done:
            log(f"{self.chapter}: {len(done)} of {len(self.units)} units already computed "
                f"(in {self.folder()}), {len(todo)} to go")
        bar = _bar(self, len(done))
        try:
            for u in todo:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                bar.set_description(f"{self.chapter}: {u.name}")
                done[u.name] = self.compute(u)
                bar.update(1)
        finally:
            bar.close()
        self.left = len(self.units) - len(done)
        paths = []
        for out in self.plan.outputs:
            if all(n in done for n in out.units):
                paths.append(self.write(out, {n: done[n] for n in out.units}))
        if self.left:
            log(f"{self.chapter}: out of time with {self.left} of {len(self.units)} units left; "
                f"run the same command again to continue")
        return paths

    def write(self, out: Output, records: dict) -> Path:
        payload = out.assemble({n: r["result"] for n, r in records.items()})
        stats = dict(seconds=sum(r["seconds"] for r in records.values()),
                     cpu_seconds=sum(r.get("cpu_seconds", 0.0) for r in records.values()),
                     results={n: r["result"] for n, r in records.items()})
        note = out.note(stats) if callable(out.note) else out.note
        devices = sorted({r.get("device") for r in records.values()} - {None})
        if len(devices) > 1:
            note = f"{note} Units computed on {', '.join(devices)}.".strip()
        return results.save(out.name, payload, self.profile, config=out.config,
                            command=out.command, note=note, wall_time=stats["seconds"],
                            extra=dict(tolerance=out.tolerance, sample=sample(out, records)))


SAMPLE_BYTES = 200_000  # the largest unit result a data file keeps as its sample


def sample(out: Output, records: dict) -> dict | None:
    """The unit a data file keeps a copy of, so that a check can compute it again with the
    current code and compare (:mod:`dynamics_ops.verify`): its cheapest unit whose result is
    small enough to keep; None where the output's results are not reproducible by nature
    (``tolerance=None``: timings) or no unit's result is small enough."""
    if out.tolerance is None:
        return None
    small = [(r["seconds"], n) for n, r in records.items()
             if len(json.dumps(r["result"], allow_nan=False)) <= SAMPLE_BYTES]
    if not small:
        return None
    seconds, name = min(small)
    r = records[name]
    return dict(unit=name, seed=r["key"]["seed"], seconds=round(float(seconds), 2),
                result=r["result"])



def _bar(plan: Runner, initial: int):
    from tqdm.auto import tqdm

    # no remaining time of tqdm's own: it extrapolates from the units done, which differ in cost
    return tqdm(total=len(plan.units), initial=initial, unit="unit", file=sys.stderr,
                disable=not bars_enabled(), desc=plan.chapter, leave=True,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} units [{elapsed}{postfix}]")




def only(plan: Plan, names) -> Plan:
    """Keep, in ``plan``, the outputs named in ``names`` and the units they need (in place)."""
    wanted = set(names)
    plan.outputs = [o for o in plan.outputs if o.name in wanted]
    needed = {n for o in plan.outputs for n in o.units}
    plan.units = [u for u in plan.units if u.name in needed]
    return plan


def theme_module(chapter: str):
    """The experiments module of a chapter's theme (where ``precompute_plan`` lives), by
    notebook name or theme name."""
    module = CHAPTERS.get(chapter, chapter if chapter in CHAPTERS.values() else None)
    if module is None:
        raise ValueError(f"unknown chapter {chapter!r}; choose one of {', '.join(CHAPTERS)}")
    return importlib.import_module(f"dynamics.{module}.experiments")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics_ops.precompute", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapter", help=f"one of {', '.join(CHAPTERS)}, or 'all'")
    parser.add_argument("--profile", default=None, choices=PROFILES,
                        help="scale of the experiments (default: $DYNAMICS_PROFILE or by hardware)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after the unit in progress once this many minutes have passed "
                             "(run the same command again to continue)")
    parser.add_argument("--only", nargs="+", default=None, metavar="FILE",
                        help="write only these data files (stems, such as lottery_pai), "
                             "computing only their units")
    args = parser.parse_args(argv)
    if args.minutes is not None and not args.minutes > 0:
        parser.error(f"--minutes must be a positive number of minutes, got {args.minutes}")
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    profile = get_profile(args.profile)
    if args.chapter != "all" and args.chapter not in CHAPTERS and args.chapter not in CHAPTERS.values():
        parser.error(f"unknown chapter {args.chapter!r}; choose one of {', '.join(CHAPTERS)}, or 'all'")
    chapters = list(CHAPTERS) if args.chapter == "all" else [args.chapter]
    if args.only:
        written = {o.name for c in chapters if hasattr(m := theme_module(c), "precompute_plan")
                   for o in m.precompute_plan(profile).outputs}
        unknown = sorted(set(args.only) - written)
        if unknown:
            parser.error(f"--only: {', '.join(unknown)} not written by {args.chapter}'s precompute; "
                         f"it writes {', '.join(sorted(written))}")
    rt = setup(profile, args.seed, quiet=True)  # the book's threads, device and matmul precision
    print(f"{rt.report()}" + (f"; dry run: {dry_run()} steps per training" if dry_run() else ""))
    left = 0
    for chapter in chapters:
        try:
            module = theme_module(chapter)
        except ModuleNotFoundError:
            print(f"{chapter}: no theme module yet, skipped")
            continue
        except ValueError as err:
            parser.error(str(err))
        start = time.perf_counter()
        if hasattr(module, "precompute_plan"):
            plan = module.precompute_plan(profile)
            plan.seed = args.seed
            if args.only:
                only(plan, args.only)
                if not plan.outputs:
                    continue
            runner = Runner(plan)
            paths = runner.run(deadline=deadline)
            left += runner.left
        else:
            print(f"{chapter}: nothing to precompute")
            continue
        for path in paths:
            print(f"{chapter}: wrote {path}")
        print(f"{chapter}: {time.perf_counter() - start:.1f} s in the {profile} profile")
    if left:
        print(f"{left} units left after {args.minutes:g} minutes: run the same command again "
              "to continue")
        return 75
    return 0


if __name__ == "__main__":
    sys.exit(main())
