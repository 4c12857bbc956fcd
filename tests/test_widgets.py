import threading
from dataclasses import dataclass

import pytest
import torch
import plotly.graph_objects as go

from dynamics import data, models, plots, train, widgets
from dynamics.train import Hooks, Recipe
from dynamics.config import Config, param


@dataclass
class Toy(Config):
    lr: float = param(1e-2, "learning rate", low=1e-4, high=1e3, log=True)
    width: int = param(16, "hidden width", low=2, high=64)
    optimizer: str = param("adamw", "optimizer", choices=("adamw", "sgd"))


def _panel():
    d = data.digits()

    def run(update, lr, width, optimizer):
        cfg = Toy(lr=lr, width=width, optimizer=optimizer)
        torch.manual_seed(0)
        m = models.MLP(d.input_dim, cfg.width, 1, 10)
        h = train.train(m, d, Recipe(steps=30, optimizer=cfg.optimizer, lr=cfg.lr, eval=10),
                        hooks=Hooks(on_eval=update.every(lambda h: plots.curves(h, ['train_loss']), interval=0.0)),
                        bars=False)
        if h.diverged:
            update(status=h.status)
        return plots.curves(h, ["train_loss", "train_acc"], title=f"lr={lr:.3g}")

    return widgets.Panel(run, widgets.controls_for(Toy, ["lr", "width", "optimizer"]), title="Toy")


def test_controls_from_config_metadata():
    ctrls = widgets.controls_for(Toy, ["lr", "width", "optimizer"])
    assert [type(c).__name__ for c in ctrls] == ["Slider", "Slider", "Choice"]
    assert ctrls[0].log and ctrls[1].integer and ctrls[2].options == ("adamw", "sgd")
    with pytest.raises(ValueError, match="no field"):
        widgets.controls_for(Toy, ["depth"])


def test_panel_runs_headlessly_and_updates_figure():
    panel = _panel()
    assert panel.figure is None and panel.status.value == "press Run"
    fig1 = panel.click()
    assert panel.status.value == "done" and panel.progress.value == 1.0
    assert fig1 is not None and fig1.layout.title.text == "lr=0.01"
    panel.set(lr=1e-3, optimizer="sgd")
    fig2 = panel.click()
    assert fig2 is not fig1 and fig2.layout.title.text == "lr=0.001"
    assert panel.runs == 2 and not panel.button.disabled


def test_panel_survives_divergence_and_bad_values():
    panel = _panel()
    panel.set(lr=1e3, optimizer="sgd")
    panel.click()
    assert panel.status.value.startswith("diverged at step")
    panel.set(width=2, lr=1e-2, optimizer="adamw")  # still usable afterwards
    panel.click()
    assert panel.status.value == "done"

    def broken(update, **values):
        raise ValueError("width must be even")

    p2 = widgets.Panel(broken, [widgets.Slider("width", 1, 9, 3, integer=True)])
    p2.click()
    assert p2.status.value == "invalid: width must be even" and not p2.button.disabled
    with pytest.raises(ValueError, match="no control"):
        p2.set(depth=3)


def test_panel_has_a_static_note_that_says_what_is_true():
    bundle = _panel()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    note = bundle["text/html"]
    assert "live panel" in note and "lr (0.0001 to 1,000)".replace(",", "") in note.replace(",", "")
    assert "computed while this page was built, in the smoke profile" in note
    prov = dict(profile="cpu", device="cpu (x86_64)", torch="2.13", dynamics="0.1",
                date="2026-11-01 10:00 UTC", command="python -m dynamics_ops.precompute toy")
    p = widgets.Panel(lambda update: None, [widgets.Slider("x", 0, 1, 0.5)], above=prov)
    assert "computed in advance: Precomputed in the cpu profile" in p.static_note()
    assert "computed" not in widgets.Panel(lambda update: None, [], above=None).static_note()
    said = widgets.Panel(lambda update: None, [], note="Sized to finish in seconds.").static_note()
    assert "a static page cannot run it. Sized to finish in seconds." in said  # its note too
    with pytest.raises(ValueError, match="above"):
        widgets.Panel(lambda update: None, [], above="precomputed")


def test_panel_refuses_out_of_range_values_instead_of_clamping():
    panel = _panel()
    with pytest.raises(ValueError, match=r"lr must lie in \[0.0001, 1000\], got -0.1"):
        panel.set(lr=-0.1)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        panel.set(optimizer="lbfgs")
    with pytest.raises(ValueError, match="width must be an integer"):
        panel.set(width=3.5)
    assert panel.values["lr"] == pytest.approx(1e-2)  # nothing was changed


def test_stop_button_stops_a_run_and_the_panel_recovers():
    d = data.digits()
    seen = []

    def run(update, steps):
        torch.manual_seed(0)
        m = models.MLP(d.input_dim, 16, 1, 10)
        live = update.every(lambda h: plots.curves(h, ["train_loss"]), interval=0.0, total_steps=steps)

        def press_stop(step, history, model):
            if step >= 20:
                update.panel.stop()  # what the Stop button does
            return False

        h = train.train(m, d, Recipe(steps=steps, eval=10), hooks=Hooks(on_eval=[press_stop, live]),
                        bars=False)
        seen.append(h.steps[-1])
        update(status=f"trained to step {h.steps[-1]}")  # raises Stopped: the reader asked
        return plots.curves(h, ["train_loss"])

    panel = widgets.Panel(run, [widgets.Slider("steps", 10, 10000, 5000, integer=True)])
    panel.click()
    assert seen == [20] and panel.status.value == "stopped"
    assert not panel.button.disabled and panel.stop_button.disabled
    panel.set(steps=30)
    panel.controls["steps"].value = 30
    panel.click()  # a new run is not stopped by the old request
    assert seen[-1] == 20 and panel.status.value == "stopped"


def test_a_panels_bar_and_stop_follow_any_run_through_the_progress_protocol():
    """A run function passes nothing for progress: the panel's bar and Stop are the
    dynamics.progress job its runs report into, for one training, a sweep, or stages."""
    from dynamics import progress
    from dynamics.sweep import grid, train_many

    d = data.digits()
    bars, histories = [], []

    def run(update, stop_at):
        def press_stop(step, history, model):
            if step >= stop_at:
                update.panel.stop()  # what the Stop button does
            return False

        job = progress.current()
        histories.clear()
        for i in range(3):  # a multi-stage experiment: a training, a sweep, a training
            with job.part(i, 3):
                if i == 1:
                    res = train_many(lambda c: models.MLP(d.input_dim, 8, 1, 10), d,
                                     grid(seed=[0, 1]), Recipe(steps=20, eval=10),
                                     strategy="batched", bars=False)
                    histories.extend(res.histories)
                else:
                    histories.append(train.train(models.MLP(d.input_dim, 8, 1, 10), d,
                                                 Recipe(steps=20, eval=10),
                                                 hooks=Hooks(on_eval=press_stop),
                                                 bars=False))
            bars.append(update.panel.progress.value)
        return None

    panel = widgets.Panel(run, [widgets.Slider("stop_at", 0, 100, 100, integer=True)])
    panel.click()
    assert bars == pytest.approx([1 / 3, 2 / 3, 1.0]) and panel.status.value == "done"
    assert [h.steps for h in histories] == [[0, 10, 20]] * 4
    bars.clear()
    panel.set(stop_at=10).click()  # Stop during the first training: the rest stop too
    assert panel.status.value.startswith("stopped")
    assert histories[0].steps == [0, 10] and all(len(h.steps) <= 1 for h in histories[1:])
    assert bars[0] < 1 / 3  # the bar stays where the first stage was stopped


def test_run_button_trains_in_a_thread_and_interrupts_reset_the_status():
    panel = _panel()
    panel.start()  # what the Run button does
    panel._thread.join(60)
    assert panel.status.value == "done" and panel.figure is not None and not panel.running

    def interrupted(update, **values):
        raise KeyboardInterrupt

    p2 = widgets.Panel(interrupted, [])
    with pytest.raises(KeyboardInterrupt):
        p2.click()
    assert p2.status.value == "interrupted" and not p2.button.disabled


def test_no_progress_bars_inside_a_panel(monkeypatch):
    from dynamics.runtime import bars_enabled

    monkeypatch.setenv("DYNAMICS_PROGRESS", "1")
    seen = []
    p = widgets.Panel(lambda update: seen.append(bars_enabled()), [])
    p.click()
    assert seen == [False] and bars_enabled() is True


# ----------------------------------------------------------------------------- never trapped (issue 13)

def test_a_long_run_says_so_in_the_status_line_then_done(monkeypatch):
    from dynamics import forecast, runtime

    monkeypatch.setattr(forecast, "LONG_RUN_S", 0.0)
    monkeypatch.setattr(forecast, "MEASURE_S", 0.0)
    notices = []
    panel = _panel()
    panel.status.observe(lambda change: notices.append(change["new"]), names="value")
    panel.click()
    said = [n for n in notices if "on this" in n]
    assert len(said) == 1 and said[0].startswith("training: 30 steps, about ")
    assert said[0].endswith("Stop ends it early.") and panel.status.value == "done"


def test_a_panel_forecasts_from_its_progress_when_its_run_does_not_train(monkeypatch):
    """A loop of short pieces (no single long training) is announced from update.ticker."""
    from dynamics import forecast, runtime

    monkeypatch.setattr(forecast, "LONG_RUN_S", 0.0)
    monkeypatch.setattr(forecast, "MEASURE_S", 0.0)
    notices = []

    def run(update, n):
        tick = update.ticker(n)
        for i in range(int(n)):
            tick(i + 1)
        return plots.curves(train.History(steps=[0, 1], metrics={"x": [1.0, 0.5]}), ["x"])

    panel = widgets.Panel(run, [widgets.Slider("n", 1, 10, 3, integer=True)])
    panel.status.observe(lambda change: notices.append(change["new"]), names="value")
    panel.click()
    assert any(n.startswith("this run: about ") for n in notices) and panel.status.value == "done"


def test_the_run_button_draws_from_the_training_thread_into_the_output():
    """What a browser does: the Run button's handler starts a thread; the figures the run
    draws land in the Output widget's outputs (assigned, not printed: safe from a thread)."""
    panel = _panel()
    panel.button.click()  # the button's own on_click handlers, as a browser click fires them
    assert panel._thread is not None
    panel._thread.join(120)
    assert not panel.running and panel.status.value == "done"
    (out,) = panel.output.outputs
    assert out["output_type"] == "display_data" and "Plotly.newPlot" in out["data"]["text/html"]
    assert not panel.button.disabled and panel.stop_button.disabled


def test_errors_and_stops_in_the_thread_reset_the_status():
    def broken(update, **values):
        update(progress=0.5)
        raise RuntimeError("out of memory")

    panel = widgets.Panel(broken, [])
    panel.start()
    panel._thread.join(10)
    assert panel.status.value == "failed: RuntimeError: out of memory" and not panel.button.disabled
    assert any("out of memory" in o.get("text", "") for o in panel.output.outputs)

    started, pressed = threading.Event(), threading.Event()

    def endless(update):
        update(progress=0.1)
        started.set()
        pressed.wait(60)
        update(progress=0.2)  # raises Stopped once Stop was pressed
        raise AssertionError("update went on after Stop")

    p2 = widgets.Panel(endless, [])
    p2.start()
    assert started.wait(60)
    p2.stop_button.click()
    pressed.set()
    p2._thread.join(10)
    assert not p2.running and p2.status.value == "stopped" and not p2.button.disabled


def test_panels_made_in_this_kernel_can_be_found():
    panel = _panel()
    assert widgets.panels()[-1] is panel


class _Beats:
    """The heartbeat's clock in a test: each reading is one second after the one before (the
    panel's first reading is its start), and a test waits for a number of readings: beats
    counted, not seconds waited."""

    def __init__(self):
        self.reads, self._changed = 0, threading.Condition()

    def __call__(self) -> float:
        with self._changed:
            self.reads += 1
            self._changed.notify_all()
            return float(self.reads)

    def wait_past(self, n: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: self.reads > n, timeout=60), "the heartbeat stopped"


def test_a_run_that_reports_nothing_still_shows_it_is_alive(monkeypatch):
    beats = _Beats()
    monkeypatch.setattr(widgets, "_clock", beats)
    monkeypatch.setattr(widgets, "HEARTBEAT_S", 0.0)  # beat as fast as it can: the test counts
    seen = []

    def quiet(update):
        beats.wait_past(3)  # the start and two beats; no progress, no status of its own
        return None

    panel = widgets.Panel(quiet, [])
    panel.status.observe(lambda change: seen.append(change["new"]), names="value")
    panel.click()
    ticks = [s for s in seen if s.startswith("running… ")]
    assert ticks[:2] == ["running… 1 s", "running… 2 s"] and panel.status.value == "done"

    def says(update):
        update(status="measured 0.5")
        beats.wait_past(beats.reads + 1)  # two readings on: a whole beat looked at the run's word

    p2 = widgets.Panel(says, [])
    p2.click()
    assert p2.status.value == "measured 0.5"


def test_a_panel_times_its_first_result_and_its_end(monkeypatch):
    """``panel.timing``: the clock's readings from Run to the first result shown (the first
    figure drawn) and to done, counted on a clock that ticks once per reading (no
    seconds waited): what ``python -m dynamics_ops.bench panels`` prints."""
    ticks = iter(range(1000))
    monkeypatch.setattr(widgets, "_clock", lambda: float(next(ticks)))
    monkeypatch.setattr(widgets, "HEARTBEAT_S", 1e6)  # no beat reads the clock mid-run
    cpu = iter(range(0, 10000, 10))  # CPU seconds: ten a reading, apart from the wall clock
    monkeypatch.setattr(widgets, "_cpu_clock", lambda: float(next(cpu)))

    def draws_then_works(update):
        update(fig=go.Figure())  # reading 1: the first result
        for _ in range(5):  # the rest of the run: five readings
            widgets._clock()
        update(fig=go.Figure())  # a later figure is not the first result

    p = widgets.Panel(draws_then_works, [])
    p.click()
    assert p.timing == {"first_s": 1.0, "done_s": 7.0, "first_cpu_s": 10.0, "cpu_s": 20.0,
                        "outcome": "done", "status": "done"}

    def says_it_is_busy(update):
        update(status="training 12 models…")  # words in the status line are not a result
        widgets._clock()

    p2 = widgets.Panel(says_it_is_busy, [])
    p2.click()
    assert p2.timing["first_s"] == p2.timing["done_s"] == 2.0

    def shows_nothing_until_the_end(update):
        widgets._clock()
        return go.Figure()  # drawn only when the run returns

    p3 = widgets.Panel(shows_nothing_until_the_end, [])
    p3.click()
    assert p3.timing["first_s"] == 2.0 and p3.timing["done_s"] == 3.0

    def refuses(update):
        raise ValueError("lr must be positive")

    p4 = widgets.Panel(refuses, [])
    p4.click()
    assert p4.timing["outcome"] == "invalid" and p4.timing["status"] == "invalid: lr must be positive"


def test_a_panel_says_what_a_setting_costs_before_it_starts(monkeypatch):
    """With ``work=`` (the run's units of work as a function of the controls), a panel says
    before a run what the chosen settings cost: before any run, as a multiple of the
    defaults' work; after one, in seconds at the last run's rate (on a clock that ticks once
    a reading, so the last run took a known time)."""
    ticks = iter(range(1000))
    monkeypatch.setattr(widgets, "_clock", lambda: float(next(ticks)))
    monkeypatch.setattr(widgets, "HEARTBEAT_S", 1e6)

    def trains(update, steps, models):
        for _ in range(3):  # three readings: the run takes 4 s on this clock
            widgets._clock()

    p = widgets.Panel(trains, [widgets.Slider("steps", 100, 10_000, value=1000, integer=True),
                               widgets.Choice("models", (1, 2, 4))],
                      work=lambda steps, models: steps * models)
    assert p.estimate() is None and p.status.value == "press Run"  # the defaults, no run yet
    p.set(steps=4000, models=2)
    assert p.status.value.startswith("press Run: about 8× the defaults' work")
    p.set(steps=1000, models=1)
    p.click()
    assert p.timing["done_s"] == 4.0
    p.set(steps=2500, models=4)  # ten times the last run's work: about 40 s
    assert p.status.value == "press Run: about 40 s at these settings (from the last run)"
    assert widgets.Panel(trains, [], work=None).estimate() is None
    with pytest.raises(ValueError, match="work must be a function"):
        widgets.Panel(trains, [], work=3)
