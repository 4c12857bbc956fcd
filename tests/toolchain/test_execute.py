"""dynamics_toolchain.execute: the book's chapters executed side by side before Sphinx reads
them, and handed to myst-nb through its jupyter-cache. Known answers: the worker count from
constructed cores and threads, the order from constructed timings, and two made-up notebooks
(one that prints 1 + 1, one that raises) executed for real: the first is cached with its
output where myst-nb looks it up, the second is not cached, so myst-nb runs it again and
reports its error."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from dynamics_toolchain import execute


def test_the_worker_count_follows_the_cores_each_kernel_leaves(monkeypatch):
    assert execute.workers(8, cores=2, threads=1) == 2
    assert execute.workers(8, cores=2, threads=2) == 1
    assert execute.workers(8, cores=16, threads=4) == 4
    assert execute.workers(1, cores=16, threads=1) == 1  # never more than the notebooks
    monkeypatch.setenv("DYNAMICS_THREADS", "2")  # the kernels' threads, read by runtime
    assert execute.workers(8, cores=2) == 1


def test_the_longest_chapter_goes_first():
    paths = [Path(f"chapters/{n}.ipynb") for n in ("a", "b", "c", "new")]
    order = execute.longest_first(paths, {"a": 30.0, "b": 290.0, "c": 90.0})
    assert [p.stem for p in order] == ["new", "b", "c", "a"]  # unmeasured first: it may be long


def _notebook(path: Path, code: str) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def test_executed_notebooks_reach_myst_nbs_cache_and_a_failure_does_not(tmp_path, monkeypatch):
    from jupyter_cache import get_cache

    good = _notebook(tmp_path / "good.ipynb", "print(1 + 1)")
    bad = _notebook(tmp_path / "bad.ipynb", "raise RuntimeError('planted')")
    config = SimpleNamespace(execution_mode="cache", execution_cache_path=str(tmp_path / "cache"),
                             execution_timeout=120, execution_allow_errors=False)
    env = SimpleNamespace(mystnb_config=config, doc2path=lambda d: str(tmp_path / f"{d}.ipynb"))
    app = SimpleNamespace(outdir=str(tmp_path / "_build" / "html"))
    execute.ahead(app, env, ["good", "bad", "intro"])  # intro: no such notebook, not one
    cache = get_cache(str(tmp_path / "cache"))
    record = cache.match_cache_notebook(nbformat.read(good, as_version=4))  # as myst-nb asks
    _, merged = cache.merge_match_into_notebook(nbformat.read(good, as_version=4))
    assert record is not None and merged.cells[0].outputs[0]["text"] == "2\n"
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(bad, as_version=4))
    # another mode than cache: nothing is executed ahead
    config.execution_mode, config.execution_cache_path = "force", str(tmp_path / "other")
    execute.ahead(app, env, ["good"])
    assert not (tmp_path / "other").exists()
