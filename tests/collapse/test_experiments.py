"""dynamics.collapse.experiments: the runners (progress, stopping, dry runs), and the chapter's
claims asserted in the smoke profile on seeds 0-2 with the factors the text states."""
import functools

import numpy as np
import pytest

from dynamics import collapse as NC
from dynamics import progress as P
from dynamics.train import log_steps

from seeds import SEEDS


@functools.cache
def collapse_runs(seed):
    cfg = NC.CollapseConfig.for_profile("smoke")
    return NC.run_conditions(cfg, seed, NC.load_data(cfg, seed), progress=False)


@functools.cache
def ufm_runs(seed):
    return NC.run_ufm_pair(NC.UFMConfig.for_profile("smoke", linear_depth=2), seed, progress=False)


@functools.cache
def imbalance_run(seed):
    return NC.run_imbalance(NC.ImbalanceConfig.for_profile("smoke"), seed, progress=False)


# ----------------------------------------------------------------------------- runners


def test_runners_record_every_metric_and_stop_when_asked():
    cfg = NC.CollapseConfig.for_profile("smoke", n_classes=3, steps=60, n_evals=6)
    h, rec = NC.run_collapse(cfg, 0, snapshots=True, progress=False)
    assert set(NC.METRICS + NC.CONDITIONS) <= set(h.metrics)
    assert len(rec.snapshots) == len(h.steps) and rec.model is not None
    assert h.info["zero_error_step"] == NC.terminal_phase_start(h)
    # a job that stops after the first report: the other runs keep empty histories
    seen = []
    with P.reporting(lambda done: seen.append(done) or True):  # a panel's Stop
        runs = NC.run_conditions(cfg, 0, progress=False)
    assert list(runs) == ["AdamW, weight decay", "AdamW, none", "GD, weight decay", "GD, none"]
    assert len(runs["AdamW, weight decay"]) >= 1 and len(runs["AdamW, none"]) == 0
    assert len(seen) == 1 and 0 <= seen[0] <= 1


def test_progress_of_several_runs_rises_from_zero_to_one():
    seen = []
    cfg = NC.ImbalanceConfig.for_profile("smoke", steps=40, ufm_steps=40)
    with P.reporting(lambda done: seen.append(done) and False):
        out = NC.run_imbalance(cfg, 0, progress=False)
    assert not out["stopped"] and "network" in out
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == pytest.approx(1.0)
    seen.clear()
    with P.reporting(lambda done: seen.append(done) or done > 0.2):
        out = NC.run_imbalance(cfg, 0, progress=False)
    assert out["stopped"] and "network" not in out and max(seen) < 0.6


def test_live_evaluations_come_at_least_every_thirtieth_of_the_run():
    steps = NC.live_eval_steps(20000, 24)
    assert max(np.diff(steps)) <= 20000 / 30 + 1
    assert set(log_steps(20000, 24)) <= set(steps)


def test_a_dry_run_trains_the_ends_of_each_list_for_a_few_steps(monkeypatch):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    cfg = NC.CollapseConfig.for_profile("smoke")
    hs = NC.run_weight_decays(cfg, (0.0, 0.1, 1.0), 0, progress=False)
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
    paths = NC.precompute("smoke")
    assert sorted(p.name for p in paths) == sorted(f"{n}.json" for n in (
        "collapse_weight_decay", "collapse_gd_weight_decay", "collapse_simplex", "collapse_imbalance"))
    assert all(p.parent == tmp_path for p in paths)
    assert before == {p.name: p.stat().st_mtime for p in results.data_dir().glob("collapse_*.json")}
    payload = json.loads((tmp_path / "collapse_weight_decay.json").read_text())["payload"]
    assert payload["weight_decays"] == [0.0, 3.0]
    assert [h["steps"] for h in payload["histories"]] == [[3], [3]]  # one evaluation, at step 3
    for name, build in (("collapse_weight_decay", NC.weight_decay_slider),
                        ("collapse_gd_weight_decay", NC.gd_slider), ("collapse_imbalance", NC.imbalance_slider),
                        ("collapse_simplex", NC.simplex_slider)):
        assert build(json.loads((tmp_path / f"{name}.json").read_text())["payload"]).layout.sliders


# ----------------------------------------------------------------------------- claims (smoke, seeds 0-2)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_nc1_falls_tenfold_in_the_terminal_phase_and_ncc_agrees(seed):
    h = collapse_runs(seed)["AdamW, weight decay"]
    z = NC.terminal_phase_start(h)
    assert z is not None and z < h.steps[-1] // 4  # a long terminal phase
    assert NC.at_zero_error(h, "nc1") >= 10 * h.last("nc1")
    assert h.last("nc4") < 0.01


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_nc2_only_partly_angles_near_the_simplex_norms_unequal(seed):
    """The chapter: the angles between centred means are close to the simplex's
    (equiangularity a few hundredths, no worse than at zero error), the norms differ by several
    per cent, and the distance to the ETF, which sees both, stays well away from 0 (its value
    is glued; it was 0.30 on seed 5 with ATEN_CPU_CAPABILITY=default, so no upper bound)."""
    h = collapse_runs(seed)["AdamW, weight decay"]
    assert h.last("equiangularity") < 0.07
    assert h.last("equiangularity") <= NC.at_zero_error(h, "equiangularity")
    assert h.last("equinorm") > 0.03
    assert h.last("etf_distance") > 0.1


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_nc3_the_centred_classifier_aligns_and_papyans_nc3_heads_for_its_bias_free_value(seed):
    h = collapse_runs(seed)["AdamW, weight decay"]
    # the prose glues the factor; "falls" holds with a margin (1.49x on seed 5, ATEN default)
    assert h.last("nc3_centred") <= NC.at_zero_error(h, "nc3_centred") / 1.2
    target = NC.bias_free_nc3(10)  # Papyan's NC3 at the collapse of a bias-free head
    assert abs(h.last("nc3") - target) < abs(NC.at_zero_error(h, "nc3") - target) / 1.5


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_weight_decay_makes_final_nc1_tenfold_lower_under_adamw_where_the_imbalance_grows(seed):
    runs = collapse_runs(seed)
    assert runs["AdamW, none"].last("nc1") >= 10 * runs["AdamW, weight decay"].last("nc1")
    for h in (runs["AdamW, none"], runs["AdamW, weight decay"]):
        assert h.last("imbalance") > 1.1 * h["imbalance"][0]  # Adam breaks the conservation law
        assert h.last("conditioning") < 5
    assert runs["AdamW, none"].last("train_acc") == 1.0  # both fit: the difference is collapse


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_gradient_descent_conserves_the_imbalance_without_decay_and_removes_it_with(seed):
    runs = collapse_runs(seed)
    with_decay, without = runs["GD, weight decay"], runs["GD, none"]
    assert with_decay.last("train_acc") == 1.0 and without.last("train_acc") == 1.0
    kept = without.last("imbalance") / without["imbalance"][0]
    assert abs(kept - 1) < 0.05                                   # conserved (plain GD, no decay)
    assert with_decay.last("imbalance") / with_decay["imbalance"][0] < 0.15
    assert with_decay.last("balancedness") < 0.3 * without.last("balancedness")


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_under_gradient_descent_this_decay_does_not_lower_nc1_at_smoke_scale(seed):
    """What the smoke run shows (the text says so): balanced, yet NC1 at least 1.3x higher
    with the decay than without, and the training loss at least twice as high."""
    runs = collapse_runs(seed)
    with_decay, without = runs["GD, weight decay"], runs["GD, none"]
    assert with_decay.last("nc1") >= 1.3 * without.last("nc1")
    assert with_decay.last("train_loss") >= 2 * without.last("train_loss")


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_raw_class_means_become_nearly_orthogonal_from_far_from_it(seed):
    for name in ("AdamW, weight decay", "GD, weight decay"):
        h = collapse_runs(seed)[name]
        assert h["orthogonality"][0] > 0.5 and h.last("orthogonality") < 0.2


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_unconstrained_features_collapse_exactly_only_with_weight_decay(seed):
    (_, with_decay), (_, without) = ufm_runs(seed).items()
    assert with_decay.last("nc1") < 1e-8 and with_decay.last("etf_distance") < 1e-3
    assert with_decay.last("balancedness") < 1e-2
    assert without.last("nc1") > 1e-4 and without.last("etf_distance") > 0.05


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_imbalanced_means_are_orthogonal_with_the_predicted_lengths(seed):
    r = imbalance_run(seed)
    C = len(r["counts"])
    off = ~np.eye(C, dtype=bool)
    ufm = r["ufm"]
    assert np.all(np.abs(ufm["angles"][off] - 90) < 1.0)
    assert np.allclose(ufm["feature_norm"], r["theory"]["feature_norm"], rtol=0.02)
    assert np.allclose(ufm["classifier_norm"], r["theory"]["classifier_norm"], rtol=0.02)
    net = r["network"]
    # the network: every angle from about 70° to 90° (a simplex would put them at 109.5°),
    # longer classifier rows and shorter feature means for larger classes
    assert net["train_acc"] == 1.0
    assert np.all((70 < net["angles"][off]) & (net["angles"][off] < 91))
    logn = np.log(np.asarray(r["counts"]))
    assert np.corrcoef(logn, np.log(net["classifier_norm"]))[0, 1] > 0.5
    assert np.corrcoef(logn, np.log(net["feature_norm"]))[0, 1] < -0.4


def test_claims_table_rows_have_verdicts_and_are_flagged_where_not_reproduced():
    from dynamics import plots

    rows = NC.claims(collapse_runs(0)["AdamW, weight decay"], collapse_runs(0), ufm_runs(0), imbalance_run(0))
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)
    verdicts = {r["claim"].split(":")[0]: r["reproduced"] for r in rows}
    assert verdicts["NC1"] == "yes" and verdicts["NC4"] == "yes"
    assert verdicts["NC2"] != "yes"  # the norms stay unequal at this scale: said, not hidden
    assert len(rows) == 11
