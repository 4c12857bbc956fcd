"""Plotly figures in one house style, and the renderer that makes them visible everywhere.

Jupyter Book 1.x drops plotly's own output type, so every figure is emitted as ``text/html``:
a ``div`` and a script that draws it with ``Plotly.newPlot``. In the built book, plotly.js is
one of the book's own static files (see :mod:`dynamics.sphinx`), so pages need no network;
on Colab or in Jupyter, where no Plotly is loaded yet, the script fetches plotly.js from its CDN.

Builders:
- :func:`curves`: metrics of one or several histories against step;
- :func:`heatmap`: a 2-D grid of values (phase diagrams);
- :func:`slider`: one figure per value of a parameter, with a slider (static counterpart of a
  widget: works in the book without a kernel);
- :func:`bars`, :func:`mark_step`, :func:`caption`.
"""
from __future__ import annotations

import html
import json
import uuid
from typing import Iterable, Sequence

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io as pio

PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477",
           "#66aa00", "#b82e2e", "#316395"]
HEIGHT = 420

pio.templates["dynamics"] = go.layout.Template(
    layout=dict(
        font=dict(family="Inter, Helvetica, Arial, sans-serif", size=13, color="#222"),
        colorway=PALETTE,
        paper_bgcolor="white",
        plot_bgcolor="white",
        height=HEIGHT,
        margin=dict(l=60, r=20, t=50, b=50),
        hovermode="x unified",
        legend=dict(bgcolor="rgba(255,255,255,0.7)"),
        xaxis=dict(showgrid=True, gridcolor="#eee", zeroline=False, linecolor="#888",
                   ticks="outside", mirror=False),
        yaxis=dict(showgrid=True, gridcolor="#eee", zeroline=False, linecolor="#888",
                   ticks="outside", mirror=False),
    )
)
pio.templates.default = "plotly_white+dynamics"

CDN = f"https://cdn.plot.ly/plotly-{plotly.offline.get_plotlyjs_version()}.min.js"


def to_html(fig: go.Figure) -> str:
    """The figure as a self-drawing HTML fragment (uses a loaded Plotly, else the CDN)."""
    div = f"dyn-{uuid.uuid4().hex[:12]}"
    spec = fig.to_json()
    height = fig.layout.height or HEIGHT
    return (
        f'<div id="{div}" class="dynamics-figure plotly-graph-div" '
        f'style="height:{height}px; width:100%;"></div>\n'
        '<script type="text/javascript">\n'
        "(function () {\n"
        f"  var fig = {spec};\n"
        "  function draw() {\n"
        f"    Plotly.newPlot('{div}', fig.data, fig.layout, "
        "{responsive: true, displaylogo: false}).then(function (gd) {\n"
        "      if (fig.frames) { Plotly.addFrames(gd, fig.frames); } });\n"
        "  }\n"
        "  if (window.Plotly) { draw(); } else {\n"
        f"    var s = document.createElement('script'); s.src = '{CDN}';\n"
        "    s.onload = draw; document.head.appendChild(s);\n"
        "  }\n"
        "})();\n"
        "</script>"
    )


class _BookRenderer(pio.base_renderers.MimetypeRenderer):
    def to_mimebundle(self, fig_dict):
        return {"text/html": to_html(go.Figure(fig_dict))}


def use_book_renderer() -> None:
    """Make ``fig.show()`` and a figure at the end of a cell render as book-safe HTML."""
    pio.renderers["dynamics"] = _BookRenderer()
    pio.renderers.default = "dynamics"


def show(fig: go.Figure) -> None:
    """Display a figure with the book renderer (whatever the default renderer is)."""
    from IPython.display import HTML, display

    display(HTML(to_html(fig)))


def caption(text: str) -> None:
    """Display a small caption (used for the provenance of precomputed figures)."""
    from IPython.display import HTML, display

    display(HTML(f'<p class="dynamics-caption" style="font-size:0.85em;color:#555;">'
                 f"{html.escape(text)}</p>"))


def figure(title: str = "", xtitle: str = "", ytitle: str = "", logx: bool = False,
           logy: bool = False, height: int | None = None) -> go.Figure:
    """An empty figure in the house style."""
    fig = go.Figure()
    fig.update_layout(title=title, xaxis_title=xtitle, yaxis_title=ytitle,
                      height=height or HEIGHT)
    if logx:
        fig.update_xaxes(type="log")
    if logy:
        fig.update_yaxes(type="log")
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


def mark_step(fig: go.Figure, step: float | None, label: str, color: str = "#555") -> go.Figure:
    """A labelled vertical line at ``step`` (no-op for None)."""
    if step is not None:
        fig.add_vline(x=step, line=dict(color=color, dash="dot", width=1),
                      annotation_text=label, annotation_position="top")
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
                    colorbar=dict(title=ztitle),
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
    first figure; a figure's own ``layout.title`` becomes the slider step's title.
    """
    if len(figures) == 0 or len(figures) != len(labels):
        raise ValueError("slider() needs as many labels as figures, and at least one figure")
    active = len(figures) - 1 if active is None else active
    fig = go.Figure(layout=figures[0].layout)
    counts = []
    for k, f in enumerate(figures):
        for tr in f.data:
            tr = go.Figure(tr).data[0]
            tr.visible = k == active
            fig.add_trace(tr)
        counts.append(len(f.data))
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
        sliders=[dict(active=active, steps=steps, currentvalue=dict(prefix=f"{name} = "),
                      pad=dict(t=50))],
        height=(figures[0].layout.height or HEIGHT) + 80,
    )
    return fig


def bars(labels: Sequence[str], values: Sequence[float], title: str = "", ytitle: str = "",
         text_fmt: str = "{:.3g}", logy: bool = False, errors: Sequence[float] | None = None) -> go.Figure:
    """A bar chart with the values written on the bars."""
    fig = figure(title, "", ytitle, logy=logy)
    fig.add_bar(x=list(labels), y=list(values), text=[text_fmt.format(v) for v in values],
                textposition="outside", marker_color=PALETTE[0],
                error_y=dict(type="data", array=list(errors)) if errors is not None else None)
    fig.update_layout(hovermode="closest", showlegend=False)
    return fig


def table(rows: Iterable[dict], columns: Sequence[str] | None = None):
    """A list of dicts as an HTML table (for 'claims vs measured' tables)."""
    from IPython.display import HTML

    rows = list(rows)
    columns = list(columns or (rows[0].keys() if rows else []))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(r.get(c, '')))}</td>" for c in columns) + "</tr>"
        for r in rows)
    return HTML(f'<table class="dynamics-table"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")
