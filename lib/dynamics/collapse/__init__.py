"""Neural collapse: the geometry of the last-layer features at the end of training.

Once a classifier fits its training set and keeps training (the terminal phase), its last-layer
features collapse to their class means (NC1), the centred means spread into a simplex
equiangular tight frame (NC2), the classifier's rows align with them (NC3) and the network
decides like the nearest class centre (NC4) (Papyan, Han & Donoho 2020). The chapter measures
the four, tests the conditions under which training with weight decay provably collapses
(Jacot et al. 2025), and breaks the symmetry with imbalanced classes (Dang et al. 2023).

Modules:

- :mod:`.science`: the measures (``nc1``...``nc4``, ``measure``), the conditions
  (``balancedness``, ``conditioning``), the models (``CollapseNet``, ``UnconstrainedFeatures``)
  and the configs; with :mod:`.theory` (``simplex_etf``, ``bias_free_nc3``,
  ``imbalanced_ufm_solution``, ``minority_collapse_threshold``), which it re-exports. No
  plotting.
- :mod:`.experiments`: the runners (``run_collapse``, ``run_conditions``, ``run_ufm_pair``,
  ``run_imbalance``, ``run_claim_seeds``), the records they return and the precomputed files
  are read as (``Imbalance``, ``ClaimSeeds``, ``DecaySweep``, ``ImbalanceSweep``,
  ``Simplex``) and ``precompute_plan``.
- :mod:`.figures`: figures of the runs (``*_figure``), sliders over the precomputed files
  (``*_slider``) and tables.
- :mod:`.panels`: the live panels (``*_panel``), one per section.
- :mod:`.claims`: the claims table (``page_claims``: the rows of the live runs, ``claims``,
  on three seeds, and of the published data, ``published_claims``; each row's threshold
  once) and the precomputed files' numbers (``precomputed_numbers``); :mod:`.facts`: the
  numbers the prose glues about the live runs (``*_numbers``); with
  :mod:`.losses` (MSE beside cross-entropy, on the training and the test set: the figure, the
  numbers, the rows and Han et al.'s least-squares split).

``from dynamics import collapse as NC`` gives the names the chapter's notebook calls; the rest
is in the modules (``NC.science.nc1``).
"""
from . import claims, experiments, facts, figures, losses, panels, science, theory
from .science import CollapseConfig, ImbalanceConfig, UFMConfig, load_data
from .experiments import (dataset_line, run_collapse, run_conditions,
                          run_imbalance, run_ufm_pair)
from .figures import (clock_figure, conditions_figure, gram_figure, imbalance_figure,
                      imbalance_table, nc_figure, simplex_figure, terminal_phase_table,
                      ufm_figure)
from .losses import loss_figure
from .panels import collapse_panel, conditions_panel, imbalance_panel, simplex_panel
from .claims import page_claims, precomputed_numbers, show_precomputed
from .facts import conditions_numbers, imbalance_numbers, run_numbers, simplex_numbers

__all__ = ["CollapseConfig", "ImbalanceConfig", "UFMConfig", "load_data", "dataset_line",
           "run_collapse", "run_conditions", "run_imbalance", "run_ufm_pair", "clock_figure",
           "conditions_figure", "gram_figure", "imbalance_figure", "imbalance_table",
           "nc_figure", "simplex_figure", "terminal_phase_table", "ufm_figure", "loss_figure",
           "collapse_panel", "conditions_panel", "imbalance_panel", "simplex_panel",
           "page_claims", "precomputed_numbers", "show_precomputed",
           "conditions_numbers", "imbalance_numbers", "run_numbers", "simplex_numbers"]
