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
faster than one model at a time (see :data:`CPU_BATCHED_MAX_WORK` and ``bench()``).

A configuration whose loss becomes non-finite is marked (``history.diverged_at``) and frozen;
the others continue unaffected. K is split into chunks that fit in memory.
"""
from __future__ import annotations

import copy
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .data import Dataset
from .runtime import Forecast, cap_steps, progress_enabled
from .train import History, check_hyper, checked_schedule, eval_schedule, train

OPTIMIZERS = ("adamw", "adam", "adam_l2", "sgd", "momentum")
LOSSES = ("cross_entropy", "mse")
STRATEGIES = ("auto", "batched", "sequential")
# Batched beats sequential on a (2-core) CPU when one model's step is cheap enough that
# per-call overhead dominates. "work" = parameters x rows per step (a proxy for FLOPs/step).
# Measured with ``python -m dynamics.bench sweep``: see bench() and the report of issue 3.
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


# ----------------------------------------------------------------------------- helpers


@dataclass
class _Resolved:
    """One configuration's hyperparameters with the keyword defaults filled in."""

    lr: float
    weight_decay: float
    seed: int
    init_scale: float


def _resolve(configs, lr, weight_decay, seed) -> list[_Resolved]:
    out = []
    for i, cfg in enumerate(configs):
        if not isinstance(cfg, dict):
            raise ValueError(f"config {i} must be a dict, got {type(cfg).__name__}")
        r = _Resolved(float(cfg.get("lr", lr)), float(cfg.get("weight_decay", weight_decay)),
                      int(cfg.get("seed", seed)), float(cfg.get("init_scale", 1.0)))
        try:
            check_hyper(r.lr, r.weight_decay)
        except ValueError as e:
            raise ValueError(f"config {i} ({cfg}): {e}") from None
        if not math.isfinite(r.init_scale):
            raise ValueError(f"config {i}: init_scale must be finite, got {r.init_scale}")
        out.append(r)
    return out


def _check_mask(mask, k: int, n: int, what: str, device) -> torch.Tensor | None:
    if mask is None:
        return None
    mask = torch.as_tensor(mask, device=device)
    if mask.dtype != torch.bool:
        raise ValueError(f"{what} must be a bool tensor, got dtype {mask.dtype}")
    if tuple(mask.shape) != (k, n):
        raise ValueError(f"{what} must have shape [K, N] = [{k}, {n}], got {list(mask.shape)}")
    return mask


def build_model(model_fn: Callable, config: dict, r: _Resolved, device,
                param_mask: dict | None = None) -> nn.Module:
    """Seed torch with the config's seed, build ``model_fn(config)`` on ``device``, scale its
    initial parameters by ``init_scale`` and apply its parameter mask."""
    torch.manual_seed(r.seed)
    model = model_fn(config)
    if not isinstance(model, nn.Module):
        raise ValueError(f"model_fn must return an nn.Module, got {type(model).__name__}")
    model = model.to(device)
    with torch.no_grad():
        if r.init_scale != 1.0:
            for p in model.parameters():
                p.mul_(r.init_scale)
        if param_mask:
            _apply_masks(dict(model.named_parameters()), param_mask)
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


# ----------------------------------------------------------------------------- sequential


def _train_sequential(model_fn, data, configs, resolved, *, steps, optimizer, momentum, betas,
                      batch_size, loss, eval_every, eval_steps, train_mask, test_mask,
                      param_masks, metrics, lr_schedule, progress, callbacks=()):
    histories, states = [], []
    stop = [False]

    def report(k):
        def callback(step, history, model):
            stop[0] = stop[0] or any(bool(cb((k + step / steps) / len(configs))) for cb in callbacks)
            return stop[0]
        return callback

    for k, (cfg, r) in enumerate(zip(configs, resolved)):
        if stop[0]:  # stopped: the rest keep empty histories
            histories.append(History(info=dict(steps=steps, stopped=True)))
            states.append({})
            continue
        pm = param_masks[k] if param_masks else None
        model = build_model(model_fn, cfg, r, data.device, pm)
        sub = _sub_dataset(data, None if train_mask is None else train_mask[k],
                           None if test_mask is None else test_mask[k])
        after = None
        if pm:
            named = dict(model.named_parameters())
            after = lambda model, step, named=named, pm=pm: _apply_masks(named, pm)  # noqa: E731
        h = train(model, sub, steps=steps, optimizer=optimizer, lr=r.lr, weight_decay=r.weight_decay,
                  momentum=momentum, betas=betas, batch_size=batch_size, loss=loss,
                  eval_every=eval_every, eval_steps=eval_steps, metrics=metrics,
                  after_step=after, lr_schedule=lr_schedule, seed=r.seed, progress=progress,
                  desc=f"config {k + 1}/{len(configs)}", callbacks=[report(k)] if callbacks else ())
        histories.append(h)
        states.append({n: t.detach() for n, t in model.state_dict().items()})
    return histories, states


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
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; train_many supports {list(OPTIMIZERS)}")
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; train_many supports {list(LOSSES)}")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {list(STRATEGIES)}")
    if not isinstance(data, Dataset):
        raise ValueError(f"data must be a dynamics.data.Dataset, got {type(data).__name__}")
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    steps = cap_steps(steps)  # a dry run (DYNAMICS_DRY_RUN) trains a few steps at full size
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}")
    configs = list(configs)
    if not configs:
        raise ValueError("train_many() got no configurations (an empty grid?)")
    check_hyper(momentum=momentum)
    lr_schedule = checked_schedule(lr_schedule)
    resolved = _resolve(configs, 1e-3 if lr is None else lr,
                        0.0 if weight_decay is None else weight_decay, seed)
    K = len(configs)
    device = data.device
    train_mask = _check_mask(train_mask, K, len(data.x_train), "train_mask", device)
    test_mask = _check_mask(test_mask, K, len(data.x_test), "test_mask", device)
    if train_mask is not None and not bool(train_mask.any(1).all()):
        raise ValueError("every train_mask row must select at least one training example")
    template = build_model(model_fn, configs[0], resolved[0], "cpu")
    param_masks = _check_param_masks(param_masks, K, template, device)
    _check_model_on_data(template, data)

    if strategy == "auto":
        strategy = choose_strategy(template, data, batch_size, K, metrics)
    elif strategy == "batched":
        reason = _unbatchable(template)
        if reason:
            raise ValueError(f"strategy='batched' cannot train this model: {reason}")
    start = time.perf_counter()
    stop = [False]  # set when a callback asked the sweep to stop
    # the sweep speaks for its runs: a sweep longer than a minute says so (the runs keep quiet)
    forecast = Forecast(f"{K} configurations x {steps:,} steps", 1.0, device=device, inner=False,
                        sync=(lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else None)
    kwargs = dict(steps=steps, optimizer=optimizer, momentum=momentum, betas=betas,
                  batch_size=batch_size, loss=loss, eval_every=eval_every, eval_steps=eval_steps,
                  train_mask=train_mask, test_mask=test_mask, param_masks=param_masks,
                  metrics=metrics, lr_schedule=lr_schedule, progress=progress,
                  callbacks=[forecast.update] + [_watch(cb, stop) for cb in callbacks])
    with forecast:
        if strategy == "sequential":
            histories, states = _train_sequential(model_fn, data, configs, resolved, **kwargs)
            chunk = 1
        else:
            chunk = chunk_size or auto_chunk_size(template, data, batch_size, optimizer)
            histories, states = _train_batched(model_fn, data, configs, resolved, chunk=chunk, **kwargs)
    info = dict(strategy=strategy, chunk_size=chunk, optimizer=optimizer, steps=steps, stopped=stop[0],
                batch_size=batch_size, loss=loss, device=str(device),
                wall_time=time.perf_counter() - start)
    return SweepResult(configs, histories, states, info)


def _watch(callback: Callable[[float], bool], stop: list) -> Callable[[float], bool]:
    """``callback``, remembering in ``stop[0]`` that it asked to stop."""
    def watched(done: float) -> bool:
        asked = bool(callback(done))
        stop[0] = stop[0] or asked
        return asked
    return watched


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


def auto_chunk_size(model: nn.Module, data: Dataset, batch_size: int | None,
                    optimizer: str = "adamw") -> int:
    """How many models to stack at once: a memory budget (half the free memory on CUDA,
    :data:`CPU_MEMORY_BUDGET` elsewhere) over an estimate of one model's footprint
    (parameters, gradients and optimizer state, plus the activations autograd saves for one
    training step, measured with saved-tensor hooks on a small batch and scaled to the batch)."""
    n_params = sum(p.numel() for p in model.parameters())
    states = {"sgd": 0, "momentum": 1}.get(optimizer, 2)
    param_bytes = 4 * n_params * (3 + states)  # param, grad, update temporary + optimizer state
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
    act_bytes = 2 * saved[0] / probe * rows  # x2: forward outputs and backward temporaries
    per_model = param_bytes + act_bytes
    if data.device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(data.device)
        budget = 0.5 * free
    else:
        budget = CPU_MEMORY_BUDGET
    return max(1, int(budget // per_model))



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


def _eval_batched(fmodel, params, x, y, rows: _Rows, loss: str, n_classes: int, row_chunk: int):
    """Mean loss and accuracy of each of K models on its rows of (x, y): two [K] tensors."""
    k = rows.k
    total = torch.zeros(k, device=x.device)
    correct = torch.zeros(k, device=x.device)
    width = rows.n if rows.idx is None else rows.idx.shape[1]
    for start in range(0, width, row_chunk):
        if rows.idx is None:
            xb, yb = x[start:start + row_chunk], y[start:start + row_chunk]
            out = torch.func.vmap(fmodel, in_dims=(0, None))(params, xb)
            w = None
        else:
            ib = rows.idx[:, start:start + row_chunk]
            xb, yb = x[ib], y[ib]
            out = torch.func.vmap(fmodel, in_dims=(0, 0))(params, xb)
            w = None if rows.weight is None else rows.weight[:, start:start + row_chunk]
        losses = _per_example_loss(loss, out, yb, n_classes).float()
        hits = (out.argmax(-1) == yb).float()
        if w is not None:
            losses, hits = losses * w, hits * w
        total += losses.sum(1)
        correct += hits.sum(1)
    counts = torch.tensor(rows.counts, device=x.device, dtype=torch.float32)
    return total / counts, correct / counts


def _train_chunk(model_fn, data: Dataset, configs, resolved, *, steps, optimizer, momentum, betas,
                 batch_size, loss, evals, train_mask, test_mask, param_masks, metrics,
                 lr_schedule, bar, report=None):
    """Train one chunk of K models of one architecture as one batched computation.
    ``report(step) -> bool`` is called at each evaluation; True stops the chunk."""
    from torch.func import functional_call, stack_module_state, vmap

    device = data.device
    K = len(configs)
    models = [build_model(model_fn, c, r, device, param_masks[k] if param_masks else None)
              for k, (c, r) in enumerate(zip(configs, resolved))]
    params, _ = stack_module_state(models)
    names = list(params)
    plist = [params[n].detach().clone() for n in names]
    base = copy.deepcopy(models[0]).to("meta")
    template = models[0]
    del models

    def fmodel(p, x):
        return functional_call(base, p, (x,))

    lr = torch.tensor([r.lr for r in resolved], device=device)
    wd = torch.tensor([r.weight_decay for r in resolved], device=device)
    masks = None
    if param_masks and any(param_masks):
        masks = {}
        for n in {n for pm in param_masks for n in pm}:
            shape = params[n].shape[1:]
            masks[n] = torch.stack([pm.get(n, torch.ones(shape, device=device)) for pm in param_masks])
    mask_list = [masks.get(n) if masks else None for n in names]
    state = init_state(optimizer, plist)
    train_rows = _Rows(train_mask, K, len(data.x_train), device)
    test_rows = _Rows(test_mask, K, len(data.x_test), device)
    has_test = len(data.x_test) > 0 and all(c > 0 for c in test_rows.counts)
    batches = _Batches(train_rows, batch_size, [r.seed for r in resolved], device)
    row_chunk = max(64, 65536 // K)
    evals_set = set(evals)
    first_bad = torch.full((K,), -1, dtype=torch.long, device=device)
    alive = torch.ones(K, dtype=torch.bool, device=device)
    done = [False] * K
    histories = [History(info=dict(steps=steps, batch_size=batch_size, loss=str(loss)))
                 for _ in range(K)]
    start = time.perf_counter()

    def evaluate(step: int, with_train: bool = True) -> dict:
        """Evaluate every model now (device tensors, no sync). Without ``with_train`` the
        train-set metrics come from the next step's full-batch forward pass, which sees the
        same parameters and rows (see ``finish``)."""
        p = dict(zip(names, plist))
        values = {}
        with torch.no_grad():
            base.eval()
            if with_train:
                values["train_loss"], values["train_acc"] = _eval_batched(
                    fmodel, p, data.x_train, data.y_train, train_rows, loss, data.n_classes, row_chunk)
            if has_test:
                values["test_loss"], values["test_acc"] = _eval_batched(
                    fmodel, p, data.x_test, data.y_test, test_rows, loss, data.n_classes, row_chunk)
            base.train()
        extra = {}
        if metrics:
            for k in range(K):
                if not done[k]:
                    model = _materialize(template, names, plist, k)
                    sub = _sub_dataset(data, None if train_mask is None else train_mask[k],
                                       None if test_mask is None else test_mask[k])
                    extra[k] = {m: float(fn(model, sub)) for m, fn in metrics.items()}
        return dict(step=step, bad=first_bad.clone(), values=values, extra=extra,
                    time=time.perf_counter() - start)

    def finish(rec: dict, train_values: dict | None = None) -> None:
        """Append an evaluation to the histories, exactly as ``train`` decides: a model whose
        loss was non-finite before it (or whose train loss is non-finite now) is marked
        diverged and frozen."""
        values = dict(rec["values"], **(train_values or {}))
        bad = rec["bad"].tolist()  # one sync per evaluation
        values = {key: v.tolist() for key, v in values.items()}
        stop = []
        for k in range(K):
            if done[k]:
                continue
            h = histories[k]
            if bad[k] >= 0:
                h.diverged_at, done[k] = bad[k], True
            elif not math.isfinite(values["train_loss"][k]):
                h.diverged_at, done[k] = rec["step"], True
            else:
                h.append(rec["step"], time=rec["time"], **{key: v[k] for key, v in values.items()},
                         **rec["extra"].get(k, {}))
            if done[k]:
                stop.append(k)
        if stop:
            alive[stop] = False

    base.train()
    pending = None  # an evaluation waiting for its train-set metrics
    if 0 in evals_set:
        pending = evaluate(0, with_train=not batches.full)
        if not batches.full:
            finish(pending)
            pending = None
    for step in range(1, steps + 1):
        if all(done):
            break
        idx, weight = batches.next()
        leaves = [t.requires_grad_(True) for t in plist]
        p = dict(zip(names, leaves))
        if idx is None:
            out = vmap(fmodel, in_dims=(0, None))(p, data.x_train)
            y = data.y_train
        elif idx.ndim == 1:
            out = vmap(fmodel, in_dims=(0, None))(p, data.x_train[idx])
            y = data.y_train[idx]
        else:
            out = vmap(fmodel, in_dims=(0, 0))(p, data.x_train[idx])
            y = data.y_train[idx]
        losses = _per_example_loss(loss, out, y, data.n_classes)
        per_model = losses.mean(1) if weight is None else (losses * weight).sum(1) / weight.sum(1)
        if pending is not None:  # full batch: this forward is the previous evaluation's train pass
            with torch.no_grad():
                hits = (out.argmax(-1) == y).float()
                acc = hits.mean(1) if weight is None else (hits * weight).sum(1) / weight.sum(1)
            finish(pending, dict(train_loss=per_model.detach().float(), train_acc=acc))
            pending = None
        grads = torch.autograd.grad(per_model.sum(), leaves)
        plist = [t.detach() for t in leaves]
        with torch.no_grad():
            finite = torch.isfinite(per_model.detach())
            first_bad.masked_fill_(~finite & (first_bad < 0), step)
            alive &= finite  # a model is frozen from its first non-finite loss on
            factor = 1.0 if lr_schedule is None else float(lr_schedule(step - 1))
            new_p, new_state = batched_step(optimizer, plist, grads, state, step, lr * factor, wd,
                                            momentum=momentum, betas=betas)
            keep = [_per_model(alive, t) for t in plist]
            plist = [torch.where(a, q, t) for a, q, t in zip(keep, new_p, plist)]
            state = {key: [torch.where(a, q, t) for a, q, t in zip(keep, new, state[key])]
                     for key, new in new_state.items()}
            plist = [t if m is None else t * m for t, m in zip(plist, mask_list)]
        if bar is not None:
            bar.update(1)
        if step in evals_set:
            defer = batches.full and step < steps
            pending = evaluate(step, with_train=not defer)
            if not defer:
                finish(pending)
                pending = None
            if report is not None and report(step):
                break
    if pending is not None:  # the loop stopped early: evaluate the train set directly
        with torch.no_grad():
            base.eval()
            tl, ta = _eval_batched(fmodel, dict(zip(names, plist)), data.x_train, data.y_train,
                                   train_rows, loss, data.n_classes, row_chunk)
        finish(pending, dict(train_loss=tl, train_acc=ta))
    bad = first_bad.tolist()
    for k in range(K):
        if not done[k] and histories[k].diverged_at is None and bad[k] >= 0:
            histories[k].diverged_at = bad[k]
        histories[k].wall_time = time.perf_counter() - start
    return histories, dict(zip(names, [t.detach() for t in plist]))


def _materialize(template: nn.Module, names, plist, k: int) -> nn.Module:
    """Model ``k`` of a stack as an ordinary module (for user metrics)."""
    model = copy.deepcopy(template)
    with torch.no_grad():
        for n, t in zip(names, plist):
            model.get_parameter(n).copy_(t[k])
    return model


def _train_batched(model_fn, data, configs, resolved, *, chunk, steps, optimizer, momentum, betas,
                   batch_size, loss, eval_every, eval_steps, train_mask, test_mask, param_masks,
                   metrics, lr_schedule, progress, callbacks=()):
    """Group configurations by architecture, then train each group in chunks of ``chunk``."""
    evals = eval_schedule(steps, eval_every, eval_steps)
    K = len(configs)
    groups: dict = {}
    for k, cfg in enumerate(configs):
        groups.setdefault(_signature(model_fn, cfg), []).append(k)
    chunks = [ks[i:i + chunk] for ks in groups.values() for i in range(0, len(ks), chunk)]
    bar = None
    if progress_enabled(progress):
        from tqdm.auto import tqdm

        bar = tqdm(total=steps * len(chunks), desc=f"{K} configs", leave=False)
    histories, states = [None] * K, [None] * K
    try:
        stopped = False
        for c, ks in enumerate(chunks):
            if stopped:
                for k in ks:
                    histories[k], states[k] = History(info=dict(steps=steps, stopped=True)), {}
                continue

            def report(step, c=c):
                nonlocal stopped
                stopped = any(bool(cb((c + step / steps) / len(chunks))) for cb in callbacks)
                return stopped

            pick = lambda t: None if t is None else t[ks]  # noqa: E731
            hs, params = _train_chunk(
                model_fn, data, [configs[k] for k in ks], [resolved[k] for k in ks], steps=steps,
                optimizer=optimizer, momentum=momentum, betas=betas, batch_size=batch_size,
                loss=loss, evals=evals, train_mask=pick(train_mask), test_mask=pick(test_mask),
                param_masks=[param_masks[k] for k in ks] if param_masks else None,
                metrics=metrics, lr_schedule=lr_schedule, bar=bar,
                report=report if callbacks else None)
            for j, k in enumerate(ks):
                histories[k] = hs[j]
                states[k] = {n: t[j] for n, t in params.items()}
    finally:
        if bar is not None:
            bar.close()
    return histories, states


# ----------------------------------------------------------------------------- benchmark

BENCH_CASES = {  # name: (MLP width, training samples); 2 hidden layers, MNIST-1D, full batch
    "small": (64, 1000),
    "medium": (256, 4000),
}


def bench_case(size: str = "small", k: int = 16, steps: int = 300, device=None,
               repeats: int = 1, forced: bool = True) -> dict:
    """Train K MLPs of one size (a grid of learning rates, weight decays and seeds) with
    ``strategy="auto"`` (what train_many does by default) and ``"sequential"`` (one model
    after another through ``train``); with ``forced`` also ``"batched"`` when auto chose
    otherwise. Returns the best wall and CPU seconds of each over ``repeats`` and the speed-ups."""
    from . import data as data_mod
    from . import models as models_mod
    from .runtime import get_device

    width, n_train = BENCH_CASES[size]
    device = get_device(device)
    d = data_mod.mnist1d(n_train, 1000, seed=0, device=device)
    base = grid(lr=np.geomspace(1e-4, 1e-2, 4).tolist(), weight_decay=[0.0, 0.01, 0.1, 1.0])
    configs = [dict(base[i % len(base)], seed=i) for i in range(k)]

    def model_fn(cfg):
        return models_mod.MLP(d.input_dim, width, 2, d.n_classes)

    auto = choose_strategy(model_fn({}), d, None, k)
    strategies = ["auto", "sequential"] + (["batched"] if forced and auto != "batched" else [])
    for strategy in ("sequential", "batched"):  # warm up both code paths (lazy init in torch)
        train_many(model_fn, d, configs[:2], steps=3, strategy=strategy, progress=False)
    out = dict(size=size, k=k, device=device.type, auto=auto, threads=torch.get_num_threads())
    for rep in range(repeats):
        for strategy in strategies[:2] if rep else strategies:  # forced batched: once
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            wall, cpu = time.perf_counter(), time.process_time()
            train_many(model_fn, d, configs, steps=steps, strategy=strategy, progress=False)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            out[f"{strategy}_wall"] = min(out.get(f"{strategy}_wall", math.inf), wall)
            out[f"{strategy}_cpu"] = min(out.get(f"{strategy}_cpu", math.inf), cpu)
    if auto == "batched":
        out["batched_wall"], out["batched_cpu"] = out["auto_wall"], out["auto_cpu"]
    out["speedup"] = out["sequential_wall"] / out["auto_wall"]
    out["cpu_speedup"] = out["sequential_cpu"] / out["auto_cpu"]
    return out


def bench(repeats: int = 2) -> None:
    """``python -m dynamics.bench sweep``: K = 16 MLPs with 2 hidden layers, full batch,
    300 steps, width 64 on 1,000 MNIST-1D samples (small) and width 256 on 4,000 (medium),
    plus K = 64 small ones on CUDA, trained by ``train_many`` (strategy auto) and one after
    another (strategy sequential). One line per case: ``sweep speedup: X.Xx (K=.., size,
    device)`` (best wall time of ``repeats``), then the details (CPU seconds, the forced
    batched time where auto chose sequential)."""
    from .runtime import get_device

    device = get_device()
    cases = [("small", 16), ("medium", 16)]
    if device.type == "cuda":
        cases.append(("small", 64))
    for size, k in cases:
        r = bench_case(size, k, device=device, repeats=repeats)
        print(f"sweep speedup: {r['speedup']:.1f}x (K={k}, {size}, {r['device']})", flush=True)
        forced = ""
        if r["auto"] != "batched" and "batched_wall" in r:
            forced = (f"; forced batched {r['batched_wall']:.1f} s wall "
                      f"({r['sequential_wall'] / r['batched_wall']:.2f}x)")
        print(f"  auto -> {r['auto']}: {r['auto_wall']:.1f} s wall, {r['auto_cpu']:.1f} s CPU; "
              f"sequential {r['sequential_wall']:.1f} s wall, {r['sequential_cpu']:.1f} s CPU; "
              f"CPU-time speed-up {r['cpu_speedup']:.2f}x{forced}; torch threads {r['threads']}",
              flush=True)
