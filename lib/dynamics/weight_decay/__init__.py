"""Weight decay: not a regularizer, a clock (``chapters/weight_decay.ipynb``).

In Adam, an L2 penalty is divided by the adaptive normalization while decoupled decay
(AdamW) is not. On weights that feed a normalization, decay and gradient noise balance at a
predictable norm, and the product eta * lambda then sets the angle the weights turn per step:
a clock with period tau = 1 / (eta lambda). Whether eta * lambda or lambda alone is the
variable to hold fixed depends on whether the loss sees the weights' scale.

Modules:

- :mod:`.science`: the update rules, the scale-invariant network, the equilibrium theory,
  the measures (angles, spectra, the ridge of a hyperparameter grid) and the configs.
- :mod:`.experiments`: the runners of the four sections and ``precompute_plan``.
- :mod:`.figures`: figures, sliders and tables of the results.
- :mod:`.views`: live panels, the page's numbers, worked answers and the claims table.

``from dynamics import weight_decay as wdc`` gives every public name of the four.
"""
from . import experiments, figures, science, views
from .science import *  # noqa: F401,F403
from .experiments import *  # noqa: F401,F403
from .figures import *  # noqa: F401,F403
from .views import *  # noqa: F401,F403

__all__ = [*science.__all__, *experiments.__all__, *figures.__all__, *views.__all__]
