"""Runners of the lottery-ticket chapter: the IMP curve with both controls (:func:`run_imp`),
pruning at initialization beside the ticket (:func:`run_pai`, :func:`run_pai_at`), the
instability analysis (:func:`run_lmc`), their cost, and :func:`precompute_plan`.

All masked training goes through :func:`train_masked`, which trains many masked networks at
once with the book's sweep engine (:func:`dynamics.sweep.train_many`): every seed of an IMP
round together, every control of a curve together. Runners report into
:mod:`dynamics.progress` (a live panel's progress bar and Stop button) and honour dry runs
(``DYNAMICS_DRY_RUN``): a few steps per training, two seeds, two rounds and the ends of every
list of runs (``runtime.grid``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import numpy as np
import torch
import torch.nn as nn

from .. import data as D
from .. import results, units
from .. import progress as P
from .. import runtime
from ..runtime import get_seed
from ..sweep import choose_strategy, train_many
from ..train import At, Every, History, Hooks, Recipe, train
from .science import (PAI_DENSITY, PAI_METHODS, LotteryConfig, density, full_masks, imp_round,
                      layer_densities, like_masks, load_data, make_model, pai_masks,
                      path_errors, barrier, best_step, rewind, shuffle_masks,
                      split_validation, torch_prune_masks)

VARIANTS = ("ticket", "reinit", "random")


def train_masked(cfg: LotteryConfig, data: D.Dataset, inits: list, masks: list, seeds: list,
                 steps: int | None = None, bars: bool | None = None):
    """Train one network per (initial state, mask, seed) at once; returns the
    :class:`~dynamics.sweep.SweepResult`. ``inits[k]`` is a state dict (or None: a fresh
    initialization seeded with ``seeds[k]``); ``masks[k]`` (or None: dense) is applied at the
    start and after every optimizer step, so pruned weights stay exactly zero; ``seeds[k]``
    also sets the mini-batch order. The networks train on ``data``'s training examples less
    the validation split (:func:`~dynamics.lottery.science.split_validation`, ``cfg.n_val``),
    and each evaluation records its loss and accuracy there (``val_loss``, ``val_acc``) beside
    the test set's. Progress and Stop: :mod:`dynamics.progress`."""
    if not (len(inits) == len(masks) == len(seeds)):
        raise ValueError("inits, masks and seeds must have the same length")
    steps = steps or cfg.steps
    data, x_val, y_val = split_validation(data, cfg.n_val)
    configs = [dict(seed=int(s), init=k) for k, s in enumerate(seeds)]

    def model_fn(c):
        model = make_model(cfg, data)
        state = inits[c["init"]]
        if state is not None and not next(model.parameters()).is_meta:
            model.load_state_dict(state)
        return model

    # the strategy "auto" would choose without the validation metric (which alone would make
    # it train one network at a time): batched on a GPU, as before the split
    strategy = choose_strategy(make_model(cfg, data), data, cfg.batch_size, len(configs))
    return train_many(model_fn, data, configs, recipe(cfg, steps),
                      masks=dict(params=[m or None for m in masks]),
                      metrics=partial(validation, x=x_val, y=y_val), strategy=strategy,
                      bars=bars)


@torch.no_grad()
def validation(model: nn.Module, data: D.Dataset, x: torch.Tensor, y: torch.Tensor) -> dict:
    """One evaluation's loss and accuracy on the validation split ``(x, y)`` (``data``, the
    training data, is not read): what early stopping reads, never the test set."""
    out = model(x)
    return dict(val_loss=torch.nn.functional.cross_entropy(out, y),
                val_acc=(out.argmax(-1) == y).float().mean())


def recipe(cfg: LotteryConfig, steps: int | None = None) -> Recipe:
    """How every network of the chapter trains: ``cfg``'s optimizer, learning rate and
    mini-batches for ``steps`` (default ``cfg.steps``), ``cfg.evals`` evaluations, each of
    the test set (the curves and accuracies) and, through :func:`train_masked`'s metric, the
    validation split (early stopping); never of the training set, which no figure reads."""
    steps = steps or cfg.steps
    return Recipe(steps, optimizer=cfg.optimizer, lr=cfg.lr, batch_size=cfg.batch_size,
                  eval=Every(max(1, steps // cfg.evals), train=False))


def _state(model: nn.Module) -> dict:
    return {n: t.detach().clone() for n, t in model.state_dict().items()}


def rewind_states(cfg: LotteryConfig, data: D.Dataset, seeds: list, steps) -> list[dict]:
    """For each seed: θ₀ and the dense network's weights θ_k after each of ``steps``, taken
    on the way through one training run per seed: ``out[i][k]``. A θ_k that a diverged run
    never reached is missing. (In a dry run training stops after a few steps, and a later
    θ_k is the last one reached.) The dense runs train on the training examples less the
    validation split, as every network of the chapter does."""
    data = split_validation(data, cfg.n_val)[0]
    want = sorted({int(k) for k in steps if k > 0})
    at = {k: int(runtime.steps(k)) for k in want}
    grab_at = sorted(set(at.values()))
    out = []
    for s in seeds:
        model = make_model(cfg, data, seed=s).to(data.device)
        states, captured = {0: _state(model)}, {}
        if want:
            def grab(step, history, m):
                if step in grab_at:
                    captured[step] = _state(m)
                return False
            # an evaluation here only hands the hook the weights: no set is read
            train(model, data, recipe(cfg, runtime.steps(want[-1])).replace(
                      eval=At(grab_at, train=False, test=False)),
                  hooks=Hooks(on_eval=grab), seed=s, bars=False)
            states.update({k: captured[at[k]] for k in want if at[k] in captured})
        out.append(states)
    return out


# ============================================================================ IMP


@dataclass(kw_only=True)
class ImpConfig(results.Record):
    """The settings an IMP curve ran at (:class:`ImpResult`'s ``config``): the
    :class:`~.science.LotteryConfig` as a file holds it, field by field (a file written before
    the validation split has no ``n_val``: None). The ``lottery_pai`` and ``lottery_lmc`` files'
    provenance config is the same mapping (``ImpConfig.of(prov["config"])``)."""

    dataset: str
    n_train: int
    n_test: int
    n_val: int | None = None
    width: int
    depth: int
    optimizer: str
    lr: float
    batch_size: int
    steps: int
    rounds: int
    prune_fraction: float
    head_rate: float
    scope: str
    rewind_step: int
    seeds: int
    control_every: int
    evals: int


@dataclass(kw_only=True)
class ImpResult(results.Record):
    """An IMP curve (:func:`run_imp`), one setting of ``data/lottery_imp.json``: per round r
    (0 = dense) and seed, the density and each variant's final test accuracy, its
    early-stopping step (Frankle & Carbin's: the step of lowest loss on the validation split)
    and its test accuracy at that step; in memory only (:data:`IN_MEMORY`, never written), the
    masks, θ₀ and the rewound weights θ_k (for :func:`run_pai`). ``stop_on`` names the loss
    early stopping read: "validation loss" (a file written before the chapter held out a
    validation split has no ``stop_on`` and reads as "test loss", and has no ``stop_acc``:
    NaN). The arrays are numpy arrays however built (a file's nulls are NaN)."""

    config: ImpConfig
    seeds: list
    density: np.ndarray                    # [R+1] mean over seeds
    acc: dict                              # variant -> [S, R+1] final test accuracy
    stop_step: dict                        # variant -> [S, R+1] step of lowest validation loss
    stop_acc: dict | None = None           # variant -> [S, R+1] test accuracy at that step
    stop_on: str = "test loss"             # a fresh run's: "validation loss"
    round_time: list                       # wall seconds of each IMP round (all seeds at once)
    control_time: float = 0.0
    curves: dict = field(default_factory=dict)   # variant -> round -> test_acc curve (seed 0)
    eval_steps: list = field(default_factory=list)
    diverged: list = field(default_factory=list)  # "ticket, round 3, seed 0: diverged at step 40"
    # in memory only (:data:`IN_MEMORY`): not fields of the file, so not read from one
    stopped: bool = field(default=False, init=False)  # stopped from a panel before the last round
    torch_agrees: list = field(default_factory=list, init=False)  # per pruning step (seed 0)
    masks: list = field(default_factory=list, init=False, repr=False)    # [R+1][S] mask dicts
    rewound: list = field(default_factory=list, init=False, repr=False)  # [S] rewound θ_k
    inits: list = field(default_factory=list, init=False, repr=False)    # [S] θ₀ state dicts
    dense: list = field(default_factory=list, init=False, repr=False)    # [S] trained dense

    IN_MEMORY = ("stopped", "torch_agrees", "masks", "rewound", "inits", "dense")

    def __post_init__(self):
        arr = lambda m: {k: np.asarray(v, dtype=float) for k, v in m.items()}  # noqa: E731
        self.density = np.asarray(self.density)
        self.acc, self.stop_step = arr(self.acc), arr(self.stop_step)
        # written before the validation split: no test accuracy at the early-stopping step
        self.stop_acc = (arr(self.stop_acc) if self.stop_acc is not None
                         else {k: np.full_like(v, np.nan) for k, v in self.acc.items()})

    def round_at(self, low: float = 0.05, high: float = 0.10) -> int:
        """The sparsest round whose density lies in [low, high] (else the sparsest round)."""
        inside = [r for r, d in enumerate(self.density) if low <= d <= high]
        return inside[-1] if inside else len(self.density) - 1

    def round_near(self, target: float) -> int:
        """The pruned round whose density is closest to ``target`` (log scale)."""
        if len(self.density) < 2:
            raise ValueError("this IMP run has no pruned round")
        return min(range(1, len(self.density)),
                   key=lambda r: abs(math.log(self.density[r] / target)))

    @property
    def eval_interval(self) -> int:
        """Steps between two evaluations (the resolution of the step measures)."""
        return int(np.diff(self.eval_steps).min()) if len(self.eval_steps) > 1 else 0

    def to_dict(self) -> dict:
        """The payload (what ``data/lottery_imp.json`` holds per setting): every field but
        :data:`IN_MEMORY`'s."""
        return {k: v for k, v in super().to_dict().items() if k not in self.IN_MEMORY}


@dataclass
class ImpFile(results.Record):
    """``data/lottery_imp.json``: ``imp``, ``{setting: ImpResult}``, the main curve first."""
    imp: dict[str, ImpResult]


def run_imp(cfg: LotteryConfig, seeds=None, data: D.Dataset | None = None, controls=True,
            bars: bool | None = None, on_round=None,
            train_fn: Callable | None = None) -> ImpResult:
    """Iterative magnitude pruning with rewinding, and its two controls.

    Round 0 trains the dense network from the rewind point θ_k (θ₀ when ``rewind_step`` is
    0); every round is :func:`~dynamics.lottery.science.imp_round`: start the survivors from
    θ_k, train, prune ``prune_fraction`` of them by trained magnitude. The controls train, at
    a round's mask: the same mask from a fresh random initialization (``reinit``), and a
    layer-wise shuffled mask from θ_k (``random``), all at once after the last round
    (``controls``: True for every ``control_every``-th round and the last, False for none,
    or a list of rounds).

    ``on_round(result_so_far, round)`` runs after each round (a panel's redraw); progress
    and Stop go through :mod:`dynamics.progress` (a stopped run keeps the rounds it made);
    ``train_fn(starts, masks, seeds)`` replaces the training (tests). A round whose ticket
    diverges ends the curve there (its weights cannot be pruned by magnitude);
    ``result.diverged`` says where.
    """
    job = P.current()
    seeds = list(range(get_seed(), get_seed() + cfg.seeds)) if seeds is None else list(seeds)
    seeds = runtime.grid(seeds)                  # a dry run: two seeds...
    R = len(runtime.grid(range(cfg.rounds)))     # ...and two rounds
    data = data or load_data(cfg)
    S = len(seeds)
    if controls is True:
        controls = sorted(set(range(cfg.control_every, cfg.rounds + 1, cfg.control_every))
                          | {cfg.rounds})
    wanted = [r for r in (controls or []) if 0 < r <= cfg.rounds]
    # a dry run reaches rounds 0..R only: its controls there stand for all the wanted ones
    control_rounds = sorted({min(r, R) for r in wanted})
    units = (R + 1) + 2 * len(control_rounds)  # in trainings of S networks
    train_fn = train_fn or (lambda starts, masks, seeds: train_masked(
        cfg, data, starts, masks, seeds, bars=bars))

    states = rewind_states(cfg, data, seeds, [cfg.rewind_step])
    inits = [st[0] for st in states]
    theta_k = [st.get(cfg.rewind_step) for st in states]
    shape = (S, R + 1)
    nan = lambda: {v: np.full(shape, np.nan) for v in VARIANTS}  # noqa: E731
    res = ImpResult(config=ImpConfig.of(cfg.to_dict()), seeds=seeds, density=np.ones(R + 1), acc=nan(),
                    stop_step=nan(), stop_acc=nan(), stop_on="validation loss", round_time=[],
                    curves={v: {} for v in VARIANTS})
    res.rewound, res.inits = theta_k, inits
    res.diverged += [f"dense run, seed {s}: diverged before step {cfg.rewind_step} (no θ_k)"
                     for s, t in zip(seeds, theta_k) if t is None]
    if res.diverged:
        return res
    masks = [full_masks(t) for t in theta_k]
    for r in range(R + 1):
        res.masks.append(masks)
        res.density[r] = np.mean([density(m) for m in masks])
        runs = {}

        def train_round(starts, ms, r=r):
            with job.part(r, units):
                runs["out"] = out = train_fn(starts, [None if r == 0 else m for m in ms], seeds)
            return [out.state_dict(k) for k in range(S)]

        start = time.perf_counter()
        trained, pruned = imp_round(train_round, theta_k, masks, cfg)
        if r == 0:
            res.dense = trained
        res.round_time.append(time.perf_counter() - start)
        out = runs["out"]
        res.eval_steps = list(out.histories[0].steps)
        for k, h in enumerate(out.histories):
            _record(res, "ticket", k, r, h)
        if r == 0:  # the dense network is where all three curves start
            for table in (res.acc, res.stop_step, res.stop_acc):
                for v in ("reinit", "random"):
                    table[v][:, 0] = table["ticket"][:, 0]
        res.curves["ticket"][r] = list(out.histories[0]["test_acc"])
        if out.info.get("stopped"):
            res.stopped = True
            break
        if any(h.diverged for h in out.histories):
            break
        if r < R:
            ref = torch_prune_masks({n: trained[0][n] for n in masks[0]}, masks[0],
                                    cfg.prune_fraction, cfg.scope, cfg.head_fraction)
            res.torch_agrees.append(all(torch.equal(ref[n], pruned[0][n]) for n in ref))
            masks = pruned
        if on_round is not None:
            on_round(res, r)
    reached = len(res.masks)  # fewer than R + 1 rounds when stopped or diverged
    res.density = res.density[:reached]
    for table in (res.acc, res.stop_step, res.stop_acc):
        for v in VARIANTS:
            table[v] = table[v][:, :reached]
    done = [r for r in control_rounds if r < reached]
    if done and not res.stopped:
        with job.span_of((R + 1) / units, 1 - (R + 1) / units):
            run_controls(cfg, res, data, done, bars=bars, train_fn=train_fn)
        if on_round is not None:
            on_round(res, len(res.masks) - 1)
    return res


def _record(res: ImpResult, variant: str, k: int, r: int, h: History) -> None:
    if h.diverged:
        res.diverged.append(f"{variant}, round {r}, seed {res.seeds[k]}: {h.status}")
        return
    if not len(h):
        return  # not reached: the run was stopped
    res.acc[variant][k, r] = h.last("test_acc")
    stop = best_step(h, "val_loss")  # Frankle & Carbin: never the test set
    res.stop_step[variant][k, r] = stop
    res.stop_acc[variant][k, r] = float(h["test_acc"][h.steps.index(stop)])


def run_controls(cfg: LotteryConfig, res: ImpResult, data: D.Dataset, rounds,
                 bars=None, train_fn: Callable | None = None) -> None:
    """Both controls at the given pruned rounds, all in one batched sweep: the ticket's mask
    from a fresh initialization (seeded apart from everything else), and the ticket's mask
    shuffled within each layer, from θ_k."""
    gen = torch.Generator().manual_seed(10_000 + res.seeds[0])
    inits, masks, seeds, where = [], [], [], []
    for r in rounds:
        for k, s in enumerate(res.seeds):
            inits.append(None)
            masks.append(res.masks[r][k])
            seeds.append(100_000 + 1000 * s + r)
            where.append(("reinit", k, r))
            shuffled = shuffle_masks(res.masks[r][k], gen)
            inits.append(rewind(res.rewound[k], shuffled))
            masks.append(shuffled)
            seeds.append(s)
            where.append(("random", k, r))
    start = time.perf_counter()
    if train_fn is None:
        out = train_masked(cfg, data, inits, masks, seeds, bars=bars)
    else:
        out = train_fn(inits, masks, seeds)
    res.control_time = time.perf_counter() - start
    res.stopped = res.stopped or bool(out.info.get("stopped"))
    for (v, k, r), h in zip(where, out.histories):
        _record(res, v, k, r, h)
        if k == 0 and len(h):
            res.curves[v][r] = list(h["test_acc"])


# ============================================================================ pruning at init


@dataclass
class Pai(results.Record):
    """One comparison of pruning at initialization with the IMP ticket (:func:`run_pai`), one
    entry of ``data/lottery_pai.json``: at IMP round ``round`` (``density`` of the weights),
    per method (``"imp"``, the ticket, first) and per seed (``seeds``), the final test accuracy
    of its mask as chosen and shuffled within every layer (``acc[method]["original"]``,
    ``["shuffled"]``; NaN where a run diverged or was not trained), the dense network's
    (``dense``), each mask's density per layer on the first seed (``layers``), each method's
    mean scoring seconds (``score_time``), one training's seconds (``train_time``) and which
    runs diverged."""
    round: int
    density: float
    seeds: list
    acc: dict
    dense: list
    layers: dict
    score_time: dict
    train_time: float
    diverged: list


@dataclass
class PaiFile(results.Record):
    """``data/lottery_pai.json``: ``pai``, the :class:`Pai` comparisons at the IMP rounds
    nearest :data:`PAI_TARGETS` (densest first)."""
    pai: list[Pai]


@dataclass
class PaiAt(results.Record):
    """Pruning at initialization alone (:func:`run_pai_at`, the panel's
    :func:`~dynamics.lottery.panels.live_pai`): :class:`Pai`'s ``density``, ``seeds``,
    ``acc`` (no ``"imp"``), ``layers``, ``dense`` and ``diverged`` at one sparsity, one seed,
    and whether it was ``stopped``."""
    density: float
    seeds: list
    acc: dict
    layers: dict
    dense: list
    diverged: list
    stopped: bool = False


def run_pai(cfg: LotteryConfig, imp: ImpResult, round: int | None = None, methods=PAI_METHODS,
            data: D.Dataset | None = None, bars: bool | None = None) -> Pai:
    """Pruning at initialization vs the IMP ticket at the same sparsity, each with its mask
    as chosen and shuffled within every layer (Frankle et al. 2021's sanity check).

    At round ``round`` of ``imp`` (default: the round nearest :data:`PAI_DENSITY` of the
    weights, the chapter's comparison), each method scores θ₀ and keeps exactly as many hidden
    and output weights as the ticket does (:func:`~dynamics.lottery.science.pai_masks`); PaI
    masks train from θ₀, the ticket and its shuffle from θ_k. The IMP numbers are reused from ``imp`` where its controls covered
    that round."""
    data = data or load_data(cfg)
    r = imp.round_near(PAI_DENSITY) if round is None else int(round)
    if not 0 < r < len(imp.masks):
        raise ValueError(f"round must be one of the pruned rounds 1..{len(imp.masks) - 1}, got {r}")
    gen = torch.Generator().manual_seed(20_000 + imp.seeds[0])
    inits, masks, seeds, where, cost, layers = [], [], [], [], {}, {}
    for k, s in enumerate(imp.seeds):
        like = imp.masks[r][k]
        model = make_model(cfg, data).to(data.device)
        model.load_state_dict(imp.inits[k])
        for m in methods:
            start = time.perf_counter()
            mk = pai_masks(m, model, data, like, cfg.scope)
            cost.setdefault(m, []).append(time.perf_counter() - start)
            if k == 0:
                layers[m] = layer_densities(mk)
            for how, mask in (("original", mk), ("shuffled", shuffle_masks(mk, gen))):
                inits.append(imp.inits[k]), masks.append(mask), seeds.append(s)
                where.append((m, how, k))
        if k == 0:
            layers["imp"] = layer_densities(like)
        if np.isnan(imp.acc["random"][k, r]):
            inits.append(imp.rewound[k]), masks.append(shuffle_masks(like, gen)), seeds.append(s)
            where.append(("imp", "shuffled", k))
    S = len(imp.seeds)
    acc = {m: {"original": np.full(S, np.nan), "shuffled": np.full(S, np.nan)}
           for m in ("imp", *methods)}
    acc["imp"]["original"] = imp.acc["ticket"][:, r].copy()
    acc["imp"]["shuffled"] = imp.acc["random"][:, r].copy()
    start = time.perf_counter()
    out = train_masked(cfg, data, inits, masks, seeds, bars=bars)
    train_time = (time.perf_counter() - start) / max(1, len(inits))
    diverged = []
    for (m, how, k), h in zip(where, out.histories):
        if h.diverged:
            diverged.append(f"{m} ({how}), seed {imp.seeds[k]}: {h.status}")
        acc[m][how][k] = np.nan if h.diverged else h.last("test_acc")
    return Pai(round=r, density=float(imp.density[r]), seeds=imp.seeds, acc=acc,
               dense=imp.acc["ticket"][:, 0].copy(), layers=layers,
               score_time={m: float(np.mean(v)) for m, v in cost.items()},
               train_time=train_time, diverged=diverged)


def run_pai_at(cfg: LotteryConfig, sparsity: float, methods=PAI_METHODS, seed: int | None = None,
               data: D.Dataset | None = None, bars: bool | None = None) -> PaiAt:
    """Pruning at initialization alone, at ``sparsity`` (no IMP, so it is quick): each
    method's mask and its layer-wise shuffle, trained from the same θ₀, beside the dense
    network: a :class:`PaiAt` (:func:`run_pai`'s numbers without the IMP ticket)."""
    data = data or load_data(cfg)
    seed = get_seed(seed)
    model = make_model(cfg, data, seed=seed).to(data.device)
    like = like_masks(model, 1.0 - sparsity, cfg.head_rate)
    init = _state(model)
    gen = torch.Generator().manual_seed(seed)
    masks, where, layers = [], [], {}
    for m in methods:
        mk = pai_masks(m, model, data, like, cfg.scope)
        layers[m] = layer_densities(mk)
        masks += [mk, shuffle_masks(mk, gen)]
        where += [(m, "original"), (m, "shuffled")]
    out = train_masked(cfg, data, [init] * (len(masks) + 1), [None] + masks,
                       [seed] * (len(masks) + 1), bars=bars)
    acc = {m: {"original": [np.nan], "shuffled": [np.nan]} for m in methods}
    diverged = [f"dense: {h.status}" for h in out.histories[:1] if h.diverged]
    for (m, how), h in zip(where, out.histories[1:]):
        if h.diverged:
            diverged.append(f"{m} ({how}): {h.status}")
        acc[m][how] = [np.nan if h.diverged else h.last("test_acc")]
    dense = out.histories[0]
    return PaiAt(density=density(like), seeds=[seed], acc=acc, layers=layers,
                 dense=[np.nan if dense.diverged else dense.last("test_acc")], diverged=diverged,
                 stopped=bool(out.info.get("stopped")))


# ============================================================================ linear mode connectivity


@dataclass
class Lmc(results.Record):
    """One instability analysis (:func:`run_lmc`): at each rewind step k (``rewind_steps``),
    the test error along the straight path between the two runs from θ_k (``errors[k]``, at
    ``alphas``), its barrier, the mean error of the two ends, and why a pair has no path
    (``diverged[k]``, None where it has one); the seed, the mask's density (1.0: dense) and
    whether it was stopped. Keyed by k: ints in a fresh result, strings in one read from
    JSON (:func:`by_step` reads either)."""
    rewind_steps: list
    alphas: list
    errors: dict
    barrier: dict
    end_error: dict
    seed: int
    diverged: dict
    density: float
    stopped: bool


@dataclass
class LmcFile(results.Record):
    """``data/lottery_lmc.json``: ``lmc``, ``{lr: Lmc}`` on the first seed at every learning
    rate (the slider); ``seeds``, ``{lr: {seed: Lmc}}`` at the learning rates the claims read
    on more seeds (the first seed's run included)."""
    lmc: dict[str, Lmc]
    seeds: dict[str, dict[str, Lmc]]

    def at(self, lr: str) -> dict[int, Lmc]:
        """``{seed: Lmc}`` at learning rate ``lr``: every seed the file holds there (the first
        seed's alone where it has no more)."""
        first = self.lmc[lr]
        return {int(s): v for s, v in (self.seeds.get(lr) or {str(first.seed): first}).items()}


def run_lmc(cfg: LotteryConfig, rewind_steps=(0, 50, 200), seed: int | None = None,
            data: D.Dataset | None = None, masks: dict | None = None, n_points: int = 11,
            pair_seeds=(1, 2), bars: bool | None = None) -> Lmc:
    """Instability analysis: from the dense run's weights θ_k at each rewind step k, train two
    copies with different mini-batch orders (``pair_seeds``), optionally under one sparse
    ``mask``, and measure the test error along the straight line between the two results.
    A pair with a diverged run has no path: its barrier is NaN and ``diverged`` says so."""
    data = data or load_data(cfg)
    seed = get_seed(seed)
    if len(pair_seeds) != 2 or pair_seeds[0] == pair_seeds[1]:
        raise ValueError(f"pair_seeds must be two different seeds, got {pair_seeds}")
    ks = runtime.grid(sorted({int(k) for k in rewind_steps}))
    states = rewind_states(cfg, data, [seed], ks)[0]
    reached = [k for k in ks if k in states]  # a diverged dense run never reaches later θ_k
    inits = [states[k] if masks is None else rewind(states[k], masks) for k in reached
             for _ in pair_seeds]
    seeds = [1000 * seed + p for _ in reached for p in pair_seeds]
    out = train_masked(cfg, data, inits, [masks] * len(inits), seeds,
                       bars=bars) if reached else None
    model = make_model(cfg, data).to(data.device)
    curves, barriers, ends, diverged = {}, {}, {}, {}
    for k in ks:
        i = reached.index(k) if k in reached else None
        pair = [] if i is None else out.histories[2 * i:2 * i + 2]
        diverged[k] = ("the dense run diverged before this step" if i is None
                       else next((h.status for h in pair if h.diverged), None))
        if diverged[k] or not all(len(h) for h in pair):
            curves[k], barriers[k], ends[k] = [math.nan] * n_points, math.nan, math.nan
            continue
        a, b = out.state_dict(2 * i), out.state_dict(2 * i + 1)
        errs = path_errors(model, a, b, data.x_test, data.y_test, n_points)
        curves[k], barriers[k], ends[k] = errs.tolist(), barrier(errs), float(errs[[0, -1]].mean())
    return Lmc(rewind_steps=ks, alphas=np.linspace(0, 1, n_points).tolist(), errors=curves,
               barrier=barriers, end_error=ends, seed=seed, diverged=diverged,
               density=1.0 if masks is None else density(masks),
               stopped=bool(out is not None and out.info.get("stopped")))


# ============================================================================ cost


def imp_cost(res: ImpResult, round: int | None = None) -> dict:
    """Measured wall seconds, per seed, of IMP up to ``round`` (the ticket exists only after
    training that many networks: rounds 0..round) and of one training (the median round)."""
    r = res.round_at() if round is None else round
    per_seed = len(res.seeds)
    return dict(round=r, density=float(res.density[r]), trainings=r + 1,
                imp_seconds=float(np.sum(res.round_time[:r + 1])) / per_seed,
                train_seconds=float(np.median(res.round_time)) / per_seed)


# ============================================================================ precomputed results


def seed_mean(values) -> float:
    """Mean over seeds, ignoring runs that were not trained (NaN); NaN if none was."""
    v = np.asarray(values, dtype=float)
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def by_step(d: dict, k):
    """A value keyed by rewind step, from a fresh :func:`run_lmc` result (int keys) or one
    read from JSON (str keys)."""
    return d[k] if k in d else d[str(k)]


def precompute_plan(profile: str | None = None) -> units.Plan:
    """IMP curves for several settings, pruning at init at several sparsities, and
    instability against rewind step for several learning rates, as units (the main IMP curve
    with its PaI comparisons, each other IMP setting, each learning rate's instability on the
    first seed, and the claims' further seeds at the two learning rates they judge), written
    to ``data/lottery_{imp,pai,lmc}.json``."""
    p = units.Plan("lottery_tickets", profile)
    cfg = LotteryConfig.for_profile(p.profile)
    command = f"python -m dynamics_ops.precompute lottery_tickets --profile {p.profile}"
    note = {"smoke": "Smoke scale.", "cpu": "Made at the CPU scale (an MLP on MNIST-1D); at the "
            "gpu profile the same command would train on MNIST with more seeds.", "gpu": "GPU scale."}[p.profile]
    n_main = {"smoke": 2, "cpu": 3, "gpu": 5}[p.profile]
    n_var = {"smoke": 1, "cpu": 1, "gpu": 3}[p.profile]
    seed = get_seed()
    hot = 1e-2
    main = f"global, reset to θ₀, {cfg.prune_fraction:.0%}/round ({n_main} seeds)"
    variants = {
        "layer-wise pruning": cfg.replace(scope="layer"),
        f"prune {2 * cfg.prune_fraction:.0%} per round": cfg.replace(
            prune_fraction=2 * cfg.prune_fraction, rounds=max(1, cfg.rounds // 2)),
        f"Adam lr {hot:g}, reset to θ₀": cfg.replace(lr=hot),
        f"Adam lr {hot:g}, rewind to step 50": cfg.replace(lr=hot, rewind_step=50),
    }
    seeds = runtime.grid(range(seed, seed + n_main))  # seeds are runs: a dry run keeps the ends
    p.unit(main, partial(_imp_and_pai, cfg, seeds), config=dict(cfg.to_dict(), seeds=seeds))
    labels = [main]
    for label in p.grid(variants):
        vseeds = runtime.grid(range(seed, seed + n_var))
        labels.append(p.unit(label, partial(_imp_unit, variants[label], vseeds),
                             config=dict(variants[label].to_dict(), seeds=vseeds)))
    p.output("lottery_imp", lambda r: dict(imp={k: v["imp"] if k == main else v for k, v in r.items()}),
             units=labels, config=cfg, command=command, note=note)
    p.output("lottery_pai", lambda r: dict(pai=r[main]["pai"]), units=[main], config=cfg,
             command=command, note=note)
    for lr in p.grid([cfg.lr, 5e-3, hot]):  # units declared inside: a dry run counts its cut
        p.unit(f"lmc {lr:g}", partial(_lmc_unit, cfg.replace(lr=lr), seed),
               config=dict(cfg.replace(lr=lr).to_dict(), seed=seed))
    # the claims' seeds after the first, only where the claims read them: from θ₀ at the
    # chapter's learning rate, every rewind step at the larger one
    n_lmc = {"smoke": 1, "cpu": 3, "gpu": 3}[p.profile]
    for lr, ks in ((cfg.lr, (0,)), (hot, LMC_REWINDS)):
        for s in p.grid(range(seed + 1, seed + n_lmc)):
            p.unit(f"lmc {lr:g} seed {s}", partial(_lmc_unit, cfg.replace(lr=lr), s, ks),
                   config=dict(cfg.replace(lr=lr).to_dict(), seed=s, rewind_steps=list(ks)))
    p.output("lottery_lmc", _lmc_payload, config=cfg, command=command, note=note)
    return p


RECORDS = {"lottery_imp": ImpFile, "lottery_pai": PaiFile, "lottery_lmc": LmcFile}
"""Each precomputed file of the chapter read as a record, and its record."""

PAI_TARGETS = (0.35, 0.2, 0.1, 0.05)  # the densities of the precomputed PaI comparison
LMC_REWINDS = (0, 10, 25, 50, 100, 200)  # the rewind steps of the precomputed instability


def _imp_unit(cfg: LotteryConfig, seeds) -> dict:
    return run_imp(cfg, seeds=seeds, data=load_data(cfg), bars=False).to_dict()


def _imp_and_pai(cfg: LotteryConfig, seeds) -> dict:
    """The main IMP curve and, from its masks and weights (which only live in memory), pruning
    at init at the rounds nearest :data:`PAI_TARGETS`."""
    data = load_data(cfg)
    imp = run_imp(cfg, seeds=seeds, data=data, bars=False)
    pais = []
    for target in PAI_TARGETS:
        r = imp.round_near(target)
        if not pais or pais[-1].round != r:
            pais.append(run_pai(cfg, imp, round=r, data=data, bars=False))
    return dict(imp=imp.to_dict(), pai=pais)


def _lmc_unit(cfg: LotteryConfig, seed: int, rewind_steps=LMC_REWINDS) -> Lmc:
    return run_lmc(cfg, rewind_steps, seed=seed, data=load_data(cfg), bars=False)


def _lmc_payload(results: dict) -> LmcFile:
    """``lmc``: ``{lr: run_lmc}`` on the first seed, every learning rate (the slider);
    ``seeds``: ``{lr: {seed: run_lmc}}`` at the learning rates that have more seeds (the
    claims), the first seed's run included."""
    first = {k.split()[1]: v for k, v in results.items() if "seed" not in k}
    seeds: dict = {}
    for k, v in results.items():
        if "seed" in k:
            lr = k.split()[1]
            seeds.setdefault(lr, {str(first[lr]["seed"]): first[lr]})[str(v["seed"])] = v
    return LmcFile.of(dict(lmc=first, seeds=seeds))



__all__ = ["VARIANTS", "ImpConfig", "ImpResult", "ImpFile", "Pai", "PaiFile", "PaiAt", "Lmc", "LmcFile", "RECORDS",
           "by_step", "imp_cost", "precompute_plan",
           "rewind_states", "run_controls", "run_imp", "run_lmc", "run_pai", "run_pai_at",
           "seed_mean", "train_masked", "validation"]
