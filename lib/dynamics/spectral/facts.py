"""Spectral optimizers, the page's numbers: the measures the claims rows judge (each computed once,
so that a sentence and its row read the same number) and what each section's prose glues
(``*_facts``, as the page prints them: :func:`~.figures.share`, :func:`~.figures.factor_words`,
:func:`~.roles.leads_words`). :mod:`.claims` gathers them into rows with the thresholds they name."""
from __future__ import annotations

import functools
import inspect
import math
from dataclasses import replace

import numpy as np
import torch

from .. import plots
from ..book import glue_texts
from .experiments import (CRITICAL_SHARE, DECAYED, EARLY_STEP, Band, Memory, MemoryBatch, Practice, PracticeFile,
                          Roles, Shaping, ShapingRate, Timing, Width, critical_batch, early_and_late, growth,
                          loss_at_step, practice_summary, practice_sweeps, rank_bins, rates_reaching, reference_loss,
                          run_shaped, shaping_order, shaping_runs, shaping_summary)
from .figures import SHORT, factor_words, power_of_ten, scale_words, share, timing_rows
from .roles import leads_words, noise_floor, per_second, steepest_margin
from .science import (CUBIC_COEFFS, MUON_COEFFS, ShapingConfig, SpectralShaping, default_data, memory_task, ns_band,
                      one_step, polar, random_matrix, recovered, singular_value_band)

__all__ = ["band_numbers", "practice_numbers", "fraction_at", "batch_numbers", "batch_facts", "alpha_numbers",
           "alpha_exact", "width_facts", "ns_facts", "band_facts", "shaping_cutoff", "practice_facts", "memory_facts", "least_ahead", "far_words",
           "alpha_shortfall", "shaping_facts", "live_repeat", "step_schedule_facts"]

# Section 4's thresholds the prose glues (:mod:`.claims` tests them), each named once
CRITICAL_OVER = 4  # "a critical batch at least 4× SGD's"
OVERSHOOT = 1.3    # "its best batch stores at least 1.3× the pairs of the full gradient"
AS_MANY, AS_NEWTON_SHARE = 0.02, 0.8  # "as many": within 0.02 of the pairs; at N = 4d: at least 0.8 of Newton's


def band_numbers(seeds, rows: int = 256, cols: int = 128, steps: int = 5) -> dict:
    """Per seed, the least and largest σ of section 2's Gaussian matrix after ``steps`` quintic
    Newton–Schulz steps (``quintic``), after as many steps of the cubic (``cubic``, the band
    row's control) and of its exact U Vᵀ (``exact``, shown beside them)."""
    out = {}
    for s in seeds:
        G = random_matrix(rows, cols, "gaussian", seed=int(s))
        band, exact = singular_value_band(G, steps), torch.linalg.svdvals(polar(G).double())
        cubic = singular_value_band(G, steps, CUBIC_COEFFS)
        out[int(s)] = dict(quintic=(band["lo"][steps], band["hi"][steps]),
                           cubic=(cubic["lo"][steps], cubic["hi"][steps]),
                           exact=(float(exact.min()), float(exact.max())))
    return out


def practice_numbers(practice: Practice) -> dict:
    """Section 3's measures from :func:`~.experiments.run_practice`: steps to the target per
    optimizer, AdamW's steps over Muon's, and the float32 teaching Muon's steps over torch's."""
    st = {k: v["steps"] for k, v in practice_summary(practice).items()}
    mu, ad, fp = st.get("muon"), st.get("adamw"), st.get("muon_fp32")
    return dict(steps=st, adamw_over_muon=ad / mu if mu and ad else None,
                fp32_over_torch=fp / mu if mu and fp else None)


def _nearest(memory: Memory, ratio: float) -> int:  # the index of the N/d nearest to ratio
    return int(np.argmin([abs(x - ratio) for x in memory.ratios]))


def fraction_at(memory: Memory, method: str, ratio: float) -> float:
    """The fraction of pairs ``method`` stores at the memory's N/d nearest to ``ratio``."""
    return memory.fraction[method][_nearest(memory, ratio)]


def _rel(a: float, b: float) -> float:  # |a − b| as a share of the larger (0 when both are 0)
    return abs(a - b) / max(a, b) if max(a, b) > 0 else 0.0


def batch_numbers(batch: MemoryBatch) -> dict:
    """Section 4's measures on one batch curve (one draw, or the mean): ``critical`` batches;
    ``overshoot``, the best recall over the full gradient's, at ``peak_batch``; ``tie_rel``, the
    largest |Muon − SGD| over the larger below SGD's critical batch (``full_rel``, the full gradient's);
    ``ahead``, the least Muon / SGD from Muon's critical batch on, ``again_ahead`` the same with SGD
    on a second, independent stream of batches in Muon's place; ``control``, that stream's critical
    batch. None where there is none."""
    rec, full, sizes = batch.recall, batch.full, batch.batch_sizes
    cb = {m: critical_batch(batch, m) for m in rec}
    again = batch.again
    if again is None and batch.again_by_draw:
        again = np.mean(batch.again_by_draw, axis=0).tolist()
    best = {m: int(np.argmax(v)) for m, v in rec.items()}
    below = [i for i, b in enumerate(sizes) if cb["sgd"] is not None and b < cb["sgd"]]
    past = [i for i, b in enumerate(sizes) if cb["muon"] is not None and b >= cb["muon"]]
    ratio = [m / max(s, 1e-9) for m, s in zip(rec["muon"], rec["sgd"])]
    return dict(critical=cb, control=None if again is None else critical_batch(batch, "sgd", recall=again),
                overshoot={m: max(v) / max(full[m], 1e-9) for m, v in rec.items()},
                peak_batch={m: sizes[i] for m, i in best.items()}, peak={m: rec[m][i] for m, i in best.items()},
                tie_rel=max((_rel(rec["muon"][i], rec["sgd"][i]) for i in below), default=None),
                full_rel=_rel(full["muon"], full["sgd"]),
                ahead=min((ratio[i] for i in past), default=None),
                again_ahead=None if again is None else min((again[i] / max(rec["sgd"][i], 1e-9) for i in past),
                                                           default=None))


def batch_facts(batch: MemoryBatch) -> dict:
    """:func:`batch_numbers` on the mean curve (``mean``) and on each draw (``by_draw``, keyed by
    seed, its control curve in ``again``: the rows judge every draw)."""
    draw = lambda k: replace(batch, recall={m: v[k] for m, v in batch.by_draw.items()},  # noqa: E731
                             full={m: v[k] for m, v in batch.full_by_draw.items()},
                             again=batch.again_by_draw[k] if batch.again_by_draw else None)
    return dict(mean=batch_numbers(batch),
                by_draw={int(s): batch_numbers(draw(k)) for k, s in enumerate(batch.draws)})


def alpha_numbers(by_alpha: dict[str, Memory]) -> dict:
    """The precomputed memory over α (``MemoryFile.by_alpha``), at N = d: each method's fraction per α."""
    return {float(a): {m: fraction_at(r, m, 1) for m in r.fraction} for a, r in by_alpha.items()}


def alpha_exact(by_alpha: dict[str, Memory], ratio: float = 1) -> dict:
    """The exact-UVᵀ control the memory file over α lacks: per draw (seed) and α, the fraction of
    the same pairs one exact U Vᵀ step stores at N ≈ ``ratio``·d (a few d×d SVDs: cheap)."""
    out = {}
    for a, r in by_alpha.items():
        n = r.n[_nearest(r, ratio)]
        for s in r.draws:
            keys, values, freq = memory_task(n, r.dim, float(r.alpha), int(s))
            ok = recovered(one_step("polar", keys, values, freq), keys, values)
            out.setdefault(int(s), {})[float(a)] = float(ok.double().mean())
    return out


def width_facts(width: Width) -> dict:
    """Section 1: how Muon's step changes from the narrowest width to the widest, in words, and
    the least and largest RMS→RMS norm of its step per unit lr over the widths (the dotted line)."""
    norm = width.norm["muon"]
    return dict(muon_growth=factor_words(growth(width, "muon"), of="its value at the narrowest width"),
                **glue_texts(3, muon_norm_lo=min(norm), muon_norm_hi=max(norm)))


def band_facts(bands) -> dict:
    """Section 2's matrix (:func:`~.experiments.run_bands`): the quintic's largest σ at step 3, its
    least σ from step 3 on, and its largest from step 4 on (``top_after``: one value "at every step"
    where every step prints the same at 4 digits, else the range), and the range the claims rows
    test against (``test_band``, :data:`BAND`, looser than the polynomial's band)."""
    q = bands.quintic
    lo, hi = (plots.number(f(q.hi[4:]), 4) for f in (min, max))
    return dict(glue_texts(4, top_3=q.hi[3], low_3=min(q.lo[3:])), test_band=f"[{BAND[0]:g}, {BAND[1]:g}]",
                top_after=f"{hi} at every step from four on" if lo == hi else f"{lo} to {hi} from step four on")


def ns_facts(timing: Timing) -> dict:
    """Section 2: the band five quintic steps leave every σ in [1.5e-3, 1] in (the
    polynomial's, :func:`ns_band`), and the ranges of the precomputed ``timing`` table."""
    nsb, rows = ns_band(), timing_rows(timing.rows)
    ratio, err, sig = ([r[k] for r in rows] for k in ("SVD / NS₅", "error vs UVᵀ", "max |σ − 1|"))
    small = min(rows, key=lambda r: r["n"])
    most, least = (f(rows, key=lambda r: r["SVD / NS₅"]) for f in (max, min))
    slower = sum(v > 1 for v in ratio)
    from .claims import NOT_TWICE  # the row's own measure and test (claims imports this module)

    over = [r.n for r in timing.rows if not NOT_TWICE.test.passes(NOT_TWICE.measure(r))]
    load, sizes = max(NOT_TWICE.noise(r) for r in timing.rows), [str(n) for n in over]
    return dict(glue_texts(3, f5_at_1=nsb["at_1"]),  # the band as band_top and low_3 print it
                **glue_texts(4, band_lo=nsb["min"], band_hi=nsb["max"]),
                band_from=power_of_ten(nsb["lo"]), band_top=plots.number(nsb["max"], 4),
                n_most=str(most["n"]), ratio_most=f"{most['SVD / NS₅']:.3f}×",
                n_least=str(least["n"]), ratio_least=f"{least['SVD / NS₅']:.3f}×",
                slower_where=("at every size" if slower == len(ratio) else "at most sizes"
                              if slower > len(ratio) / 2 else "at some sizes" if slower else
                              "at no size"),
                ratio_min=f"{min(ratio):.3f}×", ratio_max=f"{max(ratio):.3f}×", n_small=str(small["n"]),
                ratio_small=f"{small['SVD / NS₅']:.3f}×", err_lo=f"{min(err):.0%}", err_hi=f"{max(err):.0%}",
                sigma_lo=f"{min(sig):.2f}", sigma_hi=f"{max(sig):.2f}",
                twice_holds=("it holds at every size" if not over else "it holds at no size"
                             if len(over) == len(rows) else
                             f"it holds at {len(rows) - len(over)} of the {len(rows)} sizes, not at "
                             f"n = {', '.join(sizes[:-1]) + ' and ' if len(sizes) > 1 else ''}"
                             f"{sizes[-1]}"),
                load_log10=plots.number(load, 2))  # as the row prints its noise floor


def shaping_cutoff(ps=(-0.25, -0.5)) -> dict:
    """Section 5's cutoff: the runs' optimizer (:class:`~.science.SpectralShaping`, built with its
    default ``rel_eps``) drops directions below ``rel_eps`` × σ_max (``cut_eps``), so for p < 0 the
    weakest direction kept gets up to ``rel_eps`` ** p times the strongest's weight (``cut_25``,
    ``cut_50``: at the ``ps``)."""
    eps = inspect.signature(SpectralShaping).parameters["rel_eps"].default
    return dict(cut_eps=power_of_ten(eps), **{f"cut_{round(-100 * p)}": f"{eps ** p:.3g}" for p in ps})


def practice_facts(practice: Practice, cost: dict, swept: PracticeFile, roles: Roles,
                   stored_config: dict | None = None) -> dict:
    """Section 3: the run's size and steps to the target, a step's seconds and per second against
    both of AdamW's timings ("ahead" or "behind" only beyond the noise floor: wall-clock, never
    asserted), the sweep file's rates that reach the target and how its size (``stored_config``)
    compares, each norm's own map's margin (``roles``)."""
    cfg, pn = practice.config, practice_numbers(practice)
    steps, floor = pn["steps"], noise_floor(cost)
    timings = (cost["median"], dict(cost["median"], adamw=cost["median"]["adamw_again"]))  # AdamW's two
    ps, fp = ([per_second(steps, m, opt) for m in timings] for opt in ("muon", "muon_fp32"))
    ms = {k: f"{1e3 * v:.2f} ms" for k, v in cost["median"].items()}

    def costs(r):  # a step's time over AdamW's, against both of its timings
        lo, hi = sorted(x["cost"] for x in r)
        return f"{lo:.2f}× to {hi:.2f}×"
    reach = rates_reaching(practice_sweeps(swept), swept.target)
    live = cfg.to_dict() if hasattr(cfg, "to_dict") else dict(cfg)
    stored = {**live, **(stored_config or {})}
    size = lambda v: len(v) if isinstance(v, (list, tuple)) else v  # noqa: E731 (a grid's, or a number)
    return dict(glue_texts(3, p_width=cfg.width, p_batch=cfg.batch_size, p_depth=cfg.depth,
                           cost_reps=cost["reps"], cost_block=cost["block"]),
                **glue_texts(2, adamw_over_muon=pn["adamw_over_muon"], fp32_over_torch=pn["fp32_over_torch"],
                             roles_margin=min(steepest_margin(r) for r in roles.by_seed.values())),
                **{f"steps_{k}": plots.number(steps.get(k), missing="never reached")
                   for k in ("adamw", "momentum")},
                ms_muon=ms["muon"], ms_fp32=ms["muon_fp32"], ms_adamw=ms["adamw"],
                ms_adamw_again=ms["adamw_again"], noise_floor=f"{floor:.2f}×",
                cost_muon=costs(ps), cost_fp32=costs(fp),
                per_second_muon=leads_words([x["per_second"] for x in ps], floor),
                per_second_fp32=leads_words([x["per_second"] for x in fp], floor),
                reach=", ".join(f"{SHORT.get(k, k)} at {a} of its {n}" for k, (a, n) in reach.items()),
                sweep_scale=scale_words(
                    {"steps": (live["steps"], stored["steps"]),
                     "rates": tuple(sum(size(c[k]) for k in ("muon_lrs", "adamw_lrs", "momentum_lrs"))
                                    for c in (live, stored))}))


def memory_facts(memory: Memory, batch: MemoryBatch, by_alpha: dict[str, Memory]) -> dict:
    """Section 4 and exercise 5: the fractions stored at N = d and 4d (``memory``), the memory
    file over α at N = d (``by_alpha``), and at the batch figure's N (``batch``) the pairs each
    method stores beside the distinct pairs a batch of B draws holds, Σᵢ 1 − (1 − pᵢ)ᴮ."""
    f, af, any_a = memory.fraction, alpha_numbers(by_alpha), next(iter(by_alpha.values()))
    alphas = sorted(af)
    first, last = af[alphas[0]], af[alphas[-1]]
    n = batch.n
    p = memory_task(n, batch.dim, batch.alpha, batch.seed)[2].double()
    distinct = ", ".join(f"{float((1 - (1 - p) ** b).sum()):.0f} at B = {b}"
                         for b in batch.batch_sizes if b <= 1024)
    bn = batch_facts(batch)["mean"]
    from .claims import AHEAD  # the row's bar (claims imports this module)

    return dict(alpha_scale=scale_words({"dimensions d": (memory.dim, any_a.dim),
                                         "draws": (len(memory.draws), len(any_a.draws))},
                                        same="the same d and draws as the run above"),
                as_newton_share=f"{AS_NEWTON_SHARE:.0%}", as_many=f"{AS_MANY:g}",
                **glue_texts(2, muon_sgd=fraction_at(memory, "muon", 4) / max(fraction_at(memory, "sgd", 4), 1e-9),
                             muon_newton=min((f["muon"][j] / f["newton"][j] for j, r in enumerate(memory.ratios)
                                              if r > 1 and f["newton"][j] > 0), default=None),
                             bc_n=n, bc_sgd_peak_b=bn["peak_batch"]["sgd"], bc_sgd_over=bn["overshoot"]["sgd"],
                             bc_ahead=bn["ahead"], bc_sgd=batch.full["sgd"] * n, bc_muon=batch.full["muon"] * n,
                             bc_crit_sgd=critical_batch(batch, "sgd"), bc_crit_muon=critical_batch(batch, "muon"),
                             bc_distinct=distinct),
                sgd_d=share(fraction_at(memory, "sgd", 1)), muon_d=share(fraction_at(memory, "muon", 1)),
                bc_sgd_peak=share(bn["peak"]["sgd"]), bc_sgd_full=share(batch.full["sgd"]),
                bc_muon_over=f"{bn['overshoot']['muon']:.2f}", bc_overshoot_min=f"{OVERSHOOT:g}×",
                bc_crit_over=f"{CRITICAL_OVER:g}×",
                sgd_first=f"{first['sgd']:.0%}", alpha_first=f"{alphas[0]:g}",
                sgd_last=f"{last['sgd']:.0%}", alpha_last=f"{alphas[-1]:g}",
                muon_last=f"{last['muon']:.0%}", newton_last=f"{last['newton']:.0%}",
                exact_last=f"{np.mean([d[alphas[-1]] for d in alpha_exact(by_alpha).values()]):.0%}",
                muon_mid=f"{af[alphas[-2]]['muon']:.0%}", alpha_mid=f"{alphas[-2]:g}",
                bc_share=f"{CRITICAL_SHARE:.0%}", bc_ahead_bar=f"{AHEAD:g}",
                bc_ahead_least=least_ahead(batch), muon_vs_newton_far=far_words(memory), **alpha_shortfall(by_alpha))


def least_ahead(batch: MemoryBatch) -> str:
    """The least over the draws of Muon / SGD from Muon's critical batch on (:func:`batch_numbers`'
    ``ahead``, the batch row's measure), as the prose prints it; "none": no draw has one."""
    ahead = [d["ahead"] for d in batch_facts(batch)["by_draw"].values() if d["ahead"] is not None]
    return plots.number(min(ahead, default=None), 2, missing="none")


def far_words(memory: Memory, ratio: float = 8) -> str:
    """Muon's share of the pairs against Newton's at the largest N (at least ``ratio``·d: the page
    reads N = 8d on; a run that stops short of it raises), in words: "more than", "fewer than"."""
    j = int(np.argmax(memory.ratios))
    if memory.ratios[j] < ratio:
        raise ValueError(f"far_words: the run's largest N is {memory.ratios[j]:g}d, short of {ratio:g}d")
    m, n = (memory.fraction[k][j] for k in ("muon", "newton"))
    return "more than" if m > n else "fewer than" if m < n else "as many as"


def alpha_shortfall(by_alpha: dict[str, Memory], ratio: float = 4) -> dict:
    """The memory file past N = d, at N ≈ ``ratio``·d: whether NS₅'s shortfall (its share over
    Newton's) grows with α as at N = d, the clause in words (``short_clause``); NS₅'s and Newton's
    shares at two neighbouring α (``short_a`` < ``short_b``: the first pair where the shallower
    falls further short, else the two shallowest) and whether it does (``short_word``)."""
    alphas = sorted(by_alpha, key=float)
    at = {k: {m: fraction_at(by_alpha[k], m, ratio) for m in ("muon", "newton")} for k in alphas}
    rel = [at[k]["muon"] / max(at[k]["newton"], 1e-9) for k in alphas]
    bad = [i for i in range(len(alphas) - 1) if rel[i] < rel[i + 1]]  # a shallower α further short
    a, b = alphas[bad[0]:bad[0] + 2] if bad else alphas[:2]
    return dict(short_clause="Past N = d NS₅'s shortfall " + ("is not ordered by α" if bad else "still grows with α"),
                short_a=f"{float(a):g}", short_b=f"{float(b):g}",
                **{f"short_{m}_{w}": f"{at[k][m]:.0%}" for m in ("muon", "newton") for w, k in (("a", a), ("b", b))},
                short_word="further short of" if bad else "no further short of")


def _final(h):  # a run's final loss (None: diverged)
    return None if h.diverged else reference_loss(h)


def _n3(loss) -> str:  # a final loss as the prose prints it
    return "diverged" if loss is None else f"{loss:.3f}"


ORDER_MARGIN = 0.1  # exercise 6: two final losses closer than this (relative) are level


def step_schedule_facts(shaping: Shaping, step_run) -> dict:
    """Exercise 6: the final loss of ``step_run`` (a ``History``) beside this page's shaping runs
    at the same rate and seed (the linear schedule, each fixed p), and where it ends, in words."""
    fin = {k: _final(h) for k, h in shaping.runs.items()}
    mine, lin = _final(step_run), fin[shaping.schedule]
    fixed = sorted((k for k in fin if k.startswith("p = ") and fin[k] is not None), key=lambda k: fin[k])

    # ordered only beyond ORDER_MARGIN: the last evaluations of one run swing by more than a
    # few per cent (a 2% difference is a tie, not an order)
    def place(b):  # where step_run ends against the final loss b
        if mine is None or b is None:
            return "above"
        return "level with" if abs(mine - b) <= ORDER_MARGIN * b else "below" if mine < b else "above"
    below, level = ([k for k in fixed if place(fin[k]) == where] for where in ("below", "level with"))
    vs, text = place(lin), ", ".join(below) if below else "none of them"
    if level:
        text += f" by more than {ORDER_MARGIN:.0%}, and is level (within {ORDER_MARGIN:.0%}) with " + ", ".join(level)
    return dict(step_final=_n3(mine), step_linear=_n3(lin), step_fixed=", ".join(f"{k} {_n3(fin[k])}" for k in fixed),
                step_vs_linear=vs, step_below=text)


PLATEAU_FALL = 0.2   # plateau_start: the rest of the run never this share below the least loss by then ...
PLATEAU_SPAN = 0.25  # ... over at least this share of the run's steps ...
PLATEAU_SMOOTH = 3   # (the rest read off the loss averaged over this many evaluations, so that one low
#                      evaluation in a flat, noisy stretch does not count as a fall)
PLATEAU_PART = 0.25  # ... with no trend: its first and last this share compared (:func:`_no_trend`)


def _wobble(loss) -> float:
    """One evaluation's own noise: the standard deviation of a loss's steps from one evaluation
    to the next over √2 (a steady trend shifts every step alike and adds little)."""
    d = np.diff(np.asarray(loss, dtype=float))
    return float(np.std(d) / math.sqrt(2)) if len(d) > 1 else 0.0


def _no_trend(rest, part: float = PLATEAU_PART) -> bool:
    """Whether a stretch of a loss curve has stopped falling: the mean of its last ``part`` (k
    evaluations) is not below its first ``part``'s by more than :func:`_wobble` × √(2/k)."""
    rest = np.asarray(rest, dtype=float)
    k = max(1, int(round(part * len(rest))))
    return float(rest[:k].mean() - rest[-k:].mean()) <= _wobble(rest) * math.sqrt(2 / k)


def plateau_start(steps, loss, fall: float = PLATEAU_FALL, span: float = PLATEAU_SPAN):
    """Where a training loss stops falling: the first evaluated step after which the rest of
    the run never gets more than ``fall`` (a share) below the least loss reached by then (the
    rest read off the loss averaged over :data:`PLATEAU_SMOOTH` evaluations), and
    shows no trend (:func:`_no_trend`: a slow, steady fall is not a plateau), provided that
    rest covers at least ``span`` of the run's steps; None for a loss still falling (a plateau
    shorter than ``span`` at the end is a slowing fall, not a plateau)."""
    steps, loss = list(steps), np.asarray(loss, dtype=float)
    if len(steps) != len(loss) or len(loss) < 2:
        raise ValueError(f"plateau_start needs as many steps as losses, at least two; got "
                         f"{len(steps)} and {len(loss)}")
    w = min(PLATEAU_SMOOTH, len(loss))
    level = np.array([loss[max(0, i - w + 1):i + 1].mean() for i in range(len(loss))])
    best = np.minimum.accumulate(loss)
    rest = np.minimum.accumulate(level[::-1])[::-1]
    total = steps[-1] - steps[0]
    for i in range(len(loss) - 1):
        if steps[-1] - steps[i] < span * total:
            return None
        if rest[i + 1] >= (1 - fall) * best[i] and _no_trend(loss[i:]):
            return steps[i]
    return None


def plateau_words(history) -> str:
    """A run's plateau as the prose says it (:func:`plateau_start` on its training loss)."""
    loss, steps = list(history["train_loss"]), list(history.steps)
    at = plateau_start(steps, loss)
    if at is None:
        return "keeps falling to the end of the run"
    after = loss[steps.index(at):]
    return (f"stops falling after step {at}: from there to the end it stays between "
            f"{min(after):.3f} and {max(after):.3f}")


def shaping_facts(shaping: Shaping, by_lr: dict[str, ShapingRate] | None = None,
                  step_schedule: tuple[float, float] | None = None) -> dict:
    """Section 5: this run's order early and late and whether its schedule ends below Muon
    (``shaping``), and the file's (``by_lr``) final losses, best rates and plateaus. Given
    ``step_schedule`` = (first p, then p), exercise 6's numbers (:func:`step_schedule_facts`) on
    its run: the first p for the first third of training, then the second, at the page's profile
    and seed (the shaping runs' config and data)."""
    if step_schedule is not None:
        (first, then), cfg = step_schedule, ShapingConfig.for_profile(None)
        step = run_shaped(cfg, default_data(), lambda t: first if t < cfg.steps / 3 else then, bars=False)
        return step_schedule_facts(shaping, step)
    if by_lr is None:
        raise ValueError("shaping_facts needs by_lr (the slider's file) or step_schedule (exercise 6)")
    el, runs, hist = early_and_late(shaping), shaping.runs, _histories(by_lr)
    o = shaping_order(el["early"], el["late"], reference_loss(runs[shaping.schedule]), el["late"][0.0])
    sf = {float(lr): {row["update"]: row["final_loss"] for row in shaping_summary(r)} for lr, r in hist.items()}
    low = sf[min(sf)]
    best = {run: min(sf, key=lambda lr: sf[lr][run]) for run in ("p = 0", "p = -0.5")}
    fin = {k: _final(h) for k, h in runs.items()}
    sched_fin, dec = fin[shaping.schedule], fin.get(DECAYED)
    ends = lambda below: "ends below" if below else "does not end below"  # noqa: E731
    decay = {} if dec is None else dict(decay_final=f"{dec:.3f}",
                                        decay_vs_sched=ends(sched_fin is not None and dec < sched_fin))
    return dict(sched_final=_n3(sched_fin), muon_final=_n3(fin["p = 0"]), **decay, **shaping_cutoff(),
                live_repeat=live_repeat(shaping, hist), p_end=f"{_end_p(runs):g}",
                sched_vs_end=_vs_end(sched_fin, fin.get(f"p = {_end_p(runs):g}")),
                sched_end=ends(o["schedule"]), lr_low=f"{min(sf):g}",
                sched_low=f"{next(v for k, v in low.items() if not k.startswith('p = ')):.3f}",
                muon_best_lr=f"{best['p = 0']:g}", muon_best=_n3(sf[best["p = 0"]]["p = 0"]),
                neg_best_lr=f"{best['p = -0.5']:g}", neg_best=_n3(sf[best["p = -0.5"]]["p = -0.5"]),
                best_ratio=f"{sf[best['p = 0']]['p = 0'] / sf[best['p = -0.5']]['p = -0.5']:.1f}",
                muon_at_edge=_EDGE[best["p = 0"] == min(sf), best["p = -0.5"] == min(sf)],
                neg_low=f"{low.get('p = -0.5', float('nan')):.3f}", low_worst=_low_worst(by_lr),
                **{f"{k}_plateau": plateau_words(runs[run]) for k, run in
                   (("muon", "p = 0"), ("neg", "p = -0.5"), ("sched", shaping.schedule))},
                **early_order_facts(hist),
                lr_live=f"{shaping.lr:g}", muon_plateaus="; ".join(
                    f"at lr {float(lr):g} it " + plateau_words(r.runs["p = 0"])
                    for lr, r in sorted(hist.items(), key=lambda kv: float(kv[0]))))


REPEAT_TOL = 1e-3  # live_repeat: Muon's loss at its first step after 0 this close (relative): the same seed


def live_repeat(shaping: Shaping, hist: dict[str, ShapingRate]) -> str:
    """Whether the live run repeats the slider's middle run: its rate, the steps it evaluates at,
    the runs it trains, and Muon's loss at the first evaluation after step 0 (within REPEAT_TOL:
    the seed; at step 0 every seed's loss sits near ln 10), and what follows from it, in words."""
    mid, p0 = hist[sorted(hist, key=float)[len(hist) // 2]], shaping.runs["p = 0"]
    m0, steps = mid.runs["p = 0"], list(p0.steps)
    i = next((i for i, st in enumerate(steps) if st > 0), None)
    same = (math.isclose(float(shaping.lr), float(mid.lr)) and set(shaping.runs) - {DECAYED} == set(mid.runs)
            and steps == list(m0.steps) and i is not None
            and math.isclose(p0["train_loss"][i], m0["train_loss"][i], rel_tol=REPEAT_TOL))
    if not same:
        return (f"is not the slider's middle run (lr {float(mid.lr):g}): its rate, its steps, its runs or "
                "Muon's loss after its first steps (its seed) differ")
    return (f"repeats the slider's middle run (lr {float(mid.lr):g}, its first seed: Muon's loss at step "
            f"{steps[i]} is {p0['train_loss'][i]:.4f} here, {m0['train_loss'][i]:.4f} in the file); two "
            "trainings of one configuration part at float rounding, so its curves follow the file's early "
            "and drift apart later")


def _vs_end(sched: float | None, end: float | None) -> str:
    """The schedule's final loss against its end value's, held fixed, in words."""
    if sched is None or end is None:
        return "cannot be compared with that run (one diverged)"
    return f"ends {end / sched:.2f}× below that run" if sched < end else "does not end below that run"


def _low_worst(by_lr: dict[str, ShapingRate]) -> str:
    """At the file's lowest rate, the largest over the seeds of p = -0.5's final loss over the
    schedule's (the run named without "p = "), and on which seed: "1.20× on seed 1"."""
    low = by_lr[min(by_lr, key=float)].by_seed or {}
    ratio = {s: runs["p = -0.5"]["final"] / _sched(runs) for s, runs in low.items() if "p = -0.5" in runs}
    if not ratio:
        return "—"
    s = max(ratio, key=ratio.get)
    return f"{ratio[s]:.2f}× on seed {s}"


def first_below(runs: dict, run: str, others, after: int = 0):
    """The first evaluated step after ``after`` at which ``run``'s training loss is below every
    run in ``others`` (``runs``: name → ``History``, evaluated at the same steps); None: never."""
    h = runs[run]
    for i, st in enumerate(h.steps):
        if st > after and all(h["train_loss"][i] < runs[o]["train_loss"][i] for o in others):
            return int(st)
    return None


def early_order_facts(hist: dict[str, ShapingRate]) -> dict:
    """How long the early order lasts in the shaping file's first seed: at the middle rate, the
    step at which Muon gets below both positive p after :data:`EARLY_STEP`; at the top rate,
    whether the order holds at :data:`EARLY_STEP` and when p = −0.25 first gets below Muon."""
    rates = {float(lr): r for lr, r in hist.items()}
    lrs = sorted(rates)
    mid, top = rates[lrs[len(lrs) // 2]].runs, rates[lrs[-1]].runs
    el = early_and_late(rates[lrs[-1]])
    step = lambda s: "never" if s is None else str(s)  # noqa: E731
    return glue_texts(3, early_step=EARLY_STEP, early_lr=lrs[len(lrs) // 2], top_lr=lrs[-1],
                      muon_below_pos=step(first_below(mid, "p = 0", ("p = 0.5", "p = 1"), after=EARLY_STEP)),
                      neg_below_muon=step(first_below(top, "p = -0.25", ("p = 0",)))) | dict(
        early_top="holds" if shaping_order(el["early"], el["late"], None, None)["early"] else "already fails")


def _histories(by_lr: dict[str, ShapingRate]) -> dict[str, ShapingRate]:
    """The shaping file's rates with their first seed's runs as ``History`` objects (once)."""
    first = next(iter(by_lr.values())).runs
    return shaping_runs(by_lr) if isinstance(next(iter(first.values())), dict) else by_lr


_EDGE = {  # where Muon's best rate, and p = -0.5's, sit on the grid (at its lowest, a best may lie lower)
    (True, True): "the lowest rate of the grid, and so is p = −0.5's: either best may lie lower still, so "
                  "this compares the two at the grid's edge",
    (True, False): "the lowest rate of the grid, so its best may lie lower still",
    (False, True): "inside the grid, but p = −0.5's is the grid's lowest rate: its best may lie lower "
                   "still",
    (False, False): "inside the grid, and so is p = −0.5's"}


# ================================================================ the rows' measures (:mod:`.claims`)


BAND = (0.6, 1.25)  # the band row: after five steps every singular value inside this range ...
CONVERGED = (0.9, 0.99)  # the cubic has converged: smallest σ at least 0.9, largest at least 0.99


def _settles(b: Band) -> float:
    """The quintic's part on one band (:func:`~.experiments.run_bands`): below BAND at step 2,
    inside it from step 3 on (the least margin; positive: it holds)."""
    return min(BAND[0] - b.lo[2], *(min(lo - BAND[0], BAND[1] - hi) for lo, hi in zip(b.lo[3:], b.hi[3:])))


def _converges(b: Band) -> float:
    """The cubic's part on one band: below BAND at step 5, converged (CONVERGED) at the last step."""
    return min(BAND[0] - b.lo[5], b.lo[-1] - CONVERGED[0], b.hi[-1] - CONVERGED[1])


TIMING_SEED = 0  # the seed the timing file's matrices were drawn at (tests/spectral: it reproduces the file)


@functools.lru_cache(maxsize=16)
def _gaussian_spectrum(n: int, seed: int) -> torch.Tensor:
    """The σ (float64) of the n×n Gaussian matrix the timing draws at ``seed``, over its norm."""
    G = torch.randn(n, n, generator=torch.Generator().manual_seed(int(seed)))
    s = torch.linalg.svdvals(G.double())
    return s / s.norm()


def ns_distance(n: int, seed: int, steps: int, coeffs=MUON_COEFFS) -> dict:
    """How far ``steps`` Newton–Schulz iterations (``coeffs``) leave the timing file's n×n
    Gaussian matrix of ``seed`` from its U Vᵀ: the relative Frobenius error (``rel``) and the
    largest |σ − 1| (``max_sigma``). Newton–Schulz maps U Σ Vᵀ to U f(Σ) Vᵀ, so both are read
    off the singular values, each pushed through the polynomial in float64: the same numbers
    the file's float32 matrix products give (to rounding), at the cost of one SVD."""
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"ns_distance: steps must be an integer >= 0, got {steps!r}")
    a, b, c = (float(v) for v in coeffs)
    x = _gaussian_spectrum(int(n), int(seed))
    for _ in range(steps):
        x = a * x + b * x ** 3 + c * x ** 5
    return dict(rel=float((x - 1).norm() / math.sqrt(len(x))), max_sigma=float((x - 1).abs().max()))


def _torch_moves(seed: int, steps: int = 5, shapes=((96, 32), (32, 96), (64, 64))) -> float:
    """How far torch.optim.Muon moves the parameters in :func:`~.experiments.muon_agreement`'s
    run (same seed, shapes, gradients and settings): the gap to a Muon that does not step."""
    g = torch.Generator().manual_seed(int(seed))
    ps = [torch.nn.Parameter(torch.randn(*s, generator=g)) for s in shapes]
    start = [p.detach().clone() for p in ps]
    opt = torch.optim.Muon(ps, lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True)
    for _ in range(steps):
        for p in ps:
            p.grad = torch.randn(p.shape, generator=g)
        opt.step()
    return max(float((p - q).detach().abs().max()) for p, q in zip(ps, start))


def _half_ranks(memory: Memory, ratio: float = 4, alpha: float | None = None) -> dict:
    """Per draw of a :func:`~.experiments.run_memory`, its step made again at N = ``ratio``·d (at
    ``alpha``: the same draws, another power law): per method the centre of the first rank bin
    it stores under half of (as :func:`~.experiments.recall_half_rank`; inf: none), and ``frac``."""
    j = _nearest(memory, ratio)
    n, edges, out = memory.n[j], rank_bins(memory.n[j]), {}
    a = memory.alpha if alpha is None else alpha
    for s in memory.draws:
        keys, values, freq = memory_task(n, memory.dim, a, int(s))
        d = out.setdefault(int(s), {"frac": {}})
        for m in ("sgd", "muon"):
            h = recovered(one_step(m, keys, values, freq), keys, values).double().cpu().numpy()
            d["frac"][m] = float(h.mean())
            d[m] = next((c for c, a0, b in zip(memory.rank_centers[j], edges[:-1], edges[1:])
                         if h[a0 - 1:b - 1].mean() < 0.5), math.inf)
    return out


def _tail_wobble(loss, part: float = 0.5) -> float:
    """The live shaping rows' noise: :func:`_wobble` over the last ``part`` of a run's evaluations
    over their mean (the early fall, a trend, does not count; the share applies early too)."""
    tail = np.asarray(loss, dtype=float)[-max(2, int(round(part * len(loss)))):]
    return _wobble(tail) / float(np.mean(tail))


def _live_shaping(shaping: Shaping) -> dict:
    """One :func:`~.experiments.run_shaping` as the file keeps each seed's runs: per run its loss
    at :data:`EARLY_STEP`, its final loss (inf: diverged), ``wobble`` (:func:`_tail_wobble`)."""
    return {k: dict(early=loss_at_step(h), final=math.inf if h.diverged else reference_loss(h),
                    wobble=_tail_wobble(h["train_loss"]))
            for k, h in shaping.runs.items()}


def _wobbles(r) -> float:  # a shaping row's noise floor: log10(1 + its runs' largest _tail_wobble)
    return max(math.log10(1 + v["wobble"]) for v in r.values() if math.isfinite(v["wobble"]))


def _best_of(losses: dict, run: str) -> tuple[float, float]:
    """One seed's ``{lr: {run: {final}}}``: ``run``'s best final loss over the rates, and its rate."""
    lr = min(losses, key=lambda r: losses[r][run]["final"])
    return losses[lr][run]["final"], lr


def _fixed_runs(runs: dict) -> dict:  # the fixed p's runs, keyed by p
    return {float(k[4:]): v for k, v in runs.items() if k.startswith("p = ")}


def _fixed(runs: dict, when: str) -> dict:  # one seed's runs at one rate: each fixed p's loss ``when``
    return {p: v[when] for p, v in _fixed_runs(runs).items()}


def _end_p(runs: dict) -> float:
    """The p the schedule ends at, read off its run's name ("p: 0.5 → -0.5" ends at −0.5)."""
    name = next(k for k in runs if not k.startswith("p = ") and k != DECAYED)
    return float(name.split("→")[-1])


def _below_fixed(runs: dict, name: str | None = None) -> float:
    """The final loss of every fixed p but ``name``'s (None: the schedule) over ``name``'s, the
    least (above 1: ``name`` ends below every other fixed p; ``name`` "p = x" or None)."""
    own = _sched(runs) if name is None else runs[name]["final"]
    return min((v["final"] for k, v in runs.items() if k.startswith("p = ") and k != name),
               default=math.nan) / own


def _sched(runs: dict, when: str = "final") -> float:
    """The p schedule's loss ``when`` (the run whose name is not a fixed p, nor Muon decayed)."""
    return next(v[when] for k, v in runs.items() if not k.startswith("p = ") and k != DECAYED)


def _follows_p(loss: dict) -> float:
    """The early order's margin on losses keyed by p: a positive p lowest, Muon (p = 0) next, the
    most negative p highest of all; the least of the ratios that say so (above 1: it holds)."""
    ps = sorted(loss)
    return min(loss[0.0] / min((loss[p] for p in ps if p > 0), default=math.nan),  # NaN first:
               loss[ps[0]] / loss[0.0],  # no positive p, no order (min keeps a leading NaN)
               loss[ps[0]] / max(loss[p] for p in ps[1:]))


def _reversed_p(loss: dict) -> float:
    """The late order's margin on losses keyed by p: the most negative p lowest and the largest
    highest (the smaller of the two ratios; above 1: it holds)."""
    ps = sorted(loss)
    return min(min(loss[p] for p in ps[1:]) / loss[ps[0]], loss[ps[-1]] / max(loss[p] for p in ps[:-1]))


def _per_rate(swept: PracticeFile, of) -> dict:  # per seed of the sweep file, per optimizer: of({rate: steps})
    return {int(s): {k: of(runs) for k, runs in by.items()} for s, by in swept.reached.items()}


def _fewest(swept: PracticeFile) -> dict:  # each optimizer's fewest steps to the target (NaN: no rate reaches it)
    return _per_rate(swept, lambda runs: min((v for v in runs.values() if v is not None), default=math.nan))


def _reach_widths(swept: PracticeFile) -> dict:
    """Per optimizer: the ratio of its largest to its smallest rate that reaches the target (None:
    none does), whether that range touches its grid's edge (then it is a lower bound), whether
    every rate reaches it, and the grid's largest step (the resolution of the range). The grids
    differ in width, so the rows compare these, not the counts."""
    def width(runs):
        grid = sorted(float(lr) for lr in runs)
        ok = sorted(float(lr) for lr, v in runs.items() if v is not None)
        return (ok[-1] / ok[0] if ok else None, bool(ok) and (ok[0] == grid[0] or ok[-1] == grid[-1]),
                len(ok) == len(grid), max((b / a for a, b in zip(grid, grid[1:])), default=1.0))
    return _per_rate(swept, width)


def _alpha_draws(by_alpha: dict[str, Memory]) -> dict:
    """Per draw (seed) of the memory file: each method's fraction at N = d per α, with the
    exact UVᵀ's (``polar``, :func:`alpha_exact`)."""
    any_r = next(iter(by_alpha.values()))
    j, exact = _nearest(any_r, 1), alpha_exact(by_alpha)
    return {s: {float(a): dict({m: r.by_draw[m][j][k] for m in r.by_draw}, polar=exact[s][float(a)])
                for a, r in by_alpha.items()} for k, s in enumerate(any_r.draws)}


def _shaping_seeds(by_lr: dict[str, ShapingRate]) -> dict:  # per seed of the file, per rate: each run's losses
    seeds = sorted({int(s) for r in by_lr.values() for s in r.by_seed})
    return {s: {float(lr): r.by_seed[str(s)] for lr, r in by_lr.items()} for s in seeds}


def _inside(x: float, lo_hi) -> float:  # how far x sits inside [lo, hi] (negative: outside; NaN: none)
    return min(x - lo_hi[0], lo_hi[1] - x) if math.isfinite(x) else math.nan


def _grows_within(r: Width, opt: str, power: float, lo_hi) -> float:
    """How far ``opt``'s growth over the width ratio ** ``power`` sits inside ``lo_hi``."""
    return _inside(growth(r, opt) / (r.widths[-1] / r.widths[0]) ** power, lo_hi)
