"""The gpu plan: what the book's gpu profile needs, measured without a GPU.

Every chapter's notebook and ``precompute("gpu")`` run as a dry run on this machine (gpu sizes,
``DYNAMICS_DRY_RUN`` steps per training, offline stand-ins for MNIST / CIFAR-10) with a
:mod:`dynamics.ledger`; :func:`plan` turns a ledger into peak memory and time on a T4 and an
H100 (see :data:`GPUS` for the assumptions). ``python -m dynamics.bench gpu`` prints it
(:func:`dynamics.bench.bench_gpu`).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .results import ROOT

__all__ = ["CUDA_CONTEXT", "GPUS", "dry_run_notebook", "dry_run_precompute", "estimate",
           "peak_bytes", "plan", "plan_line", "dry_run_all", "unit_seconds", "unit_plan"]

CUDA_CONTEXT = 0.5e9  # bytes CUDA, cuBLAS and PyTorch's kernels take before any tensor

# name: (peak float32 matmul FLOP/s, fraction of it the book's small matmuls achieve, seconds
# per dispatched op). Peaks from NVIDIA's data sheets: T4 8.1 TFLOP/s float32 (Turing has no
# TF32); H100 SXM 495 TFLOP/s dense TF32 (setup turns TF32 on; an A100's is 156). The book's
# matmuls are small (hundreds to a few thousand wide), far from peak: 50% on the T4, 20% on
# the H100, whose tensor cores starve on them. Each op also costs a launch and PyTorch's
# eager dispatch, 10 us on Colab's slow host CPU, 5 us on a workstation: for small models
# this term, not FLOPs, sets the time.
GPUS = {"T4": (8.1e12, 0.5, 10e-6), "A100": (156e12, 0.25, 6e-6), "H100": (495e12, 0.2, 5e-6)}


# ----------------------------------------------------------------------------- gpu plan


def _chapter_env(chapter: str, out: Path, steps: int, what: str, device: str = "cpu") -> dict:
    return dict(os.environ, DYNAMICS_PROFILE="gpu", DYNAMICS_DRY_RUN=str(steps),
                DYNAMICS_DEVICE=device, DYNAMICS_PROGRESS="0",
                DYNAMICS_RESULTS_DIR=str(out / "results" / chapter),
                DYNAMICS_LEDGER=str(out / f"{chapter}.{what}.jsonl"),
                PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "lib"), os.environ.get("PYTHONPATH")])))


def _error(text: str, limit: int = 1500) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


def dry_run_notebook(chapter: str, out: Path, steps: int = 2, timeout: int = 900,
                     device: str = "cpu") -> dict:
    """Execute ``chapters/<chapter>.ipynb`` at the gpu profile's sizes on the CPU with ``steps``
    steps per training, results to ``out``, its ledger beside them, within ``timeout`` seconds
    for the whole notebook. Returns ok, seconds, error."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = ROOT / "chapters" / f"{chapter}.ipynb"
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    try:
        left = lambda cell: max(1, int(start + timeout - time.perf_counter()))  # noqa: E731
        NotebookClient(nb, timeout_func=left, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}
                       ).execute(env=_chapter_env(chapter, out, steps, "notebook", device))
        return dict(ok=True, seconds=time.perf_counter() - start, error="")
    except CellExecutionError as err:
        return dict(ok=False, seconds=time.perf_counter() - start, error=_error(str(err)))
    except Exception as err:  # noqa: BLE001 - a timeout or a dead kernel is a result to report
        return dict(ok=False, seconds=time.perf_counter() - start, error=f"{type(err).__name__}: {err}")


def dry_run_precompute(chapter: str, out: Path, steps: int = 2, timeout: int = 900,
                       device: str = "cpu") -> dict:
    """``python -m dynamics.precompute <chapter> --profile gpu`` as a dry run (results to ``out``)."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "dynamics.precompute", chapter, "--profile", "gpu"],
                              env=_chapter_env(chapter, out, steps, "precompute", device), cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(ok=False, seconds=time.perf_counter() - start, error=f"timed out after {timeout} s")
    return dict(ok=done.returncode == 0, seconds=time.perf_counter() - start,
                error="" if done.returncode == 0 else _error(done.stdout + done.stderr))


def _work(e: dict) -> tuple[float, float]:
    """A ledger entry's FLOPs and dispatched ops over the full run: its planned steps and
    evaluations, times the grid axes a dry run cut (``repeats``: more calls; ``widen``: more
    models in the same batched call, so more FLOPs but not more ops)."""
    repeats, widen = e.get("repeats", 1.0), e.get("widen", 1.0)
    flops = e["planned_steps"] * e["step_flops"] + e["planned_evals"] * e["eval_flops"]
    ops = e["planned_steps"] * e["step_ops"] + e["planned_evals"] * e["eval_ops"]
    return repeats * widen * flops, repeats * ops


def estimate(entries: list[dict], gpu: str) -> float:
    """Seconds the ledger's trainings take at full length on ``gpu`` (see :data:`GPUS`):
    FLOPs at the achieved rate plus ops at the per-op cost."""
    peak, achieved, per_op = GPUS[gpu]
    return sum(flops / (peak * achieved) + ops * per_op for flops, ops in map(_work, entries))


def peak_bytes(e: dict) -> float:
    """A ledger entry's peak device memory at full size: a batched call the dry run narrowed
    holds ``widen`` times the models (their parameters, state, activations), the same data."""
    return e["data_bytes"] + (e["peak_bytes"] - e["data_bytes"]) * e.get("widen", 1.0)


def plan(entries: list[dict]) -> dict:
    """Peak bytes (the largest training's, plus the CUDA context) and seconds per GPU."""
    peak = max((peak_bytes(e) for e in entries), default=0) + CUDA_CONTEXT
    out = dict(peak_bytes=peak, trainings=len(entries),
               flops=sum(flops for flops, _ in map(_work, entries)))
    out.update({gpu: estimate(entries, gpu) for gpu in GPUS})
    per_unit = unit_seconds(entries)
    if per_unit:  # a precompute's units (dynamics.units): the longest one, per GPU
        out["units"] = len(per_unit)
        out["unit"] = {gpu: max(u[gpu] for u in per_unit.values()) for gpu in GPUS}
        out["unit_name"] = max(per_unit, key=lambda n: per_unit[n]["T4"])
    return out


def unit_seconds(entries: list[dict]) -> dict:
    """Each precompute unit the dry run ran (:mod:`dynamics.units`): ``{name: {gpu:
    seconds}}``, one unit's own (a unit at a grid's end stands for ``unit_repeats`` of them)."""
    found: dict = {}
    for e in entries:
        if e.get("unit"):
            found.setdefault(e["unit"], []).append(e)
    return {name: {gpu: estimate(es, gpu) / es[0]["unit_repeats"] for gpu in GPUS}
            for name, es in found.items()}


def unit_plan(entries: list[dict]) -> dict:
    """A precompute's row of ``data/precompute_plan.json`` (:func:`dynamics.units.read_unit_plan`)
    from its dry run's ledger: each unit's seconds per GPU, and the whole precompute's."""
    rnd = lambda d: {gpu: round(v, 1) for gpu, v in d.items()}  # noqa: E731
    return dict(units={n: rnd(v) for n, v in unit_seconds(entries).items()},
                total=rnd({gpu: estimate(entries, gpu) for gpu in GPUS}))


def plan_line(chapter: str, p: dict, what: str = "plan") -> str:
    minutes = lambda s: f"{s / 60:.0f}" if s >= 60 else f"{s / 60:.1f}"  # noqa: E731
    line = (f"gpu {what} {chapter}: peak {p['peak_bytes'] / 1e9:.1f} GB, about {minutes(p['T4'])} min "
            f"on T4, about {minutes(p['H100'])} min on H100")
    if "unit" in p:
        line += (f"; its longest unit ({p.get('unit_name', '?')}) about {minutes(p['unit']['T4'])} "
                 f"min on T4, {minutes(p['unit']['H100'])} min on H100")
    return line


# The dry run's device: the stand-in (dynamics.standin), which takes a GPU's code paths (fused
# optimizers, device generators) and refuses what CUDA refuses, so that the gpu-size run of
# every notebook and precompute also proves where each tensor is.
DRY_RUN_DEVICE = "standin"


def dry_run_all(chapters, out: Path, steps: int = 2, workers: int = 2, timeout: int = 900,
                device: str = DRY_RUN_DEVICE) -> dict:
    """Every chapter's notebook and precompute as gpu dry runs, ``workers`` at a time (each
    trains on one thread), on ``device`` (``"standin"``: CUDA's placement rules, on the CPU):
    ``{(chapter, "notebook" | "precompute"): {ok, seconds, error}}``, ledgers in ``out``."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(c, w, fn) for c in chapters
            for w, fn in (("notebook", dry_run_notebook), ("precompute", dry_run_precompute))]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {(c, w): pool.submit(fn, c, out, steps, timeout, device) for c, w, fn in jobs}
        return {key: f.result() for key, f in futures.items()}
