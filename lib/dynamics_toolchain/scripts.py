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

ESLint (:func:`lint_js`, ``static/eslint.config.mjs``) and stylelint (:func:`lint_css`,
``static/stylelint.config.mjs``), both from npm (``.ci/run`` installs them, pinned:
:data:`ESLINT`, :data:`STYLELINT`), read every one of these files
(``tests/toolchain/test_scripts.py``).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["STATIC", "FIGURES_DRAWN_JS", "SERVED_JS", "SERVED_CSS", "ESLINT", "STYLELINT", "static", "evaluate",
           "config", "book_js", "book_css", "eslint_path", "stylelint_path", "js_files", "css_files",
           "lint_js", "lint_css"]

STATIC = Path(__file__).resolve().with_name("static")
SERVED_JS = ("dark.js", "viewlink.js", "access.js", "figures.js")  # in dynamics.js, in this order
SERVED_CSS = ("book.css", "print.css")                              # in dynamics.css, in this order

# what .ci/run installs from npm (tests/toolchain/test_scripts.py holds them equal)
ESLINT = ("eslint@10.15.0", "@eslint/js@10.0.1", "globals@17.14.0")
STYLELINT = ("stylelint@17.16.0",)


def static(name: str) -> str:
    """The text of ``static/<name>``."""
    return (STATIC / name).read_text(encoding="utf-8")


def evaluate(name: str) -> str:
    """``static/evaluate/<name>.js``: a function expression for Playwright's ``page.evaluate``."""
    return static(f"evaluate/{name}.js")


# every figure of the page drawn (in the theme named by the argument, if any): what a browser
# check waits for instead of a number of seconds
FIGURES_DRAWN_JS = evaluate("figures_drawn")


def config() -> dict:
    """The values the page scripts take from Python (``window.dynamicsConfig``): ``narrow``,
    the width in px under which a figure is drawn in its narrow layout
    (:data:`dynamics.plots.NARROW_BELOW`), and the dark theme's ``palette`` (the house
    palette, lower case), ``darkPalette`` (each lightened) and ``darkBackground``."""
    from dynamics.plots import NARROW_BELOW

    from .darkmode import js_config

    return {"narrow": NARROW_BELOW, **js_config()}


# Every figure of the page drawn, none with a redraw pending (BOOK_JS's data-drawn), and with
# the argument 'dark' or 'light', drawn in that theme's colours: what a check of a page in a
# browser waits for (``page.wait_for_function(FIGURES_DRAWN_JS, arg=...)``), not seconds.
FIGURES_DRAWN_JS = r"""(theme) => [...document.querySelectorAll('.dynamics-figure')].every(gd => {
  const look = gd.getAttribute('data-drawn');
  return !!look && (!theme || look.endsWith(' dark') === (theme === 'dark'));
})"""


def book_js() -> str:
    """The book's ``dynamics.js``: the prelude with :func:`config`, then :data:`SERVED_JS`."""
    prelude = ("/* Training Dynamics: the values the scripts below take from Python "
               "(dynamics_toolchain.scripts.config). */\n"
               f"window.dynamicsConfig = {json.dumps(config())};\n")
    return prelude + "".join(static(name) for name in SERVED_JS)


def book_css() -> str:
    """The book's ``dynamics.css``: :data:`SERVED_CSS`, one after the other."""
    return "".join(static(name) for name in SERVED_CSS)


# ----------------------------------------------------------------------------- the linters

def _npm_tool(setting: str, name: str, packages: tuple[str, ...], entry: str) -> Path:
    """The npm package folder of ``packages[0]``: ``$<setting>`` (that folder), else the cache
    ``.ci/run`` fills (``~/.cache/dynamics-<name>``, filled here once when npm is present)."""
    from dynamics.runtime import folder

    env = folder(setting)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / f"dynamics-{name}"
    package = packages[0].rsplit("@", 1)[0]
    found = Path(env) if env else cache / "node_modules" / package
    install = ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(cache), *packages]
    if not (found / entry).exists() and not env and shutil.which("npm"):
        subprocess.run(install, capture_output=True)
    if not (found / entry).exists():
        raise RuntimeError(f"{package} is not installed ({found / entry} is missing): install Node.js "
                           f"and npm, then `{' '.join(install)}` (.ci/run does), or point {setting} "
                           f"at a folder holding {package}'s package")
    return found


def eslint_path() -> Path:
    """ESLint's package folder (with ``@eslint/js`` and ``globals`` beside it):
    ``$DYNAMICS_ESLINT``, else the cache ``.ci/run`` fills."""
    return _npm_tool("DYNAMICS_ESLINT", "eslint", ESLINT, "bin/eslint.js")


def stylelint_path() -> Path:
    """stylelint's package folder: ``$DYNAMICS_STYLELINT``, else the cache ``.ci/run`` fills."""
    return _npm_tool("DYNAMICS_STYLELINT", "stylelint", STYLELINT, "bin/stylelint.mjs")


def _node() -> str:
    node = shutil.which("node")
    if not node:
        raise RuntimeError("the linters need Node.js (Debian: apt-get install nodejs)")
    return node


def _run(cmd: list[str], text: str | None, env: dict | None = None, report: str = "stdout") -> list[dict]:
    """The linter's JSON report, from its ``report`` stream (stylelint writes it to stderr)."""
    out = subprocess.run(cmd, input=text, capture_output=True, text=True, cwd=STATIC,
                         env=dict(os.environ, **(env or {})), timeout=300)
    try:
        return json.loads(getattr(out, report))
    except json.JSONDecodeError:
        raise RuntimeError(f"{Path(cmd[1]).name} failed (exit {out.returncode}):\n"
                           f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}") from None


def _where(path: str) -> str:
    p = Path(path)
    return str(p.relative_to(STATIC)) if p.is_relative_to(STATIC) else str(p)


def js_files() -> list[Path]:
    """Every script in ``static/``: the served ones and ``evaluate/``'s."""
    return sorted(STATIC.glob("*.js")) + sorted(STATIC.glob("evaluate/*.js"))


def css_files() -> list[Path]:
    return sorted(STATIC.glob("*.css"))


def lint_js(files=None, text: str | None = None, name: str = "constructed.js") -> tuple[list[Path], list[str]]:
    """ESLint over ``files`` (default: :func:`js_files`), or over ``text`` as if it were the
    script ``static/<name>``: (the files it linted, each problem as ``file:line:col rule:
    message``). A warning counts as a problem, and so does a file ESLint would skip."""
    eslint = eslint_path()
    cmd = [_node(), str(eslint / "bin" / "eslint.js"), "--config", str(STATIC / "eslint.config.mjs"),
           "--format", "json"]
    cmd += ["--stdin", "--stdin-filename", str(STATIC / name)] if text is not None else \
        [str(f) for f in (files if files is not None else js_files())]
    results = _run(cmd, text, env={"DYNAMICS_ESLINT": str(eslint)})  # the config finds its packages
    problems = [f"{_where(r['filePath'])}:{m.get('line', 0)}:{m.get('column', 0)} "
                f"{m.get('ruleId') or 'eslint'}: {m['message']}"
                for r in results for m in r["messages"]]
    return [Path(r["filePath"]) for r in results], problems


def lint_css(files=None, text: str | None = None, name: str = "constructed.css") -> tuple[list[Path], list[str]]:
    """stylelint over ``files`` (default: every ``static/*.css``), or over ``text`` as if it
    were ``static/<name>``: (the files it linted, each problem as ``file:line:col rule:
    message``). A syntax error is a problem (rule ``CssSyntaxError``)."""
    stylelint = stylelint_path()
    cmd = [_node(), str(stylelint / "bin" / "stylelint.mjs"), "--config",
           str(STATIC / "stylelint.config.mjs"), "--formatter", "json"]
    cmd += ["--stdin-filename", str(STATIC / name)] if text is not None else \
        [str(f) for f in (files if files is not None else css_files())]
    results = _run(cmd, text, report="stderr")
    problems = [f"{_where(r['source'])}:{w.get('line', 0)}:{w.get('column', 0)} {w['rule']}: {w['text']}"
                for r in results for w in r["warnings"] + r.get("parseErrors", [])]
    problems += [f"{_where(r['source'])}: {d['text']}" for r in results
                 for d in r.get("invalidOptionWarnings", []) + r.get("deprecations", [])]
    return [Path(r["source"]) for r in results], problems
