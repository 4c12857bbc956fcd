"""Schedules and weight averaging, the claims: the numbers the page glues and its claims table,
every row judged by :mod:`dynamics.evidence` against a control that must fail the same test.

Section 1's rows, on the batched simulation (one run of every schedule per seed, the replicas'
mean risk) and on the exact expected risk:

- a constant rate's last iterate stalls while the average of its iterates keeps falling;
- the theory's decay with averaging, which knows no horizon, stays within :data:`ENVELOPE` of
  the tuned cosine to every horizon, while the cosine tuned to the longest horizon does not;
- the best decay exponent (exact risk, a grid of step :data:`EXPONENT_STEP`) lies within
  :data:`EXPONENT_TOL` of the theory's in three settings of the exponents, and not within it of
  the exponent the theory gives another setting.
"""
from __future__ import annotations

import numpy as np

from .. import evidence, plots
from .experiments import GAMMAS, best_exponent, run_anytime
from .science import PowerLawConfig

__all__ = ["FALLS_TO", "ENVELOPE", "EXPONENT_TOL", "EXPONENT_STEP", "EXPONENT_SETTINGS",
           "envelope_ratio", "anytime_numbers", "claim_runs", "anytime_claims", "page_claims",
           "published_claims"]

FALLS_TO = 0.5         # risk at the last horizon / at the first, below this: still falling
ENVELOPE = 1.5         # worst ratio to the tuned cosine over all horizons, below this: anytime
EXPONENT_TOL = 0.25    # |best measured decay exponent - theory's| below this
EXPONENT_STEP = GAMMAS[1] - GAMMAS[0]   # the searched exponents' spacing: the measure's resolution
# (capacity, source): easy target (gamma* = 1/2), easier still (0.7), hard (0: constant + averaging)
EXPONENT_SETTINGS = ((2.0, 4.0), (1.5, 5.0), (2.0, 2.0))
_AP = "Anytime Pretraining: Horizon-Free Learning-Rate Schedules with Weight Averaging"


def _get(r: dict, kind: str, name: str) -> np.ndarray:
    return np.asarray(r["sim"][kind][r["names"].index(name)], float)


def envelope_ratio(r: dict, kind: str, name: str) -> np.ndarray:
    """Per horizon ``H``: schedule ``name``'s risk (``kind``: ``last`` iterate or ``tail``
    average) over the tuned cosine to ``H``'s last iterate at ``H`` (the envelope)."""
    env = np.array([_get(r, "last", f"cos@{h}")[k] for k, h in enumerate(r["horizons"])])
    return _get(r, kind, name) / env


def _falls(kind):
    return lambda r: float(_get(r, kind, "constant")[-1] / _get(r, kind, "constant")[0])


def _worst(kind, name):
    return lambda r: float(envelope_ratio(r, kind, name).max())


def anytime_numbers(r: dict, exponents: dict | None = None) -> dict:
    """The glue texts of one seed's section-1 run (and of :func:`best_exponent` per setting)."""
    hs = r["horizons"]
    out = dict(sch_d=r["config"]["d"], sch_capacity=f"{r['config']['capacity']:g}",
               sch_source=f"{r['config']['source']:g}", sch_gamma=f"{r['gamma']:.2f}",
               sch_replicas=r["config"]["replicas"], sch_h0=hs[0], sch_hmax=hs[-1],
               sch_n_h=len(hs), sch_sigma=f"{r['config']['sigma']:g}",
               sch_const_last=f"{_falls('last')(r):.2f}", sch_const_tail=f"{_falls('tail')(r):.2f}",
               sch_theory_env=f"{_worst('tail', 'theory')(r):.2f}",
               sch_sqrt_env=f"{_worst('tail', '1/√t')(r):.2f}",
               sch_coslong_env=f"{_worst('last', f'cos@{hs[-1]}')(r):.2f}",
               sch_envelope=f"{ENVELOPE:g}", sch_falls_to=f"{FALLS_TO:g}")
    for (a, b), e in (exponents or {}).items():
        out[f"sch_best_{a:g}_{b:g}".replace(".", "p")] = f"{e['best']:.1f}"
    return out


def claim_runs(profile: str | None, seeds, anytime: dict | None = None) -> dict:
    """Section 1's runs on ``seeds`` (reusing ``anytime``, the page's run, for its seed) and
    the exact best exponent of every :data:`EXPONENT_SETTINGS` setting."""
    base = PowerLawConfig.for_profile(profile)
    runs = {}
    for s in seeds:
        runs[s] = anytime if anytime is not None and anytime["seed"] == s else \
            run_anytime(base, seed=s)
    exps = {ab: best_exponent(base.replace(capacity=ab[0], source=ab[1]))
            for ab in EXPONENT_SETTINGS}
    return dict(anytime=runs, exponents=exps)


def anytime_claims(anytime: dict, exponents: dict) -> list[dict]:
    """Section 1's three rows on ``{seed: run_anytime result}`` and ``{(capacity, source):
    best_exponent result}``."""
    anytime = plots.per_seed(anytime, "anytime", "schedules.claim_runs")
    r0 = next(iter(anytime.values()))
    hs = r0["horizons"]
    stall = evidence.Claim(
        "a constant rate's last iterate stalls at a noise floor, while the average of its "
        "iterates keeps falling", _AP, _falls("tail"),
        evidence.Test("<", FALLS_TO, "FALLS_TO", scale="log"),
        control="the same runs' last iterate", control_measure=_falls("last"),
        window=f"risk at horizon {hs[-1]} over risk at horizon {hs[0]}; the average over the "
               f"second half of each run", fmt=lambda v: f"{v:.2f}")
    anyt = evidence.Claim(
        "the theory's decaying rate with averaging, set without a horizon, stays near a cosine "
        "tuned to each horizon at every one of them", _AP, _worst("tail", "theory"),
        evidence.Test("<", ENVELOPE, "ENVELOPE", scale="log"),
        control=f"the cosine tuned to the longest horizon ({hs[-1]}), read at every horizon",
        control_measure=_worst("last", f"cos@{hs[-1]}"),
        window=f"worst ratio to the tuned cosine's risk over horizons {hs[0]} to {hs[-1]}",
        fmt=lambda v: f"{v:.2f}×")
    seeds = sorted(anytime)
    rows = [evidence.judge(c, anytime, anytime).row() for c in (stall, anyt)]
    parts = {}
    for (a, b), e in exponents.items():
        other = max(exponents.values(), key=lambda t: abs(t["theory"] - e["theory"]))
        claim = evidence.Claim(
            f"best exponent, capacity {a:g}, source {b:g}", _AP,
            lambda r, e=e: abs(e["best"] - e["theory"]),
            evidence.Test("<", EXPONENT_TOL, "EXPONENT_TOL"),
            control="the theory's exponent of the setting farthest from it",
            control_measure=lambda r, e=e, o=other: abs(e["best"] - o["theory"]),
            window="exact expected risk at the last horizon", noise=lambda r: EXPONENT_STEP,
            fmt=lambda v: f"{v:.2f}")
        parts[f"(a={a:g}, b={b:g}): γ*={e['theory']:.2f}, best {e['best']:.1f};"] = \
            evidence.judge(claim, {s: None for s in seeds}, {s: None for s in seeds})
    rows.append(evidence.joint(
        "the best polynomial decay is set by the source and capacity exponents (here the "
        "book's balance γ* = max(0, 1 − capacity/source))", _AP, parts,
        control="the theory's exponent of another setting of the exponents",
        window=f"exact expected risk (no seed enters) of the averaged iterate at horizon "
               f"{hs[-1]}, exponents searched in steps of {EXPONENT_STEP:.1f} (the noise the "
               f"margin must beat); |best − γ*| < {EXPONENT_TOL:g}"))
    return rows


def page_claims(anytime: dict | None = None, exponents: dict | None = None) -> list[dict]:
    """The page's claims table (section 1 so far); nothing without runs."""
    if anytime is None:
        return []
    return anytime_claims(anytime, exponents)


def published_claims() -> list[dict]:
    """The chapter precomputes nothing yet: its claims are all judged on the page's live runs."""
    return []
