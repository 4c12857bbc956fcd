"""dynamics.schedules.claims: section 1's rows on seeds 0-2 at smoke, and rows that say "no"
when the runs do not show the phenomenon."""
import copy

import numpy as np
import pytest

from seeds import SEEDS

from dynamics import evidence, plots
from dynamics.schedules import claims as C


@pytest.fixture(scope="module")
def runs():
    return C.claim_runs("smoke", SEEDS)


@pytest.mark.claim
def test_section_1_claims_hold_on_every_seed(runs):
    rows = C.page_claims(**runs)
    assert len(rows) == 3 and not evidence.audit(rows)
    asserted = [r for r in rows if r.get("asserted", True)]
    # the stall row is shown: its control's seeds spread over more than its miss
    assert [r["claim"][:40] for r in rows if r not in asserted] == [
        "a constant rate's last iterate stalls at"]
    assert [r["reproduced"] for r in asserted] == ["yes"] * 2, \
        [r["measured here"] for r in rows]
    plots.claims_table(rows)
    assert C.page_claims() == [] and C.published_claims() == []


def test_a_row_says_no_when_averaging_does_not_help(runs):
    fake = copy.deepcopy(runs["anytime"])
    for r in fake.values():   # pretend the average stalled like the last iterate
        i = r["names"].index("constant")
        r["sim"]["tail"][i] = list(r["sim"]["last"][i])
    row = C.page_claims(fake, runs["exponents"])[0]
    assert row["reproduced"] != "yes"


def test_the_exponent_row_fails_on_a_wrong_theory(runs):
    exps = copy.deepcopy(runs["exponents"])
    for e in exps.values():
        e["best"] = float(np.clip(e["theory"] + 0.5, 0, 0.9))
    assert C.page_claims(runs["anytime"], exps)[2]["reproduced"] == "no"


def test_numbers_are_texts(runs):
    r = next(iter(runs["anytime"].values()))
    nums = C.anytime_numbers(r, runs["exponents"])
    assert nums["sch_best_2_4"] == "0.5" and all(isinstance(v, (str, int)) for v in nums.values())


@pytest.fixture(scope="module")
def cooldown():
    from dynamics.schedules.experiments import run_cooldown
    return run_cooldown(seeds=SEEDS, profile="smoke")


@pytest.fixture(scope="module")
def sf():
    from dynamics.schedules.experiments import run_schedulefree
    return run_schedulefree(seeds=SEEDS, profile="smoke")


@pytest.mark.claim
def test_sections_2_to_4_claims_hold_on_every_seed(cooldown, sf):
    rows = C.cooldown_claims(cooldown) + C.average_claims(cooldown) + \
        C.schedulefree_claims(sf, cooldown)
    assert not evidence.audit(rows)
    asserted = [r for r in rows if r.get("asserted", True)]
    # shown, not asserted: the drop and the two averages (their controls miss by no more
    # than their seeds' spread) and the 1-sqrt shape
    assert len(asserted) == 2 and [r["reproduced"] for r in asserted] == ["yes"] * 2, \
        [(r["claim"], r["measured here"], r["reproduced"]) for r in rows]
    plots.claims_table(rows)


def test_cooldown_rows_say_no_without_a_cooldown(cooldown):
    fake = copy.deepcopy(cooldown)
    for s in fake["seeds"]:   # every cooldown replaced by the constant run: nothing was cooled
        L = fake["train_loss"][s]
        for n in L:
            if n.startswith(("linear@", "sqrt@")):
                L[n] = list(L["constant"])
    ties, drop, _ = C.cooldown_claims(fake)
    assert ties["reproduced"] != "yes" and drop["reproduced"] != "yes"


def test_average_rows_say_no_when_the_average_is_the_last_iterate(cooldown):
    fake = copy.deepcopy(cooldown)
    for s in fake["seeds"]:
        for name, a in fake["averages"][s].items():
            a["train_loss"] = [fake["train_loss"][s]["constant"][fake["steps"].index(t)]
                               for t in a["steps"]]
    assert all(r["reproduced"] != "yes" for r in C.average_claims(fake))


def test_schedulefree_row_says_no_when_it_trails_the_cosine(cooldown, sf):
    fake = copy.deepcopy(sf)
    for s in fake["seeds"]:   # schedule-free stuck at the constant run's loss
        for lr in fake["lrs"]:
            fake["schedule-free"]["train_loss"][s][lr] = [
                1.3 * v for v in fake["cosine"]["train_loss"][s][lr]]
    assert C.schedulefree_claims(fake, cooldown)[0]["reproduced"] == "no"


def test_sections_2_to_4_numbers_are_texts(cooldown, sf):
    nums = {**C.cooldown_numbers(cooldown), **C.schedulefree_numbers(sf, cooldown)}
    assert all(isinstance(v, (str, int)) for v in nums.values())
    assert C.tuned_lr(sf, "cosine") in sf["lrs"]
    with pytest.raises(ValueError, match="method"):
        C.tuned_lr(sf, "adamw")


@pytest.fixture(scope="module")
def clock():
    from dynamics.schedules.experiments import run_clock
    return {s: run_clock(profile="smoke", seed=s) for s in SEEDS}


@pytest.mark.claim
def test_section_5_clock_row_holds_on_every_seed(clock):
    rows = C.page_claims(clock=clock)
    assert len(rows) == 1 and not evidence.audit(rows)
    assert rows[0]["reproduced"] == "yes", rows[0]["measured here"]
    plots.claims_table(rows)
    nums = C.clock_numbers(clock[SEEDS[0]])
    assert all(isinstance(v, (str, int)) for v in nums.values())
    assert float(nums["ck_cool_ticks"]) < float(nums["ck_const_ticks"])


def test_clock_row_says_no_when_the_cooldown_forgets_by_the_step_count(clock):
    fake = copy.deepcopy(clock)
    for r in fake.values():   # the WSD run measured as if it forgot like the constant one
        r["memory"]["WSD"] = list(r["expected"]["constant"])
    assert C.page_claims(clock=fake)[0]["reproduced"] == "no"


def test_the_conjecture_stays_at_equilibrium_under_a_constant_rate():
    from dynamics.schedules.figures import wsd_norm_conjecture

    c = wsd_norm_conjecture(0.02, 0.25, 200, 0.2)
    eff = np.asarray(c["constant"]["effective_lr"])
    np.testing.assert_allclose(eff, np.sqrt(0.02 * 0.25 * (2 - 0.02 * 0.25)), rtol=1e-9)
    # under the cooldown the norm lags: the effective rate ends below the equilibrium's
    assert c["WSD"]["effective_lr"][-2] < 0.5 * c["WSD"]["equilibrium_lr"][-2]
    with pytest.raises(ValueError, match="weight decay"):
        wsd_norm_conjecture(0.02, 0.0, 10, 0.2)


def test_collapse_is_one_on_identical_runs_and_sees_a_step_clock(clock):
    r = copy.deepcopy(clock[SEEDS[0]])
    r["memory"]["WSD"], r["clock"]["WSD"] = r["memory"]["constant"], r["clock"]["constant"]
    assert C.collapse(r) == pytest.approx(1.0)
    r = copy.deepcopy(clock[SEEDS[0]])
    r["clock"]["WSD"] = r["clock"]["constant"]     # read against the steps instead
    assert C.collapse(r) > 1.5
