"""How pytest runs a chapter notebook (nbmake; ``pytest`` or ``pytest chapters/x.ipynb``): the
device smoke run. The smoke profile's sizes, two steps per training (``DYNAMICS_DRY_RUN=2``),
on the stand-in CUDA device (``dynamics_ops.standin``), results to a temporary folder: every
cell runs, and a tensor left on the CPU while the model is on the device fails with its file
and line, as on a GPU. What the notebook *shows* (its claims at the smoke profile) is the book
build's run (tests/toolchain/test_book.py); its run at the gpu profile's sizes is the
``gpu_sizes`` tier (tests/ops/test_gpu.py). An explicit ``DYNAMICS_DEVICE`` (e.g.
``DYNAMICS_DEVICE=cpu pytest chapters/x.ipynb``) runs the notebook as the environment says
instead. The hooks of this file reach only the notebooks under chapters/."""
import os
import tempfile

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    from dynamics.runtime import GPU_SMOKE_ENV

    STANDIN_SMOKE_ENV = dict(GPU_SMOKE_ENV, DYNAMICS_PROFILE="smoke")  # smoke sizes, 2 steps, stand-in
    if item.path.suffix != ".ipynb" or "DYNAMICS_DEVICE" in os.environ:
        yield
        return
    saved = {k: os.environ.get(k) for k in [*STANDIN_SMOKE_ENV, "DYNAMICS_RESULTS_DIR"]}
    with tempfile.TemporaryDirectory(prefix="dynamics-device-smoke-") as tmp:
        os.environ.update(STANDIN_SMOKE_ENV, DYNAMICS_RESULTS_DIR=tmp)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
