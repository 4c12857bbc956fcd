"""A run that would take more than about a minute says so before it gets far: how long, on
this device, and how to get a smaller run (:class:`Forecast`). A live panel shows it in its
status line; a sweep speaks for its runs."""
from __future__ import annotations

import contextvars
import time
from typing import Callable

from .runtime import announce, duration, get_device, smaller_run_hint

LONG_RUN_S = 60.0  # a run longer than this announces itself
MEASURE_S = 1.0    # how long a run is timed before its length is estimated

_FORECAST: contextvars.ContextVar = contextvars.ContextVar("dynamics_forecast", default=None)


class Forecast:
    """Measures the first part of a run and, if the whole run would take longer than
    ``threshold`` seconds (:data:`LONG_RUN_S`), says once what it is and how long it will take
    on this device, with a way to get a smaller run.

    ``update(done)`` reports progress (``done`` of ``total``, e.g. steps); the estimate is
    made once, after ``measure`` seconds (:data:`MEASURE_S`; a device sync is done only then,
    through ``sync``, so that queued GPU work is counted).
    It returns False, so it can be a ``sweep.train_many`` callback. Forecasts nest (``with
    forecast:``): the first to speak speaks for the whole block, and ``inner=False`` keeps the
    runs inside silent (a sweep speaks for its runs, not each run for itself)::

        with Forecast("3 seeds x 25,000 steps", total=3) as fc:
            for i, seed in enumerate(seeds):
                run(seed)
                fc.update(i + 1)
    """

    def __init__(self, what: str, total: float, unit: str | None = None, *, device=None,
                 threshold: float | None = None, measure: float | None = None,
                 sync: Callable[[], None] | None = None, inner: bool = True):
        self.what, self.total, self.unit = what, float(total), unit
        self.device = device
        self.threshold = LONG_RUN_S if threshold is None else float(threshold)
        self.measure = MEASURE_S if measure is None else float(measure)
        self.sync, self.inner = sync, inner
        self.parent = _FORECAST.get()
        self.start = time.perf_counter()
        self.estimate: float | None = None  # seconds, once measured
        self.message: str | None = None     # what was announced, if anything
        self.pending = True                 # still measuring
        self._token = None

    def _said(self) -> bool:
        node = self
        while node is not None:
            if node.message is not None:
                return True
            node = node.parent
        return False

    def _silenced(self) -> bool:
        node = self.parent
        while node is not None:
            if not node.inner:
                return True
            node = node.parent
        return False

    def update(self, done: float) -> bool:
        if not self.pending or done <= 0:
            return False
        if time.perf_counter() - self.start < self.measure and done < self.total:
            return False
        if self.sync is not None:
            self.sync()
        self.pending = False
        elapsed = time.perf_counter() - self.start
        self.estimate = elapsed * self.total / min(float(done), self.total)
        if self.estimate > self.threshold and not self._said() and not self._silenced():
            self.message = self.describe()
            node = self.parent
            while node is not None:  # the enclosing runs have now been announced too
                node.message = node.message or self.message
                node = node.parent
            announce(self.message)
        return False

    def describe(self) -> str:
        device = get_device(self.device).type
        text = f"{self.what}: "
        if self.unit:
            per = self.estimate / self.total
            rate = f"{per:.2g} s a {self.unit}" if per >= 0.01 else f"{1 / per:,.0f} {self.unit}s a second"
            text += f"{self.total:,.0f} {self.unit}s, {duration(self.estimate)} on this {device} ({rate}). "
        else:
            text += f"{duration(self.estimate)} on this {device}. "
        return text + smaller_run_hint()

    def __enter__(self) -> "Forecast":
        self._token = _FORECAST.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _FORECAST.reset(self._token)
