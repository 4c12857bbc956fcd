"""Schedules and weight averaging: when to lower the learning rate, and why averaging the
weights can stand in for it (``chapters/schedules.ipynb``).

On noisy linear regression with power-law eigenvalues (capacity exponent) and target
coefficients (source exponent), the risk of one-pass SGD is known exactly in expectation, so
a schedule's effect can be computed rather than guessed: a constant rate stalls at a noise
floor, a decaying one keeps improving, and averaging the iterates does the decaying's work
without knowing the horizon (Meterez et al., anytime schedules). A cosine tuned to one horizon
is then read at every other. Sections 2-4 take the same questions to an MLP on MNIST-1D,
every schedule and seed one stacked model: cooldowns branched from one constant run against a
cosine per budget (Hägele et al.), the constant run's averages (``torch.optim.swa_utils``)
instead of a cooldown, and schedule-free AdamW (Defazio et al., the ``schedulefree`` package)
against a tuned cosine, beside the book's own schedule-free step. Section 5 returns to the
power-law model with decoupled weight decay: twin runs from two starts measure what a run
remembers of its start, on weight decay's clock ``lambda * sum(eta)`` rather than in steps.

Modules:

- :mod:`.science`: the schedules, the batched one-pass SGD on the power-law model, the exact
  expected risk of that recursion, the averaging step, and the configs (no plotting).
- :mod:`.experiments`: the chapter's runs (``run_*``) and the stacked trainer
  (``train_stacked``: a rate per model and step, AdamW or schedule-free).
- :mod:`.figures`: static figures and tables.
- :mod:`.panels`: live panels (``*_panel``): a figure the reader re-runs with widgets.
- :mod:`.valley`: section 2's river-valley toy (a steep, noisy hill direction and a flat,
  quiet river direction): noisy SGD's exact expected loss under any schedule, its noise
  floor in closed form, the simulation, and :func:`~.valley.run_valley`.
- :mod:`.claims`: the page's numbers and the claims table (``page_claims``,
  ``published_claims``).
"""
from . import claims, experiments, figures, panels, science, valley
from .experiments import run_anytime, run_clock, run_cooldown, run_schedulefree
from .figures import (anytime_figure, anytime_rows, exponent_figure, cooldown_figure,
    cooldown_rows, average_figure, schedulefree_figure, schedulefree_rows, clock_figure,
    conjecture_figure, wsd_norm_conjecture, valley_figure)
from .panels import anytime_panel, cooldown_panel
from .valley import run_valley, test_loss_notes, averaging_gap, valley_numbers
from .claims import (anytime_numbers, claim_runs, clock_numbers, cooldown_numbers, page_claims,
    schedulefree_numbers, exponent_numbers, cooldown_notes)

__all__ = ["run_anytime", "run_clock", "run_cooldown", "run_schedulefree", "anytime_figure",
           "anytime_rows", "exponent_figure", "cooldown_figure", "cooldown_rows",
           "average_figure", "schedulefree_figure", "schedulefree_rows", "clock_figure",
           "conjecture_figure", "wsd_norm_conjecture", "valley_figure", "anytime_panel",
           "cooldown_panel", "run_valley", "test_loss_notes", "averaging_gap", "valley_numbers",
           "anytime_numbers", "claim_runs", "clock_numbers", "cooldown_numbers", "page_claims",
           "schedulefree_numbers", "exponent_numbers", "cooldown_notes"]
