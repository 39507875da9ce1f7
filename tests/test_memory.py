import contextlib
import gc

import pytest
import torch
from torch import nn

import course_utils as cu
from course_utils.counters import memory


def small_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def test_saved_bytes_equal_the_hand_computed_number():
    net, x = small_net(), torch.randn(5, 8)
    # Activations autograd keeps for backward (float32 = 4 bytes):
    #   the input of the first Linear, 5×8 → 160 B; the ReLU output, 5×16 → 320 B, which is also
    #   the second Linear's input (same storage, counted once). Total 480 B.
    acts = cu.saved_tensors(lambda: net(x), exclude=net.parameters())
    assert acts.bytes == 480 and acts.tensors == 2
    # The second weight is saved too, for the gradient of its input: 4×16×4 = 256 B. The first is
    # not: x does not require a gradient, so autograd needs no gradient of x.
    everything = cu.saved_tensors(lambda: net(x))
    assert everything.bytes == 480 + 256 and acts.excluded_bytes == 256
    x.requires_grad_(True)
    assert cu.saved_tensors(lambda: net(x)).bytes == 480 + 256 + 16 * 8 * 4


def test_nothing_is_saved_without_autograd():
    net, x = small_net(), torch.randn(5, 8)
    with torch.inference_mode():
        assert cu.saved_tensors(lambda: net(x)).bytes == 0


def test_param_count_and_peak_memory_off_cuda():
    net = small_net()
    assert cu.param_count(net) == 8 * 16 + 16 + 16 * 4 + 4
    net[0].weight.requires_grad_(False)
    assert cu.param_count(net, trainable_only=True) == 16 + 16 * 4 + 4
    assert cu.peak_memory(lambda: None, "cpu") is None
    assert cu.format_bytes(1536) == "1.50 KiB" and cu.format_bytes(None) == "n/a"


def test_peak_memory_off_cuda_is_none_and_does_not_run_fn():
    ran = []
    for device in ("cpu", torch.device("cpu"), "mps"):
        assert cu.peak_memory(lambda: ran.append(1), device) is None
        assert cu.peak_memory_stats(lambda: ran.append(1), device) is None
    assert ran == []


def test_peak_memory_rejects_bad_input():
    with pytest.raises(TypeError, match="fn must be a callable.*int"):
        cu.peak_memory(3, "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            cu.peak_memory(lambda: None, "cuda")


class FakeAllocator:
    """Stands in for the CUDA caching allocator: what is allocated, reserved and the peaks."""

    def __init__(self, monkeypatch, resident):
        self.allocated = self.peak = resident
        self.reserved = self.peak_reserved = resident + 2**20  # a cached block beyond what is in use
        self.calls = []
        for name in ("memory_allocated", "max_memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
                     "empty_cache"):
            monkeypatch.setattr(torch.cuda, name, getattr(self, name))
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
        monkeypatch.setattr(memory, "synchronize", lambda device: self.calls.append("sync"))
        monkeypatch.setattr(gc, "collect", lambda: self.calls.append("gc"))

    def alloc(self, n):
        self.allocated += n
        self.peak = max(self.peak, self.allocated)
        self.reserved = max(self.reserved, self.allocated)
        self.peak_reserved = max(self.peak_reserved, self.reserved)

    def memory_allocated(self, device=None):
        return self.allocated

    def max_memory_allocated(self, device=None):
        return self.peak

    def max_memory_reserved(self, device=None):
        return self.peak_reserved

    def reset_peak_memory_stats(self, device=None):
        self.calls.append("reset")
        self.peak, self.peak_reserved = self.allocated, self.reserved

    def empty_cache(self):
        self.calls.append("empty_cache")
        self.reserved = self.allocated


def test_peak_memory_counts_only_what_fn_adds(monkeypatch):
    mib = 2**20
    fake = FakeAllocator(monkeypatch, resident=256 * mib)  # a model copy resident before

    def fn():
        fake.calls.append("fn")
        fake.alloc(64 * mib)
        fake.alloc(-64 * mib)

    stats = cu.peak_memory_stats(fn, "cuda")
    assert fake.calls == ["gc", "sync", "empty_cache", "reset", "fn", "sync"]
    assert (stats.peak_bytes, stats.start_bytes, stats.reserved_bytes) == (64 * mib, 256 * mib, 320 * mib)
    assert stats.device == "cuda:0"
    assert stats.to_dict() == {"kind": "peak_memory", "peak_bytes": 64 * mib, "start_bytes": 256 * mib,
                               "reserved_bytes": 320 * mib, "device": "cuda:0"}
    assert str(stats) == ("peak 64.00 MiB above the 256.00 MiB allocated before "
                          "(the allocator reserved up to 320.00 MiB on cuda:0)")
    fake.alloc(1024 * mib)  # more resident before: the same fn, the same peak
    assert cu.peak_memory(fn, torch.device("cuda", 0)) == 64 * mib


# --- out-of-memory recognition, one guarded try, the allocator cap ---

import weakref  # noqa: E402


@pytest.mark.parametrize("exc, oom", [
    (torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"), True),
    (torch.cuda.OutOfMemoryError("the same class"), True),
    (RuntimeError("GET was unable to find an engine to execute this computation"), True),
    (RuntimeError("FIND was unable to find an engine to execute this computation"), True),  # cudnn.benchmark
    (RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"), True),
    (RuntimeError("CUDA error: an illegal memory access was encountered"), False),
    (RuntimeError("Expected all tensors to be on the same device, but found cuda:0 and cpu"), False),
    (RuntimeError("memory format channels_last is not supported"), False),
    (RuntimeError("cuDNN error: CUDNN_STATUS_BAD_PARAM"), False),
    (ValueError("GET was unable to find an engine"), False),  # the marker, but not a RuntimeError
    (MemoryError("host out of memory"), False),
])
def test_is_out_of_memory(exc, oom):
    assert memory.is_out_of_memory(exc) is oom


class Payload:
    """Stands for a failed step's tensors: its frame, kept by the traceback, holds one."""


def test_fits_frees_caches_only_after_the_failed_step_is_dropped(monkeypatch):
    alive, events = [], []

    def cleanup(name):
        def record(*args, **kwargs):
            events.append((name, [r() is not None for r in alive]))
            return 0
        return record

    monkeypatch.setattr(gc, "collect", cleanup("gc"))
    monkeypatch.setattr(torch.cuda, "empty_cache", cleanup("empty_cache"))

    def step(kind=None, message=""):
        def run():  # the error is raised here, as a real step raises it: nothing outside holds it
            payload = Payload()
            alive.append(weakref.ref(payload))
            if kind is not None:
                raise kind(message)
        return run

    assert memory.fits(step()) is True and events == []
    for kind, message in ((torch.OutOfMemoryError, "fake"), (RuntimeError, "cuDNN error: CUDNN_STATUS_ALLOC_FAILED")):
        events.clear()
        assert memory.fits(step(kind, message)) is False
        assert [name for name, _ in events] == ["gc", "empty_cache"]
        assert not any(any(held) for _, held in events), f"caches freed while the failed step was referenced: {events}"
    for kind, message in ((RuntimeError, "CUDA error: an illegal memory access was encountered"), (KeyError, "x")):
        events.clear()
        with pytest.raises(kind):
            memory.fits(step(kind, message))
        assert events == []
    with pytest.raises(TypeError, match="callable"):
        memory.fits(3)


def test_memory_cap_off_cuda_runs_the_block_uncapped():
    with memory.memory_cap(2**20, "cpu") as cap:
        assert cap is None
    with pytest.raises(ValueError, match="positive"):
        with memory.memory_cap(0, "cpu"):
            pass


def test_memory_cap_passes_an_indexed_device_and_restores(monkeypatch):
    calls = []
    gib = 2**30

    def set_fraction(fraction, device=None):
        device = torch.device(device) if device is not None else None
        if device is None or device.index is None:  # what torch does with a bare "cuda"
            raise ValueError("Expected a torch.device with a specified index or an integer, but got:cuda")
        calls.append((round(fraction, 6), str(device)))

    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", set_fraction)
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda device=None: 0.5, raising=False)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 2 * gib)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: type("P", (), {"total_memory": 16 * gib}))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append("empty_cache"))
    monkeypatch.setattr(gc, "collect", lambda *a, **k: 0)
    with pytest.raises(RuntimeError, match="inside"):
        with memory.memory_cap(2 * gib, "cuda") as cap:
            assert cap == 4 * gib
            raise RuntimeError("inside the block")
    assert calls == ["empty_cache", (0.25, "cuda:1"), (0.5, "cuda:1"), "empty_cache"]
