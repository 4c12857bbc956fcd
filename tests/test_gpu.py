"""The GPU paths, proven on a CPU: the logic that picks them, and that they change results by
no more than their stated tolerances (fused optimizer steps, TF32 matmuls)."""
from __future__ import annotations

import pytest
import torch

from dynamics import models, runtime
from dynamics.train import Recipe, fused_step, make_optimizer


class _FakeCuda(torch.nn.Parameter):
    """A parameter that says it lives on CUDA (to test the choice without a GPU)."""

    @property
    def is_cuda(self):
        return True


def test_fused_step_is_chosen_on_cuda_only():
    cpu = [torch.nn.Parameter(torch.zeros(2))]
    assert fused_step(cpu) == {} and fused_step([]) == {}
    assert fused_step([_FakeCuda(torch.zeros(2))]) == {"fused": True}
    assert fused_step([_FakeCuda(torch.zeros(2)), *cpu]) == {}  # mixed devices: torch's default
    model = models.MLP(8, 4, 1, 3)
    for name in ("sgd", "momentum", "adam", "adam_l2", "adamw"):  # CPU: the default loop, as before
        opt = make_optimizer(model, name, lr=1e-2)
        assert not opt.defaults.get("fused"), name


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam_l2", "adamw"])
def test_fused_step_agrees_with_the_loop(name):
    """torch's fused kernels (CPU has them too) give the per-parameter loop's result to float32
    rounding over 30 steps: rtol 1e-5."""
    ctor = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "adam_l2": torch.optim.Adam,
            "adamw": torch.optim.AdamW}[name]
    kw = dict(lr=1e-2, weight_decay=0.1) | (dict(momentum=0.9) if name == "momentum" else {})
    g = torch.Generator().manual_seed(0)
    start = [torch.randn(16, 8, generator=g), torch.randn(16, generator=g)]
    grads = [[torch.randn_like(t) for t in start] for _ in range(30)]
    results = []
    for fused in (False, True):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        opt = ctor(params, fused=fused, **kw)
        for gs in grads:
            for p, gr in zip(params, gs):
                p.grad = gr.clone()
            opt.step()
        results.append([p.detach() for p in params])
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_tf32_matmuls_on_ampere_and_newer(monkeypatch):
    matmul = torch.backends.cuda.matmul
    before = matmul.fp32_precision
    matmul.fp32_precision = "ieee"
    try:
        assert runtime.tf32_matmuls("cpu") is False
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 5))  # T4
        assert runtime.tf32_matmuls("cuda") is False and matmul.fp32_precision == "ieee"
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))  # H100
        monkeypatch.setenv("DYNAMICS_TF32", "0")
        assert runtime.tf32_matmuls("cuda") is False and matmul.fp32_precision == "ieee"
        monkeypatch.delenv("DYNAMICS_TF32")
        assert runtime.tf32_matmuls("cuda") is True and matmul.fp32_precision == "tf32"
    finally:
        matmul.fp32_precision = before


@pytest.mark.parametrize("off", ["0", "false", "off", "no", " OFF "])
def test_tf32_is_checked_like_every_other_setting(monkeypatch, off):
    """DYNAMICS_TF32 takes the on/off spellings of every switch: any off spelling keeps full
    float32 (even after an earlier call turned TF32 on), a bad value names the setting and its
    valid values, on any device."""
    matmul = torch.backends.cuda.matmul
    before = matmul.fp32_precision
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    try:
        for on in ("1", "true", "on", "yes", ""):
            monkeypatch.setenv("DYNAMICS_TF32", on)
            assert runtime.tf32_matmuls("cuda") is True and matmul.fp32_precision == "tf32"
        monkeypatch.setenv("DYNAMICS_TF32", off)
        assert runtime.tf32_matmuls("cuda") is False and matmul.fp32_precision == "ieee"
        for bad in ("2", "tf32", "enabled"):
            monkeypatch.setenv("DYNAMICS_TF32", bad)
            for device in ("cuda", "cpu"):
                with pytest.raises(ValueError, match=r"DYNAMICS_TF32.*1, true, on, yes.*0, false, off, no"):
                    runtime.tf32_matmuls(device)
    finally:
        matmul.fp32_precision = before


# ----------------------------------------------------------------------------- the ledger


def _mlp_flops(rows: int, dims=(40, 64, 64, 10)) -> int:
    """Forward FLOPs of an MLP on ``rows`` examples: 2 x multiply-adds of its matmuls."""
    return 2 * rows * sum(a * b for a, b in zip(dims[:-1], dims[1:]))


@pytest.fixture
def ledger_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("DYNAMICS_LEDGER", str(path))
    return path


def test_ledger_records_what_a_full_training_would_cost(ledger_file):
    """A dry run of train() trains 3 steps but records the 1,000 asked for, with FLOPs per
    step and per evaluation that match the MLP's matmuls exactly, and its bytes."""
    from dynamics import data as D, ledger
    from dynamics.train import train

    d = D.mnist1d(200, 100, seed=0, device="cpu")
    model = models.MLP(40, 64, 2, 10)
    h = train(model, d, Recipe(steps=1000, eval=100), progress=False)
    assert h.steps == [0, 3]
    (e,) = ledger.read(ledger_file)
    assert (e["kind"], e["planned_steps"], e["planned_evals"], e["steps_run"], e["evals_run"]) == \
        ("train", 1000, 11, 3, 2)
    fwd = _mlp_flops(200)
    # backward: twice the forward, less the gradient of the input (nobody asks for it)
    assert e["step_flops"] == 3 * fwd - 2 * 200 * 40 * 64
    assert e["eval_flops"] == _mlp_flops(200) + _mlp_flops(100)  # train and test sets
    n = models.count_parameters(model)
    assert e["param_bytes"] == e["grad_bytes"] == 4 * n
    assert 8 * n <= e["state_bytes"] <= 8 * n + 64  # AdamW: two moments (+ step counters)
    assert e["data_bytes"] == 4 * 300 * 40 + 8 * 300
    assert 200 * 64 * 4 <= e["saved_bytes"] < 200 * (40 + 3 * 64 + 3 * 10) * 8
    assert e["peak_bytes"] == ledger.Meter.peak(e) > e["data_bytes"] + 4 * 4 * n
    assert e["step_ops"] > 10 and e["eval_ops"] > 5


def test_ledger_of_a_batched_sweep(ledger_file):
    from dynamics import data as D, ledger
    from dynamics.sweep import grid, train_many

    d = D.mnist1d(200, 100, seed=0, device="cpu")
    res = train_many(lambda c: models.MLP(40, 64, 2, 10), d, grid(seed=[0, 1, 2, 3]),
                     Recipe(steps=500, eval=[0, 250, 500]), strategy='batched', progress=False)
    # a dry run evaluates where it stops (the planned 250 and 500 lie beyond it)
    assert res.info["steps"] == 3 and res.histories[0].steps == [0, 3]
    (e,) = ledger.read(ledger_file)
    assert (e["kind"], e["models"], e["planned_steps"], e["planned_evals"], e["steps_run"]) == \
        ("batched", 4, 500, 3, 3)
    assert e["step_flops"] == 4 * (3 * _mlp_flops(200) - 2 * 200 * 40 * 64)
    # full batch: the train-set half of an evaluation is the next step's forward pass, but
    # not at the last step: (test at 0 + both at 3) / 2 evaluations
    assert e["evals_run"] == 2 and e["eval_flops"] == 4 * (2 * _mlp_flops(100) + _mlp_flops(200)) // 2
    n = models.count_parameters(models.MLP(40, 64, 2, 10))
    assert e["param_bytes"] == e["grad_bytes"] == 4 * 4 * n and e["state_bytes"] == 2 * 4 * 4 * n
    # sequential sweeps: one train() line per configuration, each with the planned steps
    train_many(lambda c: models.MLP(40, 64, 2, 10), d, grid(seed=[0, 1]), Recipe(steps=500),
               strategy='sequential', progress=False)
    lines = ledger.read(ledger_file)[1:]
    assert [(x["kind"], x["planned_steps"], x["steps_run"]) for x in lines] == [("train", 500, 3)] * 2


def test_no_ledger_outside_a_measured_dry_run(tmp_path, monkeypatch):
    from dynamics import data as D, ledger
    from dynamics.train import train

    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("DYNAMICS_LEDGER", str(path))  # but no DYNAMICS_DRY_RUN
    train(models.MLP(40, 8, 1, 10), D.mnist1d(50, 20, seed=0, device='cpu'), Recipe(steps=4),
          progress=False)
    assert not ledger.active() and not path.exists()


# ----------------------------------------------------------------------------- the gpu dry run
# Every chapter notebook and every chapter's precompute("gpu") run at the gpu preset's sizes on
# this CPU, two steps per training (DYNAMICS_DRY_RUN=2), MNIST / CIFAR-10 as offline stand-ins,
# results to a temporary folder: a shape, dtype, device or configuration bug in a gpu-only path
# fails here, in CI, not on a reader's Colab. The ledger it keeps is the gpu plan's input.

DRY_RUN_STEPS = 2


@pytest.fixture(scope="module")
def gpu_dry_run(tmp_path_factory):
    """Every chapter's notebook and precompute as a gpu dry run, two at a time (CI has two
    cores; each kernel trains on one thread). Returns (folder, {(chapter, what): result}).
    The 20-minute limit on each only stops a run that hangs: no test here depends on how fast
    a busy machine is (a dry run takes about a minute on an idle core)."""
    from dynamics import CHAPTERS, bench

    out = tmp_path_factory.mktemp("gpu-dry-run")
    return out, bench.dry_run_all(CHAPTERS, out, DRY_RUN_STEPS, workers=2, timeout=1200)


def _chapters():
    from dynamics import CHAPTERS

    return list(CHAPTERS)


@pytest.mark.parametrize("what", ["notebook", "precompute"])
@pytest.mark.parametrize("chapter", _chapters())
def test_gpu_preset_runs_end_to_end(gpu_dry_run, chapter, what):
    _, results = gpu_dry_run
    r = results[(chapter, what)]
    assert r["ok"], f"the gpu preset of {chapter} ({what}) failed in a dry run:\n{r['error']}"


@pytest.mark.parametrize("chapter", _chapters())
def test_gpu_plan_fits_a_t4(gpu_dry_run, chapter):
    """The gpu plan (python -m dynamics.bench gpu) from the dry run's ledger: the chapter's
    largest training fits a Colab T4's 15 GB, notebook and precompute alike."""
    from dynamics import bench, ledger

    out, results = gpu_dry_run
    measured = False
    for what in ("notebook", "precompute"):
        entries = ledger.read(out / f"{chapter}.{what}.jsonl")
        if entries:
            measured = True
            p = bench.plan(entries)
            assert p["peak_bytes"] < bench.T4_MEMORY, bench.plan_line(chapter, p, what)
            assert p["T4"] > 0 and p["H100"] > 0
    assert measured or not results[(chapter, "notebook")]["ok"], f"{chapter}: no training measured"


PATIENCE_S = 600  # a reader's patience: a chapter notebook at the gpu profile on a Colab T4


@pytest.mark.parametrize("chapter", _chapters())
def test_gpu_notebook_within_a_readers_patience(gpu_dry_run, chapter):
    """By the gpu plan, the chapter's notebook runs in at most 10 minutes on a T4 (heavy grids
    are precomputed, not trained live), and the plan the page prints (data/live_cost.csv,
    ``python -m dynamics.bench gpu --write``) is this plan, not a stale one: within 25% (or
    6 s: the table keeps tenths of a second)."""
    from dynamics import bench, ledger

    out, results = gpu_dry_run
    entries = ledger.read(out / f"{chapter}.notebook.jsonl")
    assert entries, (f"{chapter}: no plan, its dry run measured no training: "
                     f"{results[(chapter, 'notebook')]['error'] or 'it trains nothing'}")
    p = bench.plan(entries)
    assert p["T4"] <= PATIENCE_S, bench.plan_line(chapter, p)
    committed = bench.planned_minutes(chapter)
    assert "T4" in committed, f"data/live_cost.csv has no gpu plan for {chapter}"
    assert committed["T4"] * 60 == pytest.approx(p["T4"], rel=0.25, abs=6), (
        f"{chapter}: the page says {committed['T4']:.1f} min on a T4, the plan now "
        f"{p['T4'] / 60:.1f} min; rewrite it with python -m dynamics.bench gpu --write")


@pytest.mark.parametrize("chapter", _chapters())
def test_precompute_plan_unit_by_unit_is_this_plan(gpu_dry_run, chapter):
    """The plan whose estimate a resumable gpu precompute's bar shows, unit by unit
    (data/precompute_plan.json, ``python -m dynamics.bench gpu --write``), is this dry run's,
    not a stale one: the same units, and the precompute's total within 25% on a T4."""
    from dynamics import bench, ledger, units

    out, results = gpu_dry_run
    entries = ledger.read(out / f"{chapter}.precompute.jsonl")
    committed = units.read_unit_plan().get(chapter)
    if not entries:  # the chapter precomputes nothing (its dry run must still have run)
        assert results[(chapter, "precompute")]["ok"] and committed is None, chapter
        return
    row = bench.unit_plan(entries)
    assert committed, f"data/precompute_plan.json has no plan for {chapter}: python -m dynamics.bench gpu --write"
    assert sorted(committed["units"]) == sorted(row["units"]), chapter
    assert committed["total"]["T4"] == pytest.approx(row["total"]["T4"], rel=0.25, abs=6), (
        f"{chapter}: the committed precompute plan says {committed['total']['T4'] / 60:.1f} min on "
        f"a T4, the dry run now {row['total']['T4'] / 60:.1f} min; rewrite it with "
        "python -m dynamics.bench gpu --write")


def test_ledger_work_scales_a_themes_own_loop(ledger_file):
    """Work that is not a training enters the plan through ledger.work(desc, scale)."""
    from dynamics import ledger

    a, b = torch.randn(64, 32), torch.randn(32, 16)
    with ledger.work("random networks", scale=10):
        a @ b
    (e,) = ledger.read(ledger_file)
    assert e["kind"] == "work" and e["step_flops"] == 10 * 2 * 64 * 32 * 16 and e["step_ops"] == 10
    assert e["planned_steps"] == 1 and e["peak_bytes"] == 2 * 64 * 16 * 4


def test_dry_run_evaluates_where_it_stops(monkeypatch):
    """A dry run whose planned evaluations all lie beyond its few steps still evaluates at its
    last step, so evaluation code at full size runs (and the plan knows its cost)."""
    from dynamics import data as D
    from dynamics.sweep import train_many
    from dynamics.train import train

    d = D.mnist1d(100, 50, seed=0, device="cpu")
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    h = train(models.MLP(40, 8, 1, 10), d, Recipe(steps=5000, eval=[1000, 5000]), progress=False)
    assert h.steps == [2]
    res = train_many(lambda c: models.MLP(40, 8, 1, 10), d, [{}, {}],
                     Recipe(steps=5000, eval=[1000, 5000]), strategy='batched', progress=False)
    assert [h.steps for h in res.histories] == [[2], [2]]
    monkeypatch.delenv("DYNAMICS_DRY_RUN")
    assert train(models.MLP(40, 8, 1, 10), d, Recipe(steps=4, eval=[10]),
                 progress=False).steps == []


def test_planned_steps_of_a_training_its_caller_capped(ledger_file):
    """A runner that needs its step count before training (to build an evaluation schedule)
    cuts it with runtime.steps, which remembers what was planned: the plan counts those steps,
    not the dry run's, as a hand-written ledger.planned(500) block did."""
    from dynamics import data as D
    from dynamics import ledger, runtime
    from dynamics.train import train

    data = D.gaussian_mixture(n_classes=3, dim=8, n_train=60, n_test=30, seed=0)
    steps = runtime.steps(500)
    assert steps == 3 and runtime.planned_steps(steps) == 500
    assert runtime.steps(2) == 2 and runtime.planned_steps(2) == 2  # nothing cut
    train(models.MLP(8, 16, 1, 3), data, Recipe(steps=steps, eval=steps), progress=False)
    with ledger.planned(500):  # what a theme wrote by hand before
        train(models.MLP(8, 16, 1, 3), data, Recipe(steps=runtime.cap_steps(500),
                                                    eval=runtime.cap_steps(500)), progress=False)
    train(models.MLP(8, 16, 1, 3), data, Recipe(steps=int(steps), eval=steps), progress=False)
    auto, by_hand, plain = ledger.read(ledger_file)
    assert _same_entry(auto, by_hand) and auto["planned_steps"] == 500
    assert plain["planned_steps"] == 3


def _same_entry(a: dict, b: dict) -> bool:
    """Two ledger lines that plan the same work (all but the measured bytes of activations,
    which depend on allocation order, and the description)."""
    keys = ("kind", "models", "planned_steps", "planned_evals", "steps_run", "repeats", "widen",
            "step_flops", "param_bytes", "state_bytes")
    return all(a.get(k) == b.get(k) for k in keys)


def test_a_grid_the_dry_run_cut_counts_in_full(ledger_file):
    """The trainings of a loop over an axis cut to its ends (runtime.grid) count
    len(full) / len(kept) times each (nested loops and precompute units multiply), as the
    hand-written ledger.planned(repeats=...) blocks did; the plan multiplies time and FLOPs."""
    from dynamics import bench, ledger, runtime
    from dynamics import data as D
    from dynamics.train import train

    data = D.gaussian_mixture(n_classes=3, dim=8, n_train=60, n_test=30, seed=0)
    lrs, seeds = [1e-3, 3e-3, 1e-2, 3e-2], [0, 1, 2]
    kept = runtime.grid(lrs)
    assert kept == [1e-3, 3e-2] and kept.cut == 2 and runtime.grid(seeds).cut == 1.5
    ps = runtime.grid([1.0, 0.5, 0.0, -0.25, -0.5], always=[0.0])  # a reference kept too
    assert ps == [1.0, 0.0, -0.5] and ps.cut == 5 / 3 and runtime.grid(kept).cut == 2

    def one():
        train(models.MLP(8, 16, 1, 3), data, Recipe(steps=50, eval=50), progress=False)

    with ledger.planned(repeats=2):  # a precompute unit that stands for two
        for lr in runtime.grid(lrs):
            for seed in runtime.grid(seeds):
                one()
    one()  # outside the loops: nothing cut
    for lr in runtime.cap_grid(lrs):  # what a theme wrote by hand before
        with ledger.planned(repeats=ledger.cut((lrs, runtime.cap_grid(lrs)))):
            one()
    *cut, plain, by_hand, by_hand2 = ledger.read(ledger_file)
    assert [e["repeats"] for e in cut] == [2 * 2 * 1.5] * 4 and plain["repeats"] == 1
    assert _same_entry(dict(cut[0], repeats=2), by_hand) and by_hand2["repeats"] == 2
    assert bench.plan([cut[0]])["flops"] == 6 * bench.plan([plain])["flops"]
    assert bench.estimate([cut[0]], "T4") == pytest.approx(6 * bench.estimate([plain], "T4"))


def test_a_loop_the_dry_run_cut_ends_in_any_order(ledger_file):
    """Loops over cut axes that end early (break) or together (zip) leave no cut behind."""
    from dynamics import ledger, runtime

    a, b = runtime.grid(range(6)), runtime.grid(range(4))
    for x in a:
        break
    assert runtime.loop_repeats() == 1.0
    for x, y in zip(a, b):
        assert runtime.loop_repeats() == 3 * 2
    assert list(a) == [0, 5] and runtime.loop_repeats() == 1.0
    assert not ledger.read(ledger_file)


def test_a_real_run_cuts_nothing(monkeypatch):
    """Outside a dry run the helpers give the values and steps unchanged (the same objects:
    a precompute is bit for bit what it was)."""
    from dynamics import runtime

    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    values = [0.1, 0.2, 0.3]
    kept = runtime.grid(values)
    assert kept == values and kept.cut == 1.0 and runtime.steps(25000) == 25000
    assert type(runtime.steps(25000)) is int and runtime.loop_repeats() == 1.0


def test_a_batched_grid_the_dry_run_cut_widens(ledger_file):
    """Cut axes given to sweep.grid (or a cut list of configurations) widen the train_many
    call that trains them, as a hand-written ledger.planned(widen=...) block did."""
    from dynamics import ledger, runtime
    from dynamics.sweep import grid, train_many

    data = __import__("dynamics.data", fromlist=["x"]).gaussian_mixture(
        n_classes=3, dim=8, n_train=60, n_test=30, seed=0)
    lrs, seeds = [1e-3, 3e-3, 1e-2, 3e-2], [0, 1, 2]
    configs = grid(lr=runtime.grid(lrs), seed=runtime.grid(seeds))
    assert len(configs) == 4 and configs.cut == 3
    fn, recipe = (lambda c: models.MLP(8, 16, 1, 3)), Recipe(steps=50, eval=50)
    train_many(fn, data, configs, recipe, strategy="batched", progress=False)
    train_many(fn, data, runtime.grid([dict(lr=x) for x in lrs]), recipe, strategy="batched",
               progress=False)
    with ledger.planned(widen=3):  # what a theme wrote by hand before
        train_many(fn, data, grid(lr=runtime.cap_grid(lrs), seed=runtime.cap_grid(seeds)),
                   recipe, strategy="batched", progress=False)
    auto, listed, by_hand = ledger.read(ledger_file)
    assert (auto["widen"], auto["repeats"], listed["widen"]) == (3, 1, 2)
    assert _same_entry(auto, by_hand)
    train_many(fn, data, configs, recipe, strategy="sequential", progress=False)
    assert [e["repeats"] for e in ledger.read(ledger_file)[3:]] == [3] * 4


def test_a_batched_call_the_dry_run_narrowed_widens(ledger_file):
    """widen: the full run puts more models into the same batched call, so FLOPs and memory
    grow and dispatched ops do not; trained one at a time, widening is repeating."""
    from dynamics import bench, ledger
    from dynamics import data as D
    from dynamics.sweep import grid, train_many
    from dynamics.train import train

    data = D.gaussian_mixture(n_classes=3, dim=8, n_train=60, n_test=30, seed=0)
    with ledger.planned(widen=3):
        train(models.MLP(8, 16, 1, 3), data, Recipe(steps=50, eval=50), progress=False)
        train_many(lambda c: models.MLP(8, 16, 1, 3), data, grid(lr=[0.001, 0.01]),
                   Recipe(steps=50, eval=50), strategy='batched', progress=False)
    one, batched = ledger.read(ledger_file)
    assert (one["repeats"], one["widen"]) == (3, 1) and batched["kind"] == "batched"
    assert (batched["repeats"], batched["widen"]) == (1, 3)
    narrow = dict(batched, widen=1.0)
    assert bench.plan([batched])["flops"] == 3 * bench.plan([narrow])["flops"]
    assert bench.peak_bytes(batched) - batched["data_bytes"] == \
        3 * (bench.peak_bytes(narrow) - narrow["data_bytes"])
    peak, achieved, _ = bench.GPUS["T4"]  # two more models' FLOPs, no more ops
    extra = bench.estimate([batched], "T4") - bench.estimate([narrow], "T4")
    assert extra == pytest.approx(2 * bench.plan([narrow])["flops"] / (peak * achieved))


def test_no_theme_cuts_a_dry_run_by_hand():
    """The dry run records itself: the themes cut grids and steps with runtime.grid and
    runtime.steps, never with the bare cuts or hand-written ledger blocks (which went wrong:
    a block that forgot an axis made the gpu plan under-count)."""
    import re
    from pathlib import Path

    import dynamics

    lib = Path(dynamics.__file__).parent
    themes = [p for p in lib.glob("*/*.py") if p.parent.name != "sweep"]
    assert len(themes) > 20
    bare = re.compile(r"\b(cap_grid|cap_steps|ledger\.planned|ledger\.cut)\b")
    found = [f"{p.relative_to(lib)}:{i}" for p in themes
             for i, line in enumerate(p.read_text().splitlines(), 1) if bare.search(line)]
    assert not found, f"hand-made dry-run cuts in {found}"


def test_a_widened_sweep_larger_than_its_chunk_counts_its_chunks(ledger_file):
    """A dry run's batched call stands for ``widen`` times its models; where the GPU's chunk
    holds fewer, the plan counts the chunks one after another: as many more repeats (their
    dispatched ops add up), each less wide (their FLOPs stay the same in total)."""
    from dynamics import data as D, ledger
    from dynamics.sweep import grid, train_many

    d = D.mnist1d(200, 100, seed=0, device="cpu")
    make = lambda c: models.MLP(40, 64, 2, 10)  # noqa: E731
    with ledger.planned(widen=5.0):  # the full run: 10 models; chunks of 4 -> 3 chunks
        train_many(make, d, grid(seed=[0, 1]), Recipe(steps=50), strategy=4, progress=False)
        train_many(make, d, grid(seed=[0, 1]), Recipe(steps=50), strategy=10, progress=False)
    chunked, whole = ledger.read(ledger_file)
    assert (chunked["repeats"], chunked["widen"]) == (3, pytest.approx(5 / 3))
    assert (whole["repeats"], whole["widen"]) == (1, 5.0)
