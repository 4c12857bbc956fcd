"""The science of lottery tickets: masks against torch.nn.utils.prune, rewinding, one IMP
round, the pruning-at-init saliencies against closed forms, linear mode connectivity, bad
inputs and determinism. Fast: no training beyond a fake one."""

import pytest
import torch
import torch.nn.utils.prune as prune

from dynamics import data as D
from dynamics import lottery as L
from dynamics import models as M

from known import known_answer


def _mlp(seed=0, width=16, depth=2, in_dim=10):
    torch.manual_seed(seed)
    return M.MLP(in_dim, width, depth, 4)


# ----------------------------------------------------------------------------- masks


@known_answer(L.science.prune_masks, L.science.prune_smallest,
              how="torch.nn.utils.prune's global_unstructured and l1_unstructured, an independent implementation, give the masks over three rounds")
def test_global_masks_equal_torch_prune_over_rounds():
    """Three IMP rounds (weights change between rounds, as training does): our global masks
    equal torch.nn.utils.prune.global_unstructured's with L1Unstructured, and the head's
    equal l1_unstructured at half the rate."""
    ours_model, ref = _mlp(0), _mlp(0)
    layers = [ref.hidden[0], ref.hidden[1]]
    masks = L.science.full_masks(ours_model)
    for r in range(3):
        torch.manual_seed(100 + r)  # "training": new weights, same for both
        new = {n: torch.randn_like(p) for n, p in L.science.prunable(ours_model).items()}
        for module, name in [(ref.hidden[0], "hidden.0.weight"), (ref.hidden[1], "hidden.1.weight"),
                             (ref.head, "head.weight")]:
            target = module.weight_orig if hasattr(module, "weight_orig") else module.weight
            target.data.copy_(new[name])
        ref(torch.zeros(1, 10))  # the pruning hooks recompute weight = weight_orig * mask
        masks = L.science.prune_masks(new, masks, 0.2, "global", head_fraction=0.1)
        prune.global_unstructured([(m, "weight") for m in layers],
                                  pruning_method=prune.L1Unstructured, amount=0.2)
        prune.l1_unstructured(ref.head, "weight", amount=0.1)
        assert torch.equal(masks["hidden.0.weight"], ref.hidden[0].weight_mask)
        assert torch.equal(masks["hidden.1.weight"], ref.hidden[1].weight_mask)
        assert torch.equal(masks["head.weight"], ref.head.weight_mask)
    kept = L.science.density(masks)
    assert 0.45 < kept < 0.6  # 0.8^3 of the hidden weights, 0.9^3 of the head's


@known_answer(L.science.prune_masks,
              how="torch.nn.utils.prune's l1_unstructured per layer gives the masks and their densities 1 - amount")
def test_layerwise_masks_equal_torch_prune():
    model = _mlp(1)
    scores = {n: p.detach() for n, p in L.science.prunable(model).items()}
    masks = L.science.prune_masks(scores, L.science.full_masks(model), 0.5, "layer", head_fraction=0.25)
    for module, name, amount in [(model.hidden[0], "hidden.0.weight", 0.5),
                                 (model.hidden[1], "hidden.1.weight", 0.5),
                                 (model.head, "head.weight", 0.25)]:
        prune.l1_unstructured(module, "weight", amount=amount)
        assert torch.equal(masks[name], module.weight_mask)
        assert float(masks[name].mean()) == pytest.approx(1 - amount, abs=0.01)


@known_answer(L.science.torch_prune_masks,
              how="prune_masks, checked against torch's raw prune API above, gives the same masks from any starting mask")
@pytest.mark.parametrize("scope", ["global", "layer"])
def test_torch_reference_agrees_with_prune_masks_from_any_mask(scope):
    """torch_prune_masks (the reference the chapter prints agreement with) starts from an
    existing mask and gives prune_masks' result, round after round."""
    model = _mlp(7, width=24)
    masks = L.science.full_masks(model)
    for r in range(4):
        torch.manual_seed(r)
        scores = {n: torch.randn_like(p) for n, p in L.science.prunable(model).items()}
        ours = L.science.prune_masks(scores, masks, 0.3, scope, head_fraction=0.15)
        ref = L.science.torch_prune_masks(scores, masks, 0.3, scope, head_fraction=0.15)
        assert all(torch.equal(ours[n], ref[n]) for n in ours)
        masks = ours


@pytest.mark.parametrize("fraction", [-0.1, 1.0, 1.5, float("nan"), True])
def test_fraction_outside_unit_interval_is_rejected(fraction):
    model = _mlp()
    scores = {n: p.detach() for n, p in L.science.prunable(model).items()}
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        L.science.prune_masks(scores, L.science.full_masks(model), fraction)


@pytest.mark.parametrize("sparsity", [-0.5, 1.0, 2.0])
def test_sparsity_outside_unit_interval_is_rejected(sparsity):
    with pytest.raises(ValueError, match="sparsity"):
        L.science.like_masks(_mlp(), 1.0 - sparsity)
    with pytest.raises(ValueError, match="prune_fraction"):
        L.LotteryConfig(prune_fraction=sparsity if sparsity >= 1 else -0.5)


def test_bad_scope_and_mismatched_scores_are_rejected():
    model = _mlp()
    scores = {n: p.detach() for n, p in L.science.prunable(model).items()}
    with pytest.raises(ValueError, match="scope"):
        L.science.prune_masks(scores, L.science.full_masks(model), 0.2, scope="neuron")
    with pytest.raises(ValueError, match="different tensors"):
        L.science.prune_masks({"head.weight": scores["head.weight"]}, L.science.full_masks(model), 0.2)
    with pytest.raises(ValueError, match="unknown pruning-at-init"):
        L.science.pai_masks("grasp", model, None, L.science.full_masks(model))


@known_answer(L.science.shuffle_masks,
              how="a permutation within a layer keeps each layer's count exactly and moves the kept positions")
def test_shuffle_keeps_layer_counts_and_moves_weights():
    model = _mlp(2)
    scores = {n: p.detach() for n, p in L.science.prunable(model).items()}
    masks = L.science.prune_masks(scores, L.science.full_masks(model), 0.7)
    a = L.science.shuffle_masks(masks, torch.Generator().manual_seed(0))
    b = L.science.shuffle_masks(masks, torch.Generator().manual_seed(0))
    for n in masks:
        assert a[n].sum() == masks[n].sum() and torch.equal(a[n], b[n])
    assert not torch.equal(a["hidden.1.weight"], masks["hidden.1.weight"])


@known_answer(L.science.masks_at_density, L.science.like_masks,
              how="the constructed target keeps density d of each hidden layer and d**0.5 of the head; one-shot masks keep exactly its counts per group")
def test_one_shot_masks_keep_the_same_counts_per_group():
    model = _mlp(3)
    like = L.science.like_masks(model, 0.1)
    assert float(like["head.weight"].mean()) == pytest.approx(0.1 ** 0.5, abs=0.02)
    scores = {n: torch.rand_like(p) for n, p in L.science.prunable(model).items()}
    out = L.science.masks_at_density(scores, like)
    hidden = ["hidden.0.weight", "hidden.1.weight"]
    assert sum(out[n].sum() for n in hidden) == sum(like[n].sum() for n in hidden)
    assert out["head.weight"].sum() == like["head.weight"].sum()
    layer = L.science.masks_at_density(scores, like, scope="layer")
    for n in like:
        assert layer[n].sum() == like[n].sum()


# ----------------------------------------------------------------------------- rewinding, one IMP round


@known_answer(L.science.rewind,
              how="survivors equal theta_k bit for bit and pruned weights are +0, by construction of the mask")
def test_rewind_restores_theta_k_bitwise_and_zeros_pruned_weights():
    theta_k = {n: t.detach().clone() for n, t in _mlp(8).state_dict().items()}
    scores = {n: torch.randn_like(t) for n, t in L.science.prunable(theta_k).items()}
    masks = L.science.prune_masks(scores, L.science.full_masks(theta_k), 0.6)
    start = L.science.rewind(theta_k, masks)
    for n, t in theta_k.items():
        if n in masks:
            keep = masks[n] > 0
            assert torch.equal(start[n][keep], t[keep])  # bitwise: the same floats
            assert torch.all(start[n][~keep] == 0)
            assert not torch.signbit(start[n][~keep]).any()  # +0, not -0
        else:
            assert torch.equal(start[n], t)  # biases are never pruned
        assert start[n].data_ptr() != t.data_ptr()  # a copy: training it leaves θ_k intact


@known_answer(L.science.imp_round,
              how="a fake training with known outputs: the starts are rewind(theta_k, m) and the new masks prune_masks of the known trained weights")
def test_imp_round_rewinds_trains_then_prunes_by_trained_magnitude():
    model = _mlp(9)
    theta_k = [{n: t.detach().clone() for n, t in model.state_dict().items()}]
    cfg = L.LotteryConfig(prune_fraction=0.25, head_rate=0.5)
    masks = [L.science.prune_masks({n: torch.rand_like(p) for n, p in L.science.prunable(model).items()},
                           L.science.full_masks(model), 0.5)]
    seen = {}

    def fake_train(starts, ms):
        seen["starts"], seen["masks"] = starts, ms
        torch.manual_seed(0)
        return [{n: (torch.randn_like(t) * ms[0][n] if n in ms[0] else t) for n, t in s.items()}
                for s in starts]

    trained, new = L.science.imp_round(fake_train, theta_k, masks, cfg)
    assert all(torch.equal(seen["starts"][0][n], L.science.rewind(theta_k[0], masks[0])[n]) for n in theta_k[0])
    expect = L.science.prune_masks({n: trained[0][n] for n in masks[0]}, masks[0], 0.25, "global", 0.125)
    assert all(torch.equal(new[0][n], expect[n]) for n in expect)
    assert L.science.density(new[0]) < L.science.density(masks[0])
    assert all(torch.all(new[0][n] <= masks[0][n]) for n in new[0])  # only survivors are pruned


# ----------------------------------------------------------------------------- pruning at init


@known_answer(L.science.snip_scores,
              how="|w * dL/dw| from an independent backward pass through the same loss")
def test_snip_scores_are_weight_times_gradient():
    d = D.gaussian_mixture(64, 32, dim=10, n_classes=4, seed=0, device="cpu")
    model = _mlp(4)
    scores = L.science.snip_scores(model, d, n=None)
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(d.x_train), d.y_train).backward()
    w = model.hidden[1].weight
    assert torch.allclose(scores["hidden.1.weight"], (w * w.grad).abs())


@known_answer(L.science.synflow_scores,
              how="one hidden layer with zero biases: R = 1'|W2||W1|1, whose gradient gives each weight's score in closed form")
def test_synflow_scores_match_the_closed_form():
    """One hidden layer, zero biases: with |W| and an all-ones input the ReLU is the identity
    and R = 1ᵀ|W2||W1|1, so score(W1_ij) = |W1_ij| Σ_k |W2_ki| and score(W2_ki) = |W2_ki| Σ_j |W1_ij|."""
    model = _mlp(5, width=8, depth=1)
    with torch.no_grad():
        model.hidden[0].bias.zero_()
        model.head.bias.zero_()
    w1, w2 = model.hidden[0].weight.detach().abs(), model.head.weight.detach().abs()
    s = L.science.synflow_scores(model, L.science.full_masks(model))
    assert torch.allclose(s["hidden.0.weight"], w1 * w2.sum(0)[:, None], rtol=1e-5)
    assert torch.allclose(s["head.weight"], w2 * w1.sum(1)[None, :], rtol=1e-5)


@known_answer(L.science.synflow_masks,
              how="the target counts per group are met exactly and no layer is emptied at 1% density")
def test_synflow_reaches_the_target_without_layer_collapse():
    model = _mlp(6, width=64)
    like = L.science.like_masks(model, 0.01)
    masks = L.science.synflow_masks(model, like, iterations=20)
    hidden = ["hidden.0.weight", "hidden.1.weight"]
    assert sum(masks[n].sum() for n in hidden) == sum(like[n].sum() for n in hidden)
    assert all(masks[n].sum() > 0 for n in masks)  # no layer cut off


def test_masks_are_deterministic_for_a_seed():
    d = D.gaussian_mixture(64, 32, dim=10, n_classes=4, seed=0, device="cpu")
    cfg = L.LotteryConfig(width=16)
    a, b = L.science.make_model(cfg, d, seed=3), L.science.make_model(cfg, d, seed=3)
    like = L.science.like_masks(a, 0.2)
    for method in L.science.PAI_METHODS:
        ma, mb = L.science.pai_masks(method, a, d, like), L.science.pai_masks(method, b, d, like)
        assert all(torch.equal(ma[n], mb[n]) for n in ma), method


# ----------------------------------------------------------------------------- linear mode connectivity


@known_answer(L.science.interpolate, L.science.path_errors, L.science.barrier,
              how="the midpoint of two networks is their mean; a path from a network to itself is flat with barrier 0; barrier([.1, .3, .2]) = .15 and a valley has none")
def test_interpolation_and_barrier():
    d = D.gaussian_mixture(64, 64, dim=10, n_classes=4, seed=0, device="cpu")
    cfg = L.LotteryConfig(width=16)
    a = {n: t.clone() for n, t in L.science.make_model(cfg, d, seed=0).state_dict().items()}
    b = {n: t.clone() for n, t in L.science.make_model(cfg, d, seed=1).state_dict().items()}
    mid = L.science.interpolate(a, b, 0.5)
    assert torch.allclose(mid["head.bias"], (a["head.bias"] + b["head.bias"]) / 2)
    assert all(torch.equal(L.science.interpolate(a, b, 0.0)[n], a[n]) for n in a)
    model = L.science.make_model(cfg, d)
    errs = L.science.path_errors(model, a, a, d.x_test, d.y_test, n_points=5)
    assert len(errs) == 5 and float(errs.max() - errs.min()) == 0.0 and L.science.barrier(errs) == 0.0
    assert L.science.barrier([0.1, 0.3, 0.2]) == pytest.approx(0.15)
    assert L.science.barrier([0.2, 0.1, 0.2]) == pytest.approx(0.0)  # a valley is no barrier
    with pytest.raises(ValueError):
        L.science.path_errors(model, a, b, d.x_test, d.y_test, n_points=1)


# ----------------------------------------------------------------------------- schedule


@known_answer(L.science.expected_density, L.science.round_for,
              how="(1 - p)^r of the weights after r rounds: 1 at r = 0, about 0.8 after one round at p = 0.2")
def test_profile_presets_construct_and_reach_the_claim_sparsity():
    for profile in ("smoke", "cpu", "gpu"):
        cfg = L.LotteryConfig.for_profile(profile)
        assert 0.05 <= L.science.expected_density(cfg, L.science.round_for(cfg, 0.05, 0.10)) <= 0.10
    assert L.LotteryConfig.for_profile("gpu").dataset == "mnist"
    cfg = L.LotteryConfig.for_profile("smoke")
    assert L.science.expected_density(cfg, 0) == 1.0
    assert L.science.expected_density(cfg, 1) == pytest.approx(0.8, abs=0.01)
    with pytest.raises(ValueError, match="add rounds"):
        L.science.round_for(cfg.replace(rounds=2), 0.05, 0.10)


# ----------------------------------------------------------------------------- known answers


@known_answer(L.science.density, L.science.layer_densities, L.science.full_masks,
              L.science.prunable,
              how="a constructed mask with known counts: 3 of 12 and 2 of 4 weights kept give "
                  "densities 5/16, 1/4 and 1/2; only weight matrices are prunable")
def test_densities_of_a_constructed_mask():
    masks = {"a": torch.tensor([[1.0, 1, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]]),
             "b": torch.tensor([[1.0, 0], [1, 0]])}
    assert L.science.density(masks) == 5 / 16
    assert L.science.layer_densities(masks) == {"a": 0.25, "b": 0.5}
    model = _mlp(0, width=3, depth=1, in_dim=2)
    assert set(L.science.prunable(model)) == {"hidden.0.weight", "head.weight"}
    assert L.science.density(L.science.full_masks(model)) == 1.0


@known_answer(L.science.pai_masks,
              how="magnitude at init keeps exactly the largest |theta_0| of the hidden layers "
                  "(a sort of the weights gives the threshold), SNIP's masks are those of "
                  "its scores at the target counts")
def test_pai_masks_keep_the_largest_scores():
    d = D.gaussian_mixture(64, 32, dim=10, n_classes=4, seed=0, device="cpu")
    model = _mlp(3)
    like = L.science.like_masks(model, 0.2)
    mask = L.science.pai_masks("magnitude", model, d, like)
    hidden = ["hidden.0.weight", "hidden.1.weight"]
    w = torch.cat([model.get_parameter(n).detach().abs().flatten() for n in hidden])
    m = torch.cat([mask[n].flatten() for n in hidden])
    k = int(sum(like[n].sum() for n in hidden))
    assert int(m.sum()) == k and w[m > 0].min() >= w[m == 0].max()
    snip = L.science.pai_masks("snip", model, d, like)
    expect = L.science.masks_at_density(L.science.snip_scores(model, d), like)
    assert all(torch.equal(snip[n], expect[n]) for n in snip)


@known_answer(L.science.round_near,
              how="with p = 0.2 the expected density is about 0.8^r, so the round nearest 20% "
                  "(log scale) is 7 (0.8^7 = 0.21) and the round nearest 50% is 3")
def test_round_near_is_the_closed_form_round():
    cfg = L.LotteryConfig(width=300, rounds=14, prune_fraction=0.2, head_rate=1.0)  # all at 0.8^r
    assert L.science.round_near(cfg, 0.2) == 7
    assert L.science.round_near(cfg, 0.5) == 3


class _History:
    def __init__(self, steps, **metrics):
        self.steps, self.metrics = list(steps), metrics

    def __getitem__(self, key):
        import numpy as np
        return np.asarray(self.metrics[key])


@known_answer(L.science.best_step,
              how="a synthetic history whose validation loss is lowest at step 20 and test loss "
                  "at step 30: the early-stopping step is 20; the first of tied minima counts; "
                  "accuracies take their maximum")
def test_best_step_reads_the_validation_loss_not_the_test_loss():
    h = _History([0, 10, 20, 30, 40], val_loss=[2.0, 1.0, 0.5, 0.6, 0.5],
                 test_loss=[2.0, 1.1, 0.7, 0.4, 0.9], test_acc=[0.1, 0.5, 0.6, 0.7, 0.7])
    assert L.science.best_step(h) == 20
    assert L.science.best_step(h, "test_loss") == 30
    assert L.science.best_step(h, "test_acc") == 30


@known_answer(L.science.split_validation,
              how="Frankle & Carbin's split by construction: the last n_val of the training "
                  "examples become the validation set, the rest stay for training, none is "
                  "lost or shared, and the test set is untouched")
def test_split_validation_holds_out_the_last_training_examples():
    d = D.gaussian_mixture(50, 20, dim=4, n_classes=3, seed=0, device="cpu")
    n = len(d.x_train)
    train, x, y = L.science.split_validation(d, 10)
    assert len(train.x_train) == n - 10 and len(x) == len(y) == 10
    assert torch.equal(torch.cat([train.x_train, x]), d.x_train)
    assert torch.equal(torch.cat([train.y_train, y]), d.y_train)
    assert torch.equal(train.x_test, d.x_test) and train.info["n_val"] == 10
    for bad in (0, n, 2.5, True):
        with pytest.raises(ValueError, match="n_val"):
            L.science.split_validation(d, bad)
