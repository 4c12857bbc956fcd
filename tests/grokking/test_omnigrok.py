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


def _rows(large_runs, first_groks=(40, 40, 40)):
    """Three seeds of x1 runs whose norm rises from 10 to 55 and is 44 from step 30 on, each
    grokking at its step of ``first_groks``, beside ``large_runs`` (one x8 run per seed)."""
    return {s: {1.0: run(10.0, 55.0, 50.0, 44.0, 44.0, fit=10, grok=g), BIG: big}
            for s, (g, big) in enumerate(zip(first_groks, large_runs))}


@known_answer(O.large_start_row, O.later_claim,
              how="constructed x1 and x8 runs on three seeds: an x8 norm that only falls from "
                  "82 and groks at step 120 at 44, the norm the x1 runs grok at, three times "
                  "later, is yes in every part; an x8 norm that rises, one that groks at "
                  "60, and one that groks as soon as x1 each fail their own part")
def test_the_large_start_row_holds_only_where_each_part_does():
    tail = [44.0] * 8  # to step 120
    holds = O.large_start_row(_rows([run(82.0, 70.0, 60.0, 50.0, 44.0, *tail, fit=10,
                                         grok=120)] * 3))
    assert holds["reproduced"] == "yes" and not holds["asserted"]
    assert [e["verdict"] for e in holds["evidence"]] == ["yes"] * 3
    part = lambda big, i: O.large_start_row(_rows([big] * 3))["evidence"][i]["verdict"]  # noqa: E731
    assert part(run(82.0, 120.0, 44.0, *tail, fit=10, grok=120), 0) != "yes"  # the norm rises
    assert part(run(82.0, 70.0, *[60.0] * 11, fit=10, grok=120), 1) != "yes"  # groks at 60
    assert part(run(82.0, 44.0, *tail, fit=10, grok=40), 2) != "yes"          # no later


@known_answer(O.large_start_facts,
              how="a constructed x8 run from 82 that groks at step 40 at norm 44 against an x1 "
                  "run that peaks at 55 and groks at 44: above the peak, a factor 1, later to "
                  "fit; one that never groks says so with its final test accuracy")
def test_the_large_start_sentence():
    first = run(10.0, 55.0, 50.0, 44.0, 44.0, fit=5, grok=30)
    big = run(82.0, 70.0, 60.0, 50.0, 44.0, fit=20, grok=40)
    n0 = NS(peak=55.0, grok=44.0, end=44.0)
    f = O.large_start_facts({1.0: first, BIG: big}, n0)
    assert f["large_kind"] == "above the first run's memorizing peak, 55"
    assert f["large_course"] == "only falls from its start (its peak is its start)"
    assert f["large_grok"] == ("groks at step 40, where its norm is 44: a factor 1 from the 44 "
                               "at which the first run groks")
    assert f["large_fit_vs"].startswith("later than the first run's 5: from this start")
    assert f["zone_vs_end"] == "within 0% of where its norm ends, 44"
    never = run(82.0, 70.0, 60.0, fit=20, acc=0.4, steps=700)
    g = O.large_start_facts({1.0: first, BIG: never}, NS(peak=90.0, grok=44.0, end=60.0))
    assert g["large_grok"] == "does not grok within its 700 steps (test accuracy 40% at the end)"
    assert g["large_kind"].startswith("not above") and "27% away from" in g["zone_vs_end"]
