"""Claims tables: each chapter's rows of what a paper claims beside what its run measured.

:func:`claim` makes a row, :func:`verdict` its verdict from the checks, :func:`claims_table`
renders the rows (strict in the published build: an asserted row that is not "yes" raises
:class:`ClaimNotShown`), :func:`failed_claims` lists the rows that fail."""
from __future__ import annotations

from typing import Sequence

from .tables import table

VERDICTS = ("yes", "partly", "not at this scale", "no")
MARKS = {"yes": "✓ yes", "partly": "◐ partly", "not at this scale": "– not at this scale",
         "no": "✗ no"}


def verdict(ok: bool, partly: bool = False, scale: bool = False) -> str:
    """A claims row's verdict from its checks: "yes" when ``ok``, else "partly" when
    ``partly``, else "not at this scale" when ``scale`` (the claim is about a regime this
    profile does not reach), else "no"."""
    return "yes" if ok else "partly" if partly else "not at this scale" if scale else "no"


def claim(claim: str, paper: str, measured: str, reproduced: str, asserted: bool = True) -> dict:
    """One row of a chapter's claims table: what a paper claims, what this run measured,
    and whether the measurement reproduces it (one of :data:`VERDICTS`).

    ``asserted``: the chapter's prose states this row as true (a "What to notice" sentence).
    In strict mode (``DYNAMICS_STRICT_CLAIMS=1``, the published build) a table with an asserted
    row that is not "yes" refuses to render: the prose would say something the figure does not
    show. A row whose verdict may differ between profiles is not asserted: its prose glues the
    verdict instead."""
    if reproduced not in VERDICTS:
        raise ValueError(f"reproduced must be one of {list(VERDICTS)}, got {reproduced!r}")
    return {"claim": claim, "paper": paper, "measured here": measured, "reproduced": reproduced,
            "asserted": bool(asserted)}


class ClaimNotShown(AssertionError):
    """A row that the prose asserts came out other than "yes" in a strict build."""


def failed_claims(rows: Sequence[dict]) -> list[dict]:
    """The rows that the prose asserts but this run does not reproduce."""
    return [r for r in rows if r.get("asserted", True) and r["reproduced"] != "yes"]


def claims_table(rows: Sequence[dict], strict: bool | None = None):
    """A chapter's claims table: the rows of :func:`claim`, in the house table style, each
    verdict marked (✓ yes, ◐ partly, – not at this scale, ✗ no). ``strict`` (default:
    ``$DYNAMICS_STRICT_CLAIMS``) raises :class:`ClaimNotShown` when a row the prose asserts is
    not reproduced."""
    from ..runtime import switch

    rows = list(rows)
    if strict is None:
        strict = switch("DYNAMICS_STRICT_CLAIMS", False)
    bad = failed_claims(rows)
    if strict and bad:
        raise ClaimNotShown("the prose asserts rows this run does not reproduce:\n" + "\n".join(
            f"- {r['claim']}: {r['measured here']} ({r['reproduced']})" for r in bad))
    return table(rows, ["claim", "paper", "measured here", "reproduced"],
                 formats={"reproduced": lambda v: MARKS[v]})
