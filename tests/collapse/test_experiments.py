"""dynamics.collapse.experiments: the runners (progress, stopping, dry runs), and the chapter's
claims asserted in the smoke profile on seeds 0-2 with the factors the text states."""
import functools
from dataclasses import replace

import numpy as np
import pytest

from dynamics import collapse as NC
from dynamics import plots
from dynamics import progress as P
from dynamics.train import log_steps
from dynamics_ops.precompute import Runner

from known import known_answer
from seeds import SEEDS


@functools.cache
def collapse_runs(seed):
    cfg = NC.CollapseConfig.for_profile("smoke")
    return NC.run_conditions(cfg, seed, NC.load_data(cfg, seed), bars=False, held_out=True)


@functools.cache
def cross_entropy_run(seed):
    """Section 1's run with cross-entropy: same network, data, optimizer and budget."""
    cfg = NC.CollapseConfig.for_profile("smoke")
    return NC.run_collapse(cfg.replace(loss="cross_entropy"), seed, NC.load_data(cfg, seed),
                           bars=False, held_out=True)[0]


@functools.cache
def ufm_runs(seed):
    return NC.run_ufm_pair(NC.UFMConfig.for_profile("smoke", linear_depth=2), seed, bars=False)


@functools.cache
def imbalance_run(seed):
    return NC.run_imbalance(NC.ImbalanceConfig.for_profile("smoke"), seed, bars=False)


@functools.cache
def balanced_run(seed):
    """The imbalance trend's control: the same run on balanced classes."""
    icfg = NC.experiments.balanced_config(NC.ImbalanceConfig.for_profile("smoke"))
    return NC.run_imbalance(icfg, seed, bars=False)


# ----------------------------------------------------------------------------- runners


def test_runners_record_every_metric_and_stop_when_asked():
    cfg = NC.CollapseConfig.for_profile("smoke", n_classes=3, steps=60, n_evals=6)
    h, rec = NC.run_collapse(cfg, 0, snapshots=True, bars=False)
    assert set(NC.science.METRICS + NC.science.CONDITIONS) <= set(h.metrics)
    assert len(rec.snapshots) == len(h.steps) and rec.model is not None
    assert h.info["zero_error_step"] == NC.science.terminal_phase_start(h)
    # a job that stops after the first report: the other runs keep empty histories
    seen = []
    with P.reporting(lambda done: seen.append(done) or True):  # a panel's Stop
        runs = NC.run_conditions(cfg, 0, bars=False)
    assert list(runs.labelled()) == ["AdamW, weight decay", "AdamW, none", "GD, weight decay",
                                     "GD, none"]
    assert len(runs.adamw_decay) >= 1 and len(runs.adamw_none) == 0
    assert len(seen) == 1 and 0 <= seen[0] <= 1


def test_section_3s_runs_and_the_ufm_pair_are_records_that_refuse_a_renamed_field():
    """run_conditions and run_ufm_pair return records (what claims and facts read by
    attribute): a run handed in under its old label, or a pair keyed by its legend, is
    refused, naming the field; the claims' live runs are built as those records."""
    from dynamics.train import History

    cfg = NC.CollapseConfig.for_profile("smoke")
    with pytest.raises(ValueError, match="unknown field AdamW, weight decay"):
        NC.run_conditions(cfg, 0, data="not trained on", done={"AdamW, weight decay": History()})
    with pytest.raises(ValueError, match="no field none; unknown field λ = 0"):
        NC.experiments.UfmPair.of({"weight_decay": 0.1, "decay": History(), "λ = 0": History()})
    pair = NC.experiments.UfmPair(0.1, History(), History())
    assert list(pair.labelled()) == ["λ = 0.1", "λ = 0"]
    with pytest.raises(ValueError, match="runs\\[0\\] does not match Conditions"):
        NC.experiments.ClaimSeeds.of(dict(runs={0: {"AdamW, none": History()}}, ufm={},
                                          imbalance={}, ce={}, balanced={}))


def test_progress_of_several_runs_rises_from_zero_to_one():
    seen = []
    cfg = NC.ImbalanceConfig.for_profile("smoke", steps=40, ufm_steps=40)
    with P.reporting(lambda done: seen.append(done) and False):
        out = NC.run_imbalance(cfg, 0, bars=False)
    assert not out.stopped and out.network is not None
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == pytest.approx(1.0)
    seen.clear()
    with P.reporting(lambda done: seen.append(done) or done > 0.2):
        out = NC.run_imbalance(cfg, 0, bars=False)
    assert out.stopped and out.network is None and max(seen) < 0.6


def test_live_evaluations_come_at_least_every_thirtieth_of_the_run():
    steps = NC.experiments.live_eval_steps(20000, 24)
    assert max(np.diff(steps)) <= 20000 / 30 + 1
    assert set(log_steps(20000, 24)) <= set(steps)


def test_a_dry_run_trains_the_ends_of_each_list_for_a_few_steps(monkeypatch):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    cfg = NC.CollapseConfig.for_profile("smoke")
    hs = NC.experiments.run_weight_decays(cfg, (0.0, 0.1, 1.0), 0, bars=False)
    assert [h.info["config"]["weight_decay"] for h in hs] == [0.0, 1.0]
    assert all(h.steps[-1] == 3 for h in hs)


def test_precompute_in_a_dry_run_writes_every_file_elsewhere_than_data(monkeypatch, tmp_path):
    """A dry run cuts every list to its ends and every training to 3 steps, and writes to
    DYNAMICS_RESULTS_DIR, never data/. (The gpu preset's dry run, MNIST falling back to
    MNIST-1D, is the suite's dry-run test: it takes minutes at full gpu size on a CPU.)"""
    import json

    from dynamics import results

    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    before = {p.name: p.stat().st_mtime for p in results.data_dir().glob("collapse_*.json")}
    paths = Runner(NC.experiments.precompute_plan("smoke")).run()
    assert sorted(p.name for p in paths) == sorted(f"{n}.json" for n in (
        "collapse_weight_decay", "collapse_gd_weight_decay", "collapse_simplex", "collapse_imbalance"))
    assert all(p.parent == tmp_path for p in paths)
    assert before == {p.name: p.stat().st_mtime for p in results.data_dir().glob("collapse_*.json")}
    payload = json.loads((tmp_path / "collapse_weight_decay.json").read_text())["payload"]
    assert payload["weight_decays"] == [0.0, 3.0]
    assert [h["steps"] for h in payload["histories"]] == [[3], [3]]  # one evaluation, at step 3
    # the other seeds (a dry run keeps the ends, 0 and 2), every decay on each
    assert list(payload["seed_histories"]) == ["2"]
    assert [h["info"]["seed"] for h in payload["seed_histories"]["2"]] == [2, 2]
    imbalance = json.loads((tmp_path / "collapse_imbalance.json").read_text())["payload"]
    assert imbalance["seed_ratios"] == [30.0] and len(imbalance["seed_runs"]["2"]) == 1
    for name, build in (("collapse_weight_decay", NC.figures.weight_decay_slider),
                        ("collapse_gd_weight_decay", NC.figures.gd_slider), ("collapse_imbalance", NC.figures.imbalance_slider),
                        ("collapse_simplex", NC.figures.simplex_slider)):
        payload = json.loads((tmp_path / f"{name}.json").read_text())["payload"]
        assert build(NC.experiments.RECORDS[name].of(payload)).layout.sliders


# ----------------------------------------------------------------------------- claims (smoke, seeds 0-2)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_nc2_only_partly_angles_near_the_simplex_norms_unequal(seed):
    """The chapter: the angles between centred means are close to the simplex's
    (equiangularity a few hundredths, no worse than at zero error), the norms differ by several
    per cent, and the distance to the ETF, which sees both, stays well away from 0 (its value
    is glued; it was 0.30 on seed 5 with ATEN_CPU_CAPABILITY=default, so no upper bound)."""
    h = collapse_runs(seed).adamw_decay
    assert h.last("equiangularity") < 0.07
    assert h.last("equiangularity") <= NC.science.at_zero_error(h, "equiangularity")
    assert h.last("equinorm") > 0.03
    assert h.last("etf_distance") > 0.1


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_nc3_the_centred_classifier_aligns_and_papyans_nc3_heads_for_its_bias_free_value(seed):
    h = collapse_runs(seed).adamw_decay
    # the prose glues the factor; "falls" holds with a margin (1.49x on seed 5, ATEN default)
    assert h.last("nc3_centred") <= NC.science.at_zero_error(h, "nc3_centred") / 1.2
    target = NC.theory.bias_free_nc3(10)  # Papyan's NC3 at the collapse of a bias-free head
    assert abs(h.last("nc3") - target) < abs(NC.science.at_zero_error(h, "nc3") - target) / 1.5


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_raw_class_means_become_nearly_orthogonal_from_far_from_it(seed):
    for name in ("adamw_decay", "gd_decay"):
        h = getattr(collapse_runs(seed), name)
        assert h["orthogonality"][0] > 0.5 and h.last("orthogonality") < 0.2


# ----------------------------------------------------------------------------- the claims table


@functools.cache
def claim_runs():
    """The live runs the claims table judges, smoke profile, on the claim seeds."""
    done = {s: dict(runs=collapse_runs(s), ufm=ufm_runs(s), imbalance=imbalance_run(s),
                    ce=cross_entropy_run(s), balanced=balanced_run(s)) for s in SEEDS}
    return NC.experiments.run_claim_seeds(NC.CollapseConfig.for_profile("smoke"), None, None, SEEDS, done=done)


ASSERTED = 5  # NC1; GD balance; AdamW decay and ‖D‖; UFM; the test set does not collapse (GD's
#              decay holding the loss up is shown: AdamW's does too at cpu; so is the loss
#              deciding, whose control, the ratio at zero error, comes near its bar at cpu)
# At smoke the AdamW run without decay falls 9-33x after zero error: it misses NC1_FALL by less
# than its seeds' spread, so the NC1 row does not discriminate there; at the published (cpu)
# settings it does (test_claims.py: test_the_nc1_row_at_the_cpu_profile_on_the_precomputed_sweep).
SMOKE_VERDICTS = {"NC1": "does not discriminate"}


def rows(**swap):
    return NC.claims.claims(replace(claim_runs(), **swap))


def _verdict(rs, start):
    return next(r["reproduced"] for r in rs if r["claim"].startswith(start))


def _copy(h, **metrics):
    from dynamics.train import History

    out = History.from_dict(h.to_dict())
    for k, f in metrics.items():
        out.metrics[k] = [float(f(v)) for v in out.metrics[k]]
    return out


@pytest.mark.claim
def test_every_asserted_row_holds_on_the_claim_seeds():
    rs = rows()
    asserted = [r for r in rs if r["asserted"]]
    assert len(asserted) == ASSERTED and all(r["seeds"] == SEEDS for r in asserted)
    assert {r["claim"][:3]: r["reproduced"] for r in asserted if r["reproduced"] != "yes"} == SMOKE_VERDICTS
    # NC4 on the training set is automatic at zero error: said, not asserted
    nc4 = next(r for r in rs if r["claim"].startswith("NC4"))
    assert not nc4["asserted"] and "automatic" in nc4["claim"]


def test_each_asserted_row_says_no_when_its_control_does_as_well():
    runs = claim_runs().runs
    same_adam = {s: replace(r, adamw_none=r.adamw_decay) for s, r in runs.items()}
    same_gd = {s: replace(r, gd_decay=r.gd_none) for s, r in runs.items()}
    assert _verdict(rows(runs=same_adam), "under AdamW") == "no"
    rs = rows(runs=same_gd)
    assert _verdict(rs, "gradient descent with weight decay balances") == "no"
    assert _verdict(rs, "under gradient descent this decay") == "no"
    # NC1 flat through the terminal phase: no collapse
    flat = {s: replace(r, adamw_decay=_copy(r.adamw_decay, nc1=lambda v: 0.5))
            for s, r in runs.items()}
    assert _verdict(rows(runs=flat), "NC1") == "no"
    # the pair without decay in the place of the pair with it: no exact collapse
    ufm = {s: replace(p, decay=p.none, none=p.decay) for s, p in claim_runs().ufm.items()}
    assert _verdict(rows(ufm=ufm), "with weight decay the regularized") == "no"
    # the control (the λ = 0 run) must fail the row's own test: fed the run with decay as its
    # control, the row does not discriminate and says no
    same = {s: replace(p, none=p.decay) for s, p in claim_runs().ufm.items()}
    r = next(r for r in rows(ufm=same) if r["claim"].startswith("with weight decay the regularized"))
    assert r["reproduced"] == "does not discriminate" and "control passes the test too" in r["measured here"]
    # and on the real runs the control fails it on every seed, by more than the seeds' spread
    r = next(r for r in rows() if r["claim"].startswith("with weight decay the regularized"))
    assert r["reproduced"] == "yes" and r["control"].startswith("the same model without decay")
    assert r["control"].startswith("the same model without decay (λ = 0)")
    # classifier rows that shrink as the class count grows: the trend row (shown, not
    # asserted, four classes) says no
    imb = {s: replace(r, network=replace(r.network, classifier_norm=r.network.classifier_norm[::-1]))
           for s, r in claim_runs().imbalance.items()}
    trend = next(r for r in rows(imbalance=imb) if r["claim"].startswith("imbalanced classes, the network"))
    assert trend["reproduced"] == "no" and not trend["asserted"]
    # contradicted on all seeds but one: partly, and the row says on how many
    one = {**same_adam, SEEDS[0]: runs[SEEDS[0]]}
    r = next(r for r in rows(runs=one) if r["claim"].startswith("under AdamW"))
    assert r["reproduced"] == "partly" and f"holds on 1 of {len(SEEDS)} seeds" in r["measured here"]


def test_the_nc1_row_is_judged_against_the_run_without_decay_which_fails_its_test():
    """The NC1 row's control is section 3's AdamW run without decay: it reaches zero training
    error too, and its NC1 falls less than NC1_FALL times after it on every claim seed, while
    the run with decay falls more, by more than the seeds' spread; a planted control that
    collapses as far (the run with decay in its place) makes the row "does not discriminate"."""
    runs = claim_runs().runs
    j = NC.claims.evidence.judge(NC.claims.NC1_TERMINAL, {s: r.adamw_decay for s, r in runs.items()},
                                 {s: r.adamw_none for s, r in runs.items()})
    assert all(NC.science.terminal_phase_start(r.adamw_none) is not None for r in runs.values())
    assert all(v < NC.claims.NC1_FALL for v in j.control.values()), j.control
    assert all(v >= NC.claims.NC1_FALL for v in j.treatment.values()), j.treatment
    assert j.verdict == SMOKE_VERDICTS["NC1"] and "seeds' spread" in j.reason
    r = next(r for r in rows() if r["claim"].startswith("NC1"))
    assert r["reproduced"] == j.verdict and r["control"].startswith("the same AdamW run without decay")
    assert "NC1_FALL" in r["measured here"] and r["asserted"]
    planted = {s: replace(r, adamw_none=r.adamw_decay) for s, r in runs.items()}
    r = next(r for r in rows(runs=planted) if r["claim"].startswith("NC1"))
    assert r["reproduced"] == "does not discriminate" and "control passes the test too" in r["measured here"]


def test_the_imbalance_trend_is_judged_against_a_balanced_run_which_fails_its_test():
    """The trend row's control is the same network on balanced classes (same seed and class
    centres), its norms read against the imbalanced run's counts: it fails the row's test on
    every claim seed; planted as its own control (the imbalanced run) the row does not
    discriminate. The row is shown, not asserted, whatever the engine says."""
    cr = claim_runs()
    assert all(len(set(b.counts)) == 1 for b in cr.balanced.values())
    control = {s: NC.claims.as_control(cr.balanced[s], cr.imbalance[s]) for s in SEEDS}
    j = NC.claims.evidence.judge(NC.claims.IMB_TREND, cr.imbalance, control)
    assert all(not NC.claims.IMB_TREND.test.passes(v) for v in j.control.values()), j.control
    trend = next(r for r in rows() if r["claim"].startswith("imbalanced classes, the network"))
    assert trend["reproduced"] == j.verdict and not trend["asserted"]
    assert trend["control"].startswith("the same network on balanced classes")
    planted = next(r for r in rows(balanced=cr.imbalance)
                   if r["claim"].startswith("imbalanced classes, the network"))
    assert planted["reproduced"] == "does not discriminate" and not planted["asserted"]
    with pytest.raises(ValueError, match="balanced="):
        NC.claims.claims(replace(cr, balanced=None))


@known_answer(NC.experiments.balanced_config,
              how="a config of counts 160, 74, 34, 16 gives four classes of round(284 / 4) = 71 "
                  "examples, and the mixture's class centres are those of the imbalanced run")
def test_the_balanced_control_keeps_the_size_and_the_class_centres():
    icfg = NC.ImbalanceConfig.for_profile("smoke")
    assert icfg.counts() == [160, 74, 34, 16]
    assert NC.experiments.balanced_config(icfg).counts() == [71] * 4
    from dynamics import data as D
    a = D.gaussian_mixture(dim=20, n_classes=4, separation=8.0, seed=3, counts=[160, 74, 34, 16])
    b = D.gaussian_mixture(dim=20, n_classes=4, separation=8.0, seed=3, counts=[71] * 4)
    for k in range(4):  # class means of the samples agree to sampling error (unit variance)
        da = a.x_train[a.y_train == k].mean(0) - b.x_train[b.y_train == k].mean(0)
        assert float(da.norm()) < 3.0  # centres ~8 apart; sampling error ~1.2


def test_section_3s_numbers_glue_the_gd_learning_rate_and_the_final_loss():
    runs = collapse_runs(SEEDS[0])
    out = NC.conditions_numbers(runs)
    assert out["gd_lr"] == "1" == f"{NC.CollapseConfig.for_profile('smoke').gd_lr:g}"
    # GD with decay: when it reaches zero error against section 1's run, and its NC3's side of
    # the bias-free value
    z = NC.science.terminal_phase_start(runs.adamw_decay)
    assert out["adam_zero"] == ("at no step" if z is None else f"at step {z:,}")
    z = NC.science.terminal_phase_start(runs.gd_decay)
    assert out["gd_decay_zero"] == ("never reaches zero training error" if z is None
                                    else f"reaches zero training error at step {z:,}")
    target = NC.theory.bias_free_nc3(int(runs.gd_decay.info["config"]["n_classes"]))
    assert out["gd_nc3_target"] == pytest.approx(target) and out["gd_decay_nc3"] == runs.gd_decay.last("nc3")
    assert out["gd_nc3_side"] in ("at", "below", "above") and "gd_nc3_ending" in out
    assert out["adam_loss_end"] == runs.adamw_decay.last("train_loss")
    # the conditioning: the largest final value, and the largest over training (not below it)
    ends = [h.last("conditioning") for h in runs.labelled().values()]
    peaks = [max(h["conditioning"]) for h in runs.labelled().values()]
    assert out["cond_max"] == max(ends) and out["cond_peak"] == pytest.approx(max(peaks))
    assert out["cond_peak"] >= out["cond_max"]
    # the orthogonality: the row's test said as the prose says it, and the side of the runs
    # without decay, optimizer by optimizer
    worse = max(out["orth_adam"], out["orth_gd"])
    assert out["orth_reached"] == ("reach" if worse < NC.claims.ORTH_COS else "do not reach")
    d = (out["orth_none_adam"] - out["orth_adam"], out["orth_none_gd"] - out["orth_gd"])
    assert out["orth_none_side"] == ("nearer orthogonal" if max(d) < 0 else "farther from orthogonal"
                                     if min(d) > 0 else "one nearer orthogonal and one farther")
    # AdamW's ‖D‖ at the end over its first value, with and without decay, read by hand
    kept = {k: h["imbalance"][-1] / h["imbalance"][0]
            for k, h in (("with", runs.adamw_decay), ("without", runs.adamw_none))}
    assert (out["adam_decay_kept"], out["adam_kept"]) == (kept["with"], kept["without"])
    assert out["adam_decay_side"] == ("smaller" if kept["with"] < kept["without"] else "larger")
    assert out["adam_loss_ratio"] == (runs.adamw_decay.last("train_loss")
                                      / runs.adamw_none.last("train_loss"))


def test_claims_table_rows_have_verdicts_controls_windows_and_seeds():
    from dynamics import plots

    rs = rows()
    assert all(r["reproduced"] in plots.VERDICTS for r in rs) and len(rs) == 13  # the imbalance angles: published rows only
    assert all(r["control"] and r["window"] and r["seeds"] == SEEDS for r in rs)
    # NC4 reads the held-out numbers section 1's run recorded; the nearest centre disagreeing
    # with the network more often than the network errs: no
    h = {s: r.adamw_decay for s, r in claim_runs().runs.items()}
    assert _verdict(rs, "NC4") == ("yes" if all(x.last("test_nc4") < 1 - x.last("test_acc") for x in h.values()) else "partly")
    planted = {s: replace(r, adamw_decay=_copy(r.adamw_decay, test_nc4=lambda v: 0.5))
               for s, r in claim_runs().runs.items()}
    assert _verdict(rows(runs=planted), "NC4") == "no"
    # given the held-out set's size, the row also prints each seed's counts (whole numbers:
    # held_out_counts raises otherwise), disagreements and errors
    n = len(NC.load_data(NC.CollapseConfig.for_profile("smoke"), SEEDS[0]).y_test)
    nc4 = next(r for r in NC.claims.claims(claim_runs(), n) if r["claim"].startswith("NC4"))
    for s, x in h.items():
        k = NC.claims.held_out_counts(x, n)
        assert f"{k[0]:,} of {n:,} (seed {s})" in nc4["measured here"].split("; errors")[0]
        assert f"{k[1]:,} of {n:,} (seed {s})" in nc4["measured here"].split("; errors")[1]
    assert "held out:" not in next(r for r in rs if r["claim"].startswith("NC4"))["measured here"]
    # the loss row says what it tests, a level at the end; the page's verdict glue finds it
    assert sum(r["claim"] == NC.claims.LOSS_LEVEL for r in rs) == 1
    assert not any("the loss decides" in r["claim"] for r in rs)
    assert plots.verdicts(rs, v="at this budget and decay, NC1 ends")["v"] in plots.VERDICTS
    plots.claims_table(rs, strict=False)
    # the live trend row counts the classes (not the characters of their counts) and judges slopes
    n = len(claim_runs().imbalance[SEEDS[0]].counts)
    trend = next(r for r in rs if r["claim"].startswith("imbalanced classes, the network"))
    assert f"a trend over {n} classes" in trend["claim"] and f"each over {n} classes" in trend["measured here"]
    assert "slope of log norm against log count" in trend["measured here"] and "IMB_SLOPE_W" in trend["measured here"]
    orth = next(r for r in rs if r["claim"].startswith("with bounded conditioning"))
    assert "ORTH_COS" in orth["measured here"] and not orth["asserted"]


def test_claim_seeds_and_the_precomputed_scale_say_what_they_compare():
    from dynamics import results

    assert NC.claims.claim_seeds(4) == [4, 5, 6]
    _, prov = results.load("collapse_weight_decay")
    cfg = NC.CollapseConfig.for_profile("cpu")
    assert cfg.to_dict() == prov["config"]  # the committed file: the live cpu settings
    assert NC.claims.precomputed_scale(prov, cfg) == "with the same settings as the run above, on seed 0"
    assert "width 128 (above: 64)" in NC.claims.precomputed_scale(prov, cfg.replace(width=64))


# ----------------------------------------------------------------------------- the loss and the test set


def loss_pairs():
    """``(mse, ce)``: section 1's run under each loss, ``{seed: history}`` on the claim seeds."""
    return ({s: collapse_runs(s).adamw_decay for s in SEEDS},
            {s: cross_entropy_run(s) for s in SEEDS})


def test_the_held_out_runs_record_nc1_and_nc4_on_the_test_set():
    mse, ce = loss_pairs()
    for h in (*mse.values(), *ce.values()):
        assert len(h["test_nc1"]) == len(h["nc1"]) == len(h.steps)
        assert all(0 <= v <= 1 for v in h["test_nc4"])
    assert ce[SEEDS[0]].info["config"]["loss"] == "cross_entropy"
    assert mse[SEEDS[0]].info["config"]["loss"] == "mse"
    # the recorder's test NC1 is measure() on the test set: the same number at the end
    cfg = NC.CollapseConfig.for_profile("smoke", steps=40, n_evals=5)
    data = NC.load_data(cfg, 0)
    h, rec = NC.run_collapse(cfg, 0, data, bars=False, held_out=True)
    test = NC.science.measure(rec.model, data.x_test, data.y_test, data.n_classes)
    assert h.last("test_nc1") == pytest.approx(test["nc1"], rel=1e-6)
    assert "test_nc1" not in NC.run_collapse(cfg, 0, data, bars=False)[0]
    with pytest.raises(ValueError, match="held_out=True"):
        NC.loss_figure({"no test set": NC.run_collapse(cfg, 0, data, bars=False)[0]})


@pytest.mark.claim
def test_the_loss_rows_hold_on_the_claim_seeds():
    rs = NC.losses.loss_claims(*loss_pairs())
    assert len(rs) == 2 and all(r["seeds"] == SEEDS for r in rs)
    # the loss deciding is shown, not asserted: its control (the same ratio at zero error) can
    # come within its seeds' spread of CE_OVER_MSE (at cpu it does), and no other run is there
    decides, stays = rs
    assert decides["claim"].startswith("at this budget") and not decides["asserted"]
    assert "shown, not asserted" in decides["control"]
    assert stays["asserted"] and stays["reproduced"] == "yes"
    assert all(r["control"] and r["window"] for r in rs)


def test_the_loss_rows_say_no_when_the_phenomenon_is_absent():
    mse, ce = loss_pairs()
    # cross-entropy in the place of MSE (the control as the treatment): no difference
    assert _verdict(NC.losses.loss_claims(ce, ce), "at this budget") == "no"
    # a cross-entropy run that collapses as far as MSE's: no difference either
    collapsed = {s: _copy(h, nc1=lambda v, s=s: mse[s].last("nc1")) for s, h in ce.items()}
    assert _verdict(NC.losses.loss_claims(mse, collapsed), "at this budget") == "no"
    # the test set collapsing as the training set does (its NC1 the training set's): it falls
    # as far, and the row says no
    same = {s: _copy(h, test_nc1=lambda v: 1.0) for s, h in mse.items()}
    for s, h in same.items():
        h.metrics["test_nc1"] = list(h.metrics["nc1"])
    assert _verdict(NC.losses.loss_claims(same, ce), "collapse on the training set") == "no"
    # a training set that does not collapse either (the control passes too): no evidence
    flat = {s: _copy(h, test_nc1=lambda v: 1.0, nc1=lambda v: 1.0) for s, h in mse.items()}
    assert _verdict(NC.losses.loss_claims(flat, ce), "collapse on the training set") == \
        "does not discriminate"
    with pytest.raises(ValueError, match="same seeds"):
        NC.losses.loss_claims(mse, {SEEDS[0]: ce[SEEDS[0]]})


@known_answer(NC.losses.loss_numbers,
              how="constructed histories whose NC1 is 0.5 at zero error and 0.005 at the end "
                  "(MSE) and 0.4 then 0.2 (cross-entropy): falls and ratios are exact")
def test_loss_numbers_on_constructed_histories():
    from dynamics.train import History

    def run(nc1, test_nc1, acc):
        h = History()
        for k, step in enumerate((0, 10, 100)):
            h.append(step, train_acc=(0.5, 1.0, 1.0)[k], nc1=nc1[k], test_nc1=test_nc1[k],
                     test_nc4=0.01, test_acc=acc, train_loss=(1.0, 0.1, 0.01)[k])
        return h

    n = NC.losses.loss_numbers(run((1.0, 0.5, 0.005), (1.0, 0.8, 0.5), 0.9),
                               run((1.0, 0.4, 0.2), (1.0, 0.9, 0.6), 0.87))
    assert n["loss_mse_fall"] == pytest.approx(100.0) and n["loss_ce_start"] == 0.4
    assert n["loss_ce_end"] == 0.2 and n["loss_ce_over"] == pytest.approx(40.0)
    assert n["loss_ce_over_zero"] == pytest.approx(0.8)
    assert n["loss_mse_test_start"] == 0.8 and n["loss_mse_test_end"] == 0.5
    assert n["loss_mse_test_fall"] == pytest.approx(1.6)
    assert n["loss_mse_gap"] == pytest.approx(100.0) and n["loss_ce_gap"] == pytest.approx(3.0)
    assert n["loss_mse_acc"] == "90%" and n["loss_ce_acc"] == "87%"
    # the cross-entropy run's lowest NC1 from zero error on: 0.2 at step 100, no rise after it
    assert n["loss_ce_min"] == 0.2 and n["loss_ce_min_step"] == 100 and n["loss_ce_rise"] == 1.0
    assert n["loss_ce_train_loss"] == 0.01


def test_loss_figure_and_numbers():
    from dynamics import plots

    mse, ce = loss_pairs()
    s = SEEDS[0]
    fig = NC.loss_figure({"MSE": mse[s], "cross-entropy": ce[s]})
    assert len([t for t in fig.data if t.name.endswith("test set")]) == 2
    plots.house(fig)
    n = NC.losses.loss_numbers(mse[s], ce[s])
    assert n["loss_mse_gap"] == pytest.approx(mse[s].last("test_nc1") / mse[s].last("nc1"))


@known_answer(NC.losses.least_squares_split,
              how="the two terms add up exactly to the model's own regularized squared error; "
                  "at no ridge the first is numpy's least-squares residual; with a ridge the "
                  "classifier is the closed form (HᵀH + NλI)⁻¹HᵀY; a head set to the ridge "
                  "classifier of a known ridge has no deviation, and the norm-matched ridge "
                  "recovers that ridge")
def test_least_squares_split_is_han_papyan_donohos_and_matches_numpy():
    """Against numpy: the terms add up to the model's own (regularized) squared error, the
    classifier is numpy's least squares (no ridge) or ridge solution, and a head set to the
    ridge classifier of a ridge r0 has no deviation, with the matched ridge found at r0."""
    import torch

    cfg = NC.CollapseConfig.for_profile("smoke", steps=60, n_evals=5)
    data = NC.load_data(cfg, 0)
    _, rec = NC.run_collapse(cfg, 0, data, bars=False)
    model = rec.model
    with torch.no_grad():
        H = model.features(data.x_train).double().numpy()
    Y = np.eye(data.n_classes)[data.y_train.numpy()]
    W = model.head.weight.detach().double().numpy()
    N, d = H.shape
    # no ridge: plain least squares
    split = NC.losses.least_squares_split(model, data, weight_decay=0)
    sol, *_ = np.linalg.lstsq(H, Y, rcond=None)
    assert split["least_squares"] == pytest.approx(((H @ sol - Y) ** 2).sum(), rel=1e-6)
    total = ((H @ W.T - Y) ** 2).sum()
    assert split["least_squares"] + split["deviation"] == pytest.approx(total, rel=1e-6)
    assert 0 < split["deviation_share"] < 1
    # Han et al.'s ridge, λ in their normalization (1/2N)‖HWᵀ − Y‖² + (λ/2)‖W‖²
    lam = 1e-3
    split = NC.losses.least_squares_split(model, data, weight_decay=lam)
    r = N * lam
    W_r = np.linalg.solve(H.T @ H + r * np.eye(d), H.T @ Y).T
    assert split["ridge"] == pytest.approx(r)
    assert split["classifier_norm"] == pytest.approx(np.linalg.norm(W_r), rel=1e-6)
    total = ((H @ W.T - Y) ** 2).sum() + r * (W ** 2).sum()
    assert split["least_squares"] + split["deviation"] == pytest.approx(total, rel=1e-6)
    assert split["least_squares"] == pytest.approx(
        ((H @ W_r.T - Y) ** 2).sum() + r * (W_r ** 2).sum(), rel=1e-6)
    # a head that is the ridge classifier of a known ridge: no deviation, and the default
    # (ridge matched to the head's norm) finds that ridge
    with torch.no_grad():
        model.head.weight.copy_(torch.tensor(W_r, dtype=model.head.weight.dtype))
    assert NC.losses.least_squares_split(model, data, weight_decay=lam)["deviation_share"] < 1e-5
    matched = NC.losses.least_squares_split(model, data)
    assert matched["ridge"] == pytest.approx(r, rel=1e-3)
    assert matched["classifier_norm"] == pytest.approx(matched["head_norm"], rel=1e-6)
    assert matched["deviation_share"] < 1e-5
    # the unregularized classifier of these features is far larger than this head, and
    # measuring against it makes the same head deviate
    assert np.linalg.norm(sol) > 2 * np.linalg.norm(W_r)
    assert NC.losses.least_squares_split(model, data, weight_decay=0)["deviation_share"] > 1e-3
    # a head shrunk below the ridge classifier: the matched ridge is larger, the share small
    with torch.no_grad():
        model.head.weight.mul_(0.5)
    half = NC.losses.least_squares_split(model, data)
    assert half["ridge"] > r and half["classifier_norm"] == pytest.approx(half["head_norm"], rel=1e-6)
