"""dynamics.collapse.theory, section 4's exact solution of the imbalanced deep linear
unconstrained features model and the weight decay at which a class collapses to the origin:
against closed forms (one linear layer) and against dense grids of the two-variable problem
(deeper heads), which assume neither the code's elimination x = s√(N/n_c) nor its closed form.

The per-class problem (L linear layers, head included; s the singular value each layer gives
the class, x the norm of its features, a = n_c/N):

    f(s, x) = a/2 (s^L x − 1)² + λ L s²/2 + λ a x²/2,   f(0, 0) = a/2.

Some (s, x) ≠ 0 beats the origin exactly when λ < a (2p − p²) / (L s² + a x²), p = s^L x, so
the threshold is the supremum of that ratio over the quadrant: a grid gives it from below.
"""
import math

import numpy as np
import pytest

from dynamics.collapse import theory as T
from known import known_answer


def _objective(n_c, N, L, lam, s, x):
    a = n_c / N
    return a / 2 * (s ** L * x - 1) ** 2 + lam * L * s ** 2 / 2 + lam * a * x ** 2 / 2


def _grid(lo=1e-4, hi=30.0, k=1500):
    return np.geomspace(lo, hi, k)


def _grid_threshold(n_c, N, L):
    """sup over a dense (s, x) grid of a(2p − p²)/(L s² + a x²): the largest λ at which some
    point of the grid still beats the origin."""
    a = n_c / N
    s, x = np.meshgrid(_grid(hi=3.0), _grid())
    p = s ** L * x
    return float(np.max(a * (2 * p - p * p) / (L * s * s + a * x * x)))


@known_answer(T.collapse_weight_decay, T.minority_collapse_threshold,
              how="one linear layer: the class's problem is convex in s², its slope at 0 is "
                  "λ − √(n_c/N), so the threshold is √(n_c/N) in closed form (0.1 for 10 of 1,000)")
def test_one_layer_threshold_is_the_closed_form_square_root_of_the_class_share():
    assert T.minority_collapse_threshold([990, 10], 1) == pytest.approx(0.1, rel=1e-12)
    for counts in ([50, 50], [300, 60, 12], [7, 3, 1000]):
        N = sum(counts)
        for k, n_c in enumerate(counts):
            assert T.minority_collapse_threshold(counts, 1, rare=k) == pytest.approx(
                math.sqrt(n_c / N), rel=1e-12)
    # and from below by the grid of the two-variable problem (its supremum is the limit p → 0)
    assert 0.099 < _grid_threshold(10, 1000, 1) <= 0.1


@pytest.mark.parametrize("L", [2, 3, 4])
@pytest.mark.parametrize("n_c,N", [(10, 1000), (20, 370), (100, 400)])
@known_answer(T.collapse_weight_decay, T.minority_collapse_threshold,
              how="deeper heads: the supremum over a dense (s, x) grid of the two-variable "
                  "problem of the largest decay at which a point still beats the origin")
def test_deeper_threshold_matches_a_dense_grid_of_the_two_variable_problem(L, n_c, N):
    exact = T.collapse_weight_decay(n_c, N, L)
    grid = _grid_threshold(n_c, N, L)
    assert grid <= exact * (1 + 1e-12)  # a grid can only see less than the supremum
    assert grid == pytest.approx(exact, rel=2e-4)


@known_answer(T.imbalanced_ufm_solution, T.minority_collapse_threshold,
              how="at the threshold the rare class is exactly zero above it and alive below: "
                  "for L = 1 its output is 1 − λ/√(n_c/N) (the linear problem in p), for L = 3 "
                  "it jumps from p* = 2(1−q)/(2−q) = 2/3, the tangent point of the closed form")
def test_the_rare_class_is_exactly_zero_above_its_threshold_and_alive_below():
    counts = [990, 10]
    for L in (1, 3):
        lam = T.minority_collapse_threshold(counts, L)
        for above in (lam * (1 + 1e-9), lam * 1.01, lam * 1.15, 0.5, 5.0):
            sol = T.imbalanced_ufm_solution(counts, above, L)
            assert sol["classifier_norm"][-1] == 0 and sol["feature_norm"][-1] == 0
            assert sol["classifier_norm"][0] > 0 or above > T.collapse_weight_decay(990, 1000, L)
        below = T.imbalanced_ufm_solution(counts, lam * (1 - 1e-6), L)
        assert below["classifier_norm"][-1] > 0 and below["classifier_norm"][0] > 0
    # the case: between 0.1 and 0.1147 the old search kept a round-off minimum
    # near s = 1e-8 and called the class alive; the rare class is zero at every λ >= 0.1
    for lam in np.linspace(0.1, 0.2, 41):
        assert T.imbalanced_ufm_solution(counts, lam, 1)["classifier_norm"][-1] == 0
    for lam in (0.02, 0.05, 0.09, 0.099):
        p = T.imbalanced_ufm_solution(counts, lam, 1)["output"][-1]
        assert p == pytest.approx(1 - lam / 0.1, rel=1e-6, abs=1e-9)
    lam3 = T.minority_collapse_threshold(counts, 3)
    assert T.imbalanced_ufm_solution(counts, lam3 * (1 - 1e-7), 3)["output"][-1] == pytest.approx(
        2 / 3, rel=1e-3)


@pytest.mark.parametrize("L", [1, 2, 3])
@known_answer(T.imbalanced_ufm_solution,
              how="each class's norms are the global minimum of its two-variable problem: no "
                  "point of a dense (s, x) grid, the origin included, is lower")
def test_imbalanced_solution_is_the_minimum_of_a_dense_grid(L):
    counts = [300, 60, 12]
    N = sum(counts)
    s, x = np.meshgrid(_grid(hi=3.0), _grid())
    thresholds = [T.collapse_weight_decay(n, N, L) for n in counts]
    # decays on both sides of every class's threshold, and near each
    lams = sorted({5e-3, *[t * f for t in thresholds for f in (0.9, 0.999, 1.001, 1.2)]})
    for lam in lams:
        sol = T.imbalanced_ufm_solution(counts, lam, L)
        for c, n_c in enumerate(counts):
            s_c = sol["classifier_norm"][c]
            x_c = sol["feature_norm"][c] / s_c ** (L - 1) if s_c > 0 else 0.0
            ours = _objective(n_c, N, L, lam, s_c, x_c)
            grid = min(float(np.min(_objective(n_c, N, L, lam, s, x))), n_c / N / 2)
            assert ours <= grid + 1e-12, (L, lam, c)
            assert (s_c == 0) == (lam >= thresholds[c])


def test_the_threshold_refuses_bad_input_clearly():
    with pytest.raises(ValueError, match="n_c"):
        T.collapse_weight_decay(0, 10)
    with pytest.raises(ValueError, match="linear_depth"):
        T.collapse_weight_decay(1, 10, 0)
    with pytest.raises(ValueError, match="rare"):
        T.minority_collapse_threshold([10, 5], 1, rare=4)
    with pytest.raises(ValueError, match="counts"):
        T.minority_collapse_threshold([10], 1)
