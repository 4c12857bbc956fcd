"""Neural collapse, the experiments: runners that train the models of ``science.py`` with the
book's one training loop and record the collapse metrics, and ``precompute_plan`` for the static
figures of the chapter.

Every runner takes a ``seed`` and reports its progress into :mod:`dynamics.progress` (a live
panel's bar and Stop, however many runs it makes); a single training run also takes
``on_eval``, ``train`` hooks for a panel that redraws while it trains (``update.every``).
Lists of runs go through :func:`dynamics.runtime.grid`, so a dry run
(``DYNAMICS_DRY_RUN``) trains the two ends of each list for a few steps at full size.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import ClassVar

import numpy as np
import torch
import torch.nn as nn

from .. import data as D
from .. import results, runtime, units
from .. import progress as P
from ..runtime import dry_run, get_seed
from ..models import evaluating
from ..sweep import grid, train_many
from ..train import At, History, Hooks, LogSpaced, Recipe, log_steps, train
from .science import (CONDITIONS, METRICS, CollapseConfig, CollapseNet, ImbalanceConfig,
                      UFMConfig, UnconstrainedFeatures, _features, class_means, cosine_schedule,
                      imbalanced_ufm_solution, load_data, make_model, mean_geometry, measure,
                      simplex_etf, terminal_phase_start, ufm_data)

__all__ = ["Recorder", "snapshot", "live_eval_steps", "run_collapse", "run_weight_decays",
           "run_conditions", "run_ufm", "run_ufm_pair", "run_imbalance", "balanced_config",
           "run_claim_seeds", "Geometry", "FreeModel", "Network", "Exact", "Imbalance",
           "Conditions", "UfmPair", "ClaimSeeds", "DecaySweep", "ImbalanceSweep", "Simplex", "RECORDS",
           "dataset_line", "project_3d", "simplex_frames", "PRECOMPUTED_WEIGHT_DECAYS",
           "PRECOMPUTED_GD_WEIGHT_DECAYS", "PRECOMPUTED_RATIOS", "PRECOMPUTED_SEEDS", "COMMAND",
           "precompute_plan"]


# ============================================================================ the results
# What the runners return and the precomputed files hold, field by field (dynamics.results
# .Record): a claim names what it reads, and a field renamed in the code or in a file fails
# when the file is read, naming it.


@dataclass
class Geometry(results.Record):
    """Uncentred class means (:func:`.science.mean_geometry`): each class's count, the norm
    of its mean feature and of its classifier row, and the angles (degrees) between means."""
    counts: list
    feature_norm: list
    classifier_norm: list
    angles: list


@dataclass
class FreeModel(results.Record):
    """The unconstrained features model of an imbalance run, trained: its geometry
    (:class:`Geometry`'s fields), how its training ended and its final training loss."""
    counts: list
    feature_norm: list
    classifier_norm: list
    angles: list
    status: str
    train_loss: float


@dataclass
class Network(results.Record):
    """The network of an imbalance run, trained: :class:`FreeModel`'s fields and its final
    training accuracy."""
    counts: list
    feature_norm: list
    classifier_norm: list
    angles: list
    status: str
    train_acc: float
    train_loss: float


@dataclass
class Exact(results.Record):
    """The exact solution of the imbalanced unconstrained features model
    (:func:`.theory.imbalanced_ufm_solution`), class by class."""
    classifier_norm: list
    feature_norm: list
    output: list


@dataclass
class Imbalance(results.Record):
    """One :func:`run_imbalance`: the class counts, whether it was stopped, the free model, its
    exact solution and the network. A live run stopped (or not yet finished) holds None for
    the parts it has not trained; a file's runs hold every part."""
    counts: list
    stopped: bool
    ufm: FreeModel
    theory: Exact
    network: Network


@dataclass
class Conditions(results.Record):
    """Section 3's four runs (:func:`run_conditions`), each a :class:`~dynamics.train.History`:
    the network of section 1 under AdamW with its decay and without, and under plain gradient
    descent with its decay and without. :meth:`labelled` names them as the figure's legend."""
    adamw_decay: History
    adamw_none: History
    gd_decay: History
    gd_none: History

    LABELS: ClassVar[dict] = {"adamw_decay": "AdamW, weight decay", "adamw_none": "AdamW, none",
                              "gd_decay": "GD, weight decay", "gd_none": "GD, none"}

    def labelled(self) -> dict[str, History]:
        """``{legend label: run}``, in the order of the fields."""
        return {label: getattr(self, name) for name, label in self.LABELS.items()}


@dataclass
class UfmPair(results.Record):
    """The unconstrained features model (:func:`run_ufm_pair`) trained with weight decay
    ``weight_decay`` (``decay``) and without (``none``), each a History."""
    weight_decay: float
    decay: History
    none: History

    def labelled(self) -> dict[str, History]:
        """``{"λ = <decay>": decay, "λ = 0": none}``, the figure's legend."""
        return {f"λ = {self.weight_decay:g}": self.decay, f"λ = {0.0:g}": self.none}


@dataclass
class ClaimSeeds(results.Record):
    """The live runs the claims table judges (:func:`run_claim_seeds`), each ``{seed:
    result}``: section 3's four runs (:func:`run_conditions`), the unconstrained features pair
    (:func:`run_ufm_pair`), the imbalance run, the cross-entropy run of section 1 and the
    imbalance run on balanced classes (:func:`balanced_config`)."""
    runs: dict[int, Conditions]
    ufm: dict[int, UfmPair]
    imbalance: dict[int, Imbalance]
    ce: dict
    balanced: dict[int, Imbalance]


@dataclass
class DecaySweep(results.Record):
    """A weight-decay sweep (``data/collapse_weight_decay.json``, AdamW, and
    ``collapse_gd_weight_decay.json``, gradient descent): the decays (the first 0), seed 0's
    run at each (``histories``, a :class:`~dynamics.train.History` as a dict: what the figures
    draw) and the other seeds' (``seed_histories``: ``{seed: [history per decay]}``)."""
    weight_decays: list
    histories: list
    seed_histories: dict

    def by_seed(self) -> dict[int, "DecaySweep"]:
        """The sweep seed by seed, ``{seed: the sweep with that seed's histories}``, seed 0's
        first."""
        out = {0: self}
        for s, hs in self.seed_histories.items():
            out[int(s)] = replace(self, histories=hs)
        return out


@dataclass
class ImbalanceSweep(results.Record):
    """The imbalance file (``data/collapse_imbalance.json``): seed 0's run at every ratio
    (``runs``, what the slider draws) and the other seeds' at the imbalanced ratios
    (``seed_runs``: ``{seed: [run per ratio of seed_ratios]}``)."""
    ratios: list
    runs: list[Imbalance]
    seed_ratios: list
    seed_runs: dict[str, list[Imbalance]]

    def by_seed(self) -> dict[int, list[Imbalance]]:
        """The runs the published claims read, seed by seed: each seed's at
        :attr:`seed_ratios` (seed 0's taken from :attr:`runs`)."""
        first = dict(zip(self.ratios, self.runs))
        out = {0: [first[r] for r in self.seed_ratios]}
        for s, rs in self.seed_runs.items():
            out[int(s)] = rs
        return out


@dataclass
class Simplex(results.Record):
    """Section 2's precomputed picture (``data/collapse_simplex.json``): the 3-D frames
    (:func:`simplex_frames`; the last with the simplex ETF), their steps, the run's history
    (a dict) and its final centred class means."""
    frames: list
    steps: list
    history: dict
    final_means: list


RECORDS = {"collapse_weight_decay": DecaySweep, "collapse_gd_weight_decay": DecaySweep,
           "collapse_imbalance": ImbalanceSweep, "collapse_simplex": Simplex}
"""Each precomputed file of the chapter and the record it is read as."""


# ============================================================================ recording


class Recorder:
    """The collapse metrics as one :func:`dynamics.train.train` metric: called at each
    evaluation, it measures every NC metric (and the conditions) in one pass and returns them
    as a dict of named values.

    With ``snapshots=True`` it also keeps, at each evaluation, the centred class means, the
    classifier and a few examples' features (for the 3-D pictures of section 2); with
    ``held_out=True`` it also measures NC1 and NC4 on the test set (``test_nc1``,
    ``test_nc4``: the features of examples the network never fitted).
    """

    def __init__(self, conditions: bool = False, snapshots: bool = False, n_points: int = 12,
                 held_out: bool = False):
        self.keys = METRICS + (CONDITIONS if conditions else ())
        self.held_out = held_out
        self.conditions = conditions
        self.snapshots = [] if snapshots else None
        self.n_points = n_points
        self.model = None  # the trained model, set by the runners

    def __call__(self, model, data) -> dict:
        values = measure(model, data.x_train, data.y_train, data.n_classes, self.conditions)
        if self.snapshots is not None:
            self.snapshots.append(snapshot(model, data, self.n_points))
        out = {k: values[k] for k in self.keys}
        if self.held_out:
            test = measure(model, data.x_test, data.y_test, data.n_classes)
            out.update(test_nc1=test["nc1"], test_nc4=test["nc4"])
        return out


@torch.no_grad()
def snapshot(model: nn.Module, data: D.Dataset, n_points: int = 12) -> dict:
    """Centred class means, classifier rows and the features of the first ``n_points``
    examples of each class, as CPU float64 arrays (small: C and C·n_points rows)."""
    with evaluating(model):
        h = _features(model, data.x_train)
    means, _ = class_means(h, data.y_train, data.n_classes)
    mu_g = h.mean(0)
    idx = torch.cat([torch.nonzero(data.y_train == c).flatten()[:n_points]
                     for c in range(data.n_classes)])
    return dict(means=(means - mu_g).double().cpu(), weight=model.head.weight.detach().double().cpu(),
                points=(h[idx] - mu_g).double().cpu(), point_labels=data.y_train[idx].cpu())


def live_eval_steps(steps: int, n_evals: int, every: int = 30) -> list[int]:
    """Log-spaced evaluation steps plus ``every`` evenly spaced ones: a live panel gets its
    progress (and can be stopped) at least every 1/``every`` of the run."""
    return sorted(set(log_steps(steps, n_evals)) | {int(s) for s in np.linspace(0, steps, every + 1)})


def _evaluations(cfg, eval_steps=None) -> list[int]:
    """``eval_steps``, else ``cfg.n_evals`` log-spaced steps; in a dry run (which proves shapes,
    not results) only its last step: the collapse metrics of a full-size model are not cheap."""
    if dry_run() is not None:
        return [runtime.steps(cfg.steps)]
    return eval_steps or log_steps(cfg.steps, cfg.n_evals)


# ============================================================================ runners


def recipe(cfg: CollapseConfig) -> Recipe:
    """How the chapter's network trains: ``cfg``'s optimizer (momentum 0.9), learning rate on
    a cosine schedule, weight decay and loss, full batch, at log-spaced steps."""
    return Recipe(cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=cfg.weight_decay,
                  loss=cfg.loss, schedule=cosine_schedule(cfg.steps), eval=_evaluations(cfg))


def run_collapse(cfg: CollapseConfig, seed: int | None = None, data: D.Dataset | None = None,
                 snapshots: bool = False, on_eval=(), bars=None,
                 eval_steps=None, held_out: bool = False) -> tuple[History, Recorder]:
    """Train one :class:`CollapseNet` far past zero training error, recording every collapse
    metric and the conditions of Jacot et al. (balancedness when ``linear_depth`` >= 2) at
    log-spaced steps (or ``eval_steps``). Returns ``(history, recorder)``; ``recorder.model``
    is the trained model and ``recorder.snapshots`` holds the geometry when ``snapshots`` is set;
    ``held_out`` also records NC1 and NC4 on the test set (:class:`Recorder`)."""
    seed = get_seed(seed)
    data = load_data(cfg, seed) if data is None else data
    model = make_model(cfg, data, seed)
    rec = Recorder(conditions=cfg.linear_depth >= 2, snapshots=snapshots, held_out=held_out)
    rec.model = model
    h = train(model, data, recipe(cfg).replace(eval=_evaluations(cfg, eval_steps)),
              metrics=rec, hooks=Hooks(on_eval=on_eval), seed=seed, bars=bars,
              desc="terminal phase")
    h.info.update(config=cfg.to_dict(), seed=seed, dataset=data.name,
                  fallback=data.info.get("fallback"), zero_error_step=terminal_phase_start(h))
    return h, rec


def run_weight_decays(cfg: CollapseConfig, weight_decays, seed: int | None = None,
                      data: D.Dataset | None = None, bars=None) -> list[History]:
    """The same network trained with each weight decay (one :func:`train_many` sweep, which
    trains them one after another: the collapse metrics need each model).
    In a dry run only the two ends of ``weight_decays`` are trained."""
    seed = get_seed(seed)
    data = load_data(cfg, seed) if data is None else data
    rec = Recorder(conditions=cfg.linear_depth >= 2)
    configs = grid(weight_decay=runtime.grid([float(wd) for wd in weight_decays]), seed=[seed])
    result = train_many(lambda c: CollapseNet(data.input_dim, cfg.width, cfg.depth,
                                              cfg.linear_depth, data.n_classes, cfg.activation),
                        data, configs, recipe(cfg), metrics=rec, bars=bars)
    for c, h in zip(configs, result.histories):
        h.info.update(config=cfg.replace(weight_decay=c["weight_decay"]).to_dict(), seed=seed,
                      dataset=data.name, zero_error_step=terminal_phase_start(h))
    return result.histories


def run_conditions(cfg: CollapseConfig, seed: int | None = None, data: D.Dataset | None = None,
                   done: dict | None = None, bars=None, held_out: bool = False) -> Conditions:
    """Section 3: the network of section 1 with and without weight decay, under AdamW and
    under plain full-batch gradient descent (a discretization of the gradient flow of the
    theory, at learning rate ``cfg.gd_lr`` and weight decay ``cfg.gd_weight_decay``).
    ``done`` passes runs already trained (``{field of Conditions: history}``, e.g.
    ``dict(adamw_decay=history)``) so they are not trained twice; ``held_out`` records NC1
    and NC4 on the test set in the first (section 1's run). Returns a :class:`Conditions`."""
    seed = get_seed(seed)
    data = load_data(cfg, seed) if data is None else data
    variants = dict(
        adamw_decay=dict(weight_decay=cfg.weight_decay),
        adamw_none=dict(weight_decay=0.0),
        gd_decay=dict(optimizer="sgd", lr=cfg.gd_lr, weight_decay=cfg.gd_weight_decay),
        gd_none=dict(optimizer="sgd", lr=cfg.gd_lr, weight_decay=0.0),
    )
    runs = dict(done or {})
    if set(runs) - set(variants):  # a run handed in under a name no field has: refused at once
        Conditions.of(runs)
    todo = [name for name in variants if name not in runs]
    job = P.current()
    for k, name in enumerate(todo):
        if job.stopped:  # the runs not reached keep empty histories
            runs[name] = History(info=dict(stopped=True))
            continue
        with job.part(k, len(todo)):
            runs[name], _ = run_collapse(cfg.replace(**variants[name]), seed, data,
                                         bars=bars,
                                         held_out=held_out and name == "adamw_decay")
    return Conditions.of(runs)


def run_ufm(cfg: UFMConfig, seed: int | None = None, counts=None, snapshots: bool = False,
            bars=None, on_eval=()) -> tuple[History, Recorder]:
    """Gradient descent with weight decay on the unconstrained features model (MSE)."""
    seed = get_seed(seed)
    counts = counts or [cfg.per_class] * cfg.n_classes
    data = ufm_data(counts)
    with runtime.seeded(seed):
        model = UnconstrainedFeatures(len(data.y_train), cfg.dim, cfg.n_classes,
                                      cfg.linear_depth).to(data.device)
    rec = Recorder(conditions=cfg.linear_depth >= 2, snapshots=snapshots)
    rec.model = model
    gd = Recipe(cfg.steps, optimizer="sgd", lr=cfg.lr, weight_decay=cfg.weight_decay, loss="mse",
                eval=LogSpaced(cfg.n_evals, test=False))
    h = train(model, data, gd, metrics=rec, hooks=Hooks(on_eval=on_eval), seed=seed,
              bars=bars, desc="unconstrained features")
    h.info.update(config=cfg.to_dict(), seed=seed, counts=list(counts),
                  zero_error_step=terminal_phase_start(h))
    return h, rec


def run_ufm_pair(cfg: UFMConfig, seed: int | None = None, bars=None) -> UfmPair:
    """The unconstrained features model with weight decay ``cfg.weight_decay`` and without
    (a :class:`UfmPair`)."""
    seed = get_seed(seed)
    out, job = {}, P.current()
    for k, (name, wd) in enumerate((("decay", cfg.weight_decay), ("none", 0.0))):
        with job.part(k, 2):
            out[name] = run_ufm(cfg.replace(weight_decay=wd), seed, bars=bars)[0]
    return UfmPair(weight_decay=cfg.weight_decay, **out)


def run_imbalance(cfg: ImbalanceConfig, seed: int | None = None, bars=None,
                  on_part=None, evals: int = 100) -> Imbalance:
    """Imbalanced classes, MSE loss, a deep linear head: the unconstrained features model
    (plain gradient descent with weight decay, next to its exact solution) and a ReLU network
    on an imbalanced Gaussian mixture (``cfg.optimizer``, by default gradient descent with
    momentum). Returns the geometry of both (an :class:`Imbalance`); ``result.stopped`` is
    True when its :mod:`dynamics.progress` job was stopped (then the parts not reached are
    None). ``on_part(result so far)`` is called once the unconstrained model is trained (a live
    panel draws it while the network trains); ``evals``: evaluations of each training (its
    progress and Stop; the result reads only the end)."""
    seed = get_seed(seed)
    counts = cfg.counts()
    job = P.current()
    C = cfg.n_classes
    # the unconstrained features model and its solution
    with runtime.seeded(seed):
        data = ufm_data(counts)
        model = UnconstrainedFeatures(len(data.y_train), max(2 * C, 8), C,
                                      cfg.linear_depth).to(data.device)
    evals_at = np.linspace(0, cfg.ufm_steps, evals + 1).astype(int)  # progress and Stop
    gd = Recipe(cfg.ufm_steps, optimizer="sgd", lr=cfg.ufm_lr, weight_decay=cfg.ufm_weight_decay,
                loss="mse", eval=At(evals_at, test=False))
    with job.part(0, 2):
        h = train(model, data, gd, seed=seed, bars=bars, desc="unconstrained features")
    out = Imbalance(counts=counts, stopped=False, network=None,
                    ufm=FreeModel(**mean_geometry(model, data), status=h.status,
                                  train_loss=h.last("train_loss")),
                    theory=Exact(**imbalanced_ufm_solution(counts, cfg.ufm_weight_decay,
                                                           cfg.linear_depth)))
    if job.stopped:
        out.stopped = True
        return out
    if on_part is not None:
        on_part(out)
    # a network
    data = D.gaussian_mixture(dim=cfg.dim, n_classes=C, separation=cfg.separation, seed=seed,
                              counts=counts, n_test=100 * C)
    with runtime.seeded(seed):
        net = CollapseNet(data.input_dim, cfg.width, 1, cfg.linear_depth, C).to(data.device)
    evals_at = np.linspace(0, cfg.steps, evals + 1).astype(int)
    net_recipe = Recipe(cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr, weight_decay=cfg.weight_decay,
                        loss="mse", schedule=cosine_schedule(cfg.steps), eval=evals_at)
    with job.part(1, 2):
        h = train(net, data, net_recipe, seed=seed, bars=bars, desc="imbalanced network")
    out.network = Network(**mean_geometry(net, data), status=h.status,
                          train_acc=h.last("train_acc"), train_loss=h.last("train_loss"))
    out.stopped = job.stopped
    return out


def balanced_config(icfg: ImbalanceConfig) -> ImbalanceConfig:
    """The imbalance trend's control (:data:`.claims.IMB_TREND`): ``icfg`` with every class the same
    size (ratio 1), the mean of ``icfg``'s counts, so that the network
    sees about as many examples; the Gaussian mixture draws its class centres before the
    examples, so on the same seed the classes sit where they sit in the imbalanced run."""
    counts = icfg.counts()
    return icfg.replace(ratio=1.0, largest=max(4, int(round(sum(counts) / len(counts)))))


def run_claim_seeds(cfg: CollapseConfig, ufm_cfg: UFMConfig, icfg: ImbalanceConfig, seeds,
                    data: D.Dataset | None = None, done: dict | None = None,
                    bars=None) -> ClaimSeeds:
    """The live runs the claims table judges, on each of ``seeds``: section 3's four runs
    (:func:`run_conditions`, on ``data``: the seeds vary the initialization, not the split),
    the unconstrained features pair, the imbalance run, its control on balanced classes
    (:func:`balanced_config`) and section 1's run with cross-entropy. ``done``: ``{seed:
    dict(runs=, ufm=, imbalance=, ce=, balanced=)}`` already trained (the page's own seed); a
    part it lacks is trained. Returns a :class:`ClaimSeeds`, each of its fields ``{seed:
    result}`` in the order of ``seeds``. Section 1's run of
    each seed, under either loss, records NC1 and NC4 on the test set too (for
    :func:`.losses.loss_claims`)."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("run_claim_seeds needs at least one seed")
    done, job = dict(done or {}), P.current()
    out = dict(runs={}, ufm={}, imbalance={}, ce={}, balanced={})
    train_ = dict(
        runs=lambda s: run_conditions(cfg, s, data, bars=bars, held_out=True),
        ufm=lambda s: run_ufm_pair(ufm_cfg, s, bars=bars),
        imbalance=lambda s: run_imbalance(icfg, s, bars=bars),
        balanced=lambda s: run_imbalance(balanced_config(icfg), s, bars=bars),
        ce=lambda s: run_collapse(cfg.replace(loss="cross_entropy"), s, data, bars=bars,
                                  held_out=True)[0])
    todo = [s for s in seeds if set(out) - set(done.get(s, {}))]
    if todo and data is None:
        data = load_data(cfg, seeds[0])
    for s in seeds:
        have = done.get(s, {})
        if s not in todo:
            for key in out:
                out[key][s] = have[key]
            continue
        with job.part(todo.index(s), len(todo)):
            for key in out:
                out[key][s] = have[key] if key in have else train_[key](s)
    return ClaimSeeds(**out)


def dataset_line(data) -> str:
    """One short line saying what a run trained on (and what it fell back to, if anything)."""
    line = f"{data.name}: {len(data.x_train):,} training examples, {data.n_classes} classes"
    line += f" ({data.info['short']})" if data.info.get("short") else ""
    return line + (f"\n{data.info['fallback']}" if data.info.get("fallback") else "")


# ============================================================================ the 3-D pictures


def _procrustes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The orthogonal R minimizing ‖a R − b‖_F."""
    u, _, vt = np.linalg.svd(a.T @ b)
    return u @ vt


def project_3d(snapshots: list[dict]) -> list[dict]:
    """Each snapshot's centred class means, (centred) classifier rows and example features in
    3-D: the top three right singular vectors of that snapshot's class means, rotated to match
    the last snapshot (orthogonal Procrustes) and scaled so the mean class-mean norm is 1.
    Classifier rows are scaled the same way on their own. Every frame also gets the simplex
    ETF closest to the last frame's means (``etf``)."""
    if not snapshots:
        raise ValueError("no snapshots to project")
    frames = []
    for snap in snapshots:
        M = np.asarray(snap["means"], float)
        _, _, vt = np.linalg.svd(M, full_matrices=True)
        basis = vt[:3].T if vt.shape[0] >= 3 else np.pad(vt.T, ((0, 0), (0, 3 - vt.shape[0])))
        W = np.asarray(snap["weight"], float)
        W = W - W.mean(0)
        frames.append(dict(means=M @ basis, weight=W @ basis,
                           points=np.asarray(snap["points"], float) @ basis,
                           labels=np.asarray(snap["point_labels"])))
    target = frames[-1]["means"]
    for f in frames:
        R = _procrustes(f["means"], target)
        scale = np.linalg.norm(f["means"], axis=1).mean() or 1.0
        wscale = np.linalg.norm(f["weight"], axis=1).mean() or 1.0
        f["means"], f["points"] = f["means"] @ R / scale, f["points"] @ R / scale
        f["weight"] = f["weight"] @ R / wscale
    etf = simplex_etf(len(target), 3).numpy()
    etf = etf @ _procrustes(etf, frames[-1]["means"])
    for f in frames:
        f["etf"] = etf
    return frames


def simplex_frames(history: History, recorder: Recorder, n_frames: int = 10):
    """``(frames, steps)`` for :func:`.figures.simplex_frames_figure`: about ``n_frames`` snapshots,
    log-spaced in the order they were taken."""
    frames = project_3d(recorder.snapshots)
    idx = np.unique(np.round(np.geomspace(1, len(frames), n_frames)).astype(int) - 1)
    return [frames[i] for i in idx], [history.steps[i] for i in idx]


# ============================================================================ precomputed figures

PRECOMPUTED_WEIGHT_DECAYS = (0.0, 0.03, 0.1, 0.3, 1.0, 3.0)
PRECOMPUTED_GD_WEIGHT_DECAYS = (0.0, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3)
PRECOMPUTED_RATIOS = (1.0, 3.0, 10.0, 30.0)
# the decay sweeps' seeds: seed 0 draws the figures; the published claims read every decay of
# both sweeps on each seed (the seeds vary the initialization, not the training split)
PRECOMPUTED_SEEDS = (0, 1, 2)
COMMAND = "python -m dynamics_ops.precompute neural_collapse --profile {profile}"


def precompute_plan(profile: str | None = None) -> units.Plan:
    """The static counterparts of the chapter's panels (``data/collapse_*.json``) as units:
    one per weight decay (AdamW, then plain gradient descent) and seed, the 4-class simplex,
    one per imbalance ratio (and seed, for the imbalanced ratios). Seed 0 draws the figures;
    seeds 1 and 2 are run where the published claims read them (every decay of both
    sweeps, every ratio but 1)."""
    p = units.Plan("neural_collapse", profile)
    cmd = COMMAND.format(profile=p.profile)
    scale = {"smoke": "smoke scale", "cpu": "the largest scale a CPU affords in a few minutes",
             "gpu": "paper-like scale on a GPU"}[p.profile]
    cfg = CollapseConfig.for_profile(p.profile)
    gd = cfg.replace(optimizer="sgd", lr=cfg.gd_lr)
    seeds = p.grid(PRECOMPUTED_SEEDS)
    # sections 1 and 3: the terminal phase for several weight decays, AdamW and plain GD
    for name, c, decays, how in (("collapse_weight_decay", cfg, PRECOMPUTED_WEIGHT_DECAYS, "AdamW"),
                                 ("collapse_gd_weight_decay", gd, PRECOMPUTED_GD_WEIGHT_DECAYS,
                                  "plain full-batch gradient descent")):
        kept = []
        for wd in p.grid(decays):  # units declared inside the loop: a dry run counts its cut
            kept.append(wd)
            p.unit(f"{name} {wd:g}", partial(_decay_unit, c, wd), config=dict(c.to_dict(), wd=wd))
        for seed in seeds[1:]:
            for wd in kept:
                p.unit(f"{name} {wd:g} seed {seed}", partial(_decay_unit, c, wd, seed),
                       config=dict(c.to_dict(), wd=wd), seed=seed)
        p.output(name, partial(_sweep_payload, kept, seeds), config=c, command=cmd,
                 note=lambda t, how=how: f"{next(iter(t['results'].values()))['source']}, {how}; {scale}.")
    # section 2: the simplex in 3-D
    c4 = CollapseConfig.for_profile(p.profile, n_classes=4)
    p.unit("collapse_simplex", partial(_simplex_unit, c4), config=c4)
    p.output("collapse_simplex", lambda r: Simplex.of(r["collapse_simplex"]), config=c4, command=cmd,
             note=lambda t: f"{t['results']['collapse_simplex']['history']['info']['dataset']}, "
                            f"4 classes; {scale}.")
    # section 4: imbalance ratios
    icfg = ImbalanceConfig.for_profile(p.profile)
    ratios = []
    for r in p.grid(PRECOMPUTED_RATIOS):
        ratios.append(r)
        p.unit(f"collapse_imbalance {r:g}", partial(run_imbalance, icfg.replace(ratio=r), 0),
               config=icfg.replace(ratio=r))
    imbalanced = [r for r in ratios if r > 1]  # the ratios the published claim reads
    for seed in seeds[1:]:
        for r in imbalanced:
            p.unit(f"collapse_imbalance {r:g} seed {seed}",
                   partial(run_imbalance, icfg.replace(ratio=r), seed),
                   config=icfg.replace(ratio=r), seed=seed)
    p.output("collapse_imbalance", partial(_imbalance_payload, ratios, imbalanced, seeds),
             config=icfg, command=cmd, note=f"Gaussian mixture and unconstrained features; {scale}.")
    return p


def _decay_unit(cfg: CollapseConfig, weight_decay: float, seed: int = 0) -> dict:
    """One weight decay's run on ``seed`` (the initialization; the data are seed 0's split),
    and the data it trained on (with its stand-in, if any)."""
    data = load_data(cfg, 0)
    source = data.name + (f" ({data.info['fallback']})" if data.info.get("fallback") else "")
    return dict(history=run_weight_decays(cfg, [weight_decay], seed, data)[0], source=source)


def _sweep_payload(decays: list, seeds: list, runs: dict) -> DecaySweep:
    """A decay sweep's file: seed 0's histories (``histories``, what the figures draw) and
    every seed's, decay by decay (``seed_histories``: ``{seed: [history per decay]}``)."""
    per_seed = [list(runs.values())[k * len(decays):(k + 1) * len(decays)]
                for k in range(len(seeds))]
    return DecaySweep(weight_decays=decays, histories=[r["history"] for r in per_seed[0]],
                      seed_histories={str(s): [r["history"] for r in rs]
                                      for s, rs in zip(seeds, per_seed) if s != seeds[0]})


def _imbalance_payload(ratios: list, imbalanced: list, seeds: list,
                       runs: dict) -> ImbalanceSweep:
    """The imbalance file: seed 0's run at every ratio (``runs``, what the slider draws) and
    the other seeds' at the imbalanced ratios (``seed_runs``: ``{seed: [run per ratio]}``,
    ratios ``seed_ratios``)."""
    runs = list(runs.values())
    rest = runs[len(ratios):]
    return ImbalanceSweep.of(dict(
        ratios=ratios, runs=runs[:len(ratios)], seed_ratios=imbalanced,
        seed_runs={str(s): rest[k * len(imbalanced):(k + 1) * len(imbalanced)]
                   for k, s in enumerate(seeds[1:])}))


def _simplex_unit(c4: CollapseConfig) -> Simplex:
    h, rec = run_collapse(c4, 0, snapshots=True)
    frames, steps = simplex_frames(h, rec, n_frames=14)
    frames = [{k: v for k, v in f.items() if k != "etf"} for f in frames[:-1]] + [frames[-1]]
    return Simplex(frames=frames, steps=steps, history=h.to_dict(),
                   final_means=rec.snapshots[-1]["means"])

