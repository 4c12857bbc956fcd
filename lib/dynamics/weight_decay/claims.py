"""Weight decay, the claims: the numbers the page's prose glues, and its claims table.

Every number the prose quotes about a run comes from :func:`numbers` (one section at a time,
as glue texts); every "What to notice" statement that can fail is a row of :func:`claims`,
with its control, window and seeds printed under the measurement, and every threshold a
named constant here, written once. :func:`grid_claims` are the rows of the precomputed grids
(sections 1 and 3), :func:`published_claims` those rows as the cpu build shows them, and
:func:`claim_runs` runs the live experiments on the claims' seeds, reusing the page's own runs
for its seed.
"""
from __future__ import annotations

import math

import numpy as np

from .. import plots
from .experiments import (DECOUPLING, LABELS, decoupling_summary, equilibrium_configs,
                          grid_array, grid_summary, live_grid_config, run_clock,
                          run_decoupling, run_equilibrium, run_spectrum)
from .figures import slope_text
from .science import ClockConfig, SpectrumConfig, best_decay_per_lr, ridge_slope
from .facts import spectrum_claims, spectrum_numbers
from .window import WindowConfig, run_window, window_claims, window_numbers

__all__ = ["PLAIN_BAND", "INVARIANT_BAND", "RMS_TOL", "ANGLE_TOL", "RELAX_BAND", "DECOUPLED",
           "L2_FAIL", "SAME_RMS", "CLOCK_SPREAD", "CLOCK_CONTRAST", "BEST_MARGIN",
           "ADAMW_FAIL_GROWTH", "FLAT_BELOW", "PLAIN_MOVES", "INV_FALL", "INV_SLOPE",
           "SYM_FACTOR", "LOWER_BY", "ridge_band", "seed_slopes", "clock_pointwise", "symmetry_config", "symmetry_claims", "decoupling_numbers", "live_slope_numbers",
           "invariant_numbers", "equilibrium_numbers", "clock_numbers",
           "numbers", "claim_runs", "grid_claims", "page_claims", "published_claims"]

L2_FAIL = 0.1            # Adam + L2's largest lambda at least this far below its column's best
SAME_RMS = 1.3           # AdamW: largest / smallest settled RMS across matrices below this
CLOCK_SPREAD = 0.10      # equal eta * lambda: settled losses within this of each other
CLOCK_CONTRAST = 0.10    # the run at another product: its loss off by more than this
_LH = "Decoupled Weight Decay Regularization"
_EQ = "L2 Regularization versus Batch and Weight Normalization; Rotational Equilibrium"
_SPEC = "Scaling Laws and Spectra of Shallow Neural Networks in the Feature Learning Regime"


def _n(x, digits: int = 3) -> str:
    return plots.number(x, digits, missing="n/a")


def _signed(x) -> str:
    return "n/a" if x is None or not math.isfinite(x) else ("+" if x >= 0 else "−") + _n(abs(x), 2)


# The learning rates over which section 1 reads the plain MLP's AdamW ridge (where eta * lambda
# is small), and section 3 the scale-invariant network's ridge (where every seed has one).
PLAIN_BAND = (3e-4, 3.2e-3)
INVARIANT_BAND = (1e-3, 1.01e-2)


def _fmt(x, digits: int = 2) -> str:
    return plots.number(x, digits, missing="n/a")


def _range(values, digits: int = 2) -> str:
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return "n/a"
    lo, hi = min(values), max(values)
    return _fmt(lo, digits) if _fmt(lo, digits) == _fmt(hi, digits) else \
        f"{_fmt(lo, digits)} to {_fmt(hi, digits)}"


def _and(texts) -> str:
    """ "a", "a and b", "a, b and c"."""
    texts = list(texts)
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def ridge_band(payload: dict, kind: str, band) -> dict:
    """The best decay of grid ``kind`` at the learning rates inside ``band`` (lo, hi): on the
    seed-averaged grid (``ridge``) and on each seed (``per_seed``), and per seed the factor
    between the largest and the smallest best decay in the band (``moves``; inf where a seed
    has no best decay at some learning rate of the band)."""
    g = payload["grids"][kind]
    lrs = np.asarray(g["lrs"], dtype=float)
    cols = [j for j, lr in enumerate(lrs) if band[0] <= lr <= band[1]]
    mean = grid_summary(payload, kind)["ridge"]
    per_seed = [[best_decay_per_lr(acc, g["decays"])[j] for j in cols]
                for acc in np.asarray(g["test_acc_seeds"], dtype=float)]
    moves = [max(r) / min(r) if all(v is not None for v in r) else math.inf for r in per_seed]
    return dict(lrs=lrs[cols].tolist(), ridge=[mean[j] for j in cols], per_seed=per_seed,
                moves=moves, lr_factor=float(lrs[cols[-1]] / lrs[cols[0]]) if cols else math.nan)


def seed_slopes(payload: dict, kind: str) -> dict:
    """``{seed: slope}``: on each seed's grid, the slope of log(best PyTorch decay) against
    log(eta) (:func:`~.science.ridge_slope`; 0 when the best lambda ignores eta, -1 when the
    best eta * lambda does)."""
    g = payload["grids"][kind]
    return {s: ridge_slope(g["lrs"], best_decay_per_lr(acc, g["decays"]))
            for s, acc in enumerate(np.asarray(g["test_acc_seeds"], dtype=float))}


def decoupling_numbers(grid: dict) -> dict:
    """The numbers section 1's prose quotes about the precomputed grids, as glue texts:
    Adam + L2's and AdamW's ridges, the slopes fitted through them, Loshchilov & Hutter's
    best decay eta * lambda at both ends, and the best cells with AdamW's margin per seed."""
    sums = {k: grid_summary(grid, k) for k in DECOUPLING}
    lrs = grid["lrs"]
    l2 = [d for d in sums["adam_l2"]["ridge"] if d is not None]
    plain = ridge_band(grid, "adamw", PLAIN_BAND)
    dec = decoupling_summary(grid)
    best = [best_decay_per_lr(a, grid["grids"]["adamw"]["decays"])
            for a in _seed_accs(grid, "adamw").values()]
    _, below, whole = _below_line(grid)
    return dict(
        wd_l2_ridge=_range(l2), wd_adamw_ridge=_range(plain["ridge"]),
        wd_adamw_ridge_seeds=_range([v for r in plain["per_seed"] for v in r]),
        wd_adamw_moves=_fmt(max(plain["moves"])),
        wd_slope_l2=slope_text(sums["adam_l2"]["slope"]), wd_slope_adamw=slope_text(sums["adamw"]["slope"]),
        wd_best_adamw=_fmt(dec["best"]["adamw"]["acc"], 3),
        wd_best_l2=_fmt(dec["best"]["adam_l2"]["acc"], 3),
        wd_margins=_range(dec["per_seed"], 2) if dec["per_seed"] else "n/a",
        wd_best_verdict=plots.MARKS[grid_claims(grid)[0]["reproduced"]],
        wd_slope_l2_seeds=plots.spread(seed_slopes(grid, "adam_l2"), slope_text),
        wd_slope_adamw_seeds=plots.spread(seed_slopes(grid, "adamw"), slope_text),
        wd_lh_verdict=plots.MARKS[next(r["reproduced"] for r in grid_claims(grid)
                                       if r["claim"].startswith("with AdamW the best decay"))],
        wd_adamw_above_seeds="; ".join(
            f"{_and([_fmt(b[j], 2) for b in best])} at η = {_fmt(lr, 2)}"
            for j, lr in enumerate(lrs) if lr > PLAIN_BAND[1]),
        wd_flat_below=_range(below.values()), wd_flat_column=_range(whole.values()),
        wd_lh_band_seeds="; ".join(
            f"{_fmt(plain['lrs'][0] * r[0], 2)} → {_fmt(plain['lrs'][-1] * r[-1], 2)} (seed {k})"
            for k, r in enumerate(plain["per_seed"])),
        wd_lh_above_seeds="; ".join(
            f"{_and([_fmt(lr * b[j], 2) if b[j] is not None else 'none' for b in best])} at "
            f"η = {_fmt(lr, 2)}" for j, lr in enumerate(lrs) if lr > PLAIN_BAND[1]),
        wd_lh_band_factor=_range([r[-1] / r[0] * plain["lr_factor"] for r in plain["per_seed"]], 2),
        wd_lower_seeds=_lower_text(grid),
        wd_lower_verdict=plots.MARKS[next(r["reproduced"] for r in grid_claims(grid)
                                          if r["claim"].startswith("plain MLP: AdamW's best λ is lower"))],
        wd_l2_moving=_moving_text(seed_slopes(grid, "adam_l2")))


def _moving_text(slopes: dict) -> str:
    """On how many seeds a best coefficient moves with eta (|slope| at least DECOUPLED)."""
    n = sum(abs(v) >= DECOUPLED for v in slopes.values() if math.isfinite(v))
    return f"{'none' if n == 0 else n} of the {len(slopes)} seeds"


def _lower_text(grid: dict) -> str:
    """Per seed, the largest best lambda above PLAIN_BAND over the least within it."""
    plain = ridge_band(grid, "adamw", PLAIN_BAND)
    lrs = np.asarray(grid["lrs"], dtype=float)
    out = []
    for k, a in _seed_accs(grid, "adamw").items():
        above = [d for lr, d in zip(lrs, best_decay_per_lr(a, grid["grids"]["adamw"]["decays"]))
                 if lr > PLAIN_BAND[1]]
        ok = above and None not in above and None not in plain["per_seed"][k]
        out.append(f"{_fmt(max(above) / min(plain['per_seed'][k]), 2) if ok else 'n/a'} (seed {k})")
    return ", ".join(out)


def live_slope_numbers(live: dict, grid: dict) -> dict:
    """The live grid's fitted slopes beside the precomputed grid's per-seed ones (glue texts):
    whether each falls inside the seeds' range ("inside") or outside it."""
    out = {}
    for kind, key in (("adam_l2", "l2"), ("adamw", "adamw")):
        live_slope = grid_summary(live, kind)["slope"]
        seeds = [v for v in seed_slopes(grid, kind).values() if not math.isnan(v)]
        inside = bool(seeds) and not math.isnan(live_slope) and min(seeds) <= live_slope <= max(seeds)
        out[f"wd_live_slope_{key}"] = slope_text(live_slope)
        out[f"wd_live_{key}_inside"] = "inside" if inside else "outside"
    return out


def invariant_numbers(grid: dict) -> dict:
    """The numbers section 3's prose quotes about the scale-invariant grid (glue texts; "n/a"
    where the grid is too small to have them). ``prod_factor``: how far the best product
    eta * lambda moves, below the largest learning rate (where it drops)."""
    s = grid_summary(grid, "adamw_invariant")
    g_inv = grid["grids"]["adamw_invariant"]
    top = max(g_inv["decays"])
    pts = [(lr, d) for lr, d in zip(grid["lrs"], s["ridge"]) if d is not None]
    inner = [(lr, d) for lr, d in pts if d < top] or [(math.nan, math.nan)]
    band = ridge_band(grid, "adamw_invariant", INVARIANT_BAND)
    lo = (band["lrs"][-1], band["ridge"][-1]) if band["lrs"] and band["ridge"][-1] else (math.nan,) * 2
    kept = pts[:-1] if len(pts) > 2 else [(math.nan, math.nan)] * 2
    prod = [lr * d for lr, d in kept]
    ridges = [best_decay_per_lr(a, g_inv["decays"]) for a in _seed_accs(grid, "adamw_invariant").values()]
    top_prods = [grid["lrs"][-1] * r[-1] for r in ridges if r[-1] is not None]
    return dict(wd_inv_slope=slope_text(s["slope"]),
                wd_inv_hi_lr=_fmt(inner[0][0], 1), wd_inv_hi=_fmt(inner[0][1], 2),
                wd_inv_lo_lr=_fmt(lo[0], 1), wd_inv_lo=_fmt(lo[1], 2),
                wd_inv_moves_min=_fmt(min(band["moves"], default=math.nan), 2),
                wd_inv_prod=_range(prod), wd_inv_prod_factor=_fmt(max(prod) / min(prod), 2),
                prod_factor=max(prod) / min(prod),
                wd_inv_prod_lrs=f"{_fmt(kept[0][0], 1)} to {_fmt(kept[-1][0], 1)}",
                wd_inv_lr_factor=_fmt(kept[-1][0] / kept[0][0], 2),
                wd_inv_lambda_factor=_fmt(kept[0][1] / kept[-1][1], 2),
                wd_inv_slope_seeds=_range([ridge_slope(band["lrs"], r) for r in band["per_seed"]]),
                wd_inv_prod_seeds=_range(_product_moves(grid, INVARIANT_BAND).values()),
                wd_inv_prod_top=_range(top_prods))


def equilibrium_numbers(equilibria) -> dict:
    """Section 2's numbers: how far the measured RMS and angle per step settle from theory
    (measured / predicted - 1 over the last quarter, in percent, per optimizer); each
    matrix's layer rotation at the end (cosine distance from its initial weights) beside the
    sum of its angles per step, and the run's length in units of tau."""
    out = {}
    for r in equilibria:
        key = "adamw" if r["optimizer"] == "adamw" else "sgd"
        for q in ("rms", "angle"):
            devs = [100 * (v[f"{q}_ratio"] - 1) for v in r["layers"].values()]
            out[f"wd_{key}_{q}_dev"] = _range(devs, 2) + "%"
        out[f"wd_{key}_verdict"] = plots.MARKS[_equilibrium_verdict(r)]
        out[f"wd_{key}_rotation"] = _range([v["rotation"] for v in r["layers"].values()], 2)
        out[f"wd_{key}_total_angle"] = _range([v["total_angle"] for v in r["layers"].values()], 2)
        out[f"wd_{key}_taus"] = _fmt(r["steps"] / r["tau"], 2)
        early = [v.get("angle_early_ratio", math.nan) for v in r["layers"].values()]
        out[f"wd_{key}_angle_early"] = _range(early, 2)
        if key == "adamw":
            out["wd_adamw_angle_start"] = _angle_start(early, _range(early, 2))
    return out


def _angle_start(early: list, text: str) -> str:
    """Section 2's sentence on the angle per step over the first quarter of tau, from the
    ratios ``early`` (measured / the predicted trajectory's, one per matrix): above the
    prediction by more than ANGLE_TOL on every matrix, the gradient's early signal explains
    it; otherwise the sentence says the angle starts near its prediction."""
    ratios = [v for v in early if v is not None and math.isfinite(v)]
    if ratios and min(ratios) > 1 + ANGLE_TOL:
        return (f"It does not start there: over the first quarter of τ AdamW's angle per step is "
                f"{text} times the predicted trajectory's, matrix by matrix. Early on the gradient "
                "carries signal and successive updates point the same way, so momentum does not "
                "average them down as it does noise.")
    return (f"It starts near it too: over the first quarter of τ AdamW's angle per step is {text} "
            f"times the predicted trajectory's, matrix by matrix (within {100 * ANGLE_TOL:.0f}% "
            "on some matrix).")


RMS_TOL, ANGLE_TOL = 0.15, 0.20  # section 2: settled RMS and angle within these of theory
SYM_FACTOR = 4.0  # exercise 2's row: SGD at eta / SYM_FACTOR and lambda * SYM_FACTOR
RELAX_BAND = (0.5, 2.0)  # the norm settles within e^-2 after this many tau steps
DECOUPLED = 0.5  # |slope| below this: a best decay that ignores eta (0), above: one that moves
BEST_MARGIN = 0.03  # "substantially better": AdamW's best cell ahead by this much, every seed
ADAMW_FAIL_GROWTH = 0.05  # AdamW's largest decay: this much further below its column's best at
#                           the largest eta than at the smallest
FLAT_BELOW = 0.5  # below eta * lambda * t = 1: the decays span under this share of the column's
#                   range of accuracy
PLAIN_MOVES = 3.0  # plain MLP: each seed's best lambda moves less than this over PLAIN_BAND
LOWER_BY = 0.5  # plain MLP: above PLAIN_BAND the best lambda is below this times the band's least
INV_FALL, INV_SLOPE = 5.0, -0.7  # scale-invariant net: each seed's best lambda falls more than
#                                  INV_FALL-fold over INVARIANT_BAND, at a slope below INV_SLOPE


def _equilibrium_verdict(r: dict) -> str:
    """Whether a run of section 2 settles at the predicted RMS (within RMS_TOL) and angle per
    step (within ANGLE_TOL) in every matrix: "yes", else "no"."""
    lay = list(r["layers"].values())
    if not lay:  # nothing settled to measure (a run far shorter than its clock, e.g. a dry run)
        return "not at this scale"
    return plots.verdict(max(abs(v["rms_ratio"] - 1) for v in lay) <= RMS_TOL
                         and max(abs(v["angle_ratio"] - 1) for v in lay) <= ANGLE_TOL)


def clock_numbers(clock: dict) -> dict:
    """Section 3's numbers about the matched runs: the factor between their learning rates
    end to end, how far apart their settled losses are, and the odd run's loss ratio."""
    lrs = [r["lr"] for r in clock["runs"] if r["matched"]]
    spread = clock_pointwise(clock)
    def pct(xs, how):
        xs = [x for x in xs if math.isfinite(x)]
        return "n/a" if not xs else f"{_fmt(100 * how(xs), 2)}%"
    early = [v for t, v in spread if 0 < t < 1]
    mid = [v for t, v in spread if 1 <= t < 2]
    late = [(v, t) for t, v in spread if t >= 2]
    def span(xs):
        lo, hi = pct(xs, min), pct(xs, max)
        return lo if lo == hi else f"{lo} to {hi}"
    return dict(wd_clock_pointwise_early=span(early), wd_clock_pointwise_mid=span(mid),
                wd_clock_pointwise_late=pct([v for v, _ in late], np.median),
                wd_clock_pointwise_max=pct([v for v, _ in late], max),
                wd_clock_pointwise_max_at=_fmt(max(late)[1], 2) if late else "n/a",
                wd_clock_lr_factor=_fmt(max(lrs) / min(lrs), 2),
                wd_clock_spread=f"{_fmt(100 * clock['spread'], 2)}%",
                wd_clock_ratio=_fmt(clock["ratio"], 3), wd_clock_contrast=_fmt(clock["contrast"], 2))


def clock_pointwise(clock: dict) -> list[tuple[float, float]]:
    """At each evaluation of the matched runs (which share eta * lambda, so their evaluations
    fall at the same eta * lambda * t): ``(eta * lambda * t, max/min - 1 of their train losses)``.
    Single evaluations jitter with the last mini-batches; ``clock["spread"]`` compares the
    second-half means."""
    hs = [(r, h) for r, h in zip(clock["runs"], clock["histories"]) if r["matched"] and len(h)]
    if len(hs) < 2:
        return []
    n = min(len(h) for _, h in hs)
    r0, h0 = hs[0]
    out = []
    for i in range(n):
        vals = [float(h["train_loss"][i]) for _, h in hs]
        if min(vals) > 0 and all(math.isfinite(v) for v in vals):
            out.append((float(h0.steps[i] * r0["lr"] * r0["weight_decay"]), max(vals) / min(vals) - 1))
    return out


_NUMBERS = {"decoupling": decoupling_numbers, "live_slope": live_slope_numbers,
            "equilibrium": equilibrium_numbers, "clock": clock_numbers,
            "invariant": invariant_numbers, "window": window_numbers,
            "spectrum": spectrum_numbers}


def numbers(section: str, *results) -> dict:
    """The numbers the prose of ``section`` quotes, as glue texts, from the page's results:
    ``numbers("decoupling", grid)`` and ``numbers("invariant", grid)`` (the precomputed
    grids of sections 1 and 3), ``numbers("live_slope", live, grid)`` (the live grid beside
    them), ``numbers("equilibrium", equilibria)``, ``numbers("clock", clock)``,
    ``numbers("window", window)``, ``numbers("spectrum", spectrum)``."""
    if section not in _NUMBERS:
        raise ValueError(f"no numbers for section {section!r}; choose one of {list(_NUMBERS)}")
    return _NUMBERS[section](*results)


def _seed_accs(payload: dict, kind: str) -> dict:
    """``{seed: final test accuracy [decay][lr]}`` of grid ``kind``, one array per seed."""
    g = payload["grids"][kind]
    return dict(enumerate(np.asarray(g["test_acc_seeds"], dtype=float)))


def _shortfalls(l2, w) -> tuple[float, float, float]:
    """From final accuracies [decay][lr] of Adam + L2 and AdamW: (how far Adam + L2's largest
    decay falls below its column's best, at least, over the learning rates; AdamW's shortfall
    at the smallest and at the largest learning rate)."""
    gap = np.nanmax(w, 0) - w[-1]
    return float(np.min(np.nanmax(l2, 0) - l2[-1])), float(gap[0]), float(gap[-1])


def _largest_fails(payload: dict) -> tuple[float, float, float]:
    """:func:`_shortfalls` of a payload's seed-averaged grids (a live grid: its one seed)."""
    return _shortfalls(grid_array(payload, "adam_l2")[:, :, -1],
                       grid_array(payload, "adamw")[:, :, -1])


def _below_line(payload: dict) -> tuple[dict, dict, dict]:
    """On each seed's AdamW grid, the range of final test accuracy over the decays below the
    line eta * lambda * t = 1 (where decay has not had time to act), per learning rate with
    two or more such decays: ``({seed: largest such range / its whole column's range},
    {seed: largest such range}, {seed: smallest range of a whole column})``."""
    g = payload["grids"]["adamw"]
    below = np.outer(g["decays"], g["lrs"]) * payload["eval_steps"][-1] < 1
    cols = [j for j in range(below.shape[1]) if below[:, j].sum() > 1]
    ratio, inside, whole = {}, {}, {}
    for s, acc in _seed_accs(payload, "adamw").items():
        ranges = [(float(np.ptp(acc[below[:, j], j])), float(np.ptp(acc[:, j]))) for j in cols]
        ratio[s] = max((a / b for a, b in ranges if b > 0), default=math.nan)
        inside[s] = max((a for a, _ in ranges), default=math.nan)
        whole[s] = float(np.min(np.ptp(acc, 0)))
    return ratio, inside, whole


def _product_moves(payload: dict, band) -> dict:
    """``{seed: factor}``: on each seed's scale-invariant grid, how far the best product
    eta * lambda moves over the learning rates of ``band`` (inf where a seed has no best decay
    at one of them)."""
    g = payload["grids"]["adamw_invariant"]
    lrs = np.asarray(g["lrs"], dtype=float)
    cols = [j for j, lr in enumerate(lrs) if band[0] <= lr <= band[1]]
    out = {}
    for s, acc in _seed_accs(payload, "adamw_invariant").items():
        ridge = best_decay_per_lr(acc, g["decays"])
        prod = [lrs[j] * ridge[j] for j in cols if ridge[j] is not None]
        out[s] = max(prod) / min(prod) if len(prod) == len(cols) and prod else math.inf
    return out


def grid_claims(grid: dict) -> list[dict]:
    """The claims rows that rest on the precomputed grids of sections 1 and 3 alone, each
    judged on every seed of the grid (its final accuracies, ``test_acc_seeds``)."""
    rows = []
    if not all(k in grid["grids"] for k in DECOUPLING):
        return rows
    seeds = list(range(len(grid["grids"]["adamw"]["test_acc_seeds"])))
    s = decoupling_summary(grid)
    per = dict(zip(seeds, s["per_seed"] or []))
    text, v = plots.judged(per, {k: m >= BEST_MARGIN for k, m in per.items()}, _signed)
    rows.append(plots.claim(
        "AdamW generalizes substantially better than Adam + L2 (best cell of each learning-rate "
        "× decay grid)", _LH,
        f"best AdamW minus best Adam + L2, per seed: {text}; seed-averaged grids: "
        f"{_n(s['best']['adamw']['acc'])} vs {_n(s['best']['adam_l2']['acc'])}",
        v, asserted=False,
        control="Adam + L2's best cell",
        window=f"AdamW ahead by {BEST_MARGIN:g} or more, every seed",
        seeds=seeds))
    l2s, ws = _seed_accs(grid, "adam_l2"), _seed_accs(grid, "adamw")
    falls = {k: _shortfalls(l2s[k], ws[k]) for k in seeds}
    l2_gap = {k: f[0] for k, f in falls.items()}
    growth = {k: f[2] - f[1] for k, f in falls.items()}
    text, v = plots.judged(l2_gap, {k: l2_gap[k] > L2_FAIL and growth[k] > ADAMW_FAIL_GROWTH
                                    for k in seeds}, lambda x: _n(x, 2))
    rows.append(plots.claim(
        "Adam + L2's largest penalty fails at every learning rate (a horizontal band); AdamW's "
        "largest decay fails more the larger η is", _LH,
        f"Adam + L2's largest λ, least shortfall below its column's best over the η: {text}; "
        f"AdamW's largest λ, shortfall at the largest η minus at the smallest: "
        f"{plots.spread(growth, _signed)}",
        v, control="the best decay of each column; AdamW's shortfall at the smallest η",
        window=f"Adam + L2: more than {L2_FAIL:g} at every η; AdamW: {ADAMW_FAIL_GROWTH:g} more "
               "at the largest η than at the smallest, every seed", seeds=seeds))
    ratio, inside, whole = _below_line(grid)
    text, v = plots.judged(ratio, {k: r < FLAT_BELOW for k, r in ratio.items()},
                           lambda x: _n(x, 2))
    rows.append(plots.claim(
        "below the line ηλt = 1 (AdamW, plain MLP) a column's accuracy hardly depends on λ: "
        "the decay has not had time to act",
        "How to set AdamW's weight decay as you scale model and dataset size",
        f"range of test accuracy over the decays below the line / over the whole column, "
        f"largest over the η: {text}; the range below the line "
        f"{plots.spread(inside, lambda x: _n(x, 2))}",
        v, control=f"the whole column's range (smallest over the η: "
                   f"{plots.spread(whole, lambda x: _n(x, 2))})",
        window=f"every η with two or more decays below the line, after "
               f"{grid['eval_steps'][-1]:,} steps; below {FLAT_BELOW:g} of the column's range",
        seeds=seeds))
    lh = {k: x + 1 for k, x in seed_slopes(grid, "adamw").items()}  # log(eta lambda) vs log eta
    l2 = seed_slopes(grid, "adam_l2")
    text, v = plots.judged(lh, {k: abs(lh[k]) < DECOUPLED and abs(l2[k]) >= DECOUPLED
                                for k in seeds}, lambda x: f"{x:+.2f}")
    rows.append(plots.claim(
        "with AdamW the best decay (Loshchilov & Hutter's, ηλ) does not move with the learning "
        "rate, as Adam + L2's best L2 coefficient does", _LH,
        f"slope of log(best ηλ) against log η, AdamW: {text}", v, asserted=False,
        control=f"Adam + L2's best L2 coefficient, slope {plots.spread(l2, lambda x: f'{x:+.2f}')}"
                f" (must move: |slope| ≥ {DECOUPLED:g})",
        window=f"|slope| below {DECOUPLED:g} (0: decoupled, −1 or +1: moving with η); all "
               f"{len(grid['lrs'])} learning rates", seeds=seeds))
    plain = ridge_band(grid, "adamw", PLAIN_BAND)
    lrs = np.asarray(grid["lrs"], dtype=float)
    above = {k: [d for lr, d in zip(lrs, best_decay_per_lr(a, grid["grids"]["adamw"]["decays"]))
                 if lr > PLAIN_BAND[1]] for k, a in ws.items()}
    lower = {k: (max(above[k]) / min(plain["per_seed"][k])
                 if above[k] and None not in above[k] and None not in plain["per_seed"][k]
                 else math.inf) for k in seeds}
    moves = dict(zip(seeds, plain["moves"]))
    text, v = plots.judged(moves, {k: moves[k] < PLAIN_MOVES for k in seeds},
                           lambda x: _fmt(x, 2) + "×")
    rows.append(plots.claim(
        f"plain MLP, η from {_fmt(plain['lrs'][0], 1)} to {_fmt(plain['lrs'][-1], 1)}: AdamW's "
        "best λ (PyTorch's) hardly moves with η, on every seed", _LH,
        f"best λ moves by {text} while η moves {_fmt(plain['lr_factor'], 2)}×",
        v, control=f"best λ ∝ 1/η: a {_fmt(plain['lr_factor'], 2)}× move",
        window=f"η from {_fmt(plain['lrs'][0], 1)} to {_fmt(plain['lrs'][-1], 1)}: moves under "
               f"{PLAIN_MOVES:g}×", seeds=seeds))
    text, v = plots.judged(lower, {k: lower[k] < LOWER_BY for k in seeds}, lambda x: _fmt(x, 2))
    rows.append(plots.claim(
        f"plain MLP: AdamW's best λ is lower above η = {_fmt(plain['lrs'][-1], 1)} than anywhere "
        "within that band", _LH,
        f"largest best λ above that η over the smallest within it: {text}", v, asserted=False,
        control="the best λ within the band (ratio 1)",
        window=f"below {LOWER_BY:g}, every seed", seeds=seeds))
    if "adamw_invariant" in grid["grids"]:
        inv = ridge_band(grid, "adamw_invariant", INVARIANT_BAND)
        cols = [j for j, lr in enumerate(lrs) if INVARIANT_BAND[0] <= lr <= INVARIANT_BAND[1]]
        fall = dict(zip(seeds, inv["moves"]))
        slope = {k: ridge_slope(lrs[cols], [r for r in inv["per_seed"][k]]) for k in seeds}
        text, v = plots.judged(fall, {k: fall[k] > INV_FALL and slope[k] < INV_SLOPE
                                      for k in seeds}, lambda x: _fmt(x, 2) + "×")
        rows.append(plots.claim(
            f"scale-invariant net, η from {_fmt(inv['lrs'][0], 1)} to {_fmt(inv['lrs'][-1], 1)}: "
            "the best λ falls with η, about as 1/η or faster (ηλ, not λ, is the variable), on "
            "every seed", "Efficient Hyperparameter Tuning via Trajectory Invariance Principle; "
            + _LH,
            f"best λ falls by {text} while η grows {_fmt(inv['lr_factor'], 2)}×; slope of "
            f"log(best λ) against log η {plots.spread(slope, slope_text)}; the best ηλ moves "
            f"{plots.spread(_product_moves(grid, INVARIANT_BAND), lambda x: _fmt(x, 2) + '×')}",
            v, control="a best λ free of η (slope 0, no fall); the plain MLP's moves under "
                       f"{PLAIN_MOVES:g}×",
            window=f"each seed's fall over {INV_FALL:g}× and slope below {slope_text(INV_SLOPE)} "
                   "(1/η: −1)", seeds=seeds))
    return rows


def published_claims() -> list[dict]:
    """The claims rows of the published page that rest on ``data/`` alone: those of the
    precomputed grids (:func:`grid_claims`), as the cpu build shows them."""
    from .. import results

    grid, _ = results.load("weight_decay_grid")
    return grid_claims(grid)


def symmetry_config(profile: str | None = None):
    """Section 2's SGD config at ``profile`` scale with eta / SYM_FACTOR and lambda *
    SYM_FACTOR: exercise 2's run, and the one :func:`symmetry_claims` judges."""
    import dataclasses

    base = next(c for c in equilibrium_configs(profile) if c.optimizer == "sgd")
    return dataclasses.replace(base, lr=base.lr / SYM_FACTOR,
                               weight_decay=base.weight_decay * SYM_FACTOR)


def claim_runs(profile: str | None, seeds, **page) -> dict:
    """The live experiments the claims judge, on every seed of ``seeds`` at ``profile`` scale:
    ``{"live": {seed: grid}, "equilibria": {seed: [runs]}, "symmetry": {seed: run}, "clock": ...,
    "window": ..., "spectrum": ...}``.
    A result the page already ran for its seed (the first of ``seeds``) is reused."""
    runs = dict(live=lambda s: run_decoupling(live_grid_config(profile), s, bars=False),
                equilibria=lambda s: [run_equilibrium(c, s, bars=False)
                                      for c in equilibrium_configs(profile)],
                symmetry=lambda s: run_equilibrium(symmetry_config(profile), s, bars=False),
                clock=lambda s: run_clock(ClockConfig.for_profile(profile), s, bars=False),
                window=lambda s: run_window(WindowConfig.for_profile(profile), s),
                spectrum=lambda s: run_spectrum(SpectrumConfig.for_profile(profile), s,
                                                bars=False))
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"claim_runs needs distinct seeds, got {seeds}")
    if set(page) - set(runs):
        raise ValueError(f"claim_runs: unknown result {sorted(set(page) - set(runs))}; "
                         f"give some of {list(runs)}")
    return {k: {s: page[k] if s == seeds[0] and k in page else run(s) for s in seeds}
            for k, run in runs.items()}


def symmetry_claims(equilibria: dict, symmetry: dict) -> list[dict]:
    """Exercise 2's test as a row: section 2's SGD run against one with eta / SYM_FACTOR and
    lambda * SYM_FACTOR (``symmetry``: ``{seed: run_equilibrium}``), per matrix the ratio of
    their settled norms (predicted sqrt(SYM_FACTOR), with no measured gradient in it) and of
    their angles per step (predicted 1)."""
    seeds = [s for s in symmetry if s in equilibria]
    norm, angle = {}, {}
    for s in seeds:
        base = next(r for r in equilibria[s] if r["optimizer"] == "sgd")
        new = symmetry[s]
        if not base["layers"] or not new["layers"]:
            return []
        norm[s] = [base["layers"][n]["norm"] / v["norm"] for n, v in new["layers"].items()]
        angle[s] = [v["angle"] / base["layers"][n]["angle"] for n, v in new["layers"].items()]
    if not seeds:
        return []
    pred = math.sqrt(SYM_FACTOR)
    worst = {s: max(max(abs(x / pred - 1) for x in norm[s]), max(abs(x - 1) for x in angle[s]))
             for s in seeds}
    text, v = plots.judged({s: 100 * w for s, w in worst.items()},
                           {s: max(abs(x / pred - 1) for x in norm[s]) <= RMS_TOL
                            and max(abs(x - 1) for x in angle[s]) <= ANGLE_TOL for s in seeds},
                           lambda x: f"{x:.0f}%")
    return [plots.claim(
        f"SGD at η/{SYM_FACTOR:g} and λ·{SYM_FACTOR:g} (the same ηλ): the settled norms are "
        f"√{SYM_FACTOR:g} = {pred:g} times smaller, the angle per step the same (no measured "
        "gradient in the prediction)", _EQ,
        f"norm ratios {_range([x for s in seeds for x in norm[s]])}, angle ratios "
        f"{_range([x for s in seeds for x in angle[s]])} over the matrices and seeds; largest "
        f"deviation from the prediction: {text}", v,
        control=f"an equilibrium set by ηλ alone: norm ratio 1, off by {100 * (1 - 1 / pred):.0f}%",
        window=f"last quarter; norms within {100 * RMS_TOL:.0f}% of {pred:g}, angles within "
               f"{100 * ANGLE_TOL:.0f}% of 1, every matrix", seeds=seeds)]


def page_claims(grid: dict | None = None, live=None, equilibria=None, clock=None,
           spectrum=None, window=None, symmetry=None) -> list[dict]:
    """The chapter's claims table: ``grid`` is the precomputed payload (its rows are
    :func:`grid_claims`); ``live``, ``equilibria`` (a list of runs per seed),
    ``clock``, ``window`` (:func:`~.window.window_claims`) and ``spectrum`` are the page's
    live runs as ``{seed: result}``
    (:func:`claim_runs`); any may be left out. Rows that the prose states as facts are
    asserted; the others show their verdict, which the prose glues."""
    rows = grid_claims(grid) if grid is not None else []
    if live is not None:
        live = plots.per_seed(live, "live", "wdc.claim_runs")
        seeds = list(live)
        if all(k in g["grids"] for g in live.values() for k in DECOUPLING):
            gap = {s: _largest_fails(g)[0] for s, g in live.items()}
            text, v = plots.judged(gap, {s: x > L2_FAIL for s, x in gap.items()})
            rows.append(plots.claim(
                "Adam + L2's largest penalty fails at every learning rate (live grid)", _LH,
                f"Adam + L2's largest λ, least shortfall below its column's best over the "
                f"learning rates: {text}", v, control="the best decay of each column",
                window=f"a shortfall of more than {L2_FAIL:g} at every η", seeds=seeds))
    if equilibria is not None:
        equilibria = plots.per_seed(equilibria, "equilibria", "wdc.claim_runs")
        seeds = list(equilibria)
        first = equilibria[seeds[0]]
        for i, r0 in enumerate(first):
            runs = {s: e[i] for s, e in equilibria.items() if e[i]["layers"]}
            if len(runs) < len(seeds):
                continue
            lay = {s: list(r["layers"].values()) for s, r in runs.items()}
            worst = {s: max(max(abs(v["rms_ratio"] - 1), abs(v["angle_ratio"] - 1))
                            for v in ls) for s, ls in lay.items()}
            if r0["optimizer"] == "adamw":
                claim = "AdamW: RMS → √(η/2λ) per element; angle → √(2ηλ(1−β₁)/(1+β₁)) per step"
                given = ""
                spread = {s: max(v["rms"] for v in ls) / min(v["rms"] for v in ls)
                          for s, ls in lay.items()}
                spread0 = {s: max(v["rms0"] for v in ls) / min(v["rms0"] for v in ls)
                           for s, ls in lay.items()}
                text, v = plots.judged(spread, {s: spread[s] < SAME_RMS and spread[s] < spread0[s]
                                          for s in lay})
                rows.append(plots.claim(
                    "AdamW: the scale-invariant matrices, started at different scales, settle "
                    "at nearly the same per-element RMS", _EQ,
                    f"largest/smallest RMS of the {len(lay[seeds[0]])} matrices, last quarter: "
                    f"{text}", v, control=f"the same at initialization: {plots.spread(spread0)}",
                    window=f"below {SAME_RMS:g} and below the start's", seeds=seeds))
            else:
                claim = (f"{LABELS[r0['optimizer']]}: ‖W‖⁴ → η‖g̃‖²/(2λ(1−μ)); "
                         "angle → √(2ηλ/(1+μ)) per step")
                given = (" (norm predicted from the measured ‖g̃‖: once the norm is stationary "
                         "this follows from the recursion whatever λ is, so the row is shown, "
                         "not asserted; the η/4, λ·4 row below tests it)")
            verdicts = {s: _equilibrium_verdict(r) == "yes" for s, r in runs.items()}
            text, v = plots.judged({s: 100 * w for s, w in worst.items()}, verdicts,
                             lambda x: f"{x:.0f}%")
            rows.append(plots.claim(
                claim, _EQ, f"largest deviation of measured from predicted RMS or angle, last "
                f"quarter, {len(lay[seeds[0]])} matrices{given}: {text}", v,
                asserted=False, control="the predictions of the table above",
                window=f"RMS within {100 * RMS_TOL:.0f}%, angle within {100 * ANGLE_TOL:.0f}%, "
                       "every matrix", seeds=seeds))
            if r0["optimizer"] == "adamw":
                relax = {s: [x["relax_steps"] for x in ls] for s, ls in lay.items()}
                rel = {s: max((x or np.inf) / runs[s]["tau"] for x in xs)
                       for s, xs in relax.items()}
                text, v = plots.judged(rel, {s: all(x is not None and RELAX_BAND[0] * runs[s]["tau"]
                                              <= x <= RELAX_BAND[1] * runs[s]["tau"]
                                              for x in xs) for s, xs in relax.items()},
                                 lambda x: f"{x:.2f}τ")
                rows.append(plots.claim(
                    "the norm reaches equilibrium in about τ = 1/(ηλ) steps",
                    "Rotational Equilibrium",
                    f"RMS² within e⁻² of equilibrium, slowest matrix: {text}; "
                    f"τ = {r0['tau']:,.0f}", v, control="τ = 1/(ηλ)",
                    window=f"{RELAX_BAND[0]:g}τ to {RELAX_BAND[1]:g}τ, every matrix",
                    seeds=seeds))
    if symmetry is not None and equilibria is not None:
        symmetry = plots.per_seed(symmetry, "symmetry", "wdc.claim_runs")
        rows += symmetry_claims(equilibria, symmetry)
    if clock is not None:
        clock = plots.per_seed(clock, "clock", "wdc.claim_runs")
        seeds = list(clock)
        c0 = clock[seeds[0]]
        spread = {s: 100 * c["spread"] for s, c in clock.items()}
        text, v = plots.judged(spread, {s: c["spread"] <= CLOCK_SPREAD
                                  and abs(c["ratio"] - 1) > CLOCK_CONTRAST
                                  for s, c in clock.items()}, lambda x: f"{x:.1f}%")
        rows.append(plots.claim(
            "settled loss levels agree when η·λ is held fixed (the settled level of trajectory "
            "invariance; the pointwise curves: see the clock section)",
            "Efficient Hyperparameter Tuning via Trajectory Invariance Principle",
            f"settled train loss of the 3 runs at ηλ = {_n(c0['product'], 2)}, spread: {text}",
            v, control=f"{c0['contrast']:g}× the product: "
                       f"{plots.spread({s: c['ratio'] for s, c in clock.items()}, lambda x: f'{x:.2f}×')}"
                       " their loss "
                       f"(must differ by more than {100 * CLOCK_CONTRAST:.0f}%)",
            window=f"within {100 * CLOCK_SPREAD:.0f}%, the second half of training",
            seeds=seeds))
    if window is not None:
        rows += window_claims(window)
    if spectrum is not None:
        rows += spectrum_claims(plots.per_seed(spectrum, "spectrum", "wdc.claim_runs"))
    return rows
