"""Float32 precision on a GPU: TF32 matmuls, emulated on the CPU, and a scope that turns them off.

On NVIDIA Ampere and newer, :func:`dynamics.runtime.setup` lets float32 matmuls run on TF32
tensor cores (``DYNAMICS_TF32``): each input is rounded to 10 explicit mantissa bits (float32
keeps 23) and the products are summed in float32, so a product carries a relative error of
about 1e-3 instead of 1e-7. cuDNN's float32 convolutions do the same by default. A result that
needs float32's last digits (a quantity driven to 1e-6 by gradient descent) can fail there
while it holds on every CPU. This module lets the CPU see what such a GPU computes:

- :func:`tf32_round`: float32 values rounded as TF32 stores them (round to nearest, ties away
  from zero, as the PTX instruction ``cvt.rna.tf32.f32`` does);
- :func:`emulating_tf32`: a scope in which every float32 matmul and convolution (forward and
  backward: it acts at the ATen level, below autograd) rounds its two operands to TF32 first,
  exactly when PyTorch's precision settings would let a GPU use TF32 for it;
- :func:`full_float32`: a scope that keeps full float32 matmuls and convolutions on every
  device (it sets PyTorch's settings, which the emulation obeys as a GPU does).
"""
from __future__ import annotations

from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["MANTISSA_BITS", "tf32_round", "emulating_tf32", "full_float32"]

MANTISSA_BITS = 10  # TF32's explicit mantissa bits (float32: 23)
_DROP = 23 - MANTISSA_BITS
_HALF, _KEEP = 1 << (_DROP - 1), ~((1 << _DROP) - 1)

_aten = torch.ops.aten
_MATMULS = {_aten.mm.default: (0, 1), _aten.bmm.default: (0, 1), _aten.addmm.default: (1, 2),
            _aten.baddbmm.default: (1, 2), _aten.addbmm.default: (1, 2)}
_CONVS = {_aten.convolution.default: (0, 1), _aten.convolution_backward.default: (0, 1, 2)}


def tf32_round(x: torch.Tensor) -> torch.Tensor:
    """``x`` (float32) with its mantissa rounded to :data:`MANTISSA_BITS` bits, to nearest with
    ties away from zero; infinities and NaNs stay as they are. Other dtypes pass unchanged."""
    if not torch.is_tensor(x) or x.dtype != torch.float32:
        return x
    bits = x.contiguous().view(torch.int32)
    rounded = ((bits + _HALF) & _KEEP).view(torch.float32)  # sign-magnitude: away from zero
    return torch.where(torch.isfinite(x), rounded, x).view_as(x)


def _tf32_on(kind: str) -> bool:
    if kind == "matmul":
        return torch.backends.cuda.matmul.fp32_precision == "tf32"
    return torch.backends.cudnn.conv.fp32_precision == "tf32"


class _TF32(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for table, kind in ((_MATMULS, "matmul"), (_CONVS, "conv")):
            if func in table and _tf32_on(kind):
                args = tuple(tf32_round(a) if i in table[func] else a for i, a in enumerate(args))
        return func(*args, **kwargs)


@contextmanager
def _precision(matmul: str, conv: str):
    saved = torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision
    torch.backends.cuda.matmul.fp32_precision = matmul
    torch.backends.cudnn.conv.fp32_precision = conv
    try:
        yield
    finally:
        torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision = saved


@contextmanager
def emulating_tf32():
    """``with emulating_tf32():`` computes as an Ampere GPU does under the book's setup (TF32
    matmuls and convolutions on), on any device; :func:`full_float32` inside turns it off."""
    with _precision("tf32", "tf32"), _TF32():
        yield


def full_float32():
    """``with full_float32():`` keeps float32 matmuls and convolutions in full float32 (no TF32)
    on a GPU, and under :func:`emulating_tf32`; the settings in force before come back after."""
    return _precision("ieee", "ieee")
