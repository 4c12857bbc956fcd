"""dynamics_ops.standin: a CUDA device on the CPU that refuses what CUDA refuses, names the line
that asked for it, and computes every value exactly as the CPU does."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

from dynamics import models, runtime

from dynamics_ops import standin
from dynamics_ops.standin import PlacementError


@pytest.fixture
def cuda():
    with standin.active() as device:
        yield device


def _line_of(marker: str) -> int:
    """The line of this file that contains ``marker`` (where a planted mistake is)."""
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return 1 + next(i for i, ln in enumerate(lines) if marker in ln and "_line_of" not in ln)


def test_device_tensors_report_cuda_and_hold_cpu_values(cuda):
    x = torch.arange(6.0).reshape(2, 3).to("cuda")
    assert x.device == torch.device("cuda", 0) and x.is_cuda and not x.is_cpu
    assert torch.zeros(3, device="cuda").device.type == "cuda"
    assert torch.tensor([1.0, 2.0], device="cuda").is_cuda and torch.ones(2).cuda().is_cuda
    y = (x * 2).sum(0)
    assert y.is_cuda and y.tolist() == [6.0, 10.0, 14.0] and f"{y.sum():.1f}" == "30.0"
    back = y.cpu()
    assert type(back) is torch.Tensor and back.numpy().tolist() == [6.0, 10.0, 14.0]
    assert torch.cuda.is_available() and torch.cuda.get_device_capability() == (7, 5)


def test_what_cuda_allows_mixes(cuda):
    x = torch.randn(4, 3, device="cuda")
    assert (x * torch.tensor(2.0)).is_cuda  # a 0-dim CPU tensor is a scalar, as in CUDA
    assert x[torch.tensor([0, 2])].shape == (2, 3)  # CPU indices into a device tensor
    assert x[torch.tensor([True, False, True, False])].shape == (2, 3)
    cpu = torch.empty(4, 3)
    cpu.copy_(x)  # copies between devices
    x.copy_(cpu + 1)
    x.t_()  # in-place metadata changes keep the wrapper in step
    assert x.shape == (3, 4) and torch.equal(x.cpu(), (cpu + 1).t())


@pytest.mark.parametrize("mistake", [
    lambda x: x + torch.ones(3),
    lambda x: torch.where(torch.ones(4, 3) > 0, x, 0.0),
    lambda x: torch.ones(3, 4) @ x,
    lambda x: torch.zeros(4)[torch.tensor([0, 1]).cuda()],
])
def test_a_non_scalar_cpu_tensor_meeting_the_device_raises(cuda, mistake):
    with pytest.raises(PlacementError, match="same device.*cuda:0 and cpu"):
        mistake(torch.randn(4, 3, device="cuda"))


def test_numpy_of_a_device_tensor_raises(cuda):
    x = torch.randn(3, device="cuda")
    with pytest.raises(PlacementError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    with pytest.raises(PlacementError, match="to numpy"):
        np.asarray(x)
    assert x.cpu().numpy().shape == (3,)


@pytest.mark.parametrize("draw", [
    lambda g: torch.randn(3, device="cuda", generator=g),
    lambda g: torch.rand(3, device="cuda", generator=g),
    lambda g: torch.randint(0, 5, (3,), device="cuda", generator=g),
    lambda g: torch.randperm(5, device="cuda", generator=g),
    lambda g: torch.empty(3, device="cuda").normal_(generator=g),
    lambda g: torch.full((3,), 0.5, device="cuda").bernoulli_(generator=g),
    lambda g: torch.multinomial(torch.ones(4, device="cuda"), 2, generator=g),
])
def test_a_cpu_generator_sampling_onto_the_device_raises(cuda, draw):
    with pytest.raises(PlacementError, match="Expected a 'cuda' device type for generator"):
        draw(torch.Generator().manual_seed(0))
    on_device = torch.Generator(device="cuda").manual_seed(0)
    assert on_device.device.type == "cuda" and draw(on_device).is_cuda  # its own kind is fine
    with pytest.raises(PlacementError, match="Expected a 'cpu' device type"):
        torch.randn(3, generator=on_device)


def test_the_error_names_the_file_and_line_of_a_planted_mismatch(cuda):
    """A tiny training whose mask stayed on the CPU: caught at the line that used it."""
    torch.manual_seed(0)
    model = models.MLP(8, 16, 1, 3).to("cuda")
    mask = torch.ones(16, 8)  # the mistake: built on the CPU
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 8, device="cuda"), torch.randint(0, 3, (32,), device="cuda")
    with pytest.raises(PlacementError) as err:
        for _ in range(3):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                model.hidden[0].weight.mul_(mask)  # PLANTED
    assert f"{__file__}:{_line_of('# PLANTED')}" in str(err.value)


def _tiny_training(device: str):
    from dynamics import data as D
    from dynamics.sweep import grid, train_many
    from dynamics.train import Recipe, train

    d = D.gaussian_mixture(64, 32, dim=6, n_classes=3, seed=0, device=device)
    torch.manual_seed(0)
    one = train(models.MLP(6, 16, 2, 3).to(device), d, Recipe(steps=20, eval=10, optimizer="muon"),
                bars=False)
    many = train_many(lambda c: models.MLP(6, 16, 2, 3), d, grid(seed=[0, 1]),
                      Recipe(steps=20, eval=10), strategy="batched",
                      bars=False)
    return one, many


def test_every_value_is_the_cpu_value():
    """train (torch.optim.Muon) and the batched train_many (torch.func, AdamW) on the stand-in give the
    CPU's numbers bit for bit."""
    plain = _tiny_training("cpu")
    with standin.active():
        dev = _tiny_training("cuda")
    def values(h):  # every metric but the clock
        return h.steps, {k: v for k, v in h.metrics.items() if k != "time"}

    assert values(plain[0]) == values(dev[0]) and plain[0].steps == [0, 10, 20]
    assert "train_loss" in values(dev[0])[1] and len(dev[1].histories) == 2
    for a, b in zip(plain[1].histories, dev[1].histories):
        assert values(a) == values(b)


def test_lsuv_runs_where_its_data_is(cuda):
    """init_mlp builds the MLP where x is before LSUV runs its layers on x (it crashed on an
    H100); the pattern before that fix, a CPU model run on device data, is refused here."""
    from dynamics.initialization.science import MLP, init_mlp, lsuv_  # noqa: F401

    x = torch.randn(64, 20, device="cuda")
    model = init_mlp(20, 32, 4, "tanh", "lsuv", x=x)
    assert all(p.is_cuda for p in model.parameters())
    with pytest.raises(PlacementError, match="initialization/science.py"):
        lsuv_(MLP(20, 32, 4, 10, "tanh", init="zero"), x)


def test_the_setting_switches_it_on_and_the_switch_restores_torch(monkeypatch):
    originals = torch.cuda.is_available, torch.Tensor.to, torch.Generator
    monkeypatch.setenv("DYNAMICS_DEVICE", "standin")
    try:
        assert runtime.get_device() == torch.device("cuda") and standin.is_active()
        assert torch.zeros(2, device=runtime.get_device()).is_cuda
    finally:
        standin.deactivate()
    assert (torch.cuda.is_available, torch.Tensor.to, torch.Generator) == originals
    monkeypatch.setenv("DYNAMICS_DEVICE", "stand-in")
    with pytest.raises(ValueError, match="DYNAMICS_DEVICE.*standin"):
        runtime.get_device()


def test_a_thread_runs_on_the_device_too(cuda):
    """A live panel trains in a background thread: the stand-in holds there as well."""
    import threading

    out = {}
    x = torch.randn(3, device="cuda")

    def work():
        try:
            out["y"] = (x + torch.ones(3, device="cuda")).is_cuda
            x + torch.ones(3)
        except PlacementError as e:
            out["refused"] = str(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert out["y"] and "same device" in out["refused"]


def _panels():
    import importlib
    import inspect

    from dynamics import CHAPTERS

    found = []
    for theme in sorted(set(CHAPTERS.values())):
        panels = importlib.import_module(f"dynamics.{theme}.panels")
        found += [(theme, name) for name, fn in inspect.getmembers(panels, inspect.isfunction)
                  if name.endswith("_panel") and not name.startswith("_")
                  and fn.__module__ == panels.__name__]
    return found


@pytest.mark.parametrize("theme, name", _panels(), ids=lambda v: v)
def test_every_live_panels_run_function_runs_on_the_stand_in(theme, name, monkeypatch):
    """What a reader's Run button trains, at its default settings in the smoke profile, two
    steps per training (a dry run: the devices are what is checked here; what a panel shows is
    its theme's panel tests'), on the stand-in device: any tensor left on the CPU while the
    run is on the device raises here."""
    import importlib

    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    panels = importlib.import_module(f"dynamics.{theme}.panels")
    with standin.active():
        panel = getattr(panels, name)("smoke", seed=0)
        panel.click()  # the Run button, in this thread
    assert not panel.status.value.startswith(("failed", "invalid")), panel.status.value
    assert panel.runs == 1 and not panel.running


def test_train_many_builds_each_model_on_its_device():
    """A sweep's models are built where they train (no parameters made on the CPU and copied
    over): inside model_fn the default device is the run's."""
    from dynamics import data
    from dynamics.sweep import grid, train_many
    from dynamics.train import Recipe

    seen = []

    def model_fn(config):
        seen.append(torch.empty(1).device.type)
        return torch.nn.Linear(20, 4)

    with standin.active():
        d = data.gaussian_mixture(64, 32, dim=20, n_classes=4, device="cuda")
        res = train_many(model_fn, d, grid(lr=[0.1, 0.2], seed=[0]), Recipe(steps=3, lr=0.1))
    # the last two builds are the two trained models (before them: shapes-only probes)
    assert seen[-2:] == ["cuda", "cuda"] and len(res.histories) == 2


def test_to_another_device_tensor_lands_on_the_device_and_meta_stays_meta():
    with standin.active():
        keys = torch.ones(3, device="cuda")
        counts = torch.bincount(torch.tensor([0, 1, 1])).to(keys)
        assert counts.device.type == "cuda" and counts.dtype == keys.dtype
        assert (counts * keys[:2]).tolist() == [1.0, 2.0]
        shapes = torch.nn.Linear(3, 2).to("meta")
        assert shapes.weight.is_meta
        with torch.device("meta"):
            assert torch.empty(2).is_meta
