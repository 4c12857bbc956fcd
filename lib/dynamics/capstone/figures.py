"""One network, six phenomena, the figures: the timeline figure, one figure per question and the
slider over the precomputed grid. The live panel is in :mod:`.panels`, the claims in
:mod:`.claims`."""
from __future__ import annotations

import math

import numpy as np

from .. import plots
from .experiments import CapstoneGrid, GridRow, OneRun, clock_fit
from .facts import plateau_cells
from .science import MEASURES, equilibrium_rms
from ..runtime import get_seed

__all__ = ["timeline_of", "timeline_figure", "init_figure", "clock_figure",
           "optimizer_figure", "lottery_figure", "grid_rows", "grid_slider"]

ROWS = (("accuracy", None), ("weight RMS ‖θ‖/√n", None), ("NC1 (train)", "log"),
        ("ETF distance of the class means", None), ("effective rank / n", None),
        ("Fourier concentration (top 10%)", None))


def timeline_of(r: OneRun) -> dict:
    """A run's timeline as plain lists (for figures and JSON): steps, accuracies, every
    measure, and the run's lr, weight decay, fit and grok steps."""
    h = r.history
    n = min(len(h.steps), len(r.timeline["step"]))
    out = dict(step=list(h.steps[:n]), train_acc=list(h["train_acc"][:n]),
               test_acc=list(h["test_acc"][:n]),
               **{k: list(r.timeline[k][:n]) for k in MEASURES})
    out.update(lr=r.config.lr, weight_decay=r.config.weight_decay, fit_step=r.fit_step,
               grok_step=r.grok_step, optimizer=r.config.optimizer)
    return out


def _x(steps) -> np.ndarray:
    return np.asarray(steps, dtype=float)


def timeline_figure(tl, title: str = ""):
    """The one run on one step axis, six panels: train (solid) and test (dashed) accuracy;
    the weight RMS against AdamW's equilibrium √(η/2λ) (dotted) with the clock τ = 1/(ηλ)
    marked; NC1 on the training set; the ETF distance of the class means; the effective rank
    (over its maximum) of a hidden weight matrix, of its last update (dashed) and of the
    optimizer's step in that update, the decay term taken out (dotted); the Fourier
    concentration of the input weights. Fit and grok steps dotted in every panel."""
    if isinstance(tl, OneRun):
        tl = timeline_of(tl)
    fig = plots.subplots(len(ROWS), 1, titles=[t for t, _ in ROWS], title=title, height=1250,
                         shared_xaxes=True, vertical_spacing=0.045)
    P, x = plots.PALETTE, _x(tl["step"])

    def line(y, name, row, color, dash="solid", legend=True):
        fig.add_scatter(x=x, y=y, name=name, line=dict(color=color, dash=dash), row=row, col=1,
                        showlegend=legend, mode="lines")

    line(tl["train_acc"], "train accuracy", 1, P[0])
    line(tl["test_acc"], "test accuracy", 1, P[0], "dash")
    line(tl["weight_rms"], "weight RMS", 2, P[4])
    eq = equilibrium_rms(tl["lr"], tl["weight_decay"])
    if math.isfinite(eq):
        fig.add_scatter(x=[x[0], x[-1]], y=[eq, eq], mode="lines", name="√(η/2λ)",
                        line=dict(color=P[4], dash="dot"), row=2, col=1)
    line(tl["nc1"], "NC1", 3, P[1])
    line(tl["etf_distance"], "ETF distance", 4, P[1], "dash")
    line(tl["weight_rank"], "rank of the weights", 5, P[2])
    fig.add_scatter(x=x, y=tl["update_rank"], name="rank of the update", mode="lines",
                    line=dict(color=P[2], dash="dash"), connectgaps=True, row=5, col=1)
    fig.add_scatter(x=x, y=tl["step_rank"], name="rank of the step, decay taken out",
                    mode="lines", line=dict(color=P[5], dash="dot"), connectgaps=True, row=5,
                    col=1)
    line(tl["fourier"], "Fourier concentration", 6, P[3])
    fig.update_yaxes(range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=3, col=1)
    fig.update_xaxes(title_text="step", row=len(ROWS), col=1)
    fig.update_layout(hovermode="x unified")
    for row in range(1, len(ROWS) + 1):
        for step, label in ((tl.get("fit_step"), "fit"), (tl.get("grok_step"), "grok")):
            if step is None:
                continue
            if row == 1:
                plots.mark_step(fig, step, f"{label} {step}", row=1, col=1)
            else:
                fig.add_vline(x=step, line=dict(color="#555", dash="dot", width=1), row=row, col=1)
    if tl["weight_decay"] > 0:
        tau = 1.0 / (tl["lr"] * tl["weight_decay"])
        if tau <= x[-1]:
            plots.mark_step(fig, tau, "τ = 1/(ηλ)", color=P[4], row=2, col=1)
    return fig


def _median(values):
    v = [x for x in values if x is not None]
    return float(np.median(v)) if v else None


def init_figure(rows: list[GridRow], title: str = "initial scale: lazy ↔ rich"):
    """Fit and grok steps against the initial scale (every parameter x the scale): one marker
    per seed, a line through the medians; a run that never groks is left out."""
    fig = plots.figure(title, "initial scale (x the default init)", "step", logx=True)
    scales = sorted({r.init_scale for r in rows})
    for i, key in enumerate(("fit_step", "grok_step")):
        color = plots.PALETTE[i]
        pts = [(r.init_scale, getattr(r, key)) for r in rows if getattr(r, key) is not None]
        fig.add_scatter(x=[a for a, _ in pts], y=[b for _, b in pts], mode="markers",
                        marker=dict(color=color, size=7), name=f"{key[:-5]} step, each seed")
        med = [(s, _median([getattr(r, key) for r in rows if r.init_scale == s]))
               for s in scales]
        med = [(s, m) for s, m in med if m is not None]
        fig.add_scatter(x=[s for s, _ in med], y=[m for _, m in med], mode="lines",
                        line=dict(color=color), name=f"{key[:-5]} step, median")
    # ticks at the swept scales, not the axis's own (0.5, 1, 2 left x4 unlabelled)
    fig.update_xaxes(tickmode="array", tickvals=scales, ticktext=[f"{s:g}" for s in scales])
    return fig


CLOCK_SETS = (("grok step", "circle", "dash"), ("wait, grok − fit", "circle-open", "dot"))


def clock_figure(rows: list[GridRow], budget: int,
                 title: str = "the clock 1/(ηλ): the grok step and the wait after the fit step"):
    """Two sets of markers against τ = 1/(ηλ) on log-log axes, one colour per learning rate:
    the grok step (filled) and the wait after the fit step, grok step − fit step (open,
    :func:`~.facts.plateau_cells`: what the clock row judges), each set with its own
    least-squares line of :func:`~.experiments.clock_fit` (dashed and dotted); cells that
    never grokked sit at the budget's edge (``budget``, the steps each cell trained) as
    crosses, their hover saying so (no grok step of theirs is drawn)."""
    if not (isinstance(budget, int) and budget > 0):
        raise ValueError(f"budget must be the number of steps each cell trained, got {budget!r}")
    fig = plots.figure(title, "τ = 1/(ηλ) (steps)", "steps", logx=True)
    fig.update_yaxes(type="log")
    lrs = sorted({r.lr for r in rows})
    top = budget
    sets = dict(zip((name for name, *_ in CLOCK_SETS), (rows, plateau_cells(rows))))
    for i, lr in enumerate(lrs):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        for name, symbol, _ in CLOCK_SETS:
            ok = [r for r in sets[name] if r.lr == lr and r.grok_step is not None]
            fig.add_scatter(x=[r.tau for r in ok], y=[r.grok_step for r in ok], mode="markers",
                            marker=dict(color=color, size=8, symbol=symbol),
                            name=f"η = {lr:g}: {name}", legendgroup=name)
        no = [r for r in rows if r.lr == lr and r.grok_step is None]
        if no:
            fig.add_scatter(x=[r.tau for r in no], y=[top] * len(no), mode="markers",
                            marker=dict(color=color, symbol="x", size=8),
                            name=f"η = {lr:g}, no grok within {budget:,} steps",
                            hovertemplate=f"τ = %{{x:.3g}}: no grok within {budget:,} steps"
                                          "<extra></extra>")
    taus = [r.tau for r in rows]
    for name, _, dash in CLOCK_SETS:
        fit = clock_fit(sets[name])
        if math.isfinite(fit["slope"]):
            t = np.geomspace(min(taus), max(taus), 20)
            fig.add_scatter(x=t, y=np.exp(fit["intercept"]) * t ** fit["slope"], mode="lines",
                            line=dict(color="#555", dash=dash), legendgroup=name,
                            name=f"fit of the {name}: slope {fit['slope']:.2f}, "
                                 f"r² {fit['r2']:.2f}")
    return fig


NAMES = {"adamw": "AdamW", "muon": "Muon"}  # as the page writes them


def optimizer_figure(opt: dict, title: str = "AdamW and Muon, each at its best learning rate"):
    """Test accuracy (top) and the effective rank of the update of the hidden matrix
    (bottom: dashed, the whole update; dotted, the optimizer's step with the decay term taken
    out) of the best run of each optimizer (:func:`~.experiments.optimizer_runs`), each
    one's grok step marked and labelled on the accuracy panel."""
    fig = plots.subplots(2, 1, titles=("test accuracy",
                                 "rank / n<br>dashed: the update; dotted: the step alone"),
                         title=title, height=620, shared_xaxes=True, vertical_spacing=0.1)
    for i, (name, v) in enumerate(opt.items()):
        best = v["best"]
        tl = timeline_of(best) if isinstance(best, OneRun) else best
        v = dict(lr=best.config.lr if name == "adamw" else best.config.muon_lr) \
            if isinstance(best, OneRun) else dict(lr=tl["lr"])
        color = plots.PALETTE[i]
        label = f"{NAMES.get(name, name)} (η = {v['lr']:g})"
        fig.add_scatter(x=_x(tl["step"]), y=tl["test_acc"], name=label, line=dict(color=color),
                        row=1, col=1)
        fig.add_scatter(x=_x(tl["step"]), y=tl["update_rank"], name=label, showlegend=False,
                        line=dict(color=color, dash="dash"), connectgaps=True, row=2, col=1)
        fig.add_scatter(x=_x(tl["step"]), y=tl["step_rank"], name=f"{label}, decay taken out",
                        showlegend=False, line=dict(color=color, dash="dot"), connectgaps=True,
                        row=2, col=1)
        plots.mark_step(fig, tl["grok_step"], f"{NAMES.get(name, name)} groks", color=color,
                        row=1, col=1)
    fig.update_yaxes(range=[-0.02, 1.05])
    fig.update_xaxes(title_text="step", row=2, col=1)
    return fig


def lottery_figure(lot: dict, title: str = ""):
    """Test accuracy of the dense run and of each sparse arm of
    :func:`~.experiments.lottery` (solid), with training accuracy (dotted)."""
    title = title or f"sparse networks at {lot['density']:.0%} of the weights"
    fig = plots.figure(title, "step", "accuracy")
    for i, (name, a) in enumerate(lot["arms"].items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=_x(a["steps"]), y=a["test_acc"], name=f"{name} · test", mode="lines",
                        line=dict(color=color), legendgroup=name)
        fig.add_scatter(x=_x(a["steps"]), y=a["train_acc"], name=f"{name} · train",
                        mode="lines", line=dict(color=color, dash="dot"), legendgroup=name,
                        showlegend=False)
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def grid_rows(payload: CapstoneGrid, optimizer: str | None = None) -> list[GridRow]:
    """The precomputed grid's rows (of one optimizer)."""
    return [r for r in payload.rows if optimizer is None or r.optimizer == optimizer]


GRID_LINES = (("solid: test accuracy", "solid"), ("dotted: train accuracy", "dot"))


def grid_slider(payload: CapstoneGrid, seed: int | None = None):
    """The precomputed grid as a slider over (optimizer, initial scale): each position shows
    the test (solid) and train (dotted) accuracy of every weight decay, for one seed."""
    seed = get_seed(seed)
    rows, curves = payload.rows, payload.curves
    figs, labels, active = [], [], 0
    keys = sorted({(r.optimizer, r.init_scale) for r in rows},
                  key=lambda k: (k[0] != "adamw", k[1]))
    for opt, scale in keys:
        fig = plots.figure(f"{opt}, initial scale x{scale:g}", "step", "accuracy")
        picked = [(r, c) for r, c in zip(rows, curves) if r.optimizer == opt
                  and r.init_scale == scale and r.seed == seed]
        for i, (r, c) in enumerate(sorted(picked, key=lambda rc: rc[0].weight_decay)):
            color = plots.PALETTE[i % len(plots.PALETTE)]
            grok = r.grok_step if r.grok_step is not None else "none"
            name = f"λ {r.weight_decay:g} (grok {grok})"
            fig.add_scatter(x=_x(c.steps), y=c.test_acc, name=name, mode="lines",
                            line=dict(color=color), legendgroup=name)
            fig.add_scatter(x=_x(c.steps), y=c.train_acc, name=f"{name}, train", mode="lines",
                            line=dict(color=color, dash="dot"), showlegend=False,
                            legendgroup=name)
        # which line is which: two legend entries of their own, in grey, drawn nowhere
        for label, dash in GRID_LINES:
            fig.add_scatter(x=[None], y=[None], name=label, mode="lines",
                            line=dict(color="#555", dash=dash), hoverinfo="skip")
        fig.update_yaxes(range=[-0.02, 1.02])
        if (opt, scale) == ("adamw", 1.0):
            active = len(figs)
        figs.append(fig)
        labels.append(f"{opt} x{scale:g}")
    return plots.slider(figs, labels, name="optimizer, initial scale", active=active)
