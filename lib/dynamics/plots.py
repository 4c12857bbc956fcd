"""Plotly figures and tables in one house style, sized for the book's text column.

Every figure is drawn through :func:`to_html`, which applies :func:`house`, the one layout of
the book, to a copy of the figure. Builders therefore only say *what* to draw; where the
legend, the title, a slider and the tick labels go is decided here, for every figure alike:

- the **title** sits top left and wraps to the column (keep it short: the prose carries the rest);
- the **legend** runs horizontally above the plot, under the title, so it never covers data
  and never meets a slider, which always sits below the x-axis;
- a **slider** gets room for its rail and its current value; its step labels are shown only
  when they fit side by side (the current value always names the active step);
- **log axes** label only as many ticks as fit (powers of ten when space is short);
- **multi-panel** figures keep the full width, since the legend is not beside them.

Jupyter Book 1.x drops plotly's own output type, so figures are emitted as ``text/html``: a
``div`` and a script that draws it with ``Plotly.newPlot``, using the Plotly already loaded in
the page. Where that comes from:

- in the built book, plotly.js is one of the book's own static files (see :mod:`dynamics.book`);
- in a local Jupyter, ``dynamics.setup()`` loads plotly.js from the installed package into the
  notebook once (:func:`load_plotlyjs`), so figures draw with no network;
- on Colab every output is sandboxed in its own frame, so nothing loaded once is visible to the
  next figure: there each figure fetches plotly.js from its CDN (Colab is online; embedding the
  4 MB library in every figure would make the notebook heavy for nothing).

Builders: :func:`figure`, :func:`subplots`, :func:`curves`, :func:`heatmap`, :func:`bars`,
:func:`slider` (one figure per value of a parameter: the static counterpart of a widget),
:func:`mark_step`; tables and text: :func:`table`, :func:`number`, :func:`caption`,
:func:`rounded`.
"""
from __future__ import annotations

import html
import math
import re
import textwrap
import uuid
from typing import Iterable, Sequence

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io as pio

PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477",
           "#66aa00", "#b82e2e", "#316395"]
HEIGHT = 420        # default figure height (px), margins included, before the house layout
COLUMN = 690        # width (px) of a cell output in the book's text column (sphinx-book-theme at 1280 px)
NARROW = 360        # width (px) of a figure on a phone (the column of a 390 px screen)
NARROW_BELOW = 500  # in the book, a figure narrower than this (px) is drawn in its narrow layout
FONT = 13
CHAR = 0.55 * FONT  # average width of a character of the house font, in px

pio.templates["dynamics"] = go.layout.Template(
    layout=dict(
        font=dict(family="Inter, Helvetica, Arial, sans-serif", size=FONT, color="#222"),
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
TEMPLATE = "plotly_white+dynamics"

CDN = f"https://cdn.plot.ly/plotly-{plotly.offline.get_plotlyjs_version()}.min.js"
# the plotly toolbar, trimmed to what a reader uses (it overlaps less of the figure)
CONFIG = {"responsive": True, "displaylogo": False,
          "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines",
                                     "hoverClosestCartesian", "hoverCompareCartesian"]}


# ----------------------------------------------------------------------------- house layout

def _legend_entries(fig: go.Figure) -> list[str]:
    """Names of the visible traces that appear in the legend (plotly gives every trace its own
    entry, legend groups included; in a slider figure only the active step's traces show)."""
    names = []
    for tr in fig.data:
        show = tr.showlegend
        if show is False or tr.visible is False:
            continue
        if show is None and tr.type in ("heatmap", "contour", "surface", "histogram2d"):
            continue
        if tr.name:
            names.append(str(tr.name))
    return names


def _legend_rows(names: Sequence[str], width: float) -> int:
    """Rows a horizontal legend of ``names`` takes in ``width`` px. Plotly puts the entries
    in one row when they fit, else in columns as wide as the widest entry."""
    widths = [50 + CHAR * len(html.unescape(name)) for name in names]
    if sum(widths) <= width:
        return 1
    per_row = max(1, int(width // max(widths)))
    return math.ceil(len(widths) / per_row)


def _wrap(text: str, chars: int) -> tuple[str, int]:
    """Wrap a title at ``chars`` characters with ``<br>``; returns (text, lines)."""
    parts = []
    for line in str(text).split("<br>"):
        parts += textwrap.wrap(line, chars) or [""]
    return "<br>".join(parts), len(parts)


def _axis_data(fig: go.Figure, axis: str) -> np.ndarray:
    """All finite positive values plotted against one axis (``xaxis``, ``yaxis2``, ...)."""
    letter, ref = axis[0], axis[0] + axis[5:]
    values = []
    for tr in fig.data:
        if (getattr(tr, f"{letter}axis", None) or letter) != ref:
            continue
        arr = _array(getattr(tr, letter, None))
        if arr is not None:
            values.append(arr[np.isfinite(arr) & (arr > 0)])
    return np.concatenate(values) if values else np.zeros(0)


def _array(v) -> np.ndarray | None:
    """A trace's coordinates as floats (plotly >= 6 stores numpy arrays as base64 typed arrays,
    ``{"dtype": "f8", "bdata": ...}``, once a figure has been through ``to_dict``)."""
    if v is None:
        return None
    if isinstance(v, dict) and "bdata" in v:
        import base64

        arr = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        return arr.astype(float).ravel()
    try:
        return np.asarray(v, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def _log_ticks(fig: go.Figure, axis: str, length_px: float) -> dict:
    """Tick values and labels for a log axis of ``length_px`` pixels: 1-2-5 per decade when
    they fit, else powers of ten (every one, or every other...), written out as numbers
    (plotly's own minor labels print 0.5 as "5")."""
    ax = fig.layout[axis]
    if ax.dtick is not None or ax.tickvals is not None:
        return {}
    if ax.range is not None:
        lo, hi = ax.range
    else:
        v = _axis_data(fig, axis)
        if not len(v):
            return {}
        lo, hi = math.log10(v.min()), math.log10(v.max())
    room = max(2, int(length_px / (26 if axis.startswith("y") else 55)))  # labels that fit
    k0, k1 = math.floor(lo + 1e-9), math.ceil(hi - 1e-9)

    def inside(vals):
        return [v for v in vals if lo - 0.02 <= math.log10(v) <= hi + 0.02]

    for mantissas in ((1, 2, 5), (1, 3), (1,)):
        vals = inside([m * 10.0 ** k for k in range(k0, k1 + 1) for m in mantissas])
        if 2 <= len(vals) <= room:
            break
    else:
        vals = inside([10.0 ** k for k in range(k0, k1 + 1)])
        vals = vals[::math.ceil(len(vals) / room)] if len(vals) > room else vals
    if len(vals) < 2:  # narrower than one 1-2-5 step: evenly spaced round values instead
        vals = _linear_ticks(10.0 ** lo, 10.0 ** hi, min(room, 4))
        if len(vals) < 2:
            return {}
        return dict(tickvals=vals, ticktext=[number(v, 2) for v in vals])
    text = [_tick(v) for v in vals]
    return dict(tickvals=vals, ticktext=text)


def _linear_ticks(a: float, b: float, most: int) -> list[float]:
    """Round values (steps of 1, 2 or 5 times a power of ten) inside [a, b], at most ``most``."""
    if not (b > a > 0):
        return []
    for k in range(math.floor(math.log10(b - a)) - 2, math.floor(math.log10(b - a)) + 1):
        for m in (1, 2, 5):
            step = m * 10.0 ** k
            vals = [i * step for i in range(math.ceil(a / step - 1e-9), math.floor(b / step + 1e-9) + 1)]
            if 2 <= len(vals) <= most:
                return [float(f"{v:.12g}") for v in vals]
    return []


def _tick(v: float) -> str:
    """A log-axis label: plain for 0.001..99,999, else 10 to a power."""
    k = math.floor(math.log10(v) + 1e-9)
    m = round(v / 10.0 ** k)
    if -3 <= k <= 4:
        return number(v, 1)
    return (f"{m}·" if m != 1 else "") + f"10{_superscript(k)}"


def _rotated_ticks(fig: go.Figure, inner: float, only: str | None = None) -> float:
    """Extra px below the plot when an x-axis's category labels will not fit side by side
    (plotly then turns them); ``only``: that x-axis alone."""
    extra = 0.0
    for name in _axis_names(fig):
        if not name.startswith("xaxis") or (only and name != only):
            continue
        ref = "x" + name[5:]
        category = fig.layout[name].type == "category"
        labels = set()
        for tr in fig.data:
            if (getattr(tr, "xaxis", None) or "x") != ref or getattr(tr, "x", None) is None:
                continue
            labels |= {str(v) for v in tr.x if category or isinstance(v, str)}
        if fig.layout[name].ticktext:  # labels the builder chose
            labels = {re.sub(r"<[^>]+>", "", str(t)) for t in fig.layout[name].ticktext}
        if not labels:
            continue
        dom = fig.layout[name].domain or (0, 1)
        if sum(16 + CHAR * 0.85 * len(lb) for lb in labels) > 0.9 * (dom[1] - dom[0]) * inner:
            extra = max(extra, min(0.75 * CHAR * max(map(len, labels)) + 6, 96))
    return extra


def _title_chars(width: int, narrow: bool) -> int:
    """Characters per line of a figure title: the column's title stops short of the toolbar
    (top right); a phone's runs the screen's width (the toolbar shows only on a tap)."""
    return int((width - (24 if narrow else 170)) / (CHAR * 1.1))


def _unwrap(text: str) -> str:
    return " ".join(str(text).split("<br>"))


def _panels(fig: go.Figure) -> list[tuple[str, str, tuple, tuple]]:
    """The cartesian panels as (x-axis, y-axis, x domain, y domain), in reading order."""
    lay = fig.layout
    names = _axis_names(fig)
    out = []
    for name in names:
        ax = lay[name]
        if not name.startswith("xaxis") or ax.overlaying:
            continue
        anchor = ax.anchor if ax.anchor not in (None, "free") else "y" + name[5:]
        yname = "yaxis" + anchor[1:]
        ydom = lay[yname].domain if yname in names else None
        out.append((name, yname, tuple(ax.domain or (0, 1)), tuple(ydom or (0, 1))))
    return sorted(out, key=lambda p: (-round(p[3][1], 3), round(p[2][0], 3)))


def _in_panel(x, y, xd, yd, slack: float = 0.03) -> bool:
    return (x is not None and y is not None and xd[0] - 1e-6 <= x <= xd[1] + 1e-6
            and yd[0] - slack <= y <= yd[1] + slack)


def _subplot_title(a, panels) -> int | None:
    """The panel whose title the annotation ``a`` is (above its middle), or None."""
    if a.xref != "paper" or a.yref != "paper" or a.showarrow or a.yanchor not in ("bottom", None):
        return None
    for k, (_, _, xd, yd) in enumerate(panels):
        if abs(a.x - (xd[0] + xd[1]) / 2) < 1e-3 and abs(a.y - yd[1]) < 1e-3:
            return k
    return None


def _headings(fig: go.Figure, panels) -> None:
    """A grid's headings, given once per column (subplot titles on the top row) or once per
    row (y-axis titles on the left column), repeated on every panel of that column or row:
    stacked one above the other, a panel no longer has its neighbours to say what it shows."""
    lay = fig.layout
    titles = {k: a for a in lay.annotations or () for k in [_subplot_title(a, panels)]
              if k is not None}
    if len({p[3] for p in panels}) > 1:  # several rows: column headings
        for k, (_, _, xd, yd) in enumerate(panels):
            if k in titles:
                continue
            above = [j for j in titles if panels[j][2] == xd and panels[j][3][0] > yd[0]]
            if above:
                head = titles[min(above, key=lambda j: panels[j][3][0])]
                lay.annotations += (go.layout.Annotation(
                    head.to_plotly_json(), x=(xd[0] + xd[1]) / 2, y=yd[1]),)
    for xname, yname, xd, yd in panels:  # row headings
        if not lay[yname].title.text:
            left = [p for p in panels if p[3] == yd and lay[p[1]].title.text and p[2][0] < xd[0]]
            if left:
                lay[yname].title = lay[left[0][1]].title


PANEL = 250  # plot height (px) of one panel of a stacked figure on a phone


def _stack(fig: go.Figure, width: int) -> None:
    """Side-by-side panels one above the other, in reading order, each the figure's full
    width: the axis domains move, and with them the subplot titles (wrapped to the width),
    other annotations and shapes placed on the paper, and the colour bars of heatmaps."""
    panels = _panels(fig)
    if len({round(p[2][0], 3) for p in panels}) < 2:
        return
    lay = fig.layout
    _headings(fig, panels)
    size = FONT + 1
    chars = int((width - 80) / (0.55 * size))
    titles = {}
    for a in lay.annotations or ():
        k = _subplot_title(a, panels)
        if k is not None:
            a.update(text=_wrap(_unwrap(a.text), chars)[0], font=dict(size=size))
            titles[k] = a.text.count("<br>") + 1
    # px below panel k before panel k+1: its tick labels and axis title, the next one's title
    gaps = []
    for k, (xname, _, _, _) in enumerate(panels[:-1]):
        ax = lay[xname]
        gap = (24 if ax.showticklabels is not False else 6) + (38 if ax.title.text else 0)
        gap += _rotated_ticks(fig, width - 80, only=xname) + 20 * titles.get(k + 1, 0) + 8
        gaps.append(gap)
    total = PANEL * len(panels) + sum(gaps)
    new, top = [], 0.0
    for k in range(len(panels)):
        new.append(((0.0, 1.0), (1 - (top + PANEL) / total, 1 - top / total)))
        top += PANEL + (gaps[k] if k < len(gaps) else 0)

    def move(x, y, k):
        (xd, yd), (nxd, nyd) = panels[k][2:], new[k]
        fx = (x - xd[0]) / ((xd[1] - xd[0]) or 1)
        fy = (y - yd[0]) / ((yd[1] - yd[0]) or 1)
        return nxd[0] + fx * (nxd[1] - nxd[0]), nyd[0] + fy * (nyd[1] - nyd[0])

    def where(x, y):
        return next((k for k, p in enumerate(panels) if _in_panel(x, y, p[2], p[3])), None)

    for a in lay.annotations or ():
        if a.xref == "paper" and a.yref == "paper":
            k = where(a.x, a.y)
            if k is not None:
                a.x, a.y = move(a.x, a.y, k)
    for s in lay.shapes or ():
        if s.xref == "paper" and s.yref == "paper":
            k = where(s.x0, s.y0)
            if k is not None:
                (s.x0, s.y0), (s.x1, s.y1) = move(s.x0, s.y0, k), move(s.x1, s.y1, k)
    for k, (xname, yname, _, _) in enumerate(panels):
        lay[xname].domain, lay[yname].domain = new[k]
        for tr in fig.data:
            if tr.type in ("heatmap", "contour") and "x" + xname[5:] == (tr.xaxis or "x"):
                tr.colorbar.update(y=sum(new[k][1]) / 2, yanchor="middle", lenmode="fraction",
                                   len=new[k][1][1] - new[k][1][0])
    margin = lay.margin
    lay.height = int(total + (margin.t if margin.t is not None else 50)
                     + (margin.b if margin.b is not None else 50))


def _slim_colorbars(fig: go.Figure) -> None:
    """Colour bars' titles along the bar, not above it (a phone needs the width)."""
    for tr in fig.data:
        if tr.type in ("heatmap", "contour") and tr.showscale is not False and tr.colorbar.title.text:
            tr.colorbar.title.side = "right"


def _stagger_marks(fig: go.Figure) -> None:
    """The labels of marked steps (:func:`mark_step`) in one panel, each a line below the one
    to its left, so that the labels of two close steps do not meet on a narrow plot."""
    panels = {}
    for a in fig.layout.annotations or ():
        if (a.yref or "").endswith(" domain") and a.y == 1 and a.yanchor == "top" and not a.showarrow:
            panels.setdefault((a.xref, a.yref), []).append(a)
    for marks in panels.values():
        for k, a in enumerate(sorted(marks, key=lambda a: a.x)):
            a.yshift = -(FONT + 1) * k


def _heatmap_shape(tr) -> tuple[int, int]:
    z = tr.z
    if isinstance(z, dict) and "shape" in z:
        r, c = (int(v) for v in str(z["shape"]).split(","))
        return r, c
    arr = np.asarray(z, dtype=object)
    return (arr.shape[0], arr.shape[1]) if arr.ndim == 2 else (1, arr.size)


def _hide_cell_text(fig: go.Figure, inner: float, plot_h: float) -> None:
    """Heatmap cell labels off where they would not fit their cells (hover still gives
    each cell's value)."""
    bars = any(t.type in ("heatmap", "contour") and t.showscale is not False for t in fig.data)
    for tr in fig.data:
        if tr.type != "heatmap" or not tr.texttemplate:
            continue
        rows, cols = _heatmap_shape(tr)
        xd = fig.layout["xaxis" + (tr.xaxis or "x")[1:]].domain or (0, 1)
        yd = fig.layout["yaxis" + (tr.yaxis or "y")[1:]].domain or (0, 1)
        room = inner - 30 - (70 if bars else 0)  # y tick labels and a colour bar take room
        cell_w, cell_h = room * (xd[1] - xd[0]) / max(cols, 1), plot_h * (yd[1] - yd[0]) / max(rows, 1)
        if "%{text}" in tr.texttemplate and tr.text is not None:
            lines = [ln for t in np.asarray(tr.text, dtype=object).ravel() for ln in str(t).split("<br>")]
            n_lines = max(str(t).count("<br>") + 1 for t in np.asarray(tr.text, dtype=object).ravel())
            chars = max(map(len, lines)) if lines else 1
        else:
            n_lines, chars = 1, 5
        size = tr.textfont.size or 12
        if chars * 0.62 * size > cell_w - 4 or n_lines * 1.25 * size > cell_h - 2:
            tr.texttemplate = ""


def house(fig: go.Figure, width: int = COLUMN, narrow: bool = False) -> go.Figure:
    """Apply the book's layout to ``fig`` (in place) and return it. See the module docstring.

    The builder's ``height`` is read as the height it wanted with the template's margins
    (50 px top and bottom); the plot area keeps that size and the figure grows by what the
    title, legend and slider need.

    ``narrow``: the layout for a phone (``width`` about :data:`NARROW`), which the book's
    pages switch to where a figure is narrower than :data:`NARROW_BELOW` (see :func:`to_html`):
    side-by-side panels stacked in one column, the legend below the plot, titles wrapped to
    the screen, heatmap cell labels only where they fit (a tap gives each cell's value), and
    no drag-to-zoom, so that a finger on a figure scrolls the page and a tap shows the hover.
    """
    lay = fig.layout
    if lay.template is None or not lay.template.layout.to_plotly_json():
        lay.template = TEMPLATE
    is_3d = any(tr.type in ("scatter3d", "surface", "mesh3d") for tr in fig.data)
    if narrow and not is_3d:
        _stack(fig, width)
    height = lay.height or HEIGHT
    margin = lay.margin
    plot_h = max(200, height - (margin.t if margin.t is not None else 50)
                 - (margin.b if margin.b is not None else 50))
    left = margin.l if margin.l is not None else 60
    right = margin.r if margin.r is not None else 20
    if any(getattr(tr, "showscale", None) is not False and tr.type in ("heatmap", "contour")
           for tr in fig.data):
        right = max(right, 20)  # plotly adds the colorbar's own room
    inner = width - left - right

    # title: top left, wrapped to the column, clear of the toolbar at the top right
    # (plotly misplaces a multi-line title anchored at its top: anchor its middle instead);
    # a slider's steps carry their own titles: they are wrapped alike, the tallest counts
    start = 24 if narrow else 0  # a phone shows plotly's toolbar all the time: title below it
    top, lines = 10 + start, 0
    title = lay.title.text if lay.title and lay.title.text else ""
    chars = _title_chars(width, narrow)
    for s in lay.sliders or ():
        for st in s.steps:
            if st.args and len(st.args) > 1 and (st.args[1] or {}).get("title.text"):
                text, n = _wrap(_unwrap(st.args[1]["title.text"]), chars)
                st.args = [st.args[0], dict(st.args[1], **{"title.text": text}), *st.args[2:]]
                lines = max(lines, n)
    if title:
        wrapped, n = _wrap(_unwrap(title), chars)
        lines = max(lines, n)
        where = dict(x=0, xref="container", pad=dict(l=8)) if narrow else dict(x=0, xref="paper")
        lay.title = dict(text=wrapped, xanchor="left", yanchor="middle", yref="container",
                         font=dict(size=FONT + (1 if narrow else 2)), **where)
        top += 10 + 20 * lines
    # subplot titles and other annotations above the plot area
    above = [a for a in (lay.annotations or ()) if a.yref == "paper" and a.y is not None
             and a.y >= 0.99 and a.yanchor in ("bottom", None) and not a.showarrow]
    sub_h = max((22 + 20 * a.text.count("<br>") for a in above), default=0)
    # legend: horizontal, above the plot (under the title and subplot titles); on a phone,
    # below the plot (under the x-axis title), where it has the screen's width
    entries = _legend_entries(fig)
    show_legend = lay.showlegend is not False and (len(entries) > 1 or lay.showlegend is True)
    legend_h = 0
    if show_legend and entries:
        rows = _legend_rows(entries, inner)
        legend_h = 4 + 20 * rows
        lay.legend = dict(orientation="h", x=0, xanchor="left", y=1 + (sub_h + 6) / plot_h,
                          yanchor="bottom", bgcolor="rgba(255,255,255,0)",
                          font=dict(size=FONT - 1), traceorder="normal")
        lay.showlegend = True
    elif not is_3d:
        lay.showlegend = False
    top += sub_h + (0 if narrow else legend_h)
    # bottom: x-axis ticks and title, (on a phone) the legend, then the slider
    has_xtitle = any(ax.title.text for ax in _axes(fig, "x"))
    if is_3d:  # the scene has no axes below it
        bottom = 10 if narrow else 42
    else:
        bottom = 42 + (22 if has_xtitle else 0) + _rotated_ticks(fig, inner)
    if narrow and legend_h:
        lay.legend.update(y=-(bottom + 2) / plot_h, yanchor="top")
        bottom += legend_h + 4
    if lay.sliders:
        for s in lay.sliders:
            labels = [str(st.label) for st in s.steps]
            widths = [6 + CHAR * 0.85 * len(lb) for lb in labels]
            # on a phone the book draws a slider as wide as the figure (dynamics.js)
            fits = sum(widths) <= (width - 16 if narrow else inner) * 0.9
            # the first and last labels are centred on the rail's ends: leave them room
            pad_l = int(widths[0] / 2) if fits and widths else 0
            pad_r = int(widths[-1] / 2) if fits and widths else 0
            s.update(x=0, len=1, xanchor="left", y=0, yanchor="top",
                     pad=dict(t=bottom + 4, b=4, l=pad_l, r=pad_r),
                     currentvalue=dict(visible=True, xanchor="left",
                                       font=dict(size=FONT, color="#222"),
                                       prefix=s.currentvalue.prefix or ""),
                     # labels that do not fit are hidden; on a phone, where the slider reaches
                     # the figure's edges, also shrunk, lest the end ones stick out
                     font=dict(size=FONT - 2 if fits or not narrow else 1,
                               color="#444" if fits else "rgba(0,0,0,0)"),
                     ticklen=4 if fits else 3, minorticklen=2)
        bottom += 78 * len(lay.sliders)
    lay.margin = dict(l=left, r=right, t=top, b=bottom, autoexpand=True)
    lay.height = int(plot_h + top + bottom)
    if title:
        lay.title.y = 1 - (start + 8 + 10 * lines) / lay.height
    if narrow:
        _hide_cell_text(fig, inner, plot_h)
        _stagger_marks(fig)
        _slim_colorbars(fig)
        if not is_3d:
            lay.dragmode = False
    # log axes: readable ticks
    if not is_3d:
        for ax_name in _axis_names(fig):
            ax = lay[ax_name]
            if ax.type != "log":
                continue
            dom = ax.domain or (0, 1)
            span = (dom[1] - dom[0]) * (inner if ax_name.startswith("x") else plot_h)
            ax.update(_log_ticks(fig, ax_name, span))
    return fig


def _axis_names(fig: go.Figure) -> list[str]:
    return [k for k in fig.layout.to_plotly_json() if k.startswith(("xaxis", "yaxis"))] or \
        ["xaxis", "yaxis"]


def _axes(fig: go.Figure, letter: str):
    return [fig.layout[k] for k in _axis_names(fig) if k.startswith(letter + "axis")]


# ----------------------------------------------------------------------------- rendering

# what the narrow layout may change in a trace (the rest of a trace is the same on a phone)
_NARROW_TRACE_KEYS = ("texttemplate", "colorbar")


def _json_of(v) -> str:
    import json

    return json.dumps(v, cls=plotly.utils.PlotlyJSONEncoder, sort_keys=True)


def narrow_patch(fig: go.Figure) -> dict:
    """How the house layout of ``fig`` on a phone (:func:`house` with ``narrow``, at
    :data:`NARROW` px) differs from its layout in the column: ``{"layout": {key: value},
    "data": [{key: value}, ...]}``, top-level layout keys replaced whole (None: removed) and
    one patch per trace (empty where the trace is unchanged). The book's pages apply it where
    a figure is narrow (:mod:`dynamics.book`); ``fig`` is left as it is."""
    wide, small = house(go.Figure(fig)), house(go.Figure(fig), NARROW, narrow=True)
    return _patch(wide, small)


def _patch(wide: go.Figure, small: go.Figure) -> dict:
    w, s = wide.layout.to_plotly_json(), small.layout.to_plotly_json()
    layout = {k: v for k, v in s.items() if k not in w or _json_of(w[k]) != _json_of(v)}
    layout.update({k: None for k in w if k not in s})
    data = []
    for a, b in zip(wide.data, small.data):
        keys = [k for k in _NARROW_TRACE_KEYS if k in a and _json_of(a[k]) != _json_of(b[k])]
        data.append({k: b[k] for k in keys})
    return {"layout": layout, "data": data if any(data) else []}


def to_html(fig: go.Figure) -> str:
    """The figure, in the house layout, as a self-drawing HTML fragment (uses the Plotly
    loaded in the page, else plotly.js from its CDN: see the module's docstring).

    The fragment carries the figure's narrow layout too (:func:`narrow_patch`): the book's
    pages (``dynamics.js``, served by :mod:`dynamics.book`) draw a figure narrower than
    :data:`NARROW_BELOW` px in it and switch back when the figure grows. Jupyter and Colab,
    where a figure has the notebook's width, keep the column layout."""
    div = f"dyn-{uuid.uuid4().hex[:12]}"
    fig = go.Figure(fig)
    wide = house(go.Figure(fig))
    narrow = _patch(wide, house(fig, NARROW, narrow=True))
    config = _json(CONFIG)
    return (
        f'<div id="{div}" class="dynamics-figure plotly-graph-div" '
        f'style="height:{wide.layout.height}px; width:100%;"></div>\n'
        '<script type="text/javascript">\n'
        "(function () {\n"
        f"  var fig = {wide.to_json()};\n"
        "  // the figure on a phone: the book's pages draw it so where it is narrow\n"
        f"  var narrow = {_json_of(narrow)};\n"
        "  function draw() {\n"
        f"    if (window.dynamicsFigure) {{ dynamicsFigure('{div}', fig, narrow, {config}); return; }}\n"
        f"    Plotly.newPlot('{div}', fig.data, fig.layout, {config})"
        ".then(function (gd) {\n"
        "      if (fig.frames) { Plotly.addFrames(gd, fig.frames); } });\n"
        "  }\n"
        "  if (window.Plotly) { draw(); } else {\n"
        f"    var s = document.createElement('script'); s.src = '{CDN}';\n"
        "    s.onload = draw; document.head.appendChild(s);\n"
        "  }\n"
        "})();\n"
        "</script>"
    )


def plotlyjs_html() -> str:
    """plotly.js from the installed plotly package as one ``<script>`` that defines
    ``window.Plotly`` (AMD/CommonJS loaders are hidden from it: the classic notebook's
    require.js would otherwise capture it as a module and leave ``window.Plotly`` undefined)."""
    return ('<script type="text/javascript">(function () {\n'
            "if (window.Plotly) { return; }\n"
            "var define, module, exports;\n"
            + plotly.offline.get_plotlyjs() + "\n})();</script>")


def load_plotlyjs() -> bool:
    """In a Jupyter kernel, put plotly.js into the notebook (once per call: ``dynamics.setup()``
    calls it once per chapter), so that every figure after it draws without network. Returns
    whether it did (not outside a kernel, e.g. in a script or a test)."""
    from IPython import get_ipython
    from IPython.display import display

    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    display({"text/html": plotlyjs_html(),
             "text/plain": f"(plotly.js {plotly.offline.get_plotlyjs_version()} loaded)"}, raw=True)
    return True


def _json(obj) -> str:
    import json

    return json.dumps(obj)


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

    display(HTML(f'<p class="dynamics-caption" style="font-size:0.85em;color:#555;'
                 f'margin-top:0.2em;">{html.escape(text)}</p>'))


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
                       font=dict(size=FONT - 2, color=color), **where)
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


# ----------------------------------------------------------------------------- numbers and tables

def number(value, digits: int = 3, missing: str = "—") -> str:
    """A number as the book prints it: integers with thousands separators, other values to
    ``digits`` significant digits (scientific notation only when very small or large);
    None and NaN become ``missing``."""
    if value is None:
        return missing
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return missing
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == 0:
        return "0"
    if v == round(v) and abs(v) < 1e6 and isinstance(value, float) and abs(v) >= 10 ** (digits - 1):
        return f"{int(v):,}"
    mag = math.floor(math.log10(abs(v)))
    if mag < -3 or mag >= 6:
        mant, exp = f"{v:.{max(digits - 1, 0)}e}".split("e")
        if "." in mant:
            mant = mant.rstrip("0").rstrip(".")
        return f"{mant.replace('-', '−')}×10{_superscript(int(exp))}"
    decimals = max(digits - 1 - mag, 0)
    out = f"{v:,.{decimals}f}"
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return out.replace("-", "−")


def _superscript(n: int) -> str:
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _is_number(v) -> bool:
    return v is None or (isinstance(v, (int, float, np.integer, np.floating))
                         and not isinstance(v, (bool, np.bool_)))


TABLE_CSS = """
.dynamics-table-wrap { overflow-x: auto; max-width: 100%; margin: 0.6em 0 1.2em; }
table.dynamics-table { border-collapse: collapse; font-size: 0.9em; line-height: 1.35;
  width: auto; max-width: 100%; }
table.dynamics-table th, table.dynamics-table td { padding: 0.3em 0.7em;
  border-bottom: 1px solid #e3e3e3; vertical-align: top; text-align: left; }
table.dynamics-table th { border-bottom: 2px solid #bbb; font-weight: 600; }
table.dynamics-table td.num, table.dynamics-table th.num { text-align: right;
  font-variant-numeric: tabular-nums; }
table.dynamics-table td.num { white-space: nowrap; }
table.dynamics-table td.text { min-width: 8em; }
table.dynamics-table td.missing { color: #888; font-style: italic; }
"""


def table(rows: Iterable[dict], columns: Sequence[str] | None = None, *,
          digits: int = 3, missing: str = "not reached", formats: dict | None = None):
    """A list of dicts as an HTML table in the house style.

    Numbers are right-aligned and printed with :func:`number` (``digits`` significant digits;
    ``formats={"column": "{:.1%}"}`` or a function overrides a column); None/NaN print as
    ``missing``. Put units in the column names ("time (s)"). Text wraps; a table wider than
    the column scrolls inside it instead of leaving it.
    """
    from IPython.display import HTML

    rows = list(rows)
    columns = list(columns or (rows[0].keys() if rows else []))
    formats = formats or {}
    numeric = {c: all(_is_number(r.get(c)) for r in rows) and
               any(r.get(c) is not None for r in rows) for c in columns}

    def cell(c, v) -> str:
        miss = v is None or (isinstance(v, float) and math.isnan(v))
        if miss:
            text, cls = missing, "missing num" if numeric[c] else "missing"
        elif c in formats:
            f = formats[c]
            text, cls = (f(v) if callable(f) else f.format(v)), "num" if numeric[c] else "text"
        elif numeric[c]:
            text, cls = number(v, digits), "num"
        else:
            text, cls = str(v), "text"
        return f'<td class="{cls}">{html.escape(text)}</td>'

    head = "".join(f'<th class="{"num" if numeric[c] else ""}">{html.escape(str(c))}</th>'
                   for c in columns)
    body = "".join("<tr>" + "".join(cell(c, r.get(c)) for c in columns) + "</tr>" for r in rows)
    return HTML(f"<style>{TABLE_CSS}</style>"
                f'<div class="dynamics-table-wrap"><table class="dynamics-table">'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


VERDICTS = ("yes", "partly", "not at this scale", "no")
MARKS = {"yes": "✓ yes", "partly": "◐ partly", "not at this scale": "– not at this scale",
         "no": "✗ no"}


def verdict(ok: bool, partly: bool = False, scale: bool = False) -> str:
    """A claims row's verdict from its checks: "yes" when ``ok``, else "partly" when
    ``partly``, else "not at this scale" when ``scale`` (the claim is about a regime this
    profile does not reach), else "no"."""
    return "yes" if ok else "partly" if partly else "not at this scale" if scale else "no"


def claim(claim: str, paper: str, measured: str, reproduced: str, asserted: bool = True) -> dict:
    """One row of a chapter's claims table: what a paper claims, what this run measured,
    and whether the measurement reproduces it (one of :data:`VERDICTS`).

    ``asserted``: the chapter's prose states this row as true (a "What to notice" sentence).
    In strict mode (``DYNAMICS_STRICT_CLAIMS=1``, the published build) a table with an asserted
    row that is not "yes" refuses to render: the prose would say something the figure does not
    show. A row whose verdict may differ between profiles is not asserted: its prose glues the
    verdict instead."""
    if reproduced not in VERDICTS:
        raise ValueError(f"reproduced must be one of {list(VERDICTS)}, got {reproduced!r}")
    return {"claim": claim, "paper": paper, "measured here": measured, "reproduced": reproduced,
            "asserted": bool(asserted)}


class ClaimNotShown(AssertionError):
    """A row that the prose asserts came out other than "yes" in a strict build."""


def failed_claims(rows: Sequence[dict]) -> list[dict]:
    """The rows that the prose asserts but this run does not reproduce."""
    return [r for r in rows if r.get("asserted", True) and r["reproduced"] != "yes"]


def claims_table(rows: Sequence[dict], strict: bool | None = None):
    """A chapter's claims table: the rows of :func:`claim`, in the house table style, each
    verdict marked (✓ yes, ◐ partly, – not at this scale, ✗ no). ``strict`` (default:
    ``$DYNAMICS_STRICT_CLAIMS``) raises :class:`ClaimNotShown` when a row the prose asserts is
    not reproduced."""
    from .runtime import switch

    rows = list(rows)
    if strict is None:
        strict = switch("DYNAMICS_STRICT_CLAIMS", False)
    bad = failed_claims(rows)
    if strict and bad:
        raise ClaimNotShown("the prose asserts rows this run does not reproduce:\n" + "\n".join(
            f"- {r['claim']}: {r['measured here']} ({r['reproduced']})" for r in bad))
    return table(rows, ["claim", "paper", "measured here", "reproduced"],
                 formats={"reproduced": lambda v: MARKS[v]})


def rounded(obj, digits: int = 5):
    """Floats rounded to ``digits`` significant digits, recursively (keeps the JSON in
    ``data/`` small; used by every theme's precompute)."""
    if isinstance(obj, dict):
        return {k: rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v, digits) for v in obj]
    if isinstance(obj, float) and math.isfinite(obj) and obj != 0.0:
        return round(obj, digits - 1 - int(math.floor(math.log10(abs(obj)))))
    return obj
