"""Schedules and weight averaging, the live panels (:class:`dynamics.widgets.Panel`).

Each draws a first result within a second or two of Run: the anytime panel the exact risk of
the untuned schedules (a recursion, no sampling) before it tunes the cosines and then
simulates; the cooldown panel its shortest budget (the same rows, seed and batches as the
full run's, trained alone) before the full stacked run."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_seed
from .experiments import (Anytime, Risks, _etas, anytime_schedules, cooldown_start,
                          run_cooldown, simulate, tuned_cosines)
from .figures import anytime_figure, cooldown_figure
from .science import CooldownConfig, PowerLawConfig, expected_risk, spectrum, theory_exponent

__all__ = ["anytime_panel", "cooldown_panel"]

PANEL_REPLICAS = 16  # the anytime panel's default data streams (the page's run: the profile's)


def anytime_work(cfg: PowerLawConfig, replicas: int) -> float:
    """The anytime panel's cost, in about CPU seconds on one thread: per step of the longest
    horizon, the exact recursions and the simulation's Python loop (fixed), and the
    simulation's Gaussian draws (schedules × replicas × d per step)."""
    schedules = 3 + cfg.n_horizons
    return cfg.horizons()[-1] * (8e-4 + 1e-8 * schedules * float(replicas) * cfg.d)


def staged_anytime(cfg: PowerLawConfig, seed: int, update) -> Anytime | None:
    """:func:`~.experiments.run_anytime`'s result, computed in the order a panel can draw it:
    the exact risk of the three untuned schedules (drawn), then of the tuned cosines too
    (drawn), then the simulation (the caller draws it). The same result as ``run_anytime``'s;
    None when the reader stopped it."""
    lam, ws = spectrum(cfg.d, cfg.capacity, cfg.source)
    lr = cfg.lr / lam.sum()
    hs = cfg.horizons()
    gamma = theory_exponent(cfg.capacity, cfg.source)
    base = dict(horizons=hs, lr=lr, gamma=gamma, seed=seed, config=cfg)
    kinds = {k: v for k, v in anytime_schedules(cfg, lr).items() if not k.startswith("cos@")}
    exact = expected_risk(lam, ws, cfg.sigma, _etas(kinds, hs[-1]), hs)
    update(fig=anytime_figure(Anytime(**base, names=list(kinds), exact=Risks.of(
        {k: v.tolist() for k, v in exact.items()}))), progress=0.1)
    if update.stop_requested:
        return None
    kinds.update(tuned_cosines(cfg))
    etas = _etas(kinds, hs[-1])
    exact = Risks.of({k: v.tolist()
                      for k, v in expected_risk(lam, ws, cfg.sigma, etas, hs).items()})
    update(fig=anytime_figure(Anytime(**base, names=list(kinds), exact=exact)), progress=0.35)
    sim = simulate(lam, ws, cfg.sigma, etas, hs, cfg.replicas, seed)
    se = {k: (v.std(1, ddof=1) / math.sqrt(v.shape[1]) if v.shape[1] > 1 else 0 * v[:, 0])
          for k, v in sim.items()}
    return Anytime(**base, names=list(kinds),
                   lrs=[kw["lr"] * lam.sum() for kw in kinds.values()],
                   sim=Risks.of({k: v.mean(1).tolist() for k, v in sim.items()}),
                   sim_se=Risks.of({k: np.asarray(v).tolist() for k, v in se.items()}),
                   exact=exact)


def anytime_panel(profile: str | None = None, seed: int | None = None):
    """Live: section 1 with the reader's capacity and source exponents, noise, base rate and
    number of simulated data streams; the exact risk is drawn first, the simulation last."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    base = PowerLawConfig.for_profile(profile)
    replicas = min(PANEL_REPLICAS, base.replicas)

    def run(update, capacity, source, sigma, lr, replicas):
        cfg = base.replace(capacity=float(capacity), source=float(source), sigma=float(sigma),
                           lr=float(lr), replicas=int(replicas))
        r = staged_anytime(cfg, seed, update)
        if r is None:
            return None
        if not update.stop_requested:
            update(status=f"done: the theory's exponent is {r.gamma:.2f}")
        return anytime_figure(r)

    return Panel(run, [Slider("capacity", 1.1, 3.0, value=base.capacity, step=0.1),
                       Slider("source", 1.1, 8.0, value=base.source, step=0.1),
                       Slider("sigma", 0.0, 1.0, value=base.sigma, step=0.05),
                       Slider("lr", 0.05, 0.7, value=base.lr, step=0.05),
                       Slider("replicas", 1, 256, value=replicas, integer=True,
                              description="data streams simulated")],
                 title="Try it: schedules on the model the theory solves",
                 note="A source below the capacity makes the target hard: the theory then "
                      "wants a constant rate with averaging. The exact risk is drawn first; "
                      f"the simulation here averages {replicas} data streams by default "
                      f"(the figure above: {base.replicas}), so its markers scatter more.",
                 above="live", profile=profile,
                 work=lambda replicas, **_: anytime_work(base, int(replicas)))


COOLDOWN_FIXED = 2500.0  # the cooldown panel's fixed part (data, set-up, figures), model-steps


def cooldown_work(cfg: CooldownConfig) -> float:
    """Model-steps of the cooldown panel's two stacked trainings: the shortest budget's four
    schedules alone (the first figure), then every schedule to the longest budget, and a
    fixed part, :data:`COOLDOWN_FIXED` (about 0.8 CPU-s: the data, setting up the stacked
    models and the figures). Fitted to CPU seconds on one thread (issue 43): 1.2 s at a
    longest budget of 200 steps, 2.8 at the default 600, 7.1 at 1800 and 16.8 at 4800, which
    this puts at 0.52, 1, 2.45 and 6.1 times the defaults (measured: 0.42, 1, 2.5, 5.9). A
    model-step is about 0.3 CPU milliseconds."""
    rows = 1 + 3 * cfg.n_budgets
    return COOLDOWN_FIXED + 4.0 * cfg.budgets()[0] + rows * float(cfg.steps)


def _ratio_status(r, seed: int) -> str:
    L, st, T = r.train_loss[seed], r.steps, r.budgets[-1]
    return (f"at step {T} the linear cooldown's training loss is "
            f"{L[f'linear@{T}'][st.index(T)] / L[f'cosine@{T}'][st.index(T)]:.2f}x the cosine's")


def cooldown_panel(profile: str | None = None, seed: int | None = None):
    """Live: section 2 with the reader's constant rate, cooldown fraction and longest budget
    (one seed); the shortest budget is drawn first, trained alone."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    base = CooldownConfig.for_profile(profile)

    def run(update, lr, cooldown, steps):
        cfg = base.replace(lr=float(lr), cooldown=float(cooldown), steps=int(steps))
        first = cfg.replace(steps=cfg.budgets()[0], n_budgets=1,
                            n_evals=max(2, cfg.n_evals // 2 ** (cfg.n_budgets - 1)))
        if cooldown_start(first, first.steps) < first.steps:
            r = run_cooldown(first, seeds=[seed])
            update(fig=cooldown_figure(r), status=f"running: the shortest budget drawn; "
                                                  f"{_ratio_status(r, seed)}", progress=0.1)
        r = run_cooldown(cfg, seeds=[seed])
        if not update.stop_requested:
            update(status=f"done: {_ratio_status(r, seed)}")
        return cooldown_figure(r)

    return Panel(run, [Slider("lr", 0.005, 0.05, value=base.lr, step=0.005),
                       Slider("cooldown", 0.05, 0.5, value=base.cooldown, step=0.05),
                       Slider("steps", 200, 4800, value=base.steps, step=100, integer=True,
                              description="longest budget (steps)")],
                 title="Try it: cooldowns branched from one constant run",
                 note="A low constant rate leaves little noise for the cooldown to remove; a "
                      "high one leaves more. The shortest budget is drawn first.",
                 above="live", profile=profile,
                 work=lambda lr, cooldown, steps: cooldown_work(base.replace(steps=int(steps))))
