import pickle
import urllib.error
import urllib.request

import numpy as np
import pytest
import torch

import course_utils as cu
from course_utils.data import DatasetFallbackWarning


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
        pickle.dump({"label_names": list(cu.data.CIFAR10_CLASSES), "num_cases_per_batch": n}, f)
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


def test_download_failure_falls_back_with_a_warning(tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise urllib.error.URLError("network is unreachable (test)")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    for name in ("cifar10", "fashionmnist"):
        with pytest.warns(DatasetFallbackWarning, match=f"could not load {name}.*'digits'"):
            d = cu.load_dataset(name, root=tmp_path / name)
        assert d.name == "digits"
        out = capsys.readouterr().out
        assert "WARNING" in out and "dataset     digits" in out


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
