"""dynamics.capstone.panels: the live panel runs headlessly and refuses what it cannot run."""
import re

import pytest

from dynamics.capstone import panels as P


def test_timeline_panel_runs_groks_at_its_defaults_and_refuses():
    """At the defaults (seed 0) the network fits the training pairs, then groks well after:
    both steps exist (not "None"), the grok at least three times the fit's step (seed 0:
    fit at 63, grok at 490)."""
    panel = P.timeline_panel("smoke", seed=0)
    assert panel.above == "live" and "seed 0" in panel.note
    assert panel.values["init_scale"] == 1.0 and panel.values["weight_decay"] == 1.0
    fig = panel.click()
    assert fig is not None and panel.runs == 1
    found = re.match(r"fit at step (\d+), grok at step (\d+) \(grokking\)", panel.status.value)
    assert found, panel.status.value
    fit, grok = map(int, found.groups())
    assert grok >= 3 * fit and grok - fit >= 200, (fit, grok)
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
