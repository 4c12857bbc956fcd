"""Weight decay, the science: what decay does to Adam, to normalized weights, and to time.

Read top to bottom; each part is one section of ``chapters/weight_decay.ipynb``:

1. **Two ways to put decay into Adam** (:func:`adam_step`): as an L2 penalty whose gradient
   goes through Adam's normalization, or decoupled from it (AdamW).
2. **Scale invariance and the rotational equilibrium**: a network whose weights all feed a
   normalization (:class:`NormMLP`); the norm recursion and where it settles
   (:func:`norm_step`, :func:`adamw_equilibrium`, :func:`sgd_equilibrium`,
   :func:`adamw_norm_trajectory`); the angle turned per step (:func:`angular_update`),
   measured every step by :class:`RotationMeter`.
3. **The clock**: training time in units of tau = 1 / (eta lambda) (:func:`clock_time`) and
   runs that share eta * lambda (:func:`matched_runs`).
4. **What decay leaves in the weights**: norms, ranks and the power-law tail of the spectrum
   (:func:`singular_values`, :func:`stable_rank`, :func:`effective_rank`, :func:`tail_fit`),
   defined in :mod:`.spectra` and re-exported here.
5. **Reading a learning-rate x decay grid**: the best cell, the best decay at each learning
   rate, and the direction of the ridge of good cells (:func:`best_decay_per_lr`,
   :func:`ridge_slope`).
6. **The experiments' settings** (one :class:`~dynamics.config.Config` each) and the data.

Conventions: ``lr`` is eta and ``weight_decay`` is lambda *as PyTorch defines them*:
``torch.optim.AdamW`` multiplies the weights by ``1 - eta * lambda`` every step, so the decay
per step is the product eta * lambda and its timescale is tau = 1 / (eta lambda) steps;
``torch.optim.SGD`` adds ``lambda * w`` to the gradient. Loshchilov & Hutter write AdamW with
a decay that does not contain the learning rate (their lambda is our eta * lambda). Momentum
coefficients: ``beta1`` for Adam, ``mu`` (``momentum``) for heavy-ball SGD; ``alpha`` is kept
for the tail exponent of section 4.

This module imports torch, numpy and the book's core only: no plotting, no widgets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..config import Config, param
from ..data import Dataset, mnist1d
from ..train import History, check_hyper
from .spectra import (effective_rank, singular_values, spectrum_stats, stable_rank,
                      tail_exponent, tail_fit)

EQUILIBRIUM_OPTIMIZERS = ("sgd", "momentum", "adamw")
BETA1 = 0.9     # Adam's first-moment decay (torch's default); it enters the angular update
MOMENTUM = 0.9  # mu, the heavy-ball coefficient of the "momentum" optimizer


# ============================================================================ 1. decay in Adam


def adam_step(w: torch.Tensor, g: torch.Tensor, m: torch.Tensor, v: torch.Tensor, t: int, *,
              lr: float, weight_decay: float, decoupled: bool,
              betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
    """One Adam step with weight decay, coupled (Adam + L2) or decoupled (AdamW).

    Returns the new ``(w, m, v)``; ``t`` counts steps from 1. The two variants differ in one
    place only, *where* lambda enters. Adam + L2 (``torch.optim.Adam(weight_decay=...)``) adds
    the penalty's gradient ``lambda * w`` to the loss gradient, so the decay is averaged into
    m and v and then divided by sqrt(v) like everything else: a coordinate whose gradients
    have been large is decayed less. AdamW (``torch.optim.AdamW``) leaves m and v to the loss
    gradient and shrinks the weights by the factor ``1 - eta * lambda`` outside the
    normalization: every coordinate loses the same fraction per step.
    """
    beta1, beta2 = betas
    if not decoupled:
        g = g + weight_decay * w             # L2: the decay joins the gradient ...
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
    if decoupled:
        w = w * (1 - lr * weight_decay)      # ... or shrinks the weights outside the normalization
    return w - lr * m_hat / (v_hat.sqrt() + eps), m, v


# ============================================================================ 2. scale invariance


def zero_gradient_path(lr: float, weight_decay: float, decoupled: bool, steps: int,
                       w0: float = 1.0) -> np.ndarray:
    """A weight coordinate that receives no gradient from the loss, under :func:`adam_step`
    (exercise 5): its value after each of ``steps`` steps. Decoupled (AdamW) it shrinks as
    (1 - eta lambda)^t; under Adam + L2 its only gradient is lambda w, which Adam divides by
    its own size, so lambda drops out and it moves by about eta per step."""
    w, m, v, zero = torch.full((1,), float(w0)), torch.zeros(1), torch.zeros(1), torch.zeros(1)
    out = np.empty(steps)
    for t in range(1, steps + 1):
        w, m, v = adam_step(w, zero, m, v, t, lr=lr, weight_decay=weight_decay, decoupled=decoupled)
        out[t - 1] = float(w)
    return out


class NormMLP(nn.Module):
    """An MLP whose every weight matrix is followed by a layer normalization.

    ``x -> [Linear (no bias) -> LayerNorm (no gain, no bias) -> ReLU] x depth -> head``.
    Multiplying a hidden weight matrix by any c > 0 leaves the output unchanged (the
    normalization divides the scale out): the weights are *scale-invariant*, so their
    gradient is orthogonal to them and shrinks as 1/||W||. With ``norm_head=True`` the head
    is normalized too (``logits = temperature * LayerNorm(W h)``), so every parameter is
    scale-invariant and weight decay cannot act as a regularizer of the function at all: it
    can only change the dynamics. The normalizations use a tiny epsilon (1e-8), so the
    invariance holds even at the small norms that strong decay produces.
    """

    eps = 1e-8

    def __init__(self, in_dim: int, width: int = 128, depth: int = 2, out_dim: int = 10,
                 norm_head: bool = True, temperature: float = 4.0):
        super().__init__()
        for name, value in (("in_dim", in_dim), ("width", width), ("out_dim", out_dim),
                            ("depth", depth)):
            if int(value) < 1:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        dims = [in_dim] + [width] * depth
        self.hidden = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(width, out_dim, bias=not norm_head)
        self.norm_head = norm_head
        self.temperature = float(temperature)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        h = x.flatten(1)
        for layer in self.hidden:
            h = F.relu(F.layer_norm(layer(h), (layer.out_features,), eps=self.eps))
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.head(self.features(x))
        if self.norm_head:
            out = self.temperature * F.layer_norm(out, (out.shape[-1],), eps=self.eps)
        return out

    def scale_invariant(self) -> dict[str, torch.Tensor]:
        """The scale-invariant weight matrices, by name."""
        named = {f"hidden.{i}": layer.weight for i, layer in enumerate(self.hidden)}
        if self.norm_head:
            named["head"] = self.head.weight
        return named


def rms(w: torch.Tensor) -> torch.Tensor:
    """Root-mean-square of the entries, ||w|| / sqrt(numel): a size that does not grow with
    the layer (AdamW's equilibrium is the same per element for every layer)."""
    return w.norm() / math.sqrt(w.numel())


def angular_update(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """The angle (radians) between two versions of a weight tensor.

    For a scale-invariant weight only its direction matters, so this angle *is* the size of
    the step. Computed as ``2 asin(|u - v| / 2)`` for the unit vectors u, v: exact, and well
    conditioned for the tiny angles of one step, where ``acos`` of a cosine near 1 is not.
    """
    u = before / before.norm()
    v = after / after.norm()
    return 2 * torch.asin(((u - v).norm() / 2).clamp(max=1.0))


def layer_rotation(initial: torch.Tensor, current: torch.Tensor) -> torch.Tensor:
    """Carbonnelle & De Vleeschouwer's *layer rotation*: the cosine distance
    ``1 - cos(W_0, W_t)`` between a layer's weights and its initial weights.

    0 while the direction has not moved, 1 once it is orthogonal to where it started, 2 if
    reversed. A net measure, from initialization: steps that turn back and forth add to the
    sum of per-step angles (:func:`angular_update`) but not to it. Computed as
    ``|u - v|^2 / 2`` for the unit vectors u, v (the same number, exact for tiny rotations).
    """
    u = initial.flatten() / initial.norm()
    v = current.flatten() / current.norm()
    return ((u - v).norm() ** 2) / 2


def norm_step(sq_norm: float, lr: float, weight_decay: float, sq_update: float) -> float:
    """||w_{t+1}||^2 from ||w_t||^2: decay shrinks, an orthogonal update grows.

    The update of a scale-invariant weight is orthogonal to it (its gradient is), so by
    Pythagoras the two effects add: ``(1 - eta lambda)^2 ||w||^2 + eta^2 ||u||^2``. The norm
    stops moving where shrinkage ``~ 2 eta lambda ||w||^2`` equals growth ``eta^2 ||u||^2``.
    """
    return (1 - lr * weight_decay) ** 2 * sq_norm + lr ** 2 * sq_update


def adamw_equilibrium(lr: float, weight_decay: float, numel: int, beta1: float = BETA1) -> dict:
    """AdamW's rotational equilibrium for a scale-invariant weight of ``numel`` entries.

    Adam's update has entries of RMS about one when the gradient is mostly noise, so
    ||u||^2 ~ numel *whatever the gradient's scale*: the balance of :func:`norm_step` gives
    ||w||^2 = eta numel / (2 lambda), a per-element RMS of sqrt(eta / (2 lambda)). Momentum
    averages each gradient over about 1 / (1 - beta1) steps; averaging independent noise
    shrinks one step by sqrt((1 - beta1) / (1 + beta1)) but not the sum of many steps, so the
    norm is unchanged and the angle per step is ``eta ||u|| / ||w|| =
    sqrt(2 eta lambda (1 - beta1) / (1 + beta1))``. The effective learning rate, the angle
    per unit of normalized update, eta / RMS(w) = sqrt(2 eta lambda): set by eta * lambda.
    """
    norm = math.sqrt(lr * numel / (2 * weight_decay))
    return dict(norm=norm, rms=norm / math.sqrt(numel),
                angle=math.sqrt(2 * lr * weight_decay * (1 - beta1) / (1 + beta1)),
                effective_lr=lr / (norm / math.sqrt(numel)), tau=1 / (lr * weight_decay))


def sgd_equilibrium(lr: float, weight_decay: float, numel: int, unit_grad_sq: float,
                    momentum: float = 0.0) -> dict:
    """SGD's rotational equilibrium (heavy-ball momentum ``mu``; 0 is plain SGD).

    The gradient of a scale-invariant weight is g = g~ / ||w||, with g~ the gradient it would
    have at unit norm (``unit_grad_sq`` = E||g~||^2). Momentum multiplies both the step and
    the decay by 1 / (1 - mu) in the long run, so :func:`norm_step`'s balance reads
    ||w||^4 = eta ||g~||^2 / (2 lambda (1 - mu)): the norm depends on the gradient, unlike
    AdamW's. The angle per step, eta ||g|| / ||w|| shrunk by the averaging of momentum, is
    sqrt(2 eta lambda / (1 + mu)): the norm adjusts itself so that ||g~|| drops out. The
    effective learning rate is eta / ||w||^2, the step on the unit sphere per unit of g~.
    """
    norm = (lr * unit_grad_sq / (2 * weight_decay * (1 - momentum))) ** 0.25
    return dict(norm=norm, rms=norm / math.sqrt(numel),
                angle=math.sqrt(2 * lr * weight_decay / (1 + momentum)),
                effective_lr=lr / norm ** 2, tau=1 / (lr * weight_decay))


def check_equilibrium_args(optimizer: str, lr: float, weight_decay: float) -> None:
    """Clear errors for settings with no equilibrium."""
    if optimizer not in EQUILIBRIUM_OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(EQUILIBRIUM_OPTIMIZERS)}")
    check_hyper(lr, weight_decay)
    if weight_decay <= 0:
        raise ValueError("an equilibrium needs weight decay > 0 (without it the norm grows forever)")
    if lr * weight_decay >= 1:
        raise ValueError(f"eta * lambda = {lr * weight_decay:.3g} must be < 1: a larger decay "
                         "factor flips the sign of the weights every step")


def equilibrium(optimizer: str, lr: float, weight_decay: float, numel: int,
                unit_grad_sq: float | None = None, momentum: float = MOMENTUM,
                beta1: float = BETA1) -> dict:
    """The rotational equilibrium of one scale-invariant weight tensor of ``numel`` entries
    under ``"adamw"``, ``"sgd"`` or ``"momentum"`` (van Laarhoven 2017; Kosson et al. 2024):
    a dict with ``norm``, ``rms``, ``angle`` (per step), ``effective_lr`` and ``tau`` (see
    :func:`adamw_equilibrium` and :func:`sgd_equilibrium`; SGD needs ``unit_grad_sq``)."""
    check_equilibrium_args(optimizer, lr, weight_decay)
    if int(numel) < 1:
        raise ValueError(f"numel must be a positive integer, got {numel}")
    if optimizer == "adamw":
        if not 0.0 <= beta1 < 1.0:
            raise ValueError(f"beta1 must lie in [0, 1), got {beta1}")
        return adamw_equilibrium(lr, weight_decay, numel, beta1)
    mu = momentum if optimizer == "momentum" else 0.0
    if not 0.0 <= mu < 1.0:
        raise ValueError(f"momentum must lie in [0, 1), got {mu}")
    if unit_grad_sq is None or not unit_grad_sq > 0:
        raise ValueError("the SGD equilibrium needs unit_grad_sq = E||g~||^2 > 0, "
                         f"the squared gradient norm at unit weight norm; got {unit_grad_sq}")
    return sgd_equilibrium(lr, weight_decay, numel, unit_grad_sq, mu)


def adamw_norm_trajectory(rms0: float, lr: float, weight_decay: float, steps) -> np.ndarray:
    """The predicted per-element RMS of a scale-invariant weight under AdamW at ``steps``.

    :func:`norm_step` with ||u||^2 = numel is linear in ||w||^2, so the squared RMS relaxes
    geometrically from rms0^2 to its fixed point eta / (lambda (2 - eta lambda)) ~
    eta / (2 lambda), by the factor (1 - eta lambda)^2 per step: most of the gap is gone
    after tau = 1 / (eta lambda) steps (all but e^-2 of it).
    """
    check_equilibrium_args("adamw", lr, weight_decay)
    t = np.asarray(steps, dtype=float)
    q = (1.0 - lr * weight_decay) ** 2
    fixed = lr / (weight_decay * (2.0 - lr * weight_decay))
    return np.sqrt(fixed + (rms0 ** 2 - fixed) * q ** t)


def effective_lr(optimizer: str, lr: float, w_rms, numel: int):
    """eta / ||w||^2 (SGD, momentum) or eta / RMS(w) (AdamW): the step on the unit sphere."""
    if optimizer not in EQUILIBRIUM_OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(EQUILIBRIUM_OPTIMIZERS)}")
    w_rms = np.asarray(w_rms, dtype=float)
    if optimizer == "adamw":
        return lr / w_rms
    return lr / (w_rms ** 2 * numel)


class RotationMeter:
    """Per-step norm, angular update, layer rotation (from the initial weights) and
    unit-gradient norm of some weight tensors, recorded into preallocated device tensors (no
    host sync per step).

    Pass ``meter.before_step`` and ``meter.after_step`` to :func:`dynamics.train.train`:
    before the optimizer step it keeps the weight's direction and records ``||g|| ||w||``
    (the gradient norm the weight would have at unit norm, for a scale-invariant weight);
    after it, the new norm and the angle between the old and new weight. Read the arrays
    with :meth:`arrays`.

    The same formulas as :func:`angular_update` and :func:`layer_rotation`, for all the
    weights at once: their directions are kept in one flat vector (the weights one after
    another), each norm taken by one ``torch._foreach_norm`` over the pieces. So a step costs
    a fixed number of device operations, whatever the number of weights, not about twenty
    per weight (on a GPU each is a kernel launch, and for a small model those are the step's
    time: issue 41); on the CPU, for float32 weights (the book's), every number is the one
    the two functions give.
    """

    def __init__(self, weights: dict[str, torch.Tensor], steps: int):
        if not weights:
            raise ValueError("RotationMeter needs at least one weight tensor")
        if steps < 1:
            raise ValueError(f"steps must be a positive integer, got {steps}")
        self.names = list(weights)
        self.weights = list(weights.values())
        device = self.weights[0].device
        n = len(self.weights)
        self.numel = [w.numel() for w in self.weights]
        # records in the weights' dtype (at least float32), so that a norm written to a
        # record and divided by is the norm computed
        dtype = torch.promote_types(self.weights[0].dtype, torch.float32)
        self.norm, self.angle, self.unit_grad, self.rotation = (
            torch.zeros(steps + 1, n, device=device, dtype=dtype) for _ in range(4))
        # which weight each element of the flat vector belongs to (to divide by its norm)
        self.owner = torch.repeat_interleave(torch.arange(n, device=device),
                                             torch.tensor(self.numel, device=device))
        with torch.no_grad():
            self.initial = self._directions(self._norms(self.norm[0]))  # u0 = W0 / ||W0||, flat
        self.previous = self.initial.clone()  # the direction before the step

    def _flat(self) -> torch.Tensor:
        return torch.cat([w.detach().reshape(-1) for w in self.weights])

    def _directions(self, norms: torch.Tensor) -> torch.Tensor:
        """Each weight divided by its norm (``norms``: [n]), one after another."""
        return self._flat() / norms[self.owner]

    def _norms(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """[n]: each weight's norm, also written into ``out`` (a record's row): one launch
        when the weights' dtype is the records' (float32, the book's), a copy more else."""
        norms = torch._foreach_norm(self.weights)
        if out is not None and out.dtype == norms[0].dtype:
            return torch.stack(norms, out=out)
        norms = torch.stack(norms)
        if out is not None:
            out.copy_(norms)
        return norms

    def _piece_norms(self, flat: torch.Tensor) -> torch.Tensor:
        """[n]: the norm of each weight's piece of a flat vector."""
        return torch.stack(torch._foreach_norm(list(torch.split(flat, self.numel))))

    @torch.no_grad()
    def before_step(self, model, step: int) -> None:
        norms = self._norms()
        self.previous = self._directions(norms)
        grads = [w.grad if w.grad is not None else w.new_zeros(()) for w in self.weights]
        torch.mul(torch.stack(torch._foreach_norm(grads)), norms, out=self.unit_grad[step])

    @torch.no_grad()
    def after_step(self, model, step: int) -> None:
        now = self._directions(self._norms(self.norm[step]))
        # angular_update: 2 asin(|u - v| / 2); layer_rotation: |u0 - v|^2 / 2
        chord = self._piece_norms(self.previous - now)
        torch.mul(torch.asin((chord / 2).clamp(max=1.0)), 2, out=self.angle[step])
        torch.div(self._piece_norms(self.initial - now) ** 2, 2, out=self.rotation[step])

    def arrays(self, upto: int | None = None) -> dict:
        """numpy copies: ``norm``, ``angle``, ``rotation``, ``unit_grad`` of shape
        [steps + 1, n_weights]."""
        end = None if upto is None else upto + 1
        return dict(norm=self.norm[:end].cpu().numpy(), angle=self.angle[:end].cpu().numpy(),
                    rotation=self.rotation[:end].cpu().numpy(),
                    unit_grad=self.unit_grad[:end].cpu().numpy())


class StackedRotationMeter:
    """:class:`RotationMeter` for K models trained together by
    :func:`dynamics.sweep.train_many` (its ``before_step`` and ``on_step`` hooks): the same
    four records, one more axis, ``[steps + 1, K, n_weights]``, and a step costs the same
    fixed number of device operations whatever K (a norm per weight, over every model at
    once). The formulas are :class:`RotationMeter`'s; a test checks the records against one
    meter per model.

    ``names``: the weights' names in the models' parameters (``{name: [K, ...]}``, as the
    hooks pass them); ``start(params)`` records the initial norms and directions. Unlike
    :class:`RotationMeter` (whose ``train`` hooks may sit beside others that edit the
    weights), it takes the weights before a step to be those the last ``after_step`` measured,
    as they are in ``train_many`` between its two hooks: each step's norms and directions are
    computed once."""

    def __init__(self, names: list[str], numel: list[int], k: int, steps: int, device,
                 dtype=torch.float32):
        if not names or len(names) != len(numel):
            raise ValueError("StackedRotationMeter needs one size per weight name")
        if k < 1 or steps < 1:
            raise ValueError(f"k and steps must be positive integers, got {k} and {steps}")
        self.names, self.numel, self.k = list(names), [int(n) for n in numel], int(k)
        self.norm, self.angle, self.unit_grad, self.rotation = (
            torch.zeros(steps + 1, k, len(names), device=device, dtype=dtype) for _ in range(4))
        self.owner = torch.repeat_interleave(torch.arange(len(names), device=device),
                                             torch.tensor(self.numel, device=device))
        self.initial = self.previous = None

    def _rows(self, tensors: dict) -> list[torch.Tensor]:
        return [tensors[n].reshape(self.k, -1) for n in self.names]  # [K, numel] views

    def _norms(self, rows: list, out: torch.Tensor | None = None) -> torch.Tensor:
        """[K, n]: each model's norm of each weight (written into ``out`` too)."""
        return torch.stack([torch.linalg.vector_norm(r, dim=1) for r in rows], 1, out=out)

    def _directions(self, rows: list, norms: torch.Tensor) -> torch.Tensor:
        """[K, M]: each model's weights divided by their norms, one after another."""
        return torch.cat(rows, 1) / norms[:, self.owner]

    def _piece_norms(self, flat: torch.Tensor) -> torch.Tensor:
        return self._norms(list(torch.split(flat, self.numel, dim=1)))

    @torch.no_grad()
    def start(self, params: dict) -> None:
        rows = self._rows(params)
        self.initial = self.previous = self._directions(rows, self._norms(rows, self.norm[0]))

    @torch.no_grad()
    def before_step(self, step: int, params: dict, grads: dict) -> None:
        # the weights are those the last after_step (or start) measured: nothing edits them
        # between train_many's hooks, so their norms are norm[step - 1] and their directions
        # ``previous``, not computed twice
        torch.mul(self._norms(self._rows(grads)), self.norm[step - 1], out=self.unit_grad[step])

    @torch.no_grad()
    def after_step(self, step: int, params: dict) -> None:
        rows = self._rows(params)
        now = self._directions(rows, self._norms(rows, self.norm[step]))
        chord = self._piece_norms(self.previous - now)
        torch.mul(torch.asin((chord / 2).clamp(max=1.0)), 2, out=self.angle[step])
        torch.div(self._piece_norms(self.initial - now) ** 2, 2, out=self.rotation[step])
        self.previous = now

    def arrays(self, k: int, upto: int | None = None) -> dict:
        """Model ``k``'s records, as :meth:`RotationMeter.arrays` gives one model's."""
        end = None if upto is None else upto + 1
        return {key: getattr(self, key)[:end, k].cpu().numpy()
                for key in ("norm", "angle", "rotation", "unit_grad")}


def relaxation_steps(w_rms: np.ndarray, rms_eq: float) -> int | None:
    """Steps until the squared RMS has closed all but e^-2 of its initial gap to the
    equilibrium (two time constants of ||w||^2, i.e. tau = 1/(eta lambda) in theory); None
    when the run starts within 30% of equilibrium (nothing to relax) or never gets there."""
    if abs(w_rms[0] / rms_eq - 1) < 0.3:
        return None
    gap = (w_rms ** 2 - rms_eq ** 2) / (w_rms[0] ** 2 - rms_eq ** 2)
    hit = np.flatnonzero(gap <= math.exp(-2))
    return int(hit[0]) if len(hit) else None


# ============================================================================ 3. the clock


def clock_time(steps, lr: float, weight_decay: float) -> np.ndarray:
    """Training time in units of tau = 1 / (eta lambda): eta * lambda * t.

    At the rotational equilibrium a scale-invariant weight turns by an angle set by
    eta * lambda alone (section 2), and AdamW has an exact symmetry (W0, eta, lambda) ->
    (c W0, c eta, lambda / c) that leaves every step's function unchanged. So runs that
    share the product should follow one curve against this clock, once the memory of the
    initial norm (eta / ||W0||) has faded, after a few tau.
    """
    return np.asarray(steps, dtype=float) * lr * weight_decay


def matched_runs(product: float, lr: float, spread: float, contrast: float) -> list[dict]:
    """(lr, weight_decay) of the clock experiment: three runs that share ``eta * lambda =
    product``, with learning rates ``lr / spread``, ``lr``, ``lr * spread`` (so lambda moves
    the other way), then one odd run at ``lr`` with ``contrast`` times the product."""
    runs = [dict(lr=eta, weight_decay=product / eta, matched=True)
            for eta in (lr / spread, lr, lr * spread)]
    runs.append(dict(lr=lr, weight_decay=contrast * product / lr, matched=False))
    for r in runs:
        check_hyper(r["lr"], r["weight_decay"])
    return runs


def final_loss(history: History, key: str = "train_loss", tail: float = 0.25) -> float:
    """The mean of ``key`` over the last ``tail`` fraction of evaluations: the level a noisy
    run has settled at (one evaluation alone jitters with the last few mini-batches)."""
    values = history[key]
    if history.diverged or len(values) == 0:
        return float("nan")
    n = max(1, int(round(len(values) * tail)))
    return float(np.mean(values[-n:]))


# ============================================================================ 4. the weights
# singular_values, stable_rank, effective_rank, tail_fit, tail_exponent and spectrum_stats:
# see .spectra (imported above).


# ============================================================================ 5. reading a grid


def best_cell(acc, decays, lrs) -> dict:
    """The best accuracy of a grid ``acc[decay, lr]`` and where it lies (NaN cells, runs that
    diverged, are ignored)."""
    acc = np.asarray(acc, dtype=float)
    if np.all(np.isnan(acc)):
        return dict(acc=float("nan"), lr=None, decay=None)
    i, j = np.unravel_index(np.nanargmax(acc), acc.shape)
    return dict(acc=float(acc[i, j]), lr=float(lrs[j]), decay=float(decays[i]))


def best_decay_per_lr(acc, decays, min_gain: float = 0.01) -> list[float | None]:
    """For each learning rate (a column of ``acc[decay, lr]``), the decay that gives the best
    accuracy, read between grid values: the vertex of the parabola in log lambda through the
    best cell and its two neighbours (the argmax alone jumps between near-ties). None where
    no decay beats the smallest one by ``min_gain``: there decay has had no effect yet, and
    the column has no best decay to speak of."""
    acc = np.asarray(acc, dtype=float)
    logd = np.log10(np.asarray(decays, dtype=float))
    if acc.ndim != 2 or acc.shape[0] != len(logd) or len(logd) < 2:
        raise ValueError(f"acc must be [decay, lr] with one row per decay (at least 2), got shape "
                         f"{acc.shape} for {len(logd)} decays")
    out = []
    for col in acc.T:
        if np.isnan(col).all() or np.nanmax(col) - col[0] < min_gain:
            out.append(None)
            continue
        i = int(np.nanargmax(col))
        shift = 0.0
        if 0 < i < len(col) - 1 and np.isfinite(col[i - 1:i + 2]).all():
            curve = col[i - 1] - 2 * col[i] + col[i + 1]
            if curve < 0:
                shift = float(np.clip(0.5 * (col[i - 1] - col[i + 1]) / curve, -0.5, 0.5))
        step = logd[i + 1] - logd[i] if i + 1 < len(logd) else logd[i] - logd[i - 1]
        out.append(float(10 ** (logd[i] + shift * step)))
    return out


def ridge_slope(lrs, best_decays) -> float:
    """d log(lambda*) / d log(eta): how the best decay moves with the learning rate, by least
    squares over the learning rates that have one (see :func:`best_decay_per_lr`).

    It tells which parameterization the grid prefers. Slope 0: the best lambda is the same at
    every eta, so PyTorch's lambda is the variable to hold fixed when eta changes. Slope -1:
    the best lambda moves as 1/eta, so the product eta * lambda (Loshchilov & Hutter's decay
    per step) is. NaN when fewer than two learning rates have a best decay.
    """
    pts = [(math.log10(lr), math.log10(d)) for lr, d in zip(lrs, best_decays) if d is not None]
    if len(pts) < 2:
        return float("nan")
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


# ============================================================================ 6. the experiments


def logspace(low: float, high: float, n: int, name: str) -> list[float]:
    """``n`` values from ``low`` to ``high``, evenly spaced on a log axis."""
    if not 0 < low <= high:
        raise ValueError(f"{name} range must satisfy 0 < low <= high, got [{low}, {high}]")
    if low == high:
        return [float(low)]
    return [float(v) for v in np.geomspace(low, high, n)]


# The grids of section 1 and 3: which optimizer trains which model.
GRIDS = {"adam_l2": ("adam_l2", "mlp"), "adamw": ("adamw", "mlp"),
         "adamw_invariant": ("adamw", "norm_mlp")}


@dataclass
class DecouplingConfig(Config):
    """Sections 1 and 3: learning-rate x decay grids on MNIST-1D, averaged over seeds.

    Learning rates and decays share one spacing (a factor sqrt(10) at the defaults), so a
    line of constant eta * lambda runs through the cells' centres: the diagonal of the grid.
    """

    lr_low: float = param(1e-4, "smallest learning rate of the grid", low=1e-6, high=1.0, log=True,
                          smoke=1e-3)
    lr_high: float = param(10 ** -1.5, "largest learning rate of the grid", low=1e-6, high=1.0, log=True)
    n_lr: int = param(6, "learning rates in the grid (log-spaced)", low=2, high=16, smoke=4)
    l2_low: float = param(1e-5, "smallest L2 coefficient for Adam + L2", low=1e-8, high=10.0, log=True,
                          smoke=1e-4)
    l2_high: float = param(1e-1, "largest L2 coefficient for Adam + L2", low=1e-8, high=10.0, log=True)
    wd_low: float = param(1e-3, "smallest decoupled weight decay for AdamW", low=1e-8, high=100.0,
                          log=True, smoke=1e-2)
    wd_high: float = param(10.0, "largest decoupled weight decay for AdamW", low=1e-8, high=100.0, log=True)
    n_wd: int = param(9, "decays in each grid (log-spaced)", low=3, high=16, smoke=7)
    n_seeds: int = param(3, "seeds averaged in every cell", low=1, high=10, smoke=1)
    steps: int = param(1000, "training steps", low=10, high=100_000, smoke=300, gpu=5000)
    width: int = param(128, "hidden width of the MLP", low=4, high=4096, smoke=64, gpu=256)
    n_train: int = param(1000, "MNIST-1D training examples", low=100, high=100_000, gpu=4000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)
    n_evals: int = param(8, "evaluations (the frames of the slider over training time)", low=2, high=100,
                         smoke=3)

    def lrs(self) -> list[float]:
        return logspace(self.lr_low, self.lr_high, self.n_lr, "lr")

    def decays(self, kind: str) -> list[float]:
        """The decay axis of the grid ``kind`` (a key of :data:`GRIDS`)."""
        if kind == "adam_l2":
            return logspace(self.l2_low, self.l2_high, self.n_wd, "l2")
        if kind in ("adamw", "adamw_invariant"):
            return logspace(self.wd_low, self.wd_high, self.n_wd, "wd")
        raise ValueError(f"unknown grid {kind!r}; choose one of {list(GRIDS)}")


@dataclass
class EquilibriumConfig(Config):
    """Section 2: one run of a fully scale-invariant :class:`NormMLP`, measured every step."""

    optimizer: str = param("adamw", "optimizer", choices=EQUILIBRIUM_OPTIMIZERS)
    lr: float = param(3e-3, "learning rate eta (SGD wants ~0.1, AdamW ~3e-3)", low=1e-5, high=10.0, log=True)
    weight_decay: float = param(2.0, "weight decay lambda (SGD wants ~1e-2, AdamW ~1)", low=1e-5,
                                high=100.0, log=True)
    steps: int = param(1500, "training steps", low=10, high=200_000, smoke=600, gpu=10_000)
    width: int = param(128, "hidden width", low=4, high=4096, smoke=64, gpu=512)
    depth: int = param(2, "hidden layers", low=1, high=8)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size (the gradient noise that drives the equilibrium)",
                            low=1, high=100_000)


@dataclass
class ClockConfig(Config):
    """Section 3: AdamW runs of a :class:`NormMLP` at one eta * lambda, and one at another."""

    product: float = param(4e-3, "eta * lambda shared by the matched runs", low=1e-6, high=0.5, log=True,
                           smoke=8e-3)
    lr: float = param(2e-3, "middle learning rate; the others are lr / spread and lr * spread",
                      low=1e-6, high=1.0, log=True, smoke=4e-3)
    spread: float = param(2.0, "factor between consecutive matched learning rates", low=1.0, high=10.0)
    contrast: float = param(4.0, "factor by which the odd run's eta * lambda differs", low=1.0, high=100.0)
    steps: int = param(2000, "training steps (8 tau at the default product)", low=10, high=200_000,
                       smoke=1000, gpu=10_000)
    width: int = param(128, "hidden width", low=4, high=4096, smoke=64, gpu=512)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)

    def runs(self) -> list[dict]:
        """(lr, weight_decay, matched) of each run: see :func:`matched_runs`."""
        return matched_runs(self.product, self.lr, self.spread, self.contrast)


@dataclass
class SpectrumConfig(Config):
    """Section 4: an MLP trained with and without weight decay; norms and spectra."""

    optimizer: str = param("adamw", "optimizer", choices=("adamw", "sgd", "momentum"))
    lr: float = param(2e-3, "learning rate", low=1e-6, high=10.0, log=True)
    weight_decay: float = param(2.0, "weight decay of the decayed run (the other has none)",
                                low=1e-5, high=100.0, log=True)
    steps: int = param(3000, "training steps", low=10, high=200_000, smoke=600, gpu=20_000)
    width: int = param(256, "hidden width", low=4, high=4096, smoke=128, gpu=512)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)


def mnist1d_data(n_train: int, n_test: int = 1000) -> Dataset:
    """MNIST-1D at the requested size. The data seed is fixed at 0: the experiments' seeds
    vary the models' initialization and batch order, not the task."""
    return mnist1d(n_train, n_test, seed=0)


__all__ = ["zero_gradient_path", "EQUILIBRIUM_OPTIMIZERS", "BETA1", "MOMENTUM", "GRIDS",
           "adam_step",
           "NormMLP", "rms", "angular_update", "layer_rotation", "norm_step", "adamw_equilibrium", "sgd_equilibrium",
           "check_equilibrium_args", "equilibrium", "adamw_norm_trajectory", "effective_lr",
           "RotationMeter", "relaxation_steps",
           "clock_time", "matched_runs", "final_loss",
           "singular_values", "stable_rank", "effective_rank", "tail_exponent", "tail_fit",
           "spectrum_stats",
           "best_cell", "best_decay_per_lr", "ridge_slope",
           "logspace", "DecouplingConfig", "EquilibriumConfig", "ClockConfig", "SpectrumConfig",
           "mnist1d_data"]
