"""One network, six phenomena, the claims: the rows with their thresholds (each written once,
here), ``page_claims`` (the page's table) and ``published_claims``. The numbers the prose
glues live in :mod:`.facts`."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .. import evidence, plots, results
from ..grokking.claims import GROKS
from ..grokking.science import GROK_ACC, plateau_steps
from .experiments import GRID_FILE, CapstoneGrid, GridRow, clock_fit, grid_budget
from .facts import (
    CLOCK_BAND, CLOCK_R2, PLATEAU_PARTS, _at, _show, grok_vs_text, muon_phase, plateau_cells,
    plateau_part, rounding, rounding_factor, settle_text,
)
from .science import NC1_DROP

__all__ = ["page_claims", "published_claims", "RISE", "RANK_FALL", "LAZY"]

# Thresholds of the asserted rows, once: each row is judged on several seeds.
RISE = 0.3       # "the input weights become sparse": the Fourier concentration climbs by this
RANK_FALL = 0.1  # "the hidden weights lower in rank": the normalized effective rank falls by this
LAZY = 1.2       # "a lazier start delays generalization": the largest scale's grok step over the
#                  smallest's, on every seed, above this and above the seeds' own spread
CLOCK_SLOPE = CLOCK_BAND  # "grok step − fit step ∝ τ": the log-log slope within this factor of
#                          1, 3/4 to 4/3 (written in .facts, whose sentence on the slope reads it)
# CLOCK_R2 (0.8, from .facts, whose sentences read it): the fit explains this share of the
#   log waits' variance
FLATTEN = 1.1       # "AdamW's update spectrum flattens": this book's bar, the update's rank / n
#                     at the grok step at least 10% above the fit step's (1.01x is no flattening)


def _steps(t, budget: int) -> str:
    """A step, or "not reached within N steps" (never Python's None)."""
    return f"step {t}" if t is not None else f"not reached within {budget:,} steps"


def _row(claim: evidence.Claim, treat: dict, ctrl: dict, note: str, lead: str = "") -> dict:
    """The engine's row of ``claim``, its measurement led by ``lead`` and followed by ``note``."""
    row = evidence.judge(claim, treat, ctrl).row()
    row["measured here"] = f"{lead}{row['measured here']} ({note})"
    return row


def _lazy_row(rows: list[GridRow], where: str, budget: int, noise: float = 1.0) -> dict:
    """Kumar et al.'s direction on ``rows`` (one per initial scale and seed, AdamW): per seed
    the grok step at the largest scale over the smallest, above LAZY (a run that never groks
    at the largest, where the smallest does, counts at the budget: a lower bound); the noise,
    the larger of the seeds' spread and ``noise``, the factor by which rounding alone moves a
    grok step (:func:`~.facts.rounding_factor`; 1 where it was not measured). Shown, not
    asserted: on the grid's seeds a change of seed alone at x1 moves a grok step by more
    than LAZY."""
    scales = sorted({r.init_scale for r in rows})
    lo, hi = scales[0], scales[-1]
    seeds = sorted({r.seed for r in rows})
    t = {(r.init_scale, r.seed): r.grok_step for r in rows}
    ratio = {s: ((budget if t.get((hi, s)) is None else t[hi, s]) / t[lo, s]
                 if t.get((lo, s)) and t.get((hi, s)) != 0 else math.nan) for s in seeds}
    swap = {s: max((t[1.0, o] / t[1.0, s] for o in seeds if o != s and t.get((1.0, o))
                    and t.get((1.0, s))), default=math.nan) for s in seeds}
    test = evidence.Test(">", LAZY, f"LAZY: grok step at x{hi:g} over x{lo:g}", scale="log")
    floor = (max(test.spread(list(ratio.values())), math.log10(noise))
             if noise > 1 or len(seeds) > 1 else math.nan)
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
        window=f"the whole budget, {budget:,} steps", fmt=lambda v: f"{v:.2f}x", asserted=False)
    return _row(c, {s: s for s in seeds}, {s: s for s in seeds},
                f"grok steps per seed, — not within {budget:,} steps, counted at the budget, a "
                f"lower bound on the ratio: {grok}", f"{where}: grok step at x{hi:g} over x{lo:g}: ")


def _acc_at_grok(curve) -> float:
    """``curve``: a run's ``(steps, test_acc, reference grok step)``: the test accuracy at the
    last evaluation up to that step (NaN without a reference grok step)."""
    steps, acc, grok = curve
    at = [a for t, a in zip(steps, acc) if grok is not None and t <= grok]
    return at[-1] if at else float("nan")


def _muon_row(statement: str, paper: str, treat: dict, ctrl: dict, detail: str, **claim) -> dict:
    """Tveit et al.'s direction, judged without a grok step Muon may not have: per seed Muon's
    test accuracy at AdamW's grok step (:func:`_acc_at_grok`) against GROK_ACC (Muon
    has generalized no later); ``claim``: its control and window."""
    c = evidence.Claim(statement, paper, measure=_acc_at_grok, fmt=lambda v: f"{v:.0%}",
                       asserted=False, test=evidence.Test(
                           ">=", GROK_ACC, f"GROK_ACC: test accuracy at AdamW's grok step on "
                                           f"the same seed, {GROK_ACC:.0%} for generalized"),
                       **claim)
    return _row(c, treat, ctrl, detail, "Muon's test accuracy at AdamW's grok step: ")


def _grid_claims(payload: CapstoneGrid, noise: float = 1.0) -> list[dict]:
    """The rows that rest on the precomputed grid: the initial scale, Muon at λ = 1 (its
    control, a change of seed alone: AdamW on the other seed that groks earliest) and the
    clock."""
    budget = grid_budget(payload)
    adam = [r for r in payload.rows if r.optimizer == "adamw" and r.weight_decay == 1.0]
    out = [_lazy_row(adam, "precomputed grid, AdamW, λ = 1", budget, noise=noise)]
    cell = {(r.optimizer, r.seed): (r, c) for r, c in zip(payload.rows, payload.curves)
            if r.weight_decay == 1.0 and r.init_scale == 1.0}
    seeds = sorted({s for o, s in cell if ("muon", s) in cell and ("adamw", s) in cell})
    if seeds:
        grok = {s: cell["adamw", s][0].grok_step for s in seeds}
        other = {s: min((o for o in seeds if o != s), key=lambda o: grok[o] or math.inf,
                        default=s) for s in seeds}
        m0, a0 = cell["muon", seeds[0]][0], cell["adamw", seeds[0]][0]
        phases = "; ".join(
            f"seed {s}: Muon {m.phase or '?'} (grok {_steps(m.grok_step, budget)}, final test "
            f"{m.final_test_acc:.0%}), AdamW grok {_steps(grok[s], budget)}"
            for s, m in ((s, cell["muon", s][0]) for s in seeds))
        out.append(_muon_row(
            "Muon groks sooner than AdamW", "Tveit et al. 2025",
            {s: (cell["muon", s][1].steps, cell["muon", s][1].test_acc, grok[s]) for s in seeds},
            {s: (cell["adamw", o][1].steps, cell["adamw", o][1].test_acc, grok[s])
             for s, o in other.items()}, phases,
            control="AdamW on another seed (the one that groks earliest), read at this seed's "
                    f"AdamW grok step; one learning rate each (AdamW η {a0.lr:g}, tuned by the "
                    f"grokking chapter; Muon η {m0.muon_lr or '?'}, not tuned here: not a "
                    "matched comparison, which section 4's row is); Muon trains the hidden "
                    "matrix after the first layer, AdamW the first layer (an embedding of "
                    "one-hot residues) and the head; Tveit et al. train a transformer with "
                    "RMSNorm; Tian's code (his repository yuandong-tian/understanding) trains a "
                    "two-layer network without normalization, with Adam by default, and its "
                    "Muon option puts Muon on the input layer, which this page gives to AdamW. "
                    "This control "
                    "cannot discriminate: AdamW read at its own seed's "
                    "grok step passes the test by definition, and another seed's AdamW run, at "
                    "that step, often has too (the row's control values say on which seeds); "
                    "the grid holds no run without weight decay that would fail it, so the row "
                    "is shown, not asserted",
            window=f"grid, λ = 1, init x1, up to AdamW's grok step ({budget:,} steps in all)"))
    # asserted: the wait after the fit step holds on each of the grid's seeds (the prose
    # says so, glued from this fit)
    return out + [_clock_claim(payload.clock, "precomputed grid", asserted=True)]


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


CLOCK_STATEMENT = ("The 1/(ηλ) clock sets the wait after the fit step (grok step − fit step "
                   "∝ τ)")


def _clock_claim(clock: list[GridRow], where: str, asserted: bool = False) -> dict:
    """The clock's row, judged per seed in two parts on the wait after the fit step
    (:func:`~.facts.plateau_cells`): its log-log fit on τ must have a slope within a factor
    CLOCK_SLOPE of 1 (the clock alone sets the wait) and r² at least CLOCK_R2, where the same
    cells with τ shuffled (:func:`_shuffled`) must fail both. The fit of the grok step itself
    is shown beside it, its slope set against the wait's only where both fits reach CLOCK_R2
    (:func:`~.facts.grok_vs_text`). ``asserted``: the
    precomputed grid's row, which holds on each of its seeds; the live grid's is shown."""
    fit, grok = clock_fit(plateau_cells(clock)), clock_fit(clock)
    seeds = sorted({r.seed for r in clock})
    cells = {s: plateau_cells([r for r in clock if r.seed == s]) for s in seeds}
    null = {s: plateau_cells(_shuffled([r for r in clock if r.seed == s])) for s in seeds}
    band = f"{plots.number(1 / CLOCK_SLOPE, 3)} to {plots.number(CLOCK_SLOPE, 3)}"  # as .facts says it
    window = (f"each seed's cells, slope within a factor {plots.number(CLOCK_SLOPE, 3)} of 1 ({band}) and "
              f"r² ≥ {CLOCK_R2:g}, of log(grok step − fit step) on log τ")
    parts = {label: evidence.judge(evidence.Claim(
        CLOCK_STATEMENT, "the weight-decay chapter's clock", measure=measure, test=test,
        fmt=fmt, control="the same cells, τ shuffled", window=window, asserted=asserted),
        cells, null)
        for label, measure, test, fmt in (
            ("slope off 1 by", _slope_factor,
             evidence.Test("<", CLOCK_SLOPE, "CLOCK_SLOPE: the slope's factor from 1", scale="log"),
             lambda v: "no positive slope" if math.isinf(v) else f"{v:.3f}x"),
            ("r²", lambda c: clock_fit(c)["r2"],
             evidence.Test(">=", CLOCK_R2, "CLOCK_R2: r² of the log-log fit"), lambda v: f"{v:.2f}"))}
    fits = [r.fit_step for r in clock if r.fit_step is not None]
    return evidence.joint(
        CLOCK_STATEMENT,
        "the weight-decay chapter's clock (Kosson et al. 2024 derive τ for scale-invariant "
        "weights; they do not study grokking); Liu et al. 2023 tie grokking to the weight norm",
        parts, asserted=asserted, window=window,
        note=(f"{where}: all seeds pooled: {fit['n']} of {len(clock)} cells "
              f"grokked after their fit step; log-log slope of the wait {fit['slope']:.2f}, "
              f"r² {fit['r2']:.2f}; {len(fit['failed']) + len(fit['off'])} cells never grok "
              f"or sit 2x off the line; the grok step itself on τ: slope {grok['slope']:.2f}, "
              f"r² {grok['r2']:.2f} (it adds the fit step, steps {min(fits, default='—')} to "
              f"{max(fits, default='—')}; its slope is {grok_vs_text(fit, grok)}); the "
              f"weight RMS: {settle_text(clock)}"),
        control="the same cells with τ shuffled among them (a fixed permutation), which must "
                "fail each test; this MLP has no normalization, so the derivation's condition "
                "does not hold")


def _over_window(key: str, how, window=lambda ref: (ref.fit_step, ref.grok_step)):
    """A measure on a pair ``(run, reference)``: ``how(values at the two ends of the
    reference's window, values in between)`` of ``key`` on ``run``, the window by default the
    fit step to the grok step (NaN without a run or a window)."""
    def measure(pair):
        r, ref = pair
        a, b = window(ref)
        if r is None or a is None or b is None:
            return float("nan")
        between = [v for t, v in zip(r.timeline["step"], r.timeline[key]) if a <= t <= b]
        return how(_at(r, key, a), _at(r, key, b), between)
    return measure


def _plateau_row(firsts: dict, nodecay: dict, part: str = "fit to grok") -> dict:
    """Nanda et al.'s reorganization over one stretch of each run (:func:`~.facts.plateau_part`):
    ``"fit to grok"`` (the plateau and the climb: the page asserts it) or ``"plateau"`` alone
    (a question: at the cpu profile most of the change happens in the climb). Two parts, per
    seed: the Fourier concentration's rise above RISE and the rank / n's fall above RANK_FALL,
    where the same run without weight decay (``nodecay``), over the same steps, must fail."""
    if set(nodecay) != set(firsts):
        raise ValueError(f"nodecay: the control runs' seeds {sorted(nodecay)} are not the "
                         f"claim seeds {sorted(firsts)}")
    claim, window = PLATEAU_PARTS[part]
    claim += (f" (the Fourier concentration up by more than {RISE:g}, the rank / n down by more "
              f"than {RANK_FALL:g})")

    parts = {what: evidence.judge(evidence.Claim(
        claim, "Nanda et al. 2023", test=test, fmt=fmt, measure=_over_window(
            key, lambda a, b, _, sign=sign: sign * (b - a), lambda ref: plateau_part(ref, part)),
        control="the same run without weight decay", window=window),
        {s: (r, r) for s, r in firsts.items()}, {s: (nodecay[s], r) for s, r in firsts.items()})
        for key, sign, test, fmt, what in (
            ("fourier", 1, evidence.Test(">", RISE, "RISE: the Fourier concentration's rise"),
             lambda v: f"{v:+.2f}", "Fourier concentration's rise"),
            ("weight_rank", -1, evidence.Test(">", RANK_FALL, "RANK_FALL: the fall of the hidden "
                                                              "weights' rank / n"),
             lambda v: f"{v:.2f}".replace("-0.00", "0.00"), "fall of the hidden weights' rank / n"))}
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


def _flatten_row(a, control) -> dict:
    """:data:`UPDATE_FLATTENS` in two parts (:data:`FLATTEN_PARTS`): the whole update of the
    hidden matrix of AdamW's best run ``a`` and the Adam step in it, each against the same
    seed's run without weight decay (``control``) over ``a``'s window, with the weights' own
    rank over that window beside them (late in training the step lies mostly along the
    weights, so it reads their spectrum)."""
    return evidence.joint(
        UPDATE_FLATTENS.statement, UPDATE_FLATTENS.paper,
        {label: evidence.judge(claim, {a.seed: (a, a)}, {a.seed: (control, a)})
         for label, claim in FLATTEN_PARTS},
        control=UPDATE_FLATTENS.control, window=UPDATE_FLATTENS.window, asserted=False,
        note=f"the weights' own rank / n over the window: {WEIGHTS_OVER_WINDOW((a, a)):.2f}x")


def _mask_row(lot: dict, budget: int, seed: int) -> dict:
    """:data:`MASK_MATTERS`, one part per control: the θ₀ ticket must generalize, it must not."""
    arms = lot["arms"]
    tk = arms["ticket, rewound to θ_k"]
    return evidence.joint(
        MASK_MATTERS.statement, MASK_MATTERS.paper,
        {f"ticket rewound to θ₀ against the {name}:": evidence.judge(
            MASK_MATTERS, {seed: arms["ticket, rewound to θ₀"]}, {seed: arms[arm]})
         for name, arm in (("random mask", "random mask, θ₀"),
                           ("reinitialized ticket", "ticket, reinitialized"))},
        control=MASK_MATTERS.control, window=MASK_MATTERS.window, asserted=False,
        note=f"the ticket rewound to step {lot['rewind_step']}: test {tk['final_test_acc']:.0%}, "
             f"grok {_steps(tk['grok_step'], budget)}")


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
# the same question of the optimizer's own step: the update with the decay term -ηλθ taken out
# (science.decoupled_step); the control, without decay, has no such term, so its two are one
STEP_FLATTENS = replace(
    UPDATE_FLATTENS, measure=_over_window("step_rank", lambda fit, grok, _: grok / fit),
    test=replace(UPDATE_FLATTENS.test, name="FLATTEN, on the step: its rank / n at the grok "
                                            "step over the fit step's, this book's bar "
                                            f"({FLATTEN:g}x)"))
WEIGHTS_OVER_WINDOW = _over_window("weight_rank", lambda fit, grok, _: grok / fit)
FLATTEN_PARTS = (("the whole update:", UPDATE_FLATTENS),
                 ("the Adam step alone, the decay term taken out:", STEP_FLATTENS))
NC1_FALLS = evidence.Claim(
    f"After the fit step, with weight decay the features collapse (NC1 falls by "
    f"{1 / NC1_DROP:g}x), no later than the test accuracy rises",
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
    """Section 4's Muon row (each optimizer at its best learning rate, one seed)."""
    a, m = opt["adamw"]["best"], opt["muon"]["best"]
    tried = lambda o: ", ".join(f"{lr:g}" for lr, _ in opt[o]["tried"])  # noqa: E731
    edge = "".join(f"; {name}'s best is at the edge of its range (a wider one could do better)"
                   for name, o, lr in (("AdamW", "adamw", a.config.lr), ("Muon", "muon", m.config.muon_lr))
                   if len(opt[o]["tried"]) > 1 and lr in (min(v for v, _ in opt[o]["tried"]),
                                                          max(v for v, _ in opt[o]["tried"])))
    run = lambda r: ((), (), a.grok_step) if r is None else (  # noqa: E731
        r.history.steps, r.history["test_acc"], a.grok_step)
    return _muon_row(
        "Muon, each optimizer at its best learning rate, groks sooner than AdamW",
        "Tveit et al. 2025 (their direction; each optimizer at its best learning rate, tuned "
        "alike, is this page's protocol, not theirs)",
        {a.seed: run(m)}, {a.seed: run(nodecay)},
        f"AdamW, best η {a.config.lr:g} of {tried('adamw')}, grok {_steps(a.grok_step, budget)}; "
        f"Muon, best η {m.config.muon_lr:g} of {tried('muon')}: {muon_phase(m)}; final test "
        f"accuracy {a.history.last('test_acc'):.0%} and {m.history.last('test_acc'):.0%}{edge}",
        window=f"up to AdamW's grok step ({budget:,} steps in all)",
        control="the same seed's AdamW run without weight decay (it memorizes), read at the same "
                "step; each optimizer tuned alike: the same number of learning rates spaced the "
                "same way around its own, every run at the same clock ηλ; Muon trains the hidden "
                "matrix after the first layer, AdamW the rest (the first layer is an embedding "
                "of one-hot residues)")


def page_claims(firsts: dict, nodecay: dict, inits: list[GridRow], clock: list[GridRow],
                opt: dict, lot: dict, coll: dict, payload: CapstoneGrid | None = None) -> list[dict]:
    """The claims table. ``firsts``: section 1's run on each claim seed (the page's seed
    first); ``nodecay``: their :func:`~.experiments.plateau_control`; ``payload`` adds the
    rows of the precomputed grid."""
    first = firsts[next(iter(firsts))]
    p, budget = first.config.p, first.config.steps
    at = lambda t: "—" if t is None else str(t)  # noqa: E731
    per = "; ".join(f"seed {s}: fit {at(v.fit)}, leaves chance {at(v.leave)}, {GROK_ACC:.0%} "
                    f"{at(v.grok)}" for s, v in ((s, plateau_steps(r.history, p)) for s, r in firsts.items()))
    # the grokking chapter's row, on this network: the plateau against the same seed's run
    # without weight decay, which has no climb and so no plateau that ends
    rows = [_row(GROKS, firsts, {s: nodecay[s] for s in firsts},
                 f"steps, — not within {budget:,}: {per}")]
    rows += [_plateau_row(firsts, nodecay, part) for part in ("fit to grok", "plateau")]
    # the live sweep mixes runs made alone (scale 1, reused from section 1) and trained
    # together (the other scales), the grid's cells one at a time: rounding alone moves a
    # grok step by up to this factor, measured on the cells both made
    noise = rounding_factor(rounding(payload, firsts, inits))
    rows.append(_lazy_row(inits, "live sweep", budget, noise=noise))
    rows.append(_clock_claim(clock, "live grid"))
    a = opt["adamw"]["best"]
    rows.append(_tuned_muon_row(opt, nodecay.get(a.seed), budget))
    rows.append(_flatten_row(a, nodecay.get(a.seed)))
    arms = lot["arms"]
    dense = arms["dense"]["grok_step"]
    arm = lambda n: (arms[n]["steps"], arms[n]["test_acc"], dense)  # noqa: E731
    fmt = lambda a: f"test {a['final_test_acc']:.0%}, grok {_steps(a['grok_step'], budget)}"  # noqa: E731
    rows.append(_row(
        TICKET_KEEPS_UP, {first.seed: [arm("ticket, rewound to θ₀"), arm("ticket, rewound to θ_k")]},
        {first.seed: [arm("random mask, θ₀")]},
        f"{lot['density']:.0%} of the weights; dense {fmt(arms['dense'])}; rewound to θ₀ "
        f"{fmt(arms['ticket, rewound to θ₀'])}; to step {lot['rewind_step']} "
        f"{fmt(arms['ticket, rewound to θ_k'])}"))
    rows += [_mask_row(lot, budget, first.seed), _row(
        NC1_FALLS, {first.seed: (first, first)}, {first.seed: (nodecay.get(first.seed), first)},
        f"NC1 {coll['nc1_fit']:.3g} at the fit step, {coll['nc1_grok']:.3g} at the grok step, "
        f"{coll['nc1_end']:.3g} at the end")]
    return rows + (_grid_claims(payload, noise) if payload is not None else [])


def published_claims() -> list[dict]:
    """The rows computed only from ``data/capstone_grid.json`` (what the published page shows)."""
    return _grid_claims(results.load(GRID_FILE, as_=CapstoneGrid)[0])
