"""dynamics.capstone.experiments: one run with its timeline, the questions' runners, and the
claims that the page asserts, on the claim seeds."""
import functools
import math
import types

import pytest
import torch

from dynamics import models as M
from dynamics import plots
from dynamics.capstone import experiments as E
from dynamics.capstone import claims as C
from dynamics.capstone import facts as Fa
from dynamics.capstone.science import MEASURES, OneConfig
from dynamics_ops.precompute import Runner
from seeds import SEEDS

TINY = OneConfig(p=11, train_frac=0.8, width=16, steps=40, n_evals=12, rewind_step=3)


def cell(**fields) -> E.GridRow:
    """A constructed grid row: ``fields`` over a default of every field."""
    base = dict(init_scale=1.0, weight_decay=1.0, seed=0, optimizer="adamw", fit_step=10,
                grok_step=None, phase="memorization", tau=100.0, final_train_acc=1.0,
                final_test_acc=0.5, status="ok", lr=1e-2)
    return E.GridRow(**{**base, **fields})


@pytest.fixture(scope="module")
def tiny():
    return E.run(TINY, 0)


@pytest.mark.parametrize("optimizer", ["adamw", "muon"])
def test_the_step_the_probe_keeps_is_the_step_the_optimizer_takes_without_decay(optimizer):
    """Known answer from torch itself: a copy of the model and of its optimizer (same moments
    and momentum, after a few steps), stepped on the same gradient with its weight decay set
    to 0, moves the hidden matrix by exactly what decoupled_step leaves of the real update
    with hidden_shrink's ηλ; the whole update differs from it by the decay term."""
    import copy

    from dynamics.capstone import science as S
    from dynamics.grokking.science import make_data, make_model

    cfg = TINY.replace(optimizer=optimizer, weight_decay=3.0, muon_lr=0.05)
    data = make_data(cfg.grok(), 0)
    model = make_model(cfg.grok(), 0)
    opt = E.optimizer_for(cfg, model)
    loss = lambda m: torch.nn.functional.cross_entropy(m(data.x_train), data.y_train)  # noqa: E731
    for _ in range(3):  # moments and momentum that are not zero
        opt.zero_grad()
        loss(model).backward()
        opt.step()
    opt.zero_grad()
    loss(model).backward()
    twin, twin_opt = copy.deepcopy((model, opt))  # one deepcopy: the copies stay paired
    assert {id(q) for g in twin_opt.param_groups for q in g["params"]} == \
        {id(q) for q in twin.parameters()}
    for q, q_twin in zip(model.parameters(), twin.parameters()):
        q_twin.grad = q.grad.clone()  # deepcopy leaves gradients behind
    for group in twin_opt.param_groups:
        group["weight_decay"] = 0.0
    before = S.hidden_matrix(model).detach().clone()
    opt.step()
    twin_opt.step()
    after, alone = S.hidden_matrix(model).detach(), S.hidden_matrix(twin).detach() - before
    step = S.decoupled_step(before, after, E.hidden_shrink(cfg))
    assert torch.allclose(step, alone, rtol=1e-4, atol=1e-7)
    decay = E.hidden_shrink(cfg) * before.abs().max()
    assert (after - before - alone).abs().max() > 10 * (step - alone).abs().max()
    assert decay > 0


def test_run_takes_the_decay_term_out_of_the_update_it_records():
    """Without decay the step is the whole update (the two ranks equal at every evaluation);
    with decay the run hands the probe its eta*lambda, so the two differ."""
    plain = E.run(TINY.replace(weight_decay=0.0), 0).timeline
    assert plain["step_rank"][1:] == pytest.approx(plain["update_rank"][1:], rel=1e-6)
    decayed = E.run(TINY.replace(weight_decay=3.0), 0).timeline
    gaps = [abs(a - b) for a, b in zip(decayed["step_rank"][1:], decayed["update_rank"][1:])]
    assert max(gaps) > 1e-3
    assert all(0 <= v <= 1 + 1e-9 for v in decayed["step_radial"][1:])


def test_the_step_rank_recorded_is_the_step_of_two_kept_states():
    """The recorded step rank at an evaluated step k is decoupled_step of the hidden matrix
    kept at k - 1 and at k with the run's own eta*lambda: not lambda alone, not 2 eta lambda."""
    from dynamics.capstone import science as S
    from dynamics.grokking.experiments import evaluation_steps
    cfg = TINY.replace(weight_decay=3.0)
    k = evaluation_steps(cfg.steps, cfg.n_evals)[5]
    r = E.run(cfg, 0, keep=(k - 1, k))
    key = "hidden.1.weight"
    assert S.hidden_matrix(r.model) is dict(r.model.named_parameters())[key]
    step = S.decoupled_step(r.states[k - 1][key], r.states[k][key], cfg.lr * cfg.weight_decay)
    at = r.timeline["step"].index(k)
    assert r.timeline["step_rank"][at] == pytest.approx(S.normalized_rank(step), rel=1e-5)
    wrong = S.decoupled_step(r.states[k - 1][key], r.states[k][key], 2 * cfg.lr * cfg.weight_decay)
    assert abs(S.normalized_rank(wrong) - r.timeline["step_rank"][at]) > 1e-4


def test_run_keeps_a_timeline_aligned_with_the_history(tiny):
    tl, h = tiny.timeline, tiny.history
    assert tl["step"] == h.steps and all(len(tl[k]) == len(h.steps) for k in MEASURES)
    assert math.isnan(tl["update_rank"][0]) and all(0 < v <= 1.0 + 1e-6 for v in tl["update_rank"][1:])
    assert math.isnan(tl["step_rank"][0]) and all(0 < v <= 1.0 + 1e-6 for v in tl["step_rank"][1:])
    assert sorted(tiny.states) == [0, TINY.rewind_step]  # θ₀ and θ_k at the rewind step
    s = tiny.summary()
    assert s["tau"] == pytest.approx(1 / (TINY.lr * TINY.weight_decay)) and "settle_step" in s


def test_the_kept_state_is_the_one_after_exactly_k_steps_evaluated_or_not():
    """The published page said "rewound to step 9" where the config says 10: the run kept the
    evaluation nearest the rewind step. Now θ_k is the state after exactly k optimizer steps,
    whether or not k is evaluated: the same as a run of k steps, and the lottery rewinds to it
    and says k."""
    cfg = TINY.replace(rewind_step=10)
    assert 10 not in E.evaluation_steps(cfg.steps, cfg.n_evals)  # between two evaluations
    r = E.run(cfg, 0)
    short = E.run(cfg.replace(steps=10), 0, keep=())
    assert sorted(r.states) == [0, 10] and short.history.steps[-1] == 10
    for name, t in short.model.state_dict().items():
        assert torch.equal(r.states[10][name], t), name
    assert E.lottery(r)["rewind_step"] == 10
    assert Fa.lottery_facts(E.lottery(r))["k"] == "10"
    with pytest.raises(ValueError, match="keep"):
        E.run(cfg, 0, keep=(-1,))


def test_plateau_control_is_the_same_run_without_decay_to_the_end_of_the_budget(tiny):
    ctrl = E.plateau_control({0: tiny})[0]
    assert ctrl.config == TINY.replace(weight_decay=0.0) and ctrl.seed == 0
    assert ctrl.history.steps == tiny.history.steps and ctrl.history.steps[-1] == TINY.steps
    assert ctrl.timeline["step"] == ctrl.history.steps
    # the same start: the same split and initial weights, so the first evaluation agrees
    assert ctrl.timeline["weight_rms"][0] == tiny.timeline["weight_rms"][0]


def test_run_with_muon_and_a_large_init(tiny):
    r = E.run(TINY.replace(optimizer="muon", init_scale=3.0, steps=10), 0)
    assert len(r.timeline["step"]) == len(r.history.steps)
    assert r.timeline["weight_rms"][0] == pytest.approx(3 * tiny.timeline["weight_rms"][0], rel=1e-5)


def test_muon_keeps_adamws_clock():
    cfg = OneConfig(p=7, width=8, optimizer="muon", lr=1e-2, weight_decay=1.0, muon_lr=0.1)
    m = M.MLP(14, 8, 2, 7)
    opt = E.optimizer_for(cfg, m)
    muon, adam = opt.optimizers
    assert isinstance(muon, torch.optim.Muon) and isinstance(adam, torch.optim.AdamW)
    g = muon.param_groups[0]
    assert g["lr"] * g["weight_decay"] == pytest.approx(cfg.lr * cfg.weight_decay)
    assert adam.param_groups[0]["lr"] == cfg.lr
    # the grokking chapter's split: Muon takes the hidden matrix after the first layer; the
    # first layer (it reads one-hot residues: an embedding), the head and the biases go to AdamW
    trained = lambda o: {id(p) for g in o.param_groups for p in g["params"]}  # noqa: E731
    assert trained(muon) == {id(m.hidden[1].weight)}
    assert {id(m.hidden[0].weight), id(m.head.weight)} <= trained(adam)
    assert trained(muon) | trained(adam) == {id(p) for p in m.parameters()}
    assert isinstance(E.optimizer_for(cfg.replace(optimizer="adamw"), m), torch.optim.AdamW)


def test_init_sweep_and_clock_grid_rows():
    rows = E.init_sweep(TINY, [0.5, 2.0], seeds=[0, 1])
    assert sorted((r.seed, r.init_scale) for r in rows) == [(0, 0.5), (0, 2.0), (1, 0.5), (1, 2.0)]
    clock = E.clock_grid(TINY, [1e-2, 2e-2], [1.0], seeds=[0])
    assert [r.tau for r in clock] == pytest.approx([100.0, 50.0])
    # a row gives back the payload a grid's unit writes: no Muon rate for AdamW, the settle
    # fields where the weight RMS was recorded (the clock's cells) and not where it was not
    assert "muon_lr" not in clock[0].to_dict() and "settle" in clock[0].to_dict()
    assert "settle" not in rows[0].to_dict() and E.GridRow.of(clock[0].to_dict()) == clock[0]
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
    assert [r.init_scale for r in rows] == [0.5, 1.0, 2.0]
    assert [c["init_scale"] for c in trained] == [0.5, 2.0]
    assert rows[1].grok_step == tiny.grok_step and rows[1].fit_step == tiny.fit_step
    trained.clear()
    clock = E.clock_grid(TINY, [TINY.lr], [TINY.weight_decay, 3.0], [0], reuse=[tiny])
    assert [c["weight_decay"] for c in trained] == [3.0]
    assert clock[0].settle_step == tiny.summary()["settle_step"]
    trained.clear()
    E.init_sweep(TINY, [1.0], [1], reuse=[tiny])  # another seed: not the same run
    assert len(trained) == 1


def test_the_live_axes_fit_a_t4s_ten_minutes_at_gpu():
    """At gpu, where one run is about a minute on a T4, the page trains nine runs after its
    first (the gpu plan checks the minutes: tests/ops/test_gpu.py); at smoke and cpu the smoke
    grid."""
    cfg = OneConfig.for_profile("gpu")
    axes = E.live_grid("gpu")
    new = (len(axes.init_scales) - 1 + len(axes.weight_decays) * (1 + len(axes.clock_lrs)) - 1
           + len(axes.learning_rates(cfg)["muon"]) + 4)
    assert new == 9 and cfg.weight_decay in axes.weight_decays and 1.0 in axes.init_scales
    assert axes.claim_seeds == 1 and E.live_grid("cpu").claim_seeds == 3  # seeds of the claims
    assert E.live_grid("cpu") == E.live_grid("smoke")
    # a fair comparison: each optimizer as many learning rates, spaced the same way around its own
    lrs = E.live_grid("smoke").learning_rates(TINY)
    assert lrs["muon"] == [TINY.muon_lr / 2, TINY.muon_lr, 2 * TINY.muon_lr]
    assert lrs["adamw"] == [TINY.lr / 2, TINY.lr, 2 * TINY.lr]


def test_clock_fit_recovers_a_power_law_and_lists_its_failures():
    rows = [cell(tau=t, grok_step=3 * t) for t in (10, 30, 100, 300)] + [cell(tau=5, grok_step=None)]
    fit = E.clock_fit(rows)
    assert fit["slope"] == pytest.approx(1.0) and fit["r2"] == pytest.approx(1.0)
    assert fit["n"] == 4 and len(fit["failed"]) == 1 and not fit["off"]
    assert math.isnan(E.clock_fit(rows[:2])["slope"])


def test_lottery_arms_and_refusals(tiny):
    lot = E.lottery(tiny, keep_frac=0.5)
    assert list(lot["arms"]) == list(E.LOTTERY_ARMS) and lot["rewind_step"] == TINY.rewind_step
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


def test_every_run_of_the_optimizer_comparison_keeps_the_same_clock(tiny):
    """A learning rate tried changes the step, not the clock: AdamW's weight decay is scaled
    against its learning rate so that ηλ (and τ = 1/(ηλ)) is the first run's on every run;
    the run at the first run's own learning rate is the first run itself."""
    lrs = {"adamw": [TINY.lr / 2, TINY.lr, TINY.lr * 2], "muon": [0.1]}
    opt = E.optimizer_runs(TINY, 0, lrs=lrs, reuse=[tiny])
    taus = [s["tau"] for _, s in opt["adamw"]["tried"]]
    assert taus == pytest.approx([1 / (TINY.lr * TINY.weight_decay)] * 3)
    assert [lr for lr, _ in opt["adamw"]["tried"]] == lrs["adamw"]
    assert opt["adamw"]["tried"][1][1] == tiny.summary()


def test_precompute_dry_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    plan = E.precompute_plan("smoke")
    assert [u.name for u in plan.units] == ["grid adamw seed=0", "grid muon seed=0", "clock seed=0"]
    (path,) = Runner(E.precompute_plan("smoke")).run()
    assert path.exists()
    import json
    blob = json.loads(path.read_text())
    payload, prov = E.CapstoneGrid.of(blob["payload"]), blob["provenance"]
    assert prov["profile"] == "smoke" and len(payload.rows) == len(payload.curves)
    assert {r.optimizer for r in payload.rows} == {"adamw", "muon"}
    # the rows as the units wrote them: Muon's with its rate, AdamW's without
    assert all(("muon_lr" in r) == (r["optimizer"] == "muon") for r in blob["payload"]["rows"])


# ----------------------------------------------------------------------------- claims
# The chapter's claims function on smoke runs for the claim seeds: the rows the prose asserts
# come out "yes" (their thresholds live in dynamics.capstone.claims, not here).

_RUNS = {}


def _first(seed):
    if seed not in _RUNS:
        _RUNS[seed] = E.run(OneConfig.for_profile("smoke"), seed)
    return _RUNS[seed]


@functools.cache
def _claim_rows():
    cfg = OneConfig.for_profile("smoke")
    firsts = {s: _first(s) for s in SEEDS}
    first = firsts[SEEDS[0]]
    inits = E.init_sweep(cfg, [0.5, 1.0, 4.0], SEEDS, reuse=list(firsts.values()))
    clock = [cell(lr=1e-2, weight_decay=1.0, tau=100.0, grok_step=first.grok_step, seed=SEEDS[0])]
    opt = dict(adamw=dict(best=first, tried=[(cfg.lr, {})]),
               muon=dict(best=first, tried=[(cfg.muon_lr, {})]))
    rows = C.page_claims(firsts, _nodecay(), inits, clock, opt, E.lottery(first),
                         E.collapse_timing(first))
    return {r["claim"].split(" (")[0]: r for r in rows}


@functools.cache
def _nodecay():
    return E.plateau_control({s: _first(s) for s in SEEDS})


@pytest.mark.claim
@pytest.mark.parametrize("row", [
    "Test accuracy stays near chance long after training accuracy fits, then climbs to ~100%",
    "From the fit step to the grok step"])
def test_claim_row_holds_on_the_claim_seeds(row):
    r = _claim_rows()[row]
    assert r["asserted"] and r["seeds"] == SEEDS
    assert r["reproduced"] == "yes", r


@pytest.mark.claim
def test_the_live_lazy_row_is_a_question_the_engine_judges():
    """The live lazier-start row is a question the page asks (not asserted): the engine judges
    it against a change of seed alone at x1; at smoke the larger scale never groks within the
    budget on any seed, but the seeds' grok steps at x1 (490, 385, 455) differ by more than
    LAZY, so the row does not discriminate (it said "yes" before the engine)."""
    r = _claim_rows()["A lazier start"]
    assert not r["asserted"] and r["seeds"] == SEEDS and r["evidence"]
    assert r["control"].startswith("a change of seed alone at x1")
    assert r["reproduced"] in ("yes", "does not discriminate"), r


@pytest.mark.claim
def test_the_plateau_rows_control_fails_the_rows_own_test():
    """The row reads the fit step to the grok step (the plateau and the climb), not the run's
    two ends; its control,
    the same runs without weight decay over the same steps, fed to the row as the runs
    themselves, is "no"."""
    firsts = {s: _first(s) for s in SEEDS}
    row = C._plateau_row(firsts, _nodecay())
    assert row["reproduced"] == "yes" and row["window"] == "from the fit step to the grok step"
    assert "without weight decay" in row["control"] and len(row["evidence"]) == 2
    # the control in the runs' place (windowed at the runs' own steps), against a null that
    # does not move at all: the control's own changes fail the row's thresholds, on every seed
    def frozen(r):
        tl = {k: [v[0]] * len(v) for k, v in r.timeline.items() if k != "step"}
        return types.SimpleNamespace(timeline=dict(tl, step=r.timeline["step"]),
                                     history=r.history)

    ctrl = {s: types.SimpleNamespace(**{**vars(r), "fit_step": firsts[s].fit_step,
                                        "grok_step": firsts[s].grok_step})
            for s, r in _nodecay().items()}
    nulls = {s: frozen(r) for s, r in firsts.items()}
    assert C._plateau_row(firsts, nulls)["reproduced"] == "yes"
    assert C._plateau_row(ctrl, nulls)["reproduced"] == "no"
    with pytest.raises(ValueError, match="nodecay"):
        C._plateau_row(firsts, {SEEDS[0]: _nodecay()[SEEDS[0]]})


@pytest.mark.claim
def test_claims_table_rows_the_prose_asserts_hold():
    rows = list(_claim_rows().values())
    assert not plots.failed_claims(rows), plots.failed_claims(rows)
    assert "None" not in plots.claims_table(rows).data


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_the_weight_rms_grows_to_fit_then_shrinks(seed):
    """Section 1 glues the peak and the end of the weight RMS and says it grows, then shrinks."""
    rms = _first(seed).timeline["weight_rms"]
    assert max(rms) > rms[0] and rms[-1] < max(rms)


@pytest.mark.claim
def test_claim_nc1_does_not_fall_before_grokking():
    """Section 6 says collapse and grokking are different events here: its row is ✗."""
    row = _claim_rows()["After the fit step, with weight decay the features collapse"]
    assert not row["asserted"] and row["reproduced"] == "no", row


def test_lottery_keeps_masks_and_states_on_the_run_device():
    """On a GPU, the random-mask control and the fresh initialization met θ₀ and the masks on
    the device (they were built on the CPU): the stand-in device refuses that, and gives the
    CPU's numbers once they meet."""
    from dynamics_ops import standin
    from dynamics.grokking.science import make_data

    plain = E.lottery(E.run(TINY, 0), keep_frac=0.5)
    with standin.active():
        run = E.run(TINY, 0, data=make_data(TINY.grok(), 0, device="cuda"))
        assert run.data.device.type == "cuda"
        lot = E.lottery(run, keep_frac=0.5)
    assert lot["density"] == plain["density"] and list(lot["arms"]) == list(plain["arms"])
    assert repr(lot["arms"]) == repr(plain["arms"])


@pytest.mark.claim
def test_the_muon_row_says_when_a_best_learning_rate_sits_at_the_edge_of_its_range():
    """A best learning rate at the end of the range tried is said in the row (a wider range
    could do better); one inside it is not."""
    cfg = OneConfig.for_profile("smoke")
    firsts = {s: _first(s) for s in SEEDS}
    first = firsts[SEEDS[0]]
    inits = E.init_sweep(cfg, [0.5, 1.0, 4.0], SEEDS, reuse=list(firsts.values()))
    clock = [cell(lr=1e-2, weight_decay=1.0, tau=100.0, grok_step=first.grok_step, seed=SEEDS[0])]

    def muon_row(muon_tried):
        opt = dict(adamw=dict(best=first, tried=[(cfg.lr / 3, {}), (cfg.lr, {}), (cfg.lr * 3, {})]),
                   muon=dict(best=first, tried=muon_tried))
        rows = C.page_claims(firsts, _nodecay(), inits, clock, opt, E.lottery(first),
                             E.collapse_timing(first))
        return next(r for r in rows if r["claim"].startswith("Muon, each optimizer"))

    edge = muon_row([(cfg.muon_lr, {}), (cfg.muon_lr * 3, {})])["measured here"]
    inside = muon_row([(cfg.muon_lr / 3, {}), (cfg.muon_lr, {}), (cfg.muon_lr * 3, {})])
    assert "Muon's best is at the edge of its range" in edge
    assert "edge" not in inside["measured here"]
