"""The course's named datasets: :func:`load_dataset`, Fashion-MNIST offline first, and a fallback that always works.

- ``fashionmnist``: Fashion-MNIST (70,000 real 28×28 images, 10 classes), the course's main
  dataset, read by torchvision's own ``FashionMNIST`` class from the original idx files. They
  come from the cache, else Debian's package ``dataset-fashion-mnist``, else torchvision's
  download (see :mod:`course_utils.data.fashion_mnist`; ``make data`` prepares them once).
- ``digits``: scikit-learn's bundled handwritten digits (1,797 real 8×8 images, no download).
- ``cifar10``: CIFAR-10 (60,000 32×32 colour images), from :mod:`course_utils.data.cifar10`.

When a real dataset cannot be had, :func:`load_dataset` falls back to ``digits`` with a printed
warning that names the dataset actually used, never silently; ``COURSE_DATASET=digits`` forces
that path (printed the same way), the one a learner offline or without the files meets. Tensors
are float32 in [0, 1], shape ``(N, C, H, W)``, in a :class:`~course_utils.data.dataset.Dataset`;
``train_size``/``test_size`` take a class-stratified subset with a fixed seed
(:func:`~course_utils.data.dataset.subset`). Batches and worker counts: :mod:`course_utils.data.loaders`;
image files on disk: :mod:`course_utils.data.image_files`.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import torch

from .cifar10 import fetch_cifar10, read_cifar10
from .dataset import Dataset, check_size, subset
from .fashion_mnist import cache_dir, prepare_fashionmnist, raw_folder

__all__ = ["DATASETS", "FORCE_ENV", "DatasetFallbackWarning", "forced_dataset", "load_dataset"]

DATASETS: tuple[str, ...] = ("digits", "cifar10", "fashionmnist")
FASHIONMNIST_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                        "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot")


class DatasetFallbackWarning(UserWarning):
    """A real dataset could not be loaded and the offline default is used instead."""


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
    the files into the cache (see :func:`~course_utils.data.fashion_mnist.prepare_fashionmnist`);
    later calls read the cache.

    Args:
        name: one of :data:`DATASETS`.
        root: data folder; :func:`~course_utils.data.fashion_mnist.cache_dir` when omitted.
        image_size: resize the images to ``image_size``×``image_size`` (bilinear), e.g. digits to
            16 or 28 for conv nets. When ``fashionmnist`` falls back to digits, they are resized to
            28×28 unless ``image_size`` says otherwise, so the input shape stays the same.
        verbose: print which dataset was loaded, its sizes, and where files were copied from.
        train_size: keep this many training examples (:func:`~course_utils.data.dataset.subset`);
            all when None or larger.
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
        check_size(arg, value)
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
