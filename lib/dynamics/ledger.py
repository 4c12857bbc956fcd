"""What a dry run measures for the gpu plan (``python -m dynamics.bench gpu``).

A dry run (``DYNAMICS_DRY_RUN=<n>``) trains every model of a profile at its full size for
``n`` steps. With ``DYNAMICS_LEDGER=<file>`` as well, each training by
:func:`dynamics.train.train` and each batched chunk of :func:`dynamics.sweep.train_many`
appends one JSON line to that file, enough to plan the full run on a GPU without one:

- the steps and evaluations it was asked for (before the dry run's cap);
- the FLOPs of one training step and of one evaluation, counted by
  ``torch.utils.flop_counter.FlopCounterMode`` (matmuls, convolutions, attention: the work a
  GPU's arithmetic units do), and the operations dispatched per step and per evaluation
  (views excluded: each other op is a kernel launch on a GPU, which is what small models
  spend their time on);
- the bytes it holds: the data, the parameters, their gradients, the optimizer state, the
  activations autograd saves for the backward pass (``saved_tensors_hooks``, parameters and
  data not counted twice) and the largest single tensor an op produced; from them, the peak
  (see :meth:`Meter.peak`).

Step 1 is measured on its own; one evaluation's cost is what the whole dry-run training
counted beyond its steps, divided by the evaluations it made (callbacks and user metrics
included). Work that is not a training (a theme's own loop over random networks, a
measurement after training) enters the ledger through ``with ledger.work(desc, scale):``.

What the dry run cut is recorded where it is cut, never by hand in a theme: a Recipe's steps
are capped by ``train`` itself, a step count a runner needs before training by
:func:`dynamics.runtime.steps` (it remembers the planned steps), and an axis by
:func:`dynamics.runtime.grid` (the trainings of a loop over it repeat, a ``train_many`` call
given it widens). The core passes them on with :func:`planned`. Outside a measured dry run
all of this does nothing.
"""
from __future__ import annotations

import contextvars
import json
import math
import os
from contextlib import contextmanager
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

from .runtime import dry_run, loop_repeats


def active() -> bool:
    """True in a dry run that keeps a ledger (``DYNAMICS_DRY_RUN`` and ``DYNAMICS_LEDGER``)."""
    return dry_run() is not None and bool(os.environ.get("DYNAMICS_LEDGER", "").strip())


def read(path) -> list[dict]:
    """The entries of a ledger file (none if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if torch.is_tensor(t))


class _Ops(TorchDispatchMode):
    """Counts the ops dispatched (views excluded: they launch no kernel) and the largest
    tensor any op produced."""

    def __init__(self):
        super().__init__()
        self.ops = 0
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not func.is_view:
            self.ops += 1
            if torch.is_tensor(out):
                self.largest = max(self.largest, out.numel() * out.element_size())
        return out


class _Null:
    """The meter outside a measured dry run: does nothing."""

    def begin(self, step):
        pass

    def end(self, step, optimizer=None, state=(), grads=None):
        pass

    def evaluated(self):
        pass

    def close(self, evals_run=None):
        pass


class Meter:
    """Measures one training and appends its ledger line at :meth:`close`.

    ``params`` are the trained tensors (their storage is the parameters' for the whole
    run). ``begin(step)`` at the start of every step and ``end(step, optimizer | state,
    grads)`` after its update (only step 1 is measured; every ``begin`` counts a step);
    ``evaluated()`` after each evaluation (or pass ``evals_run`` to ``close``)."""

    def __init__(self, kind: str, planned_steps: int, planned_evals: int, data, params,
                 models: int = 1, desc: str = ""):
        self.entry = dict(kind=kind, desc=desc, models=int(models), planned_steps=int(planned_steps),
                          planned_evals=int(planned_evals), steps_run=0, evals_run=0,
                          data_bytes=_bytes([data.x_train, data.y_train, data.x_test, data.y_test]),
                          device=str(data.device))
        self._params = list(params)
        held = [data.x_train, data.x_test, *self._params]
        self._held = {t.untyped_storage().data_ptr() for t in held}
        self._total, self._total_ops = FlopCounterMode(display=False), _Ops()
        self._step = None
        self._total.__enter__()
        self._total_ops.__enter__()

    def begin(self, step: int) -> None:
        self.entry["steps_run"] += 1
        if step != 1:
            return
        self._saved, self._skip = 0, set(self._held)
        self._step = (FlopCounterMode(display=False), _Ops(),
                      torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t))
        for mode in self._step:
            mode.__enter__()

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in self._skip:  # a parameter or the data is held anyway: count it once
            self._skip.add(ptr)
            self._saved += t.numel() * t.element_size()
        return t

    def end(self, step: int, optimizer=None, state=None, grads=None) -> None:
        """After each step (only step 1 is measured). ``state``: the batched engine's optimizer
        state, ``{name: [tensor per parameter]}``; ``optimizer``: a torch optimizer's."""
        if step != 1 or self._step is None:
            return
        flops, ops, hooks = self._step
        for mode in (hooks, ops, flops):
            mode.__exit__(None, None, None)
        self._step = None
        params = self._params
        if grads is None:
            grads = [p.grad for p in params if p.grad is not None]
        if optimizer is not None:
            opts = getattr(optimizer, "optimizers", [optimizer])
            state = [t for opt in opts for s in getattr(opt, "state", {}).values()
                     if isinstance(s, dict) for t in s.values()]  # a theme's own optimizer too
        else:
            state = [t for ts in (state or {}).values() for t in ts]
        self.entry.update(step_flops=int(flops.get_total_flops()), step_ops=ops.ops,
                          param_bytes=_bytes(params),
                          grad_bytes=_bytes(grads),
                          state_bytes=_bytes(state), saved_bytes=int(self._saved))

    def evaluated(self) -> None:
        self.entry["evals_run"] += 1

    def close(self, evals_run: int | None = None) -> None:
        if self._total is None:
            return
        if self._step is not None:  # the first step raised: leave its modes too
            for mode in reversed(self._step):
                mode.__exit__(None, None, None)
            self._step = None
        self._total_ops.__exit__(None, None, None)
        self._total.__exit__(None, None, None)
        e = self.entry
        if evals_run is not None:
            e["evals_run"] = int(evals_run)
        if "step_flops" in e:  # at least one step ran
            extra = self._total.get_total_flops() - e["steps_run"] * e["step_flops"]
            extra_ops = self._total_ops.ops - e["steps_run"] * e["step_ops"]
            n = max(1, e["evals_run"])
            e.update(eval_flops=max(0, int(extra / n)), eval_ops=max(0, int(extra_ops / n)),
                     largest_bytes=self._total_ops.largest)
            e["peak_bytes"] = self.peak(e)
            _append(e)
        self._total = None

    @staticmethod
    def peak(e: dict) -> int:
        """The memory model: everything held for the whole run (data, parameters, gradients,
        optimizer state; the batched engine's pure update also holds a new copy of the
        parameters and of the state while it steps) plus the larger transient of the two:
        a training step's saved activations (x2: the backward pass allocates about as much
        again while it frees them) or twice the largest single tensor (an evaluation chunk's
        input and output)."""
        copies = 2 if e["kind"] == "batched" else 1
        held = (e["data_bytes"] + copies * e["param_bytes"] + e["grad_bytes"]
                + copies * e["state_bytes"])
        return int(held + max(2 * e["saved_bytes"], 2 * e["largest_bytes"]))


_PLANNED: contextvars.ContextVar[tuple] = contextvars.ContextVar("planned", default=(None, 1.0, 1.0))


@contextmanager
def planned(steps: int | None = None, repeats: float = 1.0, widen: float = 1.0):
    """What a dry run cut before the trainings inside this block saw it, so that the plan
    counts the full run:

    - ``steps``: their planned steps, where they were capped before the training saw them;
    - ``repeats``: how many times over the full run does their work (units of a precompute
      cut by ``units.Plan.grid``; loops over ``runtime.grid`` add their own cut);
    - ``widen``: how many times more models the full run puts into the same ``train_many``
      call (axes of its configurations). The batched engine trains them together: their FLOPs
      and memory grow, its dispatched ops do not. Trained one after another (``kind="train"``),
      widening is repeating.

    Nested blocks multiply their factors; see :func:`cut`."""
    outer_steps, outer_repeats, outer_widen = _PLANNED.get()
    token = _PLANNED.set((outer_steps if steps is None else int(steps),
                          outer_repeats * float(repeats), outer_widen * float(widen)))
    try:
        yield
    finally:
        _PLANNED.reset(token)


def cut(*axes) -> float:
    """``repeats`` or ``widen`` for :func:`planned` from ``(full, kept)`` pairs of a grid's axes."""
    out = 1.0
    for full, kept in axes:
        out *= len(list(full)) / max(1, len(list(kept)))
    return out


def meter(kind: str, planned_steps: int, planned_evals: int, data, params, models: int = 1,
          desc: str = "", chunk: int | None = None):
    """A :class:`Meter` in a measured dry run, else one that does nothing. ``planned_evals``
    may be a function (computed only when measuring). Inside :func:`planned`, the steps and
    repeats declared there. ``chunk``: the most models a batched call holds on the GPU (the
    sweep's chunk size); a widened call that holds more runs as that many chunks, one after
    another (more repeats, each less wide)."""
    if not active():
        return _Null()
    if callable(planned_evals):
        planned_evals = planned_evals()
    steps, repeats, widen = _PLANNED.get()
    repeats *= loop_repeats()  # the runtime.grid loops running now
    planned_steps = max(int(planned_steps), steps or 0)
    meter = Meter(kind, planned_steps, planned_evals, data, params, models, desc)
    if kind != "batched":  # one model at a time: more models are more trainings
        repeats, widen = repeats * widen, 1.0
    elif chunk and models * widen > chunk:
        n = math.ceil(models * widen / chunk)
        repeats, widen = repeats * n, widen / n
    meter.entry.update(repeats=repeats, widen=widen)
    return meter


@contextmanager
def work(desc: str, scale: float = 1.0):
    """Meter a block that is not a training (in a measured dry run; otherwise nothing): its
    FLOPs and ops, times ``scale``, the number of times the full run repeats what the dry run
    did (e.g. ``len(grid) / len(cap_grid(grid))``), and its largest tensor."""
    if not active():
        yield
        return
    flops, ops = FlopCounterMode(display=False), _Ops()
    with flops, ops:
        yield
    e = dict(kind="work", desc=desc, models=1, planned_steps=1, planned_evals=0, steps_run=1,
             evals_run=0, data_bytes=0, device="", step_flops=int(flops.get_total_flops() * scale),
             step_ops=int(ops.ops * scale), param_bytes=0, grad_bytes=0, state_bytes=0,
             saved_bytes=0, eval_flops=0, eval_ops=0, largest_bytes=ops.largest)
    e["peak_bytes"] = Meter.peak(e)
    _append(e)


_UNIT: contextvars.ContextVar[tuple] = contextvars.ContextVar("unit", default=(None, 1.0))


@contextmanager
def unit(name: str, repeats: float = 1.0):
    """The entries made inside this block belong to the precompute unit ``name``
    (:mod:`dynamics.units`), which stands for ``repeats`` units of the full run: the plan then
    prices each unit, the work one resumable step of a precompute must fit in."""
    token = _UNIT.set((name, float(repeats)))
    try:
        yield
    finally:
        _UNIT.reset(token)


def _append(entry: dict) -> None:
    name, repeats = _UNIT.get()
    if name is not None:
        entry.update(unit=name, unit_repeats=repeats)
    path = Path(os.environ["DYNAMICS_LEDGER"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(entry) + "\n")
