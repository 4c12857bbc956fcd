"""Lottery tickets, the claims: each "What to notice" sentence of the chapter as one claims
row (:func:`page_claims`, :func:`published_claims`), with its threshold (once, here). The
numbers the prose glues about the same runs (``*_numbers``) are :mod:`.facts`'.

One claim, one row: a claim measured in several settings (this page's run, the precomputed
runs, several sparsities) is one row that shows each setting's numbers, with one verdict over
all of them. The claims engine judges each setting on each of its seeds; the row's verdict
combines the engine's (:func:`_row`, by :func:`dynamics.evidence.combine`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import evidence, plots, results
from .experiments import RECORDS, ImpConfig, ImpResult, Lmc, Pai, PaiAt, by_step, seed_mean
from .figures import PAI_NAMES
from .finetune import FULL_RANK, finetune_claims

__all__ = ["MATCH_WINDOW", "MATCH_POINTS", "DESTROYED", "SPEED_WINDOW", "SPEED_MARGIN",
           "STABLE_BARRIER", "LEVEL_POINTS", "REWIND_POINTS", "PAI_WINDOW", "PAI_MARGIN",
           "LIU_WINDOW", "SPARSE", "CLAIMS", "SHOWN_ONLY", "LIU", "ticket_claims", "speed_claim",
           "pai_claims", "lmc_claims", "lr_claims", "page_claims", "published_claims", "lmc_file",
           "liu_numbers", "mean_rank", "rank_judged", "rank_claim"]


# ============================================================================ claims
# Each asserted row's threshold lives here, once; the claim tests assert the rows' verdicts.

MATCH_WINDOW = (0.10, 0.20)   # densities at which "tickets match the dense network" is judged
MATCH_POINTS = 1.0            # ... within this many points of the dense accuracy
DESTROYED = 8.0               # the book's bar for "destroys" and "far below": this many points
                              # or more (the re-init row: below the dense network; the random-mask
                              # row: below the ticket). Not exercise 1's 3-point "breaks down",
                              # which a ticket itself crosses near the sparsest rounds
SPEED_WINDOW = (1 / 7, 2 / 3) # densities at which "tickets learn faster" is judged (the prose's)
SPEED_MARGIN = 1              # ... earlier by at least this many evaluation intervals
SPEED_SHARE = "a seventh and two thirds"  # SPEED_WINDOW in the prose's words
STABLE_BARRIER = 0.02         # Frankle et al. (2020): stable when the error barrier is below 2%
LEVEL_POINTS = 1.0            # re-init "as good as" the ticket: within this many points (Liu et al.)
REWIND_POINTS = 3.0           # rewinding "better" than resetting: by this many points or more
PAI_WINDOW = (0.08, 0.25)     # densities of the PaI rows: the prose's "a fifth" and "a tenth"
PAI_MARGIN = 1.5              # PaI "beats" the random mask: by this many points or more, on every
                              # seed, and by more than the random mask's spread over the seeds
LIU_WINDOW = (0.14, 0.35)     # densities over which the Liu et al. row averages ticket − re-init
SPARSE = (0.0, 0.10)          # "the rounds at 10% of the weights or fewer" (Liu et al., rewinding)
# Rows the prose no longer asserts, with why: the engine's verdict on the precomputed (cpu) data
# is not "yes" (the page shows them with that verdict and says so; regenerating more seeds
# is the lead's call)
SHOWN_ONLY = {
    "match": "on the precomputed data ticket − dense clears −MATCH_POINTS by about the seeds' "
             "spread, a margin that a regeneration can move between within noise and yes",
    "pai": "does not discriminate on the precomputed data: a method's own shuffled mask, "
           "which keeps its per-layer budget, passes the same test on some seed (the data hold "
           "no second random mask with the ticket's budget, the control that should fail)",
}


def _pct(window) -> str:
    return f"{100 * window[0]:.0f}-{100 * window[1]:.0f}%"


_FASTER = ("Tickets learn faster (earlier early-stopping step) than the dense network and the "
           "re-initialized control")
_EARLIER = ("the dense network (round 0) and the re-initialized control on the same rounds; "
            f"earlier by at least {SPEED_MARGIN} evaluation interval{'s' if SPEED_MARGIN > 1 else ''}")
_SPEED_ROUNDS = (f"the pruned rounds between {SPEED_SHARE} of the weights (mean over them; the "
                 "rounds used are named in the measured column)")
# key -> (claim, paper, control, window): the rows, in the table's order
CLAIMS = {
    "match": ("Winning tickets match the dense network at 10-20% of the weights",
              "Frankle & Carbin (2019): LeNet-300-100 on MNIST",
              f"the same mask re-initialized, which must fail the same test (within "
              f"{MATCH_POINTS:g} pt of the dense network, round 0), on every seed; the margin "
              "beyond the seeds' spread",
              f"the pruned rounds at {_pct(MATCH_WINDOW)} of the weights (mean over them)"),
    "reinit": ("Re-initializing the ticket's weights destroys it", "Frankle & Carbin (2019)",
               f"the ticket itself (same mask, its own initial values), which must fail the same "
               f"test; destroyed: at least {DESTROYED:g} pts below the dense network (the book's "
               "bar for \"destroys\", not exercise 1's 3-point \"breaks down\", which the "
               "ticket itself nears here)",
               "the sparsest round at 5-10% of the weights (the measured column names it and "
               "the next, sparser round outside the window)"),
    "random": ("A random mask with the same layer-wise sparsity is far below the ticket",
               "Frankle & Carbin (2019); Frankle et al. (2021)",
               f"the re-initialized ticket's lead over the same random mask, which must fail the "
               f"same test; far below: at least {DESTROYED:g} pts below the ticket (the book's "
               "bar, the re-init row's)",
               "the sparsest round at 5-10% of the weights (the measured column names it)"),
    "speed": (_FASTER, "Frankle & Carbin (2019): early stopping on a validation set held out of "
              "the training data",
              f"{_EARLIER}, by more than the seeds' spread; the re-initialized control's own lead "
              "over the dense network must fail the same test", _SPEED_ROUNDS),
    "speed_test": (f"{_FASTER}, in runs whose early stopping read the test loss",
                   "Frankle & Carbin (2019) stopped on a validation set; these precomputed runs "
                   "predate the split and are to be regenerated",
                   _EARLIER, f"{_SPEED_ROUNDS}; shown, never asserted"),
    "pai": ("Pruning at init beats a random mask but not IMP", "Frankle et al. (2021)",
            f"each method's own mask shuffled within layers, put through the same test (a lead "
            f"of {PAI_MARGIN:g} pts or more over the random mask, the ticket shuffled, by more "
            "than the random mask's seeds' spread, and below the IMP ticket), must fail it on "
            "every seed. It keeps the method's per-layer budget, which Frankle et al. found is "
            "where PaI's lead comes from, so it asks whether the chosen weights matter beyond "
            "the budget (the shuffling row's question): \"does not discriminate\" says the test "
            "cannot tell the mask from its budget, not that the method fails to beat the random "
            "mask. The control that should fail, a second random mask with the ticket's "
            "budget, is not in the data",
            f"IMP's rounds at {_pct(PAI_WINDOW)} of the weights"),
    "shuffle": ("Shuffling a pruning-at-init mask within layers leaves its accuracy the same or "
                "higher", "Frankle et al. (2021): SNIP, GraSP, SynFlow, magnitude on image "
                "classifiers",
                "the IMP ticket shuffled (the random mask), put through the same test (what "
                "shuffling costs, less the seeds' spread of the original, at most 0), must fail "
                "it; judged for each method on its own",
                f"IMP's rounds at {_pct(PAI_WINDOW)} of the weights"),
    "stable": ("A small network is stable at initialization: two runs from θ₀ are linearly "
               "connected", "Frankle et al. (2020): LeNet on MNIST",
               f"Frankle et al.'s criterion, a barrier below {100 * STABLE_BARRIER:g} pts; the "
               "unstable case: the larger learning rate from θ₀ (next row)",
               "k = 0, at the chapter's learning rate"),
    "later": ("Where training is unstable at init, it becomes stable from a later rewind step",
              "Frankle et al. (2020): ResNet-20 and VGG-16 on CIFAR-10, stable from about 3% "
              "and 1.5% of training",
              f"the unrewound runs (k = 0), at or above {100 * STABLE_BARRIER:g} pts; stable: a "
              "barrier below it (Frankle et al.'s criterion)",
              "the first and the last rewind step, at the larger learning rate (the measured "
              "column gives each step's share of training and the first step from which every "
              "seed stays stable)"),
    "liu": ("At a larger learning rate, the pruned architecture re-initialized trains as well as "
            "the ticket", "Liu et al. (2019), mostly structured pruning, at the standard (larger) learning rate",
            "the same gap at the chapter's learning rate (the main IMP setting, same seed), which "
            f"must fail the same test; level: within {LEVEL_POINTS:g} pt either way",
            f"ticket − re-init averaged over the rounds at {_pct(LIU_WINDOW)} of the weights, and "
            "over those at 10% or fewer"),
    "rewind": ("Rewinding to an early step finds better tickets than resetting to θ₀ where "
               "training is unstable at init", "Frankle et al. (2020)",
               f"the same setting reset to θ₀; better: by {REWIND_POINTS:g} pts or more; the "
               "control, the two settings' re-initialized controls (each one's mask from fresh "
               "weights), must fail the same test",
               "the rounds at 10% of the weights or fewer (mean over them)"),
}


def _pts(v: float) -> str:
    return f"{v:+.1f} pts"


def _pts1(v: float) -> str:
    return f"{v:.1f} pts"


def _claim(key: str, measure_name: str, op: str, threshold: float, name: str, fmt=_pts,
           noise=None) -> evidence.Claim:
    """The engine's :class:`dynamics.evidence.Claim` of row ``key`` (:data:`CLAIMS`' texts),
    measured on per-seed numbers (a run is the number itself); its control is the one
    :data:`CLAIMS` names, measured the same way."""
    claim, paper, control, window = CLAIMS[key]
    return evidence.Claim(f"{claim} ({measure_name})", paper, measure=float, control=control,
                          test=evidence.Test(op, threshold, name), window=window, fmt=fmt,
                          noise=noise)


MATCH = _claim("match", "ticket − dense, points", ">=", -MATCH_POINTS, "MATCH_POINTS below dense")
REINIT = _claim("reinit", "dense − re-init, points", ">=", DESTROYED,
                "DESTROYED: the book's bar for destroyed")
RANDOM = _claim("random", "ticket − random mask, points", ">=", DESTROYED,
                "DESTROYED: the book's bar for far below")
STABLE = _claim("stable", "error barrier, points", "<", 100 * STABLE_BARRIER, "STABLE_BARRIER", _pts1)
LATER = _claim("later", "error barrier, points", "<", 100 * STABLE_BARRIER, "STABLE_BARRIER", _pts1)
LIU = _claim("liu", "|ticket − re-init|, points", "<", LEVEL_POINTS, "LEVEL_POINTS", _pts1)
REWIND = _claim("rewind", "rewound − reset, points", ">=", REWIND_POINTS, "REWIND_POINTS")
SHUFFLE_SAME = _claim("shuffle", "shuffling's cost less the seeds' spread, points", "<=", 0.0,
                      "within the seeds' spread")


def _pai_beats(noise: float | None) -> evidence.Claim:
    """``noise``: the random mask's spread over the seeds (None on one seed: no noise floor is
    measured, and the engine says "within noise" at best)."""
    return _claim("pai", "lead over the random mask, points", ">=", PAI_MARGIN, "PAI_MARGIN",
                  noise=None if noise is None else (lambda run: noise))


def _speed_lead(step: int) -> evidence.Claim:
    """``step``: one evaluation interval, in steps."""
    return _claim("speed", "earlier than the nearer of dense and re-init, steps", ">=",
                  SPEED_MARGIN * step, "SPEED_MARGIN evaluation intervals",
                  fmt=lambda v: f"{v:+.0f} steps")


def _setting(where: str, text: str, asserted: bool, seeds, judged: list | None = None) -> dict:
    """One setting's measurement of a claim: its numbers (``text``) and the engine's judgements
    (``judged``, one per part of the claim, e.g. per method; none where this setting cannot
    tell, said in ``text``), whose verdicts the row combines. ``ok``, for the text only: per
    seed, whether every part's treatment passes and its control fails (None: cannot tell);
    ``why``, per seed where it does not: "claim" (a part's treatment fails the test) or
    "control" (every treatment passes, and a part's control passes too)."""
    ok, why = None, {}
    if judged:
        for s in judged[0].treatment:
            if not all(j.claim.test.passes(j.treatment[s]) for j in judged):
                why[int(s)] = "claim"
            elif any(j.claim.test.passes(j.control[s]) for j in judged):
                why[int(s)] = "control"
        ok = {int(s): int(s) not in why for s in judged[0].treatment}
    return dict(where=where, text=text, ok=ok, why=why, asserted=bool(asserted),
                seeds=[int(s) for s in seeds], judged=list(judged or []))


def _missed(settings: list[dict], why: str) -> list[str]:
    """"<setting>, seed k" for every seed of ``settings`` that :func:`_setting` marks ``why``."""
    return [f"{s['where']}, seed {k}" for s in settings for k, w in s["why"].items() if w == why]


def _judged_text(parts: dict) -> str:
    """``{label: Judged}`` as the setting's text: each part's treatment and control (seed
    spreads), its verdict and the engine's reason."""
    out = []
    for label, j in parts.items():
        # as the engine prints a row's values: never reading as a threshold they are not
        fmt = evidence.sided(j.claim.fmt or (lambda v: plots.number(v, 3)),
                              j.claim.test.threshold)
        out.append(f"{label}{' ' if label else ''}{plots.spread(j.treatment, fmt)}, control "
                   f"{plots.spread(j.control, fmt)}: {j.verdict}"
                   + (f" ({j.reason})" if j.reason else ""))
    return "; ".join(out)


def _row(key: str, settings: list[dict]) -> dict:
    """The one row of claim ``key`` over all its settings, each setting's numbers shown. One
    rule: the verdict is :func:`dynamics.evidence.combine` of the engine's verdicts on its
    asserted settings (when none is asserted, on those with three seeds or more; when it has
    none, on every judged one); "not at this scale" when no setting can tell (a row the audit
    then refuses to render: it carries no numbers). A setting outside that basis (one seed)
    that falls short is named, not counted. Asserted when a setting that judges it is."""
    claim, paper, control, window = CLAIMS[key]
    judging = [s for s in settings if s["judged"]]
    basis = ([s for s in judging if s["asserted"]]
             or [s for s in judging if len(s["seeds"]) >= 3] or judging)
    measured = "; ".join(f"{s['where']}: {s['text']}" for s in settings)
    verdict = evidence.combine(*(j.verdict for s in basis for j in s["judged"])) if basis \
        else evidence.CANNOT_TELL
    if verdict != "yes":  # where the row falls short, and why: the claim, or its control
        if failing := _missed(basis, "claim"):
            measured += "; the claim fails on " + ", ".join(failing)
        if fooled := _missed(basis, "control"):
            measured += "; the claim holds but its control passes too on " + ", ".join(fooled)
    outside = [s for s in judging if s not in basis]
    short, fooled = _missed(outside, "claim"), _missed(outside, "control")
    if short or fooled:
        measured += ("; shown, not asserted (fewer than three seeds), and "
                     + " and ".join(([f"short of the test on {', '.join(short)}"] if short else [])
                                    + ([f"its control passes too on {', '.join(fooled)}"]
                                       if fooled else [])))
    return plots.claim(claim, paper, measured, verdict, any(s["asserted"] for s in judging),
                       control=control, window=window,
                       seeds=sorted({k for s in settings for k in s["seeds"]}),
                       evidence=[j.record(s["where"]) for s in basis for j in s["judged"]] or None)


def _rows(*groups: dict) -> list[dict]:
    """Rows from settings grouped by claim (``{key: setting or [settings]}`` dicts): one row
    per claim, in :data:`CLAIMS`' order, with every setting of every group."""
    def settings(key):
        got = [g[key] for g in groups if key in g]
        return [s for x in got for s in (x if isinstance(x, list) else [x])]
    return [_row(key, settings(key)) for key in CLAIMS if any(key in g for g in groups)]


def _window(res: ImpResult, window) -> list[int]:
    lo, hi = window
    return [r for r in range(1, len(res.density)) if lo <= res.density[r] <= hi]


def _per_seed(res: ImpResult, f) -> dict:
    return {int(s): float(f(k)) for k, s in enumerate(res.seeds)}


def _asserted(seeds, asserted: bool | None, key: str) -> bool:
    """Whether a setting of row ``key`` is asserted: as given, by default on three seeds or
    more, never where :data:`SHOWN_ONLY` holds the row back."""
    return (len(seeds) >= 3 if asserted is None else asserted) and key not in SHOWN_ONLY


def _tickets(res: ImpResult, where: str, asserted: bool | None = None) -> dict:
    """Frankle & Carbin's three comparisons on one IMP run, per seed: ``match``, ``reinit``,
    ``random`` (see :data:`CLAIMS`). Asserted (by default) on three seeds or more."""
    a, seeds, win, r = res.acc, res.seeds, _window(res, MATCH_WINDOW), res.round_at()
    shown = lambda key: _asserted(seeds, asserted, key)  # noqa: E731
    out = {"match": _setting(where, "no round in the window", shown("match"), seeds)}
    if win:
        dense = lambda k: a["ticket"][k, 0]  # noqa: E731
        gap = _per_seed(res, lambda k: 100 * (np.mean(a["ticket"][k, win]) - dense(k)))
        ctrl = _per_seed(res, lambda k: 100 * (np.nanmean(a["reinit"][k, win]) - dense(k))
                         if np.isfinite(a["reinit"][k, win]).any() else np.nan)
        span = f"{100 * res.density[win[-1]]:.1f}–{100 * res.density[win[0]]:.1f}%"
        head = f"over {len(win)} of {len(res.density) - 1} pruned rounds ({span}): "
        # a control not trained cannot fail: that setting cannot tell
        j = evidence.judge(MATCH, gap, ctrl) if all(np.isfinite(v) for v in ctrl.values()) else None
        text = _judged_text({"ticket − dense": j}) if j else (
            f"ticket − dense {plots.spread(gap, _pts)}; the re-initialized control was not "
            "trained in the window: cannot tell")
        out["match"] = _setting(where, head + text, shown("match"), seeds, [j] if j else None)
    at = f"at {100 * res.density[r]:.1f}% (round {r}"
    if r + 1 < len(res.density):  # the window's edge: the next round, outside it
        at += f"; the next round, {100 * res.density[r + 1]:.1f}%, lies outside the window"
    d = lambda x, i, y, j: _per_seed(res, lambda k: 100 * (a[x][k, i] - a[y][k, j]))  # noqa: E731
    j = evidence.judge(REINIT, d("ticket", 0, "reinit", r), d("ticket", 0, "ticket", r))
    out["reinit"] = _setting(where, at + "), below the dense network (the control: the ticket's "
                             "own drop): " + _judged_text({"dense − re-init": j}),
                             shown("reinit"), seeds, judged=[j])
    j = evidence.judge(RANDOM, d("ticket", r, "random", r), d("reinit", r, "random", r))
    out["random"] = _setting(where, at + "), below the ticket (the control: the re-initialized "
                             "ticket's lead over the random mask): "
                             + _judged_text({"ticket − random mask": j}),
                             shown("random"), seeds, judged=[j])
    return out


def ticket_claims(res: ImpResult, where: str = "this run", asserted: bool | None = None) -> list[dict]:
    """The three ticket rows (match, re-init, random mask) of one IMP run alone."""
    return _rows(_tickets(res, where, asserted))


def _speed(res: ImpResult, where: str, asserted: bool | None = None) -> dict:
    """Frankle & Carbin's "tickets learn faster" (see :data:`CLAIMS`), per seed: the tickets'
    early-stopping step, averaged over the rounds in :data:`SPEED_WINDOW`, against the dense
    network's and the re-initialized control's; a run whose dense minimum lies within an
    evaluation of its end cannot tell. A result whose early stopping read the test loss (a file
    written before the validation split) is a row of its own (``speed_test``), never asserted,
    never mixed with runs that held out a validation split. Asserted (by default) on three
    seeds or more."""
    key = "speed" if res.stop_on == "validation loss" else "speed_test"
    asserted = _asserted(res.seeds, asserted, "speed") and key == "speed"
    stop, step, seeds = res.stop_step, res.eval_interval, res.seeds
    win = _window(res, SPEED_WINDOW)
    if not win:
        return {key: _setting(where, "no round in the window", asserted, seeds)}
    last = res.eval_steps[-1] if res.eval_steps else 0
    dense = _per_seed(res, lambda k: stop["ticket"][k, 0])
    ticket = _per_seed(res, lambda k: np.nanmean(stop["ticket"][k, win]))
    reinit = _per_seed(res, lambda k: np.nanmean(stop["reinit"][k, win]))
    lead = {s: min(dense[s], reinit[s]) - ticket[s] for s in ticket}
    n = lambda v: f"{v:.0f}"  # noqa: E731
    text = (f"step of lowest {res.stop_on} over {len(win)} rounds "
            f"({100 * res.density[win[-1]]:.0f}–{100 * res.density[win[0]]:.0f}%), dense "
            f"{plots.spread(dense, n)}; tickets {plots.spread(ticket, n)}; re-init "
            f"{plots.spread(reinit, n)}; the nearer of the two minus the ticket "
            f"{plots.spread(lead, n)} (one evaluation: {step} steps)")
    if key != "speed":
        text += " (this file predates the validation split: shown, not asserted)"
    if max(dense.values()) >= last - step:
        return {key: _setting(where, text + f"; too short to tell: the dense minimum is "
                              f"within one evaluation of the end of the {last}-step runs",
                              asserted, seeds)}
    ctrl = {s: dense[s] - reinit[s] for s in ticket}  # the re-init's own lead over dense
    j = evidence.judge(_speed_lead(step), lead, ctrl)
    return {key: _setting(where, text + "; the ticket's lead against the re-init's own over "
                          "the dense network (the control): " + _judged_text({"": j}),
                          asserted, seeds, judged=[j])}


def speed_claim(res: ImpResult, where: str = "this run", asserted: bool | None = None) -> dict:
    """The speed row of one IMP run alone (:func:`_speed`)."""
    return _rows(_speed(res, where, asserted))[0]


def _pai(pai: Pai | PaiAt, where: str, asserted: bool | None = None) -> dict:
    """Frankle et al. (2021)'s checks at one density, per seed, each judged per method (see
    :data:`CLAIMS`): ``pai``, each method's lead over the random mask (the ticket shuffled),
    against its own mask shuffled within layers (asserted, by default, on three seeds or
    more); ``shuffle``, the paper's own test, what shuffling costs each method less its seeds'
    spread, against the ticket's (never asserted; one seed has no spread and cannot tell),
    with what shuffling costs each method against the ticket's (under half?) beside it, as an
    observation, not the test."""
    a = pai.acc
    methods = [m for m in a if m != "imp"]
    n = len(np.atleast_1d(a["imp"]["original"]))
    seeds = [int(s) for s in pai.seeds]
    acc = {m: 100 * np.atleast_1d(np.asarray(a[m]["original"], dtype=float)) for m in a}
    shuf = {m: 100 * np.atleast_1d(np.asarray(a[m]["shuffled"], dtype=float)) for m in a}
    drop = {m: acc[m] - shuf[m] for m in a}
    rnd, top = shuf["imp"], acc["imp"]
    # one seed measures no noise floor (a spread of 0.0 is not one): "within noise" at best
    noise = float(np.ptp(rnd)) if n >= 2 else None
    at = f"{where}, {100 * pai.density:.1f}%"
    mean = lambda v: f"{seed_mean(v):.1f}"  # noqa: E731
    each = lambda f: {s: f(k) for k, s in enumerate(seeds)}  # noqa: E731

    def lead(x, m, k):  # the row's measure: x's lead over the random mask on seed k, in
        # points to two decimals (NaN where x is not below the IMP ticket: the test fails)
        return round(float(x[m][k] - rnd[k]), 2) if x[m][k] < top[k] else float("nan")

    parts = {PAI_NAMES[m]: evidence.judge(_pai_beats(noise), each(lambda k: lead(acc, m, k)),
                                          each(lambda k: lead(shuf, m, k))) for m in methods}
    text = (f"IMP {mean(top)}%, random mask {mean(rnd)}% ("
            + ("one seed: no noise floor" if noise is None else f"seeds' spread {noise:.1f} pts")
            + "); " + ", ".join(f"{PAI_NAMES[m]} {mean(acc[m])}%" for m in methods)
            + (" (seed means)" if n >= 2 else f" (seed {seeds[0]})")
            + "; lead over the random mask, each method against its own shuffled "
            "mask (the control): " + _judged_text(parts))
    spread = {m: float(np.ptp(acc[m])) for m in a}
    costs = ", ".join(f"{PAI_NAMES[m]} {mean(drop[m])}" + (f" (spread of its seeds {spread[m]:.1f})"
                                                         if n >= 2 else "") for m in methods)
    if n < 2:  # one seed: no spread, no means, and "1 of 1 seeds" says nothing
        under = [PAI_NAMES[m] for m in methods if drop[m][0] < drop["imp"][0] / 2]
        half = (f" (seed {seeds[0]}); cost under half the ticket's on its one seed: "
                + (", ".join(under) or "no PaI method"))
    else:
        held = sum(all(drop[m][k] < drop["imp"][k] / 2 for m in methods) for k in range(n))
        half = f" (seed means); each PaI method's cost under half the ticket's on {held} of {n} seeds"
    cost = f"shuffling costs IMP {mean(drop['imp'])} pts; {costs}{half} (an observation, not the test)"
    if n < 2:
        same = _setting(at, cost + "; one seed: no spread to judge by", False, seeds)
    else:
        past = lambda m: each(lambda k: round(float(drop[m][k] - spread[m]), 2))  # noqa: E731
        judged = {PAI_NAMES[m]: evidence.judge(SHUFFLE_SAME, past(m), past("imp")) for m in methods}
        same = _setting(at, cost + "; cost less the spread, each method against the ticket's "
                        "(the control): " + _judged_text(judged), False, seeds,
                        judged=list(judged.values()))
    return {"pai": _setting(at, text, _asserted(seeds, asserted, "pai"), seeds,
                            judged=list(parts.values())),
            "shuffle": same}


def pai_claims(pai: Pai, where: str = "this run", asserted: bool | None = None) -> list[dict]:
    """The two pruning-at-init rows of one comparison alone (:func:`_pai`)."""
    return _rows(_pai(pai, where, asserted))


def _pai_window(payload) -> list:
    """The precomputed PaI comparisons at the densities in :data:`PAI_WINDOW`, densest first."""
    return sorted((q for q in payload.pai if PAI_WINDOW[0] <= q.density <= PAI_WINDOW[1]),
                  key=lambda q: -q.density)


def _barriers(lmc: Lmc) -> dict:
    """``{k: barrier in points}`` of one :func:`run_lmc` result (NaN where it has none)."""
    return {k: 100 * float(np.nan if (b := by_step(lmc.barrier, k)) is None else b)
            for k in lmc.rewind_steps}


def _settled(barriers: list[dict], limit: float):
    """The first rewind step from which each of ``barriers`` (``{k: points}``, one per seed)
    stays below ``limit`` at every later step (None: at none)."""
    ks = list(barriers[0])
    return next((k for i, k in enumerate(ks)
                 if all(b[j] < limit for b in barriers for j in ks[i:])), None)


def _lmc(calm: tuple, hot: tuple, asserted: bool | None = None, steps: int | None = None) -> dict:
    """Frankle et al. (2020)'s stability, with their criterion (an error barrier below
    :data:`STABLE_BARRIER`), per seed: ``calm = (label, {seed: run_lmc})`` at the chapter's
    learning rate from θ₀ (``stable``: stable at initialization, as LeNet on MNIST), and
    ``hot`` at a larger one from θ₀ and later rewind steps (``later``: unstable at θ₀, stable
    from its last rewind step). ``steps``: the runs' length, to say each rewind step's share of
    training (the paper's is a few percent). Asserted (by default) on three seeds or more."""
    (cl, calm), (hl, hot) = calm, hot
    seeds = sorted(set(calm) & set(hot))
    limit = 100 * STABLE_BARRIER
    cb = {s: _barriers(calm[s])[calm[s].rewind_steps[0]] for s in seeds}
    hb = {s: _barriers(hot[s]) for s in seeds}
    ks = hot[seeds[0]].rewind_steps
    kl, at = ks[-1], lambda k: {s: hb[s][k] for s in seeds}  # noqa: E731
    share = lambda k: f" ({100 * k / steps:.0f}% of training)" if steps else ""  # noqa: E731
    mid = "; ".join(f"k = {k}{share(k)}: {plots.spread(at(k), _pts1)}" for k in ks[1:-1])
    held = _settled(list(hb.values()), limit)
    since = (f"; stable on every seed from k = {held}{share(held)}" if held is not None else
             "; at no rewind step stable on every seed")
    stable = evidence.judge(STABLE, cb, at(ks[0]))  # control: the larger learning rate from θ₀
    later = evidence.judge(LATER, at(kl), at(ks[0]))  # control: the same runs unrewound (k = 0)
    near = max(seeds, key=lambda s: cb[s] if np.isfinite(cb[s]) else -np.inf)
    close = (f"; nearest the criterion: seed {near}, {limit - cb[near]:.2f} pts below it"
             if np.isfinite(cb[near]) and 0 <= limit - cb[near] < 0.5 else "")
    if close and np.isfinite(stable.noise):  # a narrow margin: what the engine weighed it against
        close += (f"; the median clears it by {limit - float(np.median(list(cb.values()))):.2f} pts, "
                  f"the seeds' spread is {stable.noise:.2f} pts")
    asserted = _asserted(seeds, asserted, "stable")
    return {"stable": _setting(cl, _judged_text({"barrier from θ₀": stable}) + f" (control: from "
                               f"θ₀ at {hl}){close}", asserted, seeds, judged=[stable]),
            "later": _setting(hl, f"judged at k = {kl}"
                              + (f" of the {steps}-step runs" if steps else "") + f"{share(kl)}: "
                              + _judged_text({f"barrier from θ_{kl}": later}) + " (control: from θ₀)"
                              + (f"; {mid}" if mid else "") + since, asserted, seeds,
                              judged=[later])}


def lmc_claims(calm: tuple, hot: tuple, asserted: bool | None = None,
               steps: int | None = None) -> list[dict]:
    """The two stability rows of one pair of settings alone (:func:`_lmc`)."""
    return _rows(_lmc(calm, hot, asserted, steps))


def _larger_lr(runs: dict) -> tuple:
    """The IMP slider's two settings at the larger learning rate: reset to θ₀, and rewound
    (None where absent)."""
    return (next((r for k, r in runs.items() if "reset" in k and "lr" in k), None),
            next((r for k, r in runs.items() if "rewind" in k), None))


def _lr(runs: dict) -> dict:
    """The ``liu`` and ``rewind`` rows (see :data:`CLAIMS`) of the precomputed learning-rate
    settings, never asserted (one seed): ``liu`` over each of :func:`_liu_windows`, its control
    at the chapter's learning rate (the first setting of ``runs``); ``rewind``'s control, the
    two settings' re-initialized controls, asks for a gain of the mask's, not of the rewound
    values'."""
    reset, rewound = _larger_lr(runs)
    main = next(iter(runs.values()))
    out = {}
    if reset is not None:
        if not set(reset.seeds) <= set(main.seeds) or main is reset:
            raise ValueError("the Liu et al. row needs the chapter's learning-rate setting (the first "
                             f"of the IMP runs) on the seeds {reset.seeds} of the larger one's")
        out["liu"] = []
        for name, rounds in _liu_windows(reset).items():
            def gap(res, name=name):  # ticket − re-init over the window's rounds, per seed
                rs = _liu_windows(res)[name]
                return {int(s): 100 * float(np.mean(res.acc["ticket"][k, rs] - res.acc["reinit"][k, rs]))
                        if rs else np.nan for k, s in enumerate(res.seeds) if s in reset.seeds}
            # level both ways: a re-init far ahead of the ticket is not "as well as" it
            j = evidence.judge(LIU, {s: abs(v) for s, v in gap(reset).items()},
                               {s: abs(v) for s, v in gap(main).items()})
            each = ", ".join(f"{100 * reset.density[r]:.1f}% {_pts(100 * float(np.mean(reset.acc['ticket'][:, r] - reset.acc['reinit'][:, r])))}"
                             for r in rounds)
            out["liu"].append(_setting(
                f"precomputed, Adam lr {reset.config.lr:g}, {name}",
                f"ticket − re-init, mean over {len(rounds)} rounds {plots.spread(gap(reset), _pts)} "
                f"(round by round: {each}); at Adam lr {main.config.lr:g} (the control) "
                f"{plots.spread(gap(main), _pts)}; |ticket − re-init| against the control's: "
                + _judged_text({"": j}), False, reset.seeds, judged=[j]))
    if reset is not None and rewound is not None:
        sparse = _window(reset, SPARSE)
        diff = lambda arm: _per_seed(rewound, lambda k: 100 * np.mean(  # noqa: E731
            [rewound.acc[arm][k, r] - reset.acc[arm][k, r] for r in sparse]) if sparse else np.nan)
        j = evidence.judge(REWIND, diff("ticket"), diff("reinit"))
        out["rewind"] = _setting(
            f"precomputed, Adam lr {rewound.config.lr:g}",
            f"rewound to step {rewound.config.rewind_step} − reset to θ₀, the tickets against "
            "their re-initialized controls: " + _judged_text({"": j}), False, rewound.seeds,
            judged=[j])
    return out


def _liu_windows(res: ImpResult) -> dict:
    """``{name: rounds}``: the pruned rounds in :data:`LIU_WINDOW` and in :data:`SPARSE`."""
    return {f"{_pct(LIU_WINDOW)} of the weights": _window(res, LIU_WINDOW),
            "10% or fewer": _window(res, SPARSE)}


def liu_numbers(runs: dict) -> dict:
    """Section 3's Liu et al. sentence on the precomputed reset setting at the larger learning
    rate (one seed): ticket − re-init averaged over :data:`LIU_WINDOW` and over the rounds in
    :data:`SPARSE`, with its range round by round in each."""
    reset, _ = _larger_lr(runs)
    out = {}
    for tag, rounds in zip(("mid", "sparse"), _liu_windows(reset).values()):
        gap = [100 * seed_mean(reset.acc["ticket"][:, r] - reset.acc["reinit"][:, r]) for r in rounds]
        out[f"liu_{tag}"] = f"{np.mean(gap):.1f}"
        out[f"liu_{tag}_range"] = f"{min(gap):+.1f} to {max(gap):+.1f}"
        if tag == "mid":  # what the window's mean says of the row's test, as the row judges it
            out["liu_mid_says"] = (
                f"within the table's {LEVEL_POINTS:g} point of \"level\", but on one seed, which "
                "measures no noise, so that part is at best \"within noise\""
                if LIU.test.passes(abs(np.mean(gap))) else
                f"outside the table's {LEVEL_POINTS:g} point of \"level\" by "
                f"{abs(np.mean(gap)) - LEVEL_POINTS:.1f}, so that part says \"no\" by the table's "
                "rule, on one seed whose rounds scatter as widely: one seed cannot make it firm")
    lo, hi = LIU_WINDOW
    out.update(liu_window=f"{100 * hi:.0f}% and {100 * lo:.0f}%", liu_level=f"{LEVEL_POINTS:g}",
               liu_seeds=f"{len(reset.seeds)} seed{'s' if len(reset.seeds) > 1 else ''}")
    return out


def lr_claims(runs: dict) -> list[dict]:
    """The two learning-rate rows of the precomputed IMP settings (:func:`_lr`)."""
    return _rows(_lr(runs))


def page_claims(res: ImpResult, pai: Pai | None = None, lmcs: dict | None = None,
                ft: dict | None = None, published: bool = False) -> list[dict]:
    """The page's claims table, one row per claim: ``res`` (this run's IMP curve), ``pai``
    (:func:`run_pai`), ``lmcs`` (``{label: run_lmc result}`` or ``{label: {seed: run_lmc
    result}}``, the first at the chapter's learning rate, the second at a larger one), ``ft``
    (:func:`run_finetune`) and, with ``published``, the precomputed (cpu) data the page shows
    as further settings of the same rows (:func:`published_settings`). Settings on fewer than
    three seeds are shown with their numbers, not asserted."""
    where = _where(res, "this run (")
    groups = [_tickets(res, where), _speed(res, where, asserted=False)]
    if pai is not None:
        groups.append(_pai(pai, "this run"))
    if lmcs:
        seeded = {label: {int(v.seed): v} if isinstance(v, Lmc) else v for label, v in lmcs.items()}
        (cl, calm), (hl, hot) = list(seeded.items())[:2]
        groups.append(_lmc((f"this run, {cl}", calm), (f"this run, {hl}", hot),
                           steps=res.config.steps))  # run_lmc trains as long as IMP
    if published:
        groups += published_settings()
    return _rows(*groups) + (_finetune_rows(ft) if ft is not None else [])


def mean_rank(ranks: dict) -> float:
    """Mukherjee et al.'s aggregate of update ranks: the mean over the weight matrices of
    rank(ΔW) / min(rows, cols) (their code, ``src/update_rank.py``, averages this ratio over
    every 2-D parameter); ``ranks``: ``{matrix: ratio}``, as :func:`~.finetune.update_rank`."""
    return float(np.mean(list(ranks.values())))


def _two(v: float) -> str:
    return f"{v:.2f}"


def rank_judged(ft: dict) -> evidence.Judged:
    """The engine's judgement behind the rank row (:func:`rank_claim`): its per-seed means
    and its formatter, which the prose's rank numbers print by (:func:`.facts.rank_numbers`)."""
    per = ft["per_seed"]
    return evidence.judge(evidence.Claim(
        "The updates are sparse but nearly full rank", "Mukherjee et al. (2025): the rank of "
        "each update over its maximum, averaged over the weight matrices",
        measure=lambda r: mean_rank(r["rank"]), control_measure=lambda r: mean_rank(r["rank_one"]),
        test=evidence.Test(">=", FULL_RANK, "FULL_RANK: the book's bar for the paper's \"nearly "
                           "full rank\""),
        control="ΔW's best rank-1 approximation (a LoRA-like update), averaged over the matrices "
                "the same way, which must fail the same test; a ReLU unit that never fires gets "
                "no update, a zero row of ΔW; ranks counted above float32's round-off",
        window="the first run of each seed; rank of ΔW / min(rows, cols), mean over the weight "
               "matrices (as the paper averages)", asserted=False, fmt=_two), per, per)


def rank_claim(ft: dict) -> dict:
    """The rank row the paper's way: rank(ΔW) / min(rows, cols) averaged over the weight
    matrices (:func:`mean_rank`) on the first run of each seed, against :data:`FULL_RANK`;
    control: ΔW's best rank-1 approximation, averaged the same way. The lowest matrix's ratio,
    which the row judged before, is kept as a note in the measured column (not the test)."""
    per = ft["per_seed"]
    row = rank_judged(ft).row()
    lowest = {s: min(r["rank"].values()) for s, r in per.items()}
    row["measured here"] = (
        f"Adam lr {ft['lr']:g}, {ft['steps']} steps on the reversed inputs: rank of ΔW / "
        "min(rows, cols), mean over the matrices " + row["measured here"]
        + "; the lowest-rank matrix alone (a note, not the test): " + plots.spread(lowest, _two))
    return row


def _finetune_rows(ft: dict) -> list[dict]:
    """Section 5's rows: :func:`~.finetune.finetune_claims`' sparsity and overlap rows, and
    the rank row as the paper aggregates it (:func:`rank_claim`) in place of the lowest
    matrix's."""
    sparse, lap, _lowest_matrix = finetune_claims(ft)
    return [sparse, lap, rank_claim(ft)]


def _where(res, head: str) -> str:
    """A setting's label with what it trained on: ``head`` (ending in "(" or in "(..." to
    continue) and the training examples, with the validation split held out of them or none,
    so that settings trained differently are never read as one. ``res``: an :class:`ImpResult`
    or an :class:`ImpConfig` (a precomputed file's provenance config)."""
    config = res if isinstance(res, ImpConfig) else res.config
    n, v = config.n_train, config.n_val
    if not n:
        return head.rstrip(" (")
    split = (f"{n - v} training examples, {v} held out for validation" if v else
             f"all {n} training examples, no validation split")
    return f"{head}{'' if head.endswith('(') else ', '}{split})"


def published_settings() -> list[dict]:
    """The settings that rest on the precomputed (cpu) data the published page shows: the
    main IMP curve (ticket, control and speed rows), the PaI slider at the densities in
    :data:`PAI_WINDOW`, the stability of training at the lowest and highest learning rates,
    and the learning-rate settings of the IMP slider."""
    runs = results.load("lottery_imp", as_=RECORDS["lottery_imp"])[0].imp
    main = next(iter(runs.values()))
    where = _where(main, f"precomputed ({len(main.seeds)} seeds")
    pai, pai_prov = results.load("lottery_pai", as_=RECORDS["lottery_pai"])
    at = _where(ImpConfig.of(pai_prov["config"]), "precomputed (")
    lmc, lmc_prov = results.load("lottery_lmc", as_=RECORDS["lottery_lmc"])
    lo, hi = min(lmc.lmc, key=float), max(lmc.lmc, key=float)
    calm = {s: replace(v, rewind_steps=[0]) for s, v in lmc.at(lo).items()}
    return [_tickets(main, where), _speed(main, where), *(_pai(p, at) for p in _pai_window(pai)),
            _lmc((f"precomputed, Adam lr {lo}", calm), (f"precomputed, Adam lr {hi}", lmc.at(hi)),
                 steps=lmc_prov["config"].get("steps")), _lr(runs)]


def published_claims() -> list[dict]:
    """The claims rows on the precomputed (cpu) data alone, one per claim."""
    return _rows(*published_settings())


def lmc_file():
    """``data/lottery_lmc.json``, read as its record (an :class:`~.experiments.LmcFile`)."""
    return results.load("lottery_lmc", as_=RECORDS["lottery_lmc"])[0]
