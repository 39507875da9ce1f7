"""CIFAR-10 on disk: read from its python format, downloaded through torchvision when missing and allowed.

CIFAR-10 (60,000 32×32 colour images, 10 classes) lives in ``<root>/cifar-10-batches-py/``.
:func:`fetch_cifar10` puts it there (not with ``COURSE_OFFLINE=1``, nor when its host does not
answer within seconds; reads time out), :func:`read_cifar10` reads it into a
:class:`~course_utils.data.dataset.Dataset`. ``load_dataset("cifar10")``
(:func:`~course_utils.data.datasets.load_dataset`) does both, and falls back to digits when it cannot.
"""

from __future__ import annotations

import os
import pickle
import socket
from pathlib import Path

import numpy as np
import torch

from .dataset import Dataset
from .fashion_mnist import DOWNLOAD_TIMEOUT_S, MIRROR_TIMEOUT_S, cache_dir, unreachable

__all__ = ["CIFAR10_CLASSES", "CIFAR10_FOLDER", "cifar10_unavailable", "fetch_cifar10", "read_cifar10"]

CIFAR10_FOLDER = "cifar-10-batches-py"
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")


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


def cifar10_unavailable(root: str | Path | None = None) -> str | None:
    """None when CIFAR-10 is on disk in ``root`` or its download host answers, else why not (one line).

    Offline (``COURSE_OFFLINE=1``) the network is not touched; otherwise the host gets
    ``MIRROR_TIMEOUT_S`` seconds to accept a connection (the lookup included).
    """
    root = Path(root) if root is not None else cache_dir()
    if (root / CIFAR10_FOLDER / "test_batch").exists():
        return None
    if os.environ.get("COURSE_OFFLINE", "").strip() not in ("", "0"):
        return "COURSE_OFFLINE is set"
    from torchvision.datasets import CIFAR10

    return unreachable(CIFAR10.url, MIRROR_TIMEOUT_S)


def fetch_cifar10(root: str | Path | None = None) -> Path:
    """Put CIFAR-10's files in ``root`` (:func:`cache_dir` when None): kept, else torchvision's download.

    The download runs only when :func:`cifar10_unavailable` finds no reason against it, and every
    network read gives up after ``DOWNLOAD_TIMEOUT_S`` seconds (torchvision sets no timeout).

    Raises:
        ConnectionError: offline (``COURSE_OFFLINE=1``) or the host did not answer: nothing downloaded.
        OSError, RuntimeError: the download failed (torchvision's message says why).
    """
    root = Path(root) if root is not None else cache_dir()
    why = cifar10_unavailable(root)
    if why is not None:
        raise ConnectionError(f"no download: {why}")
    if not (root / CIFAR10_FOLDER / "test_batch").exists():
        from torchvision.datasets import CIFAR10

        previous = socket.getdefaulttimeout()
        socket.setdefaulttimeout(DOWNLOAD_TIMEOUT_S)
        try:
            CIFAR10(root=str(root), train=True, download=True)  # downloads and extracts the archive
        finally:
            socket.setdefaulttimeout(previous)
    return root
