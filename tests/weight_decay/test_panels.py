"""dynamics.weight_decay.panels: every live panel driven headlessly: constructed, set, clicked,
stopped, given out-of-range and diverging settings, and seeded."""

import pytest

from dynamics.weight_decay import panels as P

from stopping import stop_mid_run


def test_every_panel_passes_above_and_seed(monkeypatch):
    seen = {}

    def fake(name):
        def run(cfg, seed=None, *args, **kwargs):
            seen[name] = seed
            raise ValueError("stop here")
        return run

    for name in ("run_decoupling", "run_equilibrium", "run_clock", "run_spectrum"):
        monkeypatch.setattr(P, name, fake(name))
    panels = {"run_decoupling": P.decoupling_panel, "run_equilibrium": P.equilibrium_panel,
              "run_clock": P.clock_panel, "run_spectrum": P.spectrum_panel}
    monkeypatch.setenv("DYNAMICS_SEED", "7")
    for name, make in panels.items():
        p = make("smoke")
        assert p.above == "live" and "computed while this page was built" in p.static_note()
        p.click()
        assert p.status.value.startswith("invalid")
        assert seen[name] == 7
        make("smoke", seed=2).click()
        assert seen[name] == 2


def test_panels_run_and_survive_extremes():
    eq = P.equilibrium_panel("smoke")
    eq.set(optimizer="adamw", lr=3e-3, weight_decay=2.0, steps=100)
    assert eq.click() is not None and eq.status.value == "done"
    eq.set(lr=1.0, weight_decay=10.0)  # eta * lambda >= 1: refused with the reason, panel alive
    eq.click()
    assert eq.status.value.startswith("invalid") and "eta * lambda" in eq.status.value
    with pytest.raises(ValueError):
        eq.set(lr=100.0)  # outside the slider: refused, not clamped
    eq.set(optimizer="sgd", lr=1.0, weight_decay=0.5, steps=100)
    eq.click()
    assert eq.status.value == "done" or eq.status.value.startswith("diverged")
    clock = P.clock_panel("smoke")
    clock.set(steps=100)
    assert clock.click() is not None and clock.status.value.startswith("matched")
    spec = P.spectrum_panel("smoke")
    spec.set(steps=100, lr=1.0, optimizer="sgd")  # diverges: reported, not raised
    fig = spec.click()
    assert spec.status.value.startswith("diverged"), spec.status.value
    assert fig is not None and spec.progress.value == 1.0
    grid = P.decoupling_panel("smoke")
    grid.set(steps=50, n_train=500, width=32)
    assert grid.click() is not None and grid.status.value.startswith("done")


@pytest.mark.parametrize("make,values", [
    (P.decoupling_panel, dict(steps=3000)),
    (P.equilibrium_panel, dict(steps=5000)),
    (P.clock_panel, dict(steps=5000)),
    (P.spectrum_panel, dict(steps=10000)),
])
def test_panels_stop(make, values):
    """Run in the background thread the Run button uses, press Stop mid-run: the run ends,
    says so, and the panel can run again."""
    p = make("smoke").set(**values)
    stop_mid_run(p)  # pressed while the run waits at its first progress report
    assert p.status.value.startswith("stopped"), p.status.value
    assert not p.button.disabled and p.stop_button.disabled


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu"])
def test_panels_construct_in_every_profile(profile):
    """Every profile's defaults lie inside the panels' ranges (a gpu preset of 10,000 steps
    once made the equilibrium panel refuse its own default)."""
    for make in (P.decoupling_panel, P.equilibrium_panel, P.clock_panel, P.spectrum_panel):
        p = make(profile, seed=0)
        assert p.profile == profile and p.above == "live"
