"""dynamics.grokking.panels: the live panels run headlessly (construct, set, click, stop,
refuse bad values, survive a diverging run, honour the seed); ``panel`` names each by kind."""
import numpy as np
import pytest

from dynamics.grokking import panels as P


def test_panel_names_each_panel_by_kind():
    assert P.panel("remedy", "smoke", seed=0).title == P.remedy_panel("smoke", seed=0).title
    with pytest.raises(ValueError, match="unknown panel"):
        P.panel("nope")


def _stop_at_start(panel):
    """Make the panel's run press Stop as it starts (what a reader's click would do)."""
    run = panel.run_fn

    def pressed(update, **values):
        panel.stop()
        return run(update, **values)

    panel.run_fn = pressed
    return panel


def test_training_panel_runs_refuses_and_survives():
    panel = P.training_panel("smoke", seed=3)
    assert panel.above == "live" and "seed 3" in panel.note
    panel.set(p=11, width=16, train_frac=0.7)
    fig = panel.click()
    assert fig is not None and panel.runs == 1
    assert panel.status.value.startswith("fit at step") and panel.progress.value == 1.0
    with pytest.raises(ValueError):
        panel.set(train_frac=1.5)  # refused, not clamped
    with pytest.raises(ValueError):
        panel.set(lr=-0.1)
    panel.set(op="div", p=12)
    panel.click()
    assert panel.status.value.startswith("invalid")  # a clear message, the panel survives
    panel.set(op="add", p=11, lr=1.0, weight_decay=10.0)
    panel.click()  # lr x wd = 10: the weights flip sign and grow every step
    assert panel.status.value.startswith("diverged at step") and not panel.button.disabled
    assert any("(diverged)" in (tr.name or "") for tr in panel.figure.data)
    panel.set(lr=1e-2, weight_decay=1.0)
    _stop_at_start(panel).click()
    assert panel.status.value.startswith("stopped") and not panel.button.disabled
    assert len(panel.figure.data[0].x) <= 2  # what it had when stopped: the first evaluations


def test_panels_honour_the_seed():
    a = P.training_panel("smoke", seed=1).set(p=11, width=16)
    b = P.training_panel("smoke", seed=1).set(p=11, width=16)
    c = P.training_panel("smoke", seed=2).set(p=11, width=16)
    ya, yb, yc = (np.asarray(p.click().data[1].y) for p in (a, b, c))
    np.testing.assert_array_equal(ya, yb)
    assert not np.array_equal(ya, yc)


def test_progress_and_remedy_panels():
    progress = P.progress_panel("smoke").set(p=11, train_frac=0.7)
    assert progress.click() is not None and progress.status.value.startswith("fit at step")
    assert len(progress.figure.data) == 6  # the progress figure, not the training curves
    progress.set(op="mul")
    progress.click()  # no Fourier measures for mul: a clear message, the panel survives
    assert progress.status.value.startswith("invalid")
    remedy = P.remedy_panel("smoke")
    assert set(remedy.controls) == {"remedy", "weight_decay", "grokfast_alpha",
                                    "grokfast_lambda", "label_noise", "optimizer", "steps"}
    assert remedy.above == "live"
    _stop_at_start(remedy.set(remedy="grokfast")).click()
    assert remedy.status.value.startswith("stopped")


def test_phase_panel_progress_stop_and_divergence():
    phase = P.phase_panel("smoke").set(p=7, width=8, steps=100)
    assert phase.above == "live"
    ticks = []
    phase.progress.observe(lambda change: ticks.append(change["new"]), names="value")
    assert phase.click() is not None and phase.status.value.startswith("6 of 6 models trained")
    assert len(set(ticks)) > 3  # progress moved during the sweep, not only at the end
    phase.set(lr=1.0)  # lr x wd = 4 at the largest decay: those models diverge, the rest go on
    phase.click()
    assert "diverged" in phase.status.value
    assert any("diverged" in str(t) for row in phase.figure.data[0].text for t in row)
    phase.set(lr=1e-2)
    # the reader presses Stop once the sweep has started: what ran is shown, the rest is marked
    pressed = []

    def press(change):
        if 0 < change["new"] < 1 and not pressed:
            pressed.append(change["new"])
            phase.stop()

    phase.progress.observe(press, names="value")
    phase.click()
    assert phase.status.value.startswith("stopped")
    cells = [str(t) for row in phase.figure.data[0].text for t in row]
    assert any(c.startswith(("not run", "stopped")) for c in cells)


def test_panels_say_what_a_setting_costs():
    """Each panel's work grows with the settings that make its run longer (a constructed case:
    no clock), and the estimate says so before the first run."""
    training = P.training_panel("smoke", seed=0)
    at = dict(training.values)
    w = lambda **v: training.work(**{**at, **v})  # noqa: E731
    assert w(steps=2 * at["steps"]) > 1.8 * w()
    assert w(p=59) > w() and w(width=256) > w() and w(train_frac=0.9) > w()
    assert w(optimizer="muon") > w()
    progress = P.progress_panel("smoke", seed=0)
    assert progress.work(**progress.values) > training.work(**{**at, **progress.values})
    remedy = P.remedy_panel("smoke", seed=0)
    assert remedy.work(**{**remedy.values, "remedy": "grokfast"}) > remedy.work(**remedy.values)
    training.set(steps=4 * at["steps"])
    assert "× the defaults' work" in training.estimate()
    phase = P.phase_panel("smoke", seed=0)
    pv = dict(phase.values)
    for name, value in (("steps", 2 * pv["steps"]), ("p", 47), ("width", 128)):
        assert phase.work(**{**pv, name: value}) > phase.work(**pv)


def test_panel_defaults_still_grok():
    """At the panels' defaults the run still groks (train accuracy fits early, test accuracy
    passes the bar at least DELAY x later), and the phase panel's grid still shows the
    phases its prose names: no decay memorizes, decay 1 at the largest fraction groks."""
    from dynamics.grokking.science import DELAY

    panel = P.training_panel("smoke", seed=0)
    panel.click()
    test_acc = [np.asarray(tr.y) for tr in panel.figure.data
                if tr.name == "test" and tr.yaxis == "y"][0]
    assert "(grokking)" in panel.status.value, panel.status.value
    fit, grok = (int(s) for s in panel.status.value.replace(",", "").split()
                 if s.isdigit())
    assert grok >= DELAY * fit and test_acc.max() > 0.95
    phase = P.phase_panel("smoke", seed=0)
    phase.click()
    cells = {(x, y): str(t).split("<br>")[0] for y, row in zip(phase.figure.data[0].y,
                                                               phase.figure.data[0].text)
             for x, t in zip(phase.figure.data[0].x, row)}
    assert all(cells[("0", y)] == "memorization" for y in phase.figure.data[0].y), cells
    assert cells[("1", "0.9")] == "grokking", cells
