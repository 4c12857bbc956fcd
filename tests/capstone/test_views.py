"""dynamics.capstone.views: the figures build from runs and from the precomputed payload, the
panel runs headlessly, and the published claims rest on data/."""
import pytest

from dynamics import plots
from dynamics.capstone import experiments as E
from dynamics.capstone import views as V
from dynamics.capstone.science import OneConfig

TINY = OneConfig(p=11, train_frac=0.8, width=16, steps=30, n_evals=10, rewind_step=3)


@pytest.fixture(scope="module")
def tiny():
    return E.run(TINY, 0)


def test_timeline_figure_has_six_panels_on_one_axis(tiny):
    fig = V.timeline_figure(tiny, title="t")
    axes = {tr.yaxis for tr in fig.data}
    assert len(axes) == 6
    names = {tr.name for tr in fig.data}
    assert {"train accuracy", "test accuracy", "weight RMS", "√(η/2λ)", "NC1",
            "rank of the update", "Fourier concentration"} <= names
    tl = V.timeline_of(tiny)
    assert list(V.timeline_figure(tl).data[0].y) == tl["train_acc"]


def test_question_figures(tiny):
    rows = [dict(init_scale=s, fit_step=10, grok_step=g, seed=0) for s, g in ((0.5, 100), (2, None))]
    assert len(V.init_figure(rows).data) == 4
    clock = [dict(lr=lr, tau=1 / lr, grok_step=g) for lr, g in ((1e-2, 200), (2e-2, 90), (3e-2, 70), (5e-2, None))]
    fig = V.clock_figure(clock)
    assert any("slope" in (tr.name or "") for tr in fig.data)
    opt = dict(adamw=dict(best=tiny), muon=dict(best=tiny))
    assert len(V.optimizer_figure(opt).data) == 4
    lot = E.lottery(tiny)
    assert len(V.lottery_figure(lot).data) == 2 * len(lot["arms"])


def test_grid_slider_and_published_claims():
    from dynamics import results
    payload, _ = results.load(V.GRID)
    fig = V.grid_slider(payload)
    assert fig.layout.sliders and len(fig.layout.sliders[0].steps) == len(
        {(r["optimizer"], r["init_scale"]) for r in payload["rows"]})
    rows = V.published_claims()
    assert rows and not plots.failed_claims(rows)
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)


def test_timeline_panel_runs_and_refuses():
    panel = V.timeline_panel("smoke", seed=1)
    assert panel.above == "live" and "seed 1" in panel.note
    panel.set(init_scale=1.0, weight_decay=1.0)
    fig = panel.click()
    assert fig is not None and panel.runs == 1 and panel.status.value.startswith("fit at step")
    with pytest.raises(ValueError):
        panel.set(init_scale=-1.0)


def test_lottery_sentence_says_what_the_arms_did():
    arm = lambda fit, grok: dict(fit_step=fit, grok_step=grok)  # noqa: E731
    lot = dict(arms={"dense": arm(10, 100), "a": arm(20, None), "b": arm(30, None)})
    assert "although each fits" in V.lottery_sentence(lot)
    lot["arms"]["b"] = arm(None, None)
    assert "not all of them even fit" in V.lottery_sentence(lot)
    lot["arms"]["a"] = arm(20, 50)
    assert "a at step 50" in V.lottery_sentence(lot) and "sooner than the dense run: a" in V.lottery_sentence(lot)


def test_the_lazy_row_fails_when_the_scales_do_not_separate_beyond_the_seeds():
    def rows(t):  # t[scale] = grok steps on seeds 0, 1, 2
        return [dict(init_scale=sc, seed=s, grok_step=g) for sc, gs in t.items()
                for s, g in enumerate(gs)]

    ok = V._lazy_row(rows({0.5: [300, 320, 310], 1.0: [400, 410, 390], 4.0: [800, 700, None]}),
                     "test", 1000)
    assert ok["reproduced"] == "yes" and ok["seeds"] == [0, 1, 2]
    # larger on every seed, but by less than the seeds differ at scale 1: no
    noisy = V._lazy_row(rows({0.5: [300, 320, 310], 1.0: [300, 600, 450], 4.0: [500, 520, 510]}),
                        "test", 1000)
    assert noisy["reproduced"] == "no"
    # the opposite direction: no
    assert V._lazy_row(rows({0.5: [600, 620, 610], 1.0: [400, 410, 390], 4.0: [300, 320, 310]}),
                       "test", 1000)["reproduced"] == "no"
    # one seed against: partly, and the row says on how many it holds
    part = V._lazy_row(rows({0.5: [300, 320, 310], 1.0: [400, 410, 390], 4.0: [800, 700, 300]}),
                       "test", 1000)
    assert part["reproduced"] == "partly" and "holds on 2 of 3 seeds" in part["measured here"]
    assert "None" not in part["measured here"]
