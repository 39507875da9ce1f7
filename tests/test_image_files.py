"""PNG folders written once: skipped when complete, rewritten when changed or interrupted, never half-read."""

from multiprocessing.pool import ThreadPool

import pytest
import torch

import course_utils as cu
from course_utils.data import image_files


def _images(n=12, seed=0, channels=1, size=6):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, channels, size, size, generator=g), torch.arange(n) % 3


def _pngs(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.png"))


def _count_saves(monkeypatch):
    from PIL import Image

    calls = []
    original = Image.Image.save

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "save", counting)
    return calls


def test_written_once_then_reused(tmp_path, monkeypatch, capsys):
    X, y = _images()
    saves = _count_saves(monkeypatch)
    root = cu.write_image_folder(X, y, tmp_path / "png", skip_existing=True, verbose=True)
    assert len(saves) == 12 and "wrote 12 PNG files" in capsys.readouterr().out
    stamps = {p: p.stat().st_mtime_ns for p in root.rglob("*.png")}
    again = cu.write_image_folder(X, y, tmp_path / "png", skip_existing=True, verbose=True)
    assert again == root and len(saves) == 12, "a complete folder must not be written again"
    assert "reusing 12 PNG files" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*.png")} == stamps
    manifest = image_files.read_manifest(root)
    assert manifest["count"] == 12 and sorted(manifest["files"]) == _pngs(root)


def test_without_skip_existing_it_always_writes(tmp_path, monkeypatch):
    X, y = _images()
    saves = _count_saves(monkeypatch)
    cu.write_image_folder(X, y, tmp_path, limit=5)
    cu.write_image_folder(X, y, tmp_path, limit=5)
    assert len(saves) == 10  # the old behaviour: every call writes
    assert len(_pngs(tmp_path)) == 5


def test_changed_images_are_rewritten_and_stale_files_removed(tmp_path):
    X, y = _images(12)
    cu.write_image_folder(X, y, tmp_path, skip_existing=True)
    X2, y2 = _images(8, seed=1)
    cu.write_image_folder(X2, y2, tmp_path, skip_existing=True)
    assert len(_pngs(tmp_path)) == 8, "files of the earlier write must not stay visible to ImageFolder"
    ds = cu.image_folder(tmp_path)
    got = sorted(round(float(img.sum()), 3) for img, _ in ds)
    want = sorted(round(float((x * 255).round().div(255).sum()), 3) for x in X2)
    assert got == want


def test_interrupted_or_damaged_folder_is_written_again(tmp_path, monkeypatch):
    X, y = _images()
    root = cu.write_image_folder(X, y, tmp_path, skip_existing=True)
    (root / image_files.MANIFEST).unlink()  # interrupted before the manifest: incomplete
    saves = _count_saves(monkeypatch)
    cu.write_image_folder(X, y, root, skip_existing=True)
    assert len(saves) == 12
    next(root.rglob("*.png")).unlink()  # a file lost after a complete write
    cu.write_image_folder(X, y, root, skip_existing=True)
    assert len(saves) == 24 and len(_pngs(root)) == 12
    (root / image_files.MANIFEST).write_text("{not json")
    assert image_files.read_manifest(root) is None
    cu.write_image_folder(X, y, root, skip_existing=True)
    assert len(saves) == 36 and image_files.read_manifest(root)["count"] == 12


def test_round_trip_colour_and_class_names_and_no_temporary_files(tmp_path):
    X, y = _images(9, channels=3, size=5)
    root = cu.write_image_folder(X, y, tmp_path, classes=("cat", "dog", "eel"), skip_existing=True)
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == ["cat", "dog", "eel"]
    assert not [p for p in root.rglob("*") if ".tmp" in p.name], "temporary files were left behind"
    ds = cu.image_folder(root)
    assert ds.classes == ["cat", "dog", "eel"] and len(ds) == 9
    originals = (X * 255).round() / 255
    for img, label in ds:
        assert img.shape == (3, 5, 5)
        assert any(torch.allclose(img, o, atol=1e-6) for o in originals[y == label])


def test_bad_input_is_refused(tmp_path):
    X, y = _images()
    with pytest.raises(ValueError, match="shape"):
        cu.write_image_folder(X[:, 0], y, tmp_path)
    with pytest.raises(ValueError, match="one label per image"):
        cu.write_image_folder(X, y[:-1], tmp_path)
    with pytest.raises(ValueError, match="no class name"):
        cu.write_image_folder(X, y, tmp_path, classes=("a", "b"))


def _write(args):
    root, seed = args
    X, y = _images(40, seed=seed, size=16)
    cu.write_image_folder(X, y, root, skip_existing=True)


def test_two_writers_of_the_same_folder_leave_it_complete(tmp_path):
    # Threads, not forked processes: forking a process whose torch thread pool is running can
    # deadlock the child (it did, inside the full test session); the writes race the same way.
    with ThreadPool(2) as pool:
        pool.map(_write, [(tmp_path, 0), (tmp_path, 0)])
    X, y = _images(40, seed=0, size=16)
    assert len(_pngs(tmp_path)) == 40
    assert not [p for p in tmp_path.rglob("*") if ".tmp" in p.name]
    assert image_files.read_manifest(tmp_path)["fingerprint"] == image_files._fingerprint(
        (X * 255).round().to(torch.uint8), y, ("0", "1", "2"))
    assert len(cu.image_folder(tmp_path)) == 40


def test_subset_missing_classes_keeps_original_labels_through_a_dataloader(tmp_path):
    # 8 images of a 10-class dataset (lesson 02's smoke profile): classes 2 and 8 have none
    labels = torch.tensor([0, 1, 3, 4, 5, 6, 7, 9])
    X = torch.stack([torch.full((1, 4, 4), float(v) / 9) for v in labels])
    root = cu.write_image_folder(X, labels, tmp_path, skip_existing=True)
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == [str(v) for v in labels.tolist()]
    ds = cu.image_folder(root)
    assert ds.classes == [str(i) for i in range(10)], "classes stays the full list: classes[label] is its name"
    loader = torch.utils.data.DataLoader(ds, batch_size=3, shuffle=False)
    seen = {}
    for xb, yb in loader:
        for x, label in zip(xb, yb.tolist()):
            seen[label] = round(float(x.mean()) * 9)
    assert seen == {v: v for v in labels.tolist()}, "each image must come back with its original label"


def test_labels_follow_the_given_class_order_not_the_sorted_folder_names(tmp_path):
    names = ("zebra", "ant", "mole")  # sorted folder names would make ant 0, mole 1, zebra 2
    y = torch.tensor([0, 2, 0, 2])  # 'ant' has no image
    X = torch.stack([torch.full((1, 3, 3), float(v) / 2) for v in y])
    ds = cu.image_folder(cu.write_image_folder(X, y, tmp_path, classes=names))
    assert ds.classes == list(names) and ds.class_to_idx == {"zebra": 0, "ant": 1, "mole": 2}
    assert sorted((round(float(img.mean()) * 2), label) for img, label in ds) == [(0, 0), (0, 0), (2, 2), (2, 2)]


def test_empty_class_folders_of_an_older_write_are_no_error(tmp_path):
    X, y = _images(6)  # labels 0, 1, 2
    root = cu.write_image_folder(X, y, tmp_path, skip_existing=True)
    for c in ("3", "4"):  # what the old writer left: a folder for every class, some empty
        (root / c).mkdir()
    assert len(cu.image_folder(root)) == 6
    cu.write_image_folder(X[y == 0], y[y == 0], root)  # a new write of class 0 only
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == ["0", "3", "4"]  # not its classes: kept
    ds = cu.image_folder(root)
    assert len(ds) == 2 and set(ds.targets) == {0}
