"""Lottery tickets, the claims: each "What to notice" sentence of the chapter as a claims row
(:func:`claims`, :func:`published_claims`), with its threshold (once, here), and the numbers
the prose glues (``*_numbers``, each threshold included as the page prints it).
"""
from __future__ import annotations

import numpy as np

from .. import plots, results
from .experiments import ImpResult, imp_runs
from .figures import PAI_NAMES, _by_step, _mean
from .finetune import finetune_claims
from .science import layer_densities

__all__ = ["MATCH_WINDOW", "MATCH_POINTS", "CONTROL_POINTS", "SPEED_WINDOW", "SPEED_MARGIN",
           "STABLE_BARRIER", "LEVEL_POINTS", "REWIND_POINTS", "ticket_claims", "speed_claim",
           "lmc_claims", "page_claims", "published_claims", "lmc_seeds", "speed_numbers",
           "pai_numbers", "lmc_numbers", "rewind_numbers", "breakdown_numbers", "layer_numbers"]


# ============================================================================ claims
# Each asserted row's threshold lives here, once; the claim tests assert the rows' verdicts.

MATCH_WINDOW = (0.10, 0.20)   # densities at which "tickets match the dense network" is judged
MATCH_POINTS = 1.0            # ... within this many points of the dense accuracy
CONTROL_POINTS = 3.0          # re-init and random mask at least this far below the ticket
SPEED_WINDOW = (1 / 7, 2 / 3) # densities at which "tickets learn faster" is judged (the prose's)
SPEED_MARGIN = 1              # ... earlier by at least this many evaluation intervals
STABLE_BARRIER = 0.02         # Frankle et al. (2020): stable when the error barrier is below 2%
LEVEL_POINTS = 1.0            # re-init "as good as" the ticket: within this many points (Liu et al.)
REWIND_POINTS = 3.0           # rewinding "better" than resetting: by this many points or more


def _window(res: ImpResult, window) -> list[int]:
    lo, hi = window
    return [r for r in range(1, len(res.density)) if lo <= res.density[r] <= hi]


def _per_seed(res: ImpResult, f) -> dict:
    return {int(s): float(f(k)) for k, s in enumerate(res.seeds)}


def ticket_claims(res: ImpResult, where: str = "this run", asserted: bool | None = None) -> list[dict]:
    """Frankle & Carbin's three comparisons on an IMP run, each judged on every seed: the
    ticket within :data:`MATCH_POINTS` of the dense network over the rounds in
    :data:`MATCH_WINDOW`, and the re-initialized and random-mask controls at least
    :data:`CONTROL_POINTS` below it at the sparsest round at 5-10% of the weights. Asserted
    (by default) only on three seeds or more."""
    asserted = len(res.seeds) >= 3 if asserted is None else asserted
    a, seeds = res.acc, [int(s) for s in res.seeds]
    win, r = _window(res, MATCH_WINDOW), res.round_at()
    d = 100 * res.density[r]
    pts = lambda v: f"{v:+.1f} pts"  # noqa: E731
    rows = []
    if win:
        text, ok = plots.across_seeds(_per_seed(res, lambda k: 100 * (np.mean(a["ticket"][k, win])
                                                                        - a["ticket"][k, 0])),
                                      lambda v: v >= -MATCH_POINTS, pts)
        span = f"{100 * res.density[win[-1]]:.1f}–{100 * res.density[win[0]]:.1f}%"
    else:
        text, ok, span = "no round in the window", "no", "—"
    rows.append(plots.claim(
        "Winning tickets match the dense network at 10-20% of the weights", "Frankle & Carbin "
        "(2019): LeNet-300-100 on MNIST", f"{where}: ticket − dense, mean over the window: {text}",
        ok, asserted, control=f"the dense network (round 0); match: within {MATCH_POINTS:g} pt",
        window=f"{len(win)} of {len(res.density) - 1} pruned rounds, {span} of the weights",
        seeds=seeds))
    for key, claim, paper in (
            ("reinit", "Re-initializing the ticket's weights destroys it", "Frankle & Carbin (2019)"),
            ("random", "A random mask with the same layer-wise sparsity is far below the ticket",
             "Frankle & Carbin (2019); Frankle et al. (2021)")):
        text, ok = plots.across_seeds(_per_seed(res, lambda k: 100 * (a["ticket"][k, r] - a[key][k, r])),
                                      lambda v: v >= CONTROL_POINTS, pts)
        rows.append(plots.claim(
            claim, paper, f"{where}: ticket − {'re-init' if key == 'reinit' else 'random mask'}: {text}",
            ok, asserted, control=f"the same mask {'re-initialized' if key == 'reinit' else 'shuffled within layers'}"
            f" (at least {CONTROL_POINTS:g} pts below)", window=f"{d:.1f}% of the weights (round {r})",
            seeds=seeds))
    return rows


def speed_claim(res: ImpResult, where: str = "this run", asserted: bool | None = None) -> dict:
    """Frankle & Carbin's "tickets learn faster": on each seed, the tickets' early-stopping
    step (the step of lowest test loss), averaged over the rounds in :data:`SPEED_WINDOW`,
    against the dense network's and against the re-initialized control's over the same
    rounds; it holds where the ticket is earlier than both by :data:`SPEED_MARGIN` evaluation
    intervals or more. A run whose dense test loss is still falling at the end cannot show it:
    "no" when asserted, "not at this scale" otherwise. Asserted (by default) on three seeds or
    more."""
    asserted = len(res.seeds) >= 3 if asserted is None else asserted
    stop, step = res.stop_step, res.eval_interval
    win, seeds = _window(res, SPEED_WINDOW), [int(s) for s in res.seeds]
    claim = "Tickets learn faster (earlier early-stopping step) than the dense network and the re-initialized control"
    last = res.eval_steps[-1] if res.eval_steps else 0
    control = (f"the dense network (round 0) and the re-initialized control on the same rounds; "
               f"earlier by at least {SPEED_MARGIN} evaluation interval{'s' if SPEED_MARGIN > 1 else ''} "
               f"({SPEED_MARGIN * step} steps)")
    window = (f"{len(win)} of {len(res.density) - 1} pruned rounds, "
              + (f"{100 * res.density[win[-1]]:.0f}–{100 * res.density[win[0]]:.0f}% of the weights"
                 if win else "none"))
    if not win:
        return plots.claim(claim, "Frankle & Carbin (2019)", f"{where}: no round in the window",
                           plots.verdict(False, scale=not asserted), asserted, control=control,
                           window=window, seeds=seeds)
    dense = _per_seed(res, lambda k: stop["ticket"][k, 0])
    ticket = _per_seed(res, lambda k: np.nanmean(stop["ticket"][k, win]))
    reinit = _per_seed(res, lambda k: np.nanmean(stop["reinit"][k, win]))
    text, ok = plots.across_seeds({s: min(dense[s], reinit[s]) - ticket[s] for s in ticket},
                                  lambda v: v >= SPEED_MARGIN * step, lambda v: f"{v:.0f}")
    measured = (f"{where}: step of lowest test loss, dense {plots.spread(dense, lambda v: f'{v:.0f}')}; "
                f"tickets {plots.spread(ticket, lambda v: f'{v:.0f}')}; re-init "
                f"{plots.spread(reinit, lambda v: f'{v:.0f}')}; the nearer control minus the ticket: {text}")
    if max(dense.values()) >= last - step:
        return plots.claim(claim, "Frankle & Carbin (2019)", measured + f"; too short to tell: the "
                           f"dense minimum is within one evaluation ({step} steps) of the end of the "
                           f"{last}-step runs", plots.verdict(False, scale=not asserted), asserted,
                           control=control, window=window, seeds=seeds)
    return plots.claim(claim, "Frankle & Carbin (2019)", measured, ok, asserted, control=control,
                       window=window, seeds=seeds)


def page_claims(res: ImpResult, pai: dict | None = None, lmcs: dict | None = None,
           ft: dict | None = None, precomputed: dict | None = None,
           published: bool = False) -> list[dict]:
    """Claims of the papers beside what was measured, with a verdict computed from the
    numbers: ``res`` (this run's IMP curve), ``pai`` (:func:`run_pai`), ``lmcs``
    (``{label: run_lmc result}`` or ``{label: {seed: run_lmc result}}``, the first at the
    chapter's learning rate, the second at a larger one), ``ft`` (:func:`run_finetune`),
    ``precomputed`` (``{setting: ImpResult}`` read from ``data/``: the speed figure's runs and
    the learning-rate settings of the slider) and, with ``published``, the rows of the
    published data (:func:`published_claims`) after them. Rows on fewer than three seeds are
    shown with their numbers, not asserted."""
    rows = ticket_claims(res) + [speed_claim(res, asserted=False)]
    main = next(iter(precomputed.values())) if precomputed else None
    if main is not None:
        rows.append(speed_claim(main, f"precomputed ({len(main.seeds)} seeds, section 1 figure)"))
    if pai is not None:
        rows.append(_pai_claim(pai))
    if lmcs:
        seeded = {label: {int(v["seed"]): v} if "barrier" in v else v for label, v in lmcs.items()}
        rows += lmc_claims(*list(seeded.items())[:2])
    if precomputed:  # shown with the verdict the prose glues: "partly" at this scale
        rows += [dict(row, asserted=False) for row in _lr_claims(precomputed)]
    if ft is not None:
        rows += finetune_claims(ft)
    return rows + (published_claims() if published else [])


def _pai_claim(pai: dict) -> dict:
    """Frankle et al. (2021)'s check at one density, on the seeds' mean accuracies: every PaI
    method above the random mask and below IMP, and shuffling its mask within layers costs it
    less than half what it costs the ticket. "no" when any of the three fails. Asserted on
    three seeds or more."""
    a = pai["acc"]
    acc = {k: 100 * _mean(a[k]["original"]) for k in a}
    drop = {k: acc[k] - 100 * _mean(a[k]["shuffled"]) for k in a}
    methods = [k for k in a if k != "imp"]
    random = 100 * _mean(a["imp"]["shuffled"])
    text = (f"at {100 * pai['density']:.1f}%: IMP {acc['imp']:.1f}% "
            f"(shuffled {-drop['imp']:+.1f} pts); "
            + "; ".join(f"{PAI_NAMES[k]} {acc[k]:.1f}% ({-drop[k]:+.1f})" for k in methods))
    checks = ([acc[k] > random for k in methods] + [acc[k] < acc["imp"] for k in methods]
              + [drop[k] < drop["imp"] / 2 for k in methods])
    n = len(np.atleast_1d(a["imp"]["original"]))
    seeds = pai.get("seeds", list(range(n)))
    return plots.claim("Pruning at init beats a random mask but not IMP; shuffling its mask "
                       "within layers costs it little, the ticket a lot",
                       "Frankle et al. (2021)", text, plots.verdict(all(checks)), len(seeds) >= 3,
                       control="the random mask (the ticket shuffled) below, IMP above; the "
                               "ticket's own cost of shuffling (PaI's under half of it)",
                       window=f"{100 * pai['density']:.1f}% of the weights", seeds=seeds)


def _barriers(lmc: dict) -> dict:
    """``{k: barrier in points}`` of one :func:`run_lmc` result (NaN where it has none)."""
    return {k: 100 * float(np.nan if _by_step(lmc["barrier"], k) is None else _by_step(lmc["barrier"], k))
            for k in lmc["rewind_steps"]}


def lmc_claims(calm: tuple, hot: tuple, asserted: bool | None = None) -> list[dict]:
    """Frankle et al. (2020)'s stability, with their criterion (an error barrier below
    :data:`STABLE_BARRIER`), judged on every seed: ``calm = (label, {seed: run_lmc})`` at the
    chapter's learning rate from θ₀ (stable at initialization, as LeNet on MNIST), and ``hot``
    at a larger one from θ₀ and later rewind steps (unstable at θ₀, stable from its last
    rewind step). Asserted (by default) on three seeds or more."""
    (cl, calm), (hl, hot) = calm, hot
    seeds = sorted(set(calm) & set(hot))
    asserted = len(seeds) >= 3 if asserted is None else asserted
    limit = 100 * STABLE_BARRIER
    pts = lambda v: f"{v:.1f} pts"  # noqa: E731
    cb = {s: _barriers(calm[s])[calm[s]["rewind_steps"][0]] for s in seeds}
    hb = {s: _barriers(hot[s]) for s in seeds}
    ks = hot[seeds[0]]["rewind_steps"]
    k0, kl = ks[0], ks[-1]
    text, ok = plots.across_seeds(cb, lambda v: v < limit, pts)
    rows = [plots.claim(
        "A small network is stable at initialization: two runs from θ₀ are linearly connected",
        "Frankle et al. (2020): LeNet on MNIST", f"{cl}: barrier from θ₀ {text}", ok, asserted,
        control=f"Frankle et al.'s criterion, a barrier below {limit:g} pts; the unstable case: "
                f"{hl} from θ₀, {plots.spread({s: hb[s][k0] for s in seeds}, pts)}",
        window=f"k = {calm[seeds[0]]['rewind_steps'][0]}", seeds=seeds)]
    unstable, u_ok = plots.across_seeds({s: hb[s][k0] for s in seeds}, lambda v: v >= limit, pts)
    stable, s_ok = plots.across_seeds({s: hb[s][kl] for s in seeds}, lambda v: v < limit, pts)
    mid = "; ".join(f"k = {k}: {plots.spread({s: hb[s][k] for s in seeds}, pts)}" for k in ks[1:-1])
    rows.append(plots.claim(
        "Where training is unstable at init, it becomes stable from a later rewind step",
        "Frankle et al. (2020): ResNet-20, VGG-16 after a few % of training",
        f"{hl}: barrier from θ₀ {unstable}; from θ_{kl} {stable}" + (f" ({mid})" if mid else ""),
        "no" if "no" in (u_ok, s_ok) else "yes" if u_ok == s_ok == "yes" else "partly", asserted,
        control=f"the unrewound runs (k = {k0}); stable: a barrier below {limit:g} pts "
                "(Frankle et al.'s criterion)", window=f"rewind steps k = {', '.join(map(str, ks))}",
        seeds=seeds))
    return rows


def _lr_claims(runs: dict) -> list[dict]:
    """From the precomputed learning-rate settings: does re-initialization catch up with the
    ticket at a larger learning rate (Liu et al. 2019), and does rewinding help there?"""
    reset = next((r for k, r in runs.items() if "reset" in k and "lr" in k), None)
    rewound = next((r for k, r in runs.items() if "rewind" in k), None)
    rows = []
    if reset is not None:
        mid = int(np.argmin(np.abs(np.log(reset.density / 0.2))))
        sparse = len(reset.density) - 1
        gap = lambda r: 100 * (_mean(reset.acc["ticket"][:, r]) - _mean(reset.acc["reinit"][:, r]))  # noqa: E731
        lr = reset.config["lr"]
        rows.append(plots.claim(
            "At a larger learning rate, the pruned architecture re-initialized trains as well as "
            "the ticket", "Liu et al. (2019), mostly structured pruning, SGD lr 0.1",
            f"precomputed, Adam lr {lr:g}: ticket ahead of re-init by {gap(mid):+.1f} pts at "
            f"{100 * reset.density[mid]:.0f}% of the weights, {gap(sparse):+.1f} at "
            f"{100 * reset.density[sparse]:.1f}%",
            "yes" if gap(sparse) < LEVEL_POINTS else "partly" if gap(mid) < LEVEL_POINTS else "no",
            False, control=f"the ticket (same mask, its own initial values); level: within "
                           f"{LEVEL_POINTS:g} pt",
            window=f"{100 * reset.density[mid]:.0f}% and {100 * reset.density[sparse]:.1f}% of "
                   "the weights", seeds=reset.seeds))
    if reset is not None and rewound is not None:
        sparse = [r for r in range(len(reset.density)) if reset.density[r] <= 0.1]
        diff = 100 * np.mean([_mean(rewound.acc["ticket"][:, r]) - _mean(reset.acc["ticket"][:, r])
                              for r in sparse]) if sparse else float("nan")
        k = rewound.config["rewind_step"]
        rows.append(plots.claim(
            "Rewinding to an early step finds better tickets than resetting to θ₀ where "
            "training is unstable at init", "Frankle et al. (2020)",
            f"precomputed, Adam lr {rewound.config['lr']:g}, {len(rewound.seeds)} "
            f"seed{'s' if len(rewound.seeds) > 1 else ''}: "
            f"rewound to step {k} {diff:+.1f} pts vs reset, mean over the rounds at ≤10% "
            "of the weights", "yes" if diff >= REWIND_POINTS else "partly" if diff > 0 else "no",
            False, control=f"the same setting reset to θ₀; better: by {REWIND_POINTS:g} pts or more",
            window="the rounds at 10% of the weights or fewer", seeds=rewound.seeds))
    return rows


# ============================================================================ numbers for the prose
# Every number the chapter's sentences quote about its runs comes from one of these functions
# (glued into the prose with dynamics.book.glue), never typed by hand.


def _points(x: float) -> str:
    """A difference in points as words: "0.9 points above" or "1.2 points below"."""
    return f"{abs(x):.1f} points {'above' if x >= 0 else 'below'}"


def speed_numbers(res: ImpResult, low: float = 1 / 7, high: float = 2 / 3) -> dict:
    """The speed figure in the numbers its "What to notice" quotes: the dense network's
    early-stopping step, the run's length, and the range of the tickets' steps between
    ``low`` and ``high`` of the weights (mean over seeds)."""
    stop = np.nanmean(res.stop_step["ticket"], axis=0)
    mid = [stop[r] for r, d in enumerate(res.density) if low <= d <= high]
    return dict(speed_dense=int(stop[0]), speed_steps=int(res.config["steps"]),
                speed_width=int(res.config["width"]), speed_seeds=len(res.seeds),
                speed_range=f"{min(mid):.0f} to {max(mid):.0f}" if mid else "—")


def pai_numbers(payload: dict, target: float = 0.1) -> dict:
    """The precomputed PaI slider near ``target`` of the weights: what shuffling costs SNIP and
    SynFlow (the range over the two, in points) and what it costs the IMP ticket."""
    p = min(payload["pai"], key=lambda q: abs(np.log(q["density"] / target)))
    cost = {m: 100 * (_mean(p["acc"][m]["original"]) - _mean(p["acc"][m]["shuffled"]))
            for m in p["acc"]}
    two = [cost["snip"], cost["synflow"]]
    return dict(pai_density=f"{100 * p['density']:.1f}%",
                pai_shuffle=f"{min(two):.1f} to {max(two):.1f}", pai_ticket=cost["imp"])


def lmc_numbers(calm: dict, hot: dict) -> dict:
    """Section 3's two runs in the numbers its "What to notice" quotes (barriers in points),
    and Frankle et al.'s threshold of stability (:data:`STABLE_BARRIER`, in points)."""
    b = lambda lmc, k: 100 * float(_by_step(lmc["barrier"], k))  # noqa: E731
    ks = hot["rewind_steps"]
    return dict(calm_barrier=b(calm, calm["rewind_steps"][0]), hot_first=b(hot, ks[0]),
                hot_mid=b(hot, ks[1]), hot_last=b(hot, ks[-1]), hot_k_mid=ks[1], hot_k_last=ks[-1],
                stable_limit=f"{100 * STABLE_BARRIER:g}")


def rewind_numbers(runs: dict, lmc_payload: dict) -> dict:
    """The precomputed rewinding setting of the IMP slider beside the reset one (mean over the
    rounds at 10% of the weights or fewer), and the precomputed barriers at that learning rate
    from θ₀ and from the rewind step (medians over the seeds, in points) with the first rewind
    step whose barrier is below :data:`STABLE_BARRIER` on each seed."""
    reset = next(r for k, r in runs.items() if "reset" in k and "lr" in k)
    rewound = next(r for k, r in runs.items() if "rewind" in k)
    sparse = [r for r in range(len(reset.density)) if reset.density[r] <= 0.1]
    a = lambda res: 100 * float(np.mean([_mean(res.acc["ticket"][:, r]) for r in sparse]))  # noqa: E731
    k = int(rewound.config["rewind_step"])
    out = dict(rewind_gap=a(rewound) - a(reset), rewind_acc=f"{a(rewound):.1f}%",
               reset_acc=f"{a(reset):.1f}%", rewind_k=k,
               reset_vs_dense=_points(100 * (_mean(reset.acc["ticket"][:, -1])
                                             - _mean(reset.acc["ticket"][:, 0]))),
               reset_sparsest_density=f"{100 * reset.density[-1]:.1f}%")
    out["rewind_verdict"] = _lr_claims(runs)[-1]["reproduced"]
    lr = f"{rewound.config['lr']:g}"
    if lr in lmc_payload["lmc"]:
        per = lmc_seeds(lmc_payload, lr)
        at = lambda j: {s: 100 * float(_by_step(v["barrier"], j)) for s, v in per.items()}  # noqa: E731
        limit = 100 * STABLE_BARRIER
        settled = {s: _settled(v, limit) for s, v in per.items()}
        out.update(lmc_first=float(np.median(list(at(0).values()))),
                   lmc_rewind=float(np.median(list(at(k).values()))),
                   lmc_rewind_stable=f"{sum(v < limit for v in at(k).values())} of {len(per)}",
                   lmc_stable_k=_and([("none" if v is None else str(v)) for v in settled.values()])
                   + f" (seed{'s' if len(per) > 1 else ''} {_and([str(s) for s in per])})",
                   lmc_seeds=len(per))
    return out


def _settled(lmc: dict, limit: float):
    """The first rewind step of one :func:`run_lmc` result from which the barrier stays below
    ``limit`` points at every later rewind step (None if it never does)."""
    ks = [int(j) for j in lmc["rewind_steps"]]
    below = [100 * float(_by_step(lmc["barrier"], j)) < limit for j in ks]
    return next((ks[i] for i in range(len(ks)) if all(below[i:])), None)


def _and(words: list[str]) -> str:
    """``["a", "b", "c"]`` as "a, b and c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def lmc_seeds(payload: dict, lr: str) -> dict:
    """``{seed: run_lmc}`` at learning rate ``lr`` of a loaded ``lottery_lmc`` payload: every
    seed it holds there (the first seed's alone where it has no more)."""
    first = payload["lmc"][lr]
    runs = payload.get("seeds", {}).get(lr) or {str(first.get("seed", 0)): first}
    return {int(s): v for s, v in runs.items()}


def published_claims() -> list[dict]:
    """The claims rows that rest on the precomputed (cpu) data the published page shows: the
    speed figure, the PaI slider, the stability of training at three learning rates and the
    learning-rate settings of the IMP slider (``tests/test_published_claims.py``)."""
    runs = imp_runs(results.load("lottery_imp")[0])
    main = next(iter(runs.values()))
    pai = results.load("lottery_pai")[0]["pai"]
    lmc = results.load("lottery_lmc")[0]
    rows = ticket_claims(main, f"precomputed ({len(main.seeds)} seeds)")
    rows.append(speed_claim(main, f"precomputed ({len(main.seeds)} seeds, section 1 figure)"))
    for p in pai:  # the prose asserts the comparison at a fifth and a tenth of the weights
        rows.append(dict(_pai_claim(p), asserted=0.08 <= p["density"] <= 0.25))
    lo, hi = min(lmc["lmc"], key=float), max(lmc["lmc"], key=float)
    calm = {s: dict(v, rewind_steps=[0]) for s, v in lmc_seeds(lmc, lo).items()}
    # asserted where measured on three seeds (lmc_claims' default)
    rows += lmc_claims((f"precomputed, Adam lr {lo}", calm),
                       (f"precomputed, Adam lr {hi}", lmc_seeds(lmc, hi)))
    rows += [dict(row, asserted=False) for row in _lr_claims(runs)]
    return rows


def breakdown_numbers(runs: dict, points: float = 3.0) -> dict:
    """Exercise 1's answer on the precomputed curve of section 1 (``runs``, :func:`imp_runs`):
    its width and the sparsest fraction of the weights at which the ticket (seed mean) is
    still within ``points`` of the dense network."""
    main = next(iter(runs.values()))
    acc = main.acc["ticket"].mean(axis=0)
    ok = [d for d, a in zip(main.density, acc) if a >= acc[0] - points / 100]
    return dict(ex1_width=main.config["width"], ex1_density=f"{100 * min(ok):.1f}%")


def layer_numbers(imp: ImpResult) -> dict:
    """Exercise 3's answer on this page's run: the share of each layer kept at the last round
    (first seed) and the fan-ins of the two hidden layers."""
    last = layer_densities(imp.masks[-1][0])
    sizes = {n: m.shape for n, m in imp.masks[-1][0].items()}
    return dict(ex3_total=f"{100 * imp.density[-1]:.1f}%",
                ex3_first=f"{100 * last['hidden.0.weight']:.1f}%",
                ex3_second=f"{100 * last['hidden.1.weight']:.1f}%",
                ex3_head=f"{100 * last['head.weight']:.1f}%",
                ex3_fan1=sizes["hidden.0.weight"][1],
                ex3_fan2=sizes["hidden.1.weight"][1])
