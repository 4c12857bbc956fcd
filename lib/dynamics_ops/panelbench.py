"""How live the panels are: each chapter's panels clicked once, timed from Run to the first
result shown and to done.

    python -m dynamics_ops.bench panels                         # every chapter, cpu profile
    python -m dynamics_ops.bench panels --chapters grokking --profiles smoke

Each chapter runs in a fresh kernel at the profile, its cells first (without the cost line,
as :func:`dynamics_ops.bench.notebook_times` runs them), then every panel it made is clicked
once at its defaults, in the kernel's own thread (what the Run button does, without the
thread). A panel records its own times (:attr:`dynamics.widgets.Panel.timing`): seconds from
Run to its first result (a figure drawn, or a number the run printed in its status line) and
to done. The budget a reader is promised (issue 43): a first result within
:data:`FIRST_S` and done within :data:`DONE_S`, at the cpu profile on two cores. These are a
benchmark's figures on a shared machine, printed with the load beside them, never a test's.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

FIRST_S = 2.0   # a first result within this many seconds of Run
DONE_S = 10.0   # done within this many
MARK = "DYNAMICS-PANEL-TIMES "

CLICK_ALL = f"""
import json as _json
from dynamics import widgets as _widgets
_times = []
for _p in _widgets.panels():
    _p.click()
    _times.append(dict(title=_p.title or "(untitled)", **_p.timing))
print({MARK!r} + _json.dumps(_times))
"""


def panel_times(path: Path, profile: str, timeout: int = 1800) -> list[dict]:
    """Each panel of the notebook at ``path``, clicked once after its cells ran at
    ``profile``: ``[{"title", "first_s", "done_s", "status"}]`` in the order they were made."""
    import nbformat
    from nbclient import NotebookClient

    from .bench import without_cost_line

    path = Path(path)
    nb = without_cost_line(nbformat.read(path, as_version=4))
    nb.cells.append(nbformat.v4.new_code_cell(CLICK_ALL))
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}
                   ).execute(env=dict(os.environ, DYNAMICS_PROFILE=profile, DYNAMICS_PROGRESS="0"))
    for out in nb.cells[-1].get("outputs", []):
        for line in str(out.get("text", "")).splitlines():
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
    raise RuntimeError(f"{path.name}: the panels' times were not printed (the click cell's "
                       f"outputs: {nb.cells[-1].get('outputs')!r:.500})")


def verdict(row: dict) -> str:
    """Whether a panel kept the promise: "live", or what it missed."""
    if not str(row.get("status", "")).startswith("done"):
        return f"did not finish: {row.get('status')}"
    missed = [f"first result after {row['first_s']:.1f} s"] if row["first_s"] > FIRST_S else []
    missed += [f"done after {row['done_s']:.1f} s"] if row["done_s"] > DONE_S else []
    return "; ".join(missed) or "live"


def table(rows: list[dict]) -> str:
    """The benchmark's table, as the README shows it (Markdown)."""
    lines = [f"| chapter | panel | first result (s) | done (s) | within {FIRST_S:g} s / {DONE_S:g} s |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['chapter']} | {r['title']} | {r['first_s']:.1f} | {r['done_s']:.1f} | {verdict(r)} |"
              for r in rows]
    return "\n".join(lines)


def bench_panels(chapters, profile: str = "cpu", root: Path | None = None) -> list[dict]:
    """Every panel of each chapter in ``chapters``, clicked once at ``profile``; prints the
    table and returns its rows."""
    from dynamics.results import ROOT
    from dynamics.runtime import get_threads

    root = Path(root or ROOT)
    rows = []
    for chapter in chapters:
        for r in panel_times(root / "chapters" / f"{chapter}.ipynb", profile):
            rows.append(dict(chapter=chapter, **r))
            print(f"panel {chapter} / {r['title']}: first result {r['first_s']:.1f} s, done "
                  f"{r['done_s']:.1f} s ({verdict(r)}); load average {os.getloadavg()[0]:.1f} on "
                  f"{os.cpu_count()} cores", flush=True)
    print(f"# {profile} profile; torch threads in each kernel: {get_threads()} (the book's setting)")
    print(table(rows), flush=True)
    return rows
