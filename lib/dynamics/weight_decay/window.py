"""Weight decay, AdamW's averaging window: how long a kick to the weights survives.

Unrolled, AdamW's step ``w <- (1 - eta lambda) w - eta u`` makes the weights an exponential
moving average of its recent updates with time constant ``tau = 1/(eta lambda)`` steps (Wang &
Aitchison, "How to set AdamW's weight decay as you scale model and dataset size"): whatever the
weights held ``t`` steps ago, the initialization or one update, keeps a weight
``(1 - eta lambda)^t``. :func:`run_window` measures that window on the chapter's plain MLP (no
normalization, so nothing here rests on scale invariance): pairs of models share their
initialization and batch order; at step ``t0`` one of each pair is kicked by a random
perturbation ``delta`` of every parameter, and the projection of the pair's difference on
``delta`` (1 at the kick) is followed for ``2 tau`` steps. Its fitted decay time sits beside
``1/(eta lambda)``; a pair trained without decay is the control, whose kick should stay.
All pairs train at once in the sweep engine (``train_many``), whose per-step hook kicks and
measures them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from .. import evidence, plots, results, runtime
from ..config import Config, param
from ..models import MLP
from ..runtime import get_seed
from ..sweep import train_many
from ..train import Every, Recipe
from .science import mnist1d_data

__all__ = ["WindowConfig", "WindowSetting", "Window", "window_settings", "fit_decay_time",
           "run_window", "window_figure", "window_rows", "window_claims", "window_numbers",
           "WINDOW_FACTOR", "CONTROL_KEPT"]

WINDOW_FACTOR = 2.0   # measured tau within this factor of 1/(eta lambda), every setting
CONTROL_KEPT = 0.5    # lambda = 0: at least this fraction of the kick left after the longest window
_WA = "How to set AdamW's weight decay as you scale model and dataset size"


@dataclass
class WindowConfig(Config):
    """AdamW's averaging window: pairs of plain MLPs, one of each kicked at ``kick_step``."""

    lr: float = param(4e-3, "learning rate eta of the largest-product runs", low=1e-5, high=0.1,
                      log=True)
    product: float = param(3.2e-2, "largest eta * lambda (the shortest window)", low=1e-4,
                           high=0.2, log=True, smoke=6.4e-2)
    n_products: int = param(4, "products, each half the one before", low=2, high=6)
    kick: float = param(0.1, "kick size, relative to each parameter tensor's RMS", low=1e-3,
                        high=1.0, log=True)
    kick_step: int = param(200, "steps trained before the kick", low=10, high=10_000, smoke=100)
    width: int = param(64, "hidden width of the MLP", low=4, high=1024, smoke=32, gpu=256)
    n_train: int = param(4000, "MNIST-1D training examples", low=100, high=100_000, smoke=2000)
    batch_size: int = param(128, "mini-batch size", low=1, high=100_000)

    def settings(self) -> list[dict]:
        """See :func:`window_settings`."""
        return window_settings(self.lr, self.product, self.n_products)

    def after(self) -> int:
        """Steps followed after the kick: two windows of the longest setting."""
        return int(math.ceil(2 * 2 ** (self.n_products - 1) / self.product))


def window_settings(lr: float, product: float, n_products: int) -> list[dict]:
    """The (eta, lambda) pairs: at ``lr``, products ``product``, ``product/2``, ...
    (``n_products`` of them); one run at ``lr/4`` with the second product (the same window as
    its partner at ``lr``, from a four times larger lambda); and the control at ``lr`` with no
    decay. Each a dict with ``lr``, ``weight_decay`` and ``tau`` (inf for the control)."""
    if not (lr > 0 and product > 0 and int(n_products) >= 2):
        raise ValueError(f"window settings need lr > 0, product > 0 and n_products >= 2, got "
                         f"lr={lr}, product={product}, n_products={n_products}")
    prods = [product / 2 ** k for k in range(int(n_products))]
    pairs = [(lr, p / lr) for p in prods] + [(lr / 4, 4 * prods[1] / lr), (lr, 0.0)]
    return [dict(lr=float(e), weight_decay=float(w), tau=1 / (e * w) if w > 0 else math.inf)
            for e, w in pairs]


def fit_decay_time(steps, kept, horizon: float) -> float:
    """The time constant of ``kept`` (the kick's remaining fraction, 1 at step 0): minus one
    over the least-squares slope of ``log kept`` against ``steps`` for steps up to ``horizon``,
    up to the first non-positive value. ``inf`` where it does not fall, NaN with fewer than
    three points."""
    steps, kept = np.asarray(steps, float), np.asarray(kept, float)
    use = steps <= horizon
    bad = np.flatnonzero(~(kept[use] > 0))
    n = bad[0] if len(bad) else int(use.sum())
    if n < 3:
        return math.nan
    slope = np.polyfit(steps[:n], np.log(kept[:n]), 1)[0]
    return math.inf if slope >= 0 else float(-1 / slope)


@dataclass
class WindowSetting(results.Record):
    """One setting of :func:`run_window`: its ``lr``, ``weight_decay`` and ``tau`` =
    1/(eta lambda) (inf for the control), the fitted decay time ``measured``, the fraction of
    the kick kept at the ``horizon`` (``end``) and that horizon (steps after the kick)."""
    lr: float
    weight_decay: float
    tau: float
    measured: float
    end: float
    horizon: float


@dataclass
class Window(results.Record):
    """:func:`run_window`'s result: the ``settings`` (:class:`WindowSetting`), the ``steps``
    after the kick where it was measured, ``kept`` [setting][step], the ``seed``, the step of
    the kick, whether a run was ``stopped`` (or diverged), the MLP's ``width`` and the
    ``kick``'s size."""
    settings: list[WindowSetting]
    steps: list
    kept: Any
    seed: int
    kick_step: int
    stopped: bool
    width: int
    kick: float


def run_window(cfg: WindowConfig | None = None, seed: int | None = None,
               profile: str | None = None) -> Window:
    """Train every setting of ``cfg`` as a pair (reference, kicked) of plain MLPs from one
    initialization and one batch order, kick the second of each pair at ``cfg.kick_step`` by
    ``cfg.kick`` times each tensor's RMS along a random direction ``delta`` and follow
    ``kept = <w_kicked - w_ref, delta> / |delta|^2`` for :meth:`WindowConfig.after` steps.

    Returns a :class:`Window`: its ``settings`` (each with ``tau``, ``measured`` (fitted over
    ``2 tau`` steps, the control over the longest window) and ``end``: the fraction kept at
    that window's end), ``steps`` (after the kick), ``kept`` [setting][step], ``seed`` and
    ``stopped``.
    ``cfg=None``: the page's run at ``profile`` (``WindowConfig.for_profile(profile)``)."""
    seed = get_seed(seed)
    cfg = WindowConfig.for_profile(profile) if cfg is None else cfg
    settings = cfg.settings()
    data = mnist1d_data(cfg.n_train)
    after = runtime.steps(cfg.after())
    total = runtime.steps(cfg.kick_step) + after
    kick_at = total - after
    every = max(1, int(round(0.25 / settings[0]["weight_decay"] / settings[0]["lr"])))
    rec_steps, kept, kick = [], [], {}

    def on_step(step: int, params: dict) -> None:
        """All models at once ([2 settings, ...] per parameter: reference, kicked, ...): kick
        the second of each pair at ``kick_at``, then record how much of the kick is left."""
        if step == kick_at:
            gen = torch.Generator().manual_seed(10_000 + seed)
            for name, p in params.items():
                rms = p[0::2].pow(2).flatten(1).mean(1).sqrt().view(-1, *[1] * (p.ndim - 1))
                kick[name] = cfg.kick * rms * torch.randn(p.shape[1:], generator=gen).to(p.device)
                p[1::2] += kick[name]
            kick[None] = sum(d.pow(2).flatten(1).sum(1) for d in kick.values())
        if step >= kick_at and (step - kick_at) % every == 0:
            rec_steps.append(step - kick_at)
            kept.append(sum(((p[1::2] - p[0::2]) * kick[name]).flatten(1).sum(1)
                            for name, p in params.items()) / kick[None])

    configs = [dict(lr=s["lr"], weight_decay=s["weight_decay"], seed=seed)
               for s in settings for _ in (0, 1)]  # each pair: one init, one batch order
    # train-set evaluations every 50 steps: where the sweep reports progress and hears Stop
    # asked for in full (``total`` in a real run): a dry run's cut is train_many's own,
    # which dynamics_ops.gpuwork scales back to the real run's steps
    recipe = Recipe(steps=cfg.kick_step + cfg.after(), optimizer="adamw",
                    batch_size=cfg.batch_size, eval=Every(50, test=False))
    res = train_many(lambda c: MLP(data.input_dim, cfg.width, 2, data.n_classes), data,
                     configs, recipe, on_step=on_step, bars=False)
    stopped = res.info["stopped"] or any(h.diverged_at is not None for h in res.histories)
    kept = (torch.stack(kept).T.cpu().numpy() if kept else np.zeros((len(settings), 0)))
    longest = max(s["tau"] for s in settings if s["weight_decay"] > 0)
    out = []
    for s, k in zip(settings, kept):
        horizon = 2 * (s["tau"] if s["weight_decay"] > 0 else longest)
        i = int(np.searchsorted(rec_steps, horizon, side="right")) - 1
        out.append(WindowSetting(**s, measured=fit_decay_time(rec_steps, k, horizon),
                                 end=float(k[i]) if i >= 0 and len(k) else math.nan,
                                 horizon=float(horizon)))
    return Window(settings=out, steps=rec_steps, kept=kept, seed=seed, kick_step=kick_at,
                  stopped=stopped or not np.all(np.isfinite(kept)), width=cfg.width,
                  kick=cfg.kick)


def _label(s: WindowSetting) -> str:
    if s.weight_decay == 0:
        return f"η={plots.number(s.lr, 2)}, λ=0 (control)"
    return f"η={plots.number(s.lr, 2)}, λ={plots.number(s.weight_decay, 2)}"


def window_figure(result: Window, title: str | None = None):
    """Left: the fraction of the kick kept against steps after it (log axis), the theory's
    ``(1 - eta lambda)^t`` dotted; right: the fitted time constant against ``1/(eta lambda)``
    on log-log axes with the identity line (the control has no finite ``1/(eta lambda)``)."""
    fig = plots.subplots(1, 2, ("kick kept in the weights", "measured τ against 1/(ηλ)"),
                         title=title or "AdamW forgets a kick in 1/(ηλ) steps")
    t = np.asarray(result.steps, float)
    for j, (s, k) in enumerate(zip(result.settings, result.kept)):
        color = plots.PALETTE[j % len(plots.PALETTE)]
        keep = np.asarray(k) > 0
        fig.add_scatter(x=t[keep], y=np.asarray(k)[keep], mode="lines", name=_label(s),
                        line=dict(color=color), legendgroup=str(j), row=1, col=1)
        if s.weight_decay > 0:
            fig.add_scatter(x=t, y=(1 - s.lr * s.weight_decay) ** t, mode="lines",
                            line=dict(color=color, dash="dot"), showlegend=False,
                            legendgroup=str(j), hoverinfo="skip", row=1, col=1)
            fig.add_scatter(x=[s.tau], y=[s.measured], mode="markers",
                            marker=dict(color=color, size=10), showlegend=False,
                            legendgroup=str(j), name=_label(s), row=1, col=2)
    taus = [s.tau for s in result.settings if s.weight_decay > 0]
    lo, hi = min(taus) / 1.5, max(taus) * 1.5
    fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="τ = 1/(ηλ)",
                    line=dict(color="#888", dash="dash"), row=1, col=2)
    fig.update_xaxes(title_text="steps after the kick", row=1, col=1)
    fig.update_yaxes(title_text="fraction kept", type="log", row=1, col=1)
    fig.update_xaxes(title_text="1/(ηλ)  (steps)", type="log", row=1, col=2)
    fig.update_yaxes(title_text="measured τ (steps)", type="log", row=1, col=2)
    fig.update_layout(hovermode="closest")
    return fig


def window_rows(result: Window) -> list[dict]:
    """Each setting: eta, lambda, 1/(eta lambda), the measured time constant, their ratio and
    the fraction of the kick kept after two windows."""
    return [{"η": s.lr, "λ": s.weight_decay,
             "1/(ηλ)": s.tau if s.weight_decay > 0 else None,
             "measured τ": s.measured if math.isfinite(s.measured) else None,
             "ratio": s.measured / s.tau if s.weight_decay > 0 else None,
             "kept after the window": s.end} for s in result.settings]


def _worst(r: Window) -> float:
    """The largest factor between a measured time constant and 1/(eta lambda)."""
    out = 0.0
    for s in r.settings:
        if s.weight_decay > 0:
            q = s.measured / s.tau
            out = max(out, q, 1 / q) if q > 0 and math.isfinite(q) else math.inf
    return out


def _control(r: Window) -> WindowSetting:
    return next(s for s in r.settings if s.weight_decay == 0)


def window_numbers(result: Window) -> dict:
    """The page's glued numbers of one run."""
    c = _control(result)
    decayed = [s for s in result.settings if s.weight_decay > 0]
    ratios = [s.measured / s.tau for s in decayed]
    taus = [s.tau for s in decayed]
    twins = [s for s in decayed if any(t is not s and math.isclose(t.tau, s.tau)
                                       for t in decayed)]
    by_tau = sorted(decayed, key=lambda s: s.tau)
    ci = result.settings.index(c)
    steps = np.asarray(result.steps, dtype=float)
    early_at = 3 * min(taus)
    j = int(np.argmin(np.abs(steps - early_at)))
    early = float(np.asarray(result.kept[ci], dtype=float)[j])
    return dict(wd_win_lo=f"{min(ratios):.2f}", wd_win_hi=f"{max(ratios):.2f}",
                wd_win_ratios=", ".join(f"{s.measured / s.tau:.2f} ({s.tau:.0f})"
                                        for s in by_tau),
                wd_win_end=f"{min(s.end for s in decayed):.2f} to {max(s.end for s in decayed):.2f}",
                wd_win_end_pred=f"{min((1 - 1 / t) ** round(2 * t) for t in taus):.3f} to "
                                f"{max((1 - 1 / t) ** round(2 * t) for t in taus):.3f}",
                wd_win_control_early=f"{100 * (1 - early):.0f}%",
                wd_win_control_early_at=f"{steps[j]:.0f}",
                wd_win_control=f"{100 * c.end:.0f}%",
                wd_win_horizon=f"{c.horizon:.0f}",
                wd_win_kick=f"{result.kick_step}", wd_win_width=f"{result.width}",
                wd_win_kick_size=f"{100 * result.kick:.0f}%",
                wd_win_twins=" and ".join(f"{s.measured:.0f}" for s in twins),
                wd_win_twin_tau=f"{twins[0].tau:.1f}" if twins else "none",
                wd_win_twin_ratio=(f"{max(t.measured for t in twins) / min(t.measured for t in twins):.2f}"
                                   if twins else "n/a"),
                wd_win_n=f"{len(decayed)}", wd_win_factor=f"{WINDOW_FACTOR:g}",
                wd_win_tau_span=f"{max(taus) / min(taus):.0f}")


def _control_factor(r: Window) -> float:
    """The control's decay time (no decay) against the longest 1/(eta lambda), as
    :func:`_worst` reads each decayed setting's: the larger of q and 1/q (inf: it never fades)."""
    tau = max(s.tau for s in r.settings if s.weight_decay > 0)
    q = _control(r).measured / tau
    return max(q, 1 / q) if q > 0 and math.isfinite(q) else math.inf


def _longest(r: Window) -> WindowSetting:
    return max((s for s in r.settings if s.weight_decay > 0), key=lambda s: s.tau)


WINDOW = evidence.Claim(
    "AdamW's weights are an exponential moving average of its updates with time constant "
    "1/(ηλ): a kick to the weights fades in 1/(ηλ) steps", _WA, measure=_worst,
    control_measure=_control_factor,
    test=evidence.Test("<", WINDOW_FACTOR, "largest factor between the fitted decay time and "
                                           "1/(ηλ), WINDOW_FACTOR", scale="log"),
    control="the pair without decay, its fitted decay time against the longest 1/(ηλ)",
    window="fit over 2/(ηλ) steps after the kick; every setting", fmt=lambda x: f"{x:.2f}×")
KEPT = evidence.Claim(
    "without decay nothing forgets the kick on that timescale: the window is the decay's", _WA,
    measure=lambda r: _control(r).end, control_measure=lambda r: _longest(r).end,
    test=evidence.Test(">", CONTROL_KEPT, "fraction of the kick kept, CONTROL_KEPT"),
    control="the setting with the longest 1/(ηλ), over its own two windows (a moving average "
            f"keeps e⁻² ≈ {100 * math.exp(-2):.0f}%)",
    window="two of the longest windows", fmt=lambda x: f"{100 * x:.0f}%")


def window_claims(window: dict[int, Window]) -> list[dict]:
    """Two rows on ``{seed: run_window result}``: the measured windows beside 1/(eta lambda)
    (:data:`WINDOW`) and the pair without decay keeping its kick (:data:`KEPT`)."""
    window = plots.per_seed(window, "window", "wdc.claim_runs")
    r0 = next(iter(window.values()))
    taus = [s.tau for s in r0.settings if s.weight_decay > 0]
    span = (f"; {len(taus)} settings, 1/(ηλ) from {min(taus):.0f} to {max(taus):.0f} steps, "
            f"the kick at step {r0.kick_step}")
    return [evidence.judge(replace(WINDOW, window=WINDOW.window + span), window, window).row(),
            evidence.judge(replace(KEPT, window=KEPT.window + f" ({_control(r0).horizon:.0f} "
                                   f"steps) at η = {plots.number(_control(r0).lr, 2)}"),
                           window, window).row()]
