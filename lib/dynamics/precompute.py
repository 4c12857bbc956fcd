"""Regenerate a chapter's precomputed results (the static figures of the book).

    python -m dynamics.precompute grokking --profile gpu
    python -m dynamics.precompute all --profile cpu

Each theme module that has figures computed in advance defines
``precompute_plan(profile) -> dynamics.units.Plan``: its experiments at that profile's scale
as independent units (a run, a grid cell), and the ``data/<name>.json`` files assembled from
them. Every unit is stored under ``<results dir>/units/<chapter>/`` as it finishes, so the
same command run again continues where an interrupted one stopped (a unit whose config,
seed, profile or library version changed is computed again):

    python -m dynamics.precompute all --profile gpu --minutes 9   # repeat until it exits 0

``--minutes N`` stops after the unit in progress once N minutes have passed, writes the files
whose units are all done, says how many units are left and exits with status 75; 0 means
everything is written. It runs under :func:`dynamics.setup` (the book's threads, device and
matmul precision). As a dry run (``DYNAMICS_DRY_RUN=2 DYNAMICS_RESULTS_DIR=/tmp/x``) it
proves a profile end to end in minutes without touching ``data/`` (``python -m dynamics.bench
gpu`` does this per chapter).
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time

from . import CHAPTERS
from .runtime import PROFILES, dry_run, get_profile, setup


def theme_module(chapter: str):
    """The experiments module of a chapter's theme (where ``precompute_plan`` lives), by
    notebook name or theme name."""
    module = CHAPTERS.get(chapter, chapter if chapter in CHAPTERS.values() else None)
    if module is None:
        raise ValueError(f"unknown chapter {chapter!r}; choose one of {', '.join(CHAPTERS)}")
    return importlib.import_module(f"dynamics.{module}.experiments")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics.precompute", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapter", help=f"one of {', '.join(CHAPTERS)}, or 'all'")
    parser.add_argument("--profile", default=None, choices=PROFILES,
                        help="scale of the experiments (default: $DYNAMICS_PROFILE or by hardware)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after the unit in progress once this many minutes have passed "
                             "(run the same command again to continue)")
    args = parser.parse_args(argv)
    if args.minutes is not None and not args.minutes > 0:
        parser.error(f"--minutes must be a positive number of minutes, got {args.minutes}")
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    profile = get_profile(args.profile)
    rt = setup(profile, args.seed, quiet=True)  # the book's threads, device and matmul precision
    print(f"{rt.report()}" + (f"; dry run: {dry_run()} steps per training" if dry_run() else ""))
    chapters = list(CHAPTERS) if args.chapter == "all" else [args.chapter]
    left = 0
    for chapter in chapters:
        try:
            module = theme_module(chapter)
        except ModuleNotFoundError:
            print(f"{chapter}: no theme module yet, skipped")
            continue
        except ValueError as err:
            parser.error(str(err))
        start = time.perf_counter()
        if hasattr(module, "precompute_plan"):
            plan = module.precompute_plan(profile)
            plan.seed = args.seed
            paths = plan.run(deadline=deadline)
            left += plan.left
        else:
            print(f"{chapter}: nothing to precompute")
            continue
        for path in paths:
            print(f"{chapter}: wrote {path}")
        print(f"{chapter}: {time.perf_counter() - start:.1f} s in the {profile} profile")
    if left:
        print(f"{left} units left after {args.minutes:g} minutes: run the same command again "
              "to continue")
        return 75
    return 0


if __name__ == "__main__":
    sys.exit(main())
