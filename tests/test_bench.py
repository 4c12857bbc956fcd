"""Each benchmark runs (in its tiny mode: nothing here is timed), prints its seconds beside a
ratio, and the gpu plan turns a ledger into the promised lines."""
from __future__ import annotations

import json
import re

import pytest

from dynamics import bench

RATIO = r"\d+\.\d+x"


@pytest.mark.parametrize("name,line", [
    ("sweep", rf"^sweep speedup: {RATIO} \(K=2, small, cpu\): auto picks \w+; batched .* \(batched/sequential speedup {RATIO}\)"),
    ("grokking", rf"^grokking bench: [\d.]+ s library, [\d.]+ s bare loop, library/bare {RATIO}"),
    ("lottery", rf"^lottery bench: [\d.]+ s library, [\d.]+ s for 4 bare trainings, library/bare {RATIO}"),
    ("weight_decay", rf"^weight_decay bench: [\d.]+ s library, [\d.]+ s for 12 bare trainings, library/bare {RATIO}"),
    ("spectral", rf"^spectral bench: n = 64: NS5 .* SVD/NS5 {RATIO}"),
])
def test_benchmark_runs_and_prints_a_ratio(name, line, capsys):
    assert bench.main([name, "--tiny"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# profile "), out  # under dynamics.setup(): the book's runtime
    assert re.search(line, out, re.M), out


def test_grokking_bench_prints_steps_to_grok(capsys):
    bench.bench_grokking(tiny=True)
    assert re.search(r"fit \(train acc > 99%\) at step \w+; grok \(test acc > 95%\) at step \w+",
                     capsys.readouterr().out)


def _entry(**kw):
    e = dict(kind="train", desc="", models=1, planned_steps=100, planned_evals=0, steps_run=2,
             evals_run=0, data_bytes=0, device="cpu", step_flops=10**12, step_ops=0, param_bytes=0,
             grad_bytes=0, state_bytes=0, saved_bytes=2 * 10**9, eval_flops=0, eval_ops=0,
             largest_bytes=0)
    e.update(kw)
    e["peak_bytes"] = bench.ledger.Meter.peak(e)
    return e


def test_gpu_plan_arithmetic():
    """Time = steps x (FLOPs / achieved rate + ops x per-op cost) + the same for evaluations;
    peak = the largest training + the CUDA context."""
    peak, achieved, per_op = bench.GPUS["T4"]
    e = _entry()
    assert bench.estimate([e], "T4") == pytest.approx(100 * 1e12 / (peak * achieved))
    e2 = _entry(step_flops=0, step_ops=50, planned_evals=10, eval_ops=20, saved_bytes=10**9)
    assert bench.estimate([e2], "T4") == pytest.approx((100 * 50 + 10 * 20) * per_op)
    p = bench.plan([e, e2])
    assert p["peak_bytes"] == 4 * 10**9 + bench.CUDA_CONTEXT
    assert p["T4"] == pytest.approx(bench.estimate([e, e2], "T4")) and p["H100"] < p["T4"]
    line = bench.plan_line("grokking", p)
    assert re.fullmatch(r"gpu plan grokking: peak \d+\.\d GB, about [\d.]+ min on T4, about [\d.]+ min on H100", line)


def test_gpu_plan_prices_a_precompute_s_longest_unit():
    """Entries tagged with their unit (dynamics.units): the longest unit at full size, i.e.
    its entries' time over the units it stands for in the dry run."""
    a = _entry(unit="a", unit_repeats=1.0)
    b1, b2 = (_entry(unit="b", unit_repeats=2.0, repeats=2.0) for _ in range(2))
    p = bench.plan([a, b1, b2])
    assert p["units"] == 2
    assert p["unit"]["T4"] == pytest.approx(bench.estimate([b1, b2], "T4") / 2)
    assert p["unit"]["T4"] == pytest.approx(2 * bench.estimate([a], "T4"))
    assert re.search(r"; its longest unit about [\d.]+ min on T4, [\d.]+ min on H100$",
                     bench.plan_line("grokking", p, "precompute"))


def test_gpu_plan_from_ledgers(tmp_path, capsys):
    (tmp_path / "grokking.notebook.jsonl").write_text(json.dumps(_entry()) + "\n")
    bench.main(["gpu", "--ledgers", str(tmp_path), "--chapters", "grokking"])
    out = capsys.readouterr().out
    assert "gpu plan grokking: peak 4.5 GB, about 0.4 min on T4, about 0.0 min on H100" in out
    assert "gpu precompute grokking" not in out  # no precompute ledger, no line


def test_unknown_benchmark_is_an_error():
    with pytest.raises(SystemExit):
        bench.main(["nonsense"])
