"""DataLoader workers over real PNG files: the same batches under fork and spawn, and no process left behind.

Lesson 02 times real worker processes; these tests check, on small files written into tmp_path, that
the course's image dataset works in workers started either way (spawn imports torch in each worker:
seconds), that a dataset which cannot be pickled fails before any worker starts, and that no worker
process survives its loader, checked with multiprocessing's own list and, where installed, psutil.
"""

import gc
import multiprocessing as mp
import pickle

import pytest
import torch
from torch.utils.data import DataLoader
from torchvision.transforms import v2

import course_utils as cu

METHODS = [m for m in ("fork", "spawn") if m in mp.get_all_start_methods()]


def _children() -> set[int]:
    """PIDs of this process's live children (psutil when installed, else multiprocessing's list).

    multiprocessing's resource tracker and forkserver are helpers that live as long as the test
    process; they are not DataLoader workers.
    """
    pids = {p.pid for p in mp.active_children()}
    try:
        import psutil
    except ImportError:
        return pids
    for child in psutil.Process().children(recursive=True):
        try:
            cmd = " ".join(child.cmdline())
            if child.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:  # exited meanwhile
            continue
        if "resource_tracker" not in cmd and "forkserver" not in cmd:
            pids.add(child.pid)
    return pids


@pytest.fixture(scope="module")
def png_root(tmp_path_factory):
    d = cu.load_dataset("digits", verbose=False)
    return cu.write_image_folder(d.X_train, d.y_train, tmp_path_factory.mktemp("png"), limit=48)


def _dataset(root):
    """The course's ImageFolder with a deterministic torchvision v2 pipeline (both importable)."""
    return cu.image_folder(root, v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)]))


def _batches(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def _same(a, b):
    return len(a) == len(b) and all(torch.equal(xa, xb) and torch.equal(ya, yb) for (xa, ya), (xb, yb) in zip(a, b))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("persistent", [True, False])
def test_workers_return_the_main_process_batches_and_leave_no_process(png_root, method, persistent):
    if method == "spawn" and not persistent:
        pytest.skip("spawn is checked once (each spawn worker imports torch: seconds)")
    before = _children()
    ds = _dataset(png_root)
    reference = _batches(DataLoader(ds, batch_size=8))
    loader = DataLoader(ds, batch_size=8, num_workers=2, persistent_workers=persistent,
                        multiprocessing_context=method)
    for _ in range(2):  # two epochs: persistent workers are reused, others restarted
        assert _same(_batches(loader), reference)
        if persistent:
            assert len(_children() - before) >= 2, "persistent workers should still be alive between epochs"
        else:
            assert not _children() - before, "non-persistent workers should stop at the end of each epoch"
    del loader
    gc.collect()
    assert not _children() - before, "worker processes outlived their DataLoader"


def test_a_loader_abandoned_mid_epoch_stops_its_workers(png_root):
    before = _children()
    loader = DataLoader(_dataset(png_root), batch_size=4, num_workers=2, multiprocessing_context=METHODS[0])
    it = iter(loader)
    next(it)
    assert len(_children() - before) >= 2
    del it, loader
    gc.collect()
    assert not _children() - before, "workers of an iterator dropped mid-epoch are still running"


@pytest.mark.filterwarnings("ignore:Got pickle error")
def test_unpicklable_transform_fails_under_spawn_before_any_worker_starts(png_root):
    if "spawn" not in METHODS:
        pytest.skip("no spawn start method here")
    before = _children()
    ds = cu.image_folder(png_root, v2.Compose([v2.ToImage(), v2.Lambda(lambda x: x.float())]))
    loader = DataLoader(ds, batch_size=8, num_workers=1, multiprocessing_context="spawn")
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        next(iter(loader))
    del loader
    gc.collect()
    assert not _children() - before


def test_the_course_dataset_pickles_by_reference(png_root):
    ds = _dataset(png_root)
    blob = pickle.dumps(ds)
    assert b"__main__" not in blob, "the dataset refers to __main__, which a spawn worker cannot import"
    again = pickle.loads(blob)
    assert torch.equal(again[0][0], ds[0][0]) and again.classes == ds.classes
