"""What the reader runs: the live panels, the page's numbers, the worked answers and the claims
table. The figures of the experiments' results are in :mod:`.figures` (re-exported here).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from .. import plots, results
from ..runtime import get_device, get_seed
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import (best_sigma_w2, coordinate_check, half_times, learning_times,
                          run_rank_growth,
                          run_guessing_bias, run_saxe, run_signal, run_trainability,
                          trainability_agreement, trainability_disagreements, xi_deviation)
from .science import (ACTIVATIONS, FluctuationConfig, GuessingConfig, SaxeConfig,
                      SignalConfig, TrainabilityConfig, chi_1, critical_sigma_w2,
                      preactivation_fluctuations, q_star, std_ratio, trainable_band,
                      trainable_depth)

from .figures import *  # noqa: F401,F403  (re-exported: views.X still works)
from .figures import (saxe_figure, signal_figure, trainability_figure)

__all__ = ["signal_panel", "trainability_panel", "saxe_panel", "guessing_panel", "DEEP",
           "trainability_numbers", "depth_time_numbers", "trainability_claims",
           "depth_time_claims", "published_claims", "chaos_numbers", "fluctuation_numbers",
           "answer_lsuv_gain", "answer_band", "answer_fluctuations", "answer_rank_growth",
           "answer_coordinate_check", "claims"]


# =============================================================================================
# Live panels
# =============================================================================================

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


def trainability_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small trainability grid, trained live (a few depths x a few sigma_w^2)."""
    seed = get_seed(seed)
    base = TrainabilityConfig.for_profile("smoke", seeds=[seed])

    def run(update, max_depth, n_sigma, width, steps, sigma_b2):
        depths = sorted({int(v) for v in np.linspace(4, max_depth, 4)})
        sig = np.round(np.linspace(0.5, 4.5, int(n_sigma)), 2).tolist()
        cfg = base.replace(depths=depths, sigma_w2=sig, width=int(width), steps=int(steps),
                           sigma_b2=float(sigma_b2))
        res = run_trainability(cfg, progress=False)
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


def saxe_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, init, learning rate of the deep linear network."""
    base = SaxeConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, init, lr, init_std, steps):
        cfg = base.replace(depth=int(depth), init=init, lr=float(lr), init_std=float(init_std),
                           steps=int(steps))
        res = run_saxe(cfg)  # the panel's bar and Stop follow the training
        if res["diverged"]:
            update(status=f"{res['status']}: try a smaller learning rate")
        elif len(res["steps"]) and res["steps"][-1] < cfg.steps:
            update(status=f"stopped at step {res['steps'][-1]}")
        return saxe_figure(res)

    controls = controls_for(base, ["depth", "init", "lr", "init_std"])
    controls.append(Slider("steps", 50, 5000, min(base.steps, 5000), 50, integer=True))
    return Panel(run, controls, title="Try it: a deep linear network", above="live",
                 profile=profile)


def guessing_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the favourite-class fraction of each of a set of untrained networks."""
    base = GuessingConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, width, activation, scale):
        cfg = base.replace(depths=[int(depth)], width=int(width), scale=scale)
        res = run_guessing_bias(cfg, activations=[activation])
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


# =============================================================================================
# Numbers in the prose, and the claims
# =============================================================================================

DEEP = 30  # from this depth on, the trained region of the grid is read against the edge of chaos


def _pct(x) -> str:
    return f"{100 * x:.0f}%"


def _list(values) -> str:
    """1, 2 and 3."""
    values = [f"{v:g}" if isinstance(v, float) else str(v) for v in values]
    return "none" if not values else values[0] if len(values) == 1 else \
        ", ".join(values[:-1]) + " and " + values[-1]


def _cells(cells) -> str:
    """(sigma_w^2, depth) cells grouped by sigma_w^2: "σ_w² = 1.2 at depths 40, 50 and 60"."""
    by: dict = {}
    for s, d in sorted(cells):
        by.setdefault(s, []).append(d)
    return "; ".join(f"σ_w² = {s:g} at depth{'s' if len(d) > 1 else ''} {_list(d)}"
                     for s, d in by.items()) or "nowhere"


def trainability_numbers(heat: dict, level: float = 0.5) -> dict:
    """The numbers the trainability grid's prose quotes (glue texts): its size, how the
    shallowest rows train, the best weight scales from depth :data:`DEEP` on, what trains at
    the deepest depth, and the cells where the 6 xi_c line and training disagree."""
    acc = np.asarray([[np.nan if v is None else v for v in row] for row in heat["acc"]], float)
    depths, sig = heat["depths"], heat["sigma_w2"]
    deep = [b for d, b in zip(depths, best_sigma_w2(heat)) if d >= DEEP and b is not None]
    agree, cells = trainability_agreement(heat, level)
    dis = trainability_disagreements(heat, level)
    return dict(init_cells=cells, init_deepest=depths[-1], init_width=heat["width"],
                init_steps=heat["steps"], init_d0=depths[0], init_d0_min=_pct(np.nanmin(acc[0])),
                init_d1=depths[1], init_d1_min=_pct(np.nanmin(acc[1])),
                init_best_range=(f"{min(deep):g} and {max(deep):g}" if deep else "nowhere"),
                init_deepest_trained=_list([float(s) for s, a in zip(sig, acc[-1]) if a >= level]),
                init_level=_pct(level), init_agree=_pct(agree),
                init_beyond=_cells(dis["beyond"]), init_before=_cells(dis["before"]),
                init_grid_verdict=plots.MARKS[trainability_claims(heat)[2]["reproduced"]])


def depth_time_numbers(res: dict) -> dict:
    """The numbers the learning-time figure's prose quotes (glue texts)."""
    orth = learning_times(res["orthogonal"])
    lr = res["orthogonal_lr"]
    return dict(init_dt_orth=f"{plots.number(orth.max() / orth.min(), 2)}",
                init_dt_d0=res["depths"][0], init_dt_d1=res["depths"][-1],
                init_dt_lr0=plots.number(lr[0], 2), init_dt_lr_deep=_list(
                    [float(plots.number(v, 2)) for v in lr[-2:]]),
                init_dt_deep=_list(res["depths"][-2:]))


def trainability_claims(heat: dict, level: float = 0.5) -> list[dict]:
    """The claims rows of the trainability grid (all from the precomputed data)."""
    acc = np.asarray([[np.nan if v is None else v for v in row] for row in heat["acc"]], float)
    depths, b2 = heat["depths"], heat["sigma_b2"]
    crit = critical_sigma_w2(b2)
    counts = [int((row >= level).sum()) for row in acc]
    paper = "Schoenholz et al., Deep Information Propagation"
    rows = [plots.claim(
        "shallow networks train at every weight scale; with depth the trained region narrows",
        paper, f"depth {depths[0]}: train acc ≥ {_num(np.nanmin(acc[0]), 2)} everywhere; cells "
        f"with train acc ≥ {level:g} per depth: {', '.join(map(str, counts))}",
        plots.verdict(np.nanmin(acc[0]) >= 0.9 and counts[-1] < counts[0]
                      and all(a >= b for a, b in zip(counts, counts[1:]))))]
    deep = [(d, b) for d, b in zip(depths, best_sigma_w2(heat)) if d >= DEEP]
    near = [b is not None and abs(b - crit) <= 0.8 and trainable_depth(b, b2) >= d
            for d, b in deep]
    rows.append(plots.claim(
        f"deep networks (depth ≥ {DEEP}) train best near the edge of chaos (σ_w² = {crit:.2f}), "
        "inside the band depth ≤ 6 ξ_c",
        "Schoenholz et al.; Hayou et al., On the Impact of the Activation Function on Deep "
        "Neural Networks Training",
        "best σ_w² at depths " + ", ".join(f"{d}: {b:g}" if b is not None else f"{d}: none"
                                           for d, b in deep),
        plots.verdict(bool(deep) and all(near))))
    agree, cells = trainability_agreement(heat, level)
    rows.append(plots.claim(
        "networks train when depth ≲ 6 ξ_c, and not beyond", paper,
        f"trained (≥ {level:g}) and depth ≤ 6 ξ_c agree on {_num(100 * agree, 2)}% of {cells} cells "
        f"({heat['steps']:,} SGD steps, width {heat['width']})",
        plots.verdict(agree >= 0.9, partly=agree >= 0.7), asserted=False))
    dis = trainability_disagreements(heat, level)
    rows.append(plots.claim(
        "where training and the 6 ξ_c line disagree, ordered-phase networks train beyond the "
        "line and chaotic-phase ones fail before it", paper,
        f"trained beyond the line: {_cells(dis['beyond'])}; failed before it: "
        f"{_cells(dis['before'])}",
        plots.verdict(all(s < crit for s, _ in dis["beyond"])
                      and all(s > crit for s, _ in dis["before"]))))
    return rows


def depth_time_claims(res: dict) -> list[dict]:
    """The claims row of the deep linear networks' learning time against depth."""
    orth, gauss = learning_times(res["orthogonal"]), learning_times(res["gaussian"])
    climb = gauss[np.isfinite(gauss)]
    lr = res["orthogonal_lr"]
    flat = np.isfinite(orth).all() and orth.max() / orth.min() < 2.5
    steep = len(climb) > 1 and climb[-1] / climb[0] > 10
    return [plots.claim(
        "random orthogonal init: learning time independent of depth (at the best learning "
        "rate, which falls with depth); scaled Gaussian: grows with depth",
        "Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
        "neural networks",
        f"depths {res['depths'][0]}–{res['depths'][-1]}: orthogonal times within "
        f"{_num(orth.max() / orth.min(), 2)}×, best lr {_num(lr[0], 2)} → {_num(lr[-1], 2)}; "
        f"Gaussian times climb {_num(climb[-1] / climb[0], 2)}×"
        + (f", depth {res['depths'][-1]} not learned" if not np.isfinite(gauss[-1]) else ""),
        plots.verdict(flat and steep and lr[-1] < lr[0] / 4))]


def published_claims() -> list[dict]:
    """The claims rows of the published page that rest on ``data/`` alone: the trainability
    grid and the learning time of deep linear networks against depth."""
    heat, _ = results.load("initialization_trainability")
    depth_time, _ = results.load("initialization_depth_time")
    return trainability_claims(heat) + depth_time_claims(depth_time)


def _chaos_shape_claim(chaos: dict) -> dict:
    """The order-to-chaos figure's shape: c* = 1 below the edge and < 1 above it, the measured
    depth scale peaking near the critical sigma_w^2, short in the ordered phase (< 2 layers at
    the smallest sigma_w^2) and longer, but finite, deep in the chaotic phase (sigma_w^2 > 3)."""
    stars = {cm["sigma_w2"]: cm["c_star"] for cm in chaos["c_map"]}
    xm = chaos["xi_measured"]
    s = np.asarray(xm["sigma_w2"], float)
    xi = np.array([np.nan if v is None else v for v in xm["xi"]], float)
    peak = float(s[int(np.nanargmax(xi))])
    hot = xi[s > 3]
    ok = (stars.get(min(stars)) == 1.0 and stars.get(max(stars), 1) < 0.9
          and abs(peak - chaos["critical_theory"]) < 0.7 and xi[0] < 2
          and len(hot) > 0 and np.all((hot > xi[0]) & (hot < np.nanmax(xi))))
    return plots.claim(
        "c* = 1 below the edge of chaos, c* < 1 above it; ξ_c peaks at the edge, is a layer or "
        "two deep in the ordered phase and longer in the chaotic phase",
        "Poole et al.; Schoenholz et al., Deep Information Propagation",
        f"c* = {', '.join(f'{_num(v, 3)} (σ_w² = {k:g})' for k, v in stars.items())}; measured ξ_c "
        f"peaks at σ_w² = {peak:.2f} ({_num(np.nanmax(xi), 2)} layers), {_num(xi[0], 2)} at "
        f"σ_w² = {s[0]:.2f}, {_num(np.nanmin(hot) if len(hot) else None, 2)}–"
        f"{_num(np.nanmax(hot) if len(hot) else None, 2)} beyond σ_w² = 3",
        plots.verdict(bool(ok)))


def chaos_numbers(chaos: dict) -> dict:
    """The depth scales the chaos figure's prose quotes (glue texts)."""
    xm = chaos["xi_measured"]
    s = np.asarray(xm["sigma_w2"], float)
    xi = np.array([np.nan if v is None else v for v in xm["xi"]], float)
    hot = xi[s > 3]
    return dict(init_xi_ordered=_num(xi[0], 2),
                init_xi_chaotic=f"{_num(np.nanmin(hot), 2)} to {_num(np.nanmax(hot), 2)}")


def fluctuation_numbers(fluct: dict) -> dict:
    """The orthogonal ensemble's largest value, which the prose quotes (glue text)."""
    return dict(init_orth_max=_num(max(fluct["orthogonal"]), 2))


# =============================================================================================
# Worked answers: each one that quotes a measurement computes it in a collapsed cell of the page
# =============================================================================================


def answer_lsuv_gain(signal: dict) -> str:
    """Exercise 2: the sigma_w^2 that gives q* = 1 at sigma_b = 0, chi_1 there, and the
    gradient's growth per layer that section 1's tanh LSUV network measured."""
    s = brentq(lambda v: q_star(v, 0.0) - 1, 1.01, 10)
    chi = chi_1(s, 0.0)
    g = signal["tanh"]["lsuv"]["grad_norm"]
    layers = len(g) - 1
    return (f"q* = 1 at σ_w² = {s:.3f}, where χ₁ = {chi:.3f} and √χ₁ = {math.sqrt(chi):.4f}; "
            f"this page's tanh LSUV network: gradient norm ×{_num(g[0] / g[-1])} over {layers} "
            f"layers, ×{(g[0] / g[-1]) ** (1 / layers):.4f} per layer")


def answer_band(depth: int = 32, sigma_b2=(0.0, 0.05, 0.3)) -> str:
    """Exercise 3: the critical sigma_w^2 and the band depth <= 6 xi_c at each sigma_b^2."""
    parts = []
    for b in sigma_b2:
        lo, hi = trainable_band(depth, b)
        parts.append(f"σ_b² = {b:g}: critical σ_w² = {critical_sigma_w2(b):.2f}, band "
                     f"[{lo:.2f}, {hi:.2f}]")
    return f"depth {depth}: " + "; ".join(parts)


def answer_fluctuations(profile: str | None = None, seed: int | None = None,
                        widths=(32, 64, 128), depth: int = 64) -> str:
    """Exercise 4: Var[G_l] / E[G_l]^2 against l / n at several widths (the profile's
    ensemble size): the Gaussian slope up to l/n = 0.25, its value at l/n = 0.5, and the
    orthogonal ensemble's largest value, all in the same units."""
    cfg = FluctuationConfig.for_profile(profile, seed=get_seed(seed))
    lines = []
    for n in widths:
        x = np.arange(1, depth + 1) / n
        gauss = preactivation_fluctuations("gaussian", depth, n, cfg.n_nets, seed=cfg.seed) / n
        orth = preactivation_fluctuations("orthogonal", depth, n, cfg.n_nets, seed=cfg.seed) / n
        early = x <= 0.25
        slope = np.polyfit(x[early], gauss[early], 1)[0] if early.sum() > 1 else float("nan")
        lines.append(f"width {n}: slope {slope:.2f} up to l/n = 0.25, "
                     f"{np.interp(0.5, x, gauss):.2f} at l/n = 0.5, orthogonal at most "
                     f"{orth.max():.3f}")
    return f"{cfg.n_nets} networks per ensemble, depth {depth}; " + "; ".join(lines)


def answer_rank_growth(profile: str | None = None, seed: int | None = None) -> str:
    """Exercise 6: the rank of W1 - W1(0) after each drop of section 3's deep linear network."""
    r = run_rank_growth(SaxeConfig.for_profile(profile, seed=get_seed(seed)))
    drops = "; ".join(f"pattern {c + 1} half learned at step {t}: {k} large" if t is not None
                      else f"pattern {c + 1} not learned" for c, (t, k) in
                      enumerate(zip(r["half_steps"], r["large_after"])))
    return (f"singular values of W1 − W1(0) above {r['large']:g} — {drops}; final values "
            f"{', '.join(f'{v:.2f}' for v in r['final'])} against (√C s_c)^(−1/2) = "
            f"{', '.join(f'{v:.2f}' for v in r['balanced'])}")


def answer_coordinate_check(seed: int | None = None) -> str:
    """Exercise 7: the RMS change of each hidden layer's activations after one Adam step."""
    r = coordinate_check(seed=get_seed(seed))
    rows = [f"width {n}: " + ", ".join(f"{v:.3f}" for v in ch) + f" (activations "
            f"{min(sz):.2f}–{max(sz):.2f})" for n, ch, sz in zip(r["widths"], r["change"], r["size"])]
    return "RMS change of hidden layers 1, 2, … after one Adam step — " + "; ".join(rows)


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
        if "small" in relu and "zero" in relu:
            small, zero = relu["small"]["act_std"][-1], relu["zero"]
            rows.append(plots.claim(
                "ReLU: a small Gaussian start shrinks the signal geometrically; all-zero weights "
                "carry no signal and no gradient", "Kumar, On weight initialization in deep neural "
                "networks", f"depth {depth}: last-layer activation std {_num(small)} (small); "
                f"largest activation std and gradient {_num(max(zero['act_std']))}, "
                f"{_num(max(zero['grad_norm']))} (zero)",
                plots.verdict(small < 1e-6 * relu["small"]["act_std"][0]
                              and max(zero["act_std"]) == 0 and max(zero["grad_norm"]) == 0)))
        if "lsuv" in relu:
            ratios = {a: std_ratio(signal[a]["lsuv"]) for a in signal if "lsuv" in signal[a]}
            ok = all(0.5 < r < 2 for r in ratios.values())
            rows.append(plots.claim(
                "LSUV: an orthonormal start and per-layer rescaling give unit variance in every layer",
                "Mishkin & Matas, All you need is a good init",
                f"depth {depth}: last/first activation std "
                + ", ".join(f"{_num(r)} ({a})" for a, r in ratios.items()),
                "yes" if ok else "partly"))
    if signal is not None and "tanh" in signal:
        tanh = signal["tanh"]

        def growth(st):
            g = st["grad_norm"]
            return g[0] / g[-1] if g[-1] > 0 else float("inf")

        edge = {i: (std_ratio(tanh[i]), growth(tanh[i])) for i in ("xavier", "orthogonal") if i in tanh}
        hot = {i: (std_ratio(tanh[i]), growth(tanh[i])) for i in ("he", "lsuv") if i in tanh}
        if edge and hot:
            rows.append(plots.claim(
                "tanh: at σ_w² = 1 (Xavier, orthogonal) the activations decay slowly and the "
                "gradients stay level; above it (He, LSUV) the activations stay up and the "
                "gradients grow towards the input (chaos)",
                "Poole et al.; Schoenholz et al., Deep Information Propagation",
                "last/first activation std, first/last gradient norm: " + "; ".join(
                    f"{i} {_num(a, 2)}, {_num(g, 2)}" for i, (a, g) in {**edge, **hot}.items()),
                plots.verdict(all(0.02 < a < 0.6 and 0.5 < g < 2 for a, g in edge.values())
                              and all(a > 0.6 and g > 3 for a, g in hot.values()))))
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
        rows.append(_chaos_shape_claim(chaos))
    if heat is not None:
        rows += trainability_claims(heat)
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
            "∝ 1/s, strongest first: plateaus, then drops; the trained network lags the exact "
            "solution slightly",
            "Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
            "neural networks",
            f"half-learning steps {', '.join(_num(v) for v in meas)} (exact "
            f"{', '.join(_num(v) for v in theo)}); largest deviation {_num(100 * dev, 2)}%",
            plots.verdict(finite.all() and dev < 0.2 and bool(np.all(meas >= theo)), partly=True)))
    if depth_time is not None:
        rows += depth_time_claims(depth_time)
    if igb is not None:
        deep = igb["depths"][len(igb["relu"]) - 1] if "relu" in igb else igb["depths"][-1]
        means = {a: float(np.mean(igb[a][-1])) for a in ACTIVATIONS if a in igb and igb[a]}
        ok = ("relu" in means and means["relu"] > 0.6 and means["relu"] > means.get("tanh", 0) + 0.2
              and len(set(igb["relu_class"][-1])) > 1)
        rows.append(plots.claim(
            "untrained deep ReLU networks put most inputs in one class, which one changing from "
            "network to network; tanh networks much less",
            "Francazi et al., Initial Guessing Bias: How Untrained Networks Favor Some Classes",
            f"depth {deep}: favourite-class fraction "
            + ", ".join(f"{_num(v, 2)} ({a})" for a, v in means.items())
            + f" (no bias: {1 / igb['n_classes']:.2f}); the winning class differs between "
            f"networks: {len(set(igb['relu_class'][-1])) if 'relu_class' in igb else 0} classes win",
            "yes" if ok else "partly"))
    return rows
