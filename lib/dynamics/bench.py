"""Benchmarks that print their figures.

    python -m dynamics.bench                # each chapter notebook's wall time (smoke, cpu) + book build
    python -m dynamics.bench --profiles smoke --no-book
    python -m dynamics.bench sweep          # batched vs sequential training speed-up
    python -m dynamics.bench grokking       # any theme module with a bench() function

A named benchmark calls ``bench()`` in ``dynamics.<name>`` (or in the chapter's theme module),
which prints its own lines.
"""
from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import CHAPTERS
from .results import ROOT


def notebook_time(path: Path, profile: str, timeout: int = 1800) -> float:
    """Wall seconds to execute one notebook in a fresh kernel with ``profile``."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    env_before = dict(os.environ)
    os.environ.update(DYNAMICS_PROFILE=profile, DYNAMICS_PROGRESS="0")
    try:
        start = time.perf_counter()
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        return time.perf_counter() - start
    finally:
        os.environ.clear()
        os.environ.update(env_before)


from .book import BOOK_COPY_IGNORE  # noqa: E402,F401 (tests/test_book.py imports it from here)


def book_time(profile: str = "smoke") -> float:
    """Wall seconds of a full ``jupyter-book build`` (executing every chapter) in a copy."""
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "book"
        shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns(*BOOK_COPY_IGNORE))
        env = dict(os.environ, DYNAMICS_PROFILE=profile)
        start = time.perf_counter()
        build = subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "build", str(dst),
                                "-W", "-n", "--keep-going"], env=env, capture_output=True, text=True)
        took = time.perf_counter() - start
        if build.returncode:
            raise RuntimeError(f"book build failed (exit {build.returncode}):\n"
                               + (build.stdout + build.stderr)[-4000:])
        return took


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", help="sweep, or a chapter / theme module name")
    parser.add_argument("--profiles", default="smoke,cpu", help="profiles for notebook timings")
    parser.add_argument("--no-book", action="store_true", help="skip the whole-book build time")
    args = parser.parse_args(argv)
    if args.name:
        module = CHAPTERS.get(args.name, args.name)
        try:
            mod = importlib.import_module(f"dynamics.{module}")
        except ModuleNotFoundError:
            parser.error(f"no benchmark {args.name!r}")
        if not hasattr(mod, "bench"):
            parser.error(f"dynamics.{module} has no bench()")
        mod.bench()
        return 0
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    for chapter in CHAPTERS:
        path = ROOT / "chapters" / f"{chapter}.ipynb"
        if not path.exists():
            continue
        for profile in profiles:
            print(f"notebook {chapter}: {notebook_time(path, profile):.1f} s ({profile})", flush=True)
    if not args.no_book:
        print(f"book build: {book_time('smoke'):.1f} s (smoke, all chapters executed)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
