"""Each notebook's gpu-profile work, counted on the CPU from the stand-in CUDA device.

    python -m dynamics_ops.gpuwork                      # every chapter: a table per chapter
    python -m dynamics_ops.gpuwork grokking --cells     # one chapter, cell by cell
    python -m dynamics_ops.gpuwork --write              # rewrite data/gpu_work.csv
    python -m dynamics_ops.gpuwork --table              # the table of data/gpu_work.csv
    python -m dynamics_ops.gpuwork --full-grids --write # dry runs keep every grid whole
    python -m dynamics_ops.gpuwork --check --full-grids # the estimate against a real run (smoke)
    python -m dynamics_ops.bench gpuwork [--write]      # the same, from the bench

A chapter notebook runs cell by cell at the gpu profile's sizes on the stand-in device
(:mod:`dynamics_ops.standin`) as a dry run, and for each cell four things are counted from the
operations the stand-in dispatches:

- **launches**: operations on the device (a device tensor in or out) that are not views
  (``_unsafe_view`` too), bare allocations (``aten.empty*``) or reads: on a GPU each is one kernel launch (or one
  host-to-device copy; a ``torch._foreach_*`` operation counts one, as its fused kernel is for
  small tensors, though ``_foreach_norm`` takes a second kernel to finish: one uncounted);
- **host reads**: operations that take a device tensor and give back a host value (``.item()``,
  ``float``/``int``/``bool``, ``.cpu()``, a copy into a CPU tensor, ``aten.equal``), plus
  ``.tolist()``, ``numpy(force=True)`` and ``repr`` of a device tensor: on a GPU each is a
  synchronization. Reads of CPU tensors (torch.optim's step counters) are not counted;
- **FLOPs**: ``torch.utils.flop_counter``'s formulas (matmuls, convolutions, attention) applied
  to each dispatched operation; element-wise work counts zero FLOPs there, and here;
- **bytes**: the size of every launch's outputs (an in-place operation: its target).

**The estimate at the profile's real step counts and grid sizes.** The notebook runs twice,
with ``DYNAMICS_DRY_RUN`` 2 and 3 (:data:`CAPS`). Every ``runtime.cap_steps`` call that cuts
(``train``, ``train_many`` and ``runtime.steps`` make them) is recorded with the steps it was
asked for (S); the work from one cut to the next (or to the cell's end) is that cut's
*segment*. The work of one more step is the segment's work at cap 3 less its work at cap 2,
evaluations left out, and the estimate adds (S - 2) such steps to the cap-2 count.
Evaluations are counted apart: each evaluation's work runs from the host read just before
``evaluate``/``_eval_batched`` to ``History.append`` (or the sweep's ``Evaluations.record``),
plus the ``on_eval`` hooks that follow it (a checkpoint's copy, a panel's reads), and is scaled from the dry run's number of evaluations to the real schedule's (its rule's
``at`` asked for S). While counting, a cut training's ``Every`` and ``LogSpaced`` schedules
evaluate at the same steps under both caps (step 0 if the rule has it, and the last), so
that one more step adds no evaluation; an ``At`` list is kept (callbacks wait on its steps).
With ``--full-grids`` (``full_grids=True``) the dry runs keep every grid whole and only the
steps are cut: nothing is scaled by a grid's size, and assumption 3 below does not apply (the
dry runs take longer). Without it, a ``runtime.cap_grid`` call that cuts a grid of n values to k
scales the work after it by n/k: grids called one after another with no device work between them nest (a product), a
grid called again keeps the grids outside it (an inner loop), and a new grid called after
device work replaces them (the cell's next experiment).

Assumptions, and where the estimate is weakest:

1. Every step of a training costs what its third step costs (the first steps may differ:
   optimizer state is made at step 1), and every evaluation what a dry-run evaluation costs.
   Work done once an epoch (a mini-batch reshuffle: one ``randperm``) is counted once.
   A dry-run evaluation reads at most one chunk of each set (``train.evaluate``,
   ``_eval_batched``): on sets larger than a chunk the real evaluation costs more.
2. The two dry runs make the same ``cap_steps`` calls in the same order with the same S; a
   cell where they do not is estimated from its total difference times the mean cut steps
   (the row's ``aligned`` is 0). A count made from a cut count (``steps(a) + steps(b)``, an
   evaluation list built for the cut steps) is scaled as the cut that preceded it: its
   evaluations are not scaled at all.
3. Grid scaling treats the kept cells as typical of the cut ones. It over-counts the
   launches of a batched sweep (``train_many`` trains K models with one launch per
   operation, so launches do not grow with K); work after a grid's loop has ended (a figure
   made from its results, an experiment without a grid after one with) keeps its factor; an
   outer grid's factor is lost when device work runs between it and an inner grid's first
   call (an under-count), and two experiments whose grids follow one another with no device
   work between them multiply (an over-count); cuts made by hand on ``dry_run()`` (a few
   runners cap a count of networks) are not scaled at all. Which grids enclose which work
   is not seen: the calls' Python frames would tell, and are not recorded.
4. Work whose length depends on the data (early stopping, a root finder's iterations) is
   counted as it ran in the dry run: a run that stops early is counted at its whole budget.
5. A runner that builds a schedule or a count from a dry run's cut steps (an evaluation list
   from ``runtime.steps(n)``) is counted as it ran: its evaluations are not scaled (an
   under-count), and an interval computed from them (``max(1, steps // 20)``: every step in a
   dry run) makes every step an evaluation (an over-count). Runners build them from the steps
   asked for where they can; work a hook does only at evaluation steps but outside an
   evaluation (the capstone's update probe) is counted at every step.

**Checked on a known answer** (``--check``, :func:`check_chapter`): at the smoke profile's
sizes a notebook runs in full in minutes, so its real count can be made and compared with the
estimate from its dry runs, cell by cell. The gpu_sizes tier holds each chapter's estimated
launches and FLOPs within [0.5, 1.1] times the real count; the README gives the factors.

The counts do not depend on the machine or the clock: the same commit counts the same.
``data/gpu_work.csv`` keeps the estimate per cell (``--write``), and the ``gpu_sizes`` test tier
fails when a chapter's estimated launches, host reads or FLOPs grow over :data:`GROWTH` times it.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch.utils.flop_counter import flop_registry

from . import standin

CAPS = (2, 3)  # the dry-run step caps the estimate is made from
GROWTH = 1.5  # the gpu_sizes tier fails when a chapter's estimate grows more than this
KEYS = ("launches", "host_reads", "flops", "bytes")
COMPARED = ("launches", "host_reads", "flops")  # what the CI check holds to the baseline
COMMAND = "python -m dynamics_ops.gpuwork --write"
LAUNCH_S = 10e-6  # a kernel launch's host overhead on a GPU, about: launches x this is a floor
T4_FLOPS = 8e12  # a T4's float32 peak, about: FLOPs / this is another floor
FIELDS = ("chapter", "cell", "source", *KEYS, "aligned", "grids", "commit", "torch", "date")
_ALLOC = {torch.ops.aten.empty.memory_format, torch.ops.aten.empty_strided.default,  # no kernel:
          torch.ops.aten.empty_like.default, torch.ops.aten._unsafe_view.default}  # or a view


def _zero() -> list:
    return [0, 0, 0, 0]


def _minus(a, b) -> list:
    return [x - y for x, y in zip(a, b)]


def _nbytes(out) -> int:
    if isinstance(out, torch.Tensor):
        return out.numel() * out.element_size()
    if isinstance(out, (list, tuple)):
        return sum(_nbytes(x) for x in out)
    return 0


def _on_device(x) -> bool:
    if isinstance(x, standin.DeviceTensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(isinstance(y, standin.DeviceTensor) for y in x)
    return False


class Counter:
    """Counts the stand-in device's work: ``with Counter() as c: ...``; ``c.total`` is
    [launches, host reads, FLOPs, bytes]; ``c.events`` the cap_steps/cap_grid/evaluation
    records and cell marks the estimate reads (:func:`estimate`)."""

    def __init__(self, full_grids: bool = False):
        self.full_grids = full_grids  # grids not cut: counted whole, nothing to scale
        self.total = _zero()
        self.evals = _zero()  # the part of total made inside evaluations
        self.events: list[dict] = []
        self.cell = -1  # before the notebook's first cell
        self._window = False  # inside an evaluation
        self._closer_depth = 0
        self._last_read = None  # (total, evals) just before the latest host read, if no launch since
        self._patched: list = []
        self._last_steps = None

    # ------------------------------------------------------------------ counting

    def _dispatch(self, func, args, kwargs):
        out = self._orig_dispatch(func, args, kwargs)
        dev_in = any(_on_device(a) for a in args) or any(_on_device(v) for v in kwargs.values())
        dev_out = _on_device(out)
        if not (dev_in or dev_out) or func.is_view or func in _ALLOC:
            return out
        if dev_in and not dev_out and not (func._schema.name.endswith("_") and _on_device(args[0])):
            self._read()
            return out
        flops = 0
        fn = flop_registry.get(func.overloadpacket)
        if fn is not None:
            flops = int(fn(*args, **kwargs, out_val=out))
        self._add([1, 0, flops, _nbytes(out)])
        self._last_read = None
        return out

    def _add(self, d):
        t = self.total
        for i in range(4):
            t[i] += d[i]
        if self._window:
            e = self.evals
            for i in range(4):
                e[i] += d[i]

    def _read(self):
        self._last_read = (list(self.total), list(self.evals))
        self._add([0, 1, 0, 0])

    def snapshot(self) -> tuple:
        return list(self.total), list(self.evals)

    def mark(self, cell) -> None:
        """Cell ``cell`` starts here (the notebook runner calls it between cells)."""
        self._close_window()
        self.cell = cell
        self.events.append(dict(kind="cell", cell=cell, at=self.snapshot()))
        self._patch_modules()

    # ------------------------------------------------------------------ evaluation windows

    def _open_window(self):
        if self._window:
            return
        if self._last_read is not None:  # the read just before an evaluation is its own
            before_total, before_evals = self._last_read
            read = _minus(self.total, before_total)
            for i in range(4):
                self.evals[i] += read[i]
        self._window = True

    def _close_window(self):
        self._window = False

    def _opener(self, fn):
        def wrapped(*args, **kwargs):
            self._open_window()
            return fn(*args, **kwargs)
        wrapped.__wrapped__ = fn
        return wrapped

    def _closer(self, fn, outer: bool):
        def wrapped(*args, **kwargs):
            self._closer_depth += outer
            try:
                return fn(*args, **kwargs)
            finally:
                self._closer_depth -= outer
                if self._closer_depth == 0:
                    self._close_window()
        wrapped.__wrapped__ = fn
        return wrapped

    def _eval_hooks(self, post_init):
        """``Hooks``' ``on_eval`` callbacks run after ``History.append`` closes an evaluation:
        their work (a checkpoint's copy, a panel's reads) happens once per evaluation, so it
        is counted as evaluation work, not as a step's."""
        counter = self

        def during_evaluation(cb):
            def wrapped(*args, **kwargs):
                was, counter._window = counter._window, True
                try:
                    return cb(*args, **kwargs)
                finally:
                    counter._window = was
            wrapped.__wrapped__ = cb
            return wrapped

        def init(hooks):
            post_init(hooks)
            object.__setattr__(hooks, "on_eval", tuple(during_evaluation(cb) for cb in hooks.on_eval))
        return init

    # ------------------------------------------------------------------ the dry run's calls

    def _cap_steps(self, steps):
        got = self._orig["cap_steps"](steps)
        if got < steps:  # a cut: the segment of a training (or loop) the estimate scales
            self._close_window()
            self._last_steps = (int(steps), int(got))
            self.events.append(dict(kind="steps", cell=self.cell, planned=int(steps), got=int(got),
                                    at=self.snapshot()))
        return got

    def _cap_grid(self, values, keep=2):
        values = list(values)
        if self.full_grids:
            return values
        kept = self._orig["cap_grid"](values, keep)
        if len(kept) < len(values):
            self.events.append(dict(kind="grid", cell=self.cell, n=len(values), kept=len(kept),
                                    key=repr(values), at=self.snapshot()))
        return kept

    def _schedule(self, orig, same: bool):
        """A rule's ``at`` while counting: for the training the last cut made (``steps`` is
        what the cut gave), record how many evaluations the real schedule makes and the dry
        one; ``same``: the dry one evaluates at the same steps under both caps (step 0 if the
        rule has it, and the last), so that one more step adds no evaluation."""
        counter = self

        def at(rule, steps):
            from dynamics.runtime import dry_run

            last = counter._last_steps
            full = orig(rule, steps)
            if dry_run() is None or last is None or last[1] != steps:
                return full
            dry = ([0] if 0 in full else []) + [steps] if same else full
            counter.events.append(dict(kind="evals", cell=counter.cell, real=len(orig(rule, last[0])),
                                       dry=len(set(dry) | {steps}), at=counter.snapshot()))
            return dry
        at.__wrapped__ = orig
        return at

    # ------------------------------------------------------------------ switching on

    def _set(self, owner, name, value):
        self._patched.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def _patch_modules(self):
        """Point every loaded ``dynamics`` module's cap_steps/cap_grid/evaluate... at ours
        (themes import them by name; chapters import themes in later cells)."""
        for mod in list(sys.modules.values()):
            name = getattr(mod, "__name__", "") or ""
            if not (name == "dynamics" or name.startswith("dynamics.")):
                continue
            for attr, new in self._replacements.items():
                if getattr(mod, attr, None) is self._orig.get(attr):
                    self._set(mod, attr, new)

    def __enter__(self):
        from dynamics import runtime, train
        from dynamics.sweep import loop

        self._orig_dispatch = standin._dispatch
        self._orig = dict(cap_steps=runtime.cap_steps, cap_grid=runtime.cap_grid,
                          evaluate=train.evaluate, _eval_batched=loop._eval_batched)
        self._replacements = dict(cap_steps=self._cap_steps, cap_grid=self._cap_grid,
                                  evaluate=self._opener(train.evaluate),
                                  _eval_batched=self._opener(loop._eval_batched))
        self._set(standin, "_dispatch", self._dispatch)
        dt_ = standin.DeviceTensor
        orig_tolist, orig_numpy, orig_repr = dt_.tolist, dt_.numpy, dt_.__repr__

        def tolist(t):
            self._read()
            return orig_tolist(t)

        def numpy(t, *, force=False):
            if force:
                self._read()
            return orig_numpy(t, force=force)

        def rep(t, *, tensor_contents=None):
            self._read()
            return orig_repr(t)

        self._set(dt_, "tolist", tolist)
        self._set(dt_, "numpy", numpy)
        self._set(dt_, "__repr__", rep)
        self._set(train.History, "append", self._closer(train.History.append, False))
        self._set(train.Hooks, "__post_init__", self._eval_hooks(train.Hooks.__post_init__))
        self._set(loop.Evaluations, "record", self._closer(loop.Evaluations.record, True))
        for rule in (train.Every, train.LogSpaced):
            self._set(rule, "at", self._schedule(rule.at, True))
        self._set(train.At, "at", self._schedule(train.At.at, False))  # listed steps: kept
        self._patch_modules()
        self.events.append(dict(kind="cell", cell=self.cell, at=self.snapshot()))
        return self

    def __exit__(self, *exc):
        self._close_window()
        self.events.append(dict(kind="end", cell=None, at=self.snapshot()))
        for owner, name, value in reversed(self._patched):
            setattr(owner, name, value)
        self._patched.clear()
        return False


# ----------------------------------------------------------------------------- the estimate


def _cells(events: list[dict]) -> dict:
    """cell -> (its events, its count at start, at end)."""
    out, marks = {}, [e for e in events if e["kind"] in ("cell", "end")]
    for a, b in zip(marks, marks[1:]):
        inner = [e for e in events if e["kind"] in ("steps", "grid", "evals")
                 and a["_i"] < e["_i"] < b["_i"]]
        out[a["cell"]] = (inner, a["at"], b["at"])
    return out


def _segments(inner, end):
    """The cell's cap_steps segments: (event, total work, evaluation work, its evals events)."""
    steps = [e for e in inner if e["kind"] == "steps"]
    segs = []
    for i, e in enumerate(steps):
        nxt = steps[i + 1] if i + 1 < len(steps) else None
        stop = nxt["at"] if nxt else end
        evals = [v for v in inner if v["kind"] == "evals" and v["_i"] > e["_i"]
                 and (nxt is None or v["_i"] < nxt["_i"])]
        segs.append((e, _minus(stop[0], e["at"][0]), _minus(stop[1], e["at"][1]), evals))
    return segs


def _grid_factors(inner: list[dict]) -> dict:
    """The grid factor in force after each of a cell's events (by its index), from the cut
    grids called so far: a grid called again (an inner loop restarting) keeps the grids
    outside it; a new grid called with no device work since the last grid nests in them
    (``lrs, wds = grid(a), grid(b)``: a product); a new grid called after device work starts a
    new experiment (the cell's next runner) and replaces them."""
    stack, worked, factors, last = [], False, {}, None
    for e in inner:
        if last is not None and e["at"][0][0] > last["at"][0][0]:
            worked = True  # a launch since the last event
        last = e
        if e["kind"] == "grid":
            key = (e["key"], e["n"], e["kept"])
            keys = [k for k, _ in stack]
            if key in keys:
                stack = stack[:keys.index(key) + 1]
            elif worked:
                stack = [(key, e["n"] / e["kept"])]
            else:
                stack.append((key, e["n"] / e["kept"]))
            worked = False
        f = 1.0
        for _, x in stack:
            f *= x
        factors[e["_i"]] = f
    return factors


def estimate(dry: dict[int, list[dict]]) -> dict:
    """Per cell, the work at the profile's real steps and grids from the events of the dry
    runs at :data:`CAPS` (``{cap: Counter.events}``): ``{cell: dict(launches=, host_reads=,
    flops=, bytes=, aligned=)}``. See the module's docstring for the assumptions."""
    lo, hi = CAPS
    if set(dry) != set(CAPS):
        raise ValueError(f"estimate needs the dry runs at caps {CAPS}, got {sorted(dry)}")
    for events in dry.values():
        for i, e in enumerate(events):
            e["_i"] = i
    cells = {cap: _cells(events) for cap, events in dry.items()}
    if cells[lo].keys() != cells[hi].keys():
        raise ValueError(f"the dry runs at caps {CAPS} ran different cells")
    out = {}
    for cell, (inner, start, end) in cells[lo].items():
        inner3, start3, end3 = cells[hi][cell]
        factors = _grid_factors(inner)
        est = [0.0] * 4
        # the cap-2 run's work, each stretch between events at the grid factor then in force
        marks = [(start[0], 1.0)] + [(e["at"][0], factors[e["_i"]]) for e in inner]
        for (at, f), nxt in zip(marks, [m[0] for m in marks[1:]] + [end[0]]):
            for i, d in enumerate(_minus(nxt, at)):
                est[i] += f * d
        seg2, seg3 = _segments(inner, end), _segments(inner3, end3)
        aligned = [s[0]["planned"] for s in seg2] == [s[0]["planned"] for s in seg3]
        if len(seg2) == len(seg3):  # the cuts pair up: each its own steps and evaluations
            for (e, w2, v2, ev2), (_, w3, v3, _) in zip(seg2, seg3):
                more = e["planned"] - e["got"]
                step = [max(0, (a - b) - (c - d)) for a, b, c, d in zip(w3, v3, w2, v2)]
                real, dryn = sum(v["real"] for v in ev2), sum(v["dry"] for v in ev2)
                f = factors[e["_i"]]
                for i in range(4):
                    est[i] += f * (step[i] * more + (v2[i] * (real - dryn) / dryn if dryn else 0))
        elif seg2:  # they do not: the cell's one more step, times the mean cut, at the mean factor
            more = sum(s[0]["planned"] - s[0]["got"] for s in seg2) / len(seg2)
            f = sum(factors[s[0]["_i"]] for s in seg2) / len(seg2)
            diff = [max(0, a - b) for a, b in zip(_minus(end3[0], start3[0]), _minus(end[0], start[0]))]
            for i in range(4):
                est[i] += f * diff[i] * more
        out[cell] = dict(zip(KEYS, (int(round(x)) for x in est)), aligned=int(aligned))
    return out


# ----------------------------------------------------------------------------- notebooks


def _runner_cell(code: str):
    import nbformat

    return nbformat.v4.new_code_cell(code)


def count_notebook(chapter: str, cap: int | None, timeout: int | None = 1200, profile: str = "gpu",
                   full_grids: bool = False) -> tuple[list[dict], list[str]]:
    """Run ``chapter``'s notebook at ``profile``'s sizes as a dry run of ``cap`` steps on
    the stand-in device (``cap=None``: the real run, every step), counting: (the Counter's
    events, each cell's first line by index). A failing cell raises nbclient's
    CellExecutionError."""
    import nbformat
    from nbclient import NotebookClient

    from dynamics import runtime
    from dynamics.results import ROOT

    if cap is not None and int(cap) < 1:
        raise ValueError(f"cap must be a positive number of steps, got {cap!r}")
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "events.json"
        cells, sources = [_runner_cell("import dynamics_ops.gpuwork as _gw\n"
                                       f"_gw_counter = _gw.Counter({full_grids}).__enter__()")], {}
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            sources[i] = next((line for line in cell.source.splitlines() if line.strip()), "")[:80]
            cells += [_runner_cell(f"_gw_counter.mark({i})"), cell]
        cells.append(_runner_cell(f"_gw_counter.__exit__(None, None, None)\n"
                                  f"_gw.save(_gw_counter.events, {str(result)!r})"))
        nb.cells = cells
        env = dict(os.environ, **dict(runtime.GPU_SMOKE_ENV, DYNAMICS_PROFILE=profile,
                                      DYNAMICS_DRY_RUN="0" if cap is None else str(int(cap)),
                                      DYNAMICS_RESULTS_DIR=tmp))
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT / "chapters")}}).execute(env=env)
        events = json.loads(result.read_text())
    return events, sources


def save(events, path) -> None:
    Path(path).write_text(json.dumps(events))


def count_chapter(chapter: str, first: tuple | None = None, timeout: int | None = 1200,
                  keep: Path | None = None, full_grids: bool = False) -> list[dict]:
    """The chapter's rows: per code cell, the estimated work at the gpu profile's real steps.
    ``first``: what :func:`count_notebook` gave for a dry run at ``CAPS[0]`` already made (the
    gpu_sizes test's); ``keep``: a folder where each dry run's events are kept and, when
    there, read instead of running the notebook again (``--keep``); ``full_grids``: the dry
    runs keep every grid whole (each row's ``grids`` says which way it was counted)."""
    runs, sources = {}, {}
    grids = "whole" if full_grids else "cut"
    for cap in CAPS:
        kept = Path(keep) / f"{chapter}-{cap}{'-full' if full_grids else ''}.json" if keep else None
        if cap == CAPS[0] and first is not None:
            runs[cap], sources = first
        elif kept is not None and kept.exists():
            runs[cap], sources = json.loads(kept.read_text())
            sources = {int(k): v for k, v in sources.items()}
        else:
            runs[cap], sources = count_notebook(chapter, cap, timeout, full_grids=full_grids)
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(json.dumps([runs[cap], sources]))
    est = estimate(runs)
    return [dict(chapter=chapter, cell=cell, source=sources.get(cell, ""), **values, grids=grids)
            for cell, values in sorted(est.items()) if cell in sources]


def counted_whole(baseline: list[dict], chapter: str) -> bool:
    """Whether the baseline's rows of ``chapter`` were counted with every grid whole (a row
    written before the ``grids`` column was counted with grids cut)."""
    return any((r.get("grids") or "cut") == "whole" for r in baseline if r["chapter"] == chapter)


def chapter_totals(rows: list[dict]) -> dict:
    out = {}
    for r in rows:
        t = out.setdefault(r["chapter"], dict.fromkeys(KEYS, 0))
        for k in KEYS:
            t[k] += int(r[k])
    return out


def table(rows: list[dict]) -> str:
    """The per-chapter table (markdown): estimated launches, host reads, GFLOPs and GB, and the
    two floors they put under a notebook's time on a GPU (counts, not times: a floor is what
    the work cannot take less than at :data:`LAUNCH_S` per launch or :data:`T4_FLOPS`)."""
    lines = ["| chapter | grids | launches | host reads | GFLOPs | GB written | launches × 10 µs "
             "| FLOPs at 8 TFLOP/s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for chapter, t in chapter_totals(rows).items():
        grids = "whole" if counted_whole(rows, chapter) else "cut"
        lines.append(f"| {chapter} | {grids} | {t['launches']:,} | {t['host_reads']:,} | "
                     f"{t['flops'] / 1e9:,.0f} | {t['bytes'] / 1e9:,.0f} | "
                     f"≥ {t['launches'] * LAUNCH_S:,.0f} s | ≥ {t['flops'] / T4_FLOPS:,.1f} s |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the baseline


def baseline_path() -> Path:
    from dynamics.results import ROOT

    return ROOT / "data" / "gpu_work.csv"


def read_baseline(path: Path | None = None) -> list[dict]:
    with open(path or baseline_path(), newline="") as f:
        return list(csv.DictReader(f))


def write_baseline(rows: list[dict], path: Path | None = None) -> Path:
    """Rows of the chapters counted replace theirs in the baseline (others are kept)."""
    from dynamics import CHAPTERS
    from dynamics.results import ROOT

    path = Path(path or baseline_path())
    kept = [r for r in (read_baseline(path) if path.exists() else [])
            if r["chapter"] not in {x["chapter"] for x in rows}]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    made = dict(commit=commit, torch=torch.__version__,
                date=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"))
    order = list(CHAPTERS)
    allrows = kept + [dict(r, **made) for r in rows]
    allrows.sort(key=lambda r: (order.index(r["chapter"]) if r["chapter"] in order else 99, int(r["cell"])))
    text = io.StringIO()
    out = csv.DictWriter(text, fieldnames=FIELDS, lineterminator="\n")
    out.writeheader()
    out.writerows({k: (r.get(k) or "cut") if k == "grids" else r[k] for k in FIELDS}
                  for r in allrows)
    path.write_text(text.getvalue())
    return path


def growth(rows: list[dict], baseline: list[dict], factor: float = GROWTH) -> list[str]:
    """What grew more than ``factor`` times over the baseline: one line per chapter and
    measure, naming the cells that grew most and the command that rewrites the baseline.
    Empty when nothing did."""
    if factor <= 1:
        raise ValueError(f"growth factor must be above 1, got {factor!r}")
    now, then = chapter_totals(rows), chapter_totals(baseline)
    by_cell = {(r["chapter"], int(r["cell"])): r for r in baseline}
    problems = []
    for chapter, t in now.items():
        if chapter not in then:
            problems.append(f"{chapter}: no baseline in data/gpu_work.csv; write it with {COMMAND} "
                            f"--chapters {chapter}")
            continue
        for key in COMPARED:
            old, new = then[chapter][key], t[key]
            if new > factor * max(old, 1):
                cells = []
                for r in rows:
                    if r["chapter"] != chapter:
                        continue
                    b = by_cell.get((chapter, int(r["cell"])))
                    before = int(b[key]) if b else 0
                    if int(r[key]) - before > 0:
                        cells.append((int(r[key]) - before, r["cell"], before, int(r[key]), r["source"]))
                cells.sort(reverse=True)
                said = "; ".join(f"cell {c} ({src!r}) {b:,} -> {n:,} ({n / max(b, 1):.1f}x)"
                                 for _, c, b, n, src in cells[:3])
                problems.append(f"{chapter}: estimated {key} grew {new / max(old, 1):.2f}x "
                                f"({old:,} -> {new:,}; allowed {factor}x): {said}. If the growth is "
                                f"intended, rewrite the baseline: {COMMAND} --chapters {chapter}")
    return problems


# ----------------------------------------------------------------------------- command line


def main(argv=None) -> int:
    from dynamics import CHAPTERS

    parser = argparse.ArgumentParser(prog="python -m dynamics_ops.gpuwork", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapters_pos", nargs="*", metavar="chapter", help="chapters (default: all)")
    parser.add_argument("--chapters", help="comma-separated chapters (default: all)")
    parser.add_argument("--cells", action="store_true", help="print every cell's row")
    parser.add_argument("--write", action="store_true", help="rewrite their rows of data/gpu_work.csv")
    parser.add_argument("--keep", type=Path, help="a folder to keep each dry run's events in, and to "
                        "read them from when there (the estimate redone without running the notebooks)")
    parser.add_argument("--table", action="store_true",
                        help="print the table of data/gpu_work.csv (the committed counts), count nothing")
    parser.add_argument("--check", action="store_true",
                        help="test the estimate on a known answer: each chapter at the smoke "
                             "profile estimated from its dry runs and counted in a real run, cell "
                             "by cell (cells off by more than 10%% are marked)")
    parser.add_argument("--full-grids", action="store_true",
                        help="dry runs keep every grid whole (only steps are cut): slower, and "
                             "nothing is scaled by a grid's size")
    parser.add_argument("--timeout", type=int, help="a cell's limit in seconds, 0: none (default 1200; "
                        "none with --full-grids: initialization's claims cell takes over an hour)")
    args = parser.parse_args(argv)
    if (args.timeout or 0) < 0:
        parser.error(f"--timeout must be 0 (no limit) or a number of seconds, got {args.timeout}")
    timeout = (None if args.full_grids else 1200) if args.timeout is None else args.timeout or None
    chapters = list(args.chapters_pos) + (args.chapters.split(",") if args.chapters else [])
    chapters = chapters or list(CHAPTERS)
    unknown = sorted(set(chapters) - set(CHAPTERS))
    if unknown:
        parser.error(f"unknown chapters {', '.join(unknown)}; choose from {', '.join(CHAPTERS)}")
    if args.table:
        if args.write or args.cells:
            parser.error("--table prints the committed counts: it takes no --write or --cells")
        rows = [r for r in read_baseline() if r["chapter"] in chapters]
        made = sorted({(r["commit"], r["torch"], r["date"]) for r in rows})
        print(table(rows))
        print("\nCounted at " + "; ".join(f"commit {c}, torch {t}, {d}" for c, t, d in made) + ".")
        return 0
    if args.check:
        if args.write or args.cells:
            parser.error("--check compares the estimate with a real run: it takes no --write or --cells")
        from . import gpucheck

        gpucheck.report(chapters, keep=args.keep, full_grids=args.full_grids)
        return 0
    rows = []
    for chapter in chapters:
        mine = count_chapter(chapter, timeout=timeout, keep=args.keep, full_grids=args.full_grids)
        rows += mine
        if args.cells:
            for r in mine:
                print(f"{chapter} cell {r['cell']:>3}: {r['launches']:>12,} launches "
                      f"{r['host_reads']:>9,} reads {r['flops'] / 1e9:>12,.2f} GFLOP "
                      f"{r['bytes'] / 1e9:>10,.2f} GB  {'' if r['aligned'] else '(not aligned) '}"
                      f"{r['source']}", flush=True)
    print(table(rows), flush=True)
    if args.write:
        print(f"# wrote {len(rows)} rows to {write_baseline(rows)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
