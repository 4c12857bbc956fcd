"""One network, six phenomena, the claims: the claims rows with their thresholds (each written
once, here), ``page_claims`` (the page's table) and ``published_claims``. The page's numbers
(what the prose glues, ``*_facts``) live in :mod:`.facts`."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .. import evidence, plots, results
from ..grokking.claims import GROKS
from ..grokking.science import GROK_ACC, plateau_steps
from .experiments import GRID_FILE, CapstoneGrid, Curve, GridRow, clock_fit, grid_budget
from .facts import (
    PLATEAU_PARTS, _at, _show, muon_phase, plateau_part, rounding, rounding_factor, settle_text,
)
from .science import NC1_DROP

__all__ = ["page_claims", "published_claims", "RISE", "RANK_FALL", "LAZY"]


# ============================================================================ claims
# Thresholds of the asserted rows, once: each row is judged on several seeds.
RISE = 0.3       # "the input weights become sparse": the Fourier concentration climbs by this
RANK_FALL = 0.1  # "the hidden weights lower in rank": the normalized effective rank falls by this
LAZY = 1.2       # "a lazier start delays generalization": the largest scale's grok step over the
#                  smallest's, on every seed, above this and above the seeds' own spread
CLOCK_SLOPE = 4 / 3  # "grok step ∝ τ": the log-log slope within this factor of 1 (3/4 to 4/3)
CLOCK_R2 = 0.8      # ... and the fit explains this share of the log grok steps' variance
FLATTEN = 1.1       # "AdamW's update spectrum flattens": this book's bar, the update's rank / n
#                     at the grok step at least 10% above the fit step's (1.01x is no flattening)


def _steps(t, budget: int) -> str:
    """A step, or "not reached within N steps" (never Python's None)."""
    return f"step {t}" if t is not None else f"not reached within {budget:,} steps"


def _nan(v) -> float:
    return float("nan") if v is None else float(v)


def _lazy_row(rows: list[GridRow], where: str, budget: int, asserted: bool = True,
              noise: float = 1.0) -> dict:
    """Kumar et al.'s direction on ``rows`` (one per initial scale and seed, AdamW), judged by
    the engine: per seed the grok step at the largest scale over the smallest (a run that
    never groks at the largest, where the smallest does, counts at the budget: a lower
    bound), above LAZY; the
    control, measured the same way, is what a change of seed alone does at scale 1 (the
    largest ratio of another seed's grok step over this seed's); the noise, the larger of the
    seeds' spread of the ratio and ``noise``, the factor by which rounding alone moves a grok
    step (:func:`~.facts.rounding_factor`; 1 where it was not measured)."""
    scales = sorted({r.init_scale for r in rows})
    lo, hi = scales[0], scales[-1]
    seeds = sorted({r.seed for r in rows})
    t = {(r.init_scale, r.seed): r.grok_step for r in rows}
    ratio = {s: (budget / t[lo, s] if t.get((hi, s)) is None and t.get((lo, s)) else
                 _nan(t[hi, s] / t[lo, s] if t.get((hi, s)) and t.get((lo, s)) else None))
             for s in seeds}
    swap = {s: max((t[1.0, o] / t[1.0, s] for o in seeds if o != s and t.get((1.0, o))
                    and t.get((1.0, s))), default=math.nan) for s in seeds}
    test = evidence.Test(">", LAZY, f"LAZY: grok step at x{hi:g} over x{lo:g}", scale="log")
    spread = test.spread(list(ratio.values()))
    floor = (max(spread, math.log10(noise)) if noise > 1 or len(seeds) > 1 else math.nan)
    fmt = lambda v: f"{v:.2f}x"  # noqa: E731
    grok = "; ".join(f"x{sc:g}: " + ", ".join("—" if t.get((sc, s)) is None else str(t[sc, s])
                                              for s in seeds) for sc in scales)
    c = evidence.Claim(
        "A lazier start (larger initial weights) delays generalization", "Kumar et al. 2024",
        measure=ratio.get, control_measure=swap.get, test=test, noise=lambda s: floor,
        control="a change of seed alone at x1 (the largest ratio of another seed's grok step "
                "over this seed's), measured the same way"
                + (f"; the noise includes the factor by which rounding alone moves a grok step "
                   f"({noise:.3g}x: the same cell made on this page and in the grid, the "
                   f"largest ratio)"
                   if noise > 1 else "")
                + ". Kumar et al.'s laziness is a fixed output multiplier under gradient descent; "
                "here every parameter is scaled and AdamW's decay shrinks it, so this tests the "
                "direction only",
        window=f"the whole budget, {budget:,} steps", fmt=fmt, asserted=asserted)
    row = evidence.judge(c, {s: s for s in seeds}, {s: s for s in seeds}).row()
    row["measured here"] = (f"{where}: grok step at x{hi:g} over x{lo:g}: {row['measured here']} "
                            f"(grok steps per seed, — not within {budget:,} steps, counted at the budget, a lower "
                            f"bound on the ratio: {grok})")
    return row


def _acc_at_grok(pair) -> float:
    """``pair``: a run's curves (``steps``, ``test_acc``) and a reference grok step: the test
    accuracy at the last evaluation up to that step, at least GROK_ACC when the run has
    generalized by then (NaN without a reference grok step)."""
    curve, grok = pair
    at = [a for t, a in zip(curve.steps, curve.test_acc) if grok is not None and t <= grok]
    return at[-1] if at else float("nan")


def _curve(r) -> Curve:
    """A run's test-accuracy curve as :func:`_acc_at_grok` reads it (none without a run)."""
    return (Curve([], [], [], []) if r is None else
            Curve(list(r.history.steps), [], list(r.history["test_acc"]), weight_rms=[]))


def _arm_curve(arm: dict) -> Curve:
    """A lottery arm's curves as :func:`_acc_at_grok` reads them."""
    return Curve(arm["steps"], arm["train_acc"], arm["test_acc"], weight_rms=[])


MUON_SOONER = evidence.Test(">=", GROK_ACC, f"GROK_ACC: test accuracy at AdamW's grok step on "
                                            f"the same seed, {GROK_ACC:.0%} for generalized")


def _muon_row(rows: dict, curves: dict, budget: int) -> dict:
    """Tveit et al.'s direction on the grid, judged by the engine without a grok step Muon may
    not have: per seed Muon's test accuracy at the step AdamW groks on that seed (GROK_ACC:
    Muon has generalized no later); the control, the AdamW run on the seed that groks earliest
    among the others, read at the same step (a change of seed alone). ``rows`` and ``curves``:
    ``{seed: (Muon's, AdamW's)}`` grid rows and curves. Each Muon run is labelled by the
    grokking chapter's phase (an *unfinished* run is still climbing at the budget's end)."""
    grok = {s: a.grok_step for s, (_, a) in rows.items()}
    other = {s: min((o for o in grok if o != s), key=lambda o: grok[o] or math.inf, default=s)
             for s in grok}  # the other seed on which AdamW groks earliest
    lr_a, lr_m = next(iter(rows.values()))[1].lr, next(iter(rows.values()))[0].muon_lr or "?"
    phases = "; ".join(f"seed {s}: Muon {m.phase or '?'} (grok "
                       f"{_steps(m.grok_step, budget)}, final test {m.final_test_acc:.0%}), "
                       f"AdamW grok {_steps(a.grok_step, budget)}" for s, (m, a) in rows.items())
    c = evidence.Claim(
        "Muon groks sooner than AdamW", "Tveit et al. 2025", measure=_acc_at_grok,
        test=MUON_SOONER, fmt=lambda v: f"{v:.0%}", asserted=False,
        control="AdamW on another seed (the one that groks earliest), read at this seed's AdamW "
                f"grok step; one learning rate each (AdamW η {lr_a:g}, tuned by the grokking "
                f"chapter; Muon η {lr_m}, not tuned here: not a matched comparison, which section "
                "4's row is); Muon trains the hidden matrix after the first layer, AdamW the "
                "first layer (an embedding of one-hot residues) and the head; Tveit et al. train "
                "a transformer with RMSNorm. This control cannot discriminate: AdamW read at "
                "its own seed's grok step passes the test by definition, and another seed's "
                "AdamW run, at that step, often has too (the row's control values say on which "
                "seeds); the grid holds no run without "
                "weight decay that would fail it, so the row is shown, not asserted",
        window=f"grid, λ = 1, init x1, up to AdamW's grok step ({budget:,} steps in all)")
    row = evidence.judge(c, {s: (curves[s][0], grok[s]) for s in grok},
                         {s: (curves[other[s]][1], grok[s]) for s in grok}).row()
    row["measured here"] = f"Muon's test accuracy at AdamW's grok step: {row['measured here']} ({phases})"
    return row


def _grid_claims(payload: CapstoneGrid, noise: float = 1.0) -> list[dict]:
    """The rows that rest on the precomputed grid: the initial scale (``noise``: as in
    :func:`_lazy_row`) and Muon at λ = 1."""
    rows = payload.rows
    budget = grid_budget(payload)
    adam = [r for r in rows if r.optimizer == "adamw" and r.weight_decay == 1.0]
    # a question the page asks, as of the live sweep: on the published grid's three seeds the
    # larger scale groks later on every seed, but a change of seed alone at x1 moves a grok
    # step by more than LAZY (the engine: does not discriminate)
    out = [_lazy_row(adam, "precomputed grid, AdamW, λ = 1", budget, asserted=False,
                     noise=noise)]
    cell = {(r.optimizer, r.seed): (r, c) for r, c in zip(rows, payload.curves)
            if r.weight_decay == 1.0 and r.init_scale == 1.0}
    seeds = sorted({s for o, s in cell if ("muon", s) in cell and ("adamw", s) in cell})
    if seeds:
        out.append(_muon_row({s: (cell["muon", s][0], cell["adamw", s][0]) for s in seeds},
                             {s: (cell["muon", s][1], cell["adamw", s][1]) for s in seeds}, budget))
    return out


def _shuffled(cells: list[GridRow]) -> list[GridRow]:
    """The clock's null: the same cells with their τ permuted among them (a fixed
    permutation), so that τ no longer belongs to the run that grokked."""
    order = np.random.default_rng(0).permutation(len(cells))
    return [replace(r, tau=cells[i].tau) for r, i in zip(cells, order)]


def _slope_factor(cells: list[GridRow]) -> float:
    """How far the log-log slope of grok step on τ is from 1, as a factor (≥ 1; inf for a
    slope at or below 0, NaN without a fit)."""
    slope = clock_fit(cells)["slope"]
    return (float("nan") if not math.isfinite(slope) else
            math.inf if slope <= 0 else 10 ** abs(math.log10(slope)))


def _clock_claim(clock: list[GridRow], where: str = "") -> dict:
    """The clock's row, judged per seed in two parts: the fit of log grok step on log τ must
    have a slope within a factor CLOCK_SLOPE of 1 (the clock alone sets the wait) and r² at
    least CLOCK_R2, where the same cells with τ shuffled among them (:func:`_shuffled`) must
    fail both; the measurement says what the weight RMS did in the cells
    (:func:`~.facts.settle_text`)."""
    fit = clock_fit(clock)
    fails = len(fit["failed"]) + len(fit["off"])
    seeds = sorted({r.seed for r in clock})
    cells = {s: [r for r in clock if r.seed == s] for s in seeds}
    null = {s: _shuffled(c) for s, c in cells.items()}
    statement = "The 1/(ηλ) clock predicts when the plateau ends (grok step ∝ τ)"
    window = (f"each seed's cells, slope within a factor {CLOCK_SLOPE:.3f} of 1 (3/4 to 4/3) and "
              f"r² ≥ {CLOCK_R2:g}")
    parts = {}
    for label, measure, test, fmt in (
            ("slope off 1 by", _slope_factor,
             evidence.Test("<", CLOCK_SLOPE, "CLOCK_SLOPE: the slope's factor from 1", scale="log"),
             lambda v: "no positive slope" if math.isinf(v) else f"{v:.3f}x"),
            ("r²", lambda c: clock_fit(c)["r2"],
             evidence.Test(">=", CLOCK_R2, "CLOCK_R2: r² of the log-log fit"), lambda v: f"{v:.2f}")):
        c = evidence.Claim(statement, "the weight-decay chapter's clock", measure=measure, test=test,
                           control="the same cells, τ shuffled", window=window, fmt=fmt)
        parts[label] = evidence.judge(c, cells, null)
    return evidence.joint(
        statement,
        "the weight-decay chapter's clock (Kosson et al. 2024 derive τ for scale-invariant "
        "weights; they do not study grokking); Liu et al. 2023 tie grokking to the weight norm",
        parts, asserted=False, window=window,
        note=(f"{where + ': ' if where else ''}all seeds pooled: {fit['n']} of {len(clock)} cells "
              f"grokked; log-log slope {fit['slope']:.2f}, r² {fit['r2']:.2f}; {fails} cells "
              f"never grok or sit 2x off the line; the weight RMS: {settle_text(clock)}"),
        control="the same cells with τ shuffled among them (a fixed permutation), which must "
                "fail each test; this MLP has no normalization, so the derivation's condition "
                "does not hold")


def _change(key: str, sign: int, part: str):
    """The measure of one half of a plateau row on a pair ``(run, reference)``: ``sign`` x the
    change of ``key`` on ``run`` over the steps :func:`~.facts.plateau_part` reads on ``reference`` (a
    control is read over its treatment's steps)."""
    def measure(pair):
        r, ref = pair
        a, b = plateau_part(ref, part)
        return sign * (_at(r, key, b) - _at(r, key, a)) if a is not None else float("nan")
    return measure


def _plateau_row(firsts: dict, nodecay: dict, part: str = "fit to grok") -> dict:
    """Nanda et al.'s reorganization, measured over one stretch of each run
    (:func:`~.facts.plateau_part`): ``"fit to grok"`` (the plateau and the climb: the page asserts
    it) or ``"plateau"`` alone (fit step to leaving chance: a question, not asserted; at the
    cpu profile most of the change happens in the climb). One row judged in two parts, per
    seed: the Fourier concentration's rise above RISE and the hidden weights' rank's fall
    above RANK_FALL, while the same run without weight decay (``nodecay``), over the same
    steps, must fail the same test."""
    seeds = list(firsts)
    if set(nodecay) != set(seeds):
        raise ValueError(f"nodecay: the control runs' seeds {sorted(nodecay)} are not the "
                         f"claim seeds {sorted(seeds)}")
    claim, window = PLATEAU_PARTS[part]
    claim += (f" (the Fourier concentration up by more than {RISE:g}, the rank / n down by more "
              f"than {RANK_FALL:g})")
    treat = {s: (r, r) for s, r in firsts.items()}
    ctrl = {s: (nodecay[s], r) for s, r in firsts.items()}
    parts = {}
    for key, sign, test, fmt, what in (
            ("fourier", 1, evidence.Test(">", RISE, "RISE: the Fourier concentration's rise"),
             lambda v: f"{v:+.2f}", "Fourier concentration's rise"),
            ("weight_rank", -1, evidence.Test(">", RANK_FALL, "RANK_FALL: the fall of the hidden "
                                                              "weights' rank / n"),
             lambda v: f"{v:.2f}".replace("-0.00", "0.00"), "fall of the hidden weights' rank / n")):
        c = evidence.Claim(claim, "Nanda et al. 2023", measure=_change(key, sign, part), test=test,
                           control="the same run without weight decay", window=window, fmt=fmt)
        parts[what] = evidence.judge(c, treat, ctrl)
    steps = "; ".join(f"seed {s}: steps {_show(a)}–{b}" if a is not None else
                      f"seed {s}: no fit step" for s, (a, b) in
                      ((s, plateau_part(r, part)) for s, r in firsts.items()))
    return evidence.joint(
        claim, "Nanda et al. 2023 (the Fourier features); the rank is this page's measure", parts,
        asserted=part == "fit to grok", note=steps,
        control="the same run without weight decay (λ = 0), over the same steps: it must fail "
                f"each test (a rise above +{RISE:g}, a fall above {RANK_FALL:g})",
        window=window)


MASK_MATTERS = evidence.Claim(
    "The ticket rewound to θ₀ generalizes, and its controls (a random mask, the ticket "
    "reinitialized) do not: the mask and the values both matter",
    "Frankle & Carbin 2019", measure=lambda a: a["final_test_acc"], asserted=False,
    test=evidence.Test(">=", GROK_ACC, f"GROK_ACC: the final test accuracy, {GROK_ACC:.0%} for "
                                       "generalized"), fmt=lambda v: f"{v:.0%}",
    control="the random mask from θ₀ and the reinitialized ticket (the ticket rewound to θ₀'s "
            "controls: each starts from initial weights), measured the same way; the ticket "
            "rewound to θ_k has no controls from its own start and is shown beside them only",
    window="at the end of the budget; one seed: no noise floor, so a pass reads within noise")


def _mask_row(lot: dict, budget: int, seed: int) -> dict:
    """:data:`MASK_MATTERS`, one part per control: the θ₀ ticket must generalize, it must not."""
    arms = lot["arms"]
    t0 = {seed: arms["ticket, rewound to θ₀"]}
    tk = arms["ticket, rewound to θ_k"]
    return evidence.joint(
        MASK_MATTERS.statement, MASK_MATTERS.paper,
        {f"ticket rewound to θ₀ against the {name}:": evidence.judge(MASK_MATTERS, t0, {seed: arms[arm]})
         for name, arm in (("random mask", "random mask, θ₀"),
                           ("reinitialized ticket", "ticket, reinitialized"))},
        control=MASK_MATTERS.control, window=MASK_MATTERS.window, asserted=False,
        note=f"the ticket rewound to step {lot['rewind_step']}: test {tk['final_test_acc']:.0%}, "
             f"grok {_steps(tk['grok_step'], budget)}")


def _over_window(key: str, how):
    """A measure on a pair ``(run, reference)``: ``how(values at the reference's fit step and
    grok step, values in between)`` of ``key`` on ``run`` (NaN without a run or a window)."""
    def measure(pair):
        r, ref = pair
        if r is None or ref.fit_step is None or ref.grok_step is None:
            return float("nan")
        a, b = ref.fit_step, ref.grok_step
        between = [v for t, v in zip(r.timeline["step"], r.timeline[key]) if a <= t <= b]
        return how(_at(r, key, a), _at(r, key, b), between)
    return measure


UPDATE_FLATTENS = evidence.Claim(
    "AdamW's update spectrum flattens before generalization",
    "a question of this page (no paper claims it)",
    measure=_over_window("update_rank", lambda fit, grok, _: grok / fit),
    test=evidence.Test(">=", FLATTEN, "FLATTEN: the rank / n of the update at the grok step over "
                                      f"the fit step's, this book's bar ({FLATTEN:g}x: a rise "
                                      "of 10% or more)", scale="log"),
    control="the same seed's run without weight decay (it memorizes), over the same steps",
    window="from the fit step to the grok step of AdamW's best run", fmt=lambda v: f"{v:.2f}x",
    asserted=False)
NC1_FALLS = evidence.Claim(
    f"With weight decay the features collapse (NC1 falls by {1 / NC1_DROP:g}x), no later than "
    "the test accuracy rises",
    "this page's question; Jacot et al. 2025 prove collapse with MSE and weight decay for "
    "networks that end in at least two linear layers: NC1 from low training error and balanced "
    "linear layers (proven with a wide first layer), orthogonal class means only with bounded "
    "conditioning of the features, proven for nearly optimal solutions or ones stable under "
    "large learning rates (this MLP uses cross-entropy and ends in one linear layer)",
    measure=_over_window("nc1", lambda fit, grok, between: min(between, default=math.nan) / fit),
    test=evidence.Test("<=", NC1_DROP, "NC1_DROP: NC1's lowest up to the grok step over its value "
                                       "at the fit step", scale="log"),
    control="the same seed's run without weight decay, over the same steps",
    window="from the fit step to the grok step", fmt=lambda v: f"{v:.2f}x", asserted=False)
TICKET_KEEPS_UP = evidence.Claim(
    "A ticket pruned from the grokked network and rewound generalizes with little or no delay",
    "Frankle & Carbin 2019; Frankle et al. 2020",
    measure=lambda pairs: max(_acc_at_grok(p) for p in pairs), test=evidence.Test(
        ">=", GROK_ACC, f"GROK_ACC: test accuracy at the dense run's grok step, {GROK_ACC:.0%} for "
                        "generalized"),
    control="the random mask from θ₀, the same density, read at the same step",
    window="up to the dense run's grok step; the better of the tickets rewound to θ₀ and to θ_k",
    fmt=lambda v: f"{v:.0%}", asserted=False)


def _tuned_muon_row(opt: dict, nodecay, budget: int) -> dict:
    """Section 4's Muon row (each optimizer at its best learning rate, one seed), judged by the
    engine as the grid's is (:func:`_muon_row`): Muon's test accuracy at AdamW's grok step,
    against GROK_ACC, so that no grok step Muon does not have is compared; the control, the
    same seed's run without weight decay (it memorizes and does not generalize), read at the
    same step. One seed: without a noise floor a pass reads "within noise"."""
    a, m = opt["adamw"]["best"], opt["muon"]["best"]
    tried = lambda o: ", ".join(f"{lr:g}" for lr, _ in opt[o]["tried"])  # noqa: E731
    edge = "".join(f"; {name}'s best is at the edge of its range (a wider one could do better)"
                   for name, o, lr in (("AdamW", "adamw", a.config.lr), ("Muon", "muon", m.config.muon_lr))
                   if len(opt[o]["tried"]) > 1 and lr in (min(v for v, _ in opt[o]["tried"]),
                                                          max(v for v, _ in opt[o]["tried"])))
    c = evidence.Claim(
        "Muon, each optimizer at its best learning rate, groks sooner than AdamW",
        "Tveit et al. 2025 (their direction; each optimizer at its best learning rate, tuned "
        "alike, is this page's protocol, not theirs)", measure=_acc_at_grok, test=MUON_SOONER, fmt=lambda v: f"{v:.0%}",
        asserted=False, window=f"up to AdamW's grok step ({budget:,} steps in all)",
        control="the same seed's AdamW run without weight decay (it memorizes), read at the same "
                "step; each optimizer tuned alike: the same number of learning rates spaced the "
                "same way around its own, every run at the same clock ηλ; Muon trains the hidden "
                "matrix after the first layer, AdamW the rest (the first layer is an embedding "
                "of one-hot residues)")
    row = evidence.judge(c, {a.seed: (_curve(m), a.grok_step)},
                         {a.seed: (_curve(nodecay), a.grok_step)}).row()
    row["measured here"] = (
        f"Muon's test accuracy at AdamW's grok step: {row['measured here']} (AdamW, best η "
        f"{a.config.lr:g} of {tried('adamw')}, grok {_steps(a.grok_step, budget)}; Muon, best "
        f"η {m.config.muon_lr:g} of {tried('muon')}: {muon_phase(m)}; final test accuracy "
        f"{a.history.last('test_acc'):.0%} and {m.history.last('test_acc'):.0%}{edge})")
    return row


def page_claims(firsts: dict, nodecay: dict, inits: list[GridRow], clock: list[GridRow],
                opt: dict, lot: dict, coll: dict, payload: CapstoneGrid | None = None) -> list[dict]:
    """The claims table: each question's prediction from its chapter or paper beside this
    notebook's measurement. ``firsts``: section 1's run on each claim seed (``{seed: run}``,
    the page's seed first); ``nodecay``: the plateau row's control on those seeds
    (:func:`~.experiments.plateau_control`); ``inits`` :func:`~.experiments.init_sweep` on
    those seeds; ``payload`` adds the rows of the precomputed grid."""
    first = firsts[next(iter(firsts))]
    p, budget = first.config.p, first.config.steps
    at = lambda t: "—" if t is None else str(t)  # noqa: E731
    per = "; ".join(f"seed {s}: fit {at(v['fit'])}, leaves chance {at(v['leave'])}, {GROK_ACC:.0%} "
                    f"{at(v['grok'])}" for s, v in ((s, plateau_steps(r.history, p)) for s, r in firsts.items()))
    # the grokking chapter's row, on this network: the plateau against the same seed's run
    # without weight decay, which has no climb and so no plateau that ends
    row = evidence.judge(GROKS, firsts, {s: nodecay[s] for s in firsts}).row()
    row["measured here"] += f" (steps, — not within {budget:,}: {per})"
    rows = [row]
    rows.append(_plateau_row(firsts, nodecay, "fit to grok"))
    rows.append(_plateau_row(firsts, nodecay, "plateau"))
    # the prose asks this of the live sweep rather than asserting it: at the cpu profile the
    # larger scale groks 1.77x to 1.92x later on every seed, but a change of seed alone at
    # scale 1 moves a grok step by 1.35x, beyond LAZY (the engine: does not discriminate)
    # the live sweep mixes runs made alone (scale 1, reused from section 1) and trained
    # together (the other scales), the grid's cells one at a time: rounding alone moves a
    # grok step by up to this factor, measured on the cells both made
    noise = rounding_factor(rounding(payload, firsts, inits))
    rows.append(_lazy_row(inits, "live sweep", budget, asserted=False, noise=noise))
    rows.append(_clock_claim(clock, "live grid"))
    a = opt["adamw"]["best"]
    rows.append(_tuned_muon_row(opt, nodecay.get(a.seed), budget))
    rows.append(evidence.judge(UPDATE_FLATTENS, {a.seed: (a, a)},
                               {a.seed: (nodecay.get(a.seed), a)}).row())
    arms = lot["arms"]
    dense = arms["dense"]["grok_step"]
    row = evidence.judge(TICKET_KEEPS_UP, {first.seed: [(_arm_curve(arms[n]), dense) for n in (
        "ticket, rewound to θ₀", "ticket, rewound to θ_k")]},
        {first.seed: [(_arm_curve(arms["random mask, θ₀"]), dense)]}).row()
    fmt = lambda a: f"test {a['final_test_acc']:.0%}, grok {_steps(a['grok_step'], budget)}"  # noqa: E731
    row["measured here"] += (f" ({lot['density']:.0%} of the weights; dense "
                             f"{fmt(arms['dense'])}; rewound to θ₀ {fmt(arms['ticket, rewound to θ₀'])}; "
                             f"to step {lot['rewind_step']} {fmt(arms['ticket, rewound to θ_k'])})")
    rows.append(row)
    rows.append(_mask_row(lot, budget, first.seed))
    row = evidence.judge(NC1_FALLS, {first.seed: (first, first)},
                         {first.seed: (nodecay.get(first.seed), first)}).row()
    row["measured here"] += (f" (NC1 {coll['nc1_fit']:.3g} at the fit step, {coll['nc1_grok']:.3g} "
                             f"at the grok step, {coll['nc1_end']:.3g} at the end)")
    rows.append(row)
    if payload is not None:
        rows += _grid_claims(payload, noise) + [_clock_claim(payload.clock, "precomputed grid")]
    return rows


def published_claims() -> list[dict]:
    """The claims rows computed only from ``data/capstone_grid.json`` (what the published
    page shows): the initial scale, Muon against AdamW and the clock, on the grid."""
    payload, _ = results.load(GRID_FILE, as_=CapstoneGrid)
    return _grid_claims(payload) + [_clock_claim(payload.clock, "precomputed grid")]
