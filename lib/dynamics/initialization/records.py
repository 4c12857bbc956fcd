"""What the chapter's page-time runners return, field by field
(:class:`dynamics.results.Record`): a claim or a fact names what it reads (``chaos.sigma_b2``,
not ``chaos["sigma_b2"]``), and a field renamed fails at once, naming it. The records of the
precomputed files (:class:`.experiments.Trainability`, :class:`.experiments.DepthTime`) sit
beside their runners in :mod:`.experiments`, which re-exports these.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import results

__all__ = ["Fluctuations", "SaxeControl", "Saxe", "QMap", "CMap", "CriticalLine", "XiTheory", "XiMeasured",
           "ChaosRun"]


@dataclass
class Fluctuations(results.Record):
    """One :func:`.experiments.run_fluctuations`: per layer (``layers``), n Var[G_l] / E[G_l]^2
    across an ensemble of ``n_nets`` networks of ``width`` and ``depth``, for Gaussian and for
    orthogonal weights, and the slope of each against depth (a least-squares line)."""
    layers: list
    width: int
    n_nets: int
    depth: int
    gaussian: list
    gaussian_slope: float
    orthogonal: list
    orthogonal_slope: float


@dataclass
class SaxeControl(results.Record):
    """The Saxe claim's control: the same task, rate and steps from ``init`` (orthogonal), its
    evaluation steps and every pattern's progress y_c."""
    init: str
    steps: list
    progress: list


@dataclass
class Saxe(results.Record):
    """One :func:`.experiments.run_saxe`: the evaluation steps, the loss and every pattern's progress y_c
    there, the patterns' strengths, the run's rate, depth and init, how it ended; from small
    weights at depth 2 also the exact solution at the same steps (``theory``) and the
    orthogonal start (``control``), else None."""
    steps: list
    loss: list
    progress: list
    strengths: list
    lr: float
    depth: int
    init: str
    status: str
    diverged: bool
    theory: list | None = None
    control: SaxeControl | None = None


@dataclass
class QMap(results.Record):
    """The length map at one ``sigma_w2`` (:func:`.experiments.run_chaos`): q_out = q_map(q_in)
    on a grid, its fixed point q*, and iterates ``measured`` on random networks (one sequence
    per start)."""
    sigma_w2: float
    q_in: list
    q_out: list
    q_star: float
    measured: list


@dataclass
class CMap(results.Record):
    """The correlation map at one ``sigma_w2``: c_out = c_map(c_in) on a grid, its fixed point
    c*, and iterates ``measured`` on random networks (one sequence per start)."""
    sigma_w2: float
    c_in: list
    c_out: list
    c_star: float
    measured: list


@dataclass
class CriticalLine(results.Record):
    """Points (sigma_b2, sigma_w2) of the critical line chi_1 = 1."""
    sigma_b2: list
    sigma_w2: list


@dataclass
class XiTheory(results.Record):
    """The depth scale xi_c of the theory on a fine grid of sigma_w2."""
    sigma_w2: list
    xi: list


@dataclass
class XiMeasured(results.Record):
    """The depth scale measured on random networks at each ``sigma_w2`` (None: not measurable),
    the layers each fit used, and the theory's xi_c at the same sigma_w2."""
    sigma_w2: list
    xi: list
    layers_used: list
    xi_theory: list


@dataclass
class ChaosRun(results.Record):
    """One :func:`.experiments.run_chaos` (the order-to-chaos figure): its sigma_b2, width and
    depth; the length and correlation maps at each sigma_w2; the critical line (theory, and
    measured at a few sigma_b2); the critical sigma_w2 at ``sigma_b2`` (theory, measured); the
    depth scale (theory, measured); and its wall time."""
    sigma_b2: float
    width: int
    depth: int
    q_map: list[QMap]
    c_map: list[CMap]
    line_theory: CriticalLine
    line_measured: CriticalLine
    critical_theory: float
    critical_measured: float
    xi_theory: XiTheory
    xi_measured: XiMeasured
    wall_time: float
