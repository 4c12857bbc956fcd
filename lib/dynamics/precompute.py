"""Regenerate a chapter's precomputed results (the static figures of the book).

    python -m dynamics.precompute grokking --profile gpu
    python -m dynamics.precompute all --profile cpu

Each theme module that has figures computed in advance defines
``precompute(profile: str) -> list[pathlib.Path]``, which runs its experiments at that
profile's scale and writes ``data/<name>.json`` through :func:`dynamics.results.save`.
It runs under :func:`dynamics.setup` (the book's threads, device and matmul precision). As a
dry run (``DYNAMICS_DRY_RUN=2 DYNAMICS_RESULTS_DIR=/tmp/x``) it proves a profile end to end
in minutes without touching ``data/`` (``python -m dynamics.bench gpu`` does this per chapter).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from . import CHAPTERS
from .runtime import PROFILES, dry_run, get_profile, seed_everything, setup


def theme_module(chapter: str):
    """The theme module of a chapter, by notebook name or module name."""
    module = CHAPTERS.get(chapter, chapter if chapter in CHAPTERS.values() else None)
    if module is None:
        raise ValueError(f"unknown chapter {chapter!r}; choose one of {', '.join(CHAPTERS)}")
    return importlib.import_module(f"dynamics.{module}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics.precompute", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapter", help=f"one of {', '.join(CHAPTERS)}, or 'all'")
    parser.add_argument("--profile", default=None, choices=PROFILES,
                        help="scale of the experiments (default: $DYNAMICS_PROFILE or by hardware)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    profile = get_profile(args.profile)
    rt = setup(profile, args.seed, quiet=True)  # the book's threads, device and matmul precision
    print(f"{rt.report()}" + (f"; dry run: {dry_run()} steps per training" if dry_run() else ""))
    chapters = list(CHAPTERS) if args.chapter == "all" else [args.chapter]
    for chapter in chapters:
        try:
            module = theme_module(chapter)
        except ModuleNotFoundError:
            print(f"{chapter}: no theme module yet, skipped")
            continue
        except ValueError as err:
            parser.error(str(err))
        if not hasattr(module, "precompute"):
            print(f"{chapter}: nothing to precompute")
            continue
        seed_everything(args.seed)
        start = time.perf_counter()
        paths = module.precompute(profile)
        for path in paths:
            print(f"{chapter}: wrote {path}")
        print(f"{chapter}: {time.perf_counter() - start:.1f} s in the {profile} profile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
