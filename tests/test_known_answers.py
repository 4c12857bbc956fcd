"""Every measure a chapter computes has a test on a known answer (tests/known.py).

For each theme, every public function defined in its measure modules (all but experiments,
figures, panels, claims and facts) must be named by a ``@known_answer`` test under
``tests/<theme>/`` or listed, with its reason, in that theme's ``NOT_MEASURES``
(``tests/<theme>/known_answers.py``). A new measure without a known-answer test fails here.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
from pathlib import Path

import pytest

import known
from dynamics import CHAPTERS

TESTS = Path(__file__).resolve().parent
NOT_MEASURE_MODULES = {"__init__", "experiments", "figures", "panels", "claims", "facts"}
THEMES = sorted(set(CHAPTERS.values()))


def measure_modules(theme: str) -> list:
    package = importlib.import_module(f"dynamics.{theme}")
    return [importlib.import_module(f"dynamics.{theme}.{info.name}")
            for info in pkgutil.iter_modules(package.__path__)
            if info.name not in NOT_MEASURE_MODULES]


def public_functions(module) -> dict[str, object]:
    return {known.qualified(fn): fn for name, fn in vars(module).items()
            if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == module.__name__}


def load_tests(theme: str) -> dict:
    """Import the theme's test modules (their decorators fill known.REGISTRY) and its
    NOT_MEASURES."""
    folder = TESTS / theme
    not_measures = {}
    for path in sorted(folder.glob("*.py")):
        if path.name == "conftest.py":
            continue
        name = f"_known_{theme}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if path.name == "known_answers.py":
            not_measures = {known.qualified(fn): why for fn, why in module.NOT_MEASURES.items()}
    return not_measures


@pytest.mark.parametrize("theme", THEMES)
def test_every_measure_has_a_known_answer(theme):
    not_measures = load_tests(theme)
    for fn, why in not_measures.items():
        assert len(str(why).split()) >= 3, f"{fn}: NOT_MEASURES needs a reason, not {why!r}"
    functions = {}
    for module in measure_modules(theme):
        functions.update(public_functions(module))
    missing = sorted(set(functions) - set(known.REGISTRY) - set(not_measures))
    assert not missing, (
        f"{theme}: {len(missing)} measure(s) with no known-answer test (tests/known.py) and not in "
        f"tests/{theme}/known_answers.py NOT_MEASURES: " + ", ".join(missing))
    both = sorted(set(known.REGISTRY) & set(not_measures))
    assert not both, f"{theme}: listed as not a measure but tested as one: {both}"


def test_the_registry_can_fail():
    """A measure nobody tests is found: the check above on a module with one untested function."""
    import types

    module = types.ModuleType("dynamics_fake_theme.science")

    def untested_measure(x):
        return x

    untested_measure.__module__ = module.__name__
    untested_measure.__qualname__ = "untested_measure"  # as a module-level function has it
    module.untested_measure = untested_measure
    assert set(public_functions(module)) - set(known.REGISTRY) == {
        "dynamics_fake_theme.science.untested_measure"}
    with pytest.raises(ValueError, match="say how"):
        known.known_answer(untested_measure, how="")
