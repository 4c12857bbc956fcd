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
