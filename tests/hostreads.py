"""Count the places where code reads a tensor's value back to the host: on a GPU each is a
synchronization (the CPU waits for every queued kernel), so per-step code must not do it.

Counted on the CPU by what the code asks for, not by timing: ``bool``/``if`` on a tensor,
``float``/``int``/``.item()``, ``.tolist()``, ``.numpy()`` and ``.cpu()``. Reads made inside ``torch.optim`` are not counted:
its optimizers keep their step counters on the CPU on every device (unless ``capturable``), so
there those reads cost no synchronization."""
import os
import sys

import torch
from torch.overrides import TorchFunctionMode

OPTIM = os.path.dirname(torch.optim.__file__) + os.sep
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
        if func in READS and not sys._getframe(1).f_code.co_filename.startswith(OPTIM):
            self.names.append(func.__name__)
        return func(*args, **(kwargs or {}))
