"""Rendering: a figure as a self-drawing HTML fragment, in the house layout.

Jupyter Book 1.x drops plotly's own output type, so figures are emitted as ``text/html``: a
``div`` and a script that draws it with ``Plotly.newPlot``, using the Plotly already loaded in
the page. Where that comes from:

- in the built book, plotly.js is one of the book's own static files (see :mod:`dynamics.book`);
- in a local Jupyter, ``dynamics.setup()`` loads plotly.js from the installed package into the
  notebook once (:func:`load_plotlyjs`), so figures draw with no network;
- on Colab every output is sandboxed in its own frame, so nothing loaded once is visible to the
  next figure: there each figure fetches plotly.js from its CDN (Colab is online; embedding the
  4 MB library in every figure would make the notebook heavy for nothing).
"""
from __future__ import annotations

import html
import uuid

import plotly
import plotly.graph_objects as go
import plotly.io as pio

from .layout import NARROW, house

CDN = f"https://cdn.plot.ly/plotly-{plotly.offline.get_plotlyjs_version()}.min.js"
# the plotly toolbar, trimmed to what a reader uses (it overlaps less of the figure)
CONFIG = {"responsive": True, "displaylogo": False,
          "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines",
                                     "hoverClosestCartesian", "hoverCompareCartesian"]}

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
