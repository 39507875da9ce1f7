"""Image files on disk: write tensors as PNG files in ``ImageFolder``'s layout, read them back.

Image-pipeline lessons (DataLoader workers, decoding) read real files, written once from a dataset:
``write_image_folder(..., skip_existing=True)`` returns at once when the folder already holds
exactly these images. Every file is written under a temporary name and renamed into place, and a
manifest (``.course_images.json``: a fingerprint of the pixels, labels and class names, and the
files) is written last, so a reader never opens a half-written file, an interrupted write is redone
on the next call, and two processes writing the same folder leave it complete. Only the classes
that have images get a folder, and :func:`image_folder` labels each image by the manifest's class
list, so a small subset that misses some classes still reads back with its original labels.
Lessons reach them as ``cu.image_folder`` and ``cu.write_image_folder``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from torchvision.datasets import ImageFolder

__all__ = ["MANIFEST", "image_folder", "read_manifest", "write_image_folder"]

#: The manifest written last into a folder by :func:`write_image_folder`.
MANIFEST = ".course_images.json"


def _fingerprint(pixels: torch.Tensor, labels: torch.Tensor, names: tuple[str, ...]) -> str:
    """SHA-256 of the 8-bit pixels, the labels and the class names: what the folder holds."""
    h = hashlib.sha256()
    h.update(repr((tuple(pixels.shape), names)).encode())
    h.update(pixels.contiguous().numpy().tobytes())
    h.update(labels.to(torch.int64).contiguous().numpy().tobytes())
    return h.hexdigest()


def read_manifest(root: str | Path) -> dict | None:
    """The manifest of a folder written by :func:`write_image_folder`, or None (absent or unreadable)."""
    try:
        d = json.loads((Path(root) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) and isinstance(d.get("files"), list) else None


def _replace_atomically(write: Callable[[Path], object], path: Path) -> None:
    """Write ``path`` through ``write(tmp_path)`` and rename it into place (never half-written)."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}-{threading.get_ident()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_image_folder(X: torch.Tensor, y: torch.Tensor, root: str | Path, *,
                       classes: tuple[str, ...] | None = None, limit: int | None = None,
                       skip_existing: bool = False, verbose: bool = False) -> Path:
    """Write images to ``root/<class>/<index>.png`` (the layout of ``ImageFolder``).

    Args:
        X: images in [0, 1], shape ``(N, C, H, W)`` with C = 1 or 3.
        y: integer labels, shape ``(N,)``.
        root: folder to write into (created).
        classes: class names, used as folder names; ``"0"``, ``"1"`` … when omitted.
        limit: write only the first ``limit`` images.
        skip_existing: return at once when ``root`` already holds exactly these images (its
            manifest has the same fingerprint and every file it lists exists); otherwise write.
        verbose: print whether the files were written or reused, and where.

    Returns:
        The root folder. Only classes with at least one image get a folder (the manifest keeps the
        full class list, for :func:`image_folder`'s labels). When files are written, the files of
        an earlier, different write into the same folder (listed in its manifest) that are not
        rewritten are removed, and so are class folders that this leaves empty, so ``ImageFolder``
        sees only these images.

    Raises:
        ValueError: ``X`` is not ``(N, 1 or 3, H, W)``, ``y`` does not hold one label per image, or
            there are fewer class names than labels.
    """
    from PIL import Image

    root = Path(root)
    if X.dim() != 4 or X.shape[1] not in (1, 3):
        raise ValueError(f"X must have shape (N, 1 or 3, H, W), got {tuple(X.shape)}")
    if y.shape != (len(X),):
        raise ValueError(f"y must hold one label per image, shape ({len(X)},), got {tuple(y.shape)}")
    n = len(X) if limit is None else min(limit, len(X))
    labels = y[:n].cpu()
    names = tuple(classes) if classes else tuple(str(i) for i in range(int(y.max()) + 1 if len(y) else 0))
    if n and int(labels.max()) >= len(names):
        raise ValueError(f"label {int(labels.max())} has no class name among {len(names)} classes")
    pixels = (X[:n].detach().cpu().clamp(0, 1) * 255).round().to(torch.uint8)
    files = [f"{names[int(labels[i])]}/{i:06d}.png" for i in range(n)]
    fingerprint = _fingerprint(pixels, labels, names)
    old = read_manifest(root)
    if (skip_existing and old is not None and old.get("fingerprint") == fingerprint
            and all((root / f).is_file() for f in old["files"])):
        if verbose:
            print(f"images      reusing {n} PNG files in {root}")
        return root
    for c in sorted({names[int(label)] for label in labels}):  # a class with no image gets no folder
        (root / c).mkdir(parents=True, exist_ok=True)
    hwc = pixels.permute(0, 2, 3, 1).numpy()
    for i, rel in enumerate(files):
        img = Image.fromarray(hwc[i, :, :, 0] if hwc.shape[3] == 1 else hwc[i])  # 2-D uint8: mode "L"
        _replace_atomically(functools.partial(img.save, format="PNG"), root / rel)
    if old is not None:  # files of an earlier, different write would otherwise stay visible
        for rel in set(old["files"]) - set(files):
            (root / rel).unlink(missing_ok=True)
        _remove_empty_folders(root, _class_list(old))
    manifest = {"fingerprint": fingerprint, "count": n, "classes": list(names), "files": files}
    _replace_atomically(lambda p: p.write_text(json.dumps(manifest), encoding="utf-8"), root / MANIFEST)
    if verbose:
        print(f"images      wrote {n} PNG files to {root}")
    return root


def _class_list(manifest: dict | None) -> list[str] | None:
    """The class names a manifest lists, or None (no manifest, or one without a list)."""
    classes = manifest.get("classes") if manifest is not None else None
    return [str(c) for c in classes] if isinstance(classes, list) else None


def _remove_empty_folders(root: Path, classes: list[str] | None) -> None:
    """Remove the class folders of ``classes`` under ``root`` that hold nothing (an earlier write's)."""
    for c in classes or ():
        try:
            (root / c).rmdir()  # only succeeds when empty
        except OSError:
            pass


def image_folder(root: str | Path, transform: object | None = None) -> torch.utils.data.Dataset:
    """Read a folder written by :func:`write_image_folder` through PIL and torchvision transforms.

    Labels are the original ones: an image's label is its class's index in the class list of the
    folder's manifest, whichever classes have images, so a subset that misses some classes (8
    images of 10 classes) still gives labels that match a model's 10 outputs. ``classes`` is that
    full list. A folder without a manifest gets ``ImageFolder``'s own labels (sorted folder names).

    The dataset and its loader function are importable, so the dataset pickles and DataLoader
    workers can use it under every start method (``fork``, ``spawn``, ``forkserver``), provided the
    transform is importable too (torchvision's are; a class defined in a notebook is not).

    Args:
        root: the folder.
        transform: a torchvision transform; ``ToTensor()`` when omitted.

    Returns:
        A ``torchvision.datasets.ImageFolder`` (each item: image tensor, label).

    Raises:
        FileNotFoundError: the folder holds no image file.
        ValueError: an image lies outside the class folders its manifest names.
    """
    from torchvision import datasets, transforms

    # allow_empty: an empty class folder (left by an older write) is no error; labels come below
    ds = datasets.ImageFolder(str(root), transform=transform or transforms.ToTensor(), loader=_load_image,
                              allow_empty=True)
    if not ds.samples:
        raise FileNotFoundError(f"no image files in the class folders of {root}")
    names = _class_list(read_manifest(root))
    if names is not None:
        _label_by_manifest(ds, names)
    return ds


def _label_by_manifest(ds: ImageFolder, names: list[str]) -> None:
    """Relabel an ``ImageFolder`` in place: each image gets its folder's index in ``names``."""
    index = {name: i for i, name in enumerate(names)}
    samples = []
    for path, _ in ds.samples:
        folder = Path(os.path.relpath(path, ds.root)).parent.as_posix()
        if folder not in index:
            raise ValueError(f"{path} is not in a class folder of {ds.root} (its manifest names {names})")
        samples.append((path, index[folder]))
    ds.classes, ds.class_to_idx = names, index
    ds.samples = ds.imgs = samples
    ds.targets = [label for _, label in samples]


def _load_image(path: str) -> object:
    """Open an image keeping its mode (torchvision's default loader turns grey into RGB)."""
    from PIL import Image

    with open(path, "rb") as f:
        img = Image.open(f)
        img.load()
        return img
