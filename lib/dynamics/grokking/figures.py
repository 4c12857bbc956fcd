"""Grokking, the figures: training curves, progress measures, the phase diagram and its
sliders over precomputed data, the remedies' and the corrupted labels' figures and tables, and the page's numbers (what the
prose glues about a figure, from the data it shows).
Layout (legends, sliders, margins, log ticks) is the house layout's
(:func:`dynamics.plots.house`); builders here say only what to draw. The live panels and
the claims are in :mod:`.views`, which re-exports these."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .. import plots
from ..sweep import SweepResult, table_grid
from ..train import History
from .experiments import GrokRun, critical_fraction
from .science import fit_and_grok, plateau_steps

__all__ = ["REMEDY_LABELS", "training_figure", "progress_figure", "spectrum_figure",
           "phase_figure", "phase_slider", "curves_slider", "runs_table", "remedies_figure",
           "remedy_table", "corrupted_figure", "corrupted_table", "at_fit", "phase_facts",
           "clock_ratios", "clock_fit", "phase_glue", "live_phase_facts", "corrupted_facts",
           "progress_glue", "corrupted_glue", "section1_facts", "remedy_facts"]

REMEDY_LABELS = {
    "baseline": "AdamW (baseline)",
    "strong_wd": "3x weight decay",
    "grokfast": "Grokfast-EMA",
    "perp_grad": "⊥Grad, no wd",
    "stablemax": "StableMax, no wd",
    "muon": "Muon",
    "no_wd": "no weight decay",
}


# ============================================================================ training curves


def _histories(runs) -> dict:
    if isinstance(runs, (GrokRun, History)):
        runs = {"": runs}
    return {name: (r.history if isinstance(r, GrokRun) else r) for name, r in runs.items()}


def _steps(h) -> np.ndarray:
    return np.maximum(np.asarray(h.steps if isinstance(h, History) else h, dtype=float), 1)


def training_figure(runs, title: str = "", marks: bool = True):
    """Train (solid) and test (dashed) accuracy, and loss, against step on a log axis, for
    one run or a dict of runs; the first run's fit and grok steps marked."""
    hs = _histories(runs)
    fig = plots.subplots(1, 2, titles=("accuracy", "loss"), title=title)
    for i, (name, h) in enumerate(hs.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        for split in ("train", "test"):
            label = " · ".join(x for x in (name, split) if x) + (" (diverged)" if h.diverged else "")
            line = dict(color=color, dash="solid" if split == "train" else "dash")
            fig.add_scatter(x=_steps(h), y=h[f"{split}_acc"], name=label, line=line,
                            legendgroup=label, row=1, col=1)
            fig.add_scatter(x=_steps(h), y=h[f"{split}_loss"], name=label, line=line,
                            legendgroup=label, showlegend=False, row=1, col=2)
    fig.update_xaxes(type="log", title_text="step")
    fig.update_yaxes(range=[-0.02, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    if marks and hs:
        fit, grok = fit_and_grok(next(iter(hs.values())))
        _mark(fig, fit, grok, rows=[1], cols=[1, 2])
    return fig


def _mark(fig, fit, grok, rows, cols) -> None:
    """Dotted lines at the fit and grok steps in every panel, labelled in the first."""
    for n, (row, col) in enumerate((r, c) for r in rows for c in cols):
        for step, label in ((fit, "fit"), (grok, "grok")):
            if step is None:
                continue
            if n == 0:
                plots.mark_step(fig, step, f"{label} {step}", row=row, col=col, logx=True)
            else:
                fig.add_vline(x=step, line=dict(color="#555", dash="dot", width=1), row=row, col=col)


def progress_figure(pm: dict, title: str = ""):
    """The plateau is not idle: train/test loss with the restricted and excluded loss (top),
    the total weight norm (middle) and the Fourier concentration of the input layer
    (bottom), against step on a log axis, fit and grok steps marked."""
    fig = plots.subplots(3, 1, titles=("loss (training pairs unless marked)", "weight norm ‖θ‖",
                                       "Fourier concentration (top-10% share)"),
                         title=title, height=760, shared_xaxes=True, vertical_spacing=0.08)
    hs, cs = _steps(pm["history_steps"]), _steps(pm["step"])
    P = plots.PALETTE
    fig.add_scatter(x=hs, y=pm["train_loss"], name="train loss", line=dict(color=P[0]), row=1, col=1)
    fig.add_scatter(x=hs, y=pm["test_loss"], name="test loss (test pairs)",
                    line=dict(color=P[0], dash="dash"), row=1, col=1)
    fig.add_scatter(x=cs, y=pm["restricted_loss"], name="restricted loss",
                    line=dict(color=P[3]), row=1, col=1)
    fig.add_scatter(x=cs, y=pm["excluded_loss"], name="excluded loss", line=dict(color=P[1]),
                    row=1, col=1)
    fig.add_scatter(x=cs, y=pm["weight_norm"], name="weight norm", line=dict(color=P[4]),
                    showlegend=False, row=2, col=1)
    fig.add_scatter(x=cs, y=pm["fourier_top10"], name="Fourier concentration",
                    line=dict(color=P[2]), showlegend=False, row=3, col=1)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=3, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=3, col=1)
    fig.update_layout(hovermode="x unified")
    _mark(fig, pm.get("fit_step"), pm.get("grok_step"), rows=[1, 2, 3], cols=[1])
    return fig


def spectrum_figure(spectra: dict, p: int, title: str = ""):
    """Left: the input layer's Fourier energy per frequency at the fit step and at the end.
    Right: the strongest units' own spectra at the end (one row each, sorted by their
    dominant frequency): each unit reads about one frequency."""
    fig = plots.subplots(1, 2, titles=("whole layer", "strongest units, at the end"),
                         title=title, column_widths=[0.55, 0.45], horizontal_spacing=0.12)
    k = list(range(p // 2 + 1))
    for i, (when, label) in enumerate((("fit", "at the fit step"), ("end", "at the end"))):
        if when in spectra:
            fig.add_bar(x=k, y=spectra[when]["layer"], marker_color=plots.PALETTE[i], name=label,
                        row=1, col=1)
    if "end" in spectra:
        fig.add_heatmap(z=spectra["end"]["units"], x=k, colorscale="Viridis", showscale=False,
                        hovertemplate="frequency %{x}<br>unit %{y}<br>share %{z:.2f}<extra></extra>",
                        row=1, col=2)
    fig.update_xaxes(title_text="frequency k")
    fig.update_yaxes(title_text="share of energy", row=1, col=1)
    fig.update_yaxes(title_text="unit", row=1, col=2)
    fig.update_layout(hovermode="closest", barmode="group")
    return fig


# ============================================================================ phase diagram

def _cell_text(rows: list[dict]) -> str:
    """A cell's label: its phase (the most common over seeds), the median grok step, and the
    median train / test accuracy at the end (:func:`~.science.end_accuracy`)."""
    phase = Counter(r["phase"] for r in rows).most_common(1)[0][0]
    groks = [r["grok_step"] for r in rows if r["grok_step"] is not None]
    ends = [(r["end_train_acc"], r["end_test_acc"]) for r in rows
            if not math.isnan(r["end_train_acc"])]
    step = f"t {int(np.median(groks))}" if groks and phase in ("grokking", "comprehension") else " "
    accs = (f"{np.median([a for a, _ in ends]):.0%} / {np.median([b for _, b in ends]):.0%}"
            if ends else " ")
    return f"{phase}<br>{step}<br>{accs}"


def phase_figure(rows: list[dict], title: str = "steps to generalize"):
    """The phase diagram over weight decay (x) and training fraction (y). Colour: steps to
    generalize (test accuracy > GROK_ACC; log scale) of the cells that generalize and keep it;
    each cell names its phase, its grok step ``t`` and its train / test accuracy at the end."""
    good = [dict(r, _t=r["grok_step"] if r["phase"] in ("grokking", "comprehension") else None)
            for r in rows]
    z, xs, ys = table_grid(good, "_t", "weight_decay", "train_frac", reduce="median")
    text = [[_cell_text([r for r in rows if r["weight_decay"] == x and r["train_frac"] == y])
             for x in xs] for y in ys]
    with np.errstate(divide="ignore", invalid="ignore"):
        logz = np.log10(z)
    finite = logz[np.isfinite(logz)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (1.0, 3.0)
    ticks = [t for t in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)
             if lo - 0.05 <= math.log10(t) <= hi + 0.05]
    fig = plots.heatmap(logz, [f"{x:g}" for x in xs], [f"{y:g}" for y in ys], title=title,
                        xtitle="weight decay", ytitle="training fraction", ztitle="steps",
                        text_fmt=None, colorscale="Viridis_r")
    fig.data[0].update(text=text, texttemplate="%{text}", textfont=dict(size=9),
                       hovertemplate="weight decay %{x}<br>training fraction %{y}<br>"
                                     "%{text}<extra></extra>",
                       colorbar=dict(tickvals=[math.log10(t) for t in ticks],
                                     ticktext=[f"{t:,}" for t in ticks]))
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


def phase_slider(sweep, title: str = "test accuracy"):
    """Test accuracy over (weight decay, training fraction), with a slider over training
    time: the static counterpart of re-running the sweep (:meth:`SweepResult.slider_over_time`)."""
    if isinstance(sweep, dict):
        sweep = SweepResult.from_dict(sweep)
    fig = sweep.slider_over_time("test_acc", x="weight_decay", y="train_frac", n=12,
                                 title=title, zmin=0.0, zmax=1.0, text_fmt=".2f",
                                 xtitle="weight decay", ytitle="training fraction")
    fig.update_traces(colorbar_title_text="test accuracy")
    return fig


def curves_slider(sweep, train_frac: float):
    """Training curves of the phase-diagram runs at one training fraction, with a slider over
    weight decay: the static counterpart of the live training panel."""
    if isinstance(sweep, dict):
        sweep = SweepResult.from_dict(sweep)
    picked = [(c, h) for c, h in sweep if math.isclose(c["train_frac"], train_frac)
              and c.get("seed", 0) == 0]
    if not picked:
        raise ValueError(f"no runs at training fraction {train_frac}")
    figs = [training_figure(h, title=f"weight decay {c['weight_decay']:g}", marks=False)
            for c, h in picked]
    labels = [f"{c['weight_decay']:g}" for c, _ in picked]
    active = next((i for i, (c, _) in enumerate(picked) if c["weight_decay"] == 1.0), len(picked) - 1)
    return plots.slider(figs, labels, name="weight decay", active=active)


# ============================================================================ remedies, corruption


def runs_table(runs: dict):
    """One row per named run: fit and grok steps, phase (or the divergence), final train and
    test accuracy."""
    rows = []
    for name, r in runs.items():
        h = r.history
        rows.append({"run": name, "fit step": r.fit_step, "grok step": r.grok_step,
                     "phase": h.status if h.diverged else r.phase,
                     "train (%)": 100 * h.last("train_acc"), "test (%)": 100 * h.last("test_acc")})
    return plots.table(rows, formats={"train (%)": "{:.1f}", "test (%)": "{:.1f}"})


def remedies_figure(speed: dict, title: str = "speed-up over the baseline"):
    """Speed-up of each remedy in steps to grok over the baseline (bars; above 1 = faster);
    a run that never groks within the budget shows as 0, labelled "no grok"."""
    names = [n for n in speed if n != "baseline"]
    values = [speed[n]["speedup"] if speed[n]["grokked"] else 0.0 for n in names]
    fig = plots.bars([REMEDY_LABELS.get(n, n) for n in names], values, title=title,
                     ytitle="baseline steps / remedy steps", text_fmt="{:.2f}x")
    fig.data[0].text = [f"{v:.2f}x" if speed[n]["grokked"] else "no grok"
                        for n, v in zip(names, values)]
    fig.add_hline(y=1.0, line=dict(color="#555", dash="dot", width=1))
    return fig


def remedy_table(rows: list[dict]):
    """The rows of :func:`~.experiments.run_remedies` as a table."""
    return plots.table(
        [{"remedy": REMEDY_LABELS.get(r["name"], r["name"]), "weight decay": r["weight_decay"],
          "fit step": r["fit_step"], "grok step": r["grok_step"],
          "test accuracy (%)": 100 * r["final_test_acc"]} for r in rows],
        formats={"test accuracy (%)": "{:.1f}"})


def corrupted_figure(out: dict, title: str = ""):
    """Corrupted labels: per weight decay, test accuracy (solid) and, on the corrupted training
    examples, the share predicted with their wrong label (memorized, dashed) or their true
    label (corrected, dotted)."""
    fig = plots.figure(title or f"{out['noise']:.0%} of the training labels corrupted", "step",
                       "accuracy", logx=True)
    for i, r in enumerate(out["runs"]):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        wd = f"wd {r['weight_decay']:g}"
        for key, dash in (("test_acc", "solid"), ("memorized", "dash"), ("corrected", "dot")):
            name = {"test_acc": "test"}.get(key, key)
            fig.add_scatter(x=_steps(r["steps"]), y=r[key], name=f"{wd} · {name}", mode="lines",
                            line=dict(color=color, dash=dash))
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def corrupted_table(out: dict):
    """Final values of :func:`~.experiments.run_corrupted`, one row per weight decay."""
    return plots.table(
        [{"weight decay": r["weight_decay"], "test (%)": 100 * r["final_test_acc"],
          "memorized (%)": 100 * r["final_memorized"], "corrected (%)": 100 * r["final_corrected"]}
         for r in out["runs"]],
        formats={k: "{:.1f}" for k in ("test (%)", "memorized (%)", "corrected (%)")})


# ============================================================================ the page's numbers
# What the prose says about a figure, computed from the data that figure shows: glued into the
# sentences (``dynamics.book.glue``) and checked as rows of the claims table (:mod:`.views`).


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


def corrupted_facts(out: dict) -> dict:
    """Section 4's corrupted-label numbers: the smallest and largest weight decay's memorized,
    corrected and test shares at the end."""
    low, high = out["runs"][0], out["runs"][-1]
    return dict(wd_low=low["weight_decay"], wd_high=high["weight_decay"],
                mem_low=low["final_memorized"], test_low=low["final_test_acc"],
                mem_high=high["final_memorized"], corr_high=high["final_corrected"],
                test_high=high["final_test_acc"], noise=out["noise"])


def at_fit(pm: dict, key: str) -> float:
    """A progress measure of :func:`~.experiments.progress_measures` at the fit step (the last
    value when the run never fit)."""
    steps, fit = pm["step"], pm["fit_step"]
    return pm[key][steps.index(fit)] if fit in steps else pm[key][-1]


def progress_glue(pm: dict) -> dict:
    """Section 3's glued numbers: the Fourier concentration of the initial weights, at the fit
    step and at the end, and at the end per unit against the whole layer."""
    end = pm["spectra"]["end"]
    steps, grok = pm["step"], pm.get("grok_step")
    at_grok = pm["fourier_top10"][steps.index(grok)] if grok in steps else pm["fourier_top10"][-1]
    return dict(conc_init=pm["fourier_top10"][0], conc_fit=at_fit(pm, "fourier_top10"),
                conc_grok=at_grok,
                conc_end=pm["fourier_top10"][-1], unit_conc=end["concentration"],
                layer_conc=end["layer_concentration"])


def corrupted_glue(out: dict) -> dict:
    """Section 4's glued corrupted-label numbers (:func:`corrupted_facts`, as percentages)."""
    cf = corrupted_facts(out)
    pct = {k: f"{cf[k]:.0%}" for k in ("mem_low", "test_low", "mem_high", "corr_high", "test_high")}
    return dict(pct, wd_low=f"{cf['wd_low']:g}", wd_high=f"{cf['wd_high']:g}")


def section1_facts(first: GrokRun, other: GrokRun) -> dict:
    """Section 1's numbers: the fit step, the end of the plateau (test accuracy leaves chance),
    the 50% and grok steps (:func:`~.science.plateau_steps`), the plateau and the delay (each
    over the fit step), the test loss's rise while memorizing (its start, its peak and where)
    and the division run's grok step relative to addition's."""
    h = first.history
    loss, steps = list(h["test_loss"]), list(h.steps)
    i = int(np.argmax(loss))
    ps = plateau_steps(h, first.config.p)
    fit, grok = ps["fit"], ps["grok"]
    return dict(fit=fit, grok=grok, leave=ps["leave"], half=ps["half"], plateau=ps["plateau"],
                delay=grok / fit if fit and grok else None,
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
