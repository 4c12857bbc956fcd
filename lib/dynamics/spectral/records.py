"""What the chapter's runners return and its precomputed files hold, field by field
(:class:`dynamics.results.Record`): a claim names what it reads (``memory.fraction``, not
``memory["fraction"]``), and a field renamed in the code or in a file fails when the file is
read, naming it. :data:`.experiments.RECORDS` maps each file to its record.

Three files hold no mapping of fixed keys at the top (the timing a list of rows, the memory a
mapping from α, the shaping one from the learning rate): their records hold that list or
mapping in one field (``rows``, ``by_alpha``, ``by_lr``), and read and write the file's layout
unchanged (:attr:`dynamics.results.Record.WHOLE`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import results

__all__ = ["TimingRow", "Timing", "PracticeFile", "Memory", "MemoryFile", "Shaping", "ShapingRate",
           "ShapingFile", "Band", "Bands", "Width", "Practice", "MemoryBatch", "StepTable", "Roles"]


@dataclass(kw_only=True)
class TimingRow(results.Record):
    """One size of :func:`time_orthogonalization`: the n×n matrix, where it was timed, the median
    wall and CPU seconds of five Newton–Schulz steps in float32 (and in bfloat16 on a GPU: None
    where not timed) and of the SVD, and Newton–Schulz's relative error from U Vᵀ and largest
    |σ − 1|."""
    n: int
    device: str
    threads: int
    ns_float32_s: float
    ns_float32_cpu_s: float
    ns_bfloat16_s: float | None = None
    ns_bfloat16_cpu_s: float | None = None
    svd_s: float
    svd_cpu_s: float
    rel_error: float
    max_sigma_error: float

    def to_dict(self) -> dict:
        """The row as the runner writes it: no bfloat16 timings where none were timed."""
        return {k: v for k, v in super().to_dict().items()
                if not (k.startswith("ns_bfloat16") and v is None)}

    @property
    def ns_s(self) -> float:
        """Newton–Schulz's wall seconds in bfloat16 where timed, else in float32."""
        return self.ns_float32_s if self.ns_bfloat16_s is None else self.ns_bfloat16_s

    def ns_by_dtype(self, cpu: bool = False) -> dict[str, float]:
        """Newton–Schulz's seconds (wall; CPU with ``cpu``) per dtype timed, float32 first."""
        both = (("float32", self.ns_float32_cpu_s if cpu else self.ns_float32_s),
                ("bfloat16", self.ns_bfloat16_cpu_s if cpu else self.ns_bfloat16_s))
        return {dt: v for dt, v in both if v is not None}


@dataclass
class Timing(results.Record):
    """``data/spectral_timing.json``: a :class:`TimingRow` per size (the file: the list)."""
    WHOLE = "rows"
    rows: list[TimingRow]


@dataclass
class PracticeFile(results.Record):
    """``data/spectral_practice.json``: the first seed's lr sweeps (``sweeps``, ``{optimizer:
    {lr: History as a dict}}``: the slider; :func:`practice_sweeps`), each optimizer's best rate,
    the target loss and the dataset, and per seed the steps each swept rate took to the target
    (``reached``, ``{seed: {optimizer: {lr: steps or None}}}``: what the claims read)."""
    sweeps: dict
    best: dict
    target: float
    data: str
    reached: dict


@dataclass
class Memory(results.Record):
    """:func:`run_memory`: at each N (``n``, ``ratios`` = N/d) the fraction of pairs (and of
    frequency mass) each method stores after one step, its recall per frequency-rank bin
    (``by_rank``, at ``rank_centers``), averaged over the seeds ``draws``; ``by_draw[m][i]``:
    each draw's fraction."""
    n: list
    ratios: list
    dim: int
    alpha: float
    fraction: dict
    mass: dict
    by_rank: dict
    rank_centers: list
    draws: list
    by_draw: dict


@dataclass
class MemoryFile(results.Record):
    """``data/spectral_memory.json``: a :class:`Memory` per α (the file: ``{α: memory}``)."""
    WHOLE = "by_alpha"
    by_alpha: dict[str, Memory]


@dataclass
class Shaping(results.Record):
    """:func:`run_shaping`: each run by name (``runs``, ``{name: History}``; as dicts in a file),
    the schedule's run's name and the learning rate."""
    runs: dict
    schedule: str
    lr: float


@dataclass
class ShapingRate(Shaping):
    """The shaping file at one learning rate: the first seed's :class:`Shaping` (the slider) and,
    per seed, each run's loss at :data:`EARLY_STEP` and its final loss (``by_seed``, ``{seed:
    {run: {early, final}}}``; None: diverged)."""
    by_seed: dict


@dataclass
class ShapingFile(results.Record):
    """``data/spectral_shaping.json``: a :class:`ShapingRate` per learning rate (the file:
    ``{lr: rate}``)."""
    WHOLE = "by_lr"
    by_lr: dict[str, ShapingRate]


# ================================================================ the page-time runners' results


@dataclass
class Band(results.Record):
    """:func:`~.science.singular_value_band`: the smallest (``lo``) and largest (``hi``) σ of
    NS_k(G) at each step count ``k``."""
    k: list
    lo: list
    hi: list


@dataclass
class Bands(results.Record):
    """:func:`run_bands`: the quintic's band and the cubic's (None: not run) on the same matrix."""
    quintic: Band
    cubic: Band | None = None

    def named(self) -> dict[str, Band]:
        """Each band run, by the name the figure gives it."""
        return {k: v for k, v in (("Muon quintic", self.quintic), ("cubic", self.cubic)) if v is not None}


@dataclass
class Width(results.Record):
    """:func:`run_width`: ``change[opt][i]`` and ``norm[opt][i]`` at ``widths[i]``."""
    widths: list
    change: dict
    norm: dict


@dataclass
class Practice(results.Record):
    """:func:`run_practice`: each optimizer's sweep (``{optimizer: {lr: History}}``), its best
    rate, the runs at the best rates (``timed``, with ``muon_fp32``), the target loss, the
    dataset's name and the config."""
    sweeps: dict
    best: dict
    timed: dict
    target: float
    data: str
    config: Any


@dataclass
class MemoryBatch(results.Record):
    """:func:`run_memory_batch`: at N = ``n`` pairs, the recall per batch size (``recall[m][j]``
    at ``batch_sizes[j]``) and with the full gradient (``full[m]``), averaged over the draws
    (seeds ``draws``); each draw's (``by_draw[m][k][j]``, ``full_by_draw[m][k]``) and the
    control's, SGD on a second stream of batches (``again_by_draw[k][j]``). ``again``: one
    draw's control curve, where a draw is taken alone (not the runner's)."""
    n: int
    dim: int
    alpha: float
    seed: int
    batch_sizes: list
    recall: dict
    full: dict
    draws: list
    by_draw: dict
    full_by_draw: dict
    again_by_draw: list
    again: list | None = None


@dataclass
class StepTable(results.Record):
    """:func:`~.roles.steepest_table`: per norm (row) each duality map's gain (``gain[row][col]``),
    the best of ``draws`` random unit directions' (``random[row]``)."""
    gain: dict
    random: dict
    draws: int


@dataclass
class Roles(results.Record):
    """:func:`run_roles`: a :class:`StepTable` per seed (``by_seed``)."""
    WHOLE = "by_seed"
    by_seed: dict[int, StepTable]
