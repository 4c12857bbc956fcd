"""Weight decay, the figures: static figures, sliders and tables of the chapter's results.

Figure builders say what to draw; :func:`dynamics.plots.house` places titles, legends,
sliders and margins when a figure is rendered. The live panels are in :mod:`.panels`, the
page's numbers and claims in :mod:`.claims`.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import plots
from .experiments import (DECOUPLING, LABELS, Clock, Decoupling, Equilibrium, Spectrum, grid_array,
                          grid_summary)
from .science import best_decay_per_lr, clock_time

__all__ = ["mp_edge_ratio", "mp_null", "slope_text", "tied_decays_per_lr", "line_sides", "flat_columns", "grid_figure", "grid_slider", "ridge_rows", "grid_rows", "equilibrium_figure",
           "equilibrium_rows", "clock_figure", "clock_rows", "spectrum_figure", "spectrum_rows"]

_WHITE = "rgba(255,255,255,0.95)"
_RIDGE, _CLOCK = plots.PALETTE[1], plots.PALETTE[4]  # legend swatches seen on light and dark pages


def _haloed(fig, x, y, color: str, dash: str, name: str, group: str, legend: bool, col: int):
    """A line drawn in ``color`` over a white halo: the halo keeps it visible on every cell of
    the heat map, the colour keeps its legend swatch visible on a light or a dark page (a white
    line's swatch vanishes on a white legend)."""
    fig.add_scatter(x=x, y=y, mode="lines", line=dict(color=_WHITE, width=4.5), showlegend=False,
                    legendgroup=group, hoverinfo="skip", row=1, col=col)
    fig.add_scatter(x=x, y=y, mode="lines", line=dict(color=color, width=2, dash=dash), name=name,
                    legendgroup=group, showlegend=legend, hoverinfo="skip", row=1, col=col)
_SHORT = {"adam_l2": "Adam + L2", "adamw": "AdamW", "adamw_invariant": "invariant"}


# ============================================================================ 1. grids


def _decade_ticks(values) -> dict:
    """Ticks at every grid value on a log10 axis, labelled at whole powers of ten only."""
    logs = np.log10(np.asarray(values, dtype=float))
    text = [plots.number(10 ** round(v), 1) if abs(v - round(v)) < 1e-6 else "" for v in logs]
    if sum(bool(t) for t in text) < 2:  # a grid narrower than two decades: label every cell
        text = [plots.number(v, 2) for v in values]
    return dict(tickmode="array", tickvals=list(logs), ticktext=text)


def grid_figure(payload: Decoupling, kinds=DECOUPLING, frame: int = -1, title: str | None = None,
                zrange: tuple[float, float] | None = None):
    """Heatmaps of test accuracy over (eta, lambda), one per grid in ``kinds``, at evaluation
    ``frame``. Marked on each: the best cell (outlined), the best decay at each learning rate
    (white dots) and the straight line fitted through them (its slope says which
    parameterization the grid prefers); on AdamW grids, the line eta * lambda * t = 1 below
    which the decay has not had time to act."""
    step = payload.eval_steps[frame]
    fig = plots.subplots(1, len(kinds), [LABELS[k] for k in kinds],
                         title=title or f"Test accuracy after {step:,} steps", height=470,
                         horizontal_spacing=0.19)
    if zrange is None:
        zrange = _zrange(payload, kinds)
    lrs = np.asarray(payload.lrs, dtype=float)
    x = np.log10(lrs)
    dx = (x[1] - x[0]) if len(x) > 1 else 1.0
    shown = set()
    # one legend above the panels: each entry says which panel it belongs to
    every = "both panels" if len(kinds) == 2 else "every panel" if len(kinds) > 2 else "the panel"
    adamw = [LABELS[k] for k in kinds if k.startswith("adamw")]
    where = every if len(adamw) == len(kinds) else f"{' and '.join(adamw)} panel" + \
        ("s" if len(adamw) > 1 else "")
    for c, kind in enumerate(kinds, start=1):
        decays = np.asarray(payload.grids[kind].decays, dtype=float)
        y = np.log10(decays)
        dy = (y[1] - y[0]) if len(y) > 1 else 1.0
        acc = grid_array(payload, kind)[:, :, frame]
        labels = [[[plots.number(e, 2), plots.number(d, 2)] for e in lrs] for d in decays]
        fig.add_heatmap(z=acc, x=x, y=y, zmin=zrange[0], zmax=zrange[1], colorscale="Viridis",
                        texttemplate="%{z:.2f}", textfont=dict(size=10), customdata=labels,
                        showscale=c == len(kinds), colorbar=dict(title="test acc", thickness=12),
                        hovertemplate="η=%{customdata[0]}<br>λ=%{customdata[1]}<br>"
                                      "test acc=%{z:.3f}<extra></extra>", row=1, col=c)
        s = grid_summary(payload, kind, frame)
        if s["best"]["lr"] is not None:  # a trace, not a shape: a slider toggles traces
            bx, by = math.log10(s["best"]["lr"]), math.log10(s["best"]["decay"])
            fig.add_scatter(x=bx + dx / 2 * np.array([-1, 1, 1, -1, -1]),
                            y=by + dy / 2 * np.array([-1, -1, 1, 1, -1]), mode="lines",
                            line=dict(color="white", width=3), name="best cell", legendgroup="best",
                            showlegend=False, hoverinfo="skip", row=1, col=c)
        pts = [(math.log10(e), math.log10(d)) for e, d in zip(lrs, s["ridge"]) if d is not None]
        if pts:
            px, py = np.array(pts).T
            fig.add_scatter(x=px, y=py, mode="markers", name=f"best λ per η ({every})",
                            marker=dict(color="white", size=7, line=dict(color="black", width=1)),
                            legendgroup="ridge", showlegend="ridge" not in shown,
                            hovertemplate="best λ=%{customdata}<extra></extra>",
                            customdata=[plots.number(10 ** v, 2) for v in py], row=1, col=c)
            shown.add("ridge")
        if math.isfinite(s["slope"]):
            fx = np.array([px.min(), px.max()])
            fy = np.polyval(np.polyfit(px, py, 1), fx)
            _haloed(fig, fx, fy, _RIDGE, "dash", f"ridge, slope {slope_text(s['slope'])} "
                    f"({LABELS[kind]} panel)", "ridge " + kind, True, c)
        if kind.startswith("adamw"):
            lx = np.array([x[0] - dx / 2, x[-1] + dx / 2])
            _haloed(fig, lx, -math.log10(step) - lx, _CLOCK, "dot", f"ηλ·t = 1 ({where})",
                    "clock", "clock" not in shown, c)
            shown.add("clock")
        fig.update_xaxes(title_text="learning rate η", range=[x[0] - dx / 2, x[-1] + dx / 2],
                         showgrid=False, **_decade_ticks(lrs), row=1, col=c)
        fig.update_yaxes(title_text="L2 coefficient λ" if "l2" in kind else "weight decay λ",
                         range=[y[0] - dy / 2, y[-1] + dy / 2], showgrid=False,
                         **_decade_ticks(decays), row=1, col=c)
    fig.update_layout(hovermode="closest")
    return fig


def tied_decays_per_lr(acc_seeds, decays, min_gain: float = 0.01, seed: int | None = None) -> list:
    """For each learning rate (a column of ``acc_seeds[seed, decay, lr]``), ``(lowest, highest)``
    of the decays whose accuracy is within the seeds' noise of the best's, on the seed-averaged
    grid or, with ``seed``, on that seed's. The noise is the larger of the two cells' max - min
    over ALL the grid's seeds, whichever grid the best is read on (a grid of one seed: exact
    ties only). None where :func:`~.science.best_decay_per_lr` finds no best decay."""
    acc = np.asarray(acc_seeds, dtype=float)
    if acc.ndim != 3 or acc.shape[1] != len(decays) or acc.shape[0] < (2 if seed is None else 1):
        raise ValueError(f"acc_seeds must be [seed, decay, lr] with two or more seeds and one "
                         f"row per decay, got shape {acc.shape} for {len(decays)} decays")
    if seed is not None and not 0 <= seed < acc.shape[0]:
        raise ValueError(f"seed {seed} is not one of the grid's {acc.shape[0]} seeds")
    mean = np.nanmean(acc, 0) if seed is None else acc[seed]
    spread = np.nanmax(acc, 0) - np.nanmin(acc, 0)
    out = []
    for j, best in enumerate(best_decay_per_lr(mean, decays, min_gain)):
        i = int(np.nanargmax(mean[:, j])) if best is not None else None
        tied = [] if i is None else [decays[k] for k in range(len(decays)) if mean[i, j] - mean[k, j]
                                     <= max(spread[i, j], spread[k, j])]
        out.append((min(tied), max(tied)) if tied else None)
    return out


def line_sides(payload: Decoupling, j: int) -> tuple[list, list]:
    """Column ``j`` of the AdamW grid: the rows (decay indices) below the line
    eta * lambda * t = 1 at the grid's last evaluation, and as many rows just above it (all of
    them where fewer lie above)."""
    below = np.asarray(payload.grids["adamw"].decays) * payload.lrs[j] * payload.eval_steps[-1] < 1
    rows = np.flatnonzero(below).tolist()
    above = np.flatnonzero(~below).tolist()
    return rows, above[:len(rows)]


def flat_columns(payload: Decoupling) -> list:
    """The learning rates (column indices) the below-the-line row reads: two or more decays on
    each side of the line, so that both the treatment and its control have a range."""
    return [j for j in range(len(payload.lrs))
            if all(len(side) > 1 for side in line_sides(payload, j))]


def slope_text(x: float) -> str:
    """A fitted slope as the page prints it (two decimals, a true minus sign)."""
    return f"{x:.2f}".replace("-", "−")


def _zrange(payload: Decoupling, kinds) -> tuple[float, float]:
    """One colour scale for all frames of the grids ``kinds``, so frames compare."""
    vals = np.concatenate([grid_array(payload, k).ravel() for k in kinds])
    vals = vals[np.isfinite(vals)]
    return (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)


def grid_slider(payload: Decoupling, kinds=DECOUPLING):
    """:func:`grid_figure` with a slider over training time (the static book's version)."""
    steps = payload.eval_steps
    zrange = _zrange(payload, kinds)
    figs = [grid_figure(payload, kinds, k, zrange=zrange) for k in range(len(steps))]
    return plots.slider(figs, [f"{s:,}" for s in steps], name="step")


def ridge_rows(payload: Decoupling, kinds=DECOUPLING) -> list[dict]:
    """The best decay at each learning rate of each grid, one row per learning rate (and,
    for AdamW, the best product eta * lambda: Loshchilov & Hutter's decay). A best decay at
    the grid's largest is a lower bound (the best may lie beyond the grid): printed "≥"."""
    sums = {k: grid_summary(payload, k) for k in kinds}
    rows = []
    for j, lr in enumerate(payload.lrs):
        row = {"η": lr}
        for k in kinds:
            d = sums[k]["ridge"][j]
            edge = d is not None and math.isclose(d, max(payload.grids[k].decays))
            row[f"{_SHORT[k]}: best λ"] = f"≥ {plots.number(d, 2)}" if edge else d
            if k.startswith("adamw"):
                row[f"{_SHORT[k]}: best ηλ"] = (None if d is None else
                                               f"≥ {plots.number(lr * d, 2)}" if edge else lr * d)
        rows.append(row)
    return rows


def grid_rows(payload: Decoupling) -> list[dict]:
    """One row per grid: its best cell and the slope of its ridge of best decays."""
    rows = []
    for kind in payload.grids:
        s = grid_summary(payload, kind)
        rows.append({"grid": LABELS[kind], "best test acc": s["best"]["acc"],
                     "at η": s["best"]["lr"], "at λ": s["best"]["decay"],
                     "slope of best λ vs η": round(s["slope"], 2)})
    return rows


# ============================================================================ 2. equilibrium


def equilibrium_figure(results_list, title: str | None = None):
    """Norm, angular update and effective learning rate (rows) against step, measured (solid,
    one colour per weight matrix) and predicted (dashed), one column per run; a dotted line
    marks tau = 1 / (eta lambda)."""
    if isinstance(results_list, Equilibrium):
        results_list = [results_list]
    cols = len(results_list)
    heads = [f"{LABELS[r.optimizer]}: η={plots.number(r.lr, 2)}, λ={plots.number(r.weight_decay, 2)}"
             for r in results_list]
    fig = plots.subplots(3, cols, title=title or "Measured (solid) and predicted (dashed)",
                         height=720, column_titles=heads, shared_xaxes=True,
                         vertical_spacing=0.05, horizontal_spacing=0.12)
    series = [("rms", "rms_pred", "step", "RMS of W", False),
              ("angle", "angle_pred", "angle_step", "angle per step (rad)", False),
              ("effective_lr", "effective_lr_pred", "step", "effective lr", True)]
    for col, r in enumerate(results_list, start=1):
        for row, (key, pred_key, xkey, ytitle, logy) in enumerate(series, start=1):
            y, yp = (np.array(getattr(r, k), dtype=float) for k in (key, pred_key))
            x = np.array(getattr(r, xkey), dtype=float)
            if y.size == 0:
                continue
            for l, name in enumerate(r.names):
                color = plots.PALETTE[l % len(plots.PALETTE)]
                fig.add_scatter(x=x, y=y[:, l], mode="lines", name=name, legendgroup=name,
                                showlegend=row == 1 and col == 1, line=dict(color=color, width=1.5),
                                row=row, col=col)
                fig.add_scatter(x=x, y=yp[:, l], mode="lines", name=f"{name} theory",
                                legendgroup=name, showlegend=False,
                                line=dict(color=color, dash="dash", width=2), row=row, col=col)
            if logy:
                fig.update_yaxes(type="log", row=row, col=col)
            elif key == "angle":  # the first steps can turn far more than at equilibrium
                top = max(1.15 * float(np.nanpercentile(y, 98)), 1.5 * float(r.eq_angle))
                fig.update_yaxes(range=[0, top], row=row, col=col)
            else:
                fig.update_yaxes(rangemode="tozero", row=row, col=col)
            if col == 1:
                fig.update_yaxes(title_text=ytitle, row=row, col=col)
            if r.tau <= r.steps:
                plots.mark_step(fig, r.tau, "τ" if row == 1 else "", row=row, col=col)
        fig.update_xaxes(title_text="step", row=3, col=col)
    fig.add_scatter(x=[None], y=[None], mode="lines", name="theory (dashed)",
                    line=dict(color="#555", dash="dash", width=2), row=1, col=1)
    fig.update_layout(hovermode="closest")
    return fig


def equilibrium_rows(result: Equilibrium) -> list[dict]:
    """Measured and predicted equilibrium values (mean over the last quarter), per layer, and
    each layer's rotation at the end: the cosine distance from its initial weights
    (:func:`~.science.layer_rotation`)."""
    return [{"matrix": f"{LABELS[result.optimizer]} {name}",
             "RMS": v.rms, "RMS theory": v.rms_pred,
             "angle (rad)": v.angle, "angle theory": v.angle_pred,
             "eff. lr": v.effective_lr, "eff. lr theory": v.effective_lr_pred,
             "layer rotation": v.rotation}
            for name, v in result.layers.items()]


# ============================================================================ 3. the clock


def clock_figure(result: Clock, metric: str = "train_loss", title: str | None = None):
    """``metric`` against eta * lambda * t (steps in units of tau) for every run of
    :func:`~.experiments.run_clock`: three matched runs in blues, the odd one in red."""
    fig = plots.figure(title or "Equal η·λ against another, in units of τ",
                       "η·λ·t  (training time in units of τ)",
                       metric.replace("_", " "), logy=metric.endswith("loss"))
    blues = ["#6baed6", "#3182bd", "#08519c"]  # the palest still visible on a white page
    k, span = 0, 0.0
    for r, h in zip(result.runs, result.histories):
        if not len(h):
            continue
        prod = r.lr * r.weight_decay
        x = clock_time(h.steps, r.lr, r.weight_decay)
        if r.matched:
            color, k, span = blues[k % 3], k + 1, max(span, max(x))
        else:
            color = plots.PALETTE[1]
        fig.add_scatter(x=x, y=h[metric],
                        mode="lines+markers", marker=dict(size=4), line=dict(color=color),
                        name=f"η={plots.number(r.lr, 2)}, λ={plots.number(r.weight_decay, 2)}"
                             f" (ηλ={plots.number(prod, 2)})" + (" (diverged)" if h.diverged else "")
                             + ("" if r.matched else ", in its own τ"))
    if span:  # the odd run's larger product spans more of its own τ: the axis is the matched runs'
        fig.update_xaxes(range=[0, span])
    fig.update_layout(hovermode="closest")
    return fig


def clock_rows(result: Clock) -> list[dict]:
    """Each run of :func:`~.experiments.run_clock`: its eta, lambda, product and settled loss."""
    return [{"η": r.lr, "λ": r.weight_decay, "ηλ": r.lr * r.weight_decay,
             "settled train loss": loss} for r, loss in zip(result.runs, result.final_loss)]


# ============================================================================ 4. the weights

_LAYER_DASH = {"hidden.0": "dot", "hidden.1": "solid", "head": "dash"}


def spectrum_figure(result: Spectrum, layer: str = "hidden.1", title: str | None = None):
    """Left: each weight matrix's Frobenius norm during training (hidden.0 dotted, hidden.1
    solid, head dashed), with and without decay. Right: the singular values of ``layer``
    by rank, at initialization and after training."""
    fig = plots.subplots(1, 2, ["Frobenius norm during training", f"singular values of {layer}"],
                         title=title or "What weight decay does to the weights", height=440,
                         horizontal_spacing=0.2)
    for k, (wd, run) in enumerate(result.runs.items()):
        color = plots.PALETTE[k]
        label = f"λ = {plots.number(float(wd), 2)}" + (" (diverged)" if run.history.diverged else "")
        h = run.history
        for name in _LAYER_DASH:
            key = f"norm {name}"
            if key in h:
                fig.add_scatter(x=np.maximum(np.asarray(h.steps, dtype=float), 1), y=h[key],
                                mode="lines", name=label, legendgroup=label,
                                showlegend=name == "hidden.1",
                                line=dict(color=color, dash=_LAYER_DASH[name]),
                                hovertemplate=f"{name}: %{{y:.3g}}<extra>{label}</extra>", row=1, col=1)
        if layer in run.final:
            sv = run.final[layer]
            fig.add_scatter(x=np.arange(1, len(sv) + 1), y=sv, mode="lines", name=label,
                            legendgroup=label, showlegend=False, line=dict(color=color, width=2.5),
                            row=1, col=2)
    sv0 = next(iter(result.runs.values())).init[layer]
    fig.add_scatter(x=np.arange(1, len(sv0) + 1), y=sv0, mode="lines", name="initialization",
                    line=dict(color="#888", dash="dot"), row=1, col=2)
    fig.update_xaxes(type="log", title_text="step", row=1, col=1)
    fig.update_yaxes(type="log", title_text="‖W‖ (Frobenius)", row=1, col=1)
    fig.update_xaxes(type="log", title_text="rank i", row=1, col=2)
    fig.update_yaxes(type="log", title_text="σᵢ", row=1, col=2)
    fig.update_layout(hovermode="closest")
    return fig


def mp_edge_ratio(sv, shape) -> float:
    """Section 4's gap over the whole spectrum: the largest eigenvalue of W^T W over the
    Marchenko-Pastur bulk edge of a ``shape`` matrix with singular values ``sv``, the edge
    sigma^2 N (1 + sqrt(y))^2 (N the larger side, y the aspect ratio) fitted to the median
    eigenvalue, which a few spikes barely move: about 1 on a random Gaussian matrix,
    ((1 + t^2) / t)^2 / 4 on a square one with a rank-one spike of strength t above the BBP
    threshold t = 1."""
    x = np.sort(np.asarray(sv, dtype=float) ** 2)
    if len(shape) != 2 or len(x) != min(shape) or len(x) < 2:
        raise ValueError(f"mp_edge_ratio needs min(shape) singular values, got {len(x)} for {shape}")
    y = min(shape) / max(shape)
    lo, hi = (1 - math.sqrt(y)) ** 2, (1 + math.sqrt(y)) ** 2
    t = (lo + (hi - lo) * np.linspace(0, 1, 20001) ** 2)[1:-1]  # dense at both edges
    dens = np.sqrt((hi - t) * (t - lo)) / (2 * math.pi * y * t) * np.gradient(t)
    median = t[np.searchsorted(np.cumsum(dens) / dens.sum(), 0.5)]
    return float(x[-1] / (np.median(x) / median * hi))


NULL_DRAWS = 20  # random Gaussian matrices behind mp_null


@functools.cache
def mp_null(shape, draws: int = NULL_DRAWS) -> float:
    """The largest :func:`mp_edge_ratio` over ``draws`` random Gaussian matrices of ``shape``
    (a fixed seed): how far a matrix without spikes reaches past its edge."""
    rng = np.random.default_rng(0)
    return max(mp_edge_ratio(np.linalg.svd(rng.standard_normal(shape), compute_uv=False), shape)
               for _ in range(draws))


def spectrum_rows(result: Spectrum) -> list[dict]:
    """Norms, ranks and the tail fit of each trained weight matrix, with and without decay:
    the tail's alpha, whether it is a power law at all (:func:`~.spectra.tail_fit`), and the
    run's final training and test accuracy."""
    rows = []
    for wd, run in result.runs.items():
        for name, s in run.stats.items():
            rows.append({"λ": float(wd), "weight": name, "Frobenius norm": s.frobenius,
                         "spectral norm": s.spectral, "stable rank": s.stable_rank,
                         "effective rank": s.effective_rank, "tail α": s.tail_alpha,
                         "power law?": "yes" if s.tail_power_law else "no",
                         "train acc": run.train_acc, "test acc": run.test_acc})
    return rows
