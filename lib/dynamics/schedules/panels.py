"""Schedules and weight averaging, the live panels (:class:`dynamics.widgets.Panel`)."""
from __future__ import annotations

from ..runtime import get_seed
from .experiments import run_anytime, run_cooldown
from .figures import anytime_figure, cooldown_figure
from .science import CooldownConfig, PowerLawConfig

__all__ = ["anytime_panel", "cooldown_panel"]


def anytime_panel(profile: str | None = None, seed: int | None = None):
    """Live: section 1 with the reader's capacity and source exponents, noise and base rate."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    base = PowerLawConfig.for_profile(profile)

    def run(update, capacity, source, sigma, lr):
        cfg = base.replace(capacity=float(capacity), source=float(source), sigma=float(sigma),
                           lr=float(lr))
        r = run_anytime(cfg, seed=seed)
        if not update.stop_requested:
            update(status=f"done: the theory's exponent is {r['gamma']:.2f}")
        return anytime_figure(r)

    return Panel(run, [Slider("capacity", 1.1, 3.0, value=base.capacity, step=0.1),
                       Slider("source", 1.1, 8.0, value=base.source, step=0.1),
                       Slider("sigma", 0.0, 1.0, value=base.sigma, step=0.05),
                       Slider("lr", 0.05, 0.7, value=base.lr, step=0.05)],
                 title="Try it: schedules on the model the theory solves",
                 note="A source below the capacity makes the target hard: the theory then "
                      "wants a constant rate with averaging.", above="live", profile=profile)


def cooldown_panel(profile: str | None = None, seed: int | None = None):
    """Live: section 2 with the reader's constant rate and cooldown fraction (one seed)."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    base = CooldownConfig.for_profile(profile)

    def run(update, lr, cooldown):
        r = run_cooldown(base.replace(lr=float(lr), cooldown=float(cooldown)), seeds=[seed])
        if not update.stop_requested:
            L, st, T = r["train_loss"][seed], r["steps"], r["budgets"][-1]
            update(status=f"done: at step {T} the linear cooldown's training loss is "
                          f"{L[f'linear@{T}'][st.index(T)] / L[f'cosine@{T}'][st.index(T)]:.2f}x "
                          f"the cosine's")
        return cooldown_figure(r)

    return Panel(run, [Slider("lr", 0.005, 0.05, value=base.lr, step=0.005),
                       Slider("cooldown", 0.05, 0.5, value=base.cooldown, step=0.05)],
                 title="Try it: cooldowns branched from one constant run",
                 note="A low constant rate leaves little noise for the cooldown to remove; a "
                      "high one leaves more.", above="live", profile=profile)
