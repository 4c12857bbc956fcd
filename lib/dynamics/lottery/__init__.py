"""Lottery tickets: sparse subnetworks that train from the start.

Frankle & Carbin (2019) found that a dense network contains sparse subnetworks that, reset to
their *initial* weights and trained alone, match the dense network ("winning tickets"). They
are found by iterative magnitude pruning: train, remove the smallest surviving weights, rewind
the survivors to their early values, repeat. Controls (a re-initialized ticket, a random mask),
pruning at initialization (SNIP, SynFlow) and linear mode connectivity say what makes a ticket.

Modules (``from dynamics import lottery as L`` gives all their public names):

- :mod:`.science`: the configs and pure functions: masks, :func:`rewind`, :func:`imp_round`,
  SNIP and SynFlow, interpolation and the error barrier (no plotting).
- :mod:`.experiments`: the runners :func:`run_imp`, :func:`run_pai`, :func:`run_pai_at`,
  :func:`run_lmc` and :func:`precompute`.
- :mod:`.views`: figures, precomputed sliders, live panels and the claims table.
"""
from .science import (HEAD, INPUT_DIMS, PAI_DENSITY, PAI_METHODS, LotteryConfig, barrier,  # noqa: F401
                      best_step, density, expected_density, full_masks, imp_round, interpolate,
                      layer_densities, like_masks, load_data, make_model, masks_at_density,
                      pai_masks, path_errors, prunable, prune_masks, prune_smallest, rewind,
                      round_for, round_near, shuffle_masks, snip_scores, synflow_masks,
                      synflow_scores, torch_prune_masks)
from .experiments import (VARIANTS, ImpResult, imp_cost, imp_runs, precompute, precompute_plan,  # noqa: F401,E501
                          rewind_states, run_controls, run_imp, run_lmc, run_pai, run_pai_at,
                          train_masked)
from .views import (DATASET_NAMES, PAI_NAMES, PAPER_COST, VARIANT_NAMES, barrier_figure,  # noqa: F401
                    claims, cost_figure, cost_rows, cost_table, imp_figure, imp_panel, imp_slider, lmc_figure,
                    lmc_panel, lmc_slider, layer_rows, layer_table, pai_figure, pai_panel, pai_slider,
                    speed_claim, speed_figure, speed_numbers, pai_numbers, lmc_numbers,
                    rewind_numbers, published_claims)
