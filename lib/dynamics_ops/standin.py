"""A stand-in CUDA device on the CPU: proves the book's device placement without a GPU.

``DYNAMICS_DEVICE=standin`` (read by :func:`dynamics.runtime.get_device`) or ``with
standin.active():`` makes ``cuda`` a device that lives on the CPU: a tensor put there
(``.to("cuda")``, ``.cuda()``, ``Module.to``, a factory with ``device="cuda"``, or anything
computed from such a tensor) reports ``device cuda:0`` and holds a plain CPU tensor, and
every value is computed exactly as on the CPU. What CUDA refuses, it refuses, as a
:class:`PlacementError` that names the file and line of the code that did it:

- (a) an operation mixing a device tensor with a CPU tensor that is not a scalar (0-dim CPU
  tensors mix, as in CUDA; so do copies between devices and CPU indices into a device tensor);
- (b) ``.numpy()`` (or ``np.asarray``) of a device tensor;
- (c) a CPU ``torch.Generator`` sampling onto the device (or a device generator onto the CPU).

``torch.cuda``'s calls that the library makes answer as a T4 would (no TF32), with the CPU's
memory budget, and are restored when the stand-in is switched off.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from contextlib import contextmanager

import torch
from torch.utils._device import DeviceContext as _DeviceContext
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack as _dispatch_modes

DEVICE = torch.device("cuda", 0)
_HERE = os.path.abspath(__file__)
_TORCH = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
aten = torch.ops.aten
_MIXING_OK = {aten.copy_.default, aten._to_copy.default, aten.copy.default}  # as in CUDA
_PYTHON_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.Python) | \
    torch._C.DispatchKeySet(torch._C.DispatchKey.PythonTLSSnapshot)
_INDEXING = {aten.index.Tensor, aten.index_put_.default, aten.index_put.default,
             aten._index_put_impl_.default}


class PlacementError(RuntimeError):
    """What CUDA would have refused, and where the book's code asked for it."""



def where() -> str:
    """The first frame outside torch and this module: the code that placed the tensor."""
    frame = sys._getframe(1)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if name != _HERE and not name.startswith(_TORCH) and not name.startswith("<frozen"):
            return f"{frame.f_code.co_filename}:{frame.f_lineno} (in {frame.f_code.co_name})"
        frame = frame.f_back
    return "an unknown place"


def _refuse(message: str):
    raise PlacementError(f"{message}\n  at {where()}  [stand-in CUDA device]")


class DeviceTensor(torch.Tensor):
    """A tensor on the stand-in device: reports ``cuda:0``, holds ``elem`` on the CPU. Its
    C++ device is ``meta`` (a device autograd can route without CUDA), which the dispatch
    below reads as the stand-in too."""

    elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        out = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device="meta", requires_grad=elem.requires_grad)
        out.elem = elem
        return out

    device = property(lambda self: DEVICE)
    is_cuda = property(lambda self: True)
    is_cpu = property(lambda self: False)
    is_meta = property(lambda self: False)

    def get_device(self) -> int:
        return 0

    def numpy(self, *, force: bool = False):
        if force:
            return self.elem.detach().numpy()
        _refuse("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() "
                "to copy the tensor to host memory first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def tolist(self):
        return self.elem.tolist()

    def __format__(self, spec):
        return self.item().__format__(spec) if self.dim() == 0 else object.__format__(self, spec)

    def __repr__(self, *, tensor_contents=None):
        text = repr(self.elem.detach())
        return text[:-1] + ", device='cuda:0')" if text.endswith(")") else text

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _dispatch(func, args, kwargs or {})


def _ours(device) -> bool:
    return device is not None and torch.device(device).type in ("cuda", "meta")


# The stand-in's tensors live on the meta device underneath, so an operation asking for
# ``meta`` is taken as asking for the stand-in. A caller that asks for the meta device itself
# (``with torch.device("meta")``, ``.to("meta")``: a model's shapes without its values, as
# the batched sweep builds them) gets real meta tensors: this flag is on while it does.
_META = threading.local()


@contextmanager
def _real_meta():
    was = getattr(_META, "on", False)
    _META.on = True
    try:
        yield
    finally:
        _META.on = was


def _meta_context_function(self, func, types, args=(), kwargs=None):
    """``torch.device("meta")`` as a context: its factories make real meta tensors."""
    if self.device.type == "meta":
        with _real_meta():
            return _originals["DeviceContext"](self, func, types, args, kwargs)
    return _originals["DeviceContext"](self, func, types, args, kwargs)


def _wrap(out):
    if isinstance(out, torch.Tensor) and not isinstance(out, DeviceTensor):
        return DeviceTensor(out)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap(x) for x in out)
    return out


_INPLACE: dict = {}


def _dispatch(func, args, kwargs):
    """Every operation: refuse what CUDA refuses, compute on the CPU tensors, wrap the result
    when it lands on the device (a device argument, a ``device=`` naming cuda or meta)."""
    on_device, cpu, plain = False, None, []
    indexing = func in _INDEXING
    for i, a in enumerate(args):  # one pass: unwrap, and find the devices (hot path)
        if isinstance(a, DeviceTensor):
            on_device = True
            a = a.elem
        elif isinstance(a, torch.Tensor):
            if cpu is None and a.dim() > 0:
                cpu = a
        elif isinstance(a, (list, tuple)) and a:
            inner = []
            for x in a:
                if isinstance(x, DeviceTensor):
                    on_device = True
                    x = x.elem
                elif isinstance(x, torch.Tensor) and cpu is None and x.dim() > 0 \
                        and not (indexing and i == 1):  # CPU indices into a device tensor
                    cpu = x
                inner.append(x)
            a = type(a)(inner)
        plain.append(a)
    out_arg = kwargs.get("out")
    if kwargs:
        kw = {}
        for k, v in kwargs.items():
            if isinstance(v, DeviceTensor):
                on_device, v = True, v.elem
            elif isinstance(v, torch.Tensor) and cpu is None and v.dim() > 0:
                cpu = v
            elif isinstance(v, (list, tuple)) and any(isinstance(x, DeviceTensor) for x in v):
                on_device, v = True, type(v)(getattr(x, "elem", x) for x in v)
            kw[k] = v
        kwargs = kw
    device = kwargs.get("device")
    if device is not None and getattr(_META, "on", False) and torch.device(device).type == "meta":
        wrap = False  # the meta device itself (see _real_meta)
    else:
        wrap = on_device if device is None else _ours(device)
    if device is not None and wrap:
        kwargs["device"] = torch.device("cpu")
    if on_device and cpu is not None and func not in _MIXING_OK and not (
            indexing and isinstance(args[0], DeviceTensor)):
        _refuse(f"RuntimeError: Expected all tensors to be on the same device, but found at "
                f"least two devices, cuda:0 and cpu! ({func}: a CPU tensor of shape "
                f"{tuple(cpu.shape)})")
    gen = kwargs.get("generator")
    if gen is not None and wrap != (gen._cdata in _device_generators):
        _refuse(f"RuntimeError: Expected a '{'cuda' if wrap else 'cpu'}' device type for "
                f"generator but found '{'cpu' if wrap else 'cuda'}' ({func})")
    out = func(*plain, **kwargs)
    inplace = _INPLACE.get(func)
    if inplace is None:
        inplace = _INPLACE[func] = func._schema.name.endswith("_")
    if inplace and args and isinstance(args[0], torch.Tensor):
        target = args[0]  # in place: the tensor itself, on its own device
        if isinstance(target, DeviceTensor) and (target.shape, target.stride()) != \
                (target.elem.shape, target.elem.stride()):  # t_, squeeze_, ...: the wrapper too
            with torch._C._ExcludeDispatchKeyGuard(_PYTHON_KEYS):
                func(target, *args[1:], **kwargs)
        return target
    if isinstance(out_arg, torch.Tensor):
        return out_arg
    return _wrap(out) if wrap else out


class _Mode(TorchDispatchMode):
    """Sees every operation, factories included: ``device="cuda"`` lands on the stand-in."""


def _mode_dispatch(self, func, types, args=(), kwargs=None):
    return _dispatch(func, args, kwargs or {})


# set after the class is made: TorchDispatchMode would wrap it in a dynamo guard that costs
# a third of the stand-in's time per operation (and nothing here is compiled)
_Mode.__torch_dispatch__ = _mode_dispatch


class DeviceGenerator(torch.Generator):
    """``torch.Generator(device="cuda")`` under the stand-in: a CPU generator that says cuda."""

    device = property(lambda self: DEVICE)

    def __init__(self):
        super().__init__()
        _device_generators[self._cdata] = self  # what a dispatched op sees is a new object


_device_generators: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


# ----------------------------------------------------------------------------- switching on

_originals: dict = {}
_mode: list = []


def _to(self, *args, **kwargs):
    device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
    if any(isinstance(a, DeviceTensor) for a in (*args, kwargs.get("other"))):
        device = DEVICE  # .to(a device tensor): its device, which reads meta underneath
    if device is not None and device.type == "meta":  # the meta device itself: shapes only
        with _real_meta():
            return _originals["Tensor.to"](self, *args, **kwargs)
    if not _ours(device):
        return _originals["Tensor.to"](self, *args, **kwargs)
    if isinstance(self, DeviceTensor):
        return self if dtype is None or dtype == self.dtype else self.to(dtype)
    return aten._to_copy.default(self, dtype=dtype or self.dtype, device=torch.device("meta"))


def _cuda(self, device=None, non_blocking=False, memory_format=torch.preserve_format):
    return _to(self, DEVICE)


def _factory(original):
    def make(data, *args, device=None, **kwargs):
        if _ours(device):
            return _to(original(data, *args, **kwargs), DEVICE)
        return original(data, *args, device=device, **kwargs)
    return make


class _GeneratorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _originals.get("Generator", torch._C.Generator))

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _originals.get("Generator", torch._C.Generator))


class _Generator(metaclass=_GeneratorType):
    """``torch.Generator`` while the stand-in is on: a :class:`DeviceGenerator` for cuda."""

    def __new__(cls, device="cpu"):
        return DeviceGenerator() if _ours(device) else _originals["Generator"](device)


def _mem_get_info(device=None):
    """(free, total) bytes as a T4 answers with the CUDA context made (the stand-in is a T4:
    see get_device_capability), so that a sweep chunks as it will on Colab's GPU."""
    return int(T4_VISIBLE - CUDA_CONTEXT), int(16e9)


T4_VISIBLE = 15.0e9  # bytes a T4 shows (16 GB, part kept for ECC)
CUDA_CONTEXT = 0.5e9  # bytes CUDA, cuBLAS and PyTorch's kernels take before any tensor

_CUDA = dict(is_available=lambda: True, device_count=lambda: 1, current_device=lambda: 0,
             get_device_name=lambda device=None: "stand-in CUDA device (CPU)",
             get_device_capability=lambda device=None: (7, 5),  # a T4: no TF32
             synchronize=lambda device=None: None, _lazy_init=lambda: None,
             mem_get_info=_mem_get_info)


def _thread_run(self):
    """``Thread.run`` while the stand-in is on: a thread (a live panel's Run button) starts
    with no dispatch mode of its own (torch keeps them per thread), so it enters one."""
    if _mode and not any(isinstance(m, _Mode) for m in _dispatch_modes()):
        with _Mode():
            return _originals["Thread.run"](self)
    return _originals["Thread.run"](self)


def is_active() -> bool:
    return bool(_mode)


def activate() -> None:
    """Switch the stand-in on for this process (idempotent)."""
    if _mode:
        return
    _originals.update({"Tensor.to": torch.Tensor.to, "Tensor.cuda": torch.Tensor.cuda,
                       "tensor": torch.tensor, "as_tensor": torch.as_tensor,
                       "Generator": torch.Generator, "Thread.run": threading.Thread.run,
                       "DeviceContext": _DeviceContext.__torch_function__},
                      **{f"cuda.{k}": getattr(torch.cuda, k) for k in _CUDA})
    torch.Tensor.to, torch.Tensor.cuda = _to, _cuda
    torch.tensor, torch.as_tensor = _factory(torch.tensor), _factory(torch.as_tensor)
    torch.Generator, threading.Thread.run = _Generator, _thread_run
    _DeviceContext.__torch_function__ = _meta_context_function
    for k, v in _CUDA.items():
        setattr(torch.cuda, k, v)
    mode = _Mode()
    mode.__enter__()
    _mode.append(mode)


def deactivate() -> None:
    """Switch the stand-in off and restore what :func:`activate` patched."""
    if not _mode:
        return
    _mode.pop().__exit__(None, None, None)
    torch.Tensor.to, torch.Tensor.cuda = _originals["Tensor.to"], _originals["Tensor.cuda"]
    torch.tensor, torch.as_tensor = _originals["tensor"], _originals["as_tensor"]
    torch.Generator, threading.Thread.run = _originals["Generator"], _originals["Thread.run"]
    _DeviceContext.__torch_function__ = _originals["DeviceContext"]
    for k in _CUDA:
        setattr(torch.cuda, k, _originals[f"cuda.{k}"])
    _originals.clear()


@contextmanager
def active():
    """The stand-in for a block (tests); it stays on if it was on before."""
    was = is_active()
    activate()
    try:
        yield DEVICE
    finally:
        if not was:
            deactivate()
