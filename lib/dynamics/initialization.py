"""Initialization: how the first weights decide whether a deep network can learn.

The chapter ``chapters/initialization.ipynb`` runs the experiments of this module:

1. **Signal propagation at init** (:func:`signal_propagation`): per-layer activation std and
   weight-gradient norm through a deep MLP for zero, small Gaussian, Xavier, He, orthogonal
   and LSUV (:func:`lsuv_`) initializations.
2. **Order and chaos** (:func:`run_chaos`, :func:`trainability`): the mean-field q-map,
   correlation map, chi_1 and depth scale xi_c by Gauss-Hermite quadrature (:func:`q_star`,
   :func:`c_star`, :func:`chi_1`, :func:`depth_scale`, :func:`critical_sigma_w2`), the same
   quantities measured on random tanh networks (:func:`measure_chi_1`,
   :func:`measure_depth_scale`, :func:`measured_critical_sigma_w2`), and a trainability
   heatmap of depth x sigma_w^2 with the 6 xi_c line.
3. **Orthogonal vs Gaussian** (:func:`preactivation_fluctuations`, :func:`run_saxe`,
   :func:`learning_time_vs_depth`): depth-independent preactivation fluctuations with
   orthogonal weights, and Saxe et al.'s deep linear networks.
4. **Initial guessing bias** (:func:`run_guessing_bias`): untrained deep ReLU networks that
   put most inputs in one class.

Everything a figure shows is computed here; the notebook only calls these functions.
Regenerate the precomputed results with ``python -m dynamics.precompute initialization``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from plotly.subplots import make_subplots
from scipy.optimize import brentq

from . import data as datasets
from . import plots, results
from .config import Config, param
from .models import MLP
from .runtime import get_device, get_profile, get_seed
from .train import log_steps, train

INIT_SCHEMES = ("zero", "small", "xavier", "he", "orthogonal", "lsuv")
ACTIVATIONS = ("tanh", "relu")
# the critical weight scale of each activation at sigma_b = 0 (mean-field theory):
# orthogonal weights are drawn with this gain, so that "orthogonal" means dynamical isometry
GAIN = {"tanh": 1.0, "relu": math.sqrt(2.0)}
COMMAND = "python -m dynamics.precompute initialization --profile {profile}"


# =============================================================================================
# Configs: one dataclass per experiment; fields drive presets, widget controls and provenance
# =============================================================================================


@dataclass
class SignalConfig(Config):
    """Section 1: per-layer statistics of a deep MLP at initialization."""

    depth: int = param(50, "hidden layers", low=1, high=300, cpu=100, gpu=200)
    width: int = param(256, "units per hidden layer", low=2, high=4096, cpu=512, gpu=1024)
    activation: str = param("relu", "nonlinearity", choices=ACTIVATIONS)
    init: str = param("he", "initialization scheme", choices=INIT_SCHEMES)
    n_inputs: int = param(256, "MNIST-1D inputs in the batch", low=8, high=4000)
    seed: int = param(0, "seed of the weights", low=0, high=2**31 - 1)


@dataclass
class ChaosConfig(Config):
    """Section 2: mean-field theory of tanh networks and its check on random networks."""

    sigma_b2: float = param(0.05, "bias variance sigma_b^2", low=0.0, high=2.0)
    width: int = param(512, "width of the random networks", low=16, high=8192, smoke=256, gpu=2048)
    depth: int = param(60, "depth of the random networks", low=10, high=1000, smoke=40, gpu=150)
    batch: int = param(64, "inputs (or input pairs) per measurement", low=2, high=4096, gpu=256)
    n_sigma: int = param(12, "sigma_w^2 values with a measured depth scale", low=3, high=100,
                         smoke=8, gpu=24)
    seed: int = param(0, "seed of the random networks", low=0, high=2**31 - 1)


@dataclass
class TrainabilityConfig(Config):
    """Section 2: accuracy after a fixed short training, over depth x sigma_w^2 (tanh MLP)."""

    depths: list = param([4, 8, 16, 24, 32, 48, 64], "depths of the grid",
                         smoke=[4, 16, 32], gpu=[10, 20, 40, 60, 80, 120, 160, 200])
    sigma_w2: list = param([0.5, 1.0, 1.4, 1.76, 2.2, 2.8, 3.5, 4.5], "sigma_w^2 values of the grid",
                           smoke=[0.5, 1.76, 4.0],
                           gpu=[0.5, 0.8, 1.0, 1.2, 1.4, 1.6, 1.76, 1.9, 2.1, 2.4, 2.8, 3.2, 3.8, 4.5])
    sigma_b2: float = param(0.05, "bias variance sigma_b^2", low=0.0, high=2.0)
    width: int = param(64, "units per hidden layer", low=4, high=4096, smoke=32, gpu=256)
    steps: int = param(500, "SGD steps", low=1, high=100000, smoke=150, gpu=2000)
    lr: float = param(0.01, "learning rate (SGD with momentum 0.9)", low=1e-5, high=1.0, log=True)
    batch_size: int = param(128, "mini-batch size", low=1, high=10000)
    n_train: int = param(3000, "MNIST-1D training examples", low=100, high=100000, smoke=1000,
                         gpu=4000)
    seeds: list = param([0], "seeds (accuracies are averaged)", gpu=[0, 1])


@dataclass
class FluctuationConfig(Config):
    """Section 3: fluctuations of preactivations across an ensemble of tanh networks at
    criticality (sigma_w^2 = 1, sigma_b = 0)."""

    depth: int = param(64, "layers", low=2, high=1000, smoke=32, gpu=128)
    width: int = param(128, "units per layer", low=4, high=4096, smoke=64, gpu=256)
    n_nets: int = param(256, "networks in the ensemble (seeds)", low=8, high=100000, smoke=128,
                        gpu=2000)
    seed: int = param(0, "seed of the ensemble", low=0, high=2**31 - 1)


@dataclass
class SaxeConfig(Config):
    """Section 3: a deep linear network learning C patterns of different strengths."""

    n_patterns: int = param(5, "patterns = classes = input dimension", low=2, high=256)
    strength_max: float = param(1.0, "strongest pattern's singular value (x sqrt(C))", low=0.01, high=10.0)
    strength_min: float = param(0.1, "weakest pattern's singular value (x sqrt(C))", low=0.001, high=10.0)
    width: int = param(32, "hidden units per layer", low=1, high=4096)
    depth: int = param(2, "weight matrices (2 = one hidden layer)", low=1, high=256)
    init: str = param("small", "initialization", choices=("small", "orthogonal", "gaussian"))
    init_std: float = param(1e-3, "weight std of the small init", low=1e-8, high=1.0, log=True)
    lr: float = param(0.3, "learning rate (full-batch gradient descent)", low=1e-4, high=10.0, log=True)
    steps: int = param(800, "gradient steps", low=1, high=1000000)
    seed: int = param(0, "seed of the task and the weights", low=0, high=2**31 - 1)


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
    seed: int = param(0, "seed", low=0, high=2**31 - 1)


# =============================================================================================
# 1. Signal propagation at init
# =============================================================================================


def lsuv_(model: MLP, x: torch.Tensor, tol: float = 0.1, max_iter: int = 10) -> MLP:
    """Layer-sequential unit-variance init (Mishkin & Matas, "All you need is a good init").

    Why: Gaussian scales derived for one activation (Xavier, He) are only right on average;
    LSUV measures instead. Start from orthonormal weights, then walk from the input to the
    output and divide each layer's weight by the standard deviation of that layer's output on
    a batch of real data, until the output variance is within ``tol`` of 1 (a few iterations
    at most; for a bias-free linear map one division is exact). Biases are set to zero.
    """
    if x.ndim < 2 or len(x) < 2:
        raise ValueError("lsuv_ needs a batch of at least 2 inputs")
    if not 0 < tol < 1 or max_iter < 1:
        raise ValueError(f"lsuv_ needs 0 < tol < 1 and max_iter >= 1, got {tol}, {max_iter}")
    layers = [*model.hidden, model.head]
    h = x.flatten(1)
    with torch.no_grad():
        for i, layer in enumerate(layers):
            nn.init.orthogonal_(layer.weight)
            if layer.bias is not None:
                layer.bias.zero_()
            for _ in range(max_iter):
                var = layer(h).var()
                if not torch.isfinite(var) or var <= 0:
                    raise ValueError(f"LSUV: layer {i} output has variance {float(var)}; "
                                     "its input is constant (dead units?)")
                if abs(float(var) - 1.0) < tol:
                    break
                layer.weight.div_(var.sqrt())
            if i < len(model.hidden):
                h = model.act(layer(h))
    return model


def build_mlp(in_dim: int, width: int, depth: int, activation: str, init: str,
              x: torch.Tensor | None = None, out_dim: int = 10) -> MLP:
    """An MLP initialized by one of :data:`INIT_SCHEMES`.

    ``small`` is N(0, 0.01^2); ``orthogonal`` uses the activation's critical gain
    (:data:`GAIN`: 1 for tanh, sqrt 2 for ReLU); ``lsuv`` needs a data batch ``x``.
    """
    if init not in INIT_SCHEMES:
        raise ValueError(f"unknown init {init!r}; choose one of {list(INIT_SCHEMES)}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose one of {list(ACTIVATIONS)}")
    if init == "lsuv" and x is None:
        raise ValueError("LSUV initializes from data: pass a batch x")
    scheme = {"small": "normal", "lsuv": "orthogonal"}.get(init, init)
    model = MLP(in_dim, width, depth, out_dim, activation, init=scheme,
                init_std=0.01 if init == "small" else None)
    if init == "orthogonal":
        with torch.no_grad():
            for layer in [*model.hidden, model.head]:
                layer.weight.mul_(GAIN[activation])
    if init == "lsuv":
        lsuv_(model, x)
    return model


def layer_statistics(model: MLP, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Per hidden layer l: the std of its activations phi(z_l) over the batch and units, and
    the Frobenius norm of dL/dW_l for the cross-entropy loss of the batch.

    The two curves are the forward and the backward signal: a good init keeps both flat
    in depth; a bad one makes them shrink or grow geometrically."""
    model.zero_grad(set_to_none=True)
    h = x.flatten(1)
    stds = []
    for layer in model.hidden:
        h = model.act(layer(h))
        stds.append(h.detach().std())
    F.cross_entropy(model.head(h), y).backward()
    grads = [layer.weight.grad.norm() for layer in model.hidden]
    model.zero_grad(set_to_none=True)
    return dict(act_std=torch.stack(stds).tolist(), grad_norm=torch.stack(grads).tolist())


@lru_cache(maxsize=4)
def _mnist1d(n_train: int, n_test: int = 500, seed: int = 0) -> datasets.Dataset:
    return datasets.mnist1d(n_train, n_test, seed=seed)


def signal_propagation(cfg: SignalConfig, inits=INIT_SCHEMES, activations=ACTIVATIONS) -> dict:
    """``{activation: {init: layer_statistics}}`` on a batch of MNIST-1D inputs (cfg.depth,
    cfg.width, cfg.seed; ``cfg.init``/``cfg.activation`` are ignored: all given are run)."""
    d = _mnist1d(max(cfg.n_inputs, 100))
    x, y = d.x_train[:cfg.n_inputs], d.y_train[:cfg.n_inputs]
    out = {}
    for act in activations:
        out[act] = {}
        for init in inits:
            torch.manual_seed(cfg.seed)
            model = build_mlp(d.input_dim, cfg.width, cfg.depth, act, init, x=x).to(x.device)
            out[act][init] = layer_statistics(model, x, y)
    return out


def std_ratio(stats: dict) -> float:
    """Last-layer activation std over first-layer activation std."""
    first, last = stats["act_std"][0], stats["act_std"][-1]
    return float(last / first) if first > 0 else float("nan")


def _positive(values):
    """Zeros (and non-finite values) become None: they cannot be drawn on a log axis."""
    return [v if (v is not None and np.isfinite(v) and v > 0) else None for v in values]


def signal_figure(res: dict, activation: str | None = None):
    """Activation std and gradient norm per layer, one curve per init; a slider over the
    activations (or one activation's figure)."""
    figs = []
    acts = [activation] if activation else list(res)
    for act in acts:
        fig = make_subplots(rows=1, cols=2, subplot_titles=("activation std per layer",
                                                            "‖dL/dW‖ per layer"))
        for i, (init, st) in enumerate(res[act].items()):
            color = plots.PALETTE[INIT_SCHEMES.index(init) % len(plots.PALETTE)] if init in INIT_SCHEMES else plots.PALETTE[i]
            layers = list(range(1, len(st["act_std"]) + 1))
            dead = not any(_positive(st["act_std"]))
            name = init + (" (all exactly 0)" if dead else "")
            fig.add_scatter(x=layers, y=_positive(st["act_std"]), name=name, mode="lines",
                            line=dict(color=color), legendgroup=init, row=1, col=1)
            fig.add_scatter(x=layers, y=_positive(st["grad_norm"]), name=init, mode="lines",
                            line=dict(color=color), legendgroup=init, showlegend=False, row=1, col=2)
        fig.update_yaxes(type="log", exponentformat="power")
        fig.update_xaxes(title_text="layer")
        fig.update_layout(title=f"{act} network at initialization", hovermode="closest",
                          template="plotly_white+dynamics", height=430)
        figs.append(fig)
    if len(figs) == 1:
        return figs[0]
    return plots.slider(figs, acts, name="activation")


def signal_panel(profile: str | None = None):
    """Try it: depth, width, activation, init -> the two per-layer curves of that network."""
    from .widgets import Panel, Slider, controls_for

    base = SignalConfig.for_profile(profile)

    def run(update, depth, width, activation, init):
        cfg = base.replace(depth=int(depth), width=int(width), activation=activation, init=init)
        res = signal_propagation(cfg, inits=[init], activations=[activation])
        ratio = std_ratio(res[activation][init])
        update(status=f"last/first activation std = {ratio:.3g}")
        return signal_figure(res, activation)

    big = get_device().type != "cpu"  # keep the largest network within a laptop's memory
    controls = [Slider("depth", 1, 200, min(base.depth, 200), 1, integer=True),
                Slider("width", 2, 1024 if big else 512, min(base.width, 512), 2, integer=True),
                *controls_for(base, ["activation", "init"])]
    return Panel(run, controls, title="Try it: signal propagation at initialization")


# =============================================================================================
# 2. Order and chaos: mean-field theory (numpy quadrature) ...
# =============================================================================================

PHI = {"tanh": (np.tanh, lambda u: 1.0 / np.cosh(u) ** 2)}


@lru_cache(maxsize=8)
def gauss_hermite(n: int = 81) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights with sum_i w_i f(z_i) ~ E[f(z)], z ~ N(0, 1) (probabilists' Hermite)."""
    z, w = np.polynomial.hermite_e.hermegauss(n)
    return z, w / w.sum()


def _phi(activation: str):
    if activation not in PHI:
        raise ValueError(f"mean-field functions support {list(PHI)}, got {activation!r}")
    return PHI[activation]


def _check_sigmas(sigma_w2, sigma_b2):
    if not (np.isfinite(sigma_w2) and sigma_w2 > 0):
        raise ValueError(f"sigma_w2 must be a positive number, got {sigma_w2}")
    if not (np.isfinite(sigma_b2) and sigma_b2 >= 0):
        raise ValueError(f"sigma_b2 must be >= 0, got {sigma_b2}")


def q_map(q: float, sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """The length map q_{l+1} = sigma_w^2 E[phi(sqrt(q_l) z)^2] + sigma_b^2 (Poole et al.):
    the squared length per unit of a preactivation vector, one layer deeper."""
    phi, _ = _phi(activation)
    z, w = gauss_hermite()
    return float(sigma_w2 * np.dot(w, phi(np.sqrt(max(q, 0.0)) * z) ** 2) + sigma_b2)


def q_star(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """The fixed point q* of the length map (0 when sigma_b = 0 and the origin is stable)."""
    _check_sigmas(sigma_w2, sigma_b2)
    g = lambda q: q_map(q, sigma_w2, sigma_b2, activation) - q  # noqa: E731
    hi = sigma_w2 + sigma_b2 + 1.0  # tanh^2 <= 1 bounds the map
    lo = 1e-12
    if g(lo) <= 0:  # sigma_b = 0 and sigma_w^2 <= 1: only the trivial fixed point
        return 0.0
    return float(brentq(g, lo, hi, xtol=1e-14, rtol=1e-12))


def _pair_expectation(f1, f2, q: float, c: float) -> float:
    """E[f1(u1) f2(u2)] for (u1, u2) Gaussian with variances q and correlation c."""
    z, w = gauss_hermite()
    z1, z2 = np.meshgrid(z, z, indexing="ij")
    ww = np.outer(w, w)
    c = float(np.clip(c, -1.0, 1.0))
    u1 = np.sqrt(q) * z1
    u2 = np.sqrt(q) * (c * z1 + np.sqrt(1.0 - c * c) * z2)
    return float(np.sum(ww * f1(u1) * f2(u2)))


def c_map(c: float, sigma_w2: float, sigma_b2: float, activation: str = "tanh",
          q: float | None = None) -> float:
    """The correlation map: the correlation of two inputs' preactivations one layer deeper,
    c_{l+1} = (sigma_w^2 E[phi(u1) phi(u2)] + sigma_b^2) / q*, at the length fixed point."""
    phi, _ = _phi(activation)
    q = q_star(sigma_w2, sigma_b2, activation) if q is None else q
    if q <= 0:
        return 1.0
    return (sigma_w2 * _pair_expectation(phi, phi, q, c) + sigma_b2) / q


def chi_1(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """chi_1 = sigma_w^2 E[phi'(sqrt(q*) z)^2]: the mean squared singular value of one
    layer's Jacobian, the slope of the correlation map at c = 1. chi_1 < 1: ordered (nearby
    inputs converge, gradients vanish); chi_1 > 1: chaotic (they diverge, gradients explode)."""
    _, dphi = _phi(activation)
    z, w = gauss_hermite()
    q = q_star(sigma_w2, sigma_b2, activation)
    return float(sigma_w2 * np.dot(w, dphi(np.sqrt(q) * z) ** 2))


def c_star(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """The stable fixed point of the correlation map: 1 in the ordered phase (chi_1 <= 1),
    below 1 in the chaotic phase."""
    if chi_1(sigma_w2, sigma_b2, activation) <= 1.0:
        return 1.0
    q = q_star(sigma_w2, sigma_b2, activation)
    g = lambda c: c_map(c, sigma_w2, sigma_b2, activation, q) - c  # noqa: E731
    hi = 1.0 - 1e-7
    if g(hi) >= 0:  # chi_1 barely above 1: c* indistinguishable from 1
        return 1.0
    if g(0.0) <= 0:  # sigma_b = 0: the fixed point is c* = 0 (odd phi)
        return 0.0
    return float(brentq(g, 0.0, hi, xtol=1e-12))


def chi_c(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """The slope of the correlation map at its stable fixed point c*,
    chi_c = sigma_w^2 E[phi'(u1) phi'(u2)] (equal to chi_1 in the ordered phase)."""
    _, dphi = _phi(activation)
    c = c_star(sigma_w2, sigma_b2, activation)
    if c >= 1.0:
        return chi_1(sigma_w2, sigma_b2, activation)
    q = q_star(sigma_w2, sigma_b2, activation)
    return sigma_w2 * _pair_expectation(dphi, dphi, q, c)


def depth_scale(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """xi_c = -1 / ln chi_c (Schoenholz et al.): the number of layers over which the
    correlation of two inputs relaxes to c*. It diverges on the critical line chi_1 = 1;
    networks train when depth is below about 6 xi_c."""
    x = chi_c(sigma_w2, sigma_b2, activation)
    return float("inf") if x >= 1.0 else float(-1.0 / math.log(x))


def critical_sigma_w2(sigma_b2: float, activation: str = "tanh") -> float:
    """The sigma_w^2 where chi_1 = 1 at this sigma_b^2: the edge of chaos."""
    _check_sigmas(1.0, sigma_b2)
    # maxiter: at sigma_b^2 = 0 chi_1 - 1 is flat to second order right of its root (q* ~ 0),
    # where brentq needs about 110 iterations
    return float(brentq(lambda s: chi_1(s, sigma_b2, activation) - 1.0, 0.2, 50.0, xtol=1e-10,
                        maxiter=500))


# ... and the same quantities measured on random networks (torch) ------------------------------


def _generator(seed: int) -> torch.Generator:
    """A generator on the book's device: random networks are drawn where they run."""
    return torch.Generator(device=get_device()).manual_seed(int(seed))


def _randn(*shape, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, device=gen.device)


def _random_layer(width: int, gen: torch.Generator):
    """W with N(0, 1/width) entries and b with N(0, 1) entries (scaled by sigma_w, sigma_b)."""
    return _randn(width, width, gen=gen) / math.sqrt(width), _randn(width, gen=gen)


def measure_chi_1(sigma_w2, sigma_b2: float, width: int = 256, depth: int = 40, burn: int = 10,
                  batch: int = 32, seed: int = 0) -> np.ndarray:
    """chi_1 measured on random tanh networks: the growth per layer of a small perturbation
    (a Jacobian-vector product), after ``burn`` layers that let the length reach q*.

    For each sigma_w^2 the same random matrices are used (common random numbers), so the
    measured chi_1 is a smooth function of sigma_w^2. Returns exp(mean_l ln r_l) with
    r_l = sum_batch |J_l v|^2 / sum_batch |v|^2."""
    s = np.atleast_1d(np.asarray(sigma_w2, dtype=float))
    if np.any(s <= 0) or sigma_b2 < 0 or depth <= burn or width < 2 or batch < 1:
        raise ValueError("measure_chi_1 needs sigma_w2 > 0, sigma_b2 >= 0, depth > burn, "
                         "width >= 2, batch >= 1")
    gen = _generator(seed)
    sw = torch.tensor(np.sqrt(s), dtype=torch.float32, device=gen.device).view(-1, 1, 1)
    sb = math.sqrt(sigma_b2)
    z = _randn(batch, width, gen=gen).expand(len(s), -1, -1)
    v = _randn(batch, width, gen=gen).expand(len(s), -1, -1)
    logs = []
    for layer in range(depth):
        W, b = _random_layer(width, gen)
        t = torch.tanh(z)
        z = sw * (t @ W.T) + sb * b
        v_new = sw * (((1 - t * t) * v) @ W.T)
        ratio = v_new.pow(2).sum((1, 2)) / v.pow(2).sum((1, 2))
        if layer >= burn:
            logs.append(ratio.log())
        v = v_new / ratio.sqrt().view(-1, 1, 1)  # renormalize: keeps numbers O(1)
    return torch.stack(logs).mean(0).exp().cpu().numpy()


def measured_critical_sigma_w2(sigma_b2: float, width: int = 256, depth: int = 40,
                               batch: int = 32, seed: int = 0, lo: float = 0.3,
                               hi: float = 8.0) -> float:
    """The sigma_w^2 where the measured chi_1 crosses 1 (root of ln chi_1 by Brent's method)."""
    f = lambda s: float(np.log(measure_chi_1(s, sigma_b2, width, depth, 10, batch, seed)[0]))  # noqa: E731
    if f(lo) * f(hi) > 0:
        raise ValueError(f"measured chi_1 does not cross 1 between sigma_w^2 = {lo} and {hi}")
    return float(brentq(f, lo, hi, xtol=1e-4))


def measure_map_iterates(sigma_w2: float, sigma_b2: float, starts, kind: str = "q",
                         width: int = 512, depth: int = 8, batch: int = 32, seed: int = 0) -> list:
    """Iterate the length (``kind="q"``) or correlation (``kind="c"``) map on a random tanh
    network: for each starting value, the measured sequence q^0, q^1, ... (or c^0, c^1, ...).
    Correlations start at q* (theory) so that they probe the map at its fixed length."""
    if kind not in ("q", "c"):
        raise ValueError(f"kind must be 'q' or 'c', got {kind!r}")
    gen = _generator(seed)
    starts = torch.tensor(list(starts), dtype=torch.float32, device=gen.device)
    S = len(starts)
    x = _randn(batch, width, gen=gen)
    x = x / x.pow(2).mean(1, keepdim=True).sqrt()  # each input exactly q = 1
    if kind == "q":
        z = starts.sqrt().view(S, 1, 1) * x  # [S, batch, width]
    else:
        e = _randn(batch, width, gen=gen)
        e = e - (e * x).mean(1, keepdim=True) * x  # exactly orthogonal to x
        e = e / e.pow(2).mean(1, keepdim=True).sqrt()
        c = starts.view(S, 1, 1)
        q0 = math.sqrt(q_star(sigma_w2, sigma_b2) or 1.0)
        z = q0 * torch.stack([x.expand(S, -1, -1), c * x + (1 - c * c).clamp(min=0).sqrt() * e], 0)
    sw, sb = math.sqrt(sigma_w2), math.sqrt(sigma_b2)

    def measure(z):
        if kind == "q":
            return z.pow(2).mean((1, 2))
        a, b = z[0], z[1]
        return ((a * b).mean(-1) / (a.pow(2).mean(-1) * b.pow(2).mean(-1)).sqrt()).mean(-1)

    seqs = [measure(z)]
    for _ in range(depth):
        W, b = _random_layer(width, gen)
        z = sw * (torch.tanh(z) @ W.T) + sb * b
        seqs.append(measure(z))
    return torch.stack(seqs, 1).tolist()


def measure_depth_scale(sigma_w2: float, sigma_b2: float, width: int = 512, depth: int = 60,
                        pairs: int = 64, seed: int = 0) -> tuple[float, int]:
    """xi_c measured on a random tanh network: two pairs of inputs (x, x') and (x, x''), built
    from the same two random vectors, start at correlations 0.1 apart just below c* (at the
    fixed length q*); their correlations converge geometrically,
    |c_l - c'_l| ~ exp(-l / xi_c). A line is fitted to ln|c_l - c'_l| over the layers where
    the gap is below 0.3 (the linear regime) and above 4 standard errors (the finite-width
    noise floor). Returns (xi, number of layers used); NaN when fewer than 4 layers qualify."""
    cs = c_star(sigma_w2, sigma_b2)
    c0 = (min(cs, 0.97) - 0.1, min(cs, 0.97))
    gen = _generator(seed)
    x = _randn(pairs, width, gen=gen)
    e = _randn(pairs, width, gen=gen)  # shared by both pairs: their noise cancels
    c = torch.tensor(c0, dtype=torch.float32, device=gen.device).view(2, 1, 1)
    z = math.sqrt(q_star(sigma_w2, sigma_b2) or 1.0) * torch.cat(
        [x.unsqueeze(0), c * x + (1 - c * c).sqrt() * e], 0)  # [3, pairs, width], length q*
    sw, sb = math.sqrt(sigma_w2), math.sqrt(sigma_b2)
    gaps, errors = [], []
    for _ in range(depth):
        W, b = _random_layer(width, gen)
        z = sw * (torch.tanh(z) @ W.T) + sb * b
        n = z.norm(dim=-1)
        corr = (z[1:] * z[0]).sum(-1) / (n[1:] * n[0])  # [2, pairs]
        diff = corr[1] - corr[0]
        gaps.append(diff.mean().abs())
        errors.append(diff.std() / math.sqrt(pairs))
    gaps, errors = torch.stack(gaps).cpu().numpy(), torch.stack(errors).cpu().numpy()
    layers = np.arange(1, depth + 1)
    ok = (gaps < 0.3) & (gaps > 4 * errors) & (gaps > 1e-6)
    # keep the first run of good layers after the gap entered the linear regime
    idx = np.flatnonzero(ok)
    if len(idx) < 4:
        return float("nan"), int(len(idx))
    run = idx[: np.argmax(np.diff(np.r_[idx, idx[-1] + 2]) > 1) + 1]
    if len(run) < 4:
        return float("nan"), int(len(run))
    slope = np.polyfit(layers[run], np.log(gaps[run]), 1)[0]
    return (float(-1.0 / slope) if slope < 0 else float("inf")), int(len(run))


def run_chaos(cfg: ChaosConfig, sigma_b2_line=(0.02, 0.05, 0.1, 0.2, 0.4, 0.7, 1.0),
              map_sigma_w2=(1.0, 1.76, 3.0)) -> dict:
    """Theory and measurement for the four panels of the order-to-chaos figure."""
    t0 = time.perf_counter()
    sb2 = cfg.sigma_b2
    out = dict(sigma_b2=sb2)
    # (a) q-map and (b) c-map: theory curves and measured iterates
    q_in = np.linspace(0, 3, 61)
    c_in = np.linspace(-0.2, 1, 61)
    out["q_map"], out["c_map"] = [], []
    for s in map_sigma_w2:
        qs = q_star(s, sb2)
        out["q_map"].append(dict(
            sigma_w2=s, q_in=q_in.tolist(), q_out=[q_map(q, s, sb2) for q in q_in], q_star=qs,
            measured=measure_map_iterates(s, sb2, [0.05, 2.8], "q", cfg.width, 6, cfg.batch, cfg.seed)))
        out["c_map"].append(dict(
            sigma_w2=s, c_in=c_in.tolist(), c_out=[c_map(c, s, sb2, q=qs) for c in c_in],
            c_star=c_star(s, sb2),
            measured=measure_map_iterates(s, sb2, [0.0, 0.6], "c", cfg.width, 6, cfg.batch, cfg.seed)))
    # (c) the critical line chi_1 = 1: theory on a fine grid, measured at a few sigma_b^2
    line_b2 = np.linspace(0.0, max(sigma_b2_line) * 1.05, 40)
    out["line_theory"] = dict(sigma_b2=line_b2.tolist(),
                              sigma_w2=[critical_sigma_w2(b) for b in line_b2])
    out["line_measured"] = dict(
        sigma_b2=list(sigma_b2_line),
        sigma_w2=[measured_critical_sigma_w2(b, cfg.width, cfg.depth, cfg.batch, cfg.seed)
                  for b in sigma_b2_line])
    out["critical_theory"] = critical_sigma_w2(sb2)
    out["critical_measured"] = measured_critical_sigma_w2(sb2, cfg.width, cfg.depth, cfg.batch, cfg.seed)
    # (d) the depth scale xi_c against sigma_w^2
    fine = np.linspace(0.3, 4.5, 85)
    out["xi_theory"] = dict(sigma_w2=fine.tolist(), xi=[depth_scale(s, sb2) for s in fine])
    meas_s = np.linspace(0.4, 4.5, cfg.n_sigma)
    xi_m = [measure_depth_scale(s, sb2, cfg.width, cfg.depth, cfg.batch, cfg.seed) for s in meas_s]
    out["xi_measured"] = dict(sigma_w2=meas_s.tolist(), xi=[x for x, _ in xi_m],
                              layers_used=[n for _, n in xi_m],
                              xi_theory=[depth_scale(s, sb2) for s in meas_s])
    out["wall_time"] = time.perf_counter() - t0
    return out


def chaos_figure(res: dict):
    """Four panels, theory as lines and measurements on random networks as markers."""
    fig = make_subplots(rows=2, cols=2, vertical_spacing=0.16, horizontal_spacing=0.1,
                        subplot_titles=("length map q(l+1) vs q(l)",
                                        "correlation map c(l+1) vs c(l)",
                                        "critical line χ₁ = 1",
                                        "depth scale ξ_c (σ_b² = %g)" % res["sigma_b2"]))
    for i, (qm, cm) in enumerate(zip(res["q_map"], res["c_map"])):
        color = plots.PALETTE[i]
        label = f"σ_w² = {qm['sigma_w2']:g}"
        fig.add_scatter(x=qm["q_in"], y=qm["q_out"], mode="lines", name=label + " theory",
                        line=dict(color=color), legendgroup=label, row=1, col=1)
        for seq in qm["measured"]:
            fig.add_scatter(x=seq[:-1], y=seq[1:], mode="markers", name=label + " measured",
                            marker=dict(color=color, size=7, symbol="circle-open"),
                            legendgroup=label, showlegend=False, row=1, col=1)
        fig.add_scatter(x=cm["c_in"], y=cm["c_out"], mode="lines", name=label, showlegend=False,
                        line=dict(color=color), legendgroup=label, row=1, col=2)
        for seq in cm["measured"]:
            fig.add_scatter(x=seq[:-1], y=seq[1:], mode="markers", showlegend=False,
                            name=label + " measured", legendgroup=label,
                            marker=dict(color=color, size=7, symbol="circle-open"), row=1, col=2)
    fig.add_scatter(x=[0, 3], y=[0, 3], mode="lines", line=dict(color="#999", dash="dot"),
                    name="identity", showlegend=False, row=1, col=1)
    fig.add_scatter(x=[-0.2, 1], y=[-0.2, 1], mode="lines", line=dict(color="#999", dash="dot"),
                    name="identity", showlegend=False, row=1, col=2)
    lt, lm = res["line_theory"], res["line_measured"]
    fig.add_scatter(x=lt["sigma_w2"], y=lt["sigma_b2"], mode="lines", name="theory (lines)",
                    line=dict(color="#222"), row=2, col=1)
    fig.add_scatter(x=lm["sigma_w2"], y=lm["sigma_b2"], mode="markers", name="measured (markers)",
                    marker=dict(color="#222", size=8, symbol="circle-open"), row=2, col=1)
    fig.add_annotation(text="ordered", x=0.8, y=0.8 * max(lt["sigma_b2"]), showarrow=False,
                       row=2, col=1)
    fig.add_annotation(text="chaotic", x=max(lt["sigma_w2"]) * 0.95, y=0.1 * max(lt["sigma_b2"]),
                       showarrow=False, row=2, col=1)
    xt, xm = res["xi_theory"], res["xi_measured"]
    fig.add_scatter(x=xt["sigma_w2"], y=[min(v, 1e3) for v in xt["xi"]], mode="lines",
                    name="ξ_c theory", line=dict(color="#222"), showlegend=False, row=2, col=2)
    fig.add_scatter(x=xm["sigma_w2"], y=_positive(xm["xi"]), mode="markers", name="ξ_c measured",
                    marker=dict(color="#222", size=8, symbol="circle-open"), showlegend=False,
                    row=2, col=2)
    fig.update_xaxes(title_text="q(l)", row=1, col=1)
    fig.update_xaxes(title_text="c(l)", row=1, col=2)
    fig.update_xaxes(title_text="σ_w²", row=2, col=1)
    fig.update_yaxes(title_text="σ_b²", row=2, col=1)
    fig.update_xaxes(title_text="σ_w²", row=2, col=2)
    fig.update_yaxes(title_text="ξ_c (layers)", type="log", dtick=1, row=2, col=2)
    fig.update_layout(template="plotly_white+dynamics", height=780, hovermode="closest",
                      margin=dict(t=90),
                      title="Order to chaos in tanh networks: mean-field theory (lines), "
                            "random networks (markers)")
    return fig


# ... and trainability -------------------------------------------------------------------------


def _train_grid(model_fn, data, configs, **kwargs):
    """Train one model per config (all of one architecture) with the book's sweep engine."""
    from .sweep import train_many

    return train_many(model_fn, data, configs, **kwargs)


def trainability(cfg: TrainabilityConfig, data: datasets.Dataset | None = None,
                 progress: bool | None = None, callback=None) -> dict:
    """Training accuracy of tanh MLPs (sigma_b^2 fixed) after ``cfg.steps`` SGD steps, for
    every depth x sigma_w^2 of the grid (one ``train_many`` sweep per depth; a diverged run
    counts as chance, 0.1), and the theory line 6 xi_c(sigma_w^2).
    ``callback(done_fraction)`` reports progress."""
    from .sweep import grid

    if not cfg.depths or not cfg.sigma_w2 or not cfg.seeds:
        raise ValueError("TrainabilityConfig needs non-empty depths, sigma_w2 and seeds")
    if any(int(d) < 1 for d in cfg.depths) or any(s <= 0 for s in cfg.sigma_w2):
        raise ValueError("depths must be >= 1 and sigma_w2 values > 0")
    data = data or _mnist1d(cfg.n_train)
    t0 = time.perf_counter()
    acc = np.zeros((len(cfg.depths), len(cfg.sigma_w2)))
    for i, depth in enumerate(cfg.depths):
        def model_fn(c, depth=int(depth)):
            return MLP(data.input_dim, cfg.width, depth, data.n_classes, "tanh",
                       sigma_w=math.sqrt(c["sigma_w2"]), sigma_b=math.sqrt(cfg.sigma_b2))

        res = _train_grid(model_fn, data, grid(sigma_w2=list(cfg.sigma_w2), seed=list(cfg.seeds)),
                          steps=cfg.steps, optimizer="momentum", lr=cfg.lr,
                          batch_size=cfg.batch_size, eval_steps=[cfg.steps], progress=progress,
                          # deep, narrow nets: on a CPU one model at a time is faster than
                          # stacking a handful (measured 3.5x at depth 8, 1.3x at depth 32)
                          strategy="sequential" if data.device.type == "cpu" else "auto")
        final = np.array([np.nan if h.diverged else h.last("train_acc") for h in res.histories])
        acc[i] = np.nanmean(np.nan_to_num(final, nan=0.1).reshape(len(cfg.sigma_w2), len(cfg.seeds)), 1)
        if callback:
            callback((i + 1) / len(cfg.depths))
    fine = np.linspace(min(cfg.sigma_w2), max(cfg.sigma_w2), 60)
    return dict(depths=[int(d) for d in cfg.depths], sigma_w2=list(cfg.sigma_w2), acc=acc.tolist(),
                line_sigma_w2=fine.tolist(), six_xi=[6 * depth_scale(s, cfg.sigma_b2) for s in fine],
                sigma_b2=cfg.sigma_b2, steps=cfg.steps, width=cfg.width,
                wall_time=time.perf_counter() - t0)


def trainability_figure(res: dict, title: str = ""):
    """The accuracy heatmap over (sigma_w^2, depth) with the 6 xi_c line of mean-field theory."""
    fig = plots.heatmap(res["acc"], res["sigma_w2"], res["depths"], zmin=0.1, zmax=1.0,
                        title=title or f"Training accuracy after {res['steps']} SGD steps "
                                       f"(tanh, width {res['width']}, σ_b² = {res['sigma_b2']:g})",
                        xtitle="σ_w²", ytitle="depth", ztitle="train acc", text_fmt=".2f")
    top = max(res["depths"]) * 1.1
    y = [v if v < top else None for v in res["six_xi"]]
    fig.add_scatter(x=res["line_sigma_w2"], y=y, mode="lines", name="6 ξ_c (theory)",
                    line=dict(color="white", width=3, dash="dash"))
    fig.update_yaxes(range=[0, top])
    fig.update_layout(showlegend=True, legend=dict(orientation="h", x=0, y=-0.2, bgcolor="#555",
                                                   font=dict(color="white")))
    return fig


def trainability_panel(profile: str | None = None):
    """Try it: a small trainability heatmap, live."""
    from .widgets import Panel, Slider

    base = TrainabilityConfig.for_profile("smoke")

    def run(update, max_depth, n_sigma, width, steps, sigma_b2):
        depths = sorted({int(v) for v in np.linspace(2, max_depth, 4)})
        sig = np.round(np.linspace(0.5, 4.5, int(n_sigma)), 2).tolist()
        cfg = base.replace(depths=depths, sigma_w2=sig, width=int(width), steps=int(steps),
                           sigma_b2=float(sigma_b2))
        res = trainability(cfg, progress=False, callback=lambda f: update(progress=f))
        return trainability_figure(res)

    controls = [Slider("max_depth", 8, 96, 32, 8, integer=True, description="max depth"),
                Slider("n_sigma", 3, 9, 5, 1, integer=True, description="σ_w² values"),
                Slider("width", 8, 128, base.width, 8, integer=True, description="width"),
                Slider("steps", 50, 1000, base.steps, 50, integer=True, description="SGD steps"),
                Slider("sigma_b2", 0.0, 0.5, base.sigma_b2, 0.01, description="σ_b²")]
    return Panel(run, controls, title="Try it: a live trainability heatmap (small)")


# =============================================================================================
# 3. Orthogonal vs Gaussian
# =============================================================================================


def haar_orthogonal(n_mats: int, n: int, gen: torch.Generator) -> torch.Tensor:
    """``n_mats`` independent n x n orthogonal matrices from the Haar measure (QR of a
    Gaussian matrix with the signs of R's diagonal moved into Q)."""
    q, r = torch.linalg.qr(_randn(n_mats, n, n, gen=gen))
    return q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)


def preactivation_fluctuations(init: str, depth: int, width: int, n_nets: int,
                               sigma_w2: float = 1.0, seed: int = 0) -> np.ndarray:
    """n Var[G_l] / E[G_l]^2 across an ensemble of tanh networks, per layer l, where
    G_l = |z_l|^2 / n is the mean squared preactivation of one fixed input.

    Why this number: to leading order in 1/n it is 2 + V_l / K_l^2, with V the connected
    four-point correlator of preactivations that controls finite-width effects. With
    Gaussian weights at criticality it grows linearly with depth; with orthogonal weights
    (which preserve norms exactly) it stays flat (Day, Kahn & Roberts)."""
    if init not in ("orthogonal", "gaussian"):
        raise ValueError(f"init must be 'orthogonal' or 'gaussian', got {init!r}")
    if depth < 1 or width < 2 or n_nets < 2:
        raise ValueError("need depth >= 1, width >= 2 and at least 2 networks")
    gen = _generator(seed)
    x = _randn(width, gen=gen)
    h = (x / x.norm() * math.sqrt(width)).expand(n_nets, width)  # one input, |x|^2 = n
    out = []
    for _ in range(depth):
        if init == "orthogonal":
            W = math.sqrt(sigma_w2) * haar_orthogonal(n_nets, width, gen)
        else:
            W = _randn(n_nets, width, width, gen=gen) * math.sqrt(sigma_w2 / width)
        z = torch.einsum("kij,kj->ki", W, h)
        G = z.pow(2).mean(1)
        out.append(float(width * G.var() / G.mean() ** 2))
        h = torch.tanh(z)
    return np.asarray(out)


def run_fluctuations(cfg: FluctuationConfig) -> dict:
    layers = np.arange(1, cfg.depth + 1)
    res = dict(layers=layers.tolist(), width=cfg.width, n_nets=cfg.n_nets)
    for init in ("gaussian", "orthogonal"):
        res[init] = preactivation_fluctuations(init, cfg.depth, cfg.width, cfg.n_nets,
                                               seed=cfg.seed).tolist()
    for init in ("gaussian", "orthogonal"):
        res[f"{init}_slope"] = float(np.polyfit(layers, res[init], 1)[0])
    return res


def fluctuations_figure(res: dict):
    fig = plots.figure(f"Preactivation fluctuations across {res['n_nets']} tanh networks "
                       f"(width {res['width']}, σ_w² = 1, σ_b = 0)", "layer l",
                       "n · Var[G_l] / E[G_l]²")
    layers = res["layers"]
    fig.add_scatter(x=layers, y=res["gaussian"], mode="lines+markers", name="Gaussian weights",
                    marker=dict(size=4))
    fig.add_scatter(x=layers, y=res["orthogonal"], mode="lines+markers", name="orthogonal weights",
                    marker=dict(size=4))
    fig.add_scatter(x=layers, y=[2 + 2 * l / 3 for l in layers], mode="lines",
                    name="2 + 2l/3 (leading order, Gaussian)", line=dict(color="#777", dash="dash"))
    return fig


# -- Saxe et al.: a deep linear network learning patterns of different strengths ---------------


def saxe_task(n_patterns: int = 10, strength_max: float = 1.0, strength_min: float = 0.1,
              seed: int = 0) -> datasets.Dataset:
    """C patterns, one per class: input x_c = sqrt(C) s_c v_c with orthonormal v_c, label c.

    With one-hot targets and the mean squared error, the input-output correlation is
    Sigma_31 = sum_c (s_c / sqrt C) e_c v_c^T and the input correlation Sigma_11 =
    sum_c s_c^2 v_c v_c^T share their singular vectors, so gradient descent decouples into one
    mode per pattern (Saxe et al.): pattern c is learned on its own time scale ~ 1/s_c."""
    if n_patterns < 2 or not 0 < strength_min <= strength_max:
        raise ValueError("need n_patterns >= 2 and 0 < strength_min <= strength_max")
    gen = torch.Generator().manual_seed(seed)  # the task is the same on every device
    V = haar_orthogonal(1, n_patterns, gen)[0]
    s = torch.tensor(np.geomspace(strength_max, strength_min, n_patterns), dtype=torch.float32)
    x = math.sqrt(n_patterns) * s[:, None] * V.T
    y = torch.arange(n_patterns)
    device = datasets.get_device()
    return datasets.Dataset(x.to(device), y.to(device), x.to(device), y.to(device), n_patterns,
                            name="saxe-patterns", info=dict(strengths=s.tolist()))


def deep_linear(dim: int, width: int, depth: int, init: str, init_std: float = 1e-3) -> MLP:
    """A bias-free linear network of ``depth`` weight matrices, dim -> width -> ... -> dim.

    ``orthogonal``: (semi-)orthogonal matrices (Saxe et al.'s random orthogonal init);
    ``gaussian``: N(0, 1/fan_in) entries (variance-preserving "scaled Gaussian");
    ``small``: N(0, init_std^2) entries."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    kinds = {"orthogonal": dict(init="orthogonal"), "gaussian": dict(sigma_w=1.0),
             "small": dict(init="normal", init_std=init_std)}
    if init not in kinds:
        raise ValueError(f"init must be one of {list(kinds)}, got {init!r}")
    return MLP(dim, width, depth - 1, dim, "linear", bias=False, **kinds[init])


def pattern_progress(model: nn.Module, data: datasets.Dataset) -> torch.Tensor:
    """y_c = f(x_c)_c for every pattern c: the fraction of pattern c learned (0 -> 1)."""
    with torch.no_grad():
        return model(data.x_train).diagonal()


def saxe_theory(t, strength: float, n_patterns: int, y0: float) -> np.ndarray:
    """The exact one-hidden-layer solution for one mode (Saxe et al.): with t = lr x steps,
    y(t) = 1 / (1 + (1/y0 - 1) exp(-2 s t)), s = strength / sqrt(C) the mode's singular value."""
    s = strength / math.sqrt(n_patterns)
    t = np.asarray(t, dtype=float)
    return 1.0 / (1.0 + (1.0 / y0 - 1.0) * np.exp(-2.0 * s * t))


def effective_start(model: MLP, data: datasets.Dataset) -> np.ndarray:
    """The starting point y0 of each mode that the theory should use for a two-layer net
    from small random weights: in the early linear phase a_c = W1 v_c and b_c = W2^T e_c grow
    along (a_c + b_c)/2 at rate s_c, so y ~ (lambda_c / s_c) |(a_c + b_c)/2|^2 e^{2 s_c t}."""
    if len(model.hidden) != 1:
        raise ValueError("the exact solution is for one hidden layer (depth = 2)")
    x = data.x_train
    C = len(x)
    strengths = x.norm(dim=1) / math.sqrt(C)  # s_c * ... : |x_c| = sqrt(C) s_c
    v = x / x.norm(dim=1, keepdim=True)
    with torch.no_grad():
        a = model.hidden[0].weight @ v.T          # [width, C]
        b = model.head.weight.T                   # [width, C]
        u0 = ((a + b) / 2).pow(2).sum(0)
    lam, s = strengths.pow(2), strengths / math.sqrt(C)  # lambda_c = s_c^2, s = s_c / sqrt C
    return (lam / s * u0).cpu().numpy()


def run_saxe(cfg: SaxeConfig, callbacks=()) -> dict:
    """Train one deep linear network on :func:`saxe_task` by full-batch gradient descent,
    recording the loss and every pattern's progress y_c; add the exact two-layer solution."""
    data = saxe_task(cfg.n_patterns, cfg.strength_max, cfg.strength_min, cfg.seed)
    torch.manual_seed(cfg.seed)
    model = deep_linear(cfg.n_patterns, cfg.width, cfg.depth, cfg.init, cfg.init_std).to(data.device)
    y0 = effective_start(model, data) if cfg.depth == 2 and cfg.init == "small" else None
    metrics = {f"y{c}": (lambda m, d, c=c: pattern_progress(m, d)[c]) for c in range(cfg.n_patterns)}
    h = train(model, data, steps=cfg.steps, optimizer="sgd", lr=cfg.lr, loss="mse",
              eval_steps=range(0, cfg.steps + 1, max(1, cfg.steps // 150)), metrics=metrics,
              eval_test=False, callbacks=list(callbacks), seed=cfg.seed)
    out = dict(steps=h.steps, loss=h["train_loss"].tolist() if len(h) else [],
               progress=[h[f"y{c}"].tolist() if len(h) else [] for c in range(cfg.n_patterns)],
               strengths=data.info["strengths"], lr=cfg.lr, depth=cfg.depth, init=cfg.init,
               status=h.status)
    if y0 is not None:
        t = np.asarray(h.steps, dtype=float) * cfg.lr
        out["theory"] = [saxe_theory(t, s * 1.0, cfg.n_patterns, y).tolist()
                         for s, y in zip(data.info["strengths"], y0)]
    return out


def saxe_figure(res: dict):
    """Left: the loss, a staircase of plateaus and drops. Right: each pattern's progress
    y_c (lines), with the exact solution (dashed) for one hidden layer."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", "pattern progress y_c"))
    fig.add_scatter(x=res["steps"], y=res["loss"], mode="lines", name="loss",
                    line=dict(color="#222"), row=1, col=1)
    n = len(res["progress"])
    for c, ys in enumerate(res["progress"]):
        color = plots.PALETTE[c % len(plots.PALETTE)]
        fig.add_scatter(x=res["steps"], y=ys, mode="lines", line=dict(color=color),
                        name=f"s = {res['strengths'][c]:.2f}", legendgroup=str(c), row=1, col=2)
        if "theory" in res:
            fig.add_scatter(x=res["steps"], y=res["theory"][c], mode="lines",
                            line=dict(color=color, dash="dash", width=1), showlegend=False,
                            name=f"theory s = {res['strengths'][c]:.2f}", legendgroup=str(c),
                            row=1, col=2)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(title_text="½‖f(x) − y‖²", row=1, col=1)
    fig.update_yaxes(title_text="y_c", row=1, col=2)
    extra = " (dashed: exact solution)" if "theory" in res else ""
    fig.update_layout(template="plotly_white+dynamics", hovermode="closest", height=430,
                      title=f"Deep linear network, {res['depth']} weight matrices, {res['init']} init, "
                            f"{n} patterns{extra}")
    return fig


def saxe_panel(profile: str | None = None):
    """Try it: depth, init, learning rate of the deep linear network."""
    from .widgets import Panel, controls_for

    base = SaxeConfig.for_profile(profile)

    def run(update, depth, init, lr, init_std, steps):
        cfg = base.replace(depth=int(depth), init=init, lr=float(lr), init_std=float(init_std),
                           steps=int(steps))
        res = run_saxe(cfg, callbacks=[lambda step, h, m: update(progress=step / cfg.steps)])
        if res["status"] != "ok":
            update(status=res["status"])
        return saxe_figure(res)

    return Panel(run, controls_for(base, ["depth", "init", "lr", "init_std", "steps"]),
                 title="Try it: a deep linear network")


def learning_time_vs_depth(cfg: DepthTimeConfig, inits=("orthogonal", "gaussian"),
                           progress: bool | None = None, callback=None) -> dict:
    """Steps to learn the patterns (loss below ``criterion`` x the zero predictor's) for each
    depth and init, at the best learning rate of a log grid: for each (init, depth) one
    ``train_many`` sweep over lr x seed; the learning time is the smallest, over learning
    rates, median over seeds (inf if never reached)."""
    from .sweep import grid

    if not cfg.depths or not cfg.seeds or cfg.lr_min > cfg.lr_max:
        raise ValueError("DepthTimeConfig needs depths, seeds and lr_min <= lr_max")
    data = saxe_task(cfg.n_patterns, seed=0)
    lrs = np.geomspace(cfg.lr_min, cfg.lr_max, cfg.n_lr).tolist()
    threshold = cfg.criterion * 0.5  # the zero predictor's loss is 1/2 per example
    t0 = time.perf_counter()
    out = dict(depths=[int(d) for d in cfg.depths], lrs=lrs, criterion=cfg.criterion,
               steps=cfg.steps, width=cfg.width)
    jobs = [(init, int(d)) for init in inits for d in cfg.depths]
    for j, (init, depth) in enumerate(jobs):
        res = _train_grid(lambda c, depth=depth, init=init: deep_linear(cfg.n_patterns, cfg.width, depth, init),
                          data, grid(lr=lrs, seed=list(cfg.seeds)), steps=cfg.steps,
                          optimizer="sgd", loss="mse", eval_steps=log_steps(cfg.steps, 120),
                          progress=progress)
        T = np.array([np.inf if (h.diverged or h.first_step("train_loss", below=threshold) is None)
                      else h.first_step("train_loss", below=threshold) for h in res.histories],
                     dtype=float).reshape(len(lrs), len(cfg.seeds))
        med = np.median(T, axis=1)
        best = int(np.argmin(med))
        out.setdefault(init, []).append(float(med[best]))
        out.setdefault(f"{init}_lr", []).append(lrs[best])
        out.setdefault(f"{init}_per_seed", []).append(T.min(0).tolist())
        if callback:
            callback((j + 1) / len(jobs))
    out["wall_time"] = time.perf_counter() - t0
    return out


def _times(values) -> np.ndarray:
    """Learning times as floats; "never" (inf, stored as null in JSON) becomes inf."""
    return np.array([np.inf if v is None else float(v) for v in values])


def depth_time_figure(res: dict):
    fig = plots.figure("Time to learn vs depth, each at its best learning rate",
                       "depth (weight matrices)", "steps to criterion", logx=True, logy=True)
    for i, init in enumerate(("orthogonal", "gaussian")):
        if init not in res:
            continue
        times = _times(res[init])
        T = [v if np.isfinite(v) else None for v in times]
        label = {"orthogonal": "random orthogonal", "gaussian": "scaled Gaussian N(0, 1/n)"}[init]
        fig.add_scatter(x=res["depths"], y=T, mode="lines+markers", name=label,
                        line=dict(color=plots.PALETTE[i]),
                        customdata=res[f"{init}_lr"],
                        hovertemplate="depth %{x}: %{y} steps at lr %{customdata:.3g}<extra></extra>")
        never = [d for d, v in zip(res["depths"], times) if not np.isfinite(v)]
        if never:
            fig.add_scatter(x=never, y=[res["steps"]] * len(never), mode="markers",
                            marker=dict(symbol="triangle-up", size=12, color=plots.PALETTE[i]),
                            name=f"{label}: not learned in {res['steps']} steps")
    fig.update_xaxes(tickvals=res["depths"], ticktext=[str(d) for d in res["depths"]])
    ticks = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]
    fig.update_yaxes(tickvals=ticks, ticktext=[str(t) for t in ticks])
    fig.update_layout(hovermode="closest")
    return fig


def depth_time_ratio(res: dict, init: str, shallow: int = 2, deep: int = 16) -> float:
    """Learning time at depth ``deep`` over depth ``shallow`` (inf if never learned)."""
    d = res["depths"]
    if shallow not in d or deep not in d:
        raise ValueError(f"depths {d} must include {shallow} and {deep}")
    times = _times(res[init])
    return float(times[d.index(deep)] / times[d.index(shallow)])


# =============================================================================================
# 4. Beyond: initial guessing bias
# =============================================================================================


def guessing_bias(logits: torch.Tensor) -> float:
    """The fraction of inputs assigned to the most frequent predicted class: 1/C for an
    unbiased classifier on balanced data, 1 when every input gets the same class
    (Francazi et al.'s initial guessing bias)."""
    if logits.ndim != 2 or logits.shape[1] < 2:
        raise ValueError(f"logits must be [inputs, classes >= 2], got {list(logits.shape)}")
    pred = logits.argmax(1)
    return float(torch.bincount(pred, minlength=logits.shape[1]).max() / len(pred))


def run_guessing_bias(cfg: GuessingConfig, activations=ACTIVATIONS) -> dict:
    """For each activation and depth, the guessing bias of ``cfg.n_nets`` untrained MLPs
    (zero biases; W ~ N(0, sigma_w^2 / fan_in) at the activation's critical sigma_w, or Xavier)
    on MNIST-1D inputs."""
    d = _mnist1d(max(cfg.n_inputs, 100))
    x = d.x_train[:cfg.n_inputs]
    out = dict(depths=[int(v) for v in cfg.depths], n_classes=d.n_classes, n_nets=cfg.n_nets,
               scale=cfg.scale, width=cfg.width)
    for act in activations:
        out[act] = []
        for depth in cfg.depths:
            vals = []
            for k in range(cfg.n_nets):
                torch.manual_seed(cfg.seed * 100003 + 1000 * int(depth) + k)
                if cfg.scale == "critical":
                    model = MLP(d.input_dim, cfg.width, int(depth), d.n_classes, act, sigma_w=GAIN[act])
                else:
                    model = build_mlp(d.input_dim, cfg.width, int(depth), act, "xavier")
                model = model.to(x.device)
                with torch.no_grad():
                    vals.append(guessing_bias(model(x)))
            out[act].append(vals)
    return out


def guessing_figure(res: dict):
    fig = plots.figure(f"Initial guessing bias: untrained networks ({res['scale']} scale, width "
                       f"{res['width']}, {res['n_nets']} networks per point)", "depth",
                       "fraction of inputs in the favourite class", logx=True)
    for i, act in enumerate(a for a in ACTIVATIONS if a in res):
        vals = np.asarray(res[act])
        fig.add_scatter(x=res["depths"], y=vals.mean(1), mode="lines+markers", name=f"{act} (mean)",
                        line=dict(color=plots.PALETTE[i]))
        xs = np.repeat(res["depths"], vals.shape[1])
        fig.add_scatter(x=xs, y=vals.ravel(), mode="markers", name=f"{act} (each network)",
                        marker=dict(color=plots.PALETTE[i], size=4, opacity=0.35))
    fig.add_hline(y=1 / res["n_classes"], line=dict(color="#777", dash="dot"),
                  annotation_text="no bias: 1/C")
    fig.update_yaxes(range=[0, 1.05])
    fig.update_xaxes(tickvals=res["depths"], ticktext=[str(d) for d in res["depths"]])
    fig.update_layout(hovermode="closest")
    return fig


def guessing_panel(profile: str | None = None):
    from .widgets import Panel, Slider, Choice

    base = GuessingConfig.for_profile(profile)

    def run(update, depth, width, activation, scale):
        cfg = base.replace(depths=[int(depth)], width=int(width), scale=scale)
        res = run_guessing_bias(cfg, activations=[activation])
        vals = np.asarray(res[activation][0])
        update(status=f"mean favourite-class fraction {vals.mean():.2f} (chance 0.10)")
        fig = plots.bars([f"net {k}" for k in range(len(vals))], vals.tolist(),
                         title=f"{activation}, depth {int(depth)}: favourite-class fraction of each "
                               "untrained network", ytitle="fraction", text_fmt="{:.2f}")
        fig.update_yaxes(range=[0, 1.1])
        return fig

    controls = [Slider("depth", 1, 64, 16, 1, integer=True), Slider("width", 8, 1024, base.width, 8, integer=True),
                Choice("activation", ACTIVATIONS, "relu"), Choice("scale", ("critical", "xavier"), base.scale)]
    return Panel(run, controls, title="Try it: initial guessing bias")


# =============================================================================================
# Claims, precompute, bench
# =============================================================================================


def fmt(v, digits: int = 3) -> str:
    return "never" if v is None or not np.isfinite(v) else f"{v:.{digits}g}"


def trainability_agreement(res: dict, level: float = 0.5) -> tuple[float, int]:
    """The fraction of heatmap cells where "trained" (accuracy above chance + ``level`` of the
    way to the best cell) coincides with "depth <= 6 xi_c" of mean-field theory."""
    acc = np.asarray(res["acc"], dtype=float)
    chance = 0.1
    trained = acc > chance + level * (np.nanmax(acc) - chance)
    xi = np.array([depth_scale(s, res["sigma_b2"]) for s in res["sigma_w2"]])
    shallow = np.asarray(res["depths"])[:, None] <= 6 * xi[None, :]
    return float(np.mean(trained == shallow)), int(acc.size)


def half_times(res: dict) -> tuple[np.ndarray, np.ndarray]:
    """The step at which each pattern is half learned (y_c >= 1/2): measured and exact."""
    steps = np.asarray(res["steps"])

    def first(ys):
        idx = np.flatnonzero(np.asarray(ys) >= 0.5)
        return float(steps[idx[0]]) if len(idx) else float("inf")

    measured = np.array([first(y) for y in res["progress"]])
    theory = np.array([first(y) for y in res.get("theory", [])]) if "theory" in res else None
    return measured, theory


def claim_rows(signal=None, chaos=None, heat=None, fluct=None, saxe=None, depth_time=None,
               igb=None) -> list[dict]:
    """The papers' claims beside what this run (or a precomputed result) measured."""
    rows = []
    if signal is not None and "relu" in signal:
        relu = signal["relu"]
        depth = len(next(iter(relu.values()))["act_std"])
        if "he" in relu and "xavier" in relu:
            rows.append(dict(
                source="He et al.; Kumar, On weight initialization in deep neural networks",
                claim="ReLU: Var W = 2/fan_in keeps the activation scale at any depth; "
                      "Xavier (≈ 1/fan_in) halves the variance every layer",
                measured=f"depth {depth}: last/first activation std {fmt(std_ratio(relu['he']))} (He), "
                         f"{fmt(std_ratio(relu['xavier']))} (Xavier)"))
        if "lsuv" in relu:
            ratios = ", ".join(f"{a} {fmt(std_ratio(signal[a]['lsuv']))}" for a in signal if "lsuv" in signal[a])
            rows.append(dict(source="Mishkin & Matas, All you need is a good init",
                             claim="LSUV: orthonormal start + per-layer rescaling gives unit "
                                   "variance in every layer",
                             measured=f"depth {depth}: last/first activation std {ratios}"))
    if chaos is not None:
        t, m = chaos["critical_theory"], chaos["critical_measured"]
        rows.append(dict(source="Poole et al.; Schoenholz et al., Deep Information Propagation",
                         claim=f"tanh, σ_b² = {chaos['sigma_b2']:g}: the edge of chaos χ₁ = 1 lies at "
                               f"σ_w² = {t:.3f} (mean-field theory)",
                         measured=f"χ₁ = 1 on random networks at σ_w² = {m:.3f} "
                                  f"({100 * (m / t - 1):+.1f}%)"))
        xm = chaos["xi_measured"]
        ok = [(a, b) for a, b in zip(xm["xi"], xm["xi_theory"]) if np.isfinite(a) and np.isfinite(b)]
        if ok:
            dev = np.median([abs(a / b - 1) for a, b in ok])
            rows.append(dict(source="Schoenholz et al., Deep Information Propagation",
                             claim="correlations relax over ξ_c = −1/ln χ_c layers, ξ_c → ∞ at χ₁ = 1",
                             measured=f"ξ_c measured at {len(ok)} values of σ_w²: median deviation "
                                      f"from theory {100 * dev:.0f}%, largest measured "
                                      f"{max(a for a, _ in ok):.1f} layers"))
    if heat is not None:
        agree, n = trainability_agreement(heat)
        rows.append(dict(source="Schoenholz et al.; Hayou et al., On the Impact of the Activation "
                                "Function on Deep Neural Networks Training",
                         claim="networks train when depth ≲ 6 ξ_c: only near the edge of chaos "
                               "for deep nets",
                         measured=f"{100 * agree:.0f}% of {n} heatmap cells agree "
                                  f"(precomputed, {heat['steps']} SGD steps)"))
    if fluct is not None:
        rows.append(dict(source="Day, Kahn & Roberts, Feature Learning and Generalization in Deep "
                                "Networks with Orthogonal Weights",
                         claim="Gaussian weights: preactivation fluctuations grow linearly with depth "
                               "(slope 2/3 per layer in n·Var G/E[G]²); orthogonal: independent of depth",
                         measured=f"slope per layer {fluct['gaussian_slope']:.3f} (Gaussian), "
                                  f"{fluct['orthogonal_slope']:+.4f} (orthogonal), "
                                  f"width {fluct['width']}, {fluct['n_nets']} networks"))
    if saxe is not None and "theory" in saxe:
        meas, theo = half_times(saxe)
        finite = np.isfinite(meas) & np.isfinite(theo)
        dev = np.max(np.abs(meas[finite] / theo[finite] - 1)) if finite.any() else float("nan")
        rows.append(dict(source="Saxe et al., Exact solutions to the nonlinear dynamics of learning "
                                "in deep linear neural networks",
                         claim="from small weights each mode is learned in a sharp sigmoidal "
                               "transition at time ∝ 1/s (plateaus, then drops)",
                         measured=f"half-learning steps {', '.join(fmt(v) for v in meas)}; "
                                  f"largest deviation from the exact solution {100 * dev:.0f}%"))
    if depth_time is not None:
        d = depth_time["depths"]
        deep = max(x for x in d if x <= 16) if any(x <= 16 for x in d) else max(d)
        ro = depth_time_ratio(depth_time, "orthogonal", min(d), deep)
        rg = depth_time_ratio(depth_time, "gaussian", min(d), deep)
        rows.append(dict(source="Saxe et al., Exact solutions to the nonlinear dynamics of learning "
                                "in deep linear neural networks",
                         claim="random orthogonal init: depth-independent learning time; "
                               "scaled Gaussian: grows with depth",
                         measured=f"time(depth {deep}) / time(depth {min(d)}): {fmt(ro)} (orthogonal), "
                                  f"{fmt(rg)} (Gaussian) (precomputed)"))
    if igb is not None:
        deep = igb["depths"][-1]
        parts = ", ".join(f"{a} {np.mean(igb[a][-1]):.2f}" for a in ACTIVATIONS if a in igb)
        rows.append(dict(source="Francazi et al., Initial Guessing Bias: How Untrained Networks "
                                "Favor Some Classes",
                         claim="untrained deep ReLU nets put most inputs in one class; the bias "
                               "grows with depth and depends on the activation",
                         measured=f"depth {deep}: favourite-class fraction {parts} "
                                  f"(chance {1 / igb['n_classes']:.2f})"))
    return rows


def precompute(profile: str) -> list:
    """Write the chapter's precomputed results at ``profile`` scale: the trainability heatmap
    and the learning time vs depth of deep linear networks."""
    profile = get_profile(profile)
    note = {"cpu": "CPU scale (a few minutes on 2 cores); the gpu profile runs the paper-scale grid.",
            "smoke": "smoke scale (tiny).", "gpu": "paper scale."}[profile]
    paths = []
    cfg = TrainabilityConfig.for_profile(profile)
    t0 = time.perf_counter()
    res = trainability(cfg)
    paths.append(results.save("initialization_trainability", res, profile, config=cfg,
                              command=COMMAND.format(profile=profile), note=note,
                              wall_time=time.perf_counter() - t0))
    cfg = DepthTimeConfig.for_profile(profile)
    t0 = time.perf_counter()
    res = learning_time_vs_depth(cfg)
    paths.append(results.save("initialization_depth_time", res, profile, config=cfg,
                              command=COMMAND.format(profile=profile), note=note,
                              wall_time=time.perf_counter() - t0))
    return paths


def bench() -> None:
    """``python -m dynamics.bench initialization``: wall and CPU seconds of each experiment
    in the current profile."""
    profile = get_profile()
    seed = get_seed()
    jobs = {
        "signal propagation": lambda: signal_propagation(SignalConfig.for_profile(profile, seed=seed)),
        "order and chaos": lambda: run_chaos(ChaosConfig.for_profile(profile, seed=seed)),
        "trainability (live panel)": lambda: trainability(TrainabilityConfig.for_profile("smoke")),
        "fluctuations": lambda: run_fluctuations(FluctuationConfig.for_profile(profile, seed=seed)),
        "deep linear curves": lambda: run_saxe(SaxeConfig.for_profile(profile, seed=seed)),
        "learning time vs depth": lambda: learning_time_vs_depth(DepthTimeConfig.for_profile(profile)),
        "guessing bias": lambda: run_guessing_bias(GuessingConfig.for_profile(profile, seed=seed)),
    }
    for name, job in jobs.items():
        wall, cpu = time.perf_counter(), time.process_time()
        job()
        print(f"initialization/{name}: {time.perf_counter() - wall:.1f} s wall, "
              f"{time.process_time() - cpu:.1f} s CPU ({profile})", flush=True)
