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
- **does not discriminate**: the control passes the test too (on some seed), or misses its
  threshold by no more than the control's own seeds' spread (capped where a far seed widens
  it: :func:`control_miss`), so passing it says nothing about the claim;
- **partly**: the treatment passes on some seeds only (the row says on how many);
- **no**: it fails on every seed.

An asserted row is shown only when it says yes (the strict build refuses the page otherwise,
:func:`dynamics.plots.claims_table`). A row judged on one seed needs a measured noise floor.

An **exact** claim (``exact=True``) measures something no seed enters (an exact expected risk,
a closed form): it is judged and printed once, "v (exact: no seed enters)", its noise the
claim's own ``noise`` (a grid's step, a tolerance) or else 0, and :func:`judge` refuses one whose
"exact" value differs between the runs it is handed.
"""
from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .plots.claims import claim as _row
from .plots.claims import spread
from .plots.tables import number
from .unjudged import NOT_YET_JUDGED

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


# one printed number: prefix, sign, digits, "%", suffix
_PRINTED = re.compile(r"(\D*?)([+−-]?)(\d[\d,]*(?:\.\d+)?|\.\d+)(%?)(\D*)")


def _printed(text: str):
    """How a printed value reads: (the value it reads as, its parts: prefix, sign, digits,
    "%" or "", suffix); None when it is not one plain decimal number (words, ×10ⁿ)."""
    m = _PRINTED.fullmatch(text)
    if m is None:
        return None
    value = float(m[3].replace(",", "")) * (-1 if m[2] in ("−", "-") else 1)
    return value / 100 if m[4] else value, m.groups()


def sided(fmt: Callable, threshold: float) -> Callable:
    """``fmt``, except that a value other than the threshold does not print as the threshold
    reads: where ``fmt``'s decimals round it onto the threshold, or onto the threshold as the
    test prints it (2.014 as "2" against "> 2", 0.0004 as "0.000" against "> 0", 0.3334 as
    "0.333" against "<= 0.333" for 1/3), it gets as many more decimals as it takes to show
    which side it is on, in the format's own style (sign, "%", suffix). A value ``fmt`` prints
    otherwise (words, ×10ⁿ) prints as ``fmt`` has it."""
    shown = _printed(number(threshold, 3))
    onto = {threshold} | ({shown[0]} if shown else set())

    def show(v) -> str:
        text = fmt(v)
        read = _printed(text) if _finite(v) and float(v) not in onto else None
        if read is None or read[0] not in onto:
            return text
        prefix, sign, digits, pct, suffix = read[1]
        x = abs(float(v)) * (100 if pct else 1)
        places = len(digits.partition(".")[2])
        for more in range(places + 1, places + 12):
            widened = f"{x:{',' if ',' in digits else ''}.{more}f}"
            back = float(widened.replace(",", "")) * (-1 if float(v) < 0 else 1)
            if (back / 100 if pct else back) not in onto:
                sign = sign or ("-" if float(v) < 0 else "")
                return f"{prefix}{sign}{widened}{pct}{suffix}"
        return text
    return show


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
    run itself, in the test's scale: needed when a row is judged on one seed).
    ``constant_control`` says why no seed moves the control, where none does (the theory's
    number; a count that saturates): an asserted row whose control is the same number on every
    seed is refused without it (:func:`audit`), and the row prints it beside the control."""

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
    exact: bool = False
    constant_control: str = ""

    def __post_init__(self):
        for name in ("statement", "paper", "control", "window"):
            if not str(getattr(self, name) or "").strip():
                raise ValueError(f"a claim needs its {name} (claim: {self.statement!r})")


VERDICTS = ("yes", "within noise", "does not discriminate", "partly", "no")
CANNOT_TELL = "not at this scale"  # a row none of whose settings the engine could judge: it
#                                   carries no numbers, so the audit refuses to render it


def no_control(run) -> float:
    """The ``control_measure`` of a row with no control to measure (the data hold none): its
    control prints "—" and the row cannot say yes or within noise; where its treatment passes
    it "does not discriminate" (:func:`verdict_of`). Not NaN by hand: a NaN control is a
    control that never reached a number, which fails the test like any miss."""
    return math.nan


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

    def _values(self, values: dict) -> str:
        fmt = sided(self.claim.fmt or (lambda v: number(v, 3)), self.claim.test.threshold)
        if self.claim.exact:
            (v,) = values.values()
            return f"{spread({0: v}, fmt).rsplit(' (seed', 1)[0]} (exact: no seed enters)"
        return spread(values, fmt)

    def record(self, label: str = "") -> dict:
        """What a claims row keeps of this judgement, enough to judge it again from the numbers
        alone (:func:`audit`): the test, each seed's treatment and control value, the noise and
        the verdict; ``label`` names the part of a row it is (:func:`joint`)."""
        t = self.claim.test
        return {"label": label, "test": {"op": t.op, "threshold": t.threshold, "name": t.name,
                                         "scale": t.scale},
                "treatment": {int(s): _plain(v) for s, v in self.treatment.items()},
                "control": {int(s): _plain(v) for s, v in self.control.items()},
                "noise": _plain(self.noise), "verdict": self.verdict,
                **({"exact": True} if self.claim.exact else {}),
                **({"constant_control": self.claim.constant_control}
                   if self.claim.constant_control else {}),
                **({"no_control": True} if self.claim.control_measure is no_control else {})}

    def row(self) -> dict:
        """The claims-table row (:func:`dynamics.plots.claim`), both measurements printed and
        the numbers kept (:meth:`record`)."""
        c = self.claim
        measured = f"{self._values(self.treatment)}; test {c.test}"
        if c.noise is not None and math.isfinite(self.noise):  # a floor measured in the run
            measured += (f"; noise floor measured in the run {number(self.noise, 2)}"
                         + (" (log10)" if c.test.scale == "log" else ""))
        if self.reason:
            measured += f"; {self.reason}"
        return _row(c.statement, c.paper, measured, self.verdict, c.asserted,
                    control=f"{c.control}: {self._values(self.control)}"
                    + (f" ({c.constant_control})" if c.constant_control else ""), window=c.window,
                    seeds=None if c.exact else sorted(self.treatment), evidence=[self.record()])

    def text(self, label: str = "") -> str:
        """This judgement in a few words, as a part of a row prints it: the treatment's and the
        control's values, the test they were judged by (its threshold and name, as a one-part
        row prints it), the verdict and its reason."""
        why = f" ({self.claim.constant_control})" if self.claim.constant_control else ""
        return (f"{label}{' ' if label else ''}{self._values(self.treatment)}, control "
                f"{self._values(self.control)}{why}, test {self.claim.test}: {self.verdict}"
                + (f" ({self.reason})" if self.reason else ""))


def judge(claim: Claim, treatment: Mapping[int, Any], control: Mapping[int, Any] | None = None) -> Judged:
    """Measure ``claim`` on each seed's treatment run and control (``{seed: run}``, the same
    seeds; by default the treatment's runs, which ``claim.control_measure`` reads for its
    control), run its test on both, and give the verdict (see the module)."""
    control = treatment if control is None else control
    if not treatment:
        raise ValueError(f"{claim.statement!r}: judge() needs at least one seed's run")
    if set(treatment) != set(control):
        raise ValueError(f"{claim.statement!r}: the treatment's seeds {sorted(treatment)} and the "
                         f"control's {sorted(control)} differ")
    cm = claim.control_measure or claim.measure
    unmeasured = cm is no_control
    t = {s: claim.measure(run) for s, run in sorted(treatment.items())}
    c = {s: cm(run) for s, run in sorted(control.items())}
    if claim.exact:
        for side, vals in (("treatment", t), ("control", c)):
            if len({repr(_plain(v)) for v in vals.values()}) > 1:
                raise ValueError(f"{claim.statement!r}: marked exact, but its {side} differs between "
                                 f"seeds {sorted(vals)}: {list(vals.values())} (a seed enters it)")
        first = min(t)
        t, c = {first: t[first]}, {first: c[first]}
        noise = float(claim.noise(treatment[first])) if claim.noise is not None else 0.0
        verdict, reason = verdict_of(claim.test, t, c, noise, unmeasured)
        return Judged(claim, t, c, verdict, reason, noise)
    if claim.noise is not None:
        noise = max(float(claim.noise(treatment[s])) for s in treatment)
    elif len(t) > 1:
        noise = claim.test.spread(list(t.values()))
    else:
        noise = math.nan  # one seed and no measured noise floor: nothing to beat
    verdict, reason = verdict_of(claim.test, t, c, noise, unmeasured)
    return Judged(claim, t, c, verdict, reason, noise)


def verdict_of(test: Test, treatment: Mapping[int, float], control: Mapping[int, float],
               noise: float, unmeasured: bool = False) -> tuple[str, str]:
    """The verdict and its reason from the numbers alone: each seed's treatment and control
    value under ``test``, and the noise the margin must beat (NaN: none measured);
    ``unmeasured``: the row has no control (:func:`no_control`). The one rule :func:`judge`
    applies and :func:`audit` applies again to a row's recorded numbers."""
    n = len(treatment)
    passed = {s: test.passes(v) for s, v in treatment.items()}
    if unmeasured and any(passed.values()):
        held = sum(passed.values())
        return "does not discriminate", ("no control measured: nothing the test could fail on"
                                         + (f"; it holds on {held} of {n}" if held < n else ""))
    fooled = {s for s, v in control.items() if test.passes(v)}
    good = sum(passed[s] and s not in fooled for s in treatment)
    noise = math.nan if noise is None else float(noise)
    both = {s for s in fooled if passed.get(s, False)}
    if both:  # "too" only where the claim passes as well; the control's other passes apart
        others = fooled - both
        return "does not discriminate", ("the control passes the test too on " + _on_seeds(both)
                                         + (f" (and on {_on_seeds(others)}, where the claim "
                                            "does not)" if others else ""))
    closest, cspread = control_miss(test, control)
    near = _near_spread(test, control)
    reach = min(cspread, max(noise, near)) if math.isfinite(noise) else cspread  # control_miss
    if all(passed.values()) and not fooled and 0 < reach and closest <= reach:
        said = (f"its seeds' spread {number(cspread, 2)}" if reach == cspread else
                (f"the noise {number(noise, 2)}" if reach == noise else
                 f"the spread of its two seeds nearest the threshold {number(near, 2)}")
                + f" (its seeds' spread {number(cspread, 2)})")
        return "does not discriminate", (f"the control misses the threshold by only {number(closest, 2)}, "
                                         f"not more than {said}"
                                         + (" (log10)" if test.scale == "log" else ""))
    if good == n:
        margin = median_margin(test, treatment.values())
        if not math.isfinite(noise) or margin <= noise:
            return "within noise", ("one seed and no noise floor measured" if not math.isfinite(noise) else
                                    f"clears the threshold by {number(margin, 2)}, not more than the noise "
                                    f"{number(noise, 2)}" + (" (log10)" if test.scale == "log" else ""))
        return "yes", ""
    if good == 0:
        return "no", ""
    return "partly", f"holds on {good} of {n} seeds"


def _near_spread(test: Test, control: Mapping[int, float]) -> float:
    """The spread of the two control values nearest the threshold (0 for fewer than two): how
    far the control varies where it comes nearest to passing, which no seed failing far away
    widens."""
    near = sorted(control.values(), key=lambda v: -test.margin(v))[:2]
    return test.spread(near) if len(near) == 2 else 0.0


def median_margin(test: Test, values) -> float:
    """The margin :func:`verdict_of` weighs against the noise: how far the seeds' median value
    clears ``test``'s threshold, in the test's scale (the one home of that rule, for the prose
    that says what a verdict rests on)."""
    vals = sorted(float(v) for v in values)
    n = len(vals)
    if not n:
        return -math.inf
    return test.margin(vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2]))


def control_miss(test: Test, control: Mapping[int, float]) -> tuple[float, float]:
    """How near the control comes to passing: the smallest amount by which a seed's control
    value misses ``test``'s threshold, and the control's seeds' spread, both in the test's
    scale. A control that misses by no more than its own spread would pass on a seed or two
    more (it does not discriminate). A seed whose control fails by far widens that spread, and
    alone it would weaken a row because its control fails harder (a control failing on every
    seed by four evaluation intervals was called a near miss). So :func:`verdict_of` weighs
    the miss against the control's spread capped at the larger of the row's noise (the one
    the treatment's margin must beat) and the spread of the two control values nearest the
    threshold (how the control varies where it comes nearest to passing, which a far seed
    does not touch; a tight treatment cannot switch the check off). No yardstick read from
    the control's own values is monotone in every seed: where the two nearest seeds move
    apart, a control that fails harder can still weaken its row. A count that sits on the
    threshold with no spread (0 cells where the test needs more than 0) misses it cleanly. A
    control that never reaches a number (not measured, or ±∞) misses by ∞."""
    misses = [-test.margin(v) for v in control.values()]
    return (min(misses) if misses else math.inf), test.spread(list(control.values()))


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


def joint(statement: str, paper: str, parts: Mapping[str, Judged], *, control: str,
          window: str, asserted: bool = True, note: str = "") -> dict:
    """One row for a claim the engine judges in several parts (``{label: Judged}``: per
    method, per setting, per quantity), the verdict :func:`combine` of the parts' and every
    part's numbers kept, so that one claim is one row. ``control`` and ``window`` say, for the
    row, what the parts' controls are and where they look; ``note`` is added to the
    measurement (e.g. a setting shown beside the judged ones)."""
    if not parts:
        raise ValueError(f"joint({statement!r}): a row needs at least one judged part")
    if not all(isinstance(j, Judged) for j in parts.values()):
        raise ValueError(f"joint({statement!r}): every part must be a Judged (from judge())")
    if asserted and not any(j.claim.asserted for j in parts.values()):
        raise ValueError(f"joint({statement!r}): every part's claim is shown, not asserted, so the "
                         "row cannot be asserted: pass asserted=False")
    verdict = combine(*(j.verdict for j in parts.values()))
    measured = "; ".join(j.text(label) for label, j in parts.items()) + (f"; {note}" if note else "")
    seeds = None if all(j.claim.exact for j in parts.values()) else \
        sorted({int(s) for j in parts.values() for s in j.treatment})
    return _row(statement, paper, measured, verdict, asserted, control=control, window=window,
                seeds=seeds, evidence=[j.record(label) for label, j in parts.items()])


def labelled(claim: Claim, treatment: Mapping[int, Any], control: Mapping[int, Any] | None = None, *,
             label: str = "", note: str = "") -> dict:
    """``claim`` judged (:func:`judge`) as a row of one part named ``label`` (:func:`joint`), with
    the claim's own control, window and assertion, and ``note`` added to the measurement."""
    return joint(claim.statement, claim.paper, {label: judge(claim, treatment, control)},
                 control=claim.control, window=claim.window, asserted=claim.asserted, note=note)


class ClaimNotJudged(ValueError):
    """A claims row that the engine did not judge (and that :data:`NOT_YET_JUDGED` does not
    name), or whose verdict does not follow from the numbers it carries."""


def _not_yet_judged(statement: str) -> bool:
    return any(str(statement).startswith(p) for ps in NOT_YET_JUDGED.values() for p in ps)


def audit(rows: Sequence[dict]) -> list[str]:
    """What is wrong with claims ``rows`` as the engine sees them, one line per problem (an
    empty list: nothing). A row must carry the engine's numbers (``evidence``), unless
    :data:`NOT_YET_JUDGED` names it; each part's verdict must be the one :func:`verdict_of`
    gives on its recorded numbers, and the row's the :func:`combine` of its parts', so that no
    verdict can be handed in or edited afterwards; an asserted "yes" then has, on every seed,
    a treatment that passes its test and a control that fails it, and a control that no seed
    moves (the same number on every seed: :func:`constant`) says why (``constant_control``)."""
    problems = []
    for r in rows:
        name = str(r.get("claim", "?"))[:80]
        ev = r.get("evidence")
        if not ev:
            if not _not_yet_judged(r.get("claim", "")):
                problems.append(f"{name}: not judged by the claims engine (dynamics.evidence: name "
                                "its measure, test and control, and judge it on every seed)")
            continue
        parts = []
        for e in ev:
            try:
                test = Test(**e["test"])
                t = {int(k): v for k, v in e["treatment"].items()}
                c = {int(k): v for k, v in e["control"].items()}
                again = verdict_of(test, t, c, e["noise"], bool(e.get("no_control")))[0]
            except (KeyError, TypeError, ValueError) as err:
                problems.append(f"{name}: its evidence cannot be read ({err})")
                break
            if again != e["verdict"]:
                problems.append(f"{name}: part {e.get('label') or 1} says {e['verdict']!r}, its "
                                f"numbers give {again!r}")
            if set(t) != set(c):
                problems.append(f"{name}: the control was not measured on the treatment's seeds")
            fixed = constant(c) if (r.get("asserted") and again == "yes"
                                    and not e.get("exact")) else None
            if fixed is not None and not e.get("constant_control"):
                problems.append(f"{name}: part {e.get('label') or 1}'s control is {fixed:g} on every "
                                "seed: no seed moves it, so it is a number, not a measurement; "
                                "measure a control that varies, or say why none does "
                                "(Claim.constant_control)")
            parts.append(again)
        else:
            if combine(*parts) != r.get("reproduced"):
                problems.append(f"{name}: the row says {r.get('reproduced')!r}, its parts give "
                                f"{combine(*parts)!r}")
    return problems


def constant(control: Mapping[int, float]) -> float | None:
    """The control's one value when it is the same finite number on two or more seeds (no seed
    moves it: a constant, the theory's number, or a count that saturates), else None."""
    vals = list(control.values())
    if len(vals) < 2 or not all(_finite(v) for v in vals) or len({float(v) for v in vals}) > 1:
        return None
    return float(vals[0])


def _plain(v):
    """A recorded number: a float, or None where there is none (not reached, NaN)."""
    return float(v) if _finite(v) else None


def _on_seeds(seeds) -> str:
    """"seed 2" or "seeds 0, 2": the seeds a reason names, singular when there is one."""
    return f"seed{'s' if len(seeds) > 1 else ''} " + ", ".join(str(s) for s in sorted(seeds))


def rows(judged: Sequence[Judged]) -> list[dict]:
    """The claims-table rows of several judged claims."""
    return [j.row() for j in judged]


__all__ = ["Test", "Claim", "Judged", "judge", "labelled", "verdict_of", "joint", "audit", "rows", "combine",
           "VERDICTS", "CANNOT_TELL", "NOT_YET_JUDGED", "ClaimNotJudged", "control_miss", "constant", "no_control",
           "sided"]
