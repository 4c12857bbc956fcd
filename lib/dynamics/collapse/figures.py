"""Neural collapse, the figures: figures of the runs (``*_figure``), static sliders over the
precomputed results in ``data/`` (``*_slider``) and tables. Layout (legends, sliders,
margins, log ticks) is the house layout's business (:func:`dynamics.plots.house`); these
builders only say what to draw. The live panels are in :mod:`.panels`, the claims and the
numbers the prose quotes in :mod:`.claims`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from .. import plots, results
from ..train import History
from .science import at_zero_error, bias_free_nc3, cosine_gram, etf_gram, terminal_phase_start

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["LABELS", "terminal_phase_table", "nc_figure", "simplex_figure",
           "simplex_frames_figure", "gram_figure",
           "conditions_figure", "ufm_figure", "imbalance_figure", "imbalance_table",
           "range_text", "angle_range", "WEIGHT_DECAY_SLIDER_OPENS_AT", "GD_SLIDER_OPENS_AT",
           "weight_decay_slider", "gd_slider", "simplex_slider", "imbalance_slider", "decay_clock", "clock_figure",
           "route_numbers", "route_start", "decay_sweep", "gd_sweep", "imbalance_trends",
           "TIE_REL", "precomputed_scale"]

LABELS = {
    "nc1": "NC1",
    "etf_distance": "NC2 distance to ETF Gram (Zhu et al.)",
    # Papyan et al.'s names: their "equiangularity" is the std of the cosines, which the
    # book does not compute; the mean |cos + 1/(C−1)| is their "maximal-angle equiangularity"
    "equiangularity": "NC2 maximal-angle equiangularity",
    "equinorm": "NC2 equinorm (std ÷ mean of norms)",
    "nc3": "NC3",
    "nc3_centred": "NC3, W centred (variant)",
    "nc4": "NC4",
    "orthogonality": "mean |cos| of raw means",
    "balancedness": "balancedness",
    "imbalance": "‖D‖ ÷ its value at step 1",
    "conditioning": "conditioning s₁/s_C",
    "train_loss": "training loss",
}


def _shared_log_ranges(figs):
    """Give the log axes of the first figure the range of the data of *all* figures, so a
    slider over them keeps its axes (and their ticks) still while the traces change."""
    lay = figs[0].layout
    for name in [k for k in lay.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]:
        if lay[name].type != "log":
            continue
        letter, ref = name[0], name[0] + name[5:]
        values = [np.asarray(getattr(tr, letter), float) for f in figs for tr in f.data
                  if (getattr(tr, f"{letter}axis", None) or letter) == ref and getattr(tr, letter) is not None
                  and np.asarray(getattr(tr, letter)).dtype.kind in "fiu"]
        v = np.concatenate(values) if values else np.zeros(0)
        v = v[np.isfinite(v) & (v > 0)]
        if len(v):
            lo, hi = np.log10(v.min()), np.log10(v.max())
            pad = 0.04 * max(hi - lo, 0.2)
            lay[name].range = [lo - pad, hi + pad]
    return figs


def _positive(steps, values):
    """Points that a log-log plot can show (step > 0, finite positive value)."""
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    keep = np.isfinite(values) & (steps > 0) & (values > 0)
    return steps[keep], values[keep]


def terminal_phase_table(history: History):
    """Each measure at the first step with zero training error and at the end of the run."""
    z, T = terminal_phase_start(history), history.steps[-1] if len(history) else None
    rows = []
    for k in ("nc1", "equinorm", "equiangularity", "etf_distance", "nc3", "nc3_centred", "nc4",
              "orthogonality"):
        if k not in history:
            continue
        start, end = at_zero_error(history, k), history.last(k)
        rows.append({"measure": LABELS[k] + (" (fraction)" if k == "nc4" else ""),
                     f"at zero error (step {z})": start, f"at the end (step {T})": end,
                     "end ÷ start": end / start if start and np.isfinite(start) else None})
    return plots.table(rows, digits=3, missing="—")


def nc_figure(history: History, title: str = "") -> "go.Figure":
    """NC1–NC4 against step (log axes), the first zero-training-error step dotted. The NC3
    panel also shows the value of Papyan et al.'s NC3 at the collapse of a bias-free head (dotted)."""
    fig = plots.subplots(2, 2, ["NC1", "NC2", "NC3", "NC4 (% of examples)"],
                         title=title or "The four collapses", height=640)
    panels = {(1, 1): ["nc1"], (1, 2): ["etf_distance", "equiangularity", "equinorm"],
              (2, 1): ["nc3", "nc3_centred"], (2, 2): ["nc4"]}
    colors = dict(nc1=0, etf_distance=1, equiangularity=2, equinorm=3, nc3=4, nc3_centred=5, nc4=6)
    for (r, c), keys in panels.items():
        for k in keys:
            if k not in history:
                continue
            if k == "nc4":  # in per cent, on a linear axis: no disagreement is a point to show
                x, y = np.asarray(history.steps, float), 100 * np.asarray(history[k], float)
                x, y = x[(x > 0) & np.isfinite(y)], y[(x > 0) & np.isfinite(y)]
            else:
                x, y = _positive(history.steps, history[k])
            fig.add_scatter(x=x, y=y, mode="lines+markers", marker=dict(size=4), row=r, col=c,
                            name=LABELS[k], line=dict(color=plots.PALETTE[colors[k]]))
    if "nc3" in history and len(history) > 1:
        C = int(history.info.get("config", {}).get("n_classes") or 0)
        if C >= 2:
            steps = [s for s in history.steps if s > 0]
            fig.add_scatter(x=[steps[0], steps[-1]], y=[bias_free_nc3(C)] * 2, mode="lines",
                            name="NC3 at bias-free collapse", line=dict(color=plots.PALETTE[4], dash="dot"),
                            row=2, col=1, hoverinfo="skip")
    z = terminal_phase_start(history)
    for (r, c) in panels if z else ():  # (a log axis has no step 0)
        plots.mark_step(fig, z, "zero error" if (r, c) == (1, 1) else "", row=r, col=c, logx=True)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=2)
    for r, c in ((1, 1), (1, 2), (2, 1)):
        fig.update_yaxes(type="log", row=r, col=c)
    return fig


def simplex_figure(history: History, recorder, title: str = "") -> "go.Figure":
    """Section 2's picture of a run with snapshots (``run_collapse(..., snapshots=True)``):
    :func:`simplex_frames_figure` of about ten of its snapshots, log-spaced in time."""
    from .experiments import simplex_frames

    return simplex_frames_figure(*simplex_frames(history, recorder), title=title)


def simplex_frames_figure(frames: list[dict], steps: list[int], title: str = "",
                          fast: bool = True) -> "go.Figure":
    """The class means (large dots, lines from the origin), classifier rows (diamonds, dashed)
    and some examples (small dots) in 3-D, with a slider over training time; the grey
    wireframe is the simplex ETF closest to the final means. ``fast=False`` builds every frame
    with the default template merged in: the same figure, slower (a test compares them)."""
    import plotly.graph_objects as go

    C = len(frames[-1]["means"])
    colors = [plots.PALETTE[c % len(plots.PALETTE)] for c in range(C)]
    edges = [(i, j) for i in range(C) for j in range(i + 1, C)]

    def polyline(pairs):  # segments a-b, as one line broken by None
        xyz = [[], [], []]
        for a, b in pairs:
            for p in (a, b, (None, None, None)):
                for k in range(3):
                    xyz[k].append(p[k])
        return xyz

    axis = dict(range=[-1.25, 1.25], showticklabels=False, title="")
    figs = []
    for k, (f, step) in enumerate(zip(frames, steps)):
        # the slider reads only the first frame's layout: the others are given an empty
        # template, so plotly merges no default into them (most of a figure's cost)
        fig = go.Figure() if k == 0 or not fast else go.Figure(layout=dict(template={}))
        ex = polyline([(f["etf"][i], f["etf"][j]) for i, j in edges])
        fig.add_scatter3d(x=ex[0], y=ex[1], z=ex[2], mode="lines", name="simplex ETF",
                          line=dict(color="#999", width=2, dash="dash"), hoverinfo="skip")
        pts, lab = np.asarray(f["points"]), np.asarray(f["labels"], int)
        fig.add_scatter3d(x=pts[:, 0], y=pts[:, 1], z=pts[:, 2], mode="markers", name="examples",
                          marker=dict(size=2.5, color=[colors[c] for c in lab], opacity=0.5))
        for c in range(C):
            m = f["means"][c]
            fig.add_scatter3d(x=[0, m[0]], y=[0, m[1]], z=[0, m[2]], mode="lines+markers",
                              marker=dict(size=[0, 7], color=colors[c]),
                              line=dict(color=colors[c], width=5), name=f"class {c} mean")
        w = polyline([((0.0, 0.0, 0.0), row) for row in f["weight"]])
        fig.add_scatter3d(x=w[0], y=w[1], z=w[2], mode="lines+markers", name="classifier rows",
                          line=dict(color="#444", width=2, dash="dash"),
                          marker=dict(size=[0, 5, 0] * C, symbol="diamond",
                                      color=[col for col in colors for _ in range(3)]))
        fig.update_layout(title=f"{title or 'Class means and classifier'}, step {step}")
        figs.append(fig)
    figs[0].update_layout(height=520, hovermode="closest",
                          scene=dict(xaxis=axis, yaxis=axis, zaxis=axis, aspectmode="cube",
                                     camera=dict(eye=dict(x=1.3, y=1.3, z=0.8))))
    labels = [str(s) for s in steps]
    return plots.slider(figs, labels, name="step")


def gram_figure(recorder) -> "go.Figure":
    """Cosines between the centred class means at the end of training (the last snapshot of a
    ``run_collapse(..., snapshots=True)`` recorder), beside a simplex ETF's."""
    snapshot = recorder.snapshots[-1]
    means = torch.as_tensor(np.asarray(snapshot["means"]), dtype=torch.float64)
    C = len(means)
    cos = cosine_gram(means, centre=False).numpy()  # snapshot means are already centred
    fig = plots.subplots(1, 2, ["measured", "simplex ETF"], title="Cosines between centred class means",
                         height=380)
    labels = [f"class {c}" for c in range(C)]
    for k, z in enumerate((cos, etf_gram(C).numpy())):
        fig.add_heatmap(z=z, x=labels, y=labels, zmin=-1, zmax=1, colorscale="RdBu_r",
                        texttemplate="%{z:.2f}", showscale=k == 1, row=1, col=k + 1,
                        colorbar=dict(thickness=12, len=0.9, y=0.45))
    fig.update_yaxes(autorange="reversed")
    fig.update_yaxes(showticklabels=False, row=1, col=2)  # the same classes as on the left
    fig.update_layout(hovermode="closest")
    return fig


def conditions_figure(runs: dict, title: str = "") -> "go.Figure":
    """Jacot et al.'s conditions against step, one colour per run: the training loss (dot:
    zero error), NC1; the imbalance ‖D‖ relative to its value after the first step (conserved
    by gradient flow)
    and the relative balancedness; the conditioning of the features and NC3. ``runs``: a
    :class:`~.experiments.Conditions` or ``{label: History}``."""
    keys = [["train_loss", "nc1"], ["imbalance", "balancedness"], ["conditioning", "nc3"]]
    titles = ["training loss", "NC1", "‖D‖ ÷ its value at step 1", "balancedness (relative)",
              "conditioning s₁/s_C", "NC3"]
    fig = plots.subplots(3, 2, titles, title=title or "Jacot et al.'s conditions", height=800,
                         vertical_spacing=0.1)
    runs = runs.labelled() if isinstance(runs, results.Record) else runs
    for i, (name, h) in enumerate(runs.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        first = True
        for r, row in enumerate(keys, start=1):
            for c, key in enumerate(row, start=1):
                if key not in h or not len(h):
                    continue
                values = np.asarray(h[key], float)
                if key == "imbalance":  # ÷ its value at the first step ≥ 1 (a live run has step 0)
                    later = np.flatnonzero(np.asarray(h.steps) >= 1)
                    start = values[later[0]] if len(later) else np.nan
                    values = values / start if start > 0 else values * np.nan
                x, y = _positive(h.steps, values)
                fig.add_scatter(x=x, y=y, mode="lines", row=r, col=c, legendgroup=name,
                                name=name + (" (diverged)" if h.diverged else ""),
                                showlegend=first, line=dict(color=color))
                first = False
        z = terminal_phase_start(h)
        if z is not None and z > 0:
            fig.add_scatter(x=[z], y=[h["train_loss"][h.steps.index(z)]], mode="markers", row=1,
                            col=1, legendgroup=name, showlegend=False,
                            marker=dict(color=color, size=8), hoverinfo="x")
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=3)
    fig.update_yaxes(type="log")
    fig.update_yaxes(type="linear", row=3, col=1)  # a few units: a linear axis reads better
    return fig


def ufm_figure(runs: dict, title: str = "") -> "go.Figure":
    """NC1, distance to the ETF and balancedness of the unconstrained features model: a
    :class:`~.experiments.UfmPair` or ``{label: History}``."""
    runs = runs.labelled() if isinstance(runs, results.Record) else runs
    keys = [k for k in ("nc1", "etf_distance", "balancedness") if all(k in h for h in runs.values())]
    short = dict(nc1="NC1", etf_distance="distance to ETF", balancedness="balancedness")
    fig = plots.subplots(1, len(keys), [short[k] for k in keys], height=380,
                         title=title or "Unconstrained features model")
    for i, (name, h) in enumerate(runs.items()):
        for j, k in enumerate(keys):
            x, y = _positive(h.steps, h[k])
            fig.add_scatter(x=x, y=y, mode="lines", row=1, col=j + 1, name=name,
                            legendgroup=name, showlegend=j == 0,
                            line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="GD step", row=1)
    fig.update_yaxes(type="log")
    return fig


def imbalance_figure(result, title: str = "") -> "go.Figure":
    """Left: norms of class means and classifier rows against class count (each series
    divided by its geometric mean, so shapes compare): the unconstrained features model, its
    exact solution and the network. Right: angles between the network's class means.
    ``result``: an :class:`~.experiments.Imbalance` (a part not yet trained, None, is not
    drawn)."""
    counts = np.asarray(result.counts, float)
    C = len(counts)
    fig = plots.subplots(1, 2, ["norm ÷ geometric mean", "network: angles (°)"], height=440,
                         title=title or "Imbalanced classes", column_widths=[0.55, 0.45])

    def rel(v):
        v = np.asarray(v, float)
        return v / np.exp(np.mean(np.log(np.maximum(v, 1e-12))))

    series = [("theory", "feature_norm", "features: exact", "lines", 0),
              ("ufm", "feature_norm", "features: free model", "markers", 0),
              ("network", "feature_norm", "features: network", "markers", 0),
              ("theory", "classifier_norm", "classifier: exact", "lines", 1),
              ("ufm", "classifier_norm", "classifier: free model", "markers", 1),
              ("network", "classifier_norm", "classifier: network", "markers", 1)]
    for source, key, name, mode, color in series:
        part = getattr(result, source)
        if part is None:
            continue
        open_marker = source == "network"
        fig.add_scatter(x=counts, y=rel(getattr(part, key)), mode=mode, name=name, row=1, col=1,
                        line=dict(color=plots.PALETTE[color]),
                        marker=dict(size=10 if open_marker else 8, color=plots.PALETTE[color],
                                    symbol="circle-open" if open_marker else "circle"))
    fig.update_xaxes(type="log", title_text="examples in the class", row=1, col=1)
    # the norms differ by tens of per cent: a linear axis reads better than a log one
    if result.network is not None:
        # each class named: at ratio 1 every class has the same count, and labels that are
        # equal merge on a category axis, which would draw the matrix as one cell
        labels = [f"class {c} (n={int(n)})" for c, n in enumerate(counts)]
        angles = np.asarray(result.network.angles, float) + np.diag([np.nan] * C)
        fig.add_heatmap(z=angles, x=labels, y=labels, zmin=0, zmax=180, colorscale="RdBu_r",
                        texttemplate="%{z:.0f}", row=1, col=2, showscale=True,
                        colorbar=dict(title=dict(text="angle (°)"), thickness=12,
                                      tickvals=[0, 45, 90, 135, 180]),
                        hovertemplate="%{x}, %{y}: %{z:.1f}°<extra></extra>")
        fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_layout(hovermode="closest")
    return fig


SMALLEST_ANGLE = "smallest angle to another class (°)"  # the table's column: the network's


def imbalance_table(result):
    """One row per class of a :func:`run_imbalance` result: its count n, the norms of its class
    mean ‖h̄‖ and classifier row ‖w‖ in the unconstrained ("free") model beside the exact
    solution, the network's (in its own units: compare trends), and the smallest angle between
    its class mean and another's in the network."""
    C = len(result.counts)
    u, t, net = result.ufm, result.theory, result.network
    angles = None if net is None else np.asarray(net.angles, float) + np.diag([np.inf] * C)
    rows = []
    for c, n in enumerate(result.counts):
        rows.append({
            "n": int(n),
            "‖h̄‖ free": float(u.feature_norm[c]), "‖h̄‖ exact": float(t.feature_norm[c]),
            "‖w‖ free": float(u.classifier_norm[c]), "‖w‖ exact": float(t.classifier_norm[c]),
            "‖h̄‖ net": None if net is None else float(net.feature_norm[c]),
            "‖w‖ net": None if net is None else float(net.classifier_norm[c]),
            SMALLEST_ANGLE: None if net is None else float(angles[c].min()),
        })
    return plots.table(rows, digits=4, formats={SMALLEST_ANGLE: "{:.1f}"})


def range_text(lo: float, hi: float, fmt) -> str:
    """A range as the prose says it: "between a and b", or "all a" when the two ends print
    the same under ``fmt`` (never "between 90.0° and 90.0°")."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"range_text needs finite ends, got {lo} and {hi}")
    if lo > hi:
        raise ValueError(f"range_text needs lo <= hi, got {lo} and {hi}")
    a, b = fmt(lo), fmt(hi)
    return f"all {a}" if a == b else f"between {a} and {b}"


def angle_range(lo: float, hi: float, digits: int = 1) -> str:
    """Angles in degrees at ``digits`` decimals: "between 72° and 88°", or "all 90.0°"."""
    return range_text(lo, hi, lambda v: f"{v:.{digits}f}°")



# ============================================================================ sliders over data/

# where each slider opens: the position whose figure the chapter's text talks about
WEIGHT_DECAY_SLIDER_OPENS_AT = 1.0
GD_SLIDER_OPENS_AT = 5e-4


def _active(values, wanted) -> int:
    """Index of ``wanted`` in ``values`` (the last one when it is not there, e.g. a dry run)."""
    values = [float(v) for v in values]
    return values.index(float(wanted)) if float(wanted) in values else len(values) - 1


def weight_decay_slider(sweep) -> "go.Figure":
    """NC1–NC4 of the precomputed AdamW runs (a :class:`~.experiments.DecaySweep`), one
    weight decay per slider position."""
    decays = sweep.weight_decays
    figs = [nc_figure(History.from_dict(h), title=f"The four collapses, weight decay {wd:g}")
            for wd, h in zip(decays, sweep.histories)]
    _shared_log_ranges(figs)
    active = _active(decays, WEIGHT_DECAY_SLIDER_OPENS_AT)
    return marks_follow(plots.slider(figs, [f"{wd:g}" for wd in decays], name="weight decay",
                                     active=active), figs, active)


def marks_follow(fig: "go.Figure", figs: list, active: int) -> "go.Figure":
    """Make a slider's step markers (the dotted "zero error" lines, layout shapes placed on
    the axes, and their labels) follow the slider: :func:`dynamics.plots.slider` takes its
    layout from the first figure, so each step also sets the shapes and the axis-placed
    labels of its own figure, and the figure opens with the active one's. A label the first
    figure lacks is not shown (every run of the sweeps these sliders draw has the same
    markers)."""
    labels = [i for i, a in enumerate(fig.layout.annotations or ()) if a.xref != "paper"]

    def relayout(f):
        own = [(a.x, a.text) for a in f.layout.annotations or () if a.xref != "paper"]
        out = {"shapes": [s.to_plotly_json() for s in f.layout.shapes or ()]}
        for j, i in enumerate(labels):
            x, text = own[j] if j < len(own) else (None, "")
            out[f"annotations[{i}].x"], out[f"annotations[{i}].text"] = x, text
        return out

    for step, f in zip(fig.layout.sliders[0].steps, figs):
        step.args = [step.args[0], dict(step.args[1], **relayout(f))]
    start = relayout(figs[active])
    fig.layout.shapes = start.pop("shapes")
    for key, value in start.items():
        i, field = int(key[len("annotations["):key.index("]")]), key.rsplit(".", 1)[1]
        fig.layout.annotations[i][field] = value
    return fig


def gd_slider(sweep) -> "go.Figure":
    """Jacot et al.'s conditions under gradient descent, each weight decay beside none (a
    :class:`~.experiments.DecaySweep`)."""
    decays = sweep.weight_decays
    hs = [History.from_dict(h) for h in sweep.histories]
    none = hs[[float(d) for d in decays].index(0.0)]
    figs = [conditions_figure({f"weight decay {wd:g}": h, "none": none} if wd else {"none": none},
                              title=f"Gradient descent, weight decay {wd:g} and none")
            for wd, h in zip(decays, hs)]
    _shared_log_ranges(figs)
    return plots.slider(figs, [f"{wd:g}" for wd in decays], name="weight decay",
                        active=_active(decays, GD_SLIDER_OPENS_AT))


def simplex_slider(simplex) -> "go.Figure":
    """The precomputed 3-D picture of section 2 (a :class:`~.experiments.Simplex`), with its
    slider over training steps."""
    last_etf = np.asarray(simplex.frames[-1]["etf"])
    frames = [dict({k: np.asarray(v) for k, v in f.items()}, etf=last_etf) for f in simplex.frames]
    return simplex_frames_figure(frames, simplex.steps)


def imbalance_slider(sweep) -> "go.Figure":
    """The geometry of section 4, one imbalance ratio per slider position (an
    :class:`~.experiments.ImbalanceSweep`)."""
    figs = [imbalance_figure(r, title=f"Imbalanced classes, largest / smallest = {ratio:g}")
            for ratio, r in zip(sweep.ratios, sweep.runs)]
    _shared_log_ranges(figs)
    return plots.slider(figs, [f"{r:g}" for r in sweep.ratios], name="imbalance ratio")


def _clock(h: History) -> np.ndarray:
    """λ Σ_{s<t} η_s at each evaluation step of an AdamW run of the sweep (cosine schedule)."""
    from .science import cosine_schedule

    cfg = h.info["config"]
    f = cosine_schedule(int(cfg["steps"]))
    eta = np.concatenate([[0.0], np.cumsum([cfg["lr"] * f(t) for t in range(int(cfg["steps"]))])])
    return float(cfg["weight_decay"]) * eta[np.minimum(np.asarray(h.steps, int), len(eta) - 1)]


def decay_clock(sweep) -> list[dict]:
    """Section 3's route, measured on the AdamW decay sweep: for each decay λ > 0, NC1
    divided by the run without decay (same steps), against the decay clock λΣη. Decoupled decay
    multiplies every weight by exp(−λΣη) whatever the gradient; ``rate`` is the fitted
    −d ln(NC1 ratio)/d(λΣη) in the terminal phase (ratio between 1 and 0.01): the e-folds of
    NC1 per unit of clock. Where decay alone sets the pace, the rates of different λ agree.
    ``sweep``: a :class:`~.experiments.DecaySweep`."""
    hs = [History.from_dict(h) for h in sweep.histories]
    none = np.asarray(hs[0]["nc1"], float)
    rows = []
    for d, h in zip(sweep.weight_decays[1:], hs[1:]):
        c, r = _clock(h), np.asarray(h["nc1"], float) / none
        z = terminal_phase_start(h) or 0
        keep = (np.asarray(h.steps) >= z) & (r > 0.01) & (r < 1.0)
        rate = -np.polyfit(c[keep], np.log(r[keep]), 1)[0] if keep.sum() >= 3 else float("nan")
        rows.append(dict(weight_decay=float(d), clock=c, ratio=r, clock_end=float(c[-1]),
                         ratio_end=float(r[-1]), rate=float(rate),
                         loss_ratio=h.last("train_loss") / hs[0].last("train_loss")))
    return rows


def clock_figure(sweep=None) -> "go.Figure":
    """NC1 with decay ÷ NC1 without, against the decay clock λΣη, one line per decay of a
    :class:`~.experiments.DecaySweep` (by default ``data/collapse_weight_decay.json``)."""
    import plotly.graph_objects as go

    if sweep is None:
        from .. import results
        from .experiments import DecaySweep

        sweep = results.load("collapse_weight_decay", as_=DecaySweep)[0]
    fig = go.Figure()
    for i, row in enumerate(decay_clock(sweep)):
        x, y = _positive(row["clock"], row["ratio"])
        fig.add_scatter(x=x, y=y, mode="lines+markers", marker=dict(size=4),
                        name=f"λ = {row['weight_decay']:g}",
                        line=dict(color=plots.PALETTE[(i + 1) % len(plots.PALETTE)]))
    fig.update_xaxes(type="log", title_text="decay clock λ Σₛ ηₛ")
    fig.update_yaxes(type="log", title_text="NC1 ÷ NC1 without decay")
    fig.update_layout(title="AdamW: NC1 against the decay clock", height=420)
    return fig


# ============================================================================ the runs' readings
# (the sweeps and the imbalance runs in the numbers the prose and the claims read)


def route_numbers(sweep) -> dict:
    """Section 3's route, measured on the AdamW decay sweep, in the numbers the prose quotes:
    the e-folds of NC1 per unit of decay clock for the decays whose clock ends below 1, their
    final losses relative to the run without decay, and the largest decay's loss."""
    rows = decay_clock(sweep)
    small = [r for r in rows if r["clock_end"] < 1.0]
    big = [r for r in rows if r["clock_end"] >= 1.0]
    steps = [int(s) for s in History.from_dict(sweep.histories[0]).steps]
    starts = [route_start(r, steps) for r in rows]
    return dict(route_decays=" and ".join(f"{r['weight_decay']:g}" for r in small),
                route_rates=" and ".join(f"{r['rate']:.1f}" for r in small),
                route_loss=max(r["loss_ratio"] for r in small),
                route_big_decays=" and ".join(f"{r['weight_decay']:g}" for r in big),
                route_big_rates=" and ".join(f"{r['rate']:.1f}" for r in big),
                route_big_losses=" and ".join(f"{r['loss_ratio']:.3g}" for r in big),
                route_below=f"{ROUTE_BELOW:g}",
                route_start_steps=range_text(min(s for s, _ in starts), max(s for s, _ in starts),
                                             lambda v: f"{v:.0f}"),
                route_start_clocks=range_text(min(c for _, c in starts), max(c for _, c in starts),
                                              lambda v: f"{v:.2g}"),
                # how far apart the starts are, the latest ÷ the earliest: on the step, on the clock
                route_start_step_spread=f"{max(s for s, _ in starts) / min(s for s, _ in starts):.2g}",
                route_start_clock_spread=f"{max(c for _, c in starts) / min(c for _, c in starts):.2g}",
                route_big=rows[-1]["weight_decay"],
                route_n=_WORDS.get(len(small), str(len(small))), **_early_rise(sweep, rows[-1]))


_WORDS = {0: "no", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _early_rise(sweep, row: dict) -> dict:
    """The largest decay's NC1 ratio (a row of :func:`decay_clock`) before it falls: its
    highest value up to its first drop below 0.9 (:func:`route_start`) and that step, and the
    steps at which this run and the run without decay first reach zero training error (a
    decay that slows the fit delays the collapse that follows it)."""
    from .science import terminal_phase_start

    hs = [History.from_dict(h) for h in sweep.histories]
    big = hs[[float(d) for d in sweep.weight_decays].index(row["weight_decay"])]
    steps = [int(s) for s in big.steps]
    start, _ = route_start(row, steps)
    ratio = np.asarray(row["ratio"], float)[: steps.index(start) + 1 if start else len(steps)]
    k = int(np.nanargmax(ratio))
    return dict(route_big_peak=float(ratio[k]), route_big_peak_step=steps[k],
                route_big_zero=terminal_phase_start(big), route_none_zero=terminal_phase_start(hs[0]))


ROUTE_BELOW = 0.9  # where a decay's fall starts: NC1 first below this fraction of the run without


def route_start(row: dict, steps: list[int], below: float = ROUTE_BELOW) -> tuple[int, float]:
    """Where a decay's NC1 ratio (a row of :func:`decay_clock`, evaluated at ``steps``) first
    drops below ``below``: that step and the clock there ((0, 0.0) if it never does)."""
    under = np.flatnonzero(np.asarray(row["ratio"], float) < below)
    if not len(under):
        return 0, 0.0
    return int(steps[under[0]]), float(row["clock"][under[0]])


def decay_sweep(sweep) -> dict:
    """The precomputed AdamW runs of section 1 (``data/collapse_weight_decay.json``, a
    :class:`~.experiments.DecaySweep`): final NC1 and training loss per weight decay, and the
    ratios the prose quotes."""
    decays = [float(d) for d in sweep.weight_decays]
    hs = [History.from_dict(h) for h in sweep.histories]
    nc1 = np.array([h.last("nc1") for h in hs])
    loss = np.array([h.last("train_loss") for h in hs])
    best = int(np.argmin(nc1))
    return dict(decays=decays, nc1=nc1, loss=loss, best=decays[best],
                none_over_best=nc1[0] / nc1[best],
                lowered=[d for d, v in zip(decays[1:], nc1[1:]) if v < nc1[0]],
                rise=nc1[-1] / nc1[best], largest=decays[-1])


def gd_sweep(sweep) -> dict:
    """The precomputed gradient-descent runs of section 3 (a
    :class:`~.experiments.DecaySweep`): final NC1, loss and balancedness per weight decay, and
    at which decays NC1 ends below or above the run without decay."""
    decays = [float(d) for d in sweep.weight_decays]
    hs = [History.from_dict(h) for h in sweep.histories]
    nc1 = np.array([h.last("nc1") for h in hs])
    bal = np.array([h.last("balancedness") for h in hs])
    opens = decays.index(GD_SLIDER_OPENS_AT) if GD_SLIDER_OPENS_AT in decays else 1
    return dict(decays=decays, nc1=nc1, balancedness=bal,
                loss=np.array([h.last("train_loss") for h in hs]), opens=decays[opens],
                opens_nc1_ratio=nc1[opens] / nc1[0], opens_balancedness=bal[opens],
                lower=[d for d, v in zip(decays[1:], nc1[1:]) if v < nc1[0]],
                higher=[d for d, v in zip(decays[1:], nc1[1:]) if v > nc1[0]])


def _slope(x, y) -> float:
    """Least-squares slope of ``y`` against ``x``, NaN (without a warning) when ``x`` does not
    vary."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    dx = x - x.mean()
    ss = float(dx @ dx)
    return float(dx @ (y - y.mean()) / ss) if ss > 1e-12 * max(1.0, float(x @ x)) else float("nan")


def _corr(a, b) -> float:
    """Pearson correlation, NaN (without a warning) when either side does not vary."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.corrcoef(a, b)[0, 1]) if np.ptp(a) > 0 and np.ptp(b) > 0 else float("nan")


TIE_REL = 0.01  # two neighbouring classes' norms tie when they differ by less than 1% of the larger


def imbalance_trends(result) -> dict:
    """One imbalance result in the numbers the prose quotes: angle ranges, the free model's
    largest relative error against the exact solution, and the network's trends (correlation of
    log norm with log count) with the number of neighbouring class pairs that do not follow them (a pair
    whose norms tie does not: norms less than :data:`TIE_REL` apart, relative to the larger).
    ``result``: an :class:`~.experiments.Imbalance`."""
    counts = np.asarray(result.counts, float)
    off = ~np.eye(len(counts), dtype=bool)
    u, th, net = result.ufm, result.theory, result.network
    order = np.argsort(-counts)

    def against(v, sign):  # neighbours (by count) whose norms do not step the trend's way:
        v = np.asarray(v, float)[order]  # the other way, or a tie (a tie does not follow): two
        d = np.diff(v)                   # norms less than TIE_REL apart, relative to the larger
        tie = np.abs(d) < TIE_REL * np.maximum(np.abs(v[:-1]), np.abs(v[1:]))
        return int(np.sum((sign * d >= 0) | tie))

    return dict(ufm_angles=(float(np.min(np.asarray(u.angles)[off])),
                            float(np.max(np.asarray(u.angles)[off]))),
                ufm_error=float(np.max(np.abs(np.asarray(u.feature_norm)
                                              / np.asarray(th.feature_norm) - 1))),
                net_angles=(float(np.min(np.asarray(net.angles)[off])),
                            float(np.max(np.asarray(net.angles)[off]))),
                corr_w=_corr(np.log(counts), np.log(net.classifier_norm)),
                corr_h=_corr(np.log(counts), np.log(net.feature_norm)),
                slope_w=_slope(np.log(counts), np.log(net.classifier_norm)),
                slope_h=_slope(np.log(counts), np.log(net.feature_norm)),
                against_w=against(net.classifier_norm, +1),  # should fall as counts fall
                against_h=against(net.feature_norm, -1))     # should rise as counts fall


def precomputed_scale(prov: dict, cfg) -> str:
    """How a precomputed file's settings compare with the page's live run (from the file's
    provenance): the same, or the settings in which they differ."""
    theirs, ours = prov["config"], cfg.to_dict()
    diff = [k for k in ("n_train", "width", "depth", "steps", "dataset") if theirs.get(k) != ours.get(k)]
    if not diff:
        return "with the same settings as the run above, on seed 0"
    return "with " + ", ".join(f"{k.replace('_', ' ')} {theirs[k]} (above: {ours[k]})" for k in diff)
