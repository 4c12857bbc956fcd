"""What the chapter's page-time runners return, field by field (:class:`dynamics.results.Record`):
a claim or a glued fact names what it reads (``pm.fit_step``, ``run.final_memorized``, not
``pm["fit_step"]``), and a field renamed in the code fails where the record is built, naming it.
None of these is written to ``data/``; the phase diagram's records (the precomputed file's) are
in :mod:`.experiments` beside its runners.

- :class:`ProgressMeasures` (:func:`~.experiments.progress_measures`), with its
  :class:`UnitSpectra` (:func:`~.experiments.unit_spectra`);
- :class:`RemedyRow` (:func:`~.experiments.run_remedies`) and :class:`Speedup`
  (:func:`~.experiments.speedups`);
- :class:`Corrupted` and its :class:`CorruptedRun` (:func:`~.experiments.run_corrupted`);
- :class:`ClockMeasures` (:func:`~.algorithm.clock_measures`), :class:`NormDescent`
  (:func:`~.algorithm.norm_descent`) and :class:`OptimizerRuns`
  (:func:`~.algorithm.optimizer_runs`);
- :class:`PlateauSteps` (:func:`~.science.plateau_steps`, a run's plateau read from its
  history, here and in the capstone).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import results

__all__ = ["UnitSpectra", "ProgressMeasures", "RemedyRow", "Speedup", "CorruptedRun", "Corrupted",
           "ClockMeasures", "NormDescent", "OptimizerRuns", "PlateauSteps"]


# ============================================================================ progress measures


@dataclass
class UnitSpectra(results.Record):
    """The input weights' spectra at one step: the layer's share of energy per frequency, the
    strongest units' normalized spectra (sorted by their dominant frequency), and the per-unit
    and whole-layer top-10% concentrations."""

    layer: list
    units: list
    concentration: float
    layer_concentration: float


@dataclass
class ProgressMeasures(results.Record):
    """Per kept checkpoint (``step``): the restricted, excluded and other-frequency losses, the
    weight norm and the Fourier concentration; the key frequencies (``keys``, of
    ``n_frequencies``), the spectra at the fit step (``"fit"``, where a checkpoint has it) and
    at the end (``"end"``), the fit and grok steps, and the run's own train and test loss at
    its evaluations (``history_steps``)."""

    step: list
    restricted_loss: list
    excluded_loss: list
    other_loss: list
    weight_norm: list
    fourier_top10: list
    keys: list
    n_frequencies: int
    spectra: dict[str, UnitSpectra]
    fit_step: int | None
    grok_step: int | None
    train_loss: list
    test_loss: list
    history_steps: list


# ============================================================================ remedies


@dataclass
class RemedyRow(results.Record):
    """One remedy on one seed (:func:`~.experiments.run_remedies`): its name, seed and weight
    decay, and the run's :meth:`~.experiments.GrokRun.summary`."""

    name: str
    seed: int
    weight_decay: float
    fit_step: int | None
    grok_step: int | None
    phase: str
    final_train_acc: float
    final_test_acc: float
    status: str
    wall_time: float


@dataclass
class Speedup(results.Record):
    """One remedy over its seeds (:func:`~.experiments.speedups`): the median steps to grok (a
    run that never groks counted as the budget), how many of its ``runs`` grokked, and the
    speed-up over the baseline (NaN without one)."""

    steps: float
    grokked: int
    runs: int
    speedup: float


# ============================================================================ corrupted labels


@dataclass
class CorruptedRun(results.Record):
    """One weight decay's run on corrupted labels: its curves (test and train accuracy, and on
    the corrupted training examples the share predicted with their wrong label, ``memorized``,
    and with their true one, ``corrected``), their final values and the run's status."""

    weight_decay: float
    steps: list
    test_acc: list
    train_acc: list
    memorized: list
    corrected: list
    final_test_acc: float
    final_memorized: float
    final_corrected: float
    status: str


@dataclass
class Corrupted(results.Record):
    """:func:`~.experiments.run_corrupted`: the share of labels corrupted, the weight decays
    run, the budget, and one :class:`CorruptedRun` per weight decay (the smallest first)."""

    noise: float
    weight_decays: list
    steps: int
    runs: list[CorruptedRun]


# ============================================================================ the algorithm


@dataclass
class ClockMeasures(results.Record):
    """:func:`~.algorithm.clock_measures`: the key frequencies (of ``K``) and the uniform null's
    share on them; the trained network's key share, median single-frequency share, share of
    the stronger neurons on the keys, the clock's radius spread per key and its median, the
    stronger neurons' top frequencies; and each of those for the initial network (``init_``)."""

    keys: list
    K: int
    null: float
    key_share: float
    single: float
    on_keys: float
    spreads: list
    spread: float
    tops: list
    init_key_share: float
    init_single: float
    init_on_keys: float
    init_spreads: list
    init_spread: float
    init_tops: list


@dataclass
class NormDescent(results.Record):
    """:func:`~.algorithm.norm_descent`: the weight norm at the start, its peak, at the grok
    step and at the end; the share of its descent made at the grok step (``done``) and at the
    fit step (``fit_done``); the grok, fit and peak steps."""

    start: float
    peak: float
    end: float
    grok: float
    done: float
    fit_done: float
    grok_step: int | None
    fit_step: int | None
    peak_step: int


@dataclass
class OptimizerRuns(results.Record):
    """One optimizer of :func:`~.algorithm.optimizer_runs`: each learning rate tried on the first
    seed with its grok step (None: not within the budget), the best, and its grok step per
    seed."""

    tried: dict
    best: float
    grok: dict


# ============================================================================ the plateau


@dataclass
class PlateauSteps(results.Record):
    """Where a run's test accuracy is on its way from chance to generalizing
    (:func:`~.science.plateau_steps`): the fit step, the step it leaves chance (the end of the
    plateau), passes 50% and groks, each None when never reached; ``plateau``: ``leave / fit``
    (None without both)."""

    fit: int | None
    leave: int | None
    half: int | None
    grok: int | None
    plateau: float | None
