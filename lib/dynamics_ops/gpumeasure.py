"""Measuring the chapter notebooks on a real GPU (``python -m dynamics_ops.bench gpu --measure``).

Each notebook runs at the gpu profile in a fresh kernel, cell by cell, under a wall-clock
limit, so that one slow notebook cannot eat a short lease on a GPU machine. What comes back
is measured, never estimated: the seconds, how many cells ran (all of them, or where the limit
stopped it), the peak CUDA memory the kernel allocated and reserved, and the failing cell's
traceback when one failed. :func:`record` keeps the runs in ``data/gpu_measured.json`` with
their provenance (GPU, driver, torch and CUDA versions, commit, date, command), one session
after another, so that the README's GPU figures can be set beside what a GPU did.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import subprocess
import time
from pathlib import Path

from dynamics.book import MEASURED, gpu_line, sessions  # noqa: F401 (what the sessions say)
_PEAK = ("import json, torch\n"
         "print('DYNAMICS_PEAK', json.dumps(dict(\n"
         "    allocated=torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None,\n"
         "    reserved=torch.cuda.max_memory_reserved() if torch.cuda.is_available() else None)))")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_notebook(path: Path, profile: str = "gpu", limit: float = 600.0,
                 env: dict | None = None) -> dict:
    """Run one notebook in a fresh kernel at ``profile`` for at most ``limit`` wall seconds.

    Returns ``dict(notebook, wall_s, cells, cells_run, finished, stopped_at_limit, error,
    peak_allocated_bytes, peak_reserved_bytes, sharing)`` (``sharing``: how many other
    notebooks ran on the GPU at the same time; 0 here, one at a time): ``finished`` when every cell ran,
    ``stopped_at_limit`` when the limit interrupted a cell (the kernel is interrupted, not
    killed, so the peak memory is still read; ``peak_error`` says why it could not be), ``error`` the failing cell's traceback (the
    last 3,000 characters) when one raised."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    if limit <= 0:
        raise ValueError(f"limit must be > 0 seconds, got {limit}")
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    client = NotebookClient(nb, timeout=int(limit), kernel_name="python3",
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(path.parent)}})
    run_env = dict(os.environ, **(env or {}), DYNAMICS_PROFILE=profile, DYNAMICS_PROGRESS="0")
    out = dict(notebook=path.stem, cells=len(code), cells_run=0, finished=False,
               stopped_at_limit=False, error=None, peak_allocated_bytes=None,
               peak_reserved_bytes=None, peak_error=None, sharing=0)
    start = time.perf_counter()
    with client.setup_kernel(env=run_env):
        for i in code:
            left = limit - (time.perf_counter() - start)
            if left <= 0:
                out["stopped_at_limit"] = True
                break
            client.timeout = max(1, int(left))
            try:
                client.execute_cell(nb.cells[i], i)
            except CellTimeoutError:
                out["stopped_at_limit"] = True
                break
            except CellExecutionError as err:  # the limit's interrupt arrives as KeyboardInterrupt
                text = _ANSI.sub("", str(err))
                if "KeyboardInterrupt" in text and time.perf_counter() - start >= limit - 1:
                    out["stopped_at_limit"] = True
                else:
                    out["error"] = text[-3000:]
                break
            out["cells_run"] += 1
        out["wall_s"] = round(time.perf_counter() - start, 1)
        out["finished"] = out["cells_run"] == len(code)
        probe = nbformat.v4.new_code_cell(_PEAK)
        nb.cells.append(probe)  # nbclient writes outputs into nb.cells[index]: it must be there
        client.timeout = 60
        try:
            client.execute_cell(probe, len(nb.cells) - 1)
            text = "".join(o.get("text", "") for o in probe.outputs)
            peak = json.loads(text.split("DYNAMICS_PEAK", 1)[1])
            out["peak_allocated_bytes"], out["peak_reserved_bytes"] = peak["allocated"], peak["reserved"]
        except Exception as err:  # noqa: BLE001 - a kernel that cannot answer has no peak
            out["peak_error"] = f"{type(err).__name__}: {err}"[:300]
    return out


def _git_commit(root: Path) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _driver() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def session(runs: list[dict], command: str, note: str = "", gpu: str | None = None) -> dict:
    """One measuring session: its provenance and its runs (:func:`run_notebook`'s dicts)."""
    import torch

    from dynamics import __version__
    from dynamics.results import ROOT

    if gpu is None:
        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return dict(provenance=dict(
        gpu=gpu, driver=_driver(), torch=torch.__version__, cuda=torch.version.cuda,
        dynamics=__version__, commit=_git_commit(ROOT), command=command, note=note,
        date=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")), runs=runs)


def record(entry: dict, path: Path | None = None) -> Path:
    """Append one :func:`session` to ``data/gpu_measured.json`` (a list, oldest first)."""
    from dynamics.results import results_dir, write_atomic

    path = Path(path) if path is not None else results_dir() / MEASURED
    sessions = json.loads(path.read_text()) if path.exists() else []
    if not isinstance(sessions, list):
        raise ValueError(f"{path}: expected a list of measuring sessions")
    sessions.append(entry)
    write_atomic(path, json.dumps(sessions, indent=1) + "\n")
    return path


def describe(run: dict) -> str:
    """One line: ``grokking: finished, 57 cells in 1.98 min, peak 0.12 GB``."""
    known = run.get("cells") is not None and run.get("cells_run") is not None
    where = f" after {run['cells_run']} of {run['cells']} cells" if known else ""
    how = ("finished" if run["finished"] else
           f"stopped by the limit{where}" if run["stopped_at_limit"]
           else (f"FAILED in cell {run['cells_run'] + 1} of {run['cells']}" if known else "FAILED")
           if run["error"] else f"not finished{where}")
    peak = run.get("peak_allocated_bytes")
    mem = f", peak {peak / 1e9:.2f} GB" if peak else ""
    last = ""
    if run.get("error"):
        lines = [l for l in run["error"].strip().splitlines() if l.strip()]
        last = f": {lines[-1][:200]}" if lines else ""
    return f"{run['notebook']}: {how}, {run['wall_s'] / 60:.2f} min{mem}{last}"


def main() -> int:
    """``python -m dynamics_ops.gpumeasure``: what the GPU measuring sessions say of each chapter
    at the gpu profile (the clause each chapter's cost line ends with)."""
    from dynamics import CHAPTERS

    for chapter in CHAPTERS:
        print(f"{chapter}: {gpu_line(chapter)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
