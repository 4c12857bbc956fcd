"""Test defaults: the smoke profile, no progress bars, a private dataset cache; notebooks on
the stand-in CUDA device."""
import os

os.environ.setdefault("DYNAMICS_PROFILE", "smoke")
os.environ.setdefault("DYNAMICS_PROGRESS", "0")
os.environ.setdefault("DYNAMICS_SEED", "0")

import torch  # noqa: E402

torch.set_num_threads(int(os.environ.get("DYNAMICS_THREADS", "1")))  # small models: see runtime.setup

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

# tests/seeds.py (claim_seeds, SEEDS) is importable from every test module as ``seeds``
sys.path.insert(0, str(Path(__file__).resolve().parent))


import pytest  # noqa: E402


class _NotebooksOnTheStandin:
    """Each chapter notebook (nbmake's one run of it) runs on the stand-in CUDA device
    (dynamics.standin): a tensor left on the CPU while the model is on the device fails there
    with its file and line, as on a GPU, while every value stays the CPU's. The book build
    (tests/test_book.py) keeps the plain CPU. An explicit DYNAMICS_DEVICE wins. A plugin, not
    a hook of this file: this conftest's hooks would reach only the items under tests/."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        notebook = item.path.suffix == ".ipynb" and "DYNAMICS_DEVICE" not in os.environ
        if notebook:
            os.environ["DYNAMICS_DEVICE"] = "standin"
        try:
            yield
        finally:
            if notebook:
                del os.environ["DYNAMICS_DEVICE"]


def pytest_configure(config):
    config.pluginmanager.register(_NotebooksOnTheStandin(), "notebooks-on-the-standin")


@pytest.fixture(autouse=True)
def _no_active_runtime():
    """Each test starts with no active runtime (dynamics.setup() in one test must not decide
    another test's profile, seed or device) and leaves none behind."""
    from dynamics import runtime

    runtime.deactivate()
    yield
    runtime.deactivate()
