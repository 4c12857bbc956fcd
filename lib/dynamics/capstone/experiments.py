"""One network, six phenomena, the experiments: one run read by every chapter's measure, and
the four questions asked of it.

- :func:`run`: one run with its timeline (every measure at every evaluation) and kept states;
- :func:`init_sweep`: initial scales (lazy ↔ rich), many models at once (``train_many``);
- :func:`clock_grid`: learning rate x weight decay: the 1/(ηλ) clock, the time the norm takes
  to settle, and the grok step;
- :func:`optimizer_runs`: AdamW against Muon, each at its best learning rate of a few;
- :func:`lottery`: prune the grokked network by magnitude, rewind, retrain, with controls;
- :func:`collapse_timing`: does NC1 fall when test accuracy rises, or before?
- :func:`precompute_plan`: the grid init scale x weight decay x optimizer x seeds, into ``data/``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch
import torch.nn as nn

from .. import data as D
from .. import models as M
from .. import results, runtime, units
from ..grokking.algorithm import grok_muon
from ..grokking.experiments import evaluation_steps
from ..grokking.science import (
    ADAM_BETAS, Milestones, fit_and_grok, make_data, make_model, phase_of,
)
from ..lottery.science import density, full_masks, prune_masks, rewind, shuffle_masks
from ..runtime import dry_run, get_profile, get_seed
from ..sweep import train_many
from ..train import History, Hooks, Optimizers, Recipe, make_optimizer, muon_split, train
from .science import (
    MEASURES, STEP_READINGS, GridConfig, OneConfig, UpdateProbe, falls_step, measure,
    scale_init_, settle,
)

__all__ = [
    "OneRun", "GridRow", "Curve", "GridUnit", "CapstoneGrid", "optimizer_for", "hidden_shrink", "run", "plateau_window", "plateau_control", "summarize",
    "init_sweep", "clock_grid", "clock_fit", "grid_budget",
    "optimizer_runs", "lottery", "LOTTERY_ARMS", "collapse_timing", "live_grid", "grid_unit",
    "precompute_plan", "GRID_FILE",
]


GRID_FILE = "capstone_grid"  # data/capstone_grid.json
# what Muon trains in the MLP (the rest, the first layer and the head, on AdamW): said in
# the grid's provenance, so that a unit made with another split is computed again
MUON_TRAINS = "the hidden matrices after the first (grokking's muon_groups)"

# ============================================================================ one run


def optimizer_for(cfg: OneConfig, model: nn.Module):
    """AdamW with the model's betas (the grokking chapter's recipe); or Muon on the hidden
    matrices at its own learning rate ``muon_lr``, with the weight decay that keeps AdamW's
    clock (``muon_lr`` x its decay = ηλ: the same shrinking per step), and AdamW at η on
    the rest. Muon's orthogonalized step has entries of RMS about 1/√width where Adam's are
    about 1, so the same learning rate would be a much smaller step: each is tuned apart.
    Which matrices are hidden is the grokking chapter's split for its MLP
    (:func:`dynamics.grokking.algorithm.grok_muon`, by its ``muon_groups``): the first layer
    reads one-hot residues, so it is an embedding and goes to AdamW with the head, as
    Jordan et al. recommend; the transformer names its own in ``hidden_matrices()``."""
    betas = ADAM_BETAS[cfg.model]
    if cfg.optimizer == "adamw":
        return make_optimizer(model, "adamw", cfg.lr, cfg.weight_decay, betas=betas)
    if isinstance(model, M.MLP):
        return grok_muon(cfg.grok(), cfg.muon_lr)(model)
    hidden, other = muon_split(model)
    decay = cfg.lr * cfg.weight_decay / cfg.muon_lr
    opts = [torch.optim.Muon(hidden, lr=cfg.muon_lr, weight_decay=decay, momentum=0.95)]
    if other:
        opts.append(torch.optim.AdamW(other, lr=cfg.lr, betas=betas,
                                      weight_decay=cfg.weight_decay))
    return Optimizers(opts)



def hidden_shrink(cfg: OneConfig) -> float:
    """The factor ηλ by which :func:`optimizer_for` shrinks the hidden matrices each step,
    the same in both arms: AdamW's ``lr`` x ``weight_decay``; Muon's ``muon_lr`` x its decay
    ``lr`` x ``weight_decay`` / ``muon_lr`` (the clock kept). What
    :func:`~.science.decoupled_step` takes out of an update to leave the optimizer's step."""
    return cfg.lr * cfg.weight_decay


@dataclass
class OneRun(Milestones):
    """One trained run: config, history, final model, data, the ``timeline`` (``step`` and
    each of :data:`~.science.MEASURES`, aligned) and ``states`` kept at chosen steps."""

    config: OneConfig
    history: History
    model: nn.Module
    data: D.Dataset
    seed: int = 0
    timeline: dict = field(default_factory=dict)
    states: dict = field(default_factory=dict, repr=False)

    def summary(self) -> dict:
        return summarize(self.config, self.history, self.timeline)


def summarize(cfg: OneConfig, h: History, timeline: dict | None = None) -> dict:
    """One run in numbers: fit and grok steps, phase, final accuracies, the clock τ, the
    step the weight RMS settles and, when it does not, why (``settle``: when the timeline or
    the history has the RMS) and the status."""
    fit, grok = fit_and_grok(h)
    tau = 1.0 / (cfg.lr * cfg.weight_decay) if cfg.weight_decay > 0 else float("inf")
    out = dict(fit_step=fit, grok_step=grok, phase=phase_of(h, p=cfg.p), tau=tau,
               final_train_acc=h.last("train_acc") if len(h) else float("nan"),
               final_test_acc=h.last("test_acc") if len(h) else float("nan"), status=h.status)
    st = (settle(timeline["step"], timeline["weight_rms"]) if timeline and timeline.get("weight_rms")
          else settle(h.steps, h["weight_rms"]) if "weight_rms" in h else None)
    if st is not None:  # the step, and why there is none (:func:`~.science.settle`)
        out["settle_step"], out["settle"] = st["step"], st["why"]
    return out


def _state(model: nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def run(cfg: OneConfig, seed: int | None = None, *, data: D.Dataset | None = None, keep=None,
        on_eval=(), bars: bool | None = None, timeline: dict | None = None) -> OneRun:
    """Train the grokking chapter's model on its task once, full batch, with the initial
    weights scaled by ``cfg.init_scale``, and read every measure at every evaluation
    (:func:`~.science.measure` on the training set, and the rank of the update of the step
    just taken, whole and with the decay term taken out, and
    :func:`~.science.step_readings` of that step). ``keep``: steps whose parameters are kept, each exactly at its step whether
    or not it is evaluated (by default θ₀ and θ_k at ``cfg.rewind_step``, for rewinding);
    ``on_eval``: ``train`` hooks (a live panel's redraw); ``timeline``: a
    dict the caller reads while it trains (filled under the key ``"timeline"``)."""
    seed = get_seed(seed)
    g = cfg.grok()
    data = data if data is not None else make_data(g, seed)
    model = scale_init_(make_model(g, seed), cfg.init_scale).to(data.device)
    evals = evaluation_steps(cfg.steps, cfg.n_evals)
    probe = UpdateProbe(model, evals, shrink=hidden_shrink(cfg))
    box, timeline = timeline, {k: [] for k in ("step", *MEASURES, *STEP_READINGS)}
    if box is not None:
        box["timeline"] = timeline
    keep = {int(s) for s in ((0, cfg.rewind_step) if keep is None else keep)}
    if any(s < 0 for s in keep):
        raise ValueError(f"keep: steps to keep must be >= 0, got {sorted(keep)}")
    # each kept at exactly its step (after that many optimizer steps), evaluated or not
    states = {0: _state(model)} if 0 in keep else {}

    def after_step(m, step) -> None:
        probe.after_step(m, step)
        if step in keep:
            states[step] = _state(m)

    def record(step, history, m) -> bool:
        values = measure(m, data.x_train, data.y_train, cfg.p)
        values["update_rank"] = probe.rank.pop(step, float("nan"))
        values["step_rank"] = probe.step_rank.pop(step, float("nan"))
        values.update(probe.readings.pop(step, dict.fromkeys(STEP_READINGS, float("nan"))))
        timeline["step"].append(step)
        for k in (*MEASURES, *STEP_READINGS):
            timeline[k].append(values[k])
        return False

    recipe = Recipe(cfg.steps, optimizer=lambda m: optimizer_for(cfg, m), eval=evals)
    h = train(model, data, recipe, seed=seed, bars=bars,
              hooks=Hooks(probe.before_step, after_step, on_eval=[record, *Hooks(on_eval=on_eval).on_eval]),
              desc=f"{cfg.optimizer}, init x{cfg.init_scale:g}")
    return OneRun(cfg, h, model, data, seed, timeline, states)


def plateau_window(r: OneRun) -> tuple[int | None, int]:
    """The steps section 1's plateau row reads: from the fit step to the grok step (to the
    last evaluation when the run never groks)."""
    return r.fit_step, (r.grok_step if r.grok_step is not None else r.history.steps[-1])


def plateau_control(firsts: dict) -> dict:
    """The control of the plateau row and of the grokking row: each run of ``firsts``
    (``{seed: run}``) again without weight decay (λ = 0, the same seed, split, initialization
    and learning rate), evaluated at the same steps, to the end of the budget (a control
    stopped early could not show a late climb). Without decay this network memorizes and does
    not generalize within the budget (the grokking chapter's row), so its weights over the
    same steps say what training on without the decay's pressure does."""
    return {seed: run(r.config.replace(weight_decay=0.0), seed, data=r.data, keep=())
            for seed, r in firsts.items()}


# ============================================================================ many at once


@dataclass(kw_only=True)
class GridRow(results.Record):
    """One cell of a sweep in numbers (:func:`init_sweep`, :func:`clock_grid`, the grid's
    rows): the cell (``init_scale``, ``weight_decay``, ``seed``, ``optimizer``, ``lr``, and
    Muon's own ``muon_lr``), :func:`summarize`'s numbers and, where the weight RMS was
    recorded, the step it settles and why (``settle_step``, ``settle``; None, and not
    written, where it was not)."""

    init_scale: float
    weight_decay: float
    seed: int
    optimizer: str
    fit_step: int | None
    grok_step: int | None
    phase: str
    tau: float
    final_train_acc: float
    final_test_acc: float
    status: str
    settle_step: int | None = None
    settle: str | None = None
    lr: float
    muon_lr: float | None = None

    def to_dict(self) -> dict:
        """The payload: no ``muon_lr`` for AdamW, no settle fields where the RMS was not
        recorded (the rows as the grid's units write them)."""
        skip = {"muon_lr"} if self.muon_lr is None else set()
        skip |= {"settle_step", "settle"} if self.settle is None else set()
        return {k: v for k, v in super().to_dict().items() if k not in skip}


@dataclass
class Curve(results.Record):
    """A grid run's curves, at its evaluation steps."""

    steps: list
    train_acc: list
    test_acc: list
    weight_rms: list


@dataclass(kw_only=True)
class GridUnit(results.Record):
    """:func:`grid_unit`'s result: the table ``rows`` and each run's ``curves``, in order."""

    rows: list[GridRow]
    curves: list[Curve]


@dataclass(kw_only=True)
class CapstoneGrid(GridUnit):
    """``data/capstone_grid.json``: the grid's ``rows`` and ``curves`` (initial scale x weight
    decay x optimizer x seed) and the ``clock`` grid's rows (learning rate x weight decay)."""

    clock: list[GridRow]


def _row(cell: OneConfig, c: dict, h: History, timeline: dict | None = None, **more) -> GridRow:
    """A sweep's row: the cell ``c`` (its own keys first), its config's learning rate and
    weight decay where ``c`` has none, and :func:`summarize`'s numbers."""
    return GridRow(**{"lr": cell.lr, "weight_decay": cell.weight_decay, **c, **more,
                      "optimizer": cell.optimizer, **summarize(cell, h, timeline)})


def _rows(cfg: OneConfig, configs, sweep) -> list[GridRow]:
    rows = []
    for c, h in zip(configs, sweep.histories):
        cell = cfg.replace(**{k: c[k] for k in ("lr", "weight_decay", "init_scale") if k in c})
        rows.append(_row(cell, c, h))
    return rows


def _many(cfg: OneConfig, cells: list[dict], bars=None, norms: bool = False):
    """``train_many`` over ``cells`` (each: lr, weight_decay, init_scale, seed) on one split
    per seed (the cells of a seed share it, as in :func:`run`): AdamW only, the sweep
    engine's optimizer. ``norms`` records the weight RMS at every evaluation."""
    if cfg.optimizer != "adamw":
        raise ValueError("the batched sweeps train AdamW (train_many has no Muon)")
    g = cfg.grok()
    metrics = None
    if norms:
        from ..grokking.science import weight_norm
        from .science import numel
        metrics = dict(weight_rms=lambda m, d: float(weight_norm(m)) / math.sqrt(numel(m)))
    rows, sweeps = [], []
    for seed in sorted({c["seed"] for c in cells}):
        part = [c for c in cells if c["seed"] == seed]
        data = make_data(g, seed)
        recipe = Recipe(cfg.steps, lr=cfg.lr, weight_decay=cfg.weight_decay,
                        betas=ADAM_BETAS[cfg.model], eval=evaluation_steps(cfg.steps, cfg.n_evals))
        out = train_many(lambda c: make_model(g, c["seed"]), data, part, recipe, metrics=metrics,
                         strategy="sequential" if cfg.model == "transformer" else "auto",
                         bars=bars)
        rows += _rows(cfg, part, out)
        sweeps.append(out)
    return rows, sweeps


def init_sweep(cfg: OneConfig, scales, seeds=(0,), bars=None, reuse=()) -> list[GridRow]:
    """Fit and grok steps per initial scale (every parameter x ``scale``) and seed.
    ``reuse``: runs already made (:func:`run`, same config and seed) instead of training them."""
    cells = [dict(init_scale=float(s), seed=int(seed)) for seed in seeds for s in scales]
    return _cells(cfg, cells, reuse, bars)


def clock_grid(cfg: OneConfig, lrs, weight_decays, seeds=(0,), bars=None,
               reuse=()) -> list[GridRow]:
    """Learning rate x weight decay (AdamW, initial scale ``cfg.init_scale``): per cell the
    clock τ = 1/(ηλ), the step the weight RMS settles (:func:`~.science.settle_step`) and
    the fit and grok steps. ``reuse``: runs already made, as in :func:`init_sweep`."""
    if min(weight_decays) <= 0:
        raise ValueError("the clock 1/(ηλ) needs weight decays > 0")
    cells = [dict(lr=float(lr), weight_decay=float(wd), init_scale=cfg.init_scale, seed=int(s))
             for s in seeds for lr in lrs for wd in weight_decays]
    return _cells(cfg, cells, reuse, bars, norms=True)


def _cells(cfg: OneConfig, cells: list[dict], reuse, bars, norms: bool = False):
    """The rows of ``cells`` in their order: a cell that a run in ``reuse`` already made (same
    config and seed) is read from it, the others are trained together (:func:`_many`). A dry
    run trains the first and last of those."""
    def made(c):
        want = cfg.replace(**{k: c[k] for k in ("lr", "weight_decay", "init_scale") if k in c})
        return next((r for r in reuse if r.seed == c["seed"] and r.config == want), None)

    done = [made(c) for c in cells]
    todo = [c for c, r in zip(cells, done) if r is None]
    kept = runtime.grid(todo)
    trained = iter(_many(cfg, kept, bars, norms)[0] if kept else ())
    rows = []
    for c, r in zip(cells, done):
        if r is not None:
            rows.append(_row(r.config, c, r.history, r.timeline))
        elif c in kept:
            rows.append(next(trained))
    return rows


def grid_budget(payload: GridUnit) -> int:
    """The steps each run of the precomputed grid trained (its curves' last step)."""
    return int(max(c.steps[-1] for c in payload.curves)) if payload.curves else 0


def clock_fit(rows: list[GridRow], x: str = "tau") -> dict:
    """Least squares of log(grok step) on log(``x``) over the cells that grokked (``x``:
    ``tau`` or ``settle_step``): slope, intercept, r² and the cells where it fails (never
    grokked, or off the fit by more than 2x)."""
    ok = [r for r in rows if r.grok_step is not None and getattr(r, x)
          and math.isfinite(getattr(r, x))]
    failed = [r for r in rows if r not in ok]
    if len(ok) < 3 or len({getattr(r, x) for r in ok}) < 2:
        return dict(slope=float("nan"), intercept=float("nan"), r2=float("nan"), n=len(ok),
                    failed=failed, off=[])
    lx = np.log([getattr(r, x) for r in ok])
    ly = np.log([r.grok_step for r in ok])
    slope, intercept = np.polyfit(lx, ly, 1)
    pred = slope * lx + intercept
    ss = ((ly - ly.mean()) ** 2).sum()
    r2 = 1 - ((ly - pred) ** 2).sum() / ss if ss > 0 else float("nan")
    off = [r for r, e in zip(ok, np.abs(ly - pred)) if e > math.log(2)]
    return dict(slope=float(slope), intercept=float(intercept), r2=float(r2), n=len(ok),
                failed=failed, off=off)


# ============================================================================ optimizers


def optimizer_runs(cfg: OneConfig, seed: int | None = None, lrs=None, reuse=()) -> dict:
    """AdamW against Muon at matched tuning: each optimizer at each of its learning rates
    (``lrs``: ``{"adamw": [η, ...], "muon": [Muon's η, ...]}``, by default
    :meth:`~.science.GridConfig.learning_rates` of the smoke grid), the same task, init and
    budget, and the same clock: every run keeps ``cfg``'s ηλ (Muon's weight decay by
    :func:`optimizer_for`, AdamW's as λ = ``cfg.lr`` x ``cfg.weight_decay`` / η), so that a
    learning rate changes the step and not the time weight decay takes (at a fixed λ a larger
    η would also shorten the clock 1/(ηλ)). The best of each (earliest grok, else highest
    final test accuracy) is returned with what it tried. ``reuse``: runs already made (same
    config and seed) instead of training them."""
    seed = get_seed(seed)
    lrs = lrs or GridConfig.for_profile("smoke").learning_rates(cfg)
    out = {}
    for opt, values in lrs.items():
        if opt not in ("adamw", "muon"):
            raise ValueError(f"unknown optimizer {opt!r}; choose 'adamw' or 'muon'")
        tried = []
        for lr in values:
            if opt == "adamw":  # the same clock ηλ as cfg's
                c = cfg.replace(optimizer=opt, lr=float(lr), weight_decay=(
                    cfg.weight_decay if lr == cfg.lr else cfg.lr * cfg.weight_decay / float(lr)))
            else:
                c = cfg.replace(optimizer=opt, muon_lr=float(lr))
            done = [r for r in reuse if r.seed == seed and r.config == c]
            tried.append(done[0] if done else run(c, seed))
        best = min(tried, key=lambda r: (r.grok_step is None, r.grok_step or 0,
                                         -r.history.last("test_acc")))
        out[opt] = dict(best=best, tried=[(r.config.lr if opt == "adamw" else r.config.muon_lr,
                                           r.summary()) for r in tried])
    return out


# ============================================================================ lottery tickets

LOTTERY_ARMS = ("dense", "ticket, rewound to θ₀", "ticket, rewound to θ_k", "random mask, θ₀",
                "ticket, reinitialized")


def lottery(first: OneRun, keep_frac: float | None = None, rewind_step: int | None = None,
            bars=None) -> dict:
    """Prune the grokked network ``first`` by magnitude (the ``1 - keep_frac`` smallest of its
    final weight matrices, globally, the head at half the rate: the lottery chapter's
    ``prune_masks``), rewind the survivors to θ₀ and to θ_k (``rewind_step``, one of the
    steps ``first`` kept), and retrain with the same recipe, next to two controls: the same
    layer-wise sparsity with a random mask from θ₀ (``shuffle_masks``) and the ticket's mask
    on a fresh initialization. Trained together by ``train_many``; the dense run is
    ``first`` itself. Returns per arm its summary and curves."""
    cfg = first.config
    keep_frac = cfg.keep_frac if keep_frac is None else keep_frac
    rewind_step = cfg.rewind_step if rewind_step is None else rewind_step
    if cfg.optimizer != "adamw":
        raise ValueError("the lottery experiment retrains with AdamW (the sweep engine's)")
    if 0 not in first.states:
        raise ValueError("the lottery experiment needs a run that kept θ₀ (keep=(0, ...))")
    if rewind_step in first.states:
        k = rewind_step
    elif dry_run():  # a dry run trains too few steps to reach θ_k: the nearest kept state
        k = min(first.states, key=lambda s: abs(s - rewind_step))
    else:
        raise ValueError(f"rewind_step: the run kept no state at step {rewind_step}; it kept "
                         f"{sorted(first.states)} (run it with keep=(0, {rewind_step}))")
    g = cfg.grok()
    final = {n: t.detach() for n, t in first.model.state_dict().items()}
    masks = prune_masks({n: final[n] for n in full_masks(final)}, full_masks(final),
                        1.0 - keep_frac)
    gen = torch.Generator().manual_seed(first.seed + 101)
    random_masks = shuffle_masks(masks, gen)  # on the masks' device (its draws on gen's CPU)
    fresh = _state(scale_init_(make_model(g, first.seed + 1000), cfg.init_scale)
                   .to(first.data.device))  # where θ₀, θ_k and the masks are
    starts = {"ticket, rewound to θ₀": (first.states[0], masks),
              "ticket, rewound to θ_k": (first.states[k], masks),
              "random mask, θ₀": (first.states[0], random_masks),
              "ticket, reinitialized": (fresh, masks)}
    names = list(starts)
    inits = [rewind(s, m) for s, m in starts.values()]

    def model_fn(c):
        model = make_model(g, 0)
        if next(model.parameters()).is_meta:  # the sweep sizing its chunks: shapes only
            return model
        model.load_state_dict({n: t.cpu() for n, t in inits[c["arm"]].items()})
        return model

    configs = [dict(arm=i, seed=first.seed) for i in range(len(names))]
    recipe = Recipe(cfg.steps, lr=cfg.lr, weight_decay=cfg.weight_decay,
                    betas=ADAM_BETAS[cfg.model], eval=evaluation_steps(cfg.steps, cfg.n_evals))
    param_masks = [{n: m.to(first.data.device) for n, m in starts[n_][1].items()} for n_ in names]
    sweep = train_many(model_fn, first.data, configs, recipe, masks=dict(params=param_masks),
                       strategy="sequential" if cfg.model == "transformer" else "batched",
                       bars=bars)
    arms = {"dense": first.history, **dict(zip(names, sweep.histories))}
    out = dict(density=density(masks), rewind_step=k, arms={})
    for name, h in arms.items():
        out["arms"][name] = dict(summarize(cfg, h), steps=list(h.steps),
                                 train_acc=list(h["train_acc"]), test_acc=list(h["test_acc"]))
    return out


# ============================================================================ collapse


def collapse_timing(r: OneRun) -> dict:
    """When NC1 falls (below half its value at the fit step, :func:`~.science.falls_step`)
    against the grok step: ``lead`` > 0 when it falls before the test accuracy rises."""
    tl = r.timeline
    fit, grok = r.fit_step, r.grok_step
    falls = falls_step(tl["step"], tl["nc1"], fit)
    at = {s: v for s, v in zip(tl["step"], tl["nc1"])}
    return dict(fit_step=fit, grok_step=grok, nc1_falls=falls,
                nc1_fit=at.get(fit, float("nan")), nc1_grok=at.get(grok, float("nan")),
                nc1_end=tl["nc1"][-1] if tl["nc1"] else float("nan"),
                lead=(grok - falls) if falls is not None and grok is not None else None)


# ============================================================================ the grid


def live_grid(profile: str | None = None) -> GridConfig:
    """The axes a notebook sweeps live (the precomputed ones are
    ``GridConfig.for_profile(profile)``): the smoke grid at smoke and cpu, where a run takes
    seconds. At gpu one transformer run takes about a minute on a T4, so the page trains nine
    more around its first run and no more: two initial
    scales, the clock along λ at the run's η (τ = 1/(ηλ) at three values, one of them the
    first run's), Muon at its own learning rate and the lottery's four arms; the precomputed
    grid holds the rest."""
    if get_profile(profile) == "gpu":
        return GridConfig.for_profile("gpu").replace(weight_decays=[1.0, 3.0, 10.0],
                                                     clock_lrs=[], lr_factors=[1.0])
    return GridConfig.for_profile("smoke")


def grid_unit(base: OneConfig, optimizer: str, seed: int, scales, decays,
              bars=None) -> GridUnit:
    """One unit of the grid: every (initial scale, weight decay) cell of one optimizer on one
    seed. AdamW cells go through ``train_many`` (the weight RMS recorded at every
    evaluation), Muon cells one after another through :func:`run`. Returns the table rows and
    each run's curves."""
    if optimizer == "adamw":
        cells = [dict(init_scale=float(s), weight_decay=float(w), seed=int(seed))
                 for s in scales for w in decays]
        rows, sweeps = _many(base, cells, bars, norms=True)  # at base's learning rate
        hs = [h for sw in sweeps for h in sw.histories]
    else:
        rows, hs = [], []
        for s in scales:
            for w in decays:
                c = base.replace(optimizer=optimizer, init_scale=float(s), weight_decay=float(w))
                r = run(c, int(seed), bars=bars)
                r.history.metrics["weight_rms"] = list(r.timeline["weight_rms"])
                rows.append(_row(c, dict(init_scale=float(s), weight_decay=float(w),
                                         seed=int(seed)), r.history, r.timeline,
                                 lr=base.lr, muon_lr=base.muon_lr))
                hs.append(r.history)
    curves = [Curve(steps=list(h.steps), train_acc=list(h["train_acc"]),
                    test_acc=list(h["test_acc"]), weight_rms=list(h["weight_rms"]))
              for h in hs]
    return GridUnit(rows=rows, curves=curves)


def precompute_plan(profile: str | None = None) -> units.Plan:
    """``python -m dynamics_ops.precompute one_network --profile P``: the grid (initial scale x
    weight decay x optimizer x seeds; one unit per optimizer and seed) with every run's
    curves, and the clock grid (one unit per seed; its cells at the run's own learning rate
    are the grid's AdamW cells at initial scale 1), written to ``capstone_grid``."""
    from ..plots import rounded

    p = units.Plan("one_network", profile)
    gc, base = GridConfig.for_profile(p.profile), OneConfig.for_profile(p.profile)
    scales, decays = p.batch(gc.init_scales), p.batch(gc.weight_decays)
    for opt in p.grid(gc.optimizers):
        for seed in p.grid(range(gc.seeds)):
            p.unit(f"grid {opt} seed={seed}",
                   partial(grid_unit, base, opt, seed, scales, decays, False),
                   config=dict(grid=gc.to_dict(), base=base.to_dict(), optimizer=opt,
                               init_scales=scales, weight_decays=decays,
                               **({"muon_trains": MUON_TRAINS} if opt == "muon" else {})),
                   seed=seed)
    lrs = p.batch(gc.clock_lrs)
    for seed in p.grid(range(gc.clock_seeds)):
        p.unit(f"clock seed={seed}", partial(clock_grid, base, lrs, decays, [seed], False),
               config=dict(base=base.to_dict(), lrs=lrs, weight_decays=decays), seed=seed)

    def assemble(parts: dict) -> CapstoneGrid:
        parts = rounded(parts)
        grid = [GridUnit.of(v, k) for k, v in parts.items() if k.startswith("grid ")]
        rows = [r for g in grid for r in g.rows]
        clock = [r for r in rows if r.optimizer == "adamw" and r.init_scale == 1.0
                 and r.seed < gc.clock_seeds]  # the grid's cells at the run's own lr
        clock += [GridRow.of(r, k) for k, v in parts.items() if k.startswith("clock ")
                  for r in v]
        return CapstoneGrid(rows=rows, curves=[c for g in grid for c in g.curves], clock=clock)

    n = len(gc.init_scales) * len(gc.weight_decays) * len(gc.optimizers) * gc.seeds
    p.output(GRID_FILE, assemble, config=dict(grid=gc.to_dict(), base=base.to_dict()),
             command=f"python -m dynamics_ops.precompute one_network --profile {p.profile}",
             note=lambda t: (f"p = {base.p}, {n} grid runs and the clock grid, "
                             f"{base.steps} steps each ({t['cpu_seconds']:.0f} s of CPU time)."))
    return p

