"""dynamics.weight_decay.views: figures (built from fresh and JSON data, rendered in the house
layout), tables, the claims table, and every live panel driven headlessly: constructed, set,
clicked, stopped, given out-of-range and diverging settings, and seeded."""
import json
import threading
import time

import numpy as np
import pytest

from dynamics import plots, results, widgets
from dynamics.weight_decay import experiments as E
from dynamics.weight_decay import science as S
from dynamics.weight_decay import views as V

TINY = S.DecouplingConfig(lr_low=1e-3, lr_high=10 ** -1.5, n_lr=4, wd_low=1e-2, wd_high=10.0,
                          l2_low=1e-4, l2_high=1e-1, n_wd=7, n_seeds=1, steps=30, width=8,
                          n_train=200, n_evals=2)


@pytest.fixture(scope="module")
def payload():
    fresh = E.run_decoupling(TINY, 0, bars=False, kinds=tuple(S.GRIDS))
    return json.loads(json.dumps(results._plain(fresh)))  # as read back from data/


def _rendered(fig):
    html = plots.to_html(fig)
    assert "Plotly.newPlot" in html
    return plots.house(fig)


def test_grid_figure_marks_best_cells_and_ridges(payload):
    fig = _rendered(V.grid_figure(payload))
    kinds = [t for t in fig.data if t.type == "heatmap"]
    assert len(kinds) == 2 and sum(t.showscale is not False for t in kinds) == 1
    assert sum(t.name == "best cell" for t in fig.data) == 2  # one outlined best cell per grid
    names = [t.name for t in fig.data if t.type == "scatter"]
    assert "best λ at each η" in names and "ηλ·t = 1" in names
    assert fig.layout.title.text.startswith("Test accuracy after")
    fig3 = V.grid_figure(payload, ("adamw", "adamw_invariant"))
    assert [a.text for a in fig3.layout.annotations][:2] == [E.LABELS["adamw"], E.LABELS["adamw_invariant"]]


def test_grid_slider_has_one_step_per_evaluation(payload):
    fig = _rendered(V.grid_slider(payload))
    assert len(fig.layout.sliders[0].steps) == len(payload["eval_steps"])
    assert fig.layout.sliders[0].y == 0  # placed by the house layout, below the plot


def test_ridge_rows(payload):
    rows = V.ridge_rows(payload, tuple(S.GRIDS))
    assert len(rows) == len(payload["lrs"])
    assert "AdamW: best ηλ" in rows[0] and "invariant: best ηλ" in rows[0]
    plots.table(rows)


def test_figures_of_the_other_sections():
    eq = E.run_equilibrium(S.EquilibriumConfig.for_profile("smoke", steps=40), 0, bars=False)
    fig = _rendered(V.equilibrium_figure([eq, eq]))
    assert sum(t.showlegend is not False for t in fig.data if t.name) >= 4
    rows = V.equilibrium_rows(eq)
    assert len(rows) == 3 and all(isinstance(r["RMS"], float) for r in rows)
    clock = E.run_clock(S.ClockConfig.for_profile("smoke", steps=40), 0, bars=False)
    fig = _rendered(V.clock_figure(clock))
    assert len(fig.data) == 4
    rows = V.clock_rows(clock)
    assert [r["ηλ"] for r in rows] == pytest.approx([clock["product"]] * 3 + [4 * clock["product"]])
    spec = E.run_spectrum(S.SpectrumConfig.for_profile("smoke", steps=40, width=16), 0, bars=False)
    fig = _rendered(V.spectrum_figure(spec))
    assert [t.name for t in fig.data if t.showlegend is not False] == ["λ = 0", "λ = 2", "initialization"]
    assert len(V.spectrum_rows(spec)) == 6


def test_claims_table(payload):
    eq = [E.run_equilibrium(c.replace(steps=40), 0, bars=False) for c in E.equilibrium_configs("smoke")]
    rows = V.claims(grid=payload, live={0: payload}, equilibria={0: eq})
    assert len(rows) >= 4
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)
    plots.claims_table(rows)
    assert V.claims() == []


# ----------------------------------------------------------------------------- panels


def test_every_panel_passes_above_and_seed(monkeypatch):
    seen = {}

    def fake(name):
        def run(cfg, seed=None, *args, **kwargs):
            seen[name] = seed
            raise ValueError("stop here")
        return run

    for name in ("run_decoupling", "run_equilibrium", "run_clock", "run_spectrum"):
        monkeypatch.setattr(V, name, fake(name))
    panels = {"run_decoupling": V.decoupling_panel, "run_equilibrium": V.equilibrium_panel,
              "run_clock": V.clock_panel, "run_spectrum": V.spectrum_panel}
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
    eq = V.equilibrium_panel("smoke")
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
    clock = V.clock_panel("smoke")
    clock.set(steps=100)
    assert clock.click() is not None and clock.status.value.startswith("matched")
    spec = V.spectrum_panel("smoke")
    spec.set(steps=100, lr=1.0, optimizer="sgd")  # diverges: reported, not raised
    fig = spec.click()
    assert spec.status.value.startswith("diverged"), spec.status.value
    assert fig is not None and spec.progress.value == 1.0
    grid = V.decoupling_panel("smoke")
    grid.set(steps=50, n_train=500, width=32)
    assert grid.click() is not None and grid.status.value.startswith("done")


@pytest.mark.parametrize("make,values", [
    (V.decoupling_panel, dict(steps=3000)),
    (V.equilibrium_panel, dict(steps=5000)),
    (V.clock_panel, dict(steps=5000)),
    (V.spectrum_panel, dict(steps=10000)),
])
def test_panels_stop(make, values):
    """Run in the background thread the Run button uses, press Stop: the run ends within
    seconds, says so, and the panel can run again."""
    p = make("smoke").set(**values)
    p.start()
    time.sleep(1.5)
    assert p.running
    p.stop()
    p._thread.join(timeout=60)
    assert not p.running
    assert p.status.value.startswith("stopped"), p.status.value
    assert not p.button.disabled and p.stop_button.disabled


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu"])
def test_panels_construct_in_every_profile(profile):
    """Every profile's defaults lie inside the panels' ranges (a gpu preset of 10,000 steps
    once made the equilibrium panel refuse its own default)."""
    for make in (V.decoupling_panel, V.equilibrium_panel, V.clock_panel, V.spectrum_panel):
        p = make(profile, seed=0)
        assert p.profile == profile and p.above == "live"


# ----------------------------------------------------------------------------- numbers in the prose


def test_prose_numbers_of_the_precomputed_grids():
    """The numbers sections 1 and 3 glue into their prose come from the grids: the AdamW
    ridge of the plain MLP over its band, seed by seed, and the invariant net's products."""
    grid, _ = results.load("weight_decay_grid")
    band = V.ridge_band(grid, "adamw", V.PLAIN_BAND)
    assert len(band["per_seed"]) == len(grid["seeds"]) and band["lr_factor"] == pytest.approx(10, rel=0.01)
    for ridge, moves in zip(band["per_seed"], band["moves"]):
        assert moves == pytest.approx(max(ridge) / min(ridge))
    num = V.decoupling_numbers(grid)
    assert all(isinstance(v, str) and v and "n/a" not in v for v in num.values())
    inv = V.invariant_numbers(grid)
    assert 1 <= inv["prod_factor"] < 3  # the best product hardly moves below the largest eta
    rows = V.published_claims()
    assert [r["claim"] for r in rows] == [r["claim"] for r in V.grid_claims(grid)]
    assert any(not r["asserted"] for r in rows) and any(r["asserted"] for r in rows)


def test_prose_numbers_of_tiny_runs(payload):
    inv = V.invariant_numbers(payload)  # a grid too small for the prose: no crash, "n/a"
    assert set(inv) >= {"wd_inv_prod", "wd_inv_slope"}
    eq = E.run_equilibrium(S.EquilibriumConfig.for_profile("smoke", steps=40), 0, bars=False)
    num = V.equilibrium_numbers([eq])
    assert num["wd_adamw_rms_dev"].endswith("%") and num["wd_adamw_verdict"] in plots.MARKS.values()
    clock = E.run_clock(S.ClockConfig.for_profile("smoke", steps=40), 0, bars=False)
    assert V.clock_numbers(clock)["wd_clock_lr_factor"] == "4"
    text = V.answer_zero_gradient()
    assert "0.905 after 1,000 steps" in text and "0.26 after 1,000" in text


def test_decoupling_row_has_one_outcome():
    """The decoupling row is Loshchilov & Hutter's claim alone (AdamW's best eta * lambda stays
    put while Adam + L2's best coefficient moves): on the published grid, where Adam + L2's
    best coefficient does not move, it is "no"; a grid where AdamW's best lambda falls as
    1/eta and Adam + L2's moves gives "yes"."""
    import numpy as np
    from dynamics import results

    grid, _ = results.load("weight_decay_grid")
    row = next(r for r in V.grid_claims(grid) if r["claim"].startswith("with AdamW the best decay"))
    assert row["reproduced"] == "no" and row["control"] and row["seeds"] == [0, 1, 2]
    g = {k: dict(v) for k, v in grid["grids"].items()}
    decays, lrs = np.asarray(g["adamw"]["decays"]), np.asarray(g["adamw"]["lrs"])

    def peaked(best):  # one seed's accuracy grid peaking at decay best[j] in column j
        return (1 - np.abs(np.log10(decays)[:, None] - np.log10(best)[None, :])).tolist()

    fixed_product = peaked(1e-3 / lrs)
    moving = peaked(lrs)  # Adam + L2's best coefficient grows with eta
    g["adamw"]["test_acc_seeds"] = [fixed_product] * 3
    g["adam_l2"]["test_acc_seeds"] = [moving] * 3
    row = next(r for r in V.grid_claims(dict(grid, grids=g))
               if r["claim"].startswith("with AdamW the best decay"))
    assert row["reproduced"] == "yes"
