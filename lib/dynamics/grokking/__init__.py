"""Grokking: a network memorizes its training set first and generalizes much later.

On a table of modular arithmetic ``a ∘ b mod p`` a small network fits its training pairs within
a few dozen steps and reaches high test accuracy many times later (Power et al. 2022). Weight
decay ends the plateau; during it the weights shrink and reorganize into a few Fourier features
(Nanda et al. 2023); a phase diagram over data and decay says when it happens at all (Liu et
al. 2022), and remedies (Grokfast, ⊥Grad, StableMax) shorten or remove the wait.

- :mod:`.science`: configs, task and models, progress measures, remedies, phases (no plotting);
- :mod:`.experiments`: runners (``run``, ``run_remedies``, ``run_corrupted``, ``run_phase``)
  and ``precompute``;
- :mod:`.views`: figures, sliders over precomputed data, live panels and ``claims``.

``from dynamics import grokking as G`` gives every public name of the three.
"""
from .experiments import *  # noqa: F401,F403
from .experiments import __all__ as _experiments
from .science import *  # noqa: F401,F403
from .science import __all__ as _science
from .views import *  # noqa: F401,F403
from .views import __all__ as _views

__all__ = [*_science, *_experiments, *_views]
