"""Grokking, the live panels: the "Try it" widgets of the page, each training in the
reader's kernel and redrawing while it trains (:func:`panel` names them by kind)."""
from __future__ import annotations

from .. import widgets as W
from ..runtime import get_seed
from .experiments import live_phase_config, progress_measures, run, run_phase
from .figures import phase_figure, progress_figure, training_figure
from .science import FIT_ACC, FOURIER_OPS, GROK_ACC, GrokConfig

__all__ = ["training_panel", "progress_panel", "remedy_panel", "phase_panel", "panel"]


# ============================================================================ live panels


def _title(cfg: GrokConfig) -> str:
    extra = "" if cfg.remedy == "none" else f", {cfg.remedy}"
    noise = f", {cfg.label_noise:.0%} noise" if cfg.label_noise else ""
    return f"{cfg.op} mod {cfg.p}, {cfg.train_frac:.0%} train, wd {cfg.weight_decay:g}{extra}{noise}"


def _run_panel(base: GrokConfig, names, seed: int, progress_view: bool = False, title: str = ""):
    """A live panel over some :class:`GrokConfig` fields: train one run, redraw while it
    trains (Stop ends it and shows what it has), and show the training curves (or, with
    ``progress_view``, the progress measures)."""
    controls = []
    for name in names:
        if name == "p":  # below the config's range: a live run must stay short
            controls.append(W.Slider("p", 5, 127, value=base.p, integer=True, description="p"))
        else:
            controls += W.controls_for(base, [name])

    def go(update, **values):
        cfg = base.replace(**values)
        if progress_view and cfg.op not in FOURIER_OPS:
            raise ValueError(f"the Fourier progress measures need op in {FOURIER_OPS}, not {cfg.op!r}")
        live = update.every(lambda h: training_figure(h, title=_title(cfg), marks=False))
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

    note = (f"{base.steps:,} full-batch steps, seed {seed}; fit = train accuracy > {FIT_ACC:.0%}, "
            f"generalize = test accuracy > {GROK_ACC:.0%}.")
    return W.Panel(go, controls, title=title, note=note, above="live")


def training_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with your p, operation, training fraction, weight decay, learning
    rate, width and optimizer (AdamW or Muon); the curves redraw while it trains."""
    base = GrokConfig.for_profile(profile)
    return _run_panel(base, ["p", "op", "train_frac", "weight_decay", "lr", "width", "optimizer"],
                      get_seed(seed), title="Try it: grokking live")


def progress_panel(profile: str | None = None, seed: int | None = None):
    """Try it: the progress measures of one run (modular addition or subtraction)."""
    base = GrokConfig.for_profile(profile)
    return _run_panel(base, ["p", "op", "train_frac", "weight_decay", "lr"], get_seed(seed),
                      progress_view=True, title="Try it: progress measures live")


def remedy_panel(profile: str | None = None, seed: int | None = None):
    """Try it: one run with a remedy (Grokfast, ⊥Grad, StableMax), weight decay, optimizer
    and label noise of your choice."""
    base = GrokConfig.for_profile(profile)
    return _run_panel(base, ["remedy", "weight_decay", "grokfast_alpha", "grokfast_lambda",
                             "label_noise", "optimizer"], get_seed(seed),
                      title="Try it: remedies live")


def phase_panel(profile: str | None = None, seed: int | None = None):
    """Try it: a small phase diagram (training fraction x weight decay) with your p,
    learning rate, width and budget, trained at once by the sweep engine, with progress."""
    base = live_phase_config(profile)
    seed = get_seed(seed)
    controls = [W.Slider("p", 5, 61, value=base.p, integer=True, description="p")]
    controls += W.controls_for(base, ["lr", "width"])
    controls.append(W.Slider("steps", 100, 5000, value=base.steps, integer=True, step=100,
                             description="steps"))

    def go(update, **values):
        pcfg = base.replace(**values, seeds=1)
        n = len(pcfg.train_fracs) * len(pcfg.weight_decays)
        update(status=f"training {n} models…")
        out = run_phase(pcfg, seed, bars=False)
        rows = out["rows"]
        bad = [r["phase"] for r in rows if r["phase"] in ("diverged", "not run", "stopped")]
        done = f"{n - bad.count('not run') - bad.count('stopped')} of {n} models trained"
        if bad.count("diverged"):
            done += f", {bad.count('diverged')} diverged"
        if not update.stop_requested:  # stopped: the panel says so; draw what ran
            update(status=done)
        return phase_figure(rows, title=f"mod {pcfg.p}, {pcfg.steps:,} steps")

    note = (f"training fractions {base.train_fracs} x weight decays {base.weight_decays}, "
            f"seed {seed}")
    return W.Panel(go, controls, title="Try it: a phase diagram live", note=note, above="live")


PANELS = dict(training=training_panel, progress=progress_panel, remedy=remedy_panel,
              phase=phase_panel)


def panel(kind: str, profile: str | None = None, seed: int | None = None):
    """The page's "Try it" panel of ``kind``: ``"training"`` (section 1, one run live),
    ``"phase"`` (section 2, a small grid), ``"progress"`` (section 3, the progress measures)
    or ``"remedy"`` (section 4, a remedy, optimizer and label noise of your choice)."""
    if kind not in PANELS:
        raise ValueError(f"unknown panel {kind!r}; choose one of {', '.join(PANELS)}")
    return PANELS[kind](profile, seed)
