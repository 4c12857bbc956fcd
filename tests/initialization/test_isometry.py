"""Dynamical isometry (dynamics.initialization.isometry): the Jacobians against PyTorch's, the
mean of the spectrum against chi_1^L, the exact one-layer spectra, the theory's spread, and the
claims rows on seeds 0-2 (and that each can say no)."""
import math
from dataclasses import replace
from functools import lru_cache
from types import SimpleNamespace as NS

import numpy as np
import pytest
import torch

from dynamics import plots
from dynamics.initialization import experiments as E
from dynamics.initialization import science as S
from dynamics.initialization import isometry as I

from known import known_answer
from seeds import SEEDS


def _net(W, b, act):
    def f(x0):
        h = x0
        for l in range(W.shape[0]):
            h = act(W[l] @ h + b[l])
        return h
    return f


@known_answer(I.network_jacobians, how="torch.autograd.functional.jacobian of the same network, "
                                       "depth by depth")
@pytest.mark.parametrize("activation, init", I.ISO_CASES)
def test_jacobians_match_torch_autograd(activation, init):
    """Every depth's Jacobian, from the chain of per-layer jacrev's, equals
    torch.autograd.functional.jacobian of the whole pass, network by network."""
    W, b, x = I.random_network(activation, init, depth=5, width=12, n_nets=3, q_star=0.3,
                               seed=4)
    b = b + 0.1 * torch.randn_like(b)  # biases that matter
    act = {"tanh": torch.tanh, "relu": torch.relu}[activation]
    Js = I.network_jacobians(W, b, x, activation, [1, 3, 5])
    for k in range(3):
        for J, d in zip(Js, [1, 3, 5]):
            ref = torch.autograd.functional.jacobian(_net(W[k, :d], b[k, :d], act), x[k])
            torch.testing.assert_close(J[k], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("activation, point", [("tanh", (3.0, 0.05)), ("tanh", (0.8, 0.01)),
                                               ("relu", (2.4, 0.0)), ("relu", (1.7, 0.0))])
@known_answer(I.chi_1_of, I.spectrum_stats,
              how="mean-field theory: the mean squared singular value of the Jacobian is "
                  "chi_1^L (ReLU: chi_1 = sigma_w^2 / 2)")
def test_mean_squared_singular_value_is_chi_1_to_the_depth(activation, point):
    """Off the critical line the mean of lambda = s^2 grows or decays as chi_1^L, chi_1 from
    the chapter's mean-field code (ReLU: sigma_w^2 / 2): chi_1 fixes the mean."""
    depth = 12
    W, b, x = I.random_network(activation, "gaussian", depth, 256, 8, seed=1, point=point)
    J, = I.network_jacobians(W, b, x, activation, [depth])
    mean = I.spectrum_stats(J)["mean"]
    chi = I.chi_1_of(activation, *point)
    assert abs(chi - 1) > 0.1 and chi ** depth not in (0.5, 2)  # far from 1 at this depth
    assert mean == pytest.approx(chi ** depth, rel=0.25)


def test_one_relu_layer_has_squared_singular_values_zero_and_the_gain():
    """A plain ReLU layer's Jacobian is D W: with orthogonal W (gain sqrt 2) its squared
    singular values are 0 (inactive units) and 2, with identity weights (ZerO) 0 and 1: never
    all near one value."""
    W, b, x = I.random_network("relu", "orthogonal", 1, 64, 2, seed=0)
    lam = torch.linalg.svdvals(I.network_jacobians(W, b, x, "relu", [1])[0]) ** 2
    active = (torch.einsum("kij,kj->ki", W[:, 0], x) + b[:, 0] > 0).sum(1)
    for k in range(2):
        assert torch.allclose(lam[k][:active[k]], torch.tensor(2.0), atol=1e-5)
        assert torch.all(lam[k][active[k]:] < 1e-10)
    eye = torch.eye(64).expand(2, 1, 64, 64)
    lam = torch.linalg.svdvals(I.network_jacobians(eye, 0 * b, x, "relu", [1])[0]) ** 2
    assert sorted(set(np.round(lam.flatten().tolist(), 6))) == [0.0, 1.0]


@known_answer(I.isometry_point, I.spread_theory,
              how="the point solves q* = 1/64 and chi_1 = 1 of the (tested) mean-field maps, "
                  "ReLU's is (2, 0); the spread is L (mu2/mu1^2 - 1 - s1) of Pennington et al., "
                  "1 and 2 per layer for ReLU")
def test_the_critical_point_and_the_theory():
    s_w2, s_b2 = I.isometry_point("tanh", 1 / 64)
    assert S.q_star(s_w2, s_b2) == pytest.approx(1 / 64, rel=1e-3)
    assert S.chi_1(s_w2, s_b2) == pytest.approx(1.0, abs=1e-6)
    assert 1 < s_w2 < 1.05 and 0 <= s_b2 < 1e-4
    assert I.isometry_point("relu") == (2.0, 0.0)
    assert list(I.spread_theory([1, 8], "relu", "orthogonal")) == [1.0, 8.0]
    assert list(I.spread_theory([1, 8], "relu", "gaussian")) == [2.0, 16.0]
    small, large = (I.spread_theory(64, "tanh", "orthogonal", q) for q in (1e-3, 1.0))
    assert small < 1e-3 < 1 < large  # orthogonal tanh concentrates only as q* -> 0
    assert I.spread_theory(64, "tanh", "gaussian", 1e-3) == pytest.approx(64, rel=0.01)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="activation"):
        I.isometry_point("gelu")
    with pytest.raises(ValueError, match="q_star"):
        I.isometry_point("tanh", -1.0)
    with pytest.raises(ValueError, match="init"):
        I.spread_theory(4, "tanh", "xavier")
    with pytest.raises(ValueError, match="depths"):
        I.run_isometry(I.IsometryConfig.for_profile("smoke", depths=[8, 4]))
    W, b, x = I.random_network("tanh", "gaussian", 3, 8, 1)
    with pytest.raises(ValueError, match="depths"):
        I.network_jacobians(W, b, x, "tanh", [4])
    with pytest.raises(ValueError, match="IsometryConfig|width"):
        I.IsometryConfig.for_profile("smoke", width=1)


@lru_cache(maxsize=4)
def _iso(seed):
    return E.run_isometry(I.IsometryConfig.for_profile("smoke", seed=seed))


def test_figure_draws_every_case_with_its_theory():
    res = _iso(SEEDS[0])
    fig = I.isometry_figure(res)
    names = {tr.name for tr in fig.data}
    assert all(n in names and f"{n}, theory" in names for n in res.cases)
    assert "Plotly.newPlot" in plots.to_html(fig)
    plots.house(fig)
    nums = I.isometry_numbers(res)
    assert nums["iso_depth"] == str(res.depths[-1])


@pytest.mark.claim
def test_claim_isometry_rows_on_three_seeds():
    """Smoke profile, seeds 0-2: chi_1 = 1 fixes the mean; orthogonal tanh (q* = 1/64)
    stays concentrated; Gaussian tanh spreads about one unit per layer; orthogonal ReLU does
    not reach isometry."""
    rows = I.isometry_claims({s: _iso(s) for s in SEEDS})
    assert len(rows) == 4 and all(r["seeds"] == list(SEEDS) for r in rows)
    assert [r["reproduced"] for r in rows] == ["yes"] * 4, [r["measured here"] for r in rows]


def test_isometry_rows_can_say_no():
    """Each row fails on data where its phenomenon is absent: the means decaying as an ordered
    network's, orthogonal tanh given Gaussian tanh's spread, Gaussian tanh given orthogonal
    tanh's, orthogonal ReLU given orthogonal tanh's."""
    runs = {s: _iso(s) for s in SEEDS}

    def swap(**repl):
        out = {}
        for s, r in runs.items():
            cases = dict(r.cases)
            for name, fn in repl.items():
                cases[name.replace("_", " ")] = fn(r.cases)
            out[s] = replace(r, cases=cases)
        return out

    deep = runs[SEEDS[0]].depths
    ordered = swap(tanh_gaussian=lambda c: replace(c["tanh gaussian"], mean=[
        m * 0.9 ** d for m, d in zip(c["tanh gaussian"].mean, deep)]))
    assert [r["reproduced"] for r in I.isometry_claims(ordered)] == ["no", "yes", "yes", "yes"]
    at_edge = swap(relu_gaussian=lambda c: replace(c["relu gaussian"],
                                                   control_mean=c["relu gaussian"].mean[-1]))
    # a control that passes the row's test too
    assert I.isometry_claims(at_edge)[0]["reproduced"] == "does not discriminate"
    spread = swap(tanh_orthogonal=lambda c: c["tanh gaussian"])
    assert I.isometry_claims(spread)[1]["reproduced"] == "no"
    flat = swap(tanh_gaussian=lambda c: replace(c["tanh gaussian"],
                                                rel_var=c["tanh orthogonal"].rel_var))
    assert I.isometry_claims(flat)[2]["reproduced"] == "no"
    iso_relu = swap(relu_orthogonal=lambda c: replace(c["relu orthogonal"],
                                                      rel_var=c["tanh orthogonal"].rel_var))
    assert I.isometry_claims(iso_relu)[3]["reproduced"] == "no"
    with pytest.raises(ValueError, match="seed"):
        I.isometry_claims(runs[SEEDS[0]])


@known_answer(I.spectrum_stats, how="constructed Jacobians: the identity (mean 1, relative "
                                    "variance 0, none small) and diag(2, 0.05, 0, 1)")
def test_spectrum_stats_on_constructed_jacobians():
    st = I.spectrum_stats(torch.eye(4).expand(3, 4, 4))
    assert st == pytest.approx(dict(mean=1.0, rel_var=0.0, small=0.0), abs=1e-12)
    s = torch.tensor([2.0, 0.05, 0.0, 1.0])
    lam = s.double() ** 2
    st = I.spectrum_stats(torch.diag(s).expand(2, 4, 4))
    assert st["mean"] == pytest.approx(float(lam.mean()), rel=1e-6)
    assert st["rel_var"] == pytest.approx(float(lam.var(unbiased=False) / lam.mean() ** 2), rel=1e-5)
    assert st["small"] == pytest.approx(0.5)  # 0.05^2 and 0 lie below 0.01


@known_answer(I._theory_factor, how="a measured spread equal to the theory is a factor 1; twice "
                                    "or half of it, a factor 2")
def test_theory_factor_of_constructed_spreads():
    r = NS(cases={"tanh gaussian": NS(rel_var=[1.0, 30.0], theory=[1.0, 30.0]),
                  "tanh orthogonal": NS(rel_var=[0.1, 15.0], theory=[0.0, 0.1])})
    assert I._theory_factor(r, "tanh gaussian") == pytest.approx(1.0)
    assert I._theory_factor(r, "tanh gaussian", "tanh orthogonal") == pytest.approx(2.0)
    r.cases["tanh orthogonal"].rel_var[-1] = 60.0
    assert I._theory_factor(r, "tanh gaussian", "tanh orthogonal") == pytest.approx(2.0)
