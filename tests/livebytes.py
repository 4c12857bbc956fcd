"""Measure the memory a computation allocates, on any device: the bytes of every tensor storage
its operations create, live from creation until the last tensor that uses it is freed; the
peak of that sum. Measured by watching the tensors (a TorchDispatchMode sees every output, a
weak reference sees each tensor die), not by a formula, so it checks a formula."""
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveBytes(TorchDispatchMode):
    """``with LiveBytes() as m:`` ... ``m.peak`` (bytes), ``m.live`` (still held at the end)."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self._refs = {}  # (data_ptr, nbytes) -> [tensors alive, nbytes]

    def _drop(self, key) -> None:
        entry = self._refs[key]
        entry[0] -= 1
        if entry[0] == 0:
            self.live -= self._refs.pop(key)[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            storage = t.untyped_storage()
            key = (storage.data_ptr(), storage.nbytes())
            if key[1] == 0:
                continue
            if key not in self._refs:
                self._refs[key] = [0, key[1]]
                self.live += key[1]
                self.peak = max(self.peak, self.live)
            self._refs[key][0] += 1
            weakref.finalize(t, self._drop, key)
        return out
