"""The run profile, the device, seeding, and the one-line report every chapter starts with.

A *profile* picks the scale of every experiment in the book:

- ``smoke``: CI. Each chapter runs in well under a minute on two CPU cores and still shows
  its phenomenon (smaller, but real).
- ``cpu``:   a reader without a GPU; each chapter in a few minutes on a laptop.
- ``gpu``:   Colab or a workstation; paper-scale versions.

It is read from ``DYNAMICS_PROFILE`` (default: ``gpu`` when CUDA is available, else ``cpu``);
the seed from ``DYNAMICS_SEED`` (default 0).
"""
from __future__ import annotations

import contextvars
import os
import platform
import random
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

PROFILES = ("smoke", "cpu", "gpu")


def _check_profile(name: str) -> str:
    name = str(name).strip().lower()
    if name not in PROFILES:
        raise ValueError(
            f"unknown profile {name!r}: DYNAMICS_PROFILE must be one of {', '.join(PROFILES)}"
        )
    return name


def get_profile(profile: str | None = None) -> str:
    """The active profile: ``profile`` if given, else ``$DYNAMICS_PROFILE``, else by hardware."""
    if profile is not None:
        return _check_profile(profile)
    env = os.environ.get("DYNAMICS_PROFILE", "").strip()
    if env:
        return _check_profile(env)
    return "gpu" if torch.cuda.is_available() else "cpu"


def get_seed(seed: int | None = None) -> int:
    """The experiment seed: ``seed`` if given, else ``$DYNAMICS_SEED`` (default 0)."""
    if seed is None:
        raw = os.environ.get("DYNAMICS_SEED", "0").strip() or "0"
        try:
            seed = int(raw)
        except ValueError:
            raise ValueError(f"DYNAMICS_SEED must be an integer, got {raw!r}") from None
    if int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return int(seed)


def get_device(device: str | torch.device | None = None) -> torch.device:
    """The device experiments run on: cuda > mps > cpu, unless ``device`` or
    ``$DYNAMICS_DEVICE`` names one."""
    device = device or os.environ.get("DYNAMICS_DEVICE") or None
    if device is not None:
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int) -> torch.Generator:
    """Seed python, numpy and torch; return a CPU generator seeded the same way."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def pick(profile: str | None = None, **by_profile):
    """Choose a value by profile: ``pick(smoke=200, cpu=2000, gpu=20000)``.

    A missing ``gpu`` value falls back to ``cpu``, a missing ``cpu`` to ``smoke``.
    """
    profile = get_profile(profile)
    order = {"smoke": ["smoke"], "cpu": ["cpu", "smoke"], "gpu": ["gpu", "cpu", "smoke"]}
    for name in order[profile]:
        if name in by_profile:
            return by_profile[name]
    raise ValueError(f"pick() needs a value for at least one of {order[profile]}")


# ----------------------------------------------------------------------------- progress bars

_PROGRESS: contextvars.ContextVar = contextvars.ContextVar("dynamics_progress", default=None)


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether training loops draw tqdm bars: ``progress`` if given, else what
    :func:`progress_bars` set in this context, else ``$DYNAMICS_PROGRESS`` (default on)."""
    if progress is not None:
        return bool(progress)
    forced = _PROGRESS.get()
    if forced is not None:
        return forced
    return os.environ.get("DYNAMICS_PROGRESS", "1").strip().lower() not in ("0", "false", "off", "no")


@contextmanager
def progress_bars(on: bool):
    """Switch tqdm bars on or off inside a block (a live panel has its own progress bar)."""
    token = _PROGRESS.set(bool(on))
    try:
        yield
    finally:
        _PROGRESS.reset(token)


# ----------------------------------------------------------------------------- dry runs
# ``DYNAMICS_DRY_RUN=<n>`` runs every experiment at its profile's *sizes* (models, data,
# grids' extremes) but only ``n`` steps per training and two cells per grid: it proves a
# profile (the gpu one, on a CPU) end to end in seconds. Training loops cap their steps with
# ``cap_steps``; grids and lists of runs are cut with ``cap_grid``.

def dry_run() -> int | None:
    """Steps per training in a dry run (``$DYNAMICS_DRY_RUN``), or None in a real run."""
    raw = os.environ.get("DYNAMICS_DRY_RUN", "").strip().lower()
    if raw in ("", "0", "false", "off", "no"):
        return None
    if raw in ("1", "true", "on", "yes"):
        return 3
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"DYNAMICS_DRY_RUN must be a number of steps (or 0/1), got {raw!r}") from None
    if n < 1:
        raise ValueError(f"DYNAMICS_DRY_RUN must be a positive number of steps, got {n}")
    return n


def cap_steps(steps: int) -> int:
    """``steps``, or the dry run's step cap when that is smaller."""
    cap = dry_run()
    return steps if cap is None else min(int(steps), cap)


def cap_grid(values: Sequence, keep: int = 2) -> list:
    """``values``, or in a dry run only its first and last (``keep`` values, ends first)."""
    values = list(values)
    if dry_run() is None or len(values) <= keep:
        return values
    idx = sorted({round(i * (len(values) - 1) / (keep - 1)) for i in range(keep)}) if keep > 1 else [0]
    return [values[i] for i in idx]


@contextmanager
def cpu_threads(n: int = 1, device=None):
    """Run a block with ``n`` torch threads on the CPU (the previous setting is restored);
    a no-op on other devices. The book's models are small: intra-op parallelism does not pay,
    and on a busy 2-core machine an extra thread spins."""
    if device is not None and torch.device(device).type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass(frozen=True)
class Runtime:
    """What a chapter runs with; returned by :func:`setup`."""

    profile: str
    device: torch.device
    seed: int

    def report(self) -> str:
        from . import __version__

        gpu = ""
        if self.device.type == "cuda":
            gpu = f" ({torch.cuda.get_device_name(self.device)})"
        return (
            f"profile {self.profile} · device {self.device.type}{gpu} · seed {self.seed} · "
            f"torch {torch.__version__} · dynamics {__version__} · python {platform.python_version()}"
        )


def tf32_matmuls(device) -> bool:
    """Let float32 matmuls use TF32 tensor cores on NVIDIA Ampere and newer (compute
    capability 8.0+: A100, H100, L4, RTX 30xx; not Colab's T4). A TF32 product keeps 10 bits
    of mantissa (relative error ~1e-3 per product, accumulated in float32): invisible in the
    book's curves, and several times the float32 matmul rate. PyTorch leaves it off for
    matmuls (convolutions already use it). ``DYNAMICS_TF32=0`` keeps full float32. Returns
    whether TF32 matmuls are on."""
    device = torch.device(device)
    on = (device.type == "cuda" and os.environ.get("DYNAMICS_TF32", "1").strip() != "0"
          and torch.cuda.get_device_capability(device) >= (8, 0))
    if on:
        torch.backends.cuda.matmul.fp32_precision = "tf32"
    return on


def setup(profile: str | None = None, seed: int | None = None, quiet: bool = False) -> Runtime:
    """Start a chapter: resolve profile, device and seed, seed everything, install the
    book's plotly renderer, and print one line saying what this run uses."""
    rt = Runtime(get_profile(profile), get_device(), get_seed(seed))
    seed_everything(rt.seed)
    if rt.device.type == "cpu":
        # The book's models are small: one thread avoids OpenMP overhead that made them
        # several times slower on 2 shared cores. DYNAMICS_THREADS overrides.
        torch.set_num_threads(max(1, int(os.environ.get("DYNAMICS_THREADS", "1"))))
    tf32_matmuls(rt.device)
    from . import plots  # the renderer that makes figures visible in the static book

    plots.use_book_renderer()
    if not quiet:
        print(rt.report())
    return rt
