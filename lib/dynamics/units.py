"""A precompute as a list of units that survive an interruption.

A theme's precompute declares its work as a :class:`Plan`: independent **units** (a run, a
grid cell, a seed), each computed by a function of nothing but its declared config and
seed, and **outputs** (the ``data/<name>.json`` files), each assembled from the results of
its units::

    def precompute_plan(profile=None) -> units.Plan:   # what `python -m dynamics.precompute` runs
        p = units.Plan("grokking", profile)            # the chapter (notebook) name
        cfg = PhaseConfig.for_profile(p.profile)
        decays = p.batch(cfg.weight_decays)            # trained together, in one call
        for frac in p.grid(cfg.train_fracs):           # one unit each; declare inside the loop
            p.unit(f"train_frac={frac:g}", partial(run_cell, cfg, frac, decays),
                   config=dict(phase=cfg.to_dict(), train_frac=frac))
        p.output("grokking_phase", assemble, config=cfg, command=..., note=...)
        return p                                       # assemble({unit name: result}) -> payload

``python -m dynamics.precompute grokking`` runs ``precompute_plan(profile).run(...)``.

A unit's result is anything :func:`dynamics.results.save` writes (dicts, lists, numbers,
arrays, tensors, objects with ``to_dict``); ``assemble`` receives it as JSON gives it back.
``note`` may be a function of the stats (seconds, CPU seconds, the units' results). A unit
that needs another's in-memory state (masks, weights) is one unit with it.

:meth:`Plan.run` computes each unit in turn (torch, numpy and python seeded with the
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
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import results
from .runtime import cap_grid, dry_run, get_profile, progress_bars, bars_enabled, seed_everything

UNITS_DIR = "units"  # under the results directory


@dataclass
class Unit:
    """One independent piece of a precompute: ``run()`` returns its result (anything
    :func:`dynamics.results.save` can write); ``config`` and ``seed`` are what determine it."""

    name: str
    run: Callable[[], Any]
    config: Any = None
    seed: int | None = None  # None: the plan's seed (``--seed``)

    def key(self, chapter: str, profile: str, seed: int) -> dict:
        from . import __version__

        return dict(chapter=chapter, unit=self.name, config=results._plain(_config(self.config)),
                    seed=int(seed if self.seed is None else self.seed), profile=profile,
                    dynamics=__version__, dry_run=dry_run())


@dataclass
class Output:
    """One result file, assembled from the results of ``units`` (names, in order):
    ``assemble({name: result})`` returns its payload. ``note`` may be a function of the
    stats (``seconds`` and ``cpu_seconds`` the units took, summed over sessions)."""

    name: str
    assemble: Callable[[dict], Any]
    units: list
    config: Any = None
    command: str | None = None
    note: Any = ""


def _config(config):
    return config.to_dict() if hasattr(config, "to_dict") else config


def _digest(key: dict) -> str:
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class UnitFileError(ValueError):
    """A stored unit that cannot be used (corrupt, truncated, another key)."""


@dataclass
class Plan:
    """The units and outputs of one chapter's precompute at ``profile`` (see the module)."""

    chapter: str
    profile: str | None = None
    seed: int = 0
    units: list = field(default_factory=list)
    outputs: list = field(default_factory=list)

    def __post_init__(self):
        self.profile = get_profile(self.profile)
        self._since = 0  # units declared since the last output

    # ------------------------------------------------------------------ declaring

    def grid(self, values, keep: int = 2) -> list:
        """An axis of units: all of ``values``, or in a dry run only its ends (``keep``)."""
        return cap_grid(list(values), keep)

    def batch(self, values, keep: int = 2) -> list:
        """An axis that the units train together (the models of one batched call): all of
        ``values``, or in a dry run only its ends."""
        return cap_grid(list(values), keep)

    def unit(self, name: str, run: Callable[[], Any], config=None, seed: int | None = None) -> str:
        """Declare a unit; returns its name (names are unique within a plan)."""
        if any(u.name == name for u in self.units):
            raise ValueError(f"{self.chapter}: two units named {name!r}")
        self.units.append(Unit(name, run, config, None if seed is None else int(seed)))
        self._since += 1
        return name

    def output(self, name: str, assemble: Callable[[dict], Any], units=None, config=None,
               command: str | None = None, note: Any = "") -> None:
        """Declare a result file assembled from ``units`` (default: the units declared since
        the previous output)."""
        names = list(units) if units is not None else [u.name for u in self.units[len(self.units) - self._since:]]
        unknown = [n for n in names if n not in {u.name for u in self.units}]
        if unknown or not names:
            raise ValueError(f"{self.chapter}: output {name!r} needs declared units, got {unknown or names}")
        self.outputs.append(Output(name, assemble, names, config, command, note))
        self._since = 0

    # ------------------------------------------------------------------ storing

    def folder(self) -> Path:
        """Where this chapter's units are stored: ``$DYNAMICS_UNITS_DIR/<chapter>`` (on Colab,
        a folder on Google Drive outlives the runtime), else ``<results dir>/units/<chapter>``."""
        root = os.environ.get("DYNAMICS_UNITS_DIR", "").strip()
        return (Path(root) if root else results.results_dir() / UNITS_DIR) / self.chapter

    def key(self, unit: Unit) -> dict:
        return unit.key(self.chapter, self.profile, self.seed)

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
        for out in self.outputs:
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
                            command=out.command, note=note, wall_time=stats["seconds"])


def _bar(plan: Plan, initial: int):
    from tqdm.auto import tqdm

    # no remaining time of tqdm's own: it extrapolates from the units done, which differ in cost
    return tqdm(total=len(plan.units), initial=initial, unit="unit", file=sys.stderr,
                disable=not bars_enabled(), desc=plan.chapter, leave=True,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} units [{elapsed}{postfix}]")


__all__ = ["Plan", "Unit", "Output", "UnitFileError", "UNITS_DIR"]
