"""The chapter's experiments: runners that sweep the science of :mod:`.science`, the numbers
the prose and the claims rest on, and ``precompute_plan`` for the figures computed in advance.

Runners return plain dicts (lists and numbers), ready for a figure or for ``data/``; a runner
whose result a claim or the prose reads from ``data/`` returns a :class:`~dynamics.results.Record`
declared beside it (:class:`Trainability`, :class:`DepthTime`), so that a reader names the
fields it reads and a renamed field fails when the file is loaded; so do the page-time runners
the claims read (their records in :mod:`.records`).
Lists of runs go through ``runtime.grid`` and step counts a runner needs through
``runtime.steps``, so that ``DYNAMICS_DRY_RUN`` proves every profile end to end in seconds.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from scipy.optimize import brentq

from .. import plots, results, runtime, units
from .. import progress as P
from ..runtime import get_profile, get_seed
from ..sweep import grid, train_many
from ..train import At, Hooks, LogSpaced, Recipe, log_steps, train
from .isometry import IsometryConfig, run_isometry
from .records import (ChaosRun, CMap, CriticalLine, Fluctuations, GuessingRun, QMap, RankGrowth, Saxe,
                      SaxeControl, Signal, XiMeasured, XiTheory)
from .science import (ACTIVATIONS, INIT_SCHEMES, ChaosConfig, DepthTimeConfig,
                      FluctuationConfig, GuessingConfig, SaxeConfig, SignalConfig,
                      MORE_SEEDS, TrainabilityConfig, c_map, c_star, chi_1, critical_mlp, critical_sigma_w2,
                      deep_linear,
                      depth_scale, effective_start, favourite_class, guessing_bias, init_mlp, layer_statistics,
                      measure_depth_scale, measure_map_iterates, measured_critical_sigma_w2,
                      mnist1d_data, pattern_progress, preactivation_fluctuations, q_map, q_star,
                      saxe_task, saxe_theory, tanh_mlp, trainable_band, trainable_depth)
from .width import WidthConfig, coordinate_check, run_width


_num = plots.number
COMMAND = "python -m dynamics_ops.precompute initialization --profile {profile}"
CHANCE = 0.1  # MNIST-1D has 10 balanced classes


# =============================================================================================
# 1. Signal propagation
# =============================================================================================


def run_signal(cfg: SignalConfig, inits=INIT_SCHEMES, activations=ACTIVATIONS) -> Signal:
    """A :class:`Signal`: per activation ``{init: layer_statistics}`` (cfg.depth, cfg.width, cfg.seed;
    ``cfg.init``/``cfg.activation`` are ignored: all given are run). LSUV is calibrated on
    ``cfg.n_inputs`` MNIST-1D training inputs; every statistic is measured on as many held-out
    (test) inputs, so LSUV's unit variance is not read on the batch it was rescaled on. LSUV's
    entry also holds ``start_out_var``: ``out_var`` of its orthonormal start before the
    rescaling (the same matrices), on the same held-out batch."""
    d = mnist1d_data(max(cfg.n_inputs, 100), n_test=max(cfg.n_inputs, 500))
    x = d.x_train[:cfg.n_inputs]
    held, held_y = d.x_test[:cfg.n_inputs], d.y_test[:cfg.n_inputs]
    out = {}
    for act in runtime.grid(activations):
        out[act] = {}
        for init in runtime.grid(inits):
            with runtime.seeded(cfg.seed):
                model = init_mlp(d.input_dim, cfg.width, cfg.depth, act, init, x=x).to(x.device)
            out[act][init] = layer_statistics(model, held, held_y)
            if init == "lsuv":
                with runtime.seeded(cfg.seed):
                    start = init_mlp(d.input_dim, cfg.width, cfg.depth, act, init, x=x,
                                     rescale=False).to(x.device)
                out[act][init].start_out_var = layer_statistics(start, held, held_y).out_var
    return Signal.of(out)


# =============================================================================================
# 2. Order and chaos
# =============================================================================================


def run_chaos(cfg: ChaosConfig, sigma_b2_line=(0.02, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0),
              map_sigma_w2=(1.0, 1.76, 3.0)) -> ChaosRun:
    """Theory and measurement for the four panels of the order-to-chaos figure: the length
    and correlation maps with iterates measured on random networks, the critical line
    chi_1 = 1 (theory, and measured at ``sigma_b2_line``), and the depth scale xi_c. Returns
    a :class:`ChaosRun`."""
    t0 = time.perf_counter()
    sb2 = cfg.sigma_b2
    q_in = np.linspace(0, 3, 61)
    c_in = np.linspace(-0.2, 1, 61)
    q_maps, c_maps = [], []
    for s in map_sigma_w2:
        qs = q_star(s, sb2)
        q_maps.append(QMap(
            sigma_w2=s, q_in=q_in.tolist(), q_out=[q_map(q, s, sb2) for q in q_in], q_star=qs,
            measured=measure_map_iterates(s, sb2, [0.05, 2.8], "q", cfg.map_width, 6, cfg.batch,
                                          cfg.seed)))
        c_maps.append(CMap(
            sigma_w2=s, c_in=c_in.tolist(), c_out=[c_map(c, s, sb2, q=qs) for c in c_in],
            c_star=c_star(s, sb2),
            measured=measure_map_iterates(s, sb2, [0.0, 0.6], "c", cfg.map_width, 6, cfg.batch,
                                          cfg.seed)))
    line_b2 = np.linspace(0.0, max(sigma_b2_line) * 1.05, 40)
    line_theory = CriticalLine(sigma_b2=line_b2.tolist(),
                               sigma_w2=[critical_sigma_w2(b) for b in line_b2])
    measured_line = runtime.grid(sigma_b2_line)
    line_measured = CriticalLine(
        sigma_b2=list(measured_line),
        sigma_w2=[measured_critical_sigma_w2(b, cfg.width, cfg.depth, cfg.batch, cfg.seed)
                  for b in measured_line])
    critical_measured = (line_measured.sigma_w2[measured_line.index(sb2)] if sb2 in measured_line
                         else measured_critical_sigma_w2(sb2, cfg.width, cfg.depth, cfg.batch, cfg.seed))
    fine = np.linspace(0.3, 4.5, 85)
    xi_theory = XiTheory(sigma_w2=fine.tolist(), xi=[depth_scale(s, sb2) for s in fine])
    meas_s = runtime.grid(np.linspace(0.4, 4.5, cfg.n_sigma).tolist())
    xi_m = [measure_depth_scale(s, sb2, cfg.width, cfg.depth, cfg.batch, cfg.seed) for s in meas_s]
    xi_measured = XiMeasured(sigma_w2=meas_s, xi=[x for x, _ in xi_m],
                             layers_used=[n for _, n in xi_m],
                             xi_theory=[depth_scale(s, sb2) for s in meas_s])
    return ChaosRun(sigma_b2=sb2, width=cfg.width, depth=cfg.depth, q_map=q_maps, c_map=c_maps,
                    line_theory=line_theory, line_measured=line_measured,
                    critical_theory=critical_sigma_w2(sb2), critical_measured=critical_measured,
                    xi_theory=xi_theory, xi_measured=xi_measured,
                    wall_time=time.perf_counter() - t0)


def xi_deviation(chaos: ChaosRun) -> tuple[float, int, float]:
    """Median relative deviation of the measured xi_c from the theory, over the sigma_w^2
    where both are finite; returns (median deviation, count, largest measured xi_c)."""
    xm = chaos.xi_measured
    ok = [(a, b) for a, b in zip(xm.xi, xm.xi_theory)
          if a is not None and b is not None and np.isfinite(a) and np.isfinite(b)]
    if not ok:
        return float("nan"), 0, float("nan")
    return (float(np.median([abs(a / b - 1) for a, b in ok])), len(ok),
            float(max(a for a, _ in ok)))


@dataclass
class Trainability(results.Record):
    """:func:`run_trainability`'s result (``data/initialization_trainability.json`` and
    ``..._seeds.json``): the grid's ``depths`` x ``sigma_w2``, the seeds' mean training accuracy
    ``acc`` (depth x sigma_w^2; None where not computed) and each seed's ``acc_per_seed``
    (depth x seed x sigma_w^2), the 6 xi_c line (``six_xi`` at ``line_sigma_w2``), the
    critical sigma_w^2 at ``sigma_b2``, the recipe (``steps``, ``width``, ``lr_depth``,
    ``n_train``), the ``diverged`` cells ([depth, sigma_w^2]), whether the job was
    ``stopped`` and the ``wall_time``."""

    depths: list
    sigma_w2: list
    acc: list
    seeds: list
    acc_per_seed: list
    line_sigma_w2: list
    six_xi: list
    critical: float
    sigma_b2: float
    steps: int
    width: int
    lr_depth: float
    n_train: int
    diverged: list
    stopped: bool
    wall_time: float


def run_trainability(cfg: TrainabilityConfig, data=None, bars: bool | None = None) -> Trainability:
    """Training accuracy of tanh MLPs after ``cfg.steps`` SGD steps for every depth x
    sigma_w^2 of the grid (one ``train_many`` sweep per depth), beside 6 xi_c of the theory.

    A diverged run counts as chance (0.1) and is listed in ``diverged``. Progress goes to
    :func:`dynamics.progress.current`; once its job is stopped, depths not reached are NaN
    rows and ``stopped`` is set."""
    if not cfg.depths or not cfg.sigma_w2 or not cfg.seeds:
        raise ValueError("TrainabilityConfig needs non-empty depths, sigma_w2 and seeds")
    if any(int(d) < 1 for d in cfg.depths) or any(s <= 0 for s in cfg.sigma_w2):
        raise ValueError("depths must be >= 1 and sigma_w2 values > 0")
    data = data or mnist1d_data(cfg.n_train)
    depths = runtime.grid(cfg.depths)  # one sweep each, one after another
    sig, seeds = runtime.grid(cfg.sigma_w2), runtime.grid(cfg.seeds)  # trained together
    steps = runtime.steps(cfg.steps)
    t0 = time.perf_counter()
    acc = np.full((len(depths), len(sig)), np.nan)
    per_seed = np.full((len(depths), len(seeds), len(sig)), np.nan)
    diverged, stopped = [], False
    job = P.current()
    for i, depth in enumerate(depths):
        with job.part(i, len(depths)):
            res = train_many(
                lambda c, depth=int(depth): tanh_mlp(data.input_dim, cfg.width, depth,
                                                     c["sigma_w2"], cfg.sigma_b2, data.n_classes),
                data, grid(sigma_w2=sig, seed=seeds),
                Recipe(cfg.steps, optimizer="momentum", lr=cfg.lr_depth / int(depth),
                       batch_size=cfg.batch_size, eval=[steps]),
                bars=bars,
                # all sigma_w^2 of a depth stacked into one model: at width 96 and batch 32 on a
                # CPU, 1.3x faster than one model at a time (measured at depth 20)
                strategy="batched")
        hs = res.histories
        if any(len(h) == 0 and not h.diverged for h in hs):  # stopped inside this sweep
            stopped = True
            break
        final = np.array([CHANCE if h.diverged else h.last("train_acc") for h in hs])
        diverged += [[int(depth), float(c["sigma_w2"])] for c, h in
                     zip(grid(sigma_w2=list(sig), seed=list(seeds)), hs) if h.diverged]
        per_seed[i] = final.reshape(len(sig), len(seeds)).T
        acc[i] = per_seed[i].mean(0)
        if job.report((i + 1) / len(depths)):
            stopped = i + 1 < len(depths)
            break
    fine = np.linspace(min(sig), max(sig), 80)
    return Trainability(
        depths=[int(d) for d in depths], sigma_w2=[float(s) for s in sig], acc=acc.tolist(),
        seeds=[int(s) for s in seeds], acc_per_seed=per_seed.tolist(),
        line_sigma_w2=fine.tolist(), six_xi=[trainable_depth(s, cfg.sigma_b2) for s in fine],
        critical=critical_sigma_w2(cfg.sigma_b2), sigma_b2=cfg.sigma_b2, steps=steps,
        width=cfg.width, lr_depth=cfg.lr_depth, n_train=len(data.x_train), diverged=diverged,
        stopped=stopped, wall_time=time.perf_counter() - t0)


def best_sigma_w2(acc, sigma_w2) -> list[float | None]:
    """Per depth (row of ``acc``, depth x sigma_w^2) of a trainability grid, the sigma_w^2
    with the highest accuracy (None for a row not computed or where nothing beat chance by
    0.05)."""
    out = []
    for row in acc:
        row = np.asarray([np.nan if v is None else v for v in row], dtype=float)
        if not np.isfinite(row).any() or np.nanmax(row) < CHANCE + 0.05:
            out.append(None)
        else:
            out.append(float(sigma_w2[int(np.nanargmax(row))]))
    return out


def trainability_agreement(heat: Trainability, level: float = 0.5) -> tuple[float, int]:
    """The fraction of grid cells where "trained" (training accuracy at least ``level``)
    coincides with "depth <= 6 xi_c" of mean-field theory; returns (fraction, cells)."""
    acc = np.asarray([[np.nan if v is None else v for v in row] for row in heat.acc], float)
    ok = np.isfinite(acc)
    trained = acc >= level
    limit = np.array([trainable_depth(s, heat.sigma_b2) for s in heat.sigma_w2])
    shallow = np.asarray(heat.depths)[:, None] <= limit[None, :]
    return float(np.mean((trained == shallow)[ok])), int(ok.sum())


def trainability_disagreements(heat: Trainability, level: float = 0.5) -> dict:
    """The cells where "trained" (accuracy at least ``level``) and "depth <= 6 xi_c" disagree:
    ``beyond``, trained although deeper than the line, and ``before``, not trained although
    within it; each a list of (sigma_w^2, depth)."""
    acc = np.asarray([[np.nan if v is None else v for v in row] for row in heat.acc], float)
    out = dict(beyond=[], before=[])
    for i, depth in enumerate(heat.depths):
        for j, s in enumerate(heat.sigma_w2):
            if not np.isfinite(acc[i, j]):
                continue
            trained, shallow = acc[i, j] >= level, depth <= trainable_depth(s, heat.sigma_b2)
            if trained and not shallow:
                out["beyond"].append((float(s), int(depth)))
            elif shallow and not trained:
                out["before"].append((float(s), int(depth)))
    return out


# =============================================================================================
# 3. Orthogonal versus Gaussian weights
# =============================================================================================


def run_fluctuations(cfg: FluctuationConfig) -> Fluctuations:
    """Per layer, n Var[G_l] / E[G_l]^2 across the ensemble for Gaussian and orthogonal
    weights, and the slope of each against depth (a least-squares line): a
    :class:`Fluctuations`."""
    n_nets = len(runtime.grid(range(cfg.n_nets)))  # an ensemble is a list of runs
    layers = np.arange(1, cfg.depth + 1)
    res = dict(layers=layers.tolist(), width=cfg.width, n_nets=n_nets, depth=cfg.depth)
    for init in ("gaussian", "orthogonal"):
        res[init] = preactivation_fluctuations(init, cfg.depth, cfg.width, n_nets,
                                               seed=cfg.seed).tolist()
        res[f"{init}_slope"] = float(np.polyfit(layers, res[init], 1)[0])
    return Fluctuations.of(res)


def run_saxe(cfg: SaxeConfig, on_eval=()) -> Saxe:
    """Train one deep linear network on :func:`saxe_task` by full-batch gradient descent,
    recording the loss and every pattern's progress y_c; add the exact two-layer solution
    (from small weights, depth 2). ``on_eval``: ``train`` hooks (a panel's redraw). Returns
    a :class:`Saxe`."""
    data = saxe_task(cfg.n_patterns, cfg.strength_max, cfg.strength_min, cfg.seed)
    with runtime.seeded(cfg.seed):
        model = deep_linear(cfg.n_patterns, cfg.width, cfg.depth, cfg.init, cfg.init_std).to(data.device)
    y0 = effective_start(model, data) if cfg.depth == 2 and cfg.init == "small" else None
    def progress(m, d) -> dict:  # every pattern's y_c from one forward pass
        return {f"y{c}": y for c, y in enumerate(pattern_progress(m, d))}

    recipe = Recipe(cfg.steps, optimizer="sgd", lr=cfg.lr, loss="mse",
                    eval=At(range(0, cfg.steps + 1, max(1, cfg.steps // 150)), test=False))
    h = train(model, data, recipe, metrics=progress, hooks=Hooks(on_eval=on_eval), seed=cfg.seed)
    out = Saxe(steps=h.steps, loss=h["train_loss"].tolist() if len(h) else [],
               progress=[h[f"y{c}"].tolist() if len(h) else [] for c in range(cfg.n_patterns)],
               strengths=data.info["strengths"], lr=cfg.lr, depth=cfg.depth, init=cfg.init,
               status=h.status, diverged=bool(h.diverged))
    if y0 is not None:
        t = np.asarray(h.steps, dtype=float) * cfg.lr
        out.theory = [saxe_theory(t, s, cfg.n_patterns, y).tolist()
                      for s, y in zip(data.info["strengths"], y0)]
        # the claim's control: the same task, rate and steps from an orthogonal start, which
        # skips the plateaus and so must not follow the small start's exact solution
        with runtime.seeded(cfg.seed):
            ortho = deep_linear(cfg.n_patterns, cfg.width, cfg.depth, "orthogonal").to(data.device)
        hc = train(ortho, data, recipe, metrics=progress, seed=cfg.seed)
        out.control = SaxeControl(init="orthogonal", steps=hc.steps, progress=[
            hc[f"y{c}"].tolist() if len(hc) else [] for c in range(cfg.n_patterns)])
    return out


def half_times(saxe: Saxe) -> tuple[np.ndarray, np.ndarray | None]:
    """The step at which each pattern is half learned (y_c >= 1/2): measured, and exact
    (None without the exact solution); inf where it never happened."""
    steps = np.asarray(saxe.steps)

    def first(ys):
        idx = np.flatnonzero(np.asarray(ys, dtype=float) >= 0.5)
        return float(steps[idx[0]]) if len(idx) else float("inf")

    measured = np.array([first(y) for y in saxe.progress])
    theory = np.array([first(y) for y in saxe.theory]) if saxe.theory is not None else None
    return measured, theory


def run_rank_growth(cfg: SaxeConfig, large: float = 0.3) -> RankGrowth:
    """Exercise 6: :func:`run_saxe`'s network, with the singular values of W1 - W1(0) recorded
    during training; returns each pattern's half-learning step, the number of singular values
    above ``large`` at the first evaluation after it, and the final singular values beside the
    balanced solution's (sqrt(C) s_c)^(-1/2)."""
    data = saxe_task(cfg.n_patterns, cfg.strength_max, cfg.strength_min, cfg.seed)
    with runtime.seeded(cfg.seed):
        model = deep_linear(cfg.n_patterns, cfg.width, cfg.depth, cfg.init, cfg.init_std).to(data.device)
    w0 = model.hidden[0].weight.detach().clone()
    k = min(cfg.n_patterns, *w0.shape)

    def metrics(m, d):  # one forward pass and one SVD per evaluation
        y, sv = pattern_progress(m, d), torch.linalg.svdvals(m.hidden[0].weight - w0)
        return {**{f"y{c}": y[c] for c in range(cfg.n_patterns)}, **{f"sv{j}": sv[j] for j in range(k)}}
    recipe = Recipe(cfg.steps, optimizer="sgd", lr=cfg.lr, loss="mse",
                    eval=At(range(0, cfg.steps + 1, max(1, cfg.steps // 150)), test=False))
    h = train(model, data, recipe, metrics=metrics, seed=cfg.seed, bars=False)
    steps = np.asarray(h.steps)
    sv = np.stack([h[f"sv{j}"] for j in range(k)], 1)
    half, count = [], []
    for c in range(cfg.n_patterns):
        idx = np.flatnonzero(np.asarray(h[f"y{c}"]) >= 0.5)
        half.append(int(steps[idx[0]]) if len(idx) else None)
        count.append(int((sv[idx[0]] > large).sum()) if len(idx) else None)
    s = np.asarray(data.info["strengths"])
    return RankGrowth(half_steps=half, large_after=count, final=sorted(sv[-1].tolist()),
                      balanced=sorted((1 / np.sqrt(math.sqrt(cfg.n_patterns) * s)).tolist()),
                      large=large, steps=cfg.steps)


INIT_PAIR = ("orthogonal", "gaussian")  # the inits of the learning-time figure


@dataclass(kw_only=True)
class DepthTime(results.Record):
    """:func:`run_depth_time`'s result (``data/initialization_depth_time.json``): the
    ``depths``, the learning-rate grid ``lrs``, the ``criterion``, the ``steps``, ``width``
    and ``seeds``; per init of :data:`INIT_PAIR` that was run (None: not run, and not
    written), the learning time per depth (``orthogonal``: median over seeds at the best
    learning rate, None for never), that best rate (``orthogonal_lr``) and each seed's best
    time (``orthogonal_per_seed``, depth x seed); and the ``wall_time``. :meth:`times`,
    :meth:`best_lr` and :meth:`per_seed` read an init's fields by its name."""

    depths: list
    lrs: list
    criterion: float
    steps: int
    width: int
    seeds: list
    orthogonal: list | None = None
    orthogonal_lr: list | None = None
    orthogonal_per_seed: list | None = None
    gaussian: list | None = None
    gaussian_lr: list | None = None
    gaussian_per_seed: list | None = None
    wall_time: float

    def __post_init__(self):
        for init in INIT_PAIR:  # an init run has its three fields, one not run none
            keys = (init, f"{init}_lr", f"{init}_per_seed")
            have = [k for k in keys if getattr(self, k) is not None]
            if have and len(have) < 3:
                lacking = [k for k in keys if k not in have]
                raise ValueError(f"a DepthTime with {init} needs its three fields: no field "
                                 f"{', '.join(lacking)}")
        if all(getattr(self, init) is None for init in INIT_PAIR):
            raise ValueError(f"a DepthTime holds at least one init of {INIT_PAIR}: none found")

    def times(self, init: str) -> list:
        return getattr(self, _init_field(init))

    def best_lr(self, init: str) -> list:
        return getattr(self, _init_field(init, "_lr"))

    def per_seed(self, init: str) -> list:
        return getattr(self, _init_field(init, "_per_seed"))

    def to_dict(self) -> dict:
        """The payload: an init not run has no fields (a unit runs one init)."""
        skip = {f"{i}{k}" for i in INIT_PAIR for k in ("", "_lr", "_per_seed")
                if getattr(self, i) is None}
        return {k: v for k, v in super().to_dict().items() if k not in skip}


def _init_field(init: str, part: str = "") -> str:
    if init not in INIT_PAIR:
        raise ValueError(f"depth_time: unknown init {init!r}; one of {INIT_PAIR}")
    return init + part


def run_depth_time(cfg: DepthTimeConfig, inits=INIT_PAIR,
                   bars: bool | None = None) -> DepthTime:
    """Steps to learn the patterns (loss below ``criterion`` x the zero predictor's) for each
    depth and init (of :data:`INIT_PAIR`), at the best learning rate of a log grid: for each
    (init, depth) one ``train_many`` sweep over lr x seed; the learning time is the smallest,
    over learning rates, median over seeds (inf if never reached)."""
    if not cfg.depths or not cfg.seeds or cfg.lr_min > cfg.lr_max:
        raise ValueError("DepthTimeConfig needs depths, seeds and lr_min <= lr_max")
    for init in inits:
        _init_field(init)
    data = saxe_task(cfg.n_patterns, seed=0)
    lrs = runtime.grid(np.geomspace(cfg.lr_min, cfg.lr_max, cfg.n_lr).tolist())
    depths, seeds = runtime.grid(cfg.depths), runtime.grid(cfg.seeds)
    threshold = cfg.criterion * 0.5  # the zero predictor's loss is 1/2 per example
    t0 = time.perf_counter()
    out = dict(depths=[int(d) for d in depths], lrs=lrs, criterion=cfg.criterion,
               steps=runtime.steps(cfg.steps), width=cfg.width, seeds=list(seeds))
    jobs = grid(init=list(inits), depth=depths)  # a dry run: each sweep stands for depths.cut
    job = P.current()
    recipe = Recipe(cfg.steps, optimizer="sgd", loss="mse", eval=LogSpaced(120))
    for j, c in enumerate(jobs):
        init, depth = c["init"], int(c["depth"])
        with job.part(j, len(jobs)):
            res = train_many(lambda c, depth=depth, init=init: deep_linear(cfg.n_patterns, cfg.width,
                                                                           depth, init),
                             data, grid(lr=lrs, seed=seeds), recipe, bars=bars)
        T = np.array([np.inf if (h.diverged or h.first_step("train_loss", below=threshold) is None)
                      else h.first_step("train_loss", below=threshold) for h in res.histories],
                     dtype=float).reshape(len(lrs), len(seeds))
        med = np.median(T, axis=1)
        best = int(np.argmin(med))
        out.setdefault(init, []).append(float(med[best]))
        out.setdefault(f"{init}_lr", []).append(lrs[best])
        out.setdefault(f"{init}_per_seed", []).append(T.min(0).tolist())
    return DepthTime(**out, wall_time=time.perf_counter() - t0)


def learning_times(values) -> np.ndarray:
    """Learning times as floats; "never" (inf, stored as null in JSON) becomes inf."""
    return np.array([np.inf if v is None else float(v) for v in values])


def depth_time_ratio(res: DepthTime, init: str, shallow: int = 2, deep: int = 16) -> float:
    """Learning time at depth ``deep`` over depth ``shallow`` (inf if never learned)."""
    d = res.depths
    if shallow not in d or deep not in d:
        raise ValueError(f"depths {d} must include {shallow} and {deep}")
    times = learning_times(res.times(init))
    return float(times[d.index(deep)] / times[d.index(shallow)])


# =============================================================================================
# 4. Initial guessing bias
# =============================================================================================


def run_guessing_bias(cfg: GuessingConfig, activations=ACTIVATIONS) -> GuessingRun:
    """For each activation and depth, the guessing bias of ``cfg.n_nets`` untrained MLPs
    (zero biases; W ~ N(0, sigma_w^2 / fan_in) at the activation's critical sigma_w, or
    Xavier) on MNIST-1D inputs. Progress goes to :func:`dynamics.progress.current` (a stopped
    job leaves the networks not drawn out)."""
    d = mnist1d_data(max(cfg.n_inputs, 100))
    x = d.x_train[:cfg.n_inputs]
    depths, nets = runtime.grid(cfg.depths), runtime.grid(range(cfg.n_nets))
    out = dict(depths=[int(v) for v in depths], n_classes=d.n_classes, n_nets=len(nets),
               scale=cfg.scale, width=cfg.width)
    total, done = len(activations) * len(depths) * len(nets), 0
    job = P.current()
    for act in activations:
        out[act], out[f"{act}_class"] = [], []
        for depth in depths:
            vals, favourite = [], []
            for k in nets:
                with runtime.seeded(cfg.seed * 100003 + 1000 * int(depth) + k):
                    if cfg.scale == "critical":
                        model = critical_mlp(d.input_dim, cfg.width, int(depth), act,
                                             d.n_classes)
                    else:
                        model = init_mlp(d.input_dim, cfg.width, int(depth), act, "xavier")
                with torch.no_grad():
                    logits = model.to(x.device)(x)
                vals.append(guessing_bias(logits))
                favourite.append(favourite_class(logits))
                done += 1
                if job.report(done / total):
                    out[act].append(vals)
                    out[f"{act}_class"].append(favourite)
                    out["stopped"] = True
                    return GuessingRun.of(out)
            out[act].append(vals)
            out[f"{act}_class"].append(favourite)
    return GuessingRun.of(out)


# =============================================================================================
# Worked answers: each one that quotes a measurement computes it in a collapsed cell of the page
# =============================================================================================


def answer_lsuv_gain(signal: Signal) -> str:
    """Exercise 2: the sigma_w^2 that gives q* = 1 at sigma_b = 0, chi_1 there, and the
    gradient's growth per layer that section 1's tanh LSUV network measured."""
    s = brentq(lambda v: q_star(v, 0.0) - 1, 1.01, 10)
    chi = chi_1(s, 0.0)
    g = signal.tanh["lsuv"].grad_in  # the backward signal |dL/dz_l|
    layers = len(g) - 1
    return (f"q* = 1 at σ_w² = {s:.3f}, where χ₁ = {chi:.3f} and √χ₁ = {math.sqrt(chi):.4f}; "
            f"this page's tanh LSUV network: backward signal |dL/dz| ×{_num(g[0] / g[-1])} over "
            f"{layers} layers, ×{(g[0] / g[-1]) ** (1 / layers):.4f} per layer")


def answer_band(depth: int = 32, sigma_b2=(0.0, 0.05, 0.3)) -> str:
    """Exercise 3: the critical sigma_w^2 and the band depth <= 6 xi_c at each sigma_b^2."""
    parts = []
    for b in sigma_b2:
        lo, hi = trainable_band(depth, b)
        parts.append(f"σ_b² = {b:g}: critical σ_w² = {critical_sigma_w2(b):.2f}, band "
                     f"[{lo:.2f}, {hi:.2f}]")
    return f"depth {depth}: " + "; ".join(parts)


def answer_fluctuations(profile: str | None = None, seed: int | None = None,
                        widths=(32, 64, 128), depth: int = 64) -> str:
    """Exercise 4: Var[G_l] / E[G_l]^2 against l / n at several widths (the profile's
    ensemble size): the Gaussian slope up to l/n = 0.25, its value at l/n = 0.5, and the
    orthogonal ensemble's largest value, all in the same units."""
    cfg = FluctuationConfig.for_profile(profile, seed=get_seed(seed))
    n_nets = len(runtime.grid(range(cfg.n_nets)))  # an ensemble is a list of runs
    lines = []
    for n in widths:
        x = np.arange(1, depth + 1) / n
        gauss = preactivation_fluctuations("gaussian", depth, n, n_nets, seed=cfg.seed) / n
        orth = preactivation_fluctuations("orthogonal", depth, n, n_nets, seed=cfg.seed) / n
        early = x <= 0.25
        slope = np.polyfit(x[early], gauss[early], 1)[0] if early.sum() > 1 else float("nan")
        lines.append(f"width {n}: slope {slope:.2f} up to l/n = 0.25, "
                     f"{np.interp(0.5, x, gauss):.2f} at l/n = 0.5, orthogonal at most "
                     f"{orth.max():.3f}")
    return f"{n_nets} networks per ensemble, depth {depth}; " + "; ".join(lines)


def answer_rank_growth(profile: str | None = None, seed: int | None = None) -> str:
    """Exercise 6: the rank of W1 - W1(0) after each drop of section 3's deep linear network."""
    r = run_rank_growth(SaxeConfig.for_profile(profile, seed=get_seed(seed)))
    drops = "; ".join(f"pattern {c + 1} half learned at step {t}: {k} large" if t is not None
                      else f"pattern {c + 1} not learned" for c, (t, k) in
                      enumerate(zip(r.half_steps, r.large_after)))
    return (f"singular values of W1 − W1(0) above {r.large:g} — {drops}; final values "
            f"{', '.join(f'{v:.2f}' for v in r.final)} against (√C s_c)^(−1/2) = "
            f"{', '.join(f'{v:.2f}' for v in r.balanced)}")


def answer_coordinate_check(seed: int | None = None) -> str:
    """Exercise 7: the RMS change of each hidden layer's activations after one Adam step."""
    r = coordinate_check(seed=get_seed(seed))
    rows = [f"width {n}: " + ", ".join(f"{v:.3f}" for v in ch) + f" (activations "
            f"{min(sz):.2f}–{max(sz):.2f})" for n, ch, sz in zip(r["widths"], r["change"], r["size"])]
    grow = [b / a for a, b in zip(r["change"][0], r["change"][-1])]
    return ("RMS change of hidden layers 1, 2, … after one Adam step — " + "; ".join(rows)
            + f"; from width {r['widths'][0]} to {r['widths'][-1]} "
            f"({r['widths'][-1] / r['widths'][0]:g}×) each layer's change grows "
            + ", ".join(f"{g:.1f}×" for g in grow))


# =============================================================================================
# The claims' seeds
# =============================================================================================

_CLAIM_RUNS = dict(signal=(run_signal, SignalConfig), chaos=(run_chaos, ChaosConfig),
                   fluct=(run_fluctuations, FluctuationConfig), saxe=(run_saxe, SaxeConfig),
                   igb=(run_guessing_bias, GuessingConfig), iso=(run_isometry, IsometryConfig))
SECTIONS = dict(signal=_CLAIM_RUNS["signal"], chaos=_CLAIM_RUNS["chaos"],
                isometry=_CLAIM_RUNS["iso"], fluctuations=_CLAIM_RUNS["fluct"],
                saxe=_CLAIM_RUNS["saxe"], guessing=_CLAIM_RUNS["igb"],
                width=(run_width, WidthConfig))


def run(section: str, profile: str | None = None, seed: int | None = None) -> dict:
    """The page's run of one section at ``profile`` scale on ``seed``: "signal" (Section 1),
    "chaos" (2), "isometry" (2, the Jacobian's spectrum), "fluctuations" and "saxe" (3),
    "guessing" (4) or "width" (5); its config is the section's ``*Config.for_profile``."""
    if section not in SECTIONS:
        raise ValueError(f"run: unknown section {section!r}; one of {list(SECTIONS)}")
    runner, config = SECTIONS[section]
    return runner(config.for_profile(profile, seed=get_seed(seed)))


def claim_runs(profile: str | None, seeds, **page) -> dict:
    """The live experiments the claims table judges, on every seed of ``seeds`` at
    ``profile`` scale: ``{"signal": {seed: result}, "chaos": ..., "fluct": ..., "saxe": ...,
    "igb": ..., "iso": ...}``. A result the page already ran (``signal=...`` etc., for the page's seed,
    the first of ``seeds``) is reused, not run again."""
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"claim_runs needs distinct seeds, got {seeds}")
    unknown = set(page) - set(_CLAIM_RUNS)
    if unknown:
        raise ValueError(f"claim_runs: unknown result {sorted(unknown)}; "
                         f"give some of {list(_CLAIM_RUNS)}")
    out = {}
    for name, (run, config) in _CLAIM_RUNS.items():
        out[name] = {s: page[name] if s == seeds[0] and name in page
                     else run(config.for_profile(profile, seed=s)) for s in seeds}
    return out


# =============================================================================================
# Precomputed results
# =============================================================================================


def precompute_plan(profile: str | None = None) -> units.Plan:
    """The chapter's precomputed results at ``profile`` scale as units: the trainability
    grid (one unit per depth: a sweep over sigma_w^2 x seed) and the learning time vs depth
    of deep linear networks (one unit per init and depth: a sweep over lr x seed)."""
    p = units.Plan("initialization", profile)
    note = {"cpu": "Made at the CPU scale (2 cores); at the gpu profile the same command would run a "
                   "larger grid.",
            "smoke": "Smoke scale (tiny).", "gpu": "GPU scale."}[p.profile]
    command = COMMAND.format(profile=p.profile)
    cfg = TrainabilityConfig.for_profile(p.profile)
    more = cfg.replace(**MORE_SEEDS[p.profile])  # first: the one output a short run writes
    for depth in p.grid(more.depths):
        one = more.replace(depths=[depth])
        p.unit(f"trainability seeds={more.seeds} depth={depth}", partial(run_trainability, one),
               config=one)
    p.output("initialization_trainability_seeds", _merge_trainability, config=more,
             command=command, note=note + f" {len(more.seeds)} more seeds, on the cells the "
             "edge-of-chaos claim reads.")
    for depth in p.grid(cfg.depths):
        one = cfg.replace(depths=[depth])
        p.unit(f"trainability depth={depth}", partial(run_trainability, one), config=one)
    p.output("initialization_trainability", _merge_trainability, config=cfg, command=command,
             note=note)
    dcfg = DepthTimeConfig.for_profile(p.profile)
    for init in INIT_PAIR:
        for depth in p.grid(dcfg.depths):
            one = dcfg.replace(depths=[depth])
            p.unit(f"depth_time {init} depth={depth}", partial(run_depth_time, one, (init,)),
                   config=dict(one.to_dict(), init=init))
    p.output("initialization_depth_time", _merge_depth_time, config=dcfg, command=command,
             note=note)
    return p


def _merge_trainability(parts: dict) -> Trainability:
    """:func:`run_trainability`'s result from its units (one depth each), deepest last."""
    parts = sorted(parts.values(), key=lambda q: q["depths"][0])
    out = dict(parts[0])
    out.update(depths=[d for q in parts for d in q["depths"]], acc=[r for q in parts for r in q["acc"]],
               acc_per_seed=[r for q in parts for r in q.get("acc_per_seed", [])],
               diverged=[d for q in parts for d in q["diverged"]],
               stopped=any(q["stopped"] for q in parts), wall_time=sum(q["wall_time"] for q in parts))
    return Trainability.of(out)


def _merge_depth_time(parts: dict) -> DepthTime:
    """:func:`run_depth_time`'s result from its units (one init and depth each)."""
    parts = list(parts.values())
    first = parts[0]
    out = {k: first[k] for k in ("depths", "lrs", "criterion", "steps", "width", "seeds")}
    inits = list(dict.fromkeys(k for q in parts for k in INIT_PAIR if k in q))
    out["depths"] = list(dict.fromkeys(d for q in parts for d in q["depths"]))
    for init in inits:
        for key in (init, f"{init}_lr", f"{init}_per_seed"):
            out[key] = [v for q in parts if init in q for v in q[key]]
    out["wall_time"] = sum(q["wall_time"] for q in parts)
    return DepthTime.of(out)



__all__ = ["COMMAND", "CHANCE", "Trainability", "DepthTime", "run", "run_signal", "run_chaos", "xi_deviation",
           "run_trainability", "best_sigma_w2", "trainability_agreement",
           "trainability_disagreements", "run_fluctuations", "Fluctuations", "Saxe", "SaxeControl", "ChaosRun", "QMap", "CMap",
           "CriticalLine", "XiTheory", "XiMeasured", "run_saxe", "half_times",
           "run_rank_growth", "run_depth_time", "learning_times", "depth_time_ratio",
           "run_guessing_bias", "answer_lsuv_gain", "answer_band", "answer_fluctuations",
           "answer_rank_growth", "answer_coordinate_check", "claim_runs", "precompute_plan",
           "INIT_PAIR"]
