import json
import re

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import dynamics
from dynamics import plots
from dynamics.train import History


def _history(n=5, scale=1.0):
    h = History()
    for i in range(n):
        h.append(i * 10, train_acc=scale * i / n, test_acc=scale * i / (2 * n))
    return h


def test_figures_render_as_self_drawing_html():
    fig = plots.curves(_history(), ["train_acc", "test_acc"], logx=True)
    out = plots.to_html(fig)
    div = re.search(r'<div id="(dyn-[0-9a-f]+)"', out).group(1)
    assert f"Plotly.newPlot('{div}'" in out
    assert "if (window.Plotly)" in out and plots.CDN in out  # local first, CDN only as fallback
    spec = json.loads(re.search(r"var fig = (\{.*\});\n", out).group(1))
    assert len(spec["data"]) == 2 and spec["layout"]["xaxis"]["type"] == "log"


def test_book_renderer_emits_html_only():
    dynamics.setup(quiet=True)
    assert pio.renderers.default == "dynamics"
    bundle = pio.renderers["dynamics"].to_mimebundle(go.Figure().to_dict())
    assert list(bundle) == ["text/html"]


def test_curves_mark_divergence():
    h = _history()
    h.diverged_at = 40
    fig = plots.curves({"big lr": h}, ["train_acc"])
    assert "(diverged)" in fig.data[0].name


def test_slider_toggles_visibility():
    figs = [plots.curves(_history(scale=s), ["train_acc", "test_acc"]) for s in (0.5, 1.0, 2.0)]
    fig = plots.slider(figs, [0.5, 1.0, 2.0], name="scale")
    assert len(fig.data) == 6
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["0.5", "1.0", "2.0"]
    vis = steps[1].args[0]["visible"]
    assert vis == [False, False, True, True, False, False]
    assert [t.visible for t in fig.data] == [False] * 4 + [True] * 2  # last step active
    with pytest.raises(ValueError):
        plots.slider(figs, [1, 2])


def test_heatmap_and_bars():
    z = np.arange(6).reshape(2, 3)
    fig = plots.heatmap(z, [1e-3, 1e-2, 1e-1], [0.0, 1.0], logx=True, xtitle="lr", ytitle="wd")
    assert fig.data[0].x == ("0.001", "0.01", "0.1")
    assert np.array_equal(np.asarray(fig.data[0].z), z)
    b = plots.bars(["a", "b"], [1.0, 2.5])
    assert list(b.data[0].text) == ["1", "2.5"]


def test_table_escapes_html():
    html = plots.table([{"claim": "<b>x</b>", "measured": 1.5}]).data
    assert "&lt;b&gt;" in html and "<td>1.5</td>" in html
