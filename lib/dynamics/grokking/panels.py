"""Grokking, the live panels: the "Try it" widgets of the page, each training in the
reader's kernel and redrawing while it trains (:func:`panel` names them by kind)."""
from __future__ import annotations

from .. import progress as P
from ..book import and_list
from .. import widgets as W
from ..runtime import get_profile, get_seed
from .experiments import PhaseRow, evaluation_steps, live_phase_config, progress_measures, run, run_phase_grid
from .figures import phase_figure, progress_figure, training_figure
from .science import FIT_ACC, FOURIER_OPS, GROK_ACC, GrokConfig

__all__ = ["live_config", "live_phase_panel_config", "run_work", "phase_work",
           "training_panel", "progress_panel", "remedy_panel", "phase_panel", "panel"]


# ============================================================================ what a run costs
# A panel says what a setting costs before it starts (``Panel(work=...)``): the units below are
# proportional to a run's CPU time. Per full-batch step, the MLP's multiply-adds per example
# (2p·w + (depth - 1)·w² + w·p) times the training rows, plus a fixed cost per step (the
# optimizer's and autograd's bookkeeping, and the panel's few redraws spread over the steps:
# about as much as 36M multiply-adds, fitted on one CPU thread to the defaults, width 128 and the
# page's p = 59 run); each evaluation a forward pass over all p² pairs (a third of a step's
# work per row). Muon's Newton–Schulz iterations (measured: about 6x the defaults' AdamW step),
# Grokfast's and ⊥Grad's gradient edits add to each step; the progress measures replay each
# checkpoint over all p² pairs.

STEP_OVERHEAD = 3.6e7    # a step's fixed cost, in multiply-adds of the model
MUON_STEP = 9.0          # Muon's extra per step, in STEP_OVERHEADs (+ 15 w³ per hidden matrix)
REMEDY_STEP = dict(none=0.0, grokfast=0.2, perp_grad=0.3, stablemax=0.1)  # extra, same units
MEASURE_EVAL = 3.0       # a checkpoint's progress measures, in forward passes over all pairs


def _macs(p: int, width: int, depth: int = 2) -> float:
    """The MLP's multiply-adds per example: one-hot pair (2p) -> width x depth -> p."""
    return 2 * p * width + (depth - 1) * width * width + width * p


def run_work(p, width, steps, train_frac, n_evals=60, depth=2, optimizer="adamw",
             remedy="none", measures=False, **_) -> float:
    """Units of work of one panel run (proportional to its CPU time): ``steps`` full-batch
    steps on ``train_frac`` of the ``p²`` pairs, its evaluations, and with ``measures`` the
    progress measures of every checkpoint."""
    macs = _macs(int(p), int(width), int(depth))
    rows = float(train_frac) * p * p
    fixed = STEP_OVERHEAD * (1 + REMEDY_STEP.get(remedy, 0.0))
    if optimizer == "muon":
        fixed += MUON_STEP * STEP_OVERHEAD + 15 * int(width) ** 3 * int(depth)
    evals = len(evaluation_steps(int(steps), int(n_evals)))
    per_eval = p * p * macs / 3 * (1 + (MEASURE_EVAL if measures else 0.0))
    return steps * (rows * macs + fixed) + evals * per_eval


def phase_work(p, width, steps, cells: int = 6, train_frac: float = 0.75, n_evals: int = 60,
               **_) -> float:
    """Units of work of a phase-diagram panel run: ``cells`` models of ``steps`` steps, each
    with the batched engine's fixed cost per step (about twice a single run's)."""
    macs = _macs(int(p), int(width))
    evals = len(evaluation_steps(int(steps), int(n_evals)))
    one = steps * (train_frac * p * p * macs + 2 * STEP_OVERHEAD) + evals * p * p * macs / 3
    return cells * one


# ============================================================================ live panels

STEPS_HIGH = 20_000  # the steps slider's top: the page's longest run and more, one slider away


def live_config(profile: str | None = None) -> GrokConfig:
    """The run a panel trains at its defaults: the smoke preset (p = 37, 70% of the pairs,
    700 steps), which groks within seconds on a CPU core, or on a GPU the cpu one (the page's
    own runs); evaluated 60 times (the curves' log axis reads no more)."""
    return GrokConfig.for_profile("cpu" if get_profile(profile) == "gpu" else "smoke",
                                  n_evals=60)


LABELS = dict(p="p", train_frac="training fraction", width="width", lr="learning rate",
              steps="steps", weight_decay="weight decay", remedy="remedy")  # names in notes


def _reach(names, controls) -> str:
    """What the note says of the settings ``names`` the panel's defaults change: the sliders
    for those among its ``controls`` reach the page's values, the others stay fixed here."""
    reach = [LABELS[n] for n in names if n in controls]
    fixed = [LABELS[n] for n in names if n not in controls]
    out = []
    if reach:
        out.append(f"the slider{'s' if len(reach) > 1 else ''} for {and_list(reach)} "
                   f"reach{'' if len(reach) > 1 else 'es'} "
                   f"{'them' if len(reach) > 1 else 'it'}")
    if fixed:
        out.append(f"{and_list(fixed)} {'are' if len(fixed) > 1 else 'is'} fixed in this panel "
                   f"(the first panel's sliders reach {'them' if len(fixed) > 1 else 'it'})")
    return "; ".join(out)


def _differs(base: GrokConfig, profile, controls) -> str:
    """What the note says when the panel's defaults are not the page's run: which settings
    differ, and which of them the panel's ``controls`` (names) reach."""
    page = GrokConfig.for_profile(profile)
    names = [n for n in ("p", "train_frac", "width", "lr", "steps")
             if getattr(base, n) != getattr(page, n)]
    if not names:
        return ""
    return (" Its defaults are smaller than the page's runs above (" +
            ", ".join(f"{LABELS[n]} {getattr(page, n):g}" for n in names) +
            "), so that it finishes in seconds on a CPU; " + _reach(names, controls) + ".")


def _title(cfg: GrokConfig) -> str:
    extra = "" if cfg.remedy == "none" else f", {cfg.remedy}"
    noise = f", {cfg.label_noise:.0%} noise" if cfg.label_noise else ""
    return f"{cfg.op} mod {cfg.p}, {cfg.train_frac:.0%} train, wd {cfg.weight_decay:g}{extra}{noise}"


REDRAWS = (0.0, 0.125, 0.25, 0.5)  # the curves redrawn at these fractions of the budget


def _milestones(steps: int, build):
    """``build`` for ``update.every``, called only at the first evaluation past each of
    :data:`REDRAWS` x ``steps`` (a few figures, evenly spread on the log axis), else None
    (the figure stays): a redraw costs as much as dozens of steps, and a wall-clock interval
    alone redraws more often the more loaded the machine."""
    marks = [f * steps for f in REDRAWS]

    def maybe(history):
        step = history.steps[-1] if len(history) else 0
        if not marks or step < marks[0]:
            return None
        while marks and step >= marks[0]:
            marks.pop(0)
        return build(history)

    return maybe


def _run_panel(base: GrokConfig, names, seed: int, progress_view: bool = False, title: str = "",
               profile: str | None = None, says: str = ""):
    """A live panel over some :class:`GrokConfig` fields (and ``steps``): train one run,
    redraw while it trains (Stop ends it and shows what it has), and show the training curves
    (or, with ``progress_view``, the progress measures); it says what a setting costs."""
    controls = []
    for name in list(names) + ["steps"]:
        if name == "p":  # below the config's range: a live run must stay short
            controls.append(W.Slider("p", 5, 127, value=base.p, integer=True, description="p"))
        elif name == "steps":
            controls.append(W.Slider("steps", 100, STEPS_HIGH, value=base.steps, integer=True,
                                     step=100, description="steps"))
        else:
            controls += W.controls_for(base, [name])

    def work(**values):
        return run_work(**{**base.to_dict(), **values}, measures=progress_view)

    def go(update, **values):
        cfg = base.replace(**values)
        if progress_view and cfg.op not in FOURIER_OPS:
            raise ValueError(f"the Fourier progress measures need op in {FOURIER_OPS}, not {cfg.op!r}")
        live = update.every(_milestones(cfg.steps, lambda h: training_figure(
            h, title=_title(cfg), marks=False)))
        r = run(cfg, seed, on_eval=live, checkpoints=progress_view, bars=False)
        if update.stop_requested:  # stopped: draw what it has (the panel says "stopped")
            return training_figure(r, title=_title(cfg))
        update(status=r.status())
        if progress_view and not r.history.diverged and len(r.checkpoints) > 1:
            update(status=r.status() + " · measuring…")
            pm = progress_measures(r)
            update(status=r.status())
            return progress_figure(pm, title=_title(cfg))
        return training_figure(r, title=_title(cfg))

    note = (f"p = {base.p}, {base.train_frac:.0%} of the pairs for training, width "
            f"{base.width}, {base.steps:,} full-batch steps, seed {seed}; fit = train accuracy "
            f"> {FIT_ACC:.0%}, generalize = test accuracy > {GROK_ACC:.0%}." + says
            + _differs(base, profile, [c.name for c in controls]))
    return W.Panel(go, controls, title=title, note=note, above="live", work=work)


def training_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your p, operation, training fraction, weight decay, learning
    rate, width and optimizer (AdamW or Muon); the curves redraw while it trains."""
    return _run_panel(live_config(profile), ["p", "op", "train_frac", "weight_decay", "lr",
                                             "width", "optimizer"],
                      get_seed(seed), title="Try it: grokking live", profile=profile)


def progress_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the progress measures of one run (modular addition or subtraction)."""
    return _run_panel(live_config(profile), ["p", "op", "train_frac", "weight_decay", "lr"],
                      get_seed(seed), progress_view=True, title="Try it: progress measures live",
                      profile=profile)


def remedy_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with a remedy (Grokfast, ⊥Grad, StableMax), weight decay, optimizer
    and label noise of your choice. Its defaults run ⊥Grad without weight decay, as section 4
    does, a remedy whose effect shows at the panel's size: it generalizes within about a
    hundred steps (seeds 0-2: fit at step 73, generalized at 92), where the same run without
    it memorizes for the whole budget."""
    base = live_config(profile).replace(remedy="perp_grad", weight_decay=0.0)
    says = (" Its defaults run ⊥Grad (perp_grad) without weight decay, as section 4 does; "
            "the remedy none at weight decay 0 is the control, which memorizes.")
    return _run_panel(base, ["remedy", "weight_decay", "grokfast_alpha", "grokfast_lambda",
                             "label_noise", "optimizer"],
                      get_seed(seed), title="Try it: remedies live", profile=profile, says=says)


def live_phase_panel_config(profile: str | None = None):
    """The phase diagram the panel trains at its defaults: the page's live grid
    (:func:`~.experiments.live_phase_config`) at twice its learning rate for two thirds of its
    steps on a CPU (the cell with weight decay 1 at the larger fraction still groks, the cells
    without decay still memorize; seconds instead of the grid's), the grid itself on a GPU."""
    pcfg = live_phase_config(profile)
    if get_profile(profile) == "gpu":
        return pcfg
    return pcfg.replace(lr=2 * pcfg.lr, steps=pcfg.steps * 2 // 3)


def _waiting(fracs, decays, seed: int) -> list[PhaseRow]:
    """Rows for the cells not trained yet ("not run"), for the figure drawn row by row."""
    nan = float("nan")
    return [PhaseRow(train_frac=f, weight_decay=w, seed=seed, final_train_loss=nan,
                     final_train_acc=nan, final_test_loss=nan, final_test_acc=nan,
                     diverged=False, diverged_at=None, fit_step=None, grok_step=None,
                     end_train_acc=nan, best_train_acc=nan, end_test_acc=nan,
                     best_test_acc=nan, phase="not run") for f in fracs for w in decays]


def phase_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small phase diagram (training fraction x weight decay) with your p,
    learning rate, width and budget: each training fraction's models trained at once by the
    sweep engine, the diagram drawn row by row as they finish, with progress."""
    base = live_phase_panel_config(profile)
    seed = get_seed(seed)
    controls = [W.Slider("p", 5, 61, value=base.p, integer=True, description="p")]
    controls += W.controls_for(base, ["lr", "width"])
    controls.append(W.Slider("steps", 100, 5000, value=base.steps, integer=True, step=100,
                             description="steps"))
    fracs = sorted(base.train_fracs, reverse=True)  # the largest first: where grokking shows
    decays = list(base.weight_decays)

    def go(update, **values):
        pcfg = base.replace(**values, seeds=1)
        n = len(fracs) * len(decays)
        title = f"mod {pcfg.p}, {pcfg.steps:,} steps"
        update(status=f"training {n} models, {len(decays)} at a time…",
               fig=phase_figure(_waiting(fracs, decays, seed), title=title))  # a first result
        rows, job = [], P.current()
        for i, frac in enumerate(fracs):
            if update.stop_requested or job.stopped:  # the rows not reached: "not run"
                rows += _waiting([frac], decays, seed)
                continue
            with job.part(i, len(fracs)):
                out = run_phase_grid(pcfg.base(), [frac], decays, seeds=[seed],
                                     steps=pcfg.steps, bars=False)
            got = {r.weight_decay for r in out.rows}  # a dry run keeps fewer decays
            rows += out.rows + _waiting([frac], [w for w in decays if w not in got], seed)
            if i + 1 < len(fracs) and not (update.stop_requested or job.stopped):  # the rows so far, the rest waiting
                update(fig=phase_figure(rows + _waiting(fracs[i + 1:], decays, seed),
                                        title=title))
        bad = [r.phase for r in rows if r.phase in ("diverged", "not run", "stopped")]
        done = f"{n - bad.count('not run') - bad.count('stopped')} of {n} models trained"
        if bad.count("diverged"):
            done += f", {bad.count('diverged')} diverged"
        if not update.stop_requested:  # stopped: the panel says so; draw what ran
            update(status=done)
        return phase_figure(rows, title=title)

    def work(**values):
        v = {**base.to_dict(), **values}
        return phase_work(v["p"], v["width"], v["steps"], cells=len(fracs) * len(decays),
                          train_frac=sum(fracs) / len(fracs), n_evals=base.n_evals)

    page = live_phase_config(profile)
    differs = "" if page == base else (
        f" Its defaults train the page's live grid at learning rate {base.lr:g} for "
        f"{base.steps:,} steps (the grid above: {page.lr:g}, {page.steps:,}), so that it "
        f"finishes in seconds on a CPU")
    reach = _reach([n for n in ("lr", "steps") if getattr(page, n) != getattr(base, n)],
                   [c.name for c in controls])
    differs += f"; {reach}." if differs and reach else "." if differs else ""
    note = (f"training fractions {and_list(f'{f:g}' for f in base.train_fracs)}, weight decay "
            f"{and_list(f'{w:g}' for w in base.weight_decays)}, seed {seed}." + differs)
    return W.Panel(go, controls, title="Try it: a phase diagram live", note=note, above="live",
                   work=work)


PANELS = dict(training=training_panel, progress=progress_panel, remedy=remedy_panel,
              phase=phase_panel)


def panel(kind: str, profile: str | None = None, seed: int | None = None):
    """The page's "Try it" panel of ``kind``: ``"training"`` (section 1, one run live),
    ``"phase"`` (section 2, a small grid), ``"progress"`` (section 3, the progress measures)
    or ``"remedy"`` (section 4, a remedy, optimizer and label noise of your choice; ⊥Grad
    without weight decay by default)."""
    if kind not in PANELS:
        raise ValueError(f"unknown panel {kind!r}; choose one of {', '.join(PANELS)}")
    return PANELS[kind](profile, seed)
