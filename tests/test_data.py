import pytest
import torch

from dynamics import data


def test_modular_addition_labels_and_split():
    d = data.modular_arithmetic(11, "add", 0.5, seed=1)
    x = torch.cat([d.x_train, d.x_test])
    y = torch.cat([d.y_train, d.y_test])
    assert len(x) == 121 and torch.equal(y, (x[:, 0] + x[:, 1]) % 11)
    # the split is a partition: every pair exactly once
    assert len({tuple(r) for r in x.tolist()}) == 121
    assert len(d.x_train) == 60


def test_modular_division_inverts_multiplication():
    d = data.modular_arithmetic(13, "div", 0.5)
    x, y = torch.cat([d.x_train, d.x_test]), torch.cat([d.y_train, d.y_test])
    assert torch.equal((y * x[:, 1]) % 13, x[:, 0])


def test_onehot_encoding():
    d = data.modular_arithmetic(7, "x2+y2", 0.3, onehot=True)
    assert d.x_train.shape[1] == 14 and d.x_train.sum(1).eq(2).all()


@pytest.mark.parametrize("p", [0, -5, 1, 2.5, "7", True])
def test_modulus_must_be_a_positive_integer(p):
    with pytest.raises(ValueError, match="positive integer"):
        data.modular_arithmetic(p)


def test_modular_bad_inputs():
    with pytest.raises(ValueError, match="unknown operation"):
        data.modular_arithmetic(7, "pow")
    with pytest.raises(ValueError, match="prime"):
        data.modular_arithmetic(12, "div")
    with pytest.raises(ValueError, match="train_frac"):
        data.modular_arithmetic(7, "add", 1.0)


def test_gaussian_mixture_counts():
    d = data.gaussian_mixture(n_classes=3, counts=[50, 20, 5], dim=4, seed=0)
    assert torch.bincount(d.y_train).tolist() == [50, 20, 5]
    with pytest.raises(ValueError):
        data.gaussian_mixture(n_classes=3, counts=[5, 0, 5])


def test_mnist1d_is_generated_offline_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMICS_CACHE", str(tmp_path))
    d = data.mnist1d(200, 100, seed=0)
    assert d.x_train.shape == (200, 40) and d.n_classes == 10
    assert set(d.y_train.tolist()) == set(range(10))
    assert list(tmp_path.glob("mnist1d_*.npz"))
    again = data.mnist1d(200, 100, seed=0)
    assert torch.equal(again.x_train, d.x_train)
    with pytest.raises(ValueError):
        data.mnist1d(0, 10)


def test_digits_is_real_and_standardized():
    d = data.digits()
    assert d.x_train.shape[1] == 64 and len(d.x_train) + len(d.x_test) == 1797
    assert abs(float(d.x_train.mean())) < 0.05


def test_empty_dataset_is_rejected():
    empty = torch.zeros(0, 3)
    with pytest.raises(ValueError, match="no training examples"):
        data.Dataset(empty, torch.zeros(0, dtype=torch.long), empty, torch.zeros(0), 2)
    with pytest.raises(ValueError, match="differ in length"):
        data.Dataset(torch.zeros(3, 2), torch.zeros(2), torch.zeros(1, 2), torch.zeros(1), 2)


def test_torchvision_missing_is_a_clear_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torchvision", None)  # import torchvision -> ImportError
    with pytest.raises(RuntimeError, match="needs torchvision"):
        data.torchvision_dataset("mnist")
    with pytest.raises(ValueError, match="unknown torchvision dataset"):
        data.torchvision_dataset("imagenet")


def test_dry_run_gets_shape_faithful_standins(monkeypatch):
    """In a dry run MNIST / CIFAR-10 are offline stand-ins of the same shapes and classes,
    clearly labelled; outside one, a missing download stays a clear error."""
    import sys

    monkeypatch.setitem(sys.modules, "torchvision", None)
    monkeypatch.setenv("DYNAMICS_DRY_RUN", "2")
    d = data.torchvision_dataset("cifar10", n_train=300, n_test=50)
    assert d.x_train.shape == (300, 3, 32, 32) and d.x_test.shape == (50, 3, 32, 32)
    assert d.x_train.dtype == torch.float32 and d.y_train.dtype == torch.long and d.n_classes == 10
    assert sorted(set(d.y_train.tolist())) == list(range(10))
    assert "stand-in" in d.name and d.info["standin"] and d.info["stands_for"] == "cifar10"
    assert abs(float(d.x_train.std()) - 1.0) < 0.1
    m = data.torchvision_dataset("mnist", n_test=20)
    assert m.x_train.shape == (60_000, 1, 28, 28) and m.x_test.shape == (20, 1, 28, 28)
    assert torch.equal(data.standin("mnist", 30, 10).x_train, data.standin("mnist", 30, 10).x_train)
    monkeypatch.delenv("DYNAMICS_DRY_RUN")
    with pytest.raises(RuntimeError, match="needs torchvision"):
        data.torchvision_dataset("cifar10", n_train=300)
