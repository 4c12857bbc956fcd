"""Weight decay, the live panels: the page's "Try it" widgets, one per section.

Each follows the contract of :class:`dynamics.widgets.Panel` (progress, Stop, refused
out-of-range values, ``above=``) and draws with the builders of :mod:`.figures`.
"""
from __future__ import annotations

from .. import plots
from ..runtime import get_seed
from .experiments import (DECOUPLING, equilibrium_summary, live_grid_config, run_clock,
                          run_decoupling, run_equilibrium, run_spectrum)
from .figures import clock_figure, equilibrium_figure, grid_figure, spectrum_figure
from .science import EQUILIBRIUM_OPTIMIZERS, ClockConfig, EquilibriumConfig, SpectrumConfig

__all__ = ["decoupling_panel", "equilibrium_panel", "clock_panel", "spectrum_panel"]


def decoupling_panel(profile: str | None = None, seed: int | None = None):
    """Live: the Adam + L2 and AdamW grids at the notebook's (small) scale; choose their
    length, data size and width."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    base = live_grid_config(profile)

    def run(update, steps, n_train, width):
        # evaluations every ~25 steps: progress and Stop act at evaluations
        cfg = base.replace(steps=int(steps), n_train=int(n_train), width=int(width),
                           n_evals=min(100, max(base.n_evals, int(steps) // 25)))
        payload = run_decoupling(cfg, seed, bars=False)
        bad = sum(g["diverged"] for g in payload["grids"].values())
        stopped = any(g["stopped"] for g in payload["grids"].values())
        if not update.stop_requested:
            update(status=f"done; {bad} run(s) diverged (blank cells)" if bad else "done")
        if stopped and len(payload["grids"]) < len(DECOUPLING):
            return grid_figure(payload, tuple(payload["grids"]))
        return grid_figure(payload)

    return Panel(run, [Slider("steps", 50, max(3000, base.steps), value=base.steps, integer=True,
                              step=50),
                       Choice("n_train", sorted({500, 1000, 2000, 4000, base.n_train}),
                              value=base.n_train),
                       Choice("width", sorted({32, 64, 128, 256, base.width}), value=base.width)],
                 title="Try it: Adam + L2 against AdamW",
                 note="Longer training and less data make regularization matter more.",
                 above="live", profile=profile)


def equilibrium_panel(profile: str | None = None, seed: int | None = None):
    """Live: one scale-invariant run with the chosen optimizer, learning rate and decay."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    base = EquilibriumConfig.for_profile(profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))

        def build(history, model):  # the figure from the model's meter so far
            step, meter = history.steps[-1], model.meter
            if step == 0:
                return None
            return equilibrium_figure(equilibrium_summary(cfg, meter.arrays(step), meter.names,
                                                          meter.numel, history))

        live = update.every(build, interval=1.0, with_model=True)
        result = run_equilibrium(cfg, seed, on_eval=live, bars=False)
        if not update.stop_requested:
            update(status="done" if result["status"] == "ok" else result["status"])
        return equilibrium_figure(result)

    return Panel(run, [Choice("optimizer", list(EQUILIBRIUM_OPTIMIZERS), value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-4, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, max(5000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: the rotational equilibrium",
                 note="AdamW: lr ~ 3e-3, λ ~ 1. SGD: lr ~ 0.2, λ ~ 0.02. The product ηλ must "
                      "stay below 1; equilibrium needs a few τ = 1/(ηλ) steps.",
                 above="live", profile=profile)


def clock_panel(profile: str | None = None, seed: int | None = None):
    """Live: the trajectory-invariance experiment with a chosen product and contrast."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    base = ClockConfig.for_profile(profile)

    def run(update, product, spread, contrast, steps):
        cfg = base.replace(product=float(product), spread=float(spread), contrast=float(contrast),
                           steps=int(steps))
        result = run_clock(cfg, seed, bars=False)
        bad = [h for h in result["histories"] if h.diverged]
        if not update.stop_requested:
            update(status=f"{len(bad)} run(s) diverged" if bad else
                   f"matched runs within {100 * result['spread']:.0f}%, "
                   f"the odd one at {result['ratio']:.2f}x their loss")
        return clock_figure(result)

    return Panel(run, [Slider("product", 1e-4, 5e-2, value=base.product, log=True),
                       Slider("spread", 1.0, 4.0, value=base.spread, step=0.25),
                       Slider("contrast", 1.0, 10.0, value=base.contrast, step=0.5),
                       Slider("steps", 100, max(5000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: weight decay as a clock", above="live", profile=profile)


def spectrum_panel(profile: str | None = None, seed: int | None = None):
    """Live: train with and without decay and compare the weights."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    base = SpectrumConfig.for_profile(profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))
        result = run_spectrum(cfg, seed, bars=False)
        bad = [wd for wd, r in result["runs"].items() if r["history"].diverged]
        if not update.stop_requested:
            update(status=f"diverged with λ = {', '.join(plots.number(w, 2) for w in bad)}"
                   if bad else "done")
        return spectrum_figure(result)

    return Panel(run, [Choice("optimizer", ["adamw", "sgd", "momentum"], value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-3, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, max(10000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: weight decay and the spectrum", above="live", profile=profile)
