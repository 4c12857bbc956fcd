"""Weight decay, the live panels: the page's "Try it" widgets, one per section.

Each follows the contract of :class:`dynamics.widgets.Panel` (progress, Stop, refused
out-of-range values, ``above=``) and draws with the builders of :mod:`.figures`. Each is
sized to show a first result within 2 s of Run and finish within 10 s at the cpu profile on
two CPU cores (issue 43), and says what a larger setting costs before it starts (``work=``):
the grids and the clock train their models together (the batched engine) and draw an early
figure from the models' parameters mid-run; the equilibrium and the spectrum draw their
curves as they train, a few times, not at every evaluation (a plotly figure costs as much as
dozens of training steps).
"""
from __future__ import annotations

import copy
import math

import numpy as np
import torch

from .. import plots, runtime
from .. import progress as P
from ..models import MLP
from ..runtime import get_seed
from ..train import History
from .experiments import (DECOUPLING, LABELS, Clock, ClockRun, Decoupling, Grid, Spectrum,
                          SpectrumRun, decoupling, equilibrium_summary, grid_array,
                          live_grid_config, run_clock, run_equilibrium, run_grid, run_spectrum)
from .figures import clock_figure, equilibrium_figure, grid_figure, spectrum_figure
from .science import (EQUILIBRIUM_OPTIMIZERS, ClockConfig, EquilibriumConfig, NormMLP,
                      SpectrumConfig, mnist1d_data, singular_values)

__all__ = ["decoupling_panel", "equilibrium_panel", "clock_panel", "spectrum_panel",
           "GRID_PANEL", "EQUILIBRIUM_PANEL", "CLOCK_PANEL", "SPECTRUM_PANEL"]

# The panels' own defaults where they differ from the page's runs at the cpu profile (the
# figure above each panel): small enough for the promise, large enough for the phenomenon
# (checked on seeds 0-2 in tests/weight_decay/test_panels.py and the branch's report).
# The grid panel also moves AdamW's decays down by one grid step (a factor sqrt(10): 0.0032 to
# 3.2, not 0.01 to 10) and trains on 2000 examples: in 300 steps lambda = 10 shrinks the
# weights for eta * lambda * t >= 3 even at the smallest eta, so the control failed too
# (largest-decay shortfall, eta = 1e-3 -> 3.2e-2, seeds 0-2: .141 -> .253, .130 -> .253,
# .176 -> .239); lambda = 3.2 acts for eta * lambda * t ~ 1 there. At these defaults, seeds 0-2:
# Adam + L2 .248 -> .297, .237 -> .351, .246 -> .331; AdamW .072 -> .193, .060 -> .159,
# .038 -> .208 (with 1000 examples AdamW's stayed below .1 at the largest eta on two seeds);
# 6-7 CPU-s.
GRID_PANEL = dict(steps=300, width=64, n_train=2000, wd_low=10 ** -2.5, wd_high=10 ** 0.5)
EQUILIBRIUM_PANEL = dict(steps=600, width=64, n_train=2000)
CLOCK_PANEL = dict(product=8e-3, lr=4e-3, steps=1000, width=64, n_train=2000)
SPECTRUM_PANEL = dict(steps=800, width=128, n_train=2000)


# Panel defaults that every profile takes (what the panel shows, not how large it runs).
_EVERY_PROFILE = ("wd_low", "wd_high")


def _defaults(cfg, panel: dict, profile: str | None):
    """``cfg`` at the panel's defaults: the cpu and gpu profiles take the panel's sizes (a
    reader's runtime is the cpu's), smoke keeps its own where they are smaller (and its own
    other settings, except a grid's decay range, :data:`_EVERY_PROFILE`)."""
    if runtime.get_profile(profile) == "smoke":
        return cfg.replace(**{k: min(v, getattr(cfg, k)) if k in ("steps", "width", "n_train")
                              else v if k in _EVERY_PROFILE else getattr(cfg, k)
                              for k, v in panel.items()})
    return cfg.replace(**panel)


def _smaller(page, panel) -> str:
    """The note's sentence on how the panel's defaults differ from the page's run above it
    (``page`` and ``panel``: configs), empty where they do not."""
    names = dict(steps="steps", width="width", n_train="training examples",
                 product="η·λ", lr="learning rate", wd_low="AdamW's smallest λ",
                 wd_high="AdamW's largest λ")
    diff = [f"{names[k]} {plots.number(getattr(panel, k), 2)} instead of "
            f"{plots.number(getattr(page, k), 2)}" for k in names
            if hasattr(page, k) and getattr(page, k) != getattr(panel, k)]
    return (f" Its defaults differ from the run above ({'; '.join(diff)}), to answer within "
            f"seconds." if diff else "")


def _stacked(model):
    """``forward(params, x)``: every model of a batched sweep (``params``: ``{name: [K, ...]}``,
    as :func:`dynamics.sweep.train_many` hands them to ``on_step``) on ``x``, [K, N, C]."""
    base = copy.deepcopy(model).to("meta")

    def one(p, x):
        return torch.func.functional_call(base, p, (x,))

    return lambda params, x: torch.func.vmap(one, in_dims=(0, None))(params, x)


def _grid_work(steps, width, n_train=1000, **_):
    """A grid's cost in units: per step a fixed part (the batched step's calls, measured
    about as much as a width-80 model's arithmetic) and one growing as width², plus the
    evaluations (steps / 100 per run, each over the training and test sets)."""
    per_step = 7.0 + width ** 2 / 1000
    return steps * per_step * (1 + (n_train + 1000) / 128 / 100 / 3)


def _shortfalls(payload: Decoupling, kind: str) -> np.ndarray:
    """The largest decay's final test-accuracy shortfall below the best decay of its column,
    at every learning rate of the grid ``kind`` (NaN where that run diverged)."""
    acc = grid_array(payload, kind)[:, :, -1]
    with np.errstate(all="ignore"):
        return np.nanmax(acc, 0) - acc[-1]


def _growths(payload: Decoupling, cfg) -> str:
    """The status line's account of the contrast: each grid's largest-decay shortfall at the
    smallest and the largest learning rate (Adam + L2's should be large at both, AdamW's
    small at the smallest and large at the largest)."""
    lrs = cfg.lrs()
    parts = [f"{LABELS[k]} (λ = {plots.number(cfg.decays(k)[-1], 2)}) "
             f"{_shortfalls(payload, k)[0]:.2f} → {_shortfalls(payload, k)[-1]:.2f}"
             for k in DECOUPLING if k in payload.grids]
    return (f"largest decay's shortfall below its column's best, η = "
            f"{plots.number(lrs[0], 2)} → {plots.number(lrs[-1], 2)}: " + ", ".join(parts))


def _decay_note(page, panel) -> str:
    """The grid panel's note on its AdamW decays, where they differ from the page's grid."""
    if (page.wd_low, page.wd_high) == (panel.wd_low, panel.wd_high):
        return ""
    t = panel.lrs()[0] * panel.wd_high * runtime.steps(panel.steps)
    return (f" AdamW's decays stop at λ = {plots.number(panel.wd_high, 2)} (not "
            f"{plots.number(page.wd_high, 2)}): in {runtime.steps(panel.steps):,} steps a "
            f"larger λ shrinks the weights even at the smallest η, where this one acts for "
            f"ηλt ≈ {t:.1f}, so its largest decay costs little there and fails at the "
            f"largest η (clearer with {panel.n_train:,} training examples), while Adam + L2's largest penalty fails at every η (the status line "
            f"gives both shortfalls).")


def decoupling_panel(profile: str | None = None, seed: int | None = None):
    """Live: the Adam + L2 and AdamW grids at the notebook's (small) scale; choose their
    length, data size and width. The Adam + L2 grid is drawn a third of the way through its
    training (test accuracy read from the batched models' parameters), again when it is done,
    and both grids at the end."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    page = live_grid_config(profile)
    base = _defaults(page, GRID_PANEL, profile)

    def run(update, steps, n_train, width):
        # evaluations every ~100 steps: progress and Stop act at evaluations
        cfg = base.replace(steps=int(steps), n_train=int(n_train), width=int(width),
                           n_evals=min(100, max(base.n_evals, int(steps) // 100)))
        data = mnist1d_data(cfg.n_train)
        forward = _stacked(MLP(data.input_dim, cfg.width, 2, data.n_classes))
        early = max(1, runtime.steps(cfg.steps) // 3)
        grids, job = {}, P.current()

        def early_figure(kind):
            lrs, decays = runtime.grid(cfg.lrs()), runtime.grid(cfg.decays(kind))

            def on_step(step, params):
                if step != early or update.stop_requested:
                    return
                with torch.no_grad():
                    hits = forward(params, data.x_test).argmax(-1) == data.y_test
                acc = hits.float().mean(1).reshape(-1, len(decays), len(lrs))[0]
                g = Grid(kind=kind, lrs=lrs, decays=decays, eval_steps=[step], seeds=[seed],
                         test_acc=acc[:, :, None].tolist(), train_loss=None,
                         test_acc_seeds=None, stopped=False, diverged=0, strategy=None,
                         wall_time=None)
                update(fig=grid_figure(decoupling({kind: g}, seed),
                                       (kind,), title=f"Test accuracy after {step:,} steps "
                                       f"(training on)"))

            return on_step

        for k, kind in enumerate(DECOUPLING):
            with job.part(k, len(DECOUPLING)):
                grids[kind] = run_grid(cfg, kind, seed, bars=False,
                                       on_step=early_figure(kind) if k == 0 else None)
            if grids[kind].stopped:
                break
            if k == 0 and not update.stop_requested:
                update(fig=grid_figure(decoupling(grids, seed), (kind,)))
        payload = decoupling(grids, seed)
        bad = sum(g.diverged for g in grids.values())
        if not update.stop_requested:
            update(status=("done" + (f"; {bad} run(s) diverged (blank cells)" if bad else "")
                           + "; " + _growths(payload, cfg)))
        if len(grids) < len(DECOUPLING):
            return grid_figure(payload, tuple(grids))
        return grid_figure(payload)

    return Panel(run, [Slider("steps", 50, max(3000, base.steps), value=base.steps, integer=True,
                              step=50),
                       Choice("n_train", sorted({500, 1000, 2000, 4000, base.n_train}),
                              value=base.n_train),
                       Choice("width", sorted({32, 64, 128, 256, base.width}), value=base.width)],
                 title="Try it: Adam + L2 against AdamW",
                 note="Longer training and less data make regularization matter more."
                      + _smaller(page, base) + _decay_note(page, base),
                 above="live", profile=profile, work=_grid_work)


def _equilibrium_work(optimizer, lr, weight_decay, steps):
    return float(steps)


def equilibrium_panel(profile: str | None = None, seed: int | None = None):
    """Live: one scale-invariant run with the chosen optimizer, learning rate and decay."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    page = EquilibriumConfig.for_profile(profile)
    base = _defaults(page, EQUILIBRIUM_PANEL, profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))
        total = runtime.steps(cfg.steps)
        drawn = []

        def build(history, model):  # the figure from the model's meter so far: twice
            step, meter = history.steps[-1], model.meter
            if step == 0 or (drawn and (len(drawn) > 1 or step < total / 2)):
                return None
            drawn.append(step)
            return equilibrium_figure(equilibrium_summary(cfg, meter.arrays(step), meter.names,
                                                          meter.numel, history))

        live = update.every(build, interval=0.0, with_model=True)
        result = run_equilibrium(cfg, seed, on_eval=live, bars=False)
        if not update.stop_requested:
            update(status="done" if result.status == "ok" else result.status)
        return equilibrium_figure(result)

    return Panel(run, [Choice("optimizer", list(EQUILIBRIUM_OPTIMIZERS), value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-4, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, max(5000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: the rotational equilibrium",
                 note="AdamW: lr ~ 3e-3, λ ~ 1. SGD: lr ~ 0.2, λ ~ 0.02. The product ηλ must "
                      "stay below 1; equilibrium needs a few τ = 1/(ηλ) steps."
                      + _smaller(page, base),
                 above="live", profile=profile, work=_equilibrium_work)


def _clock_work(product, spread, contrast, steps):
    return float(steps)


def clock_panel(profile: str | None = None, seed: int | None = None):
    """Live: the trajectory-invariance experiment with a chosen product and contrast. The
    curves are drawn a tenth and half of the way through (the runs' training losses read
    from the batched models' parameters), and from the runs' evaluations at the end."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    page = ClockConfig.for_profile(profile)
    base = _defaults(page, CLOCK_PANEL, profile)

    def run(update, product, spread, contrast, steps):
        cfg = base.replace(product=float(product), spread=float(spread), contrast=float(contrast),
                           steps=int(steps))
        runs, total = [ClockRun.of(r) for r in cfg.runs()], runtime.steps(cfg.steps)
        data = mnist1d_data(cfg.n_train)
        forward = _stacked(NormMLP(data.input_dim, cfg.width, 2, data.n_classes))
        every = max(1, total // 20)
        draw = {max(every, every * round(total / 10 / every)), every * (total // 2 // every)}
        early = [History() for _ in runs]

        def on_step(step, params):
            if step % every or update.stop_requested:
                return
            with torch.no_grad():
                out = forward(params, data.x_train)
                loss = torch.nn.functional.cross_entropy(
                    out.transpose(1, 2), data.y_train.expand(len(runs), -1),
                    reduction="none").mean(1)
            for h, value in zip(early, loss.tolist()):
                h.append(step, train_loss=value)
            if step in draw:
                so_far = Clock(runs=runs, histories=early, final_loss=[], product=cfg.product,
                               contrast=cfg.contrast, stopped=False, spread=math.nan,
                               ratio=math.nan, strategy=None)
                update(fig=clock_figure(so_far,
                                        title=f"Equal η·λ against another (step {step:,} "
                                              f"of {total:,})"))

        result = run_clock(cfg, seed, bars=False, on_step=on_step)
        bad = [h for h in result.histories if h.diverged]
        if not update.stop_requested:
            update(status=f"{len(bad)} run(s) diverged" if bad else
                   f"matched runs within {100 * result.spread:.0f}%, "
                   f"the odd one at {result.ratio:.2f}x their loss")
        return clock_figure(result)

    return Panel(run, [Slider("product", 1e-4, 5e-2, value=base.product, log=True),
                       Slider("spread", 1.0, 4.0, value=base.spread, step=0.25),
                       Slider("contrast", 1.0, 10.0, value=base.contrast, step=0.5),
                       Slider("steps", 100, max(5000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: weight decay as a clock",
                 note="Runs with one product η·λ share a clock, τ = 1/(ηλ) steps."
                      + _smaller(page, base),
                 above="live", profile=profile, work=_clock_work)


def _spectrum_work(optimizer, lr, weight_decay, steps):
    return float(steps)


def spectrum_panel(profile: str | None = None, seed: int | None = None):
    """Live: train with and without decay and compare the weights. The norms are drawn early
    in the run without decay, again (with its final spectrum) halfway through the run with
    decay, and in full at the end."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    page = SpectrumConfig.for_profile(profile)
    base = _defaults(page, SPECTRUM_PANEL, profile)
    layer = "hidden.1"

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))
        total = runtime.steps(cfg.steps)
        runs, drawn, current = {}, [], []

        def build(history, model):
            step = history.steps[-1]
            if step == 0:  # a run begins (without decay, then with): its initial spectrum
                current.append((0.0, cfg.weight_decay)[len(runs)])
                runs[current[-1]] = SpectrumRun(
                    history=history, final={}, stats={}, test_acc=math.nan, train_acc=math.nan,
                    init={layer: singular_values(model.hidden[1].weight)})
                return None
            wd = current[-1]
            if step == total and wd == 0.0:
                runs[wd].final = {layer: singular_values(model.hidden[1].weight)}
            if len(drawn) == 0 and step >= total / 10 or \
                    len(drawn) == 1 and wd != 0.0 and step >= total / 2:
                drawn.append(step)
                so_far = Spectrum(runs=dict(runs), weight_decay=cfg.weight_decay,
                                  optimizer=cfg.optimizer)
                return spectrum_figure(so_far, layer,
                                       title=f"What weight decay does to the weights (λ = "
                                             f"{plots.number(wd, 2)}: step {step:,} of {total:,})")
            return None

        live = update.every(build, interval=0.0, with_model=True)
        result = run_spectrum(cfg, seed, bars=False, on_eval=live)
        bad = [wd for wd, r in result.runs.items() if r.history.diverged]
        if not update.stop_requested:
            update(status=f"diverged with λ = {', '.join(plots.number(w, 2) for w in bad)}"
                   if bad else "done")
        return spectrum_figure(result)

    return Panel(run, [Choice("optimizer", ["adamw", "sgd", "momentum"], value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-3, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, max(10000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: weight decay and the spectrum",
                 note="Trained twice from one initialization, without decay and with it."
                      + _smaller(page, base),
                 above="live", profile=profile, work=_spectrum_work)
