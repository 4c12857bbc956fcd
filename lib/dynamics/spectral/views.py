"""What the reader runs: live panels (``*_panel(profile=None, seed=None)``), the claims table
(:func:`claims`) and the page's numbers. The figure builders, sliders and tables are in
:mod:`.figures` (re-exported here).
"""
from __future__ import annotations

import numpy as np
import torch

from .. import plots, progress, results, runtime
from .. import train as T
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import (EARLY_STEP, critical_batch, early_and_late, growth, load_practice,
                          load_shaping, practice_summary, rates_reaching,
                          per_second, run_memory, run_shaped, shaping_summary)
from .science import (MUON_COEFFS, MemoryConfig, NSConfig, PracticeConfig,
                      ShapingConfig, linear_p_schedule, mlp, default_data, muon_with_adamw,
                      newton_schulz, ns_map, practice_data, random_matrix)

from .figures import *  # noqa: F401,F403  (re-exported: views.X still works)
from .figures import (LABELS, SHORT, loss_figure, memory_figure, shaping_figure,
                      spectrum_figure, timing_rows)

__all__ = ["ns_panel", "practice_panel", "memory_panel", "shaping_panel", "claims", "ns_band",
           "practice_facts", "memory_facts", "batch_facts", "timing_facts", "alpha_facts",
           "shaping_lr_facts", "published_claims", "timing_glue", "sweep_glue", "alpha_glue",
           "shaping_lr_glue", "batch_counts", "shaping_verdicts", "fraction_at", "steepest_holds",
           "steepest_margin",
           "cost_glue"]


# ================================================================ live panels


def ns_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: coefficients, steps, matrix shape and spectrum → singular values after NS."""
    cfg = NSConfig.for_profile(profile, seed=runtime.get_seed(seed))

    def run(update, rows, cols, spectrum, steps, a, b, c):
        rows, cols = int(rows), int(cols)
        G = random_matrix(rows, cols, spectrum, cfg.seed)
        out = newton_schulz(G, int(steps), (a, b, c), dtype=torch.float32)
        if not torch.isfinite(out).all():
            update(status=f"diverged: coefficients ({a:.3g}, {b:.3g}, {c:.3g}) blow up "
                          "singular values")
            return None
        s = torch.linalg.svdvals(out)
        update(status=f"singular values in [{s.min():.3g}, {s.max():.3g}]")
        return spectrum_figure(G, out, f"{rows}×{cols}, {spectrum}, {steps} steps")

    return Panel(run, controls_for(cfg, ["rows", "cols", "spectrum", "steps", "a", "b", "c"]),
                 title="Try it: Newton–Schulz on one matrix", above="live", profile=profile)


def practice_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: train the MLP with one optimizer at one learning rate, live."""
    cfg = PracticeConfig.for_profile(profile, seed=runtime.get_seed(seed))
    data = practice_data(cfg)

    def run(update, optimizer, lr, width, depth, steps):
        c = cfg.replace(width=int(width), depth=int(depth), steps=int(steps))
        model = mlp(data, c.width, c.depth, c.seed)
        opt = (lambda m: muon_with_adamw(m, lr, 3e-3)) if optimizer == "muon" else optimizer
        build = lambda h: loss_figure({LABELS[optimizer]: h},  # noqa: E731
                                      f"{LABELS[optimizer]}, lr {lr:.3g}")
        recipe = T.Recipe(c.steps, optimizer=opt, lr=lr, batch_size=c.batch_size,
                          eval=T.Every(max(1, c.steps // 50), test=False))
        h = T.train(model, data, recipe, seed=c.seed,
                    hooks=T.Hooks(on_eval=update.every(build)))
        update(status=h.status if h.diverged else f"final training loss {h.last('train_loss'):.3g}")
        return build(h) if len(h) else None

    return Panel(run, [Choice("optimizer", list(LABELS)[:3], "muon"),
                       Slider("lr", 1e-4, 3.0, 0.03, log=True),
                       Slider("width", 8, 512, cfg.width, step=8, integer=True),
                       Slider("depth", 1, 6, cfg.depth, integer=True),
                       Slider("steps", 20, 3000, cfg.steps, step=10, integer=True)],
                 title="Try it: one optimizer, one learning rate",
                 note="Muon's AdamW part (head, biases) uses lr 3e-3.",
                 above=results.provenance_of("spectral_practice"), profile=profile)


def memory_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: dimension, power-law exponent and draws → recall after one step."""
    cfg = MemoryConfig.for_profile(profile, seed=runtime.get_seed(seed))

    def run(update, dim, alpha, seeds):
        c = cfg.replace(dim=int(dim), alpha=float(alpha), seeds=int(seeds))
        return memory_figure(run_memory(c))

    return Panel(run, [Slider("dim", 8, 512, cfg.dim, step=8, integer=True)]
                 + controls_for(cfg, ["alpha"])
                 + [Slider("seeds", 1, 10, min(cfg.seeds, 10), integer=True)],
                 title="Try it: storage after one step",
                 above=results.provenance_of("spectral_memory"), profile=profile)


def shaping_panel(profile: str | None = None, seed: int | None = None) -> Panel:
    """Try it: a fixed p against a schedule of p, live."""
    cfg = ShapingConfig.for_profile(profile, seed=runtime.get_seed(seed))
    data = default_data()

    def run(update, p, p_start, p_end, lr, steps):
        c = cfg.replace(p_start=p_start, p_end=p_end, lr=lr, steps=int(steps))
        fixed, sched = f"p = {p:g}", f"p: {p_start:g} → {p_end:g}"
        runs = {}

        def build(h, name):
            return shaping_figure(dict(runs={**runs, name: h}, lr=lr), reference=fixed)

        both = [(fixed, p), (sched, linear_p_schedule(p_start, p_end, c.steps))]
        job = progress.current()  # the panel's bar and Stop
        for i, (name, pp) in enumerate(both):
            if job.stopped:
                break
            with job.part(i, 2):
                runs[name] = run_shaped(c, data, pp, on_eval=update.every(lambda h, n=name: build(h, n)))
        bad = [k for k, h in runs.items() if h.diverged]
        if bad:
            update(status="; ".join(f"{k}: {runs[k].status}" for k in bad))
        return shaping_figure(dict(runs=runs, lr=lr), reference=fixed) if runs else None

    return Panel(run, [Slider("p", -1.0, 1.5, 0.0, step=0.05)]
                 + controls_for(cfg, ["p_start", "p_end", "lr"])
                 + [Slider("steps", 20, 2000, cfg.steps, step=10, integer=True)],
                 title="Try it: a fixed p against a schedule of p",
                 above=results.provenance_of("spectral_shaping"), profile=profile)


# ================================================================ claims


def _n(value, missing: str) -> str:
    return plots.number(value, missing=missing)


def claims(band: dict, timing: list[dict], width: dict, practice: dict, memory: dict,
           batch: dict, shaping: dict, precomputed: list[dict] | None = None, *,
           cubic: dict | None = None, roles: dict | None = None, cost: dict | None = None,
           seed: int | None = None) -> list[dict]:
    """The papers' claims and the chapter's "What to notice" sentences beside this run's
    measurements, with a verdict computed from them. ``precomputed``: the rows on the files
    in ``data/`` (:func:`published_claims`), appended. ``cubic``: the cubic iteration's band
    on the same matrix as ``band``; ``roles``: ``{seed: steepest_table(...)}``; ``cost``:
    :func:`~.roles.step_seconds` (each adds its rows). ``seed``: the seed of the runs. Rows
    whose verdict can change with the profile, the seed or the machine are shown, not asserted
    (``asserted=False``): the prose glues them."""
    C, V = plots.claim, plots.verdict
    seed = runtime.get_seed(seed)
    one = [seed]
    k5 = band["k"].index(5)
    lo, hi = band["lo"][k5], band["hi"][k5]
    t = next((r for r in timing if r["n"] == 1024), timing[-1])
    ratio = t["svd_s"] / t["ns_float32_s"]
    on_gpu = t["device"] == "cuda"
    summ = practice_summary(practice)
    mu, ad, sg = summ["muon"], summ["adamw"], summ.get("momentum", {})
    pf = practice_facts(practice)
    mf = memory_facts(memory)
    f = mf["at_ratio"]
    bf = batch_facts(batch)
    cb = bf["critical"]
    rows = {r["update"]: r for r in shaping_summary(shaping)}
    sched, muon_row = rows[shaping["schedule"]], rows["p = 0"]
    el = early_and_late(shaping)
    pos = min((p for p in el["early"] if p > 0), key=el["early"].get)  # the best p > 0 early
    neg = min((p for p in el["late"] if p < 0), key=el["late"].get)    # the best p < 0 late
    early_ok, late_ok = el["early"][pos] < el["early"][0.0], el["late"][neg] < el["late"][0.0]
    halves = {(True, False): "; only the early half holds", (False, True):
              "; only the late half holds"}.get((early_ok, late_ok), "")
    ratio_w = width["widths"][-1] / width["widths"][0]
    g = {o: growth(width, o) for o in ("muon", "sgd", "adam")}
    below = all(c <= n + 1e-9 for o in width["change"]
                for c, n in zip(width["change"][o], width["norm"][o]))
    widths = f"widths {width['widths'][0]}–{width['widths'][-1]}"
    target = f"steps to training loss {practice['target']:g}"
    steps_text = (f"{ad['steps'] / mu['steps']:.1f}× fewer steps" if mu["steps"] and ad["steps"]
                  else f"{target}: Muon {_n(mu['steps'], 'not reached')},"
                       f" AdamW {_n(ad['steps'], 'not reached')}")
    saved = sched["saved"]
    memo = dict(control="one SGD step and one Newton step on the same pairs", seeds=one)
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
        C("One Muon step stores far more associations than one SGD step, and as "
          "many as Newton's method", "Kim et al. 2026",
          f"N = {mf['ratio']:g}d pairs: SGD {f['sgd']:.2f}, Muon {f['muon']:.2f}, Newton "
          f"{f['newton']:.2f} of them; Muon / Newton beyond N = d ≥ "
          f"{_n(mf['muon_over_newton_min'], '–')}"
          + ("; far more than SGD holds, as many as Newton does not"
             if f["muon"] >= 3 * f["sgd"] and f["muon"] < 0.8 * f["newton"] else ""),
          V(f["muon"] >= 3 * f["sgd"] and f["muon"] >= 0.8 * f["newton"],
            f["muon"] >= 3 * f["sgd"]), asserted=False, window=f"N = {mf['ratio']:g}d", **memo),
        C("Up to N = d Muon and Newton store almost every pair; past it one Muon step keeps "
          "several times as many as SGD", "Kim et al. 2026",
          f"N = d: SGD {mf['at_d']['sgd']:.2f}, Muon {mf['at_d']['muon']:.2f}, Newton "
          f"{mf['at_d']['newton']:.2f}; N = {mf['ratio']:g}d: Muon / SGD "
          f"{f['muon'] / max(f['sgd'], 1e-9):.1f}×",
          V(mf["at_d"]["muon"] >= 0.9 and mf["at_d"]["newton"] >= 0.9
            and mf["at_d"]["sgd"] < 0.5 and f["muon"] >= 3 * f["sgd"]),
          window=f"N = d and N = {mf['ratio']:g}d", **memo),
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
        C("Positive p helps early, mildly negative p late", "Wu et al. 2026 (DynMuon)",
          f"loss at step {EARLY_STEP}: p = {pos:g} {el['early'][pos]:.2f} vs Muon (p = 0) "
          f"{el['early'][0.0]:.2f}; final: p = {neg:g} {el['late'][neg]:.2f} vs Muon "
          f"{el['late'][0.0]:.2f}{halves}", V(early_ok and late_ok, early_ok or late_ok),
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
    return out + list(precomputed or [])


def steepest_margin(table: dict) -> float:
    """The smallest, over the norms of :func:`~.roles.steepest_table`, of the norm's own map's
    gain over the best other direction (the other maps and the random ones): above 1 when
    each map is its norm's steepest step."""
    return min(g[n] / max(max(v for k, v in g.items() if k != n), table["random"][n])
               for n, g in table["gain"].items())


def steepest_holds(table: dict) -> bool:
    """Whether, in every norm of :func:`~.roles.steepest_table`, the norm's own duality map
    gains more than the other maps and every random unit direction."""
    return all(g[n] > max(max(v for k, v in g.items() if k != n), table["random"][n])
               for n, g in table["gain"].items())


# ================================================================ the page's numbers
# What the prose says about a figure, computed from the data the figure shows: glued into its
# sentences (``dynamics.book.glue``) and checked as rows of the claims table.


def ns_band(lo: float = 1.5e-3, steps: int = 5, coeffs=MUON_COEFFS, n: int = 200_001) -> dict:
    """Where ``steps`` Newton–Schulz iterations send every singular value in ``[lo, 1]``
    (a fine log grid): the band ``[min, max]`` of the map, and ``f(1)`` after one and after
    ``steps`` iterations. A property of the polynomial, the same on every machine."""
    s = np.logspace(np.log10(lo), 0.0, n)
    y = ns_map(s, steps, coeffs)
    return dict(lo=lo, min=float(y.min()), max=float(y.max()), one_step_at_1=float(ns_map(1.0, 1, coeffs)),
                at_1=float(ns_map(1.0, steps, coeffs)))


def practice_facts(practice: dict) -> dict:
    """Section 3's numbers from :func:`~.experiments.run_practice`: steps to the target per
    optimizer, AdamW's steps over Muon's, and the float32 teaching Muon's steps over torch's."""
    s = practice_summary(practice)
    st = {k: v["steps"] for k, v in s.items()}
    mu, ad, fp = st.get("muon"), st.get("adamw"), st.get("muon_fp32")
    return dict(steps=st, adamw_over_muon=ad / mu if mu and ad else None,
                fp32_over_torch=fp / mu if mu and fp else None)


def fraction_at(memory: dict, method: str, ratio: float) -> float:
    """The fraction of pairs ``method`` stores at the N/d of :func:`~.experiments.run_memory`
    nearest to ``ratio``."""
    j = int(np.argmin([abs(x - ratio) for x in memory["ratios"]]))
    return memory["fraction"][method][j]


def memory_facts(memory: dict, ratio: float = 4) -> dict:
    """Section 4's numbers from :func:`~.experiments.run_memory`: the fractions stored by each
    method at N = d and at N = ``ratio``·d, and the smallest N/d (if any) where Muon stores at
    least 95% of what Newton's method does beyond N = d."""
    def at(r):
        j = int(np.argmin([abs(x - r) for x in memory["ratios"]]))
        return {m: memory["fraction"][m][j] for m in memory["fraction"]}
    beyond = [(r, memory["fraction"]["muon"][j], memory["fraction"]["newton"][j])
              for j, r in enumerate(memory["ratios"]) if r > 1]
    matches = [r for r, mu, nw in beyond if mu >= 0.95 * nw]
    return dict(at_d=at(1), at_ratio=at(ratio), ratio=ratio,
                muon_over_newton_min=min((mu / nw for _, mu, nw in beyond if nw > 0), default=None),
                muon_over_sgd_min=min((mu / max(sg, 1e-9) for (r, mu, _), sg in
                                       zip(beyond, [memory["fraction"]["sgd"][j] for j, x in
                                                    enumerate(memory["ratios"]) if x > 1])),
                                      default=None),
                matches_newton_from=min(matches) if matches else None)


def batch_facts(batch: dict) -> dict:
    """Section 4's batch-size numbers: the critical batches, and whether Muon stores at least
    as much as SGD at every batch size (up to a tie within 1% of the pairs at small batches,
    where each stores about every pair the batch drew) and more at every batch past SGD's
    critical one."""
    cb = {m: critical_batch(batch, m) for m in batch["recall"]}
    pairs = list(zip(batch["batch_sizes"], batch["recall"]["muon"], batch["recall"]["sgd"]))
    ties = all(mu >= sg - 0.01 for _, mu, sg in pairs)  # small batches: both store what they drew
    past = cb["sgd"] is not None and all(mu > sg for b, mu, sg in pairs if b > cb["sgd"])
    return dict(critical=cb, muon_ahead_everywhere=ties and past)


def timing_facts(timing: list[dict]) -> dict:
    """The timing table's ranges: SVD / NS₅ (CPU seconds on a CPU), the relative error from
    UVᵀ and the largest |σ − 1| over the sizes measured."""
    rows = timing_rows(timing)
    ratio = [r["SVD / NS₅"] for r in rows]
    err = [r["error vs UVᵀ"] for r in rows]
    sig = [r["max |σ − 1|"] for r in rows]
    return dict(ratio_max=max(ratio), err_lo=min(err), err_hi=max(err), sigma_lo=min(sig),
                sigma_hi=max(sig), device=timing[0].get("device", "cpu"))


def alpha_facts(by_alpha: dict) -> dict:
    """The precomputed memory over α, at N = d: each method's fraction per α."""
    out = {}
    for a, r in by_alpha.items():
        j = int(np.argmin([abs(x - 1) for x in r["ratios"]]))
        out[float(a)] = {m: r["fraction"][m][j] for m in r["fraction"]}
    return out


def shaping_lr_facts(by_lr: dict) -> dict:
    """The precomputed shaping runs per learning rate: final losses (``reference_loss``) of
    every run, keyed by rate and run name."""
    return {float(lr): {row["update"]: row["final_loss"] for row in shaping_summary(r)}
            for lr, r in by_lr.items()}


def _precomputed_rows(timing, sweeps_target, by_alpha, by_lr) -> list[dict]:
    """The claims rows that rest on the precomputed files (the same on every profile)."""
    C = plots.claim
    t = timing_facts(timing)
    sweeps, target = sweeps_target
    reach = rates_reaching(sweeps, target)
    af = alpha_facts(by_alpha)
    alphas = sorted(af)
    sgd = [af[a]["sgd"] for a in alphas]
    close = [a for a in alphas if a <= 1.5]
    steep = alphas[-1]
    sf = shaping_lr_facts(by_lr)
    lrs = sorted(sf)
    neg = {lr: [v for k, v in sf[lr].items() if k.startswith("p = -")] for lr in lrs}
    sched = {lr: next(v for k, v in sf[lr].items() if not k.startswith("p = ")) for lr in lrs}
    lowest = {lr: min(v for v in sf[lr].values() if v is not None) for lr in lrs}
    return [
        C("On a CPU, five Newton–Schulz steps are less than twice as fast as an SVD",
          "this book (precomputed timing)",
          f"SVD / NS₅ at most {t['ratio_max']:.2f}× ({t['device']}, float32)",
          plots.verdict(t["device"] == "cpu" and t["ratio_max"] < 2, scale=t["device"] != "cpu"),
          control="the SVD's CPU seconds on the same matrices", window="every size timed"),
        C("Five steps leave a square Gaussian matrix's weakest directions far from 1: about "
          "a fifth off UVᵀ at every size", "Jordan et al. 2024 (Muon)",
          f"relative error {t['err_lo']:.2f}–{t['err_hi']:.2f}, max |σ − 1| "
          f"{t['sigma_lo']:.2f}–{t['sigma_hi']:.2f}",
          plots.verdict(0.1 <= t["err_lo"] and t["err_hi"] <= 0.3 and t["sigma_lo"] >= 0.5),
          control="the exact UVᵀ from an SVD (error 0, every σ = 1)", window="every size timed"),
        C("Muon reaches the target at every learning rate swept, AdamW and SGD at fewer",
          "this book (precomputed sweep)",
          ", ".join(f"{SHORT.get(k, k)} {a} of {n}" for k, (a, n) in reach.items()),
          plots.verdict(reach["muon"][0] == reach["muon"][1]
                        and all(reach[k][0] < reach["muon"][0] for k in reach if k != "muon")),
          control="AdamW and SGD + momentum over their own swept rates",
          window="every rate swept"),
        C("At N = d the steeper the power law, the fewer pairs one SGD step stores; Newton "
          "stores all of them", "Kim et al. 2026",
          "SGD " + ", ".join(f"α {a:g}: {af[a]['sgd']:.2f}" for a in alphas)
          + "; Newton ≥ " + f"{min(af[a]['newton'] for a in alphas):.2f}",
          plots.verdict(all(b < a for a, b in zip(sgd, sgd[1:]))
                        and min(af[a]["newton"] for a in alphas) >= 0.95),
          control="Newton's one step on the same pairs",
          window=f"N = d, α {alphas[0]:g}–{alphas[-1]:g}"),
        C("Muon stays close to Newton at N = d up to α = 1.5; at the steepest α it falls well "
          "short of Newton but stores many times what SGD does", "Kim et al. 2026",
          "Muon / Newton " + ", ".join(f"α {a:g}: {af[a]['muon'] / af[a]['newton']:.2f}"
                                       for a in alphas)
          + f"; α {steep:g}: Muon / SGD {af[steep]['muon'] / max(af[steep]['sgd'], 1e-9):.0f}×",
          plots.verdict(all(af[a]["muon"] >= 0.8 * af[a]["newton"] for a in close)
                        and af[steep]["muon"] < 0.6 * af[steep]["newton"]
                        and af[steep]["muon"] >= 3 * af[steep]["sgd"]),
          control="Newton's and SGD's one step on the same pairs",
          window=f"N = d, α {alphas[0]:g}–{alphas[-1]:g}"),
        C("At every learning rate the fixed negative exponents end below Muon; at all but the "
          "lowest rate the schedule ends lowest of all, and at the lowest a fixed p = −0.5 "
          "ends at or within 20% of the schedule", "Wu et al. 2026 (DynMuon)",
          "; ".join(f"lr {lr:g}: p = 0 {sf[lr]['p = 0']:.3f}, negative p "
                    f"{', '.join(f'{v:.3f}' for v in neg[lr])}, schedule {sched[lr]:.3f}"
                    for lr in lrs),
          plots.verdict(all(all(v < sf[lr]["p = 0"] for v in neg[lr]) for lr in lrs)
                        and all(sched[lr] <= lowest[lr] for lr in lrs[1:])
                        and sf[lrs[0]].get("p = -0.5", float("inf")) <= 1.2 * sched[lrs[0]]),
          control="Muon (p = 0) at the same rate", window=f"rates {', '.join(map(str, lrs))}"),
    ]


def published_claims() -> list[dict]:
    """The claims rows that rest on the precomputed files in ``data/`` (the figures the
    published page shows), as in the page's claims table."""
    timing, _ = results.load("spectral_timing")
    sweeps, target, _, _ = load_practice()
    by_alpha, _ = results.load("spectral_memory")
    by_lr, _ = load_shaping()
    return _precomputed_rows(timing, (sweeps, target), by_alpha, by_lr)


def shaping_verdicts(shaping: dict) -> dict:
    """Section 5's glued verdicts on this run (they change with the profile and the seed):
    whether the best positive p beats Muon early and the best negative p beats it late, and
    whether the schedule ends below Muon's final loss."""
    el = early_and_late(shaping)
    pos = min((p for p in el["early"] if p > 0), key=el["early"].get)
    neg = min((p for p in el["late"] if p < 0), key=el["late"].get)
    early, late = el["early"][pos] < el["early"][0.0], el["late"][neg] < el["late"][0.0]
    words = {(True, True): "both hold", (True, False): "only the early half holds",
             (False, True): "only the late half holds", (False, False): "neither holds"}
    rows = {r["update"]: r for r in shaping_summary(shaping)}
    sched, muon = rows[shaping["schedule"]]["final_loss"], rows["p = 0"]["final_loss"]
    below = sched is not None and muon is not None and sched < muon
    return dict(early_late=words[early, late], sched_end="ends below" if below else "does not end below")


def timing_glue(timing: list[dict]) -> dict:
    """Section 2's glued numbers from the precomputed timing."""
    t = timing_facts(timing)
    return dict(ratio_max=f"{t['ratio_max']:.1f}×", err_lo=f"{t['err_lo']:.0%}",
                err_hi=f"{t['err_hi']:.0%}", sigma_lo=f"{t['sigma_lo']:.2f}",
                sigma_hi=f"{t['sigma_hi']:.2f}")


def sweep_glue(sweeps: dict, target: float) -> dict:
    """Section 3's glued numbers from the precomputed learning-rate sweeps."""
    return dict(reach=", ".join(f"{SHORT.get(k, k)} at {a} of its {n}"
                                for k, (a, n) in rates_reaching(sweeps, target).items()))


def alpha_glue(by_alpha: dict) -> dict:
    """Section 4's glued numbers from the precomputed memory over α (at N = d)."""
    af = alpha_facts(by_alpha)
    alphas = sorted(af)
    first, last = af[alphas[0]], af[alphas[-1]]
    return dict(sgd_first=f"{first['sgd']:.0%}", alpha_first=f"{alphas[0]:g}",
                sgd_last=f"{last['sgd']:.0%}", alpha_last=f"{alphas[-1]:g}",
                muon_last=f"{last['muon']:.0%}", newton_last=f"{last['newton']:.0%}")


def shaping_lr_glue(by_lr: dict) -> dict:
    """Section 5's glued numbers from the precomputed shaping runs: at the lowest rate, the
    final losses of the schedule and of a fixed p = −0.5."""
    sf = shaping_lr_facts(by_lr)
    low = sf[min(sf)]
    sched = next(v for k, v in low.items() if not k.startswith("p = "))
    return dict(lr_low=f"{min(sf):g}", sched_low=f"{sched:.3f}",
                neg_low=f"{low.get('p = -0.5', float('nan')):.3f}")


def cost_glue(practice: dict, cost: dict) -> dict:
    """Section 3's per-second numbers: the seconds of one step (milliseconds), Muon's step
    time over AdamW's, and AdamW's time to the target over Muon's, with words for the page
    ("ahead" or "behind"): wall-clock numbers, printed, never asserted."""
    steps = practice_facts(practice)["steps"]
    ps = per_second(steps, cost["median"])
    fp = per_second(steps, cost["median"], "muon_fp32")
    ms = {k: f"{1e3 * v:.1f} ms" for k, v in cost["median"].items()}

    def words(r):
        v = r["per_second"]
        return "not measured (a run missed the target)" if v is None else (
            f"ahead ({v:.2f}× sooner than AdamW)" if v >= 1 else
            f"behind (AdamW gets there in {v:.2f} of its time)")
    return dict(ms_muon=ms["muon"], ms_fp32=ms["muon_fp32"], ms_adamw=ms["adamw"],
                cost_muon=f"{ps['cost']:.1f}×", cost_fp32=f"{fp['cost']:.1f}×",
                per_second_muon=words(ps), per_second_fp32=words(fp), cost_reps=cost["reps"],
                cost_block=cost["block"])


def batch_counts(batch: dict, cfg: MemoryConfig) -> dict:
    """Exercise 5: how many pairs each method stores with the full gradient at N =
    ``batch['n']`` (the mean over the task's draws), beside the expected number of distinct
    pairs in a batch of B draws, Σᵢ 1 − (1 − pᵢ)ᴮ, for the task's frequencies."""
    from .science import memory_task

    n = batch["n"]
    _, _, freq = memory_task(n, cfg.dim, cfg.alpha, cfg.seed)
    p = freq.double()
    distinct = {b: float((1 - (1 - p) ** b).sum()) for b in batch["batch_sizes"]}
    return dict(n=n, stored={m: batch["full"][m] * n for m in batch["full"]},
                distinct=distinct, critical={m: critical_batch(batch, m) for m in batch["recall"]})
