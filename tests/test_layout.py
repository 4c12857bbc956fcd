"""The library's shape: small modules, and one template for every theme package (README,
"Layout"). Reads the files as text and imports the theme packages; trains nothing."""
import ast
import importlib
from pathlib import Path

import pytest

from dynamics import CHAPTERS

LIB = Path(__file__).resolve().parents[1] / "lib" / "dynamics"
THEMES = sorted(set(CHAPTERS.values()))
MODULES = ("science", "experiments", "figures", "panels", "claims")
MOST_LINES = 600


def init_departures(text: str) -> list[str]:
    """How a theme's ``__init__.py`` departs from the template: after its docstring, only
    ``from . import <modules>``, ``from .<module> import <names>`` (no ``*``) and one
    ``__all__`` listing exactly the names so imported, in that order."""
    tree = ast.parse(text)
    wrong, imported, listed = [], [], None
    for node in tree.body[1:]:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [a.asname or a.name for a in node.names]
            if "*" in names:
                wrong.append(f"from .{node.module} import *")
            elif node.module is not None:
                imported += names
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and getattr(node.targets[0], "id", None) == "__all__"
              and isinstance(node.value, ast.List)):
            listed = [getattr(e, "value", None) for e in node.value.elts]
        else:
            wrong.append(ast.unparse(node)[:60])
    if listed is None:
        wrong.append("no literal __all__ list")
    elif listed != imported:
        wrong.append(f"__all__ is not the names imported, in order: {sorted(set(listed) ^ set(imported))}")
    return wrong


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
    text = (LIB / theme / "__init__.py").read_text()
    doc, _ = _split(text)
    assert not init_departures(text), f"{theme}/__init__.py: {init_departures(text)}"
    # the docstring: what the chapter shows (a paragraph at least), then the five modules
    assert "Modules:" in doc and len(doc.split("Modules:")[0].split()) >= 30
    for module in MODULES:
        assert f":mod:`.{module}`" in doc.split("Modules:")[1], f"{theme}: {module} not described"
    assert not (LIB / theme / "views.py").exists(), f"{theme}: panels and claims live apart"


@pytest.mark.parametrize("theme", THEMES)
def test_theme_modules_export_what_they_define(theme):
    """Each of the five modules lists its public names in ``__all__`` (names it has, none
    twice in a theme); the package exports a curated few of them (tests/test_surface.py)."""
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
    assert all(hasattr(package, n) for n in package.__all__)
    claims = importlib.import_module(f"dynamics.{theme}.claims")
    assert {"page_claims", "published_claims"} <= set(claims.__all__), (
        f"{theme}.claims: the page's table is page_claims(...), the published one "
        f"published_claims(), in every theme")


def test_a_departure_from_the_template_is_seen():
    assert init_departures('"""A chapter."""\nfrom .science import *\n__all__ = []\n')
    assert init_departures('"""A chapter."""\nfrom .science import run\n__all__ = ["go"]\n')
    assert init_departures('"""A chapter."""\nfrom .science import run\nx = 1\n__all__ = ["run"]\n')
    assert not init_departures('"""A chapter."""\nfrom . import science\n'
                               'from .science import run\n__all__ = ["run"]\n')


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
