"""Schedules and weight averaging, the figures and tables of sections 1-5."""
from __future__ import annotations

import numpy as np

from .. import plots

__all__ = ["anytime_figure", "anytime_rows", "exponent_figure", "cooldown_figure", "cooldown_rows",
           "average_figure", "schedulefree_figure", "schedulefree_rows", "clock_figure",
           "wsd_norm_conjecture", "conjecture_figure"]


def _series(r):
    """(label, kind, schedule name, dash) of what the anytime figure draws."""
    hs = r.horizons
    yield "constant, last iterate", "last", "constant", "solid"
    yield "constant + averaging", "tail", "constant", "dash"
    yield "1/√t + averaging", "tail", "1/√t", "dash"
    yield f"theory (γ*={r.gamma:.2f}) + averaging", "tail", "theory", "dash"
    yield f"cosine tuned to {hs[-1]}, read early", "last", f"cos@{hs[-1]}", "dot"


def anytime_figure(r, title: str | None = None):
    """The excess risk against the horizon (log-log): the simulation's mean (markers and
    lines) and the exact expected risk (a thin line of each schedule's colour; the envelope of
    tuned cosines, drawn thick and grey, has its thin exact line too, darker to show on top).
    A result whose ``sim`` is None (a live panel's first figures) draws the exact risk alone, and
    one without the tuned cosines leaves them out."""
    hs = np.asarray(r.horizons, float)
    fig = plots.figure(title or "Which schedule is good at every horizon?", "horizon (steps)",
                       "excess risk", logx=True, logy=True)
    sim = r.sim
    cosines = [f"cos@{int(h)}" for h in hs]
    if all(c in r.names for c in cosines):
        def envelope(src):
            return [src.last[r.names.index(c)][k] for k, c in enumerate(cosines)]
        label = "cosine tuned to each horizon"
        if sim:
            fig.add_scatter(x=hs, y=envelope(sim), mode="lines+markers", name=label,
                            line=dict(color="#888", width=4), legendgroup="envelope")
        fig.add_scatter(x=hs, y=envelope(r.exact), mode="lines", showlegend=not sim,
                        name=label + ", exact",
                        line=dict(color="#333" if sim else "#888", width=1 if sim else 4),
                        opacity=0.5 if sim else 1.0, legendgroup="envelope",
                        hoverinfo="skip" if sim else None)
    for j, (label, kind, name, dash) in enumerate(_series(r)):
        if name not in r.names:
            continue
        i = r.names.index(name)
        color = plots.PALETTE[j % len(plots.PALETTE)]
        if sim:
            fig.add_scatter(x=hs, y=getattr(sim, kind)[i], mode="lines+markers", name=label,
                            line=dict(color=color, dash=dash), legendgroup=str(j))
        fig.add_scatter(x=hs, y=getattr(r.exact, kind)[i], mode="lines", showlegend=not sim,
                        name=label + ", exact", line=dict(color=color, width=1 if sim else 2,
                                                          dash=None if sim else dash),
                        opacity=0.5 if sim else 1.0, legendgroup=str(j),
                        hoverinfo="skip" if sim else None)
    return fig


def anytime_rows(r) -> list[dict]:
    """Each schedule at the last horizon (the columns say which): its rate there, the risk of
    its last iterate and of its average (simulated, exact)."""
    out = []
    at = f" at H = {r.horizons[-1]}"
    for i, n in enumerate(r.names):
        out.append({"schedule": n, "peak rate (1/tr H)": r.lrs[i],
                    "last iterate" + at: r.sim.last[i][-1],
                    "last, exact" + at: r.exact.last[i][-1],
                    "average" + at: r.sim.tail[i][-1],
                    "average, exact" + at: r.exact.tail[i][-1]})
    return out


def exponent_figure(exponents: dict, title: str | None = None):
    """The exact risk of the averaged iterate against the decay exponent, each setting of the
    exponents relative to its best, the theory's exponent marked; with a slider over the
    schedule's offset t0 where :func:`~.experiments.best_exponent` searched several (it opens
    at the page's t0)."""
    e0 = next(iter(exponents.values()))
    t0s = e0.t0s
    figs = [_exponent_at(exponents, i, t0, title) for i, t0 in enumerate(t0s)]
    here = t0s.index(e0.t0) if e0.t0 in t0s else len(t0s) // 2
    return plots.slider(figs, [f"{t:g}" for t in t0s], name="t0", active=here)


def _exponent_at(exponents: dict, i: int, t0, title: str | None):
    """:func:`exponent_figure` at the ``i``-th offset ``t0``: each setting's risk per
    exponent there (``risk_by_t0[i]``)."""
    fig = plots.figure(title or ("Exact risk against the decay exponent"
                                 + (f" at t0 = {t0:g}" if t0 is not None else "")),
                       "decay exponent γ", "risk / best risk", logy=True)
    for j, ((a, b), e) in enumerate(exponents.items()):
        color = plots.PALETTE[j % len(plots.PALETTE)]
        risk = np.asarray(e.risk_by_t0[i]) / min(e.risk_by_t0[i])
        fig.add_scatter(x=e.gammas, y=risk, mode="lines+markers", line=dict(color=color),
                        name=f"capacity {a:g}, source {b:g}", legendgroup=str(j))
        fig.add_scatter(x=[e.theory] * 2, y=[1, risk.max()], mode="lines", showlegend=False,
                        line=dict(color=color, dash="dot"), legendgroup=str(j),
                        name=f"γ* = {e.theory:.2f}")
    return fig


def _seed(r, seed: int | None) -> int:
    return r.seeds[0] if seed is None else int(seed)


def cooldown_figure(r, seed: int | None = None, key: str = "train_loss", title=None):
    """Section 2: the constant run's loss against the step, each budget's linear and 1−√
    cooldown branched from it (from its start to the budget) and the cosine run to each
    budget (its whole curve, dotted), one seed."""
    s = _seed(r, seed)
    L, st = getattr(r, key)[s], np.asarray(r.steps)
    fig = plots.figure(title or "A cooldown branched from one constant run, against a cosine per budget",
                       "step", key.replace("_", " "), logy=True)
    fig.add_scatter(x=st, y=L["constant"], mode="lines", name="constant rate",
                    line=dict(color="#555", width=3))
    for j, (b, a) in enumerate(zip(r.budgets, r.starts)):
        color = plots.PALETTE[j % len(plots.PALETTE)]
        seg = (st >= a) & (st <= b)
        for shape, dash in (("linear", "solid"), ("sqrt", "dash")):
            fig.add_scatter(x=st[seg], y=np.asarray(L[f"{shape}@{b}"])[seg], mode="lines+markers",
                            name=f"{'linear' if shape == 'linear' else '1−√'} cooldown to {b}",
                            line=dict(color=color, dash=dash), legendgroup=str(j))
        upto = st <= b
        fig.add_scatter(x=st[upto], y=np.asarray(L[f"cosine@{b}"])[upto], mode="lines",
                        name=f"cosine to {b}", line=dict(color=color, dash="dot", width=1.5),
                        legendgroup=str(j))
    return fig


def cooldown_rows(r, seed: int | None = None) -> list[dict]:
    """Per budget (one seed): the training and test loss of the constant run at the
    cooldown's start and at the budget, of both cooldowns, of the cosine and of the constant
    run's averages (uniform over the cooldown's steps, and the EMA)."""
    s = _seed(r, seed)
    st = r.steps
    out = []
    for b, a in zip(r.budgets, r.starts):
        for key, what in (("train_loss", "train"), ("test_loss", "test")):
            L, A = getattr(r, key)[s], r.averages[s]
            at = lambda n, t: L[n][st.index(t)]
            av = lambda n: getattr(A[n], key)[A[n].steps.index(b)]
            # short headers, so that nine columns fit a phone's width (the page says
            # what each is, under the table)
            out.append({"budget": b, "loss": what, "at start": at("constant", a),
                        "constant": at("constant", b), "linear": at(f"linear@{b}", b),
                        "1−√": at(f"sqrt@{b}", b), "cosine": at(f"cosine@{b}", b),
                        "uniform": av(f"tail@{b}"), "EMA": av("ema")})
    return out


def average_figure(r, seed: int | None = None, key: str = "train_loss", title=None):
    """Section 3: at each budget, the constant run's loss, its EMA's and its uniform average
    over the cooldown's steps, against the linear cooldown's (markers), one seed."""
    s = _seed(r, seed)
    L, A, st = getattr(r, key)[s], r.averages[s], r.steps
    fig = plots.figure(title or "Averaging the constant run instead of cooling it down",
                       "step", key.replace("_", " "), logy=True)
    fig.add_scatter(x=st, y=L["constant"], mode="lines", name="constant rate",
                    line=dict(color="#555", width=3))
    fig.add_scatter(x=A["ema"].steps, y=getattr(A["ema"], key), mode="lines",
                    name=f"its EMA (window {r.config.ema_window})",
                    line=dict(color=plots.PALETTE[0]))
    bs = r.budgets
    fig.add_scatter(x=bs, y=[getattr(A[f"tail@{b}"], key)[A[f"tail@{b}"].steps.index(b)]
                             for b in bs],
                    mode="markers", name="its uniform average over each cooldown's steps",
                    marker=dict(color=plots.PALETTE[2], size=11, symbol="diamond"))
    fig.add_scatter(x=bs, y=[L[f"linear@{b}"][st.index(b)] for b in bs], mode="markers",
                    name="linear cooldown", marker=dict(color=plots.PALETTE[1], size=11))
    return fig


_SF_NAMES = {"schedule-free": "schedule-free AdamW", "cosine": "AdamW, cosine",
             "constant": "AdamW, constant rate"}


def schedulefree_figure(r, seed: int | None = None, key: str = "train_loss", title=None):
    """Section 4: schedule-free AdamW, AdamW with a cosine to the budget and AdamW at a
    constant rate (the same warmup), each at its tuned peak rate
    (:func:`~.claims.tuned_lr`), against the step (one seed)."""
    from .claims import tuned_lr
    from .experiments import SF_METHODS

    s = _seed(r, seed)
    st = r.steps
    fig = plots.figure(title or f"Schedule-free against a cosine tuned to the budget (seed {s})",
                       "step", key.replace("_", " "), logy=True)
    for j, m in enumerate(SF_METHODS):
        if m not in r.methods:
            continue
        lr = tuned_lr(r, m)
        fig.add_scatter(x=st, y=getattr(r.methods[m], key)[s][lr], mode="lines+markers",
                        name=f"{_SF_NAMES[m]} (peak rate {lr:g})",
                        line=dict(color=plots.PALETTE[j], dash="dot" if m == "constant" else None))
    return fig


def schedulefree_rows(r) -> list[dict]:
    """Section 4: each method and peak rate, its training and test loss at the budget, the
    seeds' mean."""
    from .experiments import SF_METHODS

    i = r.steps.index(r.budgets[-1])
    out = []
    for m in SF_METHODS:
        for lr in r.lrs:
            row = {"method": m, "peak rate": lr}
            for key in ("train_loss", "test_loss", "test_acc"):
                L = getattr(r.methods[m], key)
                row[key.replace("_", " ") + ", seeds' mean"] = float(
                    np.mean([L[s][lr][i] for s in r.seeds]))
            out.append(row)
    return out


def clock_figure(r, title: str | None = None):
    """Section 5: the twins' memory of the start (the replicas' mean, markers), its exact
    expectation (lines) and weight decay's product alone (dotted), against the step (left)
    and against weight decay's clock λΣη (right), constant and WSD."""
    fig = plots.subplots(1, 2, titles=("against the step", "against the clock λΣη"),
                         title=title or "What the run remembers of its start")
    for j, n in enumerate(r.names):
        color = plots.PALETTE[j]
        for col, x in ((1, r.steps), (2, r.clock[n])):
            first = col == 1
            fig.add_scatter(x=x, y=r.memory[n], mode="markers", name=f"{n}, measured",
                            marker=dict(color=color, size=5), legendgroup=n, showlegend=first,
                            row=1, col=col)
            fig.add_scatter(x=x, y=r.expected[n], mode="lines", name=f"{n}, exact",
                            line=dict(color=color, width=1), legendgroup=n, showlegend=first,
                            row=1, col=col)
            fig.add_scatter(x=x, y=r.product[n], mode="lines", legendgroup=n,
                            name=f"{n}, ∏(1−η_t λ) alone", showlegend=first,
                            line=dict(color=color, dash="dot"), row=1, col=col)
    fig.add_vline(x=r.start, line=dict(color="#888", dash="dash", width=1), row=1, col=1)
    fig.update_yaxes(type="log", title_text="memory of the start", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_xaxes(title_text="λΣη (time constants)", row=1, col=2)
    return fig


def wsd_norm_conjecture(lr: float, weight_decay: float, steps: int, cooldown: float) -> dict:
    """The weight-decay chapter's AdamW norm recursion
    (:func:`dynamics.weight_decay.science.norm_step`, an update of RMS one per entry) run
    with a rate per step, from its equilibrium at ``lr``: the per-entry RMS of a
    scale-invariant weight and its effective learning rate ``eta_t / RMS`` under a constant
    rate and a WSD (linear cooldown over the last ``cooldown`` of ``steps``), beside the
    effective rate ``sqrt(2 eta_t lambda)`` the chapter derives at equilibrium. Not a
    measurement: what that chapter's model predicts under a schedule."""
    from ..weight_decay.science import check_equilibrium_args, norm_step
    from .science import schedule

    check_equilibrium_args("adamw", lr, weight_decay)
    out = {}
    for name, kw in (("constant", dict(kind="constant")),
                     ("WSD", dict(kind="wsd", horizon=steps, cooldown=cooldown))):
        etas = schedule(steps=steps, lr=lr, **kw)
        sq = lr / (weight_decay * (2 - lr * weight_decay))   # the fixed point at lr
        rms, eff, eq = [], [], []
        for eta in etas:
            sq = norm_step(sq, eta, weight_decay, 1.0)
            rms.append(float(np.sqrt(sq)))
            eff.append(float(eta / np.sqrt(sq)))
            eq.append(float(np.sqrt(2 * eta * weight_decay)))
        out[name] = dict(rms=rms, effective_lr=eff, equilibrium_lr=eq)
    out["steps"] = list(range(1, steps + 1))
    return out


def conjecture_figure(c: dict, title: str | None = None):
    """The weight-decay chapter's effective learning rate under WSD, as its model predicts
    (:func:`wsd_norm_conjecture`): labelled a conjecture, not a measurement."""
    fig = plots.figure(title or "Conjecture, not measured: the weight-decay chapter's "
                       "effective learning rate under WSD", "step",
                       "effective learning rate η/RMS(w)", logy=True)
    for j, n in enumerate(("constant", "WSD")):
        color = plots.PALETTE[j]
        fig.add_scatter(x=c["steps"], y=c[n]["effective_lr"], mode="lines",
                        name=f"{n}: the norm's recursion", line=dict(color=color))
        fig.add_scatter(x=c["steps"], y=c[n]["equilibrium_lr"], mode="lines",
                        name=f"{n}: √(2ηλ), if the norm kept up",
                        line=dict(color=color, dash="dot"))
    return fig


__all__ += ["valley_figure"]


def valley_figure(r, title: str | None = None):
    """Section 2's river-valley toy (:func:`~.valley.run_valley`): left, the exact expected
    loss (lines) and the hill term alone (dotted) against the step, the replicas' mean loss
    (markers, every 20th step); right, one replica's path in the valley, the river
    coordinate across and the hill coordinate up (the WSD run drawn from its cooldown on:
    before it, it is the constant run)."""
    fig = plots.subplots(1, 2, titles=("expected loss against the step",
                                       "one run in the valley"),
                         title=title or "A river valley: bounce, travel, then settle")
    steps = np.arange(len(r.expected[r.names[0]]))
    a = r.start
    for j, n in enumerate(r.names):
        color = plots.PALETTE[j]
        e, s = np.asarray(r.expected[n]), np.asarray(r.sim[n])
        fig.add_scatter(x=steps, y=e.sum(1), mode="lines", name=f"{n}: loss",
                        line=dict(color=color), legendgroup=n, row=1, col=1)
        fig.add_scatter(x=steps, y=e[:, 0], mode="lines", name=f"{n}: hill term",
                        line=dict(color=color, dash="dot", width=1.5), legendgroup=n,
                        row=1, col=1)
        fig.add_scatter(x=steps[::20], y=s.sum(1)[::20], mode="markers",
                        name=f"{n}: simulated", marker=dict(color=color, size=4),
                        legendgroup=n, showlegend=False, row=1, col=1)
        p = np.asarray(r.path[n])
        p = p[a:] if n == "WSD" else p
        fig.add_scatter(x=p[:, 1], y=p[:, 0], mode="lines", name=f"{n}: path",
                        line=dict(color=color, width=1 if n != "WSD" else 2),
                        legendgroup=n, showlegend=False, row=1, col=2)
    fig.add_vline(x=a, line=dict(color="#888", dash="dash", width=1), row=1, col=1)
    fig.update_yaxes(type="log", title_text="expected loss", row=1, col=1)
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_xaxes(title_text="river coordinate (flat, quiet)", autorange="reversed",
                     row=1, col=2)
    fig.update_yaxes(title_text="hill coordinate (steep, noisy)", row=1, col=2)
    return fig
