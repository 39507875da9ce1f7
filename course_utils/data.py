"""Datasets: an offline default that always works, real datasets when online, image files on disk.

- ``digits``: scikit-learn's bundled handwritten digits (1,797 real 8×8 images, no download).
- ``cifar10``: CIFAR-10 (60,000 32×32 colour images), read from its on-disk python format,
  downloaded through torchvision into a cache folder when missing.
- ``fashionmnist``: FashionMNIST (70,000 28×28 images) through torchvision.

When a download fails, :func:`load_dataset` falls back to ``digits`` with a printed warning that
names the dataset actually used. Tensors are float32 in [0, 1], shape ``(N, C, H, W)``.
"""

from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetFallbackWarning",
    "batches",
    "cache_dir",
    "image_folder",
    "load_dataset",
    "synthetic",
    "write_image_folder",
]

DATASETS: tuple[str, ...] = ("digits", "cifar10", "fashionmnist")
CIFAR10_FOLDER = "cifar-10-batches-py"
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")


class DatasetFallbackWarning(UserWarning):
    """A real dataset could not be loaded and the offline default is used instead."""


@dataclass
class Dataset:
    """A dataset held in memory as tensors, with a train/test split."""

    name: str
    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    classes: tuple[str, ...]

    @property
    def num_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)

    @property
    def input_shape(self) -> tuple[int, ...]:
        """Shape of one example, ``(C, H, W)``."""
        return tuple(self.X_train.shape[1:])

    def to(self, device: torch.device | str) -> Dataset:
        """Return the dataset with all tensors on ``device`` (small datasets live on the GPU)."""
        return Dataset(self.name, self.X_train.to(device), self.y_train.to(device),
                       self.X_test.to(device), self.y_test.to(device), self.classes)

    def __str__(self) -> str:
        return (f"{self.name}: {len(self.X_train)} train / {len(self.X_test)} test examples of shape "
                f"{self.input_shape}, {self.num_classes} classes")


def cache_dir() -> Path:
    """Folder where datasets are cached: ``$COURSE_DATA`` or ``~/.cache/course_data``."""
    return Path(os.environ.get("COURSE_DATA", Path.home() / ".cache" / "course_data"))


def _split(X: torch.Tensor, y: torch.Tensor, test_fraction: float, seed: int) -> tuple[torch.Tensor, ...]:
    perm = torch.randperm(len(X), generator=torch.Generator().manual_seed(seed))
    n_test = int(round(len(X) * test_fraction))
    test, train = perm[:n_test], perm[n_test:]
    return X[train], y[train], X[test], y[test]


def _digits(image_size: int | None) -> Dataset:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    X = torch.tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0  # pixel values 0..16
    y = torch.tensor(bunch.target, dtype=torch.long)
    if image_size and image_size != 8:
        X = torch.nn.functional.interpolate(X, size=(image_size, image_size), mode="bilinear",
                                            align_corners=False)
    X_tr, y_tr, X_te, y_te = _split(X, y, 0.2, seed=0)
    return Dataset("digits", X_tr, y_tr, X_te, y_te, tuple(str(i) for i in range(10)))


def _read_cifar10_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with open(path, "rb") as f:
        entry = pickle.load(f, encoding="latin1")
    data = np.asarray(entry["data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
    labels = np.asarray(entry.get("labels", entry.get("fine_labels")), dtype=np.int64)
    return data, labels


def read_cifar10(root: Path) -> Dataset:
    """Read CIFAR-10 from its python on-disk format (``root/cifar-10-batches-py/``)."""
    folder = Path(root) / CIFAR10_FOLDER
    train = [_read_cifar10_batch(folder / f"data_batch_{i}") for i in range(1, 6)]
    X_te, y_te = _read_cifar10_batch(folder / "test_batch")
    classes = CIFAR10_CLASSES
    meta = folder / "batches.meta"
    if meta.exists():
        with open(meta, "rb") as f:
            classes = tuple(pickle.load(f, encoding="latin1")["label_names"])
    X_tr = np.concatenate([x for x, _ in train])
    y_tr = np.concatenate([y for _, y in train])

    def to_float(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).float().div_(255.0)

    return Dataset("cifar10", to_float(X_tr), torch.from_numpy(y_tr), to_float(X_te),
                   torch.from_numpy(y_te), classes)


def _cifar10(root: Path) -> Dataset:
    if not (root / CIFAR10_FOLDER / "test_batch").exists():
        from torchvision.datasets import CIFAR10

        CIFAR10(root=str(root), train=True, download=True)  # downloads and extracts the archive
    return read_cifar10(root)


def _fashionmnist(root: Path) -> Dataset:
    from torchvision.datasets import FashionMNIST

    tr = FashionMNIST(root=str(root), train=True, download=True)
    te = FashionMNIST(root=str(root), train=False, download=True)
    return Dataset("fashionmnist", tr.data.unsqueeze(1).float() / 255.0, tr.targets.clone(),
                   te.data.unsqueeze(1).float() / 255.0, te.targets.clone(), tuple(tr.classes))


def load_dataset(name: str = "digits", *, root: str | Path | None = None,
                 image_size: int | None = None, verbose: bool = True) -> Dataset:
    """Load a dataset by name, falling back to the offline ``digits`` when a download fails.

    Args:
        name: one of :data:`DATASETS`.
        root: cache folder for downloads; :func:`cache_dir` when omitted.
        image_size: for ``digits``, resize the 8×8 images to this size (for conv nets).
        verbose: print which dataset was loaded.

    Returns:
        A :class:`Dataset`; its ``name`` says which dataset it really is.

    Raises:
        ValueError: ``name`` is not a known dataset (the message lists the valid names).
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    root = Path(root) if root is not None else cache_dir()
    if name == "digits":
        data = _digits(image_size)
    else:
        loader = _cifar10 if name == "cifar10" else _fashionmnist
        try:
            root.mkdir(parents=True, exist_ok=True)
            data = loader(root)
        except Exception as e:  # offline, blocked, corrupt: say so and use the offline default
            detail = " ".join(str(e).split())[:200]  # one line, even for multi-line errors
            msg = (f"could not load {name} ({type(e).__name__}: {detail}); "
                   f"using the offline default dataset 'digits' instead")
            print(f"WARNING: {msg}")
            warnings.warn(msg, DatasetFallbackWarning, stacklevel=2)
            data = _digits(image_size)
    if verbose:
        print(f"dataset     {data}")
    return data


def synthetic(n: int, shape: tuple[int, ...], num_classes: int = 10, *, seed: int = 0,
              device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Random inputs and labels for pure timing, where what is learned does not matter."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn((n, *shape), generator=g)
    y = torch.randint(0, num_classes, (n,), generator=g)
    return X.to(device), y.to(device)


def batches(X: torch.Tensor, y: torch.Tensor, batch_size: int, *, shuffle: bool = True,
            seed: int = 0, drop_last: bool = True) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield ``(X, y)`` mini-batches of in-memory tensors forever, one epoch after another.

    Data already on the device need no DataLoader (the CIFAR-10 speed-runs do the same).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    n = len(X)
    if drop_last and batch_size > n:
        raise ValueError(f"batch_size {batch_size} is larger than the dataset ({n} examples)")
    g = torch.Generator().manual_seed(seed)
    while True:
        idx = torch.randperm(n, generator=g) if shuffle else torch.arange(n)
        idx = idx.to(X.device)
        stop = n - n % batch_size if drop_last else n
        for i in range(0, stop, batch_size):
            j = idx[i:i + batch_size]
            yield X[j], y[j]


def write_image_folder(X: torch.Tensor, y: torch.Tensor, root: str | Path, *,
                       classes: tuple[str, ...] | None = None, limit: int | None = None) -> Path:
    """Write images to ``root/<class>/<index>.png`` (the layout of ``ImageFolder``).

    Args:
        X: images in [0, 1], shape ``(N, C, H, W)`` with C = 1 or 3.
        y: integer labels, shape ``(N,)``.
        root: folder to write into (created).
        classes: class names; ``"0"``, ``"1"`` … when omitted.
        limit: write only the first ``limit`` images.

    Returns:
        The root folder.
    """
    from PIL import Image

    root = Path(root)
    n = len(X) if limit is None else min(limit, len(X))
    names = classes or tuple(str(i) for i in range(int(y.max()) + 1))
    pixels = (X[:n].clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1).cpu().numpy()
    for c in names:
        (root / c).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        img = pixels[i]
        mode_img = Image.fromarray(img[:, :, 0], mode="L") if img.shape[2] == 1 else Image.fromarray(img)
        mode_img.save(root / names[int(y[i])] / f"{i:06d}.png")
    return root


def image_folder(root: str | Path, transform: object | None = None) -> torch.utils.data.Dataset:
    """Read a folder written by :func:`write_image_folder` through PIL and torchvision transforms.

    Args:
        root: the folder.
        transform: a torchvision transform; ``ToTensor()`` when omitted.

    Returns:
        A ``torchvision.datasets.ImageFolder`` (each item: image tensor, label).
    """
    from torchvision import datasets, transforms

    return datasets.ImageFolder(str(root), transform=transform or transforms.ToTensor(),
                                loader=_load_image)


def _load_image(path: str) -> object:
    """Open an image keeping its mode (torchvision's default loader turns grey into RGB)."""
    from PIL import Image

    with open(path, "rb") as f:
        img = Image.open(f)
        img.load()
        return img
