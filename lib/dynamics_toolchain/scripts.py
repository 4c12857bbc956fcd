"""The book's page scripts and styles, real files in ``static/``, and the linters that read them.

The book serves one ``dynamics.js`` and one ``dynamics.css`` (:mod:`dynamics_toolchain.sphinx`):

- :func:`book_js`: a generated prelude, ``window.dynamicsConfig = {...}`` with the values
  computed in Python (:func:`config`: the width under which a figure takes its narrow layout,
  the palettes of the dark theme), then ``static/dark.js`` (figures in the dark theme's
  colours, :mod:`dynamics_toolchain.darkmode`), ``static/viewlink.js`` (a link to a view,
  :mod:`dynamics_toolchain.viewlink`), ``static/access.js`` (a keyboard and a text alternative
  for every reader, :mod:`dynamics_toolchain.access`) and ``static/figures.js`` (each figure
  drawn in the layout that suits its width; it calls the others);
- :func:`book_css`: ``static/book.css`` then ``static/print.css`` (the printed edition's).

The checks' page-side scripts, run in Chromium by Playwright's ``page.evaluate`` (the page
checks, the theme report, the audit, the printer's pictures), are files too:
``static/evaluate/<name>.js``, each one function expression, read by :func:`evaluate`. A
one-line expression stays in Python beside its call (a camera's eye, a hover's text, a value
built from a Python f-string): it is read where it is used, and a file would hold one line.
"""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["STATIC", "SERVED_JS", "SERVED_CSS", "static", "evaluate", "config", "book_js",
           "book_css"]

STATIC = Path(__file__).resolve().with_name("static")
SERVED_JS = ("dark.js", "viewlink.js", "access.js", "figures.js")  # in dynamics.js, in this order
SERVED_CSS = ("book.css", "print.css")                              # in dynamics.css, in this order


def static(name: str) -> str:
    """The text of ``static/<name>``."""
    return (STATIC / name).read_text(encoding="utf-8")


def evaluate(name: str) -> str:
    """``static/evaluate/<name>.js``: a function expression for Playwright's ``page.evaluate``."""
    return static(f"evaluate/{name}.js")


def config() -> dict:
    """The values the page scripts take from Python (``window.dynamicsConfig``): ``narrow``,
    the width in px under which a figure is drawn in its narrow layout
    (:data:`dynamics.plots.NARROW_BELOW`), and the dark theme's ``palette`` (the house
    palette, lower case), ``darkPalette`` (each lightened) and ``darkBackground``."""
    from dynamics.plots import NARROW_BELOW

    from .darkmode import js_config

    return {"narrow": NARROW_BELOW, **js_config()}


def book_js() -> str:
    """The book's ``dynamics.js``: the prelude with :func:`config`, then :data:`SERVED_JS`."""
    prelude = ("/* Training Dynamics: the values the scripts below take from Python "
               "(dynamics_toolchain.scripts.config). */\n"
               f"window.dynamicsConfig = {json.dumps(config())};\n")
    return prelude + "".join(static(name) for name in SERVED_JS)


def book_css() -> str:
    """The book's ``dynamics.css``: :data:`SERVED_CSS`, one after the other."""
    return "".join(static(name) for name in SERVED_CSS)
