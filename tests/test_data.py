import gzip
import os
import pickle
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import torch

import course_utils as cu
from course_utils.data import fashion_mnist
from course_utils.data.datasets import DatasetFallbackWarning

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tools/ (the `make data` script)


def test_digits_is_offline_real_data():
    d = cu.load_dataset("digits", verbose=False)
    assert d.name == "digits" and d.input_shape == (1, 8, 8) and d.num_classes == 10
    assert len(d.X_train) + len(d.X_test) == 1797
    assert 0.0 <= float(d.X_train.min()) and float(d.X_train.max()) <= 1.0
    big = cu.load_dataset("digits", image_size=16, verbose=False)
    assert big.input_shape == (1, 16, 16)


def test_unknown_dataset_lists_valid_names():
    with pytest.raises(ValueError, match="digits, cifar10, fashionmnist"):
        cu.load_dataset("imagenet")


def _write_cifar10(root, n=4):
    """Write tiny files in CIFAR-10's real on-disk format (pickled dicts, uint8 rows)."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n).tolist()
        with open(folder / name, "wb") as f:
            pickle.dump({"batch_label": name, "labels": labels, "data": data,
                         "filenames": [f"{name}_{i}.png" for i in range(n)]}, f)
        batches[name] = (data, labels)
    with open(folder / "batches.meta", "wb") as f:
        pickle.dump({"label_names": list(cu.data.cifar10.CIFAR10_CLASSES), "num_cases_per_batch": n}, f)
    return batches


def test_cifar10_path_reads_the_files_the_test_wrote(tmp_path):
    written = _write_cifar10(tmp_path)
    d = cu.load_dataset("cifar10", root=tmp_path, verbose=False)
    assert d.name == "cifar10" and d.input_shape == (3, 32, 32) and d.classes[0] == "airplane"
    assert len(d.X_train) == 20 and len(d.X_test) == 4
    data, labels = written["data_batch_1"]
    first = (d.X_train[0] * 255).round().to(torch.uint8).flatten().numpy()
    assert np.array_equal(first, data[0])  # rows are R plane, G plane, B plane
    assert d.y_train[:4].tolist() == labels
    assert d.y_test.tolist() == written["test_batch"][1]


@pytest.fixture
def no_fashionmnist_source(tmp_path, monkeypatch):
    """No Debian folder, no default cache: Fashion-MNIST can only come from a download."""
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIR", tmp_path / "no-debian-package")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COURSE_OFFLINE", raising=False)


class _Connected:
    """What a probe's socket.create_connection returns when the host answers (the test's stand-in)."""

    def close(self):
        pass


def test_download_failure_falls_back_with_a_warning(tmp_path, monkeypatch, capsys, no_fashionmnist_source):
    def offline(*args, **kwargs):
        raise urllib.error.URLError("network is unreachable (test)")

    # the mirrors answer the probe, then the download itself fails: no real network either way
    monkeypatch.setattr(socket, "create_connection", lambda *args, **kwargs: _Connected())
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    for name in ("cifar10", "fashionmnist"):
        with pytest.warns(DatasetFallbackWarning, match=f"could not load {name}.*'digits'"):
            d = cu.load_dataset(name, root=tmp_path / name)
        assert d.name == "digits"
        out = capsys.readouterr().out
        assert "WARNING" in out and "dataset     digits" in out


@pytest.fixture
def no_network(monkeypatch):
    """Any connection or download fails the test: the code under test must not try one."""
    def refuse(*args, **kwargs):
        raise AssertionError("the network was touched")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)


def test_cifar10_offline_switch_skips_the_network(tmp_path, monkeypatch, capsys, no_network):
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    start = time.perf_counter()
    assert cu.data.cifar10.cifar10_unavailable(tmp_path) == "COURSE_OFFLINE is set"
    with pytest.raises(ConnectionError, match="no download: COURSE_OFFLINE is set"):
        cu.data.cifar10.fetch_cifar10(tmp_path)
    with pytest.warns(DatasetFallbackWarning, match="could not load cifar10.*COURSE_OFFLINE"):
        d = cu.load_dataset("cifar10", root=tmp_path, verbose=False)
    assert d.name == "digits" and time.perf_counter() - start < 5
    _write_cifar10(tmp_path)  # files on disk: read offline, no network needed
    assert cu.data.cifar10.cifar10_unavailable(tmp_path) is None
    assert cu.load_dataset("cifar10", root=tmp_path, verbose=False).name == "cifar10"


@pytest.mark.parametrize("how", ["hangs", "times out"])
def test_cifar10_unreachable_host_gives_up_within_the_timeout(tmp_path, monkeypatch, how):
    released = threading.Event()
    timeouts = []

    def unreachable(address, timeout=None, *args, **kwargs):
        timeouts.append(timeout)
        if how == "hangs":  # a stalled DNS lookup: no socket timeout applies
            released.wait(30)
        else:  # a firewall that drops packets: the connect times out
            time.sleep(timeout)
        raise TimeoutError("timed out (test)")

    def no_download(self):
        raise AssertionError("torchvision's download must not start when the host is unreachable")

    from torchvision.datasets import CIFAR10

    monkeypatch.delenv("COURSE_OFFLINE", raising=False)
    monkeypatch.setattr(cu.data.cifar10, "MIRROR_TIMEOUT_S", 0.3)
    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(urllib.request, "urlopen", no_download)
    monkeypatch.setattr(CIFAR10, "download", no_download)
    start = time.perf_counter()  # torchvision is imported above, before the clock starts
    try:
        with pytest.raises(ConnectionError, match="no download: cannot reach www.cs.toronto.edu:443"):
            cu.data.cifar10.fetch_cifar10(tmp_path)
    finally:
        released.set()
    assert time.perf_counter() - start < 0.3 + 1.0 + 1.0  # the probe's timeout and its grace second
    assert timeouts == [0.3]


def test_cifar10_download_reads_time_out_and_the_default_is_put_back(tmp_path, monkeypatch):
    seen = []

    def download(self):  # torchvision's download, as far as the socket timeout goes
        seen.append(socket.getdefaulttimeout())

    from torchvision.datasets import CIFAR10

    monkeypatch.delenv("COURSE_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "create_connection", lambda *args, **kwargs: _Connected())
    monkeypatch.setattr(CIFAR10, "download", download)
    before = socket.getdefaulttimeout()
    with pytest.raises(RuntimeError, match="not found or corrupted"):  # nothing was written
        cu.data.cifar10.fetch_cifar10(tmp_path)
    assert seen == [cu.data.fashion_mnist.DOWNLOAD_TIMEOUT_S] and socket.getdefaulttimeout() == before


# --- Fashion-MNIST: the real files from Debian's package dataset-fashion-mnist ---

def _real_files_here():
    """Debian's idx files, or a cache `make data` filled (download), to prepare a test folder from."""
    return (all((fashion_mnist.SYSTEM_DIR / f"{name}.gz").is_file() for name in fashion_mnist.FILES)
            or fashion_mnist.fashionmnist_ready(Path.home() / ".cache" / "course_data"))


real_files = pytest.mark.skipif(
    not _real_files_here(),
    reason=f"no Fashion-MNIST files on this machine: {fashion_mnist.SYSTEM_DIR} lacks them (Debian's package "
           "dataset-fashion-mnist) and ~/.cache/course_data has none; run `make data` (as root: installs the package)")


@pytest.fixture(scope="module")
def fashion_root(tmp_path_factory):
    """A data folder prepared from the real files, starting from a damaged copy of one file."""
    root = tmp_path_factory.mktemp("fashion")
    raw = fashion_mnist.raw_folder(root)
    raw.mkdir(parents=True)
    (raw / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01 interrupted copy")
    assert not fashion_mnist.fashionmnist_ready(root)
    assert fashion_mnist.prepare_fashionmnist(root, download=False) == root
    return root


@real_files
def test_torchvision_reads_the_prepared_real_files(fashion_root):
    from torchvision.datasets import FashionMNIST

    assert fashion_mnist.fashionmnist_ready(fashion_root)  # the damaged file was replaced
    assert sorted(p.name for p in fashion_mnist.raw_folder(fashion_root).iterdir()) == sorted(fashion_mnist.FILES)
    train = FashionMNIST(root=str(fashion_root), train=True)  # download=False: reads the files or raises
    test = FashionMNIST(root=str(fashion_root), train=False)
    assert tuple(train.data.shape) == (60_000, 28, 28) and tuple(test.data.shape) == (10_000, 28, 28)
    assert tuple(train.classes) == cu.data.datasets.FASHIONMNIST_CLASSES
    # the original files: the first labels, and 6,000 / 1,000 images of each class
    assert train.targets[:4].tolist() == [9, 0, 0, 3] and test.targets[:4].tolist() == [9, 2, 1, 1]
    assert train.targets.bincount().tolist() == [6_000] * 10
    assert test.targets.bincount().tolist() == [1_000] * 10


@real_files
def test_load_fashionmnist_full_and_subsets(fashion_root, capsys):
    d = cu.load_dataset("fashionmnist", root=fashion_root)
    assert "dataset     fashionmnist: 60000 train / 10000 test" in capsys.readouterr().out
    assert d.name == "fashionmnist" and d.input_shape == (1, 28, 28) and d.num_classes == 10
    assert d.classes[0] == "T-shirt/top" and d.classes[9] == "Ankle boot"
    assert d.X_train.dtype == torch.float32 and (len(d.X_train), len(d.X_test)) == (60_000, 10_000)
    assert float(d.X_train.min()) == 0.0 and float(d.X_train.max()) == 1.0
    assert float(d.X_test.min()) == 0.0 and float(d.X_test.max()) == 1.0

    small = cu.load_dataset("fashionmnist", root=fashion_root, train_size=2_000, test_size=1_000, verbose=False)
    assert (len(small.X_train), len(small.X_test)) == (2_000, 1_000)
    assert small.y_train.bincount().tolist() == [200] * 10 and small.y_test.bincount().tolist() == [100] * 10
    again = cu.load_dataset("fashionmnist", root=fashion_root, train_size=2_000, test_size=1_000, verbose=False)
    assert torch.equal(small.X_train, again.X_train) and torch.equal(small.y_test, again.y_test)
    other = cu.load_dataset("fashionmnist", root=fashion_root, train_size=2_000, seed=1, verbose=False)
    assert not torch.equal(small.X_train, other.X_train) and len(other.X_test) == 10_000
    resized = cu.load_dataset("fashionmnist", root=fashion_root, image_size=32, train_size=10, verbose=False)
    assert resized.input_shape == (1, 32, 32) and len(resized.X_train) == 10


@real_files
def test_fashionmnist_tensors_are_cached_beside_the_raw_files(fashion_root, monkeypatch):
    """After torchvision's first read, a fresh load needs no torchvision; changed raw files invalidate it."""
    first = cu.load_dataset("fashionmnist", root=fashion_root, train_size=100, verbose=False)
    cache = Path(fashion_root) / "FashionMNIST" / "course.pt"
    assert cache.exists()
    import torchvision.datasets

    def no_torchvision(*a, **k):
        raise AssertionError("torchvision was asked to read the files again")

    monkeypatch.setattr(torchvision.datasets, "FashionMNIST", no_torchvision)
    again = cu.load_dataset("fashionmnist", root=fashion_root, train_size=100, verbose=False)
    assert torch.equal(first.X_train, again.X_train)
    monkeypatch.undo()
    raw = sorted((Path(fashion_root) / "FashionMNIST" / "raw").glob("t10k-labels*"))[0]
    os.utime(raw, (0, 0))  # the raw files changed: read them again through torchvision
    seen = []
    real = torchvision.datasets.FashionMNIST
    monkeypatch.setattr(torchvision.datasets, "FashionMNIST", lambda *a, **k: seen.append(1) or real(*a, **k))
    cu.load_dataset("fashionmnist", root=fashion_root, train_size=100, verbose=False)
    assert seen, "a stale cache was used"


@real_files
def test_make_data_script_says_ready(fashion_root, capsys):
    from tools import get_data

    assert get_data.main(["--root", str(fashion_root)]) == 0
    assert f"Fashion-MNIST is ready in {fashion_mnist.raw_folder(fashion_root)}" in capsys.readouterr().out


def _corrupt_folder(root):
    """A raw folder whose files are damaged: unzipped ones too short, zipped ones truncated."""
    raw = fashion_mnist.raw_folder(root)
    raw.mkdir(parents=True)
    for name in fashion_mnist.FILES:
        (raw / name).write_bytes(b"not an idx file")
        with gzip.open(raw / f"{name}.gz", "wb") as f:
            f.write(b"\x00\x00\x08\x03" + bytes(5000))
        (raw / f"{name}.gz").write_bytes((raw / f"{name}.gz").read_bytes()[:20])  # truncated


def test_corrupt_files_and_no_network_fall_back_quickly(tmp_path, monkeypatch, capsys, no_fashionmnist_source):
    _corrupt_folder(tmp_path)
    connect_timeouts = []

    def unreachable(address, timeout=None, *args, **kwargs):  # a firewall that drops packets, at once
        connect_timeouts.append(timeout)
        raise TimeoutError("timed out (test)")

    def no_download(self):
        raise AssertionError("torchvision's download must not start when the mirror is unreachable")

    from torchvision.datasets import FashionMNIST

    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(FashionMNIST, "download", no_download)
    with pytest.warns(DatasetFallbackWarning, match=r"could not load fashionmnist .*cannot reach.*'digits'"):
        d = cu.load_dataset("fashionmnist", root=tmp_path, train_size=100)
    assert connect_timeouts and all(t is not None and t <= 5 for t in connect_timeouts)
    out = capsys.readouterr().out
    assert "WARNING: could not load fashionmnist" in out and "dataset     digits: 100 train" in out
    assert "train-images-idx3-ubyte.gz" in out  # the damaged file is named
    assert d.name == "digits" and d.input_shape == (1, 28, 28)  # same shape as Fashion-MNIST's
    assert 0.0 <= float(d.X_train.min()) and float(d.X_train.max()) <= 1.0


def test_offline_switch_skips_the_download(tmp_path, monkeypatch, no_fashionmnist_source):
    def no_network(*args, **kwargs):
        raise AssertionError("COURSE_OFFLINE=1 must not touch the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    with pytest.raises(ConnectionError, match="COURSE_OFFLINE is set"):
        fashion_mnist.prepare_fashionmnist(tmp_path)
    with pytest.raises(FileNotFoundError, match="dataset-fashion-mnist"):
        fashion_mnist.prepare_fashionmnist(tmp_path, download=False)
    with pytest.raises(FileNotFoundError, match="lacks the Fashion-MNIST file"):
        fashion_mnist.prepare_fashionmnist(tmp_path, source=tmp_path)
    with pytest.warns(DatasetFallbackWarning, match="COURSE_OFFLINE"):
        cu.load_dataset("fashionmnist", root=tmp_path, verbose=False)


def test_make_data_script_never_fails(tmp_path, monkeypatch, capsys, no_fashionmnist_source):
    from tools import get_data

    monkeypatch.setenv("COURSE_NO_APT", "1")
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    assert get_data.main(["--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "COURSE_NO_APT is set" in out and "COURSE_OFFLINE is set" in out
    assert "fall back to scikit-learn's handwritten digits" in out


def _labelled(counts):
    y = torch.cat([torch.full((n,), c) for c, n in enumerate(counts)])
    X = torch.arange(len(y), dtype=torch.float32).view(-1, 1, 1, 1)  # each example's index
    return X, y


def test_subset_is_stratified_seeded_and_checked():
    X_tr, y_tr = _labelled([50, 30, 20])
    X_te, y_te = _labelled([5, 5])
    d = cu.data.dataset.Dataset("toy", X_tr, y_tr, X_te, y_te, ("a", "b", "c"))
    s = cu.data.dataset.subset(d, train_size=11, seed=3)
    assert s.y_train.bincount().tolist() == [6, 3, 2]  # 5.5, 3.3, 2.2: the largest remainder gets one more
    assert torch.equal(y_tr[s.X_train.flatten().long()], s.y_train)  # each image keeps its label
    assert len(set(s.X_train.flatten().tolist())) == 11 and s.X_test is X_te
    assert torch.equal(cu.data.dataset.subset(d, 11, seed=3).X_train, s.X_train)
    assert not torch.equal(cu.data.dataset.subset(d, 11, seed=4).X_train, s.X_train)
    assert not torch.equal(s.y_train.sort().values, s.y_train)  # shuffled, not grouped by class
    assert cu.data.dataset.subset(d, 1000, 1000) is d and cu.data.dataset.subset(d) is d
    assert cu.data.dataset.subset(d, test_size=4).y_test.bincount().tolist() == [2, 2]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="train_size must be a positive integer"):
            cu.data.dataset.subset(d, train_size=bad)
    with pytest.raises(ValueError, match="test_size must be a positive integer"):
        cu.load_dataset("digits", test_size=0)


def test_digits_subset_and_backwards_compatible_call():
    d = cu.load_dataset("digits", image_size=16, train_size=100, test_size=50, seed=1, verbose=False)
    assert d.input_shape == (1, 16, 16) and (len(d.X_train), len(d.X_test)) == (100, 50)
    full = cu.load_dataset("digits", verbose=False)
    assert (len(full.X_train), len(full.X_test)) == (1438, 359)  # unchanged split


def test_png_folder_round_trip_through_a_real_dataloader(tmp_path):
    from torchvision import transforms

    d = cu.load_dataset("digits", verbose=False)
    root = cu.write_image_folder(d.X_train, d.y_train, tmp_path / "png", limit=40)
    assert len(list(root.rglob("*.png"))) == 40
    ds = cu.image_folder(root, transforms.Compose([transforms.ToTensor()]))
    loader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=2)
    got = {}
    for X, y in loader:
        assert X.shape[1:] == (1, 8, 8)
        for img, label in zip(X, y):
            got.setdefault(int(label), []).append(img)
    assert sum(len(v) for v in got.values()) == 40
    # every image read back equals an original, quantised to 8 bits
    originals = (d.X_train[:40] * 255).round() / 255
    for label, imgs in got.items():
        for img in imgs:
            assert any(torch.allclose(img, o, atol=1e-6) for o in originals[d.y_train[:40] == label])


def test_batches_and_synthetic():
    X, y = cu.synthetic(10, (3,), num_classes=2, seed=1)
    stream = cu.batches(X, y, 4, seed=0)
    seen = [next(stream) for _ in range(4)]  # 2 per epoch (drop_last), then the next epoch
    assert all(b[0].shape == (4, 3) for b in seen)
    with pytest.raises(ValueError, match="larger than the dataset"):
        next(cu.batches(X, y, 11))


def test_make_run_and_ci_prepare_the_data_first():
    make = (ROOT / "Makefile").read_text()
    assert "\ndata: $(STAMP)" in make and "tools/get_data.py" in make
    assert any(line.startswith("run:") and " data" in line.split("##")[0] for line in make.splitlines())
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make data" in ci and ci.index("make data") < ci.index("make test")
