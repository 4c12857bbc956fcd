"""Lottery tickets, the figures: figures (``*_figure``), static sliders over the precomputed
results (``*_slider``) and tables. Layout (legends, sliders, margins, log ticks) is the house
layout's business (:func:`dynamics.plots.house`): builders here only say what to draw. The
live panels are in :mod:`.panels`, the claims in :mod:`.claims`.
"""
from __future__ import annotations

import numpy as np

from .. import plots
from .experiments import (VARIANTS, ImpConfig, ImpFile, ImpResult, Pai, PaiAt, PaiFile, by_step, imp_cost,
                          seed_mean)

__all__ = ["VARIANT_NAMES", "PAI_NAMES", "DATASET_NAMES", "PAPER_COST", "imp_figure",
           "speed_figure", "pai_figure", "lmc_figure", "barrier_figure", "layer_rows",
           "cost_rows", "cost_table", "layer_table", "cost_figure", "imp_slider", "pai_slider",
           "trained_on", "pai_caption",
           "lmc_slider", "FINAL_ACC"]

# what the accuracy axes show: h.last("test_acc"), the test accuracy at the last step (not at
# the early-stopping step, which the speed figure's second panel reads)
FINAL_ACC = "test accuracy at the end of training (%)"

VARIANT_NAMES = {"ticket": "winning ticket",
                 "reinit": "same mask, re-initialized",
                 "random": "random mask, same layer sparsity"}
PAI_NAMES = {"imp": "IMP ticket", "snip": "SNIP", "synflow": "SynFlow",
             "magnitude": "magnitude at init"}
DATASET_NAMES = {"mnist1d": "MNIST-1D", "digits": "digits", "mnist": "MNIST"}
# Arora & Teuscher (2025), ResNet-20 on CIFAR-10 at 99.3% sparsity (abstract of the seed paper).
PAPER_COST = dict(sparsity=0.993, cts_acc=74.0, ltr_acc=68.3, cts_min=7.9, ltr_min=95.2)


def _pct(x) -> np.ndarray:
    return 100.0 * np.asarray(x, dtype=float)


def _band(fig, x, values, name, color, pct=True):
    """Mean over seeds (rows of ``values``) with ±1 std error bars; columns never trained
    (NaN) are skipped."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    keep = np.isfinite(values).any(axis=0)
    if not keep.any():
        return
    scale = 100.0 if pct else 1.0
    mean = np.nanmean(values[:, keep], axis=0) * scale
    std = np.nanstd(values[:, keep], axis=0) * scale if len(values) > 1 else None
    fig.add_scatter(x=np.asarray(x, dtype=float)[keep], y=mean, name=name,
                    mode="lines+markers", line=dict(color=color),
                    error_y=None if std is None else dict(type="data", array=std,
                                                          visible=True, thickness=1))


def _sparser_to_the_right(fig) -> None:
    fig.update_xaxes(autorange="reversed")


# ============================================================================ figures


def imp_figure(res: ImpResult, title: str | None = None):
    """Test accuracy against the percentage of weights remaining (log axis, sparser to the
    right) for the winning ticket and both controls; the dense network as a dotted line."""
    x = _pct(res.density)
    n = len(res.seeds)
    fig = plots.figure(title or ("Iterative magnitude pruning" + ("" if n == 1 else
                                 f", {n} seeds (mean ± std)")),
                       "weights remaining (%)", FINAL_ACC, logx=True)
    for i, v in enumerate(VARIANTS):
        _band(fig, x, res.acc[v], VARIANT_NAMES[v], plots.PALETTE[i])
    dense = 100 * seed_mean(res.acc["ticket"][:, 0])
    if np.isfinite(dense):
        fig.add_scatter(x=[x.max(), x.min()], y=[dense, dense], mode="lines",
                        name=f"dense: {dense:.1f}%", line=dict(color="#555", dash="dot", width=1))
    _sparser_to_the_right(fig)
    fig.update_layout(hovermode="closest")
    return fig


def speed_figure(res: ImpResult, key: str = "stop_step", title: str | None = None):
    """Frankle & Carbin's early stopping against the weights remaining: the early-stopping
    step (lowest validation loss, ``stop_step``) or the test accuracy at that step
    (``stop_acc``)."""
    if key not in ("stop_step", "stop_acc"):
        raise ValueError(f"key must be 'stop_step' or 'stop_acc', got {key!r}")
    default = {"stop_step": f"Early-stopping step (lowest {res.stop_on})",
               "stop_acc": "Test accuracy at the early-stopping step"}[key]
    fig = plots.figure(title or default, "weights remaining (%)",
                       "training step" if key == "stop_step" else "test accuracy (%)", logx=True)
    for i, v in enumerate(VARIANTS):
        _band(fig, _pct(res.density), getattr(res, key)[v], VARIANT_NAMES[v], plots.PALETTE[i],
              pct=key == "stop_acc")
    _sparser_to_the_right(fig)
    fig.update_layout(hovermode="closest")
    return fig


def pai_figure(pai: Pai | PaiAt, title: str | None = None):
    """Accuracy of each mask as chosen and shuffled within every layer, at one sparsity;
    the dense network as a dotted line."""
    names = list(pai.acc)
    labels = [PAI_NAMES.get(m, m) for m in names]
    fig = plots.figure(title or f"Masks at {100 * pai.density:.1f}% of the weights",
                       "", FINAL_ACC)
    top = 0.0
    for how, color, name in (("original", plots.PALETTE[0], "mask as chosen"),
                             ("shuffled", plots.PALETTE[2], "shuffled within each layer")):
        vals = [np.asarray(pai.acc[m][how], dtype=float) for m in names]
        mean = [100 * seed_mean(v) for v in vals]
        several = any(np.isfinite(v).sum() > 1 for v in vals)  # error bars only over seeds
        std = [100 * float(np.nanstd(v)) if np.isfinite(v).sum() > 1 else 0.0 for v in vals]
        top = max([top] + [m + s for m, s in zip(mean, std) if np.isfinite(m)])
        # the value inside the top of its bar, clear of the error bar above it
        fig.add_bar(x=labels, y=mean, name=name, marker_color=color,
                    error_y=dict(type="data", array=std) if several else None,
                    text=["" if not np.isfinite(v) else f"{v:.1f}" for v in mean],
                    textposition="inside", insidetextanchor="end",
                    textfont=dict(color="white"))
    dense = 100 * seed_mean(pai.dense)
    if np.isfinite(dense):
        fig.add_scatter(x=labels, y=[dense] * len(labels), mode="lines",
                        name=f"dense: {dense:.1f}%", line=dict(color="#555", dash="dot", width=1))
        top = max(top, dense)
    fig.update_layout(barmode="group", hovermode="closest")
    fig.update_yaxes(range=[0, 1.15 * top if top > 0 else 100])
    return fig


def lmc_figure(lmc, title: str | None = None):
    """Test error along the straight line between two runs from the same rewound weights,
    one curve per rewind step k of an :class:`~.experiments.Lmc`; the legend gives each
    curve's error barrier."""
    fig = plots.figure(title or "Error between two runs from θₖ",
                       "interpolation α (0: run A, 1: run B)", "test error (%)")
    diverged = lmc.diverged or {}
    for i, k in enumerate(lmc.rewind_steps):
        errs, bar = by_step(lmc.errors, k), by_step(lmc.barrier, k)
        why = by_step(diverged, k) if diverged else None
        name = f"k = {k}: " + (why if why else "no path" if bar is None or not np.isfinite(bar)
                               else f"barrier {100 * bar:.1f} pts")
        fig.add_scatter(x=lmc.alphas, y=_pct([np.nan if e is None else e for e in errs]),
                        mode="lines+markers", name=name,
                        line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_layout(hovermode="closest")
    return fig


def barrier_figure(lmcs: dict, title: str = "Error barrier against rewind step"):
    """Error barrier against rewind step k, one line per setting (``{label: run_lmc result}``)."""
    fig = plots.figure(title, "rewind step k (k = 0 drawn at 1)", "error barrier (points)",
                       logx=True)
    for i, (label, lmc) in enumerate(lmcs.items()):
        ks = lmc.rewind_steps
        bars = [by_step(lmc.barrier, k) for k in ks]
        fig.add_scatter(x=[max(k, 1) for k in ks], y=_pct([np.nan if b is None else b for b in bars]),
                        name=label, mode="lines+markers",
                        line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_layout(hovermode="closest")
    return fig


# ============================================================================ tables and cost


def layer_rows(pai: Pai | PaiAt) -> list[dict]:
    """Each mask's density per layer: where a method puts the weights it keeps."""
    rows = []
    for m, layers in pai.layers.items():
        row = {"mask": PAI_NAMES.get(m, m)}
        row.update({f"{n.replace('.weight', '')} kept (%)": 100 * v for n, v in layers.items()})
        rows.append(row)
    return rows


def _pai_seconds(c: dict, pai: Pai, method: str) -> float:
    """Pruning at init costs its score at θ₀ plus one training (timed as IMP's median round)."""
    return pai.score_time[method] + c["train_seconds"]


def cost_rows(res: ImpResult, pai: Pai | None = None) -> list[dict]:
    """The seed paper's cost comparison beside this notebook's own measured cost."""
    p = PAPER_COST
    paper_setting = f"ResNet-20, CIFAR-10, {100 * p['sparsity']:.1f}% sparse"
    rows = [{"method": "Concrete Ticket Search (Arora & Teuscher 2025)", "setting": paper_setting,
             "test accuracy (%)": p["cts_acc"], "wall time (s)": 60 * p["cts_min"], "source": "paper"},
            {"method": "Lottery ticket rewinding (ibid.)", "setting": paper_setting,
             "test accuracy (%)": p["ltr_acc"], "wall time (s)": 60 * p["ltr_min"], "source": "paper"}]
    c = imp_cost(res, None if pai is None else pai.round)
    name = DATASET_NAMES.get(res.config.dataset, res.config.dataset)
    setting = (f"MLP {res.config.width}x{res.config.depth}, {name}, "
               f"{100 * (1 - c['density']):.1f}% sparse")
    rows.append({"method": f"IMP, {c['trainings']} trainings", "setting": setting,
                 "test accuracy (%)": 100 * seed_mean(res.acc["ticket"][:, c["round"]]),
                 "wall time (s)": c["imp_seconds"], "source": "this page"})
    for m in ("snip", "synflow"):
        if pai is not None and m in pai.acc:
            rows.append({"method": f"{PAI_NAMES[m]}: score + 1 training", "setting": setting,
                         "test accuracy (%)": 100 * seed_mean(pai.acc[m]["original"]),
                         "wall time (s)": _pai_seconds(c, pai, m), "source": "this page"})
    return rows


def cost_table(res: ImpResult, pai: Pai | None = None):
    """:func:`cost_rows` as a table: accuracies to a tenth of a point, times to 3 digits."""
    return plots.table(cost_rows(res, pai), formats={"test accuracy (%)": "{:.1f}"})


def layer_table(pai: Pai | PaiAt):
    """:func:`layer_rows` as a table, percentages to a tenth."""
    rows = layer_rows(pai)
    return plots.table(rows, formats={k: "{:.1f}" for k in rows[0] if k != "mask"})


def cost_figure(res: ImpResult, pai: Pai | None = None):
    """Bars of measured seconds per seed: one training, pruning at init, IMP to the ticket."""
    c = imp_cost(res, None if pai is None else pai.round)
    labels, values = ["one training"], [c["train_seconds"]]
    for m in ("snip", "synflow"):
        if pai is not None and m in pai.acc:
            labels.append(f"{PAI_NAMES[m]} + training")
            values.append(_pai_seconds(c, pai, m))
    labels.append(f"IMP ({c['trainings']} trainings)")
    values.append(c["imp_seconds"])
    return plots.bars(labels, values, title=f"Cost of a subnetwork at {100 * c['density']:.1f}% "
                      "of the weights", ytitle="wall seconds per seed", text_fmt="{:.1f} s")


# ============================================================================ precomputed sliders


def imp_slider(imps: ImpFile):
    """The static counterpart of :func:`imp_panel`: IMP curves of several settings (``imps``,
    the ``lottery_imp`` file read as its record)."""
    figs = [imp_figure(r, title=label) for label, r in imps.imp.items()]
    return plots.slider(figs, [str(i + 1) for i in range(len(figs))], name="setting", active=0)


def trained_on(config: ImpConfig) -> str:
    """What a precomputed file's networks trained on, read from its config: the training
    examples and the validation split held out of them, or that there was none."""
    n, v = config.n_train, config.n_val or 0
    return (f"{n - v} of its {n} training examples, the other {v} held out for validation" if v
            else f"all {n} training examples, no validation split")


def pai_caption(config: dict) -> str:
    """The PaI slider's caption of what its bars trained on (the ``lottery_pai`` file's
    config): the dense network and the IMP ticket as much as the PaI masks."""
    return ("Every bar and line, the dense network and the IMP ticket included, trained on "
            f"{trained_on(ImpConfig.of(config))}.")


def pai_slider(pais: PaiFile, config: dict | None = None):
    """The static counterpart of :func:`pai_panel`: the comparison at several sparsities
    (``pais``, the ``lottery_pai`` file read as its record); with ``config`` (the file's
    provenance config), a caption of what every bar trained on (:func:`pai_caption`)."""
    if config is not None:
        plots.caption(pai_caption(config))
    figs = [pai_figure(p) for p in pais.pai]
    labels = [f"{100 * p.density:.1f}%" for p in pais.pai]
    return plots.slider(figs, labels, name="weights remaining")


def lmc_slider(lmcs=None):
    """The static counterpart of :func:`lmc_panel`: error paths for several learning rates
    (``lmcs``, an :class:`~.experiments.LmcFile`; by default ``data/lottery_lmc.json``)."""
    if lmcs is None:
        from .claims import lmc_file  # the claims read it too; they import this module

        lmcs = lmc_file()
    items = list(lmcs.lmc.items())
    figs = [lmc_figure(lmc, title=f"Two runs from θₖ, Adam lr {label}") for label, lmc in items]
    return plots.slider(figs, [label for label, _ in items], name="learning rate")

