"""Grokking: a network memorizes its training set first and generalizes much later.

On a table of modular arithmetic ``a ∘ b mod p`` a small network fits its training pairs within
a few dozen steps and reaches high test accuracy many times later (Power et al. 2022). Weight
decay ends the plateau; during it the weights shrink and reorganize into a few Fourier features
(Nanda et al. 2023); a phase diagram over data and decay says when it happens at all (Liu et
al. 2022), and remedies (Grokfast, ⊥Grad, StableMax) shorten or remove the wait.

Modules:

- :mod:`.science`: configs, task and models, progress measures, remedies, phases (no plotting).
- :mod:`.experiments`: runners (``run``, ``run_remedies``, ``run_corrupted``, ``run_phase``)
  and ``precompute_plan``.
- :mod:`.figures`: figures, tables and sliders over precomputed data.
- :mod:`.views`: live panels, the page's numbers and ``claims``.
- :mod:`.algorithm`: the algorithm the network finds (the clock in its first layer, division
  as relabelled subtraction), the weight norm's descent (Omnigrok) and Muon against AdamW,
  with their figures and claims rows (re-exported by :mod:`.views`).

``from dynamics import grokking as G`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
