"""One network, six phenomena, the views: the live panel, ``claims``, ``published_claims`` and
the lottery sentence for the prose. The figures are in :mod:`.figures` (re-exported here)."""
from __future__ import annotations

import math

from .. import plots, results
from .. import widgets as W
from ..grokking.science import DELAY, FIT_ACC, GROK_ACC
from ..runtime import get_seed
from .experiments import GRID_FILE, OneRun, clock_fit, run
from .science import MEASURES, NC1_DROP, OneConfig

from .figures import *  # noqa: F401,F403  (re-exported: views.X still works)
from .figures import (_median, timeline_figure)

__all__ = ["lottery_sentence", "timeline_panel", "claims", "published_claims", "GRID"]

GRID = GRID_FILE  # data/capstone_grid.json


def lottery_sentence(lot: dict) -> str:
    """What the lottery experiment found, in words computed from it (for the prose)."""
    arms = lot["arms"]
    dense = arms["dense"]["grok_step"]
    grokked = {n: a["grok_step"] for n, a in arms.items() if n != "dense" and a["grok_step"]}
    if not grokked:
        fits = all(a["fit_step"] is not None for n, a in arms.items() if n != "dense")
        return ("none of the sparse networks generalizes within the budget, "
                + ("although each fits its training pairs: the memorization phase returns, and "
                   if fits else "and not all of them even fit their training pairs: ")
                + "the mask cut from the grokked network does not carry the generalizing "
                  "solution back to the start of training at this scale")
    said = ", ".join(f"{n} at step {t}" for n, t in grokked.items())
    faster = [n for n, t in grokked.items() if dense is not None and t < dense]
    return (f"the sparse networks that generalize within the budget do so {said}; "
            + (f"sooner than the dense run: {', '.join(faster)}" if faster else
               "none sooner than the dense run"))


# ============================================================================ live panel


def timeline_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your initial scale, weight decay, learning rate and optimizer;
    the six-panel timeline redraws while it trains (Stop ends it and shows what it has)."""
    base = OneConfig.for_profile(profile)
    seed = get_seed(seed)
    controls = W.controls_for(base, ["init_scale", "weight_decay", "lr", "optimizer"])

    def go(update, **values):
        cfg = base.replace(**values)
        box = {}

        def draw(history):
            tl = box.get("timeline")
            if not tl or not tl["step"]:
                return None
            n = min(len(history.steps), len(tl["step"]))
            return timeline_figure(dict(
                step=list(history.steps[:n]), train_acc=list(history["train_acc"][:n]),
                test_acc=list(history["test_acc"][:n]), **{k: tl[k][:n] for k in MEASURES},
                lr=cfg.lr, weight_decay=cfg.weight_decay, fit_step=None, grok_step=None))

        r = run(cfg, seed, on_eval=update.every(draw), progress=False, timeline=box)
        s = r.summary()
        if not update.stop_requested:
            update(status=f"fit at step {s['fit_step']}, grok at step {s['grok_step']} "
                          f"({s['phase']})")
        return timeline_figure(r, title=f"init x{cfg.init_scale:g}, λ {cfg.weight_decay:g}, "
                                        f"η {cfg.lr:g}, {cfg.optimizer}")

    note = (f"{base.steps:,} full-batch steps of a + b mod {base.p}, seed {seed}; fit = train "
            f"accuracy > {FIT_ACC:.0%}, grok = test accuracy > {GROK_ACC:.0%}.")
    return W.Panel(go, controls, title="Try it: one network, live", note=note, above="live")


# ============================================================================ claims


def _grid_claims(payload: dict) -> list[dict]:
    """The rows that rest on the precomputed grid: the initial scale and Muon at λ = 1."""
    C = plots.claim
    rows = payload["rows"]
    adam = [r for r in rows if r["optimizer"] == "adamw" and r["weight_decay"] == 1.0]
    scales = sorted({r["init_scale"] for r in adam})
    lo, hi = scales[0], scales[-1]
    t = {s: _median([r["grok_step"] if r["grok_step"] is not None else math.inf
                     for r in adam if r["init_scale"] == s]) for s in scales}
    said = ", ".join(f"x{s:g}: {'none' if t[s] is None or math.isinf(t[s]) else f'{t[s]:.0f}'}"
                     for s in scales)
    out = [C("A lazier start (larger initial weights) delays generalization; a richer one "
             "shortens the wait", "Kumar et al. 2024",
             f"grid, AdamW, λ = 1, median grok step per initial scale: {said}",
             plots.verdict(t[hi] is not None and t[lo] is not None and t[hi] > 1.2 * t[lo]))]
    muon = [r for r in rows if r["optimizer"] == "muon" and r["weight_decay"] == 1.0
            and r["init_scale"] == 1.0]
    ada = [r for r in adam if r["init_scale"] == 1.0]
    if muon and ada:
        tm = _median([r["grok_step"] if r["grok_step"] is not None else math.inf for r in muon])
        ta = _median([r["grok_step"] if r["grok_step"] is not None else math.inf for r in ada])
        fmt = lambda v: "none" if v is None or math.isinf(v) else f"{v:.0f}"  # noqa: E731
        out.append(C("Muon, which orthogonalizes the update, groks sooner than AdamW",
                     "Tian 2025; Jordan et al. 2024",
                     f"grid, λ = 1, init x1, median grok step: AdamW {fmt(ta)}, Muon {fmt(tm)}",
                     plots.verdict(not math.isinf(tm) and tm < 0.8 * ta,
                                   partly=not math.isinf(tm) and tm < ta), asserted=False))
    return out


def _clock_claim(clock: list[dict]) -> dict:
    """The clock's row: the fit of log grok step on log τ (a slope near 1: the clock alone
    sets the wait), and in how many cells the weight RMS settled at all before the end."""
    fit = clock_fit(clock)
    fails = len(fit["failed"]) + len(fit["off"])
    settled = [r for r in clock if r.get("settle_step") is not None]
    said = (f"{fit['n']} of {len(clock)} cells grokked; log-log slope {fit['slope']:.2f}, "
            f"r² {fit['r2']:.2f}; {fails} cells never grok or sit 2x off the line; the weight "
            f"RMS relaxes to its end value within the budget in {len(settled)} cells")
    finite = math.isfinite(fit["slope"]) and math.isfinite(fit["r2"])
    ok = finite and 0.75 <= fit["slope"] <= 1.33 and fit["r2"] >= 0.8
    return plots.claim("The 1/(ηλ) clock predicts when the plateau ends (grok step ∝ τ)",
                       "Liu et al. 2023; Kosson et al. 2024", said,
                       plots.verdict(ok, partly=finite and fit["slope"] > 0 and fit["r2"] >= 0.5),
                       asserted=False)


def claims(first: OneRun, inits: list[dict], clock: list[dict], opt: dict, lot: dict,
           coll: dict, payload: dict | None = None) -> list[dict]:
    """The claims table: each question's prediction from its chapter or paper beside this
    notebook's measurement; ``payload`` adds the rows of the precomputed grid."""
    C = plots.claim
    fit, grok = first.fit_step, first.grok_step
    tl = first.timeline
    rows = [C("Test accuracy rises long after training accuracy (grokking)", "Power et al. 2022",
              f"fit at step {fit}, grok at step {grok}",
              plots.verdict(fit is not None and grok is not None and grok >= DELAY * fit,
                            partly=grok is not None))]
    f0, f1 = tl["fourier"][0], tl["fourier"][-1]
    r0, r1 = tl["weight_rank"][0], tl["weight_rank"][-1]
    rows.append(C("Through the plateau the input weights become sparse in the Fourier basis "
                  "and the hidden weights lower in rank", "Nanda et al. 2023",
                  f"Fourier concentration {f0:.2f} → {f1:.2f}; rank of the weights / n "
                  f"{r0:.2f} → {r1:.2f}", plots.verdict(f1 > f0 + 0.3 and r1 < r0 - 0.1)))
    scales = sorted({r["init_scale"] for r in inits})
    med = {s: _median([r["grok_step"] if r["grok_step"] is not None else math.inf
                       for r in inits if r["init_scale"] == s]) for s in scales}
    said = ", ".join(f"x{s:g}: {'none' if math.isinf(med[s]) else f'{med[s]:.0f}'}"
                     for s in scales)
    rows.append(C("A lazier start delays generalization (live sweep)", "Kumar et al. 2024",
                  f"grok step per initial scale: {said}",
                  plots.verdict(med[scales[-1]] > 1.2 * med[scales[0]])))
    rows.append(_clock_claim(clock))
    a, m = opt["adamw"]["best"], opt["muon"]["best"]
    ua = dict(zip(a.timeline["step"], a.timeline["update_rank"]))
    flat = (a.fit_step in ua and a.grok_step in ua and ua[a.grok_step] > ua[a.fit_step])
    rows.append(C("Muon, each optimizer at its best learning rate, groks sooner than AdamW",
                  "Jordan et al. 2024; Tian 2025",
                  f"AdamW (η {a.config.lr:g}) groks at {a.grok_step}, Muon (η "
                  f"{m.config.muon_lr:g}) at {m.grok_step}; final test accuracy "
                  f"{a.history.last('test_acc'):.0%} and {m.history.last('test_acc'):.0%}",
                  plots.verdict(m.grok_step is not None and a.grok_step is not None
                                and m.grok_step < 0.8 * a.grok_step,
                                partly=m.grok_step is not None),
                  asserted=False))
    rows.append(C("AdamW's update spectrum flattens before generalization",
                  "Tian 2025", "rank of the update / n: "
                  + (f"{ua[a.fit_step]:.2f} at the fit step, {ua[a.grok_step]:.2f} at the grok "
                     f"step" if a.fit_step in ua and a.grok_step in ua else "not measured"),
                  plots.verdict(flat), asserted=False))
    arms = lot["arms"]
    dense, t0 = arms["dense"], arms["ticket, rewound to θ₀"]
    tk = arms["ticket, rewound to θ_k"]
    ctrl = [arms["random mask, θ₀"], arms["ticket, reinitialized"]]
    best = max(t0["final_test_acc"], tk["final_test_acc"])
    fmt = lambda a: f"test {a['final_test_acc']:.0%}, grok {a['grok_step']}"  # noqa: E731
    rows.append(C("A ticket pruned from the grokked network and rewound generalizes with "
                  "little or no delay", "Frankle & Carbin 2019; Frankle et al. 2020",
                  f"{lot['density']:.0%} of the weights; dense {fmt(dense)}; rewound to θ₀ "
                  f"{fmt(t0)}; to step {lot['rewind_step']} {fmt(tk)}",
                  plots.verdict(any(t["grok_step"] is not None and dense["grok_step"] is not None
                                    and t["grok_step"] < dense["grok_step"] for t in (t0, tk)),
                                partly=best > 0.5), asserted=False))
    rows.append(C("The ticket's mask and values matter: a random mask and a reinitialized "
                  "ticket do worse", "Frankle & Carbin 2019",
                  f"random mask {fmt(ctrl[0])}; reinitialized {fmt(ctrl[1])}; best ticket "
                  f"test {best:.0%}",
                  plots.verdict(best > max(c["final_test_acc"] for c in ctrl) + 0.2,
                                partly=best > max(c["final_test_acc"] for c in ctrl)),
                  asserted=False))
    said = (f"NC1 {coll['nc1_fit']:.3g} at the fit step, {coll['nc1_grok']:.3g} at the grok "
            f"step, {coll['nc1_end']:.3g} at the end; "
            + ("never fell below half its value at the fit step" if coll["nc1_falls"] is None
               else f"fell below half at step {coll['nc1_falls']}"))
    rows.append(C(f"With weight decay the features collapse (NC1 falls by {1 / NC1_DROP:g}x), "
                  "no later than the test accuracy rises",
                  "Jacot et al. 2025; Papyan et al. 2020", said,
                  plots.verdict(coll["lead"] is not None and coll["lead"] >= 0,
                                partly=coll["nc1_falls"] is not None), asserted=False))
    if payload is not None:
        rows += _grid_claims(payload)
    return rows


def published_claims() -> list[dict]:
    """The claims rows computed only from ``data/capstone_grid.json`` (what the published
    page shows): the initial scale, Muon against AdamW and the clock, on the grid."""
    payload, _ = results.load(GRID)
    return _grid_claims(payload) + [_clock_claim(payload["clock"])]
