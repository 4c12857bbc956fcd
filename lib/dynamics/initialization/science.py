"""The science of initialization, as one file to read top to bottom.

1. Signal propagation: initialization schemes (Xavier, He, orthogonal, LSUV...) and the
   per-layer statistics that show whether the forward and backward signals survive depth.
2. Order and chaos: the mean-field maps of a wide random tanh network (the length map and its
   fixed point q*, the correlation map, chi_1, the depth scale xi_c, the critical line), and the
   same quantities measured on finite random networks: in :mod:`.meanfield`, re-exported here.
3. Orthogonal versus Gaussian weights: finite-width fluctuations of preactivations, and the
   exact learning dynamics of deep linear networks (Saxe et al.).
4. Initial guessing bias: the favourite class of an untrained network.

Every function here is a pure computation on numbers or tensors. The runners that sweep them
are in :mod:`.experiments`, the figures in :mod:`.figures`, the panels in :mod:`.panels`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import data as datasets
from ..config import Config, param
from ..models import MLP
from ..runtime import MAX_SEED, get_device, get_seed, seeded
from .meanfield import (TRAINABLE_DEPTHS, PHI, gauss_hermite, q_map, q_star, c_map, chi_1,
                        c_star, chi_c, depth_scale, trainable_depth, critical_sigma_w2,
                        trainable_band, measure_chi_1, measured_critical_sigma_w2,
                        measure_map_iterates, measure_depth_scale, tanh_mlp, _generator,
                        _randn)
from .meanfield import __all__ as _meanfield  # section 2, re-exported
from .records import SignalStats

__all__ = ["INIT_SCHEMES", "ACTIVATIONS", "GAIN", "SignalConfig", "ChaosConfig",
           "TrainabilityConfig", "MORE_SEEDS", "FluctuationConfig", "SaxeConfig",
           "DepthTimeConfig", "GuessingConfig", "mnist1d_data", "lsuv_", "init_mlp", "critical_mlp",
           "layer_statistics", "std_ratio", "backward_ratio", "signal_summary", "haar_orthogonal", "batched_qr", "random_weights",
           "preactivation_fluctuations", "saxe_task", "deep_linear", "orthogonal_product_svals",
           "pattern_progress",
           "saxe_theory", "effective_start", "guessing_bias", "favourite_class", *_meanfield]

INIT_SCHEMES = ("zero", "small", "xavier", "he", "orthogonal", "lsuv")
ACTIVATIONS = ("tanh", "relu")
# The critical weight scale sigma_w of each activation at sigma_b = 0 (mean-field theory):
# orthogonal weights are drawn with this gain, which puts the mean squared singular value of a
# layer's Jacobian at 1 (chi_1 = 1). That is not dynamical isometry (all singular values near
# 1): ReLU networks cannot reach it with any weights (each layer's Jacobian D W has singular
# values spread by the 0/1 diagonal D), and tanh networks only with orthogonal weights on the
# critical line as q* -> 0 (Pennington, Schoenholz & Ganguli 2017); linear ones reach it exactly.
GAIN = {"tanh": 1.0, "relu": math.sqrt(2.0)}


# =============================================================================================
# Configs: one dataclass per experiment; the fields drive the profile presets, the panels'
# controls and the provenance written beside precomputed results.
# =============================================================================================


@dataclass
class SignalConfig(Config):
    """Section 1: per-layer statistics of a deep MLP at initialization."""

    depth: int = param(50, "hidden layers", low=1, high=300, cpu=100, gpu=200)
    width: int = param(256, "units per hidden layer", low=2, high=4096, cpu=512)
    activation: str = param("relu", "nonlinearity", choices=ACTIVATIONS)
    init: str = param("he", "initialization scheme", choices=INIT_SCHEMES)
    n_inputs: int = param(256, "MNIST-1D inputs in the batch", low=8, high=4000)
    seed: int = param(0, "seed of the weights", low=0, high=MAX_SEED)


@dataclass
class ChaosConfig(Config):
    """Section 2: mean-field theory of tanh networks and its check on random networks."""

    sigma_b2: float = param(0.05, "bias variance sigma_b^2", low=0.0, high=2.0)
    width: int = param(512, "width of the random networks", low=16, high=8192, smoke=256)
    map_width: int = param(512, "width of the random networks whose length and correlation maps "
                           "are measured (512 at every profile: the q-map row's finite-width "
                           "deviation is tested at this width)", low=16, high=8192)
    depth: int = param(60, "depth of the random networks", low=12, high=1000, smoke=40, gpu=100)
    batch: int = param(64, "inputs (or input pairs) per measurement", low=2, high=4096, gpu=128)
    n_sigma: int = param(12, "sigma_w^2 values with a measured depth scale", low=3, high=100,
                         smoke=8, gpu=24)
    seed: int = param(0, "seed of the random networks", low=0, high=MAX_SEED)


@dataclass
class TrainabilityConfig(Config):
    """Section 2: training accuracy after a fixed budget of SGD steps, over depth x sigma_w^2
    (tanh MLPs at sigma_b^2 = 0.05 on MNIST-1D), beside the 6 xi_c line of the theory.

    The learning rate falls as 1/depth: near criticality every layer adds about the same to
    the curvature of the loss (the neural tangent kernel grows linearly with depth), so a rate
    that suits depth 10 diverges or stalls at depth 80 (measured: at width 128, depth 80 and
    sigma_w^2 = 1.76, lr 0.003 stayed at chance for 2,000 steps, lr 0.001 reached 96%)."""

    depths: list = param([10, 20, 30, 40, 50, 60, 80], "depths of the grid",
                         smoke=[4, 16, 32], gpu=[10, 20, 40, 60, 80, 100, 150, 200])
    sigma_w2: list = param([0.8, 1.0, 1.2, 1.4, 1.6, 1.76, 2.0, 2.4, 3.0, 3.8, 4.5],
                           "sigma_w^2 values of the grid", smoke=[0.5, 1.76, 4.0],
                           gpu=[0.6, 0.8, 1.0, 1.2, 1.4, 1.55, 1.76, 1.9, 2.1, 2.4, 2.8, 3.2,
                                3.8, 4.5])
    sigma_b2: float = param(0.05, "bias variance sigma_b^2", low=0.0, high=2.0)
    width: int = param(96, "units per hidden layer", low=4, high=4096, smoke=32, gpu=256)
    steps: int = param(2000, "SGD steps", low=1, high=100000, smoke=150, gpu=5000)
    lr_depth: float = param(0.08, "learning rate x depth: depth L trains at lr_depth / L (SGD, "
                            "momentum 0.9)", low=1e-4, high=10.0, log=True)
    batch_size: int = param(32, "mini-batch size", low=1, high=10000, smoke=128, gpu=128)
    n_train: int = param(1000, "MNIST-1D training examples", low=100, high=100000)
    seeds: list = param([0], "seeds (accuracies are averaged)", gpu=[0, 1])


# More seeds of the trainability grid, each seed's own accuracies, on the cells its
# edge-of-chaos claim reads: three of the depths from claims.DEEP (30) on, and the sigma_w^2
# near the edge and far from it (the whole grid on two more seeds would cost three times this).
MORE_SEEDS = dict(
    smoke=dict(depths=[32], sigma_w2=[0.5, 1.76, 4.0], seeds=[1, 2]),
    cpu=dict(depths=[30, 80, 50], sigma_w2=[0.8, 1.4, 1.6, 1.76, 2.0, 2.4, 3.8, 4.5],
             seeds=[1, 2, 3, 4]),
    gpu=dict(depths=[40, 100, 200], sigma_w2=[0.6, 1.4, 1.55, 1.76, 1.9, 2.1, 2.4, 3.8, 4.5],
             seeds=[2, 3]))


@dataclass
class FluctuationConfig(Config):
    """Section 3: fluctuations of preactivations across an ensemble of tanh networks at
    criticality (sigma_w^2 = 1, sigma_b = 0)."""

    depth: int = param(64, "layers", low=2, high=1000, smoke=32, gpu=128)
    width: int = param(128, "units per layer", low=4, high=4096, smoke=64, gpu=256)
    n_nets: int = param(256, "networks in the ensemble (seeds)", low=2, high=100000, smoke=128,
                        gpu=2000)
    seed: int = param(0, "seed of the ensemble", low=0, high=MAX_SEED)


@dataclass
class SaxeConfig(Config):
    """Section 3: a deep linear network learning C patterns of different strengths."""

    n_patterns: int = param(5, "patterns = classes = input dimension", low=2, high=256)
    strength_max: float = param(1.0, "strongest pattern's singular value (x sqrt(C))", low=0.01,
                                high=10.0)
    strength_min: float = param(0.1, "weakest pattern's singular value (x sqrt(C))", low=0.001,
                                high=10.0)
    width: int = param(32, "hidden units per layer", low=1, high=4096)
    depth: int = param(2, "weight matrices (2 = one hidden layer)", low=1, high=64)
    init: str = param("small", "initialization", choices=("small", "orthogonal", "gaussian"))
    init_std: float = param(1e-3, "weight std of the small init", low=1e-6, high=1.0, log=True)
    lr: float = param(0.3, "learning rate (full-batch gradient descent)", low=1e-3, high=10.0,
                      log=True)
    steps: int = param(800, "gradient steps", low=10, high=20000)
    seed: int = param(0, "seed of the task and the weights", low=0, high=MAX_SEED)


@dataclass
class DepthTimeConfig(Config):
    """Section 3: time to learn the patterns vs depth, orthogonal vs scaled Gaussian init,
    each at its best learning rate from a grid."""

    depths: list = param([2, 4, 8, 16, 32], "depths (weight matrices)", smoke=[2, 16],
                         gpu=[2, 4, 8, 16, 32, 64, 128])
    width: int = param(32, "hidden units per layer", low=1, high=4096)
    n_patterns: int = param(10, "patterns = classes = input dimension", low=2, high=256)
    lr_min: float = param(0.01, "smallest learning rate of the grid", low=1e-6, high=10.0, log=True)
    lr_max: float = param(3.0, "largest learning rate of the grid", low=1e-6, high=100.0, log=True)
    n_lr: int = param(17, "learning rates in the grid (log-spaced)", low=1, high=200, gpu=25)
    criterion: float = param(0.05, "learned = loss below this fraction of the zero predictor's",
                             low=1e-6, high=1.0, log=True)
    steps: int = param(1500, "maximal gradient steps", low=1, high=1000000, smoke=400, gpu=4000)
    seeds: list = param([0, 1, 2, 3, 4], "seeds (the median learning time is reported)",
                        smoke=[0, 1, 2], gpu=list(range(10)))


@dataclass
class GuessingConfig(Config):
    """Section 4: the fraction of inputs an untrained network assigns to its favourite class."""

    depths: list = param([1, 2, 4, 8, 16, 32, 64], "depths", smoke=[1, 2, 4, 8, 16, 32],
                         gpu=[1, 2, 4, 8, 16, 32, 64, 128])
    width: int = param(256, "units per hidden layer", low=2, high=4096, smoke=128, gpu=512)
    n_nets: int = param(32, "random networks per depth", low=1, high=10000, smoke=16, gpu=128)
    n_inputs: int = param(1000, "MNIST-1D inputs classified", low=10, high=100000, smoke=500)
    scale: str = param("critical", "weights: 'critical' sigma_w^2 (2 for ReLU = He, 1 for tanh) "
                       "or 'xavier'", choices=("critical", "xavier"))
    seed: int = param(0, "seed", low=0, high=MAX_SEED)


def mnist1d_data(n_train: int, n_test: int = 500, seed: int | None = None) -> datasets.Dataset:
    """MNIST-1D (10 classes of 40-sample signals), cached per device: the real data of this
    chapter (a copy cached on one device is never handed to a run on another)."""
    seed = get_seed(seed)
    return _mnist1d_on(n_train, n_test, seed, str(get_device()))


@lru_cache(maxsize=4)
def _mnist1d_on(n_train: int, n_test: int, seed: int, device: str) -> datasets.Dataset:
    return datasets.mnist1d(n_train, n_test, seed=seed, device=device)


# =============================================================================================
# 1. Signal propagation at initialization
# =============================================================================================


def lsuv_(model: MLP, x: torch.Tensor, tol: float = 0.1,
          max_iter: int = 10, rescale: bool = True) -> MLP:
    """Layer-sequential unit-variance init (Mishkin & Matas, "All you need
    is a good init").

    Why: Gaussian scales derived for one activation (Xavier, He) are only
    right on average; LSUV measures instead. Start from orthonormal weights,
    then walk from the input to the output and divide each layer's weight by
    the standard deviation of its output on a batch of real data, until the
    output variance is within ``tol`` of 1 (a few iterations at most; for a
    bias-free linear map one division is exact). Biases are set to zero.
    ``rescale=False`` stops at the orthonormal start (the same matrices, drawn
    in the same order): the control of LSUV's unit-variance claim.
    """
    if x.ndim < 2 or len(x) < 2:
        raise ValueError("lsuv_ needs a batch of at least 2 inputs")
    if not 0 < tol < 1 or max_iter < 1:
        raise ValueError(f"lsuv_ needs 0 < tol < 1 and max_iter >= 1, "
                         f"got {tol}, {max_iter}")
    layers = [*model.hidden, model.head]
    h = x.flatten(1)
    with torch.no_grad():
        for i, layer in enumerate(layers):
            nn.init.orthogonal_(layer.weight)
            if layer.bias is not None:
                layer.bias.zero_()
            for _ in range(max_iter if rescale else 0):
                var = layer(h).var()
                if not torch.isfinite(var) or var <= 0:
                    raise ValueError(f"LSUV: layer {i} output has variance "
                                     f"{float(var)}; its input is constant")
                if abs(float(var) - 1.0) < tol:
                    break
                layer.weight.div_(var.sqrt())
            if i < len(model.hidden) and rescale:
                h = model.act(layer(h))
    return model


def init_mlp(in_dim: int, width: int, depth: int, activation: str, init: str,
             x: torch.Tensor | None = None, out_dim: int = 10, rescale: bool = True) -> MLP:
    """An MLP of ``depth`` hidden layers initialized by one of :data:`INIT_SCHEMES`.

    ``zero``: all weights 0 (every unit computes the same thing, forever); ``small``:
    N(0, 0.01^2); ``xavier``: Var W = 2/(fan_in + fan_out); ``he``: Var W = 2/fan_in;
    ``orthogonal``: orthogonal matrices times the activation's critical gain (:data:`GAIN`);
    ``lsuv``: orthonormal, then rescaled on the data batch ``x`` (:func:`lsuv_`;
    ``rescale=False``: its orthonormal start alone, the same matrices on the same seed).
    """
    if init not in INIT_SCHEMES:
        raise ValueError(f"unknown init {init!r}; choose one of {list(INIT_SCHEMES)}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose one of {list(ACTIVATIONS)}")
    if init == "lsuv" and x is None:
        raise ValueError("LSUV initializes from data: pass a batch x")
    # LSUV draws its own orthonormal start: build the layers empty (no QR done twice)
    scheme = {"small": "normal", "lsuv": "zero"}.get(init, init)
    model = MLP(in_dim, width, depth, out_dim, activation, init=scheme,
                init_std=0.01 if init == "small" else None)
    if x is not None:  # LSUV runs the layers on x: the model must be where x is
        model = model.to(x.device)
    if init == "orthogonal":
        with torch.no_grad():
            for layer in [*model.hidden, model.head]:
                layer.weight.mul_(GAIN[activation])
    if init == "lsuv":
        lsuv_(model, x, rescale=rescale)
    return model


def critical_mlp(in_dim: int, width: int, depth: int, activation: str, out_dim: int = 10) -> MLP:
    """An MLP at its activation's critical weight scale at sigma_b = 0 (W ~ N(0, g^2/fan_in)
    with g = :data:`GAIN`: sigma_w^2 = 2 for ReLU, the He scale; 1 for tanh), zero biases."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose one of {list(ACTIVATIONS)}")
    return MLP(in_dim, width, depth, out_dim, activation, sigma_w=GAIN[activation])


def layer_statistics(model: MLP, x: torch.Tensor, y: torch.Tensor) -> SignalStats:
    """Per hidden layer l, on the batch ``x`` with the cross-entropy loss L of labels ``y``:

    - ``act_std``: the std of its activations phi(z_l) over the batch and units (the forward
      signal);
    - ``grad_in``: the Frobenius norm of dL/dz_l, the loss gradient with respect to its
      preactivations (the backward signal: what backpropagation carries towards the input);
    - ``grad_norm``: the Frobenius norm of dL/dW_l = (dL/dz_l)^T phi(z_{l-1}), the weight
      gradient a step of gradient descent uses: the backward signal of layer l times the
      forward signal entering it (layer 1's input is the data, whose size is not a layer's);
    - ``out_var``: the variance of its output z_l over the batch and units, and last that of
      the output layer (LSUV's quantity: it rescales each of these to 1).

    Each is computed in float64 from the float32 network: a norm, a std or a variance squares
    the entries, and in float32 a square below the smallest normal (about 1e-38) flushes to
    zero (the book flushes subnormals, :mod:`dynamics.arithmetic`), so a signal of entries
    near 1e-19 would read low and one of entries below it as 0, though its entries are not
    zero.

    A good init keeps the forward and backward signals flat in depth; a bad one makes them
    shrink or grow geometrically. The weight gradient is their product, so it can be level
    across layers while both signals vanish (:func:`signal_summary`)."""
    model.zero_grad(set_to_none=True)
    h = x.flatten(1)
    stds, pre, zs = [], [], []
    for layer in model.hidden:
        z = layer(h)
        if z.requires_grad:
            z.retain_grad()
        zs.append(z)
        pre.append(_f64(z).var())
        h = model.act(z)
        stds.append(_f64(h).std())
    out = model.head(h)
    pre.append(_f64(out).var())
    F.cross_entropy(out, y).backward()
    grads = [_f64(layer.weight.grad).norm() for layer in model.hidden]
    back = [_f64(z.grad).norm() if z.grad is not None else _f64(torch.zeros((), device=z.device))
            for z in zs]
    model.zero_grad(set_to_none=True)
    return SignalStats(act_std=torch.stack(stds).tolist(), grad_norm=torch.stack(grads).tolist(),
                       grad_in=torch.stack(back).tolist(), out_var=torch.stack(pre).tolist())


def _f64(t: torch.Tensor) -> torch.Tensor:
    """``t`` detached in float64, on its device (on the CPU for Apple's MPS, which has no
    float64)."""
    t = t.detach()
    return (t.cpu() if t.device.type == "mps" else t).double()


def std_ratio(stats: SignalStats) -> float:
    """Last-layer activation std over first-layer activation std (NaN if the first is 0)."""
    first, last = stats.act_std[0], stats.act_std[-1]
    return float(last / first) if first > 0 else float("nan")


def backward_ratio(stats: SignalStats) -> float:
    """The backward signal's growth from the last hidden layer back to the first:
    |dL/dz_1| / |dL/dz_L| (NaN if the last is 0). Every z_l has the width's units, so the
    ratio compares like with like; for a linear network of orthogonal layers of gain g it is
    exactly g^(L-1)."""
    first, last = stats.grad_in[0], stats.grad_in[-1]
    return float(first / last) if last > 0 else float("nan")


def signal_summary(stats: SignalStats) -> dict:
    """The signal table's numbers of one network (:func:`layer_statistics`): ``forward``
    (:func:`std_ratio`), ``backward`` (:func:`backward_ratio`) and ``weight_size``, the median
    |dL/dW_l| over layers 2..L, whose fan-in is the width (layer 1's input is the data): how
    large a step the weights get. A ratio whose denominator is 0 is NaN."""
    g = stats.grad_norm[1:]
    return dict(forward=std_ratio(stats), backward=backward_ratio(stats),
                weight_size=float(np.median(g)) if g else float("nan"))


# =============================================================================================
# 3. Orthogonal versus Gaussian weights
# =============================================================================================


def haar_orthogonal(n_mats: int, n: int, gen: torch.Generator) -> torch.Tensor:
    """``n_mats`` independent n x n orthogonal matrices from the Haar measure: the QR
    decomposition of a Gaussian matrix, with the signs of R's diagonal moved into Q (without
    that correction Q is not uniformly distributed)."""
    q, r = batched_qr(_randn(n_mats, n, n, gen=gen))
    return q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)


def batched_qr(A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The reduced QR of a stack of square or tall matrices [..., m, n], as
    ``torch.linalg.qr``. On the CPU it is that call. Elsewhere ``linalg.qr`` forms Q with one
    solver call per matrix (cuSOLVER's ``orgqr`` takes one matrix), so here Q is formed from
    ``geqrf``'s Householder reflectors in batched matmuls and one batched triangular solve:
    the compact WY form Q = I − V T Vᵀ, T⁻¹ = striu(VᵀV) + diag(1/τ) (Joffrain et al. 2006). A
    reflector with τ = 0 (the last of a square matrix) is the identity and is left out."""
    return torch.linalg.qr(A) if A.device.type == "cpu" else _qr_from_reflectors(A)


def _qr_from_reflectors(A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = A.shape[-2:]
    if m < n:
        raise ValueError(f"batched_qr needs m >= n, got a {m} x {n} matrix")
    a, tau = torch.geqrf(A)
    used = tau != 0
    eye = torch.eye(m, n, dtype=A.dtype, device=A.device)
    V = (a.tril(-1) + eye) * used.unsqueeze(-2)
    t_inv = (V.mT @ V).triu(1) + torch.diag_embed(torch.where(used, 1 / tau, 1.0))
    q = eye - V @ torch.linalg.solve_triangular(t_inv, V[..., :n, :].mT, upper=True)
    return q, a[..., :n, :].triu()


def random_weights(init: str, n_nets: int, width: int, sigma_w2: float,
                   gen: torch.Generator) -> torch.Tensor:
    """One square layer for each of ``n_nets`` networks: [n_nets, n, n].

    Both kinds have E|Wx|^2 = sigma_w^2 |x|^2. Gaussian weights (entries
    N(0, sigma_w^2 / n)) get it right only on average: |Wx|^2 fluctuates by
    O(1/sqrt n) around it, and the fluctuations compound with depth.
    Orthogonal weights (times sigma_w) preserve every norm exactly."""
    if init == "orthogonal":
        return math.sqrt(sigma_w2) * haar_orthogonal(n_nets, width, gen)
    if init == "gaussian":
        scale = math.sqrt(sigma_w2 / width)
        return _randn(n_nets, width, width, gen=gen) * scale
    raise ValueError(f"init must be 'orthogonal' or 'gaussian', got {init!r}")


def preactivation_fluctuations(init: str, depth: int, width: int, n_nets: int,
                               sigma_w2: float = 1.0,
                               seed: int | None = None) -> np.ndarray:
    """n Var[G_l] / E[G_l]^2 across an ensemble of tanh networks, per layer l,
    where G_l = |z_l|^2 / n is the mean squared preactivation of one input.

    Why this number: to leading order in 1/n it is 2 + V_l / K_l^2, with V
    the four-point correlator of preactivations that controls finite-width
    effects. With Gaussian weights at criticality it grows linearly with
    depth; with orthogonal weights it stays flat (Day, Kahn & Roberts)."""
    seed = get_seed(seed)
    if init not in ("orthogonal", "gaussian"):
        raise ValueError(f"init must be orthogonal or gaussian, got {init!r}")
    if depth < 1 or width < 2 or n_nets < 2:
        raise ValueError("need depth >= 1, width >= 2 and at least 2 networks")
    gen = _generator(seed)
    x = _randn(width, gen=gen)
    h = (x / x.norm() * math.sqrt(width)).expand(n_nets, width)  # |x|^2 = n
    out = []
    for _ in range(depth):
        W = random_weights(init, n_nets, width, sigma_w2, gen)
        z = torch.einsum("kij,kj->ki", W, h)
        G = z.pow(2).mean(1)
        out.append(width * G.var() / G.mean() ** 2)
        h = torch.tanh(z)
    return torch.stack(out).cpu().numpy().astype(np.float64)  # read back once, not per layer


# -- Saxe et al.: a deep linear network learning patterns of different strengths ---------------


def saxe_task(n_patterns: int = 10, strength_max: float = 1.0,
              strength_min: float = 0.1, seed: int | None = None) -> datasets.Dataset:
    """C patterns, one per class: x_c = sqrt(C) s_c v_c with orthonormal v_c.

    With one-hot targets and the mean squared error, the input-output
    correlation Sigma_31 = sum_c (s_c / sqrt C) e_c v_c^T and the input
    correlation Sigma_11 = sum_c s_c^2 v_c v_c^T share their singular vectors,
    so gradient descent decouples into one mode per pattern (Saxe et al.):
    pattern c is learned on its own time scale ~ 1/s_c."""
    seed = get_seed(seed)
    if n_patterns < 2 or not 0 < strength_min <= strength_max:
        raise ValueError("need n_patterns >= 2 and "
                         "0 < strength_min <= strength_max")
    gen = torch.Generator().manual_seed(seed)  # the same task on every device
    V = haar_orthogonal(1, n_patterns, gen)[0]
    s = torch.tensor(np.geomspace(strength_max, strength_min, n_patterns),
                     dtype=torch.float32)
    x = math.sqrt(n_patterns) * s[:, None] * V.T
    y = torch.arange(n_patterns)
    x, y = x.to(get_device()), y.to(get_device())
    return datasets.Dataset(x, y, x, y, n_patterns, name="saxe-patterns",
                            info=dict(strengths=s.tolist()))


def deep_linear(dim: int, width: int, depth: int, init: str, init_std: float = 1e-3) -> MLP:
    """A bias-free linear network of ``depth`` weight matrices, dim -> width -> ... -> dim.

    ``orthogonal``: (semi-)orthogonal matrices (Saxe et al.'s random orthogonal init). With
    ``width == dim`` their product is orthogonal too, at any depth; with ``width > dim`` the
    square middle layers' product is orthogonal, but the semi-orthogonal ends keep a
    dim x dim block of it, whose singular values spread below 1 (a block of a Haar matrix:
    the same spread at every depth, :func:`orthogonal_product_svals`); ``gaussian``: N(0, 1/fan_in) entries (the
    "scaled Gaussian", whose product has singular values spread over orders of magnitude);
    ``small``: N(0, init_std^2) entries (the start of the plateaus)."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    kinds = {"orthogonal": dict(init="orthogonal"), "gaussian": dict(sigma_w=1.0),
             "small": dict(init="normal", init_std=init_std)}
    if init not in kinds:
        raise ValueError(f"init must be one of {list(kinds)}, got {init!r}")
    return MLP(dim, width, depth - 1, dim, "linear", bias=False, **kinds[init])


def orthogonal_product_svals(dim: int, width: int, depth: int, seeds=range(20)) -> np.ndarray:
    """The singular values of the input-output map of :func:`deep_linear` (``orthogonal``),
    one row per seed in ``seeds``, largest first: all 1 when ``width == dim``; with
    ``width > dim`` those of a dim x dim block of a Haar orthogonal matrix, whatever the
    depth (the rectangular ends fix the spread; depth does not add to it)."""
    out = []
    for s in seeds:
        with seeded(int(s)):
            net = deep_linear(dim, width, depth, "orthogonal")
        with torch.no_grad():
            out.append(torch.linalg.svdvals(net(torch.eye(dim))).double().numpy())
    return np.array(out)


def pattern_progress(model: nn.Module, data: datasets.Dataset) -> torch.Tensor:
    """y_c = f(x_c)_c for every pattern c: the fraction of pattern c learned (0 -> 1)."""
    with torch.no_grad():
        return model(data.x_train).diagonal()


def saxe_theory(t, strength: float, n_patterns: int, y0: float) -> np.ndarray:
    """The exact solution for one mode of a one-hidden-layer network.

    Gradient flow on the mode's strength y obeys dy/dt = 2 s y (1 - y): y
    grows exponentially from y0 while it is small (the plateau: nothing
    seems to happen), then saturates at 1 (the sharp drop). Solved, with
    t = lr x steps and s = strength / sqrt(C) the mode's singular value:
    y(t) = 1 / (1 + (1/y0 - 1) exp(-2 s t))  (Saxe et al.)."""
    s = strength / math.sqrt(n_patterns)
    t = np.asarray(t, dtype=float)
    return 1.0 / (1.0 + (1.0 / y0 - 1.0) * np.exp(-2.0 * s * t))


def effective_start(model: MLP, data: datasets.Dataset) -> np.ndarray:
    """The starting point y0 of each mode that :func:`saxe_theory` should use for a two-layer
    net from small random weights: in the early linear phase a_c = W1 v_c and b_c = W2^T e_c
    grow along (a_c + b_c)/2 at rate s_c, so y ~ (lambda_c / s_c) |(a_c + b_c)/2|^2 e^{2 s_c t}."""
    if len(model.hidden) != 1:
        raise ValueError("the exact solution is for one hidden layer (depth = 2)")
    x = data.x_train
    C = len(x)
    strengths = x.norm(dim=1) / math.sqrt(C)  # |x_c| = sqrt(C) s_c
    v = x / x.norm(dim=1, keepdim=True)
    with torch.no_grad():
        a = model.hidden[0].weight @ v.T          # [width, C]
        b = model.head.weight.T                   # [width, C]
        u0 = ((a + b) / 2).pow(2).sum(0)
    lam, s = strengths.pow(2), strengths / math.sqrt(C)
    return (lam / s * u0).cpu().numpy()


# =============================================================================================
# 4. Initial guessing bias
# =============================================================================================


def guessing_bias(logits: torch.Tensor) -> float:
    """The fraction of inputs assigned to the most frequent predicted class, 1 when every
    input gets the same class (Francazi et al.'s initial guessing bias). An unbiased
    classifier gives each class 1/C of the inputs on average, but the largest of C counts
    sits above 1/C by chance: :func:`~.claims.chance_favourite_share` computes it exactly
    (about 0.116 for 1,000 inputs and 10 classes)."""
    if logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits must be [inputs, classes >= 2], "
                         f"got {list(logits.shape)}")
    counts = torch.bincount(logits.argmax(1), minlength=logits.shape[1])
    return float(counts.max() / len(logits))


def favourite_class(logits: torch.Tensor) -> int:
    """The class an untrained network assigns most inputs to."""
    if logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits must be [inputs, classes >= 2], got {list(logits.shape)}")
    return int(torch.bincount(logits.argmax(1), minlength=logits.shape[1]).argmax())
