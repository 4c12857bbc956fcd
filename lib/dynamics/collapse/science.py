"""Neural collapse, the science: the measures, the conditions, the models, the theory.

Read top to bottom, this file is the whole of what the chapter computes:

1. **The four collapses** of Papyan, Han & Donoho (2020), each a small function with their
   definition (:func:`nc1`, :func:`nc2`, :func:`nc3`, :func:`nc4`), and :func:`nc_metrics`,
   which computes them all in one pass over the last-layer features.
2. **The conditions** under which Jacot et al. (2025) prove collapse for networks that end in
   linear layers: :func:`balancedness` of those layers and the :func:`conditioning` of the
   features that enter them.
3. **The models**: :class:`CollapseNet` (a ReLU body, then bias-free linear layers) and
   :class:`UnconstrainedFeatures` (the features are free parameters; Mixon et al. 2022,
   with a deep linear head as in Dang et al. 2023).
4. **The theory** the experiments are compared with: the simplex ETF, the value of NC3 at the
   collapse of a bias-free head, and the exact solution of the imbalanced deep linear model
   (in :mod:`.theory`, re-exported here).
5. **The data and the settings**: one :class:`~dynamics.config.Config` per experiment.

Everything here is torch/numpy/scipy; runners live in ``experiments.py``, figures in
``figures.py``, panels and claims in ``views.py``. Every measure works in the dtype of the
features it is given (float32 for the book's models, held to a float64 reference by the tests),
and factorizes only small matrices: C x C for the collapses (C classes), the smaller Gram
matrix for the conditioning.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn

from .. import data as D
from ..config import Config, param
from ..models import evaluating, layered
from ..runtime import dry_run, get_device, get_seed, seeded
from ..train import History
from .theory import (bias_free_nc3, collapse_weight_decay, etf_gram,  # noqa: F401
                     imbalanced_ufm_solution, minority_collapse_threshold,
                     simplex_etf)  # section 4, re-exported
from .theory import __all__ as _theory

__all__ = ["METRICS", "CONDITIONS", "class_means", "in_span_fraction", "nc1", "nc2", "nc3", "nc4", "nc_metrics",
           "orthogonality", "cosine_gram", "terminal_phase_start", "at_zero_error",
           "balancedness", "conditioning", "ACTIVATIONS", "CollapseNet", "UnconstrainedFeatures",
           "linear_weights", "measure", "mean_geometry", *_theory, "CollapseConfig", "UFMConfig",
           "ImbalanceConfig", "cosine_schedule", "balanced_subset", "load_data", "ufm_data",
           "make_model"]

METRICS = ("nc1", "equinorm", "equiangularity", "etf_distance", "nc3", "nc3_centred", "nc4",
           "orthogonality")
CONDITIONS = ("balancedness", "imbalance", "conditioning")


# ============================================================================ 1. the four collapses
# Notation. h_i in R^d: the features of training example i (the input of the last linear layer
# W in R^{C x d}); mu_c the mean of class c, mu_G the global mean; M the C x d matrix of centred
# class means mu_c - mu_G. At exact collapse onto a simplex ETF, NC1, NC2, NC4 and the centred
# variant of NC3 are 0, and NC3 itself too when the classifier is proportional to M.


def _dtype(t: torch.Tensor) -> torch.dtype:
    """float32 or float64: the features' own precision, never less than float32."""
    return torch.promote_types(t.dtype, torch.float32)


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
    """``(means [C, d], counts [C])``: the mean feature vector of each class."""
    _check_inputs(features, labels, n_classes)
    h = features.to(_dtype(features))
    counts = torch.bincount(labels, minlength=n_classes).to(h.dtype)
    if bool((counts == 0).any()):
        missing = torch.nonzero(counts == 0).flatten().tolist()
        raise ValueError(f"classes {missing} have no examples: their means are undefined")
    sums = torch.zeros(n_classes, h.shape[1], dtype=h.dtype, device=h.device).index_add_(0, labels, h)
    return sums / counts[:, None], counts


def cosine_gram(means: torch.Tensor, centre: bool = True) -> torch.Tensor:
    """Cosines between class means (centred on their average first, by default)."""
    m = means - means.mean(0) if centre else means
    m = m / m.norm(dim=1, keepdim=True).clamp_min(torch.finfo(m.dtype).tiny)
    return m @ m.T


def in_span_fraction(rows: torch.Tensor, means: torch.Tensor) -> torch.Tensor:
    """For each row of ``rows`` (C x d, e.g. the classifier's rows, centred by the caller), the
    fraction of its squared norm that lies in the span of the rows of ``means``: 1 for a row
    in that span, 0 for one orthogonal to it. A picture that projects onto the span of the
    class means (section 2's) shows only this part of each row; NC3 needs it near 1."""
    q = torch.linalg.matrix_rank(means)
    u = torch.linalg.svd(means.T, full_matrices=False)[0][:, :int(q)]  # basis of the span
    inside = (rows @ u).pow(2).sum(1)
    return inside / rows.pow(2).sum(1).clamp_min(torch.finfo(rows.dtype).tiny)


def nc1(features: torch.Tensor, labels: torch.Tensor, means: torch.Tensor) -> torch.Tensor:
    """NC1 = tr(Σ_W Σ_B⁺) / C: the within-class spread measured in units of the between-class
    spread, so that it does not care how large the features are.

    Σ_W = (1/N) Σ_i (h_i − μ_{y_i})(h_i − μ_{y_i})ᵀ and Σ_B = MᵀM / C are d x d, but Σ_B has
    rank at most C − 1, so the trace lives in the C directions of the class means. With
    G = MMᵀ (C x C), Σ_B⁺ = C · Mᵀ G⁺² M and the trace is tr((M Σ_W Mᵀ) G⁺²): two C x C
    matrices. G⁺ keeps G's top min(C − 1, d) eigenvalues (the centred means are linearly
    dependent) above the dtype's round-off. NaN when the class means coincide.
    """
    h = features.to(means.dtype)
    C, N = len(means), len(h)
    M = means - h.mean(0)                              # centred class means [C, d]
    within = (h - means[labels]) @ M.T                 # deviations seen along the means [N, C]
    lam, U = torch.linalg.eigh(M @ M.T)                # G = M Mᵀ, eigenvalues ascending
    eps = torch.finfo(lam.dtype).eps
    top = lam[-1].clamp_min(torch.finfo(lam.dtype).tiny)
    lam = lam / top                                    # the same trace, no overflow in 1/λ²
    rank = min(C - 1, h.shape[1])
    keep = (torch.arange(C, device=lam.device) >= C - rank) & (lam > C * eps)
    inv2 = torch.where(keep, 1.0 / lam.clamp_min(eps) ** 2, 0.0)
    # tr(A U diag(1/λ²) Uᵀ) with A = M Σ_W Mᵀ = withinᵀwithin/N, as a sum of squares (uᵀAu =
    # ‖within u‖²/N): never negative, even where a tiny λ magnifies round-off
    q = ((within @ U) / top).pow(2).mean(0)
    value = (q * inv2).sum()
    # means that differ only by round-off: no between-class spread to measure against
    spread = h.pow(2).sum(1).mean() * (C * eps) ** 2
    return torch.where(top > spread, value, torch.full_like(value, float("nan")))


def nc2(M: torch.Tensor) -> dict:
    """NC2: the centred class means become equally long and equally spaced, the vertices of a
    simplex equiangular tight frame (ETF): cosines −1/(C − 1) between every pair.

    - ``equinorm``: coefficient of variation (std / mean) of the norms ‖μ_c − μ_G‖;
    - ``equiangularity``: mean over pairs c ≠ c' of |cos(μ_c − μ_G, μ_c' − μ_G) + 1/(C − 1)|;
    - ``etf_distance``: ‖MMᵀ/‖MMᵀ‖_F − (I − 11ᵀ/C)/√(C − 1)‖_F, the Frobenius distance of the
      normalized Gram matrix of the centred means to that of a simplex ETF (the NC2 measure of
      Zhu et al. 2021, "A Geometric Analysis of Neural Collapse with Unconstrained Features";
      Papyan et al. plot equinorm and equiangularity separately). Unlike equiangularity it
      also sees unequal norms.
    """
    C = len(M)
    norms = M.norm(dim=1)
    cos = cosine_gram(M, centre=False)
    off = ~torch.eye(C, dtype=torch.bool, device=M.device)
    gram = M @ M.T
    etf = torch.eye(C, dtype=M.dtype, device=M.device) - 1.0 / C   # I − 11ᵀ/C, norm √(C − 1)
    return dict(equinorm=norms.std(unbiased=False) / norms.mean(),
                equiangularity=(cos[off] + 1.0 / (C - 1)).abs().mean(),
                etf_distance=(gram / gram.norm() - etf / math.sqrt(C - 1)).norm())


def nc3(weight: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """NC3, self-duality: ‖W/‖W‖_F − M/‖M‖_F‖²_F, the classifier's rows against the centred
    class means, both normalized (Papyan et al.'s definition: W as it is).

    A vector added to every row of W shifts all logits of an example equally and changes no
    decision. A head without a bias uses that freedom: its rows point at the *uncentred*
    means, so at collapse this measure equals :func:`bias_free_nc3`, not 0. The variant
    ``nc3(W − mean row, M)`` (``nc3_centred`` in :func:`nc_metrics`) removes the shift.
    """
    return (weight / weight.norm() - M / M.norm()).norm().pow(2)


def nc4(features: torch.Tensor, means: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """NC4: the fraction of examples on which the network's decision argmax_c logits differs
    from the nearest class centre's, argmin_c ‖h − μ_c‖."""
    nearest = torch.cdist(features.to(means.dtype), means).argmin(1)
    return (logits.argmax(1) != nearest).to(means.dtype).mean()


def orthogonality(means: torch.Tensor) -> torch.Tensor:
    """Mean |cos| over pairs of *uncentred* class means: 0 when they are orthogonal, the
    geometry Jacot et al. (2025) prove for networks ending in bias-free linear layers (and
    Dang et al. 2023 for the deep linear model). Equal-length orthogonal means, once centred,
    are a simplex ETF: the two descriptions agree when the norms are equal."""
    C = len(means)
    off = ~torch.eye(C, dtype=torch.bool, device=means.device)
    return cosine_gram(means, centre=False)[off].abs().mean()


def nc_metrics(features: torch.Tensor, labels: torch.Tensor, weight: torch.Tensor,
               bias: torch.Tensor | None = None, n_classes: int | None = None) -> dict:
    """All of :data:`METRICS` as device scalars, from the features [N, d] that enter the last
    linear layer (``weight`` [C, d], ``bias``) and the labels [N]. One pass over the features;
    nothing syncs with the host. None depends on the scale of the features (``nc4`` only
    through the bias, which scales with them)."""
    if weight.ndim != 2:
        raise ValueError(f"weight must be a [C, d] matrix, got shape {tuple(weight.shape)}")
    C = int(n_classes or weight.shape[0])
    _check_inputs(features, labels, C)
    if weight.shape != (C, features.shape[-1]):
        raise ValueError(f"weight has shape {tuple(weight.shape)}, expected [{C}, {features.shape[-1]}] "
                         "(classes x feature dimension)")
    means, _ = class_means(features, labels, C)
    h = features.to(means.dtype)
    W = weight.to(means.dtype)
    M = means - h.mean(0)
    logits = h @ W.T + (0 if bias is None else bias.to(means.dtype))
    return dict(nc1=nc1(h, labels, means), **nc2(M), nc3=nc3(W, M),
                nc3_centred=nc3(W - W.mean(0), M), nc4=nc4(h, means, logits),
                orthogonality=orthogonality(means))


def terminal_phase_start(history: History) -> int | None:
    """The first evaluated step with zero training error: where the terminal phase begins
    (None if it never did, or if the run diverged before its first evaluation)."""
    if "train_acc" not in history or not len(history):
        return None
    return history.first_step("train_acc", above=1.0 - 1e-9)


def at_zero_error(history: History, key: str) -> float:
    """The value of metric ``key`` at :func:`terminal_phase_start` (NaN if never reached)."""
    z = terminal_phase_start(history)
    return float("nan") if z is None else float(history[key][history.steps.index(z)])


# ============================================================================ 2. the conditions of Jacot et al.


def balancedness(weights: list[torch.Tensor], relative: bool = True) -> torch.Tensor:
    """How far consecutive linear layers are from balance: the largest over pairs of
    ‖D_l‖_F with D_l = W_{l+1}ᵀW_{l+1} − W_l W_lᵀ, divided (``relative``) by the mean of the
    two terms' norms, ½(‖W_{l+1}ᵀW_{l+1}‖_F + ‖W_l W_lᵀ‖_F).

    Why it matters: gradient flow on a linear chain *conserves* D_l (the gradients of the two
    terms cancel), so without help the imbalance of the initialization stays forever, and only
    its relative size shrinks as the weights grow. Weight decay λ adds −2λ D_l to its
    derivative, and D_l decays like exp(−2λt). A balanced linear part is what lets a small
    training loss force NC1 (Jacot et al. 2025). ``weights`` are in forward order (head last).
    """
    if len(weights) < 2:
        raise ValueError("balancedness needs at least two consecutive linear layers")
    worst = None
    for a, b in zip(weights[:-1], weights[1:]):
        if a.shape[0] != b.shape[1]:
            raise ValueError(f"layers of shapes {tuple(a.shape)} and {tuple(b.shape)} do not chain")
        out_gram, in_gram = b.T @ b, a @ a.T
        gap = (out_gram - in_gram).norm()
        if relative:
            scale = 0.5 * (out_gram.norm() + in_gram.norm())
            gap = gap / scale.clamp_min(torch.finfo(scale.dtype).tiny)
        worst = gap if worst is None else torch.maximum(worst, gap)
    return worst


def conditioning(features: torch.Tensor, k: int) -> torch.Tensor:
    """s_1 / s_k, the spread of the top ``k`` singular values of the features [N, d].

    Jacot et al. (2025) need the features entering the linear part to be well conditioned
    (a bounded ratio of largest to smallest non-zero singular value) for the class means to
    become orthogonal and the weights to align with them. A C-class linear head uses only C
    directions, so we report the ratio over the top C. The singular values are the square
    roots of the eigenvalues of the smaller Gram matrix (d x d or N x N), in float32: the
    ratios of interest are far inside its precision.
    """
    if features.ndim != 2 or k < 1 or k > min(features.shape):
        raise ValueError(f"conditioning needs a [N, d] matrix with k <= min(N, d), got "
                         f"{tuple(features.shape)} and k={k}")
    h = features.to(_dtype(features))
    gram = h.T @ h if h.shape[1] <= h.shape[0] else h @ h.T
    ev = torch.linalg.eigvalsh(gram).flip(0)            # descending
    return (ev[0] / ev[k - 1].clamp_min(torch.finfo(ev.dtype).tiny)).sqrt()


# ============================================================================ 3. the models

ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}


class LinearTail(nn.Module):
    """A model that ends in a linear part (``self.linear``, bias-free) and a ``head``: its
    ``features`` are ``body_features`` (each subclass's own) through the linear part."""

    def linear_part(self, h: torch.Tensor) -> torch.Tensor:
        """The linear layers before the head, applied to body features."""
        for layer in self.linear:
            h = layer(h)
        return h

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear_part(self.body_features(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class CollapseNet(LinearTail):
    """``depth`` ReLU layers of ``width`` units (the *body*), then a *linear part* of
    ``linear_depth`` bias-free linear layers, the last of which is ``head``.

    This is the architecture of Jacot et al. (2025): a nonlinear network that ends in at least
    two linear layers. ``features(x)`` is the input of ``head`` (what neural collapse is
    about); ``body_features(x)`` the input of the linear part (whose conditioning they need).
    """

    def __init__(self, in_dim: int, width: int = 128, depth: int = 2, linear_depth: int = 2,
                 n_classes: int = 10, activation: str = "relu"):
        super().__init__()
        for name, value, low in (("in_dim", in_dim, 1), ("width", width, 1), ("depth", depth, 1),
                                 ("linear_depth", linear_depth, 1), ("n_classes", n_classes, 2)):
            if int(value) < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {list(ACTIVATIONS)}, got {activation!r}")
        dims = [in_dim] + [width] * depth
        self.act = ACTIVATIONS[activation]
        self.body = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.linear = nn.ModuleList(nn.Linear(width, width, bias=False) for _ in range(linear_depth - 1))
        self.head = nn.Linear(width, n_classes, bias=False)

    def body_features(self, x: torch.Tensor) -> torch.Tensor:
        return layered(self.body, self.act, x)


class UnconstrainedFeatures(LinearTail):
    """The unconstrained features model: one free feature vector per training example, then
    ``linear_depth`` bias-free linear layers (the last is ``head``). Inputs are example indices.

    The network that would produce the features is idealized away: if it is expressive
    enough, it can put them anywhere, so the features become parameters like the weights.
    They are stored as z with h = √N·z, so that one learning rate and one weight decay λ on
    every parameter minimize (1/N)Σ_i ½‖W_L⋯W_1 h_i − e_{y_i}‖² + (λ/2)(Σ_l ‖W_l‖² + ‖H‖²/N):
    the usual normalized model, with every feature moving at the speed of the weights.
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


def linear_weights(model: nn.Module) -> list[torch.Tensor]:
    """The weight matrices of a model's linear part, in forward order (head last)."""
    return [layer.weight for layer in getattr(model, "linear", [])] + [model.head.weight]


def _features(model: nn.Module, x: torch.Tensor, fn=None, chunk: int = 8192) -> torch.Tensor:
    fn = fn or model.features
    return torch.cat([fn(x[i:i + chunk]) for i in range(0, len(x), chunk)])


@torch.no_grad()
def measure(model: nn.Module, x: torch.Tensor, y: torch.Tensor, n_classes: int | None = None,
            conditions: bool = False) -> dict:
    """Every collapse metric of ``model`` on (x, y), as floats: one pass of ``model.features``
    over x, the metrics on the device, one transfer of the results. With ``conditions`` also
    :func:`balancedness` (relative, and absolute as ``imbalance``) and :func:`conditioning`
    (models with a linear part only). Values
    are NaN when the features are not finite (a diverged run)."""
    with evaluating(model):
        body = _features(model, x, model.body_features)  # one pass through the network
        h = model.linear_part(body)
        C = int(n_classes or model.head.weight.shape[0])
        if not bool(torch.isfinite(h).all()):
            return {k: float("nan") for k in METRICS + (CONDITIONS if conditions else ())}
        out = nc_metrics(h, y, model.head.weight, model.head.bias, C)
        if conditions:
            out["balancedness"] = balancedness(linear_weights(model))
            out["imbalance"] = balancedness(linear_weights(model), relative=False)
            out["conditioning"] = conditioning(body, C)
        keys = list(out)
        values = torch.stack([out[k].to(out["nc1"].dtype) for k in keys]).tolist()
        return dict(zip(keys, values))


@torch.no_grad()
def mean_geometry(model: nn.Module, data: D.Dataset) -> dict:
    """Uncentred class means of the training features: their norms, the classifier's row
    norms and the angles (degrees) between the means (section 4: imbalanced classes)."""
    with evaluating(model):
        h = _features(model, data.x_train)
    means, counts = class_means(h, data.y_train, data.n_classes)
    cos = cosine_gram(means, centre=False).clamp(-1, 1)
    return dict(counts=counts.cpu().numpy(), feature_norm=means.norm(dim=1).cpu().numpy(),
                classifier_norm=model.head.weight.detach().norm(dim=1).cpu().numpy(),
                angles=torch.rad2deg(torch.arccos(cos)).cpu().numpy())


# ============================================================================ 5. data and settings


@dataclass
class CollapseConfig(Config):
    """A network trained far past zero training error (sections 1 to 3). The gpu sizes keep
    the notebook within a few minutes on a GPU (measured on an H100: ``python -m
    dynamics_ops.bench gpu --measure``)."""

    dataset: str = param("digits", "training data (mnist/cifar10 fall back to MNIST-1D offline)",
                         choices=("digits", "mnist1d", "gaussian", "mnist", "cifar10"), gpu="mnist")
    n_classes: int = param(10, "classes kept (the first C labels)", low=2, high=10)
    n_train: int = param(1200, "training examples (balanced over classes)", low=10, high=60000,
                         smoke=500, gpu=5000)
    width: int = param(128, "width of the hidden and linear layers", low=4, high=4096,
                       smoke=64, gpu=512)
    depth: int = param(2, "ReLU layers before the linear part", low=1, high=8, gpu=3)
    linear_depth: int = param(2, "linear layers at the end, head included", low=1, high=6)
    activation: str = param("relu", "nonlinearity of the body", choices=tuple(ACTIVATIONS))
    loss: str = param("mse", "training loss", choices=("mse", "cross_entropy"))
    optimizer: str = param("adamw", "optimizer (full batch)", choices=("adamw", "sgd", "momentum"))
    lr: float = param(3e-3, "peak learning rate (cosine decay to 1%)", low=1e-5, high=1.0, log=True)
    weight_decay: float = param(1.0, "weight decay (decoupled for AdamW)", low=0.0, high=10.0)
    steps: int = param(4000, "full-batch steps", low=10, high=10**6, smoke=1200, gpu=10000)
    n_evals: int = param(40, "evaluations, log-spaced in steps", low=5, high=400, smoke=24)
    gd_lr: float = param(1.0, "learning rate of the plain gradient-descent runs of section 3",
                         low=1e-4, high=2.0, log=True)
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

    def __post_init__(self):
        super().__post_init__()
        if self.largest / self.ratio < 1:
            raise ValueError(f"ImbalanceConfig: the smallest class would have "
                             f"{self.largest / self.ratio:.2g} examples (largest {self.largest} / "
                             f"ratio {self.ratio:g}); raise largest or lower ratio")

    def counts(self) -> list[int]:
        """Class sizes from ``largest`` down to ``largest / ratio``, geometric in between."""
        C = self.n_classes
        return [int(round(self.largest * self.ratio ** (-k / (C - 1)))) for k in range(C)]


def cosine_schedule(steps: int, final: float = 0.01):
    """Learning-rate factor: cosine from 1 to ``final`` over ``steps`` (a long, slow terminal
    phase is what lets the geometry settle)."""
    return lambda s: final + (1 - final) * 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps))


def balanced_subset(ds: D.Dataset, n_classes: int, n_train: int | None = None) -> D.Dataset:
    """Keep the first ``n_classes`` labels and, per class, the first ``n_train // C`` training
    examples. A class with fewer keeps what it has, and ``info["short"]`` says so."""
    if not 2 <= n_classes <= ds.n_classes:
        raise ValueError(f"n_classes must lie in [2, {ds.n_classes}], got {n_classes}")

    def pick_rows(y, per):
        rows = [torch.nonzero(y == c).flatten()[:per] for c in range(n_classes)]
        return torch.sort(torch.cat(rows)).values

    per = None if n_train is None else max(1, n_train // n_classes)
    tr = pick_rows(ds.y_train, per)
    te = pick_rows(ds.y_test, None)
    info = dict(ds.info, n_classes=n_classes)
    if per is not None and len(tr) < per * n_classes:
        info["short"] = f"{per * n_classes:,} asked for; the dataset has no more"
    return D.Dataset(ds.x_train[tr], ds.y_train[tr], ds.x_test[te], ds.y_test[te], n_classes,
                     ds.name, info)


def load_data(cfg: CollapseConfig, seed: int | None = None) -> D.Dataset:
    """The dataset a config names, restricted to ``n_classes`` balanced classes.

    MNIST and CIFAR-10 need torchvision and a download on first use. Offline, and always in a
    dry run (``DYNAMICS_DRY_RUN``, which must not download), they fall back to MNIST-1D of
    the same number of examples; ``data.info['fallback']`` says so, for the page to print.
    """
    seed = get_seed(seed)
    C, n = cfg.n_classes, cfg.n_train
    name, fallback = cfg.dataset, None
    if name in ("mnist", "cifar10"):
        if dry_run() is not None:
            fallback = f"MNIST-1D instead of {name} (a dry run downloads nothing)"
        else:
            try:
                return balanced_subset(D.torchvision_dataset(name, n_test=2000), C, n)
            except RuntimeError:  # no torchvision, or no internet for the first download
                fallback = f"MNIST-1D instead of {name}, which could not be loaded here"
        name = "mnist1d"
    if name == "mnist1d":
        ds = D.mnist1d(n_train=max(12 * n // C, 1000), n_test=1000, seed=seed)  # 10 balanced classes
    elif name == "gaussian":
        ds = D.gaussian_mixture(n_train=n, n_test=max(C, 500), dim=20, n_classes=C,
                                separation=4.0, seed=seed)
    else:
        ds = D.digits(seed=seed)
    out = balanced_subset(ds, C, n)
    if fallback:
        out.info["fallback"] = fallback
    return out


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


def make_model(cfg: CollapseConfig, data: D.Dataset, seed: int | None = None) -> CollapseNet:
    """The :class:`CollapseNet` a config describes, for ``data``, initialized from ``seed``."""
    seed = get_seed(seed)
    with seeded(seed):
        return CollapseNet(data.input_dim, cfg.width, cfg.depth, cfg.linear_depth,
                           data.n_classes, cfg.activation).to(data.device)
