"""Schedules and weight averaging, the claims: the numbers the page glues and its claims table,
every row judged by :mod:`dynamics.evidence` against a control that must fail the same test.

Section 1's rows, on the batched simulation (one run of every schedule per seed, the replicas'
mean risk) and on the exact expected risk:

- a constant rate's last iterate stalls while the average of its iterates keeps falling
  (shown, not asserted: under the control-margin rule the last iterate's seeds spread over
  more than its miss, at smoke and at cpu);
- the theory's decay with averaging, which knows no horizon, stays within :data:`ENVELOPE` of
  the tuned cosine to every horizon, while the cosine tuned to the longest horizon does not;
- the best decay exponent (exact risk, a grid of step :data:`EXPONENT_STEP`) lies within
  :data:`EXPONENT_TOL` of the theory's in three settings of the exponents, and not within it of
  the exponent the theory gives another setting.

Sections 2-4's rows, on one :func:`~.experiments.run_cooldown` (and
:func:`~.experiments.run_schedulefree`) result over the seeds, each seed's training loss:

- a linear cooldown ties the cosine to each budget within :data:`TIES` (control: the constant
  run at each budget); the loss drops below :data:`DROP` of its value over the longest cooldown
  (control: the constant run continued for the same steps; shown, not asserted: the control
  misses by no more than its seeds' spread); a 1−√ cooldown ends below the linear one (shown);
- the constant run's uniform average over each cooldown's steps, and its EMA, come within
  :data:`AVERAGE_NEAR` of the cooldown (control: the constant run's own weights; both shown,
  not asserted: the control misses by no more than its seeds' spread);
- schedule-free AdamW ties or beats the tuned cosine within :data:`TIES` (control: AdamW at a
  constant rate).

Section 5's row, on :func:`~.experiments.run_clock` per seed: at the end of a WSD run the
memory of the start is what weight decay's clock ``sum eta`` predicts (the exact expected
memory of that schedule) within :data:`CLOCK_TIE`; the control reads the step count as the
clock (the constant rate's expected memory after as many steps).
"""
from __future__ import annotations

import numpy as np

from .. import evidence, plots
from .experiments import GAMMAS, best_exponent, run_anytime
from .science import PowerLawConfig

__all__ = ["FALLS_TO", "ENVELOPE", "EXPONENT_TOL", "EXPONENT_STEP", "EXPONENT_SETTINGS",
           "envelope_ratio", "anytime_numbers", "claim_runs", "anytime_claims", "page_claims",
           "published_claims", "TIES", "DROP", "AVERAGE_NEAR", "cooldown_view", "cooldown_numbers",
           "cooldown_claims", "average_claims", "tuned_lr", "schedulefree_numbers",
           "schedulefree_claims", "CLOCK_TIE", "clock_numbers", "clock_claims", "collapse"]

FALLS_TO = 0.5         # risk at the last horizon / at the first, below this: still falling
ENVELOPE = 1.5         # worst ratio to the tuned cosine over all horizons, below this: anytime
EXPONENT_TOL = 0.25    # |best measured decay exponent - theory's| below this
EXPONENT_STEP = GAMMAS[1] - GAMMAS[0]   # the searched exponents' spacing: the measure's resolution
# (capacity, source): easy target (gamma* = 1/2), easier still (0.7), hard (0: constant + averaging)
EXPONENT_SETTINGS = ((2.0, 4.0), (1.5, 5.0), (2.0, 2.0))
_AP = "Anytime Pretraining: Horizon-Free Learning-Rate Schedules with Weight Averaging"
_WSD = "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations"
_SF = "The Road Less Scheduled"
_CLOCK = ("How to set AdamW's weight decay as you scale model and dataset size (AdamW's weights "
          "as an EMA with time constant 1/(ηλ); the schedule's clock is this book's reading)")

# Sections 2-3 (MNIST-1D; the loss is the training loss, on 1000 training examples)
TIES = 1.05            # worst ratio of a cooldown's loss to the cosine's over the budgets, below: ties
DROP = 0.8             # loss at the end of the longest cooldown / at its start, below this: a drop
AVERAGE_NEAR = 1.1     # worst ratio of an average's loss to the cooldown's over the budgets
# Section 5 (the power-law model with decoupled weight decay)
CLOCK_TIE = 1.1        # measured memory / predicted (or its inverse, the larger), below: agree


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
               f"second half of each run", fmt=lambda v: f"{v:.2f}", asserted=False)
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


def cooldown_view(r: dict, seed: int) -> dict:
    """One seed's part of a :func:`~.experiments.run_cooldown` result: what its claims read."""
    return dict(budgets=r["budgets"], starts=r["starts"], steps=r["steps"], seed=seed,
                train_loss=r["train_loss"][seed], test_loss=r["test_loss"][seed],
                averages=r["averages"][seed])


def _at(v: dict, name: str, step: int, key: str = "train_loss") -> float:
    return float(v[key][name][v["steps"].index(step)])


def _avg_at(v: dict, name: str, step: int, key: str = "train_loss") -> float:
    a = v["averages"][name]
    return float(a[key][a["steps"].index(step)])


def _worst_ratio(num, den):
    """The largest over the budgets of ``num(v, b) / den(v, b)``."""
    return lambda v: max(num(v, b) / den(v, b) for b in v["budgets"])


def _cool(shape):
    return lambda v, b: _at(v, f"{shape}@{b}", b)


_cos = lambda v, b: _at(v, f"cosine@{b}", b)
_const = lambda v, b: _at(v, "constant", b)


def _drop(name):
    """Loss at the longest budget ``T`` over the constant run's at that cooldown's start."""
    return lambda v: _at(v, name(v), v["budgets"][-1]) / _at(v, "constant", v["starts"][-1])


def cooldown_numbers(r: dict) -> dict:
    """The glue texts of section 2 and 3 (the page's seed)."""
    v = cooldown_view(r, r["seeds"][0])
    c = r["config"]
    T = r["budgets"][-1]
    f2 = lambda x: f"{x:.2f}"
    return dict(
        cd_width=c["width"], cd_batch=c["batch"], cd_lr=f"{c['lr']:g}", cd_n_train=c["n_train"],
        cd_budgets=", ".join(map(str, r["budgets"])), cd_T=T, cd_frac=f"{100 * c['cooldown']:g}%",
        cd_n_seeds=len(r["seeds"]), cd_ties=f"{TIES:g}", cd_drop_th=f"{DROP:g}",
        cd_lin_cos=f2(_worst_ratio(_cool("linear"), _cos)(v)),
        cd_sqrt_cos=f2(_worst_ratio(_cool("sqrt"), _cos)(v)),
        cd_const_cos=f2(_worst_ratio(_const, _cos)(v)),
        cd_drop=f2(_drop(lambda v: f"linear@{T}")(v)),
        cd_const_drop=f2(_drop(lambda v: "constant")(v)),
        cd_sqrt_lin=f2(_at(v, f"sqrt@{T}", T) / _at(v, f"linear@{T}", T)),
        av_near=f"{AVERAGE_NEAR:g}", av_window=c["ema_window"],
        av_tail_lin=f2(_worst_ratio(lambda v, b: _avg_at(v, f"tail@{b}", b), _cool("linear"))(v)),
        av_ema_lin=f2(_worst_ratio(lambda v, b: _avg_at(v, "ema", b), _cool("linear"))(v)),
        av_const_lin=f2(_worst_ratio(_const, _cool("linear"))(v)))


def _views(cooldown: dict) -> dict:
    if not isinstance(cooldown, dict) or "seeds" not in cooldown:
        raise ValueError("claims(cooldown=...) takes one run_cooldown result over several seeds "
                         "(schedules.run_cooldown(seeds=...) gives it)")
    return {s: cooldown_view(cooldown, s) for s in cooldown["seeds"]}


def cooldown_claims(cooldown: dict) -> list[dict]:
    """Section 2's rows on one :func:`~.experiments.run_cooldown` result over several seeds."""
    v = _views(cooldown)
    hs = cooldown["budgets"]
    win = (f"training loss at each budget ({', '.join(map(str, hs))} steps), cooldowns over "
           f"the last {100 * cooldown['config']['cooldown']:g}% of each")
    ties = evidence.Claim(
        "a constant rate with a short linear cooldown, branched from one run, matches a cosine "
        "run to each budget", _WSD, _worst_ratio(_cool("linear"), _cos),
        evidence.Test("<", TIES, "TIES", scale="log"),
        control="the constant run at each budget, no cooldown",
        control_measure=_worst_ratio(_const, _cos),
        window=win + "; worst ratio to the cosine over the budgets", fmt=lambda x: f"{x:.2f}×")
    T = hs[-1]
    drop = evidence.Claim(
        "the loss drops during the cooldown", _WSD, _drop(lambda v: f"linear@{T}"),
        evidence.Test("<", DROP, "DROP", scale="log"),
        control="the constant run continued for the same steps",
        control_measure=_drop(lambda v: "constant"),
        window=f"training loss at step {T} over that at the cooldown's start "
               f"(step {cooldown['starts'][-1]})", fmt=lambda x: f"{x:.2f}", asserted=False)
    sqrt = evidence.Claim(
        "a 1−√ cooldown ends lower than a linear one", _WSD,
        lambda v: _at(v, f"sqrt@{T}", T) / _at(v, f"linear@{T}", T),
        evidence.Test("<", 1.0, "one", scale="log"),
        control="the constant run, no cooldown, against the linear cooldown",
        control_measure=lambda v: _at(v, "constant", T) / _at(v, f"linear@{T}", T),
        window=f"training loss at step {T}, ratio to the linear cooldown's",
        fmt=lambda x: f"{x:.3f}", asserted=False)
    return [evidence.judge(c, v, v).row() for c in (ties, drop, sqrt)]


def average_claims(cooldown: dict) -> list[dict]:
    """Section 3's rows: the constant run's averages against its cooldowns."""
    v = _views(cooldown)
    hs = cooldown["budgets"]
    rows = []
    for label, name in (("its uniform average over the cooldown's steps", lambda b: f"tail@{b}"),
                        (f"its EMA (window {cooldown['config']['ema_window']} steps)",
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
        rows.append(evidence.judge(claim, v, v).row())
    return rows


def tuned_lr(r: dict, method: str) -> float:
    """The peak rate of ``method`` (``"cosine"`` or ``"schedule-free"``) in a
    :func:`~.experiments.run_schedulefree` result whose training loss at the budget, the
    seeds' mean, is lowest: the rate a tuner picks (one rate for every seed)."""
    if method not in ("cosine", "schedule-free"):
        raise ValueError(f"tuned_lr method must be 'cosine' or 'schedule-free', got {method!r}")
    i = r["steps"].index(r["budgets"][-1])
    mean = {lr: np.mean([r[method]["train_loss"][s][lr][i] for s in r["seeds"]]) for lr in r["lrs"]}
    return min(mean, key=mean.get)


def _sf_final(r, method, seed, key="train_loss"):
    return float(r[method][key][seed][tuned_lr(r, method)][r["steps"].index(r["budgets"][-1])])


def schedulefree_numbers(r: dict, cooldown: dict) -> dict:
    """Section 4's glue texts (the page's seed, and the seeds' means in the test loss)."""
    s = r["seeds"][0]
    T = r["budgets"][-1]
    f2 = lambda x: f"{x:.2f}"
    mean = lambda m, k: np.mean([_sf_final(r, m, q, k) for q in r["seeds"]])
    return dict(sf_T=T, sf_warmup=r["warmup"], sf_lrs=", ".join(f"{lr:g}" for lr in r["lrs"]),
                sf_lr=f"{tuned_lr(r, 'schedule-free'):g}", sf_cos_lr=f"{tuned_lr(r, 'cosine'):g}",
                sf_ratio=f2(_sf_final(r, "schedule-free", s) / _sf_final(r, "cosine", s)),
                sf_const_ratio=f2(_at(cooldown_view(cooldown, s), "constant", T)
                                  / _sf_final(r, "cosine", s)),
                sf_test=f2(mean("schedule-free", "test_loss")), sf_cos_test=f2(mean("cosine", "test_loss")),
                sf_acc=f"{100 * mean('schedule-free', 'test_acc'):.0f}%",
                sf_cos_acc=f"{100 * mean('cosine', 'test_acc'):.0f}%")


def schedulefree_claims(sf: dict, cooldown: dict) -> list[dict]:
    """Section 4's row: schedule-free AdamW against the tuned cosine at the budget, the
    control AdamW at a constant rate (section 2's run, the same seeds)."""
    T = sf["budgets"][-1]
    if T != cooldown["budgets"][-1] or sorted(sf["seeds"]) != sorted(cooldown["seeds"]):
        raise ValueError("schedulefree_claims: the schedule-free and cooldown runs must share "
                         "their longest budget and their seeds")
    runs = {s: dict(seed=s, view=cooldown_view(cooldown, s)) for s in sf["seeds"]}
    claim = evidence.Claim(
        "schedule-free AdamW, with no schedule and no horizon, matches or beats AdamW with a "
        "cosine tuned to the budget", _SF,
        lambda v: _sf_final(sf, "schedule-free", v["seed"]) / _sf_final(sf, "cosine", v["seed"]),
        evidence.Test("<", TIES, "TIES", scale="log"),
        control="AdamW at a constant rate (section 2's run), no schedule",
        control_measure=lambda v: _at(v["view"], "constant", T) / _sf_final(sf, "cosine", v["seed"]),
        window=f"training loss at step {T}, ratio to the tuned cosine's; each method's peak "
               f"rate tuned over {', '.join(f'{lr:g}' for lr in sf['lrs'])} on the seeds' mean",
        fmt=lambda x: f"{x:.2f}×")
    return [evidence.judge(claim, runs, runs).row()]


def _apart(a: float, b: float) -> float:
    """How far apart two positive numbers are as a factor: ``max(a/b, b/a)``."""
    return float(max(a / b, b / a))


def clock_numbers(r: dict) -> dict:
    """Section 5's glue texts (one seed's :func:`~.experiments.run_clock`)."""
    c, w = r["clock"], "WSD"
    f2 = lambda x: f"{x:.2f}"
    return dict(ck_tau=f"{r['config']['clock_tau']:g}", ck_wd=f"{r['weight_decay']:.2g}",
                ck_T=r["steps"][-1], ck_start=r["start"],
                ck_frac=f"{100 * r['config']['clock_cooldown']:g}%",
                ck_wsd_clock=f2(c[w][-1]), ck_const_clock=f2(c["constant"][-1]),
                ck_cool_ticks=f2(c[w][-1] - c[w][r["steps"].index(_near(r, r["start"]))]),
                ck_const_ticks=f2(c["constant"][-1] - c["constant"][
                    r["steps"].index(_near(r, r["start"]))]),
                ck_wsd_mem=f"{r['memory'][w][-1]:.3f}", ck_const_mem=f"{r['memory']['constant'][-1]:.3f}",
                ck_wsd_prod=f"{r['product'][w][-1]:.3f}", ck_tie=f"{CLOCK_TIE:g}",
                ck_ratio=f2(_apart(r["memory"][w][-1], r["expected"][w][-1])),
                ck_step_ratio=f2(_apart(r["memory"][w][-1], r["expected"]["constant"][-1])),
                ck_collapse=f"{collapse(r):.3f}")


def collapse(r: dict) -> float:
    """How far apart, as a factor, the WSD run's memory and the constant run's are at equal
    readings of the clock (the constant run's interpolated), the worst over the steps."""
    at = np.interp(r["clock"]["WSD"], r["clock"]["constant"], r["memory"]["constant"])
    return max(_apart(m, a) for m, a in zip(r["memory"]["WSD"], at))


def _near(r: dict, step: int) -> int:
    """The evaluated step nearest ``step``."""
    return min(r["steps"], key=lambda t: abs(t - step))


def clock_claims(clock: dict) -> list[dict]:
    """Section 5's row on ``{seed: run_clock result}``."""
    clock = plots.per_seed(clock, "clock", "schedules.run_clock")
    r0 = next(iter(clock.values()))
    T = r0["steps"][-1]
    claim = evidence.Claim(
        "a cooldown slows weight decay's clock: at the end of a WSD run the memory of the start "
        "is what the clock λΣη predicts, not what the step count does", _CLOCK,
        lambda r: _apart(r["memory"]["WSD"][-1], r["expected"]["WSD"][-1]),
        evidence.Test("<", CLOCK_TIE, "CLOCK_TIE", scale="log"),
        control="the step count as the clock: the constant rate's expected memory after as "
                "many steps",
        control_measure=lambda r: _apart(r["memory"]["WSD"][-1], r["expected"]["constant"][-1]),
        window=f"twin runs' memory of the start at step {T}, the replicas' mean, against the "
               f"exact expected memory; the larger of the ratio and its inverse",
        fmt=lambda x: f"{x:.3f}×")
    return [evidence.judge(claim, clock, clock).row()]


def page_claims(anytime: dict | None = None, exponents: dict | None = None,
                cooldown: dict | None = None, averaging: dict | None = None,
                schedulefree: dict | None = None, clock: dict | None = None) -> list[dict]:
    """The page's claims table, section by section: section 1 on ``anytime`` and
    ``exponents``, 2 on ``cooldown``, 3 on ``averaging`` (the same run_cooldown result) and 4
    on ``schedulefree`` with ``cooldown`` (its control), 5 on ``clock`` (``{seed:
    run_clock result}``); nothing without runs."""
    if schedulefree is not None and cooldown is None:
        raise ValueError("page_claims: schedulefree's control is the cooldown run's constant "
                         "rate: pass cooldown= too")
    rows = []
    if anytime is not None:
        rows += anytime_claims(anytime, exponents)
    if cooldown is not None:
        rows += cooldown_claims(cooldown)
    if averaging is not None:
        rows += average_claims(averaging)
    if schedulefree is not None:
        rows += schedulefree_claims(schedulefree, cooldown)
    if clock is not None:
        rows += clock_claims(clock)
    return rows


def published_claims() -> list[dict]:
    """The chapter precomputes nothing yet: its claims are all judged on the page's live runs."""
    return []
