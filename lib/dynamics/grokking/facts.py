"""Grokking, the page's numbers: what the prose says about a figure, computed from the data
that figure shows, as the words the page glues, one function per section
(:func:`section1_facts` ... :func:`section4_facts`, with the thresholds the sentences name);
and the measures the claims rows (:mod:`.claims`) judge on the phase grid and the algorithm."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .. import evidence, plots
from ..book import glue_texts as _texts  # each value as the page glues it
from ..train import History
from .algorithm import LARGE_START, NORM_BUILT, clock_measures, initial_model, norm_descent, primitive_root
from .experiments import MedianCell, PhaseRow, PhaseSweep, restricted_at_test_half, speedups
from .figures import best_rate, perp_phase, remedy_facts
from .omnigrok import large_start_facts, norm_rise
from .records import Corrupted, OptimizerRuns, ProgressMeasures, RemedyRow
from .science import (
    CHANCE_MARGIN, CLIMB, CLIMB_SPAN, DELAY, END_EVALS, FIT_ACC, GROK_ACC, KEY_SHARE, PLATEAU,
    RISE_PAIRS, UNLEARN_DROP, critical_fraction, end_accuracy,
    plateau_steps, still_climbing,
)

__all__ = ["by_seed", "median_grid", "phase_facts", "clock_ratios", "clock_fit", "clock_by_pair",
           "crit_falls", "phase_glue", "climb_margin", "bound", "descent_share", "norm_rise",
           "corrupted_glue", "unlearning", "norm_course", "off_keys", "half_lead",
           "section1_facts", "section2_facts", "section3_facts", "section4_facts", "pct0",
           "REMEDY_SPEEDUP", "REBOUND", "HALF_LOSS", "CONTROL_WD", "CONTROL_FRAC", "SINGLE"]

# The thresholds the prose names that the claims rows judge too (the rest are :mod:`.claims`').
REMEDY_SPEEDUP = 1.5    # "sooner": at least this x the baseline's speed on every seed
HALF_LOSS = 0.5         # "falls to half": a loss below this x its value at the fit step
CONTROL_WD = 1.0        # the no-decay row's control: cells at this decay and above (below the
CONTROL_FRAC = 0.6      # strongest) and fractions from this one, which generalize
SINGLE = 0.5            # "a neuron reads one frequency": its top frequency holds at least half its energy
REBOUND = 0.05          # "rebounds" / "jumps": a rise of more than this share of the value
pct0 = "{:.0%}".format
_crit_pct = lambda c: "above the grid" if c is None else pct0(c)  # noqa: E731 (a critical fraction)


def _good(r: PhaseRow) -> bool:
    return r.phase in ("grokking", "comprehension")  # the phases that generalize (and keep it)


def _falls(steps: list) -> bool:
    """Whether a sequence of grok steps never rises (cells that do not generalize skipped)."""
    s = [t for t in steps if t is not None]
    return all(b <= a for a, b in zip(s, s[1:]))


def crit_falls(crit: list) -> bool:
    """Whether critical fractions (decays in increasing order; None: above the grid) never rise
    and end strictly below their start (a last of None, or a constant sequence, does not fall)."""
    c = [math.inf if v is None else v for v in crit]
    return len(c) > 1 and crit[-1] is not None and _falls(c) and c[-1] < c[0]


def _group(items, key, value=lambda x: x) -> dict:
    """``{key(x): [value(x), ...]}`` in the items' order."""
    out: dict = {}
    for x in items:
        out.setdefault(key(x), []).append(value(x))
    return out


def by_seed(rows: list[PhaseRow]) -> dict[int, list[PhaseRow]]:
    """A phase grid's rows per seed (``{seed: rows}``, seeds in order), one row per cell."""
    return dict(sorted(_group(rows, lambda r: int(r.seed)).items()))


def median_grid(rows: list[PhaseRow]) -> list[MedianCell]:
    """A grid of several seeds as one: per cell its most common phase, and the median over
    the seeds of its grok step (only where it generalizes on every seed; a cell that does on
    some seeds only is "mixed") and of its final training loss."""
    cells = _group(rows, lambda r: (r.train_frac, r.weight_decay))
    out = []
    for (frac, wd), rs in sorted(cells.items()):
        phase = Counter(r.phase for r in rs).most_common(1)[0][0]
        good = [r for r in rs if _good(r)]
        if good and len(good) < len(rs):
            phase = "mixed"
        fits = [r.fit_step for r in rs if r.fit_step is not None]
        out.append(MedianCell(train_frac=frac, weight_decay=wd, phase=phase,
                              grok_step=float(np.median([r.grok_step for r in good]))
                              if len(good) == len(rs) else None,
                              fit_step=float(np.median(fits)) if len(fits) == len(rs) else None,
                              final_train_loss=float(np.median([r.final_train_loss for r in rs]))))
    return out


def phase_facts(rows: list[PhaseRow]) -> dict:
    """The numbers of section 2's "What to notice", from one seed's phase grid: the critical
    fraction per weight decay, the strongest decay's column against the weaker decays', the
    unfinished runs below the smallest fraction that generalizes (:func:`_climbing`)."""
    if len(by_seed(rows)) > 1:
        raise ValueError("these facts read one seed's grid: split the rows with by_seed()")
    wds = sorted({r.weight_decay for r in rows})
    fracs = sorted({r.train_frac for r in rows})
    strongest, by = wds[-1], {(r.train_frac, r.weight_decay): r for r in rows}
    inner = [w for w in wds if 0 < w < strongest]
    crit = {w: critical_fraction(rows, w) for w in wds if w > 0}
    column = [by[f, strongest] for f in fracs if (f, strongest) in by]
    weaker = [r for r in rows if r.weight_decay < strongest]
    passed = [r for r in column if r.fit_step is not None and r.grok_step is not None]
    good = [r.train_frac for r in rows if _good(r)]
    smallest = min(good) if good else None
    below = [r for r in rows if smallest is None or r.train_frac < smallest]
    return dict(
        crit=crit, smallest=smallest, strongest=strongest, inner=inner,
        below_cells=[(r.train_frac, r.weight_decay, *_climbing(r))
                     for r in below if r.phase == "unfinished"],
        no_decay_memorizes=(_not_memorizing((rows, lambda r: r.weight_decay == 0)) == 0
                            if 0.0 in wds else None),
        strong_phases=sorted({r.phase for r in column}),
        strong_loss_min=min(r.final_train_loss for r in column),
        weak_loss_max=max(r.final_train_loss for r in weaker),
        strong_passed=[(r.train_frac, r.grok_step) for r in passed],
        confusion=sum(r.phase == "confusion" for r in rows))


def clock_ratios(rows: list[PhaseRow]) -> list[dict]:
    """How much a stronger weight decay shortens the wait, against the 1/(ηλ) clock: per
    fraction and pair of neighbouring decays (above 0, below the strongest) where both cells
    generalize, the ratio of grok steps beside the clock's factor. One seed's rows."""
    inner, grok = phase_facts(rows)["inner"], _inner_grok(rows)
    return [dict(train_frac=f, weight_decays=(lo, hi), clock=hi / lo, measured=grok[f, lo] / grok[f, hi])
            for f in sorted({r.train_frac for r in rows}) for lo, hi in zip(inner, inner[1:])
            if grok.get((f, lo)) is not None and grok.get((f, hi)) is not None]


def clock_fit(rows: list[PhaseRow], lr: float) -> list[dict]:
    """The wait as a fixed part plus clock periods: per fraction where at least three decays
    (above 0, below the strongest) generalize, the least-squares fit ``grok step ≈ offset +
    periods / (ηλ)``, with its largest relative error, and a power law's. One seed's rows."""
    inner, grok, out = phase_facts(rows)["inner"], _inner_grok(rows), []
    for f in sorted({r.train_frac for r in rows}):
        pts = [(1 / (lr * w), grok[f, w]) for w in inner if grok.get((f, w)) is not None]
        if len(pts) < 3:
            continue
        x, y = np.array(pts, dtype=float).T
        a = np.vstack([np.ones_like(x), x]).T
        (offset, periods), *_ = np.linalg.lstsq(a, y, rcond=None)
        err = float(np.max(np.abs(a @ [offset, periods] - y) / y))
        # the rival with no fixed part: grok step = c (1/ηλ)^k, a line in log-log
        (k, logc), *_ = np.linalg.lstsq(np.vstack([np.log(x), np.ones_like(x)]).T, np.log(y),
                                        rcond=None)
        power = float(np.max(np.abs(np.exp(logc) * x ** k - y) / y))
        out.append(dict(train_frac=f, offset=float(offset), periods=float(periods),
                        max_rel_error=err, n=len(pts), power_exponent=float(k),
                        power_max_rel_error=power))
    return out


def clock_by_pair(rows: list[PhaseRow]) -> dict[tuple, float]:
    """Per pair of neighbouring decays, the largest ratio of grok steps over the clock's factor
    (:func:`clock_ratios`; above 1: the wait shrank by more than it somewhere)."""
    pairs = _group(clock_ratios(rows), lambda r: r["weight_decays"], lambda r: r["measured"] / r["clock"])
    return {k: max(v) for k, v in pairs.items()}


def _each(values: list, fmt) -> str:
    """One glued value for several seeds: the value when every seed gives it, else each
    seed's ("30%, 30% and 40% on the three seeds")."""
    texts = [fmt(v) for v in values]
    return texts[0] if len(set(texts)) == 1 else (
        ", ".join(texts[:-1]) + f" and {texts[-1]} on the {len(texts)} seeds")


def _span(values: list, fmt, most: bool = False) -> str:
    """A range over seeds and cells: "lo to hi", one value when they agree (the highest alone
    with ``most``), "–" when there are none."""
    if not values:
        return "–"
    lo, hi = fmt(min(values)), fmt(max(values))
    return hi if most or lo == hi else f"{lo} to {hi}"


def phase_glue(rows: list[PhaseRow], lr: float, p: int, histories: list | None = None) -> dict:
    """Section 2's glued numbers from the precomputed grid (``histories`` in the rows' order:
    an unfinished run of the strongest column says by what margin, :func:`climb_margin`), each
    once where the seeds agree, else seed by seed (:func:`_each`) or as a range (:func:`_span`)."""
    seeds = by_seed(rows)
    fs = {s: phase_facts(r) for s, r in seeds.items()}
    med = median_grid(rows)
    fits, ratios = clock_fit(med, lr), clock_ratios(med)  # each cell's median over the seeds
    seed_fits = [dict(fit, seed=s) for s, r in seeds.items() for fit in clock_fit(r, lr)]
    seed_ratios = [x for r in seeds.values() for x in clock_ratios(r)]
    pct = lambda v: "none" if v is None else f"{v:.0%}"  # noqa: E731
    f0 = next(iter(fs.values()))
    inner = f0["inner"]
    passed = [(s, frac, step) for s, f in fs.items() for frac, step in f["strong_passed"]]
    mem = [r.end_test_acc for r in rows if r.phase == "memorization"
           and r.end_test_acc is not None]
    by_pair = [clock_by_pair(g) for g in seeds.values()]

    def pair_glue(name: str, pair: tuple | None) -> dict:
        """The clock against the pair of decays ``pair`` (on each cell's median, seed by seed)."""
        keys = (f"wd_pair_{name}", f"clock_{name}", f"clock_{name}_seed", f"factor_{name}",
                f"clock_{name}_says")
        if pair is None:
            return dict.fromkeys(keys, "–")
        seeds_ = [b[pair] for b in by_pair if pair in b]
        return dict(zip(keys, (
            " to ".join(f"{w:g}" for w in pair),
            _span([r["measured"] for r in ratios if tuple(r["weight_decays"]) == pair], "{:.1f}".format),
            _span(seeds_, "{:.2f}".format), f"{pair[1] / pair[0]:.3g}", _clock_says(seeds_))))
    periods = _group(fits, lambda r: r["train_frac"], lambda r: r["periods"])
    column = [r for r in rows if r.weight_decay == f0["strongest"]]
    lost = sum(r.phase == "un-learning" for r in column)
    split = (f"all {lost}" if lost == len(column) else f"{lost} of the {len(column)}") + (
        " learn and then lose part of what they learned (un-learning)")
    hist = {id(r): h for r, h in zip(rows, histories or [])}
    why = {"confusion": "in confusion, never fitting (Liu et al.'s)"}
    for ph in sorted({r.phase for r in column} - {"un-learning"}):
        rs = [r for r in column if r.phase == ph]
        split += f"; {_count(len(rs), 'run')} (" + ", ".join(
            f"seed {r.seed} at {r.train_frac:.0%}" for r in rs) + (
            f") {'ends' if len(rs) == 1 else 'end'} {why.get(ph, ph)}") + "".join(
            _margin_text(r, hist[id(r)]) for r in rs if ph == "unfinished" and id(r) in hist)
    seed_ok = [r["max_rel_error"] for r in seed_fits if r["offset"] > 0]
    rises = _rises_text(seeds)
    head, sep, tail = rises.replace("seed: not on", "seed, not on").partition(", not on ")
    return dict(
        crit_first=_crit_text({s: f["crit"][inner[0]] for s, f in fs.items()}),
        crit_first_climbing=_top_climbing(rows, inner[0]),
        wd_first=f"{inner[0]:g}",
        crit_last=_each([f["crit"][inner[-1]] for f in fs.values()], pct),
        wd_last=f"{inner[-1]:g}",
        smallest=_each([f["smallest"] for f in fs.values()], pct),
        wd_strong=f"{f0['strongest']:g}", lr_wd_strong=f"{lr * f0['strongest']:g}",
        strong_loss=bound(min(f["strong_loss_min"] for f in fs.values()), 2, up=False),
        weak_loss=bound(max(f["weak_loss_max"] for f in fs.values()), 3, up=True),
        strong_passed=("no cell of it passes both thresholds" if not passed else
                       f"{_count(len(passed), 'run')} of it even "
                       f"{'passes' if len(passed) == 1 else 'pass'} both thresholds before "
                       "falling back (" + ", ".join(f"seed {s} at {frac:.0%} by step {step}"
                                                   for s, frac, step in passed) + ")"),
        strong_split=split,
        ln_p=f"ln {p} ≈ {math.log(p):.1f}",
        fit_offsets=_span([r["offset"] for r in fits], "{:.0f}".format),
        fit_periods=", ".join(f"{_span(v, '{:.1f}'.format)} at {frac:.0%}"
                              for frac, v in sorted(periods.items())) or "–",
        fit_error=_span([r["max_rel_error"] for r in fits], pct0, most=True),
        power_exponents=_span([r["power_exponent"] for r in fits], "{:.2f}".format),
        power_error=_span([r["power_max_rel_error"] for r in fits], pct0, most=True),
        **pair_glue("last", tuple(inner[-2:]) if len(inner) > 1 else None),
        **pair_glue("prev", tuple(inner[-3:-1]) if len(inner) > 2 else None),
        mem_end=_span(mem, "{:.1%}".format), chance=f"{1 / p:.1%}",
        clock_seed_hi=_span([r["measured"] for r in seed_ratios], "{:.2f}".format, most=True),
        fit_seed_error=(f"within {max(seed_ok):.0%} seed by seed" if seed_ok else "–") + "".join(
            f", except seed {r['seed']} at {r['train_frac']:.0%}, whose fit needs a negative fixed part "
            f"({r['offset']:.0f} steps) and errs by {r['max_rel_error']:.0%}" for r in seed_fits
            if r["offset"] <= 0),
        mem_below=("all" if all(v < 1 / p for v in mem) else f"{sum(v < 1 / p for v in mem)} of the") + f" {len(mem)}",
        grok_rises=rises, falls_on=head.capitalize(), rises_where=sep and f"; not on {tail}",
        grid_seeds=len(fs), below_climbing=_below_climbing(fs),
        n_unfinished=sum(r.phase == "unfinished" for r in rows), n_runs=len(rows))


def _clock_says(ratios: list) -> str:
    """What the seeds' largest ratios over the clock's factor say, by the engine's verdict rule
    (log scale, the seeds' spread as the noise)."""
    if not ratios:
        return "–"
    below = evidence.Test("<", 1.0, "the clock's factor", scale="log")
    noise = below.spread(ratios) if len(ratios) > 1 else math.nan
    return {"yes": "less than the clock, on every seed",
            "within noise": "below the clock on every seed, by less than the spread between seeds: not "
                            "told apart from the clock"}.get(
        evidence.verdict_of(below, dict(enumerate(ratios)), {}, noise)[0],
        "consistent with the clock, within the spread between seeds")


def _count(n: int, noun: str) -> str:
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    return f"{words.get(n, n)} " + (noun if n == 1 else noun[:-1] + "ies" if noun.endswith("y") else noun + "s")


def bound(v: float, decimals: int, up: bool) -> str:
    """A bound printed so that it stays one: an upper bound (``up``) rounded up, a lower down."""
    k = 10 ** decimals
    return f"{(math.ceil(v * k - 1e-9) if up else math.floor(v * k + 1e-9)) / k:.{decimals}f}"


def climb_margin(h, split: str) -> dict:
    """The numbers of :func:`~.science.still_climbing`'s gain rule: the ``split`` accuracy's
    ``gain`` (points) over the run's last CLIMB_SPAN, and over how many of its last evaluations
    it ``falls`` each time (from ``top`` at ``top_step`` to ``last``)."""
    acc, steps = [float(a) for a in h[f"{split}_acc"]], list(h.steps)
    n, k = sum(t <= (1 - CLIMB_SPAN) * steps[-1] for t in steps), 0
    while k + 1 < len(acc) and acc[-k - 2] > acc[-k - 1]:
        k += 1
    return dict(gain=100 * (end_accuracy(h, split) - float(np.median(acc[n - END_EVALS:n]))),
                falls=k, top=acc[-k - 1], top_step=steps[-k - 1], last=acc[-1])


def _margin_text(r: PhaseRow, h) -> str:
    """Why an unfinished run is labelled so, in its data's words (:func:`climb_margin`)."""
    split, name = ("train", "training") if r.fit_step is None else ("test", "test")
    m = climb_margin(h, split)
    fall = (f", and it falls at each of its last {m['falls']} evaluations ({m['top']:.1%} at step "
            f"{m['top_step']}, {m['last']:.1%} at the end)" if m["falls"] > 1 else "")
    how = (f"by a margin of {m['gain'] - CLIMB * 100:.3f} points" if m["gain"] > CLIMB * 100
           else "by the steady-rise rule, not the gain")
    return (f", labelled so {how}: its {name} accuracy gained {m['gain']:.3f} points over the"
            f" last {CLIMB_SPAN:.0%} of the run, against the rule's bar of {CLIMB * 100:g}{fall}")


def _crit_text(crit: dict) -> str:
    """The critical fractions of one decay on each seed, as the page says them ("90% on seed 0,
    above the grid on seeds 1 and 2")."""
    groups = _group(crit, lambda s: _crit_pct(crit[s]))
    return next(iter(groups)) + " on every seed" if len(groups) == 1 else ", ".join(
        f"{text} on {_seed_words(ss)}" for text, ss in groups.items())


def _seed_words(ss: list) -> str:
    return f"seed {ss[0]}" if len(ss) == 1 else "seeds " + ", ".join(map(str, ss[:-1])) + f" and {ss[-1]}"


def _climbing(r: PhaseRow) -> tuple[str, float]:
    """Which accuracy of an unfinished run is still climbing, and its value at the end: the
    training accuracy of a run that never fit, else the test accuracy (:func:`~.science.phase_of`)."""
    return ("training", r.end_train_acc) if r.fit_step is None else ("test", r.end_test_acc)


def _top_climbing(rows: list[PhaseRow], wd: float) -> str:
    """The unfinished runs at the grid's largest fraction and weight decay ``wd``, with the
    climbing accuracy at the end: what makes an "above the grid" partly the budget's doing."""
    top = max(r.train_frac for r in rows)
    cells = [r for r in rows if r.train_frac == top and r.weight_decay == wd
             and r.phase == "unfinished"]
    if not cells:
        return "none of its runs at the largest fraction is still climbing"
    n = len({r.seed for r in rows})
    return (f"at {top:.0%} its runs are still climbing when the budget ends on {len(cells)} "
            f"of {n} seeds (" + _span_text([_climbing(r) for r in cells]) + ")")


def _below_climbing(fs: dict) -> str:
    """The unfinished runs below the smallest fraction that generalizes, as the page says them:
    per cell its fraction, decay, on how many seeds and the climbing accuracy at the end."""
    cells = _group([c for f in fs.values() for c in f["below_cells"]], lambda c: c[:2], lambda c: c[2:])
    return "; ".join(f"at {frac:.0%} and weight decay {wd:g} on {len(a)} of {len(fs)} seeds "
                     f"({_span_text(a)})" for (frac, wd), a in sorted(cells.items())) or "none"


def _span_text(cells: list[tuple[str, float]]) -> str:
    """``[(split, accuracy at the end), ...]`` of unfinished runs as the page says them ("80% to
    88% test accuracy at the end"; a run that never fit says so)."""
    by = _group(cells, lambda c: c[0], lambda c: c[1])
    by = {k: [a for a in v if a is not None] for k, v in by.items()}  # a median grid has none
    return " and ".join(f"{_span(accs, pct0)} {split} accuracy at the end"
                     + (", not yet fit" if split == "training" else "")
                     for split, accs in sorted(by.items(), key=lambda kv: kv[0] != "test"))


def corrupted_glue(out: Corrupted, p: int | None = None) -> dict:
    """Section 4's glued corrupted-label numbers: the memorized, corrected and test shares at
    the end of the smallest (``low``) and largest (``high``) weight decay's run; where the
    smallest's test accuracy stands against GROK_ACC (:func:`~.science.still_climbing`, ``p``
    the modulus), and the largest's course on the wrong labels (:func:`unlearning`)."""
    low, high = out.runs[0], out.runs[-1]
    h = History(list(low.steps), {"test_acc": list(low.test_acc)})
    u = unlearning(high)
    done = low.final_test_acc > GROK_ACC
    return dict(mem_low=pct0(low.final_memorized), test_low=pct0(low.final_test_acc),
                mem_high=pct0(high.final_memorized), corr_high=pct0(high.final_corrected),
                test_high=pct0(high.final_test_acc), wd_low=f"{low.weight_decay:g}",
                wd_high=f"{high.weight_decay:g}", low_course=(
                    f"past the {GROK_ACC:.0%} that counts as generalizing on this page" if done else
                    f"short of the {GROK_ACC:.0%} that counts as generalizing on this page, and "
                    + ("is still climbing at the end of the budget" if still_climbing(h, "test", p)
                       else "has stopped climbing")), low_reaches="gets there too" if done else
                "does not get there within its budget", high_course=(
                    f"first memorizes {pct0(u['peak'])} of the wrong labels, by step "
                    f"{u['peak_at']}, when its test accuracy is {pct0(u['test_at_peak'])}, then "
                    "unlearns them" + (" while its test accuracy climbs" if high.final_test_acc
                                       - u["test_at_peak"] > UNLEARN_DROP else "")
                    + f": at the end it memorizes only {pct0(u['end'])}"
                    if u["peak"] - u["end"] > UNLEARN_DROP else
                    f"memorizes only {pct0(u['end'])} of the wrong labels"))


def unlearning(run) -> dict:
    """One corrupted-label run's memorized share at its highest (``peak``, first reached at
    ``peak_at``, where the test accuracy is ``test_at_peak``) and at the end (``end``)."""
    i = int(np.argmax(run.memorized))
    return dict(peak=float(run.memorized[i]), peak_at=run.steps[i], end=float(run.final_memorized),
                test_at_peak=float(run.test_acc[i]))


def norm_course(steps, norm, end: float, ex_steps=(), excluded=()) -> dict:
    """The weight norm after its peak: its lowest (``low`` at ``low_at``), its highest after
    that (``back`` at ``back_at``) and the words for its course to ``end``, its value at the
    end: it keeps falling (lowest within the last END_EVALS evaluations), undershoots and climbs
    back, or rebounds more than REBOUND above ``end`` and decays; with the excluded loss
    (``ex_steps``, ``excluded``) at the low and the rebound, a jump if it rises by more than REBOUND."""
    n3 = lambda v: _texts(3, v=v)["v"]  # noqa: E731
    top = int(np.argmax(norm))
    lo = top + int(np.argmin(norm[top:]))
    hi = lo + int(np.argmax(norm[lo:]))
    at = lambda t: next((float(v) for s, v in zip(ex_steps[::-1], excluded[::-1]) if s <= t),  # noqa: E731
                        math.nan)
    out = dict(low=float(norm[lo]), low_at=steps[lo], back=float(norm[hi]), back_at=steps[hi],
               ex_low=at(steps[lo]), ex_back=at(steps[hi]))
    under = f"undershoots, to {n3(norm[lo])} at step {steps[lo]}, "
    if lo >= len(norm) - END_EVALS:
        out["text"] = f"keeps falling, to {n3(end)} at the end"
    elif hi < len(norm) - END_EVALS and norm[hi] > (1 + REBOUND) * end:
        jump = out["ex_back"] > (1 + REBOUND) * out["ex_low"]
        out["text"] = under + (f"rebounds to {n3(norm[hi])} at step {steps[hi]} and decays to "
                               f"{n3(end)} at the end") + (
            f" (over the same steps the excluded loss jumps, from {out['ex_low']:.2f} to "
            f"{out['ex_back']:.2f})" if jump else "")
    else:
        out["text"] = under + f"and climbs back to {n3(end)} at the end"
    return out


def off_keys(layer: list, keys) -> dict:
    """The frequencies k ≥ 1 off the ``keys`` that hold more than an even share of the
    layer's energy (``layer``: its share per frequency k = 0, 1, ...): ``count``, their
    ``share`` together and the page's sentence on them (``text``; none said as none)."""
    even = 1 / (len(layer) - 1)
    off = [v for k, v in enumerate(layer) if k >= 1 and k not in set(keys) and v > even]
    return dict(count=len(off), share=float(sum(off)), text=(
        f"The layer also holds {_count(len(off), 'frequency')} off the keys with more than an even"
        f" share of its energy ({pct0(sum(off))} of it together), frequencies the logits barely "
        f"use (the keys are chosen to hold at least {pct0(KEY_SHARE)} of the logits' Fourier "
        "energy, so the others share at most the rest)." if off else
        "Every frequency off the keys holds at most an even share of the layer's energy."))


def half_lead(pm: ProgressMeasures, level: float = HALF_LOSS) -> dict:
    """The first steps after the fit step where the restricted loss (``restricted``) and the
    test loss (``test``) fall below ``level`` x their fit-step values (None: never), and how
    many of the run's evaluations the first is ahead (``evals``: those from the restricted
    loss's step up to the test loss's; 0 where it is not ahead), and the page's words (``text``)."""
    fit = pm.fit_step
    r, t = dict(zip(pm.step, pm.restricted_loss)), dict(zip(pm.history_steps, pm.test_loss))
    first = lambda d: next((s for s in sorted(d) if fit in d and s > fit  # noqa: E731
                            and d[s] < level * d[fit]), None)
    rs, ts = first(r), first(t)
    ahead = rs is not None and (ts is None or rs < ts)
    n = sum(rs <= s < (math.inf if ts is None else ts) for s in pm.history_steps) if ahead else 0
    return dict(restricted=rs, test=ts, evals=n, text=(
        f"the restricted loss gets to half first, at step {rs}, against " + ("no step in the run" if ts
        is None else f"step {ts}") + f" for the test loss, {_count(n, 'evaluation')} ahead: on this "
        "seed, generalization is under way that much before it shows" if n else
        "the restricted loss does not get to half before the test loss does"))


# ============================================================================ the claims rows' measures
# ---- the phase grid's: each reads one seed's grid and, where it needs one, a column or
# a subset of its cells (the run a row's treatment or control hands the engine is (grid, which))


def _inner_grok(g: list[PhaseRow]) -> dict:
    """``{(fraction, decay): grok step}`` of the cells at decays above 0 and below the strongest
    that generalize and keep it (None where they do not)."""
    strongest = max(r.weight_decay for r in g)
    return {(r.train_frac, r.weight_decay): r.grok_step if _good(r) else None
            for r in g if 0 < r.weight_decay < strongest}


def _rising(grok: dict) -> list[list]:
    """The rows (one fraction) and columns (one decay) of ``{(fraction, decay): grok step or None}``
    the grok step rises along, each as its cells that generalize, ``[((frac, decay), step), ...]``."""
    fracs, wds = sorted({f for f, _ in grok}), sorted({w for _, w in grok})
    lines = [[(f, w) for w in wds] for f in fracs] + [[(f, w) for f in fracs] for w in wds]
    return [[(k, grok[k]) for k in ks if grok.get(k) is not None] for ks in lines
            if not _falls([grok.get(k) for k in ks])]


def _rises_text(seeds: dict) -> str:
    """Where the grok step rises along a row or column of each seed's grid (:func:`_rising`)."""
    bad = {s: [(a, b) for ln in _rising(_inner_grok(g)) for a, b in zip(ln, ln[1:]) if b[1] > a[1]]
           for s, g in seeds.items()}
    ok = [s for s, b in bad.items() if not b]
    return "on every seed" if len(ok) == len(bad) else (
        f"on {_seed_words(ok)}, not on " if ok else "on no seed: not on ") + "; ".join(
        f"seed {s}, where it rises " + " and ".join(
            f"from {x:.0f} steps ({a[0]:.0%} of the pairs, weight decay {a[1]:g}) to {y:.0f} "
            f"({b[0]:.0%}, {b[1]:g})" for (a, x), (b, y) in ups) for s, ups in bad.items() if ups)


def _shuffled(grok: dict, seed: int) -> dict:
    """The null grid: the same cells generalize, their grok steps permuted among them (a fixed
    permutation per seed): any order in the grid's grok steps is gone, their values kept."""
    keys = [k for k, v in grok.items() if v is not None]
    steps = np.random.default_rng(seed).permutation([grok[k] for k in keys])
    return {**grok, **{k: int(t) for k, t in zip(keys, steps)}}


def _not_memorizing(run) -> float:
    """``(grid, keep)``: how many of the cells ``keep`` selects do not memorize (NaN: none)."""
    g, keep = run
    cells = [r for r in g if keep(r)]
    return float(sum(r.phase != "memorization" for r in cells)) if cells else float("nan")


def _crit_drop(run) -> float:
    """``(grid, decays)``: the critical fraction at the first decay minus at the last, where it
    falls (:func:`crit_falls`; else NaN). Above the grid at the first decay counts as the
    grid's largest fraction: the drop is then a lower bound."""
    g, wds = run
    c = [critical_fraction(g, w) for w in wds]
    top = max(r.train_frac for r in g)
    return (top if c[0] is None else c[0]) - c[-1] if crit_falls(c) else math.nan


def _rows_below(run) -> float:
    """``(grid, _)``: how many fractions lie below the smallest that generalizes at a decay
    above 0 (the null it is judged against: :func:`_null_rows_below`)."""
    g = run[0]
    fracs = sorted({r.train_frac for r in g})
    good = [r.train_frac for r in g if r.weight_decay > 0 and _good(r)]
    return float(sum(f < min(good) for f in fracs)) if good else float(len(fracs))


def _null_tail(g: list[PhaseRow], k: int | None = None) -> float:
    """The chance under the null (the phases of the cells at decays above 0 permuted among
    them) of ``k`` fractions or more below the smallest that generalizes (default: as many as
    in ``g``): that the cells of the ``k`` smallest fractions hold none of the generalizing
    ones, C(N − L, G) / C(N, G) for N cells, L of them at those fractions and G generalizing
    (hypergeometric, exact; 1 when none generalizes)."""
    k = int(_rows_below((g, None))) if k is None else k
    cells = [r for r in g if r.weight_decay > 0]
    low_fracs = sorted({r.train_frac for r in g})[:k]
    n, low, good = len(cells), sum(r.train_frac in low_fracs for r in cells), sum(map(_good, cells))
    return math.comb(n - low, good) / math.comb(n, good) if low <= n else 0.0


def _null_rows_below(run) -> float:
    """``(grid, _)``: the number of fractions below the smallest that generalizes that the null
    expects, exact: the sum over k of the chance of k or more (:func:`_null_tail`)."""
    g = run[0]
    return float(sum(_null_tail(g, k) for k in range(1, len({r.train_frac for r in g}) + 1)))


def _column_gap(run) -> float:
    """``(grid, decay)``: the column's lowest final training loss over the weaker decays' highest."""
    g, w = run
    return (min(r.final_train_loss for r in g if r.weight_decay == w)
            / max(r.final_train_loss for r in g if r.weight_decay < w))


def _column_keeps(run) -> float:
    """``(grid, decay)``: the cells of the column that keep what they learn, as the row's
    statement reads it: they fit the training set (a fit step) and do not un-learn (a run that
    never fits, confused or still climbing, keeps nothing)."""
    g, w = run
    return float(sum(r.fit_step is not None and r.phase not in ("un-learning", "confusion")
                     for r in g if r.weight_decay == w))


def _fit_error(key: str):
    """``(grid, lr) ->`` the largest relative error of :func:`clock_fit`'s ``key`` fit; for the
    clock's own, NaN unless every fixed part is positive and the periods do not grow."""
    def measure(gl) -> float:
        mf = clock_fit(*gl)
        ok = key != "max_rel_error" or (all(r["offset"] > 0 for r in mf)
                                        and _falls([r["periods"] for r in mf]))
        return max((r[key] for r in mf), default=math.nan) if ok else math.nan
    return measure


# ---- the runs' and the algorithm's


def descent_share(run, step) -> float:
    """The share of ``run``'s weight-norm descent from its peak to its end (as
    :func:`~.algorithm.norm_descent`) made at ``step`` (its last evaluation at or before it):
    0 where the norm has not yet peaked, NaN where ``step`` is None or there is no descent.
    The descent row's control: the run without weight decay at the decay run's grok step."""
    steps, norm = list(run.history.steps), list(run.history["weight_norm"])
    peak, end = max(norm), float(np.median(norm[-3:]))
    before = [i for i, t in enumerate(steps) if step is not None and t <= step]
    if not before or peak - end <= 0:
        return float("nan")
    i = before[-1]
    return 0.0 if i <= int(np.argmax(norm)) else (peak - norm[i]) / (peak - end)


# ============================================================================ the page's numbers, per section


def section1_facts(first, other, seeds) -> dict[str, str]:
    """Section 1's glued numbers: the first run's ηλ, the share of an initial weight its decay
    alone leaves by the end of the plateau, (1 - ηλ)^t, its plateau's steps and test loss's rise,
    division's grok step (``other``), the thresholds the prose names and the claim ``seeds``."""
    h, el = first.history, first.config.lr * first.config.weight_decay
    loss, steps = list(h["test_loss"]), list(h.steps)
    i = int(np.argmax(loss))
    ps = plateau_steps(h, first.config.p)  # the fit, leave, 50% and grok steps, the plateau
    fit, grok = ps.fit, ps.grok
    left = (1 - el) ** ps.leave if ps.leave is not None else float("nan")
    return _texts(2, eta_lambda=f"{el:g}", head_left=left, t_fit=fit, t_grok=grok,
                  delay=grok / fit if fit and grok else None, t_leave=ps.leave,
                  t_half=ps.half, plateau=ps.plateau,
                  margin=f"{CHANCE_MARGIN * 100:g}", plateau_min=f"{PLATEAU:g}",
                  fit_acc=f"{FIT_ACC:.0%}", grok_acc=f"{GROK_ACC:.0%}", delay_min=f"{DELAY:g}",
                  seeds=", ".join(map(str, seeds)), loss_start=loss[0],
                  loss_peak=loss[i], peak_step=steps[i], div_grok=other.grok_step)


def section2_facts(rows: list[PhaseRow], live_rows: list[PhaseRow], lr: float, p: int,
                   sweep: PhaseSweep | None = None) -> dict[str, str]:
    """Section 2's glued numbers: the precomputed grid's (:func:`phase_glue`; ``sweep`` the
    file's runs), the live grid's (every cell without decay memorizes? the critical fraction at
    weight decay 1) and the thresholds of the phase labels (:mod:`.science`) the prose names."""
    labels = dict(unlearn_drop=f"{UNLEARN_DROP * 100:g}", climb=f"{CLIMB * 100:g}",
                  rise_pairs=f"{RISE_PAIRS}", ctl_wd=f"{CONTROL_WD:g}",
                  ctl_frac=f"{CONTROL_FRAC:.0%}", climb_span=f"{CLIMB_SPAN:.0%}", end_evals=f"{END_EVALS}")
    hs = sweep.result().histories if sweep is not None else None
    f = phase_facts(live_rows)
    crit = f["crit"].get(min(f["crit"], key=lambda w: abs(w - 1.0))) if f["crit"] else None
    return dict(phase_glue(rows, lr=lr, p=p, histories=hs), **labels,
                no_decay=("" if f["no_decay_memorizes"] else "not ") + "memorization in every cell",
                live_crit="no fraction" if crit is None else f"{crit:.0%}")


def section3_facts(pm: ProgressMeasures, scaled: dict) -> dict[str, str]:
    """Section 3's glued numbers: the Fourier concentration from ``pm``, the clock in the first
    layer and the weight norm's descent of the page's run, and the runs from larger starts
    (``scaled`` ``{scale: run}``, scale 1 the page's run: :func:`~.algorithm.omnigrok_runs`):
    ``big_*`` from ``NORM_BUILT``, ``large_*`` from ``LARGE_START``
    (:func:`~.omnigrok.large_start_facts`)."""
    first, big = scaled[1.0], NORM_BUILT
    p, n0 = first.config.p, norm_descent(first)
    c0 = clock_measures(first.model, initial_model(first), p, first.config.op)
    end, c, steps = pm.spectra["end"], pm.fourier_top10, pm.step
    at = lambda t: c[steps.index(t)] if t in steps else c[-1]  # noqa: E731 (the last: never reached)
    norm = list(first.history["weight_norm"])  # its course after the peak (norm_course)
    course = norm_course(first.history.steps, norm, n0.end, pm.step, pm.excluded_loss)
    low = course["low"]
    done_low = (n0.peak - n0.grok) / (n0.peak - low) if n0.peak > low else math.nan
    off, lead = off_keys(end.layer, c0.keys), half_lead(pm)
    return dict(_texts(2, conc_init=c[0], conc_fit=at(pm.fit_step), conc_grok=at(pm.grok_step),
                       conc_end=c[-1], unit_conc=end.concentration,
                       layer_conc=end.layer_concentration), **_texts(
        3, key_share_min=pct0(KEY_SHARE),
        restricted_at_half=pct0(restricted_at_test_half(pm, level=HALF_LOSS)),
        other_at_half=pct0(restricted_at_test_half(pm, other=True, level=HALF_LOSS)),
        n_keys=len(c0.keys), n_freq=c0.K, key_share=pct0(c0.key_share),
        key_null=pct0(c0.null), key_init=pct0(c0.init_key_share),
        single=pct0(c0.single), single_init=pct0(c0.init_single),
        on_keys=pct0(c0.on_keys), spread=f"{c0.spread:.2f}",
        spread_init=f"{c0.init_spread:.2f}", single_min=pct0(SINGLE), prim_root=primitive_root(p),
        norm_start=n0.start, norm_peak=n0.peak, norm_grok=n0.grok, norm_end=n0.end,
        norm_done=pct0(n0.done), norm_peak_at=n0.peak_step, norm_course=course["text"],
        norm_done_low=pct0(done_low), off_keys=off["text"], lead=lead["text"], big_init=f"{big:g}",
        big_grok=scaled[big].grok_step, big_peak=max(scaled[big].history["weight_norm"]),
        big_start=scaled[big].history["weight_norm"][0], big_course=norm_rise(scaled[big]),
        big_over=f'{max(scaled[big].history["weight_norm"]) / n0.peak:.2f}', **_large(scaled, n0),
        **(large_start_facts(scaled, n0) if LARGE_START in scaled else {})))


def _large(scaled: dict, n0) -> dict:
    """Whether the 4x start is large in Omnigrok's sense (above the first run's norm at its
    grok step), and, below the first run's peak, the scale this book's test needs (a start
    above that peak) and whether the page's large start has it."""
    start = scaled[NORM_BUILT].history["weight_norm"][0]
    grok, need = plots.number(n0.grok, 3), plots.number(n0.peak / n0.start, 3)
    small = start < n0.grok
    return dict(big_kind=f"{'below' if small else 'above'} the {grok} the first run generalizes at"
                + (", so not a large start in" if small else ": a large start in"),
                big_needed=(" (this book's test of it starts above the first run's memorizing "
                            f"peak, more than {need} times the initial weights: "
                            + ("the next paragraph)" if LARGE_START > n0.peak / n0.start
                               else f"the page's largest start, {LARGE_START:g}x, is not above it)"))
                if start < n0.peak else "")


def section4_facts(remedies: list[RemedyRow], opt: dict[str, OptimizerRuns], corrupted: Corrupted,
                   budget: int, p: int | None = None) -> dict[str, str]:
    """Section 4's glued numbers: the remedies' speed-ups (runs that never grok counted at
    ``budget`` steps) and ⊥Grad's fit and grok steps, Muon's and AdamW's best learning rates,
    one seed's corrupted-label shares (``p``: the modulus, :func:`corrupted_glue`)."""
    rf = remedy_facts(speedups(remedies, budget))
    perp = next((r for r in remedies if r.name == "perp_grad"), None)
    return dict(_texts(2, strong=rf["strong"], perp=rf["speed"].get("perp_grad", 0.0)), **_texts(
        3, strong_vs_clock=rf["strong_vs_clock"], grokfast=rf["grokfast"], stablemax=rf["stablemax"],
        budget=budget, perp_min=f"{REMEDY_SPEEDUP:g}", muon_best=best_rate(opt["muon"]),
        adam_best=best_rate(opt["adamw"]), perp_phase=perp_phase(perp)), **corrupted_glue(corrupted, p))
