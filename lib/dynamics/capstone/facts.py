"""One network, six phenomena, the page's numbers: per section what the prose glues
(``*_facts``, as the page prints them), the sentences they are made of and the steps the
plateau rows of :mod:`.claims` read on a run (:func:`plateau_part`)."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from itertools import groupby

import numpy as np

from ..book import and_list, glue_texts
from ..grokking.science import CHANCE_MARGIN, phase_of, plateau_steps
from ..plots import number
from .experiments import CapstoneGrid, GridRow, clock_fit, plateau_window
from .science import (
    SETTLE_NOT, SETTLE_SHORT, SETTLE_TOO_LITTLE, SETTLE_YES, course_after_peak, equilibrium_rms,
    update_collapse,
)
from .updates import decay_term_text, short_of_flat_text, step_facts

__all__ = ["rounding_numbers", "timeline_facts", "update_event_sentence", "init_facts",
           "clock_facts", "settle_counts", "settle_text", "clock_order", "clock_order_text",
           "optimizer_facts", "lottery_facts", "collapse_facts", "rounding", "rounding_factor",
           "rounding_text", "chance_text", "nc1_course_text", "etf_range_text", "plateau_part",
           "clock_order_seeds_text", "grid_order_facts", "NC1_DIP", "below_chance_text",
           "grid_muon_text", "PLATEAU_PARTS", "range_text", "etf_start_text", "rms_start_text",
           "leave_bar_text", "spread_text", "nc1_range_text", "plateau_cells", "clock_slope_text",
           "CLOCK_BAND", "CLOCK_R2", "grok_vs_text", "clock_margin_text", "UPDATE_EVENT_WHY",
           "lottery_sentence", "muon_phase", "decay_term_text",
           "short_of_flat_text"]


def _show(t):
    """A step, or the words the page uses when there is none."""
    return "none within the budget" if t is None else t


def _at(r, key: str, step) -> float:
    """``key`` of run ``r``'s timeline (or history) at ``step``; NaN where not evaluated."""
    source = r.timeline if key in r.timeline else r.history
    return dict(zip(r.timeline["step"], source[key])).get(step, float("nan"))


def _move(r, key: str, a, b, digits: int = 2) -> str:
    return f"from {number(_at(r, key, a), digits)} to {number(_at(r, key, b), digits)}"


def update_event_sentence(r) -> str:
    """The update's rank after the fit step: its sharpest fall (:func:`~.science.update_collapse`)
    and, where it collapses, what NC1, the loss and the RMS do around it."""
    tl = r.timeline
    ev = update_collapse(tl["step"], tl["update_rank"], r.fit_step)
    if ev["step"] is None:
        return "the run has too few evaluations after the fit step to follow it"
    steps, s = tl["step"], ev["step"]
    i = steps.index(s)
    prev, nxt = steps[i - 1], steps[min(i + 1, len(steps) - 1)]
    fall = f"from {number(ev['before'], 2)} to {number(ev['rank'], 2)}"
    if not ev["collapses"]:
        d3 = lambda v: f"{v:.3f}"  # noqa: E731  (one digit count in the sentence)
        slow = (f"falls slowly, by at most {1 - ev['rank'] / ev['before']:.1%} between two "
                f"evaluations (from {d3(ev['before'])} to {d3(ev['rank'])} at step {s})")
        known = [(t, v) for t, v in zip(steps, tl["update_rank"])
                 if t >= r.fit_step and math.isfinite(v) and v > 0]
        (t0, v0), (tp, vp) = known[0], max(known, key=lambda kv: kv[1])
        if d3(vp) == d3(v0):  # no rise the page could print
            return "it " + slow
        return (f"it first rises, from {d3(v0)} at step {t0} to {d3(vp)} at step "
                f"{tp}, then {slow}, to {d3(known[-1][1])} at the end")
    when = ("after the grok step" if r.grok_step is not None and s > r.grok_step else
            "before the grok step" if r.grok_step is not None else "in a run that never groks")
    return (f"at step {s}, {when}, the update of the hidden matrix suddenly concentrates in "
            f"fewer directions: its rank / n falls {fall} since the evaluation before; from that "
            f"evaluation (step {prev}) to the next (step {nxt}) NC1 goes "
            f"{_move(r, 'nc1', prev, nxt, 3)}, the training loss "
            f"{_move(r, 'train_loss', prev, nxt, 3)} and the weight RMS "
            f"{_move(r, 'weight_rms', prev, nxt, 3)}. " + UPDATE_EVENT_WHY)


# said only where the run has such an event (update_event_sentence): the page's fixed text
# around it names the slingshot with its citation, true of a run with or without one
UPDATE_EVENT_WHY = (
    "Nothing in the recipe changes during the run (a constant learning rate and weight decay, "
    "no schedule, no warm-up), so the fall is the optimizer's own doing. One way it happens: "
    "late in training, with the loss near its floor, Adam divides each gradient coordinate by "
    "a running average of its size, and coordinates whose gradients had become tiny can take "
    "a large step all at once, so that the update lies along fewer directions")


NC1_DIP = 0.05  # "with a dip": after the fit step NC1 falls this fraction below an earlier value


def nc1_dip(steps, values, after) -> dict | None:
    """The largest fall of a curve below its running maximum from step ``after`` on:
    ``{"peak", "peak_step", "low", "low_step"}``, or None where it never falls more than
    NC1_DIP below an earlier value (NaNs skipped)."""
    best, top = None, None
    for t, v in zip(steps, values):
        if after is None or t < after or not math.isfinite(v):
            continue
        if top is None or v > top[1]:
            top = (t, v)
        elif best is None or v / top[1] < best["low"] / best["peak"]:
            best = dict(peak=top[1], peak_step=top[0], low=v, low_step=t)
    return best if best is not None and best["low"] < (1 - NC1_DIP) * best["peak"] else None


def nc1_course_text(r, fit, leave, grok) -> str:
    """What NC1 on the training set does from the fit step, with its values, and its largest
    dip where a rising or level NC1 has one (:func:`nc1_dip`)."""
    three = lambda v: number(v, 3)  # noqa: E731
    tl = r.timeline
    if fit is None or not tl["nc1"]:
        return "NC1 on the training set has no fit step to be read from"
    v0, end = _at(r, "nc1", fit), tl["nc1"][-1]
    word = ("rises" if end > 1.1 * v0 else "falls" if end < v0 / 1.1 else "stays level")
    dip = nc1_dip(tl["step"], tl["nc1"], fit) if word != "falls" else None
    if dip is not None:
        word = (("rises overall" if word == "rises" else word) + f", with a dip from "
                f"{three(dip['peak'])} at step {dip['peak_step']} to {three(dip['low'])} at "
                f"step {dip['low_step']}")
    init = tl["nc1"][0]
    first = (f"NC1 on the training set first falls, from {three(init)} at step {tl['step'][0]} "
             f"to {three(v0)} at the fit step, while the network memorizes; from there it"
             if math.isfinite(init) and init > 1.1 * v0 else "NC1 on the training set")
    return (f"{first} {word}: {three(v0)} at the fit step, "
            f"{three(_at(r, 'nc1', leave))} when test accuracy leaves chance, "
            f"{three(_at(r, 'nc1', grok))} at the grok step and {three(end)} at the end "
            f"({number(end / v0, 2)} times its value at the fit step)")


def _sig(v: float, how, digits: int = 3) -> float:
    """``v`` rounded to ``digits`` significant digits by ``how`` (math.floor or math.ceil),
    past float noise (0.97 stays 0.97)."""
    if v == 0 or not math.isfinite(v):
        return v
    unit = 10.0 ** (math.floor(math.log10(abs(v))) - digits + 1)
    return how(round(v / unit, 6)) * unit


def range_text(values) -> str | None:
    """``values`` (NaNs skipped) as a range: 3 significant digits, the lower bound rounded
    down and the upper up, so that the printed range holds every value (number(1.039, 2)
    printed "1"); None without a value."""
    v = [x for x in values if math.isfinite(x)]
    if not v:
        return None
    lo, hi = number(_sig(min(v), math.floor), 3), number(_sig(max(v), math.ceil), 3)
    return f"at {lo}" if lo == hi else f"between {lo} and {hi}"


def etf_range_text(r) -> str:
    """The class means' distance to a simplex ETF (0 for a collapsed geometry) after the fit
    step, as a range (:func:`range_text`)."""
    tl, fit = r.timeline, r.fit_step
    said = range_text([d for s, d in zip(tl["step"], tl["etf_distance"])
                       if fit is not None and s >= fit])
    return said or "not measured after a fit step"


RISE_SAID = 1.01  # a curve "rises above its first value" when its peak is this factor above it


def etf_start_text(r) -> str:
    """The ETF distance at the first evaluation (random features) against its peak: whether
    training first moves the class means further from a simplex ETF than they started."""
    known = [(s, d) for s, d in zip(r.timeline["step"], r.timeline["etf_distance"])
             if math.isfinite(d)]
    if not known:
        return "the ETF distance is not measured"
    (s0, d0), (sp, dp) = known[0], max(known, key=lambda sd: sd[1])
    start = f"{d0:.3f} at step {s0}"  # three decimals, as the peak (0.890, not 0.89)
    if dp > RISE_SAID * d0:
        return (f"it starts at {start}, with the initial random features, and peaks at "
                f"{dp:.3f} at step {sp}: training first takes the class means further "
                "from a simplex ETF than the random features had them")
    return f"it starts at {start}, with the initial random features, and never rises above it"


EQ_NEAR = 0.1  # the weight RMS "starts on the equilibrium line" within this fraction of it


def rms_start_text(rms0: float, peak: float, eq: float) -> str:
    """Where the weight RMS starts (``rms0``) against AdamW's equilibrium ``eq``, and how far
    above that line its peak (``peak``) takes it."""
    off = rms0 / eq - 1
    if not (math.isfinite(rms0) and eq > 0):
        return "the weight RMS at the start is not recorded"
    where = (f"the initialization already sits on it (the weight RMS starts at "
             f"{number(rms0, 3)}, within {abs(off):.1%} of it)" if abs(off) <= EQ_NEAR else
             f"the weight RMS starts at {number(rms0, 3)}, {number(rms0 / eq, 2)} times the "
             "equilibrium")
    return where + (f", and training takes the weight RMS away from it, to a peak "
                    f"{number(peak / eq, 2)} times the equilibrium")


def timeline_facts(first, nodecay=None) -> dict:
    """Section 1's numbers and sentences; ``nodecay``: the same run without weight decay, said
    over the same steps."""
    s, tl, cfg = first.summary(), first.timeline, first.config
    a, b = plateau_window(first)
    leave = plateau_part(first, "plateau")[1]
    rms = course_after_peak(tl["step"], tl["weight_rms"])
    end = number(rms["end"], 3)
    after = {"still falling": ", still falling at the end",  # after the RMS's minimum
             "stays": f", and stays there ({end} at the end)",
             "climbs back": f", then climbs back to {end} by the end"}[rms["course"]]
    # to three decimals, as each other (0.4998 is not 0.5)
    three = {f"{short}_{when}": f"{_at(first, key, t):.3f}" for short, key in
             (("four", "fourier"), ("rank", "weight_rank")) for when, t in
             (("fit", a), ("grok", b), ("leave", leave))}
    eq = equilibrium_rms(cfg.lr, cfg.weight_decay)
    rms0 = next((v for v in tl["weight_rms"] if math.isfinite(v)), math.nan)
    out = dict(t_fit=s["fit_step"], t_grok=s["grok_step"], tau=s["tau"],
               plateau_end="the grok step" if first.grok_step is not None else
               f"the end of the run, step {b} (it does not grok)", **three,
               below=below_chance_text(first), nc1=nc1_course_text(first, a, leave, b),
               etf=etf_range_text(first), etf_start=etf_start_text(first),
               rms_max=rms["peak"], t_rms_max=rms["peak_step"],
               rms_min=rms["min"], t_rms_min=rms["min_step"], rms_end=rms["end"],
               rms_after=after, rms_eq=eq, rms_start=rms_start_text(rms0, rms["peak"], eq),
               leave_bar=leave_bar_text(cfg.p), event=update_event_sentence(first))
    if nodecay is not None:
        out["nodecay"] = (f"moves its Fourier concentration {_move(nodecay, 'fourier', a, b)} "
                          f"and its rank {_move(nodecay, 'weight_rank', a, b)}")
    return glue_texts(**out)


def init_facts(inits: list[GridRow], seed: int) -> dict:
    """Section 2: the fit and grok steps at the smallest and largest initial scale."""
    by = {r.init_scale: r for r in inits if r.seed == seed}
    lo, hi = min(by), max(by)
    return glue_texts(seed0=seed, s_lo=lo, s_hi=hi, g_lo=_show(by[lo].grok_step),
                      g_hi=_show(by[hi].grok_step), f_lo=_show(by[lo].fit_step),
                      f_hi=_show(by[hi].fit_step))


def settle_counts(clock: list[GridRow]) -> dict:
    """How many cells' weight RMS settles (:func:`~.science.settle`), has too little to relax
    (nothing to time, not a failure to settle) or has not settled; ``unknown``: rows that
    record no reason (a grid computed before the reason was kept)."""
    why = [r.settle or (SETTLE_YES if r.settle_step is not None else None) for r in clock]
    return dict(settled=why.count(SETTLE_YES), too_little=why.count(SETTLE_TOO_LITTLE),
                not_settled=why.count(SETTLE_NOT) + why.count(SETTLE_SHORT),
                unknown=why.count(None))


def settle_text(clock: list[GridRow]) -> str:
    """The weight RMS's relaxation over the clock grid in words, each case counted apart."""
    c = settle_counts(clock)
    cells = lambda k: f"{k} cell" + ("" if k == 1 else "s")  # noqa: E731
    return (f"it settles, with a relaxation time to read, in {cells(c['settled'])}; in "
            f"{cells(c['too_little'])} its peak is within 30% of its value at the end, too "
            f"little to relax for a relaxation time to be read (not a failure to settle); in "
            f"{cells(c['not_settled'])} it is still relaxing when the budget ends"
            + (f"; {cells(c['unknown'])} record no reason" if c["unknown"] else ""))


def clock_order(clock: list[GridRow]) -> dict:
    """The median grok step at each τ (cells that grok), ``pairs`` as printed, and ``orders``:
    whether it never falls as τ grows."""
    taus = sorted({r.tau for r in clock if r.grok_step is not None})
    med = [float(np.median([r.grok_step for r in clock
                            if r.tau == t and r.grok_step is not None])) for t in taus]
    return dict(taus=taus, grok=med, orders=len(med) >= 2 and all(
        b >= a for a, b in zip(med, med[1:])),
        pairs=", ".join(f"{number(g, 3)} at τ = {number(t, 3)}" for t, g in zip(taus, med)))


def clock_order_text(clock: list[GridRow]) -> str:
    """Section 3's last sentence, from :func:`clock_order`."""
    o = clock_order(clock)
    seeds = len({r.seed for r in clock})
    grid = f"{len(clock)} cells on {seeds} seed" + ("" if seeds == 1 else "s")
    if len(o["taus"]) < 2:
        return ("too few cells grok at different τ to tell whether the clock even orders the "
                f"grok steps here ({grid})")
    if o["orders"]:
        return (f"on this grid ({grid}) the grok step never falls as τ grows ({o['pairs']}): "
                "the clock orders the grok steps of an MLP without normalization, which says "
                "that the same balance of decay against updates acts here, not that its "
                "constant carries over")
    return (f"on this grid ({grid}) the grok step does not rise steadily with τ ({o['pairs']})"
            # one seed's few cells: a single fall may be a seed's draw
            + (": a grid this small cannot say whether the clock orders the grok steps (the "
               "precomputed grid, below, reads the order seed by seed)" if seeds < 3
               else ": in this MLP without normalization the clock does not order the grok "
                    "steps, let alone set them"))


def clock_order_seeds_text(clock: list[GridRow]) -> str:
    """On how many seeds the grok steps never fall as τ grows, and each seed where they do."""
    seeds = sorted({r.seed for r in clock}, key=str)
    order = {s: clock_order([r for r in clock if r.seed == s]) for s in seeds}
    k = sum(o["orders"] for o in order.values())
    falls = "; ".join(f"on seed {s} it falls ({o['pairs']})"
                      for s, o in order.items() if not o["orders"])
    return (f"the grok step never falls as τ grows on {k} of {len(seeds)} seed"
            + ("" if len(seeds) == 1 else "s") + (f"; {falls}" if falls else ""))


def grid_order_facts(clock: list[GridRow]) -> dict:
    """The precomputed clock grid's order of the grok steps, seed by seed."""
    return glue_texts(grid_order=clock_order_seeds_text(clock))


def plateau_cells(cells: list[GridRow]) -> list[GridRow]:
    """The cells with their grok step replaced by the wait after the fit step, grok step −
    fit step (None where either is missing or the grok step is not after the fit step), so
    that :func:`~.experiments.clock_fit` fits that wait on τ. The clock predicts the wait; the
    grok step adds the fit step, which does not grow in proportion to τ, and a fit of
    log(fit + c τ) on log τ has a slope below 1 even where the wait is exactly c τ."""
    return [replace(r, grok_step=(r.grok_step - r.fit_step if r.grok_step is not None
                                  and r.fit_step is not None and r.grok_step > r.fit_step
                                  else None)) for r in cells]


CLOCK_BAND = 4 / 3  # the clock row's band (claims.CLOCK_SLOPE): a slope from 3/4 to 4/3
CLOCK_R2 = 0.8      # ... and its bar on r² (claims.CLOCK_R2): below it no slope is read


def clock_slope_text(slope: float, r2: float) -> str:
    """What a log-log slope of the wait after the fit step on τ says, against the claims
    row's band 3/4 to 4/3 around the clock's slope of 1; a fit with r² below the row's bar
    CLOCK_R2 (or none) explains too little of the waits' variance for its slope to say
    anything, a trend included."""
    if not math.isfinite(slope):
        return "too few cells grok to fit a slope"
    if not (math.isfinite(r2) and r2 >= CLOCK_R2):
        return (f"but that r² is below the claims row's bar of {CLOCK_R2:g}: the fit explains "
                "too little of the waits' variance to read a slope from, so on this grid the "
                "slope says neither that the wait grows in proportion to τ nor that it grows "
                "more slowly")
    band = f"the band from {number(1 / CLOCK_BAND, 3)} to {number(CLOCK_BAND, 3)} around 1"
    if 1 / CLOCK_BAND <= slope <= CLOCK_BAND:
        return (f"within {band}: the wait grows in proportion to τ, as it would if the clock "
                "alone set it")
    return (f"{'below' if slope < 1 else 'above'} {band}: the wait grows "
            f"{'more slowly' if slope < 1 else 'faster'} than τ")


def grok_vs_text(fit: dict, grok: dict) -> str:
    """The grok step's log-log slope on τ against the wait's (:func:`clock_fit`'s ``fit`` of
    :func:`plateau_cells` and ``grok`` of the cells themselves): lower, as the fit step it
    adds predicts, or not; neither is read where either fit's r² is below CLOCK_R2."""
    if not math.isfinite(grok["slope"] - fit["slope"]):
        return "not fitted"
    loose = [name for name, f in (("the wait's", fit), ("the grok step's", grok))
             if not (math.isfinite(f["r2"]) and f["r2"] >= CLOCK_R2)]
    if loose:
        return ("not compared with the wait's, as " + (
            f"both fits have r² below {CLOCK_R2:g}, too loose for their slopes to be read"
            if len(loose) == 2 else
            f"{loose[0]} fit has r² below {CLOCK_R2:g}, too loose for its slope to be read"))
    if grok["slope"] < fit["slope"]:
        return "lower than the wait's, as the fit step it adds predicts"
    return "not lower than the wait's, though the fit step it adds pulls it down"


def _slope_margin(slope: float) -> float:
    """How far inside the band 3/4 to 4/3 a slope sits, as the factor to its nearest edge
    (below 1: outside the band)."""
    return min(slope * CLOCK_BAND, CLOCK_BAND / slope) if slope > 0 else 0.0


def clock_margin_text(clock: list[GridRow], factor: float = 1.0) -> str:
    """The clock row's margin, seed by seed: each seed's log-log slope of the wait after the
    fit step on τ and its r² against the band 3/4 to 4/3 and the bar CLOCK_R2, the seed
    nearest an edge and by what factor; given ``factor`` > 1 (what rounding alone does to a
    grok step, :func:`rounding_factor`), the slope nearest an edge once a single grok step
    of that seed is multiplied or divided by it."""
    seeds = sorted({r.seed for r in clock}, key=str)
    fits = {s: clock_fit(plateau_cells([r for r in clock if r.seed == s])) for s in seeds}
    fits = {s: f for s, f in fits.items() if math.isfinite(f["slope"])}
    if not fits:
        return "no seed has enough waits to fit a slope"
    lo, hi = number(1 / CLOCK_BAND, 3), number(CLOCK_BAND, 3)
    each = and_list([f"{number(f['slope'], 3)} on seed {s} (r² {number(f['r2'], 3)})"
                     for s, f in fits.items()])
    near = min(fits, key=lambda s: _slope_margin(fits[s]["slope"]))
    slope = fits[near]["slope"]
    edge = lo if slope < 1 else hi
    inside = _slope_margin(slope) >= 1
    out = (f"the wait's slopes are {each}, against the band from {lo} to {hi} and the bar "
           f"r² ≥ {CLOCK_R2:g}; the nearest to an edge, seed {near}'s {number(slope, 3)}, is "
           + (f"a factor {number(_slope_margin(slope), 3)} inside" if inside else
              f"outside, by a factor {number(1 / _slope_margin(slope), 3)},")
           + f" the band's edge at {edge}")
    if factor <= 1 or not inside:
        return out
    moved = []  # (slope, seed) with one grok step of that seed moved by the factor
    for s in fits:
        mine = [r for r in clock if r.seed == s]
        moved += [(clock_fit(plateau_cells([replace(q, grok_step=round(q.grok_step * k))
                                            if j == i else q for j, q in enumerate(mine)])
                             )["slope"], s)
                  for i, r in enumerate(mine) if r.grok_step is not None
                  for k in (factor, 1 / factor)]
    worst, seed = min(((m, s) for m, s in moved if math.isfinite(m)),
                      key=lambda ms: _slope_margin(ms[0]), default=(slope, near))
    return out + (f". Moving a single grok step by the factor rounding alone produces, "
                  f"{number(factor, 3)}, can take seed {seed}'s slope to {number(worst, 3)}, "
                  + ("still inside the band: the margin holds, though narrowly"
                     if _slope_margin(worst) >= 1 else
                     "outside the band: on that seed the verdict is within what rounding "
                     "alone can move"))


def clock_facts(clock: list[GridRow], lrs, weight_decays) -> dict:
    """Section 3: the grid's axes, the log-log fits on τ of the wait after the fit step
    (:func:`plateau_cells`, the clock's prediction) and of the grok step itself, the weight
    RMS, the order."""
    fit, grok = clock_fit(plateau_cells(clock)), clock_fit(clock)
    return glue_texts(slope=fit["slope"], r2=fit["r2"], n_ok=fit["n"], n_cells=len(clock),
                      n_bad=len(fit["failed"]) + len(fit["off"]),
                      slope_says=clock_slope_text(fit["slope"], fit["r2"]),
                      grok_slope=grok["slope"], grok_vs=grok_vs_text(fit, grok),
                      grok_r2=grok["r2"], settle=settle_text(clock),
                      grok_spread=spread_text([r.grok_step for r in clock]),
                      order=clock_order_text(clock), etas=list(lrs), lams=list(weight_decays))


def optimizer_facts(opt: dict, lrs: dict) -> dict:
    """Section 4: each optimizer's best run and, at each learning rate tried (``lrs``), AdamW's
    grok step, its weight decay λ (scaled against η to keep ηλ: λ = 1/(η τ)) and Muon's final
    test accuracy; and what the section says of the update of the hidden matrix
    (:func:`~.updates.step_facts`)."""
    a, m = opt["adamw"]["best"], opt["muon"]["best"]
    return dict(glue_texts(
        lr_a=a.config.lr, lr_m=m.config.muon_lr, g_a=_show(a.grok_step), muon_phase=muon_phase(m),
        acc_m=f"{m.history.last('test_acc'):.0%}", f_a=_show(a.fit_step), f_m=_show(m.fit_step),
        muon_lrs=lrs["muon"], adam_lrs=lrs["adamw"],
        g_a_all=[_show(s["grok_step"]) for _, s in opt["adamw"]["tried"]],
        lam_a_all=[1 / (lr * s["tau"]) for lr, s in opt["adamw"]["tried"]],
        g_a_spread=spread_text([s["grok_step"] for _, s in opt["adamw"]["tried"]]),
        acc_m_all=[f"{s['final_test_acc']:.0%}" for _, s in opt["muon"]["tried"]]),
        **step_facts(a, m))


def spread_text(steps) -> str:
    """How far apart grok steps fall: the largest over the smallest, or which never grok."""
    if len(steps) < 2:
        return "a single run, with nothing to compare"
    if any(t is None for t in steps):
        return (f"not all within the budget: {sum(t is None for t in steps)} of {len(steps)} "
                "never grok")
    return f"within a factor {number(max(steps) / min(steps), 3)} of one another"


def lottery_facts(lot: dict, p: int | None = None) -> dict:
    """Section 5: each sparse arm's fit and grok steps, the lottery sentence and, given the
    modulus ``p``, the random mask against chance."""
    arms = lot["arms"]
    extra = {} if p is None else dict(acc_rnd=chance_text(lot, p))
    return glue_texts(density=f"{lot['density']:.0%}", k=lot["rewind_step"],
                      lottery=lottery_sentence(lot), **extra,
                      **{f"{k}_{name}": _show(arms[a][f"{k}_step"]) for name, a in (
                          ("t0", "ticket, rewound to θ₀"), ("tk", "ticket, rewound to θ_k"),
                          ("rnd", "random mask, θ₀"), ("new", "ticket, reinitialized"))
                         for k in ("fit", "grok")})


def nc1_range_text(steps, values) -> str:
    """NC1's range over a run: its highest and its lowest value with their steps, printed as
    the page prints NC1 (3 significant digits) and, where it never falls below 1 (the
    within-class spread at least of the size of the between-class spread), that it stays far
    from the 0 of collapsed features."""
    known = [(t, v) for t, v in zip(steps, values) if math.isfinite(v)]
    if not known:
        return "not measured"
    (t_hi, hi), (t_lo, lo) = (max(known, key=lambda tv: tv[1]),
                              min(known, key=lambda tv: tv[1]))
    return (f"between its highest, {number(hi, 3)} at step {t_hi}, and its lowest, "
            f"{number(lo, 3)} at step {t_lo}"
            + (", never below 1: far from the 0 of collapsed features" if lo >= 1 else ""))


def collapse_facts(coll: dict, r=None) -> dict:
    """Section 6: NC1's course; given the run ``r``, NC1 at its first evaluation."""
    falls = coll["nc1_falls"]
    extra = {}
    if r is not None and r.timeline["nc1"]:
        extra["nc1_start"] = f"{number(r.timeline['nc1'][0], 3)} at step {r.timeline['step'][0]}"
        # over the whole run, against the 0 of collapsed features
        extra["nc1_range"] = nc1_range_text(r.timeline["step"], r.timeline["nc1"])
    return glue_texts(nc1_fit=coll["nc1_fit"], nc1_grok=coll["nc1_grok"],
                      nc1_end=coll["nc1_end"], **extra,
                      nc1_falls="never" if falls is None else f"at step {falls}")


def leave_bar_text(p: int) -> str:
    """The bar test accuracy crosses when it "leaves chance" (grokking's ``plateau_steps``):
    chance, 1/p, plus CHANCE_MARGIN."""
    return (f"above 1/p + {CHANCE_MARGIN * 100:g} points = {1 / p + CHANCE_MARGIN:.1%}")


def below_chance_text(r) -> str:
    """Where test accuracy sits against chance, 1/p, before it leaves chance: the first and
    last evaluation below it and the longest stretch at its lowest."""
    chance = 1.0 / r.config.p
    leave = plateau_steps(r.history, r.config.p).leave
    seen = [(t, a) for t, a in zip(r.history.steps, r.history["test_acc"])
            if leave is None or t < leave]
    below = [(t, a) for t, a in seen if a < chance]
    if not below:
        return f"at or above chance (1/p = {chance:.1%})"
    low = min(a for _, a in below)
    at_low = max(([t for t, _ in run] for is_low, run in groupby(seen, key=lambda ta: ta[1] == low)
                  if is_low), key=len)
    return (f"below chance (1/p = {chance:.1%}) from step {below[0][0]} to step {below[-1][0]}, "
            f"at its lowest, {low:.1%}, " + (f"at step {at_low[0]}" if len(at_low) == 1 else
                                             f"at every evaluation from step {at_low[0]} to step "
                                             f"{at_low[-1]}"))


_PHASE_WORDS = {
    "memorization": "fits its training pairs and its test accuracy has stopped short "
                    "(memorization)",
    "unfinished": "is still climbing when the budget ends (unfinished: a longer budget could "
                  "still see it generalize)",
    "confusion": "does not even fit its training pairs (confusion)",
    "un-learning": "rose and fell back (un-learning)",
    "diverged": "diverged",
}


def lottery_sentence(lot: dict) -> str:
    """The arms that generalize and when, each other by grokking's ``phase_of``."""
    arms = lot["arms"]
    dense = arms["dense"]["grok_step"]
    grokked = {n: a["grok_step"] for n, a in arms.items() if n != "dense" and a["grok_step"]}
    rest = {n: a.get("phase", "memorization" if a["fit_step"] is not None else "confusion")
            for n, a in arms.items() if n != "dense" and n not in grokked}
    said_rest = "; ".join(f"{n} {_PHASE_WORDS.get(ph, ph)}" for n, ph in rest.items())
    if not grokked:
        return ("none of the sparse networks generalizes within the budget: " + said_rest
                + ("; at this scale the mask cut from the grokked network does not carry the "
                   "generalizing solution back to the start of training"
                   if "unfinished" not in rest.values() else ""))
    said = ", ".join(f"{n} at step {t}" for n, t in grokked.items())
    faster = [n for n, t in grokked.items() if dense is not None and t < dense]
    return (f"the sparse networks that generalize within the budget do so {said}; "
            + (f"sooner than the dense run: {', '.join(faster)}" if faster else
               "none sooner than the dense run")
            + (f"; of the others, {said_rest}" if rest else ""))


def chance_text(lot: dict, p: int) -> str:
    """Where the random mask's final test accuracy sits against chance, 1/p."""
    acc, chance = lot["arms"]["random mask, θ₀"]["final_test_acc"], 1.0 / p
    where = ("below chance" if acc < chance else "at about chance" if acc < chance + 0.05
             else "above chance")
    return f"{acc:.0%}, {where} (1/p = {chance:.1%})"


def grid_muon_text(payload: CapstoneGrid) -> str:
    """How often the grid's Muon runs grok within its budget, where, and the others' phases."""
    muon = [r for r in payload.rows if r.optimizer == "muon"]
    grok = [r for r in muon if r.grok_step is not None]
    each = "; ".join(f"seed {r.seed} at x{r.init_scale:g}, λ = {r.weight_decay:g}, at "
                     f"step {r.grok_step}" for r in grok)
    how = ("Muon never groks within this budget" if not grok else
           "Muon rarely groks at this budget" if len(grok) <= len(muon) // 6 else
           "Muon groks in some cells at this budget")
    rest = Counter(r.phase for r in muon if r.grok_step is None)
    words = {"unfinished": "still climbing when it ends", "memorization": "stopped short"}
    others = ", ".join(f"{n} {words.get(ph, ph)}" for ph, n in rest.most_common())
    return (f"{how}: {len(grok)} of the grid's {len(muon)} Muon runs grok within it"
            + (f" ({each})" if grok else "") + (f"; of the others, {others}" if others else ""))


def rounding(payload: CapstoneGrid | None, firsts: dict, inits=()) -> dict:
    """The same AdamW cell made on this page and in the grid: ``{(seed, init_scale): (here,
    grid, how)}`` grok steps, ``how`` "alone" for section 1's runs (``firsts``), "together"
    for the live sweep's own (``inits``, trained batched where it can; the grid's cells are
    trained one at a time). Empty for a grid made at another budget. The engines round
    differently, and that alone moves a grok step."""
    if not payload or not firsts:
        return {}
    ref = next(iter(firsts.values()))
    c, steps = ref.config, list(ref.history.steps)
    if c.optimizer != "adamw":
        return {}
    grid = {(row.seed, row.init_scale): row.grok_step
            for row, curve in zip(payload.rows, payload.curves)
            if row.optimizer == "adamw" and row.weight_decay == c.weight_decay
            and row.lr == c.lr and curve.steps == steps}
    out = {(s, r.config.init_scale): (r.grok_step, grid[s, r.config.init_scale], "alone")
           for s, r in firsts.items() if (s, r.config.init_scale) in grid and r.config == c}
    for row in inits:
        key = (row.seed, row.init_scale)
        if key in grid and key not in out:
            out[key] = (row.grok_step, grid[key], "together")
    return out


def rounding_factor(pairs: dict) -> float:
    """The largest ratio, either way, between :func:`rounding`'s grok steps (1 without one)."""
    return max((max(a, b) / min(a, b) for a, b, *_ in pairs.values() if a and b), default=1.0)


def rounding_text(pairs: dict) -> str:
    """:func:`rounding` in words, each kind of pair apart, and :func:`rounding_factor`."""
    if not pairs:
        return ("the grid was made at another budget than this page's runs, so no cell of it "
                "repeats one of them")
    said = []
    for how, what in (("alone", "section 1's runs, made alone"),
                      ("together", "the live initial-scale sweep's other scales, trained together "
                                   "by the sweep engine (batched where it can)")):
        part = {k: v for k, v in pairs.items() if v[2] == how}
        if part:
            each = "; ".join(f"seed {s} at x{sc:g}: {_show(a)} here, {_show(b)} in the grid"
                             for (s, sc), (a, b, _) in part.items())
            same = all(a == b for a, b, _ in part.values())
            said.append(f"{what}, " + ("grok at the same steps as the grid's cells" if same else
                                       "do not all grok at the grid's steps") + f" ({each})")
    factor = number(rounding_factor(pairs), 3)
    return ("the grid records the weight RMS at every evaluation, so the sweep engine trains its "
            "cells one at a time; " + "; ".join(said)
            + (f": the engines agree here, so the factor is {factor}"
               if all(a == b for a, b, _ in pairs.values()) else
               f": the engines round differently, and that alone moves a grok step by up to "
               f"{factor} times"))


def muon_phase(m) -> str:
    """What Muon's run did: its grok step, or grokking's phase (:func:`phase_of`) in words."""
    phase = phase_of(m.history, p=m.config.p)
    if m.grok_step is not None:
        return f"groks at step {m.grok_step} ({phase})"
    return f"{_PHASE_WORDS.get(phase, phase)}, with no grok step to compare with AdamW's"


def rounding_numbers(payload: CapstoneGrid | None, firsts: dict, inits=()) -> dict:
    """The page's sentences on the grid: the rounding, the Muon runs that grok and the
    clock row's margin (:func:`clock_margin_text`)."""
    pairs = rounding(payload, firsts, inits)
    out = dict(rounding=rounding_text(pairs))
    if payload:
        out["grid_muon"] = grid_muon_text(payload)
        # the asserted clock row's margin, against what rounding alone moves
        out["clock_margin"] = clock_margin_text(payload.clock, rounding_factor(pairs))
    return out


# the two stretches the plateau rows of :mod:`.claims` read (their statements and windows),
# here with :func:`plateau_part` because section 1's numbers read the same steps
PLATEAU_PARTS = {
    "fit to grok": ("From the fit step to the grok step (the plateau and the climb) the input "
                    "weights become sparse in the Fourier basis and the hidden weights lower in "
                    "rank", "from the fit step to the grok step"),
    "plateau": ("Over the plateau alone (until test accuracy leaves chance) the input weights "
                "become sparse in the Fourier basis and the hidden weights lower in rank",
                "from the fit step to the first evaluation with test accuracy above chance"),
}


def plateau_part(r, part: str) -> tuple:
    """The steps a row of :data:`PLATEAU_PARTS` reads on run ``r``: ``"fit to grok"``, the
    fit step to the grok step (:func:`~.experiments.plateau_window`); ``"plateau"``, the fit
    step to the step test accuracy leaves chance (the window's end when it never leaves)."""
    if part not in PLATEAU_PARTS:
        raise ValueError(f"part must be one of {list(PLATEAU_PARTS)}, got {part!r}")
    a, b = plateau_window(r)
    leave = plateau_steps(r.history, r.config.p).leave if part == "plateau" else None
    return a, (b if leave is None else leave)
