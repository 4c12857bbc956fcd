"""The GPU paths, proven on a CPU: the logic that picks them, and that they change results by
no more than their stated tolerances (fused optimizer steps, TF32 matmuls)."""
from __future__ import annotations

import pytest
import torch

from dynamics import models, runtime
from dynamics.train import fused_step, make_optimizer


class _FakeCuda(torch.nn.Parameter):
    """A parameter that says it lives on CUDA (to test the choice without a GPU)."""

    @property
    def is_cuda(self):
        return True


def test_fused_step_is_chosen_on_cuda_only():
    cpu = [torch.nn.Parameter(torch.zeros(2))]
    assert fused_step(cpu) == {} and fused_step([]) == {}
    assert fused_step([_FakeCuda(torch.zeros(2))]) == {"fused": True}
    assert fused_step([_FakeCuda(torch.zeros(2)), *cpu]) == {}  # mixed devices: torch's default
    model = models.MLP(8, 4, 1, 3)
    for name in ("sgd", "momentum", "adam", "adam_l2", "adamw"):  # CPU: the default loop, as before
        opt = make_optimizer(model, name, lr=1e-2)
        assert not opt.defaults.get("fused"), name


@pytest.mark.parametrize("name", ["sgd", "momentum", "adam_l2", "adamw"])
def test_fused_step_agrees_with_the_loop(name):
    """torch's fused kernels (CPU has them too) give the per-parameter loop's result to float32
    rounding over 30 steps: rtol 1e-5."""
    ctor = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "adam_l2": torch.optim.Adam,
            "adamw": torch.optim.AdamW}[name]
    kw = dict(lr=1e-2, weight_decay=0.1) | (dict(momentum=0.9) if name == "momentum" else {})
    g = torch.Generator().manual_seed(0)
    start = [torch.randn(16, 8, generator=g), torch.randn(16, generator=g)]
    grads = [[torch.randn_like(t) for t in start] for _ in range(30)]
    results = []
    for fused in (False, True):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        opt = ctor(params, fused=fused, **kw)
        for gs in grads:
            for p, gr in zip(params, gs):
                p.grad = gr.clone()
            opt.step()
        results.append([p.detach() for p in params])
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_tf32_matmuls_on_ampere_and_newer(monkeypatch):
    matmul = torch.backends.cuda.matmul
    before = matmul.fp32_precision
    matmul.fp32_precision = "ieee"
    try:
        assert runtime.tf32_matmuls("cpu") is False
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (7, 5))  # T4
        assert runtime.tf32_matmuls("cuda") is False and matmul.fp32_precision == "ieee"
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))  # H100
        monkeypatch.setenv("DYNAMICS_TF32", "0")
        assert runtime.tf32_matmuls("cuda") is False and matmul.fp32_precision == "ieee"
        monkeypatch.delenv("DYNAMICS_TF32")
        assert runtime.tf32_matmuls("cuda") is True and matmul.fp32_precision == "tf32"
    finally:
        matmul.fp32_precision = before
