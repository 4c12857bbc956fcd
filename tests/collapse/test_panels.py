"""dynamics.collapse.panels: the live panels driven headlessly (constructed, set, clicked,
stopped, a diverging setting)."""

import pytest

from dynamics import collapse as NC
from dynamics.train import History

from stopping import stop_mid_run

# ----------------------------------------------------------------------------- panels


PANELS = [NC.collapse_panel, NC.simplex_panel, NC.conditions_panel, NC.imbalance_panel]


@pytest.mark.parametrize("make", PANELS)
def test_panels_build_say_where_the_figure_above_came_from_and_refuse_bad_values(make):
    panel = make("smoke")
    assert panel.controls
    assert isinstance(panel.above, dict) and "computed in advance" in panel.static_note()
    name = next(iter(panel.controls))
    with pytest.raises(ValueError):
        panel.set(**{name: 10 ** 9})


def test_panels_honour_the_seed_argument_and_dynamics_seed(monkeypatch):
    from dynamics.collapse import panels

    seen = []

    def fake_run(cfg, seed=0, *args, **kwargs):
        seen.append(seed)
        return History(info=dict(steps=1, config=cfg.to_dict())), None

    monkeypatch.setattr(panels, "run_collapse", fake_run)
    monkeypatch.setenv("DYNAMICS_SEED", "7")
    NC.collapse_panel("smoke").click()
    NC.conditions_panel("smoke").click()  # with weight decay: the run and its twin without
    NC.collapse_panel("smoke", seed=3).click()
    assert seen == [7, 7, 7, 3]


def test_collapse_panel_runs_without_progress_bars_and_reports_what_happened(monkeypatch):
    import tqdm.auto

    def no_bars(*args, **kwargs):
        raise AssertionError("a panel must not create tqdm bars")

    monkeypatch.setattr(tqdm.auto, "tqdm", no_bars)
    panel = NC.collapse_panel("smoke")
    panel.set(steps=100)
    panel.click()
    assert panel.figure is not None and panel.status.value in ("done", "done: training error never "
                                                               "reached 0 (no terminal phase)")
    assert panel.progress.value == 1.0


def test_a_diverging_setting_is_reported_and_the_panel_keeps_working():
    panel = NC.conditions_panel("smoke")
    panel.set(optimizer="momentum", lr=1.0, weight_decay=0.0, linear_depth=6, width=512)
    panel.click()
    assert panel.status.value.startswith("diverged at step"), panel.status.value
    assert panel.figure is not None
    panel.set(optimizer="adamw", lr=3e-3, linear_depth=2, width=64)
    panel.click()
    assert not panel.status.value.startswith(("diverged", "failed")), panel.status.value


@pytest.mark.parametrize("make,values", [
    (NC.conditions_panel, dict(optimizer="adamw", width=64, steps=20000)),
    (NC.imbalance_panel, dict(ratio=10.0, steps=200000)),
])
def test_a_long_run_shows_progress_and_stops_when_asked(make, values, monkeypatch):
    from dynamics.collapse import panels

    # make the run long enough to stop in the middle
    if make is NC.conditions_panel:
        long = dict(n_train=500, width=64, steps=20000, n_evals=24)
        monkeypatch.setattr(panels.CollapseConfig, "for_profile", classmethod(lambda cls, p=None: cls(**long)))
    else:
        long = dict(steps=200000, ufm_steps=200000)
        monkeypatch.setattr(panels.ImbalanceConfig, "for_profile", classmethod(lambda cls, p=None: cls(**long)))
    panel = make("smoke").set(**values)
    stop_mid_run(panel)  # pressed while the run waits at its first progress between 0 and 1
    assert panel.status.value.startswith("stopped"), panel.status.value
    assert not panel.button.disabled


def test_imbalance_panel_click_draws_the_geometry():
    panel = NC.imbalance_panel("smoke")
    panel.set(ratio=3.0)
    panel.click()
    assert panel.figure is not None and panel.status.value == "done", panel.status.value


# ----------------------------------------------------------------------------- live (issue 43)


def test_each_panels_work_grows_with_the_settings_it_names():
    from dynamics.collapse import panels as P

    assert P.collapse_work(steps=2000) > P.collapse_work(steps=500)
    assert P.simplex_work(n_classes=4, steps=600) > P.simplex_work(n_classes=3, steps=600)
    assert P.simplex_work(n_classes=4, steps=1800) > P.simplex_work(n_classes=4, steps=600)
    base = dict(weight_decay=1.0, width=128, linear_depth=2, steps=250)
    cw = P.conditions_work
    assert cw(**base) > cw(**dict(base, weight_decay=0.0))  # with decay: the run and its twin
    for bigger in (dict(width=256), dict(linear_depth=4), dict(steps=750)):
        assert cw(**dict(base, **bigger)) > cw(**base), bigger
    assert P.imbalance_work(steps=3000, linear_depth=3) > P.imbalance_work(steps=1000, linear_depth=3)
    assert P.imbalance_work(steps=1000, linear_depth=5) > P.imbalance_work(steps=1000, linear_depth=3)


@pytest.mark.parametrize("make", PANELS)
def test_a_panel_says_what_a_bigger_setting_costs_and_its_defaults_are_a_slider_from_the_full_run(make):
    panel = make("cpu")
    assert panel.work is not None and panel.estimate() is None  # at the defaults: nothing to say
    full = panel.specs[-1]
    assert full.name == "steps" and full.high >= 4000 > panel.values["steps"]
    if make is NC.conditions_panel:  # its defaults are AdamW: the full run above is not a slider away
        assert "slide the steps" not in panel.note and "AdamW" in panel.title
        assert "sgd, learning rate 1," in panel.note and "4,000 steps" in panel.note
    else:
        assert "slide the steps to 4,000" in panel.note
    if make is NC.simplex_panel:
        assert "drifting away" in panel.note
    panel.set(steps=3 * panel.values["steps"])
    assert "× the defaults' work" in panel.estimate()


def test_redraws_draw_at_a_few_fractions_of_the_run_by_steps():
    from dynamics.collapse.panels import redraws

    class FakeUpdate:
        stop_requested = False
        drawn = []

        def every(self, build):
            return lambda step, history, model: False

        def __call__(self, fig=None, **_):
            self.drawn.append(fig)

    update = FakeUpdate()
    progress, draw = redraws(update, lambda h: h, 1000, at=(0.1, 0.4, 0.7))
    for step in (0, 1, 2, 5, 60, 120, 300, 450, 500, 699, 1000):
        assert draw(step, step, None) is False
    assert update.drawn == [120, 450, 1000]


def test_at_their_defaults_the_panels_show_their_phenomena(monkeypatch):
    """At smoke, seed 0, each panel as clicked: NC1 falls in the terminal phase; the class
    means move toward the simplex; weight decay ends with a lower NC1 than its twin without;
    the free model's rows shrink with the class count, as the exact solution's."""
    import numpy as np

    from dynamics.collapse import panels
    from dynamics.collapse.science import at_zero_error

    runs = []
    real_collapse, real_imbalance = panels.run_collapse, panels.run_imbalance
    monkeypatch.setattr(panels, "run_collapse",
                        lambda *a, **k: runs.append(real_collapse(*a, **k)) or runs[-1])
    monkeypatch.setattr(panels, "run_imbalance",
                        lambda *a, **k: runs.append(real_imbalance(*a, **k)) or runs[-1])
    for make in PANELS:
        runs.clear()
        panel = make("smoke", 0)
        panel.click()
        assert panel.status.value == "done" and "first_s" in panel.timing, panel.status.value
        if make is NC.collapse_panel:
            h = runs[0][0]
            assert h.last("nc1") < at_zero_error(h, "nc1") / 5
        elif make is NC.simplex_panel:
            h = runs[0][0]
            assert h.last("etf_distance") < h["etf_distance"][1] / 2
            assert h.last("equiangularity") < h["equiangularity"][1] / 2
        elif make is NC.conditions_panel:  # AdamW: decay keeps ‖D‖ smaller and NC1 lower
            (h, _), (twin, _) = runs
            assert h.last("nc1") < twin.last("nc1")

            def kept(run):  # ‖D‖ at the end ÷ at the first step ≥ 1, as the figure draws it
                return run.last("imbalance") / run["imbalance"][[s >= 1 for s in run.steps].index(True)]
            assert kept(h) < 0.9 * kept(twin), (kept(h), kept(twin))
        else:
            r = runs[0]
            free, exact = r.ufm.classifier_norm, r.theory.classifier_norm
            assert np.all(np.diff(free) < 0) and np.allclose(free, exact, rtol=0.01)


# ----------------------------------------------------------------------------- figures


def _frames(C=4, n=6, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return [dict(means=rng.normal(size=(C, 3)), weight=rng.normal(size=(C, 3)),
                 etf=rng.normal(size=(C, 3)), points=rng.normal(size=(20, 3)),
                 labels=rng.integers(0, C, 20)) for _ in range(n)], list(range(0, 10 * n, 10))


def test_the_3d_sliders_fast_path_draws_the_same_figure_and_leaves_the_default_template():
    import plotly.io as pio

    from dynamics.collapse.figures import simplex_frames_figure

    before = pio.templates.default
    frames, steps = _frames()
    fast = simplex_frames_figure(frames, steps, title="t")
    assert pio.templates.default == before
    plain = simplex_frames_figure(frames, steps, title="t", fast=False)
    assert fast.to_json() == plain.to_json()
    assert pio.templates.default == before


def test_conditions_figure_divides_the_imbalance_by_its_value_at_step_1():
    import numpy as np

    from dynamics.collapse.figures import conditions_figure

    h = History(info=dict(steps=10))
    for step, d in ((0, 5.0), (1, 2.0), (10, 4.0)):
        h.append(step, imbalance=d, train_loss=1.0)
    fig = conditions_figure({"run": h})
    tr = [t for t in fig.data if t.xaxis == "x3"][0]
    assert np.allclose(tr.y, [1.0, 2.0])


def test_the_simplex_note_says_how_the_full_run_ends(monkeypatch):
    """The section 2 panel's note reads the precomputed full run: nearest at its least
    distance to the ETF, and 'drifts' only where it ends more than a fifth farther (the
    regenerated run of 2026-11-29 drifts from 0.060 to 0.092; a run that ends near its least
    ends there)."""
    from dynamics import results
    from dynamics.collapse import panels as P

    def fake(dist):
        def load(name, as_=None):
            assert as_ is NC.experiments.Simplex  # read through its record
            return as_(frames=[], steps=[], final_means=[], history={
                "steps": [0, 100, 200, 300], "metrics": {"etf_distance": dist}}), {}
        return load

    monkeypatch.setattr(results, "load", fake([0.5, 0.1, 0.11, 0.2]))
    assert P._full_run_end() == "the full run comes nearest at step 100 (distance 0.100), then drifts to 0.200 by its end."
    monkeypatch.setattr(results, "load", fake([0.5, 0.2, 0.1, 0.11]))
    assert P._full_run_end() == "the full run comes nearest at step 200 (distance 0.100) and ends there (0.110)."
