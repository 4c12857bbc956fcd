"""dynamics.schedules.panels: the live panels driven headlessly (built, a bad value refused,
clicked, the status saying what the run found)."""
import pytest

from dynamics import schedules as S


@pytest.mark.parametrize("make", [S.anytime_panel, S.cooldown_panel])
def test_panels_build_and_refuse_bad_values(make):
    panel = make("smoke", seed=0)
    assert panel.controls and panel.above == "live"
    name = next(iter(panel.controls))
    with pytest.raises(ValueError):
        panel.set(**{name: 10 ** 9})


def test_cooldown_panel_runs_and_reports_the_ratio():
    panel = S.cooldown_panel("smoke", seed=0)
    panel.set(lr=0.01, cooldown=0.3)
    drawn = []
    panel.show_figure = lambda fig, draw=panel.show_figure: (drawn.append(fig), draw(fig))[1]
    panel.click()
    assert panel.figure is not None and "the cosine's" in panel.status.value
    assert len(drawn) == 2  # the shortest budget first, alone
    assert max(drawn[0].data[0].x) < max(drawn[1].data[0].x)


def test_panels_say_their_work_and_it_grows_with_what_it_names():
    anytime, cooldown = S.anytime_panel("smoke", seed=0), S.cooldown_panel("smoke", seed=0)
    a = lambda **kw: anytime.work(**{**anytime.values, **kw})  # noqa: E731
    assert a(replicas=64) > a() and a(sigma=0.9) == a()
    c = lambda **kw: cooldown.work(**{**cooldown.values, **kw})  # noqa: E731
    assert c(steps=2 * cooldown.values["steps"]) == 2 * c() and c(lr=0.04) == c()


def test_anytime_panel_draws_the_exact_risk_first_and_shows_the_constant_rate_stall():
    """The first figure is the exact risk (no simulation yet); at the defaults the constant
    rate's last iterate stalls while its average keeps falling (section 1's first point)."""
    panel = S.anytime_panel("smoke", seed=0)
    drawn = []
    panel.show_figure = lambda fig, draw=panel.show_figure: (drawn.append(fig), draw(fig))[1]
    fig = panel.click()
    assert len(drawn) == 3 and all("exact" in t.name for t in drawn[0].data)
    assert panel.status.value.startswith("done")
    y = {t.name: list(t.y) for t in fig.data}
    last, avg = y["constant, last iterate, exact"], y["constant + averaging, exact"]
    assert last[-1] / last[0] > 0.5 and avg[-1] / avg[0] < 0.5 * last[-1] / last[0]
