"""One training loop for the whole book.

``train(model, data, Recipe(steps=..., optimizer="adamw", lr=..., weight_decay=...))``
trains full-batch (the default) or mini-batch, evaluates by the recipe's evaluation rule
(:class:`Every`, :class:`LogSpaced`, :class:`At`) and returns a :class:`History`. The same
:class:`Recipe` drives :func:`dynamics.sweep.train_many`.

Design choices a reader may want to know about:

- **No host sync per step.** The loss stays on the device between evaluations; divergence is
  tracked with a device tensor holding the first step whose loss was not finite, read only
  at evaluation time. Data lives on the device, mini-batches are index gathers there.
- **Divergence is a result, not a crash.** A NaN/inf loss stops the run; the history says
  ``diverged at step k`` and keeps everything recorded before it.
- **Hooks** for the chapters' methods (:class:`Hooks`): ``before_step(model, step)`` runs
  between backward and the optimizer step (gradient filters, projections), ``after_step(model,
  step)`` after it (pruning masks), ``on_eval`` at each evaluation (live plots; True stops).
  Metrics may return a dict of named values measured in one pass.
- **One progress protocol**: each evaluation reports into :func:`dynamics.progress.current`,
  whose Stop ends the run (a panel's bar and Stop work alike for a run, a sweep, a chapter).
- **A long run says so.** The first second of training is timed; a run that would take more
  than about a minute on this device prints one line first (what, how many steps, how long,
  how to get a smaller run; in a live panel, its status line): see :class:`dynamics.forecast.Forecast`.
- **Bad settings fail before training**, with the setting named: learning rates (numpy and
  0-d tensor numbers are fine), schedules that return a negative or non-finite factor.
"""
from __future__ import annotations

import math
import numbers
import time
import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .data import Dataset
from .models import evaluating
from .forecast import Forecast
from .runtime import bars_enabled, cap_steps, dry_run, get_seed

# The one table of optimizers and the one of losses, for both engines: ``train`` runs every
# optimizer here; ``train_many``'s batched engine (dynamics.sweep) the ones marked batched
# (Muon's Newton-Schulz step per stacked model is not written there), and every loss.
OPTIMIZERS = {"sgd": "batched", "momentum": "batched", "adam": "batched",
              "adam_l2": "batched", "adamw": "batched", "muon": "train only"}
BATCHED_OPTIMIZERS = tuple(k for k, v in OPTIMIZERS.items() if v == "batched")
LOSSES = ("cross_entropy", "mse")


@dataclass
class History:
    """Metrics recorded at evaluation steps. ``history["test_acc"]`` is a numpy array aligned
    with ``history.steps``; ``history.diverged_at`` is the first step with a non-finite loss."""

    steps: list = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    diverged_at: int | None = None
    wall_time: float = 0.0
    info: dict = field(default_factory=dict)

    def append(self, step: int, **values) -> None:
        self.steps.append(int(step))
        for key, value in values.items():
            self.metrics.setdefault(key, []).append(float(value))

    def __getitem__(self, key: str) -> np.ndarray:
        if key == "step":
            return np.asarray(self.steps)
        if not self.steps:  # nothing recorded (e.g. diverged before its first evaluation)
            return np.asarray([], dtype=float)
        if key not in self.metrics:
            raise KeyError(f"no metric {key!r}; recorded: {sorted(self.metrics)}")
        return np.asarray(self.metrics[key])

    def __contains__(self, key: str) -> bool:
        return key == "step" or key in self.metrics

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    @property
    def status(self) -> str:
        return f"diverged at step {self.diverged_at}" if self.diverged else "ok"

    def last(self, key: str) -> float:
        """The last recorded value of ``key``; NaN when nothing was recorded."""
        values = self[key]
        return float(values[-1]) if len(values) else float("nan")

    def first_step(self, key: str, above: float | None = None, below: float | None = None) -> int | None:
        """The first recorded step at which ``key`` is above (or below) a threshold, else None."""
        if (above is None) == (below is None):
            raise ValueError("give exactly one of above= or below=")
        values = self[key]
        hit = values > above if above is not None else values < below
        idx = np.flatnonzero(hit)
        return int(self.steps[idx[0]]) if len(idx) else None

    def to_dict(self) -> dict:
        return dict(steps=list(self.steps), metrics={k: list(v) for k, v in self.metrics.items()},
                    diverged_at=self.diverged_at, wall_time=self.wall_time, info=dict(self.info))

    @classmethod
    def from_dict(cls, d: dict) -> "History":
        return cls(list(d["steps"]), {k: list(v) for k, v in d["metrics"].items()},
                   d.get("diverged_at"), d.get("wall_time", 0.0), dict(d.get("info", {})))

    def __repr__(self):
        last = ", ".join(f"{k}={v[-1]:.4g}" for k, v in self.metrics.items() if v)
        return f"History({len(self.steps)} points to step {self.steps[-1] if self.steps else 0}, {self.status}; {last})"


class Optimizers:
    """Several optimizers stepped as one (Muon for hidden matrices + AdamW for the rest)."""

    def __init__(self, optimizers: list[torch.optim.Optimizer]):
        self.optimizers = optimizers

    @property
    def param_groups(self):
        return [g for opt in self.optimizers for g in opt.param_groups]

    def zero_grad(self, set_to_none: bool = True):
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=set_to_none)

    def step(self):
        for opt in self.optimizers:
            opt.step()


def as_number(value, name: str) -> float:
    """``value`` as a float if it is one real number: a Python or numpy number, or a one-element
    tensor (a learning rate read off a config or a schedule). Anything else is a ValueError
    that names the setting; booleans are not numbers here."""
    if torch.is_tensor(value) and value.numel() == 1 and not value.is_complex() \
            and value.dtype != torch.bool:
        return float(value.detach().cpu())
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.reshape(()))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    return float(value)


def check_hyper(lr: float | None = None, weight_decay: float | None = None,
                momentum: float | None = None) -> tuple:
    """Clear errors for hyperparameters that would otherwise fail deep inside torch; returns
    them as plain floats (None stays None)."""
    if lr is not None:
        lr = as_number(lr, "learning rate")
        if not math.isfinite(lr) or lr <= 0:
            raise ValueError(f"learning rate must be a positive finite number, got {lr!r}")
    if weight_decay is not None:
        weight_decay = as_number(weight_decay, "weight decay")
        if not math.isfinite(weight_decay) or weight_decay < 0:
            raise ValueError(f"weight decay must be a finite number >= 0, got {weight_decay!r}")
    if momentum is not None:
        momentum = as_number(momentum, "momentum")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must lie in [0, 1), got {momentum!r}")
    return lr, weight_decay, momentum


def checked_schedule(schedule: Callable[[int], float] | None) -> Callable[[int], float] | None:
    """``schedule`` (step -> factor on the learning rate), made to refuse a factor that is
    negative or not finite at the step it happens (torch would train on with it silently:
    a negative learning rate climbs the loss)."""
    if schedule is None or getattr(schedule, "checked", False):
        return schedule
    if not callable(schedule):
        raise ValueError(f"lr_schedule must be a function step -> factor, got {schedule!r}")

    def checked(step: int) -> float:
        factor = as_number(schedule(step), f"lr_schedule({step})")
        if not math.isfinite(factor) or factor < 0:
            raise ValueError(f"lr_schedule({step}) returned {factor!r}: a schedule must return "
                             f"a finite factor >= 0 on the learning rate")
        return factor

    checked.checked = True
    return checked


def muon_split(model: nn.Module) -> tuple[list, list]:
    """Muon's parameter groups, explicit: the matrices the model names in its
    ``hidden_matrices()`` go to Muon; everything else (embeddings, the output head, biases,
    gains, convolution kernels) to AdamW. The book's Muon, like ``torch.optim.Muon``, takes
    2-D parameters only; Jordan's own Muon also flattens hidden conv kernels to 2-D and trains
    them. A model without ``hidden_matrices()`` is an error that says so (no guessing by
    parameter names)."""
    if not callable(getattr(model, "hidden_matrices", None)):
        raise ValueError(f"muon: {type(model).__name__} does not say which parameters are its "
                         f"hidden matrices; give it a hidden_matrices() method (as "
                         f"dynamics.models.MLP has) or build the optimizers yourself")
    chosen = {id(p) for p in model.hidden_matrices()}
    for p in model.hidden_matrices():
        if p.ndim != 2:
            raise ValueError(f"muon: hidden_matrices() of {type(model).__name__} holds a "
                             f"{p.ndim}-D parameter; Muon here takes 2-D matrices only")
    muon, other = [], []
    for p in model.parameters():
        if p.requires_grad:
            (muon if id(p) in chosen else other).append(p)
    return muon, other


def make_optimizer(model: nn.Module, name: str = "adamw", lr: float = 1e-3,
                   weight_decay: float = 0.0, momentum: float = 0.9,
                   betas: tuple[float, float] = (0.9, 0.999), adam_lr: float | None = None):
    """An optimizer by name.

    ``sgd`` (plain), ``momentum`` (SGD, heavy ball), ``adam`` (no decay), ``adam_l2``
    (Adam with L2 added to the gradient: torch's ``Adam(weight_decay=...)``), ``adamw``
    (decoupled decay), ``muon`` (``torch.optim.Muon`` on hidden matrices, AdamW with
    ``adam_lr`` on everything else, see :func:`muon_split`). On CUDA the SGD and Adam steps
    use torch's fused kernels (see :func:`fused_step`).
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {name!r}; choose one of {list(OPTIMIZERS)}")
    lr, weight_decay, momentum = check_hyper(lr, weight_decay, momentum)  # plain floats for torch
    params = [p for p in model.parameters() if p.requires_grad]
    fast = fused_step(params)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay, **fast)
    if name == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay, **fast)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, betas=betas, **fast)
    if name == "adam_l2":
        return torch.optim.Adam(params, lr=lr, betas=betas, weight_decay=weight_decay, **fast)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=betas, weight_decay=weight_decay, **fast)
    if not hasattr(torch.optim, "Muon"):
        raise RuntimeError(f"torch.optim.Muon needs PyTorch >= 2.9; this is {torch.__version__}")
    hidden, other = muon_split(model)
    if not hidden:
        raise ValueError("muon: the model has no hidden 2-D weight matrices to orthogonalize")
    opts = [torch.optim.Muon(hidden, lr=lr, weight_decay=weight_decay, momentum=0.95)]
    if other:
        opts.append(torch.optim.AdamW(other, lr=adam_lr or 1e-3, betas=betas,
                                      weight_decay=weight_decay, **fused_step(other)))
    return Optimizers(opts)


def fused_step(params) -> dict:
    """``{"fused": True}`` when every parameter is a floating-point CUDA tensor, else ``{}``.

    A fused step updates all parameters in one kernel instead of several kernels per
    parameter: on a GPU, where the book's small models spend much of a step launching
    kernels, that matters. It computes the same update in another order (results agree to
    float32 rounding, ~1e-6 relative; tests/ops/test_gpu.py checks this on CPU, where torch also
    has the kernels). Elsewhere torch's default stays: a for-each step on other accelerators,
    the per-parameter loop on CPU with which the book's CPU results were made."""
    params = list(params)
    if params and all(p.is_cuda and p.is_floating_point() for p in params):
        return {"fused": True}
    return {}


def loss_values(name: str, out: torch.Tensor, y: torch.Tensor, n_classes: int,
                reduction: str = "mean") -> torch.Tensor:
    """The one loss function of both engines: ``cross_entropy``, or ``mse`` (½‖f(x) −
    onehot(y)‖²), of outputs ``[..., C]`` against labels ``[...]``; ``reduction="mean"`` over
    every example (what :func:`train` minimizes), ``"none"`` per example (``[...]``, what the
    batched engine weights per model)."""
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction must be 'mean' or 'none', got {reduction!r}")
    if name == "cross_entropy":
        if out.ndim == 2:
            return F.cross_entropy(out, y, reduction=reduction)
        per = F.cross_entropy(out.flatten(0, -2), y.flatten(), reduction="none")
        return per.view(out.shape[:-1]) if reduction == "none" else per.mean()
    if name == "mse":
        per = 0.5 * (out - F.one_hot(y, n_classes).to(out.dtype)).pow(2).sum(-1)
        return per if reduction == "none" else per.mean()
    raise ValueError(f"unknown loss {name!r}; choose one of {list(LOSSES)} or pass a function")


def loss_function(name: str | Callable, n_classes: int) -> Callable:
    """``fn(out, y)``: the mean of :func:`loss_values` for a loss name, or a callable as is."""
    if callable(name):
        return name
    loss_values(name, torch.zeros(1, n_classes), torch.zeros(1, dtype=torch.long), n_classes)
    return lambda out, y: loss_values(name, out, y, n_classes)


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, loss_fn: Callable,
             chunk: int = 16384) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean loss and accuracy of ``model`` on (x, y), as device scalars (no sync). A dry run
    evaluates the first ``chunk`` examples only (an evaluation's memory is one chunk's)."""
    if dry_run() is not None:
        x, y = x[:chunk], y[:chunk]
    total_loss = torch.zeros((), device=x.device)
    correct = torch.zeros((), device=x.device)
    with evaluating(model):
        for i in range(0, len(x), chunk):
            out = model(x[i:i + chunk])
            yb = y[i:i + chunk]
            total_loss += loss_fn(out, yb).float() * len(yb)
            correct += (out.argmax(1) == yb).sum()
    return total_loss / len(x), correct / len(x)


def log_steps(steps: int, n: int = 60) -> list[int]:
    """About ``n`` evaluation steps spaced evenly on a log axis from 1 to ``steps``."""
    return sorted({int(round(s)) for s in np.geomspace(1, steps, n)} | {steps})


@dataclass(frozen=True)
class Every:
    """Evaluate at step 0, every ``k`` steps and at the last (``k`` None: about 100 times).
    ``test=False`` leaves the test set out, ``train=False`` the training set (its whole-set
    pass costs as much as the test set's; a run whose figures read neither skips it); the
    same two switches on :class:`LogSpaced` and :class:`At`."""

    k: int | None = None
    test: bool = True
    train: bool = True

    def at(self, steps: int) -> list[int]:
        every = max(1, steps // 100) if self.k is None else self.k
        if not isinstance(every, (int, np.integer)) or every < 1:
            raise ValueError(f"evaluate every k steps needs a positive integer k, got {self.k!r}")
        evals = list(range(0, steps + 1, every))
        return evals if evals[-1] == steps else evals + [steps]


@dataclass(frozen=True)
class LogSpaced:
    """About ``n`` evaluations spaced evenly on a log axis from step 1 to the last."""

    n: int = 60
    test: bool = True
    train: bool = True

    def at(self, steps: int) -> list[int]:
        return log_steps(steps, self.n)


@dataclass(frozen=True)
class At:
    """Evaluate at the listed steps (those outside [0, steps] are dropped)."""

    steps: tuple
    test: bool = True
    train: bool = True

    def __post_init__(self):
        object.__setattr__(self, "steps", tuple(int(s) for s in self.steps))

    def at(self, steps: int) -> list[int]:
        return sorted({s for s in self.steps if 0 <= s <= steps})


def evaluation(rule) -> "Every | LogSpaced | At":
    """An evaluation rule from what a recipe may hold: a rule, None (about 100 evaluations),
    an integer k (every k steps) or a list of steps."""
    if rule is None:
        return Every()
    if isinstance(rule, (Every, LogSpaced, At)):
        return rule
    if isinstance(rule, (int, np.integer)) and not isinstance(rule, bool):
        return Every(int(rule))
    if isinstance(rule, Iterable) and not isinstance(rule, (str, bytes)):
        return At(tuple(rule))
    raise ValueError(f"eval must be Every(k), LogSpaced(n), At(steps), an integer k or a list "
                     f"of steps, got {rule!r}")


def eval_schedule(steps: int, rule=None) -> list[int]:
    """The steps at which :func:`train` evaluates under ``rule`` (see :func:`evaluation`)."""
    return evaluation(rule).at(steps)


@dataclass(frozen=True)
class Recipe:
    """How a model trains, in one frozen value that :func:`train` and
    :func:`dynamics.sweep.train_many` both take; ``recipe.replace(lr=1e-2)`` for a variant.

    ``optimizer``: a name (:data:`OPTIMIZERS`) or ``fn(model) -> optimizer`` (a name shows
    what runs, and only a name goes through ``train_many``); ``adam_lr``: with ``muon``,
    AdamW's learning rate on the parameters Muon does not take; ``schedule``:
    ``step -> factor`` on the learning rate; ``eval``: the evaluation rule (``Every(k)``,
    ``LogSpaced(n)``, ``At(steps)``, or an integer k, a list of steps, None for ~100)."""

    steps: int
    optimizer: str | Callable = "adamw"
    lr: float = 1e-3
    weight_decay: float = 0.0
    momentum: float = 0.9
    betas: tuple = (0.9, 0.999)
    batch_size: int | None = None
    loss: str | Callable = "cross_entropy"
    schedule: Callable[[int], float] | None = field(default=None, compare=False)
    eval: Every | LogSpaced | At | None = None
    adam_lr: float | None = None  # muon only: AdamW's rate on the rest (None: 1e-3)

    def __post_init__(self):
        if not isinstance(self.steps, (int, np.integer)) or isinstance(self.steps, bool) \
                or self.steps < 1:
            raise ValueError(f"steps must be a positive integer, got {self.steps!r}")
        bs = self.batch_size
        if bs is not None and (not isinstance(bs, (int, np.integer)) or bs < 1):
            raise ValueError(f"batch_size must be a positive integer, got {bs!r}")
        if isinstance(self.optimizer, str) and self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {self.optimizer!r}; choose one of {list(OPTIMIZERS)}")
        if isinstance(self.loss, str) and self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; choose one of {list(LOSSES)} or pass a function")
        if self.adam_lr is not None and self.optimizer != "muon":
            raise ValueError(f"adam_lr is the learning rate of AdamW beside Muon: it goes with "
                             f"optimizer='muon', not {self.optimizer!r}")
        object.__setattr__(self, "betas", tuple(self.betas))
        object.__setattr__(self, "eval", evaluation(self.eval))
        object.__setattr__(self, "schedule", checked_schedule(self.schedule))

    def replace(self, **changes) -> "Recipe":
        """This recipe with some fields changed (checked again)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"Recipe has no field {sorted(unknown)}; fields: "
                             f"{[f.name for f in dataclasses.fields(self)]}")
        return dataclasses.replace(self, **changes)

    def evals(self, steps: int | None = None) -> list[int]:
        """The evaluation steps of a run of ``steps`` (default: the recipe's)."""
        return self.eval.at(self.steps if steps is None else steps)


@dataclass(frozen=True)
class Hooks:
    """Per-step hooks for the chapters' methods. ``before_step(model, step)`` runs between
    backward and the optimizer step (gradient filters, projections), ``after_step(model,
    step)`` after it (pruning masks, rewinding), ``on_eval(step, history, model) -> stop?``
    (one function or a list) after each evaluation (live redraws, checkpoints)."""

    before_step: Callable | None = None
    after_step: Callable | None = None
    on_eval: Callable | tuple = ()

    def __post_init__(self):
        cbs = self.on_eval
        object.__setattr__(self, "on_eval", (cbs,) if callable(cbs) else tuple(cbs or ()))


def measure(metrics, model: nn.Module, data: Dataset) -> dict:
    """One evaluation's extra metrics: ``metrics`` is ``{name: fn(model, data)}`` (a number, a
    device scalar, or a dict of named numbers from one pass) or one ``fn(model, data) -> dict``."""
    if not metrics:
        return {}
    if callable(metrics):
        metrics = {"": metrics}
    values = {}
    for name, fn in metrics.items():
        value = fn(model, data)
        if isinstance(value, dict):
            values.update(value)
        else:
            values[name] = value
    return values


class LossLog:
    """Whether a run's training losses have all been finite, one entry a step, kept on the
    device: one launch a step and no host sync.

    ``flags[t] = flags[t-1] + 0 * loss_t`` (one ``add`` with ``alpha=0``): 0 while every loss
    is finite, NaN from the first that is not (``0 * inf`` and ``0 * NaN`` are NaN), whatever
    the dtype, so it cannot overflow as a sum of the losses could. :meth:`first_bad` reads one
    number at an evaluation, as the check it replaced did, and scans the flags for the first
    NaN only once a run has diverged: the step a check of every loss finds. (That check took
    eight launches a step, ``isfinite`` and a masked write; on a GPU a small model's step is
    its launches.)
    """

    def __init__(self, steps: int, device):
        self.flags = torch.zeros(steps + 1, device=device)
        self.bad = None  # the first step whose loss was not finite

    def write(self, step: int, loss: torch.Tensor) -> None:
        torch.add(self.flags[step - 1], loss.detach(), alpha=0, out=self.flags[step])

    def first_bad(self, upto: int) -> int | None:
        """The first step up to ``upto`` whose loss was not finite (None: all were)."""
        if self.bad is None and not math.isfinite(float(self.flags[upto])):  # one read
            self.bad = 1 + torch.isfinite(self.flags[1:upto + 1]).tolist().index(False)
        return self.bad


def train(model: nn.Module, data: Dataset, recipe: Recipe, *, metrics=None,
          hooks: Hooks | None = None, seed: int | None = None, bars: bool | None = None,
          desc: str = "training") -> History:
    """Train ``model`` on ``data`` in place by ``recipe`` and return its :class:`History`.

    Recorded at each evaluation (``recipe.eval``): ``train_loss``, ``train_acc``,
    ``test_loss``, ``test_acc`` (whole sets, no gradient; the rule's ``train=False`` or
    ``test=False`` leaves a set out), ``time`` (seconds since start), and the extra
    ``metrics`` (see :func:`measure`). A non-finite training loss at any step ends the run
    as diverged, whether or not the training set is evaluated. ``hooks`` (:class:`Hooks`) run at each step or
    evaluation; ``seed`` sets the mini-batch order; progress and Stop go through
    :func:`dynamics.progress.current` (``progress`` only switches the tqdm bar).
    """
    seed = get_seed(seed)
    if not isinstance(recipe, Recipe):
        raise ValueError(f"train(model, data, recipe) needs a dynamics.train.Recipe, got "
                         f"{type(recipe).__name__}")
    from . import progress as P

    hooks = hooks or Hooks()
    planned = recipe.steps
    steps = cap_steps(planned)  # a dry run (DYNAMICS_DRY_RUN) trains a few steps at full size
    n = len(data.x_train)
    batch_size, loss = recipe.batch_size, recipe.loss
    full_batch = batch_size is None or batch_size >= n
    optimizer = recipe.optimizer
    if isinstance(optimizer, str):
        optimizer = make_optimizer(model, optimizer, recipe.lr, recipe.weight_decay,
                                   recipe.momentum, recipe.betas, adam_lr=recipe.adam_lr)
    else:
        optimizer = optimizer(model)
    scheduler = None
    if recipe.schedule is not None:
        opts = optimizer.optimizers if isinstance(optimizer, Optimizers) else [optimizer]
        scheduler = [torch.optim.lr_scheduler.LambdaLR(o, recipe.schedule) for o in opts]
    loss_fn = loss_function(loss, data.n_classes)
    evals = recipe.evals(steps)
    if steps < planned and steps not in evals:  # a dry run evaluates where it stops, as the run would
        evals.append(steps)
    evals_set = set(evals)
    eval_test, eval_train = recipe.eval.test, recipe.eval.train
    before_step, after_step, callbacks = hooks.before_step, hooks.after_step, hooks.on_eval
    job = P.current()

    device = data.device
    gen = torch.Generator(device=device).manual_seed(seed)
    # every step's loss, written on the device (one copy a step, no host sync), read for a
    # non-finite one at each evaluation: the run's divergence
    losses = LossLog(steps, device)
    history = History(info=dict(steps=steps, batch_size=batch_size, loss=str(loss)))

    def record(step: int) -> bool:
        """Evaluate, append to history, run callbacks; True if the run must stop."""
        bad = losses.first_bad(step)  # one sync per evaluation
        if bad is not None:
            history.diverged_at = bad
            return True
        values = {}
        if eval_train:
            values["train_loss"], values["train_acc"] = evaluate(model, data.x_train, data.y_train,
                                                                 loss_fn)
        if eval_test and len(data.x_test):
            values["test_loss"], values["test_acc"] = evaluate(model, data.x_test, data.y_test, loss_fn)
        values.update(measure(metrics, model, data))
        values = {k: float(v.detach() if torch.is_tensor(v) else v) for k, v in values.items()}
        if not math.isfinite(values.get("train_loss", 0.0)):
            history.diverged_at = step
            return True
        history.append(step, time=time.perf_counter() - start, **values)
        if bar is not None:
            bar.update(step - bar.n)
        # a hook returning True stops the run (early stopping), as does the job's Stop
        stop = any([bool(cb(step, history, model)) for cb in callbacks])
        return job.report(step / steps) or stop

    bar = None
    if bars_enabled(bars):
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, desc=desc, leave=False)
    # times the first second of training; a run longer than a minute says so first
    forecast = Forecast(desc, steps, "step", device=device,
                        sync=(lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else None)
    start = time.perf_counter()
    perm, pos = None, n
    model.train()
    try:
        stop = record(0) if 0 in evals_set else False
        for step in range(1, steps + 1):
            if stop:
                break
            if full_batch:
                xb, yb = data.x_train, data.y_train
            else:
                if pos + batch_size > n:
                    perm = torch.randperm(n, device=device, generator=gen)
                    pos = 0
                idx = perm[pos:pos + batch_size]
                pos += batch_size
                xb, yb = data.x_train[idx], data.y_train[idx]
            out = model(xb)
            loss_value = loss_fn(out, yb)
            optimizer.zero_grad(set_to_none=True)
            loss_value.backward()
            if before_step is not None:
                before_step(model, step)
            optimizer.step()
            if after_step is not None:
                after_step(model, step)
            if scheduler is not None:
                for s in scheduler:
                    s.step()
            losses.write(step, loss_value)
            if forecast.pending:
                forecast.update(step)
            if step in evals_set:
                stop = record(step)
        if not stop and history.diverged_at is None:
            history.diverged_at = losses.first_bad(steps)
    finally:
        if bar is not None:
            bar.close()
    history.wall_time = time.perf_counter() - start
    return history
