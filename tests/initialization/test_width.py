"""Section 5 of the initialization chapter, learning rates across width: the claims on seeds 0-2
(smoke), a row that says "no" on data where the phenomenon is absent, the best-rate estimate
and the errors (the comparison with ``mup`` is in test_width_mup.py)."""
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

from dynamics import plots
from dynamics.initialization import facts as Fa
from dynamics.initialization import width as W
from known import known_answer

from seeds import SEEDS


@lru_cache(maxsize=1)
def _runs():
    return W.width_claim_runs("smoke", SEEDS)


# ----------------------------------------------------------------------------- claims


@pytest.mark.claim
def test_claim_sp_best_lr_falls_and_mup_stays():
    rows = W.width_claims(_runs())
    assert len(rows) == 2 and all(r["asserted"] and r["seeds"] == list(SEEDS) for r in rows)
    bad = plots.failed_claims(rows)
    assert not bad, [(r["claim"], r["measured here"]) for r in bad]
    for r in _runs().values():
        assert all(r.sp.inside) and all(r.mup.inside)
        # at the base width the two parametrizations are the same network: same losses
        assert r.sp.loss[0] == r.mup.loss[0]


def test_rows_say_no_when_the_parametrizations_swap():
    """Fed μP's curves as SP's and SP's as μP's, both rows fail: the control as treatment."""
    swapped = {s: replace(r, sp=r.mup, mup=r.sp) for s, r in _runs().items()}
    assert [row["reproduced"] for row in W.width_claims(swapped)] == ["no", "no"]
    # an optimum at the edge of the grid is only bounded: the SP row cannot pass on it
    edge = {s: replace(r, sp=replace(r.sp, inside=[False] * len(r.widths)))
            for s, r in _runs().items()}
    assert W.width_claims(edge)[0]["reproduced"] == "no"


@known_answer(W.best_log2_lr, how="a parabola's vertex (-2.3) from grid points; a monotone "
                                  "curve's edge; a NaN neighbour")
def test_best_log2_lr_refines_inside_and_flags_the_edge():
    x = [-4, -3, -2, -1, 0]
    b, inside = W.best_log2_lr([(v + 2.3) ** 2 for v in x], x)
    assert inside and b == pytest.approx(-2.3)
    b, inside = W.best_log2_lr([5, 4, 3, 2, 1], x)
    assert b == 0 and not inside
    b, inside = W.best_log2_lr([1, float("nan"), 3, 4, 5], x)  # a diverged neighbour
    assert b == -4 and not inside
    with pytest.raises(ValueError, match="one loss per learning rate"):
        W.best_log2_lr([1, 2], [0, 1])


def test_bad_settings_name_themselves():
    with pytest.raises(ValueError, match="widths"):
        W.run_width(W.WidthConfig.for_profile("smoke", widths=[64]))
    with pytest.raises(ValueError, match="log2_lrs"):
        W.run_width(W.WidthConfig.for_profile("smoke", log2_lrs=[-3, -5, -4]))
    with pytest.raises(ValueError, match="parametrization"):
        W.width_mlp(40, 64, 10, "ntk")
    with pytest.raises(ValueError, match="base_width"):
        W.width_mlp(40, 64, 10, "mup", base_width=128)


def test_width_figure_draws_every_width_in_both_panels():
    res = _runs()[SEEDS[0]]
    fig = W.width_figure(res)
    lines = [tr for tr in fig.data if tr.mode == "lines+markers"]
    assert len(lines) == 2 * len(res.widths)
    assert sum(bool(tr.showlegend) for tr in lines) == len(res.widths)  # one legend entry each
    assert fig.layout.legend.x is None and fig.layout.margin.t is None  # layout left to house
    assert "Plotly.newPlot" in plots.to_html(fig)
    nums = W.width_numbers(res)
    assert nums["init_width_n0"] == str(res.widths[0]) and float(nums["init_width_sp_factor"]) > 1
    page = Fa.width_page_numbers(res)  # the page's glue: the trend in the page's words
    assert page["init_width_mup_trend"] == Fa.width_trend(res.curves("mup").best_log2_lr)
    assert page["init_width_lr_hi"] == f"{2 ** res.log2_lrs[-1]:.3g}"


@known_answer(W.coordinate_check,
              how="Adam's first step moves every weight by about lr (Yang et al.): a layer's "
                  "change grows with its fan-in, flat for the first layer (40 inputs) and "
                  "about proportional to the width for the hidden layers")
def test_coordinate_check_grows_with_the_fan_in():
    r = W.coordinate_check(widths=(64, 512), depth=3, n_inputs=128, seed=0)
    grow = np.array(r["change"][1]) / np.array(r["change"][0])
    assert 0.5 < grow[0] < 2.0 and np.all(grow[1:] > 3.0), grow


def test_adams_first_step_is_full_rank_but_its_spectral_norm_is_of_order_a_n():
    """Section 5's spectral-condition paragraph (referee: Adam's low rank): the gradient of a
    hidden n x n layer has rank at most the batch, but Adam's first step (the gradient's sign,
    entrywise) has nearly full rank; its energy sits in a few directions (stable rank
    ||dW||_F^2 / ||dW||_2^2 small), so its spectral norm is of order its Frobenius norm a n."""
    import torch
    import torch.nn.functional as F
    from dynamics.initialization.science import init_mlp
    torch.manual_seed(0)
    batch, a = 32, 1e-3
    for n in (128, 512):
        model = init_mlp(40, n, 3, "relu", "he")
        W = [p for p in model.parameters() if p.dim() == 2][1]  # a hidden n x n layer
        W0 = W.detach().clone()
        opt = torch.optim.Adam(model.parameters(), lr=a)
        F.cross_entropy(model(torch.randn(batch, 40)), torch.randint(0, 10, (batch,))).backward()
        g = W.grad.detach().clone()
        opt.step()
        d = W.detach() - W0
        s, sg = torch.linalg.svdvals(d), torch.linalg.svdvals(g)
        assert int((sg > 1e-4 * sg[0]).sum()) <= batch  # the gradient: low rank
        assert int((s > 1e-4 * s[0]).sum()) > n // 2  # Adam's step: not low rank
        assert float((s ** 2).sum() / s[0] ** 2) < 6  # but a small stable rank
        assert 0.3 < float(s[0] / (a * n)) <= 1.0  # spectral norm of order a n


@known_answer(Fa.width_trend, how="constructed best rates (log2, in grid steps): moves of a full step "
              "at every doubling, moves under TREND_TOL that the parabola cannot resolve (the "
              "referee's seed-0 μP rates, -6.858, -6.749, -6.085, -5.983), no move, and a "
              "reversal; each wording is known from the differences by hand")
def test_the_trend_words_count_only_moves_the_grid_resolves():
    assert Fa.width_trend([-7, -6, -5, -4]) == "rises at every doubling of the width"
    assert Fa.width_trend([-4, -5, -6]) == "falls at every doubling of the width"
    said = Fa.width_trend([-6.858, -6.749, -6.085, -5.983])  # +0.11, +0.66, +0.10
    assert said == (f"rises with the width, though at 2 of the 3 doublings by less than "
                    f"{Fa.TREND_TOL:g} grid steps")
    assert Fa.width_trend([-5.0, -5.1, -5.05]).startswith("barely moves")
    assert Fa.width_trend([-5, -4, -5]) == "moves up and down as the width doubles"
    assert Fa.width_trend([-5, -4.9, -4]).startswith("rises with the width, though at 1 of the 2")
    # a fall the grid cannot resolve, then a full step up: a rise
    assert Fa.width_trend([-5, -5.2, -4]).startswith("rises with the width, though at 1 of the 2")
