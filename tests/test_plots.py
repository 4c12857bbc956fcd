import json
import math
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


def test_table_escapes_html_pads_and_aligns_numbers():
    html = plots.table([{"claim": "<b>x</b>", "time (s)": 1.15, "n": 1024, "grok step": None},
                        {"claim": "y", "time (s)": 0.18623, "n": 96, "grok step": 1650}]).data
    assert "&lt;b&gt;" in html
    assert '<td class="num">1,024</td>' in html and '<td class="num">0.186</td>' in html
    assert "not reached" in html and "None" not in html
    assert "padding" in html and "overflow-x: auto" in html  # numbers never run together
    # a column of numbers and printed bounds ("≥ 10") aligns as numbers, and its numbers are
    # printed as numbers (never Python's repr, 0.0032036527288810575, which widened a table)
    mixed = plots.table([{"best λ": "≥ 10"}, {"best λ": 0.0032036527288810575}]).data
    assert '<td class="num">≥ 10</td>' in mixed and '<td class="num">0.0032</td>' in mixed
    assert "0.00320365" not in mixed


def test_numbers_print_with_significant_digits():
    assert plots.number(1650) == "1,650" and plots.number(1650.0) == "1,650"
    assert plots.number(0.18623) == "0.186" and plots.number(-0.5) == "−0.5"
    assert plots.number(3e-7) == "3×10⁻⁷" and plots.number(None) == "—"
    assert plots.number(float("nan"), missing="n/a") == "n/a"


def _housed(fig):
    return plots.house(go.Figure(fig))


def test_house_puts_legend_above_and_slider_below():
    figs = [plots.curves({f"run {i}": _history(scale=s) for i in range(6)}, ["train_acc", "test_acc"],
                         title="a title " * 20) for s in (0.5, 1.0)]
    fig = _housed(plots.slider(figs, ["SGD + momentum", "Muon + AdamW"], name="optimizer"))
    lay = fig.layout
    assert lay.legend.orientation == "h" and lay.legend.y > 1 and lay.legend.yanchor == "bottom"
    assert lay.sliders[0].y == 0 and lay.sliders[0].yanchor == "top"  # below the plot, legend above
    assert lay.sliders[0].pad.t > 40  # clear of the x-axis title
    assert "<br>" in lay.title.text and lay.title.x == 0  # wrapped to the column, left
    assert lay.margin.t >= 10 + 20 * lay.title.text.count("<br>") + 20  # room for title + legend
    assert lay.margin.b >= lay.sliders[0].pad.t + 70  # room for the slider and its labels
    # the end labels of the slider are centred on the rail's ends: they get padding
    assert lay.sliders[0].pad.l > 0 and lay.sliders[0].pad.r > 0


def test_house_hides_slider_labels_that_would_overlap():
    figs = [plots.curves(_history(scale=s), ["train_acc"]) for s in range(40)]
    fig = _housed(plots.slider(figs, [f"label {s}" for s in range(40)], name="s"))
    assert fig.layout.sliders[0].font.color == "rgba(0,0,0,0)"
    assert fig.layout.sliders[0].currentvalue.visible  # the active step is still named


def test_house_labels_log_axes_readably():
    fig = plots.figure(logx=True, logy=True)
    fig.add_scatter(x=np.array([1, 10, 100, 1000, 10000.0]), y=np.array([2.0, 1.0, 0.5, 0.2, 0.1]))
    lay = _housed(fig).layout
    assert {"1", "10", "100", "1,000", "10,000"} <= set(lay.xaxis.ticktext)
    assert lay.yaxis.ticktext == ("0.1", "0.2", "0.5", "1", "2")  # not plotly's bare "5"
    # the same once the figure went through to_dict (plotly >= 6 encodes arrays as base64)
    again = _housed(go.Figure(fig.to_dict())).layout
    assert again.xaxis.ticktext == lay.xaxis.ticktext and again.yaxis.ticktext == lay.yaxis.ticktext
    tight = plots.figure(logy=True)  # less than one 1-2-5 step: round values inside the data
    tight.add_scatter(x=[1, 2, 3], y=[0.21, 0.22, 0.24])
    yaxis = _housed(tight).layout.yaxis
    assert list(yaxis.tickvals) == [0.21, 0.22, 0.23, 0.24]
    assert list(yaxis.ticktext) == ["0.21", "0.22", "0.23", "0.24"]
    narrow = plots.subplots(1, 3)
    narrow.add_scatter(x=np.geomspace(1e-6, 1e2, 20), y=np.arange(20), row=1, col=1)
    narrow.update_xaxes(type="log")
    ticks = _housed(narrow).layout.xaxis.ticktext
    assert len(ticks) <= 4 and ticks[0] == "10⁻⁶"  # only powers of ten fit a third of the width


def test_house_keeps_plot_height_and_is_applied_when_rendering():
    fig = plots.figure(height=500)
    fig.add_scatter(x=[1, 2], y=[1, 2], name="a")
    fig.add_scatter(x=[1, 2], y=[2, 1], name="b")
    housed = _housed(fig)
    assert housed.layout.height - housed.layout.margin.t - housed.layout.margin.b == 400
    out = plots.to_html(fig)
    assert f'height:{housed.layout.height}px' in out and '"orientation":"h"' in out


def test_claims_table_names_its_verdicts(monkeypatch):
    # a row with a handed-in verdict renders only while the ledger of rows not yet on the
    # engine names it (tests/test_claims_engine.py)
    from dynamics import evidence
    monkeypatch.setitem(evidence.NOT_YET_JUDGED, "test", ("x groks",))
    row = plots.claim("x groks", "Power et al. 2022", "grok at step 1,650", "not at this scale")
    html = plots.claims_table([row]).data
    assert "reproduced" in html and "not at this scale" in html
    with pytest.raises(ValueError, match="reproduced must be one of"):
        plots.claim("x", "y", "z", "maybe")


def _narrow(fig):
    """The figure as a phone shows it: the column layout with its narrow patch applied."""
    wide = _housed(fig).to_plotly_json()
    patch = plots.narrow_patch(fig)
    layout = {k: v for k, v in {**wide["layout"], **patch["layout"]}.items() if v is not None}
    data = [dict(t, **(patch["data"][i] if patch["data"] else {})) for i, t in enumerate(wide["data"])]
    return go.Figure(data=data, layout=layout)


def test_narrow_layout_stacks_panels_and_puts_the_legend_below():
    fig = plots.subplots(1, 2, ["Frobenius norm during training", "singular values of hidden.1"],
                         title="mod 37, 70% of the pairs for training, and a long tail of words")
    for i, name in enumerate(["a + b · train", "a + b · test", "no weight decay · train"]):
        fig.add_scatter(x=[1, 2, 3], y=[i, i + 1, i], name=name, legendgroup=name, row=1, col=1)
        fig.add_scatter(x=[1, 2, 3], y=[i, i, i + 1], name=name, legendgroup=name,
                        showlegend=False, row=1, col=2)
    fig.update_xaxes(title_text="step")
    wide, small = _housed(fig).layout, _narrow(fig).layout
    assert wide.xaxis2.domain[0] > wide.xaxis.domain[1]  # side by side in the column
    assert small.xaxis.domain == small.xaxis2.domain == (0, 1)  # stacked on a phone
    assert small.yaxis.domain[0] > small.yaxis2.domain[1]  # the first panel on top
    assert wide.legend.y > 1 and small.legend.y < 0 and small.legend.yanchor == "top"
    lines = small.title.text.split("<br>")
    assert len(lines) > 1 and max(map(len, lines)) * plots.CHAR * 1.1 < plots.NARROW
    # each subplot title sits above its own panel, wrapped to the screen
    titles = sorted(small.annotations, key=lambda a: -a.y)
    assert [round(a.y, 6) for a in titles] == [round(small.yaxis.domain[1], 6),
                                               round(small.yaxis2.domain[1], 6)]
    assert small.dragmode is False and wide.dragmode is None  # a finger scrolls the page
    assert small.height > wide.height


def test_narrow_layout_hides_heatmap_labels_that_do_not_fit_and_keeps_hover():
    z = np.random.default_rng(0).random((8, 12))
    fig = plots.heatmap(z, list(range(12)), list(range(8)), title="steps to generalize")
    patch = plots.narrow_patch(fig)
    assert patch["data"][0]["texttemplate"] == ""
    assert "%{z" in _narrow(fig).data[0].hovertemplate
    few = plots.heatmap(z[:3, :3], [0, 1, 2], [0, 1, 2])  # 3 x 3 cells: the labels fit
    assert not plots.narrow_patch(few)["data"]


def test_to_html_carries_the_narrow_layout_for_the_book_only():
    fig = plots.subplots(1, 2, ["accuracy", "loss"], title="two panels")
    fig.add_scatter(x=[1, 2], y=[1, 2], row=1, col=1)
    fig.add_scatter(x=[1, 2], y=[2, 1], row=1, col=2)
    out = plots.to_html(fig)
    narrow = json.loads(re.search(r"var narrow = (\{.*\});\n", out).group(1))
    assert narrow["layout"]["xaxis2"]["domain"] == [0, 1]
    div = re.search(r'<div id="(dyn-[0-9a-f]+)"', out).group(1)
    # the book's dynamics.js applies it; anywhere else (Jupyter, Colab) the column layout draws
    assert f"if (window.dynamicsFigure) {{ dynamicsFigure('{div}', fig, narrow," in out
    assert f"Plotly.newPlot('{div}', fig.data, fig.layout" in out


def test_the_seeds_spread_is_printed_as_the_claims_tables_print_it():
    from dynamics import plots

    assert plots.spread({0: 0.91, 1: 0.95, 2: 0.93}) == "median 0.93 (0.91–0.95), seeds 0, 1, 2"
    # a quantity not reached on a seed (None or NaN) is named, not averaged in
    assert plots.spread({0: None, 1: float("nan"), 2: 3.0}).startswith(
        "3 on seed 2 only, 2 not reached, seeds 0, 1, 2")
    # equal as printed where some seeds did not reach it: "on every seed that reached it"
    assert plots.spread({0: 0.9, 1: 0.9, 2: None}) == (
        "0.9 on every seed that reached it, 1 not reached, seeds 0, 1, 2")
    assert plots.spread({0: None}) == "— (seed 0)"
    # a quantity reached on no seed: said in words, never as a tuple "(0, 1)" (the page check)
    assert plots.spread({0: None, 1: None}) == "— on every seed, seeds 0, 1"
    # equal ends as printed: one value, never "0.5 (0.5–0.5)"
    assert plots.spread({0: 0.5, 1: 0.50001, 2: 0.5}) == "0.5 on every seed, seeds 0, 1, 2"
    assert plots.spread({0: 0.5, 1: 0.7}).startswith("median 0.6 (0.5–0.7)")
    # an infinite value (a control that never fades) is "∞", never "inf×" with the format's unit
    fmt = lambda x: f"{x:.2f}×"  # noqa: E731
    assert plots.spread({0: 29.15, 1: 80.11, 2: float("inf")}, fmt) == (
        "median 80.11× (29.15×–∞), seeds 0, 1, 2")
    # a format that words an infinite value says it in its words (a pattern never learned)
    worded = lambda x: f"{100 * x:.0f}%" if math.isfinite(x) else "never learned"  # noqa: E731
    assert plots.spread({0: float("inf"), 1: float("inf")}, worded) == (
        "never learned on every seed, seeds 0, 1")
    with pytest.raises(ValueError, match="at least one"):
        plots.spread({})


def test_a_claims_row_prints_its_control_window_and_seeds(monkeypatch):
    from dynamics import evidence, plots

    monkeypatch.setitem(evidence.NOT_YET_JUDGED, "test", ("A beats B",))

    row = plots.claim("A beats B", "paper", "A 0.9, B 0.5", "no", control="B, same budget",
                      window="steps 100–1,000", seeds=[0, 1, 2])
    html = plots.claims_table([row], strict=False).data
    assert "against: B, same budget" in html and "window: steps 100–1,000" in html
    assert "seeds: 0, 1, 2" in html and "✗ no" in html
    assert plots.failed_claims([row]) == [row]


def test_a_labels_colour_reads_on_the_white_page():
    """plots.text_colour: a colour that reads at 4.5:1 on white stays; the palette's green
    (3.9:1) is darkened, its hue kept, until it reads; mark_step's label uses it."""
    from dynamics.plots.builders import text_colour
    from dynamics_toolchain.darkmode import contrast

    assert text_colour("#555") == "#555" and text_colour("#990099") == "#990099"
    green = text_colour("#109618")
    assert green != "#109618" and 4.5 <= contrast(green, "#ffffff") < 5.5
    assert text_colour("#ffffff") != "#ffffff" and contrast(text_colour("#ffffff"), "#ffffff") >= 4.5
    fig = plots.mark_step(plots.figure(), 10, "fit 10", color="#109618")
    assert fig.layout.annotations[0].font.color == green
    assert fig.layout.shapes[0].line.color == "#109618"  # the line keeps its colour


def test_stacked_panels_that_shared_a_y_axis_each_show_its_ticks():
    """On a phone the panels stack; the right panel of a shared-y pair hid its tick labels
    beside the left one, and stacked it had none (spectral's "per second", initialization's μP)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, subplot_titles=["per step", "per second"])
    fig.add_scatter(x=[1, 2], y=[1, 2], row=1, col=1)
    fig.add_scatter(x=[1, 2], y=[2, 1], row=1, col=2)
    wide = plots.house(go.Figure(fig), narrow=False)
    assert wide.layout.yaxis2.showticklabels is False  # beside its neighbour: shared
    narrow = plots.house(go.Figure(fig), width=390, narrow=True)
    assert narrow.layout.yaxis2.domain[1] < narrow.layout.yaxis.domain[0]  # stacked
    assert narrow.layout.yaxis2.showticklabels is True


def test_the_verdicts_the_prose_glues_are_their_rows():
    """plots.verdicts: each name gets the verdict of the one row whose claim starts as given; a
    start that matches no row, or two, is refused with its name (a sentence must not state a
    verdict its table does not print)."""
    from dynamics import plots

    rows = [plots.claim("Tickets match the dense network", "Frankle & Carbin (2019)", "x", "yes"),
            plots.claim("Tickets learn faster", "Frankle & Carbin (2019)", "y", "partly"),
            plots.claim("Tickets learn faster, again", "Frankle & Carbin (2019)", "z", "no")]
    assert plots.verdicts(rows, match="Tickets match") == {"match": rows[0]["reproduced"]}
    assert rows[0]["reproduced"] != rows[1]["reproduced"]
    with pytest.raises(ValueError, match="speed: expected one claims row starting 'Tickets learn'"):
        plots.verdicts(rows, speed="Tickets learn")
    with pytest.raises(ValueError, match="found 0"):
        plots.verdicts(rows, none="Pruning at init")


def test_control_passes_reads_the_seeds_from_the_rows_numbers():
    """plots.control_passes: the seeds on which a row's control passes the row's own test
    (every part of it), and by how much it misses on the others, from the numbers the row
    keeps (constructed: a bound of 0.2 and controls 0.151, 0.2032, 0.19 pass on seeds 0 and
    2 and miss by 0.0032 on seed 1), worded for a sentence; a row not found is refused."""
    from dynamics import plots

    def part(controls, threshold=0.2):
        return {"label": "", "test": {"op": "<=", "threshold": threshold, "name": "ANGLE_TOL",
                                      "scale": "linear"},
                "treatment": {s: 0.03 for s in controls}, "control": controls, "noise": None,
                "verdict": "does not discriminate"}

    def row(*parts, name="SGD: angle"):
        return plots.claim(name, "paper", "x", "does not discriminate", False, evidence=list(parts))

    rows = [row(part({0: 0.151, 1: 0.2032, 2: 0.19})), row(part({0: 1.0}), name="Other")]
    assert plots.control_passes(rows, "SGD") == \
        "on seeds 0 and 2 of 0, 1, 2, and misses it by 0.0032 on seed 1"
    assert plots.control_passes([row(part({0: 0.3, 1: 0.1, 2: 0.5}))], "SGD") == \
        "on seed 1 of 0, 1, 2, and misses it by 0.1 on seed 0; by 0.3 on seed 2"
    assert plots.control_passes([row(part({0: 0.1, 1: 0.1}))], "SGD") == "on every seed (0, 1)"
    assert plots.control_passes(rows, "Other") == "on no seed (the nearest misses by 0.8, seed 0)"
    # a row of two parts: a seed's control passes only if it passes both
    two = row(part({0: 0.1, 1: 0.1}), part({0: 0.1, 1: 0.5}, threshold=0.3))
    assert plots.control_passes([two], "SGD") == "on seed 0 of 0, 1, and misses it by 0.2 on seed 1"
    with pytest.raises(ValueError, match="control_passes: expected one judged claims row"):
        plots.control_passes(rows, "Nothing")


def test_slider_copies_traces_as_a_figure_per_trace_would():
    """plots.slider copies each trace without a figure of its own (fast: no default template
    merged per copy); the result is the figure the plain copy (``go.Figure(tr).data[0]``)
    gives, trace for trace, and the copies leave the source figures untouched."""
    import plotly.graph_objects as go

    figs = []
    for k in range(3):
        f = go.Figure()
        f.add_scatter(x=[0, 1], y=[k, k + 1], name=f"run {k}", line=dict(color="#123456"))
        f.add_scatter3d(x=[0], y=[1], z=[k], mode="markers", name="point")
        f.update_layout(title=f"step {k}")
        figs.append(f)
    fig = plots.slider(figs, [0, 1, 2], name="step")
    plain = [go.Figure(tr).data[0] for f in figs for tr in f.data]
    assert len(fig.data) == len(plain) == 6
    for got, want in zip(fig.data, plain):
        want = want.to_plotly_json()
        got = got.to_plotly_json()
        assert got.pop("visible") in (True, False)
        want.pop("visible", None)
        assert got == want
    assert [tr.visible for tr in fig.data] == [False] * 4 + [True] * 2
    assert all(tr.visible is None for f in figs for tr in f.data)  # sources untouched
