"""The book's μP (dynamics.initialization.width) against Microsoft's reference implementation
``mup`` 1.0.0 (Tensor Programs V's code): the same MLP built both ways at two widths has the
same per-layer initial scales, the same per-layer moves under Adam (MuAdam there, plain Adam
with multipliers here), and the same coordinate check. CI installs mup with ``pip install
--no-deps mup==1.0.0`` (its requirements would pull torchvision and a CUDA torch; ``import mup``
needs only torch and pyyaml; mup.coord_check needs pandas and is not used)."""
import math

import mup
import numpy as np
import pytest
import torch
import torch.nn as nn

from dynamics.initialization import width as W
from known import known_answer

BASE, WIDTHS, D_IN, C = 32, (64, 256), 40, 10


class _MupMLP(nn.Module):
    """The same MLP written with mup: nn.Linear layers and a MuReadout."""

    def __init__(self, width):
        super().__init__()
        self.inp = nn.Linear(D_IN, width)
        self.hidden = nn.ModuleList([nn.Linear(width, width), nn.Linear(width, width)])
        self.head = mup.MuReadout(width, C)

    def features(self, x):
        out, h = [], x
        for layer in [self.inp, *self.hidden]:
            h = torch.relu(layer(h))
            out.append(h)
        return out + [self.head(h)]

    def forward(self, x):
        return self.features(x)[-1]


def _mup_model(width, parametrization, seed=0):
    """mup's model with the book's SP start (He normal in, 1/fan_in at the readout, zero
    biases), then set_base_shapes: its μP rescaling (base width BASE) or none (SP: the model
    is its own base)."""
    torch.manual_seed(seed)
    model = _MupMLP(width)
    with torch.no_grad():
        for layer in [model.inp, *model.hidden]:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            layer.bias.zero_()
        model.head.weight.normal_(0, 1 / math.sqrt(width))
        model.head.bias.zero_()
    base = _MupMLP(BASE) if parametrization == "mup" else None
    return mup.set_base_shapes(model, base)


def _mup_effective(model):
    """mup's effective weights: MuReadout multiplies its input by output_mult / width_mult."""
    head = model.head.weight * model.head.output_mult / model.head.width_mult()
    return [model.inp.weight, *(h.weight for h in model.hidden), head]


def _mine(width, parametrization, seed=0):
    torch.manual_seed(seed)
    return W.width_mlp(D_IN, width, C, parametrization, BASE, hidden_layers=3)


def _batch(n=256):
    g = torch.Generator().manual_seed(7)
    return torch.randn(n, D_IN, generator=g), torch.randint(0, C, (n,), generator=g)


@known_answer(W.effective_weights, how="the reference library mup: the same MLP's per-layer "
                                       "initial scales, and the readout's 1/width in muP")
@pytest.mark.parametrize("parametrization", W.PARAMETRIZATIONS)
def test_initial_scales_match_mup(parametrization):
    """Each layer's effective weights have mup's standard deviation at both widths (to the
    sampling error of a few hundred to 65,536 entries)."""
    for n in WIDTHS:
        theirs = [float(w.detach().std())
                  for w in _mup_effective(_mup_model(n, parametrization))]
        ours = [float(w.std()) for w in W.effective_weights(_mine(n, parametrization))]
        assert len(ours) == len(theirs) == 4
        assert np.allclose(ours, theirs, rtol=0.1), (n, ours, theirs)
    if parametrization == "mup":  # the readout's scale falls as 1/width (variance 1/fan_in^2)
        s = [float(W.effective_weights(_mine(n, "mup"))[-1].std()) for n in (64, 1024)]
        assert s[0] / s[1] == pytest.approx(16, rel=0.1)


@pytest.mark.parametrize("parametrization", W.PARAMETRIZATIONS)
def test_per_layer_adam_moves_match_mup(parametrization):
    """From the same effective weights, one step of the book's model under plain Adam (one
    learning rate, the multipliers doing μP's work) moves every layer's effective weights as
    mup's MuAdam moves mup's: the same effective per-layer learning rates."""
    x, y = _batch()
    lr = 1e-3
    for n in WIDTHS:
        theirs = _mup_model(n, parametrization)
        ours = _mine(n, parametrization)
        biases = [theirs.inp.bias, *(h.bias for h in theirs.hidden), theirs.head.bias]
        W.load_effective_(ours, [w.detach() for w in _mup_effective(theirs)],
                          [b.detach() for b in biases])
        torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-6)
        before = [w.detach().clone() for w in _mup_effective(theirs)]
        for model, opt in ((theirs, mup.MuAdam(theirs.parameters(), lr=lr)),
                           (ours, torch.optim.Adam(ours.parameters(), lr=lr))):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        d_theirs = [(w.detach() - b) for w, b in zip(_mup_effective(theirs), before)]
        d_ours = [(w - b) for w, b in zip(W.effective_weights(ours), before)]
        for i, (a, b) in enumerate(zip(d_ours, d_theirs)):
            # to rounding: a gradient entry near 0 rounds differently in the two forward passes
            torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-2 * lr,
                                       msg=f"width {n} layer {i}")
        # the per-entry move is the layer's learning rate (Adam's first step is lr * sign):
        # hidden and readout at lr * BASE / n in μP, lr in SP; the input layer at lr in both
        rate = [float(d.abs().max()) / lr for d in d_ours]
        want = BASE / n if parametrization == "mup" else 1.0
        assert rate[0] == pytest.approx(1, rel=0.01)
        assert rate[1:] == pytest.approx([want] * 3, rel=0.01)


@known_answer(W.coordinate_sizes, how="the reference library mup's model under MuAdam gives "
                                      "the same per-layer changes; flat in width in muP")
def test_coordinate_check_flat_in_mup_grows_in_sp_for_both_implementations():
    """The book's coordinate check, on the book's μP and on mup's: after three Adam steps each
    layer's activations change by about the same amount at width 64 and at width 1024; in SP
    (the control) the later layers' change grows with width."""
    x, y = _batch()
    widths, lr = (64, 1024), 1e-2

    def ours(p):
        def build(n):
            m = _mine(n, p)
            return m, torch.optim.Adam(m.parameters(), lr=lr)
        return W.coordinate_sizes(build, widths, x, y, steps=3)

    def theirs(p):
        def build(n):
            m = _mup_model(n, p)
            return m, mup.MuAdam(m.parameters(), lr=lr)
        return W.coordinate_sizes(build, widths, x, y, steps=3)

    for res in (ours("mup"), theirs("mup")):
        growth = np.array(res["change"][1]) / np.array(res["change"][0])
        assert np.all((growth > 0.5) & (growth < 2.0)), growth
    for res in (ours("sp"), theirs("sp")):
        growth = np.array(res["change"][1]) / np.array(res["change"][0])
        assert growth[-1] > 4 and growth[2] > 2, growth  # logits and the last hidden layer
    a, b = ours("mup"), theirs("mup")
    assert np.allclose(a["change"], b["change"], rtol=0.35), (a["change"], b["change"])
