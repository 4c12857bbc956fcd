"""dynamics.capstone.claims: the page's numbers, the lottery sentence and the claims rows; the
published claims rest on data/."""
import math
import types

import pytest

from dynamics.capstone import claims as C
from dynamics.capstone import figures as F
from dynamics import plots
from dynamics.capstone import experiments as E
from dynamics.capstone.science import OneConfig

TINY = OneConfig(p=11, train_frac=0.8, width=16, steps=30, n_evals=10, rewind_step=3)


@pytest.fixture(scope="module")
def tiny():
    return E.run(TINY, 0)


def test_grid_slider_and_published_claims():
    from dynamics import results
    payload, _ = results.load(E.GRID_FILE)
    fig = F.grid_slider(payload)
    assert fig.layout.sliders and len(fig.layout.sliders[0].steps) == len(
        {(r["optimizer"], r["init_scale"]) for r in payload["rows"]})
    rows = C.published_claims()
    assert rows and not plots.failed_claims(rows)
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)


def test_the_published_rows_verdicts_on_the_grids_three_seeds():
    """What data/capstone_grid.json says, row by row (none of them asserted by the prose): a
    lazier start groks later on every seed, beyond the seeds' own spread on two of three;
    Muon (on the hidden matrix after the first layer) groks on no seed; the clock's slope is
    below 1."""
    rows = {r["claim"]: r for r in C.published_claims()}
    lazy = rows["A lazier start (larger initial weights) delays generalization"]
    assert lazy["seeds"] == [0, 1, 2] and not lazy["asserted"]
    assert lazy["reproduced"] == "partly" and "holds on 2 of 3 seeds" in lazy["measured here"]
    muon = rows["Muon groks sooner than AdamW"]
    assert muon["reproduced"] == "no" and muon["seeds"] == [0, 1, 2]
    assert "after the first layer" in muon["control"]
    clock = rows["The 1/(ηλ) clock predicts when the plateau ends (grok step ∝ τ)"]
    assert clock["reproduced"] == "no" and clock["seeds"] == [0, 1, 2]


def test_lottery_sentence_says_what_the_arms_did():
    arm = lambda fit, grok: dict(fit_step=fit, grok_step=grok)  # noqa: E731
    lot = dict(arms={"dense": arm(10, 100), "a": arm(20, None), "b": arm(30, None)})
    assert "although each fits" in C.lottery_sentence(lot)
    lot["arms"]["b"] = arm(None, None)
    assert "not all of them even fit" in C.lottery_sentence(lot)
    lot["arms"]["a"] = arm(20, 50)
    assert "a at step 50" in C.lottery_sentence(lot) and "sooner than the dense run: a" in C.lottery_sentence(lot)


def test_the_lazy_row_fails_when_the_scales_do_not_separate_beyond_the_seeds():
    def rows(t):  # t[scale] = grok steps on seeds 0, 1, 2
        return [dict(init_scale=sc, seed=s, grok_step=g) for sc, gs in t.items()
                for s, g in enumerate(gs)]

    ok = C._lazy_row(rows({0.5: [300, 320, 310], 1.0: [400, 410, 390], 4.0: [800, 700, None]}),
                     "test", 1000)
    assert ok["reproduced"] == "yes" and ok["seeds"] == [0, 1, 2]
    # larger on every seed, but by less than the seeds differ at scale 1: no
    noisy = C._lazy_row(rows({0.5: [300, 320, 310], 1.0: [300, 600, 450], 4.0: [500, 520, 510]}),
                        "test", 1000)
    assert noisy["reproduced"] == "no"
    # the opposite direction: no
    assert C._lazy_row(rows({0.5: [600, 620, 610], 1.0: [400, 410, 390], 4.0: [300, 320, 310]}),
                       "test", 1000)["reproduced"] == "no"
    # one seed against: partly, and the row says on how many it holds
    part = C._lazy_row(rows({0.5: [300, 320, 310], 1.0: [400, 410, 390], 4.0: [800, 700, 300]}),
                       "test", 1000)
    assert part["reproduced"] == "partly" and "holds on 2 of 3 seeds" in part["measured here"]
    assert "None" not in part["measured here"]


def test_each_sections_facts_are_the_texts_the_page_prints(tiny):
    """Every number a section glues comes as the text glue() prints (never Python's None)."""
    facts = {**C.timeline_facts(tiny, E.plateau_control({0: tiny})[0]),
             **C.collapse_facts(E.collapse_timing(tiny)),
             **C.lottery_facts(E.lottery(tiny)),
             **C.init_facts([dict(init_scale=s, seed=0, fit_step=10, grok_step=g)
                             for s, g in ((0.5, 100), (4.0, None))], 0),
             **C.clock_facts(E.clock_grid(TINY, [1e-2], [1.0, 3.0], [0]), [1e-2], [1.0, 3.0]),
             **C.optimizer_facts(dict(adamw=dict(best=tiny, tried=[(1e-2, tiny.summary())]),
                                      muon=dict(best=tiny, tried=[(0.1, tiny.summary())])),
                                 dict(adamw=[5e-3, 1e-2], muon=[0.05, 0.1]))}
    assert all(isinstance(v, str) and v and "None" not in v for v in facts.values()), facts
    assert facts["g_hi"] == "none within the budget" and facts["s_lo"] == "0.5"
    assert facts["lams"] == "1 and 3" and facts["muon_lrs"] == "0.05 and 0.1"


def _synthetic(update_rank, rms, fit=10, grok=30):
    """A run's timeline and history as the facts read them, with a known course."""
    steps = [0, 10, 20, 30, 40, 50, 60]
    n = len(steps)
    tl = dict(step=steps, update_rank=update_rank, weight_rms=rms, nc1=[50.0 + i for i in range(n)],
              fourier=[0.3] * n, weight_rank=[0.6] * n, etf_distance=[1.0] * n)
    history = dict(train_loss=[1.0, 0.1, 0.05, 0.03, 0.02, 0.015, 0.012])
    return types.SimpleNamespace(timeline=tl, history=history, fit_step=fit, grok_step=grok,
                                 config=TINY, summary=lambda: dict(fit_step=fit, grok_step=grok,
                                                                   tau=100.0))


def test_the_update_sentence_says_where_the_rank_collapses_and_what_moves_with_it():
    """The published run's update rank fell from 0.54 to 0.11 at one evaluation and the page
    said nothing: the sentence names the step and what NC1, the loss and the RMS did from the
    evaluation before to the one after; a calm run gets its sharpest fall and no event."""
    rms = [0.07, 0.39, 0.35, 0.32, 0.313, 0.324, 0.332]
    spike = _synthetic([math.nan, 0.7, 0.6, 0.58, 0.54, 0.11, 0.2], rms)
    text = C.update_event_sentence(spike)
    assert text.startswith("at step 50, after the grok step,") and "from 0.54 to 0.11" in text
    assert "step 40) to the next (step 60)" in text
    assert "NC1 goes from 54 to 56" in text and "weight RMS from 0.313 to 0.332" in text
    calm = C.update_event_sentence(_synthetic([math.nan, 0.7, 0.69, 0.68, 0.66, 0.65, 0.64], rms))
    assert calm == "it falls slowly, by at most 3% between two evaluations (from 0.68 to 0.66 at step 40)"
    early = C.update_event_sentence(_synthetic([math.nan, 0.7, 0.2, 0.2, 0.2, 0.2, 0.2], rms,
                                               fit=10, grok=None))
    assert early.startswith("at step 20, in a run that never groks")
    assert "too few" in C.update_event_sentence(_synthetic([math.nan] * 7, rms))


def test_the_rms_sentence_gives_its_minimum_where_it_is_and_then_the_end():
    """The published page said "shrinks under decay to 0.332 at the end" where the RMS's
    minimum was 0.313 at step 891: the page now glues the minimum, its step and what follows."""
    run = _synthetic([math.nan] + [0.5] * 6, [0.07, 0.39, 0.35, 0.32, 0.313, 0.324, 0.332])
    facts = C.timeline_facts(run)
    assert (facts["rms_max"], facts["t_rms_max"]) == ("0.39", "10")
    assert (facts["rms_min"], facts["t_rms_min"]) == ("0.313", "40")
    assert facts["rms_after"] == ", then climbs back to 0.332 by the end"
    assert facts["four_fit"] == "0.3" and facts["plateau_end"] == "the grok step"
    run.timeline["weight_rms"] = [0.07, 0.39, 0.35, 0.32, 0.313, 0.3131, 0.3132]
    assert C.timeline_facts(run)["rms_after"] == ", and stays there (0.313 at the end)"
    run.timeline["weight_rms"] = [0.07, 0.39, 0.35, 0.32, 0.313, 0.31, 0.305]
    assert C.timeline_facts(run)["rms_after"] == ", still falling at the end"
