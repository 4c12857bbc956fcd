"""Weight decay: not a regularizer, a clock.

The science of ``chapters/weight_decay.ipynb``, one experiment per section:

1. **decoupling**: Adam + L2 against AdamW on a learning-rate x weight-decay grid
   (:func:`run_decoupling`, many models at once through :func:`dynamics.sweep.train_many`).
2. **equilibrium**: a network whose weight matrices are all followed by a normalization, so
   that the loss does not depend on their scale (:class:`NormMLP`). Weight decay shrinks
   them, the gradient noise grows them, and the two balance at a predicted norm, angular
   update and effective learning rate (:func:`equilibrium`, measured per step on the device
   by :class:`RotationMeter`; :func:`run_equilibrium`).
3. **clock**: runs of AdamW with equal ``eta * lambda`` follow one trajectory against
   ``eta * lambda * t``; a different product does not (:func:`run_clock`).
4. **spectrum**: norm, rank and power-law tail of trained weights with and without decay
   (:func:`singular_values`, :func:`stable_rank`, :func:`effective_rank`,
   :func:`tail_exponent`; :func:`run_spectrum`).

Conventions: ``lr`` is eta and ``weight_decay`` is lambda as PyTorch defines them, so AdamW
multiplies the weights by ``1 - eta * lambda`` each step and SGD adds ``lambda * w`` to the
gradient (the same thing for plain SGD). The timescale of AdamW is ``tau = 1 / (eta * lambda)``
steps.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from plotly.subplots import make_subplots

from . import plots, results
from .config import Config, param
from .data import Dataset, mnist1d
from .models import MLP
from .runtime import get_profile, get_seed
from .sweep import grid, train_many
from .train import History, check_hyper, train

EQUILIBRIUM_OPTIMIZERS = ("sgd", "momentum", "adamw")
BETA1 = 0.9     # Adam's first-moment decay (torch default), enters the angular update
MOMENTUM = 0.9  # heavy-ball coefficient of the "momentum" optimizer


# ----------------------------------------------------------------------------- model


class NormMLP(nn.Module):
    """An MLP whose every weight matrix is followed by a layer normalization.

    ``x -> [Linear (no bias) -> LayerNorm (no gain, no bias) -> ReLU] x depth -> head``.
    Multiplying a hidden weight matrix by any c > 0 leaves the network's output unchanged
    (the normalization divides the scale out): the weights are *scale-invariant*, so their
    gradient is orthogonal to them and shrinks as 1/||W||. With ``norm_head=True`` the head
    is normalized too (``logits = temperature * LayerNorm(W h)``), so every parameter is
    scale-invariant and weight decay cannot act as a regularizer at all: it can only change
    the dynamics. The normalizations use a tiny epsilon (1e-8), so the invariance holds even
    at the small norms that strong decay produces.
    """

    eps = 1e-8

    def __init__(self, in_dim: int, width: int = 128, depth: int = 2, out_dim: int = 10,
                 norm_head: bool = True, temperature: float = 4.0):
        super().__init__()
        for name, value in (("in_dim", in_dim), ("width", width), ("out_dim", out_dim),
                            ("depth", depth)):
            if int(value) < 1:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        dims = [in_dim] + [width] * depth
        self.hidden = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(width, out_dim, bias=not norm_head)
        self.norm_head = norm_head
        self.temperature = float(temperature)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        h = x.flatten(1)
        for layer in self.hidden:
            h = F.relu(F.layer_norm(layer(h), (layer.out_features,), eps=self.eps))
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.head(self.features(x))
        if self.norm_head:
            out = self.temperature * F.layer_norm(out, (out.shape[-1],), eps=self.eps)
        return out

    def scale_invariant(self) -> dict[str, torch.Tensor]:
        """The scale-invariant weight matrices, by name."""
        named = {f"hidden.{i}": layer.weight for i, layer in enumerate(self.hidden)}
        if self.norm_head:
            named["head"] = self.head.weight
        return named


# ----------------------------------------------------------------------------- the science


def rms(w: torch.Tensor) -> torch.Tensor:
    """Root-mean-square of the entries, ||w|| / sqrt(numel): a norm that does not grow with
    the size of the layer (the equilibrium of AdamW is stated per element)."""
    return w.norm() / math.sqrt(w.numel())


def angular_update(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """The angle (radians) between two versions of a weight tensor.

    For a scale-invariant weight only its direction matters, so this angle *is* the size of
    the step. Computed as ``2 asin(|u - v| / 2)`` for the unit vectors u, v: exact, and well
    conditioned for the tiny angles of one step, where ``acos`` of a cosine near 1 is not.
    """
    u = before / before.norm()
    v = after / after.norm()
    return 2 * torch.asin(((u - v).norm() / 2).clamp(max=1.0))


def _check_equilibrium_args(optimizer: str, lr: float, weight_decay: float) -> None:
    if optimizer not in EQUILIBRIUM_OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(EQUILIBRIUM_OPTIMIZERS)}")
    check_hyper(lr, weight_decay)
    if weight_decay <= 0:
        raise ValueError("an equilibrium needs weight decay > 0 (without it the norm grows forever)")
    if lr * weight_decay >= 1:
        raise ValueError(f"eta * lambda = {lr * weight_decay:.3g} must be < 1: a larger decay "
                         "factor flips the sign of the weights every step")


def equilibrium(optimizer: str, lr: float, weight_decay: float, numel: int,
                unit_grad_sq: float | None = None, momentum: float = MOMENTUM,
                beta1: float = BETA1) -> dict:
    """The rotational equilibrium of one scale-invariant weight tensor of ``numel`` entries.

    Each step, decay multiplies ||w||^2 by about 1 - 2 eta lambda, while the update, orthogonal
    to w, adds ||eta u||^2. The norm settles where the two balance
    (van Laarhoven 2017; Kosson et al. 2024):

    - AdamW: u is normalized (entries of RMS about 1 when the gradient is noise-dominated),
      so ||w||^2 = eta C / (2 lambda): per-element RMS sqrt(eta / (2 lambda)), whatever the
      gradient; angular update sqrt(2 eta lambda (1 - beta1) / (1 + beta1)) per step.
    - SGD (momentum alpha, 0 for plain SGD): the gradient of a scale-invariant weight is
      g = g~ / ||w|| with g~ the gradient at unit norm, so ||w||^4 = eta ||g~||^2 /
      (2 lambda (1 - alpha)), which needs ``unit_grad_sq`` = E||g~||^2; angular update
      sqrt(2 eta lambda / (1 + alpha)) per step.

    The *effective learning rate* is the step size on the unit sphere: eta / ||w||^2 for SGD
    (the step per unit of unit-norm gradient), eta / RMS(w) for AdamW (the angle per unit of
    normalized update). At equilibrium it is sqrt(2 eta lambda (1 - alpha)) / ||g~|| and
    sqrt(2 eta lambda): set by the product eta * lambda alone. Returns a dict with ``rms``,
    ``norm``, ``angle``, ``effective_lr`` and ``tau`` = 1 / (eta lambda) steps.
    """
    _check_equilibrium_args(optimizer, lr, weight_decay)
    if numel < 1:
        raise ValueError(f"numel must be a positive integer, got {numel}")
    product = lr * weight_decay
    if optimizer == "adamw":
        if not 0.0 <= beta1 < 1.0:
            raise ValueError(f"beta1 must lie in [0, 1), got {beta1}")
        norm = math.sqrt(lr * numel / (2 * weight_decay))
        angle = math.sqrt(2 * product * (1 - beta1) / (1 + beta1))
        eff = lr / (norm / math.sqrt(numel))
    else:
        alpha = momentum if optimizer == "momentum" else 0.0
        if not 0.0 <= alpha < 1.0:
            raise ValueError(f"momentum must lie in [0, 1), got {alpha}")
        if unit_grad_sq is None or not unit_grad_sq > 0:
            raise ValueError("the SGD equilibrium needs unit_grad_sq = E||g~||^2 > 0, "
                             f"the squared gradient norm at unit weight norm; got {unit_grad_sq}")
        norm = (lr * unit_grad_sq / (2 * weight_decay * (1 - alpha))) ** 0.25
        angle = math.sqrt(2 * product / (1 + alpha))
        eff = lr / norm ** 2
    return dict(rms=norm / math.sqrt(numel), norm=norm, angle=angle, effective_lr=eff,
                tau=1.0 / product)


def adamw_norm_trajectory(rms0: float, lr: float, weight_decay: float, steps) -> np.ndarray:
    """The predicted per-element RMS of a scale-invariant weight under AdamW at ``steps``.

    From ||w_{t+1}||^2 = (1 - eta lambda)^2 ||w_t||^2 + eta^2 C (decay, then an orthogonal
    normalized update): the squared RMS relaxes geometrically from rms0^2 to its fixed point
    eta / (lambda (2 - eta lambda)) ~ eta / (2 lambda), with time constant 1 / (2 eta lambda):
    it is most of the way there after tau = 1 / (eta lambda) steps.
    """
    _check_equilibrium_args("adamw", lr, weight_decay)
    t = np.asarray(steps, dtype=float)
    q = (1.0 - lr * weight_decay) ** 2
    fixed = lr / (weight_decay * (2.0 - lr * weight_decay))
    return np.sqrt(fixed + (rms0 ** 2 - fixed) * q ** t)


def effective_lr(optimizer: str, lr: float, w_rms, numel: int):
    """eta / ||w||^2 (SGD, momentum) or eta / RMS(w) (AdamW); see :func:`equilibrium`."""
    if optimizer not in EQUILIBRIUM_OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(EQUILIBRIUM_OPTIMIZERS)}")
    w_rms = np.asarray(w_rms, dtype=float)
    if optimizer == "adamw":
        return lr / w_rms
    return lr / (w_rms ** 2 * numel)


class RotationMeter:
    """Per-step norm, angular update and unit-gradient norm of some weight tensors, recorded
    into preallocated device tensors (no host sync per step).

    Pass ``meter.before_step`` and ``meter.after_step`` to :func:`dynamics.train.train`:
    before the optimizer step it copies each weight and records ``||g|| ||w||`` (the gradient
    norm the weight would have at unit norm, for a scale-invariant weight); after it, the new
    norm and the angle between the old and new weight. Read the arrays with :meth:`arrays`.
    """

    def __init__(self, weights: dict[str, torch.Tensor], steps: int):
        if not weights:
            raise ValueError("RotationMeter needs at least one weight tensor")
        if steps < 1:
            raise ValueError(f"steps must be a positive integer, got {steps}")
        self.names = list(weights)
        self.weights = list(weights.values())
        device = self.weights[0].device
        n = len(self.weights)
        self.norm = torch.zeros(steps + 1, n, device=device)
        self.angle = torch.zeros(steps + 1, n, device=device)
        self.unit_grad = torch.zeros(steps + 1, n, device=device)
        self.previous = [w.detach().clone() for w in self.weights]
        with torch.no_grad():
            self.norm[0] = torch.stack([w.norm() for w in self.weights])
        self.numel = [w.numel() for w in self.weights]

    @torch.no_grad()
    def before_step(self, model, step: int) -> None:
        for prev, w in zip(self.previous, self.weights):
            prev.copy_(w)
        self.unit_grad[step] = torch.stack(
            [(w.grad.norm() if w.grad is not None else w.new_zeros(())) * w.norm()
             for w in self.weights])

    @torch.no_grad()
    def after_step(self, model, step: int) -> None:
        self.norm[step] = torch.stack([w.norm() for w in self.weights])
        self.angle[step] = torch.stack([angular_update(p, w) for p, w in zip(self.previous, self.weights)])

    def arrays(self, upto: int | None = None) -> dict:
        """numpy copies: ``norm``, ``angle``, ``unit_grad`` of shape [steps + 1, n_weights]."""
        end = None if upto is None else upto + 1
        return dict(norm=self.norm[:end].cpu().numpy(), angle=self.angle[:end].cpu().numpy(),
                    unit_grad=self.unit_grad[:end].cpu().numpy())


def singular_values(w: torch.Tensor) -> np.ndarray:
    """Singular values of a weight matrix (conv kernels flattened to out x rest), descending."""
    if w.ndim < 2:
        raise ValueError(f"singular values need a matrix, got a tensor of shape {list(w.shape)}")
    return torch.linalg.svdvals(w.detach().float().reshape(w.shape[0], -1)).cpu().numpy()


def stable_rank(sv) -> float:
    """||W||_F^2 / ||W||_2^2 = sum s_i^2 / s_max^2: how many directions carry the weight's
    energy (1 for a rank-one matrix, n for an orthogonal one); insensitive to tiny s_i."""
    sv = np.asarray(sv, dtype=float)
    if sv.ndim != 1 or len(sv) == 0 or sv.max() <= 0:
        raise ValueError("stable_rank needs a non-empty vector of singular values, not all zero")
    return float((sv ** 2).sum() / sv.max() ** 2)


def effective_rank(sv) -> float:
    """exp(entropy of s_i / sum s) (Roy & Vetterli 2007): n for equal singular values, 1 for
    rank one; a smooth count of the directions in use."""
    sv = np.asarray(sv, dtype=float)
    if sv.ndim != 1 or len(sv) == 0 or sv.sum() <= 0:
        raise ValueError("effective_rank needs a non-empty vector of singular values, not all zero")
    p = sv / sv.sum()
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def tail_exponent(sv, k: int | None = None) -> float:
    """The power-law exponent alpha of the tail of the eigenvalue density of W^T W,
    p(x) ~ x^(-alpha), by the Hill estimator on its ``k`` largest eigenvalues x = s^2:
    alpha = 1 + k / sum_i log(x_i / x_(k)). Heavy tails (small alpha, roughly 2-4) are what
    trained weights grow on top of the random bulk; a random matrix has no power-law tail
    (large alpha). Default k: half the eigenvalues.
    """
    x = np.sort(np.asarray(sv, dtype=float) ** 2)[::-1]
    if x.ndim != 1 or len(x) < 3:
        raise ValueError("tail_exponent needs at least 3 singular values")
    k = len(x) // 2 if k is None else int(k)
    if not 2 <= k <= len(x):
        raise ValueError(f"k must lie in [2, {len(x)}], got {k}")
    logs = np.log(x[:k] / x[k - 1])
    total = logs.sum()
    if total <= 0:
        return float("inf")
    return float(1.0 + k / total)


def final_loss(history: History, key: str = "train_loss", tail: float = 0.25) -> float:
    """The mean of ``key`` over the last ``tail`` fraction of evaluations: the level a noisy
    run has settled at (one evaluation alone jitters with the last few mini-batches)."""
    values = history[key]
    if history.diverged or len(values) == 0:
        return float("nan")
    n = max(1, int(round(len(values) * tail)))
    return float(np.mean(values[-n:]))


# ----------------------------------------------------------------------------- configs


@dataclass
class DecouplingConfig(Config):
    """Section 1: Adam + L2 and AdamW over the same learning rates, each over its own decay range."""

    lr_low: float = param(1e-4, "smallest learning rate of the grid", low=1e-6, high=1.0, log=True,
                          smoke=1e-3)
    lr_high: float = param(3e-2, "largest learning rate of the grid", low=1e-6, high=1.0, log=True)
    n_lr: int = param(6, "learning rates in the grid (log-spaced)", low=2, high=16, smoke=3)
    l2_low: float = param(1e-5, "smallest L2 coefficient for Adam + L2", low=1e-8, high=10.0, log=True)
    l2_high: float = param(1e-1, "largest L2 coefficient for Adam + L2", low=1e-8, high=10.0, log=True)
    wd_low: float = param(1e-3, "smallest decoupled weight decay for AdamW", low=1e-8, high=100.0, log=True)
    wd_high: float = param(10.0, "largest decoupled weight decay for AdamW", low=1e-8, high=100.0, log=True)
    n_wd: int = param(5, "weight decays in each grid (log-spaced)", low=2, high=16, smoke=3)
    steps: int = param(1000, "training steps", low=10, high=100_000, smoke=300, gpu=5000)
    width: int = param(128, "hidden width of the MLP", low=4, high=4096, smoke=64, gpu=256)
    n_train: int = param(1000, "MNIST-1D training examples", low=100, high=100_000, gpu=4000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)
    n_evals: int = param(8, "evaluations (the frames of the slider over training time)", low=2, high=100)

    def lrs(self) -> list[float]:
        return _logspace(self.lr_low, self.lr_high, self.n_lr, "lr")

    def decays(self, optimizer: str) -> list[float]:
        if optimizer == "adam_l2":
            return _logspace(self.l2_low, self.l2_high, self.n_wd, "l2")
        if optimizer == "adamw":
            return _logspace(self.wd_low, self.wd_high, self.n_wd, "wd")
        raise ValueError(f"the decoupling grid compares 'adam_l2' and 'adamw', got {optimizer!r}")


@dataclass
class EquilibriumConfig(Config):
    """Section 2: one run of a fully scale-invariant :class:`NormMLP`, measured every step."""

    optimizer: str = param("adamw", "optimizer", choices=EQUILIBRIUM_OPTIMIZERS)
    lr: float = param(3e-3, "learning rate eta (SGD wants ~0.1, AdamW ~3e-3)", low=1e-5, high=10.0, log=True)
    weight_decay: float = param(2.0, "weight decay lambda (SGD wants ~1e-2, AdamW ~1)", low=1e-5,
                                high=100.0, log=True)
    steps: int = param(1500, "training steps", low=10, high=200_000, smoke=600, gpu=10_000)
    width: int = param(128, "hidden width", low=4, high=4096, smoke=64, gpu=512)
    depth: int = param(2, "hidden layers", low=1, high=8)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size (the gradient noise that drives the equilibrium)",
                            low=1, high=100_000)


@dataclass
class ClockConfig(Config):
    """Section 3: AdamW runs of a :class:`NormMLP` at one eta*lambda, and one at another."""

    product: float = param(4e-3, "eta * lambda shared by the matched runs", low=1e-6, high=0.5, log=True,
                           smoke=8e-3)
    lr: float = param(2e-3, "middle learning rate; the others are lr / spread and lr * spread",
                      low=1e-6, high=1.0, log=True, smoke=4e-3)
    spread: float = param(2.0, "factor between consecutive matched learning rates", low=1.0, high=10.0)
    contrast: float = param(4.0, "factor by which the odd run's eta * lambda differs", low=1.0, high=100.0)
    steps: int = param(2000, "training steps (8 tau at the default product)", low=10, high=200_000,
                       smoke=1000, gpu=10_000)
    width: int = param(128, "hidden width", low=4, high=4096, smoke=64, gpu=512)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)

    def runs(self) -> list[dict]:
        """(lr, weight_decay) of each run: three matched, then the odd one."""
        lrs = [self.lr / self.spread, self.lr, self.lr * self.spread]
        out = [dict(lr=lr, weight_decay=self.product / lr, matched=True) for lr in lrs]
        out.append(dict(lr=self.lr, weight_decay=self.contrast * self.product / self.lr, matched=False))
        for r in out:
            check_hyper(r["lr"], r["weight_decay"])
        return out


@dataclass
class SpectrumConfig(Config):
    """Section 4: an MLP trained with and without weight decay; norms and spectra."""

    optimizer: str = param("adamw", "optimizer", choices=("adamw", "sgd", "momentum"))
    lr: float = param(2e-3, "learning rate", low=1e-6, high=10.0, log=True)
    weight_decay: float = param(2.0, "weight decay of the decayed run (the other has none)",
                                low=1e-5, high=100.0, log=True)
    steps: int = param(3000, "training steps", low=10, high=200_000, smoke=600, gpu=20_000)
    width: int = param(256, "hidden width", low=4, high=4096, smoke=128, gpu=512)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)


def _logspace(low: float, high: float, n: int, name: str) -> list[float]:
    if not 0 < low <= high:
        raise ValueError(f"{name} range must satisfy 0 < low <= high, got [{low}, {high}]")
    if n == 1 or low == high:
        return [float(low)] * max(1, n if low != high else 1)
    return [float(v) for v in np.geomspace(low, high, n)]


def _data(n_train: int, seed: int, n_test: int = 1000) -> Dataset:
    """MNIST-1D at the requested size (the data seed is fixed: seeds vary the models)."""
    return mnist1d(n_train, n_test, seed=0)


# ----------------------------------------------------------------------------- 1. decoupling

DECOUPLING = ("adam_l2", "adamw")
LABELS = {"adam_l2": "Adam + L2", "adamw": "AdamW", "sgd": "SGD", "momentum": "SGD + momentum"}


def run_decoupling(cfg: DecouplingConfig, seed: int | None = None, progress=None,
                   on_done=None) -> dict:
    """Train the lr x decay grid of an MLP on MNIST-1D with Adam + L2 and with AdamW (all
    models of one optimizer at once through :func:`dynamics.sweep.train_many`).

    Returns ``lrs``, ``decays[opt]``, ``eval_steps`` and ``test_acc[opt]`` / ``train_loss[opt]``
    as nested lists [decay][lr][evaluation] (None where a run had diverged), plus ``best[opt]``:
    the best final test accuracy and where it lies. ``on_done(opt)`` is called after each grid.
    """
    seed = get_seed(seed)
    data = _data(cfg.n_train, seed)
    lrs = cfg.lrs()
    evals = sorted({int(round(s)) for s in np.linspace(0, cfg.steps, cfg.n_evals + 1)[1:]})

    def model_fn(config):
        return MLP(data.input_dim, cfg.width, 2, data.n_classes)

    out = dict(lrs=lrs, decays={}, eval_steps=evals, test_acc={}, train_loss={}, best={},
               seed=seed, wall_time={}, strategy={})
    for opt in DECOUPLING:
        decays = cfg.decays(opt)
        configs = grid(weight_decay=decays, lr=lrs, seed=[seed])
        start = time.perf_counter()
        res = train_many(model_fn, data, configs, steps=cfg.steps, optimizer=opt,
                         batch_size=cfg.batch_size, eval_steps=evals, progress=progress, seed=seed)
        out["wall_time"][opt] = time.perf_counter() - start
        out["strategy"][opt] = res.info.get("strategy")
        shape = (len(decays), len(lrs), len(evals))
        acc = np.array([res.at_step("test_acc", s) for s in evals]).T.reshape(shape)
        loss = np.array([res.at_step("train_loss", s) for s in evals]).T.reshape(shape)
        out["decays"][opt] = decays
        out["test_acc"][opt] = acc
        out["train_loss"][opt] = loss
        out["best"][opt] = _best_cell(acc[:, :, -1], decays, lrs)
        if on_done is not None:
            on_done(opt)
    return out


def _best_cell(z: np.ndarray, decays, lrs) -> dict:
    z = np.asarray(z, dtype=float)
    if np.all(np.isnan(z)):
        return dict(acc=float("nan"), lr=None, decay=None)
    i, j = np.unravel_index(np.nanargmax(z), z.shape)
    return dict(acc=float(z[i, j]), lr=float(lrs[j]), decay=float(decays[i]))


def _grid_array(payload: dict, key: str, opt: str) -> np.ndarray:
    """A payload grid as a float array (None -> NaN), whether fresh or loaded from JSON."""
    return np.array(payload[key][opt], dtype=float)


def decoupling_figure(payload: dict, frame: int = -1, title: str | None = None):
    """Two heatmaps side by side: final test accuracy over (lr, decay) for Adam + L2 and AdamW
    at evaluation ``frame``; the best cell of each is outlined."""
    step = payload["eval_steps"][frame]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                        subplot_titles=["Adam + L2", "AdamW (decays ηλ per step)"])
    accs = [_grid_array(payload, "test_acc", o)[:, :, frame] for o in DECOUPLING]
    finite = [a[np.isfinite(a)] for a in accs]
    zmax = max((float(f.max()) for f in finite if f.size), default=1.0)
    zmin = min((float(f.min()) for f in finite if f.size), default=0.0)
    xs = [_short(v) for v in payload["lrs"]]
    for c, (opt, acc) in enumerate(zip(DECOUPLING, accs), start=1):
        ys = [_short(v) for v in payload["decays"][opt]]
        ytitle = "L2 coefficient λ" if opt == "adam_l2" else "weight decay λ"
        fig.add_heatmap(z=acc, x=xs, y=ys, zmin=zmin, zmax=zmax, colorscale="Viridis",
                        texttemplate="%{z:.2f}", showscale=c == 2,
                        colorbar=dict(title="test acc"),
                        hovertemplate="lr=%{x}<br>λ=%{y}<br>test acc=%{z:.3f}<extra></extra>",
                        row=1, col=c)
        if np.isfinite(acc).any():
            i, j = np.unravel_index(np.nanargmax(acc), acc.shape)
            fig.add_scatter(x=[xs[j]], y=[ys[i]], mode="markers", showlegend=False,
                            marker=dict(symbol="square-open", size=34, color="white",
                                        line=dict(width=3, color="white")),
                            hoverinfo="skip", row=1, col=c)
        fig.update_xaxes(title_text="learning rate η", type="category",
                         tickangle=-45 if len(xs) > 4 else 0, row=1, col=c)
        fig.update_yaxes(title_text=ytitle, type="category", row=1, col=c)
    fig.update_layout(title=title or f"Test accuracy after {step} steps", hovermode="closest",
                      height=440)
    return fig


def decoupling_slider(payload: dict):
    """The heatmaps with a slider over training time (static counterpart of the panel)."""
    steps = payload["eval_steps"]
    figs = [decoupling_figure(payload, k) for k in range(len(steps))]
    fig = plots.slider(figs, [str(s) for s in steps], name="step")
    fig.layout.sliders[0].pad.t = 70
    return fig


def _short(v: float) -> str:
    """A compact, unique label for a grid value: 3.2e-4, 0.01, 10."""
    if v == 0 or 1e-2 <= abs(v) < 1e3:
        return f"{v:.2g}"
    mantissa, exponent = f"{v:.1e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def decoupling_summary(payload: dict) -> dict:
    """Best final test accuracy of each optimizer, and AdamW's margin over Adam + L2."""
    best = {o: _best_cell(_grid_array(payload, "test_acc", o)[:, :, -1], payload["decays"][o],
                          payload["lrs"]) for o in DECOUPLING}
    return dict(best=best, margin=best["adamw"]["acc"] - best["adam_l2"]["acc"])


# ----------------------------------------------------------------------------- 2. equilibrium


def run_equilibrium(cfg: EquilibriumConfig, seed: int | None = None, callbacks=(),
                    progress=None) -> dict:
    """Train a fully scale-invariant :class:`NormMLP` with ``cfg.optimizer`` and measure, every
    step, each weight matrix's norm, angular update and unit-norm gradient; return them
    (downsampled for plotting) beside the equilibrium predictions (:func:`equilibrium_summary`).
    ``callbacks`` go to :func:`dynamics.train.train`; they receive the meter as ``model.meter``.
    """
    seed = get_seed(seed)
    _check_equilibrium_args(cfg.optimizer, cfg.lr, cfg.weight_decay)
    data = _data(cfg.n_train, seed)
    torch.manual_seed(seed)
    model = NormMLP(data.input_dim, cfg.width, cfg.depth, data.n_classes).to(data.device)
    meter = RotationMeter(model.scale_invariant(), cfg.steps)
    model.meter = meter
    history = train(model, data, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr,
                    weight_decay=cfg.weight_decay, momentum=MOMENTUM, batch_size=cfg.batch_size,
                    eval_every=max(1, cfg.steps // 20), before_step=meter.before_step,
                    after_step=meter.after_step, callbacks=callbacks, seed=seed, progress=progress)
    last = cfg.steps if not history.diverged else max(0, history.diverged_at - 1)
    return equilibrium_summary(cfg, meter.arrays(last), meter.names, meter.numel, history)


def _ema(x: np.ndarray, rate: float) -> np.ndarray:
    """Exponential moving average along axis 0 (started at the first row)."""
    from scipy.signal import lfilter

    rate = min(1.0, max(rate, 1e-12))
    zi = (1 - rate) * x[:1]
    return lfilter([rate], [1, -(1 - rate)], x, axis=0, zi=zi)[0]


def _bins(n: int, points: int = 160) -> list[tuple[int, int]]:
    """Consecutive [start, end) windows covering steps 1..n-1, about ``points`` of them."""
    width = max(1, (n - 1) // points)
    return [(s, min(n, s + width)) for s in range(1, n, width)]


def equilibrium_summary(cfg: EquilibriumConfig, arrays: dict, names, numel, history: History) -> dict:
    """Measured and predicted norm (per-element RMS), angular update and effective learning
    rate of each scale-invariant weight, downsampled, plus the equilibrium comparison over the
    last quarter of training (``layers[name]``: measured / predicted / ratio)."""
    opt, lr, wd = cfg.optimizer, cfg.lr, cfg.weight_decay
    numel = np.asarray(numel, dtype=float)
    norm, angle, ug = arrays["norm"], arrays["angle"], arrays["unit_grad"]
    T = len(norm) - 1
    w_rms = norm / np.sqrt(numel)
    steps = np.arange(T + 1)
    alpha = MOMENTUM if opt == "momentum" else 0.0
    eq_angle = equilibrium(opt, lr, wd, 1, unit_grad_sq=1.0, momentum=MOMENTUM)["angle"]
    if opt == "adamw":
        pred_rms = np.stack([adamw_norm_trajectory(w_rms[0, l], lr, wd, steps)
                             for l in range(len(numel))], axis=1)
        pred_angle = lr * math.sqrt((1 - BETA1) / (1 + BETA1)) / pred_rms
        pred_eff = lr / pred_rms
    else:
        # the norm the weight is heading to, given the unit-norm gradient it has been seeing
        # (averaged over the relaxation time 1 / (2 eta lambda) of ||w||^2)
        g2 = _ema(np.maximum(ug[1:], 0) ** 2, 2 * lr * wd) if T else np.zeros((0, len(numel)))
        g2 = np.concatenate([g2[:1], g2]) if T else np.zeros((1, len(numel)))
        pred_norm = (lr * g2 / (2 * wd * (1 - alpha))) ** 0.25
        pred_rms = pred_norm / np.sqrt(numel)
        pred_angle = np.full_like(pred_rms, eq_angle)
        pred_eff = np.sqrt(2 * lr * wd * (1 - alpha) / np.maximum(g2, 1e-30))
    eff = effective_lr(opt, lr, np.maximum(w_rms, 1e-30), numel)

    tail = slice(max(1, T - T // 4), T + 1)
    layers = {}
    for l, name in enumerate(names):
        if T < 4:
            break
        if opt == "adamw":
            eq = equilibrium(opt, lr, wd, int(numel[l]))
        else:
            eq = equilibrium(opt, lr, wd, int(numel[l]), unit_grad_sq=float(np.mean(ug[tail, l] ** 2)),
                             momentum=MOMENTUM)
        m_rms = float(np.mean(w_rms[tail, l]))
        m_angle = float(np.mean(angle[tail, l]))
        m_eff = float(np.mean(eff[tail, l]))
        layers[name] = dict(rms=m_rms, rms_pred=eq["rms"], rms_ratio=m_rms / eq["rms"],
                            angle=m_angle, angle_pred=eq["angle"], angle_ratio=m_angle / eq["angle"],
                            effective_lr=m_eff, effective_lr_pred=eq["effective_lr"],
                            effective_lr_ratio=m_eff / eq["effective_lr"],
                            relax_steps=_relaxation_steps(w_rms[:, l], eq["rms"]),
                            rms0=float(w_rms[0, l]))
    bins = _bins(T + 1)
    at = np.array([b for b, _ in bins] + ([T] if T else []))
    mean = lambda a: np.array([a[s:e].mean(0) for s, e in bins] + ([a[T]] if T else []))  # noqa: E731
    return dict(
        optimizer=opt, lr=lr, weight_decay=wd, tau=1.0 / (lr * wd), steps=T, names=list(names),
        numel=numel.tolist(), status=history.status,
        step=np.concatenate([[0], at]).tolist(),
        rms=np.concatenate([w_rms[:1], w_rms[at]]), rms_pred=np.concatenate([pred_rms[:1], pred_rms[at]]),
        angle=mean(angle) if T else np.zeros((0, len(names))),
        angle_step=[int((s + e - 1) / 2) for s, e in bins] + ([T] if T else []),
        angle_pred=mean(pred_angle) if T else np.zeros((0, len(names))),
        effective_lr=np.concatenate([eff[:1], eff[at]]),
        effective_lr_pred=np.concatenate([pred_eff[:1], pred_eff[at]]),
        eq_angle=eq_angle, layers=layers,
        test_acc=history.last("test_acc") if len(history) else float("nan"),
        history=history,
    )


def _relaxation_steps(w_rms: np.ndarray, rms_eq: float) -> int | None:
    """Steps until the squared RMS has closed all but e^-2 of its initial gap to the
    equilibrium (two time constants of ||w||^2, i.e. tau = 1/(eta lambda) in theory); None
    when the run starts within 30% of equilibrium (nothing to relax) or never gets there."""
    if abs(w_rms[0] / rms_eq - 1) < 0.3:
        return None
    gap0 = w_rms[0] ** 2 - rms_eq ** 2
    gap = (w_rms ** 2 - rms_eq ** 2) / gap0
    hit = np.flatnonzero(gap <= math.exp(-2))
    return int(hit[0]) if len(hit) else None


def equilibrium_figure(results_list, title: str | None = None):
    """Norm, angular update and effective learning rate (rows) against step, measured (solid,
    one colour per weight matrix) and predicted (dashed), one column per run; a dotted line
    marks tau = 1 / (eta lambda)."""
    if isinstance(results_list, dict):
        results_list = [results_list]
    cols = len(results_list)
    heads = [f"{LABELS[r['optimizer']]}, η={r['lr']:.2g}, λ={r['weight_decay']:.2g}" for r in results_list]
    fig = make_subplots(rows=3, cols=cols, column_titles=heads, shared_xaxes=True,
                        horizontal_spacing=0.1, vertical_spacing=0.06)
    series = [("rms", "rms_pred", "step", "RMS of W", True),
              ("angle", "angle_pred", "angle_step", "angle per step (rad)", False),
              ("effective_lr", "effective_lr_pred", "step", "effective lr", True)]
    for col, r in enumerate(results_list, start=1):
        for row, (key, pred_key, xkey, ytitle, logy) in enumerate(series, start=1):
            y, yp = np.array(r[key], dtype=float), np.array(r[pred_key], dtype=float)
            x = np.array(r[xkey], dtype=float)
            if y.size == 0:
                continue
            for l, name in enumerate(r["names"]):
                color = plots.PALETTE[l % len(plots.PALETTE)]
                show = row == 1 and col == 1
                fig.add_scatter(x=x, y=y[:, l], mode="lines", name=f"{name} measured",
                                legendgroup=name, showlegend=show, line=dict(color=color, width=1.5),
                                row=row, col=col)
                fig.add_scatter(x=x, y=yp[:, l], mode="lines", name=f"{name} theory",
                                legendgroup=name + "p", showlegend=show,
                                line=dict(color=color, dash="dash", width=2), row=row, col=col)
            if logy:
                fig.update_yaxes(type="log", row=row, col=col)
            else:  # the first steps can turn far more than at equilibrium: keep them off the scale
                top = max(1.15 * float(np.nanpercentile(y, 98)), 1.5 * float(r["eq_angle"]))
                fig.update_yaxes(range=[0, top], row=row, col=col)
            if col == 1:
                fig.update_yaxes(title_text=ytitle, row=row, col=col)
            if r["tau"] <= r["steps"]:
                fig.add_vline(x=r["tau"], line=dict(color="#888", dash="dot", width=1), row=row, col=col)
        fig.update_xaxes(title_text="step", row=3, col=col)
    fig.update_layout(title=title or "Measured (solid) vs theory (dashed)",
                      hovermode="closest", height=760,
                      legend=dict(orientation="h", y=-0.1, x=0))
    return fig


def equilibrium_rows(result: dict) -> list[dict]:
    """Rows of measured vs predicted equilibrium values (last quarter of training), per layer."""
    rows = []
    for name, v in result["layers"].items():
        rows.append({"optimizer": LABELS[result["optimizer"]], "weight": name,
                     "RMS measured": f"{v['rms']:.4f}", "RMS predicted": f"{v['rms_pred']:.4f}",
                     "angle measured": f"{v['angle']:.4f}", "angle predicted": f"{v['angle_pred']:.4f}",
                     "eff. lr measured": f"{v['effective_lr']:.3g}",
                     "eff. lr predicted": f"{v['effective_lr_pred']:.3g}"})
    return rows


# ----------------------------------------------------------------------------- 3. clock


def run_clock(cfg: ClockConfig, seed: int | None = None, progress=None) -> dict:
    """AdamW on a :class:`NormMLP`: three runs with equal eta * lambda (learning rates a factor
    ``spread`` apart) and one with ``contrast`` times the product, from the same initialization
    and batches. Returns the runs, their histories and each run's settled loss (the mean train
    loss over the second half of training, by when the norms have equilibrated: see
    :func:`final_loss`), with ``spread`` (max/min - 1 of the matched losses) and ``ratio``
    (odd loss / mean matched loss)."""
    seed = get_seed(seed)
    data = _data(cfg.n_train, seed)
    runs = cfg.runs()

    def model_fn(config):
        return NormMLP(data.input_dim, cfg.width, 2, data.n_classes)

    configs = [dict(lr=r["lr"], weight_decay=r["weight_decay"], seed=seed) for r in runs]
    evals = sorted({int(round(s)) for s in np.linspace(0, cfg.steps, 41)})
    res = train_many(model_fn, data, configs, steps=cfg.steps, optimizer="adamw",
                     batch_size=cfg.batch_size, eval_steps=evals, progress=progress, seed=seed)
    losses = [final_loss(h, tail=0.5) for h in res.histories]
    matched = [l for l, r in zip(losses, runs) if r["matched"]]
    odd = [l for l, r in zip(losses, runs) if not r["matched"]]
    return dict(runs=runs, histories=res.histories, final_loss=losses,
                spread=float(max(matched) / min(matched) - 1),
                ratio=float(odd[0] / np.mean(matched)), product=cfg.product, contrast=cfg.contrast,
                strategy=res.info.get("strategy"))


def clock_figure(result: dict, metric: str = "train_loss", title: str | None = None):
    """``metric`` against eta * lambda * t (steps in units of tau) for every run of :func:`run_clock`."""
    fig = plots.figure(title or "Same η·λ, same trajectory", "η·λ·t  (training time in units of τ)",
                       metric.replace("_", " "), logy=metric.endswith("loss"))
    blues = ["#9ecae1", "#4292c6", "#08519c"]
    k = 0
    for r, h in zip(result["runs"], result["histories"]):
        prod = r["lr"] * r["weight_decay"]
        x = np.asarray(h.steps, dtype=float) * prod
        if r["matched"]:
            color, k = blues[k % 3], k + 1
        else:
            color = plots.PALETTE[1]
        fig.add_scatter(x=x, y=h[metric], mode="lines+markers", marker=dict(size=4),
                        name=f"η={r['lr']:.2g}, λ={r['weight_decay']:.2g} (ηλ={prod:.2g})"
                        + (" (diverged)" if h.diverged else ""), line=dict(color=color))
    fig.update_layout(hovermode="closest")
    return fig


# ----------------------------------------------------------------------------- 4. spectrum


def run_spectrum(cfg: SpectrumConfig, seed: int | None = None, progress=None) -> dict:
    """Train one MLP twice from the same initialization, without and with weight decay;
    record each weight matrix's Frobenius norm during training, and its singular values at
    initialization and at the end, with stable rank, effective rank and tail exponent."""
    seed = get_seed(seed)
    data = _data(cfg.n_train, seed)
    out = dict(runs={}, weight_decay=cfg.weight_decay, optimizer=cfg.optimizer)
    for wd in (0.0, cfg.weight_decay):
        torch.manual_seed(seed)
        model = MLP(data.input_dim, cfg.width, 2, data.n_classes).to(data.device)
        layers = {f"hidden.{i}": layer.weight for i, layer in enumerate(model.hidden)}
        layers["head"] = model.head.weight
        init = {n: singular_values(w) for n, w in layers.items()}
        metrics = {f"norm {n}": (lambda m, d, w=w: w.detach().norm()) for n, w in layers.items()}
        h = train(model, data, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr,
                  weight_decay=wd, batch_size=cfg.batch_size, eval_steps=_log_evals(cfg.steps),
                  metrics=metrics, seed=seed, progress=progress)
        final = {n: singular_values(w) for n, w in layers.items()}
        stats = {n: spectrum_stats(sv) for n, sv in final.items()}
        out["runs"][wd] = dict(history=h, init=init, final=final, stats=stats,
                               test_acc=h.last("test_acc"), train_acc=h.last("train_acc"))
    return out


def _log_evals(steps: int, n: int = 30) -> list[int]:
    return sorted({0} | {int(round(s)) for s in np.geomspace(1, steps, n)})


def spectrum_stats(sv) -> dict:
    """Frobenius norm, spectral norm, stable rank, effective rank and tail exponent."""
    sv = np.asarray(sv, dtype=float)
    return dict(frobenius=float(np.sqrt((sv ** 2).sum())), spectral=float(sv.max()),
                stable_rank=stable_rank(sv), effective_rank=effective_rank(sv),
                tail_alpha=tail_exponent(sv))


def spectrum_figure(result: dict, layer: str = "hidden.1", title: str | None = None):
    """Left: weight norm during training, with and without decay. Right: the singular values
    of ``layer`` by rank (log-log), at initialization and after training."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.16,
                        subplot_titles=["‖W‖_F during training", f"spectrum of {layer}"])
    dashes = {"hidden.0": "dot", "hidden.1": "solid", "head": "dash"}
    for k, (wd, run) in enumerate(result["runs"].items()):
        color = plots.PALETTE[k]
        label = f"λ={float(wd):.2g}"
        h = run["history"]
        for name in run["final"]:
            key = f"norm {name}"
            if key in h:
                fig.add_scatter(x=np.maximum(np.asarray(h.steps, dtype=float), 1), y=h[key], mode="lines",
                                name=f"{label} · {name}", line=dict(color=color, dash=dashes.get(name)),
                                legendgroup=label, row=1, col=1)
        sv = run["final"][layer]
        fig.add_scatter(x=np.arange(1, len(sv) + 1), y=sv, mode="lines", name=f"{label} · trained",
                        line=dict(color=color, width=2.5), legendgroup=label, row=1, col=2)
    sv0 = next(iter(result["runs"].values()))["init"][layer]
    fig.add_scatter(x=np.arange(1, len(sv0) + 1), y=sv0, mode="lines", name="initialization",
                    line=dict(color="#888", dash="dot"), row=1, col=2)
    fig.update_xaxes(type="log", title_text="step", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_xaxes(type="log", title_text="rank i", row=1, col=2)
    fig.update_yaxes(type="log", title_text="σ_i", row=1, col=2)
    fig.update_layout(title=title or "What weight decay does to the weights", hovermode="closest",
                      height=520, legend=dict(orientation="h", y=-0.25, x=0))
    return fig


def spectrum_rows(result: dict) -> list[dict]:
    rows = []
    for wd, run in result["runs"].items():
        for name, s in run["stats"].items():
            rows.append({"weight decay": f"{float(wd):.2g}", "weight": name,
                         "‖W‖_F": f"{s['frobenius']:.2f}", "‖W‖_2": f"{s['spectral']:.2f}",
                         "stable rank": f"{s['stable_rank']:.1f}",
                         "effective rank": f"{s['effective_rank']:.1f}",
                         "tail α": f"{s['tail_alpha']:.2f}",
                         "test acc": f"{run['test_acc']:.3f}"})
    return rows


# ----------------------------------------------------------------------------- panels

# The two runs of section 2: the same eta * lambda = 6e-3 (tau = 167 steps) for both.
SECTION2 = {"adamw": dict(lr=3e-3, weight_decay=2.0), "sgd": dict(lr=0.3, weight_decay=0.02)}


def equilibrium_configs(profile: str | None = None) -> list[EquilibriumConfig]:
    """The configs of section 2 at a profile's scale: AdamW and SGD."""
    return [EquilibriumConfig.for_profile(profile, optimizer=o, **kw) for o, kw in SECTION2.items()]


def decoupling_panel(profile: str | None = None):
    """Live: the Adam + L2 / AdamW grid at the profile's (small) scale; choose its length,
    data size and width."""
    from .widgets import Choice, Panel, Slider

    base = DecouplingConfig.for_profile(get_profile(profile) if profile != "gpu" else "cpu",
                                        n_lr=3, n_wd=3, lr_low=1e-3)

    def run(update, steps, n_train, width):
        cfg = base.replace(steps=int(steps), n_train=int(n_train), width=int(width))
        payload = run_decoupling(cfg, progress=False,
                                 on_done=lambda opt: update(progress=0.5, status=f"{LABELS[opt]} done"))
        bad = sum(int(np.isnan(_grid_array(payload, "test_acc", o)[:, :, -1]).sum()) for o in DECOUPLING)
        update(status=f"done; {bad} diverged runs" if bad else "done")
        return decoupling_figure(payload)

    return Panel(run, [Slider("steps", 50, 3000, value=base.steps, integer=True, step=50),
                       Choice("n_train", [500, 1000, 2000, 4000], value=base.n_train),
                       Choice("width", [32, 64, 128, 256], value=base.width)],
                 title="Try it: Adam + L2 against AdamW (3 x 3 grids)",
                 note="Longer training and less data make regularization matter more.")


def equilibrium_panel(profile: str | None = None):
    """Live: one scale-invariant run with the chosen optimizer, lr and weight decay."""
    from .widgets import Choice, Panel, Slider

    base = EquilibriumConfig.for_profile(profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))

        def build(history, model):  # the figure from the model's norm meter so far
            step, meter = history.steps[-1], model.meter
            if step == 0:  # nothing measured yet: keep the panel's figure
                return None
            return equilibrium_figure(equilibrium_summary(
                cfg, meter.arrays(step), meter.names, meter.numel, history))

        live = update.every(build, interval=1.0, total_steps=cfg.steps, with_model=True)
        result = run_equilibrium(cfg, callbacks=[live], progress=False)
        update(status=result["status"])
        return equilibrium_figure(result)

    return Panel(run, [Choice("optimizer", list(EQUILIBRIUM_OPTIMIZERS), value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-4, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, 5000, value=base.steps, integer=True, step=100)],
                 title="Try it: the rotational equilibrium",
                 note="AdamW: lr ~ 3e-3, λ ~ 1. SGD: lr ~ 0.2, λ ~ 0.02. Equilibrium needs "
                      "a few τ = 1/(ηλ) steps.")


def clock_panel(profile: str | None = None):
    """Live: the trajectory-invariance experiment with a chosen product and contrast."""
    from .widgets import Panel, Slider

    base = ClockConfig.for_profile(profile)

    def run(update, product, spread, contrast, steps):
        cfg = base.replace(product=float(product), spread=float(spread), contrast=float(contrast),
                           steps=int(steps))
        result = run_clock(cfg, progress=False)
        bad = [r for r, h in zip(result["runs"], result["histories"]) if h.diverged]
        update(status=f"{len(bad)} run(s) diverged" if bad else
               f"matched spread {100 * result['spread']:.0f}%, odd/matched {result['ratio']:.2f}")
        return clock_figure(result)

    return Panel(run, [Slider("product", 1e-4, 5e-2, value=base.product, log=True),
                       Slider("spread", 1.0, 4.0, value=base.spread, step=0.25),
                       Slider("contrast", 1.0, 10.0, value=base.contrast, step=0.5),
                       Slider("steps", 100, 5000, value=base.steps, integer=True, step=100)],
                 title="Try it: weight decay as a clock")


def spectrum_panel(profile: str | None = None):
    """Live: train with and without decay and compare the weights."""
    from .widgets import Choice, Panel, Slider

    base = SpectrumConfig.for_profile(profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))
        result = run_spectrum(cfg, progress=False)
        bad = [wd for wd, r in result["runs"].items() if r["history"].diverged]
        update(status=f"diverged with λ={bad}" if bad else "done")
        return spectrum_figure(result)

    return Panel(run, [Choice("optimizer", ["adamw", "sgd", "momentum"], value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-3, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, 10000, value=base.steps, integer=True, step=100)],
                 title="Try it: weight decay and the spectrum")


# ----------------------------------------------------------------------------- precompute, bench


def precompute(profile: str) -> list:
    """``python -m dynamics.precompute weight_decay --profile P``: the lr x decay grids of
    section 1 with a slider over training time (``data/weight_decay_grid.json``)."""
    cfg = DecouplingConfig.for_profile(profile)
    start = time.perf_counter()
    payload = run_decoupling(cfg, seed=0)
    note = ("CPU scale: MNIST-1D, one seed; the gpu profile trains longer and wider."
            if profile != "gpu" else "")
    path = results.save("weight_decay_grid", payload, profile=profile, config=cfg,
                        command=f"python -m dynamics.precompute weight_decay --profile {profile}",
                        note=note, wall_time=time.perf_counter() - start)
    return [path]


def bench(profiles=("smoke",)) -> None:
    """``python -m dynamics.bench weight_decay``: wall and CPU seconds of each experiment of
    the chapter at the smoke scale (what the notebook runs in CI)."""
    for profile in profiles:
        total_wall = total_cpu = 0.0
        jobs = [("decoupling grid", lambda: run_decoupling(DecouplingConfig.for_profile(profile), 0, False))]
        jobs += [(f"equilibrium {c.optimizer}", lambda c=c: run_equilibrium(c, 0, progress=False))
                 for c in equilibrium_configs(profile)]
        jobs += [("clock", lambda: run_clock(ClockConfig.for_profile(profile), 0, False)),
                 ("spectrum", lambda: run_spectrum(SpectrumConfig.for_profile(profile), 0, False))]
        for name, job in jobs:
            wall, cpu = time.perf_counter(), time.process_time()
            job()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu
            print(f"weight_decay {profile} {name}: {wall:.1f} s wall, {cpu:.1f} s CPU "
                  f"(torch threads {torch.get_num_threads()})", flush=True)
        print(f"weight_decay {profile} total: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU", flush=True)


# ----------------------------------------------------------------------------- claims


def _fmt(x, spec=".3g"):
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def claims_rows(grid: dict | None = None, live_grid: dict | None = None, equilibria=(),
                clock: dict | None = None, spectrum: dict | None = None) -> list[dict]:
    """The chapter's table: each paper's claim beside what this run measured."""
    rows = []
    for label, payload in (("precomputed grid", grid), ("live grid", live_grid)):
        if payload is None:
            continue
        s = decoupling_summary(payload)
        b = s["best"]
        rows.append(dict(
            claim="AdamW generalizes better than Adam + L2 (best over the lr x decay grid)",
            source="Decoupled Weight Decay Regularization",
            measured=f"{label}: best test acc AdamW {_fmt(b['adamw']['acc'])} "
                     f"(η={_fmt(b['adamw']['lr'], '.2g')}, λ={_fmt(b['adamw']['decay'], '.2g')}), "
                     f"Adam + L2 {_fmt(b['adam_l2']['acc'])} (η={_fmt(b['adam_l2']['lr'], '.2g')}, "
                     f"λ={_fmt(b['adam_l2']['decay'], '.2g')}); margin {_fmt(s['margin'], '+.3f')}"))
    for r in equilibria:
        lay = list(r["layers"].values())
        if not lay:
            continue
        rms = [v["rms_ratio"] for v in lay]
        ang = [v["angle_ratio"] for v in lay]
        if r["optimizer"] == "adamw":
            claim = "AdamW: per-element RMS → sqrt(η/2λ); angle → sqrt(2ηλ(1−β1)/(1+β1)) per step"
        else:
            claim = (f"{LABELS[r['optimizer']]}: ‖w‖⁴ → η‖g̃‖²/(2λ(1−α)); "
                     "angle → sqrt(2ηλ/(1+α)) per step")
        rows.append(dict(claim=claim, source="L2 Regularization versus Batch and Weight Normalization; "
                         "Rotational Equilibrium",
                         measured=f"measured / predicted over the last quarter: RMS "
                                  f"{min(rms):.2f}–{max(rms):.2f}, angle {min(ang):.2f}–{max(ang):.2f} "
                                  f"({len(lay)} weight matrices)"))
        relax = [v["relax_steps"] for v in lay if v["relax_steps"] is not None]
        if r["optimizer"] == "adamw" and relax:
            rows.append(dict(claim="equilibrium reached in about τ = 1/(ηλ) steps",
                             source="Rotational Equilibrium; Power Lines",
                             measured=f"RMS² within e⁻² of equilibrium after {min(relax)}–{max(relax)} "
                                      f"steps; τ = {r['tau']:.0f}"))
    if clock is not None:
        rows.append(dict(claim="loss curves overlap when η·λ is held fixed (trajectory invariance)",
                         source="Efficient Hyperparameter Tuning via Trajectory Invariance Principle",
                         measured=f"train loss (mean over the second half) of 3 runs at "
                                  f"ηλ={clock['product']:.2g} within "
                                  f"{100 * clock['spread']:.1f}% of each other; {clock['contrast']:g}x the "
                                  f"product: {clock['ratio']:.2f}x their loss"))
    if spectrum is not None:
        runs = list(spectrum["runs"].items())
        (w0, r0), (w1, r1) = runs[0], runs[-1]
        name = "hidden.1" if "hidden.1" in r0["stats"] else next(iter(r0["stats"]))
        a, b = r0["stats"][name], r1["stats"][name]
        rows.append(dict(claim="weight decay shrinks the weights and shapes their spectrum "
                               "(power-law tail)",
                         source="Workshop abstract: scaling laws of shallow networks",
                         measured=f"{name}: ‖W‖_F {a['frobenius']:.1f} → {b['frobenius']:.1f}, "
                                  f"stable rank {a['stable_rank']:.1f} → {b['stable_rank']:.1f}, "
                                  f"tail α {a['tail_alpha']:.2f} → {b['tail_alpha']:.2f}; test acc "
                                  f"{r0['test_acc']:.3f} → {r1['test_acc']:.3f} "
                                  f"(λ {float(w0):g} → {float(w1):g})"))
    return rows
