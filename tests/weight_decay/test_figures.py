"""dynamics.weight_decay.figures: figures built from fresh and JSON data, rendered in the house
layout, and the tables of the results."""
import pytest

from dynamics import plots
from known import known_answer
from dynamics.weight_decay import experiments as E
from dynamics.weight_decay import figures as F
from dynamics.weight_decay import science as S


def _rendered(fig):
    html = plots.to_html(fig)
    assert "Plotly.newPlot" in html
    return plots.house(fig)


def test_grid_figure_marks_best_cells_and_ridges(payload):
    fig = _rendered(F.grid_figure(payload))
    kinds = [t for t in fig.data if t.type == "heatmap"]
    assert len(kinds) == 2 and sum(t.showscale is not False for t in kinds) == 1
    assert sum(t.name == "best cell" for t in fig.data) == 2  # one outlined best cell per grid
    names = [t.name for t in fig.data if t.type == "scatter"]
    assert "best λ per η (both panels)" in names and "ηλ·t = 1 (AdamW panel)" in names
    for kinds in (E.DECOUPLING, ("adamw", "adamw_invariant")):
        fig2 = _rendered(F.grid_figure(payload, kinds))
        shown = [t for t in fig2.data if t.type == "scatter" and t.showlegend is not False]
        assert shown and all("panel" in t.name for t in shown)  # each entry names its panel(s)
        for t in shown:  # no white swatch on the white legend (nor a black one in dark mode)
            swatch = (t.line.color if t.mode == "lines" else t.marker.line.color).lower()
            assert swatch in [c.lower() for c in plots.PALETTE] or t.mode == "markers", t.name
            assert not swatch.startswith(("white", "rgba(255,255,255", "#fff")), t.name
    assert "ηλ·t = 1 (both panels)" in [t.name for t in fig2.data]
    assert fig.layout.title.text.startswith("Test accuracy after")
    fig3 = F.grid_figure(payload, ("adamw", "adamw_invariant"))
    assert [a.text for a in fig3.layout.annotations][:2] == [E.LABELS["adamw"], E.LABELS["adamw_invariant"]]


def test_grid_slider_has_one_step_per_evaluation(payload):
    fig = _rendered(F.grid_slider(payload))
    assert len(fig.layout.sliders[0].steps) == len(payload.eval_steps)
    assert fig.layout.sliders[0].y == 0  # placed by the house layout, below the plot


def test_ridge_rows(payload):
    rows = F.ridge_rows(payload, tuple(S.GRIDS))
    assert len(rows) == len(payload.lrs)
    assert "AdamW: best ηλ" in rows[0] and "invariant: best ηλ" in rows[0]
    plots.table(rows)


@known_answer(F.ridge_rows, how="a column whose accuracy rises to the grid's largest decay has "
              "its best there, a lower bound: '≥ 10' and '≥ 0.1' (eta 0.01); an interior best "
              "is a number")
def test_ridge_rows_mark_a_best_at_the_grid_edge():
    acc = [[[0.1], [0.1]], [[0.2], [0.5]], [[0.3], [0.3]]]  # [decay][lr][eval]
    grid = E.Grid(kind="adamw", decays=[0.1, 1.0, 10.0], lrs=[0.01, 0.1], eval_steps=[1], seeds=[0],
                  test_acc=acc, train_loss=None, test_acc_seeds=None, stopped=False, diverged=0,
                  strategy=None, wall_time=None)
    rows = F.ridge_rows(E.decoupling({"adamw": grid}, 0), ("adamw",))
    assert rows[0]["AdamW: best λ"] == "≥ 10" and rows[0]["AdamW: best ηλ"] == "≥ 0.1"
    assert isinstance(rows[1]["AdamW: best λ"], float) and 0.1 < rows[1]["AdamW: best λ"] < 10


def test_figures_of_the_other_sections():
    eq = E.run_equilibrium(S.EquilibriumConfig.for_profile("smoke", steps=40), 0, bars=False)
    fig = _rendered(F.equilibrium_figure([eq, eq]))
    assert sum(t.showlegend is not False for t in fig.data if t.name) >= 4
    rows = F.equilibrium_rows(eq)
    assert len(rows) == 3 and all(isinstance(r["RMS"], float) for r in rows)
    clock = E.run_clock(S.ClockConfig.for_profile("smoke", steps=40), 0, bars=False)
    fig = _rendered(F.clock_figure(clock))
    assert len(fig.data) == 4
    rows = F.clock_rows(clock)
    assert [r["ηλ"] for r in rows] == pytest.approx([clock.product] * 3 + [4 * clock.product])
    spec = E.run_spectrum(S.SpectrumConfig.for_profile("smoke", steps=40, width=16), 0, bars=False)
    fig = _rendered(F.spectrum_figure(spec))
    assert [t.name for t in fig.data if t.showlegend is not False] == ["λ = 0", "λ = 2", "initialization"]
    assert len(F.spectrum_rows(spec)) == 6
    runs = list(spec.runs.values())  # section 4's prose quotes both accuracies: the table prints them
    assert [(r["train acc"], r["test acc"]) for r in F.spectrum_rows(spec)] == [
        (run.train_acc, run.test_acc) for run in runs for _ in run.stats]
