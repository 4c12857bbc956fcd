"""Configs check their own values: the declared type, the range, the choices (issue 13)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dynamics.config import Config, param


@dataclass
class Grok(Config):
    p: int = param(97, "the modulus", low=3, high=211, smoke=59)
    steps: int = param(1000, "training steps", low=1, high=10**6)
    lr: float = param(1e-3, "learning rate", low=0.0, high=1.0, low_open=True)
    frac: float = param(0.3, "training fraction", low=0.0, high=1.0)
    bias: bool = param(True, "use biases")
    act: str = param("relu", "activation", choices=("relu", "tanh"))
    note: str = param("", "free text")
    width: int = 16  # a plain field, no metadata: typed all the same


@pytest.mark.parametrize("bad,match", [
    (dict(p=97.0), r"Grok.p must be an integer, got 97.0 \(an integer field"),
    (dict(steps=1.5), r"Grok.steps must be an integer, got 1.5"),
    (dict(steps="10"), r"Grok.steps must be an integer, got '10'"),
    (dict(p=True), r"Grok.p must be an integer, got True"),
    (dict(width=8.0), r"Grok.width must be an integer, got 8.0"),
    (dict(lr="0.1"), r"Grok.lr must be a number, got '0.1'"),
    (dict(bias=1), r"Grok.bias must be True or False, got 1"),
    (dict(note=3), r"Grok.note must be text"),
    (dict(p=2), r"Grok.p must lie in \[3, 211\], got 2"),
    (dict(lr=0.0), r"Grok.lr must lie in \(0.0, 1.0\]"),
    (dict(act="gelu"), r"Grok.act must be one of \['relu', 'tanh'\]"),
])
def test_bad_values_name_the_field_and_what_it_takes(bad, match):
    with pytest.raises(ValueError, match=match):
        Grok(**bad)


def test_numbers_of_the_right_kind_are_accepted_and_made_plain():
    g = Grok(p=np.int64(101), steps=np.int32(7), lr=np.float32(0.5), frac=1, bias=np.bool_(False))
    assert g.p == 101 and type(g.p) is int and type(g.steps) is int
    assert type(g.lr) is float and g.frac == 1 and g.bias is False
    assert g.to_dict()["p"] == 101


def test_presets_and_replace_are_checked_too():
    assert Grok.for_profile("smoke").p == 59
    with pytest.raises(ValueError, match="Grok.p must be an integer"):
        Grok.for_profile("smoke", p=59.0)
    with pytest.raises(ValueError, match="Grok.steps must be an integer"):
        Grok().replace(steps=2.5)


def test_int_fields_get_integer_sliders():
    from dynamics import widgets

    lr, p, frac = widgets.controls_for(Grok, ["lr", "p", "frac"])
    assert p.integer and not lr.integer and not frac.integer


def test_types_declared_as_classes_are_checked_too():
    """Without ``from __future__ import annotations`` a field's type is the class itself."""
    from dataclasses import make_dataclass

    T = make_dataclass("T", [("n", int, param(3, "n", low=1, high=9)), ("x", float, param(0.5, "x"))],
                       bases=(Config,))
    assert T(n=4).n == 4
    with pytest.raises(ValueError, match="T.n must be an integer, got 3.0"):
        T(n=3.0)
    with pytest.raises(ValueError, match="T.x must be a number"):
        T(x=None)
