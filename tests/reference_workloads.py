"""Small workloads whose numbers pin the library's results bit for bit across refactors of
its plumbing (``train``, ``train_many``, progress, evaluation): the bench workloads at their
toy sizes, each optimizer and strategy of the core, and a short run of each chapter.

``python tests/reference_workloads.py`` records ``tests/data/reference.json`` (do this only when
a change is *meant* to change results, and say so in the commit); ``tests/test_reference.py``
compares every number exactly on a CPU like the one that recorded them."""
from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import torch

PATH = Path(__file__).parent / "data" / "reference.json"


def numbers(obj):
    """Every number of a result, as nested lists and dicts (times and wall clocks left out)."""
    from dynamics.sweep import SweepResult
    from dynamics.train import History

    if isinstance(obj, History):
        return dict(steps=list(obj.steps), diverged_at=obj.diverged_at,
                    metrics={k: numbers(v) for k, v in obj.metrics.items() if k != "time"})
    if isinstance(obj, SweepResult):
        return [numbers(h) for h in obj.histories]
    if torch.is_tensor(obj):
        return numbers(obj.detach().cpu().double().numpy())
    if isinstance(obj, np.ndarray):
        return numbers(obj.tolist())
    if isinstance(obj, dict):
        return {str(k): numbers(v) for k, v in obj.items()
                if k not in ("time", "wall_time", "seconds", "control_time", "round_time", "info",
                             "provenance")}
    if isinstance(obj, (list, tuple)):
        return [numbers(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)) or obj is None or isinstance(obj, str):
        return obj if not isinstance(obj, np.bool_) else bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else repr(v)
    if hasattr(obj, "__dataclass_fields__"):
        return numbers({k: getattr(obj, k) for k in obj.__dataclass_fields__})
    return None  # figures, models: not numbers


def _data():
    from dynamics import data as D

    return D.mnist1d(200, 100, seed=0)


def core_train():
    """``train`` with every optimizer, full batch and mini-batch, a schedule and a metric."""
    from dynamics import models
    from dynamics.train import Recipe, train

    d, out = _data(), {}
    for opt in ("sgd", "momentum", "adam", "adam_l2", "adamw", "muon"):
        torch.manual_seed(0)
        model = models.MLP(d.input_dim, 16, 2, d.n_classes)
        out[opt] = train(model, d, Recipe(steps=12, optimizer=opt, lr=1e-2, weight_decay=0.1,
                                          eval=3), desc=opt)
    torch.manual_seed(1)
    model = models.MLP(d.input_dim, 16, 2, d.n_classes)
    out["minibatch"] = train(model, d, Recipe(
        steps=15, lr=3e-3, batch_size=32, loss="mse", eval=[0, 4, 9, 15],
        schedule=lambda s: 1.0 - s / 20), seed=3,
        metrics={"norm": lambda m, d: sum(p.pow(2).sum() for p in m.parameters())})
    return numbers(out)


def core_sweep():
    """``train_many`` batched and sequential, with train masks and parameter masks."""
    from dynamics import models
    from dynamics.sweep import grid, train_many
    from dynamics.train import Recipe

    d, out = _data(), {}
    configs = grid(lr=[1e-3, 1e-2], weight_decay=[0.0, 0.5], seed=[0, 1])

    def model_fn(cfg):
        return models.MLP(d.input_dim, 8, 2, d.n_classes)

    masks = torch.zeros(len(configs), len(d.x_train), dtype=torch.bool)
    for k in range(len(configs)):
        masks[k, k * 10:k * 10 + 120] = True
    pm = [{"hidden.0.weight": (torch.arange(8 * d.input_dim).view(8, -1) % (k + 2) > 0).float()}
          for k in range(len(configs))]
    for strategy in ("batched", "sequential"):
        for opt, bs in (("adamw", None), ("momentum", 50), ("adam_l2", 64), ("sgd", None)):
            out[f"{strategy}_{opt}"] = train_many(
                model_fn, d, configs, Recipe(steps=10, optimizer=opt, batch_size=bs, eval=2),
                strategy=strategy)
        out[f"{strategy}_masks"] = train_many(
            model_fn, d, configs, Recipe(steps=8, batch_size=40, eval=[0, 3, 8]),
            masks=dict(train=masks, params=pm), strategy=strategy)
    return numbers(out)


def grokking():
    from dynamics import grokking as G

    cfg = G.GrokConfig(p=11, op="add", train_frac=0.5, model="mlp", width=16, depth=1, lr=3e-3,
                       weight_decay=1.0, steps=20, n_evals=10)  # the bench's toy
    r = G.run(cfg, 0, bars=False)
    phase = G.experiments.run_phase_grid(cfg, [0.3, 0.6], [0.0, 1.0], seeds=(0, 1), steps=12, bars=False)
    rem = G.run_remedies(cfg, seeds=(0,), bars=False)
    phase = dict(rows=[row.to_dict() for row in phase.rows], sweep=phase.sweep,
                 steps=phase.steps)  # a PhaseGrid: its rows as the table writes them
    return numbers(dict(run=r.history, fit=r.fit_step, grok=r.grok_step, phase=phase,
                        remedies=rem))


def lottery():
    from dynamics import lottery as L

    cfg = L.LotteryConfig.for_profile("smoke", rounds=2, seeds=1, control_every=1, steps=12,
                                      width=16, n_train=200, n_val=40, n_test=100)
    res = L.run_imp(cfg, seeds=[0], bars=False)
    lmc = L.run_lmc(cfg, rewind_steps=(0, 4), seed=0, bars=False)
    return numbers(dict(imp=res.to_dict(), lmc=lmc))


def weight_decay():
    from dynamics.weight_decay import experiments as W

    cfg = W.DecouplingConfig.for_profile("smoke", n_lr=2, n_wd=3, steps=10, width=8, n_train=200)
    out = dict(decoupling=W.run_decoupling(cfg, 0, False))
    eq = W.EquilibriumConfig.for_profile("smoke")
    eq = type(eq).for_profile("smoke", steps=min(eq.steps, 40))
    out["equilibrium"] = W.run_equilibrium(eq, 0)
    return numbers(out)


def collapse():
    from dynamics import collapse as C

    cfg = C.CollapseConfig.for_profile("smoke", steps=40, n_evals=6, n_train=200, width=16)
    h, rec = C.run_collapse(cfg, 0, bars=False)
    ufm = C.UFMConfig.for_profile("smoke", steps=40)
    hu, _ = C.experiments.run_ufm(ufm, 0, bars=False)
    imb = C.ImbalanceConfig.for_profile("smoke", steps=30, ufm_steps=30)
    return numbers(dict(collapse=h, ufm=hu, imbalance=C.run_imbalance(imb, 0, bars=False)))


def initialization():
    from dynamics.initialization import experiments as E, science as S

    saxe = S.SaxeConfig.for_profile("smoke", steps=40)
    dt = S.DepthTimeConfig.for_profile("smoke", steps=30, n_lr=3, seeds=[0, 1], depths=[2, 4])
    return numbers(dict(saxe=E.run_saxe(saxe), depth_time=E.run_depth_time(dt)))


def spectral():
    from dynamics.spectral import experiments as E, science as S

    shaping = S.ShapingConfig.for_profile("smoke")
    shaping = type(shaping).for_profile("smoke", steps=min(shaping.steps, 15))
    return numbers(dict(shaping=E.run_shaping(shaping)))


WORKLOADS = dict(core_train=core_train, core_sweep=core_sweep, grokking=grokking, lottery=lottery,
                 weight_decay=weight_decay, collapse=collapse, initialization=initialization,
                 spectral=spectral)


def capability() -> str:
    """The arithmetic the values are exact on: the one a data file records
    (:func:`dynamics.arithmetic.fingerprint`, on the CPU these workloads run on)."""
    from dynamics.arithmetic import fingerprint

    return fingerprint("cpu")


if __name__ == "__main__":
    os.environ.setdefault("DYNAMICS_PROGRESS", "0")
    os.environ.setdefault("DYNAMICS_PROFILE", "smoke")
    import dynamics

    dynamics.setup(quiet=True)
    names = sys.argv[1:] or list(WORKLOADS)
    old = json.loads(PATH.read_text()) if PATH.exists() else {}
    values = dict(old.get("values", {}))
    for name in names:
        values[name] = WORKLOADS[name]()
        print(name, "recorded", flush=True)
    PATH.write_text(json.dumps(dict(capability=capability(), values=values), indent=None) + "\n")
