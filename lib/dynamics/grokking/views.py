"""Grokking, the views: figures, static sliders over precomputed data, live panels and the
claims table. Layout (legends, sliders, margins, log ticks) is the house layout's
(:func:`dynamics.plots.house`); builders here say only what to draw."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .. import plots
from .. import widgets as W
from ..runtime import get_seed
from ..sweep import SweepResult, table_grid
from ..train import History
from .experiments import (
    GrokRun, critical_fraction, live_phase_config, progress_measures, restricted_leads, run,
    run_phase,
)
from .science import (
    DELAY, FIT_ACC, FOURIER_OPS, GROK_ACC, GrokConfig, fit_and_grok,
)

__all__ = [  # the public names, re-exported by dynamics.grokking
    "training_figure", "progress_figure", "spectrum_figure", "phase_figure", "phase_slider",
    "curves_slider", "runs_table", "remedies_figure", "remedy_table", "corrupted_figure",
    "corrupted_table", "training_panel", "progress_panel", "remedy_panel", "phase_panel",
    "claims", "REMEDY_LABELS"
]

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
        live = update.every(lambda h: training_figure(h, title=_title(cfg), marks=False),
                            total_steps=cfg.steps)
        r = run(cfg, seed, callbacks=[live], checkpoints=progress_view, progress=False)
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
        out = run_phase(pcfg, seed, progress=False, callbacks=[update.ticker(1.0)])
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


def claims(first: GrokRun, control: GrokRun, pm: dict, speed: dict, corrupted: dict,
           grid_rows: list[dict], live_rows: list[dict] | None = None) -> list[dict]:
    """The papers' claims beside what this run of the notebook measured (rows of
    :func:`dynamics.plots.claim`): ``first`` and ``control`` are section 1's runs with and
    without weight decay, ``pm`` their progress measures, ``speed`` the remedies'
    :func:`~.experiments.speedups`, ``corrupted`` :func:`~.experiments.run_corrupted`,
    ``grid_rows`` the precomputed phase diagram and ``live_rows`` the live one."""
    C = plots.claim
    fit, grok = first.fit_step, first.grok_step
    h = first.history
    delayed = fit is not None and grok is not None and grok >= DELAY * fit
    ratio = f" ({grok / fit:.0f}x later)" if fit and grok else ""
    rows = [C("Test accuracy jumps to ~100% long after training accuracy does (grokking)",
              "Power et al. 2022",
              f"train > {FIT_ACC:.0%} at step {fit}, test > {GROK_ACC:.0%} at step {grok}{ratio}; "
              f"final test accuracy {h.last('test_acc'):.1%}",
              "yes" if delayed else ("partly" if grok is not None else "no"))]
    rows.append(C("Without weight decay the network memorizes and does not generalize",
                  "Nanda et al. 2023; Liu et al. 2023",
                  f"same budget, no weight decay: fit at step {control.fit_step}, final test "
                  f"accuracy {control.history.last('test_acc'):.1%}",
                  "yes" if control.fit_step is not None and control.grok_step is None else "no"))
    steps = pm["step"]
    norm_fit, norm_end = _at(pm["weight_norm"], steps, fit), pm["weight_norm"][-1]
    conc_fit, conc_end = _at(pm["fourier_top10"], steps, fit), pm["fourier_top10"][-1]
    sparse = norm_end < norm_fit and conc_fit < 0.5 < conc_end
    rows.append(C("During the plateau the weight norm falls and the input weights become sparse "
                  "in the Fourier basis", "Nanda et al. 2023",
                  f"weight norm {norm_fit:.1f} at the fit step, {norm_end:.1f} at the end; "
                  f"top-10% share per unit {conc_fit:.2f} → {conc_end:.2f}; the logits use "
                  f"{len(pm['keys'])} of {pm['n_frequencies']} frequencies",
                  "yes" if sparse else "no"))
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
                  "yes" if ahead and e_peak > e_fit else ("partly" if ahead else "no")))

    def remedy(name: str, claim: str, paper: str, want: float, failed: str) -> dict:
        """A remedy's row: "yes" at ``want`` x the baseline's speed or more, "partly" when
        faster but less, else ``failed`` ("no", or "not at this scale" where the paper's
        setting is much slower to grok than ours)."""
        if name not in speed or "baseline" not in speed:
            return C(claim, paper, "not run here", "not at this scale")
        v, base = speed[name], speed["baseline"]
        if not v["grokked"]:
            return C(claim, paper, f"did not grok within {v['steps']:,.0f} steps", failed)
        got = (f"grokked at step {v['steps']:,.0f} vs {base['steps']:,.0f}: "
               f"{v['speedup']:.2f}x the baseline's speed")
        return C(claim, paper, got, "yes" if v["speedup"] >= want else
                 ("partly" if v["speedup"] > 1.05 else failed))

    rows += [
        remedy("strong_wd", "More weight decay, faster grokking", "Liu et al. 2023; Tian 2025",
               1.5, "no"),
        remedy("grokfast", "Grokfast-EMA (α 0.98, λ 2) groks up to ~50x faster", "Lee et al. 2024",
               10, "not at this scale"),
        remedy("perp_grad", "⊥Grad groks without weight decay", "Prieto et al. 2025", 1.0, "no"),
        remedy("stablemax", "StableMax groks without weight decay", "Prieto et al. 2025", 1.0,
               "not at this scale"),
    ]
    low, high = corrupted["runs"][0], corrupted["runs"][-1]
    coexist = low["final_memorized"] > 0.9 and low["final_test_acc"] > 0.5
    corrects = (high["final_memorized"] < low["final_memorized"] - 0.1
                and high["final_corrected"] > low["final_corrected"])
    rows.append(C("A network can memorize corrupted labels and still generalize; weight decay "
                  "makes it ignore the corruption", "Doshi et al. 2024",
                  f"{corrupted['noise']:.0%} corrupted; wd {low['weight_decay']:g}: memorized "
                  f"{low['final_memorized']:.0%}, test {low['final_test_acc']:.0%}; wd "
                  f"{high['weight_decay']:g}: memorized {high['final_memorized']:.0%}, corrected "
                  f"{high['final_corrected']:.0%}, test {high['final_test_acc']:.0%}",
                  "yes" if coexist and high["final_corrected"] > 0.5 else
                  ("partly" if coexist and corrects else "no")))
    counts = Counter(r["phase"] for r in grid_rows)
    four = ("comprehension", "grokking", "memorization", "confusion")
    seen = ", ".join(f"{counts[k]} {k}" for k in (*four, "un-learning") if counts[k])
    rows.append(C("Four phases: comprehension, grokking, memorization, confusion",
                  "Liu et al. 2022",
                  f"precomputed grid ({len(grid_rows)} cells): {seen}",
                  "yes" if all(counts[k] for k in four) else
                  ("partly" if sum(bool(counts[k]) for k in four) >= 3 else "no")))
    crit = critical_fraction(grid_rows)
    live = critical_fraction(live_rows) if live_rows else None
    said = "none generalized" if crit is None else f"at weight decay 1 the smallest that " \
           f"generalizes is {crit:.0%}; below it, memorization"
    if live_rows:
        said += "; live grid: " + ("none generalized" if live is None else f"smallest {live:.0%}")
    rows.append(C("Below a critical training fraction the network only memorizes",
                  "Power et al. 2022; Liu et al. 2022", "precomputed grid: " + said,
                  "yes" if crit is not None and crit > min(r["train_frac"] for r in grid_rows)
                  else "no"))
    return rows
