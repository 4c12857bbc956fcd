"""Weight decay, the views: live panels, the page's numbers and the claims table of the chapter.

The static figures are in :mod:`.figures` (re-exported here). Panels follow the contract of
:class:`dynamics.widgets.Panel` (progress, Stop, refused out-of-range values, ``above=``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import plots
from ..runtime import get_seed
from .science import best_decay_per_lr, ridge_slope, zero_gradient_path
from .experiments import (DECOUPLING, LABELS, equilibrium_summary, grid_array, grid_summary,
                          live_grid_config, run_clock, run_decoupling, run_equilibrium,
                          run_spectrum, decoupling_summary)
from .science import EQUILIBRIUM_OPTIMIZERS, ClockConfig, EquilibriumConfig, SpectrumConfig

from .figures import *  # noqa: F401,F403  (re-exported: views.X still works)
from .claims import *  # noqa: F401,F403  (the live claims, re-exported: views.claims works)
from .claims import __all__ as _claims
from .claims import claims
from .window import *  # noqa: F401,F403  (section 3's window, re-exported: views.run_window)
from .window import __all__ as _window
from .figures import (_slope, clock_figure, equilibrium_figure, grid_figure, spectrum_figure)


# ============================================================================ panels


def decoupling_panel(profile: str | None = None, seed: int | None = None):
    """Live: the Adam + L2 and AdamW grids at the notebook's (small) scale; choose their
    length, data size and width."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    base = live_grid_config(profile)

    def run(update, steps, n_train, width):
        # evaluations every ~25 steps: progress and Stop act at evaluations
        cfg = base.replace(steps=int(steps), n_train=int(n_train), width=int(width),
                           n_evals=min(100, max(base.n_evals, int(steps) // 25)))
        payload = run_decoupling(cfg, seed, bars=False)
        bad = sum(g["diverged"] for g in payload["grids"].values())
        stopped = any(g["stopped"] for g in payload["grids"].values())
        if not update.stop_requested:
            update(status=f"done; {bad} run(s) diverged (blank cells)" if bad else "done")
        if stopped and len(payload["grids"]) < len(DECOUPLING):
            return grid_figure(payload, tuple(payload["grids"]))
        return grid_figure(payload)

    return Panel(run, [Slider("steps", 50, max(3000, base.steps), value=base.steps, integer=True,
                              step=50),
                       Choice("n_train", sorted({500, 1000, 2000, 4000, base.n_train}),
                              value=base.n_train),
                       Choice("width", sorted({32, 64, 128, 256, base.width}), value=base.width)],
                 title="Try it: Adam + L2 against AdamW",
                 note="Longer training and less data make regularization matter more.",
                 above="live", profile=profile)


def equilibrium_panel(profile: str | None = None, seed: int | None = None):
    """Live: one scale-invariant run with the chosen optimizer, learning rate and decay."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    base = EquilibriumConfig.for_profile(profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))

        def build(history, model):  # the figure from the model's meter so far
            step, meter = history.steps[-1], model.meter
            if step == 0:
                return None
            return equilibrium_figure(equilibrium_summary(cfg, meter.arrays(step), meter.names,
                                                          meter.numel, history))

        live = update.every(build, interval=1.0, with_model=True)
        result = run_equilibrium(cfg, seed, on_eval=live, bars=False)
        if not update.stop_requested:
            update(status="done" if result["status"] == "ok" else result["status"])
        return equilibrium_figure(result)

    return Panel(run, [Choice("optimizer", list(EQUILIBRIUM_OPTIMIZERS), value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-4, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, max(5000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: the rotational equilibrium",
                 note="AdamW: lr ~ 3e-3, λ ~ 1. SGD: lr ~ 0.2, λ ~ 0.02. The product ηλ must "
                      "stay below 1; equilibrium needs a few τ = 1/(ηλ) steps.",
                 above="live", profile=profile)


def clock_panel(profile: str | None = None, seed: int | None = None):
    """Live: the trajectory-invariance experiment with a chosen product and contrast."""
    from ..widgets import Panel, Slider

    seed = get_seed(seed)
    base = ClockConfig.for_profile(profile)

    def run(update, product, spread, contrast, steps):
        cfg = base.replace(product=float(product), spread=float(spread), contrast=float(contrast),
                           steps=int(steps))
        result = run_clock(cfg, seed, bars=False)
        bad = [h for h in result["histories"] if h.diverged]
        if not update.stop_requested:
            update(status=f"{len(bad)} run(s) diverged" if bad else
                   f"matched runs within {100 * result['spread']:.0f}%, "
                   f"the odd one at {result['ratio']:.2f}x their loss")
        return clock_figure(result)

    return Panel(run, [Slider("product", 1e-4, 5e-2, value=base.product, log=True),
                       Slider("spread", 1.0, 4.0, value=base.spread, step=0.25),
                       Slider("contrast", 1.0, 10.0, value=base.contrast, step=0.5),
                       Slider("steps", 100, max(5000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: weight decay as a clock", above="live", profile=profile)


def spectrum_panel(profile: str | None = None, seed: int | None = None):
    """Live: train with and without decay and compare the weights."""
    from ..widgets import Choice, Panel, Slider

    seed = get_seed(seed)
    base = SpectrumConfig.for_profile(profile)

    def run(update, optimizer, lr, weight_decay, steps):
        cfg = base.replace(optimizer=optimizer, lr=float(lr), weight_decay=float(weight_decay),
                           steps=int(steps))
        result = run_spectrum(cfg, seed, bars=False)
        bad = [wd for wd, r in result["runs"].items() if r["history"].diverged]
        if not update.stop_requested:
            update(status=f"diverged with λ = {', '.join(plots.number(w, 2) for w in bad)}"
                   if bad else "done")
        return spectrum_figure(result)

    return Panel(run, [Choice("optimizer", ["adamw", "sgd", "momentum"], value=base.optimizer),
                       Slider("lr", 1e-4, 1.0, value=base.lr, log=True),
                       Slider("weight_decay", 1e-3, 10.0, value=base.weight_decay, log=True),
                       Slider("steps", 100, max(10000, base.steps), value=base.steps, integer=True,
                              step=100)],
                 title="Try it: weight decay and the spectrum", above="live", profile=profile)


# ============================================================================ claims

_LH = "Decoupled Weight Decay Regularization"
_EQ = "L2 Regularization versus Batch and Weight Normalization; Rotational Equilibrium"


def _n(x, digits: int = 3) -> str:
    return plots.number(x, digits, missing="n/a")


def _signed(x) -> str:
    return "n/a" if x is None or not math.isfinite(x) else ("+" if x >= 0 else "−") + _n(abs(x), 2)


# ============================================================================ numbers in the prose

# The learning rates over which section 1 reads the plain MLP's AdamW ridge (where eta * lambda
# is small), and section 3 the scale-invariant network's ridge (where every seed has one).
PLAIN_BAND = (3e-4, 3.2e-3)
INVARIANT_BAND = (1e-3, 1.01e-2)


def _fmt(x, digits: int = 2) -> str:
    return plots.number(x, digits, missing="n/a")


def _range(values, digits: int = 2) -> str:
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return "n/a"
    lo, hi = min(values), max(values)
    return _fmt(lo, digits) if _fmt(lo, digits) == _fmt(hi, digits) else \
        f"{_fmt(lo, digits)} to {_fmt(hi, digits)}"


def ridge_band(payload: dict, kind: str, band) -> dict:
    """The best decay of grid ``kind`` at the learning rates inside ``band`` (lo, hi): on the
    seed-averaged grid (``ridge``) and on each seed (``per_seed``), and per seed the factor
    between the largest and the smallest best decay in the band (``moves``; inf where a seed
    has no best decay at some learning rate of the band)."""
    g = payload["grids"][kind]
    lrs = np.asarray(g["lrs"], dtype=float)
    cols = [j for j, lr in enumerate(lrs) if band[0] <= lr <= band[1]]
    mean = grid_summary(payload, kind)["ridge"]
    per_seed = [[best_decay_per_lr(acc, g["decays"])[j] for j in cols]
                for acc in np.asarray(g["test_acc_seeds"], dtype=float)]
    moves = [max(r) / min(r) if all(v is not None for v in r) else math.inf for r in per_seed]
    return dict(lrs=lrs[cols].tolist(), ridge=[mean[j] for j in cols], per_seed=per_seed,
                moves=moves, lr_factor=float(lrs[cols[-1]] / lrs[cols[0]]) if cols else math.nan)


def seed_slopes(payload: dict, kind: str) -> dict:
    """``{seed: slope}``: on each seed's grid, the slope of log(best PyTorch decay) against
    log(eta) (:func:`~.science.ridge_slope`; 0 when the best lambda ignores eta, -1 when the
    best eta * lambda does)."""
    g = payload["grids"][kind]
    return {s: ridge_slope(g["lrs"], best_decay_per_lr(acc, g["decays"]))
            for s, acc in enumerate(np.asarray(g["test_acc_seeds"], dtype=float))}


def decoupling_numbers(grid: dict) -> dict:
    """The numbers section 1's prose quotes about the precomputed grids, as glue texts:
    Adam + L2's and AdamW's ridges, the slopes fitted through them, Loshchilov & Hutter's
    best decay eta * lambda at both ends, and the best cells with AdamW's margin per seed."""
    sums = {k: grid_summary(grid, k) for k in DECOUPLING}
    lrs = grid["lrs"]
    l2 = [d for d in sums["adam_l2"]["ridge"] if d is not None]
    plain = ridge_band(grid, "adamw", PLAIN_BAND)
    ridge = [d for d in sums["adamw"]["ridge"] if d is not None]
    defined = [lr for lr, d in zip(lrs, sums["adamw"]["ridge"]) if d is not None]
    lh = [lr * d for lr, d in zip(lrs, sums["adamw"]["ridge"]) if d is not None]
    dec = decoupling_summary(grid)
    return dict(
        wd_l2_ridge=_range(l2), wd_adamw_ridge=_range(plain["ridge"]),
        wd_adamw_ridge_seeds=_range([v for r in plain["per_seed"] for v in r]),
        wd_adamw_moves=_fmt(max(plain["moves"])),
        wd_slope_l2=_slope(sums["adam_l2"]["slope"]), wd_slope_adamw=_slope(sums["adamw"]["slope"]),
        wd_lh_lo=_fmt(lh[0], 2), wd_lh_hi=_fmt(lh[-1], 2), wd_lh_growth=_fmt(lh[-1] / lh[0], 2),
        wd_best_adamw=_fmt(dec["best"]["adamw"]["acc"], 3),
        wd_best_l2=_fmt(dec["best"]["adam_l2"]["acc"], 3),
        wd_margins=_range(dec["per_seed"], 2) if dec["per_seed"] else "n/a",
        wd_best_verdict=plots.MARKS[grid_claims(grid)[0]["reproduced"]],
        wd_lambda_factor=_fmt(max(ridge) / min(ridge), 2), wd_lr_span=_fmt(max(defined) / min(defined), 2),
        wd_lh_slope=_slope(1 + sums["adamw"]["slope"]),
        wd_slope_l2_seeds=plots.spread(seed_slopes(grid, "adam_l2"), _slope),
        wd_slope_adamw_seeds=plots.spread(seed_slopes(grid, "adamw"), _slope),
        wd_lh_verdict=plots.MARKS[next(r["reproduced"] for r in grid_claims(grid)
                                       if r["claim"].startswith("with AdamW the best decay"))])


def live_slope_numbers(live: dict, grid: dict) -> dict:
    """The live grid's fitted slopes beside the precomputed grid's per-seed ones (glue texts):
    whether each falls inside the seeds' range ("inside") or outside it."""
    out = {}
    for kind, key in (("adam_l2", "l2"), ("adamw", "adamw")):
        live_slope = grid_summary(live, kind)["slope"]
        seeds = [v for v in seed_slopes(grid, kind).values() if not math.isnan(v)]
        inside = bool(seeds) and not math.isnan(live_slope) and min(seeds) <= live_slope <= max(seeds)
        out[f"wd_live_slope_{key}"] = _slope(live_slope)
        out[f"wd_live_{key}_inside"] = "inside" if inside else "outside"
    return out


def invariant_numbers(grid: dict) -> dict:
    """The numbers section 3's prose quotes about the scale-invariant grid (glue texts; "n/a"
    where the grid is too small to have them). ``prod_factor``: how far the best product
    eta * lambda moves, below the largest learning rate (where it drops)."""
    s = grid_summary(grid, "adamw_invariant")
    top = max(grid["grids"]["adamw_invariant"]["decays"])
    pts = [(lr, d) for lr, d in zip(grid["lrs"], s["ridge"]) if d is not None]
    inner = [(lr, d) for lr, d in pts if d < top] or [(math.nan, math.nan)]
    band = ridge_band(grid, "adamw_invariant", INVARIANT_BAND)
    lo = (band["lrs"][-1], band["ridge"][-1]) if band["lrs"] and band["ridge"][-1] else (math.nan,) * 2
    kept = pts[:-1] if len(pts) > 2 else [(math.nan, math.nan)] * 2
    prod = [lr * d for lr, d in kept]
    return dict(wd_inv_slope=_slope(s["slope"]),
                wd_inv_hi_lr=_fmt(inner[0][0], 1), wd_inv_hi=_fmt(inner[0][1], 2),
                wd_inv_lo_lr=_fmt(lo[0], 1), wd_inv_lo=_fmt(lo[1], 2),
                wd_inv_moves_min=_fmt(min(band["moves"], default=math.nan), 2),
                wd_inv_prod=_range(prod), wd_inv_prod_factor=_fmt(max(prod) / min(prod), 2),
                prod_factor=max(prod) / min(prod),
                wd_inv_prod_lrs=f"{_fmt(kept[0][0], 1)} to {_fmt(kept[-1][0], 1)}",
                wd_inv_lr_factor=_fmt(kept[-1][0] / kept[0][0], 2),
                wd_inv_lambda_factor=_fmt(kept[0][1] / kept[-1][1], 2))


def equilibrium_numbers(equilibria) -> dict:
    """Section 2's numbers: how far the measured RMS and angle per step settle from theory
    (measured / predicted - 1 over the last quarter, in percent, per optimizer)."""
    out = {}
    for r in equilibria:
        key = "adamw" if r["optimizer"] == "adamw" else "sgd"
        for q in ("rms", "angle"):
            devs = [100 * (v[f"{q}_ratio"] - 1) for v in r["layers"].values()]
            out[f"wd_{key}_{q}_dev"] = _range(devs, 2) + "%"
        out[f"wd_{key}_verdict"] = plots.MARKS[_equilibrium_verdict(r)]
    return out


RMS_TOL, ANGLE_TOL = 0.15, 0.20  # section 2: settled RMS and angle within these of theory
RELAX_BAND = (0.5, 2.0)  # the norm settles within e^-2 after this many tau steps
DECOUPLED = 0.5  # |slope| below this: a best decay that ignores eta (0), above: one that moves


def _equilibrium_verdict(r: dict) -> str:
    """Whether a run of section 2 settles at the predicted RMS (within RMS_TOL) and angle per
    step (within ANGLE_TOL) in every matrix: "yes", else "no"."""
    lay = list(r["layers"].values())
    if not lay:  # nothing settled to measure (a run far shorter than its clock, e.g. a dry run)
        return "not at this scale"
    return plots.verdict(max(abs(v["rms_ratio"] - 1) for v in lay) <= RMS_TOL
                         and max(abs(v["angle_ratio"] - 1) for v in lay) <= ANGLE_TOL)


def clock_numbers(clock: dict) -> dict:
    """Section 3's numbers about the matched runs: the factor between their learning rates
    end to end, how far apart their settled losses are, and the odd run's loss ratio."""
    lrs = [r["lr"] for r in clock["runs"] if r["matched"]]
    return dict(wd_clock_lr_factor=_fmt(max(lrs) / min(lrs), 2),
                wd_clock_spread=f"{_fmt(100 * clock['spread'], 2)}%",
                wd_clock_ratio=_fmt(clock["ratio"], 3), wd_clock_contrast=_fmt(clock["contrast"], 2))


def spectrum_numbers(spectrum: dict) -> dict:
    """Section 4's numbers: test and training accuracy without and with decay."""
    (w0, r0), (w1, r1) = list(spectrum["runs"].items())[0], list(spectrum["runs"].items())[-1]
    return dict(wd_spec_test=f"{_fmt(r0['test_acc'], 3)} → {_fmt(r1['test_acc'], 3)}",
                wd_spec_train=f"{_fmt(r0['train_acc'], 3)} → {_fmt(r1['train_acc'], 3)}",
                wd_spec_verdict=plots.MARKS[claims(spectrum={0: spectrum})[-1]["reproduced"]],
                wd_spec_phrase="better" if r1["test_acc"] > r0["test_acc"] else "worse")


# ============================================================================ worked answers
# Each exercise answer that quotes a measurement computes it in a collapsed cell of the page,
# with one of these: the page's own runs, at the page's profile and seed.


def answer_equilibrium(profile: str | None = None, seed: int | None = None, lr: float = 2e-3,
                       weight_decay: float = 1.0) -> str:
    """Exercise 1: AdamW at (lr, weight_decay) for 3 tau steps; the settled RMS of each
    matrix against sqrt(eta / 2 lambda), and the steps it took to get within e^-2."""
    tau = 1 / (lr * weight_decay)
    cfg = EquilibriumConfig.for_profile(profile, lr=lr, weight_decay=weight_decay,
                                        steps=int(round(3 * tau)))
    r = run_equilibrium(cfg, seed, bars=False)
    lay = r["layers"].values()
    relax = [v["relax_steps"] for v in lay]
    return (f"{cfg.steps:,} steps (τ = {tau:,.0f}): settled RMS "
            f"{', '.join(_n(v['rms'], 3) for v in lay)} against √(η/2λ) = "
            f"{_n(math.sqrt(lr / (2 * weight_decay)), 3)}; within e⁻² of equilibrium after "
            f"{', '.join('never' if s is None else f'{s:,}' for s in relax)} steps")


def answer_sgd_symmetry(equilibria, profile: str | None = None, seed: int | None = None,
                        factor: float = 4.0) -> str:
    """Exercise 2: section 2's SGD run against one with eta / factor and lambda * factor:
    the ratio of their settled norms per matrix (predicted: sqrt(factor)) and of their
    angles per step (predicted: 1)."""
    base = next(r for r in equilibria if r["optimizer"] == "sgd")
    cfg = EquilibriumConfig.for_profile(profile, optimizer="sgd", lr=base["lr"] / factor,
                                        weight_decay=base["weight_decay"] * factor)
    new = run_equilibrium(cfg, seed, bars=False)
    norm = [base["layers"][n]["norm"] / v["norm"] for n, v in new["layers"].items()]
    angle = [v["angle"] / base["layers"][n]["angle"] for n, v in new["layers"].items()]
    return (f"η/{factor:g}, λ·{factor:g}: norms {', '.join(_n(x, 3) for x in norm)} times "
            f"smaller (predicted {_n(math.sqrt(factor), 3)}); angle per step "
            f"{', '.join(_n(x, 3) for x in angle)} times the original (predicted 1)")


def answer_spread(clock: dict, profile: str | None = None, seed: int | None = None,
                  spread: float = 4.0) -> str:
    """Exercise 3: the clock's runs with learning rates ``spread`` apart and one product:
    how far apart their settled losses are, beside the section's own runs."""
    cfg = ClockConfig.for_profile(profile, spread=spread, contrast=1.0)
    wide = run_clock(cfg, seed, bars=False)
    runs = sorted(zip((r["lr"] for r in wide["runs"] if r["matched"]),
                      (l for r, l in zip(wide["runs"], wide["final_loss"]) if r["matched"])))
    return (f"settled losses {_n(100 * clock['spread'], 2)}% apart with spread "
            f"{clock['runs'][1]['lr'] / clock['runs'][0]['lr']:g}, "
            f"{_n(100 * wide['spread'], 2)}% with spread {spread:g}; per run, η → loss: "
            + ", ".join(f"{_n(lr, 2)} → {_n(loss, 3)}" for lr, loss in runs))


def answer_zero_gradient(lr: float = 1e-3, w0: float = 1.0) -> str:
    """Exercise 5: a coordinate with no loss gradient, after 1,000 and 2,000 steps."""
    adamw = zero_gradient_path(lr, 0.1, True, 1000, w0)
    l2 = {wd: zero_gradient_path(lr, wd, False, 2000, w0) for wd in (0.01, 0.1, 1.0)}
    same = max(float(np.max(np.abs(l2[wd] - l2[0.1]))) for wd in l2)
    return (f"AdamW (λ = 0.1): {_n(adamw[-1], 3)} after 1,000 steps; Adam + L2: "
            f"{_n(l2[0.1][999], 2)} after 1,000 and {_n(l2[0.1][-1], 2)} after 2,000 steps, for "
            f"λ = 0.01, 0.1 and 1 alike (largest difference {_n(same, 1)})")


def _largest_fails(payload: dict) -> tuple[float, float, float]:
    """(how far Adam + L2's largest decay falls below its column's best, at least, over the
    learning rates; AdamW's shortfall at the smallest and at the largest learning rate)."""
    l2 = grid_array(payload, "adam_l2")[:, :, -1]
    w = grid_array(payload, "adamw")[:, :, -1]
    gap = np.nanmax(w, 0) - w[-1]
    return float(np.min(np.nanmax(l2, 0) - l2[-1])), float(gap[0]), float(gap[-1])


def grid_claims(grid: dict) -> list[dict]:
    """The claims rows that rest on the precomputed grids of sections 1 and 3 alone."""
    rows = []
    if not all(k in grid["grids"] for k in DECOUPLING):
        return rows
    s = decoupling_summary(grid)
    per = s["per_seed"] or []
    rows.append(plots.claim(
        "AdamW generalizes substantially better than Adam + L2 (best cell of each learning-rate "
        "× decay grid)", _LH,
        f"{len(per)} seeds: best AdamW {_n(s['best']['adamw']['acc'])} vs Adam + L2 "
        f"{_n(s['best']['adam_l2']['acc'])}, {_signed(s['margin'])} (per seed "
        f"{', '.join(_signed(m) for m in per)})",
        plots.verdict(all(m > 0 for m in per) and s["margin"] >= 0.03), asserted=False,
        control="Adam + L2's best cell", window="a margin of 0.03 or more, every seed ahead",
        seeds=list(range(len(per)))))
    l2_gap, w_lo, w_hi = _largest_fails(grid)
    rows.append(plots.claim(
        "Adam + L2's largest penalty fails at every learning rate (a horizontal band); AdamW's "
        "largest decay fails more the larger η is", _LH,
        f"Adam + L2's largest λ ≥ {_n(l2_gap, 2)} below its column's best at every η; AdamW's "
        f"{_n(w_lo, 2)} below at the smallest η, {_n(w_hi, 2)} at the largest",
        plots.verdict(l2_gap > 0.1 and w_hi > w_lo + 0.05),
        control="the best decay of each column; AdamW's shortfall at the smallest η",
        window="Adam + L2: more than 0.1 at every η; AdamW: 0.05 more at the largest η",
        seeds=list(range(len(grid["grids"]["adamw"]["test_acc_seeds"])))))
    sl = {k: grid_summary(grid, k)["slope"] for k in grid["grids"]}
    seeds = list(range(len(grid["grids"]["adamw"]["test_acc_seeds"])))
    lh = {s: v + 1 for s, v in seed_slopes(grid, "adamw").items()}  # log(eta lambda) vs log eta
    l2 = seed_slopes(grid, "adam_l2")
    ok = {s: abs(lh[s]) < DECOUPLED and abs(l2[s]) >= DECOUPLED for s in seeds}
    good = sum(ok.values())
    rows.append(plots.claim(
        "with AdamW the best decay (Loshchilov & Hutter's, ηλ) does not move with the learning "
        "rate, as Adam + L2's best L2 coefficient does", _LH,
        f"slope of log(best ηλ) against log η, AdamW: {plots.spread(lh, lambda v: f'{v:+.2f}')}"
        + (f"; holds on {good} of {len(seeds)} seeds" if 0 < good < len(seeds) else ""),
        "yes" if good == len(seeds) else "no" if good == 0 else "partly", asserted=False,
        control=f"Adam + L2's best L2 coefficient, slope {plots.spread(l2, lambda v: f'{v:+.2f}')}"
                f" (must move: |slope| ≥ {DECOUPLED:g})",
        window=f"|slope| below {DECOUPLED:g} (0: decoupled, −1 or +1: moving with η); all "
               f"{len(grid['lrs'])} learning rates", seeds=seeds))
    plain = ridge_band(grid, "adamw", PLAIN_BAND)
    ridge = grid_summary(grid, "adamw")["ridge"]
    above = [d for lr, d in zip(grid["lrs"], ridge) if lr > PLAIN_BAND[1] and d is not None]
    rows.append(plots.claim(
        f"plain MLP, η from {_fmt(plain['lrs'][0], 1)} to {_fmt(plain['lrs'][-1], 1)}: AdamW's "
        "best λ (PyTorch's) hardly moves with η, on every seed, and is lower at larger η", _LH,
        f"best λ per seed moves by {', '.join(_fmt(m, 2) + '×' for m in plain['moves'])} while η "
        f"moves {_fmt(plain['lr_factor'], 2)}× (best λ ∝ 1/η would move as much); above: "
        f"{', '.join(_fmt(d, 2) for d in above)}",
        plots.verdict(all(m < 3 for m in plain["moves"]) and bool(above)
                      and max(above) < min(plain["ridge"])),
        control=f"best λ ∝ 1/η: a {_fmt(plain['lr_factor'], 2)}× move", window=f"η from "
        f"{_fmt(plain['lrs'][0], 1)} to {_fmt(plain['lrs'][-1], 1)}: moves under 3×",
        seeds=list(range(len(plain["moves"])))))
    if "adamw_invariant" in grid["grids"]:
        inv = ridge_band(grid, "adamw_invariant", INVARIANT_BAND)
        num = invariant_numbers(grid)
        rows.append(plots.claim(
            f"scale-invariant net, η from {_fmt(inv['lrs'][0], 1)} to {_fmt(inv['lrs'][-1], 1)}: "
            "the best λ falls with η (a fixed product ηλ), on every seed",
            "Efficient Hyperparameter Tuning via Trajectory Invariance Principle; " + _LH,
            f"best λ per seed falls by {', '.join(_fmt(m, 2) + '×' for m in inv['moves'])} while η "
            f"grows {_fmt(inv['lr_factor'], 2)}×; fitted slope {_slope(sl['adamw_invariant'])}; "
            f"best ηλ {num['wd_inv_prod']} up to η = {num['wd_inv_prod_lrs'].split(' to ')[-1]}",
            plots.verdict(bool(inv["moves"]) and all(m > 5 for m in inv["moves"])
                          and sl["adamw_invariant"] < -0.7 and num["prod_factor"] < 3),
            control="a best λ free of η (slope 0, no fall); the plain MLP's moves under 3×",
            window="each seed's fall over 5×, slope below −0.7, best ηλ within 3×",
            seeds=list(range(len(inv["moves"])))))
    return rows


def published_claims() -> list[dict]:
    """The claims rows of the published page that rest on ``data/`` alone: those of the
    precomputed grids (:func:`grid_claims`), as the cpu build shows them."""
    from .. import results

    grid, _ = results.load("weight_decay_grid")
    return grid_claims(grid)


__all__ = ["PLAIN_BAND", "INVARIANT_BAND", "ridge_band", "decoupling_numbers",
           "invariant_numbers", "equilibrium_numbers", "clock_numbers", "spectrum_numbers",
           "grid_claims", "published_claims", "seed_slopes", "live_slope_numbers",
           "answer_equilibrium", "answer_sgd_symmetry",
           "answer_spread", "answer_zero_gradient", "decoupling_panel", "equilibrium_panel",
           "clock_panel", "spectrum_panel", "RMS_TOL", "ANGLE_TOL", "RELAX_BAND", "DECOUPLED",
           *_claims, *_window]
