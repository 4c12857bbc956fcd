"""The chapters executed side by side when the book is built (issue 43, item 4).

Each chapter's kernel trains on one torch thread (``DYNAMICS_THREADS``, default 1: the book's
models are small), so a build that executes the chapters one after another, as myst-nb does,
leaves every core but one idle. Before Sphinx reads the pages, :func:`ahead` executes every
notebook it is about to read in a pool of :func:`workers` processes, the longest first (by
``data/live_cost.csv``), each in a fresh kernel in its own folder, exactly as myst-nb would
(``jupyter_cache``'s ``single_nb_execution``, the same timeout and error setting), and puts
the executed notebooks in the build's jupyter-cache. myst-nb (``execute_notebooks: cache`` in
``_config.yml``) then finds each one there and renders it.

It keeps the meaning of a forced build: every notebook Sphinx reads is executed in this
build, with the library as it is now (a cache keyed on the notebook's code alone would serve
outputs made by an older library). A notebook that fails here is not cached: myst-nb executes
it again itself and reports the failure as it always has.

How many run at once: the CPU cores, divided by the torch threads each kernel uses
(``DYNAMICS_THREADS``; set it to the cores to run the notebooks one after another).
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path


def workers(n_notebooks: int, cores: int | None = None, threads: int | None = None) -> int:
    """How many notebooks to execute at once: the cores each kernel's torch threads
    (``DYNAMICS_THREADS``, :func:`dynamics.runtime.get_threads`) leave room for; never more
    than there are notebooks."""
    from dynamics.runtime import get_threads

    cores = cores if cores is not None else (os.cpu_count() or 1)
    threads = threads if threads is not None else get_threads()
    return max(1, min(cores // max(1, threads), n_notebooks))


def longest_first(paths: list[Path], seconds: dict[str, float]) -> list[Path]:
    """``paths`` ordered by their chapters' measured seconds, longest first (a chapter with no
    measurement goes first: it may be the longest), so that a pool's last job is a short one."""
    return sorted(paths, key=lambda p: (-seconds.get(p.stem, float("inf")), p.stem))


def _measured_seconds() -> dict[str, float]:
    """Each chapter's measured cpu-profile seconds (``data/live_cost.csv``), or nothing."""
    try:
        from dynamics.book import read_live_cost
        from dynamics.runtime import get_profile

        profile = get_profile()
        return {r["chapter"]: float(r["seconds"]) for r in read_live_cost()
                if r["profile"] == profile}
    except (OSError, ValueError, KeyError, ImportError):
        return {}


def run_one(path: str, cwd: str, timeout: int | None, allow_errors: bool) -> tuple[str, float, str | None]:
    """Execute one notebook in a fresh kernel (a pool's job): (the executed notebook as JSON,
    seconds, the error's traceback or None)."""
    import nbformat
    from jupyter_cache.executors.utils import single_nb_execution

    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(nb, cwd=cwd, timeout=timeout, allow_errors=allow_errors,
                                 meta_override=True)
    return nbformat.writes(nb), float(result.time), result.exc_string


def ahead(app, env, docnames) -> None:
    """Sphinx ``env-before-read-docs``: execute the notebooks among ``docnames`` side by side
    and cache them where myst-nb will look (only when myst-nb runs in cache mode)."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    config = getattr(env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    paths = [Path(env.doc2path(d)) for d in docnames]
    paths = [p for p in paths if p.suffix == ".ipynb"]
    if not paths:
        return
    n = workers(len(paths))
    cache_path = config.execution_cache_path or Path(app.outdir).parent / ".jupyter_cache"
    cache = get_cache(str(Path(cache_path).resolve()))
    order = longest_first(paths, _measured_seconds())
    log.info(f"[dynamics] executing {len(order)} notebooks, {n} at a time: "
             + ", ".join(p.stem for p in order))
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn")) as pool:
        jobs = {pool.submit(run_one, str(p), str(p.parent), config.execution_timeout,
                            config.execution_allow_errors): p for p in order}
        for job in as_completed(jobs):
            p = jobs[job]
            try:
                text, seconds, error = job.result()
            except Exception as err:  # the pool itself failed: myst-nb executes it again
                log.warning(f"[dynamics] {p.name}: not executed ahead ({type(err).__name__}: {err}); "
                            "myst-nb will execute it")
                continue
            if error is not None:
                log.warning(f"[dynamics] {p.name} failed after {seconds:.0f} s; myst-nb will "
                            "execute it again and report the error")
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(text, as_version=4), str(p),
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            log.info(f"[dynamics] {p.name} executed in {seconds:.0f} s")
    log.info(f"[dynamics] {len(order)} notebooks executed in {time.perf_counter() - start:.0f} s "
             f"({n} at a time)")
