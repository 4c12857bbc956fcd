"""One network, six phenomena: the book's threads in a single run.

The grokking chapter's task and model, trained once and read at every evaluation by the
measures of every chapter (weight norm and the 1/(ηλ) clock, neural collapse, spectra of the
weights and updates, Fourier sparsity), then four questions asked of it: the initial scale
(lazy ↔ rich, Kumar et al.), the weight decay clock, Muon against AdamW, and lottery tickets
in the grokked network; neural collapse throughout.

- :mod:`.science`: the config, :func:`measure` (each chapter's measure, imported), the update
  probe and the step-finding rules (no plotting);
- :mod:`.experiments`: ``run``, ``init_sweep``, ``clock_grid``, ``optimizer_runs``,
  ``lottery``, ``collapse_timing`` and ``precompute``;
- :mod:`.views`: the timeline figure, the questions' figures, the grid slider, the live
  panel, ``claims`` and ``published_claims``.

``from dynamics import capstone as O`` gives every public name of the three.
"""
from .experiments import *  # noqa: F401,F403
from .experiments import __all__ as _experiments
from .science import *  # noqa: F401,F403
from .science import __all__ as _science

try:
    from .views import *  # noqa: F401,F403
    from .views import __all__ as _views
except ImportError:  # pragma: no cover - views not written yet
    _views = []

__all__ = [*_science, *_experiments, *_views]
