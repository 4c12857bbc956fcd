"""A sweep's results: one :class:`~dynamics.train.History` per configuration, a tidy table,
and the grids, heatmaps and sliders of a phase diagram."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..train import History


def _threshold(metric: str, spec) -> tuple[str, float]:
    """``0.9`` -> ("above", 0.9) for accuracies, ("below", 0.9) for losses;
    ``("below", 0.1)`` or ``{"below": 0.1}`` explicit."""
    if isinstance(spec, dict):
        if len(spec) != 1 or next(iter(spec)) not in ("above", "below"):
            raise ValueError(f"threshold for {metric!r} must be a number, ('above'|'below', v) "
                             f"or {{'above'|'below': v}}, got {spec!r}")
        spec = next(iter(spec.items()))
    if isinstance(spec, (tuple, list)):
        if len(spec) != 2 or spec[0] not in ("above", "below"):
            raise ValueError(f"threshold for {metric!r} must be ('above'|'below', value), got {spec!r}")
        return spec[0], float(spec[1])
    return ("below" if "loss" in metric else "above"), float(spec)


def _sort_values(values: list) -> list:
    unique = []
    for v in values:
        if not any(v == u for u in unique):
            unique.append(v)
    try:
        return sorted(unique)
    except TypeError:
        return unique


def table_grid(rows: Sequence[dict], z: str, x: str, y: str, reduce: str = "mean"):
    """A 2-D array ``Z[i, j]`` of column ``z`` at ``y == ys[i]`` and ``x == xs[j]`` from
    table rows; several rows in one cell (e.g. seeds) are reduced by ``mean`` (ignoring NaN),
    ``median``, ``min`` or ``max``; missing cells and None are NaN. Returns (Z, xs, ys)."""
    rows = list(rows)
    if not rows:
        raise ValueError("table_grid() got no rows")
    for key in (x, y, z):
        if key not in rows[0]:
            raise ValueError(f"no column {key!r} in the table; columns: {list(rows[0])}")
    reducers = {"mean": np.nanmean, "median": np.nanmedian, "min": np.nanmin, "max": np.nanmax}
    if reduce not in reducers:
        raise ValueError(f"reduce must be one of {list(reducers)}, got {reduce!r}")
    xs = _sort_values([r[x] for r in rows])
    ys = _sort_values([r[y] for r in rows])
    cells: dict = {}
    for r in rows:
        i = next(i for i, v in enumerate(ys) if v == r[y])
        j = next(j for j, v in enumerate(xs) if v == r[x])
        val = r[z]
        cells.setdefault((i, j), []).append(np.nan if val is None else float(val))
    Z = np.full((len(ys), len(xs)), np.nan)
    for (i, j), vals in cells.items():
        if not np.all(np.isnan(vals)):
            Z[i, j] = reducers[reduce](vals)
    return Z, xs, ys


def _label(v) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def sweep_heatmap(rows: Sequence[dict], x: str, y: str, z: str, reduce: str = "mean",
                  title: str = "", **kwargs):
    """A phase-diagram heatmap (``plots.heatmap``) of column ``z`` over config keys ``x``, ``y``
    of a sweep table (``SweepResult.table()`` or rows loaded from JSON). Grid values are
    discrete, so both axes are categories (evenly spaced, labelled with the values)."""
    from .. import plots

    Z, xs, ys = table_grid(rows, z, x, y, reduce)
    kwargs.setdefault("xtitle", x)
    kwargs.setdefault("ytitle", y)
    kwargs.setdefault("ztitle", z)
    fig = plots.heatmap(Z, [_label(v) for v in xs], [_label(v) for v in ys], title=title, **kwargs)
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


@dataclass
class SweepResult:
    """Configurations and their histories (same order), plus each model's trained parameters
    (``states[k]``, a state dict; empty for results loaded from JSON)."""

    configs: list
    histories: list
    states: list = field(default_factory=list, repr=False)
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.configs)

    def __iter__(self):
        return iter(zip(self.configs, self.histories))

    def state_dict(self, k: int) -> dict:
        """Model ``k``'s trained parameters (and buffers) as a state dict."""
        if not self.states:
            raise ValueError("this SweepResult holds no parameters (loaded from JSON?)")
        return dict(self.states[k])

    def table(self, thresholds: dict | None = None, metrics: Sequence[str] | None = None) -> list[dict]:
        """One row per configuration: its config keys, ``final_<metric>`` (the value at the
        last step; NaN for a diverged run, which has no final state), ``steps_to_<metric>``
        for each threshold (first evaluation step reaching it, None if never), ``diverged``
        and ``diverged_at``. A threshold is a number (above for accuracies, below for
        losses) or ``("above"|"below", value)``."""
        thresholds = {"test_acc": 0.9} if thresholds is None else dict(thresholds)
        specs = {m: _threshold(m, s) for m, s in thresholds.items()}
        rows = []
        recorded = next((h.metrics for h in self.histories if h.metrics), {})
        for cfg, h in zip(self.configs, self.histories):
            row = dict(cfg)
            names = metrics or [m for m in (h.metrics or recorded) if m != "time"]
            for m in names:
                row[f"final_{m}"] = float("nan") if (h.diverged or m not in h) else h.last(m)
            for m, (side, value) in specs.items():
                row[f"steps_to_{m}"] = h.first_step(m, **{side: value}) if m in h else None
            row["diverged"] = h.diverged
            row["diverged_at"] = h.diverged_at
            if h.info.get("stopped"):
                row["stopped"] = True  # the sweep was stopped before this configuration ran
            rows.append(row)
        return rows

    def grid_values(self, z: str | Callable, x: str, y: str, reduce: str = "mean",
                    thresholds: dict | None = None):
        """(Z, xs, ys) for a heatmap: ``z`` is a table column (``final_test_acc``,
        ``steps_to_test_acc``, ...) or a function ``history -> float``."""
        rows = self.table(thresholds)
        if callable(z):
            for row, h in zip(rows, self.histories):
                row["_z"] = z(h)
            z = "_z"
        return table_grid(rows, z, x, y, reduce)

    def heatmap(self, z: str, x: str, y: str, thresholds: dict | None = None, **kwargs):
        """The phase diagram of ``z`` over config keys ``x`` and ``y`` (see :func:`sweep_heatmap`)."""
        return sweep_heatmap(self.table(thresholds), x, y, z, **kwargs)

    def at_step(self, metric: str, step: int) -> list[float]:
        """Each configuration's ``metric`` at the last evaluation at or before ``step``
        (NaN before its first evaluation or after it diverged)."""
        out = []
        for h in self.histories:
            steps = np.asarray(h.steps)
            idx = np.searchsorted(steps, step, side="right") - 1
            if idx < 0 or metric not in h or (h.diverged and step >= h.diverged_at):
                out.append(float("nan"))
            else:
                out.append(float(h[metric][idx]))
        return out

    def slider_over_time(self, metric: str, x: str, y: str, steps: Sequence[int] | None = None,
                         n: int = 12, reduce: str = "mean", title: str = "", **kwargs):
        """A heatmap of ``metric`` over (x, y) with a slider over training time (``n``
        evaluation steps, log-spaced when the schedule is): the static counterpart of a
        widget that re-runs the sweep."""
        from .. import plots

        if steps is None:
            all_steps = sorted({s for h in self.histories for s in h.steps})
            if not all_steps:
                raise ValueError("no evaluation steps recorded")
            picks = np.unique(np.round(np.linspace(0, len(all_steps) - 1, n)).astype(int))
            steps = [all_steps[i] for i in picks]
        values = {s: self.at_step(metric, s) for s in steps}
        finite = [v for vs in values.values() for v in vs if math.isfinite(v)]
        if finite:  # one colour scale for every step, so frames compare
            kwargs.setdefault("zmin", min(finite))
            kwargs.setdefault("zmax", max(finite))
        figs = []
        base = [dict(c) for c in self.configs]
        for s in steps:
            rows = [dict(r, _z=v) for r, v in zip(base, values[s])]
            fig = sweep_heatmap(rows, x, y, "_z", reduce, title=f"{title or metric} at step {s}",
                                ztitle=metric, **kwargs)
            figs.append(fig)
        return plots.slider(figs, [str(s) for s in steps], name="step")

    def to_dict(self) -> dict:
        """JSON-ready (no parameters): pass to ``results.save``; back with :meth:`from_dict`."""
        return dict(configs=[dict(c) for c in self.configs],
                    histories=[h.to_dict() for h in self.histories], info=dict(self.info))

    @classmethod
    def from_dict(cls, d: dict) -> "SweepResult":
        return cls(list(d["configs"]), [History.from_dict(h) for h in d["histories"]],
                   info=dict(d.get("info", {})))


