"""Lottery tickets, the live panels (``Try it``): IMP with its controls, pruning at
initialization with the shuffling check, and linear mode connectivity, each trained in the
page at the reader's settings.

A panel is live (issue 43): at its defaults it shows a first result within 2 s of Run and
finishes within 10 s at the cpu profile on two cores. So the panels train as the chapter's
runners do (the same data, recipe, masks and seeds) but evaluate only where their figures
read (the test accuracy at the end of each training: no validation split read, no curve),
train together what can train together (a round's ticket with both of its controls; a
method's mask with its shuffle; a rewind step's pair), and draw as each piece finishes. Their
defaults (:data:`IMP_LIVE`, :data:`PAI_LIVE`, :data:`LMC_LIVE`) are smaller than the chapter's
recipe, which stays one slider away (width, steps, rounds), and each panel's ``work`` says
before a run what a setting costs.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from .. import progress as P
from .. import results
from ..runtime import get_profile, get_seed
from ..sweep import train_many
from ..train import At
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import VARIANTS, ImpConfig, ImpResult, Lmc, PaiAt, recipe, rewind_states
from .figures import PAI_NAMES, imp_figure, lmc_figure, pai_figure
from .science import (PAI_DENSITY, PAI_METHODS, LotteryConfig, barrier, density, full_masks, imp_round,
                      layer_densities, like_masks, load_data, make_model, pai_masks,
                      path_errors, rewind, shuffle_masks, split_validation)

__all__ = ["imp_panel", "pai_panel", "lmc_panel", "IMP_LIVE", "PAI_LIVE", "LMC_LIVE", "DRAW",
           "imp_work", "pai_work", "lmc_work", "live_imp", "live_pai", "live_lmc", "train_live"]

# The panels' defaults at the cpu and smoke profiles (the gpu profile keeps its own config):
# sized to finish within 10 s on two CPU cores, with the phenomenon each panel is about
# still showing (tests/lottery/test_panels.py checks it).
IMP_LIVE = dict(width=100, steps=300, rounds=3, prune_fraction=0.5)  # to 14.5% of the weights:
# a network a third as wide as the chapter's keeps its dense accuracy less far down (at 7.9%
# its ticket is 11 to 12 points below dense, the chapter's within one)
PAI_LIVE = dict(width=100, steps=300)
LMC_LIVE = dict(width=100, steps=300)
LMC_LR = 1e-2  # the LMC panel's learning rate (the chapter's pair of runs is at several)


def _live(profile: str, live: dict, overrides: dict) -> LotteryConfig:
    """The panel's base config: the profile's, with the panel's live defaults at the cpu and
    smoke profiles, and then the caller's overrides."""
    return LotteryConfig.for_profile(profile, **{**(live if profile != "gpu" else {}),
                                                 **overrides})


def _params(cfg: LotteryConfig, in_dim: int = 40, classes: int = 10) -> float:
    """Parameters of the chapter's MLP at ``cfg`` (a cost model's size)."""
    w = cfg.width
    return in_dim * w + w + (cfg.depth - 1) * (w * w + w) + w * classes + classes


def _step_cost(cfg: LotteryConfig, k: int) -> float:
    """The cost model of one step of ``k`` networks trained together, in milliseconds of one
    CPU thread: one network trains alone through ``train`` (a fixed overhead plus its
    arithmetic), several through the batched engine (a larger overhead, shared, plus each
    one's arithmetic). Fitted to CPU seconds measured at widths 50 to 300 with 1 to 3
    networks, within about 20%."""
    p = _params(cfg)
    return 1.0 + 1.5e-5 * p if k == 1 else 1.6 + 2.6e-5 * k * p


DRAW = 100.0  # a figure drawn (and, for LMC, a path measured), in the same units


def train_live(cfg: LotteryConfig, data, inits: list, masks: list, seeds: list):
    """Train one network per (initial state, mask, seed) at once, as
    :func:`~dynamics.lottery.experiments.train_masked` does (the same training examples less
    the validation split, the same recipe, masks and mini-batch orders), but evaluated only at
    the last step (the test accuracy a panel's figure reads) and with no validation metric: a
    panel draws no curves and no early-stopping step. Returns the sweep result."""
    train, _, _ = split_validation(data, cfg.n_val)

    def model_fn(c):
        model = make_model(cfg, train)
        state = inits[c["init"]]
        if state is not None and not next(model.parameters()).is_meta:
            model.load_state_dict(state)
        return model

    configs = [dict(seed=int(s), init=k) for k, s in enumerate(seeds)]
    return train_many(model_fn, train, configs, recipe(cfg).replace(eval=At([cfg.steps], train=False)),
                      masks=dict(params=[m or None for m in masks]), bars=False)


def _final(h) -> float:
    return math.nan if h.diverged or not len(h) else float(h.last("test_acc"))


# ============================================================================ IMP


def imp_work(rounds, steps, width=IMP_LIVE["width"], rewind_step=0, **_) -> float:
    """The units of work of an IMP panel run: the dense round (one network), then each round a
    ticket and its two controls trained together, and the dense run to the rewind point."""
    cfg = LotteryConfig(width=int(width))
    return (int(steps) * (_step_cost(cfg, 1) + int(rounds) * _step_cost(cfg, 3))
            + int(rewind_step) * _step_cost(cfg, 1) + (int(rounds) + 1) * DRAW)


def live_imp(cfg: LotteryConfig, seed: int, data=None, on_round=None) -> ImpResult:
    """IMP with both controls at every round, for one seed: round r trains the ticket
    (:func:`~dynamics.lottery.science.imp_round`: rewound to θ_k under the round's mask) and,
    together with it in one batched training, the same mask from a fresh initialization and
    the mask shuffled within each layer from θ_k (the chapter's controls, with their seeds).
    ``on_round(result, r)`` after each round. Only the final test accuracies are recorded
    (no early-stopping step: the panel's figure does not read it)."""
    job = P.current()
    data = data or load_data(cfg)
    R = cfg.rounds
    pre = cfg.rewind_step * _step_cost(cfg, 1)  # the dense run to θ_k, on the bar's first part
    total = pre + cfg.steps * sum(_step_cost(cfg, 1 if r == 0 else 3) for r in range(R + 1))
    with job.span_of(0.0, pre / total):
        states = rewind_states(cfg, data, [seed], [cfg.rewind_step])[0]
    theta0, theta_k = states[0], states.get(cfg.rewind_step)
    nan = lambda: {v: np.full((1, R + 1), np.nan) for v in VARIANTS}  # noqa: E731
    res = ImpResult(config=ImpConfig.of(cfg.to_dict()), seeds=[seed], density=np.ones(R + 1), acc=nan(),
                    stop_step=nan(), stop_acc=nan(), stop_on="validation loss", round_time=[],
                    curves={v: {} for v in VARIANTS})
    res.rewound, res.inits = [theta_k], [theta0]
    if theta_k is None:
        res.diverged.append(f"dense run, seed {seed}: diverged before step "
                            f"{cfg.rewind_step} (no θ_k)")
        return res
    gen = torch.Generator().manual_seed(10_000 + seed)  # the chapter's control seeds
    masks = [full_masks(theta_k)]
    done = pre
    for r in range(R + 1):
        res.masks.append(masks)
        res.density[r] = density(masks[0])
        runs = {}

        def train(starts, ms, r=r):
            inits, use, seeds = list(starts), [None if r == 0 else ms[0]], [seed]
            if r > 0:  # the controls, at this round's mask
                shuffled = shuffle_masks(ms[0], gen)
                inits += [None, rewind(theta_k, shuffled)]
                use += [ms[0], shuffled]
                seeds += [100_000 + 1000 * seed + r, seed]
            with job.span_of(done / total, cfg.steps * _step_cost(cfg, len(use)) / total):
                runs["out"] = out = train_live(cfg, data, inits, use, seeds)
            return [out.state_dict(0)]

        start = time.perf_counter()
        _, pruned = imp_round(train, [theta_k], masks, cfg)
        res.round_time.append(time.perf_counter() - start)
        done += cfg.steps * _step_cost(cfg, 1 if r == 0 else 3)
        out = runs["out"]
        for h, v in zip(out.histories, VARIANTS if r > 0 else ("ticket",)):
            if h.diverged:
                res.diverged.append(f"{v}, round {r}, seed {seed}: {h.status}")
            res.acc[v][0, r] = _final(h)
        if r == 0:  # the dense network is where all three curves start
            for v in ("reinit", "random"):
                res.acc[v][0, 0] = res.acc["ticket"][0, 0]
        if out.info.get("stopped"):
            res.stopped = True
            break
        if out.histories[0].diverged:
            break
        masks = pruned
        if on_round is not None:
            on_round(res, r)
    reached = len(res.masks)
    res.density = res.density[:reached]
    for v in VARIANTS:
        res.acc[v] = res.acc[v][:, :reached]
    return res


def imp_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: IMP with its controls; rounds, pruning rate, rewind step, global or per-layer
    ranking, learning rate, width and steps (the chapter's recipe: 14 rounds of 20% at width
    300 and 600 steps; the defaults, :data:`IMP_LIVE`, reach about the same sparsity in fewer,
    coarser rounds on a narrower network). ``above``: what the page shows above the panel
    (default: the provenance of the precomputed IMP slider); ``overrides`` change the config."""
    profile = get_profile(profile)
    chapter = LotteryConfig.for_profile(profile)
    base = _live(profile, IMP_LIVE, overrides)
    seed = get_seed(seed)

    def run(update, rounds, prune_fraction, rewind_step, scope, lr, width, steps):
        cfg = base.replace(rounds=int(rounds), prune_fraction=float(prune_fraction),
                           rewind_step=int(rewind_step), scope=scope, lr=float(lr),
                           width=int(width), steps=int(steps), seeds=1)

        def redraw(res, r):
            update(fig=imp_figure(res), status=f"round {r}: {100 * res.density[r]:.1f}% of "
                   f"the weights")
            shown.append(r)

        shown = []

        res = live_imp(cfg, seed, on_round=redraw)
        a, last = res.acc, len(res.masks) - 1
        drawn = bool(shown) and shown[-1] == last
        if res.diverged:
            update(status=f"diverged: {res.diverged[0]}")
        elif not res.stopped and last == 0:
            update(status=f"done: the dense network only, {100 * a['ticket'][0, 0]:.1f}% (no "
                   f"pruned round: no ticket and no controls)")
        elif not res.stopped:
            update(status=f"done: at {100 * res.density[last]:.1f}% of the weights, ticket "
                   f"{100 * a['ticket'][0, last]:.1f}%, re-init {100 * a['reinit'][0, last]:.1f}%, "
                   f"random mask {100 * a['random'][0, last]:.1f}% (dense {100 * a['ticket'][0, 0]:.1f}%)")
        return None if drawn else imp_figure(res)  # None: the last round's figure stands

    controls = controls_for(base, ["rounds", "prune_fraction", "rewind_step", "scope", "lr",
                                   "width", "steps"])
    top = max(chapter.steps, base.steps)
    limits = {"rewind_step": top, "rounds": 20, "prune_fraction": 0.9,
              "width": max(chapter.width, base.width), "steps": top}
    for c in controls:
        if c.name in limits:  # narrower than the config allows: what a panel run can afford
            c.high = max(limits[c.name], c.value)
        if c.name == "width":
            c.low, c.step = min(16, c.value), 4
        if c.name == "steps":
            c.low, c.step = min(50, c.value), 50
    return Panel(run, controls, title="Try it: iterative magnitude pruning",
                 note=_note(base, chapter, "rounds of", "prune_fraction"),
                 above=results.provenance_of("lottery_imp") if above == "precomputed" else above,
                 profile=profile, work=imp_work)


def _note(base: LotteryConfig, chapter: LotteryConfig, *what) -> str:
    """What the panel's defaults change from the chapter's recipe (the figure above), said
    only where they differ."""
    said = []
    if base.width != chapter.width:
        said.append(f"width {base.width} (the chapter: {chapter.width})")
    if base.steps != chapter.steps:
        said.append(f"{base.steps} steps per training (the chapter: {chapter.steps})")
    if "prune_fraction" in what and (base.rounds, base.prune_fraction) != (
            chapter.rounds, chapter.prune_fraction):
        said.append(f"{base.rounds} rounds of {base.prune_fraction:.0%} (the chapter: "
                    f"{chapter.rounds} of {chapter.prune_fraction:.0%})")
    if "lr" in what and base.lr != chapter.lr:
        said.append(f"learning rate {base.lr:g} (the chapter's recipe: {chapter.lr:g})")
    if "rewind_step" in what:
        said.append(f"rewind step {min(50, base.steps)} of {base.steps}")
    if not said:
        return ""
    narrow = (" A narrower network's ticket keeps its dense accuracy less far down than the "
              "chapter's." if "prune_fraction" in what and base.width < chapter.width else "")
    return ("Sized to finish in seconds: " + ", ".join(said) + "." + narrow + " The sliders "
            "reach the chapter's settings; the status line says what a setting costs before "
            "it runs.")


# ============================================================================ pruning at init


def pai_work(sparsity=1 - PAI_DENSITY, method="all", steps=PAI_LIVE["steps"], width=PAI_LIVE["width"],
             **_) -> float:
    """The units of work of a PaI panel run: per method its mask and its shuffle trained
    together (the first method with the dense network)."""
    cfg = LotteryConfig(width=int(width))
    n = len(PAI_METHODS) if method == "all" else 1
    return int(steps) * (_step_cost(cfg, 3) + (n - 1) * _step_cost(cfg, 2)) + n * DRAW


def live_pai(cfg: LotteryConfig, sparsity: float, methods=PAI_METHODS, seed: int = 0,
             data=None, on_method=None) -> PaiAt:
    """Pruning at initialization alone, at ``sparsity``, as
    :func:`~dynamics.lottery.experiments.run_pai_at` does (the same θ₀, masks and shuffles),
    one method at a time: its mask and its layer-wise shuffle trained together (the first
    method's with the dense network), and ``on_method(result_so_far)`` after each. Returns a
    :class:`~dynamics.lottery.experiments.PaiAt`, as ``run_pai_at`` does."""
    job = P.current()
    data = data or load_data(cfg)
    model = make_model(cfg, data, seed=seed).to(data.device)
    like = like_masks(model, 1.0 - sparsity, cfg.head_rate)
    init = {n: t.detach().clone() for n, t in model.state_dict().items()}
    gen = torch.Generator().manual_seed(seed)
    pai = PaiAt(density=density(like), seeds=[seed], layers={}, dense=[math.nan], diverged=[],
                stopped=False, acc={m: {"original": [math.nan], "shuffled": [math.nan]}
                                    for m in methods})
    costs = [_step_cost(cfg, 3 if i == 0 else 2) for i in range(len(methods))]
    for i, m in enumerate(methods):
        mk = pai_masks(m, model, data, like, cfg.scope)
        pai.layers[m] = layer_densities(mk)
        ms = [mk, shuffle_masks(mk, gen)] if i else [None, mk, shuffle_masks(mk, gen)]
        with job.span_of(sum(costs[:i]) / sum(costs), costs[i] / sum(costs)):
            out = train_live(cfg, data, [init] * len(ms), ms, [seed] * len(ms))
        hs = out.histories
        if i == 0:
            dense, hs = hs[0], hs[1:]
            pai.dense = [_final(dense)]
            if dense.diverged:
                pai.diverged.append(f"dense: {dense.status}")
        for how, h in zip(("original", "shuffled"), hs):
            if h.diverged:
                pai.diverged.append(f"{m} ({how}): {h.status}")
            pai.acc[m][how] = [_final(h)]
        if out.info.get("stopped"):
            pai.stopped = True
            break
        if on_method is not None:
            on_method(pai)
    return pai


def pai_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: pruning at init at a chosen sparsity, each mask as chosen and shuffled; each
    method's bars drawn as soon as they are trained."""
    profile = get_profile(profile)
    chapter = LotteryConfig.for_profile(profile)
    base = _live(profile, PAI_LIVE, overrides)
    seed = get_seed(seed)

    def run(update, sparsity, method, width, steps):
        methods = PAI_METHODS if method == "all" else (method,)
        cfg = base.replace(seeds=1, width=int(width), steps=int(steps))

        shown = []

        def redraw(pai):
            update(fig=pai_figure(pai))
            shown.append(1)

        pai = live_pai(cfg, float(sparsity), methods, seed=seed, on_method=redraw)
        if pai.diverged:
            update(status=f"diverged: {pai.diverged[0]}")
        elif not pai.stopped:
            update(status="done: " + ", ".join(
                f"{PAI_NAMES[m]} {100 * pai.acc[m]['original'][0]:.1f}% "
                f"(shuffled {100 * pai.acc[m]['shuffled'][0]:.1f}%)" for m in methods))
        return None if len(shown) == len(methods) else pai_figure(pai)  # None: all drawn

    return Panel(run, [Slider("sparsity", 0.5, 0.995, value=1 - PAI_DENSITY, step=0.005),
                       Choice("method", ("all",) + PAI_METHODS),
                       *_size_controls(base, chapter)],
                 title="Try it: pruning at initialization and the shuffling check",
                 note=_note(base, chapter),
                 above=results.provenance_of("lottery_pai") if above == "precomputed" else above,
                 profile=profile, work=pai_work)


def _size_controls(base: LotteryConfig, chapter: LotteryConfig) -> list:
    """Width and steps, from the panel's defaults up to the chapter's recipe."""
    return [Slider("width", min(16, base.width), max(base.width, chapter.width),
                   value=base.width, step=4, integer=True, description="width"),
            Slider("steps", min(50, base.steps), max(base.steps, chapter.steps),
                   value=base.steps, step=50, integer=True, description="steps")]


# ============================================================================ linear mode connectivity


def lmc_work(rewind_step=50, steps=LMC_LIVE["steps"], width=LMC_LIVE["width"], **_) -> float:
    """The units of work of an LMC panel run: the dense run to step k, then two pairs of
    networks (from θ₀ and from θ_k), each pair trained together."""
    cfg = LotteryConfig(width=int(width))
    return (int(rewind_step) * _step_cost(cfg, 1)
            + 2 * (int(steps) * _step_cost(cfg, 2) + 1.5 * DRAW))


def live_lmc(cfg: LotteryConfig, rewind_steps=(0, 50), seed: int = 0, data=None,
             pair_seeds=(1, 2), n_points: int = 11, on_pair=None) -> Lmc:
    """The instability analysis as :func:`~dynamics.lottery.experiments.run_lmc` does it (the
    same θ_k, pair seeds and path), one rewind step at a time: its two runs trained together,
    the error along their path measured, and ``on_pair(result_so_far)`` called, before the
    next rewind step trains. Returns the same :class:`~.experiments.Lmc` as ``run_lmc``."""
    job = P.current()
    data = data or load_data(cfg)
    ks = sorted({int(k) for k in rewind_steps})
    pre = max(ks) * _step_cost(cfg, 1)  # the dense run to the last θ_k, then the pairs
    total = pre + len(ks) * cfg.steps * _step_cost(cfg, 2)
    with job.span_of(0.0, pre / total):
        states = rewind_states(cfg, data, [seed], ks)[0]
    model = make_model(cfg, data).to(data.device)
    nan = [math.nan] * n_points
    lmc = Lmc(rewind_steps=ks, alphas=np.linspace(0, 1, n_points).tolist(),
              errors={k: nan for k in ks}, barrier={k: math.nan for k in ks},
              end_error={k: math.nan for k in ks}, seed=seed, diverged={k: None for k in ks},
              density=1.0, stopped=False)
    for i, k in enumerate(ks):
        if k not in states:
            lmc.diverged[k] = "the dense run diverged before this step"
            if on_pair is not None:
                on_pair(lmc)
            continue
        with job.span_of(pre / total, (1 - pre / total)).part(i, len(ks)):
            out = train_live(cfg, data, [states[k]] * 2, [None, None],
                             [1000 * seed + p for p in pair_seeds])
        if out.info.get("stopped"):
            lmc.stopped = True
            break
        lmc.diverged[k] = next((h.status for h in out.histories if h.diverged), None)
        if not lmc.diverged[k]:
            errs = path_errors(model, out.state_dict(0), out.state_dict(1), data.x_test,
                               data.y_test, n_points)
            lmc.errors[k], lmc.barrier[k] = errs.tolist(), barrier(errs)
            lmc.end_error[k] = float(errs[[0, -1]].mean())
        if on_pair is not None:
            on_pair(lmc)
    return lmc


def lmc_panel(profile: str | None = None, seed: int | None = None, above="precomputed",
              **overrides):
    """Try it: instability of two runs from θ₀ and from θ_k, against the learning rate; the
    path from θ₀ drawn as soon as it is measured."""
    profile = get_profile(profile)
    chapter = LotteryConfig.for_profile(profile)
    base = _live(profile, LMC_LIVE, overrides)
    seed = get_seed(seed)

    def run(update, lr, rewind_step, optimizer, width, steps):
        cfg = base.replace(lr=float(lr), optimizer=optimizer, width=int(width),
                           steps=int(steps))
        title = f"Two runs from θₖ, {optimizer} lr {float(lr):.2g}"

        shown = []

        def redraw(lmc):
            update(fig=lmc_figure(lmc, title))
            shown.append(1)

        lmc = live_lmc(cfg, (0, int(rewind_step)), seed=seed, on_pair=redraw)
        why = [f"k = {k}: {v}" for k, v in lmc.diverged.items() if v]
        if why:
            update(status="diverged: " + "; ".join(why))
        elif not lmc.stopped:
            update(status="done: barrier " + ", ".join(
                f"{100 * lmc.barrier[k]:.1f} pts at k = {k}" for k in lmc.rewind_steps))
        # None: the last rewind step's figure stands
        return None if len(shown) == len(lmc.rewind_steps) else lmc_figure(lmc, title)

    top = max(base.steps, chapter.steps)
    return Panel(run, [Slider("lr", 1e-4, 10.0, value=LMC_LR, log=True, description="learning rate"),
                       Slider("rewind_step", 0, top, value=min(50, base.steps), integer=True,
                              description="rewind step k"),
                       Choice("optimizer", ("adam", "momentum", "sgd")),
                       *_size_controls(base, chapter)],
                 title="Try it: linear mode connectivity",
                 note=_note(base.replace(lr=LMC_LR), chapter, "lr", "rewind_step"),
                 above=results.provenance_of("lottery_lmc") if above == "precomputed" else above,
                 profile=profile, work=lmc_work)
