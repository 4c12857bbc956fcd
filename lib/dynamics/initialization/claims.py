"""Initialization, the claims table: each row a statement that can fail, judged on several
seeds where the page runs it live (:func:`page_claims` runs the other seeds), with its control,
window and seeds printed under the measurement; and :func:`published_claims`, the rows that
rest on ``data/``. Every threshold lives here once, as a named constant (the isometry rows' in
:mod:`.isometry`, Section 5's in :mod:`.width`); the claim tests assert the rows' verdicts.
The numbers each section's prose glues (``*_numbers``) are in :mod:`.facts`."""
from __future__ import annotations

import math
import operator
from dataclasses import replace

import numpy as np

from .. import evidence, plots, results
from ..book import and_list
from .experiments import (ChaosRun, DepthTime, Saxe, Signal, Trainability, best_sigma_w2, claim_runs,
                          half_times, learning_times, trainability_agreement)
from .isometry import isometry_claims
from .science import (ChaosConfig, GuessingConfig, SignalConfig, SignalStats, backward_ratio, chi_1, critical_sigma_w2,
                      depth_scale, measure_map_iterates, q_map, std_ratio)
from .width import width_claim_runs, width_claims

__all__ = ["DEEP", "trainability_claims", "depth_time_claims", "precomputed", "published_claims",
           "claims", "page_claims"]

_num = plots.number

# The claims' thresholds: each lives here once; the claim tests assert the rows' verdicts.
DEEP = 30  # from this depth on, the trained region of the grid is read against the edge of chaos
CHAOTIC_RATIO = 1.3  # "in the chaotic phase": sigma_w^2 at least this factor above the critical
LEVEL = 0.5                # a cell of the grid "trained": train accuracy at least this
CRITICAL_REL = 0.10        # chi_1 = 1 measured within 10% of the mean-field sigma_w^2
MAP_REL = 0.15             # measured q-map iterates within 15% of the map (ChaosConfig.map_width units)
EDGE_RATIO = 1.4           # "near the edge": sigma_w^2 within this factor of the critical value
FAR_RATIO = 2.0            # "far from the edge": sigma_w^2 at least this factor away from it
EDGE_MARGIN = 0.2          # the row's best beats the best far from the edge by this accuracy
BAND_AGREE = 0.9  # trained and depth <= 6 xi_c agree on at least this fraction of the cells
ORTH_GROWTH_MAX = 2.0      # deep linear, orthogonal: deepest over shallowest learning time
IGB_RELU_MIN = 0.6  # the favourite class's share above this (no bias: 1 / n_classes)
XI_DEV_MAX = 0.25  # measured xi_c: median relative deviation from the prediction below this
C_STAR_HOT, C_STAR_COLD = 3.0, 1.0  # sigma_w^2 above and below the edge (the figure's maps)
C_STAR_MAX = 0.9  # the measured fixed point c* below this: the correlations do not flow to 1
C_STAR_DEPTH = 60  # layers iterated to read the measured fixed point
HE_BAND = 5.0        # He/orthogonal/LSUV ReLU: forward and backward ratios within this factor of 1
XAVIER_GRAD_GAP = 1e-4  # ReLU: an init's largest weight gradient over He's smallest, below this
SMALL_COLLAPSE = 1e-6   # small Gaussian: last-layer std over the first's below this
LSUV_FACTOR = 1.5       # LSUV: every layer's output variance within this factor of 1
TANH_HOT = (0.6, 3.0)   # tanh above sigma_w^2 = 1: activation ratio above, backward ratio above
FLUCT_DEV = 0.4         # Gaussian fluctuations: slope per layer within this fraction of 2/3
FLUCT_GROWTH_MAX = 1.0  # orthogonal fluctuations: deep-half mean over shallow-half mean below this
SAXE_DEV = 0.2          # half-learning steps within 20% of the exact solution
TANH_SLOW = 0.02        # tanh at sigma_w^2 = 1: last/first activation std above this (slow decay)
XAVIER_HALF = (0.4, 0.6)  # ReLU Xavier: per-layer variance factor, forward and backward, in here
SMALL_INIT_STD = 0.01   # the small Gaussian start: N(0, 0.01^2) weights (science.init_mlp)
SMALL_GEOM_REL = 0.1    # small Gaussian, ReLU: per-layer factor within 10% of 0.01 sqrt(n/2)
POWER_FIT = 1.0         # tanh at sigma_w^2 = 1: a power of depth fits log std better than geometric
TINY = 1e-30            # activation std below this: underflowed (float32 normals end near 1e-38)
PLACEBOS = (("ordered", 1 / FAR_RATIO), ("chaotic", FAR_RATIO))  # the edge-of-chaos row's controls


def _list(values) -> str:
    """1, 2 and 3."""
    return and_list(f"{v:g}" if isinstance(v, float) else v for v in values) or "none"


def _row(runs: dict, parts, **row) -> dict:
    """A claims row judged on ``runs`` (``{seed: run}``): one claim, whose fields ``row``
    replaces, or ``{label: claim}`` parts joined under the first's statement (``row``: the
    :func:`dynamics.evidence.joint` row's statement, control, window and note)."""
    if isinstance(parts, evidence.Claim):
        return evidence.judge(replace(parts, **row), runs, runs).row()
    first = next(iter(parts.values()))
    return evidence.joint(row.pop("statement", first.statement), first.paper, {
        label: evidence.judge(c, runs) for label, c in parts.items()}, **row)


def _decimals(sig) -> int:
    """The grid's precision: the fewest decimals that write every one of its sigma_w^2."""
    return next(d for d in range(10) if all(round(s, d) == s for s in sig))


def _window(crit: float, sig) -> tuple[list, list]:
    """The grid's sigma_w^2 near ``crit`` (within a factor EDGE_RATIO) and far from it (a factor
    FAR_RATIO or more), edge and bounds at the grid's precision (:func:`_decimals`)."""
    d = _decimals(sig)
    edge = round(crit, d)
    near = [s for s in sig if round(edge / EDGE_RATIO, d) <= s <= round(edge * EDGE_RATIO, d)]
    far = [s for s in sig if s <= round(edge / FAR_RATIO, d) or s >= round(edge * FAR_RATIO, d)]
    return near, far


def _shared(heat: Trainability, more: Trainability | None) -> tuple[list, list, np.ndarray]:
    """The cells every seed of the edge-of-chaos row has: ``heat``'s depths and sigma_w^2 that
    ``more`` (the other seeds) has too, with ``heat``'s accuracies there (no ``more``: all)."""
    acc = np.asarray(heat.acc, float)
    if more is None:
        return heat.depths, heat.sigma_w2, acc
    di = [i for i, d in enumerate(heat.depths) if d in more.depths]
    si = [i for i, s in enumerate(heat.sigma_w2) if s in more.sigma_w2]
    return [heat.depths[i] for i in di], [heat.sigma_w2[i] for i in si], acc[np.ix_(di, si)]


def _edge_lead(run, edge_factor: float = 1.0) -> float:
    """One seed's grid ``(depths, sigma_w^2, acc, sigma_b^2)``: the smallest, over the depths
    from DEEP on, of the best train accuracy near ``edge_factor`` x the critical sigma_w^2
    minus the best far from it (:func:`_window`; another factor than 1: a placebo edge)."""
    depths, sig, acc, b2 = run
    near, far = _window(edge_factor * critical_sigma_w2(b2), sig)
    deep = np.asarray(acc, float)[np.asarray(depths) >= DEEP]
    if not (near and far and len(deep)):
        return math.nan
    top, cold = (np.nanmax(deep[:, [sig.index(s) for s in side]], 1) for side in (near, far))
    lead = top - cold  # per depth
    return float(min(lead)) if np.all(np.isfinite(lead)) else math.nan


def _best_factor(run, edge_factor: float = 1.0) -> float:
    """One seed's grid ``(depths, sigma_w^2, acc, sigma_b^2)``: the largest, over the depths
    from DEEP on, of the factor between the best-training sigma_w^2 and ``edge_factor`` x the
    critical sigma_w^2 (inf where no sigma_w^2 beat chance)."""
    depths, sig, acc, b2 = run
    edge = edge_factor * critical_sigma_w2(b2)
    best = [b for d, b in zip(depths, best_sigma_w2(np.asarray(acc, float).tolist(), sig))
            if d >= DEEP]
    return max((_factor(b / edge) if b is not None else math.inf for b in best),
               default=math.nan)


_SCHOENHOLZ = "Schoenholz et al., Deep Information Propagation"
EDGE = evidence.Claim(
    f"deep networks (depth ≥ {DEEP}) train far better near the edge of chaos than far "
    "from it", f"{_SCHOENHOLZ}; Hayou et al., On the Impact of the "
    "Activation Function on Deep Neural Networks Training", measure=_edge_lead,
    test=evidence.Test(">=", EDGE_MARGIN, "EDGE_MARGIN: the best train acc near the edge "
                                          "minus the best far from it, smallest over the depths"),
    control="the same test with the edge put a factor FAR_RATIO below or above the critical σ_w²",
    window="depths from DEEP on", fmt=lambda x: _num(x, 2))
ARGMAX = replace(EDGE, measure=_best_factor, fmt=lambda x: f"{x:.3g}×",
                 test=evidence.Test("<=", EDGE_RATIO, "EDGE_RATIO: the factor between the best "
                                    "σ_w² and the edge, largest over the depths", scale="log"))


def _placebos(claim: evidence.Claim, label: str) -> dict:
    """``claim`` with each placebo edge (:data:`PLACEBOS`) its control, by ``label`` (its phase)."""
    return {label.format(side): replace(claim, control_measure=lambda r, f=f: claim.measure(r, f))
            for side, f in PLACEBOS}


def _depth_rule_agreement(heat: Trainability) -> float:
    """The null of the 6 xi_c row: the best agreement with "trained" of a rule that ignores
    sigma_w^2 ("trained iff depth <= D", D the grid's best cut, none included)."""
    acc = np.asarray(heat.acc, float)
    ok, trained, d = np.isfinite(acc), acc >= LEVEL, np.asarray(heat.depths)[:, None]
    return max(float(np.mean((trained == (d <= cut))[ok])) for cut in [0, *heat.depths])


BAND = evidence.Claim(
    "networks train when depth ≲ 6 ξ_c, and not beyond", _SCHOENHOLZ,
    measure=lambda h: trainability_agreement(h, LEVEL)[0], control_measure=_depth_rule_agreement,
    test=evidence.Test(">=", BAND_AGREE, f"BAND_AGREE: the fraction of cells where trained "
                                         f"(≥ {LEVEL:g}) and depth ≤ 6 ξ_c agree"),
    control="the best rule that ignores σ_w² (trained iff depth ≤ D, D the grid's best cut)",
    window="every cell of the grid", asserted=False, fmt=lambda x: f"{100 * x:.0f}%")


def trainability_claims(heat: Trainability, more: Trainability | None = None) -> list[dict]:
    """The trainability grid's rows, from the precomputed data: ``heat`` (the figure's grid)
    and ``more`` (other seeds, on the cells the edge-of-chaos row reads). That row is judged on
    every seed, on the cells all seeds have (:func:`_shared`); the 6 xi_c row on the whole grid
    of ``heat``'s seeds. Neither is asserted (the prose glues their verdicts); what the grid
    shows beyond the papers (the narrowing with depth) is glued, not a row."""
    b2, crit, seed = heat.sigma_b2, critical_sigma_w2(heat.sigma_b2), heat.seeds[0]
    depths, sig, acc = _shared(heat, more)  # every seed judged on the cells all seeds have
    runs = {seed: (depths, sig, acc, b2)}  # the grid: one seed, or a mean of several
    if more is not None:
        m = np.asarray(more.acc_per_seed, float)  # depth x seed x sigma_w^2
        di, si = [more.depths.index(d) for d in depths], [more.sigma_w2.index(s) for s in sig]
        runs.update({s: (depths, sig, m[:, i][np.ix_(di, si)], b2)
                     for i, s in enumerate(more.seeds)})
    best = {s: [(d, b) for d, b in zip(depths, best_sigma_w2(np.asarray(r[2]).tolist(), sig))
                if d >= DEEP] for s, r in runs.items()}
    near, far = _window(crit, sig)
    po, pc = (_window(crit * f, sig) for _, f in PLACEBOS)
    edge = _row(
        runs, _placebos(EDGE, "edge put in the {} phase:"),
        statement=EDGE.statement.replace("edge of chaos", f"edge of chaos (σ_w² = {crit:.2f})"),
        control=f"the same test with the edge put a factor {FAR_RATIO:g} below and above the "
                f"critical σ_w² (placebo edges), which must fail it; near: within a factor "
                f"{EDGE_RATIO:g}, far: a factor {FAR_RATIO:g} or more, the edge and these "
                f"bounds taken at the grid's precision ({_decimals(sig)} decimals); the ordered "
                f"placebo ({_list(po[0])} near, {_list(po[1])} far) and the chaotic "
                f"({_list(pc[0])} near, {_list(pc[1])} far)",
        asserted=False,  # fragile: its verdict has changed with each regeneration of the grids
        window=f"the cells every seed has, one rule for all seeds: depths "
               f"{_list([d for d in depths if d >= DEEP])}, σ_w² = {_list(sig)}; near "
               f"{crit:.2f}: {_list(near)}, far: {_list(far)}"
               + (f"; seed {seed}'s grid has more cells (the figure), seeds "
                  f"{_list(more.seeds)} were trained for this row only"
                  if more is not None else ""),
        note="whether the best σ_w² lies within a factor EDGE_RATIO of the edge, against the "
             "placebo edges (judged, shown, not asserted: the statement does not claim it): "
             + "; ".join(evidence.judge(c, runs).text(label) for label, c in _placebos(
                 ARGMAX, "placebo in the {} phase:").items())
             + "; best σ_w² per depth (shown): " + "; ".join(
            f"seed {s}: " + ", ".join(f"{d}: {'none' if b is None else f'{b:g}'}" for d, b in bd)
            for s, bd in best.items()))
    window = (f"every cell of the grid ({np.asarray(heat.acc, float).size} cells, "
              f"{heat.steps:,} SGD steps, width {heat.width})")
    return [edge, _row({seed: heat}, BAND, window=window)]


_SAXE = ("Saxe et al., Exact solutions to the nonlinear dynamics of learning in deep linear "
         "neural networks")
DEPTH_TIME = evidence.Claim(
    "deep linear networks, random orthogonal init at the best learning rate{falls}: a finite, "
    "depth-independent delay in learning time; scaled Gaussian init: the learning time grows "
    "with depth", _SAXE,
    measure=lambda times: float(times[-1] / times[0]),  # deepest over shallowest (inf: never)
    test=evidence.Test("<=", ORTH_GROWTH_MAX, "ORTH_GROWTH_MAX: the deepest network's learning "
                                              "time over the shallowest's", scale="log"),
    control="scaled Gaussian init on the same seed, measured the same way",
    window="the best learning rate per seed and depth",
    fmt=lambda v: f"{v:.2f}×" if math.isfinite(v) else "never learned")


def depth_time_claims(res: DepthTime) -> list[dict]:
    """The row of deep linear networks' learning time against depth (each seed at its best
    learning rate): orthogonal init, with the scaled Gaussian init as its control."""
    d, lr = res.depths, res.orthogonal_lr
    orth, gauss = ({s: t for s, t in zip(res.seeds, np.array([learning_times(r) for r in per]).T)}
                   for per in (res.orthogonal_per_seed, res.gaussian_per_seed))  # {seed: time per depth}
    k = falls_to(lr)
    claim = replace(DEPTH_TIME, statement=DEPTH_TIME.statement.format(
        falls=f" (which falls to depth {d[k]})" if k > 0 else ""),
        window=f"depths {d[0]}–{d[-1]} (a {d[-1] // d[0]}-fold depth), the best of "
               f"{len(res.lrs)} learning rates per seed; best lr (orthogonal, shown) "
               f"{_num(lr[0], 2)} → {_num(lr[-1], 2)}")
    return [evidence.judge(claim, orth, gauss).row()]


def falls_to(values) -> int:
    """The index up to which ``values`` fall strictly from the first (0: not even once)."""
    k = 0
    while k + 1 < len(values) and values[k + 1] < values[k]:
        k += 1
    return k


def precomputed(name: str):
    """``(record, provenance)`` of the chapter's data file ``name``, read through its record."""
    return results.load(name, as_=DepthTime if name.endswith("_depth_time") else Trainability)


def published_claims() -> list[dict]:
    """The claims rows of the published page that rest on ``data/`` alone: the trainability
    grid and the learning time of deep linear networks against depth (:func:`precomputed`)."""
    heat, more, depth_time = (precomputed(f"initialization_{n}")[0] for n in (
        "trainability", "trainability_seeds", "depth_time"))
    return trainability_claims(heat, more) + depth_time_claims(depth_time)


def _map_dev(chaos: ChaosRun, q_map_of) -> float:
    """The largest relative deviation of a measured length-map iterate from ``q_map_of(q,
    sigma_w2, sigma_b2)``."""
    return max(abs(b / q_map_of(a, qm.sigma_w2, chaos.sigma_b2) - 1) for qm in chaos.q_map
               for seq in qm.measured for a, b in zip(seq[:-1], seq[1:]))


def _line_dev(chaos: ChaosRun, critical_of) -> float:
    """The largest relative deviation of the measured critical sigma_w^2 (chi_1 = 1) from
    ``critical_of(sigma_b2)``, over the critical line's sigma_b^2 and the figure's own."""
    lm = chaos.line_measured
    pairs = [*zip(lm.sigma_b2, lm.sigma_w2), (chaos.sigma_b2, chaos.critical_measured)]
    return max(abs(m / critical_of(b) - 1) for b, m in pairs)


Q_MAP = evidence.Claim(
    "the length map: the measured iterates follow the mean-field q-map", "Poole et al., "
    "Exponential expressivity in deep neural networks through transient chaos",
    measure=lambda c: _map_dev(c, q_map),
    control_measure=lambda c: _map_dev(c, lambda q, w, b: w * q + b),
    test=evidence.Test("<", MAP_REL, "MAP_REL: the largest relative deviation of an iterate "
                                     "from the map"),
    control="the same iterates against a linear network's map σ_w² q + σ_b² (tanh left out)",
    window="every iterate", fmt=lambda x: f"{100 * x:.1f}%")
CRITICAL_LINE = evidence.Claim(
    "tanh, σ_b² = {b2:g}: the edge of chaos χ₁ = 1 lies at σ_w² = {crit} (mean-field theory), "
    "and on the theory's critical line at every σ_b²", f"Poole et al.; {_SCHOENHOLZ}",
    measure=lambda c: _line_dev(c, critical_sigma_w2),
    control_measure=lambda c: _line_dev(c, lambda b: 1.0),
    test=evidence.Test("<", CRITICAL_REL, "CRITICAL_REL: the largest relative deviation of the "
                                          "measured critical σ_w² from the prediction"),
    control="the same measurements against σ_w² = 1, the edge without bias variance (the null "
            "that σ_b² does not move it)", window="σ_b² = ", fmt=lambda x: f"{100 * x:.1f}%")


def _xi_dev(chaos: ChaosRun, predict) -> float:
    """Median |measured xi_c / predicted - 1| over the chaotic phase (sigma_w^2 at least
    CHAOTIC_RATIO x the critical value), ``predict(sigma_w2, sigma_b2)`` the prediction."""
    xm, crit, b2 = chaos.xi_measured, chaos.critical_theory, chaos.sigma_b2
    dev = [abs(x / predict(s, b2) - 1) for s, x in zip(xm.sigma_w2, xm.xi)
           if s >= CHAOTIC_RATIO * crit and x is not None and math.isfinite(x)]
    return float(np.median(dev)) if dev else math.nan


def _xi_ordered_formula(s: float, b2: float) -> float:
    """The ordered phase's depth scale -1/ln chi_1 (chi_c at c* = 1), read across the edge in
    absolute value: what xi_c would be if correlations relaxed towards c = 1 there too."""
    return abs(-1 / math.log(chi_1(s, b2)))


XI_CHAOTIC = evidence.Claim(
    "correlations relax over ξ_c = −1/ln χ_c layers, χ_c taken at the fixed point c*: in the "
    "chaotic phase (c* < 1) too", _SCHOENHOLZ, measure=lambda c: _xi_dev(c, depth_scale),
    control_measure=lambda c: _xi_dev(c, _xi_ordered_formula),
    test=evidence.Test("<", XI_DEV_MAX, "XI_DEV_MAX: median |measured ξ_c / predicted − 1| in "
                                        "the chaotic phase"),
    control="the same measured ξ_c against |−1/ln χ₁|, the ordered phase's formula (χ_c at "
            "c = 1) read across the edge", window="σ_w² ≥ {ratio:g} × {crit} (the chaotic phase)",
    fmt=lambda x: f"{100 * x:.0f}%")


def measured_c_star(chaos: ChaosRun, seed: int, sigma_w2: float, starts=(0.0, 0.6)) -> float:
    """The correlation map's fixed point measured on a random tanh network (the width of the
    ``chaos`` run, C_STAR_DEPTH layers): the correlation of two inputs after the last layer,
    mean over two starting correlations."""
    seqs = measure_map_iterates(sigma_w2, chaos.sigma_b2, list(starts), "c", chaos.width,
                                C_STAR_DEPTH, ChaosConfig().batch, seed)
    return float(np.mean([seq[-1] for seq in seqs]))


C_STAR = evidence.Claim(
    "c* = 1 below the edge of chaos, c* < 1 above it", f"Poole et al.; {_SCHOENHOLZ}",
    measure=lambda cs: measured_c_star(cs[0], cs[1], C_STAR_HOT),
    control_measure=lambda cs: measured_c_star(cs[0], cs[1], C_STAR_COLD),
    test=evidence.Test("<", C_STAR_MAX, "C_STAR_MAX: the correlation of two inputs after "
                                        f"{C_STAR_DEPTH} random tanh layers at σ_w² = "
                                        f"{C_STAR_HOT:g}"),
    control=f"the same network at σ_w² = {C_STAR_COLD:g} (ordered), measured the same way",
    window=f"after {C_STAR_DEPTH} layers, from starting correlations 0 and 0.6", fmt=_num,
    constant_control="in the ordered phase the correlation converges to 1 to rounding on every "
                     "seed, the fixed point the theory gives")


def _factor(x: float) -> float:
    """How far a ratio is from 1, as a factor (>= 1; inf for no signal)."""
    return math.exp(abs(math.log(x))) if x > 0 and math.isfinite(x) else math.inf


def _band_factor(stats: dict[str, SignalStats], inits) -> float:
    """The largest factor from 1 of the forward (last/first activation std) and backward
    (first/last ‖dL/dz‖) ratios of ``inits``."""
    return max(_factor(f(stats[i])) for i in inits for f in (std_ratio, backward_ratio))


def _lsuv_factor(r: Signal, key: str) -> float:
    """The largest factor between a layer's output variance and 1, over the activations."""
    return max(_factor(x) for _, n in r.items() for x in getattr(n["lsuv"], key))


def geometric_factor(stats: SignalStats) -> float:
    """The forward signal's per-layer factor: the median of act_std[l] / act_std[l - 1] from layer 2
    on (fan-in: the width), underflowed layers (below TINY) left out; NaN when none is left."""
    a = np.asarray(stats.act_std, float)
    ok = (a[1:-1] >= TINY) & (a[2:] >= TINY)
    return float(np.median((a[2:] / np.where(ok, a[1:-1], 1.0))[ok])) if ok.any() else math.nan


def _small_dev(stats: SignalStats, width: int) -> float:
    """|per-layer factor / (s sqrt(n / 2)) - 1|: a ReLU layer of N(0, s^2) weights, fan-in n."""
    return abs(geometric_factor(stats) / (SMALL_INIT_STD * math.sqrt(width / 2)) - 1)


def power_over_geometric(stats: SignalStats) -> float:
    """How much better a power of depth fits the activations' std than a geometric decay: the
    root of the ratio of log std's residual sums of squares, fitted linearly in l over in ln l."""
    with np.errstate(divide="ignore"):
        y = np.log(np.asarray(stats.act_std, float))
    if not np.all(np.isfinite(y)):
        return math.nan
    l = np.arange(1, len(y) + 1, dtype=float)
    ssr = [float(np.sum((y - np.polyval(np.polyfit(x, y, 1), x)) ** 2)) for x in (l, np.log(l))]
    return math.inf if ssr[1] == 0 else math.sqrt(ssr[0] / ssr[1])


def _per_layer_factor(stats: SignalStats) -> float:
    """A network's per-layer variance factor, forward (last/first activation std) and backward
    (first/last ‖dL/dz‖), the one further from 1/2: ratio^(2/(L-1)) over the L layers."""
    L = len(stats.act_std)
    fs = [f(stats) ** (2 / (L - 1)) if f(stats) > 0 else 0.0 for f in (std_ratio, backward_ratio)]
    return max(fs, key=lambda f: abs(f - 0.5))


_KUMAR = "Kumar, On weight initialization in deep neural networks"
HE_KEEPS = evidence.Claim(
    "ReLU: Var W = 2/fan_in keeps the forward signal (activations) and the backward signal "
    "(‖dL/dz‖) at any depth; Xavier (≈ 1/fan_in) halves both variances every layer",
    f"He et al.; {_KUMAR}", measure=lambda r: _band_factor(r.relu, ["he"]),
    control_measure=lambda r: _band_factor(r.relu, ["xavier"]),
    test=evidence.Test("<", HE_BAND, "HE_BAND: the largest factor from 1 of the last/first "
                                     "activation std and first/last ‖dL/dz‖", scale="log"),
    control="Xavier init, measured the same way", window="the network's layers",
    fmt=lambda x: f"{x:.3g}×")
XAVIER_HALVES = replace(
    HE_KEEPS, measure=lambda r: abs(_per_layer_factor(r.relu["xavier"]) - 0.5),
    control_measure=lambda r: abs(_per_layer_factor(r.relu["he"]) - 0.5),
    test=evidence.Test("<=", (XAVIER_HALF[1] - XAVIER_HALF[0]) / 2,
                       f"XAVIER_HALF: the per-layer variance factor (ratio^(2/(L−1)), forward and "
                       f"backward, the one further from 1/2) within {XAVIER_HALF[0]:g}–"
                       f"{XAVIER_HALF[1]:g}: its distance from 1/2"),
    control="He init, measured the same way (≈ 1 per layer)", fmt=lambda x: _num(x, 2))
XAVIER_VANISHES = evidence.Claim(
    "ReLU, Xavier: the weight gradient ‖dL/dW‖ vanishes in every layer at once: the forward "
    "signal shrinks towards the output, the backward signal towards the input, and a layer's "
    "weight gradient is their product", "He et al., Delving Deep into Rectifiers (each ReLU "
    "layer scales the forward and the backward variance by n Var W / 2); the vanishing in "
    "every layer at once is this page's measurement",
    measure=lambda r: max(r.relu["xavier"].grad_norm[1:]) / min(r.relu["he"].grad_norm[1:]),
    control_measure=lambda r: max(r.relu["he"].grad_norm[1:]) / min(r.relu["he"].grad_norm[1:]),
    test=evidence.Test("<", XAVIER_GRAD_GAP, "XAVIER_GRAD_GAP: the init's largest ‖dL/dW‖ over "
                                             "layers 2–L, over He's smallest", scale="log"),
    control="He in Xavier's place, measured the same way", window="the network's layers")
SMALL_SHRINKS = evidence.Claim(
    "ReLU: a small Gaussian start shrinks the signal geometrically", f"{_KUMAR} (the "
    "variance recursion that sizes each layer's weights); what the small Gaussian and the "
    "all-zero start do with it is this page's observation",
    measure=lambda r: std_ratio(r.relu["small"]), control_measure=lambda r: std_ratio(r.relu["he"]),
    test=evidence.Test("<", SMALL_COLLAPSE, "SMALL_COLLAPSE: last-layer activation std over "
                                            "the first's (it may underflow to 0)"),
    control="He init, measured the same way", window="all layers")
LSUV_UNIT = evidence.Claim(
    "LSUV: an orthonormal start and per-layer rescaling give unit output variance in every "
    "layer, on inputs it was not rescaled on", "Mishkin & Matas, All you need is a good init",
    measure=lambda r: _lsuv_factor(r, "out_var"), control_measure=lambda r: _lsuv_factor(r, "start_out_var"),
    test=evidence.Test("<", LSUV_FACTOR, "LSUV_FACTOR: the largest factor between a layer's "
                                         "output variance and 1", scale="log"),
    control="the orthonormal start before LSUV's rescaling (the same matrices), on the same "
            "inputs", window="the network's layers", fmt=lambda x: f"{x:.3g}×")
TANH_BACKWARD = evidence.Claim(
    "tanh: at σ_w² = 1 (Xavier, orthogonal) the activations and the backward signal decay "
    "slowly; above it (He, LSUV) the activations stay up and the backward signal grows "
    "towards the input (chaos)", f"Poole et al.; {_SCHOENHOLZ}",
    measure=lambda r: min(backward_ratio(r.tanh[i]) for i in ("he", "lsuv")),
    control_measure=lambda r: max(backward_ratio(r.tanh[i]) for i in ("xavier", "orthogonal")),
    test=evidence.Test(">", TANH_HOT[1], "TANH_HOT: first/last ‖dL/dz‖, smaller of He and LSUV",
                       scale="log"), control="Xavier and orthogonal, the larger",
    window="the network's layers")
TANH_FORWARD = replace(
    TANH_BACKWARD, measure=lambda r: min(std_ratio(r.tanh[i]) for i in ("he", "lsuv")),
    control_measure=lambda r: max(std_ratio(r.tanh[i]) for i in ("xavier", "orthogonal")),
    test=evidence.Test(">", TANH_HOT[0], "TANH_HOT: last/first activation std, smaller of He "
                                         "and LSUV"))
TANH_SLOW_DECAY = replace(
    TANH_BACKWARD, measure=lambda r: min(std_ratio(r.tanh[i]) for i in ("xavier", "orthogonal")),
    control_measure=lambda r: std_ratio(r.relu["xavier"]),
    test=evidence.Test(">", TANH_SLOW, "TANH_SLOW: last/first activation std, smaller of Xavier "
                                       "and orthogonal tanh", scale="log"),
    control="ReLU Xavier (the variance halved every layer), measured the same way")
TANH_POWER = replace(
    TANH_SLOW_DECAY, measure=lambda r: min(power_over_geometric(r.tanh[i])
                                           for i in ("xavier", "orthogonal")),
    control_measure=lambda r: power_over_geometric(r.relu["xavier"]),
    test=evidence.Test(">", POWER_FIT, "POWER_FIT: the residual of a geometric fit of log "
                                       "activation std over that of a power of depth, smaller "
                                       "of Xavier and orthogonal tanh, every layer", scale="log"))


def depth_growth(layers, values) -> float:
    """Scale-free growth with depth: the mean of ``values`` over the deep half of ``layers``
    (beyond half the last layer) over its mean over the shallow half. 1 for a flat curve,
    above 1 for one that grows, whatever its size (a slope would call any small curve flat)."""
    layers, values = np.asarray(layers, float), np.asarray(values, float)
    deep = layers > layers[-1] / 2
    return float(values[deep].mean() / values[~deep].mean())


FLUCT_GAUSS = evidence.Claim(
    "Gaussian weights: preactivation fluctuations grow linearly with depth (slope 2/3 per "
    "layer in n·Var G/E[G]²); orthogonal weights: they do not grow with depth", "Day, Kahn & "
    "Roberts, Feature Learning and Generalization in Deep Networks with Orthogonal Weights "
    "(orthogonal: independent of depth to leading order in 1/n)",
    measure=lambda f: abs(f.gaussian_slope / (2 / 3) - 1),
    control_measure=lambda f: abs(f.orthogonal_slope / (2 / 3) - 1),
    test=evidence.Test("<", FLUCT_DEV, "FLUCT_DEV: |slope per layer / (2/3) − 1|"),
    control="the orthogonal ensemble, measured the same way", window="layers 1–L",
    fmt=lambda x: f"{100 * x:.0f}%")
FLUCT_ORTH = replace(
    FLUCT_GAUSS, measure=lambda f: depth_growth(f.layers, f.orthogonal),
    control_measure=lambda f: depth_growth(f.layers, f.gaussian),
    test=evidence.Test("<", FLUCT_GROWTH_MAX, "FLUCT_GROWTH_MAX: mean over the deep half of the "
                                              "layers over the mean over the shallow half"),
    control="the Gaussian ensemble, measured the same way", fmt=lambda x: f"{x:.2f}×")


def _saxe_dev(r: Saxe) -> float:
    """The largest relative deviation of the half-learning steps from the exact solution when
    every pattern is learned no earlier than the exact solution and strongest first (else
    inf: the run does not follow it)."""
    meas, theo = half_times(r)
    if theo is None or not (np.all(np.isfinite(meas)) and np.all(np.isfinite(theo))):
        return math.inf
    ordered = np.all(meas >= theo) and np.all(np.diff(meas) > 0)
    return float(np.max(np.abs(meas / theo - 1))) if ordered else math.inf


SAXE = evidence.Claim(
    "from small weights each mode is learned in a sharp sigmoidal transition at a time ∝ 1/s, "
    "strongest first: plateaus, then drops; the trained network lags the exact solution "
    "slightly", _SAXE, measure=_saxe_dev,
    control_measure=lambda r: _saxe_dev(replace(r, **vars(r.control))),
    test=evidence.Test("<", SAXE_DEV, "SAXE_DEV: the largest relative deviation of a "
                                      "half-learning step from the exact solution"),
    control="an orthogonal start (same task, rate and steps), which skips the plateaus",
    window="every pattern, later than the exact solution, strongest first",
    fmt=lambda x: f"{100 * x:.0f}%" if math.isfinite(x) else "does not follow it")
IGB_TANH = evidence.Claim(  # the favourite class's share, mean over the networks of a depth
    "untrained deep ReLU networks put most inputs in one class; tanh networks of the same "
    "depth and the shallowest ReLU networks favour one class less",
    "Francazi et al., Initial Guessing Bias: How Untrained Networks Favor Some Classes (the "
    "activation and the depth set the bias, and depth amplifies it); the share of most "
    "inputs and the two comparisons are this page's",
    measure=lambda r: float(np.mean(r.relu[-1])),
    control_measure=lambda r: float(np.mean(r.tanh[-1])),
    test=evidence.Test(">", IGB_RELU_MIN, "IGB_RELU_MIN: the favourite class's share of "
                                          "the inputs, mean over the networks"),
    control="tanh networks of the same depth (σ_w² = 1)", window="the deepest")
IGB_SHALLOW = replace(IGB_TANH, control_measure=lambda r: float(np.mean(r.relu[0])),
                      control="ReLU networks of the shallowest depth")


def chance_favourite_share(n_inputs: int, n_classes: int) -> float:
    """The favourite class's expected share of ``n_inputs`` guesses made uniformly at random
    over ``n_classes``: E[max of a multinomial(n, 1/C)] / n, exactly. It is above 1/C (the
    largest of C counts exceeds their mean): 17/27 for 3 guesses over 3 classes. Computed by
    Poissonization: C independent Poisson(n/C) counts, conditioned on their sum n, are the
    multinomial, so P(max <= k) = P(every count <= k, sum = n) / P(sum = n)."""
    try:
        n_inputs, n_classes = operator.index(n_inputs), operator.index(n_classes)
    except TypeError:
        raise ValueError(f"chance_favourite_share needs integers, got {n_inputs!r}, "
                         f"{n_classes!r}") from None
    if n_inputs < 1 or n_classes < 2:
        raise ValueError(f"chance_favourite_share needs n_inputs >= 1 and n_classes >= 2, "
                         f"got {n_inputs!r}, {n_classes!r}")
    j = np.arange(n_inputs + 1)
    lam = n_inputs / n_classes
    pmf = np.exp(j * math.log(lam) - lam - np.array([math.lgamma(i + 1) for i in j]))
    total = math.exp(n_inputs * math.log(n_inputs) - n_inputs - math.lgamma(n_inputs + 1))
    mean_max = 0.0  # sum over k >= 0 of P(max > k)
    for k in range(n_inputs):
        if (k + 1) * n_classes < n_inputs:
            mean_max += 1.0  # C counts of at most k cannot sum to n
            continue
        conv = np.zeros(n_inputs + 1)
        conv[0] = 1.0
        for _ in range(n_classes):
            conv = np.convolve(conv, pmf[:k + 1])[:n_inputs + 1]
        below = min(1.0, conv[n_inputs] / total)
        mean_max += 1.0 - below
        if 1.0 - below < 1e-10:  # the rest is smaller still (and below the ratio's rounding)
            break
    return mean_max / n_inputs


def _chance(n_classes: int, n_inputs: int | None) -> str:
    """What no bias means for the favourite class's share, in words."""
    each = f"each class {1 / n_classes:.2f} of the inputs"
    if n_inputs is None:
        return each
    return (f"{each}; the favourite of {n_inputs:,} unbiased guesses takes "
            f"{chance_favourite_share(n_inputs, n_classes):.3f} by chance")


def claims(signal=None, chaos=None, heat=None, fluct=None, saxe=None, depth_time=None,
           igb=None, iso=None, more=None, signal_width: int | None = None,
           igb_inputs: int | None = None) -> list[dict]:
    """One claims row per claim. The live results come as ``{seed: result}`` (:func:`claim_runs`);
    ``heat``, ``more`` and ``depth_time`` are precomputed (:func:`trainability_claims`);
    ``signal_width`` is the ``signal`` runs' hidden width (the small start's closed form);
    ``igb_inputs`` the ``igb`` runs' number of inputs (the favourite's share by chance). A row
    whose runs lack an init (a dry run keeps the grid's ends) is left out."""
    rows = []
    if signal is not None and not (isinstance(signal_width, int) and signal_width > 0):
        raise ValueError(f"claims(signal=...) needs signal_width (SignalConfig.width), got {signal_width!r}")
    if signal is not None:
        signal = plots.per_seed(signal, "signal", "init.claim_runs")
        one = signal[next(iter(signal))]
        relu = one.relu
        depth = len(next(iter(relu.values())).act_std) if relu else 0
        w = f"depth {depth}, {len(one.items())} activations, MNIST-1D inputs"
        if "he" in relu and "xavier" in relu:
            keep = [i for i in ("he", "orthogonal", "lsuv") if i in relu]
            rows.append(_row(signal, {
                "He keeps:": replace(HE_KEEPS, measure=lambda r: _band_factor(r.relu, keep)),
                "Xavier halves, distance of the per-layer factor from 1/2:": XAVIER_HALVES},
                control="Xavier through He's test; He through Xavier's",
                window=f"{w}; {', '.join(keep)}"))
            rows.append(_row(signal, XAVIER_VANISHES, window=f"{w}; layers 2–{depth}"))
        if "small" in relu and "zero" in relu:
            zero = {s: max(*r.relu["zero"].act_std, *r.relu["zero"].grad_norm)
                    for s, r in signal.items()}  # the all-zero start: nothing moves
            rows.append(_row(signal, {
                "small, last/first:": SMALL_SHRINKS,
                f"small, per-layer factor against {SMALL_INIT_STD:g}·√(n/2), n = {signal_width}:":
                    replace(SMALL_SHRINKS, fmt=lambda x: _num(x, 2),
                            measure=lambda r: _small_dev(r.relu["small"], signal_width),
                            control_measure=lambda r: _small_dev(r.relu["he"], signal_width),
                            test=evidence.Test("<", SMALL_GEOM_REL, "SMALL_GEOM_REL: |median "
                                               "per-layer factor of the activation std (layers "
                                               "2 on, underflowed left out) / (0.01 √(n/2)) − 1|"))},
                control="He init of the same network through the same tests", window=w,
                note="all-zero weights and biases, largest activation std and ‖dL/dW‖ (shown, "
                     "not judged: zero by construction, an illustration, not a test): "
                     + plots.spread(zero, lambda x: f"{x:g}")))
        if all("lsuv" in n for r in signal.values() for _, n in r.items()):
            rows.append(_row(signal, LSUV_UNIT, window=f"{w}; every layer, the output layer "
                             "included; LSUV rescaled on MNIST-1D training inputs, measured "
                             "on test inputs"))
        if all(i in one.tanh for i in ("xavier", "orthogonal", "he", "lsuv")) \
                and "xavier" in relu:
            rows.append(_row(signal, {
                "‖dL/dz‖ first/last:": TANH_BACKWARD, "activation std last/first:": TANH_FORWARD,
                "σ_w² = 1, activation std last/first:": TANH_SLOW_DECAY,
                "σ_w² = 1, a power of depth rather than geometric:": TANH_POWER},
                control="Xavier and orthogonal (σ_w² = 1) through the tests above it; ReLU "
                        "Xavier through the slow decay's", window=w))
    if chaos is not None:
        chaos = plots.per_seed(chaos, "chaos", "init.claim_runs")
        c0 = chaos[next(iter(chaos))]
        rows += [_row(chaos, Q_MAP, window="every iterate, σ_w² = "
                      f"{_list([qm.sigma_w2 for qm in c0.q_map])}"),
                 _row(chaos, CRITICAL_LINE, statement=CRITICAL_LINE.statement.format(
                     b2=c0.sigma_b2, crit=_num(c0.critical_theory)),
                     window=CRITICAL_LINE.window + _list(c0.line_measured.sigma_b2)),
                 _row(chaos, XI_CHAOTIC, window=XI_CHAOTIC.window.format(
                     ratio=CHAOTIC_RATIO, crit=_num(c0.critical_theory, 3))),
                 _row({s: (c, s) for s, c in chaos.items()}, C_STAR)]
    if heat is not None:
        rows += trainability_claims(heat, more)
    if iso is not None:
        rows += isometry_claims(iso)
    if fluct is not None:
        fluct = plots.per_seed(fluct, "fluct", "init.claim_runs")
        f0 = fluct[next(iter(fluct))]
        rows.append(_row(fluct, {"Gaussian:": FLUCT_GAUSS, "orthogonal:": FLUCT_ORTH},
                         control="each ensemble through the other's test",
                         window=f"layers 1–{f0.depth}, width {f0.width}, {f0.n_nets} networks"))
    if saxe is not None:
        rows.append(_row(plots.per_seed(saxe, "saxe", "init.claim_runs"), SAXE))
    if depth_time is not None:
        rows += depth_time_claims(depth_time)
    if igb is not None:
        igb = plots.per_seed(igb, "igb", "init.claim_runs")
        g0 = igb[next(iter(igb))]
        wins = {s: len(set(r.relu_class[-1])) for s, r in igb.items()}
        deep = f"ReLU depth {g0.depths[-1]}"  # each part measures the deepest ReLU networks
        rows.append(_row(igb, {f"{deep} (control: tanh, σ_w² = 1, same depth):": IGB_TANH,
                               f"{deep} (control: ReLU depth {g0.depths[0]}):": IGB_SHALLOW},
                         control="the same test on untrained networks that favour one class "
                                 f"less: tanh at its σ_w² = 1, and ReLU at depth {g0.depths[0]} "
                                 f"(no bias: {_chance(g0.n_classes, igb_inputs)})",
                         window=f"depth {g0.depths[-1]}, {g0.n_nets} networks per seed",
                         note="classes that win among the deepest ReLU networks (shown, not "
                              "judged): " + plots.spread(wins, lambda x: f"{x:.0f}")))
    return rows


def page_claims(profile: str | None, seed: int | None, heat: Trainability, more: Trainability,
                depth_time: DepthTime, width: dict, **page) -> list[dict]:
    """The page's claims table: every row of :func:`claims` and Section 5's, on the page's own
    runs (``page``, ``width``; on ``seed``) and the same runs on the seeds after it
    (:func:`dynamics.plots.claim_seeds`), with the precomputed ``heat``, ``more`` and ``depth_time``."""
    seeds = plots.claim_seeds(seed)
    rows = claims(**claim_runs(profile, seeds, **page), heat=heat, more=more,
                  depth_time=depth_time, signal_width=SignalConfig.for_profile(profile).width,
                  igb_inputs=GuessingConfig.for_profile(profile).n_inputs)
    return rows + width_claims(width_claim_runs(profile, seeds, page=width))
