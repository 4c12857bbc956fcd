"""Schedules and weight averaging, the runs: section 1's batched one-pass SGD on power-law
regression (every schedule and every replica one tensor, one fresh Gaussian example per model
per step, no host sync in the loop), beside the exact expected risk of the same schedules;
sections 2-4's MLPs on MNIST-1D, every schedule and seed one stacked model
(:func:`train_stacked`), with a rate per model and step that the library's sweep, which shares
one schedule across its models, does not offer."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .. import runtime
from ..results import Record
from ..runtime import get_seed
from .science import (CooldownConfig, PowerLawConfig, decay_clock, decay_product, expected_memory,
                      expected_risk, schedule, spectrum, tail_windows, theory_exponent)

__all__ = ["simulate", "anytime_schedules", "tuned_cosines", "COSINE_LRS", "GAMMAS", "T0_FACTORS",
           "run_anytime", "best_exponent", "stacked_mlp", "train_stacked", "cooldown_schedules", "cooldown_start", "run_cooldown",
           "run_schedulefree", "SF_METHODS", "simulate_twins", "clock_schedules", "run_clock",
           "Risks", "Anytime", "BestExponent", "ClaimRuns", "Average", "Cooldown", "CooldownSeed",
           "Losses", "ScheduleFree", "Clock"]

GAMMAS = tuple(round(0.025 * k, 3) for k in range(41))   # the decay exponents searched, 0 to 1
T0_FACTORS = (0.25, 1.0, 4.0)   # the offsets t_0 the exponent is searched at, times cfg.t0


def simulate(lam, w_star, sigma: float, etas, horizons, replicas: int, seed: int,
             dtype=torch.float32, device=None) -> dict:
    """One-pass SGD from ``w_0 = 0`` for every schedule (rows of ``etas``) and ``replicas``
    independent data streams at once: the weights are one ``[S, R, d]`` tensor, each step draws
    ``x = sqrt(lam) z`` and ``y = <x, w*> + sigma xi`` for every model. Returns per replica the
    excess risk at each horizon of the last iterate (``last``, ``[S, R, K]``) and of the average
    over ``H/2 < t <= H`` (``tail``), as numpy arrays; nothing leaves the device until the end."""
    if not (isinstance(replicas, int) and replicas >= 1):
        raise ValueError(f"simulate: replicas must be a positive integer, got {replicas!r}")
    dev = runtime.get_device(device)
    wins = tail_windows(horizons)
    etas = torch.as_tensor(np.atleast_2d(np.asarray(etas, float)), dtype=dtype, device=dev)
    if wins[-1][1] > etas.shape[1]:
        raise ValueError(f"simulate: the last horizon {wins[-1][1]} exceeds the schedule's "
                         f"{etas.shape[1]} steps")
    lam_t = torch.as_tensor(np.asarray(lam, float), dtype=dtype, device=dev)
    ws = torch.as_tensor(np.asarray(w_star, float), dtype=dtype, device=dev)
    S, d = etas.shape[0], lam_t.numel()
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    root = lam_t.sqrt()
    w = torch.zeros(S, replicas, d, dtype=dtype, device=dev)
    acc = torch.zeros_like(w)
    last = torch.zeros(S, replicas, len(wins), dtype=dtype, device=dev)
    tail = torch.zeros_like(last)
    ends = {b: k for k, (a, b) in enumerate(wins)}
    k_now = 0
    for t in range(1, wins[-1][1] + 1):
        x = torch.randn(S, replicas, d, generator=gen, dtype=dtype, device=dev) * root
        noise = torch.randn(S, replicas, 1, generator=gen, dtype=dtype, device=dev)
        resid = ((w - ws) * x).sum(-1, keepdim=True) - sigma * noise
        w = w - etas[:, t - 1].view(S, 1, 1) * resid * x
        if t > wins[k_now][0]:
            acc += w
        if t in ends:
            k = ends[t]
            n = wins[k][1] - wins[k][0]
            last[:, :, k] = ((w - ws) ** 2 * lam_t).sum(-1)
            tail[:, :, k] = ((acc / n - ws) ** 2 * lam_t).sum(-1)
            acc.zero_()
            k_now = min(k + 1, len(wins) - 1)
    return dict(last=last.cpu().double().numpy(), tail=tail.cpu().double().numpy())


# the cosine's peak rates tried, in units of 1/tr(H): a factor sqrt(2) apart from 0.044 to
# 0.71, so that the rate tuned to every horizon lies inside the grid (tests check it)
COSINE_LRS = tuple(round(0.5 * 2 ** (k / 2), 4) for k in range(-7, 2))


def tuned_cosines(cfg: PowerLawConfig) -> dict:
    """For each horizon ``H`` the cosine to ``H`` whose peak rate (of :data:`COSINE_LRS`, over
    ``tr(H)``) gives the lowest exact expected risk of the last iterate at ``H``: the
    horizon-aware schedule a tuner with unlimited seeds would pick. ``{"cos@H": kwargs}``."""
    lam, ws = spectrum(cfg.d, cfg.capacity, cfg.source)
    hs = cfg.horizons()
    out = {}
    for h in hs:
        kinds = {lr: dict(kind="cosine", lr=lr / lam.sum(), horizon=h) for lr in COSINE_LRS}
        risk = expected_risk(lam, ws, cfg.sigma, _etas(kinds, h), [h])["last"][:, 0]
        out[f"cos@{h}"] = kinds[COSINE_LRS[int(np.argmin(risk))]]
    return out


def anytime_schedules(cfg: PowerLawConfig, lr: float) -> dict:
    """Section 1's schedules: at base rate ``lr`` (not tuned to any horizon) constant,
    ``1/sqrt(t)`` and the theory's polynomial decay; then a tuned cosine to each horizon
    (``cos@H``, :func:`tuned_cosines`)."""
    gamma = theory_exponent(cfg.capacity, cfg.source)
    out = {"constant": dict(kind="constant", lr=lr),
           "1/√t": dict(kind="inv_sqrt", lr=lr, t0=cfg.t0),
           "theory": dict(kind="poly", lr=lr, gamma=gamma, t0=cfg.t0)}
    out.update(tuned_cosines(cfg))
    return out


def _etas(kinds: dict, steps: int) -> np.ndarray:
    return np.stack([schedule(kw["kind"], steps, **{k: v for k, v in kw.items() if k != "kind"})
                     for kw in kinds.values()])


def best_exponent(cfg: PowerLawConfig, gammas=GAMMAS, t0_factors=T0_FACTORS) -> BestExponent:
    """The decay exponent whose tail-averaged expected risk is lowest at the last horizon,
    searched over ``gammas`` (exact, :func:`~.science.expected_risk`), beside the theory's,
    at each offset ``t_0 = cfg.t0 * f`` of ``t0_factors`` (the schedule ``eta_0 (1 +
    t/t_0)^(-gamma)`` has two free constants; the balance fixes only ``gamma``). Returns
    ``gammas``, ``risk`` and ``best`` at ``cfg.t0``, ``t0s``, ``best_by_t0`` and
    ``risk_by_t0`` (one per offset), ``theory`` and ``theory_risk_by_t0`` (the risk at the
    theory's exponent at each offset, computed on its own whether or not ``gammas`` holds it)."""
    if not t0_factors or any(not f > 0 for f in t0_factors):
        raise ValueError(f"best_exponent t0_factors must be positive, got {t0_factors!r}")
    lam, ws = spectrum(cfg.d, cfg.capacity, cfg.source)
    lr = cfg.lr / lam.sum()
    T = cfg.horizons()[-1]
    t0s = sorted({float(cfg.t0 * f) for f in (*t0_factors, 1.0)})
    theory = theory_exponent(cfg.capacity, cfg.source)
    etas = np.stack([schedule("poly", T, lr, gamma=g, t0=t0) for t0 in t0s for g in gammas]
                    + [schedule("poly", T, lr, gamma=theory, t0=t0) for t0 in t0s])
    r_all = expected_risk(lam, ws, cfg.sigma, etas, [T])["tail"][:, -1]
    r = r_all[:len(t0s) * len(gammas)].reshape(len(t0s), len(gammas))
    at_theory = r_all[len(t0s) * len(gammas):]
    best = [float(gammas[int(np.argmin(row))]) for row in r]
    here = t0s.index(float(cfg.t0))
    keep = [t0s.index(float(cfg.t0 * f)) for f in t0_factors]
    return BestExponent(gammas=list(gammas), risk=r[here].tolist(), best=best[here],
                        t0=float(cfg.t0), t0s=[t0s[i] for i in keep],
                        best_by_t0=[best[i] for i in keep],
                        risk_by_t0=[r[i].tolist() for i in keep], theory=theory,
                        theory_risk_by_t0=[float(at_theory[i]) for i in keep])


@dataclass
class Risks(Record):
    """Excess risk per schedule and horizon (``[schedule][horizon]``) of the last iterate and
    of the tail average."""
    last: list
    tail: list


@dataclass
class Anytime(Record):
    """:func:`run_anytime`'s result. ``sim``, ``sim_se`` and ``lrs`` are None in a live
    panel's first, exact-only results (:func:`~.panels.staged_anytime`)."""
    names: list
    horizons: list
    lr: float
    exact: Risks
    gamma: float
    seed: int
    config: PowerLawConfig
    lrs: list | None = None
    sim: Risks | None = None
    sim_se: Risks | None = None


@dataclass
class BestExponent(Record):
    """:func:`best_exponent`'s result."""
    gammas: list
    risk: list
    best: float
    t0: float
    t0s: list
    best_by_t0: list
    risk_by_t0: list
    theory: float
    theory_risk_by_t0: list | None = None


@dataclass
class ClaimRuns(Record):
    """Section 1's runs the claims read (:func:`~.claims.claim_runs`): ``{seed: Anytime}``
    and ``{(capacity, source): BestExponent}``."""
    anytime: dict[int, Anytime]
    exponents: dict[tuple, BestExponent]


def run_anytime(cfg: PowerLawConfig | None = None, seed: int | None = None,
                profile: str | None = None) -> Anytime:
    """Section 1: every schedule of :func:`anytime_schedules` at ``cfg.lr / tr(H)``, simulated
    (``cfg.replicas`` data streams on ``seed``) and exact (:func:`~.science.expected_risk`),
    read at each horizon for the last iterate and the tail average. Returns an
    :class:`Anytime`: ``names``, ``horizons``, ``sim`` and ``exact`` (each :class:`Risks`,
    the simulation's the replicas' mean), ``sim_se`` (their standard errors), ``gamma`` (the
    theory's exponent), ``seed`` and the config."""
    seed = get_seed(seed)
    cfg = PowerLawConfig.for_profile(profile) if cfg is None else cfg
    lam, ws = spectrum(cfg.d, cfg.capacity, cfg.source)
    lr = cfg.lr / lam.sum()
    kinds = anytime_schedules(cfg, lr)
    hs = cfg.horizons()
    etas = _etas(kinds, hs[-1])
    sim = simulate(lam, ws, cfg.sigma, etas, hs, cfg.replicas, seed)
    exact = expected_risk(lam, ws, cfg.sigma, etas, hs)
    se = {k: (v.std(1, ddof=1) / math.sqrt(v.shape[1]) if v.shape[1] > 1 else 0 * v[:, 0])
          for k, v in sim.items()}
    return Anytime(names=list(kinds), horizons=hs, lr=lr,
                   lrs=[kw["lr"] * lam.sum() for kw in kinds.values()],
                   sim=Risks.of({k: v.mean(1).tolist() for k, v in sim.items()}),
                   sim_se=Risks.of({k: np.asarray(v).tolist() for k, v in se.items()}),
                   exact=Risks.of({k: v.tolist() for k, v in exact.items()}),
                   gamma=theory_exponent(cfg.capacity, cfg.source), seed=seed, config=cfg)


# ---------------------------------------------------------------------------------------------
# Sections 2-4: MLPs on MNIST-1D, one stacked model per (schedule, seed)

TRAIN_EVAL = 1000  # training examples the stacked trainer's training loss is measured on


def stacked_mlp(seeds, in_dim: int, width: int, device):
    """One two-layer :class:`~dynamics.models.MLP` per seed (each built inside
    ``runtime.seeded(seed)``: models of one seed start equal), stacked: ``(params, forward)`` where ``params`` is
    ``{name: [K, ...] tensor}`` and ``forward(params_list, x)`` maps ``x`` (``[K, B, in]``, or
    ``[B, in]`` shared by every model) to ``[K, B, 10]`` logits."""
    from torch.func import stack_module_state

    from ..models import MLP

    dev = runtime.get_device(device)
    models = []
    for s in seeds:
        with runtime.seeded(int(s)):
            models.append(MLP(in_dim, width, depth=2).to(dev))
    params, _ = stack_module_state(models)
    names = list(params)
    if names != [f"{m}.{w}" for m in ("hidden.0", "hidden.1", "head") for w in ("weight", "bias")]:
        raise ValueError(f"stacked_mlp: unexpected MLP parameters {names}")

    def forward(plist, x):   # three batched affine maps, ReLU between (MLP's forward)
        h = x if x.ndim == 3 else x.expand(plist[0].shape[0], *x.shape)
        for i in range(0, len(plist), 2):
            h = torch.baddbmm(plist[i + 1].unsqueeze(1), h, plist[i].transpose(1, 2))
            if i + 2 < len(plist):
                h = torch.relu(h)
        return h

    return {n: params[n].detach() for n in names}, forward


def _losses(forward, plist, x, y, chunk: int = 2048):
    """Every model's mean cross-entropy and accuracy on ``(x, y)``: two ``[K]`` tensors."""
    loss = acc = 0.0
    for i in range(0, len(x), chunk):
        out = forward(plist, x[i:i + chunk])
        yy = y[i:i + chunk].expand(out.shape[0], -1)
        loss = loss + torch.nn.functional.cross_entropy(
            out.flatten(0, 1), yy.flatten(), reduction="none").view_as(yy).sum(1)
        acc = acc + (out.argmax(-1) == yy).float().sum(1)
    return loss / len(x), acc / len(x)


def train_stacked(data, etas, seeds, *, width: int, batch: int, eval_steps,
                  weight_decay: float = 0.0, averages: dict | None = None,
                  optimizer: str = "adamw", train_eval: int = TRAIN_EVAL, warmup_steps: int = 0,
                  device=None) -> dict:
    """Train ``K = len(seeds)`` MLPs at once, model ``k`` at rate ``etas[k, t]`` on step
    ``t + 1`` (``etas``: ``[K, T]``), by :func:`dynamics.sweep.batched_step` (PyTorch's AdamW
    per model). Models of one seed share their initialization and their mini-batches (drawn
    with replacement from the seed's generator): until their rates differ they are one run,
    so a cooldown "branched" at step ``s`` from a constant run is the run whose rate leaves
    the constant one at ``s`` (the tests check the two agree to float tolerance there).

    ``averages``: ``{name: (rows, kind, arg)}``, averages of some models' iterates kept with
    ``torch.optim.swa_utils``' update functions: ``("ema", decay)`` from step 1, or
    ``("tail", (a, b))``, the uniform average of the iterates after steps ``a < t <= b``.
    The training loss is measured on the first ``train_eval`` training examples (an unbiased
    estimate of the whole set's, at a fraction of the cost). Returns ``steps``
    (``eval_steps``, sorted) and ``train_loss``, ``test_loss``,
    ``test_acc`` (``[K, E]`` numpy) and, per average, its train/test loss at every evaluation
    step at or after its window's end (``{name: {"steps", "train_loss", "test_loss"}}``,
    ``[rows, E']``) and ``params``, every model's weights at the last evaluation step.

    ``optimizer="schedulefree"``: ``schedulefree.AdamWScheduleFree`` (its ``warmup_steps``)
    over the stacked tensors, which is K independent optimizers since its update is
    elementwise and its step counts are shared; every rate of ``etas`` must then be its one
    ``lr``. Its ``train()`` and ``eval()`` are called where a model's would be: evaluations
    see the averaged point ``x``, the steps take gradients at ``y``."""
    from torch.optim.swa_utils import get_ema_multi_avg_fn, get_swa_multi_avg_fn

    from ..sweep import batched_step, init_state

    dev = runtime.get_device(device)
    etas = np.atleast_2d(np.asarray(etas, float))
    seeds = [int(s) for s in seeds]
    K, T = etas.shape
    if len(seeds) != K:
        raise ValueError(f"train_stacked: one seed per schedule row, got {len(seeds)} seeds "
                         f"for {K} rows")
    if not (isinstance(batch, int) and batch >= 1):
        raise ValueError(f"train_stacked: batch must be a positive integer, got {batch!r}")
    steps = sorted({int(s) for s in eval_steps})
    if not steps or steps[0] < 0 or steps[-1] > T:
        raise ValueError(f"train_stacked: eval_steps must lie in [0, {T}], got "
                         f"{steps[:1] + steps[-1:]}")
    averages = dict(averages or {})
    for name, (rows, kind, arg) in averages.items():
        if kind not in ("ema", "tail"):
            raise ValueError(f"train_stacked: average {name!r} kind must be 'ema' or 'tail', "
                             f"got {kind!r}")
        if kind == "tail" and not (0 <= arg[0] < arg[1] <= T):
            raise ValueError(f"train_stacked: average {name!r} window must satisfy "
                             f"0 <= a < b <= {T}, got {arg!r}")
    schedule_free = optimizer == "schedulefree"
    if schedule_free and (averages or not np.all(etas == etas[0, 0]) or not etas[0, 0] > 0):
        raise ValueError("train_stacked: optimizer='schedulefree' takes one positive rate for "
                         "every row and step (its schedule is its warmup_steps) and no averages")
    params, forward = stacked_mlp(seeds, data.input_dim, width, dev)
    names = list(params)
    plist = [params[n] for n in names]
    if schedule_free:
        from schedulefree import AdamWScheduleFree

        plist = [p.clone().requires_grad_(True) for p in plist]
        sf = AdamWScheduleFree(plist, lr=float(etas[0, 0]), warmup_steps=int(warmup_steps),
                               weight_decay=float(weight_decay))
        sf.train()
    lr_all = torch.as_tensor(etas, dtype=torch.float32, device=dev)
    wd = torch.full((K,), float(weight_decay), device=dev)
    state = None if schedule_free else init_state(optimizer, plist)
    uniq = sorted(set(seeds))
    gens = {s: torch.Generator(device=dev).manual_seed(s) for s in uniq}
    which = torch.tensor([uniq.index(s) for s in seeds], device=dev)
    n = len(data.x_train)
    avg_state = {}
    for name, (rows, kind, arg) in averages.items():
        rows_t = torch.as_tensor(list(rows), device=dev)
        fn = get_ema_multi_avg_fn(arg) if kind == "ema" else get_swa_multi_avg_fn()
        avg_state[name] = dict(rows=rows_t, kind=kind, arg=arg, fn=fn, avg=None, count=0,
                               out=dict(steps=[], train_loss=[], test_loss=[]))
    out = dict(steps=steps, train_loss=[], test_loss=[], test_acc=[])

    def evaluate(t):
        if schedule_free:
            sf.eval()    # the parameters are now the average x
        with torch.no_grad():
            tl, _ = _losses(forward, plist, xe, ye)
            vl, va = _losses(forward, plist, data.x_test, data.y_test)
            out["train_loss"].append(tl)
            out["test_loss"].append(vl)
            out["test_acc"].append(va)
            for a in avg_state.values():
                if a["avg"] is not None and (a["kind"] == "ema" or t >= a["arg"][1]):
                    a["out"]["steps"].append(t)
                    a["out"]["train_loss"].append(_losses(forward, a["avg"], xe, ye)[0])
                    a["out"]["test_loss"].append(_losses(forward, a["avg"], data.x_test,
                                                         data.y_test)[0])
        if schedule_free:
            sf.train()   # back to y, where the gradients are taken

    xe, ye = data.x_train[:train_eval], data.y_train[:train_eval]
    if steps[0] == 0:
        evaluate(0)
    for t in range(1, steps[-1] + 1):
        idx = torch.stack([torch.randint(n, (batch,), generator=gens[s], device=dev)
                           for s in uniq])[which]
        leaves = [p.requires_grad_(True) for p in plist]
        logits = forward(leaves, data.x_train[idx])
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), data.y_train[idx].flatten(),
                                                 reduction="sum") / batch
        grads = torch.autograd.grad(loss, leaves)
        if schedule_free:
            for p, g in zip(plist, grads):
                p.grad = g
            sf.step()
        else:
            with torch.no_grad():
                plist, state = batched_step(optimizer, [p.detach() for p in leaves], grads, state, t,
                                            lr_all[:, t - 1], wd)
                for a in avg_state.values():
                    if a["kind"] == "tail" and not a["arg"][0] < t <= a["arg"][1]:
                        continue
                    cur = [p[a["rows"]] for p in plist]
                    if a["avg"] is None:
                        a["avg"] = [c.clone() for c in cur]
                    else:
                        a["fn"](a["avg"], cur, torch.tensor(a["count"], device=dev))
                    a["count"] += 1
        if t in steps:
            evaluate(t)
    if schedule_free:
        sf.eval()   # hand back the average x, what was evaluated
    res = {k: torch.stack(v, 1).cpu().double().numpy() for k, v in out.items() if k != "steps"}
    res["steps"] = steps
    res["params"] = {n: p.detach().cpu() for n, p in zip(names, plist)}
    res["averages"] = {name: dict(steps=a["out"]["steps"],
                                  **{k: torch.stack(a["out"][k], 1).cpu().double().numpy()
                                     for k in ("train_loss", "test_loss")})
                       for name, a in avg_state.items() if a["out"]["steps"]}
    return res


def cooldown_schedules(cfg: CooldownConfig) -> dict:
    """Section 2's schedules over ``cfg.steps``: the constant rate, and for each budget ``b``
    a cooldown branched from it over the last ``cfg.cooldown`` of ``b`` (``linear@b`` and
    ``sqrt@b``, the 1 - sqrt shape) and a cosine to ``b`` (``cosine@b``); every rate 0 after
    its budget. ``{name: rates}`` (numpy, ``[steps]``)."""
    kw = dict(lr=cfg.lr, warmup=cfg.warmup)
    out = {"constant": schedule("constant", cfg.steps, **kw)}
    for b in cfg.budgets():
        out[f"linear@{b}"] = schedule("wsd", cfg.steps, horizon=b, cooldown=cfg.cooldown, **kw)
        out[f"sqrt@{b}"] = schedule("wsd", cfg.steps, horizon=b, cooldown=cfg.cooldown,
                                    shape="sqrt", **kw)
        out[f"cosine@{b}"] = schedule("cosine", cfg.steps, horizon=b, **kw)
    return out


def cooldown_start(cfg: CooldownConfig, budget: int) -> int:
    """The step a budget's cooldown branches off the constant run: ``floor(budget (1 -
    cooldown)) + 1``. The rates ``eta_t`` (taking ``w_t`` to ``w_{t+1}``) agree for ``t <
    start`` and the first lower one is ``eta_start`` (:func:`~.science.schedule`'s ``wsd``),
    so the two runs' weights agree up to step ``start`` and differ after it."""
    return int(math.floor(budget * (1 - cfg.cooldown))) + 1


@dataclass
class Average(Record):
    """An average of a run's iterates: its training and test loss at ``steps``."""
    steps: list
    train_loss: list
    test_loss: list


@dataclass
class CooldownSeed(Record):
    """One seed's part of a :class:`Cooldown`, what its claims read: ``{name: [E]}`` losses
    and ``{"ema" or "tail@b": Average}``."""
    seed: int
    budgets: list
    starts: list
    steps: list
    train_loss: dict[str, list]
    test_loss: dict[str, list]
    averages: dict[str, Average]


@dataclass
class Cooldown(Record):
    """:func:`run_cooldown`'s result: per seed, per schedule name, losses at ``steps``."""
    names: list
    seeds: list
    budgets: list
    starts: list
    steps: list
    train_loss: dict[int, dict[str, list]]
    test_loss: dict[int, dict[str, list]]
    test_acc: dict[int, dict[str, list]]
    averages: dict[int, dict[str, Average]]
    etas: dict[str, list]
    config: CooldownConfig

    def at_seed(self, seed: int) -> CooldownSeed:
        """One seed's part (the losses and averages of ``seed``)."""
        return CooldownSeed(seed=seed, budgets=self.budgets, starts=self.starts,
                            steps=self.steps, train_loss=self.train_loss[seed],
                            test_loss=self.test_loss[seed], averages=self.averages[seed])


def run_cooldown(cfg: CooldownConfig | None = None, seeds=None, profile: str | None = None,
                 device=None) -> Cooldown:
    """Sections 2 and 3 on MNIST-1D: every schedule of :func:`cooldown_schedules` on every
    seed of ``seeds`` (default: the book's seed), one stacked model; the constant run's EMA
    (window ``cfg.ema_window``) and, per budget, its uniform average over the cooldown's
    steps. Returns a :class:`Cooldown`: ``names``, ``seeds``, ``budgets``, ``starts`` (each
    budget's cooldown start), ``steps`` (evaluations), ``train_loss``/``test_loss``/``test_acc``
    (``{seed: {name: [E] list}}``), ``averages`` (``{seed: {"ema" or "tail@b":
    Average}}``), ``etas`` (``{name: list}``) and the config."""
    cfg = CooldownConfig.for_profile(profile) if cfg is None else cfg
    seeds = [get_seed(None)] if seeds is None else [int(s) for s in seeds]
    from ..data import mnist1d

    dev = runtime.get_device(device)
    data = mnist1d(n_train=cfg.n_train, n_test=1000, seed=0, device=dev)
    kinds = cooldown_schedules(cfg)
    names = list(kinds)
    budgets = cfg.budgets()
    starts = [cooldown_start(cfg, b) for b in budgets]
    rows_etas = np.stack([kinds[n] for _ in seeds for n in names])
    row_seeds = [s for s in seeds for _ in names]
    const_rows = [i * len(names) for i in range(len(seeds))]
    averages = {"ema": (const_rows, "ema", 1 - 1 / cfg.ema_window)}
    for b, a in zip(budgets, starts):
        averages[f"tail@{b}"] = (const_rows, "tail", (a, b))
    grid = np.linspace(0, cfg.steps, cfg.n_evals + 1).round().astype(int).tolist()
    r = train_stacked(data, rows_etas, row_seeds, width=cfg.width, batch=cfg.batch,
                      eval_steps=grid + budgets + starts, weight_decay=cfg.weight_decay,
                      averages=averages, device=dev)
    per = lambda key: {s: {n: r[key][i * len(names) + j].tolist() for j, n in enumerate(names)}
                       for i, s in enumerate(seeds)}
    avgs = {s: {k: Average(steps=v["steps"], train_loss=v["train_loss"][i].tolist(),
                           test_loss=v["test_loss"][i].tolist())
                for k, v in r["averages"].items()} for i, s in enumerate(seeds)}
    return Cooldown(names=names, seeds=seeds, budgets=budgets, starts=starts, steps=r["steps"],
                    train_loss=per("train_loss"), test_loss=per("test_loss"),
                    test_acc=per("test_acc"), averages=avgs,
                    etas={n: v.tolist() for n, v in kinds.items()}, config=cfg)


SF_METHODS = ("schedule-free", "cosine", "constant")


@dataclass
class Losses(Record):
    """One method's losses and accuracy, ``{seed: {peak rate: [E] list}}``."""
    train_loss: dict[int, dict[float, list]]
    test_loss: dict[int, dict[float, list]]
    test_acc: dict[int, dict[float, list]]


@dataclass
class ScheduleFree(Record):
    """:func:`run_schedulefree`'s result: ``methods`` is ``{method: Losses}``, the methods
    of :data:`SF_METHODS`."""
    lrs: list
    seeds: list
    steps: list
    budgets: list
    warmup: int
    methods: dict[str, Losses]
    config: CooldownConfig


def run_schedulefree(cfg: CooldownConfig | None = None, seeds=None, profile: str | None = None,
                     device=None) -> ScheduleFree:
    """Section 4: schedule-free AdamW (``schedulefree.AdamWScheduleFree``, its warmup
    ``cfg.sf_warmup`` of the budget) against AdamW with a cosine to the budget ``cfg.steps``
    and AdamW at a constant rate (both with the same warmup), each at the peak rates ``cfg.lr
    * cfg.lr_factors``, on ``seeds``. Returns a :class:`ScheduleFree`: ``lrs``, ``seeds``,
    ``steps`` (evaluations), ``budgets``, ``warmup`` (steps), ``methods`` (per method of
    :data:`SF_METHODS`, its :class:`Losses`, ``{seed: {lr: [E] list}}``) and the config."""
    cfg = CooldownConfig.for_profile(profile) if cfg is None else cfg
    seeds = [get_seed(None)] if seeds is None else [int(s) for s in seeds]
    from ..data import mnist1d

    dev = runtime.get_device(device)
    data = mnist1d(n_train=cfg.n_train, n_test=1000, seed=0, device=dev)
    lrs = [cfg.lr * f for f in cfg.lr_factors]
    warm = int(round(cfg.sf_warmup * cfg.steps))
    budgets = cfg.budgets()
    evals = np.linspace(0, cfg.steps, cfg.n_evals + 1).round().astype(int).tolist() + budgets
    common = dict(width=cfg.width, batch=cfg.batch, eval_steps=evals,
                  weight_decay=cfg.weight_decay, device=dev)
    shapes = dict(cosine=dict(kind="cosine", horizon=cfg.steps), constant=dict(kind="constant"))
    rows = [(m, s, lr) for m in shapes for s in seeds for lr in lrs]
    etas = np.stack([schedule(steps=cfg.steps, lr=lr, warmup=warm, **shapes[m])
                     for m, s, lr in rows])
    adamw = train_stacked(data, etas, [s for _, s, _ in rows], **common)
    keys = ("train_loss", "test_loss", "test_acc")
    out = {m: {k: {s: {} for s in seeds} for k in keys} for m in SF_METHODS}
    for i, (m, s, lr) in enumerate(rows):
        for k in keys:
            out[m][k][s][lr] = adamw[k][i].tolist()
    for lr in lrs:
        r = train_stacked(data, np.full((len(seeds), cfg.steps), lr), seeds,
                          optimizer="schedulefree", warmup_steps=warm, **common)
        for k in keys:
            for i, s in enumerate(seeds):
                out["schedule-free"][k][s][lr] = r[k][i].tolist()
    return ScheduleFree(lrs=lrs, seeds=seeds, steps=adamw["steps"], budgets=budgets,
                        warmup=warm, methods={m: Losses(**v) for m, v in out.items()},
                        config=cfg)


# ---------------------------------------------------------------------------------------------
# Section 5: weight decay's clock under a schedule, on the power-law model

def simulate_twins(lam, w_star, sigma: float, etas, weight_decay: float, delta, replicas: int,
                   seed: int, eval_steps, dtype=torch.float32, device=None) -> np.ndarray:
    """Twin one-pass SGD runs with decoupled weight decay, ``w_{t+1} = (1 - eta_t lambda) w_t -
    eta_t (<x_t, w_t> - y_t) x_t``, one from ``w_0 = 0`` and one from ``delta``, on the same
    examples (``x = sqrt(lam) z``, ``y = <x, w*> + sigma xi``), for every schedule (rows of
    ``etas``) and ``replicas`` data streams at once. Returns the memory of the start,
    ``<w'_t - w_t, delta> / |delta|^2``, per schedule, replica and step of ``eval_steps``
    (``[S, R, E]`` numpy): 1 at the start; :func:`~.science.expected_memory` in expectation,
    :func:`~.science.decay_product` with no data (``lam`` all 0)."""
    if not (isinstance(replicas, int) and replicas >= 1):
        raise ValueError(f"simulate_twins: replicas must be a positive integer, got {replicas!r}")
    etas = np.atleast_2d(np.asarray(etas, float))
    for row in etas:
        decay_product(row, weight_decay)   # validates the rates and the decay
    steps = sorted({int(t) for t in eval_steps})
    if not steps or steps[0] < 0 or steps[-1] > etas.shape[1]:
        raise ValueError(f"simulate_twins: eval_steps must lie in [0, {etas.shape[1]}]")
    dev = runtime.get_device(device)
    lam_t = torch.as_tensor(np.asarray(lam, float), dtype=dtype, device=dev)
    ws = torch.as_tensor(np.asarray(w_star, float), dtype=dtype, device=dev)
    dl = torch.as_tensor(np.asarray(delta, float), dtype=dtype, device=dev)
    if not (lam_t.ndim == 1 and ws.shape == lam_t.shape == dl.shape) or bool((lam_t < 0).any()):
        raise ValueError("simulate_twins: lam (>= 0), w_star and delta must be vectors of one size")
    S, d = etas.shape[0], lam_t.numel()
    eta = torch.as_tensor(etas, dtype=dtype, device=dev)
    gen = torch.Generator(device=dev).manual_seed(int(seed))
    root = lam_t.sqrt()
    w = torch.zeros(2, S, replicas, d, dtype=dtype, device=dev)
    w[1] = dl
    out = []
    norm = (dl * dl).sum()
    for t in range(steps[-1] + 1):
        if t in steps:
            out.append(((w[1] - w[0]) * dl).sum(-1) / norm)
        if t == steps[-1]:
            break
        x = torch.randn(S, replicas, d, generator=gen, dtype=dtype, device=dev) * root
        noise = torch.randn(S, replicas, 1, generator=gen, dtype=dtype, device=dev)
        y = (x * ws).sum(-1, keepdim=True) + sigma * noise
        e = eta[:, t].view(1, S, 1, 1)
        resid = (w * x).sum(-1, keepdim=True) - y
        w = (1 - e * weight_decay) * w - e * resid * x
    return torch.stack(out, -1).cpu().double().numpy()


def clock_schedules(cfg: PowerLawConfig) -> dict:
    """Section 5's two schedules to the last horizon ``T`` at ``cfg.lr / tr(H)``: the
    constant rate and a WSD whose linear cooldown takes the last ``cfg.clock_cooldown`` of
    ``T``; ``{name: rates}``."""
    lam, _ = spectrum(cfg.d, cfg.capacity, cfg.source)
    lr, T = cfg.lr / lam.sum(), cfg.horizons()[-1]
    return {"constant": schedule("constant", T, lr),
            "WSD": schedule("wsd", T, lr, horizon=T, cooldown=cfg.clock_cooldown)}


@dataclass
class Clock(Record):
    """:func:`run_clock`'s result: per schedule name, values at ``steps``."""
    names: list
    steps: list
    weight_decay: float
    lr: float
    seed: int
    start: int
    memory: dict[str, list]
    memory_se: dict[str, list]
    expected: dict[str, list]
    product: dict[str, list]
    clock: dict[str, list]
    sum_eta: dict[str, list]
    expected_no_decay: dict[str, list]
    config: PowerLawConfig


def run_clock(cfg: PowerLawConfig | None = None, seed: int | None = None,
              profile: str | None = None, n_evals: int = 64) -> Clock:
    """Section 5: weight decay ``lambda = cfg.clock_tau / (eta T)`` (the constant rate's clock
    reads ``clock_tau`` at the last horizon ``T``), the twins of :func:`simulate_twins` under
    :func:`clock_schedules`, ``delta`` a standard Gaussian vector drawn from ``seed``. Returns
    per schedule (``names``) at ``steps``: the measured memory (the replicas' mean, and its
    standard error), the exact expected memory, the decay product and the clock, ``sum_eta``
    and the exact expected memory with no weight decay (``expected_no_decay``); and
    ``weight_decay``, ``lr``, ``seed``, ``start`` (the WSD's cooldown start) and the config
    (a :class:`Clock`)."""
    seed = get_seed(seed)
    cfg = PowerLawConfig.for_profile(profile) if cfg is None else cfg
    lam, ws = spectrum(cfg.d, cfg.capacity, cfg.source)
    kinds = clock_schedules(cfg)
    T = cfg.horizons()[-1]
    lr = cfg.lr / lam.sum()
    wd = cfg.clock_tau / (lr * T)
    delta = np.random.default_rng(seed).standard_normal(cfg.d)
    steps = np.linspace(0, T, n_evals + 1).round().astype(int).tolist()
    etas = np.stack(list(kinds.values()))
    mem = simulate_twins(lam, ws, cfg.sigma, etas, wd, delta, cfg.replicas, seed, steps)
    R = mem.shape[1]
    pick = lambda a: [float(a[t]) for t in steps]
    return Clock(names=list(kinds), steps=steps, weight_decay=wd, lr=lr, seed=seed,
                 start=int(math.floor(T * (1 - cfg.clock_cooldown))),
                 memory={n: mem[i].mean(0).tolist() for i, n in enumerate(kinds)},
                 memory_se={n: (mem[i].std(0, ddof=1) / math.sqrt(R) if R > 1
                                else 0 * mem[i][0]).tolist() for i, n in enumerate(kinds)},
                 expected={n: pick(expected_memory(lam, delta, e, wd)) for n, e in kinds.items()},
                 product={n: pick(decay_product(e, wd)) for n, e in kinds.items()},
                 clock={n: pick(decay_clock(e, wd)) for n, e in kinds.items()},
                 sum_eta={n: pick(np.concatenate([[0.0], np.cumsum(e)])) for n, e in kinds.items()},
                 expected_no_decay={n: pick(expected_memory(lam, delta, e, 0.0))
                                    for n, e in kinds.items()},
                 config=cfg)
