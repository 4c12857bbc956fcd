"""Lottery-ticket runners: masked training, IMP with rewinding (rewinding restores θ_k
exactly), stopping and divergence, dry runs, and the chapter's claims: on the smoke run for
seeds 0-2 (what CI builds) and on the precomputed data/ files (what the static figures show)."""
import functools
import math
from dataclasses import replace

import numpy as np
import pytest

from dynamics_ops.precompute import Runner
import torch
import torch.nn.functional as F

from dynamics import evidence, lottery as L
from dynamics import progress as P
from dynamics import train as T
from dynamics import results

from known import known_answer
from seeds import SEEDS


@pytest.fixture(scope="module")
def small():
    cfg = L.LotteryConfig.for_profile("smoke", dataset="digits", width=32, steps=40, rounds=2,
                                      evals=4, batch_size=64)
    return cfg, L.load_data(cfg)


def _diverging():
    """A setting whose dense run diverges within 20 steps (SGD at lr 10, seed 0)."""
    return L.LotteryConfig.for_profile("smoke", width=200, n_train=500, n_test=200, steps=20,
                                       evals=2, optimizer="sgd", lr=10.0, rounds=1)


# ----------------------------------------------------------------------------- training


def test_masked_training_keeps_pruned_weights_at_zero(small):
    cfg, d = small
    model = L.science.make_model(cfg, d, seed=0)
    init = {n: t.clone() for n, t in model.state_dict().items()}
    masks = {n: m.to(d.device) for n, m in L.science.like_masks(model, 0.3).items()}
    out = L.experiments.train_masked(cfg, d, [init, init], [masks, None], [0, 0], bars=False)
    trained = out.state_dict(0)
    for n, m in masks.items():
        assert torch.all(trained[n][m == 0] == 0)
        assert not torch.equal(trained[n][m == 1], init[n][m == 1])
    dense = out.state_dict(1)
    assert (dense["hidden.0.weight"] != 0).float().mean() > 0.99


def test_training_holds_out_the_validation_split_and_early_stops_on_it(small):
    """Frankle & Carbin: the networks train on the training examples less the validation
    split (the last n_val), each evaluation records the validation loss and accuracy (equal
    to a direct evaluation on those examples), the early-stopping step is the step of lowest
    validation loss, and the accuracy reported there is the test accuracy at that step."""
    cfg, d = small
    model = L.science.make_model(cfg, d, seed=0)
    init = {n: t.clone() for n, t in model.state_dict().items()}
    out = L.experiments.train_masked(cfg, d, [init], [None], [0], bars=False)
    h = out.histories[0]
    train, x_val, y_val = L.science.split_validation(d, cfg.n_val)
    model.load_state_dict(out.state_dict(0))
    with torch.no_grad():
        logits = model(x_val)
    assert h.last("val_loss") == pytest.approx(float(F.cross_entropy(logits, y_val)), rel=1e-5)
    assert h.last("val_acc") == pytest.approx(float((logits.argmax(1) == y_val).float().mean()))
    # it trained on the training examples less the split: the same training on those alone
    # gives its weights, on all of them other weights; and no evaluation read the training set
    assert "train_loss" not in h.metrics and "test_acc" in h.metrics

    def trained_on(data):
        m = L.science.make_model(cfg, d, seed=0)
        m.load_state_dict(init)
        T.train(m, data, L.experiments.recipe(cfg), seed=0, bars=False)
        return m.state_dict()

    ours, part, full = out.state_dict(0), trained_on(train), trained_on(d)
    assert all(torch.allclose(ours[n], part[n], atol=1e-6) for n in ours)
    assert not all(torch.allclose(ours[n], full[n], atol=1e-3) for n in ours)
    res = L.run_imp(cfg, seeds=[0], data=d, controls=False, bars=False)
    assert res.stop_on == "validation loss"
    back = L.experiments.ImpResult.of(res.to_dict())
    assert back.stop_on == "validation loss" and np.array_equal(back.stop_acc["ticket"], res.stop_acc["ticket"])
    # a result written before the split reads as early-stopped on the test loss
    old = {k: v for k, v in res.to_dict().items() if k not in ("stop_acc", "stop_on")}
    stale = L.experiments.ImpResult.of(old)
    assert stale.stop_on == "test loss" and np.isnan(stale.stop_acc["ticket"]).all()


def test_record_early_stops_on_validation_loss_and_reports_test_accuracy_there():
    """A synthetic history whose validation loss is lowest at step 20 and test loss at 30:
    the early-stopping step is 20 and the accuracy there is the test accuracy at step 20."""
    from dynamics.train import History

    h = History()
    for step, vl, tl, ta in [(0, 2.0, 2.0, 0.1), (10, 1.0, 1.2, 0.5), (20, 0.5, 0.8, 0.6),
                             (30, 0.7, 0.6, 0.7), (40, 0.9, 0.9, 0.65)]:
        h.append(step, train_loss=vl, val_loss=vl, test_loss=tl, test_acc=ta)
    nan = lambda: {v: np.full((1, 1), np.nan) for v in L.experiments.VARIANTS}  # noqa: E731
    config = L.experiments.ImpConfig.of(L.LotteryConfig().to_dict())
    res = L.experiments.ImpResult(config=config, seeds=[0], density=np.ones(1), acc=nan(),
                                  stop_step=nan(), stop_acc=nan(), round_time=[])
    L.experiments._record(res, "ticket", 0, 0, h)
    assert res.stop_step["ticket"][0, 0] == 20 and res.stop_acc["ticket"][0, 0] == 0.6
    assert res.acc["ticket"][0, 0] == 0.65  # the final test accuracy


def test_imp_result_shapes_densities_and_torch_agreement(small):
    cfg, d = small
    res = L.run_imp(cfg.replace(rewind_step=5), seeds=[0, 1], data=d, controls=[2], bars=False)
    assert res.acc["ticket"].shape == (2, 3) and np.isfinite(res.acc["ticket"]).all()
    assert np.isnan(res.acc["reinit"][:, 1]).all() and np.isfinite(res.acc["reinit"][:, 2]).all()
    assert res.density[0] == 1.0 and res.density[1] == pytest.approx(0.8, abs=0.01)
    assert res.density[2] < res.density[1]
    assert res.torch_agrees == [True, True]  # every pruning step equals torch.nn.utils.prune's
    assert not res.diverged and not res.stopped
    back = L.experiments.ImpResult.of(res.to_dict())
    assert np.array_equal(back.acc["ticket"], res.acc["ticket"])


def test_rewinding_restores_exactly_theta_k(small):
    """Every IMP round starts its survivors at exactly θ_k (bitwise), its pruned weights at
    exactly 0; θ_k is exactly the dense network after k steps (a bare PyTorch loop with the
    same seed and batches); and the first evaluation of each round is that of m ⊙ θ_k."""
    cfg, d = small
    k = 7
    cfg = cfg.replace(rewind_step=k, rounds=3)
    starts = []

    def recording(inits, masks, seeds):
        starts.append((inits, masks))
        return L.experiments.train_masked(cfg, d, inits, masks, seeds, bars=False)

    res = L.run_imp(cfg, seeds=[0], data=d, controls=False, train_fn=recording, bars=False)
    theta_k = res.rewound[0]
    # theta_k from an independent, bare training loop: Adam, the same mini-batch order, on
    # the training examples less the validation split
    model = L.science.make_model(cfg, d, seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    tr = L.science.split_validation(d, cfg.n_val)[0]
    gen, perm, pos, n = torch.Generator().manual_seed(0), None, len(tr.x_train), len(tr.x_train)
    for _ in range(k):
        if pos + cfg.batch_size > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        idx = perm[pos:pos + cfg.batch_size]
        pos += cfg.batch_size
        loss = F.cross_entropy(model(tr.x_train[idx]), tr.y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert all(torch.equal(theta_k[n], t) for n, t in model.state_dict().items())
    assert not torch.equal(theta_k["hidden.0.weight"], res.inits[0]["hidden.0.weight"])
    assert len(starts) == 4
    for r, (inits, masks) in enumerate(starts):
        start, mask = inits[0], res.masks[r][0]
        for name, t in theta_k.items():
            if name in mask:
                keep = mask[name] > 0
                assert torch.equal(start[name][keep], t[keep]), (r, name)
                assert torch.all(start[name][~keep] == 0), (r, name)
            else:
                assert torch.equal(start[name], t)
        if r > 0:
            assert masks[0] is mask
            with torch.no_grad():
                out = torch.func.functional_call(L.science.make_model(cfg, d), L.science.rewind(theta_k, mask),
                                                 (d.x_test,))
            acc0 = float((out.argmax(1) == d.y_test).float().mean())
            assert res.curves["ticket"][r][0] == pytest.approx(acc0, abs=1.5 / len(d.y_test))


def test_stop_ends_imp_early_with_what_it_has(small):
    cfg, d = small
    seen = []

    def tick(done):
        seen.append(done)
        return done > 0.3

    with P.reporting(tick):  # a panel's bar and Stop
        res = L.run_imp(cfg.replace(rounds=4), seeds=[0], data=d, bars=False)
    assert res.stopped and len(res.masks) < 5
    assert res.acc["ticket"].shape[1] == len(res.density) == len(res.masks)  # rounds reached
    assert np.isfinite(res.acc["ticket"][0, 0])
    assert max(seen) <= 1.0 and seen == sorted(seen)


def test_progress_covers_the_whole_run(small):
    cfg, d = small
    seen = []
    with P.reporting(lambda f: seen.append(f) and False):
        L.run_imp(cfg, seeds=[0], data=d, bars=False)
    assert seen[0] < 0.2 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)


def test_divergence_is_a_result_not_a_crash():
    cfg = _diverging()
    d = L.load_data(cfg)
    res = L.run_imp(cfg, seeds=[0], data=d, bars=False)
    assert len(res.diverged) == 1, res.diverged
    assert res.diverged[0].startswith("ticket, round 0, seed 0: diverged at step")
    assert len(res.density) == 1 and np.isnan(res.acc["reinit"][0, 0])
    lmc = L.run_lmc(cfg, (0, 15), seed=0, data=d, n_points=3, bars=False)
    assert all(lmc.diverged[k] for k in (0, 15))
    assert all(math.isnan(lmc.barrier[k]) for k in (0, 15))


def test_dry_run_caps_seeds_rounds_steps_and_rewind_points(small, monkeypatch, tmp_path):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    cfg, d = small
    res = L.run_imp(cfg.replace(rounds=6, rewind_step=20), seeds=[0, 1, 2], data=d, bars=False)
    assert res.seeds == [0, 2] and len(res.density) == 3 and res.eval_steps[-1] == 3
    assert res.round_near(0.2) == 2 and res.round_near(0.9) == 1
    lmc = L.run_lmc(cfg, (0, 10, 50, 200), seed=0, data=d, n_points=3, bars=False)
    assert lmc.rewind_steps == [0, 200] and np.isfinite(lmc.barrier[200])


def test_precompute_writes_three_files_in_a_dry_run(monkeypatch, tmp_path):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    paths = Runner(L.experiments.precompute_plan("smoke")).run()
    assert sorted(p.name for p in paths) == ["lottery_imp.json", "lottery_lmc.json", "lottery_pai.json"]
    assert all(p.parent == tmp_path for p in paths)


# ----------------------------------------------------------------------------- claims, smoke run


@pytest.fixture(scope="module")
def smoke_runs():
    """The smoke-profile IMP run on seeds 0-2 (batched), with controls at the claim round and
    the pruning-at-init comparison at about 20% of the weights (the notebook's round)."""
    cfg = L.LotteryConfig.for_profile("smoke")
    d = L.load_data(cfg)
    r_claim = L.science.round_for(cfg, 0.05, 0.10)
    r_pai = L.science.round_near(cfg, L.science.PAI_DENSITY)
    res = L.run_imp(cfg, seeds=SEEDS, data=d, controls=[r_pai, r_claim], bars=False)
    pai = L.run_pai(cfg, res, round=r_pai, data=d, bars=False)
    return res, r_claim, pai


@pytest.mark.claim
def test_claim_rows_ticket_matches_dense_and_beats_both_controls_on_every_seed(smoke_runs):
    res, r, _ = smoke_runs
    assert 0.05 <= res.density[r] <= 0.10 and r == res.round_at()
    rows = L.claims.ticket_claims(res)
    assert all(row["seeds"] == SEEDS for row in rows)
    # the match row is shown, not asserted (SHOWN_ONLY: within noise on the precomputed data)
    assert [row["asserted"] for row in rows] == [False, True, True]
    assert [row["reproduced"] for row in rows][1:] == ["yes", "yes"], rows


def test_ticket_rows_say_no_when_the_control_does_as_well(smoke_runs):
    import copy

    res, _, _ = smoke_runs
    same = copy.copy(res)
    same.acc = dict(res.acc, reinit=res.acc["ticket"], random=res.acc["ticket"])
    assert [row["reproduced"] for row in L.claims.ticket_claims(same)][1:] == ["no", "no"]
    # the smoke run trains no control in the match window: the row cannot tell
    assert L.claims.ticket_claims(res)[0]["reproduced"] == "not at this scale"
    pruned = np.arange(len(res.density)) > 0
    worse = copy.copy(res)  # a re-initialized control 10 points below dense in every round
    worse.acc = dict(res.acc, ticket=res.acc["ticket"] - np.where(pruned, 0.05, 0),
                     reinit=res.acc["ticket"] - np.where(pruned, 0.10, 0))
    assert L.claims.ticket_claims(worse)[0]["reproduced"] == "no"  # five points below dense: no match
    good = copy.copy(res)  # the ticket level with dense; its control 10 points below: it fails
    dense = res.acc["ticket"][:, :1]
    good.acc = dict(res.acc, ticket=np.broadcast_to(dense, res.acc["ticket"].shape) + np.where(pruned, 0.002, 0) * [[1], [1.2], [1.4]],
                    reinit=dense - np.where(pruned, 0.10, 0))
    assert L.claims.ticket_claims(good)[0]["reproduced"] == "yes"
    planted = copy.copy(good)  # a control as good as the ticket passes too
    planted.acc = dict(good.acc, reinit=good.acc["ticket"])
    assert L.claims.ticket_claims(planted)[0]["reproduced"] == "does not discriminate"


@pytest.mark.claim
@pytest.mark.parametrize("k", range(len(SEEDS)))
def test_claim_shuffling_keeps_pai_but_breaks_the_ticket(smoke_runs, k):
    _, _, pai = smoke_runs
    a = pai.acc
    imp_drop = a["imp"]["original"][k] - a["imp"]["shuffled"][k]
    for m in L.science.PAI_METHODS:
        drop = a[m]["original"][k] - a[m]["shuffled"][k]
        # Smoke, seeds 0-2, at 22% of the weights: shuffling cost SNIP 0.3-1.3 points, SynFlow
        # 1.6-3.1, magnitude -0.3-3.2, and the IMP ticket 12.1-15.0 (one accuracy on 2,000
        # test examples has a standard error of ~1.1 points).
        assert drop < 0.04, (m, drop)
        assert drop < imp_drop / 3, (m, imp_drop, drop)
        assert a["imp"]["original"][k] > a[m]["original"][k] + 0.05  # PaI does not reach IMP


@pytest.mark.claim
def test_claim_pai_methods_are_close_at_a_fifth_of_the_weights(smoke_runs):
    """The chapter: at about a fifth of the weights the three PaI methods lie within a few
    points of one another, all well below the ticket and above the random mask."""
    _, _, pai = smoke_runs
    a = pai.acc
    means = {m: float(np.mean(a[m]["original"])) for m in L.science.PAI_METHODS}
    assert max(means.values()) - min(means.values()) < 0.025, means  # smoke: 1.7 points
    assert all(float(np.mean(a["imp"]["original"])) > v + 0.05 for v in means.values())
    random = float(np.mean(a["imp"]["shuffled"]))  # "at or a few points above the random mask"
    assert all(random - 0.01 < v < random + 0.06 for v in means.values()), (means, random)
    assert means["magnitude"] >= means["snip"] - 0.005  # "level with SNIP or slightly ahead"


@pytest.mark.claim
def test_claim_ticket_stays_at_dense_accuracy_down_to_a_tenth(smoke_runs, precomputed):
    """Section 1's "What to notice": the ticket keeps the dense accuracy within about a point
    down to about a tenth of the weights (smoke, mean of seeds 0-2); the precomputed curves,
    which prune further, lose a few points only near 5%."""
    res, _, _ = smoke_runs
    t = res.acc["ticket"].mean(axis=0)
    assert all(t[r] >= t[0] - 0.015 for r, dd in enumerate(res.density) if dd >= 0.09), t
    main = next(iter(precomputed[0].values()))
    tp = np.nanmean(main.acc["ticket"], axis=0)
    assert all(tp[r] >= tp[0] - 0.015 for r, dd in enumerate(main.density) if dd >= 0.09), tp
    assert 0.02 <= tp[0] - tp[-1] <= 0.05 and main.density[-1] < 0.06


@pytest.mark.claim
def test_claim_rows_of_the_smoke_run(smoke_runs):
    """The claims table's verdicts on the smoke run: tickets and controls reproduced on every
    seed; "learn faster" shown, not asserted (the runs end before the test loss turns up)."""
    res, _, pai = smoke_runs
    rows = {row["claim"]: row for row in L.page_claims(res, pai)}
    beats = L.claims.CLAIMS["pai"][0]
    assert all(rows[c]["reproduced"] == "yes" for c in rows if rows[c]["asserted"] and c != beats)
    # judged per seed, "beats a random mask" fails at the smoke scale at a fifth of the weights
    # (seed 1: SNIP about a point above the shuffled ticket, within one seed's noise); the
    # prose says "at or a few points above" there, and the row holds on the cpu data
    assert rows[beats]["reproduced"] != "yes" and not rows[beats]["asserted"]
    speed = next(row for c, row in rows.items() if c.startswith("Tickets learn faster"))
    assert not speed["asserted"] and speed["reproduced"] == "not at this scale"


@functools.cache
def lmc_runs(seed):
    cfg = L.LotteryConfig.for_profile("smoke")
    d = L.load_data(cfg)
    calm = L.run_lmc(cfg, (0,), seed=seed, data=d, bars=False)
    hot = L.run_lmc(cfg.replace(lr=1e-2), (0, 20, 100), seed=seed, data=d, bars=False)
    return calm, hot


@pytest.mark.claim
def test_claim_stable_at_init_and_stable_after_rewinding_at_a_large_learning_rate():
    """Frankle et al. (2020), in miniature, as section 3 runs it, with their criterion for
    stability: at the chapter's learning rate two runs from θ₀ are linearly connected; at a
    5x larger one they are not, and they are from θ_100, on every seed."""
    calm = {s: lmc_runs(s)[0] for s in SEEDS}
    hot = {s: lmc_runs(s)[1] for s in SEEDS}
    rows = L.claims.lmc_claims(("calm", calm), ("hot", hot))
    assert all(r["asserted"] and r["seeds"] == SEEDS for r in rows)
    # at the smoke scale the phenomenon shows (every seed's treatment passes, every seed's
    # control fails: the barrier from θ₀ at the large rate, 5-9 points against the 2-point bar),
    # but by how much the control misses, against its seeds' spread, depends on the machine's
    # arithmetic (does not discriminate on one machine; yes and within noise on an AVX-512
    # Xeon): never no; the published cpu rows (tests/test_published_claims.py, the strict
    # build) are yes
    for r in rows:
        for part in r["evidence"]:
            test = evidence.Test(**part["test"])
            assert all(test.passes(v) for v in part["treatment"].values()), r["measured here"]
            assert not any(test.passes(v) for v in part["control"].values()), r["measured here"]
    assert {r["reproduced"] for r in rows} <= {"yes", "within noise", "does not discriminate"}, rows


def test_lmc_rows_say_no_without_a_barrier_to_remove_or_when_it_stays():
    import copy

    calm = {s: lmc_runs(s)[0] for s in SEEDS}
    hot = {s: lmc_runs(s)[1] for s in SEEDS}
    stays = {}
    for s, h in hot.items():  # the barrier at the last rewind step as high as from θ₀
        stays[s] = copy.copy(h)
        stays[s].barrier = {**h.barrier, h.rewind_steps[-1]: h.barrier[0]}
    assert L.claims.lmc_claims(("calm", calm), ("hot", stays))[1]["reproduced"] == "no"
    # the calm runs as the "unstable" ones: nothing to remove; the control (from θ₀) passes the
    # same test, so the row does not discriminate
    assert L.claims.lmc_claims(("calm", calm), ("calm", {s: replace(c, rewind_steps=[0, 0]) for s, c in calm.items()}))[1][
        "reproduced"] == "does not discriminate"
    assert L.claims.lmc_claims(("hot", hot), ("hot", hot))[0]["reproduced"] == "no"


def _tiny_imp():
    cfg = L.LotteryConfig.for_profile("smoke", dataset="digits", width=16, steps=20, rounds=1,
                                      evals=2, batch_size=64)
    return (L.run_imp(cfg, seeds=[0], bars=False),)


# ----------------------------------------------------------------------------- claims, precomputed data


@pytest.fixture(scope="module")
def precomputed():
    imp, _ = results.load("lottery_imp", as_=L.RECORDS["lottery_imp"])
    pai, _ = results.load("lottery_pai", as_=L.RECORDS["lottery_pai"])
    lmc, _ = results.load("lottery_lmc", as_=L.RECORDS["lottery_lmc"])
    return imp.imp, pai.pai, lmc


def test_precomputed_speed_figure_shows_tickets_learning_faster(precomputed):
    """Section 1's "What to notice" under the speed figure: the dense network stops early
    (its validation loss rises after); tickets from two thirds to a seventh of the weights
    stop earlier; at the sparsest rounds the ticket's step rises again; below a fifth of the
    weights the controls stop later than the dense network, at the steps the prose glues, and
    within two evaluations of the end from the density it glues on (the data of 2026-11-22 had
    both there below a fifth; regenerated 2026-11-29, the re-initialized control stops at 530
    of 600 at 17.5%, seed mean, and the prose now glues where they reach the end)."""
    main = next(iter(precomputed[0].values()))
    stop = {v: np.nanmean(main.stop_step[v], axis=0) for v in L.experiments.VARIANTS}
    last, step = main.eval_steps[-1], main.eval_interval
    assert stop["ticket"][0] <= last - 5 * step
    moderate = [r for r, dd in enumerate(main.density) if 0.14 <= dd <= 0.65]
    assert all(stop["ticket"][r] < stop["ticket"][0] for r in moderate)
    assert stop["ticket"][-1] > stop["ticket"][0]
    sparse = [r for r, dd in enumerate(main.density) if dd <= 0.2]
    assert all(stop[v][r] > stop["ticket"][0] for v in ("reinit", "random") for r in sparse)
    said = L.speed_numbers(main)
    ctrl = [stop[v][r] for v in ("reinit", "random") for r in sparse]
    assert said["speed_ctrl_range"] == f"{min(ctrl):.0f} to {max(ctrl):.0f}"
    at_end = lambda r: all(stop[v][r] >= last - 2 * step for v in ("reinit", "random"))  # noqa: E731
    first = next(r for r in range(1, len(main.density)) if all(map(at_end, range(r, len(main.density)))))
    assert not at_end(first - 1) or first == 1
    assert said["speed_ctrl_end"].startswith(f"from {100 * main.density[first]:.1f}% of the weights on")
    # the phenomenon on every seed (the prose's "on 3 of 3 seeds"); the row's verdict is the
    # engine's, asserted or held back by SHOWN_ONLY (a control near its own spread)
    row = L.claims.speed_claim(main)
    assert said["speed_held"] == "3 of 3" and row["seeds"] == [0, 1, 2]
    assert row["reproduced"] == ("does not discriminate" if "speed" in L.claims.SHOWN_ONLY else "yes")


def test_speed_row_says_no_when_the_control_learns_as_fast(precomputed):
    import copy

    main = next(iter(precomputed[0].values()))
    same = copy.copy(main)
    same.stop_step = dict(main.stop_step, reinit=main.stop_step["ticket"])
    assert L.claims.speed_claim(same)["reproduced"] == "no"
    dense_fast = copy.copy(main)
    stop = main.stop_step["ticket"].copy()
    stop[:, 0] = main.eval_interval  # the dense network stops at its first evaluation
    dense_fast.stop_step = dict(main.stop_step, ticket=stop)
    assert L.claims.speed_claim(dense_fast)["reproduced"] == "no"


def test_precomputed_pai_shows_what_the_text_says(precomputed):
    """Section 2: near a fifth of the weights magnitude at init is level with SNIP (ahead of
    it here) and the three PaI methods are within 1.5 points; at about a tenth SNIP and
    SynFlow lead magnitude; at the sparsest, magnitude collapses to chance (layer collapse);
    at a fifth and a tenth of the weights shuffling costs each PaI method less than half of
    what it costs the ticket (at a third it costs every mask only 1-3 points)."""
    pais = {round(100 * p.density): p for p in precomputed[1]}
    mean = lambda p, m, how="original": float(np.mean(p.acc[m][how]))  # noqa: E731
    fifth, tenth, sparsest = pais[22], pais[9], pais[5]
    assert mean(fifth, "magnitude") >= mean(fifth, "snip")
    vals = [mean(fifth, m) for m in L.science.PAI_METHODS]
    assert max(vals) - min(vals) < 0.015
    assert min(mean(tenth, "snip"), mean(tenth, "synflow")) > mean(tenth, "magnitude") + 0.01
    assert mean(sparsest, "magnitude") < 0.12 and sparsest.layers["magnitude"]["hidden.1.weight"] == 0
    for p in (fifth, tenth):
        imp_drop = mean(p, "imp") - mean(p, "imp", "shuffled")
        for m in ("snip", "synflow", "magnitude"):
            assert mean(p, m) - mean(p, m, "shuffled") < imp_drop / 2, (p.density, m)
    assert fifth.layers["imp"]["hidden.1.weight"] < fifth.layers["imp"]["hidden.0.weight"] / 2
    # the departure from Frankle et al. (2021): at a tenth, shuffling costs SNIP and SynFlow
    # more than their seeds' spread (their masks carry some per-weight information here)
    for m in ("snip", "synflow"):
        assert mean(tenth, m) - mean(tenth, m, "shuffled") > np.ptp(tenth.acc[m]["original"]), m


def test_precomputed_lmc_and_learning_rate_settings(precomputed):
    """Section 3, on each of the three seeds of the cpu data: at the chapter's learning rate
    two runs from θ₀ are linearly connected (below 2 points); at 5x it they are separated by a
    barrier of over 5 points that falls by step 10 and is below 2 points from step 100 on
    (regenerated 2026-11-29: 0.9 to 1.1 points at step 200). In the
    IMP slider, at that learning rate, reset tickets still match the dense network at 5% of
    the weights, and tickets rewound to step 50 are ahead of them by about two points at the
    sparsest rounds (one seed); over the rounds at 14-35% of the weights re-initialization
    against the reset ticket ranges round by round over more than twice the Liu row's
    LEVEL_POINTS (the prose glues whether its mean is within it); at 10% or fewer it is
    behind (by more than LEVEL_POINTS on average and on the last round, and on every round)."""
    runs, _, payload = precomputed
    calm = payload.at("0.002")
    hot = payload.at("0.01")
    assert sorted(calm) == sorted(hot) == [0, 1, 2]
    for s in calm:
        b = {int(k): v for k, v in hot[s].barrier.items()}
        assert calm[s].barrier["0"] < 0.02
        assert b[0] > 0.05 and b[10] < b[0] and b[100] < 0.02 and b[200] < 0.02, (s, b)
    reset = runs["Adam lr 0.01, reset to θ₀"]
    rewound = runs["Adam lr 0.01, rewind to step 50"]
    assert reset.acc["ticket"][0, -1] >= reset.acc["ticket"][0, 0] - 0.01
    sparse = [r for r, dd in enumerate(reset.density) if dd <= 0.1]
    diff = np.mean([rewound.acc["ticket"][0, r] - reset.acc["ticket"][0, r] for r in sparse])
    assert 0.01 < diff < 0.04, diff
    # Liu et al.'s counterpoint: at the larger learning rate, over the rounds in LIU_WINDOW
    # re-initialization against the ticket swings round by round (so the row reads the
    # window's mean, never one round; whether that mean is level the prose glues from the
    # row's own test, liu_mid_says); at 10% of the weights or fewer it is behind: the prose's
    # "falls behind", by more than the row's level (LEVEL_POINTS), so that window fails the row
    gap = reset.acc["ticket"][0] - reset.acc["reinit"][0]
    level = L.claims.LEVEL_POINTS / 100
    lo, hi = L.claims.LIU_WINDOW
    mid = [r for r, dd in enumerate(reset.density) if lo <= dd <= hi]
    assert len(mid) >= 4 and np.ptp(gap[mid]) > 2 * level
    assert np.mean(gap[sparse]) > level and gap[-1] > level and all(gap[sparse] > 0)


# ============================================================================ fine-tuning (Mukherjee et al.)


@pytest.fixture(scope="module")
def finetuned(smoke_runs):
    """The smoke IMP run's dense networks (seeds 0-2), each fine-tuned twice on the reversed
    inputs, as the notebook does."""
    res = smoke_runs[0]
    cfg = L.LotteryConfig.for_profile("smoke")
    return L.run_finetune(cfg, res, L.load_data(cfg))


@pytest.mark.claim
def test_claim_finetuned_subnetworks_overlap_more_than_chance(finetuned):
    """On seeds 0-2 the two fine-tunings' bf16 sets overlap far above chance (asserted), and
    the sparsity of 5-30% is not met by this small Adam run (shown with its numbers: "no")."""
    assert finetuned["seeds"] == SEEDS
    sparse, lap, rank = L.finetune.finetune_claims(finetuned)
    # on live units' weights the excess sits near OVERLAP_EXCESS, within the seeds' spread:
    # shown with the engine's verdict, not asserted (over all weights it read twice as high)
    assert not lap["asserted"] and lap["seeds"] == SEEDS and lap["reproduced"] != "no", lap
    assert not sparse["asserted"] and sparse["reproduced"] == "no"
    assert not rank["asserted"]
    for r in finetuned["per_seed"].values():
        assert r["excess"] > 0.1 > abs(r["null"])  # above chance; the shuffled null at chance
        # the magnitude-binned null (the row's control) explains little of the overlap here
        assert r["binned_null"] < 0.1 and abs(r["binned_excess"] - r["binned_null"]) < 0.05
        assert r["all_weights"] > r["excess"] + 0.2  # dead units' weights inflated it
        assert min(r["float32"]) >= min(r["bf16"])  # bf16 sees fewer changes than float32
        assert r["live"] > 0  # above chance even among the weights both runs moved


def test_overlap_row_says_no_for_independent_sets(finetuned):
    """Two independent random sets of the runs' sizes overlap at chance: the row says "no";
    a planted control that passes (the treatment itself as its null) makes it "does not
    discriminate"."""
    g = torch.Generator().manual_seed(0)
    fake = dict(finetuned, per_seed={})
    for s, r in finetuned["per_seed"].items():
        a = {"w": torch.rand(200, 300, generator=g) < r["bf16"][0]}
        b = {"w": torch.rand(200, 300, generator=g) < r["bf16"][1]}
        fake["per_seed"][s] = dict(r, **L.finetune.overlap(a, b))
        assert abs(fake["per_seed"][s]["excess"]) < 0.1
    assert L.finetune.finetune_claims(fake)[1]["reproduced"] == "no"
    planted = dict(finetuned, per_seed={s: dict(r, binned_null=r["excess"])
                                        for s, r in finetuned["per_seed"].items()})
    assert L.finetune.finetune_claims(planted)[1]["reproduced"] == "does not discriminate"


def test_overlap_row_control_fails_and_a_passing_control_does_not_discriminate():
    """Finding 1 (0.2.0), on constructed per-seed numbers: the row is the engine's
    (dynamics.evidence.judge); its null control fails the test; planted at the treatment's
    value, the row says "does not discriminate"."""
    per = {s: dict(excess=0.6 + 0.01 * s, null=0.01, overlap=0.7, chance=0.2, all_weights=0.7,
                   bf16=[0.5], float32=[0.9], rank={"w": 1.0}, live=0.5, binned_null=0.01,
                   binned_chance=0.21, rank_one={"w": 0.01}) for s in (0, 1, 2)}
    ft = dict(lr=1e-4, steps=10, seeds=[0, 1, 2], per_seed=per)
    assert L.finetune.finetune_claims(ft)[1]["reproduced"] == "yes"
    per2 = {s: dict(r, binned_null=r["excess"]) for s, r in per.items()}
    assert L.finetune.finetune_claims(dict(ft, per_seed=per2))[1]["reproduced"] == "does not discriminate"


@known_answer(L.finetune.live_units, L.finetune.overlap, L.finetune.null_overlap,
              how="constructed masks on a 3-4-2 network: hidden unit 3 has no weight in and "
                  "unit 2 none out, so their weights (and input 2's) are dead; two masks sharing "
                  "3 of A's 4 live weights overlap 3/4 with per-matrix chance sum |A_l||B_l|/n_l / |A| in "
                  "closed form; two independent random masks of per-layer densities 0.3 and "
                  "0.6 overlap, in expectation, at the second's density in each layer")
def test_overlap_counts_live_units_and_the_per_layer_null():
    w0 = torch.zeros(4, 3, dtype=torch.bool)   # 3 inputs -> 4 hidden
    w1 = torch.zeros(2, 4, dtype=torch.bool)   # 4 hidden -> 2 outputs
    w0[0, 0] = w0[1, 1] = w0[2, 2] = True       # hidden 3: no weight in
    w1[0, 0] = w1[1, 1] = w1[0, 3] = True       # hidden 2: no weight out
    live = L.finetune.live_units([{"h": w0, "o": w1}])
    # hidden 0 and 1 only; input 2, whose one weight led to dead hidden 2, dies with it
    assert live["h"].sum() == 2 * 2 and live["o"].sum() == 2 * 2
    assert not live["h"][2].any() and not live["h"][:, 2].any() and not live["o"][:, 3].any()
    a = {"h": w0.clone(), "o": w1.clone()}
    b = {"h": w0.clone(), "o": w1.clone()}
    b["h"][0, 0] = False
    b["h"][0, 1] = True  # A's live set: 4 weights (h[0,0], h[1,1], o[0,0], o[1,1]); B shares 3
    got = L.finetune.overlap(a, b, live)
    assert got["overlap"] == 3 / 4
    assert abs(got["chance"] - (2 * 2 / 4 + 2 * 2 / 4) / 4) < 1e-12
    # dead units' weights lower the chance over all weights and inflate the excess
    assert L.finetune.overlap(a, b)["excess"] > got["excess"]
    with pytest.raises(ValueError, match="does not take"):
        L.finetune.live_units([{"o": w1, "h": w0}])
    # two independent random masks: expected overlap per layer is B's density there
    g = torch.Generator().manual_seed(1)
    ra = {"x": torch.rand(400, 300, generator=g) < 0.3, "y": torch.rand(300, 400, generator=g) < 0.3}
    rb = {"x": torch.rand(400, 300, generator=g) < 0.6, "y": torch.rand(300, 400, generator=g) < 0.1}
    r = L.finetune.overlap(ra, rb)
    assert abs(r["chance"] - 0.35) < 0.01 and abs(r["overlap"] - 0.35) < 0.01 and abs(r["excess"]) < 0.02
    pooled = float(torch.cat([rb["x"].flatten(), rb["y"].flatten()]).float().mean())
    assert abs(pooled - 0.35) < 0.01  # equal layer sizes: pooled and per-layer chance agree here
    n = L.finetune.null_overlap(a, b, live, seed=0)
    assert abs(n["chance"] - got["chance"]) < 1e-12  # the shuffle keeps each matrix's count


@known_answer(L.finetune.magnitude_bins, L.finetune.binned_null_overlap,
              how="constructed weights 1..n: two masks that are both exactly the top 30% by |w| "
                  "overlap fully and the binned null, whose bins are then all kept or all "
                  "dropped, overlaps fully too (excess over chance 1, as the masks'); two "
                  "independent masks drawn at the same fractions in each bin (0.8 in the top "
                  "half, 0.2 in the bottom) overlap, in expectation, as the binned null says, "
                  "sum |A_bin||B_bin|/n_bin / |A| = 0.68, above the per-matrix chance 0.5")
def test_the_magnitude_binned_null_keeps_what_magnitude_explains():
    w = {"w": torch.arange(1, 1001, dtype=torch.float32).reshape(20, 50)[torch.randperm(20)]}
    bins = L.finetune.magnitude_bins(w, bins=10)
    assert all(int((bins["w"] == k).sum()) == 100 for k in range(10))
    assert bool((w["w"][bins["w"] == 9] > w["w"][bins["w"] == 8].max()).all())
    top = {"w": w["w"] > 700}
    got = L.finetune.binned_null_overlap(top, top, w, bins=10, seed=0)
    assert got["overlap"] == 1 and got["binned_chance"] == 1 and got["binned_excess"] == 1
    assert L.finetune.overlap(top, top)["excess"] == 1 and abs(got["chance"] - 0.3) < 1e-9
    g = torch.Generator().manual_seed(3)
    w = {"w": torch.rand(400, 500, generator=g)}
    p = torch.where(w["w"] > 0.5, 0.8, 0.2)
    a, b = ({"w": torch.rand(400, 500, generator=g) < p} for _ in range(2))
    r = L.finetune.binned_null_overlap(a, b, w, bins=2, seed=1)
    assert abs(r["binned_chance"] - 0.68) < 0.01 and abs(L.finetune.overlap(a, b)["overlap"] - 0.68) < 0.01
    assert abs(r["overlap"] - r["binned_chance"]) < 0.01 and abs(r["chance"] - 0.5) < 0.01
    assert r["binned_excess"] > 0.3  # the magnitude-blind chance would call this overlap an excess
    live = {"w": torch.zeros(400, 500, dtype=torch.bool)}
    live["w"][:200] = True  # outside live: no bin, and the null draws nothing there
    assert int((L.finetune.magnitude_bins(w, live, bins=4)["w"] < 0).sum()) == 200 * 500
    assert (L.finetune.binned_null_overlap(a, b, w, live, bins=4)["overlap"]
            == L.finetune.binned_null_overlap(a, b, w, live, bins=4)["overlap"])  # seeded
    with pytest.raises(ValueError, match="bins must be"):
        L.finetune.magnitude_bins(w, bins=0)


@known_answer(L.finetune.rank_one,
              how="a constructed two-entry diagonal update of a 4x5 matrix (rank 2 of 4): its "
                  "best rank-1 approximation has rank 1 of 4 and keeps the larger entry")
def test_rank_one_keeps_the_largest_singular_direction():
    before = {"hidden.0.weight": torch.zeros(4, 5)}
    after = {"hidden.0.weight": torch.zeros(4, 5)}
    after["hidden.0.weight"][0, 0], after["hidden.0.weight"][1, 1] = 3.0, 1.0
    one = L.finetune.rank_one(before, after)
    assert L.finetune.update_rank(before, after)["hidden.0.weight"] == 0.5
    assert L.finetune.update_rank(before, one)["hidden.0.weight"] == 0.25
    assert torch.allclose(one["hidden.0.weight"][0, 0], torch.tensor(3.0)) and one["hidden.0.weight"][1, 1].abs() < 1e-6


@known_answer(L.finetune.update_rank, L.finetune.rank_one, L.finetune.rank_bound,
              how="random float32 weights (300x40, 300x300, 10x300) plus a 1e-3 update: a "
                  "random update has full rank, its best rank-1 approximation added to the "
                  "weights (rounded to float32) rank 1 of min(shape); an update with 7 zero "
                  "rows and 7 zero columns has rank and bound (min(shape) - 7) / min(shape)")
def test_update_rank_ignores_float32_round_off_of_nonzero_weights():
    g = torch.Generator().manual_seed(0)
    for shape in [(300, 40), (300, 300), (10, 300)]:
        before = {"hidden.0.weight": 0.05 * torch.randn(shape, generator=g)}
        delta = 1e-3 * torch.randn(shape, generator=g)
        after = {"hidden.0.weight": before["hidden.0.weight"] + delta}
        k = min(shape)
        assert L.finetune.update_rank(before, after)["hidden.0.weight"] == 1.0
        one = L.finetune.rank_one(before, after)
        assert L.finetune.update_rank(before, one)["hidden.0.weight"] == 1 / k
        delta[:7] = 0  # seven units no update reaches, out and in (rows and columns 0-6)
        delta[:, :7] = 0
        dead = {"hidden.0.weight": before["hidden.0.weight"] + delta}
        assert L.finetune.update_rank(before, dead)["hidden.0.weight"] == (k - 7) / k
        assert L.finetune.rank_bound(before, dead)["hidden.0.weight"] == (k - 7) / k


@known_answer(L.finetune.distinct,
              how="constructed values: 61.04 and 61.01 print alike to one decimal and apart "
                  "to two; equal values stay at the asked decimals")
def test_distinct_gives_the_digits_that_tell_values_apart():
    assert L.finetune.distinct(61.04, 61.01) == ["61.04", "61.01"]
    assert L.finetune.distinct(61.2, 58.0, suffix="%") == ["61.2%", "58.0%"]
    assert L.finetune.distinct(5.0, 5.0, decimals=0) == ["5", "5"]


@known_answer(L.finetune.updated, L.finetune.overlap, L.finetune.update_rank,
              how="constructed weights: a change below bf16's spacing at 1 is seen in float32 "
                  "only; a set overlaps itself fully (excess 1); a two-entry diagonal update of "
                  "a 4x5 matrix has rank 2 of 4")
def test_updated_sets_read_at_a_resolution_and_overlap():
    before = {"hidden.0.weight": torch.ones(4, 5), "hidden.0.bias": torch.zeros(4)}
    after = {"hidden.0.weight": before["hidden.0.weight"].clone(), "hidden.0.bias": torch.ones(4)}
    after["hidden.0.weight"][0, 0] += 1e-4   # below bf16's spacing at 1 (2^-7)
    after["hidden.0.weight"][1, 1] += 0.05   # above it
    bf, f32 = L.finetune.updated(before, after), L.finetune.updated(before, after, torch.float32)
    assert list(bf) == ["hidden.0.weight"]  # biases are not counted
    assert int(bf["hidden.0.weight"].sum()) == 1 and int(f32["hidden.0.weight"].sum()) == 2
    same = L.finetune.overlap(f32, f32)
    assert same["overlap"] == 1 and same["excess"] == 1
    assert L.finetune.update_rank(before, after)["hidden.0.weight"] == 2 / 4


def test_finetune_refuses_a_run_without_dense_networks_and_a_bad_lr(finetuned, smoke_runs):
    cfg = L.LotteryConfig.for_profile("smoke")
    d = L.load_data(cfg)
    res = smoke_runs[0]
    with pytest.raises(ValueError, match="dense"):
        L.run_finetune(cfg, L.experiments.ImpResult.of(res.to_dict()), d)
    with pytest.raises(ValueError, match="lr"):
        L.run_finetune(cfg, res, d, lr=-1)


@known_answer(L.finetune.live_overlap,
              how="constructed sets: among the weights both runs moved (the first half), run A's "
                  "set is B's, so the overlap there is complete (excess 1) while the overlap over "
                  "all weights is not")
def test_live_overlap_counts_only_the_weights_both_runs_moved():
    live = {"w": torch.tensor([True] * 4 + [False] * 4)}
    a = {"w": torch.tensor([True, False, True, False] + [False] * 4)}
    b = {"w": torch.tensor([True, False, True, False] + [True] * 4)}
    got = L.finetune.live_overlap(a, b, live, live)
    assert got["overlap"] == 1 and got["chance"] == 0.5 and got["excess"] == 1
    assert L.finetune.overlap(a, b)["chance"] == 0.75
