"""How live the panels are: each chapter's panels clicked once, timed from Run to the first
result shown and to done.

    python -m dynamics_ops.bench panels                         # every chapter, cpu profile
    python -m dynamics_ops.bench panels --chapters grokking --profiles smoke

Each panel is made as its page makes it (the theme's ``*_panel(profile, seed)``) and clicked
once at its defaults, under the book's runtime settings (:func:`dynamics.setup`: threads,
device), one chapter after another in this process, so a chapter's data are loaded by its
first panel, as a reader's earlier cells would have. A panel records its own times
(:attr:`dynamics.widgets.Panel.timing`): seconds from Run to its first result (the first
figure drawn: a curve while it trains, or the final figure) and to done, and the CPU seconds
of each (with one torch thread, what a quiet machine's wall clock would read, so a loaded
machine's table still tells which panels keep the promise). The budget a reader is promised (issue 43): a first result within
:data:`FIRST_S` and done within :data:`DONE_S`, at the cpu profile on two cores. These are a
benchmark's figures on a shared machine, printed with the load beside them, never a test's.
"""
from __future__ import annotations

import os

FIRST_S = 2.0   # a first result within this many seconds of Run
DONE_S = 10.0   # done within this many


def panel_makers(chapter: str) -> dict:
    """The chapter's panels as its theme's ``panels`` module makes them: ``{name: maker}`` for
    each public ``*_panel(profile, seed)`` defined there (what the page calls)."""
    import importlib

    from dynamics import CHAPTERS

    if chapter not in CHAPTERS:
        raise ValueError(f"no chapter {chapter!r}; choose from {', '.join(CHAPTERS)}")
    module = importlib.import_module(f"dynamics.{CHAPTERS[chapter]}.panels")
    return {n: f for n, f in vars(module).items() if n.endswith("_panel") and not n.startswith("_")
            and callable(f) and getattr(f, "__module__", "") == module.__name__}


def click(maker, profile: str, seed: int = 0) -> dict:
    """Make one panel at ``profile`` and click it once at its defaults, in this thread (what
    the Run button does, without the thread): ``{"title", "first_s", "done_s", "outcome",
    "status"}`` (outcome: done, stopped, invalid, failed)."""
    panel = maker(profile, seed)
    panel.click()
    return dict(title=panel.title or maker.__name__, **panel.timing)


def verdict(row: dict) -> str:
    """Whether a panel kept the promise: "live", or what it missed."""
    if row.get("outcome") != "done":
        return f"did not finish: {row.get('status')}"
    missed = [f"first result after {row['first_s']:.1f} s"] if row["first_s"] > FIRST_S else []
    missed += [f"done after {row['done_s']:.1f} s"] if row["done_s"] > DONE_S else []
    return "; ".join(missed) or "live"


def table(rows: list[dict]) -> str:
    """The benchmark's table, as the README shows it (Markdown)."""
    lines = [f"| chapter | panel | first result (s) | done (s) | CPU s to first / done "
             f"| within {FIRST_S:g} s / {DONE_S:g} s |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['chapter']} | {r['title']} | {r['first_s']:.1f} | {r['done_s']:.1f} | "
              f"{r.get('first_cpu_s', r.get('cpu_s', float('nan'))):.1f} / {r.get('cpu_s', float('nan')):.1f} "
              f"| {verdict(r)} |" for r in rows]
    return "\n".join(lines)


def warm_up() -> None:
    """What any page's earlier cells have done before a reader clicks Run: one optimizer step
    (the first use of ``torch.optim`` imports ``torch._dynamo``, over a second of CPU, once per
    kernel), so that the chapter benched first is not charged for it."""
    import torch

    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.Adam([w], lr=0.1)
    w.sum().backward()
    opt.step()


def bench_panels(chapters, profile: str = "cpu", seed: int = 0) -> list[dict]:
    """Every panel of each chapter in ``chapters``, clicked once at ``profile``; prints the
    table and returns its rows."""
    from dynamics import setup
    from dynamics.runtime import get_threads

    rt = setup(profile=profile, quiet=True)
    warm_up()
    rows = []
    for chapter in chapters:
        for name, maker in panel_makers(chapter).items():
            r = dict(chapter=chapter, **click(maker, profile, seed))
            rows.append(r)
            print(f"panel {chapter} / {r['title']}: first result {r['first_s']:.1f} s, done "
                  f"{r['done_s']:.1f} s (CPU {r.get('cpu_s', float('nan')):.1f} s; {verdict(r)}); load average {os.getloadavg()[0]:.1f} on "
                  f"{os.cpu_count()} cores", flush=True)
    print(f"# {rt.report()}; torch threads {get_threads()} (the book's setting)")
    print(table(rows), flush=True)
    return rows
