"""dynamics.weight_decay.science: the update rules against torch's optimizers, the
equilibrium theory against simulated scale-invariant weights, the measures against known
values, clear errors for bad inputs."""
import math

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from known import known_answer

from dynamics.train import History, Hooks, Recipe, train
from dynamics.weight_decay import science as S


@pytest.fixture(scope="module")
def tiny_data():
    return S.mnist1d_data(200, n_test=100)


# ----------------------------------------------------------------------------- 1. decay in Adam


@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_step_matches_torch(decoupled):
    """The teaching update is torch.optim.Adam(weight_decay) (L2) or torch.optim.AdamW."""
    g = torch.Generator().manual_seed(0)
    w0 = torch.randn(50, generator=g)
    grads = [torch.randn(50, generator=g) * 10 ** float(k % 3 - 1) for k in range(20)]
    lr, wd = 1e-2, 0.3
    p = torch.nn.Parameter(w0.clone())
    opt = (torch.optim.AdamW if decoupled else torch.optim.Adam)([p], lr=lr, weight_decay=wd)
    w, m, v = w0.clone(), torch.zeros(50), torch.zeros(50)
    for t, grad in enumerate(grads, start=1):
        p.grad = grad.clone()
        opt.step()
        w, m, v = S.adam_step(w, grad, m, v, t, lr=lr, weight_decay=wd, decoupled=decoupled)
    torch.testing.assert_close(w, p.detach(), rtol=1e-5, atol=1e-6)


@known_answer(S.zero_gradient_path, how="AdamW shrinks a gradient-free coordinate as "
                                        "(1 - eta lambda)^t; under Adam + L2 lambda drops out")
def test_zero_gradient_coordinate():
    """Exercise 5's answer: a coordinate with no loss gradient shrinks geometrically under
    AdamW, by (1 - eta lambda)^t. Under Adam + L2 its only gradient is lambda w, which Adam
    divides by its own size: the step is about eta at first, whatever lambda is, and the whole
    path does not depend on lambda at all (v's long memory slows it as w shrinks)."""
    lr = 1e-3

    def path(wd, decoupled, steps):
        return S.zero_gradient_path(lr, wd, decoupled, steps)

    adamw = path(0.1, True, 1000)
    assert adamw[-1] == pytest.approx((1 - lr * 0.1) ** 1000, rel=1e-4)      # 0.905
    l2 = {wd: path(wd, False, 2000) for wd in (0.01, 0.1, 1.0)}
    for wd in (0.01, 1.0):
        np.testing.assert_allclose(l2[wd], l2[0.1], atol=1e-5)              # lambda drops out
    assert 1 - l2[0.1][99] == pytest.approx(100 * lr, rel=0.1)               # ~eta per step
    assert l2[0.1][999] < 0.3 and l2[0.1][1999] < 0.03                      # 0.26 and 0.02


# ----------------------------------------------------------------------------- 2. scale invariance


@known_answer(S.angular_update, how="two vectors built at a known angle theta from two unit "
                                    "vectors, at any scale: the angle is theta")
def test_angular_update_known_angles():
    e1, e2 = torch.zeros(50), torch.zeros(50)
    e1[3], e2[7] = 1.0, 1.0
    for theta in (1e-5, 1e-3, 0.3, 1.0, math.pi / 2, 3.0):
        rotated = math.cos(theta) * e1 + math.sin(theta) * e2
        got = float(S.angular_update(2.5 * e1, 0.1 * rotated))  # scale does not matter
        assert got == pytest.approx(theta, rel=1e-4, abs=1e-7)


@known_answer(S.layer_rotation,
              how="vectors at a known angle theta: the cosine distance is 1 - cos(theta) at any "
                  "scale; a path that turns away and back has net rotation 0 though its per-step "
                  "angles add up")
def test_layer_rotation_is_the_net_cosine_distance_from_the_start():
    e1, e2 = torch.zeros(50), torch.zeros(50)
    e1[3], e2[7] = 1.0, 1.0
    for theta in (1e-4, 0.3, 1.0, math.pi / 2, 3.0):
        rotated = math.cos(theta) * e1 + math.sin(theta) * e2
        got = float(S.layer_rotation(2.5 * e1, 0.1 * rotated.reshape(5, 10)))  # any shape, scale
        assert got == pytest.approx(1 - math.cos(theta), rel=1e-4, abs=1e-9)
    path = [math.cos(t) * e1 + math.sin(t) * e2 for t in (0.0, 0.4, 0.8, 0.4, 0.0)]
    steps = sum(float(S.angular_update(a, b)) for a, b in zip(path, path[1:]))
    assert steps == pytest.approx(1.6, rel=1e-4)                          # the per-step angles add
    assert float(S.layer_rotation(path[0], path[-1])) == pytest.approx(0.0, abs=1e-7)  # net: none


@known_answer(S.rms, how="numpy's root-mean-square of the same entries")
def test_rms_matches_numpy():
    w = torch.randn(7, 13)
    assert float(S.rms(w)) == pytest.approx(float(np.sqrt(np.mean(w.numpy() ** 2))), rel=1e-6)


@known_answer(S.equilibrium, S.adamw_equilibrium, S.sgd_equilibrium,
              how="the closed forms of the table, evaluated by hand at chosen eta, lambda, "
                  "numel and gradient size")
def test_equilibrium_formulas():
    eq = S.equilibrium("adamw", 3e-3, 2.0, numel=400)
    assert eq["rms"] == pytest.approx(math.sqrt(3e-3 / 4.0))
    assert eq["norm"] == pytest.approx(math.sqrt(3e-3 * 400 / 4.0))
    assert eq["angle"] == pytest.approx(math.sqrt(2 * 6e-3 * 0.1 / 1.9))
    assert eq["effective_lr"] == pytest.approx(math.sqrt(2 * 6e-3))
    assert eq["tau"] == pytest.approx(1 / 6e-3)
    sgd = S.equilibrium("sgd", 0.3, 0.02, numel=100, unit_grad_sq=9.0)
    assert sgd["norm"] == pytest.approx((0.3 * 9.0 / 0.04) ** 0.25)
    assert sgd["angle"] == pytest.approx(math.sqrt(2 * 6e-3))
    assert sgd["effective_lr"] == pytest.approx(math.sqrt(2 * 6e-3) / 3.0)
    mom = S.equilibrium("momentum", 0.1, 0.01, numel=10, unit_grad_sq=1.0, momentum=0.9)
    assert mom["angle"] == pytest.approx(math.sqrt(2e-3 / 1.9))
    assert mom["norm"] == pytest.approx((0.1 / (2 * 0.01 * 0.1)) ** 0.25)


@known_answer(S.norm_step, how="at the equilibrium norm eta numel / (2 lambda) the squared norm "
                               "is a fixed point to first order in eta lambda")
def test_norm_step_balance_is_the_equilibrium():
    """The fixed point of norm_step is the equilibrium's norm (to first order in eta lambda)."""
    lr, wd, numel = 3e-3, 2.0, 1000
    eq = S.adamw_equilibrium(lr, wd, numel)
    sq = eq["norm"] ** 2
    assert S.norm_step(sq, lr, wd, numel) == pytest.approx(sq, rel=2 * lr * wd)


@pytest.mark.parametrize("kwargs", [
    dict(optimizer="lion", lr=1e-3, weight_decay=1.0, numel=10),
    dict(optimizer="adamw", lr=-1e-3, weight_decay=1.0, numel=10),
    dict(optimizer="adamw", lr=1e-3, weight_decay=0.0, numel=10),
    dict(optimizer="adamw", lr=0.5, weight_decay=4.0, numel=10),  # eta * lambda >= 1
    dict(optimizer="adamw", lr=1e-3, weight_decay=1.0, numel=0),
    dict(optimizer="adamw", lr=1e-3, weight_decay=1.0, numel=10, beta1=1.0),
    dict(optimizer="sgd", lr=0.1, weight_decay=0.01, numel=10),  # no unit_grad_sq
    dict(optimizer="momentum", lr=0.1, weight_decay=0.01, numel=10, unit_grad_sq=1.0, momentum=1.0),
])
def test_equilibrium_bad_inputs(kwargs):
    with pytest.raises(ValueError):
        S.equilibrium(**kwargs)


@known_answer(S.adamw_norm_trajectory, how="the norm recursion iterated step by step, and its "
                                           "fixed point sqrt(eta / 2 lambda) far out")
def test_norm_trajectory_is_the_recursion():
    lr, wd, rms0, c = 3e-3, 2.0, 0.09, 1000
    n2, traj = rms0 ** 2 * c, [rms0]
    for _ in range(400):
        n2 = S.norm_step(n2, lr, wd, c)
        traj.append(math.sqrt(n2 / c))
    np.testing.assert_allclose(S.adamw_norm_trajectory(rms0, lr, wd, np.arange(401)), traj, rtol=1e-9)
    far = S.adamw_norm_trajectory(rms0, lr, wd, [10 ** 6])[0]
    assert far == pytest.approx(math.sqrt(lr / (2 * wd)), rel=2 * lr * wd)


def _random_walk(optimizer, lr, wd, steps=3000, dim=2000, seed=0, momentum=0.0):
    """A scale-invariant weight driven by pure gradient noise: the gradient is a random
    direction orthogonal to w with norm 1/||w|| (what a normalized layer produces).
    Returns the norm and the angle turned at every step."""
    g = torch.Generator().manual_seed(seed)
    w = torch.nn.Parameter(torch.randn(dim, generator=g) * 0.05)
    opt = (torch.optim.AdamW([w], lr=lr, weight_decay=wd) if optimizer == "adamw"
           else torch.optim.SGD([w], lr=lr, weight_decay=wd, momentum=momentum))
    norms, angles = [], []
    for _ in range(steps):
        z = torch.randn(dim, generator=g)
        with torch.no_grad():
            z -= (z @ w) / (w @ w) * w
            w.grad = z / z.norm() / w.norm()
        before = w.detach().clone()
        opt.step()
        norms.append(float(w.detach().norm()))
        angles.append(float(S.angular_update(before, w.detach())))
    return np.array(norms), np.array(angles)


@known_answer(S.angular_update, S.equilibrium,
              how="a scale-invariant weight driven by pure orthogonal noise under torch.optim.AdamW "
                  "settles at the predicted RMS and angle")
def test_equilibrium_against_torch_adamw():
    lr, wd = 1e-2, 0.5  # tau = 200 steps
    norms, angles = _random_walk("adamw", lr, wd)
    eq = S.equilibrium("adamw", lr, wd, 2000)
    assert norms[-1000:].mean() / math.sqrt(2000) == pytest.approx(eq["rms"], rel=0.05)
    assert angles[-1000:].mean() == pytest.approx(eq["angle"], rel=0.05)


@pytest.mark.parametrize("mu", [0.0, 0.9])
def test_equilibrium_against_torch_sgd(mu):
    """||g~|| = 1 here by construction, so the norm and angle are both predicted exactly."""
    lr, wd = 0.5 * (1 - mu), 0.02
    norms, angles = _random_walk("sgd", lr, wd, momentum=mu, steps=4000)
    eq = S.equilibrium("momentum" if mu else "sgd", lr, wd, 2000, unit_grad_sq=1.0, momentum=mu)
    assert norms[-1500:].mean() == pytest.approx(eq["norm"], rel=0.05)
    assert angles[-1500:].mean() == pytest.approx(eq["angle"], rel=0.05)


@known_answer(S.effective_lr, how="eta / RMS for AdamW and eta / ||w||^2 for SGD, by hand")
def test_effective_lr_by_hand():
    assert S.effective_lr("adamw", 2e-3, 0.05, 100) == pytest.approx(0.04)
    assert S.effective_lr("sgd", 0.1, 0.5, 4) == pytest.approx(0.1)     # ||w||^2 = 0.25 * 4
    with pytest.raises(ValueError):
        S.effective_lr("lion", 0.1, 0.5, 4)


def test_normmlp_is_scale_invariant():
    torch.manual_seed(0)
    model = S.NormMLP(12, 16, 2, 5)
    x = torch.randn(32, 12)
    out = model(x)
    with torch.no_grad():
        for w in model.scale_invariant().values():
            w.mul_(3.7)
    torch.testing.assert_close(model(x), out, rtol=1e-4, atol=1e-4)
    torch.nn.functional.cross_entropy(model(x), torch.randint(0, 5, (32,))).backward()
    for w in model.scale_invariant().values():  # the gradient is orthogonal to the weight
        cos = float((w.grad * w.detach()).sum() / (w.grad.norm() * w.detach().norm()))
        assert abs(cos) < 1e-4
    assert set(model.scale_invariant()) == {"hidden.0", "hidden.1", "head"}
    with pytest.raises(ValueError):
        S.NormMLP(12, 0, 2, 5)
    with pytest.raises(ValueError):
        S.NormMLP(12, 8, 2, 5, temperature=0.0)


def _outputs_after(tiny_data, optimizer, scale, lr, wd, steps=30):
    torch.manual_seed(0)
    model = S.NormMLP(tiny_data.input_dim, 16, 2, tiny_data.n_classes)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    train(model, tiny_data,
          Recipe(steps=steps, optimizer=optimizer, lr=lr, weight_decay=wd, batch_size=32, eval=steps),
          bars=False, seed=0)
    assert len(list(model.parameters())) == len(model.scale_invariant())
    return model(tiny_data.x_test).detach()


def test_adamw_symmetry_of_scale_invariant_networks(tiny_data):
    """For a fully scale-invariant network AdamW is exactly symmetric under
    (W0, eta, lambda) -> (c W0, c eta, lambda / c): the gradient scales by 1/c, Adam's update
    does not see the scale, and the decay factor 1 - eta lambda is unchanged. So only eta*lambda
    (and eta / ||W0||) matter: the root of trajectory invariance."""
    a = _outputs_after(tiny_data, "adamw", 1.0, 2e-3, 2.0)
    b = _outputs_after(tiny_data, "adamw", 4.0, 8e-3, 0.5)
    torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-3)
    c = _outputs_after(tiny_data, "adamw", 1.0, 8e-3, 0.5)  # same product, same W0: differs
    assert (a - c).abs().max() > 1e-2


def test_sgd_symmetry_of_scale_invariant_networks(tiny_data):
    """SGD's symmetry is (W0, eta, lambda) -> (c W0, c^2 eta, lambda / c^2): the update eta g
    scales by c^2 / c = c, like the weights (exercise 2: at equal eta*lambda, the norm moves as
    sqrt(eta) and the angle does not)."""
    a = _outputs_after(tiny_data, "sgd", 1.0, 0.2, 0.04)
    b = _outputs_after(tiny_data, "sgd", 2.0, 0.8, 0.01)
    torch.testing.assert_close(a, b, rtol=1e-3, atol=1e-3)


class _Ops(TorchDispatchMode):
    """Counts the operations dispatched that are not views (on a GPU, each a kernel launch)."""

    def __enter__(self):
        self.n = 0
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.n += not func.is_view
        return func(*args, **(kwargs or {}))


@known_answer(S.RotationMeter, how="snapshots of the weight taken around each optimizer step: "
                                    "norm, angle and rotation recomputed from them")
def test_rotation_meter_records_every_step(tiny_data):
    torch.manual_seed(0)
    model = S.NormMLP(tiny_data.input_dim, 16, 1, tiny_data.n_classes)
    w = model.hidden[0].weight
    meter = S.RotationMeter(model.scale_invariant(), steps=5)
    snapshots = [w.detach().clone()]
    train(model, tiny_data, Recipe(steps=5, optimizer='sgd', lr=0.5, weight_decay=0.01, eval=5),
          hooks=Hooks(before_step=meter.before_step, after_step=lambda m, s: (meter.after_step(m, s), snapshots.append(w.detach().clone()))),
          bars=False)
    a = meter.arrays()
    assert a["norm"].shape == (6, 2) and a["angle"].shape == (6, 2)
    for step in range(1, 6):
        # on the CPU the meter's batched arithmetic is the two functions', number for number
        assert a["norm"][step, 0] == float(snapshots[step].norm())
        assert a["angle"][step, 0] == float(S.angular_update(snapshots[step - 1], snapshots[step]))
        assert a["rotation"][step, 0] == float(S.layer_rotation(snapshots[0], snapshots[step]))
        assert a["unit_grad"][step, 0] > 0
    with pytest.raises(ValueError):
        S.RotationMeter({}, 5)
    with pytest.raises(ValueError):
        S.RotationMeter(model.scale_invariant(), 0)


def test_the_meter_costs_the_same_operations_for_two_weights_or_six():
    """The meter works on all its weights at once (one flat vector, ``_foreach_norm``): the
    device operations of one step do not grow with the number of weights (on a GPU, each is a
    kernel launch). Counted over a step of a network with 2 and with 6 scale-invariant
    matrices."""
    counts = []
    for depth in (1, 5):
        torch.manual_seed(0)
        model = S.NormMLP(40, 16, depth, 10)
        meter = S.RotationMeter(model.scale_invariant(), steps=3)
        assert len(meter.names) == depth + 1
        model(torch.randn(8, 40)).sum().backward()
        with _Ops() as ops:
            meter.before_step(model, 1)
            with torch.no_grad():
                for w in meter.weights:
                    w.mul_(0.9).add_(0.01)
            meter.after_step(model, 1)
        counts.append(ops.n - 2 * len(meter.weights))  # less the mock update's own operations
    assert counts[0] == counts[1], counts


@known_answer(S.StackedRotationMeter, how="snapshots of each model's weights and gradients "
                                           "taken around every batched step: norm, angle, "
                                           "rotation and unit gradient recomputed from them")
def test_stacked_meter_records_each_models_own_rotation(tiny_data):
    """Three scale-invariant networks trained together by ``train_many`` (different seeds,
    rates and decays): the stacked meter's records of model k are what
    :func:`~.science.angular_update`, :func:`~.science.layer_rotation` and the norms give
    on snapshots of model k alone, step by step."""
    from dynamics.sweep import train_many

    build = lambda cfg: S.NormMLP(tiny_data.input_dim, 16, 1, tiny_data.n_classes)  # noqa: E731
    names = [n for n, _ in build({}).named_parameters()]  # all scale-invariant (norm head)
    numel = [p.numel() for p in build({}).parameters()]
    configs = [dict(seed=0, lr=0.5, weight_decay=0.01), dict(seed=1, lr=0.2, weight_decay=0.05),
               dict(seed=2, lr=0.5, weight_decay=0.0)]
    meter = S.StackedRotationMeter(names, numel, 3, steps=5, device="cpu")
    snaps, grads = [], {}

    def before(step, params, g):
        if step == 1:
            meter.start(params)
            snaps.append({n: t.clone() for n, t in params.items()})
        grads[step] = {n: t.clone() for n, t in g.items()}
        meter.before_step(step, params, g)

    def after(step, params):
        meter.after_step(step, params)
        snaps.append({n: t.clone() for n, t in params.items()})

    train_many(build, tiny_data, configs, Recipe(steps=5, optimizer="sgd", batch_size=50, eval=5),
               strategy="batched", before_step=before, on_step=after, bars=False)
    for k in range(3):
        a = meter.arrays(k)
        assert a["norm"].shape == (6, len(names))
        for step in range(1, 6):
            for l, n in enumerate(names):
                w0, w1, w = snaps[0][n][k], snaps[step - 1][n][k], snaps[step][n][k]
                close = dict(rel=1e-5, abs=1e-7)
                assert a["norm"][step, l] == pytest.approx(float(w.norm()), **close)
                assert a["angle"][step, l] == pytest.approx(float(S.angular_update(w1, w)), rel=1e-4)
                assert a["rotation"][step, l] == pytest.approx(float(S.layer_rotation(w0, w)), rel=1e-4)
                assert a["unit_grad"][step, l] == pytest.approx(
                    float(grads[step][n][k].norm() * w1.norm()), **close)
    assert not np.allclose(meter.arrays(0)["angle"], meter.arrays(1)["angle"])
    with pytest.raises(ValueError, match="one size per weight"):
        S.StackedRotationMeter(names, numel[:1], 3, 5, "cpu")
    with pytest.raises(ValueError, match="positive"):
        S.StackedRotationMeter(names, numel, 0, 5, "cpu")


def test_the_stacked_meter_costs_the_same_operations_for_two_models_or_six():
    """A step of the stacked meter is a fixed number of device operations whatever the number
    of models it measures (on a GPU each is a kernel launch)."""
    counts = []
    for k in (2, 6):
        params = {"a": torch.randn(k, 8, 4), "b": torch.randn(k, 3, 8)}
        grads = {n: torch.randn_like(t) for n, t in params.items()}
        meter = S.StackedRotationMeter(list(params), [32, 24], k, steps=3, device="cpu")
        meter.start(params)
        with _Ops() as ops:
            meter.before_step(1, params, grads)
            meter.after_step(1, params)
        counts.append(ops.n)
    assert counts[0] == counts[1], counts


@known_answer(S.relaxation_steps, how="the predicted trajectory closes all but e^-2 of its gap "
                                      "in tau = 1/(eta lambda) steps; a run at equilibrium has "
                                      "nothing to relax")
def test_relaxation_steps():
    lr, wd = 3e-3, 2.0
    traj = S.adamw_norm_trajectory(0.09, lr, wd, np.arange(2000))
    eq = math.sqrt(lr / (2 * wd))
    # the squared gap shrinks by (1 - eta lambda)^2 per step: e^-2 after about tau steps
    assert S.relaxation_steps(traj, eq) == pytest.approx(1 / (lr * wd), rel=0.05)
    assert S.relaxation_steps(np.full(10, eq), eq) is None


# ----------------------------------------------------------------------------- 3. the clock


@known_answer(S.clock_time, how="eta lambda t by hand at three steps")
def test_clock_time_and_matched_runs():
    np.testing.assert_allclose(S.clock_time([0, 100, 250], 2e-3, 2.0), [0, 0.4, 1.0])
    runs = S.matched_runs(4e-3, 2e-3, 2.0, 4.0)
    assert [r["lr"] * r["weight_decay"] for r in runs] == pytest.approx([4e-3] * 3 + [1.6e-2])
    assert [r["lr"] for r in runs] == pytest.approx([1e-3, 2e-3, 4e-3, 2e-3])
    assert [r["matched"] for r in runs] == [True, True, True, False]
    with pytest.raises(ValueError):
        S.matched_runs(4e-3, -1.0, 2.0, 4.0)


@known_answer(S.final_loss, how="the mean of the last quarter (and half) of a short hand-made "
                                "history; NaN once diverged")
def test_final_loss_is_the_tail_mean():
    h = History()
    for s, v in enumerate([5, 4, 3, 2, 1, 1, 3, 1]):
        h.append(s, train_loss=v)
    assert S.final_loss(h) == pytest.approx(2.0)  # mean of the last 2 of 8
    assert S.final_loss(h, tail=0.5) == pytest.approx(1.5)
    h.diverged_at = 3
    assert math.isnan(S.final_loss(h))


# ----------------------------------------------------------------------------- 4. the weights


def test_science_re_exports_the_spectra():
    from dynamics.weight_decay import spectra
    assert S.tail_fit is spectra.tail_fit and S.spectrum_stats is spectra.spectrum_stats


# ----------------------------------------------------------------------------- 5. reading a grid


def _ridge_grid(lrs, decays, best_of_lr, width=0.6):
    """Accuracy peaked in log(lambda) at best_of_lr(eta), in every column."""
    ld = np.log10(decays)[:, None]
    peak = np.log10([best_of_lr(e) for e in lrs])[None, :]
    return 0.5 + 0.1 * np.exp(-((ld - peak) / width) ** 2)


@known_answer(S.best_decay_per_lr, S.ridge_slope,
              how="grids built with the best lambda fixed (slope 0) or proportional to 1/eta "
                  "(slope -1)")
def test_ridge_slope_tells_the_parameterization():
    lrs = list(np.geomspace(1e-4, 10 ** -1.5, 6))
    decays = list(np.geomspace(1e-3, 10, 9))
    flat = _ridge_grid(lrs, decays, lambda e: 0.5)            # best lambda ignores eta
    product = _ridge_grid(lrs, decays, lambda e: 3e-4 / e)    # best eta * lambda is fixed
    for acc, slope in ((flat, 0.0), (product, -1.0)):
        ridge = S.best_decay_per_lr(acc, decays)
        assert S.ridge_slope(lrs, ridge) == pytest.approx(slope, abs=0.15)
    ridge = S.best_decay_per_lr(flat, decays)
    assert ridge[0] == pytest.approx(0.5, rel=0.25)  # between grid values, not snapped


@known_answer(S.best_cell, S.best_decay_per_lr,
              how="a 4 x 2 hand-made grid whose best cell and flat column are known")
def test_best_decay_per_lr_skips_columns_without_a_decay_effect():
    decays = [1e-3, 1e-2, 1e-1, 1.0]
    acc = np.array([[0.50, 0.40], [0.50, 0.45], [0.505, 0.60], [0.50, 0.50]])
    ridge = S.best_decay_per_lr(acc, decays)
    assert ridge[0] is None and ridge[1] == pytest.approx(0.1, rel=0.5)
    assert math.isnan(S.ridge_slope([1e-3, 1e-2], ridge))
    with pytest.raises(ValueError):
        S.best_decay_per_lr(acc[:2], decays)
    best = S.best_cell(acc, decays, [1e-3, 1e-2])
    assert best == dict(acc=0.6, lr=1e-2, decay=0.1)
    assert S.best_cell(np.full((2, 2), np.nan), [1, 2], [1, 2])["lr"] is None


# ----------------------------------------------------------------------------- 6. settings


def test_configs_validate_and_presets_construct():
    for cls in (S.DecouplingConfig, S.EquilibriumConfig, S.ClockConfig, S.SpectrumConfig):
        for profile in ("smoke", "cpu", "gpu"):
            cls.for_profile(profile)
    with pytest.raises(ValueError):
        S.DecouplingConfig(n_lr=1)
    with pytest.raises(ValueError):
        S.EquilibriumConfig(optimizer="adam")
    with pytest.raises(ValueError):
        S.DecouplingConfig(lr_low=1e-2, lr_high=1e-3).lrs()
    with pytest.raises(ValueError):
        S.DecouplingConfig().decays("sgd")


def test_grid_axes_share_one_spacing():
    """Learning rates and decays are spaced alike, so constant eta*lambda is a grid diagonal."""
    for profile in ("smoke", "cpu", "gpu"):
        cfg = S.DecouplingConfig.for_profile(profile)
        step = np.diff(np.log10(cfg.lrs()))
        for kind in S.GRIDS:
            np.testing.assert_allclose(np.diff(np.log10(cfg.decays(kind))), step[0], rtol=1e-9)
        np.testing.assert_allclose(step, step[0], rtol=1e-9)


