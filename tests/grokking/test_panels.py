"""dynamics.grokking.panels: the live panels run headlessly (construct, set, click, stop,
refuse bad values, survive a diverging run, honour the seed); ``panel`` names each by kind."""
import re

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
    assert remedy.values["remedy"] == "perp_grad" and remedy.values["weight_decay"] == 0
    assert "⊥Grad" in remedy.note
    assert set(remedy.controls) == {"remedy", "weight_decay", "grokfast_alpha",
                                    "grokfast_lambda", "label_noise", "optimizer", "steps"}
    assert remedy.above == "live"
    _stop_at_start(remedy.set(remedy="grokfast")).click()
    assert remedy.status.value.startswith("stopped")


def test_phase_panel_progress_stop_and_divergence(monkeypatch):
    phase = P.phase_panel("smoke").set(p=7, width=8, steps=100)
    assert phase.above == "live"
    assert "[" not in phase.note and "training fractions 0.6 and 0.9" in phase.note
    ticks = []
    phase.progress.observe(lambda change: ticks.append(change["new"]), names="value")
    grid, first = P.run_phase_grid, []

    def sweep(*args, **kwargs):  # what the panel shows before its first models train
        if not first:
            first.append([str(t) for row in phase.figure.data[0].text for t in row])
        return grid(*args, **kwargs)

    monkeypatch.setattr(P, "run_phase_grid", sweep)
    assert phase.click() is not None and phase.status.value.startswith("6 of 6 models trained")
    assert first and len(first[0]) == 6 and all(c.startswith("not run") for c in first[0])
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


def _reached(note: str) -> set[str]:
    """The settings a note says this panel's sliders reach ("the slider(s) for a, b and c
    reach ..."), as control names."""
    names = {label: name for name, label in P.LABELS.items()}
    out = set()
    for found in re.findall(r"the sliders? for (.+?) reach", note):
        out |= {names[w.strip()] for w in re.split(r",| and ", found) if w.strip()}
    return out


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu"])
def test_notes_claim_only_the_sliders_a_panel_has(profile):
    """A note that says the sliders reach the page's settings names only this panel's
    controls; the settings it has no slider for it says are fixed."""
    for kind in P.PANELS:
        panel = P.panel(kind, profile, seed=0)
        assert _reached(panel.note) <= set(panel.controls), (kind, panel.note)
        assert "sliders reach them" not in panel.note.replace("panel's sliders", "")
    remedy = P.panel("remedy", profile, seed=0)
    if "smaller than the page's runs" in remedy.note:  # a CPU: p and the fraction differ
        assert _reached(remedy.note) == {"steps"}
        assert "p and training fraction are fixed in this panel" in remedy.note
        assert {"p", "train_frac", "steps"} <= _reached(P.panel("training", profile, 0).note)


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
    assert remedy.work(**{**remedy.values, "remedy": "grokfast"}) > remedy.work(
        **{**remedy.values, "remedy": "none"})
    training.set(steps=4 * at["steps"])
    assert "× the defaults' work" in training.estimate()
    phase = P.phase_panel("smoke", seed=0)
    pv = dict(phase.values)
    for name, value in (("steps", 2 * pv["steps"]), ("p", 47), ("width", 128)):
        assert phase.work(**{**pv, name: value}) > phase.work(**pv)


def test_panel_defaults_still_grok():
    """At the panels' defaults the run still groks (train accuracy fits early, test accuracy
    passes the bar at least DELAY x later), the phase panel's grid still shows the
    phases its prose names: no decay memorizes, decay 1 at the largest fraction groks, and
    the remedy panel's ⊥Grad without decay generalizes within 200 steps (seeds 0-2: at step
    92; without it the run memorizes for its whole budget)."""
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
    remedy = P.remedy_panel("smoke", seed=0)  # ⊥Grad without decay: generalizes early
    remedy.click()
    assert "generalized at step" in remedy.status.value, remedy.status.value
    fit, gen = (int(s) for s in remedy.status.value.replace(",", "").split() if s.isdigit())
    assert gen < 200, remedy.status.value


def test_progress_panel_defaults_show_the_progress_measures():
    """At the progress panel's defaults (seed 0) its figure shows what section 3 reads: the
    Fourier concentration rises from the fit to the grok, the weight norm falls after its
    peak, and the restricted loss halves (from its value at the fit) before the test loss
    does (the referee's run: .43 -> .87; norm 46.3 at step 58 -> 35.3; halved at step 115,
    the test loss at 180)."""
    panel = P.progress_panel("smoke", seed=0)
    panel.click()
    assert "(grokking)" in panel.status.value, panel.status.value
    fit, grok = (int(s) for s in panel.status.value.replace(",", "").split() if s.isdigit())
    tr = {t.name: (np.asarray(t.x), np.asarray(t.y, dtype=float)) for t in panel.figure.data}
    at = lambda name, step: tr[name][1][np.searchsorted(tr[name][0], step)]  # noqa: E731
    conc = "Fourier concentration"
    assert at(conc, grok) > at(conc, fit) + 0.2, (at(conc, fit), at(conc, grok))
    steps, norm = tr["weight norm"]
    peak = int(np.argmax(norm))
    assert 0 < peak < len(norm) - 1 and norm[-1] < 0.85 * norm[peak], (steps[peak], norm)

    def halved(name):
        x, y = tr[name]
        after = (x > fit) & (y < at(name, fit) / 2)
        return x[after][0]

    test = [n for n in tr if n.startswith("test loss")][0]
    assert halved("restricted loss") < halved(test), (halved("restricted loss"), halved(test))
