"""Live experiment panels from a declarative list of controls (core ipywidgets only).

A panel is controls + Run and Stop buttons + a progress bar + a status line + a figure that
updates while training runs::

    def run(update, lr, wd):   # the bar and Stop follow train (dynamics.progress)
        h = train(model, data, recipe, hooks=Hooks(on_eval=update.every(curves)))
        return curves(h)

    panel = Panel(run, [Slider("lr", 1e-4, 1e-1, log=True, value=1e-3),
                        Choice("wd", [0.0, 0.1, 1.0])], title="Try it", above="live")
    panel            # shows it; panel.set(lr=0.01); panel.click() drives it without a browser

The contract a run function relies on:

- ``run(update, **values)`` returns the final figure (or None to keep the last one drawn).
- The panel's bar and Stop are the :mod:`dynamics.progress` job the run runs in: whatever
  reports into ``progress.current()`` (``train``, ``train_many``, every theme's runner, a
  single run, a sweep or a multi-stage experiment alike) moves the bar, and Stop ends it at
  its next report. A run function passes nothing for that.
- ``update(fig=..., progress=..., status=...)`` redraws while it runs. Once the reader has
  pressed **Stop**, every call raises :class:`Stopped`, which the panel reports as "stopped".
- ``update.every(build)`` is the one live-redraw hook, a ``train`` ``on_eval`` hook
  (``Hooks(on_eval=...)``; runners take it as ``on_eval=``): it redraws with
  ``build(history)`` at most every ``interval`` seconds, and returns True (stop training) once
  Stop was pressed, so the run can still draw what it has.
- ``update.ticker(total)``, for a run function's own loop of pieces that report nothing:
  ``tick(done)`` sets the progress to ``done / total`` and returns True once Stop was pressed
  (the panel's job is ``progress.reporting(update.ticker(1.0))``).

A run that raises ``ValueError`` shows "invalid: ..." and any other error "failed: ...";
the panel stays usable either way, and its status never stays on "running". A run may report
divergence with ``update(status="diverged at step k")``. In a live kernel the Run button
trains in a background thread, so the Stop button (and the rest of the notebook) stays
responsive; :meth:`Panel.click` runs in the calling thread (tests, scripts). Progress bars
(tqdm) are switched off inside a panel: the panel has its own.

A run that will take more than about a minute says so in the status line (how long, on
this device) once its first second is measured: ``train`` does this for each training, and
the panel itself for the whole run from the progress it reports (:class:`dynamics.forecast.Forecast`).
Figures are drawn by assigning the output widget's ``outputs`` (not by printing into it), so
they appear when drawn from the training thread too, on ipywidgets 7 (Colab) and 8 alike.

In the static book a panel cannot run. It shows a note instead that says what the panel
would let a reader change, and where the figure above it came from (``above=``).
"""
from __future__ import annotations

import html
import math
import threading
import time
import traceback
import weakref
from dataclasses import dataclass, fields
from typing import Any, Callable, Sequence

import ipywidgets as W

from . import progress as P
from .config import declared_type
from .plots import to_html
from .forecast import Forecast
from .runtime import announcements_to, duration, get_profile, progress_bars

_PANELS: list = []  # weak references to every panel made in this kernel, oldest first
HEARTBEAT_S = 1.0     # how often the status line counts a quiet run's seconds
_clock = time.perf_counter  # the heartbeat's clock, read once a beat (a test's own clock counts beats)
_cpu_clock = time.process_time  # this process's CPU seconds: a panel's time on a quiet machine, read under load


def panels() -> list:
    """The panels made in this kernel that still exist, oldest first (for tests and the Colab
    rehearsal, which click a chapter's panels without a browser)."""
    return [p for p in (ref() for ref in _PANELS) if p is not None]


class Stopped(Exception):
    """Raised by ``update(...)`` inside a panel's run after the reader pressed Stop."""


@dataclass
class Slider:
    """A numeric control; ``log=True`` slides over exponents (values from low to high)."""

    name: str
    low: float
    high: float
    value: float | None = None
    step: float | None = None
    log: bool = False
    integer: bool = False
    description: str = ""

    def __post_init__(self):
        if not self.low < self.high:
            raise ValueError(f"slider {self.name!r} needs low < high, got [{self.low}, {self.high}]")
        if self.log and self.low <= 0:
            raise ValueError(f"log slider {self.name!r} needs low > 0")
        if self.value is not None:
            self.check(self.value)

    def check(self, value) -> None:
        """Refuse a value outside the slider's range (ipywidgets would clamp it silently)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{self.name} must be a number in [{self.low:g}, {self.high:g}], got {value!r}")
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.name} must lie in [{self.low:g}, {self.high:g}], got {value:g}")
        if self.integer and int(value) != value:
            raise ValueError(f"{self.name} must be an integer, got {value!r}")

    def build(self):
        value = self.low if self.value is None else self.value
        label = self.description or self.name
        style = dict(description_width="initial")
        if self.log:
            return W.FloatLogSlider(value=value, base=10, min=math.log10(self.low),
                                    max=math.log10(self.high), step=self.step or 0.1,
                                    description=label, style=style, readout_format=".2e")
        if self.integer:
            return W.IntSlider(value=int(value), min=int(self.low), max=int(self.high),
                               step=int(self.step or 1), description=label, style=style)
        return W.FloatSlider(value=value, min=self.low, max=self.high,
                             step=self.step or (self.high - self.low) / 100,
                             description=label, style=style, readout_format=".3g")

    def describe(self) -> str:
        return f"{self.description or self.name} ({self.low:g} to {self.high:g})"


@dataclass
class Choice:
    """A dropdown over fixed options."""

    name: str
    options: Sequence[Any]
    value: Any = None
    description: str = ""

    def __post_init__(self):
        if not len(self.options):
            raise ValueError(f"choice {self.name!r} needs at least one option")
        if self.value is not None:
            self.check(self.value)

    def check(self, value) -> None:
        if value not in list(self.options):
            raise ValueError(f"{self.name} must be one of {list(self.options)}, got {value!r}")

    def build(self):
        value = self.options[0] if self.value is None else self.value
        return W.Dropdown(options=list(self.options), value=value,
                          description=self.description or self.name,
                          style=dict(description_width="initial"))

    def describe(self) -> str:
        return self.description or self.name


def controls_for(config, names: Sequence[str], **overrides) -> list:
    """Controls for some fields of a :class:`dynamics.config.Config` (class or instance),
    from their metadata: choices become dropdowns, ranges sliders (log when declared)."""
    instance = config if not isinstance(config, type) else config()
    out = []
    by_name = {f.name: f for f in fields(instance)}
    for name in names:
        if name not in by_name:
            raise ValueError(f"{type(instance).__name__} has no field {name!r}")
        f, meta = by_name[name], by_name[name].metadata
        value = overrides.get(name, getattr(instance, name))
        desc = name.replace("_", " ")
        if meta.get("choices"):
            out.append(Choice(name, meta["choices"], value, desc))
        elif meta.get("low") is not None and meta.get("high") is not None:
            lo, hi = meta["low"], meta["high"]
            if meta.get("log") and lo <= 0:
                lo = hi * 1e-6
            kind = declared_type(f)
            integer = kind is int or (kind is None and isinstance(value, int)
                                      and not isinstance(value, bool))
            out.append(Slider(name, lo, hi, value, meta.get("step"), bool(meta.get("log")),
                              integer, desc))
        else:
            raise ValueError(f"field {name!r} has neither choices nor a range to make a control")
    return out


class Update:
    """What a run function calls to redraw the panel and report progress."""

    def __init__(self, panel: "Panel"):
        self.panel = panel

    @property
    def stop_requested(self) -> bool:
        return self.panel._stop.is_set()

    def __call__(self, fig=None, progress: float | None = None, status: str | None = None):
        if self.stop_requested:
            raise Stopped()
        p = self.panel
        if fig is not None:
            p.show_figure(fig)
        if progress is not None:
            p.report_progress(progress)
        if status is not None:
            with p._status_lock:
                p.status.value = status

    def every(self, build: Callable | None, interval: float = 0.7, total_steps: int | None = None,
              with_model: bool = False, start: float = 0.0, span: float = 1.0):
        """A ``train`` ``on_eval`` hook: a redraw with ``build(history)`` (``build(history,
        model)`` with ``with_model``, for figures of the weights) at most every ``interval`` s,
        and True (stop training) once Stop was pressed. A build that returns None leaves the
        figure as it is. The bar follows the training through :mod:`dynamics.progress`;
        ``total_steps`` also sets it to ``start + span * step / total_steps`` (a loop of a
        run function's own that does not report)."""
        last = [0.0]

        def callback(step, history, model):
            if self.stop_requested:
                return True
            if total_steps:
                self.panel.report_progress(start + span * step / total_steps)
            now = time.perf_counter()
            if build is not None and now - last[0] >= interval:
                last[0] = now
                fig = build(history, model) if with_model else build(history)
                if fig is not None:
                    self.panel.show_figure(fig)
            return False

        return callback

    def ticker(self, total: float, start: float = 0.0, span: float = 1.0) -> Callable[[float], bool]:
        """``tick(done)``: progress ``start + span * done / total``; True once Stop was pressed."""

        def tick(done: float) -> bool:
            if self.stop_requested:
                return True
            self.panel.report_progress(start + span * float(done) / max(total, 1e-12))
            return False

        return tick


class Panel:
    """Controls + Run/Stop buttons + progress + status + live figure.

    ``above`` says what the static book shows above the panel, for the note that replaces it
    there: ``"live"`` (a figure computed by this run of the notebook), a provenance dict from
    :func:`dynamics.results.load` (a figure computed in advance and read from ``data/``), or
    None (nothing: the panel has no static counterpart).
    """

    def __init__(self, run: Callable, controls: Sequence, title: str = "", note: str = "",
                 above: str | dict | None = "live", profile: str | None = None,
                 work: Callable[..., float] | None = None):
        if work is not None and not callable(work):
            raise ValueError(f"work must be a function of the controls' values, got {work!r}")
        self.run_fn, self.work = run, work
        self.specs = list(controls)
        names = [c.name for c in self.specs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate control names in {names}")
        if not (above is None or above == "live" or isinstance(above, dict)):
            raise ValueError(f"above must be 'live', a provenance dict or None, got {above!r}")
        self.above, self.profile = above, get_profile(profile)
        self.controls = {c.name: c.build() for c in self.specs}
        self.button = W.Button(description="Run", button_style="primary", icon="play")
        self.stop_button = W.Button(description="Stop", icon="stop", disabled=True)
        self.progress = W.FloatProgress(value=0.0, min=0.0, max=1.0, layout=W.Layout(width="200px"))
        # the status takes the rest of the row, and a row of its own when it is long
        self.status = W.Label(value="press Run", layout=W.Layout(flex="1 1 auto", width="auto"))
        self.output = W.Output()
        self.figure = None
        self.runs = 0
        self.title = title
        self.note = note
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._forecast: Forecast | None = None
        self._announced: str | None = None  # the long-run notice now in the status line
        self._status_lock = threading.Lock()
        # seconds from Run to the first result shown (the first figure drawn) and to done, for the last run: what `python -m dynamics_ops.bench panels` reports
        self.timing: dict = {}
        self._started: float | None = None
        self._cpu_started: float | None = None
        self._last: tuple[dict, float] | None = None  # (values, seconds) of the last finished run
        _PANELS.append(weakref.ref(self))
        header = [W.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        if note:
            header.append(W.HTML(f"<span style='color:#555'>{html.escape(note)}</span>"))
        self.button.on_click(lambda _: self.start())
        if work is not None:
            self._defaults = dict(self.values)
            for w in self.controls.values():
                w.observe(lambda _: self._say_cost(), names="value")
        self.stop_button.on_click(lambda _: self.stop())
        self.widget = W.VBox(header + [
            W.GridBox(list(self.controls.values()),
                      layout=W.Layout(grid_template_columns="repeat(2, 1fr)")),
            W.HBox([self.button, self.stop_button, self.progress, self.status],
                   layout=W.Layout(flex_flow="row wrap", align_items="center")),
            self.output,
        ])

    # -- driving the panel (a browser or a test) -----------------------------------------
    @property
    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def set(self, **values) -> "Panel":
        """Set controls; a value outside a control's range or options is refused with a
        ``ValueError`` that names the control (the widget would clamp it silently)."""
        by_name = {c.name: c for c in self.specs}
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"panel has no control {name!r}; controls: {list(self.controls)}")
            by_name[name].check(value)
        for name, value in values.items():
            self.controls[name].value = value
        return self

    def estimate(self, **values) -> str | None:
        """What a run at ``values`` (default: the controls' values) will cost, said before it
        starts: about how many seconds, from the rate of the last finished run here (seconds
        per unit of ``work``), or before any run, how many times the defaults' work it is (the
        defaults are sized to finish within 10 s on two CPU cores, issue 43). None without
        ``work``, or at the defaults before any run."""
        if self.work is None:
            return None
        values = {**self.values, **values}
        units = float(self.work(**values))
        if self._last is not None:
            last_values, seconds = self._last
            base = float(self.work(**last_values))
            if base > 0:
                return f"{duration(seconds * units / base)} at these settings (from the last run)"
        base = float(self.work(**self._defaults))
        if base <= 0 or values == self._defaults:
            return None
        ratio = units / base
        if 0.8 <= ratio <= 1.25:
            return "about as long as the defaults (about 10 s or less on two CPU cores)"
        return (f"about {ratio:.2g}× the defaults' work (the defaults take about 10 s or less "
                f"on two CPU cores)")

    def _say_cost(self) -> None:
        """Before a run, the status line says what the chosen settings will cost."""
        if self.running:
            return
        try:
            said = self.estimate()
        except (TypeError, ValueError, ZeroDivisionError):
            return
        with self._status_lock:
            self.status.value = f"press Run: {said}" if said else "press Run"

    def report_progress(self, fraction: float) -> None:
        """Set the progress bar (0..1); the run's forecast measures from it."""
        fraction = max(0.0, min(1.0, float(fraction)))
        self.progress.value = fraction
        if self._forecast is not None and self._forecast.pending:
            self._forecast.update(fraction)

    def _notice(self, message: str) -> None:
        """Where announcements of a run go: the status line."""
        with self._status_lock:
            self._announced = message
            self.status.value = message

    def _heartbeat(self, finished: threading.Event, start: float) -> None:
        """While a run goes on and says nothing else, the status counts its seconds: a run
        that reports no progress still shows that it is alive."""
        while not finished.wait(HEARTBEAT_S):
            seconds = _clock() - start
            with self._status_lock:
                if self.status.value.startswith("running…"):
                    self.status.value = f"running… {seconds:.0f} s"

    def _first_result(self) -> None:
        if self._started is not None and "first_s" not in self.timing:
            self.timing["first_s"] = _clock() - self._started
            self.timing["first_cpu_s"] = _cpu_clock() - self._cpu_started

    def show_figure(self, fig) -> None:
        """Draw ``fig`` in the panel (safe from the training thread: it sets the output's
        contents instead of printing into it)."""
        self._first_result()
        self.figure = fig
        self.output.outputs = ({"output_type": "display_data", "metadata": {},
                                "data": {"text/html": to_html(fig),
                                         "text/plain": f"<figure: {fig.layout.title.text or ''}>"}},)

    def start(self) -> None:
        """What the Run button does: run :meth:`click` in a background thread."""
        if self.running:
            return
        self._thread = threading.Thread(target=self.click, name="dynamics-panel", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """What the Stop button does: ask the run to stop at its next progress report."""
        self._stop.set()
        self.status.value = "stopping…"

    def click(self):
        """Run the experiment with the current control values, in this thread (what the Run
        button does, without the thread). Returns the figure shown at the end."""
        self.button.disabled, self.stop_button.disabled = True, False
        self._stop.clear()
        self.progress.value = 0.0
        self.status.value = "running…"
        self.runs += 1
        self._announced = None
        interrupted, outcome = None, "interrupted"
        finished = threading.Event()
        self.timing, self._started, self._cpu_started = {}, _clock(), _cpu_clock()
        heartbeat = threading.Thread(target=self._heartbeat, args=(finished, self._started),
                                     name="dynamics-panel-heartbeat", daemon=True)
        heartbeat.start()
        try:
            self._forecast = Forecast("this run", 1.0)
            try:
                update = Update(self)  # the bar and Stop: the progress job the run reports into
                with progress_bars(False), announcements_to(self._notice), self._forecast, \
                        P.reporting(update.ticker(1.0)):
                    fig = self.run_fn(update, **self.values)
            finally:
                finished.set()
                heartbeat.join()
            if fig is not None:
                self.show_figure(fig)
            outcome = "done"
            if self._stop.is_set():
                outcome = "stopped"
                self.status.value = "stopped: " + self._done_status("showing what it had")
            elif self._running_status():
                self.status.value = "done"
            self.progress.value = 1.0
        except Stopped:
            outcome = self.status.value = "stopped"
        except ValueError as err:
            outcome, self.status.value = "invalid", f"invalid: {err}"
        except Exception as err:  # keep the panel alive whatever the run did
            outcome = "failed"
            self.status.value = f"failed: {type(err).__name__}: {err}"
            self.output.append_stderr(traceback.format_exc())
        except BaseException as err:  # KeyboardInterrupt: reset, then let it through
            outcome = self.status.value = "interrupted"
            interrupted = err
        finally:
            self._forecast = None
            self.button.disabled, self.stop_button.disabled = False, True
            self.timing["done_s"] = _clock() - self._started
            self.timing["cpu_s"] = _cpu_clock() - self._cpu_started
            self.timing.setdefault("first_s", self.timing["done_s"])  # nothing shown before the end
            self.timing.update(outcome=outcome, status=self.status.value)
            if outcome == "done":
                self._last = (dict(self.values), self.timing["done_s"])
            self._started = None
        if interrupted is not None:
            raise interrupted
        return self.figure

    def _running_status(self) -> bool:
        """Whether the status still says what the panel said (not a word of the run's own)."""
        s = self.status.value
        return s.startswith("running…") or s in ("stopping…", self._announced)

    def _done_status(self, default: str) -> str:
        return default if self._running_status() or self.status.value == "done" else self.status.value

    # -- display ---------------------------------------------------------------------------
    def static_note(self) -> str:
        """The text the static book shows in place of the panel: what a reader could change
        in Jupyter or Colab, and where the figure above came from."""
        from .results import describe

        what = ", ".join(c.describe() for c in self.specs)
        text = (f"A live panel. In Jupyter or on Colab (the launch button at the top of the "
                f"page) it lets you set {what} and re-run the experiment; a static page cannot run it.")
        if self.note:  # what the live panel says of its defaults, the static page says too
            text += " " + self.note.strip()
        if self.above == "live":
            text += (f" The figure above was computed while this page was built, in the "
                     f"{self.profile} profile.")
        elif isinstance(self.above, dict):
            text += " The figure above was computed in advance: " + describe(self.above)
        return text

    def _repr_mimebundle_(self, **kwargs):
        if hasattr(self.widget, "_repr_mimebundle_"):  # ipywidgets 8
            bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        else:  # ipywidgets 7 (Colab) displays widgets through _ipython_display_
            bundle = {"text/plain": repr(self.widget),
                      "application/vnd.jupyter.widget-view+json": {
                          "version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}}
        bundle["text/html"] = (
            f'<div class="dynamics-panel-note" style="border-left:3px solid #3366cc;'
            f'padding:0.4em 0.8em;color:#444;background:#f5f7fb;">'
            f"<b>{html.escape(self.title or 'Try it')}</b>: {html.escape(self.static_note())}</div>")
        return bundle

    def display(self):
        from IPython.display import display

        display(self)
