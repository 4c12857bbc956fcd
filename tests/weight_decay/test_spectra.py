"""dynamics.weight_decay.spectra: norms, ranks and the power-law tail of a weight matrix's
spectrum, on spectra whose answer is known (a random matrix has no power-law tail; a Pareto
sample has the exponent it was drawn with) and against WeightWatcher on a layer of the
chapter's own network."""
import logging
import math

import numpy as np
import pytest
import torch

from known import known_answer

from dynamics.models import MLP
from dynamics.train import Recipe, train
from dynamics.weight_decay import science as S
from dynamics.weight_decay import spectra as P


@known_answer(P.singular_values, P.stable_rank, P.effective_rank,
              how="numpy's SVD of a random matrix; equal singular values give rank n and a "
                  "single nonzero one gives rank 1 for both ranks")
def test_singular_values_and_ranks():
    m = np.random.default_rng(0).normal(size=(30, 20))
    sv = np.linalg.svd(m, compute_uv=False)
    np.testing.assert_allclose(P.singular_values(torch.tensor(m, dtype=torch.float32)), sv, rtol=1e-4)
    assert P.stable_rank(np.ones(8)) == pytest.approx(8)
    assert P.effective_rank(np.ones(8)) == pytest.approx(8)
    assert P.stable_rank([5.0, 0, 0]) == pytest.approx(1)
    assert P.effective_rank([5.0, 0, 0]) == pytest.approx(1)
    assert P.stable_rank([2.0, 1.0]) == pytest.approx(1.25)           # (4 + 1) / 4
    assert P.effective_rank([3.0, 1.0]) == pytest.approx(math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25))))
    with pytest.raises(ValueError):
        P.stable_rank(np.zeros(3))
    with pytest.raises(ValueError):
        P.effective_rank([])
    with pytest.raises(ValueError):
        P.singular_values(torch.ones(3))


def _random_matrices():
    """Random square matrices of the chapter's sizes and the referee's n = 64: Gaussian
    entries, and PyTorch's default (uniform) initialization of a Linear layer; and rectangular
    Gaussian ones (Marchenko-Pastur with aspect ratio below 1), the chapter's first hidden
    matrix's 256 x 40 among them."""
    rng = np.random.default_rng(0)
    for n in (64, 128, 256):
        for s in range(4):
            yield f"gaussian {n} #{s}", np.linalg.svd(rng.normal(size=(n, n)), compute_uv=False)
            torch.manual_seed(s)
            w = torch.nn.Linear(n, n, bias=False).weight
            yield f"torch init {n} #{s}", P.singular_values(w)
    for shape in ((256, 40), (256, 128)):
        for s in range(3):
            yield f"gaussian {shape} #{s}", np.linalg.svd(rng.normal(size=shape), compute_uv=False)


@known_answer(P.tail_fit, P.tail_exponent, P.eigenvalues,
              how="a random matrix's ESD is Marchenko-Pastur, with a hard upper edge and no "
                  "power-law tail: the fit must say so (the exponential tail wins)")
def test_a_random_matrix_has_no_power_law_tail():
    for name, sv in _random_matrices():
        fit = P.tail_fit(sv)
        assert not fit.power_law, (name, fit)
        assert fit.loglik_ratio < 0 or fit.p >= P.TAIL_P, (name, fit)
        assert P.tail_exponent(sv) == fit.alpha
    # the Hill estimate on the top half, which this replaced, read such a matrix as 2 to 4
    x = np.sort(sv ** 2)[::-1][: len(sv) // 2]
    assert 1.5 < 1 + len(x) / np.log(x / x[-1]).sum() < 4


@known_answer(P.tail_fit,
              how="eigenvalues drawn from a Pareto density x^-alpha (alpha 2 and 3): the fit "
                  "recovers alpha within 10% and calls the tail a power law")
def test_a_synthetic_power_law_is_recovered():
    for alpha in (2.0, 3.0):
        for seed in (0, 1):
            x = np.random.default_rng(seed).pareto(alpha - 1, size=500) + 1.0
            fit = P.tail_fit(np.sqrt(x))        # singular values s = sqrt(x)
            assert fit.alpha == pytest.approx(alpha, rel=0.10), (alpha, seed, fit)
            assert fit.power_law and fit.n_tail >= 100, fit
            assert fit.gap_p >= P.TAIL_P and fit.cutoff_p >= P.TAIL_P, fit
    # scale-free: multiplying the matrix by c moves x_min, not alpha
    x = np.random.default_rng(0).pareto(2.0, size=500) + 1.0
    assert P.tail_fit(0.01 * np.sqrt(x)).alpha == pytest.approx(P.tail_fit(np.sqrt(x)).alpha, rel=1e-6)


def _spiked_bulk(n, spikes, bulk, seed):
    """Singular values of a random n x n Gaussian bulk (entries of std bulk / sqrt(n)) plus
    ``spikes`` rank-one directions of strength 1 to 10: a few learned directions over a random
    bulk, Martin & Mahoney's bulk+spikes phase (rank collapse as the bulk shrinks)."""
    rng = np.random.default_rng(seed)
    w = bulk * rng.normal(size=(n, n)) / np.sqrt(n)
    for _ in range(spikes):
        u, v = rng.normal(size=n), rng.normal(size=n)
        w += rng.uniform(1, 10) * np.outer(u / np.linalg.norm(u), v / np.linalg.norm(v))
    return np.linalg.svd(w, compute_uv=False)


@known_answer(P.tail_fit, P.tail_gap,
              how="a 256 x 256 Gaussian bulk, shrunk 3 to 100-fold, plus 3 to 20 rank-one spikes "
                  "(the referee's null): no power law, though the power law beats the exponential "
                  "there with alpha below 2; the gap between spikes and bulk rejects it")
def test_a_spiked_bulk_has_no_power_law_tail():
    beaten = 0
    for spikes in (3, 5, 10, 20):
        for bulk in (0.01, 0.1, 0.3):
            for seed in (0, 1):
                fit = P.tail_fit(_spiked_bulk(256, spikes, bulk, seed))
                assert not fit.power_law, (spikes, bulk, seed, fit)
                if fit.loglik_ratio > 0 and fit.p < P.TAIL_P and fit.alpha < 2:
                    beaten += 1                 # what the exponential comparison alone accepted
                    assert fit.gap_p < P.TAIL_P and fit.spikes == spikes, fit
    assert beaten >= 15
    # the gap's p-value is calibrated on a true power law: no Pareto sample is rejected by it
    for alpha in (1.5, 2.0, 3.0):
        for seed in range(4):
            x = np.random.default_rng(seed).pareto(alpha - 1, size=500) + 1.0
            assert P.tail_fit(np.sqrt(x)).gap_p > 0.2, (alpha, seed)
    # five spikes three decades above an exact power law: a gap, found with the spikes above it
    # (the k-th spacing counts k times: one spike alone is a spacing of log 1000, p about 0.26)
    x = np.sort(np.random.default_rng(0).pareto(1.0, size=300) + 1.0)
    p, above = P.tail_gap(np.r_[x, 1e3 * x[-1] * np.arange(1, 6)], 1.0, 2.0)
    assert p < 1e-3 and above == 5
    assert P.tail_gap(x, 1.0, 2.0)[0] > P.TAIL_P


@known_answer(P.tail_fit,
              how="a power law x^-2 with an exponential cutoff exp(-x/30) (Pareto samples kept "
                  "with probability exp(-x/30)): a cutoff fits significantly better, so no "
                  "power law, though the power law beats a pure exponential")
def test_a_power_law_with_a_cutoff_is_not_a_power_law():
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        x = rng.pareto(1.0, size=20000) + 1.0
        x = x[rng.random(x.size) < np.exp(-x / 30)][:600]
        fit = P.tail_fit(np.sqrt(x))
        assert fit.cutoff_p < P.TAIL_P and not fit.power_law, (seed, fit)


@known_answer(P.tail_fit, P.spectrum_stats,
              how="WeightWatcher's analyze() on the same trained layer of the chapter's MLP: "
                  "the same alpha and x_min (both fit x^-alpha by likelihood, x_min by KS)")
def test_tail_fit_agrees_with_weightwatcher_on_the_chapters_layer():
    ww = pytest.importorskip("weightwatcher")
    data = S.mnist1d_data(2000)
    cfg = S.SpectrumConfig.for_profile("smoke")
    torch.manual_seed(0)
    model = MLP(data.input_dim, cfg.width, 2, data.n_classes)
    train(model, data, Recipe(300, optimizer="adamw", lr=cfg.lr, weight_decay=cfg.weight_decay,
                              batch_size=cfg.batch_size, eval=300), bars=False, seed=0)
    layer = model.hidden[1]                                     # the square hidden matrix
    ours = P.tail_fit(P.singular_values(layer.weight))
    logging.getLogger("weightwatcher").setLevel(logging.ERROR)
    theirs = ww.WeightWatcher(model=torch.nn.Sequential(layer)).analyze()  # default min_evals: 8
    assert len(theirs) == 1
    assert ours.alpha == pytest.approx(float(theirs["alpha"].iloc[0]), rel=1e-3)
    assert ours.xmin == pytest.approx(float(theirs["xmin"].iloc[0]), rel=1e-3)
    st = P.spectrum_stats(P.singular_values(layer.weight))
    w = layer.weight.detach().double().numpy()
    assert st.frobenius == pytest.approx(np.linalg.norm(w), rel=1e-5)
    assert st.spectral == pytest.approx(np.linalg.norm(w, 2), rel=1e-5)
    assert st.tail_alpha == pytest.approx(ours.alpha) and st.tail_power_law == ours.power_law
    head = P.spectrum_stats(P.singular_values(model.head.weight))  # 10 classes: no tail to fit
    assert math.isnan(head.tail_alpha) and head.tail_power_law is False


def test_tail_fit_bad_inputs():
    for bad in ([], np.ones(5), np.ones((20, 2)), np.r_[np.ones(20), np.nan]):
        with pytest.raises(ValueError):
            P.tail_fit(bad)
    with pytest.raises(ValueError, match="at least"):
        P.tail_fit(np.r_[np.ones(10), np.zeros(30)])    # 10 nonzero: too few


def test_the_fits_are_records_and_a_renamed_field_fails():
    """tail_fit returns a TailFit and spectrum_stats a MatrixStats (what the claims, facts and
    figures read by name); a payload with a field renamed is refused naming it, and
    ``fit=False`` gives the norms and ranks with no tail fit."""
    import dataclasses

    x = np.random.default_rng(0).pareto(2.0, size=300) + 1.0
    fit, st = P.tail_fit(np.sqrt(x)), P.spectrum_stats(np.sqrt(x))
    assert isinstance(fit, P.TailFit) and isinstance(st, P.MatrixStats)
    assert P.TailFit.of(dataclasses.asdict(fit)) == fit and st.tail_alpha == fit.alpha
    for cls, rec, old, new in ((P.TailFit, fit, "loglik_ratio", "ratio"),
                               (P.MatrixStats, st, "tail_gap_p", "gap_p")):
        bad = dataclasses.asdict(rec)
        bad[new] = bad.pop(old)
        with pytest.raises(ValueError, match=f"no field {old}; unknown field {new}"):
            cls.of(bad)
    bare = P.spectrum_stats(np.sqrt(x), fit=False)
    assert bare.frobenius == st.frobenius and bare.stable_rank == st.stable_rank
    assert math.isnan(bare.tail_alpha) and bare.tail_power_law is False
