"""The library's shape: small modules, and one template for every theme package (README,
"Layout"). Reads the files as text and imports the theme packages; trains nothing."""
import ast
import importlib
from pathlib import Path

import pytest

from dynamics import CHAPTERS

LIB = Path(__file__).resolve().parents[1] / "lib" / "dynamics"
THEMES = sorted(set(CHAPTERS.values()))
MODULES = ("science", "experiments", "figures", "views")
MOST_LINES = 600

# every theme's __init__.py after its docstring, to the letter
TEMPLATE = """\
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
"""


def test_no_library_file_is_over_600_lines():
    long = {str(p.relative_to(LIB)): n for p in sorted(LIB.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MOST_LINES}
    assert not long, f"split these along a seam of their own (at most {MOST_LINES} lines): {long}"


def test_the_line_rule_sees_a_long_file(tmp_path):
    """The rule above counts lines as the files have them (a guard against a rule that
    cannot fail: a 601-line file is over it)."""
    path = tmp_path / "long.py"
    path.write_text("x = 1\n" * (MOST_LINES + 1))
    assert len(path.read_text().splitlines()) > MOST_LINES


def _split(text: str) -> tuple[str, str]:
    """A module's docstring and the source after it."""
    tree = ast.parse(text)
    first = tree.body[0]
    assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant), "no docstring"
    rest = "".join(text.splitlines(keepends=True)[first.end_lineno:])
    return first.value.value, rest


@pytest.mark.parametrize("theme", THEMES)
def test_theme_init_follows_the_template(theme):
    doc, rest = _split((LIB / theme / "__init__.py").read_text())
    assert rest == TEMPLATE, f"{theme}/__init__.py departs from the template after its docstring"
    # the docstring: what the chapter shows (a paragraph at least), then the four modules
    assert "Modules:" in doc and len(doc.split("Modules:")[0].split()) >= 30
    for module in MODULES:
        assert f":mod:`.{module}`" in doc.split("Modules:")[1], f"{theme}: {module} not described"


@pytest.mark.parametrize("theme", THEMES)
def test_theme_modules_export_what_they_define(theme):
    """Each of the four modules lists its public names in ``__all__`` (names it defines, none
    twice in a theme), and the package exports exactly their union."""
    package = importlib.import_module(f"dynamics.{theme}")
    seen = {}
    for name in MODULES:
        module = importlib.import_module(f"dynamics.{theme}.{name}")
        names = module.__all__
        assert len(set(names)) == len(names), f"{theme}.{name}: a name listed twice"
        missing = [n for n in names if not hasattr(module, n)]
        assert not missing, f"{theme}.{name}.__all__ names what it lacks: {missing}"
        twice = {n: seen[n] for n in names if n in seen}
        assert not twice, f"{theme}.{name} exports names {sorted(twice)} also exported by {twice}"
        seen.update(dict.fromkeys(names, name))
    assert list(package.__all__) == list(seen)
    assert all(getattr(package, n) is getattr(importlib.import_module(
        f"dynamics.{theme}.{m}"), n) for n, m in seen.items())


@pytest.mark.parametrize("theme", THEMES)
def test_views_reexport_the_figures(theme):
    """``from dynamics.<theme>.views import X`` keeps working for the figures that moved to
    :mod:`.figures`."""
    views = importlib.import_module(f"dynamics.{theme}.views")
    figures = importlib.import_module(f"dynamics.{theme}.figures")
    assert all(getattr(views, n) is getattr(figures, n) for n in figures.__all__)


def test_a_departure_from_the_template_is_seen():
    text = '"""A chapter.\n\nModules:\n"""\nfrom .science import *\n'
    assert _split(text)[1] != TEMPLATE


def test_the_version_has_one_home():
    """``dynamics.__version__`` is the one place the version is written: pyproject.toml reads
    it, and no other library file spells a version number of its own."""
    import re

    root = LIB.parents[1]
    assert 'version = {attr = "dynamics.__version__"}' in (root / "pyproject.toml").read_text()
    spelled = re.compile(r"""version["']?\s*[:=]\s*["']\d""")
    others = [str(p.relative_to(LIB)) for p in sorted(LIB.rglob("*.py"))
              if p != LIB / "__init__.py" and spelled.search(p.read_text())]
    assert not others, f"a version written outside dynamics/__init__.py: {others}"
    assert spelled.search('    return {"version": "0.1", "parallel_read_safe": True}')
