"""One network, six phenomena: the book's threads in a single run.

The grokking chapter's task and model, trained once and read at every evaluation by the
measures of every chapter (weight norm and the 1/(ηλ) clock, neural collapse, spectra of the
weights and updates, Fourier sparsity), then four questions asked of it: the initial scale
(lazy ↔ rich, Kumar et al.), the weight decay clock, Muon against AdamW, and lottery tickets
in the grokked network; neural collapse throughout.

Modules:

- :mod:`.science`: the config, :func:`~.science.measure` (each chapter's measure, imported),
  the update probe, the step-finding rules and the course of a curve after its peak (no
  plotting).
- :mod:`.experiments`: ``run``, ``plateau_control``, ``init_sweep``, ``clock_grid`` (their
  rows :class:`~.experiments.GridRow` records; the grid's file a ``CapstoneGrid``),
  ``optimizer_runs``, ``lottery``, ``collapse_timing`` and ``precompute_plan``.
- :mod:`.figures`: the timeline figure, the questions' figures and the grid slider.
- :mod:`.panels`: the live panel, ``timeline_panel``.
- :mod:`.facts`: the page's numbers: what each section glues (``*_facts``), the sentences
  they are made of and the steps the plateau rows read (``plateau_part``).
- :mod:`.claims`: the claims rows with their thresholds, ``page_claims`` (the page's table)
  and ``published_claims``.

``from dynamics import capstone as O`` gives the names the page calls, below.
"""
from . import claims, experiments, facts, figures, panels, science
from .science import OneConfig
from .experiments import (
    GRID_FILE, CapstoneGrid, clock_grid, collapse_timing, grid_budget, init_sweep,
    live_grid, lottery, optimizer_runs, plateau_control, run,
)
from .figures import (
    clock_figure, grid_slider, init_figure, lottery_figure, optimizer_figure, timeline_figure,
)
from .panels import timeline_panel
from .facts import (
    clock_facts, collapse_facts, grid_order_facts, init_facts, lottery_facts, optimizer_facts,
    rounding_numbers, timeline_facts,
)
from .claims import page_claims

__all__ = [
    "OneConfig",
    "GRID_FILE", "CapstoneGrid", "clock_grid", "collapse_timing", "grid_budget",
    "init_sweep", "live_grid", "lottery", "optimizer_runs", "plateau_control", "run",
    "clock_figure", "grid_slider", "init_figure", "lottery_figure", "optimizer_figure",
    "timeline_figure",
    "timeline_panel",
    "clock_facts", "collapse_facts", "grid_order_facts", "init_facts", "lottery_facts", "optimizer_facts",
    "rounding_numbers", "timeline_facts",
    "page_claims",
]
