import pytest
import torch

import dynamics
from dynamics import runtime
from dynamics.config import Config, param
from dataclasses import dataclass


def test_profile_from_env(monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "cpu")
    assert runtime.get_profile() == "cpu"
    monkeypatch.setenv("DYNAMICS_PROFILE", " Smoke ")
    assert runtime.get_profile() == "smoke"


def test_default_profile_follows_hardware(monkeypatch):
    monkeypatch.delenv("DYNAMICS_PROFILE", raising=False)
    assert runtime.get_profile() == ("gpu" if torch.cuda.is_available() else "cpu")


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


def test_setup_prints_one_line(capsys, monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "smoke")
    rt = dynamics.setup(seed=3)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    assert "profile smoke" in out[0] and f"torch {torch.__version__}" in out[0]
    assert "device" in out[0] and "seed 3" in out[0]
    assert rt.seed == 3 and rt.profile == "smoke"


def test_pick():
    assert runtime.pick("smoke", smoke=1, cpu=2, gpu=3) == 1
    assert runtime.pick("gpu", smoke=1, cpu=2) == 2
    with pytest.raises(ValueError):
        runtime.pick("cpu", gpu=3)


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


def test_progress_bars_switch_off_in_a_block(monkeypatch):
    from dynamics.runtime import progress_bars, progress_enabled

    monkeypatch.setenv("DYNAMICS_PROGRESS", "1")
    assert progress_enabled() and not progress_enabled(False)
    with progress_bars(False):
        assert not progress_enabled() and progress_enabled(True)
    assert progress_enabled()
    monkeypatch.setenv("DYNAMICS_PROGRESS", "no")
    assert not progress_enabled()
