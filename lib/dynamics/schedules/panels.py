"""Schedules and weight averaging, the live panels (:class:`dynamics.widgets.Panel`)."""
from __future__ import annotations

from ..runtime import get_seed
from .experiments import run_anytime
from .figures import anytime_figure
from .science import PowerLawConfig

__all__ = ["anytime_panel"]


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
