"""Schedules and weight averaging, the figures and tables of section 1."""
from __future__ import annotations

import numpy as np

from .. import plots

__all__ = ["anytime_figure", "anytime_rows", "exponent_figure"]


def _series(r: dict):
    """(label, kind, schedule name, dash) of what the anytime figure draws."""
    hs = r["horizons"]
    yield "constant, last iterate", "last", "constant", "solid"
    yield "constant + averaging", "tail", "constant", "dash"
    yield "1/√t + averaging", "tail", "1/√t", "dash"
    yield f"theory (γ*={r['gamma']:.2f}) + averaging", "tail", "theory", "dash"
    yield f"cosine tuned to {hs[-1]}, read early", "last", f"cos@{hs[-1]}", "dot"


def anytime_figure(r: dict, title: str | None = None):
    """The excess risk against the horizon (log-log): the simulation's mean (markers and
    lines) and the exact expected risk (thin grey), with the envelope of tuned cosines."""
    hs = np.asarray(r["horizons"], float)
    fig = plots.figure(title or "Which schedule is good at every horizon?", "horizon (steps)",
                       "excess risk", logx=True, logy=True)
    env = [r["sim"]["last"][r["names"].index(f"cos@{int(h)}")][k] for k, h in enumerate(hs)]
    fig.add_scatter(x=hs, y=env, mode="lines+markers", name="cosine tuned to each horizon",
                    line=dict(color="#888", width=4))
    for j, (label, kind, name, dash) in enumerate(_series(r)):
        i = r["names"].index(name)
        color = plots.PALETTE[j % len(plots.PALETTE)]
        fig.add_scatter(x=hs, y=r["sim"][kind][i], mode="lines+markers", name=label,
                        line=dict(color=color, dash=dash), legendgroup=str(j))
        fig.add_scatter(x=hs, y=r["exact"][kind][i], mode="lines", showlegend=False,
                        line=dict(color=color, width=1), opacity=0.5, legendgroup=str(j),
                        hoverinfo="skip")
    return fig


def anytime_rows(r: dict) -> list[dict]:
    """Each schedule at the last horizon: its rate there, the risk of its last iterate and of
    its average (simulated, exact)."""
    out = []
    for i, n in enumerate(r["names"]):
        out.append({"schedule": n, "peak rate (1/tr H)": r["lrs"][i],
                    "last iterate": r["sim"]["last"][i][-1], "last, exact": r["exact"]["last"][i][-1],
                    "average": r["sim"]["tail"][i][-1], "average, exact": r["exact"]["tail"][i][-1]})
    return out


def exponent_figure(exponents: dict, title: str | None = None):
    """The exact risk of the averaged iterate against the decay exponent, each setting of the
    exponents relative to its best, the theory's exponent marked."""
    fig = plots.figure(title or "The best decay exponent moves with the problem",
                       "decay exponent γ", "risk / best risk", logy=True)
    for j, ((a, b), e) in enumerate(exponents.items()):
        color = plots.PALETTE[j % len(plots.PALETTE)]
        risk = np.asarray(e["risk"]) / min(e["risk"])
        fig.add_scatter(x=e["gammas"], y=risk, mode="lines+markers", line=dict(color=color),
                        name=f"capacity {a:g}, source {b:g}", legendgroup=str(j))
        fig.add_scatter(x=[e["theory"]] * 2, y=[1, risk.max()], mode="lines", showlegend=False,
                        line=dict(color=color, dash="dot"), legendgroup=str(j),
                        name=f"γ* = {e['theory']:.2f}")
    return fig
