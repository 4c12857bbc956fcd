"""One network, the update of the hidden matrix in words: what section 4 says of the probe's
readings (:class:`~.science.UpdateProbe`, :func:`~.science.step_readings`) on the best run of
each optimizer. The whole update is the optimizer's step plus the decay term -ηλθ; the
sentences here say what that term does to the update's rank (:func:`decay_term_text`), why
Muon's step falls short of a flat spectrum (:func:`short_of_flat_text`) and how the matrix and
its update move from the fit step to the end (:func:`course_text`); :func:`step_facts` is
every number the section glues about them."""
from __future__ import annotations

import math

__all__ = ["decay_term_text", "short_of_flat_text", "course_text", "gap_after_fit", "step_facts"]


def decay_term_text(whole: float, step: float) -> str:
    """What adding the decay term -ηλθ to the optimizer's step does to the rank / n of the
    update, at the page's two digits: the step alone (``step``) against the whole update
    (``whole``)."""
    w, s = f"{whole:.2f}", f"{step:.2f}"
    if not (math.isfinite(whole) and math.isfinite(step)):
        return "cannot be read: the run has no update measured at its end"
    if w == s:
        return f"leaves the rank / n at {w}"
    return (f"{'raises' if whole > step else 'pulls down'} the rank / n, from {s} for the "
            f"step alone to {w} for the whole update")


def short_of_flat_text(r) -> str:
    """Why Muon run ``r``'s step at the end falls short of a flat spectrum (rank / n 1), from its
    :func:`~.science.step_readings`: rows that do not move (units that get no gradient), and
    the singular values Newton–Schulz leaves over the rows that do (their median over the
    largest: the smallest moves a lot from one evaluation to the next)."""
    tl = r.timeline
    zero, live = tl["step_zero_rows"][-1], tl["step_live_rank"][-1]
    if not math.isfinite(zero):
        return "the run has no step measured at its end"
    spread = ("Newton–Schulz leaves its singular values spread, half of them below "
              f"{tl['step_sv_median'][-1]:.2f} of the largest, not all at one")
    if zero == 0:
        return f"every row of it moves, and it falls short of 1 because {spread}"
    return (f"{zero:.0f} of its rows do not move (units that get no gradient); over the rows that "
            f"do it is {live:.2f}, short of 1 because {spread}")


def _at(r, key: str, step) -> float:
    """``key`` of run ``r``'s timeline at its last evaluation at or before ``step``."""
    known = [v for t, v in zip(r.timeline["step"], r.timeline[key]) if step is not None and t <= step]
    return known[-1] if known else math.nan


def course_text(r, key: str, fmt) -> str:
    """``key`` of run ``r``'s timeline from its fit step to its end, each printed by ``fmt``:
    "rises from a at the fit step to b at the end", "falls from ...", or "stays at a" where
    the two print alike (from the start of the run where it never fits)."""
    fit = r.fit_step if r.fit_step is not None else 0
    where = "the fit step" if r.fit_step is not None else "the start"
    a, b = _at(r, key, fit), r.timeline[key][-1]
    if fmt(a) == fmt(b):
        return f"stays at {fmt(a)} from {where} to the end"
    return f"{'rises' if b > a else 'falls'} from {fmt(a)} at {where} to {fmt(b)} at the end"


def gap_after_fit(r, key: str, other: str) -> float:
    """The largest difference between ``key`` and ``other`` of run ``r``'s timeline at the
    evaluations from its fit step on (NaN where there are none)."""
    fit = r.fit_step if r.fit_step is not None else 0
    tl = r.timeline
    gaps = [abs(x - y) for t, x, y in zip(tl["step"], tl[key], tl[other])
            if t >= fit and math.isfinite(x) and math.isfinite(y)]
    return max(gaps) if gaps else math.nan


def step_facts(a, m) -> dict:
    """Section 4's numbers on the update, for AdamW's best run ``a`` and Muon's ``m`` (suffixes
    ``_a`` and ``_m``), each at the end of the run unless said: the rank / n of the whole update
    (``ur``), of the step in it (``sr``), of the step with its component along the weights
    removed (``xr``) and of the weights (``wr``); what the decay term does (``split``); the
    share of the step along the weights (``radial``); from the fit step to the end, the
    matrix's norm (``norm_course``), the share of the whole update along the weights
    (``uradial_course``) and the update's rank (``ur_course``); the largest gap between the
    update's rank and the rank of the step across the weights from the fit step on
    (``xr_gap``); and ``muon_short``."""
    two, pct = (lambda v: f"{v:.2f}"), (lambda v: f"{v:.0%}")  # noqa: E731
    out = {"muon_short": short_of_flat_text(m)}
    for sfx, r in (("a", a), ("m", m)):
        tl = r.timeline
        out |= {f"ur_{sfx}": two(tl["update_rank"][-1]), f"sr_{sfx}": two(tl["step_rank"][-1]),
                f"xr_{sfx}": two(tl["step_across_rank"][-1]), f"wr_{sfx}": two(tl["weight_rank"][-1]),
                f"split_{sfx}": decay_term_text(tl["update_rank"][-1], tl["step_rank"][-1]),
                f"radial_{sfx}": pct(tl["step_radial"][-1]),
                f"norm_course_{sfx}": course_text(r, "matrix_norm", lambda v: f"{v:.1f}"),
                f"xr_gap_{sfx}": two(gap_after_fit(r, "update_rank", "step_across_rank")),
                f"uradial_course_{sfx}": course_text(r, "update_radial", pct),
                f"ur_course_{sfx}": course_text(r, "update_rank", two)}
    return out
