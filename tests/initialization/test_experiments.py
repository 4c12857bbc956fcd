"""The runners of dynamics.initialization and the chapter's claims: every sentence of the page
that rests on a figure's numbers is asserted here, on the smoke run's numbers (seeds 0-2) or on
the precomputed data/ file the page shows."""
import importlib
from dataclasses import asdict, replace
from functools import lru_cache

import numpy as np
import pytest

from dynamics import plots, results, runtime
from dynamics import progress as P
from dynamics.initialization import experiments as E
from dynamics.initialization import science as S
from dynamics.initialization import claims as C

from seeds import SEEDS

C = importlib.import_module("dynamics.initialization.claims")  # the name claims is the function


# ----------------------------------------------------------------------------- runners


def test_run_trainability_tiny_grid_stop_and_bad_inputs():
    cfg = S.TrainabilityConfig.for_profile("smoke", depths=[2, 3], sigma_w2=[1.0, 2.0], steps=5,
                                           n_train=200, width=8)
    res = E.run_trainability(cfg, bars=False)
    acc = np.asarray(res.acc)
    assert acc.shape == (2, 2) and np.all((acc >= 0) & (acc <= 1)) and not res.stopped
    assert res.critical == pytest.approx(S.critical_sigma_w2(0.05))
    assert E.Trainability.of(res.to_dict()) == res  # what data/ holds reads back as it was
    seen = []
    with P.reporting(lambda f: seen.append(f) or f >= 0.5):  # a panel's bar and Stop
        res = E.run_trainability(cfg, bars=False)
    assert res.stopped and np.isnan(np.asarray(res.acc, float)[1]).all()
    assert seen and max(seen) <= 1.0
    with pytest.raises(ValueError):
        E.run_trainability(cfg.replace(depths=[]))
    with pytest.raises(ValueError):
        E.run_trainability(cfg.replace(sigma_w2=[0.0, 1.0]))


def test_run_trainability_reports_diverged_runs(monkeypatch):
    """tanh networks hardly ever diverge (bounded activations), so a divergence is simulated:
    a diverged run counts as chance and is listed, and the grid goes on."""
    real = E.train_many

    def first_diverges(*args, **kwargs):
        res = real(*args, **kwargs)
        res.histories[0].diverged_at = 3
        res.histories[0].steps.clear()
        res.histories[0].metrics.clear()
        return res

    monkeypatch.setattr(E, "train_many", first_diverges)
    cfg = S.TrainabilityConfig.for_profile("smoke", depths=[3, 4], sigma_w2=[1.0, 2.0], steps=5,
                                           n_train=200, width=8)
    res = E.run_trainability(cfg, bars=False)
    assert not res.stopped
    assert res.diverged == [[3, 1.0], [4, 1.0]]
    assert res.acc[0][0] == pytest.approx(E.CHANCE) and res.acc[1][0] == pytest.approx(E.CHANCE)


def test_analysis_helpers():
    heat = grid(depths=[10, 40], sigma_w2=[1.0, 1.76, 3.0], sigma_b2=0.05, critical=1.76,
                acc=[[1.0, 1.0, 1.0], [0.1, 0.9, 0.12]])
    assert E.best_sigma_w2(heat.acc, heat.sigma_w2) == [1.0, 1.76]
    agree, cells = E.trainability_agreement(heat)
    assert cells == 6 and 0 <= agree <= 1
    saxe = E.Saxe(steps=[0, 10, 20], loss=[1, 0.5, 0], progress=[[0, 0.6, 1], [0, 0.1, 0.2]],
                  strengths=[1, 0.5], lr=0.1, depth=2, init="small", status="ok",
                  diverged=False, theory=[[0, 0.5, 1], [0, 0.1, 0.6]])
    meas, theo = E.half_times(saxe)
    np.testing.assert_array_equal(meas, [10, np.inf])
    np.testing.assert_array_equal(theo, [10, 20])
    dt = E.DepthTime(depths=[2, 16], lrs=[0.1], criterion=0.05, steps=10, width=8, seeds=[0],
                     orthogonal=[10.0, 12.0], orthogonal_lr=[0.1, 0.1],
                     orthogonal_per_seed=[[10.0], [12.0]], gaussian=[10.0, None],
                     gaussian_lr=[0.1, 0.1], gaussian_per_seed=[[10.0], [None]], wall_time=0.0)
    assert E.depth_time_ratio(dt, "orthogonal") == pytest.approx(1.2)
    assert E.depth_time_ratio(dt, "gaussian") == np.inf
    with pytest.raises(ValueError):
        E.depth_time_ratio(dt, "orthogonal", 2, 32)


def test_run_saxe_is_deterministic():
    cfg = S.SaxeConfig.for_profile("smoke", steps=60)
    a, b = E.run_saxe(cfg), E.run_saxe(cfg)
    assert a.loss == b.loss and a.status == "ok" and a.theory is not None
    assert a.control.init == "orthogonal" and E.Saxe.of(a.to_dict()) == a  # a record, whole
    renamed = {**a.to_dict(), "losses": a.loss}
    del renamed["loss"]
    with pytest.raises(ValueError, match="no field loss; unknown field losses"):
        E.Saxe.of(renamed)


def test_run_guessing_bias_stops():
    cfg = S.GuessingConfig.for_profile("smoke", depths=[1, 2], n_nets=4, width=16, n_inputs=50)
    with P.reporting(lambda f: f >= 0.5):
        res = E.run_guessing_bias(cfg, activations=["relu"])
    assert res.stopped and len(res.relu) == 1


# ----------------------------------------------------------------------------- claims: section 1


@lru_cache(maxsize=4)
def _signal(seed):
    return E.run_signal(S.SignalConfig.for_profile("smoke", seed=seed))


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_he_keeps_relu_signal_xavier_shrinks_it(seed):
    """ReLU, depth 50: He keeps the last-layer activation std within 2x of the first layer's,
    Xavier shrinks it by more than 10x.

    The He ratio is log-normal with a spread that grows with depth / width (finite-width
    fluctuations): over 12 seeds it spanned 0.22-1.88 at width 256 (the smoke figure), 0.44-1.82
    at width 512 and 0.54-1.53 at width 1024, so the 2x claim is tested at width 1024. Xavier
    gives ~1e-8 at any width (variance halved 49 times)."""
    cfg = S.SignalConfig.for_profile("smoke", depth=50, seed=seed, n_inputs=64)
    he = E.run_signal(cfg.replace(width=1024), inits=("he",), activations=("relu",))
    assert 0.5 < S.std_ratio(he.relu["he"]) < 2.0
    assert S.std_ratio(_signal(seed).relu["xavier"]) < 1e-3


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_weight_gradients_of_relu_networks_as_the_prose_reads_them(seed):
    """The prose on the figure's right panel: Xavier's weight gradient (ReLU) is about level
    from layer 2 to the last (its forward and backward decays cancel); with He one input's
    weight gradient is about level (the product of two flat signals), while the batch's grows
    towards the output, the inputs' gradients adding up more coherently where their
    representations have grown alike."""
    xavier = _signal(seed).relu["xavier"].grad_norm
    assert 0.25 < xavier[1] / xavier[-1] < 4.0
    cfg = S.SignalConfig.for_profile("smoke", seed=seed)
    d = S.mnist1d_data(max(cfg.n_inputs, 100), n_test=max(cfg.n_inputs, 500))
    with runtime.seeded(seed):
        model = S.init_mlp(d.input_dim, cfg.width, cfg.depth, "relu", "he")
    one = [S.layer_statistics(model, d.x_test[k:k + 1], d.y_test[k:k + 1]).grad_norm
           for k in range(8)]
    single = float(np.median([g[1] / g[-1] for g in one]))
    batch = S.layer_statistics(model, d.x_test[:cfg.n_inputs], d.y_test[:cfg.n_inputs])
    assert 0.5 < single < 2.0
    assert batch.grad_norm[1] / batch.grad_norm[-1] < 0.5


# ----------------------------------------------------------------------------- claims: section 2


@lru_cache(maxsize=4)
def _chaos(seed):
    return E.run_chaos(S.ChaosConfig.for_profile("smoke", seed=seed))


def test_run_chaos_is_a_record_that_refuses_a_renamed_field():
    """run_chaos returns a ChaosRun (what the claims, facts and figure read by attribute);
    its payload read back is the same record, and a renamed field, at the top or in a nested
    record, is refused, naming it."""
    c = E.run_chaos(S.ChaosConfig.for_profile("smoke", n_sigma=3, depth=20, width=64, batch=8,
                                              map_width=64),
                    sigma_b2_line=(0.05,), map_sigma_w2=(1.0,))
    payload = asdict(c)
    assert E.ChaosRun.of(payload) == c and isinstance(c.q_map[0], E.QMap)
    payload["xi_measured"]["xis"] = payload["xi_measured"].pop("xi")
    with pytest.raises(ValueError, match="xi_measured does not match XiMeasured: no field xi; "
                                         "unknown field xis"):
        E.ChaosRun.of(payload)


def grid(**fields) -> E.Trainability:
    """A constructed trainability grid: ``fields`` over a small default of every field."""
    base = dict(depths=[], sigma_w2=[], acc=[], seeds=[0], acc_per_seed=[], line_sigma_w2=[],
                six_xi=[], critical=1.76, sigma_b2=0.05, steps=10, width=8, lr_depth=0.08,
                n_train=100, diverged=[], stopped=False, wall_time=0.0)
    return E.Trainability(**{**base, **fields})


def _heat():
    return replace(results.load("initialization_trainability", as_=E.Trainability)[0],
                   seeds=[0])


def _more():
    return results.load("initialization_trainability_seeds", as_=E.Trainability)[0]


@pytest.mark.claim
def test_claim_trainability_band_on_the_precomputed_grid():
    """The trainability figure the book shows (data/initialization_trainability.json, seed 0)
    with seeds 1-4 on the cells of its edge-of-chaos row (..._seeds.json): every seed is judged
    on the cells all seeds have (seed 0's grid cut to seeds 1-4's), and the row is shown, not
    asserted (yes on the regenerated grid, by little more than the seeds' spread, and "within
    noise" on the grid before it: fragile); the 6 xi_c row reads the whole grid, rests on seed 0 alone and is not asserted;
    the narrowing and the disagreements are that seed's observations, glued in the prose."""
    heat, more = _heat(), _more()
    rows = C.trainability_claims(heat, more)
    assert [r["asserted"] for r in rows] == [False, False]
    assert rows[1]["claim"].startswith("networks train when depth") and rows[1]["seeds"] == [0]
    edge = rows[0]
    assert edge["reproduced"] in ("yes", "within noise") and edge["seeds"] == [0, 1, 2, 3, 4], edge
    assert "seed 2: 30:" in edge["measured here"]
    depths, sig, acc = C._shared(heat, more)
    assert depths == more.depths and sig == more.sigma_w2 and acc.shape == (3, 8)
    k = heat.sigma_w2.index(sig[2])
    assert acc[1, 2] == np.asarray(heat.acc, float)[heat.depths.index(depths[1]), k]


def test_window_at_the_grids_precision():
    """Known answers: 1.76095 / 2 = 0.880 is 0.88 at the grid's two decimals, a factor 2 from
    1.76 exactly, so the grid's 1.76 is far from the ordered placebo edge; the true edge's
    window is the same with or without the rounding."""
    sig = [0.8, 1.0, 1.2, 1.4, 1.6, 1.76, 2.0, 2.4, 3.0, 3.8, 4.5]
    assert C._decimals(sig) == 2 and C._decimals([1.0, 2.0]) == 0
    near, far = C._window(1.76095 / 2, sig)
    assert near == [0.8, 1.0, 1.2] and far == [1.76, 2.0, 2.4, 3.0, 3.8, 4.5]
    assert C._window(1.76095, sig) == ([1.4, 1.6, 1.76, 2.0, 2.4], [0.8, 3.8, 4.5])


def test_edge_of_chaos_row_fails_when_the_far_cells_train_as_well():
    """The edge-of-chaos row can fail: a grid whose best cells sit far from the edge, or whose
    far-from-the-edge cells train as well as the best, gives "no"; one seed of five that fails
    makes it "partly", with the words that say so."""
    heat, more = _heat(), _more()
    sig = heat.sigma_w2
    flat = replace(heat, acc=[[0.9] * len(sig) for _ in heat.depths])  # every cell alike
    assert C.trainability_claims(flat)[0]["reproduced"] == "no"
    far = replace(heat, acc=[[1.0 if s == sig[-1] else 0.5 for s in sig] for _ in heat.depths])
    assert C.trainability_claims(far)[0]["reproduced"] == "no"
    m = np.asarray(more.acc_per_seed)
    m[:, 1] = 0.9  # seed 2: every cell alike
    row = C.trainability_claims(heat, replace(more, acc_per_seed=m.tolist()))[0]
    assert row["reproduced"] == "partly" and "holds on 4 of 5 seeds" in row["measured here"]
    m[:] = 0.9  # every seed: every cell alike
    assert C.trainability_claims(flat, replace(more, acc_per_seed=m.tolist()))[0][
        "reproduced"] == "no"
    # the placebo edges (a factor FAR_RATIO below and above) fail the row's own test
    run = (heat.depths, sig, np.asarray(heat.acc, float), heat.sigma_b2)
    assert C._edge_lead(run) >= C.EDGE_MARGIN > max(C._edge_lead(run, C.FAR_RATIO),
                                                    C._edge_lead(run, 1 / C.FAR_RATIO))
    near, _ = C._window(heat.critical, sig)
    assert len(near) <= len(sig) // 2  # the window admits fewer than half the grid's values


# ----------------------------------------------------------------------------- claims: section 3


@lru_cache(maxsize=4)
def _fluct(seed):
    return E.run_fluctuations(S.FluctuationConfig.for_profile("smoke", seed=seed))


@lru_cache(maxsize=4)
def _saxe(seed):
    return E.run_saxe(S.SaxeConfig.for_profile("smoke", seed=seed))


@lru_cache(maxsize=4)
def _igb(seed):
    return E.run_guessing_bias(S.GuessingConfig.for_profile("smoke", n_nets=8, seed=seed))


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_fluctuations_start_at_two_and_follow_the_line(seed):
    """Day, Kahn & Roberts: the Gaussian ensemble starts at 2 (one Gaussian layer) and stays
    within a factor 2 of the leading-order line 2 + 2l/3; the orthogonal one stays below 1."""
    res = _fluct(seed)
    assert res.gaussian[0] == pytest.approx(2.0, rel=0.25)
    for l, v in zip(res.layers, res.gaussian):
        assert 0.5 < v / (2 + 2 * l / 3) < 2
    assert max(res.orthogonal) < 1.0


@lru_cache(maxsize=1)
def _depth_time():
    cfg = S.DepthTimeConfig.for_profile("smoke", depths=[2, 16], seeds=SEEDS)
    return E.run_depth_time(cfg, bars=False)


@pytest.mark.claim
def test_claim_orthogonal_learning_time_is_depth_independent():
    """Deep linear networks, best learning rate per depth and seed, smoke run on the claim
    seeds: the Saxe row holds (orthogonal within ORTH_GROWTH_MAX from depth 2 to 16, the
    scaled Gaussian control, measured the same way, beyond it)."""
    row, = C.depth_time_claims(_depth_time())
    assert row["reproduced"] == "yes", row
    assert row["seeds"] == list(SEEDS)


@pytest.mark.claim
def test_claim_depth_time_figure_on_the_precomputed_data():
    """The precomputed figure (data/initialization_depth_time.json, five seeds): the Saxe row
    holds on every seed, and the deepest Gaussian network does not learn within the budget."""
    res = results.load("initialization_depth_time", as_=E.DepthTime)[0]
    row, = C.depth_time_claims(res)
    assert row["reproduced"] == "yes", row
    assert not np.isfinite(E.learning_times(res.gaussian)[-1])


def test_saxe_row_fails_when_the_orthogonal_time_grows_like_the_gaussian():
    res = results.load("initialization_depth_time", as_=E.DepthTime)[0]
    grow = replace(res, orthogonal_per_seed=[[t * 2 ** i for t in row] for i, row in
                                             enumerate(res.orthogonal_per_seed)])
    assert C.depth_time_claims(grow)[0]["reproduced"] == "no"
    same = replace(res, gaussian_per_seed=res.orthogonal_per_seed)  # a control that does as well
    assert C.depth_time_claims(same)[0]["reproduced"] == "does not discriminate"


@lru_cache(maxsize=1)
def _runs():
    return E.claim_runs("smoke", SEEDS)


# the asserted rows that do not say yes at the smoke scale (the strict cpu build holds each to
# yes): none. The chaotic-phase depth scale's row was one until the engine capped a control's
# spread where a far seed widens it (evidence.control_miss): its control (the ordered phase's
# formula) misses its bar on every seed, by less than its whole spread
SMOKE_VERDICTS: dict = {}


@pytest.mark.claim
def test_claim_every_row_the_page_asserts():
    """The page's claims table from the smoke runs on the claim seeds (the precomputed grids
    are checked by tests/test_published_claims.py): every row is asserted, judged on every
    seed, and reproduced, but for the smoke exceptions named above."""
    rows = C.claims(**_runs(), signal_width=S.SignalConfig.for_profile("smoke").width)
    assert len(rows) == 16 and all(r["asserted"] for r in rows)
    assert all(r["seeds"] == list(SEEDS) for r in rows)
    bad = {next((k for k in SMOKE_VERDICTS if r["claim"].startswith(k)), r["claim"]): r["reproduced"]
           for r in plots.failed_claims(rows)}
    assert bad == SMOKE_VERDICTS, [(r["claim"], r["measured here"]) for r in plots.failed_claims(rows)]


def test_rank_growth_takes_one_svd_per_evaluation(monkeypatch):
    import torch
    calls = []
    svdvals = torch.linalg.svdvals
    monkeypatch.setattr(torch.linalg, "svdvals", lambda A: calls.append(1) or svdvals(A))
    cfg = S.SaxeConfig.for_profile("smoke", steps=30)
    res = E.run_rank_growth(cfg)
    assert len(res.final) == cfg.n_patterns and len(calls) == 31  # evaluations 0, 1, ..., 30


def test_live_rows_fail_on_contradicting_data(monkeypatch):
    """Each live row can fail: swap in results that contradict it and its verdict is "no"."""
    runs = _runs()
    def unscaled(st):  # LSUV's variances replaced by those of its start
        return replace(st, out_var=st.start_out_var)

    sig = {s: replace(r, relu=dict(r.relu, he=r.relu["xavier"], small=r.relu["he"],
                                   lsuv=unscaled(r.relu["lsuv"])),
                      tanh=dict(r.tanh, he=r.tanh["xavier"]))
           for s, r in runs["signal"].items()}
    rows = C.claims(signal=sig, signal_width=S.SignalConfig.for_profile("smoke").width)
    assert [r["reproduced"] for r in rows] == ["no"] * 5
    # a control that passes the row's own test: LSUV's start at unit variance
    level = {s: E.Signal(**{a: dict(n, lsuv=replace(n["lsuv"], start_out_var=n["lsuv"].out_var))
                            for a, n in r.items()}) for s, r in runs["signal"].items()}
    lsuv_row = [r for r in C.claims(signal=level, signal_width=S.SignalConfig.for_profile("smoke").width) if r["claim"].startswith("LSUV")]
    assert [r["reproduced"] for r in lsuv_row] == ["does not discriminate"]
    off = {s: replace(c, critical_measured=1.3 * c.critical_theory, xi_measured=replace(
        c.xi_measured, xi=[2 * x if x else x for x in c.xi_measured.xi][::-1]))
        for s, c in runs["chaos"].items()}
    assert [r["reproduced"] for r in C.claims(chaos=off)][1:3] == ["no"] * 2
    monkeypatch.setattr(C, "C_STAR_HOT", 1.0)  # c* measured below the edge: the row fails
    assert C.claims(chaos=runs["chaos"])[3]["reproduced"] == "no"
    monkeypatch.undo()
    bent = {s: replace(c, q_map=[replace(qm, measured=[[2 * q for q in seq] for seq in qm.measured])
                                 for qm in c.q_map]) for s, c in runs["chaos"].items()}
    assert C.claims(chaos=bent)[0]["reproduced"] == "no"
    flat = {s: replace(f, gaussian_slope=f.orthogonal_slope) for s, f in runs["fluct"].items()}
    assert C.claims(fluct=flat)[0]["reproduced"] == "no"
    grown = {s: replace(f, orthogonal=f.gaussian) for s, f in runs["fluct"].items()}
    assert C.claims(fluct=grown)[0]["reproduced"] == "no"  # orthogonal fluctuations that grow
    weak_first = {s: replace(r, progress=r.progress[::-1]) for s, r in runs["saxe"].items()}
    assert C.claims(saxe=weak_first)[0]["reproduced"] == "no"
    sigmoidal = {s: replace(r, control=replace(r.control, progress=r.progress))
                 for s, r in runs["saxe"].items()}  # a control that passes the row's test
    assert C.claims(saxe=sigmoidal)[0]["reproduced"] == "does not discriminate"
    even = {s: replace(g, relu=g.tanh) for s, g in runs["igb"].items()}
    assert C.claims(igb=even)[0]["reproduced"] == "no"
    with pytest.raises(ValueError, match="seed"):
        C.claims(signal=runs["signal"][SEEDS[0]], signal_width=S.SignalConfig.for_profile("smoke").width)
    with pytest.raises(ValueError, match="signal_width"):
        C.claims(signal=runs["signal"])
