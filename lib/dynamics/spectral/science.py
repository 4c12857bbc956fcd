"""The science of spectral optimizers, read top to bottom like one reference file.

1. **The size of a matrix step.** A weight matrix is a linear map, so the size of a step
   that matters is how much it can change the layer's output: the RMS→RMS operator norm
   (:func:`rms_to_rms_norm`), the spectral norm up to a shape factor. Steepest descent under
   the spectral norm steps along U Vᵀ (:func:`polar`).
2. **Newton–Schulz.** Muon computes an approximate U Vᵀ with a few matrix products
   (:func:`newton_schulz`); :func:`ns_map` is what it does to one singular value.
3. **Muon.** Momentum, then orthogonalize, then scale per shape (:func:`muon_update`,
   :func:`muon_lr_scale`, :class:`TeachingMuon`, the same update as ``torch.optim.Muon``).
4. **Spectral shaping.** U Σᵖ Vᵀ between SGD (p = 1) and Muon (p = 0) (:func:`spectral_shape`,
   :class:`SpectralShaping`, :func:`linear_p_schedule`: the DynMuon idea).
5. **A linear associative memory** solved in one step by SGD, Muon and Newton's method
   (:func:`memory_task`, :func:`memory_gradient`, :func:`batch_gradient`, :func:`one_step`,
   :func:`recovered`), the model of Kim et al.'s capacity result.
6. The settings of the chapter's experiments (one ``Config`` each) and the task and model
   they train.

No plotting here: runners in ``experiments.py``, figures in ``figures.py``, panels in ``panels.py``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from .. import data as D, models, train as T
from ..config import Config, param
from ..runtime import MAX_SEED, get_device, get_seed, seeded

__all__ = ['MUON_COEFFS', 'CUBIC_COEFFS', 'EPS', 'rms_to_rms_norm', 'polar', 'nuclear_norm',
           'output_change', 'newton_schulz', 'ns_map', 'ns_band', 'momentum_direction', 'muon_update',
           'muon_lr_scale', 'unit_updates', 'TeachingMuon', 'spectral_shape', 'SpectralShaping',
           'linear_p_schedule', 'MEMORY_METHODS', 'memory_task', 'memory_logits', 'memory_loss',
           'memory_gradient', 'batch_gradient', 'one_step', 'recovered', 'SPECTRA',
           'random_matrix', 'singular_value_band', 'NSConfig', 'WidthConfig', 'PracticeConfig',
           'MemoryConfig', 'ShapingConfig', 'default_data', 'practice_data', 'mlp', 'muon_with_adamw']

MUON_COEFFS = (3.4445, -4.7750, 2.0315)  # Jordan et al.'s quintic (torch.optim.Muon's default)
CUBIC_COEFFS = (1.5, -0.5, 0.0)          # the classical Newton–Schulz iteration, converges to 1
EPS = 1e-7                               # torch.optim.Muon's guard against a zero gradient


def _check_matrix(G, what: str = "G") -> None:
    if not isinstance(G, torch.Tensor) or G.ndim != 2:
        shape = list(G.shape) if isinstance(G, torch.Tensor) else type(G).__name__
        raise ValueError(f"{what} must be a 2-D matrix (flatten conv kernels first), got {shape}")


# ================================================================ 1. the size of a matrix step


def rms_to_rms_norm(W: torch.Tensor) -> float:
    """The RMS→RMS operator norm of a layer y = W x, with W of shape
    (fan_out, fan_in): the most the output's RMS can grow per unit of the
    input's RMS,

        max_x ‖W x‖_RMS / ‖x‖_RMS = √(fan_in / fan_out) · ‖W‖₂,

    where ‖v‖_RMS = ‖v‖₂ / √dim. Activations have entries of order one at
    any width, so RMS is the size that means the same at every width. A
    step ΔW with ‖ΔW‖_RMS→RMS ≤ η changes a layer's output by at most η per
    unit of input, whatever the layer's shape: the norm in which one
    learning rate serves every layer and every width (the spectral
    condition behind μP).
    """
    _check_matrix(W, "W")
    fan_out, fan_in = W.shape
    spectral = float(torch.linalg.matrix_norm(W.double(), 2))
    return spectral * math.sqrt(fan_in / fan_out)


def polar(G: torch.Tensor) -> torch.Tensor:
    """U Vᵀ for G = U Σ Vᵀ: steepest descent under the spectral norm.

    Among all steps D with ‖D‖₂ ≤ 1, U Vᵀ gains the most first-order
    decrease ⟨G, D⟩. Since |uᵢᵀ D vᵢ| ≤ ‖D‖₂ ≤ 1,

        ⟨G, D⟩ = Σᵢ σᵢ uᵢᵀ D vᵢ ≤ Σᵢ σᵢ = ‖G‖_*,

    with equality at D = U Vᵀ. Every direction the gradient points in gets
    a step of the same size, whatever its singular value: the spectrum is
    thrown away, the singular vectors are kept.
    """
    _check_matrix(G)
    U, _, Vh = torch.linalg.svd(G, full_matrices=False)
    return U @ Vh


def nuclear_norm(G: torch.Tensor) -> float:
    """‖G‖_* = Σ σᵢ, the dual of the spectral norm: the largest ⟨G, D⟩ over ‖D‖₂ ≤ 1."""
    _check_matrix(G)
    return float(torch.linalg.svdvals(G.double()).sum())


def output_change(update: torch.Tensor, x: torch.Tensor) -> float:
    """How much a step ``update`` moves a layer's output on inputs ``x`` (rows are examples),
    relative to their size: ‖ΔW x‖_RMS / ‖x‖_RMS, at most :func:`rms_to_rms_norm` (update)."""
    _check_matrix(update, "update")
    return float((x @ update.T).pow(2).mean().sqrt() / x.pow(2).mean().sqrt())


# ================================================================ 2. Newton–Schulz


def newton_schulz(G: torch.Tensor, steps: int = 5, coeffs=MUON_COEFFS,
                  eps: float = EPS, dtype=torch.bfloat16) -> torch.Tensor:
    """Approximately orthogonalize G: map G = U Σ Vᵀ to U f(Σ) Vᵀ, f ≈ 1.

    Each step applies the odd polynomial f(x) = a x + b x³ + c x⁵ to every
    singular value at once, with matrix products only: with A = X Xᵀ,
    X ← a X + (b A + c A²) X.

    - Dividing by the Frobenius norm puts every singular value in [0, 1] (‖G‖₂ ≤ ‖G‖_F).
    - A tall matrix is transposed, so that A = X Xᵀ is the smaller Gram matrix.
    - (3.4445, −4.7750, 2.0315) is not a convergent iteration. It makes
      the slope at zero, f'(0) = a, as large as possible while the iterates
      stay bounded (five steps multiply a small singular value by
      a⁵ ≈ 484), at the price of settling in a band of about [0.7, 1.2]
      instead of at 1. For training, a fast rough U Vᵀ beats a slow exact one.

    ``dtype`` is the working precision: bfloat16 as in torch.optim.Muon
    (the iteration shrugs off rounding); None keeps G's. The two ``addmm``
    calls are the update above, written to round as torch's does.
    """
    _check_matrix(G)
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    if len(coeffs) != 3:
        raise ValueError(f"coeffs must be (a, b, c), got {coeffs!r}")
    a, b, c = (float(v) for v in coeffs)
    X = G.to(dtype) if dtype is not None else G.clone()
    tall = G.size(0) > G.size(1)
    if tall:
        X = X.T
    X = X / X.norm().clamp(min=eps)
    for _ in range(steps):
        A = X @ X.T
        B = torch.addmm(A, A, A, beta=b, alpha=c)  # b A + c A²
        X = torch.addmm(X, B, X, beta=a)           # a X + B X
    return X.T if tall else X


def ns_map(sigma, steps: int = 5, coeffs=MUON_COEFFS) -> np.ndarray:
    """What ``steps`` Newton–Schulz iterations do to one (Frobenius-normalized) singular
    value: σ ↦ f(f(…f(σ))), f(x) = a x + b x³ + c x⁵."""
    a, b, c = (float(v) for v in coeffs)
    x = np.asarray(sigma, dtype=float).copy()
    for _ in range(steps):
        x = a * x + b * x ** 3 + c * x ** 5
    return x


# ================================================================ 3. Muon



def ns_band(lo: float = 1.5e-3, steps: int = 5, coeffs=MUON_COEFFS, n: int = 200_001) -> dict:
    """Where ``steps`` Newton–Schulz iterations send every singular value in ``[lo, 1]``
    (a fine log grid): the band ``[min, max]`` of the map, and ``f(1)`` after one and after
    ``steps`` iterations. A property of the polynomial, the same on every machine."""
    s = np.logspace(np.log10(lo), 0.0, n)
    y = ns_map(s, steps, coeffs)
    return dict(lo=lo, min=float(y.min()), max=float(y.max()),
                one_step_at_1=float(ns_map(1.0, 1, coeffs)), at_1=float(ns_map(1.0, steps, coeffs)))

def momentum_direction(grad: torch.Tensor, buf: torch.Tensor,
                       beta: float = 0.95,
                       nesterov: bool = True) -> torch.Tensor:
    """Update the momentum buffer in place, B ← β B + (1 − β) g, and return
    the direction to orthogonalize: (1 − β) g + β B with Nesterov, else B
    (torch.optim.Muon's convention)."""
    buf.lerp_(grad, 1 - beta)
    return grad.lerp(buf, beta) if nesterov else buf


def muon_update(grad: torch.Tensor, momentum_buffer: torch.Tensor,
                beta: float = 0.95, nesterov: bool = True,
                ns_steps: int = 5, coeffs=MUON_COEFFS,
                dtype=torch.bfloat16) -> torch.Tensor:
    """Muon's direction for one weight matrix: momentum first, *then*
    orthogonalize. (Orthogonalizing first and averaging after would average
    directions that no longer carry their sizes: a direction seen once
    would count as much as a steady one.)"""
    _check_matrix(grad, "grad")
    if not 0.0 <= beta < 1.0:
        raise ValueError(f"beta must lie in [0, 1), got {beta!r}")
    M = momentum_direction(grad, momentum_buffer, beta, nesterov)
    return newton_schulz(M, ns_steps, coeffs, dtype=dtype)


def muon_lr_scale(shape, adjust: str | None = "original") -> float:
    """torch.optim.Muon's learning-rate multiplier for a weight of ``shape`` = (fan_out, fan_in).

    ``original`` (Jordan's, torch's default): √max(1, fan_out/fan_in). A semi-orthogonal
    U Vᵀ has spectral norm 1, so for fan_out ≥ fan_in the step's RMS→RMS norm is exactly the
    learning rate (see :func:`rms_to_rms_norm`): the same change of function for every shape.
    ``match_rms_adamw`` (Moonshot's): 0.2 √max(fan_out, fan_in), an update whose entries
    have RMS 0.2 like AdamW's, so that AdamW's learning rate can be reused.
    """
    A, B = shape[:2]
    if adjust in (None, "original"):
        return math.sqrt(max(1.0, A / B))
    if adjust == "match_rms_adamw":
        return 0.2 * math.sqrt(max(A, B))
    raise ValueError(f"adjust must be 'original' or 'match_rms_adamw', got {adjust!r}")


def unit_updates(grad: torch.Tensor) -> dict:
    """Each optimizer's first step on one weight matrix, per unit learning
    rate:

    - ``sgd``: the gradient itself, as large as the gradient is;
    - ``adam``: m̂/(√v̂ + ε) = g/(|g| + ε) on the first step, a sign matrix
      (entries ±1 whatever the rank: its spectral norm grows with size);
    - ``muon``: :func:`muon_lr_scale` × NS₅(g), spectral norm ≈ 1 times the
      shape's scale.
    """
    _check_matrix(grad, "grad")
    muon = newton_schulz(grad, dtype=torch.float32)
    muon = muon * muon_lr_scale(grad.shape)
    return dict(sgd=grad, adam=grad / (grad.abs() + 1e-8), muon=muon)


class TeachingMuon(torch.optim.Optimizer):
    """Muon for 2-D weights, built from :func:`muon_update`: per matrix W,

        B ← β B + (1 − β) g;   O = NS₅((1 − β) g + β B);   W ← (1 − η λ) W − η s O,

    with s = :func:`muon_lr_scale` (W.shape). The same update as ``torch.optim.Muon``
    (a test checks it to 1e-5); ``dtype=torch.float32`` runs Newton–Schulz in float32, which
    is what a CPU without bfloat16 units wants.
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
                                     f"{list(p.shape)}: give biases and gains to AdamW, "
                                     "and flatten a conv kernel to 2-D first")

    def direction(self, grad: torch.Tensor, buf: torch.Tensor, group: dict) -> torch.Tensor:
        """One matrix's direction: :func:`muon_update` (subclasses shape the spectrum otherwise)."""
        return muon_update(grad, buf, group["momentum"], group["nesterov"], group["ns_steps"],
                           group["coeffs"], group["dtype"])

    def directions(self, grads: list, bufs: list, group: dict) -> list:
        """Every matrix's direction in one group (a subclass may batch them)."""
        return [self.direction(g, b, group) for g, b in zip(grads, bufs)]

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, wd = group["lr"], group["weight_decay"]
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                if "momentum_buffer" not in self.state[p]:
                    self.state[p]["momentum_buffer"] = torch.zeros_like(p.grad)
            # momentum, then orthogonalize
            directions = self.directions([p.grad for p in params],
                                         [self.state[p]["momentum_buffer"] for p in params], group)
            for p, O in zip(params, directions):
                # decoupled weight decay, then the step, scaled per shape
                scale = muon_lr_scale(p.shape, group["adjust_lr"])
                p.mul_(1 - lr * wd)
                p.add_(O, alpha=-lr * scale)
        return loss


# ================================================================ 4. spectral shaping


def spectral_shape(G: torch.Tensor, p: float,
                   rel_eps: float = 1e-3) -> torch.Tensor:
    """U Σᵖ Vᵀ, rescaled to the Frobenius norm √r of U Vᵀ (r = directions
    kept).

    p = 1 keeps the gradient's own proportions (a normalized SGD step),
    p = 0 gives Muon's U Vᵀ, p < 0 puts more of the step into the
    directions where the gradient is *weak*. Only the allocation across
    directions changes with p, never the step's length, so one learning
    rate is comparable across p. Singular values below ``rel_eps`` × σ_max
    count as zero (a negative power would blow up numerical noise).

    ``G`` may be a stack [..., m, n] of matrices, shaped in one batched SVD. Nothing here
    reads a value back to the host (on a GPU that would stall every step): a zero matrix, or
    one with a non-finite entry, gives a zero step by masking, and the training's evaluations
    see the non-finite loss.
    """
    if not isinstance(G, torch.Tensor) or G.ndim < 2:
        _check_matrix(G)
    if not math.isfinite(p):
        raise ValueError(f"p must be a finite number, got {p!r}")
    if not 0.0 < rel_eps < 1.0:
        raise ValueError(f"rel_eps must lie in (0, 1), got {rel_eps!r}")
    G = G.float()
    finite = torch.isfinite(G).all(-1, keepdim=True).all(-2, keepdim=True)
    U, S, Vh = torch.linalg.svd(torch.where(finite, G, 0.0), full_matrices=False)
    top = S[..., :1]
    rel = S / torch.where(top > 0, top, 1.0)  # all zero when σ_max is: nothing is kept
    keep = rel > rel_eps
    s = torch.where(keep, rel.clamp_min(rel_eps) ** p, 0.0)
    norm = s.norm(dim=-1, keepdim=True)
    s = s * keep.sum(-1, keepdim=True).sqrt() / torch.where(norm > 0, norm, 1.0)
    return (U * s.unsqueeze(-2)) @ Vh


class SpectralShaping(TeachingMuon):
    """Muon with U Σᵖ Vᵀ (exact SVD, :func:`spectral_shape`) in place of Newton–Schulz.

    ``p`` is a number or a schedule ``p(step)``. DynMuon's idea: start positive (emphasize the
    strong, high-curvature directions) and end mildly negative (move update strength to weak
    directions that still carry signal). See :func:`linear_p_schedule`.
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

    def direction(self, grad, buf, group):
        return self.directions([grad], [buf], group)[0]

    def directions(self, grads, bufs, group):
        """Matrices of one shape are shaped together: one batched SVD per shape and step."""
        p = self.current_p()
        M = [momentum_direction(g, b, group["momentum"], group["nesterov"])
             for g, b in zip(grads, bufs)]
        out = [None] * len(M)
        for shape in dict.fromkeys(m.shape for m in M):
            idx = [i for i, m in enumerate(M) if m.shape == shape]
            shaped = spectral_shape(torch.stack([M[i] for i in idx]), p, self.rel_eps)
            for i, O in zip(idx, shaped):
                out[i] = O
        return out

    def step(self, closure=None):
        loss = super().step(closure)
        self.steps_taken += 1
        return loss


def linear_p_schedule(p_start: float, p_end: float, steps: int) -> Callable[[int], float]:
    """p(t) moving linearly from ``p_start`` at step 0 to ``p_end`` at step ``steps``."""
    return lambda t: p_start + (p_end - p_start) * min(1.0, t / max(1, steps))


# ================================================================ 5. a linear associative memory


MEMORY_METHODS = ("sgd", "muon", "polar", "newton")


def memory_task(n_pairs: int, dim: int, alpha: float = 1.0, seed: int | None = None,
                dtype=torch.float64, device=None):
    """``n_pairs`` associations k_i -> v_i with Gaussian embeddings N(0, I/dim) in R^dim, and
    power-law frequencies p_i ∝ i^(−alpha) (i = 1 is the most frequent pair)."""
    seed = get_seed(seed)
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


def memory_gradient(keys, values, weights):
    """∇L at W = 0, where the softmax is uniform: −Σ_i w_i (v_i − v̄) k_iᵀ.
    With the pair frequencies as ``weights`` it is the full gradient; with
    a batch's counts, the batch's."""
    return -(values - values.mean(0)).T @ (weights[:, None] * keys)


def batch_gradient(keys, values, freq, batch_size: int, generator=None):
    """The gradient at W = 0 from ``batch_size`` pairs drawn with their
    frequencies (with replacement): a pair never drawn is absent from it,
    whatever the optimizer."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    draws = torch.multinomial(freq.cpu(), batch_size, replacement=True,
                              generator=generator)
    counts = torch.bincount(draws, minlength=len(freq)).to(keys)
    return memory_gradient(keys, values, counts / batch_size)


def one_step(method: str, keys, values, freq, G=None) -> torch.Tensor:
    """The weights after one step from W = 0 along ``method``'s direction
    (up to a positive scale, which cannot change an argmax: no learning
    rate needed). ``G`` is the gradient, by default the full one.

    - ``sgd``: −G. Frequent pairs dominate G; rare ones hide in its small
      singular values.
    - ``muon``: −NS₅(G) ≈ −U Vᵀ. Every direction of G gets the same weight, within the
      quintic's band: a direction weaker than about 1.5e-3·‖G‖_F is not lifted into it.
    - ``polar``: −U Vᵀ exactly (an SVD): the orthogonalization Muon approximates, the control
      that separates what orthogonalizing does from what five Newton–Schulz steps leave.
    - ``newton``: −H⁻¹G. At W = 0 the Hessian is a Kronecker product,
      H[Δ] = C_v Δ C_k with C_k = Σ p_i k_i k_iᵀ and C_v the covariance
      of the values, so H⁻¹G = C_v⁺ G C_k⁺.
    """
    G = memory_gradient(keys, values, freq) if G is None else G
    if method == "sgd":
        return -G
    if method == "muon":
        return -newton_schulz(G, dtype=None)
    if method == "polar":  # rank-aware: the null directions of G (N < d) stay out of the step
        U, sv, Vh = torch.linalg.svd(G, full_matrices=False)
        keep = sv > sv.max() * max(G.shape) * torch.finfo(sv.dtype).eps
        return -U[:, keep] @ Vh[keep]
    if method == "newton":
        Ck = keys.T @ (freq[:, None] * keys)
        centered = values - values.mean(0)
        Cv = centered.T @ centered / len(values)
        pinv = lambda C: torch.linalg.pinv(C, hermitian=True)  # noqa: E731
        return -pinv(Cv) @ G @ pinv(Ck)
    raise ValueError(f"unknown method {method!r}; "
                     f"choose one of {list(MEMORY_METHODS)}")


def recovered(W, keys, values) -> torch.Tensor:
    """Which associations W stores: key i retrieves value i by argmax (bool per pair)."""
    logits = memory_logits(W, keys, values)
    return logits.argmax(1) == torch.arange(len(keys), device=keys.device)


# ================================================================ 6. the experiments' settings


SPECTRA = ("gaussian", "power law", "low rank + noise")


def random_matrix(rows: int, cols: int, spectrum: str = "gaussian", seed: int | None = None) -> torch.Tensor:
    """A random matrix whose singular values are Gaussian-like (Marchenko–Pastur), decay as a
    power law σ_i ∝ i^(−1), or are a rank-4 signal plus small noise (like a gradient)."""
    if spectrum not in SPECTRA:
        raise ValueError(f"unknown spectrum {spectrum!r}; choose one of {list(SPECTRA)}")
    G = torch.randn(rows, cols, generator=torch.Generator().manual_seed(get_seed(seed)))
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


@dataclass
class NSConfig(Config):
    """Newton–Schulz on one matrix: its singular values across iterations."""

    rows: int = param(256, "rows of the matrix", low=2, high=1024)
    cols: int = param(128, "columns of the matrix", low=2, high=1024)
    spectrum: str = param("gaussian", "the matrix's singular values", choices=SPECTRA)
    steps: int = param(5, "Newton–Schulz iterations", low=0, high=30)
    a: float = param(MUON_COEFFS[0], "coefficient a (slope at zero)", low=-5.0, high=5.0)
    b: float = param(MUON_COEFFS[1], "coefficient b", low=-8.0, high=8.0)
    c: float = param(MUON_COEFFS[2], "coefficient c", low=-8.0, high=8.0)
    seed: int = param(0, "random seed", low=0, high=MAX_SEED)


@dataclass
class WidthConfig(Config):
    """One step of SGD, Adam and Muon on the same MLP at several widths: how far each moves a
    hidden layer's output per unit learning rate."""

    widths: list = param([32, 64, 128, 256, 512], "hidden widths compared",
                         cpu=[32, 64, 128, 256, 512, 1024])
    depth: int = param(3, "hidden layers (the second one is measured)", low=2, high=8)
    batch_size: int = param(256, "examples in the batch", low=8, high=4000)
    seeds: int = param(3, "initializations averaged", low=1, high=20)
    seed: int = param(0, "first seed", low=0, high=MAX_SEED)


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
    seed: int = param(0, "seed of the initialization and the batch order", low=0, high=MAX_SEED)
    claim_seeds: int = param(3, "precomputed seeds, from seed on", low=1, high=10, smoke=1)


@dataclass
class MemoryConfig(Config):
    """One step of SGD, Muon and Newton's method on a linear associative memory."""

    dim: int = param(64, "embedding dimension d", low=2, high=2048, cpu=128, gpu=512)
    alpha: float = param(1.0, "power-law exponent of the pair frequencies", low=0.0, high=3.0)
    ratios: list = param([0.25, 0.5, 1, 2, 4, 8, 16], "numbers of pairs N, in units of d",
                         cpu=[0.25, 0.5, 1, 2, 4, 8, 16, 32], gpu=[0.25, 0.5, 1, 2, 4, 8])
    batch_ratio: float = param(4.0, "N / d in the batch-size experiment", low=0.25, high=32.0)
    batch_sizes: list = param([2 ** k for k in range(2, 15)], "batch sizes of the one step",
                              cpu=[2 ** k for k in range(2, 17)], gpu=[2 ** k for k in range(2, 19)])
    seeds: int = param(3, "independent draws averaged", low=1, high=50, cpu=5)
    seed: int = param(0, "first seed", low=0, high=MAX_SEED)


@dataclass
class ShapingConfig(Config):
    """U Σᵖ Vᵀ updates with fixed p, and a schedule from positive to mildly negative p."""

    ps: list = param([1.0, 0.5, 0.0, -0.25, -0.5], "fixed exponents p (p = 0, Muon, the "
                     "reference, is always run)", smoke=[1.0, 0.0, -0.5])
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
    seed: int = param(0, "seed of the initialization and the batch order", low=0, high=MAX_SEED)
    claim_seeds: int = param(3, "precomputed seeds, from seed on", low=1, high=10, smoke=1)


def default_data() -> D.Dataset:
    """The chapter's default task: MNIST-1D, 4,000 training and 1,000 test signals."""
    return D.mnist1d(4000, 1000, seed=0)


def practice_data(cfg: PracticeConfig) -> D.Dataset:
    """MNIST-1D (always available), or CIFAR-10 when asked for and downloadable; offline, a
    request for CIFAR-10 falls back to MNIST-1D and says so."""
    if cfg.task == "cifar10":
        try:
            return D.torchvision_dataset("cifar10", n_train=cfg.n_train, n_test=10000)
        except RuntimeError as err:
            print(f"CIFAR-10 is not available here, so this runs on MNIST-1D.\n({err})")
    return default_data()


def mlp(data: D.Dataset, width: int, depth: int, seed: int) -> torch.nn.Module:
    """The chapter's model: an MLP whose hidden matrices are what Muon trains (the 1-D CNN's
    hidden weights are convolution kernels, which this 2-D-only Muon, like ``torch.optim.Muon``,
    would have to flatten first, as Jordan's implementation does)."""
    with seeded(seed):
        return models.MLP(data.input_dim, width, depth, data.n_classes).to(data.device)


def muon_with_adamw(model, lr: float, adam_lr: float, teaching_dtype=None) -> T.Optimizers:
    """Muon on the hidden matrices (``train.muon_split``), AdamW on the rest. ``teaching_dtype``
    swaps ``torch.optim.Muon`` for :class:`TeachingMuon` with Newton–Schulz in that dtype."""
    if teaching_dtype is None:
        return T.make_optimizer(model, "muon", lr=lr, adam_lr=adam_lr)
    hidden, other = T.muon_split(model)
    return T.Optimizers([TeachingMuon(hidden, lr=lr, weight_decay=0.0, dtype=teaching_dtype),
                         torch.optim.AdamW(other, lr=adam_lr, weight_decay=0.0)])
