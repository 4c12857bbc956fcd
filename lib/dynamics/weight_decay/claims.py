"""The weight-decay chapter's claims on the page's live runs, judged on several seeds: each row
a statement that can fail, with its control, window and seeds printed under the measurement,
and every threshold a named constant here (the rows on the precomputed grids are
:func:`~.views.grid_claims`). :func:`claim_runs` runs the live experiments on the claims' seeds,
reusing the page's own runs for its seed."""
from __future__ import annotations

import numpy as np

from .. import plots
from .experiments import (DECOUPLING, LABELS, equilibrium_configs, live_grid_config,
                          run_clock, run_decoupling, run_equilibrium, run_spectrum)
from .science import ClockConfig, SpectrumConfig
from .window import WindowConfig, run_window, window_claims

__all__ = ["claim_seeds", "claim_runs", "claims"]

L2_FAIL = 0.1            # Adam + L2's largest lambda at least this far below its column's best
SAME_RMS = 1.3           # AdamW: largest / smallest settled RMS across matrices below this
CLOCK_SPREAD = 0.10      # equal eta * lambda: settled losses within this of each other
CLOCK_CONTRAST = 0.10    # the run at another product: its loss off by more than this
_LH = "Decoupled Weight Decay Regularization"
_EQ = "L2 Regularization versus Batch and Weight Normalization; Rotational Equilibrium"
_SPEC = "Scaling Laws and Spectra of Shallow Neural Networks in the Feature Learning Regime"


claim_seeds = plots.claim_seeds  # one home: dynamics.plots.claims


def claim_runs(profile: str | None, seeds, **page) -> dict:
    """The live experiments the claims judge, on every seed of ``seeds`` at ``profile`` scale:
    ``{"live": {seed: grid}, "equilibria": {seed: [runs]}, "clock": ..., "window": ...,
    "spectrum": ...}``.
    A result the page already ran for its seed (the first of ``seeds``) is reused."""
    runs = dict(live=lambda s: run_decoupling(live_grid_config(profile), s, bars=False),
                equilibria=lambda s: [run_equilibrium(c, s, bars=False)
                                      for c in equilibrium_configs(profile)],
                clock=lambda s: run_clock(ClockConfig.for_profile(profile), s, bars=False),
                window=lambda s: run_window(WindowConfig.for_profile(profile), s),
                spectrum=lambda s: run_spectrum(SpectrumConfig.for_profile(profile), s,
                                                bars=False))
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"claim_runs needs distinct seeds, got {seeds}")
    if set(page) - set(runs):
        raise ValueError(f"claim_runs: unknown result {sorted(set(page) - set(runs))}; "
                         f"give some of {list(runs)}")
    return {k: {s: page[k] if s == seeds[0] and k in page else run(s) for s in seeds}
            for k, run in runs.items()}


def _spectrum_checks(sp: dict):
    """One seed's section-4 run: (layer, stats without and with decay, the shape check, the
    accuracy without and with decay)."""
    (w0, r0), (w1, r1) = list(sp["runs"].items())[0], list(sp["runs"].items())[-1]
    name = "hidden.1" if "hidden.1" in r0["stats"] else next(iter(r0["stats"]), None)
    if name is None or name not in r1["stats"]:
        return None
    a, b = r0["stats"][name], r1["stats"][name]
    shrink = all(r1["stats"][n]["frobenius"] < r0["stats"][n]["frobenius"]
                 for n in r0["stats"] if n in r1["stats"])
    h = r0["history"]
    half = int(np.searchsorted(np.asarray(h.steps), h.steps[-1] / 2))
    grows = all(h[f"norm {n}"][-1] > h[f"norm {n}"][half] for n in r0["stats"])
    ok = (grows and shrink and b["spectral"] / a["spectral"] > b["frobenius"] / a["frobenius"]
          and b["stable_rank"] < a["stable_rank"] and b["effective_rank"] < a["effective_rank"]
          and b["tail_alpha"] < a["tail_alpha"])
    return name, float(w0), float(w1), a, b, ok, r0, r1


def claims(grid: dict | None = None, live=None, equilibria=None, clock=None,
           spectrum=None, window=None) -> list[dict]:
    """The chapter's claims table: ``grid`` is the precomputed payload (its rows are
    :func:`~.views.grid_claims`); ``live``, ``equilibria`` (a list of runs per seed),
    ``clock``, ``window`` (:func:`~.window.window_claims`) and ``spectrum`` are the page's
    live runs as ``{seed: result}``
    (:func:`claim_runs`); any may be left out. Rows that the prose states as facts are
    asserted; the others show their verdict, which the prose glues."""
    from .views import _equilibrium_verdict, _largest_fails, _n, grid_claims

    rows = grid_claims(grid) if grid is not None else []
    if live is not None:
        live = plots.per_seed(live, "live", "wdc.claim_runs")
        seeds = list(live)
        if all(k in g["grids"] for g in live.values() for k in DECOUPLING):
            gap = {s: _largest_fails(g)[0] for s, g in live.items()}
            text, v = plots.judged(gap, {s: x > L2_FAIL for s, x in gap.items()})
            rows.append(plots.claim(
                "Adam + L2's largest penalty fails at every learning rate (live grid)", _LH,
                f"Adam + L2's largest λ, least shortfall below its column's best over the "
                f"learning rates: {text}", v, control="the best decay of each column",
                window=f"a shortfall of more than {L2_FAIL:g} at every η", seeds=seeds))
    if equilibria is not None:
        equilibria = plots.per_seed(equilibria, "equilibria", "wdc.claim_runs")
        seeds = list(equilibria)
        first = equilibria[seeds[0]]
        for i, r0 in enumerate(first):
            runs = {s: e[i] for s, e in equilibria.items() if e[i]["layers"]}
            if len(runs) < len(seeds):
                continue
            lay = {s: list(r["layers"].values()) for s, r in runs.items()}
            worst = {s: max(max(abs(v["rms_ratio"] - 1), abs(v["angle_ratio"] - 1))
                            for v in ls) for s, ls in lay.items()}
            if r0["optimizer"] == "adamw":
                claim = "AdamW: RMS → √(η/2λ) per element; angle → √(2ηλ(1−β₁)/(1+β₁)) per step"
                given = ""
                spread = {s: max(v["rms"] for v in ls) / min(v["rms"] for v in ls)
                          for s, ls in lay.items()}
                spread0 = {s: max(v["rms0"] for v in ls) / min(v["rms0"] for v in ls)
                           for s, ls in lay.items()}
                text, v = plots.judged(spread, {s: spread[s] < SAME_RMS and spread[s] < spread0[s]
                                          for s in lay})
                rows.append(plots.claim(
                    "AdamW: the scale-invariant matrices, started at different scales, settle "
                    "at nearly the same per-element RMS", _EQ,
                    f"largest/smallest RMS of the {len(lay[seeds[0]])} matrices, last quarter: "
                    f"{text}", v, control=f"the same at initialization: {plots.spread(spread0)}",
                    window=f"below {SAME_RMS:g} and below the start's", seeds=seeds))
            else:
                claim = (f"{LABELS[r0['optimizer']]}: ‖W‖⁴ → η‖g̃‖²/(2λ(1−μ)); "
                         "angle → √(2ηλ/(1+μ)) per step")
                given = " (norm predicted from the measured ‖g̃‖)"
            verdicts = {s: _equilibrium_verdict(r) == "yes" for s, r in runs.items()}
            text, v = plots.judged({s: 100 * w for s, w in worst.items()}, verdicts,
                             lambda x: f"{x:.0f}%")
            from .views import ANGLE_TOL, RMS_TOL
            rows.append(plots.claim(
                claim, _EQ, f"largest deviation of measured from predicted RMS or angle, last "
                f"quarter, {len(lay[seeds[0]])} matrices{given}: {text}", v,
                asserted=r0["optimizer"] != "adamw", control="the predictions of the table above",
                window=f"RMS within {100 * RMS_TOL:.0f}%, angle within {100 * ANGLE_TOL:.0f}%, "
                       "every matrix", seeds=seeds))
            if r0["optimizer"] == "adamw":
                from .views import RELAX_BAND
                relax = {s: [x["relax_steps"] for x in ls] for s, ls in lay.items()}
                rel = {s: max((x or np.inf) / runs[s]["tau"] for x in xs)
                       for s, xs in relax.items()}
                text, v = plots.judged(rel, {s: all(x is not None and RELAX_BAND[0] * runs[s]["tau"]
                                              <= x <= RELAX_BAND[1] * runs[s]["tau"]
                                              for x in xs) for s, xs in relax.items()},
                                 lambda x: f"{x:.2f}τ")
                rows.append(plots.claim(
                    "the norm reaches equilibrium in about τ = 1/(ηλ) steps",
                    "Rotational Equilibrium; Power Lines",
                    f"RMS² within e⁻² of equilibrium, slowest matrix: {text}; "
                    f"τ = {r0['tau']:,.0f}", v, control="τ = 1/(ηλ)",
                    window=f"{RELAX_BAND[0]:g}τ to {RELAX_BAND[1]:g}τ, every matrix",
                    seeds=seeds))
    if clock is not None:
        clock = plots.per_seed(clock, "clock", "wdc.claim_runs")
        seeds = list(clock)
        c0 = clock[seeds[0]]
        spread = {s: 100 * c["spread"] for s, c in clock.items()}
        text, v = plots.judged(spread, {s: c["spread"] <= CLOCK_SPREAD
                                  and abs(c["ratio"] - 1) > CLOCK_CONTRAST
                                  for s, c in clock.items()}, lambda x: f"{x:.1f}%")
        rows.append(plots.claim(
            "loss curves overlap when η·λ is held fixed (trajectory invariance)",
            "Efficient Hyperparameter Tuning via Trajectory Invariance Principle",
            f"settled train loss of the 3 runs at ηλ = {_n(c0['product'], 2)}, spread: {text}",
            v, control=f"{c0['contrast']:g}× the product: "
                       f"{plots.spread({s: c['ratio'] for s, c in clock.items()}, lambda x: f'{x:.2f}×')}"
                       " their loss "
                       f"(must differ by more than {100 * CLOCK_CONTRAST:.0f}%)",
            window=f"within {100 * CLOCK_SPREAD:.0f}%, the second half of training",
            seeds=seeds))
    if window is not None:
        rows += window_claims(window)
    if spectrum is not None:
        spectrum = plots.per_seed(spectrum, "spectrum", "wdc.claim_runs")
        seeds = list(spectrum)
        checks = {s: _spectrum_checks(sp) for s, sp in spectrum.items()}
        if all(c is not None for c in checks.values()):
            name, w0, w1 = checks[seeds[0]][:3]
            ratio = {s: c[4]["tail_alpha"] / c[3]["tail_alpha"] for s, c in checks.items()}
            text, v = plots.judged(ratio, {s: c[5] for s, c in checks.items()})
            rows.append(plots.claim(
                "without decay the norms still grow in the second half of training; decay "
                "shrinks every matrix, the top singular value less than the Frobenius norm: the "
                "ranks and the tail exponent α fall", _SPEC,
                f"{name}, λ {_n(w0, 2)} → {_n(w1, 2)}: tail α with decay over without, {text}",
                v, control=f"the run without decay (λ {_n(w0, 2)})",
                window="every matrix smaller; top singular value, stable and effective rank, "
                       "α of this matrix", seeds=seeds))
            gain = {s: c[7]["test_acc"] - c[6]["test_acc"] for s, c in checks.items()}
            text, v = plots.judged(gain, {s: gain[s] > 0 and c[4]["tail_alpha"] < c[3]["tail_alpha"]
                                    for s, c in checks.items()}, lambda x: f"{x:+.3f}")
            rows.append(plots.claim(
                "power-law tails in the weight spectrum come with better generalization", _SPEC,
                f"test accuracy with decay minus without: {text}", v, asserted=False,
                control=f"the run without decay (λ {_n(w0, 2)})",
                window="a gain on every seed, with a smaller tail α", seeds=seeds))
    return rows
