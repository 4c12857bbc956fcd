"""Initialization: the public functions of the measure modules (science, meanfield, isometry,
width) that compute no quantity the page reports, each with its reason (tests/known.py)."""
from dynamics.initialization import isometry as I
from dynamics.initialization import meanfield as M
from dynamics.initialization import science as S
from dynamics.initialization import width as W

NOT_MEASURES = {
    S.mnist1d_data: "a data set: MNIST-1D at the requested size, cached per device",
    S.saxe_task: "a data generator: the patterns of Section 3 (their orthogonality and "
                 "strengths are checked in test_saxe_theory_and_task)",
    S.critical_mlp: "a model builder: an MLP at its activation's critical weight scale",
    S.deep_linear: "a model builder: a bias-free linear network of the chosen init",
    S.haar_orthogonal: "a weight generator: Haar-orthogonal matrices (checked orthogonal)",
    S.batched_qr: "a linear-algebra helper: torch.linalg.qr batched off the CPU (checked "
                  "against linalg.qr matrix by matrix)",
    S.random_weights: "a weight generator: one square layer per network of the ensemble",
    M.tanh_mlp: "a model builder: the random tanh network of mean-field theory",
    I.random_network: "a weight generator: the random square networks of the isometry runs",
    I.run_isometry: "a runner: sweeps network_jacobians and spectrum_stats over depths",
    I.isometry_figure: "a figure builder: draws run_isometry's result",
    I.isometry_numbers: "formats the numbers the prose glues from run_isometry's result",
    I.isometry_claims: "the claims rows: verdicts on measures tested here, by the claim tests",
    W.width_mlp: "a model builder: Section 5's MLP in SP or muP (its scales and moves are "
                 "checked against mup in test_width_mup.py)",
    W.load_effective_: "a setter: loads given effective weights into the model, in place",
    W.run_width: "a runner: trains the learning-rate sweeps of Section 5",
    W.width_claim_runs: "a runner: run_width on every claim seed",
    W.width_figure: "a figure builder: draws run_width's result",
    W.width_numbers: "formats the numbers the prose glues from run_width's result",
    W.width_claims: "the claims rows: verdicts on measures tested here, by the claim tests",
}
