"""dynamics.grokking.omnigrok: the weight-norm measures of Omnigrok's account on constructed
norm courses, and the large start's row and sentence, each of whose parts must fail on the
runs where the account does not hold."""
import math
from types import SimpleNamespace as NS

import pytest

from dynamics import evidence
from dynamics.grokking import omnigrok as O
from dynamics.train import History

from known import known_answer

BIG = O.LARGE_START


def run(*norm, fit=None, grok=None, acc=1.0, steps=1000):
    """A made-up run: the weight norm at steps 0, 10, 20, ..., its fit and grok steps."""
    h = History()
    for step, v in zip(range(0, 10 * len(norm), 10), norm):
        h.append(step, weight_norm=v, test_acc=acc)
    return NS(history=h, fit_step=fit, grok_step=grok, config=NS(steps=steps))


@known_answer(O.norm_at, O.zone_factor, O.grok_over,
              how="constructed norm courses at steps 0, 10, 20, ...: the norm at step 25 is "
                  "the one recorded at step 20; norms 44 and 40 at two grok steps are a factor "
                  "1.1 apart either way round; a run that never groks has no factor; grok steps "
                  "300 and 100 give 3, a missing one NaN")
def test_norms_at_steps_and_the_factor_between_them():
    r = run(80.0, 60.0, 44.0, 43.0, grok=20)
    assert O.norm_at(r, 25) == 44.0 and O.norm_at(r, 0) == 80.0
    assert math.isnan(O.norm_at(r, None)) and math.isnan(O.norm_at(r, -1))
    first = run(10.0, 55.0, 40.0, grok=20)
    assert O.zone_factor(r, first) == pytest.approx(1.1)
    assert O.zone_factor(first, r) == pytest.approx(1.1)
    assert O.zone_factor(r, first, step=0) == pytest.approx(2.0)  # 80 against 40
    assert math.isnan(O.zone_factor(run(80.0, 60.0), first))
    assert O.grok_over(300, 100) == 3 and math.isnan(O.grok_over(None, 100))


@known_answer(O.peak_ratio_over_scale,
              how="norms 4x at the start and 2x at the peak give 0.5, 4x at the peak too (the "
                  "initial scale kept) 1, the rival account's number, which fails FAR_BELOW")
def test_the_peak_ratio_over_the_initial_ratio():
    first = run(1.0, 1.1, 5.0, 3.0)
    assert O.peak_ratio_over_scale({1.0: first, 4.0: run(4.0, 4.0, 10.0, 3.0)}, 4.0) == \
        pytest.approx(0.5)
    kept = {1.0: first, 4.0: run(4.0, 4.4, 20.0, 12.0)}  # x4 throughout
    assert O.peak_ratio_over_scale(kept, 4.0) == pytest.approx(1.0)
    assert not evidence.Test("<", O.FAR_BELOW, "FAR_BELOW").passes(1.0)


@known_answer(O.rebuild_factor, O.norm_rise,
              how="constructed norm courses: 82 -> 60 -> 49 -> 63 -> 44 falls to 49 and is built "
                  "back 63/49 = 1.29 times while its highest value stays its start; a course "
                  "that only falls gives 1 and is said to only fall; one that rises from its "
                  "start gives its peak over its start")
def test_a_norm_that_falls_and_is_built_back_is_not_said_to_only_fall():
    r = run(82.0, 60.0, 49.0, 63.0, 44.0)
    assert O.rebuild_factor(r) == pytest.approx(63 / 49)
    assert O.norm_rise(r) == ("falls from its start to 49 by step 20, then rises 1.29 times, to "
                              "63 by step 30")
    assert O.rebuild_factor(run(82.0, 60.0, 44.0)) == 1.0
    assert O.norm_rise(run(82.0, 60.0, 44.0)) == "only falls from its start (its peak is its start)"
    assert O.rebuild_factor(run(10.0, 55.0, 44.0)) == pytest.approx(5.5)
    assert math.isnan(O.rebuild_factor(run(0.0, 1.0)))


def _rows(large_runs, first_groks=(40, 40, 40), slow=None):
    """Three seeds of x1 runs whose norm rises from 10 to 55 and is 44 from step 30 on, each
    grokking at its step of ``first_groks``, beside ``large_runs`` (one x8 run per seed) and
    the x8 start at the slower decay (by default one that fits at 1.2x its start)."""
    slow = slow or run(82.0, 90.0, 98.4, 100.0, fit=20)
    return {s: {1.0: run(10.0, 55.0, 50.0, 44.0, 44.0, fit=10, grok=g), BIG: big, O.SLOW_KEY: slow}
            for s, (g, big) in enumerate(zip(first_groks, large_runs))}


@known_answer(O.fit_over_start,
              how="constructed courses: a norm from 82 that is 61.5 at its fit step gives 0.75, "
                  "one that is 98.4 there 1.2; a run that never fits has none")
def test_the_norm_at_the_fit_step_over_the_start():
    assert O.fit_over_start(run(82.0, 70.0, 61.5, fit=20)) == pytest.approx(0.75)
    assert O.fit_over_start(run(82.0, 90.0, 98.4, fit=25)) == pytest.approx(1.2)
    assert math.isnan(O.fit_over_start(run(82.0, 70.0)))


@known_answer(O.large_start_claims, O.later_claim,
              how="constructed x1 and x8 runs on three seeds: an x8 norm that is 0.75 of its "
                  "start at its fit step and groks three times later than x1, beside a slow-"
                  "decay x8 run that fits at 1.2x its start, is yes in both parts; an x8 run "
                  "that fits at its start's norm, a slow-decay control that falls as well, and "
                  "an x8 run that groks as soon as x1 each fail their part")
def test_the_large_start_row_holds_only_where_each_part_does():
    tail = [44.0] * 8  # to step 120
    fast = run(82.0, 70.0, 61.5, 63.0, 50.0, *tail, fit=20, grok=120)
    holds = O.large_start_claims(_rows([fast] * 3))
    assert holds["reproduced"] == "yes" and not holds["asserted"]
    assert [e["verdict"] for e in holds["evidence"]] == ["yes"] * 2
    part = lambda big, i, **k: O.large_start_claims(_rows([big] * 3, **k))["evidence"][i]["verdict"]  # noqa: E731
    assert part(run(82.0, 82.0, 82.0, *tail, fit=20, grok=120), 0) != "yes"  # fits at its start
    assert part(fast, 0, slow=run(82.0, 70.0, 61.5, fit=20)) != "yes"        # the control falls too
    assert part(run(82.0, 70.0, 61.5, 63.0, *tail, fit=20, grok=40), 1) != "yes"  # no later


@known_answer(O.large_start_facts,
              how="a constructed x8 run from 82 that falls to 49 by step 20 (40% of its pairs "
                  "fitted there), fits at step 25 at 49 and is built back to 63 by step 30, groks "
                  "at step 40 at 44; an x1 run that fits at 5, peaks at 55 and groks at 44; an x4 "
                  "run peaking at 60; a slow-decay run fitting at step 20 at 1.2x its start: each "
                  "said as constructed; a run that never groks or fits says so")
def test_the_large_start_sentence():
    first = run(10.0, 55.0, 50.0, 44.0, 43.0, fit=5, grok=30)
    mid = run(40.0, 60.0, 45.0, fit=10, grok=20)
    big = run(82.0, 70.0, 49.0, 63.0, 44.0, fit=25, grok=40)
    big.config = NS(steps=1000, lr=0.01, weight_decay=1.0)
    for i, acc in enumerate((0.0, 0.2, 0.4, 1.0, 1.0)):
        big.history.metrics.setdefault("train_acc", [None] * 5)[i] = acc
    slow = run(82.0, 90.0, 98.4, 100.0, fit=20)
    n0 = NS(peak=55.0, grok=44.0, end=44.0)
    f = O.large_start_facts({1.0: first, 4.0: mid, BIG: big, O.SLOW_KEY: slow}, n0)
    assert f["large_kind"] == "above the first run's memorizing peak, 55.0"
    assert f["large_course"].startswith("falls from its start to 49 by step 20, then rises")
    assert f["large_low_acc"] == "40%"
    assert f["large_fit_vs"] == ("fits at step 25, 5 times later than the first run's 5, at a "
                                 "norm of 49.0, 0.60 of its start")
    assert (f["large_clock"], f["large_tau"], f["large_tau_vs"]) == ("0.01", "100", "no shorter than")
    assert f["large_rebuilt"] == "1.05 times the 4x run's peak, 60.0"
    assert f["large_grok"] == ("groks at step 40, where its norm is 44.0: a factor 1 from the 44.0 "
                               "at which the first run groks")
    assert f["slow_fit"] == ("fits at step 20 at a norm of 98.4, 1.20 of its start, and does not "
                             "grok within the budget")
    assert f["first_after"] == "between 43.0 and 44.0" and f["mid_grok_norm"] == "45.0"
    never = run(82.0, 70.0, 60.0, acc=0.4)
    never.config = NS(steps=700, lr=0.01, weight_decay=1.0)
    g = O.large_start_facts({1.0: first, BIG: never}, NS(peak=90.0, grok=44.0, end=60.0))
    assert g["large_grok"] == "does not grok within its 700 steps (test accuracy 40% at the end)"
    assert g["large_fit_vs"] == "does not fit within its 700 steps"
    assert g["large_kind"].startswith("not above") and g["slow_fit"] == "—"
    assert g["large_rebuilt"] == "no rebuilt peak" and g["mid_grok_norm"] == "—"
