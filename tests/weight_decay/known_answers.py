"""Weight decay's public functions of its measure modules that compute no quantity the page
reports (tests/test_known_answers.py): update rules, settings, data, runners, and the
window's figure, table, numbers and claims (built from :func:`~.window.fit_decay_time`,
which has its known-answer test)."""
from dynamics.weight_decay import science as S
from dynamics.weight_decay import together as T
from dynamics.weight_decay import window as W

NOT_MEASURES = {
    S.adam_step: "an update rule, tested against torch.optim.Adam and AdamW step by step",
    S.check_equilibrium_args: "input validation: raises a ValueError on a setting with no equilibrium",
    S.logspace: "a config helper: the grid's axis values",
    S.matched_runs: "a config helper: the clock experiment's (eta, lambda) settings",
    S.mnist1d_data: "a data set loader with the chapter's fixed data seed",
    T.run_equilibrium_many: "a runner: trains run_equilibrium's runs together; its measure is "
                            "StackedRotationMeter (known answer), and its runs equal "
                            "run_equilibrium's over a short run (test_experiments.py)",
    T.run_spectrum_many: "a runner: trains run_spectrum's runs together; its measures are "
                         "spectra.py's (known answers), and its runs equal run_spectrum's over a "
                         "short run (test_experiments.py)",
    T.run_clock_many: "a runner: run_clock for several seeds in one training; its measure is "
                      "final_loss (known answer), and it equals run_clock seed by seed over a "
                      "short run (test_experiments.py)",
    W.window_settings: "a config helper: the window experiment's (eta, lambda) settings",
    W.run_window: "a runner: trains the kicked pairs; its measure is fit_decay_time",
    W.window_figure: "a figure builder of the window's runs",
    W.window_rows: "a table builder of the window's runs",
    W.window_numbers: "the glue texts of the window's runs, formatted from fit_decay_time",
    W.window_claims: "claims rows judged from fit_decay_time's measured times",
}
