"""Train many configurations of one architecture at once.

``configs = grid(lr=[1e-3, 1e-2], weight_decay=[0, 0.1], seed=[0, 1])`` builds a cartesian
grid; ``train_many(model_fn, data, configs, recipe)`` trains one model per configuration (a
config's keys override the :class:`~dynamics.train.Recipe`'s fields of the same name) and
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
dynamics_ops.bench sweep``).

The package: :mod:`.results` (``SweepResult``, tables, heatmaps), :mod:`.runs` (``Spec``:
what every model shares, ``Run``: what differs), :mod:`.strategy` (strategy, footprint, chunks),
:mod:`.optim` (the batched optimizer steps) and :mod:`.loop` (the two training loops). A
configuration whose loss becomes non-finite is marked (``history.diverged_at``) and frozen;
the others continue unaffected. K is split into chunks sized from the free device memory.
"""
from __future__ import annotations

import itertools
import time
from typing import Callable, Iterable, Sequence

import torch
import torch.nn as nn

from .. import progress as P
from ..data import Dataset
from ..forecast import Forecast
from ..runtime import cap_steps
from ..train import Recipe
from . import strategy as strategies
from .loop import Evaluations, build_model, train_batched, train_sequential
from .optim import OPTIMIZERS, batched_step, init_state
from .strategy import (CPU_BATCHED_MAX_WORK, CPU_MEMORY_BUDGET, auto_chunk_size, choose_strategy,
                       chunk_size_for, footprint, memory_budget, model_work)
from .results import SweepResult, sweep_heatmap, table_grid
from .runs import (HONOURED, LOSSES, PER_MODEL, Run, Spec, _check_mask, _check_param_masks, _runs,
                   recipe_for)

STRATEGIES = ("auto", "batched", "sequential")
MASKS = ("train", "test", "params")

__all__ = ["grid", "train_many", "SweepResult", "table_grid", "sweep_heatmap", "Spec", "Run",
           "Evaluations", "batched_step", "init_state", "build_model", "choose_strategy",
           "auto_chunk_size", "footprint", "memory_budget", "chunk_size_for", "model_work",
           "OPTIMIZERS", "LOSSES", "HONOURED", "STRATEGIES", "CPU_BATCHED_MAX_WORK", "CPU_MEMORY_BUDGET"]


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
    cells = [dict(zip(names, combo)) for combo in itertools.product(*values.values())]
    return cells




def train_many(model_fn: Callable[[dict], nn.Module], data: Dataset, configs: Sequence[dict],
               recipe: Recipe, *, masks: dict | None = None, metrics=None,
               strategy: str | int = "auto", bars: bool | None = None,
               on_step: Callable[[int, dict], None] | None = None,
               before_step: Callable[[int, dict, dict], None] | None = None) -> SweepResult:
    """Train one model per configuration by ``recipe`` and return a :class:`SweepResult`.

    A config's keys that name a :class:`~dynamics.train.Recipe` field override it for that
    model (``lr`` and ``weight_decay`` vary inside one batched chunk; configs that differ in
    another field are trained group by group); ``seed`` (default 0) seeds torch before
    ``model_fn(config)`` builds the model and sets its mini-batch order, as ``seed`` does in
    :func:`~dynamics.train.train`; ``init_scale`` multiplies every initial parameter. Other
    keys go to ``model_fn`` and the table. ``masks``: ``{"train": [K, N] bool, "test": [K, N]
    bool, "params": one {name: 0/1 tensor} per config}`` (each optional): each model's own
    examples, and parameter masks applied at init and after every step. ``metrics`` as in
    ``train`` (in the batched strategy each model is rebuilt to measure them: keep them for
    small K). ``strategy``: ``auto``, ``batched``, ``sequential``, or an integer (batched,
    that many models per chunk). Progress and Stop go through :mod:`dynamics.progress`: a
    stopped sweep leaves the configurations not reached with empty histories (``stopped``).
    ``on_step(step, params)``, the twin of ``train``'s hooks for an experiment that acts on
    its models together (weight decay's kicked twins): called after every step with all K
    models' parameters, ``{name: [K, ...] tensor}`` in config order, to read or edit in place
    (no autograd; each is a view of the chunk's one [K, N] buffer, so not contiguous: use
    ``reshape``, not ``view``); it needs the batched strategy with every model in one chunk.
    ``before_step(step, params, grads)``: the same, called after the backward pass and before
    the optimizer step, with every model's gradient beside its parameters (``{name: [K, ...]
    tensor}`` each, views as above; read only): a measurement that needs the gradient a step
    applies (weight decay's rotation meter, for many runs at once).
    """
    if not isinstance(recipe, Recipe):
        raise ValueError(f"train_many(model_fn, data, configs, recipe) needs a "
                         f"dynamics.train.Recipe, got {type(recipe).__name__}")
    chunk_size = None
    if isinstance(strategy, int) and not isinstance(strategy, bool):
        if strategy < 1:
            raise ValueError(f"a chunk size must be a positive integer, got {strategy!r}")
        strategy, chunk_size = "batched", strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {list(STRATEGIES)} "
                         f"or a chunk size")
    if not isinstance(data, Dataset):
        raise ValueError(f"data must be a dynamics.data.Dataset, got {type(data).__name__}")
    masks = dict(masks or {})
    if set(masks) - set(MASKS):
        raise ValueError(f"masks takes the keys {list(MASKS)}, got {sorted(masks)}")
    configs = list(configs)
    if not configs:
        raise ValueError("train_many() got no configurations (an empty grid?)")
    recipes = [recipe_for(recipe, cfg, i) for i, cfg in enumerate(configs)]
    groups: dict = {}
    for k, r in enumerate(recipes):
        groups.setdefault(r.replace(**{f: getattr(recipe, f) for f in PER_MODEL}), []).append(k)
    hooked = [n for n, h in (("on_step", on_step), ("before_step", before_step)) if h is not None]
    if len(groups) > 1 and hooked:
        raise ValueError(f"{hooked[0]} sees every model at once: the configs must share every "
                         f"recipe field but lr and weight_decay")
    if len(groups) > 1:  # configs that change a shared field: one sweep per group
        return _grouped(model_fn, data, configs, groups, masks, metrics, strategy, chunk_size,
                        bars)
    recipe = next(iter(groups))
    spec = Spec(recipe, cap_steps(recipe.steps), metrics)  # a dry run: a few steps at full size
    K, device = len(configs), data.device
    train_mask = _check_mask(masks.get("train"), K, len(data.x_train), "masks['train']", device)
    test_mask = _check_mask(masks.get("test"), K, len(data.x_test), "masks['test']", device)
    if train_mask is not None and not bool(train_mask.any(1).all()):
        raise ValueError("every masks['train'] row must select at least one training example")
    runs = _runs(configs, recipe, train_mask, test_mask)
    template = build_model(model_fn, runs[0], "cpu")
    param_masks = _check_param_masks(masks.get("params"), K, template, device)
    if param_masks:
        import dataclasses

        runs = [dataclasses.replace(r, param_mask=m) for r, m in zip(runs, param_masks)]
    _check_model_on_data(template, data)

    batch_size = recipe.batch_size
    if strategy == "auto" and hooked:
        strategy = "batched"  # the hook acts on the models together
    if strategy == "auto":
        strategy = choose_strategy(template, data, batch_size, K, metrics)
    elif strategy == "batched":
        reason = strategies.unbatchable(template, data)
        if reason:
            raise ValueError(f"strategy='batched' cannot train this model: {reason}")
    start = time.perf_counter()
    # the sweep speaks for its runs: a sweep longer than a minute says so (the runs keep quiet)
    forecast = Forecast(f"{K} configurations x {spec.steps:,} steps", 1.0, device=device, inner=False,
                        sync=(lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else None)
    chunk = chunk_size or (auto_chunk_size(template, data, batch_size, recipe.optimizer,
                                           masked=bool(param_masks))
                           if strategy != "sequential" else 1)
    if hooked and (strategy == "sequential" or chunk < K):
        raise ValueError(f"{hooked[0]} sees every model at once: it needs strategy='batched' with "
                         f"all {K} models in one chunk (got strategy={strategy!r}, chunks of "
                         f"{chunk})")
    with forecast, P.reporting(forecast.update) as job:
        if strategy == "sequential":
            histories, states = train_sequential(model_fn, data, spec, runs, bars, job)
        else:
            histories, states = train_batched(model_fn, data, spec, runs, chunk, bars, job,
                                              on_step, before_step)
    info = dict(strategy=strategy, chunk_size=chunk, optimizer=recipe.optimizer, steps=spec.steps,
                stopped=job.stopped, batch_size=batch_size, loss=recipe.loss, device=str(device),
                wall_time=time.perf_counter() - start)
    return SweepResult(configs, histories, states, info)


def _grouped(model_fn, data, configs, groups, masks, metrics, strategy, chunk_size, bars):
    """Configurations that override a shared recipe field, swept group by group."""
    histories, states = [None] * len(configs), [None] * len(configs)
    infos, job = [], P.current()
    for g, (recipe, ks) in enumerate(groups.items()):
        sub = {name: (m[ks] if torch.is_tensor(m) else [m[k] for k in ks])
               for name, m in masks.items() if m is not None}
        with job.part(g, len(groups)):
            out = train_many(model_fn, data, [configs[k] for k in ks], recipe, masks=sub,
                             metrics=metrics, strategy=chunk_size or strategy, bars=bars)
        for j, k in enumerate(ks):
            histories[k], states[k] = out.histories[j], out.states[j]
        infos.append(out.info)
    info = dict(infos[0], groups=len(groups), stopped=any(i["stopped"] for i in infos),
                wall_time=sum(i["wall_time"] for i in infos))
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


