"""Image files on disk: write tensors as PNG files in ``ImageFolder``'s layout, read them back.

Image-pipeline lessons (DataLoader workers, decoding) read real files, written once from a dataset:
``write_image_folder(..., skip_existing=True)`` returns at once when the folder already holds
exactly these images. Every file is written under a temporary name and renamed into place, and a
manifest (``.course_images.json``: a fingerprint of the pixels, labels and class names, and the
files) is written last, so a reader never opens a half-written file, an interrupted write is redone
on the next call, and two processes writing the same folder leave it complete.
Re-exported by :mod:`course_utils.data`.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import torch

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
        The root folder. When files are written, the files of an earlier, different write into the
        same folder (listed in its manifest) that are not rewritten are removed, so ``ImageFolder``
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
    for c in names:
        (root / c).mkdir(parents=True, exist_ok=True)
    hwc = pixels.permute(0, 2, 3, 1).numpy()
    for i, rel in enumerate(files):
        img = Image.fromarray(hwc[i, :, :, 0] if hwc.shape[3] == 1 else hwc[i])  # 2-D uint8: mode "L"
        _replace_atomically(lambda p, img=img: img.save(p, format="PNG"), root / rel)
    if old is not None:  # files of an earlier, different write would otherwise stay visible
        for rel in set(old["files"]) - set(files):
            (root / rel).unlink(missing_ok=True)
    manifest = {"fingerprint": fingerprint, "count": n, "classes": list(names), "files": files}
    _replace_atomically(lambda p: p.write_text(json.dumps(manifest), encoding="utf-8"), root / MANIFEST)
    if verbose:
        print(f"images      wrote {n} PNG files to {root}")
    return root


def image_folder(root: str | Path, transform: object | None = None) -> torch.utils.data.Dataset:
    """Read a folder written by :func:`write_image_folder` through PIL and torchvision transforms.

    The dataset and its loader function are importable, so the dataset pickles and DataLoader
    workers can use it under every start method (``fork``, ``spawn``, ``forkserver``), provided the
    transform is importable too (torchvision's are; a class defined in a notebook is not).

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
