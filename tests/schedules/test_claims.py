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
    assert [r["reproduced"] for r in rows] == ["yes"] * 3, [r["measured here"] for r in rows]
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
