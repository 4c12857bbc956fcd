"""dynamics.collapse.science: the measures against numpy and exact geometries (float32 against
a float64 reference, with stated tolerances), the conditions of Jacot et al., the models, the
imbalanced solution, the configs and the data, and clear errors for bad inputs."""
import math

import numpy as np
import pytest
import torch

from dynamics import collapse as NC
from dynamics.collapse import science as S
from dynamics.train import History
from known import known_answer


# ----------------------------------------------------------------------------- helpers


def etf_features(C=4, d=7, n=5, offset=3.0, seed=0):
    """n copies of each vertex of a simplex ETF in R^d, shifted by a common vector."""
    etf = NC.theory.simplex_etf(C, d, seed=seed)
    shift = offset * torch.randn(d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed + 1))
    h = etf.repeat_interleave(n, dim=0) + shift
    y = torch.arange(C).repeat_interleave(n)
    return h, y, etf


def numpy_metrics(h, y, W, b=None):
    """The definitions of Papyan, Han & Donoho (2020), translated directly into numpy
    (d x d covariances, a pseudo-inverse), in float64."""
    h, W = np.asarray(h, float), np.asarray(W, float)
    C, N = W.shape[0], len(h)
    means = np.stack([h[y == c].mean(0) for c in range(C)])
    mu_g = h.mean(0)
    M = means - mu_g
    dev = h - means[y]
    sigma_w = dev.T @ dev / N
    sigma_b = M.T @ M / C
    nc1 = np.trace(sigma_w @ np.linalg.pinv(sigma_b, rcond=1e-10)) / C
    norms = np.linalg.norm(M, axis=1)
    Mn = M / norms[:, None]
    cos = Mn @ Mn.T
    off = ~np.eye(C, dtype=bool)
    G = M @ M.T
    etf = (np.eye(C) - np.ones((C, C)) / C) / np.sqrt(C - 1)
    Wc = W - W.mean(0)
    logits = h @ W.T + (0 if b is None else np.asarray(b, float))
    dists = ((h[:, None, :] - means[None]) ** 2).sum(-1)
    R = means / np.linalg.norm(means, axis=1, keepdims=True)
    return dict(nc1=nc1, equinorm=norms.std() / norms.mean(),
                equiangularity=np.abs(cos[off] + 1 / (C - 1)).mean(),
                etf_distance=np.linalg.norm(G / np.linalg.norm(G) - etf),
                nc3=np.linalg.norm(W / np.linalg.norm(W) - M / np.linalg.norm(M)) ** 2,
                nc3_centred=np.linalg.norm(Wc / np.linalg.norm(Wc) - M / np.linalg.norm(M)) ** 2,
                nc4=np.mean(logits.argmax(1) != dists.argmin(1)),
                orthogonality=np.abs((R @ R.T)[off]).mean())


def clustered(C=5, d=9, N=80, spread=2.0, seed=3, dtype=torch.float64, counts=None):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(N) % C if counts is None else torch.cat([torch.full((n,), c) for c, n in enumerate(counts)])
    centres = spread * torch.randn(C, d, generator=g, dtype=torch.float64)
    h = torch.randn(len(y), d, generator=g, dtype=torch.float64) + centres[y]
    W = torch.randn(C, d, generator=g, dtype=torch.float64)
    b = torch.randn(C, generator=g, dtype=torch.float64)
    return h.to(dtype), y, W.to(dtype), b.to(dtype)


def floats(d):
    return {k: float(v) for k, v in d.items()}


# ----------------------------------------------------------------------------- the measures


@pytest.mark.parametrize("C,d", [(2, 3), (4, 7), (10, 16)])
@known_answer(S.nc_metrics, S.nc1, S.nc2, S.nc3, S.nc4, S.class_means,
              how="copies of the vertices of a simplex ETF, shifted, with a self-dual classifier "
                  "and a bias removing the shift: every collapse measure is 0 by definition, and "
                  "adding one vector to every row of W moves Papyan's NC3 alone")
def test_every_measure_is_zero_at_exact_collapse_onto_a_simplex_etf(C, d):
    h, y, etf = etf_features(C, d)
    W = 2.5 * etf                      # self-dual: W ∝ M
    b = -W @ h.mean(0)                 # the bias removes the global mean
    m = floats(NC.science.nc_metrics(h, y, W, b))
    assert set(m) == set(NC.science.METRICS)
    for key, value in m.items():
        if key != "orthogonality":     # the shifted (uncentred) means are not orthogonal
            assert abs(value) < 1e-10, (key, value)
    # a vector added to every row of W changes no decision: only Papyan's NC3 sees it
    shifted = floats(NC.science.nc_metrics(h, y, W + torch.randn(d, dtype=torch.float64), b))
    assert shifted["nc3"] > 0.01 and abs(shifted["nc3_centred"]) < 1e-10 and shifted["nc4"] == 0


@pytest.mark.parametrize("C", [2, 4, 10])
@known_answer(S.nc_metrics, S.orthogonality, NC.theory.bias_free_nc3,
              how="orthogonal raw class means of equal length and a bias-free head W ∝ R: "
                  "orthogonality 0, and Papyan's NC3 equals 2 − 2√((C−1)/C), the cosine of "
                  "a centred orthogonal frame with itself, 0.1026 for C = 10")
def test_a_bias_free_head_collapses_onto_an_orthogonal_frame_where_papyans_nc3_is_not_zero(C):
    d = C + 3
    R = 3.0 * torch.linalg.qr(torch.randn(d, C, dtype=torch.float64))[0].T  # orthogonal raw means
    h, y = R.repeat_interleave(4, 0), torch.arange(C).repeat_interleave(4)
    m = floats(NC.science.nc_metrics(h, y, 0.7 * R))                                  # W ∝ raw means, no bias
    for key in ("nc1", "equinorm", "equiangularity", "etf_distance", "nc3_centred", "nc4", "orthogonality"):
        assert abs(m[key]) < 1e-10, (key, m[key])
    assert m["nc3"] == pytest.approx(NC.theory.bias_free_nc3(C), rel=1e-10)
    assert NC.theory.bias_free_nc3(10) == pytest.approx(0.1026334, rel=1e-6)


@known_answer(S.nc1, S.nc3, S.nc4, S.nc_metrics,
              how="two classes at ±1 on a line, each example ±σ from its mean: Σ_W = σ², "
                  "Σ_B = 1, NC1 = σ²/C; a classifier W = −M decides against the nearest centre "
                  "on every example (NC4 = 1) and NC3 = ‖−M/‖M‖ − M/‖M‖‖² = 4")
def test_nc1_nc3_nc4_on_a_line_with_known_spread_and_a_reversed_classifier():
    for sigma in (0.1, 0.5, 2.0):
        h = torch.tensor([[-1 - sigma], [-1 + sigma], [1 - sigma], [1 + sigma]], dtype=torch.float64)
        y = torch.tensor([0, 0, 1, 1])
        means, _ = S.class_means(h, y, 2)
        assert means.flatten().tolist() == [-1.0, 1.0]
        assert float(S.nc1(h, y, means)) == pytest.approx(sigma ** 2 / 2, rel=1e-12)
        W = -means  # the centred means are ±1: W = −M
        m = floats(S.nc_metrics(h, y, W))
        assert m["nc1"] == pytest.approx(sigma ** 2 / 2, rel=1e-12)
        assert m["nc3"] == pytest.approx(4.0, rel=1e-12)
        assert m["nc4"] == 1.0  # every example: the nearest centre's sign, the opposite decision


@known_answer(S.cosine_gram, S.orthogonality,
              how="orthogonal raw means: cosines the identity and orthogonality 0; centred, "
                  "equal lengths give the simplex's −1/(C−1) off the diagonal (exercise 2's "
                  "algebra); a simplex's raw means have mean |cos| 1/(C−1)")
def test_cosines_of_orthogonal_and_simplex_means_are_known():
    for C in (2, 3, 5):
        R = 2.0 * torch.linalg.qr(torch.randn(C + 2, C, dtype=torch.float64,
                                              generator=torch.Generator().manual_seed(C)))[0].T
        assert torch.allclose(S.cosine_gram(R, centre=False), torch.eye(C, dtype=torch.float64), atol=1e-12)
        assert float(S.orthogonality(R)) == pytest.approx(0.0, abs=1e-12)
        centred = S.cosine_gram(R)  # centred first: a simplex
        expect = torch.full((C, C), -1.0 / (C - 1), dtype=torch.float64) + torch.eye(C, dtype=torch.float64) * C / (C - 1)
        assert torch.allclose(centred, expect, atol=1e-12)
        etf = NC.theory.simplex_etf(C, C + 1)
        assert float(S.orthogonality(etf)) == pytest.approx(1 / (C - 1), rel=1e-12)


@known_answer(S.measure, S.mean_geometry,
              how="an unconstrained features model whose features are set to orthogonal vectors "
                  "of lengths 1, 2, 3 and whose head is 0.7 times them: NC1 0, angles 90°, "
                  "feature norms 1, 2, 3, classifier norms 0.7, 1.4, 2.1, NC3 the bias-free value")
def test_measure_and_mean_geometry_on_a_model_set_to_a_known_geometry():
    from dynamics import data as D

    C, n, d = 3, 4, 5
    R = torch.linalg.qr(torch.randn(d, C, dtype=torch.float64,
                                    generator=torch.Generator().manual_seed(0)))[0].T
    R = R * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)[:, None]
    model = S.UnconstrainedFeatures(C * n, d, C).double()
    y = torch.arange(C).repeat_interleave(n)
    with torch.no_grad():
        model.z.copy_(R[y] / model.scale)
        model.head.weight.copy_(0.7 * R)
    x = torch.arange(C * n)
    m = S.measure(model, x, y)
    assert m["nc1"] == pytest.approx(0.0, abs=1e-12) and m["orthogonality"] == pytest.approx(0.0, abs=1e-12)
    assert m["nc4"] == 0.0
    geo = S.mean_geometry(model, D.Dataset(x, y, x, y, C))
    assert np.allclose(geo["feature_norm"], [1, 2, 3], atol=1e-12)
    assert np.allclose(geo["classifier_norm"], [0.7, 1.4, 2.1], atol=1e-12)
    off = ~np.eye(C, dtype=bool)
    assert np.allclose(geo["angles"][off], 90.0, atol=1e-9)
    assert list(geo["counts"]) == [n] * C


def test_measures_match_papyans_definitions_computed_directly_in_numpy():
    h, y, W, b = clustered()
    ours = floats(NC.science.nc_metrics(h, y, W, b))
    ref = numpy_metrics(h.numpy(), y.numpy(), W.numpy(), b.numpy())
    for key in NC.science.METRICS:
        assert ours[key] == pytest.approx(ref[key], rel=1e-8, abs=1e-12), key
    assert 0 < ours["nc4"] < 1  # random weights disagree with the nearest centre somewhere


def test_measures_match_numpy_with_imbalanced_classes_and_fewer_dims_than_classes():
    h, y, W, b = clustered(C=4, d=6, counts=[40, 20, 10, 5])
    ours, ref = floats(NC.science.nc_metrics(h, y, W, b)), numpy_metrics(h.numpy(), y.numpy(), W.numpy(), b.numpy())
    for key in NC.science.METRICS:
        assert ours[key] == pytest.approx(ref[key], rel=1e-8, abs=1e-12), key
    h, y, W, _ = clustered(C=6, d=3, N=60, spread=3.0, seed=4)  # d < C - 1: Σ_B has rank d
    ours, ref = floats(NC.science.nc_metrics(h, y, W)), numpy_metrics(h.numpy(), y.numpy(), W.numpy())
    for key in NC.science.METRICS:
        assert ours[key] == pytest.approx(ref[key], rel=1e-8, abs=1e-12), key


@pytest.mark.parametrize("spread", [0.3, 3.0, 30.0])
def test_float32_measures_agree_with_a_float64_reference_to_stated_tolerances(spread):
    """The book measures in float32 (the features' dtype): on a hot-path-sized problem
    (2,000 x 256, 10 classes) every measure agrees with the float64 numpy reference to a
    relative 1e-4 (NC1 from 10⁻³ to 10³ included)."""
    h, y, W, b = clustered(C=10, d=256, N=2000, spread=spread, seed=7)
    ours = floats(NC.science.nc_metrics(h.float(), y, W.float(), b.float()))
    ref = numpy_metrics(h.numpy(), y.numpy(), W.numpy(), b.numpy())
    assert {str(v.dtype) for v in NC.science.nc_metrics(h.float(), y, W.float()).values()} == {"torch.float32"}
    for key in NC.science.METRICS:
        if key == "nc4":
            assert abs(ours[key] - ref[key]) <= 2 / 2000  # an exact tie may break either way
        else:
            assert ours[key] == pytest.approx(ref[key], rel=1e-4, abs=1e-7), key


def test_float32_nc1_resolves_a_nearly_collapsed_geometry():
    """Features collapsed to 1e-5 of their spread: float32 NC1 (~1e-10) within 1% of float64."""
    h, y, etf = etf_features(10, 32, n=50)
    h = h + 1e-5 * torch.randn(h.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    ref = float(NC.science.nc1(h, y, NC.science.class_means(h, y, 10)[0]))
    h32 = h.float()
    ours = float(NC.science.nc1(h32, y, NC.science.class_means(h32, y, 10)[0]))
    assert 1e-12 < ref < 1e-8
    assert ours == pytest.approx(ref, rel=0.01)


def test_nc1_is_a_sum_of_squares_never_negative_when_the_means_nearly_lose_a_dimension():
    """Class means that nearly span fewer than C − 1 directions (a tiny eigenvalue of MMᵀ that
    Σ_B⁺ inverts): float32 NC1 is computed as a sum of squares, so round-off cannot make it
    negative (a cross-entropy run once printed NC1 = −5.9), and it agrees with float64."""
    for seed in range(5):
        g = torch.Generator().manual_seed(seed)
        C, d, N = 10, 64, 400
        y = torch.arange(N) % C
        base = torch.randn(C, d, generator=g, dtype=torch.float64)
        Q = torch.linalg.qr(torch.randn(d, 4, generator=g, dtype=torch.float64)).Q
        mu = base @ Q @ Q.T + 1e-3 * base           # six of nine directions 1000x shorter
        h = mu[y] + 0.1 * torch.randn(N, d, generator=g, dtype=torch.float64)
        ref = float(NC.science.nc1(h, y, NC.science.class_means(h, y, C)[0]))
        ours = float(NC.science.nc1(h.float(), y, NC.science.class_means(h.float(), y, C)[0]))
        assert ours >= 0 and ours == pytest.approx(ref, rel=1e-3)


def test_measures_are_invariant_to_the_scale_of_features_and_classifier():
    h, y, W, b = clustered(C=4, d=6, N=40, spread=1.0, seed=5)
    base = floats(NC.science.nc_metrics(h, y, W, b))
    for s in (1e-3, 37.0):
        scaled = floats(NC.science.nc_metrics(s * h, y, 0.1 * W, 0.1 * s * b))
        for key in NC.science.METRICS:
            assert scaled[key] == pytest.approx(base[key], rel=1e-9, abs=1e-12), (key, s)


def test_nc1_is_nan_when_all_class_means_coincide():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(6, 4, dtype=torch.float64, generator=g)
    h = torch.cat([a, -a])                 # each class holds some a and their -a: every mean is 0
    y = torch.tensor([0, 0, 1, 1, 2, 2] * 2)
    assert math.isnan(float(NC.science.nc1(h, y, NC.science.class_means(h, y, 3)[0])))


def test_measures_reject_bad_inputs_clearly():
    h, y, etf = etf_features(3, 4)
    with pytest.raises(ValueError, match="labels must lie"):
        NC.science.nc_metrics(h, y + 1, etf)
    with pytest.raises(ValueError, match="no examples"):
        NC.science.nc_metrics(h[y != 1], torch.where(y[y != 1] == 2, 2, 0), etf)
    with pytest.raises(ValueError, match="expected"):
        NC.science.nc_metrics(h, y, etf[:, :2])
    with pytest.raises(ValueError, match="matrix"):
        NC.science.nc_metrics(h[:, 0], y, etf)
    with pytest.raises(ValueError, match="at least 2 classes"):
        NC.science.class_means(h, torch.zeros_like(y), 1)
    with pytest.raises(ValueError):
        NC.theory.bias_free_nc3(1)


@known_answer(NC.theory.simplex_etf, NC.theory.etf_gram,
              how="a simplex ETF's Gram matrix is 1 on the diagonal and −1/(C−1) off it, "
                  "written out here, and its vertices sum to zero")
def test_simplex_etf_has_unit_rows_equal_angles_and_zero_mean():
    for C, d in ((3, 3), (4, 3), (5, 12)):
        etf = NC.theory.simplex_etf(C, d)
        assert etf.shape == (C, d)
        gram = torch.full((C, C), -1.0 / (C - 1), dtype=torch.float64)
        gram.fill_diagonal_(1.0)
        assert torch.allclose(NC.theory.etf_gram(C), gram, atol=1e-15)
        assert torch.allclose(etf @ etf.T, gram, atol=1e-12)
        assert torch.allclose(etf.sum(0), torch.zeros(d, dtype=torch.float64), atol=1e-12)
    with pytest.raises(ValueError):
        NC.theory.simplex_etf(5, 2)


@known_answer(S.terminal_phase_start, S.at_zero_error,
              how="a constructed history whose training accuracy first reaches 1 at step 20: "
                  "the terminal phase starts there and NC1 there is 1/21")
def test_terminal_phase_starts_at_the_first_zero_error_evaluation_and_is_none_otherwise():
    h = History()
    for step, acc in ((0, 0.1), (10, 0.9), (20, 1.0), (30, 1.0)):
        h.append(step, train_acc=acc, nc1=1.0 / (step + 1))
    assert NC.science.terminal_phase_start(h) == 20
    assert NC.science.at_zero_error(h, "nc1") == pytest.approx(1 / 21)
    assert NC.science.terminal_phase_start(History()) is None  # diverged before the first evaluation
    assert NC.science.terminal_phase_start(History(diverged_at=1, info=dict(steps=10))) is None
    assert math.isnan(NC.science.at_zero_error(History(), "nc1"))
    never = History()
    never.append(0, train_acc=0.5)
    assert NC.science.terminal_phase_start(never) is None


# ----------------------------------------------------------------------------- the conditions


@known_answer(S.balancedness,
              how="layers built from shared singular vectors, W2ᵀW2 = W1W1ᵀ exactly: 0; "
                  "otherwise the Frobenius norm of the gap written out in the test")
def test_balancedness_is_zero_for_balanced_layers_and_rejects_layers_that_do_not_chain():
    g = torch.Generator().manual_seed(0)
    d = 5
    U, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    S_ = torch.diag(torch.tensor([3.0, 2.0, 1.0, 0.5, 0.1], dtype=torch.float64))
    W1, W2 = U @ S_ @ V.T, Q @ S_ @ U.T  # W2ᵀW2 = U S² Uᵀ = W1 W1ᵀ
    assert float(NC.science.balancedness([W1, W2])) < 1e-12
    W3 = torch.randn(3, d, generator=g, dtype=torch.float64)
    gap = W3.T @ W3 - W1 @ W1.T
    assert float(NC.science.balancedness([W1, W3], relative=False)) == pytest.approx(float(gap.norm()))
    assert float(NC.science.balancedness([W1, W3])) == pytest.approx(
        float(gap.norm() / (0.5 * ((W3.T @ W3).norm() + (W1 @ W1.T).norm()))))
    # scale-free when relative: both layers x 10 multiply the absolute gap by 100
    assert float(NC.science.balancedness([10 * W1, 10 * W3])) == pytest.approx(float(NC.science.balancedness([W1, W3])))
    with pytest.raises(ValueError):
        NC.science.balancedness([W1])
    with pytest.raises(ValueError, match="chain"):
        NC.science.balancedness([W1, torch.randn(3, 4, dtype=torch.float64)])


@known_answer(S.balancedness,
              how="gradient flow conserves D = W2ᵀW2 − W1W1ᵀ and weight decay λ shrinks it "
                  "by exp(−2ληt): both laws, on small-step gradient descent")
def test_gradient_descent_conserves_the_imbalance_and_weight_decay_makes_it_decay():
    """Small-step gradient descent on a linear chain keeps D = W2ᵀW2 − W1W1ᵀ (no decay) and
    shrinks it by exp(−2ληt) with weight decay λ: the law the chapter's text states."""
    def gap_after(weight_decay, steps=400, lr=0.01):
        torch.manual_seed(0)
        x, t = torch.randn(50, 4), torch.randn(50, 3)
        w1 = torch.nn.Parameter(torch.randn(6, 4) * 0.5)
        w2 = torch.nn.Parameter(torch.randn(3, 6) * 0.5)
        opt = torch.optim.SGD([w1, w2], lr=lr, weight_decay=weight_decay)
        before = NC.science.balancedness([w1.detach(), w2.detach()], relative=False)
        d0 = (w2.T @ w2 - w1 @ w1.T).detach().clone()
        for _ in range(steps):
            opt.zero_grad()
            (0.5 * (x @ w1.T @ w2.T - t).pow(2).sum(1).mean()).backward()
            opt.step()
        d1 = (w2.T @ w2 - w1 @ w1.T).detach()
        after = NC.science.balancedness([w1.detach(), w2.detach()], relative=False)
        return float((d1 - d0).norm() / d0.norm()), float(after / before)

    drift, kept = gap_after(0.0)
    assert drift < 0.02 and kept == pytest.approx(1.0, abs=0.02)
    _, shrink = gap_after(0.5)
    assert shrink == pytest.approx(math.exp(-2 * 0.5 * 0.01 * 400), rel=0.1)


@known_answer(S.conditioning,
              how="features built with singular values 8, 4, 2, 1: s1/s3 = 4, s1/s4 = 8")
def test_conditioning_is_the_ratio_of_singular_values_in_float32_to_a_stated_tolerance():
    g = torch.Generator().manual_seed(1)
    U, _ = torch.linalg.qr(torch.randn(2000, 4, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(6, 4, generator=g, dtype=torch.float64))
    X = U @ torch.diag(torch.tensor([8.0, 4.0, 2.0, 1.0], dtype=torch.float64)) @ V.T
    assert float(NC.science.conditioning(X, 3)) == pytest.approx(4.0, rel=1e-10)
    assert float(NC.science.conditioning(X.T, 4)) == pytest.approx(8.0, rel=1e-10)  # N < d: the N x N Gram
    # float32 on realistic features (2,000 x 128): within 1e-4 of float64 svdvals
    F = torch.relu(torch.randn(2000, 128, generator=g, dtype=torch.float64) + 0.5)
    s = torch.linalg.svdvals(F)
    assert NC.science.conditioning(F.float(), 10).dtype == torch.float32
    assert float(NC.science.conditioning(F.float(), 10)) == pytest.approx(float(s[0] / s[9]), rel=1e-4)
    with pytest.raises(ValueError):
        NC.science.conditioning(X, 7)


# ----------------------------------------------------------------------------- models and measuring


def test_measure_matches_nc_metrics_on_the_model_features_and_reports_divergence_as_nan():
    torch.manual_seed(0)
    model = NC.science.CollapseNet(5, 16, 2, 3, 4).double()
    x = torch.randn(40, 5, dtype=torch.float64)
    y = torch.arange(40) % 4
    m = NC.science.measure(model, x, y, conditions=True)
    ref = floats(NC.science.nc_metrics(model.features(x).detach(), y, model.head.weight.detach()))
    for key in NC.science.METRICS:
        assert m[key] == pytest.approx(ref[key], rel=1e-9)
    assert m["balancedness"] > 0 and m["imbalance"] > 0 and m["conditioning"] >= 1
    with torch.no_grad():
        model.body[0].weight.fill_(float("inf"))
    bad = NC.science.measure(model, x, y, conditions=True)
    assert set(bad) == set(NC.science.METRICS + NC.science.CONDITIONS)
    assert all(math.isnan(v) for v in bad.values())


def test_models_validate_and_expose_features_and_head():
    with pytest.raises(ValueError):
        NC.science.CollapseNet(5, 16, 2, 0, 4)
    with pytest.raises(ValueError, match="activation"):
        NC.science.CollapseNet(5, 16, 2, 2, 4, activation="gelu")
    net = NC.science.CollapseNet(5, 16, 2, 2, 4, activation="tanh")
    assert float(net.body_features(torch.randn(3, 5)).detach().abs().max()) <= 1.0
    with pytest.raises(ValueError):
        NC.science.UnconstrainedFeatures(3, 4, 5)
    ufm = NC.science.UnconstrainedFeatures(12, 6, 3, linear_depth=2)
    idx = torch.arange(12)
    assert ufm.features(idx).shape == (12, 6) and ufm(idx).shape == (12, 3)
    assert len(NC.science.linear_weights(ufm)) == 2
    with pytest.raises(ValueError):
        NC.science.ufm_data([3, 0, 2])


def test_configs_validate_and_every_profile_preset_constructs():
    for profile in ("smoke", "cpu", "gpu"):
        NC.CollapseConfig.for_profile(profile)
        NC.UFMConfig.for_profile(profile)
        NC.ImbalanceConfig.for_profile(profile)
    assert NC.CollapseConfig.for_profile("gpu").dataset == "mnist"
    with pytest.raises(ValueError):
        NC.CollapseConfig(lr=-1.0)
    with pytest.raises(ValueError):
        NC.CollapseConfig(dataset="imagenet")
    assert NC.ImbalanceConfig(n_classes=3, largest=100, ratio=4.0).counts() == [100, 50, 25]
    with pytest.raises(ValueError, match="smallest class"):  # refused, not silently clamped
        NC.ImbalanceConfig(largest=10, ratio=50.0)


def test_torchvision_datasets_fall_back_to_mnist1d_offline_and_in_a_dry_run(monkeypatch):
    from dynamics import data as D

    calls = []

    def offline(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("no internet")

    small = D.gaussian_mixture(n_train=200, n_test=50, dim=40, n_classes=10)
    monkeypatch.setattr(D, "torchvision_dataset", offline)
    monkeypatch.setattr(D, "mnist1d", lambda **kwargs: small)
    cfg = NC.CollapseConfig.for_profile("smoke", dataset="mnist", n_train=40, n_classes=4)
    monkeypatch.delenv("DYNAMICS_DRY_RUN", raising=False)
    ds = NC.load_data(cfg)
    assert ds.info["fallback"] == "MNIST-1D instead of mnist, which could not be loaded here"
    assert ds.n_classes == 4 and len(ds.x_train) == 40 and len(calls) == 1
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "3")
    ds = NC.load_data(cfg)
    assert "dry run" in ds.info["fallback"] and len(calls) == 1  # no download attempted


# ----------------------------------------------------------------------------- imbalance theory


@known_answer(NC.theory.imbalanced_ufm_solution,
              how="no local search from the solution of the two-variable problem finds lower; "
                  "equal classes get equal norms")
def test_imbalanced_solution_solves_the_two_variable_problem_and_orders_norms_by_count():
    from scipy.optimize import minimize

    counts, lam, L = [100, 30, 10], 5e-3, 2
    sol = NC.theory.imbalanced_ufm_solution(counts, lam, L)
    N = sum(counts)
    for c, n in enumerate(counts):
        def f(v):  # the scalar problem before eliminating x
            s, x = v
            return n / (2 * N) * (s ** L * x - 1) ** 2 + lam * L * s * s / 2 + lam * n * x * x / (2 * N)

        s, x = sol["classifier_norm"][c], sol["feature_norm"][c] / sol["classifier_norm"][c] ** (L - 1)
        best = minimize(f, [s, x], method="Nelder-Mead", options=dict(xatol=1e-10, fatol=1e-14))
        assert f([s, x]) <= best.fun + 1e-12
    assert np.all(np.diff(sol["classifier_norm"]) < 0)  # larger class, longer classifier row
    assert np.all(np.diff(sol["feature_norm"]) > 0)  # ... and shorter features
    equal = NC.theory.imbalanced_ufm_solution([20, 20, 20], lam, L)
    assert np.ptp(equal["feature_norm"]) < 1e-9
    with pytest.raises(ValueError):
        NC.theory.imbalanced_ufm_solution([10, 0], lam)
    with pytest.raises(ValueError):
        NC.theory.imbalanced_ufm_solution([10, 5], 0.0)


def test_the_science_module_draws_nothing():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(S))
    imported = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    imported |= {f"{node.module}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    for banned in ("plotly", "ipywidgets", "plots", "widgets"):
        assert not any(banned in name for name in imported), (banned, imported)


def test_a_class_with_too_few_examples_is_said_not_silently_cut():
    from dynamics import data as D

    ds = D.gaussian_mixture(n_train=40, n_test=8, dim=3, n_classes=4, counts=[10, 10, 10, 4])
    full = NC.science.balanced_subset(ds, 4, 16)
    assert len(full.x_train) == 16 and "short" not in full.info
    short = NC.science.balanced_subset(ds, 4, 40)
    assert len(short.x_train) == 34 and short.info["short"] == "40 asked for; the dataset has no more"
    assert NC.dataset_line(short).startswith("gaussian mixture: 34 training examples, 4 classes (40 asked")


@known_answer(NC.science.in_span_fraction,
              how="rows built from a known in-span part and a known orthogonal part: the "
                  "fraction is the in-span part's share of the squared norm (1 in the span, "
                  "0 orthogonal to it, 0.25 for a row with in-span length 1 and out-of-span 3^0.5)")
def test_in_span_fraction_on_constructed_rows():
    import torch

    torch.manual_seed(0)
    C, d = 4, 20
    q, _ = torch.linalg.qr(torch.randn(d, d, dtype=torch.float64))
    span, out = q[:, :C - 1], q[:, C - 1:]  # centred means span C − 1 directions
    means = torch.randn(C, C - 1, dtype=torch.float64) @ span.T
    means = means - means.mean(0)
    rows = torch.stack([span[:, 0], out[:, 0], span[:, 1] + 3 ** 0.5 * out[:, 1],
                        2 * span[:, 2] + 2 * out[:, 2]])
    got = NC.science.in_span_fraction(rows, means)
    assert got.tolist() == pytest.approx([1.0, 0.0, 0.25, 0.5], abs=1e-12)
