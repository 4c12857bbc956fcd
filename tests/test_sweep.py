"""Tests of dynamics.sweep: batched training equals sequential training, divergence stays
isolated, masks, the batched optimizer step against torch.optim, bad input, tables and grids."""
from __future__ import annotations

import functools
import math
import time

import numpy as np
import pytest
import torch

from dynamics import data as data_mod
from dynamics import models
from dynamics import sweep
from dynamics.train import Hooks, Recipe, train
from dynamics.sweep import (OPTIMIZERS, Evaluations, Spec, SweepResult, auto_chunk_size, batched_step,
                            choose_strategy, grid, init_state, table_grid, train_many)

RTOL, ATOL = 1e-4, 1e-5


@functools.cache
def tiny_data():
    return data_mod.mnist1d(240, 120, seed=0, device="cpu")


def mlp(cfg):
    return models.MLP(40, cfg.get("width", 16), 2, 10)


def assert_same_histories(a, b, rtol=RTOL, atol=ATOL, acc_atol=None):
    """``acc_atol``: accuracies may differ by this much (an example that flips)."""
    assert len(a) == len(b)
    for ha, hb in zip(a, b):
        assert ha.steps == hb.steps
        assert ha.diverged_at == hb.diverged_at
        assert set(ha.metrics) == set(hb.metrics)
        for m in ha.metrics:
            if m != "time":
                tol = acc_atol if acc_atol is not None and m.endswith("acc") else atol
                np.testing.assert_allclose(ha[m], hb[m], rtol=rtol, atol=tol, err_msg=m)


@functools.cache
def both(optimizer="adamw", batch_size=None, loss="cross_entropy", steps=30, masks=False,
         schedule=False):
    """The same sweep trained batched and sequentially (cached: shared by several tests)."""
    d = tiny_data()
    configs = grid(lr=[3e-3, 1e-2], weight_decay=[0.0, 0.1], seed=[0, 1])
    for i, c in enumerate(configs):
        c["init_scale"] = 1.0 if i % 3 else 0.5
    recipe = Recipe(steps, optimizer=optimizer, batch_size=batch_size, loss=loss, eval=5)
    kw = dict(bars=False)
    if optimizer in ("sgd", "momentum"):
        configs = [dict(c, lr=c["lr"] * 10) for c in configs]
    if masks:
        g = torch.Generator().manual_seed(0)
        fracs = torch.linspace(0.3, 0.9, len(configs))
        kw["masks"] = dict(
            train=torch.rand(len(configs), len(d.x_train), generator=g) < fracs[:, None],
            test=torch.rand(len(configs), len(d.x_test), generator=g) < 0.5)
    if schedule:
        recipe = recipe.replace(schedule=lambda s: min(1.0, (s + 1) / 10))
    out = {s: train_many(mlp, d, configs, recipe, strategy=s, **kw) for s in ("batched",
                         "sequential")}
    assert out["batched"].info["strategy"] == "batched"
    return out


# ----------------------------------------------------------------------------- grid


def test_grid_order_and_values():
    g = grid(a=[1, 2], b=["x", "y", "z"])
    assert len(g) == 6
    assert g[0] == {"a": 1, "b": "x"} and g[1] == {"a": 1, "b": "y"} and g[3] == {"a": 2, "b": "x"}
    assert grid(lr=0.1) == [{"lr": 0.1}]


def test_grid_empty_axis_raises():
    with pytest.raises(ValueError, match="empty"):
        grid(lr=[], wd=[0.1])
    with pytest.raises(ValueError):
        grid()


# ----------------------------------------------------------------------------- optimizer step


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_batched_step_matches_torch_optim(name):
    """batched_step on K stacked models == torch.optim stepping each model on its own."""
    K, steps = 3, 6
    lrs, wds = [1e-3, 1e-2, 5e-2], [0.0, 0.1, 0.5]
    g = torch.Generator().manual_seed(0)
    shapes = [(5, 4), (5,)]
    init = [torch.randn(K, *s, generator=g) for s in shapes]
    grads = [[torch.randn(K, *s, generator=g) for s in shapes] for _ in range(steps)]
    ctor = {"adamw": lambda p, lr, wd: torch.optim.AdamW(p, lr=lr, weight_decay=wd),
            "adam": lambda p, lr, wd: torch.optim.Adam(p, lr=lr),
            "adam_l2": lambda p, lr, wd: torch.optim.Adam(p, lr=lr, weight_decay=wd),
            "sgd": lambda p, lr, wd: torch.optim.SGD(p, lr=lr, weight_decay=wd),
            "momentum": lambda p, lr, wd: torch.optim.SGD(p, lr=lr, momentum=0.9, weight_decay=wd)}[name]
    reference = []
    for k in range(K):
        ps = [torch.nn.Parameter(t[k].clone()) for t in init]
        opt = ctor(ps, lrs[k], wds[k])
        for s in range(steps):
            for p, gr in zip(ps, grads[s]):
                p.grad = gr[k].clone()
            opt.step()
        reference.append([p.detach() for p in ps])
    params = [t.clone() for t in init]
    state = init_state(name, params)
    before = [t.clone() for t in params]
    for s in range(steps):
        new, state = batched_step(name, params, grads[s], state, s + 1, torch.tensor(lrs),
                                  torch.tensor(wds))
        if s == 0:  # pure: inputs untouched
            for a, b in zip(params, before):
                assert torch.equal(a, b)
        params = new
    for k in range(K):
        for got, want in zip(params, reference[k]):
            torch.testing.assert_close(got[k], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_one_step_on_the_whole_buffer_is_the_step_on_each_tensor(name):
    """The batched loop steps all of a model's parameters as one [K, N] buffer (one
    operation per line of the update, not one per tensor): the same arithmetic element by
    element, so its result equals, bit for bit, the step taken tensor by tensor."""
    K, steps = 3, 5
    g = torch.Generator().manual_seed(1)
    shapes = [(7, 5), (7,), (3, 7), (3,)]
    lr, wd = torch.tensor([1e-3, 2e-2, 1e-1]), torch.tensor([0.0, 0.1, 0.5])
    params = [torch.randn(K, *s, generator=g) for s in shapes]
    flat = [torch.cat([t.reshape(K, -1) for t in params], 1)]
    state, flat_state = init_state(name, params), init_state(name, flat)
    for s in range(1, steps + 1):
        grads = [torch.randn(K, *sh, generator=g) for sh in shapes]
        params, state = batched_step(name, params, grads, state, s, lr, wd)
        flat, flat_state = batched_step(name, flat, [torch.cat([t.reshape(K, -1) for t in grads], 1)],
                                        flat_state, s, lr, wd)
        assert torch.equal(flat[0], torch.cat([t.reshape(K, -1) for t in params], 1)), f"step {s}"


def test_the_optimizer_step_is_a_fixed_number_of_operations():
    """However many parameter tensors a model has, the batched loop's Adam step is one
    ``lerp`` (the first moment) and one ``where`` per buffer (parameters and two moments: a
    diverged model freezes) on the [K, N] buffer: counted per step, as the device would launch
    them, for a network of 3 and of 6 weight matrices (6 and 12 tensors)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.n = {aten.lerp.Scalar: 0, aten.where.self_out: 0}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in self.n:
                self.n[func] += 1
            return func(*args, **(kwargs or {}))

    d = tiny_data()
    for depth in (2, 5):
        per = {}
        for steps in (4, 9):
            with Count() as c:
                train_many(lambda cfg: models.MLP(40, 16, depth, 10), d, grid(seed=[0, 1]),
                           Recipe(steps, optimizer="adam", batch_size=50, eval=[0]), strategy="batched",
                           bars=False)
            per[steps] = dict(c.n)
        assert (per[9][aten.lerp.Scalar] - per[4][aten.lerp.Scalar]) == 5, (depth, per)
        assert (per[9][aten.where.self_out] - per[4][aten.where.self_out]) == 3 * 5, (depth, per)


class _TwoDtypes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(40, 10)
        self.b = torch.nn.Parameter(torch.zeros(10, dtype=torch.float64))

    def forward(self, x):
        return self.a(x) + self.b.float()


class _Unused(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(40, 10)
        self.spare = torch.nn.Parameter(torch.ones(5))  # takes no part in the output

    def forward(self, x):
        return self.a(x)


@pytest.mark.parametrize("make,match", [(_TwoDtypes, "more than one dtype"),
                                        (_Unused, r"\['spare'\] take no part")])
def test_a_model_the_buffer_cannot_train_exactly_is_refused_batched_and_trained_sequentially(make, match):
    """One [K, N] buffer holds a model's parameters: parameters of two dtypes do not fit it,
    and a parameter the loss does not use would get a zero gradient there (and decay), where
    ``train`` leaves it be. ``strategy='batched'`` refuses such a model by name; ``auto``
    trains it one model after another, as ``train`` does."""
    d = tiny_data()
    recipe = Recipe(5, optimizer="adamw", lr=0.1, weight_decay=0.5, eval=5)
    with pytest.raises(ValueError, match=f"strategy='batched' cannot train this model: .*{match}"):
        train_many(lambda cfg: make(), d, grid(seed=[0, 1]), recipe, strategy="batched", bars=False)
    res = train_many(lambda cfg: make(), d, grid(seed=[0, 1]), recipe, bars=False)
    assert res.info["strategy"] == "sequential"
    if make is _Unused:
        assert torch.equal(res.states[0]["spare"], torch.ones(5))  # left be, as train leaves it


# ----------------------------------------------------------------------------- equivalence


@pytest.mark.parametrize("optimizer,batch_size,loss", [
    ("adamw", None, "cross_entropy"),
    ("adam_l2", 64, "cross_entropy"),
    ("momentum", 100, "mse"),
    ("sgd", None, "cross_entropy"),
])
def test_batched_equals_sequential(optimizer, batch_size, loss):
    r = both(optimizer, batch_size, loss)
    assert len(r["batched"].histories) == 8
    assert_same_histories(r["batched"].histories, r["sequential"].histories)
    # the runs differ from one another (the sweep did something)
    finals = {round(h.last("train_loss"), 5) for h in r["batched"].histories}
    assert len(finals) == 8
    for k in range(8):
        for name, t in r["batched"].state_dict(k).items():
            torch.testing.assert_close(t, r["sequential"].state_dict(k)[name], rtol=1e-3, atol=1e-4)


def test_sequential_strategy_is_train():
    """The sequential strategy is dynamics.train.train itself (seeded model, same options)."""
    from dynamics.train import train

    d = tiny_data()
    cfg = dict(lr=1e-2, weight_decay=0.1, seed=3)
    res = train_many(mlp, d, [cfg], Recipe(steps=20, eval=5), strategy='sequential', bars=False)
    torch.manual_seed(3)
    h = train(mlp(cfg), d, Recipe(steps=20, lr=0.01, weight_decay=0.1, eval=5), seed=3,
              bars=False)
    assert_same_histories(res.histories, [h], rtol=0, atol=0)


def test_lr_schedule_and_chunks_agree():
    r = both(schedule=True)
    assert_same_histories(r["batched"].histories, r["sequential"].histories)
    d = tiny_data()
    configs = grid(lr=[3e-3, 1e-2], weight_decay=[0.0, 0.1], seed=[0, 1])
    whole = train_many(mlp, d, configs, Recipe(steps=15, eval=5), strategy='batched',
                       bars=False)
    chunked = train_many(mlp, d, configs, Recipe(steps=15, eval=5), strategy=3, bars=False)
    assert chunked.info["chunk_size"] == 3
    assert_same_histories(whole.histories, chunked.histories)


def test_mixed_architectures_are_grouped():
    d = tiny_data()
    configs = grid(width=[8, 16], lr=[1e-2], seed=[0, 1])
    kw = dict(recipe=Recipe(10, eval=5), bars=False)
    b = train_many(mlp, d, configs, strategy="batched", **kw)
    s = train_many(mlp, d, configs, strategy="sequential", **kw)
    assert_same_histories(b.histories, s.histories)
    assert b.state_dict(0)["head.weight"].shape == (10, 8)
    assert b.state_dict(3)["head.weight"].shape == (10, 16)


# ----------------------------------------------------------------------------- divergence


def test_divergence_isolated_and_frozen():
    d = tiny_data()
    configs = [dict(lr=0.05), dict(lr=1e6), dict(lr=0.1)]
    kw = dict(recipe=Recipe(25, optimizer="sgd", eval=5), bars=False)
    b = train_many(mlp, d, configs, strategy="batched", **kw)
    s = train_many(mlp, d, configs, strategy="sequential", **kw)
    hb = b.histories
    assert hb[1].diverged and not hb[0].diverged and not hb[2].diverged
    assert hb[1].diverged_at == s.histories[1].diverged_at
    assert_same_histories(b.histories, s.histories)
    assert hb[0].steps[-1] == 25 and hb[2].steps[-1] == 25 and len(hb[1]) < len(hb[0])
    # frozen: the diverged model's parameters stopped before they became non-finite
    assert all(torch.isfinite(t).all() for t in b.state_dict(1).values())
    rows = b.table()
    assert [r["diverged"] for r in rows] == [False, True, False]
    assert math.isnan(rows[1]["final_test_acc"]) and rows[1]["diverged_at"] == hb[1].diverged_at
    # the healthy models equal their own sequential runs trained without the diverging one
    alone = train_many(mlp, d, [configs[0], configs[2]], strategy="batched", **kw)
    assert_same_histories(alone.histories, [hb[0], hb[2]])


# ----------------------------------------------------------------------------- masks


def test_train_and_test_masks_batched_equals_sequential():
    # a batched matmul and a single one sum in other orders on AVX-512 kernels: over the run
    # the test loss drifts apart by up to 3.5e-4 relative and one test example of 198 flips
    # (seen on a Xeon with AVX-512); a wrong mask moves the loss by whole per cent
    kw = dict(rtol=1e-3, acc_atol=1.5 / 198)
    r = both(masks=True)
    assert_same_histories(r["batched"].histories, r["sequential"].histories, **kw)
    r = both(batch_size=64, masks=True)  # unequal subsets, mini-batches drawn per model
    assert_same_histories(r["batched"].histories, r["sequential"].histories, **kw)


def test_train_mask_is_the_subset():
    """Training on a mask row == training on that subset of the data."""
    d = tiny_data()
    mask = torch.zeros(1, len(d.x_train), dtype=torch.bool)
    mask[0, ::3] = True
    kw = dict(recipe=Recipe(10, eval=5), bars=False, strategy="batched")
    a = train_many(mlp, d, [dict(seed=0), dict(seed=1)], masks=dict(train=mask.repeat(2, 1)), **kw)
    sub = data_mod.Dataset(d.x_train[::3], d.y_train[::3], d.x_test, d.y_test, d.n_classes)
    b = train_many(mlp, sub, [dict(seed=0), dict(seed=1)], **kw)
    assert_same_histories(a.histories, b.histories)


def test_param_masks_batched_equals_sequential():
    d = tiny_data()
    configs = grid(seed=[0, 1, 2])
    g = torch.Generator().manual_seed(1)
    masks = [{"hidden.0.weight": (torch.rand(16, 40, generator=g) < f).float()}
             for f in (0.2, 0.5)] + [{}]
    kw = dict(recipe=Recipe(15, eval=5), bars=False, masks=dict(params=masks))
    b = train_many(mlp, d, configs, strategy="batched", **kw)
    s = train_many(mlp, d, configs, strategy="sequential", **kw)
    assert_same_histories(b.histories, s.histories)
    for k in range(2):
        w = b.state_dict(k)["hidden.0.weight"]
        assert torch.all(w[masks[k]["hidden.0.weight"] == 0] == 0)
        assert torch.all(w[masks[k]["hidden.0.weight"] == 1] != 0)
    assert (b.state_dict(2)["hidden.0.weight"] != 0).all()


def test_init_scale_scales_initial_weights():
    d = tiny_data()
    res = train_many(mlp, d, [dict(seed=0), dict(seed=0, init_scale=3.0)],
                     Recipe(steps=1, optimizer='sgd', lr=1e-12, eval=[0]), bars=False,
                     strategy='batched')
    w0, w1 = res.state_dict(0)["hidden.1.weight"], res.state_dict(1)["hidden.1.weight"]
    torch.testing.assert_close(w1, 3.0 * w0, rtol=1e-5, atol=1e-7)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs,match", [
    (dict(recipe=Recipe(2, optimizer="muon")), "train_many supports"),
    (dict(recipe=Recipe(2, loss=lambda out, y: out.sum())), "train_many supports"),
    (dict(strategy="parallel"), "unknown strategy"),
    (dict(strategy=0), "chunk size"),
    (dict(recipe=dict(steps=2)), "needs a dynamics.train.Recipe"),
    (dict(masks=dict(train=torch.ones(2, 5, dtype=torch.bool))), "train"),
    (dict(masks=dict(train=torch.ones(2, 240))), "bool"),
    (dict(masks=dict(test=torch.ones(3, 120, dtype=torch.bool))), "test"),
    (dict(masks=dict(params=[{"nope": torch.ones(1)}, {}])), "no parameter"),
    (dict(masks=dict(params=[{"head.weight": torch.ones(3)}, {}])), "shape"),
    (dict(masks=dict(params=[{}])), "one dict per config"),
    (dict(masks=dict(weights=[{}])), "masks takes"),
    (dict(recipe=Recipe(2, momentum=1.5)), "momentum"),
])
def test_bad_input_raises(kwargs, match):
    kw = dict(recipe=Recipe(2), bars=False)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        train_many(mlp, tiny_data(), [dict(seed=0), dict(seed=1)], **kw)


def test_bad_configs_and_models_raise():
    d = tiny_data()
    with pytest.raises(ValueError, match="no configurations"):
        train_many(mlp, d, [], Recipe(steps=2))
    with pytest.raises(ValueError, match="learning rate"):
        train_many(mlp, d, [dict(lr=-1.0)], Recipe(steps=2))
    with pytest.raises(ValueError, match="weight decay"):
        train_many(mlp, d, [dict(weight_decay=-0.1)], Recipe(steps=2))
    with pytest.raises(ValueError, match="does not accept"):
        train_many(lambda c: models.MLP(7, 8, 1, 10), d, [{}], Recipe(steps=2))
    with pytest.raises(ValueError, match="classes"):
        train_many(lambda c: models.MLP(40, 8, 1, 3), d, [{}], Recipe(steps=2))
    with pytest.raises(ValueError, match="nn.Module"):
        train_many(lambda c: None, d, [{}], Recipe(steps=2))
    with pytest.raises(ValueError, match=r"train'\] row"):
        train_many(mlp, d, [{}], Recipe(steps=2),
                   masks=dict(train=torch.zeros(1, 240, dtype=torch.bool)))
    with pytest.raises(ValueError, match="Dataset"):
        train_many(mlp, (d.x_train, d.y_train), [{}], Recipe(steps=2))


def test_batched_refuses_dropout():
    model_fn = lambda c: torch.nn.Sequential(torch.nn.Linear(40, 8), torch.nn.Dropout(0.5),  # noqa: E731
                                             torch.nn.Linear(8, 10))
    with pytest.raises(ValueError, match="dropout"):
        train_many(model_fn, tiny_data(), [{}, {}], Recipe(steps=2), strategy='batched')
    res = train_many(model_fn, tiny_data(), [{}, {}], Recipe(steps=2),
                     bars=False)  # auto: sequential
    assert res.info["strategy"] == "sequential"


# ----------------------------------------------------------------------------- strategy, memory


def test_auto_strategy_and_chunk_size():
    d = tiny_data()
    small = models.MLP(40, 16, 2, 10)
    assert choose_strategy(small, d, None, 8) == "batched"
    assert choose_strategy(small, d, None, 1) == "sequential"
    big = models.MLP(40, 1024, 4, 10)
    big_data = data_mod.Dataset(torch.zeros(20000, 40), torch.zeros(20000, dtype=torch.long),
                                d.x_test, d.y_test, 10)
    assert choose_strategy(big, big_data, None, 8) == "sequential"
    c_small = auto_chunk_size(small, d, None)
    c_big = auto_chunk_size(big, big_data, None)
    assert c_small >= 64 and 1 <= c_big < c_small


def test_chunk_size_from_free_device_memory(monkeypatch):
    """On CUDA the chunk is sized from what torch.cuda.mem_get_info says is free now (faked
    here): half of it, over one model's footprint."""
    gib = 1 << 30
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (8 * gib, 16 * gib))
    assert sweep.memory_budget("cuda") == 4 * gib
    assert sweep.memory_budget("cpu") == sweep.CPU_MEMORY_BUDGET
    assert sweep.chunk_size_for(gib, 4 * gib) == 4
    assert sweep.chunk_size_for(5 * gib, 4 * gib) == 1  # never zero: one model at a time
    with pytest.raises(ValueError, match="positive"):
        sweep.chunk_size_for(0, gib)
    d = tiny_data()
    need = sweep.footprint(models.MLP(40, 16, 2, 10), d, None, "adamw")
    n_params = models.count_parameters(models.MLP(40, 16, 2, 10))
    # AdamW's two moments: (3 + 2 * 2) copies, and two whole-buffer temporaries
    assert need["params"] == 4 * n_params * 9 and need["activations"] > 0
    masked = sweep.footprint(models.MLP(40, 16, 2, 10), d, None, "adamw", masked=True)
    assert masked["params"] == 4 * n_params * 10  # and the [K, N] mask
    from dynamics_ops import standin  # the stand-in CUDA device answers as a T4

    monkeypatch.setattr(torch.cuda, "mem_get_info", standin._mem_get_info)
    assert sweep.memory_budget("cuda") == 0.5 * (standin.T4_VISIBLE - standin.CUDA_CONTEXT)
    monkeypatch.setattr(sweep.strategies, "memory_budget", lambda device: 10 * (need["params"] + need["activations"]))
    assert auto_chunk_size(models.MLP(40, 16, 2, 10), d, None) == 10


# ----------------------------------------------------------------------------- the engine's parts


def test_spec_is_checked_and_frozen():
    import dataclasses

    spec = Spec(Recipe(10, "sgd", eval=[0, 5, 10, 20]), 10)
    assert spec.evals == (0, 5, 10) and spec.planned == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.steps = 20
    for kwargs, match in [(dict(steps=0), "steps"), (dict(steps=5, optimizer="lion"), "optimizer"),
                          (dict(steps=5, loss="hinge"), "loss"), (dict(steps=5, batch_size=0), "batch_size")]:
        with pytest.raises(ValueError, match=match):
            Recipe(**kwargs)
    for recipe, match in [(Recipe(5, momentum=1.0), "momentum"), (Recipe(5, optimizer="muon"),
                           "optimizer")]:
        with pytest.raises(ValueError, match=match):
            Spec(recipe, 5)
    assert spec.history().info == dict(steps=10, batch_size=None, loss="cross_entropy")


def test_evaluations_bookkeeping():
    """Divergence seen by a step's loss, or by an evaluation's train loss, closes a history at
    the right step and freezes the model; the others go on."""
    before = time.perf_counter()
    ev = Evaluations(3, Spec(Recipe(10), 10), "cpu")
    nan, inf = float("nan"), float("inf")
    alive = ev.observe(1, torch.tensor([1.0, nan, 1.0]))
    assert alive.tolist() == [True, False, True] and ev.first_bad.tolist() == [-1, 1, -1]
    ev.record(1, dict(train_loss=torch.tensor([0.5, 0.5, inf]), train_acc=torch.tensor([0.1, 0.2, 0.3])),
              {0: dict(extra=7.0)}, elapsed=0.25)
    h0, h1, h2 = ev.histories
    assert h0.steps == [1] and h0.last("train_acc") == pytest.approx(0.1) and h0.last("extra") == 7.0
    assert h1.diverged_at == 1 and len(h1) == 0  # its loss went bad at step 1
    assert h2.diverged_at == 1 and len(h2) == 0  # its train loss was not finite at step 1
    assert ev.open() == [0] and ev.alive.tolist() == [True, False, False]
    ev.observe(2, torch.tensor([inf, 1.0, 1.0]))
    ev.observe(3, torch.tensor([1.0, 1.0, 1.0]))
    assert ev.first_bad.tolist() == [2, 1, -1] and ev.alive.tolist() == [False, False, False]
    histories = ev.close()  # no evaluation after step 2: the divergence is still reported
    took = time.perf_counter() - before
    assert [h.diverged_at for h in histories] == [2, 1, 1]
    # the time from the start to the close, in seconds (not a step's elapsed, not a timestamp)
    assert all(0 < h.wall_time <= took for h in histories)


# ----------------------------------------------------------------------------- table, grids


def test_table_and_grid_values():
    res = both()["batched"]
    rows = res.table(thresholds={"train_acc": 0.3, "train_loss": 2.0})
    assert len(rows) == 8
    row = rows[0]
    for key in ("lr", "weight_decay", "seed", "final_train_loss", "final_test_acc",
                "steps_to_train_acc", "steps_to_train_loss", "diverged"):
        assert key in row
    h = res.histories[0]
    assert row["final_test_acc"] == h.last("test_acc")
    assert row["steps_to_train_acc"] == h.first_step("train_acc", above=0.3)
    assert row["steps_to_train_loss"] == h.first_step("train_loss", below=2.0)
    Z, xs, ys = res.grid_values("final_test_acc", x="lr", y="weight_decay")
    assert xs == [3e-3, 1e-2] and ys == [0.0, 0.1] and Z.shape == (2, 2)
    want = np.mean([r["final_test_acc"] for r in rows if r["lr"] == 1e-2 and r["weight_decay"] == 0.1])
    assert Z[1, 1] == pytest.approx(want)
    Zc, _, _ = res.grid_values(lambda h: h.last("train_loss"), x="lr", y="weight_decay", reduce="max")
    assert Zc[0, 0] == max(r["final_train_loss"] for r in rows if r["lr"] == 3e-3 and r["weight_decay"] == 0)
    with pytest.raises(ValueError, match="no column"):
        table_grid(rows, "final_nope", "lr", "weight_decay")


def test_figures_and_json_roundtrip():
    import json

    res = both()["batched"]
    fig = res.heatmap("final_test_acc", x="lr", y="weight_decay")
    assert fig.data[0].type == "heatmap"
    slider = res.slider_over_time("test_acc", x="lr", y="weight_decay", n=4)
    assert len(slider.layout.sliders[0].steps) == 4 and len(slider.data) == 4
    back = SweepResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.table() == res.table()
    assert back.at_step("test_acc", 10) == res.at_step("test_acc", 10)


def test_no_host_sync_per_step(monkeypatch):
    """The batched loop reads device values only at evaluations: count the conversions."""
    calls = []
    for name in ("item", "tolist", "__bool__", "__float__", "__int__"):
        original = getattr(torch.Tensor, name)

        def counting(self, *a, _original=original, **kw):
            calls.append(1)
            return _original(self, *a, **kw)

        monkeypatch.setattr(torch.Tensor, name, counting)
    d = tiny_data()
    for bs in (None, 50):
        calls.clear()
        train_many(mlp, d, grid(seed=[0, 1, 2]), Recipe(steps=60, batch_size=bs, eval=[0, 60]),
                   strategy='batched', bars=False)
        assert len(calls) < 30, f"{len(calls)} host syncs for 60 steps (batch_size={bs})"


@pytest.mark.parametrize("strategy", [2, "sequential"])
def test_progress_reports_and_stop_ends_the_sweep(strategy):
    """A sweep reports into dynamics.progress; a callback's True stops it (a panel's Stop)."""
    from dynamics import progress

    d = data_mod.digits()
    seen = []

    def cb(done):
        seen.append(done)
        return done >= 0.5  # stop half way

    model_fn = lambda c: models.MLP(d.input_dim, 8, 1, 10)  # noqa: E731
    with progress.reporting(cb) as job:
        res = train_many(model_fn, d, [dict(lr=0.01, seed=s) for s in range(4)],
                         Recipe(20, eval=5), strategy=strategy, bars=False)
    assert job.stopped and res.info["stopped"] and 0.5 <= seen[-1] < 1.0
    assert seen == sorted(seen) and all(0.0 <= s <= 1.0 for s in seen)
    assert len(res.histories[0]) > 0 and len(res.histories[-1]) == 0  # not reached: empty
    last = res.table()[-1]
    assert last["stopped"] and math.isnan(last["final_test_acc"])
    with progress.reporting(lambda done: False):
        full = train_many(model_fn, d, [dict(lr=0.01)], Recipe(10, eval=5), strategy=strategy,
                          bars=False)
    assert not full.info["stopped"] and len(full.histories[0]) == 3


@pytest.mark.parametrize("optimizer", ["adamw", "momentum", "sgd"])
@pytest.mark.parametrize("depth,masked", [(2, False), (6, False), (2, True)])
def test_footprint_counts_what_a_batched_step_holds_at_its_peak(optimizer, depth, masked):
    """The chunk sizing's count against the batched engine's measured allocation on the CPU:
    every tensor storage the chunk's training creates, live from its creation until its last
    tensor is freed (tests/livebytes.py), at its peak. The count covers the peak, and is not
    loose by more than a quarter; at two depths (the step's temporaries are whole-buffer copies,
    so they grow with the model, not with its largest tensor) and with parameter masks."""
    from livebytes import LiveBytes
    from dynamics.sweep.loop import _train_chunk
    from dynamics.sweep.runs import Spec, _runs

    d = tiny_data()
    make = lambda c: models.MLP(40, 256, depth, 10)  # noqa: E731
    recipe = Recipe(steps=3, batch_size=8, optimizer=optimizer, eval=[])
    runs = _runs(grid(lr=[1e-3, 2e-3], seed=[0, 1, 2]), recipe, None, None)
    if masked:
        import dataclasses

        g = torch.Generator().manual_seed(0)
        mask = {n: (torch.rand(p.shape, generator=g) > 0.5).float()
                for n, p in make({}).named_parameters() if p.ndim == 2}
        runs = [dataclasses.replace(r, param_mask=mask) for r in runs]
    with LiveBytes() as live:
        _train_chunk(make, d, Spec(recipe, 3), runs, None, lambda step: False)
    need = sweep.footprint(make({}), d, 8, optimizer, masked=masked)
    counted = len(runs) * (need["params"] + need["activations"])
    assert 0.75 * counted <= live.peak <= counted, (live.peak / counted)


# A value other than the default for each Recipe field (tests/test_sweep.py's drift check).
_FIELD_VALUES = dict(steps=12, optimizer="momentum", lr=3e-2, weight_decay=0.3, momentum=0.5,
                     betas=(0.8, 0.99), batch_size=32, loss="mse",
                     schedule=lambda step: 1.0 / (1 + step), eval=3)


def test_both_engines_honour_every_recipe_field():
    """One engine's tables: every Recipe field is listed in sweep.HONOURED (a field added to
    Recipe and not to the batched engine fails here), and each, set away from its default,
    trains the same in train_many's batched engine as in train."""
    import dataclasses

    from dynamics import train as T

    assert set(sweep.HONOURED) == {f.name for f in dataclasses.fields(Recipe)}
    assert set(sweep.OPTIMIZERS) <= set(T.OPTIMIZERS) and sweep.LOSSES is T.LOSSES
    assert set(T.OPTIMIZERS) - set(sweep.OPTIMIZERS) == {"muon"}
    assert set(_FIELD_VALUES) | {"adam_lr"} == set(sweep.HONOURED)
    d = tiny_data()
    with pytest.raises(ValueError, match="muon"):  # Muon's field: the batched engine refuses it
        train_many(mlp, d, [dict(seed=1)], Recipe(8, optimizer="muon", adam_lr=1e-3),
                   strategy="batched", bars=False)
    base = Recipe(steps=8, lr=1e-2, eval=4)
    for name, value in _FIELD_VALUES.items():
        recipe = base.replace(**{name: value})
        if name == "momentum":
            recipe = recipe.replace(optimizer="momentum")
        if name == "betas":
            recipe = recipe.replace(optimizer="adam")
        res = train_many(mlp, d, [dict(seed=1)], recipe, strategy="batched", bars=False)
        torch.manual_seed(1)
        alone = train(mlp({}), d, recipe, seed=1, bars=False)
        assert_same_histories(res.histories, [alone])
        if name != "eval":
            torch.manual_seed(1)
            default = train(mlp({}), d, base if name not in ("momentum", "betas")
                            else base.replace(optimizer=recipe.optimizer), seed=1, bars=False)
            assert not np.allclose(default["train_loss"][-1:], alone["train_loss"][-1:]) \
                or default.steps != alone.steps, f"{name} changed nothing"


def test_on_step_acts_on_the_models_together_as_train_hooks_act_on_one():
    """``on_step`` sees every model's parameters after each step: a scaling of model 1's
    weights at step 5 gives that model the history ``train`` gives with an ``after_step``
    hook doing the same, and leaves model 0 as it was without a hook."""
    from dynamics.train import Hooks, train

    d = tiny_data()
    configs = [dict(lr=1e-2, weight_decay=0.1, seed=3)] * 2
    recipe = Recipe(steps=12, eval=4, batch_size=32, optimizer="adamw")
    seen = []

    def kick(step, params):
        seen.append((step, sorted(params), next(iter(params.values())).shape[0]))
        if step == 5:
            for t in params.values():
                t[1] *= 0.5

    res = train_many(mlp, d, configs, recipe, on_step=kick, bars=False)
    assert res.info["strategy"] == "batched" and [s for s, *_ in seen] == list(range(1, 13))
    assert seen[0][2] == 2 and seen[0][1] == sorted(n for n, _ in mlp({}).named_parameters())

    def run(after_step=None):
        torch.manual_seed(3)
        return train(mlp({}), d, recipe.replace(lr=1e-2, weight_decay=0.1), seed=3,
                     hooks=Hooks(after_step=after_step), bars=False)

    def halve(model, step):
        if step == 5:
            with torch.no_grad():
                for p in model.parameters():
                    p.mul_(0.5)

    assert_same_histories(res.histories, [run(), run(halve)])
    with pytest.raises(ValueError, match="on_step sees every model at once"):
        train_many(mlp, d, configs, recipe, on_step=kick, strategy="sequential")
    with pytest.raises(ValueError, match="one chunk"):
        train_many(mlp, d, configs, recipe, on_step=kick, strategy=1)


def test_before_step_sees_each_models_own_gradient_as_train_hooks_do():
    """``before_step`` sees, before each optimizer step, every model's parameters and the
    gradient the step will apply: at each step they equal what ``train``'s ``before_step``
    hook sees in each model trained alone (its own seed, rows and learning rate); it is
    refused where it could not see every model at once."""
    from dynamics.train import Hooks, train

    d = tiny_data()
    configs = [dict(lr=1e-2, weight_decay=0.1, seed=3), dict(lr=3e-2, weight_decay=0.0, seed=4)]
    recipe = Recipe(steps=6, eval=3, batch_size=32, optimizer="adamw")
    seen = {}

    def look(step, params, grads):
        assert sorted(params) == sorted(grads)
        seen[step] = {n: (params[n].clone(), grads[n].clone()) for n in params}

    res = train_many(mlp, d, configs, recipe, before_step=look, bars=False)
    assert res.info["strategy"] == "batched" and sorted(seen) == list(range(1, 7))
    for k, cfg in enumerate(configs):
        alone = {}

        def keep(model, step):
            alone[step] = {n: (p.detach().clone(), p.grad.clone())
                           for n, p in model.named_parameters()}

        torch.manual_seed(cfg["seed"])
        train(mlp({}), d, recipe.replace(lr=cfg["lr"], weight_decay=cfg["weight_decay"]),
              seed=cfg["seed"], hooks=Hooks(before_step=keep), bars=False)
        for step, named in alone.items():
            for n, (p, g) in named.items():
                torch.testing.assert_close(seen[step][n][0][k], p, rtol=1e-5, atol=1e-6)
                torch.testing.assert_close(seen[step][n][1][k], g, rtol=1e-4, atol=1e-6)
    # the gradients differ between the models (each is its own, not a shared one)
    first = next(iter(seen[1].values()))[1]
    assert not torch.allclose(first[0], first[1])
    with pytest.raises(ValueError, match="before_step sees every model at once"):
        train_many(mlp, d, configs, recipe, before_step=look, strategy="sequential")


@pytest.mark.parametrize("batch_size", [None, 32])  # full batch defers the train pass
def test_an_evaluation_reads_only_the_sets_its_rule_names_in_both_engines(batch_size):
    """``Every(k, train=False)`` leaves out the training set's whole-set pass, ``test=False``
    the test set's, in the batched engine as in ``train``: the same histories either way,
    the left-out set's keys absent, and the other set's values those of a run that reads
    both, to the last bit (an evaluation never touches the training). A model that diverges
    is caught from its step losses, as before, with the training set unread."""
    from dynamics.train import Every

    d = tiny_data()
    configs = [dict(lr=0.01, seed=0), dict(lr=1e6, seed=1), dict(lr=0.03, seed=2)]
    runs = {}
    for train_set, test_set in [(True, True), (False, True), (True, False)]:
        recipe = Recipe(20, optimizer="sgd", batch_size=batch_size,
                        eval=Every(5, train=train_set, test=test_set))
        runs[train_set, test_set] = {s: train_many(mlp, d, configs, recipe, strategy=s, bars=False)
                                     for s in ("batched", "sequential")}
        b, s = (runs[train_set, test_set][k].histories for k in ("batched", "sequential"))
        assert_same_histories(b, s)
        for h in b + s:
            assert ("train_loss" in h.metrics) == train_set and ("train_acc" in h.metrics) == train_set
            assert ("test_acc" in h.metrics) == test_set
    for engine in ("batched", "sequential"):
        both = runs[True, True][engine].histories
        for key, (drop, name) in {(False, True): ("train", "test_acc"),
                                  (True, False): ("test", "train_loss")}.items():
            other = runs[key][engine].histories
            assert [h.diverged_at for h in other] == [h.diverged_at for h in both]
            assert other[1].diverged and not other[0].diverged
            for h, ref in zip(other, both):
                assert h.steps == ref.steps and list(h[name]) == list(ref[name]), (engine, drop)
