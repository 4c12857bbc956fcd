"""Grokking: a network memorizes its training set first and generalizes much later.

Power et al. (2022) trained small networks on tables of modular arithmetic, ``a ∘ b mod p``,
with a fraction of the ``p²`` pairs for training: training accuracy reaches 100% early, test
accuracy sits at chance for a long time, then jumps to 100%. This module holds the
experiments of the chapter:

- the task and the two models: a 2-layer MLP on concatenated one-hot pairs (smoke / cpu) and
  the one-layer transformer of Nanda et al. (2023) (gpu), in :class:`GrokConfig`;
- the *progress measures* that move during the plateau: the total weight norm
  (:func:`weight_norm`), the Fourier spectrum of the input weights over the ``p`` residues
  (:func:`fourier_spectrum`, :func:`spectral_concentration`) and the restricted / excluded
  loss of Nanda et al. (:func:`fourier_losses`);
- the remedies that make it faster: stronger weight decay, the Grokfast EMA gradient filter
  (:class:`GrokfastEMA`), the gradient with its component along the weights removed
  (:func:`orthogonal_grad_`, ⊥Grad) and StableMax (:func:`stablemax_cross_entropy`) of
  Prieto et al. (2025), and Muon;
- corrupted labels (Doshi et al. 2024): memorizing wrong labels while generalizing;
- the phase diagram over training fraction x weight decay, trained with
  :func:`dynamics.sweep.train_many` on a shared pool of all ``p²`` pairs.

Runners (``run``, ``progress_measures``, ``run_remedies``, ``run_corrupted``, ``phase_diagram``)
return plain results; figure builders (``*_figure``, ``*_slider``), the live panels (``*panel``),
:func:`claims`, :func:`precompute` and :func:`bench` sit at the end.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import data as D
from . import models as M
from . import plots, results
from .config import Config, param
from .runtime import get_device, get_profile
from .train import History, log_steps, make_optimizer, train

FIT_ACC = 0.99    # "fitted": training accuracy above this
GROK_ACC = 0.95   # "generalized": test accuracy above this
DELAY = 5.0       # grokking = generalizing at least DELAY x later than fitting
REMEDIES = ("none", "grokfast", "perp_grad", "stablemax")
PHASES = ("comprehension", "grokking", "memorization", "confusion")
FOURIER_OPS = ("add", "sub")  # ops whose generalizing logits are periodic in a ± b


# ============================================================================ settings


@dataclass
class GrokConfig(Config):
    """One grokking run: task, model, optimizer, remedy. Presets: smoke (CI: p = 37, 70% train,
    seconds), cpu (p = 59, 50% train: the MLP reference recipe at learning rate 1e-2, where it
    groks in a few hundred steps; :func:`bench` times the recipe's 3e-3), gpu (Nanda et al.'s
    one-layer transformer: p = 113, 30% train, AdamW lr 1e-3, wd 1, β₂ 0.98)."""

    p: int = param(59, "the modulus p (prime for division)", low=5, high=257,
                   smoke=37, cpu=59, gpu=113)
    op: str = param("add", "the operation a ∘ b mod p", choices=tuple(D.OPERATIONS))
    train_frac: float = param(0.5, "fraction of the pairs used for training", low=0.05,
                              high=0.95, smoke=0.7, cpu=0.5, gpu=0.3)
    model: str = param("mlp", "MLP on one-hot pairs, or the one-layer transformer",
                       choices=("mlp", "transformer"), smoke="mlp", cpu="mlp", gpu="transformer")
    width: int = param(128, "MLP hidden width / transformer d_model", low=8, high=1024)
    depth: int = param(2, "MLP hidden layers", low=1, high=4)
    optimizer: str = param("adamw", "optimizer (Muon: hidden matrices; AdamW: the rest)",
                           choices=("adamw", "muon"))
    lr: float = param(3e-3, "learning rate", low=1e-5, high=1.0, log=True,
                      smoke=1e-2, cpu=1e-2, gpu=1e-3)
    weight_decay: float = param(1.0, "decoupled weight decay", low=0.0, high=10.0)
    beta2: float = param(0.999, "Adam β₂", low=0.5, high=0.9999, smoke=0.999, cpu=0.999,
                         gpu=0.98)
    steps: int = param(3000, "full-batch training steps", low=1, high=200_000,
                       smoke=700, cpu=2000, gpu=25_000)
    remedy: str = param("none", "grokfast | perp_grad (⊥Grad) | stablemax", choices=REMEDIES)
    grokfast_alpha: float = param(0.98, "Grokfast EMA momentum α", low=0.0, high=0.9999)
    grokfast_lambda: float = param(2.0, "Grokfast amplification λ", low=0.0, high=100.0)
    label_noise: float = param(0.0, "fraction of training labels replaced by wrong ones",
                               low=0.0, high=0.9)
    n_evals: int = param(120, "evaluations per run (log- and linearly spaced)", low=10, high=2000)


@dataclass
class PhaseConfig(Config):
    """The phase diagram: a grid of training fractions x weight decays on one task (the
    rest of the recipe comes from :class:`GrokConfig` at the same profile)."""

    model: str = param("mlp", "MLP on one-hot pairs, or the one-layer transformer",
                       choices=("mlp", "transformer"), smoke="mlp", cpu="mlp", gpu="transformer")
    p: int = param(37, "the modulus p", low=5, high=257, smoke=23, cpu=37, gpu=113)
    lr: float = param(1e-2, "learning rate", low=1e-5, high=1.0, log=True, smoke=1e-2,
                      cpu=1e-2, gpu=1e-3)
    width: int = param(128, "MLP hidden width / transformer d_model", low=8, high=1024,
                       smoke=64, cpu=128, gpu=128)
    steps: int = param(1500, "training steps per configuration", low=1, high=200_000,
                       smoke=600, cpu=1500, gpu=20_000)
    train_fracs: list = param([0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "training fractions (rows)",
                              smoke=[0.6, 0.9], cpu=[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
                              gpu=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    weight_decays: list = param([0.0, 0.3, 1.0, 3.0], "weight decays (columns)",
                                smoke=[0.0, 1.0, 4.0], cpu=[0.0, 0.1, 0.3, 1.0, 3.0, 10.0],
                                gpu=[0.0, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0])
    seeds: int = param(1, "seeds per cell", low=1, high=10)
    n_evals: int = param(60, "evaluations per run", low=10, high=2000)

    def base(self, profile: str | None = None) -> "GrokConfig":
        """The :class:`GrokConfig` every cell shares."""
        return GrokConfig.for_profile(profile, model=self.model, p=self.p, lr=self.lr,
                                      width=self.width, steps=self.steps, n_evals=self.n_evals)


def live_phase_config(profile: str | None = None) -> PhaseConfig:
    """The phase diagram a notebook trains live: the smoke grid, or the cpu one on a GPU
    (the precomputed, larger one is :meth:`PhaseConfig.for_profile`)."""
    return PhaseConfig.for_profile("cpu" if get_profile(profile) == "gpu" else "smoke")


@dataclass
class CorruptConfig(Config):
    """Corrupted labels (Doshi et al. 2024): a fraction of the training labels replaced by
    wrong ones, one run per weight decay."""

    noise: float = param(0.1, "fraction of training labels corrupted", low=0.0, high=0.9)
    weight_decays: list = param([1.0, 3.0, 6.0], "weight decays compared", smoke=[3.0, 6.0],
                                cpu=[1.0, 3.0, 6.0], gpu=[0.3, 1.0, 3.0, 6.0])
    steps: int = param(1000, "training steps per run", low=1, high=200_000, smoke=500,
                       cpu=2000, gpu=25_000)


# ============================================================================ data and models


def corrupt_labels(y: torch.Tensor, frac: float, n_classes: int, seed: int = 0):
    """``(y_noisy, corrupted)``: a random ``frac`` of the labels replaced by a *different*
    class drawn uniformly (Doshi et al.'s corrupted algorithmic datasets); ``corrupted`` is
    the boolean mask of the replaced examples."""
    if not 0.0 <= frac < 1.0:
        raise ValueError(f"label noise fraction must lie in [0, 1), got {frac}")
    g = torch.Generator().manual_seed(seed + 7919)
    n = len(y)
    corrupted = torch.zeros(n, dtype=torch.bool)
    corrupted[torch.randperm(n, generator=g)[:int(round(frac * n))]] = True
    shift = torch.randint(1, n_classes, (n,), generator=g)  # never 0: always a wrong label
    noisy = torch.where(corrupted, (y.cpu() + shift) % n_classes, y.cpu())
    return noisy.to(y.device), corrupted.to(y.device)


def make_data(cfg: GrokConfig, seed: int = 0, device=None) -> D.Dataset:
    """The split of ``cfg``'s task (one-hot pairs for the MLP, token pairs for the
    transformer), with ``cfg.label_noise`` of the training labels corrupted; the clean
    labels and the corruption mask go to ``info["y_clean"]`` and ``info["corrupted"]``."""
    data = D.modular_arithmetic(cfg.p, cfg.op, cfg.train_frac, seed=seed,
                                onehot=cfg.model == "mlp", device=device)
    if cfg.label_noise > 0:
        noisy, corrupted = corrupt_labels(data.y_train, cfg.label_noise, cfg.p, seed)
        data.info.update(y_clean=data.y_train, corrupted=corrupted)
        data.y_train = noisy
    return data


def make_model(cfg: GrokConfig, seed: int = 0) -> nn.Module:
    """The MLP (``width`` x ``depth`` ReLU on the 2p-dim one-hot pair) or the one-layer
    transformer (d_model = ``width``, 4 heads, d_mlp = 4 ``width``), seeded."""
    torch.manual_seed(seed)
    if cfg.model == "mlp":
        return M.MLP(2 * cfg.p, cfg.width, cfg.depth, cfg.p)
    if cfg.width % 4:
        raise ValueError(f"the transformer needs width (d_model) divisible by 4, got {cfg.width}")
    return M.Transformer1L(cfg.p, d_model=cfg.width, n_heads=4, d_mlp=4 * cfg.width)


def pair_index(x: torch.Tensor, p: int) -> torch.Tensor:
    """Row index ``a·p + b`` of each input pair (one-hot ``[N, 2p]`` or tokens ``[N, 2]``)."""
    if x.ndim == 2 and x.shape[1] == 2 * p:
        a, b = x[:, :p].argmax(1), x[:, p:].argmax(1)
    elif x.ndim == 2 and x.shape[1] == 2:
        a, b = x[:, 0], x[:, 1]
    else:
        raise ValueError(f"inputs of shape {tuple(x.shape)} are neither one-hot pairs nor "
                         f"tokens mod {p}")
    return a.long() * p + b.long()


def all_pairs(p: int, onehot: bool, device=None) -> torch.Tensor:
    """Every pair ``(a, b)`` in the order ``a·p + b``: one-hot ``[p², 2p]`` or tokens ``[p², 2]``."""
    device = get_device(device)
    a, b = torch.meshgrid(torch.arange(p, device=device), torch.arange(p, device=device),
                          indexing="ij")
    x = torch.stack([a.reshape(-1), b.reshape(-1)], 1)
    if onehot:
        x = torch.cat([F.one_hot(x[:, 0], p), F.one_hot(x[:, 1], p)], 1).float()
    return x


# ============================================================================ the science


def weight_norm(model: nn.Module) -> torch.Tensor:
    """‖θ‖₂ over all parameters (a device scalar). Weight decay shrinks it during the plateau:
    the memorizing solution is expensive in norm, the Fourier one cheap (Nanda et al.;
    Liu et al.'s Omnigrok ties grokking to this norm)."""
    return torch.sqrt(sum(p.detach().float().pow(2).sum() for p in model.parameters()))


def input_weights(model: nn.Module, p: int) -> torch.Tensor:
    """The weights that read the residues, as ``[operands, p, d]``: the MLP's first layer split
    into its ``a`` and ``b`` halves, or the transformer's token embedding (``=`` dropped)."""
    if isinstance(model, M.MLP):
        w = model.hidden[0].weight.detach()  # [width, 2p]
        if w.shape[1] != 2 * p:
            raise ValueError(f"first layer reads {w.shape[1]} inputs, not the 2p = {2 * p} of a pair")
        return w.T.reshape(2, p, -1)
    if isinstance(model, M.Transformer1L):
        return model.embed.weight.detach()[:p][None]
    raise ValueError(f"no residue-reading weights known for {type(model).__name__}")


def fourier_spectrum(weights: torch.Tensor, per_unit: bool = False) -> torch.Tensor:
    """Energy per frequency k = 0..⌊p/2⌋ of weights ``[operands, p, d]`` over the residue axis.

    ``torch.fft.rfft`` along the p residues, |F_k|² summed over the operands (a and b), and
    doubled for the k whose partner p - k is folded away, so that the energies add up to
    p·‖W‖² (Parseval). ``per_unit=False`` sums over the d units too and returns ``[K]``;
    ``per_unit=True`` keeps one spectrum per unit (MLP neuron, embedding dimension), ``[K, d]``.
    A network that computes a + b with cos/sin(2πk(a+b)/p) (the algorithm Nanda et al.
    reverse-engineered) puts each unit's energy on one k: its spectra become sparse."""
    if weights.ndim != 3:
        raise ValueError(f"weights must be [operands, p, d], got shape {tuple(weights.shape)}")
    p = weights.shape[1]
    energy = torch.fft.rfft(weights.float(), dim=1).abs().pow(2).sum(0)  # [K, d]
    paired = torch.ones(energy.shape[0], 1, device=energy.device)
    paired[1:(p + 1) // 2] = 2.0  # k and p - k; k = 0 (and p/2 for even p) stand alone
    energy = energy * paired
    return energy if per_unit else energy.sum(1)


def spectral_concentration(energy: torch.Tensor, top: float = 0.1) -> torch.Tensor:
    """Share of the energy held by the top ``top`` fraction of frequencies (at least one).

    ``energy`` is one spectrum ``[K]`` or one per unit ``[K, d]``; for the latter each unit's
    own top frequencies count, pooled over units with their energies as weights (the share
    of the layer's energy that sits on its units' dominant frequencies, in the spirit of the
    per-neuron inverse participation ratio of Doshi et al.). A flat spectrum gives about
    ``top``; a unit that reads one frequency gives nearly 1."""
    if not 0.0 < top <= 1.0:
        raise ValueError(f"top must lie in (0, 1], got {top}")
    if energy.ndim not in (1, 2) or energy.shape[0] == 0:
        raise ValueError(f"energy must be [K] or [K, d], got shape {tuple(energy.shape)}")
    k = max(1, math.ceil(top * energy.shape[0]))
    top_energy = energy.sort(dim=0, descending=True).values[:k].sum()
    return top_energy / energy.sum().clamp_min(1e-30)


def model_concentration(model: nn.Module, p: int, top: float = 0.1) -> torch.Tensor:
    """:func:`spectral_concentration` of the per-unit spectra of the model's input weights."""
    return spectral_concentration(fourier_spectrum(input_weights(model, p), per_unit=True), top)


def sum_basis(p: int, keys, op: str = "add", device=None) -> torch.Tensor:
    """Orthonormal columns cos/sin(2πk(a ± b)/p) over the ``p²`` pairs (``a·p + b`` order),
    two per key frequency k (``+`` for add, ``-`` for sub): ``[p², 2·len(keys)]``."""
    if op not in FOURIER_OPS:
        raise ValueError(f"Fourier progress measures are defined for {FOURIER_OPS}, not {op!r}")
    keys = [int(k) for k in keys]
    if any(not 1 <= k <= (p - 1) // 2 for k in keys):
        raise ValueError(f"key frequencies must lie in 1..{(p - 1) // 2}, got {keys}")
    device = get_device(device)
    a, b = torch.meshgrid(torch.arange(p, device=device), torch.arange(p, device=device),
                          indexing="ij")
    s = (a + b if op == "add" else a - b).reshape(-1).double()
    cols = []
    for k in keys:
        phase = 2 * math.pi * k * s / p
        cols += [torch.cos(phase), torch.sin(phase)]
    if not cols:
        return torch.zeros(p * p, 0, dtype=torch.float64, device=device)
    q = torch.stack(cols, 1)
    return (q / q.norm(dim=0, keepdim=True)).float()


def logit_frequencies(logits: torch.Tensor, p: int, op: str = "add") -> torch.Tensor:
    """Energy of the logits ``[p², p]`` along cos/sin(2πk(a ± b)/p), for k = 1..(p-1)/2."""
    q = sum_basis(p, range(1, (p - 1) // 2 + 1), op, logits.device)
    coef = q.T @ logits.float()  # [2K, p]
    return coef.pow(2).sum(1).view(-1, 2).sum(1)


def key_frequencies(logits: torch.Tensor, p: int, op: str = "add", share: float = 0.9,
                    max_keys: int | None = None) -> list[int]:
    """The fewest frequencies k whose (a ± b)-components hold ``share`` of the logits'
    periodic energy: the *key frequencies* of a trained network (Nanda et al. found five
    for p = 113). Read them off the final model, then track them over training."""
    energy = logit_frequencies(logits, p, op)
    order = torch.argsort(energy, descending=True)
    cum = torch.cumsum(energy[order], 0) / energy.sum().clamp_min(1e-30)
    n = int((cum < share).sum()) + 1
    n = min(n, max_keys or len(order))
    return sorted(int(k) + 1 for k in order[:n])


@torch.no_grad()
def pair_logits(model: nn.Module, p: int) -> torch.Tensor:
    """The model's logits on all ``p²`` pairs, ``[p², p]`` in ``a·p + b`` order."""
    onehot = isinstance(model, M.MLP)
    device = next(model.parameters()).device
    was = model.training
    model.eval()
    out = model(all_pairs(p, onehot, device))
    model.train(was)
    return out


def fourier_losses(logits: torch.Tensor, labels: torch.Tensor, index: torch.Tensor, keys,
                   p: int, op: str = "add") -> tuple[torch.Tensor, torch.Tensor]:
    """Nanda et al.'s restricted and excluded loss, on the pairs ``index``.

    Project the logits, as functions of the pair (a, b), on the directions cos/sin(2πk(a+b)/p)
    of the key frequencies (``Q Qᵀ L``). *Restricted* logits keep only that part (plus each
    class's mean over the pairs): the Fourier algorithm alone. *Excluded* logits remove it:
    whatever else the network uses, i.e. memorization. During the plateau the restricted
    loss falls (the algorithm forms) and the excluded loss on the *training* pairs rises
    (memorization is being replaced) while the training loss itself stays low.
    Nanda et al. project the MLP activations; the logits are a linear map of them, so
    projecting the logits is the same and works for any model."""
    q = sum_basis(p, keys, op, logits.device)
    logits = logits.float()
    fourier = q @ (q.T @ logits)
    restricted = logits.mean(0, keepdim=True) + fourier
    excluded = logits - fourier
    return (F.cross_entropy(restricted[index], labels[index]),
            F.cross_entropy(excluded[index], labels[index]))


class GrokfastEMA:
    """Grokfast-EMA (Lee et al. 2024), a ``before_step`` hook: keep an exponential moving
    average of each gradient, ``h ← α h + (1-α) g``, and add it back amplified,
    ``g ← g + λ h``. The slow (low-frequency) part of the gradient drives generalization;
    amplifying it shortens the plateau. The paper's defaults: α = 0.98, λ = 2."""

    def __init__(self, alpha: float = 0.98, lamb: float = 2.0):
        if not 0.0 <= alpha < 1.0 or lamb < 0:
            raise ValueError(f"Grokfast needs 0 <= alpha < 1 and lambda >= 0, got {alpha}, {lamb}")
        self.alpha, self.lamb = alpha, lamb
        self.ema: dict[str, torch.Tensor] = {}

    @torch.no_grad()
    def __call__(self, model: nn.Module, step: int) -> None:
        for name, p in model.named_parameters():
            if p.grad is None:
                continue
            h = self.ema.get(name)
            if h is None:
                self.ema[name] = h = p.grad.detach().clone()
            else:
                h.lerp_(p.grad, 1.0 - self.alpha)
            p.grad.add_(h, alpha=self.lamb)


@torch.no_grad()
def orthogonal_grad_(model: nn.Module, step: int | None = None, eps: float = 1e-30) -> None:
    """⊥Grad (Prieto et al. 2025), a ``before_step`` hook: remove from each parameter's
    gradient its component along the parameter, ``g⊥ = g - (g·w / w·w) w``, and rescale
    ``g⊥`` to the norm of ``g``. After memorization the gradient mostly scales the logits up
    along the weights (naïve loss minimization, which ends in softmax collapse); without
    that direction the optimizer must change *what* the network computes."""
    for p in model.parameters():
        if p.grad is None:
            continue
        w, g = p.detach().reshape(-1), p.grad.reshape(-1)
        g_perp = g - (torch.dot(w, g) / (torch.dot(w, w) + eps)) * w
        g.copy_(g_perp * (g.norm() / (g_perp.norm() + eps)))


def stablemax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """StableMax (Prieto et al. 2025): ``s(x) / Σ s(x)`` with ``s(x) = x + 1`` for x ≥ 0 and
    ``1 / (1 - x)`` below: it grows linearly instead of exponentially, so the probabilities
    of a confident network do not round to exactly 0 and 1 (softmax collapse)."""
    s = torch.where(x >= 0, x + 1.0, 1.0 / (1.0 - x.clamp(max=0.0)))
    return s / s.sum(dim, keepdim=True)


def stablemax_cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy with StableMax in place of softmax (mean over the batch)."""
    return F.nll_loss(torch.log(stablemax(logits, -1)), y)


def fit_and_grok(history: History) -> tuple[int | None, int | None]:
    """``(fit step, grok step)``: first evaluations with train accuracy > FIT_ACC and test
    accuracy > GROK_ACC (None when never reached)."""
    return (history.first_step("train_acc", above=FIT_ACC),
            history.first_step("test_acc", above=GROK_ACC))


def phase_of(fit: int | None, grok: int | None, delay: float = DELAY) -> str:
    """The phase of one run (the names of Liu et al.'s phase diagrams): *confusion* (never
    fits), *memorization* (fits, never generalizes), *grokking* (generalizes at least
    ``delay`` x later than it fits), *comprehension* (generalizes about when it fits)."""
    if fit is None:
        return "confusion"
    if grok is None:
        return "memorization"
    return "grokking" if grok >= delay * max(fit, 1) else "comprehension"


# ============================================================================ runners


@dataclass
class GrokRun:
    """One trained run: its config, history, final model and data; ``checkpoints`` holds
    ``(step, state_dict)`` pairs when the run kept them."""

    config: GrokConfig
    history: History
    model: nn.Module
    data: D.Dataset
    seed: int = 0
    checkpoints: list = field(default_factory=list, repr=False)

    @property
    def fit_step(self) -> int | None:
        return fit_and_grok(self.history)[0]

    @property
    def grok_step(self) -> int | None:
        return fit_and_grok(self.history)[1]

    @property
    def phase(self) -> str:
        return phase_of(*fit_and_grok(self.history))

    def describe(self) -> str:
        """One line: fit and grok steps, phase, final test accuracy (or the divergence)."""
        return f"{_status(self)}; test accuracy {self.history.last('test_acc'):.1%}"

    def summary(self) -> dict:
        h = self.history
        fit, grok = fit_and_grok(h)
        return dict(fit_step=fit, grok_step=grok, phase=phase_of(fit, grok),
                    final_train_acc=h.last("train_acc"), final_test_acc=h.last("test_acc"),
                    status=h.status, wall_time=round(h.wall_time, 2))


def eval_schedule(steps: int, n: int = 120) -> list[int]:
    """Evaluation steps: half log-spaced (the memorization phase is early), half linear."""
    lin = range(0, steps + 1, max(1, steps // max(1, n // 2)))
    return sorted(set(log_steps(steps, n // 2)) | set(lin) | {0, steps})


def _loss_and_hook(cfg: GrokConfig):
    loss = stablemax_cross_entropy if cfg.remedy == "stablemax" else "cross_entropy"
    if cfg.remedy == "grokfast":
        return loss, GrokfastEMA(cfg.grokfast_alpha, cfg.grokfast_lambda)
    if cfg.remedy == "perp_grad":
        return loss, orthogonal_grad_
    return loss, None


def _optimizer(cfg: GrokConfig, model: nn.Module):
    betas = (0.9, cfg.beta2)
    if cfg.optimizer == "muon":  # Muon on hidden matrices, AdamW (same lr) on the rest
        return make_optimizer(model, "muon", cfg.lr, cfg.weight_decay, betas=betas, adam_lr=cfg.lr)
    return make_optimizer(model, "adamw", cfg.lr, cfg.weight_decay, betas=betas)


def run(cfg: GrokConfig, seed: int = 0, *, data: D.Dataset | None = None,
        stop_at_grok: bool = False, checkpoints: bool = False, callbacks=(),
        progress: bool | None = None) -> GrokRun:
    """Train one model on ``cfg``'s task, full batch, and record train/test loss and accuracy,
    ``weight_norm`` and ``fourier_top10`` (:func:`spectral_concentration` of the input
    weights) at :func:`eval_schedule` steps; with corrupted labels also the accuracy on the
    corrupted examples (``memorized``: their wrong label; ``corrected``: their true label).
    ``stop_at_grok`` ends the run at the first evaluation past GROK_ACC test accuracy;
    ``checkpoints`` keeps the parameters at every evaluation (for :func:`progress_measures`)."""
    data = data if data is not None else make_data(cfg, seed)
    model = make_model(cfg, seed).to(data.device)
    loss, hook = _loss_and_hook(cfg)
    metrics = dict(weight_norm=lambda m, d: weight_norm(m),
                   fourier_top10=lambda m, d: model_concentration(m, cfg.p))
    if "corrupted" in data.info:
        bad = data.info["corrupted"]
        clean = data.info["y_clean"]

        def on_corrupted(labels):
            def metric(m, d):
                with torch.no_grad():
                    return (m(d.x_train[bad]).argmax(1) == labels[bad]).float().mean()
            return metric

        metrics.update(memorized=on_corrupted(data.y_train), corrected=on_corrupted(clean))
    kept = []
    cbs = list(callbacks)
    if checkpoints:  # train() calls its callbacks at every evaluation, step 0 included
        cbs.insert(0, lambda step, h, m: kept.append((step, _state(m))) and False)
    if stop_at_grok:
        cbs.append(lambda step, h, m: h.last("test_acc") > GROK_ACC)
    h = train(model, data, steps=cfg.steps, optimizer=_optimizer(cfg, model), loss=loss,
              eval_steps=eval_schedule(cfg.steps, cfg.n_evals), metrics=metrics, callbacks=cbs,
              before_step=hook, seed=seed, progress=progress, desc=f"{cfg.op} mod {cfg.p}")
    return GrokRun(cfg, h, model, data, seed, kept)


def _state(model: nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _spectra(units: torch.Tensor, n_units: int = 48) -> dict:
    """Spectra for the figures: the layer's (share of energy per frequency), up to ``n_units``
    of the strongest units' normalized spectra (sorted by their dominant frequency), and the
    per-unit and whole-layer concentrations."""
    layer = units.sum(1)
    strongest = torch.argsort(units.sum(0), descending=True)[:n_units]
    shown = units[:, strongest]
    shown = shown / shown.sum(0, keepdim=True).clamp_min(1e-30)
    order = torch.argsort(shown.argmax(0), stable=True)
    return dict(layer=(layer / layer.sum()).tolist(), units=shown[:, order].T.tolist(),
                concentration=float(spectral_concentration(units)),
                layer_concentration=float(spectral_concentration(layer)))


def progress_measures(result: GrokRun, keys=None) -> dict:
    """Restricted and excluded loss (:func:`fourier_losses`, on the training pairs, against the
    true labels), weight norm and Fourier concentration at every kept checkpoint, with the key
    frequencies read off the final model; plus the input-weight spectrum at the fit step and
    at the end. Needs a run made with ``checkpoints=True`` on ``add`` or ``sub``."""
    cfg = result.config
    if not result.checkpoints:
        raise ValueError("progress_measures needs a run made with checkpoints=True")
    if cfg.op not in FOURIER_OPS:
        raise ValueError(f"restricted/excluded loss are defined for {FOURIER_OPS}, not {cfg.op!r}")
    p = cfg.p
    model = make_model(cfg).to(result.data.device)
    d = result.data
    labels = D.OPERATIONS[cfg.op](*torch.meshgrid(torch.arange(p), torch.arange(p),
                                                  indexing="ij"), p).reshape(-1).to(d.device)
    index = pair_index(d.x_train, p)
    if keys is None:
        keys = key_frequencies(pair_logits(result.model, p), p, cfg.op, max_keys=8)
    out = dict(step=[], restricted_loss=[], excluded_loss=[], weight_norm=[], fourier_top10=[])
    spectra = {}
    fit = result.fit_step
    for step, state in result.checkpoints:
        model.load_state_dict(state)
        r, e = fourier_losses(pair_logits(model, p), labels, index, keys, p, cfg.op)
        units = fourier_spectrum(input_weights(model, p), per_unit=True)
        out["step"].append(step)
        out["restricted_loss"].append(float(r))
        out["excluded_loss"].append(float(e))
        out["weight_norm"].append(float(weight_norm(model)))
        out["fourier_top10"].append(float(spectral_concentration(units)))
        if step == fit:
            spectra["fit"] = _spectra(units)
    spectra["end"] = _spectra(fourier_spectrum(input_weights(result.model, p), per_unit=True))
    h = result.history
    out.update(keys=list(keys), spectra=spectra, fit_step=fit, grok_step=result.grok_step,
               train_loss=list(h["train_loss"]), test_loss=list(h["test_loss"]),
               history_steps=list(h.steps))
    return out


# ---------------------------------------------------------------------------- remedies

REMEDY_LABELS = {
    "baseline": "AdamW (baseline)",
    "strong_wd": "3x weight decay",
    "grokfast": "Grokfast-EMA",
    "perp_grad": "⊥Grad, no wd",
    "stablemax": "StableMax, no wd",
    "muon": "Muon",
    "no_wd": "no weight decay",
}
DEFAULT_REMEDIES = ("baseline", "strong_wd", "grokfast", "perp_grad", "stablemax", "no_wd")


def remedy_names(profile: str | None = None) -> tuple:
    """The remedies a notebook compares: all of them, except StableMax in the smoke profile
    (without weight decay it does not grok within any budget we can afford there)."""
    if get_profile(profile) == "smoke":
        return tuple(n for n in DEFAULT_REMEDIES if n != "stablemax")
    return DEFAULT_REMEDIES


def remedy_configs(cfg: GrokConfig) -> dict[str, GrokConfig]:
    """The variants compared in the chapter, all on ``cfg``'s task, learning rate and budget:
    the baseline; 3x its weight decay; Grokfast-EMA (α 0.98, λ 2) on top of it; ⊥Grad and
    StableMax *without* weight decay (Prieto et al.'s claim is that each makes weight decay
    unnecessary); Muon; and the control without weight decay or any remedy."""
    return dict(
        baseline=cfg,
        strong_wd=cfg.replace(weight_decay=min(10.0, 3 * cfg.weight_decay)),
        grokfast=cfg.replace(remedy="grokfast"),
        perp_grad=cfg.replace(remedy="perp_grad", weight_decay=0.0),
        stablemax=cfg.replace(remedy="stablemax", weight_decay=0.0),
        muon=cfg.replace(optimizer="muon"),
        no_wd=cfg.replace(weight_decay=0.0),
    )


def run_remedies(cfg: GrokConfig, seeds=(0,), names=None, reuse=(), progress=None) -> list[dict]:
    """Steps to grok (test accuracy > GROK_ACC) for each of :func:`remedy_configs` on each
    seed; runs stop once they grok. ``reuse`` takes runs already made (same config and seed,
    e.g. the baseline and the control of the first experiment) instead of training them again.
    Rows: name, seed, fit_step, grok_step, phase, final accuracies, status, wall_time."""
    variants = remedy_configs(cfg)
    names = list(names or DEFAULT_REMEDIES)
    unknown = set(names) - set(variants)
    if unknown:
        raise ValueError(f"unknown remedies {sorted(unknown)}; choose from {list(variants)}")
    rows = []
    for seed in seeds:
        data = make_data(cfg, seed)
        for name in names:
            done = [r for r in reuse if r.seed == seed and r.config == variants[name]]
            r = done[0] if done else run(variants[name], seed, data=data, stop_at_grok=True,
                                         progress=progress)
            rows.append(dict(name=name, seed=seed, **r.summary()))
    return rows


def speedups(rows: list[dict], budget: int) -> dict[str, dict]:
    """Per remedy: median steps to grok over seeds (runs that never grok count as the
    ``budget``), and the speed-up over the baseline (baseline steps / remedy steps)."""
    by: dict[str, list] = {}
    for r in rows:
        by.setdefault(r["name"], []).append(r["grok_step"] if r["grok_step"] is not None else None)
    out = {}
    base = None
    for name, steps in by.items():
        filled = [budget if s is None else s for s in steps]
        med = float(np.median(filled))
        out[name] = dict(steps=med, grokked=sum(s is not None for s in steps), runs=len(steps))
        if name == "baseline":
            base = med
    for name, v in out.items():
        v["speedup"] = (base / v["steps"]) if base else float("nan")
    return out


def remedy_table(rows: list[dict]) -> list[dict]:
    """The rows of :func:`run_remedies` for a table: remedy, fit and grok steps, phase, final
    test accuracy."""
    return [dict(remedy=REMEDY_LABELS.get(r["name"], r["name"]), seed=r["seed"],
                 fit_step=r["fit_step"], grok_step=r["grok_step"] or "never", phase=r["phase"],
                 test_acc=f"{r['final_test_acc']:.1%}") for r in rows]


# ---------------------------------------------------------------------------- corrupted labels


def run_corrupted(cfg: GrokConfig, cc: CorruptConfig | None = None, seed: int = 0,
                  progress=None) -> dict:
    """Doshi et al.'s setting: ``cc.noise`` of the training labels corrupted (the same ones in
    every run), one run of ``cc.steps`` per weight decay in ``cc.weight_decays``. Returns per
    weight decay the curves of test accuracy and, on the corrupted training examples, of the
    accuracy w.r.t. their wrong label (``memorized``) and their true label (``corrected``),
    and the final values."""
    cc = cc or CorruptConfig()
    noisy = cfg.replace(label_noise=cc.noise, steps=cc.steps)
    data = make_data(noisy, seed)
    out = dict(noise=cc.noise, weight_decays=list(cc.weight_decays), runs=[])
    for wd in cc.weight_decays:
        r = run(noisy.replace(weight_decay=float(wd)), seed, data=data, progress=progress)
        h = r.history
        out["runs"].append(dict(weight_decay=wd, steps=list(h.steps), test_acc=list(h["test_acc"]),
                                train_acc=list(h["train_acc"]), memorized=list(h["memorized"]),
                                corrected=list(h["corrected"]), final_test_acc=h.last("test_acc"),
                                final_memorized=h.last("memorized"),
                                final_corrected=h.last("corrected"), status=h.status))
    return out


def corrupted_table(out: dict) -> list[dict]:
    """Final values of :func:`run_corrupted`, one row per weight decay."""
    return [dict(weight_decay=r["weight_decay"], test_acc=f"{r['final_test_acc']:.1%}",
                 memorized=f"{r['final_memorized']:.1%}", corrected=f"{r['final_corrected']:.1%}",
                 status=r["status"]) for r in out["runs"]]


# ---------------------------------------------------------------------------- phase diagram


def pair_pool(cfg: GrokConfig, device=None) -> tuple[D.Dataset, torch.Tensor]:
    """All pairs of ``cfg``'s task as one pool (train = test = every pair, in ``a·p + b``
    order, div without b = 0) and their pair indices; configurations then pick their own
    training rows with a mask."""
    d = D.modular_arithmetic(cfg.p, cfg.op, 0.5, seed=0, onehot=cfg.model == "mlp", device=device)
    x = torch.cat([d.x_train, d.x_test])
    y = torch.cat([d.y_train, d.y_test])
    idx = pair_index(x, cfg.p)
    order = torch.argsort(idx)
    x, y, idx = x[order], y[order], idx[order]
    return D.Dataset(x, y, x, y, cfg.p, d.name, dict(d.info, pool=True)), idx


def split_mask(cfg: GrokConfig, pool_index: torch.Tensor, train_frac: float, seed: int) -> torch.Tensor:
    """The pool rows of the training split that :func:`make_data` would draw for
    ``train_frac`` and ``seed`` (the very same pairs), as a bool mask."""
    d = D.modular_arithmetic(cfg.p, cfg.op, train_frac, seed=seed, onehot=cfg.model == "mlp",
                             device=pool_index.device)
    chosen = torch.zeros(cfg.p * cfg.p, dtype=torch.bool, device=pool_index.device)
    chosen[pair_index(d.x_train, cfg.p)] = True
    return chosen[pool_index]


def phase_diagram(cfg: GrokConfig, train_fracs, weight_decays, seeds=(0,), steps: int | None = None,
                  progress=None) -> dict:
    """Steps to fit and to generalize over training fraction x weight decay: one model per
    (fraction, weight decay, seed), trained by :func:`dynamics.sweep.train_many` on the pool of
    all pairs (``train_mask`` = the configuration's split, ``test_mask`` = the rest); one
    batched call per fraction, so that every model in a call has as many rows (no padding).
    Returns the table rows (with ``fit_step``, ``grok_step``, ``phase``), the merged
    :class:`~dynamics.sweep.SweepResult` (for a slider over training time) and ``steps``."""
    from .sweep import SweepResult, grid, train_many

    if cfg.optimizer != "adamw" or cfg.remedy != "none" or cfg.label_noise:
        raise ValueError("the phase diagram sweeps plain AdamW runs (no remedy, clean labels)")
    train_fracs, weight_decays, seeds = list(train_fracs), list(weight_decays), list(seeds)
    if not train_fracs or not weight_decays or not seeds:
        raise ValueError("the phase diagram needs at least one training fraction, weight decay and seed")
    steps = steps or cfg.steps
    pool, index = pair_pool(cfg)
    configs, histories, states, start = [], [], [], time.perf_counter()
    for frac in train_fracs:
        cells = grid(train_frac=[float(frac)], weight_decay=[float(w) for w in weight_decays],
                     seed=[int(s) for s in seeds])
        masks = torch.stack([split_mask(cfg, index, c["train_frac"], c["seed"]) for c in cells])
        part = train_many(lambda c: make_model(cfg, c["seed"]), pool, cells, steps=steps,
                          optimizer="adamw", lr=cfg.lr, betas=(0.9, cfg.beta2),
                          eval_steps=eval_schedule(steps, cfg.n_evals), train_mask=masks,
                          test_mask=~masks, progress=progress)
        configs += part.configs
        histories += part.histories
        states += part.states
    sweep = SweepResult(configs, histories, states,
                        info=dict(steps=steps, wall_time=time.perf_counter() - start))
    rows = sweep.table(thresholds={"train_acc": ("above", FIT_ACC), "test_acc": ("above", GROK_ACC)})
    for row in rows:
        row["fit_step"], row["grok_step"] = row.pop("steps_to_train_acc"), row.pop("steps_to_test_acc")
        row["phase"] = phase_of(row["fit_step"], row["grok_step"])
    return dict(rows=rows, sweep=sweep, steps=steps)


def run_phase(pcfg: "PhaseConfig", profile: str | None = None, progress=None) -> dict:
    """:func:`phase_diagram` for a :class:`PhaseConfig`."""
    return phase_diagram(pcfg.base(profile), pcfg.train_fracs, pcfg.weight_decays,
                         seeds=range(pcfg.seeds), steps=pcfg.steps, progress=progress)


# ============================================================================ figures


def _histories(runs) -> dict:
    if isinstance(runs, (GrokRun, History)):
        runs = {"": runs}
    return {name: (r.history if isinstance(r, GrokRun) else r) for name, r in runs.items()}


def training_figure(runs, title: str = "", marks: bool = True):
    """Train (solid) and test (dashed) accuracy, and loss, against step on a log axis, for
    one run or a dict of runs; the first run's fit and grok steps marked."""
    from plotly.subplots import make_subplots

    hs = _histories(runs)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("accuracy", "loss"),
                        horizontal_spacing=0.1)
    fig.update_layout(template=plots.figure().layout.template, height=plots.HEIGHT, title=title,
                      hovermode="x unified")
    for i, (name, h) in enumerate(hs.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        steps = np.maximum(np.asarray(h.steps, dtype=float), 1)
        for j, split in enumerate(("train", "test")):
            label = " · ".join(x for x in (name, split) if x) + (" (diverged)" if h.diverged else "")
            line = dict(color=color, dash="solid" if split == "train" else "dash")
            fig.add_scatter(x=steps, y=h[f"{split}_acc"], name=label, line=line,
                            legendgroup=label, row=1, col=1)
            fig.add_scatter(x=steps, y=h[f"{split}_loss"], name=label, line=line,
                            legendgroup=label, showlegend=False, row=1, col=2)
    fig.update_xaxes(type="log", title_text="step")
    fig.update_yaxes(range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    if marks and hs:
        _mark_steps(fig, *fit_and_grok(next(iter(hs.values()))))
    return fig


def _mark_steps(fig, fit: int | None, grok: int | None) -> None:
    """Dotted vertical lines at the fit and grok steps on log-x axes, labelled once above the
    plot (lines take data coordinates, annotations on a log axis take log10 coordinates)."""
    for step, label in ((fit, "fit"), (grok, "grok")):
        if step:
            fig.add_vline(x=step, line=dict(color="#555", dash="dot", width=1))
            fig.add_annotation(x=math.log10(step), y=0.0, xref="x", yref="paper",
                               text=f"{label} {step}", showarrow=False, xanchor="left",
                               yanchor="bottom", xshift=3, font=dict(size=11, color="#555"))


def spectrum_figure(spectra: dict, p: int, title: str = ""):
    """Left: the input layer's Fourier energy per frequency at the fit step and at the end.
    Right: the strongest units' own spectra at the end (one row each, sorted by their
    dominant frequency): each unit reads about one frequency."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.12,
                        subplot_titles=("whole layer: share of energy per frequency",
                                        "units at the end: their own spectra"))
    fig.update_layout(template=plots.figure().layout.template, height=plots.HEIGHT, title=title,
                      hovermode="closest", barmode="group")
    k = list(range(p // 2 + 1))
    for i, (when, label) in enumerate((("fit", "at the fit step"), ("end", "after grokking"))):
        if when in spectra:
            sp = spectra[when]
            fig.add_bar(x=k, y=sp["layer"], marker_color=plots.PALETTE[i],
                        name=f"{label} (units' top-10% share {sp['concentration']:.2f})",
                        row=1, col=1)
    if "end" in spectra:
        fig.add_heatmap(z=spectra["end"]["units"], x=k, colorscale="Viridis", showscale=False,
                        hovertemplate="frequency %{x}<br>unit %{y}<br>share %{z:.2f}<extra></extra>",
                        row=1, col=2)
    fig.update_xaxes(title_text="frequency k")
    fig.update_yaxes(title_text="share of energy", row=1, col=1)
    fig.update_yaxes(title_text="unit", row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", y=-0.2))
    return fig


def progress_figure(pm: dict, title: str = ""):
    """The plateau is not idle: train/test loss with the restricted and excluded loss (top),
    the total weight norm (middle) and the Fourier concentration of the input layer
    (bottom), against step on a log axis, fit and grok steps marked."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=("loss (train pairs unless marked)", "weight norm ‖θ‖",
                                        "Fourier concentration (top-10% share)"))
    fig.update_layout(template=plots.figure().layout.template, height=720, title=title,
                      hovermode="x unified")
    hs = np.maximum(np.asarray(pm["history_steps"], dtype=float), 1)
    cs = np.maximum(np.asarray(pm["step"], dtype=float), 1)
    P = plots.PALETTE
    fig.add_scatter(x=hs, y=pm["train_loss"], name="train loss", line=dict(color=P[0]), row=1, col=1)
    fig.add_scatter(x=hs, y=pm["test_loss"], name="test loss (test pairs)",
                    line=dict(color=P[0], dash="dash"), row=1, col=1)
    keys = ", ".join(map(str, pm["keys"]))
    fig.add_scatter(x=cs, y=pm["restricted_loss"], name=f"restricted loss (k = {keys})",
                    line=dict(color=P[3]), row=1, col=1)
    fig.add_scatter(x=cs, y=pm["excluded_loss"], name="excluded loss", line=dict(color=P[1]),
                    row=1, col=1)
    fig.add_scatter(x=cs, y=pm["weight_norm"], name="weight norm", line=dict(color=P[4]),
                    row=2, col=1)
    fig.add_scatter(x=cs, y=pm["fourier_top10"], name="Fourier concentration",
                    line=dict(color=P[2]), row=3, col=1)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=3, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=3, col=1)
    _mark_steps(fig, pm.get("fit_step"), pm.get("grok_step"))
    return fig


def phase_figure(rows: list[dict], title: str = "", budget: int | None = None):
    """The phase diagram: steps to generalize (colour, log scale; blank = never within the
    budget) over weight decay (x) and training fraction (y); each cell names its phase."""
    from .sweep import table_grid

    z, xs, ys = table_grid(rows, "grok_step", "weight_decay", "train_frac", reduce="median")
    phase_rows = {(r["weight_decay"], r["train_frac"]): r["phase"] for r in rows}
    text = [[f"{phase_rows.get((x, y), '')}<br>{'' if np.isnan(v) else int(v)}"
             for x, v in zip(xs, zrow)] for y, zrow in zip(ys, z)]
    with np.errstate(divide="ignore", invalid="ignore"):
        logz = np.log10(z)
    title = title or "steps to generalize (test accuracy > 95%)"
    if budget:
        title += f"; blank: not within {budget} steps"
    fig = plots.heatmap(logz, [f"{x:g}" for x in xs], [f"{y:g}" for y in ys], title=title,
                        xtitle="weight decay", ytitle="training fraction",
                        ztitle="log10 steps", text_fmt=None, colorscale="Viridis_r")
    fig.data[0].update(text=text, texttemplate="%{text}", textfont=dict(size=10),
                       hovertemplate="wd=%{x}<br>train frac=%{y}<br>%{text}<extra></extra>")
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


def phase_slider(sweep, title: str = "test accuracy over training"):
    """Test accuracy over (weight decay, training fraction), with a slider over training
    time: the static counterpart of re-running the sweep (:meth:`SweepResult.slider_over_time`)."""
    from .sweep import SweepResult

    if isinstance(sweep, dict):
        sweep = SweepResult.from_dict(sweep)
    return sweep.slider_over_time("test_acc", x="weight_decay", y="train_frac", n=12,
                                  title=title, zmin=0.0, zmax=1.0, text_fmt=".2f",
                                  xtitle="weight decay", ytitle="training fraction")


def remedies_figure(speed: dict, title: str = ""):
    """Speed-up of each remedy in steps to grok over the baseline (bars; above 1 = faster);
    a run that never groks within the budget shows as 0."""
    names = [n for n in speed if n != "baseline"]
    values = [speed[n]["speedup"] if speed[n]["grokked"] else 0.0 for n in names]
    labels = [REMEDY_LABELS.get(n, n) for n in names]
    fig = plots.bars(labels, values, title=title or "speed-up in steps to grok over the baseline",
                     ytitle="baseline steps / remedy steps", text_fmt="{:.2f}x")
    fig.data[0].text = [f"{v:.2f}x" if speed[n]["grokked"] else "no grok"
                        for n, v in zip(names, values)]
    fig.add_hline(y=1.0, line=dict(color="#555", dash="dot", width=1))
    return fig


def corrupted_figure(out: dict, title: str = ""):
    """Corrupted labels: per weight decay, test accuracy (solid) and, on the corrupted training
    examples, the share predicted with their wrong label (memorized, dashed) or their true
    label (corrected, dotted)."""
    fig = plots.figure(title or f"{out['noise']:.0%} of the training labels corrupted", "step",
                       "accuracy", logx=True)
    for i, r in enumerate(out["runs"]):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        steps = np.maximum(np.asarray(r["steps"], dtype=float), 1)
        wd = f"wd {r['weight_decay']:g}"
        for key, dash in (("test_acc", "solid"), ("memorized", "dash"), ("corrected", "dot")):
            fig.add_scatter(x=steps, y=r[key], name=f"{wd} · {key}", mode="lines",
                            line=dict(color=color, dash=dash))
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def curves_slider(sweep, train_frac: float, title: str = ""):
    """Training curves of the phase-diagram runs at one training fraction, with a slider over
    weight decay: the static counterpart of the live panel."""
    from .sweep import SweepResult

    if isinstance(sweep, dict):
        sweep = SweepResult.from_dict(sweep)
    picked = [(c, h) for c, h in sweep if math.isclose(c["train_frac"], train_frac)
              and c.get("seed", 0) == 0]
    if not picked:
        raise ValueError(f"no runs at training fraction {train_frac}")
    figs = [training_figure(h, title=f"{title}weight decay {c['weight_decay']:g}") for c, h in picked]
    labels = [f"{c['weight_decay']:g}" for c, _ in picked]
    active = next((i for i, (c, _) in enumerate(picked) if c["weight_decay"] == 1.0), len(picked) - 1)
    return plots.slider(figs, labels, name="weight decay", active=active)


# ============================================================================ live panel


def _status(r: GrokRun) -> str:
    if r.history.diverged:
        return r.history.status
    fit, grok = fit_and_grok(r.history)
    fitted = f"fit at step {fit}" if fit is not None else "never fit"
    general = f"generalized at step {grok}" if grok is not None else "never generalized"
    return f"{fitted}, {general} ({phase_of(fit, grok)})"


def _title(cfg: GrokConfig) -> str:
    extra = "" if cfg.remedy == "none" else f", {cfg.remedy}"
    noise = f", {cfg.label_noise:.0%} labels corrupted" if cfg.label_noise else ""
    return (f"{cfg.op} mod {cfg.p}, {cfg.train_frac:.0%} train, {cfg.optimizer} lr {cfg.lr:.2g}, "
            f"wd {cfg.weight_decay:g}{extra}{noise}")


def _run_panel(base: GrokConfig, names, seed, progress_view: bool = False, title: str = ""):
    """A live panel over some :class:`GrokConfig` fields: train one run, redraw while it
    trains, and show the training curves (or, with ``progress_view``, the progress measures)."""
    from . import widgets as W

    controls = []
    for name in names:
        if name == "p":  # capped below the config's range: a live run must stay short
            controls.append(W.Slider("p", 5, 127, value=base.p, integer=True, description="p"))
        else:
            controls += W.controls_for(base, [name])

    def go(update, **values):
        cfg = base.replace(**values)
        if progress_view and cfg.op not in FOURIER_OPS:
            raise ValueError(f"the Fourier progress measures need op in {FOURIER_OPS}")
        live = update.every(lambda h: training_figure(h, title=_title(cfg), marks=False),
                            total_steps=cfg.steps)
        r = run(cfg, seed, callbacks=[live], checkpoints=progress_view, progress=False)
        update(status=_status(r))
        if progress_view and not r.history.diverged:
            return progress_figure(progress_measures(r), title=_title(cfg))
        return training_figure(r, title=_title(cfg))

    note = (f"{base.steps} full-batch steps; fit = train accuracy > {FIT_ACC:.0%}, "
            f"generalize = test accuracy > {GROK_ACC:.0%}.")
    return W.Panel(go, controls, title=title, note=note)


def panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your p, operation, training fraction, weight decay, learning
    rate, width and optimizer (AdamW or Muon); the curves redraw while it trains."""
    from .runtime import get_seed

    return _run_panel(GrokConfig.for_profile(profile), ["p", "op", "train_frac", "weight_decay",
                      "lr", "width", "optimizer"], get_seed(seed), title="Try it: grokking live")


def progress_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the progress measures of one run (modular addition or subtraction)."""
    from .runtime import get_seed

    return _run_panel(GrokConfig.for_profile(profile), ["p", "op", "train_frac", "weight_decay",
                      "lr"], get_seed(seed), progress_view=True,
                      title="Try it: progress measures live (op: add or sub)")


def remedy_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with a remedy (Grokfast, ⊥Grad, StableMax), weight decay, optimizer
    and label noise of your choice."""
    from .runtime import get_seed

    return _run_panel(GrokConfig.for_profile(profile), ["remedy", "weight_decay",
                      "grokfast_alpha", "grokfast_lambda", "label_noise", "optimizer"],
                      get_seed(seed), title="Try it: remedies live")


def phase_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small phase diagram (training fraction x weight decay) with your p,
    learning rate, width and budget, trained at once by the sweep engine."""
    from . import widgets as W
    from .runtime import get_seed

    base = live_phase_config(profile)
    seed = get_seed(seed)
    controls = [W.Slider("p", 5, 61, value=base.p, integer=True, description="p")]
    controls += W.controls_for(base, ["lr", "width"])
    controls.append(W.Slider("steps", 100, 5000, value=base.steps, integer=True, step=100,
                             description="steps"))

    def go(update, **values):
        pcfg = base.replace(**values)
        update(status=f"training {len(pcfg.train_fracs) * len(pcfg.weight_decays)} models at once…")
        out = phase_diagram(pcfg.base(profile), pcfg.train_fracs, pcfg.weight_decays,
                            seeds=[seed], steps=pcfg.steps, progress=False)
        diverged = sum(r["diverged"] for r in out["rows"])
        update(status=f"done; {diverged} diverged" if diverged else "done")
        return phase_figure(out["rows"], budget=pcfg.steps)

    return W.Panel(go, controls, title="Try it: a phase diagram live",
                   note=f"training fractions {base.train_fracs} x weight decays {base.weight_decays}")


# ============================================================================ claims


def _fmt(step) -> str:
    return "never" if step is None else f"at step {step}"


def claims(first: GrokRun, control: GrokRun, pm: dict, speed: dict, corrupted: dict,
           phase_rows: list[dict]) -> list[dict]:
    """The papers' claims beside what this run of the notebook measured (a table)."""
    fit, grok = first.fit_step, first.grok_step
    ratio = f"{grok / fit:.0f}x" if fit and grok else "n/a"
    i_fit = pm["step"].index(fit) if fit in pm["step"] else 0
    i_grok = pm["step"].index(grok) if grok in pm["step"] else len(pm["step"]) - 1
    conc = pm["fourier_top10"]
    test_loss = dict(zip(pm["history_steps"], pm["test_loss"]))
    test_loss = [test_loss[s] for s in pm["step"]]
    low, high = corrupted["runs"][0], corrupted["runs"][-1]
    gen = [r for r in phase_rows if r["phase"] in ("grokking", "comprehension")]
    smallest = min((r["train_frac"] for r in gen), default=None)
    fracs = sorted({r["train_frac"] for r in phase_rows})
    rows = [
        dict(claim="Test accuracy jumps to ~100% long after training accuracy does (grokking)",
             paper="Power et al. 2022",
             measured=f"train > {FIT_ACC:.0%} {_fmt(fit)}, test > {GROK_ACC:.0%} "
                      f"{_fmt(grok)} ({ratio} later); final test accuracy "
                      f"{first.history.last('test_acc'):.1%}"),
        dict(claim="Weight decay is what makes the memorizing network generalize",
             paper="Nanda et al. 2023; Liu et al. 2023; Tian 2025",
             measured=f"same budget without weight decay: final test accuracy "
                      f"{control.history.last('test_acc'):.1%} (test > {GROK_ACC:.0%}: "
                      f"{_fmt(control.grok_step)})"),
        dict(claim="During the plateau the weight norm falls and a few Fourier frequencies take over",
             paper="Nanda et al. 2023",
             measured=f"weight norm {pm['weight_norm'][i_fit]:.1f} → {pm['weight_norm'][-1]:.1f}; "
                      f"top-10% frequency share {conc[i_fit]:.2f} at fit → {conc[-1]:.2f} at the end; "
                      f"key frequencies {pm['keys']}"),
        dict(claim="Restricted loss falls before the test loss does; excluded loss rises",
             paper="Nanda et al. 2023",
             measured=f"from the fit step to the grok step: restricted loss "
                      f"{pm['restricted_loss'][i_fit]:.2f} → {pm['restricted_loss'][i_grok]:.2f}, "
                      f"test loss {test_loss[i_fit]:.2f} → {test_loss[i_grok]:.2f}; excluded loss "
                      f"{pm['excluded_loss'][i_fit]:.2f} → {pm['excluded_loss'][-1]:.2f} at the end"),
    ]

    def measured(name: str) -> str:
        v = speed[name]
        if not v["grokked"]:
            return f"did not grok within {v['steps']:.0f} steps"
        return (f"grokked at step {v['steps']:.0f} vs {speed['baseline']['steps']:.0f}: "
                f"{v['speedup']:.2f}x the baseline's speed")

    remedy_claims = [
        ("strong_wd", "More weight decay, faster grokking (3x here)", "Liu et al. 2023; Tian 2025"),
        ("grokfast", "Grokfast-EMA (α 0.98, λ 2) groks up to ~50x faster", "Lee et al. 2024"),
        ("perp_grad", "⊥Grad groks without weight decay", "Prieto et al. 2025"),
        ("stablemax", "StableMax groks without weight decay", "Prieto et al. 2025"),
    ]
    rows += [dict(claim=claim, paper=paper, measured=measured(name))
             for name, claim, paper in remedy_claims if name in speed and "baseline" in speed]
    rows += [
        dict(claim="A network can memorize corrupted labels and still generalize; "
                   "weight decay makes it ignore the corruption",
             paper="Doshi et al. 2024",
             measured=f"{corrupted['noise']:.0%} corrupted; wd {low['weight_decay']:g}: memorized "
                      f"{low['final_memorized']:.0%}, test {low['final_test_acc']:.0%}; wd "
                      f"{high['weight_decay']:g}: memorized {high['final_memorized']:.0%}, corrected "
                      f"{high['final_corrected']:.0%}, test {high['final_test_acc']:.0%}"),
        dict(claim="Below a critical training fraction the network only memorizes",
             paper="Power et al. 2022; Liu et al. 2023",
             measured=f"live grid over fractions {fracs}: " + (
                 "none generalized" if smallest is None else
                 f"the smallest that generalized is {smallest:.0%}; below it, memorization")),
    ]
    return rows


# ============================================================================ precompute, bench


def precompute(profile: str) -> list:
    """``python -m dynamics.precompute grokking --profile P``: the phase diagram (table rows and
    every run's history, for the heatmap, the slider over time and the curves slider)."""
    profile = get_profile(profile)
    pcfg = PhaseConfig.for_profile(profile)
    start, cpu = time.perf_counter(), time.process_time()
    out = run_phase(pcfg, profile, progress=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    scale = {"gpu": "paper-scale settings", "cpu": "the largest grid a 2-core CPU runs in a few minutes",
             "smoke": "a tiny grid for tests"}[profile]
    path = results.save(
        "grokking_phase",
        _rounded(dict(rows=out["rows"], sweep=out["sweep"].to_dict(), steps=out["steps"])),
        profile=profile, config=dict(phase=pcfg.to_dict(), base=pcfg.base(profile).to_dict()),
        command=f"python -m dynamics.precompute grokking --profile {profile}",
        note=f"p = {pcfg.p}, {len(out['rows'])} runs of {pcfg.steps} steps ({cpu:.0f} s of CPU "
             f"time): {scale}.",
        wall_time=wall)
    return [path]


def _rounded(obj, digits: int = 5):
    """Floats rounded to ``digits`` significant digits (keeps the JSON in data/ small)."""
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v, digits) for v in obj]
    if isinstance(obj, float) and math.isfinite(obj) and obj != 0.0:
        return round(obj, digits - 1 - int(math.floor(math.log10(abs(obj)))))
    return obj


def bench() -> None:
    """``python -m dynamics.bench grokking``: steps and wall seconds to grok for the reference
    MLP recipe (p = 59, 50% train, AdamW lr 3e-3, wd 1, full batch) on the current device."""
    device = get_device()
    cfg = GrokConfig(p=59, op="add", train_frac=0.5, model="mlp", width=128, depth=2, lr=3e-3,
                     weight_decay=1.0, steps=5000, n_evals=200)
    data = make_data(cfg, 0, device)
    wall, cpu = time.perf_counter(), time.process_time()
    r = run(cfg, 0, data=data, stop_at_grok=True, progress=False)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"grokking bench: {cfg.op} mod {cfg.p}, {cfg.train_frac:.0%} train, "
          f"MLP {cfg.width}x{cfg.depth}, AdamW lr {cfg.lr:g} wd {cfg.weight_decay:g}, full batch, "
          f"on {device.type} "
          f"(torch threads {torch.get_num_threads()})", flush=True)
    print(f"  fit (train acc > {FIT_ACC:.0%}) at step {r.fit_step}; grok (test acc > {GROK_ACC:.0%}) "
          f"at step {r.grok_step}", flush=True)
    print(f"  time to grok: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
