"""Test defaults: the smoke profile, no progress bars, a private dataset cache; nbmake's
notebooks at the gpu profile's sizes, two steps per training, on the stand-in CUDA device."""
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


class _NotebooksAtGpuSizesOnTheStandin:
    """nbmake's one run of each chapter notebook is the gpu-size smoke run: the gpu profile's
    sizes, two steps per training (DYNAMICS_DRY_RUN=2), on the stand-in CUDA device
    (dynamics_ops.standin), results to a temporary folder. A tensor left on the CPU while the model
    is on the device fails there with its file and line, as on a GPU; a shape or memory bug of
    the gpu sizes fails in CI, not on Colab. The smoke-profile run of every notebook, with its
    claims, is the book build's (tests/toolchain/test_book.py), so each notebook is executed once for
    each. An explicit DYNAMICS_DEVICE (e.g. ``DYNAMICS_DEVICE=cpu pytest chapters/x.ipynb``)
    runs the notebook as the environment says instead. A plugin, not a hook of this file:
    this conftest's hooks would reach only the items under tests/."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        import tempfile

        from dynamics.runtime import GPU_SMOKE_ENV

        notebook = item.path.suffix == ".ipynb" and "DYNAMICS_DEVICE" not in os.environ
        saved = {k: os.environ.get(k) for k in [*GPU_SMOKE_ENV, "DYNAMICS_RESULTS_DIR"]}
        tmp = tempfile.TemporaryDirectory(prefix="dynamics-gpu-smoke-") if notebook else None
        if notebook:
            os.environ.update(GPU_SMOKE_ENV, DYNAMICS_RESULTS_DIR=tmp.name)
        try:
            yield
        finally:
            if notebook:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
                tmp.cleanup()


class _LongestFirst:
    """The longest tests first: the rendered book, then the chapter notebooks, then the rest in
    their order. pytest-xdist hands out the test files in the order collected, so two workers
    share the long files from the start and the short ones fill the gaps; in the order
    collected (tests/ before chapters/), the notebooks came last and ran one after another on
    one worker while the other stood idle. A plugin, for the same reason as above."""

    @staticmethod
    def pytest_collection_modifyitems(items):
        def rank(item) -> int:
            if item.get_closest_marker("book"):
                return 0
            return 1 if item.path.suffix == ".ipynb" else 2

        items.sort(key=rank)  # stable: within a rank, the order collected


def pytest_configure(config):
    config.pluginmanager.register(_NotebooksAtGpuSizesOnTheStandin(), "notebooks-at-gpu-sizes")
    config.pluginmanager.register(_LongestFirst(), "longest-first")


@pytest.fixture(autouse=True)
def _no_active_runtime():
    """Each test starts with no active runtime (dynamics.setup() in one test must not decide
    another test's profile, seed or device) and leaves none behind."""
    from dynamics import runtime

    runtime.deactivate()
    yield
    runtime.deactivate()
