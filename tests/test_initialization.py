"""Tests of dynamics.initialization: the science functions against known values and reference
implementations, bad inputs, and the chapter's claims on seeds 0-2 (smoke profile)."""
import math
from functools import lru_cache

import numpy as np
import pytest
import torch
from scipy import integrate

from dynamics import initialization as init
from dynamics.models import MLP


# ----------------------------------------------------------------------------- mean field


def _gauss(f):
    """E[f(z)], z ~ N(0, 1), by adaptive quadrature (a reference independent of Gauss-Hermite)."""
    return integrate.quad(lambda z: f(z) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi), -12, 12)[0]


def test_gauss_hermite_moments():
    z, w = init.gauss_hermite()
    assert np.isclose(w.sum(), 1.0)
    assert np.isclose(np.dot(w, z ** 2), 1.0) and np.isclose(np.dot(w, z ** 4), 3.0)


def test_q_map_against_scipy_quadrature():
    for q, sw2, sb2 in [(0.3, 1.5, 0.05), (2.0, 3.0, 0.2)]:
        ref = sw2 * _gauss(lambda z: math.tanh(math.sqrt(q) * z) ** 2) + sb2
        assert init.q_map(q, sw2, sb2) == pytest.approx(ref, rel=1e-6)


def test_fixed_points_and_known_critical_values():
    sw2, sb2 = 2.0, 0.05
    q = init.q_star(sw2, sb2)
    assert init.q_map(q, sw2, sb2) == pytest.approx(q, rel=1e-9)
    c = init.c_star(sw2, sb2)
    assert 0 < c < 1 and init.c_map(c, sw2, sb2) == pytest.approx(c, abs=1e-8)
    assert init.c_map(1.0, sw2, sb2) == pytest.approx(1.0, abs=1e-9)  # c = 1 is always fixed
    # sigma_b = 0: the edge of chaos is sigma_w^2 = 1 exactly (tanh'(0) = 1)
    assert init.critical_sigma_w2(0.0) == pytest.approx(1.0, abs=1e-3)
    assert init.q_star(0.8, 0.0) == 0.0 and init.chi_1(0.8, 0.0) == pytest.approx(0.8)
    # more bias variance pushes the edge of chaos to larger weights
    crit = [init.critical_sigma_w2(b) for b in (0.01, 0.05, 0.2)]
    assert crit[0] < crit[1] < crit[2]
    assert init.chi_1(crit[1], 0.05) == pytest.approx(1.0, abs=1e-8)


def test_chi1_is_the_slope_of_the_correlation_map_at_one():
    sw2, sb2 = 1.3, 0.05
    h = 1e-4
    slope = (1.0 - init.c_map(1.0 - h, sw2, sb2)) / h
    assert slope == pytest.approx(init.chi_1(sw2, sb2), rel=2e-3)


def test_depth_scale():
    # ordered phase: xi = -1/ln chi_1; it diverges at the edge of chaos
    assert init.depth_scale(1.0, 0.05) == pytest.approx(-1 / math.log(init.chi_1(1.0, 0.05)))
    crit = init.critical_sigma_w2(0.05)
    assert init.depth_scale(crit - 0.05, 0.05) > 50 and init.depth_scale(crit + 0.1, 0.05) > 30
    assert init.depth_scale(4.0, 0.05) < 10 and init.depth_scale(0.5, 0.05) < 2


def test_mean_field_bad_inputs():
    with pytest.raises(ValueError, match="sigma_w2"):
        init.q_star(-1.0, 0.05)
    with pytest.raises(ValueError, match="sigma_b2"):
        init.chi_1(1.0, -0.1)
    with pytest.raises(ValueError, match="support"):
        init.q_map(1.0, 1.0, 0.0, activation="relu")
    with pytest.raises(ValueError):
        init.measure_chi_1(1.0, 0.05, depth=5, burn=10)


# ----------------------------------------------------------------------------- measurements


def test_measured_chi1_matches_theory_and_is_deterministic():
    s = [1.0, 2.5]
    a = init.measure_chi_1(s, 0.05, width=256, depth=30, batch=32, seed=3)
    b = init.measure_chi_1(s, 0.05, width=256, depth=30, batch=32, seed=3)
    np.testing.assert_array_equal(a, b)
    theory = [init.chi_1(v, 0.05) for v in s]
    np.testing.assert_allclose(a, theory, rtol=0.05)


def test_measured_maps_sit_on_theory():
    sw2, sb2 = 1.76, 0.05
    for seq in init.measure_map_iterates(sw2, sb2, [0.1, 2.5], "q", width=512, depth=4):
        for q_in, q_out in zip(seq[:-1], seq[1:]):
            assert q_out == pytest.approx(init.q_map(q_in, sw2, sb2), rel=0.05)
    sw2 = 3.0
    for seq in init.measure_map_iterates(sw2, sb2, [0.0, 0.6], "c", width=512, depth=4):
        for c_in, c_out in zip(seq[:-1], seq[1:]):
            assert c_out == pytest.approx(init.c_map(c_in, sw2, sb2), abs=0.03)


def test_measured_depth_scale_in_the_ordered_phase():
    xi, used = init.measure_depth_scale(1.0, 0.05, width=256, depth=40, pairs=32)
    assert used >= 4
    assert xi == pytest.approx(init.depth_scale(1.0, 0.05), rel=0.15)


# ----------------------------------------------------------------------------- inits


def test_lsuv_gives_unit_variance_and_orthonormal_start():
    torch.manual_seed(0)
    x = torch.randn(256, 20)
    model = init.build_mlp(20, 64, 6, "relu", "lsuv", x=x)
    h = x
    for layer in model.hidden:
        z = layer(h).detach()
        assert float(z.var()) == pytest.approx(1.0, abs=0.1)
        h = model.act(z)
        # each weight is a rescaled orthonormal matrix: W W^T proportional to the identity
        w = layer.weight.detach()
        gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram / gram.diagonal().mean(), torch.eye(len(gram)), atol=1e-4)


def test_build_mlp_schemes_and_bad_inputs():
    torch.manual_seed(0)
    small = init.build_mlp(10, 32, 2, "tanh", "small")
    assert float(small.hidden[1].weight.detach().std()) == pytest.approx(0.01, rel=0.1)
    orth = init.build_mlp(32, 32, 2, "relu", "orthogonal")
    w = orth.hidden[1].weight.detach()
    np.testing.assert_allclose(w @ w.T, 2.0 * torch.eye(32), atol=1e-4)  # gain sqrt 2 for ReLU
    zero = init.build_mlp(10, 8, 2, "relu", "zero")
    assert all(float(p.detach().abs().sum()) == 0 for p in zero.parameters())
    with pytest.raises(ValueError, match="unknown init"):
        init.build_mlp(10, 8, 2, "relu", "kaiming")
    with pytest.raises(ValueError, match="batch"):
        init.build_mlp(10, 8, 2, "relu", "lsuv")
    with pytest.raises(ValueError):
        init.SignalConfig(depth=0)
    with pytest.raises(ValueError):
        init.SignalConfig(init="glorot")


def test_layer_statistics_shapes_and_zero_init():
    x, y = torch.randn(32, 10), torch.randint(0, 10, (32,))
    st = init.layer_statistics(init.build_mlp(10, 16, 5, "relu", "zero"), x, y)
    assert len(st["act_std"]) == len(st["grad_norm"]) == 5
    assert max(st["act_std"]) == 0 and max(st["grad_norm"]) == 0  # symmetry never breaks
    st = init.layer_statistics(init.build_mlp(10, 16, 5, "tanh", "xavier"), x, y)
    assert min(st["grad_norm"]) > 0


def test_haar_orthogonal():
    q = init.haar_orthogonal(4, 16, torch.Generator().manual_seed(0))
    np.testing.assert_allclose(q @ q.transpose(1, 2), torch.eye(16).expand(4, -1, -1), atol=1e-5)


def test_saxe_theory_and_task():
    t = np.array([0.0, 1.0, 100.0])
    y = init.saxe_theory(t, 1.0, 4, 0.01)
    assert y[0] == pytest.approx(0.01) and y[-1] == pytest.approx(1.0, abs=1e-6)
    # the logistic solves y' = 2 s y (1 - y)
    s, tt, h = 0.5, 3.0, 1e-5
    dy = (init.saxe_theory(tt + h, 1.0, 4, 0.01) - init.saxe_theory(tt - h, 1.0, 4, 0.01)) / (2 * h)
    yy = init.saxe_theory(tt, 1.0, 4, 0.01)
    assert dy == pytest.approx(2 * s * yy * (1 - yy), rel=1e-5)
    d = init.saxe_task(5, 1.0, 0.1)
    x = d.x_train.cpu()
    # one pattern per class, orthogonal, with norms sqrt(C) s_c
    gram = x @ x.T
    np.testing.assert_allclose(gram - torch.diag(gram.diagonal()), 0, atol=1e-5)
    np.testing.assert_allclose(gram.diagonal().sqrt() / math.sqrt(5), np.geomspace(1, 0.1, 5), rtol=1e-5)
    with pytest.raises(ValueError):
        init.saxe_task(1)
    with pytest.raises(ValueError):
        init.deep_linear(5, 8, 0, "orthogonal")


def test_guessing_bias_metric():
    logits = torch.zeros(10, 3)
    logits[:, 1] = 1.0
    assert init.guessing_bias(logits) == 1.0
    assert init.guessing_bias(torch.eye(4)) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        init.guessing_bias(torch.zeros(5))


def test_configs_construct_in_every_profile():
    for profile in ("smoke", "cpu", "gpu"):
        for cls in (init.SignalConfig, init.ChaosConfig, init.TrainabilityConfig,
                    init.FluctuationConfig, init.SaxeConfig, init.DepthTimeConfig,
                    init.GuessingConfig):
            cls.for_profile(profile)


def test_trainability_tiny_grid_and_figure():
    cfg = init.TrainabilityConfig.for_profile("smoke", depths=[2, 3], sigma_w2=[1.0, 2.0],
                                              steps=5, n_train=200, width=8)
    res = init.trainability(cfg, progress=False)
    acc = np.asarray(res["acc"])
    assert acc.shape == (2, 2) and np.all((acc >= 0) & (acc <= 1))
    fig = init.trainability_figure(res)
    assert len(fig.data) == 2
    with pytest.raises(ValueError):
        init.trainability(cfg.replace(depths=[]))


def test_panels_run():
    panel = init.signal_panel("smoke").set(depth=4, width=16, activation="tanh", init="lsuv")
    panel.click()
    assert panel.figure is not None and "last/first" in panel.status.value
    panel = init.saxe_panel("smoke").set(depth=3, steps=50)
    panel.click()
    assert panel.figure is not None and not panel.status.value.startswith("failed")
    panel = init.saxe_panel("smoke").set(lr=10.0, init="gaussian", depth=6, steps=50)
    panel.click()  # a diverging run is reported, not a crash
    assert "diverged" in panel.status.value or panel.status.value == "done"
    panel = init.guessing_panel("smoke").set(depth=3, width=16)
    panel.click()
    assert panel.figure is not None and "favourite" in panel.status.value


# ----------------------------------------------------------------------------- claims
SEEDS = [0, 1, 2]


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_he_keeps_relu_signal_xavier_shrinks_it(seed):
    """ReLU, depth 50: He keeps the last-layer activation std within 2x of the first layer's,
    Xavier shrinks it by more than 10x.

    The He ratio is log-normal with a spread that grows with depth / width (finite-width
    fluctuations): over 12 seeds it spanned 0.22-1.88 at width 256 (the smoke figure), 0.44-1.82
    at width 512 and 0.54-1.53 at width 1024, so the 2x claim is tested at width 1024. Xavier
    gives ~1e-8 at any width (variance halved 49 times)."""
    cfg = init.SignalConfig.for_profile("smoke", depth=50, seed=seed, n_inputs=64)
    he = init.signal_propagation(cfg.replace(width=1024), inits=("he",), activations=("relu",))
    xavier = init.signal_propagation(cfg, inits=("xavier",), activations=("relu",))
    he, xavier = init.std_ratio(he["relu"]["he"]), init.std_ratio(xavier["relu"]["xavier"])
    assert 0.5 < he < 2.0
    assert xavier < 0.1


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_measured_edge_of_chaos_matches_theory(seed):
    """tanh, sigma_b^2 = 0.05: chi_1 = 1 measured on random networks within 10% of the
    mean-field sigma_w^2 (measured over seeds 0-4: -2.2% to +3.5%)."""
    cfg = init.ChaosConfig.for_profile("smoke", seed=seed)
    measured = init.measured_critical_sigma_w2(0.05, cfg.width, cfg.depth, cfg.batch, seed)
    assert measured == pytest.approx(init.critical_sigma_w2(0.05), rel=0.10)


@lru_cache(maxsize=1)
def _depth_time():
    cfg = init.DepthTimeConfig.for_profile("smoke", depths=[2, 16], seeds=SEEDS)
    return init.learning_time_vs_depth(cfg, progress=False)


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
def test_claim_orthogonal_fluctuations_do_not_grow_with_depth():
    """Day, Kahn & Roberts: across seeds of the ensemble, Gaussian-weight fluctuations grow
    linearly in depth (slope ~2/3), orthogonal ones do not."""
    for seed in SEEDS:
        res = init.run_fluctuations(init.FluctuationConfig.for_profile("smoke", seed=seed))
        assert 0.4 < res["gaussian_slope"] < 1.0
        assert abs(res["orthogonal_slope"]) < 0.02
        assert res["gaussian"][-1] > 10 * max(res["orthogonal"][-5:])


@pytest.mark.claim
def test_claim_relu_guessing_bias_grows_with_depth():
    res = init.run_guessing_bias(init.GuessingConfig.for_profile("smoke", n_nets=8))
    relu = np.mean(res["relu"], 1)
    tanh = np.mean(res["tanh"], 1)
    assert relu[-1] > 0.6 and relu[-1] > relu[0] + 0.2
    assert relu[-1] > tanh[-1] + 0.3
