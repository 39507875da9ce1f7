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


@pytest.mark.parametrize("cpus, batches, also, expected", [
    (2, 24, (), [0, 1, 2, 3]),               # the cpu profile on a 2-CPU machine: one worker past the CPUs
    (16, 16, (), [0, 1, 2, 4, 8, 16]),       # 16 batches per epoch: a 17th worker would sit idle
    (16, 34, (4,), [0, 1, 2, 4, 8, 16, 17]),  # a 16-CPU GPU box with images scaled to the CPUs
    (8, 1, (), [0, 1]),                      # one batch per epoch (the smoke profile)
    (1, 5, (), [0, 1, 2]),
    (3, 100, (32,), [0, 1, 2, 3, 4]),        # "4 × 8 GPUs" = 32 is past the cap: left out
    (6, 100, (5,), [0, 1, 2, 4, 5, 6, 7]),
])
def test_worker_counts_to_sweep_stop_at_the_cpus_plus_one_or_the_batches(cpus, batches, also, expected):
    got = cu.data.loaders.worker_counts(cpus, batches, also=also)
    assert got == expected
    assert got[0] == 0 and max(got) == min(cpus + 1, batches) and got == sorted(set(got))


@pytest.mark.parametrize("bad", [dict(cpus=0, batches_per_epoch=4), dict(cpus=2, batches_per_epoch=0),
                                 dict(cpus=2.5, batches_per_epoch=4), dict(cpus=True, batches_per_epoch=4),
                                 dict(cpus=2, batches_per_epoch=4, also=(-1,))])
def test_worker_counts_refuses_impossible_sizes(bad):
    with pytest.raises(ValueError):
        cu.data.loaders.worker_counts(**bad)


def test_lesson_02_sweeps_the_library_counts_and_one_process_s_rule():
    """The lesson sweeps cu.data.loaders.worker_counts, and its "4 × GPUs" counts the GPUs this process drives.

    Counting torch.cuda.device_count() gave 32 workers for one process on an 8-GPU node: each process
    of a multi-GPU run has its own loader, so the rule is 4 per process (one GPU each).
    """
    import json
    from pathlib import Path

    lesson = Path(__file__).parents[1] / "solutions/02_dataloader_workers/02_dataloader_workers.ipynb"
    nb = json.loads(lesson.read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "worker_counts(" in code
    assert "device_count()" not in code, "the rule of thumb must not count every GPU of the node for one process"
