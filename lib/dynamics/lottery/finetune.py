"""Lottery tickets at scale, in miniature: which weights does fine-tuning change?

Mukherjee et al. (2025, "Reinforcement Learning Finetunes Small Subnetworks in Large Language
Models") compare an LLM's weights before and after RL fine-tuning, stored in bfloat16, and
count a parameter as *updated* when its bf16 value changed. They find 5-30% updated, the
updated sets of runs with different seeds, data or algorithms overlapping far more than
chance, and the update of nearly every matrix nearly full rank. This module runs the analog on
the chapter's trained dense MLP: two fine-tunings on a shifted task (the inputs reversed in
time), from the same weights, with different mini-batch orders, and the same three measures.
(In float32 Adam moves nearly every weight a little: the count depends on the resolution at
which "changed" is read, which is why the bf16 condition is part of the claim.)
"""
from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .. import data as D
from .. import plots
from .experiments import ImpResult, train_masked
from .science import LotteryConfig, prunable

__all__ = ["shifted_task", "updated", "overlap", "live_overlap", "update_rank", "run_finetune",
           "finetune_figure", "finetune_claims", "finetune_numbers"]

OVERLAP_EXCESS = 0.3   # the two runs' sets overlap by this much of the way from chance to 1
PAPER_RANGE = (0.05, 0.30)  # Mukherjee et al.: 5-30% of the parameters updated
FULL_RANK = 0.99       # Mukherjee et al.: the updates are nearly full rank (>99% of the maximum)


def shifted_task(data: D.Dataset) -> D.Dataset:
    """The fine-tuning task: the same examples and labels with every input reversed in time
    (a shift of the input distribution the trained network does not handle)."""
    return dataclasses.replace(data, x_train=data.x_train.flip(-1),
                               x_test=data.x_test.flip(-1), name=f"{data.name}, reversed")


def updated(before: dict, after: dict, dtype=torch.bfloat16) -> dict:
    """Per weight matrix, the 0/1 set of weights whose value differs after fine-tuning when
    both are read in ``dtype`` (bf16 as Mukherjee et al.; float32 sees every change)."""
    return {n: (after[n].to(dtype) != before[n].to(dtype)) for n in prunable(before)}


def _flat(sets: dict) -> torch.Tensor:
    return torch.cat([sets[n].flatten() for n in sorted(sets)])


def overlap(a: dict, b: dict) -> dict:
    """Mukherjee et al.'s overlap of two updated sets, the share of ``a``'s set also in ``b``'s,
    beside chance (the share ``b`` updates: what independent sets of these sizes would give)
    and the excess over chance as a fraction of the way to 1."""
    fa, fb = _flat(a), _flat(b)
    if fa.shape != fb.shape:
        raise ValueError("overlap() needs two sets over the same weights")
    ov = float((fa & fb).sum()) / max(1, int(fa.sum()))
    chance = float(fb.float().mean())
    excess = (ov - chance) / (1 - chance) if chance < 1 else float("nan")
    return dict(overlap=ov, chance=chance, excess=excess)


def live_overlap(a: dict, b: dict, live_a: dict, live_b: dict) -> dict:
    """:func:`overlap` among the weights that both runs changed at all (float32 sets
    ``live_a``, ``live_b``): what is left once the weights no run can move (those of ReLU units
    that never fire) are set aside."""
    both = {n: live_a[n] & live_b[n] for n in live_a}
    return overlap({n: a[n][both[n]] for n in a}, {n: b[n][both[n]] for n in b})


def _accuracy(cfg: LotteryConfig, data: D.Dataset, state: dict) -> float:
    from .science import make_model
    model = make_model(cfg, data)
    model.load_state_dict({n: t.detach().cpu() for n, t in state.items()})
    with torch.no_grad():
        pred = model(data.x_test.cpu()).argmax(-1)
    return float((pred == data.y_test.cpu()).float().mean())


def update_rank(before: dict, after: dict) -> dict:
    """Per weight matrix, the rank of its update ΔW over the largest possible, min(rows, cols)."""
    return {n: int(torch.linalg.matrix_rank((after[n] - before[n]).double())) / min(before[n].shape)
            for n in prunable(before)}


def run_finetune(cfg: LotteryConfig, imp: ImpResult, data: D.Dataset, lr: float | None = None,
                 steps: int | None = None, offsets=(1000, 2000), bars: bool | None = False):
    """For each seed of ``imp``: fine-tune its trained dense network twice on
    :func:`shifted_task` (mini-batch orders seeded ``seed + offsets[j]``), all at once, at
    ``lr`` (default a tenth of the chapter's) for ``steps`` (default half a training), and
    measure the updated sets in bf16 and float32, their overlap and the updates' ranks."""
    if not imp.dense:
        raise ValueError("run_finetune needs an IMP run that kept its trained dense networks "
                         "(run_imp's result.dense)")
    lr = cfg.lr / 10 if lr is None else float(lr)
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr}")
    steps = max(1, cfg.steps // 2) if steps is None else int(steps)
    task = shifted_task(data)
    seeds = [int(s) for s in imp.seeds]
    inits = [imp.dense[k] for k in range(len(seeds)) for _ in offsets]
    runs = [s + o for s in seeds for o in offsets]
    out = train_masked(cfg.replace(lr=lr), task, inits, [None] * len(inits), runs, steps=steps,
                       bars=bars)
    res = dict(lr=lr, steps=steps, seeds=seeds, per_seed={})
    for k, s in enumerate(seeds):
        before = {n: t.detach().cpu() for n, t in imp.dense[k].items()}
        after = [{n: t.detach().cpu() for n, t in out.state_dict(len(offsets) * k + j).items()}
                 for j in range(len(offsets))]
        bf = [updated(before, a) for a in after]
        f32 = [updated(before, a, torch.float32) for a in after]
        res["per_seed"][s] = dict(
            bf16=[float(_flat(u).float().mean()) for u in bf],
            float32=[float(_flat(u).float().mean()) for u in f32],
            layers={n: float(bf[0][n].float().mean()) for n in bf[0]},
            layers_f32={n: float(f32[0][n].float().mean()) for n in f32[0]},
            rank=update_rank(before, after[0]), **overlap(bf[0], bf[1]),
            live=live_overlap(bf[0], bf[1], f32[0], f32[1])["excess"],
            acc_shifted=_accuracy(cfg, task, before),
            acc=[float(out.histories[len(offsets) * k + j].last("test_acc"))
                 for j in range(len(offsets))],
            acc_before=float(imp.acc["ticket"][k, 0]))
    return res


def finetune_figure(ft: dict, seed: int | None = None):
    """Per weight matrix (first run of one seed): the share of weights changed in float32 and
    at bf16 resolution; and over all matrices, the overlap of the two runs' bf16 sets beside
    chance."""
    seed = ft["seeds"][0] if seed is None else seed
    r = ft["per_seed"][seed]
    names = list(r["layers"])
    fig = plots.figure(f"Weights changed by fine-tuning (seed {seed})", "", "% of the weights")
    x = names + ["all: overlap of two runs"]
    fig.add_bar(x=names, y=[100 * r["layers_f32"][n] for n in names], name="changed, float32",
                marker_color=plots.PALETTE[0])
    fig.add_bar(x=names, y=[100 * r["layers"][n] for n in names], name="changed, bf16",
                marker_color=plots.PALETTE[1])
    fig.add_bar(x=x[-1:], y=[100 * r["overlap"]], name="run A's bf16 set also in run B's",
                marker_color=plots.PALETTE[2])
    fig.add_bar(x=x[-1:], y=[100 * r["chance"]], name="chance (B's share)",
                marker_color=plots.PALETTE[3])
    fig.update_layout(barmode="group", hovermode="closest")
    return fig


def finetune_numbers(ft: dict) -> dict:
    """The fine-tuning section's numbers for the prose (medians over seeds, in percent)."""
    per = ft["per_seed"].values()
    med = lambda f: float(np.median([f(r) for r in per]))  # noqa: E731
    return dict(ft_lr=f"{ft['lr']:g}", ft_steps=ft["steps"],
                ft_bf16=f"{100 * med(lambda r: np.mean(r['bf16'])):.0f}%",
                ft_f32=f"{100 * med(lambda r: np.mean(r['float32'])):.0f}%",
                ft_overlap=f"{100 * med(lambda r: r['overlap']):.1f}%",
                ft_chance=f"{100 * med(lambda r: r['chance']):.1f}%",
                ft_acc=f"{100 * med(lambda r: np.mean(r['acc'])):.0f}%",
                ft_acc_before=f"{100 * med(lambda r: r['acc_shifted']):.0f}%",
                ft_dead=f"{100 * med(lambda r: 1 - np.mean(r['float32'])):.1f}%",
                ft_live=f"{med(lambda r: r['live']):.2f}",
                ft_excess=f"{med(lambda r: r['excess']):.2f}",
                ft_rank=f"{med(lambda r: min(r['rank'].values())):.2f}")


def finetune_claims(ft: dict, asserted: bool | None = None) -> list[dict]:
    """Mukherjee et al.'s three findings beside this network's fine-tuning, each judged on
    every seed. The overlap row (asserted on three seeds or more) holds when the two runs'
    sets overlap by at least :data:`OVERLAP_EXCESS` of the way from chance to 1; the sparsity
    and rank rows are shown with their numbers and say which of the paper's conditions this
    network does not meet."""
    per, seeds = ft["per_seed"], [int(s) for s in ft["seeds"]]
    asserted = len(seeds) >= 3 if asserted is None else asserted
    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    where = f"Adam lr {ft['lr']:g}, {ft['steps']} steps on the reversed inputs"
    lo, hi = PAPER_RANGE
    frac = {s: float(np.mean(per[s]["bf16"])) for s in per}
    text, ok = plots.judged(frac, {s: lo <= v <= hi for s, v in frac.items()}, pct)
    rows = [plots.claim(
        "Fine-tuning updates a small subnetwork (5–30% of the parameters changed in bf16)",
        "Mukherjee et al. (2025): RL fine-tuning of LLMs, weights read in bf16",
        f"{where}: share of weights whose bf16 value changed {text}; in float32 "
        f"{plots.spread({s: float(np.mean(per[s]['float32'])) for s in per}, pct)}", ok, False,
        control="the same count in float32 (every change); the paper's conditions, RL on data "
                "near the model's own outputs at a learning rate far below the bf16 spacing of "
                "billions of weights, are not this small supervised run's",
        window="the whole fine-tuning", seeds=seeds)]
    exc = {s: per[s]["excess"] for s in per}
    text, ok = plots.judged(exc, {s: v >= OVERLAP_EXCESS for s, v in exc.items()},
                           lambda v: f"{v:.2f}")
    said = "; ".join(f"seed {s}: {pct(per[s]['overlap'])} vs chance {pct(per[s]['chance'])}"
                     for s in per)
    rows.append(plots.claim(
        "The subnetworks updated by runs with different seeds overlap far more than chance",
        "Mukherjee et al. (2025)", f"{where}: overlap of the two runs' bf16 sets ({said}); "
        f"excess over chance, as a share of the way to 1: {text}; among the weights both runs "
        f"moved at all (float32): {plots.spread({s: per[s]['live'] for s in per}, lambda v: f'{v:.2f}')}",
        ok, asserted,
        control="chance: two independent sets of the same sizes (the second run's share); "
                f"holds at {OVERLAP_EXCESS:g} of the way from chance to 1 or more",
        window="two fine-tunings from the same trained network, different mini-batch orders",
        seeds=seeds))
    rank = {s: min(per[s]["rank"].values()) for s in per}
    text, ok = plots.judged(rank, {s: v >= FULL_RANK for s, v in rank.items()},
                           lambda v: f"{v:.2f}")
    rows.append(plots.claim(
        "The updates are sparse but nearly full rank", "Mukherjee et al. (2025)",
        f"{where}: rank of ΔW / min(rows, cols), lowest over the weight matrices: {text}",
        ok, False, control=f"full rank, 1 (the paper: above {FULL_RANK:g}); a ReLU unit that "
        "never fires gets no update, a zero row of ΔW", window="the first run of each seed",
        seeds=seeds))
    return rows
