"""Grokking, the algorithm the network finds: the clock in its first layer, division as
relabelled subtraction, the weight norm's descent (Omnigrok) and Muon against AdamW.

1. **The clock** (Nanda et al. 2023): the first-layer weights that read residue ``a``, seen
   in the plane of one key frequency k (the span of the real and imaginary parts of their
   Fourier coefficient at k), sit on a circle at angle 2πka/p; each neuron reads mostly one
   frequency. :func:`clock_measures` measures both, on the key frequencies the logits name
   (:func:`~.science.key_frequencies`), and the same numbers for the initial weights.
2. **Division** (:func:`discrete_log`, :func:`division_as_subtraction`): for p prime, a
   primitive root g turns ``a / b`` on the nonzero residues into ``log a - log b`` mod p - 1,
   a permutation of the one-hot inputs and outputs that the MLP does not see.
3. **The weight norm** (Liu, Michaud & Tegmark 2023, Omnigrok): :func:`norm_descent` reads
   how far the norm has fallen by the grok step; :func:`run_scaled` trains from an
   initialization scaled by a factor (the init-scale control).
4. **Muon against AdamW** (Tveit et al. 2025): :func:`optimizer_runs` gives each optimizer the
   same budget of learning rates around its own value, :func:`grok_muon` is the Muon recipe,
   with the split of the parameters said in :func:`muon_groups`.

Figures and claims rows for these are at the end (:func:`clock_figure`, :func:`neuron_figure`,
:func:`~.omnigrok.norm_figure`; their claims rows and thresholds are in :mod:`.claims`)."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn

from .. import data as D
from .. import models as M
from .. import plots
from ..train import Hooks, Optimizers, train
from .experiments import GrokRun, recipe
from .records import ClockMeasures, NormDescent, OptimizerRuns
from .science import (
    ADAM_BETAS, GROK_ACC, GrokConfig, fourier_spectrum, input_weights, key_frequencies,
    loss_and_hook, make_data, make_model, model_concentration, pair_logits,
    weight_norm,
)

__all__ = [
    "primitive_root", "discrete_log", "division_as_subtraction", "clock_points",
    "clock_measures", "initial_model", "norm_descent", "scale_init_", "run_scaled",
    "omnigrok_runs", "muon_groups", "grok_muon", "adamw_config", "run_optimizer",
    "optimizer_runs",
    "clock_figure", "neuron_figure", "optimizer_table",
    "INIT_SCALES", "NORM_BUILT", "LARGE_START", "SLOW_DECAY", "SLOW_KEY", "MUON_LRS", "LR_FACTORS",
]

# the init-scale controls: every parameter x these. NORM_BUILT starts above x1's start and below
# its memorizing peak; LARGE_START starts above that peak (x1's peak is 5.4x its start at the
# cpu profile): Omnigrok's large start
NORM_BUILT, LARGE_START = 4.0, 8.0
INIT_SCALES = (NORM_BUILT, LARGE_START)
# Omnigrok's regime of decay: the large start again with its weight decay divided by 100 (the
# page's eta*lambda 0.01 a step becomes 1e-4, the per-step decay of Omnigrok's MNIST script)
SLOW_DECAY = 0.01
SLOW_KEY = f"init x{LARGE_START:g}, decay ÷{1 / SLOW_DECAY:g}"
LR_FACTORS = (0.5, 1.0, 2.0)  # each optimizer's learning-rate budget, around its own value
MUON_LRS = 0.1    # Muon's own learning rate on the hidden matrix (its update's entries have
#                   RMS about 1/sqrt(width), AdamW's about 1: the same number is not the same step)


# ============================================================================ 2. division


def primitive_root(p: int) -> int:
    """The smallest generator g of the multiplicative group mod the prime ``p``: its powers
    g⁰ … g^(p-2) run through every nonzero residue once."""
    if p < 3 or any(p % d == 0 for d in range(2, int(p ** 0.5) + 1)):
        raise ValueError(f"a primitive root needs an odd prime modulus p, got p={p}")
    n, factors, d = p - 1, set(), 2
    while d * d <= n:
        while n % d == 0:
            factors.add(d)
            n //= d
        d += 1
    if n > 1:
        factors.add(n)
    for g in range(2, p):
        if all(pow(g, (p - 1) // q, p) != 1 for q in factors):
            return g
    raise ValueError(f"no primitive root mod {p}")  # unreachable for a prime


def discrete_log(p: int) -> tuple[int, dict[int, int]]:
    """``(g, log)``: a primitive root g mod ``p`` and ``log[a]`` with g^log[a] = a mod p for
    every nonzero residue a, log[a] in 0..p-2."""
    g = primitive_root(p)
    return g, {pow(g, k, p): k for k in range(p - 1)}


def division_as_subtraction(p: int) -> dict:
    """The division table on the nonzero residues, relabelled by the discrete logarithm:
    ``a / b = g^(log a - log b)``, so with ``a -> log a``, ``b -> log b`` and ``c -> log c``
    the table ``c = a / b`` becomes ``log c = (log a - log b) mod (p - 1)``, the subtraction
    table mod p - 1, exactly. Returns the two tables as ``[p-1, p-1]`` tensors indexed by the
    relabelled inputs (``relabelled``: log of a / b; ``subtraction``: (i - j) mod p - 1) and
    ``g``. (Pairs with a = 0 answer 0 whatever b: the one row a relabelling cannot reach.)"""
    g, log = discrete_log(p)
    exp = {k: a for a, k in log.items()}
    div = D.OPERATIONS["div"]
    i, j = torch.meshgrid(torch.arange(p - 1), torch.arange(p - 1), indexing="ij")
    a = torch.tensor([exp[int(k)] for k in i.reshape(-1)])
    b = torch.tensor([exp[int(k)] for k in j.reshape(-1)])
    c = div(a, b, p)
    relabelled = torch.tensor([log[int(v)] for v in c]).view(p - 1, p - 1)
    return dict(g=g, relabelled=relabelled, subtraction=(i - j) % (p - 1))


# ============================================================================ 1. the clock


def _fourier_plane(w: torch.Tensor, k: int) -> torch.Tensor:
    """An orthonormal basis ``[d, 2]`` of the plane spanned by the real and imaginary parts
    of the Fourier coefficient at ``k`` of the rows ``w`` ``[p, d]`` (residue a's weights)."""
    p = w.shape[0]
    a = torch.arange(p, dtype=torch.float64, device=w.device)
    phase = 2 * math.pi * k * a / p
    basis = torch.stack([w.double().T @ torch.cos(phase), w.double().T @ torch.sin(phase)], 1)
    q, _ = torch.linalg.qr(basis)
    return q


def clock_points(model: nn.Module, p: int, k: int, operand: int = 0) -> torch.Tensor:
    """Residue a's first-layer weights (centred over the residues) in the plane of frequency
    ``k``: ``[p, 2]``. For a network that computes with cos/sin(2πka/p) they lie on a
    circle, in the order of a times k."""
    w = input_weights(model, p)[operand].double()  # [p, d]
    w = w - w.mean(0, keepdim=True)
    return (w @ _fourier_plane(w, k)).float()


def _spread(points: torch.Tensor) -> float:
    """The radius spread of points about their centre: std / mean of the radius."""
    r = (points - points.mean(0, keepdim=True)).norm(dim=1)
    return float(r.std() / r.mean().clamp_min(1e-30))


def _neuron_tops(model: nn.Module, p: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per first-layer neuron: the share of its Fourier energy (k >= 1, both operands) at its
    top frequency, that frequency, and the neuron's energy."""
    e = fourier_spectrum(input_weights(model, p), per_unit=True)[1:(p - 1) // 2 + 1]  # k >= 1
    total = e.sum(0)
    top, arg = e.max(0)
    return top / total.clamp_min(1e-30), arg + 1, total


def clock_measures(model: nn.Module, initial: nn.Module, p: int, op: str = "add",
                   keys=None) -> ClockMeasures:
    """The clock of a trained MLP and the same numbers for its initial weights (the control),
    on the key frequencies ``keys`` (default: :func:`~.science.key_frequencies` of the trained
    model's logits, found, not chosen):

    - ``key_share``: share of the first layer's Fourier energy (k >= 1) on the keys, against
      the uniform null ``null`` = len(keys) / ((p - 1) / 2);
    - ``single``: the median over neurons (weighted by nothing) of the share of a neuron's
      energy at its top frequency; ``on_keys``: the share of the neurons (of those carrying
      energy above the median) whose top frequency is a key;
    - ``spread``: per key frequency, the radius spread (std / mean) of the residues' points in
      its plane (:func:`clock_points`, operand a), and its median.

    Each also for ``initial`` (``init_*``), with the same keys: a
    :class:`~.records.ClockMeasures`."""
    if op not in ("add", "sub"):
        raise ValueError(f"the clock is read for op 'add' or 'sub', not {op!r}")
    if not isinstance(model, M.MLP):
        raise ValueError("clock_measures reads an MLP's first layer")
    K = (p - 1) // 2
    keys = [int(k) for k in (keys if keys is not None else
                             key_frequencies(pair_logits(model, p), p, op))]

    def read(m: nn.Module) -> dict:
        e = fourier_spectrum(input_weights(m, p))[1:K + 1]
        share = float(e[[k - 1 for k in keys]].sum() / e.sum())
        single, top, energy = _neuron_tops(m, p)
        strong = energy >= energy.median()
        on_keys = float(torch.isin(top[strong], torch.tensor(keys, device=top.device)).float().mean())
        spreads = [_spread(clock_points(m, p, k)) for k in keys]
        return dict(key_share=share, single=float(single.median()), on_keys=on_keys,
                    spreads=spreads, spread=float(np.median(spreads)),
                    tops=top[strong].tolist())

    end, init = read(model), read(initial)
    return ClockMeasures.of(dict(keys=keys, K=K, null=len(keys) / K, **end,
                                 **{f"init_{k}": v for k, v in init.items()}))


def initial_model(run: GrokRun) -> nn.Module:
    """The run's network at step 0 (its first checkpoint, or rebuilt from its seed)."""
    m = make_model(run.config, run.seed)
    if run.checkpoints and run.checkpoints[0][0] == 0:
        m.load_state_dict(run.checkpoints[0][1])
    return m


# ============================================================================ 3. the weight norm


def norm_descent(run: GrokRun) -> NormDescent:
    """How the weight norm moves around the grok step (Omnigrok: grokking is the norm's way
    down from a large initialization to the "Goldilocks" norm where the generalizing
    solutions are). ``start``, ``peak`` (its largest value), ``grok`` (at the grok step) and
    ``end`` (the median of the last three evaluations, the norm the run settles at);
    ``peak_step``: where the norm peaks; ``done``: the share of the descent from the peak to
    the end already made at the grok step, (peak - grok) / (peak - end); ``fit_done``: the
    same at the fit step (0 where the norm has not yet peaked: its fall has not begun). A
    :class:`~.records.NormDescent`."""
    h = run.history
    steps, norm = list(h.steps), list(h["weight_norm"])
    at = dict(zip(steps, norm))
    peak, end = max(norm), float(np.median(norm[-3:]))
    grok, fit = run.grok_step, run.fit_step

    peak_step = steps[int(np.argmax(norm))]

    def done(step):
        if step is None or step not in at or peak - end <= 0:
            return float("nan")
        return 0.0 if step <= peak_step else (peak - at[step]) / (peak - end)

    return NormDescent(start=norm[0], peak=peak, end=end, grok=at.get(grok, float("nan")),
                       done=done(grok), fit_done=done(fit), grok_step=grok, fit_step=fit,
                       peak_step=peak_step)


@torch.no_grad()
def scale_init_(model: nn.Module, scale: float) -> nn.Module:
    """Multiply every initial parameter by ``scale`` (Omnigrok's α: the initial norm)."""
    if not scale > 0:
        raise ValueError(f"init scale must be positive, got {scale}")
    for p in model.parameters():
        p.mul_(scale)
    return model


def _train(cfg: GrokConfig, seed: int, model: nn.Module, data, optimizer=None,
           stop_at_grok: bool = True, label: str = "") -> GrokRun:
    """Train ``model`` with ``cfg``'s recipe (or ``optimizer``), recording the weight norm and
    the Fourier concentration as :func:`~.experiments.run` does."""
    _, hook = loss_and_hook(cfg)
    metrics = dict(weight_norm=lambda m, d: weight_norm(m),
                   fourier_top10=lambda m, d: model_concentration(m, cfg.p))
    stop = [lambda step, h, m: h.last("test_acc") > GROK_ACC] if stop_at_grok else []
    rec = recipe(cfg) if optimizer is None else recipe(cfg).replace(
        optimizer=optimizer, adam_lr=None)
    h = train(model.to(data.device), data, rec, metrics=metrics, hooks=Hooks(hook, on_eval=stop),
              seed=seed, bars=False, desc=label or f"{cfg.op} mod {cfg.p}")
    return GrokRun(cfg, h, model, data, seed)


def run_scaled(cfg: GrokConfig, seed: int, scale: float, data=None) -> GrokRun:
    """One run of ``cfg`` from its seed's initialization times ``scale`` (stops at the grok
    step)."""
    data = data if data is not None else make_data(cfg, seed)
    return _train(cfg, seed, scale_init_(make_model(cfg, seed), scale), data,
                  label=f"init x{scale:g}")


def omnigrok_runs(runs: dict) -> dict:
    """The init-scale control on each seed: ``runs`` ``{seed: GrokRun}`` (section 1's runs with
    weight decay) and, beside each, the same config, seed and split from its initialization
    times each of :data:`INIT_SCALES` (:func:`run_scaled`), and the large start again with its
    weight decay x :data:`SLOW_DECAY` (under the key :data:`SLOW_KEY`). Returns ``{seed:
    {scale: run}}``, scale 1 the run given."""
    slow = lambda c: c.replace(weight_decay=c.weight_decay * SLOW_DECAY)  # noqa: E731
    return {s: {1.0: r, **{x: run_scaled(r.config, s, x, data=r.data) for x in INIT_SCALES},
                SLOW_KEY: run_scaled(slow(r.config), s, LARGE_START, data=r.data)}
            for s, r in runs.items()}


# ============================================================================ 4. Muon


def muon_groups(model: nn.Module) -> tuple[list[str], list[str]]:
    """Which parameters Muon trains and which AdamW does, by name. ``torch.optim.Muon`` takes
    2-D matrices only, and Muon is meant for the hidden ones (Jordan et al. recommend AdamW
    for embeddings and the head): here the MLP's hidden matrices after the first. The first layer reads one-hot residues, so it *is* an
    embedding (each column the vector of one residue): it goes to AdamW with the head and
    every bias."""
    if not isinstance(model, M.MLP):
        raise ValueError("muon_groups splits the grokking MLP's parameters")
    hidden = {id(p) for p in model.hidden_matrices()[1:]}  # the model's own list, less the first
    muon = [n for n, p in model.named_parameters() if id(p) in hidden]
    adam = [n for n, p in model.named_parameters() if id(p) not in hidden]
    if not muon:
        raise ValueError("Muon needs a hidden matrix after the first layer: use depth >= 2")
    return muon, adam


def grok_muon(cfg: GrokConfig, muon_lr: float):
    """The Muon recipe as an optimizer factory: ``torch.optim.Muon`` (momentum 0.95, Nesterov)
    at ``muon_lr`` on :func:`muon_groups`' hidden matrices, with the weight decay that keeps
    AdamW's shrinking per step (``muon_lr`` x decay = ``cfg.lr`` x ``cfg.weight_decay``), and
    AdamW at ``cfg.lr`` on the rest."""
    if not hasattr(torch.optim, "Muon"):
        raise RuntimeError(f"torch.optim.Muon needs PyTorch >= 2.9; this is {torch.__version__}")
    if not muon_lr > 0:
        raise ValueError(f"Muon's learning rate must be positive, got {muon_lr}")

    def make(model: nn.Module):
        names = dict(model.named_parameters())
        muon, adam = muon_groups(model)
        decay = cfg.lr * cfg.weight_decay / muon_lr
        return Optimizers([
            torch.optim.Muon([names[n] for n in muon], lr=muon_lr, weight_decay=decay,
                             momentum=0.95),
            torch.optim.AdamW([names[n] for n in adam], lr=cfg.lr, betas=ADAM_BETAS["mlp"],
                              weight_decay=cfg.weight_decay)])
    return make


def adamw_config(cfg: GrokConfig, lr: float) -> GrokConfig:
    """``cfg`` with AdamW at learning rate ``lr`` and the recipe's clock: the weight decay
    scaled so that ``lr`` x decay = ``cfg.lr`` x ``cfg.weight_decay`` (a learning rate tried
    changes the step, not the clock 1/(eta lambda), as for Muon in :func:`grok_muon`)."""
    if not lr > 0:
        raise ValueError(f"AdamW's learning rate must be positive, got {lr}")
    return cfg.replace(lr=float(lr), weight_decay=cfg.lr * cfg.weight_decay / float(lr),
                       optimizer="adamw")


def run_optimizer(cfg: GrokConfig, seed: int, optimizer: str, lr: float, data=None) -> GrokRun:
    """One run that stops at its grok step: AdamW at learning rate ``lr`` with the recipe's
    clock (:func:`adamw_config`), or Muon at ``lr`` on the hidden matrix and AdamW at ``cfg.lr`` on the rest
    (:func:`grok_muon`)."""
    data = data if data is not None else make_data(cfg, seed)
    if optimizer == "adamw":
        c = adamw_config(cfg, lr)
        return _train(c, seed, make_model(c, seed), data, label=f"AdamW η {lr:g}")
    if optimizer == "muon":
        return _train(cfg.replace(optimizer="muon"), seed, make_model(cfg, seed), data,
                      optimizer=grok_muon(cfg, lr),
                      label=f"Muon η {lr:g}")
    raise ValueError(f"unknown optimizer {optimizer!r}; choose 'adamw' or 'muon'")


def optimizer_runs(cfg: GrokConfig, seeds, reuse=(), factors=LR_FACTORS,
                   muon_lr: float = MUON_LRS) -> dict[str, OptimizerRuns]:
    """AdamW against Muon with the same learning-rate budget: each tries ``factors`` x its own
    learning rate (AdamW: ``cfg.lr``, the chapter's tuned recipe; Muon: ``muon_lr``) on the
    first seed; its best (earliest grok step; a run that does not grok counts as the budget)
    is then run on the other seeds. ``reuse``: runs of ``cfg`` already made (AdamW at
    ``cfg.lr``), read instead of trained. Returns per optimizer the learning rates tried with
    their grok steps on the first seed, the best learning rate and ``{seed: grok step}`` (a
    :class:`~.records.OptimizerRuns`)."""
    seeds = [int(s) for s in seeds]
    own = dict(adamw=cfg.lr, muon=muon_lr)
    out = {}
    for opt, base in own.items():
        cache: dict = {}

        def get(seed, lr):
            if (seed, lr) not in cache:
                done = [r for r in reuse if opt == "adamw" and r.seed == seed
                        and r.config == adamw_config(cfg, lr)]
                cache[seed, lr] = (done[0] if done else run_optimizer(cfg, seed, opt, lr)).grok_step
            return cache[seed, lr]

        lrs = [base * f for f in factors]
        tried = {lr: get(seeds[0], lr) for lr in lrs}
        best = min(lrs, key=lambda lr: (tried[lr] is None, tried[lr] or 0))
        out[opt] = OptimizerRuns(tried=tried, best=best, grok={s: get(s, best) for s in seeds})
    return out


# ============================================================================ figures


def clock_figure(run: GrokRun, n: int = 3, title: str = "", keys=None):
    """The clock: residue a's first-layer weights in the plane of each of the ``n`` strongest
    key frequencies (read off the run's logits, :func:`~.science.key_frequencies`; top row:
    the trained network; bottom row: its initial weights in the same construction, the
    control), each point coloured by k·a mod p, the hour it should show on the clock of
    frequency k. ``keys``: other frequencies to show instead."""
    model, initial, p = run.model, initial_model(run), run.config.p
    if keys is None:
        keys = key_frequencies(pair_logits(model, p), p, run.config.op)
    e = fourier_spectrum(input_weights(model, p))
    shown = sorted(keys, key=lambda k: -float(e[k]))[:n]
    titles = [f"trained, k = {k}" for k in shown] + [f"initial, k = {k}" for k in shown]
    fig = plots.subplots(2, len(shown), titles=titles, title=title, height=560,
                         horizontal_spacing=0.06)
    for row, m in ((1, model), (2, initial)):
        for col, k in enumerate(shown, 1):
            pts = clock_points(m, p, k)
            hour = [(k * a) % p for a in range(p)]
            fig.add_scatter(x=pts[:, 0].tolist(), y=pts[:, 1].tolist(), mode="markers",
                            marker=dict(color=hour, colorscale="Twilight", cmin=0, cmax=p - 1,
                                        size=7), showlegend=False, name=f"k = {k}",
                            text=[f"a = {a}" for a in range(p)],
                            hovertemplate="%{text}<extra></extra>", row=row, col=col)
            fig.update_xaxes(showticklabels=False, row=row, col=col)
            fig.update_yaxes(showticklabels=False, scaleanchor=f"x{'' if (row, col) == (1, 1) else (row - 1) * len(shown) + col}",
                             row=row, col=col)
    fig.update_layout(hovermode="closest")
    return fig


def neuron_figure(run, title: str = ""):
    """Neurons cluster by frequency: how many of the stronger first-layer neurons have each
    frequency as their top one, at the end (bars) and at initialization (line); the key
    frequencies are the bars in colour. ``run``: a :class:`~.experiments.GrokRun` (its
    :func:`~.algorithm.clock_measures` are read here) or those measures."""
    measures = run if isinstance(run, ClockMeasures) else clock_measures(
        run.model, initial_model(run), run.config.p, run.config.op)
    K, keys = measures.K, set(measures.keys)
    ks = list(range(1, K + 1))
    count = lambda tops: [sum(t == k for t in tops) for k in ks]  # noqa: E731
    fig = plots.figure(title, "frequency k", "neurons whose top frequency is k")
    fig.add_bar(x=ks, y=count(measures.tops), name="trained (key frequency in colour)",
                marker_color=[plots.PALETTE[0] if k in keys else "#9e9e9e" for k in ks])
    fig.add_scatter(x=ks, y=count(measures.init_tops), name="initial", mode="lines+markers",
                    line=dict(color=plots.PALETTE[1], dash="dot"))
    fig.update_layout(hovermode="x unified")
    return fig



def optimizer_table(opt: dict[str, OptimizerRuns]):
    """The Muon-against-AdamW runs: each learning rate tried on the first seed, then each
    optimizer's best on every seed, with its grok step."""
    rows = []
    for name, o in opt.items():
        first = min(o.grok)
        for lr, g in o.tried.items():
            rows.append({"optimizer": name, "learning rate": lr, "seed": first, "grok step": g,
                         "best": "yes" if lr == o.best else ""})
        for s, g in o.grok.items():
            if s != first:
                rows.append({"optimizer": name, "learning rate": o.best, "seed": s,
                             "grok step": g, "best": "yes"})
    return plots.table(rows, missing="not within the budget")


# ============================================================================ claims


def _nan(v) -> float:
    return float("nan") if v is None else float(v)
