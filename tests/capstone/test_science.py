"""dynamics.capstone.science: the glue between the chapters' measures, on small cases whose
answers are known."""
import math

import numpy as np
import pytest
import torch

from dynamics import models as M
from dynamics.capstone import science as S


def test_presets_and_the_grokking_config():
    smoke, gpu = S.OneConfig.for_profile("smoke"), S.OneConfig.for_profile("gpu")
    assert smoke.model == "mlp" and gpu.model == "transformer"
    g = smoke.grok()
    assert (g.p, g.train_frac, g.width, g.lr, g.weight_decay, g.steps) == (
        smoke.p, smoke.train_frac, smoke.width, smoke.lr, smoke.weight_decay, smoke.steps)
    with pytest.raises(ValueError):
        S.OneConfig(init_scale=-1.0)


def test_scale_init_multiplies_every_parameter_and_refuses_bad_scales():
    torch.manual_seed(0)
    m = M.MLP(10, 8, 2, 5)
    before = [p.detach().clone() for p in m.parameters()]
    S.scale_init_(m, 3.0)
    assert all(torch.allclose(p, 3 * b) for p, b in zip(m.parameters(), before))
    for bad in (0.0, -2.0, float("nan"), "2"):
        with pytest.raises(ValueError, match="init_scale"):
            S.scale_init_(m, bad)


def test_normalized_rank_is_one_when_flat_and_one_over_n_for_rank_one():
    assert S.normalized_rank(torch.eye(8)) == pytest.approx(1.0)
    u = torch.randn(8, 1)
    assert S.normalized_rank(u @ u.T) == pytest.approx(1 / 8, rel=1e-3)
    assert math.isnan(S.normalized_rank(torch.zeros(4, 4)))


def test_hidden_matrix_of_both_models_and_a_clear_error_otherwise():
    assert S.hidden_matrix(M.MLP(10, 8, 2, 5)).shape == (8, 8)
    assert S.hidden_matrix(M.Transformer1L(7, d_model=8, n_heads=2, d_mlp=16)).shape == (16, 8)
    with pytest.raises(ValueError, match="no hidden matrix"):
        S.hidden_matrix(torch.nn.Linear(3, 3))


def test_measure_reads_every_chapter_and_sees_collapsed_features():
    """Features that are exactly their class means: NC1 is 0; a head built from the simplex
    ETF puts the means at ETF distance 0."""
    p = 5
    m = M.MLP(2 * p, 8, 2, p)
    x = torch.eye(2 * p)[:p].repeat(4, 1)
    y = torch.arange(p).repeat(4)
    out = S.measure(m, x, y, p)
    assert set(out) == {"weight_rms", "nc1", "etf_distance", "weight_rank", "fourier"}
    assert out["nc1"] == pytest.approx(0.0, abs=1e-6)  # one input per class: no spread
    assert 0 < out["weight_rms"] and 0 < out["weight_rank"] <= 1 and 0 < out["fourier"] <= 1


def test_update_probe_keeps_the_rank_of_the_chosen_steps_only():
    m = M.MLP(6, 4, 2, 3)
    probe = S.UpdateProbe(m, [2])
    w = S.hidden_matrix(m)
    for step in (1, 2, 3):
        probe.before_step(m, step)
        with torch.no_grad():
            w.add_(torch.eye(4))  # an update with a flat spectrum
        probe.after_step(m, step)
    assert list(probe.rank) == [2] and probe.rank[2] == pytest.approx(1.0)


def test_settle_step_is_the_clock_for_an_exponential_relaxation():
    """A squared RMS that relaxes by exp(-2t/τ) from its peak closes all but e^-2 of its gap
    after τ steps: settle_step reads τ back."""
    tau, steps = 100, np.arange(0, 1001, 5)
    eq, peak = 0.3, 0.9
    rise = np.minimum(steps / 50, 1.0)  # grows to the peak first (memorization)
    decay = np.sqrt(eq ** 2 + (peak ** 2 - eq ** 2) * np.exp(-2 * np.maximum(steps - 50, 0) / tau))
    rms = np.where(steps < 50, 0.1 + (peak - 0.1) * rise, decay)
    assert abs(S.settle_step(steps, rms) - (50 + tau)) <= 5
    assert S.settle_step(steps, np.full(len(steps), 0.3)) is None  # nothing to relax
    assert S.settle_step(steps[:3], rms[:3]) is None


def test_falls_step():
    steps, nc1 = [0, 10, 20, 30, 40], [5.0, 4.0, 3.0, 1.9, 1.0]
    assert S.falls_step(steps, nc1, 10) == 30
    assert S.falls_step(steps, nc1, 40) is None
    assert S.falls_step(steps, nc1, None) is None and S.falls_step(steps, nc1, 15) is None
