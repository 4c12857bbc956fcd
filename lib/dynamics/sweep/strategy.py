"""How a sweep is planned: which strategy (batched or sequential) and how many models go in
one batched chunk, from one model's footprint and the device's free memory."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..data import Dataset

# Batched beats sequential on a (2-core) CPU when one model's step is cheap enough that
# per-call overhead dominates. "work" = parameters x rows per step (a proxy for FLOPs/step).
# Measured with ``python -m dynamics_ops.bench sweep`` (batched against sequential, same run).
CPU_BATCHED_MAX_WORK = 2e7
CPU_MEMORY_BUDGET = 1 << 30  # bytes for the stacked models of one chunk on CPU


def unbatchable(model: nn.Module, data: Dataset | None = None) -> str | None:
    """Why the batched engine cannot train ``model`` exactly (None if it can). With ``data``,
    a forward and backward pass on two of its rows (on the CPU) also finds parameters that
    take no part in the loss: ``train`` leaves them be (no gradient), while the batched
    engine, which steps one [K, N] buffer, would give them a zero gradient and decay them."""
    if any(True for _ in model.buffers()):
        return "it has buffers (e.g. BatchNorm running statistics)"
    if any(isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0 for m in model.modules()):
        return "it uses dropout (random per model)"
    dtypes = sorted({str(p.dtype) for p in model.parameters()})
    if len(dtypes) > 1:
        return f"its parameters have more than one dtype ({', '.join(dtypes)}); one buffer holds them"
    if data is not None:
        model.zero_grad(set_to_none=True)
        out = model(data.x_train[:2].to("cpu"))
        out.float().square().mean().backward()
        unused = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
        model.zero_grad(set_to_none=True)
        if unused:
            return f"its parameters {unused} take no part in the output, so they get no gradient"
    return None


def model_work(model: nn.Module, data: Dataset, batch_size: int | None) -> float:
    """Parameters x rows per step: a proxy for one model's cost per step."""
    rows = len(data.x_train) if batch_size is None else min(batch_size, len(data.x_train))
    return float(sum(p.numel() for p in model.parameters())) * rows


def choose_strategy(model: nn.Module, data: Dataset, batch_size: int | None, k: int,
                    metrics=None) -> str:
    """``auto``: batched on accelerators; on CPU batched only when one model's step is small
    (:data:`CPU_BATCHED_MAX_WORK`); sequential for K = 1, custom metrics, buffers or dropout.
    (The gpu-size smoke run is on the stand-in CUDA device, so it chooses as a GPU would.)"""
    if k == 1 or metrics or unbatchable(model, data):
        return "sequential"
    if data.device.type != "cpu":
        return "batched"
    return "batched" if model_work(model, data, batch_size) <= CPU_BATCHED_MAX_WORK else "sequential"


def footprint(model: nn.Module, data: Dataset, batch_size: int | None,
              optimizer: str = "adamw", masked: bool = False) -> dict:
    """Bytes one model needs on the device for one batched training step, at its peak:
    ``params`` and ``activations`` (what autograd saves, measured with saved-tensor hooks on a
    small batch and scaled to the batch, doubled for the backward pass's temporaries).

    ``params`` counts what the batched step holds while it updates: the parameters and their
    gradients, the optimizer's S state buffers (0 for SGD, 1 for momentum, 2 for Adam), and
    the step's new parameters and new state, computed beside the old ones (frozen models keep
    their old values): (3 + 2 S) copies of the parameters, plus the update's temporaries: two
    more, as the step works on the whole [K, N] buffer of a model's parameters
    (:class:`~.loop._Stack`), and one more for the [K, N] mask when parameters are ``masked``.
    A test measures the step's live tensors against it, at two depths."""
    n_params = sum(p.numel() for p in model.parameters())
    states = {"sgd": 0, "momentum": 1}.get(optimizer, 2)
    rows = len(data.x_train) if batch_size is None else min(batch_size, len(data.x_train))
    probe = min(rows, 64)
    saved = [0]

    def pack(t):
        saved[0] += t.numel() * t.element_size()
        return t

    x = data.x_train[:probe].to("cpu")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
        F.cross_entropy(out, data.y_train[:probe].to("cpu")).backward()
    model.zero_grad(set_to_none=True)
    return dict(params=4 * n_params * (5 + 2 * states + masked),
                activations=2 * saved[0] / probe * rows)


def memory_budget(device) -> float:
    """Bytes the stacked models of one chunk may take: half the free memory on CUDA
    (``torch.cuda.mem_get_info``: what is free *now*, after the data and anything else the
    notebook holds; the other half is left for evaluation chunks and the allocator's slack),
    :data:`CPU_MEMORY_BUDGET` elsewhere. (The stand-in CUDA device answers as a T4 with its
    CUDA context made, so the gpu-size smoke run chunks as Colab's GPU will.)"""
    device = torch.device(device)
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return 0.5 * free
    return float(CPU_MEMORY_BUDGET)


def chunk_size_for(per_model: float, budget: float) -> int:
    """How many models of ``per_model`` bytes fit in ``budget`` bytes (at least one)."""
    if per_model <= 0:
        raise ValueError(f"a model's footprint must be positive, got {per_model}")
    return max(1, int(budget // per_model))


def auto_chunk_size(model: nn.Module, data: Dataset, batch_size: int | None,
                    optimizer: str = "adamw", masked: bool = False) -> int:
    """How many models to stack at once: :func:`memory_budget` over one model's
    :func:`footprint`."""
    need = footprint(model, data, batch_size, optimizer, masked)
    return chunk_size_for(need["params"] + need["activations"], memory_budget(data.device))


