"""Neural collapse, the live panels (``*_panel``): each section's experiment for the reader to
re-run with widgets, redrawing as it trains (Stop ends a run with what it has). The figures
they draw come from :mod:`.figures`.
"""
from __future__ import annotations

from .. import results
from ..runtime import get_seed
from ..train import History
from .experiments import live_eval_steps, run_collapse, run_imbalance, simplex_frames
from .figures import conditions_figure, imbalance_figure, nc_figure, simplex_frames_figure
from .science import CollapseConfig, ImbalanceConfig, terminal_phase_start

__all__ = ["WEIGHT_DECAYS", "collapse_panel", "simplex_panel", "conditions_panel",
           "imbalance_panel"]

WEIGHT_DECAYS = (0.0, 0.01, 0.1, 0.3, 1.0, 3.0)


def _report(update, history: History) -> None:
    """Say in the panel's status what the run did, unless the reader stopped it."""
    if update.stop_requested:
        return
    if history.diverged:
        update(status=f"{history.status}: try a smaller learning rate")
    elif terminal_phase_start(history) is None:
        update(status="done: training error never reached 0 (no terminal phase)")


def collapse_panel(profile: str | None = None, seed: int | None = None):
    """Section 1: train the network live and watch NC1–NC4 (weight decay, learning rate,
    loss, steps)."""
    from ..widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)
    seed = get_seed(seed)

    def run(update, weight_decay, lr, loss, steps):
        cfg = base.replace(weight_decay=float(weight_decay), lr=float(lr), loss=loss, steps=int(steps))
        h, _ = run_collapse(cfg, seed, on_eval=update.every(nc_figure),
                            eval_steps=live_eval_steps(cfg.steps, cfg.n_evals))
        _report(update, h)
        return nc_figure(h)

    controls = [Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                *controls_for(base, ["lr", "loss"]),
                Slider("steps", 100, max(20000, base.steps), base.steps, step=100, integer=True)]
    return Panel(run, controls, title="Try it: the terminal phase",
                 above=results.provenance_of("collapse_weight_decay"), profile=profile)


def simplex_panel(profile: str | None = None, seed: int | None = None):
    """Section 2: the 3-D geometry for 3 or 4 classes (weight decay, steps)."""
    from ..widgets import Choice, Panel, Slider

    base = CollapseConfig.for_profile(profile, n_classes=4)
    seed = get_seed(seed)

    def run(update, n_classes, weight_decay, steps):
        cfg = base.replace(n_classes=int(n_classes), weight_decay=float(weight_decay), steps=int(steps))
        h, rec = run_collapse(cfg, seed, snapshots=True, on_eval=update.every(nc_figure),
                              eval_steps=live_eval_steps(cfg.steps, cfg.n_evals))
        _report(update, h)
        if h.diverged or len(h) < 2:
            return nc_figure(h)
        return simplex_frames_figure(*simplex_frames(h, rec))

    controls = [Choice("n_classes", (3, 4), 4, "classes"),
                Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                Slider("steps", 100, max(20000, base.steps), base.steps, step=100, integer=True)]
    return Panel(run, controls, title="Try it: watch the simplex form",
                 above=results.provenance_of("collapse_simplex"), profile=profile)


def conditions_panel(profile: str | None = None, seed: int | None = None):
    """Section 3: Jacot et al.'s conditions for one run (optimizer, weight decay, width,
    depth of the linear part, learning rate)."""
    from ..widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)
    seed = get_seed(seed)

    def run(update, optimizer, weight_decay, width, linear_depth, lr):
        cfg = base.replace(optimizer=optimizer, weight_decay=float(weight_decay), width=int(width),
                           linear_depth=int(linear_depth), lr=float(lr))
        name = f"{optimizer}, weight decay {weight_decay:g}"
        h, _ = run_collapse(cfg, seed, eval_steps=live_eval_steps(cfg.steps, cfg.n_evals),
                            on_eval=update.every(lambda h: conditions_figure({name: h})))
        _report(update, h)
        return conditions_figure({name: h})

    controls = [Choice("optimizer", ("adamw", "sgd", "momentum"), base.optimizer,
                       "optimizer (sgd: plain gradient descent)"),
                Choice("weight_decay", (0.0, 5e-4, 1e-3, 2e-3, 5e-3) + WEIGHT_DECAYS[1:],
                       base.weight_decay, "weight decay"),
                Slider("width", 8, max(1024, base.width), base.width, step=8, integer=True),
                *controls_for(base, ["linear_depth", "lr"])]
    return Panel(run, controls, title="Try it: what weight decay does to the linear part",
                 above=results.provenance_of("collapse_gd_weight_decay"), profile=profile)


def imbalance_panel(profile: str | None = None, seed: int | None = None):
    """Section 4: imbalanced classes (ratio, depth of the linear part, weight decays)."""
    from ..widgets import Panel, controls_for

    base = ImbalanceConfig.for_profile(profile)
    seed = get_seed(seed)

    def run(update, ratio, linear_depth, weight_decay, ufm_weight_decay):
        cfg = base.replace(ratio=float(ratio), linear_depth=int(linear_depth),
                           weight_decay=float(weight_decay), ufm_weight_decay=float(ufm_weight_decay))
        result = run_imbalance(cfg, seed)
        if result["stopped"]:
            return imbalance_figure(result)
        bad = [f"{part} {result[part]['status']}" for part in ("ufm", "network")
               if result[part]["status"] != "ok"]
        if bad:
            update(status="; ".join(bad) + ": try a smaller learning rate")
        return imbalance_figure(result)

    controls = controls_for(base, ["ratio", "linear_depth", "weight_decay", "ufm_weight_decay"])
    return Panel(run, controls, title="Try it: imbalanced classes",
                 above=results.provenance_of("collapse_imbalance"), profile=profile)
