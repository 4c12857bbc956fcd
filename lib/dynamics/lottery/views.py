"""Views of the lottery-ticket chapter: live panels (``*_panel``), the claims table
(:func:`claims`) and the numbers for the prose. The figures, sliders and tables are in
:mod:`.figures` (re-exported here).
"""
from __future__ import annotations

import numpy as np

from .. import plots, results
from ..runtime import get_profile, get_seed
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import ImpResult, imp_runs, run_imp, run_lmc, run_pai_at
from .science import PAI_METHODS, LotteryConfig

from .figures import *  # noqa: F401,F403  (re-exported: views.X still works)
from .figures import (PAI_NAMES, _by_step, _mean, imp_figure, lmc_figure, pai_figure)

__all__ = ["speed_claim", "claims", "speed_numbers", "pai_numbers", "lmc_numbers",
           "rewind_numbers", "published_claims", "imp_panel", "pai_panel", "lmc_panel"]


# ============================================================================ claims


def speed_claim(res: ImpResult, where: str = "this run") -> dict:
    """Frankle & Carbin's "tickets learn faster", measured by the early-stopping step (the
    step of lowest test loss) of the dense network and of the fastest ticket that keeps at
    least 10% of the weights. When the dense network's test loss is still falling at the
    end of training, the runs are too short to tell: "not at this scale"."""
    stop, step = res.stop_step["ticket"], res.eval_interval
    dense = _mean(stop[:, 0])
    pruned = [r for r in range(1, len(res.density)) if res.density[r] >= 0.1
              and np.isfinite(stop[:, r]).any()]
    if not pruned or not np.isfinite(dense):
        return plots.claim("Tickets learn faster (earlier early-stopping step)",
                           "Frankle & Carbin (2019)", f"{where}: no pruned round measured",
                           "not at this scale")
    best = min(pruned, key=lambda r: _mean(stop[:, r]))
    fast = _mean(stop[:, best])
    text = (f"{where}: dense {dense:.0f} steps, fastest ticket {fast:.0f} steps "
            f"(at {100 * res.density[best]:.0f}% of the weights)")
    last = res.eval_steps[-1] if res.eval_steps else 0
    if dense >= last - step:
        return plots.claim("Tickets learn faster (earlier early-stopping step)",
                           "Frankle & Carbin (2019)", text + f"; too short to tell: the dense "
                           f"minimum is within one evaluation ({step} steps) of the end of the "
                           f"{last}-step runs", "not at this scale")
    return plots.claim("Tickets learn faster (earlier early-stopping step)",
                       "Frankle & Carbin (2019)", text,
                       "yes" if fast <= dense - 2 * step else "partly" if fast < dense else "no")


def claims(res: ImpResult, pai: dict | None = None, lmcs: dict | None = None,
           precomputed: dict | None = None) -> list[dict]:
    """Claims of the papers beside what was measured, with a verdict computed from the
    numbers: ``res`` (this run's IMP curve), ``pai`` (:func:`run_pai`), ``lmcs``
    (``{label: run_lmc result}``, the first at the chapter's learning rate) and
    ``precomputed`` (``{setting: ImpResult}`` read from ``data/``: the speed figure's runs
    and the learning-rate settings of the slider)."""
    r = res.round_at()
    d = 100 * res.density[r]
    m = lambda v: 100 * _mean(res.acc[v][:, r])  # noqa: E731
    dense = 100 * _mean(res.acc["ticket"][:, 0])
    ticket, reinit, random = m("ticket"), m("reinit"), m("random")
    curve = [100 * _mean(res.acc["ticket"][:, q]) for q in range(len(res.density))]
    level = [q for q, a in enumerate(curve) if a >= dense - 1]  # within a point of dense
    q = level[-1] if level else 0
    rows = [
        plots.claim("Winning tickets match the dense network at 10-20% of the weights or fewer",
                    "Frankle & Carbin (2019): LeNet-300-100 on MNIST",
                    f"sparsest ticket within 1 pt of dense: {100 * res.density[q]:.1f}% of the "
                    f"weights ({curve[q]:.1f}% vs {dense:.1f}%)"
                    + ("" if q == r else f"; at {d:.1f}%: {ticket:.1f}%"),
                    "yes" if res.density[q] <= 0.2 else "partly" if res.density[q] <= 0.4 else "no"),
        plots.claim("Re-initializing the ticket's weights destroys it",
                    "Frankle & Carbin (2019)",
                    f"same mask, re-initialized: {reinit:.1f}% ({reinit - ticket:+.1f} pts)",
                    "yes" if ticket - reinit >= 3 else "partly" if ticket > reinit else "no"),
        plots.claim("A random mask with the same layer-wise sparsity is far below the ticket",
                    "Frankle & Carbin (2019); Frankle et al. (2021)",
                    f"random mask: {random:.1f}% ({random - ticket:+.1f} pts)",
                    "yes" if ticket - random >= 3 else "partly" if ticket > random else "no"),
        # the prose reads the speed off the precomputed figure; this run's row is shown, not asserted
        dict(speed_claim(res), asserted=False),
    ]
    main = next(iter(precomputed.values())) if precomputed else None
    if main is not None:
        rows.append(speed_claim(main, f"precomputed ({len(main.seeds)} seeds, section 1 figure)"))
    if pai is not None:
        rows.append(_pai_claim(pai))
    lmcs = lmcs or {}
    for label, lmc in lmcs.items():
        rows.append(_lmc_claim(label, lmc))
    if precomputed:  # shown with the verdict the prose glues: "partly" at this scale
        rows += [dict(row, asserted=False) for row in _lr_claims(precomputed)]
    return rows


def _pai_claim(pai: dict) -> dict:
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
    return plots.claim("Pruning at init beats a random mask but not IMP; shuffling its mask "
                       "within layers costs it little, the ticket a lot",
                       "Frankle et al. (2021)", text, plots.verdict(all(checks), any(checks)))


def _lmc_claim(label: str, lmc: dict) -> dict:
    ks = lmc["rewind_steps"]
    bars = {k: 100 * float(np.nan if _by_step(lmc["barrier"], k) is None
                           else _by_step(lmc["barrier"], k)) for k in ks}
    text = f"{label}: barrier " + ", ".join(f"{bars[k]:.1f} pts at k = {k}" for k in ks)
    if len(ks) == 1:
        return plots.claim("A small network is stable at initialization: two runs from θ₀ are "
                           "linearly connected", "Frankle et al. (2020): LeNet on MNIST",
                           text, "yes" if bars[ks[0]] < 2 else "no")
    first, last = bars[ks[0]], bars[ks[-1]]
    if not first > 4:
        verdict = "not at this scale"  # stable already at k = 0: nothing to restore
    else:
        verdict = "yes" if last < first / 3 else "partly" if last < first else "no"
    return plots.claim("Where training is unstable at init, it becomes stable after a few "
                       "steps (the rewinding point)",
                       "Frankle et al. (2020): ResNet-20, VGG-16 after a few % of training",
                       text, verdict)


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
            "yes" if gap(sparse) < 1 else "partly" if gap(mid) < 1 else "no"))
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
            "of the weights", "yes" if diff >= 3 else "partly" if diff > 0 else "no"))
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
    """Section 3's two runs in the numbers its "What to notice" quotes (barriers in points)."""
    b = lambda lmc, k: 100 * float(_by_step(lmc["barrier"], k))  # noqa: E731
    ks = hot["rewind_steps"]
    return dict(calm_barrier=b(calm, calm["rewind_steps"][0]), hot_first=b(hot, ks[0]),
                hot_mid=b(hot, ks[1]), hot_last=b(hot, ks[-1]), hot_k_mid=ks[1], hot_k_last=ks[-1])


def rewind_numbers(runs: dict, lmc_payload: dict) -> dict:
    """The precomputed rewinding setting of the IMP slider beside the reset one (mean over the
    rounds at 10% of the weights or fewer), and the precomputed barriers at that learning rate
    from θ₀ and from the rewind step."""
    reset = next(r for k, r in runs.items() if "reset" in k and "lr" in k)
    rewound = next(r for k, r in runs.items() if "rewind" in k)
    sparse = [r for r in range(len(reset.density)) if reset.density[r] <= 0.1]
    a = lambda res: 100 * float(np.mean([_mean(res.acc["ticket"][:, r]) for r in sparse]))  # noqa: E731
    k = int(rewound.config["rewind_step"])
    lmc = lmc_payload["lmc"][f"{rewound.config['lr']:g}"] if f"{rewound.config['lr']:g}" in lmc_payload["lmc"] else None
    out = dict(rewind_gap=a(rewound) - a(reset), rewind_acc=f"{a(rewound):.1f}%",
               reset_acc=f"{a(reset):.1f}%", rewind_k=k,
               reset_vs_dense=_points(100 * (_mean(reset.acc["ticket"][:, -1])
                                             - _mean(reset.acc["ticket"][:, 0]))),
               reset_sparsest_density=f"{100 * reset.density[-1]:.1f}%")
    if lmc is not None:
        out.update(lmc_first=100 * float(_by_step(lmc["barrier"], 0)),
                   lmc_rewind=100 * float(_by_step(lmc["barrier"], k)))
    return out


def published_claims() -> list[dict]:
    """The claims rows that rest on the precomputed (cpu) data the published page shows: the
    speed figure, the PaI slider, the stability of training at three learning rates and the
    learning-rate settings of the IMP slider (``tests/test_published_claims.py``)."""
    runs = imp_runs(results.load("lottery_imp")[0])
    main = next(iter(runs.values()))
    pai = results.load("lottery_pai")[0]["pai"]
    lmc = results.load("lottery_lmc")[0]["lmc"]
    rows = [speed_claim(main, f"precomputed ({len(main.seeds)} seeds, section 1 figure)")]
    for p in pai:  # the prose asserts the comparison at a fifth and a tenth of the weights
        rows.append(dict(_pai_claim(p), asserted=0.08 <= p["density"] <= 0.25))
    calm, hot = lmc[min(lmc, key=float)], lmc[max(lmc, key=float)]
    rows += [_lmc_claim(f"precomputed, Adam lr {min(lmc, key=float)}", {**calm, "rewind_steps": [0]}),
             _lmc_claim(f"precomputed, Adam lr {max(lmc, key=float)}", hot)]
    rows += [dict(row, asserted=False) for row in _lr_claims(runs)]
    return rows


# ============================================================================ live panels


def imp_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: IMP with its controls; rounds, pruning rate, rewind step, global or per-layer
    ranking, learning rate. ``above``: what the page shows above the panel (default: the
    provenance of the precomputed IMP slider); ``overrides`` change the profile's config."""
    base = LotteryConfig.for_profile(get_profile(profile), **overrides)
    seed = get_seed(seed)

    def run(update, rounds, prune_fraction, rewind_step, scope, lr):
        cfg = base.replace(rounds=int(rounds), prune_fraction=float(prune_fraction),
                           rewind_step=int(rewind_step), scope=scope, lr=float(lr), seeds=1)

        def redraw(res, r):
            update(fig=imp_figure(res), status=f"round {r}: {100 * res.density[r]:.1f}% of the weights")

        res = run_imp(cfg, seeds=[seed], progress=False, on_round=redraw)
        a, last = res.acc, len(res.masks) - 1
        if res.diverged:
            update(status=f"diverged: {res.diverged[0]}")
        elif not res.stopped:
            update(status=f"done: at {100 * res.density[last]:.1f}% of the weights, ticket "
                   f"{100 * a['ticket'][0, last]:.1f}%, re-init {100 * a['reinit'][0, last]:.1f}%, "
                   f"random mask {100 * a['random'][0, last]:.1f}% (dense {100 * a['ticket'][0, 0]:.1f}%)")
        return imp_figure(res)

    controls = controls_for(base, ["rounds", "prune_fraction", "rewind_step", "scope", "lr"])
    limits = {"rewind_step": base.steps, "rounds": 20, "prune_fraction": 0.9}
    for c in controls:
        if c.name in limits:  # narrower than the config allows: what a panel run can afford
            c.high = max(limits[c.name], c.value)
    return Panel(run, controls, title="Try it: iterative magnitude pruning",
                 above=results.provenance_of("lottery_imp") if above == "precomputed" else above,
                 profile=get_profile(profile))


def pai_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: pruning at init at a chosen sparsity, each mask as chosen and shuffled."""
    base = LotteryConfig.for_profile(get_profile(profile), **overrides)
    seed = get_seed(seed)

    def run(update, sparsity, method):
        methods = PAI_METHODS if method == "all" else (method,)
        pai = run_pai_at(base.replace(seeds=1), float(sparsity), methods, seed=seed,
                         progress=False)
        if pai["diverged"]:
            update(status=f"diverged: {pai['diverged'][0]}")
        elif not pai["stopped"]:
            update(status="done: " + ", ".join(
                f"{PAI_NAMES[m]} {100 * pai['acc'][m]['original'][0]:.1f}% "
                f"(shuffled {100 * pai['acc'][m]['shuffled'][0]:.1f}%)" for m in methods))
        return pai_figure(pai)

    return Panel(run, [Slider("sparsity", 0.5, 0.995, value=0.9, step=0.005),
                       Choice("method", ("all",) + PAI_METHODS)],
                 title="Try it: pruning at initialization and the shuffling check",
                 above=results.provenance_of("lottery_pai") if above == "precomputed" else above,
                 profile=get_profile(profile))


def lmc_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: instability of two runs from θ₀ and from θ_k, against the learning rate."""
    base = LotteryConfig.for_profile(get_profile(profile), **overrides)
    seed = get_seed(seed)

    def run(update, lr, rewind_step, optimizer):
        cfg = base.replace(lr=float(lr), optimizer=optimizer)
        lmc = run_lmc(cfg, (0, int(rewind_step)), seed=seed, progress=False)
        why = [f"k = {k}: {v}" for k, v in lmc["diverged"].items() if v]
        if why:
            update(status="diverged: " + "; ".join(why))
        elif not lmc["stopped"]:
            update(status="done: barrier " + ", ".join(
                f"{100 * lmc['barrier'][k]:.1f} pts at k = {k}" for k in lmc["rewind_steps"]))
        return lmc_figure(lmc, f"Two runs from θₖ, {optimizer} lr {float(lr):.2g}")

    return Panel(run, [Slider("lr", 1e-4, 10.0, value=1e-2, log=True, description="learning rate"),
                       Slider("rewind_step", 0, base.steps, value=min(50, base.steps), integer=True,
                              description="rewind step k"),
                       Choice("optimizer", ("adam", "momentum", "sgd"))],
                 title="Try it: linear mode connectivity",
                 above=results.provenance_of("lottery_lmc") if above == "precomputed" else above,
                 profile=get_profile(profile))
