"""The page's newer glued numbers on constructed cases whose answers are known by hand: the
weight norm's course after its peak, the corrupted-label runs' courses, the frequencies off the
keys, the restricted loss's lead in evaluations, the remedies' last steps; and two of
experiments' measures, the corrupted-label shares and the spectra of the units."""
from types import SimpleNamespace as NS

import pytest
import torch

from known import known_answer
from dynamics.grokking import experiments as E
from dynamics.grokking import facts as Fa
from dynamics.grokking import figures as F
from dynamics.grokking import science as S


@known_answer(Fa.norm_course, how="constructed norm curves: a peak, a low at step 40, a rebound "
                                  "to 9 at step 60 and a decay to 7 is read as such, with the "
                                  "excluded loss at those two steps; a curve that keeps falling, "
                                  "or climbs back to its end, is said so")
def test_the_norm_course_follows_the_curve():
    steps = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    norm = [5, 12, 10, 8, 6, 8, 9, 8.5, 7.5, 7, 7]
    c = Fa.norm_course(steps, norm, 7.0, steps, [1, 1, 1, 1, 2.5049, 3, 3.6256, 3, 3, 3, 3])
    assert (c["low"], c["low_at"], c["back"], c["back_at"]) == (6, 40, 9, 60)
    assert (c["ex_low"], c["ex_back"]) == (2.5049, 3.6256)
    assert c["text"] == ("undershoots, to 6 at step 40, rebounds to 9 at step 60 and decays to "
                         "7 at the end (over the same steps the excluded loss jumps, from 2.50 "
                         "to 3.63)")
    # no excluded loss recorded, or one that falls: no jump said
    assert "excluded" not in Fa.norm_course(steps, norm, 7.0)["text"]
    assert "excluded" not in Fa.norm_course(steps, norm, 7.0, steps, [5, 5, 5, 5, 4, 3, 2, 2, 2, 2, 2])["text"]
    falling = [5, 12, 11, 10, 9, 8, 7.5, 7, 6.5, 6.2, 6]
    assert Fa.norm_course(steps, falling, 6.2)["text"] == "keeps falling, to 6.2 at the end"
    # REBOUND's two sides: a rise to 7.4 over an end of 7 (5.7%) rebounds; to 7.3 (4.3%) does not
    bump = lambda top: [5, 12, 10, 8, 6, 7, top, 7, 7, 7, 7]  # noqa: E731
    assert Fa.REBOUND == 0.05 and "rebounds to 7.4 at step 60" in Fa.norm_course(steps, bump(7.4), 7.0)["text"]
    assert Fa.norm_course(steps, bump(7.3), 7.0)["text"] == (
        "undershoots, to 6 at step 40, and climbs back to 7 at the end")
    # the excluded loss jumps only by more than REBOUND of its value at the low: 2 -> 2.12, 2 -> 2.08
    ex = lambda top: [1, 1, 1, 1, 2, 2, top, 2, 2, 2, 2]  # noqa: E731
    assert "jumps, from 2.00 to 2.12" in Fa.norm_course(steps, norm, 7.0, steps, ex(2.12))["text"]
    assert "excluded" not in Fa.norm_course(steps, norm, 7.0, steps, ex(2.08))["text"]
    back = [5, 12, 10, 8, 6, 6.5, 7, 7.5, 8, 8.5, 9]  # the highest after the low is the last
    assert Fa.norm_course(steps, back, 8.5)["text"] == (
        "undershoots, to 6 at step 40, and climbs back to 8.5 at the end")


def _cor(wd, memorized, test_acc, steps=None):
    steps = steps or [10 * i for i in range(len(memorized))]
    return NS(weight_decay=wd, steps=steps, memorized=memorized, test_acc=test_acc,
              final_memorized=memorized[-1], final_test_acc=test_acc[-1], final_corrected=0.5)


@known_answer(Fa.unlearning, Fa.corrupted_glue,
              how="constructed runs: a memorized share that peaks at 0.9 at step 20 (test accuracy "
                  "0.3 there, 0.9 at the end: it climbs; 0.9 there: it does not) and ends at "
                  "0.1 is unlearned; a test accuracy still gaining 20 points over its last fifth "
                  "is still climbing short of GROK_ACC, one flat at 0.78 has stopped, one at "
                  "0.99 is past it")
def test_the_corrupted_runs_courses():
    n = 21
    climbing = [0.5 + 0.3 * i / (n - 1) for i in range(n)]       # 0.5 -> 0.8, steadily
    flat = [0.5] * 5 + [0.78] * (n - 5)
    high = _cor(6.0, [0.0, 0.5, 0.9, 0.6] + [0.1] * (n - 4), [0.0, 0.1, 0.3] + [0.9] * (n - 3))
    assert Fa.unlearning(high) == dict(peak=0.9, peak_at=20, end=0.1, test_at_peak=0.3)
    out = lambda low: NS(runs=[_cor(1.0, [1.0] * n, low), high])  # noqa: E731
    g = Fa.corrupted_glue(out(climbing), p=59)
    assert g["test_low"] == "80%" and g["low_course"].endswith("is still climbing at the end of the budget")
    assert g["low_course"].startswith("short of the 95%") and g["low_reaches"].startswith("does not")
    assert g["high_course"] == ("first memorizes 90% of the wrong labels, by step 20, when its "
                                "test accuracy is 30%, then unlearns them while its test accuracy "
                                "climbs: at the end it memorizes only 10%")
    flat_high = _cor(6.0, high.memorized, [0.9] * n)  # the test accuracy at its end already
    assert Fa.corrupted_glue(NS(runs=[_cor(1.0, [1.0] * n, flat), flat_high]))["high_course"] == (
        "first memorizes 90% of the wrong labels, by step 20, when its test accuracy is 90%, then "
        "unlearns them: at the end it memorizes only 10%")
    assert Fa.corrupted_glue(out(flat), p=59)["low_course"].endswith("has stopped climbing")
    done = Fa.corrupted_glue(out(flat[:-1] + [0.99]), p=59)
    assert done["low_course"].startswith("past the 95%") and done["low_reaches"] == "gets there too"
    kept = NS(runs=[_cor(1.0, [1.0] * n, flat), _cor(6.0, [0.1] * n, [0.9] * n)])
    assert Fa.corrupted_glue(kept)["high_course"] == "memorizes only 10% of the wrong labels"


@known_answer(Fa.off_keys, how="a constructed layer spectrum over k = 0..5 (an even share 0.2): "
                               "keys 1 and 2; of the others, 4 (0.25) is above it, 3 (0.1) and "
                               "5 (0.05) below, and k = 0 is never counted")
def test_the_frequencies_off_the_keys():
    layer = [0.3, 0.2, 0.1, 0.1, 0.25, 0.05]
    one = Fa.off_keys(layer, [1, 2])
    assert (one["count"], one["share"]) == (1, 0.25)
    assert one["text"] == (
        "The layer also holds one frequency off the keys with more than an even share of its "
        "energy (25% of it together), frequencies the logits barely use (the keys are chosen to "
        "hold at least 90% of the logits' Fourier energy, so the others share at most the rest).")
    none = Fa.off_keys(layer, [1, 2, 4])  # no count of 0 printed: a sentence of its own
    assert (none["count"], none["share"]) == (0, 0.0) and "0" not in none["text"]
    assert none["text"] == "Every frequency off the keys holds at most an even share of the layer's energy."
    two = Fa.off_keys([0.0, 0.3, 0.3, 0.3, 0.1, 0.0], [1])
    assert (two["count"], two["share"]) == (2, pytest.approx(0.6)) and "holds two frequencies" in two["text"]


@known_answer(Fa.half_lead, how="constructed losses: fit at step 10; the restricted loss halves at "
                                "step 30, the test loss at step 50, with evaluations at 30 and 40 "
                                "between: two ahead; reversed, none")
def test_the_restricted_loss_lead_in_evaluations():
    steps = [0, 10, 20, 30, 40, 50, 60]
    pm = lambda r, t: NS(fit_step=10, step=steps, restricted_loss=r, history_steps=steps,  # noqa: E731
                         test_loss=t)
    lead = Fa.half_lead(pm([4, 4, 3, 1, 1, 1, 1], [8, 8, 8, 7, 6, 3, 1]))
    assert {k: lead[k] for k in ("restricted", "test", "evals")} == dict(restricted=30, test=50, evals=2)
    assert lead["text"] == ("the restricted loss gets to half first, at step 30, against step 50 "
                            "for the test loss, two evaluations ahead: on this seed, "
                            "generalization is under way that much before it shows")
    behind = Fa.half_lead(pm([4, 4, 3, 3, 3, 1, 1], [8, 8, 3, 3, 3, 3, 3]))
    assert behind["evals"] == 0 and behind["text"] == (  # no lead: nothing said "under way"
        "the restricted loss does not get to half before the test loss does")
    never = Fa.half_lead(pm([4, 4, 1, 1, 1, 1, 1], [8] * 7))  # the test loss never halves
    assert never["evals"] == 5 and "against no step in the run for the test loss" in never["text"]
    assert {k: v for k, v in Fa.half_lead(pm([4, 4, 4, 4, 4, 4, 4], [8, 8, 8, 8, 8, 8, 8])).items() if k != "text"} == dict(
        restricted=None, test=None, evals=0)


@known_answer(F.remedy_last, F.perp_phase,
              how="constructed rows: a reused run reports its own last step, a run that grokked "
                  "stopped at its grok step, one that did not ran the budget, one that diverged "
                  "stopped there; ⊥Grad fitting and grokking at one step has no plateau")
def test_the_remedies_last_steps_and_perp_phase():
    cfg = S.GrokConfig.for_profile("smoke", p=11, width=16, steps=60)
    row = lambda name, grok, status="ok", fit=None: NS(  # noqa: E731
        name=name, seed=0, grok_step=grok, status=status, fit_step=fit)
    base = NS(seed=0, config=cfg, history=NS(steps=[0, 30, 60]))
    rows = [row("baseline", 30), row("grokfast", 20), row("stablemax", None),
            row("perp_grad", None, "diverged at step 17")]
    assert F.remedy_last(rows, cfg, [base]) == {("baseline", 0): 60, ("grokfast", 0): 20,
                                                ("stablemax", 0): 60, ("perp_grad", 0): 17}
    html = F.remedy_table([NS(**vars(r), weight_decay=0.0, final_test_acc=0.5) for r in rows],
                          cfg, [base]).data
    assert "stopped at step" in html and "test accuracy at the last step run" in html
    assert "no plateau" in F.perp_phase(row("perp_grad", 40, fit=40))
    assert F.perp_phase(row("perp_grad", 80, fit=40)).endswith("2.0 times the fit step")
    assert "does not both" in F.perp_phase(row("perp_grad", None, fit=40))


def test_the_phase_figures_colour_bar_has_ticks_across_a_narrow_range():
    rows = [E.PhaseRow(**{**{f: None for f in E.PhaseRow.__dataclass_fields__ if f != "stopped"},
                          "seed": 0, "diverged": False, "train_frac": 0.5, "weight_decay": w,
                          "phase": "grokking", "grok_step": t, "fit_step": 10,
                          "end_train_acc": 1.0, "end_test_acc": 1.0})
            for w, t in ((1.0, 160), (3.0, 400))]
    bar = F.phase_figure(rows).data[0].colorbar
    assert len(bar.tickvals) >= 2 and "160" in bar.ticktext and "400" in bar.ticktext


@known_answer(E._corruption_metrics,
              how="lookup models: one that answers every training pair with its (noisy) training "
                  "label memorizes every corrupted pair and corrects none (1, 0); one that answers "
                  "with the clean labels memorizes none and corrects all (0, 1)")
def test_the_corruption_metrics_on_lookup_models():
    cfg = S.GrokConfig.for_profile("smoke", p=11, width=16, steps=5, label_noise=0.3)
    d = S.make_data(cfg, 0)
    bad = d.info["corrupted"]
    assert bad.sum() > 0 and (d.y_train[bad] != d.info["y_clean"][bad]).all()
    m = E._corruption_metrics(d)

    class Lookup(torch.nn.Module):
        def __init__(self, labels):
            super().__init__()
            self.labels = labels

        def forward(self, x):
            idx = torch.stack([(d.x_train == r).all(1).nonzero()[0, 0] for r in x])
            return torch.nn.functional.one_hot(self.labels[idx], cfg.p).float()

    noisy, clean = Lookup(d.y_train), Lookup(d.info["y_clean"])
    assert (float(m["memorized"](noisy, d)), float(m["corrected"](noisy, d))) == (1.0, 0.0)
    assert (float(m["memorized"](clean, d)), float(m["corrected"](clean, d))) == (0.0, 1.0)


@known_answer(E.unit_spectra,
              how="a constructed spectrum of 4 frequencies and 3 units: unit 0 all at k=2, unit 1 "
                  "all at k=1, unit 2 even over k=1..3 (half the energy); the layer's shares, the "
                  "units sorted by their top frequency and normalized, and the concentrations "
                  "(top tenth: one frequency of four) are known by hand")
def test_unit_spectra_on_a_constructed_case():
    units = torch.tensor([[0.0, 0.0, 0.0],
                          [0.0, 2.0, 1 / 3],
                          [2.0, 0.0, 1 / 3],
                          [0.0, 0.0, 1 / 3]])  # [K, units]: energies 2, 2, 1
    u = E.unit_spectra(units, n_units=3)
    assert u.layer == pytest.approx([0.0, (2 + 1 / 3) / 5, (2 + 1 / 3) / 5, (1 / 3) / 5])
    tops = [max(range(4), key=lambda k: row[k]) for row in u.units]
    assert tops == sorted(tops) and len(u.units) == 3
    assert all(sum(row) == pytest.approx(1.0) for row in u.units)
    # the top tenth of four frequencies rounds up to one: per unit, pooled with the units'
    # energies as weights, (2 + 2 + 1/3) / 5; the whole layer's top frequency holds (2 + 1/3) / 5
    assert u.concentration == pytest.approx((2 + 2 + 1 / 3) / 5)
    assert u.layer_concentration == pytest.approx((2 + 1 / 3) / 5)
