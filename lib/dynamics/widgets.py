"""Live experiment panels from a declarative list of controls (core ipywidgets only).

A panel is controls + a Run button + a progress bar + a status line + a figure that
updates while training runs::

    def run(update, lr, wd):
        h = train(..., callbacks=[update.every(lambda h: curves(h))])
        return curves(h)

    panel = Panel(run, [Slider("lr", 1e-4, 1e-1, log=True, value=1e-3),
                        Choice("wd", [0.0, 0.1, 1.0])], title="Try it")
    panel            # shows it; panel.set(lr=0.01); panel.click() drives it without a browser

``run(update, **values)`` returns the final figure. ``update(fig=..., progress=..., status=...)``
redraws while it runs; ``update.every(build)`` makes a ``train`` callback that redraws with
``build(history)`` at most every ``interval`` seconds. A run that raises ``ValueError``
shows "invalid: ..." and any other error "failed: ..."; the panel stays usable either way.
A run may report divergence with ``update(status="diverged at step k")``.

In the static book a panel cannot run; it shows a note instead (the figure above it, computed
in advance, is its static counterpart).
"""
from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass, fields
from typing import Any, Callable, Sequence

import ipywidgets as W
from IPython.display import HTML, clear_output, display

from .plots import to_html


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

    def build(self):
        value = self.low if self.value is None else self.value
        label = self.description or self.name
        style = dict(description_width="initial")
        if self.log:
            if self.low <= 0:
                raise ValueError(f"log slider {self.name!r} needs low > 0")
            return W.FloatLogSlider(value=value, base=10, min=math.log10(self.low),
                                    max=math.log10(self.high), step=self.step or 0.1,
                                    description=label, style=style, readout_format=".2e")
        if self.integer:
            return W.IntSlider(value=int(value), min=int(self.low), max=int(self.high),
                               step=int(self.step or 1), description=label, style=style)
        return W.FloatSlider(value=value, min=self.low, max=self.high,
                             step=self.step or (self.high - self.low) / 100,
                             description=label, style=style, readout_format=".3g")


@dataclass
class Choice:
    """A dropdown over fixed options."""

    name: str
    options: Sequence[Any]
    value: Any = None
    description: str = ""

    def build(self):
        value = self.options[0] if self.value is None else self.value
        return W.Dropdown(options=list(self.options), value=value,
                          description=self.description or self.name,
                          style=dict(description_width="initial"))


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
        desc = name
        if meta.get("choices"):
            out.append(Choice(name, meta["choices"], value, desc))
        elif meta.get("low") is not None and meta.get("high") is not None:
            lo, hi = meta["low"], meta["high"]
            if meta.get("log") and lo <= 0:
                lo = hi * 1e-6
            out.append(Slider(name, lo, hi, value, meta.get("step"), bool(meta.get("log")),
                              isinstance(value, int) and not isinstance(value, bool), desc))
        else:
            raise ValueError(f"field {name!r} has neither choices nor a range to make a control")
    return out


class Update:
    """What a run function calls to redraw the panel and report progress."""

    def __init__(self, panel: "Panel"):
        self.panel = panel

    def __call__(self, fig=None, progress: float | None = None, status: str | None = None):
        p = self.panel
        if fig is not None:
            p.show_figure(fig)
        if progress is not None:
            p.progress.value = max(0.0, min(1.0, float(progress)))
        if status is not None:
            p.status.value = status

    def every(self, build: Callable, interval: float = 0.7, total_steps: int | None = None,
              with_model: bool = False):
        """A ``train`` callback: redraw with ``build(history)`` (``build(history, model)`` with
        ``with_model``, for figures of the weights) at most every ``interval`` s; a build that
        returns None leaves the figure as it is."""
        last = [0.0]

        def callback(step, history, model):
            now = time.perf_counter()
            if total_steps:
                self.panel.progress.value = min(1.0, step / total_steps)
            if now - last[0] >= interval:
                last[0] = now
                self(fig=build(history, model) if with_model else build(history))
            return False

        return callback


class Panel:
    """Controls + Run button + progress + status + live figure."""

    def __init__(self, run: Callable, controls: Sequence, title: str = "", note: str = "",
                 static_note: str = ""):
        self.run_fn = run
        self.specs = list(controls)
        names = [c.name for c in self.specs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate control names in {names}")
        self.controls = {c.name: c.build() for c in self.specs}
        self.button = W.Button(description="Run", button_style="primary", icon="play")
        self.progress = W.FloatProgress(value=0.0, min=0.0, max=1.0, layout=W.Layout(width="200px"))
        self.status = W.Label(value="press Run")
        self.output = W.Output()
        self.figure = None
        self.runs = 0
        self.title = title
        self.static_note = static_note or (
            "Live panel: run this notebook (Colab or Jupyter) to use it. "
            "The figure above shows results computed in advance.")
        header = [W.HTML(f"<b>{title}</b>")] if title else []
        if note:
            header.append(W.HTML(f"<span style='color:#555'>{note}</span>"))
        self.button.on_click(lambda _: self.click())
        self.widget = W.VBox(header + [
            W.GridBox(list(self.controls.values()),
                      layout=W.Layout(grid_template_columns="repeat(2, 1fr)")),
            W.HBox([self.button, self.progress, self.status]),
            self.output,
        ])

    # -- driving the panel (a browser or a test) -----------------------------------------
    @property
    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    def set(self, **values) -> "Panel":
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"panel has no control {name!r}; controls: {list(self.controls)}")
            self.controls[name].value = value
        return self

    def show_figure(self, fig) -> None:
        self.figure = fig
        with self.output:
            clear_output(wait=True)
            display(HTML(to_html(fig)))

    def click(self):
        """Run the experiment with the current control values (what the Run button does)."""
        self.button.disabled = True
        self.progress.value = 0.0
        self.status.value = "running…"
        self.runs += 1
        try:
            fig = self.run_fn(Update(self), **self.values)
            if fig is not None:
                self.show_figure(fig)
            if self.status.value == "running…":
                self.status.value = "done"
            self.progress.value = 1.0
        except ValueError as err:
            self.status.value = f"invalid: {err}"
        except Exception as err:  # keep the panel alive whatever the run did
            self.status.value = f"failed: {type(err).__name__}: {err}"
            with self.output:
                traceback.print_exc()
        finally:
            self.button.disabled = False
        return self.figure

    # -- display ---------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle = dict(bundle)
        bundle["text/html"] = (
            f'<div class="dynamics-panel-note" style="border-left:3px solid #3366cc;'
            f'padding:0.4em 0.8em;color:#444;background:#f5f7fb;">'
            f"<b>{self.title or 'Try it'}</b> — {self.static_note}</div>")
        return bundle

    def display(self):
        display(self)
