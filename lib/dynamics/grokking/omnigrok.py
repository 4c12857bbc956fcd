"""Grokking, Omnigrok's account measured on the page's runs started larger.

Liu, Michaud and Tegmark's LU mechanism: against the weight norm the training loss is shaped
like an L and the test loss like a U, so a network started above the "Goldilocks zone" of
norms fits first and generalizes once weight decay has brought its norm into the zone. Beside
each seed's run two starts (:data:`~.algorithm.INIT_SCALES`): ``NORM_BUILT`` (x4), below the
x1 run's memorizing peak, where training still builds the norm it memorizes at, and
``LARGE_START`` (x8), above it, Omnigrok's large start.

Here: the measures on weight-norm histories (:func:`peak_over_own_start`, :func:`rebuild_factor`,
:func:`peak_ratio_over_scale`, :func:`norm_at`, :func:`zone_factor`, :func:`grok_over`), how
the prose says a norm's course (:func:`norm_rise`), the claim that a larger start delays the
grok step (:func:`later_claim`), and the large start's row (:func:`large_start_claims`) and glued
numbers (:func:`large_start_facts`), and the figure of Omnigrok's lens, the weight norm beside the
test accuracy (:func:`norm_figure`). A section module, whole: it draws, so it imports the
book's plotting; it trains nothing.
"""
from __future__ import annotations

import math

import numpy as np

from .. import evidence, plots
from .algorithm import LARGE_START, NORM_BUILT, SLOW_DECAY, SLOW_KEY

__all__ = [
    "peak_over_own_start", "rebuild_factor", "fit_over_start", "peak_ratio_over_scale",
    "norm_at", "zone_factor",
    "grok_over", "norm_rise", "later_claim", "large_start_claims", "large_start_facts",
    "norm_figure",
    "RISES_ABOVE_START", "FAR_BELOW", "LATER", "FALLS_BEFORE_FIT",
]

FAR_BELOW = 0.5         # "less than half of 4x": the peak norms' ratio below this x the initial norms'
RISES_ABOVE_START = 1.2  # "the larger start's norm rises": its peak this x its own start. A norm
#                         inherited from the start and only decayed gives 1 exactly (its peak is
#                         its start); 20% above it is far beyond the few % the seeds move
LATER = 1.5             # "a larger initialization delays grokking": its grok step this x later
FALLS_BEFORE_FIT = 0.9  # "decay takes the norm down before the fit": the norm at the fit step
#                         below this x the start (a network that fits at its large norm: about 1)


def peak_over_own_start(run) -> float:
    """``run``'s peak weight norm over its own initial norm: 1 for a norm that only falls from
    its start (the peak is the start), above 1 for one that training builds up."""
    norm = list(run.history["weight_norm"])
    return max(norm) / norm[0] if norm and norm[0] > 0 else math.nan


def rebuild_factor(run) -> float:
    """The largest rise of ``run``'s weight norm over its lowest value so far, max over t of
    n(t) / min(n(s), s <= t): 1 for a norm that only falls (whatever its start), above 1 for
    one that training builds back after a fall or up from its start."""
    norm = np.asarray(run.history["weight_norm"], dtype=float)
    if not norm.size or norm.min() <= 0:
        return math.nan
    return float(np.max(norm / np.minimum.accumulate(norm)))


def fit_over_start(run) -> float:
    """``run``'s weight norm at its fit step over its initial norm: about 1 (or above) for a
    network that fits at the norm it starts at, below 1 where the norm falls before the fit
    (NaN where it never fits)."""
    norm = list(run.history["weight_norm"])
    return norm_at(run, run.fit_step) / norm[0] if norm and norm[0] > 0 else math.nan


def _trough(norm: list) -> tuple[int, int]:
    """The fall and rise :func:`rebuild_factor` reads: the index of the highest value over
    the lowest before it, and of that lowest."""
    low = np.minimum.accumulate(np.asarray(norm, dtype=float))
    top = int(np.argmax(np.asarray(norm) / low))
    return int(np.argmin(norm[:top + 1])), top


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
    top, num = int(np.argmax(norm)), plots.number
    if top == 0:
        if rebuild_factor(run) < 1.01:  # no rise the page could print
            return "only falls from its start (its peak is its start)"
        low, up = _trough(norm)
        return (f"falls from its start to {num(norm[low], 3)} by step {steps[low]}, then rises "
                f"{num(norm[up] / norm[low], 3)} times, to {num(norm[up], 3)} by step {steps[up]}")
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


OMNIGROK = ("this book's test of Omnigrok's large start; Liu et al. 2023 (the LU mechanism: the "
            "training loss is low at every norm above the Goldilocks zone, so a network started "
            "above it fits at its large norm, and weight decay then walks the norm down into the "
            "zone; they induce grokking so on MNIST, IMDb and QM9; their MNIST script's defaults: "
            "an MLP under MSE, AdamW with ηλ = 10⁻⁴ a step, the initial weights x7)")


def large_start_claims(scaled: dict) -> dict:
    """Omnigrok's large start on every seed of ``scaled`` ``{seed: {scale: run}}`` (with the
    large start at Omnigrok's slower decay under ``SLOW_KEY``), one row of two parts, shown (at
    the smoke profile's budget the x8 run does not grok): with this recipe's decay the norm at
    the fit step is below ``FALLS_BEFORE_FIT`` of the start (against the same start at a
    hundredth of the decay, Omnigrok's regime, which fits at its large norm), and the run groks
    later than x1 (against a change of seed alone)."""
    big = LARGE_START
    falls = evidence.Claim(
        f"the x{big:g} run's norm falls before its fit step", OMNIGROK, asserted=False,
        fmt="{:.2f}x".format, window=f"the x{big:g} runs from the start to their fit steps",
        measure=lambda r: fit_over_start(r[big]), control_measure=lambda r: fit_over_start(r[SLOW_KEY]),
        test=evidence.Test("<", FALLS_BEFORE_FIT, "FALLS_BEFORE_FIT: the norm at the fit step over "
                                                  "the start", scale="log"),
        control=f"the same x{big:g} start with its weight decay x{SLOW_DECAY:g} (Omnigrok's "
                "regime: ηλ = 10⁻⁴ a step), measured the same way")
    return evidence.joint(
        f"From Omnigrok's large start, x{big:g} (above the memorizing peak), this recipe's weight "
        f"decay takes the norm down before the network fits (below {FALLS_BEFORE_FIT:g}x its "
        "start at the fit step), where at Omnigrok's slower decay it fits at its large norm; "
        "and the network generalizes later than from x1", OMNIGROK,
        {f"norm at the fit step over the start, x{big:g}:": evidence.judge(falls, scaled, scaled),
         f"grok step, x{big:g} over x1:": evidence.judge(later_claim(scaled, big, OMNIGROK),
                                                         {s: s for s in scaled})},
        control=f"the x{big:g} start at a hundredth of the decay; a change of seed alone at x1: "
                "each fails its part's test",
        window=f"the x{big:g} runs to their fit steps; the grok steps of x{big:g} and x1",
        asserted=False)


def large_start_facts(scaled: dict, n0) -> dict[str, str]:
    """The glued numbers of the page's paragraph on the large start, on one seed's ``scaled``
    ``{scale: run}`` and the x1 run's norm descent ``n0`` (:func:`~.algorithm.norm_descent`):
    the scale and start (above the x1 run's memorizing peak or not), the norm's course with the
    training accuracy at its lowest, the fit step against the x1 run's and the norm there, the
    decay time 1/(ηλ) against the fit, where the norm is built back to against the x4 run's
    peak, the same start at Omnigrok's slower decay, the grok step with the norm there, and
    where the x1 run's norm moves after its grok step."""
    r, first, mid, n = scaled[LARGE_START], scaled[1.0], scaled.get(NORM_BUILT), plots.number
    slow, h, cfg = scaled.get(SLOW_KEY), r.history, r.config
    norm, steps = list(h["weight_norm"]), list(h.steps)
    low, up = _trough(norm)
    eta_lam = cfg.lr * cfg.weight_decay
    fit, fit1, one = r.fit_step, first.fit_step, lambda v: f"{v:.1f}"  # noqa: E731
    if fit is None:
        fit_vs = f"does not fit within its {n(cfg.steps)} steps"
    else:
        fit_vs = (f"fits at step {n(fit)}, "
                  + (f"{n(fit / fit1, 2)} times later than" if fit1 and fit > fit1 else "no later than")
                  + f" the first run's {n(fit1)}, at a norm of {one(norm_at(r, fit))}, "
                  f"{fit_over_start(r):.2f} of its start")
    if r.grok_step is None:
        grok = (f"does not grok within its {n(cfg.steps)} steps (test accuracy "
                f"{h['test_acc'][-1]:.0%} at the end)")
    else:
        grok = (f"groks at step {n(r.grok_step)}, where its norm is {one(norm_at(r, r.grok_step))}: "
                f"a factor {n(zone_factor(r, first), 3)} from the {one(norm_at(first, first.grok_step))} "
                "at which the first run groks")
    after = [v for t, v in zip(first.history.steps, first.history["weight_norm"])
             if first.grok_step is not None and t >= first.grok_step]
    at_low = h["train_acc"][low] if "train_acc" in h else math.nan
    peak4 = max(mid.history["weight_norm"]) if mid is not None else math.nan
    return dict(
        large_init=f"{LARGE_START:g}", large_start=one(norm[0]),
        large_kind=f"{'above' if norm[0] > n0.peak else 'not above'} the first run's memorizing "
                   f"peak, {one(n0.peak)}",
        large_course=norm_rise(r), large_low_acc=f"{at_low:.0%}", large_fit_vs=fit_vs,
        large_clock=n(eta_lam, 3), large_tau=n(1 / eta_lam, 3) if eta_lam > 0 else "—",
        large_tau_vs=("shorter than" if fit is not None and eta_lam > 0 and 1 / eta_lam < fit
                      else "no shorter than"),
        large_rebuilt=(f"{n(norm[up] / peak4, 3)} times the 4x run's peak, {one(peak4)}"
                       if up > low and math.isfinite(peak4) else "no rebuilt peak"),
        large_grok=grok, slow_decay=f"{SLOW_DECAY:g}", falls_bar=f"{FALLS_BEFORE_FIT:g}",
        slow_fit=("—" if slow is None else
                  f"does not fit within its {n(slow.config.steps)} steps" if slow.fit_step is None else
                  f"fits at step {n(slow.fit_step)} at a norm of {one(norm_at(slow, slow.fit_step))}, "
                  f"{fit_over_start(slow):.2f} of its start, and "
                  + ("does not grok within the budget" if slow.grok_step is None
                     else f"groks at step {n(slow.grok_step)}")),
        first_after=(f"between {one(min(after))} and {one(max(after))}" if after else "—"),
        mid_grok_norm=("—" if mid is None or mid.grok_step is None
                       else one(norm_at(mid, mid.grok_step))))


def norm_figure(runs: dict, title: str = ""):
    """Omnigrok's lens: the weight norm (left) and the test accuracy (right) against step, for
    runs from different initial scales (``{scale: GrokRun}``, as
    :func:`~.algorithm.omnigrok_runs` gives per seed, labelled "init x<scale>"; or
    ``{label: GrokRun}``); each run's grok step marked."""
    fig = plots.subplots(1, 2, titles=("weight norm ‖θ‖", "test accuracy"), title=title)
    for i, (name, r) in enumerate(runs.items()):
        name = name if isinstance(name, str) else f"init x{name:g}"
        color = plots.PALETTE[i % len(plots.PALETTE)]
        h = r.history
        x = np.maximum(np.asarray(h.steps, dtype=float), 1)
        fig.add_scatter(x=x, y=h["weight_norm"], name=name, line=dict(color=color), row=1, col=1)
        fig.add_scatter(x=x, y=h["test_acc"], name=name, line=dict(color=color), showlegend=False,
                        row=1, col=2)
        if r.grok_step is not None:
            fig.add_scatter(x=[max(r.grok_step, 1)] * 2, y=[0, 1], mode="lines", showlegend=False,
                            line=dict(color=color, dash="dot", width=1), hoverinfo="skip",
                            row=1, col=2)
    fig.update_xaxes(type="log", title_text="step")
    fig.update_layout(hovermode="x unified")
    return fig
