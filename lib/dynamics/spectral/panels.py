"""Spectral optimizers, the live panels (``*_panel(profile=None, seed=None)``): what the
reader runs on the page. Each panel trains or computes with the chapter's runners and draws
with its figures.
"""
from __future__ import annotations

import math
from dataclasses import replace

import torch

from .. import progress, results, runtime
from .. import train as T
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import Memory, Shaping, run_memory, run_shaped
from .figures import LABELS, loss_figure, memory_figure, shaping_figure, spectrum_figure
from .science import (MemoryConfig, NSConfig, PracticeConfig, ShapingConfig, default_data,
                      linear_p_schedule, mlp, muon_with_adamw, newton_schulz, practice_data,
                      random_matrix)

__all__ = ["ns_panel", "practice_panel", "memory_panel", "shaping_panel"]

REDRAWS = (0.1, 0.35, 0.65)  # the fractions of a training run where a panel redraws its curve


def _redraws(update, build, total: int, at=REDRAWS):
    """A ``train`` ``on_eval`` hook: a redraw with ``build(history)`` at the first evaluation
    at or past each fraction ``at`` of ``total`` steps (the run function draws the final
    figure), and True (stop training) once Stop was pressed. A figure costs about a tenth of
    a CPU second to build and as much to render, so a few redraws at fixed points of the run,
    whatever the machine's speed, keep a short run short (a redraw every 0.7 s of wall clock
    would cost a loaded machine more than the training)."""
    marks = sorted({max(1, int(round(f * total))) for f in at})
    draw, quiet = update.every(build, interval=0.0), update.every(None)
    done = [0]

    def hook(step, history, model):
        if done[0] < len(marks) and step >= marks[done[0]]:
            while done[0] < len(marks) and step >= marks[done[0]]:
                done[0] += 1
            return draw(step, history, model)
        return quiet(step, history, model)

    return hook


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
                 title="Try it: Newton–Schulz on one matrix", above="live", profile=profile,
                 work=ns_work)


NS_FIXED = 5e9  # the ns panel's figure and the rest of a click, in ns_work's units


def ns_work(rows=256, cols=128, steps=5, **_) -> float:
    """Newton–Schulz's matrix products (rows · cols · min(rows, cols) per step), the SVDs
    that draw the spectra (twice that, once each for the input and the output) and a fixed
    part, :data:`NS_FIXED`: building and drawing the figure, which at the defaults is most of
    a click. A unit is about 3e-11 CPU seconds; measured on one CPU thread (issue 43): 0.16 s
    at the defaults, 0.2 s at 512 × 256, 0.41 s at 1024 × 512, 1.42 s at 1024 × 1024 and
    3.4 s there at 30 steps, which this puts at 1, 1.2, 2.8, 8.3 and 24 times the defaults
    (measured: 1, 1.25, 2.6, 8.9, 21)."""
    r, c = float(rows), float(cols)
    return NS_FIXED + r * c * min(r, c) * (3 * float(steps) + 2 * 10)


def practice_work(optimizer="muon", width=64, depth=3, steps=400, **_) -> float:
    """A training's cost in milliseconds of one CPU thread, about: per step a fixed part,
    the MLP's matrix products (depth · width²) and, for Muon, Newton–Schulz on each hidden
    matrix after the first, in bfloat16, which a CPU emulates: about 4 ms per matrix at width
    64, five times that at 128 and seventy times at 256 (then about the cube of the width).
    Measured on MNIST-1D at batch 256, to within about a quarter."""
    w = float(width) / 64
    per_step = 2.0 + 0.3 * float(depth) * w ** 2
    if optimizer == "muon":
        per_step += 4.0 * max(0, int(depth) - 1) * w ** 2 * max(1.0, w / 2) ** 2.1
    return float(steps) * per_step


def practice_status(h, classes: int = 10) -> str:
    """The practice panel's status line: a diverged run says where; a run whose training
    loss ends at or above its first (within 1%) made no progress, and says so, and says it is
    stuck at chance where that loss is within 0.1 of ln(classes) (at lr = 3 Muon, AdamW and
    SGD with momentum stall there instead of diverging); otherwise its final training loss."""
    if h.diverged:
        return h.status
    loss = h["train_loss"]
    if not len(loss):
        return "no training loss recorded"
    first, last, chance = float(loss[0]), float(loss[-1]), math.log(classes)
    if len(loss) > 1 and last >= 0.99 * first:
        if abs(last - chance) <= 0.1:
            return (f"stuck at chance: final training loss {last:.3g} ≈ ln {classes} = "
                    f"{chance:.3f} (its first: {first:.3g})")
        return (f"no progress: final training loss {last:.3g}, "
                f"{'above' if last > first else 'about'} its first ({first:.3g})")
    return f"final training loss {last:.3g}"


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
                    hooks=T.Hooks(on_eval=_redraws(update, build, c.steps)))
        update(status=practice_status(h, data.n_classes))
        return build(h) if len(h) else None

    return Panel(run, [Choice("optimizer", list(LABELS)[:3], "muon"),
                       Slider("lr", 1e-4, 3.0, 0.03, log=True),
                       Slider("width", 8, 512, cfg.width, step=8, integer=True),
                       Slider("depth", 1, 6, cfg.depth, integer=True),
                       Slider("steps", 20, 3000, cfg.steps, step=10, integer=True)],
                 title="Try it: one optimizer, one learning rate",
                 note="Muon's AdamW part (head, biases) uses lr 3e-3. On a CPU, Muon's "
                      "bfloat16 Newton–Schulz grows with the cube of the width.",
                 above=results.provenance_of("spectral_practice"), profile=profile,
                 work=practice_work)


def memory_ratios(cfg: MemoryConfig, largest: float) -> list:
    """The panel's N / d: the config's ratios up to ``largest`` (in a dry run their ends, N = d
    and N = 8d, which the page reads)."""
    return runtime.grid([r for r in cfg.ratios if r <= largest], always=(1, 8))


def memory_cost(ratios, dim: int) -> list:
    """Each N's share of a draw's cost, about (measured on one CPU thread): the four methods'
    N × N scores and their argmax (N² · (d + 90): at large N most of it) and their d × d work
    (SVD, pseudo-inverses, Newton–Schulz). A unit is about a third of a nanosecond."""
    d = float(dim)
    return [max(2.0, r * d) ** 2 * (d + 90) + 30 * d ** 3 for r in ratios]


MEMORY_DRAWS = 1e9  # the memory panel's three figures, in memory_cost's units


def _merge_memory(parts: list[Memory]) -> Memory:
    """One :func:`run_memory` result from several, each over its own N (in order)."""
    def joined(each):  # each part's list, or each part's lists per method, end to end
        first = each(parts[0])
        if isinstance(first, dict):
            return {m: [v for p in parts for v in each(p)[m]] for m in first}
        return [v for p in parts for v in each(p)]
    return replace(parts[0], n=joined(lambda p: p.n), ratios=joined(lambda p: p.ratios),
                   rank_centers=joined(lambda p: p.rank_centers), fraction=joined(lambda p: p.fraction),
                   mass=joined(lambda p: p.mass), by_rank=joined(lambda p: p.by_rank),
                   by_draw=joined(lambda p: p.by_draw))


def memory_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: dimension, power-law exponent, draws and the largest N → recall after one
    step, the curve drawn once it reaches N = d and again as the larger N come in."""
    cfg = MemoryConfig.for_profile(profile, seed=runtime.get_seed(seed))
    choices = [r for r in cfg.ratios if r >= 8]
    largest = 16 if 16 in choices else choices[-1]
    seeds = min(2, cfg.seeds)

    def run(update, dim, alpha, seeds, largest):
        c = cfg.replace(dim=int(dim), alpha=float(alpha), seeds=int(seeds))
        ratios = memory_ratios(cfg, float(largest))
        cost = memory_cost(ratios, c.dim)
        first = next((r for r in ratios if r >= 1), ratios[-1])
        job = progress.current()  # the panel's bar and Stop
        parts, done = [], 0.0
        for r, w in zip(ratios, cost):
            if job.stopped:
                break
            with job.span_of(done / sum(cost), w / sum(cost)):
                parts.append(run_memory(c.replace(ratios=[r])))
            done += w
            if r == first or (r == 8 and r != ratios[-1]):
                update(fig=memory_figure(_merge_memory(parts)))
        return memory_figure(_merge_memory(parts)) if parts else None

    def work(dim, seeds, largest, **_):
        cost = memory_cost(memory_ratios(cfg, float(largest)), int(dim))
        return MEMORY_DRAWS + float(seeds) * sum(cost)

    note = (f"Defaults: {seeds} draws, N up to {largest:g}d (section 4's run: {cfg.seeds} "
            f"draws, up to {max(cfg.ratios):g}d).")
    return Panel(run, [Slider("dim", 8, 512, cfg.dim, step=8, integer=True)]
                 + controls_for(cfg, ["alpha"])
                 + [Slider("seeds", 1, 10, seeds, integer=True),
                    Choice("largest", choices, largest, "largest N / d")],
                 title="Try it: storage after one step", note=note,
                 above=results.provenance_of("spectral_memory"), profile=profile,
                 work=work)


def shaping_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: a fixed p against a schedule of p, live."""
    cfg = ShapingConfig.for_profile(profile, seed=runtime.get_seed(seed))
    data = default_data()

    def run(update, p, p_start, p_end, lr, steps):
        c = cfg.replace(p_start=p_start, p_end=p_end, lr=lr, steps=int(steps))
        fixed, sched = f"p = {p:g}", f"p: {p_start:g} → {p_end:g}"
        runs = {}

        def build(h, name):
            return shaping_figure(Shaping(runs={**runs, name: h}, schedule=sched, lr=lr), reference=fixed)

        both = [(fixed, p), (sched, linear_p_schedule(p_start, p_end, c.steps))]
        job = progress.current()  # the panel's bar and Stop
        for i, (name, pp) in enumerate(both):
            if job.stopped:
                break
            with job.part(i, 2):
                at = REDRAWS[:2] if i == 0 else REDRAWS[1:2]  # the first curve early
                runs[name] = run_shaped(c, data, pp, on_eval=_redraws(
                    update, lambda h, n=name: build(h, n), c.steps, at))
        bad = [k for k, h in runs.items() if h.diverged]
        if bad:
            update(status="; ".join(f"{k}: {runs[k].status}" for k in bad))
        return shaping_figure(Shaping(runs=runs, schedule=sched, lr=lr), reference=fixed) if runs else None

    return Panel(run, [Slider("p", -1.0, 1.5, 0.0, step=0.05)]
                 + controls_for(cfg, ["p_start", "p_end", "lr"])
                 + [Slider("steps", 20, 2000, cfg.steps, step=10, integer=True)],
                 title="Try it: a fixed p against a schedule of p",
                 above=results.provenance_of("spectral_shaping"), profile=profile,
                 work=shaping_work)


def shaping_work(steps=400, **_) -> float:
    """Two trainings of the same MLP (the fixed p, the schedule): their steps."""
    return 2.0 * float(steps)
