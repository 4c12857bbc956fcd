"""dynamics.weight_decay.window: AdamW's averaging window (section 3). The fit, the settings,
one tiny run's bookkeeping and the figure; the claims on seeds 0-2 are in
test_experiments.py, beside the chapter's other live claims."""
import math

import numpy as np
import pytest

from known import known_answer

from dynamics.weight_decay import window as W


@known_answer(W.fit_decay_time, how="exp(-t / 80) and exp(-t / 50) sampled: the time constant "
                                    "is 80 and 50; a constant curve never decays (inf)")
def test_fit_decay_time_recovers_a_known_time_constant():
    t = np.arange(0, 400, 5)
    assert W.fit_decay_time(t, np.exp(-t / 80.0), 160) == pytest.approx(80.0, rel=1e-6)
    # only the points up to the horizon, and up to the first non-positive value, count
    kept = np.where(t <= 100, np.exp(-t / 50.0), -1.0)
    assert W.fit_decay_time(t, kept, 1000) == pytest.approx(50.0, rel=1e-6)
    assert W.fit_decay_time(t, np.ones_like(t, float), 100) == math.inf
    assert math.isnan(W.fit_decay_time(t, np.exp(-t / 80.0), 5))


def test_window_settings():
    s = W.window_settings(4e-3, 3.2e-2, 4)
    taus = [x["tau"] for x in s]
    assert taus[:4] == pytest.approx([31.25, 62.5, 125, 250])
    assert s[4]["lr"] == pytest.approx(1e-3) and s[4]["tau"] == pytest.approx(62.5)  # the twin
    assert s[-1]["weight_decay"] == 0 and s[-1]["tau"] == math.inf  # the control
    for bad in (dict(lr=0, product=1e-2, n_products=3), dict(lr=1e-3, product=-1, n_products=3),
                dict(lr=1e-3, product=1e-2, n_products=1)):
        with pytest.raises(ValueError, match="n_products"):
            W.window_settings(**bad)
    cfg = W.WindowConfig.for_profile("cpu")
    assert cfg.after() == math.ceil(2 * 250)


TINY = W.WindowConfig(product=0.1, n_products=2, kick_step=20, width=8, n_train=200,
                      batch_size=32)


def test_run_window_bookkeeping():
    r = W.run_window(TINY, seed=0)
    assert isinstance(r, W.Window) and all(isinstance(s, W.WindowSetting) for s in r.settings)
    assert r.kick_step == 20 and r.steps[0] == 0 and not r.stopped
    kept = np.asarray(r.kept)
    assert kept.shape == (len(TINY.settings()), len(r.steps))
    np.testing.assert_allclose(kept[:, 0], 1.0, rtol=1e-5)  # the whole kick, at the kick
    assert r.steps[-1] == TINY.after()
    again = W.run_window(TINY, seed=0)
    np.testing.assert_array_equal(kept, again.kept)  # deterministic
    for s in r.settings:
        assert s.horizon == pytest.approx(2 * (s.tau if s.weight_decay else 20.0))
    rows = W.window_rows(r)
    assert len(rows) == len(r.settings) and rows[-1]["1/(ηλ)"] is None
    numbers = W.window_numbers(r)
    assert numbers["wd_win_kick"] == "20" and numbers["wd_win_twins"].count(" and ") == 1


def test_window_figure():
    r = W.run_window(TINY, seed=1)
    fig = W.window_figure(r)
    names = [t.name for t in fig.data]
    assert "τ = 1/(ηλ)" in names and any("control" in (n or "") for n in names)
    assert fig.layout.xaxis2.type == "log" and fig.layout.yaxis2.type == "log"
    assert fig.layout.yaxis.type == "log"
    # one measured point per setting with decay, on the right panel
    points = [t for t in fig.data if t.mode == "markers"]
    assert len(points) == sum(s.weight_decay > 0 for s in r.settings)
