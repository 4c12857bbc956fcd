"""What the reader sees: figures of the experiments' results, the live panels, and the claims
table. Layout (legend, title, sliders, margins) is the house style's business
(:func:`dynamics.plots.house`); builders here only say what to draw.
"""
from __future__ import annotations

import numpy as np

from .. import plots, results
from ..runtime import get_device, get_seed
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import (CHANCE, best_sigma_w2, depth_time_ratio, half_times, learning_times,
                          run_guessing_bias, run_saxe, run_signal, run_trainability,
                          trainability_agreement, xi_deviation)
from .science import (ACTIVATIONS, INIT_SCHEMES, GuessingConfig, SaxeConfig, SignalConfig,
                      TrainabilityConfig, critical_sigma_w2, std_ratio, trainable_depth)


_GRAY = "#777"


def _positive(values):
    """Zeros (and non-finite values) become None: they cannot be drawn on a log axis."""
    return [v if (v is not None and np.isfinite(v) and v > 0) else None for v in values]


# =============================================================================================
# 1. Signal propagation
# =============================================================================================


def signal_figure(res: dict, activation: str | None = None):
    """Activation std and gradient norm per layer, one curve per init; a slider over the
    activations (or one activation's figure)."""
    figs = []
    acts = [activation] if activation else list(res)
    for act in acts:
        fig = plots.subplots(1, 2, ["activation std", "‖dL/dW‖"], title=f"{act} network at initialization")
        for init, st in res[act].items():
            color = plots.PALETTE[INIT_SCHEMES.index(init) % len(plots.PALETTE)]
            layers = list(range(1, len(st["act_std"]) + 1))
            dead = not any(_positive(st["act_std"]))
            name = init + (" (all 0)" if dead else "")
            fig.add_scatter(x=layers, y=_positive(st["act_std"]), name=name, mode="lines",
                            line=dict(color=color), legendgroup=init, row=1, col=1)
            fig.add_scatter(x=layers, y=_positive(st["grad_norm"]), name=name, mode="lines",
                            line=dict(color=color), legendgroup=init, showlegend=False,
                            row=1, col=2)
        fig.update_yaxes(type="log")
        fig.update_xaxes(title_text="layer")
        fig.update_layout(hovermode="closest")
        figs.append(fig)
    if len(figs) == 1:
        return figs[0]
    return plots.slider(figs, acts, name="activation",
                        active=acts.index("relu") if "relu" in acts else 0)


def signal_rows(res: dict) -> list[dict]:
    """One table row per activation and init: how much of the forward signal reaches the last
    layer, and how much the gradient grows from the last layer back to the first (None: no
    signal at all)."""
    rows = []
    for act in res:
        for init, st in res[act].items():
            ratio, g = std_ratio(st), st["grad_norm"]
            rows.append({"activation": act, "init": init,
                         "activation std, last/first layer": ratio if np.isfinite(ratio) else None,
                         "gradient norm, first/last layer": g[0] / g[-1] if g[-1] > 0 else None})
    return rows


def signal_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, width, activation, init -> the two per-layer curves of that network."""
    base = SignalConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, width, activation, init):
        cfg = base.replace(depth=int(depth), width=int(width), activation=activation, init=init)
        res = run_signal(cfg, inits=[init], activations=[activation])
        ratio = std_ratio(res[activation][init])
        update(status=f"last/first activation std = {plots.number(ratio)}")
        return signal_figure(res, activation)

    big = get_device().type != "cpu"  # keep the largest network within a laptop's memory
    controls = [Slider("depth", 1, 200, min(base.depth, 200), 1, integer=True),
                Slider("width", 2, 1024 if big else 512, min(base.width, 512), 2, integer=True),
                *controls_for(base, ["activation", "init"])]
    return Panel(run, controls, title="Try it: signal propagation at initialization",
                 above="live", profile=profile)


# =============================================================================================
# 2. Order and chaos
# =============================================================================================


def chaos_figure(res: dict):
    """Four panels: theory as lines, measurements on random networks as open markers."""
    fig = plots.subplots(2, 2, ["length map", "correlation map", "critical line χ₁ = 1",
                                "depth scale ξ_c"],
                         title="Order to chaos in random tanh networks", height=760)
    for i, (qm, cm) in enumerate(zip(res["q_map"], res["c_map"])):
        color = plots.PALETTE[i]
        label = f"σ_w²={qm['sigma_w2']:g}"
        fig.add_scatter(x=qm["q_in"], y=qm["q_out"], mode="lines", name=label,
                        line=dict(color=color), legendgroup=label, row=1, col=1)
        for seq in qm["measured"]:
            fig.add_scatter(x=seq[:-1], y=seq[1:], mode="markers", name=label + ", measured",
                            marker=dict(color=color, size=7, symbol="circle-open"),
                            legendgroup=label, showlegend=False, row=1, col=1)
        fig.add_scatter(x=cm["c_in"], y=cm["c_out"], mode="lines", name=label, showlegend=False,
                        line=dict(color=color), legendgroup=label, row=1, col=2)
        for seq in cm["measured"]:
            fig.add_scatter(x=seq[:-1], y=seq[1:], mode="markers", showlegend=False,
                            name=label + ", measured", legendgroup=label,
                            marker=dict(color=color, size=7, symbol="circle-open"), row=1, col=2)
    for (lo, hi), col in (((0, 3), 1), ((-0.2, 1), 2)):
        fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color="#999", dash="dot"),
                        name="identity", showlegend=False, row=1, col=col)
    lt, lm = res["line_theory"], res["line_measured"]
    fig.add_scatter(x=lt["sigma_w2"], y=lt["sigma_b2"], mode="lines", name="theory",
                    line=dict(color="#222"), row=2, col=1)
    fig.add_scatter(x=lm["sigma_w2"], y=lm["sigma_b2"], mode="markers", name="measured",
                    marker=dict(color="#222", size=8, symbol="circle-open"), row=2, col=1)
    top = max(lt["sigma_b2"])
    fig.add_annotation(text="ordered", x=min(lt["sigma_w2"]) + 0.2, y=0.85 * top,
                       showarrow=False, xanchor="left", row=2, col=1)
    fig.add_annotation(text="chaotic", x=max(lt["sigma_w2"]), y=0.1 * top, showarrow=False,
                       xanchor="right", row=2, col=1)
    xt, xm = res["xi_theory"], res["xi_measured"]
    fig.add_scatter(x=xt["sigma_w2"], y=[min(v, 1e3) if v is not None else 1e3 for v in xt["xi"]],
                    mode="lines", name="ξ_c theory", line=dict(color="#222"), showlegend=False,
                    row=2, col=2)
    fig.add_scatter(x=xm["sigma_w2"], y=_positive(xm["xi"]), mode="markers", name="ξ_c measured",
                    marker=dict(color="#222", size=8, symbol="circle-open"), showlegend=False,
                    row=2, col=2)
    fig.update_xaxes(title_text="q in layer l", row=1, col=1)
    fig.update_yaxes(title_text="q in layer l+1", row=1, col=1)
    fig.update_xaxes(title_text="c in layer l", row=1, col=2)
    fig.update_xaxes(title_text="σ_w²", row=2, col=1)
    fig.update_yaxes(title_text="σ_b²", row=2, col=1)
    fig.update_xaxes(title_text="σ_w²", row=2, col=2)
    fig.update_yaxes(title_text="layers", type="log", row=2, col=2)
    fig.update_layout(hovermode="closest")
    return fig


def _index(values, grid_values):
    """Positions of ``values`` on an axis that places ``grid_values`` at 0, 1, 2, ...:
    piecewise linear between grid points, linear beyond the ends (one more step at most)."""
    g = np.asarray(grid_values, dtype=float)
    idx = np.arange(len(g), dtype=float)
    v = np.asarray(values, dtype=float)
    out = np.interp(v, g, idx)
    if len(g) > 1:
        hi = v > g[-1]
        out[hi] = len(g) - 1 + np.minimum((v[hi] - g[-1]) / (g[-1] - g[-2]), 2.0)
    return out


def trainability_figure(res: dict, title: str = ""):
    """The accuracy grid over (sigma_w^2, depth), one equal cell per grid point, with the
    6 xi_c line of mean-field theory (placed by linear interpolation between grid points);
    the critical sigma_w^2 (chi_1 = 1), when on the grid, has a bold tick label."""
    acc = np.asarray([[np.nan if v is None else v for v in row] for row in res["acc"]], float)
    nx, ny = len(res["sigma_w2"]), len(res["depths"])
    fig = plots.heatmap(acc, list(range(nx)), list(range(ny)), zmin=CHANCE, zmax=1.0,
                        title=title or f"Training accuracy after {res['steps']:,} SGD steps",
                        xtitle="σ_w²", ytitle="depth", ztitle="train acc",
                        text_fmt=".2f" if nx <= 12 else None)
    cells = np.stack(np.broadcast_arrays(np.asarray(res["sigma_w2"], float)[None, :],
                                         np.asarray(res["depths"], float)[:, None]), -1)
    fig.data[0].update(customdata=cells, hovertemplate="σ_w² = %{customdata[0]}<br>depth "
                       "%{customdata[1]}<br>train acc %{z:.3f}<extra></extra>")
    line = [v if v is not None else np.inf for v in res["six_xi"]]
    fig.add_scatter(x=_index(res["line_sigma_w2"], res["sigma_w2"]),
                    y=_index(np.minimum(line, 1e6), res["depths"]), mode="lines",
                    name="6 ξ_c (mean-field theory)", line=dict(color="#ff4136", width=3, dash="dash"),
                    hoverinfo="skip")
    crit = critical_sigma_w2(res["sigma_b2"])
    ticks = [f"<b>{s:g}</b>" if abs(s - crit) < 0.02 else f"{s:g}" for s in res["sigma_w2"]]
    if res.get("diverged"):
        d = np.asarray(res["diverged"], dtype=float)
        fig.add_scatter(x=_index(d[:, 1], res["sigma_w2"]), y=_index(d[:, 0], res["depths"]),
                        mode="markers", name="diverged", marker=dict(symbol="x", size=9, color="#fff"))
    fig.update_xaxes(tickvals=list(range(nx)), ticktext=ticks,
                     range=[-0.5, nx - 0.5], showgrid=False)
    fig.update_yaxes(tickvals=list(range(ny)), ticktext=[str(d) for d in res["depths"]],
                     range=[-0.5, ny - 0.5], showgrid=False)
    fig.update_layout(showlegend=True)
    return fig


def _band(values, ok) -> str:
    """The grid values where ``ok`` holds: "all", a list, or "none"."""
    vals = [v for v, k in zip(values, ok) if k]
    if len(vals) == len(values):
        return "all"
    return ", ".join(f"{v:g}" for v in vals) if vals else "none"


def trainability_rows(heat: dict, level: float = 0.5) -> list[dict]:
    """Per depth of the grid: the best sigma_w^2 and its accuracy, the sigma_w^2 where the
    accuracy reached ``level``, and where mean-field theory says depth <= 6 xi_c."""
    fine = np.linspace(min(heat["sigma_w2"]), max(heat["sigma_w2"]), 400)
    limit = np.array([trainable_depth(s, heat["sigma_b2"]) for s in fine])
    rows = []
    for depth, row, best in zip(heat["depths"], heat["acc"], best_sigma_w2(heat)):
        row = [np.nan if v is None else v for v in row]
        theory = fine[limit >= depth]
        if not len(theory):
            band = "none"
        elif theory.max() >= fine[-1]:
            band = f"{theory.min():.2f} and up"
        else:
            band = f"{theory.min():.2f}–{theory.max():.2f}"
        rows.append({"depth": depth, "best σ_w²": best,
                     "best train acc": max(row) if np.isfinite(row).any() else None,
                     f"σ_w² with train acc ≥ {level:g}": _band(heat["sigma_w2"],
                                                               [v >= level for v in row]),
                     "σ_w² with depth ≤ 6 ξ_c (theory)": band})
    return rows


def trainability_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small trainability grid, trained live (a few depths x a few sigma_w^2)."""
    seed = get_seed(seed)
    base = TrainabilityConfig.for_profile("smoke", seeds=[seed])

    def run(update, max_depth, n_sigma, width, steps, sigma_b2):
        depths = sorted({int(v) for v in np.linspace(4, max_depth, 4)})
        sig = np.round(np.linspace(0.5, 4.5, int(n_sigma)), 2).tolist()
        cfg = base.replace(depths=depths, sigma_w2=sig, width=int(width), steps=int(steps),
                           sigma_b2=float(sigma_b2))
        res = run_trainability(cfg, progress=False, callbacks=[update.ticker(1.0)])
        notes = [f"{len(res['diverged'])} runs diverged (counted as chance)"] if res["diverged"] else []
        if res["stopped"]:
            notes.append("stopped: deeper rows not trained")
        update(status="; ".join(notes) or "done")
        return trainability_figure(res)

    controls = [Slider("max_depth", 8, 96, 32, 8, integer=True, description="max depth"),
                Slider("n_sigma", 3, 9, 5, 1, integer=True, description="σ_w² values"),
                Slider("width", 8, 128, base.width, 8, integer=True, description="width"),
                Slider("steps", 50, 1000, base.steps, 50, integer=True, description="SGD steps"),
                Slider("sigma_b2", 0.0, 0.5, base.sigma_b2, 0.01, description="σ_b²")]
    return Panel(run, controls, title="Try it: a small trainability grid, live",
                 above=results.provenance_of("initialization_trainability"), profile=profile)


# =============================================================================================
# 3. Orthogonal versus Gaussian weights
# =============================================================================================


def fluctuations_figure(res: dict):
    """n Var[G_l] / E[G_l]^2 per layer for both ensembles, and the leading-order Gaussian line."""
    fig = plots.figure("Preactivation fluctuations across networks", "layer l",
                       "n · Var[G_l] / E[G_l]²")
    layers = res["layers"]
    fig.add_scatter(x=layers, y=res["gaussian"], mode="lines+markers", name="Gaussian weights",
                    marker=dict(size=4))
    fig.add_scatter(x=layers, y=res["orthogonal"], mode="lines+markers", name="orthogonal weights",
                    marker=dict(size=4))
    fig.add_scatter(x=layers, y=[2 + 2 * l / 3 for l in layers], mode="lines",
                    name="2 + 2l/3 (theory, Gaussian)", line=dict(color=_GRAY, dash="dash"))
    fig.update_layout(hovermode="x unified")
    return fig


def saxe_figure(res: dict):
    """Left: the loss, a staircase of plateaus and drops. Right: each pattern's progress
    y_c (lines), with the exact solution (dashed) for one hidden layer."""
    title = f"Deep linear network, {res['depth']} weight matrices, {res['init']} init"
    fig = plots.subplots(1, 2, ["training loss", "progress y_c of each pattern"], title=title)
    fig.add_scatter(x=res["steps"], y=res["loss"], mode="lines", name="loss",
                    line=dict(color="#222"), showlegend=False, row=1, col=1)
    for c, ys in enumerate(res["progress"]):
        color = plots.PALETTE[c % len(plots.PALETTE)]
        fig.add_scatter(x=res["steps"], y=ys, mode="lines", line=dict(color=color),
                        name=f"s={res['strengths'][c]:.2g}", legendgroup=str(c), row=1, col=2)
        if "theory" in res:
            fig.add_scatter(x=res["steps"], y=res["theory"][c], mode="lines",
                            line=dict(color=color, dash="dash", width=1), showlegend=False,
                            name=f"exact, s = {res['strengths'][c]:.2f}", legendgroup=str(c),
                            row=1, col=2)
    if "theory" in res:
        fig.add_scatter(x=[None], y=[None], mode="lines", name="exact",
                        line=dict(color=_GRAY, dash="dash", width=1), row=1, col=2)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(title_text="½‖f(x) − y‖²", row=1, col=1)
    fig.update_layout(hovermode="closest")
    return fig


def saxe_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, init, learning rate of the deep linear network."""
    base = SaxeConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, init, lr, init_std, steps):
        cfg = base.replace(depth=int(depth), init=init, lr=float(lr), init_std=float(init_std),
                           steps=int(steps))
        res = run_saxe(cfg, callbacks=[update.every(None, total_steps=cfg.steps)])
        if res["diverged"]:
            update(status=f"{res['status']}: try a smaller learning rate")
        elif len(res["steps"]) and res["steps"][-1] < cfg.steps:
            update(status=f"stopped at step {res['steps'][-1]}")
        return saxe_figure(res)

    controls = controls_for(base, ["depth", "init", "lr", "init_std"])
    controls.append(Slider("steps", 50, 5000, min(base.steps, 5000), 50, integer=True))
    return Panel(run, controls, title="Try it: a deep linear network", above="live",
                 profile=profile)


def depth_time_figure(res: dict):
    """Steps to learn vs depth for both inits (log-log), triangles where never learned."""
    fig = plots.figure("Time to learn vs depth, at the best learning rate",
                       "depth (weight matrices)", "steps to criterion", logx=True, logy=True)
    for i, init in enumerate(("orthogonal", "gaussian")):
        if init not in res:
            continue
        times = learning_times(res[init])
        label = {"orthogonal": "random orthogonal", "gaussian": "scaled Gaussian"}[init]
        fig.add_scatter(x=res["depths"], y=[v if np.isfinite(v) else None for v in times],
                        mode="lines+markers", name=label, line=dict(color=plots.PALETTE[i]),
                        customdata=res[f"{init}_lr"],
                        hovertemplate="depth %{x}: %{y} steps at lr %{customdata:.3g}<extra></extra>")
        never = [d for d, v in zip(res["depths"], times) if not np.isfinite(v)]
        if never:
            fig.add_scatter(x=never, y=[res["steps"]] * len(never), mode="markers",
                            marker=dict(symbol="triangle-up", size=12, color=plots.PALETTE[i]),
                            name=f"{label}: not learned")
    fig.update_xaxes(tickvals=res["depths"], ticktext=[str(d) for d in res["depths"]])
    fig.update_layout(hovermode="closest")
    return fig


# =============================================================================================
# 4. Initial guessing bias
# =============================================================================================


def guessing_figure(res: dict):
    """The favourite-class fraction of every untrained network (dots) and the mean (line)."""
    fig = plots.figure("Initial guessing bias of untrained networks", "depth",
                       "fraction in the favourite class", logx=True)
    for i, act in enumerate(a for a in ACTIVATIONS if a in res):
        vals = [np.asarray(v, dtype=float) for v in res[act]]
        depths = res["depths"][:len(vals)]
        fig.add_scatter(x=depths, y=[v.mean() for v in vals], mode="lines+markers",
                        name=f"{act}, mean", line=dict(color=plots.PALETTE[i]))
        fig.add_scatter(x=np.concatenate([[d] * len(v) for d, v in zip(depths, vals)]),
                        y=np.concatenate(vals), mode="markers", name=f"{act}, each network",
                        marker=dict(color=plots.PALETTE[i], size=4, opacity=0.35))
    fig.add_hline(y=1 / res["n_classes"], line=dict(color=_GRAY, dash="dot"),
                  annotation_text="no bias: 1/C", annotation_position="top right")
    fig.update_yaxes(range=[0, 1.05])
    fig.update_xaxes(tickvals=res["depths"], ticktext=[str(d) for d in res["depths"]])
    fig.update_layout(hovermode="closest")
    return fig


def guessing_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the favourite-class fraction of each of a set of untrained networks."""
    base = GuessingConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, width, activation, scale):
        cfg = base.replace(depths=[int(depth)], width=int(width), scale=scale)
        res = run_guessing_bias(cfg, activations=[activation], callbacks=[update.ticker(1.0)])
        vals = np.asarray(res[activation][0]) if res[activation] else np.zeros(0)
        if not len(vals):
            return None
        update(status=f"mean favourite-class fraction {vals.mean():.2f} (no bias: "
                      f"{1 / res['n_classes']:.2f})")
        fig = plots.bars([f"{k}" for k in range(len(vals))], vals.tolist(),
                         title=f"{activation}, depth {int(depth)}: each untrained network",
                         ytitle="fraction in the favourite class", text_fmt="{:.2f}")
        fig.update_xaxes(title_text="network")
        fig.update_yaxes(range=[0, 1.1])
        return fig

    controls = [Slider("depth", 1, 64, 16, 1, integer=True),
                Slider("width", 8, 1024, base.width, 8, integer=True),
                Choice("activation", ACTIVATIONS, "relu"),
                Choice("scale", ("critical", "xavier"), base.scale)]
    return Panel(run, controls, title="Try it: initial guessing bias", above="live",
                 profile=profile)


# =============================================================================================
# Claims: what the papers say beside what this page measured
# =============================================================================================

_num = plots.number


def claims(signal=None, chaos=None, heat=None, fluct=None, saxe=None, depth_time=None,
           igb=None) -> list[dict]:
    """One :func:`dynamics.plots.claim` row per claim, from the results given (this run's, or
    the precomputed ones shown on the page), with the verdict the numbers support."""
    rows = []
    if signal is not None and "relu" in signal:
        relu = signal["relu"]
        depth = len(next(iter(relu.values()))["act_std"])
        if "he" in relu and "xavier" in relu:
            he, xa = std_ratio(relu["he"]), std_ratio(relu["xavier"])
            ok = 0.2 < he < 5 and xa < 0.01
            rows.append(plots.claim(
                "ReLU: Var W = 2/fan_in keeps the activation scale at any depth; Xavier "
                "(≈ 1/fan_in) halves the variance every layer",
                "He et al.; Kumar, On weight initialization in deep neural networks",
                f"depth {depth}: last/first activation std {_num(he)} (He), {_num(xa)} (Xavier)",
                "yes" if ok else "partly"))
        if "lsuv" in relu:
            ratios = {a: std_ratio(signal[a]["lsuv"]) for a in signal if "lsuv" in signal[a]}
            ok = all(0.5 < r < 2 for r in ratios.values())
            rows.append(plots.claim(
                "LSUV: an orthonormal start and per-layer rescaling give unit variance in every layer",
                "Mishkin & Matas, All you need is a good init",
                f"depth {depth}: last/first activation std "
                + ", ".join(f"{_num(r)} ({a})" for a, r in ratios.items()),
                "yes" if ok else "partly"))
    if chaos is not None:
        t, m = chaos["critical_theory"], chaos["critical_measured"]
        rows.append(plots.claim(
            f"tanh, σ_b² = {chaos['sigma_b2']:g}: the edge of chaos χ₁ = 1 lies at "
            f"σ_w² = {_num(t)} (mean-field theory)",
            "Poole et al.; Schoenholz et al., Deep Information Propagation",
            f"χ₁ = 1 on random networks (width {chaos['width']}) at σ_w² = {_num(m)} "
            f"({100 * (m / t - 1):+.1f}%)",
            "yes" if abs(m / t - 1) < 0.1 else "partly"))
        dev, n, largest = xi_deviation(chaos)
        rows.append(plots.claim(
            "correlations relax over ξ_c = −1/ln χ_c layers; ξ_c diverges at χ₁ = 1",
            "Schoenholz et al., Deep Information Propagation",
            f"ξ_c measured at {n} values of σ_w²: median deviation from theory "
            f"{_num(100 * dev, 2)}%, largest {_num(largest, 2)} layers",
            "yes" if n and dev < 0.25 else "partly"))
    if heat is not None:
        agree, cells = trainability_agreement(heat)
        best = [(d, b) for d, b in zip(heat["depths"], best_sigma_w2(heat)) if b is not None]
        deep = [(d, b) for d, b in best if d >= 30]
        crit = critical_sigma_w2(heat["sigma_b2"])
        near = [abs(b - crit) <= 0.8 and trainable_depth(b, heat["sigma_b2"]) >= d
                for d, b in deep]
        measured = (f"trained (≥ 50%) and depth ≤ 6 ξ_c agree on {_num(100 * agree, 2)}% of "
                    f"{cells} cells; best σ_w² at depths "
                    + ", ".join(f"{d}: {b:g}" for d, b in deep)
                    + f" ({heat['steps']:,} SGD steps, width {heat['width']})")
        verdict = ("yes" if agree >= 0.9 and near and all(near)
                   else "partly" if agree >= 0.7 and all(near) else "not at this scale")
        rows.append(plots.claim(
            "networks train when depth ≲ 6 ξ_c: deep networks only near the edge of chaos",
            "Schoenholz et al.; Hayou et al., On the Impact of the Activation Function on Deep "
            "Neural Networks Training", measured, verdict))
    if fluct is not None:
        g, o = fluct["gaussian_slope"], fluct["orthogonal_slope"]
        rows.append(plots.claim(
            "Gaussian weights: preactivation fluctuations grow linearly with depth (slope 2/3 "
            "per layer in n·Var G/E[G]²); orthogonal weights: independent of depth",
            "Day, Kahn & Roberts, Feature Learning and Generalization in Deep Networks with "
            "Orthogonal Weights",
            f"slope per layer {_num(g)} (Gaussian), {_num(o, 2)} (orthogonal); width {fluct['width']}, "
            f"{fluct['n_nets']} networks",
            "yes" if 0.4 < g < 1.0 and abs(o) < 0.02 else "partly"))
    if saxe is not None and "theory" in saxe:
        meas, theo = half_times(saxe)
        finite = np.isfinite(meas) & np.isfinite(theo)
        dev = float(np.max(np.abs(meas[finite] / theo[finite] - 1))) if finite.any() else float("nan")
        rows.append(plots.claim(
            "from small weights each mode is learned in a sharp sigmoidal transition at a time "
            "∝ 1/s: plateaus, then drops",
            "Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
            "neural networks",
            f"half-learning steps {', '.join(_num(v) for v in meas)}; largest deviation from the "
            f"exact solution {_num(100 * dev, 2)}%",
            "yes" if finite.all() and dev < 0.2 else "partly"))
    if depth_time is not None:
        d = depth_time["depths"]
        deep = max(x for x in d if x <= 16) if any(x <= 16 for x in d) else max(d)
        ro = depth_time_ratio(depth_time, "orthogonal", min(d), deep)
        rg = depth_time_ratio(depth_time, "gaussian", min(d), deep)
        rows.append(plots.claim(
            "random orthogonal init: learning time independent of depth; scaled Gaussian: "
            "grows with depth",
            "Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
            "neural networks",
            f"time at depth {deep} / depth {min(d)}: {_num(ro)} (orthogonal), {_num(rg)} (Gaussian)",
            "yes" if ro <= 1.5 and rg > 2 * ro else "partly"))
    if igb is not None:
        deep = igb["depths"][len(igb["relu"]) - 1] if "relu" in igb else igb["depths"][-1]
        means = {a: float(np.mean(igb[a][-1])) for a in ACTIVATIONS if a in igb and igb[a]}
        ok = "relu" in means and means["relu"] > 0.6 and means["relu"] > means.get("tanh", 0) + 0.2
        rows.append(plots.claim(
            "untrained deep ReLU networks put most inputs in one class; the bias grows with "
            "depth and depends on the activation",
            "Francazi et al., Initial Guessing Bias: How Untrained Networks Favor Some Classes",
            f"depth {deep}: favourite-class fraction "
            + ", ".join(f"{_num(v, 2)} ({a})" for a, v in means.items())
            + f" (no bias: {1 / igb['n_classes']:.2f})",
            "yes" if ok else "partly"))
    return rows
