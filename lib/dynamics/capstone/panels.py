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


def timeline_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your initial scale, weight decay, learning rate and optimizer;
    the six-panel timeline redraws while it trains (Stop ends it and shows what it has)."""
    base = OneConfig.for_profile(profile)
    seed = get_seed(seed)
    controls = W.controls_for(base, ["init_scale", "weight_decay", "lr", "optimizer"])

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

        r = run(cfg, seed, on_eval=update.every(draw), bars=False, timeline=box)
        s = r.summary()
        if not update.stop_requested:
            update(status=f"fit at step {s['fit_step']}, grok at step {s['grok_step']} "
                          f"({s['phase']})")
        return timeline_figure(r, title=f"init x{cfg.init_scale:g}, λ {cfg.weight_decay:g}, "
                                        f"η {cfg.lr:g}, {cfg.optimizer}")

    note = (f"{base.steps:,} full-batch steps of a + b mod {base.p}, seed {seed}; fit = train "
            f"accuracy > {FIT_ACC:.0%}, grok = test accuracy > {GROK_ACC:.0%}.")
    return W.Panel(go, controls, title="Try it: one network, live", note=note, above="live")
