"""Grokking, the views: live panels, the page's numbers and the claims table. The static
figures and sliders over precomputed data are in :mod:`.figures` (re-exported here)."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .. import plots
from .. import widgets as W
from ..runtime import get_seed
from .experiments import (
    GrokRun, critical_fraction, live_phase_config, progress_measures, restricted_leads, run,
    run_phase,
)
from .science import (
    DELAY, FIT_ACC, FOURIER_OPS, GROK_ACC, GrokConfig,
)

from .figures import *  # noqa: F401,F403  (re-exported: views.X still works)
from .figures import (phase_figure, progress_figure, training_figure)

__all__ = ["training_panel", "progress_panel", "remedy_panel", "phase_panel", "claims", "at_fit",
           "phase_facts", "clock_ratios", "clock_fit", "phase_claims", "phase_glue",
           "live_phase_facts", "section1_facts", "remedy_facts", "corrupted_facts",
           "corrupted_glue", "progress_glue", "published_claims"]


# ============================================================================ live panels


def _title(cfg: GrokConfig) -> str:
    extra = "" if cfg.remedy == "none" else f", {cfg.remedy}"
    noise = f", {cfg.label_noise:.0%} noise" if cfg.label_noise else ""
    return f"{cfg.op} mod {cfg.p}, {cfg.train_frac:.0%} train, wd {cfg.weight_decay:g}{extra}{noise}"


def _run_panel(base: GrokConfig, names, seed: int, progress_view: bool = False, title: str = ""):
    """A live panel over some :class:`GrokConfig` fields: train one run, redraw while it
    trains (Stop ends it and shows what it has), and show the training curves (or, with
    ``progress_view``, the progress measures)."""
    controls = []
    for name in names:
        if name == "p":  # below the config's range: a live run must stay short
            controls.append(W.Slider("p", 5, 127, value=base.p, integer=True, description="p"))
        else:
            controls += W.controls_for(base, [name])

    def go(update, **values):
        cfg = base.replace(**values)
        if progress_view and cfg.op not in FOURIER_OPS:
            raise ValueError(f"the Fourier progress measures need op in {FOURIER_OPS}, not {cfg.op!r}")
        live = update.every(lambda h: training_figure(h, title=_title(cfg), marks=False))
        r = run(cfg, seed, on_eval=live, checkpoints=progress_view, progress=False)
        if update.stop_requested:  # stopped: draw what it has (the panel says "stopped")
            return training_figure(r, title=_title(cfg))
        update(status=r.status())
        if progress_view and not r.history.diverged and len(r.checkpoints) > 1:
            update(status=r.status() + " · measuring…")
            pm = progress_measures(r)
            update(status=r.status())
            return progress_figure(pm, title=_title(cfg))
        return training_figure(r, title=_title(cfg))

    note = (f"{base.steps:,} full-batch steps, seed {seed}; fit = train accuracy > {FIT_ACC:.0%}, "
            f"generalize = test accuracy > {GROK_ACC:.0%}.")
    return W.Panel(go, controls, title=title, note=note, above="live")


def training_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your p, operation, training fraction, weight decay, learning
    rate, width and optimizer (AdamW or Muon); the curves redraw while it trains."""
    base = GrokConfig.for_profile(profile)
    return _run_panel(base, ["p", "op", "train_frac", "weight_decay", "lr", "width", "optimizer"],
                      get_seed(seed), title="Try it: grokking live")


def progress_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the progress measures of one run (modular addition or subtraction)."""
    base = GrokConfig.for_profile(profile)
    return _run_panel(base, ["p", "op", "train_frac", "weight_decay", "lr"], get_seed(seed),
                      progress_view=True, title="Try it: progress measures live")


def remedy_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with a remedy (Grokfast, ⊥Grad, StableMax), weight decay, optimizer
    and label noise of your choice."""
    base = GrokConfig.for_profile(profile)
    return _run_panel(base, ["remedy", "weight_decay", "grokfast_alpha", "grokfast_lambda",
                             "label_noise", "optimizer"], get_seed(seed),
                      title="Try it: remedies live")


def phase_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small phase diagram (training fraction x weight decay) with your p,
    learning rate, width and budget, trained at once by the sweep engine, with progress."""
    base = live_phase_config(profile)
    seed = get_seed(seed)
    controls = [W.Slider("p", 5, 61, value=base.p, integer=True, description="p")]
    controls += W.controls_for(base, ["lr", "width"])
    controls.append(W.Slider("steps", 100, 5000, value=base.steps, integer=True, step=100,
                             description="steps"))

    def go(update, **values):
        pcfg = base.replace(**values, seeds=1)
        n = len(pcfg.train_fracs) * len(pcfg.weight_decays)
        update(status=f"training {n} models…")
        out = run_phase(pcfg, seed, progress=False)
        rows = out["rows"]
        bad = [r["phase"] for r in rows if r["phase"] in ("diverged", "not run", "stopped")]
        done = f"{n - bad.count('not run') - bad.count('stopped')} of {n} models trained"
        if bad.count("diverged"):
            done += f", {bad.count('diverged')} diverged"
        if not update.stop_requested:  # stopped: the panel says so; draw what ran
            update(status=done)
        return phase_figure(rows, title=f"mod {pcfg.p}, {pcfg.steps:,} steps")

    note = (f"training fractions {base.train_fracs} x weight decays {base.weight_decays}, "
            f"seed {seed}")
    return W.Panel(go, controls, title="Try it: a phase diagram live", note=note, above="live")


# ============================================================================ claims


def _at(series: list, steps: list, step):
    """``series`` at ``step`` (the last value when ``step`` is None or not recorded)."""
    return series[steps.index(step)] if step in steps else series[-1]


def at_fit(pm: dict, key: str) -> float:
    """A progress measure of :func:`~.experiments.progress_measures` at the fit step (the last
    value when the run never fit)."""
    return _at(pm[key], pm["step"], pm["fit_step"])


def claims(first: GrokRun, control: GrokRun, pm: dict, speed: dict, corrupted: dict,
           grid_rows: list[dict], live_rows: list[dict] | None = None,
           other: GrokRun | None = None, grid_lr: float | None = None) -> list[dict]:
    """The papers' claims and the chapter's "What to notice" sentences beside what this run of
    the notebook measured (rows of :func:`dynamics.plots.claim`): ``first`` and ``control`` are
    section 1's runs with and without weight decay, ``other`` its division run, ``pm`` their
    progress measures, ``speed`` the remedies' :func:`~.experiments.speedups`, ``corrupted``
    :func:`~.experiments.run_corrupted`, ``grid_rows`` the precomputed phase diagram (its rows
    are :func:`phase_claims`, with ``grid_lr`` its learning rate) and ``live_rows`` the live
    one. Rows whose verdict can change with the profile are not asserted (``asserted=False``):
    the prose glues their verdict instead."""
    C = plots.claim
    fit, grok = first.fit_step, first.grok_step
    h = first.history
    delayed = fit is not None and grok is not None and grok >= DELAY * fit
    ratio = f" ({grok / fit:.0f}x later)" if fit and grok else ""
    rows = [C("Test accuracy jumps to ~100% long after training accuracy does (grokking)",
              "Power et al. 2022",
              f"train > {FIT_ACC:.0%} at step {fit}, test > {GROK_ACC:.0%} at step {grok}{ratio}; "
              f"final test accuracy {h.last('test_acc'):.1%}",
              plots.verdict(delayed, grok is not None))]
    s1 = section1_facts(first, other or first)
    rises = s1["loss_peak"] > s1["loss_start"] and grok is not None and s1["peak_step"] < grok / 2
    rows.append(C("The test loss rises while the network memorizes and falls through the plateau, "
                  "well before the test accuracy moves", "Nanda et al. 2023",
                  f"test loss {s1['loss_start']:.2f} at step 0, peak {s1['loss_peak']:.2f} at step "
                  f"{s1['peak_step']}; grok step {grok}", plots.verdict(rises)))
    if other is not None:
        r = s1["div_ratio"]
        rows.append(C("Division groks on a similar schedule to addition", "Power et al. 2022",
                      f"a / b groks at step {other.grok_step}, a + b at {grok}",
                      plots.verdict(r is not None and 0.5 <= r <= 2)))
    rows.append(C("Without weight decay the network memorizes and does not generalize",
                  "Nanda et al. 2023; Liu et al. 2023",
                  f"same budget, no weight decay: fit at step {control.fit_step}, final test "
                  f"accuracy {control.history.last('test_acc'):.1%}",
                  plots.verdict(control.fit_step is not None and control.grok_step is None)))
    if live_rows:
        lf = phase_facts(live_rows)
        rows.append(C("Live grid: without weight decay every network memorizes",
                      "Liu et al. 2023", "no decay: " + ", ".join(sorted(
                          {r["phase"] for r in live_rows if r["weight_decay"] == 0})),
                      plots.verdict(bool(lf["no_decay_memorizes"]))))
    rows += phase_claims(grid_rows, lr=grid_lr)
    steps = pm["step"]
    norm_fit, norm_end = _at(pm["weight_norm"], steps, fit), pm["weight_norm"][-1]
    conc_fit, conc_end = _at(pm["fourier_top10"], steps, fit), pm["fourier_top10"][-1]
    rows.append(C("During the plateau the weight norm falls and the input weights become sparse "
                  "in the Fourier basis", "Nanda et al. 2023",
                  f"weight norm {norm_fit:.1f} at the fit step, {norm_end:.1f} at the end; "
                  f"top-10% share per unit {conc_fit:.2f} → {conc_end:.2f}; the logits use "
                  f"{len(pm['keys'])} of {pm['n_frequencies']} frequencies",
                  plots.verdict(norm_end < norm_fit and conc_fit < 0.5 < conc_end)))
    end = pm["spectra"]["end"]
    rows.append(C("Each unit reads few frequencies, the layer as a whole several",
                  "Nanda et al. 2023",
                  f"top-10% share at the end: per unit {end['concentration']:.2f}, whole layer "
                  f"{end['layer_concentration']:.2f}",
                  plots.verdict(end["concentration"] > end["layer_concentration"] + 0.2)))
    test_loss = dict(zip(pm["history_steps"], pm["test_loss"]))
    r_fit, r_grok = _at(pm["restricted_loss"], steps, fit), _at(pm["restricted_loss"], steps, grok)
    t_fit, t_grok = test_loss.get(fit, float("nan")), test_loss.get(grok, float("nan"))
    after = steps.index(fit) if fit in steps else 0
    e_fit, e_peak = pm["excluded_loss"][after], max(pm["excluded_loss"][after:])
    ahead = restricted_leads(pm)
    rows.append(C("Restricted loss falls before the test loss does; excluded loss rises",
                  "Nanda et al. 2023",
                  f"fit → grok step: restricted loss {r_fit:.2f} → {r_grok:.2f}, test loss "
                  f"{t_fit:.2f} → {t_grok:.2f}; excluded loss {e_fit:.2f} at the fit step, "
                  f"up to {e_peak:.2f} after it",
                  plots.verdict(ahead and e_peak > e_fit, ahead)))

    def remedy(name: str, claim: str, paper: str, want: float, failed: str,
               asserted: bool = True) -> dict:
        """A remedy's row: "yes" at ``want`` x the baseline's speed or more, "partly" when
        faster but less, else ``failed`` ("no", or "not at this scale" where the paper's
        setting is much slower to grok than ours)."""
        if name not in speed or "baseline" not in speed:
            return C(claim, paper, "not run here", "not at this scale", asserted=False)
        v, base = speed[name], speed["baseline"]
        if not v["grokked"]:
            return C(claim, paper, f"did not grok within {v['steps']:,.0f} steps", failed,
                     asserted=asserted)
        got = (f"grokked at step {v['steps']:,.0f} vs {base['steps']:,.0f}: "
               f"{v['speedup']:.2f}x the baseline's speed")
        return C(claim, paper, got, "yes" if v["speedup"] >= want else
                 ("partly" if v["speedup"] > 1.05 else failed), asserted=asserted)

    rows += [
        remedy("strong_wd", "More weight decay, faster grokking", "Liu et al. 2023; Tian 2025",
               1.5, "no"),
        remedy("perp_grad", "⊥Grad groks without weight decay, sooner than the baseline",
               "Prieto et al. 2025", 1.5, "no"),
        remedy("grokfast", "Grokfast-EMA (α 0.98, λ 2) groks up to ~50x faster", "Lee et al. 2024",
               10, "not at this scale", asserted=False),
        remedy("stablemax", "StableMax groks without weight decay", "Prieto et al. 2025", 1.0,
               "not at this scale", asserted=False),
    ]
    cf = corrupted_facts(corrupted)
    coexist = cf["mem_low"] > 0.9 and cf["test_low"] > 0.5
    corrects = cf["mem_high"] < cf["mem_low"] - 0.1 and cf["corr_high"] > corrupted["runs"][0][
        "final_corrected"] and cf["test_high"] >= cf["test_low"] - 0.01
    rows.append(C("A network can memorize corrupted labels and still generalize",
                  "Doshi et al. 2024",
                  f"{cf['noise']:.0%} corrupted; wd {cf['wd_low']:g}: memorized "
                  f"{cf['mem_low']:.0%}, test {cf['test_low']:.0%}", plots.verdict(coexist)))
    rows.append(C("A larger weight decay memorizes fewer wrong labels, corrects some, and "
                  "generalizes at least as well", "Doshi et al. 2024",
                  f"wd {cf['wd_high']:g}: memorized {cf['mem_high']:.0%}, corrected "
                  f"{cf['corr_high']:.0%}, test {cf['test_high']:.0%}", plots.verdict(corrects)))
    rows.append(C("Regularization makes the network ignore the corruption (predict the true "
                  "labels of the corrupted pairs)", "Doshi et al. 2024",
                  f"wd {cf['wd_high']:g}: corrected {cf['corr_high']:.0%} of them",
                  plots.verdict(cf["corr_high"] > 0.5, corrects), asserted=False))
    if live_rows:
        live = critical_fraction(live_rows)
        rows.append(C("Live grid: with weight decay 1 a large enough fraction generalizes",
                      "Power et al. 2022", "smallest fraction that generalizes: "
                      + ("none" if live is None else f"{live:.0%}"), plots.verdict(live is not None)))
    return rows


# ============================================================================ the page's numbers
# What the prose says about a figure, computed from the data that figure shows: glued into the
# sentences (``dynamics.book.glue``) and checked as rows of the claims table.


def _good(r: dict) -> bool:
    return r["phase"] in ("grokking", "comprehension")


def _falls(steps: list) -> bool:
    """Whether a sequence of grok steps never rises (cells that do not generalize skipped)."""
    s = [t for t in steps if t is not None]
    return all(b <= a for a, b in zip(s, s[1:]))


def phase_facts(rows: list[dict]) -> dict:
    """The numbers of section 2's "What to notice", from a phase grid's rows: the critical
    training fraction per weight decay, whether the grok step falls along every row and column
    (weight decays below the strongest), the strongest decay's column (its phases, its lowest
    final training loss against the highest of the weaker decays, a cell that passed both
    thresholds there), and whether every cell without decay memorizes."""
    wds = sorted({r["weight_decay"] for r in rows})
    fracs = sorted({r["train_frac"] for r in rows})
    strongest = wds[-1]
    by = {(r["train_frac"], r["weight_decay"]): r for r in rows}
    grok = {k: r["grok_step"] if _good(r) else None for k, r in by.items()}
    inner = [w for w in wds if 0 < w < strongest]
    crit = {w: critical_fraction(rows, w) for w in wds if w > 0}
    column = [by[f, strongest] for f in fracs if (f, strongest) in by]
    weaker = [r for r in rows if r["weight_decay"] < strongest]
    passed = [r for r in column if r["fit_step"] is not None and r["grok_step"] is not None]
    good = [r["train_frac"] for r in rows if _good(r)]
    return dict(
        crit=crit, smallest=min(good) if good else None, strongest=strongest, inner=inner,
        falls_rows=all(_falls([grok.get((f, w)) for w in inner]) for f in fracs),
        falls_cols=all(_falls([grok.get((f, w)) for f in fracs]) for w in inner),
        crit_falls=_falls([crit[w] for w in inner]),
        no_decay_memorizes=all(by[f, 0.0]["phase"] == "memorization" for f in fracs
                               if (f, 0.0) in by) if 0.0 in wds else None,
        strong_phases=sorted({r["phase"] for r in column}),
        strong_loss_min=min(r["final_train_loss"] for r in column),
        weak_loss_max=max(r["final_train_loss"] for r in weaker),
        strong_passed=[(r["train_frac"], r["grok_step"]) for r in passed],
        confusion=sum(r["phase"] == "confusion" for r in rows))


def clock_ratios(rows: list[dict]) -> list[dict]:
    """How much a stronger weight decay shortens the wait, against the 1/(ηλ) clock: for each
    training fraction and each pair of neighbouring decays (both above 0, below the strongest)
    where both cells generalize, the ratio of grok steps beside the ratio of decays (the
    factor the clock predicts)."""
    facts = phase_facts(rows)
    by = {(r["train_frac"], r["weight_decay"]): r for r in rows}
    out = []
    for f in sorted({r["train_frac"] for r in rows}):
        for lo, hi in zip(facts["inner"], facts["inner"][1:]):
            a, b = by.get((f, lo)), by.get((f, hi))
            if a and b and _good(a) and _good(b):
                out.append(dict(train_frac=f, weight_decays=(lo, hi), clock=hi / lo,
                                measured=a["grok_step"] / b["grok_step"]))
    return out


def clock_fit(rows: list[dict], lr: float) -> list[dict]:
    """The wait as a fixed part plus a number of clock periods: for each training fraction
    where at least three decays (above 0, below the strongest) generalize, the least-squares
    fit ``grok step ≈ offset + periods / (ηλ)``, with its largest relative error."""
    facts = phase_facts(rows)
    by = {(r["train_frac"], r["weight_decay"]): r for r in rows}
    out = []
    for f in sorted({r["train_frac"] for r in rows}):
        pts = [(1 / (lr * w), by[f, w]["grok_step"]) for w in facts["inner"]
               if (f, w) in by and _good(by[f, w])]
        if len(pts) < 3:
            continue
        x, y = np.array(pts, dtype=float).T
        a = np.vstack([np.ones_like(x), x]).T
        (offset, periods), *_ = np.linalg.lstsq(a, y, rcond=None)
        err = float(np.max(np.abs(a @ [offset, periods] - y) / y))
        out.append(dict(train_frac=f, offset=float(offset), periods=float(periods),
                        max_rel_error=err, n=len(pts)))
    return out


def phase_claims(rows: list[dict], lr: float | None = None) -> list[dict]:
    """The rows of section 2's "What to notice", computed from a phase grid (the precomputed
    one the page shows); ``lr`` (the grid's learning rate) puts ηλ of the strongest decay into
    its row."""
    C = plots.claim
    f = phase_facts(rows)
    ratios = clock_ratios(rows)
    fits = clock_fit(rows, lr) if lr else []
    crit = ", ".join(f"{w:g}: {'none' if c is None else f'{c:.0%}'}" for w, c in f["crit"].items())
    counts = Counter(r["phase"] for r in rows)
    four = ("comprehension", "grokking", "memorization", "confusion")
    seen = ", ".join(f"{counts[k]} {k}" for k in (*four, "un-learning") if counts[k])
    clock = "; ".join(f"{r['train_frac']:.0%}, wd {r['weight_decays'][0]:g} → "
                      f"{r['weight_decays'][1]:g}: {r['measured']:.1f}x (clock {r['clock']:.1f}x)"
                      for r in ratios)
    el = f", ηλ = {lr * f['strongest']:g}" if lr else ""
    return [
        C("Without weight decay every network memorizes", "Liu et al. 2023",
          "no decay: " + ", ".join(sorted({r["phase"] for r in rows if r["weight_decay"] == 0})),
          plots.verdict(bool(f["no_decay_memorizes"]))),
        C("More data and more decay shorten the wait: the grok step falls along every row and "
          "column", "Power et al. 2022; Liu et al. 2023",
          f"weight decays {', '.join(f'{w:g}' for w in f['inner'])}: along rows "
          f"{'falls' if f['falls_rows'] else 'does not fall'}, along columns "
          f"{'falls' if f['falls_cols'] else 'does not fall'}",
          plots.verdict(f["falls_rows"] and f["falls_cols"])),
        C("A stronger decay shortens the wait, by less than the 1/(ηλ) clock's factor",
          "the clock of the weight-decay chapter",
          clock or "no neighbouring cells both generalize",
          plots.verdict(bool(ratios) and all(1 < r["measured"] < r["clock"] for r in ratios))),
        C("The wait is a fixed part plus a number of clock periods 1/(ηλ), more of them "
          "with less data", "the clock of the weight-decay chapter",
          "; ".join(f"{r['train_frac']:.0%}: {r['offset']:.0f} steps + {r['periods']:.1f}/(ηλ), "
                    f"within {r['max_rel_error']:.0%}" for r in fits) or "too few cells",
          plots.verdict(bool(fits) and all(r["max_rel_error"] < 0.2 and r["offset"] > 0
                                           for r in fits)
                        and _falls([r["periods"] for r in fits])), asserted=lr is not None),
        C("Below a critical training fraction the network only memorizes; the critical "
          "fraction falls as the decay grows", "Power et al. 2022; Liu et al. 2022",
          f"smallest fraction that generalizes, per weight decay: {crit}",
          plots.verdict(f["smallest"] is not None and f["smallest"] > min(r["train_frac"] for r in rows)
                        and f["crit_falls"])),
        C(f"The strongest decay un-learns: every cell of its column loses part of what it "
          f"learned, its training loss far above the weaker decays'", "Liu et al. 2022",
          f"weight decay {f['strongest']:g}{el}: {', '.join(f['strong_phases'])}; final training "
          f"loss ≥ {f['strong_loss_min']:.2f} against ≤ {f['weak_loss_max']:.3f} below it",
          plots.verdict(f["strong_phases"] == ["un-learning"]
                        and f["strong_loss_min"] > 10 * f["weak_loss_max"])),
        C("Four phases: comprehension, grokking, memorization, confusion", "Liu et al. 2022",
          f"precomputed grid ({len(rows)} cells): {seen}",
          plots.verdict(all(counts[k] for k in four), sum(bool(counts[k]) for k in four) >= 3),
          asserted=False),
    ]


def phase_glue(rows: list[dict], lr: float, p: int) -> dict:
    """Section 2's glued numbers (names as in the chapter) from the precomputed grid (its
    learning rate ``lr`` and modulus ``p``)."""
    f = phase_facts(rows)
    fits = clock_fit(rows, lr)
    ratios = clock_ratios(rows)
    pct = lambda v: "none" if v is None else f"{v:.0%}"  # noqa: E731
    inner = f["inner"]
    passed = f["strong_passed"]
    return dict(
        crit_first=pct(f["crit"][inner[0]]), wd_first=f"{inner[0]:g}",
        crit_last=pct(f["crit"][inner[-1]]), wd_last=f"{inner[-1]:g}",
        smallest=pct(f["smallest"]), wd_strong=f"{f['strongest']:g}",
        lr_wd_strong=f"{lr * f['strongest']:g}",
        strong_loss=f"{f['strong_loss_min']:.2f}", weak_loss=f"{f['weak_loss_max']:.3f}",
        strong_passed=("no cell of it passes both thresholds" if not passed else
                       f"at fraction {passed[-1][0]:g} it even passes both thresholds by step "
                       f"{passed[-1][1]} before falling back"),
        confusion=("No cell shows" if not f["confusion"] else f"{f['confusion']} cells show"),
        clock_lo=f"{min(r['measured'] for r in ratios):.1f}" if ratios else "–",
        clock_hi=f"{max(r['measured'] for r in ratios):.1f}" if ratios else "–",
        clock_factor=(f"{min(r['clock'] for r in ratios):.0f} to {max(r['clock'] for r in ratios):.1f}"
                      if ratios else "–"),
        ln_p=f"ln {p} ≈ {math.log(p):.1f}",
        fit_offsets=(f"{min(r['offset'] for r in fits):.0f} to {max(r['offset'] for r in fits):.0f}"
                     if fits else "–"),
        fit_periods=", ".join(f"{r['periods']:.1f} at {r['train_frac']:.0%}" for r in fits) or "–",
        fit_error=f"{max(r['max_rel_error'] for r in fits):.0%}" if fits else "–")


def live_phase_facts(rows: list[dict]) -> dict:
    """Section 2's sentences about the live grid: every cell without decay memorizes, and the
    smallest fraction that generalizes at weight decay 1."""
    f = phase_facts(rows)
    crit = f["crit"].get(min(f["crit"], key=lambda w: abs(w - 1.0))) if f["crit"] else None
    return dict(no_decay=("memorization in every cell" if f["no_decay_memorizes"] else
                          "not memorization in every cell"),
                live_crit="no fraction" if crit is None else f"{crit:.0%}")


def section1_facts(first: GrokRun, other: GrokRun) -> dict:
    """Section 1's numbers: the fit and grok steps, the delay (grok / fit), the test loss's
    rise while memorizing (its start, its peak and where) and the division run's grok step
    relative to addition's."""
    h = first.history
    loss, steps = list(h["test_loss"]), list(h.steps)
    i = int(np.argmax(loss))
    fit, grok = first.fit_step, first.grok_step
    return dict(fit=fit, grok=grok, delay=grok / fit if fit and grok else None,
                loss_start=loss[0], loss_peak=loss[i], peak_step=steps[i],
                div_grok=other.grok_step,
                div_ratio=other.grok_step / grok if other.grok_step and grok else None)


def remedy_facts(speed: dict) -> dict:
    """Section 4's numbers from :func:`~.experiments.speedups`: each remedy's speed-up over the
    baseline (0 when it did not grok), and words for the verdicts the prose glues."""
    s = {k: (v["speedup"] if v["grokked"] else 0.0) for k, v in speed.items()}
    g = s.get("grokfast", 0.0)
    return dict(
        speed=s,
        strong=s.get("strong_wd", 0.0),
        strong_vs_clock=("less than" if s.get("strong_wd", 0) < 3 else "at least"),
        grokfast=("does not grok within the budget" if not g else
                  f"slows this full-batch MLP ({g:.2f}x the baseline's speed)" if g < 1 else
                  f"speeds up this full-batch MLP ({g:.2f}x the baseline's speed)"),
        stablemax=("does not make the network generalize within the budget"
                   if not s.get("stablemax") else
                   f"makes the network generalize ({s['stablemax']:.2f}x the baseline's speed)"))


def corrupted_facts(out: dict) -> dict:
    """Section 4's corrupted-label numbers: the smallest and largest weight decay's memorized,
    corrected and test shares at the end."""
    low, high = out["runs"][0], out["runs"][-1]
    return dict(wd_low=low["weight_decay"], wd_high=high["weight_decay"],
                mem_low=low["final_memorized"], test_low=low["final_test_acc"],
                mem_high=high["final_memorized"], corr_high=high["final_corrected"],
                test_high=high["final_test_acc"], noise=out["noise"])


def progress_glue(pm: dict) -> dict:
    """Section 3's glued numbers: the Fourier concentration of the initial weights, at the fit
    step and at the end, and at the end per unit against the whole layer."""
    end = pm["spectra"]["end"]
    return dict(conc_init=pm["fourier_top10"][0], conc_fit=at_fit(pm, "fourier_top10"),
                conc_end=pm["fourier_top10"][-1], unit_conc=end["concentration"],
                layer_conc=end["layer_concentration"])


def corrupted_glue(out: dict) -> dict:
    """Section 4's glued corrupted-label numbers (:func:`corrupted_facts`, as percentages)."""
    cf = corrupted_facts(out)
    pct = {k: f"{cf[k]:.0%}" for k in ("mem_low", "test_low", "mem_high", "corr_high", "test_high")}
    return dict(pct, wd_low=f"{cf['wd_low']:g}", wd_high=f"{cf['wd_high']:g}")


def published_claims() -> list[dict]:
    """The claims rows that rest on the precomputed phase diagram in ``data/`` (the figure the
    published page shows), as in the page's claims table."""
    from .. import results

    payload, prov = results.load("grokking_phase")
    return phase_claims(payload["rows"], lr=prov["config"]["phase"]["lr"])
