"""Test defaults: the smoke profile, no progress bars, a private dataset cache. How nbmake runs
the chapter notebooks is chapters/conftest.py's."""
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


class _LongestFirst:
    """The longest tests first: the rendered book, then the chapter notebooks, then the rest in
    their order. pytest-xdist hands out the test files in the order collected, so two workers
    share the long files from the start and the short ones fill the gaps; in the order
    collected (tests/ before chapters/), the notebooks came last and ran one after another on
    one worker while the other stood idle. A plugin, not a hook of this file: this conftest's
    hooks would reach only the items under tests/."""

    @staticmethod
    def pytest_collection_modifyitems(items):
        def rank(item) -> int:
            if item.get_closest_marker("book"):
                return 0
            return 1 if item.path.suffix == ".ipynb" else 2

        items.sort(key=rank)  # stable: within a rank, the order collected


def pytest_configure(config):
    config.pluginmanager.register(_LongestFirst(), "longest-first")


@pytest.fixture(autouse=True)
def _no_active_runtime():
    """Each test starts with no active runtime (dynamics.setup() in one test must not decide
    another test's profile, seed or device) and leaves none behind."""
    from dynamics import runtime

    runtime.deactivate()
    yield
    runtime.deactivate()
