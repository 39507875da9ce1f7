"""A dataset in memory: :class:`Dataset` (tensors, a train/test split) and :func:`subset`, the cut lessons take.

:func:`~course_utils.data.datasets.load_dataset` builds one from a named dataset; :func:`subset`
keeps a class-stratified random part of each split with a fixed seed, so a lesson can use a few
thousand images in the smoke profile and all of them on a GPU. Nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Dataset", "check_size", "subset"]


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


def check_size(arg: str, value: object) -> None:
    """Refuse a size that is not None or a positive integer (``arg`` names it in the message).

    Raises:
        ValueError: ``value`` is 0, negative, a float or a bool.
    """
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{arg} must be a positive integer or None, got {value!r}")


def _stratified(y: torch.Tensor, size: int | None, seed: int) -> torch.Tensor | None:
    """Indices of ``size`` examples, each class in its proportion, in a seeded random order."""
    n = len(y)
    if size is None or size >= n:
        return None
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    y_perm = y.cpu()[order]
    labels, counts = torch.unique(y_perm, return_counts=True)
    exact = counts.double() * size / n
    quota = exact.floor().long()
    extra = size - int(quota.sum())  # largest remainders get one more (ties: lower label first)
    quota[torch.argsort(exact - quota, descending=True, stable=True)[:extra]] += 1
    keep = torch.zeros(n, dtype=torch.bool)
    for label, q in zip(labels.tolist(), quota.tolist()):
        keep[(y_perm == label).nonzero().flatten()[:q]] = True
    return order[keep]


def subset(data: Dataset, train_size: int | None = None, test_size: int | None = None, *,
           seed: int = 0) -> Dataset:
    """A class-stratified random subset of each split, the same for the same ``seed``.

    Each class keeps its share of the split (rounded by largest remainder), the examples within a
    class are drawn at random, and the kept examples come in a random order.

    Args:
        data: the dataset.
        train_size: training examples to keep; all when None or at least the split's size.
        test_size: test examples to keep; all when None or at least the split's size.
        seed: seeds the draw; the test split uses ``seed + 1``.

    Returns:
        A new :class:`Dataset` (``data`` itself when nothing is cut).

    Raises:
        ValueError: a size is not a positive integer.
    """
    check_size("train_size", train_size)
    check_size("test_size", test_size)
    tr = _stratified(data.y_train, train_size, seed)
    te = _stratified(data.y_test, test_size, seed + 1)
    if tr is None and te is None:
        return data

    def pick(X: torch.Tensor, y: torch.Tensor, idx: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        if idx is None:
            return X, y
        idx = idx.to(X.device)
        return X[idx], y[idx]

    X_tr, y_tr = pick(data.X_train, data.y_train, tr)
    X_te, y_te = pick(data.X_test, data.y_test, te)
    return Dataset(data.name, X_tr, y_tr, X_te, y_te, data.classes)
