"""Optimizer steps for K stacked models at once (per-model learning rates and decays)."""
from __future__ import annotations

import math
from typing import Sequence

import torch

from ..train import BATCHED_OPTIMIZERS as OPTIMIZERS  # the one table (dynamics.train.OPTIMIZERS)


def _per_model(v: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A [K] tensor viewed to broadcast against a stacked [K, ...] parameter."""
    return v.view(-1, *([1] * (like.ndim - 1)))


def init_state(optimizer: str, params: Sequence[torch.Tensor]) -> dict:
    """Zeroed optimizer state for stacked parameters (what :func:`batched_step` updates)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(OPTIMIZERS)}")
    if optimizer in ("adamw", "adam", "adam_l2"):
        return dict(exp_avg=[torch.zeros_like(p) for p in params],
                    exp_avg_sq=[torch.zeros_like(p) for p in params])
    if optimizer == "momentum":
        return dict(momentum_buffer=[torch.zeros_like(p) for p in params])
    return {}


@torch.no_grad()
def batched_step(optimizer: str, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
                 state: dict, step: int, lr: torch.Tensor, weight_decay: torch.Tensor, *,
                 momentum: float = 0.9, betas=(0.9, 0.999), eps: float = 1e-8):
    """One optimizer step for K stacked models at once; returns (new_params, new_state).

    Pure: the inputs are not modified. ``params[i]`` and ``grads[i]`` have a leading model
    axis K; ``lr`` and ``weight_decay`` are [K] tensors; ``step`` counts from 1. The update
    is, per model, exactly PyTorch's (tested against ``torch.optim``):

    - ``adamw``: decoupled decay p <- p(1 - lr*wd), then Adam (``torch.optim.AdamW``);
    - ``adam``: Adam, weight decay ignored; ``adam_l2``: g <- g + wd*p, then Adam
      (``torch.optim.Adam(weight_decay=wd)``);
    - ``sgd``: p <- p - lr(g + wd*p); ``momentum``: heavy ball, buffer b <- mu*b + g (b = g at
      the first step), p <- p - lr*b (``torch.optim.SGD(momentum=mu, weight_decay=wd)``).
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {list(OPTIMIZERS)}")
    beta1, beta2 = betas
    new_params, new_state = [], {k: [] for k in state}
    for i, (p, g) in enumerate(zip(params, grads)):
        lr_i, wd_i = _per_model(lr, p), _per_model(weight_decay, p)
        if optimizer in ("sgd", "momentum", "adam_l2"):
            g = g + wd_i * p
        if optimizer in ("sgd", "momentum"):
            if optimizer == "momentum":
                buf = g.clone() if step == 1 else state["momentum_buffer"][i] * momentum + g
                new_state["momentum_buffer"].append(buf)
                g = buf
            new_params.append(p - lr_i * g)
            continue
        m = torch.lerp(state["exp_avg"][i], g, 1 - beta1)
        v = torch.mul(state["exp_avg_sq"][i], beta2).addcmul_(g, g, value=1 - beta2)
        bias1 = 1 - beta1 ** step
        bias2_sqrt = math.sqrt(1 - beta2 ** step)
        update = (m / v.sqrt().div_(bias2_sqrt).add_(eps)).mul_(lr_i / bias1)
        if optimizer == "adamw":
            new_params.append(p.mul(1 - lr_i * wd_i).sub_(update))
        else:
            new_params.append(p - update)
        new_state["exp_avg"].append(m)
        new_state["exp_avg_sq"].append(v)
    return new_params, new_state


