"""dynamics.schedules.science: the schedules at known steps, the exact expected risk against its
one-mode closed form and against a large simulation, the averaging steps against
torch.optim.swa_utils, the theory's exponent and bad input."""
import math

import numpy as np
import pytest
import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from known import known_answer

from dynamics.schedules import experiments as E
from dynamics.schedules import science as S


@known_answer(S.schedule, how="each schedule's value at steps where it is known by hand: a "
                              "cosine is half its peak halfway and 0 at its horizon, 1/sqrt(t) "
                              "is lr/2 at t = 3 t0, a linear cooldown is halfway down at its middle")
def test_schedules_at_known_steps():
    lr = 0.8
    assert np.all(S.schedule("constant", 10, lr) == lr)
    s = S.schedule("inv_sqrt", 100, lr, t0=10)
    assert s[0] == pytest.approx(lr) and s[30] == pytest.approx(lr / 2)
    p = S.schedule("poly", 100, lr, gamma=1.0, t0=5)
    assert p[45] == pytest.approx(lr / 10)
    c = S.schedule("cosine", 120, lr, horizon=100)
    assert c[0] == pytest.approx(lr) and c[50] == pytest.approx(lr / 2)
    assert c[100] == 0 and c[119] == 0 and np.all(np.diff(c[:101]) <= 0)
    w = S.schedule("wsd", 120, lr, horizon=100, cooldown=0.2)
    assert np.all(w[:80] == lr) and w[90] == pytest.approx(lr / 2) and w[100] == 0
    q = S.schedule("wsd", 120, lr, horizon=100, cooldown=0.2, shape="sqrt")
    assert q[85] == pytest.approx(lr * (1 - math.sqrt(0.25))) and q[90] < w[90]
    u = S.schedule("constant", 10, lr, warmup=4)
    assert u[:5] == pytest.approx([0.2, 0.4, 0.6, 0.8, 0.8])


@pytest.mark.parametrize("kwargs, name", [
    (dict(kind="cosine", steps=10, lr=1.0), "horizon"),
    (dict(kind="linear", steps=10, lr=1.0), "kind"),
    (dict(kind="constant", steps=0, lr=1.0), "steps"),
    (dict(kind="constant", steps=10, lr=-1.0), "lr"),
    (dict(kind="wsd", steps=10, lr=1.0, horizon=10, cooldown=0.0), "cooldown"),
    (dict(kind="wsd", steps=10, lr=1.0, horizon=10, shape="cos"), "shape"),
    (dict(kind="poly", steps=10, lr=1.0, gamma=3.0), "gamma"),
])
def test_a_bad_schedule_names_its_setting(kwargs, name):
    kind = kwargs.pop("kind")
    with pytest.raises(ValueError, match=name):
        S.schedule(kind, **kwargs)


@known_answer(S.expected_risk, how="one mode (d = 1): c' = c (1 - 2 eta lam + 3 eta^2 lam^2) + "
                                   "eta^2 lam sigma^2 (the Gaussian fourth moment 3), a geometric "
                                   "series in closed form; with sigma = 0 and eta = 1/lam in the "
                                   "noiseless limit the risk is known per step")
def test_expected_risk_on_one_mode_in_closed_form():
    lam, w, sigma, eta, T = 0.7, 1.3, 0.4, 0.3, 40
    r = 1 - 2 * eta * lam + 3 * eta ** 2 * lam ** 2
    fixed = eta ** 2 * lam * sigma ** 2 / (1 - r)
    closed = lambda t: lam * ((w ** 2 - fixed) * r ** t + fixed)
    out = S.expected_risk([lam], [w], sigma, np.full((1, T), eta), [10, 20, 40])
    assert out["last"][0] == pytest.approx([closed(10), closed(20), closed(40)], rel=1e-12)
    # the average of a noiseless single mode's iterates: E[e_s e_t] = (1 - eta lam)^(t-s) c(s)
    out = S.expected_risk([lam], [w], 0.0, np.full((1, T), eta), [4])
    c = [w ** 2 * r ** t for t in range(5)]
    pair = sum(c[min(s, t)] * (1 - eta * lam) ** abs(t - s) for s in (3, 4) for t in (3, 4))
    assert out["tail"][0, 0] == pytest.approx(lam * pair / 4, rel=1e-12)


@known_answer(S.expected_risk, E.simulate,
              how="the exact expected risk against the mean of 4000 independent simulated runs "
                  "in float64 (several modes, a decaying and a constant schedule): equal within "
                  "five standard errors of the simulation")
def test_the_simulation_matches_the_exact_expected_risk():
    lam, ws = S.spectrum(6, 2.0, 3.0)
    etas = np.stack([S.schedule("constant", 32, 0.5 / lam.sum()),
                     S.schedule("inv_sqrt", 32, 0.8 / lam.sum(), t0=2)])
    hs = [8, 16, 32]
    exact = S.expected_risk(lam, ws, 0.5, etas, hs)
    sim = E.simulate(lam, ws, 0.5, etas, hs, replicas=4000, seed=0, dtype=torch.float64)
    for k in ("last", "tail"):
        mean, se = sim[k].mean(1), sim[k].std(1, ddof=1) / math.sqrt(4000)
        assert np.all(np.abs(mean - exact[k]) < 5 * se), (k, mean, exact[k], se)
    # and it can tell: the same simulation against the risk of a wrong noise level
    wrong = S.expected_risk(lam, ws, 0.8, etas, hs)
    assert np.any(np.abs(sim["tail"].mean(1) - wrong["tail"]) > 5 * sim["tail"].std(1) / math.sqrt(4000))


def test_the_simulation_is_seeded_and_batched():
    lam, ws = S.spectrum(4, 2.0, 3.0)
    etas = np.stack([S.schedule("constant", 8, 0.3)] * 2)
    a = E.simulate(lam, ws, 0.1, etas, [4, 8], replicas=3, seed=5)
    b = E.simulate(lam, ws, 0.1, etas, [4, 8], replicas=3, seed=5)
    assert a["last"].shape == (2, 3, 2) and np.array_equal(a["tail"], b["tail"])
    with pytest.raises(ValueError, match="replicas"):
        E.simulate(lam, ws, 0.1, etas, [4, 8], replicas=0, seed=5)
    with pytest.raises(ValueError, match="horizon"):
        E.simulate(lam, ws, 0.1, etas, [4, 16], replicas=2, seed=5)


@known_answer(S.uniform_average_step, S.ema_step,
              how="the same sequence of weights fed to torch.optim.swa_utils.AveragedModel (its "
                  "default equal-weight average, and get_ema_multi_avg_fn(0.9)): the same averages")
def test_averaging_steps_match_swa_utils():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    swa = AveragedModel(model)
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    flat = lambda m: torch.cat([p.detach().flatten() for p in m.parameters()])
    for n in range(5):   # AveragedModel's first update copies the weights: n = 0 averaged
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        swa.update_parameters(model)
        ema.update_parameters(model)
        if n == 0:
            avg, e = flat(model).clone(), flat(model).clone()
        else:
            avg = S.uniform_average_step(avg, flat(model), n)
            e = S.ema_step(e, flat(model), 0.9)
    assert torch.allclose(flat(swa.module), avg, atol=1e-6)
    assert torch.allclose(flat(ema.module), e, atol=1e-6)
    assert not torch.allclose(avg, e, atol=1e-3)   # the two averages differ: the test can tell
    with pytest.raises(ValueError, match="decay"):
        S.ema_step(avg, avg, 1.0)


@known_answer(S.theory_exponent, S.spectrum,
              how="gamma* = 1 - capacity/source by hand (2 and 4: 1/2; 1.5 and 5: 0.7; 0 for a "
                  "hard target); the spectrum's per-mode signal lam_i w_i^2 is i^(-source)")
def test_theory_exponent_and_spectrum():
    assert S.theory_exponent(2.0, 4.0) == pytest.approx(0.5)
    assert S.theory_exponent(1.5, 5.0) == pytest.approx(0.7)
    assert S.theory_exponent(2.0, 2.0) == 0 and S.theory_exponent(3.0, 1.5) == 0
    lam, w = S.spectrum(5, 2.0, 3.0)
    i = np.arange(1, 6)
    assert lam == pytest.approx(i ** -2.0) and lam * w ** 2 == pytest.approx(i ** -3.0)
    with pytest.raises(ValueError, match="capacity"):
        S.theory_exponent(1.0, 2.0)
    with pytest.raises(ValueError, match="d must"):
        S.spectrum(0, 2.0, 3.0)


@known_answer(S.tail_windows, how="horizons 8 and 16 average iterates 5..8 and 9..16: the "
                                  "second half of each run, by hand")
def test_tail_windows():
    assert S.tail_windows([8, 16]) == [(4, 8), (8, 16)]
    with pytest.raises(ValueError, match="horizons"):
        S.tail_windows([16, 8])


def test_config_refuses_a_bad_setting():
    with pytest.raises(ValueError, match="capacity"):
        S.PowerLawConfig(capacity=0.5)
    assert S.PowerLawConfig.for_profile("smoke").horizons()[-1] == 128 * 16


@known_answer(S.decay_product, S.decay_clock,
              how="a constant rate by hand: (1 - eta lam)^t and lam eta t; a rate that is 0 "
                  "for half the steps stops both (the product holds, the clock stands still); "
                  "exp(-clock) within eta lam of the product's log per step")
def test_decay_product_and_clock_by_hand():
    eta, lam = 0.1, 0.5
    p = S.decay_product(np.full(20, eta), lam)
    assert p.shape == (21,) and p[0] == 1
    np.testing.assert_allclose(p, (1 - eta * lam) ** np.arange(21), rtol=1e-12)
    np.testing.assert_allclose(S.decay_clock(np.full(20, eta), lam), eta * lam * np.arange(21))
    half = np.r_[np.full(10, eta), np.zeros(10)]
    assert S.decay_product(half, lam)[-1] == pytest.approx((1 - eta * lam) ** 10)
    assert S.decay_clock(half, lam)[-1] == pytest.approx(10 * eta * lam)
    # a cooldown of k steps holds fewer time constants than k constant steps
    cool = S.schedule("wsd", 100, 0.1, horizon=100, cooldown=0.5)
    assert S.decay_clock(cool, lam)[-1] < S.decay_clock(np.full(100, 0.1), lam)[-1] * 0.8
    log_p = -np.log(S.decay_product(cool, lam))
    assert np.all(np.abs(log_p - S.decay_clock(cool, lam)) <= 100 * (0.1 * lam) ** 2)


@known_answer(S.expected_memory,
              how="no data (every eigenvalue 0): the memory is the decay product; one mode with "
                  "no decay: prod (1 - eta_t lam_1) by hand; two modes: the delta^2-weighted mean "
                  "of the two modes' products")
def test_expected_memory_by_hand():
    etas = S.schedule("wsd", 50, 0.2, horizon=50, cooldown=0.4)
    np.testing.assert_allclose(S.expected_memory(np.zeros(3), np.ones(3), etas, 0.3),
                               S.decay_product(etas, 0.3), rtol=1e-12)
    np.testing.assert_allclose(S.expected_memory([0.5], [2.0], etas, 0.0),
                               np.r_[1, np.cumprod(1 - 0.5 * etas)], rtol=1e-12)
    two = S.expected_memory([0.5, 0.0], [1.0, 2.0], etas, 0.1)
    a = np.r_[1, np.cumprod(1 - 0.6 * etas)]
    b = np.r_[1, np.cumprod(1 - 0.1 * etas)]
    np.testing.assert_allclose(two, (a + 4 * b) / 5, rtol=1e-12)


def test_clock_bad_input_names_the_setting():
    with pytest.raises(ValueError, match="weight_decay"):
        S.decay_product([0.1], -1.0)
    with pytest.raises(ValueError, match="below 1"):
        S.decay_clock([0.5], 3.0)
    with pytest.raises(ValueError, match="etas"):
        S.decay_product([], 0.1)
    with pytest.raises(ValueError, match="delta"):
        S.expected_memory([1.0], [0.0], [0.1], 0.1)
    with pytest.raises(ValueError, match="lam"):
        S.expected_memory([-1.0], [1.0], [0.1], 0.1)
