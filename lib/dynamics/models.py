"""Small, readable models: an MLP with selectable activation and init, a 1-D CNN for
MNIST-1D, and a one-layer transformer for modular arithmetic.

Every classifier exposes ``features(x)``: the last hidden representation, the input of
the final linear layer ``head`` (what neural collapse looks at).
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F

ACTIVATIONS = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "linear": nn.Identity,
}
INITS = ("default", "zero", "normal", "xavier", "he", "orthogonal")


def init_linear_(layer: nn.Linear | nn.Conv1d, scheme: str = "default", std: float | None = None,
                 gain: float = 1.0, bias_std: float = 0.0) -> None:
    """Initialize one layer's weight in place.

    - ``default``: PyTorch's own (Kaiming-uniform with a = √5).
    - ``zero``: all zeros (every unit identical: symmetry never breaks).
    - ``normal``: N(0, std²), ``std`` given (default 0.01, "small Gaussian").
    - ``xavier``: N(0, gain² · 2 / (fan_in + fan_out)) (Glorot & Bengio 2010).
    - ``he``: N(0, gain² · 2 / fan_in) (He et al. 2015), right for ReLU.
    - ``orthogonal``: a random (semi-)orthogonal matrix times ``gain`` (Saxe et al. 2014).

    Biases are set to N(0, bias_std²) (zero by default).
    """
    if scheme not in INITS:
        raise ValueError(f"unknown init {scheme!r}; choose one of {list(INITS)}")
    w = layer.weight
    with torch.no_grad():
        if scheme == "zero":
            w.zero_()
        elif scheme == "normal":
            w.normal_(0.0, 0.01 if std is None else std)
        elif scheme == "xavier":
            nn.init.xavier_normal_(w, gain=gain)
        elif scheme == "he":
            nn.init.kaiming_normal_(w, nonlinearity="relu")
            w.mul_(gain)
        elif scheme == "orthogonal":
            nn.init.orthogonal_(w.view(w.shape[0], -1), gain=gain)
        if layer.bias is not None and scheme != "default":
            layer.bias.normal_(0.0, bias_std) if bias_std > 0 else layer.bias.zero_()


@contextmanager
def evaluating(model: nn.Module):
    """``with evaluating(model):`` runs the block in eval mode and restores the mode after."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def layered(layers, act, x: torch.Tensor) -> torch.Tensor:
    """``x`` flattened, then through each of ``layers`` followed by ``act``: an MLP's body."""
    h = x.flatten(1)
    for layer in layers:
        h = act(layer(h))
    return h


class MLP(nn.Module):
    """``depth`` hidden layers of ``width`` units with one activation, then a linear head.

    ``init`` picks the scheme for every layer (see :func:`init_linear_`); ``sigma_w`` and
    ``sigma_b`` instead give the mean-field parametrization W ~ N(0, σ_w²/fan_in),
    b ~ N(0, σ_b²) used in signal-propagation theory.
    """

    def __init__(self, in_dim: int, width: int = 128, depth: int = 2, out_dim: int = 10,
                 activation: str = "relu", init: str = "default", bias: bool = True,
                 sigma_w: float | None = None, sigma_b: float = 0.0, init_std: float | None = None):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose one of {list(ACTIVATIONS)}")
        for name, value in (("in_dim", in_dim), ("width", width), ("out_dim", out_dim)):
            if int(value) < 1:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        dims = [in_dim] + [width] * depth
        self.hidden = nn.ModuleList(nn.Linear(a, b, bias=bias) for a, b in zip(dims[:-1], dims[1:]))
        self.head = nn.Linear(dims[-1], out_dim, bias=bias)
        self.act = ACTIVATIONS[activation]()
        self.activation = activation
        for layer in [*self.hidden, self.head]:
            if sigma_w is not None:
                with torch.no_grad():
                    layer.weight.normal_(0.0, sigma_w / math.sqrt(layer.in_features))
                    if layer.bias is not None:
                        layer.bias.normal_(0.0, sigma_b) if sigma_b > 0 else layer.bias.zero_()
            else:
                init_linear_(layer, init, std=init_std)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return layered(self.hidden, self.act, x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def hidden_matrices(self) -> list[nn.Parameter]:
        """What Muon trains (:func:`dynamics.train.muon_split`): every weight matrix but the
        readout ``head``, whose update should be scaled by another norm."""
        return [layer.weight for layer in self.hidden]


class CNN1D(nn.Module):
    """A small 1-D CNN for MNIST-1D: three convolutions (the last two stride 2), then a
    linear head on the flattened feature map."""

    def __init__(self, length: int = 40, channels: int = 32, out_dim: int = 10):
        super().__init__()
        if channels < 1 or length < 4:
            raise ValueError(f"channels must be >= 1 and length >= 4, got {channels}, {length}")
        self.conv1 = nn.Conv1d(1, channels, 5, padding=2)
        self.conv2 = nn.Conv1d(channels, channels, 3, stride=2, padding=1)
        self.conv3 = nn.Conv1d(channels, channels, 3, stride=2, padding=1)
        out_len = (((length - 1) // 2 + 1) - 1) // 2 + 1
        self.head = nn.Linear(channels * out_len, out_dim)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        h = x.view(len(x), 1, -1)
        h = F.relu(self.conv1(h))
        h = F.relu(self.conv2(h))
        h = F.relu(self.conv3(h))
        return h.flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def hidden_matrices(self) -> list[nn.Parameter]:
        """None: its hidden weights are convolution kernels, which ``torch.optim.Muon`` (2-D
        only) does not take; Jordan's Muon flattens them to 2-D and trains them."""
        return []


class Attention(nn.Module):
    """Multi-head self-attention written out: softmax(Q Kᵀ / √d_head) V, heads concatenated,
    then an output projection (no biases).

    Why not ``nn.MultiheadAttention`` or ``F.scaled_dot_product_attention``: the sweep engine
    trains many transformers at once under ``torch.func.vmap``, and the fused attention
    kernels have no batching rule there (torch warns and falls back to a slow loop). Three
    matmuls and a softmax batch like any other op, and on three tokens a fused kernel saves
    nothing. Parameters and their initialization are those of ``nn.MultiheadAttention``
    (``in_proj`` [3d, d] Xavier-uniform, ``out`` PyTorch's Linear default, drawn in the same
    order), so a seed gives the same model as before.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.in_proj = nn.Parameter(torch.empty(3 * d_model, d_model))
        self.out = nn.Linear(d_model, d_model, bias=False)
        nn.init.xavier_uniform_(self.in_proj)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        n, t, d = h.shape
        q, k, v = (h @ self.in_proj.T).split(d, dim=-1)
        q, k, v = (z.view(n, t, self.n_heads, -1).transpose(1, 2) for z in (q, k, v))  # [n, heads, t, dh]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(n, t, d))


class Transformer1L(nn.Module):
    """A one-layer transformer for ``a ∘ b mod p`` (the grokking recipe of Nanda et al.):
    tokens ``a, b, =``, learned positions, one block of multi-head attention and an MLP
    (no layer norm), logits read at the ``=`` position. With one layer, read at the last
    position, a causal mask would change nothing (``=`` sees every token either way), so
    there is none."""

    def __init__(self, p: int, d_model: int = 128, n_heads: int = 4, d_mlp: int = 512):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.p = p
        self.embed = nn.Embedding(p + 1, d_model)  # token p is "="
        self.pos = nn.Parameter(torch.randn(3, d_model) / math.sqrt(d_model))
        self.attn = Attention(d_model, n_heads)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_mlp), nn.ReLU(), nn.Linear(d_mlp, d_model))
        self.head = nn.Linear(d_model, p, bias=False)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        eq = torch.full((len(x), 1), self.p, dtype=x.dtype, device=x.device)
        h = self.embed(torch.cat([x, eq], dim=1)) + self.pos
        h = h + self.attn(h)
        h = h + self.mlp(h)
        return h[:, -1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def hidden_matrices(self) -> list[nn.Parameter]:
        """What Muon trains: the attention and MLP matrices; the embedding, the positions
        and the unembedding ``head`` go to AdamW (Jordan et al.'s split)."""
        return [self.attn.in_proj, self.attn.out.weight, self.mlp[0].weight, self.mlp[2].weight]


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
