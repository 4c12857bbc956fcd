"""Fixtures the operations' tests share."""
import pytest


@pytest.fixture
def out(tmp_path, monkeypatch):
    """A precompute writing its files and units into ``tmp_path`` (never into data/), without
    progress bars and outside a dry run."""
    monkeypatch.setenv("DYNAMICS_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("DYNAMICS_PROGRESS", "0")
    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    monkeypatch.delenv("DYNAMICS_UNITS_DIR", raising=False)
    return tmp_path
