"""Weight decay, the experiments: one runner per section of the chapter, and ``precompute_plan``.

- :func:`run_grid` / :func:`run_decoupling`: learning-rate x decay grids (sections 1 and 3),
  every cell averaged over seeds, all models of a grid trained at once by
  :func:`dynamics.sweep.train_many`; :func:`grid_summary` reads them (best cells, the best
  decay at each learning rate, the slope of that ridge).
- :func:`run_equilibrium`: one scale-invariant network measured every step (section 2), with
  :func:`equilibrium_summary` putting the theory beside the measurement; :func:`run_equilibria`
  the section's two runs (:mod:`.together` trains many such runs at once).
- :func:`run_clock`: runs that share eta * lambda (section 3).
- :func:`run_spectrum`: the same MLP with and without decay (section 4).
- ``answer_*``: the worked answers of the exercises that quote a measurement.
- :func:`precompute_plan`: the grids of the static book (``data/weight_decay_grid.json``).

Every runner takes ``seed=None`` (``DYNAMICS_SEED``), honours dry runs (``runtime.steps``,
``runtime.grid``) and reports its progress into
:mod:`dynamics.progress` (a live panel's bar and Stop button); ``on_eval`` takes a
``train`` hook for a panel that redraws while a run trains.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from .. import plots, results, runtime, units
from .. import progress as P
from ..models import MLP
from ..runtime import get_seed
from ..sweep import grid, train_many
from ..train import History, Hooks, Recipe, log_steps, train
from .science import (BETA1, GRIDS, MOMENTUM, ClockConfig, DecouplingConfig, EquilibriumConfig,
                      NormMLP, RotationMeter, SpectrumConfig, adamw_norm_trajectory, best_cell,
                      best_decay_per_lr, check_equilibrium_args, effective_lr, equilibrium,
                      final_loss, mnist1d_data, norm_step, relaxation_steps, ridge_slope,
                      singular_values, spectrum_stats, zero_gradient_path)
from .spectra import MatrixStats

DECOUPLING = ("adam_l2", "adamw")
LABELS = {"adam_l2": "Adam + L2", "adamw": "AdamW", "adamw_invariant": "AdamW, scale-invariant",
          "sgd": "SGD", "momentum": "SGD + momentum"}


# ============================================================================ 1. grids
# What the grid runners return and data/weight_decay_grid.json holds, field by field
# (dynamics.results.Record): a claim names what it reads, and a field renamed in the code or
# in the file fails when the file is read, naming it.


@dataclass
class Grid(results.Record):
    """One learning-rate x decay grid (:func:`run_grid`): its ``lrs``, ``decays``,
    ``eval_steps`` and ``seeds``; ``test_acc`` and ``train_loss`` [decay][lr][evaluation] (the
    mean over seeds; NaN, or None read back, where a run diverged) and ``test_acc_seeds``
    [seed][decay][lr] (each seed's final accuracy), arrays fresh and lists read back."""
    kind: str
    lrs: list
    decays: list
    eval_steps: list
    seeds: list
    test_acc: Any
    train_loss: Any
    test_acc_seeds: Any
    stopped: bool
    diverged: int
    strategy: Any
    wall_time: Any

    def seed_accs(self) -> dict:
        """``{seed index: final test accuracy [decay][lr]}``, one float array per seed."""
        return dict(enumerate(np.asarray(self.test_acc_seeds, dtype=float)))


@dataclass
class Decoupling(results.Record):
    """:func:`run_decoupling`'s result and ``data/weight_decay_grid.json``: ``{kind: grid}``
    and what its grids share (the first's ``lrs``, ``eval_steps`` and ``seeds``)."""
    grids: dict[str, Grid]
    seed: int
    steps: int
    lrs: list
    eval_steps: list
    seeds: list


RECORDS = {"weight_decay_grid": Decoupling}
"""Each precomputed file of the chapter and the record it is read as."""


def _grid_model(kind: str, data, width: int):
    _, model = GRIDS[kind]
    if model == "mlp":
        return lambda config: MLP(data.input_dim, width, 2, data.n_classes)
    return lambda config: NormMLP(data.input_dim, width, 2, data.n_classes)


def run_grid(cfg: DecouplingConfig, kind: str = "adamw", seed: int | None = None,
             bars=None, on_step=None) -> Grid:
    """Train the learning-rate x decay grid ``kind`` (a key of :data:`~.science.GRIDS`:
    ``adam_l2`` and ``adamw`` train a plain MLP, ``adamw_invariant`` the scale-invariant
    :class:`~.science.NormMLP`) for ``cfg.n_seeds`` seeds from ``seed`` on, all at once.

    Returns a :class:`Grid`.
    ``on_step``: :func:`~dynamics.sweep.train_many`'s hook, ``on_step(step, params)`` with
    every model's parameters in the grid's order (a live panel's early figure); it reads,
    the runs are the same without it.
    """
    if kind not in GRIDS:
        raise ValueError(f"unknown grid {kind!r}; choose one of {list(GRIDS)}")
    seed = get_seed(seed)
    data = mnist1d_data(cfg.n_train)
    lrs, decays = runtime.grid(cfg.lrs()), runtime.grid(cfg.decays(kind))
    seeds = runtime.grid([seed + k for k in range(cfg.n_seeds)])
    steps = runtime.steps(cfg.steps)
    evals = sorted({int(round(s)) for s in np.linspace(0, steps, cfg.n_evals + 1)[1:]})
    configs = grid(seed=seeds, weight_decay=decays, lr=lrs)
    recipe = Recipe(steps, optimizer=GRIDS[kind][0], batch_size=cfg.batch_size, eval=evals)
    res = train_many(_grid_model(kind, data, cfg.width), data, configs, recipe, bars=bars,
                     on_step=on_step)
    shape = (len(evals), len(seeds), len(decays), len(lrs))
    acc = np.array([res.at_step("test_acc", s) for s in evals]).reshape(shape)
    loss = np.array([res.at_step("train_loss", s) for s in evals]).reshape(shape)
    # accuracies on 1,000 test examples are exact to 3 decimals, their means over seeds to 5
    return Grid(kind=kind, lrs=lrs, decays=decays, eval_steps=evals, seeds=seeds,
                test_acc=np.round(acc.mean(1).transpose(1, 2, 0), 5),
                train_loss=np.round(loss.mean(1).transpose(1, 2, 0), 5),
                test_acc_seeds=np.round(acc[-1], 5), stopped=bool(res.info.get("stopped")),
                diverged=int(sum(h.diverged for h in res.histories)),
                strategy=res.info.get("strategy"), wall_time=res.info.get("wall_time"))


def run_decoupling(cfg: DecouplingConfig | None = None, seed: int | None = None, bars=None,
                   kinds=DECOUPLING, profile: str | None = None) -> Decoupling:
    """The grids ``kinds`` (default: Adam + L2 and AdamW on the same MLP, section 1), one
    after the other: a :class:`Decoupling` of ``{kind: run_grid(...)}``.
    ``cfg=None``: the small grid the page trains live at ``profile``
    (:func:`live_grid_config`)."""
    seed = get_seed(seed)
    cfg = live_grid_config(profile) if cfg is None else cfg
    kinds = list(kinds)
    grids, job = {}, P.current()
    for k, kind in enumerate(kinds):
        with job.part(k, len(kinds)):
            grids[kind] = run_grid(cfg, kind, seed, bars)
        if grids[kind].stopped:
            break
    return decoupling(grids, seed)


def decoupling(grids: dict, seed: int) -> Decoupling:
    """:func:`run_decoupling`'s result from its grids (fresh, or units read back from JSON)."""
    grids = {k: g if isinstance(g, Grid) else Grid.of(g, f"grids[{k!r}]") for k, g in grids.items()}
    first = next(iter(grids.values()))
    return Decoupling(grids=grids, seed=seed, steps=first.eval_steps[-1], lrs=first.lrs,
                      eval_steps=first.eval_steps, seeds=first.seeds)


def grid_array(payload: Decoupling, kind: str) -> np.ndarray:
    """A grid's seed-averaged test accuracy [decay][lr][evaluation] as a float array (None ->
    NaN), fresh or loaded from JSON."""
    return np.array(payload.grids[kind].test_acc, dtype=float)


def grid_summary(payload: Decoupling, kind: str, frame: int = -1) -> dict:
    """What a grid says at evaluation ``frame`` (default: the end): its ``best`` cell, the
    best decay at each learning rate (``ridge``, None where decay has not acted yet) and the
    ``slope`` of log(best decay) against log(eta): 0 when PyTorch's lambda is the variable
    to hold fixed, -1 when eta * lambda is (see :func:`~.science.ridge_slope`)."""
    g = payload.grids[kind]
    acc = grid_array(payload, kind)[:, :, frame]
    ridge = best_decay_per_lr(acc, g.decays)
    return dict(best=best_cell(acc, g.decays, g.lrs), ridge=ridge,
                slope=ridge_slope(g.lrs, ridge), lrs=list(g.lrs))


def decoupling_summary(payload: Decoupling) -> dict:
    """Best final test accuracy of each grid, and AdamW's margin over Adam + L2 (on the
    seed-averaged grid and ``per_seed``)."""
    out = {kind: grid_summary(payload, kind) for kind in payload.grids}
    best = {kind: s["best"] for kind, s in out.items()}
    margin = per_seed = None
    if all(k in payload.grids for k in DECOUPLING):
        margin = best["adamw"]["acc"] - best["adam_l2"]["acc"]
        tops = {k: np.nanmax(np.array(payload.grids[k].test_acc_seeds, dtype=float), axis=(1, 2))
                for k in DECOUPLING}
        per_seed = [float(a - b) for a, b in zip(tops["adamw"], tops["adam_l2"])]
    return dict(best=best, summaries=out, margin=margin, per_seed=per_seed)


def live_grid_config(profile: str | None = None) -> DecouplingConfig:
    """The small grid the notebook trains live: the smoke grid's learning rates and decays,
    one seed, at the profile's length and width (the gpu profile trains the cpu one)."""
    from ..runtime import get_profile

    profile = get_profile(profile)
    smoke = DecouplingConfig.for_profile("smoke")
    base = DecouplingConfig.for_profile("cpu" if profile == "gpu" else profile)
    return base.replace(**{k: getattr(smoke, k) for k in
                           ("lr_low", "lr_high", "n_lr", "l2_low", "l2_high", "wd_low",
                            "wd_high", "n_wd", "n_evals")}, n_seeds=1)


# ============================================================================ 2. equilibrium

# The two runs of section 2: the same eta * lambda = 6e-3 (tau = 167 steps) for both.
SECTION2 = {"adamw": dict(lr=3e-3, weight_decay=2.0), "sgd": dict(lr=0.3, weight_decay=0.02)}


def equilibrium_configs(profile: str | None = None) -> list[EquilibriumConfig]:
    """The configs of section 2 at a profile's scale: AdamW and SGD."""
    return [EquilibriumConfig.for_profile(profile, optimizer=o, **kw) for o, kw in SECTION2.items()]


@dataclass
class EquilibriumLayer(results.Record):
    """One scale-invariant matrix of a section-2 run over its last quarter
    (:func:`equilibrium_summary`): measured (``rms``, ``norm``, ``angle``, ``effective_lr``)
    beside the equilibrium (``*_pred``) and their ``*_ratio``; the angle's ratio over the
    first tau / 4 (``angle_early_ratio``), the steps to equilibrium (``relax_steps``, None:
    never), the rotation from the start, the summed angle and the RMS at initialization."""
    rms: float
    rms_pred: float
    rms_ratio: float
    norm: float
    angle: float
    angle_pred: float
    angle_ratio: float
    angle_early_ratio: float
    effective_lr: float
    effective_lr_pred: float
    effective_lr_ratio: float
    relax_steps: Any
    rotation: float
    total_angle: float
    rms0: float


@dataclass
class Equilibrium(results.Record):
    """:func:`run_equilibrium`'s result: the run's ``optimizer``, ``lr``, ``weight_decay``,
    ``tau`` and ``steps``; the matrices' ``names`` and ``numel``; the curves [point][matrix],
    measured and predicted, at ``step`` (``rms``, ``effective_lr``) and at ``angle_step``
    (``angle``, bin means); the equilibrium angle ``eq_angle``; ``layers`` (an
    :class:`EquilibriumLayer` per matrix, none for a run too short to settle); the run's
    ``status``, final ``test_acc`` and ``history``."""
    optimizer: str
    lr: float
    weight_decay: float
    tau: float
    steps: int
    names: list
    numel: list
    status: str
    step: list
    rms: Any
    rms_pred: Any
    angle: Any
    angle_step: list
    angle_pred: Any
    effective_lr: Any
    effective_lr_pred: Any
    eq_angle: float
    layers: dict[str, EquilibriumLayer]
    test_acc: float
    history: Any


def run_equilibria(profile: str | None = None, seed: int | None = None,
                   bars=None) -> list[Equilibrium]:
    """Section 2's two runs at ``profile`` scale (:func:`equilibrium_configs`: AdamW, then
    SGD, at the same eta * lambda), each by :func:`run_equilibrium`."""
    return [run_equilibrium(cfg, seed, bars=bars) for cfg in equilibrium_configs(profile)]


def run_equilibrium(cfg: EquilibriumConfig, seed: int | None = None, on_eval=(),
                    bars=None) -> Equilibrium:
    """Train a fully scale-invariant :class:`~.science.NormMLP` with ``cfg.optimizer`` and
    measure, every step, each weight matrix's norm, angular update and unit-norm gradient;
    return them (downsampled for plotting) beside the predictions, an :class:`Equilibrium`
    (:func:`equilibrium_summary`). ``on_eval``: ``train`` hooks (a panel's redraw);
    they find the meter as ``model.meter``."""
    seed = get_seed(seed)
    check_equilibrium_args(cfg.optimizer, cfg.lr, cfg.weight_decay)
    data = mnist1d_data(cfg.n_train)
    steps = runtime.steps(cfg.steps)
    with runtime.seeded(seed):
        model = NormMLP(data.input_dim, cfg.width, cfg.depth, data.n_classes).to(data.device)
    meter = RotationMeter(model.scale_invariant(), steps)
    model.meter = meter
    recipe = Recipe(steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=cfg.weight_decay,
                    momentum=MOMENTUM, batch_size=cfg.batch_size, eval=max(1, cfg.steps // 20))
    history = train(model, data, recipe, seed=seed, bars=bars,
                    hooks=Hooks(meter.before_step, meter.after_step, on_eval=on_eval))
    last = history.steps[-1] if len(history) else 0
    if history.diverged:
        last = min(last, max(0, history.diverged_at - 1))
    return equilibrium_summary(cfg, meter.arrays(last), meter.names, meter.numel, history)


def _bins(n: int, points: int = 160) -> list[tuple[int, int]]:
    """Consecutive [start, end) windows covering steps 1..n-1, about ``points`` of them."""
    width = max(1, (n - 1) // points)
    return [(s, min(n, s + width)) for s in range(1, n, width)]


def equilibrium_summary(cfg: EquilibriumConfig, arrays: dict, names, numel,
                        history: History) -> Equilibrium:
    """Measured and predicted norm (per-element RMS), angular update and effective learning
    rate of each scale-invariant weight, downsampled, plus the comparison over the last
    quarter of training (``layers[name]``: measured, predicted, ratio).

    AdamW's prediction is the whole trajectory from the initial norm
    (:func:`~.science.adamw_norm_trajectory`), with nothing measured in it. SGD's norm
    depends on the unit-norm gradient, so its curves integrate :func:`~.science.norm_step`
    from the initial norm with the gradient the layer measured at each step: a test of the
    recursion, not an independent prediction. The equilibrium angle in ``layers`` uses
    nothing measured.
    """
    opt, lr, wd = cfg.optimizer, cfg.lr, cfg.weight_decay
    numel = np.asarray(numel, dtype=float)
    norm, angle, ug = arrays["norm"], arrays["angle"], arrays["unit_grad"]
    T = len(norm) - 1
    w_rms = norm / np.sqrt(numel)
    steps = np.arange(T + 1)
    mu = MOMENTUM if opt == "momentum" else 0.0
    eq_angle = equilibrium(opt, lr, wd, 1, unit_grad_sq=1.0, momentum=MOMENTUM)["angle"]
    if opt == "adamw":
        pred_rms = np.stack([adamw_norm_trajectory(w_rms[0, l], lr, wd, steps)
                             for l in range(len(numel))], axis=1)
        pred_angle = lr * math.sqrt((1 - BETA1) / (1 + BETA1)) / pred_rms
        pred_eff = lr / pred_rms
    else:
        # the norm recursion integrated from the initial norm, driven by the unit-norm gradient
        # each layer measured at each step (momentum in its long-run form: step and decay
        # scaled by 1 / (1 - mu), the step's size by 1 / sqrt(1 - mu^2))
        sq = np.empty_like(norm, dtype=float)
        sq[0] = norm[0] ** 2
        eta = lr / (1 - mu)
        for t in range(1, T + 1):
            sq[t] = norm_step(sq[t - 1], eta, wd, ug[t] ** 2 / sq[t - 1])
        pred_rms = np.sqrt(sq / numel)
        pred_angle = np.concatenate([np.full((1, len(numel)), eq_angle),
                                     lr * ug[1:] / (sq[:-1] * math.sqrt(1 - mu ** 2))])
        pred_eff = lr / sq
    eff = effective_lr(opt, lr, np.maximum(w_rms, 1e-30), numel)

    tail = slice(max(1, T - T // 4), T + 1)
    first = slice(1, max(2, min(T, int(round(0.25 / (lr * wd))))) + 1)  # the first tau / 4
    layers = {}
    for l, name in enumerate(names):
        if T < 4:
            break
        if opt == "adamw":
            eq = equilibrium(opt, lr, wd, int(numel[l]))
        else:
            eq = equilibrium(opt, lr, wd, int(numel[l]), unit_grad_sq=float(np.mean(ug[tail, l] ** 2)),
                             momentum=MOMENTUM)
        m_rms, m_angle, m_eff = (float(np.mean(a[tail, l])) for a in (w_rms, angle, eff))
        layers[name] = EquilibriumLayer(rms=m_rms, rms_pred=eq["rms"], rms_ratio=m_rms / eq["rms"],
                            norm=m_rms * math.sqrt(numel[l]),
                            angle=m_angle, angle_pred=eq["angle"], angle_ratio=m_angle / eq["angle"],
                            angle_early_ratio=float(np.mean(angle[first, l])
                                                    / np.mean(pred_angle[first, l])),
                            effective_lr=m_eff, effective_lr_pred=eq["effective_lr"],
                            effective_lr_ratio=m_eff / eq["effective_lr"],
                            relax_steps=relaxation_steps(w_rms[:, l], eq["rms"]),
                            rotation=float(arrays["rotation"][T, l]) if "rotation" in arrays
                            else float("nan"), total_angle=float(angle[1:, l].sum()),
                            rms0=float(w_rms[0, l]))
    bins = _bins(T + 1)
    at = np.array([b for b, _ in bins] + ([T] if T else []), dtype=int)

    def mean(a):
        return np.array([a[s:e].mean(0) for s, e in bins] + ([a[T]] if T else []))

    return Equilibrium(
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


# ============================================================================ 3. the clock


@dataclass
class ClockRun(results.Record):
    """One run of the clock (:func:`~.science.matched_runs`): its eta and lambda, and whether
    it shares the matched runs' product."""
    lr: float
    weight_decay: float
    matched: bool


@dataclass
class Clock(results.Record):
    """:func:`run_clock`'s result: the runs (:class:`ClockRun`), their histories and settled
    losses, the matched product and the odd run's ``contrast``, whether it was stopped, the
    matched runs' ``spread`` and the odd run's ``ratio`` to their mean loss."""
    runs: list[ClockRun]
    histories: list
    final_loss: list
    product: float
    contrast: float
    stopped: bool
    spread: float
    ratio: float
    strategy: Any


def run_clock(cfg: ClockConfig | None = None, seed: int | None = None, bars=None,
              profile: str | None = None, on_step=None) -> Clock:
    """AdamW on a :class:`~.science.NormMLP`: three runs with equal eta * lambda (learning
    rates a factor ``spread`` apart) and one with ``contrast`` times the product, from the
    same initialization and batches. Returns a :class:`Clock`: the runs, their histories, each run's settled
    loss (the mean train loss over the second half, once the norms have equilibrated: see
    :func:`~.science.final_loss`), ``spread`` (max/min - 1 of the matched losses) and
    ``ratio`` (odd loss / mean matched loss); NaN where a run diverged or was stopped.
    ``cfg=None``: the page's runs at ``profile`` (``ClockConfig.for_profile(profile)``).
    ``on_step``: as :func:`run_grid`'s (the runs in ``cfg.runs()``'s order)."""
    seed = get_seed(seed)
    cfg = ClockConfig.for_profile(profile) if cfg is None else cfg
    data = mnist1d_data(cfg.n_train)
    configs = [dict(lr=r["lr"], weight_decay=r["weight_decay"], seed=seed) for r in cfg.runs()]
    res = train_many(lambda config: NormMLP(data.input_dim, cfg.width, 2, data.n_classes),
                     data, configs, clock_recipe(cfg), bars=bars, on_step=on_step)
    return clock_summary(cfg, res.histories, res.info)


def clock_recipe(cfg: ClockConfig) -> Recipe:
    """The clock runs' recipe: AdamW (the default), 41 evaluations."""
    steps = runtime.steps(cfg.steps)
    evals = sorted({int(round(s)) for s in np.linspace(0, steps, 41)})
    return Recipe(steps, batch_size=cfg.batch_size, eval=evals)


def clock_summary(cfg: ClockConfig, histories: list, info: dict) -> Clock:
    """:class:`Clock` of the runs of ``cfg.runs()`` (``histories`` in that order; ``info``: the
    sweep's, for ``stopped`` and ``strategy``)."""
    runs = [ClockRun.of(r) for r in cfg.runs()]
    losses = [final_loss(h, tail=0.5) if len(h) else float("nan") for h in histories]
    matched = [l for l, r in zip(losses, runs) if r.matched]
    odd = [l for l, r in zip(losses, runs) if not r.matched]
    ok = all(math.isfinite(l) for l in losses)
    return Clock(runs=runs, histories=list(histories), final_loss=losses, product=cfg.product,
                 contrast=cfg.contrast, stopped=bool(info.get("stopped")),
                 spread=float(max(matched) / min(matched) - 1) if ok else float("nan"),
                 ratio=float(odd[0] / np.mean(matched)) if ok else float("nan"),
                 strategy=info.get("strategy"))


# ============================================================================ 4. the weights


@dataclass
class SpectrumRun(results.Record):
    """One run of :func:`run_spectrum`: its ``history`` (the norms as ``"norm <matrix>"``),
    each matrix's singular values at initialization (``init``) and at the end (``final``), their
    statistics (``stats``: ``{matrix: MatrixStats}``, :func:`~.science.spectrum_stats`;
    ``final`` and ``stats`` empty where the run diverged) and its final test and train accuracy."""
    history: Any
    init: dict
    final: dict
    stats: dict[str, MatrixStats]
    test_acc: float
    train_acc: float


@dataclass
class Spectrum(results.Record):
    """:func:`run_spectrum`'s result: ``runs`` ``{decay: SpectrumRun}`` (without decay, then
    with), the decay and the optimizer."""
    runs: dict[float, SpectrumRun]
    weight_decay: float
    optimizer: str


def run_spectrum(cfg: SpectrumConfig | None = None, seed: int | None = None, bars=None,
                 profile: str | None = None, on_eval=()) -> Spectrum:
    """Train one MLP twice from the same initialization, without and with weight decay;
    record each weight matrix's Frobenius norm during training, its singular values at
    initialization and at the end, and their statistics (:func:`~.science.spectrum_stats`):
    a :class:`Spectrum`. Each run reports half of the progress (a panel's bar and Stop).
    ``cfg=None``: the page's run at ``profile`` (``SpectrumConfig.for_profile(profile)``).
    ``on_eval``: ``train`` hooks (a panel's redraw), called in each run from its evaluation
    at step 0 on."""
    seed, job = get_seed(seed), P.current()
    cfg = SpectrumConfig.for_profile(profile) if cfg is None else cfg
    data = mnist1d_data(cfg.n_train)
    steps = runtime.steps(cfg.steps)
    evals = sorted({0} | set(log_steps(steps, 30)))
    out = Spectrum(runs={}, weight_decay=cfg.weight_decay, optimizer=cfg.optimizer)
    for k, wd in enumerate((0.0, cfg.weight_decay)):
        with runtime.seeded(seed):
            model = MLP(data.input_dim, cfg.width, 2, data.n_classes).to(data.device)
        layers = {f"hidden.{i}": layer.weight for i, layer in enumerate(model.hidden)}
        layers["head"] = model.head.weight
        init = {n: singular_values(w) for n, w in layers.items()}
        metrics = {f"norm {n}": (lambda m, d, w=w: w.detach().norm()) for n, w in layers.items()}
        recipe = Recipe(steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=wd,
                        batch_size=cfg.batch_size, eval=evals)
        with job.part(k, 2):
            h = train(model, data, recipe, metrics=metrics, seed=seed, bars=bars,
                      hooks=Hooks(on_eval=on_eval) if on_eval else None)
        final = {n: singular_values(w) for n, w in layers.items()}
        finite = all(np.isfinite(sv).all() for sv in final.values()) and not h.diverged
        stats = {n: spectrum_stats(sv) for n, sv in final.items()} if finite else {}
        out.runs[wd] = SpectrumRun(history=h, init=init, final=final if finite else {},
                                   stats=stats, test_acc=h.last("test_acc"),
                                   train_acc=h.last("train_acc"))
    return out


# ============================================================================ worked answers
# Each exercise answer that quotes a measurement computes it in a collapsed cell of the page,
# with one of these: the page's own runs, at the page's profile and seed.


def _n(x, digits: int = 3) -> str:
    return plots.number(x, digits, missing="n/a")


def answer_equilibrium(profile: str | None = None, seed: int | None = None, lr: float = 2e-3,
                       weight_decay: float = 1.0) -> str:
    """Exercise 1: AdamW at (lr, weight_decay) for 3 tau steps; the settled RMS of each
    matrix against sqrt(eta / 2 lambda), and the steps it took to get within e^-2."""
    tau = 1 / (lr * weight_decay)
    cfg = EquilibriumConfig.for_profile(profile, lr=lr, weight_decay=weight_decay,
                                        steps=int(round(3 * tau)))
    r = run_equilibrium(cfg, seed, bars=False)
    lay = r.layers.values()
    relax = [v.relax_steps for v in lay]
    return (f"{cfg.steps:,} steps (τ = {tau:,.0f}): settled RMS "
            f"{', '.join(_n(v.rms, 3) for v in lay)} against √(η/2λ) = "
            f"{_n(math.sqrt(lr / (2 * weight_decay)), 3)}; within e⁻² of equilibrium after "
            f"{', '.join('never' if s is None else f'{s:,}' for s in relax)} steps")


def answer_sgd_symmetry(equilibria, profile: str | None = None, seed: int | None = None,
                        factor: float = 4.0, run: Equilibrium | None = None) -> str:
    """Exercise 2: section 2's SGD run against one with eta / factor and lambda * factor:
    the ratio of their settled norms per matrix (predicted: sqrt(factor)) and of their
    angles per step (predicted: 1). ``run``: that second run if the page has it already (the
    claims' symmetry run on the page's seed: one run, and the numbers the claims judge)."""
    base = next(r for r in equilibria if r.optimizer == "sgd")
    cfg = EquilibriumConfig.for_profile(profile, optimizer="sgd", lr=base.lr / factor,
                                        weight_decay=base.weight_decay * factor)
    if run is not None and not (math.isclose(run.lr, cfg.lr) and math.isclose(run.weight_decay, cfg.weight_decay)):
        raise ValueError(f"answer_sgd_symmetry: run has eta {run.lr:g}, lambda {run.weight_decay:g}; "
                         f"factor {factor:g} asks for {cfg.lr:g}, {cfg.weight_decay:g}")
    new = run_equilibrium(cfg, seed, bars=False) if run is None else run
    norm = [base.layers[n].norm / v.norm for n, v in new.layers.items()]
    angle = [v.angle / base.layers[n].angle for n, v in new.layers.items()]
    return (f"η/{factor:g}, λ·{factor:g}: norms {', '.join(_n(x, 3) for x in norm)} times "
            f"smaller (predicted {_n(math.sqrt(factor), 3)}); angle per step "
            f"{', '.join(_n(x, 3) for x in angle)} times the original (predicted 1)")


def answer_spread(clock: Clock, profile: str | None = None, seed: int | None = None,
                  spread: float = 4.0) -> str:
    """Exercise 3: the clock's runs with learning rates ``spread`` apart and one product:
    how far apart their settled losses are, beside the section's own runs."""
    cfg = ClockConfig.for_profile(profile, spread=spread, contrast=1.0)
    wide = run_clock(cfg, seed, bars=False)
    runs = sorted(zip((r.lr for r in wide.runs if r.matched),
                      (l for r, l in zip(wide.runs, wide.final_loss) if r.matched)))
    return (f"settled losses {_n(100 * clock.spread, 2)}% apart with spread "
            f"{clock.runs[1].lr / clock.runs[0].lr:g}, "
            f"{_n(100 * wide.spread, 2)}% with spread {spread:g}; per run, η → loss: "
            + ", ".join(f"{_n(lr, 2)} → {_n(loss, 3)}" for lr, loss in runs))


def answer_zero_gradient(lr: float = 1e-3, w0: float = 1.0) -> str:
    """Exercise 5: a coordinate with no loss gradient, after 1,000 and 2,000 steps."""
    adamw = zero_gradient_path(lr, 0.1, True, 1000, w0)
    l2 = {wd: zero_gradient_path(lr, wd, False, 2000, w0) for wd in (0.01, 0.1, 1.0)}
    same = max(float(np.max(np.abs(l2[wd] - l2[0.1]))) for wd in l2)
    return (f"AdamW (λ = 0.1): {_n(adamw[-1], 3)} after 1,000 steps; Adam + L2: "
            f"{_n(l2[0.1][999], 2)} after 1,000 and {_n(l2[0.1][-1], 2)} after 2,000 steps, for "
            f"λ = 0.01, 0.1 and 1 alike (largest difference {_n(same, 1)})")


# ============================================================================ precompute


def precompute_plan(profile: str | None = None) -> units.Plan:
    """The three learning-rate x decay grids of sections 1 and 3 (Adam + L2 and AdamW on an
    MLP, AdamW on the scale-invariant NormMLP), ``n_seeds`` seeds each, with a slider over
    training time (``data/weight_decay_grid.json``): one unit per grid."""
    p = units.Plan("weight_decay", profile)
    cfg = DecouplingConfig.for_profile(p.profile)
    for kind in GRIDS:
        p.unit(kind, partial(run_grid, cfg, kind, 0), config=dict(cfg.to_dict(), kind=kind))
    seeds = f"{cfg.n_seeds} seed{'s' if cfg.n_seeds > 1 else ''} per cell"
    note = (f"Made at the CPU scale: MNIST-1D, {seeds}; at the gpu profile the same command "
            "would train longer, wider and on more data." if p.profile != "gpu" else f"MNIST-1D, {seeds}.")
    p.output("weight_decay_grid", lambda grids: decoupling(grids, 0), config=cfg, note=note,
             command=f"python -m dynamics_ops.precompute weight_decay --profile {p.profile}")
    return p



__all__ = ["DECOUPLING", "LABELS", "SECTION2", "Grid", "Decoupling", "RECORDS", "ClockRun", "Clock",
           "EquilibriumLayer", "Equilibrium", "SpectrumRun", "Spectrum",
           "run_grid", "run_decoupling", "grid_array", "grid_summary", "decoupling_summary",
           "live_grid_config", "equilibrium_configs", "run_equilibrium", "equilibrium_summary",
           "run_equilibria", "run_clock", "run_spectrum", "decoupling", "answer_equilibrium",
           "answer_sgd_symmetry", "answer_spread", "answer_zero_gradient", "precompute_plan"]
