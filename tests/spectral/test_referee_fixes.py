"""Known answers for the spectral page's numbers added after the referees' readings: the half
rank and first-below steps the prose quotes, the band's threshold and steps, the shaping cutoff,
the schedule row's measure, control and words, the memory file's shortfall past N = d, Muon
against Newton at the largest N, the least draw's lead over SGD and the live run's identity."""
import math
from types import SimpleNamespace

import pytest

from dynamics.spectral import claims as C
from dynamics.spectral import experiments as E
from dynamics.spectral import facts as FA
from dynamics.spectral import science as S
from dynamics import evidence
from dynamics.train import History
from known import known_answer


def _memory(by_rank=None, ratios=(1, 4), centers=None, fraction=None, alpha=1.0) -> E.Memory:
    """A constructed :class:`~dynamics.spectral.experiments.Memory`: ``by_rank`` per method and
    N/d, the rank bins' centres ``centers`` per N/d; the rest filled in."""
    methods = sorted((by_rank or fraction).keys())
    return E.Memory(n=[int(64 * r) for r in ratios], ratios=list(ratios), dim=64, alpha=alpha,
                    fraction=fraction or {m: [0.5] * len(ratios) for m in methods}, mass={},
                    by_rank=by_rank or {}, rank_centers=centers or [], draws=[0], by_draw={})


@known_answer(E.recall_half_rank,
              how="constructed recall per rank bin: at N = 4d SGD falls under half in its second bin "
                  "(centre 3) and Muon in its fourth (centre 12); a method that never falls under half "
                  "gives infinity; exactly one half is not under half; N/d 3.4 reads the 4d bins")
def test_recall_half_rank_on_constructed_bins():
    centers = [[1, 2, 4, 8], [1, 3, 6, 12]]
    by_rank = {"sgd": [[1.0, 1.0, 0.2, 0.0], [0.9, 0.4, 0.1, 0.0]],
               "muon": [[1.0, 1.0, 1.0, 1.0], [1.0, 0.8, 0.5, 0.3]],
               "newton": [[1.0, 1.0, 1.0, 1.0], [1.0, 0.9, 0.7, 0.6]]}
    m = _memory(by_rank, centers=centers)
    assert E.recall_half_rank(m, "sgd") == 3
    assert E.recall_half_rank(m, "muon") == 12  # 0.5 in the third bin is not under half
    assert E.recall_half_rank(m, "newton") == math.inf
    assert E.recall_half_rank(m, "sgd", ratio=1) == 4
    assert E.recall_half_rank(m, "muon", ratio=1) == math.inf
    assert E.recall_half_rank(m, "sgd", ratio=3.4) == 3  # the nearest N/d is 4
    # the row's measure: Muon's half rank over SGD's, 12 / 3 = 4
    assert C.DEEPER.measure({"sgd": 3, "muon": 12}) == pytest.approx(4.0)


def _history(steps, loss) -> History:
    h = History()
    for st, v in zip(steps, loss):
        h.append(st, train_loss=v)
    return h


@known_answer(FA.first_below,
              how="constructed curves at steps 8, 16, 24, 32: run a is below b from step 16 and below "
                  "c only from 32, so below both first at 32 (16 against b alone); after=16 skips "
                  "step 16; a never below a lower curve gives None; equal losses are not below")
def test_first_below_on_constructed_curves():
    steps = [8, 16, 24, 32]
    runs = {"a": _history(steps, [1.0, 0.8, 0.6, 0.4]), "b": _history(steps, [0.9, 0.9, 0.9, 0.9]),
            "c": _history(steps, [0.5, 0.5, 0.6, 0.5]), "d": _history(steps, [0.1, 0.1, 0.1, 0.1])}
    assert FA.first_below(runs, "a", ("b",)) == 16
    assert FA.first_below(runs, "a", ("b", "c")) == 32
    assert FA.first_below(runs, "a", ("b",), after=16) == 24
    assert FA.first_below(runs, "a", ("d",)) is None
    assert FA.first_below(runs, "c", ("a",), after=16) is None  # 0.6 = 0.6 at step 24, then 0.5 > 0.4


@known_answer(FA.power_of_ten, FA.shaping_cutoff,
              how="hand-written: 0.0015 is 1.5×10⁻³, 0.001 is 10⁻³, 0.00999 rounds up to 10⁻²; the "
                  "weakest direction kept at the cutoff 10⁻³ (SpectralShaping's default, which the runs "
                  "build it with) gets (10⁻³)^p of the strongest's weight: 10^0.75 = 5.62 at p = −0.25 "
                  "and 10^1.5 = 31.6 at p = −0.5")
def test_power_of_ten_and_the_shaping_cutoff():
    assert FA.power_of_ten(0.0015) == "1.5×10⁻³"
    assert FA.power_of_ten(1e-3) == "10⁻³"
    assert FA.power_of_ten(0.00999) == "10⁻²"
    assert FA.power_of_ten(250.0) == "2.5×10²"
    with pytest.raises(ValueError):
        FA.power_of_ten(0.0)
    cut = FA.shaping_cutoff()
    assert cut == dict(cut_eps="10⁻³", cut_25="5.62", cut_50="31.6")
    # the optimizer the runs build (experiments.run_shaped passes no rel_eps) holds that cutoff
    import torch
    assert S.SpectralShaping([torch.nn.Parameter(torch.zeros(3, 3))]).rel_eps == 1e-3
    # the cutoff is the one spectral_shape applies: a direction at 0.9e-3 σ_max is dropped
    import torch
    G = torch.diag(torch.tensor([1.0, 2e-3, 0.9e-3]))
    shaped = torch.linalg.svdvals(S.spectral_shape(G, -0.5))
    assert int((shaped > 1e-6).sum()) == 2
    assert float(shaped.max() / shaped[shaped > 1e-6].min()) == pytest.approx((2e-3) ** -0.5, rel=1e-4)


@known_answer(FA.band_facts, FA.ns_facts,
              how="a hand-made band: the largest σ 1.2 at step 3, then 1.134 at steps 4 and 5 (one value "
                  "'at every step'), or 1.13 and 1.134 (a range), the least 0.7 from step 3 on; ns_facts' "
                  "threshold is 1.5×10⁻³: five quintic steps lift σ = 1.5×10⁻³ into the band's bottom "
                  "(0.67 to 0.7) and leave 10⁻³ below 0.5; its top is the map's largest value, 1.202")
def test_band_facts_read_the_steps():
    q = E.Band(k=list(range(6)), lo=[0.03, 0.1, 0.3, 0.7, 0.71, 0.72], hi=[0.2, 0.5, 1.1, 1.2, 1.134, 1.134])
    got = FA.band_facts(E.Bands(quintic=q))
    assert (got["top_3"], got["low_3"]) == ("1.2", "0.7")
    assert got["top_after"] == "1.134 at every step from four on"
    assert got["test_band"] == "[0.6, 1.25]"  # the range the claims rows test against
    q2 = E.Band(k=q.k, lo=q.lo, hi=[0.2, 0.5, 1.1, 1.2, 1.13, 1.134])
    assert FA.band_facts(E.Bands(quintic=q2))["top_after"] == "1.13 to 1.134 from step four on"
    ns = FA.ns_facts(loaded_timing())
    assert ns["band_from"] == "1.5×10⁻³" and ns["band_top"] == "1.202"
    # the threshold by the map itself: 1.5e-3 lands in the band's bottom, 1e-3 does not
    assert 0.67 < S.ns_map(1.5e-3, 5) < 0.7 and S.ns_map(1e-3, 5) < 0.5


@known_answer(FA.band_numbers,
              how="the cubic 1.5x − 0.5x³ multiplies σ by at most 1.5 a step, so after 5 steps the "
                  "smallest σ of a 256×128 Gaussian matrix (about (16 − 11.3)/181 of ‖G‖_F) is at "
                  "most 1.5⁵ ≈ 7.6 times its start, far below the band's 0.6: the band row's control fails")
def test_the_band_rows_control_is_the_cubic_and_fails():
    bn = FA.band_numbers([0])[0]
    start = S.singular_value_band(S.random_matrix(256, 128, "gaussian", seed=0), 0)["lo"][0]
    assert bn["cubic"][0] <= 1.5 ** 5 * start * (1 + 1e-4)
    assert C._band_margin(bn["cubic"]) < 0 < C._band_margin(bn["quintic"])
    assert C.NS_BAND.control_measure(bn) == pytest.approx(C._band_margin(bn["cubic"]))


def loaded_timing():
    from dynamics import results
    return results.load("spectral_timing", as_=E.RECORDS["spectral_timing"])[0]


def _shaped(sched=0.05, muon=0.25, neg=0.1):
    return {"p = 0.5": {"final": 0.4}, "p = 0": {"final": muon}, "p = -0.5": {"final": neg},
            "p: 0.5 → -0.5": {"final": sched}, E.DECAYED: {"final": 0.01}}


@known_answer(FA._below_fixed, FA._end_p, FA._vs_end,
              how="constructed final losses: the schedule 0.05 against fixed p 0.4, 0.25, 0.1: "
                  "0.1/0.05 = 2; its control, Muon (0.25), against the other fixed p: 0.1/0.25 = 0.4, "
                  "it fails where p = −0.5 ends below it; with p = −0.5 at 0.3, above Muon, it passes "
                  "(0.3/0.25 = 1.2); with p = −0.5 at 0.04 the schedule fails (0.8)")
def test_the_schedule_rows_measure_and_control():
    runs = _shaped()
    assert FA._end_p(runs) == -0.5
    assert C.SCHED_BELOW.measure(runs) == pytest.approx(2.0)
    assert C.SCHED_BELOW.control_measure(runs) == pytest.approx(0.4)
    assert C.SCHED_BELOW.control_measure(_shaped(neg=0.3)) == pytest.approx(1.2)
    low = _shaped(neg=0.04)
    assert C.SCHED_BELOW.measure(low) == pytest.approx(0.8)
    assert FA._vs_end(0.05, 0.1) == "ends 2.00× below that run"
    assert FA._vs_end(0.05, 0.04) == "does not end below that run"
    assert FA._vs_end(None, 0.04).startswith("cannot")


@known_answer(C.schedule_facts,
              how="the schedule's row judged on three constructed seeds: the best fixed p at 2, 2.5 and "
                  "2.2 times the schedule's final loss (median log10 2.2 = 0.34, spread log10 1.25 = "
                  "0.097), Muon failing: yes; Muon below every other fixed p on every seed: its control "
                  "passes, does not discriminate; the schedule above p = −0.5: no")
def test_schedule_facts_read_the_row():
    def row(**kw):
        seeds = {s: _shaped(sched=0.1 / r, **kw) for s, r in enumerate((2.0, 2.5, 2.2))}
        return evidence.judge(C.SCHED_BELOW, seeds).row()
    got = C.schedule_facts([row()])
    # Muon (0.25) against the other fixed p: 0.1/0.25 = 0.40 on every seed
    assert got == dict(sched_ratio="2.00×–2.50×", sched_log="0.34", sched_noise="0.097",
                       sched_says=C._SCHED_SAYS["yes"].format(ctrl="0.40×"))
    assert "a fixed p ends below Muon, at 0.40× its final loss" in got["sched_says"]
    assert got["sched_says"].startswith("the schedule ends below every fixed p by more than that noise")
    fooled = C.schedule_facts([row(muon=0.09, neg=0.1)], name="file")  # Muon below p = 0.5 and -0.5
    assert fooled["file_says"] == C._SCHED_SAYS["does not discriminate"]
    bad = evidence.judge(C.SCHED_BELOW, {0: _shaped(sched=0.2), 1: _shaped(sched=0.3)}).row()
    assert C.schedule_facts([bad])["sched_says"] == "the schedule does not end below every fixed p"
    assert C.schedule_facts([bad])["sched_ratio"] == "0.33×–0.50×"
    with pytest.raises(ValueError, match="expected one"):
        C.schedule_facts([row(), row()])


@known_answer(FA.alpha_shortfall,
              how="constructed files at α 0.5 and 1: at N = 4d NS₅ stores 0.72 against Newton's 0.85 "
                  "(0.85 of it) at 0.5 and 0.46 against 0.48 (0.96) at 1, further short at the shallower "
                  "α: not ordered; swapped, it is no further short and grows with α; over three α the "
                  "first pair out of order is the one named")
def test_alpha_shortfall_on_constructed_files():
    def mem(muon, newton, a):
        return _memory(fraction={"muon": [1.0, muon], "newton": [1.0, newton], "sgd": [0.5, 0.1]}, alpha=a)
    got = FA.alpha_shortfall({"0.5": mem(0.72, 0.85, 0.5), "1": mem(0.46, 0.48, 1.0)})
    assert got == dict(short_a="0.5", short_b="1", short_muon_a="72%", short_muon_b="46%",
                       short_newton_a="85%", short_newton_b="48%", short_word="further short of",
                       short_clause="Past N = d NS₅'s shortfall is not ordered by α")
    swapped = FA.alpha_shortfall({"0.5": mem(0.46, 0.48, 0.5), "1": mem(0.72, 0.85, 1.0)})
    assert swapped["short_word"] == "no further short of"
    assert swapped["short_clause"] == "Past N = d NS₅'s shortfall still grows with α"
    # α 0.5, 1, 1.5: 0.99, 0.9 (ordered), then 0.95 at 1.5: the pair (1, 1.5) is out of order
    three = FA.alpha_shortfall({"0.5": mem(0.99, 1.0, 0.5), "1": mem(0.45, 0.5, 1.0), "1.5": mem(0.38, 0.4, 1.5)})
    assert (three["short_a"], three["short_b"], three["short_word"]) == ("1", "1.5", "further short of")
    assert "not ordered" in three["short_clause"]


@known_answer(FA.live_repeat,
              how="the shaping file's seeds at lr 0.05: Muon's loss at step 0 is 2.3057, 2.3081, 2.3059 "
                  "(within 0.1% of one another: ln 10 for any initialization) and at step 8 2.0804, "
                  "2.1178, 2.0946 (apart by more than 0.6%); a live run of seed 0 (step 8 at 2.08041) "
                  "repeats the middle run, one of seed 2 does not, nor one at another rate or steps, "
                  "nor one evaluated at step 0 only")
def test_live_repeat_tells_the_seeds_apart():
    def rate(lr, step0, step8, steps=(0, 8, 16)):
        h = _history(list(steps), [step0, step8, 1.5][:len(steps)])
        return SimpleNamespace(lr=lr, runs={"p = 0": h, "p = -0.5": h})
    hist = {"0.02": rate(0.02, 2.3057, 2.2116), "0.05": rate(0.05, 2.3057, 2.0804), "0.1": rate(0.1, 2.3057, 1.858)}
    live = rate(0.05, 2.30571, 2.08041)
    live.runs[E.DECAYED] = live.runs["p = 0"]
    said = FA.live_repeat(live, hist)
    assert said.startswith("repeats the slider's middle run (lr 0.05, its first seed: Muon's loss at step 8 is "
                           "2.0804 here, 2.0804 in the file)")
    assert "part at float rounding" in said
    for seed, (s0, s8) in {1: (2.3081, 2.1178), 2: (2.3059, 2.0946)}.items():
        other = FA.live_repeat(rate(0.05, s0, s8), hist)
        assert other.startswith("is not the slider's middle run") and "float rounding" not in other, seed
    assert FA.live_repeat(rate(0.1, 2.3057, 2.0804), hist).startswith("is not")
    assert FA.live_repeat(rate(0.05, 2.3057, 2.0804, steps=(0, 8)), hist).startswith("is not")
    only0 = {k: rate(float(k), 2.3057, 0, steps=(0,)) for k in hist}
    assert FA.live_repeat(rate(0.05, 2.3057, 0, steps=(0,)), only0).startswith("is not")


@known_answer(FA.far_words,
              how="constructed memories over N/d 1, 4, 8, 16: at 16d Muon 0.7 against Newton 0.6 is "
                  "'more than' even where it stores fewer at 8d; 0.5 against 0.6 'fewer than'; equal "
                  "'as many as'; a run that stops at 4d has no N = 8d to read, and raises")
def test_far_words_read_the_largest_n():
    def mem(m8, n8, m16, n16):
        return _memory(fraction={"muon": [1.0, 0.9, m8, m16], "newton": [1.0, 0.95, n8, n16]},
                       ratios=(1, 4, 8, 16))
    assert FA.far_words(mem(0.5, 0.8, 0.7, 0.6)) == "more than"
    assert FA.far_words(mem(0.9, 0.8, 0.5, 0.6)) == "fewer than"
    assert FA.far_words(mem(0.9, 0.8, 0.6, 0.6)) == "as many as"
    with pytest.raises(ValueError, match="short of 8d"):
        FA.far_words(_memory(fraction={"muon": [1.0, 0.9], "newton": [1.0, 0.95]}, ratios=(1, 4)))


@known_answer(FA.least_ahead,
              how="two constructed draws over B = 1, 2, 4, 8: on the first Muon reaches 90% of its full "
                  "recall at B = 8, 0.6 against SGD's 0.05 (12x); on the second at B = 4, where "
                  "0.55/0.09 = 6.1 is less than 12 at B = 8: the least is 6.1; a draw where Muon never "
                  "reaches it has no lead, and with none at all the page says none")
def test_least_ahead_over_constructed_draws():
    sgd = [0.01, 0.06, 0.09, 0.05]
    muon = {0: [0.012, 0.06, 0.3, 0.6], 1: [0.012, 0.06, 0.55, 0.6]}

    def batch(full_muon):
        return E.MemoryBatch(n=3, dim=4, alpha=0.0, seed=0, batch_sizes=[1, 2, 4, 8],
                             recall={"sgd": sgd, "muon": muon[0]}, full={"sgd": 0.06, "muon": 0.6},
                             draws=[0, 1], by_draw={"sgd": [sgd, sgd], "muon": [muon[0], muon[1]]},
                             full_by_draw={"sgd": [0.06, 0.06], "muon": full_muon}, again_by_draw=[])
    assert FA.least_ahead(batch([0.6, 0.6])) == "6.1"
    assert FA.least_ahead(batch([1.0, 0.6])) == "6.1"  # the first draw never reaches 0.9
    assert FA.least_ahead(batch([0.6, 1.0])) == "12"
    assert FA.least_ahead(batch([1.0, 1.0])) == "none"


@known_answer(FA.width_facts,
              how="a constructed width run: Muon's change 1.0 then 0.9 (shrinks to 0.9) and its "
                  "RMS→RMS norm 1.15 and 1.2 per unit lr: the glue reads 1.15 and 1.2")
def test_width_facts_give_the_norms_range():
    w = E.Width(widths=[32, 256], change={"muon": [1.0, 0.9]}, norm={"muon": [1.15, 1.2]})
    got = FA.width_facts(w)
    assert (got["muon_norm_lo"], got["muon_norm_hi"]) == ("1.15", "1.2")
    assert got["muon_growth"].startswith("shrinks to 0.9")
