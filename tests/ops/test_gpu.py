"""The GPU paths, proven on a CPU: the logic that picks them, that they change results by no
more than their stated tolerances (fused optimizer steps, TF32 matmuls), and the gpu-size
smoke run (marker ``gpu_sizes``, ``pytest -m gpu_sizes``): every chapter's notebook and
precompute at the gpu profile's sizes, two steps per training, on the stand-in CUDA device."""
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


# ----------------------------------------------------------------------------- gpu-size smoke run


def _chapters():
    from dynamics import CHAPTERS

    return list(CHAPTERS)


@pytest.mark.gpu_sizes
@pytest.mark.parametrize("chapter", _chapters())
def test_notebook_runs_at_gpu_sizes(chapter):
    """The chapter notebook, every cell, at the gpu profile's sizes, two steps per training, on
    the stand-in CUDA device: a shape, dtype, device or memory bug of the gpu sizes fails here,
    not on a reader's Colab. (The 20-minute limit only stops a notebook that hangs.)

    The run is counted (dynamics_ops.gpuwork: launches, host reads, FLOPs, bytes per cell) and
    run again at three steps, and the chapter's work estimated at the gpu profile's real steps
    fails when its launches, host reads or FLOPs grow more than 1.5x over data/gpu_work.csv.
    (While counting, a cut training's Every/LogSpaced evaluations run at step 0 and its last.)"""
    from nbclient.exceptions import CellExecutionError

    from dynamics_ops import gpuwork

    baseline = [r for r in gpuwork.read_baseline() if r["chapter"] == chapter]
    whole = gpuwork.counted_whole(baseline, chapter)  # counted as the baseline was
    try:
        first = gpuwork.count_notebook(chapter, gpuwork.CAPS[0], full_grids=whole)
        rows = gpuwork.count_chapter(chapter, first=first, full_grids=whole)
    except CellExecutionError as e:
        pytest.fail(f"{chapter} failed at gpu sizes:\n{str(e)[-3000:]}")
    problems = gpuwork.growth(rows, baseline)
    assert not problems, "\n".join(problems)
    halved = [dict(r, **{k: int(r[k]) // 2 for k in gpuwork.COMPARED}) for r in baseline]
    assert any(t["launches"] for t in gpuwork.chapter_totals(rows).values())
    assert gpuwork.growth(rows, halved), "the check cannot fail: a halved baseline passed"


@pytest.mark.gpu_sizes
@pytest.mark.parametrize("chapter", _chapters())
def test_the_work_estimate_against_a_real_run(chapter):
    """The estimate that sizes the gpu profile, on a known answer: at the smoke profile's
    sizes a chapter runs in full in minutes on the stand-in, so its real count is at hand
    (``python -m dynamics_ops.gpuwork --check --full-grids``). The chapter's launches and
    FLOPs, which put the README's floors under its time, are estimated at no more than 1.1
    times their real count (a floor stays a floor) and no less than half of it; a chapter
    whose runs stop early (``gpucheck.EARLY_STOPS``, with the reason) at no more than 1.5
    times, and over its real count (else it has no business in that list). (Cells can be
    further off either way: ``--check`` prints them; the README says which and why.)"""
    from nbclient.exceptions import CellExecutionError

    from dynamics_ops import gpucheck

    try:
        rows = gpucheck.check_chapter(chapter, full_grids=True)
    except CellExecutionError as e:
        pytest.fail(f"{chapter} failed while counted at smoke sizes:\n{str(e)[-3000:]}")
    early = chapter in gpucheck.EARLY_STOPS
    for key in ("launches", "flops"):
        est, real = (sum(r[which][key] for r in rows) for which in ("estimate", "real"))
        top = gpucheck.EARLY_TOL if early else gpucheck.CHECK_TOL
        assert not early or est > real, f"{chapter}: listed as stopping early, but not over"
        assert real > 0 and real / 2 <= est <= top * real, (
            f"{chapter}: {key} estimated {est:,}, counted {real:,} ({est / real:.2f}x); "
            + "; ".join(gpucheck.over_counts(rows)))


@pytest.mark.gpu_sizes
@pytest.mark.parametrize("chapter", _chapters())
def test_gpu_precompute_runs_at_gpu_sizes(chapter, tmp_path):
    """``python -m dynamics_ops.precompute <chapter> --profile gpu`` as a dry run on the stand-in
    CUDA device: every training at its gpu sizes for two steps, grids cut to their ends
    (runtime.grid), results to a temporary folder. A shape, dtype, device or memory bug in a
    gpu-only path fails here, not on a reader's Colab. (The 20-minute limit only stops a run
    that hangs: nothing here depends on how fast the machine is.)"""
    import os
    import subprocess
    import sys

    from dynamics.results import ROOT

    env = dict(os.environ, **runtime.GPU_SMOKE_ENV, DYNAMICS_RESULTS_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "lib"),
                                                        os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "dynamics_ops.precompute", chapter, "--profile", "gpu"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, (f"the gpu precompute of {chapter} failed at gpu sizes:\n"
                                  f"{(done.stdout + done.stderr)[-3000:]}")


def test_dry_run_evaluates_where_it_stops(monkeypatch):
    """A dry run whose planned evaluations all lie beyond its few steps still evaluates at its
    last step, so evaluation code at full size runs."""
    from dynamics import data as D
    from dynamics.sweep import train_many
    from dynamics.train import train

    d = D.mnist1d(100, 50, seed=0, device="cpu")
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    h = train(models.MLP(40, 8, 1, 10), d, Recipe(steps=5000, eval=[1000, 5000]), bars=False)
    assert h.steps == [2]
    res = train_many(lambda c: models.MLP(40, 8, 1, 10), d, [{}, {}],
                     Recipe(steps=5000, eval=[1000, 5000]), strategy='batched', bars=False)
    assert [h.steps for h in res.histories] == [[2], [2]]
    monkeypatch.delenv("DYNAMICS_DRY_RUN")
    assert train(models.MLP(40, 8, 1, 10), d, Recipe(steps=4, eval=[10]),
                 bars=False).steps == []


def test_a_real_run_cuts_nothing(monkeypatch):
    """Outside a dry run the helpers give the values and steps unchanged."""
    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    values = [0.1, 0.2, 0.3]
    assert runtime.grid(values) == values and runtime.steps(25000) == 25000
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    assert runtime.grid(values) == [0.1, 0.3] and runtime.steps(25000) == 2
    assert runtime.grid(values, always=[0.2]) == values


def test_no_theme_cuts_a_dry_run_by_hand():
    """The themes cut grids and steps with runtime.grid and runtime.steps only, and none of
    them knows of a cost model (a ledger, a plan of GPU minutes)."""
    import re
    from pathlib import Path

    import dynamics

    lib = Path(dynamics.__file__).parent
    themes = [p for p in lib.glob("*/*.py") if p.parent.name not in ("sweep", "plots")]
    assert len(themes) > 20
    bare = re.compile(r"\b(cap_grid|cap_steps|ledger|gpuplan|planned_seconds|loop_repeats)\b")
    found = [f"{p.relative_to(lib)}:{i}" for p in themes
             for i, line in enumerate(p.read_text().splitlines(), 1) if bare.search(line)]
    assert not found, f"hand-made dry-run cuts or a cost model in {found}"
