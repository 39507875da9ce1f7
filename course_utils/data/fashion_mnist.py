"""Fashion-MNIST on disk, offline first: the original idx files in torchvision's cache layout.

torchvision's own ``torchvision.datasets.FashionMNIST`` reads ``<root>/FashionMNIST/raw/`` with the
four original files unzipped. :func:`prepare_fashionmnist` fills that folder, trying in order:

1. the folder itself, when it already holds the four files (nothing to do);
2. a folder of the original files, zipped (``.gz``) or not: Debian's package
   ``dataset-fashion-mnist`` installs them under ``/usr/share/datasets/fashion-mnist/``
   (:data:`SYSTEM_DIR`); the default cache ``~/.cache/course_data`` is tried too, so tests and
   notebooks that point ``$COURSE_DATA`` elsewhere still find what ``make data`` prepared;
3. torchvision's download, after a quick check that its mirror answers (set ``COURSE_OFFLINE=1``
   to skip the download altogether).

Files are written to a temporary name and renamed, so an interrupted copy never leaves a file
that looks complete, and two processes may prepare the same folder at once.
"""

from __future__ import annotations

import gzip
import os
import shutil
import socket
import tempfile
import threading
import zlib
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["FILES", "SYSTEM_DIR", "cache_dir", "fashionmnist_ready", "prepare_fashionmnist", "raw_folder",
           "unreachable"]

#: Where Debian's package ``dataset-fashion-mnist`` installs the original (gzipped) idx files.
SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")

#: The four idx files, unzipped, with their size in bytes and the header torchvision checks:
#: (magic number, number of items). The images have 28×28 pixels after the header.
FILES: dict[str, tuple[int, int, int]] = {
    "train-images-idx3-ubyte": (47_040_016, 0x803, 60_000),
    "train-labels-idx1-ubyte": (60_008, 0x801, 60_000),
    "t10k-images-idx3-ubyte": (7_840_016, 0x803, 10_000),
    "t10k-labels-idx1-ubyte": (10_008, 0x801, 10_000),
}

MIRROR_TIMEOUT_S = 3.0  # connecting to the download mirror; offline machines fail within this
DOWNLOAD_TIMEOUT_S = 60.0  # any one network read during the download


def cache_dir() -> Path:
    """Folder where datasets are cached: ``$COURSE_DATA`` or ``~/.cache/course_data``.

    It lives here, the lowest of the data modules (:mod:`course_utils.data.datasets` and
    :mod:`course_utils.data.cifar10` read it).
    """
    return Path(os.environ.get("COURSE_DATA", Path.home() / ".cache" / "course_data"))


def raw_folder(root: str | Path) -> Path:
    """Folder torchvision reads for the files: ``<root>/FashionMNIST/raw``."""
    return Path(root) / "FashionMNIST" / "raw"


def _valid(path: Path, size: int, magic: int, count: int) -> bool:
    """Whether ``path`` is a complete idx file: expected size, magic number and item count."""
    try:
        if path.stat().st_size != size:
            return False
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return int.from_bytes(head[:4], "big") == magic and int.from_bytes(head[4:8], "big") == count


def fashionmnist_ready(root: str | Path) -> bool:
    """Whether ``<root>/FashionMNIST/raw/`` holds the four complete idx files, unzipped."""
    raw = raw_folder(root)
    return all(_valid(raw / name, *spec) for name, spec in FILES.items())


def _find(folder: Path, name: str) -> Path | None:
    """The file ``name`` in ``folder``: unzipped when complete, else zipped, else None."""
    if _valid(folder / name, *FILES[name]):
        return folder / name
    zipped = folder / f"{name}.gz"
    return zipped if zipped.is_file() else None


def _complete(folder: Path) -> bool:
    return all(_find(folder, name) is not None for name in FILES)


def _default_sources(root: Path) -> list[Path]:
    """Folders that may hold the original files, in the order they are tried."""
    default_raw = raw_folder(Path.home() / ".cache" / "course_data")
    candidates = [raw_folder(root), SYSTEM_DIR]
    if default_raw.resolve() != raw_folder(root).resolve():
        candidates.append(default_raw)
    return [c for c in candidates if c.is_dir() and _complete(c)]


def _copy_from(source: Path, raw: Path) -> None:
    """Copy (and unzip) the four files from ``source`` into ``raw``, each by an atomic rename."""
    raw.mkdir(parents=True, exist_ok=True)
    for name, spec in FILES.items():
        target = raw / name
        if _valid(target, *spec):
            continue
        src = _find(source, name)
        if src is None:
            raise FileNotFoundError(f"{source} has no {name} (nor {name}.gz)")
        fd, tmp = tempfile.mkstemp(dir=raw, prefix=f".{name}.", suffix=".part")
        try:
            try:
                with os.fdopen(fd, "wb") as out, (gzip.open(src) if src.suffix == ".gz" else open(src, "rb")) as f:
                    shutil.copyfileobj(f, out, length=1 << 20)
            except (EOFError, gzip.BadGzipFile, zlib.error) as e:
                raise ValueError(f"{src} is damaged ({type(e).__name__}: {e})") from e
            if not _valid(Path(tmp), *spec):
                raise ValueError(f"{src} is not the original Fashion-MNIST file {name} (wrong size or header)")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


def unreachable(url: str, timeout: float) -> str | None:
    """None when ``url``'s host accepts a connection within ``timeout`` s, else why not (one line).

    The connection is tried in a thread, so a stalled DNS lookup (which ignores the socket timeout)
    cannot hang the caller: it gives up ``timeout`` + 1 s after the start.
    """
    host = urlparse(url)
    port = host.port or (443 if host.scheme == "https" else 80)
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host.hostname, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as e:
            outcome.append(f"{type(e).__name__}: {e}")

    probe = threading.Thread(target=connect, daemon=True)
    probe.start()
    probe.join(timeout + 1.0)
    error = outcome[0] if outcome else f"no answer within {timeout + 1.0:g} s"
    return None if error is None else f"cannot reach {host.hostname}:{port} ({error})"


def _mirror_reachable(timeout: float = MIRROR_TIMEOUT_S) -> str | None:
    """None when torchvision's first mirror accepts a connection, else why not (one line)."""
    if os.environ.get("COURSE_OFFLINE", "").strip() not in ("", "0"):
        return "COURSE_OFFLINE is set"
    from torchvision.datasets import FashionMNIST

    return unreachable(FashionMNIST.mirrors[0], timeout)


def _download(root: Path) -> None:
    """Download into ``root`` with torchvision, with a network timeout (torchvision sets none)."""
    from torchvision.datasets import FashionMNIST

    why = _mirror_reachable()
    if why is not None:
        raise ConnectionError(f"no download: {why}")
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DOWNLOAD_TIMEOUT_S)
    try:
        FashionMNIST(root=str(root), train=True, download=True)
    finally:
        socket.setdefaulttimeout(previous)


def prepare_fashionmnist(root: str | Path | None = None, *, source: str | Path | None = None,
                         download: bool = True, verbose: bool = False) -> Path:
    """Put the four original Fashion-MNIST files, unzipped, in ``<root>/FashionMNIST/raw/``.

    After this, ``torchvision.datasets.FashionMNIST(root)`` reads them with no download. Does
    nothing when the files are already there and complete.

    Args:
        root: the data folder; :func:`cache_dir` (``$COURSE_DATA`` or
            ``~/.cache/course_data``) when omitted.
        source: a folder holding the four ``*-idx?-ubyte`` files, ``.gz`` or not, to copy from.
            When omitted: the root's own raw folder (zipped files left there), Debian's
            :data:`SYSTEM_DIR`, then the default cache ``~/.cache/course_data``.
        download: when no source has the files, download them with torchvision (skipped
            quickly when the mirror cannot be reached, or when ``COURSE_OFFLINE=1``).
        verbose: print where the files came from when something was copied or downloaded.

    Returns:
        ``root``, ready for ``torchvision.datasets.FashionMNIST(root)``.

    Raises:
        FileNotFoundError: ``source`` is given but lacks one of the files; or, without
            ``source``, no folder has them and the download is off.
        ValueError: a source file is not the original (wrong size or header).
        ConnectionError: the download was tried and the mirror could not be reached.
        RuntimeError: torchvision's download failed (its message names the mirror).
    """
    root = Path(root) if root is not None else cache_dir()
    if fashionmnist_ready(root):
        return root
    raw = raw_folder(root)
    if source is not None:
        source = Path(source)
        missing = [n for n in FILES if _find(source, n) is None]
        if missing:
            raise FileNotFoundError(f"{source} lacks the Fashion-MNIST file(s) {', '.join(missing)} (.gz or not)")
        sources = [source]
    else:
        sources = _default_sources(root)
    failures = []
    for src in sources:
        try:
            _copy_from(src, raw)
        except (OSError, ValueError, EOFError) as e:  # a damaged source: say so, try the next
            if source is not None:
                raise
            failures.append(str(e) if isinstance(e, ValueError) else f"{src}: {type(e).__name__}: {e}")
            continue
        if verbose:
            print(f"Fashion-MNIST {'unzipped in' if src == raw else f'copied from {src} into'} {raw}")
        return root
    if not download:
        tried = "; ".join(failures) or f"no files in {raw} nor in {SYSTEM_DIR}"
        raise FileNotFoundError(f"Fashion-MNIST not found ({tried}); install Debian's package "
                                "dataset-fashion-mnist, or run `make data`")
    try:
        _download(root)
    except (OSError, RuntimeError) as e:
        if not failures:
            raise
        raise RuntimeError(f"{'; '.join(failures)}; then the download: {type(e).__name__}: {e}") from e
    if not fashionmnist_ready(root):
        raise RuntimeError(f"torchvision's download finished but {raw} does not hold the four files")
    if verbose:
        print(f"Fashion-MNIST downloaded by torchvision into {raw}")
    return root
