"""The machine's floating-point arithmetic: what decides a training run's bits besides the code.

A float32 training run is reproducible bit for bit only on the arithmetic that made it. The
same code and seed on another CPU take other kernels (AVX-512 instead of AVX2 matmuls sum in
another order), and a chaotic run amplifies the last bit into a different grok step. So a data
file records the arithmetic it was made on (:func:`fingerprint`, in its provenance), and
:mod:`dynamics_ops.verify` expects its sample to come out bit for bit only on that arithmetic.

- :func:`flush_denormals`: the book's one arithmetic setting, made when the library loads.
- :func:`fingerprint`: the arithmetic in one line (device, torch and its CPU kernels, the
  processor, how subnormal floats are treated, numpy for generated data).
"""
from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import torch

__all__ = ["flush_denormals", "subnormals_flushed", "fingerprint"]


def flush_denormals() -> bool:
    """Make the CPU treat subnormal floats (below 1.2e-38 in float32) as zero. Weight decay
    drives dead weights (and Adam's second moments) into that range, where every multiply-add
    takes the processor's slow path: a grokking run at weight decay 6 took 76 s, and 9 s
    flushed, with the same histories to the last bit. Returns whether this CPU supports it
    (x86 with SSE3, and ARM; elsewhere nothing changes)."""
    return torch.set_flush_denormal(True)


def subnormals_flushed() -> bool:
    """Whether the CPU flushes subnormals now, read from the arithmetic itself: 1e-30 * 1e-9
    is a subnormal float32 (1e-39), which a flushing CPU gives as exactly 0."""
    return (torch.tensor([1e-30], dtype=torch.float32) * 1e-9).item() == 0.0


def _processor() -> str:
    """The processor's name and generation (vendor, family, model: ``platform.processor()``
    names only the vendor on Linux, and two generations of one name take other kernels)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    fields = {}
    for line in info.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
        if not line.strip():
            break  # the first processor is enough
    name = fields.get("model name") or platform.processor() or platform.machine()
    gen = [f"{k} {fields[k]}" for k in ("cpu family", "model") if k in fields]
    return f"{name} ({', '.join(gen)})" if gen else name


def fingerprint(device=None) -> str:
    """The arithmetic a run on ``device`` (default: the book's) takes, in one line: two runs
    with the same code, seed and fingerprint give the same bits."""
    from .runtime import get_device

    device = torch.device(device) if device is not None else get_device()
    if device.type == "cuda":
        where = f"cuda {torch.cuda.get_device_name(device)}, CUDA {torch.version.cuda}"
    else:
        kernels = torch.backends.cpu.get_cpu_capability()
        where = f"{device.type}: {_processor()}, {kernels} kernels"
    flushed = "flushed" if subnormals_flushed() else "kept"
    return f"{where}; torch {torch.__version__}; numpy {np.__version__}; subnormals {flushed}"
