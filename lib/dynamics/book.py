"""What a chapter page calls: :func:`show_source` (the library's own code, shown where the
page explains it), :func:`glue` (a number the run computed, put into the prose) and
:func:`live_cost` (how long the page's code cells take to run, as measured: ``data/live_cost.csv``
and the GPU sessions in ``data/gpu_measured.json``).

The book's toolchain (the Sphinx extension, the page scripts, the checks, the printed edition)
is the separate package ``dynamics_toolchain``; measuring a notebook's cost is an operation
(``python -m dynamics_ops.bench``).
"""
from __future__ import annotations

import html
import json
import textwrap
from pathlib import Path

MEASURED = "gpu_measured.json"  # in data/: the GPU measuring sessions (dynamics_ops.gpumeasure)
GPU_DEFAULT_LIMIT_S = 600  # the gpu profile is a GPU's default only where every chapter finished within it


def repository_url(config_path=None) -> str:
    """``repository.url`` from the book's ``_config.yml``."""
    import yaml

    from .results import ROOT

    config = yaml.safe_load(open(config_path or ROOT / "_config.yml"))
    return config["repository"]["url"]



# ----------------------------------------------------------------------------- the code on the page

def show_source(*objs, title: str | None = None, open: bool = False):
    """The library's own source of ``objs`` (functions, classes, methods), as a collapsible
    block with a link to the lines in the repository. It is read from the installed library
    when the cell runs, so the page always shows the code that ran (one home, never a copy).

    In a chapter: ``show_source(G.fourier_spectrum)`` in a cell tagged ``remove-input``.
    """
    import inspect

    from IPython.display import HTML
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    from .results import ROOT

    if not objs:
        raise ValueError("show_source() needs at least one function or class")
    blocks, names = [], []
    for obj in objs:
        target = inspect.unwrap(obj)
        try:
            lines, start = inspect.getsourcelines(target)
            path = Path(inspect.getsourcefile(target)).resolve()
        except (TypeError, OSError) as err:
            raise ValueError(f"no source for {obj!r}: {err}") from None
        try:
            rel = path.relative_to(ROOT).as_posix()
        except ValueError:
            rel = path.name
        end = start + len(lines) - 1
        module = target.__module__
        qual = getattr(target, "__qualname__", getattr(target, "__name__", str(target)))
        names.append(qual)
        url = f"{repository_url()}/blob/main/{rel}#L{start}-L{end}"
        code = highlight(textwrap.dedent("".join(lines)), PythonLexer(),
                         HtmlFormatter(noclasses=True, style="friendly", nobackground=True))
        blocks.append(
            f'<div style="font-size:0.85em;color:#555;margin:0.3em 0;">'
            f'<code>{html.escape(module)}.{html.escape(qual)}</code> · '
            f'<a href="{html.escape(url)}">{html.escape(rel)}, lines {start}–{end}</a></div>'
            f'<div style="overflow-x:auto;background:#f8f8f8;border-radius:4px;padding:0.2em 0.6em;">'
            f"{code}</div>")
    summary = title or "Show the code: " + ", ".join(names)
    return HTML(f'<details class="dynamics-source"{" open" if open else ""}>'
                f'<summary style="cursor:pointer;color:#3366cc;">{html.escape(summary)}</summary>'
                + "".join(blocks) + "</details>")


class Glued:
    """A glued text as MyST-NB stores it, so that the page prints it verbatim.

    ``{glue:text}`` reads the stored text/plain back with ``ast.literal_eval`` before printing
    it (``myst_nb.core.variables.format_plain_text``): a bare "2,000" became the tuple
    ``(2, 0)`` and "0.100" the float ``0.1``. The text/plain here is the ``repr`` of the text,
    a string literal, which reads back as exactly the text; ``{glue}`` picks text/html in the
    HTML build, the text escaped."""

    def __init__(self, text: str):
        self.text = str(text)

    def __repr__(self) -> str:  # IPython's text/plain
        return repr(self.text)

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return html.escape(self.text)


def glue_texts(digits: int = 3, **values) -> dict[str, str]:
    """The text :func:`glue` puts on the page for each value: a number as the book writes it
    (:func:`dynamics.plots.number`, ``digits`` significant digits), a list as "1, 3 and 10",
    a string as it is."""
    from .plots import number

    if not values:
        raise ValueError("glue() needs at least one name=value")

    def text(v) -> str:
        if isinstance(v, str):
            return v
        if isinstance(v, (list, tuple)):
            if not v:
                raise ValueError("glue() got an empty list")
            return and_list([text(x) for x in v])
        return number(v, digits)

    return {name: text(v) for name, v in values.items()}


def glue(digits: int = 3, **values) -> None:
    """Put numbers computed on this page into its prose: ``glue(t_grok=run.grok_step)`` in a
    cell, ``{glue:text}`t_grok``` in the markdown after it. Numbers are written as the book
    writes them (:func:`dynamics.plots.number`, ``digits`` significant digits); a list of
    numbers as "1, 3 and 10"; a string is glued as it is (format it yourself for a
    percentage or a range). The page prints each text exactly so (:class:`Glued`).

    In the book build the values are glued silently (MyST-NB); anywhere else (Colab, Jupyter),
    where ``{glue:text}`` does not render, the cell prints them instead, one line, so that a
    reader there loses nothing. Returns nothing, so that a cell ending in ``glue(...)`` shows
    no output of its own.
    """
    from .runtime import in_book_build

    texts = glue_texts(digits, **values)
    if in_book_build():
        from myst_nb import glue as nb_glue

        for name, text in texts.items():
            nb_glue(name, Glued(text), display=False)
    else:
        print("; ".join(f"{name} = {text}" for name, text in texts.items()))


# ----------------------------------------------------------------------------- what a page costs

LIVE_COST = "live_cost.csv"  # in data/: how long each chapter notebook takes, per profile
LIVE_COST_FIELDS = ("chapter", "profile", "seconds", "how", "on", "date", "command")
LIVE_COST_COMMANDS = {  # what rewrites each kind of row (how, profile)
    ("measured", "smoke"): "python -m dynamics_ops.bench notebooks --no-book --write",
    ("measured", "cpu"): "python -m dynamics_ops.bench notebooks --no-book --write",
    ("measured", "gpu"): "python -m dynamics_ops.bench gpu --measure --write",
}


def live_cost_path() -> Path:
    from .results import DATA

    return DATA / LIVE_COST


def read_live_cost(path=None) -> list[dict]:
    """The rows of ``data/live_cost.csv``: one per chapter, profile and machine, with the
    notebook's ``seconds``, ``how`` they were had (``measured``: the whole notebook run in a
    fresh kernel, its wall time on a GPU, the kernel's CPU time on a CPU; nothing estimated),
    ``on`` what, the date and the command that rewrites the row. ``on`` completes "measured
    ..." ("on Tesla T4", "as the kernel's CPU time on one x86_64 core")."""
    import csv

    path = Path(path) if path is not None else live_cost_path()
    if not path.exists():
        raise FileNotFoundError(f"no {path}: write it with "
                                f"`{LIVE_COST_COMMANDS[('measured', 'cpu')]}`")
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if set(LIVE_COST_FIELDS) - set(row) or row["how"] != "measured":
            raise ValueError(f"{path} is not a live-cost table (columns "
                             f"{', '.join(LIVE_COST_FIELDS)}; how = measured)")
        row["seconds"] = float(row["seconds"])
    return rows


def and_list(parts) -> str:
    """``["a", "b", "c"]`` as "a, b and c" (each part as ``str`` writes it; none: "")."""
    parts = [str(p) for p in parts]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def live_cost_line(chapter: str, rows: list[dict], gpu_sessions: list[dict] | None = None) -> str:
    """One line: how long running ``chapter``'s code cells takes in each profile, measured
    (on what, when): the smoke and cpu times from ``rows`` (``data/live_cost.csv``), and the
    gpu time of the whole notebook where a GPU has measured it (a measured row, else what
    ``gpu_sessions``, default ``data/gpu_measured.json``, says: :func:`dynamics_ops.gpumeasure.gpu_line`).
    Nothing estimated is said here."""
    from . import CHAPTERS
    from .runtime import duration

    if chapter not in CHAPTERS:
        raise ValueError(f"unknown chapter {chapter!r}; choose one of {', '.join(CHAPTERS)}")
    mine = [r for r in rows if r["chapter"] == chapter]
    measured: dict[tuple, list[str]] = {}  # (machine, date) -> "about N s in the P profile"
    for profile in ("smoke", "cpu", "gpu"):
        for r in mine:
            if (r["profile"], r["how"]) == (profile, "measured"):
                measured.setdefault((r["on"], r["date"]), []).append(
                    f"{duration(r['seconds'])} in the {profile} profile")
    parts = [f"{and_list(texts)} (measured {on}, {date})" for (on, date), texts in measured.items()]
    if not parts:
        raise ValueError(f"{live_cost_path()} has no row for {chapter!r}: write them with "
                         f"`{LIVE_COST_COMMANDS[('measured', 'cpu')]}`")
    if not any(r["profile"] == "gpu" and r["how"] == "measured" for r in mine):
        # what a GPU measured of the whole notebook in the measuring sessions
        parts.append(gpu_line(chapter, gpu_sessions))
    return f"Running this page's code cells takes {'; '.join(parts)}."


def live_cost(chapter: str) -> None:
    """Print one line: how long this chapter's code cells take to run in the smoke and cpu
    profiles (measured: the whole notebook in a fresh kernel) and in the gpu profile (what a
    GPU measured, once one has), read from
    ``data/live_cost.csv`` (:func:`live_cost_line`). A chapter's one cell:
    ``dynamics.book.live_cost("grokking")``."""
    print(live_cost_line(chapter, read_live_cost()))



def sessions(path: Path | None = None) -> list[dict]:
    """The measuring sessions kept in ``data/gpu_measured.json`` (none when it is missing)."""
    from .results import data_dir

    path = Path(path) if path is not None else data_dir() / MEASURED
    return json.loads(path.read_text()) if path.exists() else []


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.1f} min"


def gpu_line(chapter: str, kept: list[dict] | None = None) -> str:
    """What the measurements say of ``chapter`` at the gpu profile, as a clause of the page's
    cost line: the whole notebook, never its trainings alone. Per GPU, the tightest bounds the
    sessions give: a run alone that finished is the time; one that finished while sharing the
    GPU is an upper bound (the fastest such run is said); one alone still running at its limit
    is a lower bound (the longest such run). A run stopped while sharing bounds nothing."""
    kept = sessions() if kept is None else kept
    bounds: dict[str, dict] = {}  # GPU -> {"exact"|"upper"|"lower": (seconds, day, others)}
    for s in kept:
        gpu, day = s["provenance"]["gpu"], s["provenance"]["date"][:10]
        for run in s["runs"]:
            if run["notebook"] != chapter:
                continue
            others, b = run.get("sharing", 0), bounds.setdefault(gpu, {})
            kind = ("exact" if run["finished"] and not others else "upper" if run["finished"]
                    else "lower" if run["stopped_at_limit"] and not others else None)
            if kind is None:
                continue
            best = max if kind == "lower" else min
            old = b.get(kind)
            if old is None or best(old[0], run["wall_s"]) != old[0]:
                b[kind] = (run["wall_s"], day, others)
    said = []
    for gpu, b in bounds.items():
        if "exact" in b:
            texts = [f"ran to the end in {_minutes(b['exact'][0])} ({b['exact'][1]})"]
        else:
            texts = []
            if "upper" in b:
                sec, day, others = b["upper"]
                texts.append(f"ran to the end in {_minutes(sec)} while sharing the GPU with "
                             f"{others} other notebooks ({day}: an upper bound)")
            if "lower" in b:
                sec, day, _ = b["lower"]
                texts.append(f"was still running alone when stopped after {_minutes(sec)} ({day}: a lower bound)")
        if texts:
            said.append(f"on an {gpu} it " + " and ".join(texts))
    if not said:
        return "it has not yet been timed in the gpu profile on a GPU"
    return "in the gpu profile, " + "; ".join(said)




def gpu_times_alone(gpu: str, kept: list[dict] | None = None) -> dict[str, float | None]:
    """Per chapter, the seconds its whole notebook took at the gpu profile when it ran **alone**
    on a GPU named ``gpu`` and finished (the fastest such run); None where no run did. A run
    that shared the GPU or was stopped at its limit says nothing of how long one reader waits."""
    from . import CHAPTERS

    kept = sessions() if kept is None else kept
    times: dict[str, float | None] = {c: None for c in CHAPTERS}
    for s in kept:
        if s["provenance"]["gpu"] != gpu:
            continue
        for run in s["runs"]:
            if run["notebook"] in times and run["finished"] and not run.get("sharing", 0):
                old = times[run["notebook"]]
                times[run["notebook"]] = run["wall_s"] if old is None else min(old, run["wall_s"])
    return times


def gpu_profile_measured(gpu: str, kept: list[dict] | None = None) -> tuple[bool, str]:
    """Whether the gpu profile may be the default on a GPU named ``gpu``: only when every
    chapter's notebook has been measured there, alone, to finish within
    :data:`GPU_DEFAULT_LIMIT_S` (:func:`gpu_times_alone`). With the reason, in words."""
    times = gpu_times_alone(gpu, kept)
    limit = f"{GPU_DEFAULT_LIMIT_S / 60:g} minutes"
    if all(t is not None and t <= GPU_DEFAULT_LIMIT_S for t in times.values()):
        return True, (f"every chapter has been measured to finish within {limit} at the gpu "
                      f"profile on this GPU, {gpu} (the slowest in {_minutes(max(times.values()))})")
    slow = [c for c, t in times.items() if t is not None and t > GPU_DEFAULT_LIMIT_S]
    missing = [c for c, t in times.items() if t is None]
    why = []
    if missing:
        why.append(f"{'no chapter has' if len(missing) == len(times) else and_list(missing) + ' have not'} "
                   "yet been measured to finish at the gpu profile on this GPU")
    if slow:
        why.append(f"{and_list(slow)} took longer than {limit} there")
    return False, "; ".join(why)


def gpu_profile_time(chapter: str, gpu: str, kept: list[dict] | None = None) -> str:
    """How long ``chapter`` took at the gpu profile alone on ``gpu``, in words: a measured
    time, or "not yet measured on this GPU"."""
    t = gpu_times_alone(gpu, kept).get(chapter)
    return "not yet measured on this GPU" if t is None else f"measured {_minutes(t)} on this GPU"
