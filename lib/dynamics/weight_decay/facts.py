"""Weight decay, the facts: the numbers the page's prose glues, one section at a time.

Every number the prose quotes about a run comes from :func:`numbers` (``numbers(section,
*results)``, as glue texts), read from the page's results: the precomputed grids of sections 1
and 3, and the live runs of sections 2 to 4. The verdicts the prose quotes are the rows'
(:mod:`.claims`), and so are the thresholds.
"""
from __future__ import annotations

import math

import numpy as np

from .. import evidence, plots
from ..book import and_list
from .experiments import (DECOUPLING, Clock, Decoupling, Equilibrium, Spectrum, decoupling_summary,
                          grid_summary)
from .figures import NULL_DRAWS, flat_columns, slope_text
from .science import best_decay_per_lr, ridge_slope
from .spectra import tail_fit
from .window import window_numbers
from .claims import (ANGLE_TOL, EDGE, EQ_CONTROL, L2_FAIL, L2_FAILS, PLAIN_FLAT, DECOUPLED, HEAVY, INVARIANT_BAND, PLAIN_BAND, TAIL_TESTS,
                     _band_move, _GridSeed, _edge_note, _side_ratio, _ties_text, _fmt, _least_fall, _least_shortfall,
                     _alpha, _lower_above, _p, _product_moves, _shortfall_growth, _spectrum_checks,
                     _ties, grid_claims, spectrum_claims, tied_decays_per_lr)

__all__ = ["ridge_band", "seed_slopes", "clock_pointwise", "decoupling_numbers",
           "live_slope_numbers", "invariant_numbers", "equilibrium_numbers", "clock_numbers",
           "spectrum_numbers", "claims_numbers", "numbers"]


def _range(values, digits: int = 2) -> str:
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return "n/a"
    lo, hi = min(values), max(values)
    return _fmt(lo, digits) if _fmt(lo, digits) == _fmt(hi, digits) else \
        f"{_fmt(lo, digits)} to {_fmt(hi, digits)}"


def ridge_band(payload: Decoupling, kind: str, band) -> dict:
    """The best decay of grid ``kind`` at the learning rates inside ``band`` (lo, hi): on the
    seed-averaged grid (``ridge``) and on each seed (``per_seed``), and per seed the factor
    between the largest and the smallest best decay in the band (``moves``; inf where a seed
    has no best decay at some learning rate of the band)."""
    g = payload.grids[kind]
    lrs = np.asarray(g.lrs, dtype=float)
    cols = [j for j, lr in enumerate(lrs) if band[0] <= lr <= band[1]]
    mean = grid_summary(payload, kind)["ridge"]
    per_seed = [[best_decay_per_lr(acc, g.decays)[j] for j in cols] for acc in g.seed_accs().values()]
    moves = [max(r) / min(r) if all(v is not None for v in r) else math.inf for r in per_seed]
    return dict(lrs=lrs[cols].tolist(), ridge=[mean[j] for j in cols], per_seed=per_seed,
                moves=moves, lr_factor=float(lrs[cols[-1]] / lrs[cols[0]]) if cols else math.nan)


def seed_slopes(payload: Decoupling, kind: str) -> dict:
    """``{seed: slope}``: on each seed's grid, the slope of log(best PyTorch decay) against
    log(eta) (:func:`~.science.ridge_slope`; 0 when the best lambda ignores eta, -1 when the
    best eta * lambda does)."""
    g = payload.grids[kind]
    return {s: ridge_slope(g.lrs, best_decay_per_lr(acc, g.decays)) for s, acc in g.seed_accs().items()}


def _lh_band_said(least: list) -> str:
    """What the ties allow of Loshchilov & Hutter's product over the band: with every seed's
    least growth above 1 (at the grid's precision) a fixed product is ruled out, and what the
    grid leaves open is a fixed PyTorch λ; else neither is settled."""
    if least and min(float(f"{v:.3g}") for v in least) > 1:
        return ("so the ties rule out a fixed product on every seed, while they leave λ itself free "
                "to move: the dots suggest a fixed PyTorch λ, and the grid does not establish it")
    return ("the dots suggest a fixed PyTorch λ rather than a fixed product while ηλ is small, "
            "and the grid does not establish it")


def _band_control(row: dict) -> str:
    """What the band row's control (AdamW's largest decay) did, from the numbers the row keeps
    and the engine's verdict: its least shortfall per seed against the row's bar (L2_FAIL), and
    how far that is from the bar against the control's seeds' spread."""
    e = row["evidence"][0]
    test = evidence.Test(**e["test"])
    miss, spread = evidence.control_miss(test, e["control"])
    said = f"falls short of its column's best too, at its closest by {_range(e['control'].values())} seed by seed"
    if e["verdict"] == "does not discriminate":  # the reason the engine gave
        return f"{said}: {evidence.verdict_of(test, e['treatment'], e['control'], e['noise'])[1]}"
    return (f"{said}, less than the row's bar of {L2_FAIL:g}, so it fails the row's test, by "
            f"{miss:.3f} against its seeds' spread of {spread:.3f}: a slim miss, which another "
            "regeneration of the grid can turn")


def decoupling_numbers(grid: Decoupling) -> dict:
    """The numbers section 1's prose quotes about the precomputed grids, as glue texts:
    Adam + L2's and AdamW's ridges, the slopes fitted through them, Loshchilov & Hutter's
    best decay eta * lambda at both ends, and the best cells with AdamW's margin per seed."""
    sums = {k: grid_summary(grid, k) for k in DECOUPLING}
    lrs = grid.lrs
    l2 = [d for d in sums["adam_l2"]["ridge"] if d is not None]
    plain = ridge_band(grid, "adamw", PLAIN_BAND)
    dec = decoupling_summary(grid)
    best = [best_decay_per_lr(a, grid.grids["adamw"].decays)
            for a in grid.grids["adamw"].seed_accs().values()]
    flat = _below_line(grid)
    rows = grid_claims(grid)
    v = plots.verdicts(rows, best="AdamW generalizes", lh="with AdamW the best decay",
                       lower="plain MLP: AdamW's best λ is lower",
                       grows="AdamW's largest decay fails more", inv="scale-invariant net, η from",
                       band="Adam + L2's largest penalty", flat="plain MLP, η from",
                       below="below the line ηλt = 1")
    def per_kind(f, kind):  # {seed: f(that seed's grid of kind)}
        return {k: f(_GridSeed((grid, k, kind))) for k in grid.grids[kind].seed_accs()}

    band_ties = per_kind(lambda r: _ties(r, PLAIN_BAND), "adamw")

    def short(kind):  # {eta: {seed: the largest decay's shortfall below its column's best}}
        gaps = {k: np.nanmax(a, 0) - a[-1] for k, a in grid.grids[kind].seed_accs().items()}
        return {lr: {k: float(gap[j]) for k, gap in gaps.items()} for j, lr in enumerate(lrs)}

    growth, growth0 = per_kind(_shortfall_growth, "adamw"), per_kind(lambda r: _shortfall_growth(r, 0), "adamw")
    inv_seeds = per_kind(lambda r: r, "adamw_invariant") if "adamw_invariant" in grid.grids else {}
    inv = {k: _band_move(r, INVARIANT_BAND) for k, r in inv_seeds.items()}
    return dict(
        wd_l2_ridge=_range(l2), wd_adamw_ridge=_range(plain["ridge"]),
        wd_adamw_ridge_seeds=_range([v for r in plain["per_seed"] for v in r]),
        wd_adamw_moves=_fmt(max(plain["moves"])),
        wd_slope_l2=slope_text(sums["adam_l2"]["slope"]), wd_slope_adamw=slope_text(sums["adamw"]["slope"]),
        wd_best_adamw=_fmt(dec["best"]["adamw"]["acc"], 3),
        wd_best_l2=_fmt(dec["best"]["adam_l2"]["acc"], 3),
        wd_margins=_range(dec["per_seed"], 2) if dec["per_seed"] else "n/a",
        wd_best_verdict=plots.MARKS[v["best"]],
        wd_slope_l2_seeds=plots.spread(seed_slopes(grid, "adam_l2"), slope_text),
        wd_slope_adamw_seeds=plots.spread(seed_slopes(grid, "adamw"), slope_text),
        wd_lh_verdict=plots.MARKS[v["lh"]],
        wd_adamw_above_seeds="; ".join(
            f"{and_list([_fmt(b[j], 2) for b in best])} at η = {_fmt(lr, 2)}"
            for j, lr in enumerate(lrs) if lr > PLAIN_BAND[1]),
        wd_flat_below=_range([x for b, _ in flat.values() for x in b.values()]),
        wd_flat_above=_by_lr({lr: a for lr, (_, a) in flat.items()}),
        wd_flat_lrs=f"{_fmt(min(flat), 2)} to {_fmt(max(flat), 2)}" if flat else "n/a",
        wd_flat_verdict=plots.MARKS[v["below"]],
        wd_lh_band_seeds="; ".join(
            f"{_fmt(plain['lrs'][0] * r[0], 2)} → {_fmt(plain['lrs'][-1] * r[-1], 2)} (seed {k})"
            for k, r in enumerate(plain["per_seed"])),
        wd_lh_above_seeds="; ".join(
            f"{and_list([_fmt(lr * b[j], 2) if b[j] is not None else 'none' for b in best])} at "
            f"η = {_fmt(lr, 2)}" for j, lr in enumerate(lrs) if lr > PLAIN_BAND[1]),
        wd_lh_band_factor=_range([r[-1] / r[0] * plain["lr_factor"] for r in plain["per_seed"]], 2),
        wd_adamw_tied=_tied_text(grid, "adamw", [lr for lr in lrs if lr > PLAIN_BAND[1]]),
        wd_lower_seeds=_lower_text(grid),
        wd_lower_verdict=plots.MARKS[v["lower"]],
        wd_l2_moving=_moving_text(seed_slopes(grid, "adam_l2")),
        wd_adamw_growth=_range(growth.values()), wd_adamw_growth_small=_range(growth0.values()),
        wd_adamw_grows_verdict=plots.MARKS[v["grows"]],
        wd_inv_fall=_range(inv.values()), wd_inv_fall_verdict=plots.MARKS[v["inv"]],
        wd_inv_least_fall=_range([_least_fall(r) for r in inv_seeds.values()]),
        wd_inv_ties=_ties_text(inv_seeds, INVARIANT_BAND),
        wd_l2_fail=_range(per_kind(_least_shortfall, "adam_l2").values()),
        wd_adamw_fail=_range(per_kind(_least_shortfall, "adamw").values()),
        wd_l2_band_verdict=plots.MARKS[v["band"]], wd_plain_flat_verdict=plots.MARKS[v["flat"]],
        **_plain_flat_numbers(next(r for r in rows if r["claim"].startswith(PLAIN_FLAT.statement))),
        wd_dark_cell=_dark_cell(grid), wd_flat_first=_line_first(grid),
        wd_l2_band_control=_band_control(next(r for r in rows if r["claim"].startswith(L2_FAILS.statement))),
        wd_band_ties=_ties_text(per_kind(lambda r: r, "adamw"), PLAIN_BAND),
        wd_lh_band_said=_lh_band_said([t[-1][0] / t[0][1] * plain["lr_factor"]
                                       for t in band_ties.values() if t and None not in t]),
        wd_lh_band_least=", ".join(
            f"{_fmt(t[-1][0] / t[0][1] * plain['lr_factor'], 2)}× (seed {k})"
            for k, t in band_ties.items() if t and None not in t) or "n/a",
        wd_l2_short_by_lr=_by_lr(short("adam_l2")), wd_adamw_short_by_lr=_by_lr(short("adamw")),
        wd_first_best=_range([float(np.nanmax(a[:, 0])) for k in DECOUPLING
                              for a in grid.grids[k].seed_accs().values()]),
        wd_later_best=_range([float(np.nanmax(a[:, j])) for k in DECOUPLING
                              for a in grid.grids[k].seed_accs().values() for j in range(1, len(lrs))]))


def _plain_flat_numbers(row: dict) -> dict:
    """The plain-MLP row's own numbers (:data:`~.claims.PLAIN_FLAT`, read by the tie rule): the
    least move each seed's ties allow, its control's (the scale-invariant net's), the row's bar,
    and what its verdict says of the two networks, from the seeds its control passes on."""
    e = row["evidence"][0]
    test = evidence.Test(**e["test"])
    fooled = [str(s) for s, x in e["control"].items() if x is not None and test.passes(x)]
    if row["reproduced"] == "yes":
        said = "its control's ties rule out so small a move on every seed, so the test tells the two networks apart"
    elif fooled:
        said = (f"its control's ties allow so small a move too, on seed{'s' * (len(fooled) > 1)} "
                f"{and_list(fooled)}, so the test does not tell the two networks apart")
    else:
        said = "and the verdict rests on the plain MLP's own ties (the row gives them)"
    fmt = lambda xs: _range([x for x in xs.values() if x is not None], 2) + "×"  # noqa: E731
    return dict(wd_plain_least_move=fmt(e["treatment"]), wd_inv_least_move=fmt(e["control"]),
                wd_plain_moves_bar=f"{test.threshold:g}", wd_plain_flat_control=said)


def _dark_cell(grid: Decoupling) -> str:
    """Section 1's sentence on the AdamW grid's cell that one seed darkens most (where the
    lowest seed falls furthest below the mean of the others): where it is, its seed-averaged
    accuracy beside its neighbours' (up, down, left, right), and whether each other seed dips
    there too (below every neighbour of its own): a single seed's only where none does."""
    accs = grid.grids["adamw"].seed_accs()
    st = np.stack(list(accs.values()))
    gap = (st.sum(0) - st.min(0)) / (len(st) - 1) - st.min(0)  # the others' mean - the lowest
    i, j = np.unravel_index(int(np.nanargmax(gap)), gap.shape)
    cells = [(p, q) for p, q in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1))
             if 0 <= p < gap.shape[0] and 0 <= q < gap.shape[1]]
    a = np.nanmean(st, 0)
    vals = {k: float(v[i, j]) for k, v in accs.items()}
    low = min(vals, key=vals.get)
    own = {k: [float(v[c]) for c in cells] for k, v in accs.items()}  # each seed's own neighbours
    dips = [k for k in vals if k != low and vals[k] < min(own[k])]
    others = [k for k in vals if k != low]
    said = lambda k: f"{_fmt(vals[k], 3)} against its neighbours' {_range(own[k], 3)} (seed {k})"  # noqa: E731
    head = (f"at η = {_fmt(grid.lrs[j], 2)}, λ = {_fmt(grid.grids['adamw'].decays[i], 2)} "
            f"({_fmt(a[i, j], 3)} seed-averaged, its neighbours {_range([a[c] for c in cells], 3)})")
    if not dips:
        return (f"One dark cell of the figure is a single seed's: the cell {head} comes from "
                f"seed {low}, {said(low)}; the other seeds do not dip there: "
                + and_list([said(k) for k in others]) + ".")
    rest = [k for k in others if k not in dips]
    return (f"One dark cell of the figure, {head}, is darkest on seed {low}, {said(low)}, and "
            f"seed{'s' * (len(dips) > 1)} {and_list([str(k) for k in dips])} "
            f"dip{'s' * (len(dips) == 1)} there too: " + and_list([said(k) for k in dips])
            + (f"; seed{'s' * (len(rest) > 1)} {and_list([str(k) for k in rest])} "
               f"{'does' if len(rest) == 1 else 'do'} not: " + and_list([said(k) for k in rest])
               if rest else "") + ".")


def _line_first(grid: Decoupling) -> str:
    """Where the smallest eta's decays lie against the line eta * lambda * t = 1 (t the grid's
    last evaluation): how many are not below it, and whether on it (eta * lambda * t = 1 at the
    grid's precision) or above it."""
    t = grid.eval_steps[-1]
    prods = [grid.lrs[0] * d * t for d in grid.grids["adamw"].decays if grid.lrs[0] * d * t >= 1
             or math.isclose(grid.lrs[0] * d * t, 1, rel_tol=1e-9)]
    on = [p for p in prods if math.isclose(p, 1, rel_tol=1e-9)]
    n = {1: "a single decay", 0: "no decay"}.get(len(prods), f"{len(prods)} decays")
    where = ("on the line (ηλt = 1)" if on and len(on) == len(prods) else
             "on or above the line" if on else "above the line")
    return f"{n} {'lies' if len(prods) == 1 else 'lie'} {where}" if prods else "no decay reaches the line"


def _moving_text(slopes: dict) -> str:
    """On how many seeds a best coefficient moves with eta (|slope| at least DECOUPLED)."""
    n = sum(abs(v) >= DECOUPLED for v in slopes.values() if math.isfinite(v))
    return f"{'none' if n == 0 else n} of the {len(slopes)} seeds"


def _lower_text(grid: Decoupling) -> str:
    """Per seed, the largest best lambda above PLAIN_BAND over the least within it (the row's
    measure)."""
    vals = {k: _lower_above(_GridSeed((grid, k, "adamw"))) for k in grid.grids["adamw"].seed_accs()}
    return ", ".join(f"{_fmt(v, 2) if math.isfinite(v) else 'n/a'} (seed {k})" for k, v in vals.items())


def live_slope_numbers(live: Decoupling, grid: Decoupling) -> dict:
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


def _tied_text(grid: Decoupling, kind: str, at) -> str:
    """Where, at the learning rates ``at``, grid ``kind``'s best decay is a tie
    (:func:`tied_decays_per_lr`), with the tied decays; "none" where it is nowhere."""
    g = grid.grids[kind]
    return "; ".join(f"λ = {_fmt(t[0], 2)} to {_fmt(t[1], 2)} at η = {_fmt(lr, 2)}" for lr, t in
                     zip(grid.lrs, tied_decays_per_lr(g.test_acc_seeds, g.decays))
                     if lr in at and t is not None and t[0] < t[1]) or "none"


def invariant_numbers(grid: Decoupling) -> dict:
    """The numbers section 3's prose quotes about the scale-invariant grid (glue texts; "n/a"
    where the grid is too small to have them). ``prod_factor``: how far the best product
    eta * lambda moves, below the largest learning rate (where it drops)."""
    s = grid_summary(grid, "adamw_invariant")
    g_inv = grid.grids["adamw_invariant"]
    top = max(g_inv.decays)
    pts = [(lr, d) for lr, d in zip(grid.lrs, s["ridge"]) if d is not None]
    inner = [(lr, d) for lr, d in pts if d < top] or [(math.nan, math.nan)]
    band = ridge_band(grid, "adamw_invariant", INVARIANT_BAND)
    has = [(lr, d) for lr, d in zip(band["lrs"], band["ridge"]) if d is not None]
    lo = has[-1] if len(has) > 1 else (math.nan,) * 2  # the band's last eta with a best decay
    none = [lr for lr, d in zip(band["lrs"], band["ridge"]) if d is None]
    kept = [(lr, d) for lr, d in pts[:-1] if d < top]  # not at the grid's edge (a bound)
    kept = kept if len(kept) > 1 else [(math.nan, math.nan)] * 2
    prod = [lr * d for lr, d in kept]
    ridges = [best_decay_per_lr(a, g_inv.decays) for a in g_inv.seed_accs().values()]
    top_prods = [grid.lrs[-1] * r[-1] for r in ridges if r[-1] is not None]
    edge = [None if d is None or any(math.isclose(d, e) for e in (min(g_inv.decays), top)) else d
            for d in s["ridge"]]
    return dict(wd_inv_slope=slope_text(s["slope"]),
                wd_inv_slope_inner=slope_text(ridge_slope(grid.lrs, edge)),
                wd_inv_edge_lrs=and_list([_fmt(lr, 2) for lr, d, e in zip(grid.lrs, s["ridge"], edge)
                                      if d is not None and e is None]) or "none",
                wd_inv_hi_lr=_fmt(inner[0][0], 1), wd_inv_hi=_fmt(inner[0][1], 2),
                wd_inv_lo_lr=_fmt(lo[0], 1), wd_inv_lo=_fmt(lo[1], 2),
                wd_inv_prod=_range(prod), wd_inv_prod_factor=_fmt(max(prod) / min(prod), 2),
                prod_factor=max(prod) / min(prod),
                wd_inv_prod_lrs=f"{_fmt(kept[0][0], 1)} to {_fmt(kept[-1][0], 1)}",
                wd_inv_lr_factor=_fmt(kept[-1][0] / kept[0][0], 2),
                wd_inv_lambda_factor=_fmt(kept[0][1] / kept[-1][1], 2),
                wd_inv_slope_seeds=_range([ridge_slope(band["lrs"], r) for r in band["per_seed"]]),
                wd_inv_prod_seeds=_range(_product_moves(grid, INVARIANT_BAND).values()),
                wd_inv_prod_top=_range(top_prods),
                wd_inv_nobest=("" if not none else
                               f"; at η = {and_list([_fmt(lr, 1) for lr in none])} no decay beats the "
                               f"smallest by {_fmt(best_decay_per_lr.__defaults__[0], 2)} on the "
                               "seed-averaged grid, so it has no best λ "
                               "there: the top of that column is flat") or
                              "; the seed-averaged grid has a best λ at every η of the decade",
                wd_inv_edge=_edge_note(grid, "adamw_invariant", INVARIANT_BAND).replace(
                    "; at the edge of the decay grid (a bound, the best may lie beyond it): ",
                    "; within the decade it does so on ") or "; it does so nowhere within the decade")


def equilibrium_numbers(equilibria: list[Equilibrium]) -> dict:
    """Section 2's numbers: how far the measured RMS and angle per step settle from theory
    (measured / predicted - 1 over the last quarter, in percent, per optimizer); each
    matrix's layer rotation at the end (cosine distance from its initial weights) beside the
    sum of its angles per step, and the run's length in units of tau; the factor on lambda of
    the rows' control runs, and its root (what the theory moves the RMS and the angle by)."""
    out = dict(wd_eq_control=f"{EQ_CONTROL:g}", wd_eq_root=_fmt(math.sqrt(EQ_CONTROL), 3))
    for r in equilibria:
        key, lay = "adamw" if r.optimizer == "adamw" else "sgd", r.layers.values()
        out[f"wd_{key}_rms_dev"] = _range([100 * (v.rms_ratio - 1) for v in lay], 2) + "%"
        out[f"wd_{key}_angle_dev"] = _range([100 * (v.angle_ratio - 1) for v in lay], 2) + "%"
        out[f"wd_{key}_rotation"] = _range([v.rotation for v in lay], 2)
        out[f"wd_{key}_total_angle"] = _range([v.total_angle for v in lay], 2)
        out[f"wd_{key}_taus"] = _fmt(r.steps / r.tau, 2)
        bins = _early_angle_ratios(r)
        out[f"wd_{key}_angle_early"] = _range([v for b in bins.values() for _, v in b], 2)
        if key == "adamw":
            out["wd_adamw_angle_start"] = _angle_start(bins)
    return out


def _early_angle_ratios(r: Equilibrium) -> dict:
    """``{matrix: [(step, measured / predicted angle per step), ...]}``, bin by bin (the
    figure's bins, ``r.angle_step``) over the first quarter of tau (steps 1 to tau / 4; at
    least the first bin): each bin judged on its own, so that an overshoot early and an
    undershoot later do not cancel as they do in a ratio of means."""
    steps = np.asarray(r.angle_step, dtype=float)
    keep = np.flatnonzero((steps >= 1) & (steps <= r.tau / 4))
    keep = keep if len(keep) else np.flatnonzero(steps >= 1)[:1]
    m, p = np.asarray(r.angle, dtype=float), np.asarray(r.angle_pred, dtype=float)
    return {n: [(int(steps[i]), float(m[i, l] / p[i, l])) for i in keep]
            for l, n in enumerate(r.names)}


def _angle_start(bins: dict) -> str:
    """Section 2's sentence on AdamW's angle per step over the first quarter of tau, from
    :func:`_early_angle_ratios`: near the prediction only where every bin of every matrix is
    within ANGLE_TOL of it; otherwise where it starts (the first bin) and where it ends up (the
    last bin of the quarter), how many bins are within ANGLE_TOL, and, as a hypothesis only,
    why the first steps overshoot and the later ones undershoot."""
    pts = [b for b in bins.values() if b]
    if not pts:
        return ""
    tol, allv = f"{100 * ANGLE_TOL:.0f}%", [v for b in pts for _, v in b]
    near = sum(abs(v - 1) <= ANGLE_TOL for v in allv)
    if near == len(allv):
        return (f"It starts near it too: over the first quarter of τ, bin by bin, AdamW's angle "
                f"per step is {_range(allv, 2)} times the predicted trajectory's, within {tol} "
                "in every bin of every matrix.")
    first, last = [b[0][1] for b in pts], [b[-1][1] for b in pts]
    said = (f"It does not start on it: over the first quarter of τ, read bin by bin as the "
            f"figure shows it, AdamW's angle per step is {_range(first, 2)} times the predicted "
            f"trajectory's in its first bin (around step {pts[0][0][0]}) and "
            f"{_range(last, 2)} times it by the end of the quarter (step {pts[0][-1][0]}), "
            f"matrix by matrix; {near} of its {len(allv)} bins are within {tol} of it.")
    if max(first) > 1 + ANGLE_TOL:
        said += (" A likely reason, which this page does not test: bias-corrected Adam's first "
                 "steps are not yet averaged by momentum (at the first step m̂ is the gradient "
                 "itself), so their entries have size about one, up to √((1+β₁)/(1−β₁)) ≈ 4.4 "
                 "times the averaged noise the prediction assumes")
        said += ("; and later v̂, which averages squared gradients over about 1/(1−β₂) = 1,000 "
                 "steps, may still remember the larger early gradients and hold the steps "
                 "below their settled size." if min(last) < 1 - ANGLE_TOL else ".")
    return said


def _below_line(payload: Decoupling) -> dict:
    """The below-the-line row's own numbers (:data:`~.claims.FLAT`), per learning rate it reads
    (:func:`~.figures.flat_columns`): ``{eta: ({seed: range below the line / the column's},
    {seed: the same for as many decays just above the line})}``, each on that seed's AdamW grid."""
    seeds = list(payload.grids["adamw"].seed_accs())
    return {payload.lrs[j]: tuple({s: _side_ratio(_GridSeed((payload, s, "adamw", j)), above)
                                      for s in seeds} for above in (False, True))
            for j in flat_columns(payload)}


def _by_lr(values: dict, digits: int = 2) -> str:
    """``{eta: {seed: value}}`` as "a to b at eta = x; ..." (each eta's range over the seeds)."""
    return "; ".join(f"{_range(v.values(), digits)} at η = {_fmt(lr, 2)}" for lr, v in values.items())


def clock_numbers(clock: Clock) -> dict:
    """Section 3's numbers about the matched runs: the factor between their learning rates
    end to end and how far apart their settled losses are (the odd run's distance from them is
    the claims row's, :func:`claims_numbers`)."""
    lrs = [r.lr for r in clock.runs if r.matched]
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
                wd_clock_spread=f"{_fmt(100 * clock.spread, 2)}%")


def clock_pointwise(clock: Clock) -> list[tuple[float, float]]:
    """At each evaluation of the matched runs (which share eta * lambda, so their evaluations
    fall at the same eta * lambda * t): ``(eta * lambda * t, max/min - 1 of their train losses)``.
    Single evaluations jitter with the last mini-batches; ``clock.spread`` compares the
    second-half means."""
    hs = [(r, h) for r, h in zip(clock.runs, clock.histories) if r.matched and len(h)]
    if len(hs) < 2:
        return []
    n = min(len(h) for _, h in hs)
    r0, h0 = hs[0]
    out = []
    for i in range(n):
        vals = [float(h["train_loss"][i]) for _, h in hs]
        if min(vals) > 0 and all(math.isfinite(v) for v in vals):
            out.append((float(h0.steps[i] * r0.lr * r0.weight_decay), max(vals) / min(vals) - 1))
    return out


def _fails(fit) -> str:
    """Which of the four tail tests (:data:`TAIL_TESTS`) a fit fails, in words ("none": it
    is a heavy power-law tail)."""
    names = {"beats the exponential": "the exponential fits as well",
             "no cutoff": "a cutoff fits significantly better",
             "no gap": "its tail has a gap the law cannot explain",
             "heavy": f"α is not below {HEAVY:g}"}
    out = [names[c.statement] for c in TAIL_TESTS.values() if not c.test.passes(c.measure(fit))]
    return "; ".join(out) or "none"


def spectrum_numbers(spectrum: Spectrum) -> dict:
    """Section 4's numbers: test and training accuracy without and with decay, and the tail
    fit of the square hidden matrix at initialization, without and with decay."""
    runs = list(spectrum.runs.values())
    r0, r1 = runs[0], runs[-1]
    c = _spectrum_checks(spectrum)
    out = dict(wd_spec_test=f"{_fmt(r0.test_acc, 3)} → {_fmt(r1.test_acc, 3)}",
               wd_spec_train=f"{_fmt(r0.train_acc, 3)} → {_fmt(r1.train_acc, 3)}",
               wd_spec_phrase="better" if r1.test_acc > r0.test_acc else "worse",
               wd_spec_tail_fails="n/a", wd_spec_link="n/a", wd_spec_below2="n/a",
               wd_spec_edge_bar=f"{EDGE.test.threshold:g}", wd_spec_null_draws=f"{NULL_DRAWS}")
    if c is None:  # a run that diverged: nothing to read
        return {**out, **{f"wd_spec_{k}": "n/a" for k in (
            "alpha0 alpha1 tail1 ratio_init ratio0 ratio1 gap_p spikes cutoff_p exp_p top median "
            "srank frob0 norms1 edge0 edge1 edge_nodecay median0 top_nodecay top_decay").split()}}
    gain = spectrum_claims({0: spectrum})[-1]["evidence"][0]["treatment"][0]  # the link row's, here
    heavier = "with" if c.b.tail_alpha < c.a.tail_alpha else "without"
    out.update(wd_spec_link="n/a" if gain is None
               else f"the run {heavier} decay has the smaller fitted α and the "
                    f"{'higher' if gain > 0 else 'lower'} test accuracy",
               wd_spec_below2="as the decayed matrix's does on this seed"
               if c.b.tail_alpha < 2 else "which the decayed matrix's does not on this seed")
    x1 = np.sort(np.asarray(r1.final[c.name], dtype=float) ** 2)[::-1]
    x0 = np.sort(np.asarray(r0.final[c.name], dtype=float) ** 2)[::-1]  # without decay
    frob = {n: (float(np.sqrt((np.asarray(sv, dtype=float) ** 2).sum())),
                float(np.sqrt((np.asarray(r1.final[n], dtype=float) ** 2).sum())))
            for n, sv in r1.init.items()}
    h = r1.history
    half = int(np.searchsorted(np.asarray(h.steps), h.steps[-1] / 2))
    grow = {n: h[f"norm {n}"][-1] > h[f"norm {n}"][half] for n in frob}
    return {**out, "wd_spec_alpha0": _alpha(c.a), "wd_spec_alpha1": _alpha(c.b),
            "wd_spec_tail1": str(c.fit.n_tail), "wd_spec_ratio_init": _fmt(c.init.loglik_ratio),
            "wd_spec_ratio0": _fmt(c.a.tail_ratio), "wd_spec_ratio1": _fmt(c.b.tail_ratio),
            "wd_spec_gap_p": _p(c.b.tail_gap_p), "wd_spec_cutoff_p": _p(c.fit.cutoff_p),
            "wd_spec_exp_p": _p(c.fit.p),
            # the edge row's measure (EDGE) on this seed: with decay, and at initialization
            "wd_spec_edge1": EDGE.fmt(EDGE.measure(c.r1.final[c.name])),
            "wd_spec_edge0": EDGE.fmt(EDGE.measure(c.r1.init[c.name])),
            "wd_spec_edge_nodecay": EDGE.fmt(EDGE.measure(c.r0.final[c.name])),
            "wd_spec_median0": _fmt(float(np.median(x0)), 2), "wd_spec_top_nodecay": _fmt(x0[0], 3),
            "wd_spec_top_decay": _fmt(x1[0], 3),
            "wd_spec_tail_fails": _fails(c.fit), "wd_spec_spikes": str(c.b.tail_spikes),
            "wd_spec_top": ", ".join(_fmt(v, 2) for v in x1[:5]),
            "wd_spec_median": _fmt(float(np.median(x1)), 2),
            "wd_spec_srank": f"{_fmt(c.a.stable_rank, 3)} → {_fmt(c.b.stable_rank, 3)}",
            "wd_spec_frob0": f"{_fmt(c.i.frobenius, 3)} → {_fmt(c.a.frobenius, 3)}",
            "wd_spec_norms1": "; ".join(
                f"{n} {_fmt(a, 3)} → {_fmt(b, 3)}"
                + (", still growing in the second half" if grow[n] else "")
                for n, (a, b) in frob.items())}


def claims_numbers(rows) -> dict:
    """The numbers the prose quotes from the claims table's own rows (glue texts): the clock
    row's settled spread of the matched runs and its control, the run at another product, off
    their level, each over the row's seeds as the row prints them; section 2's AdamW
    equilibrium row's verdict (:data:`evidence.CANNOT_TELL` where the runs are too short to
    settle and the table has no such row); and the seeds on which section 2's SGD angle row's
    control passes the row's test too (:func:`dynamics.plots.control_passes`)."""
    eq = [r["reproduced"] for r in rows if str(r["claim"]).startswith("AdamW: RMS → √(η/2λ)")]
    sgd = [r for r in rows if str(r["claim"]).startswith("SGD: angle")]
    edge = next((r for r in rows if str(r["claim"]).startswith(EDGE.statement)), None)
    out = dict(wd_adamw_verdict=plots.MARKS[eq[0] if eq else evidence.CANNOT_TELL],
               wd_edge_said=_edge_said(edge) if edge else "",
               wd_sgd_angle_fooled=plots.control_passes(sgd, "SGD: angle") if sgd
               else "on no seed judged here (the runs are too short to settle)")
    row = next((r for r in rows if str(r["claim"]).startswith("settled loss levels agree")), None)
    if row is None:
        return dict(out, wd_clock_row_spread="n/a", wd_clock_row_off="n/a")
    ev = row["evidence"][0]
    pct = lambda xs: _range([100 * x for x in xs.values() if x is not None], 2) + "%"
    return dict(out, wd_clock_row_spread=pct(ev["treatment"]), wd_clock_row_off=pct(ev["control"]))


def _edge_said(row: dict) -> str:
    """Section 4's sentence on the Marchenko-Pastur row (:data:`~.claims.EDGE`), from its own
    numbers and verdict: whether the run without decay (its control) clears the bar too, on
    which seeds, so that the row shows training, not decay, moving the top eigenvalue off."""
    e = row["evidence"][0]
    test = evidence.Test(**e["test"])
    ctl = {s: x for s, x in e["control"].items() if x is not None}
    both = [str(s) for s, x in ctl.items() if test.passes(x)]
    vals = f"{_range(ctl.values(), 3)}× seed by seed"
    if both:
        return (f"The run without decay clears the bar too, on seed{'s' * (len(both) > 1)} "
                f"{and_list(both)} ({vals}), so the row shows that training moves the top "
                "eigenvalue off the bulk, not that decay does.")
    if row["reproduced"] == "yes":
        return (f"The run without decay stays under the bar on every seed ({vals}), so there "
                "decay, not training alone, moves the top eigenvalue off the bulk.")
    return (f"Without decay the ratio is {vals}; the row's verdict rests on the decayed runs, "
            f"at {_range([x for x in e['treatment'].values() if x is not None], 3)}×.")


def _window_end(result) -> dict:
    """Where each decayed setting's kick is read at the end of its window: ``{tau: (step,
    kept, decay alone)}``, at the last recorded step at or before ``2 tau`` (the step
    ``run_window`` reads ``end`` at, the records being some steps apart), with the decay
    alone, ``(1 - 1/tau)^step``, evaluated at that same step."""
    steps = np.asarray(result.steps, dtype=float)
    out = {}
    for s, k in zip(result.settings, result.kept):
        i = int(np.searchsorted(steps, s.horizon, side="right")) - 1
        if s.weight_decay > 0 and i >= 0:
            out[s.tau] = (int(steps[i]), float(np.asarray(k, dtype=float)[i]), (1 - 1 / s.tau) ** steps[i])
    return out


def _kick_floor(result) -> dict:
    """The shortest window's kick at the record's last step: ``(steps in units of its tau,
    kept, decay alone (1 - 1/tau)^step)``, NaNs where nothing was recorded."""
    s, k = min(((s, k) for s, k in zip(result.settings, result.kept) if s.weight_decay > 0),
               key=lambda p: p[0].tau)
    if not len(result.steps):
        return (math.nan,) * 3
    t = float(result.steps[-1])
    return t / s.tau, float(np.asarray(k, dtype=float)[-1]), (1 - 1 / s.tau) ** t


def _kick_tail(result) -> tuple:
    """The shortest window's kick, early and late: ``(e-folding time over its first two
    windows, over its last window of the record, log-slope per tau over that last window)``,
    times in units of its tau (least-squares fits of log kept, where kept > 0; NaN where fewer
    than two such records)."""
    s, k = min(((s, k) for s, k in zip(result.settings, result.kept) if s.weight_decay > 0),
               key=lambda p: p[0].tau)
    t, k = np.asarray(result.steps, dtype=float) / s.tau, np.asarray(k, dtype=float)

    def slope(use):
        use = use & (k > 0)
        return np.polyfit(t[use], np.log(k[use]), 1)[0] if use.sum() >= 2 else math.nan
    early, late = slope(t <= 2), slope(t >= t[-1] - 1) if len(t) else math.nan
    fold = lambda x: -1 / x if x != 0 else math.inf  # noqa: E731 (NaN stays NaN)
    return fold(early), fold(late), late


def _twin_tails(result) -> str:
    """The kept fraction at the record's end of each pair of decayed settings that share
    tau = 1/(eta lambda), setting by setting, and whether their tails differ (over 2x apart)."""
    last = {}
    for s, k in zip(result.settings, result.kept):
        if s.weight_decay > 0 and len(k):
            last.setdefault(round(s.tau, 6), []).append((s, float(np.asarray(k, dtype=float)[-1])))
    out = []
    for tau, pairs in last.items():
        if len(pairs) > 1:
            ends = [v for _, v in pairs]
            apart = max(ends) > 2 * min(ends) or min(ends) <= 0
            out.append(f"The two settings with 1/(ηλ) = {_fmt(tau, 4)} end the record at "
                       + and_list([f"{_fmt(v, 2)} (η = {_fmt(s.lr, 2)}, λ = {_fmt(s.weight_decay, 2)})"
                                   for s, v in pairs])
                       + (": their tails differ." if apart else ": their tails agree."))
    return " ".join(out)


FLOOR_SLOPE = 0.02  # a floor: the late log-slope of the kept kick within this per tau of zero
#                     (an e-fold taking over 50 tau)


def _window_numbers(result) -> dict:
    """:func:`~.window.window_numbers`, with the decay alone at the end of each window read at
    the step the kept fraction is read at (:func:`_window_end`), those steps by tau (settings
    that share a tau share their step), and the shortest window's kick at the record's end
    (:func:`_kick_floor`, :func:`_kick_tail`) and the twin settings' ends (:func:`_twin_tails`)."""
    end, (taus, kept, alone) = _window_end(result), _kick_floor(result)
    n = {}
    for s in result.settings:
        if s.weight_decay > 0:
            n[s.tau] = n.get(s.tau, 0) + 1
    both = lambda tau: " (both settings with that 1/(ηλ))" if n.get(tau, 1) > 1 else ""  # noqa: E731
    return {**window_numbers(result),
            "wd_win_end_pred": _range([p for _, _, p in end.values()], 3),
            "wd_win_end_at": ", ".join(f"{t} of {_fmt(2 * tau, 3)}{both(tau)}" for tau, (t, _, _)
                                       in sorted(end.items())) or "n/a",
            "wd_win_floor_taus": _fmt(taus, 2), "wd_win_floor": _fmt(kept, 2),
            "wd_win_floor_alone": _fmt(alone, 2),
            "wd_win_floor_said": _floor_said(taus, kept, alone, *_kick_tail(result)),
            "wd_win_twin_tails": _twin_tails(result)}


def _floor_said(taus: float, kept: float, alone: float, early=math.nan, late=math.nan,
                slope=math.nan) -> str:
    """Section 3's sentence on the shortest window's kick at the record's end: a floor only
    where its late log-slope per tau is within FLOOR_SLOPE of zero; where it keeps over ten
    times what the decay alone leaves there but still falls, that it falls more slowly than the
    dotted line (its early and late e-folding times, in tau); else that it follows it."""
    at = (f"at the record's end, {_fmt(taus, 2)} of its 1/(ηλ) after the kick, where the decay "
          f"alone would leave {_fmt(alone, 2)}")
    if math.isfinite(slope) and abs(slope) <= FLOOR_SLOPE:
        return ("Nor do the curves follow the dotted lines all the way down: they flatten onto a "
                f"floor. The shortest window's kick still keeps {_fmt(kept, 2)} of itself {at}, "
                f"and over its last 1/(ηλ) it barely falls (an e-fold every {_fmt(late, 2)} of them).")
    if kept > 10 * alone:
        return ("Nor do the curves follow the dotted lines all the way down: late on they fall "
                f"more slowly than the dotted line. The shortest window's kick still keeps "
                f"{_fmt(kept, 2)} of itself {at}; it loses a factor e every {_fmt(early, 2)} of its "
                f"1/(ηλ) over its first two, and every {_fmt(late, 2)} over the record's last one.")
    return f"The shortest window's kick is down to {_fmt(kept, 2)} of itself {at}: no floor shows."


_NUMBERS = {"decoupling": decoupling_numbers, "live_slope": live_slope_numbers,
            "equilibrium": equilibrium_numbers, "clock": clock_numbers,
            "invariant": invariant_numbers, "window": _window_numbers,
            "spectrum": spectrum_numbers, "claims": claims_numbers}


def numbers(section: str, *results) -> dict:
    """The numbers the prose of ``section`` quotes, as glue texts, from the page's results:
    ``numbers("decoupling", grid)`` and ``numbers("invariant", grid)`` (the precomputed
    grids of sections 1 and 3), ``numbers("live_slope", live, grid)`` (the live grid beside
    them), ``numbers("equilibrium", equilibria)``, ``numbers("clock", clock)``,
    ``numbers("window", window)``, ``numbers("spectrum", spectrum)``, and
    ``numbers("claims", rows)`` (the claims table's own numbers)."""
    if section not in _NUMBERS:
        raise ValueError(f"no numbers for section {section!r}; choose one of {list(_NUMBERS)}")
    return _NUMBERS[section](*results)
