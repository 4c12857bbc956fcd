"""Lottery tickets, the live panels (``Try it``): IMP with its controls, pruning at
initialization with the shuffling check, and linear mode connectivity, each trained in the
page at the reader's settings.
"""
from __future__ import annotations

from .. import results
from ..runtime import get_profile, get_seed
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import run_imp, run_lmc, run_pai_at
from .figures import PAI_NAMES, imp_figure, lmc_figure, pai_figure
from .science import PAI_METHODS, LotteryConfig

__all__ = ["imp_panel", "pai_panel", "lmc_panel"]


def imp_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: IMP with its controls; rounds, pruning rate, rewind step, global or per-layer
    ranking, learning rate. ``above``: what the page shows above the panel (default: the
    provenance of the precomputed IMP slider); ``overrides`` change the profile's config."""
    base = LotteryConfig.for_profile(get_profile(profile), **overrides)
    seed = get_seed(seed)

    def run(update, rounds, prune_fraction, rewind_step, scope, lr):
        cfg = base.replace(rounds=int(rounds), prune_fraction=float(prune_fraction),
                           rewind_step=int(rewind_step), scope=scope, lr=float(lr), seeds=1)

        def redraw(res, r):
            update(fig=imp_figure(res), status=f"round {r}: {100 * res.density[r]:.1f}% of the weights")

        res = run_imp(cfg, seeds=[seed], bars=False, on_round=redraw)
        a, last = res.acc, len(res.masks) - 1
        if res.diverged:
            update(status=f"diverged: {res.diverged[0]}")
        elif not res.stopped:
            update(status=f"done: at {100 * res.density[last]:.1f}% of the weights, ticket "
                   f"{100 * a['ticket'][0, last]:.1f}%, re-init {100 * a['reinit'][0, last]:.1f}%, "
                   f"random mask {100 * a['random'][0, last]:.1f}% (dense {100 * a['ticket'][0, 0]:.1f}%)")
        return imp_figure(res)

    controls = controls_for(base, ["rounds", "prune_fraction", "rewind_step", "scope", "lr"])
    limits = {"rewind_step": base.steps, "rounds": 20, "prune_fraction": 0.9}
    for c in controls:
        if c.name in limits:  # narrower than the config allows: what a panel run can afford
            c.high = max(limits[c.name], c.value)
    return Panel(run, controls, title="Try it: iterative magnitude pruning",
                 above=results.provenance_of("lottery_imp") if above == "precomputed" else above,
                 profile=get_profile(profile))


def pai_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: pruning at init at a chosen sparsity, each mask as chosen and shuffled."""
    base = LotteryConfig.for_profile(get_profile(profile), **overrides)
    seed = get_seed(seed)

    def run(update, sparsity, method):
        methods = PAI_METHODS if method == "all" else (method,)
        pai = run_pai_at(base.replace(seeds=1), float(sparsity), methods, seed=seed,
                         bars=False)
        if pai["diverged"]:
            update(status=f"diverged: {pai['diverged'][0]}")
        elif not pai["stopped"]:
            update(status="done: " + ", ".join(
                f"{PAI_NAMES[m]} {100 * pai['acc'][m]['original'][0]:.1f}% "
                f"(shuffled {100 * pai['acc'][m]['shuffled'][0]:.1f}%)" for m in methods))
        return pai_figure(pai)

    return Panel(run, [Slider("sparsity", 0.5, 0.995, value=0.9, step=0.005),
                       Choice("method", ("all",) + PAI_METHODS)],
                 title="Try it: pruning at initialization and the shuffling check",
                 above=results.provenance_of("lottery_pai") if above == "precomputed" else above,
                 profile=get_profile(profile))


def lmc_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: instability of two runs from θ₀ and from θ_k, against the learning rate."""
    base = LotteryConfig.for_profile(get_profile(profile), **overrides)
    seed = get_seed(seed)

    def run(update, lr, rewind_step, optimizer):
        cfg = base.replace(lr=float(lr), optimizer=optimizer)
        lmc = run_lmc(cfg, (0, int(rewind_step)), seed=seed, bars=False)
        why = [f"k = {k}: {v}" for k, v in lmc["diverged"].items() if v]
        if why:
            update(status="diverged: " + "; ".join(why))
        elif not lmc["stopped"]:
            update(status="done: barrier " + ", ".join(
                f"{100 * lmc['barrier'][k]:.1f} pts at k = {k}" for k in lmc["rewind_steps"]))
        return lmc_figure(lmc, f"Two runs from θₖ, {optimizer} lr {float(lr):.2g}")

    return Panel(run, [Slider("lr", 1e-4, 10.0, value=1e-2, log=True, description="learning rate"),
                       Slider("rewind_step", 0, base.steps, value=min(50, base.steps), integer=True,
                              description="rewind step k"),
                       Choice("optimizer", ("adam", "momentum", "sgd"))],
                 title="Try it: linear mode connectivity",
                 above=results.provenance_of("lottery_lmc") if above == "precomputed" else above,
                 profile=get_profile(profile))
