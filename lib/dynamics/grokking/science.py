"""Grokking, the science: one reference implementation, to read top to bottom.

A network trained on a table of modular arithmetic, ``c = a ∘ b mod p``, with a fraction of the
``p²`` pairs for training, fits those pairs early and generalizes to the others much later
(Power et al. 2022). This module holds everything that phenomenon is made of, and nothing
that draws it:

1. **The task and the models** (:class:`GrokConfig`, :func:`make_data`, :func:`make_model`):
   a 2-layer MLP on one-hot pairs (the runs a notebook trains live, in every profile) and the
   one-layer transformer of Nanda et al. (2023) (the gpu profile's precomputed phase diagram),
   each with its own optimizer recipe (:data:`ADAM_BETAS`).
2. **Progress measures** that move while the accuracies are flat: the weight norm, the
   Fourier spectrum of the weights that read the residues and its concentration, and the
   restricted / excluded loss of Nanda et al. on the key frequencies of the logits.
3. **Remedies** that shorten the wait: the Grokfast EMA gradient filter (Lee et al. 2024), and
   ⊥Grad and StableMax (Prieto et al. 2025), each a few lines on tensors.
4. **Phases**: the fit and grok steps of a run, and the label of a run in a phase diagram
   (the four phases of Liu et al. 2022, plus runs that learn and then lose it).

It imports torch and the book's core only (no plotting): the chapter shows these functions'
own source where it explains them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from .. import data as D
from .. import models as M
from ..config import Config, param
from ..runtime import get_device, get_seed, seeded
from ..train import History, make_optimizer
from .records import PlateauSteps

__all__ = [  # the public names, re-exported by dynamics.grokking
    "GrokConfig", "PhaseConfig", "CorruptConfig", "corrupt_labels", "make_data", "make_model",
    "optimizer_for", "pair_index", "all_pairs", "pair_logits", "weight_norm", "input_weights",
    "fourier_spectrum", "spectral_concentration", "model_concentration", "sum_basis",
    "logit_frequencies", "key_frequencies", "fourier_losses", "GrokfastEMA",
    "orthogonal_grad_", "stablemax", "stablemax_cross_entropy", "loss_and_hook",
    "fit_and_grok", "end_accuracy", "critical_fraction", "phase_of", "Milestones", "plateau_steps", "FIT_ACC",
    "GROK_ACC", "DELAY", "CHANCE_MARGIN", "PLATEAU",
    "UNLEARN_DROP", "END_EVALS", "CLIMB", "CLIMB_SPAN", "RISE_PAIRS", "still_climbing", "fell_back", "KEY_SHARE", "REMEDIES", "PHASES", "FOURIER_OPS",
    "ADAM_BETAS"
]

FIT_ACC = 0.99       # "fitted": training accuracy above this
GROK_ACC = 0.95      # "generalized": test accuracy above this
DELAY = 5.0          # grokking = generalizing at least DELAY x later than fitting
CHANCE_MARGIN = 0.05  # "near chance": test accuracy at most 1/p + this
PLATEAU = 2.0        # a plateau: test accuracy stays near chance until PLATEAU x the fit step or later
UNLEARN_DROP = 0.05  # "un-learning": an accuracy ends this far below its best
END_EVALS = 3        # a run's accuracy "at the end": the median of its last 3 evaluations
CLIMB = 0.025        # "still climbing": an accuracy gained more than this over the run's last
CLIMB_SPAN = 0.2     # ... CLIMB_SPAN of its steps (its end against its value there),
RISE_PAIRS = 5       # ... or rose steadily over that span: never falling in it, rising at its
#                      last evaluation, gaining at least this many pairs' worth (of p^2) (a curve
#                      leaving 0%, or creeping to its ceiling, gains less than CLIMB and is
#                      still climbing)
KEY_SHARE = 0.9      # key frequencies: the fewest that hold this share of the logits' energy
REMEDIES = ("none", "grokfast", "perp_grad", "stablemax")
PHASES = ("comprehension", "grokking", "memorization", "confusion", "unfinished",
          "un-learning")
FOURIER_OPS = ("add", "sub")  # ops whose generalizing logits are periodic in a ± b

# The optimizer recipe belongs to the model, not to the profile: Nanda et al. trained their
# transformer with AdamW β₂ = 0.98; the MLP recipe uses torch's default 0.999.
ADAM_BETAS = {"mlp": (0.9, 0.999), "transformer": (0.9, 0.98)}


# ============================================================================ 1. task and models


@dataclass
class GrokConfig(Config):
    """One grokking run: task, model, optimizer, remedy. Presets: smoke (CI: p = 37, 70% of the
    pairs for training, seconds), cpu and gpu (p = 59, 50%: the MLP reference recipe at
    learning rate 1e-2, where it groks within a few hundred steps). Nanda et al.'s one-layer
    transformer (``model="transformer", p=113, train_frac=0.3, lr=1e-3, steps=25_000``; AdamW
    weight decay 1, β₂ 0.98) groks near step 10,000: 25,000 steps per run, and the chapter
    trains about a dozen runs live, so the gpu profile trains the MLP live and the
    transformer in its precomputed phase diagram
    (:class:`PhaseConfig`)."""

    p: int = param(59, "the modulus p (prime for division)", low=5, high=257,
                   smoke=37, cpu=59)
    op: str = param("add", "the operation a ∘ b mod p", choices=tuple(D.OPERATIONS))
    train_frac: float = param(0.5, "fraction of the pairs used for training", low=0.05,
                              high=0.95, smoke=0.7, cpu=0.5)
    model: str = param("mlp", "MLP on one-hot pairs, or the one-layer transformer",
                       choices=("mlp", "transformer"))
    width: int = param(128, "MLP hidden width / transformer d_model", low=8, high=1024)
    depth: int = param(2, "MLP hidden layers", low=1, high=4)
    optimizer: str = param("adamw", "optimizer (Muon: hidden matrices; AdamW: the rest)",
                           choices=("adamw", "muon"))
    lr: float = param(3e-3, "learning rate", low=1e-5, high=1.0, log=True,
                      smoke=1e-2, cpu=1e-2)
    weight_decay: float = param(1.0, "decoupled weight decay", low=0.0, high=10.0)
    steps: int = param(3000, "full-batch training steps", low=1, high=200_000,
                       smoke=700, cpu=2000)
    remedy: str = param("none", "grokfast | perp_grad (⊥Grad) | stablemax", choices=REMEDIES)
    grokfast_alpha: float = param(0.98, "Grokfast EMA momentum α", low=0.0, high=0.9999)
    grokfast_lambda: float = param(2.0, "Grokfast amplification λ", low=0.0, high=100.0)
    label_noise: float = param(0.0, "fraction of training labels replaced by wrong ones",
                               low=0.0, high=0.9)
    n_evals: int = param(120, "evaluations per run (log- and linearly spaced)", low=10, high=2000)


@dataclass
class PhaseConfig(Config):
    """The phase diagram: a grid of training fractions x weight decays on one task; every
    cell is a :class:`GrokConfig` built by :meth:`base` (its own model's recipe)."""

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
    seeds: int = param(1, "seeds per cell", low=1, high=10, cpu=3)
    n_evals: int = param(60, "evaluations per run", low=10, high=2000)

    def base(self) -> GrokConfig:
        """The :class:`GrokConfig` every cell shares (training fraction and weight decay are
        the cell's own). It takes no profile: the recipe is the model's."""
        return GrokConfig(model=self.model, p=self.p, lr=self.lr, width=self.width,
                          steps=self.steps, n_evals=self.n_evals)


@dataclass
class CorruptConfig(Config):
    """Corrupted labels (Doshi et al. 2024): a fraction of the training labels replaced by
    wrong ones, one run per weight decay (gpu: the cpu preset, as :class:`GrokConfig`)."""

    noise: float = param(0.1, "fraction of training labels corrupted", low=0.0, high=0.9)
    weight_decays: list = param([1.0, 3.0, 6.0], "weight decays compared", smoke=[3.0, 6.0],
                                cpu=[1.0, 3.0, 6.0])
    steps: int = param(1000, "training steps per run", low=1, high=200_000, smoke=500,
                       cpu=2000)


def corrupt_labels(y: torch.Tensor, frac: float, n_classes: int, seed: int | None = None):
    """``(y_noisy, corrupted)``: a random ``frac`` of the labels replaced by a *different*
    class drawn uniformly (Doshi et al.'s corrupted algorithmic datasets); ``corrupted`` is
    the boolean mask of the replaced examples."""
    seed = get_seed(seed)
    if not 0.0 <= frac < 1.0:
        raise ValueError(f"label noise fraction must lie in [0, 1), got {frac}")
    g = torch.Generator().manual_seed(seed + 7919)
    n = len(y)
    corrupted = torch.zeros(n, dtype=torch.bool)
    corrupted[torch.randperm(n, generator=g)[:int(round(frac * n))]] = True
    shift = torch.randint(1, n_classes, (n,), generator=g)  # never 0: always a wrong label
    noisy = torch.where(corrupted, (y.cpu() + shift) % n_classes, y.cpu())
    return noisy.to(y.device), corrupted.to(y.device)


def make_data(cfg: GrokConfig, seed: int | None = None, device=None) -> D.Dataset:
    """The split of ``cfg``'s task (one-hot pairs for the MLP, token pairs for the
    transformer), with ``cfg.label_noise`` of the training labels corrupted; the clean
    labels and the corruption mask go to ``info["y_clean"]`` and ``info["corrupted"]``."""
    seed = get_seed(seed)
    data = D.modular_arithmetic(cfg.p, cfg.op, cfg.train_frac, seed=seed,
                                onehot=cfg.model == "mlp", device=device)
    if cfg.label_noise > 0:
        noisy, corrupted = corrupt_labels(data.y_train, cfg.label_noise, cfg.p, seed)
        data.info.update(y_clean=data.y_train, corrupted=corrupted)
        data.y_train = noisy
    return data


def make_model(cfg: GrokConfig, seed: int | None = None) -> nn.Module:
    """The MLP (``width`` x ``depth`` ReLU on the 2p-dim one-hot pair) or the one-layer
    transformer (d_model = ``width``, 4 heads, d_mlp = 4 ``width``), seeded."""
    seed = get_seed(seed)
    if cfg.model != "mlp" and cfg.width % 4:
        raise ValueError(f"the transformer needs width (d_model) divisible by 4, got {cfg.width}")
    with seeded(seed):
        if cfg.model == "mlp":
            return M.MLP(2 * cfg.p, cfg.width, cfg.depth, cfg.p)
        return M.Transformer1L(cfg.p, d_model=cfg.width, n_heads=4, d_mlp=4 * cfg.width)


def optimizer_for(cfg: GrokConfig, model: nn.Module):
    """The run's optimizer: AdamW with the model's betas (:data:`ADAM_BETAS`), or Muon on the
    hidden matrices with AdamW (same learning rate) on the rest."""
    betas = ADAM_BETAS[cfg.model]
    if cfg.optimizer == "muon":
        return make_optimizer(model, "muon", cfg.lr, cfg.weight_decay, betas=betas, adam_lr=cfg.lr)
    return make_optimizer(model, "adamw", cfg.lr, cfg.weight_decay, betas=betas)


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


@torch.no_grad()
def pair_logits(model: nn.Module, p: int) -> torch.Tensor:
    """The model's logits on all ``p²`` pairs, ``[p², p]`` in ``a·p + b`` order."""
    onehot = isinstance(model, M.MLP)
    device = next(model.parameters()).device
    with M.evaluating(model):
        return model(all_pairs(p, onehot, device))


# ============================================================================ 2. progress measures


def weight_norm(model: nn.Module) -> torch.Tensor:
    """‖θ‖₂ over all parameters (a device scalar). The memorizing solution is expensive in norm
    and the Fourier one cheap, so weight decay, which charges for norm, favours the second
    (Nanda et al. 2023; Liu et al. 2023 tie grokking to this norm)."""
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


def fourier_spectrum(weights: Tensor, per_unit: bool = False) -> Tensor:
    """Energy per frequency k = 0..⌊p/2⌋ of ``weights`` [operands, p, d]
    along the residue axis.

    A network that adds with cos/sin(2πk(a+b)/p), the algorithm Nanda
    et al. reverse-engineered, reads each residue through a few
    circles: each unit's weights over the residues are a sinusoid of
    one frequency k. The discrete Fourier transform along the residues
    shows it. |F_k|² is summed over the operands (a and b) and doubled
    for the k whose partner p - k is folded away, so the energies add
    up to p·‖W‖² (Parseval). ``per_unit=True`` keeps one spectrum per
    unit (MLP neuron, embedding dimension), [K, d]; else [K]."""
    if weights.ndim != 3:
        raise ValueError(f"weights must be [operands, p, d], "
                         f"got shape {tuple(weights.shape)}")
    p = weights.shape[1]
    F_k = torch.fft.rfft(weights.float(), dim=1)  # [operands, K, d]
    energy = F_k.abs().pow(2).sum(0)              # [K, d]
    paired = torch.ones(energy.shape[0], 1, device=energy.device)
    paired[1:(p + 1) // 2] = 2.0  # k stands for k and p - k
    energy = energy * paired      # (k = 0, and p/2 for even p, alone)
    return energy if per_unit else energy.sum(1)


def spectral_concentration(energy: Tensor, top: float = 0.1) -> Tensor:
    """Share of the energy held by the top ``top`` fraction of
    frequencies (at least one).

    ``energy`` is one spectrum [K] or one per unit [K, d]; for the
    latter each unit's own top frequencies count, pooled over units with
    their energies as weights: the share of the layer's energy that sits
    on its units' dominant frequencies (in the spirit of the per-neuron
    inverse participation ratio of Doshi et al.). A flat spectrum gives
    about ``top``; units that each read one frequency give nearly 1,
    even if different units read different frequencies."""
    if not 0.0 < top <= 1.0:
        raise ValueError(f"top must lie in (0, 1], got {top}")
    if energy.ndim not in (1, 2) or energy.shape[0] == 0:
        raise ValueError(f"energy must be [K] or [K, d], "
                         f"got shape {tuple(energy.shape)}")
    k = max(1, math.ceil(top * energy.shape[0]))
    top_k = energy.sort(dim=0, descending=True).values[:k]
    return top_k.sum() / energy.sum().clamp_min(1e-30)


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
        return torch.zeros(p * p, 0, device=device)
    q = torch.stack(cols, 1)
    return (q / q.norm(dim=0, keepdim=True)).float()


def logit_frequencies(logits: torch.Tensor, p: int, op: str = "add") -> torch.Tensor:
    """Energy of the logits ``[p², p]`` along cos/sin(2πk(a ± b)/p), for k = 1..(p-1)/2
    (``[K]``, frequency k at index k - 1): how much of the logits depends on the pair only
    through a ± b, frequency by frequency."""
    q = sum_basis(p, range(1, (p - 1) // 2 + 1), op, logits.device)
    coef = q.T @ logits.float()  # [2K, p]
    return coef.pow(2).sum(1).view(-1, 2).sum(1)


def key_frequencies(logits: Tensor, p: int, op: str = "add",
                    share: float = KEY_SHARE) -> list[int]:
    """The *key frequencies* of a trained network: the fewest k whose
    cos/sin(2πk(a ± b)/p) components hold ``share`` of the logits'
    energy along all such directions.

    Nanda et al.'s transformer at p = 113 uses five; an MLP spreads its
    logits over more (different neurons read different frequencies),
    and the criterion keeps as many as it takes, with no cap. Read them
    off the final model, then track them over training."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must lie in (0, 1], got {share}")
    energy = logit_frequencies(logits, p, op)  # frequency k at k - 1
    order = torch.argsort(energy, descending=True)
    total = energy.sum().clamp_min(1e-30)
    held = torch.cumsum(energy[order], 0) / total  # share of the top n
    n = min(int((held < share - 1e-6).sum()) + 1, len(order))
    return sorted(int(k) + 1 for k in order[:n])


def fourier_losses(logits: Tensor, labels: Tensor, index: Tensor, keys,
                   p: int, op: str = "add") -> tuple[Tensor, Tensor]:
    """Nanda et al.'s restricted and excluded loss on the pairs ``index``.

    Project the logits [p², p], as functions of the pair (a, b), on the
    directions cos/sin(2πk(a+b)/p) of the key frequencies (Q Qᵀ L).
    *Restricted* logits keep only that part (plus each class's mean over
    the pairs): the Fourier algorithm alone. *Excluded* logits remove
    it: whatever else the network uses, i.e. memorization. During the
    plateau the restricted loss falls (the algorithm forms) and the
    excluded loss on the *training* pairs rises (memorization is being
    replaced) while the training loss itself stays low.

    The projection acts on the logits. In the MLP they are a linear map
    of the last hidden layer, so this equals projecting those
    activations; in the transformer the logits also receive the
    attention output and the embeddings through the residual stream,
    so the projection covers all of them, not the MLP neurons alone."""
    q = sum_basis(p, keys, op, logits.device)  # [p², 2 x len(keys)]
    logits = logits.float()
    fourier = q @ (q.T @ logits)
    restricted = logits.mean(0, keepdim=True) + fourier
    excluded = logits - fourier
    return (F.cross_entropy(restricted[index], labels[index]),
            F.cross_entropy(excluded[index], labels[index]))


# ============================================================================ 3. remedies


class GrokfastEMA:
    """Grokfast-EMA (Lee et al. 2024), a ``before_step`` hook: keep an
    exponential moving average of each gradient, h ← α h + (1 - α) g,
    and add it back amplified, g ← g + λ h.

    Read as a signal over steps, the gradient has a fast part (fitting
    each training pair) and a slow part; the slow part drives
    generalization, and amplifying it (a low-pass filter) shortens the
    plateau. The paper's defaults: α = 0.98, λ = 2."""

    def __init__(self, alpha: float = 0.98, lamb: float = 2.0):
        if not 0.0 <= alpha < 1.0 or lamb < 0:
            raise ValueError(f"Grokfast needs 0 <= alpha < 1 and "
                             f"lambda >= 0, got {alpha}, {lamb}")
        self.alpha, self.lamb = alpha, lamb
        self.ema: dict[str, Tensor] = {}

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
def orthogonal_grad_(model: nn.Module, step: int | None = None,
                     eps: float = 1e-30) -> None:
    """⊥Grad (Prieto et al. 2025), a ``before_step`` hook: remove from
    each parameter's gradient its component along the parameter,
    g⊥ = g - (g·w / w·w) w, and rescale g⊥ to the norm of g.

    After memorization the cheapest way to lower the loss is to scale
    the weights, and with them the logits, up (naïve loss minimization,
    which ends in softmax collapse); without that direction the
    optimizer must change *what* the network computes."""
    for p in model.parameters():
        if p.grad is None:
            continue
        w, g = p.detach().reshape(-1), p.grad.reshape(-1)
        g_perp = g - (torch.dot(w, g) / (torch.dot(w, w) + eps)) * w
        g.copy_(g_perp * (g.norm() / (g_perp.norm() + eps)))


def stablemax(x: Tensor, dim: int = -1) -> Tensor:
    """StableMax (Prieto et al. 2025): s(x) / Σ s(x) with s(x) = x + 1
    for x ≥ 0 and 1 / (1 - x) below. It grows linearly instead of
    exponentially, so the probabilities of a confident network do not
    round to exactly 0 and 1 in floating point (softmax collapse),
    where the gradient of the loss vanishes."""
    s = torch.where(x >= 0, x + 1.0, 1.0 / (1.0 - x.clamp(max=0.0)))
    return s / s.sum(dim, keepdim=True)


def stablemax_cross_entropy(logits: Tensor, y: Tensor) -> Tensor:
    """Cross-entropy with StableMax in place of softmax (batch mean)."""
    return F.nll_loss(torch.log(stablemax(logits, -1)), y)


def loss_and_hook(cfg: GrokConfig):
    """``(loss, before_step)`` for ``cfg.remedy``: StableMax changes the loss, Grokfast and
    ⊥Grad edit the gradient between backward and the optimizer step."""
    loss = stablemax_cross_entropy if cfg.remedy == "stablemax" else "cross_entropy"
    if cfg.remedy == "grokfast":
        return loss, GrokfastEMA(cfg.grokfast_alpha, cfg.grokfast_lambda)
    if cfg.remedy == "perp_grad":
        return loss, orthogonal_grad_
    return loss, None


# ============================================================================ 4. phases


def fit_and_grok(history: History) -> tuple[int | None, int | None]:
    """``(fit step, grok step)``: first evaluations with train accuracy > FIT_ACC and test
    accuracy > GROK_ACC (None when never reached)."""
    return (history.first_step("train_acc", above=FIT_ACC),
            history.first_step("test_acc", above=GROK_ACC))


def plateau_steps(history: History, p: int) -> PlateauSteps:
    """Where a run's test accuracy is on its way from chance to generalizing: ``fit`` (train
    accuracy > FIT_ACC), ``leave`` (the first evaluation with test accuracy above chance,
    ``1/p + CHANCE_MARGIN``: the end of the plateau), ``half`` (above 50%) and ``grok`` (above
    GROK_ACC); each None when never reached. ``plateau``: ``leave / fit`` (None without both).
    A grokking run's plateau lasts from ``fit`` to ``leave``; ``grok`` is the end of the climb,
    not of the plateau."""
    fit, grok = fit_and_grok(history)
    leave = history.first_step("test_acc", above=1.0 / p + CHANCE_MARGIN)
    half = history.first_step("test_acc", above=0.5)
    return PlateauSteps(fit=fit, leave=leave, half=half, grok=grok,
                        plateau=leave / fit if leave is not None and fit else None)


def end_accuracy(history: History, split: str) -> float:
    """The ``split`` ("train" or "test") accuracy at the end of a run:
    the median of its last END_EVALS evaluations, so that one spike at
    the last evaluation (Adam is prone to them once the loss is tiny)
    does not decide the label of a run."""
    acc = history[f"{split}_acc"]
    if not len(acc):
        return float("nan")
    return float(torch.tensor(acc[-END_EVALS:]).median())


def critical_fraction(rows: list, weight_decay: float = 1.0) -> float | None:
    """The smallest training fraction whose cell (a phase grid's row,
    :class:`~.experiments.PhaseRow`) at ``weight_decay`` (the nearest one in the grid)
    generalizes and keeps it (grokking or comprehension), or None."""
    if not rows:
        return None
    wds = sorted({r.weight_decay for r in rows})
    wd = min(wds, key=lambda w: abs(w - weight_decay))
    good = [r.train_frac for r in rows if r.weight_decay == wd
            and r.phase in ("grokking", "comprehension")]
    return min(good) if good else None


def still_climbing(history: History, split: str, p: int | None = None) -> bool:
    """Whether the ``split`` ("train" or "test") accuracy is still climbing when the run ends.
    Its accuracy at the end (:func:`end_accuracy`) is compared with its accuracy CLIMB_SPAN of
    the run earlier (the median of the END_EVALS evaluations up to that step); it climbs when

    - it gained more than CLIMB (points of accuracy), or
    - it rose steadily: it never falls from one evaluation to the next over that span, its
      last evaluation is above its end value (it is rising when the budget ends), and it
      gained at least RISE_PAIRS pairs' worth of accuracy, RISE_PAIRS / ``p``², so at least
      that many pairs on any test split of the table. A test accuracy leaving 0%
      exponentially (0.2% → 0.9% → 1.5% → 2.2% → 3.2%), or creeping towards its ceiling
      (90.5% → 92.8%), gains less than CLIMB over the last fifth and is still rising; a
      gain of a pair or two (0.1% → 0.2%), a curve flat at its last evaluations or one that
      wobbles (noise at chance falls somewhere) is not. The rule needs ``p`` and is off
      without it.

    False when the run has too few evaluations before that step to tell."""
    acc, steps = history[f"{split}_acc"], list(history.steps)
    if not len(acc):
        return False
    n = sum(t <= (1 - CLIMB_SPAN) * steps[-1] for t in steps)
    if n < END_EVALS or len(acc) - n < END_EVALS:
        return False
    earlier = float(torch.tensor(acc[n - END_EVALS:n]).median())
    end = end_accuracy(history, split)
    span = [float(a) for a in acc[n - 1:]]
    rising = (p is not None and end - earlier >= RISE_PAIRS / p ** 2 and span[-1] > end
              and all(b >= a for a, b in zip(span, span[1:])))
    return end - earlier > CLIMB or rising


def fell_back(history: History, split: str) -> bool:
    """Whether the ``split`` accuracy rose and fell back: its accuracy at the end
    (:func:`end_accuracy`) is more than UNLEARN_DROP below the best it reached before its last
    END_EVALS evaluations (so that a curve still climbing through its last evaluations, whose
    median lags its last value, does not count), and for the test accuracy that best is also
    more than UNLEARN_DROP above its first value (a curve that only drifts down from chance
    did not rise)."""
    acc = history[f"{split}_acc"]
    if len(acc) <= END_EVALS:
        return False
    best = float(acc[:-END_EVALS].max())
    rose = split == "train" or best - float(acc[0]) > UNLEARN_DROP
    return rose and best - end_accuracy(history, split) > UNLEARN_DROP


def phase_of(history: History, delay: float = DELAY, p: int | None = None) -> str:
    """The phase of one run, read from its curves by the first rule that holds:

    1. *un-learning* (a label of our own): the training or the test accuracy rose and fell
       back (:func:`fell_back`: it ends more than UNLEARN_DROP below its best). By its first
       crossings alone such a run can pass for comprehension.
    2. the training accuracy never passes FIT_ACC: *unfinished* if it is still climbing at the
       end (:func:`still_climbing`, with the modulus ``p`` for its steady-rise rule), else
       *confusion*;
    3. it fits but the test accuracy never passes GROK_ACC: *unfinished* if the test accuracy
       is still climbing at the end, else *memorization* (the test accuracy has stopped short);
    4. it generalizes: *grokking* if at least ``delay`` x later than it fits, else
       *comprehension*.

    Liu et al.'s four phases (comprehension, grokking, memorization, confusion) are defined
    by whether each accuracy reaches its threshold within the budget; a run still climbing
    when the budget ends has not shown which it belongs to, so it is *unfinished*, not
    memorization. A run that diverged is "diverged"; an empty history (a stopped sweep) is
    "not run"."""
    if not len(history):
        return "not run"
    if history.diverged:
        return "diverged"
    fit, grok = fit_and_grok(history)
    if fell_back(history, "train") or fell_back(history, "test"):
        return "un-learning"
    if fit is None:
        return "unfinished" if still_climbing(history, "train", p) else "confusion"
    if grok is None:
        return "unfinished" if still_climbing(history, "test", p) else "memorization"
    if grok >= delay * max(fit, 1):
        return "grokking"
    return "comprehension"


class Milestones:
    """A run's ``fit_step``, ``grok_step`` (:func:`fit_and_grok`) and ``phase``
    (:func:`phase_of`), read from its ``history``: the one home of these three for every run
    record (the grokking runs, the capstone's). ``modulus`` (p) turns on the steady-rise rule of
    :func:`still_climbing`; a record whose class does not give it keeps the gain rule alone."""

    @property
    def modulus(self) -> int | None:
        return None

    @property
    def fit_step(self) -> int | None:
        return fit_and_grok(self.history)[0]

    @property
    def grok_step(self) -> int | None:
        return fit_and_grok(self.history)[1]

    @property
    def phase(self) -> str:
        return phase_of(self.history, p=self.modulus)
