"""Weight decay, the claims: the page's claims table, every row judged by the engine.

Every "What to notice" statement that can fail is a row of :func:`page_claims` (control, window
and seeds under the measurement; every threshold a named constant here). :func:`grid_claims`:
the precomputed grids' rows (sections 1, 3), :func:`published_claims` those rows as the cpu build
shows them, :func:`spectrum_claims` section 4's, :func:`claim_runs` the live runs on the claims'
seeds (the page's own reused). The prose's numbers are :mod:`.facts`'; a tail is
:func:`~.spectra.tail_fit`'s (a power law only where it beats an exponential, with no gap).
"""
from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import replace

import numpy as np

from .. import evidence, plots, results
from ..book import and_list
from .experiments import (DECOUPLING, LABELS, RECORDS, Decoupling, Equilibrium,
                          decoupling_summary, equilibrium_configs, live_grid_config, run_decoupling)
from .figures import flat_columns, line_sides, mp_edge_ratio, mp_null, tied_decays_per_lr
from .science import ClockConfig, SpectrumConfig, best_decay_per_lr, ridge_slope
from .together import run_clock_many, run_equilibrium_many, run_spectrum_many
from .spectra import TAIL_P, spectrum_stats, tail_fit
from .window import WindowConfig, run_window, window_claims

__all__ = ["PLAIN_BAND", "INVARIANT_BAND", "RMS_TOL", "ANGLE_TOL", "RELAX_FACTOR", "DECOUPLED", "L2_FAIL",
           "SAME_RMS", "EQ_CONTROL", "faster_configs", "CLOCK_SPREAD", "BEST_MARGIN", "ADAMW_FAIL_GROWTH", "FLAT_BELOW", "PLAIN_MOVES",
           "INV_FALL", "SYM_FACTOR", "LOWER_BY", "HEAVY", "symmetry_config", "symmetry_claims",
           "spectrum_claims", "claim_runs", "grid_claims", "page_claims", "published_claims"]

L2_FAIL = 0.1            # Adam + L2's largest lambda at least this far below its column's best
SAME_RMS = 1.3           # AdamW: largest / smallest settled RMS across matrices below this
CLOCK_SPREAD = 0.10      # equal eta * lambda: settled losses within this of each other (the run
#                          at another product, the control, must be off by more)
_LH = "Decoupled Weight Decay Regularization"
_EQ = "L2 Regularization versus Batch and Weight Normalization; Rotational Equilibrium"
_KOSSON = "Rotational Equilibrium: How Weight Decay Balances Learning Across Neural Networks"


def _signed(x) -> str:  # a difference as the rows print it: sign first, two digits
    return "n/a" if x is None or not math.isfinite(x) else ("+" if x >= 0 else "−") + _fmt(abs(x), 2)


# The learning rates over which section 1 reads the plain MLP's AdamW ridge (where eta * lambda
# is small), and section 3 the scale-invariant network's ridge (where every seed has one).
PLAIN_BAND = (3e-4, 3.2e-3)
INVARIANT_BAND = (1e-3, 1.01e-2)


def _fmt(x, digits: int = 2) -> str:
    return plots.number(x, digits, missing="n/a")


RMS_TOL, ANGLE_TOL = 0.15, 0.20  # section 2: settled RMS and angle within these of theory
SYM_FACTOR = 4.0  # exercise 2's row: SGD at eta / SYM_FACTOR and lambda * SYM_FACTOR
RELAX_FACTOR = 2.0  # the norm settles within e^-2 within this factor of tau steps, either way
EQ_CONTROL = 8.0  # section 2's control runs: lambda times this (tau by 1/8, both angles by sqrt(8),
#                   AdamW's RMS by 1/sqrt(8): beyond RELAX_FACTOR either way, ANGLE_TOL and RMS_TOL)
DECOUPLED = 0.5  # |slope| below this: a best decay that ignores eta (0), above: one that moves
BEST_MARGIN = 0.03  # better test accuracy, every seed (AdamW's best cell; the smaller alpha's run):
#                     2 standard errors of one accuracy near 0.6 on 1,000 examples (of a difference
#                     of two unpaired: 0.044; measured controls, one recipe twice: within 0.013)
ADAMW_FAIL_GROWTH = 0.05  # AdamW's largest decay: this much further below its column's best at
#                           the largest eta than at the smallest
FLAT_BELOW = 0.5  # below eta * lambda * t = 1: the decays span under this share of the column's
#                   range of accuracy
PLAIN_MOVES = 3.0  # plain MLP: each seed's ties allow a best lambda moving less than this over PLAIN_BAND
LOWER_BY = 0.5  # plain MLP: above PLAIN_BAND the best lambda is below this times the band's least
INV_FALL = 10.0  # scale-invariant net: each seed's best lambda falls at least INV_FALL-fold over
#                  INVARIANT_BAND (a decade of eta: 1/eta or faster), whichever of the decays tied
#                  with the best (within the seeds' spread, tied_decays_per_lr) is taken


def _dev(key: str):
    """The largest ``|measured / predicted - 1|`` of ``key`` ("rms", "angle") over a run's
    matrices against ``ref``'s prediction: ``_dev(key)(run)``, ``_dev(key)(faster, run)``."""
    def dev(r, ref=None) -> float:
        ref = ref or r
        return max(abs(getattr(v, key) / getattr(ref.layers[n], f"{key}_pred") - 1)
                   for n, v in r.layers.items())
    return dev


def _equilibrium_rows(opt: str) -> list[evidence.Claim]:
    """Section 2's rows for ``opt``, the settled norm and angle per step, each against the run
    with lambda * EQ_CONTROL (:func:`faster_configs`) read against this run's prediction. Only
    AdamW's angle is asserted: SGD's norm (from the measured gradient) and angle follow from any
    stationary norm, so their control is the faster run against its own prediction."""
    adamw, own = opt == "adamw", "its own prediction (both follow from stationarity)"
    norm = "RMS → √(η/2λ) per element" if adamw else "‖W‖⁴ → η‖g̃‖²/(2λ(1−μ))"
    angle = "√(2ηλ(1−β₁)/(1+β₁))" if adamw else "√(2ηλ/(1+μ))"
    return [evidence.Claim(
        f"{'AdamW' if adamw else LABELS[opt]}: {text}", _KOSSON, measure=_dev(key),
        control_measure=lambda p, k=key: _dev(k)(*p) if adamw else _dev(k)(p[0]),
        test=evidence.Test("<=", tol, f"largest |measured ÷ predicted − 1| over the matrices, {tn}"),
        control=f"the run with λ·{EQ_CONTROL:g} (so τ/{EQ_CONTROL:g}): its settled "
                f"{key.replace('rms', 'RMS')} against " + ("this run's prediction" if adamw else own),
        asserted=adamw and key == "angle", window="last quarter, every matrix", fmt=lambda x: _fmt(x, 3))
        for text, key, tol, tn in ((norm, "rms", RMS_TOL, "RMS_TOL"),
                                   (f"angle → {angle} per step", "angle", ANGLE_TOL, "ANGLE_TOL"))]


def _in_band(grid: Decoupling, kind: str, band) -> dict:  # {seed: [(eta, best λ or None)]} in band
    g = grid.grids[kind]
    return {s: [(lr, d) for lr, d in zip(grid.lrs, best_decay_per_lr(a, g.decays))
                if band[0] <= lr <= band[1]] for s, a in g.seed_accs().items()}


def _product_moves(payload: Decoupling, band) -> dict:
    """``{seed: factor}``: on each seed's scale-invariant grid, how far the best product
    eta * lambda moves over the learning rates of ``band`` (inf where a seed has no best decay
    at one of them)."""
    return {s: max(p) / min(p) if p and len(p) == len(pts) else math.inf
            for s, pts in _in_band(payload, "adamw_invariant", band).items()
            for p in [[lr * d for lr, d in pts if d is not None]]}


class _GridSeed(tuple):
    """A grid row's "run", one seed of the precomputed grids: ``(payload, seed, kind)``; ``kind``
    is the grid a measure reads (a control reads another grid, or another seed, the same way)."""
    def acc(self, kind=None):
        return self[0].grids[kind or self[2]].seed_accs()[self[1]]

    def ridge(self, kind=None):
        return best_decay_per_lr(self.acc(kind), self[0].grids[kind or self[2]].decays)


def _at(grid, seeds, kind) -> dict:  # {seed: that seed's grid of ``kind``}
    return {s: _GridSeed((grid, s, kind)) for s in seeds}


def _best_minus(r) -> float:
    """This seed's best cell of grid ``r[2]`` minus Adam + L2's best cell of seed ``r[3]``."""
    return float(np.nanmax(r.acc()) - np.nanmax(r[0].grids["adam_l2"].seed_accs()[r[3]]))


def _least_shortfall(r) -> float:
    """The least, over the eta, of how far the grid's largest decay falls below its column's best."""
    return float(np.min(np.nanmax(a := r.acc(), 0) - a[-1]))


def _shortfall_growth(r, row=-1) -> float:
    """How much further decay ``row`` (the largest) falls below its column's best at the largest eta."""
    return float((gap := np.nanmax(r.acc(), 0) - r.acc()[row])[-1] - gap[0])


def _side_ratio(r, above: bool = False) -> float:
    """AdamW's column ``r[3]``: the range of accuracy over the decays below the line
    eta * lambda * t = 1 (``above``: as many decays just above it) over the whole column's."""
    acc = r.acc()[:, r[3]]
    return float(np.ptp(acc[line_sides(r[0], r[3])[above]]) / np.ptp(acc)) if np.ptp(acc) else math.nan


def _lh_slope(r) -> float:
    """|slope| of log(best coefficient as its paper writes it) against log eta over the whole
    grid: AdamW's eta * lambda (PyTorch's slope + 1), Adam + L2's lambda."""
    slope = ridge_slope(r[0].lrs, r.ridge())
    return abs(slope + 1 if r[2] == "adamw" else slope)


def _band_move(r, band=PLAIN_BAND) -> float:
    """Largest over smallest best lambda over the eta of ``band`` (inf: a column has no best)."""
    vals = [d for lr, d in zip(r[0].lrs, r.ridge()) if band[0] <= lr <= band[1]]
    return max(vals) / min(vals) if vals and None not in vals else math.inf


def _ties(r, band=INVARIANT_BAND) -> list:
    """This seed's tied decays (:func:`tied_decays_per_lr`) at the learning rates of ``band``."""
    g = r[0].grids[r[2]]
    ties = tied_decays_per_lr(g.test_acc_seeds, g.decays, seed=r[1])
    return [t for lr, t in zip(r[0].lrs, ties) if band[0] <= lr <= band[1]]


def _ties_text(runs: dict, band) -> str:
    """Each seed's tied decays (:func:`_ties`) at the first and last learning rate of ``band``
    ("λ = 3.2" where a range is one decay)."""
    def span(lo, hi) -> str:
        return a if (a := _fmt(lo, 2)) == (b := _fmt(hi, 2)) else f"{a} to {b}"
    return "; ".join(f"λ = {span(*t[0])} → {span(*t[-1])} (seed {s})" for s, r in runs.items()
                     for t in [_ties(r, band)] if t and None not in t) or "n/a"


def _least_move(r, band=PLAIN_BAND) -> float:
    """The least move, either way, of this seed's best lambda over ``band`` that its ties allow
    (:func:`_ties` at the band's ends): 1 where the two ranges overlap (NaN: no best)."""
    if not (ties := _ties(r, band)) or None in ties:
        return math.nan
    (a, b), (c, d) = ties[0], ties[-1]  # at the grid's precision, as _least_fall
    return float(f"{max(1.0, c / b, a / d):.6g}")


def _least_fall(r) -> float:
    """The least fall of this seed's best lambda over INVARIANT_BAND that its ties allow: the
    lowest tied decay at the smallest eta over the highest at the largest (NaN: no best)."""
    ties = _ties(r)
    # at the grid's precision: decays a decade apart on its √10 steps fall exactly tenfold
    return float(f"{ties[0][0] / ties[-1][1]:.6g}") if ties and None not in ties else math.nan


def _lower_above(r) -> float:
    """The largest best lambda above PLAIN_BAND over the least within it."""
    lrs, ridge = r[0].lrs, r.ridge()
    above = [d for lr, d in zip(lrs, ridge) if lr > PLAIN_BAND[1]]
    inside = [d for lr, d in zip(lrs, ridge) if PLAIN_BAND[0] <= lr <= PLAIN_BAND[1]]
    return max(above) / min(inside) if above and inside and None not in above + inside else math.inf


def _edge_note(grid, kind, band) -> str:
    """Where a seed's best lambda over ``band`` sits at the grid's largest or smallest decay:
    a bound, not a best (it may lie beyond the grid)."""
    ends = (min(grid.grids[kind].decays), max(grid.grids[kind].decays))
    hits = [f"seed {s} at η = {_fmt(lr, 1)}" for s, pts in _in_band(grid, kind, band).items()
            for lr, d in pts if d is not None and any(math.isclose(d, e) for e in ends)]
    return ("" if not hits else "; at the edge of the decay grid (a bound, the best may lie "
            f"beyond it): {and_list(hits)}")


def _bound_note(grid, band) -> str:
    """The seeds whose factor of :func:`_product_moves` over ``band`` is a lower bound: their
    largest product sits at the grid's largest decay (the best lambda, and the product, may
    lie beyond it)."""
    top = max(grid.grids["adamw_invariant"].decays)
    seeds = [f"seed {s}" for s, pts in _in_band(grid, "adamw_invariant", band).items()
             if any(d is not None for _, d in pts)
             and math.isclose(max((lr * d, d) for lr, d in pts if d is not None)[1], top)]
    return f"; so the factor is a lower bound on {and_list(seeds)}" if seeds else ""


BEST = evidence.Claim(
    "AdamW generalizes substantially better than Adam + L2 (best cell of each learning-rate "
    "× decay grid)", _LH, measure=_best_minus,
    test=evidence.Test(">=", BEST_MARGIN, "best AdamW minus best Adam + L2, BEST_MARGIN"),
    control="Adam + L2's best cell against Adam + L2's on the next seed (the seeds' own "
            "difference, which must fall short of the margin)",
    window=f"the best cell of each grid, final accuracy; AdamW ahead by {BEST_MARGIN:g} or more",
    asserted=False, fmt=_signed)
L2_FAILS = evidence.Claim(
    "Adam + L2's largest penalty fails at every learning rate", _LH, measure=_least_shortfall,
    test=evidence.Test(">", L2_FAIL, "least shortfall of the largest λ over the η, L2_FAIL"),
    control="AdamW's largest decay, the same shortfall", window=f"every η; more than {L2_FAIL:g}",
    fmt=lambda x: _fmt(x, 2), asserted=False)
ADAMW_GROWS = evidence.Claim(
    "AdamW's largest decay fails more the larger η is", _LH, measure=_shortfall_growth,
    control_measure=lambda r: _shortfall_growth(r, 0),
    test=evidence.Test(">", ADAMW_FAIL_GROWTH,
                       "shortfall at the largest η minus at the smallest, ADAMW_FAIL_GROWTH"),
    control="AdamW's smallest decay, the same growth", window=f"the largest and smallest η; "
    f"{ADAMW_FAIL_GROWTH:g} more at the largest, every seed", asserted=False, fmt=_signed)
FLAT = evidence.Claim(
    "below the line ηλt = 1 (AdamW, plain MLP) a column's accuracy hardly depends on λ: "
    "the decay has not had time to act",
    "How to set AdamW's weight decay as you scale model and dataset size", measure=_side_ratio,
    control_measure=lambda r: _side_ratio(r, above=True),
    test=evidence.Test("<", FLAT_BELOW, "range below the line ÷ the column's, FLAT_BELOW"),
    control="the same column's decays just above the line, as many as lie below it (all of "
            "them where fewer lie above): there the decay has had time to act, so they must "
            "not be as flat",
    window="each η with two or more decays on each side of the line, judged η by η, at the "
           "grid's last evaluation", fmt=lambda x: _fmt(x, 2), asserted=False)
DECOUPLED_ROW = evidence.Claim(
    "with AdamW the best decay (Loshchilov & Hutter's, ηλ) does not move with the learning "
    "rate, as Adam + L2's best L2 coefficient does", _LH, measure=_lh_slope,
    test=evidence.Test("<", DECOUPLED, "|slope| of log(best ηλ) against log η, DECOUPLED"),
    control="Adam + L2's best L2 coefficient, the same |slope| (it must move: fail the test)",
    window="all the grid's learning rates (0: decoupled, 1: moving as η)", asserted=False,
    fmt=lambda x: _fmt(x, 2))
PLAIN_FLAT = evidence.Claim(
    f"plain MLP, η from {_fmt(PLAIN_BAND[0], 1)} to {_fmt(PLAIN_BAND[1], 1)}: AdamW's best λ "
    "(PyTorch's) hardly moves with η, on every seed", _LH, measure=_least_move,
    control_measure=lambda r: _least_move(r, INVARIANT_BAND),
    test=evidence.Test("<", PLAIN_MOVES, "least move of the best λ over a decade of η that the "
                                         "ties allow, PLAIN_MOVES", scale="log"),
    control="the scale-invariant net's best λ over its decade of η (section 3's), the same "
            "least move (a best λ ∝ 1/η would move 10×)",
    window=f"a decade of η on each network, on the plain MLP η from {_fmt(PLAIN_BAND[0], 1)} to "
           f"{_fmt(PLAIN_BAND[1], 1)}, a band chosen from this grid to end before its best λ "
           "drops and scatters from seed to seed (section 1, the next row); at each end the "
           "best λ is the range of decays within the seeds' spread of that seed's best cell "
           f"(the scale-invariant row's rule); under {PLAIN_MOVES:g}× for some choice of them",
    asserted=False, fmt=lambda x: _fmt(x, 2) + "×")
LOWER = evidence.Claim(
    f"plain MLP: AdamW's best λ is lower above η = {_fmt(PLAIN_BAND[1], 1)} than anywhere "
    f"within η from {_fmt(PLAIN_BAND[0], 1)}", _LH, measure=_lower_above,
    test=evidence.Test("<", LOWER_BY, "largest best λ above ÷ least within, LOWER_BY"),
    control="Adam + L2's best coefficient, the same ratio", window="the two largest η against "
    "the band", asserted=False, fmt=lambda x: _fmt(x, 2))
INV_FALLS = evidence.Claim(
    f"scale-invariant net, η from {_fmt(INVARIANT_BAND[0], 1)} to {_fmt(INVARIANT_BAND[1], 1)}: "
    "the best λ falls as 1/η or faster (ηλ, not λ, is the variable), on every seed",
    "Efficient Hyperparameter Tuning via Trajectory Invariance Principle; " + _LH, measure=_least_fall,
    test=evidence.Test(">=", INV_FALL, "least fall of the best λ over the decade that the ties "
                                       "allow, INV_FALL", scale="log"),
    control="the plain MLP's best λ over the same η, the same least fall",
    window=f"η from {_fmt(INVARIANT_BAND[0], 1)} to {_fmt(INVARIANT_BAND[1], 1)}; at each η the "
           "best λ is the range of decays within the seeds' spread of that seed's best cell (the "
           f"rule section 1 reads ties by); a fall of {INV_FALL:g}× or more whichever of them is taken, "
           "every seed", asserted=False, fmt=lambda x: _fmt(x, 2) + "×")


def grid_claims(grid: Decoupling) -> list[dict]:
    """The claims rows that rest on the precomputed grids of sections 1 and 3 alone, each
    judged by the engine on every seed of the grid (its final accuracies, ``test_acc_seeds``)."""
    if not all(k in grid.grids for k in DECOUPLING):
        return []
    seeds = list(range(len(grid.grids["adamw"].test_acc_seeds)))
    w, l2 = _at(grid, seeds, "adamw"), _at(grid, seeds, "adam_l2")
    nxt = {s: _GridSeed((grid, s, "adam_l2", seeds[(i + 1) % len(seeds)]))
           for i, s in enumerate(seeds)}
    best = {s: _GridSeed((grid, s, "adamw", s)) for s in seeds}
    s = decoupling_summary(grid)
    rows = [evidence.labelled(BEST, best, nxt, label="per seed:",
                              note=f"seed-averaged grids: {_fmt(s['best']['adamw']['acc'], 3)} vs "
                                   f"{_fmt(s['best']['adam_l2']['acc'], 3)}"),
            # two claims, two rows, both shown: their controls (AdamW's largest and smallest
            # decay) do not discriminate on the regenerated grid (2026-11-29)
            evidence.judge(L2_FAILS, l2, w).row(),
            evidence.judge(ADAMW_GROWS, w).row(),
            evidence.joint(FLAT.statement, FLAT.paper, {
                f"η = {_fmt(grid.lrs[j], 2)}:": evidence.judge(FLAT, *(
                    {s: _GridSeed((grid, s, "adamw", j)) for s in seeds},) * 2)
                for j in flat_columns(grid)}, control=FLAT.control, asserted=FLAT.asserted,
                window=FLAT.window + f" ({grid.eval_steps[-1]:,} steps); below {FLAT_BELOW:g} "
                "of the column's range"),
            evidence.judge(DECOUPLED_ROW, w, l2).row(),
            evidence.labelled(PLAIN_FLAT, w, _at(grid, seeds, "adamw_invariant")
                              if "adamw_invariant" in grid.grids else w,
                              note=(f"the best {_ties_text(w, PLAIN_BAND)}; the best λ itself (the "
                                    "parabola's vertex) moves " + plots.spread(
                                        {s: _band_move(r) for s, r in w.items()}, lambda x: _fmt(x, 2) + "×")
                                    + _edge_note(grid, "adamw", PLAIN_BAND))),
            evidence.judge(LOWER, w, l2).row()]
    if "adamw_invariant" in grid.grids:
        inv = _at(grid, seeds, "adamw_invariant")
        rows.append(evidence.joint(
            INV_FALLS.statement, INV_FALLS.paper,
            {"least fall of the best λ:": evidence.judge(INV_FALLS, inv, w)},
            control=INV_FALLS.control, asserted=False, window=INV_FALLS.window,
            note="the best λ itself (the parabola's vertex) falls "
                 f"{plots.spread({s: _band_move(r, INVARIANT_BAND) for s, r in inv.items()}, lambda x: _fmt(x, 2) + '×')}"
                 "; the best ηλ moves "
                 f"{plots.spread(_product_moves(grid, INVARIANT_BAND), lambda x: _fmt(x, 2) + '×')}"
                 + _edge_note(grid, "adamw_invariant", INVARIANT_BAND)
                 + _bound_note(grid, INVARIANT_BAND)))
    return rows


def published_claims() -> list[dict]:
    """The claims rows of the published page that rest on ``data/`` alone: those of the
    precomputed grids (:func:`grid_claims`), as the cpu build shows them."""
    grid, _ = results.load("weight_decay_grid", as_=RECORDS["weight_decay_grid"])
    return grid_claims(grid)


def symmetry_config(profile: str | None = None):
    """Section 2's SGD config at ``profile`` scale with eta / SYM_FACTOR and lambda *
    SYM_FACTOR: exercise 2's run, and the one :func:`symmetry_claims` judges."""
    base = next(c for c in equilibrium_configs(profile) if c.optimizer == "sgd")
    return replace(base, lr=base.lr / SYM_FACTOR, weight_decay=base.weight_decay * SYM_FACTOR)


def faster_configs(profile: str | None = None) -> list:
    """Section 2's configs at ``profile`` scale with lambda * EQ_CONTROL: the equilibrium rows'
    control runs (the theory moves tau by 1/EQ_CONTROL, both angles by its root, AdamW's RMS by
    1/root)."""
    return [replace(c, weight_decay=c.weight_decay * EQ_CONTROL) for c in equilibrium_configs(profile)]


def claim_runs(profile: str | None, seeds, **page) -> dict:
    """The live experiments the claims judge, on every seed of ``seeds`` at ``profile`` scale:
    ``{"live": {seed: grid}, "equilibria": {seed: [runs]}, "faster": (their controls),
    "symmetry": {seed: run}, "clock", "window", "spectrum"}``; what the page ran for its seed
    (``seeds[0]``) is reused. Section 2 trains every seed's runs at once, 3 and 4 on a GPU (:mod:`.together`)."""
    runs = dict(live=lambda s: run_decoupling(live_grid_config(profile), s, bars=False),
                window=lambda s: run_window(WindowConfig.for_profile(profile), s))
    many = dict(clock=lambda ss: run_clock_many(ClockConfig.for_profile(profile), ss),
                spectrum=lambda ss: run_spectrum_many([(SpectrumConfig.for_profile(profile), s) for s in ss]))
    together = dict(equilibria=equilibrium_configs(profile), faster=faster_configs(profile),
                    symmetry=[symmetry_config(profile)])
    seeds, known = [int(s) for s in seeds], {*runs, *together, *many}
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"claim_runs needs distinct seeds, got {seeds}")
    if set(page) - known:
        raise ValueError(f"claim_runs: unknown result {sorted(set(page) - known)}; give some of {sorted(known)}")
    reused = lambda k, s: s == seeds[0] and k in page  # noqa: E731
    todo = [(k, s, c) for k, cs in together.items() for s in seeds if not reused(k, s) for c in cs]
    out = {k: {s: page[k] if reused(k, s) else [] for s in seeds} for k in together}
    for (k, s, _), r in zip(todo, run_equilibrium_many([(c, s) for _, s, c in todo], bars=False)):
        out[k][s].append(r)
    out["symmetry"] = {s: r if reused("symmetry", s) else r[0] for s, r in out["symmetry"].items()}
    for k, run in many.items():  # the seeds the page has not run, at once
        got = dict(zip(fresh := [s for s in seeds if not reused(k, s)], run(fresh)))
        out[k] = {s: got[s] if s in got else page[k] for s in seeds}
    out.update({k: {s: page[k] if reused(k, s) else run(s) for s in seeds} for k, run in runs.items()})
    return {k: out[k] for k in ("live", "equilibria", "faster", "symmetry", "clock", "window", "spectrum")}


def symmetry_claims(equilibria: dict, symmetry: dict) -> list[dict]:
    """Exercise 2's test as a row (:data:`SYMMETRY`): section 2's SGD run against one with
    eta / SYM_FACTOR and lambda * SYM_FACTOR (``symmetry``: ``{seed: run_equilibrium}``), per
    matrix the ratio of their settled norms (predicted sqrt(SYM_FACTOR), with no measured
    gradient in it) and of their angles per step (predicted 1)."""
    base = {s: next(r for r in equilibria[s] if r.optimizer == "sgd") for s in symmetry
            if s in equilibria}
    if not base:
        return []
    pairs = {s: (b, symmetry[s]) for s, b in base.items()}
    return [evidence.judge(SYMMETRY, pairs).row()]


def _early(r: Equilibrium) -> dict:
    """``{matrix: (norm, angle per step)}`` of run ``r`` over its first quarter of tau (steps
    1 to tau / 4 of its downsampled curves; at least their first point after the start):
    before the norm has had time to settle."""
    out = {}
    for key, at in (("rms", "step"), ("angle", "angle_step")):
        steps, a = np.asarray(getattr(r, at), float), np.asarray(getattr(r, key), float)
        keep = (steps >= 1) & (steps <= r.tau / 4)
        if not keep.any():
            keep = steps >= 1
            keep &= np.cumsum(keep) == 1
        out[key] = a[keep].mean(0)
    return {n: (float(out["rms"][l]) * math.sqrt(r.numel[l]), float(out["angle"][l]))
            for l, n in enumerate(r.names)}


def _sym_dev(pair, early: bool = False) -> float:
    """Section 2's SGD run ``base`` against ``new`` (eta / SYM_FACTOR, lambda * SYM_FACTOR):
    the largest deviation from the prediction over the matrices, in units of its tolerance,
    ``max(|norm ratio / sqrt(SYM_FACTOR) - 1| / RMS_TOL, |angle ratio - 1| / ANGLE_TOL)``
    (at most 1: within both). Over the last quarter of training (``layers``), or with
    ``early`` over the first quarter of tau (:func:`_early`), before either has settled."""
    base, new = pair
    pred = math.sqrt(SYM_FACTOR)
    if not (base.layers and new.layers):  # a run too short to settle (a dry run)
        return math.nan
    if early:
        b, v = _early(base), _early(new)
    else:
        b = {n: (x.norm, x.angle) for n, x in base.layers.items()}
        v = {n: (x.norm, x.angle) for n, x in new.layers.items()}
    return max(max(abs(b[n][0] / v[n][0] / pred - 1) / RMS_TOL,
                   abs(v[n][1] / b[n][1] - 1) / ANGLE_TOL) for n in v)


SYMMETRY = evidence.Claim(
    f"SGD at η/{SYM_FACTOR:g} and λ·{SYM_FACTOR:g} (the same ηλ): the settled norms are "
    f"√{SYM_FACTOR:g} = {math.sqrt(SYM_FACTOR):g} times smaller, the angle per step the same (no "
    "measured gradient in the prediction)", _EQ, measure=_sym_dev,
    control_measure=lambda pair: _sym_dev(pair, early=True),
    test=evidence.Test("<=", 1.0, "largest deviation ÷ its tolerance (RMS_TOL for norms, "
                                  "ANGLE_TOL for angles)"),
    control="the same two runs over the first quarter of τ, before either has settled (the "
            "prediction is the equilibrium's; both still near W₀): the same deviation",
    window=f"last quarter; norms within {100 * RMS_TOL:.0f}% of {math.sqrt(SYM_FACTOR):g}, angles "
           f"within {100 * ANGLE_TOL:.0f}% of 1, every matrix", fmt=lambda x: _fmt(x, 2))


def _rms_spread(r, key="rms") -> float:  # largest over smallest ``key`` over the matrices
    return max(lay := [getattr(v, key) for v in r.layers.values()]) / min(lay)


SAME_RMS_ROW = evidence.Claim(
    "AdamW: the scale-invariant matrices, started at different scales, settle at nearly the "
    "same per-element RMS", _KOSSON, measure=_rms_spread,
    control_measure=lambda r: _rms_spread(r, "rms0"),
    test=evidence.Test("<", SAME_RMS, "largest ÷ smallest RMS over the matrices, SAME_RMS",
                       scale="log"),
    control="the same matrices at initialization", window="the last quarter of training",
    # shown, not asserted: at the smoke width (64) the matrices start within 1.3x of each other's
    # RMS (fan-ins 40 and 64), so there the control passes and the row cannot discriminate
    fmt=lambda x: _fmt(x, 3), asserted=False)


def _relax_factor(r, ref=None) -> float:
    """The largest factor over the matrices between the steps RMS^2 takes to come within e^-2 of
    equilibrium and ``ref``'s tau (default: the run's own); inf where one never does."""
    clock = (ref or r).tau
    xs = [v.relax_steps for v in r.layers.values()]
    return max((max(x / clock, clock / x) if x else math.inf) for x in xs)


RELAX = evidence.Claim(
    "AdamW: the norm reaches equilibrium in about τ = 1/(ηλ) steps", _KOSSON,
    measure=_relax_factor, control_measure=lambda pair: _relax_factor(*pair),
    test=evidence.Test("<=", RELAX_FACTOR, "steps to equilibrium ÷ τ, either way, "
                                           "RELAX_FACTOR", scale="log"),
    control=f"the run with λ·{EQ_CONTROL:g}: its steps to equilibrium against this run's τ (it "
            "passes only if the time to settle does not scale as 1/λ, as the decay's rate makes it)",
    window="RMS² has closed all but e⁻² of its initial gap to the predicted level, the matrix "
           "farthest from τ either way",
    constant_control="the control crosses while its decay still outweighs its growth, at about the "
                     "decay's own time, a whole number of steps the same on every seed",
    fmt=lambda x: _fmt(x, 2) + "×")
CLOCK = evidence.Claim(
    "settled loss levels agree when η·λ is held fixed (the settled level of trajectory "
    "invariance; the pointwise curves: see the clock section)",
    "Efficient Hyperparameter Tuning via Trajectory Invariance Principle",
    measure=lambda c: c.spread, control_measure=lambda c: abs(c.ratio - 1),
    test=evidence.Test("<=", CLOCK_SPREAD, "largest ÷ smallest settled loss − 1, CLOCK_SPREAD"),
    control="the run at the middle learning rate with another product against the matched "
            "runs' level",
    window="mean train loss over the second half of training",
    # shown, not asserted: the matched runs settle 4-7% apart on three seeds (an AVX-512 machine),
    # within the seeds' spread of the 10% threshold; the prose quotes both ranges, and no verdict
    fmt=lambda x: f"{100 * x:.1f}%", asserted=False)
# shown, as the precomputed grid's row is: its control cannot discriminate at the cpu profile
L2_FAILS_LIVE = replace(L2_FAILS, statement=L2_FAILS.statement + " (live grid)", asserted=False)


# Section 4: what the trained weights' spectra say, read from the runs of
# :func:`~.experiments.run_spectrum`.
_MM = "Implicit Self-Regularization in Deep Neural Networks: Evidence from Random Matrix Theory and " \
      "Implications for Learning"
_OWN = "this page's observation (no paper claims it)"
HEAVY = 2.0  # a tail exponent below this: heavier than Martin & Mahoney's 2 to 4
SHRINK = 0.8  # with decay every matrix's Frobenius norm below this times its norm without
EDGE_BAR = 2.0  # largest eigenvalue past the MP edge: more than this times the null's furthest


def _p(x) -> str:  # a p-value (or a small fraction): scientific notation below 1e-3
    return "n/a" if not np.isfinite(x := float(x)) else (f"{x:.1e}" if x < 1e-3 else _fmt(x, 2))


def _part(label, measure, op, threshold, name, fmt=lambda x: _fmt(x, 2) + "×"):
    """A part of a joint row (the row names its paper, control and window)."""
    return evidence.Claim(label, "-", measure=measure, test=evidence.Test(op, threshold, name),
                          control="-", window="-", fmt=fmt)


# The four tests a tail must pass to be read as a heavy power law (spectra.tail_fit), each a part
# of section 4's tail row, so that the row says which test a trained matrix fails.
TAIL_TESTS = {
    "power law over an exponential tail (p, 1 where the exponential wins)": _part(
        "beats the exponential", lambda f: f.p if f.loglik_ratio > 0 else 1.0, "<",
        TAIL_P, "TAIL_P", _p),
    "no exponential cutoff (the nested test's p)": _part(
        "no cutoff", lambda f: f.cutoff_p, ">=", TAIL_P, "TAIL_P", _p),
    "no gap in the tail (the largest gap's p)": _part(
        "no gap", lambda f: f.gap_p, ">=", TAIL_P, "TAIL_P", _p),
    f"α below {HEAVY:g}": _part("heavy", lambda f: f.alpha, "<", HEAVY, "HEAVY", _p)}
SpectrumChecks = namedtuple("SpectrumChecks", "name w0 w1 a b i init fit r0 r1")


def _spectrum_checks(sp) -> SpectrumChecks | None:
    """One seed's section-4 runs (``r0`` without decay, ``r1`` with) and their square hidden
    matrix ``name``: its stats without (``a``) and with decay (``b``) and at initialization
    (``i``: norms and ranks), its tail fits at initialization (``init``) and with decay (``fit``)."""
    (w0, r0), (w1, r1) = list(sp.runs.items())[0], list(sp.runs.items())[-1]
    name = "hidden.1" if "hidden.1" in r0.stats else next(iter(r0.stats), None)
    if name is None or name not in r1.stats:
        return None
    return SpectrumChecks(name, float(w0), float(w1), r0.stats[name], r1.stats[name],
                          spectrum_stats(r1.init[name], fit=False), tail_fit(r1.init[name]),
                          tail_fit(r1.final[name]), r0, r1)


def _growth(r) -> float:
    """The least, over run ``r``'s matrices, of the Frobenius norm at the end over at half time."""
    h = r.history
    half = int(np.searchsorted(np.asarray(h.steps), h.steps[-1] / 2))
    return min(h[f"norm {n}"][-1] / h[f"norm {n}"][half] for n in r.stats)


def _ratio(key, top=False):
    """``pair[0]``'s ``key`` over ``pair[1]``'s; ``top``: the spectral norm's ratio over the
    Frobenius norm's (above 1: the top singular value shrank less)."""
    return lambda p: getattr(p[0], key) / getattr(p[1], key) / (p[0].frobenius / p[1].frobenius if top else 1)


RANK_PARTS = {"top singular value's shrink ÷ the Frobenius norm's:": _part(
                  "top", _ratio("spectral", top=True), ">", 1.0, "1: the top shrinks less"),
              "stable rank with ÷ without:": _part("s", _ratio("stable_rank"), "<", 1.0, "1: falls"),
              "effective rank with ÷ without:": _part("e", _ratio("effective_rank"), "<", 1.0,
                                                      "1: falls")}
GROWS = _part("grows", _growth, ">", 1.0, "1: still growing", lambda x: _fmt(x, 3) + "×")
SMALLER = _part("smaller", lambda p: max(p[0].stats[n].frobenius / p[1].stats[n].frobenius
                                         for n in p[1].stats), "<", SHRINK, "SHRINK")


EDGE = evidence.Claim(
    "with decay the trained matrix's largest eigenvalue stands clear of its Marchenko–Pastur "
    "bulk edge further than a random matrix's does, where trained without decay it does not", _MM,
    measure=lambda sv: mp_edge_ratio(sv, (len(sv),) * 2) / mp_null((len(sv),) * 2),
    # the initialization (a draw of the null) reaches about 1; the run without decay may clear it too
    test=evidence.Test(">", EDGE_BAR, "EDGE_BAR: twice the null's furthest"), asserted=False,
    control="the same matrix trained without decay (λ = 0)", fmt=lambda v: _fmt(v, 3) + "×",
    window="(largest eigenvalue ÷ the edge fitted to the median eigenvalue) ÷ that ratio's "
           "furthest over 20 random Gaussian matrices of its shape (mp_null)")


def _alpha(stats) -> str:
    """A tail fit as the rows print it: alpha, and "no power law" where the fit rejects it."""
    return _fmt(stats.tail_alpha, 2) + ("" if stats.tail_power_law else " (no power law)")


def _heavier_gain(pair) -> float:  # [(alpha, test acc)] x 2: the smaller alpha's acc minus the other's
    (a0, t0), (a1, t1) = pair
    return (t1 - t0) * float(np.sign(a0 - a1)) if a0 != a1 else math.nan


LINK = evidence.Claim(
    "a heavier-tailed weight spectrum (smaller α) comes with better test accuracy, among "
    "networks of one depth trained on the same data with their hyperparameters varied",
    "Post-mortem on a deep learning contest: a Simpson's paradox and the complementary roles of scale "
    "metrics versus shape metrics", measure=_heavier_gain, asserted=False, fmt=_signed,
    test=evidence.Test(">", BEST_MARGIN, "the heavier tail's test accuracy minus the other's, BEST_MARGIN"),
    control="the run without decay against the next seed's (the same recipe: the seeds' own "
            "difference, which must fall short of the margin)",
    window="each seed's runs without and with decay, one pair of recipes (not a sweep); α as WeightWatcher "
           "fits it, power law or not (below 2, over a collapsed bulk, Martin & Mahoney's framework "
           "calls a layer over-regularized)")


def spectrum_claims(spectrum: dict) -> list[dict]:
    """Section 4's rows, each judged on every seed of ``spectrum`` (``{seed: run_spectrum}``)."""
    seeds = list(spectrum)
    checks = {s: _spectrum_checks(sp) for s, sp in spectrum.items()}
    if not all(c is not None for c in checks.values()):
        return []
    name, w0, w1 = checks[seeds[0]][:3]
    on = lambda f: {s: f(c) for s, c in checks.items()}  # noqa: E731 (one measure, every seed)
    nxt = dict(zip(seeds, seeds[1:] + seeds[:1]))  # each seed's next: the seeds' own difference
    fits = on(lambda c: c.fit)
    rows = [evidence.joint(
        "without decay the norms still grow in the second half of training; decay leaves every "
        "matrix smaller", _OWN,
        {"without decay, least end ÷ half-time norm over the matrices:": evidence.judge(
            GROWS, on(lambda c: c.r0), on(lambda c: c.r1)),
         "with ÷ without decay, largest over the matrices:": evidence.judge(
            SMALLER, on(lambda c: (c.r1, c.r0)), {s: (checks[nxt[s]].r0, c.r0) for s, c in checks.items()})},
        control=f"for the growth, the run with decay (λ {_fmt(w1, 2)}); for the norms, the next "
                "seed's run without decay in place of the decayed run (the seeds' own difference)",
        window=f"every matrix, the second half of training; with decay below {SHRINK:g}× "
               f"without (λ {_fmt(w0, 2)})"),
        evidence.joint(
        "decay shrinks the top singular value less than the Frobenius norm: the stable and "
        "effective ranks fall", _OWN,
        {k: evidence.judge(part, on(lambda c: (c.b, c.a)), on(lambda c: (c.i, c.a)))
         for k, part in RANK_PARTS.items()},
        control="the matrix at initialization in place of the decayed one (smaller than the "
                "trained one too, with nothing learned)", window=f"{name}, λ {_fmt(w0, 2)} → {_fmt(w1, 2)}"),
        evidence.joint(
        f"with decay the spectrum of the trained matrix has a power-law tail with α below {HEAVY:g} "
        "(a heavy-tailed phase), which the random initialization does not have", _MM,
        {f"{k}:": evidence.judge(t, fits, on(lambda c: c.init)) for k, t in TAIL_TESTS.items()},
        control="the same matrix at initialization, each test alike (it must fail the first)",
        window=f"{name}'s eigenvalues above the fitted x_min, with decay (λ {_fmt(w1, 2)}); every "
               "seed; a power law only where all four parts hold", asserted=False,
        note="tail α with decay " + plots.spread({s: f.alpha for s, f in fits.items()}, _fmt)),
        evidence.judge(EDGE, on(lambda c: c.r1.final[name]), on(lambda c: c.r0.final[name])).row()]
    acc = on(lambda c: [(c.a.tail_alpha, c.r0.test_acc), (c.b.tail_alpha, c.r1.test_acc)])
    rows.append(evidence.joint(LINK.statement, LINK.paper, {"": evidence.judge(LINK, acc, {
        s: (acc[s][0], acc[nxt[s]][0]) for s in seeds})}, control=LINK.control, asserted=False,
        window=f"{name}, λ {_fmt(w0, 2)} → {_fmt(w1, 2)}; {LINK.window}", note="α without → with decay: "
        + "; ".join(f"{_alpha(c.a)} → {_alpha(c.b)} (seed {s})" for s, c in checks.items())))
    return rows


def page_claims(grid: Decoupling | None = None, live=None, equilibria=None, clock=None,
                spectrum=None, window=None, symmetry=None, faster=None) -> list[dict]:
    """The chapter's claims table: ``grid`` is the precomputed payload (its rows are
    :func:`grid_claims`); ``live``, ``equilibria`` and ``faster`` (lists of runs: section 2's and
    their controls), ``symmetry``, ``clock``, ``window`` and ``spectrum`` are the page's
    live runs as ``{seed: result}`` (:func:`claim_runs`); any may be left out. Rows that the
    prose states as facts are asserted; the others show their verdict, which the prose glues."""
    rows = grid_claims(grid) if grid is not None else []
    if live is not None:
        live = plots.per_seed(live, "live", "wdc.claim_runs")
        if all(k in g.grids for g in live.values() for k in DECOUPLING):
            rows.append(evidence.judge(L2_FAILS_LIVE, {s: _GridSeed((g, 0, "adam_l2")) for s, g in live.items()},
                                       {s: _GridSeed((g, 0, "adamw")) for s, g in live.items()}).row())
    if equilibria is not None:
        equilibria = plots.per_seed(equilibria, "equilibria", "wdc.claim_runs")
    if equilibria is not None and faster is not None:
        faster = plots.per_seed(faster, "faster", "wdc.claim_runs")
        for i, r0 in enumerate(next(iter(equilibria.values()))):
            runs = {s: e[i] for s, e in equilibria.items() if e[i].layers and faster[s][i].layers}
            if len(runs) < len(equilibria):
                continue
            pairs = {s: (faster[s][i], r) for s, r in runs.items()}
            judged = [(c, pairs) for c in _equilibrium_rows(r0.optimizer)]
            if r0.optimizer == "adamw":
                judged = [(SAME_RMS_ROW, runs), *judged,
                          (replace(RELAX, window=RELAX.window + f"; τ = {r0.tau:,.0f} steps"), pairs)]
            rows += [evidence.judge(c, runs, control).row() for c, control in judged]
    if symmetry is not None and equilibria is not None:
        rows += symmetry_claims(equilibria, plots.per_seed(symmetry, "symmetry", "wdc.claim_runs"))
    if clock is not None:
        clock = plots.per_seed(clock, "clock", "wdc.claim_runs")
        c0 = next(iter(clock.values()))
        rows.append(evidence.judge(replace(
            CLOCK, window=CLOCK.window + f", the 3 runs at ηλ = {_fmt(c0.product, 2)}; the "
            f"control at {c0.contrast:g}× that product"), clock, clock).row())
    if window is not None:
        rows += window_claims(window)
    if spectrum is not None:
        rows += spectrum_claims(plots.per_seed(spectrum, "spectrum", "wdc.claim_runs"))
    return rows
