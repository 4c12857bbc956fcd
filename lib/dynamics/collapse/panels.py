"""Neural collapse, the live panels (``*_panel``): each section's experiment for the reader to
re-run with widgets, redrawing as it trains (Stop ends a run with what it has). The figures
they draw come from :mod:`.figures`.

Live means seconds (issue 43): at the cpu profile each panel's defaults draw a first figure
within about a second of the click (the data are loaded when the panel is made) and finish within about five CPU seconds (``python -m dynamics_ops.bench
panels``). They train the page's network for fewer steps than the figures above them
(:data:`LIVE_STEPS`, a slider away from the full run), evaluate at log-spaced steps plus a few
even ones (the bar and Stop), and redraw at a few fractions of the run (:func:`redraws`), not at
every evaluation: a redraw costs about as much as fifty training steps. Each panel's ``work``
says what a setting costs before it starts.
"""
from __future__ import annotations

from .. import results
from ..runtime import get_seed
from ..train import History
from .experiments import (Exact, Imbalance, Simplex, live_eval_steps, run_collapse,
                          run_imbalance, simplex_frames)
from .figures import conditions_figure, imbalance_figure, nc_figure, simplex_frames_figure
from .science import (CollapseConfig, ImbalanceConfig, imbalanced_ufm_solution, load_data,
                      terminal_phase_start)

__all__ = ["WEIGHT_DECAYS", "LIVE_STEPS", "REDRAW_AT", "redraws", "collapse_panel",
           "simplex_panel", "conditions_panel", "imbalance_panel", "collapse_work",
           "simplex_work", "conditions_work", "imbalance_work"]

WEIGHT_DECAYS = (0.0, 0.01, 0.1, 0.3, 1.0, 3.0)
# the panels' default steps (at most the profile's): long enough for each panel's phenomenon
# on seeds 0-2 (tests/collapse/test_panels.py), short enough for about five CPU seconds
LIVE_STEPS = dict(collapse=500, simplex=600, conditions=250, imbalance=1000)
REDRAW_AT = (0.1, 0.4, 0.7)  # fractions of a run at which a panel redraws (and at its end)
EVEN_EVALS = 10              # even evaluations besides the log-spaced ones: Stop within 10%
STOP_EVERY = 200             # ... and at least every this many steps (a long run stops soon)
# a panel's fixed cost (its evaluations, snapshots and figures), in its own training steps:
# measured at cpu against a run three times as long (within 5%)
OVERHEAD_STEPS = dict(collapse=150, simplex=700, conditions=400, imbalance=300)


def redraws(update, build, steps: int, at=REDRAW_AT):
    """``train`` ``on_eval`` hooks for a live panel: the bar and Stop at every evaluation
    (``update.every(None)``), and a redraw with ``build(history)`` at the first evaluation at
    or past each fraction ``at`` of ``steps`` (a first figure early, a few more as it trains;
    the panel draws the last one). By steps, not seconds: a slow machine redraws as often."""
    marks = sorted(float(a) * steps for a in at)
    done = [0]

    def draw(step, history, model):
        if done[0] >= len(marks) or step < marks[done[0]] or update.stop_requested:
            return False
        while done[0] < len(marks) and step >= marks[done[0]]:
            done[0] += 1
        fig = build(history)
        if fig is not None:
            update(fig=fig)
        return False

    return (update.every(None), draw)


def _report(update, history: History) -> None:
    """Say in the panel's status what the run did, unless the reader stopped it."""
    if update.stop_requested:
        return
    if history.diverged:
        update(status=f"{history.status}: try a smaller learning rate")
    elif terminal_phase_start(history) is None:
        update(status="done: training error never reached 0 (no terminal phase)")


_DATA: dict = {}  # the panels' data, loaded when a panel is made (its defaults') and kept


def _data(cfg: CollapseConfig, seed: int):
    from ..runtime import get_device

    key = (cfg.dataset, cfg.n_classes, cfg.n_train, seed, str(get_device()))  # data live on a device
    if key not in _DATA:
        _DATA[key] = load_data(cfg, seed)
    return _DATA[key]


def _ready(cfg: CollapseConfig, seed: int) -> None:
    """What a panel's first click would otherwise wait for, done when the panel is made: its
    defaults' data, and the imports torch makes at its first optimizer (``torch._dynamo``,
    about a second and a half on a fresh kernel; nothing where the page has trained)."""
    import torch

    _data(cfg, seed)
    torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)


def _evals(steps: int, n_evals: int) -> list[int]:
    """A live run's evaluation steps: log-spaced (the figures) plus even ones (the bar, Stop)."""
    return live_eval_steps(steps, n_evals, max(EVEN_EVALS, steps // STOP_EVERY))


def _steps_slider(base_steps: int, default: int):
    from ..widgets import Slider

    return Slider("steps", 100, max(20000, base_steps), default, step=100, integer=True)


def _live_steps(name: str, base) -> int:
    return min(int(base.steps), LIVE_STEPS[name])


def _shorter_note(steps: int, full: int, what: str = "the runs above", slide: bool = True) -> str:
    """What the panel's note says when its default run is shorter than the figure's above
    (``slide``: and that sliding the steps to the figure's gives its full run)."""
    if steps >= full:
        return ""
    return (f"The panel trains {steps:,} steps by default ({what}: {full:,}), enough to see "
            f"it happen in seconds" + (f"; slide the steps to {full:,} for the full run." if slide
                                        else "."))


def collapse_work(steps, **_) -> float:
    """Section 1's panel: the units of work of a run (training steps, plus its figures)."""
    return float(steps) + OVERHEAD_STEPS["collapse"]


def collapse_panel(profile: str | None = None, seed: int | None = None):
    """Section 1: train the network live and watch NC1–NC4 (weight decay, learning rate,
    loss, steps)."""
    from ..widgets import Choice, Panel, controls_for

    base = CollapseConfig.for_profile(profile)
    seed = get_seed(seed)
    steps = _live_steps("collapse", base)
    _ready(base, seed)  # now, not in the click: the first figure comes within about a second

    def run(update, weight_decay, lr, loss, steps):
        cfg = base.replace(weight_decay=float(weight_decay), lr=float(lr), loss=loss, steps=int(steps))
        h, _ = run_collapse(cfg, seed, _data(cfg, seed), on_eval=redraws(update, nc_figure, cfg.steps),
                            eval_steps=_evals(cfg.steps, cfg.n_evals))
        _report(update, h)
        return nc_figure(h)

    controls = [Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                *controls_for(base, ["lr", "loss"]), _steps_slider(base.steps, steps)]
    return Panel(run, controls, title="Try it: the terminal phase",
                 note=_shorter_note(steps, base.steps), work=collapse_work,
                 above=results.provenance_of("collapse_weight_decay"), profile=profile)


def simplex_work(n_classes, steps, **_) -> float:
    """Section 2's panel: steps times the examples (a share per class), plus its snapshots and
    figures (the 3-D slider at the end costs more than a curve)."""
    return float(steps) * int(n_classes) / 4 + OVERHEAD_STEPS["simplex"]


def simplex_panel(profile: str | None = None, seed: int | None = None):
    """Section 2: the 3-D geometry for 3 or 4 classes (weight decay, steps)."""
    from ..widgets import Choice, Panel

    base = CollapseConfig.for_profile(profile, n_classes=4)
    seed = get_seed(seed)
    steps = _live_steps("simplex", base)
    _ready(base, seed)  # the default 4 classes' data, now rather than in the click

    def run(update, n_classes, weight_decay, steps):
        cfg = base.replace(n_classes=int(n_classes), weight_decay=float(weight_decay), steps=int(steps))
        h, rec = run_collapse(cfg, seed, _data(cfg, seed), snapshots=True,
                              on_eval=redraws(update, nc_figure, cfg.steps),
                              eval_steps=_evals(cfg.steps, cfg.n_evals))
        _report(update, h)
        if h.diverged or len(h) < 2:
            return nc_figure(h)
        return simplex_frames_figure(*simplex_frames(h, rec))

    controls = [Choice("n_classes", (3, 4), 4, "classes"),
                Choice("weight_decay", WEIGHT_DECAYS, base.weight_decay, "weight decay"),
                _steps_slider(base.steps, steps)]
    note = _shorter_note(steps, base.steps, "the run above")
    if note:  # seed 2 at 600 steps: ETF distance 0.339, 0.115 at step 31, 0.220 at the end
        note += " A short run can end with the means drifting away from the simplex again in " \
                "its last frames; " + _full_run_end()
    return Panel(run, controls, title="Try it: watch the simplex form",
                 note=note, work=simplex_work,
                 above=results.provenance_of("collapse_simplex"), profile=profile)


def _full_run_end() -> str:
    """How the precomputed full run of section 2 ends against the simplex, read from its file:
    how near it came (distance to the ETF, at which step) and where it ends."""
    hist = results.load("collapse_simplex", as_=Simplex)[0].history
    steps, dist = hist["steps"], hist["metrics"]["etf_distance"]
    k = min(range(len(dist)), key=dist.__getitem__)
    near = f"the full run comes nearest at step {steps[k]:,} (distance {dist[k]:.3f})"
    if dist[-1] <= 1.2 * dist[k]:
        return near + f" and ends there ({dist[-1]:.3f})."
    return near + f", then drifts to {dist[-1]:.3f} by its end."


def conditions_work(weight_decay, width, linear_depth, steps, n_train=1200, in_dim=64,
                    n_classes=10, depth=2, **_) -> float:
    """Section 3's panel: steps times a step's multiply-adds (the network's layers at
    ``width``, relative to the default network's), once per run (two with weight decay: the
    run and its twin without), plus the figures."""
    def macs(w, linear):
        return in_dim * w + (depth - 1 + linear - 1) * w * w + w * n_classes

    # a fixed part (the loss, the optimizer's calls), and the layers' part
    per_step = 0.3 + 0.7 * macs(int(width), int(linear_depth)) / macs(128, 2)
    runs = 2 if float(weight_decay) > 0 else 1
    return runs * float(steps) * per_step + OVERHEAD_STEPS["conditions"]


def conditions_panel(profile: str | None = None, seed: int | None = None):
    """Section 3: Jacot et al.'s conditions (optimizer, weight decay, width, depth of the
    linear part, learning rate, steps), for the run and, with weight decay, its twin without
    (trained after it, on the same initialization): what the decay does to the linear part."""
    from ..widgets import Choice, Panel, Slider, controls_for

    base = CollapseConfig.for_profile(profile)
    seed = get_seed(seed)
    steps = _live_steps("conditions", base)
    _ready(base, seed)  # now, not in the click

    def run(update, optimizer, weight_decay, width, linear_depth, lr, steps):
        cfg = base.replace(optimizer=optimizer, weight_decay=float(weight_decay), width=int(width),
                           linear_depth=int(linear_depth), lr=float(lr), steps=int(steps))
        data = _data(cfg, seed)
        name = f"{optimizer}, weight decay {weight_decay:g}"
        variants = {name: cfg}
        if cfg.weight_decay > 0:
            variants[f"{optimizer}, no weight decay"] = cfg.replace(weight_decay=0.0)
        runs, evals = {}, _evals(cfg.steps, cfg.n_evals)
        for k, (label, c) in enumerate(variants.items()):
            def build(h, label=label):
                return conditions_figure({**runs, label: h})

            at = REDRAW_AT if k == 0 else (0.5,)
            runs[label], _ = run_collapse(c, seed, data, eval_steps=evals,
                                          on_eval=redraws(update, build, c.steps, at))
            _report(update, runs[label])
            if update.stop_requested or runs[label].diverged:
                break
        return conditions_figure(runs)

    controls = [Choice("optimizer", ("adamw", "sgd", "momentum"), base.optimizer,
                       "optimizer (sgd: plain gradient descent)"),
                Choice("weight_decay", (0.0, 5e-4, 1e-3, 2e-3, 5e-3) + WEIGHT_DECAYS[1:],
                       base.weight_decay, "weight decay"),
                Slider("width", 8, max(1024, base.width), base.width, step=8, integer=True),
                *controls_for(base, ["linear_depth", "lr"]), _steps_slider(base.steps, steps)]
    # what the defaults show (AdamW) is tested at smoke, seed 0 (tests/collapse/test_panels.py)
    note = (f"The panel trains {base.optimizer if base.optimizer != 'adamw' else 'AdamW'} by "
            "default, not the gradient descent of the figure above. With weight decay it trains "
            "the run and then its twin without decay, from the same start. Under AdamW the decay "
            "barely changes the balancedness of the linear part; in a run this short it keeps ‖D‖ "
            "smaller, relative to its value at step 1, than in the twin, and NC1 lower (the "
            "section's text says how the full runs end). The balancing in the figure "
            f"above is plain gradient descent's: choose sgd, learning rate {base.gd_lr:g}, a "
            f"weight decay of its slider and {base.steps:,} steps to train its setting. "
            + _shorter_note(steps, base.steps, slide=False))
    dims = dict(n_train=base.n_train, n_classes=base.n_classes, depth=base.depth)
    title = ("Try it: what weight decay does under AdamW" if base.optimizer == "adamw" else
             "Try it: what weight decay does to the linear part")
    return Panel(run, controls, title=title,
                 note=note.strip(), work=lambda **v: conditions_work(**dims, **v),
                 above=results.provenance_of("collapse_gd_weight_decay"), profile=profile)


def imbalance_work(steps, linear_depth, **_) -> float:
    """Section 4's panel: the steps of its two trainings (each deeper linear part adds a
    layer's work), plus its figures."""
    return float(steps) * (1 + 0.25 * (int(linear_depth) - 1)) + OVERHEAD_STEPS["imbalance"]


def imbalance_panel(profile: str | None = None, seed: int | None = None):
    """Section 4: imbalanced classes (ratio, depth of the linear part, weight decays, steps):
    the exact solution drawn at once, the unconstrained features model once trained, then the
    network."""
    from ..widgets import Panel, controls_for

    base = ImbalanceConfig.for_profile(profile)
    seed = get_seed(seed)
    steps = min(int(base.steps), int(base.ufm_steps), LIVE_STEPS["imbalance"])

    def run(update, ratio, linear_depth, weight_decay, ufm_weight_decay, steps):
        cfg = base.replace(ratio=float(ratio), linear_depth=int(linear_depth),
                           weight_decay=float(weight_decay), ufm_weight_decay=float(ufm_weight_decay),
                           steps=int(steps), ufm_steps=int(steps))
        counts = cfg.counts()
        update(fig=imbalance_figure(Imbalance(
            counts=counts, stopped=False, ufm=None, network=None, theory=Exact(
                **imbalanced_ufm_solution(counts, cfg.ufm_weight_decay, cfg.linear_depth)))))
        result = run_imbalance(cfg, seed, evals=max(2 * EVEN_EVALS, cfg.steps // STOP_EVERY),
                               on_part=lambda part: update(fig=imbalance_figure(part)))
        if result.stopped:
            return imbalance_figure(result)
        bad = [f"{name} {part.status}" for name, part in (("ufm", result.ufm),
                                                          ("network", result.network))
               if part.status != "ok"]
        if bad:
            update(status="; ".join(bad) + ": try a smaller learning rate")
        return imbalance_figure(result)

    controls = [*controls_for(base, ["ratio", "linear_depth", "weight_decay", "ufm_weight_decay"]),
                _steps_slider(max(base.steps, base.ufm_steps), steps)]
    controls[-1].description = "steps (each model)"
    full = max(base.steps, base.ufm_steps)
    above = (f"each model above" if base.steps == base.ufm_steps else
             f"the free model above: {base.ufm_steps:,}, the network")
    return Panel(run, controls, title="Try it: imbalanced classes",
                 note=_shorter_note(steps, full, above).replace(f"{above}: {full:,}",
                                                                f"{above}: {base.steps:,}"),
                 work=imbalance_work,
                 above=results.provenance_of("collapse_imbalance"), profile=profile)
