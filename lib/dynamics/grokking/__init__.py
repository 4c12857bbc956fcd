"""Grokking: a network memorizes its training set first and generalizes much later.

On a table of modular arithmetic ``a ∘ b mod p`` a small network fits its training pairs within
a few dozen steps and reaches high test accuracy many times later (Power et al. 2022). Weight
decay ends the plateau; during it the weights shrink and reorganize into a few Fourier features
(Nanda et al. 2023); a phase diagram over data and decay says when it happens at all (Liu et
al. 2022), and remedies (Grokfast, ⊥Grad, StableMax) shorten or remove the wait.

Modules:

- :mod:`.science`: configs, task and models, progress measures, remedies, phases (no plotting).
- :mod:`.experiments`: runners (``run``, ``seed_runs``, ``run_remedies``, ``corrupted_runs``,
  ``run_phase``, ``live_phase``) and ``precompute_plan``; what its page-time runners and the
  algorithm's return, field by field, is in :mod:`.records`.
- :mod:`.figures`: figures, sliders over precomputed data, and each experiment's ``table``.
- :mod:`.panels`: the live "Try it" panels (``panel(kind, ...)`` names them).
- :mod:`.claims`: the claims rows with their thresholds, ``page_claims`` and
  ``published_claims``.
- :mod:`.algorithm`: a section module, whole: the algorithm the network finds (the clock in
  its first layer, division as relabelled subtraction), the weight norm's descent (Omnigrok)
  and Muon against AdamW, with their runners, figures and claims rows.
- :mod:`.omnigrok`: Omnigrok's account on the runs started larger (x4 below the memorizing
  peak, x8 above it), a section module: the weight-norm measures, the figure of the norm beside
  the test accuracy, the large start's claims row and sentence.
- :mod:`.facts`: the numbers the prose says about a figure, computed from its data: the
  page's glued numbers per section (``section1_facts`` ... ``section4_facts``), and the
  measures the claims rows judge on the phase grid and the algorithm.

The package exports the names the notebooks call; the page prints other functions' source
through their module (``show_source(G.science.phase_of)``).
"""
from . import algorithm, claims, experiments, facts, figures, omnigrok, panels, science
from .science import GrokConfig, plateau_steps
from .experiments import (
    claim_seeds, corrupted_runs, live_phase, phase_data, progress_measures, run,
    run_remedies, seed_runs,
)
from .algorithm import clock_figure, neuron_figure, omnigrok_runs, optimizer_runs
from .omnigrok import norm_figure
from .figures import (
    corrupted_figure, curves_slider, phase_figure, phase_slider, progress_figure,
    remedies_figure, spectrum_figure, table, training_figure,
)
from .panels import panel
from .claims import page_claims
from .facts import section1_facts, section2_facts, section3_facts, section4_facts

__all__ = [
    "GrokConfig", "plateau_steps",
    "claim_seeds", "corrupted_runs", "live_phase", "phase_data",
    "progress_measures", "run", "run_remedies", "seed_runs",
    "clock_figure", "neuron_figure", "omnigrok_runs", "optimizer_runs", "norm_figure",
    "corrupted_figure", "curves_slider", "phase_figure", "phase_slider", "progress_figure",
    "remedies_figure", "spectrum_figure", "table", "training_figure",
    "panel",
    "page_claims", "section1_facts", "section2_facts", "section3_facts", "section4_facts",
]
