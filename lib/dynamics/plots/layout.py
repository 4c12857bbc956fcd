"""The house layout: one layout for every figure of the book, sized for its text column.

:func:`house` applies it to a copy of a figure when it is rendered (:mod:`.render`), so
builders only say *what* to draw; where the legend, the title, a slider and the tick labels go
is decided here, for every figure alike:

- the **title** sits top left and wraps to the column (keep it short: the prose carries the rest);
- the **legend** runs horizontally above the plot, under the title, so it never covers data
  and never meets a slider, which always sits below the x-axis;
- a **slider** gets room for its rail and its current value; its step labels are shown only
  when they fit side by side (the current value always names the active step);
- **log axes** label only as many ticks as fit (powers of ten when space is short);
- **multi-panel** figures keep the full width, since the legend is not beside them; on a
  phone (``narrow``) their panels stack.
"""
from __future__ import annotations

import html
import math
import re
import textwrap
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .tables import _superscript, number

# every pair of colours at least 12 CIELAB units apart for normal vision and as seen with
# protanopia, deuteranopia and tritanopia (dynamics_toolchain.access.colour_distances; tested)
PALETTE = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477",
           "#66cc55", "#aa2222", "#335577"]
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
    # plotly widens the left margin for long tick labels and axis titles (autoexpand), which
    # the layout cannot know: a column counts a tenth of the width more than the text needs
    per_row = max(1, int(width // (1.1 * max(widths))))
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
        # side by side, a panel that shares its neighbour's y axis hides its tick labels; one
        # above the other it has no neighbour to read them from
        if lay[yname].showticklabels is False:
            lay[yname].showticklabels = True
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
    bars = [tr for tr in fig.data if getattr(tr, "showscale", None) is not False
            and tr.type in ("heatmap", "contour")]
    inner = width - left - right
    # the legend's room: plotly widens the right margin for a colorbar (its bar, tick labels
    # and title), and the legend, anchored at the plot's left, ends at the plot's right
    legend_w = inner - (max((tr.colorbar.thickness or 30) for tr in bars) + 50 if bars else 0)

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
        rows = _legend_rows(entries, inner if narrow else legend_w)
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
