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
from .. import evidence, plots
from .experiments import ImpResult, train_masked
from .science import LotteryConfig, prunable

__all__ = ["shifted_task", "updated", "live_units", "overlap", "live_overlap", "null_overlap",
           "magnitude_bins", "binned_null_overlap", "update_rank", "rank_bound", "rank_one", "run_finetune",
           "finetune_figure", "finetune_claims", "finetune_numbers"]

MAGNITUDE_BINS = 20    # the magnitude-binned null: |w| quantile bins per weight matrix
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


def live_units(sets: list[dict]) -> dict:
    """Per weight matrix (``{name: 0/1}``, in forward order, each matrix's input the previous
    one's output), the weights of live units: a unit is dead when none of its incoming weights
    or none of its outgoing weights is in any of ``sets`` (for fine-tuning, the float32 sets:
    a ReLU unit that never fires gets no update in or out); an input feature needs a weight out,
    an output unit a weight in. Removing a dead unit's weights can leave a neighbour dead, so
    this repeats until nothing changes. Every weight of a live unit pair is live, in a set or
    not."""
    names = list(sets[0])
    if any(list(s) != names for s in sets):
        raise ValueError("live_units() needs sets over the same weight matrices")
    for n0, n1 in zip(names, names[1:]):
        if sets[0][n1].shape[1] != sets[0][n0].shape[0]:
            raise ValueError(f"live_units(): {n1} does not take {n0}'s output (shapes "
                             f"{tuple(sets[0][n0].shape)}, {tuple(sets[0][n1].shape)})")
    union = {n: torch.stack([s[n].bool() for s in sets]).any(0) for n in names}
    alive = [torch.ones(sets[0][names[0]].shape[1], dtype=torch.bool)] + [
        torch.ones(sets[0][n].shape[0], dtype=torch.bool) for n in names]  # units per level
    while True:
        live = {n: alive[i + 1][:, None] & alive[i][None, :] for i, n in enumerate(names)}
        used = {n: union[n] & live[n] for n in names}
        new = [alive[0] & used[names[0]].any(0)]
        for i, n in enumerate(names):
            into = used[n].any(1)
            out = used[names[i + 1]].any(0) if i + 1 < len(names) else torch.ones_like(into)
            new.append(alive[i + 1] & into & out)
        if all(torch.equal(x, y) for x, y in zip(new, alive)):
            return live
        alive = new


def overlap(a: dict, b: dict, live: dict | None = None) -> dict:
    """Mukherjee et al.'s overlap of two updated sets, the share of ``a``'s set also in ``b``'s,
    beside chance, the overlap two independent random sets with ``a``'s and ``b``'s counts in
    each matrix would have in expectation (Σ_l |A_l| |B_l| / n_l over |A|: the null model
    matrix by matrix), and the excess over chance as a fraction of the way to 1. With ``live``
    (:func:`live_units`), only the weights of live units count: a dead unit's weights, in
    neither set, would otherwise lower chance and inflate the excess."""
    if set(a) != set(b) or any(a[n].shape != b[n].shape for n in a):
        raise ValueError("overlap() needs two sets over the same weights")
    if live is not None:
        a = {n: a[n][live[n].bool()] for n in a}
        b = {n: b[n][live[n].bool()] for n in b}
    fa, fb = _flat(a), _flat(b)
    na = max(1, int(fa.sum()))
    ov = float((fa & fb).sum()) / na
    expected = sum(float(a[n].sum()) * float(b[n].sum()) / a[n].numel()
                   for n in a if a[n].numel())
    chance = expected / na
    excess = (ov - chance) / (1 - chance) if chance < 1 else float("nan")
    return dict(overlap=ov, chance=chance, excess=excess)


def null_overlap(a: dict, b: dict, live: dict | None = None, seed: int = 0) -> dict:
    """The row's control: :func:`overlap` of ``a`` with ``b`` shuffled within each matrix's
    (live) weights, a random set with ``b``'s count there (seeded)."""
    g = torch.Generator().manual_seed(int(seed))
    live = live or {n: torch.ones_like(b[n], dtype=torch.bool) for n in b}
    shuffled = {}
    for n, m in b.items():
        keep = live[n].bool()
        vals = m[keep]
        out = torch.zeros_like(m, dtype=torch.bool)
        out[keep] = vals[torch.randperm(vals.numel(), generator=g)].bool()
        shuffled[n] = out
    return overlap(a, shuffled, live)


def magnitude_bins(weights: dict, live: dict | None = None, bins: int = MAGNITUDE_BINS) -> dict:
    """Per weight matrix, each weight's magnitude bin: the ``bins`` quantile bins of |w| among
    that matrix's (``live``) weights, 0 the smallest (ties broken by position); -1 outside
    ``live``."""
    if int(bins) < 1:
        raise ValueError(f"magnitude_bins: bins must be at least 1, got {bins}")
    out = {}
    for n, w in weights.items():
        keep = torch.ones_like(w, dtype=torch.bool) if live is None else live[n].bool()
        rank = torch.empty(int(keep.sum()), dtype=torch.long)
        rank[w[keep].abs().flatten().argsort(stable=True)] = torch.arange(rank.numel())
        b = torch.full(w.shape, -1, dtype=torch.long)
        b[keep] = rank * int(bins) // max(1, rank.numel())
        out[n] = b
    return out


def binned_null_overlap(a: dict, b: dict, weights: dict, live: dict | None = None,
                        bins: int = MAGNITUDE_BINS, seed: int = 0) -> dict:
    """The null that keeps magnitude: :func:`overlap` of ``a`` with a random set drawn, in each
    matrix and each |w| bin of ``weights`` (the reference point, :func:`magnitude_bins`), at
    ``b``'s kept count in that bin (``b`` shuffled within the bin, seeded); beside it
    ``binned_chance``, that null's expected overlap, Σ |A_bin| |B_bin| / n_bin / |A|, and
    ``binned_excess``, the excess of the null's expectation over :func:`overlap`'s per-matrix
    chance (as a share of the way to 1). Two sets that both favour weights of some magnitude
    overlap by that much without sharing anything else; only an overlap above this null is
    more than their common preference."""
    if set(b) != set(weights) or any(b[n].shape != weights[n].shape for n in b):
        raise ValueError("binned_null_overlap() needs the reference weights of the sets' matrices")
    g = torch.Generator().manual_seed(int(seed))
    where = magnitude_bins(weights, live, bins)
    drawn, expected, na = {}, 0.0, 0
    for n, m in b.items():
        out = torch.zeros_like(m, dtype=torch.bool)
        for k in range(int(bins)):
            at = where[n] == k
            vals = m[at].bool()
            out[at] = vals[torch.randperm(vals.numel(), generator=g)]
            if vals.numel():
                expected += float(a[n][at].sum()) * float(vals.sum()) / vals.numel()
        drawn[n] = out
        na += int(a[n][where[n] >= 0].sum())
    got = overlap(a, drawn, live)
    binned = expected / max(1, na)
    chance = got["chance"]
    return dict(got, binned_chance=binned,
                binned_excess=(binned - chance) / (1 - chance) if chance < 1 else float("nan"))


def live_overlap(a: dict, b: dict, live_a: dict, live_b: dict) -> dict:
    """:func:`overlap` among the weights that both runs changed at all (float32 sets
    ``live_a``, ``live_b``): what is left once every weight either run left alone is set
    aside (stricter than :func:`live_units`, which sets aside whole dead units)."""
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
    """Per weight matrix, the rank of its update ΔW over the largest possible, min(rows, cols),
    counted at the resolution the weights are stored in: a singular value of ΔW counts only
    above ``eps · ‖max(|W_before|, |W_after|)‖_F`` (``eps`` the weights' dtype's spacing at 1),
    a bound on the spectral norm of the round-off ΔW picks up when ``after`` is stored (each
    entry off by at most ``eps`` times its size). At double precision's own tolerance that
    round-off, about 1e-7 of every weight in float32, would count as rank: a rank-1 update
    added to float32 weights would read as full rank."""
    out = {}
    for n in prunable(before):
        b, a = before[n], after[n]
        eps = torch.finfo(b.dtype).eps if b.dtype.is_floating_point else 0.0
        tol = eps * float(torch.linalg.matrix_norm(torch.maximum(b.abs(), a.abs()).double()))
        out[n] = int(torch.linalg.matrix_rank((a.double() - b.double()), atol=tol, rtol=0.0)
                     if tol > 0 else torch.linalg.matrix_rank((a - b).double())) / min(b.shape)
    return out


def rank_bound(before: dict, after: dict) -> dict:
    """Per weight matrix, the largest rank its update ΔW can have given its zero rows and
    columns (a unit no update reaches in or out), min(nonzero rows, nonzero columns), over
    min(rows, cols): :func:`update_rank` can reach this and no more."""
    out = {}
    for n in prunable(before):
        moved = after[n] != before[n]
        out[n] = min(int(moved.any(1).sum()), int(moved.any(0).sum())) / min(before[n].shape)
    return out


def rank_one(before: dict, after: dict) -> dict:
    """``after`` with each weight matrix's update ΔW replaced by its best rank-1 approximation
    (a LoRA-like rank-1 update of the same matrices): the rank row's control."""
    out = dict(after)
    for n in prunable(before):
        u, sv, vh = torch.linalg.svd((after[n] - before[n]).double(), full_matrices=False)
        out[n] = before[n] + (sv[0] * torch.outer(u[:, 0], vh[0])).to(before[n].dtype)
    return out


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
            rank=update_rank(before, after[0]),
            rank_bound=rank_bound(before, after[0]),
            rank_one=update_rank(before, rank_one(before, after[0])),
            **overlap(bf[0], bf[1], alive := live_units(f32)),
            all_weights=overlap(bf[0], bf[1])["excess"],
            null=null_overlap(bf[0], bf[1], alive, seed=s)["excess"],
            **_binned(binned_null_overlap(bf[0], bf[1], {n: before[n] for n in bf[1]}, alive, seed=s)),
            live_share=float(_flat(alive).float().mean()),
            live=live_overlap(bf[0], bf[1], f32[0], f32[1])["excess"],
            acc_shifted=_accuracy(cfg, task, before),
            acc=[float(out.histories[len(offsets) * k + j].last("test_acc"))
                 for j in range(len(offsets))],
            acc_before=float(imp.acc["ticket"][k, 0]))
    return res


def _binned(r: dict) -> dict:
    """A run's record of :func:`binned_null_overlap`: the drawn null's excess over chance and
    the null's expected overlap and excess."""
    return dict(binned_null=r["excess"], binned_chance=r["binned_chance"],
                binned_excess=r["binned_excess"])


def finetune_figure(ft: dict, seed: int | None = None):
    """Per weight matrix (first run of one seed): the share of weights changed in float32 and
    at bf16 resolution; and over all matrices, the overlap of the two runs' bf16 sets beside
    chance."""
    seed = ft["seeds"][0] if seed is None else seed
    r = ft["per_seed"][seed]
    names = list(r["layers"])
    fig = plots.figure(f"Weights changed by fine-tuning (seed {seed})", "", "% of the weights")
    x = names + ["live units: overlap of two runs"]
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


def distinct(*values: float, decimals: int = 1, suffix: str = "", most: int = 4) -> list[str]:
    """``values`` printed with ``decimals`` decimals, or more (up to ``most``) where two that
    differ would print alike: the digits the prose needs to tell the quantities it compares
    apart (values equal to ``most`` decimals print alike, as they are)."""
    for d in range(decimals, most + 1):
        out = [f"{v:.{d}f}{suffix}" for v in values]
        if all(out[i] != out[k] for i in range(len(values)) for k in range(i)
               if round(values[i], most) != round(values[k], most)):
            return out
    return out


def finetune_numbers(ft: dict) -> dict:
    """The fine-tuning section's numbers for the prose (medians over seeds, in percent): each
    pair the prose compares printed with the digits that tell it apart (:func:`distinct`)."""
    per = ft["per_seed"].values()
    med = lambda f: float(np.median([f(r) for r in per]))  # noqa: E731
    acc_before, acc = distinct(100 * med(lambda r: r["acc_shifted"]),
                               100 * med(lambda r: np.mean(r["acc"])), decimals=0, suffix="%")
    bf16, f32 = distinct(100 * med(lambda r: np.mean(r["bf16"])),
                         100 * med(lambda r: np.mean(r["float32"])), decimals=0, suffix="%")
    ov, chance = distinct(100 * med(lambda r: r["overlap"]), 100 * med(lambda r: r["chance"]),
                          suffix="%")
    excess, everything, null, binned = distinct(
        med(lambda r: r["excess"]), med(lambda r: r["all_weights"]), med(lambda r: r["null"]),
        med(lambda r: r["binned_null"]), decimals=2)
    return dict(ft_lr=f"{ft['lr']:g}", ft_steps=ft["steps"], ft_bf16=bf16, ft_f32=f32,
                ft_overlap=ov, ft_chance=chance, ft_acc=acc, ft_acc_before=acc_before,
                ft_dead=f"{100 * med(lambda r: 1 - np.mean(r['float32'])):.1f}%",
                ft_live_share=f"{100 * med(lambda r: r['live_share']):.1f}%",
                ft_live=f"{med(lambda r: r['live']):.2f}",
                ft_excess=excess, ft_all=everything, ft_null=null, ft_binned=binned,
                ft_threshold=f"{OVERLAP_EXCESS:g}",
                ft_rank=f"{med(lambda r: min(r['rank'].values())):.2f}",
                ft_rank_bound=f"{med(lambda r: _lowest(r)[1]):.2f}",
                ft_rank_vs=(f"as much as its nonzero rows and columns allow"
                            if all(np.isclose(*_lowest(r)) for r in per) else
                            f"its nonzero rows and columns allow {med(lambda r: _lowest(r)[1]):.2f}"),
                ft_rank_one=f"{med(lambda r: min(r['rank_one'].values())):.3f}")


def _lowest(r: dict) -> tuple:
    """One seed's record: the lowest update rank over the matrices and, for that matrix, the
    most its zero rows and columns allow (:func:`rank_bound`; the rank where it has none)."""
    n = min(r["rank"], key=r["rank"].get)
    return r["rank"][n], r.get("rank_bound", r["rank"])[n]


def finetune_claims(ft: dict) -> list[dict]:
    """Mukherjee et al.'s three findings beside this network's fine-tuning, each judged by the
    claims engine on every seed against a control that must fail the same test, none asserted:
    the share changed in bf16 against :data:`PAPER_RANGE`'s "small" end (control: the float32
    count); the overlap of the two runs' sets, :data:`OVERLAP_EXCESS` of the way from chance to
    1 (control: the magnitude-binned null, :func:`binned_null_overlap`); the updates' rank,
    :data:`FULL_RANK` of the maximum (control: ΔW's best rank-1 approximation)."""
    per = ft["per_seed"]
    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    two = lambda v: f"{v:.2f}"  # noqa: E731
    where = f"Adam lr {ft['lr']:g}, {ft['steps']} steps on the reversed inputs"
    lo, hi = PAPER_RANGE
    sparse = evidence.judge(evidence.Claim(
        f"Fine-tuning updates a small subnetwork ({100 * lo:.0f}–{100 * hi:.0f}% of the parameters "
        "changed in bf16)", "Mukherjee et al. (2025): RL fine-tuning of LLMs, weights read in bf16",
        measure=lambda r: float(np.mean(r["bf16"])), control_measure=lambda r: float(np.mean(r["float32"])),
        test=evidence.Test("<=", hi, "PAPER_RANGE: at most the paper's largest share"),
        control="the same count in float32 (every change), which must fail the same test; the "
                "paper's conditions, RL on data near the model's own outputs at a learning rate "
                "far below the bf16 spacing of billions of weights, are not this small "
                "supervised run's", window="the whole fine-tuning", asserted=False, fmt=pct),
        per, per).row()
    sparse["measured here"] = f"{where}: share of weights whose bf16 value changed " + sparse["measured here"]
    lap = evidence.judge(evidence.Claim(
        "The subnetworks updated by runs with different seeds overlap far more than chance",
        "Mukherjee et al. (2025)", measure=lambda r: r["excess"],
        control_measure=lambda r: r["binned_null"],
        test=evidence.Test(">=", OVERLAP_EXCESS, "OVERLAP_EXCESS of the way from chance to 1"),
        control="the magnitude-binned null: the second run's set redrawn within each matrix's "
                f"{MAGNITUDE_BINS} bins of |w| at the fine-tuning's start (live weights only), at "
                "its kept share in each bin, which must fail the same test (bf16 reads a small "
                "weight's change sooner: both sets favour small weights); chance, the expected "
                "overlap of sets of the same per-matrix size; the null's excess over chance",
        window="two fine-tunings from the same trained network, different mini-batch orders; "
               "the weights of live units only (a unit no float32 update reaches in or out "
               "is dead, its weights set aside)", asserted=False, fmt=two), per, per).row()
    said = "; ".join(f"seed {s}: {pct(per[s]['overlap'])} vs chance {pct(per[s]['chance'])}, "
                     f"{pct(per[s]['binned_chance'])} under the binned null" for s in per)
    lap["measured here"] = (
        f"{where}: overlap of the two runs' bf16 sets on live units' weights ({said}); excess "
        "over chance, as a share of the way to 1: " + lap["measured here"]
        + "; the null shuffled within each matrix, magnitude ignored (not the control): "
        f"{plots.spread({s: per[s]['null'] for s in per}, two)}; over all weights, dead units "
        f"included (not the test): {plots.spread({s: per[s]['all_weights'] for s in per}, two)}")
    rank = evidence.judge(evidence.Claim(
        "The updates are sparse but nearly full rank", "Mukherjee et al. (2025)",
        measure=lambda r: min(r["rank"].values()), control_measure=lambda r: min(r["rank_one"].values()),
        test=evidence.Test(">=", FULL_RANK, "FULL_RANK (the paper: above 0.99)"),
        control="ΔW's best rank-1 approximation (a LoRA-like update), measured the same way "
                "(lowest over the matrices), which must fail the same test; a ReLU unit that "
                "never fires gets no update, a zero row of ΔW; ranks counted above float32's "
                "round-off of the weights",
        window="the first run of each seed; rank of ΔW / min(rows, cols), lowest over the "
               "weight matrices", asserted=False, fmt=two), per, per).row()
    rank["measured here"] = (
        f"{where}: rank of ΔW / min(rows, cols), lowest over the matrices " + rank["measured here"]
        + "; for that matrix, the most its nonzero rows and columns allow (not the test): "
        + plots.spread({s: _lowest(per[s])[1] for s in per}, two))
    return [sparse, lap, rank]
