"""Initialization: how the first weights decide whether a deep network can learn, and how fast.

The chapter ``chapters/initialization.ipynb`` in five lines: signals and gradients shrink or
grow geometrically through a badly initialized deep network; mean-field theory splits random
tanh networks into an ordered and a chaotic phase, with the edge of chaos (chi_1 = 1) where
information travels deepest (about 6 xi_c layers train); orthogonal weights remove the
finite-width fluctuations that Gaussian ones accumulate with depth, and make deep linear networks
learn as fast as shallow ones; and an untrained network may put most inputs in one class.

Modules:

- :mod:`.science`: configs, initialization schemes, the mean-field maps (q*, chi_1, c*, xi_c,
  the critical line) and their measurement on random networks, orthogonal vs Gaussian
  weights, the deep linear network and its exact solution, the guessing bias.
- :mod:`.experiments`: the runners ``run_signal``, ``run_chaos``, ``run_trainability``,
  ``run_fluctuations``, ``run_saxe``, ``run_depth_time``, ``run_guessing_bias``, the numbers
  the claims rest on, and ``precompute(profile)``.
- :mod:`.views`: ``*_figure`` builders, ``*_panel(profile, seed)`` live panels, ``claims(...)``.
"""
import types as _types

from . import experiments, science, views


def _public(module) -> list[str]:
    """The names a module defines itself (functions, classes, constants), not its imports."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or isinstance(value, _types.ModuleType):
            continue
        if callable(value):
            if getattr(value, "__module__", None) == module.__name__:
                names.append(name)
        elif name.isupper():
            names.append(name)
    return names


__all__ = list(dict.fromkeys([*_public(science), *_public(experiments), *_public(views)]))
for _module in (science, experiments, views):
    globals().update({name: getattr(_module, name) for name in _public(_module)})
