"""Initialization, the live panels: each ``*_panel(profile, seed)`` a figure the reader re-runs
with widgets (depth, width, activation, initialization...). The figures they draw are
:mod:`.figures`'; the runs, :mod:`.experiments`'.
"""
from __future__ import annotations

import numpy as np

from .. import plots, results
from ..runtime import get_device, get_seed
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import run_guessing_bias, run_saxe, run_signal, run_trainability
from .figures import saxe_figure, signal_figure, trainability_figure
from .science import (ACTIVATIONS, GuessingConfig, SaxeConfig, SignalConfig,
                      TrainabilityConfig, backward_ratio, std_ratio)

__all__ = ["signal_panel", "trainability_panel", "saxe_panel", "guessing_panel"]


def signal_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, width, activation, init -> the three per-layer curves of that network."""
    base = SignalConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, width, activation, init):
        cfg = base.replace(depth=int(depth), width=int(width), activation=activation, init=init)
        res = run_signal(cfg, inits=[init], activations=[activation])
        st = res[activation][init]
        update(status=f"last/first activation std = {plots.number(std_ratio(st))}, "
                      f"first/last ‖dL/dz‖ = {plots.number(backward_ratio(st))}")
        return signal_figure(res, activation)

    big = get_device().type != "cpu"  # keep the largest network within a laptop's memory
    controls = [Slider("depth", 1, 200, min(base.depth, 200), 1, integer=True),
                Slider("width", 2, 1024 if big else 512, min(base.width, 512), 2, integer=True),
                *controls_for(base, ["activation", "init"])]
    return Panel(run, controls, title="Try it: signal propagation at initialization",
                 above="live", profile=profile)


def trainability_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small trainability grid, trained live (a few depths x a few sigma_w^2)."""
    seed = get_seed(seed)
    base = TrainabilityConfig.for_profile("smoke", seeds=[seed])

    def run(update, max_depth, n_sigma, width, steps, sigma_b2):
        depths = sorted({int(v) for v in np.linspace(4, max_depth, 4)})
        sig = np.round(np.linspace(0.5, 4.5, int(n_sigma)), 2).tolist()
        cfg = base.replace(depths=depths, sigma_w2=sig, width=int(width), steps=int(steps),
                           sigma_b2=float(sigma_b2))
        res = run_trainability(cfg, bars=False)
        notes = [f"{len(res['diverged'])} runs diverged (counted as chance)"] if res["diverged"] else []
        if res["stopped"]:
            notes.append("stopped: deeper rows not trained")
        update(status="; ".join(notes) or "done")
        return trainability_figure(res)

    controls = [Slider("max_depth", 8, 96, 32, 8, integer=True, description="max depth"),
                Slider("n_sigma", 3, 9, 5, 1, integer=True, description="σ_w² values"),
                Slider("width", 8, 128, base.width, 8, integer=True, description="width"),
                Slider("steps", 50, 1000, base.steps, 50, integer=True, description="SGD steps"),
                Slider("sigma_b2", 0.0, 0.5, base.sigma_b2, 0.01, description="σ_b²")]
    return Panel(run, controls, title="Try it: a small trainability grid, live",
                 above=results.provenance_of("initialization_trainability"), profile=profile)


def saxe_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, init, learning rate of the deep linear network."""
    base = SaxeConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, init, lr, init_std, steps):
        cfg = base.replace(depth=int(depth), init=init, lr=float(lr), init_std=float(init_std),
                           steps=int(steps))
        res = run_saxe(cfg)  # the panel's bar and Stop follow the training
        if res["diverged"]:
            update(status=f"{res['status']}: try a smaller learning rate")
        elif len(res["steps"]) and res["steps"][-1] < cfg.steps:
            update(status=f"stopped at step {res['steps'][-1]}")
        return saxe_figure(res)

    controls = controls_for(base, ["depth", "init", "lr", "init_std"])
    controls.append(Slider("steps", 50, 5000, min(base.steps, 5000), 50, integer=True))
    return Panel(run, controls, title="Try it: a deep linear network", above="live",
                 profile=profile)


def guessing_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the favourite-class fraction of each of a set of untrained networks."""
    base = GuessingConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, width, activation, scale):
        cfg = base.replace(depths=[int(depth)], width=int(width), scale=scale)
        res = run_guessing_bias(cfg, activations=[activation])
        vals = np.asarray(res[activation][0]) if res[activation] else np.zeros(0)
        if not len(vals):
            return None
        update(status=f"mean favourite-class fraction {vals.mean():.2f} (no bias: "
                      f"{1 / res['n_classes']:.2f})")
        fig = plots.bars([f"{k}" for k in range(len(vals))], vals.tolist(),
                         title=f"{activation}, depth {int(depth)}: each untrained network",
                         ytitle="fraction in the favourite class", text_fmt="{:.2f}")
        fig.update_xaxes(title_text="network")
        fig.update_yaxes(range=[0, 1.1])
        return fig

    controls = [Slider("depth", 1, 64, 16, 1, integer=True),
                Slider("width", 8, 1024, base.width, 8, integer=True),
                Choice("activation", ACTIVATIONS, "relu"),
                Choice("scale", ("critical", "xavier"), base.scale)]
    return Panel(run, controls, title="Try it: initial guessing bias", above="live",
                 profile=profile)
