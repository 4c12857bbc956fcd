"""Neural collapse, the theory the experiments are compared with (section 4 of the science):
the simplex ETF, the value of NC3 at the collapse of a bias-free head, and the exact solution
of the imbalanced deep linear unconstrained-features model (Dang et al. 2023). Pure numbers and
tensors; :mod:`.science` re-exports every name.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from ..runtime import get_seed

__all__ = ["simplex_etf", "etf_gram", "bias_free_nc3", "collapse_weight_decay",
           "imbalanced_ufm_solution", "minority_collapse_threshold"]


# ============================================================================ 4. the theory


def simplex_etf(n_classes: int, dim: int | None = None, seed: int | None = None) -> torch.Tensor:
    """The ``C`` vertices of a simplex equiangular tight frame in R^dim (rows of unit norm,
    pairwise cosine −1/(C−1)), rotated at random: ``sqrt(C/(C−1)) · (I − 11ᵀ/C) · Uᵀ``.
    The C vertices sum to zero, so C − 1 dimensions hold them."""
    seed = get_seed(seed)
    C = int(n_classes)
    dim = C if dim is None else int(dim)
    if C < 2 or dim < C - 1:
        raise ValueError(f"a simplex ETF of {C} vertices needs C >= 2 and dim >= C-1, got dim={dim}")
    centred = torch.eye(C, dtype=torch.float64) - 1.0 / C
    if dim < C:  # drop the (all-ones) direction the simplex does not use
        u, s, _ = torch.linalg.svd(centred)
        return math.sqrt(C / (C - 1)) * (u[:, :dim] * s[:dim])
    basis, _ = torch.linalg.qr(torch.randn(dim, C, dtype=torch.float64,
                                           generator=torch.Generator().manual_seed(seed)))
    return math.sqrt(C / (C - 1)) * centred @ basis.T


def etf_gram(n_classes: int, dtype=torch.float64, device=None) -> torch.Tensor:
    """The Gram matrix of a simplex ETF with unit vertices: 1 on the diagonal, −1/(C−1) off it."""
    C = int(n_classes)
    return (C / (C - 1)) * (torch.eye(C, dtype=dtype, device=device) - 1.0 / C)


def bias_free_nc3(n_classes: int) -> float:
    """Papyan et al.'s NC3 at the collapse of a bias-free head: 2 − 2√((C − 1)/C).

    Without a bias, the classifier rows and the *uncentred* class means form an orthogonal
    frame of equal lengths (Dang et al. 2023), W ∝ R with RRᵀ = r²I. The centred means
    M = R − 11ᵀR/C then form a simplex, ⟨W, M⟩ ∝ (C − 1) r², ‖R‖ = √C r and ‖M‖ = √(C − 1) r,
    so the normalized W and M meet at cosine √((C − 1)/C), never 1.
    """
    C = int(n_classes)
    if C < 2:
        raise ValueError(f"need at least 2 classes, got {C}")
    return 2.0 - 2.0 * math.sqrt((C - 1) / C)


def _class_scale(n_c: float, N: float) -> tuple[float, float]:
    """``(a, g)`` of one class: its share a = n_c/N of the examples and the gain g = √(N/n_c)
    from the classifier's singular value s to the feature norm x = g·s at a stationary point."""
    return n_c / N, math.sqrt(N / n_c)


def collapse_weight_decay(n_c: float, N: float, linear_depth: int = 1) -> float:
    """The weight decay above which a class of ``n_c`` among ``N`` examples collapses to the
    origin at the global minimum of the deep linear unconstrained features model of
    :func:`imbalanced_ufm_solution` (``linear_depth`` = L layers, head included), in closed form.

    With a = n_c/N, g = √(N/n_c) and the class's output p = g·s^(L+1), the class contributes
    f(p) = a/2 (p − 1)² + λ(L+1)/2 (p/g)^q, q = 2/(L+1), and f(0) = a/2. Some p > 0 beats the
    origin exactly when λ < a p(2 − p) / ((L+1) (p/g)^q) for some p in (0, 2), so the
    threshold is λ* = a g^q/(L+1) · max_p p^(1−q)(2 − p), the maximum at p* = 2(1−q)/(2−q).
    For L = 1 (q = 1) the maximum is the limit p → 0 and λ* = a g = √(n_c/N): the problem is
    convex in s², and the class fades continuously. For L ≥ 2 the best p > 0 stays at p*
    until λ* and the class jumps to zero there."""
    n_c, N, L = float(n_c), float(N), int(linear_depth)
    if not 0 < n_c <= N:
        raise ValueError(f"a class needs 0 < n_c <= N examples, got n_c={n_c}, N={N}")
    if L < 1:
        raise ValueError(f"linear_depth must be >= 1, got {linear_depth}")
    a, g = _class_scale(n_c, N)
    if L == 1:
        return math.sqrt(a)
    q = 2.0 / (L + 1)
    p = 2.0 * (1.0 - q) / (2.0 - q)
    return a * g ** q / (L + 1) * p ** (1.0 - q) * (2.0 - p)


def imbalanced_ufm_solution(counts, weight_decay: float, linear_depth: int = 1) -> dict:
    """Norms of the class means and classifier rows at the global minimum of the deep linear
    unconstrained features model (:class:`UnconstrainedFeatures`, MSE loss, no bias) on
    classes of sizes ``counts``.

    Dang et al. (2023) prove that there the class means (and the classifier rows) are
    orthogonal, with lengths set by the class counts. Given that structure the problem splits
    into one scalar problem per class: with s the singular value each of the L balanced layers
    gives class c, x the norm of its features and p = s^L x its output, minimize
    n_c/(2N)(p − 1)² + λ L s²/2 + λ n_c x²/(2N). Stationarity in x gives
    (n_c/N)(p − 1) s^L = −λ (n_c/N) x, stationarity in s gives (n_c/N)(p − 1) s^(L−1) x = −λ s;
    multiplied by x and by s they share the left side, so λ (n_c/N) x² = λ s²: at every
    stationary point with λ > 0, x = s √(N/n_c) (the two conditions together, neither alone).
    That leaves a one-dimensional problem in s, solved numerically here. For small λ,
    s ∝ n_c^{1/(2(L+1))}: larger classes get longer classifier rows and *shorter* features.
    A class whose λ is at or above its :func:`collapse_weight_decay` has its minimum at the
    origin: its classifier row and its features are exactly zero (the decision is made there,
    from the closed form, not from comparing two losses that round-off can swap).
    """
    from scipy.optimize import minimize_scalar

    n = np.asarray(counts, dtype=float)
    if n.ndim != 1 or len(n) < 2 or (n <= 0).any():
        raise ValueError(f"counts must be >= 2 positive class sizes, got {counts}")
    if weight_decay <= 0:
        raise ValueError("the regularized problem needs weight_decay > 0")
    N, L, lam = n.sum(), int(linear_depth), float(weight_decay)
    if L < 1:
        raise ValueError(f"linear_depth must be >= 1, got {linear_depth}")
    out = dict(classifier_norm=[], feature_norm=[], output=[])
    for nc in n:
        a, gain = _class_scale(nc, N)
        if lam >= collapse_weight_decay(nc, N, L):
            s = 0.0
        else:
            # in the output p = gain·s^(L+1) the problem is smooth; its best p lies in (0, 1)
            def f(p):
                return a / 2 * (p - 1) ** 2 + lam * (L + 1) / 2 * (p / gain) ** (2 / (L + 1))

            grid = np.linspace(0.0, 1.0, 401)[1:]
            p0 = grid[np.argmin([f(p) for p in grid])]
            step = grid[1] - grid[0]
            best = minimize_scalar(f, bounds=(max(p0 - step, 1e-300), min(p0 + step, 1.0)),
                                   method="bounded", options=dict(xatol=1e-13))
            s = (best.x / gain) ** (1 / (L + 1))
        out["classifier_norm"].append(s)
        out["feature_norm"].append(s ** L * gain)  # the input of the head: W_{L-1}..W_1 h
        out["output"].append(s ** (L + 1) * gain)
    return {k: np.asarray(v) for k, v in out.items()}


def minority_collapse_threshold(counts, linear_depth: int = 1, rare: int = -1) -> float:
    """The smallest weight decay at which class ``rare`` (default: the last) of
    :func:`imbalanced_ufm_solution` collapses to zero: :func:`collapse_weight_decay` of its
    count among ``sum(counts)`` (for one linear layer √(n_rare/N))."""
    n = np.asarray(counts, dtype=float)
    if n.ndim != 1 or len(n) < 2 or (n <= 0).any():
        raise ValueError(f"counts must be >= 2 positive class sizes, got {counts}")
    try:
        n_rare = n[rare]
    except IndexError:
        raise ValueError(f"rare={rare} is not a class of counts {counts}") from None
    return collapse_weight_decay(n_rare, n.sum(), linear_depth)
