"""dynamics.spectral.panels: the live panels driven headlessly (constructed, set, clicked,
stopped, refused, diverging)."""
import math

import pytest

from dynamics import train as T
from dynamics.spectral import panels as P

from stopping import stop_mid_run


# ----------------------------------------------------------------- panels


def test_ns_panel_runs_refuses_and_survives_diverging_coefficients():
    panel = P.ns_panel("smoke", seed=1)
    assert panel.above == "live" and "computed while this page was built" in panel.static_note()
    panel.set(rows=64, cols=32, spectrum="power law", steps=5)
    assert panel.click() is not None and panel.status.value.startswith("singular values in")
    with pytest.raises(ValueError, match="rows"):
        panel.set(rows=5000)
    with pytest.raises(ValueError, match="spectrum"):
        panel.set(spectrum="flat")
    panel.set(a=5.0, b=8.0, c=8.0, steps=30)
    panel.click()
    assert "diverged" in panel.status.value
    panel.set(a=3.4445, b=-4.775, c=2.0315, steps=5)
    panel.click()
    assert panel.status.value.startswith("singular values in")  # still working


def test_ns_panel_honours_the_seed(monkeypatch):
    a, b = P.ns_panel("smoke", seed=1), P.ns_panel("smoke", seed=2)
    fa, fb = a.click(), b.click()
    assert list(fa.data[0].y) != list(fb.data[0].y)
    monkeypatch.setenv("DYNAMICS_SEED", "2")
    assert list(P.ns_panel("smoke").click().data[0].y) == list(fb.data[0].y)


def test_practice_panel_trains_diverges_and_stops():
    panel = P.practice_panel("smoke", seed=0)
    assert isinstance(panel.above, dict) and "computed in advance" in panel.static_note()
    panel.set(optimizer="muon", lr=0.05, steps=20, width=16)
    panel.click()
    assert panel.status.value.startswith("final training loss")
    panel.set(optimizer="momentum", lr=3.0, steps=40, width=256, depth=3)
    panel.click()
    assert panel.status.value.startswith("diverged at step")
    with pytest.raises(ValueError, match="lr"):
        panel.set(lr=10.0)
    panel.set(optimizer="adamw", lr=0.01, steps=3000, width=64)
    stop_mid_run(panel)  # pressed while the run waits at its first progress report
    assert panel.status.value.startswith("stopped")  # stopped, not finished (no clock: load varies)
    assert panel.figure is not None
    panel.set(steps=20)
    panel.click()
    assert panel.status.value.startswith("final training loss")  # usable after a stop


def test_memory_panel_runs_and_stops():
    panel = P.memory_panel("smoke", seed=0)
    assert isinstance(panel.above, dict)
    panel.set(dim=16, alpha=1.5, seeds=1)
    assert panel.click() is not None and panel.status.value == "done"
    panel.set(dim=512, seeds=10)
    stop_mid_run(panel)  # pressed while the run waits at its first progress report
    assert panel.status.value.startswith("stopped")  # stopped, not finished (no clock: load varies)
    with pytest.raises(ValueError, match="alpha"):
        panel.set(alpha=-1.0)


def test_shaping_panel_runs_stops_and_reports_divergence():
    panel = P.shaping_panel("smoke", seed=0)
    assert isinstance(panel.above, dict)
    panel.set(steps=20, p=-1.0)
    assert panel.click() is not None and panel.status.value == "done"
    assert len(panel.figure.data) == 3  # fixed p, the schedule, the fixed run's final loss
    panel.set(steps=2000)
    stop_mid_run(panel)  # pressed while the run waits at its first progress report
    assert panel.status.value.startswith("stopped")  # stopped, not finished (no clock: load varies)
    panel.set(steps=20, lr=1.0, p=1.5, p_start=2.0, p_end=2.0)
    panel.click()
    assert not panel.status.value.startswith(("failed", "invalid")), panel.status.value




def test_panels_say_their_work_and_it_grows_with_what_it_names():
    practice = P.practice_panel("smoke", seed=0)
    w = lambda **kw: practice.work(**{**practice.values, **kw})  # noqa: E731
    assert w(steps=2 * practice.values["steps"]) == 2 * w()
    assert w(width=128) > w() and w(depth=5) > w() and w(optimizer="adamw") < w()
    memory = P.memory_panel("smoke", seed=0)
    m = lambda **kw: memory.work(**{**memory.values, **kw})  # noqa: E731
    assert m(seeds=4) > m(seeds=2) and m(dim=256) > m() and m(largest=8) < m()
    shaping = P.shaping_panel("smoke", seed=0)
    assert shaping.work(**{**shaping.values, "steps": 800}) == 2 * shaping.work(
        **{**shaping.values, "steps": 400})
    ns = P.ns_panel("smoke", seed=0)
    assert ns.work(**{**ns.values, "rows": 512}) > ns.work(**ns.values)
    ns.set(rows=1024, cols=1024)
    assert "the defaults' work" in ns.status.value  # said before it starts


def test_ns_work_has_the_fixed_part_a_click_costs():
    """The figure and the SVDs cost about 0.16 CPU-s at the defaults and 1024 × 1024 about
    1.4 (measured, issue 43): about 9 times, not the 256 times a cubic count alone says."""
    base = P.ns_work(**P.ns_panel("smoke", seed=0).values)
    assert 4 < P.ns_work(1024, 1024) / base < 20
    assert 12 < P.ns_work(1024, 1024, steps=30) / base < 40
    assert P.ns_work(64, 32) / base > 0.9  # a small matrix costs about the defaults' click


def test_ns_panel_at_its_defaults_brings_the_singular_values_near_one():
    """Muon's five steps squeeze the default matrix's singular values into about [0.6, 1.2]
    (the input's spread over a factor of about six)."""
    fig = P.ns_panel("smoke", seed=0).click()
    before, after = fig.data[0].y, fig.data[1].y
    assert 0.6 <= min(after) and max(after) <= 1.2
    assert max(before) / min(before) > 4


def _history(losses):
    h = T.History()
    for i, loss in enumerate(losses):
        h.append(10 * i, train_loss=loss)
    return h


def test_practice_status_names_a_stall_at_chance_and_no_progress():
    chance = math.log(10)
    assert P.practice_status(_history([2.306, 2.2, 0.3]), 10) == "final training loss 0.3"
    stuck = P.practice_status(_history([2.306, 900.0, 2.34]), 10)
    assert stuck.startswith("stuck at chance") and f"ln 10 = {chance:.3f}" in stuck
    # Muon at lr = 3 (smoke, seed 0) ends far above where it started
    assert P.practice_status(_history([2.306, 9.4, 28.1]), 10) == (
        "no progress: final training loss 28.1, above its first (2.31)")
    diverged = _history([2.306])
    diverged.diverged_at = 3
    assert P.practice_status(diverged, 10) == "diverged at step 3"


def test_practice_panel_at_lr_3_says_it_stalled_at_chance():
    """At the defaults but lr = 3, AdamW does not diverge: its loss ends near ln 10, and the
    status says so instead of printing a final loss as if it had trained."""
    panel = P.practice_panel("smoke", seed=0)
    panel.set(optimizer="adamw", lr=3.0)
    panel.click()
    assert panel.status.value.startswith("stuck at chance"), panel.status.value


def test_practice_panel_at_its_defaults_trains_well_below_chance():
    fig = P.practice_panel("smoke", seed=0).click()
    loss = list(fig.data[0].y)
    assert loss[0] > 0.9 * math.log(10) and loss[-1] < 0.3 * math.log(10)


def test_shaping_panel_at_its_defaults_the_schedule_ends_below_p_0():
    panel = P.shaping_panel("smoke", seed=0)
    fig = panel.click()
    final = {t.name: t.y[-1] for t in fig.data if t.name.startswith("p")}
    fixed = final.pop("p = 0")
    (schedule,) = final.values()
    assert schedule < fixed, (final, fixed)


def test_memory_panel_at_its_defaults_shows_muon_storing_what_newton_does():
    """At the defaults (dim and draws the profile's, N up to the largest offered): Muon
    stores (almost) every pair up to N = d, as Newton does, and several times SGD's at N = 4d;
    the curve is drawn at N = d before the larger N come in."""
    panel = P.memory_panel("smoke", seed=0)
    drawn = []
    panel.show_figure = lambda fig, draw=panel.show_figure: (drawn.append(fig), draw(fig))[1]
    fig = panel.click()
    assert len(drawn) >= 2 and max(drawn[0].data[0].x) == 1  # the first figure stops at N = d
    y = {t.name: dict(zip(t.x, t.y)) for t in fig.data}
    assert y["Muon (NS₅)"][1] >= 0.95 and y["Newton"][1] >= 0.95 and y["SGD"][1] < 0.5
    assert y["Muon (NS₅)"][4] > 3 * y["SGD"][4]
