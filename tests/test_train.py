import math

import numpy as np
import pytest
import torch

from dynamics import data, models, train
from dynamics.train import At, Every, History, Hooks, LogSpaced, Recipe


@pytest.fixture(scope="module")
def digits():
    return data.digits()


def _run(d, seed=0, **kw):
    torch.manual_seed(seed)
    m = models.MLP(d.input_dim, 32, 1, 10)
    desc = kw.pop("desc", "training")
    return m, train.train(m, d, Recipe(**(dict(steps=60, lr=1e-2, eval=20) | kw)), bars=False,
                          desc=desc)


def test_full_batch_training_learns(digits):
    _, h = _run(digits, steps=150)
    assert h.steps == list(range(0, 151, 20)) + [150]
    assert h.last("train_acc") > 0.95 and h.last("test_acc") > 0.85
    assert h["train_loss"][-1] < h["train_loss"][0] / 10
    assert not h.diverged and h.status == "ok"


def test_same_seed_same_history(digits):
    a = _run(digits, seed=1, batch_size=64)[1]
    b = _run(digits, seed=1, batch_size=64)[1]
    c = _run(digits, seed=2, batch_size=64)[1]
    for key in ("train_loss", "train_acc", "test_loss", "test_acc"):
        assert np.array_equal(a[key], b[key])
    assert not np.array_equal(a["train_loss"], c["train_loss"])


def test_minibatch_epochs_cover_the_data(digits):
    seen = []
    torch.manual_seed(0)
    m = models.MLP(digits.input_dim, 8, 1, 10)
    orig = m.forward
    m.forward = lambda x: (seen.append(len(x)), orig(x))[1]
    train.train(m, digits, Recipe(steps=5, batch_size=100, eval=[]), bars=False)
    assert seen == [100] * 5


def test_divergence_is_reported_not_raised(digits):
    _, h2 = _run(digits, optimizer="sgd", lr=1e6, steps=50)
    assert h2.diverged and h2.status.startswith("diverged at step ")
    assert 1 <= h2.diverged_at <= 50
    assert all(math.isfinite(v) for v in h2["train_loss"])  # only finite points were recorded


@pytest.mark.parametrize("kw,match", [
    (dict(lr=-0.1), "learning rate"), (dict(lr=0.0), "learning rate"),
    (dict(weight_decay=-1.0), "weight decay"), (dict(steps=0), "steps"),
    (dict(optimizer="lion"), "unknown optimizer"), (dict(loss="hinge"), "unknown loss"),
    (dict(momentum=1.5, optimizer="momentum"), "momentum"),
])
def test_bad_hyperparameters(digits, kw, match):
    m = models.MLP(digits.input_dim, 8, 1, 10)
    with pytest.raises(ValueError, match=match):
        train.train(m, digits, Recipe(**(dict(steps=5) | kw)), bars=False)


def test_hooks_and_callbacks_and_metrics(digits):
    calls = {"before": 0, "after": 0, "cb": []}

    def before(model, step):
        calls["before"] += 1
        assert model.head.weight.grad is not None

    def after(model, step):
        calls["after"] += 1

    def cb(step, history, model):
        calls["cb"].append(step)
        return step >= 40  # stop early

    m = models.MLP(digits.input_dim, 8, 1, 10)
    h = train.train(m, digits, Recipe(steps=100, eval=20),
                    hooks=Hooks(before_step=before, after_step=after, on_eval=[cb]),
                    metrics={'wnorm': lambda mod, d: mod.head.weight.norm()}, bars=False)
    assert calls["cb"] == [0, 20, 40]
    assert calls["before"] == calls["after"] == 40
    assert h.steps[-1] == 40 and len(h["wnorm"]) == len(h.steps)


def test_mse_loss_and_lr_schedule(digits):
    _, h = _run(digits, loss="mse", steps=100, schedule=lambda s: 1.0 / (1 + s / 50))
    assert h.last("train_acc") > 0.9


def test_make_optimizer_kinds(digits):
    m = models.MLP(digits.input_dim, 16, 2, 10)
    assert isinstance(train.make_optimizer(m, "adamw", 1e-3, 0.1), torch.optim.AdamW)
    assert isinstance(train.make_optimizer(m, "adam_l2", 1e-3, 0.1), torch.optim.Adam)
    muon = train.make_optimizer(m, "muon", 0.02)
    hidden, other = train.muon_split(m)
    assert len(hidden) == 2 and all(p.ndim == 2 for p in hidden)  # hidden[0..1] weights
    assert isinstance(muon.optimizers[0], torch.optim.Muon)
    assert sum(p.numel() for p in hidden + other) == sum(p.numel() for p in m.parameters())
    # Muon's groups are what each model names, never guessed from parameter names
    t = models.Transformer1L(7, d_model=8, n_heads=2, d_mlp=16)
    hidden, other = train.muon_split(t)
    assert {id(p) for p in other} == {id(t.embed.weight), id(t.pos), id(t.head.weight),
                                      id(t.mlp[0].bias), id(t.mlp[2].bias)}
    assert len(hidden) == 4
    with pytest.raises(ValueError, match="no hidden 2-D"):
        train.make_optimizer(models.CNN1D(), "muon", 0.02)
    with pytest.raises(ValueError, match="hidden_matrices"):
        train.make_optimizer(torch.nn.Sequential(torch.nn.Linear(4, 4)), "muon", 0.02)


def test_history_roundtrip_and_queries():
    h = History()
    for s, acc in [(0, 0.1), (10, 0.5), (20, 0.97)]:
        h.append(s, test_acc=acc)
    assert h.first_step("test_acc", above=0.95) == 20
    assert h.first_step("test_acc", below=0.2) == 0
    assert h.first_step("test_acc", above=0.99) is None
    again = History.from_dict(h.to_dict())
    assert again.steps == h.steps and np.array_equal(again["test_acc"], h["test_acc"])
    with pytest.raises(KeyError, match="test_acc"):
        h["nope"]


def test_log_steps():
    s = train.log_steps(10000, 50)
    assert s[0] == 1 and s[-1] == 10000 and s == sorted(set(s))


def test_dry_run_caps_training_steps(monkeypatch):
    d = data.digits()
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "4")
    h = train.train(models.MLP(d.input_dim, 8, 1, 10), d, Recipe(steps=5000, eval=1000),
                    bars=False)
    assert h.steps == [0, 4]


# ----------------------------------------------------------------------------- edge cases (issue 13)

def test_empty_history_gives_nan_not_keyerror(digits):
    """A run that diverged before its first evaluation has recorded nothing."""
    h = History(diverged_at=1)
    assert math.isnan(h.last("test_acc")) and len(h["train_loss"]) == 0
    assert h.first_step("test_acc", above=0.5) is None
    _, h2 = _run(digits, optimizer="sgd", lr=1e6, steps=30, eval=[30])
    assert h2.diverged and len(h2) == 0 and math.isnan(h2.last("test_acc"))
    h3 = History()
    h3.append(0, train_loss=1.0)
    with pytest.raises(KeyError, match="recorded"):  # a typo on a real history stays an error
        h3.last("tset_acc")


@pytest.mark.parametrize("schedule,match", [
    (lambda s: 1.0 - s / 10, r"lr_schedule\(11\) returned -0.1"),
    (lambda s: float("nan") if s == 3 else 1.0, r"lr_schedule\(3\) returned nan"),
    (lambda s: "fast", r"lr_schedule\(0\) must be a number"),
])
def test_lr_schedule_must_return_a_factor_of_zero_or_more(digits, schedule, match):
    m = models.MLP(digits.input_dim, 8, 1, 10)
    with pytest.raises(ValueError, match=match):
        train.train(m, digits, Recipe(steps=20, lr=0.01, schedule=schedule), bars=False)
    with pytest.raises(ValueError, match="a function"):
        train.train(m, digits, Recipe(steps=20, schedule=0.5), bars=False)


def test_lr_schedule_checked_in_sweeps_too(digits):
    from dynamics import sweep

    with pytest.raises(ValueError, match=r"lr_schedule\(\d+\) returned -1"):
        sweep.train_many(lambda c: models.MLP(digits.input_dim, 8, 1, 10), digits, [{}, {}],
                         Recipe(steps=5, schedule=lambda s: -1.0), bars=False)


@pytest.mark.parametrize("lr", [np.float32(1e-2), np.float64(1e-2), torch.tensor(1e-2),
                                np.array(1e-2), np.int64(1)])
def test_learning_rates_as_numpy_or_tensor_numbers(digits, lr):
    assert train.check_hyper(lr)[0] == pytest.approx(float(lr))
    _, h = _run(digits, lr=lr, steps=5, optimizer="sgd")
    assert not h.diverged


@pytest.mark.parametrize("lr,match", [
    ("0.01", r"learning rate must be a number, got '0.01' \(str\)"),
    (True, "learning rate must be a number"), (torch.ones(2), "learning rate must be a number"),
    (float("inf"), "positive finite"), (np.float64(-1), "positive finite"),
])
def test_bad_learning_rate_types_say_what_they_got(lr, match):
    with pytest.raises(ValueError, match=match):
        train.check_hyper(lr)
    with pytest.raises(ValueError, match="weight decay must be a number"):
        train.check_hyper(weight_decay="none")


def test_a_long_run_announces_itself_once(digits, monkeypatch, capsys):
    """Measured on the real loop: a run estimated past the threshold prints one line (what,
    steps, time on this device, how to get a smaller run) and trains on."""
    from dynamics import forecast, runtime

    monkeypatch.setattr(forecast, "LONG_RUN_S", 0.0)
    monkeypatch.setattr(forecast, "MEASURE_S", 0.0)
    monkeypatch.setenv("DYNAMICS_PROFILE", "cpu")
    _, h = _run(digits, steps=40, desc="a test run")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("a test run: 40 steps, about ")
    assert "on this cpu" in lines[0] and "DYNAMICS_PROFILE=smoke" in lines[0]
    assert h.steps[-1] == 40  # announcing does not stop it
    monkeypatch.setattr(forecast, "LONG_RUN_S", 1e9)
    _run(digits, steps=40)
    assert capsys.readouterr().out == ""


def test_a_long_sweep_announces_itself_not_each_run(digits, monkeypatch, capsys):
    from dynamics import forecast, runtime, sweep

    monkeypatch.setattr(forecast, "LONG_RUN_S", 0.0)
    monkeypatch.setattr(forecast, "MEASURE_S", 0.0)
    for strategy in ("sequential", "batched"):
        sweep.train_many(lambda c: models.MLP(digits.input_dim, 8, 1, 10), digits, [{}, {}, {}],
                         Recipe(steps=20, eval=5), strategy=strategy, bars=False)
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 1 and lines[0].startswith("3 configurations x 20 steps: about "), strategy


def test_recipe_replace_and_evaluation_rules():
    r = Recipe(100, lr=1e-2, eval=25)
    assert r.eval == Every(25) and r.evals() == [0, 25, 50, 75, 100]
    assert r.replace(eval=[0, 7, 300]).evals() == [0, 7]
    assert Recipe(100, eval=LogSpaced(5)).evals()[-1] == 100
    assert Recipe(100).evals() == list(range(0, 101))  # about 100 evaluations by default
    assert r.replace(lr=0.5).lr == 0.5 and r.lr == 1e-2  # frozen: replace makes a new one
    with pytest.raises(ValueError, match="no field"):
        r.replace(learning_rate=1.0)
    with pytest.raises(ValueError, match="eval must be"):
        Recipe(10, eval="often")
    with pytest.raises(ValueError, match="positive integer"):
        Recipe(10, eval=Every(0)).evals()


def test_dict_metrics_come_from_one_pass(digits):
    calls = []

    def both(model, data):
        calls.append(1)
        return {"w": model.head.weight.norm(), "b": 2.0}

    m = models.MLP(digits.input_dim, 8, 1, 10)
    h = train.train(m, digits, Recipe(10, eval=At([0, 10], test=False)), metrics=both,
                    bars=False)
    assert len(calls) == 2 and list(h["b"]) == [2.0, 2.0] and "test_acc" not in h
    assert h["w"][0] > 0


def test_a_sweep_config_overrides_any_recipe_field(digits):
    from dynamics.sweep import train_many

    fn = lambda c: models.MLP(digits.input_dim, 8, 1, 10)  # noqa: E731
    res = train_many(fn, digits, [dict(seed=0), dict(seed=0, steps=4), dict(seed=0, optimizer="sgd")],
                     Recipe(8, lr=1e-2, eval=4), bars=False)
    assert [h.steps[-1] for h in res.histories] == [8, 4, 8] and res.info["groups"] == 3
    torch.manual_seed(0)
    alone = train.train(fn({}), digits, Recipe(8, lr=1e-2, eval=4, optimizer="sgd"),
                        bars=False)
    assert list(alone["train_loss"]) == list(res.histories[2]["train_loss"])


def test_a_dry_run_evaluates_one_chunk(monkeypatch):
    """A dry run (a few steps at full size, to prove shapes and memory) evaluates the first
    chunk of examples only, as the full evaluation over those examples would: its memory is
    one chunk's. Both engines: ``train``'s evaluate and the sweep's batched one."""
    from dynamics import data as D, models
    from dynamics.sweep import loop
    from dynamics.train import evaluate

    d = D.mnist1d(240, 120, seed=0, device="cpu")
    model = models.MLP(40, 16, 2, 10)
    ce = torch.nn.functional.cross_entropy
    whole = evaluate(model, d.x_train[:64], d.y_train[:64], ce, chunk=64)
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    cut = evaluate(model, d.x_train, d.y_train, ce, chunk=64)
    assert [float(v) for v in cut] == pytest.approx([float(v) for v in whole])
    run = loop.Run(config={}, lr=0.1, weight_decay=0.0, seed=0)
    stack = loop._Stack(lambda c: models.MLP(40, 16, 2, 10), [run], "cpu")
    rows = loop._Rows.of([None], len(d.x_train), "cpu")
    dry = loop._eval_batched(stack, stack.params, d.x_train, d.y_train, rows, "cross_entropy", 10, 64)
    monkeypatch.delenv("DYNAMICS_DRY_RUN")
    first = loop._Rows.of([None], 64, "cpu")
    real = loop._eval_batched(stack, stack.params, d.x_train[:64], d.y_train[:64], first,
                              "cross_entropy", 10, 64)
    assert [float(v[0]) for v in dry] == pytest.approx([float(v[0]) for v in real])


def test_train_false_skips_the_training_sets_pass_and_still_catches_divergence(digits):
    """``Every(k, train=False)``: no ``train_*`` keys, the training set never evaluated (a
    model that counts its forward passes sees the steps' mini-batches only), the test
    metrics those of the run that reads both, and a diverging run ends where it did."""
    from dynamics.train import Every

    class Counting(models.MLP):
        rows = 0

        def forward(self, x):
            Counting.rows += len(x)
            return super().forward(x)

    def run(train_set, lr=1e-2):
        torch.manual_seed(0)
        m = Counting(digits.input_dim, 8, 1, 10)
        Counting.rows = 0
        h = train.train(m, digits, Recipe(12, optimizer="sgd", lr=lr, batch_size=16,
                                          eval=Every(4, train=train_set)), seed=0, bars=False)
        return h, Counting.rows

    (both, n_both), (test_only, n_test) = run(True), run(False)
    assert "train_loss" not in test_only and "train_acc" not in test_only
    assert list(test_only["test_acc"]) == list(both["test_acc"]) and test_only.steps == both.steps
    evals = len(both.steps)
    assert n_test == 12 * 16 + evals * len(digits.x_test)  # steps' batches + test passes
    assert n_both - n_test == evals * len(digits.x_train)
    bad, bad_test_only = run(True, lr=1e8)[0], run(False, lr=1e8)[0]
    assert bad.diverged and bad_test_only.diverged_at == bad.diverged_at


def test_the_loss_log_finds_the_first_non_finite_step_between_evaluations():
    """A constructed run: losses finite but at steps 7 (NaN) and 9 (inf). Read at step 5,
    nothing; at step 10, step 7, and 7 from then on. Each step costs one device operation."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from dynamics.train import LossLog

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Count.n += not func.is_view
            return func(*args, **(kwargs or {}))

    log = LossLog(12, "cpu")
    assert log.first_bad(0) is None  # nothing written yet
    values = {7: math.nan, 9: math.inf}
    for step in range(1, 13):
        loss = torch.tensor(values.get(step, 1.0 / step), requires_grad=True) * 1.0
        Count.n = 0
        with Count():
            log.write(step, loss)
        assert Count.n == 1, f"step {step}: {Count.n} operations"
        if step == 5:
            assert log.first_bad(5) is None
        if step == 10:
            assert log.first_bad(10) == 7
    assert log.first_bad(12) == 7
    ok = LossLog(4, "cpu")
    for step in range(1, 5):
        ok.write(step, torch.tensor(-2.0 ** step))  # a loss may be negative
    assert ok.first_bad(4) is None


def test_a_diverging_run_stops_at_the_step_a_check_at_every_step_finds(digits):
    """The divergence found at evaluations is the first step whose loss was not finite, as
    read from the losses themselves at every step (a loss function that records them)."""
    seen = []

    def recorded(out, y):
        value = torch.nn.functional.cross_entropy(out, y)
        if torch.is_grad_enabled():  # a training step, not an evaluation
            seen.append(float(value.detach()))
        return value

    h = train.train(models.MLP(64, 32, 2, 10), digits,
                    Recipe(steps=60, optimizer="sgd", lr=1e3, eval=25, loss=recorded), seed=0,
                    bars=False)
    first = next(i + 1 for i, v in enumerate(seen) if not math.isfinite(v))
    assert 1 < first < 25  # between two evaluations
    assert h.diverged_at == first


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_the_loss_log_cannot_overflow(dtype):
    """Huge finite losses, which a running sum would overflow in their own dtype, are still
    finite losses: no divergence; a -inf after them is one, and a NaN too."""
    from dynamics.train import LossLog

    big = torch.finfo(dtype).max
    log = LossLog(3, "cpu")
    for step in range(1, 4):
        log.write(step, torch.tensor(big, dtype=dtype))
    assert log.first_bad(3) is None
    for bad in (-math.inf, math.nan):
        log = LossLog(3, "cpu")
        for step, v in zip(range(1, 4), (big, big, bad)):
            log.write(step, torch.tensor(v, dtype=dtype))
        assert log.first_bad(3) == 3
