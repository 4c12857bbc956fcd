"""dynamics.progress: one context that every run reports into and that carries Stop."""
import pytest

from dynamics import data, models, progress
from dynamics.train import Recipe, train


def test_parts_map_into_the_whole_and_stop_holds_for_all():
    seen = []
    with progress.reporting(lambda f: seen.append(f) or f >= 0.75) as job:
        with job.part(1, 4):
            assert not progress.current().report(0.5)      # 1/4 + 0.5/4
        with job.span_of(0.5, 0.5):
            assert progress.current().report(0.5)          # 0.75: stop
        assert job.stopped and progress.current() is job
    assert seen == [0.375, 0.75]
    assert not progress.current().stopped  # outside: a silent progress nobody listens to
    with pytest.raises(ValueError, match="n > 0"):
        job.part(0, 0)


def test_nested_jobs_report_to_the_outer_one():
    outer, inner = [], []
    with progress.reporting(outer.append) as job:
        with job.part(1, 2):
            with progress.reporting(inner.append) as nested:
                nested.report(0.5)
    assert inner == [0.5] and outer == [0.75]


def test_train_reports_and_stops():
    d = data.mnist1d(200, 50, seed=0, device="cpu")
    seen = []
    with progress.reporting(lambda f: seen.append(f) or f >= 0.5):
        h = train(models.MLP(d.input_dim, 8, 1, 10), d, Recipe(40, eval=10), bars=False)
    assert seen == [0.0, 0.25, 0.5] and h.steps == [0, 10, 20]


def test_a_job_opened_inside_a_stopped_one_is_stopped():
    """A stage that starts after Stop (a sweep opens its own job for its forecast) does not
    train until its first report: it is stopped from the start."""
    with progress.reporting(lambda f: f > 0.2) as outer:
        outer.report(0.5)
        with progress.reporting(lambda f: False) as inner:
            assert inner.stopped and inner.report(0.0)
    with progress.reporting(lambda f: False) as outer:
        with progress.reporting(lambda f: False) as inner:
            assert not inner.stopped and not outer.stopped
