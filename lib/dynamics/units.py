"""What a chapter precomputes, declared as a list of units that survive an interruption.

A theme's precompute declares its work as a :class:`Plan`: independent **units** (a run, a
grid cell, a seed), each computed by a function of nothing but its declared config and
seed, and **outputs** (the ``data/<name>.json`` files), each assembled from the results of
its units::

    def precompute_plan(profile=None) -> units.Plan:   # what `python -m dynamics_ops.precompute` runs
        p = units.Plan("grokking", profile)            # the chapter (notebook) name
        cfg = PhaseConfig.for_profile(p.profile)
        decays = p.batch(cfg.weight_decays)            # trained together, in one call
        for frac in p.grid(cfg.train_fracs):           # one unit each; declare inside the loop
            p.unit(f"train_frac={frac:g}", partial(run_cell, cfg, frac, decays),
                   config=dict(phase=cfg.to_dict(), train_frac=frac))
        p.output("grokking_phase", assemble, config=cfg, command=..., note=...)
        return p                                       # assemble({unit name: result}) -> payload

A unit's result is anything :func:`dynamics.results.save` writes (dicts, lists, numbers,
arrays, tensors, objects with ``to_dict``); ``assemble`` receives it as JSON gives it back.
``note`` may be a function of the stats (seconds, CPU seconds, the units' results). A unit
that needs another's in-memory state (masks, weights) is one unit with it.

Running a plan (storing each unit as it finishes, resuming, keys, the progress bar) is an
operation: :class:`dynamics_ops.precompute.Runner`. A dry run (``DYNAMICS_DRY_RUN``):
:meth:`Plan.grid` and :meth:`Plan.batch` keep the two ends of an axis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from .runtime import cap_grid, get_profile


@dataclass
class Unit:
    """One independent piece of a precompute: ``run()`` returns its result (anything
    :func:`dynamics.results.save` can write); ``config`` and ``seed`` are what determine it."""

    name: str
    run: Callable[[], Any]
    config: Any = None
    seed: int | None = None  # None: the plan's seed (``--seed``)


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
    # how closely a unit computed again must match the one in the file (relative, on every
    # number; dynamics_ops.verify); None: its results are not reproducible by nature (timings)
    tolerance: float | None = 1e-6


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
               command: str | None = None, note: Any = "", tolerance: float | None = 1e-6) -> None:
        """Declare a result file assembled from ``units`` (default: the units declared since
        the previous output). ``tolerance``: how closely its cheapest unit, computed again by
        the current code, must match the copy the file keeps (relative, on every number); None
        for results that are not reproducible by nature, such as timings."""
        names = list(units) if units is not None else [u.name for u in self.units[len(self.units) - self._since:]]
        unknown = [n for n in names if n not in {u.name for u in self.units}]
        if unknown or not names:
            raise ValueError(f"{self.chapter}: output {name!r} needs declared units, got {unknown or names}")
        if tolerance is not None and not (isinstance(tolerance, (int, float)) and tolerance >= 0):
            raise ValueError(f"{self.chapter}: output {name!r}: tolerance must be a number >= 0 "
                             f"or None, got {tolerance!r}")
        self.outputs.append(Output(name, assemble, names, config, command, note, tolerance))
        self._since = 0


def rounded(obj, digits: int = 5):
    """Floats rounded to ``digits`` significant digits, recursively (keeps the JSON in
    ``data/`` small; used by every theme's precompute, so it is part of the numbers a data
    file holds: here, in the source its digest covers, and not among the tables)."""
    if isinstance(obj, dict):
        return {k: rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v, digits) for v in obj]
    if isinstance(obj, float) and math.isfinite(obj) and obj != 0.0:
        return round(obj, digits - 1 - int(math.floor(math.log10(abs(obj)))))
    return obj


__all__ = ["Plan", "Unit", "Output", "rounded"]
