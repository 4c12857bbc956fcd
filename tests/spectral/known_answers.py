"""Public functions of the spectral theme's measure modules that compute no quantity the
page reports (tests/known.py): data, models and optimizers the runs are built from, samplers,
update rules checked against torch.optim.Muon, and the step timer."""
from dynamics.spectral import roles as R
from dynamics.spectral import science as S

NOT_MEASURES = {
    S.default_data: "a data set: MNIST-1D at the chapter's size",
    S.practice_data: "a data set: MNIST-1D or CIFAR-10 for the practice runs",
    S.mlp: "a model constructor: the practice MLP",
    S.muon_with_adamw: "an optimizer constructor: torch.optim.Muon on hidden matrices, AdamW on the rest",
    S.memory_task: "a data generator: Gaussian keys and values with power-law frequencies",
    S.random_matrix: "a data generator: test matrices with a chosen spectrum",
    S.momentum_direction: "an update rule, tested against torch.optim.Muon step for step",
    S.muon_update: "an update rule, tested against torch.optim.Muon step for step",
    R.random_unit_directions: "a sampler: the random unit directions the steepest table compares with",
    R.step_seconds: "a timer: wall-clock seconds of a step, shown and never asserted",
}
