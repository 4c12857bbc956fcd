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
- :mod:`.experiments`: the runners (``run_signal``, ``run_chaos``, ``run_trainability``,
  ``run_fluctuations``, ``run_saxe``, ``run_depth_time``, ``run_guessing_bias``; the records
  of the precomputed ones, ``Trainability`` and ``DepthTime``, and, from :mod:`.records`,
  those of the page-time runs the claims read, ``Saxe`` and ``ChaosRun``), ``run(section,
  profile, seed)`` (a section's run as the page makes it), the worked answers (``answer_*``),
  the seeds the claims run on and ``precompute_plan(profile)``.
- :mod:`.figures`: the ``*_figure`` builders and ``*_rows`` tables.
- :mod:`.panels`: the live panels, ``*_panel(profile, seed)``.
- :mod:`.claims`: the claims rows with their thresholds, ``claims(...)``, ``page_claims(...)``
  (the page's table, its other seeds run), ``published_claims()`` and ``precomputed(name)``
  (a data file read through its record).
- :mod:`.facts`: the page's numbers: what each section's prose glues (``*_numbers``).
- :mod:`.isometry` (a section whole): the input-output Jacobian's singular values across depth
  (``torch.func``), Gaussian and orthogonal weights, tanh on the critical line and ReLU, with
  the theory's spread, its runner, figure, numbers and claims rows.
- :mod:`.width` (a section whole): Section 5, SP beside muP: its model, runner, figure,
  numbers and claims rows.

``from dynamics import initialization as init`` gives the names the chapter calls; the rest
are in the modules (``init.science.q_map``).
"""
from . import claims, experiments, facts, figures, isometry, panels, science, width
from .experiments import (run, answer_lsuv_gain, answer_band, answer_fluctuations,
                          answer_rank_growth, answer_coordinate_check)
from .figures import (signal_figure, signal_rows, chaos_figure, trainability_figure,
                      trainability_rows, fluctuations_figure, saxe_figure, depth_time_figure,
                      guessing_figure)
from .isometry import isometry_figure
from .width import width_figure
from .panels import signal_panel, trainability_panel, saxe_panel, guessing_panel
from .facts import (signal_numbers, chaos_numbers, trainability_numbers, fluctuation_numbers,
                    depth_time_numbers, isometry_page_numbers, width_page_numbers)
from .claims import page_claims, precomputed

__all__ = ["run", "answer_lsuv_gain", "answer_band", "answer_fluctuations",
           "answer_rank_growth", "answer_coordinate_check",
           "signal_figure", "signal_rows", "chaos_figure", "trainability_figure",
           "trainability_rows", "fluctuations_figure", "saxe_figure", "depth_time_figure",
           "guessing_figure",
           "isometry_figure",
           "width_figure",
           "signal_panel", "trainability_panel", "saxe_panel", "guessing_panel",
           "signal_numbers", "chaos_numbers", "trainability_numbers", "fluctuation_numbers",
           "depth_time_numbers", "isometry_page_numbers", "width_page_numbers", "page_claims",
           "precomputed"]
