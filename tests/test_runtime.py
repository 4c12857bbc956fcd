import pytest
import torch

import dynamics
from dynamics import forecast, runtime
from known import known_answer
from dynamics.config import Config, param
from dataclasses import dataclass


def test_profile_from_env(monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "cpu")
    assert runtime.get_profile() == "cpu"
    monkeypatch.setenv("DYNAMICS_PROFILE", " Smoke ")
    assert runtime.get_profile() == "smoke"


def _session(gpu, runs):
    return {"provenance": {"gpu": gpu, "date": "2026-11-26 16:45 UTC"},
            "runs": [dict(notebook=c, finished=f, sharing=sh, wall_s=w, stopped_at_limit=not f)
                     for c, f, sh, w in runs]}


def _on_gpu(monkeypatch, name, kept):
    from dynamics import book

    monkeypatch.delenv("DYNAMICS_PROFILE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: name)
    monkeypatch.setattr(book, "sessions", lambda path=None: kept)


def test_default_profile_is_one_measured_to_finish(monkeypatch):
    """A CPU runtime gets the cpu profile; a CUDA one gets the gpu profile only where every
    chapter finished alone at it within 10 minutes on a GPU of that name (the committed
    sessions: none did, so the cpu-sized experiments run on the GPU)."""
    from dynamics import CHAPTERS, book

    monkeypatch.delenv("DYNAMICS_PROFILE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert runtime.default_profile() == ("cpu", "no GPU here") and runtime.get_profile() == "cpu"
    fast = [(c, True, 0, 200.0) for c in CHAPTERS]
    committed = book.sessions()  # data/gpu_measured.json: an H100, no chapter alone and finished
    _on_gpu(monkeypatch, "NVIDIA H100 80GB HBM3", committed)
    profile, why = runtime.default_profile()
    assert profile == "cpu" and "H100" in why and "no chapter has yet been measured" in why
    _on_gpu(monkeypatch, "Tesla T4", [_session("Tesla T4", fast)])
    assert runtime.get_profile() == "gpu"
    assert "every chapter has been measured to finish within 10 minutes" in runtime.default_profile()[1]
    # the same times on another GPU, a run that shared the GPU, one over the limit: not measured
    _on_gpu(monkeypatch, "NVIDIA L4", [_session("Tesla T4", fast)])
    assert runtime.get_profile() == "cpu"
    shared = [(c, True, 6 if c == "grokking" else 0, 200.0) for c in CHAPTERS]
    _on_gpu(monkeypatch, "Tesla T4", [_session("Tesla T4", shared)])
    assert runtime.default_profile() == ("cpu", "on a GPU (Tesla T4): grokking have not yet been "
                                                "measured to finish at the gpu profile on this GPU")
    slow = [(c, True, 0, 900.0 if c == "lottery_tickets" else 200.0) for c in CHAPTERS]
    _on_gpu(monkeypatch, "Tesla T4", [_session("Tesla T4", slow)])
    assert runtime.default_profile()[0] == "cpu" and "lottery_tickets took longer than 10 minutes" in \
        runtime.default_profile()[1]
    assert book.gpu_profile_time("grokking", "Tesla T4", [_session("Tesla T4", slow)]) == \
        "measured 3.3 min on this GPU"
    assert book.gpu_profile_time("grokking", "NVIDIA L4", [_session("Tesla T4", slow)]) == \
        "not yet measured on this GPU"


def test_the_first_cell_says_which_profile_and_why(monkeypatch):
    monkeypatch.delenv("DYNAMICS_PROFILE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rt = runtime.Runtime("cpu", torch.device("cpu"), 0, 1, runtime.default_profile()[1])
    assert rt.choice() == "The cpu profile: no GPU here."
    monkeypatch.setenv("DYNAMICS_PROFILE", "smoke")
    assert runtime.Runtime("smoke", torch.device("cpu"), 0).choice() == \
        "The smoke profile: set by DYNAMICS_PROFILE=smoke."


def test_unknown_profile_lists_valid_ones(monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "turbo")
    with pytest.raises(ValueError, match="smoke, cpu, gpu"):
        runtime.get_profile()
    with pytest.raises(ValueError, match="turbo"):
        runtime.get_profile("turbo")


def test_seed_from_env(monkeypatch):
    monkeypatch.setenv("DYNAMICS_SEED", "7")
    assert runtime.get_seed() == 7
    monkeypatch.setenv("DYNAMICS_SEED", "seven")
    with pytest.raises(ValueError, match="integer"):
        runtime.get_seed()
    with pytest.raises(ValueError):
        runtime.get_seed(-1)


def test_device_preference(monkeypatch):
    monkeypatch.delenv("DYNAMICS_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else (
        "mps" if torch.backends.mps.is_available() else "cpu")
    assert runtime.get_device().type == expected
    monkeypatch.setenv("DYNAMICS_DEVICE", "cpu")
    assert runtime.get_device().type == "cpu"


def test_setup_prints_what_it_uses_and_why(capsys, monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "smoke")
    rt = dynamics.setup(seed=3)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2 and out[1] == "The smoke profile: set by DYNAMICS_PROFILE=smoke."
    assert "profile smoke" in out[0] and f"torch {torch.__version__}" in out[0]
    assert "device" in out[0] and "seed 3" in out[0]
    assert rt.seed == 3 and rt.profile == "smoke"


@dataclass
class Demo(Config):
    lr: float = param(1e-3, "learning rate", low=0.0, high=10.0, low_open=True, log=True, smoke=1e-2)
    width: int = param(64, "hidden width", low=1, high=4096, gpu=512)
    act: str = param("relu", "activation", choices=("relu", "tanh"))


def test_config_presets_and_overrides():
    assert Demo.for_profile("smoke").lr == 1e-2
    assert Demo.for_profile("cpu").lr == 1e-3
    assert Demo.for_profile("gpu").width == 512
    assert Demo.for_profile("smoke", width=8).width == 8
    assert Demo().to_dict() == {"lr": 1e-3, "width": 64, "act": "relu"}
    with pytest.raises(ValueError, match="no field"):
        Demo.for_profile("smoke", depth=3)


@pytest.mark.parametrize("bad", [dict(lr=-0.1), dict(lr=0.0), dict(lr=float("nan")),
                                 dict(width=0), dict(act="sigmoid"), dict(width="wide")])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="Demo"):
        Demo(**bad)


def test_dry_run_caps_steps_and_grids(monkeypatch):
    from dynamics.runtime import cap_grid, cap_steps, dry_run

    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    assert dry_run() is None and cap_steps(25000) == 25000 and cap_grid([1, 2, 3, 4]) == [1, 2, 3, 4]
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "1")
    assert dry_run() == 3 and cap_steps(25000) == 3 and cap_steps(2) == 2
    assert cap_grid([0.1, 0.3, 0.5, 0.9]) == [0.1, 0.9] and cap_grid([7]) == [7]
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "5")
    assert cap_steps(100) == 5
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "many")
    with pytest.raises(ValueError, match="DYNAMICS_DRY_RUN"):
        dry_run()


def test_a_dry_run_judges_claims_on_two_seeds(monkeypatch):
    """A dry run's claims run the several-seed path on two seeds, the first and the last (its
    verdicts mean nothing): a grid cut to its ends, which the work counter scales or, counting
    every grid whole, keeps whole; a real run keeps every seed asked for."""
    from dynamics.plots import claim_seeds
    from dynamics_ops import gpuwork, standin

    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    assert claim_seeds(4) == [4, 5, 6] and claim_seeds(0, 5) == [0, 1, 2, 3, 4]
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    assert claim_seeds(4) == [4, 6] and claim_seeds(0, 1) == [0]
    with standin.active(), gpuwork.Counter(full_grids=True):
        assert claim_seeds(4) == [4, 5, 6]


def test_progress_bars_switch_off_in_a_block(monkeypatch):
    from dynamics.runtime import progress_bars, bars_enabled

    monkeypatch.setenv("DYNAMICS_PROGRESS", "1")
    assert bars_enabled() and not bars_enabled(False)
    with progress_bars(False):
        assert not bars_enabled() and bars_enabled(True)
    assert bars_enabled()
    monkeypatch.setenv("DYNAMICS_PROGRESS", "no")
    assert not bars_enabled()


# ----------------------------------------------------------------------------- bad settings name themselves

def test_unavailable_devices_are_clear_errors(monkeypatch):
    if not torch.cuda.is_available():
        monkeypatch.setenv("DYNAMICS_DEVICE", "cuda")
        with pytest.raises(ValueError, match=r"DYNAMICS_DEVICE='cuda', but CUDA is not available.*has: cpu"):
            runtime.get_device()
    if not torch.backends.mps.is_available():
        monkeypatch.setenv("DYNAMICS_DEVICE", "mps")
        with pytest.raises(ValueError, match=r"DYNAMICS_DEVICE='mps', but Apple's mps backend is not available"):
            runtime.get_device()
    for bad in ("gpu", "tpu", "cuda:x"):
        monkeypatch.setenv("DYNAMICS_DEVICE", bad)
        with pytest.raises(ValueError, match=r"use cpu, cuda, cuda:N, mps or standin|the book runs on cpu, cuda, mps or standin"):
            runtime.get_device()
    monkeypatch.setenv("DYNAMICS_DEVICE", " CPU ")
    assert runtime.get_device() == torch.device("cpu")
    monkeypatch.delenv("DYNAMICS_DEVICE")
    with pytest.raises(ValueError, match="device='cuda:7'"):
        runtime.get_device("cuda:7")
    assert "cpu" in runtime.available_devices()


def test_setup_fails_on_a_missing_gpu_in_the_first_cell(monkeypatch):
    """Not later, in Runtime.report or at the first dataset."""
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    monkeypatch.setenv("DYNAMICS_DEVICE", "cuda")
    with pytest.raises(ValueError, match="DYNAMICS_DEVICE"):
        dynamics.setup(quiet=True)


def test_threads_setting(monkeypatch):
    monkeypatch.delenv("DYNAMICS_THREADS", raising=False)
    assert runtime.get_threads() == 1 and runtime.get_threads(3) == 3
    monkeypatch.setenv("DYNAMICS_THREADS", "2")
    assert runtime.get_threads() == 2
    for bad in ("x", "0", "-1", "1.5"):
        monkeypatch.setenv("DYNAMICS_THREADS", bad)
        with pytest.raises(ValueError, match=f"DYNAMICS_THREADS must be a positive integer.*got {bad!r}|"
                                             f"DYNAMICS_THREADS must be a positive integer, got"):
            runtime.get_threads()
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        runtime.get_threads(True)


@pytest.mark.parametrize("value,on", [("1", True), ("yes", True), ("On", True), ("true", True),
                                      ("0", False), ("no", False), ("OFF", False), ("false", False),
                                      ("", True)])
def test_progress_setting_values(monkeypatch, value, on):
    monkeypatch.setenv("DYNAMICS_PROGRESS", value)
    assert runtime.bars_enabled() is on


def test_progress_setting_rejects_unknown_values(monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROGRESS", "maybe")
    with pytest.raises(ValueError, match=r"DYNAMICS_PROGRESS='maybe' is not an on/off value: use one of 1, true, on, yes"):
        runtime.bars_enabled()
    with pytest.raises(ValueError, match="DYNAMICS_PROGRESS"):
        dynamics.setup(quiet=True)  # in the first cell


def test_seeds_past_int64_are_refused_with_the_range(monkeypatch):
    assert runtime.get_seed(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*63 - 1\], got 9223372036854775808"):
        runtime.get_seed(2**63)
    monkeypatch.setenv("DYNAMICS_SEED", str(2**64))
    with pytest.raises(ValueError, match=r"DYNAMICS_SEED must be an integer in \[0, 2\*\*63 - 1\]"):
        runtime.get_seed()
    for bad in (1.5, "3", True):
        with pytest.raises(ValueError, match="seed must be an integer"):
            runtime.get_seed(bad)
    import numpy as np

    assert runtime.get_seed(np.int64(5)) == 5


# ----------------------------------------------------------------------------- scale that announces itself

def test_gpu_profile_on_a_cpu_warns_loudly_in_setup(capsys, monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "gpu")
    monkeypatch.setenv("DYNAMICS_DEVICE", "cpu")
    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    dynamics.setup(quiet=True)
    err = capsys.readouterr().err
    assert "WARNING: the gpu profile" in err and "hours on a CPU" in err
    assert "DYNAMICS_PROFILE=cpu" in err and "Change runtime type" in err
    monkeypatch.setenv("DYNAMICS_PROFILE", "cpu")
    dynamics.setup(quiet=True)
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("DYNAMICS_PROFILE", "gpu")
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")  # a dry run of the gpu profile on a CPU is meant
    dynamics.setup(quiet=True)
    assert capsys.readouterr().err == ""


def _clock(monkeypatch):
    """A fake perf_counter the test advances by hand."""
    now = [100.0]
    monkeypatch.setattr(forecast.time, "perf_counter", lambda: now[0])
    return now


def test_forecast_announces_a_long_run_once(monkeypatch, capsys):
    now = _clock(monkeypatch)
    monkeypatch.setenv("DYNAMICS_PROFILE", "gpu")
    fc = forecast.Forecast("grokking", 25000, "step", device="cpu")
    now[0] += 5.0
    fc.update(1)  # the first step, after 5 s of setup: too early to tell
    assert fc.pending and capsys.readouterr().out == ""
    now[0] += 0.5
    fc.update(2)  # still within the second it is timed for
    assert fc.pending
    now[0] += 0.61
    fc.update(4)  # 0.37 s a step since the first: the setup once, then 24,999 steps at that rate
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("grokking: 25,000 steps, about 2.6 h on this cpu (0.37 s a step).")
    assert "DYNAMICS_PROFILE=cpu" in out and fc.estimate == pytest.approx(5.0 + 1.11 / 3 * 24999)
    now[0] += 100
    fc.update(3)
    assert capsys.readouterr().out == ""  # once


def test_forecast_is_quiet_for_short_runs_and_in_book_builds(monkeypatch, capsys):
    now = _clock(monkeypatch)
    fc = forecast.Forecast("quick", 100, "step")
    now[0] += 0.02
    fc.update(1)
    now[0] += 1.0
    fc.update(51)  # 0.02 s a step since the first
    assert not fc.pending and fc.estimate == pytest.approx(2.0) and fc.message is None
    fc = forecast.Forecast("done at once", 100, "step")
    now[0] += 3.0
    fc.update(100)  # finished before a rate could be timed: its length is its time
    assert fc.estimate == pytest.approx(3.0)
    monkeypatch.setenv("DYNAMICS_BOOK_BUILD", "1")
    fc = forecast.Forecast("long", 1000, "step")
    now[0] += 0.1
    fc.update(1)
    now[0] += 1.0
    fc.update(2)
    assert fc.message and capsys.readouterr().out == ""


@known_answer(forecast.Forecast, how="a fake clock: 60 s of setup, then 1,000 steps at 0.1 s "
              "each; the whole run takes 160 s, and counting the setup once per step would "
              "have said about 6,100 s")
def test_a_forecast_counts_the_setup_once():
    import unittest.mock

    now = [0.0]
    with unittest.mock.patch.object(forecast.time, "perf_counter", lambda: now[0]):
        fc = forecast.Forecast("run", 1000, "step", threshold=1e9)
        now[0] = 60.1
        fc.update(1)
        now[0] = 60.1 + 0.1 * 20
        fc.update(21)
    assert fc.estimate == pytest.approx(160.0)


def test_forecasts_nest_and_a_sweep_speaks_for_its_runs(monkeypatch, capsys):
    now = _clock(monkeypatch)
    with forecast.Forecast("sweep", 1.0, inner=False) as outer:
        inner = forecast.Forecast("one run", 1000, "step")
        now[0] += 0.2
        inner.update(1)
        outer.update(0.001)
        now[0] += 1.8
        inner.update(10)  # 200 s, but the sweep speaks
        assert inner.message is None
        outer.update(0.01)
    assert capsys.readouterr().out.startswith("sweep: about 3 min on this")
    with forecast.Forecast("panel run", 1.0) as outer:
        inner = forecast.Forecast("training", 1000, "step")
        now[0] += 0.2
        inner.update(1)
        outer.update(0.001)
        now[0] += 1.8
        inner.update(10)
        outer.update(0.01)
    out = capsys.readouterr().out
    assert out.startswith("training: 1,000 steps") and "panel run" not in out


def test_announcements_go_where_a_panel_sends_them(capsys):
    seen = []
    with runtime.announcements_to(seen.append):
        runtime.announce("about 3 min")
        assert runtime.smaller_run_hint() == "Stop ends it early."
    runtime.announce("printed")
    assert seen == ["about 3 min"] and capsys.readouterr().out == "printed\n"


def test_smaller_run_hints_by_profile():
    assert "DYNAMICS_PROFILE=cpu" in runtime.smaller_run_hint("gpu")
    assert "DYNAMICS_PROFILE=smoke" in runtime.smaller_run_hint("cpu")
    assert "fewer steps" in runtime.smaller_run_hint("smoke")
    assert runtime.duration(45) == "about 45 s" and runtime.duration(300) == "about 5 min"
    assert runtime.duration(9250) == "about 2.6 h"


def test_setup_is_the_one_source_of_settings(monkeypatch):
    """With DYNAMICS_PROFILE unset, setup(profile="smoke") is what every reader sees: the
    profile, seed, device and threads that get_profile() and friends return, a panel's
    profile, and a config's preset; the environment is read again only after deactivate()."""
    from dynamics import runtime, widgets

    monkeypatch.delenv("DYNAMICS_PROFILE", raising=False)
    monkeypatch.setenv("DYNAMICS_SEED", "3")
    assert runtime.get_profile() == "cpu" and runtime.get_seed() == 3
    rt = runtime.setup(profile="smoke", seed=2**62, quiet=True, threads=1)
    assert runtime.active() is rt
    assert (runtime.get_profile(), runtime.get_seed(), runtime.get_device(),
            runtime.get_threads()) == ("smoke", 2**62, rt.device, 1)
    panel = widgets.Panel(lambda **kw: None, [], title="t")
    assert panel.profile == "smoke"
    assert runtime.get_profile("gpu") == "gpu"  # an argument still wins
    monkeypatch.setenv("DYNAMICS_PROFILE", "gpu")  # the active runtime wins over the env
    assert runtime.get_profile() == "smoke"
    runtime.deactivate()
    assert runtime.get_profile() == "gpu" and runtime.get_seed() == 3


def test_one_seed_range_everywhere(monkeypatch):
    """A seed setup() accepts (up to 2**63 - 1) is one every config accepts."""
    from dynamics import runtime, spectral
    from dynamics.initialization import science as init

    big = runtime.MAX_SEED
    rt = runtime.setup(seed=big, quiet=True)
    assert rt.seed == big
    assert init.SignalConfig.for_profile("smoke", seed=big).seed == big
    assert spectral.science.NSConfig.for_profile("smoke", seed=big).seed == big
    with pytest.raises(ValueError, match="seed"):
        init.SignalConfig.for_profile("smoke", seed=big + 1)


@pytest.mark.parametrize("build", ["lottery", "grokking", "collapse", "spectral", "sweep"])
def test_model_builders_leave_the_callers_rng_alone(build):
    """A model builder seeds its own weights and gives torch's global RNG back as it found
    it: the caller's next draw is what it would have been had the model not been built; the
    same seed still builds the same weights."""
    from dynamics import collapse, data, grokking, lottery, spectral, sweep, train

    def make(seed):
        if build == "lottery":
            cfg = lottery.LotteryConfig.for_profile("smoke")
            return lottery.science.make_model(cfg, data.mnist1d(64, 32, seed=0), seed=seed)
        if build == "grokking":
            return grokking.science.make_model(grokking.GrokConfig.for_profile("smoke"), seed=seed)
        if build == "collapse":
            cfg = collapse.CollapseConfig.for_profile("smoke")
            return collapse.science.make_model(cfg, data.mnist1d(64, 32, seed=0), seed=seed)
        if build == "spectral":
            return spectral.science.mlp(data.mnist1d(64, 32, seed=0), 16, 2, seed=seed)
        run = sweep.runs.Run(config=dict(w=8), lr=0.1, weight_decay=0.0, seed=seed)
        return sweep.runs.build_model(lambda c: torch.nn.Linear(4, c["w"]), run, "cpu")

    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    first = make(5)
    assert torch.equal(torch.rand(3), expected)
    again = make(5)
    for a, b in zip(first.parameters(), again.parameters()):
        assert torch.equal(a, b)


def test_no_runner_reseeds_the_global_rng():
    """A runner seeds its models inside ``runtime.seeded`` (the caller's RNG given back), never
    with a bare ``torch.manual_seed``: only ``runtime`` (``setup``, ``seeded``) and the
    benchmark command, a program of its own, touch the global seed."""
    import re
    from pathlib import Path

    lib = Path(runtime.__file__).parent
    bare = re.compile(r"\b(torch\.manual_seed|np\.random\.seed|random\.seed)\(")
    found = [f"{p.relative_to(lib)}:{n}" for p in sorted(lib.rglob("*.py"))
             if p.name not in ("runtime.py", "bench.py")
             for n, line in enumerate(p.read_text().splitlines(), 1) if bare.search(line)]
    assert not found, f"reseed inside runtime.seeded instead: {found}"
    assert bare.search("    torch.manual_seed(seed)")  # the rule sees what it forbids
