"""Each chapter's reference workload (``reference_workloads``: a short run of each theme's
runners) counted on the stand-in CUDA device: kernel launches, host reads, FLOPs and bytes
(:class:`dynamics_ops.gpuwork.Counter`). The notebooks' full gpu-profile counts
(``data/gpu_work.csv``) take half an hour a chapter, so they run in the ``gpu_sizes`` tier;
these take seconds, so CI runs them (``tests/ops/test_gpuwork.py``): a change that multiplies
a runner's launches or host reads per step fails there (issue 41, item 2).

``python tests/gpu_counts.py`` records ``tests/data/gpu_counts.json`` (do this only when a
change is *meant* to change the counts, and say so in the commit)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

PATH = Path(__file__).parent / "data" / "gpu_counts.json"
MEASURES = ("launches", "host_reads", "flops", "bytes")
GROWTH = 1.25  # a workload's count may grow this much before CI fails


def chapters() -> list[str]:
    from reference_workloads import WORKLOADS

    return [n for n in WORKLOADS if not n.startswith("core")]  # the core's run on the CPU


def count(name: str) -> dict:
    """One workload run on the stand-in device, counted: ``{measure: n}``."""
    from reference_workloads import WORKLOADS

    from dynamics_ops import standin
    from dynamics_ops.gpuwork import Counter

    with standin.active(), Counter() as c:
        WORKLOADS[name]()
    return dict(zip(MEASURES, (int(v) for v in c.total)))


def grew(name: str, now: dict, then: dict, factor: float = GROWTH) -> list[str]:
    """What grew more than ``factor`` times: one line per measure, with the command that
    records a new baseline when the growth is meant."""
    return [f"{name}: {m} grew {now[m] / max(then[m], 1):.2f}x ({then[m]:,} -> {now[m]:,}; "
            f"allowed {factor}x). If meant, record it: python tests/gpu_counts.py {name}"
            for m in ("launches", "host_reads") if now[m] > factor * max(then[m], 1)]


def read() -> dict:
    return json.loads(PATH.read_text())


if __name__ == "__main__":
    os.environ.setdefault("DYNAMICS_PROGRESS", "0")
    os.environ.setdefault("DYNAMICS_PROFILE", "smoke")  # no dynamics.setup: it would pick the CPU
    old = read() if PATH.exists() else {}
    counts = dict(old.get("counts", {}))
    for name in sys.argv[1:] or chapters():
        counts[name] = count(name)
        print(name, counts[name], flush=True)
    PATH.write_text(json.dumps(dict(torch=torch.__version__, counts=counts), indent=1) + "\n")
