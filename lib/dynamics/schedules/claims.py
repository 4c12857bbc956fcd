"""Schedules and weight averaging, the claims: the numbers the page glues and its claims table,
every row judged by :mod:`dynamics.evidence` against a control that must fail the same test.

Section 1's rows read the exact expected risk (the simulation's replica mean at one horizon is
noise at this size) and the best decay exponent of :func:`~.experiments.best_exponent`;
sections 2-4's, one :func:`~.experiments.run_cooldown` (and
:func:`~.experiments.run_schedulefree`) result over the seeds, each seed's training loss;
section 5's, :func:`~.experiments.run_clock` per seed. The exact expected memory is the
simulation's known answer (tests).
"""
from __future__ import annotations

import numpy as np

from .. import evidence, plots
from ..book import glue_texts
from .experiments import (
    GAMMAS, SF_METHODS, TRAIN_EVAL, ClaimRuns, Cooldown, best_exponent, run_anytime,
)
from .science import PowerLawConfig
from .valley import cooldown_notes as valley_notes

__all__ = ["FALLS_TO", "STALL", "ENVELOPE", "balance_cost", "envelope_ratio", "stall_claim",
           "envelope_claim", "shape_numbers", "EXPONENT_TOL", "EXPONENT_STEP", "EXPONENT_SETTINGS",
           "anytime_numbers", "exponent_numbers", "cooldown_notes", "exponent_claim",
           "claim_runs", "anytime_claims", "page_claims", "published_claims", "TIES", "DROP",
           "AVERAGE_NEAR", "cooldown_numbers", "cooldown_claims", "ties_claim", "average_claims",
           "tuned_lr", "schedulefree_numbers",
           "schedulefree_claims", "CLOCK_TIE", "clock_numbers", "clock_claims", "collapse"]

FALLS_TO = 0.5         # risk at the last horizon / at the first, below this: still falling
STALL = 1.1            # that ratio or its inverse (the larger), below this: the risk stalls
ENVELOPE = 1.5         # worst ratio to the tuned cosine over all horizons, below this: anytime
EXPONENT_STEP = GAMMAS[1] - GAMMAS[0]   # the searched exponents' spacing: the measure's resolution
# (capacity, source): easy target (gamma* = 1/2), easier still (0.7), hard (0: constant + averaging)
EXPONENT_SETTINGS = ((2.0, 4.0), (1.5, 5.0), (2.0, 2.0))
# |best measured decay exponent - theory's| below this: under half the smallest gap between the
# settings' theory exponents (0.2), so that a best exponent within it of its own setting's is
# never within it of another's; the largest multiple of EXPONENT_STEP under that half
EXPONENT_TOL = 0.075
_AP = "Anytime Pretraining: Horizon-Free Learning-Rate Schedules with Weight Averaging"
_WSD = "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations"
_SF = "The Road Less Scheduled"
_CLOCK = ("How to set AdamW's weight decay as you scale model and dataset size (AdamW's weights "
          "as an EMA with time constant 1/(ηλ); the schedule's clock is this book's reading, "
          "measured on SGD with decoupled weight decay)")

# Sections 2-3 (MNIST-1D; the loss is the training loss, on 1000 training examples)
TIES = 1.05            # worst ratio of a cooldown's loss to the cosine's over the budgets, below: ties
DROP = 0.8             # loss at the end of the longest cooldown / at its start, below this: a drop
AVERAGE_NEAR = 1.1     # worst ratio of an average's loss to the cooldown's over the budgets
# Section 5 (the power-law model with decoupled weight decay)
CLOCK_TIE = 1.1        # measured memory / predicted (or its inverse, the larger), below: agree


def _get(r, kind: str, name: str, source: str = "sim") -> np.ndarray:
    """Schedule ``name``'s risk (``kind``: ``last`` iterate or ``tail`` average) per horizon,
    in the simulation's replica mean (``source="sim"``) or the exact expected risk."""
    return np.asarray(getattr(getattr(r, source), kind)[r.names.index(name)], float)


def _falls(kind, source="sim"):
    """The constant rate's risk (``kind``) at the last horizon over that at the first."""
    def ratio(r):
        v = _get(r, kind, "constant", source)
        return float(v[-1] / v[0])
    return ratio


def _stalls(kind, source="exact"):
    """How far the constant rate's risk (``kind``) moves from the first horizon to the last,
    as a factor: the ratio or its inverse, the larger (1: it does not move)."""
    def apart(r):
        return _apart(*_get(r, kind, "constant", source)[[-1, 0]])
    return apart


def envelope_ratio(r, kind: str, name: str, source: str = "exact") -> np.ndarray:
    """Per horizon ``H`` of a :func:`~.experiments.run_anytime` result, schedule ``name``'s
    risk (``kind``: ``last`` or ``tail``) over the last iterate's of the cosine tuned to ``H``,
    at ``H`` (the envelope), in the exact expected risk (``source="exact"``) or the
    simulation's replica mean (``"sim"``)."""
    env = np.array([_get(r, "last", f"cos@{h}", source)[k] for k, h in enumerate(r.horizons)])
    return _get(r, kind, name, source) / env


def _worst(kind, name, source="exact"):
    """The worst over the horizons of :func:`envelope_ratio` (exact by default: Section 1's
    rows read the exact expected risk)."""
    return lambda r: float(envelope_ratio(r, kind, name, source).max())


def anytime_numbers(r) -> dict:
    """The glue texts of one seed's section-1 run; the constant rate's falls in the exact
    expected risk (the simulation's replica mean at one horizon is noise at this size)."""
    hs, c = r.horizons, r.config
    theory = envelope_ratio(r, "tail", "theory")
    last = _falls("last", "exact")(r)
    return dict(sch_d=c.d, sch_capacity=f"{c.capacity:g}",
                sch_source=f"{c.source:g}", sch_gamma=f"{r.gamma:.2f}",
                sch_replicas=c.replicas, sch_h0=hs[0], sch_hmax=hs[-1],
                sch_n_h=len(hs), sch_sigma=f"{c.sigma:g}",
                sch_const_last=f"{last:.2f}",
                sch_const_drift="creeps up" if last > 1 else "creeps down",
                sch_const_creep=f"{100 * abs(last - 1):.0f}%", sch_stall=f"{STALL:g}",
                sch_const_tail=f"{_falls('tail', 'exact')(r):.2f}",
                sch_const_last_sim=f"{_falls('last')(r):.2f}",
                sch_theory_env=f"{theory.max():.2f}", sch_theory_env_lo=f"{theory.min():.2f}",
                sch_theory_side=("below it at every horizon" if theory.max() < 1 else
                                 "below it at no horizon" if theory.min() >= 1 else
                                 "below it at some horizons, not all"),
                sch_sqrt_env=f"{_worst('tail', '1/√t')(r):.2f}",
                sch_coslong_env=f"{_worst('last', f'cos@{hs[-1]}')(r):.2f}",
                sch_envelope=f"{ENVELOPE:g}", sch_falls_to=f"{FALLS_TO:g}")


def exponent_numbers(exponents: dict) -> dict:
    """The glue texts of :func:`best_exponent` per setting (``{(capacity, source): result}``):
    the best exponent at the page's offset ``t_0`` and at every searched one, the theory's."""
    e0 = next(iter(exponents.values()))
    out = dict(sch_t0=f"{e0.t0:g}", sch_t0s=[f"{t:g}" for t in e0.t0s],
               sch_exp_tol=f"{EXPONENT_TOL:g}", sch_exp_step=f"{EXPONENT_STEP:g}")
    for (a, b), e in exponents.items():
        k = f"{a:g}_{b:g}".replace(".", "p")
        out[f"sch_setting_{k}"] = f"capacity {a:g} and source {b:g}"
        out[f"sch_best_{k}"] = f"{e.best:g}"
        out[f"sch_theory_{k}"] = f"{e.theory:g}"
        out[f"sch_bests_{k}"] = [f"{g:g}" for g in e.best_by_t0]
        out[f"sch_cost_{k}"] = [f"{x:.3f}×" for x in balance_cost(e)]
    out["sch_exp_order"] = ("in the balance's order at every offset" if _in_order(exponents)
                            else "not in the balance's order at every offset")
    return glue_texts(**out)


def balance_cost(e) -> list[float]:
    """Per offset ``t_0`` of a :func:`~.experiments.best_exponent` result, the exact risk at
    the balance's exponent over the lowest risk of the searched exponents (1: the balance's
    exponent is as good as the best searched; never below 1 where the grid holds it)."""
    if e.theory_risk_by_t0 is None:
        raise ValueError("balance_cost: the result has no risk at the theory's exponent "
                         "(best_exponent computes it)")
    return [float(t / min(row)) for t, row in zip(e.theory_risk_by_t0, e.risk_by_t0)]


def _in_order(exponents: dict) -> bool:
    """Whether at every offset t0 the settings' best exponents sort as their theory
    exponents do (ties in the theory allow any order)."""
    es = list(exponents.values())
    return all((a.theory - b.theory) * (a.best_by_t0[k] - b.best_by_t0[k]) >= 0
               and (a.theory == b.theory or a.best_by_t0[k] != b.best_by_t0[k])
               for a in es for b in es for k in range(len(a.t0s)))


def claim_runs(profile: str | None, seeds, anytime=None) -> ClaimRuns:
    """Section 1's runs on ``seeds`` (reusing ``anytime``, the page's run, for its seed) and
    the exact best exponent of every :data:`EXPONENT_SETTINGS` setting."""
    base = PowerLawConfig.for_profile(profile)
    runs = {s: anytime if anytime is not None and anytime.seed == s else
            run_anytime(base, seed=s) for s in seeds}
    exps = {ab: best_exponent(base.replace(capacity=ab[0], source=ab[1]))
            for ab in EXPONENT_SETTINGS}
    return ClaimRuns(anytime=runs, exponents=exps)


def anytime_claims(anytime: dict, exponents: dict) -> list[dict]:
    """Section 1's three rows on ``{seed: run_anytime result}`` and the best exponents."""
    anytime = plots.per_seed(anytime, "anytime", "schedules.claim_runs")
    r0 = next(iter(anytime.values()))
    hs = r0.horizons
    return [stall_claim(anytime)] + [evidence.judge(envelope_claim(hs), anytime).row()] + [
        exponent_claim(exponents, hs[-1])]


def stall_claim(anytime: dict) -> dict:
    """The stall row, in two parts judged on the exact expected risk: the constant rate's last
    iterate moves by less than :data:`STALL` (as a factor, either way) from the first horizon
    to the last, its control the average of the same iterates; and that average falls below
    :data:`FALLS_TO` of its first risk, its control the last iterate."""
    hs = next(iter(anytime.values())).horizons
    span = f"exact expected risk at horizon {hs[-1]} over that at horizon {hs[0]}"
    stalls = evidence.Claim(
        "the last iterate stalls", _AP, _stalls("last"),
        evidence.Test("<", STALL, "STALL", scale="log"),
        control="the average of the same iterates", control_measure=_stalls("tail"),
        window=f"{span}, or its inverse (the larger)", fmt=lambda v: f"{v:.2f}×", exact=True)
    falls = evidence.Claim(
        "the average keeps falling", _AP, _falls("tail", "exact"),
        evidence.Test("<", FALLS_TO, "FALLS_TO", scale="log"),
        control="the same schedule's last iterate", control_measure=_falls("last", "exact"),
        window=span, fmt=lambda v: f"{v:.2f}", exact=True)
    return evidence.joint(
        "a constant rate's last iterate stalls at a noise floor, while the average of its "
        "iterates keeps falling", _AP,
        {"the last iterate stalls (moves by less than STALL either way):":
         evidence.judge(stalls, anytime),
         "the average falls:": evidence.judge(falls, anytime)},
        control="the stall's, the average of the same iterates; the fall's, the last iterate",
        window=f"{span} (no seed enters); the average over the second half of each run")


def envelope_claim(hs) -> evidence.Claim:
    """The envelope row on horizons ``hs``, judged on the exact expected risk."""
    return evidence.Claim(
        "the theory's decaying rate with averaging, set without a horizon, stays near a cosine "
        "tuned to each horizon at every one of them", _AP, _worst("tail", "theory"),
        evidence.Test("<", ENVELOPE, "ENVELOPE", scale="log"),
        control=f"the cosine tuned to the longest horizon ({hs[-1]}), read at every horizon",
        control_measure=_worst("last", f"cos@{hs[-1]}"),
        window=f"exact expected risk (no seed enters): worst ratio to the tuned cosine's over "
               f"horizons {hs[0]} to {hs[-1]}", fmt=lambda v: f"{v:.2f}×", exact=True)


def _nearest_other(exponents: dict, ab) -> float:
    """The theory's exponent of the setting nearest ``ab``'s (the hardest control to fail)."""
    mine = exponents[ab].theory
    return min((e.theory for k, e in exponents.items() if k != ab),
               key=lambda g: abs(g - mine))


def exponent_claim(exponents: dict, horizon: int) -> dict:
    """The exponent row, one part per setting and offset ``t_0``. The exact risk has no seed:
    the noise the margin must beat is the grid's step. Shown, not asserted: the best exponent
    moves with ``t_0``."""
    if len(exponents) < 2:
        raise ValueError("exponent_claim: the control needs at least two settings of the "
                         "exponents")
    gaps = sorted({e.theory for e in exponents.values()})
    if 2 * EXPONENT_TOL >= min(b - a for a, b in zip(gaps, gaps[1:])):
        raise ValueError("exponent_claim: EXPONENT_TOL must stay under half the smallest gap "
                         "between the settings' theory exponents")
    parts = {}
    for (a, b), e in exponents.items():
        other = _nearest_other(exponents, (a, b))
        for t0, best in zip(e.t0s, e.best_by_t0):
            claim = evidence.Claim(
                f"best exponent, capacity {a:g}, source {b:g}, t0 {t0:g}", _AP,
                lambda r, g=best, e=e: abs(g - e.theory),
                evidence.Test("<", EXPONENT_TOL, "EXPONENT_TOL"),
                control="the theory's exponent of the nearest other setting",
                control_measure=lambda r, g=best, o=other: abs(g - o),
                window="exact expected risk at the last horizon",
                noise=lambda r: EXPONENT_STEP, fmt=lambda v: f"{v:.3f}", exact=True)
            parts[f"(a={a:g}, b={b:g}, t0={t0:g}): γ*={e.theory:.2f}, best {best:g}, "
                  f"nearest other γ* {other:.2f};"] = evidence.judge(claim, {0: None}, {0: None})
    return evidence.joint(
        "the best polynomial decay is set by the source and capacity exponents (here the "
        "book's balance γ* = max(0, 1 − capacity/source)), whatever the schedule's offset t0",
        _AP, parts, control="the theory's exponent of the nearest other setting",
        window=f"exact expected risk (no seed enters) of the averaged iterate at horizon "
               f"{horizon}, exponents searched in steps of {EXPONENT_STEP:g} (the noise the "
               f"margin must beat) at each offset t0; |best − γ*| < {EXPONENT_TOL:g}, under half "
               f"the gap between the settings' γ*", asserted=False)


def _at(v, name: str, step: int) -> float:
    return float(v.train_loss[name][v.steps.index(step)])


def _avg_at(v, name: str, step: int) -> float:
    a = v.averages[name]
    return float(a.train_loss[a.steps.index(step)])


def _worst_ratio(num, den):
    """The largest over the budgets of ``num(v, b) / den(v, b)``."""
    return lambda v: max(num(v, b) / den(v, b) for b in v.budgets)


def _cool(shape):
    return lambda v, b: _at(v, f"{shape}@{b}", b)


_cos = lambda v, b: _at(v, f"cosine@{b}", b)
_const = lambda v, b: _at(v, "constant", b)


def _drop(name: str):
    """Loss at the longest budget ``T`` over the constant run's at that cooldown's start."""
    return lambda v: _at(v, name, v.budgets[-1]) / _at(v, "constant", v.starts[-1])


def _each(views: dict, num, den) -> str:
    """Per budget, the seeds' median of ``num(v, b) / den(v, b)``."""
    med = np.median([[num(v, b) / den(v, b) for b in v.budgets] for v in views.values()], axis=0)
    return ", ".join(f"{x:.2f}× at {b}" for b, x in zip(next(iter(views.values())).budgets, med))


def cooldown_numbers(r) -> dict:
    """The glue texts of section 2 and 3 (the page's seed)."""
    v = r.at_seed(r.seeds[0])
    c = r.config
    T = r.budgets[-1]
    f2 = lambda x: f"{x:.2f}"
    return dict(
        cd_width=c.width, cd_batch=c.batch, cd_lr=f"{c.lr:g}", cd_n_train=c.n_train,
        cd_budgets=", ".join(map(str, r.budgets)), cd_T=T, cd_frac=f"{100 * c.cooldown:g}%",
        cd_n_seeds=len(r.seeds), cd_ties=f"{TIES:g}", cd_drop_th=f"{DROP:g}",
        cd_lin_cos=f2(_worst_ratio(_cool("linear"), _cos)(v)),
        cd_sqrt_cos=f2(_worst_ratio(_cool("sqrt"), _cos)(v)),
        cd_const_cos=f2(_worst_ratio(_const, _cos)(v)),
        cd_drop=f2(_drop(f"linear@{T}")(v)), cd_const_drop=f2(_drop("constant")(v)),
        cd_sqrt_lin=f"{_at(v, f'sqrt@{T}', T) / _at(v, f'linear@{T}', T):.3f}",
        **shape_numbers(r),
        av_near=f"{AVERAGE_NEAR:g}", av_window=c.ema_window,
        av_tail_lin=f2(_worst_ratio(lambda v, b: _avg_at(v, f"tail@{b}", b), _cool("linear"))(v)),
        av_ema_lin=f2(_worst_ratio(lambda v, b: _avg_at(v, "ema", b), _cool("linear"))(v)),
        av_const_lin=f2(_worst_ratio(_const, _cool("linear"))(v)),
        cd_const_cos_each=_each(_views(r), _const, _cos))


def shape_numbers(r) -> dict:
    """The 1−√ cooldown's loss over the linear one's at the longest budget, over the seeds:
    the median, how far it is from one (``cd_sqrt_margin``, a percentage) against the seeds'
    spread (``cd_sqrt_spread``, the largest over the smallest, as a percentage), and whether
    the two shapes can be told apart here (``cd_sqrt_told``: the margin beyond the spread,
    in the log scale the row's test uses)."""
    T = r.budgets[-1]
    x = np.array([_at(v, f"sqrt@{T}", T) / _at(v, f"linear@{T}", T)
                  for v in _views(r).values()])
    med = float(np.median(x))
    margin, spread = abs(np.log(med)), float(np.log(x.max() / x.min()))
    return dict(cd_sqrt_med=f"{med:.3f}", cd_sqrt_margin=f"{100 * abs(1 - med):.1f}%",
                cd_sqrt_spread=f"{100 * (x.max() / x.min() - 1):.1f}%",
                cd_sqrt_told="cannot be told apart" if margin <= spread else
                "can be told apart")


def _views(cooldown) -> dict:
    if not isinstance(cooldown, Cooldown):
        raise ValueError("claims(cooldown=...) takes one run_cooldown result over several seeds "
                         "(schedules.run_cooldown(seeds=...) gives it)")
    return {s: cooldown.at_seed(s) for s in cooldown.seeds}


def cooldown_claims(cooldown) -> list[dict]:
    """Section 2's rows on one :func:`~.experiments.run_cooldown` result over several seeds,
    all shown, not asserted: the drop's control (the constant run continued) comes, on its
    nearest seed, within about its seeds' spread of the bar, a margin another set of runs can
    move."""
    v = _views(cooldown)
    T = cooldown.budgets[-1]
    drop = evidence.Claim(
        "the loss drops during the cooldown", _WSD, _drop(f"linear@{T}"),
        evidence.Test("<", DROP, "DROP", scale="log"),
        control="the constant run continued for the same steps",
        control_measure=_drop("constant"),
        window=f"training loss at step {T} over that at the cooldown's start "
               f"(step {cooldown.starts[-1]})", fmt=lambda x: f"{x:.2f}", asserted=False)
    sqrt = evidence.Claim(
        "a 1−√ cooldown ends lower than a linear one", _WSD,
        lambda v: _at(v, f"sqrt@{T}", T) / _at(v, f"linear@{T}", T),
        evidence.Test("<", 1.0, "one", scale="log"),
        control="the constant run, no cooldown, against the linear cooldown",
        control_measure=lambda v: _at(v, "constant", T) / _at(v, f"linear@{T}", T),
        window=f"training loss at step {T}, ratio to the linear cooldown's",
        fmt=lambda x: f"{x:.3f}", asserted=False)
    return [ties_claim(cooldown)] + [evidence.judge(c, v).row() for c in (drop, sqrt)]


def ties_claim(cooldown) -> dict:
    """Section 2's ties row, one part per budget: where a constant rate ties the cosine too (the
    short budgets, on some seeds) that part does not discriminate; shown, not asserted."""
    v = _views(cooldown)
    parts = {}
    for k, b in enumerate(cooldown.budgets):
        claim = evidence.Claim(
            f"linear cooldown to {b} steps against the cosine to {b}", _WSD,
            lambda w, b=b: _cool("linear")(w, b) / _cos(w, b),
            evidence.Test("<", TIES, "TIES", scale="log"),
            control=f"the constant run at {b} steps",
            control_measure=lambda w, b=b: _const(w, b) / _cos(w, b),
            window=f"training loss at step {b}", fmt=lambda x: f"{x:.2f}×")
        parts[f"at {b} steps:"] = evidence.judge(claim, v)
    return evidence.joint(
        "a constant rate with a short linear cooldown, branched from one run, matches a cosine "
        "run to each budget", _WSD, parts,
        control="the constant run at each budget, no cooldown",
        window=f"training loss at each budget ({', '.join(map(str, cooldown.budgets))} "
               f"steps), cooldowns over the last {100 * cooldown.config.cooldown:g}% of "
               f"each; the linear cooldown's and the constant run's ratio to the cosine, judged "
               f"budget by budget", asserted=False)


def average_claims(cooldown) -> list[dict]:
    """Section 3's rows: the constant run's averages against its cooldowns, shown, not
    asserted: their control (the constant run's own weights) comes, on its nearest seed,
    within about its seeds' spread of the bar, a margin another set of runs can move."""
    v = _views(cooldown)
    hs = cooldown.budgets
    rows = []
    for label, name in (("its uniform average over the cooldown's steps", lambda b: f"tail@{b}"),
                        (f"its EMA (window {cooldown.config.ema_window} steps)",
                         lambda b: "ema")):
        claim = evidence.Claim(
            f"averaging the weights of a constant-rate run, {label}, comes near the cooldown "
            f"without lowering the rate", _WSD,
            _worst_ratio(lambda v, b, n=name: _avg_at(v, n(b), b), _cool("linear")),
            evidence.Test("<", AVERAGE_NEAR, "AVERAGE_NEAR", scale="log"),
            control="the constant run's own weights at each budget",
            control_measure=_worst_ratio(_const, _cool("linear")),
            window=f"training loss at each budget ({', '.join(map(str, hs))} steps); worst ratio "
                   f"to the linear cooldown's over the budgets", fmt=lambda x: f"{x:.2f}×",
            asserted=False)
        rows.append(evidence.judge(claim, v).row())
    return rows


def tuned_lr(r, method: str) -> float:
    """The peak rate of ``method`` (one of :data:`~.experiments.SF_METHODS`) in a
    :func:`~.experiments.run_schedulefree` result whose training loss at the budget, the
    seeds' mean, is lowest: the rate a tuner picks (one rate for every seed)."""
    if method not in SF_METHODS:
        raise ValueError(f"tuned_lr method must be one of {list(SF_METHODS)}, got {method!r}")
    mean = _means(r, method, "train_loss")
    return min(mean, key=mean.get)


def _means(r, method: str, key: str) -> dict:
    """``{rate: the seeds' mean of ``key`` at the budget}`` of ``method``."""
    i = r.steps.index(r.budgets[-1])
    L = getattr(r.methods[method], key)
    return {lr: np.mean([L[s][lr][i] for s in r.seeds]) for lr in r.lrs}


def _sf_final(r, method, seed, key="train_loss"):
    L = getattr(r.methods[method], key)
    return float(L[seed][tuned_lr(r, method)][r.steps.index(r.budgets[-1])])


def _sf_ratio(r, method, key="train_loss"):
    """One seed's ``method`` over the cosine at the budget, both at their tuned rates."""
    return lambda v: _sf_final(r, method, v, key) / _sf_final(r, "cosine", v, key)


def schedulefree_numbers(r) -> dict:
    """Section 4's glue texts (the page's seed, and the seeds' means in the test loss); also
    schedule-free's and the cosine's lowest seeds'-mean test loss over the rates, whatever
    rate the training loss tunes (``sf_best_test`` at ``sf_best_test_lr``, ``sf_cos_best_test``)."""
    s = r.seeds[0]
    T = r.budgets[-1]
    f2 = lambda x: f"{x:.2f}"
    mean = lambda m, k: np.mean([_sf_final(r, m, q, k) for q in r.seeds])
    best, cos = _means(r, "schedule-free", "test_loss"), _means(r, "cosine", "test_loss")
    lr = min(best, key=best.get)
    wd = r.config.weight_decay
    return dict(sf_T=T, sf_warmup=r.warmup, sf_n_train=r.config.n_train,
                sf_reg="no weight decay" if wd == 0 else f"weight decay {wd:g}", sf_warm_pct=f"{100 * r.warmup / T:.0f}%",
                sf_lrs=", ".join(f"{lr:g}" for lr in r.lrs),
                sf_lr=f"{tuned_lr(r, 'schedule-free'):g}", sf_cos_lr=f"{tuned_lr(r, 'cosine'):g}",
                sf_const_lr=f"{tuned_lr(r, 'constant'):g}",
                sf_ratio=f2(_sf_ratio(r, "schedule-free")(s)),
                sf_const_ratio=f2(_sf_ratio(r, "constant")(s)),
                sf_test_ratio=f2(_sf_ratio(r, "schedule-free", "test_loss")(s)),
                sf_test=f2(mean("schedule-free", "test_loss")), sf_cos_test=f2(mean("cosine", "test_loss")),
                sf_const_test=f2(mean("constant", "test_loss")),
                sf_acc=f"{100 * mean('schedule-free', 'test_acc'):.0f}%",
                sf_cos_acc=f"{100 * mean('cosine', 'test_acc'):.0f}%",
                sf_best_test=f"{best[lr]:.2f}", sf_best_test_lr=f"{lr:g}",
                sf_cos_best_test=f"{min(cos.values()):.2f}")


def schedulefree_claims(sf) -> list[dict]:
    """Section 4's rows, in the training loss and in the test loss."""
    T = sf.budgets[-1]
    seeds = {s: s for s in sf.seeds}
    wd = sf.config.weight_decay
    setting = (f"{'no weight decay' if wd == 0 else f'weight decay {wd:g}'}, "
               f"{sf.config.n_train:,} training examples")
    lrs = ", ".join(f"{lr:g}" for lr in sf.lrs)
    rows = []
    # both shown, not asserted: a constant rate tuned on the same grid ties the cosine's
    # training loss too (the row does not discriminate), and on held-out data the row says no
    for key, words in (("train_loss", "training loss"), ("test_loss", "test loss (held-out data)")):
        claim = evidence.Claim(
            f"in {words}, schedule-free AdamW, with no decay schedule (a warmup of "
            f"{sf.warmup} steps, {100 * sf.warmup / T:.0f}% of the budget, then a constant "
            f"rate), matches or beats AdamW with a cosine to the budget", _SF,
            _sf_ratio(sf, "schedule-free", key), evidence.Test("<", TIES, "TIES", scale="log"),
            control="AdamW at a constant rate after the same warmup, no decay, its rate tuned "
                    "the same way", control_measure=_sf_ratio(sf, "constant", key),
            window=f"{words} at step {T}, ratio to the cosine's; every method's peak rate "
                   f"tuned over {lrs} on the seeds' mean training loss"
                   + (f"; {setting}, an MLP on MNIST-1D, far smaller than the paper's "
                      "benchmarks"
                      if key == "test_loss" else ""),
            fmt=lambda x: f"{x:.2f}×", asserted=False)
        rows.append(evidence.judge(claim, seeds).row())
    return rows


def _apart(a: float, b: float) -> float:
    """How far apart two positive numbers are as a factor: ``max(a/b, b/a)``."""
    return float(max(a / b, b / a))


def clock_numbers(r) -> dict:
    """Section 5's glue texts (one seed's :func:`~.experiments.run_clock`)."""
    c, w, m, p = r.clock, "WSD", r.memory, r.product
    f2 = lambda x: f"{x:.2f}"
    i0 = r.steps.index(min(r.steps, key=lambda t: abs(t - r.start)))  # the nearest evaluation
    return dict(ck_tau=f"{r.config.clock_tau:g}", ck_wd=f"{r.weight_decay:.2g}",
                ck_T=r.steps[-1], ck_start=r.start,
                ck_frac=f"{100 * r.config.clock_cooldown:g}%",
                ck_wsd_clock=f2(c[w][-1]), ck_const_clock=f2(c["constant"][-1]),
                ck_cool_ticks=f2(c[w][-1] - c[w][i0]),
                ck_const_ticks=f2(c["constant"][-1] - c["constant"][i0]),
                ck_wsd_mem=f"{m[w][-1]:.3f}", ck_const_mem=f"{m['constant'][-1]:.3f}",
                ck_wsd_prod=f"{p[w][-1]:.3f}", ck_tie=f"{CLOCK_TIE:g}",
                ck_ratio=f"{_apart(m[w][-1], r.expected[w][-1]):.3f}",
                ck_prod_ratio=f2(_apart(m[w][-1], p[w][-1])),
                ck_const_prod_ratio=f2(_apart(m["constant"][-1], p["constant"][-1])),
                ck_collapse=f"{collapse(m, c):.3f}", ck_step_apart=f2(collapse(m, c, "steps")),
                ck_collapse_no_decay=f"{collapse(r.expected_no_decay, r.sum_eta):.3f}",
                ck_no_decay_agree=_agree(collapse(r.expected_no_decay, r.sum_eta)),
                ck_sim_agree=_agree(_apart(m[w][-1], r.expected[w][-1])),
                ck_step_apart_no_decay=f2(collapse(r.expected_no_decay, r.sum_eta, "steps")))


def _agree(factor: float) -> str:
    """How two numbers ``factor`` apart (at least 1) agree, in words: "to three decimals
    (1.000×)" where the factor prints as 1.000, else "within 1.004×"."""
    return (f"to three decimals ({factor:.3f}×)" if f"{factor:.3f}" == "1.000"
            else f"within {factor:.3f}×")


def collapse(memory: dict, clock: dict, by: str = "clock") -> float:
    """How far apart, as a factor, the WSD run's ``memory`` and the constant run's are (each
    ``{"WSD", "constant"}``, per evaluated step), the worst over the evaluated steps: at equal
    readings of ``clock`` (``by="clock"``, the constant run's memory interpolated there,
    geometrically: exact for a memory that decays exponentially on the clock) or at equal
    steps (``by="steps"``)."""
    if by not in ("clock", "steps"):
        raise ValueError(f"collapse by must be 'clock' or 'steps', got {by!r}")
    m, mc = np.asarray(memory["WSD"], float), np.asarray(memory["constant"], float)
    if np.any(m <= 0) or np.any(mc <= 0):
        raise ValueError("collapse: the memories must be positive to compare as factors")
    at = np.exp(np.interp(clock["WSD"], clock["constant"], np.log(mc))) \
        if by == "clock" else mc
    return max(_apart(a, b) for a, b in zip(m, at))


def clock_claims(clock: dict) -> list[dict]:
    """Section 5's row on ``{seed: run_clock result}``."""
    clock = plots.per_seed(clock, "clock", "schedules.run_clock")
    r0 = next(iter(clock.values()))
    T = r0.steps[-1]
    claim = evidence.Claim(
        "what a run remembers of its start depends on its schedule only through Ση: a WSD run "
        "and a constant-rate one remember the same at equal Ση (weight decay's clock λΣη, λ "
        "fixed), not at equal steps", _CLOCK, lambda r: collapse(r.memory, r.clock),
        evidence.Test("<", CLOCK_TIE, "CLOCK_TIE", scale="log"),
        control="the same two runs compared at equal steps",
        control_measure=lambda r: collapse(r.memory, r.clock, by="steps"),
        window=f"twin runs' memory of the start (the replicas' mean), one-pass SGD with "
               f"decoupled weight decay (not AdamW) to step {T}: WSD against the constant "
               f"rate at equal Ση (interpolated), the worst over the evaluated steps, the "
               f"larger of the ratio and its inverse. Shown, not asserted: in this linear "
               f"model the mean memory forgets on ∏(1 − η(λ + λ_i)), a function of Ση up to "
               f"η² terms, so the treatment cannot fail and the equal-steps control is forced "
               f"to (WSD's Ση is smaller at equal steps): a check of the algebra, not evidence",
        fmt=lambda x: f"{x:.3f}×", asserted=False)
    return [evidence.judge(claim, clock).row()]


def page_claims(anytime: dict | None = None, exponents: dict | None = None,
                cooldown=None, averaging=None, schedulefree=None,
                clock: dict | None = None) -> list[dict]:
    """The page's claims table, section by section (``averaging``: the same run_cooldown
    result as ``cooldown``); nothing without runs."""
    rows = []
    if anytime is not None:
        rows += anytime_claims(anytime, exponents)
    if cooldown is not None:
        rows += cooldown_claims(cooldown)
    if averaging is not None:
        rows += average_claims(averaging)
    if schedulefree is not None:
        rows += schedulefree_claims(schedulefree)
    if clock is not None:
        rows += clock_claims(clock)
    return rows


def published_claims() -> list[dict]:
    """The chapter precomputes nothing yet: its claims are all judged on the page's live runs."""
    return []


def cooldown_notes(cooldown: dict) -> dict:
    """Section 2's glue texts no row gives (:func:`.valley.cooldown_notes`), with the
    stacked trainer's own number of examples the training loss is measured on."""
    return valley_notes(cooldown, TRAIN_EVAL)
