import copy
import math

import pytest
import torch

from dynamics import models


def test_mlp_shapes_and_features():
    m = models.MLP(40, width=32, depth=3, out_dim=10, activation="tanh")
    x = torch.randn(5, 40)
    assert m(x).shape == (5, 10) and m.features(x).shape == (5, 32)
    assert len(m.hidden) == 3
    assert models.count_parameters(m) == 40 * 32 + 32 + 2 * (32 * 32 + 32) + 32 * 10 + 10


@pytest.mark.parametrize("scheme,expected_std", [
    ("he", lambda fi, fo: math.sqrt(2 / fi)),
    ("xavier", lambda fi, fo: math.sqrt(2 / (fi + fo))),
    ("normal", lambda fi, fo: 0.01),
])
def test_init_scales(scheme, expected_std):
    torch.manual_seed(0)
    layer = torch.nn.Linear(400, 300)
    models.init_linear_(layer, scheme)
    assert float(layer.weight.detach().std()) == pytest.approx(expected_std(400, 300), rel=0.03)
    assert float(layer.bias.detach().abs().max()) == 0.0


def test_orthogonal_and_zero_init():
    layer = torch.nn.Linear(64, 64)
    models.init_linear_(layer, "orthogonal")
    assert torch.allclose(layer.weight @ layer.weight.T, torch.eye(64), atol=1e-5)
    models.init_linear_(layer, "zero")
    assert float(layer.weight.detach().abs().sum()) == 0.0


def test_mean_field_parametrization():
    torch.manual_seed(0)
    m = models.MLP(500, width=500, depth=1, sigma_w=1.5, sigma_b=0.3)
    w = m.hidden[0].weight.detach()
    assert float(w.std()) == pytest.approx(1.5 / math.sqrt(500), rel=0.02)
    assert float(m.hidden[0].bias.detach().std()) == pytest.approx(0.3, rel=0.15)


def test_bad_model_arguments():
    with pytest.raises(ValueError, match="activation"):
        models.MLP(4, activation="swish2")
    with pytest.raises(ValueError, match="init"):
        models.MLP(4, init="magic")
    with pytest.raises(ValueError, match="width"):
        models.MLP(4, width=0)


def test_cnn_and_transformer_shapes():
    assert models.CNN1D(40, 8)(torch.randn(3, 40)).shape == (3, 10)
    t = models.Transformer1L(p=11, d_model=32, n_heads=4, d_mlp=64)
    x = torch.randint(0, 11, (6, 2))
    assert t(x).shape == (6, 11) and t.features(x).shape == (6, 32)


def test_attention_equals_multihead_attention():
    """The written-out attention is nn.MultiheadAttention (no biases): same parameters drawn
    in the same order from a seed, same outputs."""
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(32, 4, bias=False, batch_first=True)
    torch.manual_seed(0)
    att = models.Attention(32, 4)
    assert torch.equal(att.in_proj, ref.in_proj_weight) and torch.equal(att.out.weight, ref.out_proj.weight)
    h = torch.randn(5, 3, 32)
    torch.testing.assert_close(att(h), ref(h, h, h, need_weights=False)[0], rtol=1e-5, atol=1e-6)


def test_transformer_batches_under_vmap_without_fallback():
    """K transformers stacked and run under torch.func.vmap (what the sweep engine does) equal
    the K models run one by one, and torch warns of no slow per-sample fallback."""
    import warnings

    from torch.func import functional_call, stack_module_state, vmap

    ms = []
    for seed in range(3):
        torch.manual_seed(seed)
        ms.append(models.Transformer1L(p=11, d_model=16, n_heads=4, d_mlp=32))
    params, buffers = stack_module_state(ms)
    base = copy.deepcopy(ms[0]).to("meta")
    x = torch.randint(0, 11, (7, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no batching rule ... falling back" would fail here
        out = vmap(lambda p, x: functional_call(base, p, (x,)), in_dims=(0, None))(params, x)
    for k, m in enumerate(ms):
        torch.testing.assert_close(out[k], m(x), rtol=1e-5, atol=1e-6)
