"""Grokking, the experiments: runners that train and measure, and the precomputed results.

- :func:`run`: one run, full batch, with the progress measures recorded while it trains;
  :func:`progress_measures` replays its checkpoints through the Fourier measures.
- :func:`run_remedies` and :func:`speedups`: steps to grok with each remedy.
- :func:`run_corrupted`: corrupted labels, one run per weight decay.
- :func:`run_phase_grid` / :func:`run_phase`: the phase diagram, many models at once with
  :func:`dynamics.sweep.train_many`; :func:`phase_rows` labels each cell.
- :func:`precompute_plan`: the phase diagram at a profile's scale, written to ``data/``.

The science these runners call lives in :mod:`dynamics.grokking.science`; nothing here draws.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import torch
import torch.nn as nn

from .. import data as D
from .. import plots
from .. import results, runtime, units
from .. import progress as P
from ..runtime import get_profile, get_seed
from ..sweep import SweepResult, grid, train_many
from ..train import History, Hooks, Recipe, log_steps, train
from .records import Corrupted, CorruptedRun, ProgressMeasures, RemedyRow, Speedup, UnitSpectra
from .science import (
    ADAM_BETAS, FIT_ACC, FOURIER_OPS, GROK_ACC, CorruptConfig, GrokConfig, PhaseConfig,
    end_accuracy, fit_and_grok, fourier_losses, fourier_spectrum, input_weights, key_frequencies,
    Milestones, loss_and_hook, make_data, make_model, model_concentration,
    pair_index, pair_logits, phase_of, spectral_concentration, weight_norm,
)

__all__ = [  # the module's public names (dynamics.grokking exports those the notebooks use)
    "evaluation_steps", "recipe", "GrokRun", "run", "unit_spectra", "progress_measures", "restricted_leads",
    "restricted_at_test_half",
    "remedy_configs", "run_remedies", "speedups", "claim_seeds", "seed_runs", "run_corrupted", "pair_pool", "split_mask",
    "corrupted_runs", "PhaseRow", "MedianCell", "PhaseSweep", "PhaseGrid", "PhaseFile", "PhaseData", "RECORDS", "phase_rows",
    "phase_data", "phase_caveat", "run_phase_grid", "run_phase", "live_phase_config", "live_phase",
    "precompute_plan", "DEFAULT_REMEDIES"
]


# ============================================================================ the results
# What the phase-diagram runners return and data/grokking_phase.json holds, field by field
# (dynamics.results.Record): a claim names what it reads, and a field renamed in the code or
# in the file fails when the file is read, naming it.


@dataclass
class PhaseRow(results.Record):
    """One cell of a phase grid (:func:`phase_rows`): its settings, the final (last
    evaluation) losses and accuracies, whether it diverged and where, the steps it fits and
    generalizes at (None if never), its end (:func:`~.science.end_accuracy`) and best train
    and test accuracy, and its ``phase`` (:func:`~.science.phase_of`). ``stopped``: a cell a
    stopped sweep never ran (written only then). NaN accuracies are None in a file."""

    train_frac: float
    weight_decay: float
    seed: int
    final_train_loss: float
    final_train_acc: float
    final_test_loss: float
    final_test_acc: float
    diverged: bool
    diverged_at: int | None
    fit_step: int | None
    grok_step: int | None
    end_train_acc: float
    best_train_acc: float
    end_test_acc: float
    best_test_acc: float
    phase: str
    stopped: bool = False

    def to_dict(self) -> dict:
        """The payload's row (``stopped`` only where true, as the sweep's table has it)."""
        return {k: v for k, v in super().to_dict().items() if k != "stopped" or v}


@dataclass
class MedianCell:
    """A cell of :func:`~.facts.median_grid`: the fields of a :class:`PhaseRow` the facts
    read, as medians over the seeds; one grid (``seed`` 0), no accuracy at the end."""

    train_frac: float
    weight_decay: float
    phase: str
    grok_step: float | None
    fit_step: float | None
    final_train_loss: float
    end_test_acc: float | None = None
    end_train_acc: float | None = None
    seed: int = 0


@dataclass
class PhaseSweep(results.Record):
    """A phase grid's runs as a file holds them (:meth:`~dynamics.sweep.SweepResult.to_dict`):
    each run's config and history (dicts) and the sweep's info (steps, stopped, betas, wall
    time); :meth:`result` gives the :class:`~dynamics.sweep.SweepResult` back."""

    configs: list
    histories: list
    info: dict

    def result(self) -> SweepResult:
        return SweepResult.from_dict(self.to_dict())


@dataclass
class PhaseGrid(results.Record):
    """What :func:`run_phase_grid` returns: the rows (:class:`PhaseRow`, one per cell), the
    runs (a :class:`~dynamics.sweep.SweepResult`, for a slider over training time) and the
    step budget."""

    rows: list[PhaseRow]
    sweep: SweepResult
    steps: int


@dataclass
class PhaseFile(results.Record):
    """``data/grokking_phase.json``: the precomputed grid's rows, its runs and the budget."""

    rows: list[PhaseRow]
    sweep: PhaseSweep
    steps: int


@dataclass
class PhaseData(PhaseFile):
    """What :func:`phase_data` returns: the file's :class:`PhaseFile` (its rows relabelled)
    and ``status``, whether the file is the current code's, in the words the page glues
    (:func:`phase_caveat`)."""

    status: str = ""


RECORDS = {"grokking_phase": PhaseFile}
"""Each precomputed file of the chapter and the record it is read as."""


def evaluation_steps(steps: int, n: int = 120) -> list[int]:
    """The steps at which a grokking run is evaluated: half log-spaced (memorization happens
    in the first few dozen steps), half evenly spaced (the plateau and the jump)."""
    lin = range(0, steps + 1, max(1, steps // max(1, n // 2)))
    return sorted(set(log_steps(steps, n // 2)) | set(lin) | {0, steps})


# ============================================================================ one run


@dataclass
class GrokRun(Milestones):
    """One trained run: its config, history, final model and data; ``checkpoints`` holds
    ``(step, state_dict)`` pairs when the run kept them."""

    config: GrokConfig
    history: History
    model: nn.Module
    data: D.Dataset
    seed: int = 0
    checkpoints: list = field(default_factory=list, repr=False)

    @property
    def modulus(self) -> int:
        """The task's p: chance is 1/p, for the steady-rise rule of the phase label."""
        return self.config.p

    def status(self) -> str:
        """A short line: fit and grok steps and the phase, or the divergence."""
        if self.history.diverged:
            return self.history.status
        fit, grok = self.fit_step, self.grok_step
        fitted = f"fit at step {fit}" if fit is not None else "never fit"
        general = f"generalized at step {grok}" if grok is not None else "never generalized"
        return f"{fitted}, {general} ({self.phase})"

    def describe(self) -> str:
        """:meth:`status` and the final test accuracy."""
        if self.history.diverged:
            return self.status()
        return f"{self.status()}; test accuracy {self.history.last('test_acc'):.1%}"

    def summary(self) -> dict:
        h = self.history
        fit, grok = fit_and_grok(h)
        return dict(fit_step=fit, grok_step=grok, phase=self.phase,
                    final_train_acc=h.last("train_acc"), final_test_acc=h.last("test_acc"),
                    status=h.status, wall_time=round(h.wall_time, 2))


def _corruption_metrics(data: D.Dataset) -> dict:
    """On the corrupted training examples, the accuracy w.r.t. their wrong label
    (``memorized``) and their true label (``corrected``)."""
    bad, clean = data.info["corrupted"], data.info["y_clean"]

    def on(labels):
        def metric(m, d):
            with torch.no_grad():
                return (m(d.x_train[bad]).argmax(1) == labels[bad]).float().mean()
        return metric

    return dict(memorized=on(data.y_train), corrected=on(clean))


def _state(model: nn.Module) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def recipe(cfg: GrokConfig) -> Recipe:
    """How ``cfg``'s model trains, as it runs: full batch, AdamW (or Muon on the hidden
    matrices with AdamW at the same rate on the rest, :func:`~.science.optimizer_for`) at
    ``cfg.lr`` with decoupled decay ``cfg.weight_decay`` and the model's betas, the remedy's
    loss, evaluated at :func:`evaluation_steps`. The single run, the seeds and the phase grid
    all train by it: ``train(model, data, recipe(cfg))``."""
    return Recipe(cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=cfg.weight_decay,
                  betas=ADAM_BETAS[cfg.model], loss=loss_and_hook(cfg)[0],
                  adam_lr=cfg.lr if cfg.optimizer == "muon" else None,
                  eval=evaluation_steps(cfg.steps, cfg.n_evals))


def run(cfg: GrokConfig, seed: int | None = None, *, data: D.Dataset | None = None,
        stop_at_grok: bool = False, checkpoints: bool = False, on_eval=(),
        bars: bool | None = None) -> GrokRun:
    """Train one model on ``cfg``'s task, full batch, and record train/test loss and accuracy,
    ``weight_norm`` and ``fourier_top10`` (:func:`~.science.spectral_concentration` of the
    input weights) at :func:`evaluation_steps`; with corrupted labels also ``memorized`` and
    ``corrected``. ``stop_at_grok`` ends the run at the first evaluation past GROK_ACC test
    accuracy; ``checkpoints`` keeps the parameters at every evaluation (for
    :func:`progress_measures`); ``on_eval``: ``train`` hooks (a panel's redraw)."""
    seed = get_seed(seed)
    data = data if data is not None else make_data(cfg, seed)
    model = make_model(cfg, seed).to(data.device)
    _, hook = loss_and_hook(cfg)  # the loss is recipe(cfg)'s
    metrics = dict(weight_norm=lambda m, d: weight_norm(m),
                   fourier_top10=lambda m, d: model_concentration(m, cfg.p))
    if "corrupted" in data.info:
        metrics.update(_corruption_metrics(data))
    kept = []
    cbs = list(Hooks(on_eval=on_eval).on_eval)
    if checkpoints:  # train() calls its on_eval hooks at every evaluation, step 0 included
        cbs.insert(0, lambda step, h, m: kept.append((step, _state(m))) and False)
    if stop_at_grok:
        cbs.append(lambda step, h, m: h.last("test_acc") > GROK_ACC)
    h = train(model, data, recipe(cfg), metrics=metrics, hooks=Hooks(hook, on_eval=cbs),
              seed=seed, bars=bars, desc=f"{cfg.op} mod {cfg.p}")
    return GrokRun(cfg, h, model, data, seed, kept)


# ============================================================================ progress measures


def unit_spectra(units: torch.Tensor, n_units: int = 48) -> UnitSpectra:
    """Spectra for the figures: the layer's (share of energy per frequency), up to ``n_units``
    of the strongest units' normalized spectra (sorted by their dominant frequency), and the
    per-unit and whole-layer concentrations."""
    layer = units.sum(1)
    strongest = torch.argsort(units.sum(0), descending=True)[:n_units]
    shown = units[:, strongest]
    shown = shown / shown.sum(0, keepdim=True).clamp_min(1e-30)
    order = torch.argsort(shown.argmax(0), stable=True)
    return UnitSpectra(layer=(layer / layer.sum()).tolist(), units=shown[:, order].T.tolist(),
                       concentration=float(spectral_concentration(units)),
                       layer_concentration=float(spectral_concentration(layer)))


def progress_measures(result: GrokRun, keys=None) -> ProgressMeasures:
    """Restricted and excluded loss (:func:`~.science.fourier_losses`, on the training pairs,
    against the true labels), weight norm and Fourier concentration at every kept checkpoint,
    with the key frequencies (:func:`~.science.key_frequencies`) read off the final model;
    ``other_loss``: the restricted loss on the other frequencies (the keys' complement, the
    control of the restricted loss);
    plus the input-weight spectrum at the fit step and at the end. Needs a run made with
    ``checkpoints=True`` on ``add`` or ``sub``. Returns a :class:`~.records.ProgressMeasures`."""
    cfg = result.config
    if not result.checkpoints:
        raise ValueError("progress_measures needs a run made with checkpoints=True")
    if cfg.op not in FOURIER_OPS:
        raise ValueError(f"restricted/excluded loss are defined for {FOURIER_OPS}, not {cfg.op!r}")
    p, d = cfg.p, result.data
    model = make_model(cfg).to(d.device)
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    labels = D.OPERATIONS[cfg.op](a, b, p).reshape(-1).to(d.device)
    index = pair_index(d.x_train, p)
    final = pair_logits(result.model, p)
    if keys is None:
        keys = key_frequencies(final, p, cfg.op)
    others = [k for k in range(1, (p - 1) // 2 + 1) if k not in set(keys)]
    out = dict(step=[], restricted_loss=[], excluded_loss=[], other_loss=[], weight_norm=[],
               fourier_top10=[])
    spectra = {}
    fit = result.fit_step
    for step, state in result.checkpoints:
        model.load_state_dict(state)
        logits = pair_logits(model, p)
        r, e = fourier_losses(logits, labels, index, keys, p, cfg.op)
        out["other_loss"].append(float(fourier_losses(logits, labels, index, others, p,
                                                       cfg.op)[0]))
        units = fourier_spectrum(input_weights(model, p), per_unit=True)
        out["step"].append(step)
        out["restricted_loss"].append(float(r))
        out["excluded_loss"].append(float(e))
        out["weight_norm"].append(float(weight_norm(model)))
        out["fourier_top10"].append(float(spectral_concentration(units)))
        if step == fit:
            spectra["fit"] = unit_spectra(units)
    spectra["end"] = unit_spectra(fourier_spectrum(input_weights(result.model, p), per_unit=True))
    h = result.history
    return ProgressMeasures.of(dict(
        out, keys=list(keys), n_frequencies=(p - 1) // 2, spectra=spectra, fit_step=fit,
        grok_step=result.grok_step, train_loss=list(h["train_loss"]),
        test_loss=list(h["test_loss"]), history_steps=list(h.steps)))


def restricted_leads(pm: ProgressMeasures, level: float = 0.5) -> bool:
    """Whether the restricted loss falls below ``level`` x its value at the fit step before the
    test loss falls below ``level`` x its own: the hidden progress, in one test."""
    fit = pm.fit_step
    if fit is None or fit not in pm.step:
        return False
    r = dict(zip(pm.step, pm.restricted_loss))
    t = dict(zip(pm.history_steps, pm.test_loss))
    first = lambda d: next((s for s in sorted(d) if s > fit and d[s] < level * d[fit]), None)  # noqa: E731
    rs, ts = first(r), first(t)
    return rs is not None and (ts is None or rs < ts)


def restricted_at_test_half(pm: ProgressMeasures, other: bool = False,
                            level: float = 0.5) -> float:
    """The restricted loss (``other``: its control, on the other frequencies) over its value at the fit step,
    read at the first evaluation after the fit step where the test loss is below ``level`` x
    its own value there: below ``level`` when the restricted loss got there first, with a
    margin (how far below). NaN without a fit step, or where the test loss never gets there."""
    fit = pm.fit_step
    if fit is None or fit not in pm.step:
        return float("nan")
    r = dict(zip(pm.step, pm.other_loss if other else pm.restricted_loss))
    t = dict(zip(pm.history_steps, pm.test_loss))
    if fit not in t:
        return float("nan")
    half = next((s for s in sorted(t) if s > fit and t[s] < level * t[fit]), None)
    if half is None:
        return float("nan")
    at = max((s for s in r if s <= half), default=None)  # the last checkpoint up to that step
    return r[at] / r[fit] if at is not None and r[fit] > 0 else float("nan")


# ============================================================================ several seeds

claim_seeds = plots.claim_seeds  # one home: dynamics.plots.claims


def seed_runs(cfg: GrokConfig, seeds, reuse=(), bars=None) -> dict[str, dict[int, GrokRun]]:
    """Section 1's runs on each of ``seeds`` (each seed's split shared by its runs): ``decay``
    (``cfg``), ``none`` (the control without weight decay, the full budget), ``strong`` (3x the
    decay), ``perp_grad`` (⊥Grad without decay) and ``div`` (a / b). The runs with and without
    decay train the whole budget, the first keeping its checkpoints (for
    :func:`progress_measures`); the others stop once they grok (their rows read only the grok
    step). ``reuse``: runs
    already made (same config and seed), e.g. the page's first runs, read instead of trained.
    Returns ``{name: {seed: run}}``."""
    variants = remedy_configs(cfg)
    want = dict(decay=cfg, none=variants["no_wd"], strong=variants["strong_wd"],
                perp_grad=variants["perp_grad"], div=cfg.replace(op="div"))
    out: dict[str, dict[int, GrokRun]] = {name: {} for name in want}
    for seed in [int(s) for s in seeds]:
        data = make_data(cfg, seed)
        for name, c in want.items():
            done = [r for r in reuse if r.seed == seed and r.config == c]
            full = name in ("decay", "none")
            out[name][seed] = done[0] if done else run(
                c, seed, data=data if c.op == cfg.op else None, stop_at_grok=not full,
                checkpoints=name == "decay", bars=bars)
    return out


# ============================================================================ remedies

DEFAULT_REMEDIES = ("baseline", "strong_wd", "grokfast", "perp_grad", "stablemax", "no_wd")


def remedy_configs(cfg: GrokConfig) -> dict[str, GrokConfig]:
    """The variants compared in the chapter, all on ``cfg``'s task, learning rate and budget:
    the baseline; 3x its weight decay; Grokfast-EMA (α 0.98, λ 2) on top of it; ⊥Grad and
    StableMax *without* weight decay (Prieto et al.'s claim is that each makes weight decay
    unnecessary); Muon; and the control without weight decay or any remedy. Three times a
    weight decay above the config's range is refused (ValueError), never clamped."""
    return dict(
        baseline=cfg,
        strong_wd=cfg.replace(weight_decay=3 * cfg.weight_decay),
        grokfast=cfg.replace(remedy="grokfast"),
        perp_grad=cfg.replace(remedy="perp_grad", weight_decay=0.0),
        stablemax=cfg.replace(remedy="stablemax", weight_decay=0.0),
        muon=cfg.replace(optimizer="muon"),
        no_wd=cfg.replace(weight_decay=0.0),
    )


def run_remedies(cfg: GrokConfig, seeds=(0,), names=DEFAULT_REMEDIES, reuse=(),
                 bars=None) -> list[RemedyRow]:
    """Steps to grok (test accuracy > GROK_ACC) for each of :func:`remedy_configs` on each
    seed; runs stop once they grok. ``reuse`` takes runs already made (same config and seed,
    e.g. the baseline and the control of the first experiment) instead of training them again.
    Rows (:class:`~.records.RemedyRow`): name, seed, weight decay, fit_step, grok_step, phase,
    final accuracies, status, wall_time.
    (Each variant is its own code path, so a dry run keeps them all; only the seeds are cut.)"""
    variants = remedy_configs(cfg)
    names = list(names)
    unknown = set(names) - set(variants)
    if unknown:
        raise ValueError(f"unknown remedies {sorted(unknown)}; choose from {list(variants)}")
    rows = []
    for seed in runtime.grid(seeds):
        data = make_data(cfg, seed)
        for name in names:
            done = [r for r in reuse if r.seed == seed and r.config == variants[name]]
            r = done[0] if done else run(variants[name], seed, data=data, stop_at_grok=True,
                                         bars=bars)
            rows.append(RemedyRow.of(dict(name=name, seed=seed,
                                          weight_decay=variants[name].weight_decay,
                                          **r.summary())))
    return rows


def speedups(rows: list[RemedyRow], budget: int) -> dict[str, Speedup]:
    """Per remedy: median steps to grok over seeds (runs that never grok count as the
    ``budget``), how many runs grokked, and the speed-up over the baseline (baseline steps /
    remedy steps), each a :class:`~.records.Speedup`."""
    by: dict[str, list] = {}
    for r in rows:
        by.setdefault(r.name, []).append(r.grok_step)
    med = {name: float(np.median([budget if s is None else s for s in steps]))
           for name, steps in by.items()}
    base = med.get("baseline")
    return {name: Speedup(steps=med[name], grokked=sum(s is not None for s in steps),
                          runs=len(steps), speedup=(base / med[name]) if base else float("nan"))
            for name, steps in by.items()}


# ============================================================================ corrupted labels


def run_corrupted(cfg: GrokConfig, cc: CorruptConfig | None = None, seed: int | None = None,
                  bars=None) -> Corrupted:
    """Doshi et al.'s setting: ``cc.noise`` of the training labels corrupted (the same ones in
    every run), one run of ``cc.steps`` per weight decay in ``cc.weight_decays``. Returns per
    weight decay the curves of test accuracy and, on the corrupted training examples, of the
    accuracy w.r.t. their wrong label (``memorized``) and their true label (``corrected``),
    and the final values: a :class:`~.records.Corrupted` of one
    :class:`~.records.CorruptedRun` per weight decay."""
    seed = get_seed(seed)
    cc = cc or CorruptConfig()
    noisy = cfg.replace(label_noise=cc.noise, steps=cc.steps)
    data = make_data(noisy, seed)
    wds = runtime.grid(cc.weight_decays)
    runs = []
    for wd in wds:
        h = run(noisy.replace(weight_decay=float(wd)), seed, data=data, bars=bars).history
        runs.append(CorruptedRun(
            weight_decay=wd, steps=list(h.steps), test_acc=list(h["test_acc"]),
            train_acc=list(h["train_acc"]), memorized=list(h["memorized"]),
            corrected=list(h["corrected"]), final_test_acc=h.last("test_acc"),
            final_memorized=h.last("memorized"), final_corrected=h.last("corrected"),
            status=h.status))
    return Corrupted(noise=cc.noise, weight_decays=list(wds), steps=cc.steps, runs=runs)


def corrupted_runs(cfg: GrokConfig, seeds, profile: str | None = None,
                   bars=None) -> dict[int, Corrupted]:
    """:func:`run_corrupted` on each of ``seeds`` at ``profile``'s :class:`CorruptConfig`: the
    first seed with every weight decay (the figure and the table), the others with the two
    ends only (what the claims rows compare). Returns ``{seed: run_corrupted(...)}``."""
    cc = CorruptConfig.for_profile(profile)
    ends = cc.replace(weight_decays=[cc.weight_decays[0], cc.weight_decays[-1]])
    seeds = [int(s) for s in seeds]
    return {s: run_corrupted(cfg, cc if s == seeds[0] else ends, s, bars=bars) for s in seeds}


# ============================================================================ phase diagram


def pair_pool(cfg: GrokConfig, device=None) -> tuple[D.Dataset, torch.Tensor]:
    """All pairs of ``cfg``'s task as one pool (train = test = every pair, in ``a·p + b``
    order, div without b = 0) and their pair indices; configurations then pick their own
    training rows with a mask."""
    d = D.modular_arithmetic(cfg.p, cfg.op, 0.5, seed=0, onehot=cfg.model == "mlp", device=device)
    x = torch.cat([d.x_train, d.x_test])
    y = torch.cat([d.y_train, d.y_test])
    idx = pair_index(x, cfg.p)
    order = torch.argsort(idx)
    x, y, idx = x[order], y[order], idx[order]
    return D.Dataset(x, y, x, y, cfg.p, d.name, dict(d.info, pool=True)), idx


def split_mask(cfg: GrokConfig, pool_index: torch.Tensor, train_frac: float, seed: int) -> torch.Tensor:
    """The pool rows of the training split that :func:`~.science.make_data` would draw for
    ``train_frac`` and ``seed`` (the very same pairs), as a bool mask."""
    d = D.modular_arithmetic(cfg.p, cfg.op, train_frac, seed=seed, onehot=cfg.model == "mlp",
                             device=pool_index.device)
    chosen = torch.zeros(cfg.p * cfg.p, dtype=torch.bool, device=pool_index.device)
    chosen[pair_index(d.x_train, cfg.p)] = True
    return chosen[pool_index]


def phase_rows(sweep: SweepResult, p: int) -> list[PhaseRow]:
    """One row per configuration of a phase-diagram sweep on the task mod ``p``: its settings,
    final (last evaluation), end (:func:`~.science.end_accuracy`) and best train/test accuracy,
    final losses, ``fit_step``, ``grok_step`` and ``phase`` (:func:`~.science.phase_of`, which
    reads the whole history, with chance 1/p; "stopped" for a run that a stopped sweep cut
    short)."""
    budget = sweep.info.get("steps") or max((h.steps[-1] for h in sweep.histories if len(h)), default=0)
    rows = sweep.table(thresholds={"train_acc": ("above", FIT_ACC), "test_acc": ("above", GROK_ACC)},
                       metrics=["train_loss", "train_acc", "test_loss", "test_acc"])
    for row, h in zip(rows, sweep.histories):
        row["fit_step"], row["grok_step"] = row.pop("steps_to_train_acc"), row.pop("steps_to_test_acc")
        for split in ("train", "test"):
            acc = h[f"{split}_acc"] if len(h) else np.array([])
            row[f"end_{split}_acc"] = end_accuracy(h, split) if len(h) else float("nan")
            row[f"best_{split}_acc"] = float(acc.max()) if len(acc) else float("nan")
        row["phase"] = phase_of(h, p=p)
        if len(h) and not h.diverged and h.steps[-1] < budget:
            row["phase"] = "stopped"  # a stopped sweep: this run ended before its budget
    return [PhaseRow.of(row) for row in rows]


def phase_data() -> tuple[PhaseData, dict]:
    """The precomputed phase diagram (``data/grokking_phase``, read as a :class:`PhaseFile`)
    and its provenance, its rows relabelled by the current rule (:func:`~.science.phase_of`)
    from the file's own histories: a label rule changed after the file was written moves no
    run's numbers, only its label ("stopped" rows stay as written); its ``status`` says
    whether the file is the current code's (:func:`phase_caveat`)."""
    grid, prov = results.load("grokking_phase", as_=RECORDS["grokking_phase"])
    p = prov["config"]["phase"]["p"]
    hs = grid.sweep.result().histories
    rows = [r if r.phase == "stopped" else replace(r, phase=phase_of(h, p=p))
            for r, h in zip(grid.rows, hs)]
    return PhaseData(rows, grid.sweep, grid.steps, status=phase_caveat(prov)), prov


def phase_caveat(prov: dict) -> str:
    """Whether the precomputed phase diagram (``prov``, :func:`phase_data`'s provenance) is
    known to be the current code's, in words the page glues wherever it reads the file."""
    if not prov.get("source"):
        return ("not yet checked against the current code (the file predates the book's record "
                "of the code behind each file)")
    if prov["source"] != results.source_digest(results.chapter_of(prov["file"])):
        return ("made by an earlier version of the code, not yet re-checked against the current "
                "one (its labels are recomputed from its stored curves)")
    return "made by the current code"


def run_phase_grid(cfg: GrokConfig, train_fracs, weight_decays, seeds=(0,),
                   steps: int | None = None, bars=None) -> PhaseGrid:
    """Steps to fit and to generalize over training fraction x weight decay: one model per
    (fraction, weight decay, seed), trained by :func:`dynamics.sweep.train_many` on the pool of
    all pairs (``train_mask`` = the configuration's split, ``test_mask`` = the rest); one
    batched call per fraction, so that every model in a call has as many rows (no padding).
    It reports into :func:`dynamics.progress.current` (a panel's bar); once stopped, the cells
    not reached are kept with empty histories (phase "not run").
    Transformers train one after another (attention does not batch under ``vmap`` yet).
    A dry run keeps the ends of each axis (``runtime.grid``).
    Returns a :class:`PhaseGrid`: the table rows (:func:`phase_rows`), the merged
    :class:`~dynamics.sweep.SweepResult` (for a slider over training time) and ``steps``."""
    if cfg.optimizer != "adamw" or cfg.remedy != "none" or cfg.label_noise:
        raise ValueError("the phase diagram sweeps plain AdamW runs (no remedy, clean labels)")
    train_fracs = runtime.grid([float(f) for f in train_fracs])  # a dry run: the ends
    weight_decays = runtime.grid([float(w) for w in weight_decays])
    seeds = [int(s) for s in seeds]
    if not train_fracs or not weight_decays or not seeds:
        raise ValueError("the phase diagram needs at least one training fraction, weight decay and seed")
    steps = runtime.steps(steps or cfg.steps)  # a dry run: a few steps, and the rows know it
    pool, index = pair_pool(cfg)
    strategy = "sequential" if cfg.model == "transformer" else "auto"
    configs, histories, states, start = [], [], [], time.perf_counter()
    stopped = False
    job = P.current()
    for i, frac in enumerate(train_fracs):
        cells = grid(train_frac=[frac], weight_decay=weight_decays, seed=seeds)
        if stopped:  # the sweep was stopped: the rest keep empty histories
            configs += cells
            histories += [History(info=dict(steps=steps, stopped=True)) for _ in cells]
            states += [{} for _ in cells]
            continue
        split = {s: split_mask(cfg, index, float(frac), s) for s in seeds}  # one per seed, not per cell
        masks = torch.stack([split[c["seed"]] for c in cells])
        shared = recipe(cfg).replace(steps=steps, eval=evaluation_steps(steps, cfg.n_evals))
        with job.part(i, len(train_fracs)):
            part = train_many(lambda c: make_model(cfg, c["seed"]), pool, cells, shared,
                              masks=dict(train=masks, test=~masks), strategy=strategy,
                              bars=bars)
        configs += part.configs
        histories += part.histories
        states += part.states
        stopped = bool(part.info.get("stopped"))
    sweep = SweepResult(configs, histories, states, info=dict(
        steps=steps, stopped=stopped, betas=list(ADAM_BETAS[cfg.model]),
        wall_time=time.perf_counter() - start))
    return PhaseGrid(phase_rows(sweep, cfg.p), sweep, steps)


def run_phase(pcfg: PhaseConfig, seed: int | None = None, bars=None) -> PhaseGrid:
    """:func:`run_phase_grid` for a :class:`~.science.PhaseConfig`, on seeds ``seed`` to
    ``seed + pcfg.seeds - 1`` (in a dry run, only the two ends of each axis)."""
    seed = get_seed(seed)
    return run_phase_grid(pcfg.base(), pcfg.train_fracs, pcfg.weight_decays,
                          seeds=range(seed, seed + pcfg.seeds), steps=pcfg.steps,
                          bars=bars)


def live_phase_config(profile: str | None = None) -> PhaseConfig:
    """The phase diagram a notebook trains live, on one seed: the smoke grid, or the cpu one
    on a GPU (the precomputed, larger one is ``PhaseConfig.for_profile(profile)``)."""
    return PhaseConfig.for_profile("cpu" if get_profile(profile) == "gpu" else "smoke",
                                   seeds=1)


def live_phase(profile: str | None = None, seed: int | None = None, bars=None) -> PhaseGrid:
    """The phase diagram a notebook trains live (:func:`live_phase_config`), on ``seed``:
    :func:`run_phase`'s :class:`PhaseGrid`."""
    return run_phase(live_phase_config(profile), seed, bars=bars)


# ============================================================================ precompute


def precompute_plan(profile: str | None = None) -> units.Plan:
    """The phase diagram at ``profile``'s scale as units, one per training fraction (one
    batched call over weight decay x seed), or per cell for the transformer (which trains one
    model after another), written to ``grokking_phase`` (table rows and every run's history,
    for the heatmap, the slider over time and the curves slider)."""
    from ..plots import rounded  # the book's one rounding helper (for JSON in data/)

    p = units.Plan("grokking", profile)
    pcfg = PhaseConfig.for_profile(p.profile)
    base, seeds = pcfg.base(), list(range(pcfg.seeds))
    if base.model == "transformer":  # trained one after another anyway: a unit per cell
        for frac in p.grid(pcfg.train_fracs):
            for wd in p.grid(pcfg.weight_decays):
                p.unit(f"train_frac={frac:g} weight_decay={wd:g}",
                       partial(_phase_unit, base, frac, [wd], seeds, pcfg.steps),
                       config=dict(phase=pcfg.to_dict(), train_frac=frac, weight_decays=[wd]))
    else:  # a unit per training fraction: one batched call over weight decay x seed
        decays = p.batch(pcfg.weight_decays)
        for frac in p.grid(pcfg.train_fracs):
            p.unit(f"train_frac={frac:g}", partial(_phase_unit, base, frac, decays, seeds, pcfg.steps),
                   config=dict(phase=pcfg.to_dict(), train_frac=frac, weight_decays=decays))

    def assemble(parts: dict) -> dict:
        parts = list(parts.values())
        sweeps = [part["sweep"] for part in parts]
        info = dict(sweeps[0]["info"], wall_time=sum(sw["info"]["wall_time"] for sw in sweeps))
        sweep = dict(configs=[c for sw in sweeps for c in sw["configs"]],
                     histories=[h for sw in sweeps for h in sw["histories"]], info=info)
        rows = [row for part in parts for row in part["rows"]]
        return rounded(dict(rows=rows, sweep=sweep, steps=parts[0]["steps"]))

    scale = {"gpu": "the gpu profile's larger grid",
             "cpu": "the largest grid a 2-core CPU runs in a few minutes",
             "smoke": "a tiny grid for tests"}[p.profile]
    runs = len(pcfg.train_fracs) * len(pcfg.weight_decays) * pcfg.seeds
    p.output("grokking_phase", assemble,
             config=dict(phase=pcfg.to_dict(), base=base.to_dict(), betas=list(ADAM_BETAS[pcfg.model])),
             command=f"python -m dynamics_ops.precompute grokking --profile {p.profile}",
             note=lambda t: (f"p = {pcfg.p}, {runs} runs of {pcfg.steps} steps "
                             f"({t['cpu_seconds']:.0f} s of CPU time): {scale}."))
    return p


def _phase_unit(cfg: GrokConfig, frac: float, decays, seeds, steps: int) -> dict:
    """One unit of the precomputed phase diagram: the cells of one training fraction."""
    out = run_phase_grid(cfg, [frac], decays, seeds=seeds, steps=steps, bars=False)
    return dict(rows=[r.to_dict() for r in out.rows], sweep=out.sweep.to_dict(), steps=out.steps)


