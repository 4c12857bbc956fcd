"""Neural collapse: the geometry of the last-layer features at the end of training.

Once a classifier fits its training set and keeps training (the terminal phase), its last-layer
features collapse to their class means (NC1), the centred means spread into a simplex
equiangular tight frame (NC2), the classifier's rows align with them (NC3) and the network
decides like the nearest class centre (NC4) (Papyan, Han & Donoho 2020). The chapter measures
the four, tests the conditions under which training with weight decay provably collapses
(Jacot et al. 2025), and breaks the symmetry with imbalanced classes (Dang et al. 2023).

Modules:

- :mod:`.science`: the measures (``nc1``...``nc4``, ``nc_metrics``), the conditions
  (``balancedness``, ``conditioning``), the models (``CollapseNet``, ``UnconstrainedFeatures``)
  and the configs; with :mod:`.theory` (``simplex_etf``, ``imbalanced_ufm_solution``), which it
  re-exports. No plotting.
- :mod:`.experiments`: runners (``run_collapse``, ``run_weight_decays``, ``run_conditions``,
  ``run_ufm``, ``run_ufm_pair``, ``run_imbalance``) and ``precompute_plan``.
- :mod:`.figures`: figures (``*_figure``), static sliders (``*_slider``) and tables.
- :mod:`.views`: live panels (``*_panel``), the page's numbers and the claims table (``claims``);
  with :mod:`.losses` (MSE beside cross-entropy, on the training and the test set:
  ``run_loss_seeds``, ``loss_figure``, ``loss_claims``), which it re-exports.

``from dynamics import collapse as NC`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
