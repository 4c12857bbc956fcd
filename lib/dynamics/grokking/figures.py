"""Grokking, the figures: training curves, progress measures, the phase diagram and its
sliders over precomputed data, the remedies' and the corrupted labels' figures, and the
tables of every experiment (:func:`table`; the algorithm section's figures are in
:mod:`.algorithm`). Layout (legends, sliders, margins, log ticks) is the house layout's
(:func:`dynamics.plots.house`); builders here say only what to draw. The live panels are in
:mod:`.panels`; the page's numbers and the claims in :mod:`.claims`."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .. import plots
from ..sweep import table_grid
from ..train import History
from .experiments import GrokRun, PhaseRow, PhaseSweep, remedy_configs, speedups
from .records import Corrupted, OptimizerRuns, ProgressMeasures, RemedyRow, Speedup, UnitSpectra
from .science import fit_and_grok

__all__ = ["REMEDY_LABELS", "training_figure", "progress_figure", "spectrum_figure",
           "phase_figure", "phase_slider", "curves_slider", "remedies_figure", "corrupted_figure",
           "table", "runs_table", "remedy_last", "remedy_table", "corrupted_table", "optimizer_table",
           "best_rate", "remedy_facts", "perp_phase"]

REMEDY_LABELS = {
    "baseline": "AdamW (baseline)",
    "strong_wd": "3x weight decay",
    "grokfast": "Grokfast-EMA",
    "perp_grad": "⊥Grad, no wd",
    "stablemax": "StableMax, no wd",
    "muon": "Muon",
    "no_wd": "no weight decay",
}


# ============================================================================ training curves


def _histories(runs) -> dict:
    if isinstance(runs, (GrokRun, History)):
        runs = {"": runs}
    return {name: (r.history if isinstance(r, GrokRun) else r) for name, r in runs.items()}


def _steps(h) -> np.ndarray:
    return np.maximum(np.asarray(h.steps if isinstance(h, History) else h, dtype=float), 1)


def training_figure(runs, title: str = "", marks: bool = True):
    """Train (solid) and test (dashed) accuracy, and loss, against step on a log axis, for
    one run or a dict of runs; the first run's fit and grok steps marked."""
    hs = _histories(runs)
    fig = plots.subplots(1, 2, titles=("accuracy", "loss"), title=title)
    for i, (name, h) in enumerate(hs.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        for split in ("train", "test"):
            label = " · ".join(x for x in (name, split) if x) + (" (diverged)" if h.diverged else "")
            line = dict(color=color, dash="solid" if split == "train" else "dash")
            fig.add_scatter(x=_steps(h), y=h[f"{split}_acc"], name=label, line=line,
                            legendgroup=label, row=1, col=1)
            fig.add_scatter(x=_steps(h), y=h[f"{split}_loss"], name=label, line=line,
                            legendgroup=label, showlegend=False, row=1, col=2)
    fig.update_xaxes(type="log", title_text="step")
    fig.update_yaxes(range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    if marks and hs:
        fit, grok = fit_and_grok(next(iter(hs.values())))
        _mark(fig, fit, grok, rows=[1], cols=[1, 2])
    return fig


def _mark(fig, fit, grok, rows, cols) -> None:
    """Dotted lines at the fit and grok steps in every panel, labelled in the first."""
    for n, (row, col) in enumerate((r, c) for r in rows for c in cols):
        for step, label in ((fit, "fit"), (grok, "grok")):
            if step is None:
                continue
            if n == 0:
                plots.mark_step(fig, step, f"{label} {step}", row=row, col=col, logx=True)
            else:
                fig.add_vline(x=step, line=dict(color="#555", dash="dot", width=1), row=row, col=col)


def progress_figure(pm: ProgressMeasures, title: str = ""):
    """The plateau is not idle: train/test loss with the restricted and excluded loss (top),
    the total weight norm (middle) and the Fourier concentration of the input layer
    (bottom), against step on a log axis, fit and grok steps marked."""
    fig = plots.subplots(3, 1, titles=("loss (training pairs unless marked)", "weight norm ‖θ‖",
                                       "Fourier concentration (top-10% share)"),
                         title=title, height=760, shared_xaxes=True, vertical_spacing=0.08)
    hs, cs = _steps(pm.history_steps), _steps(pm.step)
    P = plots.PALETTE
    fig.add_scatter(x=hs, y=pm.train_loss, name="train loss", line=dict(color=P[0]), row=1, col=1)
    fig.add_scatter(x=hs, y=pm.test_loss, name="test loss (test pairs)",
                    line=dict(color=P[0], dash="dash"), row=1, col=1)
    fig.add_scatter(x=cs, y=pm.restricted_loss, name="restricted loss",
                    line=dict(color=P[3]), row=1, col=1)
    fig.add_scatter(x=cs, y=pm.excluded_loss, name="excluded loss", line=dict(color=P[1]),
                    row=1, col=1)
    fig.add_scatter(x=cs, y=pm.weight_norm, name="weight norm", line=dict(color=P[4]),
                    showlegend=False, row=2, col=1)
    fig.add_scatter(x=cs, y=pm.fourier_top10, name="Fourier concentration",
                    line=dict(color=P[2]), showlegend=False, row=3, col=1)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=3, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=3, col=1)
    fig.update_layout(hovermode="x unified")
    _mark(fig, pm.fit_step, pm.grok_step, rows=[1, 2, 3], cols=[1])
    return fig


def spectrum_figure(spectra: dict[str, UnitSpectra], p: int, title: str = ""):
    """Left: the input layer's Fourier energy per frequency at the fit step and at the end.
    Right: the strongest units' own spectra at the end (one row each, sorted by their
    dominant frequency): each unit reads about one frequency."""
    fig = plots.subplots(1, 2, titles=("whole layer", "strongest units, at the end"),
                         title=title, column_widths=[0.55, 0.45], horizontal_spacing=0.12)
    k = list(range(p // 2 + 1))
    for i, (when, label) in enumerate((("fit", "at the fit step"), ("end", "at the end"))):
        if when in spectra:
            fig.add_bar(x=k, y=spectra[when].layer, marker_color=plots.PALETTE[i], name=label,
                        row=1, col=1)
    if "end" in spectra:
        fig.add_heatmap(z=spectra["end"].units, x=k, colorscale="Viridis", zmin=0, zmax=1,
                        colorbar=dict(title="share of the unit's energy", thickness=12),
                        hovertemplate="frequency %{x}<br>unit %{y}<br>share %{z:.2f}<extra></extra>",
                        row=1, col=2)
    fig.update_xaxes(title_text="frequency k")
    fig.update_yaxes(title_text="share of energy", row=1, col=1)
    fig.update_yaxes(title_text="unit", row=1, col=2)
    fig.update_layout(hovermode="closest", barmode="group")
    return fig


# ============================================================================ phase diagram

def _cell_text(rows: list[PhaseRow]) -> str:
    """A cell's label: its phase (the most common over seeds), the median grok step, and the
    median train / test accuracy at the end (:func:`~.science.end_accuracy`)."""
    phase = Counter(r.phase for r in rows).most_common(1)[0][0]
    groks = [r.grok_step for r in rows if r.grok_step is not None
             and r.phase in ("grokking", "comprehension")]
    ends = [(r.end_train_acc, r.end_test_acc) for r in rows
            if not math.isnan(r.end_train_acc)]
    step = f"t {int(np.median(groks))}" if groks and phase in ("grokking", "comprehension") else " "
    accs = (f"{np.median([a for a, _ in ends]):.0%} / {np.median([b for _, b in ends]):.0%}"
            if ends else " ")
    return f"{phase}<br>{step}<br>{accs}"


def phase_figure(rows: list[PhaseRow], title: str = "steps to generalize"):
    """The phase diagram over weight decay (x) and training fraction (y). Colour: steps to
    generalize (test accuracy > GROK_ACC; log scale) of the cells that generalize and keep it;
    each cell names its phase, its grok step ``t`` and its train / test accuracy at the end
    (over several seeds: the most common phase, the medians of its seeds that have it)."""
    common = {}  # several seeds per cell: the colour follows the phase the cell names
    for r in rows:
        common.setdefault((r.train_frac, r.weight_decay), []).append(r.phase)
    common = {k: Counter(v).most_common(1)[0][0] for k, v in common.items()}
    good = [dict(r.to_dict(), _t=r.grok_step if r.phase in ("grokking", "comprehension")
                 and common[r.train_frac, r.weight_decay] in ("grokking", "comprehension")
                 else None) for r in rows]
    z, xs, ys = table_grid(good, "_t", "weight_decay", "train_frac", reduce="median")
    text = [[_cell_text([r for r in rows if r.weight_decay == x and r.train_frac == y])
             for x in xs] for y in ys]
    with np.errstate(divide="ignore", invalid="ignore"):
        logz = np.log10(z)
    finite = logz[np.isfinite(logz)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 3.0)
    ticks = [t for t in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)
             if lo - 0.05 <= math.log10(t) <= hi + 0.05]
    if len(ticks) < 3:  # a narrow range: its ends as ticks too (two significant digits)
        ticks = sorted({*ticks, *(float(f"{10 ** v:.2g}") for v in (lo, hi))})
    fig = plots.heatmap(logz, [f"{x:g}" for x in xs], [f"{y:g}" for y in ys], title=title,
                        xtitle="weight decay", ytitle="training fraction", ztitle="steps",
                        text_fmt=None, colorscale="Viridis_r")
    fig.data[0].update(text=text, texttemplate="%{text}", textfont=dict(size=9),
                       hovertemplate="weight decay %{x}<br>training fraction %{y}<br>"
                                     "%{text}<extra></extra>",
                       colorbar=dict(tickvals=[math.log10(t) for t in ticks],
                                     ticktext=[f"{t:,.0f}" for t in ticks]))
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


def phase_slider(sweep, title: str = "test accuracy"):
    """Test accuracy over (weight decay, training fraction), with a slider over training
    time: the static counterpart of re-running the sweep (:meth:`SweepResult.slider_over_time`)."""
    if isinstance(sweep, PhaseSweep):  # a file's runs
        sweep = sweep.result()
    fig = sweep.slider_over_time("test_acc", x="weight_decay", y="train_frac", n=12,
                                 title=title, zmin=0.0, zmax=1.0, text_fmt=".2f",
                                 xtitle="weight decay", ytitle="training fraction")
    fig.update_traces(colorbar_title_text="test accuracy")
    return fig


def curves_slider(sweep, train_frac: float):
    """Training curves of the phase-diagram runs at one training fraction, with a slider over
    weight decay: the static counterpart of the live training panel."""
    if isinstance(sweep, PhaseSweep):  # a file's runs
        sweep = sweep.result()
    picked = [(c, h) for c, h in sweep if math.isclose(c["train_frac"], train_frac)
              and c.get("seed", 0) == 0]
    if not picked:
        raise ValueError(f"no runs at training fraction {train_frac}")
    figs = [training_figure(h, title=f"weight decay {c['weight_decay']:g}", marks=False)
            for c, h in picked]
    labels = [f"{c['weight_decay']:g}" for c, _ in picked]
    active = next((i for i, (c, _) in enumerate(picked) if c["weight_decay"] == 1.0), len(picked) - 1)
    return plots.slider(figs, labels, name="weight decay", active=active)


# ============================================================================ remedies, corruption


def runs_table(runs: dict):
    """One row per named run: fit and grok steps, phase (or the divergence), final train and
    test accuracy."""
    rows = []
    for name, r in runs.items():
        h = r.history
        rows.append({"run": name, "fit step": r.fit_step, "grok step": r.grok_step,
                     "phase": h.status if h.diverged else r.phase,
                     "train (%)": 100 * h.last("train_acc"), "test (%)": 100 * h.last("test_acc")})
    return plots.table(rows, formats={"train (%)": "{:.1f}", "test (%)": "{:.1f}"})


def remedies_figure(remedies, budget: int | None = None,
                    title: str = "speed-up over the baseline"):
    """Speed-up of each remedy in steps to grok over the baseline (bars; above 1 = faster);
    a run that never groks within the budget shows as 0, labelled "no grok". ``remedies``:
    the rows of :func:`~.experiments.run_remedies` with their ``budget`` (steps), or their
    :func:`~.experiments.speedups`."""
    speed = speedups(remedies, budget) if isinstance(remedies, list) else remedies
    names = [n for n in speed if n != "baseline"]
    values = [speed[n].speedup if speed[n].grokked else 0.0 for n in names]
    fig = plots.bars([REMEDY_LABELS.get(n, n) for n in names], values, title=title,
                     ytitle="baseline steps / remedy steps", text_fmt="{:.2f}x")
    fig.data[0].text = [f"{v:.2f}x" if speed[n].grokked else "no grok"
                        for n, v in zip(names, values)]
    fig.add_hline(y=1.0, line=dict(color="#555", dash="dot", width=1))
    return fig


def remedy_last(rows: list[RemedyRow], cfg, reuse=()) -> dict:
    """The last step each row of :func:`~.experiments.run_remedies` ran, by its rule: a run it
    reused (same seed and config, ``reuse``) ran its own history; the others stopped at their
    grok step, or ran the whole budget (``cfg.steps``) without grokking, or diverged."""
    variants, out = remedy_configs(cfg), {}
    for r in rows:
        done = [x for x in reuse if x.seed == r.seed and x.config == variants[r.name]]
        out[r.name, r.seed] = (done[0].history.steps[-1] if done else r.grok_step
                               if r.grok_step is not None else cfg.steps
                               if r.status == "ok" else int(r.status.split()[-1]))
    return out


def remedy_table(rows: list[RemedyRow], cfg=None, reuse=()):
    """The rows of :func:`~.experiments.run_remedies` as a table; with the ``cfg`` and the
    ``reuse`` they were run with, the step each stopped at (:func:`remedy_last`), where their
    test accuracy is read."""
    col, last = "test accuracy at the last step run (%)", remedy_last(rows, cfg, reuse) if cfg else {}
    return plots.table(
        [{"remedy": REMEDY_LABELS.get(r.name, r.name), "weight decay": r.weight_decay,
          "fit step": r.fit_step, "grok step": r.grok_step,
          **({"stopped at step": last[r.name, r.seed]} if last else {}),
          col: 100 * r.final_test_acc} for r in rows], formats={col: "{:.1f}"})


def corrupted_figure(out: Corrupted, title: str = ""):
    """Corrupted labels: per weight decay, test accuracy (solid) and, on the corrupted training
    examples, the share predicted with their wrong label (memorized, dashed) or their true
    label (corrected, dotted)."""
    fig = plots.figure(title or f"{out.noise:.0%} of the training labels corrupted", "step",
                       "accuracy", logx=True)
    for i, r in enumerate(out.runs):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        wd = f"wd {r.weight_decay:g}"
        for y, name, dash in ((r.test_acc, "test", "solid"), (r.memorized, "memorized", "dash"),
                              (r.corrected, "corrected", "dot")):
            fig.add_scatter(x=_steps(r.steps), y=y, name=f"{wd} · {name}", mode="lines",
                            line=dict(color=color, dash=dash))
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def corrupted_table(out: Corrupted):
    """Final values of :func:`~.experiments.run_corrupted`, one row per weight decay."""
    return plots.table(
        [{"weight decay": r.weight_decay, "test (%)": 100 * r.final_test_acc,
          "memorized (%)": 100 * r.final_memorized, "corrected (%)": 100 * r.final_corrected}
         for r in out.runs],
        formats={k: "{:.1f}" for k in ("test (%)", "memorized (%)", "corrected (%)")})



def optimizer_table(opt: dict[str, OptimizerRuns]):
    """The Muon-against-AdamW runs (:func:`~.algorithm.optimizer_runs`): each learning rate
    tried on the first seed, then each optimizer's best on every seed, with its grok step. Where
    no rate tried grokked, none is best: the rate the others' seeds ran is marked "none (first
    of a tie)"."""
    rows = []
    for name, o in opt.items():
        first = min(o.grok)
        tie = all(g is None for g in o.tried.values())
        mark = "none (first of a tie)" if tie else "yes"
        for lr, g in o.tried.items():
            rows.append({"optimizer": name, "learning rate": lr, "seed": first, "grok step": g,
                         "best": mark if lr == o.best else ""})
        for s, g in o.grok.items():
            if s != first:
                rows.append({"optimizer": name, "learning rate": o.best, "seed": s,
                             "grok step": g, "best": mark})
    return plots.table(rows, missing="not within the budget")


def best_rate(o: OptimizerRuns) -> str:
    """An optimizer's best learning rate (:func:`~.algorithm.optimizer_runs`) as the page says it:
    "none" when no rate grokked (a tie of failures has no best), and whether it is at the edge."""
    tried = {float(k): v for k, v in o.tried.items()}
    lo, hi = min(tried), max(tried)
    if all(v is None for v in tried.values()):
        return f"none, no run grokked at η from {lo:g} to {hi:g} within the budget"
    best = float(o.best)
    edge = " (the grid's edge: a better rate may lie beyond it)" if best in (lo, hi) and lo != hi else ""
    return f"{best:g}{edge}"


def remedy_facts(speed: dict[str, Speedup]) -> dict:
    """Section 4's numbers from :func:`~.experiments.speedups`: each remedy's speed-up over the
    baseline (0 when it did not grok), and words for the verdicts the prose glues."""
    s = {k: (v.speedup if v.grokked else 0.0) for k, v in speed.items()}
    g, strong, sm = (s.get(k, 0.0) for k in ("grokfast", "strong_wd", "stablemax"))
    return dict(  # 3: the 3x decay's clock factor (experiments.remedy_configs)
        speed=s, strong=strong, strong_vs_clock="less than" if strong < 3 else "at least",
        grokfast=("does not grok within the budget" if not g else f"{'slows' if g < 1 else 'speeds up'}"
                  f" this full-batch MLP ({g:.2f}x the baseline's speed)"),
        stablemax=("does not make the network generalize within the budget" if not sm else
                   f"makes the network generalize ({sm:.2f}x the baseline's speed)"))


def perp_phase(r: RemedyRow | None) -> str:
    """⊥Grad's run as the page says it: whether it fits and groks at the same evaluation."""
    if r is None or r.grok_step is None or r.fit_step is None:
        return "its run does not both fit and generalize within the budget"
    return (f"it fits and generalizes at the same evaluation, step {r.fit_step}, with no plateau"
            if r.fit_step == r.grok_step else f"it fits at step {r.fit_step} and generalizes at "
            f"step {r.grok_step}, {r.grok_step / r.fit_step:.1f} times the fit step")


def table(result, **kw):
    """The table of an experiment's result, whichever it is: section 1's named runs
    (``{name: GrokRun}``, :func:`runs_table`), the rows of
    :func:`~.experiments.run_remedies` (:func:`remedy_table`, ``kw`` its ``cfg`` and ``reuse``), Muon against AdamW
    (:func:`~.algorithm.optimizer_runs`, :func:`optimizer_table`) or one seed's corrupted
    labels (:func:`~.experiments.run_corrupted`, :func:`corrupted_table`)."""
    if isinstance(result, list):
        return remedy_table(result, **kw)
    if isinstance(result, Corrupted):
        return corrupted_table(result)
    if isinstance(result, dict) and set(result) == {"adamw", "muon"}:
        return optimizer_table(result)
    if isinstance(result, dict) and all(isinstance(r, GrokRun) for r in result.values()):
        return runs_table(result)
    raise TypeError(f"no table for a {type(result).__name__} of this shape")
