"""Known answers: every quantity a chapter computes is tested on an input whose answer is
known independently of the code (a closed form, a constructed case, the null model) before
any page draws a conclusion from it.

A test names the functions it checks that way, and how it knows the answer::

    from known import known_answer

    @known_answer(science.tail_exponent,
                  how="a Gaussian matrix (Marchenko-Pastur, no power-law tail) is not called "
                      "heavy-tailed; a synthetic Pareto tail's alpha is recovered")
    def test_tail_exponent_on_known_spectra(): ...

``tests/test_known_answers.py`` fails on any public function of a theme's measure modules
(every module of a theme but ``experiments``, ``figures``, ``panels``, ``claims`` and
``facts``) that no test names and that the theme's ``NOT_MEASURES`` (in
``tests/<theme>/known_answers.py``) does not list with its reason (an update rule, a data
set, a config helper: something that computes no quantity the page reports).
"""
from __future__ import annotations

from typing import Callable

# "module.qualname" -> ["tests/<theme>/test_x.py::test_name: how the answer is known", ...]
REGISTRY: dict[str, list[str]] = {}


def qualified(fn: Callable) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def known_answer(*functions: Callable, how: str):
    """Register the decorated test as checking ``functions`` on an input whose answer is
    known independently of the code; ``how`` says what that answer is and why it is known."""
    if not functions:
        raise ValueError("known_answer: name at least one function the test checks")
    if not how or len(how.split()) < 4:
        raise ValueError("known_answer: say how the answer is known (how=..., a sentence)")
    for fn in functions:
        if not callable(fn):
            raise ValueError(f"known_answer: {fn!r} is not a function")

    def mark(test):
        where = f"{getattr(test, '__module__', '?')}::{test.__name__}"
        for fn in functions:
            REGISTRY.setdefault(qualified(fn), []).append(f"{where}: {how}")
        return test

    return mark
