"""Datasets, all available offline, returned as tensors already on the device.

- :func:`modular_arithmetic`: all pairs (a, b) mod p with a label such as (a + b) mod p.
- :func:`gaussian_mixture`: well-separated (or not) Gaussian clusters; a controllable toy.
- :func:`mnist1d`: MNIST-1D (Greydanus 2020), generated locally by the ``mnist1d`` package and
  cached: a real dataset made for small-scale science of deep learning.
- :func:`digits`: scikit-learn's bundled 8x8 handwritten digits (1,797 images).
- :func:`torchvision_dataset`: MNIST / CIFAR-10 for the gpu profile; needs torchvision and
  internet on first use, and says so clearly when either is missing. In a dry run
  (``DYNAMICS_DRY_RUN``) it returns :func:`standin` instead: same shapes, no download.

Every loader returns a :class:`Dataset`: train and test tensors on one device, so the
training loop never copies data between host and device.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .runtime import dry_run, folder, get_device, get_seed

OPERATIONS = {
    "add": lambda a, b, p: (a + b) % p,
    "sub": lambda a, b, p: (a - b) % p,
    "mul": lambda a, b, p: (a * b) % p,
    "div": lambda a, b, p: (a * pow_mod(b, p - 2, p)) % p,  # b^(p-2) = b^-1 for prime p
    "x2+y2": lambda a, b, p: (a * a + b * b) % p,
    "x2+xy+y2": lambda a, b, p: (a * a + a * b + b * b) % p,
}


@dataclass
class Dataset:
    """Train and test tensors on one device, plus what a model needs to know about them."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int
    name: str = ""
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if len(self.x_train) == 0:
            raise ValueError(f"dataset {self.name!r} has no training examples")
        if len(self.x_train) != len(self.y_train) or len(self.x_test) != len(self.y_test):
            raise ValueError(
                f"dataset {self.name!r}: inputs and labels differ in length "
                f"({len(self.x_train)} vs {len(self.y_train)}, {len(self.x_test)} vs {len(self.y_test)})"
            )

    @property
    def input_shape(self) -> tuple:
        return tuple(self.x_train.shape[1:])

    @property
    def input_dim(self) -> int:
        return int(np.prod(self.input_shape))

    @property
    def device(self) -> torch.device:
        return self.x_train.device

    def to(self, device) -> "Dataset":
        t = lambda v: v.to(device)  # noqa: E731
        return Dataset(t(self.x_train), t(self.y_train), t(self.x_test), t(self.y_test),
                       self.n_classes, self.name, dict(self.info))

    def subset(self, n_train: int | None = None, n_test: int | None = None) -> "Dataset":
        """The first ``n_train`` / ``n_test`` examples (datasets are stored shuffled)."""
        for n, what in ((n_train, "n_train"), (n_test, "n_test")):
            if n is not None and n <= 0:
                raise ValueError(f"{what} must be a positive integer, got {n}")
        return Dataset(self.x_train[:n_train], self.y_train[:n_train], self.x_test[:n_test],
                       self.y_test[:n_test], self.n_classes, self.name, dict(self.info))

    def __repr__(self):
        return (f"Dataset({self.name!r}: {len(self.x_train)} train / {len(self.x_test)} test, "
                f"input {self.input_shape}, {self.n_classes} classes, on {self.device})")


def pow_mod(b, e, p):
    """Elementwise modular power for integer tensors (square-and-multiply)."""
    result = torch.ones_like(b)
    base = b % p
    while e > 0:
        if e & 1:
            result = (result * base) % p
        base = (base * base) % p
        e >>= 1
    return result


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % k for k in range(2, int(n**0.5) + 1))


def modular_arithmetic(p: int = 97, op: str = "add", train_frac: float = 0.3, seed: int | None = None,
                       onehot: bool = False, device=None) -> Dataset:
    """All p² pairs (a, b) labelled by ``op`` mod p, split at random into train and test.

    Inputs are integer pairs ``[N, 2]`` (for embedding models) or, with ``onehot=True``,
    the concatenated one-hot vectors ``[N, 2p]`` (for an MLP). ``div`` uses pairs with b ≠ 0
    and needs a prime p.
    """
    seed = get_seed(seed)
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 2:
        raise ValueError(f"modulus p must be a positive integer >= 2, got {p!r}")
    p = int(p)
    if op not in OPERATIONS:
        raise ValueError(f"unknown operation {op!r}; choose one of {list(OPERATIONS)}")
    if op == "div" and not _is_prime(p):
        raise ValueError(f"division mod p needs a prime modulus, got p={p}")
    if not 0.0 < train_frac < 1.0:
        raise ValueError(f"train_frac must lie in (0, 1), got {train_frac}")
    device = get_device(device)
    a, b = torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij")
    a, b = a.reshape(-1), b.reshape(-1)
    if op == "div":
        keep = b != 0
        a, b = a[keep], b[keep]
    y = OPERATIONS[op](a, b, p)
    x = torch.stack([a, b], dim=1)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(y), generator=g)
    n_train = max(1, int(round(train_frac * len(y))))
    if n_train >= len(y):
        raise ValueError(f"train_frac={train_frac} leaves no test pairs for p={p}")
    tr, te = perm[:n_train], perm[n_train:]
    if onehot:
        x = torch.cat([torch.nn.functional.one_hot(x[:, 0], p),
                       torch.nn.functional.one_hot(x[:, 1], p)], dim=1).float()
    return Dataset(x[tr].to(device), y[tr].to(device), x[te].to(device), y[te].to(device),
                   n_classes=p, name=f"{op} mod {p}",
                   info=dict(p=p, op=op, train_frac=train_frac, seed=seed, onehot=onehot))


def gaussian_mixture(n_train: int = 1000, n_test: int = 1000, dim: int = 20, n_classes: int = 4,
                     separation: float = 3.0, seed: int | None = None, counts: list[int] | None = None,
                     device=None) -> Dataset:
    """Isotropic Gaussian clusters with random means at distance ~``separation``.

    ``counts`` gives per-class training counts (for imbalanced data); test data is balanced.
    """
    seed = get_seed(seed)
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    if dim < 1 or n_test < 1:
        raise ValueError("dim and n_test must be positive")
    g = torch.Generator().manual_seed(seed)
    means = torch.randn(n_classes, dim, generator=g)
    means = separation * means / means.norm(dim=1, keepdim=True) / np.sqrt(2)

    def draw(per_class):
        ys = torch.cat([torch.full((c,), k) for k, c in enumerate(per_class)])
        xs = means[ys] + torch.randn(len(ys), dim, generator=g)
        perm = torch.randperm(len(ys), generator=g)
        return xs[perm], ys[perm]

    if counts is None:
        if n_train < n_classes:
            raise ValueError(f"n_train must be at least n_classes={n_classes}, got {n_train}")
        counts = [n_train // n_classes] * n_classes
    if len(counts) != n_classes or min(counts) < 1:
        raise ValueError(f"counts must give a positive count for each of {n_classes} classes")
    xtr, ytr = draw(counts)
    xte, yte = draw([max(1, n_test // n_classes)] * n_classes)
    device = get_device(device)
    return Dataset(xtr.to(device), ytr.to(device), xte.to(device), yte.to(device), n_classes,
                   name="gaussian mixture", info=dict(dim=dim, separation=separation, seed=seed,
                                                      counts=list(counts)))


def cache_dir() -> Path:
    """Where generated datasets are cached (``$DYNAMICS_CACHE`` or ~/.cache/dynamics)."""
    path = folder("DYNAMICS_CACHE") or Path.home() / ".cache" / "dynamics"
    path.mkdir(parents=True, exist_ok=True)
    return path


def mnist1d(n_train: int = 4000, n_test: int = 1000, seed: int | None = None, device=None) -> Dataset:
    """MNIST-1D: 10 classes of 40-sample 1-D signals, generated offline by ``mnist1d``.

    The first ``n_train`` examples of a generated pool are the training set and the next
    ``n_test`` the test set; the pool is cached, so generation happens once per size and seed.
    """
    seed = get_seed(seed)
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"n_train and n_test must be positive, got {n_train}, {n_test}")
    total = n_train + n_test
    path = cache_dir() / f"mnist1d_{total}_{seed}.npz"
    if path.exists():
        blob = np.load(path)
        x, y = blob["x"], blob["y"]
    else:
        from mnist1d.data import get_dataset_args, make_dataset

        args = get_dataset_args()
        args.num_samples = total + 10  # make_dataset draws num_samples // 10 per class
        args.train_split = 1.0 - 1e-9
        args.seed = seed
        state = np.random.get_state()
        made = make_dataset(args)
        np.random.set_state(state)  # mnist1d reseeds numpy's global generator
        x = np.concatenate([made["x"], made["x_test"]])[:total].astype(np.float32)
        y = np.concatenate([made["y"], made["y_test"]])[:total].astype(np.int64)
        tmp = path.with_suffix(f".{os.getpid()}.npz")
        np.savez(tmp, x=x, y=y)
        os.replace(tmp, path)
    device = get_device(device)
    x = torch.from_numpy(x).to(device)
    y = torch.from_numpy(y).to(device)
    return Dataset(x[:n_train], y[:n_train], x[n_train:total], y[n_train:total], 10,
                   name="MNIST-1D", info=dict(seed=seed, source="mnist1d.make_dataset"))


def digits(test_frac: float = 0.3, seed: int | None = None, device=None) -> Dataset:
    """scikit-learn's 8x8 handwritten digits (1,797 real images), pixels scaled to [0, 1]
    then standardized with the training statistics; flattened to 64 features."""
    seed = get_seed(seed)
    if not 0.0 < test_frac < 1.0:
        raise ValueError(f"test_frac must lie in (0, 1), got {test_frac}")
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    n_test = int(round(test_frac * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    mu, sd = x[tr].mean(0), x[tr].std(0) + 1e-3
    x = (x - mu) / sd
    device = get_device(device)
    return Dataset(x[tr].to(device), y[tr].to(device), x[te].to(device), y[te].to(device), 10,
                   name="digits", info=dict(seed=seed, source="sklearn.datasets.load_digits"))


def torchvision_dataset(name: str = "mnist", n_train: int | None = None,
                        n_test: int | None = None, root: str | None = None, device=None) -> Dataset:
    """MNIST or CIFAR-10 through torchvision, normalized, as device tensors (gpu profile).

    Raises a clear ``RuntimeError`` when torchvision is missing or the data cannot be
    downloaded (no internet); the chapters then fall back to MNIST-1D. In a dry run it
    returns the offline :func:`standin` of the same shapes.
    """
    name = name.lower()
    if name not in STANDIN_SHAPES:
        raise ValueError(f"unknown torchvision dataset {name!r}; choose 'mnist' or 'cifar10'")
    if dry_run() is not None:  # CI proves the gpu profile offline: same shapes, no download
        return standin(name, n_train, n_test, device=device)
    try:
        import torchvision
    except Exception as err:  # ImportError, or a torchvision built for another torch
        raise RuntimeError(
            f"{name} needs torchvision, which is not usable here ({err}). "
            "Install it (pip install torchvision) or use dynamics.data.mnist1d()."
        ) from None
    root = root or str(cache_dir() / "torchvision")
    cls = torchvision.datasets.MNIST if name == "mnist" else torchvision.datasets.CIFAR10
    try:
        train, test = cls(root, train=True, download=True), cls(root, train=False, download=True)
    except Exception as err:
        raise RuntimeError(
            f"could not load {name} into {root}: {err}. It is downloaded on first use, which "
            "needs internet; offline, use dynamics.data.mnist1d() or dynamics.data.digits()."
        ) from None

    def tensors(ds, n):
        x = torch.as_tensor(np.asarray(ds.data)).float() / 255.0
        x = x.unsqueeze(1) if x.ndim == 3 else x.permute(0, 3, 1, 2)
        y = torch.as_tensor(np.asarray(ds.targets)).long()
        return x[:n], y[:n]

    xtr, ytr = tensors(train, n_train)
    xte, yte = tensors(test, n_test)
    mu = xtr.mean(dim=(0, 2, 3), keepdim=True)
    sd = xtr.std(dim=(0, 2, 3), keepdim=True)
    device = get_device(device)
    return Dataset(((xtr - mu) / sd).to(device), ytr.to(device), ((xte - mu) / sd).to(device),
                   yte.to(device), 10, name=name, info=dict(source="torchvision"))


# name: (input shape, training images, test images), as torchvision serves them
STANDIN_SHAPES = {"mnist": ((1, 28, 28), 60_000, 10_000), "cifar10": ((3, 32, 32), 50_000, 10_000)}


def standin(name: str, n_train: int | None = None, n_test: int | None = None, seed: int | None = None,
            device=None) -> Dataset:
    """A shape-faithful offline stand-in for MNIST or CIFAR-10, for dry runs only.

    A dry run proves the gpu profile on a machine that cannot download (CI): the stand-in has
    the real set's shapes and sizes (``[N, C, H, W]`` float32, normalized; 10 balanced
    classes; 60,000 / 50,000 training and 10,000 test images, or the first ``n_train`` /
    ``n_test``), so memory, FLOPs and every shape downstream are those of the real run. Each
    class is a fixed random image plus noise, so a model can fit it. It is not the data: its
    name says "stand-in" and ``info["standin"]`` is True.
    """
    seed = get_seed(seed)
    if name not in STANDIN_SHAPES:
        raise ValueError(f"no stand-in for {name!r}; choose one of {list(STANDIN_SHAPES)}")
    shape, full_train, full_test = STANDIN_SHAPES[name]
    n_train = full_train if n_train is None else min(int(n_train), full_train)
    n_test = full_test if n_test is None else min(int(n_test), full_test)
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"n_train and n_test must be positive, got {n_train}, {n_test}")
    g = torch.Generator().manual_seed(seed)
    means = torch.randn(10, *shape, generator=g)

    def draw(n):
        y = torch.arange(n) % 10
        y = y[torch.randperm(n, generator=g)]
        x = torch.randn(n, *shape, generator=g).mul_(2.0).add_(means[y])
        return x.div_(5 ** 0.5), y  # unit variance per pixel, as normalized images

    device = get_device(device)
    (xtr, ytr), (xte, yte) = draw(n_train), draw(n_test)
    return Dataset(xtr.to(device), ytr.to(device), xte.to(device), yte.to(device), 10,
                   name=f"{name} stand-in", info=dict(source="dynamics.data.standin (dry run)",
                                                      standin=True, stands_for=name))
