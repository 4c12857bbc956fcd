"""The book's Sphinx extension (listed in ``_config.yml``):

- serves plotly.js as the book's own static file, copied from the installed ``plotly``
  package, so figures render with no network access;
- serves ``dynamics.js`` and ``dynamics.css`` (the page scripts and styles in ``static/``,
  assembled by :mod:`dynamics_toolchain.scripts`), which draw each figure in the layout that
  suits its width and theme;
- stamps every page's footer with the book's version, commit and build date;
- tells the notebook kernels the book executes not to draw progress bars (they would be
  stale widget output in a static page);
- executes the chapters side by side before Sphinx reads them (:mod:`.execute`).
"""
from __future__ import annotations

import html
import os
import shutil
from pathlib import Path

from .scripts import STATIC, book_css, book_js

FAVICON = STATIC / "favicon.svg"

def _static_dir(app) -> Path:
    """Where the served assets are staged: inside the build directory, not the book's own
    ``_static`` (Jupyter Book adds every .js file found there as a <script> to every page)."""
    static = Path(app.doctreedir).parent / "dynamics_static"
    static.mkdir(parents=True, exist_ok=True)
    return static


def _serve_plotly(app, config) -> None:
    import plotly

    static = _static_dir(app)
    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = static / "plotly.min.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)
    (static / "dynamics.css").write_text(book_css())  # the printed edition's style too
    (static / "dynamics.js").write_text(book_js())
    config.html_static_path = [*config.html_static_path, str(static)]  # copied to _static
    if not config.html_favicon:  # the book's own icon: without one every page asks for /favicon.ico
        config.html_favicon = str(FAVICON)


def stamp(commit: str | None = None, date: str | None = None) -> str:
    """What every page's footer says of the book: its version, the commit it was built from
    (when git can say) and the day of the build, e.g. "Training Dynamics 0.1.0 (a1ebb32),
    built 2026-11-26"."""
    import datetime as _dt
    import subprocess

    from dynamics import __version__
    from dynamics.results import ROOT

    if commit is None:
        try:
            commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = ""
    date = date or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")
    return f"Training Dynamics {__version__}" + (f" ({commit})" if commit else "") + f", built {date}"


def _stamp_footer(app, config) -> None:
    """Sphinx ``config-inited``: the book's version and build date at the end of the footer
    that ``_config.yml`` writes (html.extra_footer)."""
    options = dict(config.html_theme_options or {})
    footer = options.get("extra_footer", "").strip()
    options["extra_footer"] = f"{footer} {html.escape(stamp())}.".strip()
    config.html_theme_options = options


def _one_script_each(app, pagename, templatename, context, doctree) -> None:
    """Each script on a page once. Sphinx 7.4 lists an inline script that an extension adds
    after the builder started twice: as added (file name None) and again, read back from its
    registry before writing (file name ""). sphinx-thebe's ``const THEBE_JS_URL = ...`` (added
    before the sources are read) then runs twice, and the second declaration is an error in
    every page's console ("Identifier 'THEBE_JS_URL' has already been declared")."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, kept = set(), []
    for js in scripts:
        key = (getattr(js, "filename", js) or "", getattr(js, "priority", None),
               tuple(sorted((getattr(js, "attributes", None) or {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept


def setup(app):
    os.environ.setdefault("DYNAMICS_PROGRESS", "0")
    # kernels of the book build: serve their own plotly.js, announce nothing to no one
    os.environ.setdefault("DYNAMICS_BOOK_BUILD", "1")
    app.connect("config-inited", _serve_plotly)
    app.connect("config-inited", _stamp_footer)
    app.connect("html-page-context", _one_script_each, priority=900)  # after the others' scripts
    from .execute import ahead

    app.connect("env-before-read-docs", ahead)
    app.add_js_file("plotly.min.js", priority=200)
    app.add_js_file("dynamics.js", priority=210)
    app.add_css_file("dynamics.css")
    from dynamics import __version__  # the one home of the version (pyproject.toml reads it too)

    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

