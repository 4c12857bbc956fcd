"""Book machinery: the Colab setup cell every chapter starts with, and a small Sphinx
extension (listed in ``_config.yml``) that

- serves plotly.js as the book's own static file, copied from the installed ``plotly``
  package, so figures render with no network access;
- serves ``dynamics.js``, which draws each figure in the layout that suits its width (the
  house style's narrow layout on a phone, :func:`dynamics.plots.narrow_patch`);
- tells the notebook kernels the book executes not to draw progress bars (they would be
  stale widget output in a static page).

Also here: :func:`show_source` and :func:`glue` for the pages, the table of what each chapter
costs to run (:func:`live_cost`), and the command line ``python -m dynamics.book``; building
the book in a copy and checking its pages in Chromium are in :mod:`dynamics.pages`.
"""
from __future__ import annotations

import html
import os
import shutil
import textwrap
from pathlib import Path

from .bookjs import BOOK_JS, book_js  # noqa: F401 (book.X)
from .pages import MIN_STEP, build, chromium, inspect_pages, problems, screenshots  # noqa: F401 (book.X)


REPO_DIR = "training-dynamics"

# The first code cell of every chapter (``python -m dynamics.book colab-cells`` writes it).
# Plain Python, no magics, so that Colab and the tests run the same code. Safe to run twice:
# the clone is updated, not made again; the library is installed once; sys.path gets one entry.
COLAB_CELL = """\
# Colab setup: on Colab, fetch the book's repository (library + precomputed data) and install
# the library from it; anywhere else this cell does nothing. Safe to run again: it updates the
# copy, installs once, and never reinstalls torch or Colab's other packages.
import os, shutil, subprocess, sys
from importlib.metadata import PackageNotFoundError, version
REPO, DIR, AGAIN = "{url}", "{dir}", "then run this cell again"
def git(*args):
    out = subprocess.run(["git", *args], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None
if "google.colab" in sys.modules:
    if not shutil.which("git"):
        raise RuntimeError(f"git is missing: install it (apt-get install -y git), {{AGAIN}}")
    if not os.path.isdir(DIR):
        if git("clone", "--depth", "1", "--branch", "{branch}", REPO, DIR) is None:
            raise RuntimeError(f"could not clone {{REPO}}: check the connection, {{AGAIN}}")
    elif git("-C", DIR, "config", "remote.origin.url") != REPO:
        raise RuntimeError(f"{{DIR}}/ is not a clone of {{REPO}}: delete or rename it, {{AGAIN}}")
    elif (git("-C", DIR, "fetch", "--depth", "1", "origin", "{branch}") is None
          or git("-C", DIR, "reset", "--hard", "FETCH_HEAD") is None):
        print(f"could not update {{DIR}}/ (offline?): using it as it is; delete it to start afresh")
    try:
        version("dynamics")  # installed by an earlier run
    except PackageNotFoundError:  # once: the library, and what Colab lacks (mnist1d)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-e", DIR], check=True)
    LIB = os.path.abspath(f"{{DIR}}/lib")
    if LIB not in sys.path:
        sys.path.insert(0, LIB)"""


def colab_cell(url: str, branch: str = "main") -> str:
    """The source of a chapter's first code cell for the repository at ``url``."""
    return COLAB_CELL.format(url=url, dir=REPO_DIR, branch=branch)


def repository_url(config_path=None) -> str:
    """``repository.url`` from the book's ``_config.yml``."""
    import yaml

    from .results import ROOT

    config = yaml.safe_load(open(config_path or ROOT / "_config.yml"))
    return config["repository"]["url"]


def write_colab_cells(chapters_dir=None) -> list[Path]:
    """Make the first code cell of every chapter notebook the Colab cell for the repository
    in ``_config.yml`` (the cell is generated here, one home, and tested against this);
    returns the notebooks changed. Notebooks are read and written with nbformat, so nothing
    else in them changes."""
    import nbformat

    from .results import ROOT

    changed = []
    cell = colab_cell(repository_url())
    for path in sorted(Path(chapters_dir or ROOT / "chapters").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        first = next((c for c in nb.cells if c.cell_type == "code"), None)
        if first is None:
            raise ValueError(f"{path} has no code cell to hold the Colab setup")
        if first.source != cell:
            first.source = cell
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            changed.append(path)
    return changed


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
    from .printed import PRINT_CSS

    (static / "dynamics.css").write_text(BOOK_CSS + PRINT_CSS)  # the printed edition's style too
    (static / "dynamics.js").write_text(book_js())
    config.html_static_path = [*config.html_static_path, str(static)]  # copied to _static


# The book's own styles: printed output and inline code in the prose (a long call such as
# ``sp.science.rms_to_rms_norm(...)``, whose words Sphinx sets in no-wrap spans) wrap inside
# the column instead of widening the page, and the notes of live panels and the provenance captions read as asides.
BOOK_CSS = """
div.cell_output pre, div.output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
article :is(p, li, td) code.literal span.pre { white-space: normal; overflow-wrap: anywhere; }
div.cell_output .dynamics-source pre { white-space: pre; overflow-wrap: normal; font-size: 0.8em; }
div.cell_output .output.text_html { overflow-x: auto; max-width: 100%; }
.dynamics-figure { max-width: 100%; }
.dynamics-panel-note { margin: 0.4em 0 1em; font-size: 0.92em; }
html[data-theme=dark] .bd-content div.cell_output .text_html {
  /* the theme puts HTML outputs on a light box in the dark theme, for libraries whose output
     assumes white; the book's figures, tables and notes follow the theme (dynamics.darkmode) */
  background-color: transparent !important; color: inherit !important; padding: 0 !important; }
html[data-theme=dark] .dynamics-source > summary { color: #8fb0ea !important; }
html[data-theme=dark] .dynamics-caption { color: #a3acb5 !important; }
html[data-theme=dark] table.dynamics-table th, html[data-theme=dark] table.dynamics-table td {
  border-color: #3a424d; }
html[data-theme=dark] table.dynamics-table td.missing { color: #a3acb5; }
"""


# ----------------------------------------------------------------------------- the code on the page

def show_source(*objs, title: str | None = None, open: bool = False):
    """The library's own source of ``objs`` (functions, classes, methods), as a collapsible
    block with a link to the lines in the repository. It is read from the installed library
    when the cell runs, so the page always shows the code that ran (one home, never a copy).

    In a chapter: ``show_source(G.fourier_spectrum)`` in a cell tagged ``remove-input``.
    """
    import inspect

    from IPython.display import HTML
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from .results import ROOT

    if not objs:
        raise ValueError("show_source() needs at least one function or class")
    blocks, names = [], []
    for obj in objs:
        target = inspect.unwrap(obj)
        try:
            lines, start = inspect.getsourcelines(target)
            path = Path(inspect.getsourcefile(target)).resolve()
        except (TypeError, OSError) as err:
            raise ValueError(f"no source for {obj!r}: {err}") from None
        try:
            rel = path.relative_to(ROOT).as_posix()
        except ValueError:
            rel = path.name
        end = start + len(lines) - 1
        module = target.__module__
        qual = getattr(target, "__qualname__", getattr(target, "__name__", str(target)))
        names.append(qual)
        url = f"{repository_url()}/blob/main/{rel}#L{start}-L{end}"
        code = highlight(textwrap.dedent("".join(lines)), PythonLexer(),
                         HtmlFormatter(noclasses=True, style="friendly", nobackground=True))
        blocks.append(
            f'<div style="font-size:0.85em;color:#555;margin:0.3em 0;">'
            f'<code>{html.escape(module)}.{html.escape(qual)}</code> · '
            f'<a href="{html.escape(url)}">{html.escape(rel)}, lines {start}–{end}</a></div>'
            f'<div style="overflow-x:auto;background:#f8f8f8;border-radius:4px;padding:0.2em 0.6em;">'
            f"{code}</div>")
    summary = title or "Show the code: " + ", ".join(names)
    return HTML(f'<details class="dynamics-source"{" open" if open else ""}>'
                f'<summary style="cursor:pointer;color:#3366cc;">{html.escape(summary)}</summary>'
                + "".join(blocks) + "</details>")


class Glued:
    """A glued text as MyST-NB stores it, so that the page prints it verbatim.

    ``{glue:text}`` reads the stored text/plain back with ``ast.literal_eval`` before printing
    it (``myst_nb.core.variables.format_plain_text``): a bare "2,000" became the tuple
    ``(2, 0)`` and "0.100" the float ``0.1``. The text/plain here is the ``repr`` of the text,
    a string literal, which reads back as exactly the text; ``{glue}`` picks text/html in the
    HTML build, the text escaped."""

    def __init__(self, text: str):
        self.text = str(text)

    def __repr__(self) -> str:  # IPython's text/plain
        return repr(self.text)

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return html.escape(self.text)


def glue_texts(digits: int = 3, **values) -> dict[str, str]:
    """The text :func:`glue` puts on the page for each value: a number as the book writes it
    (:func:`dynamics.plots.number`, ``digits`` significant digits), a list as "1, 3 and 10",
    a string as it is."""
    from .plots import number

    if not values:
        raise ValueError("glue() needs at least one name=value")

    def text(v) -> str:
        if isinstance(v, str):
            return v
        if isinstance(v, (list, tuple)):
            if not v:
                raise ValueError("glue() got an empty list")
            return _and([text(x) for x in v])
        return number(v, digits)

    return {name: text(v) for name, v in values.items()}


def glue(digits: int = 3, **values) -> None:
    """Put numbers computed on this page into its prose: ``glue(t_grok=run.grok_step)`` in a
    cell, ``{glue:text}`t_grok``` in the markdown after it. Numbers are written as the book
    writes them (:func:`dynamics.plots.number`, ``digits`` significant digits); a list of
    numbers as "1, 3 and 10"; a string is glued as it is (format it yourself for a
    percentage or a range). The page prints each text exactly so (:class:`Glued`).

    In the book build the values are glued silently (MyST-NB); anywhere else (Colab, Jupyter),
    where ``{glue:text}`` does not render, the cell prints them instead, one line, so that a
    reader there loses nothing. Returns nothing, so that a cell ending in ``glue(...)`` shows
    no output of its own.
    """
    from .runtime import in_book_build

    texts = glue_texts(digits, **values)
    if in_book_build():
        from myst_nb import glue as nb_glue

        for name, text in texts.items():
            nb_glue(name, Glued(text), display=False)
    else:
        print("; ".join(f"{name} = {text}" for name, text in texts.items()))


# ----------------------------------------------------------------------------- what a page costs

LIVE_COST = "live_cost.csv"  # in data/: how long each chapter notebook takes, per profile
LIVE_COST_FIELDS = ("chapter", "profile", "seconds", "how", "on", "date", "command")
LIVE_COST_COMMANDS = {  # what rewrites each kind of row (how, profile)
    ("measured", "smoke"): "python -m dynamics.bench notebooks --no-book --write",
    ("measured", "cpu"): "python -m dynamics.bench notebooks --no-book --write",
    ("measured", "gpu"): "python -m dynamics.bench gpu --measure --write",
}


def live_cost_path() -> Path:
    from .results import DATA

    return DATA / LIVE_COST


def read_live_cost(path=None) -> list[dict]:
    """The rows of ``data/live_cost.csv``: one per chapter, profile and machine, with the
    notebook's ``seconds``, ``how`` they were had (``measured``: the whole notebook run in a
    fresh kernel, its wall time on a GPU, the kernel's CPU time on a CPU; nothing estimated),
    ``on`` what, the date and the command that rewrites the row. ``on`` completes "measured
    ..." ("on Tesla T4", "as the kernel's CPU time on one x86_64 core")."""
    import csv

    path = Path(path) if path is not None else live_cost_path()
    if not path.exists():
        raise FileNotFoundError(f"no {path}: write it with "
                                f"`{LIVE_COST_COMMANDS[('measured', 'cpu')]}`")
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if set(LIVE_COST_FIELDS) - set(row) or row["how"] != "measured":
            raise ValueError(f"{path} is not a live-cost table (columns "
                             f"{', '.join(LIVE_COST_FIELDS)}; how = measured)")
        row["seconds"] = float(row["seconds"])
    return rows


def write_live_cost(new: list[dict], path=None) -> Path:
    """Merge ``new`` rows into ``data/live_cost.csv``: a row replaces the one with the same
    chapter, profile, how and machine; the others stay. Rows are kept in chapter order."""
    import csv
    import io

    from . import CHAPTERS
    from .results import write_atomic

    path = Path(path) if path is not None else live_cost_path()
    key = lambda r: (r["chapter"], r["profile"], r["how"], r["on"])  # noqa: E731
    rows = {key(r): r for r in (read_live_cost(path) if path.exists() else [])}
    for r in new:
        if r["chapter"] not in CHAPTERS or r["how"] != "measured":
            raise ValueError(f"not a live-cost row: {r}")
        rows[key(r)] = dict(r, seconds=round(float(r["seconds"]), 1))
    order = list(CHAPTERS)
    text = io.StringIO()
    out = csv.DictWriter(text, LIVE_COST_FIELDS, lineterminator="\n")
    out.writeheader()
    out.writerows(sorted(rows.values(), key=lambda r: (order.index(r["chapter"]), r["profile"],
                                                        r["how"], r["on"])))
    write_atomic(path, text.getvalue())
    return path


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def live_cost_line(chapter: str, rows: list[dict], gpu_sessions: list[dict] | None = None) -> str:
    """One line: how long running ``chapter``'s code cells takes in each profile, measured
    (on what, when): the smoke and cpu times from ``rows`` (``data/live_cost.csv``), and the
    gpu time of the whole notebook where a GPU has measured it (a measured row, else what
    ``gpu_sessions``, default ``data/gpu_measured.json``, says: :func:`dynamics.gpumeasure.gpu_line`).
    Nothing estimated is said here."""
    from . import CHAPTERS
    from .runtime import duration

    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; choose one of {', '.join(CHAPTERS)}")
    mine = [r for r in rows if r["chapter"] == chapter]
    measured: dict[tuple, list[str]] = {}  # (machine, date) -> "about N s in the P profile"
    for profile in ("smoke", "cpu", "gpu"):
        for r in mine:
            if (r["profile"], r["how"]) == (profile, "measured"):
                measured.setdefault((r["on"], r["date"]), []).append(
                    f"{duration(r['seconds'])} in the {profile} profile")
    parts = [f"{_and(texts)} (measured {on}, {date})" for (on, date), texts in measured.items()]
    if not parts:
        raise ValueError(f"{live_cost_path()} has no row for {chapter!r}: write them with "
                         f"`{LIVE_COST_COMMANDS[('measured', 'cpu')]}`")
    if not any(r["profile"] == "gpu" and r["how"] == "measured" for r in mine):
        # what a GPU measured of the whole notebook in the measuring sessions
        from .gpumeasure import gpu_line

        parts.append(gpu_line(chapter, gpu_sessions))
    return f"Running this page's code cells takes {'; '.join(parts)}."


def live_cost(chapter: str) -> None:
    """Print one line: how long this chapter's code cells take to run in the smoke and cpu
    profiles (measured: the whole notebook in a fresh kernel) and in the gpu profile (what a
    GPU measured, once one has), read from
    ``data/live_cost.csv`` (:func:`live_cost_line`). A chapter's one cell:
    ``dynamics.book.live_cost("grokking")``."""
    print(live_cost_line(chapter, read_live_cost()))


def main(argv=None) -> int:
    """``python -m dynamics.book build [chapter ...] [--profile P] [--dest DIR] [--shots]
    [--width W]``: build the book (or some chapters) in a copy and, with ``--shots``, check
    each chapter page as a reader sees it in a window W px wide (:func:`inspect_pages`; under
    500 px a phone, touched with a finger), print its problems and save a screenshot of its
    first screen under ``DIR/shots``.
    ``python -m dynamics.book colab-cells``: rewrite the first cell of every chapter from
    :func:`colab_cell`."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dynamics.book", description=main.__doc__)
    parser.add_argument("command", choices=["build", "colab-cells"])
    parser.add_argument("chapters", nargs="*", help="chapter notebook names (default: all)")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--dest", default="_build/preview")
    parser.add_argument("--shots", action="store_true")
    parser.add_argument("--width", type=int, default=1280,
                        help="window width (px) of the screenshots and checks; under 500: a phone "
                             "(844 px high, a touch screen), e.g. 390")
    parser.add_argument("--loose", action="store_true", help="do not treat warnings as errors")
    args = parser.parse_args(argv)
    if args.command == "colab-cells":
        changed = write_colab_cells()
        for path in changed:
            print(f"rewrote the Colab cell of {path}")
        print(f"{len(changed)} notebook(s) changed")
        return 0
    html = build(Path(args.dest).resolve() / "book", args.chapters or None, args.profile,
                 strict=not args.loose)
    print(f"built: {html}")
    if args.shots:
        for shot in screenshots(html, Path(args.dest).resolve() / "shots", args.chapters or None,
                                width=args.width):
            print(f"screenshot: {shot}")
    return 0


def stamp(commit: str | None = None, date: str | None = None) -> str:
    """What every page's footer says of the book: its version, the commit it was built from
    (when git can say) and the day of the build, e.g. "Training Dynamics 0.1.0 (a1ebb32),
    built 2026-11-26"."""
    import datetime as _dt
    import subprocess

    from . import __version__
    from .results import ROOT

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
    app.add_js_file("plotly.min.js", priority=200)
    app.add_js_file("dynamics.js", priority=210)
    app.add_css_file("dynamics.css")
    from . import __version__  # the one home of the version (pyproject.toml reads it too)

    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    raise SystemExit(main())
