"""Plotly figures and tables in one house style, sized for the book's text column.

Every figure is drawn through :func:`to_html`, which applies :func:`house`, the one layout of
the book, to a copy of the figure. Builders therefore only say *what* to draw; where the
legend, the title, a slider and the tick labels go is decided in one place, for every figure.

Modules (every public name is re-exported here: ``plots.figure``, ``plots.claim``...):

- :mod:`.layout`: the house style (palette, sizes, plotly template) and :func:`house`, the
  layout for the column and for a phone;
- :mod:`.render`: :func:`to_html` (a self-drawing HTML fragment), :func:`narrow_patch`,
  :func:`show`, :func:`caption`, and loading plotly.js in Jupyter and the book;
- :mod:`.builders`: :func:`figure`, :func:`subplots`, :func:`curves`, :func:`heatmap`,
  :func:`bars`, :func:`slider` (one figure per value of a parameter: the static counterpart of
  a widget), :func:`mark_step`;
- :mod:`.tables`: :func:`number`, :func:`table` (and :func:`rounded`, re-exported from :mod:`dynamics.units`);
- :mod:`.claims`: the claims tables: :func:`claim`, :func:`verdict`, :func:`claims_table`,
  :func:`failed_claims`, :func:`verdicts` (a row's verdict for the prose),
  :func:`control_passes` (the seeds on which a row's control passes its test).
"""
import plotly.graph_objects as go  # noqa: F401  (plots.go: the figures' plotly module)

from .builders import bars, curves, figure, heatmap, mark_step, slider, subplots
from .claims import (MARKS, VERDICTS, ClaimNotShown, claim, claims_table, control_passes,
                     failed_claims, claim_seeds, per_seed, spread, verdicts)
from .layout import (CHAR, COLUMN, FONT, HEIGHT, NARROW, NARROW_BELOW, PALETTE, PANEL, TEMPLATE,
                     house)
from .render import (CDN, CONFIG, caption, load_plotlyjs, narrow_patch, plotlyjs_html, show,
                     to_html, use_book_renderer)
from ..units import rounded  # (the precompute's rounding; re-exported here, where it was)
from .tables import TABLE_CSS, number, table

__all__ = ["PALETTE", "HEIGHT", "COLUMN", "NARROW", "NARROW_BELOW", "FONT", "CHAR", "TEMPLATE",
           "PANEL", "house", "CDN", "CONFIG", "narrow_patch", "to_html", "plotlyjs_html",
           "load_plotlyjs", "use_book_renderer", "show", "caption", "figure", "subplots",
           "curves", "mark_step", "heatmap", "slider", "bars", "number", "TABLE_CSS", "table",
           "rounded", "VERDICTS", "MARKS", "claim", "ClaimNotShown", "failed_claims",
           "claims_table", "spread", "per_seed", "claim_seeds",
           "verdicts", "control_passes"]
