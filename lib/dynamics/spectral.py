"""Spectral optimizers: Muon, Newton–Schulz, and steepest descent in the spectral norm.

The chapter ``chapters/spectral_optimizers.ipynb`` in one file, read top to bottom:

1. the science, as pure tensor functions: :func:`newton_schulz` (Muon's quintic iteration),
   :func:`ns_map` (what it does to one singular value), :func:`polar` (the exact U Vᵀ),
   :func:`spectral_shape` (U Σᵖ Vᵀ), :func:`muon_update` (momentum, then orthogonalize);
2. two thin optimizers built from them: :class:`TeachingMuon` (the same update as
   ``torch.optim.Muon``, a test checks it) and :class:`SpectralShaping` (U Σᵖ Vᵀ with a fixed
   or scheduled exponent p: the DynMuon idea);
3. the linear associative memory of the workshop abstract, solved in one step by SGD, Muon
   and Newton's method (:func:`memory_gradient`, :func:`one_step`, :func:`recovered`);
4. one ``Config`` and one runner per experiment, figure builders, live panels,
   :func:`precompute` and :func:`bench`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from . import data as D
from . import models, plots, results, train as T
from .config import Config, param
from .runtime import get_device, get_profile

MUON_COEFFS = (3.4445, -4.7750, 2.0315)  # Jordan et al.'s quintic (torch.optim.Muon's default)
CUBIC_COEFFS = (1.5, -0.5, 0.0)          # the classical Newton–Schulz iteration, converges to 1
EPS = 1e-7                               # torch.optim.Muon's guard against a zero gradient


# ============================================================================ the science


def _check_matrix(G: torch.Tensor, what: str = "G") -> None:
    if not isinstance(G, torch.Tensor) or G.ndim != 2:
        shape = list(G.shape) if isinstance(G, torch.Tensor) else type(G).__name__
        raise ValueError(f"{what} must be a 2-D matrix (flatten conv kernels first), got {shape}")


def newton_schulz(G: torch.Tensor, steps: int = 5, coeffs=MUON_COEFFS, eps: float = EPS,
                  dtype: torch.dtype | None = torch.bfloat16) -> torch.Tensor:
    """Approximately orthogonalize ``G``: map G = U Σ Vᵀ to U f(Σ) Vᵀ with f(σ) ≈ 1.

    Each step applies the odd polynomial f(x) = a x + b x³ + c x⁵ to every singular value at
    once, through matrix products only: with A = X Xᵀ, ``X <- a X + (b A + c A²) X``. Three
    things make it work:

    - dividing by the Frobenius norm puts every singular value in [0, 1] (‖G‖₂ ≤ ‖G‖_F);
    - a wide matrix (transpose a tall one) makes A = X Xᵀ the smaller Gram matrix;
    - the coefficients (3.4445, −4.7750, 2.0315) are not those of a convergent iteration.
      They make the slope at zero, f'(0) = a, as large as possible while the iterates stay
      bounded (five steps multiply a small singular value by a⁵ ≈ 484), at the price of not
      converging to 1: the iterates settle in a band of roughly [0.7, 1.2] instead. For training, a fast, rough U Vᵀ beats a slow, exact
      one. The cubic (1.5, −0.5, 0) does converge to 1, but needs many more steps from a small σ.

    ``dtype`` is the working precision (bfloat16 by default, as in ``torch.optim.Muon``: the
    iteration is insensitive to rounding; ``None`` keeps G's dtype). The fused ``addmm`` calls
    are the two lines above, written so that they round exactly as torch's implementation does.
    """
    _check_matrix(G)
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if len(coeffs) != 3:
        raise ValueError(f"coeffs must be three numbers (a, b, c), got {coeffs!r}")
    a, b, c = (float(v) for v in coeffs)
    X = G.to(dtype) if dtype is not None else G.clone()
    tall = G.size(0) > G.size(1)
    if tall:
        X = X.T
    X = X / X.norm().clamp(min=eps)
    for _ in range(steps):
        A = X @ X.T
        B = torch.addmm(A, A, A, beta=b, alpha=c)   # b A + c A²
        X = torch.addmm(X, B, X, beta=a)            # a X + B X
    return X.T if tall else X


def ns_map(sigma, steps: int = 5, coeffs=MUON_COEFFS) -> np.ndarray:
    """The scalar map σ -> f^k(σ) that ``steps`` Newton–Schulz iterations apply to each
    (Frobenius-normalized) singular value; f(x) = a x + b x³ + c x⁵."""
    a, b, c = (float(v) for v in coeffs)
    x = np.asarray(sigma, dtype=float).copy()
    for _ in range(steps):
        x = a * x + b * x ** 3 + c * x ** 5
    return x


def polar(G: torch.Tensor) -> torch.Tensor:
    """The exact orthogonal polar factor U Vᵀ of G = U Σ Vᵀ (thin SVD): the steepest-descent
    direction under the spectral norm, the maximizer of ⟨G, O⟩ over ‖O‖₂ ≤ 1."""
    _check_matrix(G)
    U, _, Vh = torch.linalg.svd(G, full_matrices=False)
    return U @ Vh


def spectral_shape(G: torch.Tensor, p: float, rel_eps: float = 1e-3) -> torch.Tensor:
    """U Σᵖ Vᵀ, rescaled to the Frobenius norm √r of U Vᵀ (r = kept directions).

    p = 1 keeps the gradient's own proportions (a normalized SGD step), p = 0 gives Muon's
    U Vᵀ, p < 0 puts more of the step into the directions where the gradient is *weak*.
    Only the allocation across directions changes with p, never the step's total length, so one
    learning rate is comparable across p. Singular values below ``rel_eps`` × σ_max are
    treated as zero (a negative power would otherwise blow up numerical noise).
    """
    _check_matrix(G)
    if not math.isfinite(p):
        raise ValueError(f"p must be a finite number, got {p!r}")
    if not 0.0 < rel_eps < 1.0:
        raise ValueError(f"rel_eps must lie in (0, 1), got {rel_eps!r}")
    U, S, Vh = torch.linalg.svd(G.float(), full_matrices=False)
    if not S[0] > 0:
        return torch.zeros_like(G, dtype=torch.float32)
    rel = S / S[0]
    keep = rel > rel_eps
    s = torch.where(keep, rel.clamp_min(rel_eps) ** p, torch.zeros_like(rel))
    s = s * keep.sum().sqrt() / s.norm()
    return (U * s) @ Vh


def momentum_direction(grad: torch.Tensor, buf: torch.Tensor, beta: float = 0.95,
                       nesterov: bool = True) -> torch.Tensor:
    """Update the momentum buffer in place, B <- β B + (1 − β) g, and return the direction to
    orthogonalize: (1 − β) g + β B with Nesterov, else B (torch.optim.Muon's convention)."""
    buf.lerp_(grad, 1 - beta)
    return grad.lerp(buf, beta) if nesterov else buf


def muon_update(grad: torch.Tensor, momentum_buffer: torch.Tensor, beta: float = 0.95,
                nesterov: bool = True, ns_steps: int = 5, coeffs=MUON_COEFFS,
                dtype: torch.dtype | None = torch.bfloat16) -> torch.Tensor:
    """Muon's update for one weight matrix: momentum first, *then* orthogonalize (applying
    momentum after orthogonalizing would average directions that no longer carry magnitudes)."""
    _check_matrix(grad, "grad")
    if not 0.0 <= beta < 1.0:
        raise ValueError(f"beta must lie in [0, 1), got {beta!r}")
    return newton_schulz(momentum_direction(grad, momentum_buffer, beta, nesterov),
                         ns_steps, coeffs, dtype=dtype)


def muon_lr_scale(shape, adjust: str | None = "original") -> float:
    """torch.optim.Muon's learning-rate multiplier for a weight of ``shape`` = (fan_out, fan_in).

    The entries of a semi-orthogonal U Vᵀ have RMS 1/√max(fan_out, fan_in).
    ``original`` (Jordan's, torch's default): √max(1, fan_out/fan_in), which makes that RMS
    1/√fan_in for every shape (tall matrices get a larger step).
    ``match_rms_adamw`` (Moonshot's): 0.2 √max(fan_out, fan_in), an update RMS of about 0.2,
    like AdamW's, so AdamW's learning rate can be reused.
    """
    A, B = shape[:2]
    if adjust in (None, "original"):
        return math.sqrt(max(1.0, A / B))
    if adjust == "match_rms_adamw":
        return 0.2 * math.sqrt(max(A, B))
    raise ValueError(f"adjust must be 'original' or 'match_rms_adamw', got {adjust!r}")


class TeachingMuon(torch.optim.Optimizer):
    """Muon for 2-D weights, built from :func:`muon_update`: per matrix W,

        B <- β B + (1 − β) g;   O = NS₅((1 − β) g + β B);   W <- (1 − η λ) W − η s O,

    with s = :func:`muon_lr_scale` (W.shape). The same update as ``torch.optim.Muon``
    (a test checks it to 1e-5); ``dtype=torch.float32`` runs Newton–Schulz in float32, which is
    what a CPU without bfloat16 units wants.
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.95, nesterov: bool = True,
                 weight_decay: float = 0.1, ns_steps: int = 5, coeffs=MUON_COEFFS,
                 adjust_lr: str | None = "original", dtype: torch.dtype | None = torch.bfloat16):
        T.check_hyper(lr, weight_decay, momentum)
        muon_lr_scale((1, 1), adjust_lr)  # validates adjust_lr
        defaults = dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay,
                        ns_steps=ns_steps, coeffs=tuple(coeffs), adjust_lr=adjust_lr, dtype=dtype)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"{type(self).__name__} takes only 2-D weights, got shape "
                                     f"{list(p.shape)}: give biases, gains and kernels to AdamW")

    def update(self, grad: torch.Tensor, buf: torch.Tensor, group: dict) -> torch.Tensor:
        """One matrix's direction: :func:`muon_update` (subclasses shape the spectrum otherwise)."""
        return muon_update(grad, buf, group["momentum"], group["nesterov"], group["ns_steps"],
                           group["coeffs"], group["dtype"])

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, wd = group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p.grad)
                    state["step"] = 0
                state["step"] += 1
                update = self.update(p.grad, state["momentum_buffer"], group)
                p.mul_(1 - lr * wd)
                p.add_(update, alpha=-lr * muon_lr_scale(p.shape, group["adjust_lr"]))
        return loss


class SpectralShaping(TeachingMuon):
    """Muon with U Σᵖ Vᵀ (exact SVD, :func:`spectral_shape`) in place of Newton–Schulz.

    ``p`` is a number or a schedule ``p(step)``: DynMuon's idea is to start positive
    (emphasize the strong, high-curvature directions) and end mildly negative (move update
    strength to weak directions that still carry signal). See :func:`linear_p_schedule`.
    """

    def __init__(self, params, lr: float = 0.02, p: float | Callable[[int], float] = 0.0,
                 momentum: float = 0.95, nesterov: bool = True, weight_decay: float = 0.0,
                 rel_eps: float = 1e-3):
        super().__init__(params, lr=lr, momentum=momentum, nesterov=nesterov,
                         weight_decay=weight_decay, dtype=torch.float32)
        self.p = p
        self.rel_eps = rel_eps
        self.steps_taken = 0

    def current_p(self) -> float:
        return float(self.p(self.steps_taken)) if callable(self.p) else float(self.p)

    def update(self, grad, buf, group):
        M = momentum_direction(grad, buf, group["momentum"], group["nesterov"])
        return spectral_shape(M, self.current_p(), self.rel_eps)

    def step(self, closure=None):
        loss = super().step(closure)
        self.steps_taken += 1
        return loss


def linear_p_schedule(p_start: float, p_end: float, steps: int) -> Callable[[int], float]:
    """p(t) moving linearly from ``p_start`` at step 0 to ``p_end`` at step ``steps``."""
    return lambda t: p_start + (p_end - p_start) * min(1.0, t / max(1, steps))


def muon_agreement(seed: int = 0, steps: int = 5, shapes=((96, 32), (32, 96), (64, 64)),
                   **hyper) -> float:
    """Largest parameter difference between :class:`TeachingMuon` and ``torch.optim.Muon`` after
    ``steps`` steps on the same random gradients (0.0 when the updates agree exactly)."""
    g = torch.Generator().manual_seed(seed)
    ours = [torch.nn.Parameter(torch.randn(*s, generator=g)) for s in shapes]
    theirs = [torch.nn.Parameter(p.detach().clone()) for p in ours]
    hyper = dict(dict(lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True), **hyper)
    opts = [TeachingMuon(ours, **hyper), torch.optim.Muon(theirs, **hyper)]
    for _ in range(steps):
        for p, q in zip(ours, theirs):
            p.grad = torch.randn(p.shape, generator=g)
            q.grad = p.grad.clone()
        for opt in opts:
            opt.step()
    return max(float((p - q).detach().abs().max()) for p, q in zip(ours, theirs))


# ---------------------------------------------------------------- linear associative memory


def memory_task(n_pairs: int, dim: int, alpha: float = 1.0, seed: int = 0,
                dtype=torch.float64, device=None):
    """``n_pairs`` associations k_i -> v_i with Gaussian embeddings N(0, I/dim) in R^dim, and
    power-law frequencies p_i ∝ i^(−alpha) (i = 1 is the most frequent pair)."""
    if n_pairs < 2 or dim < 1:
        raise ValueError(f"need n_pairs >= 2 and dim >= 1, got {n_pairs}, {dim}")
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    g = torch.Generator().manual_seed(int(seed))
    keys = torch.randn(n_pairs, dim, generator=g, dtype=dtype) / math.sqrt(dim)
    values = torch.randn(n_pairs, dim, generator=g, dtype=dtype) / math.sqrt(dim)
    freq = torch.arange(1, n_pairs + 1, dtype=dtype) ** (-float(alpha))
    device = get_device(device)
    return keys.to(device), values.to(device), (freq / freq.sum()).to(device)


def memory_logits(W, keys, values):
    """logits[i, j] = v_jᵀ W k_i: the score of value j for key i."""
    return keys @ W.T @ values.T


def memory_loss(W, keys, values, freq):
    """The frequency-weighted softmax cross-entropy (multinomial logistic regression) of
    retrieving v_i from k_i among all values."""
    return -(freq * F.log_softmax(memory_logits(W, keys, values), dim=1).diagonal()).sum()


def memory_gradient(keys, values, freq):
    """∇L at W = 0, where the softmax is uniform: −Σ_i p_i (v_i − v̄) k_iᵀ."""
    return -(values - values.mean(0)).T @ (freq[:, None] * keys)


def one_step(method: str, keys, values, freq) -> torch.Tensor:
    """The weights after one step from W = 0 (up to a positive scale, which cannot change an
    argmax, so no learning rate is needed).

    - ``sgd``: −G. Frequent pairs dominate G, rare ones hide in its small singular values.
    - ``muon``: −NS₅(G) ≈ −U Vᵀ: every direction of G gets the same weight.
    - ``newton``: −H⁻¹G. At W = 0 the Hessian is a Kronecker product, H[Δ] = C_v Δ C_k with
      C_k = Σ p_i k_i k_iᵀ and C_v the covariance of the values, so H⁻¹G = C_v⁺ G C_k⁺.
    """
    G = memory_gradient(keys, values, freq)
    if method == "sgd":
        return -G
    if method == "muon":
        return -newton_schulz(G, dtype=None)
    if method == "newton":
        Ck = keys.T @ (freq[:, None] * keys)
        centered = values - values.mean(0)
        Cv = centered.T @ centered / len(values)
        return -torch.linalg.pinv(Cv, hermitian=True) @ G @ torch.linalg.pinv(Ck, hermitian=True)
    raise ValueError(f"unknown method {method!r}; choose one of {list(MEMORY_METHODS)}")


MEMORY_METHODS = ("sgd", "muon", "newton")


def recovered(W, keys, values) -> torch.Tensor:
    """Which associations W stores: key i retrieves value i by argmax (bool per pair)."""
    logits = memory_logits(W, keys, values)
    return logits.argmax(1) == torch.arange(len(keys), device=keys.device)


# ============================================================================ experiments

# --------------------------------------------------------------- 1. Newton–Schulz


SPECTRA = ("gaussian", "power law", "low rank + noise")


@dataclass
class NSConfig(Config):
    """Newton–Schulz on one matrix: its singular values across iterations."""

    rows: int = param(256, "rows of the matrix", low=2, high=4096)
    cols: int = param(128, "columns of the matrix", low=2, high=4096)
    spectrum: str = param("gaussian", "the matrix's singular values",
                          choices=SPECTRA)
    steps: int = param(5, "Newton–Schulz iterations", low=0, high=30)
    a: float = param(MUON_COEFFS[0], "coefficient a (slope at zero)", low=-5.0, high=5.0)
    b: float = param(MUON_COEFFS[1], "coefficient b", low=-8.0, high=8.0)
    c: float = param(MUON_COEFFS[2], "coefficient c", low=-8.0, high=8.0)
    seed: int = param(0, "random seed", low=0, high=2**31 - 1)


def random_matrix(rows: int, cols: int, spectrum: str = "gaussian", seed: int = 0) -> torch.Tensor:
    """A random matrix whose singular values are Gaussian-like (Marchenko–Pastur), decay as a
    power law σ_i ∝ i^(−1), or are a rank-4 signal plus small noise (like a gradient)."""
    if spectrum not in SPECTRA:
        raise ValueError(f"unknown spectrum {spectrum!r}; choose one of {list(SPECTRA)}")
    G = torch.randn(rows, cols, generator=torch.Generator().manual_seed(int(seed)))
    if spectrum == "gaussian":
        return G
    U, _, Vh = torch.linalg.svd(G, full_matrices=False)
    r = min(rows, cols)
    if spectrum == "power law":
        s = torch.arange(1, r + 1, dtype=torch.float32) ** -1.0
    else:
        s = torch.full((r,), 0.01)
        s[:4] = torch.tensor([1.0, 0.7, 0.5, 0.3])[:r]
    return (U * s) @ Vh


def singular_value_band(G: torch.Tensor, max_steps: int = 10, coeffs=MUON_COEFFS,
                        dtype=torch.float32) -> dict:
    """Smallest and largest singular value of NS_k(G) for k = 0..max_steps (k = 0: G/‖G‖_F)."""
    out = dict(k=[], lo=[], hi=[])
    for k in range(max_steps + 1):
        s = torch.linalg.svdvals(newton_schulz(G, k, coeffs, dtype=dtype).float())
        out["k"].append(k)
        out["lo"].append(float(s.min()))
        out["hi"].append(float(s.max()))
    return out


def _timeit(fn, repeats: int, device):
    """Median wall seconds, median CPU seconds (this process, all threads) and the last result
    of ``fn()``; one warm-up call when repeats > 1. On a shared machine CPU seconds are the
    steadier measure; on a GPU the wall clock (after synchronizing) is the one that counts."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if repeats > 1:
        fn()
    walls, cpus, out = [], [], None
    for _ in range(max(1, repeats)):
        sync()
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn()
        sync()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return float(np.median(walls)), float(np.median(cpus)), out


def time_orthogonalization(sizes, steps: int = 5, repeats: int = 3, device=None,
                           dtypes=(torch.float32,), seed: int = 0) -> list[dict]:
    """Wall (and CPU) seconds of Newton–Schulz (``steps`` iterations, each dtype) and of the
    exact polar factor by SVD, for square Gaussian n×n matrices (median of ``repeats`` up to
    n = 1024, one run above), with NS's distance from U Vᵀ: relative Frobenius error and
    max|σ − 1|."""
    device = get_device(device)
    rows = []
    for n in sizes:
        G = torch.randn(n, n, generator=torch.Generator().manual_seed(seed)).to(device)
        reps = repeats if n <= 1024 else 1
        row = dict(n=int(n), device=device.type, threads=torch.get_num_threads())
        outs = {}
        for dt in dtypes:
            name = str(dt).replace("torch.", "")
            row[f"ns_{name}_s"], row[f"ns_{name}_cpu_s"], outs[dt] = _timeit(
                lambda: newton_schulz(G, steps, dtype=dt), reps, device)
        row["svd_s"], row["svd_cpu_s"], exact = _timeit(lambda: polar(G), reps, device)
        O = outs.get(torch.float32)
        if O is None:
            O = newton_schulz(G, steps, dtype=torch.float32)
        row["rel_error"] = float((O - exact).norm() / exact.norm())
        row["max_sigma_error"] = float((torch.linalg.svdvals(O) - 1).abs().max())
        rows.append(row)
    return rows


# --------------------------------------------------------------- 2. Muon in practice

PRACTICE_OPTIMIZERS = ("muon", "adamw", "momentum")
LABELS = {"muon": "Muon + AdamW", "adamw": "AdamW", "momentum": "SGD + momentum",
          "muon_fp32": "Muon (teaching, float32 NS) + AdamW"}


@dataclass
class PracticeConfig(Config):
    """Muon vs AdamW vs SGD with momentum, each at its best learning rate from a sweep."""

    task: str = param("mnist1d", "dataset (cifar10 needs torchvision and internet; falls back "
                      "to MNIST-1D)", choices=("mnist1d", "cifar10"), gpu="cifar10")
    n_train: int = param(4000, "training examples", low=100, high=50000, gpu=50000)
    width: int = param(64, "hidden width of the MLP", low=4, high=4096, gpu=512)
    depth: int = param(3, "hidden layers (their weights are Muon's)", low=1, high=8)
    steps: int = param(300, "training steps", low=10, high=100000, smoke=150, cpu=400, gpu=3000)
    batch_size: int = param(256, "mini-batch size", low=8, high=8192, gpu=512)
    muon_lrs: list = param([0.03, 0.1, 0.3], "Muon learning rates swept",
                           cpu=[0.01, 0.02, 0.05, 0.1], gpu=[0.005, 0.01, 0.02, 0.05, 0.1])
    adamw_lrs: list = param([3e-3, 1e-2, 3e-2], "AdamW learning rates swept",
                            cpu=[1e-3, 3e-3, 1e-2, 3e-2], gpu=[3e-4, 1e-3, 3e-3, 1e-2])
    momentum_lrs: list = param([0.1, 0.3, 1.0], "SGD + momentum (0.9) learning rates swept",
                               cpu=[0.03, 0.1, 0.3, 1.0], gpu=[0.01, 0.03, 0.1, 0.3])
    target_loss: float = param(1.0, "training loss that counts as 'reached'", low=1e-4, high=5.0,
                               cpu=0.6, gpu=1.0)
    seed: int = param(0, "seed of the initialization and the batch order", low=0, high=2**31 - 1)


def practice_data(cfg: PracticeConfig) -> D.Dataset:
    """MNIST-1D (always available), or CIFAR-10 when asked for and downloadable."""
    if cfg.task == "cifar10":
        try:
            return D.torchvision_dataset("cifar10", n_train=cfg.n_train, n_test=10000)
        except RuntimeError as err:
            print(f"CIFAR-10 unavailable ({err}); falling back to MNIST-1D")
    return D.mnist1d(min(cfg.n_train, 4000), 1000, seed=0)


def practice_model(cfg: PracticeConfig, data: D.Dataset, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return models.MLP(data.input_dim, cfg.width, cfg.depth, data.n_classes).to(data.device)


def muon_with_adamw(model, lr: float, adam_lr: float, teaching_dtype=None) -> T.Optimizers:
    """Muon on the hidden matrices (``train.muon_split``), AdamW on the rest. ``teaching_dtype``
    swaps ``torch.optim.Muon`` for :class:`TeachingMuon` with Newton–Schulz in that dtype."""
    if teaching_dtype is None:
        return T.make_optimizer(model, "muon", lr=lr, adam_lr=adam_lr)
    hidden, other = T.muon_split(model)
    return T.Optimizers([TeachingMuon(hidden, lr=lr, weight_decay=0.0, dtype=teaching_dtype),
                         torch.optim.AdamW(other, lr=adam_lr, weight_decay=0.0)])


def steps_to(history, target: float):
    """First evaluation step with training loss below ``target`` (None if never)."""
    return None if "train_loss" not in history else history.first_step("train_loss", below=target)


def best_lr(histories: dict, target: float) -> float:
    """The learning rate that reaches ``target`` first; ties and misses broken by the lowest
    final training loss (a diverged run ranks last)."""
    def key(lr):
        h = histories[lr]
        s = steps_to(h, target)
        final = h.last("train_loss") if len(h) and not h.diverged else math.inf
        return (s if s is not None else math.inf, final if math.isfinite(final) else math.inf)
    return min(histories, key=key)


def run_practice(cfg: PracticeConfig, data: D.Dataset | None = None, teaching_fp32: bool = True,
                 optimizers=PRACTICE_OPTIMIZERS, progress=None) -> dict:
    """Sweep each optimizer's learning rate and pick its best (:func:`best_lr`).

    Every run is its own ``train`` call, so each history carries its own wall clock
    (``sweep.train_many`` trains many models at once, which would blur per-run times, and has no
    Muon). AdamW goes first: Muon's AdamW part (head, biases) then uses AdamW's best rate.
    ``teaching_fp32`` adds :class:`TeachingMuon` with float32 Newton–Schulz at Muon's best rate:
    the same algorithm, timed without bfloat16 arithmetic (slow on CPUs without bf16 units).
    """
    data = data if data is not None else practice_data(cfg)
    kw = dict(steps=cfg.steps, batch_size=cfg.batch_size, eval_every=max(1, cfg.steps // 40),
              seed=cfg.seed, progress=progress, eval_test=False)
    lrs = dict(adamw=cfg.adamw_lrs, momentum=cfg.momentum_lrs, muon=cfg.muon_lrs)
    sweeps, best = {}, {}
    for name in sorted(optimizers, key=lambda n: n != "adamw"):
        sweeps[name] = {}
        for lr in lrs[name]:
            model = practice_model(cfg, data, cfg.seed)
            opt = muon_with_adamw(model, lr, best.get("adamw", 3e-3)) if name == "muon" else name
            sweeps[name][lr] = T.train(model, data, optimizer=opt, lr=lr, momentum=0.9,
                                       desc=f"{LABELS[name]} lr={lr:g}", **kw)
        best[name] = best_lr(sweeps[name], cfg.target_loss)
    timed = {name: sweeps[name][best[name]] for name in sweeps}
    if teaching_fp32 and "muon" in sweeps:
        model = practice_model(cfg, data, cfg.seed)
        opt = muon_with_adamw(model, best["muon"], best.get("adamw", 3e-3), torch.float32)
        timed["muon_fp32"] = T.train(model, data, optimizer=opt, desc=LABELS["muon_fp32"], **kw)
    return dict(sweeps=sweeps, best=best, timed=timed, target=cfg.target_loss, data=data.name)


def practice_summary(result: dict) -> dict:
    """Steps and seconds to the target loss, per optimizer at its best rate."""
    out = {}
    for name, h in result["timed"].items():
        s = steps_to(h, result["target"])
        t = None if s is None else float(h["time"][h.steps.index(s)])
        out[name] = dict(lr=result["best"].get(name.split("_")[0]), steps=s, seconds=t,
                         final_loss=h.last("train_loss") if not h.diverged else float("nan"),
                         sec_per_step=h.wall_time / max(1, h.steps[-1]))
    return out


def practice_rows(result: dict) -> list[dict]:
    """:func:`practice_summary` as table rows."""
    short = {"muon": "Muon", "adamw": "AdamW", "momentum": "SGD+mom.", "muon_fp32": "Muon, fp32 NS"}
    return [{"optimizer": short[k], "lr": v["lr"], "steps to target": v["steps"],
             "s to target": None if v["seconds"] is None else round(v["seconds"], 2),
             "ms / step": round(1e3 * v["sec_per_step"], 1), "final loss": round(v["final_loss"], 3)}
            for k, v in practice_summary(result).items()]


# --------------------------------------------------------------- 3. associative memory


@dataclass
class MemoryConfig(Config):
    """One step of SGD, Muon and Newton's method on a linear associative memory."""

    dim: int = param(64, "embedding dimension d", low=2, high=2048, cpu=128, gpu=512)
    alpha: float = param(1.0, "power-law exponent of the pair frequencies", low=0.0, high=3.0)
    ratios: list = param([0.25, 0.5, 1, 2, 4, 8, 16], "numbers of pairs N, in units of d",
                         cpu=[0.25, 0.5, 1, 2, 4, 8, 16, 32], gpu=[0.25, 0.5, 1, 2, 4, 8, 16])
    seeds: int = param(3, "independent draws averaged", low=1, high=50, cpu=5)
    seed: int = param(0, "first seed", low=0, high=2**31 - 1)


def rank_bins(n: int, n_bins: int = 16) -> np.ndarray:
    """Edges of log-spaced bins over frequency ranks 1..n (for recall by rank)."""
    return np.unique(np.geomspace(1, n + 1, n_bins + 1).astype(int))


def run_memory(cfg: MemoryConfig, methods=MEMORY_METHODS) -> dict:
    """Fraction of pairs (and of frequency mass) recovered after one step, for each N = ratio·d,
    and the recall in log-spaced bins of frequency rank (averaged over ``cfg.seeds`` draws)."""
    frac, mass, by_rank = ({m: [] for m in methods} for _ in range(3))
    centers = []
    ns = [max(2, int(round(r * cfg.dim))) for r in cfg.ratios]
    for n in ns:
        hits = {m: torch.zeros(n, dtype=torch.float64) for m in methods}
        fr = {m: 0.0 for m in methods}
        for s in range(cfg.seed, cfg.seed + cfg.seeds):
            keys, values, freq = memory_task(n, cfg.dim, cfg.alpha, s)
            for m in methods:
                ok = recovered(one_step(m, keys, values, freq), keys, values).to(torch.float64).cpu()
                hits[m] += ok / cfg.seeds
                fr[m] += float((ok * freq.cpu()).sum()) / cfg.seeds
        edges = rank_bins(n)
        centers.append(np.sqrt(edges[:-1] * edges[1:]).tolist())
        for m in methods:
            frac[m].append(float(hits[m].mean()))
            mass[m].append(fr[m])
            h = hits[m].numpy()
            by_rank[m].append([float(h[a - 1:b - 1].mean()) for a, b in zip(edges[:-1], edges[1:])])
    return dict(n=ns, ratios=list(cfg.ratios), dim=cfg.dim, alpha=cfg.alpha, fraction=frac,
                mass=mass, by_rank=by_rank, rank_centers=centers)


# --------------------------------------------------------------- 4. spectral shaping


@dataclass
class ShapingConfig(Config):
    """U Σᵖ Vᵀ updates with fixed p, and a schedule from positive to mildly negative p."""

    ps: list = param([1.0, 0.5, 0.0, -0.25, -0.5], "fixed exponents p compared",
                     smoke=[1.0, 0.0, -0.5])
    p_start: float = param(0.5, "scheduled p at the first step", low=-2.0, high=2.0)
    p_end: float = param(-0.5, "scheduled p at the last step", low=-2.0, high=2.0)
    lr: float = param(0.05, "learning rate of the shaped matrices", low=1e-4, high=1.0, log=True)
    adam_lr: float = param(1e-2, "AdamW learning rate of the other parameters", low=1e-5,
                           high=1.0, log=True)
    lrs: list = param([0.02, 0.05, 0.1], "learning rates of the precomputed slider")
    steps: int = param(300, "training steps", low=10, high=100000, smoke=150, cpu=400, gpu=2000)
    width: int = param(64, "hidden width of the MLP", low=4, high=4096, gpu=256)
    depth: int = param(3, "hidden layers", low=1, high=8)
    batch_size: int = param(256, "mini-batch size", low=8, high=8192, gpu=512)
    seed: int = param(0, "seed of the initialization and the batch order", low=0, high=2**31 - 1)


def shaping_run(cfg: ShapingConfig, data: D.Dataset, p, lr: float | None = None,
                callbacks=(), progress=None):
    """Train the MLP with :class:`SpectralShaping` (exponent or schedule ``p``) on its hidden
    matrices and AdamW on the rest."""
    torch.manual_seed(cfg.seed)
    model = models.MLP(data.input_dim, cfg.width, cfg.depth, data.n_classes).to(data.device)
    hidden, other = T.muon_split(model)
    opt = T.Optimizers([SpectralShaping(hidden, lr=lr or cfg.lr, p=p),
                        torch.optim.AdamW(other, lr=cfg.adam_lr)])
    return T.train(model, data, steps=cfg.steps, optimizer=opt, batch_size=cfg.batch_size,
                   eval_every=max(1, cfg.steps // 50), seed=cfg.seed, eval_test=False,
                   callbacks=callbacks, progress=progress, desc=f"p={p if not callable(p) else 'schedule'}")


def run_shaping(cfg: ShapingConfig, data: D.Dataset | None = None, lr: float | None = None,
                progress=None) -> dict:
    """One run per fixed p and one with p scheduled from ``p_start`` to ``p_end``."""
    data = data if data is not None else D.mnist1d(4000, 1000, seed=0)
    runs = {f"p = {p:g}": shaping_run(cfg, data, p, lr, progress=progress) for p in cfg.ps}
    name = f"p: {cfg.p_start:g} → {cfg.p_end:g}"
    runs[name] = shaping_run(cfg, data, linear_p_schedule(cfg.p_start, cfg.p_end, cfg.steps), lr,
                             progress=progress)
    return dict(runs=runs, schedule=name, lr=lr or cfg.lr)


# ============================================================================ figures


def map_figure(steps: int = 5, coeff_sets: dict | None = None) -> "plots.go.Figure":
    """σ -> f^k(σ) for k = 1..steps, for each set of coefficients (log σ axis)."""
    coeff_sets = coeff_sets or {"Muon quintic": MUON_COEFFS, "cubic": CUBIC_COEFFS}
    sigma = np.geomspace(1e-4, 1.0, 400)
    fig = plots.figure("What k Newton–Schulz steps do to one singular value",
                       "σ / ‖G‖_F (input singular value)", "output singular value", logx=True)
    shades = [0.25, 0.45, 0.65, 0.85, 1.0]
    for i, (name, coeffs) in enumerate(coeff_sets.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        for k in range(1, steps + 1):
            fig.add_scatter(x=sigma, y=ns_map(sigma, k, coeffs), mode="lines",
                            name=f"{name}, k={k}", legendgroup=name,
                            opacity=shades[min(len(shades) - 1, round((k - 1) * 4 / max(1, steps - 1)))],
                            line=dict(color=color, dash="solid" if i == 0 else "dash",
                                      width=2.5 if k == steps else 1.2))
    fig.add_hrect(y0=0.7, y1=1.2, fillcolor="#109618", opacity=0.08, line_width=0,
                  annotation_text="Muon's band", annotation_position="top left")
    fig.update_layout(hovermode="closest")
    return fig


def band_figure(bands: dict) -> "plots.go.Figure":
    """Range of singular values of NS_k(G) against k, one shaded band per coefficient set."""
    fig = plots.figure("All singular values after k steps", "Newton–Schulz steps k",
                       "singular values of NS_k(G)", logy=True)
    for i, (name, band) in enumerate(bands.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        fig.add_scatter(x=band["k"], y=band["hi"], mode="lines", line=dict(color=color, width=1),
                        name=f"{name}: max", legendgroup=name)
        fig.add_scatter(x=band["k"], y=band["lo"], mode="lines", line=dict(color=color, width=1),
                        fill="tonexty", name=f"{name}: min", legendgroup=name)
    fig.add_hline(y=1.0, line=dict(color="#555", dash="dot", width=1))
    return fig


def spectrum_figure(G: torch.Tensor, out: torch.Tensor, title: str = "") -> "plots.go.Figure":
    """Sorted singular values of G/‖G‖_F and of the Newton–Schulz output."""
    s_in = torch.linalg.svdvals((G / G.norm()).float()).numpy()
    s_out = torch.linalg.svdvals(out.float()).numpy()
    i = np.arange(1, len(s_in) + 1)
    fig = plots.figure(title or "Singular values before and after", "index i (sorted)",
                       "σ_i", logy=True)
    fig.add_scatter(x=i, y=s_in, mode="lines", name="input G/‖G‖_F")
    fig.add_scatter(x=i, y=s_out, mode="lines", name="after Newton–Schulz")
    fig.add_hrect(y0=0.7, y1=1.2, fillcolor="#109618", opacity=0.08, line_width=0)
    return fig


def timing_figure(rows: list[dict], title: str = "") -> "plots.go.Figure":
    """Seconds against matrix size: Newton–Schulz (each dtype measured) vs SVD."""
    n = [r["n"] for r in rows]
    fig = plots.figure(title or "Orthogonalizing an n×n matrix: Newton–Schulz vs SVD",
                       "n", "wall-clock seconds", logx=True, logy=True)
    for key in [k for k in rows[0] if k.startswith("ns_") and not k.endswith("_cpu_s")]:
        label = "Newton–Schulz, 5 steps, " + key[3:-2]
        fig.add_scatter(x=n, y=[r.get(key) for r in rows], mode="lines+markers", name=label)
    fig.add_scatter(x=n, y=[r["svd_s"] for r in rows], mode="lines+markers", name="SVD (exact U Vᵀ)")
    fig.update_layout(hovermode="closest")
    return fig


def loss_figure(runs: dict, title: str = "", x: str = "step", level: float | None = None,
                level_name: str = "target", colors: dict | None = None) -> "plots.go.Figure":
    """Training loss of several runs (``{name: History}``) against step or wall-clock seconds,
    with an optional dotted horizontal ``level`` drawn as a trace (so sliders toggle it too)."""
    fig = plots.figure(title, "step" if x == "step" else "seconds", "training loss", logy=True,
                       height=plots.HEIGHT + 60)
    right = 0.0
    for i, (name, h) in enumerate(runs.items()):
        xs = np.asarray(h.steps if x == "step" else h["time"], dtype=float)
        right = max(right, float(xs[-1]) if len(xs) else 0.0)
        color = (colors or {}).get(name, plots.PALETTE[i % len(plots.PALETTE)])
        fig.add_scatter(x=xs, y=h["train_loss"], mode="lines", line=dict(color=color),
                        name=name + (f" ({h.status})" if h.diverged else ""))
    if level is not None:
        fig.add_scatter(x=[0.0, right], y=[level, level], mode="lines", name=level_name,
                        line=dict(color="#555", dash="dot", width=1), hoverinfo="skip")
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
                      margin=dict(b=110))
    return fig


def practice_figures(result: dict) -> tuple:
    """Training loss of each optimizer at its best rate, against steps and against seconds."""
    timed = result["timed"]
    runs = {f"{LABELS[k]} (lr {result['best'].get(k.split('_')[0]):g})": h for k, h in timed.items()}
    by_step = loss_figure(runs, f"{result['data']}: training loss at each optimizer's best rate",
                          level=result["target"])
    by_time = loss_figure(runs, "…and against wall-clock time", x="time", level=result["target"])
    return by_step, by_time


def sweep_slider(sweeps: dict, target: float, title: str = "") -> "plots.go.Figure":
    """Training loss for every swept learning rate, a slider over the optimizer."""
    figs = [loss_figure({f"lr {lr:g}": h for lr, h in runs.items()},
                        f"{title}{LABELS[name]}: every learning rate swept", level=target)
            for name, runs in sweeps.items()]
    return plots.slider(figs, [LABELS[name] for name in sweeps], name="optimizer", active=0)


def memory_figure(result: dict, what: str = "fraction") -> "plots.go.Figure":
    """Fraction of pairs (or of frequency mass) recovered after one step, against N/d."""
    ytitle = {"fraction": "fraction of pairs recovered",
              "mass": "frequency-weighted recall"}[what]
    fig = plots.figure(f"One step on a linear associative memory (d = {result['dim']}, "
                       f"α = {result['alpha']:g})", "pairs stored N / dimension d", ytitle,
                       logx=True)
    for i, (m, ys) in enumerate(result[what].items()):
        counts = [f"{y * n:.0f} of {n} pairs" for y, n in zip(result["fraction"][m], result["n"])]
        fig.add_scatter(x=result["ratios"], y=ys, mode="lines+markers", name=MEMORY_LABELS[m],
                        text=counts, hovertemplate="%{y:.3f} (%{text})",
                        line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.add_vline(x=1.0, line=dict(color="#555", dash="dot", width=1),
                  annotation_text="N = d", annotation_position="top")
    fig.update_yaxes(range=[0, 1.05])
    return fig


MEMORY_LABELS = {"sgd": "SGD", "muon": "Muon (NS₅)", "newton": "Newton"}


def memory_rank_figure(result: dict, ratio: float = 4) -> "plots.go.Figure":
    """Which pairs are recovered at N ≈ ratio·d: recall against frequency rank (log bins)."""
    j = int(np.argmin([abs(r - ratio) for r in result["ratios"]]))
    fig = plots.figure(f"Which pairs one step stores (N = {result['n'][j]} = "
                       f"{result['ratios'][j]:g}·d)", "frequency rank i (1 = most frequent)",
                       "fraction recovered in rank bin", logx=True)
    for i, (m, rows) in enumerate(result["by_rank"].items()):
        fig.add_scatter(x=result["rank_centers"][j], y=rows[j], mode="lines+markers",
                        name=MEMORY_LABELS[m], line=dict(color=plots.PALETTE[i % len(plots.PALETTE)]))
    fig.update_yaxes(range=[0, 1.05])
    return fig


def memory_alpha_slider(by_alpha: dict) -> "plots.go.Figure":
    """Precomputed recall curves (``{alpha: run_memory result}``) with a slider over α."""
    labels = list(by_alpha)
    return plots.slider([memory_figure(by_alpha[a]) for a in labels], labels, name="α",
                        active=labels.index("1") if "1" in labels else 0)


def first_at_or_below(history, value: float):
    """First evaluation step with training loss <= ``value`` (None if never)."""
    idx = np.flatnonzero(history["train_loss"] <= value)
    return int(history.steps[idx[0]]) if len(idx) else None


def reference_loss(history, last: int = 5) -> float:
    """A run's final training loss, averaged over its last ``last`` evaluations (one noisy
    evaluation should not set the bar)."""
    return float(np.mean(history["train_loss"][-last:]))


def shaping_summary(result: dict, reference: str = "p = 0") -> list[dict]:
    """Per run: final loss, and steps to reach the reference run's final loss (DynMuon's
    measure: how much sooner a run gets where Muon ends up)."""
    ref = result["runs"].get(reference)
    target = reference_loss(ref) if ref is not None and not ref.diverged else None
    ref_steps = first_at_or_below(ref, target) if target is not None else None
    rows = []
    for name, h in result["runs"].items():
        s = first_at_or_below(h, target) if target is not None and not h.diverged else None
        rows.append(dict(update=name,
                         final_loss=round(reference_loss(h), 4) if not h.diverged else h.status,
                         steps_to_reference=s,
                         saved=f"{100 * (1 - s / ref_steps):.0f}%" if s and ref_steps else "—"))
    return rows


SHAPING_COLORS = {"p = 1": "#3366cc", "p = 0.5": "#0099c6", "p = 0": "#ff9900",
                  "p = -0.25": "#109618", "p = -0.5": "#990099"}


def shaping_figure(result: dict, reference: str = "p = 0") -> "plots.go.Figure":
    """Training loss of each p (and the schedule, in red); dotted: the reference's final loss."""
    ref = result["runs"].get(reference)
    level = reference_loss(ref) if ref is not None and not ref.diverged else None
    colors = {n: SHAPING_COLORS.get(n, "#dc3912" if n.startswith("p:") else "#555")
              for n in result["runs"]}
    return loss_figure(result["runs"], f"Update U Σᵖ Vᵀ with fixed and scheduled p (lr {result['lr']:g})",
                       level=level, level_name=f"final loss of {reference}", colors=colors)


def shaping_slider(by_lr: dict) -> "plots.go.Figure":
    """Precomputed shaping runs (``{lr: run_shaping result}``) with a slider over the rate."""
    labels = list(by_lr)
    return plots.slider([shaping_figure(by_lr[lr]) for lr in labels], labels, name="lr",
                        active=len(labels) // 2)


def timing_rows(rows: list[dict]) -> list[dict]:
    """The timing measurements as table rows (CPU seconds too, where measured)."""
    out = []
    for r in rows:
        row = {"n": r["n"]}
        for k in [k for k in r if k.startswith("ns_") and not k.endswith("_cpu_s")]:
            row[f"NS5 {k[3:-2]} (s)"] = f"{r[k]:.3g}"
        row["SVD (s)"] = f"{r['svd_s']:.3g}"
        row["SVD / NS5"] = f"{r['svd_s'] / r['ns_float32_s']:.1f}×"
        if r.get("device") == "cpu" and "svd_cpu_s" in r:
            row["SVD / NS5 in CPU s"] = f"{r['svd_cpu_s'] / r['ns_float32_cpu_s']:.1f}×"
        row["‖NS5 − UVᵀ‖_F / ‖UVᵀ‖_F"] = f"{r['rel_error']:.3f}"
        row["max |σ − 1|"] = f"{r['max_sigma_error']:.3f}"
        out.append(row)
    return out


# ============================================================================ live panels


def ns_panel(cfg: NSConfig | None = None):
    """Try it: coefficients, steps, matrix shape and spectrum -> singular values after NS."""
    from .widgets import Panel, Slider, controls_for

    cfg = cfg or NSConfig()

    def run(update, rows, cols, spectrum, steps, a, b, c):
        rows, cols = int(rows), int(cols)
        G = random_matrix(rows, cols, spectrum, cfg.seed)
        out = newton_schulz(G, int(steps), (a, b, c), dtype=torch.float32)
        if not torch.isfinite(out).all():
            update(status=f"diverged: coefficients ({a:.3g}, {b:.3g}, {c:.3g}) blow up "
                          "singular values")
            return None
        s = torch.linalg.svdvals(out)
        update(status=f"singular values in [{s.min():.3g}, {s.max():.3g}]")
        return spectrum_figure(G, out, f"{rows}×{cols}, {spectrum}, {steps} steps")

    return Panel(run, [Slider("rows", 2, 1024, cfg.rows, integer=True),
                       Slider("cols", 2, 1024, cfg.cols, integer=True)]
                 + controls_for(cfg, ["spectrum", "steps", "a", "b", "c"]),
                 title="Try it: Newton–Schulz on one matrix")


def practice_panel(cfg: PracticeConfig, data: D.Dataset | None = None):
    """Try it: train the MLP with one optimizer at one learning rate, live."""
    from .widgets import Choice, Panel, Slider

    data = data if data is not None else practice_data(cfg)

    def run(update, optimizer, lr, width, depth, steps):
        c = cfg.replace(width=int(width), depth=int(depth), steps=int(steps))
        model = practice_model(c, data, c.seed)
        opt = muon_with_adamw(model, lr, 3e-3) if optimizer == "muon" else optimizer
        build = lambda h: plots.curves({LABELS[optimizer]: h}, ["train_loss"], logy=True,  # noqa: E731
                                       ytitle="training loss")
        h = T.train(model, data, steps=c.steps, optimizer=opt, lr=lr, batch_size=c.batch_size,
                    eval_every=max(1, c.steps // 50), seed=c.seed, eval_test=False,
                    callbacks=[update.every(build, total_steps=c.steps)])
        update(status=h.status if h.diverged else f"final training loss {h.last('train_loss'):.3g}")
        return build(h)

    return Panel(run, [Choice("optimizer", list(PRACTICE_OPTIMIZERS), "muon"),
                       Slider("lr", 1e-4, 3.0, 0.03, log=True),
                       Slider("width", 8, 256, cfg.width, step=8, integer=True),
                       Slider("depth", 1, 6, cfg.depth, integer=True),
                       Slider("steps", 20, 2000, cfg.steps, step=10, integer=True)],
                 title="Try it: one optimizer, one learning rate",
                 note="Muon's AdamW part (head, biases) uses lr 3e-3.")


def memory_panel(cfg: MemoryConfig):
    """Try it: dimension and power-law exponent -> recall after one step."""
    from .widgets import Panel, Slider, controls_for

    def run(update, dim, alpha, seeds):
        c = cfg.replace(dim=int(dim), alpha=float(alpha), seeds=int(seeds))
        return memory_figure(run_memory(c))

    return Panel(run, [Slider("dim", 8, 256, min(cfg.dim, 256), step=8, integer=True)]
                 + controls_for(cfg, ["alpha"])
                 + [Slider("seeds", 1, 10, cfg.seeds, integer=True)],
                 title="Try it: storage after one step")


def shaping_panel(cfg: ShapingConfig, data: D.Dataset | None = None):
    """Try it: fixed p vs a p schedule, live."""
    from .widgets import Panel, Slider, controls_for

    data = data if data is not None else D.mnist1d(4000, 1000, seed=0)

    def run(update, p, p_start, p_end, lr, steps):
        c = cfg.replace(p_start=p_start, p_end=p_end, lr=lr, steps=int(steps))
        runs = {}
        build = lambda: shaping_figure(dict(runs=runs, lr=lr), reference=f"p = {p:g}")  # noqa: E731
        runs[f"p = {p:g}"] = shaping_run(c, data, p)
        update(fig=build(), progress=0.5)
        runs[f"p: {p_start:g} → {p_end:g}"] = shaping_run(
            c, data, linear_p_schedule(p_start, p_end, c.steps))
        bad = [k for k, h in runs.items() if h.diverged]
        if bad:
            update(status="; ".join(f"{k} {runs[k].status}" for k in bad))
        return build()

    return Panel(run, [Slider("p", -1.0, 1.5, 0.0, step=0.05)]
                 + controls_for(cfg, ["p_start", "p_end", "lr"])
                 + [Slider("steps", 20, 2000, cfg.steps, step=10, integer=True)],
                 title="Try it: fixed p against a schedule of p")


# ============================================================================ claims


def _fewer(steps: int, reference: int) -> str:
    pct = 100 * (1 - steps / reference)
    return f"{pct:.0f}% fewer" if pct >= 0 else f"{-pct:.0f}% more"


def claims_rows(band: dict, timing: list[dict], practice: dict, memory: dict,
                shaping: dict) -> list[dict]:
    """The papers' claims beside this run's measurements (all numbers computed here)."""
    k5 = band["k"].index(5)
    t1024 = next((r for r in timing if r["n"] == 1024), timing[-1])
    summ = practice_summary(practice)
    mu, ad = summ["muon"], summ["adamw"]
    ratio_steps = (f"{ad['steps'] / mu['steps']:.1f}× fewer steps" if mu["steps"] and ad["steps"]
                   else f"Muon {mu['steps']} vs AdamW {ad['steps']} steps (None = not reached)")
    secs = (f"; in seconds {ad['seconds'] / mu['seconds']:.2f}× (torch, bf16 NS), "
            f"{ad['seconds'] / summ['muon_fp32']['seconds']:.2f}× (float32 NS)"
            if mu["seconds"] and ad["seconds"] and summ.get("muon_fp32", {}).get("seconds") else "")
    j = int(np.argmin([abs(r - 4) for r in memory["ratios"]]))
    f = {m: memory["fraction"][m][j] for m in memory["fraction"]}
    rows = {r["update"]: r for r in shaping_summary(shaping)}
    s_sched, s_muon = rows[shaping["schedule"]]["steps_to_reference"], rows["p = 0"]["steps_to_reference"]
    final = {k: (f"{r['final_loss']:.3g}" if isinstance(r["final_loss"], float) else r["final_loss"])
             for k, r in rows.items()}
    total = shaping["runs"]["p = 0"].steps[-1]
    sched = (f"lr {shaping['lr']:g}, {total} steps. To reach Muon's (p = 0) final loss "
             f"{final['p = 0']}: schedule {s_sched if s_sched is not None else 'never'} vs p = 0 "
             f"{s_muon} steps" + (f" ({_fewer(s_sched, s_muon)})" if s_sched and s_muon else "")
             + f". Final loss: schedule {final[shaping['schedule']]} vs p = 0 {final['p = 0']}")
    return [
        dict(claim="5 quintic Newton–Schulz steps put singular values in a band ≈ [0.7, 1.2], not at 1",
             source="Muon (Jordan et al.)",
             measured=f"[{band['lo'][k5]:.3f}, {band['hi'][k5]:.3f}] for a random 256×128 matrix"),
        dict(claim="Newton–Schulz (matrix products only, bfloat16) is much cheaper than an SVD on accelerators",
             source="Muon (Jordan et al.)",
             measured=(f"{t1024['device']}, float32, precomputed: n = {t1024['n']}: NS {t1024['ns_float32_s']:.3g} s "
                       f"vs SVD {t1024['svd_s']:.3g} s ({t1024['svd_s'] / t1024['ns_float32_s']:.1f}×"
                       + (f"; {t1024['svd_cpu_s'] / t1024['ns_float32_cpu_s']:.1f}× in CPU seconds); no GPU measured"
                          if t1024["device"] == "cpu" and "svd_cpu_s" in t1024 else ")"))),
        dict(claim="Muon trains faster than AdamW (e.g. GPT-2 speedrun 31.4 → 24.9 min)",
             source="Muon (Jordan et al.)",
             measured=f"{practice['data']} MLP, loss {practice['target']:g}: {ratio_steps}{secs}"),
        dict(claim="One Muon step stores far more associations than SGD and matches Newton",
             source="workshop abstract (associative memory)",
             measured=f"N = {memory['n'][j]} = {memory['ratios'][j]:g}d: SGD {f['sgd']:.2f}, "
                      f"Muon {f['muon']:.2f}, Newton {f['newton']:.2f} of pairs"),
        dict(claim="p from positive to mildly negative (DynMuon) needs 10.6–26.5% fewer steps than Muon",
             source="workshop abstract (spectral shaping)", measured=sched),
    ]


# ============================================================================ precompute / bench


def precompute(profile: str) -> list:
    """The chapter's static figures: timing vs size, the lr sweeps, the memory over α, and
    spectral shaping over the learning rate."""
    profile = get_profile(profile)
    note = {"gpu": "GPU scale.", "cpu": "CPU scale (no GPU at hand): matrices to 2048, MLP width 64."}.get(
        profile, "Smoke scale.") + f" {torch.get_num_threads()} CPU thread(s)."
    command = f"python -m dynamics.precompute spectral_optimizers --profile {profile}"
    paths = []

    start = time.perf_counter()
    device = get_device()
    sizes = {"smoke": [64, 128, 256], "cpu": [64, 128, 256, 512, 1024, 2048],
             "gpu": [64, 128, 256, 512, 1024, 2048, 4096, 8192]}[profile]
    dtypes = (torch.float32, torch.bfloat16) if device.type == "cuda" else (torch.float32,)
    rows = time_orthogonalization(sizes, dtypes=dtypes)
    paths.append(results.save("spectral_timing", rows, profile, config=dict(sizes=sizes),
                              command=command, note=note, wall_time=time.perf_counter() - start))

    start = time.perf_counter()
    cfg = PracticeConfig.for_profile(profile)
    res = run_practice(cfg, teaching_fp32=False, progress=False)
    payload = dict(sweeps={k: {str(lr): h.to_dict() for lr, h in v.items()}
                           for k, v in res["sweeps"].items()},
                   best=res["best"], target=res["target"], data=res["data"])
    paths.append(results.save("spectral_practice", payload, profile, config=cfg, command=command,
                              note=note, wall_time=time.perf_counter() - start))

    start = time.perf_counter()
    mcfg = MemoryConfig.for_profile(profile)
    mem = {f"{a:g}": run_memory(mcfg.replace(alpha=a)) for a in (0.5, 1.0, 1.5, 2.0)}
    paths.append(results.save("spectral_memory", mem, profile, config=mcfg, command=command,
                              note=note, wall_time=time.perf_counter() - start))

    start = time.perf_counter()
    scfg = ShapingConfig.for_profile(profile)
    data = D.mnist1d(4000, 1000, seed=0)
    shp = {}
    for lr in scfg.lrs:
        r = run_shaping(scfg, data, lr=lr, progress=False)
        shp[f"{lr:g}"] = dict(runs={k: h.to_dict() for k, h in r["runs"].items()},
                              schedule=r["schedule"], lr=lr)
    paths.append(results.save("spectral_shaping", shp, profile, config=scfg, command=command,
                              note=note, wall_time=time.perf_counter() - start))
    return paths


def load_practice(name: str = "spectral_practice"):
    """The precomputed lr sweeps as ``({optimizer: {lr: History}}, target, provenance)``."""
    payload, prov = results.load(name)
    sweeps = {k: {float(lr): T.History.from_dict(h) for lr, h in v.items()}
              for k, v in payload["sweeps"].items()}
    return sweeps, payload["target"], payload["data"], prov


def load_shaping(name: str = "spectral_shaping"):
    """The precomputed shaping runs, one result dict per learning rate, and the provenance."""
    payload, prov = results.load(name)
    out = {}
    for lr, r in payload.items():
        out[lr] = dict(r, runs={k: T.History.from_dict(h) for k, h in r["runs"].items()})
    return out, prov


def bench(sizes=(1024, 4096)) -> None:
    """Newton–Schulz (5 steps) vs SVD on the current device, for 1024² and 4096² matrices."""
    device = get_device()
    dtypes = (torch.float32, torch.bfloat16) if device.type == "cuda" else (torch.float32,)
    name = (torch.cuda.get_device_name(device) if device.type == "cuda"
            else f"cpu, {torch.get_num_threads()} thread(s)")
    print(f"spectral bench on {name} (median of 3 runs up to n = 1024, one run above)")
    for row in time_orthogonalization(sizes, dtypes=dtypes, device=device):
        cpu = device.type == "cpu"
        ns = "  ".join(f"NS5 {k[3:-2]} {v:.4g} s" + (f" (CPU {row[k[:-2] + '_cpu_s']:.4g} s)" if cpu else "")
                       for k, v in row.items() if k.startswith("ns_") and not k.endswith("_cpu_s"))
        svd = f"SVD {row['svd_s']:.4g} s" + (f" (CPU {row['svd_cpu_s']:.4g} s)" if cpu else "")
        print(f"n = {row['n']:>5}:  {ns}  |  {svd}  |  SVD / NS5 (float32) = "
              f"{row['svd_s'] / row['ns_float32_s']:.1f}× wall"
              + (f", {row['svd_cpu_s'] / row['ns_float32_cpu_s']:.1f}× CPU" if cpu else "")
              + f"  |  NS5 vs U Vᵀ: rel. error {row['rel_error']:.3f}, "
                f"max|σ−1| {row['max_sigma_error']:.3f}", flush=True)
