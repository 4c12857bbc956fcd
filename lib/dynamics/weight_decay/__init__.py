"""Weight decay: not a regularizer, a clock (``chapters/weight_decay.ipynb``).

In Adam, an L2 penalty is divided by the adaptive normalization while decoupled decay
(AdamW) is not. On weights that feed a normalization, decay and gradient noise balance at a
predictable norm, and the product eta * lambda then sets the angle the weights turn per step:
a clock with period tau = 1 / (eta lambda). Whether eta * lambda or lambda alone is the
variable to hold fixed depends on whether the loss sees the weights' scale.

Modules:

- :mod:`.science`: the update rules, the scale-invariant network, the equilibrium theory,
  the measures (angles, spectra, the ridge of a hyperparameter grid) and the configs.
- :mod:`.experiments`: the runners of the four sections (``run_*``), the worked answers of
  the exercises (``answer_*``) and ``precompute_plan``.
- :mod:`.figures`: figures, sliders and tables of the results.
- :mod:`.panels`: the live "Try it" panels, one per section (``*_panel(profile, seed)``).
- :mod:`.claims`: the claims rows with their thresholds, section 4's spectrum rows among them
  (``page_claims(...)``, ``claim_runs``) and ``published_claims()``.
- :mod:`.spectra`: section 4's measures of a weight matrix: norms, ranks and the power-law
  tail of its spectrum, fitted as WeightWatcher fits it (re-exported by :mod:`.science`).
- :mod:`.facts`: the page's numbers: what the prose glues, one section at a time
  (:func:`~.facts.numbers`).
- :mod:`.window`: section 3's averaging window of AdamW, its runner, figure, numbers and claims
  together.
- :mod:`.together`: many runs of section 2 or 4 trained at once (the claims' seeds and
  controls), measured as the one-at-a-time runners measure them.

The package exports what the chapter's notebook calls; everything else is reached through its
module (``from dynamics.weight_decay import science``).
"""
from . import claims, experiments, facts, figures, panels, science, spectra, together, window
from .figures import (grid_slider, ridge_rows, grid_rows, grid_figure, equilibrium_figure,
                      equilibrium_rows, clock_rows, clock_figure, spectrum_figure,
                      spectrum_rows)
from .experiments import (RECORDS, run_decoupling, run_equilibria, run_clock, run_spectrum,
                          answer_equilibrium, answer_sgd_symmetry, answer_spread,
                          answer_zero_gradient)
from .window import run_window, window_figure, window_rows
from .panels import decoupling_panel, equilibrium_panel, clock_panel, spectrum_panel
from .facts import numbers
from .claims import claim_runs, page_claims

__all__ = ["grid_slider", "ridge_rows", "grid_rows", "grid_figure", "equilibrium_figure",
           "equilibrium_rows", "clock_rows", "clock_figure", "spectrum_figure",
           "spectrum_rows",
           "RECORDS", "run_decoupling", "run_equilibria", "run_clock", "run_spectrum",
           "answer_equilibrium", "answer_sgd_symmetry", "answer_spread",
           "answer_zero_gradient",
           "run_window", "window_figure", "window_rows",
           "decoupling_panel", "equilibrium_panel", "clock_panel", "spectrum_panel",
           "numbers", "claim_runs", "page_claims"]
