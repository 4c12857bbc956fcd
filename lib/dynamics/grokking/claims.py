"""Grokking, the claims: what the papers and the page's "What to notice" sentences say, beside
what this run measured, each row judged by :mod:`dynamics.evidence` with the threshold its
sentence names (here, or in :mod:`.facts` where the prose glues it too, with the measures of the
phase grid and the algorithm). :func:`page_claims` is every row of the chapter's table,
:func:`published_claims` the rows that rest on the precomputed phase diagram in ``data/``."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .. import evidence, plots
from .algorithm import LARGE_START, NORM_BUILT, SLOW_KEY, clock_measures, initial_model, norm_descent
from .experiments import PhaseRow, phase_data, restricted_at_test_half, speedups
from .facts import (
    CONTROL_FRAC, CONTROL_WD, HALF_LOSS, REMEDY_SPEEDUP, SINGLE, _column_gap, _column_keeps, _crit_drop,
    _crit_pct, _fit_error, _good, _inner_grok, _not_memorizing,
    _null_rows_below, _null_tail, _rising, _rows_below,
    _shuffled, by_seed, clock_by_pair, clock_fit, descent_share, median_grid, pct0, phase_facts,
)
from .omnigrok import (
    FAR_BELOW, RISES_ABOVE_START, grok_over as _over, large_start_claims, later_claim,
    peak_over_own_start, peak_ratio_over_scale,
)
from .records import NormDescent
from .science import (
    GROK_ACC, PLATEAU, fourier_spectrum, input_weights, plateau_steps, spectral_concentration,
)

__all__ = ["page_claims", "section1_claims", "phase_claims", "published_claims", "DIV_WITHIN",
           "UNIT_OVER_LAYER", "PEAK_BEFORE", "NOISE_MARGIN", "EXCLUDED_RISE", "CONC_GAIN", "NORM_FALL",
           "CORRECTS", "LOSS_RISE", "restricted_excluded_rows", "corrupted_rows", "TEST_LOSS_RISES",
           "algorithm_claims", "peak_over_own_start", "ROUND", "NULL_OVER", "CLUSTER", "TEST_LOSS_TURNS", "RESTRICTED_LEADS", "EXCLUDED_RISES",
           "halfway_step"]

DIV_WITHIN = 2.0        # "a similar schedule": division's grok step within this x addition's, either way
UNIT_OVER_LAYER = 0.2   # "each unit reads few frequencies": its concentration this above the layer's
PEAK_BEFORE = 0.5       # "well before": the test loss peaks before this x the step test accuracy leaves chance
LOSS_RISE = 1.5         # "the test loss rises": its peak at least this x its value at step 0
NOISE_MARGIN = 0.1      # corrupted labels: "memorizes fewer" by at least this share
MEMORIZED = 0.9         # corrupted labels: "memorizes" them, predicts at least this share of them
MAJORITY = 0.5          # "generalizes" / "ignores the corruption": more than half right
FIT_ERROR = 0.2         # "a fixed part plus clock periods": every cell within this of the fit
UNLEARN_LOSS = 10.0     # "far above": the strongest decay's training loss this x the weaker ones'
EXCLUDED_RISE = 1.3     # "excluded loss rises": its highest after the fit step this x its value there
CONC_GAIN = 0.2         # "become sparse in the Fourier basis": top-10% share up this much, fit to grok
NORM_FALL = 0.95        # "the weight norm falls": at the grok step at most this x its fit-step value
ROUND = 0.2             # "on a circle": the radius's spread (std / mean) at most this
NULL_OVER = 1.5         # "most of the energy": off the keys at most 1/1.5 of the uniform null's share
CLUSTER = 2.0           # "the neurons cluster on the keys": twice chance (the keys' share of the frequencies)
CORRECTS = 0.05         # "corrects some": the larger decay predicts this share more true labels
SOONER = 1.2            # "Muon groks sooner": AdamW's grok step this x Muon's (above a seed change)
BETTER = 0.05           # "generalizes better": the larger decay's test accuracy this much higher
CRIT_ROWS = 1           # "below a critical fraction": more than this many fractions below the smallest that
#                         generalizes (one alone could be chance; the null expects well under one)
CRIT_DROP = 0.05        # "the critical fraction falls": it ends at least this much lower
MOST = 0.5              # "most of its fall is made": more than this share of the norm's descent

NO_CELL_OFF = evidence.Test("<", 1, "NO_CELL_OFF: fewer than one cell that breaks the statement")

_ratio, _ratio2, _x1, _n = "{:.2f}x".format, "{:.2f}".format, "{:.1f}x".format, "{:.0f}".format
_signed, _signed_pct = "{:+.2f}".format, "{:+.0%}".format
_END = "at the end of the budget"


def _rise(values: list) -> float:
    """The highest of ``values`` over the first (1 for values that only fall)."""
    return max(values) / values[0] if values and values[0] > 0 else math.nan


def _peak_over_leave(pair) -> float:
    """``(run, ref)``: ``run``'s test-loss peak step over ``ref``'s step of leaving chance."""
    run, ref = pair
    leave = plateau_steps(ref.history, ref.config.p).leave
    peak = run.history.steps[int(np.argmax(run.history["test_loss"]))]
    return peak / leave if leave else math.nan


def _excluded_rise(pm, train: bool = False) -> float:
    """:func:`_rise` of the excluded loss (``train``: the training loss) from the fit step on."""
    steps, values = (pm.history_steps, pm.train_loss) if train else (pm.step, pm.excluded_loss)
    fit = pm.fit_step
    return _rise([v for t, v in zip(steps, values) if fit is not None and t >= fit])


def _plateau(run) -> float:
    """The step test accuracy leaves chance over the fit step, in a run that then groks (NaN
    where it does not: no climb, no plateau that ends)."""
    ps = plateau_steps(run.history, run.config.p)
    return float(ps.plateau) if ps.grok is not None else math.nan


def _grok_ratio(pair) -> float:
    """``(run, ref)``: ``ref``'s grok step over ``run``'s."""
    return _over(pair[1].grok_step, pair[0].grok_step)


# the runs' and the algorithm's measures


def _plateau_change(key: str, ratio: bool):
    """``(run, ref) ->`` ``key`` (the weight norm, the Fourier top-10% share) at ``ref``'s grok
    step against at ``run``'s fit step: their ratio (``ratio``) or difference."""
    def measure(pair) -> float:
        run, ref = pair
        if not ref.grok_step or run.fit_step is None:
            return math.nan
        at = dict(zip(run.history.steps, run.history[key]))
        a, b = at.get(ref.grok_step, math.nan), at.get(run.fit_step, math.nan)
        return a / b if ratio else a - b
    return measure


def _init_gap(pair) -> float:
    """``(model, p)``: the model's top-10% Fourier share per unit minus the whole layer's."""
    units = fourier_spectrum(input_weights(*pair), per_unit=True)
    return float(spectral_concentration(units) - spectral_concentration(units.sum(1)))


def _off_keys(initial: bool = False):
    """The share of the energy off the key frequencies over the uniform null's (the trained
    network's share, or with ``initial`` the initial one's, on the same keys)."""
    return lambda m: (1 - (m.init_key_share if initial else m.key_share)) / (1 - m.null)


def _descent(n: NormDescent) -> float:
    """The share of the weight norm's descent made at the grok step, where the norm peaks after
    the fit step and before the grok step (NaN where it does not)."""
    ok = (n.grok_step is not None and n.fit_step is not None
          and n.fit_step <= n.peak_step < n.grok_step)
    return float(n.done) if ok else float("nan")


# ============================================================================ section 1
TEST_LOSS_RISES = evidence.Claim(
    "The test loss rises while the network memorizes", "Nanda et al. 2023",
    measure=lambda r: _rise(list(r.history["test_loss"])),
    control_measure=lambda r: _rise(list(r.history["train_loss"])),
    test=evidence.Test(">=", LOSS_RISE, "LOSS_RISE: the highest test loss over its value at step 0",
                       scale="log"),
    control="the training loss of the same run, its highest over its value at step 0: it cannot "
            "fail (a full-batch training loss is highest at step 0), and no run here has a "
            "network that does not memorize to serve instead, so the row is shown, not asserted",
    window="the whole run", fmt=_ratio, asserted=False)
TEST_LOSS_TURNS = evidence.Claim(
    "The test loss peaks well before the test accuracy moves",
    "this page's reading of section 1's figure", measure=_peak_over_leave,
    test=evidence.Test("<", PEAK_BEFORE, "PEAK_BEFORE: the test loss's peak step over the step "
                                         "test accuracy leaves chance", scale="log"),
    control="the run without weight decay on the same seed (it does not generalize): its test "
            "loss's peak step over the decay run's step of leaving chance",
    window="the whole run; leaving chance: test accuracy above 1/p + CHANCE_MARGIN", fmt=_ratio2)
GROKS = evidence.Claim(
    "Test accuracy stays near chance long after training accuracy fits, then climbs to ~100% "
    "(grokking)", "Power et al. 2022", measure=_plateau,
    test=evidence.Test(">=", PLATEAU, "PLATEAU: the step test accuracy leaves chance (1/p + "
                                      "CHANCE_MARGIN) over the fit step, in a run that then groks",
                       scale="log"),
    control="the run without weight decay on the same seed (no climb: no plateau that ends)",
    window="from the fit step to the end of the budget", fmt=_x1)
DIV_SCHEDULE = evidence.Claim(
    "Division groks on a similar schedule to addition", "Power et al. 2022",
    measure=lambda pair: max(_grok_ratio(pair), 1 / _grok_ratio(pair)),
    test=evidence.Test("<=", DIV_WITHIN, "DIV_WITHIN: a / b's grok step within this factor of "
                                         "a + b's, either way", scale="log"),
    control="a + b with 3x the weight decay on the same seed (a different schedule), its grok "
            "step against a + b's, either way (it must fail the same test)",
    window="the whole budget", fmt=_ratio2,
    asserted=False)  # the 3x-decay control can pass DIV_WITHIN: the prose glues the verdict
NO_DECAY_STAYS = evidence.Claim(
    "Without weight decay the network memorizes and does not generalize",
    "Nanda et al. 2023; Liu et al. 2023",
    measure=lambda run: run.history.last("test_acc") if run.fit_step is not None else math.nan,
    test=evidence.Test("<", GROK_ACC, "GROK_ACC: the final test accuracy of a fitted run"),
    control="the same split with weight decay (the first row)", window="the whole budget",
    fmt=pct0)
_PLATEAU_PART = dict(paper="Nanda et al. 2023", control="the run without decay",
                     window="from the fit step to the grok step")
NORM_FALLS = evidence.Claim(
    "the weight norm falls", measure=_plateau_change("weight_norm", True), **_PLATEAU_PART,
    test=evidence.Test("<=", NORM_FALL, "NORM_FALL: the weight norm at the grok step over at "
                                        "the fit step"), fmt=_ratio2)
SPARSER = evidence.Claim(
    "the input weights become sparse in the Fourier basis", **_PLATEAU_PART,
    measure=_plateau_change("fourier_top10", False), fmt=_signed,
    test=evidence.Test(">=", CONC_GAIN, "CONC_GAIN: the top-10% share of the input weights' "
                                        "Fourier energy, grok step minus fit step"))
_SEED_CHANGE = ("a change of seed alone: the baseline of another seed in the remedy's place (the "
                "largest ratio over the other seeds), measured the same way")
# shown, not asserted: a change of seed alone moves the grok step by nearly REMEDY_SPEEDUP
SPEEDUPS = {name: evidence.Claim(
    claim, paper, measure=_grok_ratio, asserted=False, fmt=_x1, control=_SEED_CHANGE,
    control_measure=lambda pairs: max(map(_grok_ratio, pairs), default=math.nan),
    test=evidence.Test(">=", REMEDY_SPEEDUP, "REMEDY_SPEEDUP: the baseline's grok step over the "
                                             "remedy's", scale="log"),
    window="the whole budget") for name, claim, paper in (
        ("strong", "More weight decay (3x), faster grokking", "Liu et al. 2023"),
        ("perp_grad", "⊥Grad generalizes without weight decay, sooner than the baseline",
         "Prieto et al. 2025"))}


def section1_claims(multi: dict) -> list[dict]:
    """Section 1's rows on several seeds (:func:`~.experiments.seed_runs`), each judged against
    the run without weight decay on the same seed (its own row: against the run with it); the
    speed-ups (3x decay, ⊥Grad) against a change of seed alone (shown)."""
    dec, none, j = multi["decay"], multi["none"], evidence.judge
    pair = lambda runs: {s: (runs[s], r) for s, r in dec.items()}  # noqa: E731
    rows = [j(GROKS, dec, none).row(), j(TEST_LOSS_RISES, dec, dec).row(),
            j(TEST_LOSS_TURNS, pair(dec), pair(none)).row()]
    if "div" in multi and "strong" in multi:
        rows.append(j(DIV_SCHEDULE, pair(multi["div"]), pair(multi["strong"])).row())
    rows.append(j(NO_DECAY_STAYS, none, dec).row())
    rows.append(evidence.joint(
        "Between the fit step and the grok step the weight norm falls and the input weights "
        "become sparse in the Fourier basis", "Nanda et al. 2023",
        {"weight norm at the grok step / at the fit step:": j(NORM_FALLS, pair(dec), pair(none)),
         "top-10% share of the input weights' Fourier energy, grok step minus fit step:":
             j(SPARSER, pair(dec), pair(none))},
        control="the run without weight decay on the same seed, from its fit step to the decay "
                "run's grok step (it must fail both tests)",
        window="from the fit step to the grok step"))
    swap = {s: [(dec[o], dec[s]) for o in dec if o != s] for s in dec}
    rows += [j(claim, pair(multi[name]), swap).row() for name, claim in SPEEDUPS.items()
             if name in multi]
    return rows


def page_claims(multi: dict, pm: dict, speed, corrupted: dict, grid_rows: list[PhaseRow],
                live_rows: list[PhaseRow] | None = None, grid_lr: float | None = None,
                scaled: dict | None = None, opt: dict | None = None) -> list[dict]:
    """Every row of the chapter's claims table: ``multi`` section 1's runs on the claim seeds,
    ``pm`` their progress measures, ``speed`` the remedies' rows or their speed-ups, the
    corrupted-label runs, the precomputed phase diagram (``grid_lr`` its learning rate), the
    live one, and with ``scaled`` and ``opt`` the algorithm's (:func:`algorithm_claims`)."""
    dec, j = multi["decay"], evidence.judge
    rows, seed = section1_claims(multi), min(dec)
    if isinstance(speed, list):  # the remedies' rows
        speed = speedups(speed, dec[seed].config.steps)
    if live_rows:
        at = lambda keep: {seed: (live_rows, keep)}  # noqa: E731
        wd1 = min({r.weight_decay for r in live_rows}, key=lambda w: abs(w - 1.0))
        rows += [j(LIVE_MEMORIZES, at(lambda r: r.weight_decay == 0),
                   at(lambda r: r.weight_decay > 0)).row(),
                 j(LIVE_GENERALIZES, at(lambda r: r.weight_decay == wd1),
                   at(lambda r: r.weight_decay == 0)).row()]
    rows += phase_claims(grid_rows, lr=grid_lr) + restricted_excluded_rows(pm)
    rows.append(j(UNIT_READS_FEW, pm, {s: (initial_model(dec[s]), dec[s].config.p) for s in pm}).row())
    swap = max((_grok_ratio((r, dec[seed])) for s, r in dec.items() if s != seed), default=math.nan)
    rows += [j(claim, {seed: speed[name]}, {seed: swap if name == "grokfast" else speed["no_wd"]}).row()
             for name, claim in REMEDY_ROWS.items() if name in speed and "no_wd" in speed]
    rows += corrupted_rows(corrupted)
    if scaled is not None:
        clock = {s: clock_measures(r.model, initial_model(r), r.config.p, r.config.op)
                 for s, r in dec.items()}
        rows += algorithm_claims(
            clock, {s: norm_descent(r) for s, r in dec.items()}, scaled, opt,
            halfway={s: descent_share(r, halfway_step(r)) for s, r in dec.items()})
    return rows


UNIT_READS_FEW = evidence.Claim(
    "Each unit reads few frequencies, the layer as a whole several", "Nanda et al. 2023",
    measure=lambda m: m.spectra["end"].concentration - m.spectra["end"].layer_concentration,
    control_measure=_init_gap, fmt=_signed, window="the end of the run",
    test=evidence.Test(">", UNIT_OVER_LAYER, "UNIT_OVER_LAYER: the input weights' top-10% "
                                             "Fourier share, per unit minus the whole layer's"),
    control="the initial network of the same seed (random weights), measured the same way")
_one = dict(asserted=False, window="the live run (one seed: no noise floor, so a pass reads "
                                   "within noise), the whole budget")
REMEDY_ROWS = {
    "grokfast": evidence.Claim(
        "Grokfast-EMA (α 0.98, λ 2) makes grokking faster (its paper: more than 50x, where the "
        "plateau lasts thousands of steps)", "Lee et al. 2024", fmt=_ratio, **_one,
        measure=lambda v: v.speedup if v.grokked else math.nan, control_measure=float,
        control=f"{_SEED_CHANGE} (section 1's baselines)",
        test=evidence.Test(">", 1.0, "the baseline's grok step over the remedy's", scale="log")),
    "stablemax": evidence.Claim(
        "StableMax groks without weight decay", "Prieto et al. 2025", **_one,
        control="the run without weight decay or any remedy on the same seed",
        measure=lambda v: v.grokked / v.runs, fmt=pct0,
        test=evidence.Test(">", MAJORITY, "MAJORITY: the share of its runs that grok"))}
LIVE_MEMORIZES = evidence.Claim(
    "Live grid: without weight decay every network memorizes", "Liu et al. 2023",
    measure=_not_memorizing, control="the cells with weight decay", **_one,
    test=NO_CELL_OFF)
LIVE_GENERALIZES = evidence.Claim(
    "Live grid: with weight decay 1 a large enough fraction generalizes", "Power et al. 2022",
    measure=lambda gk: sum(gk[1](r) and _good(r) for r in gk[0]),
    control="the cells without weight decay", **_one,
    test=evidence.Test(">", 0, "cells that generalize, at the decay nearest 1"))


# ============================================================================ corrupted labels
# the larger decay's run against the smaller's: the first two one row, the third another
_FLOOR = ("where both runs at the smaller decay memorize every wrong label and correct none, the "
          "seeds' difference is 0: measured, at its floor")
DECAY_PARTS = {label: evidence.Claim(
    label, "Doshi et al. 2024", test=evidence.Test(">", t, name), fmt=_signed_pct,
    measure=lambda pair, f=f: max((f(a, pair[1]) for a in pair[0]), default=math.nan),
    control="the smaller decay's run of another seed", window=_END, constant_control=floor)
    for label, f, t, name, floor in (
        ("memorized fewer", lambda a, b: b.final_memorized - a.final_memorized,
         NOISE_MARGIN, "NOISE_MARGIN: the share of the wrong labels memorized, fewer by", _FLOOR),
        ("corrected more", lambda a, b: a.final_corrected - b.final_corrected,
         CORRECTS, "CORRECTS: the corrupted pairs predicted with their true label, more by", _FLOOR),
        ("test accuracy higher by", lambda a, b: a.final_test_acc - b.final_test_acc,
         BETTER, "BETTER: the test accuracy, higher by", ""))}
_end = dict(fmt=pct0, window=_END, paper="Doshi et al. 2024")  # runs[0]: the smallest decay's
KEPT = evidence.Claim(
    "memorizes the corrupted labels", measure=lambda o: o.runs[0].final_memorized, **_end,
    control_measure=lambda o: o.runs[-1].final_memorized, control="the run at the largest weight decay",
    test=evidence.Test(">=", MEMORIZED, "MEMORIZED: the share of the wrong labels predicted"))
STILL = evidence.Claim(
    "test accuracy ends above half", measure=lambda o: o.runs[0].final_test_acc,
    control_measure=lambda o: o.runs[0].final_corrected,
    test=evidence.Test(">", MAJORITY, "MAJORITY: the accuracy on the pairs it did not see"), **_end,
    control="none that can fail: the same run on the corrupted training pairs against their "
            "true labels is near 0 by construction once it memorizes them, and no run here "
            "trains on the same corrupted data without weight decay; shown, not asserted")
IGNORES = evidence.Claim(
    f"Regularization corrects the corruption: at the largest weight decay the network predicts "
    f"the true label of more than {MAJORITY:.0%} of the corrupted training pairs", measure=lambda o: o.runs[-1].final_corrected,
    control_measure=lambda o: o.runs[0].final_corrected, asserted=False, **_end,
    test=evidence.Test(">", MAJORITY, "MAJORITY: the share of the corrupted training pairs "
                                      "predicted with their true label"),
    control="the run at the smallest weight decay (the largest's is judged)")


def halfway_step(run) -> int | None:
    """The step halfway from the weight norm's peak to the grok step (None: no grok step)."""
    return None if run.grok_step is None else (norm_descent(run).peak_step + run.grok_step) // 2


def corrupted_rows(corrupted: dict) -> list[dict]:
    """Section 4's rows on corrupted labels (``{seed: run_corrupted(...)}``): the smallest decay
    against the largest, the largest against a change of seed alone."""
    first, j, doshi = corrupted[min(corrupted)], evidence.judge, "Doshi et al. 2024"
    lo, hi = (f"weight decay {first.runs[i].weight_decay:g}" for i in (0, -1))
    ends = {s: ([o.runs[-1]], o.runs[0]) for s, o in corrupted.items()}
    swap = {s: ([corrupted[o].runs[0] for o in corrupted if o != s], o.runs[0])
            for s, o in corrupted.items()}
    parts = {label: j(c, ends, swap) for label, c in DECAY_PARTS.items()}
    better = parts.pop("test accuracy higher by")
    return [evidence.joint(
                f"A network memorizes at least {MEMORIZED:.0%} of the wrong labels while its test "
                f"accuracy ends above {MAJORITY:.0%}", doshi,
                {f"{first.noise:.0%} corrupted, {lo}: memorized": j(KEPT, corrupted, corrupted),
                 "test accuracy": j(STILL, corrupted, corrupted)},
                control=f"for 'memorizes', the run at {hi}; for 'test accuracy', {STILL.control}",
                window=_END, asserted=False),
            evidence.joint(
                "A larger weight decay memorizes fewer wrong labels and corrects some", doshi,
                {f"{hi} against {lo}: {label}": x for label, x in parts.items()}, window=_END,
                control=f"the run at {lo} of another seed in place of the run at {hi} (a change "
                        "of seed alone, the largest over the other seeds): it must fail each test"),
            evidence.joint("A larger weight decay generalizes better", doshi,
                           {f"{hi} against {lo}:": better}, window=_END, asserted=False,
                           control="as the row above's"),
            j(IGNORES, corrupted, corrupted).row()]


# ============================================================================ section 3
RESTRICTED_LEADS = evidence.Claim(
    "Restricted loss falls before the test loss does", "Nanda et al. 2023",
    measure=lambda pm: restricted_at_test_half(pm, level=HALF_LOSS),
    control_measure=lambda pm: restricted_at_test_half(pm, other=True, level=HALF_LOSS),
    test=evidence.Test("<", HALF_LOSS, "HALF_LOSS: the restricted loss over its fit-step value, "
                                       "read where the test loss first falls below HALF_LOSS "
                                       "of its own", scale="log"),
    control="the restricted loss on the other frequencies (the keys' complement), read the same way",
    window="from the fit step to the first evaluation where the test loss is below half its "
           "fit-step value", fmt=_ratio2,
    # shown, not asserted: at the cpu profile the lead's margin (median 0.38 against 0.5) is
    # within the seeds' spread (0.27 to 0.47); the prose glues the page's seed's value
    asserted=False)
EXCLUDED_RISES = evidence.Claim(
    "Excluded loss rises after the fit step", "Nanda et al. 2023",
    measure=_excluded_rise, control_measure=lambda pm: _excluded_rise(pm, train=True),
    test=evidence.Test(">=", EXCLUDED_RISE, "EXCLUDED_RISE: its highest after the fit step over "
                                            "its value there", scale="log"),
    control="the training loss of all the logits, over the same window: it cannot fail (a "
            "full-batch training loss only falls after the fit step); the fair control, the "
            "same exclusion of as many non-key frequencies, is not among the progress "
            "measures, so the row is shown, not asserted",
    window="after the fit step", fmt=_ratio, asserted=False)


def restricted_excluded_rows(pm: dict) -> list[dict]:
    """Section 3's rows on the restricted and excluded losses (``{seed: progress_measures}``)."""
    return [evidence.judge(c, pm).row() for c in (RESTRICTED_LEADS, EXCLUDED_RISES)]


# ============================================================================ the algorithm
_END_OF_RUN = dict(paper="Nanda et al. 2023", window="the end of the run")
KEYS_OVER_NULL = evidence.Claim(
    "The key frequencies carry most of the first layer's Fourier energy", "Nanda et al. 2023",
    measure=_off_keys(), control_measure=_off_keys(initial=True),
    test=evidence.Test("<=", 1 / NULL_OVER, "1/NULL_OVER: the share off the keys over the "
                                            "uniform null's"),
    control="the initial weights on the same keys, measured the same way",
    window="the end of the run; where the null leaves off the keys at most (1 - 1/NULL_OVER) of "
           "the energy (the keys a quarter of the frequencies or more) this is more than half",
    fmt=_ratio2)
ONE_FREQUENCY = evidence.Claim(
    "each neuron reads one frequency", measure=lambda m: m.single, **_END_OF_RUN,
    control_measure=lambda m: m.init_single, control="the initial network", fmt=pct0,
    test=evidence.Test(">=", SINGLE, "SINGLE: the median neuron's share of its energy at its "
                                     "top frequency"))
ON_KEYS = evidence.Claim(
    "the neurons cluster on the keys", measure=lambda m: m.on_keys / m.null, **_END_OF_RUN,
    control_measure=lambda m: m.init_on_keys / m.null, control="the initial network",
    test=evidence.Test(">=", CLUSTER, "CLUSTER: the share of the stronger half of the "
                                      "neurons whose top frequency is a key, over the keys' "
                                      "share of the frequencies", scale="log"), fmt=_ratio2)
CLOCK = evidence.Claim(
    "Projected on the cosine and sine of a key frequency, the residues lie on a circle (a clock)",
    measure=lambda m: m.spread, control_measure=lambda m: m.init_spread, **_END_OF_RUN,
    test=evidence.Test("<=", ROUND, "ROUND: the radius's spread (std / mean), median over the keys"),
    control="the initial weights in the same construction", fmt=_ratio2)
DESCENT = evidence.Claim(
    "Generalization arrives with the weight norm's descent: the norm peaks after the fit step, "
    "and by the grok step most of its fall to its value at the end is made",
    "Liu et al. 2023 (Omnigrok)", measure=_descent, control_measure=float,
    test=evidence.Test(">", MOST, "MOST: the share of the descent (peak − norm) / (peak − end) "
                                  "made at the grok step, where the norm peaks after the fit "
                                  "step and before it"),
    control="the same run's share read halfway from its norm's peak to its grok step (what a "
            "descent that does not single out the grok step would pass too)",
    fmt=pct0, window="from the peak of the norm to the median of the last three evaluations "
                     "(its value at the end)", asserted=False)  # the control passes: shown


def algorithm_claims(clock: dict, norms: dict, scaled: dict, opt: dict | None = None, *,
                     halfway: dict) -> list[dict]:
    """The rows of the section on the algorithm: ``clock`` ``{seed: clock_measures(...)}`` at
    the end of each seed's run, ``norms`` ``{seed: norm_descent(run)}`` with its control
    ``halfway`` ``{seed: descent_share(run, halfway_step(run))}``, ``scaled`` ``{seed: {scale:
    GrokRun}}`` (scale 1 the page's run), ``opt`` :func:`~.algorithm.optimizer_runs`."""
    j, seeds, ids = evidence.judge, sorted(clock), {s: s for s in scaled}
    keys = "; ".join(f"seed {s}: {len(clock[s].keys)} of {clock[s].K}" for s in seeds)
    big = NORM_BUILT  # the start below the memorizing peak; LARGE_START has its own row
    rival = dict(paper="this book", window=f"the {big:g}x run to its grok step, the first run to its end",
                 fmt=_ratio2, control_measure=lambda r: 1.0,
                 constant_control="the rival account's number, the same on every seed")
    kept = evidence.Claim(
        "the peak is not kept from the initial scale", **rival,
        measure=lambda r: peak_ratio_over_scale(r, big),
        test=evidence.Test("<", FAR_BELOW, f"FAR_BELOW: the peak norm at x{big:g} over at x1, "
                                           "over the ratio of their initial norms", scale="log"),
        control="set by the initial scale (an optimizer whose steps grow with the weights): the "
                f"peaks keep the initial norms' ratio, {big:g}, so 1")
    rises = evidence.Claim(
        f"the x{big:g} run's norm rises", measure=lambda r: peak_over_own_start(r[big]), **rival,
        test=evidence.Test(">", RISES_ABOVE_START, f"RISES_ABOVE_START: the peak norm at x{big:g} "
                                                   "over its own initial norm", scale="log"),
        control=f"a norm inherited from the {big:g}x start and only decayed (its peak is its "
                "start), 1")
    later = later_claim(scaled, big, "this book's comparison; Omnigrok (Liu et al. 2023) "
                        "predicts the delay for starts above the norm the network generalizes at")
    rows = [evidence.labelled(KEYS_OVER_NULL, clock, label="share off the keys (read off the logits) "
                              "over the uniform null's, 1 − (number of keys) / ((p − 1)/2):",
                              note=f"keys: {keys} frequencies; share on them: " + plots.spread(
                                  {s: clock[s].key_share for s in seeds}, pct0)),
            evidence.joint(
                "Each neuron reads essentially one frequency, and the neurons cluster on the key "
                "frequencies", "Nanda et al. 2023",
                {"median over neurons of the share at the top frequency:": j(ONE_FREQUENCY, clock, clock),
                 "neurons whose top frequency is a key, over the null:": j(ON_KEYS, clock, clock)},
                control="the initial network", window="the end of the run"),
            j(CLOCK, clock, clock).row(),
            evidence.labelled(DESCENT, norms, halfway, note="steps: " + "; ".join(
                f"fit {n.fit_step}, peak {n.peak_step}, grok {n.grok_step}"
                for n in (norms[s] for s in sorted(norms)))),
            evidence.joint(
                f"The norm the network memorizes at is set by training, not by the initial scale: "
                f"from a {big:g}x start the peak norm is less than half of {big:g}x the first "
                f"run's, and the {big:g}x run's norm rises to more than {RISES_ABOVE_START:g}x its own "
                "start",
                "this book's test of where the memorizing norm comes from; Omnigrok (Liu et "
                "al. 2023) ties grokking to the weight norm",
                {f"peak at x{big:g} over at x1, over the initial norms' ratio:": j(kept, scaled),
                 f"peak at x{big:g} over its own start:": j(rises, scaled)},
                control="for the first part, the initial scale's account (1); for the second, "
                        f"a norm inherited from the {big:g}x start and only decayed (1): each "
                        "fails its part's test",
                window=f"the {big:g}x run to its grok step, the first run to its end"),
            j(later, ids).row()]
    if all(LARGE_START in r and SLOW_KEY in r for r in scaled.values()):
        rows.append(large_start_claims(scaled))
    if opt:
        a, m = opt["adamw"].grok, opt["muon"].grok
        tried = lambda o: ", ".join(f"{lr:g} → {'—' if g is None else g}"  # noqa: E731
                                    for lr, g in opt[o].tried.items())
        sooner = evidence.Claim(
            "Muon groks sooner than AdamW", "Tveit et al. 2025 (their grokking epoch: the first "
            "epoch with validation accuracy at 95% once training accuracy has settled near 100%, "
            "read in a summary of the paper, not in its text)", asserted=False,
            measure=lambda s: _over(a[s], m[s]), fmt=_ratio,
            control_measure=lambda s: max((_over(a[s], a[o]) for o in a if o != s), default=math.nan),
            test=evidence.Test(">", SOONER, "SOONER: AdamW's grok step over Muon's, each at its "
                                            "best learning rate", scale="log"),
            control="AdamW on another seed in Muon's place (a change of seed alone, the largest), "
                    f"measured the same way; each optimizer tried at {len(opt['adamw'].tried)} "
                    "learning rates spaced the same way around its own",
            window=f"the budget of section 1's run; grok step: test accuracy above {GROK_ACC:.0%}")
        rows.append(evidence.labelled(sooner, {s: s for s in a},
                                      note=f"seed {min(a)}: AdamW η {tried('adamw')}; Muon η "
                                           f"{tried('muon')}; — not within the budget"))
    return rows


# ============================================================================ the phase diagram
FOUR = ("comprehension", "grokking", "memorization", "confusion")
NO_LINE_OFF = evidence.Test("<", 1, "NO_LINE_OFF: fewer than one row or column of the grid "
                                       "along which the grok step rises")
MEMORIZE_ALL = evidence.Claim(
    "Without weight decay every network memorizes within the budget",
    "this page's grid (Power et al. 2022 see grokking without weight decay in longer runs)",
    measure=_not_memorizing, test=NO_CELL_OFF, fmt=_n,
    control=f"the cells at weight decay {CONTROL_WD:g} and above (below the strongest) with "
            f"fractions from {CONTROL_FRAC:.0%}, which must not all memorize (cells that do not)",
    window="every training fraction, the whole budget; cells that do not memorize",
    constant_control="a count at its ceiling: every cell of the control's window does not "
                     "memorize, on every seed")
GROK_FALLS = evidence.Claim(
    "More data and more decay shorten the wait: the grok step falls along every row and column",
    "Power et al. 2022; Liu et al. 2023", measure=lambda gs: float(len(_rising(gs[0]))),
    control_measure=lambda gs: float(len(_rising(_shuffled(gs[0], gs[1])))), test=NO_LINE_OFF, fmt=_n,
    control="the same grid with its grok steps permuted among the cells that generalize (a fixed "
            "permutation per seed): the rows and columns it rises along",
    window="weight decays above 0 and below the strongest, the cells that generalize; rows and "
           "columns along which the grok step rises",
    asserted=False)  # shown: on the regenerated cpu grid (issue 39) one cell breaks it on one seed
CRIT_EXISTS = evidence.Claim(
    "below a critical fraction nothing generalizes", "Power et al. 2022",
    measure=_rows_below, test=evidence.Test(">", CRIT_ROWS, "CRIT_ROWS: fractions of the grid "
                                                             "below the smallest that generalizes"),
    control_measure=_null_rows_below,
    control="the null: the grid with the phases of its cells at decays above 0 permuted among "
            "them, the number of such fractions it expects (exact, over every permutation)",
    window="weight decays above 0", fmt=lambda v: f"{v:.2g}")
CRIT_FALLS = evidence.Claim(
    "the critical fraction falls as the decay grows", "Liu et al. 2022",
    measure=_crit_drop, test=evidence.Test(">=", CRIT_DROP, "CRIT_DROP: the critical fraction at "
                                           "the weakest decay minus at the last below the "
                                           "strongest, where it never rises between them"),
    control="the same from the last decay below the strongest to the strongest",
    window="weight decays above 0", fmt=_signed_pct)
STRONG_GAP = evidence.Claim(
    "training loss far above the weaker decays'", "Liu et al. 2022",
    measure=_column_gap, test=evidence.Test(">", UNLEARN_LOSS, "UNLEARN_LOSS: the column's lowest "
                                            "final training loss over the highest of the weaker "
                                            "decays'", scale="log"),
    control="the column of the decay below the strongest", window=_END, fmt="{:,.0f}x".format)
STRONG_KEEPS = evidence.Claim(
    "every cell un-learns or never fits", "Liu et al. 2022 (confusion); un-learning is this "
                                          "page's label",
    measure=_column_keeps, test=NO_CELL_OFF, fmt=_n,
    control="the column of the decay below the strongest",
    window="the column's cells that neither un-learn nor stay confused")
_four = lambda g: float(len({r.phase for r in g} & set(FOUR)))  # noqa: E731 (how many of them)
FOUR_PHASES = evidence.Claim(
    "Four phases: comprehension, grokking, memorization, confusion", "Liu et al. 2022",
    measure=_four, control_measure=lambda g: _four([r for r in g if r.weight_decay == 0]),
    test=evidence.Test(">=", len(FOUR), "all four of Liu et al.'s phases on the seed's grid"),
    control="the column without weight decay alone", window="every cell of the seed's grid",
    fmt=_n, asserted=False)
CLOCK_FIT = evidence.Claim(
    "The wait is a fixed part plus a number of clock periods 1/(ηλ), more of them with less "
    "data", "this page's description of its grid", measure=_fit_error("max_rel_error"),
    control_measure=_fit_error("power_max_rel_error"), asserted=False, fmt=pct0,
    test=evidence.Test("<", FIT_ERROR, "FIT_ERROR: the fit's largest relative error, with a "
                                       "positive fixed part and periods that do not grow"),
    control="the rival, a power law with no fixed part, held to the same error (two "
            "parameters on three points: a description, not a test)",
    window="training fractions with at least three decays above 0 and below the strongest "
           "that generalize")


def phase_claims(rows: list[PhaseRow], lr: float | None = None) -> list[dict]:
    """The rows of section 2's "What to notice", judged on each seed of a phase grid (the
    precomputed one the page shows); ``lr`` (the grid's learning rate) puts ηλ of the
    strongest decay into its row and fits the clock periods."""
    grids = by_seed(rows)
    seeds = list(grids)
    fs = {s: phase_facts(r) for s, r in grids.items()}
    f0, j, ids = fs[seeds[0]], evidence.judge, {s: s for s in seeds}
    per = lambda x: {s: (g, x) for s, g in grids.items()}  # noqa: E731 (each seed's grid, and x)
    control = lambda r: (CONTROL_WD <= r.weight_decay < f0["strongest"]  # noqa: E731
                         and r.train_frac >= CONTROL_FRAC)
    inner_grok = {s: (_inner_grok(g), s) for s, g in grids.items()}
    out = [j(MEMORIZE_ALL, per(lambda r: r.weight_decay == 0), per(control)).row(),
           j(GROK_FALLS, inner_grok, inner_grok).row()]

    # the clock, each pair of decays its own row; shown, not asserted (its control says why)
    pairs = {s: clock_by_pair(g) for s, g in grids.items()}
    inner = f0["inner"]
    for lo, hi in zip(inner, inner[1:]):
        got = {s: p.get((lo, hi), float("nan")) for s, p in pairs.items()}
        claim = evidence.Claim(
            f"From weight decay {lo:g} to {hi:g} the wait shrinks by less than the 1/(ηλ) "
            f"clock's factor {hi / lo:.3g}", "the clock of the weight-decay chapter",
            measure=lambda s, got=got: got[s], control_measure=evidence.no_control,
            test=evidence.Test("<", 1.0, "the largest ratio of grok steps over the clock's "
                                         "factor, among the fractions where both generalize",
                               scale="log"),
            control="none: the clock itself (a ratio of grok steps equal to the ratio of decays) "
                    "sits on the threshold, and no run here follows the clock",
            window="training fractions where both decays generalize on the seed",
            fmt=_ratio2, asserted=False)
        out.append(j(claim, ids, ids).row())
    if lr:  # CLOCK_FIT on each seed's grid, the median grid's fits beside it
        fit = ", ".join(f"{r['train_frac']:.0%}: {r['offset']:.0f} + {r['periods']:.1f}/(ηλ) "
                        f"steps, within {r['max_rel_error']:.0%}; rival (1/ηλ)^"
                        f"{r['power_exponent']:.2f}, within {r['power_max_rel_error']:.0%}"
                        for r in clock_fit(median_grid(rows), lr)) or "too few cells"
        out.append(evidence.labelled(CLOCK_FIT, per(lr), label="largest relative error of the fit:",
                                     note=f"on each cell's median over the seeds, {fit}"))

    # below the critical fraction a run has either stopped short (memorization) or is still
    # climbing (unfinished): the row counts the second, since a longer budget may move it
    weak, last, strongest = inner[0], inner[-1], f0["strongest"]
    top = max(r.train_frac for r in rows)
    each = "; ".join(f"seed {s}: " + ", ".join(f"{w:g}: {_crit_pct(c)}" for w, c in f["crit"].items())
                     for s, f in fs.items())
    below = plots.spread({s: len(f["below_cells"]) for s, f in fs.items()}, _n)
    tails = {s: _null_tail(g) for s, g in grids.items()}
    out.append(evidence.joint(
        "Below a critical training fraction no network generalizes within the budget; the "
        "critical fraction falls as the decay grows (from the weakest decay to the last below "
        "the strongest, on every seed)", "Power et al. 2022; Liu et al. 2022",
        {"fractions below the smallest that generalizes:":
             j(CRIT_EXISTS, per(None), per(None)),
         f"critical fraction at {weak:g} minus at {last:g} (no fraction generalizing counted "
         f"at the grid's largest, {top:.0%}: then a lower bound):":
             j(CRIT_FALLS, per(inner), per((last, strongest)))},
        control=f"{CRIT_EXISTS.control}; {CRIT_FALLS.control}" + ("" if any(
            f["crit"][strongest] for f in fs.values()) else " (— on every seed: it rises above the grid)"),
        window="weight decays above 0",
        note=f"per weight decay, {each}; the null's chance of as many fractions below the "
             "smallest that generalizes as measured, or more (exact): "
             + ", ".join(f"seed {s}: {t:.2g}" for s, t in tails.items())
             + f"; runs below it still climbing at the budget (unfinished), per seed: {below}"))

    el = f", ηλ = {lr * strongest:g}" if lr else ""
    phases = "; ".join(f"seed {s}: {', '.join(f['strong_phases'])}" for s, f in fs.items())
    out.append(evidence.joint(
        "The strongest decay keeps nothing: every cell of its column un-learns (loses part of "
        "what it learned) or never fits, its training loss far above the weaker decays'",
        "Liu et al. 2022 (confusion" + ("" if any(f["confusion"] for f in fs.values()) else
                                        ", of which this grid has no cell") + "); un-learning "
        "is this page's label", {"cells that keep something:": j(STRONG_KEEPS, per(strongest), per(last)),
         "lowest final training loss over the highest below it:":
             j(STRONG_GAP, per(strongest), per(last))},
        control=f"the column of weight decay {last:g}, the one below",
        window=f"weight decay {strongest:g}{el}, at the end of the budget", note=phases,
        asserted=False))  # shown: on the regenerated cpu grid one cell is unfinished on one seed

    # shown, not asserted: the grid may miss one; unfinished and un-learning runs counted beside
    counts = Counter(r.phase for r in rows)
    seen = ", ".join(f"{counts[k]} {k}" for k in (*FOUR, "unfinished", "un-learning") if counts[k])
    out.append(evidence.labelled(
        FOUR_PHASES, grids, label="of the four, on the seed's grid:",
        note=f"precomputed grid ({len(rows) // len(seeds)} cells x {len(seeds)} seeds): {seen}"))
    return out


def published_claims() -> list[dict]:
    """The rows that rest on the precomputed phase diagram in ``data/`` (relabelled by
    :func:`~.experiments.phase_data`), as in the page's claims table."""
    grid, prov = phase_data()
    return phase_claims(grid.rows, lr=prov["config"]["phase"]["lr"])
