"""The page scripts and styles are real files in lib/dynamics_toolchain/static/: linted
(ESLint, stylelint; from npm, as .ci/run installs them), declared as package data, and
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


def test_eslint_passes_every_page_script():
    linted, problems = scripts.lint_js()
    assert not problems, "ESLint (lib/dynamics_toolchain/static/eslint.config.mjs):\n" + "\n".join(problems)
    assert sorted(linted) == sorted(scripts.js_files())
    names = {str(p.relative_to(STATIC)) for p in linted}
    assert set(scripts.SERVED_JS) <= names and "evaluate/page_report.js" in names


def test_eslint_catches_an_undefined_variable():
    """The linter can fail: a script that reads a name nothing defines (a typo of a variable),
    linted as a file of static/ with the same configuration."""
    linted, problems = scripts.lint_js(text="(function () {\n  'use strict';\n"
                                            "  window.dynamicsX = figurez.length;\n})();\n")
    assert [p.name for p in linted] == ["constructed.js"]
    assert len(problems) == 1 and "no-undef" in problems[0] and "'figurez'" in problems[0], problems


def test_eslint_knows_the_pages_globals_and_keeps_a_script_to_itself():
    """The browser's globals and Plotly are known (a clean script passes); a name a served
    script would leak into the page's global scope is a problem."""
    clean = ("(function () {\n  'use strict';\n  window.dynamicsX = function (id) {\n"
             "    return Plotly.relayout(document.getElementById(id), {}).then(function () {\n"
             "      return [new ResizeObserver(function () {}), innerWidth, location.hash];\n    });\n  };\n})();\n")
    assert scripts.lint_js(text=clean)[1] == []
    leaked = scripts.lint_js(text="var dynamicsCount = 0;\nwindow.dynamicsCount = dynamicsCount;\n")[1]
    assert any("no-implicit-globals" in p for p in leaked), leaked


def test_stylelint_passes_the_styles():
    linted, problems = scripts.lint_css()
    assert not problems, "stylelint (lib/dynamics_toolchain/static/stylelint.config.mjs):\n" + "\n".join(problems)
    assert sorted(linted) == sorted(STATIC / n for n in scripts.SERVED_CSS) == scripts.css_files()


@pytest.mark.parametrize("css, rule", [
    ("a { color: red;\n", "CssSyntaxError"),             # an unclosed block
    ("a { colour: red; }\n", "property-no-unknown"),      # what a browser drops without a word
    ("a { color: #12345; }\n", "color-no-invalid-hex"),
])
def test_stylelint_catches_a_broken_style(css, rule):
    problems = scripts.lint_css(text=css)[1]
    assert problems and all(rule in p for p in problems), problems


def test_a_missing_linter_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setenv("DYNAMICS_ESLINT", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"npm install .*eslint@10\.15\.0"):
        scripts.lint_js()
    monkeypatch.setenv("DYNAMICS_STYLELINT", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"npm install .*stylelint@17\.16\.0"):
        scripts.lint_css()


def test_ci_installs_the_linters_these_tests_run():
    run = (ROOT / ".ci" / "run").read_text()
    for spec in scripts.ESLINT + scripts.STYLELINT:
        assert re.search(rf"npm install [^\n]*{re.escape(spec)}(\s|$)", run), spec
    assert "export DYNAMICS_ESLINT=" in run and "export DYNAMICS_STYLELINT=" in run


def test_every_file_the_toolchain_reads_is_package_data():
    """Every script and style in static/ matches pyproject's package-data for the toolchain
    (an installed toolchain has what book_js, book_css and evaluate read)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["dynamics_toolchain"]
    files = scripts.js_files() + scripts.css_files()
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
