"""Tests of dynamics.collapse: the neural-collapse metrics against numpy and exact
geometries, the conditions of Jacot et al., the imbalanced solution, and the chapter's
claims in the smoke profile (seeds 0-2)."""
import functools
import math

import numpy as np
import pytest
import torch

from dynamics import collapse as NC
from dynamics import results


# ----------------------------------------------------------------------------- helpers


def etf_features(C=4, d=7, n=5, offset=3.0, seed=0):
    """n copies of each vertex of a simplex ETF in R^d, shifted by a common vector."""
    etf = NC.simplex_etf(C, d, seed=seed)
    shift = offset * torch.randn(d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed + 1))
    h = etf.repeat_interleave(n, dim=0) + shift
    y = torch.arange(C).repeat_interleave(n)
    return h, y, etf


def numpy_metrics(h, y, W, b=None):
    """Direct numpy translation of the definitions (d x d covariances, pinv)."""
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
    etf = np.full((C, C), -1 / (C - 1)) + np.eye(C) * (1 + 1 / (C - 1))
    Wc = W - W.mean(0)
    logits = h @ W.T + (0 if b is None else np.asarray(b, float))
    dists = ((h[:, None, :] - means[None]) ** 2).sum(-1)
    return dict(nc1=nc1, equinorm=norms.std() / norms.mean(),
                equiangularity=np.abs(cos[off] + 1 / (C - 1)).mean(),
                etf_distance=np.linalg.norm(cos - etf) / np.linalg.norm(etf),
                nc3=np.linalg.norm(Wc / np.linalg.norm(Wc) - M / np.linalg.norm(M)) ** 2,
                nc4=np.mean(logits.argmax(1) != dists.argmin(1)))


def floats(d):
    return {k: float(v) for k, v in d.items()}


# ----------------------------------------------------------------------------- metrics


@pytest.mark.parametrize("C,d", [(2, 3), (4, 7), (10, 16)])
def test_every_metric_is_zero_at_exact_collapse_onto_a_simplex_etf(C, d):
    h, y, etf = etf_features(C, d)
    # the classifier: the ETF itself, scaled, plus a vector common to all rows (no decision
    # changes), with the bias that removes the global mean of the features
    W = 2.5 * etf + torch.randn(d, dtype=torch.float64)
    b = -W @ h.mean(0)
    m = floats(NC.nc_metrics(h, y, W, b))
    assert set(m) == set(NC.METRICS)
    for key, value in m.items():
        assert abs(value) < 1e-10, (key, value)


def test_metrics_match_a_direct_numpy_computation_on_random_features():
    g = torch.Generator().manual_seed(3)
    C, d, N = 5, 9, 80
    y = torch.arange(N) % C
    h = torch.randn(N, d, generator=g, dtype=torch.float64) + 2 * torch.randn(C, d, generator=g,
                                                                               dtype=torch.float64)[y]
    W = torch.randn(C, d, generator=g, dtype=torch.float64)
    b = torch.randn(C, generator=g, dtype=torch.float64)
    ours = floats(NC.nc_metrics(h, y, W, b))
    ref = numpy_metrics(h.numpy(), y.numpy(), W.numpy(), b.numpy())
    for key in NC.METRICS:
        assert ours[key] == pytest.approx(ref[key], rel=1e-8, abs=1e-12), key
    assert 0 < ours["nc4"] < 1  # random weights disagree with the nearest centre somewhere


def test_metrics_match_numpy_in_float32_and_with_fewer_dims_than_classes():
    g = torch.Generator().manual_seed(4)
    C, d, N = 6, 3, 60  # d < C - 1: Σ_B has rank d
    y = torch.arange(N) % C
    h = torch.randn(N, d, generator=g) + 3 * torch.randn(C, d, generator=g)[y]
    W = torch.randn(C, d, generator=g)
    ours = floats(NC.nc_metrics(h, y, W))
    ref = numpy_metrics(h.double().numpy(), y.numpy(), W.double().numpy())
    for key in NC.METRICS:
        assert ours[key] == pytest.approx(ref[key], rel=1e-5, abs=1e-9), key


def test_metrics_are_invariant_to_the_scale_of_features_and_classifier():
    g = torch.Generator().manual_seed(5)
    C, d, N = 4, 6, 40
    y = torch.arange(N) % C
    h = torch.randn(N, d, generator=g, dtype=torch.float64) + torch.randn(C, d, generator=g,
                                                                          dtype=torch.float64)[y]
    W = torch.randn(C, d, generator=g, dtype=torch.float64)
    b = torch.randn(C, generator=g, dtype=torch.float64)
    base = floats(NC.nc_metrics(h, y, W, b))
    for s in (1e-3, 37.0):
        scaled = floats(NC.nc_metrics(s * h, y, 0.1 * W, 0.1 * s * b))
        for key in NC.METRICS:
            assert scaled[key] == pytest.approx(base[key], rel=1e-9, abs=1e-12), (key, s)


def test_metrics_reject_bad_inputs_clearly():
    h, y, etf = etf_features(3, 4)
    with pytest.raises(ValueError, match="labels must lie"):
        NC.nc_metrics(h, y + 1, etf)
    with pytest.raises(ValueError, match="no examples"):
        NC.nc_metrics(h[y != 1], torch.where(y[y != 1] == 2, 2, 0), etf)
    with pytest.raises(ValueError, match="expected"):
        NC.nc_metrics(h, y, etf[:, :2])
    with pytest.raises(ValueError, match="matrix"):
        NC.nc_metrics(h[:, 0], y, etf)
    with pytest.raises(ValueError, match="at least 2 classes"):
        NC.class_means(h, torch.zeros_like(y), 1)


def test_simplex_etf_has_unit_rows_equal_angles_and_zero_mean():
    for C, d in ((3, 3), (4, 3), (5, 12)):
        etf = NC.simplex_etf(C, d)
        assert etf.shape == (C, d)
        assert torch.allclose(etf @ etf.T, NC.etf_gram(C), atol=1e-12)
        assert torch.allclose(etf.sum(0), torch.zeros(d, dtype=torch.float64), atol=1e-12)
    with pytest.raises(ValueError):
        NC.simplex_etf(5, 2)


# ----------------------------------------------------------------------------- conditions


def test_balancedness_is_zero_for_balanced_layers_and_conserved_by_gradient_flow():
    g = torch.Generator().manual_seed(0)
    d = 5
    U, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    S = torch.diag(torch.tensor([3.0, 2.0, 1.0, 0.5, 0.1], dtype=torch.float64))
    W1 = U @ S @ V.T
    W2 = Q @ S @ U.T  # W2ᵀW2 = U S² Uᵀ = W1 W1ᵀ
    assert float(NC.balancedness([W1, W2])) < 1e-12
    assert float(NC.balancedness([W1, torch.randn(3, d, generator=g, dtype=torch.float64)])) > 0.1
    with pytest.raises(ValueError):
        NC.balancedness([W1])
    with pytest.raises(ValueError, match="chain"):
        NC.balancedness([W1, torch.randn(3, 4, dtype=torch.float64)])

    # small-step gradient descent on a linear chain keeps W2ᵀW2 − W1W1ᵀ (no decay) and
    # shrinks it (weight decay λ: by about exp(−2 λ η t))
    def gap_after(weight_decay, steps=400, lr=0.01):
        torch.manual_seed(0)
        x, t = torch.randn(50, 4), torch.randn(50, 3)
        w1 = torch.nn.Parameter(torch.randn(6, 4) * 0.5)
        w2 = torch.nn.Parameter(torch.randn(3, 6) * 0.5)
        opt = torch.optim.SGD([w1, w2], lr=lr, weight_decay=weight_decay)
        before = (w2.T @ w2 - w1 @ w1.T).detach().clone()
        for _ in range(steps):
            opt.zero_grad()
            (0.5 * (x @ w1.T @ w2.T - t).pow(2).sum(1).mean()).backward()
            opt.step()
        after = (w2.T @ w2 - w1 @ w1.T).detach()
        return float((after - before).norm() / before.norm()), float(after.norm() / before.norm())

    with NC.small_model_threads("cpu"):
        drift, _ = gap_after(0.0)
        _, shrink = gap_after(0.5)
    assert drift < 0.02
    assert shrink == pytest.approx(math.exp(-2 * 0.5 * 0.01 * 400), rel=0.1)


def test_conditioning_is_the_ratio_of_singular_values():
    U, _ = torch.linalg.qr(torch.randn(20, 4, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(6, 4, dtype=torch.float64))
    X = U @ torch.diag(torch.tensor([8.0, 4.0, 2.0, 1.0], dtype=torch.float64)) @ V.T
    assert float(NC.conditioning(X, 3)) == pytest.approx(4.0)
    assert float(NC.conditioning(X, 4)) == pytest.approx(8.0)
    with pytest.raises(ValueError):
        NC.conditioning(X, 7)


# ----------------------------------------------------------------------------- models and measuring


def test_measure_matches_nc_metrics_on_the_model_features_and_reports_divergence_as_nan():
    torch.manual_seed(0)
    model = NC.CollapseNet(5, 16, 2, 3, 4).double()
    x = torch.randn(40, 5, dtype=torch.float64)
    y = torch.arange(40) % 4
    m = NC.measure(model, x, y, conditions=True)
    ref = floats(NC.nc_metrics(model.features(x).detach(), y, model.head.weight.detach()))
    for key in NC.METRICS:
        assert m[key] == pytest.approx(ref[key], rel=1e-9)
    assert m["balancedness"] > 0 and m["conditioning"] >= 1
    with torch.no_grad():
        model.body[0].weight.fill_(float("inf"))
    bad = NC.measure(model, x, y, conditions=True)
    assert set(bad) == set(NC.METRICS + NC.CONDITIONS)
    assert all(math.isnan(v) for v in bad.values())


def test_models_validate_and_expose_features_and_head():
    with pytest.raises(ValueError):
        NC.CollapseNet(5, 16, 2, 0, 4)
    with pytest.raises(ValueError):
        NC.UnconstrainedFeatures(3, 4, 5)
    ufm = NC.UnconstrainedFeatures(12, 6, 3, linear_depth=2)
    idx = torch.arange(12)
    assert ufm.features(idx).shape == (12, 6) and ufm(idx).shape == (12, 3)
    assert len(NC.linear_weights(ufm)) == 2
    with pytest.raises(ValueError):
        NC.ufm_data([3, 0, 2])


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


def test_project_3d_of_an_exact_etf_lands_on_the_reference_simplex():
    h, y, etf = etf_features(4, 9, n=3)
    means, _ = NC.class_means(h, y, 4)
    snap = dict(means=means - h.mean(0), weight=etf, points=h - h.mean(0), point_labels=y)
    frames = NC.project_3d([snap, snap])
    last = frames[-1]
    assert np.allclose(np.linalg.norm(last["means"], axis=1), 1.0)
    assert np.allclose(last["means"], last["etf"], atol=1e-8)
    assert np.allclose(last["weight"], last["etf"], atol=1e-8)  # self-dual classifier


# ----------------------------------------------------------------------------- imbalance theory


def test_imbalanced_solution_solves_the_two_variable_problem_and_orders_norms_by_count():
    from scipy.optimize import minimize

    counts, lam, L = [100, 30, 10], 5e-3, 2
    sol = NC.imbalanced_ufm_solution(counts, lam, L)
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
    equal = NC.imbalanced_ufm_solution([20, 20, 20], lam, L)
    assert np.ptp(equal["feature_norm"]) < 1e-9
    with pytest.raises(ValueError):
        NC.imbalanced_ufm_solution([10, 0], lam)
    with pytest.raises(ValueError):
        NC.imbalanced_ufm_solution([10, 5], 0.0)


# ----------------------------------------------------------------------------- claims (smoke, seeds 0-2)


@functools.cache
def collapse_runs(seed):
    cfg = NC.CollapseConfig.for_profile("smoke")
    data = NC.load_data(cfg, seed)
    return NC.run_conditions(cfg, seed, data)


@functools.cache
def ufm_runs(seed):
    return NC.run_ufm_pair(NC.UFMConfig.for_profile("smoke", linear_depth=2), seed)


SEEDS = [0, 1, 2]


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_nc1_falls_tenfold_between_zero_error_and_the_end(seed):
    h = collapse_runs(seed)["AdamW, weight decay"]
    z = NC.terminal_phase_start(h)
    assert z is not None and z < h.steps[-1] // 4  # a long terminal phase
    assert NC._at_zero_error(h, "nc1") >= 10 * h.last("nc1")


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_class_means_move_towards_the_simplex_etf_and_ncc_agrees(seed):
    h = collapse_runs(seed)["AdamW, weight decay"]
    assert h.last("etf_distance") < NC._at_zero_error(h, "etf_distance")
    assert h.last("nc3") < NC._at_zero_error(h, "nc3")
    assert h.last("nc4") < 0.01


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_weight_decay_makes_final_nc1_at_least_fivefold_lower(seed):
    runs = collapse_runs(seed)
    assert runs["AdamW, none"].last("nc1") >= 5 * runs["AdamW, weight decay"].last("nc1")
    assert runs["AdamW, none"].last("train_acc") == 1.0  # both fit: the difference is collapse


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_gradient_descent_with_weight_decay_balances_the_linear_part(seed):
    runs = collapse_runs(seed)
    with_decay, without = runs["GD, weight decay"], runs["GD, none"]
    assert with_decay.last("train_acc") == 1.0
    # measured over seeds 0-4 in the smoke profile: ~0.1 with decay, ~0.9 without
    assert with_decay.last("balancedness") < 0.3 * without.last("balancedness")
    assert with_decay.last("balancedness") < with_decay["balancedness"][0] / 3


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_unconstrained_features_collapse_exactly_only_with_weight_decay(seed):
    runs = ufm_runs(seed)
    (_, with_decay), (_, without) = runs.items()
    assert with_decay.last("nc1") < 1e-8 and with_decay.last("etf_distance") < 1e-3
    assert with_decay.last("balancedness") < 1e-2
    assert without.last("nc1") > 1e-5 and without.last("etf_distance") > 1e-2


@pytest.mark.claim
@pytest.mark.parametrize("seed", SEEDS)
def test_imbalanced_means_are_orthogonal_with_the_predicted_lengths(seed):
    cfg = NC.ImbalanceConfig.for_profile("smoke")
    r = NC.run_imbalance(cfg, seed)
    off = ~np.eye(cfg.n_classes, dtype=bool)
    ufm = r["ufm"]
    assert np.all(np.abs(ufm["angles"][off] - 90) < 1.0)
    assert np.allclose(ufm["feature_norm"], r["theory"]["feature_norm"], rtol=0.02)
    assert np.allclose(ufm["classifier_norm"], r["theory"]["classifier_norm"], rtol=0.02)
    net = r["network"]
    # the network (gradient descent with weight decay) follows the same pattern approximately:
    # over seeds 0-4 in the smoke profile its angles were 76-90°, and the correlation of
    # log class count with log classifier-row norm 0.72-0.94, with log feature norm -0.63 to -0.91
    assert net["train_acc"] == 1.0
    assert np.all(net["angles"][off] > 70)
    logn = np.log(np.asarray(r["counts"]))
    assert np.corrcoef(logn, np.log(net["classifier_norm"]))[0, 1] > 0.5
    assert np.corrcoef(logn, np.log(net["feature_norm"]))[0, 1] < -0.4


# ----------------------------------------------------------------------------- figures, panels, data


def test_figures_build_from_a_short_run():
    cfg = NC.CollapseConfig.for_profile("smoke", n_classes=3, steps=60, n_evals=6)
    h, rec = NC.run_collapse(cfg, 0, snapshots=True)
    assert set(NC.METRICS + NC.CONDITIONS) <= set(h.metrics)
    assert len(rec.snapshots) == len(h.steps)
    assert NC.nc_figure(h).data
    assert NC.simplex_figure(*NC.simplex_frames(h, rec)).layout.sliders
    assert NC.gram_figure(rec.snapshots[-1]).data
    assert NC.conditions_figure({"a": h}).data


@pytest.mark.parametrize("make", [NC.collapse_panel, NC.simplex_panel, NC.conditions_panel,
                                  NC.imbalance_panel])
def test_panels_build(make):
    panel = make("smoke")
    assert panel.controls


def test_collapse_panel_runs_and_survives_extreme_values():
    panel = NC.collapse_panel("smoke")
    panel.set(steps=100)
    panel.click()
    assert panel.figure is not None and not panel.status.value.startswith("failed")
    panel.set(lr=1.0, weight_decay=3.0, steps=100)
    panel.click()
    assert not panel.status.value.startswith("failed"), panel.status.value


@pytest.mark.parametrize("name", ["collapse_weight_decay", "collapse_gd_weight_decay",
                                  "collapse_simplex", "collapse_imbalance"])
def test_precomputed_results_load_and_draw(name):
    payload, prov = results.load(name)
    assert prov["command"].startswith("python -m dynamics.precompute neural_collapse")
    assert (results.data_dir() / f"{name}.json").stat().st_size < 1_000_000
    build = {"collapse_weight_decay": NC.weight_decay_slider, "collapse_gd_weight_decay": NC.gd_slider,
             "collapse_simplex": NC.simplex_from_payload, "collapse_imbalance": NC.imbalance_slider}[name]
    assert build(payload).layout.sliders


def test_torchvision_datasets_fall_back_to_mnist1d_offline(monkeypatch):
    from dynamics import data as D

    def offline(*args, **kwargs):
        raise RuntimeError("no internet")

    small = D.gaussian_mixture(n_train=200, n_test=50, dim=40, n_classes=10)
    monkeypatch.setattr(D, "torchvision_dataset", offline)
    monkeypatch.setattr(D, "mnist1d", lambda **kwargs: small)
    cfg = NC.CollapseConfig.for_profile("smoke", dataset="mnist", n_train=40, n_classes=4)
    ds = NC.load_data(cfg)
    assert ds.info["fallback"] == "MNIST-1D instead of mnist"
    assert ds.n_classes == 4 and len(ds.x_train) == 40
