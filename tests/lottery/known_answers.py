"""Public functions of the lottery theme's measure modules that compute no quantity the page
reports (tests/test_known_answers.py): data, models, runners, figures, rows and formatting."""
from dynamics.lottery import finetune, science

NOT_MEASURES = {
    science.load_data: "loads a data set (MNIST-1D, digits or MNIST); no quantity",
    science.make_model: "builds the MLP with PyTorch's default initialization; no quantity",
    finetune.shifted_task: "a data transform (inputs reversed in time), tested in the runs",
    finetune.run_finetune: "a runner: trains and calls the measures updated, overlap, "
                           "live_overlap and update_rank, which are tested on known answers",
    finetune.finetune_figure: "draws run_finetune's numbers; computes nothing",
    finetune.finetune_numbers: "formats run_finetune's numbers (medians) for the prose",
    finetune.finetune_claims: "claims rows over run_finetune's measures; their verdicts are "
                              "tested in test_experiments.py",
}
