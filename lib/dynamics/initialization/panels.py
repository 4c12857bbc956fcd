"""Initialization, the live panels: each ``*_panel(profile, seed)`` a figure the reader re-runs
with widgets (depth, width, activation, initialization...). The figures they draw are
:mod:`.figures`'; the runs, :mod:`.experiments`'.

Each panel's defaults are sized to show a first result within 2 s of Run and to finish within
10 s on two CPU cores (issue 43), and each says before it starts what a larger setting costs
(``work=``, proportional to the run's measured CPU time):

- signal propagation: one network at the page's width but at most 50 layers (the page's cpu
  figure has 100; the weights' draw and the forward and backward passes scale as depth x
  width^2);
- the trainability grid: one batched sweep per depth (:func:`dynamics.sweep.train_many`),
  each row drawn as soon as it is trained, the theory line computed once per sigma_b^2;
- the deep linear network: its curves drawn while it trains;
- the guessing bias: fewer networks and inputs than the page's figure.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import plots, results, runtime
from .. import progress as P
from ..runtime import get_device, get_seed
from ..sweep import grid, train_many
from ..train import Recipe
from ..widgets import Choice, Panel, Slider, controls_for
from .experiments import (CHANCE, Saxe, Trainability, run_guessing_bias, run_saxe,
                          run_signal)
from .figures import saxe_figure, signal_figure, trainability_figure
from .science import (ACTIVATIONS, GuessingConfig, SaxeConfig, SignalConfig,
                      TrainabilityConfig, backward_ratio, critical_sigma_w2, mnist1d_data,
                      saxe_task, std_ratio, tanh_mlp, trainable_depth)

__all__ = ["signal_panel", "trainability_panel", "saxe_panel", "guessing_panel"]


def _warm_training() -> None:
    """Import what the first training of a process imports (``torch._dynamo``, pulled in by the
    first optimizer or the first model built on the meta device: about 2 CPU s), while the
    page builds the panel rather than after the reader presses Run."""
    import torch._dynamo  # noqa: F401


# ----------------------------------------------------------------------------- 1. signal

SIGNAL_DEPTH = 50  # the panel's default depth (the page's width): a run of about 0.6 CPU s


def signal_work(depth, width, **_) -> float:
    """A signal run's cost: drawing the weights and the forward and backward passes scale as
    depth x width^2, plus about 0.2 CPU s for the figure (in the same units)."""
    return float(depth) * float(width) ** 2 + 4e6


def signal_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, width, activation, init -> the three per-layer curves of that network."""
    base = SignalConfig.for_profile(profile, seed=get_seed(seed))

    def run(update, depth, width, activation, init):
        cfg = base.replace(depth=int(depth), width=int(width), activation=activation, init=init)
        res = run_signal(cfg, inits=[init], activations=[activation])
        st = res.nets(activation)[init]
        update(status=f"last/first activation std = {plots.number(std_ratio(st))}, "
                      f"first/last ‖dL/dz‖ = {plots.number(backward_ratio(st))}")
        return signal_figure(res, activation)

    big = get_device().type != "cpu"  # keep the largest network within a laptop's memory
    depth = min(base.depth, SIGNAL_DEPTH)
    controls = [Slider("depth", 1, 200, depth, 1, integer=True),
                Slider("width", 2, 1024 if big else 512, min(base.width, 512), 2, integer=True),
                *controls_for(base, ["activation", "init"])]
    note = (f"It starts at depth {depth}; the figure above is at depth {base.depth}."
            if depth < base.depth else "")
    return Panel(run, controls, title="Try it: signal propagation at initialization",
                 note=note, above="live", profile=profile, work=signal_work)


# ----------------------------------------------------------------------------- 2. trainability

SIGMA_RANGE = (0.5, 4.5)  # the panel's sigma_w^2 axis: n_sigma values spaced evenly over it
MAX_DEPTH, TRAIN_STEPS = 24, 100  # the defaults: the deepest row learns fastest near the edge
N_SIGMA, N_SIGMA_RANGE = 5, (3, 9)  # the default number of sigma_w^2 values, and the slider's
LINE_POINTS = 21          # the theory line's sigma_w^2 (and the critical point): ~0.02 CPU s each


def grid_axes(max_depth: int, n_sigma: int) -> tuple[list[int], list[float]]:
    """The panel's grid: four depths from 4 to ``max_depth`` and ``n_sigma`` values of
    sigma_w^2 spaced evenly over :data:`SIGMA_RANGE`."""
    return sorted({int(v) for v in np.linspace(4, max_depth, 4)}), sigma_grid(n_sigma)


def sigma_grid(n_sigma: int) -> list[float]:
    """``n_sigma`` values of sigma_w^2 spaced evenly over :data:`SIGMA_RANGE` (to 0.01)."""
    return np.round(np.linspace(*SIGMA_RANGE, int(n_sigma)), 2).tolist()


@lru_cache(maxsize=32)
def six_xi_line(low: float, high: float, sigma_b2: float) -> tuple[list, list]:
    """6 xi_c of the theory over [low, high] (:data:`LINE_POINTS` evenly spaced values and the
    critical point, where it diverges): what the grid's dashed line draws. Computed once per
    sigma_b^2 in a kernel (the mean-field maps cost about 0.02 CPU s a point)."""
    fine = np.linspace(low, high, LINE_POINTS)
    crit = critical_sigma_w2(sigma_b2)
    if low < crit < high:
        fine = np.sort(np.append(fine, crit))
    return fine.tolist(), [trainable_depth(s, sigma_b2) for s in fine]


def on_grid(value: float, grid: list) -> bool:
    """Whether ``value``, rounded to 0.01 as the grids are, is one of ``grid``'s values."""
    return any(abs(float(s) - round(value, 2)) < 5e-3 for s in grid)


def trainability_note(panel: TrainabilityConfig, page: TrainabilityConfig) -> str:
    """How the panel's default grid differs from the page's (the figure above), from the two
    configs: what it is sized down to, whether any number of sigma_w^2 values puts the page's
    critical point on its grid, and what its colour then means."""
    depths, _ = grid_axes(MAX_DEPTH, N_SIGMA)
    said = [f"{a} {x} (the figure: {y})" for a, x, y in (
        ("batch", panel.batch_size, page.batch_size), ("width", panel.width, page.width),
        ("SGD steps", TRAIN_STEPS, page.steps)) if x != y]
    if depths != list(page.depths):
        said.append(f"depths {depths[0]} to {depths[-1]} (the figure: {min(page.depths)} to "
                    f"{max(page.depths)})")
    if not said:
        return ""
    text = "It is not the figure's grid: " + ", ".join(said) + "."
    crit = critical_sigma_w2(panel.sigma_b2)
    if not any(on_grid(crit, sigma_grid(n)) for n in range(N_SIGMA_RANGE[0],
                                                              N_SIGMA_RANGE[1] + 1)):
        text += (f" No number of σ_w² values puts the critical {crit:.2f} on its grid"
                 + (" (the figure's grid has it)." if on_grid(crit, page.sigma_w2) else "."))
    if TRAIN_STEPS < page.steps:
        text += (f" Its colour is the training accuracy after {TRAIN_STEPS} steps, how far a "
                 f"network gets in 1/{page.steps / TRAIN_STEPS:.3g} of the figure's budget, "
                 f"not whether it trains.")
    return text


def trainability_work(max_depth, n_sigma, width, steps, **_) -> float:
    """A grid run's cost, in units of about 0.05 CPU ms: per SGD step of one row (a batched
    sweep over sigma_w^2), per layer and about 3 layers' worth of fixed cost, the engine's own
    part (8 units) and a part per model, fixed and growing as width^2 (measured on a CPU at
    depth 4 to 32, width 32 to 128, 3 to 9 models); plus the theory line and the drawings."""
    depths, sig = grid_axes(max_depth, n_sigma)
    per_layer = 8.0 + len(sig) * (0.6 + 0.4 * (float(width) / 32.0) ** 2)
    return float(steps) * sum(d + 3 for d in depths) * per_layer + 29000.0


def trainability_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small trainability grid, trained live (four depths x a few sigma_w^2), each
    depth's row drawn as soon as it is trained."""
    seed = get_seed(seed)
    base = TrainabilityConfig.for_profile("smoke", seeds=[seed])
    _warm_training()

    def run(update, max_depth, n_sigma, width, steps, sigma_b2):
        depths, sig = grid_axes(max_depth, n_sigma)
        cfg = base.replace(depths=depths, sigma_w2=sig, width=int(width), steps=int(steps),
                           sigma_b2=float(sigma_b2))
        data = mnist1d_data(cfg.n_train)
        seeds = cfg.seeds
        heat = Trainability(  # filled row by row; the line once the first row shows
            depths=depths, sigma_w2=sig, acc=[[None] * len(sig) for _ in depths],
            seeds=list(seeds), acc_per_seed=[], line_sigma_w2=[], six_xi=[],
            critical=critical_sigma_w2(cfg.sigma_b2), sigma_b2=cfg.sigma_b2,
            steps=runtime.steps(cfg.steps), width=cfg.width, lr_depth=cfg.lr_depth,
            n_train=cfg.n_train, diverged=[], stopped=False, wall_time=0.0)
        job, drawn = P.current(), None
        for i, depth in enumerate(depths):
            # one row as experiments.run_trainability trains it: every sigma_w^2 in one model
            with job.part(i, len(depths)):
                hs = train_many(
                    lambda c, depth=depth: tanh_mlp(data.input_dim, cfg.width, depth,
                                                    c["sigma_w2"], cfg.sigma_b2, data.n_classes),
                    data, grid(sigma_w2=sig, seed=seeds),
                    Recipe(cfg.steps, optimizer="momentum", lr=cfg.lr_depth / depth,
                           batch_size=cfg.batch_size, eval=[heat.steps]),
                    bars=False, strategy="batched").histories
            if any(len(h) == 0 and not h.diverged for h in hs):  # Stop pressed in this row
                break
            final = np.array([CHANCE if h.diverged else h.last("train_acc") for h in hs])
            heat.acc[i] = final.reshape(len(sig), len(seeds)).mean(1).tolist()
            heat.diverged += [[depth, float(c["sigma_w2"])] for c, h in
                                 zip(grid(sigma_w2=sig, seed=seeds), hs) if h.diverged]
            update(fig=trainability_figure(heat))  # this row's cells, as soon as trained
            drawn = bool(heat.six_xi)  # whether that drawing has the theory's line
            if not heat.six_xi:  # the theory's line, once the first row shows
                line, six = six_xi_line(sig[0], sig[-1], cfg.sigma_b2)
                heat.line_sigma_w2, heat.six_xi = line, six
            if job.report((i + 1) / len(depths)):
                break
        if heat.diverged and not job.stopped:
            update(status=f"{len(heat.diverged)} runs diverged (counted as chance)")
        # the last drawing is the figure, unless the line came after it (None: keep it)
        return trainability_figure(heat) if drawn is False else None

    controls = [Slider("max_depth", 8, 96, MAX_DEPTH, 8, integer=True, description="max depth"),
                Slider("n_sigma", *N_SIGMA_RANGE, N_SIGMA, 1, integer=True,
                       description="σ_w² values"),
                Slider("width", 8, 128, base.width, 8, integer=True, description="width"),
                Slider("steps", 50, 1000, TRAIN_STEPS, 50, integer=True, description="SGD steps"),
                Slider("sigma_b2", 0.0, 0.5, base.sigma_b2, 0.01, description="σ_b²")]
    above = results.provenance_of("initialization_trainability")
    page = (TrainabilityConfig.for_profile(above["profile"], **above["config"]) if above
            else TrainabilityConfig.for_profile(profile))  # the figure above's grid
    return Panel(run, controls, title="Try it: a small trainability grid, live",
                 note=trainability_note(base, page), above=above, profile=profile,
                 work=trainability_work)


# ----------------------------------------------------------------------------- 3. deep linear


SAXE_DRAWS = 4  # the curves are drawn after each quarter of the steps, then whole


def saxe_work(steps, depth, init, **_) -> float:
    """A deep linear run's cost, in units of about 0.1 CPU ms: per step, a fixed part and one
    per weight matrix (3 + depth), and about 900 units of evaluations (150 each run); at depth
    2 from small weights the exact solution's control, an orthogonal start, trains as long
    again (the claims table's, not drawn); and the drawings, about 0.2 CPU s each."""
    runs = 2 if int(depth) == 2 and init == "small" else 1
    return runs * (float(steps) * (int(depth) + 3) + 900.0) + SAXE_DRAWS * 1800.0


def drawn_every(update, build, steps: int, parts: int = SAXE_DRAWS):
    """A ``train`` ``on_eval`` hook that draws ``build(history)`` after each ``1/parts`` of
    ``steps`` (not on a clock: a figure costs as much as a hundred steps here, and a loaded
    machine's clock would ask for more of them), and stops training once Stop was pressed."""
    next_at = [steps / parts]

    def hook(step, history, model):
        if update.stop_requested:
            return True
        if step >= next_at[0] and step < steps:
            next_at[0] = step + steps / parts
            update(fig=build(history))
        return False

    return hook


def saxe_panel(profile: str | None = None, seed: int | None = None):
    """Try it: depth, init, learning rate of the deep linear network, its curves drawn while
    it trains."""
    base = SaxeConfig.for_profile(profile, seed=get_seed(seed))
    _warm_training()

    def run(update, depth, init, lr, init_std, steps):
        cfg = base.replace(depth=int(depth), init=init, lr=float(lr), init_std=float(init_std),
                           steps=int(steps))
        strengths = saxe_task(cfg.n_patterns, cfg.strength_max, cfg.strength_min,
                              cfg.seed).info["strengths"]

        def curves(h):  # the figure so far, from the training's history
            return saxe_figure(Saxe(steps=h.steps, loss=h["train_loss"].tolist(),
                                    progress=[h[f"y{c}"].tolist() for c in range(cfg.n_patterns)],
                                    strengths=strengths, lr=cfg.lr, depth=cfg.depth,
                                    init=cfg.init, status=h.status, diverged=bool(h.diverged)))

        res = run_saxe(cfg, on_eval=drawn_every(update, curves, cfg.steps))
        if update.stop_requested:  # Stop pressed: the panel says so; the curves end where it was
            return saxe_figure(res)
        if res.diverged:
            update(status=f"{res.status}: try a smaller learning rate")
        elif len(res.steps) and res.steps[-1] < cfg.steps:  # evaluated every steps//150
            update(status=f"done: {cfg.steps} steps, the curves' last evaluation at step "
                          f"{res.steps[-1]}")
        return saxe_figure(res)

    controls = controls_for(base, ["depth", "init", "lr", "init_std"])
    controls.append(Slider("steps", 50, 5000, min(base.steps, 5000), 50, integer=True))
    return Panel(run, controls, title="Try it: a deep linear network", above="live",
                 profile=profile, work=saxe_work)


# ----------------------------------------------------------------------------- 4. guessing

GUESSING_NETS, GUESSING_INPUTS = 16, 500  # the panel's networks and inputs (the page's: more)


def guessing_work(depth, width, **_) -> float:
    """A guessing run's cost: each network's draw and forward pass, per layer a part that
    grows as width^2 and a fixed part (about that of width 180), plus the figure (measured on
    a CPU at depth 4 to 16, width 128 to 512)."""
    return float(depth) * (float(width) ** 2 + 32768.0) + 250000.0


def guessing_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the favourite-class fraction of each of a set of untrained networks."""
    base = GuessingConfig.for_profile(profile, seed=get_seed(seed))
    base = base.replace(n_nets=min(base.n_nets, GUESSING_NETS),
                        n_inputs=min(base.n_inputs, GUESSING_INPUTS))

    def run(update, depth, width, activation, scale):
        cfg = base.replace(depths=[int(depth)], width=int(width), scale=scale)
        res = run_guessing_bias(cfg, activations=[activation])
        vals = np.asarray(res.bias(activation)[0]) if res.bias(activation) else np.zeros(0)
        if not len(vals):
            return None
        update(status=f"mean favourite-class fraction {vals.mean():.2f} (no bias: "
                      f"{1 / res.n_classes:.2f})")
        fig = plots.bars([f"{k}" for k in range(len(vals))], vals.tolist(),
                         title=f"{activation}, depth {int(depth)}: each untrained network",
                         ytitle="fraction in the favourite class", text_fmt="{:.2f}")
        fig.update_xaxes(title_text="network")
        fig.update_yaxes(range=[0, 1.1])
        return fig

    controls = [Slider("depth", 1, 64, 16, 1, integer=True),
                Slider("width", 8, 1024, base.width, 8, integer=True),
                Choice("activation", ACTIVATIONS, "relu"),
                Choice("scale", ("critical", "xavier"), base.scale)]
    page = GuessingConfig.for_profile(profile)
    note = (f"It draws {base.n_nets} networks and classifies {base.n_inputs} inputs; the figure "
            f"above, {page.n_nets} networks per depth on {page.n_inputs} inputs."
            if (base.n_nets, base.n_inputs) != (page.n_nets, page.n_inputs) else "")
    return Panel(run, controls, title="Try it: initial guessing bias", note=note,
                 above="live", profile=profile, work=guessing_work)
