"""Numbers and tables: :func:`number` (a value as the book prints it) and :func:`table` (rows
of dicts in the house table style). The rounding of the JSON in ``data/`` is the precompute's
(:func:`dynamics.units.rounded`)."""
from __future__ import annotations

import html
import math
import re
from typing import Iterable, Sequence

import numpy as np

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


_BOUND = re.compile(r"^[≥≤<>] ?[−+-]?[0-9.,]+(×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?$")


def _is_numeric(v) -> bool:
    """A number, or a bound printed as one ("≥ 10", "< 0.01"): a column of these aligns
    as numbers."""
    return _is_number(v) or (isinstance(v, str) and bool(_BOUND.match(v.strip())))


TABLE_CSS = """
.dynamics-table-wrap { overflow-x: auto; max-width: 100%; margin: 0.6em 0 1.2em;
  /* a table wider than the column shows it: a shade at each edge with more table beyond it.
     The shades stay with the box; the covers, in the page's colour, scroll with the table and
     hide a shade at the table's own ends (no theme colour known: no covers, both shades) */
  --dynamics-cover: var(--pst-color-background, var(--jp-layout-color0, transparent));
  --dynamics-shade: rgba(0, 0, 0, 0.25);
  background:
    linear-gradient(to right, var(--dynamics-cover) 40%, transparent) left / 2.4em 100% no-repeat local,
    linear-gradient(to left, var(--dynamics-cover) 40%, transparent) right / 2.4em 100% no-repeat local,
    linear-gradient(to right, var(--dynamics-shade), transparent) left / 0.9em 100% no-repeat scroll,
    linear-gradient(to left, var(--dynamics-shade), transparent) right / 0.9em 100% no-repeat scroll; }
html[data-theme=dark] .dynamics-table-wrap { --dynamics-shade: rgba(255, 255, 255, 0.3); }
table.dynamics-table { border-collapse: collapse; font-size: 0.9em; line-height: 1.35;
  width: auto; max-width: 100%; }
table.dynamics-table th, table.dynamics-table td { padding: 0.3em 0.7em;
  border-bottom: 1px solid #e3e3e3; vertical-align: top; text-align: left; }
table.dynamics-table th { border-bottom: 2px solid #bbb; font-weight: 600; }
table.dynamics-table td.num, table.dynamics-table th.num { text-align: right;
  font-variant-numeric: tabular-nums; }
table.dynamics-table td.num { white-space: nowrap; }
table.dynamics-table td.text { white-space: pre-line; }
table.dynamics-table td.text.long { min-width: 8em; }
table.dynamics-table td.missing { color: #6e6e6e; font-style: italic; }  /* 5:1 on white (WCAG AA) */
"""


def table(rows: Iterable[dict], columns: Sequence[str] | None = None, *,
          digits: int = 3, missing: str = "not reached", formats: dict | None = None):
    """A list of dicts as an HTML table in the house style.

    Numbers are right-aligned and printed with :func:`number` (``digits`` significant digits;
    ``formats={"column": "{:.1%}"}`` or a function overrides a column); None/NaN print as
    ``missing``. Put units in the column names ("time (s)"). Text wraps; a table wider than
    the column scrolls inside it instead of leaving it (its box takes the keyboard's focus, so
    that a reader without a mouse can scroll it too).
    """
    from IPython.display import HTML

    rows = list(rows)
    columns = list(columns or (rows[0].keys() if rows else []))
    formats = formats or {}
    numeric = {c: all(_is_numeric(r.get(c)) for r in rows) and
               any(r.get(c) is not None for r in rows) for c in columns}

    # a column of long texts keeps a readable width; one of short words ("yes", "hidden.0")
    # takes only what its words need, so that a wide table still fits the column
    def shown(v) -> str:  # a number among texts prints as a number too, never as repr
        return number(v, digits) if _is_number(v) and v is not None else str(v)

    long = {c: max((len(shown(r.get(c, ""))) for r in rows), default=0) > 12 for c in columns}

    def cell(c, v) -> str:
        miss = v is None or (isinstance(v, float) and math.isnan(v))
        if miss:
            text, cls = missing, "missing num" if numeric[c] else "missing"
        elif c in formats:
            f = formats[c]
            text, cls = (f(v) if callable(f) else f.format(v)), "num" if numeric[c] else "text"
        elif numeric[c]:
            text, cls = shown(v), "num"
        else:
            text, cls = shown(v), "text long" if long[c] else "text"
        return f'<td class="{cls}">{html.escape(text)}</td>'

    head = "".join(f'<th class="{"num" if numeric[c] else ""}">{html.escape(str(c))}</th>'
                   for c in columns)
    body = "".join("<tr>" + "".join(cell(c, r.get(c)) for c in columns) + "</tr>" for r in rows)
    # the scrolling box is a region a keyboard can reach; its name says which table (by its
    # columns), so that the page's regions are told apart
    label = html.escape("table of " + ", ".join(str(c) for c in columns), quote=True)
    return HTML(f"<style>{TABLE_CSS}</style>"
                f'<div class="dynamics-table-wrap" tabindex="0" role="region" aria-label="{label}">'
                f'<table class="dynamics-table">'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
