"""Image files on disk: write tensors as PNG files in ``ImageFolder``'s layout, read them back.

Image-pipeline lessons (DataLoader workers, decoding) read real files, written once from a dataset.
Re-exported by :mod:`course_utils.data`.
"""

from __future__ import annotations

from pathlib import Path

import torch

__all__ = ["image_folder", "write_image_folder"]


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
