"""Figure builders in the house style: :func:`figure`, :func:`subplots`, :func:`curves`,
:func:`heatmap`, :func:`bars`, :func:`slider` (one figure per value of a parameter: the static
counterpart of a widget) and :func:`mark_step`."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .layout import FONT, HEIGHT, PALETTE, TEMPLATE

# ----------------------------------------------------------------------------- builders

def figure(title: str = "", xtitle: str = "", ytitle: str = "", logx: bool = False,
           logy: bool = False, height: int | None = None) -> go.Figure:
    """An empty figure in the house style."""
    fig = go.Figure()
    fig.update_layout(title=title, xaxis_title=xtitle, yaxis_title=ytitle,
                      height=height or HEIGHT, template=TEMPLATE)
    if logx:
        fig.update_xaxes(type="log")
    if logy:
        fig.update_yaxes(type="log")
    return fig


def subplots(rows: int = 1, cols: int = 2, titles: Sequence[str] = (), title: str = "",
             height: int | None = None, **kwargs) -> go.Figure:
    """A grid of panels in the house style (``make_subplots`` with spacing that suits the
    column); ``kwargs`` go to ``make_subplots`` (``shared_xaxes``, ``column_widths``, ``specs``...)."""
    from plotly.subplots import make_subplots

    kwargs.setdefault("horizontal_spacing", 0.1 if cols > 1 else 0.0)
    kwargs.setdefault("vertical_spacing", 0.14 if rows > 1 else 0.0)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles) or None, **kwargs)
    fig.update_layout(template=TEMPLATE, title=title,
                      height=height or (HEIGHT if rows == 1 else 100 + 280 * rows))
    return fig


def curves(histories, metrics: Sequence[str] = ("train_acc", "test_acc"), title: str = "",
           logx: bool = False, logy: bool = False, ytitle: str = "", names=None,
           dash_by_metric: bool = True) -> go.Figure:
    """Metrics against step, for one history or a dict/list of them (one colour per run,
    one dash style per metric). A diverged run is labelled so in the legend."""
    if not isinstance(histories, (dict, list, tuple)):
        histories = {"": histories}
    if isinstance(histories, (list, tuple)):
        histories = {(names[i] if names else f"run {i}"): h for i, h in enumerate(histories)}
    dashes = ["solid", "dash", "dot", "dashdot", "longdash"]
    fig = figure(title, "step", ytitle or (metrics[0] if len(metrics) == 1 else ""), logx, logy)
    for i, (name, h) in enumerate(histories.items()):
        for j, m in enumerate(metrics):
            if m not in h:
                continue
            steps = np.asarray(h.steps, dtype=float)
            if logx:
                steps = np.maximum(steps, 1)
            label = " · ".join(s for s in (name, m) if s) + (" (diverged)" if h.diverged else "")
            fig.add_scatter(x=steps, y=h[m], mode="lines", name=label,
                            line=dict(color=PALETTE[i % len(PALETTE)],
                                      dash=dashes[j % len(dashes)] if dash_by_metric else None))
    return fig


def text_colour(color: str, ratio: float = 4.5) -> str:
    """``color`` as text on the book's white page: itself where it reads at ``ratio``:1 (WCAG
    AA), else darkened (mixed with black, the hue kept) until it does. A line may be a light
    green; its label must be readable (the dark theme lightens it again, dynamics_toolchain)."""
    c = color.lstrip("#")
    if len(c) == 3:
        c = "".join(x * 2 for x in c)
    if len(c) != 6:
        raise ValueError(f"text_colour takes #rgb or #rrggbb, got {color!r}")
    rgb = [int(c[i:i + 2], 16) for i in (0, 2, 4)]

    def lum(v):
        f = [(x / 255) / 12.92 if x / 255 <= 0.04045 else ((x / 255 + 0.055) / 1.055) ** 2.4 for x in v]
        return 0.2126 * f[0] + 0.7152 * f[1] + 0.0722 * f[2]

    for k in range(21):
        v = [round(x * (1 - k / 20)) for x in rgb]
        if 1.05 / (lum(v) + 0.05) >= ratio:
            return color if k == 0 else "#" + "".join(f"{x:02x}" for x in v)
    return "#000000"


def mark_step(fig: go.Figure, step: float | None, label: str, color: str = "#555",
              row: int | None = None, col: int | None = None, logx: bool = False) -> go.Figure:
    """A dotted vertical line at ``step``, labelled inside the top of the plot (no-op for None).
    Annotations on a log axis take log10 coordinates: say ``logx=True`` there."""
    if step is None:
        return fig
    where = dict(row=row, col=col) if row is not None else {}
    fig.add_vline(x=step, line=dict(color=color, dash="dot", width=1), **where)
    fig.add_annotation(x=math.log10(step) if logx else step, y=1, yref="y domain", text=label,
                       showarrow=False, xanchor="left", yanchor="top", xshift=3,
                       font=dict(size=FONT - 2, color=text_colour(color)), **where)
    return fig


def heatmap(z, x, y, title: str = "", xtitle: str = "", ytitle: str = "", ztitle: str = "",
            logx: bool = False, logy: bool = False, zmin=None, zmax=None,
            colorscale: str = "Viridis", text_fmt: str | None = ".2f") -> go.Figure:
    """A heatmap of ``z[i, j]`` at (x[j], y[i]). Log axes show category labels of the values."""
    z = np.asarray(z, dtype=float)
    xs = [f"{v:.3g}" for v in x] if logx else list(x)
    ys = [f"{v:.3g}" for v in y] if logy else list(y)
    fig = figure(title, xtitle, ytitle)
    fig.add_heatmap(z=z, x=xs, y=ys, zmin=zmin, zmax=zmax, colorscale=colorscale,
                    colorbar=dict(title=dict(text=ztitle, side="right"), thickness=14),
                    texttemplate="%{z:" + text_fmt + "}" if text_fmt else None,
                    hovertemplate=f"{xtitle}=%{{x}}<br>{ytitle}=%{{y}}<br>{ztitle}=%{{z:.4g}}<extra></extra>")
    fig.update_layout(hovermode="closest")
    if logx:
        fig.update_xaxes(type="category")
    if logy:
        fig.update_yaxes(type="category")
    return fig


def slider(figures: Sequence[go.Figure], labels: Sequence, name: str = "",
           title: str = "", active: int | None = None) -> go.Figure:
    """One figure whose slider switches between ``figures`` (same layout, any traces).

    All traces are stacked into one figure and the slider toggles their visibility, so the
    result works in the static book with no kernel. Layout (axes, titles) comes from the
    first figure; a figure's own ``layout.title`` becomes the slider step's title. Where the
    slider goes is the house layout's business (:func:`house`).
    """
    if len(figures) == 0 or len(figures) != len(labels):
        raise ValueError("slider() needs as many labels as figures, and at least one figure")
    active = len(figures) - 1 if active is None else active
    if not 0 <= active < len(figures):
        raise ValueError(f"active must index the figures (0..{len(figures) - 1}), got {active}")
    fig = go.Figure(layout=figures[0].layout)
    traces, counts = [], []
    for k, f in enumerate(figures):
        for tr in f.data:
            tr = type(tr)(tr)  # a copy, made without a figure of its own (plotly merges the
            tr.visible = k == active  # default template into every go.Figure: most of the cost)
            traces.append(tr)
        counts.append(len(f.data))
    fig.add_traces(traces)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    steps = []
    for k, label in enumerate(labels):
        vis = [False] * int(offsets[-1])
        vis[offsets[k]:offsets[k + 1]] = [True] * counts[k]
        sub = figures[k].layout.title.text if figures[k].layout.title.text else title
        steps.append(dict(method="update", label=str(label),
                          args=[{"visible": vis}, {"title.text": sub}]))
    fig.update_layout(
        title=figures[active].layout.title.text or title,
        sliders=[dict(active=active, steps=steps, currentvalue=dict(prefix=f"{name} = " if name else ""))],
    )
    return fig


def bars(labels: Sequence[str], values: Sequence[float], title: str = "", ytitle: str = "",
         text_fmt: str = "{:.3g}", logy: bool = False, errors: Sequence[float] | None = None) -> go.Figure:
    """A bar chart with the values written on the bars."""
    fig = figure(title, "", ytitle, logy=logy)
    fig.add_bar(x=list(labels), y=list(values), text=[text_fmt.format(v) for v in values],
                textposition="outside", marker_color=PALETTE[0], cliponaxis=False,
                error_y=dict(type="data", array=list(errors)) if errors is not None else None)
    fig.update_layout(hovermode="closest", showlegend=False)
    return fig
