"""The public functions of the collapse theme's measure modules (science, theory, losses) that
compute no quantity the page reports, each with its reason (tests/known.py,
tests/test_known_answers.py). Every other one has a @known_answer test in tests/collapse/."""
from dynamics.collapse import losses, science

NOT_MEASURES = {
    science.balanced_subset: "a data selector: the first C classes, balanced",
    science.cosine_schedule: "a learning-rate schedule (a factor per step), no measured quantity",
    science.linear_weights: "an accessor: the weight matrices of a model's linear part",
    science.load_data: "a data loader (digits, MNIST-1D, a Gaussian mixture)",
    science.make_model: "builds the network a config describes",
    science.ufm_data: "the index dataset of the unconstrained features model",
    losses.loss_figure: "draws recorded NC1 and NC4 histories; computes nothing itself",
    losses.loss_claims: "builds claims rows from recorded NC1 ratios (its rows are fed their "
                        "controls in test_experiments: each says no when the control is "
                        "the treatment)",
}
