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


def test_timeline_panel_says_its_work_and_redraws_a_few_times():
    panel = P.timeline_panel("smoke", seed=1)
    w = lambda **kw: panel.work(**{**panel.values, **kw})  # noqa: E731
    assert w(steps=2 * panel.values["steps"]) == 2 * w() and w(optimizer="muon") > w()
    drawn = []
    panel.show_figure = lambda fig, draw=panel.show_figure: (drawn.append(fig), draw(fig))[1]
    panel.click()
    assert 2 <= len(drawn) <= len(P.REDRAWS) + 1  # a few redraws and the final figure
    assert panel.status.value.startswith("fit at step")
