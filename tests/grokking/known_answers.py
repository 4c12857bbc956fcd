"""The public functions of the grokking theme's measure modules (science, algorithm) that
compute no quantity the page reports, each with its reason (tests/known.py,
tests/test_known_answers.py). Every other one has a @known_answer test in tests/grokking/."""
from dynamics.grokking import algorithm as A
from dynamics.grokking import omnigrok as O
from dynamics.grokking import science as S

NOT_MEASURES = {
    # science: the task, the models and their recipes
    S.make_data: "the task's split (data.modular_arithmetic), with corrupted labels if asked",
    S.corrupt_labels: "a data generator: replaces a fraction of the labels by wrong ones "
                      "(its count and that each is wrong are tested in test_science)",
    S.make_model: "builds the network a config describes",
    S.optimizer_for: "a config helper: the optimizer of a model's recipe (its betas are "
                     "tested per model and profile)",
    S.pair_index: "an indexing helper: the row a·p + b of each input pair",
    S.all_pairs: "a data generator: every pair (a, b) as one-hot vectors or tokens",
    S.pair_logits: "evaluates a model on all pairs; the logits are the input of the "
                   "measures, not one",
    S.input_weights: "an accessor: the weights that read the residues, reshaped",
    S.orthogonal_grad_: "an update rule (⊥Grad), tested against its formula: no radial "
                        "component, the gradient's norm kept",
    S.loss_and_hook: "a config helper: the loss and gradient hook of a remedy",
    # algorithm: the runners, the optimizer recipes, the figures and the claims rows
    A.initial_model: "an accessor: a run's network at step 0",
    A.scale_init_: "an initialization modifier: multiplies every parameter by a factor",
    A.run_scaled: "a runner: trains one run from a scaled initialization",
    A.omnigrok_runs: "a runner: the init-scale control on each seed",
    A.muon_groups: "a config helper: which parameters Muon trains and which AdamW does "
                   "(tested by name in test_algorithm)",
    A.grok_muon: "an optimizer factory (torch.optim.Muon with AdamW on the rest)",
    A.adamw_config: "a config helper: AdamW at another learning rate with the recipe's "
                    "clock ηλ (tested in test_algorithm)",
    A.run_optimizer: "a runner: one run with a given optimizer and learning rate",
    A.optimizer_runs: "a runner: each optimizer's budget of learning rates, then its best "
                      "on every seed",
    A.clock_figure: "draws clock_points of the trained and the initial network; computes "
                    "nothing itself",
    A.neuron_figure: "draws the top frequencies clock_measures found; computes nothing itself",
    A.optimizer_table: "tabulates the grok steps optimizer_runs recorded",
    # omnigrok: its figure
    O.norm_figure: "draws recorded weight-norm and test-accuracy histories",
}
