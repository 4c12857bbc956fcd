"""The page scripts and styles are real files in lib/dynamics_toolchain/static/: declared as package data, and
assembled into the served dynamics.js and dynamics.css with the values Python computes in one
prelude. (That the served files behave as before is the browser tests' part: test_darkmode,
test_access, test_viewlink, test_printed and test_book's page checks.)"""
import json
import re
import tomllib
from pathlib import Path, PurePosixPath

import pytest

from dynamics.plots import NARROW_BELOW, PALETTE

from dynamics_toolchain import darkmode, scripts

ROOT = Path(__file__).resolve().parents[2]
STATIC = scripts.STATIC


def test_every_file_the_toolchain_reads_is_package_data():
    """Every script and style in static/ matches pyproject's package-data for the toolchain
    (an installed toolchain has what book_js, book_css and evaluate read)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["dynamics_toolchain"]
    files = sorted(STATIC.glob("*.js")) + sorted(STATIC.glob("evaluate/*.js")) + sorted(STATIC.glob("*.css"))
    missing = [str(f.relative_to(STATIC)) for f in files
               if not any(PurePosixPath(f.relative_to(STATIC.parent).as_posix()).match(g) for g in declared)]
    assert not missing, f"not in [tool.setuptools.package-data] dynamics_toolchain: {missing}"


def test_dynamics_js_is_the_prelude_then_the_scripts():
    """The values computed in Python reach the scripts in one prelude
    (window.dynamicsConfig), not by replacing text inside them: no script holds the narrow
    width or a palette colour, and dynamics.js is the prelude, then each script as it is."""
    comment, line, rest = scripts.book_js().split("\n", 2)
    assert comment.startswith("/*") and comment.endswith("*/")
    m = re.fullmatch(r"window\.dynamicsConfig = (\{.*\});", line)
    assert m, line
    cfg = json.loads(m.group(1))
    assert cfg == scripts.config()
    assert cfg["narrow"] == NARROW_BELOW
    assert cfg["palette"] == [c.lower() for c in PALETTE] and cfg["darkPalette"] == darkmode.DARK_PALETTE
    assert rest == "".join(scripts.static(n) for n in scripts.SERVED_JS)
    for name in scripts.SERVED_JS:
        text = scripts.static(name)
        assert not re.search(r"__[A-Z_]+__", text), f"{name} holds a placeholder"
        held = [c for c in cfg["palette"] + cfg["darkPalette"] + [cfg["darkBackground"]] if c in text.lower()]
        assert not held, f"{name} holds {held}: Python's values come in window.dynamicsConfig"
        assert not re.search(rf"\b{NARROW_BELOW}\b", text), f"{name} holds the narrow width"


def test_dynamics_css_is_the_book_style_then_the_print_style():
    css = scripts.book_css()
    assert css == scripts.static("book.css") + scripts.static("print.css")
    assert "@media print" in scripts.static("print.css") and "@media print" not in scripts.static("book.css")


def test_each_page_side_function_is_one_expression():
    """evaluate/*.js hold what Playwright's page.evaluate calls: one function expression each
    (after its comments), which page.evaluate calls with the check's argument."""
    for path in sorted(STATIC.glob("evaluate/*.js")):
        code = "\n".join(line for line in path.read_text().splitlines()
                         if not line.lstrip().startswith(("//", "/*")))
        assert re.match(r"\s*(async\s*)?\([^)]*\)\s*=>\s*\{", code), path.name
        assert scripts.evaluate(path.stem) == path.read_text()
