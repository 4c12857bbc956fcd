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
  with :mod:`.roles`, a module of the science (norms per role) and the step timer, and
  :mod:`.records`, what the runners return and the files hold (``RECORDS``), field by field.
- :mod:`.figures`: figures (``*_figure``), sliders (``*_slider``), tables (``*_rows``) and
  ``show_*`` (a run's figure with its table; ``show_precomputed``, a file's, read as its record).
- :mod:`.panels`: the live panels (``*_panel``).
- :mod:`.claims`: the claims rows, each threshold written once, the rows moved onto the claims
  engine judged against their controls (``page_claims``, ``published_claims``).
- :mod:`.facts`: the page's numbers: what the prose glues (``*_facts``) and the measures the
  rows judge.

``from dynamics import spectral as sp`` gives the names the chapter calls; everything else is
in its module (``sp.science.newton_schulz``).
"""
from . import claims, experiments, facts, figures, panels, roles, science
from .panels import ns_panel, practice_panel, memory_panel, shaping_panel
from .experiments import (run_width, run_bands, run_practice, run_memory, run_memory_batch,
                          run_shaping, run_roles)
from .roles import step_seconds
from .figures import (width_figure, map_figure, band_figure, roles_figure, show_practice,
                      show_memory, memory_batch_figure, show_shaping, show_precomputed)
from .facts import (width_facts, ns_facts, band_facts, practice_facts, memory_facts,
                    shaping_facts)
from .claims import page_claims, schedule_facts

__all__ = ["ns_panel", "practice_panel", "memory_panel", "shaping_panel", "run_width",
           "run_bands", "run_practice", "run_memory", "run_memory_batch", "run_shaping",
           "run_roles", "step_seconds", "width_figure", "map_figure", "band_figure",
           "roles_figure", "show_practice", "show_memory", "memory_batch_figure", "show_shaping",
           "show_precomputed",
           "width_facts", "ns_facts", "band_facts", "practice_facts", "memory_facts", "shaping_facts",
           "page_claims", "schedule_facts"]
