"""Lottery-ticket figures, tables, precomputed sliders, the claims rows (claims.py), and the live
panels (constructed, set, clicked, stopped, refused values, a diverging setting, the seed)."""
import json

import numpy as np
import pytest

from dynamics import lottery as L
from dynamics import plots, results

from stopping import stop_mid_run


@pytest.fixture(scope="module")
def small():
    cfg = L.LotteryConfig.for_profile("smoke", dataset="digits", width=32, steps=40, rounds=2,
                                      evals=4, batch_size=64)
    d = L.load_data(cfg)
    res = L.run_imp(cfg, seeds=[0], data=d, bars=False)
    pai = L.run_pai(cfg, res, round=2, data=d, bars=False)
    lmc = L.run_lmc(cfg, (0, 5), seed=0, data=d, n_points=3, bars=False)
    return cfg, d, res, pai, lmc


def _figures(small):
    _, _, res, pai, lmc = small
    return [L.imp_figure(res), L.speed_figure(res), L.pai_figure(pai), L.lmc_figure(lmc),
            L.barrier_figure({"a": lmc}), L.cost_figure(res, pai)]


def test_figures_tables_and_sliders_build(small):
    _, _, res, pai, lmc = small
    imp, speed, pai_fig, lmc_fig, bar, cost = _figures(small)
    assert len(imp.data) == 4 and len(speed.data) == 3
    assert len(pai_fig.data) == 3 and len(lmc_fig.data) == 2 and len(bar.data) == 1
    assert len(cost.data) == 1
    assert {"snip", "synflow", "magnitude", "imp"} == set(pai["acc"])
    assert len(L.figures.cost_rows(res, pai)) == 5 and len(L.figures.layer_rows(pai)) == 4
    payload = dict(imp={"a": res.to_dict(), "b": res.to_dict()}, pai=[pai, pai], lmc={"1e-3": lmc})
    payload = json.loads(json.dumps(results._plain(payload)))  # as loaded from data/
    assert len(L.imp_slider(payload).layout.sliders[0].steps) == 2
    assert len(L.pai_slider(payload).layout.sliders[0].steps) == 2
    assert len(L.lmc_slider(payload).layout.sliders[0].steps) == 1


def test_figures_leave_layout_to_the_house_and_keep_titles_short(small):
    """Builders place no legend, slider or margin themselves; titles fit on one line of the
    column; the house layout then renders each figure."""
    for fig in _figures(small):
        lay = fig.layout
        assert lay.legend.x is None and lay.legend.y is None and lay.margin.t is None
        assert len(lay.title.text or "") <= 60, lay.title.text
        assert "dyn-" in plots.to_html(fig)
    for fig in (L.imp_slider({"imp": {"a": small[2].to_dict()}}),):
        assert fig.layout.sliders[0].y is None


def test_log_axes_get_readable_ticks_through_the_renderer(small):
    """The notebook renders a figure from its dict (where plotly turns numpy arrays into
    base64 blocks): the house layout must still find the data and tick the log axes."""
    import plotly.graph_objects as go

    _, _, res, _, lmc = small
    for fig in (L.imp_figure(res), L.speed_figure(res), L.barrier_figure({"a": lmc})):
        ticks = plots.house(go.Figure(fig.to_dict())).layout.xaxis.tickvals
        assert ticks is not None and len(ticks) >= 2, fig.layout.title.text


def test_tables_have_units_and_no_none(small):
    _, _, res, pai, _ = small
    rows = L.figures.cost_rows(res, pai)
    assert {"test accuracy (%)", "wall time (s)"} <= set(rows[0])
    html = L.cost_table(res, pai).data
    assert "None" not in html and "nan" not in html.lower() and ">74.0<" in html
    assert "None" not in L.layer_table(pai).data
    layers = L.figures.layer_rows(pai)
    assert all(k == "mask" or k.endswith("kept (%)") for k in layers[0])


def test_claims_table_rows_and_verdicts(small):
    _, _, res, pai, lmc = small
    rows = L.page_claims(res, pai, {"Adam lr 0.002": {0: {**lmc, "rewind_steps": [0]}}, "hot": {0: lmc}},
                         published=True)
    assert all(set(r) == {"claim", "paper", "measured here", "reproduced", "asserted", "control",
                          "window", "seeds"} for r in rows)
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)
    # one claim, one row: this run and the precomputed data are settings of the same row
    texts = [r["claim"] for r in rows]
    assert len(texts) == len(set(texts)) == len(L.claims.CLAIMS), texts
    for r in rows:
        if r["claim"] in {c[0] for c in L.claims.CLAIMS.values()} and not r["claim"].startswith(
                ("At a larger", "Rewinding")):
            assert "this run" in r["measured here"] and "precomputed" in r["measured here"], r
    pai_row = next(r for r in rows if r["claim"].startswith("Pruning at init"))
    assert "21.7%" in pai_row["measured here"] and "9.2%" in pai_row["measured here"]
    # shown, not asserted: the learning-rate rows (one seed) and the shuffling row
    assert not any(r["asserted"] for r in rows if "Liu et al." in r["paper"] or "Rewinding" in r["claim"])
    assert "None" not in plots.claims_table(rows).data
    # this run alone (one seed) asserts nothing
    assert not any(r["asserted"] for r in L.page_claims(res, pai))


def test_a_row_over_settings_holds_only_if_every_setting_holds():
    """The one combiner: a claim's row is "yes" when every (setting, seed) check holds, "no"
    when none does, "partly" naming the failures between; a setting that cannot tell is shown
    but not judged; the row is asserted when a judging setting is."""
    s = L.claims._setting
    yes = s("A", "a", {0: True, 1: True, 2: True}, True, [0, 1, 2])
    one_no = s("B", "b", {0: False}, False, [0])
    cannot = s("C", "too short to tell", None, True, [0])
    assert L.claims._row("match", [yes])["reproduced"] == "yes"
    row = L.claims._row("match", [yes, one_no])
    assert row["reproduced"] == "partly" and "does not hold on B, seed 0" in row["measured here"]
    assert row["asserted"] and "A: a" in row["measured here"] and "B: b" in row["measured here"]
    assert L.claims._row("match", [one_no])["reproduced"] == "no"
    row = L.claims._row("match", [yes, cannot])
    assert row["reproduced"] == "yes" and "too short" in row["measured here"]
    row = L.claims._row("speed", [cannot])
    assert row["reproduced"] == "not at this scale" and not row["asserted"]


def test_claims_take_no_private_helpers_and_compute_no_verdict_by_hand():
    """Issue 38, within this theme: claims read figures' public names only, and every verdict
    comes from the one combiner (plots.judged, called by _row and in the fine-tuning rows)."""
    import inspect
    import re

    for module in (L.claims, L.finetune):
        src = inspect.getsource(module)
        for names in re.findall(r"from \.figures import ([^\n]+)", src):
            assert not any(n.strip().startswith("_") for n in names.split(",")), names
        assert "across_seeds" not in src and not re.search(r'"(yes|partly|no)" if', src)
    assert inspect.getsource(L.claims).count("plots.judged(") == 1


def test_numbers_for_the_prose_come_from_the_runs_and_data(small):
    _, _, res, _, lmc = small
    runs = L.imp_runs(results.load("lottery_imp")[0])
    main = next(iter(runs.values()))
    speed = L.speed_numbers(main)
    stop = np.nanmean(main.stop_step["ticket"], axis=0)
    assert speed["speed_dense"] == int(stop[0]) and speed["speed_steps"] == main.config["steps"]
    assert speed["speed_range"] == "200 to 290"  # the cpu data's tickets between 2/3 and 1/7
    # this file predates the validation split: the page names the loss it early-stopped on
    assert speed["speed_loss"] == "test loss" and speed["speed_dense_acc"] == "not recorded"
    pai = L.pai_numbers(results.load("lottery_pai")[0])
    assert pai["pai_shuffle"] == "3.7 to 5.2"  # the slip: the prose had "4 to 5"
    assert pai["pai_shuffle_verdict"] == "partly"  # fails on seed 0 at a fifth of the weights
    assert pai["pai_ticket"] > 10
    rew = L.rewind_numbers(runs, results.load("lottery_lmc")[0])
    assert rew["rewind_k"] == 50 and 1 < rew["rewind_gap"] < 4 and rew["lmc_first"] > 5
    # the cpu data (one seed): +2 points, short of the row's 3 ("partly" was a softer "no")
    assert rew["rewind_verdict"] == "no"
    # the cpu data's three seeds at Adam lr 0.01: stable from k = 50, 100, 100 on; from θ_50
    # on one seed only (the barrier dips below 2 points at k = 25 on seed 2 and rises again)
    assert rew["lmc_seeds"] == 3 and rew["lmc_stable_k"] == "50, 100 and 100 (seeds 0, 1 and 2)"
    assert rew["lmc_rewind_stable"] == "1 of 3" and rew["lmc_rewind"] > 2
    both = L.lmc_numbers({**lmc, "rewind_steps": [0]}, lmc)
    assert both["calm_barrier"] == 100 * lmc["barrier"][0] and both["hot_k_last"] == 5


def test_published_claims_are_rows_on_the_precomputed_data():
    rows = L.claims.published_claims()
    assert all(r["reproduced"] in plots.VERDICTS for r in rows)
    assert not plots.failed_claims(rows)
    assert sum(r["asserted"] for r in rows) >= 5
    texts = [r["claim"] for r in rows]
    assert len(texts) == len(set(texts)), texts  # one claim, one row
    stability = [r for r in rows if r["claim"].startswith(("A small network is stable",
                                                           "Where training is unstable"))]
    assert [(r["reproduced"], r["asserted"], r["seeds"]) for r in stability] == [
        ("yes", True, [0, 1, 2])] * 2
    assert all("median" in r["measured here"] for r in stability)  # the seeds' spread shown


def test_published_stability_rows_say_no_when_a_seed_is_contradicted():
    """The published stability rows read every seed: one seed's barrier from θ₀ at the
    chapter's learning rate above the criterion makes the row not "yes"; on every seed, "no"."""
    payload = results.load("lottery_lmc")[0]
    lo = min(payload["lmc"], key=float)
    calm = L.claims.lmc_seeds(payload, lo)
    hot = L.claims.lmc_seeds(payload, max(payload["lmc"], key=float))
    high = {s: dict(v, rewind_steps=[0], barrier={**v["barrier"], "0": 0.05})
            for s, v in calm.items()}
    one = {**{s: dict(v, rewind_steps=[0]) for s, v in calm.items()}, 1: high[1]}
    assert L.claims.lmc_claims(("calm", one), ("hot", hot))[0]["reproduced"] == "partly"
    assert L.claims.lmc_claims(("calm", high), ("hot", hot))[0]["reproduced"] == "no"


# ----------------------------------------------------------------------------- panels

SMALL = dict(dataset="digits", width=16, steps=20, evals=2, batch_size=64)


@pytest.mark.parametrize("make,values", [
    (L.imp_panel, dict(rounds=1, prune_fraction=0.5, rewind_step=2, scope="layer", lr=0.01)),
    (L.pai_panel, dict(sparsity=0.9, method="snip")),
    (L.lmc_panel, dict(lr=0.05, rewind_step=3, optimizer="momentum")),
])
def test_panels_run_and_say_where_the_figure_above_came_from(make, values):
    panel = make("smoke", **SMALL)
    assert isinstance(panel.above, dict) and panel.above["profile"] == "cpu"
    assert "computed in advance" in panel.static_note()
    panel.set(**values).click()
    assert panel.status.value.startswith("done"), panel.status.value
    assert panel.figure is not None and len(panel.figure.data) >= 2
    assert panel.progress.value == 1.0
    assert make("smoke", above="live", **SMALL).above == "live"


@pytest.mark.parametrize("make,bad", [
    (L.imp_panel, dict(prune_fraction=0.95)), (L.imp_panel, dict(rounds=21)),
    (L.imp_panel, dict(lr=-0.1)), (L.pai_panel, dict(sparsity=1.0)),
    (L.lmc_panel, dict(rewind_step=10_000)), (L.lmc_panel, dict(optimizer="adamw")),
])
def test_panels_refuse_out_of_range_values(make, bad):
    panel = make("smoke", **SMALL)
    with pytest.raises(ValueError):
        panel.set(**bad)


@pytest.mark.parametrize("make,values", [
    (L.imp_panel, dict(lr=10.0, rewind_step=0)),
    (L.lmc_panel, dict(lr=10.0, rewind_step=15, optimizer="sgd")),
])
def test_a_diverging_setting_is_reported_and_the_panel_keeps_working(make, values):
    """SGD at learning rate 10 diverges within 20 steps on this MLP: the panel says so,
    and a sane setting then runs."""
    panel = make("smoke", seed=0, width=200, n_train=500, n_test=200, steps=20, evals=2,
                 rounds=2, optimizer="sgd")
    panel.set(**values).click()
    assert panel.status.value.startswith("diverged"), panel.status.value
    assert not panel.button.disabled
    panel.set(lr=0.01).click()
    assert panel.status.value.startswith("done"), panel.status.value


def test_stop_stops_a_running_panel():
    panel = L.imp_panel("smoke", seed=0, **{**SMALL, "steps": 200, "evals": 20})
    panel.set(rounds=8)
    stop_mid_run(panel)  # pressed while the run waits at its first progress report
    assert panel.status.value.startswith("stopped"), panel.status.value
    assert not panel.button.disabled and panel.stop_button.disabled
    panel.set(rounds=1).click()  # and it runs again
    assert panel.status.value.startswith("done"), panel.status.value


def test_panels_honour_the_seed(monkeypatch):
    def accuracies(seed):
        panel = L.pai_panel("smoke", seed=seed, **SMALL)
        panel.set(sparsity=0.5, method="magnitude").click()
        return [tr.y for tr in panel.figure.data if tr.type == "bar"]

    assert np.allclose(accuracies(3), accuracies(3))
    assert not np.allclose(accuracies(3), accuracies(4))
    monkeypatch.setenv("DYNAMICS_SEED", "4")
    panel = L.pai_panel("smoke", **SMALL)
    panel.set(sparsity=0.5, method="magnitude").click()
    assert np.allclose([tr.y for tr in panel.figure.data if tr.type == "bar"], accuracies(4))


def test_panels_draw_no_progress_bars(capsys):
    panel = L.lmc_panel("smoke", **SMALL)
    panel.set(rewind_step=2).click()
    err = capsys.readouterr().err
    assert "it/s" not in err and "%|" not in err
