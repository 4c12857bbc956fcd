"""One network, six phenomena: the book's threads in a single run.

The grokking chapter's task and model, trained once and read at every evaluation by the
measures of every chapter (weight norm and the 1/(ηλ) clock, neural collapse, spectra of the
weights and updates, Fourier sparsity), then four questions asked of it: the initial scale
(lazy ↔ rich, Kumar et al.), the weight decay clock, Muon against AdamW, and lottery tickets
in the grokked network; neural collapse throughout.

Modules:

- :mod:`.science`: the config, :func:`measure` (each chapter's measure, imported), the update
  probe and the step-finding rules (no plotting).
- :mod:`.experiments`: ``run``, ``init_sweep``, ``clock_grid``, ``optimizer_runs``,
  ``lottery``, ``collapse_timing`` and ``precompute_plan``.
- :mod:`.figures`: the timeline figure, the questions' figures and the grid slider.
- :mod:`.views`: the live panel, ``claims`` and ``published_claims``.

``from dynamics import capstone as O`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
