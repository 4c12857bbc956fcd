"""TF32 emulated on the CPU: the rounding is TF32's (10 explicit mantissa bits, round to
nearest, ties away from zero), it reaches every float32 matmul and convolution, forward and
backward, and full_float32 turns it off as it turns TF32 off on a GPU."""
import math

import torch
import torch.nn.functional as F

from dynamics_ops.precision import MANTISSA_BITS, emulating_tf32, full_float32, tf32_round


def _reference(v: float) -> float:
    """TF32 of a float32 value by arithmetic, not bits: v = m 2^e with 0.5 <= |m| < 1 keeps
    MANTISSA_BITS + 1 significant bits, the half-way case rounding away from zero."""
    if not math.isfinite(v) or v == 0:
        return v
    m, e = math.frexp(v)
    scaled = abs(m) * 2 ** (MANTISSA_BITS + 1)
    kept = math.floor(scaled + 0.5)
    return math.copysign(math.ldexp(kept, e - MANTISSA_BITS - 1), v)


def test_tf32_round_is_ten_bits_to_nearest():
    """On its own terms, subnormals included: the library flushes subnormal floats to zero on
    import (dynamics.arithmetic), so the flush is off for this test."""
    torch.set_flush_denormal(False)
    try:
        _tf32_cases()
    finally:
        torch.set_flush_denormal(True)


def _tf32_cases():
    ulp = 2.0 ** -10  # TF32's spacing at 1
    cases = {1.0: 1.0, 1 + ulp: 1 + ulp, 1 + ulp / 2: 1 + ulp,  # a tie goes away from zero
             -(1 + ulp / 2): -(1 + ulp), 1 + ulp / 2 - 2 ** -23: 1.0, 1 + 0.75 * ulp: 1 + ulp,
             3 + 2 ** -10: 3 + 2 ** -9, 2.0 ** -130: 2.0 ** -130,  # subnormals keep their top bits
             math.inf: math.inf, -math.inf: -math.inf, 0.0: 0.0}
    x = torch.tensor(list(cases), dtype=torch.float32)
    assert tf32_round(x).tolist() == list(cases.values())
    assert math.isnan(float(tf32_round(torch.tensor([math.nan]))))
    assert float(tf32_round(torch.tensor(torch.finfo(torch.float32).max))) == math.inf
    gen = torch.Generator().manual_seed(0)
    r = torch.randn(2000, generator=gen) * torch.exp(torch.randn(2000, generator=gen) * 20)
    assert tf32_round(r).tolist() == [_reference(v) for v in r.tolist()]
    assert ((tf32_round(r) - r).abs() <= r.abs() * 2.0 ** -11).all()
    assert tf32_round(r.double()).equal(r.double())  # only float32 is rounded


def test_emulation_reaches_every_matmul_forward_and_backward():
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(5, 7, generator=gen), torch.randn(7, 3, generator=gen)
    exact = tf32_round(a) @ tf32_round(b)
    assert not exact.equal(a @ b)
    w = torch.randn(3, 7, generator=gen, requires_grad=True)
    x = torch.randn(4, 6, 7, generator=gen)
    with emulating_tf32():
        assert (a @ b).equal(exact) and torch.mm(a, b).equal(exact)
        assert torch.einsum("ij,jk->ik", a, b).equal(exact)
        assert torch.bmm(a[None], b[None])[0].equal(exact)
        assert torch.addmm(torch.ones(3), a, b).equal(exact + 1)
        y = F.linear(x, w)
        y.pow(2).sum().backward()
        with full_float32():
            assert (a @ b).equal(a @ b) and torch.mm(a, b).equal(torch.matmul(a, b))
            plain = torch.mm(a, b)
        kernel = torch.randn(2, 6, 3, generator=gen)
        conv = F.conv1d(x, kernel)
    assert plain.allclose(a @ b, rtol=0, atol=0)
    assert y.equal(tf32_round(x) @ tf32_round(w.detach()).T)
    grad = 2 * tf32_round(y.detach()).reshape(-1, 3).T @ tf32_round(x.reshape(-1, 7))
    assert w.grad.equal(grad)  # the backward's matmul is rounded too
    assert conv.equal(F.conv1d(tf32_round(x), tf32_round(kernel)))
    assert not conv.equal(F.conv1d(x, kernel))
    assert torch.backends.cuda.matmul.fp32_precision != "tf32"  # the settings came back


# ----------------------------------------------------------------------------- the book's claims
# The claims that rest on float32's last digits, computed as an Ampere GPU computes them.


def test_unconstrained_features_collapse_exactly_with_tf32_matmuls():
    """Neural collapse's unconstrained-features row (NC1 < 1e-6 and distance to the ETF < 1e-3
    after gradient descent with weight decay) holds when every matmul of the training is TF32.
    (At the gpu profile, measured with this emulation: NC1 8e-9, distance 2e-4.)"""
    from dynamics import collapse as C

    cfg = C.UFMConfig.for_profile("smoke")
    with emulating_tf32():
        h, _ = C.experiments.run_ufm(cfg, 0, bars=False)
    assert h.last("nc1") < 1e-6 and h.last("etf_distance") < 1e-3


def test_newton_schulz_band_and_muon_with_tf32_matmuls():
    """Spectral optimizers' Newton–Schulz rows hold with TF32 matmuls: five quintic steps in
    float32 leave a 256×128 Gaussian matrix's singular values in [0.6, 1.25] (moved by less
    than 0.01), and spectral shaping's exact polar factor moves by less than 1e-3."""
    import dynamics.spectral.science as S

    G = torch.randn(256, 128, generator=torch.Generator().manual_seed(0))
    exact = S.singular_value_band(G, 5)
    with emulating_tf32():
        band = S.singular_value_band(G, 5)
        shaped = S.spectral_shape(G, 0.0)
    assert 0.6 <= band["lo"][5] and band["hi"][5] <= 1.25
    assert abs(band["lo"][5] - exact["lo"][5]) < 1e-2 and abs(band["hi"][5] - exact["hi"][5]) < 1e-2
    assert torch.allclose(shaped, S.spectral_shape(G, 0.0), atol=1e-3)


def test_the_spectrum_rows_ranks_hold_with_tf32_matmuls():
    """Weight decay's spectrum row (decay lowers the stable and effective ranks and the tail
    exponent of the hidden matrices) holds when every matmul of both trainings is TF32: the
    ranks are read from an exact SVD of the trained weights, and TF32 only rounds the steps."""
    import importlib

    wdc = importlib.import_module("dynamics.weight_decay.claims")
    from dynamics.weight_decay import experiments as E
    from dynamics.weight_decay.science import SpectrumConfig

    cfg = SpectrumConfig.for_profile("smoke")
    with emulating_tf32():
        sp = E.run_spectrum(cfg, seed=0, bars=False)
    c = wdc._spectrum_checks(sp)  # hidden.1 without decay (a) and with it (b)
    assert c is not None
    assert c.b.stable_rank < c.a.stable_rank, (c.a, c.b)
    assert c.b.effective_rank < c.a.effective_rank, (c.a, c.b)
