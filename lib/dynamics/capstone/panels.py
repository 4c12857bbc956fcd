"""One network, six phenomena, the live panel: one run with the reader's initial scale,
weight decay, learning rate and optimizer, its timeline redrawn while it trains."""
from __future__ import annotations

from .. import widgets as W
from ..grokking.science import FIT_ACC, GROK_ACC
from ..runtime import get_seed
from .experiments import run
from .figures import timeline_figure
from .science import MEASURES, OneConfig

__all__ = ["timeline_panel"]

REDRAWS = (0.1, 0.35, 0.65)  # the fractions of the run where the timeline is redrawn
MUON_COST = 2.0  # a Muon step's cost against an AdamW step's (Newton–Schulz on a CPU)


def timeline_work(steps, optimizer: str = "adamw", **_) -> float:
    """A run's cost in AdamW steps, about (the measures at each evaluation and the four
    drawings are a fixed share of it)."""
    return float(steps) * (MUON_COST if optimizer == "muon" else 1.0)


def _redraws(update, draw, total: int, at=REDRAWS):
    """A ``train`` ``on_eval`` hook: a redraw with ``draw(history)`` at the first evaluation
    at or past each fraction ``at`` of ``total`` steps, and True (stop) once Stop was
    pressed. The six-panel timeline costs about half a CPU second to build and render, so it
    is redrawn a few times at fixed points of the run, not every 0.7 s of wall clock."""
    marks = sorted({max(1, int(round(f * total))) for f in at})
    redraw, quiet = update.every(draw, interval=0.0), update.every(None)
    done = [0]

    def hook(step, history, model):
        if done[0] < len(marks) and step >= marks[done[0]]:
            while done[0] < len(marks) and step >= marks[done[0]]:
                done[0] += 1
            return redraw(step, history, model)
        return quiet(step, history, model)

    return hook


def timeline_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your initial scale, weight decay, learning rate and optimizer;
    the six-panel timeline redraws while it trains (Stop ends it and shows what it has)."""
    base = OneConfig.for_profile(profile)
    seed = get_seed(seed)
    controls = W.controls_for(base, ["init_scale", "weight_decay", "lr", "optimizer"]) + [
        W.Slider("steps", 100, 20_000, base.steps, step=100, integer=True)]

    def go(update, **values):
        cfg = base.replace(**values)
        box = {}

        def draw(history):
            tl = box.get("timeline")
            if not tl or not tl["step"]:
                return None
            n = min(len(history.steps), len(tl["step"]))
            return timeline_figure(dict(
                step=list(history.steps[:n]), train_acc=list(history["train_acc"][:n]),
                test_acc=list(history["test_acc"][:n]), **{k: tl[k][:n] for k in MEASURES},
                lr=cfg.lr, weight_decay=cfg.weight_decay, fit_step=None, grok_step=None))

        r = run(cfg, seed, on_eval=_redraws(update, draw, cfg.steps), bars=False, timeline=box)
        s = r.summary()
        if not update.stop_requested:
            update(status=f"fit at step {s['fit_step']}, grok at step {s['grok_step']} "
                          f"({s['phase']})")
        return timeline_figure(r, title=f"init x{cfg.init_scale:g}, λ {cfg.weight_decay:g}, "
                                        f"η {cfg.lr:g}, {cfg.optimizer}")

    note = (f"Full-batch steps of a + b mod {base.p} ({base.steps:,} by default, as above), "
            f"seed {seed}; fit = train accuracy > {FIT_ACC:.0%}, grok = test accuracy > "
            f"{GROK_ACC:.0%}.")
    return W.Panel(go, controls, title="Try it: one network, live", note=note, above="live",
                   work=timeline_work)
