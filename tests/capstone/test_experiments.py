"""dynamics.capstone.experiments: one run with its timeline, the questions' runners, and the
claims that the page asserts, on the claim seeds."""
import math

import pytest

from dynamics import plots
from dynamics.capstone import experiments as E
from dynamics.capstone import views as V
from dynamics.capstone.science import MEASURES, OneConfig
from seeds import SEEDS

TINY = OneConfig(p=11, train_frac=0.8, width=16, steps=40, n_evals=12, rewind_step=3)


@pytest.fixture(scope="module")
def tiny():
    return E.run(TINY, 0)


def test_run_keeps_a_timeline_aligned_with_the_history(tiny):
    tl, h = tiny.timeline, tiny.history
    assert tl["step"] == h.steps and all(len(tl[k]) == len(h.steps) for k in MEASURES)
    assert math.isnan(tl["update_rank"][0]) and all(0 < v <= 1.0 + 1e-6 for v in tl["update_rank"][1:])
    k = min(h.steps, key=lambda s: abs(s - 3))
    assert sorted(tiny.states) == [0, k]  # θ₀ and the evaluation nearest the rewind step
    s = tiny.summary()
    assert s["tau"] == pytest.approx(1 / (TINY.lr * TINY.weight_decay)) and "settle_step" in s


def test_run_with_muon_and_a_large_init(tiny):
    r = E.run(TINY.replace(optimizer="muon", init_scale=3.0, steps=10), 0)
    assert len(r.timeline["step"]) == len(r.history.steps)
    assert r.timeline["weight_rms"][0] == pytest.approx(3 * tiny.timeline["weight_rms"][0], rel=1e-5)


def test_init_sweep_and_clock_grid_rows():
    rows = E.init_sweep(TINY, [0.5, 2.0], seeds=[0, 1])
    assert sorted((r["seed"], r["init_scale"]) for r in rows) == [(0, 0.5), (0, 2.0), (1, 0.5), (1, 2.0)]
    clock = E.clock_grid(TINY, [1e-2, 2e-2], [1.0], seeds=[0])
    assert [r["tau"] for r in clock] == pytest.approx([100.0, 50.0])
    with pytest.raises(ValueError, match="weight decays > 0"):
        E.clock_grid(TINY, [1e-2], [0.0])
    with pytest.raises(ValueError, match="AdamW"):
        E.init_sweep(TINY.replace(optimizer="muon"), [1.0])


def test_a_cell_the_first_run_made_is_read_from_it_not_trained_again(tiny, monkeypatch):
    """The page's sweeps reuse its first run for the cell that has its config: only the other
    cells reach the sweep engine, and the rows keep the cells' order."""
    trained = []
    many = E._many
    monkeypatch.setattr(E, "_many", lambda cfg, cells, *a, **k: (trained.extend(cells),
                                                                  many(cfg, cells, *a, **k))[1])
    rows = E.init_sweep(TINY, [0.5, 1.0, 2.0], [0], reuse=[tiny])
    assert [r["init_scale"] for r in rows] == [0.5, 1.0, 2.0]
    assert [c["init_scale"] for c in trained] == [0.5, 2.0]
    assert rows[1]["grok_step"] == tiny.grok_step and rows[1]["fit_step"] == tiny.fit_step
    trained.clear()
    clock = E.clock_grid(TINY, [TINY.lr], [TINY.weight_decay, 3.0], [0], reuse=[tiny])
    assert [c["weight_decay"] for c in trained] == [3.0]
    assert clock[0]["settle_step"] == tiny.summary()["settle_step"]
    trained.clear()
    E.init_sweep(TINY, [1.0], [1], reuse=[tiny])  # another seed: not the same run
    assert len(trained) == 1


def test_the_live_axes_fit_a_t4s_ten_minutes_at_gpu():
    """At gpu, where one run is about a minute on a T4, the page trains nine runs after its
    first (the gpu plan checks the minutes: tests/test_gpu.py); at smoke and cpu the smoke
    grid."""
    cfg = OneConfig.for_profile("gpu")
    axes = E.live_grid("gpu")
    new = (len(axes.init_scales) - 1 + len(axes.weight_decays) * (1 + len(axes.clock_lrs)) - 1
           + len(axes.learning_rates(cfg)["muon"]) + 4)
    assert new == 9 and cfg.weight_decay in axes.weight_decays and 1.0 in axes.init_scales
    assert E.live_grid("cpu") == E.live_grid("smoke")
    assert E.live_grid("smoke").learning_rates(TINY)["muon"] == [TINY.muon_lr / 2, 2 * TINY.muon_lr]


def test_clock_fit_recovers_a_power_law_and_lists_its_failures():
    rows = [dict(tau=t, grok_step=3 * t) for t in (10, 30, 100, 300)] + [dict(tau=5, grok_step=None)]
    fit = E.clock_fit(rows)
    assert fit["slope"] == pytest.approx(1.0) and fit["r2"] == pytest.approx(1.0)
    assert fit["n"] == 4 and len(fit["failed"]) == 1 and not fit["off"]
    assert math.isnan(E.clock_fit(rows[:2])["slope"])


def test_lottery_arms_and_refusals(tiny):
    lot = E.lottery(tiny, keep_frac=0.5)
    assert list(lot["arms"]) == list(E.LOTTERY_ARMS) and lot["rewind_step"] == max(tiny.states)
    assert 0.45 < lot["density"] < 0.65  # the head is pruned at half the rate
    with pytest.raises(ValueError, match="pruning fraction"):
        E.lottery(tiny, keep_frac=0.0)
    with pytest.raises(ValueError, match="kept no state"):
        E.lottery(E.run(TINY.replace(steps=10), 0, keep=(0,)), rewind_step=5)


def test_collapse_timing_and_optimizer_runs(tiny):
    c = E.collapse_timing(tiny)
    assert {"nc1_fit", "nc1_grok", "nc1_falls", "lead"} <= set(c)
    opt = E.optimizer_runs(TINY.replace(steps=10), 0, lrs={"adamw": [1e-2], "muon": [0.1]})
    assert set(opt) == {"adamw", "muon"} and opt["muon"]["best"].config.muon_lr == 0.1
    with pytest.raises(ValueError, match="unknown optimizer"):
        E.optimizer_runs(TINY, 0, lrs={"sgd": [0.1]})


def test_precompute_dry_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    plan = E.precompute_plan("smoke")
    assert [u.name for u in plan.units] == ["grid adamw seed=0", "grid muon seed=0", "clock seed=0"]
    (path,) = E.precompute("smoke")
    assert path.exists()
    import json
    blob = json.loads(path.read_text())
    payload, prov = blob["payload"], blob["provenance"]
    assert prov["profile"] == "smoke" and len(payload["rows"]) == len(payload["curves"])
    assert {r["optimizer"] for r in payload["rows"]} == {"adamw", "muon"}


# ----------------------------------------------------------------------------- claims

_RUNS = {}


def _first(seed):
    if seed not in _RUNS:
        _RUNS[seed] = E.run(OneConfig.for_profile("smoke"), seed)
    return _RUNS[seed]


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_one_network_groks(seed):
    r = _first(seed)
    assert r.fit_step is not None and r.grok_step is not None
    assert r.grok_step >= 5 * r.fit_step


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_fourier_sparsity_and_low_rank_through_the_plateau(seed):
    tl = _first(seed).timeline
    assert tl["fourier"][-1] > tl["fourier"][0] + 0.4
    assert tl["weight_rank"][-1] < tl["weight_rank"][0] - 0.2
    # the rank falls while the accuracies are flat: between the fit and grok steps
    r = _first(seed)
    i, j = tl["step"].index(r.fit_step), tl["step"].index(r.grok_step)
    assert tl["weight_rank"][j] < tl["weight_rank"][i] - 0.05


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_the_weight_rms_grows_to_fit_then_shrinks(seed):
    r = _first(seed)
    rms = r.timeline["weight_rms"]
    peak = max(rms)
    assert peak > 3 * rms[0] and rms[-1] < 0.95 * peak


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_lazier_start_groks_later(seed):
    cfg = OneConfig.for_profile("smoke")
    rows = {r["init_scale"]: r for r in E.init_sweep(cfg, [0.5, 4.0], [seed])}
    lo, hi = rows[0.5]["grok_step"], rows[4.0]["grok_step"]
    assert lo is not None and (hi is None or hi > 1.2 * lo)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_nc1_does_not_fall_before_grokking(seed):
    """Shown as ✗ on the page: the training-set NC1 does not halve between fit and grok."""
    c = E.collapse_timing(_first(seed))
    assert c["nc1_falls"] is None or c["nc1_falls"] > c["grok_step"]
    assert c["nc1_grok"] > 0.5 * c["nc1_fit"]


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claims_table_rows_the_prose_asserts_hold(seed):
    r = _first(seed)
    rows = V.claims(r, E.init_sweep(r.config, [0.5, 4.0], [seed]),
                    [dict(lr=1e-2, weight_decay=1.0, tau=100.0, grok_step=r.grok_step)],
                    dict(adamw=dict(best=r), muon=dict(best=r)), E.lottery(r), E.collapse_timing(r))
    assert not plots.failed_claims(rows), plots.failed_claims(rows)


def test_lottery_keeps_masks_and_states_on_the_run_device():
    """On a GPU, the random-mask control and the fresh initialization met θ₀ and the masks on
    the device (they were built on the CPU): the stand-in device refuses that, and gives the
    CPU's numbers once they meet."""
    from dynamics import standin
    from dynamics.grokking.science import make_data

    plain = E.lottery(E.run(TINY, 0), keep_frac=0.5)
    with standin.active():
        run = E.run(TINY, 0, data=make_data(TINY.grok(), 0, device="cuda"))
        assert run.data.device.type == "cuda"
        lot = E.lottery(run, keep_frac=0.5)
    assert lot["density"] == plain["density"] and list(lot["arms"]) == list(plain["arms"])
    assert repr(lot["arms"]) == repr(plain["arms"])
