"""Order and chaos: the mean-field theory of a wide random tanh network, and the same
quantities measured on finite random networks (section 2 of the initialization chapter).

The length map and its fixed point q*, the correlation map, chi_1, the depth scale xi_c, the
critical line (Poole et al. 2016, Schoenholz et al. 2017). Pure computations on numbers and
tensors; :mod:`.science` re-exports every name.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch
from scipy.optimize import brentq

from ..models import MLP
from ..runtime import get_device, get_seed

__all__ = ["TRAINABLE_DEPTHS", "PHI", "gauss_hermite", "q_map", "q_star", "c_map", "chi_1",
           "c_star", "chi_c", "depth_scale", "trainable_depth", "critical_sigma_w2",
           "trainable_band", "measure_chi_1", "measured_critical_sigma_w2",
           "measure_map_iterates", "measure_depth_scale", "tanh_mlp"]

# Schoenholz et al.: a network trains when its depth is below about 6 xi_c.
TRAINABLE_DEPTHS = 6.0


# =============================================================================================
# 2. Order and chaos: the mean-field theory of a wide random tanh network
#
# With W_ij ~ N(0, sigma_w^2 / n) and b_i ~ N(0, sigma_b^2), each preactivation of a wide layer
# is Gaussian, so one layer acts on a few numbers only: the length q (mean squared
# preactivation of one input) and the correlation c of two inputs. Gaussian expectations are
# computed by Gauss-Hermite quadrature with 201 nodes (relative error below 1e-5 for the lengths
# q <= 5 of this chapter; tanh'(sqrt(q) z)^2 narrows as q grows, and 81 nodes were off by 3e-3
# at q = 5).
# =============================================================================================

PHI = {"tanh": (np.tanh, lambda u: 1.0 / np.cosh(u) ** 2)}


@lru_cache(maxsize=8)
def gauss_hermite(n: int = 201) -> tuple[np.ndarray, np.ndarray]:
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


def q_map(q: float, sigma_w2: float, sigma_b2: float,
          activation: str = "tanh") -> float:
    """The length map (Poole et al.): the mean squared preactivation of one
    input, one layer deeper:
    q_{l+1} = sigma_w^2 E[phi(sqrt(q_l) z)^2] + sigma_b^2."""
    phi, _ = _phi(activation)
    z, w = gauss_hermite()
    return float(sigma_w2 * np.dot(w, phi(np.sqrt(max(q, 0.0)) * z) ** 2)
                 + sigma_b2)


def q_star(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """The fixed point q* = q_map(q*), where the length settles within a few
    layers.

    The map is increasing and bounded (tanh^2 < 1), so q* is the one root of
    q_map(q) - q in (0, sigma_w^2 + sigma_b^2]; with sigma_b = 0 and
    sigma_w^2 <= 1 the only fixed point is q* = 0 (the signal dies)."""
    _check_sigmas(sigma_w2, sigma_b2)
    g = lambda q: q_map(q, sigma_w2, sigma_b2, activation) - q  # noqa: E731
    lo, hi = 1e-12, sigma_w2 + sigma_b2 + 1.0
    if g(lo) <= 0:
        return 0.0
    # maxiter: where g is flat (sigma_b = 0, sigma_w^2 just above 1, q* tiny)
    # Brent's method needs up to ~70 iterations, close to scipy's default 100
    return float(brentq(g, lo, hi, xtol=1e-14, rtol=1e-12, maxiter=1000))


def _pair_expectation(f1, f2, q: float, c: float) -> float:
    """E[f1(u1) f2(u2)] for (u1, u2) Gaussian, both of variance q, with
    correlation c."""
    z, w = gauss_hermite()
    z1, z2 = np.meshgrid(z, z, indexing="ij")
    c = float(np.clip(c, -1.0, 1.0))
    u1 = np.sqrt(q) * z1
    u2 = np.sqrt(q) * (c * z1 + np.sqrt(1.0 - c * c) * z2)
    return float(np.sum(np.outer(w, w) * f1(u1) * f2(u2)))


def c_map(c: float, sigma_w2: float, sigma_b2: float, activation: str = "tanh",
          q: float | None = None) -> float:
    """The correlation map: the correlation of two inputs' preactivations one
    layer deeper, at the length fixed point,
    c_{l+1} = (sigma_w^2 E[phi(u1) phi(u2)] + sigma_b^2) / q*."""
    phi, _ = _phi(activation)
    q = q_star(sigma_w2, sigma_b2, activation) if q is None else q
    if q <= 0:
        return 1.0
    return (sigma_w2 * _pair_expectation(phi, phi, q, c) + sigma_b2) / q


def chi_1(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """chi_1 = sigma_w^2 E[phi'(sqrt(q*) z)^2], the slope of the correlation
    map at c = 1.

    Why it decides everything: chi_1 is also the mean squared singular value
    of one layer's Jacobian. chi_1 < 1 (ordered): nearby inputs converge and
    gradients vanish geometrically with depth; chi_1 > 1 (chaotic): nearby
    inputs fly apart and gradients explode. chi_1 = 1 is the edge of chaos."""
    _, dphi = _phi(activation)
    z, w = gauss_hermite()
    q = q_star(sigma_w2, sigma_b2, activation)
    return float(sigma_w2 * np.dot(w, dphi(np.sqrt(q) * z) ** 2))


def c_star(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """The stable fixed point of the correlation map: 1 in the ordered phase (chi_1 <= 1),
    below 1 in the chaotic phase (where c = 1 is unstable and correlations decay to c*)."""
    if chi_1(sigma_w2, sigma_b2, activation) <= 1.0:
        return 1.0
    q = q_star(sigma_w2, sigma_b2, activation)
    g = lambda c: c_map(c, sigma_w2, sigma_b2, activation, q) - c  # noqa: E731
    hi = 1.0 - 1e-7
    if g(hi) >= 0:  # chi_1 barely above 1: c* indistinguishable from 1
        return 1.0
    if g(0.0) <= 0:  # sigma_b = 0: the fixed point is c* = 0 (odd phi)
        return 0.0
    return float(brentq(g, 0.0, hi, xtol=1e-12, maxiter=1000))


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
    correlation of two inputs relaxes to c*, i.e. how deep information about the input
    travels. It diverges on the critical line chi_1 = 1."""
    x = chi_c(sigma_w2, sigma_b2, activation)
    return float("inf") if x >= 1.0 else float(-1.0 / math.log(x))


def trainable_depth(sigma_w2: float, sigma_b2: float, activation: str = "tanh") -> float:
    """6 xi_c: Schoenholz et al. found that networks train when their depth is below about
    this many layers (and fail beyond it, however long they train)."""
    return TRAINABLE_DEPTHS * depth_scale(sigma_w2, sigma_b2, activation)


def critical_sigma_w2(sigma_b2: float, activation: str = "tanh") -> float:
    """The sigma_w^2 where chi_1 = 1 at this sigma_b^2: the edge of chaos (sigma_w^2 = 1 at
    sigma_b = 0; 1.76 at sigma_b^2 = 0.05)."""
    _check_sigmas(1.0, sigma_b2)
    f = lambda s: chi_1(s, sigma_b2, activation) - 1.0  # noqa: E731
    lo, hi = 0.2, 50.0
    if f(hi) <= 0:
        raise ValueError(f"no edge of chaos below sigma_w^2 = {hi} at sigma_b^2 = {sigma_b2}")
    # maxiter: at sigma_b^2 = 0, chi_1 - 1 is flat to second order right of its root (q* ~ 0),
    # where brentq needs about 110 iterations (scipy's default stops at 100)
    return float(brentq(f, lo, hi, xtol=1e-10, maxiter=1000))


def trainable_band(depth: float, sigma_b2: float, low: float = 0.3, high: float = 8.0,
                   activation: str = "tanh") -> tuple[float, float]:
    """The sigma_w^2 range in which ``depth <= 6 xi_c``: the band around the edge of chaos
    where mean-field theory expects a network of this depth to train. Each edge is a root of
    6 xi_c(sigma_w^2) = depth on its side of the critical point (xi_c diverges there and
    falls away on both sides); an edge beyond [low, high] is returned as that bound."""
    crit = critical_sigma_w2(sigma_b2, activation)
    f = lambda s: trainable_depth(s, sigma_b2, activation) - depth  # noqa: E731
    eps = 1e-6 * crit
    left = low if f(low) >= 0 else float(brentq(f, low, crit - eps, xtol=1e-6))
    right = high if f(high) >= 0 else float(brentq(f, crit + eps, high, xtol=1e-6))
    return left, right


# ... and the same quantities measured on finite random networks (torch) ----------------------


def _generator(seed: int) -> torch.Generator:
    """A generator on the book's device: random networks are drawn where they run."""
    return torch.Generator(device=get_device()).manual_seed(int(seed))


def _randn(*shape, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, device=gen.device)


def _random_layer(width: int, gen: torch.Generator):
    """W with N(0, 1/width) entries and b with N(0, 1) entries (scaled by sigma_w, sigma_b)."""
    return _randn(width, width, gen=gen) / math.sqrt(width), _randn(width, gen=gen)


def measure_chi_1(sigma_w2, sigma_b2: float, width: int = 256, depth: int = 40, burn: int = 10,
                  batch: int = 32, seed: int | None = None) -> np.ndarray:
    """chi_1 measured on random tanh networks: the growth per layer of a small perturbation
    v (a Jacobian-vector product), after ``burn`` layers that let the length reach q*.

    For each sigma_w^2 the same random matrices are used (common random numbers), so the
    measured chi_1 is a smooth function of sigma_w^2 (a root finder needs that). Returns
    exp(mean_l ln r_l) with r_l = sum_batch |J_l v|^2 / sum_batch |v|^2."""
    seed = get_seed(seed)
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
                               batch: int = 32, seed: int | None = None, lo: float = 0.3,
                               hi: float = 8.0) -> float:
    """The sigma_w^2 where the measured chi_1 crosses 1 (root of ln chi_1, Brent's method).

    A dry run (``DYNAMICS_DRY_RUN``) finds the root in full, as a real run does: Brent's method
    takes about ten evaluations of chi_1 here, none of them a training, and a root finder cut
    at the dry run's step cap would be counted by ``dynamics_ops.gpuwork`` as 200 iterations."""
    seed = get_seed(seed)
    f = lambda s: float(np.log(measure_chi_1(s, sigma_b2, width, depth, 10, batch, seed)[0]))  # noqa: E731
    if f(lo) * f(hi) > 0:
        raise ValueError(f"measured chi_1 does not cross 1 between sigma_w^2 = {lo} and {hi}")
    root, info = brentq(f, lo, hi, xtol=1e-4, maxiter=200, full_output=True, disp=False)
    if not info.converged:
        raise RuntimeError(f"measured critical sigma_w^2 did not converge: {info.flag}")
    return float(root)


def measure_map_iterates(sigma_w2: float, sigma_b2: float, starts, kind: str = "q",
                         width: int = 512, depth: int = 8, batch: int = 32, seed: int | None = None) -> list:
    """Iterate the length (``kind="q"``) or correlation (``kind="c"``) map on a random tanh
    network: for each starting value, the measured sequence q^0, q^1, ... (or c^0, c^1, ...).
    Correlations start at q* (theory) so that they probe the map at its fixed length."""
    seed = get_seed(seed)
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
        z = q0 * torch.stack([x.expand(S, -1, -1), c * x + (1 - c * c).sqrt() * e], 0)
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
                        pairs: int = 64, seed: int | None = None) -> tuple[float, int]:
    """xi_c measured on a random tanh network.

    Two pairs of inputs (x, x') and (x, x''), built from the same two random vectors, start
    at correlations 0.1 apart just below c* (at the fixed length q*); their correlations
    converge geometrically, |c_l - c'_l| ~ exp(-l / xi_c). A line is fitted to ln|c_l - c'_l|
    over the layers where the gap is below 0.3 (the linear regime) and above 4 standard
    errors (the finite-width noise floor). Returns (xi, number of layers used); NaN when
    fewer than 4 layers qualify."""
    seed = get_seed(seed)
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
    idx = np.flatnonzero(ok)  # keep the first run of good layers
    if len(idx) < 4:
        return float("nan"), int(len(idx))
    run = idx[: np.argmax(np.diff(np.r_[idx, idx[-1] + 2]) > 1) + 1]
    if len(run) < 4:
        return float("nan"), int(len(run))
    slope = np.polyfit(layers[run], np.log(gaps[run]), 1)[0]
    return (float(-1.0 / slope) if slope < 0 else float("inf")), int(len(run))


def tanh_mlp(in_dim: int, width: int, depth: int, sigma_w2: float, sigma_b2: float,
             out_dim: int = 10) -> MLP:
    """The network of the theory: ``depth`` tanh layers with W ~ N(0, sigma_w^2 / fan_in)
    and b ~ N(0, sigma_b^2) (the head too)."""
    _check_sigmas(sigma_w2, sigma_b2)
    return MLP(in_dim, width, depth, out_dim, "tanh", sigma_w=math.sqrt(sigma_w2),
               sigma_b=math.sqrt(sigma_b2))
