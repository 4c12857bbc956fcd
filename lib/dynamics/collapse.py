"""Neural collapse: the geometry of the last-layer features at the end of training.

Papyan, Han & Donoho (2020) saw four things happen once a classifier fits its training set
and keeps training (the *terminal phase*): (NC1) the features of each class collapse to their
class mean; (NC2) the centred class means become equal in length and equally spaced, the
vertices of a simplex equiangular tight frame (ETF); (NC3) the last layer's rows align with
those means; (NC4) the network then classifies like the nearest class centre. This module
measures the four (:func:`nc_metrics`, one pass over the features, on the device), and holds
the experiments of the chapter:

- :class:`CollapseNet`, a ReLU MLP that ends in a *linear part* of ``linear_depth`` bias-free
  linear layers (Jacot et al. 2025 prove collapse for such networks trained with weight decay);
- :class:`UnconstrainedFeatures`, the unconstrained features model: the features are free
  parameters (Mixon et al. 2022), optionally followed by a deep linear head (Dang et al. 2023);
- the conditions of Jacot et al.: :func:`balancedness` of the linear layers and the
  :func:`conditioning` of the features that enter them;
- :func:`imbalanced_ufm_solution`: the norms of class means and classifier rows that the
  deep linear model reaches with imbalanced classes and MSE loss.

Runners (``run_*``) train with :func:`dynamics.train.train` or
:func:`dynamics.sweep.train_many`; figure builders (``*_figure``), live panels (``*_panel``),
:func:`claims` and :func:`precompute` sit at the end.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from . import data as D
from . import plots, results
from .config import Config, param
from .runtime import get_device, get_profile
from .train import History, log_steps, train

METRICS = ("nc1", "equinorm", "equiangularity", "etf_distance", "nc3", "nc4")
CONDITIONS = ("balancedness", "conditioning")
LABELS = {
    "nc1": "NC1  tr(Σ_W Σ_B⁺)/C",
    "equinorm": "NC2 equinorm (CV of norms)",
    "equiangularity": "NC2 equiangularity",
    "etf_distance": "NC2 distance to ETF",
    "nc3": "NC3 self-duality",
    "nc4": "NC4 NCC disagreement",
    "balancedness": "balancedness ‖W₂ᵀW₂ − W₁W₁ᵀ‖ (rel.)",
    "conditioning": "conditioning s₁/s_C",
}


# ============================================================================ the metrics


def _float_dtype(device: torch.device) -> torch.dtype:
    # collapse metrics are ratios of tiny to large numbers: float64 wherever it exists
    return torch.float32 if device.type == "mps" else torch.float64


def _check_inputs(features: torch.Tensor, labels: torch.Tensor, n_classes: int) -> None:
    if features.ndim != 2:
        raise ValueError(f"features must be a [N, d] matrix, got shape {tuple(features.shape)}")
    if labels.ndim != 1 or len(labels) != len(features):
        raise ValueError(f"labels must be a vector of {len(features)} class indices, "
                         f"got shape {tuple(labels.shape)}")
    if n_classes < 2:
        raise ValueError(f"neural collapse needs at least 2 classes, got {n_classes}")
    if len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= n_classes):
        raise ValueError(f"labels must lie in [0, {n_classes - 1}]")


def class_means(features: torch.Tensor, labels: torch.Tensor, n_classes: int):
    """``(means [C, d], counts [C])`` of the features of each class (float64)."""
    _check_inputs(features, labels, n_classes)
    h = features.to(_float_dtype(features.device))
    counts = torch.bincount(labels, minlength=n_classes).to(h.dtype)
    if bool((counts == 0).any()):
        missing = torch.nonzero(counts == 0).flatten().tolist()
        raise ValueError(f"classes {missing} have no examples: their means are undefined")
    sums = torch.zeros(n_classes, h.shape[1], dtype=h.dtype, device=h.device).index_add_(0, labels, h)
    return sums / counts[:, None], counts


def simplex_etf(n_classes: int, dim: int | None = None, seed: int = 0) -> torch.Tensor:
    """The ``C`` vertices of a simplex equiangular tight frame in R^dim (rows of unit norm,
    pairwise cosine −1/(C−1)), rotated at random: ``sqrt(C/(C−1)) · (I − 11ᵀ/C) · Uᵀ``."""
    C = int(n_classes)
    dim = C if dim is None else int(dim)
    if C < 2 or dim < C - 1:
        raise ValueError(f"a simplex ETF of {C} vertices needs C >= 2 and dim >= C-1, got dim={dim}")
    centred = torch.eye(C, dtype=torch.float64) - 1.0 / C
    basis, _ = torch.linalg.qr(torch.randn(dim, C, dtype=torch.float64,
                                           generator=torch.Generator().manual_seed(seed)))
    if dim < C:  # C-1 dims hold the simplex: drop the (all-ones) direction it does not use
        u, s, vh = torch.linalg.svd(centred)
        return math.sqrt(C / (C - 1)) * (u[:, :dim] * s[:dim])
    return math.sqrt(C / (C - 1)) * centred @ basis.T


def etf_gram(n_classes: int, dtype=torch.float64, device=None) -> torch.Tensor:
    """The Gram matrix of a simplex ETF with unit vertices: 1 on the diagonal, −1/(C−1) off it."""
    C = int(n_classes)
    return (C / (C - 1)) * (torch.eye(C, dtype=dtype, device=device) - 1.0 / C)


def cosine_gram(means: torch.Tensor, centre: bool = True) -> torch.Tensor:
    """Cosines between class means (centred on their average by default: Papyan's convention)."""
    m = means - means.mean(0) if centre else means
    m = m / m.norm(dim=1, keepdim=True).clamp_min(1e-300)
    return m @ m.T


def nc_metrics(features: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor,
               bias: torch.Tensor | None = None, n_classes: int | None = None) -> dict:
    """The four neural collapses of Papyan, Han & Donoho (2020), as device scalars.

    ``features`` [N, d] are the inputs of the last linear layer (``weight`` [C, d], ``bias``),
    ``labels`` [N]. With class means μ_c, global mean μ_G, M the matrix of centred means
    μ_c − μ_G, Σ_W the within-class and Σ_B = MᵀM/C the between-class covariance:

    - ``nc1`` = tr(Σ_W Σ_B⁺)/C: within-class spread measured in units of the between-class
      spread (computed in the C−1 directions Σ_B spans, so no d×d matrix is formed);
    - ``equinorm``: coefficient of variation of the norms ‖μ_c − μ_G‖;
    - ``equiangularity``: mean over c ≠ c' of |cos(μ_c − μ_G, μ_c' − μ_G) + 1/(C−1)|;
    - ``etf_distance``: ‖G − G_ETF‖_F / ‖G_ETF‖_F for the Gram matrix G of the normalized
      centred means (their cosines) and that of a simplex ETF;
    - ``nc3`` = ‖Ẇ/‖Ẇ‖_F − M/‖M‖_F‖²_F (self-duality of classifier and means), with Ẇ the
      classifier minus its mean row: a vector added to every row shifts all logits of an
      example equally and changes no decision, and without it a bias-free head (whose rows
      form an orthogonal frame, Dang et al. 2023) would never look self-dual;
    - ``nc4``: fraction of examples where the network's argmax differs from the nearest class
      centre (the NCC classifier).

    Every value is 0 at exact collapse onto a simplex ETF and none depends on the scale of the
    features (``nc4`` only through the bias, which scales with them). All work is on the
    device in float64; nothing syncs with the host.
    """
    if weight.ndim != 2:
        raise ValueError(f"weight must be a [C, d] matrix, got shape {tuple(weight.shape)}")
    C = int(n_classes or weight.shape[0])
    _check_inputs(features, labels, C)
    if weight.shape != (C, features.shape[-1]):
        raise ValueError(f"weight has shape {tuple(weight.shape)}, expected [{C}, {features.shape[-1]}] "
                         "(classes x feature dimension)")
    means, counts = class_means(features, labels, C)
    dtype = means.dtype
    h = features.to(dtype)
    N = len(h)
    mu_g = h.mean(0)
    M = means - mu_g
    # NC1: tr(Σ_W Σ_B⁺) = Σ_k (v_kᵀ Σ_W v_k) / (s_k²/C) over the right singular vectors of M
    _, S, Vh = torch.linalg.svd(M, full_matrices=False)
    rank = min(C - 1, h.shape[1])
    S, Vh = S[:rank], Vh[:rank]
    keep = S > S[0] * 1e-10
    within = (h - means[labels]) @ Vh.T  # [N, rank]: the within-class deviations that Σ_B⁺ sees
    ratio = within.pow(2).sum(0) / N / (S.pow(2) / C).clamp_min(1e-300)
    nc1 = torch.where(keep, ratio, torch.zeros_like(ratio)).sum() / C
    nc1 = torch.where(S[0] > 0, nc1, torch.full_like(nc1, float("nan")))  # all means equal: undefined
    # NC2
    norms = M.norm(dim=1)
    equinorm = norms.std(unbiased=False) / norms.mean()
    cos = cosine_gram(means)
    off = ~torch.eye(C, dtype=torch.bool, device=h.device)
    equiangularity = (cos[off] + 1.0 / (C - 1)).abs().mean()
    target = etf_gram(C, dtype, h.device)
    etf_distance = (cos - target).norm() / target.norm()
    # NC3
    W = weight.to(dtype)
    Wc = W - W.mean(0)
    nc3 = (Wc / Wc.norm() - M / M.norm()).norm().pow(2)
    # NC4
    logits = h @ W.T + (0 if bias is None else bias.to(dtype))
    nearest = torch.cdist(h, means).argmin(1)
    nc4 = (logits.argmax(1) != nearest).to(dtype).mean()
    return dict(nc1=nc1, equinorm=equinorm, equiangularity=equiangularity,
                etf_distance=etf_distance, nc3=nc3, nc4=nc4)


def balancedness(weights: list[torch.Tensor]) -> torch.Tensor:
    """How far consecutive linear layers are from balance, the largest over pairs of
    ‖W_{l+1}ᵀW_{l+1} − W_l W_lᵀ‖_F / ½(‖W_{l+1}ᵀW_{l+1}‖_F + ‖W_l W_lᵀ‖_F).

    Gradient flow on a linear chain conserves W_{l+1}ᵀW_{l+1} − W_l W_lᵀ; weight decay makes it
    decay exponentially, and a balanced linear part is what lets low training error force NC1
    (Jacot et al. 2025). ``weights`` are in forward order (first linear layer first, head last).
    """
    if len(weights) < 2:
        raise ValueError("balancedness needs at least two consecutive linear layers")
    worst = None
    for a, b in zip(weights[:-1], weights[1:]):
        if a.shape[0] != b.shape[1]:
            raise ValueError(f"layers of shapes {tuple(a.shape)} and {tuple(b.shape)} do not chain")
        a, b = a.double(), b.double()
        out_gram, in_gram = b.T @ b, a @ a.T
        gap = (out_gram - in_gram).norm() / (0.5 * (out_gram.norm() + in_gram.norm())).clamp_min(1e-300)
        worst = gap if worst is None else torch.maximum(worst, gap)
    return worst


def conditioning(features: torch.Tensor, k: int) -> torch.Tensor:
    """s_1 / s_k of the feature matrix [N, d]: the spread of the top ``k`` singular values.

    Jacot et al. (2025) need the features entering the linear part to be well conditioned
    (a bounded ratio of largest to smallest non-zero singular value) for the class means to
    become orthogonal. A deep linear head of a C-class problem can use only C directions, so
    we report the ratio over the top C singular values.
    """
    if features.ndim != 2 or k < 1 or k > min(features.shape):
        raise ValueError(f"conditioning needs a [N, d] matrix with k <= min(N, d), got "
                         f"{tuple(features.shape)} and k={k}")
    s = torch.linalg.svdvals(features.to(_float_dtype(features.device)))
    return s[0] / s[k - 1].clamp_min(1e-300)


def _features(model: nn.Module, x: torch.Tensor, fn=None, chunk: int = 8192) -> torch.Tensor:
    fn = fn or model.features
    return torch.cat([fn(x[i:i + chunk]) for i in range(0, len(x), chunk)])


@torch.no_grad()
def measure(model: nn.Module, x: torch.Tensor, y: torch.Tensor, n_classes: int | None = None,
            conditions: bool = False) -> dict:
    """All collapse metrics of ``model`` on (x, y): one pass of ``model.features`` over x,
    the metrics on the device, one transfer of the results. With ``conditions`` also
    :func:`balancedness` and :func:`conditioning` (models with a linear part only). Values
    are NaN when the features are not finite (a diverged run)."""
    was_training = model.training
    model.eval()
    try:
        h = _features(model, x)
        C = int(n_classes or model.head.weight.shape[0])
        finite = torch.isfinite(h).all()
        if not bool(finite):
            keys = METRICS + (CONDITIONS if conditions else ())
            return {k: float("nan") for k in keys}
        out = nc_metrics(h, y, model.head.weight, model.head.bias, C)
        if conditions:
            out["balancedness"] = balancedness(linear_weights(model))
            out["conditioning"] = conditioning(_features(model, x, model.body_features), C)
        keys = list(out)
        values = torch.stack([out[k].to(torch.float64) for k in keys]).tolist()
        return dict(zip(keys, values))
    finally:
        model.train(was_training)


class Recorder:
    """Collapse metrics for :func:`dynamics.train.train`'s ``metrics`` hook, all computed in
    one pass per evaluation (the first metric computes, the others read the cache).

    With ``snapshots=True`` it also keeps, at each evaluation, the centred class means, the
    classifier and a few examples' features (for the 3-D pictures of section 2).
    """

    def __init__(self, conditions: bool = False, snapshots: bool = False, n_points: int = 12):
        self.keys = METRICS + (CONDITIONS if conditions else ())
        self.conditions = conditions
        self.snapshots = [] if snapshots else None
        self.n_points = n_points
        self.model = None  # the trained model, set by the runners
        self._cache = {}

    def _compute(self, model, data):
        self._cache = measure(model, data.x_train, data.y_train, data.n_classes, self.conditions)
        if self.snapshots is not None:
            self.snapshots.append(snapshot(model, data, self.n_points))
        return self._cache[self.keys[0]]

    def metrics(self) -> dict:
        fns = {self.keys[0]: self._compute}
        for k in self.keys[1:]:
            fns[k] = lambda model, data, k=k: self._cache[k]
        return fns


@torch.no_grad()
def snapshot(model: nn.Module, data: D.Dataset, n_points: int = 12) -> dict:
    """Centred class means, classifier rows and the features of the first ``n_points``
    examples of each class, as CPU float64 tensors (for :func:`project_3d`)."""
    was_training = model.training
    model.eval()
    h = _features(model, data.x_train).double()
    model.train(was_training)
    means, _ = class_means(h, data.y_train, data.n_classes)
    mu_g = h.mean(0)
    idx = torch.cat([torch.nonzero(data.y_train == c).flatten()[:n_points]
                     for c in range(data.n_classes)])
    return dict(means=(means - mu_g).cpu(), weight=model.head.weight.detach().double().cpu(),
                points=(h[idx] - mu_g).cpu(), point_labels=data.y_train[idx].cpu())


# ============================================================================ the models


class CollapseNet(nn.Module):
    """``depth`` ReLU layers of ``width`` units (the *body*), then a *linear part* of
    ``linear_depth`` bias-free linear layers, the last of which is ``head``.

    ``features(x)`` is the input of ``head`` (what neural collapse is about);
    ``body_features(x)`` the input of the linear part (whose conditioning Jacot et al. need).
    """

    def __init__(self, in_dim: int, width: int = 128, depth: int = 2, linear_depth: int = 2,
                 n_classes: int = 10):
        super().__init__()
        for name, value, low in (("in_dim", in_dim, 1), ("width", width, 1), ("depth", depth, 1),
                                 ("linear_depth", linear_depth, 1), ("n_classes", n_classes, 2)):
            if int(value) < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value}")
        dims = [in_dim] + [width] * depth
        self.body = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.linear = nn.ModuleList(nn.Linear(width, width, bias=False) for _ in range(linear_depth - 1))
        self.head = nn.Linear(width, n_classes, bias=False)

    def body_features(self, x: torch.Tensor) -> torch.Tensor:
        h = x.flatten(1)
        for layer in self.body:
            h = torch.relu(layer(h))
        return h

    def features(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body_features(x)
        for layer in self.linear:
            h = layer(h)
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class UnconstrainedFeatures(nn.Module):
    """The unconstrained features model: one free feature vector per training example, then
    ``linear_depth`` bias-free linear layers (the last is ``head``). Inputs are example indices.

    The features are stored as z with h = √N·z. Trained with one learning rate and weight
    decay λ on every parameter, this minimizes (1/N)Σ_i ½‖W_L⋯W_1 h_i − e_{y_i}‖² +
    (λ/2)(Σ_l ‖W_l‖² + ‖H‖²/N): the usual normalized model, with every feature moving at the
    speed of the weights.
    """

    def __init__(self, n: int, dim: int, n_classes: int, linear_depth: int = 1,
                 init_std: float = 0.3):
        super().__init__()
        if n < n_classes or dim < 1 or linear_depth < 1:
            raise ValueError(f"need n >= n_classes, dim >= 1 and linear_depth >= 1, got "
                             f"n={n}, dim={dim}, linear_depth={linear_depth}")
        self.scale = math.sqrt(n)
        self.z = nn.Parameter(torch.randn(n, dim) * init_std / self.scale)
        self.linear = nn.ModuleList(nn.Linear(dim, dim, bias=False) for _ in range(linear_depth - 1))
        self.head = nn.Linear(dim, n_classes, bias=False)

    def body_features(self, idx: torch.Tensor) -> torch.Tensor:
        return self.z[idx] * self.scale

    def features(self, idx: torch.Tensor) -> torch.Tensor:
        h = self.body_features(idx)
        for layer in self.linear:
            h = layer(h)
        return h

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(idx))


def linear_weights(model: nn.Module) -> list[torch.Tensor]:
    """The weight matrices of a model's linear part, in forward order (head last)."""
    return [layer.weight for layer in getattr(model, "linear", [])] + [model.head.weight]


def ufm_data(counts, device=None) -> D.Dataset:
    """Indices 0..N−1 labelled by class (``counts[c]`` examples of class c), the "dataset" of
    the unconstrained features model (its test set is its training set)."""
    counts = [int(c) for c in counts]
    if len(counts) < 2 or min(counts) < 1:
        raise ValueError(f"counts must give at least one example for each of >= 2 classes, got {counts}")
    device = get_device(device)
    y = torch.cat([torch.full((c,), k) for k, c in enumerate(counts)]).to(device)
    x = torch.arange(len(y), device=device)
    return D.Dataset(x, y, x, y, len(counts), name="unconstrained features",
                     info=dict(counts=counts))


# ============================================================================ experiments


@dataclass
class CollapseConfig(Config):
    """A network trained far past zero training error (sections 1 to 3)."""

    dataset: str = param("digits", "training data (mnist/cifar10 fall back to MNIST-1D offline)",
                         choices=("digits", "mnist1d", "gaussian", "mnist", "cifar10"), gpu="mnist")
    n_classes: int = param(10, "classes kept (the first C labels)", low=2, high=10)
    n_train: int = param(1200, "training examples (balanced over classes)", low=10, high=60000,
                         smoke=500, gpu=10000)
    width: int = param(128, "width of the hidden and linear layers", low=4, high=4096,
                       smoke=64, gpu=1024)
    depth: int = param(2, "ReLU layers before the linear part", low=1, high=8, gpu=3)
    linear_depth: int = param(2, "linear layers at the end, head included", low=1, high=6)
    loss: str = param("mse", "training loss", choices=("mse", "cross_entropy"))
    optimizer: str = param("adamw", "optimizer (full batch)", choices=("adamw", "sgd", "momentum"))
    lr: float = param(3e-3, "peak learning rate (cosine decay to 1%)", low=1e-5, high=1.0, log=True)
    weight_decay: float = param(1.0, "weight decay (decoupled for AdamW)", low=0.0, high=10.0)
    steps: int = param(4000, "full-batch steps", low=10, high=10**6, smoke=1200, gpu=20000)
    n_evals: int = param(40, "evaluations, log-spaced in steps", low=5, high=400, smoke=24)
    gd_lr: float = param(0.1, "learning rate of the gradient-descent (momentum) runs of section 3",
                         low=1e-4, high=1.0, log=True)
    gd_weight_decay: float = param(2e-3, "weight decay of the gradient-descent runs of section 3",
                                   low=0.0, high=0.1)


@dataclass
class UFMConfig(Config):
    """The unconstrained features model trained by gradient descent (section 3)."""

    n_classes: int = param(4, "classes", low=2, high=20)
    per_class: int = param(50, "examples per class", low=1, high=10000, smoke=25)
    dim: int = param(16, "feature dimension", low=2, high=1024)
    linear_depth: int = param(1, "linear layers after the features, head included", low=1, high=6)
    lr: float = param(0.5, "gradient-descent learning rate", low=1e-4, high=10.0, log=True)
    weight_decay: float = param(5e-3, "weight decay λ on features and weights", low=0.0, high=1.0)
    steps: int = param(3000, "gradient-descent steps", low=10, high=10**6, smoke=1500)
    n_evals: int = param(30, "evaluations, log-spaced in steps", low=5, high=400)


@dataclass
class ImbalanceConfig(Config):
    """Imbalanced classes, MSE loss, a deep linear head (section 4)."""

    n_classes: int = param(4, "classes", low=2, high=10)
    largest: int = param(200, "examples in the largest class", low=4, high=100000, smoke=160)
    ratio: float = param(10.0, "largest / smallest class count (geometric in between)",
                         low=1.0, high=100.0, log=True)
    dim: int = param(20, "input dimension of the Gaussian mixture", low=2, high=1000)
    separation: float = param(8.0, "distance between cluster means", low=0.5, high=20.0)
    width: int = param(64, "width of the ReLU layer and the linear part", low=4, high=4096)
    linear_depth: int = param(3, "linear layers at the end, head included", low=1, high=6)
    optimizer: str = param("momentum", "optimizer of the network (full batch)",
                           choices=("adamw", "sgd", "momentum"))
    lr: float = param(0.1, "learning rate (network)", low=1e-5, high=1.0, log=True)
    weight_decay: float = param(5e-3, "weight decay (network)", low=0.0, high=10.0)
    steps: int = param(4000, "full-batch steps (network)", low=10, high=10**6, smoke=800)
    ufm_lr: float = param(0.5, "gradient-descent learning rate (unconstrained features)",
                          low=1e-4, high=10.0, log=True)
    ufm_weight_decay: float = param(5e-3, "weight decay λ (unconstrained features)",
                                    low=1e-5, high=1.0, log=True)
    ufm_steps: int = param(4000, "gradient-descent steps (unconstrained features)",
                           low=10, high=10**6, smoke=1200)

    def counts(self) -> list[int]:
        C = self.n_classes
        return [max(1, int(round(self.largest * self.ratio ** (-k / (C - 1))))) for k in range(C)]


def cosine_schedule(steps: int, final: float = 0.01):
    """Learning-rate factor: cosine from 1 to ``final`` over ``steps`` (a long, slow terminal
    phase is what lets the geometry settle)."""
    return lambda s: final + (1 - final) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps))


def balanced_subset(ds: D.Dataset, n_classes: int, n_train: int | None = None) -> D.Dataset:
    """Keep the first ``n_classes`` labels and, per class, the first ``n_train // C`` training
    examples (fewer if a class has fewer)."""
    if not 2 <= n_classes <= ds.n_classes:
        raise ValueError(f"n_classes must lie in [2, {ds.n_classes}], got {n_classes}")

    def pick_rows(y, per):
        rows = [torch.nonzero(y == c).flatten()[:per] for c in range(n_classes)]
        return torch.sort(torch.cat(rows)).values

    per = None if n_train is None else max(1, n_train // n_classes)
    tr = pick_rows(ds.y_train, per)
    te = pick_rows(ds.y_test, None)
    return D.Dataset(ds.x_train[tr], ds.y_train[tr], ds.x_test[te], ds.y_test[te], n_classes,
                     ds.name, dict(ds.info, n_classes=n_classes))


def load_data(cfg: CollapseConfig, seed: int = 0) -> D.Dataset:
    """The dataset a config names, restricted to ``n_classes`` balanced classes. MNIST and
    CIFAR-10 need torchvision and internet; offline they fall back to MNIST-1D (said in
    ``data.info['fallback']``)."""
    C, n = cfg.n_classes, cfg.n_train
    name = cfg.dataset
    if name in ("mnist", "cifar10"):
        try:
            return balanced_subset(D.torchvision_dataset(name, n_test=2000), C, n)
        except RuntimeError as err:
            print(f"{name} unavailable ({str(err)[:80]}...); using MNIST-1D instead")
            name = "mnist1d"
    if name == "mnist1d":
        ds = D.mnist1d(n_train=max(2 * n, 1000), n_test=1000, seed=seed)
        if cfg.dataset != "mnist1d":
            ds.info["fallback"] = f"MNIST-1D instead of {cfg.dataset}"
    elif name == "gaussian":
        ds = D.gaussian_mixture(n_train=n, n_test=max(C, 500), dim=20, n_classes=C,
                                separation=4.0, seed=seed)
    else:
        ds = D.digits(seed=seed)
    return balanced_subset(ds, C, n)


def make_model(cfg: CollapseConfig, data: D.Dataset, seed: int = 0) -> CollapseNet:
    torch.manual_seed(seed)
    return CollapseNet(data.input_dim, cfg.width, cfg.depth, cfg.linear_depth,
                       data.n_classes).to(data.device)


@contextlib.contextmanager
def small_model_threads(device):
    """Train the chapter's small models on one CPU thread: their matrices are too small for
    intra-op parallelism to pay, and on a busy machine the extra thread spins (we measured
    several times the CPU seconds with two threads). The previous setting is restored."""
    if torch.device(device).type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def terminal_phase_start(history: History) -> int | None:
    """The first evaluated step with zero training error (None if never reached)."""
    return history.first_step("train_acc", above=1.0 - 1e-9)


def run_collapse(cfg: CollapseConfig, seed: int = 0, data: D.Dataset | None = None,
                 snapshots: bool = False, callbacks=(), progress=None) -> tuple[History, Recorder]:
    """Train one :class:`CollapseNet` far past zero training error, recording every collapse
    metric and the conditions of Jacot et al. (balancedness when ``linear_depth`` >= 2) at
    log-spaced steps. Returns ``(history, recorder)``; ``recorder.model`` is the trained
    model and ``recorder.snapshots`` holds the geometry when ``snapshots`` is set."""
    data = load_data(cfg, seed) if data is None else data
    model = make_model(cfg, data, seed)
    rec = Recorder(conditions=cfg.linear_depth >= 2, snapshots=snapshots)
    rec.model = model
    with small_model_threads(data.device):
        h = train(model, data, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr,
                  weight_decay=cfg.weight_decay, loss=cfg.loss,
                  eval_steps=log_steps(cfg.steps, cfg.n_evals), metrics=rec.metrics(),
                  lr_schedule=cosine_schedule(cfg.steps), seed=seed, callbacks=callbacks,
                  progress=progress, desc="terminal phase")
    h.info.update(config=cfg.to_dict(), seed=seed, dataset=data.name,
                  fallback=data.info.get("fallback"), zero_error_step=terminal_phase_start(h))
    return h, rec


def run_weight_decays(cfg: CollapseConfig, weight_decays, seed: int = 0,
                      data: D.Dataset | None = None, progress=None) -> list[History]:
    """The same network trained with each weight decay (one :func:`train_many` sweep: batched
    on a GPU, one after another on a CPU because the collapse metrics need each model)."""
    from .sweep import train_many

    data = load_data(cfg, seed) if data is None else data
    rec = Recorder(conditions=cfg.linear_depth >= 2)
    configs = [dict(weight_decay=float(wd), seed=seed) for wd in weight_decays]
    with small_model_threads(data.device):
        result = train_many(lambda c: CollapseNet(data.input_dim, cfg.width, cfg.depth,
                                                  cfg.linear_depth, data.n_classes),
                            data, configs, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr,
                            loss=cfg.loss, eval_steps=log_steps(cfg.steps, cfg.n_evals),
                            metrics=rec.metrics(), lr_schedule=cosine_schedule(cfg.steps),
                            progress=progress, seed=seed)
    for c, h in zip(configs, result.histories):
        h.info.update(config=cfg.replace(weight_decay=c["weight_decay"]).to_dict(), seed=seed,
                      dataset=data.name, zero_error_step=terminal_phase_start(h))
    return result.histories


def run_ufm(cfg: UFMConfig, seed: int = 0, counts=None, snapshots: bool = False,
            progress=None) -> tuple[History, Recorder]:
    """Gradient descent with weight decay on the unconstrained features model (MSE)."""
    counts = counts or [cfg.per_class] * cfg.n_classes
    data = ufm_data(counts)
    torch.manual_seed(seed)
    model = UnconstrainedFeatures(len(data.y_train), cfg.dim, cfg.n_classes,
                                  cfg.linear_depth).to(data.device)
    rec = Recorder(conditions=cfg.linear_depth >= 2, snapshots=snapshots)
    with small_model_threads(data.device):
        h = train(model, data, steps=cfg.steps, optimizer="sgd", lr=cfg.lr,
                  weight_decay=cfg.weight_decay, loss="mse",
                  eval_steps=log_steps(cfg.steps, cfg.n_evals), metrics=rec.metrics(),
                  seed=seed, progress=progress, eval_test=False, desc="unconstrained features")
    h.info.update(config=cfg.to_dict(), seed=seed, counts=list(counts),
                  zero_error_step=terminal_phase_start(h))
    return h, rec


def imbalanced_ufm_solution(counts, weight_decay: float, linear_depth: int = 1) -> dict:
    """Norms of the class means and classifier rows at the global minimum of the deep linear
    unconstrained features model of :class:`UnconstrainedFeatures` with MSE loss, bias-free,
    on classes of sizes ``counts``.

    Dang et al. (2023) prove that there the class means (and the classifier rows) are
    orthogonal with lengths set by the class counts. Given that structure the problem splits
    into one scalar problem per class: with s the singular value each of the L balanced layers
    gives class c, x the norm of its features and p = s^L x its output,
    minimize n_c/(2N)(p − 1)² + λ L s²/2 + λ n_c x²/(2N). Stationarity gives x = s √(N/n_c),
    which leaves a one-dimensional problem in s, solved numerically here. For small λ,
    s ∝ n_c^{1/(2(L+1))}: larger classes get longer classifier rows and *shorter* features.
    """
    from scipy.optimize import minimize_scalar

    n = np.asarray(counts, dtype=float)
    if n.ndim != 1 or len(n) < 2 or (n <= 0).any():
        raise ValueError(f"counts must be >= 2 positive class sizes, got {counts}")
    if weight_decay <= 0:
        raise ValueError("the regularized problem needs weight_decay > 0")
    N, L, lam = n.sum(), int(linear_depth), float(weight_decay)
    out = dict(classifier_norm=[], feature_norm=[], output=[])
    for nc in n:
        gain = math.sqrt(N / nc)

        def f(s):
            p = s ** (L + 1) * gain
            return nc / (2 * N) * (p - 1) ** 2 + lam * (L + 1) * s * s / 2

        grid = np.linspace(0.0, 1.5 * gain ** (-1 / (L + 1)), 400)
        s0 = grid[np.argmin([f(s) for s in grid])]
        step = grid[1]
        best = minimize_scalar(f, bounds=(max(0.0, s0 - step), s0 + step), method="bounded",
                               options=dict(xatol=1e-12))
        s = best.x if best.fun < f(0.0) else 0.0
        out["classifier_norm"].append(s)
        out["feature_norm"].append(s ** L * gain)  # the input of the head: W_{L-1}..W_1 h
        out["output"].append(s ** (L + 1) * gain)
    return {k: np.asarray(v) for k, v in out.items()}


def mean_geometry(model: nn.Module, data: D.Dataset) -> dict:
    """Uncentred class means of the features: their norms, the classifier's row norms and
    the angles (degrees) between the means."""
    with torch.no_grad():
        h = _features(model.eval(), data.x_train)
    means, counts = class_means(h, data.y_train, data.n_classes)
    cos = cosine_gram(means, centre=False).clamp(-1, 1)
    return dict(counts=counts.cpu().numpy(), feature_norm=means.norm(dim=1).cpu().numpy(),
                classifier_norm=model.head.weight.detach().double().norm(dim=1).cpu().numpy(),
                angles=torch.rad2deg(torch.arccos(cos)).cpu().numpy())


def run_imbalance(cfg: ImbalanceConfig, seed: int = 0, progress=None) -> dict:
    """Imbalanced classes, MSE loss, a deep linear head: the unconstrained features model
    (gradient descent with weight decay, next to its exact solution) and a ReLU network on an
    imbalanced Gaussian mixture (AdamW). Returns the geometry of both."""
    with small_model_threads(get_device()):
        return _run_imbalance(cfg, seed, progress)


def _run_imbalance(cfg: ImbalanceConfig, seed: int, progress) -> dict:
    counts = cfg.counts()
    C = cfg.n_classes
    out = dict(counts=counts)
    # the unconstrained features model and its solution
    ucfg = UFMConfig(n_classes=C, dim=max(2 * C, 8), linear_depth=cfg.linear_depth, lr=cfg.ufm_lr,
                     weight_decay=cfg.ufm_weight_decay, steps=cfg.ufm_steps, n_evals=20)
    torch.manual_seed(seed)
    data = ufm_data(counts)
    model = UnconstrainedFeatures(len(data.y_train), ucfg.dim, C, ucfg.linear_depth).to(data.device)
    h = train(model, data, steps=ucfg.steps, optimizer="sgd", lr=ucfg.lr,
              weight_decay=ucfg.weight_decay, loss="mse", eval_steps=[ucfg.steps], seed=seed,
              progress=progress, eval_test=False, desc="unconstrained features")
    out["ufm"] = dict(mean_geometry(model, data), status=h.status, train_loss=h.last("train_loss"))
    out["theory"] = imbalanced_ufm_solution(counts, ucfg.weight_decay, ucfg.linear_depth)
    # a network
    data = D.gaussian_mixture(dim=cfg.dim, n_classes=C, separation=cfg.separation, seed=seed,
                              counts=counts, n_test=100 * C)
    torch.manual_seed(seed)
    net = CollapseNet(data.input_dim, cfg.width, 1, cfg.linear_depth, C).to(data.device)
    h = train(net, data, steps=cfg.steps, optimizer=cfg.optimizer, lr=cfg.lr,
              weight_decay=cfg.weight_decay, loss="mse", eval_steps=[cfg.steps],
              lr_schedule=cosine_schedule(cfg.steps), seed=seed, progress=progress,
              desc="imbalanced network")
    out["network"] = dict(mean_geometry(net, data), status=h.status, train_acc=h.last("train_acc"),
                          train_loss=h.last("train_loss"))
    return out


def run_conditions(cfg: CollapseConfig, seed: int = 0, data: D.Dataset | None = None,
                   done: dict | None = None, progress=None) -> dict:
    """Section 3: the network of section 1 with and without weight decay, under AdamW and
    under gradient descent with momentum (the setting of Jacot et al.). ``done`` passes runs
    already trained (``{name: history}``) so they are not trained twice."""
    data = load_data(cfg, seed) if data is None else data
    variants = {
        "AdamW, weight decay": dict(weight_decay=cfg.weight_decay),
        "AdamW, none": dict(weight_decay=0.0),
        "GD, weight decay": dict(optimizer="momentum", lr=cfg.gd_lr, weight_decay=cfg.gd_weight_decay),
        "GD, none": dict(optimizer="momentum", lr=cfg.gd_lr, weight_decay=0.0),
    }
    runs = dict(done or {})
    for name, changes in variants.items():
        if name not in runs:
            runs[name], _ = run_collapse(cfg.replace(**changes), seed, data, progress=progress)
    return {name: runs[name] for name in variants}


def run_ufm_pair(cfg: UFMConfig, seed: int = 0, progress=None) -> dict:
    """The unconstrained features model with weight decay ``cfg.weight_decay`` and without."""
    return {f"λ = {wd:g}": run_ufm(cfg.replace(weight_decay=wd), seed, progress=progress)[0]
            for wd in (cfg.weight_decay, 0.0)}


# ============================================================================ 3-D geometry


def _procrustes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The orthogonal R minimizing ‖a R − b‖_F."""
    u, _, vt = np.linalg.svd(a.T @ b)
    return u @ vt


def project_3d(snapshots: list[dict]) -> list[dict]:
    """Each snapshot's centred class means, (centred) classifier rows and example features in
    3-D: the top three right singular vectors of that snapshot's class means, rotated to match
    the last snapshot (orthogonal Procrustes) and scaled so the mean class-mean norm is 1.
    Classifier rows are scaled the same way on their own. The last frame also gets the
    simplex ETF closest to its means (``etf``)."""
    if not snapshots:
        raise ValueError("no snapshots to project")
    frames = []
    for snap in snapshots:
        M = snap["means"].numpy()
        _, _, vt = np.linalg.svd(M, full_matrices=True)
        basis = vt[:3].T if vt.shape[0] >= 3 else np.pad(vt.T, ((0, 0), (0, 3 - vt.shape[0])))
        W = snap["weight"].numpy()
        W = W - W.mean(0)
        frames.append(dict(means=M @ basis, weight=W @ basis, points=snap["points"].numpy() @ basis,
                           labels=snap["point_labels"].numpy()))
    target = frames[-1]["means"]
    for f in frames:
        R = _procrustes(f["means"], target)
        scale = np.linalg.norm(f["means"], axis=1).mean() or 1.0
        wscale = np.linalg.norm(f["weight"], axis=1).mean() or 1.0
        f["means"], f["points"] = f["means"] @ R / scale, f["points"] @ R / scale
        f["weight"] = f["weight"] @ R / wscale
    C = len(target)
    etf = simplex_etf(C, 3).numpy()
    last = frames[-1]["means"]
    frames[-1]["etf"] = etf @ _procrustes(etf, last)
    for f in frames:
        f["etf"] = frames[-1]["etf"]
    return frames


# ============================================================================ figures


def _subplots(rows: int, cols: int, titles, height: int = 680):
    """A grid of panels in the house style, legend below (book pages are narrow)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=rows, cols=cols, subplot_titles=list(titles),
                        horizontal_spacing=0.12, vertical_spacing=0.16)
    fig.update_layout(template="plotly_white+dynamics", height=height, hovermode="closest",
                      margin=dict(l=50, r=20, t=70, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.12 if rows > 1 else -0.3, x=0))
    return fig


def _slider(figs, labels, name: str, below: float = -0.3):
    """:func:`plots.slider`, with the slider moved below the legend (at ``below``, in
    fractions of the plot height)."""
    fig = plots.slider(figs, labels, name=name)
    fig.layout.sliders[0].update(y=below, yanchor="top", pad=dict(t=0))
    fig.update_layout(height=fig.layout.height + 80, margin=dict(b=190))
    return fig


def _positive(steps, values):
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    keep = np.isfinite(values) & (steps > 0)
    return steps[keep], values[keep]


def _add_marker(fig, step, rows_cols, ranges):
    """A dotted vertical line (a trace, so it works on log axes) at ``step`` in each panel."""
    if step is None:
        return
    for (r, c), (lo, hi) in zip(rows_cols, ranges):
        fig.add_scatter(x=[step, step], y=[lo, hi], mode="lines", row=r, col=c, showlegend=False,
                        line=dict(color="#777", dash="dot", width=1), hoverinfo="skip")


def nc_figure(history: History, title: str = "") -> "go.Figure":
    """NC1–NC4 against step (log axes), the first zero-training-error step dotted."""
    fig = _subplots(2, 2, ["NC1", "NC2", "NC3", "NC4 (% of examples)"], height=720)
    panels = {(1, 1): ["nc1"], (1, 2): ["etf_distance", "equiangularity", "equinorm"],
              (2, 1): ["nc3"], (2, 2): ["nc4"]}
    colors = dict(nc1=0, etf_distance=1, equiangularity=2, equinorm=3, nc3=4, nc4=5)
    ranges = []
    for (r, c), keys in panels.items():
        lo, hi = np.inf, -np.inf
        for k in keys:
            if k not in history:
                continue
            scale = 100.0 if k == "nc4" else 1.0
            x, y = _positive(history.steps, history[k] * scale)
            if k != "nc4":
                x, y = x[y > 0], y[y > 0]
            if len(y):
                lo, hi = min(lo, y.min()), max(hi, y.max())
            fig.add_scatter(x=x, y=y, mode="lines+markers", marker=dict(size=4), row=r, col=c,
                            name=LABELS[k], line=dict(color=plots.PALETTE[colors[k]]))
        ranges.append((lo, hi) if np.isfinite(lo) else (0, 1))
    z = terminal_phase_start(history) if "train_acc" in history else None
    _add_marker(fig, z, list(panels), ranges)
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=2)
    for r, c in ((1, 1), (1, 2), (2, 1)):
        fig.update_yaxes(type="log", row=r, col=c)
    note = f" · zero training error from step {z} (dotted)" if z is not None else " · training error never reached 0"
    fig.update_layout(title=(title or "The four collapses") + note)
    return fig


def simplex_figure(frames: list[dict], steps: list[int], title: str = "") -> "go.Figure":
    """The class means (large dots, lines from the origin), classifier rows (diamonds, dashed)
    and some examples (small dots) in 3-D, with a slider over training time; the grey
    wireframe is the simplex ETF closest to the final means."""
    import plotly.graph_objects as go

    figs = []
    C = len(frames[-1]["means"])
    colors = [plots.PALETTE[c % len(plots.PALETTE)] for c in range(C)]
    edges = [(i, j) for i in range(C) for j in range(i + 1, C)]

    def segments(ends):  # origin -> each end, as one polyline broken by None
        xyz = [[], [], []]
        for e in ends:
            for p in ((0.0, 0.0, 0.0), e, (None, None, None)):
                for k in range(3):
                    xyz[k].append(p[k])
        return xyz

    for f, step in zip(frames, steps):
        fig = go.Figure()
        ex = [[], [], []]
        for i, j in edges:
            for p in (f["etf"][i], f["etf"][j], (None, None, None)):
                for k in range(3):
                    ex[k].append(p[k])
        fig.add_scatter3d(x=ex[0], y=ex[1], z=ex[2], mode="lines", name="simplex ETF",
                          line=dict(color="#999", width=2, dash="dash"), hoverinfo="skip")
        pts, lab = f["points"], np.asarray(f["labels"], int)
        fig.add_scatter3d(x=pts[:, 0], y=pts[:, 1], z=pts[:, 2], mode="markers", name="examples",
                          marker=dict(size=2.5, color=[colors[c] for c in lab], opacity=0.5))
        for c in range(C):
            m = f["means"][c]
            fig.add_scatter3d(x=[0, m[0]], y=[0, m[1]], z=[0, m[2]], mode="lines+markers",
                              marker=dict(size=[0, 7], color=colors[c]),
                              line=dict(color=colors[c], width=5), name=f"class {c} mean")
        w = segments(f["weight"])
        fig.add_scatter3d(x=w[0], y=w[1], z=w[2], mode="lines+markers", name="classifier rows",
                          line=dict(color="#444", width=2, dash="dash"),
                          marker=dict(size=[0, 5, 0] * C, symbol="diamond",
                                      color=[col for col in colors for _ in range(3)]))
        fig.update_layout(title=f"{title or 'Class means and classifier'} at step {step}")
        figs.append(fig)
    axis = dict(range=[-1.25, 1.25], showticklabels=False, title="")
    figs[0].update_layout(height=560, margin=dict(l=0, r=0, t=50, b=0), hovermode="closest",
                          scene=dict(xaxis=axis, yaxis=axis, zaxis=axis, aspectmode="cube",
                                     camera=dict(eye=dict(x=1.3, y=1.3, z=0.8))),
                          legend=dict(x=0, y=1))
    return plots.slider(figs, [str(s) for s in steps], name="step")


def gram_figure(snapshot_: dict) -> "go.Figure":
    """Cosines between the centred class means at the end of training, beside a simplex ETF's."""
    means = torch.as_tensor(np.asarray(snapshot_["means"]), dtype=torch.float64)
    C = len(means)
    cos = cosine_gram(means, centre=False).numpy()  # snapshot means are already centred
    fig = _subplots(1, 2, ["measured cosines", "simplex ETF"], height=400)
    labels = [f"class {c}" for c in range(C)]
    for k, z in enumerate((cos, etf_gram(C).numpy())):
        fig.add_heatmap(z=z, x=labels, y=labels, zmin=-1, zmax=1, colorscale="RdBu_r",
                        texttemplate="%{z:.2f}", showscale=k == 1, row=1, col=k + 1)
    fig.update_yaxes(autorange="reversed")
    return fig


def conditions_figure(runs: dict, title: str = "") -> "go.Figure":
    """Jacot et al.'s conditions and NC1 against step, for several runs (one colour each)."""
    fig = _subplots(2, 2, ["training loss (dot: zero error)", "balancedness",
                           "conditioning s₁/s_C", "NC1"], height=720)
    panels = {(1, 1): "train_loss", (1, 2): "balancedness", (2, 1): "conditioning", (2, 2): "nc1"}
    for i, (name, h) in enumerate(runs.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        for (r, c), key in panels.items():
            if key not in h:
                continue
            x, y = _positive(h.steps, h[key])
            fig.add_scatter(x=x, y=y, mode="lines", row=r, col=c, legendgroup=name,
                            name=name + (" (diverged)" if h.diverged else ""),
                            showlegend=(r, c) == (2, 2), line=dict(color=color))
        z = terminal_phase_start(h) if len(h) else None
        if z is not None:
            fig.add_scatter(x=[z], y=[h["train_loss"][h.steps.index(z)]], mode="markers", row=1,
                            col=1, legendgroup=name, showlegend=False,
                            marker=dict(color=color, size=8), hoverinfo="x")
    fig.update_xaxes(type="log")
    fig.update_xaxes(title_text="step", row=2)
    fig.update_yaxes(type="log")
    fig.update_layout(title=title or "The conditions of Jacot et al., with and without weight decay")
    return fig


def ufm_figure(runs: dict, title: str = "") -> "go.Figure":
    """NC1, distance to the ETF and balancedness of the unconstrained features model."""
    keys = [k for k in ("nc1", "etf_distance", "balancedness") if all(k in h for h in runs.values())]
    short = dict(nc1="NC1", etf_distance="distance to ETF", balancedness="balancedness")
    fig = _subplots(1, len(keys), [short[k] for k in keys], height=420)
    for i, (name, h) in enumerate(runs.items()):
        for j, k in enumerate(keys):
            x, y = _positive(h.steps, h[k])
            fig.add_scatter(x=x[y > 0], y=y[y > 0], mode="lines", row=1, col=j + 1, name=name,
                            legendgroup=name, showlegend=j == 0,
                            line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_xaxes(type="log", title_text="gradient-descent step")
    fig.update_yaxes(type="log")
    fig.update_layout(title=title or "Unconstrained features: collapse in seconds, with weight decay")
    return fig


def imbalance_figure(result: dict, title: str = "") -> "go.Figure":
    """Left: norms of class means and classifier rows against class count (each series
    divided by its geometric mean, so shapes compare): the unconstrained features model, its
    exact solution and the network. Right: angles between the network's class means."""
    counts = np.asarray(result["counts"], float)
    C = len(counts)
    fig = _subplots(1, 2, ["norms ÷ their geometric mean", "network: angles (°)"], height=520)

    def rel(v):
        v = np.asarray(v, float)
        return v / np.exp(np.mean(np.log(np.maximum(v, 1e-12))))

    series = [("theory", "feature_norm", "features: theory", "lines", 0),
              ("ufm", "feature_norm", "features: unconstrained model", "markers", 0),
              ("network", "feature_norm", "features: network", "markers", 0),
              ("theory", "classifier_norm", "classifier: theory", "lines", 1),
              ("ufm", "classifier_norm", "classifier: unconstrained model", "markers", 1),
              ("network", "classifier_norm", "classifier: network", "markers", 1)]
    for source, key, name, mode, color in series:
        open_marker = source == "network"
        fig.add_scatter(x=counts, y=rel(result[source][key]), mode=mode, name=name, row=1, col=1,
                        line=dict(color=plots.PALETTE[color], dash="solid"),
                        marker=dict(size=10 if open_marker else 8, color=plots.PALETTE[color],
                                    symbol="circle-open" if open_marker else "circle"))
    fig.update_xaxes(type="log", title_text="examples in the class", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    labels = [f"n={int(n)}" for n in counts]
    angles = np.asarray(result["network"]["angles"], float) + np.diag([np.nan] * C)
    fig.add_heatmap(z=angles, x=labels, y=labels, zmin=0, zmax=180,
                    colorscale="RdBu_r", texttemplate="%{z:.0f}", row=1, col=2, showscale=False)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_layout(title=title or f"Imbalanced classes (counts {', '.join(str(int(n)) for n in counts)})")
    return fig


# ============================================================================ live panels

WEIGHT_DECAYS = (0.0, 0.01, 0.1, 0.3, 1.0, 3.0)


def _report(update, history: History) -> None:
    if history.diverged:
        update(status=history.status)
    elif terminal_phase_start(history) is None:
        update(status="done: training error never reached 0 (no terminal phase)")


def collapse_panel(profile: str | None = None):
    """Section 1: train the network live and watch NC1–NC4 (weight decay, learning rate,
    loss, steps)."""
    from .widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)

    def run(update, weight_decay, lr, loss, steps):
        cfg = base.replace(weight_decay=float(weight_decay), lr=float(lr), loss=loss, steps=int(steps))
        h, _ = run_collapse(cfg, callbacks=[update.every(nc_figure, total_steps=cfg.steps)])
        _report(update, h)
        return nc_figure(h)

    controls = [Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                *controls_for(base, ["lr", "loss"]),
                Slider("steps", 100, 20000, base.steps, step=100, integer=True)]
    return Panel(run, controls, title="Try it: the terminal phase")


def simplex_panel(profile: str | None = None):
    """Section 2: the 3-D geometry for 3 or 4 classes (weight decay, steps)."""
    from .widgets import Choice, Panel, Slider

    base = CollapseConfig.for_profile(profile, n_classes=4)

    def run(update, n_classes, weight_decay, steps):
        cfg = base.replace(n_classes=int(n_classes), weight_decay=float(weight_decay), steps=int(steps))
        h, rec = run_collapse(cfg, snapshots=True,
                              callbacks=[update.every(lambda h: nc_figure(h), total_steps=cfg.steps)])
        _report(update, h)
        if h.diverged:
            return nc_figure(h)
        return simplex_figure(*simplex_frames(h, rec))

    controls = [Choice("n_classes", (3, 4), 4, "classes"),
                Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                Slider("steps", 100, 20000, base.steps, step=100, integer=True)]
    return Panel(run, controls, title="Try it: watch the simplex form")


def conditions_panel(profile: str | None = None):
    """Section 3: Jacot et al.'s conditions for one run (weight decay, width, depth of the
    linear part, learning rate, optimizer)."""
    from .widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)

    def run(update, optimizer, weight_decay, width, linear_depth, lr):
        cfg = base.replace(optimizer=optimizer, weight_decay=float(weight_decay), width=int(width),
                           linear_depth=int(linear_depth), lr=float(lr))
        name = f"{optimizer}, wd {weight_decay:g}"
        h, _ = run_collapse(cfg, callbacks=[update.every(lambda h: conditions_figure({name: h}),
                                                         total_steps=cfg.steps)])
        _report(update, h)
        return conditions_figure({name: h})

    controls = [Choice("optimizer", ("adamw", "momentum", "sgd"), base.optimizer),
                Choice("weight_decay", (0.0, 1e-3, 2e-3, 5e-3) + WEIGHT_DECAYS[1:], base.weight_decay,
                       "weight decay"),
                Slider("width", 8, 512, base.width, step=8, integer=True),
                *controls_for(base, ["linear_depth", "lr"])]
    return Panel(run, controls, title="Try it: what weight decay does to the linear part")


def imbalance_panel(profile: str | None = None):
    """Section 4: imbalanced classes (ratio, depth of the linear part, weight decay)."""
    from .widgets import Panel, controls_for

    base = ImbalanceConfig.for_profile(profile)

    def run(update, ratio, linear_depth, weight_decay, ufm_weight_decay):
        cfg = base.replace(ratio=float(ratio), linear_depth=int(linear_depth),
                           weight_decay=float(weight_decay), ufm_weight_decay=float(ufm_weight_decay))
        result = run_imbalance(cfg)
        if result["network"]["status"] != "ok":
            update(status=f"network {result['network']['status']}")
        return imbalance_figure(result)

    controls = controls_for(base, ["ratio", "linear_depth", "weight_decay", "ufm_weight_decay"])
    return Panel(run, controls, title="Try it: imbalanced classes")


def simplex_frames(history: History, recorder: Recorder, n_frames: int = 10):
    """``(frames, steps)`` for :func:`simplex_figure`: about ``n_frames`` snapshots, log-spaced."""
    frames = project_3d(recorder.snapshots)
    idx = np.unique(np.round(np.geomspace(1, len(frames), n_frames)).astype(int) - 1)
    return [frames[i] for i in idx], [history.steps[i] for i in idx]


def imbalance_table(result: dict) -> list[dict]:
    """One row per class of a :func:`run_imbalance` result: count, norms measured in the
    unconstrained model, its exact solution, and the network (whose units differ: compare
    trends), and each network class mean's smallest angle to another."""
    C = len(result["counts"])
    angles = np.asarray(result["network"]["angles"], float) + np.diag([np.inf] * C)
    rows = []
    for c, n in enumerate(result["counts"]):
        u, t, net = result["ufm"], result["theory"], result["network"]
        rows.append({
            "class": c, "examples": int(n),
            "‖h̄_c‖ unconstrained / exact": f"{u['feature_norm'][c]:.4f} / {t['feature_norm'][c]:.4f}",
            "‖w_c‖ unconstrained / exact": f"{u['classifier_norm'][c]:.4f} / {t['classifier_norm'][c]:.4f}",
            "network ‖h̄_c‖, ‖w_c‖": f"{net['feature_norm'][c]:.3f}, {net['classifier_norm'][c]:.3f}",
            "network: nearest angle": f"{angles[c].min():.1f}°",
        })
    return rows


# ============================================================================ claims


def _at_zero_error(h: History, key: str) -> float:
    z = terminal_phase_start(h)
    return float("nan") if z is None else float(h[key][h.steps.index(z)])


def claims(collapse: History, conditions: dict, ufm: dict, imbalance: dict) -> list[dict]:
    """The papers' claims beside what this run measured (rows for :func:`plots.table`)."""
    h = collapse
    z = terminal_phase_start(h)
    T = h.steps[-1]
    nc1_z, nc1_T = _at_zero_error(h, "nc1"), h.last("nc1")
    rows = [
        dict(paper="Papyan, Han & Donoho (2020)",
             claim="NC1: within-class variability collapses in the terminal phase",
             measured=f"NC1 {nc1_z:.2g} at zero error (step {z}) → {nc1_T:.2g} at step {T}: "
                      f"{nc1_z / nc1_T:.0f}× lower"),
        dict(paper="Papyan, Han & Donoho (2020)",
             claim="NC2: centred class means approach a simplex ETF",
             measured=f"distance to the ETF {_at_zero_error(h, 'etf_distance'):.3f} → "
                      f"{h.last('etf_distance'):.3f}; equiangularity {h.last('equiangularity'):.3f}, "
                      f"equinorm CV {h.last('equinorm'):.3f}"),
        dict(paper="Papyan, Han & Donoho (2020)",
             claim="NC3: classifier rows align with the class means",
             measured=f"NC3 {_at_zero_error(h, 'nc3'):.3f} → {h.last('nc3'):.3f}"),
        dict(paper="Papyan, Han & Donoho (2020)",
             claim="NC4: the network decides like the nearest class centre",
             measured=f"{100 * h.last('nc4'):.2f}% of training examples disagree at the end"),
    ]
    c = conditions
    aw, an = c["AdamW, weight decay"], c["AdamW, none"]
    gw, gn = c["GD, weight decay"], c["GD, none"]
    rows += [
        dict(paper="Jacot et al. (2025)",
             claim="with weight decay, training reaches neural collapse (NC1)",
             measured=f"final NC1 with / without decay: AdamW {aw.last('nc1'):.2g} / {an.last('nc1'):.2g} "
                      f"({an.last('nc1') / aw.last('nc1'):.0f}× lower with decay); "
                      f"GD {gw.last('nc1'):.2g} / {gn.last('nc1'):.2g}"),
        dict(paper="Jacot et al. (2025)",
             claim="gradient descent with weight decay balances the linear layers "
                   "(Wₗ₊₁ᵀWₗ₊₁ ≈ WₗWₗᵀ)",
             measured=f"final balancedness with / without decay: GD {gw.last('balancedness'):.2g} / "
                      f"{gn.last('balancedness'):.2g}; AdamW {aw.last('balancedness'):.2g} / "
                      f"{an.last('balancedness'):.2g}"),
        dict(paper="Jacot et al. (2025)",
             claim="low training error and bounded conditioning of the features",
             measured=f"training error {1 - aw.last('train_acc'):.3g} (AdamW) and "
                      f"{1 - gw.last('train_acc'):.3g} (GD) with decay, MSE {aw.last('train_loss'):.1e} "
                      f"and {gw.last('train_loss'):.1e} (without: {an.last('train_loss'):.1e}, "
                      f"{gn.last('train_loss'):.1e}); s₁/s_C "
                      f"{aw.last('conditioning'):.2g} (AdamW), {gw.last('conditioning'):.2g} (GD)"),
    ]
    (wname, uw), (nname, un) = list(ufm.items())
    rows.append(dict(
        paper="Mixon, Parshall & Pi (2022); Dang et al. (2023)",
        claim="collapse emerges in the unconstrained features model; with weight decay its "
              "minima are exactly collapsed",
        measured=f"after {uw.steps[-1]} GD steps with {wname}: NC1 {uw.last('nc1'):.1e}, distance to "
                 f"ETF {uw.last('etf_distance'):.1e}; with {nname}: NC1 {un.last('nc1'):.1e}, "
                 f"distance {un.last('etf_distance'):.1e}"))
    counts = np.asarray(imbalance["counts"])
    off = ~np.eye(len(counts), dtype=bool)
    u, net, th = imbalance["ufm"], imbalance["network"], imbalance["theory"]
    ua, na = np.asarray(u["angles"])[off], np.asarray(net["angles"])[off]
    err = np.max(np.abs(np.asarray(u["feature_norm"]) / np.asarray(th["feature_norm"]) - 1))
    logn = np.log(counts)
    corr_w = np.corrcoef(logn, np.log(net["classifier_norm"]))[0, 1]
    corr_h = np.corrcoef(logn, np.log(net["feature_norm"]))[0, 1]
    rows.append(dict(
        paper="Dang et al. (2023)",
        claim="imbalanced classes, MSE, deep linear head: class means orthogonal, lengths set "
              "by class counts",
        measured=f"counts {', '.join(str(int(n)) for n in counts)}: unconstrained model angles "
                 f"{ua.min():.1f}–{ua.max():.1f}°, feature norms within a relative {err:.0e} of the "
                 f"exact solution; network angles {na.min():.0f}–{na.max():.0f}°, correlation of "
                 f"log count with log norm {corr_w:+.2f} (classifier rows), {corr_h:+.2f} (features; "
                 f"the exact solution: +1, −1)"))
    return rows


# ============================================================================ precomputed figures

PRECOMPUTED_WEIGHT_DECAYS = (0.0, 0.03, 0.1, 0.3, 1.0, 3.0)
PRECOMPUTED_GD_WEIGHT_DECAYS = (0.0, 5e-4, 1e-3, 2e-3, 5e-3)
PRECOMPUTED_RATIOS = (1.0, 3.0, 10.0, 30.0)
COMMAND = "python -m dynamics.precompute neural_collapse --profile {profile}"


def precompute(profile: str | None = None) -> list:
    """Write the static counterparts of the chapter's panels into ``data/collapse_*.json``."""
    profile = get_profile(profile)
    cmd = COMMAND.format(profile=profile)
    scale = {"smoke": "smoke scale", "cpu": "the largest scale a CPU affords in a few minutes",
             "gpu": "paper-like scale on a GPU"}[profile]
    paths = []
    cfg = CollapseConfig.for_profile(profile)
    data = load_data(cfg, 0)
    # section 1: the terminal phase for several weight decays (AdamW)
    start = time.perf_counter()
    hs = run_weight_decays(cfg, PRECOMPUTED_WEIGHT_DECAYS, 0, data)
    paths.append(results.save("collapse_weight_decay",
                              dict(weight_decays=list(PRECOMPUTED_WEIGHT_DECAYS), histories=hs),
                              profile, config=cfg, command=cmd, wall_time=time.perf_counter() - start,
                              note=f"{data.name}, AdamW; {scale}."))
    # section 3: gradient descent with several weight decays
    start = time.perf_counter()
    gd = cfg.replace(optimizer="momentum", lr=cfg.gd_lr)
    hs = run_weight_decays(gd, PRECOMPUTED_GD_WEIGHT_DECAYS, 0, data)
    paths.append(results.save("collapse_gd_weight_decay",
                              dict(weight_decays=list(PRECOMPUTED_GD_WEIGHT_DECAYS), histories=hs),
                              profile, config=gd, command=cmd, wall_time=time.perf_counter() - start,
                              note=f"{data.name}, gradient descent with momentum; {scale}."))
    # section 2: the simplex in 3-D
    start = time.perf_counter()
    c4 = CollapseConfig.for_profile(profile, n_classes=4)
    h, rec = run_collapse(c4, 0, snapshots=True)
    frames, steps = simplex_frames(h, rec, n_frames=14)
    frames = [{k: v for k, v in f.items() if k != "etf"} for f in frames[:-1]] + [frames[-1]]
    paths.append(results.save("collapse_simplex",
                              dict(frames=frames, steps=steps, history=h,
                                   final_means=rec.snapshots[-1]["means"]),
                              profile, config=c4, command=cmd, wall_time=time.perf_counter() - start,
                              note=f"{h.info['dataset']}, 4 classes; {scale}."))
    # section 4: imbalance ratios
    start = time.perf_counter()
    icfg = ImbalanceConfig.for_profile(profile)
    runs = [run_imbalance(icfg.replace(ratio=r), 0) for r in PRECOMPUTED_RATIOS]
    paths.append(results.save("collapse_imbalance", dict(ratios=list(PRECOMPUTED_RATIOS), runs=runs),
                              profile, config=icfg, command=cmd, wall_time=time.perf_counter() - start,
                              note=f"Gaussian mixture and unconstrained features; {scale}."))
    return paths


def weight_decay_slider(payload: dict) -> "go.Figure":
    """NC1–NC4 of the precomputed runs, one weight decay per slider position."""
    figs = [nc_figure(History.from_dict(h), title=f"Weight decay {wd:g}")
            for wd, h in zip(payload["weight_decays"], payload["histories"])]
    return _slider(figs, [f"{wd:g}" for wd in payload["weight_decays"]], name="weight decay")


def gd_slider(payload: dict) -> "go.Figure":
    """Conditions of Jacot et al. under gradient descent, each weight decay beside none."""
    hs = [History.from_dict(h) for h in payload["histories"]]
    none = hs[payload["weight_decays"].index(0.0)]
    figs = [conditions_figure({f"GD, weight decay {wd:g}": h, "GD, none": none},
                              title=f"Gradient descent, weight decay {wd:g} vs none")
            for wd, h in zip(payload["weight_decays"], hs)]
    return _slider(figs, [f"{wd:g}" for wd in payload["weight_decays"]], name="weight decay")


def simplex_from_payload(payload: dict) -> "go.Figure":
    """The precomputed 3-D slider of section 2."""
    last_etf = np.asarray(payload["frames"][-1]["etf"])
    frames = [dict({k: np.asarray(v) for k, v in f.items()}, etf=last_etf) for f in payload["frames"]]
    return simplex_figure(frames, payload["steps"])


def imbalance_slider(payload: dict) -> "go.Figure":
    """The geometry of section 4, one imbalance ratio per slider position."""
    figs = [imbalance_figure(r, title=f"Largest / smallest class = {ratio:g}")
            for ratio, r in zip(payload["ratios"], payload["runs"])]
    return _slider(figs, [f"{r:g}" for r in payload["ratios"]], name="imbalance ratio", below=-0.55)
