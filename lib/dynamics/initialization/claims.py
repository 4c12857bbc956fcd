"""Initialization, the page's numbers and its claims table. The numbers each section's prose
glues (``*_numbers``, formatted as the page prints them); the claims table, each row a
statement that can fail, judged on several seeds where the page runs it live
(:func:`page_claims` runs the other seeds), with its control, window and seeds printed under
the measurement; and :func:`published_claims`, the rows that rest on ``data/``. Every
threshold lives here once, as a named constant (the isometry rows' in :mod:`.isometry`, Section
5's in :mod:`.width`); the claim tests assert the rows' verdicts."""
from __future__ import annotations

import math

import numpy as np

from .. import plots, results
from .experiments import (best_sigma_w2, claim_runs, half_times, learning_times,
                          trainability_agreement, trainability_disagreements, xi_deviation)
from .isometry import isometry_claims
from .science import (DepthTimeConfig, backward_ratio, critical_sigma_w2, orthogonal_product_svals,
                      q_map, std_ratio, trainable_depth)

from .width import width_claim_runs, width_claims

__all__ = ["DEEP", "signal_numbers", "trainability_numbers", "depth_time_numbers", "chaos_numbers",
           "fluctuation_numbers", "trainability_claims", "depth_time_claims", "published_claims",
           "claims", "page_claims"]

_num = plots.number

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


# =============================================================================================
# The numbers in the prose
# =============================================================================================

def trainability_numbers(heat: dict, more: dict, level: float = 0.5) -> dict:
    """The numbers the trainability grid's prose quotes (glue texts): its size, how the
    shallowest rows train, how many cells train per depth (the narrowing, an observation of
    the grid's seeds), the best weight scales from depth :data:`DEEP` on, what trains at
    the deepest depth, the cells where the 6 xi_c line and training disagree, and the seeds
    and depths of ``more`` (the edge-of-chaos claim's other seeds)."""
    acc = _acc(heat["acc"])
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
                init_grid_verdict=plots.MARKS[_band_row(heat, level)["reproduced"]],
                init_trained_counts=_list([int((row >= level).sum()) for row in acc]),
                init_depths=_list(depths), init_n_sigma=len(sig),
                init_seed=_list(heat.get("seeds", [0])), init_more_seeds=_list(more["seeds"]),
                init_more_depths=_list(more["depths"]))


_NAMES = dict(relu="ReLU", tanh="tanh", he="He", xavier="Xavier", lsuv="LSUV",
              orthogonal="orthogonal", small="small Gaussian", zero="zero")
APART = 2.0  # the first layer's weight gradient "sits apart": a factor this far from layer 2's


def signal_numbers(signal: dict) -> dict:
    """The weight gradients Section 1's prose quotes (glue texts): the curves whose first layer
    sits a factor APART or more from layer 2 and those where it does not, and ReLU He's curve
    over depth (where it peaks, and what it does after, beside the forward signal)."""
    apart, close = [], []
    for act, inits in signal.items():
        for init, st in inits.items():
            g = st["grad_norm"]
            if len(g) < 2 or g[0] <= 0 or g[1] <= 0:
                continue  # no signal: nothing to compare
            name = (f"{_NAMES.get(act, act)} {_NAMES.get(init, init)} ({_num(g[0], 2)} against "
                    f"{_num(g[1], 2)})")
            (apart if max(g[0] / g[1], g[1] / g[0]) >= APART else close).append(name)
    out = dict(init_sig_apart=_list(apart), init_sig_close=_list(close))
    he = signal.get("relu", {}).get("he")
    if he is not None:
        g, a = np.asarray(he["grad_norm"], float), np.asarray(he["act_std"], float)
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


def depth_time_numbers(res: dict) -> dict:
    """The numbers the learning-time figure's prose quotes (glue texts): the orthogonal
    curve's median time at each depth, where it is lowest and highest, and the Gaussian
    curve's climb."""
    orth, gauss = learning_times(res["orthogonal"]), learning_times(res["gaussian"])
    d, lr = res["depths"], res["orthogonal_lr"]
    lo, hi = int(np.argmin(orth)), int(np.argmax(orth))
    k = d.index(16) if 16 in d else len(d) - 1
    dim = DepthTimeConfig().n_patterns  # the patterns' dimension (the data file keeps the width)
    sv = {depth: orthogonal_product_svals(dim, res["width"], depth) for depth in (d[0], d[-1])}
    spread = {depth: f"{np.median(v[:, 0]):.2f} to {np.median(v[:, -1]):.2f}"
              for depth, v in sv.items()}
    return dict(init_dt_dim=dim, init_dt_draws=len(next(iter(sv.values()))), init_dt_width=res["width"],
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
                init_dt_deep=_list(d[-2:]))


def chaos_numbers(chaos: dict) -> dict:
    """The depth scales the chaos figure's prose quotes (glue texts): the ordered and chaotic
    ones, the measured peak beside the theory, and how far the measurement sits from the theory
    in the chaotic phase (sigma_w^2 beyond CHAOTIC_RATIO x the critical value)."""
    xm = chaos["xi_measured"]
    s = np.asarray(xm["sigma_w2"], float)
    xi = np.array([np.nan if v is None else v for v in xm["xi"]], float)
    hot = xi[s > 3]
    theory = np.array([np.nan if v is None else v for v in xm["xi_theory"]], float)
    dev = 100 * (xi / theory - 1)
    crit = chaos["critical_theory"]
    fin = np.isfinite(dev)
    k = int(np.nanargmax(np.where(fin, xi, np.nan)))  # the measured peak
    chaotic = dev[fin & (s > CHAOTIC_RATIO * crit)]
    return dict(init_xi_ordered=_num(xi[0], 2),
                init_xi_chaotic=f"{_num(np.nanmin(hot), 2)} to {_num(np.nanmax(hot), 2)}",
                init_xi_peak_dev=(f"{_num(xi[k], 3)} layers measured against {_num(theory[k], 3)} "
                                  f"in theory at σ_w² = {_num(s[k], 3)}"),
                init_xi_hot_dev=_band_of(chaotic))


CHAOTIC_RATIO = 1.3  # "in the chaotic phase": sigma_w^2 at least this factor above the critical


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


def fluctuation_numbers(fluct: dict) -> dict:
    """The orthogonal ensemble's largest value, and where the Gaussian ensemble's deep half
    sits against the leading-order line 2 + 2l/3 (with its fitted slope), which the prose
    quotes (glue texts)."""
    layers, g = np.asarray(fluct["layers"], float), np.asarray(fluct["gaussian"], float)
    line = 2 + 2 * layers / 3
    half = layers > layers[-1] / 2  # the deep half of the network
    n, up = int(half.sum()), int(np.sum(g[half] > line[half]))
    side = ("above it" if up == n else "below it" if up == 0 else
            f"above it in {up} of its {n} layers, below in the rest" if up >= n - up else
            f"below it in {n - up} of its {n} layers, above in the rest")
    return dict(init_orth_max=_num(max(fluct["orthogonal"]), 2),
                init_fl_deep=(f"{side} ({_num(g[-1], 3)} against {_num(line[-1], 3)} at layer "
                              f"{int(layers[-1])})"),
                init_fl_slope=_num(fluct["gaussian_slope"], 2))


# =============================================================================================
# The claims table
# =============================================================================================

# The claims' thresholds: each lives here once; the claim tests assert the rows' verdicts.
HE_BAND = (0.2, 5.0)       # He/orthogonal/LSUV ReLU: forward and backward ratios inside this band
XAVIER_RELU_MAX = 1e-2     # Xavier ReLU: last/first activation std below this (variance halved)
XAVIER_GRAD_GAP = 1e-4     # Xavier ReLU: its largest weight gradient below this fraction of He's smallest
LSUV_FACTOR = 1.5          # LSUV: every layer's output variance on held-out inputs within this factor of 1
SMALL_COLLAPSE = 1e-6      # small Gaussian: last-layer std below this fraction of the first's
TANH_EDGE = ((0.02, 0.6), (0.05, 1.0))  # tanh at sigma_w^2 = 1: (act ratio, backward ratio) bands
TANH_HOT = (0.6, 3.0)      # tanh above it: act ratio above, first/last backward ratio above
CRITICAL_REL = 0.10        # chi_1 = 1 measured within 10% of the mean-field sigma_w^2
MAP_REL = 0.15             # measured q-map iterates within 15% of the map (finite width)
XI_DEV_MAX = 0.25          # measured xi_c: median deviation from the theory below 25%
XI_PEAK = 0.7              # measured xi_c peaks within this distance of the critical sigma_w^2
EDGE_RATIO = 1.4           # "near the edge": sigma_w^2 within this factor of the critical value
FAR_RATIO = 2.0            # "far from the edge": sigma_w^2 at least this factor away from it
EDGE_MARGIN = 0.2          # the row's best beats the best far from the edge by this accuracy
FLUCT_SLOPE = (0.4, 1.0)   # Gaussian fluctuations: slope per layer in this band (theory 2/3)
ORTH_SLOPE_MAX = 0.02      # orthogonal fluctuations: |slope per layer| below this
SAXE_DEV = 0.2             # half-learning steps within 20% of the exact solution
ORTH_GROWTH_MAX = 2.0      # deep linear, orthogonal: deepest over shallowest learning time
GAUSS_GROWTH_MIN = 10.0    # scaled Gaussian control: time at depth 16 over depth 2 at least this
LR_FALL = 4.0              # the orthogonal best learning rate falls by at least this factor
IGB_RELU_MIN = 0.6         # ReLU: the deepest networks' favourite-class share above this,
IGB_TANH_GAP = 0.3         # above the deepest tanh networks' by this,
IGB_DEPTH_GAP = 0.2        # and above the shallowest ReLU networks' by this


def _window(crit: float, sig) -> tuple[list, list]:
    """The grid's sigma_w^2 near the edge of chaos (within a factor EDGE_RATIO of ``crit``)
    and far from it (at least a factor FAR_RATIO away)."""
    near = [s for s in sig if 1 / EDGE_RATIO <= s / crit <= EDGE_RATIO]
    far = [s for s in sig if not 1 / FAR_RATIO < s / crit < FAR_RATIO]
    return near, far


def _acc(rows) -> np.ndarray:
    return np.asarray([[np.nan if v is None else v for v in row] for row in rows], float)


def _edge(depths, sig, acc, b2: float) -> tuple[list, bool]:
    """One seed's rows of the edge-of-chaos claim: per depth from DEEP on, (depth, best
    sigma_w^2, its accuracy, the best accuracy far from the edge), and whether every depth
    passes (the best near the edge, inside depth <= 6 xi_c, EDGE_MARGIN above the far best)."""
    near, far = _window(critical_sigma_w2(b2), sig)
    j_far = [sig.index(s) for s in far]
    best = best_sigma_w2(dict(acc=acc.tolist(), sigma_w2=sig))
    deep = [(d, b, np.nanmax(row), np.nanmax(row[j_far]) if j_far else np.nan)
            for d, b, row in zip(depths, best, acc) if d >= DEEP]
    return deep, bool(deep) and all(b is not None and b in near and trainable_depth(b, b2) >= d
                                    and top - cold >= EDGE_MARGIN for d, b, top, cold in deep)


def trainability_claims(heat: dict, more: dict | None = None, level: float = 0.5) -> list[dict]:
    """The claims rows of the trainability grid, from the precomputed data: ``heat`` (its
    seeds' mean accuracy; one seed, 0, at the cpu profile) and ``more``, the same networks on
    other seeds, each seed's own accuracies, on the cells the edge-of-chaos row reads
    (``initialization_trainability_seeds``). That row is judged on every seed and asserted;
    the 6 xi_c row reads the whole grid, rests on ``heat``'s seeds alone and is not asserted
    (the prose glues its verdict). What the grid shows beyond the papers' claims (the
    narrowing with depth, where the line and training disagree) is this page's observation on
    one seed: the prose glues it (:func:`trainability_numbers`), the table has no row for it."""
    acc = _acc(heat["acc"])
    depths, b2, sig = heat["depths"], heat["sigma_b2"], heat["sigma_w2"]
    seeds = heat.get("seeds", [0])
    crit = critical_sigma_w2(b2)
    runs = {s: (depths, sig, acc) for s in seeds[:1]}  # the grid: one seed, or a mean of several
    if more is not None:
        m = np.asarray(more["acc_per_seed"], float)  # depth x seed x sigma_w^2
        runs.update({s: (more["depths"], more["sigma_w2"], m[:, i]) for i, s in
                     enumerate(more["seeds"])})
    edge = {s: _edge(*r, b2) for s, r in runs.items()}
    margin = {s: min(top - cold for _, _, top, cold in deep) if deep else float("nan")
              for s, (deep, _) in edge.items()}
    text, v = plots.judged(margin, {s: ok for s, (_, ok) in edge.items()},
                           lambda x: _num(x, 2))
    near, far = _window(crit, sig)
    rows = [plots.claim(
        f"deep networks (depth ≥ {DEEP}) train best near the edge of chaos (σ_w² = {crit:.2f}), "
        "inside the band depth ≤ 6 ξ_c, and far better than far from it",
        "Schoenholz et al., Deep Information Propagation; Hayou et al., On the Impact of the "
        "Activation Function on Deep Neural Networks Training",
        f"best train acc minus the best far from the edge, smallest over the depths: {text}; "
        "best σ_w² (train acc) per depth: " + "; ".join(
            f"seed {s}: " + ", ".join(f"{d}: {b:g} ({_num(top, 2)})" if b is not None
                                      else f"{d}: none" for d, b, top, _ in deep)
            for s, (deep, _) in edge.items()),
        v,
        control=f"the best train acc far from the edge (σ_w² = {_list(far)}, a factor "
                f"{FAR_RATIO:g} or more from it); the best must beat it by {EDGE_MARGIN:g}, "
                "at every depth",
        window=f"σ_w² within a factor {EDGE_RATIO:g} of {crit:.2f}: {_list(near)}, "
               f"{len(near)} of the grid's {len(sig)} values; seed "
               f"{_list(seeds[:1])}: depths {_list([d for d in depths if d >= DEEP])}"
               + (f"; seeds {_list(more['seeds'])} (precomputed for this row only): depths "
                  f"{_list(more['depths'])}, σ_w² = {_list(more['sigma_w2'])}"
                  if more is not None else ""), seeds=list(runs))]
    return rows + [_band_row(heat, level)]


def _band_row(heat: dict, level: float = 0.5) -> dict:
    """The row of Schoenholz et al.'s criterion on the whole grid (one seed at the cpu
    profile, not asserted): trained cells and the cells with depth <= 6 xi_c agree."""
    agree, cells = trainability_agreement(heat, level)
    return plots.claim(
        "networks train when depth ≲ 6 ξ_c, and not beyond",
        "Schoenholz et al., Deep Information Propagation",
        f"trained (≥ {level:g}) and depth ≤ 6 ξ_c agree on {_num(100 * agree, 2)}% of {cells} cells "
        f"({heat['steps']:,} SGD steps, width {heat['width']})",
        plots.verdict(agree >= 0.9, partly=agree >= 0.7), asserted=False,
        control="the line 6 ξ_c of the theory", window="every cell of the grid",
        seeds=heat.get("seeds", [0]))


def depth_time_claims(res: dict) -> list[dict]:
    """The claims row of the deep linear networks' learning time against depth: per seed
    (best learning rate of each seed), the deepest network's time over the shallowest's with
    orthogonal init, against the scaled Gaussian control from the shallowest depth to 16."""
    d = res["depths"]
    seeds = res.get("seeds") or list(range(len(res["orthogonal_per_seed"][0])))
    orth = np.array([learning_times(r) for r in res["orthogonal_per_seed"]])  # depth x seed
    gauss = np.array([learning_times(r) for r in res["gaussian_per_seed"]])
    k = d.index(16) if 16 in d else len(d) - 1
    o_growth = {s: float(orth[-1, i] / orth[0, i]) for i, s in enumerate(seeds)}
    g_growth = {s: float(gauss[k, i] / gauss[0, i]) for i, s in enumerate(seeds)}
    lr = res["orthogonal_lr"]
    ok = {s: np.isfinite(o_growth[s]) and o_growth[s] <= ORTH_GROWTH_MAX
          and g_growth[s] >= GAUSS_GROWTH_MIN and lr[-1] <= lr[0] / LR_FALL for s in seeds}
    text, verdict = plots.judged(o_growth, ok, lambda v: f"{v:.2f}×")
    return [plots.claim(
        "deep linear networks, random orthogonal init at the best learning rate (which falls "
        "with depth): a finite, depth-independent delay in learning time; scaled Gaussian "
        "init: the learning time grows with depth",
        "Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
        "neural networks",
        f"orthogonal, depth {d[-1]} over depth {d[0]}: {text}; best lr {_num(lr[0], 2)} → "
        f"{_num(lr[-1], 2)}",
        verdict,
        control=f"scaled Gaussian, depth {d[k]} over depth {d[0]}: "
                + plots.spread(g_growth, lambda v: "never learned" if not np.isfinite(v)
                               else f"{v:.0f}×")
                + f"; orthogonal must stay within {ORTH_GROWTH_MAX:g}×, Gaussian grow "
                f"{GAUSS_GROWTH_MIN:g}× or more",
        window=f"depths {d[0]}–{d[-1]} (a {d[-1] // d[0]}-fold depth), the best of "
               f"{len(res['lrs'])} learning rates per seed", seeds=seeds)]


def published_claims() -> list[dict]:
    """The claims rows of the published page that rest on ``data/`` alone: the trainability
    grid and the learning time of deep linear networks against depth."""
    heat, prov = results.load("initialization_trainability")
    depth_time, dt_prov = results.load("initialization_depth_time")
    more = results.load("initialization_trainability_seeds")[0]
    heat = dict(heat, seeds=heat.get("seeds") or prov.get("config", {}).get("seeds", [0]))
    depth_time = dict(depth_time, seeds=depth_time.get("seeds")
                      or dt_prov.get("config", {}).get("seeds"))
    return trainability_claims(heat, more) + depth_time_claims(depth_time)


def _chaos_shape_ok(chaos: dict) -> tuple[float, bool]:
    """The order-to-chaos figure's shape on one seed: c* = 1 below the edge and < 1 above it,
    the measured depth scale peaking near the critical sigma_w^2, short in the ordered phase
    (< 2 layers at the smallest sigma_w^2) and longer, but finite, deep in the chaotic phase
    (sigma_w^2 > 3). Returns (the peak's sigma_w^2, the check)."""
    stars = {cm["sigma_w2"]: cm["c_star"] for cm in chaos["c_map"]}
    xm = chaos["xi_measured"]
    s = np.asarray(xm["sigma_w2"], float)
    xi = np.array([np.nan if v is None else v for v in xm["xi"]], float)
    peak = float(s[int(np.nanargmax(xi))])
    hot = xi[s > 3]
    ok = (stars.get(min(stars)) == 1.0 and stars.get(max(stars), 1) < 0.9
          and abs(peak - chaos["critical_theory"]) < XI_PEAK and xi[0] < 2
          and len(hot) > 0 and np.all((hot > xi[0]) & (hot < np.nanmax(xi))))
    return peak, bool(ok)


def claims(signal=None, chaos=None, heat=None, fluct=None, saxe=None, depth_time=None,
           igb=None, iso=None, more=None) -> list[dict]:
    """One :func:`dynamics.plots.claim` row per claim, with the verdict the numbers support.
    The live results come as ``{seed: result}`` (:func:`claim_runs`: each row is judged on
    every seed and shows their spread); ``heat`` and ``depth_time`` are the precomputed
    results shown on the page, ``more`` the grid's other seeds (:func:`trainability_claims`)."""
    rows = []
    if signal is not None:
        signal = plots.per_seed(signal, "signal", "init.claim_runs")
        seeds = list(signal)
        one = signal[seeds[0]]
        depth = len(next(iter(one["relu"].values()))["act_std"]) if "relu" in one else 0
        relu = {s: r["relu"] for s, r in signal.items() if "relu" in r}
        if relu and all("he" in r and "xavier" in r for r in relu.values()):
            he = {s: std_ratio(r["he"]) for s, r in relu.items()}
            he_b = {s: backward_ratio(r["he"]) for s, r in relu.items()}
            xa = {s: std_ratio(r["xavier"]) for s, r in relu.items()}
            xa_b = {s: backward_ratio(r["xavier"]) for s, r in relu.items()}
            keep = [i for i in ("he", "orthogonal", "lsuv") if all(i in r for r in relu.values())]

            def kept(r, i):  # forward and backward signal of init i inside the band
                return all(HE_BAND[0] < v < HE_BAND[1]
                           for v in (std_ratio(r[i]), backward_ratio(r[i])))

            text, v = plots.judged(he, {s: xa[s] < XAVIER_RELU_MAX and xa_b[s] < XAVIER_RELU_MAX
                                        and all(kept(relu[s], i) for i in keep) for s in relu})
            rows.append(plots.claim(
                "ReLU: Var W = 2/fan_in keeps the forward signal (activations) and the backward "
                "signal (‖dL/dz‖) at any depth; Xavier (≈ 1/fan_in) halves both variances "
                "every layer",
                "He et al.; Kumar, On weight initialization in deep neural networks",
                f"depth {depth}, He: last/first activation std {text}; first/last ‖dL/dz‖ "
                f"{plots.spread(he_b)}", v,
                control=f"Xavier: activation std {plots.spread(xa)}, ‖dL/dz‖ "
                        f"{plots.spread(xa_b)} (both must fall below {XAVIER_RELU_MAX:g})",
                window=f"{', '.join(keep)}: both ratios within {HE_BAND[0]:g}–{HE_BAND[1]:g}",
                seeds=seeds))
            xw = {s: max(r["xavier"]["grad_norm"][1:]) for s, r in relu.items()}
            hw = {s: min(r["he"]["grad_norm"][1:]) for s, r in relu.items()}
            text, v = plots.judged(xw, {s: xw[s] < XAVIER_GRAD_GAP * hw[s] for s in relu})
            rows.append(plots.claim(
                "ReLU, Xavier: the weight gradient ‖dL/dW‖ vanishes in every layer at once: "
                "the forward signal shrinks towards the output, the backward signal towards "
                "the input, and a layer's weight gradient is their product",
                "He et al., Delving Deep into Rectifiers (each ReLU layer scales the forward and "
                "the backward variance by n Var W / 2); the vanishing in every layer at once is "
                "this page's measurement",
                f"depth {depth}, Xavier: the largest ‖dL/dW‖ over layers 2–{depth} {text}", v,
                control=f"He: the smallest ‖dL/dW‖ over the same layers {plots.spread(hw)} "
                        f"(Xavier's largest must stay below {XAVIER_GRAD_GAP:g} of it)",
                window=f"layers 2–{depth} (fan-in = width; layer 1's input is the data)",
                seeds=seeds))
        if relu and all("small" in r and "zero" in r for r in relu.values()):
            small = {s: r["small"]["act_std"][-1] for s, r in relu.items()}
            ok = {s: small[s] < SMALL_COLLAPSE * r["small"]["act_std"][0]
                  and max(r["zero"]["act_std"]) == 0 and max(r["zero"]["grad_norm"]) == 0
                  for s, r in relu.items()}
            text, v = plots.judged(small, ok)
            rows.append(plots.claim(
                "ReLU: a small Gaussian start shrinks the signal geometrically; all-zero weights "
                "carry no signal and no gradient", "Kumar, On weight initialization in deep neural "
                "networks (the variance recursion that sizes each layer's weights); what the "
                "small Gaussian and the all-zero start do with it is this page's observation", f"depth {depth}: last-layer activation std (small) {text}", v,
                control="the first layer's std (the small start must lose a factor "
                        f"{1 / SMALL_COLLAPSE:.0e}); zero init: largest std and gradient must be 0",
                window=f"all {depth} layers", seeds=seeds))
        if all("lsuv" in r[a] for r in signal.values() for a in r):
            def worst(r, key):  # the largest factor between a layer's output variance and 1
                return max(math.exp(abs(math.log(x))) if x > 0 else math.inf
                           for a in r for x in r[a]["lsuv"][key])

            lsuv = {s: worst(r, "out_var") for s, r in signal.items()}
            start = {s: worst(r, "start_out_var") for s, r in signal.items()}
            text, v = plots.judged(lsuv, {s: lsuv[s] < LSUV_FACTOR and start[s] >= LSUV_FACTOR
                                          for s in signal})
            rows.append(plots.claim(
                "LSUV: an orthonormal start and per-layer rescaling give unit output variance in "
                "every layer, on inputs it was not rescaled on",
                "Mishkin & Matas, All you need is a good init",
                f"depth {depth}, {' and '.join(signal[seeds[0]])}, {len(one[next(iter(one))]['lsuv']['out_var'])} "
                f"layers each (the output layer included), held-out inputs: largest factor "
                f"between a layer's output variance and 1, {text}", v,
                control="the orthonormal start before LSUV's rescaling (the same matrices), on "
                        f"the same inputs: {plots.spread(start)} (must reach {LSUV_FACTOR:g})",
                window=f"every layer within a factor {LSUV_FACTOR:g} of 1; LSUV rescaled on "
                       "other inputs (MNIST-1D training inputs, measured on test inputs)",
                seeds=seeds))
        tanh = {s: r["tanh"] for s, r in signal.items() if "tanh" in r}
        if tanh and all(i in t for t in tanh.values() for i in ("xavier", "orthogonal", "he", "lsuv")):
            (ea, eg), (ha, hg) = TANH_EDGE, TANH_HOT
            ok = {s: all(ea[0] < std_ratio(t[i]) < ea[1] and eg[0] < backward_ratio(t[i]) < eg[1]
                         for i in ("xavier", "orthogonal"))
                  and all(std_ratio(t[i]) > ha and backward_ratio(t[i]) > hg for i in ("he", "lsuv"))
                  for s, t in tanh.items()}
            text, v = plots.judged({s: backward_ratio(t["he"]) for s, t in tanh.items()}, ok)
            rows.append(plots.claim(
                "tanh: at σ_w² = 1 (Xavier, orthogonal) the activations and the backward signal "
                "decay slowly; above it (He, LSUV) the activations stay up and the backward "
                "signal grows towards the input (chaos)",
                "Poole et al.; Schoenholz et al., Deep Information Propagation",
                f"first/last ‖dL/dz‖, He: {text}; last/first activation std, first/last ‖dL/dz‖ "
                f"on seed {seeds[0]}: " + "; ".join(
                    f"{i} {_num(std_ratio(tanh[seeds[0]][i]), 2)}, "
                    f"{_num(backward_ratio(tanh[seeds[0]][i]), 2)}"
                    for i in ("xavier", "orthogonal", "he", "lsuv")), v,
                control=f"Xavier and orthogonal: ‖dL/dz‖ ratio within {eg[0]:g}–{eg[1]:g}, "
                        f"activations {ea[0]:g}–{ea[1]:g}",
                window=f"He and LSUV: ‖dL/dz‖ ratio above {hg:g}, activations above {ha:g}",
                seeds=seeds))
    if chaos is not None:
        chaos = plots.per_seed(chaos, "chaos", "init.claim_runs")
        seeds = list(chaos)
        c0 = chaos[seeds[0]]
        t = c0["critical_theory"]
        def line_dev(c):  # the critical line: largest relative deviation over its sigma_b^2
            lm = c["line_measured"]
            return max(abs(m / critical_sigma_w2(b) - 1) for b, m in zip(lm["sigma_b2"], lm["sigma_w2"]))

        def map_dev(c):  # the q-map iterates: largest relative deviation from the map
            return max(abs(b / q_map(a, qm["sigma_w2"], c["sigma_b2"]) - 1) for qm in c["q_map"]
                       for seq in qm["measured"] for a, b in zip(seq[:-1], seq[1:]))

        mdev = {s: map_dev(c) for s, c in chaos.items()}
        text, v = plots.judged({s: 100 * x for s, x in mdev.items()},
                         {s: x < MAP_REL for s, x in mdev.items()}, lambda x: f"{x:.1f}%")
        rows.append(plots.claim(
            "the length map: the measured iterates follow the mean-field q-map",
            "Poole et al., Exponential expressivity in deep neural networks through transient "
            "chaos", f"largest deviation of an iterate from the map: {text}", v,
            control="the q-map of the theory (no fitted parameter)",
            window=f"every iterate within {100 * MAP_REL:.0f}%, σ_w² = "
                   f"{_list([qm['sigma_w2'] for qm in c0['q_map']])}", seeds=seeds))
        dev = {s: 100 * (c["critical_measured"] / t - 1) for s, c in chaos.items()}
        line = {s: line_dev(c) for s, c in chaos.items()}
        text, v = plots.judged(dev, {s: abs(d) < 100 * CRITICAL_REL and line[s] < CRITICAL_REL
                               for s, d in dev.items()}, lambda x: f"{x:+.1f}%")
        text += ("; on the critical line (every σ_b² of the figure), largest "
                 + plots.spread({s: 100 * x for s, x in line.items()}, lambda x: f"{x:.1f}%"))
        rows.append(plots.claim(
            f"tanh, σ_b² = {c0['sigma_b2']:g}: the edge of chaos χ₁ = 1 lies at "
            f"σ_w² = {_num(t)} (mean-field theory)",
            "Poole et al.; Schoenholz et al., Deep Information Propagation",
            f"χ₁ = 1 on random networks (width {c0['width']}): deviation from the theory {text}",
            v, control=f"the theory's σ_w² = {_num(t)}",
            window=f"within {100 * CRITICAL_REL:.0f}%", seeds=seeds))
        devs = {s: xi_deviation(c) for s, c in chaos.items()}
        text, v = plots.judged({s: 100 * d[0] for s, d in devs.items()},
                         {s: d[1] > 0 and d[0] < XI_DEV_MAX for s, d in devs.items()},
                         lambda x: f"{x:.0f}%")
        rows.append(plots.claim(
            "correlations relax over ξ_c = −1/ln χ_c layers; ξ_c diverges at χ₁ = 1",
            "Schoenholz et al., Deep Information Propagation",
            f"ξ_c measured at {devs[seeds[0]][1]} values of σ_w²: median deviation from theory "
            f"{text}; largest ξ_c {plots.spread({s: d[2] for s, d in devs.items()})} layers",
            v, control="ξ_c of the theory at each σ_w²",
            window=f"median deviation below {100 * XI_DEV_MAX:.0f}%", seeds=seeds))
        shape = {s: _chaos_shape_ok(c) for s, c in chaos.items()}
        xi0 = {s: c["xi_measured"]["xi"][0] for s, c in chaos.items()}
        text, v = plots.judged({s: p for s, (p, _) in shape.items()},
                         {s: ok for s, (_, ok) in shape.items()}, lambda x: f"{x:.2f}")
        rows.append(plots.claim(
            "c* = 1 below the edge of chaos, c* < 1 above it; ξ_c peaks at the edge, is a layer or "
            "two deep in the ordered phase and longer in the chaotic phase",
            "Poole et al.; Schoenholz et al., Deep Information Propagation",
            f"measured ξ_c peaks at σ_w² = {text}; at the smallest σ_w² "
            f"{plots.spread(xi0)} layers", v,
            control=f"the critical σ_w² = {t:.2f} (peak within {XI_PEAK:g}); c* at σ_w² = 1 "
                    "and 3; 2 layers in the ordered phase",
            window="beyond σ_w² = 3: longer than the ordered phase's, shorter than the peak's",
            seeds=seeds))
    if heat is not None:
        rows += trainability_claims(heat, more)
    if iso is not None:
        rows += isometry_claims(iso)
    if fluct is not None:
        fluct = plots.per_seed(fluct, "fluct", "init.claim_runs")
        seeds = list(fluct)
        f0 = fluct[seeds[0]]
        g = {s: f["gaussian_slope"] for s, f in fluct.items()}
        o = {s: f["orthogonal_slope"] for s, f in fluct.items()}
        text, v = plots.judged(g, {s: FLUCT_SLOPE[0] < g[s] < FLUCT_SLOPE[1]
                             and abs(o[s]) < ORTH_SLOPE_MAX for s in fluct})
        rows.append(plots.claim(
            "Gaussian weights: preactivation fluctuations grow linearly with depth (slope 2/3 "
            "per layer in n·Var G/E[G]²); orthogonal weights: independent of depth",
            "Day, Kahn & Roberts, Feature Learning and Generalization in Deep Networks with "
            "Orthogonal Weights",
            f"slope per layer, Gaussian: {text}; width {f0['width']}, {f0['n_nets']} networks",
            v, control=f"orthogonal slope {plots.spread(o, lambda x: f'{x:.4f}')} (must stay "
                       f"below {ORTH_SLOPE_MAX:g}); the theory's 2/3",
            window=f"Gaussian slope within {FLUCT_SLOPE[0]:g}–{FLUCT_SLOPE[1]:g}, layers "
                   f"1–{f0['depth']}", seeds=seeds))
    if saxe is not None:
        saxe = plots.per_seed(saxe, "saxe", "init.claim_runs")
        seeds = list(saxe)
        def follows(r):  # (largest deviation, whether the row's test holds) of one run
            meas, theo = half_times(r)
            fin = np.isfinite(meas) & np.isfinite(theo) if theo is not None else np.zeros(1, bool)
            dev = float(np.max(np.abs(meas[fin] / theo[fin] - 1))) if fin.any() else float("nan")
            return dev, bool(fin.all() and dev < SAXE_DEV and np.all(meas >= theo)
                             and np.all(np.diff(meas) > 0))

        run = {s: follows(r) for s, r in saxe.items()}
        ctrl = {s: follows(dict(r["control"], theory=r["theory"])) if "control" in r
                   and "theory" in r else (float("nan"), True) for s, r in saxe.items()}
        dev = {s: d for s, (d, _) in run.items()}
        ok = {s: run[s][1] and not ctrl[s][1] for s in saxe}  # the control must fail the test
        text, v = plots.judged({s: 100 * d for s, d in dev.items()}, ok, lambda x: f"{x:.0f}%")
        rows.append(plots.claim(
            "from small weights each mode is learned in a sharp sigmoidal transition at a time "
            "∝ 1/s, strongest first: plateaus, then drops; the trained network lags the exact "
            "solution slightly",
            "Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
            "neural networks",
            f"half-learning steps, largest deviation from the exact solution: {text}", v,
            control="the exact two-layer solution (no fitted parameter); an orthogonal start "
                    "(same task, rate and steps), which skips the plateaus, through the same "
                    "test must fail it: its largest deviation "
                    + plots.spread({s: 100 * d for s, (d, _) in ctrl.items()},
                                   lambda x: f"{x:.0f}%"),
            window=f"every pattern within {100 * SAXE_DEV:.0f}%, later than the exact solution, "
                   "strongest first", seeds=seeds))
    if depth_time is not None:
        rows += depth_time_claims(depth_time)
    if igb is not None:
        igb = plots.per_seed(igb, "igb", "init.claim_runs")
        seeds = list(igb)
        g0 = igb[seeds[0]]
        deep = g0["depths"][len(g0["relu"]) - 1]
        relu = {s: float(np.mean(r["relu"][-1])) for s, r in igb.items()}
        tanh = {s: float(np.mean(r["tanh"][-1])) for s, r in igb.items()}
        shallow = {s: float(np.mean(r["relu"][0])) for s, r in igb.items()}
        wins = {s: len(set(r["relu_class"][-1])) for s, r in igb.items()}
        text, v = plots.judged(relu, {s: relu[s] > IGB_RELU_MIN and relu[s] > tanh[s] + IGB_TANH_GAP
                                and relu[s] > shallow[s] + IGB_DEPTH_GAP and wins[s] > 1 for s in igb})
        rows.append(plots.claim(
            "untrained deep ReLU networks put most inputs in one class, which one changing from "
            "network to network; tanh networks much less",
            "Francazi et al., Initial Guessing Bias: How Untrained Networks Favor Some Classes",
            f"depth {deep}, favourite-class fraction (ReLU): {text}; classes that win: "
            f"{plots.spread(wins, lambda x: f'{x:.0f}')}", v,
            control=f"depth {g0['depths'][0]} (ReLU): {plots.spread(shallow)} (must trail by "
                    f"{IGB_DEPTH_GAP:g}); tanh: {plots.spread(tanh)} (must trail by "
                    f"{IGB_TANH_GAP:g}); no bias: "
                    f"{1 / g0['n_classes']:.2f}",
            window=f"ReLU above {IGB_RELU_MIN:g}, {g0['n_nets']} networks per seed",
            seeds=seeds))
    return rows


def page_claims(profile: str | None, seed: int | None, heat: dict, more: dict,
                depth_time: dict, width: dict, **page) -> list[dict]:
    """The page's claims table: the page's own runs (``signal=``, ``chaos=``, ``fluct=``,
    ``saxe=``, ``igb=``, ``iso=`` and ``width``, on ``seed``) joined by the same runs on the
    seeds after it (:func:`dynamics.plots.claim_seeds`), and the precomputed ``heat`` (with
    ``more``, its other seeds) and ``depth_time`` shown above; every row of :func:`claims`
    and Section 5's."""
    seeds = plots.claim_seeds(seed)
    rows = claims(**claim_runs(profile, seeds, **page), heat=heat, more=more,
                  depth_time=depth_time)
    return rows + width_claims(width_claim_runs(profile, seeds, page=width))
