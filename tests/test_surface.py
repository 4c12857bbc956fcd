"""Each theme's public surface is what its chapters use, and small (issue 29, item 4).

A theme package exports, in a curated ``__all__``, the names its notebook and the other
notebooks call (``G.run``, ``G.training_figure``, ``from dynamics.grokking import X``): no
name nobody calls, no name a notebook reaches for that is not exported. The one exception is
the source the page prints: ``show_source(G.science.phase_of)`` names a function by its
module, since the page shows it rather than calls it. Reads the notebooks as text; trains
nothing."""
import importlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from dynamics import CHAPTERS

ROOT = Path(__file__).resolve().parents[1]
THEMES = sorted(set(CHAPTERS.values()))
MOST_NAMES = 30  # "roughly 15-30 names" (issue 29)


def _code(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


NOTEBOOKS = {p.stem: _code(p) for p in sorted((ROOT / "chapters").glob("*.ipynb"))}


def _shown(code: str) -> str:
    """The text of every ``show_source(...)`` call (arguments only, one level of parentheses)."""
    return "\n".join(re.findall(r"show_source\(((?:[^()]|\([^()]*\))*)\)", code))


def uses(theme: str, code: str) -> tuple[set, set]:
    """The names ``code`` takes from ``dynamics.<theme>``: (called or read, only shown)."""
    names = set()
    # a parenthesized list may span lines; a bare one ends with its line
    for group in re.findall(rf"from dynamics\.{theme} import (?:\(([\w\s,]+)\)|([\w \t,]+))",
                            code):
        names |= set(re.findall(r"\w+", " ".join(group)))
    shown = set()
    for alias in re.findall(rf"from dynamics import {theme} as (\w+)", code) + re.findall(
            rf"import dynamics\.{theme} as (\w+)", code):
        everywhere = set(re.findall(rf"\b{alias}\.(\w+(?:\.\w+)?)", code))
        in_source = set(re.findall(rf"\b{alias}\.(\w+(?:\.\w+)?)", _shown(code)))
        for name in everywhere:
            head = name.split(".")[0]
            is_module = importlib.util.find_spec(f"dynamics.{theme}.{head}") is not None
            if is_module:
                assert name in in_source, (
                    f"a notebook reaches into {theme}.{name} outside show_source: export it")
                shown.add(name)
            else:
                names.add(head)
    return names, shown


@pytest.mark.parametrize("theme", THEMES)
def test_a_theme_exports_what_its_chapters_use_and_no_more(theme):
    package = importlib.import_module(f"dynamics.{theme}")
    exported = set(package.__all__)
    assert len(exported) == len(package.__all__), f"{theme}.__all__ lists a name twice"
    used, shown = set(), set()
    for code in NOTEBOOKS.values():
        u, s = uses(theme, code)
        used |= u
        shown |= s
    missing = sorted(used - exported)
    assert not missing, f"the notebooks use {theme}.{missing}, which {theme}.__all__ lacks"
    unused = sorted(exported - used)
    assert not unused, f"{theme}.__all__ exports {unused}, which no notebook uses"
    assert len(exported) <= MOST_NAMES, (
        f"{theme} exports {len(exported)} names (at most {MOST_NAMES}): give the notebook "
        f"fewer, larger entry points")
    for name in shown:  # what the page prints exists where it says
        module, attr = name.split(".")
        assert hasattr(importlib.import_module(f"dynamics.{theme}.{module}"), attr), name


def test_the_surface_rule_sees_a_missing_and_an_unused_name():
    """The reader of notebook text above finds both kinds of drift (the rule can fail)."""
    code = ("from dynamics import grokking as G\nG.run(cfg)\nG.missing_name()\n"
            "show_source(G.science.phase_of)\n")
    used, shown = uses("grokking", code)
    assert used == {"run", "missing_name"} and shown == {"science.phase_of"}
    with pytest.raises(AssertionError, match="outside show_source"):
        uses("grokking", "from dynamics import grokking as G\nG.science.phase_of(1)\n")
    assert uses("grokking", "from dynamics.grokking import claim_seeds, plateau_steps\n")[0] == {
        "claim_seeds", "plateau_steps"}
    assert uses("grokking", "from dynamics.grokking import claim_seeds\n\nrt = setup()\n")[0] == {
        "claim_seeds"}  # the next line's first word is not an import
