"""One progress protocol for every run: a single run, a sweep, a multi-stage experiment.

The current :class:`Progress` lives in a context variable. Whoever wants to hear about a run
(a live panel's bar and Stop button, a forecast) opens one with :func:`reporting`; whatever runs
inside reports into :func:`current` (``train`` at each evaluation, ``train_many`` per chunk)
and hands a sub-range to a nested run with ``part(i, n)``::

    with progress.reporting(update.ticker(1.0)):       # a panel: bar and Stop
        for i, seed in enumerate(seeds):
            with progress.current().part(i, len(seeds)):
                train(model, data, recipe)              # reports 0..1 of its own part

A callback is ``fn(fraction done of the whole) -> stop?``; once one returns True the whole
job is stopped (``current().stopped``) and every run inside ends at its next evaluation.
Outside any ``reporting`` block, :func:`current` is a silent progress nobody listens to.
"""
from __future__ import annotations

import contextvars
from typing import Callable

_CURRENT: contextvars.ContextVar = contextvars.ContextVar("dynamics_job_progress", default=None)


class Progress:
    """The range ``[start, start + span]`` of a job's progress (the whole job: 0 to 1). Reports
    go to the callbacks of the job's root; Stop is the root's and holds for every part."""

    def __init__(self, callbacks=(), *, root: "Progress | None" = None, start: float = 0.0,
                 span: float = 1.0):
        self.root = root or self
        self.callbacks = list(callbacks)
        self.start, self.span = float(start), float(span)
        self._stopped = False
        self._outer: "Progress | None" = None  # the job this one is a part of (reporting)
        self._tokens: list = []

    @property
    def stopped(self) -> bool:
        """True once a callback asked to stop (or :meth:`stop` was called), here or in the job
        this one runs inside."""
        root = self.root
        if not root._stopped and root._outer is not None and root._outer.stopped:
            root._stopped = True
        return root._stopped

    def stop(self) -> None:
        self.root._stopped = True

    def fraction(self, done: float) -> float:
        """``done`` (0..1 of this part) as a fraction of the whole job."""
        return self.start + self.span * min(1.0, max(0.0, float(done)))

    def report(self, done: float) -> bool:
        """This part is ``done`` (0..1) finished; returns True if the job must stop."""
        root = self.root
        if root.callbacks and not self.stopped:
            whole = self.fraction(done)
            if any([bool(cb(whole)) for cb in root.callbacks]):
                root._stopped = True
        return root._stopped

    def part(self, i: float, n: float) -> "Progress":
        """The ``i``-th of ``n`` equal parts of this range (``i`` may be fractional), for a
        nested run: ``with progress.current().part(i, n): ...``."""
        if n <= 0:
            raise ValueError(f"part(i, n) needs n > 0, got {n!r}")
        return Progress(root=self.root, start=self.start + self.span * i / n, span=self.span / n)

    def span_of(self, start: float, width: float) -> "Progress":
        """The part from ``start`` to ``start + width`` (fractions of this range), for stages
        of unequal length."""
        return Progress(root=self.root, start=self.start + self.span * start,
                        span=self.span * width)

    def __enter__(self) -> "Progress":
        self._tokens.append(_CURRENT.set(self))
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.reset(self._tokens.pop())


def current() -> Progress:
    """The progress the code running now reports into (a silent one outside :func:`reporting`)."""
    now = _CURRENT.get()
    return now if now is not None else Progress()


def reporting(*callbacks: Callable[[float], bool]) -> Progress:
    """A job whose progress goes to ``callbacks`` (``fn(fraction) -> stop?``), to open with
    ``with``. Inside a job already reported, the new job is a part of it: it reports to both
    (the outer job sees the inner one's progress as its current part)."""
    outer = _CURRENT.get()
    if outer is None:
        return Progress(callbacks)
    if not callbacks:
        return outer

    def forward(fraction: float, outer=outer) -> bool:
        return outer.report(fraction)

    job = Progress([forward, *callbacks])
    job._outer = outer
    return job
