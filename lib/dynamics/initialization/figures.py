"""Initialization, the figures: the experiments' results drawn (``*_figure``) and tabled
(``*_rows``). Layout (legend, title, sliders, margins) is the house style's business
(:func:`dynamics.plots.house`); builders here only say what to draw. The live panels are in
:mod:`.panels`; the isometry figure is in :mod:`.isometry` and Section 5's in :mod:`.width`.
"""
from __future__ import annotations

import numpy as np

from .. import plots
from ..book import and_list
from .experiments import (CHANCE, ChaosRun, DepthTime, Fluctuations, GuessingRun, Saxe, Signal, Trainability,
                          best_sigma_w2, learning_times)
from .facts import leading_line
from .science import (ACTIVATIONS, INIT_SCHEMES, critical_sigma_w2, signal_summary,
                      trainable_depth)

__all__ = ["signal_figure", "signal_rows", "chaos_figure", "trainability_figure",
           "trainability_rows", "fluctuations_figure", "saxe_figure", "depth_time_figure",
           "guessing_figure"]


_GRAY = "#777"


def _positive(values):
    """Zeros (and non-finite values) become None: they cannot be drawn on a log axis."""
    return [v if (v is not None and np.isfinite(v) and v > 0) else None for v in values]


# =============================================================================================
# 1. Signal propagation
# =============================================================================================


SIGNAL_PANELS = (("act_std", "activation std"), ("grad_in", "‖dL/dz‖ (backward)"),
                 ("grad_norm", "‖dL/dW‖"))


def signal_figure(res: Signal, activation: str | None = None):
    """Per layer, one curve per init: the activation std (the forward signal), the norm of the
    loss gradient with respect to the preactivations (the backward signal) and that of the
    weight gradient (their product); a slider over the activations (or one activation's
    figure)."""
    figs = []
    acts = [activation] if activation else res.activations()
    for act in acts:
        fig = plots.subplots(1, len(SIGNAL_PANELS), [t for _, t in SIGNAL_PANELS],
                             title=f"{act} network at initialization")
        for init, st in res.nets(act).items():
            color = plots.PALETTE[INIT_SCHEMES.index(init) % len(plots.PALETTE)]
            layers = list(range(1, len(st.act_std) + 1))
            dead = not any(_positive(st.act_std))
            name = init + (" (all 0)" if dead else "")
            for col, (key, _) in enumerate(SIGNAL_PANELS, start=1):
                fig.add_scatter(x=layers, y=_positive(getattr(st, key)), name=name, mode="lines",
                                line=dict(color=color), legendgroup=init,
                                showlegend=col == 1, row=1, col=col)
        fig.update_yaxes(type="log")
        fig.update_xaxes(title_text="layer")
        fig.update_layout(hovermode="closest")
        figs.append(fig)
    if len(figs) == 1:
        return figs[0]
    return plots.slider(figs, acts, name="activation",
                        active=acts.index("relu") if "relu" in acts else 0)


def signal_rows(res: Signal) -> list[dict]:
    """One table row per activation and init (:func:`~.science.signal_summary`): how much of
    the forward signal reaches the last layer, how much of the backward signal reaches the
    first (both over layers of one width), and how large the weight gradient is (its median
    over layers 2..L, whose fan-in is the width; None: no signal at all)."""
    rows = []

    def shown(v):
        return v if np.isfinite(v) else None

    for act, inits in res.items():
        for init, st in inits.items():
            sm = signal_summary(st)
            rows.append({"activation": act, "init": init,
                         "activation std, last/first layer": shown(sm["forward"]),
                         "‖dL/dz‖, first/last layer": shown(sm["backward"]),
                         "‖dL/dW‖, median over layers 2–L": shown(sm["weight_size"])
                         if sm["weight_size"] > 0 else None})
    return rows


# =============================================================================================
# 2. Order and chaos
# =============================================================================================


def chaos_figure(res: ChaosRun):
    """Four panels: theory as lines, measurements on random networks as open markers."""
    fig = plots.subplots(2, 2, ["length map", "correlation map", "critical line χ₁ = 1",
                                "depth scale ξ_c"],
                         title="Order to chaos in random tanh networks", height=760)
    for i, (qm, cm) in enumerate(zip(res.q_map, res.c_map)):
        color = plots.PALETTE[i]
        label = f"σ_w²={qm.sigma_w2:g}"
        fig.add_scatter(x=qm.q_in, y=qm.q_out, mode="lines", name=label,
                        line=dict(color=color), legendgroup=label, row=1, col=1)
        for seq in qm.measured:
            fig.add_scatter(x=seq[:-1], y=seq[1:], mode="markers", name=label + ", measured",
                            marker=dict(color=color, size=7, symbol="circle-open"),
                            legendgroup=label, showlegend=False, row=1, col=1)
        fig.add_scatter(x=cm.c_in, y=cm.c_out, mode="lines", name=label, showlegend=False,
                        line=dict(color=color), legendgroup=label, row=1, col=2)
        for seq in cm.measured:
            fig.add_scatter(x=seq[:-1], y=seq[1:], mode="markers", showlegend=False,
                            name=label + ", measured", legendgroup=label,
                            marker=dict(color=color, size=7, symbol="circle-open"), row=1, col=2)
    for (lo, hi), col in (((0, 3), 1), ((-0.2, 1), 2)):
        fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="#999", dash="dot"),
                        name="identity", showlegend=False, row=1, col=col)
    lt, lm = res.line_theory, res.line_measured
    fig.add_scatter(x=lt.sigma_w2, y=lt.sigma_b2, mode="lines", name="theory",
                    line=dict(color="#222"), row=2, col=1)
    fig.add_scatter(x=lm.sigma_w2, y=lm.sigma_b2, mode="markers", name="measured",
                    marker=dict(color="#222", size=8, symbol="circle-open"), row=2, col=1)
    top = max(lt.sigma_b2)
    fig.add_annotation(text="ordered", x=min(lt.sigma_w2) + 0.2, y=0.85 * top,
                       showarrow=False, xanchor="left", row=2, col=1)
    fig.add_annotation(text="chaotic", x=max(lt.sigma_w2), y=0.1 * top, showarrow=False,
                       xanchor="right", row=2, col=1)
    xt, xm = res.xi_theory, res.xi_measured
    fig.add_scatter(x=xt.sigma_w2, y=[min(v, 1e3) if v is not None else 1e3 for v in xt.xi],
                    mode="lines", name="ξ_c theory", line=dict(color="#222"), showlegend=False,
                    row=2, col=2)
    fig.add_scatter(x=xm.sigma_w2, y=_positive(xm.xi), mode="markers", name="ξ_c measured",
                    marker=dict(color="#222", size=8, symbol="circle-open"), showlegend=False,
                    row=2, col=2)
    fig.update_xaxes(title_text="q in layer l", row=1, col=1)
    fig.update_yaxes(title_text="q in layer l+1", row=1, col=1)
    fig.update_xaxes(title_text="c in layer l", row=1, col=2)
    fig.update_xaxes(title_text="σ_w²", row=2, col=1)
    fig.update_yaxes(title_text="σ_b²", row=2, col=1)
    fig.update_xaxes(title_text="σ_w²", row=2, col=2)
    fig.update_yaxes(title_text="layers", type="log", row=2, col=2)
    fig.update_layout(hovermode="closest")
    return fig


def _index(values, grid_values):
    """Positions of ``values`` on an axis that places ``grid_values`` at 0, 1, 2, ...:
    piecewise linear between grid points, linear beyond the ends (one more step at most)."""
    g = np.asarray(grid_values, dtype=float)
    idx = np.arange(len(g), dtype=float)
    v = np.asarray(values, dtype=float)
    out = np.interp(v, g, idx)
    if len(g) > 1:
        hi = v > g[-1]
        out[hi] = len(g) - 1 + np.minimum((v[hi] - g[-1]) / (g[-1] - g[-2]), 2.0)
    return out


def trainability_figure(res: Trainability, title: str = ""):
    """The accuracy grid over (sigma_w^2, depth), one equal cell per grid point, with the
    6 xi_c line of mean-field theory (placed by linear interpolation between grid points);
    the critical sigma_w^2 (chi_1 = 1), when on the grid, has a bold tick label."""
    acc = np.asarray([[np.nan if v is None else v for v in row] for row in res.acc], float)
    nx, ny = len(res.sigma_w2), len(res.depths)
    fig = plots.heatmap(acc, list(range(nx)), list(range(ny)), zmin=CHANCE, zmax=1.0,
                        title=title or f"Training accuracy after {res.steps:,} SGD steps",
                        xtitle="σ_w²", ytitle="depth", ztitle="train acc",
                        text_fmt=".2f" if nx <= 12 else None)
    cells = np.stack(np.broadcast_arrays(np.asarray(res.sigma_w2, float)[None, :],
                                         np.asarray(res.depths, float)[:, None]), -1)
    fig.data[0].update(customdata=cells, hovertemplate="σ_w² = %{customdata[0]}<br>depth "
                       "%{customdata[1]}<br>train acc %{z:.3f}<extra></extra>")
    line = [v if v is not None else np.inf for v in res.six_xi]
    fig.add_scatter(x=_index(res.line_sigma_w2, res.sigma_w2),
                    y=_index(np.minimum(line, 1e6), res.depths), mode="lines",
                    name="6 ξ_c (mean-field theory)", line=dict(color="#ff4136", width=3, dash="dash"),
                    hoverinfo="skip")
    crit = critical_sigma_w2(res.sigma_b2)
    ticks = [f"<b>{s:g}</b>" if abs(s - crit) < 0.02 else f"{s:g}" for s in res.sigma_w2]
    if res.diverged:
        d = np.asarray(res.diverged, dtype=float)
        fig.add_scatter(x=_index(d[:, 1], res.sigma_w2), y=_index(d[:, 0], res.depths),
                        mode="markers", name="diverged", marker=dict(symbol="x", size=10, color="#222",
                                                                      line=dict(color="#fff", width=1)))
    fig.update_xaxes(tickvals=list(range(nx)), ticktext=ticks,
                     range=[-0.5, nx - 0.5], showgrid=False)
    fig.update_yaxes(tickvals=list(range(ny)), ticktext=[str(d) for d in res.depths],
                     range=[-0.5, ny - 0.5], showgrid=False)
    fig.update_layout(showlegend=True)
    return fig


def _band(values, ok) -> str:
    """The grid values where ``ok`` holds: "all", a list, or "none"."""
    vals = [v for v, k in zip(values, ok) if k]
    if len(vals) == len(values):
        return "all"
    return ", ".join(f"{v:g}" for v in vals) if vals else "none"


TIE = 5e-4  # accuracies this close to the best print alike at three digits: a tie


def _and(values) -> str:
    return and_list(f"{v:g}" for v in values)


def trainability_rows(heat: Trainability, level: float = 0.5) -> list[dict]:
    """Per depth of the grid: the best sigma_w^2 and its accuracy, the sigma_w^2 where the
    accuracy reached ``level``, and where mean-field theory says depth <= 6 xi_c."""
    fine = np.linspace(min(heat.sigma_w2), max(heat.sigma_w2), 400)
    limit = np.array([trainable_depth(s, heat.sigma_b2) for s in fine])
    rows = []
    for depth, row, best in zip(heat.depths, heat.acc, best_sigma_w2(heat.acc, heat.sigma_w2)):
        row = [np.nan if v is None else v for v in row]
        theory = fine[limit >= depth]
        if not len(theory):
            band = "none"
        elif theory.max() >= fine[-1]:
            band = f"{theory.min():.2f} and up"
        else:
            band = f"{theory.min():.2f}–{theory.max():.2f}"
        if best is not None:  # a tie (at the table's three digits) is printed as one
            top = np.nanmax(row)
            tied = [s for s, v in zip(heat.sigma_w2, row) if np.isfinite(v) and v >= top - TIE]
            best = ("all (tie)" if len(tied) == len(row) else
                    f"{_and(tied)} (tie)" if len(tied) > 1 else f"{best:g}")
        rows.append({"depth": depth, "best σ_w²": best,
                     "best train acc": max(row) if np.isfinite(row).any() else None,
                     f"σ_w² with train acc ≥ {level:g}": _band(heat.sigma_w2,
                                                               [v >= level for v in row]),
                     "σ_w² with depth ≤ 6 ξ_c (theory)": band})
    return rows


# =============================================================================================
# 3. Orthogonal versus Gaussian weights
# =============================================================================================


def fluctuations_figure(res: Fluctuations):
    """n Var[G_l] / E[G_l]^2 per layer for both ensembles, and the leading-order Gaussian line."""
    fig = plots.figure("Preactivation fluctuations across networks", "layer l",
                       "n · Var[G_l] / E[G_l]²")
    layers = res.layers
    fig.add_scatter(x=layers, y=res.gaussian, mode="lines+markers", name="Gaussian weights",
                    marker=dict(size=4))
    fig.add_scatter(x=layers, y=res.orthogonal, mode="lines+markers", name="orthogonal weights",
                    marker=dict(size=4))
    fig.add_scatter(x=layers, y=leading_line(layers).tolist(), mode="lines",
                    name="2 + 2(l − 1)/3 (theory, Gaussian)", line=dict(color=_GRAY, dash="dash"))
    fig.update_layout(hovermode="x unified")
    return fig


def saxe_figure(res: Saxe):
    """Left: the loss, a staircase of plateaus and drops. Right: each pattern's progress
    y_c (lines), with the exact solution (dashed) for one hidden layer."""
    title = f"Deep linear network, {res.depth} weight matrices, {res.init} init"
    fig = plots.subplots(1, 2, ["training loss", "progress y_c of each pattern"], title=title)
    fig.add_scatter(x=res.steps, y=res.loss, mode="lines", name="loss",
                    line=dict(color="#222"), showlegend=False, row=1, col=1)
    for c, ys in enumerate(res.progress):
        color = plots.PALETTE[c % len(plots.PALETTE)]
        fig.add_scatter(x=res.steps, y=ys, mode="lines", line=dict(color=color),
                        name=f"s={res.strengths[c]:.2g}", legendgroup=str(c), row=1, col=2)
        if res.theory is not None:
            fig.add_scatter(x=res.steps, y=res.theory[c], mode="lines",
                            line=dict(color=color, dash="dash", width=1), showlegend=False,
                            name=f"exact, s = {res.strengths[c]:.2f}", legendgroup=str(c),
                            row=1, col=2)
    if res.theory is not None:
        fig.add_scatter(x=[None], y=[None], mode="lines", name="exact",
                        line=dict(color=_GRAY, dash="dash", width=1), row=1, col=2)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(title_text="½‖f(x) − y‖²", row=1, col=1)
    fig.update_layout(hovermode="closest")
    return fig


def depth_time_figure(res: DepthTime):
    """Steps to learn vs depth for both inits (log-log), triangles where never learned."""
    fig = plots.figure("Time to learn vs depth, at the best learning rate",
                       "depth (weight matrices)", "steps to criterion", logx=True, logy=True)
    for i, init in enumerate(("orthogonal", "gaussian")):
        if res.times(init) is None:  # not run
            continue
        times = learning_times(res.times(init))
        label = {"orthogonal": "random orthogonal", "gaussian": "scaled Gaussian"}[init]
        fig.add_scatter(x=res.depths, y=[v if np.isfinite(v) else None for v in times],
                        mode="lines+markers", name=label, line=dict(color=plots.PALETTE[i]),
                        customdata=res.best_lr(init),
                        hovertemplate="depth %{x}: %{y} steps at lr %{customdata:.3g}<extra></extra>")
        never = [d for d, v in zip(res.depths, times) if not np.isfinite(v)]
        if never:
            fig.add_scatter(x=never, y=[res.steps] * len(never), mode="markers",
                            marker=dict(symbol="triangle-up", size=12, color=plots.PALETTE[i]),
                            name=f"{label}: not learned")
    fig.update_xaxes(tickvals=res.depths, ticktext=[str(d) for d in res.depths])
    fig.update_layout(hovermode="closest")
    return fig


# =============================================================================================
# 4. Initial guessing bias
# =============================================================================================


def guessing_figure(res: GuessingRun):
    """The favourite-class fraction of every untrained network (dots) and the mean (line)."""
    fig = plots.figure("Initial guessing bias of untrained networks", "depth",
                       "fraction in the favourite class", logx=True)
    for i, act in enumerate(a for a in ACTIVATIONS if res.bias(a) is not None):
        vals = [np.asarray(v, dtype=float) for v in res.bias(act)]
        depths = res.depths[:len(vals)]
        fig.add_scatter(x=depths, y=[v.mean() for v in vals], mode="lines+markers",
                        name=f"{act}, mean", line=dict(color=plots.PALETTE[i]))
        fig.add_scatter(x=np.concatenate([[d] * len(v) for d, v in zip(depths, vals)]),
                        y=np.concatenate(vals), mode="markers", name=f"{act}, each network",
                        marker=dict(color=plots.PALETTE[i], size=4, opacity=0.35))
    fig.add_hline(y=1 / res.n_classes, line=dict(color=_GRAY, dash="dot"),
                  annotation_text="no bias: 1/C per class", annotation_position="top right")
    fig.update_yaxes(range=[0, 1.05])
    fig.update_xaxes(tickvals=res.depths, ticktext=[str(d) for d in res.depths])
    fig.update_layout(hovermode="closest")
    return fig
