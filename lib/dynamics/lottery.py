"""Lottery tickets: sparse subnetworks that train from the start.

Frankle & Carbin (2019) found that a dense network contains sparse subnetworks that, reset to
their *initial* weights and trained alone, match the dense network's accuracy ("winning
tickets"). They are found by **iterative magnitude pruning** (IMP): train, remove the 20% of
the remaining weights with the smallest magnitude, reset the survivors to their initial values
(or *rewind* them to their values at an early step k, Frankle et al. 2020), and repeat. Two
controls show that both the mask and the initial values matter: the same mask with a random
re-initialization, and a random mask with the same layer-wise sparsity.

This module holds the experiments of the chapter:

- masks as ``{parameter name: 0/1 tensor}``: :func:`prune_masks` (magnitude pruning of a
  fraction of the remaining weights, global or per layer, the output layer at a lower rate;
  equal to ``torch.nn.utils.prune``'s masks, see the tests), :func:`shuffle_masks` (the random
  mask with the same layer-wise sparsity), :func:`density`;
- pruning at initialization (PaI): :func:`snip_scores` (Lee et al. 2019), :func:`synflow_masks`
  (Tanaka et al. 2020) and magnitude at init, with the layer-wise shuffling sanity check of
  Frankle et al. (2021);
- linear mode connectivity: :func:`interpolate`, :func:`path_errors`, :func:`barrier`;
- runners: :func:`run_imp` (the IMP curve with both controls), :func:`run_pai`,
  :func:`run_lmc`; all masked training goes through :func:`train_masked`, which trains many
  masked models at once with :func:`dynamics.sweep.train_many`;
- figure builders, live panels, :func:`claims`, :func:`precompute` and :func:`bench`.
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
from .runtime import get_profile, get_seed
from .sweep import train_many
from .train import History, train

HEAD = "head.weight"          # the output layer: pruned at a lower rate (Frankle & Carbin 2019)
VARIANTS = ("ticket", "reinit", "random")
VARIANT_NAMES = {"ticket": "winning ticket (IMP, rewound)",
                 "reinit": "same mask, random re-init",
                 "random": "random mask, same layer-wise sparsity"}
PAI_METHODS = ("snip", "synflow", "magnitude")
PAI_NAMES = {"imp": "IMP ticket", "snip": "SNIP", "synflow": "SynFlow",
             "magnitude": "magnitude at init"}
# Arora & Teuscher (2025), ResNet-20 on CIFAR-10 at 99.3% sparsity (abstract of the seed paper).
PAPER_COST = dict(sparsity=0.993, cts_acc=74.0, ltr_acc=68.3, cts_min=7.9, ltr_min=95.2)


# ============================================================================ settings


@dataclass
class LotteryConfig(Config):
    """IMP on a LeNet-300-100-like MLP (two hidden layers). Presets: smoke (CI, seconds),
    cpu (a few minutes), gpu (MNIST through torchvision when it can be downloaded)."""

    dataset: str = param("mnist1d", "MNIST-1D (offline), digits (offline) or MNIST (gpu)",
                         choices=("mnist1d", "digits", "mnist"), gpu="mnist")
    n_train: int = param(4000, "training examples (MNIST-1D / MNIST)", low=100, high=60000,
                         gpu=60000)
    n_test: int = param(2000, "test examples (MNIST-1D / MNIST)", low=100, high=10000,
                        gpu=10000)
    width: int = param(300, "hidden units per layer (2 hidden layers)", low=8, high=2048,
                       smoke=200, cpu=300, gpu=300)
    depth: int = param(2, "hidden layers", low=1, high=6)
    optimizer: str = param("adam", "optimizer", choices=("adam", "adamw", "momentum", "sgd"))
    lr: float = param(2e-3, "learning rate", low=1e-5, high=1.0, log=True, gpu=1.2e-3)
    batch_size: int = param(100, "mini-batch size", low=1, high=60000)
    steps: int = param(800, "training steps per round", low=10, high=100_000,
                       smoke=300, cpu=600, gpu=5000)
    rounds: int = param(14, "pruning rounds (each keeps 1 - prune_fraction of the weights)",
                        low=0, high=40, smoke=11, cpu=14, gpu=20)
    prune_fraction: float = param(0.2, "fraction of the remaining weights pruned per round",
                                  low=0.0, high=1.0, high_open=True)
    head_rate: float = param(0.5, "output layer pruned at this multiple of prune_fraction",
                             low=0.0, high=1.0)
    scope: str = param("global", "rank weights across all hidden layers, or within each layer",
                       choices=("global", "layer"))
    rewind_step: int = param(0, "reset survivors to their values at this step (0: init)",
                             low=0, high=100_000)
    seeds: int = param(1, "independent runs (seeds)", low=1, high=32, gpu=3)
    control_every: int = param(1, "train the controls at every n-th round (and the last)",
                               low=1, high=40, smoke=2)
    evals: int = param(20, "evaluations per training run", low=2, high=1000, smoke=6)

    @property
    def head_fraction(self) -> float:
        return self.prune_fraction * self.head_rate


def load_data(cfg: LotteryConfig, device=None) -> D.Dataset:
    """The dataset of ``cfg``; MNIST falls back to MNIST-1D when it cannot be downloaded."""
    if cfg.dataset == "digits":
        return D.digits(device=device)
    if cfg.dataset == "mnist":
        try:
            return D.torchvision_dataset("mnist", cfg.n_train, cfg.n_test, device=device)
        except RuntimeError as err:
            print(f"MNIST unavailable ({err}); using MNIST-1D instead")
    return D.mnist1d(cfg.n_train, cfg.n_test, seed=0, device=device)


def make_model(cfg: LotteryConfig, data: D.Dataset, seed: int | None = None) -> nn.Module:
    """The MLP (PyTorch's default init); ``seed`` seeds its initialization."""
    if seed is not None:
        torch.manual_seed(seed)
    return M.MLP(data.input_dim, cfg.width, cfg.depth, data.n_classes)


# ============================================================================ masks


def prunable(model: nn.Module) -> dict[str, torch.Tensor]:
    """The weights IMP prunes: every weight matrix (biases are kept, as in the papers)."""
    return {n: p for n, p in model.named_parameters() if p.ndim >= 2}


def full_masks(model: nn.Module) -> dict[str, torch.Tensor]:
    return {n: torch.ones_like(p) for n, p in prunable(model).items()}


def density(masks: dict[str, torch.Tensor]) -> float:
    """Fraction of the prunable weights remaining (1 - sparsity)."""
    kept = sum(float(m.sum()) for m in masks.values())
    return kept / sum(m.numel() for m in masks.values())


def _check_fraction(fraction: float, what: str = "pruning fraction") -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) \
            or not math.isfinite(fraction) or not 0.0 <= fraction < 1.0:
        raise ValueError(f"{what} must lie in [0, 1), got {fraction!r}")
    return float(fraction)


def _prune_group(scores: list[torch.Tensor], masks: list[torch.Tensor], fraction: float):
    """Zero the ``round(fraction * remaining)`` smallest scores among the entries still kept,
    ranked together across the group (what ``torch.nn.utils.prune`` does with L1Unstructured)."""
    flat_s = torch.cat([s.detach().reshape(-1) for s in scores])
    flat_m = torch.cat([m.reshape(-1) for m in masks]).clone()
    kept = torch.nonzero(flat_m > 0).flatten()
    k = round(fraction * len(kept))
    if k > 0:
        drop = torch.topk(flat_s[kept].abs(), k, largest=False).indices
        flat_m[kept[drop]] = 0
    out, start = [], 0
    for m in masks:
        out.append(flat_m[start:start + m.numel()].view_as(m))
        start += m.numel()
    return out


def prune_masks(scores: dict[str, torch.Tensor], masks: dict[str, torch.Tensor], fraction: float,
                scope: str = "global", head_fraction: float | None = None,
                head: str = HEAD) -> dict[str, torch.Tensor]:
    """New masks with ``fraction`` of the remaining weights removed: those with the smallest
    ``|score|`` (the trained weights for magnitude pruning; a saliency for pruning at init).

    ``scope="global"`` ranks all hidden layers together, so layers whose weights are small
    (large fan-in) lose more; ``"layer"`` prunes each layer by the same fraction. The output
    layer ``head`` is ranked on its own and pruned by ``head_fraction`` (default: half the
    rate), because its few weights are each more consequential (Frankle & Carbin 2019).
    The number removed is ``round(fraction * remaining)``, as in ``torch.nn.utils.prune``.
    """
    fraction = _check_fraction(fraction)
    head_fraction = _check_fraction(fraction / 2 if head_fraction is None else head_fraction,
                                    "head pruning fraction")
    if scope not in ("global", "layer"):
        raise ValueError(f"scope must be 'global' or 'layer', got {scope!r}")
    if set(scores) != set(masks):
        raise ValueError(f"scores and masks name different tensors: {sorted(scores)} vs {sorted(masks)}")
    body = [n for n in masks if n != head]
    groups = [(body, fraction)] if scope == "global" else [([n], fraction) for n in body]
    if head in masks:
        groups.append(([head], head_fraction))
    new = {}
    for names, frac in groups:
        if names:
            for n, m in zip(names, _prune_group([scores[n] for n in names],
                                                [masks[n] for n in names], frac)):
                new[n] = m
    return {n: new[n] for n in masks}


def masks_at_density(scores: dict[str, torch.Tensor], like: dict[str, torch.Tensor],
                     scope: str = "global", head: str = HEAD) -> dict[str, torch.Tensor]:
    """One-shot masks from ``scores`` that keep as many hidden weights (together, or per layer
    for ``scope="layer"``) and output weights as the masks ``like`` do: the way to compare a
    pruning-at-init method with an IMP ticket at exactly the same sparsity."""
    full = {n: torch.ones_like(m) for n, m in like.items()}
    body = [n for n in like if n != head]
    groups = [body] if scope == "global" else [[n] for n in body]
    if head in like:
        groups.append([head])
    out = {}
    for names in groups:
        total = sum(like[n].numel() for n in names)
        kept = sum(int(like[n].sum()) for n in names)
        frac = (total - kept) / total
        sub = prune_masks({n: scores[n] for n in names}, {n: full[n] for n in names}, frac,
                          scope="global", head_fraction=frac, head="")
        out.update(sub)
    return {n: out[n] for n in like}


def shuffle_masks(masks: dict[str, torch.Tensor], generator: torch.Generator | None = None):
    """Each layer's mask randomly permuted within the layer: a random mask with exactly the
    same layer-wise sparsity. Frankle et al. (2021) use it as a sanity check: a method whose
    accuracy survives it only chose *how many* weights to keep per layer, not *which*."""
    out = {}
    for n, m in masks.items():
        perm = torch.randperm(m.numel(), generator=generator).to(m.device)
        out[n] = m.reshape(-1)[perm].view_as(m)
    return out


def layer_densities(masks: dict[str, torch.Tensor]) -> dict[str, float]:
    return {n: float(m.mean()) for n, m in masks.items()}


# ============================================================================ pruning at init


def snip_scores(model: nn.Module, data: D.Dataset, n: int | None = 1000) -> dict[str, torch.Tensor]:
    """SNIP's connection sensitivity |θ ⊙ ∂L/∂θ| at initialization (Lee et al. 2019): the
    first-order change of the loss when a weight is removed, on ``n`` training examples."""
    params = prunable(model)
    x, y = data.x_train[:n], data.y_train[:n]
    grads = torch.autograd.grad(F.cross_entropy(model(x), y), list(params.values()))
    return {name: (p.detach() * g).abs() for (name, p), g in zip(params.items(), grads)}


def synflow_scores(model: nn.Module, masks: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """SynFlow's data-free saliency (Tanaka et al. 2020): with every parameter replaced by its
    absolute value (masked) and an all-ones input, R = 1ᵀ f(1) is the total "synaptic flow"
    through the network, and a weight's score is |θ ⊙ ∂R/∂θ|: the flow through it."""
    params = {n: p.detach().abs().double() for n, p in model.named_parameters()}
    for n, m in masks.items():
        params[n] = params[n] * m.double()
    leaves = {n: params[n].clone().requires_grad_(True) for n in masks}
    params.update(leaves)
    first = next(iter(prunable(model).values()))
    x = torch.ones(1, first.shape[1], dtype=torch.float64, device=first.device)
    out = torch.func.functional_call(model, params, (x,))
    grads = torch.autograd.grad(out.sum(), list(leaves.values()))
    return {n: (leaves[n] * g).detach().abs().float() for n, g in zip(leaves, grads)}


def synflow_masks(model: nn.Module, like: dict[str, torch.Tensor], iterations: int = 100,
                  scope: str = "global", head: str = HEAD) -> dict[str, torch.Tensor]:
    """SynFlow pruning to the per-group sparsity of ``like`` (hidden layers, output layer):
    ``iterations`` rounds on an exponential schedule (round i keeps ``d ** (i / iterations)``
    of each group, d its final density), rescoring after each, so that no layer is cut off
    entirely (layer collapse), which is what one-shot saliencies suffer at high sparsity."""
    body = [n for n in like if n != head]
    groups = [body] if scope == "global" else [[n] for n in body]
    if head in like:
        groups.append([head])
    final = [sum(float(like[n].sum()) for n in g) / sum(like[n].numel() for n in g) for g in groups]
    masks = {n: torch.ones_like(m) for n, m in like.items()}
    for i in range(1, iterations + 1):
        scores = synflow_scores(model, masks)
        for names, d in zip(groups, final):
            now = sum(float(masks[n].sum()) for n in names) / sum(masks[n].numel() for n in names)
            frac = min(max(0.0, 1.0 - d ** (i / iterations) / now), 1.0 - 1e-9) if now > 0 else 0.0
            masks.update(prune_masks({n: scores[n] for n in names}, {n: masks[n] for n in names},
                                     frac, scope="global", head=""))
    return masks


def pai_masks(method: str, model: nn.Module, data: D.Dataset, like: dict[str, torch.Tensor],
              scope: str = "global") -> dict[str, torch.Tensor]:
    """Masks chosen at initialization by ``method`` (snip, synflow, magnitude) with the same
    sparsity per group (hidden layers, output layer) as ``like``."""
    if method == "snip":
        return masks_at_density(snip_scores(model, data), like, scope)
    if method == "synflow":
        return synflow_masks(model, like, scope=scope)
    if method == "magnitude":
        return masks_at_density({n: p.detach() for n, p in prunable(model).items()}, like, scope)
    raise ValueError(f"unknown pruning-at-init method {method!r}; choose one of {list(PAI_METHODS)}")


# ============================================================================ training


def best_step(h: History, key: str = "test_acc") -> int:
    """The first evaluation step at which ``key`` is at its best: highest for accuracies,
    lowest for losses (``test_loss`` gives Frankle & Carbin's early-stopping iteration)."""
    values = h[key]
    if not len(values):
        return 0
    i = np.argmin(values) if "loss" in key else np.argmax(values)
    return int(h.steps[int(i)])


def train_masked(cfg: LotteryConfig, data: D.Dataset, inits: list, masks: list, seeds: list,
                 steps: int | None = None, progress: bool | None = None):
    """Train one model per (initial state, mask, seed) at once and return the
    :class:`~dynamics.sweep.SweepResult`. ``inits[k]`` is a state dict (or None: a fresh
    initialization seeded with ``seeds[k]``); ``masks[k]`` is applied at the start and after
    every optimizer step (pruned weights stay exactly zero), by ``train_many``'s
    ``param_masks``; ``seeds[k]`` also sets the mini-batch order."""
    if not (len(inits) == len(masks) == len(seeds)):
        raise ValueError("inits, masks and seeds must have the same length")
    steps = steps or cfg.steps
    configs = [dict(seed=int(s), init=k) for k, s in enumerate(seeds)]

    def model_fn(c):
        model = make_model(cfg, data)
        state = inits[c["init"]]
        if state is not None and not next(model.parameters()).is_meta:
            model.load_state_dict(state)
        return model

    every = max(1, steps // cfg.evals)
    return train_many(model_fn, data, configs, steps=steps, optimizer=cfg.optimizer, lr=cfg.lr,
                      batch_size=cfg.batch_size, eval_every=every,
                      param_masks=[m or None for m in masks], progress=progress)


def rewind_states(cfg: LotteryConfig, data: D.Dataset, seeds: list, steps: list[int]) -> list[dict]:
    """For each seed: the initial weights θ₀ and the dense network's weights θ_k after each
    of ``steps`` (one training run per seed, captured on the way): ``out[i][k]``."""
    out = []
    for s in seeds:
        model = make_model(cfg, data, seed=s)
        states = {0: _state(model)}
        want = sorted({int(k) for k in steps if k > 0})
        if want:
            def grab(step, history, m):
                if step in want:
                    states[step] = _state(m)
                return False
            train(model, data, steps=max(want), optimizer=cfg.optimizer, lr=cfg.lr,
                  batch_size=cfg.batch_size, eval_steps=want, callbacks=[grab], seed=s,
                  progress=False)
        out.append(states)
    return out


def _state(model: nn.Module) -> dict:
    return {n: t.detach().clone() for n, t in model.state_dict().items()}


@dataclass
class ImpResult:
    """An IMP curve: per round r (0 = dense) and seed, the density and each variant's final
    test accuracy, best test accuracy and its step, and early-stopping step; in memory only,
    the masks, θ₀ and the rewound weights θ_k (for :func:`run_pai`)."""

    config: dict
    seeds: list
    density: np.ndarray                    # [R+1] mean over seeds
    acc: dict                              # variant -> [S, R+1] final test accuracy
    best_acc: dict                         # variant -> [S, R+1] best test accuracy
    best_step: dict                        # variant -> [S, R+1] step of best test accuracy
    stop_step: dict                        # variant -> [S, R+1] step of lowest test loss
    round_time: list                       # wall seconds of each IMP round (all seeds at once)
    control_time: float = 0.0
    curves: dict = field(default_factory=dict)   # variant -> round -> test_acc curve (seed 0)
    eval_steps: list = field(default_factory=list)
    masks: list = field(default_factory=list, repr=False)      # [R+1][S] mask dicts
    rewound: list = field(default_factory=list, repr=False)    # [S] rewound state dicts
    inits: list = field(default_factory=list, repr=False)      # [S] θ₀ state dicts

    def round_at(self, low: float = 0.05, high: float = 0.10) -> int:
        """The sparsest round whose density lies in [low, high] (else the sparsest round)."""
        inside = [r for r, d in enumerate(self.density) if low <= d <= high]
        return inside[-1] if inside else len(self.density) - 1

    def to_dict(self) -> dict:
        return dict(config=self.config, seeds=self.seeds, density=self.density,
                    acc=self.acc, best_acc=self.best_acc, best_step=self.best_step,
                    stop_step=self.stop_step,
                    round_time=self.round_time, control_time=self.control_time,
                    curves=self.curves, eval_steps=self.eval_steps)

    @classmethod
    def from_dict(cls, d: dict) -> "ImpResult":
        arr = lambda m: {k: np.asarray(v, dtype=float) for k, v in m.items()}  # noqa: E731
        return cls(d["config"], d["seeds"], np.asarray(d["density"]), arr(d["acc"]),
                   arr(d["best_acc"]), arr(d["best_step"]), arr(d["stop_step"]), d["round_time"],
                   d.get("control_time", 0.0), d.get("curves", {}), d.get("eval_steps", []))


def run_imp(cfg: LotteryConfig, seeds=None, data: D.Dataset | None = None, controls=True,
            progress: bool | None = None, callback=None) -> ImpResult:
    """Iterative magnitude pruning with rewinding, and its two controls.

    Round 0 trains the dense network from the rewind point θ_k (θ₀ when ``rewind_step`` is 0);
    each later round prunes ``prune_fraction`` of the remaining weights with the smallest
    trained magnitude (:func:`prune_masks`), resets the survivors to θ_k and trains again.
    The controls train, at every round's mask: the same mask from a fresh random
    initialization (``reinit``), and a layer-wise shuffled mask from θ_k (``random``).
    All seeds of a round train at once; all controls train at once after the last round
    (``controls``: True for every ``control_every``-th round and the last, False for none, or
    a list of rounds).
    ``callback(result_so_far, round)`` is called after each round (live plots).
    """
    seeds = list(range(get_seed(), get_seed() + cfg.seeds)) if seeds is None else list(seeds)
    data = data or load_data(cfg)
    S, R = len(seeds), cfg.rounds
    states = rewind_states(cfg, data, seeds, [cfg.rewind_step])
    inits = [st[0] for st in states]
    rewound = [st[cfg.rewind_step] for st in states]
    masks = [{n: torch.ones_like(t) for n, t in st.items() if t.ndim >= 2} for st in rewound]
    shape = (S, R + 1)
    acc = {v: np.full(shape, np.nan) for v in VARIANTS}
    best = {v: np.full(shape, np.nan) for v in VARIANTS}
    bstep = {v: np.full(shape, np.nan) for v in VARIANTS}
    sstep = {v: np.full(shape, np.nan) for v in VARIANTS}
    dens = np.zeros(R + 1)
    all_masks, round_time, curves = [], [], {v: {} for v in VARIANTS}
    res = ImpResult(cfg.to_dict(), seeds, dens, acc, best, bstep, sstep, round_time, curves=curves,
                    masks=all_masks, rewound=rewound, inits=inits)
    for r in range(R + 1):
        all_masks.append(masks)
        dens[r] = np.mean([density(m) for m in masks])
        start = time.perf_counter()
        out = train_masked(cfg, data, rewound, [None if r == 0 else m for m in masks], seeds,
                           progress=progress)
        round_time.append(time.perf_counter() - start)
        res.eval_steps = list(out.histories[0].steps)
        for k, h in enumerate(out.histories):
            _record(res, "ticket", k, r, h)
            if r == 0:
                for v in ("reinit", "random"):
                    _record(res, v, k, 0, h)
        curves["ticket"][r] = list(out.histories[0]["test_acc"])
        if r < R:
            trained = [out.state_dict(k) for k in range(S)]
            masks = [prune_masks({n: trained[k][n] for n in masks[k]}, masks[k],
                                 cfg.prune_fraction, cfg.scope, cfg.head_fraction)
                     for k in range(S)]
        if callback is not None:
            callback(res, r)
    if controls is True:
        controls = sorted(set(range(cfg.control_every, R + 1, cfg.control_every)) | {R})
    rounds = [r for r in (controls or []) if 0 < r <= R]
    if rounds:
        run_controls(cfg, res, data, rounds, progress=progress)
        if callback is not None:
            callback(res, R)
    return res


def _record(res: ImpResult, variant: str, k: int, r: int, h: History) -> None:
    if h.diverged:
        return
    res.acc[variant][k, r] = h.last("test_acc")
    res.best_acc[variant][k, r] = float(np.max(h["test_acc"]))
    res.best_step[variant][k, r] = best_step(h)
    res.stop_step[variant][k, r] = best_step(h, "test_loss")


def run_controls(cfg: LotteryConfig, res: ImpResult, data: D.Dataset, rounds, progress=None) -> None:
    """Both controls at the given pruned rounds, all in one batched sweep."""
    gen = torch.Generator().manual_seed(10_000 + res.seeds[0])
    inits, masks, seeds, where = [], [], [], []
    for r in rounds:
        for k, s in enumerate(res.seeds):
            inits.append(None)  # reinit: a fresh initialization, seeded differently
            masks.append(res.masks[r][k])
            seeds.append(100_000 + 1000 * s + r)
            where.append(("reinit", k, r))
            inits.append(res.rewound[k])
            masks.append(shuffle_masks(res.masks[r][k], gen))
            seeds.append(s)
            where.append(("random", k, r))
    start = time.perf_counter()
    out = train_masked(cfg, data, inits, masks, seeds, progress=progress)
    res.control_time = time.perf_counter() - start
    for (v, k, r), h in zip(where, out.histories):
        _record(res, v, k, r, h)
        if k == 0:
            res.curves[v][r] = list(h["test_acc"])


def run_pai(cfg: LotteryConfig, imp: ImpResult, round: int | None = None, methods=PAI_METHODS,
            data: D.Dataset | None = None, progress: bool | None = None) -> dict:
    """Pruning at initialization vs the IMP ticket at the same sparsity, each with its mask
    as chosen and shuffled within every layer (Frankle et al. 2021's sanity check).

    At round ``round`` of ``imp`` (default: the sparsest with 5-10% of the weights left), each
    method scores θ₀ and keeps exactly as many hidden and output weights as the ticket does
    (:func:`pai_masks`); PaI masks train from θ₀, the ticket and its shuffle from θ_k. The IMP
    numbers are reused from ``imp`` when its controls covered that round."""
    data = data or load_data(cfg)
    r = imp.round_at() if round is None else int(round)
    if not 0 < r < len(imp.masks):
        raise ValueError(f"round must be one of the pruned rounds 1..{len(imp.masks) - 1}, got {r}")
    gen = torch.Generator().manual_seed(20_000 + imp.seeds[0])
    inits, masks, seeds, where, cost, layers = [], [], [], [], {}, {}
    for k, s in enumerate(imp.seeds):
        like = imp.masks[r][k]
        model = make_model(cfg, data)
        model.load_state_dict(imp.inits[k])
        for m in methods:
            start = time.perf_counter()
            mk = pai_masks(m, model, data, like, cfg.scope)
            cost.setdefault(m, []).append(time.perf_counter() - start)
            if k == 0:
                layers[m] = layer_densities(mk)
            for how, mask in (("original", mk), ("shuffled", shuffle_masks(mk, gen))):
                inits.append(imp.inits[k]), masks.append(mask), seeds.append(s)
                where.append((m, how, k))
        if k == 0:
            layers["imp"] = layer_densities(like)
        if np.isnan(imp.acc["random"][k, r]):
            inits.append(imp.rewound[k]), masks.append(shuffle_masks(like, gen)), seeds.append(s)
            where.append(("imp", "shuffled", k))
    S = len(imp.seeds)
    acc = {m: {"original": np.full(S, np.nan), "shuffled": np.full(S, np.nan)}
           for m in ("imp", *methods)}
    acc["imp"]["original"] = imp.acc["ticket"][:, r].copy()
    acc["imp"]["shuffled"] = imp.acc["random"][:, r].copy()
    start = time.perf_counter()
    out = train_masked(cfg, data, inits, masks, seeds, progress=progress)
    train_time = (time.perf_counter() - start) / max(1, len(inits))
    for (m, how, k), h in zip(where, out.histories):
        acc[m][how][k] = np.nan if h.diverged else h.last("test_acc")
    return dict(round=r, density=float(imp.density[r]), seeds=imp.seeds, acc=acc,
                dense=imp.acc["ticket"][:, 0].copy(), layers=layers,
                score_time={m: float(np.mean(v)) for m, v in cost.items()},
                train_time=train_time)


# ============================================================================ linear mode connectivity


def interpolate(a: dict, b: dict, alpha: float) -> dict:
    """(1 − α)·a + α·b, tensor by tensor: a point on the straight line between two networks."""
    return {n: torch.lerp(a[n], b[n], float(alpha)) for n in a}


@torch.no_grad()
def path_errors(model: nn.Module, a: dict, b: dict, x: torch.Tensor, y: torch.Tensor,
                n_points: int = 11) -> np.ndarray:
    """Test error of the networks on the segment from ``a`` to ``b`` at ``n_points`` evenly
    spaced α ∈ [0, 1]. Two runs are *linearly mode connected* when this stays flat."""
    if n_points < 2:
        raise ValueError(f"n_points must be at least 2, got {n_points}")
    errs = []
    for alpha in np.linspace(0.0, 1.0, n_points):
        out = torch.func.functional_call(model, interpolate(a, b, alpha), (x,))
        errs.append((out.argmax(1) != y).float().mean())
    return torch.stack(errs).cpu().numpy()


def barrier(errors) -> float:
    """Instability (Frankle et al. 2020): the highest error on the path minus the mean error
    of its two ends; near 0 means the two runs found one linearly connected minimum."""
    errors = np.asarray(errors, dtype=float)
    return float(errors.max() - 0.5 * (errors[0] + errors[-1]))


def run_lmc(cfg: LotteryConfig, rewind_steps=(0, 50, 200), seed: int | None = None,
            data: D.Dataset | None = None, masks: dict | None = None, n_points: int = 11,
            pair_seeds=(1, 2), progress: bool | None = None) -> dict:
    """Instability analysis: from the dense run's weights θ_k at each rewind step k, train two
    copies with different mini-batch orders (``pair_seeds``), optionally under one sparse
    ``mask``, and measure the test error along the straight line between the two results."""
    data = data or load_data(cfg)
    seed = get_seed() if seed is None else seed
    if len(pair_seeds) != 2 or pair_seeds[0] == pair_seeds[1]:
        raise ValueError(f"pair_seeds must be two different seeds, got {pair_seeds}")
    ks = sorted({int(k) for k in rewind_steps})
    states = rewind_states(cfg, data, [seed], ks)[0]
    inits = [states[k] for k in ks for _ in pair_seeds]
    seeds = [1000 * seed + p for _ in ks for p in pair_seeds]
    out = train_masked(cfg, data, inits, [masks] * len(inits), seeds, progress=progress)
    model = make_model(cfg, data).to(data.device)
    curves, barriers, ends = {}, {}, {}
    for i, k in enumerate(ks):
        a, b = out.state_dict(2 * i), out.state_dict(2 * i + 1)
        errs = path_errors(model, a, b, data.x_test, data.y_test, n_points)
        curves[k], barriers[k], ends[k] = errs.tolist(), barrier(errs), float(errs[[0, -1]].mean())
    return dict(rewind_steps=ks, alphas=np.linspace(0, 1, n_points).tolist(), errors=curves,
                barrier=barriers, end_error=ends, seed=seed,
                density=1.0 if masks is None else density(masks))


# ============================================================================ figures


def _pct(x) -> np.ndarray:
    return 100.0 * np.asarray(x, dtype=float)


def _band(fig, x, values, name, color, dash=None, pct=True):
    """Mean over seeds (rows of ``values``) with ±1 std error bars; NaN columns skipped."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    keep = ~np.all(np.isnan(values), axis=0)
    if not keep.any():
        return
    scale = 100.0 if pct else 1.0
    with np.errstate(all="ignore"):
        mean = np.nanmean(values[:, keep], axis=0) * scale
        std = np.nanstd(values[:, keep], axis=0) * scale if len(values) > 1 else None
    fig.add_scatter(x=np.asarray(x)[keep], y=mean, name=name, mode="lines+markers",
                    line=dict(color=color, dash=dash),
                    error_y=dict(type="data", array=std, visible=True, thickness=1) if std is not None else None)


def _percent_axis(fig) -> None:
    """A log x axis of percentages, sparser to the right, ticked at 1-2-5 steps."""
    fig.update_xaxes(autorange="reversed", tickvals=[100, 50, 20, 10, 5, 2, 1, 0.5, 0.2, 0.1],
                     ticktext=["100", "50", "20", "10", "5", "2", "1", "0.5", "0.2", "0.1"])


def imp_figure(res: ImpResult, title: str | None = None):
    """Test accuracy against the percentage of weights remaining (log axis, sparser to the
    right) for the winning ticket and both controls; the dense network as a dotted line."""
    x = _pct(res.density)
    n = len(res.seeds)
    fig = plots.figure(title or ("Iterative magnitude pruning, " + ("1 seed" if n == 1 else
                                 f"{n} seeds (mean ± std)")),
                       "weights remaining (%)", "test accuracy (%)", logx=True)
    for i, v in enumerate(VARIANTS):
        _band(fig, x, res.acc[v], VARIANT_NAMES[v], plots.PALETTE[i])
    dense = float(np.nanmean(res.acc["ticket"][:, 0])) * 100
    fig.add_scatter(x=[x.max(), x.min()], y=[dense, dense], mode="lines", name=f"dense: {dense:.1f}%",
                    line=dict(color="#555", dash="dot", width=1))
    _percent_axis(fig)
    fig.update_layout(hovermode="closest", legend=dict(x=0.01, y=0.02, yanchor="bottom"))
    return fig


def speed_figure(res: ImpResult, key: str = "stop_step", title: str | None = None):
    """When training is best, against the weights remaining: the early-stopping step (lowest
    test loss, ``stop_step``) or the step of best test accuracy (``best_step``)."""
    label = {"stop_step": "early-stopping step (lowest test loss)",
             "best_step": "step of best test accuracy"}[key]
    fig = plots.figure(title or "Tickets learn faster", "weights remaining (%)", label, logx=True)
    for i, v in enumerate(VARIANTS):
        _band(fig, _pct(res.density), getattr(res, key)[v], VARIANT_NAMES[v], plots.PALETTE[i],
              pct=False)
    _percent_axis(fig)
    fig.update_layout(hovermode="closest")
    return fig


def pai_figure(pai: dict, title: str | None = None):
    """Accuracy of each mask as chosen and shuffled within every layer, at one sparsity."""
    names = list(pai["acc"])
    fig = plots.figure(title or f"Pruning at initialization vs IMP at {100 * pai['density']:.1f}% "
                       "of the weights", "", "test accuracy (%)")
    for j, (how, color) in enumerate((("original", plots.PALETTE[0]), ("shuffled", plots.PALETTE[2]))):
        vals = [np.asarray(pai["acc"][m][how], dtype=float) for m in names]
        mean = [float(np.nanmean(v)) * 100 for v in vals]
        std = [float(np.nanstd(v)) * 100 for v in vals]
        fig.add_bar(x=[PAI_NAMES.get(m, m) for m in names], y=mean, name=f"mask {how}"
                    + (" within each layer" if how == "shuffled" else " by the method"),
                    marker_color=color, error_y=dict(type="data", array=std),
                    text=[f"{v:.1f}" for v in mean], textposition="outside")
    dense = float(np.nanmean(pai["dense"])) * 100
    labels = [PAI_NAMES.get(m, m) for m in names]
    fig.add_scatter(x=labels, y=[dense] * len(labels), mode="lines", name=f"dense: {dense:.1f}%",
                    line=dict(color="#555", dash="dot", width=1))
    fig.update_layout(barmode="group", hovermode="closest")
    return fig


def lmc_figure(lmc: dict, title: str | None = None):
    """Test error along the straight line between two runs from the same rewound weights,
    one curve per rewind step k; the legend gives each curve's error barrier."""
    fig = plots.figure(title or "Linear mode connectivity: error between two runs from θ_k",
                       "interpolation α (0: run A, 1: run B)", "test error (%)")
    for i, k in enumerate(lmc["rewind_steps"]):
        errs = lmc["errors"][k] if k in lmc["errors"] else lmc["errors"][str(k)]
        bar = lmc["barrier"][k] if k in lmc["barrier"] else lmc["barrier"][str(k)]
        fig.add_scatter(x=lmc["alphas"], y=_pct(errs), mode="lines+markers",
                        name=f"k = {k}: barrier {100 * bar:.1f} pts",
                        line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_layout(hovermode="closest")
    return fig


def barrier_figure(lmcs: dict, title: str = "Instability against rewind step"):
    """Error barrier against rewind step k, one line per setting (``{label: run_lmc result}``)."""
    fig = plots.figure(title, "rewind step k", "error barrier (points)")
    for i, (label, lmc) in enumerate(lmcs.items()):
        ks = lmc["rewind_steps"]
        bars = [lmc["barrier"][k] if k in lmc["barrier"] else lmc["barrier"][str(k)] for k in ks]
        fig.add_scatter(x=[max(k, 1) for k in ks], y=_pct(bars), name=label, mode="lines+markers",
                        line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_xaxes(type="log", title="rewind step k (k = 0 drawn at 1)")
    fig.update_layout(hovermode="closest")
    return fig


# ============================================================================ cost


DATASET_NAMES = {"mnist1d": "MNIST-1D", "digits": "digits", "mnist": "MNIST"}


def imp_cost(res: ImpResult, round: int | None = None) -> dict:
    """Measured wall seconds, per seed, of IMP up to ``round`` (the ticket exists only after
    training that many networks: rounds 0..round) and of one training (the median round)."""
    r = res.round_at() if round is None else round
    per_seed = len(res.seeds)
    return dict(round=r, density=float(res.density[r]), trainings=r + 1,
                imp_seconds=float(np.sum(res.round_time[:r + 1])) / per_seed,
                train_seconds=float(np.median(res.round_time)) / per_seed)


def _pai_seconds(c: dict, pai: dict, method: str) -> float:
    """Pruning at init costs its score at θ₀ plus one training (timed as IMP's median round)."""
    return pai["score_time"][method] + c["train_seconds"]


def cost_rows(res: ImpResult, pai: dict | None = None) -> list[dict]:
    """The seed paper's cost comparison beside this notebook's own measured cost."""
    p = PAPER_COST
    rows = [dict(method="Concrete Ticket Search (Arora & Teuscher 2025)",
                 setting=f"ResNet-20, CIFAR-10, {100 * p['sparsity']:.1f}% sparse",
                 accuracy=f"{p['cts_acc']:.1f}%", time=f"{p['cts_min']} min", source="paper"),
            dict(method="Lottery ticket rewinding (ibid.)",
                 setting=f"ResNet-20, CIFAR-10, {100 * p['sparsity']:.1f}% sparse",
                 accuracy=f"{p['ltr_acc']:.1f}%", time=f"{p['ltr_min']} min "
                 f"({p['ltr_min'] / p['cts_min']:.0f}x CTS)", source="paper")]
    c = imp_cost(res, None if pai is None else pai["round"])
    name = DATASET_NAMES.get(res.config["dataset"], res.config["dataset"])
    setting = (f"MLP {res.config['width']}x{res.config['depth']}, {name}, "
               f"{100 * (1 - c['density']):.1f}% sparse")
    ticket = np.nanmean(res.acc["ticket"][:, c["round"]]) * 100
    rows.append(dict(method=f"IMP, {c['trainings']} trainings (this page)", setting=setting,
                     accuracy=f"{ticket:.1f}%", time=f"{c['imp_seconds']:.1f} s", source="measured"))
    if pai is not None:
        for m in ("snip", "synflow"):
            if m in pai["acc"]:
                t = _pai_seconds(c, pai, m)
                acc = np.nanmean(pai["acc"][m]["original"]) * 100
                rows.append(dict(method=f"{PAI_NAMES[m]}: score at init + 1 training (this page)",
                                 setting=setting, accuracy=f"{acc:.1f}%",
                                 time=f"{t:.1f} s (IMP: {c['imp_seconds'] / t:.0f}x)",
                                 source="measured"))
    return rows


def cost_figure(res: ImpResult, pai: dict | None = None):
    """Bars of measured seconds per seed: one training, pruning at init, IMP to the ticket."""
    c = imp_cost(res, None if pai is None else pai["round"])
    labels, values = ["one training"], [c["train_seconds"]]
    if pai is not None:
        for m in ("snip", "synflow"):
            if m in pai["acc"]:
                labels.append(f"{PAI_NAMES[m]} + training")
                values.append(_pai_seconds(c, pai, m))
    labels.append(f"IMP ({c['trainings']} trainings)")
    values.append(c["imp_seconds"])
    return plots.bars(labels, values, title=f"Measured cost of a subnetwork with "
                      f"{100 * c['density']:.1f}% of the weights", ytitle="wall seconds (per seed)",
                      text_fmt="{:.1f} s")


# ============================================================================ claims


def claims(res: ImpResult, pai: dict | None = None, lmcs: dict | None = None) -> list[dict]:
    """Claims from the papers beside what this run measured (for the chapter's table);
    ``lmcs`` is ``{label: run_lmc result}``."""
    r = res.round_at()
    d = 100 * res.density[r]
    m = lambda v: 100 * float(np.nanmean(res.acc[v][:, r]))  # noqa: E731
    dense = 100 * float(np.nanmean(res.acc["ticket"][:, 0]))
    rows = [
        dict(claim="Winning tickets match the dense network at 10-20% of the weights or fewer",
             paper="Frankle & Carbin (2019): LeNet-300-100 on MNIST",
             measured=f"{d:.1f}% left: ticket {m('ticket'):.1f}% vs dense {dense:.1f}% "
             f"({m('ticket') - dense:+.1f} pts)"),
        dict(claim="Re-initializing the ticket destroys it",
             paper="Frankle & Carbin (2019)",
             measured=f"same mask, random init: {m('reinit'):.1f}% "
             f"({m('reinit') - m('ticket'):+.1f} pts vs ticket)"),
        dict(claim="A random mask with the same layer-wise sparsity does worse still",
             paper="Frankle & Carbin (2019); Frankle et al. (2021)",
             measured=f"{m('random'):.1f}% ({m('random') - m('ticket'):+.1f} pts vs ticket)"),
    ]
    stop = res.stop_step["ticket"]
    if np.isfinite(stop).any():
        rows.append(dict(claim="Tickets learn faster (earlier early-stopping step)",
                         paper="Frankle & Carbin (2019)",
                         measured=f"dense {np.nanmean(stop[:, 0]):.0f} steps, best ticket "
                         f"{np.nanmin(np.nanmean(stop, 0)):.0f} steps"))
    if pai is not None:
        a = pai["acc"]
        gap = lambda k: 100 * (np.nanmean(a[k]["original"]) - np.nanmean(a[k]["shuffled"]))  # noqa: E731
        pai_txt = ", ".join(f"{PAI_NAMES[k]} {100 * np.nanmean(a[k]['original']):.1f}% "
                            f"(shuffled {gap(k):+.1f} pts lower)" for k in a if k != "imp")
        rows.append(dict(claim="Pruning at init beats random but not IMP; shuffling its mask "
                         "within layers costs little, shuffling the IMP ticket a lot",
                         paper="Frankle et al. (2021)",
                         measured=f"at {100 * pai['density']:.1f}%: IMP "
                         f"{100 * np.nanmean(a['imp']['original']):.1f}% (shuffled {gap('imp'):+.1f} "
                         f"pts lower); {pai_txt}"))
    for label, lmc in (lmcs or {}).items():
        ks = lmc["rewind_steps"]
        bar = {int(k): v for k, v in lmc["barrier"].items()}
        rows.append(dict(claim="Small networks are stable at init; where training is unstable "
                         "at init it becomes stable after a few steps (rewinding point)",
                         paper="Frankle et al. (2020): LeNet stable at k = 0; ResNet-20, VGG-16 "
                         "after a few % of training",
                         measured=f"{label}: error barrier " + ", ".join(
                             f"{100 * bar[k]:.1f} pts at k = {k}" for k in ks)))
    return rows


# ============================================================================ panels


def like_masks(model: nn.Module, density: float, head_rate: float = 0.5) -> dict:
    """Masks that keep ``density`` of the hidden weights and ``density ** head_rate`` of the
    output layer's (IMP's ratio when the head is pruned at ``head_rate`` times the rate):
    only their counts matter, as the target of :func:`pai_masks`."""
    sparsity = _check_fraction(1.0 - float(density), "sparsity")
    out = {}
    for n, p in prunable(model).items():
        d = (1.0 - sparsity) ** (head_rate if n == HEAD else 1.0)
        flat = torch.zeros(p.numel(), device=p.device)
        flat[:max(1, round(d * p.numel()))] = 1.0
        out[n] = flat.view_as(p)
    return out


def imp_panel(profile: str | None = None, **overrides):
    """Try it: IMP with its controls; rounds, pruning rate, rewind step, global or per layer.
    ``overrides`` change the profile's config (e.g. a smaller model)."""
    from .widgets import Panel, controls_for

    base = LotteryConfig.for_profile(get_profile(profile), **overrides)

    def run(update, rounds, prune_fraction, rewind_step, scope):
        cfg = base.replace(rounds=int(rounds), prune_fraction=float(prune_fraction),
                           rewind_step=int(rewind_step), scope=scope, seeds=1)

        def progress(res, r):
            update(fig=imp_figure(res), progress=(r + 1) / (cfg.rounds + 2),
                   status=f"round {r}: {100 * res.density[r]:.1f}% of the weights")

        res = run_imp(cfg, callback=progress, progress=False)
        t = res.acc
        update(status=f"done: {100 * res.density[-1]:.1f}% of the weights: ticket "
               f"{100 * t['ticket'][0, -1]:.1f}%, re-init {100 * t['reinit'][0, -1]:.1f}%, "
               f"random mask {100 * t['random'][0, -1]:.1f}%, dense {100 * t['ticket'][0, 0]:.1f}%")
        return imp_figure(res)

    controls = controls_for(base, ["rounds", "prune_fraction", "rewind_step", "scope"])
    for c in controls:
        if c.name == "rewind_step":
            c.high = min(c.high, base.steps)
        if c.name == "rounds":
            c.high = 20
        if c.name == "prune_fraction":
            c.high = 0.9
    return Panel(run, controls, title="Try it: iterative magnitude pruning")


def pai_panel(profile: str | None = None, **overrides):
    """Try it: pruning at init at a chosen sparsity, each mask as chosen and shuffled."""
    from .widgets import Choice, Panel, Slider

    base = LotteryConfig.for_profile(get_profile(profile), **overrides)

    def run(update, sparsity, method):
        cfg = base.replace(seeds=1)
        data = load_data(cfg)
        model = make_model(cfg, data, seed=get_seed())
        like = like_masks(model, 1.0 - float(sparsity), cfg.head_rate)
        methods = PAI_METHODS if method == "all" else (method,)
        init = _state(model)
        gen = torch.Generator().manual_seed(get_seed())
        masks, labels = [], []
        for m in methods:
            mk = pai_masks(m, model, data, like, cfg.scope)
            masks += [mk, shuffle_masks(mk, gen)]
            labels += [(m, "original"), (m, "shuffled")]
        out = train_masked(cfg, data, [init] * (len(masks) + 1), [None] + masks,
                           [get_seed()] * (len(masks) + 1), progress=False)
        acc = {m: {"original": [np.nan], "shuffled": [np.nan]} for m in methods}
        for (m, how), h in zip(labels, out.histories[1:]):
            acc[m][how] = [np.nan if h.diverged else h.last("test_acc")]
        pai = dict(density=density(like), acc=acc, dense=[out.histories[0].last("test_acc")])
        return pai_figure(pai)

    return Panel(run, [Slider("sparsity", 0.5, 0.995, value=0.9, step=0.005),
                       Choice("method", ("all",) + PAI_METHODS)],
                 title="Try it: pruning at initialization and the shuffling check")


def lmc_panel(profile: str | None = None, **overrides):
    """Try it: instability of two runs from θ_k, against the learning rate."""
    from .widgets import Choice, Panel, Slider

    base = LotteryConfig.for_profile(get_profile(profile), **overrides)

    def run(update, lr, rewind_step, optimizer):
        cfg = base.replace(lr=float(lr), optimizer=optimizer)
        lmc = run_lmc(cfg, (0, int(rewind_step)), progress=False)
        return lmc_figure(lmc, f"Two runs from θ_k, {optimizer} lr {float(lr):.2g}")

    return Panel(run, [Slider("lr", 1e-4, 1e-1, value=1e-2, log=True),
                       Slider("rewind_step", 0, base.steps, value=50, integer=True),
                       Choice("optimizer", ("adam", "momentum", "sgd"))],
                 title="Try it: linear mode connectivity")


# ============================================================================ schedule helpers

PAI_DENSITY = 0.2   # the pruning-at-init comparison: about 20% of the weights left
INPUT_DIMS = {"mnist1d": 40, "digits": 64, "mnist": 784}


def expected_density(cfg: LotteryConfig, r: int, in_dim: int | None = None, n_classes: int = 10) -> float:
    """The fraction of weights left after ``r`` rounds of ``cfg`` (before running anything):
    hidden weights keep (1 − p)^r, the output layer (1 − p·head_rate)^r."""
    in_dim = in_dim or INPUT_DIMS[cfg.dataset]
    hidden = in_dim * cfg.width + (cfg.depth - 1) * cfg.width * cfg.width
    head = cfg.width * n_classes
    kept = hidden * (1 - cfg.prune_fraction) ** r + head * (1 - cfg.head_fraction) ** r
    return kept / (hidden + head)


def round_for(cfg: LotteryConfig, low: float, high: float) -> int:
    """The sparsest round of ``cfg`` whose expected density lies in [low, high]."""
    inside = [r for r in range(cfg.rounds + 1) if low <= expected_density(cfg, r) <= high]
    if not inside:
        raise ValueError(f"no round of {cfg.rounds} at {cfg.prune_fraction} per round leaves "
                         f"{100 * low:g}-{100 * high:g}% of the weights; add rounds")
    return inside[-1]


def round_near(cfg: LotteryConfig, target: float) -> int:
    """The pruned round of ``cfg`` whose expected density is closest to ``target`` (log scale)."""
    rounds = range(1, cfg.rounds + 1) if cfg.rounds > 0 else [0]
    return min(rounds, key=lambda r: abs(math.log(expected_density(cfg, r) / target)))


def layer_rows(pai: dict) -> list[dict]:
    """Each mask's density per layer (%): where a method puts the weights it keeps."""
    rows = []
    for m, layers in pai["layers"].items():
        row = {"mask": PAI_NAMES.get(m, m)}
        row.update({n.replace(".weight", ""): f"{100 * v:.1f}%" for n, v in layers.items()})
        rows.append(row)
    return rows


# ============================================================================ precomputed figures


def imp_runs(payload: dict) -> dict:
    """``{setting: ImpResult}`` from a loaded ``lottery_imp`` payload."""
    return {label: ImpResult.from_dict(d) for label, d in payload["imp"].items()}


def imp_slider(payload: dict):
    """The static counterpart of :func:`imp_panel`: IMP curves of several settings."""
    runs = imp_runs(payload)
    figs = [imp_figure(r, title=label) for label, r in runs.items()]
    return plots.slider(figs, [str(i + 1) for i in range(len(figs))], name="setting", active=0)


def pai_slider(payload: dict):
    """The static counterpart of :func:`pai_panel`: the comparison at several sparsities."""
    figs = [pai_figure(p) for p in payload["pai"]]
    labels = [f"{100 * p['density']:.1f}%" for p in payload["pai"]]
    return plots.slider(figs, labels, name="weights remaining")


def lmc_slider(payload: dict):
    """The static counterpart of :func:`lmc_panel`: error paths for several learning rates."""
    items = list(payload["lmc"].items())
    figs = [lmc_figure(l, title=f"Two runs from θ_k, Adam lr {label}") for label, l in items]
    return plots.slider(figs, [label for label, _ in items], name="learning rate")


def precompute(profile: str) -> list:
    """``python -m dynamics.precompute lottery_tickets --profile P``: IMP curves for several
    settings, pruning at init at several sparsities, and instability against rewind step for
    several learning rates; written to ``data/lottery_{imp,pai,lmc}.json``."""
    cfg = LotteryConfig.for_profile(profile)
    command = f"python -m dynamics.precompute lottery_tickets --profile {profile}"
    note = {"smoke": "Smoke scale.", "cpu": "CPU scale (MLP on MNIST-1D); the gpu profile "
            "regenerates it with MNIST and more seeds.", "gpu": "GPU scale."}[profile]
    data = load_data(cfg)
    n_main = {"smoke": 2, "cpu": 3, "gpu": 5}[profile]
    n_var = {"smoke": 1, "cpu": 1, "gpu": 3}[profile]
    seed = get_seed()
    hot = 1e-2
    settings = {
        f"global, reset to θ₀, {cfg.prune_fraction:.0%}/round ({n_main} seeds)": (cfg, n_main),
        "layer-wise pruning": (cfg.replace(scope="layer"), n_var),
        f"prune {2 * cfg.prune_fraction:.0%} per round": (
            cfg.replace(prune_fraction=2 * cfg.prune_fraction, rounds=max(1, cfg.rounds // 2)), n_var),
        f"Adam lr {hot:g}, reset to θ₀": (cfg.replace(lr=hot), n_var),
        f"Adam lr {hot:g}, rewind to step 50": (cfg.replace(lr=hot, rewind_step=50), n_var),
    }
    paths, start = [], time.perf_counter()
    imps = {}
    for label, (c, n) in settings.items():
        imps[label] = run_imp(c, seeds=list(range(seed, seed + n)), data=data, progress=False)
    main = next(iter(imps.values()))
    paths.append(results.save("lottery_imp", dict(imp={k: v.to_dict() for k, v in imps.items()}),
                              profile, config=cfg, command=command, note=note,
                              wall_time=time.perf_counter() - start))
    start = time.perf_counter()
    pais = []
    for target in (0.35, 0.2, 0.1, 0.05):
        r = min(range(1, len(main.density)), key=lambda i: abs(math.log(main.density[i] / target)))
        if not pais or pais[-1]["round"] != r:
            pais.append(run_pai(cfg, main, round=r, data=data, progress=False))
    paths.append(results.save("lottery_pai", dict(pai=pais), profile, config=cfg, command=command,
                              note=note, wall_time=time.perf_counter() - start))
    start = time.perf_counter()
    lmcs = {}
    for lr in (cfg.lr, 5e-3, hot):
        lmcs[f"{lr:g}"] = run_lmc(cfg.replace(lr=lr), (0, 10, 25, 50, 100, 200), seed=seed,
                                  data=data, progress=False)
    paths.append(results.save("lottery_lmc", dict(lmc=lmcs), profile, config=cfg, command=command,
                              note=note, wall_time=time.perf_counter() - start))
    return paths


def bench(profile: str | None = None, rounds: int = 10) -> dict:
    """``python -m dynamics.bench lottery``: wall (and CPU) seconds of a full ``rounds``-round
    IMP curve with both controls at every round, one seed, at the profile's scale."""
    profile = get_profile(profile)
    cfg = LotteryConfig.for_profile(profile, rounds=rounds, seeds=1)
    data = load_data(cfg)
    wall, cpu = time.perf_counter(), time.process_time()
    res = run_imp(cfg, seeds=[get_seed()], data=data, progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = (rounds + 1) + 2 * rounds
    print(f"lottery IMP curve: {wall:.1f} s wall ({cpu:.1f} s CPU) for {rounds} rounds + both "
          f"controls = {n} trainings of {cfg.steps} steps; MLP {cfg.width}x{cfg.depth} on "
          f"{data.name}, {profile} profile, device {data.device.type}, torch threads "
          f"{torch.get_num_threads()}", flush=True)
    print(f"  IMP rounds {sum(res.round_time):.1f} s, controls {res.control_time:.1f} s "
          f"(batched); final density {100 * res.density[-1]:.1f}%: ticket "
          f"{100 * res.acc['ticket'][0, -1]:.1f}%, reinit {100 * res.acc['reinit'][0, -1]:.1f}%, "
          f"random mask {100 * res.acc['random'][0, -1]:.1f}%, dense {100 * res.acc['ticket'][0, 0]:.1f}%",
          flush=True)
    return dict(wall=wall, cpu=cpu, trainings=n, profile=profile)
