"""Grokking, Omnigrok's account measured on the page's runs started larger.

Liu, Michaud and Tegmark's LU mechanism: against the weight norm the training loss is shaped
like an L and the test loss like a U, so a network started above the "Goldilocks zone" of
norms fits first and generalizes once weight decay has brought its norm into the zone. Beside
each seed's run two starts (:data:`~.algorithm.INIT_SCALES`): ``NORM_BUILT`` (x4), below the
x1 run's memorizing peak, where training still builds the norm it memorizes at, and
``LARGE_START`` (x8), above it, Omnigrok's large start.

Here: the measures on weight-norm histories (:func:`peak_over_own_start`,
:func:`peak_ratio_over_scale`, :func:`norm_at`, :func:`zone_factor`, :func:`grok_over`), how
the prose says a norm's course (:func:`norm_rise`), the claim that a larger start delays the
grok step (:func:`later_claim`), and the large start's row (:func:`large_start_row`) and glued
numbers (:func:`large_start_facts`). No training.
"""
from __future__ import annotations

import math

import numpy as np

from .. import evidence, plots
from .algorithm import LARGE_START

__all__ = [
    "peak_over_own_start", "peak_ratio_over_scale", "norm_at", "zone_factor", "grok_over",
    "norm_rise", "later_claim", "large_start_row", "large_start_facts",
    "RISES_ABOVE_START", "FAR_BELOW", "LATER", "ZONE",
]

FAR_BELOW = 0.5         # "less than half of 4x": the peak norms' ratio below this x the initial norms'
RISES_ABOVE_START = 1.2  # "the larger start's norm rises": its peak this x its own start. A norm
#                         inherited from the start and only decayed gives 1 exactly (its peak is
#                         its start); 20% above it is far beyond the few % the seeds move
LATER = 1.5             # "a larger initialization delays grokking": its grok step this x later
ZONE = 1.15             # "at the norm the x1 run generalizes at": within this factor, either way


def peak_over_own_start(run) -> float:
    """``run``'s peak weight norm over its own initial norm: 1 for a norm that only falls from
    its start (the peak is the start), above 1 for one that training builds up."""
    norm = list(run.history["weight_norm"])
    return max(norm) / norm[0] if norm and norm[0] > 0 else math.nan


def peak_ratio_over_scale(r: dict, scale: float) -> float:
    """``{scale: run}`` -> the ``scale`` start's peak weight norm over the x1 run's, over the
    ratio of their initial norms (1 where the peaks keep the initial scale)."""
    norm = lambda x: r[x].history["weight_norm"]  # noqa: E731
    return (max(norm(scale)) / max(norm(1.0))) / (norm(scale)[0] / norm(1.0)[0])


def norm_at(run, step) -> float:
    """``run``'s weight norm at ``step``, its last evaluation at or before it (NaN where
    ``step`` is None or comes before the first evaluation)."""
    steps, norm = list(run.history.steps), list(run.history["weight_norm"])
    before = [i for i, t in enumerate(steps) if step is not None and t <= step]
    return float(norm[before[-1]]) if before else math.nan


def zone_factor(run, ref, step=None) -> float:
    """How far ``run``'s weight norm at ``step`` (by default its grok step) is from ``ref``'s at
    ``ref``'s grok step, as a factor either way, max(a/b, b/a): 1 where they are equal; NaN
    where a step is missing (a run that never groks)."""
    a = norm_at(run, run.grok_step if step is None else step)
    b = norm_at(ref, ref.grok_step)
    return max(a / b, b / a) if a > 0 and b > 0 else math.nan


def grok_over(a, b) -> float:
    """One grok step over another (NaN where one is missing: that run does not grok)."""
    return a / b if a and b else math.nan


def norm_rise(run) -> str:
    """How ``run``'s weight norm gets from its start to its peak, as the prose says it: any dip
    below the start (its depth and step), then the peak over the start and its step."""
    norm, steps = list(run.history["weight_norm"]), list(run.history.steps)
    top = int(np.argmax(norm))
    if top == 0:
        return "only falls from its start (its peak is its start)"
    low, dip = int(np.argmin(norm[:top + 1])), 1 - min(norm[:top + 1]) / norm[0]
    rise = f"rises to {plots.number(norm[top] / norm[0], 3)} times its start by step {steps[top]}"
    if low == 0:
        return rise
    depth = f"{dip:.0%}" if dip >= 0.01 else f"{dip:.2%}"  # a dip under 1% is not "0%"
    return f"first dips {depth} below its start, to step {steps[low]}, then {rise}"


def later_claim(scaled: dict, scale: float, paper: str) -> evidence.Claim:
    """"A larger initialization delays grokking" at ``scale`` against x1, judged per seed on
    ``{seed: seed}`` over ``scaled`` ``{seed: {scale: run}}``, against a change of seed alone
    at x1 (the largest ratio of another seed's grok step over this seed's)."""
    ratio = lambda s, o, sc: grok_over(scaled[o][sc].grok_step, scaled[s][1.0].grok_step)  # noqa: E731
    return evidence.Claim(
        f"A larger initialization delays grokking (x{scale:g} against x1)", paper,
        measure=lambda s: ratio(s, s, scale), asserted=False, fmt="{:.2f}x".format,
        control_measure=lambda s: max((ratio(s, o, 1.0) for o in scaled if o != s), default=math.nan),
        test=evidence.Test(">", LATER, f"LATER: grok step at x{scale:g} over at x1", scale="log"),
        control="a change of seed alone at x1 (the largest ratio of another seed's grok step over "
                "this seed's), measured the same way", window="the whole run")


OMNIGROK = ("Liu et al. 2023 (Omnigrok's LU mechanism: a network started above the Goldilocks "
            "zone of norms fits first and generalizes once weight decay has brought its norm "
            "into it; they induce grokking so on MNIST, IMDb and QM9)")


def large_start_row(scaled: dict) -> dict:
    """Omnigrok's large start on every seed of ``scaled`` ``{seed: {scale: run}}``, one row of
    three parts, shown (at the smoke profile's budget the x8 run does not grok): from x8 the
    norm only falls (against the x1 run, whose norm training builds), the run groks at the norm
    the x1 run groks at (against its own norm at its fit step, when it has memorized), and
    later than from x1 (against a change of seed alone)."""
    big, fmt = LARGE_START, "{:.2f}x".format
    window = f"the x{big:g} run to its grok step, the x1 run to its grok step"
    falls = evidence.Claim(
        f"the x{big:g} run's norm only falls", OMNIGROK, window=window, fmt=fmt, asserted=False,
        measure=lambda r: peak_over_own_start(r[big]),
        control_measure=lambda r: peak_over_own_start(r[1.0]),
        test=evidence.Test("<", RISES_ABOVE_START, "RISES_ABOVE_START: the peak norm over its "
                                                   "own start", scale="log"),
        control="the x1 run, whose norm training builds up")
    zone = evidence.Claim(
        f"the x{big:g} run groks at the x1 run's norm", OMNIGROK, window=window, fmt=fmt,
        asserted=False, measure=lambda r: zone_factor(r[big], r[1.0]),
        control_measure=lambda r: zone_factor(r[big], r[1.0], step=r[big].fit_step),
        test=evidence.Test("<", ZONE, f"ZONE: the factor between the x{big:g} run's norm at its "
                                      "grok step and the x1 run's at its own", scale="log"),
        control=f"the x{big:g} run's norm at its own fit step, when it has memorized")
    return evidence.joint(
        f"From Omnigrok's large start, x{big:g} (above the memorizing peak), the norm only falls, "
        "and the network generalizes once weight decay has brought it to the norm the x1 run "
        "generalizes at, later than from x1", OMNIGROK,
        {f"peak over its own start, x{big:g}:": evidence.judge(falls, scaled, scaled),
         f"norm at the grok step, x{big:g} against x1, a factor:": evidence.judge(zone, scaled, scaled),
         f"grok step, x{big:g} over x1:": evidence.judge(later_claim(scaled, big, OMNIGROK),
                                                         {s: s for s in scaled})},
        control=f"the x1 run's rising norm; the x{big:g} run's norm at its fit step; a change of "
                "seed alone at x1: each fails its part's test", window=window, asserted=False)


def large_start_facts(scaled: dict, n0) -> dict[str, str]:
    """The glued numbers of the page's paragraph on the large start, on one seed's ``scaled``
    ``{scale: run}`` and the x1 run's norm descent ``n0`` (:func:`~.algorithm.norm_descent`):
    the scale, the start (and whether it is above the x1 run's memorizing peak), the course,
    the fit step against the x1 run's, the grok step with its norm there against the x1 run's
    at its own grok step, and how far that norm is from where the x1 run's norm ends."""
    r, first, n = scaled[LARGE_START], scaled[1.0], plots.number
    start, factor, at_grok = r.history["weight_norm"][0], zone_factor(r, first), n0.grok
    if r.grok_step is None:
        grok = (f"does not grok within its {n(r.config.steps)} steps (test accuracy "
                f"{r.history['test_acc'][-1]:.0%} at the end)")
    else:
        grok = (f"groks at step {n(r.grok_step)}, where its norm is "
                f"{n(norm_at(r, r.grok_step), 3)}: a factor {n(factor, 3)} from the "
                f"{n(norm_at(first, first.grok_step), 3)} at which the first run groks")
    late = (r.fit_step is None) or (first.fit_step is not None and r.fit_step > first.fit_step)
    fit = (f"later than the first run's {n(first.fit_step)}: from this start memorizing is "
           "slower, where Omnigrok's fast-then-slow picture has it fast" if late else
           f"no later than the first run's {n(first.fit_step)}: from this start memorizing is "
           "fast, as Omnigrok's fast-then-slow picture has it")
    gap = abs(at_grok / n0.end - 1) if n0.end > 0 else math.nan
    return dict(large_init=f"{LARGE_START:g}", large_start=n(start, 3),
                large_kind=f"{'above' if start > n0.peak else 'not above'} the first run's "
                           f"memorizing peak, {n(n0.peak, 3)}",
                large_course=norm_rise(r), large_fit=n(r.fit_step), large_fit_vs=fit,
                large_grok=grok, zone_bar=f"{ZONE:g}",
                zone_vs_end=(f"within {gap:.0%} of" if gap < 0.1 else f"{gap:.0%} away from")
                + f" where its norm ends, {n(n0.end, 3)}")
