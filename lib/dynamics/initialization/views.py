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
from .claims import *  # noqa: F401,F403  (the claims table, re-exported: views.claims still works)
from .claims import __all__ as _claims
from .claims import DEEP, _cells, _list, _num, _pct, trainability_claims
from .width import *  # noqa: F401,F403  (Section 5, SP beside μP: re-exported here)
from .width import __all__ as _width

__all__ = ["signal_panel", "trainability_panel", "saxe_panel", "guessing_panel",
           "trainability_numbers", "depth_time_numbers", "chaos_numbers", "fluctuation_numbers",
           "answer_lsuv_gain", "answer_band", "answer_fluctuations", "answer_rank_growth",
           "answer_coordinate_check", "isometry_numbers", *_claims, *_width]


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
        res = run_trainability(cfg, bars=False)
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
# Numbers in the prose (the claims table is in :mod:`.claims`, re-exported here)
# =============================================================================================

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
    """The numbers the learning-time figure's prose quotes (glue texts): the orthogonal
    curve's median time at each depth, where it is lowest and highest, and the Gaussian
    curve's climb."""
    orth, gauss = learning_times(res["orthogonal"]), learning_times(res["gaussian"])
    d, lr = res["depths"], res["orthogonal_lr"]
    lo, hi = int(np.argmin(orth)), int(np.argmax(orth))
    k = d.index(16) if 16 in d else len(d) - 1
    return dict(init_dt_orth=f"{plots.number(orth.max() / orth.min(), 2)}",
                init_dt_times=_list([f"{v:.0f}" for v in orth]),
                init_dt_lo=f"{orth[lo]:.0f} steps at depth {d[lo]}",
                init_dt_hi=f"{orth[hi]:.0f} at depth {d[hi]}",
                init_dt_gauss=f"{gauss[k] / gauss[0]:.0f}", init_dt_gd=d[k],
                init_dt_never=_list([v for v, t in zip(d, gauss) if not np.isfinite(t)]),
                init_dt_d0=d[0], init_dt_d1=d[-1],
                init_dt_lr0=plots.number(lr[0], 2), init_dt_lr_deep=_list(
                    [float(plots.number(v, 2)) for v in lr[-2:]]),
                init_dt_deep=_list(d[-2:]))


def chaos_numbers(chaos: dict) -> dict:
    """The depth scales the chaos figure's prose quotes (glue texts)."""
    xm = chaos["xi_measured"]
    s = np.asarray(xm["sigma_w2"], float)
    xi = np.array([np.nan if v is None else v for v in xm["xi"]], float)
    hot = xi[s > 3]
    return dict(init_xi_ordered=_num(xi[0], 2),
                init_xi_chaotic=f"{_num(np.nanmin(hot), 2)} to {_num(np.nanmax(hot), 2)}")


def isometry_numbers(res: dict) -> dict:
    """The critical point and the deepest spreads the prose quotes (glue texts)."""
    c = res["cases"]
    t = c["tanh orthogonal"]
    return dict(iso_q=_num(res["q_star"], 3), iso_sw2=_num(t["sigma_w2"], 4),
                iso_sb2=f"{t['sigma_b2']:.1e}", iso_depth=str(res["depths"][-1]),
                iso_width=str(res["width"]), iso_nets=str(res["n_nets"]),
                iso_orth_tanh=_num(t["rel_var"][-1], 2),
                iso_gauss_tanh=_num(c["tanh gaussian"]["rel_var"][-1], 2),
                iso_orth_relu=_num(c["relu orthogonal"]["rel_var"][-1], 2),
                iso_orth_tanh_small=_pct(t["small"][-1]),
                iso_gauss_tanh_small=_pct(c["tanh gaussian"]["small"][-1]),
                iso_orth_relu_small=_pct(c["relu orthogonal"]["small"][-1]))


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
    grow = [b / a for a, b in zip(r["change"][0], r["change"][-1])]
    return ("RMS change of hidden layers 1, 2, … after one Adam step — " + "; ".join(rows)
            + f"; from width {r['widths'][0]} to {r['widths'][-1]} "
            f"({r['widths'][-1] / r['widths'][0]:g}×) each layer's change grows "
            + ", ".join(f"{g:.1f}×" for g in grow))
