"""Exercises that check themselves.

A coding exercise asks the reader to write one function of a chapter's method; its checker runs
the reader's function against the library's own on fresh random inputs and answers right, or
wrong with a specific hint (a wrong shape, a missing normalization, a sign, the wrong thing
ranked). In a chapter::

    def nc1(features, labels, n_classes):
        ...                                    # the reader's code
    exercises.check_nc1(nc1)                   # ✓ right, or ✗ with what to look at

Each checker returns a :class:`Result` (``ok``, ``message``) that prints itself and never raises
on a wrong answer: a reader's mistake is an answer, not a crash. The references are the
library's (:mod:`dynamics.collapse`, :mod:`dynamics.spectral`, :mod:`dynamics.initialization`)
or PyTorch's own (``torch.optim.AdamW``, ``torch.nn.utils.prune``), or the authors' package
(``schedulefree``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

__all__ = ["Result", "check_q_map", "check_adamw_step", "check_newton_schulz", "check_nc1",
           "check_global_prune", "check_schedule_free_step"]


@dataclass(frozen=True)
class Result:
    """A checker's answer: ``ok`` and what it says."""

    ok: bool
    message: str

    def __str__(self) -> str:
        return ("✓ Right: " if self.ok else "✗ Not yet: ") + self.message

    def __repr__(self) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return self.ok


def _call(fn: Callable, *args):
    """The reader's function on ``args``: (value, None), or (None, a Result saying what broke)."""
    try:
        return fn(*args), None
    except NotImplementedError:
        return None, Result(False, "the function is not written yet (it raises NotImplementedError).")
    except Exception as err:  # noqa: BLE001 - the reader's error is the answer to report
        return None, Result(False, f"it raised {type(err).__name__}: {err}")


def _close(a, b, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    return bool(torch.allclose(torch.as_tensor(a, dtype=torch.float64),
                               torch.as_tensor(b, dtype=torch.float64), rtol=rtol, atol=atol))


# ----------------------------------------------------------------------------- initialization

def check_q_map(fn: Callable, trials: int = 6, seed: int | None = None) -> Result:
    """``fn(q, sigma_w2, sigma_b2, activation)``: one step of the length map,
    q_{l+1} = σ_w² E_z[φ(√q z)²] + σ_b² (z standard normal), for ``"tanh"`` and ``"relu"``."""
    from .initialization.meanfield import q_map as tanh_map

    def q_map(q, sw, sb, act):  # ReLU in closed form: E[relu(√q z)²] = q/2
        return tanh_map(q, sw, sb, "tanh") if act == "tanh" else sw * q / 2 + sb

    rng = np.random.default_rng(seed)
    for _ in range(trials):
        q, sw, sb = rng.uniform(0.1, 3), rng.uniform(0.5, 4), rng.uniform(0, 0.5)
        for act in ("tanh", "relu"):
            got, bad = _call(fn, q, sw, sb, act)
            if bad is not None:
                return bad
            want = q_map(q, sw, sb, act)
            try:
                got = float(got)
            except (TypeError, ValueError):
                return Result(False, f"return one number, got {type(got).__name__}.")
            if abs(got - want) <= 2e-3 * max(1.0, abs(want)):
                continue
            tol = 2e-3 * max(1.0, abs(want))
            if abs(got - (want - sb)) <= tol:
                return Result(False, "add the bias variance σ_b² after the expectation.")
            if act == "relu" and abs(got - (sw * q + sb)) <= tol:
                return Result(False, "for ReLU, E[relu(√q z)²] = q/2: half the units are off.")
            if abs(got - q_map(q * q, sw, sb, act)) <= tol:
                return Result(False, "scale z by √q, the standard deviation, not by the "
                                     "variance q.")
            return Result(False, f"for q = {q:.3g}, σ_w² = {sw:.3g}, σ_b² = {sb:.3g} and {act} "
                                 f"the map gives {want:.4g}; yours gave {got:.4g}. Average "
                                 "φ(√q z)² over a standard normal z (Gauss–Hermite, or many samples).")
    return Result(True, f"your length map agrees with the library's on {2 * trials} random settings.")


# ----------------------------------------------------------------------------- weight decay

def check_adamw_step(fn: Callable, trials: int = 4, seed: int | None = None) -> Result:
    """``fn(p, grad, exp_avg, exp_avg_sq, step, lr, weight_decay, betas=(0.9, 0.999),
    eps=1e-8) -> (p, exp_avg, exp_avg_sq)``: one AdamW step (``step`` counts from 1), as
    ``torch.optim.AdamW`` takes it."""
    gen = torch.Generator().manual_seed(int(seed) if seed is not None else
                                        int(torch.randint(0, 2**31 - 1, ()).item()))
    for trial in range(trials):
        shape = (3, 4) if trial % 2 else (5,)
        p0 = torch.randn(shape, generator=gen, dtype=torch.float64)
        lr, wd, step = 0.05, 0.3, [4, 9, 1, 30][trial % 4]  # later steps first: at step 1
        # Adam moves every coordinate by about ±η, which hides what the decay did
        m0 = torch.randn(shape, generator=gen, dtype=torch.float64) * 0.1 * (step > 1)
        v0 = torch.rand(shape, generator=gen, dtype=torch.float64) * 0.1 * (step > 1)
        g = torch.randn(shape, generator=gen, dtype=torch.float64)
        ref = p0.clone().requires_grad_(True)
        opt = torch.optim.AdamW([ref], lr=lr, weight_decay=wd)
        ref.grad = g.clone()
        if step > 1:
            opt.state[ref] = dict(step=torch.tensor(float(step - 1)), exp_avg=m0.clone(),
                                  exp_avg_sq=v0.clone())
        opt.step()
        got, bad = _call(fn, p0.clone(), g.clone(), m0.clone(), v0.clone(), step, lr, wd)
        if bad is not None:
            return bad
        if not (isinstance(got, tuple) and len(got) == 3):
            return Result(False, "return three tensors: (p, exp_avg, exp_avg_sq).")
        p1 = torch.as_tensor(got[0], dtype=torch.float64)
        if p1.shape != p0.shape:
            return Result(False, f"p has shape {tuple(p1.shape)}; it should keep {tuple(p0.shape)}.")
        if _close(p1, ref.detach()):
            continue
        # the usual slips, each recomputed to see if it is the one made
        b1, b2, eps = 0.9, 0.999, 1e-8
        m = b1 * m0 + (1 - b1) * g
        v = b2 * v0 + (1 - b2) * g * g
        mh, vh = m / (1 - b1 ** step), v / (1 - b2 ** step)
        adam = lr * mh / (vh.sqrt() + eps)
        gl = g + wd * p0
        ml, vl = b1 * m0 + (1 - b1) * gl, b2 * v0 + (1 - b2) * gl * gl
        l2 = p0 - lr * (ml / (1 - b1 ** step)) / ((vl / (1 - b2 ** step)).sqrt() + eps)
        if _close(p1, p0 - adam) and wd:
            return Result(False, "the weight decay is missing: p ← p(1 − ηλ) before the step.")
        if _close(p1, l2):
            return Result(False, "that is Adam with L2: the decay went into the gradient and "
                                 "through the adaptive scaling. AdamW decays the weights "
                                 "directly: p ← p(1 − ηλ), then the Adam step.")
        if _close(p1, p0 - lr * m / (v.sqrt() + eps) - lr * wd * p0):
            return Result(False, "correct m and v for their start at zero: divide them by "
                                 "1 − β₁ᵗ and 1 − β₂ᵗ (bias correction).")
        if _close(p1, p0 - adam - wd * p0):
            return Result(False, "the decay is scaled by the learning rate: p ← p(1 − ηλ), "
                                 "not p(1 − λ).")
        if _close(p1, p0 * (1 - lr * wd) + adam):
            return Result(False, "the step goes against the gradient: subtract it.")
        return Result(False, "the new weights differ from torch.optim.AdamW's. Take the step "
                             "in this order: decay p by (1 − ηλ); update m and v; correct their "
                             "bias; p ← p − η m̂/(√v̂ + ε).")
    return Result(True, f"your step matches torch.optim.AdamW on {trials} random tensors, "
                        "first steps and later ones.")


# ----------------------------------------------------------------------------- spectral

def check_newton_schulz(fn: Callable, trials: int = 4, seed: int | None = None) -> Result:
    """``fn(G, steps=5) -> X``: Muon's Newton–Schulz iteration in float32 with the quintic
    coefficients (3.4445, −4.7750, 2.0315), as :func:`dynamics.spectral.newton_schulz`."""
    from .spectral.science import newton_schulz

    gen = torch.Generator().manual_seed(int(seed) if seed is not None else
                                        int(torch.randint(0, 2**31 - 1, ()).item()))
    for trial in range(trials):
        rows, cols = [(8, 20), (24, 6), (16, 16), (5, 12)][trial % 4]
        G = torch.randn(rows, cols, generator=gen) * 10 ** float(torch.rand((), generator=gen) * 4 - 2)
        got, bad = _call(fn, G.clone())
        if bad is not None:
            return bad
        if not isinstance(got, torch.Tensor):
            return Result(False, f"return a tensor, got {type(got).__name__}.")
        if got.shape == (cols, rows) and rows != cols:
            return Result(False, "you returned the transposed matrix: a tall G is transposed "
                                 "for the iteration and must be transposed back at the end.")
        if got.shape != G.shape:
            return Result(False, f"the result has shape {tuple(got.shape)}; G has {tuple(G.shape)}.")
        want = newton_schulz(G, dtype=None)
        if torch.allclose(got.float(), want, rtol=1e-3, atol=1e-4):
            continue
        plain = G.T.clone() if G.shape[0] > G.shape[1] else G.clone()
        for _ in range(5):  # the iteration without the normalization, to recognize it
            A = plain @ plain.T
            plain = 3.4445 * plain + (-4.7750 * A + 2.0315 * A @ A) @ plain
        plain = plain.T if G.shape[0] > G.shape[1] else plain
        if not torch.isfinite(got).all() or got.abs().max() > 1e3 or (
                torch.isfinite(plain).all() and torch.allclose(got.float(), plain, rtol=1e-3, atol=1e-4)):
            return Result(False, "the iterates blew up: divide G by its Frobenius norm first, "
                                 "so that every singular value starts in [0, 1].")
        s = torch.linalg.svdvals(got.double())
        if torch.allclose(s, torch.ones_like(s), atol=1e-4):
            return Result(False, "that is the exact polar factor U Vᵀ (all singular values 1). "
                                 "Five quintic Newton–Schulz steps give singular values in a "
                                 "band around 1 instead: write the iteration, not an SVD.")
        return Result(False, "the result differs from the library's. Each step is "
                             "X ← aX + (bA + cA²)X with A = X Xᵀ and (a, b, c) = "
                             "(3.4445, −4.7750, 2.0315); check the coefficients and their signs.")
    return Result(True, f"your iteration matches the library's on {trials} random matrices, "
                        "wide, tall and square.")


# ----------------------------------------------------------------------------- neural collapse

def check_nc1(fn: Callable, trials: int = 4, seed: int | None = None) -> Result:
    """``fn(features, labels, n_classes) -> float``: NC1 = tr(Σ_W Σ_B⁺)/C with Σ_W the
    within-class covariance around the class means and Σ_B the covariance of the class means
    around the global mean, as :func:`dynamics.collapse.nc1`."""
    from .collapse.science import class_means, nc1

    gen = torch.Generator().manual_seed(int(seed) if seed is not None else
                                        int(torch.randint(0, 2**31 - 1, ()).item()))
    for trial in range(trials):
        C, d, per = 3 + trial, 12 + 3 * trial, 20
        centres = torch.randn(C, d, generator=gen, dtype=torch.float64) * 3 + 2.0
        labels = torch.arange(C).repeat_interleave(per)
        feats = centres[labels] + torch.randn(C * per, d, generator=gen, dtype=torch.float64)
        got, bad = _call(fn, feats.clone(), labels.clone(), C)
        if bad is not None:
            return bad
        try:
            got = float(got)
        except (TypeError, ValueError):
            return Result(False, f"return one number, got {type(got).__name__}.")
        means = class_means(feats, labels, C)
        means = means[0] if isinstance(means, tuple) else means
        want = float(nc1(feats, labels, means))
        if abs(got - want) <= 1e-6 + 1e-4 * abs(want):
            continue
        if abs(got - C * want) <= 1e-4 * abs(C * want):
            return Result(False, "divide the trace by the number of classes C.")
        M = means - feats.mean(0)
        within = feats - means[labels]
        sw = within.T @ within / len(feats)
        sb = M.T @ M / C
        if abs(got - float(torch.trace(sw) / torch.trace(sb))) <= 1e-4 * abs(got):
            return Result(False, "NC1 is tr(Σ_W Σ_B⁺)/C, the within-class spread measured "
                                 "along the between-class directions: use the pseudo-inverse of "
                                 "Σ_B, not a ratio of traces.")
        raw = means.T @ means / C
        if abs(got - float(torch.trace(sw @ torch.linalg.pinv(raw)) / C)) <= 1e-4 * abs(got):
            return Result(False, "centre the class means on the global mean before Σ_B.")
        return Result(False, f"with {C} classes your NC1 is {got:.4g}, the library's {want:.4g}. "
                             "Σ_W averages (h − μ_y)(h − μ_y)ᵀ over all N examples.")
    return Result(True, f"your NC1 matches the library's on {trials} random feature sets.")


# ----------------------------------------------------------------------------- lottery tickets

def check_global_prune(fn: Callable, trials: int = 4, seed: int | None = None) -> Result:
    """``fn(weights, fraction) -> masks``: global magnitude pruning, one 0/1 mask per tensor
    that removes the ``round(fraction × total)`` weights of smallest |w| across all tensors
    together, as ``torch.nn.utils.prune.global_unstructured`` with ``L1Unstructured``."""
    import torch.nn.utils.prune as prune

    gen = torch.Generator().manual_seed(int(seed) if seed is not None else
                                        int(torch.randint(0, 2**31 - 1, ()).item()))
    for trial in range(trials):
        layers = [torch.nn.Linear(6, 8), torch.nn.Linear(8, 4)]
        with torch.no_grad():
            layers[0].weight.copy_(torch.randn(8, 6, generator=gen))
            layers[1].weight.copy_(torch.randn(4, 8, generator=gen) * 3)
        fraction = [0.2, 0.5, 0.8, 0.35][trial % 4]
        weights = [l.weight.detach().clone() for l in layers]
        prune.global_unstructured([(l, "weight") for l in layers], prune.L1Unstructured,
                                  amount=fraction)
        want = [l.weight_mask.clone() for l in layers]
        got, bad = _call(fn, [w.clone() for w in weights], fraction)
        if bad is not None:
            return bad
        if not isinstance(got, (list, tuple)) or len(got) != len(weights):
            return Result(False, f"return one mask per tensor ({len(weights)} here).")
        got = [torch.as_tensor(g) for g in got]
        if any(g.shape != w.shape for g, w in zip(got, weights)):
            return Result(False, "each mask has the shape of its tensor.")
        if all(torch.equal(g.float(), w) for g, w in zip(got, want)):
            continue
        removed = sum(int((g == 0).sum()) for g in got)
        total = sum(w.numel() for w in weights)
        kept_abs = torch.cat([w.abs().flatten()[g.flatten() > 0] for w, g in zip(weights, got)])
        gone_abs = torch.cat([w.abs().flatten()[g.flatten() == 0] for w, g in zip(weights, got)])
        if removed != round(fraction * total):
            return Result(False, f"remove round(fraction × total) = {round(fraction * total)} of "
                                 f"the {total} weights; yours removed {removed}.")
        if len(gone_abs) and len(kept_abs) and gone_abs.min() > kept_abs.max() - 1e-12:
            return Result(False, "you removed the largest weights: prune the smallest |w|.")
        per_layer = all(int((g == 0).sum()) == round(fraction * w.numel()) for g, w in zip(got, weights))
        if per_layer:
            return Result(False, "each layer lost the same fraction: rank all the layers' "
                                 "weights together (global pruning), not layer by layer.")
        return Result(False, "rank by magnitude |w|, not by the signed value, and remove the "
                             "smallest.")
    return Result(True, f"your masks match torch.nn.utils.prune's global L1 pruning on {trials} "
                        "random networks.")


# ----------------------------------------------------------------------------- schedules

def check_schedule_free_step(fn: Callable, steps: int = 12, seed: int | None = None) -> Result:
    """``fn(x, z, grad, lr, c, beta) -> (x, z, y)``: one schedule-free SGD step (Defazio et
    al.): ``z`` steps against the gradient taken at ``y``, ``x`` moves to ``(1 - c) x + c z``
    (with the new ``z``), and the next gradient is taken at ``y = (1 - beta) z + beta x``.
    Checked, ``c = 1/t`` at the ``t``-th step (the starting point gets no weight), against ``schedulefree.SGDScheduleFree`` fed the
    same gradients: its parameters in train mode are ``y``, in eval mode ``x``."""
    import schedulefree

    gen = torch.Generator().manual_seed(int(seed) if seed is not None else
                                        int(torch.randint(0, 2**31 - 1, ()).item()))
    lr, beta = 0.1, 0.9
    w0 = torch.randn(6, generator=gen, dtype=torch.float64)
    ref = torch.nn.Parameter(w0.clone())
    opt = schedulefree.SGDScheduleFree([ref], lr=lr, momentum=beta)
    opt.train()
    x, z = w0.clone(), w0.clone()
    for t in range(1, steps + 1):
        g = torch.randn(6, generator=gen, dtype=torch.float64)
        ref.grad = g.clone()
        opt.step()
        y_ref = ref.detach().clone()
        opt.eval()
        x_ref = ref.detach().clone()
        opt.train()
        got, bad = _call(fn, x.clone(), z.clone(), g.clone(), lr, 1.0 / t, beta)
        if bad is not None:
            return bad
        if not (isinstance(got, tuple) and len(got) == 3):
            return Result(False, "return three tensors: (x, z, y).")
        x1, z1, y1 = (torch.as_tensor(v, dtype=torch.float64) for v in got)
        if _close(x1, x_ref) and _close(y1, y_ref):
            x, z = x1, z1
            continue
        zr = z - lr * g
        c = 1.0 / t
        if not _close(z1, zr):
            return Result(False, "z is the plain SGD iterate: z ← z − lr·grad, nothing else.")
        if _close(x1, (1 - c) * x + c * z):
            return Result(False, "average in the new z: x ← (1 − c)x + c·z after z has stepped.")
        if not _close(x1, x_ref):
            return Result(False, "x is a running average: x ← (1 − c)x + c·z, with c the new "
                                 "iterate's weight (c = 1/t makes it uniform).")
        if _close(y1, beta * z1 + (1 - beta) * x1):
            return Result(False, "the weights are the other way round: y = (1 − β)z + βx sits "
                                 "close to the average x when β is near 1.")
        return Result(False, "y, where the next gradient is taken, is (1 − β)z + βx.")
    return Result(True, f"your step matches schedulefree.SGDScheduleFree over {steps} steps, "
                        "its train-mode weights (y) and its eval-mode weights (x).")
