"""Are the published data the code's? Each precomputed file checked against the code on the page.

    python -m dynamics_ops.verify                        # every data file the precompute writes
    python -m dynamics_ops.verify lottery_pai            # one
    python -m dynamics_ops.verify --budget 120           # recompute samples worth <= 120 s
    python -m dynamics_ops.verify --refresh lottery_pai  # record the current code, if it reproduces

A file written by :mod:`dynamics_ops.precompute` keeps, in its provenance, the digest of the
source its results depend on (:func:`dynamics.results.source_digest`), the commit, the
tolerance its output declared and a copy of its cheapest unit's result (its **sample**). The
check (1) compares the digest with the current code's and (2) computes the sample's unit again
with the current code, at the file's profile and seed, and compares the two within the file's
tolerance (relative, on every number). A file is the code's when both agree; where only the
digest moved and the sample still reproduces, ``--refresh`` records the current digest and
commit in the file (its payload untouched), so the digest is never edited by hand. A file with
no sample (written before files kept one, or of timings, which do not reproduce) can only be
regenerated: the report names the command.

A sample reproduces bit for bit only on the arithmetic that made it (the processor's kernels,
torch, the treatment of subnormal floats: :mod:`dynamics.arithmetic`), which the file records.
On another arithmetic a sample that does not come out the same proves nothing either way: the
report says so, names both arithmetics and checks the digest only. A file that records no
arithmetic (made before files did) is compared wherever it is checked: where its sample
reproduces, ``--refresh`` records that arithmetic too.

Exit status: 0 when every file checked is the code's, 1 otherwise (the report says why).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field

from dynamics import CHAPTERS, results
from dynamics.arithmetic import fingerprint
from dynamics.runtime import dry_run, progress_bars, seed_everything, setup

# fields of a result that are clock readings (seconds measured while running): a unit
# computed again takes other seconds, so the comparison passes over them
CLOCK = frozenset({"wall_time", "time", "round_time", "control_time", "score_time", "train_time", "svd_s",
         "svd_cpu_s", "ns_float32_s", "ns_float32_cpu_s", "ns_bfloat16_s", "ns_bfloat16_cpu_s"})

__all__ = ["CLOCK", "Report", "outputs", "compare", "check", "refresh", "main"]


@dataclass
class Report:
    """What :func:`check` found for ``data/<name>.json``."""

    name: str
    chapter: str
    profile: str
    command: str
    source_file: str | None      # the digest the file records
    source_now: str              # the current code's
    unit: str | None = None      # the sample's unit (None: the file keeps no sample)
    seconds: float | None = None  # what the sample took when it was made
    tolerance: float | None = None
    reproduced: bool | None = None  # None: not computed (no sample, or over the budget)
    worst: float | None = None   # the largest relative difference found
    where: str = ""              # and where in the result
    timings: bool = False        # its results are timings: not reproducible, the digest only
    arithmetic_file: str | None = None  # the arithmetic the file was made (or last reproduced) on
    arithmetic_here: str | None = None  # this machine's (dynamics.arithmetic.fingerprint)
    problems: list = field(default_factory=list)

    @property
    def current(self) -> bool:
        return self.source_file == self.source_now

    @property
    def ok(self) -> bool:
        """Nothing says the file is not the code's: its digest is the current code's, it keeps
        a sample, and the sample reproduced where it was computed (``reproduced`` None: not
        computed, over a budget)."""
        return (self.current and (self.unit is not None or self.timings)
                and (self.reproduced is not False or self.foreign) and not self.problems)

    @property
    def foreign(self) -> bool:
        """The sample did not reproduce, and this machine's arithmetic is not the one the file
        records (or the file records none): the bits of a float32 training run are the
        arithmetic's as much as the code's, so here only the digest can be checked."""
        return (self.reproduced is False and self.arithmetic_here is not None
                and self.arithmetic_file != self.arithmetic_here)

    def line(self) -> str:
        state = ("the code's" if self.ok and self.reproduced else
                 "the code's by its digest (its sample is not comparable on this arithmetic)"
                 if self.ok and self.foreign else
                 "the code's by its digest (timings, which do not reproduce)" if self.ok and self.timings else
                 "the code's by its digest (sample not computed: over the budget)" if self.ok else
                 "digest moved, sample reproduces: refresh it" if self.reproduced and not self.current
                 else "NOT the code's" if self.reproduced is False else "unchecked")
        bits = [f"{self.name}: {state}"]
        if self.unit:
            bits.append(f"sample {self.unit!r} ({self.seconds:g} s)")
        if self.worst is not None:
            bits.append(f"largest difference {self.worst:.2g} (tolerance {self.tolerance:g})"
                        + (f" at {self.where}" if self.where else ""))
        if self.foreign:
            bits.append(f"made on {self.arithmetic_file or 'an arithmetic it does not record'}, "
                        f"computed here on {self.arithmetic_here}")
        bits += self.problems
        if not self.ok:
            bits.append(f"regenerate: {self.command}" if self.reproduced is not True
                        else f"refresh: python -m dynamics_ops.verify --refresh {self.name}")
        return "; ".join(bits)


def outputs(profile: str = "cpu") -> dict:
    """``{file name: chapter}`` for every file a theme's precompute writes."""
    from .precompute import theme_module

    found = {}
    for chapter in CHAPTERS:
        module = theme_module(chapter)
        if hasattr(module, "precompute_plan"):
            for out in module.precompute_plan(profile).outputs:
                found[out.name] = chapter
    return found


def compare(a, b, path: str = "") -> tuple[float, str]:
    """The largest relative difference between two JSON values (``|a - b| / max(|b|, 1e-12)``
    on numbers; infinite where their shapes, keys or texts differ) and where it is; the
    :data:`CLOCK` fields are passed over."""
    if isinstance(b, bool) or isinstance(a, bool) or b is None or a is None or isinstance(b, str):
        return (0.0, "") if a == b else (math.inf, path or "(the whole result)")
    if isinstance(b, (int, float)) and isinstance(a, (int, float)):
        d = abs(float(a) - float(b))
        return (0.0, "") if d == 0 else (d / max(abs(float(b)), 1e-12), path)
    if isinstance(b, dict) and isinstance(a, dict):
        if set(a) != set(b):
            return math.inf, f"{path} keys {sorted(set(a) ^ set(b))[:4]}"
        pairs = [(a[k], b[k], f"{path}.{k}") for k in b if k not in CLOCK]
    elif isinstance(b, list) and isinstance(a, list):
        if len(a) != len(b):
            return math.inf, f"{path} length {len(a)} != {len(b)}"
        pairs = [(x, y, f"{path}[{i}]") for i, (x, y) in enumerate(zip(a, b))]
    else:
        return math.inf, f"{path} ({type(a).__name__} != {type(b).__name__})"
    worst, where = 0.0, ""
    for x, y, p in pairs:
        d, w = compare(x, y, p)
        if d > worst:
            worst, where = d, w
    return worst, where


def check(name: str, compute: bool = True, chapter: str | None = None) -> Report:
    """Check ``data/<name>.json`` against the current code (see the module). ``compute=False``
    compares the digest only. The caller sets the book up at the file's profile
    (:func:`dynamics.setup`; :func:`main` does)."""
    from .precompute import Runner, theme_module

    prov = _read(name)["provenance"]
    chapter = chapter or results.chapter_of(name)
    rep = Report(name, chapter, prov["profile"], prov.get("command") or results.regenerate_command(name),
                 prov.get("source"), results.source_digest(chapter), tolerance=prov.get("tolerance"))
    if rep.source_file is None:
        rep.problems.append("the file records no source digest (written before files did)")
    sample = prov.get("sample")
    rep.timings = "tolerance" in prov and rep.tolerance is None
    if not sample:
        if not rep.timings:
            rep.problems.append("the file keeps no sample to compute again")
        return rep
    rep.unit, rep.seconds = sample["unit"], sample["seconds"]
    if not compute:
        return rep
    if dry_run():
        raise RuntimeError("dynamics_ops.verify computes units at full size: unset DYNAMICS_DRY_RUN")
    plan = theme_module(chapter).precompute_plan(rep.profile)
    unit = next((u for u in plan.units if u.name == rep.unit), None)
    if unit is None:
        rep.reproduced = False
        rep.problems.append(f"the current code's plan has no unit {rep.unit!r}")
        return rep
    if unit.seed is None:
        plan.seed = int(sample["seed"])
    runner = Runner(plan)
    if runner.key(unit)["seed"] != sample["seed"]:
        rep.reproduced = False
        rep.problems.append(f"the unit's seed is now {runner.key(unit)['seed']}, the sample's {sample['seed']}")
        return rep
    seed_everything(int(sample["seed"]))
    with progress_bars(False):
        value = unit.run()
    again = json.loads(json.dumps(results._plain(value), allow_nan=False))
    rep.worst, rep.where = compare(again, sample["result"])
    rep.reproduced = rep.worst <= rep.tolerance
    rep.arithmetic_file = prov.get("arithmetic")
    rep.arithmetic_here = fingerprint()
    return rep


def refresh(rep: Report) -> bool:
    """Record the current code's digest and commit in ``data/<name>.json`` when its sample
    reproduced (the payload untouched); returns whether it did."""
    if not rep.reproduced:
        return False
    blob = _read(rep.name)
    blob["provenance"].update(source=rep.source_now, commit=results.git_commit(),
                              checked=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    if rep.arithmetic_here is not None:  # reproduced bit for bit here: this arithmetic makes it
        blob["provenance"]["arithmetic"] = rep.arithmetic_here
    results.write_atomic(_path(rep.name), json.dumps(blob, indent=1) + "\n")
    return True


def _path(name: str):
    """Where ``name`` is: ``$DYNAMICS_RESULTS_DIR`` when set, else ``data/``."""
    return results.results_dir() / f"{name}.json"


def _read(name: str) -> dict:
    path = _path(name)
    if not path.exists():
        raise FileNotFoundError(f"no precomputed result {path}; regenerate it with "
                                f"`{results.regenerate_command(name)}`")
    blob = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(blob, dict) or not isinstance(blob.get("provenance"), dict):
        raise ValueError(f"{path} has no provenance; regenerate it with "
                         f"`{results.regenerate_command(name)}`")
    return blob


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynamics_ops.verify", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="data files (stems); default: every precomputed file")
    parser.add_argument("--budget", type=float, default=None,
                        help="compute the samples, cheapest first, while their recorded seconds "
                             "sum to at most this (the rest: digest only)")
    parser.add_argument("--refresh", action="store_true",
                        help="where a sample reproduces, record the current digest and commit")
    args = parser.parse_args(argv)
    known = outputs()
    names = args.names or sorted(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"not files a precompute writes: {unknown}; choose from {sorted(known)}")
    if args.budget is not None and not args.budget >= 0:
        parser.error(f"--budget must be a number of seconds >= 0, got {args.budget}")
    heads = {n: check(n, compute=False, chapter=known[n]) for n in names}
    spent, reports = 0.0, []
    for name in sorted(names, key=lambda n: heads[n].seconds if heads[n].seconds is not None else math.inf):
        head = heads[name]
        fits = head.unit is not None and (args.budget is None or spent + head.seconds <= args.budget)
        if fits:
            setup(head.profile, 0, quiet=True)  # the book's threads and matmul precision at that profile
            rep = check(name, chapter=known[name])
            spent += head.seconds
        else:
            rep = head
        if args.refresh and refresh(rep):
            rep.source_file = rep.source_now
        reports.append(rep)
        print(rep.line(), flush=True)
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
