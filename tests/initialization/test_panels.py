"""Figures and panels (constructed, set, clicked, stopped, refusing bad values, surviving a
diverging run) of dynamics.initialization."""

import numpy as np
import pytest

from dynamics import plots, results, widgets
from dynamics.initialization import experiments as E
from dynamics.initialization import science as S
from dynamics.initialization import figures as F
from dynamics.initialization import panels as P

from stopping import stop_mid_run


def _rendered(fig):
    """The figure as the book renders it (house layout applied)."""
    html = plots.to_html(fig)
    assert "Plotly.newPlot" in html
    return plots.house(fig)


def _no_hand_placed_layout(fig):
    lay = fig.layout
    assert lay.legend.x is None and lay.legend.y is None, "legend placed by hand"
    assert lay.margin.t is None and lay.margin.b is None, "margins set by hand"


# ----------------------------------------------------------------------------- figures


def test_signal_figure_slider_and_dead_init():
    res = E.run_signal(S.SignalConfig.for_profile("smoke", depth=4, width=16, n_inputs=32),
                       inits=("zero", "he"))
    fig = F.signal_figure(res)
    _no_hand_placed_layout(fig)
    assert fig.layout.sliders and len(fig.layout.sliders[0].steps) == 2
    assert any("(all 0)" in (tr.name or "") for tr in fig.data)
    _rendered(fig)
    one = F.signal_figure(res, "relu")  # forward, backward and weight gradient, one legend
    he = [tr for tr in one.data if tr.name == "he"]
    assert len(he) == 3 and sum(bool(tr.showlegend) for tr in he) == 1
    assert [list(tr.y) for tr in he] == [getattr(res.relu["he"], k)
                                         for k in ("act_std", "grad_in", "grad_norm")]
    one = F.signal_figure(res, "tanh")
    assert not one.layout.sliders


def test_trainability_figure_uses_equal_cells_and_the_theory_line():
    heat = results.load("initialization_trainability", as_=E.Trainability)[0]
    fig = F.trainability_figure(heat)
    _no_hand_placed_layout(fig)
    hm = fig.data[0]
    assert list(hm.x) == list(range(len(heat.sigma_w2)))
    assert list(hm.y) == list(range(len(heat.depths)))
    line = next(tr for tr in fig.data if tr.name and "6 ξ_c" in tr.name)
    # the line leaves the grid at the top near the critical point (it is not cut at a depth)
    assert np.nanmax(np.asarray(line.y, float)) > len(heat.depths) - 0.5
    assert len(fig.layout.title.text) <= 60
    _rendered(fig)


def test_trainability_figure_marks_diverged_cells_and_nan_rows():
    heat = E.Trainability(depths=[4, 8], sigma_w2=[1.0, 2.0], acc=[[0.5, 0.1], [None, None]],
                          seeds=[0], acc_per_seed=[], line_sigma_w2=[1.0, 1.5, 2.0],
                          six_xi=[20.0, None, 30.0], critical=1.76, sigma_b2=0.05, steps=10,
                          width=8, lr_depth=0.08, n_train=100, diverged=[[4, 2.0]],
                          stopped=False, wall_time=0.0)
    fig = F.trainability_figure(heat)
    assert any(tr.name == "diverged" for tr in fig.data)
    _rendered(fig)


def test_chaos_fluctuation_saxe_depth_time_guessing_figures():
    chaos = E.run_chaos(S.ChaosConfig.for_profile("smoke", n_sigma=3, depth=20, width=64, batch=8),
                        sigma_b2_line=(0.05, 0.2))
    figs = [F.chaos_figure(chaos)]
    figs.append(F.fluctuations_figure(E.run_fluctuations(
        S.FluctuationConfig.for_profile("smoke", depth=4, width=8, n_nets=8))))
    figs.append(F.saxe_figure(E.run_saxe(S.SaxeConfig.for_profile("smoke", steps=30))))
    figs.append(F.depth_time_figure(results.load("initialization_depth_time",
                                                 as_=E.DepthTime)[0]))
    figs.append(F.guessing_figure(E.run_guessing_bias(
        S.GuessingConfig.for_profile("smoke", depths=[1, 2], n_nets=2, width=8, n_inputs=20))))
    for fig in figs:
        _no_hand_placed_layout(fig)
        assert len(fig.layout.title.text or "") <= 60
        _rendered(fig)


# ----------------------------------------------------------------------------- panels


def _check_panel(panel, above):
    assert panel.above == above or (isinstance(above, type) and isinstance(panel.above, above))
    note = panel.static_note()
    assert "live panel" in note.lower() or "panel" in note


def test_panels_pass_the_right_above():
    _check_panel(P.signal_panel("smoke"), "live")
    _check_panel(P.saxe_panel("smoke"), "live")
    _check_panel(P.guessing_panel("smoke"), "live")
    panel = P.trainability_panel("smoke")
    assert isinstance(panel.above, dict) and panel.above["profile"] == "cpu"
    assert "computed in advance" in panel.static_note()


def test_signal_panel_runs_and_refuses_bad_values():
    panel = P.signal_panel("smoke", seed=1).set(depth=4, width=16, activation="tanh", init="lsuv")
    panel.click()
    assert panel.figure is not None and "last/first" in panel.status.value
    with pytest.raises(ValueError, match="depth"):
        panel.set(depth=1000)
    with pytest.raises(ValueError, match="init"):
        panel.set(init="glorot")


def test_panels_honour_the_seed(monkeypatch):
    a = P.saxe_panel("smoke", seed=0).set(steps=50)
    b = P.saxe_panel("smoke", seed=5).set(steps=50)
    fa, fb = a.click(), b.click()
    assert list(fa.data[0].y) != list(fb.data[0].y)
    monkeypatch.setenv("DYNAMICS_SEED", "5")
    c = P.saxe_panel("smoke").set(steps=50)
    assert list(c.click().data[0].y) == list(fb.data[0].y)


def test_saxe_panel_reports_a_diverging_run_and_keeps_working():
    panel = P.saxe_panel("smoke").set(lr=10.0, init="gaussian", depth=6, steps=200)
    panel.click()
    assert "diverged" in panel.status.value
    panel.set(lr=0.3, init="small", depth=2, steps=100)
    panel.click()
    assert panel.status.value == "done" and panel.figure is not None


def test_trainability_panel_runs_and_stops():
    panel = P.trainability_panel("smoke", seed=2).set(max_depth=8, n_sigma=3, width=8, steps=50)
    panel.click()
    assert panel.figure is not None and panel.progress.value == 1.0
    assert not panel.status.value.startswith(("failed", "invalid"))
    # Stop pressed while the grid trains: the panel says so and keeps what it had
    panel.set(max_depth=32, steps=1000)
    original = widgets.Update.ticker

    def ticker(self, total, start=0.0, span=1.0):
        tick = original(self, total, start, span)

        def stop_after_first(done):
            if done > 0:
                self.panel.stop()
            return tick(done)

        return stop_after_first

    widgets.Update.ticker = ticker
    try:
        panel.click()
    finally:
        widgets.Update.ticker = original
    assert panel.status.value.startswith("stopped")


def test_guessing_panel_runs_and_stops_from_another_thread():
    panel = P.guessing_panel("smoke").set(depth=3, width=16)
    panel.click()
    assert panel.figure is not None and "favourite" in panel.status.value
    panel.set(depth=64, width=1024)
    stop_mid_run(panel)  # pressed while the run waits at its first progress report
    assert panel.status.value.startswith("stopped")


# ----------------------------------------------------------------------------- cost and defaults


def _drawn(panel, monkeypatch) -> list:
    """The figures ``panel`` draws, in order (each call of its ``show_figure``)."""
    shown, original = [], panel.show_figure
    monkeypatch.setattr(panel, "show_figure", lambda fig: (shown.append(fig), original(fig)))
    return shown


@pytest.mark.parametrize("make, grows", [
    (P.signal_panel, dict(depth=120, width=512)),
    (P.trainability_panel, dict(max_depth=48, n_sigma=9, width=64, steps=300)),
    (P.saxe_panel, dict(steps=3000, depth=12)),  # one run (no control) beyond depth 2
    (P.guessing_panel, dict(depth=40, width=512)),
])
def test_panels_say_what_a_larger_setting_costs(make, grows):
    panel = make("smoke", seed=0)
    base = panel.work(**panel.values)
    assert base > 0 and panel.estimate() is None  # at the defaults, nothing to say
    for name, value in grows.items():  # each setting named grows the work on its own
        assert panel.work(**{**panel.values, name: value}) > base, name
    panel.set(**grows)
    ratio = panel.work(**panel.values) / base
    assert ratio > 1.5 and f"{ratio:.2g}× the defaults' work" in panel.estimate()


def test_trainability_panel_says_how_its_grid_differs_from_the_page():
    """The note, from the two configs: every setting that differs from the precomputed grid's,
    the critical sigma_w^2 on no grid the slider makes, and what the colour then means; the
    static page shows it too."""
    panel = P.trainability_panel("smoke", seed=0)
    prov = results.provenance_of("initialization_trainability")
    page = S.TrainabilityConfig.for_profile(prov["profile"], **prov["config"])
    base = S.TrainabilityConfig.for_profile("smoke")
    depths, _ = P.grid_axes(panel.values["max_depth"], panel.values["n_sigma"])
    note = panel.note
    for said in (f"batch {base.batch_size} (the figure: {page.batch_size})",
                 f"width {panel.values['width']} (the figure: {page.width})",
                 f"SGD steps {panel.values['steps']} (the figure: {page.steps})",
                 f"depths {depths[0]} to {depths[-1]} (the figure: {min(page.depths)} to "
                 f"{max(page.depths)})",
                 f"after {panel.values['steps']} steps"):
        assert said in note, (said, note)
    crit = S.critical_sigma_w2(panel.values["sigma_b2"])
    spec = next(c for c in panel.specs if c.name == "n_sigma")
    assert not any(P.on_grid(crit, P.sigma_grid(n))
                   for n in range(int(spec.low), int(spec.high) + 1))
    assert P.on_grid(crit, page.sigma_w2) and f"critical {crit:.2f}" in note
    assert note in panel.static_note()
    assert P.trainability_note(base, page.replace(
        batch_size=base.batch_size, width=base.width, steps=P.TRAIN_STEPS,
        depths=depths)) == ""  # nothing differs: nothing to say


def test_trainability_work_follows_the_grid():
    """The grid's cost: rows trained one after another, each over every sigma_w^2 at once."""
    w = P.trainability_work
    assert P.grid_axes(24, 5) == ([4, 10, 17, 24], [0.5, 1.5, 2.5, 3.5, 4.5])
    base = w(24, 5, 32, 100)
    assert w(24, 5, 32, 200) - 29000 == pytest.approx(2 * (base - 29000))  # linear in steps
    # more models in a row cost less than proportionally (the engine's part is shared)
    assert 1 < (w(24, 9, 32, 100) - 29000) / (base - 29000) < 9 / 5


def test_signal_panel_defaults_show_he_flat_and_xavier_relu_vanishing():
    panel = P.signal_panel("smoke", seed=0)
    assert panel.values["depth"] <= P.SIGNAL_DEPTH and panel.values["init"] == "he"
    panel.click()
    fwd, bwd = (float(v.split(",")[0]) for v in panel.status.value.split("= ")[1:])
    assert 1 / 3 < fwd < 3 and 1 / 3 < bwd < 3, panel.status.value
    panel.set(init="xavier").click()  # ReLU with Xavier's scale halves the variance per layer
    assert "10⁻" in panel.status.value.split(",")[0], panel.status.value


def test_trainability_panel_draws_rows_as_they_train_and_shows_the_band(monkeypatch):
    """At its defaults (the same at every profile) the grid's deepest row trains only near the
    edge of chaos: its best cell is a grid neighbour of the critical sigma_w^2, its ordered end
    stays at chance and its chaotic end well below its best, while the shallowest row trains
    at every sigma_w^2; each row is drawn as soon as it is trained."""
    panel = P.trainability_panel("smoke", seed=0)
    shown = _drawn(panel, monkeypatch)
    fig = panel.click()
    depths, sig = P.grid_axes(panel.values["max_depth"], panel.values["n_sigma"])
    assert panel.status.value == "done" and len(shown) == len(depths)  # one drawing a row
    # the first drawing holds the first row only; the last, every row and the theory line
    first = np.asarray(shown[0].data[0].z, float)
    assert np.isfinite(first[0]).all() and np.isnan(first[1:]).all()
    assert any("6 ξ_c" in (tr.name or "") for tr in fig.data)
    acc = np.asarray(fig.data[0].z, float)
    deep, shallow = acc[-1], acc[0]
    crit = S.critical_sigma_w2(panel.values["sigma_b2"])
    near = {max(s for s in sig if s < crit), min(s for s in sig if s > crit)}
    assert sig[int(np.argmax(deep))] in near, deep
    assert deep.max() >= E.CHANCE + 0.15 and deep[0] < E.CHANCE + 0.05, deep
    assert deep[-1] <= deep.max() - 0.1, deep
    assert (shallow >= E.CHANCE + 0.15).all(), shallow


def test_saxe_panel_draws_while_it_trains(monkeypatch):
    """At its defaults the panel draws the staircase as it trains and every pattern is half
    learned within the steps, the strongest first (Saxe et al.'s order)."""
    panel = P.saxe_panel("smoke", seed=0)
    shown = _drawn(panel, monkeypatch)
    fig = panel.click()
    assert panel.status.value == "done"
    assert len(shown) == P.SAXE_DRAWS  # three quarters drawn while it trains, then the whole
    steps = [max(fig.data[0].x) for fig in shown[:-1]]  # the loss curve so far
    assert steps == sorted(steps) and steps[-1] < panel.values["steps"]
    measured = [tr for tr in fig.data if (tr.name or "").startswith("s=")]  # strongest first
    strengths = [float(tr.name[2:]) for tr in measured]
    assert len(measured) >= 2 and strengths == sorted(strengths, reverse=True)
    drawn = E.Saxe(steps=list(measured[0].x), loss=list(fig.data[0].y),
                   progress=[tr.y for tr in measured], strengths=strengths, lr=0.0, depth=2,
                   init="small", status="ok", diverged=False)  # the run as the panel drew it
    half = E.half_times(drawn)[0]
    assert np.isfinite(half).all() and (np.diff(half) > 0).all(), half


def test_saxe_panel_says_stopped_only_when_stopped():
    """A complete run whose evaluations (every steps // 150) miss the last step is done, and
    says where its curves end; Stop pressed mid-run says stopped."""
    panel = P.saxe_panel("smoke", seed=0).set(steps=1000)
    panel.click()
    status = panel.status.value
    assert status.startswith("done") and "stopped" not in status, status
    last = max(panel.figure.data[0].x)
    assert last < 1000 and f"step {last}" in status, status
    panel.set(steps=5000)
    stop_mid_run(panel)
    assert panel.status.value.startswith("stopped"), panel.status.value


def test_guessing_panel_defaults_show_the_bias():
    panel = P.guessing_panel("smoke", seed=0)
    panel.click()
    relu = float(panel.status.value.split("fraction ")[1].split()[0])
    panel.set(activation="tanh").click()
    tanh = float(panel.status.value.split("fraction ")[1].split()[0])
    assert relu > 0.5 and relu > tanh + 0.3, (relu, tanh)
