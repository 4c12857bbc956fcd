"""Tests of dynamics.grokking: the science functions against known values and numpy, bad
inputs, and the chapter's claims in the smoke profile on seeds 0-4."""
import functools
import math

import numpy as np
import pytest
import torch

from dynamics import grokking as G
from dynamics import models as M
from dynamics import results

SEEDS = [0, 1, 2, 3, 4]


# ----------------------------------------------------------------------------- Fourier measures


def test_fourier_spectrum_parseval_and_numpy():
    torch.manual_seed(0)
    w = torch.randn(2, 13, 5)
    energy = G.fourier_spectrum(w)
    assert energy.shape == (7,)
    # Parseval: the folded energies add up to p * ||W||^2
    assert torch.isclose(energy.sum(), 13 * w.pow(2).sum(), rtol=1e-5)
    full = (np.abs(np.fft.fft(w.numpy(), axis=1)) ** 2).sum(axis=(0, 2))  # [p]
    folded = np.array([full[0]] + [full[k] + full[13 - k] for k in range(1, 7)])
    np.testing.assert_allclose(energy.numpy(), folded, rtol=1e-5)
    units = G.fourier_spectrum(w, per_unit=True)
    assert units.shape == (7, 5)
    assert torch.allclose(units.sum(1), energy, rtol=1e-5)


def test_fourier_spectrum_of_a_pure_frequency():
    p, k = 17, 3
    a = torch.arange(p, dtype=torch.float32)
    w = torch.stack([torch.cos(2 * math.pi * k * a / p), torch.sin(2 * math.pi * k * a / p)], 1)
    energy = G.fourier_spectrum(w[None])
    assert int(energy.argmax()) == k
    assert float(energy[k] / energy.sum()) > 0.999
    assert float(G.spectral_concentration(energy)) > 0.999


def test_spectral_concentration_flat_and_bad_inputs():
    flat = torch.ones(20)
    assert math.isclose(float(G.spectral_concentration(flat, 0.1)), 0.1, rel_tol=1e-6)
    assert math.isclose(float(G.spectral_concentration(torch.ones(16), 0.1)), 2 / 16, rel_tol=1e-6)
    # per unit: each unit's own top frequency counts
    units = torch.eye(10)  # unit j reads only frequency j: perfectly concentrated
    assert math.isclose(float(G.spectral_concentration(units, 0.1)), 1.0, rel_tol=1e-6)
    assert math.isclose(float(G.spectral_concentration(units.sum(1), 0.1)), 0.1, rel_tol=1e-6)
    with pytest.raises(ValueError):
        G.spectral_concentration(flat, 0.0)
    with pytest.raises(ValueError):
        G.spectral_concentration(torch.ones(2, 2, 2))
    with pytest.raises(ValueError):
        G.fourier_spectrum(torch.ones(5, 3))


def test_input_weights_of_both_models():
    mlp = M.MLP(2 * 7, 16, 2, 7)
    w = G.input_weights(mlp, 7)
    assert w.shape == (2, 7, 16)
    assert torch.equal(w[1, 3], mlp.hidden[0].weight[:, 7 + 3])  # the b half, residue 3
    tr = M.Transformer1L(7, d_model=16, n_heads=4, d_mlp=32)
    assert G.input_weights(tr, 7).shape == (1, 7, 16)
    with pytest.raises(ValueError):
        G.input_weights(mlp, 5)
    with pytest.raises(ValueError):
        G.input_weights(torch.nn.Linear(3, 3), 3)


def test_sum_basis_is_orthonormal_and_checks_inputs():
    q = G.sum_basis(11, [1, 2, 5])
    assert q.shape == (121, 6)
    assert torch.allclose(q.T @ q, torch.eye(6), atol=1e-5)
    with pytest.raises(ValueError):
        G.sum_basis(11, [6])
    with pytest.raises(ValueError):
        G.sum_basis(11, [1], op="mul")


def _fourier_logits(p, keys, scale=8.0):
    """Logits of the Fourier algorithm: Σ_k cos(2πk(a + b - c)/p)."""
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    s = (a + b).reshape(-1, 1).float()
    c = torch.arange(p).float()[None]
    return scale * sum(torch.cos(2 * math.pi * k * (s - c) / p) for k in keys)


def test_key_frequencies_and_fourier_losses_on_the_ideal_algorithm():
    p = 13
    logits = _fourier_logits(p, [2, 5])
    assert G.key_frequencies(logits, p) == [2, 5]
    labels = ((torch.arange(p)[:, None] + torch.arange(p)[None]) % p).reshape(-1)
    index = torch.arange(p * p)
    full = torch.nn.functional.cross_entropy(logits, labels)
    restricted, excluded = G.fourier_losses(logits, labels, index, [2, 5], p)
    assert torch.isclose(restricted, full, atol=1e-4)  # the algorithm is all key frequencies
    assert torch.isclose(excluded, torch.tensor(math.log(p)), atol=1e-4)  # nothing left: chance
    # memorization noise lives outside the key frequencies: excluded loss sees it
    torch.manual_seed(0)
    noisy = logits + 3 * torch.randn_like(logits)
    r2, e2 = G.fourier_losses(noisy, labels, index, [2, 5], p)
    assert float(r2) < float(e2)


# ----------------------------------------------------------------------------- remedies


def test_grokfast_matches_the_reference_formula():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    hook = G.GrokfastEMA(alpha=0.9, lamb=2.0)
    ema = None
    for step in range(1, 4):
        g = {n: torch.randn_like(p) for n, p in model.named_parameters()}
        for n, p in model.named_parameters():
            p.grad = g[n].clone()
        hook(model, step)
        ema = {n: g[n].clone() for n in g} if ema is None else {n: 0.9 * ema[n] + 0.1 * g[n] for n in g}
        for n, p in model.named_parameters():
            assert torch.allclose(p.grad, g[n] + 2.0 * ema[n], atol=1e-6)
    with pytest.raises(ValueError):
        G.GrokfastEMA(alpha=1.0)


def test_orthogonal_grad_removes_the_radial_component_and_keeps_the_norm():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    grads = {}
    for n, p in model.named_parameters():
        p.grad = torch.randn_like(p) + 0.5 * p.detach()  # a sizeable component along w
        grads[n] = p.grad.clone()
    G.orthogonal_grad_(model, 1)
    for n, p in model.named_parameters():
        assert abs(float((p.grad * p.detach()).sum())) < 1e-5
        assert math.isclose(float(p.grad.norm()), float(grads[n].norm()), rel_tol=1e-5)


def test_stablemax_values_and_loss():
    x = torch.tensor([[2.0, 0.0, -1.0]])
    s = torch.tensor([3.0, 1.0, 0.5])
    assert torch.allclose(G.stablemax(x), s / s.sum())
    y = torch.tensor([0])
    assert torch.isclose(G.stablemax_cross_entropy(x, y), -torch.log(s[0] / s.sum()))
    big = torch.tensor([[80.0, -80.0, 0.0]], requires_grad=True)
    loss = G.stablemax_cross_entropy(big, torch.tensor([0]))
    loss.backward()
    assert torch.isfinite(big.grad).all() and loss.item() > 0  # no collapse to exactly 0
    assert float(torch.nn.functional.cross_entropy(big.detach(), torch.tensor([0]))) == 0.0


def test_corrupt_labels_fraction_and_always_wrong():
    y = torch.arange(200) % 11
    noisy, bad = G.corrupt_labels(y, 0.25, 11, seed=3)
    assert int(bad.sum()) == 50
    assert bool((noisy[bad] != y[bad]).all()) and bool((noisy[~bad] == y[~bad]).all())
    again, _ = G.corrupt_labels(y, 0.25, 11, seed=3)
    assert torch.equal(noisy, again)
    with pytest.raises(ValueError):
        G.corrupt_labels(y, 1.0, 11)


# ----------------------------------------------------------------------------- configs, data, runs


def test_config_validation_and_presets():
    with pytest.raises(ValueError):
        G.GrokConfig(p=2)
    with pytest.raises(ValueError):
        G.GrokConfig(train_frac=1.5)
    with pytest.raises(ValueError):
        G.GrokConfig(remedy="magic")
    with pytest.raises(ValueError):
        G.make_data(G.GrokConfig(p=12, op="div"))
    gpu = G.GrokConfig.for_profile("gpu")
    assert (gpu.model, gpu.p, gpu.train_frac, gpu.lr, gpu.beta2) == ("transformer", 113, 0.3, 1e-3, 0.98)
    model = G.make_model(gpu)
    assert isinstance(model, M.Transformer1L)
    assert G.input_weights(model, 113).shape == (1, 113, 128)
    assert G.pair_logits(model, 113).shape == (113 * 113, 113)
    assert G.PhaseConfig.for_profile("gpu").base("gpu").model == "transformer"
    with pytest.raises(ValueError):
        G.make_model(G.GrokConfig(model="transformer", width=30))


def test_pairs_and_split_masks():
    cfg = G.GrokConfig(p=11, train_frac=0.4)
    data = G.make_data(cfg, seed=2)
    idx = G.pair_index(data.x_train, 11)
    a, b = idx // 11, idx % 11
    assert torch.equal(data.y_train, (a + b) % 11)
    x = G.all_pairs(11, onehot=True)
    assert torch.equal(G.pair_index(x, 11), torch.arange(121))
    pool, index = G.pair_pool(cfg)
    mask = G.split_mask(cfg, index, 0.4, seed=2)
    assert int(mask.sum()) == len(data.x_train)
    assert set(index[mask].tolist()) == set(idx.tolist())
    with pytest.raises(ValueError):
        G.pair_index(torch.zeros(3, 5), 11)


def test_phase_of():
    assert G.phase_of(None, None) == "confusion"
    assert G.phase_of(40, None) == "memorization"
    assert G.phase_of(40, 400) == "grokking"
    assert G.phase_of(40, 80) == "comprehension"


def test_run_is_deterministic_and_records_measures():
    cfg = G.GrokConfig.for_profile("smoke", p=11, width=16, steps=30, n_evals=10)
    h1 = G.run(cfg, seed=1).history
    h2 = G.run(cfg, seed=1).history
    assert h1.steps == h2.steps
    np.testing.assert_array_equal(h1["test_loss"], h2["test_loss"])
    assert {"weight_norm", "fourier_top10"} <= set(h1.metrics)
    kept = G.run(cfg, seed=1, checkpoints=True)
    assert [s for s, _ in kept.checkpoints] == kept.history.steps
    noisy = G.run(cfg.replace(label_noise=0.2, remedy="grokfast"), seed=0).history
    assert {"memorized", "corrected"} <= set(noisy.metrics)


def test_phase_diagram_matches_single_runs():
    cfg = G.GrokConfig.for_profile("smoke", p=11, width=16, steps=40, n_evals=10)
    out = G.phase_diagram(cfg, [0.5, 0.8], [0.0, 1.0], seeds=[0])
    assert len(out["rows"]) == 4 and all(r["phase"] in G.PHASES for r in out["rows"])
    for (c, h) in out["sweep"]:
        single = G.run(cfg.replace(train_frac=c["train_frac"], weight_decay=c["weight_decay"]),
                       seed=c["seed"]).history
        assert h.steps == single.steps
        np.testing.assert_allclose(h["train_loss"], single["train_loss"], rtol=2e-3, atol=1e-5)
        np.testing.assert_allclose(h["test_acc"], single["test_acc"], atol=2e-3)
    with pytest.raises(ValueError):
        G.phase_diagram(cfg.replace(remedy="grokfast"), [0.5], [1.0])


def test_speedups_and_figures_build():
    rows = [dict(name="baseline", grok_step=400), dict(name="perp_grad", grok_step=100),
            dict(name="no_wd", grok_step=None)]
    speed = G.speedups(rows, budget=1000)
    assert speed["perp_grad"]["speedup"] == 4.0 and speed["no_wd"]["grokked"] == 0
    fig = G.remedies_figure(speed)
    assert list(fig.data[0].text) == ["4.00x", "no grok"]


def test_panel_runs_and_survives_bad_values():
    panel = G.panel("smoke")
    panel.set(p=11, width=16, train_frac=0.5)
    fig = panel.click()
    assert fig is not None and panel.runs == 1
    assert panel.status.value.startswith("fit at step")
    panel.set(op="div", p=12)
    panel.click()
    assert panel.status.value.startswith("invalid")
    panel.set(op="add", p=11, lr=1.0, weight_decay=10.0)
    panel.click()  # an extreme learning rate: reported, not raised
    assert not panel.button.disabled
    progress = G.progress_panel("smoke").set(p=11, train_frac=0.5)
    assert progress.click() is not None and progress.status.value.startswith("fit at step")
    progress.set(op="mul")
    progress.click()  # no Fourier measures for mul: a clear message, the panel survives
    assert progress.status.value.startswith("invalid")
    phase = G.phase_panel("smoke").set(p=7, width=8, steps=100)
    assert phase.click() is not None and phase.status.value.startswith("done")
    assert set(G.remedy_panel("smoke").controls) == {"remedy", "weight_decay", "grokfast_alpha",
                                                     "grokfast_lambda", "label_noise", "optimizer"}


def test_precomputed_phase_diagram_is_consistent():
    payload, prov = results.load("grokking_phase")
    assert prov["profile"] in ("cpu", "gpu") and prov["command"].startswith("python -m dynamics.precompute")
    rows = payload["rows"]
    assert {r["phase"] for r in rows} >= {"grokking", "memorization"}
    for r in rows:
        assert r["phase"] == G.phase_of(r["fit_step"], r["grok_step"])
    fig = G.phase_figure(rows, budget=payload["steps"])
    assert len(fig.data) == 1
    assert len(G.phase_slider(payload["sweep"]).layout.sliders[0].steps) > 3


# ----------------------------------------------------------------------------- claims (smoke, seeds 0-4)


@functools.cache
def _claim_runs(seed: int):
    cfg = G.GrokConfig.for_profile("smoke")
    base = G.run(cfg, seed)
    control = G.run(cfg.replace(weight_decay=0.0), seed, data=base.data)
    perp = G.run(G.remedy_configs(cfg)["perp_grad"], seed, data=base.data, stop_at_grok=True)
    return base, control, perp


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_grokking_delay(seed):
    h = _claim_runs(seed)[0].history
    fit, grok = G.fit_and_grok(h)
    assert fit is not None and h.last("train_acc") > 0.99
    assert grok is not None and h.last("test_acc") > 0.95
    assert grok >= 5 * fit
    half = h.first_step("test_acc", above=0.5)  # below 50% test accuracy for a while after fitting
    assert half >= 3 * fit


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_no_weight_decay_no_grokking(seed):
    base, control, _ = _claim_runs(seed)
    assert control.fit_step is not None  # it memorizes...
    assert control.grok_step is None     # ...but does not generalize in the same budget
    assert control.history.last("test_acc") < base.history.last("test_acc") - 0.5


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_fourier_sparse_after_grokking_not_at_fit(seed):
    h = _claim_runs(seed)[0].history
    fit = G.fit_and_grok(h)[0]
    conc = h["fourier_top10"]
    at_fit = conc[h.steps.index(fit)]
    assert at_fit < 0.5 < conc[-1]


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_claim_remedy_halves_steps_to_grok(seed):
    base, _, perp = _claim_runs(seed)
    assert perp.grok_step is not None and base.grok_step is not None
    assert perp.grok_step * 2 <= base.grok_step
