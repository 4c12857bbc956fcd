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
    made once, ``measure`` seconds (:data:`MEASURE_S`) after the first progress: the time to
    that first progress (the setup: data, probes, a first evaluation) plus the rest at the rate
    measured since, so that a setup is counted once and not once per step (a device sync is
    done only then, through ``sync``, so that queued GPU work is counted).
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
        self._first: tuple[float, float] | None = None  # (time, done) of the first progress

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
        now = time.perf_counter()
        if self._first is None:  # the rate is timed from the first progress on: the setup
            self._first = (now, float(done))  # before it (data, probes, a first evaluation)
            if done < self.total:  # is counted once, not once per step
                return False
        t1, d1 = self._first
        if now - t1 < self.measure and done < self.total:
            return False
        if done <= d1 and done < self.total:
            return False
        if self.sync is not None:
            self.sync()
            now = time.perf_counter()
        self.pending = False
        if done >= self.total:
            self.estimate = now - self.start
        else:
            self.estimate = (t1 - self.start) + (now - t1) / (float(done) - d1) * (self.total - d1)
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
