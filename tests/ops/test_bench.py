"""Each benchmark runs (in its tiny mode: nothing here is timed) and prints its seconds beside
a ratio; the GPU is measured (``gpu --measure``), never estimated."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dynamics_ops import bench

RATIO = r"\d+\.\d+x"


@pytest.mark.parametrize("name,line", [
    ("sweep", rf"^sweep speedup: {RATIO} \(K=2, small, cpu\): auto picks \w+; batched .* \(batched/sequential speedup {RATIO}\)"),
    ("grokking", rf"^grokking bench: [\d.]+ s library, [\d.]+ s bare loop, library/bare {RATIO}"),
    ("lottery", rf"^lottery bench: [\d.]+ s library \([\d.]+ CPU s\) for 4 trainings .*\n  with the "
                rf"figures' evaluations .*: [\d.]+ s \([\d.]+ CPU s\) for 4 bare trainings, library/bare "
                rf"{RATIO} \(CPU {RATIO}; target 1.15x\)\n  without evaluations: [\d.]+ s \([\d.]+ CPU s\) "
                rf"for 4 bare trainings, library/bare {RATIO} \(CPU {RATIO}; target 1.3x\)"),
    ("weight_decay", rf"^weight_decay bench: [\d.]+ s library, [\d.]+ s for 12 bare trainings, library/bare {RATIO}"),
    ("together", rf"^together bench, section 2: 15 trainings; launches per step [\d,]+ one at a time, "
                 rf"[\d,]+ together, {RATIO}; 12 steps: [\d.]+ CPU s one at a time, [\d.]+ CPU s together, "
                 rf"{RATIO}.*\n(.*\n)*together bench, section 3: 12 trainings; .*\n(.*\n)*together bench, section 4: 6 trainings; .* {RATIO}; 12 steps: .*{RATIO}"),
    ("spectral", rf"^spectral bench: n = 64: NS5 .* SVD/NS5 {RATIO}"),
])
def test_benchmark_runs_and_prints_a_ratio(name, line, capsys):
    assert bench.main([name, "--tiny"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# profile "), out  # under dynamics.setup(): the book's runtime
    assert re.search(line, out, re.M), out


def test_together_bench_counts_over_lengths_with_as_many_evaluations():
    """``bench together`` counts launches per step as the difference of two lengths: the
    evaluations cancel only when the runs evaluate as often at both. Checked on the
    runners' own histories at the bench's lengths (toy sizes: the schedule does not depend on
    them)."""
    from dynamics.weight_decay import experiments as W

    tiny = dict(width=8, n_train=200, batch_size=50)
    runs = {"section 2": lambda n: W.run_equilibrium(W.EquilibriumConfig(steps=n, **tiny), 0, bars=False).history,
            "section 3": lambda n: W.run_clock(W.ClockConfig(steps=n, **tiny), 0, bars=False).histories[0],
            "section 4": lambda n: W.run_spectrum(W.SpectrumConfig(steps=n, **tiny), 0,
                                                  bars=False).runs[0.0].history}
    for case, run in runs.items():
        short, long = bench._together_lengths(case)
        assert long > short and len(run(short).steps) == len(run(long).steps), case


def test_grokking_bench_prints_steps_to_grok(capsys):
    bench.bench_grokking(tiny=True)
    assert re.search(r"fit \(train acc > 99%\) at step \w+; grok \(test acc > 95%\) at step \w+",
                     capsys.readouterr().out)


def test_unknown_benchmark_is_an_error():
    with pytest.raises(SystemExit):
        bench.main(["nonsense"])


def test_gpu_measure_refuses_without_cuda(monkeypatch, capsys):
    """``gpu --measure`` needs a GPU: without CUDA it says so in one sentence on stderr (no
    traceback) and exits non-zero, before running anything."""
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: False)
    ran = []
    from dynamics_ops import gpumeasure
    monkeypatch.setattr(gpumeasure, "run_notebook", lambda *a, **k: ran.append(a))
    assert bench.main(["gpu", "--measure"]) == 2
    out = capsys.readouterr()
    assert "needs a CUDA GPU" in out.err and "Traceback" not in out.err + out.out
    assert not ran and out.out == ""
    with pytest.raises(SystemExit):  # --measure belongs to the gpu benchmark
        bench.main(["notebooks", "--measure"])
    with pytest.raises(SystemExit):  # and the gpu benchmark measures: it never estimates
        bench.main(["gpu"])


def test_gpu_measure_prints_what_it_measured(monkeypatch, capsys, tmp_path):
    """With CUDA (faked: the notebook's run is stubbed), one line per chapter: what ran, the
    measured minutes and peak memory; --write records the session with its provenance in
    gpu_measured.json and a finished notebook's minutes as measured."""
    from dynamics import book
    from dynamics_ops import gpumeasure

    table = tmp_path / "live_cost.csv"
    bench.write_live_cost([dict(chapter="grokking", profile="cpu", seconds=100, how="measured",
                               on="on 2 CPU cores", date="2026-11-24", command="c")], table)
    monkeypatch.setattr(book, "live_cost_path", lambda: table)
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(bench.torch.cuda, "get_device_name", lambda i=0: "Tesla T4")
    runs = dict(grokking=dict(notebook="grokking", cells=57, cells_run=57, finished=True,
                              stopped_at_limit=False, error=None, wall_s=420.0,
                              peak_allocated_bytes=1.2e8, peak_reserved_bytes=1.5e8),
                lottery_tickets=dict(notebook="lottery_tickets", cells=50, cells_run=20,
                                     finished=False, stopped_at_limit=True, error=None,
                                     wall_s=600.0, peak_allocated_bytes=None,
                                     peak_reserved_bytes=None))
    monkeypatch.setattr(gpumeasure, "run_notebook", lambda path, profile, limit: runs[path.stem])
    assert bench.main(["gpu", "--measure", "--chapters", "grokking,lottery_tickets", "--write"]) == 0
    out = capsys.readouterr().out
    assert "gpu measured grokking: finished, 7.00 min, peak 0.12 GB on Tesla T4\n" in out
    assert "lottery_tickets: stopped by the limit after 20 of 50 cells, 10.00 min" in out
    rows = {(r["chapter"], r["how"], r["on"]): r["seconds"] for r in book.read_live_cost(table)}
    assert rows == {("grokking", "measured", "on 2 CPU cores"): 100,
                    ("grokking", "measured", "on Tesla T4"): 420}
    sessions = json.loads((tmp_path / "gpu_measured.json").read_text())
    assert [r["notebook"] for r in sessions[-1]["runs"]] == ["grokking", "lottery_tickets"]
    assert sessions[-1]["provenance"]["gpu"] == "Tesla T4"
    assert "--chapters grokking,lottery_tickets" in sessions[-1]["provenance"]["command"]


def _notebook(path, *sources):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nbformat.write(nb, path)
    return path


def test_a_measured_notebook_reports_where_it_failed_or_stopped(tmp_path):
    """The measuring run of one notebook (real kernels, on the CPU): a failing cell is reported
    with its traceback and the cells that ran before it; a cell still running at the limit is
    interrupted and reported as stopped there, and the kernel still answers afterwards."""
    from dynamics_ops import gpumeasure

    failing = gpumeasure.run_notebook(_notebook(tmp_path / "a.ipynb", "x = 1", "1 / 0", "y = 2"),
                                      profile="smoke", limit=120)
    assert failing["cells"] == 3 and failing["cells_run"] == 1 and not failing["finished"]
    assert "ZeroDivisionError" in failing["error"] and not failing["stopped_at_limit"]
    slow = gpumeasure.run_notebook(_notebook(tmp_path / "b.ipynb", "import threading",
                                             "threading.Event().wait()", "z = 3"), profile="smoke", limit=4)
    assert slow["stopped_at_limit"] and slow["cells_run"] == 1 and slow["error"] is None
    assert "stopped by the limit after 1 of 3 cells" in gpumeasure.describe(slow)
    done = gpumeasure.run_notebook(_notebook(tmp_path / "c.ipynb", "import os",
                                             "assert os.environ['DYNAMICS_PROFILE'] == 'smoke'"),
                                   profile="smoke", limit=120)
    assert done["finished"] and done["error"] is None
    # the peak probe ran and answered (None for both on a machine without CUDA)
    assert done["peak_error"] is None and slow["peak_error"] is None
    with pytest.raises(ValueError, match="limit"):
        gpumeasure.run_notebook(tmp_path / "c.ipynb", limit=0)


def test_live_cost_line_says_only_what_was_measured(tmp_path):
    """The page's cost line: the smoke and cpu times as measured; the gpu time of the whole
    notebook where a GPU measured it (a measured row; else what the measuring sessions say:
    a lower bound from a run stopped at its limit, an upper bound from one that shared the
    GPU); nothing estimated (a row that is not measured is refused)."""
    from dynamics import book

    rows = [dict(chapter="grokking", profile=p, seconds=s, how=h, on=on, date="2026-11-24",
                 command="c")
            for p, s, h, on in [("smoke", 40, "measured", "on 2 CPU cores"),
                                ("cpu", 300, "measured", "on 2 CPU cores")]]
    path = bench.write_live_cost(rows, tmp_path / "live_cost.csv")
    with pytest.raises(ValueError, match="not a live-cost row"):
        bench.write_live_cost([dict(rows[0], profile="gpu", how="planned", on="T4")], path)
    line = book.live_cost_line("grokking", book.read_live_cost(path), gpu_sessions=[])
    assert line == ("Running this page's code cells takes about 40 s in the smoke profile and "
                    "about 5 min in the cpu profile (measured on 2 CPU cores, 2026-11-24); it has "
                    "not yet been timed in the gpu profile on a GPU.")
    run = dict(notebook="grokking", cells=9, cells_run=4, finished=False, stopped_at_limit=True,
               error=None, wall_s=60.1, peak_allocated_bytes=None, peak_reserved_bytes=None, sharing=0)
    shared = dict(run, finished=True, stopped_at_limit=False, cells_run=9, wall_s=119.0, sharing=6)
    other = dict(run, notebook="lottery_tickets", wall_s=600.0)
    shorter = dict(run, wall_s=30.0)  # a weaker lower bound: not said
    slower = dict(shared, wall_s=150.0)  # a weaker upper bound: not said
    stopped_sharing = dict(run, wall_s=400.0, sharing=6)  # bounds nothing: not said
    sessions = [dict(provenance=dict(gpu="NVIDIA H100", date="2026-11-26 16:45 UTC"),
                     runs=[run, other, shared, shorter]),
                dict(provenance=dict(gpu="NVIDIA H100", date="2026-11-27 10:00 UTC"),
                     runs=[slower, stopped_sharing])]
    line = book.live_cost_line("grokking", book.read_live_cost(path), gpu_sessions=sessions)
    assert line.endswith("; in the gpu profile, on an NVIDIA H100 it ran to the end in 2.0 min "
                         "while sharing the GPU with 6 other notebooks (2026-11-26: an upper "
                         "bound) and was still running alone when stopped after 1.0 min "
                         "(2026-11-26: a lower bound).")
    alone = dict(shared, sharing=0, wall_s=100.0)  # a run alone that finished is the time
    line = book.live_cost_line("grokking", book.read_live_cost(path), gpu_sessions=[
        dict(provenance=dict(gpu="NVIDIA H100", date="2026-11-28 10:00 UTC"), runs=[alone])] + sessions)
    assert line.endswith("on an NVIDIA H100 it ran to the end in 1.7 min (2026-11-28).")
    assert "T4" not in line and "plan" not in line
    # a measured gpu row (bench gpu --measure --write) is said as measured, in its place
    bench.write_live_cost([dict(rows[1], profile="gpu", on="on Tesla T4", seconds=420)], path)
    line = book.live_cost_line("grokking", book.read_live_cost(path), gpu_sessions=sessions)
    assert "about 7 min in the gpu profile (measured on Tesla T4, 2026-11-24)" in line
    assert "H100" not in line
    with pytest.raises(ValueError, match="no row for 'lottery_tickets'"):
        book.live_cost_line("lottery_tickets", book.read_live_cost(path))
    with pytest.raises(ValueError, match="unknown chapter"):
        book.live_cost_line("nonsense", [])
    with pytest.raises(ValueError, match="not a live-cost row"):
        bench.write_live_cost([dict(rows[0], chapter="nonsense")], path)


def test_every_chapter_says_its_live_cost():
    """The committed table (data/live_cost.csv) has, for every chapter, the measured smoke and
    cpu times, and the one-line cell prints from it and from data/gpu_measured.json."""
    from dynamics import CHAPTERS, book

    rows = book.read_live_cost()
    for chapter in CHAPTERS:
        have = {(r["profile"], r["how"], r["on"]) for r in rows if r["chapter"] == chapter}
        assert {("smoke", "measured"), ("cpu", "measured")} <= {k[:2] for k in have}, chapter
        line = book.live_cost_line(chapter, rows)
        assert "smoke profile" in line and "cpu profile" in line and "gpu profile" in line
        assert "planned" not in line


def test_every_chapter_page_shows_its_live_cost():
    """Each chapter's page says how long its cells take, right after its setup cell."""
    import json

    from dynamics import CHAPTERS
    from dynamics.results import ROOT

    for chapter in CHAPTERS:
        cells = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())["cells"]
        code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        setup = next(i for i, src in enumerate(code) if "dynamics.setup(" in src)
        assert code[setup + 1].strip() == f'dynamics.book.live_cost("{chapter}")', chapter


def test_the_committed_gpu_measurements_say_where_they_came_from():
    """data/gpu_measured.json: each session names its GPU, torch, commit, date and command,
    and each run says whether it finished, stopped at its limit or failed (never a time
    without its outcome)."""
    from dynamics import results
    from dynamics_ops import gpumeasure

    sessions = json.loads((results.DATA / gpumeasure.MEASURED).read_text())
    assert sessions
    for s in sessions:
        prov = s["provenance"]
        assert prov["gpu"] and prov["torch"] and prov["date"] and prov["command"] and prov["commit"]
        for run in s["runs"]:
            outcomes = [run["finished"], run["stopped_at_limit"], run["error"] is not None]
            assert sum(outcomes) == 1, run["notebook"]
            assert run["wall_s"] > 0
            gpumeasure.describe(run)  # each run can be read as a line


def test_a_chapter_not_yet_measured_can_be_measured():
    """The bench runs a notebook without its cost-line cell, which for a new chapter has no
    row to print yet; every other cell stays, in order."""
    import nbformat

    from dynamics_ops.bench import without_cost_line

    cells = [nbformat.v4.new_code_cell("import dynamics"), nbformat.v4.new_markdown_cell("live_cost( in prose"),
             nbformat.v4.new_code_cell('dynamics.book.live_cost("schedules")'),
             nbformat.v4.new_code_cell("x = 1")]
    nb = without_cost_line(nbformat.v4.new_notebook(cells=cells))
    assert ["".join(c.source) for c in nb.cells] == ["import dynamics", "live_cost( in prose", "x = 1"]


def test_the_panel_bench_finds_every_panel_a_page_makes_and_clicks_one():
    """Each chapter's panels, as its theme's panels module makes them, are those its page
    calls; one clicked at smoke comes back with its times and final status."""
    import re

    from dynamics import CHAPTERS
    from dynamics_ops.panelbench import click, panel_makers

    for chapter in CHAPTERS:
        makers = panel_makers(chapter)
        page = (Path(__file__).resolve().parents[2] / "chapters" / f"{chapter}.ipynb").read_text()
        called = set(re.findall(r"\b([a-z_]+_panel)\(", page))
        kinds = set(re.findall(r'panel\(\\"([a-z]+)\\"', page))  # grokking: panel("phase", ...)
        assert called | {f"{k}_panel" for k in kinds} <= set(makers), chapter
        assert makers, chapter
    r = click(panel_makers("spectral_optimizers")["ns_panel"], "smoke")
    assert r["outcome"] == "done" and 0 <= r["first_s"] <= r["done_s"]
    with pytest.raises(ValueError, match="no chapter 'nope'"):
        panel_makers("nope")


def test_the_panel_bench_says_which_promise_a_panel_missed():
    from dynamics_ops.panelbench import table, verdict

    done = {"outcome": "done", "status": "measured 0.5"}
    assert verdict({"first_s": 0.4, "done_s": 3.0, **done}) == "live"
    assert verdict({"first_s": 2.5, "done_s": 3.0, **done}) == "first result after 2.5 s"
    assert verdict({"first_s": 1.0, "done_s": 57.7, **done}) == "done after 57.7 s"
    assert verdict({"first_s": 1.0, "done_s": 1.0, "outcome": "failed",
                    "status": "failed: boom"}) == "did not finish: failed: boom"
    text = table([{"chapter": "lottery_tickets", "title": "IMP", "first_s": 1.0, "done_s": 57.7,
                   "first_cpu_s": 0.9, "cpu_s": 40.2, **done}])
    assert "| lottery_tickets | IMP | 1.0 | 57.7 | 0.9 / 40.2 | done after 57.7 s |" in text
