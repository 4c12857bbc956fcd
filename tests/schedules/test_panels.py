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
    panel.click()
    assert panel.figure is not None and "the cosine's" in panel.status.value
