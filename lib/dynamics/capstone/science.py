"""One network, six phenomena, the science: the measures of every chapter on one run.

The grokking chapter's task and model (``a + b mod p``; its MLP in the smoke and cpu profiles,
Nanda et al.'s one-layer transformer at gpu) are trained once, and at every evaluation the
network is read with each chapter's own measure, imported from its theme, never re-written:

- accuracies and the fit and grok steps: :mod:`dynamics.grokking` (``fit_and_grok``);
- the weight norm, AdamW's equilibrium RMS ``√(η/2λ)`` and its clock ``τ = 1/(ηλ)``:
  :mod:`dynamics.weight_decay` (``adamw_equilibrium``, ``relaxation_steps``);
- NC1 and the distance of the class means to a simplex ETF, on the training set:
  :mod:`dynamics.collapse` (``nc_metrics``);
- the effective rank of a hidden weight matrix, of its last update and of the optimizer's
  own step in that update (the update with the decay term taken out, :func:`decoupled_step`):
  the spectrum measures of :mod:`dynamics.weight_decay` (``singular_values``,
  ``effective_rank``);
- the Fourier concentration of the input weights: :mod:`dynamics.grokking`
  (``model_concentration``).

What this module adds is the glue only: a config (:class:`OneConfig`), the initial scale
(lazy ↔ rich, Kumar et al.), one function that reads all measures at once (:func:`measure`),
a probe for the update of one step (:class:`UpdateProbe`) and the few step-finding rules the
four questions use (:func:`settle`, :func:`settle_step`, :func:`falls_step`). No plotting.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from .. import models as M
from ..config import Config, param
from ..collapse.science import nc_metrics
from ..grokking.science import GrokConfig, model_concentration, weight_norm
from ..weight_decay.science import (
    adamw_equilibrium, effective_rank, relaxation_steps, singular_values,
)

__all__ = [
    "OneConfig", "GridConfig", "MEASURES", "scale_init_", "hidden_matrix", "numel", "measure",
    "normalized_rank", "decoupled_step", "step_readings", "STEP_READINGS", "ZERO_ROW", "UpdateProbe", "equilibrium_rms", "settle", "settle_step", "falls_step",
    "SETTLE_YES", "SETTLE_NOT", "SETTLE_TOO_LITTLE", "SETTLE_SHORT",
    "course_after_peak", "update_collapse", "NC1_DROP", "SETTLED", "UPDATE_DROP",
]

# the timeline's measures, in the order the figure draws them
MEASURES = ("weight_rms", "nc1", "etf_distance", "weight_rank", "update_rank", "step_rank",
            "fourier")
# read off the update of the hidden matrix at each evaluation beside the measures (not drawn):
# science.step_readings, and the matrix's own norm
STEP_READINGS = ("step_radial", "update_radial", "step_across_rank", "step_zero_rows",
                 "step_live_rank", "step_sv_min", "step_sv_median", "matrix_norm")
ZERO_ROW = 1e-3  # a row of a step "does not move": its norm below this x the largest row's
NC1_DROP = 0.5  # "NC1 falls": below this fraction of its value at the fit step
SETTLED = 0.01  # "stays at its minimum": the end within this fraction of the minimum after the peak
UPDATE_DROP = 0.75  # "the update collapses": its rank / n below this fraction of the evaluation
#                     before (a calm run loses a few percent per evaluation)


@dataclass
class OneConfig(Config):
    """The capstone's run: the grokking chapter's task and model with an initial scale.
    Presets: smoke (p = 37, 70% of the pairs, width 64, 700 steps: seconds), cpu (p = 37,
    70% of the pairs, width 64, 1,000 steps), gpu (Nanda et al.'s transformer, p = 113,
    30%, lr 1e-3, 10,000 steps: sized for a T4's ten minutes)."""

    p: int = param(37, "the modulus p", low=5, high=257, smoke=37, cpu=37, gpu=113)
    train_frac: float = param(0.6, "fraction of the pairs used for training", low=0.05,
                              high=0.95, smoke=0.7, cpu=0.7, gpu=0.3)
    model: str = param("mlp", "MLP on one-hot pairs, or the one-layer transformer",
                       choices=("mlp", "transformer"), smoke="mlp", cpu="mlp",
                       gpu="transformer")
    width: int = param(64, "MLP hidden width / transformer d_model", low=8, high=1024,
                       smoke=64, cpu=64, gpu=128)
    optimizer: str = param("adamw", "optimizer (Muon: the hidden matrices after the first; "
                           "AdamW: the rest)",
                           choices=("adamw", "muon"))
    muon_lr: float = param(0.1, "Muon's learning rate on the hidden matrices", low=1e-4,
                           high=1.0, log=True)
    lr: float = param(1e-2, "learning rate", low=1e-5, high=1.0, log=True, smoke=1e-2,
                      cpu=1e-2, gpu=1e-3)
    weight_decay: float = param(1.0, "decoupled weight decay λ", low=0.0, high=10.0)
    init_scale: float = param(1.0, "initial weights x this (larger: lazier)", low=0.05,
                              high=20.0, log=True)
    steps: int = param(1000, "full-batch training steps", low=1, high=200_000, smoke=700,
                       cpu=1000, gpu=10_000)
    n_evals: int = param(60, "evaluations per run", low=10, high=2000, smoke=40, cpu=60,
                         gpu=80)
    keep_frac: float = param(0.5, "lottery: share kept of the weight matrices before the head "
                                  "(the head is pruned at half the rate)", low=0.05, high=0.95)
    rewind_step: int = param(10, "lottery: the early step rewound to (θ_k)", low=0,
                             high=100_000, smoke=10, cpu=10, gpu=100)

    def grok(self) -> GrokConfig:
        """The grokking chapter's config for the same run (task, model, optimizer recipe)."""
        return GrokConfig(p=self.p, train_frac=self.train_frac, model=self.model,
                          width=self.width, optimizer=self.optimizer, lr=self.lr,
                          weight_decay=self.weight_decay, steps=self.steps,
                          n_evals=self.n_evals)


@dataclass
class GridConfig(Config):
    """The precomputed grid: initial scale x weight decay x optimizer x seeds on the
    profile's :class:`OneConfig`, plus the clock grid: more learning rates x the same weight
    decays (AdamW, initial scale 1), whose cells at the run's own learning rate are the
    grid's."""

    init_scales: list = param([0.5, 1.0, 4.0], "initial scales", smoke=[0.5, 1.0, 4.0],
                              cpu=[0.5, 1.0, 4.0], gpu=[0.5, 1.0, 2.0])
    weight_decays: list = param([1.0, 3.0], "weight decays", smoke=[1.0, 3.0],
                                cpu=[1.0, 3.0], gpu=[0.3, 1.0])
    optimizers: list = param(["adamw", "muon"], "optimizers")
    clock_lrs: list = param([5e-3, 2e-2], "the clock grid's other learning rates",
                            smoke=[2e-2], cpu=[5e-3, 2e-2], gpu=[3e-3])
    seeds: int = param(3, "seeds per cell", low=1, high=10, smoke=1, cpu=3, gpu=1)
    clock_seeds: int = param(3, "seeds per cell of the clock grid", low=1, high=10, smoke=1,
                             cpu=3, gpu=1)
    claim_seeds: int = param(3, "seeds the page's first run and initial-scale sweep train (its "
                             "claims are judged on them): one at gpu, where a run is a minute",
                             low=1, high=10, smoke=3, cpu=3, gpu=1)
    lr_factors: list = param([0.5, 1.0, 2.0], "the learning rates each optimizer tries against "
                             "the other, as multiples of its own (AdamW: lr, Muon: muon_lr)",
                             smoke=[0.5, 1.0, 2.0], cpu=[0.5, 1.0, 2.0], gpu=[1.0])

    def learning_rates(self, cfg: OneConfig) -> dict:
        """The learning rates each optimizer tries in the comparison: the same budget for
        both, ``lr_factors`` times its own learning rate (AdamW: the recipe's ``lr``, Muon:
        ``muon_lr``), so that each gets as many tries, spaced the same way, around its own.
        (AdamW's ``lr`` is the grokking chapter's tuned recipe; ``muon_lr`` is not tuned on
        this task.)"""
        return {"adamw": [cfg.lr * f for f in self.lr_factors],
                "muon": [cfg.muon_lr * f for f in self.lr_factors]}


@torch.no_grad()
def scale_init_(model: nn.Module, scale: float) -> nn.Module:
    """Multiply every initial parameter by ``scale`` (what ``train_many``'s ``init_scale``
    does). Kumar et al. set laziness by the scale of the network's output at initialization:
    the larger it is, the less the features must move to fit, and the longer the network
    stays near its linearization (lazy); a small scale forces the features to move (rich)."""
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"init_scale must be a positive number, got {scale!r}")
    for p in model.parameters():
        p.mul_(scale)
    return model


def hidden_matrix(model: nn.Module) -> torch.Tensor:
    """The hidden weight matrix whose spectrum the timeline follows: the MLP's last hidden
    layer (width x width when it has two) or the transformer's MLP input layer."""
    if isinstance(model, M.MLP):
        return model.hidden[-1].weight
    if isinstance(model, M.Transformer1L):
        return model.mlp[0].weight
    raise ValueError(f"no hidden matrix known for {type(model).__name__}")


def numel(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def normalized_rank(w: torch.Tensor) -> float:
    """:func:`~dynamics.weight_decay.science.effective_rank` of ``w`` divided by its largest
    possible value, min(rows, cols): 1 for a flat spectrum (an orthogonal matrix, Muon's
    update), near 1/n for rank one. NaN for a zero matrix."""
    sv = singular_values(w)
    if not sv.size or sv.sum() <= 0:
        return float("nan")
    return effective_rank(sv) / min(w.shape)


def equilibrium_rms(lr: float, weight_decay: float) -> float:
    """AdamW's equilibrium RMS per weight, √(η/2λ) (the weight decay chapter's
    :func:`~dynamics.weight_decay.science.adamw_equilibrium`; derived for scale-invariant
    weights, which this network's are not). NaN without weight decay."""
    if weight_decay <= 0:
        return float("nan")
    return adamw_equilibrium(lr, weight_decay, 1)["rms"]


@torch.no_grad()
def measure(model: nn.Module, x: torch.Tensor, y: torch.Tensor, p: int) -> dict:
    """Every chapter's measure of ``model`` at one moment, as floats: ``weight_rms``
    (‖θ‖/√n), ``nc1`` and ``etf_distance`` of the penultimate features on ``(x, y)`` (the
    training set), ``weight_rank`` (:func:`normalized_rank` of :func:`hidden_matrix`) and
    ``fourier`` (the top-10% Fourier share of the input weights)."""
    with M.evaluating(model):
        feats = model.features(x)
    head = model.head
    nc = nc_metrics(feats, y, head.weight, head.bias, p)
    return dict(weight_rms=float(weight_norm(model)) / math.sqrt(numel(model)),
                nc1=float(nc["nc1"]), etf_distance=float(nc["etf_distance"]),
                weight_rank=normalized_rank(hidden_matrix(model).detach()),
                fourier=float(model_concentration(model, p)))


def decoupled_step(before: torch.Tensor, after: torch.Tensor, shrink: float) -> torch.Tensor:
    """The optimizer's own step inside one update of a matrix trained with decoupled weight
    decay, ``after - (1 - shrink) * before``. AdamW and ``torch.optim.Muon`` both update
    θ ← (1 - ηλ)·θ - η·step, so the whole update ``after - before`` is the sum of the decay
    term -ηλ·θ and -η·step; with ``shrink`` = ηλ (the decay's factor per step) this is
    -η·step alone: Adam's step, or Muon's orthogonalized one, as it would be without decay."""
    if not (math.isfinite(shrink) and shrink >= 0.0):
        raise ValueError(f"shrink: the decay's factor per step ηλ must be finite and >= 0, "
                         f"got {shrink}")
    return after - (1.0 - shrink) * before


def _share_along(x: torch.Tensor, w: torch.Tensor) -> float:
    """The share of ``x``'s squared norm along ``w``: ⟨x, w⟩² / (‖x‖²‖w‖²) (NaN for a zero one)."""
    xx, ww = float((x * x).sum()), float((w * w).sum())
    return float((x * w).sum()) ** 2 / (xx * ww) if xx > 0 and ww > 0 else math.nan


def step_readings(step: torch.Tensor, weights: torch.Tensor, shrink: float = 0.0) -> dict:
    """What the page reads of the optimizer's ``step`` of a matrix besides its rank, against
    the ``weights`` θ it is applied to (the whole update is ``step - shrink * weights``):
    ``step_radial`` and ``update_radial``, the share of the step's and of the whole update's
    squared norm along the weights, ⟨s, θ⟩² / (‖s‖²‖θ‖²) (where the matrix's norm holds steady
    the decay term cancels the step's, and the update's is near 0); ``step_across_rank``,
    :func:`normalized_rank` of the step with its component along the weights removed;
    ``step_zero_rows``, its rows that do not move (norm below :data:`ZERO_ROW` x the largest
    row's: units that get no gradient); over the rows that move, ``step_live_rank``
    (:func:`normalized_rank`) and the smallest and the median singular value over the
    largest (``step_sv_min``, ``step_sv_median``); ``matrix_norm``, ‖θ‖. NaN where the step or
    the weights are 0."""
    s, w = step.double(), weights.double()
    ww = float((w * w).sum())
    across = s - float((s * w).sum()) / ww * w if ww > 0 else s
    rows = s.norm(dim=1)
    live = rows > ZERO_ROW * float(rows.max()) if float(rows.max()) > 0 else rows > 0
    sv = singular_values(s[live]) if bool(live.any()) else np.zeros(0)
    return dict(step_radial=_share_along(s, w), update_radial=_share_along(s - shrink * w, w),
                step_across_rank=normalized_rank(across) if ww > 0 else math.nan,
                step_zero_rows=int((~live).sum()) if sv.size else math.nan,
                step_live_rank=normalized_rank(s[live]) if sv.size else math.nan,
                step_sv_min=float(sv.min() / sv.max()) if sv.size else math.nan,
                step_sv_median=float(np.median(sv) / sv.max()) if sv.size else math.nan,
                matrix_norm=math.sqrt(ww))


class UpdateProbe:
    """The update of the hidden matrix at chosen steps, as ``before_step`` / ``after_step``
    hooks of :func:`dynamics.train.train`: before the optimizer step it copies the matrix,
    after it keeps :func:`normalized_rank` of the difference (``rank``: the whole update)
    and of the optimizer's step in it (``step_rank``: :func:`decoupled_step`, the update with
    the decay term -``shrink``·θ taken out; ``shrink`` = ηλ of the matrix's optimizer, 0
    without decay), with :func:`step_readings` of that step (``readings``). Only the chosen
    steps are touched (one copy and four SVDs each), so no step syncs with the host
    otherwise."""

    def __init__(self, model: nn.Module, steps, shrink: float = 0.0):
        self.w = hidden_matrix(model)
        self.steps = set(int(s) for s in steps)
        self.shrink = float(shrink)
        decoupled_step(self.w[:0], self.w[:0], self.shrink)  # a bad shrink fails here, early
        self.before = None
        self.rank: dict[int, float] = {}
        self.step_rank: dict[int, float] = {}
        self.readings: dict[int, dict] = {}

    @torch.no_grad()
    def before_step(self, model, step: int) -> None:
        if step in self.steps:
            self.before = self.w.detach().clone()

    @torch.no_grad()
    def after_step(self, model, step: int) -> None:
        if step in self.steps and self.before is not None:
            after = self.w.detach()
            self.rank[step] = normalized_rank(after - self.before)
            alone = decoupled_step(self.before, after, self.shrink)
            self.step_rank[step] = normalized_rank(alone)
            self.readings[step] = step_readings(alone, self.before, self.shrink)
            self.before = None


SETTLE_TOO_LITTLE = "too little to relax"
SETTLE_NOT = "not settled"
SETTLE_YES = "settled"
SETTLE_SHORT = "too short"
RELAX_MIN = 0.3  # relaxation_steps's own rule: a start within 30% of the end has nothing to relax


def settle(steps, rms, tail: int = 3) -> dict:
    """When the weight RMS reaches its equilibrium under decay, and if it does not, why:
    ``step`` and ``why``. From the evaluation where the RMS peaks (the network first grows
    its weights to fit), ``step`` is the first evaluated step where the squared RMS has
    closed all but e⁻² of its gap to its value at the end (the median of the last ``tail``
    evaluations), by the weight decay chapter's
    :func:`~dynamics.weight_decay.science.relaxation_steps` (two time constants of ‖θ‖²:
    τ = 1/(ηλ) for a scale-invariant weight). ``why`` is ``"settled"``; ``"too little to
    relax"`` when the peak is within 30% of the end (that function's refusal: a curve that
    barely falls is not a relaxation to time, and not a failure to settle); ``"not
    settled"`` when it closes its gap only within the last ``tail`` evaluations, the ones
    that define its end value (it is still relaxing when the budget ends: measured against
    its own end, a curve that falls by more than 30% always closes its gap there at the
    latest); ``"too short"`` for fewer than ``tail`` + 1 finite values. ``step`` is None
    unless settled."""
    rms = np.asarray(rms, dtype=float)
    if len(rms) < tail + 1 or not np.all(np.isfinite(rms)):
        return dict(step=None, why=SETTLE_SHORT)
    peak = int(np.argmax(rms))
    end = float(np.median(rms[-tail:]))
    if end > 0 and abs(rms[peak] / end - 1) < RELAX_MIN:
        return dict(step=None, why=SETTLE_TOO_LITTLE)
    idx = relaxation_steps(rms[peak:], end)
    # the end value is the curve's own, so a curve that falls by more than 30% always closes
    # its gap by its last evaluations: one that does so only there is still relaxing at the end
    if idx is None or peak + idx >= len(rms) - tail:
        return dict(step=None, why=SETTLE_NOT)
    return dict(step=int(steps[peak + idx]), why=SETTLE_YES)


def settle_step(steps, rms, tail: int = 3) -> int | None:
    """:func:`settle`'s step: None when the RMS does not settle, for either reason (too
    little to relax, or never closing its gap): ask :func:`settle` which."""
    return settle(steps, rms, tail)["step"]


def falls_step(steps, values, ref_step: int | None, drop: float = NC1_DROP) -> int | None:
    """The first evaluated step after ``ref_step`` at which ``values`` fall below ``drop``
    times their value at ``ref_step`` (for NC1: when the classes start to collapse)."""
    steps = list(steps)
    if ref_step is None or ref_step not in steps:
        return None
    i = steps.index(ref_step)
    ref = values[i]
    if not math.isfinite(ref):
        return None
    return next((s for s, v in zip(steps[i:], values[i:]) if v < drop * ref), None)


def course_after_peak(steps, values, tol: float = SETTLED) -> dict:
    """What a curve that rises to a peak does after it (the weight RMS: it grows while the
    network memorizes, then decay shrinks it): the peak and its step, the lowest value after
    the peak and its step, the value at the end, and ``course``, one of ``"still falling"``
    (the minimum is the last evaluation), ``"stays"`` (the end within ``tol`` of the
    minimum, as a fraction of it) or ``"climbs back"`` (the end above that)."""
    steps, v = list(steps), np.asarray(values, dtype=float)
    if len(steps) != len(v) or not len(v):
        raise ValueError(f"course_after_peak needs as many steps as values, got {len(steps)} "
                         f"and {len(v)}")
    if not np.all(np.isfinite(v)):
        raise ValueError("course_after_peak needs finite values")
    if not (isinstance(tol, (int, float)) and 0 <= tol < 1):
        raise ValueError(f"tol must be a fraction in [0, 1), got {tol!r}")
    peak = int(np.argmax(v))
    low = peak + int(np.argmin(v[peak:]))
    course = ("still falling" if low == len(v) - 1 and low > peak else
              "stays" if v[-1] <= v[low] * (1 + tol) else "climbs back")
    return dict(peak_step=int(steps[peak]), peak=float(v[peak]), min_step=int(steps[low]),
                min=float(v[low]), end=float(v[-1]), course=course)


def update_collapse(steps, update_rank, after: int | None, drop: float = UPDATE_DROP) -> dict:
    """The sharpest fall of the update's rank between two evaluations after step ``after``
    (the fit step): ``step`` (the evaluation it falls to), ``before`` and ``rank`` (its
    values at the evaluation before and at ``step``) and ``collapses``: whether it fell
    below ``drop`` times its value at the evaluation before. A calm run's update loses rank
    slowly (a few percent per evaluation at the cpu profile); an update that suddenly
    concentrates in fewer directions (an optimizer's instability late in training) falls by
    nearly half to four fifths at once. NaN ranks (steps without a probe) are skipped; ``step``
    is None when fewer than two ranks are known after ``after``."""
    if not (isinstance(drop, (int, float)) and 0 < drop < 1):
        raise ValueError(f"drop must be a fraction in (0, 1), got {drop!r}")
    none = dict(step=None, before=float("nan"), rank=float("nan"), collapses=False)
    if after is None:
        return none
    known = [(int(s), float(r)) for s, r in zip(steps, update_rank)
             if s >= after and math.isfinite(r) and r > 0]
    if len(known) < 2:
        return none
    i = min(range(1, len(known)), key=lambda j: known[j][1] / known[j - 1][1])
    (_, before), (step, rank) = known[i - 1], known[i]
    return dict(step=step, before=before, rank=rank, collapses=rank < drop * before)
