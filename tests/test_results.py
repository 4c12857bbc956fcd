import json

import numpy as np
import pytest
import torch

from dynamics import results
from dynamics.runtime import get_profile


@pytest.fixture
def tmp_data(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "DATA", tmp_path)
    return tmp_path


def test_save_load_roundtrip_with_provenance(tmp_data):
    payload = {"acc": np.array([0.5, float("nan")]), "w": torch.ones(2), "n": np.int64(3)}
    path = results.save("demo_result", payload, profile="smoke", config={"lr": 0.1},
                        command="python -m dynamics.precompute demo --profile smoke", wall_time=1.234)
    assert path == tmp_data / "demo_result.json"
    loaded, prov = results.load("demo_result")
    assert loaded == {"acc": [0.5, None], "w": [1.0, 1.0], "n": 3}
    for key in ("profile", "device", "dynamics", "torch", "python", "date", "command", "config"):
        assert key in prov
    assert prov["torch"] == torch.__version__ and prov["config"] == {"lr": 0.1}
    text = results.describe(prov)
    assert "smoke profile" in text and "Regenerate: python -m dynamics.precompute" in text
    assert json.loads(path.read_text())["provenance"]["wall_time_s"] == 1.2


def test_missing_result_says_how_to_regenerate(tmp_data):
    with pytest.raises(FileNotFoundError, match="dynamics.precompute"):
        results.load("nothing_here")
    with pytest.raises(ValueError):
        results.save("../escape", {}, profile="smoke")


def test_precompute_and_bench_cli_reject_unknown_names(capsys):
    from dynamics import bench, precompute

    with pytest.raises(SystemExit):
        precompute.main(["no_such_chapter", "--profile", "smoke"])
    assert "unknown chapter" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        precompute.main(["grokking", "--profile", "turbo"])
    with pytest.raises(SystemExit):
        bench.main(["no_such_bench"])
