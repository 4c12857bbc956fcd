"""Spectral optimizers, the live panels (``*_panel(profile=None, seed=None)``): what the
reader runs on the page. Each panel trains or computes with the chapter's runners and draws
with its figures.
"""
from __future__ import annotations

import torch

from .. import progress, results, runtime
from .. import train as T
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import run_memory, run_shaped
from .figures import LABELS, loss_figure, memory_figure, shaping_figure, spectrum_figure
from .science import (MemoryConfig, NSConfig, PracticeConfig, ShapingConfig, default_data,
                      linear_p_schedule, mlp, muon_with_adamw, newton_schulz, practice_data,
                      random_matrix)

__all__ = ["ns_panel", "practice_panel", "memory_panel", "shaping_panel"]


# ================================================================ live panels


def ns_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: coefficients, steps, matrix shape and spectrum → singular values after NS."""
    cfg = NSConfig.for_profile(profile, seed=runtime.get_seed(seed))

    def run(update, rows, cols, spectrum, steps, a, b, c):
        rows, cols = int(rows), int(cols)
        G = random_matrix(rows, cols, spectrum, cfg.seed)
        out = newton_schulz(G, int(steps), (a, b, c), dtype=torch.float32)
        if not torch.isfinite(out).all():
            update(status=f"diverged: coefficients ({a:.3g}, {b:.3g}, {c:.3g}) blow up "
                          "singular values")
            return None
        s = torch.linalg.svdvals(out)
        update(status=f"singular values in [{s.min():.3g}, {s.max():.3g}]")
        return spectrum_figure(G, out, f"{rows}×{cols}, {spectrum}, {steps} steps")

    return Panel(run, controls_for(cfg, ["rows", "cols", "spectrum", "steps", "a", "b", "c"]),
                 title="Try it: Newton–Schulz on one matrix", above="live", profile=profile)


def practice_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: train the MLP with one optimizer at one learning rate, live."""
    cfg = PracticeConfig.for_profile(profile, seed=runtime.get_seed(seed))
    data = practice_data(cfg)

    def run(update, optimizer, lr, width, depth, steps):
        c = cfg.replace(width=int(width), depth=int(depth), steps=int(steps))
        model = mlp(data, c.width, c.depth, c.seed)
        opt = (lambda m: muon_with_adamw(m, lr, 3e-3)) if optimizer == "muon" else optimizer
        build = lambda h: loss_figure({LABELS[optimizer]: h},  # noqa: E731
                                      f"{LABELS[optimizer]}, lr {lr:.3g}")
        recipe = T.Recipe(c.steps, optimizer=opt, lr=lr, batch_size=c.batch_size,
                          eval=T.Every(max(1, c.steps // 50), test=False))
        h = T.train(model, data, recipe, seed=c.seed,
                    hooks=T.Hooks(on_eval=update.every(build)))
        update(status=h.status if h.diverged else f"final training loss {h.last('train_loss'):.3g}")
        return build(h) if len(h) else None

    return Panel(run, [Choice("optimizer", list(LABELS)[:3], "muon"),
                       Slider("lr", 1e-4, 3.0, 0.03, log=True),
                       Slider("width", 8, 512, cfg.width, step=8, integer=True),
                       Slider("depth", 1, 6, cfg.depth, integer=True),
                       Slider("steps", 20, 3000, cfg.steps, step=10, integer=True)],
                 title="Try it: one optimizer, one learning rate",
                 note="Muon's AdamW part (head, biases) uses lr 3e-3.",
                 above=results.provenance_of("spectral_practice"), profile=profile)


def memory_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: dimension, power-law exponent and draws → recall after one step."""
    cfg = MemoryConfig.for_profile(profile, seed=runtime.get_seed(seed))

    def run(update, dim, alpha, seeds):
        c = cfg.replace(dim=int(dim), alpha=float(alpha), seeds=int(seeds))
        return memory_figure(run_memory(c))

    return Panel(run, [Slider("dim", 8, 512, cfg.dim, step=8, integer=True)]
                 + controls_for(cfg, ["alpha"])
                 + [Slider("seeds", 1, 10, min(cfg.seeds, 10), integer=True)],
                 title="Try it: storage after one step",
                 above=results.provenance_of("spectral_memory"), profile=profile)


def shaping_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: a fixed p against a schedule of p, live."""
    cfg = ShapingConfig.for_profile(profile, seed=runtime.get_seed(seed))
    data = default_data()

    def run(update, p, p_start, p_end, lr, steps):
        c = cfg.replace(p_start=p_start, p_end=p_end, lr=lr, steps=int(steps))
        fixed, sched = f"p = {p:g}", f"p: {p_start:g} → {p_end:g}"
        runs = {}

        def build(h, name):
            return shaping_figure(dict(runs={**runs, name: h}, lr=lr), reference=fixed)

        both = [(fixed, p), (sched, linear_p_schedule(p_start, p_end, c.steps))]
        job = progress.current()  # the panel's bar and Stop
        for i, (name, pp) in enumerate(both):
            if job.stopped:
                break
            with job.part(i, 2):
                runs[name] = run_shaped(c, data, pp, on_eval=update.every(lambda h, n=name: build(h, n)))
        bad = [k for k, h in runs.items() if h.diverged]
        if bad:
            update(status="; ".join(f"{k}: {runs[k].status}" for k in bad))
        return shaping_figure(dict(runs=runs, lr=lr), reference=fixed) if runs else None

    return Panel(run, [Slider("p", -1.0, 1.5, 0.0, step=0.05)]
                 + controls_for(cfg, ["p_start", "p_end", "lr"])
                 + [Slider("steps", 20, 2000, cfg.steps, step=10, integer=True)],
                 title="Try it: a fixed p against a schedule of p",
                 above=results.provenance_of("spectral_shaping"), profile=profile)
