"""One network, six phenomena, the views: the timeline figure, one figure per question, the
slider over the precomputed grid, the live panel, ``claims`` and ``published_claims``."""
from __future__ import annotations

import math

import numpy as np

from .. import plots, results
from .. import widgets as W
from ..grokking.science import DELAY, FIT_ACC, GROK_ACC
from ..runtime import get_seed
from .experiments import GRID_FILE, OneRun, clock_fit, run
from .science import MEASURES, NC1_DROP, OneConfig, equilibrium_rms

__all__ = [
    "timeline_of", "timeline_figure", "init_figure", "clock_figure", "optimizer_figure",
    "lottery_figure", "lottery_sentence", "grid_slider", "grid_rows", "timeline_panel", "claims",
    "published_claims", "GRID",
]

GRID = GRID_FILE  # data/capstone_grid.json
ROWS = (("accuracy", None), ("weight RMS ‖θ‖/√n", None), ("NC1 (train)", "log"),
        ("ETF distance of the class means", None), ("effective rank / n", None),
        ("Fourier concentration (top 10%)", None))


def timeline_of(r: OneRun) -> dict:
    """A run's timeline as plain lists (for figures and JSON): steps, accuracies, every
    measure, and the run's lr, weight decay, fit and grok steps."""
    h = r.history
    n = min(len(h.steps), len(r.timeline["step"]))
    out = dict(step=list(h.steps[:n]), train_acc=list(h["train_acc"][:n]),
               test_acc=list(h["test_acc"][:n]),
               **{k: list(r.timeline[k][:n]) for k in MEASURES})
    out.update(lr=r.config.lr, weight_decay=r.config.weight_decay, fit_step=r.fit_step,
               grok_step=r.grok_step, optimizer=r.config.optimizer)
    return out


def _x(steps) -> np.ndarray:
    return np.asarray(steps, dtype=float)


def timeline_figure(tl, title: str = ""):
    """The one run on one step axis, six panels: train (solid) and test (dashed) accuracy;
    the weight RMS against AdamW's equilibrium √(η/2λ) (dotted) with the clock τ = 1/(ηλ)
    marked; NC1 on the training set; the ETF distance of the class means; the effective rank
    (over its maximum) of a hidden weight matrix and of its last update; the Fourier
    concentration of the input weights. Fit and grok steps dotted in every panel."""
    if isinstance(tl, OneRun):
        tl = timeline_of(tl)
    fig = plots.subplots(len(ROWS), 1, titles=[t for t, _ in ROWS], title=title, height=1250,
                         shared_xaxes=True, vertical_spacing=0.045)
    P, x = plots.PALETTE, _x(tl["step"])

    def line(y, name, row, color, dash="solid", legend=True):
        fig.add_scatter(x=x, y=y, name=name, line=dict(color=color, dash=dash), row=row, col=1,
                        showlegend=legend, mode="lines")

    line(tl["train_acc"], "train accuracy", 1, P[0])
    line(tl["test_acc"], "test accuracy", 1, P[0], "dash")
    line(tl["weight_rms"], "weight RMS", 2, P[4])
    eq = equilibrium_rms(tl["lr"], tl["weight_decay"])
    if math.isfinite(eq):
        fig.add_scatter(x=[x[0], x[-1]], y=[eq, eq], mode="lines", name="√(η/2λ)",
                        line=dict(color=P[4], dash="dot"), row=2, col=1)
    line(tl["nc1"], "NC1", 3, P[1])
    line(tl["etf_distance"], "ETF distance", 4, P[1], "dash")
    line(tl["weight_rank"], "rank of the weights", 5, P[2])
    fig.add_scatter(x=x, y=tl["update_rank"], name="rank of the update", mode="lines",
                    line=dict(color=P[2], dash="dash"), connectgaps=True, row=5, col=1)
    line(tl["fourier"], "Fourier concentration", 6, P[3])
    fig.update_yaxes(range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=3, col=1)
    fig.update_xaxes(title_text="step", row=len(ROWS), col=1)
    fig.update_layout(hovermode="x unified")
    for row in range(1, len(ROWS) + 1):
        for step, label in ((tl.get("fit_step"), "fit"), (tl.get("grok_step"), "grok")):
            if step is None:
                continue
            if row == 1:
                plots.mark_step(fig, step, f"{label} {step}", row=1, col=1)
            else:
                fig.add_vline(x=step, line=dict(color="#555", dash="dot", width=1), row=row, col=1)
    if tl["weight_decay"] > 0:
        tau = 1.0 / (tl["lr"] * tl["weight_decay"])
        if tau <= x[-1]:
            plots.mark_step(fig, tau, "τ = 1/(ηλ)", color=P[4], row=2, col=1)
    return fig


def _median(values):
    v = [x for x in values if x is not None]
    return float(np.median(v)) if v else None


def init_figure(rows: list[dict], title: str = "initial scale: lazy ↔ rich"):
    """Fit and grok steps against the initial scale (every parameter x the scale): one marker
    per seed, a line through the medians; a run that never groks is left out."""
    fig = plots.figure(title, "initial scale (x the default init)", "step", logx=True)
    scales = sorted({r["init_scale"] for r in rows})
    for i, key in enumerate(("fit_step", "grok_step")):
        color = plots.PALETTE[i]
        pts = [(r["init_scale"], r[key]) for r in rows if r[key] is not None]
        fig.add_scatter(x=[a for a, _ in pts], y=[b for _, b in pts], mode="markers",
                        marker=dict(color=color, size=7), name=f"{key[:-5]} step, each seed")
        med = [(s, _median([r[key] for r in rows if r["init_scale"] == s])) for s in scales]
        med = [(s, m) for s, m in med if m is not None]
        fig.add_scatter(x=[s for s, _ in med], y=[m for _, m in med], mode="lines",
                        line=dict(color=color), name=f"{key[:-5]} step, median")
    return fig


def clock_figure(rows: list[dict], title: str = "the clock 1/(ηλ) and the grok step"):
    """Grok step against τ = 1/(ηλ) on log-log axes, one colour per learning rate, with the
    least-squares line of :func:`~.experiments.clock_fit` and the line grok = τ; cells that
    never grokked sit on the top edge as crosses."""
    fig = plots.figure(title, "τ = 1/(ηλ) (steps)", "grok step", logx=True)
    fig.update_yaxes(type="log")
    lrs = sorted({r["lr"] for r in rows})
    top = max([r["grok_step"] for r in rows if r["grok_step"]] or [1]) * 1.5
    for i, lr in enumerate(lrs):
        mine = [r for r in rows if r["lr"] == lr]
        ok = [r for r in mine if r["grok_step"] is not None]
        no = [r for r in mine if r["grok_step"] is None]
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=[r["tau"] for r in ok], y=[r["grok_step"] for r in ok], mode="markers",
                        marker=dict(color=color, size=8), name=f"η = {lr:g}")
        if no:
            fig.add_scatter(x=[r["tau"] for r in no], y=[top] * len(no), mode="markers",
                            marker=dict(color=color, symbol="x", size=8),
                            name=f"η = {lr:g}, no grok")
    fit = clock_fit(rows)
    taus = [r["tau"] for r in rows]
    if math.isfinite(fit["slope"]):
        t = np.geomspace(min(taus), max(taus), 20)
        fig.add_scatter(x=t, y=np.exp(fit["intercept"]) * t ** fit["slope"], mode="lines",
                        line=dict(color="#555", dash="dash"),
                        name=f"fit: slope {fit['slope']:.2f}, r² {fit['r2']:.2f}")
    return fig


def optimizer_figure(opt: dict, title: str = "AdamW and Muon, each at its best learning rate"):
    """Test accuracy (top) and the effective rank of the update of the hidden matrix
    (bottom) of the best run of each optimizer (:func:`~.experiments.optimizer_runs`)."""
    fig = plots.subplots(2, 1, titles=("test accuracy", "effective rank of the update / n"),
                         title=title, height=620, shared_xaxes=True, vertical_spacing=0.1)
    for i, (name, v) in enumerate(opt.items()):
        best = v["best"]
        tl = timeline_of(best) if isinstance(best, OneRun) else best
        v = dict(lr=best.config.lr if name == "adamw" else best.config.muon_lr) \
            if isinstance(best, OneRun) else dict(lr=tl["lr"])
        color = plots.PALETTE[i]
        label = f"{name} (η = {v['lr']:g})"
        fig.add_scatter(x=_x(tl["step"]), y=tl["test_acc"], name=label, line=dict(color=color),
                        row=1, col=1)
        fig.add_scatter(x=_x(tl["step"]), y=tl["update_rank"], name=label, showlegend=False,
                        line=dict(color=color, dash="dash"), connectgaps=True, row=2, col=1)
        if tl["grok_step"] is not None:
            fig.add_vline(x=tl["grok_step"], line=dict(color=color, dash="dot", width=1))
    fig.update_yaxes(range=[-0.02, 1.05])
    fig.update_xaxes(title_text="step", row=2, col=1)
    return fig


def lottery_figure(lot: dict, title: str = ""):
    """Test accuracy of the dense run and of each sparse arm of
    :func:`~.experiments.lottery` (solid), with training accuracy (dotted)."""
    title = title or f"sparse networks at {lot['density']:.0%} of the weights"
    fig = plots.figure(title, "step", "accuracy")
    for i, (name, a) in enumerate(lot["arms"].items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=_x(a["steps"]), y=a["test_acc"], name=f"{name} · test", mode="lines",
                        line=dict(color=color), legendgroup=name)
        fig.add_scatter(x=_x(a["steps"]), y=a["train_acc"], name=f"{name} · train",
                        mode="lines", line=dict(color=color, dash="dot"), legendgroup=name,
                        showlegend=False)
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


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


def grid_rows(payload: dict, optimizer: str | None = None) -> list[dict]:
    """The precomputed grid's rows (of one optimizer)."""
    return [r for r in payload["rows"] if optimizer is None or r["optimizer"] == optimizer]


def grid_slider(payload: dict, seed: int = 0):
    """The precomputed grid as a slider over (optimizer, initial scale): each position shows
    the test (solid) and train (dotted) accuracy of every weight decay, for one seed."""
    rows, curves = payload["rows"], payload["curves"]
    figs, labels, active = [], [], 0
    keys = sorted({(r["optimizer"], r["init_scale"]) for r in rows},
                  key=lambda k: (k[0] != "adamw", k[1]))
    for opt, scale in keys:
        fig = plots.figure(f"{opt}, initial scale x{scale:g}", "step", "accuracy")
        picked = [(r, c) for r, c in zip(rows, curves) if r["optimizer"] == opt
                  and r["init_scale"] == scale and r["seed"] == seed]
        for i, (r, c) in enumerate(sorted(picked, key=lambda rc: rc[0]["weight_decay"])):
            color = plots.PALETTE[i % len(plots.PALETTE)]
            grok = r["grok_step"] if r["grok_step"] is not None else "none"
            name = f"λ {r['weight_decay']:g} (grok {grok})"
            fig.add_scatter(x=_x(c["steps"]), y=c["test_acc"], name=name, mode="lines",
                            line=dict(color=color))
            fig.add_scatter(x=_x(c["steps"]), y=c["train_acc"], name=name, mode="lines",
                            line=dict(color=color, dash="dot"), showlegend=False)
        fig.update_yaxes(range=[-0.02, 1.02])
        if (opt, scale) == ("adamw", 1.0):
            active = len(figs)
        figs.append(fig)
        labels.append(f"{opt} x{scale:g}")
    return plots.slider(figs, labels, name="optimizer, initial scale", active=active)


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
