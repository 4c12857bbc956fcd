"""Lottery tickets, the science in one file: masks, one round of iterative
magnitude pruning with rewinding, pruning at initialization, and linear mode
connectivity. (Lines stay under 80 columns: the chapter shows this code.)

Read it top to bottom:

1. the settings (:class:`LotteryConfig`), the data with its validation
   split (:func:`split_validation`) and the model;
2. **masks**: which weights are pruned, magnitude pruning of a fraction of
   the survivors (:func:`prune_masks`; the same step done by
   ``torch.nn.utils.prune``: :func:`torch_prune_masks`), and the random mask
   with the same layer-wise sparsity (:func:`shuffle_masks`);
3. **iterative magnitude pruning** (IMP): :func:`rewind` and
   :func:`imp_round` (Frankle & Carbin 2019; rewinding: Frankle et al. 2020);
4. **pruning at initialization**: SNIP and SynFlow scores, and masks at a
   given sparsity (Lee et al. 2019; Tanaka et al. 2020; the sanity checks of
   Frankle et al. 2021);
5. **linear mode connectivity**: interpolation, the error along the path,
   the barrier (Frankle et al. 2020);
6. the pruning schedule: how many weights are left after r rounds.

Training itself is the book's one loop (:func:`dynamics.sweep.train_many`,
called from ``experiments.py``); here it is a function passed in, so that
what a round *does* reads in five lines. Masks are ``{parameter name: 0/1
tensor}`` dicts; networks are state dicts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as torch_prune

from .. import data as D
from .. import models as M
from ..config import Config, param
from .. import runtime
from ..runtime import seeded

__all__ = ["HEAD", "INPUT_DIMS", "PAI_DENSITY", "PAI_METHODS", "LotteryConfig", "barrier",
           "best_step", "density", "expected_density", "full_masks", "imp_round", "interpolate",
           "layer_densities", "like_masks", "load_data", "make_model", "masks_at_density",
           "pai_masks", "path_errors", "prunable", "prune_masks", "prune_smallest", "rewind",
           "round_for", "round_near", "shuffle_masks", "snip_scores", "split_validation",
           "synflow_masks", "synflow_scores", "torch_prune_masks"]

HEAD = "head.weight"  # the output layer: pruned at a lower rate
PAI_METHODS = ("snip", "synflow", "magnitude")
Masks = dict  # {parameter name: 0/1 tensor of the parameter's shape}


# ========================================================= 1. settings, data


@dataclass
class LotteryConfig(Config):
    """IMP on a LeNet-300-100-like MLP (two hidden layers). Presets: smoke
    (CI, seconds), cpu (a few minutes), gpu (MNIST through torchvision where
    it can be downloaded)."""

    dataset: str = param(
        "mnist1d", "MNIST-1D (offline), digits (offline) or MNIST (gpu)",
        choices=("mnist1d", "digits", "mnist"), gpu="mnist")
    n_train: int = param(4000, "training examples (MNIST-1D / MNIST)",
                         low=100, high=60000, gpu=60000)
    n_test: int = param(2000, "test examples (MNIST-1D / MNIST)",
                        low=100, high=10000, gpu=10000)
    n_val: int = param(
        400, "training examples held out to early-stop on (validation)",
        low=1, high=10000, gpu=5000)
    width: int = param(300, "hidden units per layer (2 hidden layers)",
                       low=8, high=2048, smoke=200, cpu=300, gpu=300)
    depth: int = param(2, "hidden layers", low=1, high=6)
    optimizer: str = param("adam", "optimizer",
                           choices=("adam", "adamw", "momentum", "sgd"))
    lr: float = param(2e-3, "learning rate", low=1e-5, high=10.0, log=True,
                      gpu=1.2e-3)
    batch_size: int = param(100, "mini-batch size", low=1, high=60000)
    steps: int = param(800, "training steps per round", low=10,
                       high=100_000, smoke=300, cpu=600, gpu=5000)
    rounds: int = param(
        14, "pruning rounds (each keeps 1 - prune_fraction of the weights)",
        low=0, high=40, smoke=11, cpu=14, gpu=20)
    prune_fraction: float = param(
        0.2, "fraction of the remaining weights pruned per round",
        low=0.0, high=1.0, high_open=True)
    head_rate: float = param(
        0.5, "output layer pruned at this multiple of prune_fraction",
        low=0.0, high=1.0)
    scope: str = param(
        "global", "rank weights across all hidden layers, or within each",
        choices=("global", "layer"))
    rewind_step: int = param(
        0, "reset survivors to their values at this step (0: init)",
        low=0, high=100_000)
    seeds: int = param(1, "independent runs (seeds)", low=1, high=32, gpu=3)
    control_every: int = param(
        1, "train the controls at every n-th round (and the last)",
        low=1, high=40, smoke=2)
    evals: int = param(20, "evaluations per training run", low=2,
                       high=1000, smoke=6)

    @property
    def head_fraction(self) -> float:
        return self.prune_fraction * self.head_rate


def load_data(cfg: LotteryConfig, device=None) -> D.Dataset:
    """The dataset of ``cfg``. MNIST (the gpu preset) is downloaded by
    torchvision on first use; where it cannot be (no torchvision, no network)
    the chapter says so and falls back to MNIST-1D of the same size."""
    if cfg.dataset == "digits":
        return D.digits(device=device)
    if cfg.dataset == "mnist":
        try:
            return D.torchvision_dataset("mnist", cfg.n_train, cfg.n_test,
                                         device=device)
        except RuntimeError as err:
            print(f"MNIST unavailable, using MNIST-1D instead: {err}")
    return D.mnist1d(cfg.n_train, cfg.n_test, seed=0, device=device)


def split_validation(data: D.Dataset, n_val: int
                     ) -> tuple[D.Dataset, torch.Tensor, torch.Tensor]:
    """Frankle & Carbin's split: the last ``n_val`` training examples
    (datasets are stored shuffled, so a random sample) become the
    validation set that early stopping reads; the networks train on the
    rest. The test set is left alone. Returns (the data to train on,
    validation inputs, validation labels)."""
    n = len(data.x_train)
    if isinstance(n_val, bool) or not isinstance(n_val, int) \
            or not 0 < n_val < n:
        raise ValueError(f"n_val must be an integer in [1, {n - 1}] (the "
                         f"{n} training examples), got {n_val!r}")
    train = D.Dataset(data.x_train[:n - n_val], data.y_train[:n - n_val],
                      data.x_test, data.y_test, data.n_classes, data.name,
                      dict(data.info, n_val=n_val))
    return train, data.x_train[n - n_val:], data.y_train[n - n_val:]


def make_model(cfg: LotteryConfig, data: D.Dataset,
               seed: int | None = None) -> nn.Module:
    """The MLP with PyTorch's default initialization; ``seed`` seeds it."""
    if seed is None:  # the caller's RNG as it stands
        return M.MLP(data.input_dim, cfg.width, cfg.depth, data.n_classes)
    with seeded(seed):
        return M.MLP(data.input_dim, cfg.width, cfg.depth, data.n_classes)


# ================================================================== 2. masks


def prunable(model_or_state) -> dict[str, torch.Tensor]:
    """The weights that are pruned: every weight matrix. Biases are kept, as
    in the papers (they are few, and a bias is not a connection)."""
    if isinstance(model_or_state, nn.Module):
        model_or_state = dict(model_or_state.named_parameters())
    return {n: p for n, p in model_or_state.items() if p.ndim >= 2}


def full_masks(model_or_state) -> Masks:
    """Masks that keep everything (the dense network)."""
    return {n: torch.ones_like(p) for n, p in prunable(model_or_state).items()}


def density(masks: Masks) -> float:
    """Fraction of the prunable weights remaining (1 - sparsity)."""
    kept = sum(float(m.sum()) for m in masks.values())
    return kept / sum(m.numel() for m in masks.values())


def layer_densities(masks: Masks) -> dict[str, float]:
    """Fraction of each layer's weights remaining."""
    return {n: float(m.mean()) for n, m in masks.items()}


def _check_fraction(fraction, what: str = "pruning fraction") -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) \
            or not math.isfinite(fraction) or not 0.0 <= fraction < 1.0:
        raise ValueError(f"{what} must lie in [0, 1), got {fraction!r}")
    return float(fraction)


def prune_smallest(scores: list[torch.Tensor], masks: list[torch.Tensor],
                   fraction: float) -> list[torch.Tensor]:
    """New masks for a group of tensors ranked together: among the
    entries still kept, the ``round(fraction * kept)`` with the smallest
    ``|score|`` are removed.

    Only survivors compete, so each round removes a fraction of what is
    *left*, and after r rounds ``(1 - fraction)^r`` remains. The count is
    rounded as ``torch.nn.utils.prune`` rounds it."""
    flat_s = torch.cat([s.detach().reshape(-1) for s in scores]).abs()
    flat_m = torch.cat([m.reshape(-1) for m in masks]).clone()
    kept = torch.nonzero(flat_m > 0).flatten()
    k = round(fraction * len(kept))
    if k > 0:
        drop = torch.topk(flat_s[kept], k, largest=False).indices
        flat_m[kept[drop]] = 0
    parts = torch.split(flat_m, [m.numel() for m in masks])
    return [part.view_as(m) for part, m in zip(parts, masks)]


def _groups(names, scope: str, head: str = HEAD) -> list[list[str]]:
    """The groups ranked together: all hidden layers ("global") or each one
    ("layer"), then the output layer on its own."""
    body = [n for n in names if n != head]
    groups = [body] if scope == "global" else [[n] for n in body]
    return [g for g in groups if g] + ([[head]] if head in names else [])


def prune_masks(scores: dict, masks: Masks, fraction: float,
                scope: str = "global", head_fraction: float | None = None,
                head: str = HEAD) -> Masks:
    """New masks with ``fraction`` of the remaining weights removed: those
    with the smallest ``|score|`` (the trained weights, for magnitude
    pruning; a saliency, for pruning at initialization).

    ``scope="global"`` ranks all hidden layers together, so a layer whose
    weights are small (a large fan-in, under PyTorch's default init) loses
    more; ``"layer"`` prunes each layer by the same fraction (Frankle &
    Carbin's recipe for LeNet; they ranked globally only for the deeper
    VGG-19 and ResNet-18). The output layer ``head`` is ranked on its own
    and pruned by ``head_fraction`` (default: half the rate), because each
    of its few weights matters more.
    """
    fraction = _check_fraction(fraction)
    if head_fraction is None:
        head_fraction = fraction / 2
    head_fraction = _check_fraction(head_fraction, "head fraction")
    if scope not in ("global", "layer"):
        raise ValueError(f"scope must be 'global' or 'layer': {scope!r}")
    if set(scores) != set(masks):
        raise ValueError(f"scores and masks name different tensors: "
                         f"{sorted(scores)} vs {sorted(masks)}")
    new = {}
    for names in _groups(list(masks), scope, head):
        frac = head_fraction if names == [head] else fraction
        kept = prune_smallest([scores[n] for n in names],
                              [masks[n] for n in names], frac)
        new.update(zip(names, kept))
    return {n: new[n] for n in masks}


def torch_prune_masks(scores: dict, masks: Masks, fraction: float,
                      scope: str = "global",
                      head_fraction: float | None = None,
                      head: str = HEAD) -> Masks:
    """The same pruning step done by ``torch.nn.utils.prune``: the
    reference ``prune_masks`` is checked against. Each tensor becomes the
    weight of a module that already carries its mask; L1 (magnitude)
    pruning then removes ``fraction`` of the remaining entries, over all
    hidden layers at once or per layer, and ``head_fraction`` of the
    head's."""
    if head_fraction is None:
        head_fraction = fraction / 2
    shells = {}
    for n, m in masks.items():
        shell = nn.Module()
        shell.weight = nn.Parameter(scores[n].detach().clone().float(),
                                    requires_grad=False)
        torch_prune.custom_from_mask(shell, "weight", m.float())
        shells[n] = shell
    body = [(shells[n], "weight") for n in masks if n != head]
    if body and scope == "global":
        torch_prune.global_unstructured(
            body, pruning_method=torch_prune.L1Unstructured,
            amount=fraction)
    elif scope == "layer":
        for shell, name in body:
            torch_prune.l1_unstructured(shell, name, amount=fraction)
    if head in shells:
        torch_prune.l1_unstructured(shells[head], "weight",
                                    amount=head_fraction)
    return {n: s.weight_mask.detach().to(masks[n].dtype).clone()
            for n, s in shells.items()}


def shuffle_masks(masks: Masks,
                  generator: torch.Generator | None = None) -> Masks:
    """Each layer's mask randomly permuted within the layer: a random mask
    with exactly the same layer-wise sparsity. It keeps *how many* weights
    each layer has and forgets *which*: the sanity check of Frankle et al.
    (2021), and IMP's random-mask control."""
    out = {}
    for n, m in masks.items():
        perm = torch.randperm(m.numel(), generator=generator).to(m.device)
        out[n] = m.reshape(-1)[perm].view_as(m)
    return out


def like_masks(model: nn.Module, density: float,
               head_rate: float = 0.5) -> Masks:
    """Masks that keep ``density`` of each hidden layer's weights and
    ``density ** head_rate`` of the output layer's (IMP's ratio when the head
    is pruned at ``head_rate`` times the rate). Only their counts matter:
    they are the target of :func:`pai_masks`."""
    sparsity = _check_fraction(1.0 - float(density), "sparsity")
    out = {}
    for n, p in prunable(model).items():
        d = (1.0 - sparsity) ** (head_rate if n == HEAD else 1.0)
        flat = torch.zeros(p.numel(), device=p.device)
        flat[:max(1, round(d * p.numel()))] = 1.0
        out[n] = flat.view_as(p)
    return out


def masks_at_density(scores: dict, like: Masks, scope: str = "global",
                     head: str = HEAD) -> Masks:
    """One-shot masks from ``scores`` that keep as many hidden weights
    (together, or per layer for ``scope="layer"``) and output weights as the
    masks ``like`` do: how a pruning-at-init method is compared with an IMP
    ticket at exactly the same sparsity."""
    out = {}
    for names in _groups(list(like), scope, head):
        total = sum(like[n].numel() for n in names)
        frac = (total - sum(int(like[n].sum()) for n in names)) / total
        full = [torch.ones_like(like[n]) for n in names]
        out.update(zip(names, prune_smallest([scores[n] for n in names],
                                             full, frac)))
    return {n: out[n] for n in like}


# ==================================================== 3. IMP with rewinding


def rewind(theta_k: dict, masks: Masks) -> dict:
    """A subnetwork's starting point: the weights ``θ_k`` (θ₀ when k = 0)
    with the pruned weights set to exactly zero. Survivors get back
    exactly the values they had at step k, not the values training gave
    them: that is what makes a ticket a statement about initialization."""
    return {n: torch.where(masks[n] > 0, t, torch.zeros_like(t))
            if n in masks else t.clone() for n, t in theta_k.items()}


def imp_round(train: Callable, theta_k: list[dict], masks: list[Masks],
              cfg: LotteryConfig) -> tuple[list[dict], list[Masks]]:
    """One round of iterative magnitude pruning with rewinding, for a
    batch of networks (one per seed, trained together).

    1. **rewind**: each subnetwork starts from ``m ⊙ θ_k`` (``rewind``);
    2. **train** it: ``train(starts, masks)`` returns the trained state
       dicts (the masks are applied after every step, so pruned weights
       stay exactly zero);
    3. **prune** the ``cfg.prune_fraction`` of the surviving weights with
       the smallest trained magnitude ``|θ_T|`` (``prune_masks``).

    Returns the trained weights and the new masks, with which the next
    round starts again at step 1. Pruning by *trained* magnitude and
    restarting from *early* values is the whole recipe: the mask remembers
    where training went, the values where it started.
    """
    starts = [rewind(t, m) for t, m in zip(theta_k, masks)]
    trained = train(starts, masks)
    new = [prune_masks({n: w[n] for n in m}, m, cfg.prune_fraction,
                       cfg.scope, cfg.head_fraction)
           for w, m in zip(trained, masks)]
    return trained, new


def best_step(history, key: str = "val_loss") -> int:
    """The first evaluation step at which ``key`` is at its best: highest
    for accuracies, lowest for losses. ``val_loss`` (the loss on the
    validation split) gives Frankle & Carbin's speed measure, the
    *early-stopping step*."""
    values = history[key]
    if not len(values):
        return 0
    i = np.argmin(values) if "loss" in key else np.argmax(values)
    return int(history.steps[int(i)])


# ===================================================== 4. pruning at init


def snip_scores(model: nn.Module, data: D.Dataset,
                n: int | None = 1000) -> dict[str, torch.Tensor]:
    """SNIP's connection sensitivity |θ ⊙ ∂L/∂θ| at initialization (Lee
    et al. 2019): to first order, how much the loss on ``n`` training
    examples changes when a weight is removed. Keep the weights whose
    removal would hurt most."""
    params = prunable(model)
    x, y = data.x_train[:n], data.y_train[:n]
    loss = F.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, list(params.values()))
    return {name: (p.detach() * g).abs()
            for (name, p), g in zip(params.items(), grads)}


def synflow_scores(model: nn.Module,
                   masks: Masks) -> dict[str, torch.Tensor]:
    """SynFlow's data-free saliency (Tanaka et al. 2020). Replace every
    parameter by its absolute value (masked) and feed an all-ones input:
    ``R = 1ᵀ f(1)`` is then the total "synaptic flow" through the network,
    a sum over all input-output paths of the product of their |weights|,
    and a weight's score ``|θ ⊙ ∂R/∂θ|`` is the flow through it."""
    params = {n: p.detach().abs().double()
              for n, p in model.named_parameters()}
    for n, m in masks.items():
        params[n] = params[n] * m.double()
    leaves = {n: params[n].clone().requires_grad_(True) for n in masks}
    params.update(leaves)
    first = next(iter(prunable(model).values()))
    x = torch.ones(1, first.shape[1], dtype=torch.float64,
                   device=first.device)
    out = torch.func.functional_call(model, params, (x,))
    grads = torch.autograd.grad(out.sum(), list(leaves.values()))
    return {n: (leaves[n] * g).detach().abs().float()
            for n, g in zip(leaves, grads)}


def synflow_masks(model: nn.Module, like: Masks, iterations: int = 100,
                  scope: str = "global", head: str = HEAD) -> Masks:
    """SynFlow pruning to the per-group sparsity of ``like`` (hidden
    layers, output layer): ``iterations`` rounds on an exponential
    schedule (round i keeps ``d ** (i / iterations)`` of each group, d its
    final density), rescoring after each. Rescoring is the point: a
    weight's flow falls as its neighbours are removed, so no layer is cut
    off entirely (layer collapse), which one-shot saliencies suffer at
    high sparsity."""
    iterations = max(1, runtime.steps(iterations))  # a dry run: a few rounds
    groups = _groups(list(like), scope, head)
    final = [sum(float(like[n].sum()) for n in g)
             / sum(like[n].numel() for n in g) for g in groups]
    masks = {n: torch.ones_like(m) for n, m in like.items()}
    for i in range(1, iterations + 1):
        scores = synflow_scores(model, masks)
        for names, d in zip(groups, final):
            now = (sum(float(masks[n].sum()) for n in names)
                   / sum(masks[n].numel() for n in names))
            keep = d ** (i / iterations) / now if now > 0 else 1.0
            frac = min(max(0.0, 1.0 - keep), 1.0 - 1e-9)
            masks.update(zip(names, prune_smallest(
                [scores[n] for n in names], [masks[n] for n in names],
                frac)))
    return masks


def pai_masks(method: str, model: nn.Module, data: D.Dataset, like: Masks,
              scope: str = "global") -> Masks:
    """Masks chosen at initialization by ``method`` (snip, synflow,
    magnitude: the largest |θ₀|) with the same sparsity per group (hidden
    layers, output layer) as ``like``."""
    if method == "snip":
        return masks_at_density(snip_scores(model, data), like, scope)
    if method == "synflow":
        return synflow_masks(model, like, scope=scope)
    if method == "magnitude":
        weights = {n: p.detach() for n, p in prunable(model).items()}
        return masks_at_density(weights, like, scope)
    raise ValueError(f"unknown pruning-at-init method {method!r}; "
                     f"choose one of {list(PAI_METHODS)}")


# ========================================== 5. linear mode connectivity


def interpolate(a: dict, b: dict, alpha: float) -> dict:
    """(1 − α)·a + α·b, tensor by tensor: a point on the straight line
    between two networks."""
    return {n: torch.lerp(a[n], b[n], float(alpha)) for n in a}


@torch.no_grad()
def path_errors(model: nn.Module, a: dict, b: dict, x: torch.Tensor,
                y: torch.Tensor, n_points: int = 11) -> np.ndarray:
    """Test error of the networks on the segment from ``a`` to ``b`` at
    ``n_points`` evenly spaced α ∈ [0, 1]; ``model`` only supplies the
    architecture. Two runs are *linearly mode connected* when this stays
    flat: they ended in one basin, with no hill between them."""
    if n_points < 2:
        raise ValueError(f"n_points must be at least 2, got {n_points}")
    errs = []
    for alpha in np.linspace(0.0, 1.0, n_points):
        point = interpolate(a, b, alpha)
        out = torch.func.functional_call(model, point, (x,))
        errs.append((out.argmax(1) != y).float().mean())
    return torch.stack(errs).cpu().numpy()


def barrier(errors) -> float:
    """Instability (Frankle et al. 2020): the highest error on the path
    minus the mean error of its two ends; near 0 means the two runs found
    one linearly connected minimum."""
    errors = np.asarray(errors, dtype=float)
    return float(errors.max() - 0.5 * (errors[0] + errors[-1]))


# ================================================== 6. the pruning schedule

PAI_DENSITY = 0.2  # the pruning-at-init comparison: ~20% of the weights
INPUT_DIMS = {"mnist1d": 40, "digits": 64, "mnist": 784}


def expected_density(cfg: LotteryConfig, r: int, in_dim: int | None = None,
                     n_classes: int = 10) -> float:
    """The fraction of weights left after ``r`` rounds of ``cfg`` (before
    running anything): hidden weights keep (1 − p)^r, the output layer
    (1 − p·head_rate)^r."""
    in_dim = in_dim or INPUT_DIMS[cfg.dataset]
    hidden = in_dim * cfg.width + (cfg.depth - 1) * cfg.width * cfg.width
    head = cfg.width * n_classes
    kept = (hidden * (1 - cfg.prune_fraction) ** r
            + head * (1 - cfg.head_fraction) ** r)
    return kept / (hidden + head)


def round_for(cfg: LotteryConfig, low: float, high: float) -> int:
    """The sparsest round of ``cfg`` whose expected density lies in
    [low, high]."""
    inside = [r for r in range(cfg.rounds + 1)
              if low <= expected_density(cfg, r) <= high]
    if not inside:
        raise ValueError(
            f"no round of {cfg.rounds} at {cfg.prune_fraction} per round "
            f"leaves {100 * low:g}-{100 * high:g}% of the weights; add rounds")
    return inside[-1]


def round_near(cfg: LotteryConfig, target: float) -> int:
    """The pruned round of ``cfg`` whose expected density is closest to
    ``target`` (on a log scale)."""
    rounds = range(1, cfg.rounds + 1) if cfg.rounds > 0 else [0]
    return min(rounds,
               key=lambda r: abs(math.log(expected_density(cfg, r) / target)))
