"""What a sweep trains: a frozen :class:`Spec` (what every model shares: the recipe, checked
once) and one :class:`Run` per configuration (what differs: learning rate, weight decay, seed,
initial scale, its own rows and parameter masks)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn

from ..data import Dataset
from ..runtime import seeded
from ..train import LOSSES, History, Recipe, check_hyper
from .optim import OPTIMIZERS

PER_MODEL = ("lr", "weight_decay")  # recipe fields a batched chunk holds per model
# Every Recipe field, and how the batched engine honours it (tests/test_sweep.py trains each
# one both ways and fails when a field is added to Recipe without a line here).
HONOURED = {"steps": "as train", "optimizer": "the batched names of train.OPTIMIZERS",
            "lr": "per model", "weight_decay": "per model", "momentum": "as train",
            "betas": "as train", "batch_size": "as train", "loss": "the names in train.LOSSES",
            "schedule": "as train", "eval": "as train",
            "adam_lr": "Muon's only: the batched engine, which has no Muon, refuses it"}


@dataclass(frozen=True)
class Spec:
    """What every model of a sweep shares: its :class:`~dynamics.train.Recipe` (checked once
    for the batched engine), the steps it trains (a dry run's cap applied) and the evaluation
    steps, as :func:`dynamics.train.train` takes them. Frozen, so no strategy can change it
    half way through a sweep."""

    recipe: Recipe
    steps: int  # the steps each model trains (a dry run's cap applied)
    metrics: object = field(default=None, compare=False)
    evals: tuple = field(init=False)  # the evaluation steps, as dynamics.train.train's

    def __post_init__(self):
        r = self.recipe
        if r.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {r.optimizer!r}; train_many supports {list(OPTIMIZERS)}")
        if r.loss not in LOSSES:
            raise ValueError(f"unknown loss {r.loss!r}; train_many supports {list(LOSSES)}")
        check_hyper(momentum=r.momentum)
        evals = r.evals(self.steps)
        if self.planned > self.steps and self.steps not in evals:  # a dry run evaluates where it stops
            evals.append(self.steps)
        object.__setattr__(self, "evals", tuple(evals))

    optimizer = property(lambda self: self.recipe.optimizer)
    momentum = property(lambda self: self.recipe.momentum)
    betas = property(lambda self: self.recipe.betas)
    batch_size = property(lambda self: self.recipe.batch_size)
    loss = property(lambda self: self.recipe.loss)
    schedule = property(lambda self: self.recipe.schedule)

    @property
    def planned(self) -> int:
        """The steps asked for (more than ``steps`` in a dry run)."""
        return self.recipe.steps

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


def recipe_for(recipe: Recipe, config: dict, i: int) -> Recipe:
    """The recipe of configuration ``i``: the sweep's, with the fields the config names."""
    names = set(recipe.__dataclass_fields__) & set(config)
    if not names:
        return recipe
    try:
        return recipe.replace(**{n: config[n] for n in names})
    except ValueError as e:
        raise ValueError(f"config {i} ({config}): {e}") from None


def _runs(configs, recipe: Recipe, train_mask, test_mask) -> list[Run]:
    runs = []
    for i, cfg in enumerate(configs):
        if not isinstance(cfg, dict):
            raise ValueError(f"config {i} must be a dict, got {type(cfg).__name__}")
        try:
            r_lr, r_wd, _ = check_hyper(cfg.get("lr", recipe.lr),
                                        cfg.get("weight_decay", recipe.weight_decay))
        except ValueError as e:
            raise ValueError(f"config {i} ({cfg}): {e}") from None
        run = Run(cfg, r_lr, r_wd, int(cfg.get("seed", 0)), float(cfg.get("init_scale", 1.0)),
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
    """Build (torch seeded with the run's seed, the caller's RNG left as it was) ``model_fn(config)`` on ``device``, scale its
    initial parameters by ``init_scale`` and apply its parameter mask."""
    with seeded(run.seed), torch.device(device):  # built where it trains: not copied over
        model = model_fn(run.config)
    if not isinstance(model, nn.Module):
        raise ValueError(f"model_fn must return an nn.Module, got {type(model).__name__}")
    model = model.to(device)  # a model_fn that placed its model itself
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
