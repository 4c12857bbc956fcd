"""Weight decay: many runs of one section trained at once (issue 41, item 3).

The claims repeat the page's runs on more seeds, and add controls: section 2's equilibria
with their faster controls and exercise 2's symmetry run, section 4's runs without and with
decay. Trained one at a time, each step of each run is its own few dozen kernel launches,
and for networks this small a GPU's time is those launches. Here the runs that differ only
in eta, lambda and seed are trained together by :func:`dynamics.sweep.train_many` (one
batched step for all, each model with its own initialization and mini-batches), and
measured as the one-at-a-time runners measure them:

- :func:`run_equilibrium_many`: :func:`~.experiments.run_equilibrium` for many
  ``(EquilibriumConfig, seed)`` pairs, measured by a
  :class:`~.science.StackedRotationMeter`;
- :func:`run_spectrum_many`: :func:`~.experiments.run_spectrum` for many ``(SpectrumConfig,
  seed)`` pairs (each a run without and one with decay, from one initialization);
- :func:`run_clock_many`: :func:`~.experiments.run_clock` (already its runs at once) for
  several seeds at once.

Where training together pays depends on the device. On a GPU a step's cost is its launches,
and every runner here cuts them. On the CPU there are no launches, and the clock's and the
spectrum's runs, wider or evaluated more often, run slower together than one seed at a time,
while section 2's run a little faster (``python -m dynamics_ops.bench together`` measures
both; README, "Weight decay's claim runs, trained together"). So :func:`run_clock_many` and
:func:`run_spectrum_many` train together on an accelerator and seed by seed on the CPU
(``together=None``; ``True`` or ``False`` decides), and :func:`run_equilibrium_many` always
trains together.

Over a short run they give the one-at-a-time numbers to float tolerance (the tests check
it). Over a long one they do not: a batched matmul rounds differently from K single ones,
and a network trained this hard amplifies rounding as another seed would, so a run trained
together is another realization of the same experiment (README, "Weight decay's claim runs,
trained together").
"""
from __future__ import annotations

from dataclasses import fields

import numpy as np

from .. import progress as P
from .. import runtime
from ..models import MLP
from ..runtime import get_seed
from ..sweep import train_many
from ..train import Recipe, log_steps
from .experiments import (Clock, Equilibrium, Spectrum, SpectrumRun, clock_recipe, clock_summary,
                          equilibrium_summary, run_clock, run_spectrum)
from .science import (MOMENTUM, ClockConfig, NormMLP, StackedRotationMeter,
                      check_equilibrium_args, mnist1d_data, singular_values, spectrum_stats)


def _groups(runs: list) -> list[list[int]]:
    """The indices of ``(cfg, seed)`` pairs whose configs agree in every field but eta and
    lambda: each group is one batched training."""
    groups: dict = {}
    for i, (cfg, _) in enumerate(runs):
        key = tuple((f.name, getattr(cfg, f.name)) for f in fields(cfg)
                    if f.name not in ("lr", "weight_decay"))
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _each_group(runs: list):
    """Each group of ``runs`` that trains together (:func:`_groups`), inside its own part of
    the progress (a panel's bar and Stop): ``(indices, the group's shared config, its data,
    its steps)``."""
    groups, job = _groups(runs), P.current()
    for g, ids in enumerate(groups):
        shared = runs[ids[0]][0]
        with job.part(g, len(groups)):
            yield ids, shared, mnist1d_data(shared.n_train), runtime.steps(shared.steps)


def run_equilibrium_many(runs: list, bars=None) -> list[Equilibrium]:
    """:func:`~.experiments.run_equilibrium` for many ``(cfg, seed)`` pairs at once, measured
    by a :class:`~.science.StackedRotationMeter`; their :class:`~.experiments.Equilibrium` s
    in the order given. A run that diverges is frozen by ``train_many`` while the others go
    on; the hooks still see it, and its records are read up to the step before it diverged,
    as :func:`~.experiments.run_equilibrium` reads them."""
    runs = [(cfg, get_seed(seed)) for cfg, seed in runs]
    for cfg, _ in runs:
        check_equilibrium_args(cfg.optimizer, cfg.lr, cfg.weight_decay)
    out: list = [None] * len(runs)
    for ids, shared, data, steps in _each_group(runs):

        def build(config, shared=shared, data=data):
            return NormMLP(data.input_dim, shared.width, shared.depth, data.n_classes)

        template = build({})
        invariant = {id(w): n for n, w in template.scale_invariant().items()}
        params = {n: p for n, p in template.named_parameters() if id(p) in invariant}
        meter = StackedRotationMeter(list(params), [p.numel() for p in params.values()],
                                     len(ids), steps, data.device)
        configs = [dict(lr=runs[i][0].lr, weight_decay=runs[i][0].weight_decay, seed=runs[i][1])
                   for i in ids]
        recipe = Recipe(steps, optimizer=shared.optimizer, momentum=MOMENTUM,
                        batch_size=shared.batch_size, eval=max(1, shared.steps // 20))

        def before(step, p, grads, meter=meter):
            if step == 1:
                meter.start(p)  # the parameters before the first step: the initialization
            meter.before_step(step, p, grads)

        res = train_many(build, data, configs, recipe, strategy="batched", bars=bars,
                         before_step=before, on_step=meter.after_step)
        names = [invariant[id(p)] for p in params.values()]
        for j, i in enumerate(ids):
            history = res.histories[j]
            last = history.steps[-1] if len(history) else 0
            if history.diverged:
                last = min(last, max(0, history.diverged_at - 1))
            out[i] = equilibrium_summary(runs[i][0], meter.arrays(j, last), names, meter.numel,
                                         history)
    return out


def _together(together: bool | None) -> bool:
    """Train together? ``None``: on an accelerator yes, on the CPU no (module docstring)."""
    return runtime.get_device().type != "cpu" if together is None else bool(together)


def run_spectrum_many(runs: list, bars=None, together: bool | None = None) -> list[Spectrum]:
    """:func:`~.experiments.run_spectrum` for many ``(cfg, seed)`` pairs at once: each pair's
    run without decay and with ``cfg.weight_decay``, from one initialization, all trained
    together; their :class:`~.experiments.Spectrum` s in the order given (the norms recorded
    at the same evaluations, the singular values at initialization and at the end).
    ``together``: False runs :func:`~.experiments.run_spectrum` pair by pair (the CPU's
    default: :func:`_together`)."""
    runs = [(cfg, get_seed(seed)) for cfg, seed in runs]
    if not _together(together):
        return [run_spectrum(cfg, seed, bars=bars) for cfg, seed in runs]
    out: list = [None] * len(runs)
    for ids, shared, data, steps in _each_group(runs):

        def build(config, shared=shared, data=data):
            return MLP(data.input_dim, shared.width, 2, data.n_classes)

        template = build({})
        layers = {f"hidden.{i}": f"hidden.{i}.weight" for i in range(len(template.hidden))}
        layers["head"] = "head.weight"
        metrics = {f"norm {n}": (lambda m, d, p=p: m.get_parameter(p).detach().norm())
                   for n, p in layers.items()}
        pairs = [(i, wd) for i in ids for wd in (0.0, runs[i][0].weight_decay)]
        configs = [dict(lr=runs[i][0].lr, weight_decay=wd, seed=runs[i][1]) for i, wd in pairs]
        recipe = Recipe(steps, optimizer=shared.optimizer, batch_size=shared.batch_size,
                        eval=sorted({0} | set(log_steps(steps, 30))))
        init: dict = {}

        def before(step, params, grads, init=init):
            if step == 1:  # the parameters before the first step: the initialization
                init.update({n: params[p].clone() for n, p in layers.items()})

        res = train_many(build, data, configs, recipe, metrics=metrics, strategy="batched",
                         bars=bars, before_step=before)
        for k, (i, wd) in enumerate(pairs):
            cfg, h = runs[i][0], res.histories[k]
            if out[i] is None:
                out[i] = Spectrum(runs={}, weight_decay=cfg.weight_decay, optimizer=cfg.optimizer)
            start = {n: singular_values(w[k]) for n, w in init.items()}
            final = {n: singular_values(res.states[k][p]) for n, p in layers.items()} \
                if res.states[k] else {}
            finite = bool(final) and all(np.isfinite(sv).all() for sv in final.values()) \
                and not h.diverged
            out[i].runs[wd] = SpectrumRun(
                history=h, init=start, final=final if finite else {},
                stats={n: spectrum_stats(sv) for n, sv in final.items()} if finite else {},
                test_acc=h.last("test_acc"), train_acc=h.last("train_acc"))
    return out


def run_clock_many(cfg: ClockConfig, seeds, bars=None, together: bool | None = None) -> list[Clock]:
    """:func:`~.experiments.run_clock` of ``cfg`` for each of ``seeds``, every seed's runs
    trained together: their :class:`~.experiments.Clock` s in the order of ``seeds``.
    ``together``: False runs :func:`~.experiments.run_clock` seed by seed (the CPU's default:
    :func:`_together`)."""
    seeds = [get_seed(s) for s in seeds]
    if not seeds:
        return []
    if not _together(together):
        return [run_clock(cfg, s, bars=bars) for s in seeds]
    data = mnist1d_data(cfg.n_train)
    runs = cfg.runs()
    configs = [dict(lr=r["lr"], weight_decay=r["weight_decay"], seed=s) for s in seeds for r in runs]
    res = train_many(lambda config: NormMLP(data.input_dim, cfg.width, 2, data.n_classes),
                     data, configs, clock_recipe(cfg), bars=bars)
    n = len(runs)
    return [clock_summary(cfg, res.histories[i * n:(i + 1) * n], res.info) for i in range(len(seeds))]


__all__ = ["run_equilibrium_many", "run_spectrum_many", "run_clock_many"]
