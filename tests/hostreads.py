"""Count the places where code reads a tensor's value back to the host: on a GPU each is a
synchronization (the CPU waits for every queued kernel), so per-step code must not do it.

Counted on the CPU by what the code asks for, not by timing: ``bool``/``if`` on a tensor,
``float``/``int``/``.item()``, ``.tolist()``, ``.numpy()`` and ``.cpu()``."""
import torch
from torch.overrides import TorchFunctionMode

READS = {torch.Tensor.__bool__, torch.Tensor.__float__, torch.Tensor.__int__,
         torch.Tensor.__index__, torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.numpy,
         torch.Tensor.cpu}


class HostReads(TorchFunctionMode):
    """``with HostReads() as reads:`` ... ``reads.count`` (and ``reads.names``)."""

    def __init__(self):
        super().__init__()
        self.names = []

    @property
    def count(self) -> int:
        return len(self.names)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in READS:
            self.names.append(func.__name__)
        return func(*args, **(kwargs or {}))
