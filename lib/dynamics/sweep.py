"""Train many configurations of one architecture at once.

``configs = grid(lr=[1e-3, 1e-2], weight_decay=[0, 0.1], seed=[0, 1])`` builds a cartesian
grid; ``train_many(model_fn, data, configs, steps=...)`` trains one model per configuration and
returns a :class:`SweepResult`: one :class:`~dynamics.train.History` per configuration (the same
metrics and evaluation steps as :func:`dynamics.train.train`), a tidy ``table()`` and the grids,
heatmaps and sliders of a phase diagram.

Two strategies give the same numbers (a test checks this to float tolerance):

- **batched**: the K models' parameters are stacked into tensors with a leading model axis
  (``torch.func.stack_module_state``); one ``vmap``-ed ``functional_call`` runs all K forward
  passes as batched matmuls, one ordinary backward gives all K gradients (the models are
  independent, so the gradient of the summed losses is each model's own gradient), and
  :func:`batched_step` applies AdamW / Adam(+L2) / SGD(+momentum) to every model at once with
  per-model learning rates and weight decays held in ``[K]`` tensors. No host sync per step:
  divergence is tracked in device tensors and read at evaluation steps only.
- **sequential**: one model after another through :func:`dynamics.train.train`.

``strategy="auto"`` picks batched on accelerators, and on CPU only for small models, where
per-step overhead dominates and batching wins; for larger models CPU batched matmuls are no
faster than one model at a time (see :data:`CPU_BATCHED_MAX_WORK` and ``python -m
dynamics.bench sweep``).

What a sweep trains is a frozen :class:`Spec` (what every model shares) and one :class:`Run`
per configuration (what differs); a batched chunk's evaluation bookkeeping (histories,
divergence, which models still update) is one :class:`Evaluations` object. A configuration
whose loss becomes non-finite is marked (``history.diverged_at``) and frozen; the others
continue unaffected. K is split into chunks sized from the free device memory.
"""
from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ledger
from .data import Dataset
from .runtime import Forecast, cap_steps, progress_enabled
from .train import History, check_hyper, checked_schedule, eval_schedule, train

OPTIMIZERS = ("adamw", "adam", "adam_l2", "sgd", "momentum")
LOSSES = ("cross_entropy", "mse")
STRATEGIES = ("auto", "batched", "sequential")
# Batched beats sequential on a (2-core) CPU when one model's step is cheap enough that
# per-call overhead dominates. "work" = parameters x rows per step (a proxy for FLOPs/step).
# Measured with ``python -m dynamics.bench sweep`` (batched against sequential, same run).
CPU_BATCHED_MAX_WORK = 2e7
CPU_MEMORY_BUDGET = 1 << 30  # bytes for the stacked models of one chunk on CPU


# ----------------------------------------------------------------------------- grid


def grid(**axes) -> list[dict]:
    """The cartesian product of the given axes, as a list of dicts; the last axis varies
    fastest: ``grid(a=[1, 2], b=[3, 4])`` -> ``[{a:1,b:3}, {a:1,b:4}, {a:2,b:3}, {a:2,b:4}]``."""
    if not axes:
        raise ValueError("grid() needs at least one axis, e.g. grid(lr=[1e-3, 1e-2])")
    values = {}
    for name, vals in axes.items():
        if isinstance(vals, (str, bytes)) or not isinstance(vals, Iterable):
            vals = [vals]
        vals = list(vals)
        if not vals:
            raise ValueError(f"grid axis {name!r} is empty")
        values[name] = vals
    names = list(values)
    return [dict(zip(names, combo)) for combo in itertools.product(*values.values())]


# ----------------------------------------------------------------------------- result


def _threshold(metric: str, spec) -> tuple[str, float]:
    """``0.9`` -> ("above", 0.9) for accuracies, ("below", 0.9) for losses;
    ``("below", 0.1)`` or ``{"below": 0.1}`` explicit."""
    if isinstance(spec, dict):
        if len(spec) != 1 or next(iter(spec)) not in ("above", "below"):
            raise ValueError(f"threshold for {metric!r} must be a number, ('above'|'below', v) "
                             f"or {{'above'|'below': v}}, got {spec!r}")
        spec = next(iter(spec.items()))
    if isinstance(spec, (tuple, list)):
        if len(spec) != 2 or spec[0] not in ("above", "below"):
            raise ValueError(f"threshold for {metric!r} must be ('above'|'below', value), got {spec!r}")
        return spec[0], float(spec[1])
    return ("below" if "loss" in metric else "above"), float(spec)


def _sort_values(values: list) -> list:
    unique = []
    for v in values:
        if not any(v == u for u in unique):
            unique.append(v)
    try:
        return sorted(unique)
    except TypeError:
        return unique


def table_grid(rows: Sequence[dict], z: str, x: str, y: str, reduce: str = "mean"):
    """A 2-D array ``Z[i, j]`` of column ``z`` at ``y == ys[i]`` and ``x == xs[j]`` from
    table rows; several rows in one cell (e.g. seeds) are reduced by ``mean`` (ignoring NaN),
    ``median``, ``min`` or ``max``; missing cells and None are NaN. Returns (Z, xs, ys)."""
    rows = list(rows)
    if not rows:
        raise ValueError("table_grid() got no rows")
    for key in (x, y, z):
        if key not in rows[0]:
            raise ValueError(f"no column {key!r} in the table; columns: {list(rows[0])}")
    reducers = {"mean": np.nanmean, "median": np.nanmedian, "min": np.nanmin, "max": np.nanmax}
    if reduce not in reducers:
        raise ValueError(f"reduce must be one of {list(reducers)}, got {reduce!r}")
    xs = _sort_values([r[x] for r in rows])
    ys = _sort_values([r[y] for r in rows])
    cells: dict = {}
    for r in rows:
        i = next(i for i, v in enumerate(ys) if v == r[y])
        j = next(j for j, v in enumerate(xs) if v == r[x])
        val = r[z]
        cells.setdefault((i, j), []).append(np.nan if val is None else float(val))
    Z = np.full((len(ys), len(xs)), np.nan)
    for (i, j), vals in cells.items():
        if not np.all(np.isnan(vals)):
            Z[i, j] = reducers[reduce](vals)
    return Z, xs, ys


def _label(v) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def sweep_heatmap(rows: Sequence[dict], x: str, y: str, z: str, reduce: str = "mean",
                  title: str = "", **kwargs):
    """A phase-diagram heatmap (``plots.heatmap``) of column ``z`` over config keys ``x``, ``y``
    of a sweep table (``SweepResult.table()`` or rows loaded from JSON). Grid values are
    discrete, so both axes are categories (evenly spaced, labelled with the values)."""
    from . import plots

    Z, xs, ys = table_grid(rows, z, x, y, reduce)
    kwargs.setdefault("xtitle", x)
    kwargs.setdefault("ytitle", y)
    kwargs.setdefault("ztitle", z)
    fig = plots.heatmap(Z, [_label(v) for v in xs], [_label(v) for v in ys], title=title, **kwargs)
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


@dataclass
class SweepResult:
    """Configurations and their histories (same order), plus each model's trained parameters
    (``states[k]``, a state dict; empty for results loaded from JSON)."""

    configs: list
    histories: list
    states: list = field(default_factory=list, repr=False)
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.configs)

    def __iter__(self):
        return iter(zip(self.configs, self.histories))

    def state_dict(self, k: int) -> dict:
        """Model ``k``'s trained parameters (and buffers) as a state dict."""
        if not self.states:
            raise ValueError("this SweepResult holds no parameters (loaded from JSON?)")
        return dict(self.states[k])

    def table(self, thresholds: dict | None = None, metrics: Sequence[str] | None = None) -> list[dict]:
        """One row per configuration: its config keys, ``final_<metric>`` (the value at the
        last step; NaN for a diverged run, which has no final state), ``steps_to_<metric>``
        for each threshold (first evaluation step reaching it, None if never), ``diverged``
        and ``diverged_at``. A threshold is a number (above for accuracies, below for
        losses) or ``("above"|"below", value)``."""
        thresholds = {"test_acc": 0.9} if thresholds is None else dict(thresholds)
        specs = {m: _threshold(m, s) for m, s in thresholds.items()}
        rows = []
        recorded = next((h.metrics for h in self.histories if h.metrics), {})
        for cfg, h in zip(self.configs, self.histories):
            row = dict(cfg)
            names = metrics or [m for m in (h.metrics or recorded) if m != "time"]
            for m in names:
                row[f"final_{m}"] = float("nan") if (h.diverged or m not in h) else h.last(m)
            for m, (side, value) in specs.items():
                row[f"steps_to_{m}"] = h.first_step(m, **{side: value}) if m in h else None
            row["diverged"] = h.diverged
            row["diverged_at"] = h.diverged_at
            if h.info.get("stopped"):
                row["stopped"] = True  # the sweep was stopped before this configuration ran
            rows.append(row)
        return rows

    def grid_values(self, z: str | Callable, x: str, y: str, reduce: str = "mean",
                    thresholds: dict | None = None):
        """(Z, xs, ys) for a heatmap: ``z`` is a table column (``final_test_acc``,
        ``steps_to_test_acc``, ...) or a function ``history -> float``."""
        rows = self.table(thresholds)
        if callable(z):
            for row, h in zip(rows, self.histories):
                row["_z"] = z(h)
            z = "_z"
        return table_grid(rows, z, x, y, reduce)

    def heatmap(self, z: str, x: str, y: str, thresholds: dict | None = None, **kwargs):
        """The phase diagram of ``z`` over config keys ``x`` and ``y`` (see :func:`sweep_heatmap`)."""
        return sweep_heatmap(self.table(thresholds), x, y, z, **kwargs)

    def at_step(self, metric: str, step: int) -> list[float]:
        """Each configuration's ``metric`` at the last evaluation at or before ``step``
        (NaN before its first evaluation or after it diverged)."""
        out = []
        for h in self.histories:
            steps = np.asarray(h.steps)
            idx = np.searchsorted(steps, step, side="right") - 1
            if idx < 0 or metric not in h or (h.diverged and step >= h.diverged_at):
                out.append(float("nan"))
            else:
                out.append(float(h[metric][idx]))
        return out

    def slider_over_time(self, metric: str, x: str, y: str, steps: Sequence[int] | None = None,
                         n: int = 12, reduce: str = "mean", title: str = "", **kwargs):
        """A heatmap of ``metric`` over (x, y) with a slider over training time (``n``
        evaluation steps, log-spaced when the schedule is): the static counterpart of a
        widget that re-runs the sweep."""
        from . import plots

        if steps is None:
            all_steps = sorted({s for h in self.histories for s in h.steps})
            if not all_steps:
                raise ValueError("no evaluation steps recorded")
            picks = np.unique(np.round(np.linspace(0, len(all_steps) - 1, n)).astype(int))
            steps = [all_steps[i] for i in picks]
        values = {s: self.at_step(metric, s) for s in steps}
        finite = [v for vs in values.values() for v in vs if math.isfinite(v)]
        if finite:  # one colour scale for every step, so frames compare
            kwargs.setdefault("zmin", min(finite))
            kwargs.setdefault("zmax", max(finite))
        figs = []
        base = [dict(c) for c in self.configs]
        for s in steps:
            rows = [dict(r, _z=v) for r, v in zip(base, values[s])]
            fig = sweep_heatmap(rows, x, y, "_z", reduce, title=f"{title or metric} at step {s}",
                                ztitle=metric, **kwargs)
            figs.append(fig)
        return plots.slider(figs, [str(s) for s in steps], name="step")

    def to_dict(self) -> dict:
        """JSON-ready (no parameters): pass to ``results.save``; back with :meth:`from_dict`."""
        return dict(configs=[dict(c) for c in self.configs],
                    histories=[h.to_dict() for h in self.histories], info=dict(self.info))

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        return cls(list(d["configs"]), [History.from_dict(h) for h in d["histories"]],
                   info=dict(d.get("info", {})))


# ----------------------------------------------------------------------------- what to train


@dataclass(frozen=True)
class Spec:
    """What every model of a sweep shares: :func:`train_many`'s keywords, checked once.

    The configurations say what differs between the models (learning rate, weight decay,
    seed, initial scale, their own rows and parameter masks: see :class:`Run`); the spec says
    how all of them train. Frozen, so no strategy can change it half way through a sweep."""

    steps: int  # the steps each model trains (a dry run's cap applied)
    optimizer: str = "adamw"
    momentum: float = 0.9
    betas: tuple = (0.9, 0.999)
    batch_size: int | None = None
    loss: str = "cross_entropy"
    eval_every: int | None = None
    eval_steps: tuple | None = None
    metrics: dict | None = field(default=None, compare=False)
    lr_schedule: Callable[[int], float] | None = field(default=None, compare=False)
    planned_steps: int | None = None  # the steps asked for, where a dry run trains fewer
    evals: tuple = field(init=False)  # the evaluation steps, as dynamics.train.train's

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; train_many supports {list(OPTIMIZERS)}")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; train_many supports {list(LOSSES)}")
        if not isinstance(self.steps, (int, np.integer)) or self.steps < 1:
            raise ValueError(f"steps must be a positive integer, got {self.steps!r}")
        bs = self.batch_size
        if bs is not None and (not isinstance(bs, (int, np.integer)) or bs < 1):
            raise ValueError(f"batch_size must be a positive integer, got {bs!r}")
        check_hyper(momentum=self.momentum)
        if self.eval_steps is not None:
            object.__setattr__(self, "eval_steps", tuple(int(s) for s in self.eval_steps))
        evals = eval_schedule(self.steps, self.eval_every, self.eval_steps)
        if self.planned > self.steps and self.steps not in evals:  # a dry run evaluates where it stops
            evals.append(self.steps)
        object.__setattr__(self, "evals", tuple(evals))

    @property
    def planned(self) -> int:
        """The steps asked for (more than ``steps`` in a dry run)."""
        return self.planned_steps or self.steps

    def history(self, **info) -> History:
        """An empty history, as :func:`dynamics.train.train` starts one."""
        return History(info=dict(steps=self.steps, batch_size=self.batch_size, loss=str(self.loss), **info))


@dataclass(frozen=True, eq=False)
class Run:
    """One configuration of a sweep, resolved: the keyword defaults filled in, its rows of the
    data (``[N]`` bool, None for all) and its parameter masks (``{name: 0/1 tensor}``)."""

    config: dict
    lr: float
    weight_decay: float
    seed: int
    init_scale: float = 1.0
    param_mask: dict | None = None
    train_rows: torch.Tensor | None = None
    test_rows: torch.Tensor | None = None

    def data(self, data: Dataset) -> Dataset:
        """This run's own rows of ``data``."""
        return _sub_dataset(data, self.train_rows, self.test_rows)


def _runs(configs, lr, weight_decay, seed, train_mask, test_mask) -> list[Run]:
    runs = []
    for i, cfg in enumerate(configs):
        if not isinstance(cfg, dict):
            raise ValueError(f"config {i} must be a dict, got {type(cfg).__name__}")
        try:
            r_lr, r_wd, _ = check_hyper(cfg.get("lr", lr), cfg.get("weight_decay", weight_decay))
        except ValueError as e:
            raise ValueError(f"config {i} ({cfg}): {e}") from None
        run = Run(cfg, r_lr, r_wd, int(cfg.get("seed", seed)), float(cfg.get("init_scale", 1.0)),
                  None, None if train_mask is None else train_mask[i],
                  None if test_mask is None else test_mask[i])
        if not math.isfinite(run.init_scale):
            raise ValueError(f"config {i}: init_scale must be finite, got {run.init_scale}")
        runs.append(run)
    return runs


def _check_mask(mask, k: int, n: int, what: str, device) -> torch.Tensor | None:
    if mask is None:
        return None
    mask = torch.as_tensor(mask, device=device)
    if mask.dtype != torch.bool:
        raise ValueError(f"{what} must be a bool tensor, got dtype {mask.dtype}")
    if tuple(mask.shape) != (k, n):
        raise ValueError(f"{what} must have shape [K, N] = [{k}, {n}], got {list(mask.shape)}")
    return mask


def build_model(model_fn: Callable, run: Run, device) -> nn.Module:
    """Seed torch with the run's seed, build ``model_fn(config)`` on ``device``, scale its
    initial parameters by ``init_scale`` and apply its parameter mask."""
    torch.manual_seed(run.seed)
    model = model_fn(run.config)
    if not isinstance(model, nn.Module):
        raise ValueError(f"model_fn must return an nn.Module, got {type(model).__name__}")
    model = model.to(device)
    with torch.no_grad():
        if run.init_scale != 1.0:
            for p in model.parameters():
                p.mul_(run.init_scale)
        if run.param_mask:
            _apply_masks(dict(model.named_parameters()), run.param_mask)
    return model


def _apply_masks(params: dict, masks: dict) -> None:
    with torch.no_grad():
        for name, m in masks.items():
            params[name].mul_(m)


def _check_param_masks(param_masks, k: int, template: nn.Module, device) -> list | None:
    if param_masks is None:
        return None
    if len(param_masks) != k:
        raise ValueError(f"param_masks must hold one dict per config ({k}), got {len(param_masks)}")
    shapes = {n: tuple(p.shape) for n, p in template.named_parameters()}
    out = []
    for i, masks in enumerate(param_masks):
        masks = masks or {}
        checked = {}
        for name, m in masks.items():
            if name not in shapes:
                raise ValueError(f"param_masks[{i}]: no parameter {name!r}; parameters: {list(shapes)}")
            m = torch.as_tensor(m, device=device)
            if tuple(m.shape) != shapes[name]:
                raise ValueError(f"param_masks[{i}][{name!r}] has shape {list(m.shape)}, "
                                 f"the parameter {list(shapes[name])}")
            checked[name] = m.to(torch.float32)
        out.append(checked)
    return out


def _sub_dataset(data: Dataset, train_rows, test_rows) -> Dataset:
    x_tr, y_tr, x_te, y_te = data.x_train, data.y_train, data.x_test, data.y_test
    if train_rows is not None:
        if not bool(train_rows.any()):
            raise ValueError("a train_mask row selects no training examples")
        x_tr, y_tr = x_tr[train_rows], y_tr[train_rows]
    if test_rows is not None:
        x_te, y_te = x_te[test_rows], y_te[test_rows]
    return Dataset(x_tr, y_tr, x_te, y_te, data.n_classes, data.name, dict(data.info))


class _Progress:
    """The sweep's callbacks, ``fn(done_fraction) -> stop?``; remembers that one asked to stop."""

    def __init__(self, callbacks: Sequence[Callable[[float], bool]]):
        self.callbacks = list(callbacks)
        self.stopped = False

    def __call__(self, done: float) -> bool:
        if any([bool(cb(min(1.0, max(0.0, done)))) for cb in self.callbacks]):
            self.stopped = True
        return self.stopped


# ----------------------------------------------------------------------------- API


def train_many(model_fn: Callable[[dict], nn.Module], data: Dataset, configs: Sequence[dict], *,
               steps: int, optimizer: str = "adamw", lr: float | None = None,
               weight_decay: float | None = None, momentum: float = 0.9, betas=(0.9, 0.999),
               batch_size: int | None = None, loss: str = "cross_entropy",
               eval_every: int | None = None, eval_steps: Iterable[int] | None = None,
               train_mask: torch.Tensor | None = None, test_mask: torch.Tensor | None = None,
               param_masks: Sequence[dict] | None = None, strategy: str = "auto",
               chunk_size: int | None = None, progress: bool | None = None, seed: int = 0,
               metrics: dict[str, Callable] | None = None,
               lr_schedule: Callable[[int], float] | None = None,
               callbacks: Sequence[Callable[[float], bool]] = ()) -> SweepResult:
    """Train one model per configuration and return a :class:`SweepResult`.

    Each config dict may hold ``lr``, ``weight_decay``, ``seed`` (torch is seeded with it
    before ``model_fn(config)`` builds the model; it also seeds mini-batch order, as ``seed``
    does in :func:`~dynamics.train.train`) and ``init_scale`` (multiplies every initial
    parameter); missing keys take the keyword defaults (lr 1e-3, weight decay 0). Other keys
    go to ``model_fn`` and the table. ``train_mask`` / ``test_mask`` ([K, N] bool) select each
    model's own examples; ``param_masks`` (one ``{name: 0/1 tensor}`` per config) are applied
    at init and after every step. ``metrics`` (``{name: fn(model, data)}``) are extra
    evaluation metrics as in ``train`` (in the batched strategy each model is rebuilt to call
    them: keep them for small K). ``lr_schedule(step) -> factor`` works as in ``train``.
    ``callbacks``: ``fn(done_fraction) -> stop?`` at every evaluation; True stops the sweep
    and the configurations not reached keep empty histories (``stopped`` in the table).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {list(STRATEGIES)}")
    if not isinstance(data, Dataset):
        raise ValueError(f"data must be a dynamics.data.Dataset, got {type(data).__name__}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    spec = Spec(steps, optimizer, momentum, tuple(betas), batch_size, loss, eval_every, eval_steps,
                metrics, checked_schedule(lr_schedule))
    if cap_steps(spec.steps) < spec.steps:  # a dry run (DYNAMICS_DRY_RUN): a few steps at full size
        spec = dataclasses.replace(spec, steps=cap_steps(spec.steps), planned_steps=spec.steps)
    configs = list(configs)
    if not configs:
        raise ValueError("train_many() got no configurations (an empty grid?)")
    K, device = len(configs), data.device
    train_mask = _check_mask(train_mask, K, len(data.x_train), "train_mask", device)
    test_mask = _check_mask(test_mask, K, len(data.x_test), "test_mask", device)
    if train_mask is not None and not bool(train_mask.any(1).all()):
        raise ValueError("every train_mask row must select at least one training example")
    lr = 1e-3 if lr is None else lr
    weight_decay = 0.0 if weight_decay is None else weight_decay
    runs = _runs(configs, lr, weight_decay, seed, train_mask, test_mask)
    template = build_model(model_fn, runs[0], "cpu")
    param_masks = _check_param_masks(param_masks, K, template, device)
    if param_masks:
        runs = [dataclasses.replace(r, param_mask=m) for r, m in zip(runs, param_masks)]
    _check_model_on_data(template, data)

    if strategy == "auto":
        strategy = choose_strategy(template, data, batch_size, K, metrics)
    elif strategy == "batched":
        reason = _unbatchable(template)
        if reason:
            raise ValueError(f"strategy='batched' cannot train this model: {reason}")
    start = time.perf_counter()
    # the sweep speaks for its runs: a sweep longer than a minute says so (the runs keep quiet)
    forecast = Forecast(f"{K} configurations x {spec.steps:,} steps", 1.0, device=device, inner=False,
                        sync=(lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else None)
    report = _Progress([forecast.update, *callbacks])
    with forecast:
        if strategy == "sequential":
            chunk = 1
            histories, states = _train_sequential(model_fn, data, spec, runs, progress, report)
        else:
            chunk = chunk_size or auto_chunk_size(template, data, batch_size, optimizer)
            histories, states = _train_batched(model_fn, data, spec, runs, chunk, progress, report)
    info = dict(strategy=strategy, chunk_size=chunk, optimizer=optimizer, steps=spec.steps,
                stopped=report.stopped, batch_size=batch_size, loss=loss, device=str(device),
                wall_time=time.perf_counter() - start)
    return SweepResult(configs, histories, states, info)


def _check_model_on_data(model: nn.Module, data: Dataset) -> None:
    """Fail early, with a clear message, when the model does not fit the data's shapes."""
    x = data.x_train[:2].to("cpu")
    try:
        with torch.no_grad():
            out = model(x)
    except Exception as e:  # noqa: BLE001 - any failure here is a shape mismatch to report
        raise ValueError(f"model_fn's model does not accept the data's inputs of shape "
                         f"{list(data.x_train.shape[1:])}: {e}") from None
    if out.ndim != 2 or out.shape[1] != data.n_classes:
        raise ValueError(f"model_fn's model outputs shape {list(out.shape)} but the data has "
                         f"{data.n_classes} classes: expected [batch, {data.n_classes}]")


# ----------------------------------------------------------------------------- strategy, memory


def _unbatchable(model: nn.Module) -> str | None:
    """Why the batched engine cannot train ``model`` exactly (None if it can)."""
    if any(True for _ in model.buffers()):
        return "it has buffers (e.g. BatchNorm running statistics)"
    if any(isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0 for m in model.modules()):
        return "it uses dropout (random per model)"
    return None


def model_work(model: nn.Module, data: Dataset, batch_size: int | None) -> float:
    """Parameters x rows per step: a proxy for one model's cost per step."""
    rows = len(data.x_train) if batch_size is None else min(batch_size, len(data.x_train))
    return float(sum(p.numel() for p in model.parameters())) * rows


def choose_strategy(model: nn.Module, data: Dataset, batch_size: int | None, k: int,
                    metrics=None) -> str:
    """``auto``: batched on accelerators; on CPU batched only when one model's step is small
    (:data:`CPU_BATCHED_MAX_WORK`); sequential for K = 1, custom metrics, buffers or dropout."""
    if k == 1 or metrics or _unbatchable(model):
        return "sequential"
    if data.device.type != "cpu":
        return "batched"
    return "batched" if model_work(model, data, batch_size) <= CPU_BATCHED_MAX_WORK else "sequential"


def footprint(model: nn.Module, data: Dataset, batch_size: int | None,
              optimizer: str = "adamw") -> dict:
    """Bytes one model needs on the device for one training step: ``params`` (parameters,
    gradients, the update's temporary and the optimizer state) and ``activations`` (what
    autograd saves, measured with saved-tensor hooks on a small batch and scaled to the batch,
    doubled for the backward pass's temporaries)."""
    n_params = sum(p.numel() for p in model.parameters())
    states = {"sgd": 0, "momentum": 1}.get(optimizer, 2)
    rows = len(data.x_train) if batch_size is None else min(batch_size, len(data.x_train))
    probe = min(rows, 64)
    saved = [0]

    def pack(t):
        saved[0] += t.numel() * t.element_size()
        return t

    x = data.x_train[:probe].to("cpu")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
        F.cross_entropy(out, data.y_train[:probe].to("cpu")).backward()
    model.zero_grad(set_to_none=True)
    return dict(params=4 * n_params * (3 + states), activations=2 * saved[0] / probe * rows)


def memory_budget(device) -> float:
    """Bytes the stacked models of one chunk may take: half the free memory on CUDA
    (``torch.cuda.mem_get_info``: what is free *now*, after the data and anything else the
    notebook holds; the other half is left for evaluation chunks and the allocator's slack),
    :data:`CPU_MEMORY_BUDGET` elsewhere."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return 0.5 * free
    return float(CPU_MEMORY_BUDGET)


def chunk_size_for(per_model: float, budget: float) -> int:
    """How many models of ``per_model`` bytes fit in ``budget`` bytes (at least one)."""
    if per_model <= 0:
        raise ValueError(f"a model's footprint must be positive, got {per_model}")
    return max(1, int(budget // per_model))


def auto_chunk_size(model: nn.Module, data: Dataset, batch_size: int | None,
                    optimizer: str = "adamw") -> int:
    """How many models to stack at once: :func:`memory_budget` over one model's
    :func:`footprint`."""
    need = footprint(model, data, batch_size, optimizer)
    return chunk_size_for(need["params"] + need["activations"], memory_budget(data.device))


# ----------------------------------------------------------------------------- sequential


def _train_sequential(model_fn, data: Dataset, spec: Spec, runs: list[Run], progress, report):
    """One model after another through :func:`dynamics.train.train` (the reference)."""
    histories, states = [], []
    for k, run in enumerate(runs):
        if report.stopped:  # the sweep was stopped: the rest keep empty histories
            histories.append(History(info=dict(steps=spec.steps, stopped=True)))
            states.append({})
            continue
        model = build_model(model_fn, run, data.device)
        after = None
        if run.param_mask:
            named = dict(model.named_parameters())
            after = lambda model, step, named=named, pm=run.param_mask: _apply_masks(named, pm)  # noqa: E731
        callbacks = [lambda step, history, model, k=k: report((k + step / spec.steps) / len(runs))]
        # train() caps the planned steps as the sweep did (and meters them in a dry run)
        h = train(model, run.data(data), steps=spec.planned, optimizer=spec.optimizer, lr=run.lr,
                  weight_decay=run.weight_decay, momentum=spec.momentum, betas=spec.betas,
                  batch_size=spec.batch_size, loss=spec.loss, eval_every=spec.eval_every,
                  eval_steps=spec.eval_steps,
                  metrics=spec.metrics, after_step=after, lr_schedule=spec.lr_schedule,
                  seed=run.seed, progress=progress, desc=f"config {k + 1}/{len(runs)}",
                  callbacks=callbacks)
        histories.append(h)
        states.append({n: t.detach() for n, t in model.state_dict().items()})
    return histories, states


# ----------------------------------------------------------------------------- batched engine


def _per_model(v: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A [K] tensor viewed to broadcast against a stacked [K, ...] parameter."""
    return v.view(-1, *([1] * (like.ndim - 1)))


def init_state(optimizer: str, params: Sequence[torch.Tensor]) -> dict:
    """Zeroed optimizer state for stacked parameters (what :func:`batched_step` updates)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(OPTIMIZERS)}")
    if optimizer in ("adamw", "adam", "adam_l2"):
        return dict(exp_avg=[torch.zeros_like(p) for p in params],
                    exp_avg_sq=[torch.zeros_like(p) for p in params])
    if optimizer == "momentum":
        return dict(momentum_buffer=[torch.zeros_like(p) for p in params])
    return {}


@torch.no_grad()
def batched_step(optimizer: str, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
                 state: dict, step: int, lr: torch.Tensor, weight_decay: torch.Tensor, *,
                 momentum: float = 0.9, betas=(0.9, 0.999), eps: float = 1e-8):
    """One optimizer step for K stacked models at once; returns (new_params, new_state).

    Pure: the inputs are not modified. ``params[i]`` and ``grads[i]`` have a leading model
    axis K; ``lr`` and ``weight_decay`` are [K] tensors; ``step`` counts from 1. The update
    is, per model, exactly PyTorch's (tested against ``torch.optim``):

    - ``adamw``: decoupled decay p <- p(1 - lr*wd), then Adam (``torch.optim.AdamW``);
    - ``adam``: Adam, weight decay ignored; ``adam_l2``: g <- g + wd*p, then Adam
      (``torch.optim.Adam(weight_decay=wd)``);
    - ``sgd``: p <- p - lr(g + wd*p); ``momentum``: heavy ball, buffer b <- mu*b + g (b = g at
      the first step), p <- p - lr*b (``torch.optim.SGD(momentum=mu, weight_decay=wd)``).
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(OPTIMIZERS)}")
    beta1, beta2 = betas
    new_params, new_state = [], {k: [] for k in state}
    for i, (p, g) in enumerate(zip(params, grads)):
        lr_i, wd_i = _per_model(lr, p), _per_model(weight_decay, p)
        if optimizer in ("sgd", "momentum", "adam_l2"):
            g = g + wd_i * p
        if optimizer in ("sgd", "momentum"):
            if optimizer == "momentum":
                buf = g.clone() if step == 1 else state["momentum_buffer"][i] * momentum + g
                new_state["momentum_buffer"].append(buf)
                g = buf
            new_params.append(p - lr_i * g)
            continue
        m = torch.lerp(state["exp_avg"][i], g, 1 - beta1)
        v = torch.mul(state["exp_avg_sq"][i], beta2).addcmul_(g, g, value=1 - beta2)
        bias1 = 1 - beta1 ** step
        bias2_sqrt = math.sqrt(1 - beta2 ** step)
        update = (m / v.sqrt().div_(bias2_sqrt).add_(eps)).mul_(lr_i / bias1)
        if optimizer == "adamw":
            new_params.append(p.mul(1 - lr_i * wd_i).sub_(update))
        else:
            new_params.append(p - update)
        new_state["exp_avg"].append(m)
        new_state["exp_avg_sq"].append(v)
    return new_params, new_state


def _per_example_loss(name: str, out: torch.Tensor, y: torch.Tensor, n_classes: int) -> torch.Tensor:
    """[K, R] losses of [K, R, C] outputs against [K, R] (or [R]) labels."""
    y = y.expand(out.shape[:2])
    if name == "cross_entropy":
        return F.cross_entropy(out.flatten(0, 1), y.flatten(), reduction="none").view(out.shape[:2])
    return 0.5 * (out - F.one_hot(y, n_classes).to(out.dtype)).pow(2).sum(-1)


class _Rows:
    """Each model's rows of one split: ``idx`` [K, R] (None: all rows, shared), weights [K, R]
    (None: all valid) and counts n_k. Padded rows have weight 0."""

    def __init__(self, mask: torch.Tensor | None, k: int, n: int, device):
        self.k, self.n = k, n
        if mask is None:
            self.idx = self.weight = None
            self.counts = [n] * k
            self.sel = None
            return
        self.sel = [torch.nonzero(m).flatten() for m in mask]  # one sync, at setup
        self.counts = [len(s) for s in self.sel]
        self.idx, self.weight = _pad([s for s in self.sel], device)

    @property
    def equal(self) -> bool:
        return len(set(self.counts)) == 1

    @classmethod
    def of(cls, rows: list, n: int, device) -> "_Rows":
        """From the runs' own rows (all None: every run uses all ``n`` rows)."""
        return cls(None if rows[0] is None else torch.stack(rows), len(rows), n, device)


def _pad(rows: list[torch.Tensor], device) -> tuple[torch.Tensor, torch.Tensor | None]:
    width = max(len(r) for r in rows)
    if all(len(r) == width for r in rows):
        return torch.stack(rows), None
    idx = torch.zeros(len(rows), width, dtype=torch.long, device=device)
    weight = torch.zeros(len(rows), width, device=device)
    for i, r in enumerate(rows):
        idx[i, :len(r)] = r
        weight[i, :len(r)] = 1.0
    return idx, weight


class _Batches:
    """Mini-batch indices for K models, each exactly as :func:`dynamics.train.train` draws
    them for that model alone (its own generator seeded with its seed, its own rows)."""

    def __init__(self, rows: _Rows, batch_size: int | None, seeds: list[int], device):
        self.rows, self.device = rows, device
        self.full = batch_size is None or all(batch_size >= n for n in rows.counts)
        self.batch_size = batch_size
        if self.full:
            return
        self.gens = [torch.Generator(device=device).manual_seed(s) for s in seeds]
        self.pos = list(rows.counts)  # forces a fresh permutation at the first step
        self.perms = [None] * rows.k
        self.shared = rows.sel is None and len(set(seeds)) == 1
        self.synced = rows.equal
        self.table = None

    def next(self):
        """(idx [K, R] or [R] shared or None for all rows, weight [K, R] or None)."""
        if self.full:
            return self.rows.idx, self.rows.weight
        b, counts = self.batch_size, self.rows.counts
        if self.synced:
            n = counts[0]
            if self.pos[0] + b > n:
                if self.shared:
                    perm = torch.randperm(n, device=self.device, generator=self.gens[0])
                    self.table = perm
                else:
                    perm = torch.stack([torch.randperm(n, device=self.device, generator=g)
                                        for g in self.gens])
                    self.table = perm if self.rows.sel is None else torch.gather(self.rows.idx, 1, perm)
                self.pos = [0] * len(self.pos)
            p = self.pos[0]
            self.pos = [p + b] * len(self.pos)
            return (self.table[p:p + b] if self.shared else self.table[:, p:p + b]), None
        rows = []
        for k, n in enumerate(counts):
            if b >= n:  # this model trains full-batch (train() does when batch_size >= n)
                rows.append(self.rows.sel[k])
                continue
            if self.pos[k] + b > n:
                self.perms[k] = self.rows.sel[k][torch.randperm(n, device=self.device,
                                                               generator=self.gens[k])]
                self.pos[k] = 0
            rows.append(self.perms[k][self.pos[k]:self.pos[k] + b])
            self.pos[k] += b
        return _pad(rows, self.device)


def _signature(model_fn, config) -> tuple:
    """Parameter names and shapes of ``model_fn(config)`` (built on the meta device if possible)."""
    try:
        with torch.device("meta"):
            model = model_fn(config)
    except Exception:  # noqa: BLE001 - some inits do not run on meta: build for real
        model = model_fn(config)
    return tuple((n, tuple(p.shape)) for n, p in model.named_parameters())


class _Stack:
    """K models of one architecture as stacked parameters (a leading model axis) and one
    parameter-less copy on the meta device that ``torch.func.functional_call`` runs with
    each model's parameters under ``vmap``."""

    def __init__(self, model_fn, runs: list[Run], device):
        from torch.func import stack_module_state

        models = [build_model(model_fn, run, device) for run in runs]
        params, _ = stack_module_state(models)
        self.names = list(params)
        self.params = [params[n].detach().clone() for n in self.names]
        self.base = copy.deepcopy(models[0]).to("meta")
        self.template = models[0]  # a real module, to rebuild one model for user metrics
        masks = {}
        for n in {n for run in runs for n in (run.param_mask or {})}:
            ones = torch.ones(params[n].shape[1:], device=device)
            masks[n] = torch.stack([(run.param_mask or {}).get(n, ones) for run in runs])
        self.masks = [masks.get(n) for n in self.names]  # None: that parameter is not masked

    def __call__(self, params: list, x: torch.Tensor, idx: torch.Tensor | None = None) -> torch.Tensor:
        """[K, R, C] outputs: every model on x (idx None), on x[idx] (idx [R], shared rows) or
        each on its own rows x[idx[k]] (idx [K, R])."""
        p = dict(zip(self.names, params))
        if idx is None:
            return torch.func.vmap(self._one, in_dims=(0, None))(p, x)
        return torch.func.vmap(self._one, in_dims=(0, None if idx.ndim == 1 else 0))(p, x[idx])

    def _one(self, p: dict, x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(self.base, p, (x,))

    def mask(self, params: list) -> list:
        return [t if m is None else t * m for t, m in zip(params, self.masks)]

    def model(self, params: list, k: int) -> nn.Module:
        """Model ``k`` as an ordinary module (for user metrics)."""
        model = copy.deepcopy(self.template)
        with torch.no_grad():
            for n, t in zip(self.names, params):
                model.get_parameter(n).copy_(t[k])
        return model


def _eval_batched(stack: _Stack, params, x, y, rows: _Rows, loss: str, n_classes: int, row_chunk: int):
    """Mean loss and accuracy of each of K models on its rows of (x, y): two [K] tensors."""
    k = rows.k
    total = torch.zeros(k, device=x.device)
    correct = torch.zeros(k, device=x.device)
    width = rows.n if rows.idx is None else rows.idx.shape[1]
    with torch.no_grad():
        stack.base.eval()
        for start in range(0, width, row_chunk):
            if rows.idx is None:
                xb, yb = x[start:start + row_chunk], y[start:start + row_chunk]
                out = stack(params, xb)
                w = None
            else:
                ib = rows.idx[:, start:start + row_chunk]
                out, yb = stack(params, x, ib), y[ib]
                w = None if rows.weight is None else rows.weight[:, start:start + row_chunk]
            losses = _per_example_loss(loss, out, yb, n_classes).float()
            hits = (out.argmax(-1) == yb).float()
            if w is not None:
                losses, hits = losses * w, hits * w
            total += losses.sum(1)
            correct += hits.sum(1)
        stack.base.train()
    counts = torch.tensor(rows.counts, device=x.device, dtype=torch.float32)
    return total / counts, correct / counts


class Evaluations:
    """The K histories of a batched chunk, and which of its models still train.

    Three facts, each kept once:

    - ``histories[k]``: model k's evaluations. It is *closed* once it has ``diverged_at``
      (nothing is appended after that), exactly where :func:`dynamics.train.train` stops.
    - ``first_bad`` ([K] on the device): the first step whose training loss was non-finite
      (-1: none yet); written at every step without a host sync, read at evaluations.
    - ``alive`` ([K] on the device): the models whose parameters still update; a model
      freezes at its first non-finite loss and when its history closes, so a diverged model
      keeps the parameters it had before it diverged and the others continue unaffected.
    """

    def __init__(self, k: int, spec: Spec, device):
        self.histories = [spec.history() for _ in range(k)]
        self.first_bad = torch.full((k,), -1, dtype=torch.long, device=device)
        self.alive = torch.ones(k, dtype=torch.bool, device=device)
        self.start = time.perf_counter()

    def open(self) -> list[int]:
        """The models whose histories are not closed."""
        return [k for k, h in enumerate(self.histories) if h.diverged_at is None]

    def observe(self, step: int, losses: torch.Tensor) -> torch.Tensor:
        """Note this step's [K] training losses (no sync); returns ``alive``."""
        finite = torch.isfinite(losses)
        self.first_bad.masked_fill_(~finite & (self.first_bad < 0), step)
        self.alive &= finite
        return self.alive

    def record(self, step: int, values: dict, extra: dict, elapsed: float) -> None:
        """Append one evaluation (``values``: [K] device tensors; ``extra[k]``: model k's user
        metrics) with one host sync. As ``train`` decides: a model whose loss was non-finite
        before this evaluation, or whose train loss is non-finite now, closes instead."""
        bad = self.first_bad.tolist()
        values = {key: v.tolist() for key, v in values.items()}
        closed = []
        for k in self.open():
            h = self.histories[k]
            if bad[k] >= 0:
                h.diverged_at = bad[k]
            elif not math.isfinite(values["train_loss"][k]):
                h.diverged_at = step
            else:
                h.append(step, time=elapsed, **{key: v[k] for key, v in values.items()},
                         **extra.get(k, {}))
                continue
            closed.append(k)
        if closed:
            self.alive[closed] = False

    def close(self) -> list[History]:
        """The final histories: a divergence after the last evaluation is still reported."""
        bad = self.first_bad.tolist()
        for k in self.open():
            if bad[k] >= 0:
                self.histories[k].diverged_at = bad[k]
        for h in self.histories:
            h.wall_time = time.perf_counter() - self.start
        return self.histories


def _train_chunk(model_fn, data: Dataset, spec: Spec, runs: list[Run], bar, report):
    """Train one chunk of K models of one architecture as one batched computation.
    ``report(step) -> stop?`` is called at each evaluation. Returns (histories, parameters)."""
    device, K = data.device, len(runs)
    stack = _Stack(model_fn, runs, device)
    params = stack.params
    lr = torch.tensor([r.lr for r in runs], device=device)
    wd = torch.tensor([r.weight_decay for r in runs], device=device)
    state = init_state(spec.optimizer, params)
    train_rows = _Rows.of([r.train_rows for r in runs], len(data.x_train), device)
    test_rows = _Rows.of([r.test_rows for r in runs], len(data.x_test), device)
    has_test = len(data.x_test) > 0 and all(c > 0 for c in test_rows.counts)
    batches = _Batches(train_rows, spec.batch_size, [r.seed for r in runs], device)
    row_chunk = max(64, 65536 // K)
    evals = set(spec.evals)
    rec = Evaluations(K, spec, device)
    meter = ledger.meter("batched", spec.planned, lambda: len(eval_schedule(
        spec.planned, spec.eval_every, spec.eval_steps)), data, params, K)  # the gpu plan (dry run)

    def evaluate(step: int) -> tuple:
        """Evaluate every model now: (step, [K] device values, user metrics, seconds). In full
        batch the train-set metrics are left to the next step's forward pass, which sees the
        same parameters and rows (one forward pass saved per evaluation)."""
        values = {}
        if not deferred(step):
            values["train_loss"], values["train_acc"] = _eval_batched(
                stack, params, data.x_train, data.y_train, train_rows, spec.loss, data.n_classes, row_chunk)
        if has_test:
            values["test_loss"], values["test_acc"] = _eval_batched(
                stack, params, data.x_test, data.y_test, test_rows, spec.loss, data.n_classes, row_chunk)
        extra = {k: {m: float(fn(stack.model(params, k), runs[k].data(data)))
                     for m, fn in spec.metrics.items()}
                 for k in rec.open()} if spec.metrics else {}
        meter.evaluated()
        return step, values, extra, time.perf_counter() - rec.start

    def deferred(step: int) -> bool:
        return batches.full and step < spec.steps

    try:
        pending = None  # an evaluation waiting for its train-set metrics (full batch)
        if 0 in evals:
            pending = evaluate(0)
            if not deferred(0):
                rec.record(*pending)
                pending = None
        for step in range(1, spec.steps + 1):
            if not rec.open():
                break
            meter.begin(step)
            idx, weight = batches.next()
            leaves = [t.requires_grad_(True) for t in params]
            out = stack(leaves, data.x_train, idx)
            y = data.y_train if idx is None else data.y_train[idx]
            losses = _per_example_loss(spec.loss, out, y, data.n_classes)
            per_model = losses.mean(1) if weight is None else (losses * weight).sum(1) / weight.sum(1)
            if pending is not None:  # this forward pass is the previous evaluation's train pass
                with torch.no_grad():
                    hits = (out.argmax(-1) == y).float()
                    acc = hits.mean(1) if weight is None else (hits * weight).sum(1) / weight.sum(1)
                step_, values, extra, elapsed = pending
                rec.record(step_, dict(values, train_loss=per_model.detach().float(), train_acc=acc),
                           extra, elapsed)
                pending = None
            grads = torch.autograd.grad(per_model.sum(), leaves)
            params = [t.detach() for t in leaves]
            with torch.no_grad():
                alive = rec.observe(step, per_model.detach())
                factor = 1.0 if spec.lr_schedule is None else float(spec.lr_schedule(step - 1))
                new_p, new_state = batched_step(spec.optimizer, params, grads, state, step, lr * factor,
                                                wd, momentum=spec.momentum, betas=spec.betas)
                keep = [_per_model(alive, t) for t in params]  # frozen models keep their values
                params = [torch.where(a, q, t) for a, q, t in zip(keep, new_p, params)]
                state = {key: [torch.where(a, q, t) for a, q, t in zip(keep, new, state[key])]
                         for key, new in new_state.items()}
                params = stack.mask(params)
            meter.end(step, state=state, grads=grads)
            if bar is not None:
                bar.update(1)
            if step in evals:
                pending = evaluate(step)
                if not deferred(step):
                    rec.record(*pending)
                    pending = None
                if report(step):
                    break
        if pending is not None:  # stopped before the next forward pass: evaluate the train set
            step_, values, extra, elapsed = pending
            tl, ta = _eval_batched(stack, params, data.x_train, data.y_train, train_rows, spec.loss,
                                   data.n_classes, row_chunk)
            rec.record(step_, dict(values, train_loss=tl, train_acc=ta), extra, elapsed)
    finally:
        meter.close()
    return rec.close(), dict(zip(stack.names, params))


def _train_batched(model_fn, data: Dataset, spec: Spec, runs: list[Run], chunk: int, progress,
                   report):
    """Group the runs by architecture, then train each group in chunks of ``chunk`` models."""
    groups: dict = {}
    for k, run in enumerate(runs):
        groups.setdefault(_signature(model_fn, run.config), []).append(k)
    chunks = [ks[i:i + chunk] for ks in groups.values() for i in range(0, len(ks), chunk)]
    bar = None
    if progress_enabled(progress):
        from tqdm.auto import tqdm

        bar = tqdm(total=spec.steps * len(chunks), desc=f"{len(runs)} configs", leave=False)
    histories, states = [None] * len(runs), [None] * len(runs)
    try:
        for c, ks in enumerate(chunks):
            if report.stopped:  # the sweep was stopped: the rest keep empty histories
                for k in ks:
                    histories[k], states[k] = History(info=dict(steps=spec.steps, stopped=True)), {}
                continue
            done = lambda step, c=c: report((c + step / spec.steps) / len(chunks))  # noqa: E731
            hs, params = _train_chunk(model_fn, data, spec, [runs[k] for k in ks], bar, done)
            for j, k in enumerate(ks):
                histories[k] = hs[j]
                states[k] = {n: t[j] for n, t in params.items()}
    finally:
        if bar is not None:
            bar.close()
    return histories, states
