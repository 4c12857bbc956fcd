"""dynamics_ops.verify: a data file is the code's when its source digest is the current code's
and its sample unit, computed again, gives what the file keeps.

The mechanism is tested on a toy plan whose answers are known (a seeded draw, squares), with
each way a file can stop being the code's made on purpose: the code changed under a file
(its digest), a result that the code no longer makes (its sample), a file kept from before
samples. The published files themselves are checked in tests/ops/test_data_code.py.
"""
from __future__ import annotations

import json
import math
import types

import pytest
import torch

from dynamics import results, units
from dynamics_ops import precompute, verify

NAME = "grokking_verify_demo"  # a grokking file: its digest is the grokking theme's


def demo_plan(profile=None, shift: float = 0.0, tolerance=1e-6):
    p = units.Plan("grokking", profile or "smoke")
    # a seeded draw: computed again on its seed, it gives the same numbers, bit for bit
    p.unit("draw", lambda: dict(x=(torch.randn(4) + shift).tolist()), config=dict(n=4))
    for v in (2, 3):
        p.unit(f"square {v}", lambda v=v: dict(sq=v * v + shift), config=dict(v=v))
    p.output(NAME, lambda parts: dict(parts=list(parts)), command="python -m dynamics_ops.precompute grokking",
             tolerance=tolerance)
    return p


@pytest.fixture
def plan(out, monkeypatch):
    """The demo plan is grokking's precompute; files and units live in tmp_path (``out``)."""
    state = dict(shift=0.0, tolerance=1e-6)
    fake = types.SimpleNamespace(precompute_plan=lambda profile=None: demo_plan(profile, **state))
    monkeypatch.setattr(precompute, "theme_module", lambda chapter: fake)
    return state


def _file(tmp_path) -> dict:
    return json.loads((tmp_path / f"{NAME}.json").read_text())


def test_compare_finds_the_largest_relative_difference_and_where():
    assert verify.compare({"a": [1.0, 2.0]}, {"a": [1.0, 2.0]}) == (0.0, "")
    d, where = verify.compare({"a": [1.0, 2.2]}, {"a": [1.0, 2.0]})
    assert math.isclose(d, 0.1) and where == ".a[1]"
    assert verify.compare({"a": 1}, {"b": 1})[0] == math.inf
    assert verify.compare([1, 2], [1])[0] == math.inf
    assert verify.compare("adam", "sgd")[0] == math.inf
    assert verify.compare(None, 0.0)[0] == math.inf  # a value that became missing


def test_a_precomputed_file_keeps_its_cheapest_unit_and_is_the_codes(plan, tmp_path):
    precompute.Runner(demo_plan()).run()
    prov = _file(tmp_path)["provenance"]
    assert prov["source"] == results.source_digest("grokking") and prov["tolerance"] == 1e-6
    sample = prov["sample"]
    assert sample["unit"] in {"draw", "square 2", "square 3"} and sample["seed"] == 0
    rep = verify.check(NAME)
    assert rep.ok and rep.reproduced and rep.worst == 0.0, rep.line()
    assert "the code's" in rep.line()


def test_a_file_the_code_no_longer_makes_is_found_with_its_command(plan, tmp_path):
    precompute.Runner(demo_plan()).run()
    plan["shift"] = 1e-3  # the code changed: every unit gives another number
    rep = verify.check(NAME)
    assert rep.reproduced is False and not rep.ok and rep.worst > 1e-6
    assert "NOT the code's" in rep.line() and "python -m dynamics_ops.precompute grokking" in rep.line()
    blob = _file(tmp_path)
    blob["provenance"]["tolerance"] = 0.1  # a looser file would pass: the tolerance is the file's own
    (tmp_path / f"{NAME}.json").write_text(json.dumps(blob))
    assert verify.check(NAME).reproduced


def test_a_moved_digest_with_a_sample_that_reproduces_is_refreshed_not_edited(plan, tmp_path):
    precompute.Runner(demo_plan()).run()
    blob = _file(tmp_path)
    blob["provenance"]["source"] = "0123456789abcdef"  # made by other code
    (tmp_path / f"{NAME}.json").write_text(json.dumps(blob))
    rep = verify.check(NAME)
    assert rep.reproduced and not rep.current and not rep.ok
    assert "refresh" in rep.line()
    payload = blob["payload"]
    assert verify.refresh(rep)
    after = _file(tmp_path)
    assert after["payload"] == payload and after["provenance"]["source"] == results.source_digest("grokking")
    assert verify.check(NAME).ok
    # a sample that does not reproduce is never refreshed
    plan["shift"] = 1.0
    assert not verify.refresh(verify.check(NAME))


def test_a_sample_is_compared_bit_for_bit_only_on_the_arithmetic_that_made_it(plan, tmp_path):
    """A file records its arithmetic; on that arithmetic a changed result is NOT the code's
    (test above). Made on another arithmetic, or on one it does not record, a sample that does
    not come out the same proves nothing: the digest alone is checked, and the line says so,
    naming both arithmetics. Reproduced bit for bit, a refresh records this arithmetic."""
    from dynamics.arithmetic import fingerprint

    precompute.Runner(demo_plan()).run()
    assert _file(tmp_path)["provenance"]["arithmetic"] == fingerprint()
    plan["shift"] = 1e-3  # the bits differ (as on another processor's kernels)
    same = verify.check(NAME)
    assert not same.ok and not same.foreign and "NOT the code's" in same.line()
    blob = _file(tmp_path)
    blob["provenance"]["arithmetic"] = "cpu: another processor, AVX2 kernels"
    (tmp_path / f"{NAME}.json").write_text(json.dumps(blob))
    other = verify.check(NAME)
    assert other.ok and other.foreign and other.reproduced is False
    assert "not comparable" in other.line() and "another processor" in other.line()
    assert fingerprint() in other.line() and not verify.refresh(other)
    blob["provenance"].pop("arithmetic")  # a file from before files recorded it
    (tmp_path / f"{NAME}.json").write_text(json.dumps(blob))
    unknown = verify.check(NAME)
    assert unknown.ok and unknown.foreign and "does not record" in unknown.line()
    plan["shift"] = 0.0  # it reproduces here after all: this arithmetic makes it
    assert verify.refresh(verify.check(NAME))
    assert _file(tmp_path)["provenance"]["arithmetic"] == fingerprint()


def test_the_arithmetic_reads_the_subnormal_flush_from_the_arithmetic_itself():
    """Known answer: 1e-30 * 1e-9 = 1e-39 is a float32 subnormal: flushed (as the library sets
    on import) it is exactly 0, kept it is not; the fingerprint says which."""
    from dynamics import arithmetic

    assert arithmetic.subnormals_flushed() and "subnormals flushed" in arithmetic.fingerprint()
    torch.set_flush_denormal(False)
    try:
        assert not arithmetic.subnormals_flushed()
        assert "subnormals kept" in arithmetic.fingerprint()
        assert (torch.tensor([1e-30]) * 1e-9).item() > 0
    finally:
        assert arithmetic.flush_denormals()
    assert (torch.tensor([1e-30]) * 1e-9).item() == 0.0


def test_files_without_a_sample_say_so(plan, tmp_path):
    precompute.Runner(demo_plan(tolerance=None)).run()  # timings: not reproducible by nature
    rep = verify.check(NAME)  # the digest is all there is to check
    assert rep.unit is None and rep.timings and rep.ok and "timings" in rep.line()
    blob = _file(tmp_path)
    for key in ("sample", "source", "tolerance"):
        blob["provenance"].pop(key)  # a file from before files kept a sample
    (tmp_path / f"{NAME}.json").write_text(json.dumps(blob))
    line = verify.check(NAME).line()
    assert "no source digest" in line and "no sample" in line and "regenerate" in line


def test_bad_input_names_the_setting(plan, tmp_path, capsys):
    with pytest.raises(SystemExit):
        verify.main(["no_such_file"])
    assert "not files a precompute writes" in capsys.readouterr().err
    with pytest.raises(ValueError, match="tolerance"):
        demo_plan(tolerance=-1)
