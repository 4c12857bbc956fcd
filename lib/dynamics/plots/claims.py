"""Claims tables: each chapter's rows of what a paper claims beside what its run measured.

A claim is a statement that can fail. :func:`claim` makes a row; its verdict comes from the
claims engine (:mod:`dynamics.evidence`, which measures the claim and its control on every seed
and alone turns numbers into a verdict; :func:`spread` writes the seeds' spread). A row names what
it compares with (``control``: a control run, a null, or the theory's number) and where it
looks (``window``: the steps, cells or range the prose names); both are printed under the
measurement, so a reader sees what would have shown the phenomenon absent.
:func:`claims_table` renders the rows (strict in the published build: an asserted row that is
not "yes" raises :class:`ClaimNotShown`), :func:`failed_claims` lists the rows that fail."""
from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from .tables import number, table

VERDICTS = ("yes", "partly", "not at this scale", "no", "within noise", "does not discriminate")
MARKS = {"yes": "✓ yes", "partly": "◐ partly", "not at this scale": "– not at this scale",
         "no": "✗ no", "within noise": "≈ within noise", "does not discriminate": "⊘ does not discriminate"}


def claim(claim: str, paper: str, measured: str, reproduced: str, asserted: bool = True, *,
          control: str | None = None, window: str | None = None,
          seeds: Sequence[int] | None = None, evidence: Sequence[dict] | None = None) -> dict:
    """One row of a chapter's claims table: what a paper claims, what this run measured,
    and whether the measurement reproduces it (one of :data:`VERDICTS`).

    ``control``: what the measurement is compared with (a control run, a null, the theory's
    number); ``window``: the steps, cells or range the claim is judged in; ``seeds``: the seeds
    it was measured on. Each is printed under the measurement. ``evidence``: what the claims
    engine measured (:meth:`dynamics.evidence.Judged.record`, one per part), so that the verdict
    can be checked again from the numbers (:func:`dynamics.evidence.audit`); a row made without
    it is one the engine has not judged yet, and only the rows
    :data:`dynamics.evidence.NOT_YET_JUDGED` names may be.

    ``asserted``: the chapter's prose states this row as true (a "What to notice" sentence).
    In strict mode (``DYNAMICS_STRICT_CLAIMS=1``, the published build) a table with an asserted
    row that is not "yes" refuses to render: the prose would say something the figure does not
    show. A row whose verdict may differ between profiles is not asserted: its prose glues the
    verdict instead."""
    if reproduced not in VERDICTS:
        raise ValueError(f"reproduced must be one of {list(VERDICTS)}, got {reproduced!r}")
    return {"claim": claim, "paper": paper, "measured here": measured, "reproduced": reproduced,
            "asserted": bool(asserted), "control": control, "window": window,
            "seeds": None if seeds is None else [int(s) for s in seeds],
            "evidence": None if evidence is None else [dict(e) for e in evidence]}


def spread(values: Mapping[int, float] | Sequence[float], fmt: Callable[[float], str] | None = None,
           ) -> str:
    """The seeds' spread of a measured quantity as the claims tables print it: one value as
    it is, several as "median m (lo–hi), seeds 0, 1, 2" (or "v on every seed" when they all
    print alike: a range with equal ends says nothing); a value that is None or NaN (not
    reached) prints as "—"."""
    from .tables import number

    fmt = fmt or (lambda v: number(v, 3))
    if not isinstance(values, Mapping):
        values = dict(enumerate(values))
    if not values:
        raise ValueError("spread() needs at least one seed's value")

    def show(v) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"
        if isinstance(v, (int, float)) and math.isinf(v):  # never "inf×": the format's
            said = fmt(v)                                  # suffix means nothing there; a
            if "inf" not in said.lower():                  # format that words it ("never
                return said                                # learned") says it so
            return "∞" if v > 0 else "−∞"
        return fmt(v)

    seeds = ", ".join(str(s) for s in values)
    vals = list(values.values())
    if len(vals) == 1:
        return f"{show(vals[0])} (seed {seeds})"
    finite = sorted(float(v) for v in vals if v is not None and not math.isnan(float(v)))
    if not finite:
        return f"— on every seed, seeds {seeds}"
    mid = finite[len(finite) // 2] if len(finite) % 2 else 0.5 * (finite[len(finite) // 2 - 1]
                                                               + finite[len(finite) // 2])
    missing = len(vals) - len(finite)
    tail = f", {missing} not reached" if missing else ""
    if missing and len(finite) == 1:  # one seed has a value: say which, not "on every seed"
        (have,) = [s for s, v in values.items() if v is not None and not math.isnan(float(v))]
        return f"{show(finite[0])} on seed {have} only{tail}, seeds {seeds}"
    if show(finite[0]) == show(finite[-1]):  # never "0.5 (0.5–0.5)": the seeds agree as printed
        return f"{show(finite[0])} on every seed{' that reached it' if missing else ''}{tail}, seeds {seeds}"
    return f"median {show(mid)} ({show(finite[0])}–{show(finite[-1])}{tail}), seeds {seeds}"


CLAIM_SEEDS = 3  # the seeds a page's asserted live rows are measured on: its own and the next


def claim_seeds(seed: int | None = None, n: int = CLAIM_SEEDS) -> list[int]:
    """The seeds a page's claims are judged on: the page's own seed (``DYNAMICS_SEED`` when
    None) and the ``n - 1`` after it; in a dry run (``DYNAMICS_DRY_RUN``) at most two, enough
    to run the several-seed path at the profile's sizes (a dry run's verdicts mean nothing):
    the first and the last, a grid cut to its ends (``runtime.grid``), which
    ``dynamics_ops.gpuwork`` scales, or keeps whole when it counts with every grid whole."""
    from ..runtime import get_seed, grid

    if int(n) < 1:
        raise ValueError(f"claim_seeds needs n >= 1 seeds, got {n}")
    seed = get_seed(seed)
    return grid(range(seed, seed + int(n)))


def per_seed(runs, name: str, source: str) -> dict:
    """``runs`` checked to be ``{seed: result}`` for a claims function's argument ``name``
    (``source``: what gives them, named in the error)."""
    if not isinstance(runs, dict) or not runs or not all(isinstance(k, int) for k in runs):
        raise ValueError(f"claims({name}=...) takes {{seed: result}} for several seeds "
                         f"({source} gives them)")
    return runs


class ClaimNotShown(AssertionError):
    """A row that the prose asserts came out other than "yes" in a strict build."""


def failed_claims(rows: Sequence[dict]) -> list[dict]:
    """The rows that the prose asserts but this run does not reproduce."""
    return [r for r in rows if r.get("asserted", True) and r["reproduced"] != "yes"]


def _measured(row: dict) -> str:
    """The "measured here" cell: the measurement, then what it is compared with, where, and on
    which seeds, each on a line of its own."""
    parts = [row["measured here"]]
    if row.get("control"):
        parts.append(f"against: {row['control']}")
    if row.get("window"):
        parts.append(f"window: {row['window']}")
    seeds = row.get("seeds")
    if seeds:
        parts.append(f"seed{'s' if len(seeds) > 1 else ''}: {', '.join(map(str, seeds))}")
    return "\n".join(parts)


def verdicts(rows: Sequence[dict], **starts: str) -> dict[str, str]:
    """The verdicts a page's prose glues, each the one its claims row prints: for each
    ``name=start``, the verdict (``reproduced``) of the one row of ``rows`` whose claim starts
    with ``start``, so that a sentence and the table cannot disagree. Raises ``ValueError``
    naming the start when no row, or more than one, has it."""
    out = {}
    for name, start in starts.items():
        found = [r["reproduced"] for r in rows if str(r["claim"]).startswith(start)]
        if len(found) != 1:
            raise ValueError(f"verdicts: {name}: expected one claims row starting {start!r}, "
                             f"found {len(found)}")
        out[name] = found[0]
    return out


def control_passes(rows: Sequence[dict], start: str) -> str:
    """On which seeds the control of the one row whose claim starts with ``start`` passes
    that row's own test (every part of it), read from the numbers the row keeps (its
    ``evidence``), and by how much it misses on the others: "on seeds 0 and 2 of 0, 1, 2, and
    misses it by 0.0032 on seed 1", "on every seed (0, 1, 2)", "on no seed (the nearest misses
    by 0.01, seed 2)". For a sentence that says a shown row's control passes too: the seeds
    its table prints, and how close the rest came."""
    from ..evidence import Test

    found = [r for r in rows if str(r["claim"]).startswith(start)]
    if len(found) != 1 or not found[0].get("evidence"):
        raise ValueError(f"control_passes: expected one judged claims row starting {start!r}, "
                         f"found {len(found)}")
    parts = found[0]["evidence"]
    seeds = sorted({int(s) for part in parts for s in part["control"]})
    miss = {}  # seed -> by how much its control misses the test (0: it passes every part)
    for seed in seeds:
        worst = 0.0
        for part in parts:
            test, v = Test(**part["test"]), part["control"].get(seed, part["control"].get(str(seed)))
            worst = max(worst, math.inf if v is None else -min(0.0, test.margin(v)))
        miss[seed] = worst
    log = " (log10)" if any(p["test"].get("scale") == "log" for p in parts) else ""
    fooled = [s for s in seeds if miss[s] == 0.0]
    missed = [s for s in seeds if miss[s] > 0.0]
    by = lambda s: f"{number(miss[s], 2)}{log}"  # noqa: E731
    if not fooled:
        near = min(missed, key=miss.get)
        return f"on no seed (the nearest misses by {by(near)}, seed {near})"
    if not missed:
        return f"on every seed ({', '.join(map(str, seeds))})"
    names = [str(s) for s in fooled]
    names = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    rest = "; ".join(f"by {by(s)} on seed {s}" for s in missed)
    return (f"on seed{'s' if len(fooled) > 1 else ''} {names} of {', '.join(map(str, seeds))}, "
            f"and misses it {rest}")


def claims_table(rows: Sequence[dict], strict: bool | None = None):
    """A chapter's claims table: the rows of :func:`claim`, in the house table style, each
    verdict marked (✓ yes, ◐ partly, – not at this scale, ✗ no), each measurement followed by
    its control, window and seeds. Every row is first audited (:func:`dynamics.evidence.audit`:
    a row must be judged by the claims engine, or named as not yet moved onto it, and its verdict
    must follow from the numbers it carries). ``strict`` (default: ``$DYNAMICS_STRICT_CLAIMS``) raises
    :class:`ClaimNotShown` when a row the prose asserts is not reproduced."""
    from ..runtime import strict_claims

    from ..evidence import ClaimNotJudged, audit

    rows = list(rows)
    problems = audit(rows)
    if problems:
        raise ClaimNotJudged("claims rows the engine did not judge, or whose verdict its numbers "
                             "do not give:\n" + "\n".join(f"- {p}" for p in problems))
    if strict is None:
        strict = strict_claims()
    bad = failed_claims(rows)
    if strict and bad:
        raise ClaimNotShown("the prose asserts rows this run does not reproduce:\n" + "\n".join(
            f"- {r['claim']}: {r['measured here']} ({r['reproduced']})" for r in bad))
    shown = [dict(r, **{"measured here": _measured(r), "reproduced": _mark(r)}) for r in rows]
    return table(shown, ["claim", "paper", "measured here", "reproduced"])


def _mark(row: dict) -> str:
    """The verdict as the table shows it; a row the prose does not assert says so, so that its
    ✓ is not read as evidence the page stands on."""
    mark = MARKS[row["reproduced"]]
    return mark if row.get("asserted", True) else f"{mark} (an observation, not asserted)"
