"""Lottery tickets: sparse subnetworks that train from the start.

Frankle & Carbin (2019) found that a dense network contains sparse subnetworks that, reset to
their *initial* weights and trained alone, match the dense network ("winning tickets"). They
are found by iterative magnitude pruning: train, remove the smallest surviving weights, rewind
the survivors to their early values, repeat. Controls (a re-initialized ticket, a random mask),
pruning at initialization (SNIP, SynFlow) and linear mode connectivity say what makes a ticket.

Modules:

- :mod:`.science`: the configs and pure functions: masks, :func:`rewind`, :func:`imp_round`,
  SNIP and SynFlow, interpolation and the error barrier (no plotting).
- :mod:`.experiments`: the runners :func:`run_imp`, :func:`run_pai`, :func:`run_pai_at`,
  :func:`run_lmc` and :func:`precompute_plan`.
- :mod:`.figures`: figures, precomputed sliders and tables.
- :mod:`.panels`: the live panels (:func:`imp_panel`, :func:`pai_panel`, :func:`lmc_panel`).
- :mod:`.claims`: the claims rows with their thresholds, :func:`page_claims` and
  :func:`published_claims`.
- :mod:`.facts`: the numbers the prose glues (``*_numbers``), each verdict the claims row's.
- :mod:`.finetune`: section 5, which weights fine-tuning changes: its runner, figure, numbers
  and claims together.

The package exports what the chapter's notebook calls; everything else is reached through its
module (``L.science.make_model``).
"""
from . import claims, experiments, facts, figures, finetune, panels, science
from .science import LotteryConfig, load_data
from .experiments import RECORDS, run_imp, run_lmc, run_pai
from .figures import (barrier_figure, cost_figure, cost_table, imp_figure, imp_slider,
                      layer_table, lmc_figure, lmc_slider, pai_figure, pai_slider, speed_figure)
from .finetune import finetune_figure, finetune_numbers, run_finetune
from .panels import imp_panel, lmc_panel, pai_panel
from .claims import page_claims
from .facts import (imp_numbers, layer_numbers, lmc_numbers, rewind_numbers, speed_numbers,
                    verdict_numbers)

__all__ = ["LotteryConfig", "load_data", "RECORDS", "run_imp", "run_lmc", "run_pai",
           "barrier_figure", "cost_figure", "cost_table", "imp_figure", "imp_slider",
           "layer_table", "lmc_figure", "lmc_slider", "pai_figure", "pai_slider", "speed_figure",
           "finetune_figure", "finetune_numbers", "run_finetune", "imp_panel", "lmc_panel",
           "pai_panel", "page_claims", "imp_numbers", "layer_numbers", "lmc_numbers",
           "rewind_numbers", "speed_numbers", "verdict_numbers"]
