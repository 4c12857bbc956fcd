"""Section 2's river-valley toy: why a cooldown's loss drop comes at the end.

Wen et al. ("Understanding Warmup-Stable-Decay Learning Rates: A River Valley Loss Landscape
Perspective") conjecture that a language model's loss is a river valley: steep walls (the
*hill* directions) around a river at the bottom that falls slowly (the *river* direction).
At a high constant rate the iterate bounces across the valley while it travels fast along the
river; the cooldown stops the bouncing and shows the progress made along the river.

This module is the smallest such landscape, a quadratic with one steep direction of
curvature ``h`` and one flat direction of curvature ``c << h``:
``L(w) = sum_i h_i w_i^2 / 2``, minimum at 0. The stochastic gradient is
``h_i w_i + sigma sqrt(h_i) xi_i`` with ``xi`` standard normal: the noise's variance in each
direction is proportional to its curvature (for least squares, the gradient noise's
covariance has the Hessian's shape), so the flat river is also a quiet one.

Its expected loss is known exactly for any schedule ``eta_t``. Per direction the mean and the
variance of ``w_i`` obey

    m_{t+1} = (1 - eta_t h) m_t,        v_{t+1} = (1 - eta_t h)^2 v_t + eta_t^2 sigma^2 h,

and ``E[L_i] = h (m^2 + v) / 2`` (:func:`expected_valley`). At a constant rate with
``0 < eta h < 2`` the variance settles where ``v = (1 - eta h)^2 v + eta^2 sigma^2 h``, that is
``v * eta h (2 - eta h) = eta^2 sigma^2 h``:

    v* = eta sigma^2 / (2 - eta h),     E[L_i] -> h v* / 2 = eta sigma^2 h / (2 (2 - eta h))

(:func:`stationary_loss`): the noise floor of a direction grows with the rate and with its
curvature. The hill's floor is the loss a cooldown removes; the river's mean, which only the
sum of the rates moves (``prod (1 - eta_t c) ~ exp(-c sum eta)``), is the progress a high
rate makes. :func:`simulate_valley` runs the noisy recursion itself (the tests check it
against :func:`expected_valley`, and that against the closed form).

The page's glue texts of the toy (:func:`valley_numbers`) and of the sentences of sections 2
and 3 that read no claims row (:func:`cooldown_notes`, :func:`test_loss_notes`,
:func:`averaging_gap`; the rows' numbers are :mod:`.claims`') live here too, with
:func:`largest_rise`, which section 2 reads.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..results import Record
from .science import schedule

__all__ = ["stationary_loss", "expected_valley", "simulate_valley", "run_valley", "largest_rise",
           "valley_numbers", "cooldown_notes", "test_loss_notes", "averaging_gap",
           "ValleySummary", "ValleySettings", "Valley", "Rise"]


def _check(etas, curvatures, start, sigma: float, who: str):
    etas = np.asarray(etas, float)
    h = np.asarray(curvatures, float)
    w0 = np.asarray(start, float)
    if etas.ndim != 1 or etas.size == 0 or not np.all(np.isfinite(etas)) or np.any(etas < 0):
        raise ValueError(f"{who}: etas must be a non-empty 1-D array of rates >= 0")
    if h.ndim != 1 or h.size == 0 or not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError(f"{who}: curvatures must be a non-empty 1-D array of positive values, "
                         f"got {curvatures!r}")
    if w0.shape != h.shape or not np.all(np.isfinite(w0)):
        raise ValueError(f"{who}: start must be finite with one entry per curvature "
                         f"({h.size}), got {start!r}")
    if not (sigma >= 0 and math.isfinite(sigma)):
        raise ValueError(f"{who}: sigma must be >= 0 and finite, got {sigma!r}")
    if float(etas.max()) * float(h.max()) >= 2:
        raise ValueError(f"{who}: eta * curvature must stay below 2 (above it the iterate "
                         f"diverges), got up to {float(etas.max()) * float(h.max()):.3g}")
    return etas, h, w0


def stationary_loss(lr: float, curvature: float, sigma: float) -> float:
    """The expected loss ``eta sigma^2 h / (2 (2 - eta h))`` that one direction of curvature
    ``h`` settles at under noisy SGD at the constant rate ``lr`` (the module's derivation)."""
    if not (curvature > 0 and math.isfinite(curvature)):
        raise ValueError(f"stationary_loss: curvature must be positive, got {curvature!r}")
    if not (lr > 0 and lr * curvature < 2):
        raise ValueError(f"stationary_loss: lr must satisfy 0 < lr * curvature < 2, got "
                         f"lr={lr!r}, curvature={curvature!r}")
    if not (sigma >= 0 and math.isfinite(sigma)):
        raise ValueError(f"stationary_loss: sigma must be >= 0 and finite, got {sigma!r}")
    return lr * sigma ** 2 * curvature / (2 * (2 - lr * curvature))


def expected_valley(etas, curvatures, start, sigma: float) -> np.ndarray:
    """The exact expected loss of each direction, ``[T + 1, D]`` (row ``t`` after ``t``
    steps at the rates ``etas``), from the mean and variance recursions of the module."""
    etas, h, w0 = _check(etas, curvatures, start, sigma, "expected_valley")
    m, v = w0.copy(), np.zeros_like(w0)
    out = [h * m ** 2 / 2]
    for eta in etas:
        f = 1 - eta * h
        m, v = f * m, f ** 2 * v + eta ** 2 * sigma ** 2 * h
        out.append(h * (m ** 2 + v) / 2)
    return np.array(out)


def simulate_valley(etas, curvatures, start, sigma: float, replicas: int = 1000,
                    seed: int = 0, noise=None) -> dict:
    """Noisy SGD on the valley, ``replicas`` independent runs at once. Returns ``loss``
    (``[T + 1, D]``, the replicas' mean loss per direction) and ``path`` (``[T + 1, D]``,
    replica 0's iterates). ``noise`` (``[T, replicas, D]`` standard normals) replaces the
    seeded draws, so that several schedules can share one stream."""
    etas, h, w0 = _check(etas, curvatures, start, sigma, "simulate_valley")
    if not (isinstance(replicas, (int, np.integer)) and replicas >= 1):
        raise ValueError(f"simulate_valley: replicas must be a positive integer, got {replicas!r}")
    if noise is None:
        noise = np.random.default_rng(seed).standard_normal((etas.size, replicas, h.size))
    noise = np.asarray(noise, float)
    if noise.shape != (etas.size, replicas, h.size):
        raise ValueError(f"simulate_valley: noise must have shape {(etas.size, replicas, h.size)}, "
                         f"got {noise.shape}")
    w = np.tile(w0, (replicas, 1))
    loss, path = [(h * w ** 2 / 2).mean(0)], [w[0].copy()]
    scale = sigma * np.sqrt(h)
    for eta, xi in zip(etas, noise):
        w = w - eta * (h * w + scale * xi)
        loss.append((h * w ** 2 / 2).mean(0))
        path.append(w[0].copy())
    return dict(loss=np.array(loss), path=np.array(path))


@dataclass
class ValleySummary(Record):
    """The exact expected hill and river terms the page quotes: the WSD run's at its
    cooldown's start and at the end, the hill's share of its drop over the cooldown, and the
    constant (``const_``) and low constant (``low_``) runs' at the end."""
    hill_start: float
    river_start: float
    hill_end: float
    river_end: float
    hill_share: float
    const_hill_end: float
    const_river_end: float
    low_hill_end: float
    low_river_end: float


@dataclass
class ValleySettings(Record):
    """:func:`run_valley`'s settings."""
    steps: int
    lr: float
    low: float
    cooldown: float
    curvatures: list
    start: list
    sigma: float
    replicas: int
    seed: int


@dataclass
class Valley(Record):
    """:func:`run_valley`'s result: per schedule name, ``[T + 1, 2]`` arrays."""
    names: list
    etas: dict[str, list]
    expected: dict[str, np.ndarray]
    sim: dict[str, np.ndarray]
    path: dict[str, np.ndarray]
    start: int
    summary: ValleySummary
    stationary: dict[str, float]
    config: ValleySettings


def run_valley(steps: int = 600, lr: float = 1.5, low: float = 0.15, cooldown: float = 0.2,
               curvatures=(1.0, 0.002), start=(0.3, 10.0), sigma: float = 0.1,
               replicas: int = 2000, seed: int = 0) -> Valley:
    """The toy's three schedules to ``steps``: the constant rate ``lr``, a WSD at ``lr``
    whose linear cooldown takes the last ``cooldown`` of the steps, and the constant rate
    ``low`` (a rate too low to bounce, and too low to travel). Direction 0 is the hill,
    direction 1 the river. All three see the same noise, so the WSD run *is* the constant
    one until its cooldown starts. Returns ``names``, ``etas``, ``expected`` and ``sim``
    (``{name: [T + 1, 2]}`` per-direction losses, exact and simulated), ``path`` (``{name:
    [T + 1, 2]}``, one replica), ``start`` (the last step at which the WSD run is still the
    constant one), ``stationary`` (the hill's closed-form floor at ``lr`` and at ``low``),
    ``summary`` (the exact expected hill and river terms the page quotes, at ``start`` and at
    the end, and the hill's share of the WSD's drop over its cooldown) and the settings
    (a :class:`Valley`)."""
    if len(curvatures) != 2 or not curvatures[0] > curvatures[1] > 0:
        raise ValueError(f"run_valley: curvatures must be (hill, river) with hill > river > 0, "
                         f"got {curvatures!r}")
    if not 0 < low < lr:
        raise ValueError(f"run_valley: low must lie in (0, lr), got low={low!r}, lr={lr!r}")
    etas = {"constant": schedule("constant", steps, lr),
            "WSD": schedule("wsd", steps, lr, horizon=steps, cooldown=cooldown),
            "low constant": schedule("constant", steps, low)}
    noise = np.random.default_rng(seed).standard_normal((steps, replicas, 2))
    expected, sim, path = {}, {}, {}
    for n, e in etas.items():
        expected[n] = expected_valley(e, curvatures, start, sigma)
        s = simulate_valley(e, curvatures, start, sigma, replicas, noise=noise)
        sim[n], path[n] = s["loss"], s["path"]
    a = int(np.argmax(etas["WSD"] < lr))
    w = expected["WSD"]
    summary = dict(hill_start=w[a, 0], river_start=w[a, 1], hill_end=w[-1, 0],
                   river_end=w[-1, 1],
                   hill_share=(w[a, 0] - w[-1, 0]) / (w[a].sum() - w[-1].sum()))
    for n, key in (("constant", "const"), ("low constant", "low")):
        summary.update({f"{key}_hill_end": expected[n][-1, 0],
                        f"{key}_river_end": expected[n][-1, 1]})
    return Valley(names=list(etas), etas={n: e.tolist() for n, e in etas.items()},
                  expected=expected, sim=sim, path=path, start=a,
                  summary=ValleySummary(**{k: float(v) for k, v in summary.items()}),
                  stationary={n: stationary_loss(r, curvatures[0], sigma)
                              for n, r in (("constant", lr), ("low constant", low))},
                  config=ValleySettings(steps=steps, lr=lr, low=low, cooldown=cooldown,
                                        curvatures=list(curvatures), start=list(start),
                                        sigma=sigma, replicas=replicas, seed=seed))


@dataclass
class Rise(Record):
    """:func:`largest_rise`'s result."""
    step_from: int
    step_to: int
    loss_from: float
    loss_to: float
    n_rises: int
    n_pairs: int
    cooldowns: dict[int, tuple]


def largest_rise(cooldown, seed: int | None = None) -> Rise:
    """Where section 2's constant run (a :func:`~.experiments.run_cooldown` result, seed
    ``seed``, default its first) rises most between consecutive evaluations: ``step_from``,
    ``step_to``, ``loss_from``, ``loss_to``, ``n_rises`` (how many consecutive pairs rise of
    ``n_pairs``) and ``cooldowns``: ``{budget: (loss at its start, loss at step_to)}`` of each
    linear cooldown whose window (its start to its budget) holds the rise."""
    seed = cooldown.seeds[0] if seed is None else seed
    if seed not in cooldown.train_loss:
        raise ValueError(f"largest_rise: seed {seed!r} is not in the run {cooldown.seeds}")
    steps = list(cooldown.steps)
    loss = cooldown.train_loss[seed]
    y = np.asarray(loss["constant"], float)
    d = np.diff(y)
    k = int(np.argmax(d))
    a, b = steps[k], steps[k + 1]
    cools = {bud: (float(loss[f"linear@{bud}"][steps.index(s)]),
                   float(loss[f"linear@{bud}"][k + 1]))
             for bud, s in zip(cooldown.budgets, cooldown.starts) if s <= a and b <= bud}
    return Rise(step_from=a, step_to=b, loss_from=float(y[k]), loss_to=float(y[k + 1]),
                n_rises=int((d > 0).sum()), n_pairs=int(d.size), cooldowns=cools)


def valley_numbers(r: Valley) -> dict:
    """The glue texts of a :func:`run_valley` result: its settings, the exact expected hill and
    river terms of :func:`run_valley`'s ``summary`` (``vl_<key>``), the hill's share of the
    WSD's drop and the closed-form floor at the constant rate."""
    c, s = r.config, r.summary
    out = {f"vl_{k}": f"{v:.2g}" for k, v in s.to_dict().items()}
    out.update(vl_share=f"{100 * s.hill_share:.0f}%", vl_h=f"{c.curvatures[0]:g}",
               vl_c=f"{c.curvatures[1]:g}", vl_sigma=f"{c.sigma:g}", vl_lr=f"{c.lr:g}",
               vl_low=f"{c.low:g}", vl_T=c.steps, vl_frac=f"{100 * c.cooldown:g}%",
               vl_eta_h=f"{c.lr * c.curvatures[0]:g}",
               vl_floor=f"{r.stationary['constant']:.2g}")
    return out


def cooldown_notes(cooldown, train_eval: int) -> dict:
    """Section 2's glue texts that no claims row gives, from a
    :func:`~.experiments.run_cooldown` result: the weight decay, how many training examples
    the training loss is measured on (the first ``train_eval``, the trainer's setting, or all
    of them), the constant run's ratio to the cosine at each budget
    (the page's seed), the range over the seeds of the 1−√ cooldown's loss over the linear
    one's at the longest budget, and :func:`largest_rise`."""
    if not (isinstance(train_eval, (int, np.integer)) and train_eval >= 1):
        raise ValueError(f"cooldown_notes: train_eval must be a positive integer, got "
                         f"{train_eval!r}")
    c = cooldown.config
    steps, T = list(cooldown.steps), cooldown.budgets[-1]
    L0 = cooldown.train_loss[cooldown.seeds[0]]
    at = lambda L, n, b: L[n][steps.index(b)]
    shape = [at(L, f"sqrt@{T}", T) / at(L, f"linear@{T}", T)
             for L in cooldown.train_loss.values()]
    up = largest_rise(cooldown)
    cools = "; ".join(f"the linear cooldown to {b} steps, which branched off at a loss of "
                      f"{a:.2f}, is at {z:.2f} there" for b, (a, z) in up.cooldowns.items())
    return dict(cd_wd=f"{c.weight_decay:g}", cd_n_eval=min(train_eval, c.n_train),
                cd_const_each=", ".join(f"{at(L0, 'constant', b) / at(L0, f'cosine@{b}', b):.2f}"
                                        for b in cooldown.budgets),
                cd_sqrt_lo=f"{min(shape):.3f}", cd_sqrt_hi=f"{max(shape):.3f}",
                cd_rise_a=up.step_from, cd_rise_b=up.step_to,
                cd_rise_lo=f"{up.loss_from:.2f}", cd_rise_hi=f"{up.loss_to:.2f}",
                cd_n_rises=up.n_rises, cd_n_pairs=up.n_pairs,
                cd_rise_cool=cools or "no cooldown had branched off before it")


def averaging_gap(anytime) -> dict:
    """Section 3's glue texts from section 1's run (:func:`~.experiments.run_anytime`): the
    exact expected risk of the constant rate's averaged iterate over the tuned cosine's last
    iterate, at the first horizon and at the last (``av_pl_first``, ``av_pl_last``)."""
    names, ex = anytime.names, anytime.exact
    tail = np.asarray(ex.tail[names.index("constant")], float)
    env = np.array([ex.last[names.index(f"cos@{h}")][k]
                    for k, h in enumerate(anytime.horizons)], float)
    return dict(av_pl_first=f"{tail[0] / env[0]:.2f}", av_pl_last=f"{tail[-1] / env[-1]:.2f}")


def _budgets_text(budgets, where) -> str:
    """Where a comparison holds, in words: at every budget, at none, or at which."""
    hits = [b for b, ok in zip(budgets, where) if ok]
    if len(hits) == len(budgets):
        return "at every budget"
    if not hits:
        return "at no budget"
    return "at " + ", ".join(map(str, hits)) + " steps only"


def test_loss_notes(cooldown, seed: int | None = None) -> dict:
    """Section 2's test-loss glue texts (the table's seed ``seed``, default the first): per
    budget, the test loss of the constant run's uniform average and EMA against the linear
    cooldown's and the cosine's (``cd_test_each``); at which budgets both averages are below
    the linear cooldown (``cd_test_avg_lin``) and below the cosine (``cd_test_avg_cos``); and
    the constant run's lowest test loss, its step and its training loss there, against both
    at the last step (``cd_test_low``, ``cd_test_low_step``, ``cd_test_end``,
    ``cd_train_at_low``, ``cd_train_end``)."""
    seed = cooldown.seeds[0] if seed is None else seed
    if seed not in cooldown.test_loss:
        raise ValueError(f"test_loss_notes: seed {seed!r} is not in the run {cooldown.seeds}")
    steps, budgets = list(cooldown.steps), list(cooldown.budgets)
    L, A = cooldown.test_loss[seed], cooldown.averages[seed]
    at = lambda n, b: float(L[n][steps.index(b)])
    av = lambda n, b: float(A[n].test_loss[A[n].steps.index(b)])
    rows = [(b, av(f"tail@{b}", b), av("ema", b), at(f"linear@{b}", b), at(f"cosine@{b}", b))
            for b in budgets]
    each = "; ".join(f"at {b} steps {u:.2f} and {e:.2f} against {li:.2f} and {c:.2f}"
                     for b, u, e, li, c in rows)
    y = np.asarray(L["constant"], float)
    k = int(np.argmin(y))
    train = cooldown.train_loss[seed]["constant"]
    return dict(cd_test_each=each,
                cd_test_avg_lin=_budgets_text(budgets, [max(u, e) < li for _, u, e, li, _ in rows]),
                cd_test_avg_cos=_budgets_text(budgets, [max(u, e) < c for _, u, e, _, c in rows]),
                cd_test_low=f"{y[k]:.2f}", cd_test_low_step=steps[k], cd_test_end=f"{y[-1]:.2f}",
                cd_train_at_low=f"{float(train[k]):.2f}", cd_train_end=f"{float(train[-1]):.2f}")
