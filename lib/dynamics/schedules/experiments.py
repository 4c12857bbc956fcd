"""Schedules and weight averaging, the runs: section 1's batched one-pass SGD on power-law
regression (every schedule and every replica one tensor, one fresh Gaussian example per model
per step, no host sync in the loop), beside the exact expected risk of the same schedules."""
from __future__ import annotations

import math

import numpy as np
import torch

from .. import runtime
from ..runtime import get_seed
from .science import PowerLawConfig, expected_risk, schedule, spectrum, tail_windows, theory_exponent

__all__ = ["simulate", "anytime_schedules", "tuned_cosines", "COSINE_LRS", "GAMMAS", "run_anytime", "best_exponent"]

GAMMAS = tuple(round(0.1 * k, 1) for k in range(10))   # the decay exponents searched


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


COSINE_LRS = (0.125, 0.25, 0.5, 0.7)   # the cosine's peak rates tried, in units of 1/tr(H)


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


def best_exponent(cfg: PowerLawConfig, gammas=GAMMAS) -> dict:
    """The decay exponent whose tail-averaged expected risk is lowest at the last horizon,
    searched over ``gammas`` (exact, :func:`~.science.expected_risk`), beside the theory's."""
    lam, ws = spectrum(cfg.d, cfg.capacity, cfg.source)
    lr = cfg.lr / lam.sum()
    T = cfg.horizons()[-1]
    etas = np.stack([schedule("poly", T, lr, gamma=g, t0=cfg.t0) for g in gammas])
    r = expected_risk(lam, ws, cfg.sigma, etas, cfg.horizons())["tail"][:, -1]
    return dict(gammas=list(gammas), risk=r.tolist(), best=float(gammas[int(np.argmin(r))]),
                theory=theory_exponent(cfg.capacity, cfg.source))


def run_anytime(cfg: PowerLawConfig | None = None, seed: int | None = None,
                profile: str | None = None) -> dict:
    """Section 1: every schedule of :func:`anytime_schedules` at ``cfg.lr / tr(H)``, simulated
    (``cfg.replicas`` data streams on ``seed``) and exact (:func:`~.science.expected_risk`),
    read at each horizon for the last iterate and the tail average. Returns ``names``,
    ``horizons``, ``sim`` and ``exact`` (each ``{"last", "tail"}``: ``[schedule][horizon]``, the
    simulation's the replicas' mean), ``sim_se`` (their standard errors), ``gamma`` (the
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
    return dict(names=list(kinds), horizons=hs, lr=lr,
                lrs=[kw["lr"] * lam.sum() for kw in kinds.values()],
                sim={k: v.mean(1).tolist() for k, v in sim.items()},
                sim_se={k: np.asarray(v).tolist() for k, v in se.items()},
                exact={k: v.tolist() for k, v in exact.items()},
                gamma=theory_exponent(cfg.capacity, cfg.source), seed=seed,
                config=cfg.to_dict())
