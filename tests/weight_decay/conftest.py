"""The weight-decay tests' shared tiny grid: every decoupling grid at a few cells and steps,
trained once per test module and read back as the published file is (``data/``)."""
import json

import pytest

from dynamics import results
from dynamics.weight_decay import experiments as E
from dynamics.weight_decay import science as S

TINY_GRID = S.DecouplingConfig(lr_low=1e-3, lr_high=10 ** -1.5, n_lr=4, wd_low=1e-2,
                               wd_high=10.0, l2_low=1e-4, l2_high=1e-1, n_wd=7, n_seeds=1,
                               steps=30, width=8, n_train=200, n_evals=2)


@pytest.fixture(scope="module")
def payload():
    fresh = E.run_decoupling(TINY_GRID, 0, bars=False, kinds=tuple(S.GRIDS))
    return E.Decoupling.of(json.loads(json.dumps(results._plain(fresh))))  # as data/ reads back
