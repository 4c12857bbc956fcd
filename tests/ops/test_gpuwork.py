"""The gpu-profile work counter (dynamics_ops.gpuwork): known answers first (matmuls of known
shape, host reads one per read, a training's estimate from two dry runs against the real run),
the baseline check on constructed regressions, and in the gpu_sizes tier every chapter's
estimate held to data/gpu_work.csv."""
from __future__ import annotations

import pytest
import torch

from dynamics_ops import gpuwork, standin


def test_matmuls_of_known_shape():
    """N matmuls of (m x k)(k x n): N launches, 2mnk·N FLOPs, N·m·n·4 bytes, no reads."""
    m, k, n, N = 6, 5, 4, 7
    with standin.active():
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        with gpuwork.Counter() as c:
            for _ in range(N):
                a @ b
            a.t()  # a view: no kernel
    assert c.total == [N, 0, 2 * m * n * k * N, N * m * n * 4]


def test_a_host_read_is_counted_once_per_read():
    with standin.active():
        x = torch.arange(6.0, device="cuda")
        with gpuwork.Counter() as c:
            s = x.sum()  # one launch
            for _ in range(5):
                s.item()
            float(s), x.tolist(), x.cpu(), bool(s > 0)  # 4 reads, one launch (the comparison)
        y = torch.ones(3)
        with gpuwork.Counter() as cpu:
            y.sum().item()  # the CPU's tensors: nothing
    assert c.total[:2] == [2, 9]
    assert cpu.total == [0, 0, 0, 0]


def _dataset():
    from dynamics.data import Dataset

    g = torch.Generator().manual_seed(0)
    x, xt = torch.randn(64, 10, generator=g), torch.randn(32, 10, generator=g)
    y, yt = torch.randint(0, 3, (64,), generator=g), torch.randint(0, 3, (32,), generator=g)
    return Dataset(*(t.to("cuda") for t in (x, y, xt, yt)), n_classes=3, name="toy")


def _train_once(recipe):
    from dynamics import models
    from dynamics.train import train

    data = _dataset()
    torch.manual_seed(0)
    model = models.MLP(10, 16, 1, 3).to("cuda")
    with gpuwork.Counter() as c:
        train(model, data, recipe, bars=False)
    return c


@pytest.mark.parametrize("rule", [None, 3, "log", "at"])
@pytest.mark.parametrize("batch_size", [None, 16])
def test_a_training_estimated_from_two_dry_runs_is_the_real_run(monkeypatch, rule, batch_size):
    """A tiny model trained S steps: the estimate from dry runs capped at 2 and 3 steps equals
    the count of the real S-step run, evaluations (every step, every 3, log-spaced, listed)
    included;
    with mini-batches, less each later epoch's reshuffle (assumption 1 of the module)."""
    from dynamics.train import LogSpaced, Recipe

    S = 11
    recipe = Recipe(S, optimizer="adam", lr=1e-2, batch_size=batch_size,
                    eval={"log": LogSpaced(5), "at": [0, 5, 10, 11]}.get(rule, rule))
    with standin.active():
        dry = {}
        for cap in gpuwork.CAPS:
            monkeypatch.setenv("DYNAMICS_DRY_RUN", str(cap))
            dry[cap] = _train_once(recipe).events
        monkeypatch.delenv("DYNAMICS_DRY_RUN")
        real = _train_once(recipe)
    est = gpuwork.estimate(dry)
    assert list(est) == [-1]
    got = [est[-1][k] for k in gpuwork.KEYS]
    assert est[-1]["aligned"] == 1
    if batch_size:  # each epoch's reshuffle (randperm: one launch, 64 int64s) after the first
        missed = -(-S * batch_size // 64) - 1  # is the one thing a third step does not show
        got = [got[0] + missed, got[1], got[2], got[3] + missed * 64 * 8]
    assert got == real.total, (got, real.total)
    assert real.total[1] > S  # the real run's evaluations read: the estimate counted them


def test_a_cut_grid_scales_by_real_over_kept(monkeypatch):
    """Work after a grid cut from 6 values to its 2 ends counts 3 times; before it, once."""
    from dynamics import runtime

    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    with standin.active():
        x = torch.ones(4, device="cuda")
        dry = {}
        for cap in gpuwork.CAPS:
            monkeypatch.setenv("DYNAMICS_DRY_RUN", str(cap))
            with gpuwork.Counter() as c:
                x + 1  # before the grid: once
                for _ in runtime.grid(range(6)):
                    x * 2
            dry[cap] = c.events
    assert gpuwork.estimate(dry)[-1]["launches"] == 1 + 3 * 2


def test_grids_nest_repeat_and_follow_one_another(monkeypatch):
    """Two grids cut with no device work between them nest (6 -> 2 and 4 -> 2: each kept pair
    stands for 6 x 4 / 4 cells); an inner grid called again keeps its outer grid; a new grid
    after device work (the next experiment) replaces them. Each training is runtime.steps(10)
    launches."""
    from dynamics import runtime

    with standin.active():
        x = torch.ones(4, device="cuda")
        dry = {}
        for cap in gpuwork.CAPS:
            monkeypatch.setenv("DYNAMICS_DRY_RUN", str(cap))
            with gpuwork.Counter() as c:
                lrs, wds = runtime.grid(range(6)), runtime.grid(range(4))
                for _ in lrs:
                    for _ in wds:
                        for _ in range(runtime.steps(10)):
                            x + 1  # 6 x 4 x 10 = 240 launches
                for _ in runtime.grid(range(7)):  # the next experiment: an outer loop...
                    for _ in runtime.grid(range(3)):  # ...whose inner grid is called again
                        for _ in range(runtime.steps(10)):
                            x * 2  # 7 x 3 x 10 = 210 launches
                for _ in runtime.grid(range(4)):  # after training: the next experiment
                    x - 1  # 4 launches
            dry[cap] = c.events
    assert gpuwork.estimate(dry)[-1]["launches"] == 240 + 210 + 4


def _rows(launches, reads=10, flops=1000, chapter="grokking"):
    return [dict(chapter=chapter, cell=str(i), source=f"cell {i}", launches=l, host_reads=reads,
                 flops=flops, bytes=8) for i, l in enumerate(launches)]


def test_growth_fails_on_a_constructed_regression():
    """A count over 1.5x its baseline (here: the baseline halved, then a cell multiplied)
    is named with its cell, its factor and the command; growth within 1.5x is not."""
    now = _rows([100, 300])
    assert gpuwork.growth(now, _rows([100, 300])) == []
    assert gpuwork.growth(now, _rows([80, 200])) == []  # 1.43x: within
    halved = _rows([50, 150], reads=5, flops=500)
    problems = gpuwork.growth(now, halved)
    assert len(problems) == 3  # launches, reads and FLOPs
    assert "grokking: estimated launches grew 2.00x (200 -> 400" in problems[0]
    assert "cell 1 ('cell 1') 150 -> 300 (2.0x)" in problems[0]
    assert gpuwork.COMMAND in problems[0]
    one = gpuwork.growth(_rows([100, 900]), _rows([100, 300]))
    assert len(one) == 1 and "cell 1" in one[0] and "2.50x" in one[0]
    assert "no baseline" in gpuwork.growth(now, _rows([1], chapter="lottery_tickets"))[0]
    with pytest.raises(ValueError, match="growth factor"):
        gpuwork.growth(now, now, factor=1.0)


def test_the_baseline_round_trips(tmp_path):
    path = tmp_path / "gpu_work.csv"
    rows = [dict(r, aligned=1) for r in _rows([100, 300])]
    gpuwork.write_baseline(rows, path)
    back = gpuwork.read_baseline(path)
    assert [int(r["launches"]) for r in back] == [100, 300] and back[0]["torch"] == torch.__version__
    assert gpuwork.growth(rows, back) == []



def test_the_bench_runs_the_counter(monkeypatch):
    from dynamics_ops import bench

    seen = []
    monkeypatch.setattr(gpuwork, "main", lambda argv: seen.append(argv) or 0)
    assert bench.main(["gpuwork", "--chapters", "grokking", "--write"]) == 0
    assert seen == [["--chapters", "grokking", "--write"]]


def test_bad_input_names_the_setting():
    with pytest.raises(ValueError, match="cap must be a positive number of steps"):
        gpuwork.count_notebook("grokking", 0)
    with pytest.raises(ValueError, match=r"caps \(2, 3\)"):
        gpuwork.estimate({2: []})
    with pytest.raises(SystemExit):
        gpuwork.main(["no_such_chapter"])


def test_the_committed_baseline_covers_every_chapter():
    from dynamics import CHAPTERS

    rows = gpuwork.read_baseline()
    assert set(r["chapter"] for r in rows) == set(CHAPTERS)
    assert all(int(r["launches"]) >= 0 and r["commit"] and r["torch"] for r in rows)


@pytest.mark.parametrize("name", __import__("gpu_counts").chapters())
def test_each_chapters_runners_launch_no_more_than_recorded(name):
    """Each chapter's reference workload on the stand-in device launches and reads back no
    more than ``tests/data/gpu_counts.json`` recorded, give or take ``gpu_counts.GROWTH``: a
    change that multiplies a runner's kernels or host syncs per step fails here, in CI (the
    notebooks' full gpu-profile counts are the gpu_sizes tier's)."""
    import gpu_counts

    then = gpu_counts.read()["counts"][name]
    now = gpu_counts.count(name)
    assert now["launches"] > 0 and now["host_reads"] > 0  # it ran on the stand-in device
    assert not gpu_counts.grew(name, now, then)


def test_the_count_guard_fails_on_a_constructed_regression():
    """``gpu_counts.grew`` on made-up counts: a doubled launch count and a host read per step
    where there were none are each named; a small rise and any fall are not."""
    import gpu_counts

    then = dict(launches=1000, host_reads=10, flops=5, bytes=7)
    assert gpu_counts.grew("x", dict(then, launches=1100, host_reads=2), then) == []
    said = gpu_counts.grew("x", dict(then, launches=2000, host_reads=110), then)
    assert len(said) == 2 and "launches grew 2.00x (1,000 -> 2,000" in said[0]
    assert "host_reads grew 11.00x" in said[1] and "python tests/gpu_counts.py x" in said[1]
