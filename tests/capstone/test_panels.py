"""dynamics.capstone.panels: the live panel runs headlessly and refuses what it cannot run."""
import pytest

from dynamics.capstone import panels as P


def test_timeline_panel_runs_and_refuses():
    panel = P.timeline_panel("smoke", seed=1)
    assert panel.above == "live" and "seed 1" in panel.note
    panel.set(init_scale=1.0, weight_decay=1.0)
    fig = panel.click()
    assert fig is not None and panel.runs == 1 and panel.status.value.startswith("fit at step")
    with pytest.raises(ValueError):
        panel.set(init_scale=-1.0)
