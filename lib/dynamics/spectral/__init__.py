"""Spectral optimizers: Muon, Newton–Schulz, and steepest descent in the spectral norm.

The chapter ``chapters/spectral_optimizers.ipynb``: a weight matrix is a linear map, so the
size of a step that matters is its operator norm (RMS→RMS, the spectral norm up to a shape
factor); steepest descent in it steps along U Vᵀ; Muon approximates U Vᵀ with a quintic
Newton–Schulz iteration (timed per step against AdamW, so per step and per second can be
compared); embeddings and vectors want other norms than the spectral one (their duality maps);
one Muon step on an associative memory stores as much as Newton's method; and U Σᵖ Vᵀ
interpolates between SGD (p = 1) and Muon (p = 0).

Modules:

- :mod:`.science`: the update rules, measures and theory, and the experiments' configs.
- :mod:`.experiments`: runners (``run_*``, ``time_orthogonalization``) and ``precompute_plan``;
  with :mod:`.roles` (norms per role, seconds per step) re-exported.
- :mod:`.figures`: figures (``*_figure``), sliders (``*_slider``) and tables (``*_rows``).
- :mod:`.views`: live panels (``*_panel``), the page's numbers and ``claims``.

``from dynamics import spectral as sp`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
