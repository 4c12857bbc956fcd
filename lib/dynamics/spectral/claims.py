"""Spectral optimizers, the claims: the papers' claims and the page's "What to notice"
sentences as rows of the claims table (:func:`page_claims`), each with its measured quantity, its
control, its window, its seeds and its threshold (written once, here), and the rows that rest
on the precomputed files (:func:`published_claims`, every seed of each file); and the page's
numbers: what the prose of each section glues (``*_facts``, formatted as the page prints
them) and the measures the rows judge, shared so that a sentence and its row read the same
number.
"""
from __future__ import annotations

import numpy as np

from .. import plots, results, runtime
from ..book import glue_texts
from .experiments import (EARLY_STEP, critical_batch, early_and_late, growth, muon_agreement,
                          practice_summary, practice_sweeps, rates_reaching, recall_half_rank,
                          reference_loss, shaping_order, shaping_runs, shaping_summary)
from .figures import SHORT, timing_rows
from .roles import per_second, steepest_holds, steepest_margin
from .science import MUON_COEFFS, memory_task, ns_map

__all__ = ["page_claims", "memory_claims", "shaping_claims", "published_claims", "ns_band",
           "width_facts", "ns_facts", "practice_facts", "memory_facts", "shaping_facts",
           "practice_numbers", "fraction_at", "memory_numbers", "batch_facts", "timing_numbers",
           "alpha_numbers", "shaping_lr_numbers"]


def _n(value, missing: str) -> str:  # a number as the tables print it, or what stands in
    return plots.number(value, missing=missing)


def page_claims(bands: dict, timing: list[dict], width: dict, practice: dict,
                   memory: dict, batch: dict, shaping: dict,
                   precomputed: list[dict] | None = None, *, roles: dict | None = None,
                   cost: dict | None = None, seed: int | None = None) -> list[dict]:
    """The papers' claims and the chapter's "What to notice" sentences beside this run's
    measurements, with a verdict computed from them. ``bands``: :func:`~.experiments.run_bands`
    (the quintic's and the cubic's bands on one matrix); ``precomputed``: the rows on the
    files in ``data/``, appended (None: :func:`published_claims`). ``roles``:
    :func:`~.experiments.run_roles`; ``cost``: :func:`~.roles.step_seconds` (each adds its rows).
    ``seed``: the seed of the runs. Rows whose verdict can change with the profile, the seed
    or the machine are shown, not asserted (``asserted=False``): the prose glues them."""
    C, V = plots.claim, plots.verdict
    seed = runtime.get_seed(seed)
    one = [seed]
    band, cubic = bands["Muon quintic"], bands.get("cubic")
    gap = muon_agreement(seed)
    k5 = band["k"].index(5)
    lo, hi = band["lo"][k5], band["hi"][k5]
    t = next((r for r in timing if r["n"] == 1024), timing[-1])
    ratio = t["svd_s"] / t["ns_float32_s"]
    on_gpu = t["device"] == "cuda"
    summ = practice_summary(practice)
    mu, ad, sg = summ["muon"], summ["adamw"], summ.get("momentum", {})
    pf = practice_numbers(practice)
    bf = batch_facts(batch)
    cb = bf["critical"]
    ratio_w = width["widths"][-1] / width["widths"][0]
    g = {o: growth(width, o) for o in ("muon", "sgd", "adam")}
    below = all(c <= n + 1e-9 for o in width["change"]
                for c, n in zip(width["change"][o], width["norm"][o]))
    widths = f"widths {width['widths'][0]}–{width['widths'][-1]}"
    target = f"steps to training loss {practice['target']:g}"
    steps_text = (f"{ad['steps'] / mu['steps']:.1f}× fewer steps" if mu["steps"] and ad["steps"]
                  else f"{target}: Muon {_n(mu['steps'], 'not reached')},"
                       f" AdamW {_n(ad['steps'], 'not reached')}")
    out = [
        C("Five quintic Newton–Schulz steps leave singular values in a band of about "
          "[0.7, 1.2], not at 1", "Jordan et al. 2024 (Muon)",
          f"[{lo:.2f}, {hi:.2f}] for a 256×128 Gaussian matrix",
          V(0.6 <= lo and hi <= 1.25 and hi - lo >= 0.2),
          control="the exact UVᵀ: every singular value 1 (a band of width 0)",
          window="after 5 steps", seeds=one),
    ]
    if cubic is not None:
        q, c = band["lo"], cubic["lo"]
        settled = all(0.6 <= a and b <= 1.25 for a, b in zip(q[3:], band["hi"][3:]))
        out.append(C(
            "The quintic's band closes after three steps and stays put; the cubic needs about "
            "ten steps to bring the smallest singular value up, then converges to 1", "this book",
            f"smallest σ, quintic: step 2 {q[2]:.2f}, step 3 {q[3]:.2f}, step {band['k'][-1]} "
            f"{q[-1]:.2f}; cubic: step 5 {c[5]:.2f}, step {cubic['k'][-1]} {c[-1]:.2f} "
            f"(largest {cubic['hi'][-1]:.3f})",
            V(q[2] < 0.6 and settled and c[5] < 0.6 and c[-1] >= 0.9
              and cubic["hi"][-1] >= 0.99),
            control="each iteration against the other, on the same matrix",
            window=f"steps 0–{band['k'][-1]}; band [0.6, 1.25]", seeds=one))
    out += [
        C("Newton–Schulz (matrix products, bfloat16) is much cheaper than an SVD on "
          "accelerators", "Jordan et al. 2024 (Muon)",
          f"n = {t['n']}, {t['device']}, float32, precomputed: SVD / NS₅ = {ratio:.1f}×"
          + ("" if on_gpu else "; no GPU measured"),
          V(ratio >= 3) if on_gpu else "not at this scale", asserted=False),
        C("A step of fixed spectral (RMS→RMS) size changes a layer's output by the same "
          "amount at every width, about the learning rate itself, which is what μP asks of a "
          "learning rate", "Bernstein & Newhouse 2024; Yang, Simon & Bernstein 2023",
          f"output change per unit lr, width {width['widths'][0]} → {width['widths'][-1]}: "
          f"Muon ×{g['muon']:.2f}, SGD ×{g['sgd']:.1f}, Adam ×{g['adam']:.0f}; Muon's change "
          f"{min(width['change']['muon']):.2f}–{max(width['change']['muon']):.2f} per unit lr",
          V(0.67 <= g["muon"] <= 1.5 and g["adam"] >= 4
            and all(0.7 <= c <= 1.3 for c in width["change"]["muon"])),
          control="Adam's first step (sign(G)) from the same gradient", window=widths,
          seeds=one),
        C("Adam's first step grows about in proportion to the width, SGD's about as its "
          "square root; every change stays below its RMS→RMS bound", "Yang, Simon & Bernstein 2023",
          f"width ×{ratio_w:g}: Adam ×{g['adam']:.1f}, SGD ×{g['sgd']:.1f} (√ = "
          f"{ratio_w ** 0.5:.1f}); below the bound: {'yes' if below else 'no'}",
          V(0.5 * ratio_w <= g["adam"] <= 1.5 * ratio_w
            and 0.5 * ratio_w ** 0.5 <= g["sgd"] <= 2 * ratio_w ** 0.5 and below),
          control="the width ratio and its square root; the dotted RMS→RMS bounds",
          window=widths, seeds=one),
        C("Muon trains faster than AdamW (GPT-2 speedrun 31.4 → 24.9 min; CIFAR-10 "
          "to 94% in 2.6 s on an A100)", "Jordan et al. 2024 (Muon)",
          f"{practice['data']} MLP, loss {practice['target']:g}: {steps_text}; "
          "per step only: no transformer or CIFAR-10 run here",
          "partly" if pf["adamw_over_muon"] and pf["adamw_over_muon"] >= 1.5 else "no",
          asserted=False),
        C("Per step Muon reaches the target in under half of AdamW's steps", "this book",
          f"{target}: Muon {_n(mu['steps'], 'never')}, AdamW "
          f"{_n(ad['steps'], 'never')} (SGD + momentum {_n(sg.get('steps'), 'never')})",
          V(pf["adamw_over_muon"] is not None and pf["adamw_over_muon"] >= 2),
          control="AdamW at its best swept rate",
          window=f"{max(practice['timed']['muon'].steps)} steps", seeds=one),
        C("The float32 teaching Muon reaches the target within a few steps of "
          "torch.optim.Muon", "this book",
          f"steps: teaching {_n(pf['steps'].get('muon_fp32'), 'never')}, torch "
          f"{_n(mu['steps'], 'never')}",
          V(pf["fp32_over_torch"] is not None and 0.75 <= pf["fp32_over_torch"] <= 1.33),
          control="torch.optim.Muon at the same rate", window="ratio of steps 0.75–1.33",
          seeds=one),
        C("The teaching Muon reproduces torch.optim.Muon: on the same gradients the two "
          "agree to rounding", "this book",
          f"largest parameter difference after 5 steps: {gap:.2g}", V(gap <= 1e-5),
          control="torch.optim.Muon on the same random gradients",
          window="5 steps, three shapes; at most 1e-5", seeds=one),
    ]
    if cost is not None:
        ps = per_second(pf["steps"], cost["median"])
        fp = per_second(pf["steps"], cost["median"], "muon_fp32")
        ms = {k: 1e3 * v for k, v in cost["median"].items()}
        out.append(C(
            "Per second on this machine Muon keeps its lead over AdamW", "this book",
            f"a step: Muon {ms['muon']:.1f} ms (float32 NS {ms['muon_fp32']:.1f} ms), AdamW "
            f"{ms['adamw']:.1f} ms; time to the target, AdamW / Muon: "
            f"{_n(ps['per_second'], 'not reached')} (float32 NS {_n(fp['per_second'], '—')})",
            V(ps["per_second"] is not None and ps["per_second"] > 1), asserted=False,
            control="AdamW's seconds to the target (its steps × its seconds a step)",
            window=f"median of {cost['reps']} timed steps each, taking turns", seeds=one))
    if roles is not None:
        text, verdict_ = plots.judged({s: steepest_margin(r) for s, r in roles.items()},
                                      {s: steepest_holds(r) for s, r in roles.items()},
                                      fmt=lambda v: f"{v:.2f}×")
        out.append(C(
            "Each role's duality map is the steepest unit step of its own norm: U Vᵀ for the "
            "spectral norm, unit-RMS columns for ℓ1→RMS, sign(G) for ℓ∞",
            "Bernstein & Newhouse 2024 (both papers)",
            f"own map's gain over the best other direction (smallest over the norms): {text}",
            verdict_, control=f"the other two maps and {next(iter(roles.values()))['draws']} "
            "random unit directions in each norm", window="the three norms",
            seeds=list(roles)))
    out += [
        C("Muon saturates at a critical batch several times SGD's (Kim et al.: a larger "
          "critical batch)", "Kim et al. 2026",
          f"batch for 90% of the full-gradient recall (N = {batch['n']}): "
          f"SGD {_n(cb['sgd'], 'none')}, Muon {_n(cb['muon'], 'none')}",
          V(cb["sgd"] is not None and cb["muon"] is not None and cb["muon"] >= 4 * cb["sgd"]),
          control="SGD's critical batch (at least 4× it)",
          window=f"batches {batch['batch_sizes'][0]}–{batch['batch_sizes'][-1]}", seeds=one),
        C("At small batches SGD and Muon tie; past SGD's critical batch Muon stores more at "
          "every size", "Kim et al. 2026",
          f"N = {batch['n']}, batches {batch['batch_sizes'][0]}–{batch['batch_sizes'][-1]}",
          V(bf["muon_ahead_everywhere"]), control="SGD's recall at the same batch (a tie: "
          "within 1% of the pairs)", window="every batch size", seeds=one),
    ]
    out[-2:-2] = memory_claims(memory, seed)
    return (out + shaping_claims(shaping, seed)
            + list(published_claims() if precomputed is None else precomputed))


def memory_claims(memory: dict, seed: int | None = None) -> list[dict]:
    """Section 4's rows on one :func:`~.experiments.run_memory` (``seed``: its first draw):
    Kim et al.'s claim at N = 4d, and the page's sentences on the memory figures."""
    C, V = plots.claim, plots.verdict
    one = [runtime.get_seed(seed)]
    mf = memory_numbers(memory)
    f = mf["at_ratio"]
    memo = dict(control="one SGD step and one Newton step on the same pairs", seeds=one)
    return [
        C("One Muon step stores far more associations than one SGD step, and as "
          "many as Newton's method", "Kim et al. 2026",
          f"N = {mf['ratio']:g}d pairs: SGD {f['sgd']:.2f}, Muon {f['muon']:.2f}, Newton "
          f"{f['newton']:.2f} of them; Muon / Newton beyond N = d ≥ "
          f"{_n(mf['muon_over_newton_min'], '–')}"
          + ("; far more than SGD holds, as many as Newton does not"
             if f["muon"] >= 3 * f["sgd"] and f["muon"] < 0.8 * f["newton"] else ""),
          V(f["muon"] >= 3 * f["sgd"] and f["muon"] >= 0.8 * f["newton"],
            f["muon"] >= 3 * f["sgd"]), asserted=False, window=f"N = {mf['ratio']:g}d", **memo),
        C("Up to N = d Muon and Newton store almost every pair while SGD already loses "
          "most; past it one Muon step keeps several times as many pairs as SGD", "Kim et al. 2026",
          f"N = d: SGD {mf['at_d']['sgd']:.2f}, Muon {mf['at_d']['muon']:.2f}, Newton "
          f"{mf['at_d']['newton']:.2f}; beyond N = d, Muon / SGD ≥ "
          f"{_n(mf['muon_over_sgd_min'], '–')}×",
          V(mf["at_d"]["muon"] >= 0.95 and mf["at_d"]["newton"] >= 0.95
            and mf["at_d"]["sgd"] < 0.5 and (mf["muon_over_sgd_min"] or 0) >= 3),
          window="N = d (at least 0.95, SGD under 0.5) and every N > d (Muon / SGD ≥ 3)",
          **memo),
        C("From N = 2d one Muon step stores at least 3/4 of Newton's pairs, and from N = 8d "
          "as many (within 0.02 of the pairs)", "this book",
          f"Muon / Newton from N = 2d ≥ {_n(mf['muon_over_newton_2d'], '–')}; largest "
          f"|Muon − Newton| from N = 8d: {_n(mf['gap_8d'], 'not run')}",
          V(mf["muon_over_newton_2d"] is not None and mf["muon_over_newton_2d"] >= 0.75
            and mf["gap_8d"] is not None and mf["gap_8d"] <= 0.02),
          window="every N ≥ 2d; every N ≥ 8d", **memo),
        C("At N = 4d SGD stores only the head of the frequency distribution; Muon reaches at "
          "least four times deeper into the tail", "this book",
          f"first rank where fewer than half are stored: Muon / SGD = {mf['deeper']:.1f}×",
          V(mf["deeper"] >= 4), window=f"N = {mf['ratio']:g}d, log bins of rank", **memo),
    ]


def shaping_claims(shaping: dict, seed: int | None = None) -> list[dict]:
    """Section 5's rows on one :func:`~.experiments.run_shaping`: the paper's order early and
    late, the schedule against Muon, and DynMuon's fewer steps (shown: one run's verdicts
    change with the rate, the length and the seed; the prose glues them)."""
    C, V = plots.claim, plots.verdict
    one = [runtime.get_seed(seed)]
    rows = {r["update"]: r for r in shaping_summary(shaping)}
    sched, muon_row = rows[shaping["schedule"]], rows["p = 0"]
    saved = sched["saved"]
    el = early_and_late(shaping)
    order = shaping_order(el["early"], el["late"], sched["final_loss"], muon_row["final_loss"])
    halves = {(True, False): "; only the early half holds", (False, True):
              "; only the late half holds"}.get((order["early"], order["late"]), "")
    return [
        C("Positive p helps early, mildly negative p late: early a positive p lowest and the "
          "most negative highest, at the end the most negative p lowest and the largest highest",
          "Wu et al. 2026 (DynMuon)",
          f"loss at step {EARLY_STEP}: " + ", ".join(f"p = {p:g} {v:.2f}" for p, v in
                                                    sorted(el["early"].items(), reverse=True))
          + "; final: " + ", ".join(f"p = {p:g} {v:.3f}" for p, v in
                                    sorted(el["late"].items(), reverse=True)) + halves,
          V(order["early"] and order["late"], order["early"] or order["late"]),
          asserted=False, control="Muon (p = 0)", window=f"step {EARLY_STEP} and the last",
          seeds=one),
        C("The schedule ends below Muon's final loss", "Wu et al. 2026 (DynMuon)",
          f"final loss: schedule {_n(sched['final_loss'], sched['status'])}, Muon "
          f"{_n(muon_row['final_loss'], muon_row['status'])}",
          V(sched["final_loss"] is not None and muon_row["final_loss"] is not None
            and sched["final_loss"] < muon_row["final_loss"]), asserted=False,
          control="Muon (p = 0)", seeds=one),
        C("Scheduling p from positive to mildly negative (DynMuon) needs 10.6–26.5% "
          "fewer steps than Muon to the same loss", "Wu et al. 2026 (DynMuon)",
          f"to p = 0's final loss: schedule {_n(sched['steps_to_reference'], 'never')} "
          f"vs {_n(muon_row['steps_to_reference'], 'never')} steps"
          + (f" ({saved:.0%} fewer)" if saved is not None and saved >= 0 else
             f" ({-saved:.0%} more)" if saved is not None else "")
          + ("; fewer, but under the paper's 10.6%"
             if saved is not None and 0 < saved < 0.106 else "")
          + f"; lr {shaping['lr']:g}, one seed",
          V(saved is not None and saved >= 0.106, saved is not None and saved > 0),
          asserted=False, control="Muon (p = 0)", seeds=one),
    ]


def _reach(swept: dict) -> dict:
    """Per seed of the sweep file: per optimizer, how many of its rates reach the target, of how many."""
    return {int(s): {k: (sum(v is not None for v in runs.values()), len(runs))
                     for k, runs in by.items()} for s, by in swept["reached"].items()}


def _alpha_draws(by_alpha: dict) -> tuple[dict, list]:
    """Per draw (seed) of the memory file: each method's fraction at N = d per α."""
    any_r = next(iter(by_alpha.values()))
    j = _nearest(any_r, 1)
    return ({s: {float(a): {m: r["by_draw"][m][j][k] for m in r["by_draw"]}
                 for a, r in by_alpha.items()} for k, s in enumerate(any_r["draws"])},
            list(any_r["draws"]))


def _shaping_seeds(by_lr: dict) -> dict:
    """Per seed of the shaping file: per rate, each run's early and final loss."""
    seeds = sorted({int(s) for r in by_lr.values() for s in r["by_seed"]})
    return {s: {float(lr): r["by_seed"][str(s)] for lr, r in by_lr.items()} for s in seeds}


def _slider_holds(losses: dict) -> bool:
    """The shaping slider's sentence on one seed's final losses ``{lr: {run: loss}}``: at
    every rate a fixed p = −0.5 ends below Muon; at all but the lowest rate the schedule ends
    lowest of all; at the lowest p = −0.5 ends at or within 20% of the schedule."""
    lrs = sorted(losses)
    fin = {lr: {k: v["final"] for k, v in losses[lr].items()} for lr in lrs}
    if any(v is None for lr in lrs for v in fin[lr].values()):
        return False
    sched = {lr: next(v for k, v in fin[lr].items() if not k.startswith("p = ")) for lr in lrs}
    return (all(fin[lr]["p = -0.5"] < fin[lr]["p = 0"] for lr in lrs)
            and all(sched[lr] <= min(fin[lr].values()) for lr in lrs[1:])
            and fin[lrs[0]]["p = -0.5"] <= 1.2 * sched[lrs[0]])


def _order_holds(runs: dict) -> dict:
    """:func:`~.experiments.shaping_order` on one seed's stored losses ``{run: {early, final}}``."""
    fixed = {float(k[4:]): v for k, v in runs.items() if k.startswith("p = ")}
    sched = next(v for k, v in runs.items() if not k.startswith("p = "))
    return shaping_order({p: v["early"] for p, v in fixed.items()},
                         {p: v["final"] for p, v in fixed.items()}, sched["final"],
                         fixed[0.0]["final"])


def _precomputed_rows(timing, swept, by_alpha, by_lr) -> list[dict]:
    """The claims rows that rest on the precomputed files (the same on every profile):
    ``swept`` and ``by_lr`` are the sweep's and the shaping runs' payloads, with every seed's
    measures; their rows hold on every seed or say on how many."""
    C = plots.claim
    t = timing_numbers(timing)
    reach = _reach(swept)
    af = alpha_numbers(by_alpha)
    alphas = sorted(af)
    close = [a for a in alphas if a <= 1.5]
    steep = alphas[-1]
    per_draw, draws = _alpha_draws(by_alpha)
    sgd_text, sgd_v = plots.judged(
        {k: d[steep]["sgd"] for k, d in per_draw.items()},
        {k: all(d[b]["sgd"] < d[a]["sgd"] for a, b in zip(alphas, alphas[1:]))
         and min(d[a]["newton"] for a in alphas) >= 0.95 for k, d in per_draw.items()})
    muon_text, muon_v = plots.judged(
        {k: d[steep]["muon"] / d[steep]["newton"] for k, d in per_draw.items()},
        {k: all(d[a]["muon"] >= 0.8 * d[a]["newton"] for a in close)
         and d[steep]["muon"] < 0.6 * d[steep]["newton"]
         and d[steep]["muon"] >= 3 * d[steep]["sgd"] for k, d in per_draw.items()},
        fmt=lambda x: f"{x:.2f}")
    per_seed = _shaping_seeds(by_lr)
    lrs = sorted(next(iter(per_seed.values())))
    mid = lrs[len(lrs) // 2]

    def finals(lr, pick):
        return plots.spread({s: pick(v[lr]) for s, v in per_seed.items()},
                            lambda x: f"{x:.3f}").split(", seeds")[0]

    def sched_of(runs):
        return next(v["final"] for k, v in runs.items() if not k.startswith("p = "))
    slider_text, slider_v = plots.judged(
        {s: max(v[lr]["p = -0.5"]["final"] / v[lr]["p = 0"]["final"] for lr in lrs)
         for s, v in per_seed.items()}, {s: _slider_holds(v) for s, v in per_seed.items()},
        fmt=lambda x: f"{x:.2f}")
    orders = {s: _order_holds(v[mid]) for s, v in per_seed.items()}
    order_text, order_v = plots.judged(
        {s: v[mid]["p = 0"]["early"] - min(r["early"] for k, r in v[mid].items()
                                            if k.startswith("p = ") and float(k[4:]) > 0)
         for s, v in per_seed.items()},
        {s: all(o.values()) for s, o in orders.items()}, fmt=lambda x: f"{x:.3f}")
    late_text = plots.spread({s: v[mid]["p = 0"]["final"] / v[mid]["p = -0.5"]["final"]
                              for s, v in per_seed.items()}, lambda x: f"{x:.2f}×")
    reach_text, reach_v = plots.judged(
        {s: r["muon"][0] - max(a for k, (a, _) in r.items() if k != "muon")
         for s, r in reach.items()},
        {s: r["muon"][0] == r["muon"][1] and all(r[k][0] < r["muon"][0] for k in r if k != "muon")
         for s, r in reach.items()}, fmt=lambda x: f"{x:.0f}")
    seeds = sorted(per_seed)
    return [
        C("On a CPU, five Newton–Schulz steps are less than twice as fast as an SVD",
          "this book (precomputed timing)",
          f"SVD / NS₅ at most {t['ratio_max']:.2f}× ({t['device']}, float32)",
          plots.verdict(t["device"] == "cpu" and t["ratio_max"] < 2, scale=t["device"] != "cpu"),
          control="the SVD's CPU seconds on the same matrices",
          window="every size timed, one Gaussian matrix each", seeds=[0]),
        C("Five steps leave a square Gaussian matrix's weakest directions far from 1: about "
          "a fifth off UVᵀ at every size", "Jordan et al. 2024 (Muon)",
          f"relative error {t['err_lo']:.2f}–{t['err_hi']:.2f}, max |σ − 1| "
          f"{t['sigma_lo']:.2f}–{t['sigma_hi']:.2f}",
          plots.verdict(0.1 <= t["err_lo"] and t["err_hi"] <= 0.3 and t["sigma_lo"] >= 0.5),
          control="the exact UVᵀ from an SVD (error 0, every σ = 1)",
          window="every size timed, one Gaussian matrix each (the range is over sizes)",
          seeds=[0]),
        C("Muon reaches the target at every learning rate swept, AdamW and SGD at fewer",
          "this book (precomputed sweep)",
          "; ".join(f"seed {s}: " + ", ".join(f"{SHORT.get(k, k)} {a} of {n}"
                                              for k, (a, n) in r.items())
                    for s, r in reach.items())
          + f"; Muon's lead in rates over the next best: {reach_text}", reach_v,
          control="AdamW and SGD + momentum over their own swept rates",
          window="every rate swept", seeds=sorted(reach)),
        C("At N = d the steeper the power law, the fewer pairs one SGD step stores; Newton "
          "stores all of them", "Kim et al. 2026",
          "SGD " + ", ".join(f"α {a:g}: {af[a]['sgd']:.2f}" for a in alphas)
          + "; Newton ≥ " + f"{min(af[a]['newton'] for a in alphas):.2f} (means); per draw, "
          f"SGD at α {steep:g}: {sgd_text}", sgd_v,
          control="Newton's one step on the same pairs",
          window=f"N = d, α {alphas[0]:g}–{alphas[-1]:g}; Newton at least 0.95", seeds=draws),
        C("Muon stays close to Newton at N = d up to α = 1.5; at the steepest α it falls well "
          "short of Newton but stores many times what SGD does", "Kim et al. 2026",
          "Muon / Newton " + ", ".join(f"α {a:g}: {af[a]['muon'] / af[a]['newton']:.2f}"
                                       for a in alphas)
          + f"; α {steep:g}: Muon / SGD {af[steep]['muon'] / max(af[steep]['sgd'], 1e-9):.0f}× "
          f"(means); per draw, Muon / Newton at α {steep:g}: {muon_text}", muon_v,
          control="Newton's and SGD's one step on the same pairs",
          window=f"N = d, α {alphas[0]:g}–{alphas[-1]:g}; close: at least 0.8 of Newton; "
          "well short: under 0.6; many times: at least 3×", seeds=draws),
        C("At every learning rate a fixed p = −0.5 ends below Muon; at all but the lowest "
          "rate the schedule ends lowest of all, and at the lowest p = −0.5 ends at or within "
          "20% of the schedule", "Wu et al. 2026 (DynMuon)",
          "; ".join(f"lr {lr:g}: p = 0 {finals(lr, lambda r: r['p = 0']['final'])}, p = −0.5 "
                    f"{finals(lr, lambda r: r['p = -0.5']['final'])}, schedule "
                    f"{finals(lr, sched_of)}" for lr in lrs)
          + f" (medians and ranges); p = −0.5 / Muon at its worst rate: {slider_text}",
          slider_v, control="Muon (p = 0) at the same rate and seed",
          window=f"rates {', '.join(map(str, lrs))}; final loss", seeds=seeds),
        C("Early the loss follows p (a positive p lowest, the most negative highest, Muon in "
          "between); at the end the order is reversed at its ends (the most negative p lowest, "
          "the largest highest), and the schedule ends below Muon", "Wu et al. 2026 (DynMuon)",
          f"lr {mid:g}; at step {EARLY_STEP}, Muon's loss above the best positive p by "
          f"{order_text}; final, Muon / p = −0.5: {late_text}"
          + "".join(f"; seed {s}: " + ", ".join(k for k, ok in o.items() if not ok)
                    + " fails" for s, o in orders.items() if not all(o.values())),
          order_v, control="Muon (p = 0) at the same rate and seed",
          window=f"lr {mid:g}; step {EARLY_STEP} and the final loss", seeds=seeds),
    ]


def published_claims() -> list[dict]:
    """The claims rows that rest on the precomputed files in ``data/`` (the figures the
    published page shows), as in the page's claims table."""
    return _precomputed_rows(*(results.load(f"spectral_{name}")[0]
                               for name in ("timing", "practice", "memory", "shaping")))


# ================================================================ the measures


def ns_band(lo: float = 1.5e-3, steps: int = 5, coeffs=MUON_COEFFS, n: int = 200_001) -> dict:
    """Where ``steps`` Newton–Schulz iterations send every singular value in ``[lo, 1]``
    (a fine log grid): the band ``[min, max]`` of the map, and ``f(1)`` after one and after
    ``steps`` iterations. A property of the polynomial, the same on every machine."""
    s = np.logspace(np.log10(lo), 0.0, n)
    y = ns_map(s, steps, coeffs)
    return dict(lo=lo, min=float(y.min()), max=float(y.max()),
                one_step_at_1=float(ns_map(1.0, 1, coeffs)), at_1=float(ns_map(1.0, steps, coeffs)))


def practice_numbers(practice: dict) -> dict:
    """Section 3's measures from :func:`~.experiments.run_practice`: steps to the target per
    optimizer, AdamW's steps over Muon's, and the float32 teaching Muon's steps over torch's."""
    st = {k: v["steps"] for k, v in practice_summary(practice).items()}
    mu, ad, fp = st.get("muon"), st.get("adamw"), st.get("muon_fp32")
    return dict(steps=st, adamw_over_muon=ad / mu if mu and ad else None,
                fp32_over_torch=fp / mu if mu and fp else None)


def _nearest(memory: dict, ratio: float) -> int:  # the index of the N/d nearest to ratio
    return int(np.argmin([abs(x - ratio) for x in memory["ratios"]]))


def fraction_at(memory: dict, method: str, ratio: float) -> float:
    """The fraction of pairs ``method`` stores at the N/d of :func:`~.experiments.run_memory`
    nearest to ``ratio``."""
    return memory["fraction"][method][_nearest(memory, ratio)]


def memory_numbers(memory: dict, ratio: float = 4) -> dict:
    """Section 4's measures of a :func:`~.experiments.run_memory`: the fractions at N = d and
    ``ratio``·d; past d the least Muon / SGD and Muon / Newton, from 2d the least Muon / Newton,
    from 8d the largest |Muon − Newton|; how much deeper than SGD Muon reaches at ``ratio``·d."""
    f, ratios = memory["fraction"], memory["ratios"]

    def at(r):
        return {m: f[m][_nearest(memory, r)] for m in f}
    beyond = [j for j, r in enumerate(ratios) if r > 1]
    two, eight = ([j for j, r in enumerate(ratios) if r >= k] for k in (2, 8))
    return dict(at_d=at(1), at_ratio=at(ratio), ratio=ratio,
                muon_over_newton_min=min((f["muon"][j] / f["newton"][j] for j in beyond
                                          if f["newton"][j] > 0), default=None),
                muon_over_sgd_min=min((f["muon"][j] / max(f["sgd"][j], 1e-9) for j in beyond),
                                      default=None),
                muon_over_newton_2d=min((f["muon"][j] / max(f["newton"][j], 1e-9) for j in two),
                                        default=None),
                gap_8d=max((abs(f["muon"][j] - f["newton"][j]) for j in eight), default=None),
                deeper=recall_half_rank(memory, "muon", ratio)
                / recall_half_rank(memory, "sgd", ratio))


def batch_facts(batch: dict) -> dict:
    """Section 4's batch-size measures: the critical batches, and whether Muon stores at
    least as much as SGD at every batch size (up to a tie within 1% of the pairs at small
    batches, where each stores about every pair the batch drew) and more at every batch past
    SGD's critical one."""
    cb = {m: critical_batch(batch, m) for m in batch["recall"]}
    pairs = list(zip(batch["batch_sizes"], batch["recall"]["muon"], batch["recall"]["sgd"]))
    ties = all(mu >= sg - 0.01 for _, mu, sg in pairs)  # small batches: both store what they drew
    past = cb["sgd"] is not None and all(mu > sg for b, mu, sg in pairs if b > cb["sgd"])
    return dict(critical=cb, muon_ahead_everywhere=ties and past)


def timing_numbers(timing: list[dict]) -> dict:
    """The timing table's ranges: SVD / NS₅ (CPU seconds on a CPU), the relative error from
    UVᵀ and the largest |σ − 1| over the sizes measured."""
    rows = timing_rows(timing)
    ratio = [r["SVD / NS₅"] for r in rows]
    err = [r["error vs UVᵀ"] for r in rows]
    sig = [r["max |σ − 1|"] for r in rows]
    return dict(ratio_max=max(ratio), err_lo=min(err), err_hi=max(err), sigma_lo=min(sig),
                sigma_hi=max(sig), device=timing[0].get("device", "cpu"))


def alpha_numbers(by_alpha: dict) -> dict:
    """The precomputed memory over α, at N = d: each method's fraction per α."""
    return {float(a): {m: fraction_at(r, m, 1) for m in r["fraction"]}
            for a, r in by_alpha.items()}


def shaping_lr_numbers(by_lr: dict) -> dict:
    """The precomputed shaping runs of the first seed, per learning rate: final losses
    (``reference_loss``) of every run, keyed by rate and run name."""
    runs = shaping_runs(by_lr) if any(isinstance(h, dict) for r in by_lr.values()
                                      for h in r["runs"].values()) else by_lr
    return {float(lr): {row["update"]: row["final_loss"] for row in shaping_summary(r)}
            for lr, r in runs.items()}


def width_facts(width: dict) -> dict:
    """Section 1: how much Muon's step grows from the narrowest width to the widest."""
    return glue_texts(2, muon_growth=growth(width, "muon"))


def ns_facts(timing: list[dict]) -> dict:
    """Section 2: the band five quintic steps leave every σ in [1.5e-3, 1] in (the
    polynomial's, :func:`ns_band`), and the ranges of the precomputed ``timing``."""
    nsb, t = ns_band(), timing_numbers(timing)
    return dict(glue_texts(3, band_lo=nsb["min"], band_hi=nsb["max"], f5_at_1=nsb["at_1"]),
                ratio_max=f"{t['ratio_max']:.1f}×", err_lo=f"{t['err_lo']:.0%}",
                err_hi=f"{t['err_hi']:.0%}", sigma_lo=f"{t['sigma_lo']:.2f}",
                sigma_hi=f"{t['sigma_hi']:.2f}")


def practice_facts(practice: dict, cost: dict, swept: dict, roles: dict) -> dict:
    """Section 3: the run's size and steps to the target (``practice``), a step's seconds and
    per second, "ahead" or "behind" (``cost``, wall-clock: printed, never asserted), the sweep
    file's rates that reach the target (``swept``), each norm's own map's margin (``roles``)."""
    cfg, pn = practice["config"], practice_numbers(practice)
    steps = pn["steps"]
    ps = per_second(steps, cost["median"])
    fp = per_second(steps, cost["median"], "muon_fp32")
    ms = {k: f"{1e3 * v:.1f} ms" for k, v in cost["median"].items()}

    def words(r):
        v = r["per_second"]
        return "not measured (a run missed the target)" if v is None else (
            f"ahead ({v:.2f}× sooner than AdamW)" if v >= 1 else
            f"behind (AdamW gets there in {v:.2f} of its time)")
    reach = rates_reaching(practice_sweeps(swept), swept["target"])
    return dict(glue_texts(3, p_width=cfg.width, p_batch=cfg.batch_size,
                           cost_reps=cost["reps"], cost_block=cost["block"]),
                **glue_texts(2, adamw_over_muon=pn["adamw_over_muon"],
                             roles_margin=min(steepest_margin(r) for r in roles.values())),
                **{f"steps_{k}": plots.number(steps.get(k), missing="never reached")
                   for k in ("adamw", "momentum")},
                ms_muon=ms["muon"], ms_fp32=ms["muon_fp32"], ms_adamw=ms["adamw"],
                cost_muon=f"{ps['cost']:.1f}×", cost_fp32=f"{fp['cost']:.1f}×",
                per_second_muon=words(ps), per_second_fp32=words(fp),
                reach=", ".join(f"{SHORT.get(k, k)} at {a} of its {n}" for k, (a, n) in reach.items()))


def memory_facts(memory: dict, batch: dict, by_alpha: dict) -> dict:
    """Section 4 and exercise 5: the fractions stored at N = d and 4d (``memory``), the memory
    file over α at N = d (``by_alpha``), and at the batch figure's N (``batch``) the pairs each
    method stores beside the distinct pairs a batch of B draws holds, Σᵢ 1 − (1 − pᵢ)ᴮ."""
    mf, af = memory_numbers(memory), alpha_numbers(by_alpha)
    alphas = sorted(af)
    first, last = af[alphas[0]], af[alphas[-1]]
    n = batch["n"]
    _, _, freq = memory_task(n, batch["dim"], batch["alpha"], batch["seed"])
    p = freq.double()
    distinct = ", ".join(f"{float((1 - (1 - p) ** b).sum()):.0f} at B = {b}"
                         for b in batch["batch_sizes"] if b <= 1024)
    return dict(glue_texts(2, sgd_d=mf["at_d"]["sgd"], muon_d=mf["at_d"]["muon"],
                           muon_sgd=mf["at_ratio"]["muon"] / max(mf["at_ratio"]["sgd"], 1e-9),
                           muon_newton=mf["muon_over_newton_min"], bc_n=n,
                           bc_sgd=batch["full"]["sgd"] * n, bc_muon=batch["full"]["muon"] * n,
                           bc_crit_sgd=critical_batch(batch, "sgd"),
                           bc_crit_muon=critical_batch(batch, "muon"), bc_distinct=distinct),
                sgd_first=f"{first['sgd']:.0%}", alpha_first=f"{alphas[0]:g}",
                sgd_last=f"{last['sgd']:.0%}", alpha_last=f"{alphas[-1]:g}",
                muon_last=f"{last['muon']:.0%}", newton_last=f"{last['newton']:.0%}")


def shaping_facts(shaping: dict, by_lr: dict) -> dict:
    """Section 5: whether this run shows the paper's order early and late and its schedule
    ends below Muon (``shaping``), and at the file's lowest rate (``by_lr``) the final losses
    of the schedule and of p = −0.5."""
    el = early_and_late(shaping)
    o = shaping_order(el["early"], el["late"], reference_loss(
        shaping["runs"][shaping["schedule"]]), el["late"][0.0])
    words = {(True, True): "both hold", (True, False): "only the early half holds",
             (False, True): "only the late half holds", (False, False): "neither holds"}
    sf = shaping_lr_numbers(by_lr)
    low = sf[min(sf)]
    sched = next(v for k, v in low.items() if not k.startswith("p = "))
    return dict(early_late=words[o["early"], o["late"]],
                sched_end="ends below" if o["schedule"] else "does not end below",
                lr_low=f"{min(sf):g}", sched_low=f"{sched:.3f}",
                neg_low=f"{low.get('p = -0.5', float('nan')):.3f}")
