"""Spectral optimizers, the figures: figure builders (``*_figure``), sliders over precomputed
results (``*_slider``), tables (``*_rows``), the ``show_*`` functions that draw a run's
figure with its table, and numbers as the prose prints them (:func:`share`, :func:`factor_words`,
:func:`scale_words`, :func:`power_of_ten`). Where legends, sliders and titles go is the house layout's business
(``plots.house``), not these builders'. The live panels are in :mod:`.panels`, the claims in
:mod:`.claims`.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from IPython.display import display

from .. import plots, results
from ..book import and_list
from .experiments import (CRITICAL_SHARE, RECORDS, Bands, Memory, MemoryBatch, Practice, PracticeFile, Shaping,
                          ShapingRate, StepTable, Timing, TimingRow, Width,
                          critical_batch, practice_summary, practice_sweeps, reference_loss, shaping_runs,
                          shaping_summary)
from .roles import per_second
from .science import CUBIC_COEFFS, MUON_COEFFS, ns_band, ns_map

__all__ = ["LABELS", "SHORT", "MEMORY_LABELS", "UPDATE_LABELS", "muon_band", "map_figure",
           "band_figure", "spectrum_figure", "timing_figure", "timing_rows", "show_timing",
           "width_figure", "loss_figure", "practice_figure", "practice_rows", "show_practice",
           "sweep_slider", "memory_figure", "memory_rank_figure", "show_memory",
           "memory_alpha_slider", "memory_batch_figure", "SHAPING_COLORS", "shaping_figure",
           "shaping_rows", "SHAPING_FORMATS", "show_shaping", "shaping_slider", "ROLE_LABELS",
           "roles_figure", "cost_rows", "show_precomputed", "factor_words", "share", "scale_words",
           "power_of_ten"]

LABELS = {"muon": "Muon + AdamW", "adamw": "AdamW", "momentum": "SGD + momentum",
          "muon_fp32": "Muon, float32 NS + AdamW"}
SHORT = {"muon": "Muon", "adamw": "AdamW", "momentum": "SGD + mom.", "muon_fp32": "Muon, fp32 NS"}
MEMORY_LABELS = {"sgd": "SGD", "muon": "Muon (NS₅)", "polar": "exact UVᵀ", "newton": "Newton"}
UPDATE_LABELS = {"sgd": "SGD", "adam": "Adam (first step)", "muon": "Muon"}


def muon_band() -> tuple[float, float]:
    """The band Muon's five steps leave singular values in (from 1.5e-3 of the largest up):
    :func:`~.science.ns_band`, the numbers the prose glues."""
    b = ns_band()
    return b["min"], b["max"]


# ================================================================ 1. Newton–Schulz


def map_figure(steps: int = 5, coeff_sets: dict | None = None):
    """σ ↦ f^k(σ) for k = 1..steps, for each set of coefficients (log σ axis); the last step
    drawn thick and named in the legend, the earlier ones thin (hover names them)."""
    coeff_sets = coeff_sets or {"Muon quintic": MUON_COEFFS, "cubic": CUBIC_COEFFS}
    sigma = np.geomspace(1e-4, 1.0, 400)
    fig = plots.figure("k Newton–Schulz steps on one singular value",
                       "σ / ‖G‖_F (input singular value)", "output singular value", logx=True)
    for i, (name, coeffs) in enumerate(coeff_sets.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        for k in range(1, steps + 1):
            last = k == steps
            fig.add_scatter(x=sigma, y=ns_map(sigma, k, coeffs), mode="lines",
                            name=f"{name}, {k} steps" if last else f"{name}, k = {k}",
                            legendgroup=name, showlegend=last, opacity=1.0 if last else 0.35,
                            line=dict(color=color, dash="solid" if i == 0 else "dash",
                                      width=2.5 if last else 1.2))
    lo, hi = muon_band()
    fig.add_hrect(y0=lo, y1=hi, fillcolor="#109618", opacity=0.08, line_width=0,
                  annotation_text="Muon's band", annotation_position="top left")
    fig.update_layout(hovermode="closest")
    return fig


def band_figure(bands: Bands):
    """Range of the singular values of NS_k(G) against k, one shaded band per coefficient set."""
    fig = plots.figure("All singular values after k steps", "Newton–Schulz steps k",
                       "singular values of NS_k(G)", logy=True)
    for i, (name, band) in enumerate(bands.named().items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=band.k, y=band.hi, mode="lines", line=dict(color=color, width=1),
                        name=f"{name}: largest", legendgroup=name, showlegend=False)
        fig.add_scatter(x=band.k, y=band.lo, mode="lines", line=dict(color=color, width=1),
                        fill="tonexty", name=f"{name}: smallest to largest", legendgroup=name)
    fig.add_hline(y=1.0, line=dict(color="#555", dash="dot", width=1))
    return fig


def spectrum_figure(G: torch.Tensor, out: torch.Tensor, title: str = ""):
    """Sorted singular values of G/‖G‖_F and of the Newton–Schulz output."""
    s_in = torch.linalg.svdvals((G / G.norm()).float()).numpy()
    s_out = torch.linalg.svdvals(out.float()).numpy()
    i = np.arange(1, len(s_in) + 1)
    fig = plots.figure(title or "Singular values before and after", "index i (sorted)",
                       "σ_i", logy=True)
    fig.add_scatter(x=i, y=s_in, mode="lines", name="input G/‖G‖_F")
    fig.add_scatter(x=i, y=s_out, mode="lines", name="after Newton–Schulz")
    lo, hi = muon_band()
    fig.add_hrect(y0=lo, y1=hi, fillcolor="#109618", opacity=0.08, line_width=0)
    return fig


def timing_figure(rows: list[TimingRow]):
    """Seconds against matrix size: Newton–Schulz (each dtype measured) vs SVD. CPU seconds
    where measured on a CPU, else wall-clock seconds: the seconds of :func:`timing_rows`'
    table, whose ratios the page's prose reads."""
    n, cpu = [r.n for r in rows], rows[0].device == "cpu"
    fig = plots.figure("Newton–Schulz vs SVD on an n×n matrix", "n",
                       "CPU seconds" if cpu else "wall-clock seconds", logx=True, logy=True)
    for dt in rows[0].ns_by_dtype(cpu):
        fig.add_scatter(x=n, y=[r.ns_by_dtype(cpu).get(dt) for r in rows], mode="lines+markers",
                        name=f"Newton–Schulz, 5 steps, {dt}")
    fig.add_scatter(x=n, y=[r.svd_cpu_s if cpu else r.svd_s for r in rows], mode="lines+markers",
                    name="SVD (exact U Vᵀ)")
    fig.update_layout(hovermode="closest")
    return fig


def timing_rows(rows: list[TimingRow]) -> list[dict]:
    """The timing measurements as table rows. The seconds, and their ratio, are CPU seconds
    where measured on a CPU (the steadier measure on a shared machine; the columns say so), else
    wall-clock seconds, so that the ratio column is the seconds columns' quotient."""
    out = []
    for r in rows:
        cpu = r.device == "cpu"
        unit, ns, svd = ("CPU s" if cpu else "s"), r.ns_by_dtype(cpu), r.svd_cpu_s if cpu else r.svd_s
        row = {"n": r.n}
        for dt, v in ns.items():
            row[f"NS₅ ({unit})" if len(ns) == 1 else f"NS₅ {dt} ({unit})"] = v
        row[f"SVD ({unit})"] = svd
        row["SVD / NS₅"] = svd / ns["float32"]
        row["error vs UVᵀ"] = r.rel_error
        row["max |σ − 1|"] = r.max_sigma_error
        out.append(row)
    return out


# ================================================================ the size of a step


def show_timing(timing: Timing, provenance: dict) -> None:
    """The precomputed timing: its figure, the file's provenance and its table."""
    plots.show(timing_figure(timing.rows))
    plots.caption(results.describe(provenance))
    display(plots.table(timing_rows(timing.rows), digits=4))  # 1.998 is not 2


def width_figure(result: Width):
    """Per unit learning rate: how far one step moves a hidden layer's output (solid) and the
    most it could (the step's RMS→RMS norm, dotted), against the width."""
    fig = plots.figure("One step's change of a hidden layer's output", "width",
                       "‖ΔW x‖_RMS / ‖x‖_RMS per unit lr", logx=True, logy=True)
    for i, (opt, ys) in enumerate(result.change.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=result.widths, y=ys, mode="lines+markers", name=UPDATE_LABELS[opt],
                        legendgroup=opt, line=dict(color=color))
        fig.add_scatter(x=result.widths, y=result.norm[opt], mode="lines",
                        name=f"{UPDATE_LABELS[opt]}: RMS→RMS norm", legendgroup=opt,
                        showlegend=False, line=dict(color=color, dash="dot", width=1))
    fig.update_layout(hovermode="closest")
    return fig


# ================================================================ Muon in practice


def loss_figure(runs: dict, title: str = "", x: str = "step", level: float | None = None,
                level_name: str = "target", colors: dict | None = None):
    """Training loss of several runs (``{name: History}``) against step or wall-clock seconds,
    with an optional dotted horizontal ``level`` drawn as a trace (so sliders toggle it too)."""
    fig = plots.figure(title, "step" if x == "step" else "seconds", "training loss", logy=True)
    _loss_traces(fig, runs, x, level, level_name, colors)
    return fig


def _loss_traces(fig, runs, x="step", level=None, level_name="target", colors=None,
                 showlegend=True, seconds_per_step=None, **where):
    right = 0.0
    for i, (name, h) in enumerate(runs.items()):
        xs = np.asarray(h.steps if x == "step" or seconds_per_step else h["time"], dtype=float)
        if x != "step" and seconds_per_step:
            xs = xs * seconds_per_step[i]
        right = max(right, float(xs[-1]) if len(xs) else 0.0)
        color = (colors or {}).get(name, plots.PALETTE[i % len(plots.PALETTE)])
        fig.add_scatter(x=xs, y=h["train_loss"], mode="lines", line=dict(color=color),
                        name=name + (f" ({h.status})" if h.diverged else ""), legendgroup=name,
                        showlegend=showlegend, **where)
    if level is not None:
        fig.add_scatter(x=[0.0, right], y=[level, level], mode="lines", name=level_name,
                        line=dict(color="#555", dash="dot", width=1), hoverinfo="skip",
                        legendgroup="level", showlegend=showlegend, **where)


def practice_figure(result: Practice, cost: dict | None = None):
    """Training loss of each optimizer at its best rate, against steps (left) and against
    seconds (right): each step at the seconds a step costs in ``cost``
    (:func:`~.roles.step_seconds`, the times of the cost table), or, without it, each run's own
    wall clock (its evaluations included, so not the cost table's seconds)."""
    runs = {f"{LABELS[k]} (lr {result.best.get(k.split('_')[0]):g})": h
            for k, h in result.timed.items()}
    fig = plots.subplots(1, 2, ("per step", "per second"),
                         title=f"{result.data}: each optimizer at its best rate", shared_yaxes=True)
    _loss_traces(fig, runs, "step", result.target, row=1, col=1)
    per = None if cost is None else [cost["median"][k] for k in result.timed]
    _loss_traces(fig, runs, "time", result.target, showlegend=False, row=1, col=2,
                 seconds_per_step=per)
    fig.update_yaxes(type="log")
    fig.update_yaxes(title_text="training loss", row=1, col=1)
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_xaxes(title_text="seconds (steps × the timed step)" if cost is not None else
                     "seconds of the run (evaluations included)", row=1, col=2)
    return fig


def practice_rows(result: Practice) -> list[dict]:
    """:func:`practice_summary` as table rows: rate, steps to the target, final loss (the
    seconds are the cost table's, :func:`cost_rows`: one timing, one value)."""
    return [{"optimizer": SHORT[k], "lr": v["lr"], "steps to target": v["steps"],
             "final loss": v["final_loss"]}
            for k, v in practice_summary(result).items()]


def cost_rows(result: Practice, cost: dict) -> list[dict]:
    """Per step and per second side by side: per optimizer, the steps to the target (from
    the training runs), the median seconds of one step (:func:`~.roles.step_seconds`), their
    product, and AdamW's time to the target over this optimizer's (above 1: ahead of AdamW).
    AdamW's second timing (``adamw_again``) is a row too: its ratio is the noise floor."""
    steps = {k: v["steps"] for k, v in practice_summary(result).items()}
    out = []
    for name in ("adamw", "adamw_again", "muon", "muon_fp32", "momentum"):
        if name not in cost["median"]:
            continue
        sec = cost["median"][name]
        if name.startswith("adamw"):  # AdamW timed twice: the second row is the noise floor
            ahead = cost["median"]["adamw"] / sec
        else:
            ahead = per_second(steps, cost["median"], name)["per_second"]
        out.append({"optimizer": SHORT.get(name, "AdamW, timed again"),
                    "steps to target": steps.get(name.replace("_again", "")),
                    "a step (ms)": 1e3 * sec,
                    "to target (s)": (None if steps.get(name.replace("_again", "")) is None
                                      else steps[name.replace("_again", "")] * sec),
                    "AdamW's time / this": ahead})
    return out


def show_practice(practice: Practice, cost: dict) -> None:
    """Section 3's run: the loss curves, the steps to the target per optimizer, and per step
    against per second (``cost``: :func:`~.roles.step_seconds`)."""
    plots.show(practice_figure(practice, cost))
    display(plots.table(practice_rows(practice)))
    display(plots.table(cost_rows(practice, cost)))


def sweep_slider(swept: PracticeFile):
    """Training loss for every swept learning rate, a slider over the optimizer (``swept``:
    the precomputed sweep file)."""
    sweeps, target, dataset = practice_sweeps(swept), swept.target, swept.data
    figs = [loss_figure({f"lr {lr:g}": h for lr, h in runs.items()},
                        f"{dataset + ': ' if dataset else ''}{LABELS[name]}, every rate swept",
                        level=target)
            for name, runs in sweeps.items()]
    return plots.slider(figs, [LABELS[name] for name in sweeps], name="optimizer", active=0)


# ================================================================ the associative memory


def memory_figure(result: Memory, what: str = "fraction"):
    """Fraction of pairs (or of frequency mass) recovered after one step, against N/d."""
    ytitle = {"fraction": "fraction of pairs recovered",
              "mass": "frequency-weighted recall"}[what]
    fig = plots.figure(f"One step on an associative memory (d = {result.dim}, "
                       f"α = {result.alpha:g})", "pairs stored N / dimension d", ytitle,
                       logx=True)
    for i, (m, ys) in enumerate({"fraction": result.fraction, "mass": result.mass}[what].items()):
        counts = [f"{y * n:.0f} of {n} pairs" for y, n in zip(result.fraction[m], result.n)]
        fig.add_scatter(x=result.ratios, y=ys, mode="lines+markers", name=MEMORY_LABELS[m],
                        text=counts, hovertemplate="%{y:.3f} (%{text})",
                        line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    plots.mark_step(fig, 1.0, "N = d", logx=True)
    fig.update_yaxes(range=[0, 1.05])
    return fig


def memory_rank_figure(result: Memory, ratio: float = 4):
    """Which pairs are recovered at N ≈ ratio·d: recall against frequency rank (log bins)."""
    j = int(np.argmin([abs(r - ratio) for r in result.ratios]))
    fig = plots.figure(f"Which pairs one step stores (N = {result.n[j]} = "
                       f"{result.ratios[j]:g}d)", "frequency rank i (1 = most frequent)",
                       "fraction recovered in rank bin", logx=True)
    for i, (m, rows) in enumerate(result.by_rank.items()):
        fig.add_scatter(x=result.rank_centers[j], y=rows[j], mode="lines+markers",
                        name=MEMORY_LABELS[m], line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_yaxes(range=[0, 1.05])
    return fig


def show_memory(memory: Memory, ratio: float = 4) -> None:
    """Section 4's run: the fraction stored against N/d, and which pairs at N = ``ratio``·d."""
    plots.show(memory_figure(memory))
    plots.show(memory_rank_figure(memory, ratio))


def memory_alpha_slider(by_alpha: dict[str, Memory]):
    """Precomputed recall curves (``MemoryFile.by_alpha``, ``{α: Memory}``), a slider over α."""
    labels = list(by_alpha)
    return plots.slider([memory_figure(by_alpha[a]) for a in labels], labels, name="α",
                        active=labels.index("1") if "1" in labels else 0)


def memory_batch_figure(result: MemoryBatch):
    """Recall after one step from a batch gradient against the batch size; dotted: the full
    gradient's recall; a dotted vertical line at each method's critical batch size."""
    fig = plots.figure(f"One step from a batch (N = {result.n}, d = {result.dim})",
                       "batch size", "fraction of pairs recovered", logx=True)
    for i, (m, ys) in enumerate(result.recall.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=result.batch_sizes, y=ys, mode="lines+markers",
                        name=MEMORY_LABELS[m], line=dict(color=color), legendgroup=m)
        fig.add_scatter(x=[result.batch_sizes[0], result.batch_sizes[-1]],
                        y=[result.full[m]] * 2, mode="lines", legendgroup=m, showlegend=False,
                        name=f"{MEMORY_LABELS[m]}: full gradient", hoverinfo="name",
                        line=dict(color=color, dash="dot", width=1))
        plots.mark_step(fig, critical_batch(result, m), f"{MEMORY_LABELS[m]}: {CRITICAL_SHARE:.0%}",
                        color=color, logx=True)
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(hovermode="closest")
    return fig


# ================================================================ spectral shaping


SHAPING_COLORS = {"p = 1": "#3366cc", "p = 0.5": "#0099c6", "p = 0": "#ff9900",
                  "p = -0.25": "#109618", "p = -0.5": "#990099",
                  "Muon, lr decayed to 0": "#888888"}  # the control: grey, seen in both themes


def shaping_figure(result: Shaping, reference: str = "p = 0"):
    """Training loss of each p (and the schedule, in red); dotted: the reference's final loss."""
    ref = result.runs.get(reference)
    level = reference_loss(ref) if ref is not None and len(ref) and not ref.diverged else None
    colors = {n: SHAPING_COLORS.get(n, "#dc3912" if n.startswith("p:") else "#555")
              for n in result.runs}
    return loss_figure(result.runs, f"Updates U Σᵖ Vᵀ, lr {result.lr:g}", level=level,
                       level_name=f"final loss of {reference}", colors=colors)


def shaping_rows(result: Shaping) -> list[dict]:
    """:func:`shaping_summary` as table rows."""
    return [{"update": r["update"], "final loss": r["final_loss"] if r["final_loss"] is not None
             else r["status"], "steps to p = 0's final loss": r["steps_to_reference"],
             "steps saved vs p = 0": r["saved"]} for r in shaping_summary(result)]


SHAPING_FORMATS = {"steps saved vs p = 0": "{:.0%}",
                   "final loss": lambda v: v if isinstance(v, str) else plots.number(v)}


def show_shaping(shaping: Shaping) -> None:
    """Section 5's run: the loss curves and the steps each run needs to Muon's final loss."""
    plots.show(shaping_figure(shaping))
    display(plots.table(shaping_rows(shaping), formats=SHAPING_FORMATS))


def shaping_slider(by_lr: dict[str, ShapingRate]):
    """Precomputed shaping runs (``ShapingFile.by_lr``, ``{lr: ShapingRate}``) with a slider
    over the rate."""
    by_lr = shaping_runs(by_lr) if not _histories(by_lr) else by_lr
    labels = list(by_lr)
    return plots.slider([shaping_figure(by_lr[lr]) for lr in labels], labels, name="lr",
                        active=len(labels) // 2)


# ================================================================ 6. norms per role

ROLE_LABELS = {"spectral": "spectral (hidden matrix)", "l1_to_rms": "ℓ1→RMS (embedding)",
               "linf": "ℓ∞ (vector)"}
MAP_LABELS = {"spectral": "U Vᵀ", "l1_to_rms": "unit-RMS columns", "linf": "sign(G)"}


def roles_figure(table: StepTable):
    """:func:`~.roles.steepest_table` as a heatmap: per norm (row), the gain ⟨G, D⟩ of each
    duality map (column) and of the best random unit direction, as a fraction of the row's
    own map's gain (the diagonal is 1 when each map is the steepest step of its norm)."""
    norms = list(table.gain)
    z = [[table.gain[r][c] / table.gain[r][r] for c in norms]
         + [table.random[r] / table.gain[r][r]] for r in norms]
    return plots.heatmap(z, [MAP_LABELS[c] for c in norms] + [f"best of {table.draws} random"],
                         [ROLE_LABELS[r] for r in norms],
                         title="Each norm's steepest step, ⟨G, D⟩ at unit norm",
                         xtitle="direction D", ytitle="norm", ztitle="gain / own map's",
                         zmin=0, zmax=1)


def _histories(by_lr: dict[str, ShapingRate]) -> bool:
    """Whether the shaping runs are already ``History`` objects (not the file's dicts)."""
    return all(not isinstance(h, dict) for r in by_lr.values() for h in r.runs.values())


def show_precomputed(name: str):
    """The page's precomputed file ``name``, read as its record (:data:`~.experiments.RECORDS`)
    and shown: the timing's figure, provenance and table (:func:`show_timing`); the sweep's, the
    memory's and the shaping's slider with the provenance under it. Returns ``(record,
    provenance)``: what the page's numbers read."""
    record, prov = results.load(name, as_=RECORDS[name])
    if name == "spectral_timing":
        show_timing(record, prov)
        return record, prov
    slider = {"spectral_practice": lambda: sweep_slider(record),
              "spectral_memory": lambda: memory_alpha_slider(record.by_alpha),
              "spectral_shaping": lambda: shaping_slider(record.by_lr)}[name]
    plots.show(slider())
    plots.caption(results.describe(prov))
    return record, prov


# ================================================================ numbers as the prose prints them


def factor_words(factor: float, digits: int = 2, of: str = "its value") -> str:
    """A ratio as the prose says it: "grows by a factor 1.3", "shrinks to 0.89 times
    ``of``", or "stays the same (a factor 1)" when it prints as 1 at ``digits`` digits."""
    if factor is None or not math.isfinite(factor) or factor <= 0:
        raise ValueError(f"factor_words: a factor must be a positive number, got {factor!r}")
    text = plots.number(float(factor), digits)
    if text == plots.number(1.0, digits):
        return f"stays the same (a factor {text})"
    return f"grows by a factor {text}" if factor > 1 else f"shrinks to {text} times {of}"


def share(fraction: float, digits: int = 3) -> str:
    """A fraction of the pairs as a percentage (0.998 is "99.8%"), never a bare number."""
    if fraction is None or not 0 <= fraction <= 1:
        raise ValueError(f"share: a fraction must lie in [0, 1], got {fraction!r}")
    return f"{plots.number(100 * float(fraction), digits)}%"


def scale_words(compared: dict, same: str = "the same size as this page's run") -> str:
    """How a precomputed file's run compares with this page's: ``compared`` maps a noun ("steps")
    to (this page's, the file's) size; the words name what the file has more or fewer of."""
    words = [f"{'more' if f > live else 'fewer'} {noun}" for noun, (live, f) in compared.items()
             if f != live]
    if not words:
        return same
    return and_list(words) + " than this page's run"


def power_of_ten(x: float, digits: int = 2) -> str:
    """A positive number as the prose writes a small one: 0.0015 is "1.5×10⁻³", 0.001 "10⁻³"."""
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"power_of_ten: a positive number, got {x!r}")
    e = math.floor(math.log10(x))
    m = float(f"{x / 10 ** e:.{digits}g}")
    if m >= 10:
        m, e = m / 10, e + 1
    sup = str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return ("" if m == 1 else f"{m:g}×") + f"10{sup}"
