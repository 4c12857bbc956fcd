"""One training loop for the whole book.

``train(model, data, steps=..., optimizer="adamw", lr=..., weight_decay=...)`` trains
full-batch (the default) or mini-batch, evaluates every ``eval_every`` steps (or at the
steps listed in ``eval_steps``) and returns a :class:`History`.

Design choices a reader may want to know about:

- **No host sync per step.** The loss stays on the device between evaluations; divergence is
  tracked with a device tensor holding the first step whose loss was not finite, read only
  at evaluation time. Data lives on the device, mini-batches are index gathers there.
- **Divergence is a result, not a crash.** A NaN/inf loss stops the run; the history says
  ``diverged at step k`` and keeps everything recorded before it.
- **Hooks** for the chapters' methods: ``before_step(model, step)`` runs between backward and
  the optimizer step (gradient filters, projections), ``after_step(model, step)`` after it
  (pruning masks), ``callbacks`` at each evaluation (live plots; return True to stop early).
- **A long run says so.** The first second of training is timed; a run that would take more
  than about a minute on this device prints one line first (what, how many steps, how long,
  how to get a smaller run; in a live panel, its status line): see :class:`runtime.Forecast`.
- **Bad settings fail before training**, with the setting named: learning rates (numpy and
  0-d tensor numbers are fine), schedules that return a negative or non-finite factor.
"""
from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ledger
from .data import Dataset
from .runtime import Forecast, cap_steps, progress_enabled

OPTIMIZERS = ("sgd", "momentum", "adam", "adam_l2", "adamw", "muon")
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
    if schedule is None:
        return None
    if not callable(schedule):
        raise ValueError(f"lr_schedule must be a function step -> factor, got {schedule!r}")

    def checked(step: int) -> float:
        factor = as_number(schedule(step), f"lr_schedule({step})")
        if not math.isfinite(factor) or factor < 0:
            raise ValueError(f"lr_schedule({step}) returned {factor!r}: a schedule must return "
                             f"a finite factor >= 0 on the learning rate")
        return factor

    return checked


def muon_split(model: nn.Module) -> tuple[list, list]:
    """Split parameters the way Muon is meant to be used: hidden 2-D weight matrices go to
    Muon; embeddings, the output head, biases, gains and conv kernels go to AdamW."""
    muon, other = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        top = name.split(".")[0]
        is_hidden_matrix = p.ndim == 2 and top not in ("head", "embed", "pos")
        (muon if is_hidden_matrix else other).append(p)
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
    float32 rounding, ~1e-6 relative; tests/test_gpu.py checks this on CPU, where torch also
    has the kernels). Elsewhere torch's default stays: a for-each step on other accelerators,
    the per-parameter loop on CPU with which the book's CPU results were made."""
    params = list(params)
    if params and all(p.is_cuda and p.is_floating_point() for p in params):
        return {"fused": True}
    return {}


def loss_function(name: str | Callable, n_classes: int) -> Callable:
    """``cross_entropy`` or ``mse`` (½‖f(x) − onehot(y)‖², mean over the batch), or a callable."""
    if callable(name):
        return name
    if name == "cross_entropy":
        return F.cross_entropy
    if name == "mse":
        return lambda out, y: 0.5 * (out - F.one_hot(y, n_classes).to(out.dtype)).pow(2).sum(1).mean()
    raise ValueError(f"unknown loss {name!r}; choose one of {list(LOSSES)} or pass a function")


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, loss_fn: Callable,
             chunk: int = 16384) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean loss and accuracy of ``model`` on (x, y), as device scalars (no sync)."""
    was_training = model.training
    model.eval()
    total_loss = torch.zeros((), device=x.device)
    correct = torch.zeros((), device=x.device)
    for i in range(0, len(x), chunk):
        out = model(x[i:i + chunk])
        yb = y[i:i + chunk]
        total_loss += loss_fn(out, yb).float() * len(yb)
        correct += (out.argmax(1) == yb).sum()
    model.train(was_training)
    return total_loss / len(x), correct / len(x)


def log_steps(steps: int, n: int = 60) -> list[int]:
    """About ``n`` evaluation steps spaced evenly on a log axis from 1 to ``steps``."""
    return sorted({int(round(s)) for s in np.geomspace(1, steps, n)} | {steps})


def eval_schedule(steps: int, eval_every: int | None = None, eval_steps=None) -> list[int]:
    """The steps at which :func:`train` evaluates: ``eval_steps`` if given (clipped to
    [0, steps]), else every ``eval_every`` steps (default ~100 evaluations), always the last."""
    if eval_steps is not None:
        return sorted({int(s) for s in eval_steps if 0 <= int(s) <= steps})
    every = eval_every or max(1, steps // 100)
    if every < 1:
        raise ValueError(f"eval_every must be a positive integer, got {eval_every}")
    evals = list(range(0, steps + 1, every))
    if evals[-1] != steps:
        evals.append(steps)
    return evals


def train(model: nn.Module, data: Dataset, *, steps: int, optimizer="adamw", lr: float = 1e-3,
          weight_decay: float = 0.0, momentum: float = 0.9, betas=(0.9, 0.999),
          batch_size: int | None = None, loss: str | Callable = "cross_entropy",
          eval_every: int | None = None, eval_steps: Iterable[int] | None = None,
          metrics: dict[str, Callable] | None = None, callbacks: Iterable[Callable] = (),
          before_step: Callable | None = None, after_step: Callable | None = None,
          lr_schedule: Callable[[int], float] | None = None, seed: int = 0,
          progress: bool | None = None, desc: str = "training", eval_test: bool = True) -> History:
    """Train ``model`` on ``data`` in place and return its :class:`History`.

    ``optimizer`` is a name (see :func:`make_optimizer`) or a ready optimizer.
    Recorded at each evaluation: ``train_loss``, ``train_acc``, ``test_loss``, ``test_acc``
    (whole sets, no gradient), ``time`` (seconds since start), and each extra
    ``metrics[name](model, data)`` (a float or a device scalar).
    """
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    planned = steps
    steps = cap_steps(steps)  # a dry run (DYNAMICS_DRY_RUN) trains a few steps at full size
    n = len(data.x_train)
    if batch_size is not None and not 1 <= batch_size:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    full_batch = batch_size is None or batch_size >= n
    if isinstance(optimizer, str):
        optimizer = make_optimizer(model, optimizer, lr, weight_decay, momentum, betas)
    scheduler = None
    lr_schedule = checked_schedule(lr_schedule)
    if lr_schedule is not None:
        opts = optimizer.optimizers if isinstance(optimizer, Optimizers) else [optimizer]
        scheduler = [torch.optim.lr_scheduler.LambdaLR(o, lr_schedule) for o in opts]
    loss_fn = loss_function(loss, data.n_classes)
    evals = eval_schedule(steps, eval_every, eval_steps)
    if steps < planned and steps not in evals:  # a dry run evaluates where it stops, as the run would
        evals.append(steps)
    evals_set = set(evals)

    device = data.device
    gen = torch.Generator(device=device).manual_seed(seed)
    first_bad = torch.full((), -1, dtype=torch.long, device=device)
    history = History(info=dict(steps=steps, batch_size=batch_size, loss=str(loss)))
    extra = metrics or {}
    callbacks = list(callbacks)

    def record(step: int) -> bool:
        """Evaluate, append to history, run callbacks; True if the run must stop."""
        bad = int(first_bad)  # one sync per evaluation
        if bad >= 0:
            history.diverged_at = bad
            return True
        tl, ta = evaluate(model, data.x_train, data.y_train, loss_fn)
        values = dict(train_loss=tl, train_acc=ta)
        if eval_test and len(data.x_test):
            values["test_loss"], values["test_acc"] = evaluate(model, data.x_test, data.y_test, loss_fn)
        for name, fn in extra.items():
            values[name] = fn(model, data)
        values = {k: float(v.detach() if torch.is_tensor(v) else v) for k, v in values.items()}
        if not math.isfinite(values["train_loss"]):
            history.diverged_at = step
            return True
        history.append(step, time=time.perf_counter() - start, **values)
        if bar is not None:
            bar.update(step - bar.n)
        # a callback returning True stops the run (early stopping, a live panel's Stop)
        return any([bool(cb(step, history, model)) for cb in callbacks])

    bar = None
    if progress_enabled(progress):
        from tqdm.auto import tqdm

        bar = tqdm(total=steps, desc=desc, leave=False)
    # times the first second of training; a run longer than a minute says so first
    forecast = Forecast(desc, steps, "step", device=device,
                        sync=(lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else None)
    start = time.perf_counter()
    perm, pos = None, n
    model.train()
    meter = ledger.meter("train", planned, lambda: len(eval_schedule(planned, eval_every, eval_steps)),
                         data, model.parameters(), desc=desc)  # the gpu plan's measurements (dry run)
    try:
        stop = record(0) if 0 in evals_set else False
        for step in range(1, steps + 1):
            if stop:
                break
            meter.begin(step)
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
            meter.end(step, optimizer)
            # remember the first non-finite loss without a host sync
            nonfinite = ~torch.isfinite(loss_value.detach())
            first_bad.masked_fill_(nonfinite & (first_bad < 0), step)
            if forecast.pending:
                forecast.update(step)
            if step in evals_set:
                stop = record(step)
        if not stop and history.diverged_at is None and int(first_bad) >= 0:
            history.diverged_at = int(first_bad)
    finally:
        meter.close(len(history))
        if bar is not None:
            bar.close()
    history.wall_time = time.perf_counter() - start
    return history
