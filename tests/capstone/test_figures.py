"""dynamics.capstone.figures: the figures build from runs and from the precomputed payload."""
import pytest

from dynamics.capstone import figures as F
from dynamics.capstone import experiments as E
from dynamics.capstone.science import OneConfig

TINY = OneConfig(p=11, train_frac=0.8, width=16, steps=30, n_evals=10, rewind_step=3)


@pytest.fixture(scope="module")
def tiny():
    return E.run(TINY, 0)


def test_timeline_figure_has_six_panels_on_one_axis(tiny):
    fig = F.timeline_figure(tiny, title="t")
    axes = {tr.yaxis for tr in fig.data}
    assert len(axes) == 6
    names = {tr.name for tr in fig.data}
    assert {"train accuracy", "test accuracy", "weight RMS", "√(η/2λ)", "NC1",
            "rank of the update", "Fourier concentration"} <= names
    tl = F.timeline_of(tiny)
    assert list(F.timeline_figure(tl).data[0].y) == tl["train_acc"]
    step = next(t for t in fig.data if t.name == "rank of the step, decay taken out")
    assert list(step.y) == list(tiny.timeline["step_rank"]) and step.line.dash == "dot"
    weights = next(t for t in fig.data if t.name == "rank of the weights")
    assert step.line.color != weights.line.color  # the two lie close late in training


def test_question_figures(tiny):
    cell = lambda **k: E.GridRow(**{**dict(  # noqa: E731
        init_scale=1.0, weight_decay=1.0, seed=0, optimizer="adamw", fit_step=10, grok_step=None,
        phase="memorization", tau=100.0, final_train_acc=1.0, final_test_acc=0.5, status="ok",
        lr=1e-2), **k})
    rows = [cell(init_scale=s, fit_step=10, grok_step=g, seed=0) for s, g in ((0.5, 100), (2, None))]
    assert len(F.init_figure(rows).data) == 4
    clock = [cell(lr=lr, tau=1 / lr, grok_step=g) for lr, g in ((1e-2, 200), (2e-2, 90), (3e-2, 70), (5e-2, None))]
    fig = F.clock_figure(clock, 1000)
    # a cell that never groks sits at the budget's edge, and its hover says so
    no = [t for t in fig.data if t.name and "no grok" in t.name]
    assert len(no) == 1 and list(no[0].y) == [1000]
    assert "no grok within 1,000 steps" in no[0].hovertemplate
    assert max(max(t.y) for t in fig.data if t.mode == "markers" and len(t.y)) == 1000
    assert any("slope" in (tr.name or "") for tr in fig.data)
    opt = dict(adamw=dict(best=tiny), muon=dict(best=tiny))
    fig = F.optimizer_figure(opt)
    assert len(fig.data) == 6  # per optimizer: test accuracy, the update's rank, the step's
    steps = [t for t in fig.data if t.name and t.name.endswith("decay taken out")]
    assert len(steps) == 2 and all(t.line.dash == "dot" for t in steps)
    assert list(steps[0].y) == list(tiny.timeline["step_rank"])
    lot = E.lottery(tiny)
    assert len(F.lottery_figure(lot).data) == 2 * len(lot["arms"])


def test_the_initial_scale_axis_is_labelled_at_the_swept_scales():
    """The published figure's log axis had ticks 0.5, 1, 2 for the scales 0.5, 1, 4: the x4
    column sat unlabelled past a "2"."""
    cell = lambda **k: E.GridRow(**{**dict(  # noqa: E731
        init_scale=1.0, weight_decay=1.0, seed=0, optimizer="adamw", fit_step=10, grok_step=None,
        phase="memorization", tau=100.0, final_train_acc=1.0, final_test_acc=0.5, status="ok",
        lr=1e-2), **k})
    fig = F.init_figure([cell(init_scale=s, grok_step=100) for s in (0.5, 1.0, 4.0)])
    assert list(fig.layout.xaxis.tickvals) == [0.5, 1.0, 4.0]
    assert list(fig.layout.xaxis.ticktext) == ["0.5", "1", "4"]


def test_the_grid_slider_says_which_line_is_test_and_which_train():
    """Each weight decay drew a solid and a dotted line of one colour under one legend entry,
    and nothing said which was which: two legend entries say it, on every slider position."""
    from dynamics import results
    payload, _ = results.load(E.GRID_FILE, as_=E.CapstoneGrid)
    fig = F.grid_slider(payload)
    keys = {(r.optimizer, r.init_scale) for r in payload.rows}
    for label, dash in F.GRID_LINES:
        mine = [t for t in fig.data if t.name == label]
        assert len(mine) == len(keys) and all(t.line.dash == dash for t in mine)
    shown = [t for t in fig.data if t.visible]
    tests = [t for t in shown if t.name.startswith("λ") and t.showlegend is not False]
    trains = [t for t in shown if t.name.endswith(", train")]
    assert tests and all(t.line.dash in (None, "solid") for t in tests)
    assert len(trains) == len(tests) and all(t.line.dash == "dot" for t in trains)


def test_the_clock_figure_draws_the_wait_the_row_judges():
    """The final referee's point: both clock figures drew the grok step and its fit alone,
    while the clock row judges the wait after the fit step, grok step − fit step. A second
    set of markers and its fit line draw that wait, each labelled."""
    from dynamics.capstone import facts as Fa
    cell = lambda **k: E.GridRow(**{**dict(  # noqa: E731
        init_scale=1.0, weight_decay=1.0, seed=0, optimizer="adamw", fit_step=10, grok_step=None,
        phase="memorization", tau=100.0, final_train_acc=1.0, final_test_acc=0.5, status="ok",
        lr=1e-2), **k})
    # grok = 60 + 3 τ: the wait is exactly 3 τ (slope 1), the grok step's slope is lower
    taus = (25.0, 50.0, 100.0, 200.0)
    rows = [cell(lr=lr, tau=t, fit_step=60, grok_step=60 + round(3 * t))
            for lr in (1e-2, 2e-2) for t in taus] + [cell(lr=2e-2, tau=400.0, grok_step=None)]
    fig = F.clock_figure(rows, 3000)
    by = {t.name: t for t in fig.data}
    for lr in ("0.01", "0.02"):
        grok, wait = by[f"η = {lr}: grok step"], by[f"η = {lr}: wait, grok − fit"]
        assert list(wait.y) == [3 * t for t in taus] == [g - 60 for g in grok.y]
        assert list(wait.x) == list(grok.x) == list(taus)
        assert wait.marker.symbol == "circle-open" and grok.marker.symbol == "circle"
    # the cell that never groks is drawn once, as a cross at the budget, not as a wait
    crosses = [t for t in fig.data if t.name.endswith("no grok within 3,000 steps")]
    assert [list(t.y) for t in crosses] == [[3000]]
    lines = {t.name[len("fit of the "):].split(":")[0]: t for t in fig.data
             if t.mode == "lines"}
    assert set(lines) == {"grok step", "wait, grok − fit"}
    wait_fit = E.clock_fit(Fa.plateau_cells(rows))
    assert wait_fit["slope"] == pytest.approx(1.0, abs=1e-3)
    assert lines["wait, grok − fit"].name == "fit of the wait, grok − fit: slope 1.00, r² 1.00"
    assert lines["wait, grok − fit"].line.dash == "dot" and lines["grok step"].line.dash == "dash"
    # the line is the fit: at τ = 25, its left end, it passes through 3 τ = 75
    w = lines["wait, grok − fit"]
    assert w.y[list(w.x).index(min(w.x))] == pytest.approx(75, rel=1e-3)
    assert float(lines["grok step"].name.split("slope ")[1].split(",")[0]) < 0.9
