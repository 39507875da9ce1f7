"""Datasets in memory: Fashion-MNIST offline first, a fallback that always works, subsets per profile.

- ``fashionmnist``: Fashion-MNIST (70,000 real 28×28 images, 10 classes), the course's main
  dataset, read by torchvision's own ``FashionMNIST`` class from the original idx files. They
  come from the cache, else Debian's package ``dataset-fashion-mnist``, else torchvision's
  download (see :mod:`course_utils.data.fashion_mnist`; ``make data`` prepares them once).
- ``digits``: scikit-learn's bundled handwritten digits (1,797 real 8×8 images, no download).
- ``cifar10``: CIFAR-10 (60,000 32×32 colour images), read from its on-disk python format,
  downloaded through torchvision into a cache folder when missing (:func:`fetch_cifar10`: not with
  ``COURSE_OFFLINE=1``, nor when its host does not answer within seconds; reads time out).

When a real dataset cannot be had, :func:`load_dataset` falls back to ``digits`` with a printed
warning that names the dataset actually used, never silently; ``COURSE_DATASET=digits`` forces
that path (printed the same way), the one a learner offline or without the files meets. Tensors
are float32 in [0, 1], shape ``(N, C, H, W)``. ``train_size``/``test_size`` take a
class-stratified subset with a fixed seed (:func:`subset`), so a lesson can use a few thousand
images in the smoke profile and all of them on a GPU. Image files on disk:
:mod:`course_utils.data.image_files` (re-exported here).
"""

from __future__ import annotations

import os
import pickle
import socket
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .fashion_mnist import DOWNLOAD_TIMEOUT_S, MIRROR_TIMEOUT_S, cache_dir, prepare_fashionmnist, raw_folder, unreachable
from .image_files import image_folder, write_image_folder

__all__ = [
    "DATASETS",
    "Dataset",
    "DatasetFallbackWarning",
    "batches",
    "cache_dir",
    "cifar10_unavailable",
    "fetch_cifar10",
    "image_folder",
    "load_dataset",
    "prepare_fashionmnist",
    "subset",
    "synthetic",
    "worker_counts",
    "write_image_folder",
]

DATASETS: tuple[str, ...] = ("digits", "cifar10", "fashionmnist")
CIFAR10_FOLDER = "cifar-10-batches-py"
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")
FASHIONMNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")


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


def _split(X: torch.Tensor, y: torch.Tensor, test_fraction: float, seed: int) -> tuple[torch.Tensor, ...]:
    perm = torch.randperm(len(X), generator=torch.Generator().manual_seed(seed))
    n_test = int(round(len(X) * test_fraction))
    test, train = perm[:n_test], perm[n_test:]
    return X[train], y[train], X[test], y[test]


DIGITS_SHAPE = (1797, 1, 8, 8)


def _digits_tensors(root: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's digits as (images in [0, 1], labels), kept in ``root/digits.pt`` once read.

    Importing scikit-learn costs about 1.5 s in every fresh kernel, reading the kept tensors
    milliseconds; a missing, damaged or unwritable file only means scikit-learn is asked again.
    """
    cached = root / "digits.pt"
    try:
        blob = torch.load(cached, weights_only=True)
        if tuple(blob["X"].shape) == DIGITS_SHAPE and tuple(blob["y"].shape) == DIGITS_SHAPE[:1]:
            return blob["X"], blob["y"]
    except Exception:  # absent, or written by another version: read scikit-learn's copy again
        pass
    from sklearn.datasets import load_digits

    bunch = load_digits()
    X = torch.tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0  # pixel values 0..16
    y = torch.tensor(bunch.target, dtype=torch.long)
    tmp = cached.with_suffix(f".tmp{os.getpid()}")
    try:
        root.mkdir(parents=True, exist_ok=True)
        torch.save({"X": X, "y": y}, tmp)
        tmp.replace(cached)  # atomic: a half-written file is never read
    except OSError:  # a read-only data folder: scikit-learn again next time
        tmp.unlink(missing_ok=True)
    return X, y


def _digits(root: Path, verbose: bool = False) -> Dataset:
    X, y = _digits_tensors(root)
    X_tr, y_tr, X_te, y_te = _split(X, y, 0.2, seed=0)
    return Dataset("digits", X_tr, y_tr, X_te, y_te, tuple(str(i) for i in range(10)))


def _resize(data: Dataset, image_size: int | None) -> Dataset:
    """Bilinear resize to ``image_size``×``image_size`` (unchanged when None or already that size)."""
    if not image_size or data.input_shape[-2:] == (image_size, image_size):
        return data

    def resize(X: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.interpolate(X, size=(image_size, image_size), mode="bilinear",
                                               align_corners=False).clamp_(0.0, 1.0)

    return Dataset(data.name, resize(data.X_train), data.y_train, resize(data.X_test), data.y_test, data.classes)


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


def _cifar10(root: Path, verbose: bool = False) -> Dataset:
    return read_cifar10(fetch_cifar10(root))


def _fashionmnist(root: Path, verbose: bool = False) -> Dataset:
    """Fashion-MNIST as uint8 tensors, read by torchvision's own ``FashionMNIST`` class.

    The tensors torchvision read are kept beside the raw files (``FashionMNIST/course.pt``,
    55 MB) and reused while the raw files are unchanged: importing torchvision costs seconds in
    every fresh kernel, reading the tensors a fraction of one.
    """
    prepare_fashionmnist(root, verbose=verbose)  # cache, else Debian's files, else the download
    raw = raw_folder(root)
    stamp = sorted((p.name, p.stat().st_size, int(p.stat().st_mtime)) for p in raw.iterdir() if p.is_file())
    cached = raw.parent / "course.pt"
    if cached.exists():
        try:
            blob = torch.load(cached, weights_only=True)
            if [tuple(x) for x in blob["stamp"]] == stamp:
                return Dataset("fashionmnist", blob["X_train"], blob["y_train"], blob["X_test"],
                               blob["y_test"], tuple(blob["classes"]))
        except Exception:  # unreadable or from another version: read the raw files again
            pass
    from torchvision.datasets import FashionMNIST

    tr = FashionMNIST(root=str(root), train=True)
    te = FashionMNIST(root=str(root), train=False)
    # uint8 pixels: load_dataset takes its subset first, then converts to float in [0, 1]
    data = Dataset("fashionmnist", tr.data.unsqueeze(1), tr.targets.clone(),
                   te.data.unsqueeze(1), te.targets.clone(), tuple(tr.classes))
    tmp = cached.with_suffix(f".tmp{os.getpid()}")
    try:
        torch.save({"stamp": stamp, "X_train": data.X_train, "y_train": data.y_train, "X_test": data.X_test,
                    "y_test": data.y_test, "classes": list(data.classes)}, tmp)
        tmp.replace(cached)  # atomic: a half-written cache is never read
    except OSError:  # a read-only data folder: no cache, torchvision next time too
        tmp.unlink(missing_ok=True)
    return data


#: Image size of the fallback when a dataset is missing, so a model built for it still fits.
_FALLBACK_SIZE = {"fashionmnist": 28}
#: Environment variable that forces the offline default: ``COURSE_DATASET=digits``.
FORCE_ENV = "COURSE_DATASET"


def forced_dataset() -> str | None:
    """``"digits"`` when ``$COURSE_DATASET`` forces the offline default, None when it is unset or empty.

    Raises:
        ValueError: ``COURSE_DATASET`` holds anything else (a typo must not pass unnoticed).
    """
    value = os.environ.get(FORCE_ENV, "").strip().lower()
    if value in ("", "digits"):
        return value or None
    raise ValueError(f"{FORCE_ENV}={os.environ[FORCE_ENV]!r} is not supported: set it to 'digits' "
                     "(force the offline default dataset) or leave it unset")


def _fall_back(why: str) -> None:
    """Print and warn why a dataset is replaced by the offline default, naming it (never silent)."""
    msg = f"{why}; using the offline default dataset 'digits' instead"
    print(f"WARNING: {msg}")
    warnings.warn(msg, DatasetFallbackWarning, stacklevel=3)


def load_dataset(name: str = "digits", *, root: str | Path | None = None,
                 image_size: int | None = None, verbose: bool = True, train_size: int | None = None,
                 test_size: int | None = None, seed: int = 0) -> Dataset:
    """Load a dataset by name, falling back to the offline ``digits`` (printed) when it cannot be had.

    ``load_dataset("fashionmnist", train_size=2000, test_size=1000)`` gives 2,000 training and
    1,000 test images of Fashion-MNIST, each class in its proportion, the same ones on every call
    with the same ``seed``; without sizes, all 60,000 / 10,000. The first call on a machine copies
    the files into the cache (see :func:`prepare_fashionmnist`); later calls read the cache.

    Args:
        name: one of :data:`DATASETS`.
        root: data folder; :func:`cache_dir` when omitted.
        image_size: resize the images to ``image_size``×``image_size`` (bilinear), e.g. digits to
            16 or 28 for conv nets. When ``fashionmnist`` falls back to digits, they are resized to
            28×28 unless ``image_size`` says otherwise, so the input shape stays the same.
        verbose: print which dataset was loaded, its sizes, and where files were copied from.
        train_size: keep this many training examples (:func:`subset`); all when None or larger.
        test_size: keep this many test examples; all when None or larger.
        seed: which subset (the same seed gives the same examples).

    Returns:
        A :class:`Dataset`; its ``name`` says which dataset it really is.

    Raises:
        ValueError: ``name`` is not a known dataset (the message lists the valid names), a
            size is not a positive integer, or ``COURSE_DATASET`` holds a value other than
            ``digits`` (which forces the offline default, with the same printed warning).
    """
    forced_dataset()  # a bad COURSE_DATASET fails every call, not only those it would change
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    for arg, value in (("train_size", train_size), ("test_size", test_size), ("image_size", image_size)):
        _check_size(arg, value)
    root = Path(root) if root is not None else cache_dir()
    if name == "digits":
        data = _digits(root)
    elif forced_dataset():  # COURSE_DATASET=digits: the offline path, without trying the files
        _fall_back(f"not loading {name}: {FORCE_ENV}=digits is set")
        data = _digits(root)
        image_size = image_size or _FALLBACK_SIZE.get(name)
    else:
        loader = _cifar10 if name == "cifar10" else _fashionmnist
        try:
            root.mkdir(parents=True, exist_ok=True)
            data = loader(root, verbose)
        except Exception as e:  # offline, blocked, corrupt: say so and use the offline default
            detail = " ".join(str(e).split())[:500]  # one line, even for multi-line errors
            _fall_back(f"could not load {name} ({type(e).__name__}: {detail})")
            data = _digits(root)
            image_size = image_size or _FALLBACK_SIZE.get(name)
    data = _resize(_as_float(subset(data, train_size, test_size, seed=seed)), image_size)
    if verbose:
        print(f"dataset     {data}")
    return data


def _as_float(data: Dataset) -> Dataset:
    """uint8 pixels (0-255) as float32 in [0, 1]; float datasets unchanged."""
    if data.X_train.dtype != torch.uint8:
        return data
    return Dataset(data.name, data.X_train.float().div_(255.0), data.y_train,
                   data.X_test.float().div_(255.0), data.y_test, data.classes)


def _check_size(arg: str, value: object) -> None:
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
    _check_size("train_size", train_size)
    _check_size("test_size", test_size)
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


def synthetic(n: int, shape: tuple[int, ...], num_classes: int = 10, *, seed: int = 0,
              device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Random inputs and labels for pure timing, where what is learned does not matter."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn((n, *shape), generator=g)
    y = torch.randint(0, num_classes, (n,), generator=g)
    return X.to(device), y.to(device)


def worker_counts(cpus: int, batches_per_epoch: int, *, also: Iterable[int] = ()) -> list[int]:
    """The ``num_workers`` values worth sweeping: 0, 1, 2, 4 … up to ``min(cpus + 1, batches_per_epoch)``.

    A worker makes whole batches, so an epoch of B batches keeps at most B workers busy, and
    workers beyond the CPUs the process may use only take turns (one past them shows that). The
    counts are 0, the powers of two below the cap, ``cpus`` and the cap itself, each at most the
    cap. ``also`` adds counts to check (a rule of thumb such as 4 per GPU the process drives);
    those above the cap are left out, since they could only sit idle or take turns.

    ``worker_counts(2, 24)`` is ``[0, 1, 2, 3]``; ``worker_counts(16, 16)`` is
    ``[0, 1, 2, 4, 8, 16]``; ``worker_counts(8, 1)`` is ``[0, 1]``.

    Args:
        cpus: CPUs this process may use (``os.sched_getaffinity``, not ``os.cpu_count()``).
        batches_per_epoch: ``len(loader)`` for one epoch.
        also: further counts to include when they are within the cap.

    Returns:
        Sorted distinct counts, 0 first.

    Raises:
        ValueError: ``cpus`` or ``batches_per_epoch`` below 1, or a negative count in ``also``.
    """
    for name, value in (("cpus", cpus), ("batches_per_epoch", batches_per_epoch)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    extra = [int(n) for n in also]
    if any(n < 0 for n in extra):
        raise ValueError(f"worker counts cannot be negative, got {extra}")
    cap = min(int(cpus) + 1, int(batches_per_epoch))
    counts = {0, cap, min(int(cpus), cap)} | {2**k for k in range(cap.bit_length()) if 2**k <= cap}
    return sorted(counts | {n for n in extra if n <= cap})


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
        if X.device.type == "cuda":  # a pinned copy does not wait: no sync once per epoch
            idx = idx.pin_memory().to(X.device, non_blocking=True)
        else:
            idx = idx.to(X.device)
        stop = n - n % batch_size if drop_last else n
        for i in range(0, stop, batch_size):
            j = idx[i:i + batch_size]
            yield X[j], y[j]
