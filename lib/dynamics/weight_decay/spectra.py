"""Weight decay, section 4: what training and decay leave in a weight matrix's spectrum.

Norms, ranks and the power-law tail of the empirical spectral density (ESD), the eigenvalues
x_i = s_i^2 of W^T W. The tail is fitted the way WeightWatcher fits it (Martin & Mahoney,
"Implicit Self-Regularization in Deep Neural Networks" and "Heavy-Tailed Universality
Predicts Trends in Test Accuracies for Very Large Pre-Trained Deep Neural Networks"): a
continuous power law p(x) ~ x^(-alpha) for x >= x_min, alpha by maximum likelihood and x_min
by the smallest Kolmogorov-Smirnov distance between the fitted law and the data (Clauset,
Shalizi & Newman), with the ``powerlaw`` package. Any set of numbers gets *some* alpha that
way, a random matrix's bulk included, so :func:`tail_fit` also says whether the tail it found
is a power law at all: the power law must beat an exponential tail on the same eigenvalues, by
the sign and the significance of the normalized log-likelihood ratio (:data:`TAIL_P`). The
Marchenko-Pastur density of a random Gaussian matrix ends at a hard edge, and on it the
exponential wins (``tests/weight_decay/test_spectra.py``). Beating the exponential is not
enough: a collapsed random bulk with a few strong directions above it (Martin & Mahoney's
bulk+spikes and rank-collapse phases) beats it too, with alpha below 2. So the tail must also
have no gap the fitted law cannot explain (:func:`tail_gap`; a spiked bulk has one, between
its spikes and its bulk), and a power law with an exponential cutoff must not fit it
significantly better (Clauset, Shalizi & Newman's nested likelihood-ratio test).

``science`` re-exports everything here; this module imports numpy, torch and powerlaw only
(and :mod:`dynamics.results` for its two records, :class:`TailFit` and :class:`MatrixStats`).
"""
from __future__ import annotations

import contextlib
import io
import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from ..results import Record

__all__ = ["TAIL_P", "ZERO_EIG", "MIN_EIGS", "TailFit", "MatrixStats", "singular_values",
           "stable_rank", "effective_rank", "eigenvalues", "tail_gap", "tail_fit", "tail_exponent", "spectrum_stats"]

TAIL_P = 0.1      # the power law must beat the exponential with a p-value below this
ZERO_EIG = 1e-8   # eigenvalues below this fraction of the largest are numerical zeros
MIN_EIGS = 16     # fewer nonzero eigenvalues than this: no tail to fit (a 10-class head)


def singular_values(w: torch.Tensor) -> np.ndarray:
    """Singular values of a weight matrix (conv kernels flattened to out x rest), descending."""
    if w.ndim < 2:
        raise ValueError(f"singular values need a matrix, got a tensor of shape {list(w.shape)}")
    return torch.linalg.svdvals(w.detach().float().reshape(w.shape[0], -1)).cpu().numpy()


def stable_rank(sv) -> float:
    """||W||_F^2 / ||W||_2^2 = sum s_i^2 / s_max^2: how many directions carry the weight's
    energy (1 for a rank-one matrix, n for an orthogonal one); insensitive to tiny s_i."""
    sv = np.asarray(sv, dtype=float)
    if sv.ndim != 1 or len(sv) == 0 or sv.max() <= 0:
        raise ValueError("stable_rank needs a non-empty vector of singular values, not all zero")
    return float((sv ** 2).sum() / sv.max() ** 2)


def effective_rank(sv) -> float:
    """exp(entropy of s_i / sum s) (Roy & Vetterli 2007): n for equal singular values, 1 for
    rank one; a smooth count of the directions in use."""
    sv = np.asarray(sv, dtype=float)
    if sv.ndim != 1 or len(sv) == 0 or sv.sum() <= 0:
        raise ValueError("effective_rank needs a non-empty vector of singular values, not all zero")
    p = sv / sv.sum()
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def eigenvalues(sv) -> np.ndarray:
    """The ESD's eigenvalues s_i^2, ascending, without numerical zeros (below ``ZERO_EIG``
    times the largest): what :func:`tail_fit` fits."""
    sv = np.asarray(sv, dtype=float)
    if sv.ndim != 1 or not np.isfinite(sv).all():
        raise ValueError("the tail fit needs a finite vector of singular values")
    x = np.sort(sv ** 2)
    x = x[x > ZERO_EIG * x[-1]] if len(x) and x[-1] > 0 else x[:0]
    if len(x) < MIN_EIGS:
        raise ValueError(f"the tail fit needs at least {MIN_EIGS} nonzero singular values, "
                         f"got {len(x)}")
    return x


def tail_gap(x, xmin: float, alpha: float) -> tuple[float, int]:
    """The largest gap in the tail x >= ``xmin`` of eigenvalues ``x``, and how likely a gap that
    large is under the fitted power law x^(-alpha): ``(p, above)``, with ``above`` the number of
    eigenvalues above the gap.

    Under a power law, log(x / xmin) is exponential with rate alpha - 1, and the spacings of the
    ordered sample, the k-th largest minus the (k+1)-th times k, are independent exponentials of
    the same rate (Renyi's representation). The largest of the n - 1 spacings, d, has
    ``p = 1 - (1 - exp(-(alpha - 1) d))^(n - 1)``: calibrated on a true power law, and tiny
    for a few spikes far above a collapsed bulk, whose spacing at the bulk's edge is the log of
    a large ratio times the number of spikes."""
    t = np.sort(np.asarray(x, dtype=float)[np.asarray(x) >= xmin])[::-1]
    if len(t) < 2 or not alpha > 1:
        return 1.0, 0
    k = np.arange(1, len(t))
    d = k * np.diff(-np.log(t)) * (alpha - 1)
    j = int(np.argmax(d))
    p = float(-np.expm1((len(d)) * np.log1p(-math.exp(-d[j])))) if d[j] > 0 else 1.0
    return p, j + 1


@dataclass
class TailFit(Record):
    """:func:`tail_fit`'s result (its docstring says what each field is)."""
    alpha: float
    xmin: float
    n_tail: int
    ks: float
    loglik_ratio: float
    p: float
    gap_p: float
    spikes: int
    cutoff_p: float
    power_law: bool


@dataclass
class MatrixStats(Record):
    """:func:`spectrum_stats`'s result: one matrix's norms, ranks and tail fit."""
    frobenius: float
    spectral: float
    stable_rank: float
    effective_rank: float
    tail_alpha: float
    tail_power_law: bool
    tail_ratio: float
    tail_gap_p: float
    tail_spikes: int
    tail_cutoff_p: float


def tail_fit(sv) -> TailFit:
    """Fit a power law to the upper tail of the ESD of W^T W, as WeightWatcher does.

    ``powerlaw.Fit`` on the eigenvalues x = s^2 (:func:`eigenvalues`): for every candidate
    x_min the exponent alpha of p(x) ~ x^(-alpha), x >= x_min, by maximum likelihood; x_min
    where the Kolmogorov-Smirnov distance ``ks`` between the fitted law and the data is
    smallest. alpha may be any value above 1 (``powerlaw`` 2.0 bounds alpha to [0, 3] unless
    told otherwise, which would cap every light tail at 3). Then the power law is compared with
    an exponential tail on the same eigenvalues (``distribution_compare``): ``loglik_ratio`` > 0
    favours the power law, and ``p`` is the chance of a ratio that large from noise.

    ``power_law`` is True only when the power law wins with p below :data:`TAIL_P`, the
    tail has no gap the law cannot explain (:func:`tail_gap`: ``gap_p`` at least
    :data:`TAIL_P`; ``spikes`` eigenvalues lie above the largest gap), and a power law with an
    exponential cutoff does not fit significantly better (``cutoff_p``: the nested
    likelihood-ratio test's p-value, 1 where the cutoff does not help, at least
    :data:`TAIL_P`); then and only then is alpha the exponent of a heavy tail (Martin & Mahoney read 2 to 4 as the
    heavy tails of well-trained layers, above 6 as random-like). On a random Gaussian matrix the
    exponential wins and alpha, fitted to a handful of eigenvalues at the Marchenko-Pastur edge,
    means nothing; on a few spikes over a collapsed bulk the power law beats the exponential
    with alpha below 2, and the gap rejects it. Returns a :class:`TailFit`: ``alpha``, ``xmin``,
    ``n_tail`` (eigenvalues in the tail), ``ks``, ``loglik_ratio``, ``p``, ``gap_p``, ``spikes``,
    ``cutoff_p`` and ``power_law``.
    """
    import powerlaw  # imported here: it is slow to import, and only section 4 needs it

    x = eigenvalues(sv)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        fit = powerlaw.Fit(x, xmax=None, verbose=False, parameter_ranges={"alpha": [1.0, None]})
        ratio, p = fit.distribution_compare("power_law", "exponential", normalized_ratio=True)
        # nested (a power law is a truncated one with no cutoff): a likelihood-ratio test
        cut_ratio, cut_p = fit.distribution_compare("power_law", "truncated_power_law",
                                                    nested=True)
    alpha, ratio, p = float(fit.alpha), float(ratio), float(p)
    cut = bool(cut_ratio < 0 and cut_p < TAIL_P)
    ok = math.isfinite(alpha) and math.isfinite(ratio)
    gap_p, spikes = tail_gap(x, float(fit.xmin), alpha)
    return TailFit(alpha=alpha, xmin=float(fit.xmin), n_tail=int((x >= fit.xmin).sum()),
                   ks=float(fit.D), loglik_ratio=ratio, p=p, gap_p=gap_p, spikes=spikes,
                   cutoff_p=float(cut_p) if cut_ratio < 0 else 1.0,
                   power_law=bool(ok and ratio > 0 and p < TAIL_P and gap_p >= TAIL_P and not cut))


def tail_exponent(sv) -> float:
    """alpha of :func:`tail_fit`: the exponent of the power law fitted to the ESD's tail
    (whether that tail *is* a power law is ``tail_fit(sv).power_law``)."""
    return tail_fit(sv).alpha


def spectrum_stats(sv, fit: bool = True) -> MatrixStats:
    """Frobenius norm, spectral norm, stable rank, effective rank and the tail fit
    (``tail_alpha``, ``tail_power_law``, ``tail_ratio``, ``tail_gap_p``, ``tail_spikes``,
    ``tail_cutoff_p``: :func:`tail_fit`; NaN and False, no fit, for a matrix with fewer than
    :data:`MIN_EIGS` nonzero singular values, such as a 10-class head, or with ``fit=False``):
    a :class:`MatrixStats`."""
    sv = np.asarray(sv, dtype=float)
    nonzero = int((sv ** 2 > ZERO_EIG * (sv ** 2).max()).sum()) if sv.size else 0
    nan = math.nan
    tail = (tail_fit(sv) if fit and nonzero >= MIN_EIGS else
            TailFit(alpha=nan, xmin=nan, n_tail=0, ks=nan, loglik_ratio=nan, p=nan, gap_p=nan,
                    spikes=0, cutoff_p=nan, power_law=False))
    return MatrixStats(frobenius=float(np.sqrt((sv ** 2).sum())), spectral=float(sv.max()),
                       stable_rank=stable_rank(sv), effective_rank=effective_rank(sv),
                       tail_alpha=tail.alpha, tail_power_law=tail.power_law,
                       tail_ratio=tail.loglik_ratio, tail_gap_p=tail.gap_p,
                       tail_spikes=tail.spikes, tail_cutoff_p=tail.cutoff_p)
