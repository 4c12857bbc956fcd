"""What the chapter's page-time runners return, field by field
(:class:`dynamics.results.Record`): a claim or a fact names what it reads (``chaos.sigma_b2``,
not ``chaos["sigma_b2"]``), and a field renamed fails at once, naming it. The records of the
precomputed files (:class:`.experiments.Trainability`, :class:`.experiments.DepthTime`) sit
beside their runners in :mod:`.experiments`, which re-exports these.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import results

__all__ = ["Fluctuations", "SaxeControl", "Saxe", "QMap", "CMap", "CriticalLine", "XiTheory", "XiMeasured",
           "ChaosRun", "SignalStats", "Signal", "RankGrowth", "GuessingRun", "IsoCase", "Isometry",
           "WidthCurves", "WidthRun"]


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


@dataclass
class SignalStats(results.Record):
    """One network's :func:`.science.layer_statistics`: per hidden layer the activation std
    (``act_std``), |dL/dW_l| (``grad_norm``), |dL/dz_l| (``grad_in``) and the output variance
    (``out_var``, the output layer's last); LSUV's also ``start_out_var``, its orthonormal
    start's ``out_var`` before the rescaling."""
    act_std: list
    grad_norm: list
    grad_in: list
    out_var: list
    start_out_var: list | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in super().to_dict().items() if v is not None}


@dataclass
class Signal(results.Record):
    """One :func:`.experiments.run_signal`: per activation (``tanh``, ``relu``) the statistics of
    each init's network, ``{init: SignalStats}`` (empty: the activation was not run)."""
    tanh: dict[str, SignalStats] = field(default_factory=dict)
    relu: dict[str, SignalStats] = field(default_factory=dict)

    def nets(self, activation: str) -> dict[str, SignalStats]:
        """``{init: SignalStats}`` of ``activation`` ("tanh" or "relu")."""
        if activation not in ("tanh", "relu"):
            raise ValueError(f"a Signal holds tanh and relu, not {activation!r}")
        return getattr(self, activation)

    def items(self) -> list[tuple[str, dict[str, SignalStats]]]:
        """``(activation, {init: SignalStats})`` of every activation run, tanh first."""
        return [(a, n) for a, n in (("tanh", self.tanh), ("relu", self.relu)) if n]

    def activations(self) -> list[str]:
        """The activations run, tanh first."""
        return [a for a, _ in self.items()]

    def to_dict(self) -> dict:
        return {a: {i: st.to_dict() for i, st in n.items()} for a, n in self.items()}


@dataclass
class RankGrowth(results.Record):
    """One :func:`.experiments.run_rank_growth`: each pattern's half-learning step (None: never),
    the number of singular values of W1 - W1(0) above ``large`` then, the final singular values
    beside the balanced solution's, and the run's steps."""
    half_steps: list
    large_after: list
    final: list
    balanced: list
    large: float
    steps: int


@dataclass
class GuessingRun(results.Record):
    """One :func:`.experiments.run_guessing_bias`: per activation, per depth, the guessing bias
    of every network (``tanh``, ``relu``) and its favourite class (``tanh_class``,
    ``relu_class``); an activation a stopped job never reached is None (``stopped``)."""
    depths: list
    n_classes: int
    n_nets: int
    scale: str
    width: int
    tanh: list | None = None
    tanh_class: list | None = None
    relu: list | None = None
    relu_class: list | None = None
    stopped: bool = False

    def bias(self, activation: str) -> list | None:
        """The guessing biases of ``activation`` ("tanh" or "relu"), per depth."""
        if activation not in ("tanh", "relu"):
            raise ValueError(f"a GuessingRun holds tanh and relu, not {activation!r}")
        return getattr(self, activation)

    def to_dict(self) -> dict:
        return {k: v for k, v in super().to_dict().items() if v is not None
                and (k != "stopped" or v)}


@dataclass
class IsoCase(results.Record):
    """One case (activation, init) of :func:`.isometry.run_isometry`: its critical point and
    chi_1, the control's (OFF_CRITICAL x sigma_w2) sigma_w2, mean lambda at the deepest depth
    and chi_1; per depth the mean of lambda, its relative variance, the fraction below SMALL
    and the theory's relative variance."""
    activation: str
    init: str
    sigma_w2: float
    sigma_b2: float
    chi_1: float
    control_sigma_w2: float
    control_mean: float
    control_chi_1: float
    mean: list
    rel_var: list
    small: list
    theory: list


@dataclass
class Isometry(results.Record):
    """One :func:`.isometry.run_isometry`: the depths, width, networks per case, q* and seed,
    and the cases by name ("tanh orthogonal", ...)."""
    depths: list
    width: int
    n_nets: int
    q_star: float
    seed: int
    cases: dict[str, IsoCase]


@dataclass
class WidthCurves(results.Record):
    """One parametrization of :func:`.width.run_width`: per width, the loss at every learning
    rate, the best log2 learning rate and whether it lies inside the grid."""
    loss: list
    best_log2_lr: list
    inside: list


@dataclass
class WidthRun(results.Record):
    """One :func:`.width.run_width`: the sweep's widths, log2 learning rates and settings, the
    curves of SP (``sp``) and muP (``mup``), and its wall time."""
    widths: list
    log2_lrs: list
    steps: int
    hidden_layers: int
    batch_size: int
    n_train: int
    seed: int
    base_width: int
    sp: WidthCurves
    mup: WidthCurves
    wall_time: float

    def curves(self, parametrization: str) -> WidthCurves:
        """The curves of ``parametrization`` ("sp" or "mup")."""
        if parametrization not in ("sp", "mup"):
            raise ValueError(f"a WidthRun holds sp and mup, not {parametrization!r}")
        return getattr(self, parametrization)
