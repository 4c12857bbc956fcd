"""The house's shape (README, "Layout"): three packages apart (the reader's library, the book's
toolchain, the operations) with imports one way, every setting read in one place, small
modules, and one template for every theme package. Reads the files as text and imports the
theme packages; trains nothing."""
import ast
import importlib
import json
from pathlib import Path

import pytest

from dynamics import CHAPTERS

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "dynamics"
PACKAGES = {"dynamics": "the reader's library", "dynamics_toolchain": "the book's toolchain",
            "dynamics_ops": "the operations"}
THEMES = sorted(set(CHAPTERS.values()))
MODULES = ("science", "experiments", "figures", "panels", "claims")
MOST_LINES = 700  # was 600: the claims modules grew with their controls; they split along seams next (README)


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


def long_files(folder: Path, most: int = MOST_LINES) -> dict[str, int]:
    """The Python files under ``folder`` longer than ``most`` lines, with their lengths."""
    return {str(p.relative_to(folder)): n for p in sorted(folder.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > most}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_file_is_over_600_lines(package):
    long = long_files(ROOT / "lib" / package)
    assert not long, f"split these along a seam of their own (at most {MOST_LINES} lines): {long}"


def test_the_line_rule_sees_a_long_file(tmp_path):
    """The rule itself (``long_files``), not str.splitlines: a 601-line module among short
    ones is named, a 600-line one is not."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "short.py").write_text("x = 1\n" * MOST_LINES)
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (MOST_LINES + 1))
    assert long_files(tmp_path) == {"sub/long.py": MOST_LINES + 1}


# ----------------------------------------------------------------------------- three packages

def imported_packages(source: str) -> set[str]:
    """The top-level packages a Python source imports, anywhere in it (inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_library_imports_neither_the_toolchain_nor_the_operations():
    """The themes and the core import the reader's library only; the toolchain and the
    operations import the library, never the other way."""
    wrong = {str(p.relative_to(ROOT)): sorted(imported_packages(p.read_text()) & {"dynamics_toolchain", "dynamics_ops"})
             for p in sorted(LIB.rglob("*.py"))}
    wrong = {k: v for k, v in wrong.items() if v}
    assert not wrong, f"the reader's library imports the toolchain or the operations: {wrong}"


def notebook_code(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def hidden_tables(cells: list[dict]) -> list[int]:
    """The code cells that build a claims table the page never shows: Jupyter displays a cell's
    last expression only, so a ``claims_table(...)`` followed by another statement (a glue) is
    computed, audited and dropped."""
    hidden = []
    for i, c in enumerate(cells):
        lines = [ln for ln in "".join(c["source"]).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if c["cell_type"] == "code" and any("claims_table(" in ln for ln in lines):
            last = ast.parse("\n".join(lines)).body[-1]
            if not (isinstance(last, ast.Expr) and "claims_table(" in ast.unparse(last)):
                hidden.append(i)
    return hidden


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_a_claims_table_is_its_cells_last_expression(chapter):
    cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
    assert not hidden_tables(cells), (f"{chapter}.ipynb: cells {hidden_tables(cells)} build a claims "
                                      "table and end with another statement, so the page shows none")


def test_the_table_rule_sees_a_hidden_table():
    cell = lambda src: {"cell_type": "code", "source": src}  # noqa: E731
    assert hidden_tables([cell("rows = f()\nplots.claims_table(rows)\nglue(**v)")]) == [0]
    assert hidden_tables([cell("rows = f()\nglue(**v)\nplots.claims_table(rows)\n# shown")]) == []


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_a_notebook_imports_only_the_readers_library(chapter):
    used = imported_packages(notebook_code(ROOT / "chapters" / f"{chapter}.ipynb"))
    assert not used & {"dynamics_toolchain", "dynamics_ops"}, (
        f"{chapter}.ipynb imports {sorted(used & {'dynamics_toolchain', 'dynamics_ops'})}: a reader's "
        "notebook calls the library (dynamics) only")


def test_the_import_rules_see_a_wrong_import():
    assert imported_packages("def f():\n    from dynamics_ops import standin\n") == {"dynamics_ops"}
    assert imported_packages("import dynamics_toolchain.pages as p\nfrom . import x\n") == {"dynamics_toolchain"}
    assert imported_packages("from dynamics import book\n") == {"dynamics"}


def settings_read(source: str) -> list[str]:
    """The ``DYNAMICS_*`` variables a source reads: ``os.environ.get(...)``, ``os.environ[...]``
    (not as an assignment target), ``os.getenv(...)`` and ``switch(...)``. Writing one for a
    child process (``dict(os.environ, DYNAMICS_X=...)``, ``setdefault``) is not reading it."""
    tree = ast.parse(source)
    read = []

    def name_of(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("DYNAMICS_"):
            return node.value
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            f = ast.unparse(node.func)
            if f in ("os.environ.get", "os.getenv", "switch", "runtime.switch", "environ.get") and name_of(node.args[0]):
                read.append(name_of(node.args[0]))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if ast.unparse(node.value) in ("os.environ", "environ") and name_of(node.slice):
                read.append(name_of(node.slice))
    return read


def test_every_setting_is_read_in_runtime():
    """``runtime`` keeps the one settings object: every ``DYNAMICS_*`` variable is read there."""
    elsewhere = {}
    for package in PACKAGES:
        for p in sorted((ROOT / "lib" / package).rglob("*.py")):
            if p == LIB / "runtime.py":
                continue
            if found := settings_read(p.read_text()):
                elsewhere[str(p.relative_to(ROOT))] = found
    assert not elsewhere, f"DYNAMICS_* settings read outside dynamics.runtime: {elsewhere}"


def test_the_settings_rule_sees_a_read():
    assert settings_read('import os\nx = os.environ.get("DYNAMICS_SEED")\n') == ["DYNAMICS_SEED"]
    assert settings_read('x = os.environ["DYNAMICS_AXE"]\n') == ["DYNAMICS_AXE"]
    assert settings_read('on = switch("DYNAMICS_TF32", True)\n') == ["DYNAMICS_TF32"]
    assert settings_read('env = dict(os.environ, DYNAMICS_PROFILE="cpu")\n'
                         'os.environ["DYNAMICS_X"] = "1"\nos.environ.setdefault("DYNAMICS_Y", "0")\n') == []


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


def test_the_core_init_holds_only_the_version_the_registry_and_setup():
    """``dynamics/__init__.py`` is not among the sources a data file's digest covers
    (``results.CORE_SOURCES``), so adding a chapter leaves every file the code's; it may hold
    nothing a number depends on: its docstring, ``__version__``, ``CHAPTERS`` and ``setup``,
    and the one arithmetic setting made on import (``dynamics.arithmetic.flush_denormals``):
    what the arithmetic does to a file's bits its provenance records as its arithmetic, which
    ``dynamics_ops.verify`` compares, not as code in its digest."""
    import ast

    from dynamics import results

    assert "__init__.py" not in results.CORE_SOURCES
    body = ast.parse((LIB / "__init__.py").read_text()).body
    allowed = []
    for node in body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] in (["__version__"], ["CHAPTERS"]):
            assert isinstance(node.value, (ast.Constant, ast.Dict)), ast.dump(node)
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "runtime" and node.level == 1 \
                and [a.name for a in node.names] == ["setup"]:
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "arithmetic" and node.level == 1 \
                and [(a.name, a.asname) for a in node.names] == [("flush_denormals", "_flush")]:
            continue
        if ast.unparse(node) == "_flush()":
            continue
        allowed.append(ast.unparse(node))
    assert not allowed, f"dynamics/__init__.py holds more than its template: {allowed}"
