"""The page's numbers, worked answers, tables and claims table of dynamics.initialization,
on the published data."""
import json
import math
from dataclasses import replace
from types import SimpleNamespace as NS

import numpy as np
import pytest

from dynamics import evidence, plots, results
from dynamics.initialization import claims as C
from dynamics.initialization import experiments as E
from dynamics.initialization import facts as Fa
from dynamics.initialization import figures as F
from dynamics.initialization import science as S
from known import known_answer


def _chaos(critical_theory=1.76, sigma_b2=0.05, width=256, **xi_measured) -> E.ChaosRun:
    """A constructed :class:`~dynamics.initialization.records.ChaosRun`: the fields a test
    reads given, the rest empty."""
    xm = E.XiMeasured(**{**dict(sigma_w2=[], xi=[], layers_used=[], xi_theory=[]), **xi_measured})
    line = E.CriticalLine(sigma_b2=[], sigma_w2=[])
    return E.ChaosRun(sigma_b2=sigma_b2, width=width, depth=0, q_map=[], c_map=[],
                      line_theory=line, line_measured=line, critical_theory=critical_theory,
                      critical_measured=critical_theory, xi_theory=E.XiTheory(sigma_w2=[], xi=[]),
                      xi_measured=xm, wall_time=0.0)


# ----------------------------------------------------------------------------- claims table


def grid(**fields) -> E.Trainability:
    """A constructed trainability grid: ``fields`` over a small default of every field."""
    base = dict(depths=[], sigma_w2=[], acc=[], seeds=[0], acc_per_seed=[], line_sigma_w2=[],
                six_xi=[], critical=1.76, sigma_b2=0.05, steps=10, width=8, lr_depth=0.08,
                n_train=100, diverged=[], stopped=False, wall_time=0.0)
    return E.Trainability(**{**base, **fields})


def test_claims_table_rows_and_verdicts():
    heat = results.load("initialization_trainability", as_=E.Trainability)[0]
    depth_time = results.load("initialization_depth_time", as_=E.DepthTime)[0]
    more = results.load("initialization_trainability_seeds", as_=E.Trainability)[0]
    rows = C.claims(heat=replace(heat, seeds=[0]), more=more, depth_time=depth_time)
    assert rows == C.published_claims()  # the page's rows on data/ are the published ones
    # the edge-of-chaos row is shown: judged on the cells all of seeds 0-4 have, both placebo
    # edges fail its test, and the treatment clears it by about the seeds' spread: "yes" on
    # one regeneration of the grid, "within noise" on others (the grids of 2026-11-29, made on
    # this machine); the page glues that verdict and says it is fragile
    assert len(rows) == 3 and [r["asserted"] for r in rows] == [False, False, True]
    assert rows[0]["reproduced"] in ("yes", "within noise") and len(rows[0]["seeds"]) == 5
    assert [len(r["seeds"]) for r in rows if r["asserted"]] == [5]  # three seeds at least
    for row in rows:
        assert set(row) == {"claim", "paper", "measured here", "reproduced", "asserted",
                            "control", "window", "seeds", "evidence"}
        assert row["control"] and row["window"] and row["seeds"]
        assert row["reproduced"] in plots.VERDICTS
    html = plots.claims_table(rows).data
    assert "not reached" not in html and "None" not in html


def test_prose_numbers_of_the_trainability_grid():
    """The cells the prose lists where the 6 xi_c line and training disagree are those of the
    grid, and every number it glues is there."""
    heat = grid(depths=[10, 40], sigma_w2=[1.0, 1.76, 3.0], sigma_b2=0.05,
                acc=[[1.0, 1.0, 0.3], [0.9, 0.9, 0.12]], width=8, steps=10)
    dis = E.trainability_disagreements(heat)
    limit = {s: S.trainable_depth(s, 0.05) for s in heat.sigma_w2}
    assert dis["beyond"] == [(1.0, 40)] and 40 > limit[1.0]
    assert dis["before"] == [(3.0, 10), (3.0, 40)] and 40 <= limit[3.0]
    more = grid(depths=[40], sigma_w2=[1.76], seeds=[1, 2], acc_per_seed=[[[0.9], [0.8]]])
    num = Fa.trainability_numbers(heat, more)
    assert num["init_more_seeds"] == "1 and 2" and num["init_more_depths"] == "40"
    assert num["init_beyond"] == "σ_w² = 1 at depth 40" and num["init_before"] == "σ_w² = 3 at depths 10 and 40"
    assert num["init_d0_min"] == "at least 30% training accuracy everywhere" and num["init_deepest_trained"] == "1 and 1.76"
    assert num["init_trained_counts"] == "2 and 2" and num["init_depths"] == "10 and 40"
    assert Fa._at_least([1.0, 1.0]) == "100% training accuracy in every cell"
    assert Fa._at_least([1.0, 0.998]) == "at least 99.8% training accuracy everywhere"
    # a lower bound, rounded down: the float32 0.685 the depth-20 row stores is not "at least 69%"
    low = float(np.float32(0.685))
    assert Fa._at_least([1.0, low]) == "at least 68.5% training accuracy everywhere"
    assert Fa._at_least([0.6899]) == "at least 68.9% training accuracy everywhere"
    below = float(np.nextafter(np.float32(0.685), np.float32(0)))  # the float32 just under 0.685
    assert Fa._at_least([below]) == "at least 68.5% training accuracy everywhere"
    assert Fa._at_least([float(np.float32(0.75))]) == "at least 75% training accuracy everywhere"
    rows = C.trainability_claims(heat)  # the observations are glued, not rows with a verdict
    assert [r["claim"][:28] for r in rows] == ["deep networks (depth ≥ 30) t",
                                               "networks train when depth ≲ "]
    real = results.load("initialization_trainability", as_=E.Trainability)[0]
    seeds = results.load("initialization_trainability_seeds", as_=E.Trainability)[0]
    num = Fa.trainability_numbers(real, seeds)
    assert num["init_agree"].endswith("%") and "nowhere" not in num["init_beyond"]
    # the edge-of-chaos sentence on the published grid: its row's verdict, and what it rests on
    row = C.trainability_claims(real, seeds)[0]
    assert num["init_edge_verdict"] == row["reproduced"] and num["init_edge_on"] == "every seed"
    lead = row["evidence"][0]["treatment"]
    low, high = min(lead, key=lead.get), max(lead, key=lead.get)
    mid = float(np.median(list(lead.values())))  # the margin the engine weighs is the median's
    f = lambda v: plots.number(v, 2)  # two significant figures, as the row prints them
    assert (num["init_edge_low"], num["init_edge_mid"], num["init_edge_bar"], num["init_edge_by"]) == (
        f"{f(lead[low])} on seed {low}", f(mid), "0.2", f(mid - 0.2))
    assert num["init_edge_noise"] == (f"{f(lead[high] - lead[low])}, from {f(lead[low])} on seed "
                                      f"{low} to {f(lead[high])} on seed {high}")
    times = (mid - 0.2) / (lead[high] - lead[low])
    assert num["init_edge_times"] == f"{times:.1f} times"
    assert (row["reproduced"] == "yes") == (times > 1)


def test_edge_margin_words_follow_a_constructed_row():
    """Known answers: leads 0.5, 0.3 and 0.45 against a bar of 0.2 clear it on every seed, the
    smallest 0.3 (seed 1); the engine weighs the median, 0.45, which clears the bar by 0.25,
    1.25 times the spread 0.2 (from 0.3 on seed 1 to 0.5 on seed 0); a lead below the bar is
    counted out; one seed (no spread) gives no multiple."""
    test = dict(op=">=", threshold=0.2, name="bar", scale="linear")
    ev = dict(test=test, treatment={0: 0.5, 1: 0.3, 2: 0.45}, noise=0.2)
    num = Fa._edge_margin(dict(evidence=[ev]))
    # each number as the row prints it (two significant figures: 0.3, not 0.30)
    assert num == dict(init_edge_on="every seed", init_edge_low="0.3 on seed 1", init_edge_mid="0.45",
                       init_edge_bar="0.2", init_edge_by="0.25",
                       init_edge_noise="0.2, from 0.3 on seed 1 to 0.5 on seed 0",
                       init_edge_times="1.2 times")
    assert num["init_edge_mid"] == C.EDGE.fmt(0.45) and C.EDGE.fmt(0.402) == "0.4"
    num = Fa._edge_margin(dict(evidence=[dict(ev, treatment={0: 0.5, 1: 0.1, 2: 0.45})]))
    assert num["init_edge_on"] == "2 of 3 seeds" and num["init_edge_low"] == "0.1 on seed 1"
    num = Fa._edge_margin(dict(evidence=[dict(ev, treatment={"0": 0.5}, noise=None)]))
    assert num["init_edge_noise"] == "none measured" and num["init_edge_low"] == "0.5 on seed 0"
    dt = Fa.depth_time_numbers(results.load("initialization_depth_time", as_=E.DepthTime)[0])
    assert float(dt["init_dt_orth"]) < 2.5


def test_answers_that_need_no_training():
    text = E.answer_band()
    assert "critical σ_w² = 1.00, band [0.83, 6.93]" in text and "[1.79, 4.91]" in text
    res = E.run_signal(S.SignalConfig.for_profile("smoke", depth=6, width=16, n_inputs=16),
                       inits=("lsuv",), activations=("tanh",))
    assert "q* = 1 at σ_w² = 2.536, where χ₁ = 1.178" in E.answer_lsuv_gain(res)


def test_table_rows():
    heat = grid(depths=[10, 40], sigma_w2=[1.0, 1.76, 3.0], sigma_b2=0.05,
                acc=[[1.0, 1.0, 1.0], [0.1, 0.9, 0.12]])
    rows = F.trainability_rows(heat)
    assert rows[0]["σ_w² with train acc ≥ 0.5"] == "all"
    assert rows[1]["σ_w² with train acc ≥ 0.5"] == "1.76" and rows[1]["best σ_w²"] == "1.76"
    assert rows[0]["best σ_w²"] == "all (tie)"  # not the first of the tied (referee 8)
    heat.acc[1] = [0.1, 0.9, 0.9]
    assert F.trainability_rows(heat)[1]["best σ_w²"] == "1.76 and 3 (tie)"
    assert rows[0]["σ_w² with depth ≤ 6 ξ_c (theory)"] == "1.00 and up"
    assert rows[1]["σ_w² with depth ≤ 6 ξ_c (theory)"].endswith("and up")
    res = E.run_signal(S.SignalConfig.for_profile("smoke", depth=3, width=8, n_inputs=16),
                       inits=("zero", "he"))
    rows = F.signal_rows(res)
    assert len(rows) == 4 and {r["activation"] for r in rows} == {"tanh", "relu"}
    assert set(rows[0]) == {"activation", "init", "activation std, last/first layer",
                            "‖dL/dz‖, first/last layer", "‖dL/dW‖, median over layers 2–L"}
    zero = next(r for r in rows if r["init"] == "zero")
    assert zero["activation std, last/first layer"] is None
    assert zero["‖dL/dz‖, first/last layer"] is None and zero["‖dL/dW‖, median over layers 2–L"] is None
    he = next(r for r in rows if r["init"] == "he" and r["activation"] == "relu")
    sm = S.signal_summary(res.relu["he"])  # the table shows the summary, no other number
    assert he["‖dL/dz‖, first/last layer"] == sm["backward"] > 0
    html = plots.table(rows, missing="no signal").data
    assert "no signal" in html and "None" not in html


def test_section_numbers_say_what_constructed_curves_do():
    """The glued words follow the numbers (referee 2, 3, 6, 7): a first layer apart or not, a
    weight gradient that peaks and falls, a chaotic phase above the theory, a deep half above
    the line 2 + 2(l − 1)/3."""
    g = [0.3, 3.0, 6.0, 10.0, 8.0, 6.5]  # peaks at layer 4, falls to the last
    signal = E.Signal(relu=dict(he=NS(grad_norm=g, act_std=[1.0, 1.0, 0.9, 0.8, 0.6, 0.5]),
                                zero=NS(grad_norm=[0.0] * 6, act_std=[0.0] * 6)),
                      tanh=dict(orthogonal=NS(grad_norm=[0.156, 0.156, 0.15], act_std=[0.5] * 3)))
    num = Fa.signal_numbers(signal)
    assert num["init_sig_apart"].startswith("ReLU He (0.3 against 3")
    assert num["init_sig_close"].startswith("tanh orthogonal") and "zero" not in str(num)
    assert "a peak of 10 at layer 4, then falls by 35% to 6.5" in num["init_sig_he"]
    assert "0.9 entering layer 4 to 0.6 entering the last" in num["init_sig_he"]
    signal.relu["he"].grad_norm = sorted(g)
    assert "falls" not in Fa.signal_numbers(signal)["init_sig_he"]
    chaos = _chaos(1.76, sigma_w2=[0.5, 1.9, 2.64, 3.01, 4.5], xi=[1.0, 36.4, 12.0, 10.8, 7.31],
                   xi_theory=[1.0, 41.7, 10.8, 9.0, 6.43])
    num = Fa.chaos_numbers(chaos)
    assert num["init_xi_hot_dev"] == "11% to 20% above"
    assert num["init_xi_peak_dev"] == "36.4 layers measured against 41.7 in theory at σ_w² = 1.9"
    chaos.xi_measured.xi[2] = 9.0
    assert Fa.chaos_numbers(chaos)["init_xi_hot_dev"] == "between −17% and +20% of"
    layers = list(range(1, 65))
    fluct = E.Fluctuations(layers=layers, width=64, n_nets=2, depth=64, orthogonal=[0.1] * 64,
                           orthogonal_slope=0.0, gaussian_slope=0.74,
                           gaussian=[2 + 0.74 * l for l in layers])
    num = Fa.fluctuation_numbers(fluct)
    assert num["init_fl_deep"].startswith("above it") and num["init_fl_slope"] == "0.74"
    assert num["init_orth_growth"] == "1"  # a flat curve: deep half over shallow half, 1
    fluct.gaussian[-1] = 1.0  # the last layer below the line: named as the last, not "the rest"
    assert Fa.fluctuation_numbers(fluct)["init_fl_deep"] == (
        "above it in 31 of its 32 layers, below in the rest (at layer 64, the last: 1 against 44)")
    fluct.gaussian = [2 + 0.74 * l for l in layers]
    fluct.gaussian = [2 + 2 * l / 3 - 0.1 for l in layers]  # below 2 + 2l/3, above the line
    assert Fa.fluctuation_numbers(fluct)["init_fl_deep"].startswith("above it")
    renamed = {**fluct.to_dict(), "gaussian_slopes": 0.74}
    del renamed["gaussian_slope"]  # a renamed field: the record refuses it, naming it
    with pytest.raises(ValueError, match="no field gaussian_slope; unknown field gaussian_slopes"):
        E.Fluctuations.of(renamed)


@known_answer(Fa.leading_line, how="one Gaussian layer: n Var[G]/E[G]^2 = 2 exactly (a "
                                   "chi-squared with n degrees of freedom); slope 2/3 per layer")
def test_leading_line_is_two_at_layer_one_and_rises_two_thirds_per_layer():
    line = Fa.leading_line([1, 2, 4, 64])
    assert line[0] == 2.0 and np.allclose(np.diff(line) / np.diff([1, 2, 4, 64]), 2 / 3)


@known_answer(C.measured_c_star, how="the fixed point of the correlation map of mean-field "
                                     "theory: 1 in the ordered phase, S.c_star(3, 0.05) < 1 in "
                                     "the chaotic phase")
def test_measured_c_star_is_the_fixed_point_of_the_iterated_network():
    chaos = _chaos(sigma_b2=0.05, width=256)
    assert C.measured_c_star(chaos, 0, 1.0) == pytest.approx(1.0, abs=0.02)
    assert C.measured_c_star(chaos, 0, 3.0) == pytest.approx(S.c_star(3.0, 0.05), abs=0.08)
    # the row: measured at sigma_w^2 = 3, the ordered network its control, which fails
    row = evidence.judge(C.C_STAR, {s: (chaos, s) for s in (0, 1)},
                         {s: (chaos, s) for s in (0, 1)})
    assert row.verdict == "yes" and all(v > C.C_STAR_MAX for v in row.control.values())


@known_answer(C._xi_dev, how="a measurement equal to the theory deviates by 0; the ordered "
                             "phase's formula read across the edge deviates from it by more "
                             "than XI_DEV_MAX in the chaotic phase")
def test_xi_deviation_in_the_chaotic_phase_tells_the_theory_from_the_null():
    b2, crit = 0.05, S.critical_sigma_w2(0.05)
    s = [0.5, 1.0, 2.5, 3.0, 4.0]
    chaos = _chaos(crit, b2, sigma_w2=s, xi=[S.depth_scale(v, b2) for v in s])
    assert C._xi_dev(chaos, S.depth_scale) == pytest.approx(0.0, abs=1e-12)
    assert C._xi_dev(chaos, C._xi_ordered_formula) > C.XI_DEV_MAX
    j = evidence.judge(C.XI_CHAOTIC, {0: chaos}, {0: chaos})
    assert j.treatment[0] < C.XI_DEV_MAX <= j.control[0]
    # nothing measured in the chaotic phase: no number, the row cannot pass
    cold = replace(chaos, xi_measured=replace(chaos.xi_measured, sigma_w2=s[:2],
                                              xi=chaos.xi_measured.xi[:2]))
    assert math.isnan(C._xi_dev(cold, S.depth_scale))


@known_answer(C._per_layer_factor, how="a network whose variance halves every layer forward and "
                                       "backward has per-layer factor 1/2; one that keeps it, 1")
def test_per_layer_variance_factor_of_constructed_signals():
    L = 11
    halves = NS(act_std=[0.5 ** (l / 2) for l in range(L)],
                grad_in=[0.5 ** ((L - 1 - l) / 2) for l in range(L)])
    keeps = NS(act_std=[1.0] * L, grad_in=[1.0] * L)
    assert S.std_ratio(halves) == pytest.approx(0.5 ** 5)
    assert C._per_layer_factor(halves) == pytest.approx(0.5)
    assert C.XAVIER_HALVES.measure(E.Signal(relu=dict(xavier=halves))) == pytest.approx(0.0, abs=1e-12)
    assert C.XAVIER_HALVES.control_measure(E.Signal(relu=dict(he=keeps))) == pytest.approx(0.5)


@known_answer(C._best_factor, how="a grid whose best sigma_w^2 is the critical one: factor 1; "
                                  "a placebo edge a factor 2 away: factor 2")
def test_best_sigma_w2_factor_against_the_edge():
    b2 = 0.05
    crit = S.critical_sigma_w2(b2)
    sig = [0.5 * crit, crit, 2 * crit]
    run = ([10, 40], sig, [[0.9, 0.9, 0.9], [0.2, 0.9, 0.3]], b2)
    assert C._best_factor(run) == pytest.approx(1.0)
    assert C._best_factor(run, 2.0) == pytest.approx(2.0)
    assert C._best_factor(run, 0.5) == pytest.approx(2.0)


@known_answer(C.falls_to, how="the index of the last value of a strictly falling start")
def test_falls_to_and_the_glued_learning_rates():
    assert C.falls_to([1.03, 0.72, 0.25, 0.085, 0.12]) == 3
    assert C.falls_to([1.0, 2.0]) == 0 and C.falls_to([3.0, 2.0, 1.0]) == 2
    assert Fa._lr_falls([2, 4, 8, 16, 32], [1.03, 0.72, 0.25, 0.085, 0.12]) == \
        "falls from 1 at depth 2 to 0.085 at depth 16 and is 0.12 at depth 32"


def test_xi_peak_is_placed_against_the_grid_point_nearest_the_edge():
    chaos = _chaos(1.76, sigma_w2=[0.4, 1.15, 1.89, 2.62, 3.35], xi=[1.0, 8.0, 36.4, 12.0, 9.0],
                   xi_theory=[1.0, 9.0, 41.7, 10.8, 8.0])
    assert Fa.chaos_numbers(chaos)["init_xi_peak_at"].startswith(
        "σ_w² = 1.89, the measured σ_w² nearest the critical 1.76 (grid step 0.74)")
    chaos.xi_measured.xi = [1.0, 40.0, 36.4, 12.0, 9.0]
    assert "1.15, not the measured" in Fa.chaos_numbers(chaos)["init_xi_peak_at"]


@known_answer(C.geometric_factor, how="a signal that shrinks by exactly 0.16 per layer until it "
                                      "underflows: the factor is 0.16, layer 1 (another fan-in) "
                                      "and the underflowed layers left out")
def test_geometric_factor_reads_the_per_layer_factor_before_underflow():
    a = [3.0] + [0.16 ** l for l in range(1, 60)] + [0.0] * 10
    assert C.geometric_factor(NS(act_std=a)) == pytest.approx(0.16, rel=1e-9)
    assert math.isnan(C.geometric_factor(NS(act_std=[1.0, 0.0, 0.0])))


def test_small_start_is_the_closed_forms_std():
    """The row's closed form uses SMALL_INIT_STD: the small start's weights have that std."""
    import torch
    model = S.init_mlp(40, 512, 3, "relu", "small")
    w = torch.cat([layer.weight.detach().flatten() for layer in model.hidden[1:]])
    assert float(w.std()) == pytest.approx(C.SMALL_INIT_STD, rel=0.02)
    assert C._small_dev(NS(act_std=[1.0] + [0.16 ** l for l in range(1, 20)]), 512) \
        == pytest.approx(abs(0.16 / (0.01 * 16) - 1), abs=1e-12)


@known_answer(C.power_over_geometric, how="log std exactly linear in ln l (a power law) or in l "
                                          "(geometric): the ratio is inf or 0")
def test_power_over_geometric_tells_a_power_law_from_a_geometric_decay():
    l = np.arange(1, 101)
    assert C.power_over_geometric(NS(act_std=l ** -0.5)) > 10
    assert C.power_over_geometric(NS(act_std=0.96 ** l)) < 1e-6
    assert C.power_over_geometric(NS(act_std=(l ** -0.5).tolist())) > C.POWER_FIT \
        > C.power_over_geometric(NS(act_std=(0.7 ** l).tolist()))
    assert math.isnan(C.power_over_geometric(NS(act_std=[1.0, 0.0])))


# ----------------------------------------------------------------------------- typed data files

_FILES = [("initialization_trainability", E.Trainability, "acc"),
          ("initialization_trainability_seeds", E.Trainability, "acc_per_seed"),
          ("initialization_depth_time", E.DepthTime, "orthogonal_per_seed")]


@pytest.mark.parametrize("name, record, key", _FILES)
def test_each_data_file_is_read_through_its_record(name, record, key):
    """Each file the published rows read matches its record field by field, and gives its
    payload back as the file holds it (the same keys, in the same order)."""
    run, _ = results.load(name, as_=record)
    assert isinstance(run, record) and run.to_dict() == results.load(name)[0]
    assert list(run.to_dict()) == list(results.load(name)[0])


@pytest.mark.parametrize("name, record, key", _FILES)
def test_a_renamed_field_of_a_data_file_fails_at_once(tmp_path, monkeypatch, name, record, key):
    """A payload with one key renamed is refused when the file is loaded, naming the field
    (both sides: the one the record lacks and the one the file does not have); and
    published_claims reads the files through their records, so it refuses it too."""
    for other in {n for n, _, _ in _FILES} - {name}:
        (tmp_path / f"{other}.json").write_text((results.DATA / f"{other}.json").read_text())
    blob = json.loads((results.DATA / f"{name}.json").read_text())
    blob["payload"][f"{key}_renamed"] = blob["payload"].pop(key)
    (tmp_path / f"{name}.json").write_text(json.dumps(blob))
    monkeypatch.setattr(results, "DATA", tmp_path)
    says = rf"{name}\.json.*unknown field {key}_renamed"
    with pytest.raises(ValueError, match=says):
        results.load(name, as_=record)
    with pytest.raises(ValueError, match=says):
        C.published_claims()


def test_a_depth_time_unit_writes_only_its_init():
    """A unit of the learning-time precompute runs one init: its payload has that init's
    fields and no others (as the units stored in data/ have), and reads back as the same
    record; an init the record does not name is refused."""
    one = E.DepthTime(depths=[2], lrs=[0.1], criterion=0.05, steps=10, width=8, seeds=[0],
                      gaussian=[5.0], gaussian_lr=[0.1], gaussian_per_seed=[[5.0]], wall_time=1.0)
    assert list(one.to_dict()) == ["depths", "lrs", "criterion", "steps", "width", "seeds",
                                   "gaussian", "gaussian_lr", "gaussian_per_seed", "wall_time"]
    assert E.DepthTime.of(one.to_dict()) == one and one.times("orthogonal") is None
    with pytest.raises(ValueError, match="unknown init 'lecun'"):
        one.times("lecun")
    lacking = dict(one.to_dict(), gaussian_lr=None)  # an init with one field missing
    lacking.pop("gaussian_lr")
    with pytest.raises(ValueError, match="no field gaussian_lr"):
        E.DepthTime.of(lacking)


@known_answer(C.depth_growth, how="constructed curves over layers 1-64: a flat one gives 1; "
              "the leading line 2 + 2(l - 1)/3 gives (mean over 33-64)/(mean over 1-32) = "
              "(2 + 2*47.5/3)/(2 + 2*15.5/3), by hand; a falling one gives less than 1; and a "
              "curve rising from 0.01 to 0.074, whose slope (0.001) a slope test calls flat, "
              "grows by (0.01 + 0.001*47.5)/(0.01 + 0.001*15.5)")
def test_depth_growth_is_scale_free():
    layers = np.arange(1, 65)
    assert C.depth_growth(layers, np.full(64, 0.2)) == pytest.approx(1.0)
    line = 2 + 2 * (layers - 1) / 3
    assert C.depth_growth(layers, line) == pytest.approx((2 + 2 * 47.5 / 3) / (2 + 2 * 15.5 / 3))
    assert C.depth_growth(layers, 0.23 * np.exp(-layers / 20)) < 1
    small = 0.01 + 0.001 * (layers - 1)
    assert C.depth_growth(layers, small) == pytest.approx((0.01 + 0.0475) / (0.01 + 0.0155))
    assert C.depth_growth(layers, small) > C.FLUCT_GROWTH_MAX  # grows, so the row's test fails it


@known_answer(E.trainability_agreement, C._depth_rule_agreement,
              how="constructed grids: accuracies set to 1 exactly where depth <= 6 xi_c (and 0 "
                  "elsewhere), then two cells flipped and one left unmeasured, agree on 9 of "
                  "the 11 measured cells; a grid trained exactly where depth <= 10 but for one cell "
                  "agrees with the best depth-only cut on 11 of 12")
def test_trainability_agreement_and_its_depth_only_null_on_constructed_grids():
    from dynamics.initialization.science import trainable_depth
    depths, sig, b2 = [4, 10, 30, 60], [1.2, 1.76, 2.5], 0.05
    limit = [trainable_depth(s, b2) for s in sig]
    acc = [[1.0 if d <= lim else 0.0 for lim in limit] for d in depths]
    acc[0][0] = 1.0 - acc[0][0]  # two cells disagree with the line
    acc[3][2] = 1.0 - acc[3][2]
    acc[2][1] = None  # one cell not measured: left out
    heat = NS(depths=depths, sigma_w2=sig, sigma_b2=b2, acc=acc)
    assert E.trainability_agreement(heat, 0.5) == (pytest.approx(9 / 11), 11)
    by_depth = [[1.0 if d <= 10 else 0.0 for _ in sig] for d in depths]
    by_depth[3][1] = 1.0  # one deep cell trains: the cut at 10 misses it, and only it
    heat = NS(depths=depths, sigma_w2=sig, sigma_b2=b2, acc=by_depth)
    assert C._depth_rule_agreement(heat) == pytest.approx(11 / 12)


@known_answer(C._map_dev, how="iterates that follow the map exactly deviate by 0; one step "
                              "made 3% long deviates by exactly 3%, whichever map is asked")
def test_length_map_deviation_of_constructed_iterates():
    b2, w2 = 0.05, 2.0
    seq = [0.1]
    for _ in range(4):
        seq.append(S.q_map(seq[-1], w2, b2))
    exact = _chaos(sigma_b2=b2)
    exact.q_map = [E.QMap(sigma_w2=w2, q_in=[], q_out=[], q_star=0.0, measured=[seq])]
    assert C._map_dev(exact, S.q_map) == pytest.approx(0.0, abs=1e-12)
    long = replace(exact, q_map=[replace(exact.q_map[0], measured=[[seq[0], 1.03 * seq[1]]])])
    assert C._map_dev(long, S.q_map) == pytest.approx(0.03, rel=1e-9)
    linear = [[0.1, w2 * 0.1 + b2, w2 * (w2 * 0.1 + b2) + b2]]
    lin = replace(exact, q_map=[replace(exact.q_map[0], measured=linear)])
    assert C.Q_MAP.control_measure(lin) == pytest.approx(0.0, abs=1e-12)
    # tanh's map lies below the linear one: the control misses the measured iterates
    assert C.Q_MAP.control_measure(exact) > C.MAP_REL > C.Q_MAP.measure(exact)


@known_answer(C._line_dev, how="at sigma_b^2 = 0 the edge of chaos is sigma_w^2 = 1 exactly "
                               "(q* = 0, tanh'(0) = 1); a measured 1.02 there is 2% off, "
                               "against the theory and against the null alike")
def test_critical_line_deviation_at_the_closed_form_point():
    chaos = _chaos(critical_theory=1.0, sigma_b2=0.0)
    chaos.critical_measured = 1.02
    assert C._line_dev(chaos, S.critical_sigma_w2) == pytest.approx(0.02, abs=1e-4)
    assert C._line_dev(chaos, lambda b: 1.0) == pytest.approx(0.02, abs=1e-12)
    b2 = 0.05  # a measured line on the theory: the null (sigma_w^2 = 1) misses by 76%
    on = replace(chaos, sigma_b2=b2, critical_measured=S.critical_sigma_w2(b2),
                 line_measured=E.CriticalLine(sigma_b2=[b2], sigma_w2=[S.critical_sigma_w2(b2)]))
    assert C._line_dev(on, S.critical_sigma_w2) == pytest.approx(0.0, abs=1e-12)
    assert C.CRITICAL_LINE.control_measure(on) > C.CRITICAL_REL
    # a line point 5% above the theory: relative 0.05 (the absolute gap is about 0.09)
    off = replace(on, line_measured=E.CriticalLine(sigma_b2=[b2],
                                                   sigma_w2=[1.05 * S.critical_sigma_w2(b2)]))
    assert C._line_dev(off, S.critical_sigma_w2) == pytest.approx(0.05, rel=1e-9)


@known_answer(C._band_factor, how="a signal that grows 4x forward and halves backward is a "
                                  "factor 4 from flat; a flat one, 1")
def test_band_factor_of_constructed_signals():
    grows = NS(act_std=[1.0, 2.0, 4.0], grad_in=[0.5, 1.0, 1.0])
    flat = NS(act_std=[3.0] * 3, grad_in=[2.0] * 3)
    assert C._band_factor({"he": grows, "xavier": flat}, ["he", "xavier"]) == pytest.approx(4.0)
    assert C._band_factor({"he": grows, "xavier": flat}, ["xavier"]) == pytest.approx(1.0)
    # flat forward, the backward signal a quarter at the first layer: a factor 4 either way
    back = NS(act_std=[1.0] * 3, grad_in=[0.25, 1.0, 1.0])
    assert C._band_factor({"he": back}, ["he"]) == pytest.approx(4.0)
    dead = NS(act_std=[1.0, 0.0], grad_in=[1.0, 1.0])  # no signal at the last layer
    assert C._band_factor({"zero": dead}, ["zero"]) == math.inf


@known_answer(C._lsuv_factor, how="output variances 1, 0.5 and 1.25: the farthest from 1 is "
                                  "0.5, a factor 2")
def test_lsuv_factor_of_constructed_variances():
    lsuv = NS(out_var=[1.0, 0.5, 1.25], start_out_var=[1.0, 1.0, 1.0])
    sig = E.Signal(tanh=dict(lsuv=lsuv), relu=dict(lsuv=NS(out_var=[1.1], start_out_var=[1.0])))
    assert C._lsuv_factor(sig, "out_var") == pytest.approx(2.0)
    low = E.Signal(tanh=dict(lsuv=lsuv), relu=dict(lsuv=NS(out_var=[0.25], start_out_var=[1.0])))
    assert C._lsuv_factor(low, "out_var") == pytest.approx(4.0)  # ReLU's, not tanh's
    assert C._lsuv_factor(sig, "start_out_var") == pytest.approx(1.0)


@known_answer(C._saxe_dev, how="logistic curves half-learned at steps 20 and 40 (exact) and "
                               "22 and 42 (measured) deviate by 10% at most; a run learned earlier "
                               "than the exact solution, or weakest first, does not follow it")
def test_saxe_deviation_of_constructed_curves():
    steps = list(range(101))

    def curves(halves):
        return [[1 / (1 + math.exp(-(t - h) / 2)) for t in steps] for h in halves]

    def run(measured, exact=(20, 40)):
        return E.Saxe(steps=steps, loss=[], progress=curves(measured), strengths=[2.0, 1.0],
                      lr=0.1, depth=2, init="small", status="", diverged=False,
                      theory=curves(exact))
    assert C._saxe_dev(run((22, 42))) == pytest.approx(0.10)
    assert C._saxe_dev(run((20, 40))) == pytest.approx(0.0)
    assert C._saxe_dev(run((18, 44))) == math.inf  # the strong mode before the exact solution
    assert C._saxe_dev(run((44, 42))) == math.inf  # the weak mode first
    assert C._saxe_dev(run((22, 200))) == math.inf  # the weak mode never half-learned


@known_answer(C.chance_favourite_share,
              how="by enumeration: 2 guesses over 2 classes, the favourite takes 3/4; 3 over 3, "
                  "17/27; 1 guess, all of it; and 1,000 over 10 agrees with a seeded "
                  "multinomial simulation")
def test_chance_favourite_share_of_unbiased_guesses():
    assert C.chance_favourite_share(2, 2) == pytest.approx(0.75, abs=1e-12)
    assert C.chance_favourite_share(3, 3) == pytest.approx(17 / 27, abs=1e-12)
    assert C.chance_favourite_share(1, 5) == pytest.approx(1.0, abs=1e-12)
    sim = np.random.default_rng(0).multinomial(1000, [0.1] * 10, size=20000).max(1) / 1000
    assert C.chance_favourite_share(1000, 10) == pytest.approx(sim.mean(), abs=4 * sim.std() / 141)
    assert C.chance_favourite_share(1000, 10) > 0.11  # not the 1/10 of each class
    with pytest.raises(ValueError, match="n_classes >= 2"):
        C.chance_favourite_share(100, 1)
    with pytest.raises(ValueError, match="integers"):
        C.chance_favourite_share(100.5, 10)
    assert C.chance_favourite_share(np.int64(1000), 10) == C.chance_favourite_share(1000, 10)
    # it stops once the tail is negligible: a larger n is a few convolutions more, not hours
    # (the sum reaches k = n only if it never stops; at 2,000 inputs that is ~15 s)
    assert C.chance_favourite_share(2000, 10) == pytest.approx(0.1110, abs=1e-3)  # simulated: 0.1110
