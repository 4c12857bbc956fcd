"""Experiment settings that describe themselves.

Each experiment's settings are one dataclass. Every field is declared with :func:`param`,
which carries its default, a one-line description, a valid range, and per-profile
presets. The same declaration drives three things, so nothing has to be kept in sync:

- the profile presets: ``MyConfig.for_profile("smoke")``;
- the widget panel's controls: ``widgets.controls_for(MyConfig, ["lr", "wd"])``;
- the provenance written next to precomputed results: ``config.to_dict()``.

Example::

    @dataclass
    class GrokConfig(Config):
        p: int = param(97, "the modulus", low=3, high=211, smoke=59, gpu=113)
        lr: float = param(3e-3, "AdamW learning rate", low=1e-5, high=1.0, log=True)

Validation (``__post_init__``) turns bad values into a ``ValueError`` that names the field,
its value and the allowed range, before anything reaches torch. A field declared ``int`` takes
integers only (``p=97.0`` or ``steps=1.5`` is refused, not truncated), ``float`` any real
number, ``bool`` True/False, ``str`` text; numpy scalars count as the Python type they stand for.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .runtime import get_profile


def param(
    default: Any,
    help: str = "",
    *,
    low: float | None = None,
    high: float | None = None,
    choices: tuple | list | None = None,
    log: bool = False,
    step: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    smoke: Any = dataclasses.MISSING,
    cpu: Any = dataclasses.MISSING,
    gpu: Any = dataclasses.MISSING,
):
    """A config field: default, description, range (``low``/``high``, inclusive unless
    ``*_open``), ``choices``, ``log`` (a log-scale slider), and profile presets."""
    presets = {
        name: value
        for name, value in (("smoke", smoke), ("cpu", cpu), ("gpu", gpu))
        if value is not dataclasses.MISSING
    }
    meta = dict(help=help, low=low, high=high, choices=tuple(choices) if choices else None,
                log=log, step=step, low_open=low_open, high_open=high_open, presets=presets)
    if isinstance(default, (list, dict, set)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


_KINDS = {"int": int, "float": float, "bool": bool, "str": str}


def declared_type(f) -> type | None:
    """The plain type a field is declared with (int, float, bool or str), else None.
    Annotations are strings under ``from __future__ import annotations``."""
    t = f.type
    if isinstance(t, str):
        return _KINDS.get(t.strip())
    return t if t in (int, float, bool, str) else None


def _typed(name: str, kind: type | None, value):
    """``value`` checked against the field's declared type, numpy scalars made plain."""
    if kind is None:
        return value
    if kind is bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise ValueError(f"{name} must be True or False, got {value!r}")
    if kind is int:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            hint = " (an integer field: write it without a decimal point)" \
                if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) else ""
            raise ValueError(f"{name} must be an integer, got {value!r}{hint}")
        return int(value)
    if kind is float:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a number, got {value!r}")
        return float(value) if isinstance(value, np.generic) else value
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text (a str), got {value!r}")
    return value


@dataclass
class Config:
    """Base class of every experiment config: validation, presets, dict round-trip."""

    def __post_init__(self):
        for f in fields(self):
            name = f"{type(self).__name__}.{f.name}"
            value = _typed(name, declared_type(f), getattr(self, f.name))
            object.__setattr__(self, f.name, value)  # numpy scalars become plain numbers
            self._check(f, value)

    def _check(self, f, value):
        meta = f.metadata
        if not meta:
            return
        name = f"{type(self).__name__}.{f.name}"
        if meta.get("choices") is not None and value not in meta["choices"]:
            raise ValueError(f"{name} must be one of {list(meta['choices'])}, got {value!r}")
        if meta.get("low") is None and meta.get("high") is None:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        lo, hi = meta.get("low"), meta.get("high")
        bad_lo = lo is not None and (value <= lo if meta.get("low_open") else value < lo)
        bad_hi = hi is not None and (value >= hi if meta.get("high_open") else value > hi)
        if bad_lo or bad_hi:
            lb = "(" if meta.get("low_open") else "["
            rb = ")" if meta.get("high_open") else "]"
            rng = f"{lb}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{rb}"
            raise ValueError(f"{name} must lie in {rng}, got {value!r}")

    @classmethod
    def for_profile(cls, profile: str | None = None, **overrides):
        """The config at a profile's scale, with ``overrides`` on top."""
        profile = get_profile(profile)
        order = {"smoke": ["smoke"], "cpu": ["cpu"], "gpu": ["gpu", "cpu"]}[profile]
        values = {}
        for f in fields(cls):
            presets = f.metadata.get("presets", {}) if f.metadata else {}
            for name in order:
                if name in presets:
                    values[f.name] = presets[name]
                    break
        unknown = set(overrides) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"{cls.__name__} has no field(s) {sorted(unknown)}")
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes):
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def _repr_html_(self) -> str:
        """In a notebook, a config shows as a table of its settings and what each means
        (a one-line repr would run off the page)."""
        from .plots import table

        rows = [dict(setting=f.name, value=repr(getattr(self, f.name)) if isinstance(
                     getattr(self, f.name), str) else getattr(self, f.name),
                     meaning=f.metadata.get("help", "")) for f in fields(self)]
        return f"<b>{type(self).__name__}</b>" + table(rows, digits=4).data

    @classmethod
    def describe(cls) -> str:
        """A table of the fields: name, default, description (for docs and notebooks)."""
        rows = [f"{f.name:>16} = {f.default!r:<10} {f.metadata.get('help', '')}"
                for f in fields(cls) if f.metadata]
        return "\n".join(rows)
