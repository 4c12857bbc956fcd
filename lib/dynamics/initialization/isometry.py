"""Dynamical isometry: the whole singular-value spectrum of a random network's input-output
Jacobian, not only its mean (Pennington, Schoenholz & Ganguli 2017).

For an MLP x^l = phi(W^l x^{l-1} + b^l) the input-output Jacobian is J = D^L W^L ... D^1 W^1,
with D^l = diag(phi'(h^l)). Mean-field theory fixes the mean of its squared singular values:
tr(J J^T) / n = chi_1^L, so chi_1 = 1 keeps the *mean* at 1 at any depth. Dynamical isometry asks
more: every singular value near 1. Free probability gives the spread of the spectrum of J J^T
on the critical line (width to infinity): its variance is

    L (mu_2 / mu_1^2 - 1 - s_1),   mu_k = E[phi'(h)^(2k)], h ~ N(0, q*),

with s_1 = -1 for Gaussian weights and s_1 = 0 for orthogonal ones. Gaussian weights add a unit
of variance per layer whatever phi is; orthogonal tanh weights add mu_2 / mu_1^2 - 1, which goes
to 0 as q* -> 0 (tanh is nearly linear there); ReLU has phi'^2 in {0, 1}, mu_2 / mu_1^2 = 2,
so even orthogonal weights add 1 per layer: ReLU networks cannot be dynamically isometric.

This module: the critical point for a chosen q*, the theory's spread, the Jacobians of random
networks (``torch.func``: ``jacrev`` of the forward pass, ``vmap`` over networks), the runner
:func:`run_isometry` (re-exported by :mod:`.experiments`), and the section's figure, the
numbers its prose glues and its claims rows: the section whole, as ``width.py`` is Section 5's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch.func import jacrev, vmap

from .. import evidence, plots
from ..config import Config, param
from .. import runtime
from ..runtime import get_seed
from .meanfield import _generator, _randn, chi_1, gauss_hermite
from .meanfield import q_star as meanfield_q_star
from .records import Isometry
from .science import random_weights

__all__ = ["IsometryConfig", "ISO_CASES", "isometry_point", "spread_theory", "random_network",
           "network_jacobians", "spectrum_stats", "SMALL", "chi_1_of", "run_isometry",
           "isometry_figure", "isometry_numbers", "isometry_claims"]

_GRAY = "#777"
_num = plots.number
SMALL = 0.01  # a squared singular value below this: a direction damped at least tenfold
ISO_CASES = (("tanh", "orthogonal"), ("tanh", "gaussian"), ("relu", "orthogonal"),
             ("relu", "gaussian"))
_ACT = {"tanh": torch.tanh, "relu": torch.relu}

@dataclass
class IsometryConfig(Config):
    """The Jacobian's spectrum at initialization across depth: tanh on the critical line at a
    small q*, and ReLU at sigma_w^2 = 2, each with Gaussian and orthogonal weights."""

    depths: list = param([2, 4, 8, 16, 32, 64], "depths (layers) at which J is measured",
                         smoke=[2, 4, 8, 16, 32], gpu=[2, 4, 8, 16, 32, 64, 128])
    width: int = param(128, "units per layer (square layers)", low=4, high=2048, gpu=256)
    n_nets: int = param(16, "random networks per case", low=1, high=1000, smoke=8)
    q_star: float = param(1 / 64, "tanh's fixed point q* (small: tanh nearly linear)",
                          low=1e-4, high=4.0, log=True)
    seed: int = param(0, "seed of the networks and inputs", low=0, high=2**31 - 1)


def isometry_point(activation: str, q_star: float = 1 / 64) -> tuple[float, float]:
    """(sigma_w^2, sigma_b^2) on the critical line (chi_1 = 1) with the length fixed point at
    ``q_star``: sigma_w^2 = 1 / E[phi'(h)^2], sigma_b^2 = q* - sigma_w^2 E[phi(h)^2], h ~
    N(0, q*). ReLU has no finite fixed point at sigma_b = 0 and is critical at (2, 0)."""
    if activation == "relu":
        return 2.0, 0.0
    if activation != "tanh":
        raise ValueError(f"activation must be 'tanh' or 'relu', got {activation!r}")
    if not (np.isfinite(q_star) and q_star > 0):
        raise ValueError(f"q_star must be a positive number, got {q_star}")
    z, w = gauss_hermite()
    u = math.sqrt(q_star) * z
    s_w2 = 1.0 / float(np.dot(w, np.cosh(u) ** -4))
    return s_w2, max(0.0, q_star - s_w2 * float(np.dot(w, np.tanh(u) ** 2)))


def spread_theory(depth, activation: str, init: str, q_star: float = 1 / 64):
    """The variance of the spectrum of J J^T on the critical line, width to infinity
    (Pennington et al. 2017): depth * (mu_2 / mu_1^2 - 1 - s_1), s_1 = -1 (Gaussian) or 0
    (orthogonal). With the mean at 1 this is also the relative variance."""
    if init not in ("orthogonal", "gaussian"):
        raise ValueError(f"init must be 'orthogonal' or 'gaussian', got {init!r}")
    if activation == "relu":
        ratio = 2.0  # phi'^2 is 0 or 1, each with probability 1/2
    elif activation == "tanh":
        z, w = gauss_hermite()
        d2 = np.cosh(math.sqrt(q_star) * z) ** -4
        ratio = float(np.dot(w, d2 ** 2) / np.dot(w, d2) ** 2)
    else:
        raise ValueError(f"activation must be 'tanh' or 'relu', got {activation!r}")
    s1 = -1.0 if init == "gaussian" else 0.0
    return np.asarray(depth, dtype=float) * (ratio - 1.0 - s1)


def random_network(activation: str, init: str, depth: int, width: int, n_nets: int,
                   q_star: float = 1 / 64, seed: int | None = None, point: tuple | None = None):
    """``n_nets`` random square networks, as tensors: weights [n_nets, depth, n, n], biases
    [n_nets, depth, n], and one input each [n_nets, n] whose preactivations start at the length
    fixed point (tanh: x = tanh(h), h ~ N(0, q*)). ``point``: (sigma_w^2, sigma_b^2), by
    default the critical point with fixed point ``q_star`` (:func:`isometry_point`); tanh's
    inputs then start at that point's q*."""
    seed = get_seed(seed)
    if depth < 1 or width < 2 or n_nets < 1:
        raise ValueError(f"need depth >= 1, width >= 2 and n_nets >= 1, got {depth}, {width}, "
                         f"{n_nets}")
    if point is None:
        s_w2, s_b2 = isometry_point(activation, q_star)
    else:
        s_w2, s_b2 = (float(v) for v in point)
        if activation == "tanh":
            q_star = meanfield_q_star(s_w2, s_b2)
    gen = _generator(seed)
    W = random_weights(init, n_nets * depth, width, s_w2, gen).reshape(n_nets, depth, width,
                                                                      width)
    b = math.sqrt(s_b2) * _randn(n_nets, depth, width, gen=gen)
    z = _randn(n_nets, width, gen=gen)
    x = torch.tanh(math.sqrt(q_star) * z) if activation == "tanh" else z
    return W, b, x


def network_jacobians(W: torch.Tensor, b: torch.Tensor, x: torch.Tensor, activation: str,
                      depths) -> tuple[torch.Tensor, ...]:
    """d x^l / d x^0 at each depth l of ``depths`` for every network of the batch: a tuple of
    [n_nets, n, n]. Each layer's Jacobian d x^l / d x^{l-1} = D^l W^l comes from ``jacrev`` of
    the layer, ``vmap``-ed over the layers and the networks at once (after one forward pass for
    the layers' inputs); the chain rule multiplies them, so every depth costs one matmul more
    (a ``jacrev`` of the whole pass per depth would redo the backward pass through every
    layer; the tests compare the product with ``torch.autograd.functional.jacobian``)."""
    if activation not in _ACT:
        raise ValueError(f"activation must be 'tanh' or 'relu', got {activation!r}")
    act = _ACT[activation]
    keep = sorted({int(d) for d in depths})
    if not keep or keep[0] < 1 or keep[-1] > W.shape[1]:
        raise ValueError(f"depths must lie in 1..{W.shape[1]}, got {list(depths)}")
    L = keep[-1]
    W, b = W[:, :L], b[:, :L]
    inputs, h = [], x
    for l in range(L):  # the forward pass: each layer's input
        inputs.append(h)
        h = act(torch.einsum("kij,kj->ki", W[:, l], h) + b[:, l])
    inputs = torch.stack(inputs, 1)  # [n_nets, L, n]

    def layer(h_in, Wl, bl):
        return act(Wl @ h_in + bl)

    per_layer = vmap(vmap(jacrev(layer)))(inputs, W, b)  # [n_nets, L, n, n]
    out, J = {}, per_layer[:, 0]
    for l in range(1, L + 1):
        if l > 1:
            J = per_layer[:, l - 1] @ J
        if l in keep:
            out[l] = J
    return tuple(out[int(d)] for d in depths)


def spectrum_stats(J: torch.Tensor) -> dict:
    """The squared singular values lambda of each Jacobian [n_nets, n, n], summarized: the mean
    of lambda (chi_1^L in theory), its relative variance Var(lambda) / mean(lambda)^2 (each
    averaged over the networks) and the fraction of lambda below SMALL (directions that J damps
    tenfold or more)."""
    s = torch.linalg.svdvals(J).cpu().numpy().astype(np.float64)
    lam = s ** 2
    m = lam.mean(1)
    return dict(mean=float(m.mean()), rel_var=float((lam.var(1) / m ** 2).mean()),
                small=float((lam < SMALL).mean()))


def chi_1_of(activation: str, sigma_w2: float, sigma_b2: float) -> float:
    """chi_1 of mean-field theory (ReLU: sigma_w^2 / 2, whatever q)."""
    return chi_1(sigma_w2, sigma_b2) if activation == "tanh" else sigma_w2 / 2


def run_isometry(cfg: IsometryConfig) -> Isometry:
    """Per case (activation, init) and depth: the spectrum's mean, relative variance and
    fraction of small squared singular values, over ``cfg.n_nets`` networks; with the
    theory's spread and chi_1 of mean-field theory at each case's point. A dry run (``DYNAMICS_DRY_RUN``) measures
    two networks per case: it checks the code at full size, not the numbers."""
    depths = [int(d) for d in cfg.depths]
    if sorted(set(depths)) != depths or depths[0] < 1:
        raise ValueError(f"depths must be increasing positive integers, got {cfg.depths}")
    n_nets = len(runtime.grid(range(cfg.n_nets)))  # a dry run: two, counted as a cut grid
    out = dict(depths=depths, width=cfg.width, n_nets=n_nets, q_star=cfg.q_star,
               seed=cfg.seed, cases={})
    for k, (act, init) in enumerate(ISO_CASES):
        W, b, x = random_network(act, init, depths[-1], cfg.width, n_nets, cfg.q_star,
                                 seed=cfg.seed * 7919 + k)
        with torch.no_grad():
            stats = [spectrum_stats(J) for J in network_jacobians(W, b, x, act, depths)]
        s_w2, s_b2 = isometry_point(act, cfg.q_star)
        chi = chi_1_of(act, s_w2, s_b2)
        # the control: the same networks' recipe at OFF_CRITICAL x the critical sigma_w^2
        # (ordered phase), measured through the same Jacobians at the deepest depth
        off = (OFF_CRITICAL * s_w2, s_b2)
        Wc, bc, xc = random_network(act, init, depths[-1], cfg.width, n_nets, cfg.q_star,
                                    seed=cfg.seed * 7919 + 101 + k, point=off)
        with torch.no_grad():
            control = spectrum_stats(network_jacobians(Wc, bc, xc, act, depths[-1:])[0])
        out["cases"][f"{act} {init}"] = dict(
            activation=act, init=init, sigma_w2=s_w2, sigma_b2=s_b2, chi_1=chi,
            control_sigma_w2=off[0], control_mean=control["mean"],
            control_chi_1=chi_1_of(act, *off),
            **{key: [st[key] for st in stats] for key in stats[0]},
            theory=spread_theory(depths, act, init, cfg.q_star).tolist())
    return Isometry.of(out)


# =============================================================================================
# 2b. Dynamical isometry: the input-output Jacobian's spectrum across depth
# =============================================================================================


def isometry_figure(res: Isometry):
    """Left: the mean squared singular value against depth (chi_1^L = 1 dotted). Right: the
    relative variance of the squared singular values against depth, with the theory (dashed)."""
    fig = plots.subplots(1, 2, ["mean squared singular value", "spread: Var λ / (mean λ)²"],
                         title=f"Input–output Jacobian at initialization, width {res.width}")
    d = res.depths
    for i, (name, c) in enumerate(res.cases.items()):
        color = plots.PALETTE[i % len(plots.PALETTE)]
        dash = "solid" if c.init == "orthogonal" else "dot"
        fig.add_scatter(x=d, y=c.mean, mode="lines+markers", name=name, legendgroup=name,
                        line=dict(color=color, dash=dash), showlegend=False, row=1, col=1)
        fig.add_scatter(x=d, y=c.rel_var, mode="lines+markers", name=name, legendgroup=name,
                        line=dict(color=color, dash=dash),
                        customdata=[100 * v for v in c.small],
                        hovertemplate="depth %{x}: %{y:.3g} (%{customdata:.0f}% of λ below "
                                      "0.01)<extra>" + name + "</extra>",
                        row=1, col=2)
        fig.add_scatter(x=d, y=c.theory, mode="lines", name=f"{name}, theory",
                        legendgroup=name, showlegend=False,
                        line=dict(color=color, dash="dash", width=1), row=1, col=2)
    fig.add_scatter(x=[None], y=[None], mode="lines", name="theory (width → ∞)",
                    line=dict(color=_GRAY, dash="dash", width=1), row=1, col=2)
    fig.add_hline(y=1.0, line=dict(color=_GRAY, dash="dot"), row=1, col=1)
    fig.update_xaxes(type="log", title_text="depth L", tickvals=d, ticktext=[str(v) for v in d])
    fig.update_yaxes(type="log", row=1, col=1, range=[-1, 1])
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(hovermode="closest")
    return fig



def _pct(x) -> str:
    return f"{100 * x:.0f}%"


def isometry_numbers(res: Isometry) -> dict:
    """The critical point and the deepest spreads the prose quotes (glue texts)."""
    c = res.cases
    t = c["tanh orthogonal"]
    return dict(iso_q=_num(res.q_star, 3), iso_sw2=_num(t.sigma_w2, 4),
                iso_sb2=f"{t.sigma_b2:.1e}", iso_depth=str(res.depths[-1]),
                iso_width=str(res.width), iso_nets=str(res.n_nets),
                iso_orth_tanh=_num(t.rel_var[-1], 2),
                iso_gauss_tanh=_num(c["tanh gaussian"].rel_var[-1], 2),
                iso_orth_relu=_num(c["relu orthogonal"].rel_var[-1], 2),
                iso_orth_tanh_small=_pct(t.small[-1]),
                iso_gauss_tanh_small=_pct(c["tanh gaussian"].small[-1]),
                iso_orth_relu_small=_pct(c["relu orthogonal"].small[-1]))


# =============================================================================================
# Claims
# =============================================================================================

# The Jacobian's spectrum (dynamical isometry): its rows' thresholds, then the rows.
MEAN_RATE = 0.03         # chi_1 = 1: |ln mean lambda| / L at the deepest depth below this
OFF_CRITICAL = 0.9       # the control: sigma_w^2 this factor of the critical value (ordered)
ORTH_TANH_MAX = 0.5      # orthogonal tanh: relative variance below this at every depth
PER_LAYER = 0.5          # Gaussian tanh, orthogonal ReLU: relative variance per layer above this
THEORY_FACTOR = 2.0      # Gaussian tanh, orthogonal ReLU: per-layer spread within this factor of theory

_PAPER = ("Pennington, Schoenholz & Ganguli, Resurrecting the sigmoid in deep learning "
          "through dynamical isometry")


def _rate(r: Isometry, key: str, best) -> float:
    """``best`` (max or min) over the four cases of |ln mean lambda| / L at the deepest depth;
    ``key``: "mean" (at the critical point) or "control_mean" (at OFF_CRITICAL x it)."""
    L = r.depths[-1]
    return best(abs(math.log(v)) / L if v > 0 else math.inf
                for v in ((c.mean[-1] if key == "mean" else c.control_mean) for c in r.cases.values()))


def _per_layer(r: Isometry, case: str) -> float:
    """A case's relative variance of lambda at the deepest depth, per layer."""
    return r.cases[case].rel_var[-1] / r.depths[-1]


MEAN_FIXED = evidence.Claim(
    "χ₁ = 1 fixes the mean squared singular value of the input–output Jacobian: it neither "
    "grows nor decays geometrically with depth, for both activations and both kinds of "
    "weights", _PAPER, measure=lambda r: _rate(r, "mean", max),
    control_measure=lambda r: _rate(r, "control_mean", min),
    test=evidence.Test("<", MEAN_RATE, "MEAN_RATE: |ln mean λ| / L at the deepest depth, "
                                       "largest of the four cases"),
    control=f"the same networks at {OFF_CRITICAL:g}× the critical σ_w² (ordered phase), the "
            "smallest of the four cases", window="the deepest depth")
ORTH_CONCENTRATED = evidence.Claim(
    "orthogonal weights on tanh's critical line at small q*: the spectrum stays concentrated "
    "as depth grows (dynamical isometry)", _PAPER,
    measure=lambda r: max(r.cases["tanh orthogonal"].rel_var),
    control_measure=lambda r: max(r.cases["tanh gaussian"].rel_var),
    test=evidence.Test("<", ORTH_TANH_MAX, "ORTH_TANH_MAX: the relative variance of λ, largest "
                                           "over depths"),
    control="Gaussian tanh at the same critical point", window="every depth")
GAUSS_SPREADS = evidence.Claim(
    "Gaussian weights at the same critical point: the spectrum spreads as depth grows "
    "(variance ≈ L·μ₂/μ₁², about one unit per layer)", _PAPER,
    measure=lambda r: _per_layer(r, "tanh gaussian"),
    control_measure=lambda r: _per_layer(r, "tanh orthogonal"),
    test=evidence.Test(">", PER_LAYER, "PER_LAYER: the relative variance of λ per layer at the "
                                       "deepest depth"),
    control="orthogonal tanh (the row above)", window="the deepest depth")
RELU_SPREADS = replace(
    GAUSS_SPREADS, statement="ReLU cannot reach dynamical isometry, even with orthogonal "
    "weights at σ_w² = 2: the spread still grows by about one unit per layer",
    measure=lambda r: _per_layer(r, "relu orthogonal"))




def _theory_factor(r: Isometry, case: str, measured: str | None = None) -> float:
    """The factor (>= 1) between the relative variance of λ per layer at the deepest depth of
    ``measured`` (default: ``case``) and ``case``'s theory there."""
    m, t = r.cases[measured or case].rel_var[-1], r.cases[case].theory[-1]
    return math.exp(abs(math.log(m / t))) if m > 0 and t > 0 else math.inf


def _theory_claim(claim: evidence.Claim, case: str) -> evidence.Claim:
    return replace(claim, measure=lambda r: _theory_factor(r, case),
                   control_measure=lambda r: _theory_factor(r, case, "tanh orthogonal"),
                   test=evidence.Test("<", THEORY_FACTOR, "THEORY_FACTOR: the factor between "
                                      "the measured per-layer spread and the theory's",
                                      scale="log"),
                   control="orthogonal tanh's spread against the same theory")


def isometry_claims(iso: dict) -> list[dict]:
    """The claims rows of the Jacobian's spectrum, judged by the engine on every seed of
    ``{seed: result}`` (:func:`run_isometry`), each control through the row's own test; the
    theory's numbers are printed beside them."""
    iso = plots.per_seed(iso, "iso", "init.claim_runs")
    r0 = iso[next(iter(iso))]
    deep, cases = r0.depths[-1], r0.cases
    theory = "; ".join(f"{n} {_g(cases[n].theory[-1] / deep)}" for n in
                       ("tanh orthogonal", "tanh gaussian", "relu orthogonal"))
    window = f"depths {r0.depths[0]}–{deep}, {_q(r0)}; theory per layer at depth {deep}: {theory}"
    rows = [evidence.judge(replace(c, window=f"{c.window}; {window}", fmt=_g), iso, iso).row()
            for c in (MEAN_FIXED, ORTH_CONCENTRATED)]
    for c, case in ((GAUSS_SPREADS, "tanh gaussian"), (RELU_SPREADS, "relu orthogonal")):
        rows.append(evidence.joint(
            c.statement, c.paper,
            {"per layer:": evidence.judge(replace(c, fmt=_g), iso, iso),
             "per layer ÷ theory, as a factor:": evidence.judge(
                 replace(_theory_claim(c, case), fmt=_g), iso, iso)},
            control=f"orthogonal tanh through both tests ({c.control})",
            window=f"{c.window}; {window}"))
    return rows


def _g(x) -> str:
    return plots.number(x, 3)


def _q(res) -> str:
    return f"q* = {plots.number(res.q_star, 3)}"
