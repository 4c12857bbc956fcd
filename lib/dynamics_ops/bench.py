"""Benchmarks that mean something on a noisy machine, and the GPU measurements.

    python -m dynamics_ops.bench sweep          # train_many batched vs one model after another
    python -m dynamics_ops.bench grokking       # the grokking recipe vs a bare PyTorch loop
    python -m dynamics_ops.bench lottery        # an IMP curve vs as many bare trainings
    python -m dynamics_ops.bench weight_decay   # the decoupling grid vs as many bare trainings
    python -m dynamics_ops.bench together       # weight decay's claim runs together vs one at a time
    python -m dynamics_ops.bench spectral       # Newton–Schulz vs SVD
    python -m dynamics_ops.bench gpu --measure  # with CUDA: each notebook run at gpu, measured
                                            # (data/gpu_measured.json with --write)
    python -m dynamics_ops.bench gpuwork        # each notebook's gpu-profile work, counted on the CPU
                                            # (dynamics_ops.gpuwork; data/gpu_work.csv with --write)
    python -m dynamics_ops.bench kernels        # launches per step against the code before
                                            # issue 41's item 3, and CPU seconds (dynamics_ops.kernels)
    python -m dynamics_ops.bench notebooks      # each chapter notebook's wall time (smoke, cpu) + book build
    python -m dynamics_ops.bench panels         # each panel clicked: seconds to its first result and to done

``--write`` records the notebooks' times in ``data/live_cost.csv``, which each chapter reads
to say how long its cells take (:func:`dynamics.book.live_cost`): ``notebooks --no-book
--write`` the measured smoke and cpu times, ``gpu --measure --write`` the measured gpu times.
Nothing here estimates a GPU's time: a GPU figure is one a GPU measured.

Seconds on a shared machine swing 2-3x from one run to the next, so every benchmark prints,
beside its seconds, a ratio against the plain limit of the same work measured in the same
run (a bare PyTorch loop, or the other strategy): the ratio is what to compare across runs.
Every benchmark runs under :func:`dynamics.setup` (the book's threads and device) and takes
under 3 minutes on two CPU cores; ``--tiny`` runs each at a toy size (the tests do).
"""
from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dynamics import CHAPTERS, book
from dynamics_toolchain.pages import BOOK_COPY_IGNORE
from dynamics.results import ROOT


def _setup():
    """The book's runtime (threads, device), as a chapter has it."""
    from dynamics import setup

    rt = setup(quiet=True)
    print(f"# {rt.report()}; torch threads {torch.get_num_threads()}", flush=True)
    return rt


def _sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def _timed(fn):
    """(seconds, result) of ``fn()``, synchronized on CUDA."""
    from dynamics.runtime import get_device

    _sync(get_device())
    start = time.perf_counter()
    out = fn()
    _sync(get_device())
    return time.perf_counter() - start, out


def bare_train(model, x, y, optimizer, steps: int, batch_size: int | None = None, seed: int = 0,
               loss=F.cross_entropy, after=None, eval_every: int | None = None, eval_on=()) -> None:
    """The plain limit: forward, loss, backward, step (and ``after()``, e.g. a pruning mask);
    no history, no divergence check; with ``eval_every``, a bare forward pass over each
    tensor of ``eval_on`` (and its loss, for an ``(x, y)`` pair) at step 0 and every
    ``eval_every`` steps (an evaluation's work)."""
    n = len(x)
    gen = torch.Generator(device=x.device).manual_seed(seed)
    perm, pos = None, n

    def evaluate():
        with torch.no_grad():
            for xe in eval_on:
                if isinstance(xe, tuple):  # (x, y): the loss as well as the predictions
                    xe, ye = xe
                    out = model(xe)
                    loss(out, ye), out.argmax(1)
                else:
                    model(xe).argmax(1)

    for step in range(steps):
        if eval_every and step % eval_every == 0:
            evaluate()
        if batch_size is None or batch_size >= n:
            xb, yb = x, y
        else:
            if pos + batch_size > n:
                perm, pos = torch.randperm(n, device=x.device, generator=gen), 0
            idx = perm[pos:pos + batch_size]
            pos += batch_size
            xb, yb = x[idx], y[idx]
        value = loss(model(xb), yb)
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()
        if after is not None:
            after()
    if eval_every:
        evaluate()


# ----------------------------------------------------------------------------- sweep

SWEEP_CASES = {  # name: (MLP width, training samples, steps, batch size); 2 hidden layers, MNIST-1D
    "small": (64, 1000, 100, 100),  # mini-batches, as the book's grids train (weight decay, lottery)
    "medium": (256, 4000, 12, None),  # full batch: matmul-bound, where batching cannot pay on a CPU
}


def sweep_case(size: str = "small", k: int = 16, steps: int | None = None, tiny: bool = False) -> dict:
    """K MLPs of one size (a grid of learning rates, weight decays and seeds), 10 evaluations,
    trained by ``train_many`` batched and one after another (``sequential``: ``train`` itself),
    each timed once in this run, after a warm-up of both."""
    from dynamics import data as data_mod
    from dynamics import models
    from dynamics.runtime import get_device
    from dynamics.sweep import choose_strategy, grid, train_many
    from dynamics.train import Recipe

    width, n_train, default_steps, batch_size = SWEEP_CASES[size]
    steps = steps or default_steps
    if tiny:
        width, n_train, steps, k = 8, 100, 4, 2
    device = get_device()
    d = data_mod.mnist1d(n_train, 500, seed=0, device=device)
    base = grid(lr=np.geomspace(1e-4, 1e-2, 4).tolist(), weight_decay=[0.0, 0.01, 0.1, 1.0])
    configs = [dict(base[i % len(base)], seed=i) for i in range(k)]

    def model_fn(cfg):
        return models.MLP(d.input_dim, width, 2, d.n_classes)

    recipe = Recipe(steps, batch_size=batch_size, eval=max(1, steps // 10))
    kw = dict(recipe=recipe, bars=False)
    for strategy in ("sequential", "batched"):  # warm up both code paths (lazy init in torch)
        train_many(model_fn, d, configs[:2], strategy=strategy, **dict(kw, recipe=recipe.replace(steps=2)))
    out = dict(size=size, k=k, steps=steps, batch_size=batch_size, device=device.type,
               auto=choose_strategy(model_fn({}), d, batch_size, k))
    for strategy in ("batched", "sequential"):
        out[strategy], _ = _timed(lambda: train_many(model_fn, d, configs, strategy=strategy, **kw))
    out["batched_speedup"] = out["sequential"] / out["batched"]
    # what train_many does by default: batched where auto picks it, else sequential (1x)
    out["speedup"] = out["batched_speedup"] if out["auto"] == "batched" else 1.0
    return out


def bench_sweep(tiny: bool = False) -> list[dict]:
    """``sweep speedup: X.Xx (K=16, small, cpu)``: sequential seconds over those of
    ``train_many``'s default (``auto``: batched, or sequential where batching does not pay on
    a CPU) for K = 16 MLPs small (width 64, 1,000 samples, 100 steps of mini-batches of 100,
    as the book's grids train) and medium (width 256, 4,000 samples, 12 full-batch steps, where
    the matmuls are large enough to keep a CPU busy), and K = 64 small ones on CUDA. Targets: at least 1.5x small and 0.9x
    medium on CPU, 10x for K = 64 on a GPU. The forced batched time is printed beside."""
    rt = _setup()
    cases = [("small", 16), ("medium", 16)] + ([("small", 64)] if rt.device.type == "cuda" else [])
    rows = []
    for size, k in cases[:1] if tiny else cases:
        r = sweep_case(size, k, tiny=tiny)
        rows.append(r)
        print(f"sweep speedup: {r['speedup']:.1f}x (K={r['k']}, {size}, {r['device']}): auto picks "
              f"{r['auto']}; batched {r['batched']:.1f} s, sequential {r['sequential']:.1f} s "
              f"(batched/sequential speedup {r['batched_speedup']:.2f}x) for {r['steps']} steps each, "
              f"{'full batch' if r['batch_size'] is None else 'batch %d' % r['batch_size']}", flush=True)
    return rows


# ----------------------------------------------------------------------------- grokking


def bench_grokking(tiny: bool = False) -> dict:
    """The MLP grokking recipe (p = 59, 50% train, AdamW lr 3e-3, wd 1, full batch) run by
    ``grokking.run`` until it groks, against a bare PyTorch loop of the same model, data,
    optimizer and step count with no evaluations (target: library/bare at most 1.3x).
    Prints the steps to grok (1,600 with seed 0 on 2026-11-23)."""
    from dynamics import grokking as G

    rt = _setup()
    toy = G.GrokConfig(p=11, op="add", train_frac=0.5, model="mlp", width=16, depth=1, lr=3e-3,
                       weight_decay=1.0, steps=20, n_evals=10)
    real = G.GrokConfig(p=59, op="add", train_frac=0.5, model="mlp", width=128, depth=2, lr=3e-3,
                        weight_decay=1.0, steps=5000, n_evals=200)
    for cfg in (toy,) if tiny else (toy, real):  # the toy run first warms up both code paths
        data = G.science.make_data(cfg, 0, rt.device)
        lib, r = _timed(lambda: G.run(cfg, 0, data=data, stop_at_grok=True, bars=False))
        steps = r.history.steps[-1]

        def bare():
            model = G.science.make_model(cfg, 0).to(rt.device)
            opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay,
                                    betas=G.science.ADAM_BETAS[cfg.model])
            bare_train(model, data.x_train, data.y_train, opt, steps)

        plain, _ = _timed(bare)
    out = dict(library=lib, bare=plain, ratio=lib / plain, steps=steps, fit_step=r.fit_step,
               grok_step=r.grok_step, evals=len(r.history))
    print(f"grokking bench: {lib:.1f} s library, {plain:.1f} s bare loop, library/bare "
          f"{out['ratio']:.2f}x ({steps} full-batch steps of MLP {cfg.width}x{cfg.depth} on "
          f"{cfg.op} mod {cfg.p}, {cfg.train_frac:.0%} train; the library made {out['evals']} "
          f"evaluations with the Fourier measure)", flush=True)
    print(f"  fit (train acc > {G.science.FIT_ACC:.0%}) at step {r.fit_step}; grok (test acc > "
          f"{G.science.GROK_ACC:.0%}) at step {r.grok_step}", flush=True)
    return out


# ----------------------------------------------------------------------------- lottery


def _timed_cpu(fn):
    """(wall seconds, this process's CPU seconds, result) of ``fn()``, synchronized on CUDA.
    With one torch thread the CPU seconds are what the work costs a free core: on a shared,
    loaded machine they move far less than the wall clock, which also counts the waits."""
    cpu = time.process_time()
    wall, out = _timed(fn)
    return wall, time.process_time() - cpu, out


def bench_lottery(tiny: bool = False, repeats: int = 2) -> dict:
    """An IMP curve with both controls at every round (``lottery.run_imp``, smoke scale, 4
    rounds, one seed) against the same number of bare trainings of the same network, steps,
    mini-batches and masks, one after another, twice in the same run: with the evaluations
    the chapter's figures and numbers read (at each of the library's evaluation steps, a pass
    over the test set, whose accuracy the curves and the final and early-stopped accuracies
    are, and one over the validation split, whose loss picks the early-stopping step), and
    with no evaluation at all. Targets (issue 43): library/bare at most 1.15x against the
    first and 1.3x against the second. Wall and CPU seconds are printed for each (the ratio
    on CPU seconds is the one to compare on a loaded machine: the book trains on one thread),
    each the least of ``repeats`` measurements taken in turn (library, bare with, bare
    without; one at ``tiny``), so that a burst of load elsewhere does not land on one side."""
    from dynamics import lottery as L

    rt = _setup()
    toy = dict(rounds=1, seeds=1, control_every=1, steps=10, width=16, n_train=200, n_val=40, n_test=100)
    real = dict(rounds=4, seeds=1, control_every=1)
    for over in (toy,) if tiny else (toy, real):  # the toy run first warms up both code paths
        cfg = L.LotteryConfig.for_profile("smoke", **over)
        rounds = cfg.rounds
        data = L.load_data(cfg, device=rt.device)
        res = None
        n = (rounds + 1) + 2 * rounds  # IMP rounds (dense first) + reinit and random-mask controls
        # the library trains on the training set less the validation split, evaluated where it is
        train, x_val, y_val = L.science.split_validation(data, cfg.n_val)
        every = max(1, cfg.steps // cfg.evals)

        def bare(evaluations: bool):
            """The same trainings, pruned ones with their masks applied after each step."""
            masks = [None] + [m for m in res.masks[1:] for _ in range(3)]
            for k, mask in enumerate(masks):
                torch.manual_seed(k)
                model = L.science.make_model(cfg, train).to(rt.device)
                opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
                after = None
                if mask:
                    named = dict(model.named_parameters())
                    pairs = [(named[name], m.to(rt.device)) for name, m in mask[0].items()]
                    after = lambda: [p.data.mul_(m) for p, m in pairs]  # noqa: E731
                bare_train(model, train.x_train, train.y_train, opt, cfg.steps, cfg.batch_size,
                           seed=k, after=after, eval_every=every if evaluations else None,
                           eval_on=((train.x_test, train.y_test), (x_val, y_val)))

        times = {"library": [], "evals": [], "none": []}
        for _ in range(1 if tiny or over is toy else max(1, repeats)):
            *t, res = _timed_cpu(lambda: L.run_imp(cfg, seeds=[0], data=data, bars=False))
            times["library"].append(t)
            times["evals"].append(_timed_cpu(lambda: bare(True))[:2])
            times["none"].append(_timed_cpu(lambda: bare(False))[:2])
    best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in times.items()}
    (lib, lib_cpu), (fig, fig_cpu), (plain, plain_cpu) = best["library"], best["evals"], best["none"]
    out = dict(library=lib, library_cpu=lib_cpu, bare_evals=fig, bare_evals_cpu=fig_cpu,
               bare=plain, bare_cpu=plain_cpu, ratio_evals=lib / fig, ratio=lib / plain,
               ratio_evals_cpu=lib_cpu / fig_cpu, ratio_cpu=lib_cpu / plain_cpu, trainings=n,
               steps=cfg.steps, evals=len(res.eval_steps), repeats=len(times["library"]))
    print(f"lottery bench: {lib:.1f} s library ({lib_cpu:.1f} CPU s) for {n} trainings ({rounds} "
          f"IMP rounds + both controls, {cfg.steps} steps of batch {cfg.batch_size}, MLP "
          f"{cfg.width}x{cfg.depth} on {data.name}, {out['evals']} evaluations each); final "
          f"density {100 * res.density[-1]:.1f}%; each time the least of {out['repeats']}", flush=True)
    print(f"  with the figures' evaluations (test set and validation split at each evaluation "
          f"step): {fig:.1f} s ({fig_cpu:.1f} CPU s) for {n} bare trainings, library/bare "
          f"{out['ratio_evals']:.2f}x (CPU {out['ratio_evals_cpu']:.2f}x; target 1.15x)", flush=True)
    print(f"  without evaluations: {plain:.1f} s ({plain_cpu:.1f} CPU s) for {n} bare trainings, "
          f"library/bare {out['ratio']:.2f}x (CPU {out['ratio_cpu']:.2f}x; target 1.3x)", flush=True)
    return out


# ----------------------------------------------------------------------------- weight decay


def bench_weight_decay(tiny: bool = False) -> dict:
    """The decoupling grids (Adam + L2 and AdamW over learning rates x decays, smoke scale,
    ``weight_decay.run_decoupling``, trained by ``train_many``) against as many bare trainings
    of the same MLP, steps and mini-batches, one after another."""
    from dynamics.weight_decay import experiments as W
    from dynamics.data import mnist1d
    from dynamics.models import MLP

    rt = _setup()
    toy = dict(n_lr=2, n_wd=3, steps=10, width=8, n_train=200)
    for over in (toy,) if tiny else (toy, {}):  # the toy run first warms up both code paths
        cfg = W.DecouplingConfig.for_profile("smoke", **over)
        lib, out = _timed(lambda: W.run_decoupling(cfg, 0, False))
        data = mnist1d(cfg.n_train, 1000, seed=0, device=rt.device)  # the chapter's data (seed 0)
        runs = [(kind, lr, wd) for kind, g in out.grids.items()
                for _ in g.seeds for wd in g.decays for lr in g.lrs]

        def bare():
            for kind, lr, wd in runs:
                torch.manual_seed(0)
                model = MLP(data.input_dim, cfg.width, 2, data.n_classes).to(rt.device)
                o = (torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd) if kind == "adamw"
                     else torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd))
                bare_train(model, data.x_train, data.y_train, o, cfg.steps, cfg.batch_size)

        plain, _ = _timed(bare)
    strategies = {kind: g.strategy for kind, g in out.grids.items()}
    r = dict(library=lib, bare=plain, ratio=lib / plain, trainings=len(runs), steps=cfg.steps,
             strategy=strategies)
    print(f"weight_decay bench: {lib:.1f} s library, {plain:.1f} s for {len(runs)} bare trainings, "
          f"library/bare {r['ratio']:.2f}x (decoupling grids {', '.join(out.grids)}: {cfg.steps} "
          f"steps, batch {cfg.batch_size}, MLP {cfg.width}x2; train_many strategy "
          f"{', '.join(sorted(set(map(str, strategies.values()))))})", flush=True)
    return r


def _together_cases(steps: int, tiny: bool = False, seeds=(0, 1, 2)) -> dict:
    """Weight decay's claims' runs at the cpu profile's sizes, ``steps`` each, on ``seeds``:
    ``{case: (runs, one_at_a_time, together)}``: section 2's (equilibria, their faster
    controls and the symmetry run), section 3's (the clock) and section 4's (without and
    with decay)."""
    import dataclasses

    from dynamics.weight_decay import claims as C
    from dynamics.weight_decay import experiments as W
    from dynamics.weight_decay import together as T

    size = dict(width=16, n_train=300) if tiny else {}
    eq = C.equilibrium_configs("cpu") + C.faster_configs("cpu") + [C.symmetry_config("cpu")]
    spectrum, clock = W.SpectrumConfig.for_profile("cpu"), W.ClockConfig.for_profile("cpu")
    return {
        "section 2": ([(dataclasses.replace(c, steps=steps, **size), s) for s in seeds for c in eq],
                      lambda runs: [W.run_equilibrium(c, s, bars=False) for c, s in runs],
                      lambda runs: T.run_equilibrium_many(runs, bars=False)),
        "section 3": ([(dataclasses.replace(clock, steps=steps, **size), s) for s in seeds],
                      lambda runs: [W.run_clock(c, s, bars=False) for c, s in runs],
                      lambda runs: T.run_clock_many(runs[0][0], [s for _, s in runs], bars=False,
                                                    together=True)),
        "section 4": ([(dataclasses.replace(spectrum, steps=steps, **size), s) for s in seeds],
                      lambda runs: [W.run_spectrum(c, s, bars=False) for c, s in runs],
                      lambda runs: T.run_spectrum_many(runs, bars=False, together=True))}


def _together_lengths(case: str, tiny: bool = False) -> tuple[int, int]:
    """The two lengths ``bench together`` counts ``case``'s launches over: lengths with as
    many evaluations, so that they cancel in the difference (sections 2 and 3 evaluate a
    fixed number of times; section 4 at log-spaced steps, as many at 250 as at 500; a test
    checks it on the runners' histories). ``tiny``: a toy run that proves the bench runs, its
    counts not exact."""
    return (12, 24) if tiny else (250, 500) if case == "section 4" else (40, 80)


def bench_together(tiny: bool = False) -> list[dict]:
    """Weight decay's claims' runs on three seeds (section 2: 5 runs a seed; section 3: the
    clock's 4, already batched within a seed; section 4: 2 a seed; the cpu profile's sizes)
    trained one at a time (``run_equilibrium``, ``run_clock`` per seed, ``run_spectrum``) and
    together (:mod:`dynamics.weight_decay.together`: one batched step
    per optimizer): launches per step counted on the stand-in device (the difference of two
    lengths over their steps: setup cancels), and this process's CPU seconds (what the work
    costs a free core; the wall clock also counts a shared machine's waits), the two ways
    taking turns, in one run."""
    from dynamics import runtime

    from . import gpuwork, standin

    timed = 12 if tiny else 300
    out = []
    for case in _together_cases(timed, tiny):
        short, long = _together_lengths(case, tiny)
        launches = {}
        for way in (1, 2):
            totals = []
            for steps in (short, long):
                runs, *ways = _together_cases(steps, tiny)[case]
                with standin.active():
                    runtime.setup(profile="cpu", seed=0, quiet=True)  # the stand-in's cuda
                    with gpuwork.Counter() as c:
                        ways[way - 1](runs)
                totals.append(c.total[0])
            launches[way] = (totals[1] - totals[0]) / (long - short)
        _setup()
        runs, *ways = _together_cases(timed, tiny)[case]
        seconds = {1: [], 2: []}
        for r in range(1 if tiny else 2):
            for way in ((1, 2) if r % 2 == 0 else (2, 1)):
                seconds[way].append(_timed_cpu(lambda: ways[way - 1](runs))[1])
        secs = {way: min(v) for way, v in seconds.items()}
        trainings = len(runs) * {"section 3": 4, "section 4": 2}.get(case, 1)
        row = dict(case=case, trainings=trainings, steps=timed, launches=launches, seconds=secs,
                   launch_ratio=launches[1] / launches[2], ratio=secs[1] / secs[2])
        print(f"together bench, {case}: {trainings} trainings; launches per step "
              f"{launches[1]:,.0f} one at a time, {launches[2]:,.0f} together, "
              f"{row['launch_ratio']:.2f}x; {timed} steps: {secs[1]:.1f} CPU s one at a time, "
              f"{secs[2]:.1f} CPU s together, {row['ratio']:.2f}x (the lesser of "
              f"{len(seconds[1])} turns each)", flush=True)
        out.append(row)
    return out


# ----------------------------------------------------------------------------- spectral


def bench_spectral(tiny: bool = False) -> list[dict]:
    """Newton–Schulz (5 steps) against the exact polar factor by SVD, same matrices, same run
    (``spectral.time_orthogonalization``): how many times cheaper Muon's orthogonalization is."""
    from dynamics.spectral import experiments as S

    rt = _setup()
    sizes = (64,) if tiny else (1024, 2048)
    dtypes = (torch.float32, torch.bfloat16) if rt.device.type == "cuda" else (torch.float32,)
    timing = S.time_orthogonalization(sizes, dtypes=dtypes, device=rt.device)
    for row in timing.rows:
        print(f"spectral bench: n = {row.n}: NS5 {row.ns_float32_s:.3g} s, SVD "
              f"{row.svd_s:.3g} s, SVD/NS5 {row.svd_s / row.ns_float32_s:.1f}x; NS5 vs "
              f"U Vᵀ: rel. error {row.rel_error:.3f}, max|σ−1| {row.max_sigma_error:.3f}",
              flush=True)
    return [row.to_dict() for row in timing.rows]


def write_live_cost(new: list[dict], path=None) -> Path:
    """Merge ``new`` rows into ``data/live_cost.csv``: a row replaces the one with the same
    chapter, profile, how and machine; the others stay. Rows are kept in chapter order."""
    import csv
    import io

    from dynamics.results import write_atomic

    path = Path(path) if path is not None else book.live_cost_path()
    key = lambda r: (r["chapter"], r["profile"], r["how"], r["on"])  # noqa: E731
    rows = {key(r): r for r in (book.read_live_cost(path) if path.exists() else [])}
    for r in new:
        if r["chapter"] not in CHAPTERS or r["how"] != "measured":
            raise ValueError(f"not a live-cost row: {r}")
        rows[key(r)] = dict(r, seconds=round(float(r["seconds"]), 1))
    order = list(CHAPTERS)
    text = io.StringIO()
    out = csv.DictWriter(text, book.LIVE_COST_FIELDS, lineterminator="\n")
    out.writeheader()
    out.writerows(sorted(rows.values(), key=lambda r: (order.index(r["chapter"]), r["profile"],
                                                        r["how"], r["on"])))
    write_atomic(path, text.getvalue())
    return path



def _cost_row(chapter: str, profile: str, seconds: float, how: str, on: str) -> dict:
    import datetime as dt

    command = book.LIVE_COST_COMMANDS[(how, profile)]
    return dict(chapter=chapter, profile=profile, seconds=seconds, how=how, on=on,
                date=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"), command=command)


def measure_gpu(chapters=None, timeout: int = 600, write: bool = False) -> int:
    """On a machine with CUDA: run each chapter notebook at the gpu profile in a fresh kernel,
    at most ``timeout`` wall seconds each (:func:`dynamics_ops.gpumeasure.run_notebook`), and print
    one line per chapter: finished or where it stopped, minutes, peak CUDA memory. Without
    CUDA it says so and returns 2. ``write``:
    the session into ``data/gpu_measured.json`` (with its provenance) and the finished
    notebooks' minutes into ``data/live_cost.csv`` as measured."""
    from . import gpumeasure

    if not torch.cuda.is_available():
        print("gpu --measure needs a CUDA GPU: this machine has none (torch "
              f"{torch.__version__}, torch.cuda.is_available() is False). Run it where a GPU is "
              "(e.g. Colab with a T4).",
              file=sys.stderr, flush=True)
        return 2
    name = torch.cuda.get_device_name(0)
    chapters = list(chapters or CHAPTERS)
    rows, runs, failed = [], [], 0
    for chapter in chapters:
        run = gpumeasure.run_notebook(ROOT / "chapters" / f"{chapter}.ipynb", "gpu", limit=timeout)
        runs.append(run)
        failed += bool(run["error"])
        if run["finished"]:
            rows.append(_cost_row(chapter, "gpu", run["wall_s"], "measured", f"on {name}"))
        print(f"gpu measured {gpumeasure.describe(run)} on {name}", flush=True)
    if write:
        command = "python -m dynamics_ops.bench gpu --measure --write" + (
            f" --chapters {','.join(chapters)}" if chapters != list(CHAPTERS) else "") + (
            f" --timeout {timeout}" if timeout != 600 else "")
        print(f"# wrote the session to {gpumeasure.record(gpumeasure.session(runs, command))}",
              flush=True)
        if rows:
            print(f"# wrote {len(rows)} measured rows to {write_live_cost(rows)}", flush=True)
    return 1 if failed else 0


# ----------------------------------------------------------------------------- notebooks


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def notebook_times(path: Path, profile: str, timeout: int = 1800) -> tuple[float, float]:
    """``(wall, cpu)`` seconds to execute one notebook in a fresh kernel with ``profile``:
    ``cpu`` is the kernel's CPU time (user + system, read when the finished kernel is reaped),
    which on a machine shared with other work is what the notebook costs one free core (the
    book trains on one thread), where the wall time also counts the waits for a core."""
    import nbformat
    from nbclient import NotebookClient

    nb = without_cost_line(nbformat.read(path, as_version=4))
    start, cpu = time.perf_counter(), _children_cpu()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}
                   ).execute(env=dict(os.environ, DYNAMICS_PROFILE=profile, DYNAMICS_PROGRESS="0"))
    return time.perf_counter() - start, _children_cpu() - cpu


def without_cost_line(nb):
    """``nb`` without its cost-line cell (the one that calls ``live_cost``): the line prints
    what this bench measures, so a chapter not yet measured (a new one) cannot print it, and
    printing it costs nothing worth timing."""
    nb.cells = [c for c in nb.cells
                if not (c.cell_type == "code" and "live_cost(" in "".join(c.source))]
    return nb


def notebook_time(path: Path, profile: str, timeout: int = 1800) -> float:
    """Wall seconds to execute one notebook in a fresh kernel with ``profile``."""
    return notebook_times(path, profile, timeout)[0]


def book_time(profile: str = "smoke") -> float:
    """Wall seconds of a full ``jupyter-book build`` (executing every chapter) in a copy."""
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "book"
        shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns(*BOOK_COPY_IGNORE))
        env = dict(os.environ, DYNAMICS_PROFILE=profile)
        start = time.perf_counter()
        build = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(dst),
                                "-W", "-n", "--keep-going"], env=env, capture_output=True, text=True)
        took = time.perf_counter() - start
        if build.returncode:
            raise RuntimeError(f"book build failed (exit {build.returncode}):\n"
                               + (build.stdout + build.stderr)[-4000:])
        return took


def bench_notebooks(profiles=("smoke", "cpu"), build: bool = True, write: bool = False,
                    chapters=None) -> list[dict]:
    """Each chapter notebook's wall and CPU time per profile, one fresh kernel each (and the
    smoke book build). ``write``: the kernel's CPU time into ``data/live_cost.csv``
    (:func:`dynamics.book.live_cost`) as the time on one free core: on a machine shared with
    other work the wall time also counts the waits for a core, and the book trains on one
    thread, so on a machine of its own the notebook's wall time is about its CPU time."""
    if write and (torch.cuda.is_available() or "gpu" in profiles):
        raise ValueError("notebooks --write records the smoke and cpu profiles on a machine "
                         "without CUDA (gpu times: python -m dynamics_ops.bench gpu --measure --write)")
    rows = []
    on = f"as the kernel's CPU time on one {platform.machine()} core"  # "measured as ..."
    for chapter in chapters or CHAPTERS:
        path = ROOT / "chapters" / f"{chapter}.ipynb"
        if path.exists():
            for profile in profiles:
                wall, cpu = notebook_times(path, profile)
                rows.append(_cost_row(chapter, profile, cpu, "measured", on))
                print(f"notebook {chapter}: {wall:.1f} s ({profile}), {cpu:.1f} s of CPU time; "
                      f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    if build:
        print(f"book build: {book_time('smoke'):.1f} s (smoke, all chapters executed)", flush=True)
    if write and rows:
        print(f"# wrote {len(rows)} measured rows to {write_live_cost(rows)}", flush=True)
    return rows


BENCHMARKS = {"sweep": bench_sweep, "grokking": bench_grokking, "lottery": bench_lottery,
              "weight_decay": bench_weight_decay, "together": bench_together,
              "spectral": bench_spectral}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics_ops.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", default="notebooks",
                        help=f"one of {', '.join(BENCHMARKS)}, gpu (with --measure), gpuwork, kernels, "
                             f"notebooks (default), panels, or all (the CPU benchmarks)")
    parser.add_argument("--tiny", action="store_true", help="toy sizes: proves a benchmark runs")
    parser.add_argument("--profiles", default=None,
                        help="notebooks: profiles to time (default smoke,cpu); panels: the one "
                             "profile to click them at (default cpu)")
    parser.add_argument("--no-book", action="store_true", help="notebooks: skip the book build")
    parser.add_argument("--chapters", help="notebooks, gpu: comma-separated chapters (default: all)")
    parser.add_argument("--measure", action="store_true",
                        help="gpu, with CUDA: run each notebook at the gpu profile and print its "
                             "measured minutes and peak memory")
    parser.add_argument("--timeout", type=int, default=600,
                        help="gpu --measure: wall seconds allowed per notebook (then it stops)")
    parser.add_argument("--write", action="store_true",
                        help="notebooks, gpu: record the times in data/live_cost.csv; gpuwork: "
                             "the counts in data/gpu_work.csv")
    args = parser.parse_args(argv)
    name = CHAPTERS.get(args.name, args.name)  # a chapter's name or its theme's
    chapters = args.chapters.split(",") if args.chapters else None
    unknown = sorted(set(chapters or ()) - set(CHAPTERS))
    if unknown:
        parser.error(f"unknown chapters {', '.join(unknown)}; choose from {', '.join(CHAPTERS)}")
    if name == "gpuwork":  # counted, not timed: launches, host reads, FLOPs, bytes per cell
        from . import gpuwork

        return gpuwork.main((["--chapters", ",".join(chapters)] if chapters else [])
                            + (["--write"] if args.write else []))
    if name == "kernels":  # launches per step against the commit before item 3, and CPU seconds
        from . import kernels

        return kernels.main(["--tiny"] if args.tiny else [])
    if (name == "gpu") != args.measure:
        parser.error("the GPU is measured, never estimated: python -m dynamics_ops.bench gpu --measure")
    profiles = [p.strip() for p in (args.profiles or "").split(",") if p.strip()]
    if name == "notebooks":
        bench_notebooks(profiles or ["smoke", "cpu"], not args.no_book, args.write, chapters)
        return 0
    if name == "panels":
        from .panelbench import bench_panels

        if len(profiles) > 1:
            parser.error("panels: one profile (--profiles cpu)")
        bench_panels(chapters or list(CHAPTERS), (profiles or ["cpu"])[0])
        return 0
    if args.measure:
        return measure_gpu(chapters, args.timeout, args.write)
    if name not in BENCHMARKS and name != "all":
        parser.error(f"no benchmark {args.name!r}; choose one of {', '.join(BENCHMARKS)}, gpu "
                     f"--measure, notebooks, all")
    for bench in BENCHMARKS if name == "all" else [name]:
        BENCHMARKS[bench](tiny=args.tiny)
    return 0


if __name__ == "__main__":
    sys.exit(main())
