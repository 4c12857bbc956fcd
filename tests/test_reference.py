"""The library's numbers stay what they were: every workload of ``reference_workloads`` (the
bench workloads at toy size, each optimizer and strategy of the core, a short run of each
chapter) against ``tests/data/reference.json``, exactly on a CPU like the one that recorded
them (other CPUs round float32 differently: there, to 1e-4 relative)."""
import json
import math

import pytest

import reference_workloads as R

RECORDED = json.loads(R.PATH.read_text())
EXACT = RECORDED["capability"] == R.capability()


def same(a, b, where="") -> None:
    if isinstance(b, dict):
        assert isinstance(a, dict) and sorted(a) == sorted(b), f"{where}: keys {a} != {b}"
        for k in b:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(b, float) and not EXACT:
        # an angle from arccos near 0 or 180 degrees moves by sqrt(2 d) radians for a cosine
        # error d: float32's 1e-7 is about 0.03 degrees (a recorded 0.0 came out 0.044)
        near = 0.1 if "angle" in where else 1e-6
        assert isinstance(a, float) and math.isclose(a, b, rel_tol=1e-4, abs_tol=near), \
            f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != recorded {b!r}"


@pytest.mark.parametrize("name", list(R.WORKLOADS))
def test_results_unchanged(name, monkeypatch):
    monkeypatch.setenv("DYNAMICS_PROFILE", "smoke")
    got = json.loads(json.dumps(R.WORKLOADS[name]()))
    same(got, RECORDED["values"][name], name)
