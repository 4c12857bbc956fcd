"""Section 6's two honest measures: a norm for each role, and what a step costs.

**Norms per role.** Steepest descent under a norm ‖·‖ steps along the unit direction D that
gains the most first-order decrease ⟨G, D⟩ (its *duality map*). Which norm is right depends on
what the tensor does in the network (Bernstein & Newhouse, "Old Optimizer, New Norm: An
Anthology" and "Modular Duality in Deep Learning"):

- a hidden matrix maps vectors of order-one entries to vectors of order-one entries: the
  spectral (RMS→RMS) norm, whose duality map is U Vᵀ (:func:`.science.polar`, Muon);
- an embedding reads one-hot inputs, so the most it can move any output is its largest
  column's RMS (the ℓ1→RMS operator norm): its duality map scales every column to unit RMS;
- a vector (bias, gain) acts entry by entry: the ℓ∞ norm, whose duality map is sign(G), Adam
  with its running averages switched off.

:func:`duality_map` computes each map, :func:`role_norm` each norm, and :func:`steepest_table`
checks on a gradient that each map gains the most in its own norm, against the other maps and
random unit directions.

**Cost.** :func:`step_seconds` times one training step (forward, backward, optimizer step) of
the practice MLP for each optimizer, interleaved and repeated: the median seconds per step,
which turn the per-step comparison of section 3 into a per-second one. AdamW is timed twice, as
two optimizers in the same rounds: the ratio of its two medians is the run's own noise floor
(:func:`noise_floor`), and a lead per second counts only beyond it (:func:`lead_words`).
Wall-clock time depends on the machine and its load: the page prints it, no test asserts it.
"""
from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from .. import train as T
from .records import Practice, StepTable
from .science import mlp, muon_with_adamw, polar, practice_data
from .. import runtime
from ..runtime import get_seed

__all__ = ["ROLE_NORMS", "role_norm", "duality_map", "random_unit_directions",
           "steepest_table", "steepest_margin", "steepest_holds", "step_seconds", "per_second",
           "noise_floor", "lead_words", "leads_words"]

ROLE_NORMS = {"spectral": "hidden matrix", "l1_to_rms": "embedding", "linf": "vector"}


def _check(G: torch.Tensor, norm: str) -> None:
    if norm not in ROLE_NORMS:
        raise ValueError(f"unknown norm {norm!r}; choose one of {list(ROLE_NORMS)}")
    if G.ndim != 2:
        raise ValueError(f"norm {norm!r} takes a 2-D tensor (a vector as a column), "
                         f"got shape {tuple(G.shape)}")


def role_norm(D: torch.Tensor, norm: str) -> float:
    """‖D‖ in the role's norm: ``spectral`` the largest singular value; ``l1_to_rms`` the
    largest column's RMS (the most D moves the output for a one-hot input, measured by RMS);
    ``linf`` the largest entry's magnitude."""
    _check(D, norm)
    D = D.double()
    if norm == "spectral":
        return float(torch.linalg.matrix_norm(D, ord=2))
    if norm == "l1_to_rms":
        return float((D.norm(dim=0) / D.shape[0] ** 0.5).max())
    return float(D.abs().max())


def duality_map(G: torch.Tensor, norm: str) -> torch.Tensor:
    """The unit direction D (‖D‖ = 1 in ``norm``) that maximizes ⟨G, D⟩: U Vᵀ (spectral),
    every column scaled to unit RMS (ℓ1→RMS; a zero column stays zero), sign(G) (ℓ∞)."""
    _check(G, norm)
    if norm == "spectral":
        return polar(G)
    if norm == "l1_to_rms":
        cols = G.norm(dim=0, keepdim=True)
        return torch.where(cols > 0, G * G.shape[0] ** 0.5 / cols.clamp_min(1e-30), 0.0)
    return torch.sign(G)


def random_unit_directions(shape: tuple, norm: str, draws: int, seed: int | None = None):
    """``draws`` Gaussian directions of ``shape``, each rescaled to unit ``norm``."""
    seed = get_seed(seed)
    g = torch.Generator().manual_seed(int(seed))
    for _ in range(int(draws)):
        D = torch.randn(*shape, generator=g, dtype=torch.float64)
        yield D / role_norm(D, norm)


def steepest_table(G: torch.Tensor, draws: int = 500, seed: int | None = None) -> StepTable:
    """For each norm (row) and each duality map (column): ⟨G, D⟩ with D the map's output
    rescaled to unit norm in the row's norm, and the best of ``draws`` random unit directions.
    Steepest descent predicts the row's own map on the diagonal of each row's maximum."""
    seed = get_seed(seed)
    G = G.double()
    maps = {n: duality_map(G, n).double() for n in ROLE_NORMS}
    gain = {row: {col: float((G * D).sum()) / role_norm(D, row) for col, D in maps.items()}
            for row in ROLE_NORMS}
    rand = {row: max(float((G * D).sum()) for D in random_unit_directions(G.shape, row, draws,
                                                                           seed))
            for row in ROLE_NORMS}
    return StepTable(gain=gain, random=rand, draws=int(draws))


def step_seconds(practice: Practice, reps: int = 5, block: int = 3, warmup: int = 1,
                 data=None) -> dict:
    """Seconds of one training step of the practice MLP of :func:`~.experiments.run_practice`
    (its ``config``; forward, backward and the optimizer's step on one mini-batch), each
    optimizer at its best rate: ``adamw``, ``muon`` (``torch.optim.Muon``, bfloat16
    Newton–Schulz, with AdamW at AdamW's best rate on the rest) and ``muon_fp32`` (the
    teaching Muon, float32 Newton–Schulz), ``momentum`` (SGD with momentum 0.9, when
    ``practice`` has its rate), and ``adamw_again``, AdamW a second time (the same
    thing timed twice: :func:`noise_floor`). Each of ``reps`` rounds times a
    block of ``block`` steps per optimizer, the optimizers taking turns, so a change in the
    machine's load falls on all of them alike; ``median`` is the median over the rounds of
    the wall seconds per step, ``cpu`` the same in this process's CPU seconds (steadier on a
    shared machine). Only these steps are timed: not the evaluations, the batching or the
    first (``warmup``) steps that a training run's wall clock also holds."""
    if int(reps) < 1 or int(block) < 1:
        raise ValueError(f"step_seconds: reps and block must be at least 1, got {reps}, {block}")
    if runtime.dry_run() is not None:  # a dry run proves the timing runs, not what it measures
        reps, block, warmup = 1, 1, 0
    cfg, lrs = practice.config, practice.best
    adam_lr = lrs["adamw"]
    data = data if data is not None else practice_data(cfg)
    x, y = data.x_train[:cfg.batch_size], data.y_train[:cfg.batch_size]
    runs = {}
    names = ("adamw", "muon", "muon_fp32") + (("momentum",) if "momentum" in lrs else ())
    for name in names + ("adamw_again",):
        model = mlp(data, cfg.width, cfg.depth, cfg.seed)
        adam = name.startswith("adamw")
        if name == "momentum":
            opt = T.make_optimizer(model, "momentum", lr=lrs["momentum"], momentum=0.9)
        elif adam:
            opt = T.make_optimizer(model, "adamw", lr=lrs["adamw"])
        else:
            opt = muon_with_adamw(model, lrs["muon"], adam_lr,
                                  torch.float32 if name == "muon_fp32" else None)
        runs[name] = (model, opt)

    def steps(model, opt, n):
        for _ in range(n):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

    wall = {name: [] for name in runs}
    cpu = {name: [] for name in runs}
    for name, (model, opt) in runs.items():
        steps(model, opt, int(warmup))
    for _ in range(int(reps)):
        for name, (model, opt) in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            steps(model, opt, int(block))
            wall[name].append((time.perf_counter() - t0) / block)
            cpu[name].append((time.process_time() - c0) / block)

    def median(v):
        v = sorted(v)
        return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])
    return dict(median={k: median(v) for k, v in wall.items()},
                cpu={k: median(v) for k, v in cpu.items()}, wall=wall, reps=int(reps),
                block=int(block))


def per_second(steps: dict, seconds: dict, muon: str = "muon") -> dict:
    """Per step against per second: ``steps`` (steps to the target, per optimizer) and
    ``seconds`` (seconds per step) → AdamW's steps over Muon's, Muon's step time over AdamW's,
    and AdamW's time to the target over Muon's (above 1: Muon is ahead per second). ``muon``:
    whose steps and seconds count as Muon's (``muon_fp32``: the float32 teaching Muon)."""
    if muon not in seconds or "adamw" not in seconds:
        raise ValueError(f"per_second needs the seconds of 'adamw' and {muon!r}, got "
                         f"{sorted(seconds)}")
    mu, ad = steps.get(muon), steps.get("adamw")
    cost = seconds[muon] / seconds["adamw"]
    per_step = ad / mu if mu and ad else None
    return dict(per_step=per_step, cost=cost,
                per_second=None if per_step is None else per_step / cost)


def steepest_margin(table: StepTable) -> float:
    """The smallest, over the norms of :func:`~.roles.steepest_table`, of the norm's own map's
    gain over the best other direction (the other maps and the random ones): above 1 when
    each map is its norm's steepest step."""
    return min(g[n] / max(max(v for k, v in g.items() if k != n), table.random[n])
               for n, g in table.gain.items())


def steepest_holds(table: StepTable) -> bool:
    """Whether, in every norm of :func:`~.roles.steepest_table`, the norm's own duality map
    gains more than the other maps and every random unit direction."""
    return all(g[n] > max(max(v for k, v in g.items() if k != n), table.random[n])
               for n, g in table.gain.items())


def noise_floor(cost: dict) -> float:
    """The run's own noise floor of a ratio of step times: AdamW's two timings in the same
    rounds (``adamw`` and ``adamw_again`` of :func:`step_seconds`), the larger over the
    smaller (1 when they agree). A ratio of two optimizers' times within it is noise."""
    med = cost.get("median", {})
    if "adamw" not in med or "adamw_again" not in med:
        raise ValueError("noise_floor needs AdamW timed twice (step_seconds' 'adamw' and "
                         f"'adamw_again'), got {sorted(med)}")
    a, b = float(med["adamw"]), float(med["adamw_again"])
    if a <= 0 or b <= 0:
        raise ValueError(f"noise_floor: step times must be positive, got {a}, {b}")
    return max(a, b) / min(a, b)


def lead_words(ratio: float | None, floor: float) -> str:
    """AdamW's time to the target over Muon's (:func:`per_second`) in words, against the
    ``floor`` of :func:`noise_floor`: "ahead" beyond it, "behind" below its inverse, and
    "within noise" between."""
    if floor < 1:
        raise ValueError(f"lead_words: a noise floor is at least 1, got {floor}")
    if ratio is None:
        return "not measured (a run missed the target)"
    if ratio > floor:
        return f"ahead ({ratio:.2f}× sooner than AdamW, beyond the noise floor of {floor:.2f}×)"
    if ratio < 1 / floor:
        return f"behind (AdamW gets there in {ratio:.2f} of its time)"
    return (f"within noise ({ratio:.2f}× AdamW's speed, inside the {floor:.2f}× by which two "
            "timings of AdamW differ)")


def leads_words(leads, floor: float) -> str:
    """AdamW's time to the target over Muon's against each of AdamW's two timings (``leads``,
    :func:`per_second` with ``adamw`` and with ``adamw_again``) in words, against the ``floor``
    of :func:`noise_floor`: "ahead" only when the lead is beyond the floor against both timings,
    "behind" only when it is below its inverse against both, with how far the nearer of the two
    is past the floor; otherwise neither. Wall-clock on one machine: no row asserts it."""
    if floor < 1:
        raise ValueError(f"leads_words: a noise floor is at least 1, got {floor}")
    if leads is None or any(r is None for r in leads):
        return "not measured (a run missed the target)"
    lo, hi = min(leads), max(leads)
    both = f"{lo:.2f}× and {hi:.2f}×"
    if lo > floor:
        return (f"ahead of AdamW against both its timings ({both} sooner; the nearer is "
                f"{lo / floor:.2f}× past the noise floor of {floor:.2f}×)")
    if hi < 1 / floor:
        return (f"behind AdamW against both its timings (AdamW gets there in {lo:.2f} and "
                f"{hi:.2f} of its time; the nearer is {1 / (hi * floor):.2f}× past the noise "
                f"floor of {floor:.2f}×)")
    return (f"neither ahead nor behind: {both} AdamW's speed against its two timings, not "
            f"beyond the {floor:.2f}× by which those two timings differ against both")
