"""The work estimate of :mod:`dynamics_ops.gpuwork` on a known answer: the real count.

    python -m dynamics_ops.gpuwork --check --full-grids            # every chapter
    python -m dynamics_ops.gpuwork --check --full-grids grokking   # one

At the smoke profile's sizes a chapter notebook runs in full on the stand-in device in
minutes, so the count the estimate stands for can be made: the notebook is counted in two dry
runs (:data:`~dynamics_ops.gpuwork.CAPS`) and estimated as the gpu profile's is, then counted
again in a real run of every step, and the two are compared cell by cell. The gpu_sizes tier
(``tests/ops/test_gpu.py``) holds each chapter's estimated launches and FLOPs within
[0.5, :data:`CHECK_TOL`] times the real count.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from . import gpuwork
from .gpuwork import CAPS, COMPARED, KEYS, _minus

CHECK_TOL = 1.1  # a cell, or a chapter, estimated at more than this times its real count is off
# Chapters whose runs stop early, counted at their whole budget (assumption 4 of gpuwork): the
# estimate is over the real count by how early they stop, which no dry run can know.
EARLY_STOPS = {"grokking": "the ⊥Grad and strong-decay runs of the claims' seeds stop once "
                           "they grok (stop_at_grok); the estimate counts their whole budget"}
EARLY_TOL = 1.5  # how far over such a chapter may be (measured at smoke: 1.25x launches, 1.32x FLOPs)


def counted(events: list[dict]) -> dict:
    """Per cell, the work a run (a real one: no estimate) counted: ``{cell: dict(launches=,
    host_reads=, flops=, bytes=)}``."""
    marks = [e for e in events if e["kind"] in ("cell", "end")]
    return {a["cell"]: dict(zip(KEYS, _minus(b["at"][0], a["at"][0])))
            for a, b in zip(marks, marks[1:])}


def check_chapter(chapter: str, profile: str = "smoke", timeout: int = 1200,
                  keep: Path | None = None, full_grids: bool = False) -> list[dict]:
    """The estimate tested on a known answer: ``chapter``'s notebook at ``profile``'s sizes,
    estimated from the dry runs at ``CAPS`` as :func:`~dynamics_ops.gpuwork.count_chapter` does, and counted
    in a real run of every step. Per code cell: ``estimate`` and ``real`` (each
    ``{launches, host_reads, flops, bytes}``), and the cell's first line. At the smoke
    profile the real run takes minutes, so the estimate that sizes the gpu profile is
    checked against the count it stands for, cell by cell (``--check``)."""
    runs, sources = {}, {}
    for cap in (*CAPS, None):
        grids = "-full" if full_grids and cap else ""
        kept = Path(keep) / f"{chapter}-{profile}-{cap or 'real'}{grids}.json" if keep else None
        if kept is not None and kept.exists():
            runs[cap], sources = json.loads(kept.read_text())
            sources = {int(k): v for k, v in sources.items()}
        else:
            runs[cap], sources = gpuwork.count_notebook(
                chapter, cap, timeout, profile=profile, full_grids=full_grids and cap is not None)
            if kept is not None:
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_text(json.dumps([runs[cap], sources]))
    est, real = gpuwork.estimate({cap: runs[cap] for cap in CAPS}), counted(runs[None])
    return [dict(chapter=chapter, cell=cell, source=sources[cell], aligned=est[cell]["aligned"],
                 estimate={k: est[cell][k] for k in KEYS},
                 real=real.get(cell, dict.fromkeys(KEYS, 0)))
            for cell in sorted(est) if cell in sources]


def over_counts(rows: list[dict], tol: float | None = None, share: float = 0.01) -> list[str]:
    """The cells of :func:`check_chapter`'s rows whose estimate is more than ``tol`` (default
    :data:`CHECK_TOL`) times their real launches, host reads or FLOPs, among the cells that
    hold at least ``share`` of the chapter's real count of it (a figure's few reads can follow
    the data: assumption 4). The table's floors are floors only if this is empty."""
    tol = CHECK_TOL if tol is None else tol
    out = []
    for key in COMPARED:
        total = sum(r["real"][key] for r in rows)
        for r in rows:
            if max(r["real"][key], r["estimate"][key]) >= share * total and off(r, key) > tol:
                out.append(f"{r['chapter']} cell {r['cell']} ({r['source']!r}): {key} estimated "
                           f"{r['estimate'][key]:,}, counted {r['real'][key]:,} ({off(r, key):.2f}x)")
    return out


def off(row: dict, key: str) -> float:
    """A checked cell's estimate over its real count for ``key`` (1.0 when both are 0; inf
    when only the real count is 0)."""
    e, r = row["estimate"][key], row["real"][key]
    return 1.0 if e == r else (math.inf if r == 0 else e / r)


def report(chapters, keep: Path | None = None, full_grids: bool = False) -> None:
    """Print each chapter's cells, estimate over real count, the cells off by more than
    :data:`CHECK_TOL`, and a table of the chapters' factors."""
    worst, summary = 1.0, ["| chapter | launches | FLOPs | host reads |", "|---|---:|---:|---:|"]
    for chapter in chapters:
        rows = check_chapter(chapter, keep=keep, full_grids=full_grids)
        for r in rows:
            ratios = {k: off(r, k) for k in COMPARED}
            spread = {k: max(x, 1 / x) if x > 0 else math.inf for k, x in ratios.items()}
            bad = [k for k, x in spread.items() if x > CHECK_TOL]
            worst = max(worst, *spread.values())
            print(f"{chapter} cell {r['cell']:>3}: " + "  ".join(
                f"{k} {r['estimate'][k]:,}/{r['real'][k]:,}" for k in COMPARED)
                + f"  {'OFF ' + ','.join(bad) if bad else 'ok'}  {r['source']}", flush=True)
        totals = {k: (sum(r["estimate"][k] for r in rows), sum(r["real"][k] for r in rows))
                  for k in COMPARED}
        print(f"{chapter} in all: " + "  ".join(f"{k} {e:,}/{r:,} ({e / max(r, 1):.2f}x)"
                                                for k, (e, r) in totals.items()))
        for line in over_counts(rows):
            print("# over-count: " + line)
        summary.append(f"| {chapter} | " + " | ".join(
            f"{e / max(r, 1):.2f}x" for e, r in (totals[k] for k in
                                                  ("launches", "flops", "host_reads"))) + " |")
    print("\nEstimated over counted, per chapter:\n" + "\n".join(summary))
    print(f"# largest factor between estimate and real count in a cell: {worst:.3g}")
