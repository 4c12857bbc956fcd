"""dynamics.grokking.science: the measures against known values and numpy, the remedies against
their reference formulas, the phase labels against their definition, and bad inputs (that it
imports no plotting is tested for every theme in tests/toolchain/test_book.py)."""
import math

import numpy as np
import pytest
import torch

from dynamics import models as M
from dynamics.grokking import science as S
from dynamics.train import History
from known import known_answer


# ----------------------------------------------------------------------------- the module


# ----------------------------------------------------------------------------- Fourier measures


@known_answer(S.fourier_spectrum,
              how="numpy's FFT folded by hand (|F_k|² + |F_{p-k}|²) and Parseval's identity: the "
                  "energies add up to p·‖W‖², odd and even p")
def test_fourier_spectrum_parseval_and_numpy():
    torch.manual_seed(0)
    w = torch.randn(2, 13, 5)
    energy = S.fourier_spectrum(w)
    assert energy.shape == (7,)
    # Parseval: the folded energies add up to p * ||W||^2
    assert torch.isclose(energy.sum(), 13 * w.pow(2).sum(), rtol=1e-5)
    full = (np.abs(np.fft.fft(w.numpy(), axis=1)) ** 2).sum(axis=(0, 2))  # [p]
    folded = np.array([full[0]] + [full[k] + full[13 - k] for k in range(1, 7)])
    np.testing.assert_allclose(energy.numpy(), folded, rtol=1e-5)
    units = S.fourier_spectrum(w, per_unit=True)
    assert units.shape == (7, 5)
    assert torch.allclose(units.sum(1), energy, rtol=1e-5)
    even = torch.randn(1, 12, 3)  # even p: k = p/2 stands alone, Parseval still holds
    assert torch.isclose(S.fourier_spectrum(even).sum(), 12 * even.pow(2).sum(), rtol=1e-5)


@known_answer(S.fourier_spectrum, S.spectral_concentration,
              how="a pure cosine/sine pair of frequency k has all its energy at k (closed form), "
                  "so its top tenth holds all of it")
def test_fourier_spectrum_of_a_pure_frequency():
    p, k = 17, 3
    a = torch.arange(p, dtype=torch.float32)
    w = torch.stack([torch.cos(2 * math.pi * k * a / p), torch.sin(2 * math.pi * k * a / p)], 1)
    energy = S.fourier_spectrum(w[None])
    assert int(energy.argmax()) == k
    assert float(energy[k] / energy.sum()) > 0.999
    assert float(S.spectral_concentration(energy)) > 0.999


@known_answer(S.spectral_concentration,
              how="a flat spectrum of K frequencies: the top ceil(K/10) hold exactly that share; "
                  "units each on one frequency: exactly 1, their sum flat again")
def test_spectral_concentration_flat_and_bad_inputs():
    flat = torch.ones(20)
    assert math.isclose(float(S.spectral_concentration(flat, 0.1)), 0.1, rel_tol=1e-6)
    assert math.isclose(float(S.spectral_concentration(torch.ones(16), 0.1)), 2 / 16, rel_tol=1e-6)
    units = torch.eye(10)  # unit j reads only frequency j: perfectly concentrated per unit
    assert math.isclose(float(S.spectral_concentration(units, 0.1)), 1.0, rel_tol=1e-6)
    assert math.isclose(float(S.spectral_concentration(units.sum(1), 0.1)), 0.1, rel_tol=1e-6)
    with pytest.raises(ValueError):
        S.spectral_concentration(flat, 0.0)
    with pytest.raises(ValueError):
        S.spectral_concentration(torch.ones(2, 2, 2))
    with pytest.raises(ValueError):
        S.fourier_spectrum(torch.ones(5, 3))


def test_input_weights_of_both_models():
    mlp = M.MLP(2 * 7, 16, 2, 7)
    w = S.input_weights(mlp, 7)
    assert w.shape == (2, 7, 16)
    assert torch.equal(w[1, 3], mlp.hidden[0].weight[:, 7 + 3])  # the b half, residue 3
    tr = M.Transformer1L(7, d_model=16, n_heads=4, d_mlp=32)
    assert S.input_weights(tr, 7).shape == (1, 7, 16)
    with pytest.raises(ValueError):
        S.input_weights(mlp, 5)
    with pytest.raises(ValueError):
        S.input_weights(torch.nn.Linear(3, 3), 3)


@known_answer(S.sum_basis,
              how="cos and sin of distinct frequencies of a ± b are orthogonal over the p² pairs "
                  "and to constants (closed form): Qᵀ Q is the identity")
def test_sum_basis_is_orthonormal_and_checks_inputs():
    q = S.sum_basis(11, [1, 2, 5])
    assert q.shape == (121, 6)
    assert torch.allclose(q.T @ q, torch.eye(6), atol=1e-5)
    assert torch.allclose(q.sum(0), torch.zeros(6), atol=1e-4)  # orthogonal to constants
    with pytest.raises(ValueError):
        S.sum_basis(11, [6])
    with pytest.raises(ValueError):
        S.sum_basis(11, [1], op="mul")


def _fourier_logits(p, keys, weights=None, scale=8.0):
    """Logits of the Fourier algorithm: Σ_k w_k cos(2πk(a + b - c)/p)."""
    weights = weights or [1.0] * len(keys)
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    s = (a + b).reshape(-1, 1).float()
    c = torch.arange(p).float()[None]
    return scale * sum(w * torch.cos(2 * math.pi * k * (s - c) / p) for k, w in zip(keys, weights))


@known_answer(S.key_frequencies,
              how="logits built from three frequencies with energy shares 0.6, 0.3, 0.1: the "
                  "fewest holding 50%, 90%, 95% are one, two, three of them; a flat spectrum of "
                  "18 needs ceil(0.9 x 18) = 17")
def test_key_frequencies_hold_the_stated_share_with_no_cap():
    p = 37
    # energies proportional to the squared weights: 0.6, 0.3, 0.1 of the total
    logits = _fourier_logits(p, [2, 5, 7], weights=[math.sqrt(0.6), math.sqrt(0.3), math.sqrt(0.1)])
    assert S.key_frequencies(logits, p, share=0.5) == [2]
    assert S.key_frequencies(logits, p, share=0.9) == [2, 5]
    assert S.key_frequencies(logits, p, share=0.95) == [2, 5, 7]
    # energy spread evenly over all 18 frequencies: 90% needs ceil(0.9 * 18) = 17 of them,
    # more than the old cap of 8
    spread = _fourier_logits(p, list(range(1, 19)))
    keys = S.key_frequencies(spread, p)
    assert len(keys) == math.ceil(S.KEY_SHARE * 18) == 17
    energy = S.logit_frequencies(spread, p)
    held = float(energy[[k - 1 for k in keys]].sum() / energy.sum())
    assert held >= S.KEY_SHARE - 1e-6
    with pytest.raises(ValueError):
        S.key_frequencies(logits, p, share=0.0)


@known_answer(S.key_frequencies, S.fourier_losses,
              how="the ideal Fourier algorithm's logits: its two frequencies are the keys, the "
                  "restricted loss is the full loss and the excluded loss is chance, ln p")
def test_key_frequencies_and_fourier_losses_on_the_ideal_algorithm():
    p = 13
    logits = _fourier_logits(p, [2, 5])
    assert S.key_frequencies(logits, p) == [2, 5]
    labels = ((torch.arange(p)[:, None] + torch.arange(p)[None]) % p).reshape(-1)
    index = torch.arange(p * p)
    full = torch.nn.functional.cross_entropy(logits, labels)
    restricted, excluded = S.fourier_losses(logits, labels, index, [2, 5], p)
    assert torch.isclose(restricted, full, atol=1e-4)  # the algorithm is all key frequencies
    assert torch.isclose(excluded, torch.tensor(math.log(p)), atol=1e-4)  # nothing left: chance
    torch.manual_seed(0)  # memorization noise lives outside the key frequencies
    noisy = logits + 3 * torch.randn_like(logits)
    r2, e2 = S.fourier_losses(noisy, labels, index, [2, 5], p)
    assert float(r2) < float(e2)


def test_projecting_mlp_logits_equals_projecting_its_last_activations():
    """The docstring's claim for the MLP: the logits are a linear map of the last hidden layer,
    so the projection commutes with it (up to the constant bias, which it removes)."""
    p = 11
    torch.manual_seed(0)
    mlp = M.MLP(2 * p, 16, 2, p)
    x = S.all_pairs(p, onehot=True)
    with torch.no_grad():
        h = mlp.features(x)
        logits = mlp(x)
    q = S.sum_basis(p, [1, 3])
    via_logits = q @ (q.T @ logits)
    via_acts = (q @ (q.T @ h)) @ mlp.head.weight.T
    assert torch.allclose(via_logits, via_acts, atol=1e-4)


@known_answer(S.logit_frequencies,
              how="logits Σ_k w_k cos(2πk(a + b - c)/p) have energy w_k² p³ / 2 at each k and "
                  "none elsewhere (closed form: a cos/sin of a + b has squared norm p²/2 over "
                  "the pairs, and cos² + sin² over the classes sums to p)")
def test_logit_frequencies_in_closed_form():
    p = 13
    weights = [1.0, 0.5]
    energy = S.logit_frequencies(_fourier_logits(p, [2, 5], weights=weights, scale=1.0), p)
    want = torch.zeros((p - 1) // 2, dtype=torch.float64)
    want[1], want[4] = weights[0] ** 2 * p ** 3 / 2, weights[1] ** 2 * p ** 3 / 2
    assert torch.allclose(energy.double(), want, atol=1e-2)
    # a logit that depends on a alone has no component along a + b: no energy at any k
    a = torch.arange(p).repeat_interleave(p).float()
    assert float(S.logit_frequencies(torch.cos(2 * math.pi * 3 * a / p)[:, None].repeat(1, p),
                                     p).abs().max()) < 1e-3


@known_answer(S.fourier_losses,
              how="logits on a frequency that is not a key: the restricted logits are each "
                  "class's mean, 0 for a cosine, so the restricted loss is chance, ln p, and the "
                  "excluded loss is the full loss (nothing removed)")
def test_fourier_losses_on_logits_off_the_keys():
    p = 13
    logits = _fourier_logits(p, [4])
    labels = ((torch.arange(p)[:, None] + torch.arange(p)[None]) % p).reshape(-1)
    index = torch.arange(0, p * p, 2)
    restricted, excluded = S.fourier_losses(logits, labels, index, [2, 5], p)
    full = torch.nn.functional.cross_entropy(logits[index], labels[index])
    assert float(restricted) == pytest.approx(math.log(p), abs=1e-4)
    assert float(excluded) == pytest.approx(float(full), abs=1e-4)


@known_answer(S.weight_norm,
              how="parameters set by hand: a 3x4 weight of 2s and a bias of 1s have norm "
                  "sqrt(12 x 4 + 3) = sqrt(51)")
def test_weight_norm_by_hand():
    m = torch.nn.Linear(4, 3)
    with torch.no_grad():
        m.weight.fill_(2.0)
        m.bias.fill_(1.0)
    assert float(S.weight_norm(m)) == pytest.approx(math.sqrt(51), rel=1e-6)


@known_answer(S.model_concentration,
              how="an MLP whose first layer reads one residue per unit (a lookup table): the "
                  "spectrum of a delta is flat, 1 at k = 0 and 2 at each folded k, so at p = 21 "
                  "the top 2 of 11 frequencies hold 4/21; units each on one frequency: 1")
def test_model_concentration_of_a_table_and_of_a_clock():
    p, width = 21, 16
    m = M.MLP(2 * p, width, 2, p)
    with torch.no_grad():
        w = torch.zeros(width, 2 * p)
        for j in range(width):
            w[j, j % p] = 1.0
            w[j, p + (3 * j) % p] = 1.0
        m.hidden[0].weight.copy_(w)
    assert float(S.model_concentration(m, p)) == pytest.approx(4 / 21, rel=1e-5)
    a = torch.arange(p, dtype=torch.float32)
    with torch.no_grad():
        for j in range(width):
            k = 1 + j % 10
            w[j, :p] = torch.cos(2 * math.pi * k * a / p + j)
            w[j, p:] = torch.cos(2 * math.pi * k * a / p + 2 * j)
        m.hidden[0].weight.copy_(w)
    assert float(S.model_concentration(m, p)) == pytest.approx(1.0, abs=1e-5)


# ----------------------------------------------------------------------------- remedies


def test_grokfast_matches_the_reference_formula():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    hook = S.GrokfastEMA(alpha=0.9, lamb=2.0)
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
        S.GrokfastEMA(alpha=1.0)


def test_orthogonal_grad_removes_the_radial_component_and_keeps_the_norm():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    grads = {}
    for n, p in model.named_parameters():
        p.grad = torch.randn_like(p) + 0.5 * p.detach()  # a sizeable component along w
        grads[n] = p.grad.clone()
    S.orthogonal_grad_(model, 1)
    for n, p in model.named_parameters():
        assert abs(float((p.grad * p.detach()).sum())) < 1e-5
        assert math.isclose(float(p.grad.norm()), float(grads[n].norm()), rel_tol=1e-5)


@known_answer(S.stablemax, S.stablemax_cross_entropy,
              how="s(x) = x + 1 and 1/(1 - x) by hand at 2, 0, -1; its cross-entropy is "
                  "-log of that share")
def test_stablemax_values_and_loss():
    x = torch.tensor([[2.0, 0.0, -1.0]])
    s = torch.tensor([3.0, 1.0, 0.5])
    assert torch.allclose(S.stablemax(x), s / s.sum())
    y = torch.tensor([0])
    assert torch.isclose(S.stablemax_cross_entropy(x, y), -torch.log(s[0] / s.sum()))
    big = torch.tensor([[80.0, -80.0, 0.0]], requires_grad=True)
    loss = S.stablemax_cross_entropy(big, torch.tensor([0]))
    loss.backward()
    assert torch.isfinite(big.grad).all() and loss.item() > 0  # no collapse to exactly 0
    assert float(torch.nn.functional.cross_entropy(big.detach(), torch.tensor([0]))) == 0.0


def test_loss_and_hook_per_remedy():
    cfg = S.GrokConfig.for_profile("smoke")
    assert S.loss_and_hook(cfg) == ("cross_entropy", None)
    assert isinstance(S.loss_and_hook(cfg.replace(remedy="grokfast"))[1], S.GrokfastEMA)
    assert S.loss_and_hook(cfg.replace(remedy="perp_grad"))[1] is S.orthogonal_grad_
    assert S.loss_and_hook(cfg.replace(remedy="stablemax"))[0] is S.stablemax_cross_entropy


def test_corrupt_labels_fraction_and_always_wrong():
    y = torch.arange(200) % 11
    noisy, bad = S.corrupt_labels(y, 0.25, 11, seed=3)
    assert int(bad.sum()) == 50
    assert bool((noisy[bad] != y[bad]).all()) and bool((noisy[~bad] == y[~bad]).all())
    again, _ = S.corrupt_labels(y, 0.25, 11, seed=3)
    assert torch.equal(noisy, again)
    with pytest.raises(ValueError):
        S.corrupt_labels(y, 1.0, 11)


# ----------------------------------------------------------------------------- configs, recipe


def test_config_validation_and_presets():
    with pytest.raises(ValueError):
        S.GrokConfig(p=2)
    with pytest.raises(ValueError):
        S.GrokConfig(train_frac=1.5)
    with pytest.raises(ValueError):
        S.GrokConfig(remedy="magic")
    with pytest.raises(ValueError):
        S.make_data(S.GrokConfig(p=12, op="div"))
    # the gpu profile trains the cpu recipe live (a reader's T4 runs the chapter in minutes);
    # Nanda et al.'s transformer is its precomputed phase diagram's model
    assert S.GrokConfig.for_profile("gpu") == S.GrokConfig.for_profile("cpu")
    assert S.CorruptConfig.for_profile("gpu") == S.CorruptConfig.for_profile("cpu")
    assert S.PhaseConfig.for_profile("gpu").model == "transformer"
    gpu = S.GrokConfig(model="transformer", p=113, train_frac=0.3, lr=1e-3, steps=25_000)
    model = S.make_model(gpu)
    assert isinstance(model, M.Transformer1L)
    assert S.input_weights(model, 113).shape == (1, 113, 128)
    assert S.pair_logits(model, 113).shape == (113 * 113, 113)
    with pytest.raises(ValueError):
        S.make_model(S.GrokConfig(model="transformer", width=30))


def _betas(opt):
    opts = getattr(opt, "optimizers", [opt])
    return {tuple(g["betas"]) for o in opts for g in o.param_groups if "betas" in g}


def test_one_optimizer_recipe_per_model_whatever_the_profile():
    """β₂ belongs to the model: the transformer's 0.98, the MLP's 0.999, in every profile
    (the live phase grid on a GPU trains the MLP: it must not get the transformer's β₂)."""
    for profile in ("smoke", "cpu", "gpu"):
        for model in ("mlp", "transformer"):
            cfg = S.GrokConfig.for_profile(profile, model=model, width=16, p=7)
            opt = S.optimizer_for(cfg, S.make_model(cfg))
            assert _betas(opt) == {S.ADAM_BETAS[model]}
        base = S.PhaseConfig.for_profile(profile).base()
        assert base.model == S.PhaseConfig.for_profile(profile).model
    assert S.ADAM_BETAS == {"mlp": (0.9, 0.999), "transformer": (0.9, 0.98)}
    mlp_on_gpu = S.PhaseConfig.for_profile("cpu").base()  # what the gpu notebook trains live
    assert _betas(S.optimizer_for(mlp_on_gpu, S.make_model(mlp_on_gpu))) == {(0.9, 0.999)}
    muon = S.GrokConfig.for_profile("smoke", optimizer="muon", p=7, width=16)
    assert _betas(S.optimizer_for(muon, S.make_model(muon))) == {(0.9, 0.999)}


def test_pairs_and_indices():
    cfg = S.GrokConfig(p=11, train_frac=0.4)
    data = S.make_data(cfg, seed=2)
    idx = S.pair_index(data.x_train, 11)
    a, b = idx // 11, idx % 11
    assert torch.equal(data.y_train, (a + b) % 11)
    assert torch.equal(S.pair_index(S.all_pairs(11, onehot=True), 11), torch.arange(121))
    assert torch.equal(S.pair_index(S.all_pairs(11, onehot=False), 11), torch.arange(121))
    with pytest.raises(ValueError):
        S.pair_index(torch.zeros(3, 5), 11)


# ----------------------------------------------------------------------------- phases


def _history(train, test, steps=None):
    h = History()
    for i, (a, b) in enumerate(zip(train, test)):
        h.append(steps[i] if steps else 10 * i, train_acc=a, test_acc=b, train_loss=1.0, test_loss=1.0)
    return h


# Synthetic curves of every kind, on a budget of 1,000 steps evaluated every 50 (21 evaluations;
# the last CLIMB_SPAN = 20% of the run holds 4 of them): each label's answer is known from the
# curve's shape, independently of the code.
STEPS = list(range(0, 1001, 50))
FITS = [0.0, 0.6] + [1.0] * 19                                    # fits at step 100


def _ramp(t0, t1, lo=0.0, hi=1.0):
    """An accuracy at ``lo`` until step t0, linear to ``hi`` at t1, flat after."""
    return [lo + (hi - lo) * min(max((t - t0) / (t1 - t0), 0.0), 1.0) for t in STEPS]


CURVES = {  # name: (train accuracy, test accuracy, the label the curve's shape calls for)
    "comprehension": (FITS, _ramp(0, 200), "comprehension"),      # grok 200 < 5 x fit 100
    "grokking": (FITS, _ramp(500, 700), "grokking"),              # grok ~690 >= 5 x 100
    "memorization": (FITS, [0.02 + 0.004 * (i % 2) for i in range(21)], "memorization"),
    "confusion": (_ramp(0, 300, hi=0.6), _ramp(0, 300, hi=0.1), "confusion"),
    # fits; test accuracy saturating towards 97%, at 93% and still rising (by ~4 points over
    # the last fifth) when the budget ends: the precomputed grid's cell f = 0.5, wd = 1
    "climbing": (FITS, [0.97 * (1 - math.exp(-t / 300)) for t in STEPS], "unfinished"),
    # climbing fast through its last evaluations: the median of the last three lags the last
    # one by more than UNLEARN_DROP, which is not falling back
    "climbing fast": (FITS, _ramp(700, 1000, hi=0.8), "unfinished"),
    "train still climbing": (_ramp(0, 1500, hi=1.0), _ramp(0, 1500, hi=0.3), "unfinished"),
    # rose to 60% and fell back to 10% without ever generalizing
    "rose and fell": (FITS, [min(t / 500, 1) * 0.6 - max(t - 500, 0) / 500 * 0.5
                             for t in STEPS], "un-learning"),
    # generalized, then lost it
    "generalized and fell": (FITS, [min(t / 300, 1) - max(t - 600, 0) / 400 * 0.4
                                    for t in STEPS], "un-learning"),
    "train rose and fell": (_ramp(0, 300, hi=0.98)[:12] + [0.7] * 9, [0.0] * 21, "un-learning"),
    # a slow drift up near chance that stopped at step 700: flat over the last fifth
    "drifted near chance, then stopped": (FITS, _ramp(0, 700, hi=0.06), "memorization"),
    # ... and the same drift still going when the budget ends (1.2 points over the last fifth,
    # less than CLIMB, but rising at every evaluation): still climbing
    "drifting up near chance": (FITS, _ramp(0, 1000, hi=0.06), "unfinished"),
    # a creep towards the ceiling: 82.8% + 0.01 points a step, 92.8% at the end, 2 points
    # (< CLIMB) over the last fifth, rising at every evaluation: still climbing (the
    # precomputed grid's f = 0.5, wd = 1, seed 2, which the gain rule alone called memorization)
    "creeping to the ceiling": (FITS, [0.828 + 1e-4 * t for t in STEPS], "unfinished"),
    # a late rise: a logistic test accuracy whose midpoint (step 1,350) lies past the budget.
    # Over the last fifth it goes 0.25% -> 1.8%, a gain of 1.5 points (< CLIMB), never
    # falling and rising at its last evaluation: still climbing (the precomputed grid's
    # f = 0.4, wd = 1, seed 0)
    "late rise": (FITS, [1 / (1 + math.exp(-(t - 1350) / 100)) for t in STEPS], "unfinished"),
    # a test accuracy that doubles below chance (0.1% -> 0.3%: a pair or two): stopped short
    "doubling below chance": (FITS, [0.001] * 16 + [0.002, 0.003, 0.003, 0.003, 0.003],
                              "memorization"),
}
P = 97  # the modulus of the synthetic curves: chance 1/P ~ 1.0%


@known_answer(S.phase_of, S.still_climbing, S.fell_back, S.fit_and_grok, S.end_accuracy,
              how="synthetic accuracy curves of every kind (comprehension, grokking, "
                  "memorization, confusion, a test or train curve still climbing at the budget, "
                  "curves that rose and fell), each label known from the curve's shape")
@pytest.mark.parametrize("name", list(CURVES))
def test_phase_of_on_synthetic_curves_of_every_kind(name):
    train, test, want = CURVES[name]
    h = _history(train, test, STEPS)
    assert S.phase_of(h, p=P) == want, (name, S.fit_and_grok(h))


@known_answer(S.still_climbing, S.phase_of,
              how="a logistic test accuracy whose midpoint lies past the budget: 0.25% -> 1.8% "
                  "over the last fifth, less than CLIMB in points, never falling")
def test_a_late_rise_is_still_climbing():
    train, test, _ = CURVES["late rise"]
    h = _history(train, test, STEPS)
    logistic = lambda t: 1 / (1 + math.exp(-(t - 1350) / 100))  # noqa: E731
    end, earlier = logistic(950), logistic(750)  # the medians of the last three / up to 800
    assert S.end_accuracy(h, "test") == pytest.approx(end)
    assert end - earlier < S.CLIMB
    assert S.still_climbing(h, "test", p=P)
    # the gain rule alone (no modulus given) misses it: what the grid's labels did before
    assert not S.still_climbing(h, "test") and S.phase_of(h) == "memorization"


EXP_STEPS = list(range(0, 1501, 30))
EXP_FITS = [0.0] + [1.0] * (len(EXP_STEPS) - 1)  # fits at step 30


@known_answer(S.still_climbing, S.phase_of,
              how="the referee's curve: fit at step 30, test accuracy 0.05% x e^(t/400), ending "
                  "at 2.1% (below chance 1/37) and still rising; its stalled, wobbling and "
                  "one-pair variants, and a flat noisy curve at chance, each label known from "
                  "the shape")
def test_a_rise_below_chance_is_still_climbing():
    rise = [0.0005 * math.exp(t / 400) for t in EXP_STEPS]
    assert rise[-1] == pytest.approx(0.021, abs=5e-4) and rise[-1] < 1 / 37
    assert S.phase_of(_history(EXP_FITS, rise, EXP_STEPS), p=37) == "unfinished"
    # the same curve stalled over its last six evaluations: it stopped rising
    stalled = rise[:-6] + [rise[-7]] * 6
    assert S.phase_of(_history(EXP_FITS, stalled, EXP_STEPS), p=37) == "memorization"
    # ... or wobbling on its way up (it falls once in the last fifth)
    wobble = rise[:-4] + [rise[-4], rise[-6], rise[-2], rise[-1]]
    assert not S.still_climbing(_history(EXP_FITS, wobble, EXP_STEPS), "test", p=37)
    # a doubling of one or two pairs (of 37^2): less than RISE_PAIRS pairs' worth
    pairs = [0.0] * (len(EXP_STEPS) - 6) + [k / 37 ** 2 for k in (1, 1, 2, 2, 3, 4)]
    assert not S.still_climbing(_history(EXP_FITS, pairs, EXP_STEPS), "test", p=37)
    assert S.still_climbing(_history(EXP_FITS, [10 * a for a in pairs], EXP_STEPS), "test",
                            p=37)  # ten times as many pairs: it rose
    # a flat noisy curve at chance: up and down by a few pairs, never a steady rise
    noisy = [1 / 37 + (3 * ((7 * i) % 5 - 2)) / 37 ** 2 for i in range(len(EXP_STEPS))]
    assert S.phase_of(_history(EXP_FITS, noisy, EXP_STEPS), p=37) == "memorization"


@known_answer(S.still_climbing, S.phase_of,
              how="the referee's cell (seed 2 at 50% and weight decay 1 of the precomputed grid): "
                  "fit, test accuracy 89.8%, 90.2%, then over the last fifth 90.5%, 91.2%, 91.4%, "
                  "92.1%, 92.4%, 92.6%, 92.8%: from the median 90.2% to the end's 92.6%, 2.4 "
                  "points (< CLIMB), rising at every evaluation: still climbing; the same curve "
                  "flat over its last three evaluations has stopped")
def test_a_creep_near_the_ceiling_is_still_climbing():
    tail = [0.898, 0.902, 0.905, 0.912, 0.914, 0.921, 0.924, 0.926, 0.928]
    steps = list(range(0, 3000 + 1, 100))  # 31 evaluations: the last fifth from step 2,400
    test = [0.8 * i / 22 for i in range(len(steps) - len(tail))] + tail  # 0% to 80% first
    h = _history([1.0] * len(steps), test, steps)
    assert S.end_accuracy(h, "test") == pytest.approx(0.926)
    assert 0.926 - 0.902 < S.CLIMB  # the gain rule alone misses it
    assert not S.still_climbing(h, "test")  # (without p the steady-rise rule is off)
    assert S.still_climbing(h, "test", p=37) and S.phase_of(h, p=37) == "unfinished"
    stalled = test[:-3] + [0.921] * 3
    assert S.phase_of(_history([1.0] * len(steps), stalled, steps), p=37) == "memorization"


@known_answer(S.still_climbing, S.fell_back, S.end_accuracy, S.fit_and_grok,
              how="hand-computed medians, first crossings and last-fifth gains of small curves")
def test_the_rules_under_the_labels_by_hand():
    h = _history(FITS, _ramp(100, 1060, hi=0.98), STEPS)
    # first crossings: train 1.0 > FIT_ACC at step 100; the test ramp never passes GROK_ACC
    assert S.fit_and_grok(h) == (100, None)
    # the end: the median of steps 900, 950 and 1000 on the ramp, its value at 950
    ramp = lambda t: 0.98 * (t - 100) / 960  # noqa: E731
    assert S.end_accuracy(h, "test") == pytest.approx(ramp(950), abs=1e-6)
    # 20% earlier (step <= 800: the median of 700, 750, 800): gain = ramp(950) - ramp(750)
    gain = ramp(950) - ramp(750)
    assert gain == pytest.approx(0.204, abs=1e-3) and S.still_climbing(h, "test")
    assert not S.still_climbing(h, "train")  # flat at 1
    # a gain just under / over CLIMB
    flat = lambda g: _ramp(0, 1000, lo=0.5, hi=0.5 + g * 1000 / 200)  # noqa: E731  (g per 20%)
    assert not S.still_climbing(_history(FITS, flat(S.CLIMB * 0.8), STEPS), "test")
    assert S.still_climbing(_history(FITS, flat(S.CLIMB * 1.2), STEPS), "test")
    # too few evaluations to tell
    assert not S.still_climbing(_history([1, 1, 1], [0, .5, 1], [0, 1, 2]), "test")
    # fell back: the best before the last three evaluations against the end
    assert S.fell_back(_history(FITS, [0, .5, .9, .9, .8, .8, .8], STEPS[:7]), "test")
    assert not S.fell_back(_history(FITS, [0, .5, .9, .9, .87, .87, .87], STEPS[:7]), "test")
    # a test accuracy that only drifts down from chance did not rise: not un-learning
    assert not S.fell_back(_history(FITS, [.14, .1, .05, 0, 0, 0, 0], STEPS[:7]), "test")
    assert S.phase_of(_history(FITS, [.14, .1, .05, 0, 0, 0, 0], STEPS[:7])) == "memorization"


def test_phase_of_edge_cases():
    steps = [0, 10, 20, 40, 80, 160, 320, 640]
    # fits and generalizes early (first crossings say comprehension), then loses both
    unlearn = _history([0, .5, 1, 1, .9, .8, .8, .8], [0, .3, .97, .98, .9, .8, .79, .79], steps)
    assert S.fit_and_grok(unlearn) == (20, 20)
    assert S.phase_of(unlearn) == "un-learning"
    # a small dip at the end (within UNLEARN_DROP) keeps the label
    dip = _history([0, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, .2, .6, .97, .98, .94], steps)
    assert S.phase_of(dip) == "grokking"
    assert S.phase_of(History()) == "not run"
    div = _history([0, .5], [0, 0], [0, 10])
    div.diverged_at = 15
    assert S.phase_of(div) == "diverged"
    assert set(S.PHASES) == {"comprehension", "grokking", "memorization", "confusion",
                             "unfinished", "un-learning"}
    # every label phase_of gives is in PHASES
    assert {S.phase_of(_history(tr, te, STEPS), p=P)
            for tr, te, _ in CURVES.values()} <= set(S.PHASES)


@known_answer(S.plateau_steps,
              how="a synthetic grokking curve (fit at step 100; test accuracy 0 until 500, "
                  "linear to 1 at 700, evaluated every 50): it leaves chance at 550, passes 50% "
                  "at 650 and 95% at 700, a plateau of 5.5 fit steps")
def test_plateau_steps_on_a_synthetic_grokking_curve():
    train, test, _ = CURVES["grokking"]
    got = S.plateau_steps(_history(train, test, STEPS), p=97)
    assert got == S.PlateauSteps(fit=100, leave=550, half=650, grok=700, plateau=5.5)
    never = S.plateau_steps(_history(FITS, [0.0] * 21, STEPS), p=97)
    assert never == S.PlateauSteps(fit=100, leave=None, half=None, grok=None, plateau=None)
    # a record (grokking.records), read by field: a renamed field is refused, by name
    renamed = {**{k: v for k, v in got.to_dict().items() if k != "leave"}, "leaves": 550}
    with pytest.raises(ValueError, match="no field leave.*unknown field leaves"):
        S.PlateauSteps.of(renamed)


@known_answer(S.critical_fraction,
              how="a made-up grid whose generalizing cells at weight decay 1 start at fraction "
                  "0.4 (and at 0.3 under another decay, which must not count)")
def test_critical_fraction_on_a_made_up_grid():
    from dynamics.grokking.experiments import PhaseRow

    unset = dict.fromkeys(PhaseRow.__dataclass_fields__)
    del unset["stopped"]
    rows = [PhaseRow(**dict(unset, train_frac=f, weight_decay=wd, phase=ph)) for f, wd, ph in (
        (0.2, 1.0, "memorization"), (0.3, 1.0, "unfinished"), (0.4, 1.0, "grokking"),
        (0.5, 1.0, "comprehension"), (0.3, 3.0, "grokking"), (0.2, 3.0, "memorization"),
        (0.6, 1.0, "un-learning"))]
    assert S.critical_fraction(rows, 1.0) == 0.4
    assert S.critical_fraction(rows, 3.0) == 0.3
    assert S.critical_fraction(rows, 1.2) == 0.4  # the nearest decay in the grid
    assert S.critical_fraction([r for r in rows if r.phase == "memorization"]) is None
    assert S.critical_fraction([]) is None
