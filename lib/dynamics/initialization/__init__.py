"""Initialization: how the first weights decide whether a deep network can learn, and how fast.

The chapter ``chapters/initialization.ipynb`` in a paragraph: signals and gradients shrink or
grow geometrically through a badly initialized deep network; mean-field theory splits random
tanh networks into an ordered and a chaotic phase, with the edge of chaos (chi_1 = 1) where
information travels deepest (about 6 xi_c layers train); chi_1 = 1 fixes only the mean
squared singular value of the input-output Jacobian, and the whole spectrum concentrates
(dynamical isometry) only for orthogonal tanh networks at small q*, never for ReLU; orthogonal
weights remove the finite-width fluctuations that Gaussian ones accumulate with depth, and give
deep linear networks a learning time that stops growing with depth (Gaussian ones slow down);
and an untrained network may put most inputs in one class. With Adam, the best learning rate
of a standard MLP falls as it widens; in the maximal-update parametrization (muP) it stays put.

Modules:

- :mod:`.science`: configs, initialization schemes, orthogonal vs Gaussian weights, the deep
  linear network and its exact solution, the guessing bias; with :mod:`.meanfield` (the
  mean-field maps q*, chi_1, c*, xi_c, the critical line, and their measurement on random
  networks), which it re-exports.
- :mod:`.experiments`: the runners ``run_signal``, ``run_chaos``, ``run_trainability``,
  ``run_fluctuations``, ``run_saxe``, ``run_depth_time``, ``run_guessing_bias``, the numbers
  the claims rest on, and ``precompute_plan(profile)``.
- :mod:`.figures`: the ``*_figure`` builders and ``*_rows`` tables.
- :mod:`.views`: ``*_panel(profile, seed)`` live panels, the page's numbers, and ``claims(...)``
  with its thresholds (in :mod:`.claims`, re-exported there); Section 5's SP beside muP (its
  model, runner, figure and claims, in :mod:`.width`) is re-exported there too.
- :mod:`.isometry`: the input-output Jacobian's singular values across depth (``torch.func``),
  Gaussian and orthogonal weights, tanh on the critical line and ReLU, with the theory's spread
  and ``run_isometry`` (re-exported by :mod:`.experiments`).

``from dynamics import initialization as I`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
