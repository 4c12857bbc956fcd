"""The run profile, the device, seeding, and the one-line report every chapter starts with.

A *profile* picks the scale of every experiment in the book:

- ``smoke``: CI. Each chapter runs in well under a minute on two CPU cores and still shows
  its phenomenon (smaller, but real).
- ``cpu``:   a reader without a GPU; each chapter in a few minutes on a laptop.
- ``gpu``:   Colab or a workstation; larger versions, nearer the papers, sized for a T4.

Settings, read from the environment; a bad value is an error that names the setting and
its valid values (never a failure deep inside torch):

- ``DYNAMICS_PROFILE``  smoke | cpu | gpu (default: cpu, or gpu on a CUDA GPU on which every
  chapter was measured to finish within 10 minutes at it: :func:`default_profile`)
- ``DYNAMICS_SEED``     an integer in [0, 2**63 - 1] (default 0)
- ``DYNAMICS_DEVICE``   cpu | cuda | cuda:N | mps, one this machine has (default: the best one),
  or standin: a CUDA device on the CPU that refuses what CUDA refuses (:mod:`dynamics_ops.standin`)
- ``DYNAMICS_THREADS``  a positive integer: torch's CPU threads (default 1)
- ``DYNAMICS_PROGRESS`` 1/0, true/false, on/off, yes/no: progress bars (default on)
- ``DYNAMICS_DRY_RUN``  a number of steps: train every experiment only that long, at full
  size (default off; the gpu-size smoke run of the tests)
- ``DYNAMICS_TF32``     1/0, true/false, on/off, yes/no: TF32 matmuls on Ampere and newer (default on)
- ``DYNAMICS_RESULTS_DIR``, ``DYNAMICS_UNITS_DIR``, ``DYNAMICS_CACHE``: where precomputed
  results, a precompute's units and generated datasets are kept (:func:`folder`)
- ``DYNAMICS_STRICT_CLAIMS`` on/off: a claims table whose asserted row is not reproduced
  refuses to render (the published build); ``DYNAMICS_BOOK_BUILD`` on/off: the kernel runs
  for the static book (set by the book's Sphinx extension)
- ``DYNAMICS_AXE``: a folder holding axe-core's ``axe.min.js`` (the book's accessibility check);
  ``DYNAMICS_ESLINT``, ``DYNAMICS_STYLELINT``: ESLint's and stylelint's npm package folders
  (the linters of the page scripts and styles, :mod:`dynamics_toolchain.scripts`)

Every ``DYNAMICS_*`` variable is read here and nowhere else (tests/test_layout.py).

A run that would take more than about a minute says so before it gets far
(:class:`dynamics.forecast.Forecast`).
"""
from __future__ import annotations

import contextvars
import os
import platform
import random
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

PROFILES = ("smoke", "cpu", "gpu")
_ACTIVE = None  # the Runtime setup() resolved: the one source of settings once it exists
MAX_SEED = 2**63 - 1  # seeds travel through int64 tensors; larger ones overflow inside torch
ON, OFF = ("1", "true", "on", "yes"), ("0", "false", "off", "no")


def switch(name: str, default: bool) -> bool:
    """An on/off setting from the environment (``name``); unset or empty gives ``default``,
    anything but 1/0, true/false, on/off, yes/no is an error that lists those."""
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ON:
        return True
    if raw in OFF:
        return False
    raise ValueError(f"{name}={raw!r} is not an on/off value: use one of "
                     f"{', '.join(ON)} (on) or {', '.join(OFF)} (off)")


def _check_profile(name: str) -> str:
    name = str(name).strip().lower()
    if name not in PROFILES:
        raise ValueError(
            f"unknown profile {name!r}: DYNAMICS_PROFILE must be one of {', '.join(PROFILES)}"
        )
    return name


def get_profile(profile: str | None = None) -> str:
    """The active profile: ``profile`` if given, else what :func:`setup` resolved, else
    ``$DYNAMICS_PROFILE``, else by hardware."""
    if profile is not None:
        return _check_profile(profile)
    if _ACTIVE is not None:
        return _ACTIVE.profile
    env = os.environ.get("DYNAMICS_PROFILE", "").strip()
    if env:
        return _check_profile(env)
    return default_profile()[0]


def default_profile() -> tuple[str, str]:
    """The profile a runtime gets when none is asked for, and why: the cpu profile, unless
    this machine has a CUDA GPU on which every chapter has been *measured* to finish within
    10 minutes at the gpu profile (:func:`dynamics.book.gpu_profile_measured`); until then the
    cpu-sized experiments run on the GPU, so that "Run all" is known to finish."""
    if not torch.cuda.is_available():
        return "cpu", "no GPU here"
    from .book import gpu_profile_measured

    name = torch.cuda.get_device_name(0)
    ok, why = gpu_profile_measured(name)
    return ("gpu", why) if ok else ("cpu", f"on a GPU ({name}): {why}")


def _int_setting(value, name: str, default: str, valid: str, low: int, high: int) -> int:
    """``value`` if given, else ``$name`` (``default`` when unset), as an integer in
    [low, high]; a bad one is an error that names the setting and says what is ``valid``."""
    setting, shown = name.removeprefix("DYNAMICS_").lower(), value
    if value is None:  # from the environment: the error shows the text that was set
        setting, shown = name, os.environ.get(name, "").strip() or default
        try:
            value = int(shown)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= int(value) <= high:
        raise ValueError(f"{setting} must be {valid}, got {shown!r}")
    return int(value)


def get_seed(seed: int | None = None) -> int:
    """The experiment seed: ``seed`` if given, else what :func:`setup` resolved, else
    ``$DYNAMICS_SEED`` (default 0), an integer in [0, 2**63 - 1] (:data:`MAX_SEED`: torch
    keeps seeds in int64 tensors). The one seed convention: a runner's ``seed=None`` means
    this seed; every seed anywhere is checked against this range."""
    if seed is None and _ACTIVE is not None:
        return _ACTIVE.seed
    return _int_setting(seed, "DYNAMICS_SEED", "0", "an integer in [0, 2**63 - 1]", 0, MAX_SEED)


def _mps_available() -> bool:
    return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()


def available_devices() -> list[str]:
    """The devices this machine offers the book: cpu, each CUDA GPU, Apple's mps."""
    found = ["cpu"]
    if torch.cuda.is_available():
        found += ["cuda"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if _mps_available():
        found.append("mps")
    return found


_PLUGIN = None  # the device plugin get_device activated (e.g. the stand-in CUDA device), if any


def device_plugins() -> dict:
    """Devices that other packages add to the book, by name, from the ``dynamics.devices``
    entry points: ``standin`` (CUDA's placement rules on the CPU) is the operations package's
    (``dynamics_ops.standin``). The library never imports those packages: they register here."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group="dynamics.devices")}


def _activate_plugin(name: str, setting: str) -> torch.device:
    global _PLUGIN
    try:
        plugin = device_plugins()[name].load()
    except ImportError as err:
        raise ValueError(f"{setting}={name!r}: its package could not be imported ({err}); install "
                         f"the book's repository with pip install -e .") from None
    plugin.activate()
    _PLUGIN = plugin
    return torch.device(torch.device(plugin.DEVICE).type)  # "cuda", as a real GPU would be named


def plugin_active() -> bool:
    """Whether a device plugin (the stand-in CUDA device) is active now, whether
    :func:`get_device` or a test (``with standin.active():``) turned it on."""
    if _PLUGIN is not None and _PLUGIN.is_active():
        return True
    loaded = (sys.modules.get(ep.value) for ep in device_plugins().values())
    return any(m is not None and m.is_active() for m in loaded)


def get_device(device: str | torch.device | None = None) -> torch.device:
    """The device experiments run on: cuda > mps > cpu, unless ``device`` or
    ``$DYNAMICS_DEVICE`` names one, which must be one this machine has (checked here, so
    that a missing GPU is one clear sentence, not a torch error at the first tensor)."""
    setting = "device"
    if device is None and _ACTIVE is not None:
        return _ACTIVE.device
    if device is None:
        device = os.environ.get("DYNAMICS_DEVICE", "").strip() or None
        setting = "DYNAMICS_DEVICE"
    if isinstance(device, str) and device.strip().lower() in device_plugins():
        return _activate_plugin(device.strip().lower(), setting)
    if device is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps") if _mps_available() else torch.device("cpu")
    if isinstance(device, torch.device) and device.type == "cpu":
        return device
    here = ", ".join(available_devices())
    try:
        dev = torch.device(device.strip().lower() if isinstance(device, str) else device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"{setting}={device!r} is not a device: use cpu, cuda, cuda:N, mps or "
                         f"standin (CUDA's placement rules on the CPU) "
                         f"(this machine has: {here})") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{setting}={device!r}, but CUDA is not available here (no GPU, or "
                             f"torch {torch.__version__} was built without CUDA); this machine "
                             f"has: {here}")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"{setting}={device!r}, but this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s): {here}")
    elif dev.type == "mps":
        if not _mps_available():
            raise ValueError(f"{setting}={device!r}, but Apple's mps backend is not available "
                             f"here (it needs a Mac with Apple silicon); this machine has: {here}")
    elif dev.type != "cpu":
        raise ValueError(f"{setting}={device!r}: the book runs on cpu, cuda, mps or standin "
                         f"(this machine has: {here})")
    return dev


def get_threads(threads: int | None = None) -> int:
    """Torch's CPU threads: ``threads`` if given, else ``$DYNAMICS_THREADS`` (default 1:
    the book's models are small, and one thread avoids OpenMP overhead that made them
    several times slower on two shared cores)."""
    if threads is None and _ACTIVE is not None:
        return _ACTIVE.threads
    return _int_setting(threads, "DYNAMICS_THREADS", "1", "a positive integer (CPU threads for "
                        f"torch, e.g. 1 or {os.cpu_count()})", 1, 4096)


def seed_everything(seed: int) -> torch.Generator:
    """Seed python, numpy and torch; return a CPU generator seeded the same way."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


@contextmanager
def seeded(seed: int):
    """``with seeded(seed): model = build()``: torch's global RNG seeded with ``seed`` inside
    the block (so a model built there is the same on every run) and given back as it was
    after it, so that building a model never reseeds the caller's RNG behind its back."""
    seed = get_seed(seed)
    real_cuda = torch.cuda.is_available() and not plugin_active()  # a stand-in's RNG is the CPU's
    devices = list(range(torch.cuda.device_count())) if real_cuda else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


# ----------------------------------------------------------------------------- progress bars

_PROGRESS: contextvars.ContextVar = contextvars.ContextVar("dynamics_progress_bars", default=None)


def bars_enabled(bars: bool | None = None) -> bool:
    """Whether training loops draw tqdm bars: ``bars`` if given, else what
    :func:`progress_bars` set in this context, else ``$DYNAMICS_PROGRESS`` (default on)."""
    if bars is not None:
        return bool(bars)
    forced = _PROGRESS.get()
    if forced is not None:
        return forced
    return switch("DYNAMICS_PROGRESS", True)


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
# grids' ends) but only ``n`` steps per training: it proves a profile (the gpu one, on the
# stand-in CUDA device of a CPU) end to end in seconds, its shapes, devices and memory. A
# theme cuts a grid with ``grid(values)`` and a step count with ``steps(n)``; ``train`` and
# ``train_many`` cap a Recipe's steps themselves.

# The gpu-size smoke run (what the tests run for every notebook and precompute): the gpu
# profile's sizes, two steps per training, on the stand-in CUDA device of a CPU.
GPU_SMOKE_ENV = dict(DYNAMICS_PROFILE="gpu", DYNAMICS_DRY_RUN="2", DYNAMICS_DEVICE="standin",
                     DYNAMICS_PROGRESS="0")


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


def grid(values: Sequence, keep: int = 2, always: Sequence = ()) -> list:
    """An axis of a theme's experiment: ``values``, or in a dry run only its ends (``keep``
    of them) and the ``always`` values (a reference the results need)::

        for depth in runtime.grid(cfg.depths):
            ...
    """
    full = list(values)
    ends = cap_grid(full, keep)
    return [v for v in full if v in ends or v in always] if always else ends


def steps(n: int) -> int:
    """``n`` steps (or iterations), or the dry run's cap when that is smaller: for a runner
    that builds its own loop or evaluation schedule from the step count."""
    return cap_steps(n)


FOLDERS = {  # setting -> what it holds
    "DYNAMICS_RESULTS_DIR": "where precomputed results are read and written (default data/)",
    "DYNAMICS_UNITS_DIR": "where a precompute keeps its finished units (default <results>/units)",
    "DYNAMICS_CACHE": "where generated datasets are cached (default ~/.cache/dynamics)",
    "DYNAMICS_AXE": "a folder holding axe-core's axe.min.js",
    "DYNAMICS_ESLINT": "ESLint's npm package folder, @eslint/js and globals beside it",
    "DYNAMICS_STYLELINT": "stylelint's npm package folder",
}


def folder(name: str):
    """The folder a ``DYNAMICS_*`` path setting names (:data:`FOLDERS`), or None when unset."""
    from pathlib import Path

    if name not in FOLDERS:
        raise ValueError(f"{name} is not a folder setting; the folder settings are {', '.join(FOLDERS)}")
    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser() if raw else None


def strict_claims() -> bool:
    """``DYNAMICS_STRICT_CLAIMS``: an asserted claims row that is not reproduced stops the page."""
    return switch("DYNAMICS_STRICT_CLAIMS", False)


def on_colab() -> bool:
    """Whether this kernel is a Colab runtime (Colab imports ``google.colab`` at start)."""
    return "google.colab" in sys.modules


def in_book_build() -> bool:
    """Whether this kernel executes a chapter for the static book (``$DYNAMICS_BOOK_BUILD``,
    set by the book's Sphinx extension): then nothing is said to a reader who is not there."""
    return switch("DYNAMICS_BOOK_BUILD", False)


# ----------------------------------------------------------------------------- announcements
# A run says what it is about to do when that takes long, and a live panel shows it in its
# status line instead of printing (``announcements_to``).

_SINK: contextvars.ContextVar = contextvars.ContextVar("dynamics_announce", default=None)


def announce(message: str) -> None:
    """Tell the reader something about the run in progress: in a live panel its status line,
    elsewhere one printed line (nothing while the static book is built)."""
    sink = _SINK.get()
    if sink is not None:
        sink(message)
    elif not in_book_build():
        print(message, flush=True)


@contextmanager
def announcements_to(sink: Callable[[str], None]):
    """Send :func:`announce` messages of a block to ``sink`` (a panel's status line)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def duration(seconds: float) -> str:
    """``about 40 s``, ``about 3 min``, ``about 2.6 h``: an estimate, said as one."""
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def smaller_run_hint(profile: str | None = None) -> str:
    """How to get a smaller run than the one about to start, for the active profile."""
    if _SINK.get() is not None:
        return "Stop ends it early."
    profile = get_profile(profile)
    smaller = {"gpu": "cpu", "cpu": "smoke"}.get(profile)
    if smaller:
        return (f"For a smaller run use the {smaller} profile (DYNAMICS_PROFILE={smaller} before "
                f"dynamics.setup()), or interrupt the kernel to stop this one.")
    return "For a shorter run pass fewer steps, or interrupt the kernel to stop this one."


@dataclass(frozen=True)
class Runtime:
    """What a chapter runs with; returned by :func:`setup`, which makes it the active one:
    every runner, panel and precompute that is not given a profile, device, seed or thread
    count reads it (:func:`get_profile` and friends), whether its values came from the
    environment or from :func:`setup`'s arguments."""

    profile: str
    device: torch.device
    seed: int
    threads: int = 1
    why: str = ""  # why this profile (setup: asked for, or the default's reason)

    def report(self) -> str:
        from . import __version__

        gpu = ""
        if self.device.type == "cuda":
            gpu = f" ({torch.cuda.get_device_name(self.device)})"
        return (
            f"profile {self.profile} · device {self.device.type}{gpu} · seed {self.seed} · "
            f"torch {torch.__version__} · dynamics {__version__} · python {platform.python_version()}"
        )

    def choice(self, chapter: str | None = None) -> str:
        """Which profile this runtime has and why, and how to ask for the other (with its
        measured time on this GPU where ``chapter`` is named): the first cell's second line."""
        if self.why:
            why = self.why
        else:
            asked = os.environ.get("DYNAMICS_PROFILE", "").strip()
            why = f"set by DYNAMICS_PROFILE={asked}" if asked else default_profile()[1]
        line = f"The {self.profile} profile: {why}."
        if self.device.type == "cuda" and not plugin_active() and self.profile in ("cpu", "gpu"):
            from .book import gpu_profile_time

            other = "gpu" if self.profile == "cpu" else "cpu"
            cost = (f" (this chapter: {gpu_profile_time(chapter, torch.cuda.get_device_name(self.device))})"
                    if chapter and other == "gpu" else "")
            line += (f" For the {other} profile{cost}: dynamics.setup(profile='{other}') or "
                     f"DYNAMICS_PROFILE={other}.")
        return line

    def warnings(self) -> list[str]:
        """What the reader must know before running anything (e.g. the gpu profile on a CPU)."""
        out = []
        if self.profile == "gpu" and self.device.type == "cpu" and dry_run() is None:
            out.append(
                "WARNING: the gpu profile runs experiments sized for a GPU, which take hours on a CPU, "
                "and this machine has no GPU. Use the cpu profile: set DYNAMICS_PROFILE=cpu (or call "
                "dynamics.setup(profile='cpu')); on Colab, pick a GPU under Runtime > Change "
                "runtime type.")
        return out


def tf32_matmuls(device) -> bool:
    """Let float32 matmuls use TF32 tensor cores on NVIDIA Ampere and newer (compute
    capability 8.0+: A100, H100, L4, RTX 30xx; not Colab's T4). A TF32 product keeps 10 bits
    of mantissa (relative error ~1e-3 per product, accumulated in float32): invisible in the
    book's curves, and several times the float32 matmul rate. PyTorch leaves it off for
    matmuls (convolutions already use it). ``DYNAMICS_TF32`` off (0, false, off, no) keeps
    full float32 (and turns TF32 off if an earlier call turned it on); a bad value is an error
    on any device. Returns whether TF32 matmuls are on."""
    device = torch.device(device)
    wanted = switch("DYNAMICS_TF32", True)
    on = wanted and device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 0)
    if on or torch.backends.cuda.matmul.fp32_precision == "tf32":
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
    return on


def active() -> Runtime | None:
    """The runtime :func:`setup` last resolved (None before the first call)."""
    return _ACTIVE


def deactivate() -> None:
    """Forget the active runtime: the settings are read from the environment again (tests)."""
    global _ACTIVE
    _ACTIVE = None


def setup(profile: str | None = None, seed: int | None = None, quiet: bool = False,
          device: str | torch.device | None = None, threads: int | None = None,
          chapter: str | None = None) -> Runtime:
    """Start a chapter: resolve profile, device, seed and threads (each from its argument, else
    its ``DYNAMICS_*`` variable, else the default; a bad setting is a clear error here, in the
    first cell, not later), make them the active runtime (what every runner and panel reads
    from now on), seed everything, install the book's plotly renderer (and in a local Jupyter,
    load plotly.js into the notebook once so figures draw offline), and print one line saying
    what this run uses and a second saying which profile it chose and why
    (:meth:`Runtime.choice`; ``chapter`` names the page, for its measured gpu time), plus a
    loud warning when it cannot go well."""
    global _ACTIVE
    from . import CHAPTERS

    if chapter is not None and chapter not in CHAPTERS:
        raise ValueError(f"setup(chapter={chapter!r}): not a chapter; use one of {', '.join(CHAPTERS)}")
    _ACTIVE = None  # resolve afresh: arguments, then the environment
    env = os.environ.get("DYNAMICS_PROFILE", "").strip()
    why = ("asked for in dynamics.setup()" if profile is not None else
           f"set by DYNAMICS_PROFILE={env}" if env else default_profile()[1])
    rt = Runtime(get_profile(profile), get_device(device), get_seed(seed), get_threads(threads),
                 why)
    threads = rt.threads
    bars_enabled()  # a bad DYNAMICS_PROGRESS fails here, not in the first training run
    dry_run()
    _ACTIVE = rt
    seed_everything(rt.seed)
    if rt.device.type == "cpu" or plugin_active():
        torch.set_num_threads(threads)  # the stand-in device computes on the CPU
    tf32_matmuls(rt.device)
    from . import plots  # the renderer that makes figures visible in the static book

    plots.use_book_renderer()
    if not quiet:
        if not in_book_build() and not on_colab():
            plots.load_plotlyjs()
        print(rt.report())
        print(rt.choice(chapter))
    for warning in rt.warnings():  # even when quiet: hours of work must not start unsaid
        print(warning, file=sys.stderr, flush=True)
    return rt
