"""Each coding exercise's checker: a reference answer passes, and each planted mistake fails
with the hint that names it."""
from __future__ import annotations

import numpy as np
import torch

from dynamics import exercises as X


# ----------------------------------------------------------------------------- answers a reader writes

def q_map(q, sigma_w2, sigma_b2, activation, bias=True, relu_half=True, sqrt=True):
    z, w = np.polynomial.hermite_e.hermegauss(101)
    w = w / w.sum()
    u = (np.sqrt(q) if sqrt else q) * z
    phi = np.tanh(u) if activation == "tanh" else np.maximum(u, 0) if relu_half else u
    return sigma_w2 * float(w @ phi ** 2) + (sigma_b2 if bias else 0.0)


def adamw(p, g, m, v, step, lr, wd, betas=(0.9, 0.999), eps=1e-8, how="right"):
    b1, b2 = betas
    if how == "l2":
        g = g + wd * p
    elif how != "nodecay":
        p = p * (1 - (wd if how == "nolr" else lr * wd))
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    if how == "nobias":
        return p - lr * m / (v.sqrt() + eps), m, v
    return p - lr * (m / (1 - b1 ** step)) / ((v / (1 - b2 ** step)).sqrt() + eps), m, v


def newton_schulz(G, steps=5, normalize=True, transpose_back=True, exact=False):
    if exact:
        U, _, Vh = torch.linalg.svd(G, full_matrices=False)
        return U @ Vh
    a, b, c = 3.4445, -4.7750, 2.0315
    tall = G.shape[0] > G.shape[1]
    X = G.T if tall else G.clone()
    if normalize:
        X = X / X.norm()
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.T if tall and transpose_back else X


def nc1(h, y, C, how="right"):
    means = torch.stack([h[y == k].mean(0) for k in range(C)])
    M = means - (0 if how == "uncentred" else h.mean(0))
    within = h - means[y]
    sw = within.T @ within / len(h)
    sb = M.T @ M / C
    if how == "traces":
        return float(torch.trace(sw) / torch.trace(sb))
    value = float(torch.trace(sw @ torch.linalg.pinv(sb)))
    return value if how == "noC" else value / C


def prune(weights, fraction, how="right"):
    if how == "layer":
        out = []
        for w in weights:
            k = round(fraction * w.numel())
            cut = w.abs().flatten().kthvalue(k).values if k else -1
            out.append((w.abs() > cut).float())
        return out
    flat = torch.cat([w.flatten() for w in weights])
    score = flat if how == "signed" else flat.abs()
    k = round(fraction * len(flat)) + (1 if how == "one_more" else 0)
    order = torch.argsort(score, descending=(how == "largest"))
    keep = torch.ones(len(flat))
    keep[order[:k]] = 0
    return [part.view_as(w) for part, w in zip(torch.split(keep, [w.numel() for w in weights]), weights)]


# ----------------------------------------------------------------------------- the checkers

def test_the_length_map_checker():
    assert X.check_q_map(q_map, seed=0)
    assert "σ_b²" in X.check_q_map(lambda *a: q_map(*a, bias=False), seed=0).message
    assert "half the units" in X.check_q_map(lambda *a: q_map(*a, relu_half=False), seed=0).message
    assert "√q" in X.check_q_map(lambda *a: q_map(*a, sqrt=False), seed=0).message


def test_the_adamw_checker_names_each_slip():
    assert X.check_adamw_step(adamw, seed=1)
    hint = lambda how: X.check_adamw_step(lambda *a: adamw(*a, how=how), seed=1).message  # noqa: E731
    assert "Adam with L2" in hint("l2")
    assert "bias correction" in hint("nobias")
    assert "not p(1 − λ)" in hint("nolr")
    assert "missing" in hint("nodecay")


def test_the_newton_schulz_checker():
    assert X.check_newton_schulz(newton_schulz, seed=2)
    assert "Frobenius" in X.check_newton_schulz(lambda G: newton_schulz(G, normalize=False), seed=2).message
    assert "transposed" in X.check_newton_schulz(lambda G: newton_schulz(G, transpose_back=False), seed=2).message
    assert "polar factor" in X.check_newton_schulz(lambda G: newton_schulz(G, exact=True), seed=2).message


def test_the_nc1_checker():
    assert X.check_nc1(nc1, seed=3)
    assert "divide the trace" in X.check_nc1(lambda *a: nc1(*a, how="noC"), seed=3).message
    assert "pseudo-inverse" in X.check_nc1(lambda *a: nc1(*a, how="traces"), seed=3).message
    assert "centre the class means" in X.check_nc1(lambda *a: nc1(*a, how="uncentred"), seed=3).message


def test_the_pruning_checker():
    assert X.check_global_prune(prune, seed=4)
    assert "largest" in X.check_global_prune(lambda w, f: prune(w, f, "largest"), seed=4).message
    assert "layer by layer" in X.check_global_prune(lambda w, f: prune(w, f, "layer"), seed=4).message
    assert "round(fraction" in X.check_global_prune(lambda w, f: prune(w, f, "one_more"), seed=4).message
    assert "magnitude" in X.check_global_prune(lambda w, f: prune(w, f, "signed"), seed=4).message


def test_a_checker_answers_rather_than_crashes():
    def unwritten(*args):
        raise NotImplementedError

    r = X.check_nc1(unwritten)
    assert not r and "not written yet" in str(r) and str(r).startswith("✗ Not yet")
    assert "ZeroDivisionError" in X.check_q_map(lambda *a: 1 / 0).message
    assert "return one number" in X.check_nc1(lambda *a: "two").message
    assert str(X.check_nc1(nc1)).startswith("✓ Right")


def sf_step(x, z, g, lr, c, beta, how="right"):
    z_new = z - lr * g
    x = (1 - c) * x + c * (z if how == "oldz" else z_new)
    y = beta * z_new + (1 - beta) * x if how == "swap" else (1 - beta) * z_new + beta * x
    return x, z_new, y


def test_the_schedule_free_checker_names_each_slip():
    assert X.check_schedule_free_step(sf_step, seed=3)
    hint = lambda how: X.check_schedule_free_step(lambda *a: sf_step(*a, how=how), seed=3).message  # noqa: E731
    assert "new z" in hint("oldz")
    assert "other way round" in hint("swap")
    assert not X.check_schedule_free_step(lambda *a: (a[0], a[1], a[1]), seed=3)
