"""The runners of dynamics.initialization and the chapter's claims: every sentence of the page
that rests on a figure's numbers is asserted here, on the smoke run's numbers (seeds 0-2) or on
the precomputed data/ file the page shows."""
from functools import lru_cache

import numpy as np
import pytest

from dynamics import plots, results
from dynamics import progress as P
from dynamics.initialization import experiments as E
from dynamics.initialization import science as S
from dynamics.initialization import views as V

from seeds import SEEDS


# ----------------------------------------------------------------------------- runners


def test_run_trainability_tiny_grid_stop_and_bad_inputs():
    cfg = S.TrainabilityConfig.for_profile("smoke", depths=[2, 3], sigma_w2=[1.0, 2.0], steps=5,
                                           n_train=200, width=8)
    res = E.run_trainability(cfg, progress=False)
    acc = np.asarray(res["acc"])
    assert acc.shape == (2, 2) and np.all((acc >= 0) & (acc <= 1)) and not res["stopped"]
    assert res["critical"] == pytest.approx(S.critical_sigma_w2(0.05))
    seen = []
    with P.reporting(lambda f: seen.append(f) or f >= 0.5):  # a panel's bar and Stop
        res = E.run_trainability(cfg, progress=False)
    assert res["stopped"] and np.isnan(np.asarray(res["acc"], float)[1]).all()
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
    res = E.run_trainability(cfg, progress=False)
    assert not res["stopped"]
    assert res["diverged"] == [[3, 1.0], [4, 1.0]]
    assert res["acc"][0][0] == pytest.approx(E.CHANCE) and res["acc"][1][0] == pytest.approx(E.CHANCE)


def test_analysis_helpers():
    heat = dict(depths=[10, 40], sigma_w2=[1.0, 1.76, 3.0], sigma_b2=0.05, critical=1.76,
                acc=[[1.0, 1.0, 1.0], [0.1, 0.9, 0.12]])
    assert E.best_sigma_w2(heat) == [1.0, 1.76]
    agree, cells = E.trainability_agreement(heat)
    assert cells == 6 and 0 <= agree <= 1
    saxe = dict(steps=[0, 10, 20], progress=[[0, 0.6, 1], [0, 0.1, 0.2]],
                theory=[[0, 0.5, 1], [0, 0.1, 0.6]])
    meas, theo = E.half_times(saxe)
    np.testing.assert_array_equal(meas, [10, np.inf])
    np.testing.assert_array_equal(theo, [10, 20])
    dt = dict(depths=[2, 16], orthogonal=[10.0, 12.0], gaussian=[10.0, None])
    assert E.depth_time_ratio(dt, "orthogonal") == pytest.approx(1.2)
    assert E.depth_time_ratio(dt, "gaussian") == np.inf
    with pytest.raises(ValueError):
        E.depth_time_ratio(dt, "orthogonal", 2, 32)


def test_run_saxe_is_deterministic():
    cfg = S.SaxeConfig.for_profile("smoke", steps=60)
    a, b = E.run_saxe(cfg), E.run_saxe(cfg)
    assert a["loss"] == b["loss"] and a["status"] == "ok" and "theory" in a


def test_run_guessing_bias_stops():
    cfg = S.GuessingConfig.for_profile("smoke", depths=[1, 2], n_nets=4, width=16, n_inputs=50)
    with P.reporting(lambda f: f >= 0.5):
        res = E.run_guessing_bias(cfg, activations=["relu"])
    assert res.get("stopped") and len(res["relu"]) == 1


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
    assert 0.5 < S.std_ratio(he["relu"]["he"]) < 2.0
    assert S.std_ratio(_signal(seed)["relu"]["xavier"]) < 1e-3


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_signal_figure_what_to_notice(seed):
    """Section 1's "What to notice", on the figure's own numbers (smoke: depth 50, width 256):
    ReLU: He, orthogonal and LSUV keep the activations within 5x of the first layer's (measured
    0.72-1.42), Xavier falls by orders of magnitude (3e-8 to 6e-8), the small Gaussian
    collapses to exactly 0, the zero init has no signal and no gradient. tanh: Xavier and
    orthogonal decay slowly (measured 0.21-0.28) with flat gradients (first/last 0.79-1.04);
    He and LSUV keep the activations up (0.77, 1.02) while their gradients grow towards the
    input (first/last 3.8-4.6 and 33-35)."""
    res = _signal(seed)
    relu, tanh = res["relu"], res["tanh"]
    for init in ("he", "orthogonal", "lsuv"):
        assert 0.2 < S.std_ratio(relu[init]) < 5
    assert S.std_ratio(relu["xavier"]) < 1e-3
    assert relu["small"]["act_std"][-1] < 1e-30
    assert max(relu["zero"]["act_std"]) == 0 and max(relu["zero"]["grad_norm"]) == 0

    def grad_growth(st):
        return st["grad_norm"][0] / st["grad_norm"][-1]

    for init in ("xavier", "orthogonal"):
        assert 0.1 < S.std_ratio(tanh[init]) < 0.4
        assert 0.5 < grad_growth(tanh[init]) < 2
    for init in ("he", "lsuv"):
        assert S.std_ratio(tanh[init]) > 0.6
        assert grad_growth(tanh[init]) > 3


# ----------------------------------------------------------------------------- claims: section 2


@lru_cache(maxsize=4)
def _chaos(seed):
    return E.run_chaos(S.ChaosConfig.for_profile("smoke", seed=seed))


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_measured_edge_of_chaos_matches_theory(seed):
    """tanh, sigma_b^2 = 0.05: chi_1 = 1 measured on random networks within 10% of the
    mean-field sigma_w^2 (measured over seeds 0-4: -2.2% to +3.5%), and on the critical line
    at every sigma_b^2 of the figure within 10%."""
    res = _chaos(seed)
    assert res["critical_measured"] == pytest.approx(res["critical_theory"], rel=0.10)
    for b, m in zip(res["line_measured"]["sigma_b2"], res["line_measured"]["sigma_w2"]):
        assert m == pytest.approx(S.critical_sigma_w2(b), rel=0.10)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_chaos_figure_what_to_notice(seed):
    """The iterates sit on the maps (within 15%: finite width); c* = 1 below the edge of chaos
    and < 1 above it; the measured depth scale peaks near the critical sigma_w^2 (within 0.7),
    is below 2 layers deep in the ordered phase (sigma_w^2 = 0.4) and 4-15 layers deep in the
    chaotic phase (sigma_w^2 > 3), and its median deviation from the theory is below 25%
    (measured, seed 0: 1.57 and 2.16 at the peak, 15.8 and 15.7 layers; 0.97 at 0.4; 6.1-9.6
    beyond 3; median deviation 9%)."""
    res = _chaos(seed)
    for qm in res["q_map"]:
        for seq in qm["measured"]:
            for a, b in zip(seq[:-1], seq[1:]):
                assert b == pytest.approx(S.q_map(a, qm["sigma_w2"], 0.05), rel=0.15)
    stars = {cm["sigma_w2"]: cm["c_star"] for cm in res["c_map"]}
    assert stars[1.0] == 1.0 and stars[3.0] < 0.9
    xm = res["xi_measured"]
    s = np.asarray(xm["sigma_w2"])
    xi = np.array([np.nan if v is None else v for v in xm["xi"]], float)
    assert abs(s[int(np.nanargmax(xi))] - res["critical_theory"]) < 0.7
    assert xi[0] < 2 and s[0] < 0.5
    assert np.all((xi[s > 3] > 4) & (xi[s > 3] < 15))
    dev, n, _ = E.xi_deviation(res)
    assert n >= len(s) - 1 and dev < 0.25


def _heat():
    return results.load("initialization_trainability")[0]


@pytest.mark.claim
def test_claim_trainability_band_on_the_precomputed_grid():
    """The trainability figure the book shows (data/initialization_trainability.json):
    shallow networks train at every weight scale of the grid; for every depth of at least 30
    the best sigma_w^2 lies near the critical value (within the band 6 xi_c >= depth, and
    within 0.8 of 1.76); the trained region narrows with depth; and "trained" agrees with
    "depth <= 6 xi_c" on most cells."""
    heat = _heat()
    acc = np.asarray(heat["acc"], float)
    depths, sig = heat["depths"], heat["sigma_w2"]
    assert min(acc[0]) > 0.9  # the shallowest row trains everywhere
    for d, b in zip(depths, E.best_sigma_w2(heat)):
        if d >= 30:
            assert b is not None and abs(b - heat["critical"]) <= 0.8
            assert S.trainable_depth(b, heat["sigma_b2"]) >= d
    width = [(row >= 0.5).sum() for row in acc]
    assert width[-1] < width[0] and all(a >= b for a, b in zip(width[:-1], width[1:]))
    agree, cells = E.trainability_agreement(heat)
    assert agree >= 0.8
    # every row of the page's claims table that the prose asserts holds on this grid
    rows = V.trainability_claims(heat)
    assert all(r["reproduced"] == "yes" for r in rows if r["asserted"]), rows


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
def test_claim_orthogonal_fluctuations_do_not_grow_with_depth(seed):
    """Day, Kahn & Roberts: Gaussian-weight fluctuations grow linearly in depth (fitted slope
    0.49-0.67 over seeds 0-2 against the leading-order 2/3, starting at 2 and staying within
    a factor 2 of the line 2 + 2l/3), orthogonal ones stay near zero (below 0.25) and do not
    grow."""
    res = _fluct(seed)
    assert 0.4 < res["gaussian_slope"] < 1.0
    assert abs(res["orthogonal_slope"]) < 0.02
    assert res["gaussian"][-1] > 10 * max(res["orthogonal"][-5:])
    assert res["gaussian"][0] == pytest.approx(2.0, rel=0.25)
    for l, v in zip(res["layers"], res["gaussian"]):
        assert 0.5 < v / (2 + 2 * l / 3) < 2
    assert max(res["orthogonal"]) < 1.0


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_saxe_curves_follow_the_exact_solution(seed):
    """From small weights the patterns are learned one after another, strongest first, each
    along the exact solution (half-learning steps within 20% of it) and lagging it."""
    res = _saxe(seed)
    meas, theo = E.half_times(res)
    assert np.all(np.isfinite(meas)) and np.all(np.diff(meas) > 0)  # strongest first
    assert np.max(np.abs(meas / theo - 1)) < 0.2
    assert np.all(meas >= theo)  # lagging the exact solution


@lru_cache(maxsize=1)
def _depth_time():
    cfg = S.DepthTimeConfig.for_profile("smoke", depths=[2, 16], seeds=SEEDS)
    return E.run_depth_time(cfg, progress=False)


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_orthogonal_learning_time_is_depth_independent(seed):
    """Deep linear networks, best learning rate per depth: from depth 2 to 16 the learning time
    grows by at most 1.5x with orthogonal init (measured over seeds 0-4: 0.54x-1.17x) and by
    more with scaled Gaussian init (measured: 13x or never within the step budget)."""
    res = _depth_time()
    k = SEEDS.index(seed)
    orth = [res["orthogonal_per_seed"][i][k] for i in range(2)]
    gauss = [res["gaussian_per_seed"][i][k] for i in range(2)]
    assert np.isfinite(orth[1]) and orth[1] / orth[0] <= 1.5
    assert gauss[1] / gauss[0] > 1.5
    assert gauss[1] / gauss[0] > orth[1] / orth[0]


@pytest.mark.claim
def test_claim_depth_time_figure_on_the_precomputed_data():
    """The precomputed figure (data/initialization_depth_time.json): the orthogonal times stay
    within a factor 2.5 of each other over all depths, the Gaussian ones climb by more than 10x
    and the deepest Gaussian network does not learn within the budget; the orthogonal best
    learning rate falls with depth."""
    res = results.load("initialization_depth_time")[0]
    orth = E.learning_times(res["orthogonal"])
    gauss = E.learning_times(res["gaussian"])
    assert np.all(np.isfinite(orth)) and orth.max() / orth.min() < 2.5
    assert not np.isfinite(gauss[-1]) and gauss[-2] / gauss[0] > 10
    lr = res["orthogonal_lr"]
    assert lr[-1] < lr[0] / 4


# ----------------------------------------------------------------------------- claims: section 4


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_relu_guessing_bias_grows_with_depth(seed):
    """ReLU: the favourite class takes a growing share with depth and nearly everything at the
    deepest depth, and the winning class differs between networks; tanh stays far lower."""
    res = _igb(seed)
    relu = np.mean(res["relu"], 1)
    tanh = np.mean(res["tanh"], 1)
    assert relu[-1] > 0.6 and relu[-1] > relu[0] + 0.2
    assert relu[-1] > tanh[-1] + 0.3
    assert len(set(res["relu_class"][-1])) > 1


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_every_row_the_page_asserts(seed):
    """The page's claims table from this seed's smoke runs (the precomputed grids are checked
    by tests/test_published_claims.py): every row its prose states as a fact is reproduced."""
    rows = V.claims(signal=_signal(seed), chaos=_chaos(seed), fluct=_fluct(seed),
                    saxe=_saxe(seed), igb=_igb(seed))
    assert len(rows) >= 9
    bad = plots.failed_claims(rows)
    assert not bad, [(r["claim"], r["measured here"]) for r in bad]


def test_rank_growth_takes_one_svd_per_evaluation(monkeypatch):
    import torch
    calls = []
    svdvals = torch.linalg.svdvals
    monkeypatch.setattr(torch.linalg, "svdvals", lambda A: calls.append(1) or svdvals(A))
    cfg = S.SaxeConfig.for_profile("smoke", steps=30)
    res = E.run_rank_growth(cfg)
    assert len(res["final"]) == cfg.n_patterns and len(calls) == 31  # evaluations 0, 1, ..., 30
