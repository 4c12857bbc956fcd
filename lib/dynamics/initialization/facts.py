"""Initialization, the page's numbers: what each section's prose glues (``*_numbers``,
formatted as the page prints them), computed from the data its figure shows (Section 5's are
in :mod:`.width`). The verdicts and the constants the prose shares with the rows
(:data:`~.claims.DEEP`, :data:`~.claims.CHAOTIC_RATIO`) are read from :mod:`.claims`."""
from __future__ import annotations

import math

import numpy as np

from .. import evidence, plots
from .claims import (CHAOTIC_RATIO, DEEP, EDGE, LEVEL, _depth_rule_agreement, _list, depth_growth, falls_to,
                     trainability_claims)
from .experiments import (ChaosRun, DepthTime, Fluctuations, Signal, Trainability, best_sigma_w2,
                          learning_times, trainability_agreement, trainability_disagreements)
from .isometry import Isometry, isometry_numbers
from .science import DepthTimeConfig, orthogonal_product_svals
from .width import PARAMETRIZATIONS, WidthRun, width_numbers

__all__ = ["signal_numbers", "chaos_numbers", "trainability_numbers", "fluctuation_numbers",
           "depth_time_numbers", "isometry_page_numbers", "width_page_numbers", "width_trend",
           "TREND_TOL"]

_num = plots.number


def _pct(x) -> str:
    return f"{100 * x:.0f}%"


def _cells(cells) -> str:
    """(sigma_w^2, depth) cells grouped by sigma_w^2: "σ_w² = 1.2 at depths 40, 50 and 60"."""
    by: dict = {}
    for s, d in sorted(cells):
        by.setdefault(s, []).append(d)
    return "; ".join(f"σ_w² = {s:g} at depth{'s' if len(d) > 1 else ''} {_list(d)}"
                     for s, d in by.items()) or "nowhere"


def _at_least(row) -> str:
    """The worst cell of a row of accuracies as the prose reads it: "100% training accuracy in
    every cell" when every cell is 100%, else "at least 68.5% training accuracy everywhere",
    the worst cell rounded *down* to a tenth of a per cent (a lower bound: 0.685 is not "at
    least 69%")."""
    low = float(np.nanmin(row))
    if low >= 1.0:
        return "100% training accuracy in every cell"
    # accuracies are counts over the training set (a thousand or so), stored in float32, so a
    # stored 0.685 sits within a float32 step of it either way (0.6850000024, 0.68499994): the
    # 1e-3 on the per-mille scale keeps both at 68.5%, and is far below one count
    pct = math.floor(1000 * low + 1e-3) / 10
    return f"at least {pct:g}% training accuracy everywhere"


def _edge_margin(row: dict) -> dict:
    """What the edge-of-chaos row's verdict rests on, as the prose reads it: on how many seeds
    its lead clears the bar, the smallest lead, and what :func:`dynamics.evidence.verdict_of`
    weighs: the median lead's margin over the bar against the seeds' spread (from which seed
    to which), and that margin as a multiple of the spread."""
    e = row["evidence"][0]  # both placebo parts judge the same treatment
    test = evidence.Test(**e["test"])
    lead = {int(s): np.nan if v is None else float(v) for s, v in e["treatment"].items()}
    low = min(lead, key=lambda s: np.inf if np.isnan(lead[s]) else lead[s])  # unmeasured last
    high = max(lead, key=lambda s: -np.inf if np.isnan(lead[s]) else lead[s])
    n = sum(test.passes(v) for v in lead.values())
    finite = [v for v in lead.values() if np.isfinite(v)]
    mid = float(np.median(finite)) if n else np.nan
    margin = evidence.median_margin(test, finite) if n else -np.inf
    noise = float("nan") if e["noise"] is None else float(e["noise"])
    ok = np.isfinite(noise) and noise > 0 and np.isfinite(margin)
    f = EDGE.fmt  # each number as the claims row prints it
    return dict(init_edge_on="every seed" if n == len(lead) else f"{n} of {len(lead)} seeds",
                init_edge_low=(f"{f(lead[low])} on seed {low}" if np.isfinite(lead[low])
                               else "not measured on any seed"),
                init_edge_mid=f(mid) if np.isfinite(mid) else "not measured",
                init_edge_bar=f"{test.threshold:g}", init_edge_by=f(margin),
                init_edge_noise=(f"{f(noise)}, from {f(lead[low])} on seed {low} to "
                                 f"{f(lead[high])} on seed {high}") if ok else "none measured",
                init_edge_times=f"{margin / noise:.1f} times" if ok else "not a multiple of")


def trainability_numbers(heat: Trainability, more: Trainability) -> dict:
    """The numbers the trainability grid's prose quotes (glue texts): its size and seeds, how
    its rows train (the narrowing with depth, an observation), the best weight scales from
    depth DEEP on, the cells where the 6 xi_c line and training disagree, and the two rows'
    verdicts, with what the edge-of-chaos one rests on (:func:`_edge_margin`)."""
    acc = np.asarray(heat.acc, float)
    depths, sig = heat.depths, heat.sigma_w2
    deep = [b for d, b in zip(depths, best_sigma_w2(heat.acc, sig))
            if d >= DEEP and b is not None]
    agree, cells = trainability_agreement(heat, LEVEL)
    dis = trainability_disagreements(heat, LEVEL)
    rows = trainability_claims(heat, more)
    return dict(**_edge_margin(rows[0]), **plots.verdicts(
                    rows, init_edge_verdict=f"deep networks (depth ≥ {DEEP})"),
                init_cells=cells, init_deepest=depths[-1], init_width=heat.width,
                init_steps=heat.steps, init_d0=depths[0], init_d0_min=_at_least(acc[0]),
                init_d1=depths[1], init_d1_min=_at_least(acc[1]),
                init_best_range=(f"{min(deep):g} and {max(deep):g}" if deep else "nowhere"),
                init_deepest_trained=_list([float(s) for s, a in zip(sig, acc[-1]) if a >= LEVEL]),
                init_level=_pct(LEVEL), init_agree=_pct(agree),
                init_agree_null=_pct(_depth_rule_agreement(heat)),
                init_beyond=_cells(dis["beyond"]), init_before=_cells(dis["before"]),
                init_grid_verdict=plots.MARKS[rows[1]["reproduced"]],  # the 6 xi_c row
                init_trained_counts=_list([int((row >= LEVEL).sum()) for row in acc]),
                init_depths=_list(depths), init_n_sigma=len(sig),
                init_seed=_list(heat.seeds), init_more_seeds=_list(more.seeds),
                init_more_depths=_list(more.depths))


_NAMES = dict(relu="ReLU", tanh="tanh", he="He", xavier="Xavier", lsuv="LSUV",
              orthogonal="orthogonal", small="small Gaussian", zero="zero")
APART = 2.0  # the first layer's weight gradient "sits apart": a factor this far from layer 2's


def signal_numbers(signal: Signal) -> dict:
    """The weight gradients Section 1's prose quotes (glue texts): the curves whose first layer
    sits a factor APART or more from layer 2 and those where it does not, and ReLU He's curve
    over depth (where it peaks, and what it does after, beside the forward signal)."""
    apart, close = [], []
    for act, inits in signal.items():
        for init, st in inits.items():
            g = st.grad_norm
            if len(g) < 2 or g[0] <= 0 or g[1] <= 0:
                continue  # no signal: nothing to compare
            name = (f"{_NAMES.get(act, act)} {_NAMES.get(init, init)} ({_num(g[0], 2)} against "
                    f"{_num(g[1], 2)})")
            (apart if max(g[0] / g[1], g[1] / g[0]) >= APART else close).append(name)
    out = dict(init_sig_apart=_list(apart), init_sig_close=_list(close))
    he = signal.relu.get("he")
    if he is not None:
        g, a = np.asarray(he.grad_norm, float), np.asarray(he.act_std, float)
        k = int(np.argmax(g[1:])) + 1  # from layer 2 on
        text = f"it rises from {_num(g[1], 2)} at layer 2 to "
        if k == len(g) - 1:
            text += f"{_num(g[k], 2)} at the last layer, layer {len(g)}"
        else:
            text += (f"a peak of {_num(g[k], 2)} at layer {k + 1}, then falls by "
                     f"{100 * (1 - g[-1] / g[k]):.0f}% to {_num(g[-1], 2)} at the last layer, "
                     f"layer {len(g)}, while the forward signal goes from an activation std of "
                     f"{_num(a[k - 1], 2)} entering layer {k + 1} to {_num(a[-2], 2)} entering "
                     "the last")
        out["init_sig_he"] = text
    return out


def depth_time_numbers(res: DepthTime) -> dict:
    """The numbers the learning-time figure's prose quotes (glue texts): the orthogonal curve's
    median time at each depth, its lowest and highest, its learning rates, the Gaussian climb."""
    orth, gauss = learning_times(res.orthogonal), learning_times(res.gaussian)
    d, lr = res.depths, res.orthogonal_lr
    lo, hi = int(np.argmin(orth)), int(np.argmax(orth))
    k = d.index(16) if 16 in d else len(d) - 1
    dim = DepthTimeConfig().n_patterns  # the patterns' dimension (the data file keeps the width)
    sv = {depth: orthogonal_product_svals(dim, res.width, depth) for depth in (d[0], d[-1])}
    spread = {depth: f"{np.median(v[:, 0]):.2f} to {np.median(v[:, -1]):.2f}"
              for depth, v in sv.items()}
    return dict(init_dt_dim=dim, init_dt_draws=len(sv[d[0]]), init_dt_width=res.width,
                init_dt_sv0=spread[d[0]], init_dt_sv1=spread[d[-1]],
                init_dt_orth=f"{plots.number(orth.max() / orth.min(), 2)}",
                init_dt_times=_list([f"{v:.0f}" for v in orth]),
                init_dt_lo=f"{orth[lo]:.0f} steps at depth {d[lo]}",
                init_dt_hi=f"{orth[hi]:.0f} at depth {d[hi]}",
                init_dt_gauss=f"{gauss[k] / gauss[0]:.0f}", init_dt_gd=d[k],
                init_dt_never=_list([v for v, t in zip(d, gauss) if not np.isfinite(t)]),
                init_dt_d0=d[0], init_dt_d1=d[-1],
                init_dt_lr0=plots.number(lr[0], 2), init_dt_lr_deep=_list(
                    [float(plots.number(v, 2)) for v in lr[-2:]]),
                init_dt_deep=_list(d[-2:]), init_dt_lr_falls=_lr_falls(d, lr))


def _lr_falls(d, lr) -> str:
    """Where the orthogonal best learning rate falls with depth, as the prose reads it."""
    k = falls_to(lr)
    out = (f"falls from {plots.number(lr[0], 2)} at depth {d[0]} to {plots.number(lr[k], 2)} "
           f"at depth {d[k]}" if k > 0 else f"does not fall from depth {d[0]}")
    if k + 1 < len(d):
        out += (" and is " + _list([plots.number(v, 2) for v in lr[k + 1:]]) + " at depth"
                + ("s " if len(d) - k > 2 else " ") + _list(d[k + 1:]))
    return out


def chaos_numbers(chaos: ChaosRun) -> dict:
    """The depth scales the chaos figure's prose quotes (glue texts): the ordered and chaotic
    ones, the measured peak beside the theory, and how far the measurement sits from the theory
    in the chaotic phase (sigma_w^2 beyond CHAOTIC_RATIO x the critical value)."""
    xm = chaos.xi_measured
    s = np.asarray(xm.sigma_w2, float)
    xi, theory = np.asarray(xm.xi, float), np.asarray(xm.xi_theory, float)  # None: NaN
    hot = xi[s > 3]
    dev = 100 * (xi / theory - 1)
    crit = chaos.critical_theory
    fin = np.isfinite(dev)
    k = int(np.nanargmax(np.where(fin, xi, np.nan)))  # the measured peak
    near = int(np.argmin(np.abs(s - crit)))  # the grid point nearest the critical sigma_w^2
    chaotic = dev[fin & (s > CHAOTIC_RATIO * crit)]
    return dict(init_crit=_num(crit, 3), init_xi_ordered=_num(xi[0], 2),
                init_xi_hot_ratio=f"{CHAOTIC_RATIO:g}",
                init_xi_chaotic=f"{_num(np.nanmin(hot), 2)} to {_num(np.nanmax(hot), 2)}",
                init_xi_peak_dev=(f"{_num(xi[k], 3)} layers measured against {_num(theory[k], 3)} "
                                  f"in theory at σ_w² = {_num(s[k], 3)}"),
                init_xi_hot_dev=_band_of(chaotic),
                init_xi_peak_at=(f"σ_w² = {_num(s[k], 3)}, " + ("" if k == near else "not ")
                                 + f"the measured σ_w² nearest the critical {_num(crit, 3)} "
                                 f"(grid step {_num(float(np.median(np.diff(s))), 2)})"))


def _band_of(dev) -> str:
    """Signed percent deviations as the prose reads them: '12% to 20% above' the theory."""
    if not len(dev):
        return "nowhere compared with"
    lo, hi = float(np.min(dev)), float(np.max(dev))
    if lo > 0:
        return f"{lo:.0f}% to {hi:.0f}% above"
    if hi < 0:
        return f"{-hi:.0f}% to {-lo:.0f}% below"
    return f"between {lo:+.0f}% and {hi:+.0f}% of".replace("-", "−")


def leading_line(layers) -> np.ndarray:
    """The Gaussian ensemble's leading order, n Var[G_l] / E[G_l]^2 = 2 + 2(l - 1)/3: exactly 2
    at layer 1 (one Gaussian layer, the four-point correlator V^1 = 0), then 2/3 per layer."""
    return 2 + 2 * (np.asarray(layers, float) - 1) / 3


def fluctuation_numbers(fluct: Fluctuations) -> dict:
    """The numbers the fluctuations' prose quotes: the orthogonal ensemble's largest value and
    its growth with depth (the claims row's :func:`~.claims.depth_growth`), and where the
    Gaussian one's deep half sits against :func:`leading_line` (its fitted slope)."""
    layers, g = np.asarray(fluct.layers, float), np.asarray(fluct.gaussian, float)
    line = leading_line(layers)
    half = layers > layers[-1] / 2  # the deep half of the network
    n, up = int(half.sum()), int(np.sum(g[half] > line[half]))
    side = ("above it" if up == n else "below it" if up == 0 else
            f"above it in {up} of its {n} layers, below in the rest" if up >= n - up else
            f"below it in {n - up} of its {n} layers, above in the rest")
    return dict(init_orth_max=_num(max(fluct.orthogonal), 2),
                init_orth_growth=_num(depth_growth(layers, fluct.orthogonal), 2),
                init_fl_deep=(f"{side} (at layer {int(layers[-1])}, the last: {_num(g[-1], 3)} "
                              f"against {_num(line[-1], 3)})"),
                init_fl_slope=_num(fluct.gaussian_slope, 2),
                init_fl_first=f"{_num(g[0], 3)} at layer {int(layers[0])}")


def isometry_page_numbers(res: Isometry) -> dict:
    """All the isometry section glues: :func:`~.isometry.isometry_numbers`, how far from one the
    mean lambda strays (the largest factor, over the cases and depths), and Gaussian ReLU at the
    deepest depth (its spread against the dashed theory, its mean) beside L/n."""
    c, L, n = res.cases, res.depths[-1], res.width
    band = max(float(np.exp(abs(np.log(m)))) for case in c.values() for m in case.mean)
    g = c["relu gaussian"]
    return dict(**isometry_numbers(res), iso_mean_band=f"a factor {band:.2g}",
                iso_gauss_relu=_num(g.rel_var[-1], 3),
                iso_gauss_relu_theory=_num(g.theory[-1], 3),
                iso_gauss_relu_frac=f"{g.rel_var[-1] / g.theory[-1]:.2f}×",
                iso_gauss_relu_mean=_num(g.mean[-1], 3), iso_ln=_num(L / n, 2))


TREND_TOL = 0.25  # a move of the best rate smaller than this (grid steps) is no move: it is
#                  below what the parabola through the grid resolves


def width_trend(best_log2_lr) -> str:
    """How a parametrization's best rate moves as the width doubles: in one direction at
    every doubling (each move at least :data:`TREND_TOL` grid steps), in one direction over
    the widths with some doublings too small to count, not at all, or up and down."""
    d = np.diff(np.asarray(best_log2_lr, float))
    if not len(d):
        return "moves up and down as the width doubles"
    small = int(np.sum(np.abs(d) < TREND_TOL))
    for sign, word in ((1, "rises"), (-1, "falls")):
        if np.all(sign * d >= TREND_TOL):
            return f"{word} at every doubling of the width"
        if np.all(sign * d > -TREND_TOL) and sign * d.sum() >= TREND_TOL:
            return (f"{word} with the width, though at {small} of the {len(d)} doublings by "
                    f"less than {TREND_TOL:g} grid steps")
    if small == len(d) and abs(d.sum()) < TREND_TOL:
        return f"barely moves as the width doubles (by less than {TREND_TOL:g} grid steps)"
    return "moves up and down as the width doubles"


def width_page_numbers(res: WidthRun) -> dict:
    """Section 5's glue: :func:`~.width.width_numbers`, with each parametrization's trend in
    :func:`width_trend`'s words (a move under :data:`TREND_TOL` grid steps does not count)
    and the rate grid's ends to three digits (2^-3 is 0.125, not 0.12). These two readings
    live here, with the page's words, not in ``width.py``, which the initialization data's
    digest covers."""
    out = width_numbers(res)
    out["init_width_lr_lo"] = f"{2 ** res.log2_lrs[0]:.3g}"
    out["init_width_lr_hi"] = f"{2 ** res.log2_lrs[-1]:.3g}"
    for p in PARAMETRIZATIONS:
        out[f"init_width_{p}_trend"] = width_trend(res.curves(p).best_log2_lr)
    return out
