"""The science of dynamics.initialization: measures against known values and independent
references, bad inputs (clear ValueErrors), determinism."""
import math

import numpy as np
import pytest
import torch
from scipy import integrate, optimize

from known import known_answer

from dynamics.initialization import science as S


# ----------------------------------------------------------------------------- mean field
# An independent reference: Gaussian expectations by adaptive quadrature (scipy.integrate.quad)
# instead of Gauss-Hermite, fixed points by plain iteration instead of Brent's method.


def _gauss(f):
    """E[f(z)], z ~ N(0, 1), by adaptive quadrature."""
    return integrate.quad(lambda z: f(z) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi),
                          -12, 12, limit=200, epsabs=1e-13, epsrel=1e-12)[0]


def _ref_q_star(sw2, sb2):
    q = 1.0
    for _ in range(5000):  # the q-map is a contraction near its fixed point (sigma_b > 0)
        new = sw2 * _gauss(lambda z: math.tanh(math.sqrt(q) * z) ** 2) + sb2
        if abs(new - q) < 1e-13:
            break
        q = new
    return new


def _ref_chi_1(sw2, sb2):
    q = _ref_q_star(sw2, sb2)
    return sw2 * _gauss(lambda z: 1 / math.cosh(math.sqrt(q) * z) ** 4)


@known_answer(S.gauss_hermite, how="the standard normal's moments: total weight 1, E z^2 = 1, "
                                    "E z^4 = 3")
def test_gauss_hermite_moments():
    z, w = S.gauss_hermite()
    assert np.isclose(w.sum(), 1.0)
    assert np.isclose(np.dot(w, z ** 2), 1.0) and np.isclose(np.dot(w, z ** 4), 3.0)


@known_answer(S.q_map, how="the defining Gaussian integral by adaptive quadrature "
                           "(scipy.integrate.quad), not Gauss-Hermite")
def test_q_map_against_scipy_quadrature():
    for q, sw2, sb2 in [(0.3, 1.5, 0.05), (2.0, 3.0, 0.2)]:
        ref = sw2 * _gauss(lambda z: math.tanh(math.sqrt(q) * z) ** 2) + sb2
        assert S.q_map(q, sw2, sb2) == pytest.approx(ref, rel=1e-6)


@known_answer(S.q_star, S.c_star, S.c_map, S.critical_sigma_w2, S.chi_1,
              how="q* against plain fixed-point iteration of a quadrature q-map; c = 1 always "
                  "fixed; the published edge of chaos sigma_w^2 = 1.76 at sigma_b^2 = 0.05 "
                  "(Poole et al., Schoenholz et al.) and exactly 1 at sigma_b = 0; roots of a "
                  "reference chi_1")
def test_fixed_points_and_known_critical_values():
    sw2, sb2 = 2.0, 0.05
    q = S.q_star(sw2, sb2)
    assert S.q_map(q, sw2, sb2) == pytest.approx(q, rel=1e-9)
    assert q == pytest.approx(_ref_q_star(sw2, sb2), rel=1e-5)
    c = S.c_star(sw2, sb2)
    assert 0 < c < 1 and S.c_map(c, sw2, sb2) == pytest.approx(c, abs=1e-8)
    assert S.c_map(1.0, sw2, sb2) == pytest.approx(1.0, abs=1e-9)  # c = 1 is always fixed
    # Published: tanh at sigma_b^2 = 0.05 has its edge of chaos at sigma_w^2 ~ 1.76
    # (Poole et al. 2016; Schoenholz et al. 2017, the value of their trainability figures).
    assert S.critical_sigma_w2(0.05) == pytest.approx(1.76, abs=0.005)
    # sigma_b = 0: exactly sigma_w^2 = 1 (q* = 0 and tanh'(0) = 1)
    assert S.critical_sigma_w2(0.0) == pytest.approx(1.0, abs=1e-3)
    assert S.q_star(0.8, 0.0) == 0.0 and S.chi_1(0.8, 0.0) == pytest.approx(0.8)
    # other sigma_b^2: against the independent reference (quad + fixed-point iteration + a
    # root of the reference chi_1 - 1), not against our own quadrature
    for sb2 in (0.01, 0.2, 1.0):
        ref = optimize.brentq(lambda s: _ref_chi_1(s, sb2) - 1.0, 0.5, 10.0, xtol=1e-7)
        assert S.critical_sigma_w2(sb2) == pytest.approx(ref, rel=1e-5)
    # more bias variance pushes the edge of chaos to larger weights
    crit = [S.critical_sigma_w2(b) for b in (0.01, 0.05, 0.2)]
    assert crit[0] < crit[1] < crit[2]
    assert S.chi_1(crit[1], 0.05) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("sb2", [0.0, 1e-10, 1e-6, 1e-3, 0.05, 0.5, 2.0])
def test_root_finders_converge_where_the_functions_are_flat(sb2):
    """Brent's method can need more than scipy's default 100 iterations where a function
    is flat near its root (sigma_b = 0: q* ~ 0). Every root finder of the module, on a grid
    including the flat places, converges and returns a true root."""
    crit = S.critical_sigma_w2(sb2)
    assert S.chi_1(crit, sb2) == pytest.approx(1.0, abs=1e-6)
    for sw2 in (crit * (1 - 1e-6), crit * (1 + 1e-6), crit * 1.001, 1.0 + 1e-9, 1.0 + 1e-4, 4.5):
        q = S.q_star(sw2, sb2)
        assert q >= 0 and S.q_map(q, sw2, sb2) == pytest.approx(q, rel=1e-6, abs=1e-12)
        c = S.c_star(sw2, sb2)
        assert 0 <= c <= 1
        if c < 1:
            assert S.c_map(c, sw2, sb2) == pytest.approx(c, abs=1e-7)
        assert S.depth_scale(sw2, sb2) > 0


@known_answer(S.chi_1, S.c_map, how="chi_1 is the slope of the correlation map at c = 1 "
                                       "(finite difference) and a quadrature reference")
def test_chi1_is_the_slope_of_the_correlation_map_at_one():
    sw2, sb2 = 1.3, 0.05
    h = 1e-4
    slope = (1.0 - S.c_map(1.0 - h, sw2, sb2)) / h
    assert slope == pytest.approx(S.chi_1(sw2, sb2), rel=2e-3)
    assert S.chi_1(sw2, sb2) == pytest.approx(_ref_chi_1(sw2, sb2), rel=1e-5)


@known_answer(S.depth_scale, S.trainable_depth,
              how="in the ordered phase xi_c = -1/ln chi_1 exactly; it diverges at the edge "
                  "of chaos; 6 xi_c by definition (Schoenholz et al.)")
def test_depth_scale_and_trainable_depth():
    # ordered phase: xi = -1/ln chi_1; it diverges at the edge of chaos
    assert S.depth_scale(1.0, 0.05) == pytest.approx(-1 / math.log(S.chi_1(1.0, 0.05)))
    crit = S.critical_sigma_w2(0.05)
    assert S.depth_scale(crit - 0.05, 0.05) > 50 and S.depth_scale(crit + 0.1, 0.05) > 30
    assert S.depth_scale(4.0, 0.05) < 10 and S.depth_scale(0.5, 0.05) < 2
    assert S.trainable_depth(2.0, 0.05) == pytest.approx(6 * S.depth_scale(2.0, 0.05))


def test_mean_field_bad_inputs():
    with pytest.raises(ValueError, match="sigma_w2"):
        S.q_star(-1.0, 0.05)
    with pytest.raises(ValueError, match="sigma_b2"):
        S.chi_1(1.0, -0.1)
    with pytest.raises(ValueError, match="sigma_b2"):
        S.critical_sigma_w2(float("nan"))
    with pytest.raises(ValueError, match="support"):
        S.q_map(1.0, 1.0, 0.0, activation="relu")
    with pytest.raises(ValueError):
        S.measure_chi_1(1.0, 0.05, depth=5, burn=10)
    with pytest.raises(ValueError):
        S.tanh_mlp(10, 8, 2, 0.0, 0.05)


# ----------------------------------------------------------------------------- measurements


@known_answer(S.measure_chi_1, how="mean-field chi_1 (itself checked against quadrature) "
                                        "on wide random tanh networks, within 5%")
def test_measured_chi1_matches_theory_and_is_deterministic():
    s = [1.0, 2.5]
    a = S.measure_chi_1(s, 0.05, width=256, depth=30, batch=32, seed=3)
    b = S.measure_chi_1(s, 0.05, width=256, depth=30, batch=32, seed=3)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, [S.chi_1(v, 0.05) for v in s], rtol=0.05)


@known_answer(S.measure_map_iterates, how="the q-map and c-map of mean-field theory, "
                                              "through wide random networks")
def test_measured_maps_sit_on_theory():
    sw2, sb2 = 1.76, 0.05
    for seq in S.measure_map_iterates(sw2, sb2, [0.1, 2.5], "q", width=512, depth=4):
        for q_in, q_out in zip(seq[:-1], seq[1:]):
            assert q_out == pytest.approx(S.q_map(q_in, sw2, sb2), rel=0.05)
    sw2 = 3.0
    for seq in S.measure_map_iterates(sw2, sb2, [0.0, 0.6], "c", width=512, depth=4):
        for c_in, c_out in zip(seq[:-1], seq[1:]):
            assert c_out == pytest.approx(S.c_map(c_in, sw2, sb2), abs=0.03)
    with pytest.raises(ValueError, match="kind"):
        S.measure_map_iterates(1.0, 0.05, [0.1], "x")


@known_answer(S.measure_depth_scale, how="xi_c = -1/ln chi_1 of the theory in the ordered "
                                              "phase, on a random network of width 256")
def test_measured_depth_scale_in_the_ordered_phase():
    xi, used = S.measure_depth_scale(1.0, 0.05, width=256, depth=40, pairs=32)
    assert used >= 4
    assert xi == pytest.approx(S.depth_scale(1.0, 0.05), rel=0.15)


# ----------------------------------------------------------------------------- inits


@known_answer(S.lsuv_, S.init_mlp,
              how="LSUV's definition: every layer's output variance within its tolerance of 1 "
                  "on the batch it rescaled on, each weight a rescaled orthonormal matrix")
def test_lsuv_gives_unit_variance_and_orthonormal_start():
    torch.manual_seed(0)
    x = torch.randn(256, 20)
    model = S.init_mlp(20, 64, 6, "relu", "lsuv", x=x)
    h = x
    for layer in model.hidden:
        z = layer(h).detach()
        assert float(z.var()) == pytest.approx(1.0, abs=0.1)
        h = model.act(z)
        w = layer.weight.detach()  # a rescaled orthonormal matrix: W W^T proportional to I
        gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram / gram.diagonal().mean(), torch.eye(len(gram)), atol=1e-4)


@known_answer(S.lsuv_, S.layer_statistics,
              how="fresh inputs from the batch's distribution have the same variance to "
                  "sampling error, so LSUV's unit variance holds on them; its orthonormal "
                  "start before rescaling (the same matrices) halves the variance per ReLU layer")
def test_lsuv_unit_variance_holds_on_held_out_inputs_and_not_at_its_start():
    torch.manual_seed(0)
    x, held = torch.randn(256, 20) * 3 + 1, torch.randn(256, 20) * 3 + 1
    y = torch.randint(0, 10, (256,))
    torch.manual_seed(5)
    model = S.init_mlp(20, 128, 12, "relu", "lsuv", x=x)
    torch.manual_seed(5)
    start = S.init_mlp(20, 128, 12, "relu", "lsuv", x=x, rescale=False)
    for a, b in zip(model.hidden, start.hidden):  # the same orthonormal matrices, rescaled
        w, w0 = a.weight.detach(), b.weight.detach()
        np.testing.assert_allclose(w / w.norm(), w0 / w0.norm(), atol=1e-6)
    var = S.layer_statistics(model, held, y).out_var
    assert len(var) == 13 and all(0.8 < v < 1.25 for v in var)
    var0 = np.asarray(S.layer_statistics(start, held, y).out_var)
    # halved per ReLU layer on average: 2^-10 over ten layers, within the factor of a few that
    # finite width (128) spreads it by
    assert 2.0 ** -12 < var0[-2] / var0[1] < 2.0 ** -8 and np.all(np.diff(var0[:-1]) < 0)
    assert var0.min() < 0.01


def test_init_mlp_schemes_and_bad_inputs():
    torch.manual_seed(0)
    small = S.init_mlp(10, 32, 2, "tanh", "small")
    assert float(small.hidden[1].weight.detach().std()) == pytest.approx(0.01, rel=0.1)
    he = S.init_mlp(512, 512, 2, "relu", "he")
    assert float(he.hidden[1].weight.detach().var()) * 512 == pytest.approx(2.0, rel=0.05)
    xavier = S.init_mlp(512, 512, 2, "relu", "xavier")
    assert float(xavier.hidden[1].weight.detach().var()) * 512 == pytest.approx(1.0, rel=0.05)
    orth = S.init_mlp(32, 32, 2, "relu", "orthogonal")
    w = orth.hidden[1].weight.detach()
    np.testing.assert_allclose(w @ w.T, 2.0 * torch.eye(32), atol=1e-4)  # gain sqrt 2 for ReLU
    zero = S.init_mlp(10, 8, 2, "relu", "zero")
    assert all(float(p.detach().abs().sum()) == 0 for p in zero.parameters())
    crit = S.critical_mlp(512, 512, 2, "relu")
    assert float(crit.hidden[1].weight.detach().var()) * 512 == pytest.approx(2.0, rel=0.05)
    with pytest.raises(ValueError, match="unknown init"):
        S.init_mlp(10, 8, 2, "relu", "kaiming")
    with pytest.raises(ValueError, match="batch"):
        S.init_mlp(10, 8, 2, "relu", "lsuv")
    with pytest.raises(ValueError, match="activation"):
        S.critical_mlp(10, 8, 2, "gelu")
    with pytest.raises(ValueError):
        S.SignalConfig(depth=0)
    with pytest.raises(ValueError):
        S.SignalConfig(init="glorot")


def test_layer_statistics_shapes_and_zero_init():
    x, y = torch.randn(32, 10), torch.randint(0, 10, (32,))
    st = S.layer_statistics(S.init_mlp(10, 16, 5, "relu", "zero"), x, y)
    assert len(st.act_std) == len(st.grad_norm) == len(st.grad_in) == 5
    assert len(st.out_var) == 6  # the hidden layers and the output layer
    assert max(st.act_std) == 0 and max(st.grad_norm) == 0  # symmetry never breaks
    assert max(st.grad_in) == 0
    assert np.isnan(S.std_ratio(st)) and np.isnan(S.backward_ratio(st))
    st = S.layer_statistics(S.init_mlp(10, 16, 5, "tanh", "xavier"), x, y)
    assert min(st.grad_norm) > 0 and S.std_ratio(st) > 0 and S.backward_ratio(st) > 0


def _linear_net(n, depth, gain, orthogonal, seed=0):
    """A bias-free linear MLP of ``depth`` square n x n hidden layers W_l = gain x (identity
    or a Haar-orthogonal matrix), a random 10 x n head."""
    gen = torch.Generator().manual_seed(seed)
    model = S.MLP(n, n, depth, 10, "linear", bias=False)
    with torch.no_grad():
        qs = S.haar_orthogonal(depth, n, gen) if orthogonal else torch.eye(n).expand(depth, n, n)
        for layer, q in zip(model.hidden, qs):
            layer.weight.copy_(gain * q)
        model.head.weight.copy_(torch.randn(10, n, generator=gen) / math.sqrt(n))
    return model


def _linear_case(n, L, g, B):
    """A batch (seed 1), :func:`_linear_net` (W_l = g I) and its layer_statistics, with the
    closed form by hand in float64: h_l = g^l x, out = g^L x V^T, dL/dz_L = (softmax -
    onehot)/B V. Returns (x, y, model, stats, out, dL/dz_L)."""
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(B, n, generator=gen), torch.randint(0, 10, (B,), generator=gen)
    model = _linear_net(n, L, g, orthogonal=False)
    st = S.layer_statistics(model, x, y)
    V = model.head.weight.detach().double()
    out = g ** L * x.double() @ V.T
    err = (torch.softmax(out, 1) - torch.nn.functional.one_hot(y, 10).double()) / B
    return x, y, model, st, out, err @ V


@known_answer(S.layer_statistics, S.std_ratio, S.backward_ratio, S.signal_summary,
              how="a linear network of square layers W_l = g I: the activations and every "
                  "layer's output variance are g^l times the input's, the backward signal "
                  "dL/dz_l is g^(L-l) times the last layer's, and every dL/dW_l equals "
                  "g^(L-1) (dL/dz_L)^T x, the forward and backward factors cancelling; each "
                  "computed here from the closed form, not from the function")
def test_signal_statistics_of_a_linear_network_in_closed_form():
    n, L, g, B = 16, 6, 0.5, 64
    x, _, _, st, out, delta_L = _linear_case(n, L, g, B)
    xd = x.double()
    G = g ** (L - 1) * delta_L.T @ xd
    for l in range(L):  # layer l + 1
        assert st.act_std[l] == pytest.approx(g ** (l + 1) * float(xd.std()), rel=1e-5)
        assert st.out_var[l] == pytest.approx(g ** (2 * l + 2) * float(xd.var()), rel=1e-5)
        assert st.grad_in[l] == pytest.approx(g ** (L - 1 - l) * float(delta_L.norm()), rel=1e-5)
        assert st.grad_norm[l] == pytest.approx(float(G.norm()), rel=1e-5)
    assert st.out_var[L] == pytest.approx(float(out.var()), rel=1e-5)
    assert S.std_ratio(st) == pytest.approx(g ** (L - 1), rel=1e-5)
    assert S.backward_ratio(st) == pytest.approx(g ** (L - 1), rel=1e-5)
    sm = S.signal_summary(st)
    assert sm["forward"] == pytest.approx(g ** (L - 1), rel=1e-5)
    assert sm["backward"] == pytest.approx(g ** (L - 1), rel=1e-5)
    assert sm["weight_size"] == pytest.approx(float(G.norm()), rel=1e-5)


@known_answer(S.layer_statistics, S.backward_ratio,
              how="a linear network of square layers W_l = g I, g = 0.1, 32 deep: dL/dz_1 is "
                  "exactly g^31 dL/dz_L (closed form, computed in float64), entries near 1e-34 "
                  "whose float32 squares flush to zero; the activation std, output variance and "
                  "weight-gradient norm from the same closed form (g^L std x, g^(2L) var x, "
                  "g^(L-1) (dL/dz_L)^T x)")
def test_the_backward_norm_reads_a_tiny_signal_at_its_true_size():
    """What §1's "Try it" says of very deep networks: the backward signal reaching the first
    layers is tiny but not zero, and the measure (in float64) reads its size, though a float32
    norm of the same gradient reads 0 (it squares entries near 1e-34, which flush to zero)."""
    L, g = 32, 0.1
    x, _, _, st, _, delta_L = _linear_case(16, L, g, 64)
    true = g ** (L - 1) * float(delta_L.norm())  # the backward signal's size at layer 1
    assert 0 < true < 1e-30
    assert st.grad_in[0] == pytest.approx(true, rel=1e-4)
    assert S.backward_ratio(st) == pytest.approx(g ** (L - 1), rel=1e-4)
    # the other three statistics at the same depth, each below what a float32 square can hold:
    # the last layer's activation std g^L std(x) (near 1e-32), its output variance g^(2L) var(x)
    # (near 1e-64) and every weight gradient's norm ||g^(L-1) (dL/dz_L)^T x|| (near 1e-31)
    xd = x.double()
    assert 0 < st.act_std[-1] == pytest.approx(g ** L * float(xd.std()), rel=1e-4)
    assert 0 < st.out_var[L - 1] == pytest.approx(g ** (2 * L) * float(xd.var()), rel=1e-4)
    G = g ** (L - 1) * delta_L.T @ xd
    assert float(G.norm()) < 1e-30
    assert all(v == pytest.approx(float(G.norm()), rel=1e-4) for v in st.grad_norm)
    # a plain float32 norm of the very same gradient reads 0: what the measure avoids
    x, y, model, *_ = _linear_case(16, L, g, 64)
    z1 = model.hidden[0](x)
    z1.retain_grad()
    h = z1
    for layer in model.hidden[1:]:
        h = layer(h)
    torch.nn.functional.cross_entropy(model.head(h), y).backward()
    assert z1.grad.dtype == torch.float32 and bool((z1.grad != 0).any())
    assert float(z1.grad.double().norm()) == pytest.approx(true, rel=1e-3)
    assert float(z1.grad.norm()) == 0.0


@known_answer(S.layer_statistics, S.backward_ratio,
              how="orthogonal layers of gain g preserve every norm up to the factor g: the "
                  "backward signal falls by exactly g per layer towards the input, and the "
                  "weight gradient's norm is the same in every square layer, whatever g")
def test_weight_gradient_is_level_while_both_signals_fall():
    n, L, B = 32, 8, 48
    gen = torch.Generator().manual_seed(2)
    x, y = torch.randn(B, n, generator=gen), torch.randint(0, 10, (B,), generator=gen)
    sizes = {}
    for g in (2 ** -0.5, 1.0):
        st = S.layer_statistics(_linear_net(n, L, g, orthogonal=True, seed=3), x, y)
        back = np.asarray(st.grad_in)
        np.testing.assert_allclose(back[:-1] / back[1:], g, rtol=1e-4)
        assert S.backward_ratio(st) == pytest.approx(g ** (L - 1), rel=1e-4)
        np.testing.assert_allclose(st.grad_norm, st.grad_norm[0], rtol=1e-4)
        sizes[g] = st.grad_norm[0]
    # the level weight gradient carries both decays in its size: g^(L-1), up to the softmax
    # error, which hardly changes while the logits are small
    assert sizes[2 ** -0.5] / sizes[1.0] == pytest.approx(2 ** (-(L - 1) / 2), rel=0.2)


@known_answer(S.backward_ratio, S.std_ratio,
              how="mean-field theory of ReLU layers (He et al.): the forward and backward "
                  "variances are multiplied by sigma_w^2 / 2 per layer, 1 with He's 2/fan_in "
                  "and 1/2 with Xavier's 1/fan_in (square layers), so over L - 1 layers the "
                  "ratios are 1 and 2^(-(L-1)/2), up to finite-width fluctuations")
def test_relu_signal_ratios_against_mean_field():
    n, L, B = 1024, 16, 128
    torch.manual_seed(0)
    x, y = torch.randn(B, n), torch.randint(0, 10, (B,))
    he = S.layer_statistics(S.init_mlp(n, n, L, "relu", "he"), x, y)
    xa = S.layer_statistics(S.init_mlp(n, n, L, "relu", "xavier"), x, y)
    assert 0.6 < S.std_ratio(he) < 1.6 and 0.6 < S.backward_ratio(he) < 1.6
    expected = 2 ** (-(L - 1) / 2)
    assert 0.5 * expected < S.std_ratio(xa) < 2 * expected
    assert 0.5 * expected < S.backward_ratio(xa) < 2 * expected


def test_haar_orthogonal_and_random_weights():
    gen = torch.Generator().manual_seed(0)
    q = S.haar_orthogonal(4, 16, gen)
    np.testing.assert_allclose(q @ q.transpose(1, 2), torch.eye(16).expand(4, -1, -1), atol=1e-5)
    # orthogonal weights preserve every norm exactly; Gaussian ones only on average
    x = torch.randn(64, generator=gen)
    for init in ("orthogonal", "gaussian"):
        W = S.random_weights(init, 500, 64, 1.5, torch.Generator().manual_seed(1))
        ratio = (W @ x).pow(2).sum(-1) / x.pow(2).sum()
        assert float(ratio.mean()) == pytest.approx(1.5, rel=0.05)
        if init == "orthogonal":
            np.testing.assert_allclose(ratio, 1.5, rtol=1e-4)
        else:
            assert float(ratio.std()) > 0.1
    with pytest.raises(ValueError, match="init"):
        S.random_weights("he", 2, 4, 1.0, gen)


def test_batched_qr_off_the_cpu_equals_linalg_qr():
    """Off the CPU, Q is formed from geqrf's reflectors in batched calls (no per-matrix solver
    call); it is the same factorization as torch.linalg.qr's, matrix by matrix."""
    gen = torch.Generator().manual_seed(0)
    for shape, dtype, tol in (((6, 32, 32), torch.float32, 2e-5), ((3, 20, 7), torch.float64, 1e-12),
                              ((2, 1, 1), torch.float64, 1e-15)):
        A = torch.randn(*shape, generator=gen, dtype=dtype)
        q, r = S._qr_from_reflectors(A)
        for a, qi, ri in zip(A, q, r):  # against one call per matrix
            q0, r0 = torch.linalg.qr(a)
            assert torch.allclose(qi, q0, atol=tol) and torch.allclose(ri, r0, atol=tol * 10)
        assert torch.allclose(q @ r, A, atol=tol * 10)
    assert S.batched_qr(A)[0].equal(torch.linalg.qr(A)[0])  # on the CPU: linalg.qr itself
    with pytest.raises(ValueError, match="m >= n"):
        S._qr_from_reflectors(torch.randn(2, 3, 5))


def test_fluctuations_read_back_to_the_host_once():
    from hostreads import HostReads
    counts = []
    for depth in (3, 9):
        with HostReads() as reads:
            S.preactivation_fluctuations("orthogonal", depth, 16, 8, seed=0)
        counts.append(reads.count)
    assert counts[0] == counts[1] <= 2


def test_fluctuations_are_deterministic_and_checked():
    a = S.preactivation_fluctuations("gaussian", 5, 16, 32, seed=4)
    b = S.preactivation_fluctuations("gaussian", 5, 16, 32, seed=4)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError):
        S.preactivation_fluctuations("gaussian", 5, 16, 1)
    with pytest.raises(ValueError):
        S.preactivation_fluctuations("xavier", 5, 16, 32)


@known_answer(S.saxe_theory, how="the logistic solves y' = 2 s y (1 - y) with s = strength / "
                                      "sqrt C: its value at 0, its limit and its derivative")
def test_saxe_theory_and_task():
    t = np.array([0.0, 1.0, 100.0])
    y = S.saxe_theory(t, 1.0, 4, 0.01)
    assert y[0] == pytest.approx(0.01) and y[-1] == pytest.approx(1.0, abs=1e-6)
    # the logistic solves y' = 2 s y (1 - y) with s = strength / sqrt(C)
    s, tt, h = 0.5, 3.0, 1e-5
    dy = (S.saxe_theory(tt + h, 1.0, 4, 0.01) - S.saxe_theory(tt - h, 1.0, 4, 0.01)) / (2 * h)
    yy = S.saxe_theory(tt, 1.0, 4, 0.01)
    assert dy == pytest.approx(2 * s * yy * (1 - yy), rel=1e-5)
    d = S.saxe_task(5, 1.0, 0.1)
    x = d.x_train.cpu()
    gram = x @ x.T  # one pattern per class, orthogonal, with norms sqrt(C) s_c
    np.testing.assert_allclose(gram - torch.diag(gram.diagonal()), 0, atol=1e-5)
    np.testing.assert_allclose(gram.diagonal().sqrt() / math.sqrt(5), np.geomspace(1, 0.1, 5),
                               rtol=1e-5)
    with pytest.raises(ValueError):
        S.saxe_task(1)
    with pytest.raises(ValueError):
        S.deep_linear(5, 8, 0, "orthogonal")
    with pytest.raises(ValueError):
        S.deep_linear(5, 8, 2, "xavier")


def test_deep_linear_orthogonal_product_is_orthogonal():
    torch.manual_seed(0)
    net = S.deep_linear(8, 8, 6, "orthogonal")
    with torch.no_grad():
        P = net(torch.eye(8))
    np.testing.assert_allclose(P @ P.T, torch.eye(8), atol=1e-4)
    with pytest.raises(ValueError, match="one hidden layer"):
        S.effective_start(S.deep_linear(5, 8, 3, "small"), S.saxe_task(5))


@known_answer(S.orthogonal_product_svals,
              how="square layers: every singular value 1; the learning-time networks' shape "
                  "(patterns -> width -> ... -> patterns): a block of a Haar matrix, norm at most "
                  "1, spread well below 1, the same spread at depth 2 and at the deepest depth")
def test_orthogonal_product_of_the_depth_time_shape():
    """Section 3's deep linear networks are not square (referee, finding 1): their orthogonal
    product is not orthogonal, but its spread does not change with depth."""
    cfg = S.DepthTimeConfig()
    np.testing.assert_allclose(S.orthogonal_product_svals(8, 8, 6, range(3)), 1.0, atol=1e-4)
    shallow, deep = (S.orthogonal_product_svals(cfg.n_patterns, cfg.width, d)
                     for d in (min(cfg.depths), max(cfg.depths)))
    for sv in (shallow, deep):
        assert sv.max() <= 1 + 1e-4 and np.median(sv[:, -1]) < 0.2  # not orthogonal
    assert abs(shallow.mean() - deep.mean()) < 0.05  # depth does not add to the spread
    assert abs(np.median(shallow[:, -1]) - np.median(deep[:, -1])) < 0.05


@known_answer(S.guessing_bias, S.favourite_class,
              how="constructed logits: every input in class 1 gives 1 and class 1; the "
                  "identity gives each class once, 1/C")
def test_guessing_bias_metric():
    logits = torch.zeros(10, 3)
    logits[:, 1] = 1.0
    assert S.guessing_bias(logits) == 1.0
    assert S.guessing_bias(torch.eye(4)) == pytest.approx(0.25)
    assert S.favourite_class(logits) == 1
    with pytest.raises(ValueError):
        S.guessing_bias(torch.zeros(5))


def test_configs_construct_in_every_profile():
    """Every profile's presets lie in the fields' ranges (a config refuses them otherwise), and
    the smoke profile is the small one: no size of it above the gpu profile's."""
    size = lambda v: len(v) if isinstance(v, (list, tuple)) else v  # noqa: E731
    for cls in (S.SignalConfig, S.ChaosConfig, S.TrainabilityConfig, S.FluctuationConfig,
                S.SaxeConfig, S.DepthTimeConfig, S.GuessingConfig):
        smoke, _, gpu = (cls.for_profile(p).to_dict() for p in ("smoke", "cpu", "gpu"))
        assert all(size(smoke[k]) <= size(gpu[k]) for k in smoke
                   if isinstance(smoke[k], (int, list, tuple)) and not isinstance(smoke[k], bool)), cls




@known_answer(S.trainable_band, how="its edges are where 6 xi_c equals the depth, on either "
                                         "side of the critical point")
def test_trainable_band_edges_are_where_six_xi_equals_the_depth():
    lo, hi = S.trainable_band(32, 0.05)
    assert lo < S.critical_sigma_w2(0.05) < hi
    for edge in (lo, hi):
        assert S.trainable_depth(edge, 0.05) == pytest.approx(32, rel=1e-3)
    assert S.trainable_band(1, 0.05) == (0.3, 8.0)  # every sigma_w^2 of the range trains


def test_small_init_shrinks_the_signal_by_its_predicted_factor():
    """N(0, 0.01^2) weights multiply the activations' scale by 0.01 sqrt(n) per layer with
    tanh (the identity near zero) and 0.01 sqrt(n/2) with ReLU (half the units off)."""
    torch.manual_seed(0)
    n, x = 1024, torch.randn(512, 1024)
    for act, factor in (("tanh", 0.01 * math.sqrt(n)), ("relu", 0.01 * math.sqrt(n / 2))):
        model = S.init_mlp(n, n, 4, act, "small")
        h, stds = x, []
        for layer in model.hidden:
            h = model.act(layer(h))
            stds.append(float(h.std()))
        ratios = [b / a for a, b in zip(stds[1:], stds[2:])]  # past the first layer's input
        assert all(r == pytest.approx(factor, rel=0.05) for r in ratios), (act, ratios)


@known_answer(S.chi_c, how="equal to chi_1 in the ordered phase (c* = 1); in the chaotic phase "
                           "the Gaussian double integral sigma_w^2 E[phi'(u1) phi'(u2)] at c*, by "
                           "adaptive quadrature (scipy.integrate.dblquad)")
def test_chi_c_against_quadrature():
    assert S.chi_c(1.0, 0.05) == pytest.approx(S.chi_1(1.0, 0.05), rel=1e-12)
    sw2, sb2 = 3.0, 0.05
    q, c = _ref_q_star(sw2, sb2), S.c_star(sw2, sb2)
    assert c < 0.9

    def d(u):
        return 1 / math.cosh(u) ** 2

    def f(z2, z1):
        u1 = math.sqrt(q) * z1
        u2 = math.sqrt(q) * (c * z1 + math.sqrt(1 - c * c) * z2)
        return d(u1) * d(u2) * math.exp(-(z1 * z1 + z2 * z2) / 2) / (2 * math.pi)

    ref = sw2 * integrate.dblquad(f, -9, 9, -9, 9, epsabs=1e-10)[0]
    assert S.chi_c(sw2, sb2) == pytest.approx(ref, rel=1e-4)


@known_answer(S.measured_critical_sigma_w2,
              how="the edge of chaos of mean-field theory, 1.76 at sigma_b^2 = 0.05 (the "
                  "published value), measured on random networks of finite width")
def test_measured_critical_point_is_the_theory_s():
    s = S.measured_critical_sigma_w2(0.05, width=128, depth=30, batch=16, seed=0)
    assert s == pytest.approx(S.critical_sigma_w2(0.05), rel=0.1)


def test_a_dry_run_finds_the_same_critical_point(monkeypatch):
    """The root finder is not cut in a dry run (dynamics_ops.gpuwork counted a cut one as 200
    iterations): the same root, to the bit, with and without DYNAMICS_DRY_RUN."""
    real = S.measured_critical_sigma_w2(0.05, width=32, depth=16, batch=8, seed=0)
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    assert S.measured_critical_sigma_w2(0.05, width=32, depth=16, batch=8, seed=0) == real


@known_answer(S.preactivation_fluctuations,
              how="after one layer from a fixed input, orthogonal weights give every network "
                  "the same |z|^2 (value 0) and Gaussian ones n i.i.d. squared Gaussians, a "
                  "chi-squared with n Var G / E[G]^2 = 2 exactly")
def test_fluctuations_after_one_layer_in_closed_form():
    g = S.preactivation_fluctuations("gaussian", 1, 32, 4000, seed=0)
    o = S.preactivation_fluctuations("orthogonal", 1, 32, 4000, seed=0)
    assert g[0] == pytest.approx(2.0, abs=0.15)  # sampling error of 4,000 networks: ~0.05
    assert abs(o[0]) < 1e-6


@known_answer(S.pattern_progress, S.effective_start,
              how="balanced, aligned small weights (W1 = e U V^T, W2 = e U^T: a_c = b_c) give "
                  "f(x_c)_c = sqrt(C) s_c |a_c|^2, which is the effective start's formula "
                  "exactly; computed here by hand")
def test_effective_start_and_progress_on_balanced_weights():
    d = S.saxe_task(5, 1.0, 0.1, seed=0)
    x = d.x_train.cpu()
    C, eps = 5, 0.05
    V = (x / x.norm(dim=1, keepdim=True)).T  # column c: the direction of pattern c
    U = S.haar_orthogonal(1, C, torch.Generator().manual_seed(1))[0]
    model = S.deep_linear(C, C, 2, "small")
    with torch.no_grad():
        model.hidden[0].weight.copy_(eps * U @ V.T)
        model.head.weight.copy_(eps * U.T)
    strengths = x.norm(dim=1) / math.sqrt(C)
    by_hand = math.sqrt(C) * strengths * eps ** 2  # |a_c|^2 = eps^2 (U orthogonal)
    np.testing.assert_allclose(S.pattern_progress(model, d).cpu(), by_hand, rtol=1e-4)
    np.testing.assert_allclose(S.effective_start(model, d), by_hand, rtol=1e-4)
