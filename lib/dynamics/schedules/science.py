"""Schedules and weight averaging, the science: the schedules, the power-law regression problem,
its exact expected risk under one-pass SGD, the averaging steps and the theory's decay exponent.

**The problem.** Noisy linear regression in the eigenbasis of the data: ``x ~ N(0, H)`` with
``H = diag(lambda_i)``, ``lambda_i = i^(-capacity)`` (the capacity exponent, > 1), and a target
``w*`` whose per-mode signal ``lambda_i w*_i^2 = i^(-source)`` (the source exponent, > 1), labels
``y = <x, w*> + sigma xi``. One-pass SGD from ``w_0 = 0`` takes one fresh example per step:
``w_{t+1} = w_t - eta_t (<x_t, w_t> - y_t) x_t``; its excess risk is
``sum_i lambda_i (w_t - w*)_i^2``.

**Its expected risk, exactly.** For a Gaussian design the diagonal of the error's second moment
``c_i(t) = E[(w_t - w*)_i^2]`` closes on itself (Gaussian fourth moment:
``E[x x^T C x x^T] = 2 H C H + tr(HC) H``)::

    c_i(t+1) = c_i(t) (1 - 2 eta lambda_i + 2 eta^2 lambda_i^2) + eta^2 lambda_i (sum_j lambda_j c_j(t) + sigma^2)

and, since ``E[e_t | e_s] = prod_k (1 - eta_k H) e_s``, so do the cross moments an average of
iterates needs (:func:`expected_risk`). No simulation enters this number: the chapter's batched
simulation is checked against it.

**The theory's exponent.** With a step ``eta_t = eta_0 (1 + t/t_0)^(-gamma)`` the effective
time is ``N_t = sum eta ~ t^(1-gamma)``; the modes learned by then are ``k ~ N^(1/capacity)``.
The averaged iterate's bias is what is not yet learned, ``~ k^(1 - source)``, its variance
``~ sigma^2 k / t`` (averaging over ``t`` steps); equating the two gives
``1 - gamma = capacity / source``: :func:`theory_exponent`, ``max(0, 1 - capacity/source)``
(Meterez et al., "Anytime Pretraining: Horizon-Free Learning-Rate Schedules with Weight
Averaging", state that the anytime schedule decays polynomially at a rate set by the source and
capacity exponents). A hard target (``source <= capacity``) wants a constant rate with averaging.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..config import Config, param

__all__ = ["SCHEDULES", "schedule", "schedule_table", "theory_exponent", "spectrum",
           "expected_risk", "tail_windows", "uniform_average_step", "ema_step", "PowerLawConfig",
           "schedule_free_init", "schedule_free_step", "CooldownConfig", "decay_product",
           "decay_clock", "expected_memory"]

SCHEDULES = ("constant", "inv_sqrt", "poly", "cosine", "wsd")


def schedule(kind: str, steps: int, lr: float, *, gamma: float = 0.5, t0: float = 1.0,
             horizon: int | None = None, cooldown: float = 0.2, shape: str = "linear",
             warmup: int = 0) -> np.ndarray:
    """The rate ``eta_t`` for ``t = 0 .. steps-1`` (``eta_t`` takes ``w_t`` to ``w_{t+1}``):

    - ``constant``: ``lr``;
    - ``inv_sqrt``: ``lr / sqrt(1 + t/t0)``; ``poly``: ``lr (1 + t/t0)^(-gamma)``;
    - ``cosine``: ``lr (1 + cos(pi t / horizon)) / 2`` up to ``horizon``, 0 after it;
    - ``wsd`` (warmup-stable-decay): ``lr`` until the last ``cooldown`` fraction of
      ``horizon``, then down to 0 at ``horizon``, linearly (``shape="linear"``) or as
      ``1 - sqrt`` of the cooldown's elapsed fraction (``shape="sqrt"``); 0 after it.

    ``warmup`` steps (linear from ``lr/warmup``) come first for every kind."""
    if kind not in SCHEDULES:
        raise ValueError(f"schedule kind must be one of {list(SCHEDULES)}, got {kind!r}")
    if not (isinstance(steps, (int, np.integer)) and steps >= 1):
        raise ValueError(f"schedule steps must be a positive integer, got {steps!r}")
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"schedule lr must be positive and finite, got {lr!r}")
    if not t0 > 0:
        raise ValueError(f"schedule t0 must be positive, got {t0!r}")
    if not 0 <= gamma <= 2:
        raise ValueError(f"schedule gamma must lie in [0, 2], got {gamma!r}")
    if kind in ("cosine", "wsd") and not (horizon and horizon >= 1):
        raise ValueError(f"schedule {kind!r} needs a horizon >= 1 step, got {horizon!r}")
    if kind == "wsd" and not 0 < cooldown <= 1:
        raise ValueError(f"schedule cooldown must be a fraction in (0, 1], got {cooldown!r}")
    if shape not in ("linear", "sqrt"):
        raise ValueError(f"schedule shape must be 'linear' or 'sqrt', got {shape!r}")
    if not 0 <= warmup < steps:
        raise ValueError(f"schedule warmup must lie in [0, steps), got {warmup!r}")
    t = np.arange(steps, dtype=float)
    if kind == "constant":
        eta = np.full(steps, lr)
    elif kind in ("inv_sqrt", "poly"):
        eta = lr * (1 + t / t0) ** (-(0.5 if kind == "inv_sqrt" else gamma))
    elif kind == "cosine":
        eta = np.where(t < horizon, lr * 0.5 * (1 + np.cos(np.pi * np.minimum(t, horizon) / horizon)), 0.0)
    else:
        start = horizon * (1 - cooldown)
        frac = np.clip((t - start) / (horizon - start), 0, 1)
        down = 1 - frac if shape == "linear" else 1 - np.sqrt(frac)
        eta = np.where(t < horizon, lr * down, 0.0)
    if warmup:
        eta[:warmup] = lr * (np.arange(warmup) + 1) / warmup
    return eta


def schedule_table(kinds: dict, steps: int) -> torch.Tensor:
    """``{name: schedule kwargs}`` as one ``[len(kinds), steps]`` float64 tensor (row order as
    given), what a batched run indexes per step."""
    return torch.tensor(np.stack([schedule(kw.pop("kind"), steps, **kw)
                                  for kw in (dict(v) for v in kinds.values())]))


def theory_exponent(capacity: float, source: float) -> float:
    """The anytime decay exponent ``gamma* = max(0, 1 - capacity/source)`` of the step
    ``eta_0 (1 + t/t_0)^(-gamma)`` with averaging (the module's balance of bias and variance)."""
    if not (capacity > 1 and source > 1):
        raise ValueError(f"the capacity and source exponents must both exceed 1 (summable "
                         f"spectrum and signal), got capacity={capacity}, source={source}")
    return max(0.0, 1.0 - capacity / source)


def spectrum(d: int, capacity: float, source: float) -> tuple[np.ndarray, np.ndarray]:
    """The eigenvalues ``lambda_i = i^(-capacity)`` and target ``w*_i = sqrt(i^(-source) /
    lambda_i)`` (so that ``lambda_i w*_i^2 = i^(-source)``), ``i = 1 .. d``."""
    if not (isinstance(d, (int, np.integer)) and d >= 1):
        raise ValueError(f"spectrum d must be a positive integer, got {d!r}")
    theory_exponent(capacity, source)  # validates the exponents
    i = np.arange(1, d + 1, dtype=float)
    lam = i ** (-capacity)
    return lam, np.sqrt(i ** (-source) / lam)


def tail_windows(horizons) -> list[tuple[int, int]]:
    """Each horizon ``H``'s averaging window: the iterates ``w_t``, ``H/2 < t <= H`` (the
    second half of the run), as ``(start, end)`` with ``start = H // 2``."""
    hs = [int(h) for h in horizons]
    if not hs or any(h < 2 for h in hs) or sorted(set(hs)) != hs:
        raise ValueError(f"horizons must be increasing integers >= 2, got {list(horizons)!r}")
    return [(h // 2, h) for h in hs]


def expected_risk(lam, w_star, sigma: float, etas, horizons) -> dict:
    """The exact expected excess risk of one-pass SGD from ``w_0 = 0`` on the Gaussian design
    ``N(0, diag(lam))`` with label noise ``sigma`` (the module's recursion), for each schedule
    (rows of ``etas``, ``[S, T]``) at each of ``horizons`` (increasing, ``<= T``): ``last``
    (``[S, len(horizons)]``, the iterate ``w_H``) and ``tail`` (the average of ``w_t`` over
    ``H/2 < t <= H``, :func:`tail_windows`)."""
    lam = np.asarray(lam, float)
    w_star = np.asarray(w_star, float)
    etas = np.atleast_2d(np.asarray(etas, float))
    if lam.shape != w_star.shape or lam.ndim != 1 or np.any(lam <= 0):
        raise ValueError("expected_risk: lam must be a positive vector and w_star of its shape")
    if not sigma >= 0:
        raise ValueError(f"expected_risk: sigma must be >= 0, got {sigma!r}")
    wins = tail_windows(horizons)
    if wins[-1][1] > etas.shape[1]:
        raise ValueError(f"expected_risk: the last horizon {wins[-1][1]} exceeds the schedule's "
                         f"{etas.shape[1]} steps")
    S, K = etas.shape[0], len(wins)
    c = np.broadcast_to(w_star ** 2, (S, lam.size)).copy()   # E[e_0^2]: e_0 = -w*
    last, tail = np.zeros((S, K)), np.zeros((S, K))
    diag = np.zeros((S, K, lam.size))    # per window: sum of c_i(t)
    cross = np.zeros((S, K, lam.size))   # per window: sum over s < t of p_i(s, t) c_i(s)
    g = np.zeros((S, K, lam.size))
    for t in range(wins[-1][1] + 1):     # c holds E[e_t^2] here
        for k, (a, b) in enumerate(wins):
            if a < t <= b:
                diag[:, k] += c
                cross[:, k] += g[:, k]
            if t == b:
                last[:, k] = c @ lam
        if t == wins[-1][1]:
            break
        eta = etas[:, t:t + 1]
        for k, (a, b) in enumerate(wins):
            if a < t < b:
                g[:, k] = (1 - eta * lam) * (g[:, k] + c)
        c = (c * (1 - 2 * eta * lam + 2 * eta ** 2 * lam ** 2)
             + eta ** 2 * lam * ((c @ lam)[:, None] + sigma ** 2))
    for k, (a, b) in enumerate(wins):
        n = b - a
        tail[:, k] = ((diag[:, k] + 2 * cross[:, k]) @ lam) / n ** 2
    return dict(last=last, tail=tail)


def _check_decay(etas, weight_decay, who: str) -> np.ndarray:
    etas = np.asarray(etas, float)
    if etas.ndim != 1 or etas.size < 1 or np.any(etas < 0) or not np.all(np.isfinite(etas)):
        raise ValueError(f"{who}: etas must be a non-empty vector of rates >= 0")
    if not (weight_decay >= 0 and math.isfinite(weight_decay)):
        raise ValueError(f"{who}: weight_decay must be >= 0 and finite, got {weight_decay!r}")
    if np.any(etas * weight_decay >= 1):
        raise ValueError(f"{who}: eta * weight_decay must stay below 1 (a larger factor flips "
                         f"the weights' sign), got up to {float(np.max(etas)) * weight_decay:.3g}")
    return etas


def decay_product(etas, weight_decay: float) -> np.ndarray:
    """What decoupled weight decay alone leaves of a weight after ``t`` steps, ``prod_{s<t}
    (1 - eta_s lambda)`` for ``t = 0 .. T`` (``[T + 1]``, 1 at ``t = 0``): AdamW multiplies
    the weights by ``1 - eta_t lambda`` every step, so with zero gradients the weights *are*
    this product times the start. ``etas``: the rates ``eta_0 .. eta_{T-1}``."""
    etas = _check_decay(etas, weight_decay, "decay_product")
    return np.concatenate([[1.0], np.cumprod(1 - etas * weight_decay)])


def decay_clock(etas, weight_decay: float) -> np.ndarray:
    """Weight decay's clock, ``lambda sum_{s<t} eta_s`` for ``t = 0 .. T``: the elapsed time in
    time constants ``1/(eta lambda)`` of a constant rate. ``prod (1 - eta_s lambda) ~
    exp(-clock)`` while ``eta lambda`` is small; a cooldown, lowering ``eta``, slows it."""
    etas = _check_decay(etas, weight_decay, "decay_clock")
    return np.concatenate([[0.0], np.cumsum(etas) * weight_decay])


def expected_memory(lam, delta, etas, weight_decay: float) -> np.ndarray:
    """The memory of a change ``delta`` to the start, exactly in expectation: two one-pass SGD
    runs with decoupled decay, ``w_{t+1} = (1 - eta_t lambda) w_t - eta_t (<x_t, w_t> - y_t)
    x_t``, from ``w_0`` and ``w_0 + delta`` on the same examples differ by ``d_t`` with
    ``d_{t+1} = ((1 - eta_t lambda) I - eta_t x_t x_t^T) d_t`` (the labels cancel), and
    since ``x_t`` is independent of ``d_t``, ``E[d_{t+1}] = ((1 - eta_t lambda) I - eta_t H)
    E[d_t]``. Returns ``<E[d_t], delta> / |delta|^2 = sum_i delta_i^2 prod_{s<t} (1 - eta_s
    (lambda + lam_i)) / |delta|^2``, ``t = 0 .. T``: each mode forgets on the clock
    ``(lambda + lam_i) sum eta``; where ``lam_i`` is far below ``lambda`` (the data barely
    see the mode) it is :func:`decay_product`. ``lam``: the design's eigenvalues (>= 0; all
    0: no data, zero gradients)."""
    etas = _check_decay(etas, weight_decay, "expected_memory")
    lam = np.asarray(lam, float)
    delta = np.asarray(delta, float)
    if lam.ndim != 1 or lam.shape != delta.shape or np.any(lam < 0):
        raise ValueError("expected_memory: lam must be a vector >= 0 and delta of its shape")
    if not np.any(delta):
        raise ValueError("expected_memory: delta must not be zero (nothing to remember)")
    f = 1 - etas[:, None] * (weight_decay + lam[None, :])
    prod = np.concatenate([np.ones((1, lam.size)), np.cumprod(f, axis=0)])
    return prod @ delta ** 2 / (delta @ delta)


def uniform_average_step(avg: torch.Tensor, w: torch.Tensor, n_averaged: int | torch.Tensor):
    """The running mean after one more iterate: ``avg + (w - avg) / (n + 1)`` where ``avg`` is
    the mean of the ``n`` iterates seen so far (``torch.optim.swa_utils.AveragedModel``'s
    default, SWA's equal-weight average)."""
    return avg + (w - avg) / (n_averaged + 1)


def ema_step(avg: torch.Tensor, w: torch.Tensor, decay: float):
    """An exponential moving average's step ``decay * avg + (1 - decay) * w``
    (``swa_utils.get_ema_multi_avg_fn(decay)``): its window is about ``1/(1 - decay)`` steps."""
    if not 0 <= decay < 1:
        raise ValueError(f"ema decay must lie in [0, 1), got {decay!r}")
    return decay * avg + (1 - decay) * w


@dataclass
class PowerLawConfig(Config):
    """Section 1: one-pass SGD on noisy power-law regression, many schedules and replicas at once."""

    d: int = param(256, "dimension (number of eigen-modes)", low=4, high=100_000, smoke=128,
                   gpu=2048)
    capacity: float = param(2.0, "capacity exponent a: eigenvalues i^(-a)", low=1.05, high=4.0)
    source: float = param(4.0, "source exponent b: per-mode signal lambda_i w*_i^2 = i^(-b)",
                          low=1.05, high=8.0)
    sigma: float = param(0.3, "label noise standard deviation", low=0.0, high=10.0)
    lr: float = param(0.5, "base rate eta_0, in units of 1/tr(H)", low=0.01, high=1.0, log=True)
    t0: float = param(16.0, "the decaying schedules' time offset t_0 (steps)", low=1.0,
                      high=1e4, log=True)
    horizon0: int = param(256, "the first horizon (steps); each next one is twice it", low=8,
                          high=1_000_000, smoke=128)
    n_horizons: int = param(5, "horizons: horizon0, 2 horizon0, ...", low=2, high=12, smoke=5)
    replicas: int = param(64, "independent runs per schedule (the data's randomness)", low=1,
                          high=4096, smoke=32, gpu=256)
    clock_tau: float = param(3.0, "section 5: weight decay lambda set so that the constant "
                             "rate's clock lambda*sum(eta) reads this at the last horizon",
                             low=0.1, high=20.0)
    clock_cooldown: float = param(0.5, "section 5: the WSD run's cooldown, a fraction of the "
                                  "last horizon", low=0.05, high=1.0)

    def horizons(self) -> list[int]:
        return [self.horizon0 * 2 ** k for k in range(self.n_horizons)]


def schedule_free_init(w: torch.Tensor) -> dict:
    """The state of :func:`schedule_free_step` at the start: ``x = z = y = w`` (the average,
    the base iterate and the point the gradient is taken at), no second moment, no steps."""
    return dict(x=w.clone(), z=w.clone(), y=w.clone(), v=torch.zeros_like(w), k=0,
                weight_sum=0.0, lr_max=0.0)


def schedule_free_step(state: dict, grad: torch.Tensor, *, lr: float, betas=(0.9, 0.999),
                       eps: float = 1e-8, weight_decay: float = 0.0, warmup_steps: int = 0,
                       weight_lr_power: float = 2.0) -> dict:
    """One step of schedule-free AdamW (Defazio et al., "The Road Less Scheduled") on the
    gradient ``grad`` taken at ``state["y"]``, written in the paper's three sequences::

        g    = grad / (sqrt(v_hat) + eps) + weight_decay * y     (Adam's scaling, no momentum)
        z   <- z - lr_t g                                         (the base iterate: plain steps)
        x   <- (1 - c) x + c z,  c = w_t / sum_{s<=t} w_s         (the average)
        y    = (1 - beta1) z + beta1 x                            (where the next gradient is)

    with ``lr_t`` warmed up linearly over ``warmup_steps`` and the average's weights
    ``w_t = max_{s<=t} lr_s ^ weight_lr_power`` (equal once warmed up: a uniform average).
    Returns the new state; ``x`` is what to evaluate (``optimizer.eval()`` in the package),
    ``y`` what to take the next gradient at (``optimizer.train()``)."""
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"schedule_free_step lr must be positive and finite, got {lr!r}")
    beta1, beta2 = betas
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise ValueError(f"schedule_free_step betas must lie in [0, 1), got {betas!r}")
    if not weight_decay >= 0:
        raise ValueError(f"schedule_free_step weight_decay must be >= 0, got {weight_decay!r}")
    k = state["k"]
    lr_t = lr * ((k + 1) / warmup_steps if k < warmup_steps else 1.0)
    lr_max = max(lr_t, state["lr_max"])
    weight = lr_max ** weight_lr_power
    weight_sum = state["weight_sum"] + weight
    c = weight / weight_sum
    v = beta2 * state["v"] + (1 - beta2) * grad * grad
    g = grad / ((v / (1 - beta2 ** (k + 1))).sqrt() + eps) + weight_decay * state["y"]
    z = state["z"] - lr_t * g
    x = (1 - c) * state["x"] + c * z
    return dict(x=x, z=z, y=(1 - beta1) * z + beta1 * x, v=v, k=k + 1, weight_sum=weight_sum,
                lr_max=lr_max)


@dataclass
class CooldownConfig(Config):
    """Sections 2-4: an MLP on MNIST-1D, many schedules and seeds trained as one stacked model.
    One size at every profile: at 1600 steps on these 4000 examples the network memorizes
    them and the decayed runs' training losses part by factors that say more about
    memorization than about schedules (the cooldown no longer ties the cosine, the averages
    trail the cooldown by a quarter), and at 1600 steps on 16 000 examples the cooldown's lead
    over the constant run is within the seeds' spread; a larger profile waits for a setting
    where the claims hold."""

    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000)
    width: int = param(64, "hidden width of the two-layer MLP", low=4, high=4096)
    batch: int = param(64, "mini-batch size", low=1, high=4096)
    lr: float = param(2e-2, "AdamW's peak (constant) rate", low=1e-5, high=1.0, log=True)
    weight_decay: float = param(0.0, "AdamW's decoupled weight decay", low=0.0, high=1.0)
    steps: int = param(600, "the longest budget (steps)", low=16, high=1_000_000)
    n_budgets: int = param(3, "budgets: steps/2^(n-1), ..., steps/2, steps", low=1, high=8)
    cooldown: float = param(0.2, "the cooldown's fraction of each budget", low=0.01, high=1.0)
    warmup: int = param(0, "linear warmup steps of every schedule", low=0, high=100_000)
    ema_window: int = param(50, "the EMA's window 1/(1 - decay), steps", low=2, high=100_000)
    n_evals: int = param(12, "evaluations along the longest run (besides each budget's)",
                         low=2, high=1000)
    sf_warmup: float = param(0.05, "section 4: warmup, a fraction of the budget, of both "
                             "schedule-free AdamW and the cosine", low=0.0, high=0.5)
    lr_factors: tuple = param((0.25, 0.5, 1.0, 2.0, 4.0), "section 4: the peak rates tried, "
                              "times lr (every method's tuned rate inside the grid)")

    def budgets(self) -> list[int]:
        return [self.steps // 2 ** k for k in reversed(range(self.n_budgets))]
