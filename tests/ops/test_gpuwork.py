"""The gpu-profile work counter (dynamics_ops.gpuwork): known answers first (matmuls of known
shape, host reads one per read, a training's estimate from two dry runs against the real run),
the baseline check on constructed regressions, and in the gpu_sizes tier every chapter's
estimate held to data/gpu_work.csv."""
from __future__ import annotations

import pytest
import torch

from dynamics_ops import gpucheck, gpuwork, standin


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


def test_a_reshape_that_copies_is_one_launch():
    """Reshaping a transposed matrix copies it (one kernel, ``clone``) and names the copy
    with ``_unsafe_view``, which launches nothing; a contiguous reshape launches nothing."""
    with standin.active():
        a = torch.randn(6, 5, device="cuda")
        with gpuwork.Counter() as c:
            a.t().reshape(30)
        with gpuwork.Counter() as plain:
            a.reshape(30)
    assert c.total == [1, 0, 0, 30 * 4]
    assert plain.total == [0, 0, 0, 0]


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


@pytest.mark.parametrize("rule", [3, "at"])
def test_an_evaluation_hooks_work_is_counted_once_per_evaluation(monkeypatch, rule):
    """An ``on_eval`` hook that keeps a checkpoint (a copy of every parameter) runs after the
    evaluation's ``History.append``: its work is counted per evaluation, not per step, so the
    estimate from two dry runs is the real run's count (it was counted as a step's work, once
    per step, before: the grokking chapter's first run came out twice its real count)."""
    from dynamics import models
    from dynamics.train import Hooks, Recipe, train

    S, kept = 11, []

    def checkpoint(step, history, model):
        kept.append([p.detach().clone() for p in model.parameters()])

    recipe = Recipe(S, optimizer="adam", lr=1e-2, eval={"at": [0, 1, 2, 3, 8, 11]}.get(rule, rule))

    def once():
        data = _dataset()
        torch.manual_seed(0)
        model = models.MLP(10, 16, 1, 3).to("cuda")
        with gpuwork.Counter() as c:
            train(model, data, recipe, hooks=Hooks(on_eval=checkpoint), bars=False)
        return c

    with standin.active():
        dry = {}
        for cap in gpuwork.CAPS:
            monkeypatch.setenv("DYNAMICS_DRY_RUN", str(cap))
            dry[cap] = once().events
        monkeypatch.delenv("DYNAMICS_DRY_RUN")
        real = once()
    est = gpuwork.estimate(dry)[-1]
    assert [est[k] for k in gpuwork.KEYS] == real.total


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


def test_full_grids_count_a_grid_whole_with_nothing_to_scale(monkeypatch):
    """With ``full_grids`` a dry run keeps every value of a grid: 6 values, 6 launches, no grid
    event (so the estimate scales nothing); the cut count scales 2 kept values by 3."""
    from dynamics import runtime

    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    with standin.active():
        x = torch.ones(4, device="cuda")
        with gpuwork.Counter(full_grids=True) as full:
            for _ in runtime.grid(range(6)):
                x * 2
        with gpuwork.Counter() as cut:
            for _ in runtime.grid(range(6)):
                x * 2
    assert full.total[0] == 6 and not [e for e in full.events if e["kind"] == "grid"]
    assert cut.total[0] == 2 and [e["n"] for e in cut.events if e["kind"] == "grid"] == [6]


def test_counted_is_each_cells_work():
    """A run's own count per cell: the difference of the snapshots at its marks."""
    with standin.active():
        x = torch.ones(4, device="cuda")
        with gpuwork.Counter() as c:
            c.mark(0)
            x + 1
            c.mark(1)
            (x * 2).sum().item()
    got = gpucheck.counted(c.events)
    assert got[0]["launches"] == 1 and got[1]["launches"] == 2 and got[1]["host_reads"] == 1
    assert got[-1]["launches"] == 0


def _notebook(schedule_from_cut: bool):
    """A stand-in for count_notebook: two 'cells', each training a tiny model 11 steps; the
    second builds its evaluation interval from the *cut* step count when ``schedule_from_cut``
    (the weight-decay equilibrium runner's old mistake: a dry run of 2 steps evaluates every
    step, and the estimate counts an evaluation at each of the 11)."""
    from dynamics import runtime
    from dynamics.train import Recipe, train

    def count(chapter, cap, timeout=0, profile="smoke", full_grids=False):
        import os

        os.environ["DYNAMICS_DRY_RUN"] = "0" if cap is None else str(cap)
        from dynamics import models

        data = _dataset()
        with gpuwork.Counter(full_grids) as c:
            for cell in (0, 1):
                c.mark(cell)
                torch.manual_seed(0)
                model = models.MLP(10, 16, 1, 3).to("cuda")
                steps = runtime.steps(11)
                every = max(1, (steps if cell and schedule_from_cut else 11) // 3)
                train(model, data, Recipe(steps, optimizer="adam", lr=1e-2, eval=every), bars=False)
        return c.events, {0: "train", 1: "train, its schedule " + ("cut" if schedule_from_cut else "whole")}
    return count


@pytest.mark.parametrize("schedule_from_cut", [False, True])
def test_the_check_finds_an_estimate_off_its_real_count(monkeypatch, schedule_from_cut):
    """``check_chapter`` compares each cell's estimate with a real run's count: exact for a
    training whose schedule is built from the steps asked for, and off (an over-count, marked
    by ``off``) when a runner builds it from the dry run's cut steps."""
    monkeypatch.setattr(gpuwork, "count_notebook", _notebook(schedule_from_cut))
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "0")  # restored after the test
    with standin.active():
        rows = gpucheck.check_chapter("toy")
    assert [r["cell"] for r in rows] == [0, 1]
    assert gpucheck.off(rows[0], "launches") == 1.0 and gpucheck.off(rows[0], "host_reads") == 1.0
    assert rows[0]["real"]["host_reads"] > 3  # the real run's evaluations, each read back
    ratio = gpucheck.off(rows[1], "host_reads")
    if schedule_from_cut:
        assert ratio > gpucheck.CHECK_TOL  # every step evaluated, against every third
    else:
        assert ratio == 1.0 and gpucheck.off(rows[1], "launches") == 1.0


def test_over_counts_names_a_cell_that_holds_a_share_of_the_work():
    """A cell estimated at 1.5x its real launches is named; the same factor on a cell with
    under 1% of the chapter's launches is not (a figure's reads may follow the data); an
    under-count never is."""
    def row(cell, est, real):
        return dict(chapter="toy", cell=cell, source=f"cell {cell}",
                    estimate=dict(launches=est, host_reads=0, flops=0),
                    real=dict(launches=real, host_reads=0, flops=0))
    big = [row(0, 1500, 1000), row(1, 15, 10), row(2, 10, 1000)]
    got = gpucheck.over_counts(big)
    assert len(got) == 1 and "toy cell 0" in got[0] and "1.50x" in got[0]
    assert gpucheck.over_counts([row(0, 1050, 1000)]) == []
    assert gpucheck.over_counts([row(0, 1050, 1000)], tol=1.01)


def test_off_is_estimate_over_real():
    row = dict(estimate=dict(launches=30, host_reads=0, flops=5), real=dict(launches=10, host_reads=0, flops=0))
    assert gpucheck.off(row, "launches") == 3.0 and gpucheck.off(row, "host_reads") == 1.0
    assert gpucheck.off(row, "flops") == float("inf")


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
    # how each chapter was counted: rows without the column were counted with grids cut
    assert [r["grids"] for r in back] == ["cut", "cut"] and not gpuwork.counted_whole(back, "grokking")
    gpuwork.write_baseline([dict(r, chapter="schedules", grids="whole") for r in rows], path)
    back = gpuwork.read_baseline(path)
    assert gpuwork.counted_whole(back, "schedules") and not gpuwork.counted_whole(back, "grokking")



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
    with pytest.raises(SystemExit):
        gpuwork.main(["grokking", "--check", "--write"])
    with pytest.raises(SystemExit):
        gpuwork.main(["grokking", "--timeout", "-5"])


@pytest.mark.parametrize("argv, limit", [([], 1200), (["--full-grids"], None),
                                         (["--timeout", "0"], None),
                                         (["--full-grids", "--timeout", "60"], 60)])
def test_a_cells_time_limit(monkeypatch, argv, limit):
    """A cell may run 1200 s by default, without limit when grids are whole (initialization's
    claims cell builds its ensembles whole for over an hour), or as --timeout says (0: none)."""
    seen = []
    monkeypatch.setattr(gpuwork, "count_chapter", lambda chapter, timeout, keep, full_grids:
                        seen.append(timeout) or [])
    gpuwork.main(["schedules", *argv])
    assert seen == [limit]


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
