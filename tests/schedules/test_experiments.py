"""dynamics.schedules sections 2-4: the stacked trainer against PyTorch's own AdamW and
schedulefree's optimizer on one model at a time, a cooldown branched from a constant run, the
averages' windows, the book's schedule-free step against the package, and bad input."""
import numpy as np
import pytest
import schedulefree
import torch

from known import known_answer

from dynamics.data import gaussian_mixture
from dynamics.models import MLP
from dynamics.schedules import experiments as E
from dynamics.schedules import science as S


@pytest.fixture(scope="module")
def data():
    return gaussian_mixture(n_train=96, n_test=48, dim=12, seed=3, device="cpu")


def _batches(seed, n, batch, steps):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(n, (batch,), generator=g) for _ in range(steps)]


def _one(data, seed, width, make_opt, etas, batch, eval_fn=None):
    """One MLP trained the plain way: torch's optimizer, the trainer's batches."""
    torch.manual_seed(seed)
    model = MLP(data.input_dim, width, depth=2)
    opt = make_opt(model.parameters())
    for t, idx in enumerate(_batches(seed, len(data.x_train), batch, len(etas))):
        for gr in opt.param_groups:
            gr["lr"] = float(etas[t])
        loss = torch.nn.functional.cross_entropy(model(data.x_train[idx]), data.y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    if eval_fn:
        eval_fn(opt)
    return model


def test_stacked_forward_is_each_models_forward(data):
    params, forward = E.stacked_mlp([0, 5], data.input_dim, 8, "cpu")
    out = forward(list(params.values()), data.x_test)
    for k, s in enumerate([0, 5]):
        torch.manual_seed(s)
        ref = MLP(data.input_dim, 8, depth=2)(data.x_test)
        assert torch.allclose(out[k], ref, atol=1e-6)


def test_stacked_adamw_is_torch_adamw_per_model_and_rate(data):
    etas = np.stack([S.schedule("constant", 30, 0.01),
                     S.schedule("wsd", 30, 0.02, horizon=30, cooldown=0.5, shape="sqrt")])
    r = E.train_stacked(data, etas, [1, 2], width=8, batch=16, eval_steps=[30],
                        weight_decay=0.1, device="cpu")
    for k, s in enumerate([1, 2]):
        ref = _one(data, s, 8, lambda p: torch.optim.AdamW(p, weight_decay=0.1), etas[k], 16)
        for name, p in ref.named_parameters():
            assert torch.allclose(r["params"][name][k], p.detach(), atol=1e-5), name


def test_a_branched_cooldown_is_the_constant_run_until_it_starts(data):
    cfg = S.CooldownConfig(steps=40, n_budgets=2, cooldown=0.5, width=8, batch=16, n_evals=4,
                           ema_window=5)
    kinds = E.cooldown_schedules(cfg)
    names = list(kinds)
    start = E.cooldown_start(cfg, 40)
    assert start == 21 and kinds["linear@40"][start - 1] == cfg.lr > kinds["linear@40"][start]
    r = E.train_stacked(data, np.stack(list(kinds.values())), [4] * len(names), width=8,
                        batch=16, eval_steps=[start, 40], device="cpu")
    i, j = names.index("constant"), names.index("linear@40")
    assert r["train_loss"][i, 0] == pytest.approx(r["train_loss"][j, 0], abs=1e-6)
    assert r["train_loss"][i, 1] != pytest.approx(r["train_loss"][j, 1], abs=1e-4)
    # after its budget a run is frozen: rate 0, AdamW moves nothing
    assert np.all(kinds["cosine@20"][20:] == 0)


def test_tail_average_is_the_mean_of_the_iterates_in_its_window(data):
    etas = np.full((1, 12), 0.05)
    kw = dict(width=8, batch=16, device="cpu")
    r = E.train_stacked(data, etas, [7], eval_steps=[12], averages={
        "two": ([0], "tail", (10, 12)), "ema": ([0], "ema", 0.5)}, **kw)
    w11 = E.train_stacked(data, etas[:, :11], [7], eval_steps=[11], **kw)["params"]
    w12 = r["params"]
    mean = [(w11[n] + w12[n]) / 2 for n in w12]
    _, forward = E.stacked_mlp([7], data.input_dim, 8, "cpu")
    loss, _ = E._losses(forward, mean, data.x_test, data.y_test)
    assert r["averages"]["two"]["test_loss"][0, 0] == pytest.approx(float(loss[0]), rel=1e-5)
    assert r["averages"]["ema"]["steps"] == [12]


@known_answer(S.schedule_free_step, S.schedule_free_init,
              how="the same gradients fed to schedulefree.AdamWScheduleFree (1.4.1, the "
                  "authors' package): its parameters in train mode are the book's y and in "
                  "eval mode its x, step by step, with warmup and weight decay")
def test_book_schedule_free_step_is_the_package_on_the_same_gradients():
    torch.manual_seed(0)
    w0 = torch.randn(9, dtype=torch.float64)
    p = torch.nn.Parameter(w0.clone())
    opt = schedulefree.AdamWScheduleFree([p], lr=0.05, warmup_steps=5, weight_decay=0.1,
                                         betas=(0.8, 0.99))
    opt.train()
    st = S.schedule_free_init(w0)
    assert torch.equal(st["x"], w0) and torch.equal(st["y"], w0)
    for _ in range(25):
        g = torch.randn(9, dtype=torch.float64)
        p.grad = g.clone()
        opt.step()
        st = S.schedule_free_step(st, g, lr=0.05, warmup_steps=5, weight_decay=0.1,
                                  betas=(0.8, 0.99))
        assert torch.allclose(p.detach(), st["y"], atol=1e-12)
        opt.eval()
        assert torch.allclose(p.detach(), st["x"], atol=1e-12)
        opt.train()
    # the average's weights are the warmed-up rate squared: (k/5)^2 for k = 1..5, then 1 (x lr^2)
    assert st["weight_sum"] / 0.05 ** 2 == pytest.approx(sum(k * k for k in range(1, 6)) / 25 + 20)


def test_stacked_schedule_free_is_the_package_on_each_model(data):
    r = E.train_stacked(data, np.full((2, 20), 0.01), [1, 2], width=8, batch=16,
                        eval_steps=[10, 20], optimizer="schedulefree", warmup_steps=4,
                        weight_decay=0.05, device="cpu")
    for k, s in enumerate([1, 2]):
        ref = _one(data, s, 8, lambda p: _sf(p), np.full(20, 0.01), 16,
                   eval_fn=lambda opt: opt.eval())
        for name, p in ref.named_parameters():
            assert torch.allclose(r["params"][name][k], p.detach(), atol=1e-5), name


def _sf(params):
    opt = schedulefree.AdamWScheduleFree(params, lr=0.01, warmup_steps=4, weight_decay=0.05)
    opt.train()
    return opt


def test_bad_input_names_the_setting(data):
    etas = np.full((2, 5), 0.01)
    with pytest.raises(ValueError, match="one seed per schedule row"):
        E.train_stacked(data, etas, [0], width=4, batch=4, eval_steps=[5])
    with pytest.raises(ValueError, match="batch"):
        E.train_stacked(data, etas, [0, 1], width=4, batch=0, eval_steps=[5])
    with pytest.raises(ValueError, match="eval_steps"):
        E.train_stacked(data, etas, [0, 1], width=4, batch=4, eval_steps=[6])
    with pytest.raises(ValueError, match="window"):
        E.train_stacked(data, etas, [0, 1], width=4, batch=4, eval_steps=[5],
                        averages={"x": ([0], "tail", (4, 9))})
    with pytest.raises(ValueError, match="schedulefree"):
        E.train_stacked(data, np.array([[0.1, 0.2]]), [0], width=4, batch=4, eval_steps=[2],
                        optimizer="schedulefree")
    with pytest.raises(ValueError, match="lr"):
        S.schedule_free_step(S.schedule_free_init(torch.zeros(2)), torch.zeros(2), lr=0.0)
    with pytest.raises(ValueError, match="betas"):
        S.schedule_free_step(S.schedule_free_init(torch.zeros(2)), torch.zeros(2), lr=0.1,
                             betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="cooldown"):
        S.CooldownConfig(cooldown=0.0)


@known_answer(E.simulate_twins, S.decay_product,
              how="zero gradients (every eigenvalue 0, so x = 0): the twins' difference is "
                  "exactly the decay product times the start, for a constant rate and a WSD")
def test_twins_without_data_remember_the_decay_product():
    d, T = 6, 40
    kinds = np.stack([S.schedule("constant", T, 0.3),
                      S.schedule("wsd", T, 0.3, horizon=T, cooldown=0.5)])
    delta = np.linspace(-1, 2, d)
    mem = E.simulate_twins(np.zeros(d), np.ones(d), 0.5, kinds, 0.4, delta, 3, seed=0,
                           eval_steps=range(T + 1), dtype=torch.float64, device="cpu")
    for i, row in enumerate(kinds):
        np.testing.assert_allclose(mem[i], np.tile(S.decay_product(row, 0.4), (3, 1)),
                                   rtol=1e-12)


@known_answer(E.simulate_twins, S.expected_memory,
              how="the exact expected memory against the mean of 2000 simulated twin pairs "
                  "in float64 (several modes, decay, a WSD): equal within five standard errors")
def test_twins_match_the_expected_memory():
    lam, ws = S.spectrum(8, 2.0, 3.0)
    T = 60
    etas = S.schedule("wsd", T, 0.4, horizon=T, cooldown=0.5)
    delta = np.random.default_rng(1).standard_normal(8)
    mem = E.simulate_twins(lam, ws, 0.5, etas, 0.05, delta, 2000, seed=2,
                           eval_steps=[20, 40, 60], dtype=torch.float64, device="cpu")[0]
    want = S.expected_memory(lam, delta, etas, 0.05)[[20, 40, 60]]
    se = mem.std(0, ddof=1) / np.sqrt(mem.shape[0])
    assert np.all(np.abs(mem.mean(0) - want) < 5 * se + 1e-12), (mem.mean(0), want, se)
    # the step count is not the clock: the WSD remembers more than the constant rate
    const = S.expected_memory(lam, delta, np.full(T, 0.4), 0.05)[60]
    assert mem.mean(0)[-1] > 1.1 * const


def test_adamw_with_zero_gradients_is_the_decay_product():
    """The stacked trainer's AdamW (dynamics.sweep.batched_step) on zero gradients: each
    model's weights are prod (1 - eta_t lambda) times its start, whatever its schedule."""
    from dynamics.sweep import batched_step, init_state

    T, wd = 30, 0.5
    etas = np.stack([S.schedule("constant", T, 0.1),
                     S.schedule("wsd", T, 0.1, horizon=T, cooldown=0.5)])
    p0 = [torch.randn(2, 4, 3, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)]
    params, state = [p.clone() for p in p0], init_state("adamw", p0)
    lr = torch.as_tensor(etas)
    for t in range(1, T + 1):
        params, state = batched_step("adamw", params, [torch.zeros_like(p) for p in params],
                                     state, t, lr[:, t - 1], torch.full((2,), wd,
                                                                        dtype=torch.float64))
    for k in range(2):
        prod = S.decay_product(etas[k], wd)[-1]
        for p, q in zip(params, p0):
            torch.testing.assert_close(p[k], prod * q[k], rtol=1e-10, atol=1e-12)


def test_twins_bad_input():
    with pytest.raises(ValueError, match="replicas"):
        E.simulate_twins([1.0], [1.0], 0.1, [[0.1]], 0.1, [1.0], 0, 0, [1])
    with pytest.raises(ValueError, match="eval_steps"):
        E.simulate_twins([1.0], [1.0], 0.1, [[0.1]], 0.1, [1.0], 1, 0, [5])
    with pytest.raises(ValueError, match="below 1"):
        E.simulate_twins([1.0], [1.0], 0.1, [[0.5]], 4.0, [1.0], 1, 0, [1])


def test_the_exponent_figure_slides_over_the_offsets_it_searched():
    """best_exponent keeps the risk at every offset it searched; exponent_figure puts one
    slider step per offset, opening at the page's t0, and each step's lowest point is that
    offset's best exponent (best_by_t0), each setting relative to its own best (minimum 1)."""
    from dynamics.schedules import figures as F

    cfg = S.PowerLawConfig.for_profile("smoke")
    ex = {(a, b): E.best_exponent(cfg.replace(capacity=a, source=b)) for a, b in ((2, 4), (2, 2))}
    e = ex[(2, 4)]
    assert len(e.risk_by_t0) == len(e.t0s) == len(e.best_by_t0)
    assert e.risk_by_t0[e.t0s.index(e.t0)] == e.risk
    fig = F.exponent_figure(ex)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == [f"{t:g}" for t in e.t0s]
    assert fig.layout.sliders[0].active == e.t0s.index(e.t0)
    for k, step in enumerate(steps):
        shown = [tr for tr, v in zip(fig.data, step.args[0]["visible"]) if v and tr.mode == "lines+markers"]
        assert len(shown) == 2
        first = shown[0]
        assert min(first.y) == pytest.approx(1.0)
        assert first.x[int(np.argmin(first.y))] == pytest.approx(e.best_by_t0[k])
