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
- :mod:`.views`: live panels, the page's numbers and the claims table.

``from dynamics import lottery as L`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
