"""Claims as data: one engine judges every claims row against its control.

A :class:`Claim` states what a paper claims and how this book tests it: the **measure** (a
number read from one seed's run), the **test** (the measure against a threshold named once,
:class:`Test`), the **control** (what the test must fail on: a control run, a null model, a
counterfactual input or the theory's number, measured the same way on the same seed), its
**window** (where on the run the measure looks) and whether the prose **asserts** it. No
caller hands in a verdict: :func:`judge` measures the treatment and the control on every seed,
runs the test on both and says

- **yes**: on every seed the treatment passes and the control fails, and the treatment clears
  the threshold by more than the noise (its seeds' spread, or a noise floor measured in the
  same run: two timings of the same thing);
- **within noise**: it passes on every seed, but by less than the noise (a 1.01x "lead");
- **does not discriminate**: the control passes the test too (on some seed), so passing
  it says nothing about the claim;
- **partly**: the treatment passes on some seeds only (the row says on how many);
- **no**: it fails on every seed.

An asserted row is shown only when it says yes (the strict build refuses the page otherwise,
:func:`dynamics.plots.claims_table`). A row judged on one seed needs a measured noise floor.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .plots.claims import claim as _row
from .plots.claims import spread
from .plots.tables import number

OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


@dataclass(frozen=True)
class Test:
    """``measure <op> threshold``, the threshold named once (``name``: the constant the page
    and the code call it). ``scale="log"`` compares orders of magnitude (ratios, rates, NC1):
    the margin and the noise are then measured in log10 units."""

    op: str
    threshold: float
    name: str
    scale: str = "linear"

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"Test.op must be one of {list(OPS)}, got {self.op!r}")
        if self.scale not in ("linear", "log"):
            raise ValueError(f"Test.scale must be 'linear' or 'log', got {self.scale!r}")
        if not isinstance(self.threshold, (int, float)) or not math.isfinite(self.threshold):
            raise ValueError(f"Test {self.name}: the threshold must be a finite number, got {self.threshold!r}")
        if self.scale == "log" and self.threshold <= 0:
            raise ValueError(f"Test {self.name}: a log-scale threshold must be positive, got {self.threshold}")

    def passes(self, value) -> bool:
        return _finite(value) and OPS[self.op](float(value), self.threshold)

    def _at(self, value: float) -> float:
        return math.log10(value) if self.scale == "log" else value

    def margin(self, value) -> float:
        """How far ``value`` clears the threshold in the test's direction (negative: it fails),
        in the test's scale."""
        if not _finite(value) or (self.scale == "log" and value <= 0):
            return -math.inf
        d = self._at(float(value)) - self._at(self.threshold)
        return d if self.op in (">", ">=") else -d

    def spread(self, values: Sequence[float]) -> float:
        """The seeds' spread (max - min) in the test's scale."""
        vals = [self._at(float(v)) for v in values if _finite(v) and (self.scale == "linear" or v > 0)]
        return max(vals) - min(vals) if len(vals) > 1 else 0.0

    def __str__(self) -> str:
        return f"{self.op} {number(self.threshold, 3)} ({self.name})"


def _finite(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Claim:
    """One row: ``statement`` (what the paper claims, as the page says it), ``paper`` (the
    citation key or author-year), ``measure(run) -> float`` (the treatment's number on one
    seed's run), ``test``, ``control`` (in words) and ``control_measure(run) -> float`` (the
    same quantity on that seed's control; default ``measure``), ``window``, ``asserted``,
    ``fmt`` (how a value prints) and ``noise(run) -> float`` (a noise floor measured in the
    run itself, in the test's scale: needed when a row is judged on one seed)."""

    statement: str
    paper: str
    measure: Callable[[Any], float]
    test: Test
    control: str
    window: str
    control_measure: Callable[[Any], float] | None = None
    asserted: bool = True
    fmt: Callable[[float], str] | None = None
    noise: Callable[[Any], float] | None = None
    settings: Sequence[str] = field(default=())

    def __post_init__(self):
        for name in ("statement", "paper", "control", "window"):
            if not str(getattr(self, name) or "").strip():
                raise ValueError(f"a claim needs its {name} (claim: {self.statement!r})")


VERDICTS = ("yes", "within noise", "does not discriminate", "partly", "no")


@dataclass
class Judged:
    """What :func:`judge` found: per seed the treatment's and the control's values, and the
    verdict with its reason."""

    claim: Claim
    treatment: dict
    control: dict
    verdict: str
    reason: str
    noise: float

    def row(self) -> dict:
        """The claims-table row (:func:`dynamics.plots.claim`), both measurements printed."""
        c = self.claim
        fmt = c.fmt or (lambda v: number(v, 3))
        measured = f"{spread(self.treatment, fmt)}; test {c.test}"
        if self.reason:
            measured += f"; {self.reason}"
        return _row(c.statement, c.paper, measured, self.verdict, c.asserted,
                    control=f"{c.control}: {spread(self.control, fmt)}", window=c.window,
                    seeds=sorted(self.treatment))


def judge(claim: Claim, treatment: Mapping[int, Any], control: Mapping[int, Any]) -> Judged:
    """Measure ``claim`` on each seed's treatment run and control (``{seed: run}``, the same
    seeds), run its test on both, and give the verdict (see the module)."""
    if not treatment:
        raise ValueError(f"{claim.statement!r}: judge() needs at least one seed's run")
    if set(treatment) != set(control):
        raise ValueError(f"{claim.statement!r}: the treatment's seeds {sorted(treatment)} and the "
                         f"control's {sorted(control)} differ")
    cm = claim.control_measure or claim.measure
    t = {s: claim.measure(run) for s, run in sorted(treatment.items())}
    c = {s: cm(run) for s, run in sorted(control.items())}
    test = claim.test
    passed = {s: test.passes(v) for s, v in t.items()}
    fooled = {s for s, v in c.items() if test.passes(v)}
    n, good = len(t), sum(passed[s] and s not in fooled for s in t)
    if claim.noise is not None:
        noise = max(float(claim.noise(treatment[s])) for s in treatment)
    elif n > 1:
        noise = test.spread(list(t.values()))
    else:
        noise = math.nan  # one seed and no measured noise floor: nothing to beat
    if fooled and any(passed[s] for s in fooled):
        verdict = "does not discriminate"
        reason = f"the control passes the test too on seed {_seeds(fooled)}"
    elif good == n:
        vals = list(t.values())
        mid = sorted(vals)[n // 2] if n % 2 else 0.5 * (sorted(vals)[n // 2 - 1] + sorted(vals)[n // 2])
        margin = test.margin(mid)
        if not math.isfinite(noise) or margin <= noise:
            verdict = "within noise"
            reason = ("one seed and no noise floor measured" if not math.isfinite(noise) else
                      f"clears the threshold by {number(margin, 2)}, not more than the noise "
                      f"{number(noise, 2)}" + (" (log10)" if test.scale == "log" else ""))
        else:
            verdict, reason = "yes", ""
    elif good == 0:
        verdict, reason = "no", ""
    else:
        verdict, reason = "partly", f"holds on {good} of {n} seeds"
    return Judged(claim, t, c, verdict, reason, noise)


def combine(*verdicts: str) -> str:
    """One verdict for a row that checks several things (the book's one rule for it): "no"
    when any part is "no", "yes" when every part is "yes", the weaker verdict where a part
    is "within noise" or "does not discriminate" and the rest hold, else "partly" (each
    part's text says on how many seeds it holds)."""
    if not verdicts:
        raise ValueError("combine() needs at least one verdict")
    unknown = [v for v in verdicts if v not in VERDICTS]
    if unknown:
        raise ValueError(f"combine(): not verdicts: {unknown}; a verdict is one of {list(VERDICTS)}")
    if "no" in verdicts:
        return "no"
    if "partly" in verdicts:
        return "partly"
    return max(verdicts, key=VERDICTS.index)  # yes < within noise < does not discriminate


def _seeds(seeds) -> str:
    return ", ".join(str(s) for s in sorted(seeds))


def rows(judged: Sequence[Judged]) -> list[dict]:
    """The claims-table rows of several judged claims."""
    return [j.row() for j in judged]


__all__ = ["Test", "Claim", "Judged", "judge", "rows", "combine", "VERDICTS"]
