"""Lottery tickets, the facts: the numbers the chapter's prose glues (``*_numbers``), each
threshold included as the page prints it, read from this page's runs and the precomputed
files. The claims rows that judge the same runs are :mod:`.claims`'."""
from __future__ import annotations

import numpy as np

from .. import evidence, plots
from ..book import and_list
from ..evidence import Test, median_margin

from .claims import (CLAIMS, MATCH_WINDOW, PAI_MARGIN, SHOWN_ONLY, SPARSE, SPEED_WINDOW,
                     STABLE_BARRIER, _barriers, _larger_lr, _pai, _pai_window, _row, _settled,
                     _speed, _window, liu_numbers, lmc_file, rank_judged)
from .experiments import ImpConfig, ImpResult, Pai, PaiFile, seed_mean
from .figures import PAI_NAMES, trained_on
from .science import layer_densities

__all__ = ["speed_numbers", "pai_numbers", "lmc_numbers", "rewind_numbers", "breakdown",
           "breakdown_numbers", "imp_numbers", "layer_numbers", "verdict_numbers",
           "shuffle_numbers", "pai_leads", "pai_leads_said", "row_printed", "rank_numbers",
           "GLUED_VERDICTS"]

# claims row -> the name the prose glues its verdict under: every ``*_verdict`` the page glues
# is one of these, read off the row the claims table prints (:func:`verdict_numbers`, glued
# where the table is built), so the sentence and the table cannot disagree
GLUED_VERDICTS = {"match_verdict": CLAIMS["match"][0], "pai_verdict": CLAIMS["pai"][0],
                  "pai_shuffle_verdict": CLAIMS["shuffle"][0], "rewind_verdict": CLAIMS["rewind"][0],
                  "liu_verdict": CLAIMS["liu"][0],
                  # section 5's overlap row (finetune.py's), by the start of its claim
                  "ft_overlap_verdict": "The subnetworks updated by runs with different seeds",
                  "ft_rank_verdict": "The updates are sparse but nearly full rank"}


def verdict_numbers(rows: list[dict], pai: Pai | None = None,
                    payload: PaiFile | None = None, config: dict | None = None,
                    ft: dict | None = None) -> dict:
    """The verdicts the prose glues, each the one its claims row prints (``rows``: the page's
    claims table): :data:`GLUED_VERDICTS`, by the start of the row's claim. Beside them, what
    the PaI row's settings say on their own: ``pai_says_precomputed`` (``payload``:
    ``lottery_pai`` as its :class:`~.experiments.PaiFile`) and ``pai_says_live`` (``pai``:
    :func:`run_pai`); with ``payload``, the PaI slider's numbers, glued with the verdicts they
    explain; with ``config`` (the ``lottery_pai`` file's), ``pai_split``: what its runs
    trained on; with ``ft`` (:func:`run_finetune`), the rank row's numbers
    (:func:`rank_numbers`), glued with its verdict."""
    out = dict(pai_numbers(payload)) if payload is not None else {}
    if ft is not None:
        out.update(rank_numbers(ft))
    if config is not None:
        out["pai_split"] = trained_on(ImpConfig.of(config))
    shown = {name: start for name, start in GLUED_VERDICTS.items()  # (a table without a
             if any(str(r["claim"]).startswith(start) for r in rows)}  # section's rows: none)
    out.update(plots.verdicts(rows, **shown))
    if "match_verdict" in shown:
        out["match_margin"] = match_margin(rows)
    if payload is not None:
        out["pai_leads"] = pai_leads(payload)
        out["pai_leads_said"] = pai_leads_said(payload)
        out["pai_says_precomputed"] = _row("pai", [_pai(q, "precomputed")["pai"]
                                                   for q in _pai_window(payload)])["reproduced"]
    if pai is not None:
        out["pai_says_live"] = _row("pai", [_pai(pai, "this run")["pai"]])["reproduced"]
    return out


def match_margin(rows: list[dict]) -> str:
    """How far the match row's precomputed part clears its threshold (the seeds' median of
    ticket − dense above −MATCH_POINTS) beside the seeds' spread it must beat, from the numbers
    the row keeps: the two the verdict weighs ("—" where the row has no precomputed part)."""
    row = next(r for r in rows if str(r["claim"]).startswith(CLAIMS["match"][0]))
    part = next((e for e in row.get("evidence") or () if e["label"].startswith("precomputed")), None)
    if part is None:
        return "—"
    margin = median_margin(Test(**part["test"]), part["treatment"].values())
    return f"{margin:.1f} points against a spread of {part['noise']:.1f}"


def _judged(q: Pai, key: str) -> list:
    """``[(method, Judged)]``: the engine's judgement of each PaI method in row ``key``
    (``"pai"`` or ``"shuffle"``) at one density of the precomputed slider."""
    return list(zip([m for m in q.acc if m != "imp"], _pai(q, "precomputed")[key]["judged"]))


def pai_leads(payload: PaiFile) -> str:
    """Per density of the precomputed PaI slider in the PaI window (densest first), the range
    over the PaI methods and the seeds of each method's lead over the random mask (the ticket
    shuffled), in points, and the random mask's spread over the seeds: "1.8 to 5.0 points at
    21.7% of the weights (the random mask's spread over the seeds 0.6)". A method at or above
    the ticket has no lead the row counts (its measure is NaN): it is named as such, and a
    density where every method is gives no range."""
    parts = []
    for q in _pai_window(payload):
        rnd = 100 * np.asarray(q.acc["imp"]["shuffled"], float)
        spread = f"the random mask's spread over the seeds {np.ptp(rnd):.1f}"
        at = f"{100 * q.density:.1f}% of the weights"
        # the leads the row judges, printed by the row's own formatter (one number, one
        # value: the prose cannot round 6.05 one way and the table the other)
        judged = _judged(q, "pai")
        lead = [(v, j) for _, j in judged for v in j.treatment.values() if np.isfinite(v)]
        above = []
        for m, j in judged:
            seeds = [str(s) for s, v in j.treatment.items() if not np.isfinite(v)]
            if seeds:
                on = ("on every seed" if len(seeds) == len(j.treatment) else
                      f"on seed{'s' if len(seeds) > 1 else ''} {and_list(seeds)}")
                above.append(f"{PAI_NAMES[m]} at or above the ticket {on}")
        if not lead:
            parts.append(f"none at {at}, where every method is at or above the ticket on "
                         f"every seed, so no lead counts ({spread})")
            continue
        lo, hi = min(lead, key=lambda t: t[0]), max(lead, key=lambda t: t[0])
        note = f"{and_list(above)}, so no lead there; " if above else ""
        ends = dict.fromkeys([row_printed(*lo), row_printed(*hi)])  # one value: said once
        parts.append(f"{' to '.join(ends)} points at {at} ({note}{spread})")
    return "; ".join(parts)


def row_printed(v: float, judged) -> str:
    """``v`` as the claims row of ``judged`` (an engine judgement) prints it, its sign and
    unit dropped ("+6.0 pts" reads "6.0"): the row's formatter, the threshold-aware one the
    row's text uses (:func:`claims._judged_text`)."""
    text = evidence.sided(judged.claim.fmt, judged.claim.test.threshold)(v)
    return text.removesuffix(" pts").lstrip("+")


def rank_numbers(ft: dict) -> dict:
    """Section 5's rank as the claims row aggregates it (:func:`claims.mean_rank`, Mukherjee
    et al.'s mean over the weight matrices), median over the seeds of the first runs, and the
    control's (ΔW's best rank-1 approximation) likewise, each printed by the row's own
    formatter (:func:`row_printed`): a mean of 0.993 reads "0.993" in both, never "0.99",
    the bar, in the prose."""
    j = rank_judged(ft)
    med = lambda side: float(np.median(list(side.values())))  # noqa: E731
    return dict(ft_rank_mean=row_printed(med(j.treatment), j),
                ft_rank_one_mean=row_printed(med(j.control), j),
                ft_rank_matrices=len(next(iter(ft["per_seed"].values()))["rank"]))


def pai_leads_said(payload: PaiFile) -> str:
    """What the slider's runs say of the pruning-at-init row's test, treatment side only (the
    control is the next sentence's): every method leading the random mask by PAI_MARGIN on
    every seed and, at its median, by more than the random mask's spread; or which
    (method, density) fall short of either, as the row's engine measures them."""
    short, thin = [], []
    for q in _pai_window(payload):
        for m, j in _judged(q, "pai"):
            v, test = sorted(j.treatment.values()), j.claim.test
            at = f"{PAI_NAMES[m]} at {100 * q.density:.1f}%"
            if not all(test.passes(x) for x in v):
                short.append(at)
            elif not test.margin(float(np.median(v))) > j.noise:
                thin.append(f"{at} (clears the bar by {test.margin(float(np.median(v))):.1f} at its median, "
                            f"within the random mask's spread of {j.noise:.1f})")
    if not short and not thin:
        return "every method does, on every seed"
    said = [f"every method does on every seed except {and_list(short)}"] if short else []
    if thin:
        said.append(("every method leads by that much on every seed, " if not short else "")
                    + f"but {and_list(thin)} not by more than the spread")
    return "; ".join(said)


def shuffle_numbers(payload: PaiFile) -> dict:
    """The shuffling row per density of the precomputed slider in the PaI window and per
    method, as the row judges it: the engine's verdict, on how many seeds it holds where
    "partly", and the median of its measure (at most 0 passes): ``pai_shuffle_each``."""
    parts = []
    for q in _pai_window(payload):
        each = []
        for m, j in _judged(q, "shuffle"):
            v = list(j.treatment.values())
            held = sum(j.claim.test.passes(x) for x in v)
            count = f"{held} of {len(v)} seeds, " if j.verdict == "partly" else ""
            each.append(f'{PAI_NAMES[m]} "{j.verdict}" ({count}median {np.median(v):+.1f})')
        parts.append(f"at {100 * q.density:.1f}% of the weights, " + and_list(each))
    return dict(pai_shuffle_each="; ".join(parts))


def speed_numbers(res: ImpResult, command: str | None = None, live: ImpConfig | None = None) -> dict:
    """The speed figure in the numbers its "What to notice" quotes: the loss early stopping
    read and what that means (``speed_split``; in a file from before the validation split,
    that its runs are shown, never asserted, and are to be regenerated by ``command``), the
    dense network's early-stopping step on each seed (an evaluated step, never a mean), the
    range of the tickets' steps in :data:`SPEED_WINDOW`, on how many seeds the speed row holds
    with what that rests on (``speed_caveat``) and in which row the claims table holds these
    runs (``speed_row``); the controls' steps below a fifth of the weights and from which
    density on both stay within two evaluations of the end; the ticket's step at the sparsest
    round against the dense network's; with ``live`` (this page's run's config), the size of
    its validation split."""
    stop = np.nanmean(res.stop_step["ticket"], axis=0)
    acc = seed_mean(res.stop_acc["ticket"][:, 0])
    mid = [stop[r] for r in _window(res, SPEED_WINDOW)]
    dense = [f"{v:.0f}" for v in res.stop_step["ticket"][:, 0]]
    n_train, n_val = res.config.n_train, res.config.n_val
    (key, setting), = _speed(res, "precomputed").items()
    ok = setting["ok"]
    # the controls below a fifth of the weights (seed means): their steps, and the densest
    # round from which on both stay within two evaluations of the end of training
    ctrl = {v: np.nanmean(res.stop_step[v], axis=0) for v in ("reinit", "random")}
    steps = [c[r] for c in ctrl.values() for r in _window(res, (0, 0.2)) if np.isfinite(c[r])]
    end = (res.eval_steps[-1] if res.eval_steps else res.config.steps) - 2 * res.eval_interval
    tail = [r for r in range(1, len(res.density))
            if all(c[q] >= end for c in ctrl.values() for q in range(r, len(res.density)))]
    out = dict(speed_steps=res.config.steps,
               speed_width=res.config.width, speed_seeds=len(res.seeds),
               speed_loss=res.stop_on,
               speed_dense=(f"{dense[0]}" if len(dense) == 1 else
                            f"{and_list(dense)} (seeds {and_list([str(s) for s in res.seeds])})"),
               speed_interval=int(res.eval_interval),
               speed_dense_acc="not recorded" if np.isnan(acc) else f"{100 * acc:.1f}%",
               speed_dense_final=f"{100 * seed_mean(res.acc['ticket'][:, 0]):.1f}%",
               speed_ctrl_range=f"{min(steps):.0f} to {max(steps):.0f}" if steps else "—",
               speed_ctrl_end=(f"from {100 * res.density[tail[0]]:.1f}% of the weights on, both "
                               "within two evaluations of the end" if tail else
                               "at no round both within two evaluations of the end"),
               speed_range=f"{min(mid):.0f} to {max(mid):.0f}" if mid else "—",
               speed_held=("none: the runs are too short to tell" if ok is None else
                           f"{sum(ok.values())} of {len(ok)}"))
    # the sparsest round: where the ticket's step (seed mean) lies against the dense network's
    last, dense_mean = float(stop[-1]), float(stop[0])
    out["speed_sparsest"] = (
        f"at {100 * res.density[-1]:.1f}% of the weights the ticket stops at step "
        f"{last:.0f}, " + ("later than" if last > dense_mean else "still no later than")
        + f" the dense network (step {dense_mean:.0f}, seed means)")
    if live is not None:
        out["live_val"] = f"{live.n_val} of its {live.n_train}"
    if key != "speed":
        again = f" (`{command}`)" if command else ""
        return dict(out, speed_split=(
            "These runs were computed before the book held out a validation split: they "
            f"trained on all {n_train} training examples, and their early stopping read the "
            "test loss, so the test set chose the step. They are shown as they are, the claims "
            "table does not assert from them, and they are to be regenerated with the "
            f"split{again}."),
            speed_caveat=("Read on the test loss, this shows the pattern Frankle & Carbin "
                          "reported, not a test of it; the claims table shows it in a row of "
                          "its own, not asserted, apart from this page's run."),
            speed_row=("the speed row of the precomputed runs, which early-stopped on the test "
                       "loss, is a row of its own"))
    out["speed_split"] = (f"They hold out the last {n_val} of their {n_train} training "
                          "examples as the validation split, and early stopping reads only them.")
    out["speed_row"] = ("the precomputed IMP runs early-stopped on their validation split, as "
                        "this page's run does, so the speed row shows both, settings of one claim")
    if "speed" not in SHOWN_ONLY:
        out["speed_caveat"] = "The claims table asserts this row on these runs."
    elif not setting["judged"]:
        out["speed_caveat"] = "The claims table shows this row, not asserted: these runs cannot tell."
    else:  # the engine's own verdict and reason, and where its control lies
        j = setting["judged"][0]
        later = [-v for v in j.control.values()]  # the re-init's step after the dense one
        where = (f"the re-initialized ticket stops {min(later):.0f} to {max(later):.0f} steps "
                 "after the dense network on every seed" if min(later) > 0 else
                 f"the re-initialized ticket's step against the dense network's ranges from "
                 f"{-max(later):+.0f} to {-min(later):+.0f}")
        out["speed_caveat"] = (
            f"The claims table shows this row without asserting it: on these runs it says "
            f"\"{j.verdict}\"{f' ({j.reason})' if j.reason else ''}, although {where}.")
    return out


def pai_numbers(payload: PaiFile, target: float = 0.1) -> dict:
    """The precomputed PaI slider near ``target`` of the weights: what shuffling costs SNIP and
    SynFlow (the range over the two, in points), their seeds' spread there, and what it costs
    the IMP ticket; and the PaI row's margin over the random mask (:data:`PAI_MARGIN`). The
    rows' verdicts are :func:`verdict_numbers`', read off the claims table."""
    p = min(payload.pai, key=lambda q: abs(np.log(q.density / target)))
    cost = {m: 100 * (seed_mean(p.acc[m]["original"]) - seed_mean(p.acc[m]["shuffled"]))
            for m in p.acc}
    two = [cost["snip"], cost["synflow"]]
    spread = [np.ptp(100 * np.asarray(p.acc[m]["original"], dtype=float)) for m in ("snip", "synflow")]
    return dict(pai_density=f"{100 * p.density:.1f}%",
                pai_shuffle=f"{min(two):.1f} to {max(two):.1f}", pai_ticket=cost["imp"],
                pai_spread=f"{min(spread):.1f} to {max(spread):.1f}",
                pai_margin=f"{PAI_MARGIN:g}", pai_beyond=_beyond(p, ("snip", "synflow")),
                pai_sparsest=f"{100 * min(q.density for q in payload.pai):.1f}%",
                **shuffle_numbers(payload))


def _beyond(p: Pai, methods) -> str:
    """On which seeds shuffling costs each of ``methods`` more than its seeds' spread at one
    density of the PaI slider (the shuffling row's per-seed test failing), the exceptions
    named with their cost and spread: "SynFlow on every seed, SNIP on 2 of 3 (not on seed 2,
    where it costs 1.5 points, within its spread of 1.9)"."""
    judged = dict(_judged(p, "shuffle"))
    seeds = [int(s) for s in p.seeds]
    out = []
    for m in methods:
        x = 100 * np.asarray(p.acc[m]["original"], float)
        cost = x - 100 * np.asarray(p.acc[m]["shuffled"], float)
        within = [k for k, s in enumerate(seeds) if judged[m].claim.test.passes(judged[m].treatment[s])]
        out.append(f"{PAI_NAMES[m]} on " + ("every seed" if not within else
                   f"{len(seeds) - len(within)} of {len(seeds)} (not on " + and_list(
                       [f"seed {seeds[k]}, where it costs {cost[k]:.1f} points" for k in within])
                   + f", within its spread of {np.ptp(x):.1f})"))
    return and_list(out)


def lmc_numbers(calm: dict, hot: dict) -> dict:
    """Section 3's two runs in the numbers its "What to notice" quotes (barriers in points),
    and Frankle et al.'s threshold of stability (:data:`STABLE_BARRIER`, in points)."""
    b, ks = _barriers(hot), hot.rewind_steps
    return dict(calm_barrier=_barriers(calm)[calm.rewind_steps[0]], hot_first=b[ks[0]],
                hot_mid=b[ks[1]], hot_last=b[ks[-1]], hot_k_mid=ks[1], hot_k_last=ks[-1],
                stable_limit=f"{100 * STABLE_BARRIER:g}")


def rewind_numbers(runs: dict, lmc_payload=None) -> dict:
    """The precomputed rewinding setting of the IMP slider beside the reset one (mean over the
    rounds in :data:`SPARSE`), and the precomputed barriers at that learning rate from θ₀ and
    from the rewind step (medians over the seeds, in points) with the first rewind step whose
    barrier stays below :data:`STABLE_BARRIER` on each seed, and whether the rewind step is
    stable on the rewinding setting's own seeds (``lmc_payload``, default: the data file's)."""
    lmc_payload = lmc_payload or lmc_file()
    reset, rewound = _larger_lr(runs)
    main = next(iter(runs.values()))
    sparse = _window(reset, SPARSE)
    a = lambda res: 100 * float(np.mean([seed_mean(res.acc["ticket"][:, r]) for r in sparse]))  # noqa: E731
    k = rewound.config.rewind_step
    gap = 100 * (seed_mean(reset.acc["ticket"][:, -1]) - seed_mean(reset.acc["ticket"][:, 0]))
    out = dict(rewind_gap=a(rewound) - a(reset), rewind_acc=f"{a(rewound):.1f}%",
               reset_acc=f"{a(reset):.1f}%", rewind_k=k,
               reset_vs_dense=f"{abs(gap):.1f} points {'above' if gap >= 0 else 'below'}",
               reset_sparsest_density=f"{100 * reset.density[-1]:.1f}%")
    # the two settings' dense networks (round 0): setting 5's trains from θ_k, not θ₀, so it is
    # another network of the same seed; and how far setting 5's tickets rise above it
    dense = {n: 100 * seed_mean(res.acc["ticket"][:, 0]) for n, res in (("reset", reset), ("rewound", rewound))}
    above = [100 * seed_mean(rewound.acc["ticket"][:, r]) - dense["rewound"] for r in range(1, len(rewound.density))]
    top = int(np.argmax(above)) + 1
    out.update(reset_dense=f"{dense['reset']:.1f}%", rewind_dense=f"{dense['rewound']:.1f}%",
               dense_gap=f"{abs(dense['reset'] - dense['rewound']):.1f}",
               rewind_gap_pts=f"{out['rewind_gap']:.1f}",
               # the rewinding row's control: the same difference of the two settings'
               # re-initialized controls (seed means over the same rounds)
               rewind_ctrl=f"{100 * float(np.mean([seed_mean(rewound.acc['reinit'][:, r] - reset.acc['reinit'][:, r]) for r in sparse])):+.1f}",
               rewind_above=f"{max(above):.1f} points above it at {100 * rewound.density[top]:.1f}% "
                            "of the weights",
               rewind_seeds=len(rewound.seeds),
               lr_factor=f"{rewound.config.lr / main.config.lr:g}",
               imp_main_seeds=len(main.seeds))
    lr = f"{rewound.config.lr:g}"
    out["rewind_seed_stable"] = ("the stability data hold no barrier at this learning rate for "
                                 "the seeds these settings ran")
    if lr in lmc_payload.lmc:
        per = {s: _barriers(v) for s, v in lmc_payload.at(lr).items()}
        limit = 100 * STABLE_BARRIER
        settled = [_settled([b], limit) for b in per.values()]
        # printed to the claims table's digits (one decimal): one number, one value
        out.update(lmc_first=float(f"{np.median([b[0] for b in per.values()]):.1f}"),
                   lmc_rewind=float(f"{np.median([b[k] for b in per.values()]):.1f}"),
                   lmc_rewind_stable=f"{sum(b[k] < limit for b in per.values())} of {len(per)}",
                   lmc_stable_k=and_list([("none" if v is None else str(v)) for v in settled])
                   + f" (seed{'s' if len(per) > 1 else ''} {and_list([str(s) for s in per])})",
                   lmc_seeds=len(per))
        # the rewinding setting's own seeds: is its rewind point stable on them? (the row
        # tests rewinding to a point that may not have settled on the seed it ran)
        own = [(s, per[s][k]) for s in rewound.seeds if s in per and k in per[s]]
        if own:
            said = and_list([f"seed {s} {'is' if b < limit else 'is not'} stable from step {k} "
                             f"(a barrier of {b:.1f} points)" for s, b in own])
            seeds = "the seed" if len(own) == 1 else "the seeds"
            out["rewind_seed_stable"] = (
                f"the rewind point is stable on {seeds} these settings ran: {said}"
                if all(b < limit for _, b in own) else
                f"the rewind point has not settled on {seeds} these settings ran, so the row "
                f"does not test rewinding to a stable point: {said}")
    # the slider's other learning rates (neither the chapter's nor the rewinding setting's)
    other = [v for v in lmc_payload.lmc if v not in (lr, min(lmc_payload.lmc, key=float))]
    out["lmc_other"] = and_list([f"at Adam lr {v} the barrier from θ₀ is "
                             f"{_barriers(lmc_payload.lmc[v])[0]:.1f} points"
                             for v in other]) if other else "no other learning rate"
    return out


def breakdown(density, acc, points: float = 3.0) -> dict:
    """Where a ticket's curve (``acc`` per round, round 0 dense, fractions of 1; ``density``
    per round, falling) first falls ``points`` or more below the dense accuracy: ``round`` and
    ``density`` of that round, or None for both where it never does within the curve
    (censored: the threshold lies past the last round); ``last`` is the sparsest density."""
    density, acc = np.asarray(density, dtype=float), np.asarray(acc, dtype=float)
    below = [r for r in range(1, len(acc)) if acc[r] <= acc[0] - points / 100 + 1e-12]
    r = below[0] if below else None
    return dict(round=r, density=None if r is None else float(density[r]),
                last=float(density[-1]), rounds=len(density) - 1)


def breakdown_numbers(runs: dict, points: float = 3.0) -> dict:
    """Exercise 1's answer on the precomputed curve of section 1 (``runs``,
    :class:`~.experiments.ImpFile`'s ``imp``): its width and where the ticket (seed mean) first
    falls ``points`` below the dense network (:func:`breakdown`), said as censored ("not
    reached within N rounds") where it never does; then where each seed alone does."""
    main = next(iter(runs.values()))
    b = breakdown(main.density, main.acc["ticket"].mean(axis=0), points)
    if b["round"] is None:
        answer = (f"it is not reached within the curve's {b['rounds']} rounds: at the sparsest, "
                  f"{100 * b['last']:.1f}% of the weights, the ticket is still within "
                  f"{points:g} points of the dense network, so the threshold lies further out")
    else:
        answer = (f"the ticket first falls {points:g} points below the dense network at "
                  f"{100 * b['density']:.1f}% of the weights (round {b['round']})")
    if len(main.seeds) > 1:  # the mean can hide a seed that crosses (the page's own, say)
        per = {s: breakdown(main.density, main.acc["ticket"][k], points)
               for k, s in enumerate(main.seeds)}
        reach = [f"seed {s} at {100 * p['density']:.1f}% (round {p['round']})"
                 for s, p in per.items() if p["round"] is not None]
        never = [str(s) for s, p in per.items() if p["round"] is None]
        answer += ("; seed by seed it is reached by " + and_list(reach) if reach else
                   "; no seed alone reaches it either")
        if reach and never:
            answer += f", not within the curve by seed{'s' if len(never) > 1 else ''} {and_list(never)}"
    return dict(ex1_width=main.config.width, ex1_answer=answer)


def imp_numbers(runs: dict) -> dict:
    """Section 1's prose on the precomputed main curve (``runs``, an
    :class:`~.experiments.ImpFile`'s ``imp``): the densities of all the weights after 10 and 13
    rounds (the hidden layers follow (1 − p)^r, the output layer, pruned at half the rate,
    keeps more), the two sparsest densities and the ticket's loss there, seed 0's dense
    accuracy in the three-seed run and in the single-seed settings, what the runs trained on,
    the claims windows; and the numbers the page quotes later from the same runs (section 3's
    :func:`liu_numbers`, exercise 1's :func:`breakdown_numbers`), glued once, here."""
    main = next(iter(runs.values()))
    d = main.density
    acc = main.acc["ticket"].mean(axis=0)
    r10, r13 = min(10, len(d) - 1), min(13, len(d) - 1)
    loss = [100 * (acc[0] - acc[r]) for r in (len(d) - 2, len(d) - 1)]
    single = [r for k, r in runs.items() if r is not main and r.config.lr == main.config.lr
              and 0 in list(r.seeds)]
    one = sorted({f"{100 * r.acc['ticket'][list(r.seeds).index(0), 0]:.2f}%" for r in single})
    return dict(**liu_numbers(runs), **breakdown_numbers(runs),  # section 3's and exercise 1's
                imp_r10=f"{100 * d[r10]:.1f}%", imp_r13=f"{100 * d[r13]:.1f}%",
                imp_sparse=f"{100 * d[-2]:.1f}% and {100 * d[-1]:.1f}%",
                imp_sparse_loss=f"{loss[0]:.1f} and {loss[1]:.1f}",
                imp_dense_batched=f"{100 * main.acc['ticket'][list(main.seeds).index(0), 0]:.2f}%",
                imp_dense_single=and_list(one) if one else "—",
                imp_split=trained_on(main.config),  # §6: what the IMP file's runs trained on
                match_window=f"{100 * MATCH_WINDOW[0]:.0f}–{100 * MATCH_WINDOW[1]:.0f}%",
                control_window="{:.0f}–{:.0f}%".format(*(100 * v for v in ImpResult.round_at.__defaults__)))


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
