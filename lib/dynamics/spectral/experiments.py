"""The chapter's experiments: one runner per figure, their summaries, and :func:`precompute_plan`
(the static figures in ``data/``). No plotting here (see ``figures.py``).

Runners: :func:`time_orthogonalization` (Newton–Schulz vs SVD), :func:`run_width` (one step
at several widths), :func:`run_practice` (Muon vs AdamW vs SGD, each at its best rate),
:func:`run_memory` and :func:`run_memory_batch` (one step on an associative memory),
:func:`run_shaping` (U Σᵖ Vᵀ with fixed and scheduled p). The loops report into
:mod:`dynamics.progress` (a live panel's progress bar and Stop button). Every grid and
list of runs goes through ``runtime.grid`` and every training through ``train`` (which
caps its steps), so a dry run (``DYNAMICS_DRY_RUN``) proves every profile in seconds.
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

from .. import data as D
from .. import progress as P
from .. import results, runtime, units
from .. import train as T
from .science import (MEMORY_METHODS, MemoryConfig, PracticeConfig, ShapingConfig, SpectralShaping,
                      TeachingMuon, WidthConfig, batch_gradient, linear_p_schedule, memory_task,
                      mlp, default_data, muon_with_adamw, newton_schulz, one_step, output_change,
                      polar, practice_data, recovered, rms_to_rms_norm, unit_updates)
from .science import CUBIC_COEFFS, random_matrix, singular_value_band
from ..plots import claim_seeds
from ..runtime import get_seed
from .roles import steepest_table
from .records import (Band, Bands, Memory, MemoryBatch, MemoryFile, Practice, PracticeFile, Roles, Shaping,
                      ShapingFile, ShapingRate, StepTable, Timing, TimingRow, Width)

__all__ = ['muon_agreement', 'time_orthogonalization', 'timing_sizes', 'run_bands',
           'hidden_layer_step', 'run_width', 'growth', 'PRACTICE_OPTIMIZERS', 'steps_to',
           'best_lr', 'run_practice', 'practice_summary', 'rates_reaching', 'load_practice',
           'practice_sweeps', 'rank_bins', 'run_memory', 'run_memory_batch', 'critical_batch', 'CRITICAL_SHARE',
           'run_shaped', 'DECAYED', 'schedule_name', 'run_shaping', 'first_at_or_below', 'reference_loss',
           'shaping_summary', 'EARLY_STEP', 'loss_at_step', 'early_and_late', 'load_shaping',
           'shaping_runs', 'shaping_order', 'recall_half_rank', 'run_roles',
           'TimingRow', 'Timing', 'PracticeFile', 'Memory', 'MemoryFile', 'Shaping', 'ShapingRate',
           'ShapingFile', 'Band', 'Bands', 'Width', 'Practice', 'MemoryBatch', 'StepTable', 'Roles',
           'RECORDS', 'precompute_plan']


# What the runners return and the files hold, field by field: :mod:`.records`.
RECORDS = {"spectral_timing": Timing, "spectral_practice": PracticeFile,
           "spectral_memory": MemoryFile, "spectral_shaping": ShapingFile}
"""Each precomputed file of the chapter and the record it is read as."""


def _config(cls, cfg, changes: dict):
    """A runner's config: ``cfg``, else the class's at the active runtime's profile and seed;
    ``changes`` on top (``run_memory(alpha=0.0)``)."""
    cfg = cfg if cfg is not None else cls.for_profile(None, seed=get_seed(None))
    return cfg.replace(**changes) if changes else cfg


# ================================================================ Muon = torch.optim.Muon


def muon_agreement(seed: int | None = None, steps: int = 5, shapes=((96, 32), (32, 96), (64, 64)),
                   **hyper) -> float:
    """Largest parameter difference between :class:`TeachingMuon` and ``torch.optim.Muon``
    after ``steps`` steps on the same random gradients (0.0 when the updates agree exactly)."""
    seed = get_seed(seed)
    g = torch.Generator().manual_seed(seed)
    ours = [torch.nn.Parameter(torch.randn(*s, generator=g)) for s in shapes]
    theirs = [torch.nn.Parameter(p.detach().clone()) for p in ours]
    hyper = dict(dict(lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True), **hyper)
    opts = [TeachingMuon(ours, **hyper), torch.optim.Muon(theirs, **hyper)]
    for _ in range(steps):
        for p, q in zip(ours, theirs):
            p.grad = torch.randn(p.shape, generator=g)
            q.grad = p.grad.clone()
        for opt in opts:
            opt.step()
    return max(float((p - q).detach().abs().max()) for p, q in zip(ours, theirs))


# ================================================================ 1. Newton–Schulz vs SVD


def _timeit(fn, repeats: int, device):
    """Median wall seconds, median CPU seconds (this process, all threads) and the last result
    of ``fn()``; one warm-up call when repeats > 1. On a shared machine CPU seconds are the
    steadier measure; on a GPU the wall clock (after synchronizing) is the one that counts."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if repeats > 1:
        fn()
    walls, cpus, out = [], [], None
    for _ in range(max(1, repeats)):
        sync()
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn()
        sync()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return float(np.median(walls)), float(np.median(cpus)), out


def time_orthogonalization(sizes, steps: int = 5, repeats: int = 3, device=None,
                           dtypes=(torch.float32,), seed: int | None = None) -> Timing:
    """Wall (and CPU) seconds of Newton–Schulz (``steps`` iterations, each dtype) and of the
    exact polar factor by SVD, for square Gaussian n×n matrices (median of ``repeats`` up to
    n = 1024, one run above), with NS's distance from U Vᵀ: relative Frobenius error and
    max|σ − 1|: a :class:`TimingRow` per size. (``dynamics_ops.bench`` calls this too.)"""
    seed = get_seed(seed)
    device = runtime.get_device(device)
    rows = []
    for n in sizes:
        G = torch.randn(n, n, generator=torch.Generator().manual_seed(seed)).to(device)
        reps = repeats if n <= 1024 else 1
        row = dict(n=int(n), device=device.type, threads=torch.get_num_threads())
        outs = {}
        for dt in dtypes:
            name = str(dt).replace("torch.", "")
            row[f"ns_{name}_s"], row[f"ns_{name}_cpu_s"], outs[dt] = _timeit(
                lambda: newton_schulz(G, steps, dtype=dt), reps, device)
        row["svd_s"], row["svd_cpu_s"], exact = _timeit(lambda: polar(G), reps, device)
        O = outs.get(torch.float32)
        if O is None:
            O = newton_schulz(G, steps, dtype=torch.float32)
        row["rel_error"] = float((O - exact).norm() / exact.norm())
        row["max_sigma_error"] = float((torch.linalg.svdvals(O) - 1).abs().max())
        rows.append(TimingRow.of(row))
    return Timing(rows=rows)


def run_bands(seed: int | None = None, rows: int = 256, cols: int = 128, steps: int = 10) -> Bands:
    """Section 2's matrix: every singular value's band after 0..``steps`` iterations of the
    quintic and of the cubic, on one ``rows``×``cols`` Gaussian matrix."""
    G = random_matrix(rows, cols, "gaussian", seed=get_seed(seed))
    return Bands(quintic=Band.of(singular_value_band(G, steps)),
                 cubic=Band.of(singular_value_band(G, steps, CUBIC_COEFFS)))


def timing_sizes(profile: str) -> list[int]:
    """Matrix sizes timed in a profile. A dry run keeps the ends of the list but no size
    above 1024: an 8192² SVD takes many minutes on a CPU, and proves nothing a 1024² does not."""
    sizes = {"smoke": [64, 128, 256], "cpu": [64, 128, 256, 512, 1024, 2048],
             "gpu": [64, 128, 256, 512, 1024, 2048, 4096, 8192]}[runtime.get_profile(profile)]
    if runtime.dry_run() is not None:
        sizes = [n for n in runtime.grid(sizes) if n <= 1024] or sizes[:1]
    return sizes


# ================================================================ 2. one step at several widths


def hidden_layer_step(cfg: WidthConfig, data: D.Dataset, width: int, seed: int) -> dict:
    """For one MLP: the gradient of its second hidden matrix on one batch, each optimizer's
    first step from it (:func:`unit_updates`), and how far each step moves that layer's output
    (:func:`output_change`) beside its RMS→RMS norm (the most it could move it)."""
    model = mlp(data, width, cfg.depth, seed)
    layer = model.hidden[1]
    seen = {}

    def keep_input(module, inputs, output):  # returns None: the output is left alone
        seen["x"] = inputs[0].detach()

    hook = layer.register_forward_hook(keep_input)
    xb, yb = data.x_train[:cfg.batch_size], data.y_train[:cfg.batch_size]
    F.cross_entropy(model(xb), yb).backward()
    hook.remove()
    return {name: dict(change=output_change(U, seen["x"]), norm=rms_to_rms_norm(U))
            for name, U in unit_updates(layer.weight.grad).items()}


def run_width(cfg: WidthConfig | None = None, data: D.Dataset | None = None, **changes) -> Width:
    """:func:`hidden_layer_step` at every width, averaged over ``cfg.seeds`` initializations:
    ``change[opt][i]`` and ``norm[opt][i]`` at ``widths[i]``, per unit learning rate."""
    cfg = _config(WidthConfig, cfg, changes)
    data = data if data is not None else default_data()
    widths = runtime.grid(cfg.widths)
    seeds = runtime.grid(range(cfg.seed, cfg.seed + cfg.seeds), keep=1)
    out = Width(widths=list(widths), change={}, norm={})
    for i, w in enumerate(widths):
        per_seed = [hidden_layer_step(cfg, data, w, s) for s in seeds]
        for opt in per_seed[0]:
            out.change.setdefault(opt, []).append(float(np.mean([r[opt]["change"] for r in per_seed])))
            out.norm.setdefault(opt, []).append(float(np.mean([r[opt]["norm"] for r in per_seed])))
        if P.current().report((i + 1) / len(widths)):
            break
    return out


def growth(result: Width, opt: str, what: str = "change") -> float:
    """How much ``opt``'s step grows from the smallest to the largest width (a ratio); ``what``:
    ``change`` or ``norm``."""
    ys = (result.change if what == "change" else result.norm)[opt]
    return ys[-1] / ys[0]


# ================================================================ 3. Muon in practice


PRACTICE_OPTIMIZERS = ("muon", "adamw", "momentum")


def steps_to(history, target: float):
    """First evaluation step with training loss below ``target`` (None if never)."""
    return None if "train_loss" not in history else history.first_step("train_loss", below=target)


def best_lr(histories: dict, target: float) -> float:
    """The learning rate that reaches ``target`` first; ties and misses broken by the lowest
    final training loss (a diverged run ranks last)."""
    def key(lr):
        h = histories[lr]
        if h.diverged or not len(h):
            return (math.inf, math.inf)
        s, final = steps_to(h, target), h.last("train_loss")
        return (s if s is not None else math.inf, final if math.isfinite(final) else math.inf)
    return min(histories, key=key)


def _given(optimizer):
    """A recipe's optimizer: a name stays a name; an optimizer already built for the model
    becomes the function that returns it."""
    return optimizer if isinstance(optimizer, str) else (lambda model: optimizer)


def run_practice(cfg: PracticeConfig | None = None, data: D.Dataset | None = None,
                 teaching_fp32: bool = True, optimizers=PRACTICE_OPTIMIZERS, bars=None,
                 **changes) -> Practice:
    """Sweep each optimizer's learning rate and pick its best (:func:`best_lr`).

    Every run is its own ``train`` call, so each history carries its own wall clock
    (``sweep.train_many`` trains many models at once, which would blur per-run times, and has
    no Muon). AdamW goes first: Muon's AdamW part (head, biases) then uses AdamW's best rate.
    ``teaching_fp32`` adds :class:`TeachingMuon` with float32 Newton–Schulz at Muon's best
    rate: the same algorithm, timed without bfloat16 arithmetic (slow on CPUs without bf16).
    """
    cfg = _config(PracticeConfig, cfg, changes)
    data = data if data is not None else practice_data(cfg)
    recipe = T.Recipe(cfg.steps, momentum=0.9, batch_size=cfg.batch_size,
                      eval=T.Every(max(1, cfg.steps // 40), test=False))
    kw = dict(seed=cfg.seed, bars=bars)
    lrs = {name: runtime.grid(getattr(cfg, f"{name}_lrs")) for name in optimizers}
    sweeps, best = {}, {}
    for name in sorted(optimizers, key=lambda n: n != "adamw"):
        sweeps[name] = {}
        for lr in lrs[name]:
            model = mlp(data, cfg.width, cfg.depth, cfg.seed)
            opt = muon_with_adamw(model, lr, best.get("adamw", 3e-3)) if name == "muon" else name
            sweeps[name][lr] = T.train(model, data, recipe.replace(optimizer=_given(opt), lr=lr),
                                       desc=f"{name} lr={lr:g}", **kw)
        best[name] = best_lr(sweeps[name], cfg.target_loss)
    timed = {name: sweeps[name][best[name]] for name in sweeps}
    if teaching_fp32 and "muon" in sweeps:
        model = mlp(data, cfg.width, cfg.depth, cfg.seed)
        opt = muon_with_adamw(model, best["muon"], best.get("adamw", 3e-3), torch.float32)
        timed["muon_fp32"] = T.train(model, data, recipe.replace(optimizer=_given(opt)),
                                     desc="muon fp32", **kw)
    return Practice(sweeps=sweeps, best=best, timed=timed, target=cfg.target_loss, data=data.name,
                    config=cfg)


def practice_summary(result: Practice) -> dict:
    """Steps to the target loss and the final loss, per optimizer at its best rate (seconds
    are :func:`~.roles.step_seconds`' alone: a run's wall clock also holds its evaluations)."""
    out = {}
    for name, h in result.timed.items():
        out[name] = dict(lr=result.best.get(name.split("_")[0]),
                         steps=steps_to(h, result.target),
                         final_loss=h.last("train_loss") if not h.diverged else float("nan"))
    return out


def rates_reaching(sweeps: dict, target: float) -> dict:
    """Per optimizer: how many of its swept learning rates reach ``target``, and of how many."""
    return {name: (sum(steps_to(h, target) is not None for h in runs.values()), len(runs))
            for name, runs in sweeps.items()}


def practice_sweeps(swept: PracticeFile) -> dict:
    """A precomputed sweep file's first-seed sweeps as ``{optimizer: {lr: History}}``."""
    return {k: {float(lr): T.History.from_dict(h) for lr, h in v.items()}
            for k, v in swept.sweeps.items()}


def load_practice(name: str = "spectral_practice"):
    """The precomputed lr sweeps as ``({optimizer: {lr: History}}, target, dataset, provenance)``."""
    swept, prov = results.load(name, as_=RECORDS[name])
    return practice_sweeps(swept), swept.target, swept.data, prov


# ================================================================ 4. the associative memory


def rank_bins(n: int, n_bins: int = 16) -> np.ndarray:
    """Edges of log-spaced bins over frequency ranks 1..n (for recall by rank)."""
    return np.unique(np.geomspace(1, n + 1, n_bins + 1).astype(int))


def run_memory(cfg: MemoryConfig | None = None, methods=MEMORY_METHODS, **changes) -> Memory:
    """Fraction of pairs (and of frequency mass) recovered after one full-gradient step, for
    each N = ratio·d, and the recall in log-spaced bins of frequency rank (averaged over
    ``cfg.seeds`` draws, the seeds ``draws``); ``by_draw[m][i]``: each draw's fraction."""
    cfg = _config(MemoryConfig, cfg, changes)
    frac, mass, by_rank, by_draw = ({m: [] for m in methods} for _ in range(4))
    ratios = runtime.grid(cfg.ratios, always=(8,))  # N = 8d: the page reads it (exercise 3)
    seeds = runtime.grid(range(cfg.seed, cfg.seed + cfg.seeds), keep=1)
    ns = [max(2, int(round(r * cfg.dim))) for r in ratios]
    centers = []
    for i, n in enumerate(ns):
        hits = {m: torch.zeros(n, dtype=torch.float64) for m in methods}
        fr = {m: 0.0 for m in methods}
        for m in methods:
            by_draw[m].append([])
        for s in seeds:
            keys, values, freq = memory_task(n, cfg.dim, cfg.alpha, s)
            for m in methods:
                ok = recovered(one_step(m, keys, values, freq), keys, values).to(torch.float64).cpu()
                by_draw[m][-1].append(float(ok.mean()))
                hits[m] += ok / len(seeds)
                fr[m] += float((ok * freq.cpu()).sum()) / len(seeds)
        edges = rank_bins(n)
        centers.append(np.sqrt(edges[:-1] * edges[1:]).tolist())
        for m in methods:
            frac[m].append(float(hits[m].mean()))
            mass[m].append(fr[m])
            h = hits[m].numpy()
            by_rank[m].append([float(h[a - 1:b - 1].mean()) for a, b in zip(edges[:-1], edges[1:])])
        if P.current().report((i + 1) / len(ns)):
            break
    return Memory(n=ns[:len(frac[methods[0]])], ratios=list(ratios[:len(frac[methods[0]])]),
                  dim=cfg.dim, alpha=cfg.alpha, fraction=frac, mass=mass, by_rank=by_rank,
                  rank_centers=centers, draws=list(seeds), by_draw=by_draw)


def recall_half_rank(memory: Memory, method: str, ratio: float = 4) -> float:
    """The first frequency-rank bin (its centre) where ``method`` stores fewer than half the
    pairs, at N = ``ratio``·d (infinity if none): how deep into the tail it reaches."""
    j = int(np.argmin([abs(x - ratio) for x in memory.ratios]))
    return next((c for c, v in zip(memory.rank_centers[j], memory.by_rank[method][j])
                 if v < 0.5), np.inf)


def run_memory_batch(cfg: MemoryConfig | None = None, methods=("sgd", "muon"), **changes) -> MemoryBatch:
    """Recall after one step from a *batch* gradient (:func:`batch_gradient`), for each batch
    size, at N = ``batch_ratio``·d pairs, beside the full-gradient recall (the infinite batch),
    averaged over ``cfg.seeds`` draws (the seeds ``draws``); ``by_draw[m][k]`` and
    ``full_by_draw[m][k]``: draw k's recall per batch size and with the full gradient.
    ``again_by_draw[k]``: the control of the critical-batch row, SGD again on a second,
    independent stream of batches (how far the critical batch of one method moves by chance)."""
    cfg = _config(MemoryConfig, cfg, changes)
    n = max(2, int(round(cfg.batch_ratio * cfg.dim)))
    sizes = runtime.grid(cfg.batch_sizes)
    seeds = runtime.grid(range(cfg.seed, cfg.seed + cfg.seeds), keep=1)
    by_draw = {m: [] for m in methods}  # [draw][batch]
    full_by_draw = {m: [] for m in methods}
    again_by_draw = []
    for j, s in enumerate(seeds):
        keys, values, freq = memory_task(n, cfg.dim, cfg.alpha, s)
        gen = torch.Generator().manual_seed(10_000 + s)
        gen2 = torch.Generator().manual_seed(20_000 + s)
        for m in methods:
            full_by_draw[m].append(
                float(recovered(one_step(m, keys, values, freq), keys, values).double().mean()))
            by_draw[m].append([])
        again_by_draw.append([])
        for b in sizes:
            G = batch_gradient(keys, values, freq, b, gen)
            for m in methods:
                W = one_step(m, keys, values, freq, G)
                by_draw[m][-1].append(float(recovered(W, keys, values).double().mean()))
            W = one_step("sgd", keys, values, freq, batch_gradient(keys, values, freq, b, gen2))
            again_by_draw[-1].append(float(recovered(W, keys, values).double().mean()))
        if P.current().report((j + 1) / len(seeds)):
            seeds = seeds[:j + 1]
            break
    return MemoryBatch(n=n, dim=cfg.dim, alpha=cfg.alpha, seed=cfg.seed, batch_sizes=list(sizes),
                       recall={m: np.mean(v, axis=0).tolist() for m, v in by_draw.items()},
                       full={m: float(np.mean(v)) for m, v in full_by_draw.items()},
                       draws=list(seeds), by_draw=by_draw, full_by_draw=full_by_draw,
                       again_by_draw=again_by_draw)


CRITICAL_SHARE = 0.9  # the critical batch: the first to reach this share of the full gradient's recall


def critical_batch(result: MemoryBatch, method: str, share: float = CRITICAL_SHARE, recall=None):
    """The smallest batch size whose one step recovers ``share`` of what the full gradient
    does (None if none does): where adding examples to the batch stops paying. ``recall``:
    another curve to judge against ``method``'s full gradient (the control's)."""
    goal = share * result.full[method]
    curve = result.recall[method] if recall is None else recall
    for b, r in zip(result.batch_sizes, curve):
        if r >= goal:
            return b
    return None


# ================================================================ 5. spectral shaping


def run_shaped(cfg: ShapingConfig, data: D.Dataset, p, lr: float | None = None,
               on_eval=(), bars=None, decay: bool = False):
    """Train the MLP with :class:`SpectralShaping` (exponent or schedule ``p``) on its hidden
    matrices and AdamW on the rest; returns the ``History``. ``on_eval``: ``train`` hooks (a
    panel's redraw). ``decay``: every learning rate decays linearly to 0 over the run (the
    page's other runs keep theirs constant; DynMuon's runs decay theirs)."""
    model = mlp(data, cfg.width, cfg.depth, cfg.seed)
    hidden, other = T.muon_split(model)
    opt = T.Optimizers([SpectralShaping(hidden, lr=lr or cfg.lr, p=p),
                        torch.optim.AdamW(other, lr=cfg.adam_lr)])
    recipe = T.Recipe(cfg.steps, optimizer=_given(opt), batch_size=cfg.batch_size,
                      eval=T.Every(max(1, cfg.steps // 50), test=False),
                      schedule=partial(_linear_decay, cfg.steps) if decay else None)
    return T.train(model, data, recipe, seed=cfg.seed, hooks=T.Hooks(on_eval=on_eval),
                   bars=bars, desc=f"p={p if not callable(p) else 'schedule'}")


def _linear_decay(steps: int, t: int) -> float:  # the lr factor: 1 at step 0, 0 at the end
    return max(0.0, 1.0 - t / max(1, steps))


DECAYED = "Muon, lr decayed to 0"  # the shaping runs' control: p = 0 with a learning-rate decay


def schedule_name(cfg: ShapingConfig) -> str:
    return f"p: {cfg.p_start:g} → {cfg.p_end:g}"


def run_shaping(cfg: ShapingConfig | None = None, data: D.Dataset | None = None,
                lr: float | None = None, bars=None, decayed: bool = False, **changes) -> Shaping:
    """One run per fixed p (p = 0, Muon, always: it is the reference) and one with p
    scheduled linearly from ``p_start`` to ``p_end``, all at a constant learning rate;
    ``decayed``: also Muon with its rate decayed linearly to 0 (:data:`DECAYED`), the control
    that tells a p schedule from a learning-rate decay."""
    cfg = _config(ShapingConfig, cfg, changes)
    data = data if data is not None else default_data()
    ps = runtime.grid(sorted(set(cfg.ps) | {0.0}, reverse=True), always=[0.0])
    runs = {f"p = {p:g}": run_shaped(cfg, data, p, lr, bars=bars) for p in ps}
    schedule = linear_p_schedule(cfg.p_start, cfg.p_end, cfg.steps)
    runs[schedule_name(cfg)] = run_shaped(cfg, data, schedule, lr, bars=bars)
    if decayed:
        runs[DECAYED] = run_shaped(cfg, data, 0.0, lr, bars=bars, decay=True)
    return Shaping(runs=runs, schedule=schedule_name(cfg), lr=lr or cfg.lr)


def first_at_or_below(history, value: float):
    """First evaluation step with training loss <= ``value`` (None if never)."""
    idx = np.flatnonzero(history["train_loss"] <= value)
    return int(history.steps[idx[0]]) if len(idx) else None


def reference_loss(history, last: int = 5) -> float:
    """A run's final training loss, averaged over its last ``last`` evaluations (one noisy
    evaluation should not set the bar)."""
    return float(np.mean(history["train_loss"][-last:]))


def shaping_summary(result: Shaping, reference: str = "p = 0") -> list[dict]:
    """Per run: final loss, and steps to reach the reference run's final loss (DynMuon's
    measure: how much sooner a run gets where Muon ends up). ``saved`` is the fraction of the
    reference's steps saved (negative: more steps), None when a run never gets there."""
    ref = result.runs.get(reference)
    target = reference_loss(ref) if ref is not None and not ref.diverged else None
    ref_steps = first_at_or_below(ref, target) if target is not None else None
    rows = []
    for name, h in result.runs.items():
        s = first_at_or_below(h, target) if target is not None and not h.diverged else None
        rows.append(dict(update=name, final_loss=None if h.diverged else reference_loss(h),
                         status=h.status, steps_to_reference=s,
                         saved=None if s is None or not ref_steps else 1 - s / ref_steps))
    return rows


EARLY_STEP = 8  # "early" in the shaping experiment: the first evaluation at or after this step


def loss_at_step(history, step: int = EARLY_STEP) -> float:
    """Training loss at the first evaluation at or after ``step`` (the last one if none)."""
    steps = np.asarray(history.steps)
    i = int(np.searchsorted(steps, step))
    return float(history["train_loss"][min(i, len(steps) - 1)])


def early_and_late(result: Shaping) -> dict:
    """The fixed-p runs' loss early (:func:`loss_at_step`) and at the end
    (:func:`reference_loss`), keyed by p: what "positive p helps early, negative p late" is
    about."""
    runs = {float(k[4:]): h for k, h in result.runs.items() if k.startswith("p = ")}
    return dict(early={p: loss_at_step(h) for p, h in runs.items()},
                late={p: reference_loss(h) for p, h in runs.items()})


def shaping_runs(by_lr: dict[str, ShapingRate]) -> dict[str, ShapingRate]:
    """A precomputed shaping file's rates (:attr:`ShapingFile.by_lr`) with their first seed's
    runs as ``History`` objects (each with its ``by_seed`` losses as stored)."""
    return {lr: replace(r, runs={k: T.History.from_dict(h) for k, h in r.runs.items()})
            for lr, r in by_lr.items()}


def shaping_order(early: dict, late: dict, schedule: float | None, muon: float | None) -> dict:
    """Section 5's picture, checked on one run's losses keyed by p (``early``: at step
    :data:`EARLY_STEP`; ``late``: final) and the schedule's and Muon's final
    losses: ``early`` — a positive p lowest, the most negative p highest, Muon in between;
    ``late`` — the order reversed at its ends: the most negative p ends lowest, the largest p
    highest (between them the order need not be strict: on the cpu runs p = −0.25 and Muon
    end within a hair of each other on one seed); ``schedule`` — the schedule ends below
    Muon."""
    ps = sorted(early)
    pos = [p for p in ps if p > 0]
    ok_early = (bool(pos) and min(early[p] for p in pos) < early[0.0] < early[ps[0]]
                and early[ps[0]] == max(early.values()))
    fin = [late[p] for p in ps]
    ok_late = None not in fin and fin[0] == min(fin) and fin[-1] == max(fin) and fin[0] < fin[-1]
    return dict(early=ok_early, late=ok_late,
                schedule=schedule is not None and muon is not None and schedule < muon)


# ================================================================ what each section glues


def load_shaping(name: str = "spectral_shaping"):
    """The precomputed shaping runs, ``{lr: ShapingRate}`` with ``History`` runs, and the
    provenance."""
    shaped, prov = results.load(name, as_=RECORDS[name])
    return shaping_runs(shaped.by_lr), prov


# ================================================================ norms per role


def run_roles(seed: int | None = None, draws: int = 200, shape=(64, 32)) -> Roles:
    """:func:`~.roles.steepest_table` on a power-law gradient of ``shape`` for each of the claims'
    seeds (the page's seed and the two after it): ``by_seed``, ``{seed: table}``."""
    return Roles(by_seed={s: steepest_table(random_matrix(*shape, "power law", seed=s), draws=draws,
                                            seed=s) for s in claim_seeds(seed)})



# ================================================================ precompute


def precompute_plan(profile: str | None = None) -> units.Plan:
    """The chapter's static figures as units: timing against size, the lr sweeps, the memory
    at each α and spectral shaping at each learning rate. Results go to ``data/`` (or to
    ``$DYNAMICS_RESULTS_DIR``)."""
    from ..plots import rounded

    p = units.Plan("spectral_optimizers", profile)
    note = {"gpu": "GPU scale.", "cpu": "CPU scale (no GPU at hand): matrices to 2048, MLP width 64."}.get(
        p.profile, "Smoke scale.") + f" {torch.get_num_threads()} CPU thread(s)."
    command = f"python -m dynamics_ops.precompute spectral_optimizers --profile {p.profile}"

    def output(name, assemble, config, tolerance=1e-6):
        p.output(name, lambda parts: rounded(assemble(parts)), config=config, command=command,
                 note=note, tolerance=tolerance)

    sizes = timing_sizes(p.profile)
    p.unit("timing", partial(_timing_unit, sizes), config=dict(sizes=sizes))
    output("spectral_timing", lambda parts: parts["timing"], dict(sizes=sizes), tolerance=None)  # timings
    cfg = PracticeConfig.for_profile(p.profile)
    for s in p.grid(_seeds(cfg)):  # the first seed's sweep is the slider; each one a claim's
        p.unit(_seeded("practice", s, cfg), partial(_practice_unit, cfg.replace(seed=s)),
               config=cfg.replace(seed=s))
    output("spectral_practice", partial(_practice_file, cfg.seed), cfg)
    mcfg = MemoryConfig.for_profile(p.profile)
    for a in p.grid([0.5, 1.0, 1.5, 2.0]):
        p.unit(f"memory {a:g}", partial(run_memory, mcfg.replace(alpha=a)), config=mcfg.replace(alpha=a))
    output("spectral_memory", lambda parts: {k.split()[-1]: v for k, v in parts.items()}, mcfg)
    scfg = ShapingConfig.for_profile(p.profile)
    for s in p.grid(_seeds(scfg)):
        for lr in p.grid(scfg.lrs):
            c = scfg.replace(seed=s)
            p.unit(_seeded(f"shaping {lr:g}", s, scfg), partial(_shaping_unit, c, lr),
                   config=dict(c.to_dict(), lr=lr))
    output("spectral_shaping", partial(_shaping_file, scfg.seed), scfg)
    return p


def _seeds(cfg) -> list[int]:
    """The seeds a precomputed file holds: the config's seed and the ``claim_seeds - 1`` after."""
    return list(range(cfg.seed, cfg.seed + cfg.claim_seeds))


def _seeded(name: str, seed: int, cfg) -> str:
    """A unit's name: the first seed's keeps its plain name (the figure's run)."""
    return name if seed == cfg.seed else f"{name} seed {seed}"


def _seed_of(name: str, first: int) -> int:
    return int(name.split(" seed ")[1]) if " seed " in name else first


def _practice_file(first: int, parts: dict) -> dict:
    """The first seed's sweeps (the slider) and, per seed, the steps each swept rate took to
    the target (None: never), which the claims read."""
    out = dict(parts["practice"])
    out["reached"] = {str(_seed_of(k, first)): {
        name: {lr: steps_to(T.History.from_dict(h), r["target"]) for lr, h in runs.items()}
        for name, runs in r["sweeps"].items()} for k, r in parts.items()}
    return out


def _shaping_file(first: int, parts: dict) -> dict:
    """Per learning rate: the first seed's runs (the slider) and, per seed, each run's loss
    at step :data:`EARLY_STEP` and its final loss (:func:`reference_loss`; None: diverged)."""
    out = {}
    for k, r in parts.items():
        lr, seed = k.split(" seed ")[0].split()[-1], _seed_of(k, first)
        runs = {n: T.History.from_dict(h) for n, h in r["runs"].items()}
        row = out.setdefault(lr, {"by_seed": {}})
        if seed == first:
            row.update(r)
        row["by_seed"][str(seed)] = {n: dict(
            early=None if h.diverged else loss_at_step(h),
            final=None if h.diverged else reference_loss(h)) for n, h in runs.items()}
    return {lr: dict(row, by_seed=row.pop("by_seed")) for lr, row in out.items()}


def _timing_unit(sizes) -> list[dict]:
    on_gpu = runtime.get_device().type == "cuda"
    timing = time_orthogonalization(sizes, dtypes=(torch.float32, torch.bfloat16) if on_gpu
                                    else (torch.float32,))
    return [row.to_dict() for row in timing.rows]


def _practice_unit(cfg: PracticeConfig) -> dict:
    res = run_practice(cfg, teaching_fp32=False, bars=False)
    return dict(sweeps={k: {str(lr): h.to_dict() for lr, h in v.items()}
                        for k, v in res.sweeps.items()},
                best=res.best, target=res.target, data=res.data)


def _shaping_unit(scfg: ShapingConfig, lr: float) -> dict:
    r = run_shaping(scfg, default_data(), lr=lr, bars=False)
    return dict(runs={k: h.to_dict() for k, h in r.runs.items()}, schedule=r.schedule, lr=lr)

