"""Neural collapse, the views: figures of the runs (``*_figure``), static sliders over the
precomputed results in ``data/`` (``*_slider``), live panels (``*_panel``) and the claims
table (``claims``). Layout (legends, sliders, margins, log ticks) is the house layout's
business (:func:`dynamics.plots.house`); these builders only say what to draw.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import plots, results
from ..runtime import get_seed
from ..train import History
from .experiments import (live_eval_steps, run_collapse, run_imbalance, simplex_frames)
from .science import (CollapseConfig, ImbalanceConfig, at_zero_error, bias_free_nc3,
                      cosine_gram, etf_gram, terminal_phase_start)

__all__ = ["LABELS", "dataset_line", "terminal_phase_table", "nc_figure", "simplex_figure",
           "gram_figure", "conditions_figure", "ufm_figure", "imbalance_figure", "imbalance_table", "weight_decay_slider",
           "gd_slider", "simplex_slider", "imbalance_slider", "collapse_panel", "simplex_panel",
           "conditions_panel", "imbalance_panel", "claims", "GD_SLIDER_OPENS_AT",
           "WEIGHT_DECAY_SLIDER_OPENS_AT", "decay_sweep", "decay_clock", "clock_figure",
           "gd_sweep", "imbalance_trends", "run_numbers", "conditions_numbers",
           "imbalance_numbers", "route_numbers", "published_claims"]

LABELS = {
    "nc1": "NC1",
    "etf_distance": "NC2 distance to ETF",
    "equiangularity": "NC2 equiangularity",
    "equinorm": "NC2 equinorm",
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


# ============================================================================ figures of one run


def dataset_line(data) -> str:
    """One short line saying what a run trained on (and what it fell back to, if anything)."""
    line = f"{data.name}: {len(data.x_train):,} training examples, {data.n_classes} classes"
    line += f" ({data.info['short']})" if data.info.get("short") else ""
    return line + (f"\n{data.info['fallback']}" if data.info.get("fallback") else "")


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


def simplex_figure(frames: list[dict], steps: list[int], title: str = "") -> "go.Figure":
    """The class means (large dots, lines from the origin), classifier rows (diamonds, dashed)
    and some examples (small dots) in 3-D, with a slider over training time; the grey
    wireframe is the simplex ETF closest to the final means."""
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
    for f, step in zip(frames, steps):
        fig = go.Figure()
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
    return plots.slider(figs, [str(s) for s in steps], name="step")


def gram_figure(snapshot: dict) -> "go.Figure":
    """Cosines between the centred class means at the end of training, beside a simplex ETF's."""
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
    and the relative balancedness; the conditioning of the features and NC3."""
    keys = [["train_loss", "nc1"], ["imbalance", "balancedness"], ["conditioning", "nc3"]]
    titles = ["training loss", "NC1", "‖D‖ ÷ its value at step 1", "balancedness (relative)",
              "conditioning s₁/s_C", "NC3"]
    fig = plots.subplots(3, 2, titles, title=title or "Jacot et al.'s conditions", height=800,
                         vertical_spacing=0.1)
    for i, (name, h) in enumerate(runs.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        first = True
        for r, row in enumerate(keys, start=1):
            for c, key in enumerate(row, start=1):
                if key not in h or not len(h):
                    continue
                values = np.asarray(h[key], float)
                if key == "imbalance":
                    values = values / values[0] if values[0] > 0 else values * np.nan
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
    """NC1, distance to the ETF and balancedness of the unconstrained features model."""
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


def imbalance_figure(result: dict, title: str = "") -> "go.Figure":
    """Left: norms of class means and classifier rows against class count (each series
    divided by its geometric mean, so shapes compare): the unconstrained features model, its
    exact solution and the network. Right: angles between the network's class means."""
    counts = np.asarray(result["counts"], float)
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
        if source not in result:
            continue
        open_marker = source == "network"
        fig.add_scatter(x=counts, y=rel(result[source][key]), mode=mode, name=name, row=1, col=1,
                        line=dict(color=plots.PALETTE[color]),
                        marker=dict(size=10 if open_marker else 8, color=plots.PALETTE[color],
                                    symbol="circle-open" if open_marker else "circle"))
    fig.update_xaxes(type="log", title_text="examples in the class", row=1, col=1)
    # the norms differ by tens of per cent: a linear axis reads better than a log one
    if "network" in result:
        labels = [f"n={int(n)}" for n in counts]
        angles = np.asarray(result["network"]["angles"], float) + np.diag([np.nan] * C)
        fig.add_heatmap(z=angles, x=labels, y=labels, zmin=0, zmax=180, colorscale="RdBu_r",
                        texttemplate="%{z:.0f}", row=1, col=2, showscale=False)
        fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_layout(hovermode="closest")
    return fig


def imbalance_table(result: dict):
    """One row per class of a :func:`run_imbalance` result: its count n, the norms of its class
    mean ‖h̄‖ and classifier row ‖w‖ in the unconstrained ("free") model beside the exact
    solution, the network's (in its own units: compare trends), and the smallest angle between
    its class mean and another's in the network."""
    C = len(result["counts"])
    u, t, net = result["ufm"], result["theory"], result.get("network")
    angles = None if net is None else np.asarray(net["angles"], float) + np.diag([np.inf] * C)
    rows = []
    for c, n in enumerate(result["counts"]):
        rows.append({
            "n": int(n),
            "‖h̄‖ free": float(u["feature_norm"][c]), "‖h̄‖ exact": float(t["feature_norm"][c]),
            "‖w‖ free": float(u["classifier_norm"][c]), "‖w‖ exact": float(t["classifier_norm"][c]),
            "‖h̄‖ net": None if net is None else float(net["feature_norm"][c]),
            "‖w‖ net": None if net is None else float(net["classifier_norm"][c]),
            "angle (°)": None if net is None else float(angles[c].min()),
        })
    return plots.table(rows, digits=4, formats={"angle (°)": "{:.1f}"})


# ============================================================================ sliders over data/

# where each slider opens: the position whose figure the chapter's text talks about
WEIGHT_DECAY_SLIDER_OPENS_AT = 1.0
GD_SLIDER_OPENS_AT = 5e-4


def _active(values, wanted) -> int:
    """Index of ``wanted`` in ``values`` (the last one when it is not there, e.g. a dry run)."""
    values = [float(v) for v in values]
    return values.index(float(wanted)) if float(wanted) in values else len(values) - 1


def weight_decay_slider(payload: dict) -> "go.Figure":
    """NC1–NC4 of the precomputed AdamW runs, one weight decay per slider position."""
    decays = payload["weight_decays"]
    figs = [nc_figure(History.from_dict(h), title=f"The four collapses, weight decay {wd:g}")
            for wd, h in zip(decays, payload["histories"])]
    _shared_log_ranges(figs)
    return plots.slider(figs, [f"{wd:g}" for wd in decays], name="weight decay",
                        active=_active(decays, WEIGHT_DECAY_SLIDER_OPENS_AT))


def gd_slider(payload: dict) -> "go.Figure":
    """Jacot et al.'s conditions under gradient descent, each weight decay beside none."""
    decays = payload["weight_decays"]
    hs = [History.from_dict(h) for h in payload["histories"]]
    none = hs[[float(d) for d in decays].index(0.0)]
    figs = [conditions_figure({f"weight decay {wd:g}": h, "none": none} if wd else {"none": none},
                              title=f"Gradient descent, weight decay {wd:g} and none")
            for wd, h in zip(decays, hs)]
    _shared_log_ranges(figs)
    return plots.slider(figs, [f"{wd:g}" for wd in decays], name="weight decay",
                        active=_active(decays, GD_SLIDER_OPENS_AT))


def simplex_slider(payload: dict) -> "go.Figure":
    """The precomputed 3-D picture of section 2, with its slider over training steps."""
    last_etf = np.asarray(payload["frames"][-1]["etf"])
    frames = [dict({k: np.asarray(v) for k, v in f.items()}, etf=last_etf) for f in payload["frames"]]
    return simplex_figure(frames, payload["steps"])


def imbalance_slider(payload: dict) -> "go.Figure":
    """The geometry of section 4, one imbalance ratio per slider position."""
    figs = [imbalance_figure(r, title=f"Imbalanced classes, largest / smallest = {ratio:g}")
            for ratio, r in zip(payload["ratios"], payload["runs"])]
    _shared_log_ranges(figs)
    return plots.slider(figs, [f"{r:g}" for r in payload["ratios"]], name="imbalance ratio")


# ============================================================================ live panels

WEIGHT_DECAYS = (0.0, 0.01, 0.1, 0.3, 1.0, 3.0)


def _report(update, history: History) -> None:
    """Say in the panel's status what the run did, unless the reader stopped it."""
    if update.stop_requested:
        return
    if history.diverged:
        update(status=f"{history.status}: try a smaller learning rate")
    elif terminal_phase_start(history) is None:
        update(status="done: training error never reached 0 (no terminal phase)")


def collapse_panel(profile: str | None = None, seed: int | None = None):
    """Section 1: train the network live and watch NC1–NC4 (weight decay, learning rate,
    loss, steps)."""
    from ..widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)
    seed = get_seed(seed)

    def run(update, weight_decay, lr, loss, steps):
        cfg = base.replace(weight_decay=float(weight_decay), lr=float(lr), loss=loss, steps=int(steps))
        h, _ = run_collapse(cfg, seed, on_eval=update.every(nc_figure),
                            eval_steps=live_eval_steps(cfg.steps, cfg.n_evals))
        _report(update, h)
        return nc_figure(h)

    controls = [Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                *controls_for(base, ["lr", "loss"]),
                Slider("steps", 100, max(20000, base.steps), base.steps, step=100, integer=True)]
    return Panel(run, controls, title="Try it: the terminal phase",
                 above=results.provenance_of("collapse_weight_decay"), profile=profile)


def simplex_panel(profile: str | None = None, seed: int | None = None):
    """Section 2: the 3-D geometry for 3 or 4 classes (weight decay, steps)."""
    from ..widgets import Choice, Panel, Slider

    base = CollapseConfig.for_profile(profile, n_classes=4)
    seed = get_seed(seed)

    def run(update, n_classes, weight_decay, steps):
        cfg = base.replace(n_classes=int(n_classes), weight_decay=float(weight_decay), steps=int(steps))
        h, rec = run_collapse(cfg, seed, snapshots=True, on_eval=update.every(nc_figure),
                              eval_steps=live_eval_steps(cfg.steps, cfg.n_evals))
        _report(update, h)
        if h.diverged or len(h) < 2:
            return nc_figure(h)
        return simplex_figure(*simplex_frames(h, rec))

    controls = [Choice("n_classes", (3, 4), 4, "classes"),
                Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                Slider("steps", 100, max(20000, base.steps), base.steps, step=100, integer=True)]
    return Panel(run, controls, title="Try it: watch the simplex form",
                 above=results.provenance_of("collapse_simplex"), profile=profile)


def conditions_panel(profile: str | None = None, seed: int | None = None):
    """Section 3: Jacot et al.'s conditions for one run (optimizer, weight decay, width,
    depth of the linear part, learning rate)."""
    from ..widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)
    seed = get_seed(seed)

    def run(update, optimizer, weight_decay, width, linear_depth, lr):
        cfg = base.replace(optimizer=optimizer, weight_decay=float(weight_decay), width=int(width),
                           linear_depth=int(linear_depth), lr=float(lr))
        name = f"{optimizer}, weight decay {weight_decay:g}"
        h, _ = run_collapse(cfg, seed, eval_steps=live_eval_steps(cfg.steps, cfg.n_evals),
                            on_eval=update.every(lambda h: conditions_figure({name: h})))
        _report(update, h)
        return conditions_figure({name: h})

    controls = [Choice("optimizer", ("adamw", "sgd", "momentum"), base.optimizer,
                       "optimizer (sgd: plain gradient descent)"),
                Choice("weight_decay", (0.0, 5e-4, 1e-3, 2e-3, 5e-3) + WEIGHT_DECAYS[1:],
                       base.weight_decay, "weight decay"),
                Slider("width", 8, max(1024, base.width), base.width, step=8, integer=True),
                *controls_for(base, ["linear_depth", "lr"])]
    return Panel(run, controls, title="Try it: what weight decay does to the linear part",
                 above=results.provenance_of("collapse_gd_weight_decay"), profile=profile)


def imbalance_panel(profile: str | None = None, seed: int | None = None):
    """Section 4: imbalanced classes (ratio, depth of the linear part, weight decays)."""
    from ..widgets import Panel, controls_for

    base = ImbalanceConfig.for_profile(profile)
    seed = get_seed(seed)

    def run(update, ratio, linear_depth, weight_decay, ufm_weight_decay):
        cfg = base.replace(ratio=float(ratio), linear_depth=int(linear_depth),
                           weight_decay=float(weight_decay), ufm_weight_decay=float(ufm_weight_decay))
        result = run_imbalance(cfg, seed)
        if result["stopped"]:
            return imbalance_figure(result)
        bad = [f"{part} {result[part]['status']}" for part in ("ufm", "network")
               if result[part]["status"] != "ok"]
        if bad:
            update(status="; ".join(bad) + ": try a smaller learning rate")
        return imbalance_figure(result)

    controls = controls_for(base, ["ratio", "linear_depth", "weight_decay", "ufm_weight_decay"])
    return Panel(run, controls, title="Try it: imbalanced classes",
                 above=results.provenance_of("collapse_imbalance"), profile=profile)


# ============================================================================ claims


def claims(collapse: History, conditions: dict, ufm: dict, imbalance: dict) -> list[dict]:
    """The papers' claims beside what this run of the chapter measured, each with a verdict
    (rows for :func:`dynamics.plots.claims_table`)."""
    n = plots.number
    h = collapse
    z = terminal_phase_start(h)
    T = h.steps[-1]
    C = int(h.info["config"]["n_classes"])
    nc1_z, nc1_T = at_zero_error(h, "nc1"), h.last("nc1")
    etf_z, etf_T = at_zero_error(h, "etf_distance"), h.last("etf_distance")
    nc3_z, nc3_T = at_zero_error(h, "nc3"), h.last("nc3")
    nc3c_z, nc3c_T = at_zero_error(h, "nc3_centred"), h.last("nc3_centred")
    target = bias_free_nc3(C)
    rows = [
        plots.claim("NC1: within-class variability collapses in the terminal phase",
                    "Papyan, Han & Donoho (2020)",
                    f"NC1 {n(nc1_z, 2)} at zero error (step {z}), {n(nc1_T, 2)} at step {T}: "
                    f"{nc1_z / nc1_T:.0f}× lower",
                    plots.verdict(nc1_z >= 10 * nc1_T, nc1_z > 1.5 * nc1_T)),
        plots.claim("NC2: the centred class means approach a simplex ETF",
                    "Papyan, Han & Donoho (2020); the distance: Zhu et al. (2021)",
                    f"distance to the ETF {n(etf_z)} at zero error, {n(etf_T)} at the end; "
                    f"equinorm {n(h.last('equinorm'), 2)}, equiangularity {n(h.last('equiangularity'), 2)}",
                    plots.verdict(etf_T < 0.05, etf_T < etf_z / 1.5, scale=True), asserted=False),
        plots.claim("NC3: the classifier's rows align with the centred class means",
                    "Papyan, Han & Donoho (2020)",
                    f"NC3 {n(nc3_z)} → {n(nc3_T)} (at the collapse of a bias-free head: {n(target)}); "
                    f"variant with W centred {n(nc3c_z)} → {n(nc3c_T)}",
                    plots.verdict(nc3c_T < 0.05 and abs(nc3_T - target) < 0.05, nc3c_T < nc3c_z / 1.5, scale=True),
                    asserted=False),
        plots.claim("NC4: the network decides like the nearest class centre",
                    "Papyan, Han & Donoho (2020)",
                    f"{n(100 * h.last('nc4'), 2)}% of training examples disagree at the end",
                    plots.verdict(h.last("nc4") < 0.01, h.last("nc4") < 0.05)),
    ]
    c = conditions
    aw, an = c["AdamW, weight decay"], c["AdamW, none"]
    gw, gn = c["GD, weight decay"], c["GD, none"]
    ratio_adam = an.last("nc1") / aw.last("nc1")
    ratio_gd = gn.last("nc1") / gw.last("nc1")
    rows += [
        plots.claim("gradient descent with weight decay balances the linear layers "
                    "(Wₗ₊₁ᵀWₗ₊₁ ≈ WₗWₗᵀ); without decay gradient flow conserves the imbalance",
                    "Jacot et al. (2025)",
                    f"final balancedness under GD {n(gw.last('balancedness'), 2)} with decay, "
                    f"{n(gn.last('balancedness'), 2)} without; ‖D‖ kept "
                    f"{n(gn.last('imbalance') / gn['imbalance'][0], 2)} of its value at step 1 without decay, "
                    f"{n(gw.last('imbalance') / gw['imbalance'][0], 2)} with",
                    plots.verdict(gw.last("balancedness") < 0.3 * gn.last("balancedness"))),
        plots.claim("small training loss + balance give NC1 (and weight decay gets GD there)",
                    "Jacot et al. (2025)",
                    f"final NC1 with / without decay: GD {n(gw.last('nc1'), 2)} / {n(gn.last('nc1'), 2)}, "
                    f"AdamW {n(aw.last('nc1'), 2)} / {n(an.last('nc1'), 2)} "
                    f"({ratio_adam:.0f}× lower with decay); final MSE under GD "
                    f"{n(gw.last('train_loss'), 2)} with decay, {n(gn.last('train_loss'), 2)} without",
                    plots.verdict(ratio_gd >= 2 and ratio_adam >= 2, ratio_gd >= 2 or ratio_adam >= 2),
                    asserted=False),
        plots.claim("under AdamW, decay lowers the final NC1 tenfold or more although ‖D‖ grows "
                    "(Adam breaks the conservation law)", "this chapter",
                    f"NC1 {ratio_adam:.0f}× lower with decay; ‖D‖ ends at "
                    f"{n(aw.last('imbalance') / aw['imbalance'][0], 2)} (decay) and "
                    f"{n(an.last('imbalance') / an['imbalance'][0], 2)} (none) of its value at step 1",
                    plots.verdict(ratio_adam >= 10 and aw.last("imbalance") > aw["imbalance"][0]
                             and an.last("imbalance") > an["imbalance"][0])),
        plots.claim("under gradient descent this decay balances the layers but holds the loss "
                    "up, and NC1 ends higher than without decay", "this chapter",
                    f"final MSE {n(gw.last('train_loss') / gn.last('train_loss'), 2)}×, final NC1 "
                    f"{n(gw.last('nc1') / gn.last('nc1'), 2)}× the run without decay",
                    plots.verdict(gw.last("train_loss") > 2 * gn.last("train_loss")
                             and gw.last("nc1") > gn.last("nc1"))),
        plots.claim("with bounded conditioning the (uncentred) class means become orthogonal",
                    "Jacot et al. (2025)",
                    f"s₁/s_C {n(aw.last('conditioning'), 2)} (AdamW), {n(gw.last('conditioning'), 2)} (GD); "
                    f"mean |cos| between raw class means {n(aw.last('orthogonality'), 2)} (AdamW), "
                    f"{n(gw.last('orthogonality'), 2)} (GD), from "
                    f"{n(aw['orthogonality'][0], 2)} at step 1",
                    plots.verdict(max(aw.last("orthogonality"), gw.last("orthogonality")) < 0.05,
                             max(aw.last("orthogonality"), gw.last("orthogonality")) < 0.2),
                    asserted=False),
    ]
    (wname, uw), (nname, un) = list(ufm.items())
    rows.append(plots.claim(
        "collapse emerges in the unconstrained features model; with weight decay its "
        "minima are exactly collapsed (also behind a deep linear head)",
        "Mixon, Parshall & Pi (2022); Dang et al. (2023)",
        f"after {uw.steps[-1]} GD steps with {wname}: NC1 {n(uw.last('nc1'), 2)}, distance to "
        f"ETF {n(uw.last('etf_distance'), 2)}; with {nname}: NC1 {n(un.last('nc1'), 2)}, "
        f"distance {n(un.last('etf_distance'), 2)}",
        plots.verdict(uw.last("nc1") < 1e-6 and uw.last("etf_distance") < 1e-3)))
    counts = np.asarray(imbalance["counts"])
    off = ~np.eye(len(counts), dtype=bool)
    u, net, th = imbalance["ufm"], imbalance["network"], imbalance["theory"]
    ua, na = np.asarray(u["angles"])[off], np.asarray(net["angles"])[off]
    err = np.max(np.abs(np.asarray(u["feature_norm"]) / np.asarray(th["feature_norm"]) - 1))
    logn = np.log(counts)
    corr_w = np.corrcoef(logn, np.log(net["classifier_norm"]))[0, 1]
    corr_h = np.corrcoef(logn, np.log(net["feature_norm"]))[0, 1]
    rows.append(plots.claim(
        "imbalanced classes, MSE, deep linear head: class means orthogonal, lengths set "
        "by class counts",
        "Dang et al. (2023)",
        f"counts {', '.join(str(int(c)) for c in counts)}: free model's angles "
        f"{ua.min():.1f}–{ua.max():.1f}°, norms within {n(100 * err, 2)}% of the exact solution; "
        f"network's angles {na.min():.0f}–{na.max():.0f}°, correlation of log count with log norm "
        f"{corr_w:+.2f} (classifier rows), {corr_h:+.2f} (features; exact: +1, −1)".replace("-", "−"),
        plots.verdict(np.abs(ua - 90).max() < 1 and err < 0.02 and 70 < na.min() and na.max() < 91
                 and corr_w > 0.5 and corr_h < -0.4, np.abs(ua - 90).max() < 1 and err < 0.02)))
    return rows


# ============================================================================ numbers for the prose
# Every number the chapter's sentences quote about its runs comes from one of these functions
# (glued into the prose with dynamics.book.glue), never typed by hand.


def run_numbers(history: History) -> dict:
    """Section 1's run in the numbers its "What to notice" quotes (for :func:`dynamics.book.glue`)."""
    h = history
    etf = h.last("etf_distance")
    return dict(nc1_fall=at_zero_error(h, "nc1") / h.last("nc1"), etf_end=etf,
                equinorm_end=h.last("equinorm"),
                nc3c_fall=at_zero_error(h, "nc3_centred") / h.last("nc3_centred"),
                nc4_end=f"{100 * h.last('nc4'):.2g}%",
                nc2_verdict=plots.verdict(etf < 0.05, etf < at_zero_error(h, "etf_distance") / 1.5,
                                          scale=True))


def conditions_numbers(conditions: dict) -> dict:
    """Section 3's four runs in the numbers its "What to notice" quotes."""
    aw, an = conditions["AdamW, weight decay"], conditions["AdamW, none"]
    gw, gn = conditions["GD, weight decay"], conditions["GD, none"]
    return dict(gd_kept=gn.last("imbalance") / gn["imbalance"][0],
                gd_decay_kept=gw.last("imbalance") / gw["imbalance"][0],
                gd_loss_ratio=gw.last("train_loss") / gn.last("train_loss"),
                gd_nc1_ratio=gw.last("nc1") / gn.last("nc1"),
                adam_nc1_ratio=an.last("nc1") / aw.last("nc1"),
                adam_kept=an.last("imbalance") / an["imbalance"][0],
                orth_start=aw["orthogonality"][0],
                orth_end=max(aw.last("orthogonality"), gw.last("orthogonality")),
                cond_max=max(r.last("conditioning") for r in conditions.values()))


def imbalance_numbers(result: dict) -> dict:
    """Section 4's run in the numbers its "What to notice" quotes."""
    t = imbalance_trends(result)
    return dict(ufm_err=f"{100 * t['ufm_error']:.2g}%",
                ufm_angles=f"{t['ufm_angles'][0]:.1f}° and {t['ufm_angles'][1]:.1f}°",
                net_angles=f"{t['net_angles'][0]:.0f}° and {t['net_angles'][1]:.0f}°",
                corr_w=f"{t['corr_w']:+.2f}".replace("-", "−"),
                corr_h=f"{t['corr_h']:+.2f}".replace("-", "−"),
                against=f"{t['against_w'] + t['against_h']} of {2 * (len(result['counts']) - 1)}")


def route_numbers(payload: dict) -> dict:
    """Section 3's route, measured on the AdamW decay sweep, in the numbers the prose quotes:
    the e-folds of NC1 per unit of decay clock for the decays whose clock ends below 1, their
    final losses relative to the run without decay, and the largest decay's loss."""
    rows = decay_clock(payload)
    small = [r for r in rows if r["clock_end"] < 1.0]
    return dict(route_decays=" and ".join(f"{r['weight_decay']:g}" for r in small),
                route_rates=" and ".join(f"{r['rate']:.1f}" for r in small),
                route_loss=max(r["loss_ratio"] for r in small),
                route_big_loss=rows[-1]["loss_ratio"], route_big=rows[-1]["weight_decay"])


def decay_sweep(payload: dict) -> dict:
    """The precomputed AdamW runs of section 1 (``data/collapse_weight_decay.json``): final
    NC1 and training loss per weight decay, and the ratios the prose quotes."""
    decays = [float(d) for d in payload["weight_decays"]]
    hs = [History.from_dict(h) for h in payload["histories"]]
    nc1 = np.array([h.last("nc1") for h in hs])
    loss = np.array([h.last("train_loss") for h in hs])
    best = int(np.argmin(nc1))
    return dict(decays=decays, nc1=nc1, loss=loss, best=decays[best],
                none_over_best=nc1[0] / nc1[best],
                lowered=[d for d, v in zip(decays[1:], nc1[1:]) if v < nc1[0]],
                rise=nc1[-1] / nc1[best], largest=decays[-1])


def _clock(h: History) -> np.ndarray:
    """λ Σ_{s<t} η_s at each evaluation step of an AdamW run of the sweep (cosine schedule)."""
    from .science import cosine_schedule

    cfg = h.info["config"]
    f = cosine_schedule(int(cfg["steps"]))
    eta = np.concatenate([[0.0], np.cumsum([cfg["lr"] * f(t) for t in range(int(cfg["steps"]))])])
    return float(cfg["weight_decay"]) * eta[np.minimum(np.asarray(h.steps, int), len(eta) - 1)]


def decay_clock(payload: dict) -> list[dict]:
    """Section 3's route, measured on the AdamW decay sweep: for each decay λ > 0, NC1
    divided by the run without decay (same steps), against the decay clock λΣη. Decoupled decay
    multiplies every weight by exp(−λΣη) whatever the gradient; ``rate`` is the fitted
    −d ln(NC1 ratio)/d(λΣη) in the terminal phase (ratio between 1 and 0.01): the e-folds of
    NC1 per unit of clock. Where decay alone sets the pace, the rates of different λ agree."""
    hs = [History.from_dict(h) for h in payload["histories"]]
    none = np.asarray(hs[0]["nc1"], float)
    rows = []
    for d, h in zip(payload["weight_decays"][1:], hs[1:]):
        c, r = _clock(h), np.asarray(h["nc1"], float) / none
        z = terminal_phase_start(h) or 0
        keep = (np.asarray(h.steps) >= z) & (r > 0.01) & (r < 1.0)
        rate = -np.polyfit(c[keep], np.log(r[keep]), 1)[0] if keep.sum() >= 3 else float("nan")
        rows.append(dict(weight_decay=float(d), clock=c, ratio=r, clock_end=float(c[-1]),
                         ratio_end=float(r[-1]), rate=float(rate),
                         loss_ratio=h.last("train_loss") / hs[0].last("train_loss")))
    return rows


def clock_figure(payload: dict) -> "go.Figure":
    """NC1 with decay ÷ NC1 without, against the decay clock λΣη, one line per decay."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, row in enumerate(decay_clock(payload)):
        x, y = _positive(row["clock"], row["ratio"])
        fig.add_scatter(x=x, y=y, mode="lines+markers", marker=dict(size=4),
                        name=f"λ = {row['weight_decay']:g}",
                        line=dict(color=plots.PALETTE[(i + 1) % len(plots.PALETTE)]))
    fig.update_xaxes(type="log", title_text="decay clock λ Σₛ ηₛ")
    fig.update_yaxes(type="log", title_text="NC1 ÷ NC1 without decay")
    fig.update_layout(title="AdamW: NC1 against the decay clock", height=420)
    return fig


def gd_sweep(payload: dict) -> dict:
    """The precomputed gradient-descent runs of section 3: final NC1, loss and balancedness per
    weight decay, and at which decays NC1 ends below or above the run without decay."""
    decays = [float(d) for d in payload["weight_decays"]]
    hs = [History.from_dict(h) for h in payload["histories"]]
    nc1 = np.array([h.last("nc1") for h in hs])
    bal = np.array([h.last("balancedness") for h in hs])
    opens = decays.index(GD_SLIDER_OPENS_AT) if GD_SLIDER_OPENS_AT in decays else 1
    return dict(decays=decays, nc1=nc1, balancedness=bal,
                loss=np.array([h.last("train_loss") for h in hs]), opens=decays[opens],
                opens_nc1_ratio=nc1[opens] / nc1[0], opens_balancedness=bal[opens],
                lower=[d for d, v in zip(decays[1:], nc1[1:]) if v < nc1[0]],
                higher=[d for d, v in zip(decays[1:], nc1[1:]) if v > nc1[0]])


def _corr(a, b) -> float:
    """Pearson correlation, NaN (without a warning) when either side does not vary."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.corrcoef(a, b)[0, 1]) if np.ptp(a) > 0 and np.ptp(b) > 0 else float("nan")


def imbalance_trends(result: dict) -> dict:
    """One imbalance result in the numbers the prose quotes: angle ranges, the free model's
    largest relative error against the exact solution, and the network's trends (correlation of
    log norm with log count) with the number of neighbouring class pairs that go against them."""
    counts = np.asarray(result["counts"], float)
    off = ~np.eye(len(counts), dtype=bool)
    u, th, net = result["ufm"], result["theory"], result["network"]
    order = np.argsort(-counts)

    def against(v, sign):  # neighbours (by count) whose norms step the other way
        d = np.diff(np.asarray(v, float)[order])
        return int(np.sum(sign * d > 0))

    return dict(ufm_angles=(float(np.min(np.asarray(u["angles"])[off])),
                            float(np.max(np.asarray(u["angles"])[off]))),
                ufm_error=float(np.max(np.abs(np.asarray(u["feature_norm"])
                                              / np.asarray(th["feature_norm"]) - 1))),
                net_angles=(float(np.min(np.asarray(net["angles"])[off])),
                            float(np.max(np.asarray(net["angles"])[off]))),
                corr_w=_corr(np.log(counts), np.log(net["classifier_norm"])),
                corr_h=_corr(np.log(counts), np.log(net["feature_norm"])),
                against_w=against(net["classifier_norm"], +1),  # should fall as counts fall
                against_h=against(net["feature_norm"], -1))     # should rise as counts fall


def published_claims() -> list[dict]:
    """The rows of the claims that rest on the precomputed (cpu) data the published page
    shows: the AdamW and gradient-descent decay sweeps, the decay clock of section 3's route
    and the imbalance ratios (``tests/test_published_claims.py`` checks every asserted row)."""
    n = plots.number
    sweep = decay_sweep(results.load("collapse_weight_decay")[0])
    clock = decay_clock(results.load("collapse_weight_decay")[0])
    gd = gd_sweep(results.load("collapse_gd_weight_decay")[0])
    imb = results.load("collapse_imbalance")[0]
    small = [r for r in clock if r["clock_end"] < 1.0]  # decays whose terminal phase is short on the clock
    rates = [r["rate"] for r in small]
    trends = [imbalance_trends(r) for r in imb["runs"]]
    return [
        plots.claim("AdamW: every decay lowers the final NC1, the best by two orders of magnitude "
                    "or more; the largest holds the fit back and NC1 rises again", "this chapter",
                    f"NC1 without decay ÷ at λ = {sweep['best']:g}: {sweep['none_over_best']:.0f}×; "
                    f"at λ = {sweep['largest']:g} NC1 is {sweep['rise']:.1f}× its minimum",
                    plots.verdict(len(sweep["lowered"]) == len(sweep["decays"]) - 1
                                  and sweep["none_over_best"] >= 100 and sweep["rise"] > 2)),
        plots.claim("AdamW: for the small decays NC1 falls at one rate per unit of the decay clock "
                    "λΣη, while the training loss stays as low as without decay", "this chapter",
                    "e-folds of NC1 per unit of clock: " + ", ".join(
                        f"{r['rate']:.1f} (λ = {r['weight_decay']:g})" for r in small)
                    + "; final loss ÷ without decay: " + ", ".join(
                        f"{n(r['loss_ratio'], 2)}" for r in small),
                    plots.verdict(len(small) >= 2 and max(rates) < 1.25 * min(rates)
                                  and all(r["loss_ratio"] < 3 for r in small))),
        plots.claim("gradient descent: a small decay partly balances and lowers NC1; from "
                    f"{min(gd['higher']) if gd['higher'] else '—'} on the layers balance but NC1 "
                    "ends higher than without decay", "this chapter",
                    f"at {gd['opens']:g}: NC1 {n(gd['opens_nc1_ratio'], 2)}× the run without, "
                    f"balancedness {n(gd['opens_balancedness'], 2)}; NC1 higher at "
                    + ", ".join(f"{d:g}" for d in gd["higher"]),
                    plots.verdict(gd["opens_nc1_ratio"] < 1 and 2e-3 in gd["higher"]
                                  and gd["balancedness"][-1] < 1e-3)),
        plots.claim("imbalanced classes: the free model's means orthogonal with the exact norms; the "
                    "network's angles near 90°, classifier rows longer and feature means shorter "
                    "for larger classes (as a trend)", "Dang et al. (2023)",
                    "; ".join(f"ratio {ratio:g}: free {t['ufm_angles'][0]:.1f}–{t['ufm_angles'][1]:.1f}°, "
                              f"network {t['net_angles'][0]:.0f}–{t['net_angles'][1]:.0f}°, "
                              f"correlations {t['corr_w']:+.2f}/{t['corr_h']:+.2f}"
                              for ratio, t in zip(imb["ratios"], trends) if ratio > 1).replace("-", "−"),
                    plots.verdict(all(abs(t["ufm_angles"][0] - 90) < 1 and abs(t["ufm_angles"][1] - 90) < 1
                                      and t["ufm_error"] < 0.02 and t["net_angles"][0] > 70
                                      and t["net_angles"][1] < 91 and t["corr_w"] > 0.5 and t["corr_h"] < -0.4
                                      for ratio, t in zip(imb["ratios"], trends) if ratio > 1))),
    ]
