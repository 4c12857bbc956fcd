"""Weight decay: not a regularizer, a clock (``chapters/weight_decay.ipynb``).

In Adam, an L2 penalty is divided by the adaptive normalization while decoupled decay
(AdamW) is not. On weights that feed a normalization, decay and gradient noise balance at a
predictable norm, and the product eta * lambda then sets the angle the weights turn per step:
a clock with period tau = 1 / (eta lambda). Whether eta * lambda or lambda alone is the
variable to hold fixed depends on whether the loss sees the weights' scale.

- :mod:`.science`: the update rules, the scale-invariant network, the equilibrium theory,
  the measures (angles, spectra, the ridge of a hyperparameter grid) and the configs;
- :mod:`.experiments`: the runners of the four sections and ``precompute``;
- :mod:`.views`: figures, tables, live panels and the claims table.

Everything public is re-exported here: ``from dynamics import weight_decay as wdc``.
"""
from .science import *  # noqa: F401,F403
from .science import __all__ as _science
from .experiments import *  # noqa: F401,F403
from .experiments import __all__ as _experiments
from .views import *  # noqa: F401,F403
from .views import __all__ as _views

__all__ = [*_science, *_experiments, *_views]
