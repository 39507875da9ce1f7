"""The CUDA paths, on a real GPU: event timing against a kernel of known duration, peak memory,
fp16 with a GradScaler, bf16, no per-step sync, DataLoader workers with pinned memory through
``cu.train``, out-of-memory recovery (the allocator's error and cuDNN's), the profiler's CUDA rows,
and timing on a device that is not the current one.

Skipped as a whole without CUDA (the branch logic is tested on the CPU with faked capabilities in
test_env.py and test_memory.py). Under a minute on one GPU, with or without nbval installed:
`pytest tests/test_gpu.py` (tools/gpu_window.sh runs it so).
"""

import copy
import re
import statistics
import time
import warnings

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import course_utils as cu

from clock import retried

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

MIB = 2**20


@pytest.fixture(scope="module")
def dev():
    return torch.device("cuda", torch.cuda.current_device())


def spin_seconds(cycles, device):
    """Seconds that ``torch.cuda._sleep(cycles)`` takes on ``device``, by CUDA events (median of 3)."""
    with torch.cuda.device(device):
        times = []
        for _ in range(3):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def sleep_cycles_for(seconds, device):
    """GPU clock cycles that ``torch.cuda._sleep`` spins for about ``seconds`` on ``device``: a kernel
    of known duration (the clocks are ramped up first, then the spin is calibrated by CUDA events)."""
    with torch.cuda.device(device):
        torch.cuda._sleep(100_000_000)  # let the clocks ramp up first
        torch.cuda.synchronize()
    cycles = 20_000_000
    return max(1, int(cycles * seconds / spin_seconds(cycles, device)))


@pytest.mark.clock
def test_event_timing_waits_for_the_gpu(dev):
    # A kernel that spins ~20 ms on the GPU returns to Python at once: a clock read without
    # events or a sync would see microseconds. Within 15 % of the kernel's calibrated duration.
    def run(seed):
        cycles = sleep_cycles_for(0.02, dev)
        known = spin_seconds(cycles, dev)
        return cu.benchmark(lambda: torch.cuda._sleep(cycles), device=dev, min_run_time=0.3), known

    timing, known = retried(run, lambda r: r[0].median_s == pytest.approx(r[1], rel=0.15))
    assert timing.median_s == pytest.approx(known, rel=0.15), (timing, known)


@pytest.mark.clock
def test_compare_recovers_a_known_ratio(dev):
    # Two arms of known cost, 4 ms and 8 ms of GPU spin: the speed-up is 2 within a few percent, and
    # its interval holds 2. An engine that timed the launches (no events) would see a ratio near 1.
    def run(seed):
        c4, c8 = sleep_cycles_for(0.004, dev), sleep_cycles_for(0.008, dev)
        return cu.compare(lambda: torch.cuda._sleep(c8), lambda: torch.cuda._sleep(c4), names=("8 ms", "4 ms"),
                          budget=3, device=dev, seed=seed)

    result = retried(run, lambda r: r.verdict == "faster" and r.speedup == pytest.approx(2.0, rel=0.05)
                     and r.ci[0] <= 2.0 * 1.02 and r.ci[1] >= 2.0 / 1.02)
    assert result.verdict == "faster", result
    assert result.speedup == pytest.approx(2.0, rel=0.05), result
    assert result.ci[0] <= 2.0 * 1.02 and result.ci[1] >= 2.0 / 1.02, result


@pytest.mark.clock
def test_train_step_times_match_a_known_cost(dev):
    # Each step spins ~10 ms on the GPU before a tiny model's step: the device clock of cu.train must
    # say about 10 ms a step (events around each step, read at the end), and the host clock must add
    # up to the elapsed time. A host clock without a sync would read the launch time (microseconds).
    cycles = sleep_cycles_for(0.01, dev)
    known = spin_seconds(cycles, dev)
    model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10)).to(dev)
    batches = [(torch.randn(64, 32, device=dev), torch.randint(0, 10, (64,), device=dev)) for _ in range(4)]

    def slow_step(*args, **kwargs):
        torch.cuda._sleep(cycles)
        return cu.train_step(*args, **kwargs)

    cu.train(model, batches, steps=3, step_fn=slow_step, device=dev, progress=False)  # warm-up

    def run(seed):
        t0 = time.perf_counter()
        history = cu.train(model, batches, steps=20, step_fn=slow_step, device=dev, progress=False)
        return history, time.perf_counter() - t0

    def matches(r):
        history, elapsed = r
        step = statistics.median(history.step_time)
        return (0.97 * known <= step < known * 1.25 + 0.002
                and sum(history.host_step_time) == pytest.approx(elapsed, rel=0.1, abs=0.01)
                and sum(history.host_step_time) >= 20 * known * 0.95)

    history, elapsed = retried(run, matches)
    step = statistics.median(history.step_time)
    assert 0.97 * known <= step < known * 1.25 + 0.002, (step, known)
    assert sum(history.host_step_time) == pytest.approx(elapsed, rel=0.1, abs=0.01)
    assert sum(history.host_step_time) >= 20 * known * 0.95, "the host clock stopped before the GPU finished"


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
@pytest.mark.clock
def test_event_timing_on_the_given_device_not_the_current_one():
    other = torch.device("cuda", 1)
    cycles = sleep_cycles_for(0.02, other)
    torch.cuda.set_device(0)

    def spin_on_gpu1():
        with torch.cuda.device(other):
            torch.cuda._sleep(cycles)

    known = spin_seconds(cycles, other)
    timing = retried(lambda s: cu.benchmark(spin_on_gpu1, device=other, min_run_time=0.3),
                     lambda t: t.median_s == pytest.approx(known, rel=0.2))
    # events recorded on the current device (GPU 0) would time nothing of GPU 1's work
    assert timing.median_s == pytest.approx(known, rel=0.2), (timing, known)
    assert torch.cuda.current_device() == 0, "benchmark() left another device current"
    result = retried(lambda s: cu.compare(spin_on_gpu1, lambda: None, names=("spin on GPU 1", "nothing"), budget=2,
                                          device=other, seed=s),
                     lambda r: r.verdict == "faster" and r.speedup > 10)
    assert result.verdict == "faster" and result.speedup > 10, result


@pytest.mark.clock
def test_matmul_timing_and_a_twice_slower_trick(dev):
    a, b = torch.randn(2048, 2048, device=dev), torch.randn(2048, 2048, device=dev)

    def work(n):
        def fn():
            for _ in range(n):
                a @ b
        return fn

    timing = retried(lambda s: cu.benchmark(work(4), device=dev, min_run_time=0.3), lambda t: 1e-6 < t.median_s < 1.0)
    assert 1e-6 < timing.median_s < 1.0, timing
    result = retried(lambda s: cu.compare(work(4), work(8), names=("4 matmuls", "8 matmuls"), budget=6, device=dev,
                                          seed=s),
                     lambda r: r.verdict == "slower" and 0.0 < r.speedup < 1.0)
    assert result.verdict == "slower", result
    assert 0.0 < result.speedup < 1.0


def test_peak_memory_counts_what_fn_adds_not_what_was_resident(dev):
    def fn():
        x = torch.ones(64 * MIB // 4, device=dev)  # 64 MiB of float32
        return x.sum()

    fn()  # warm-up: the reduction's own buffers
    alone = cu.peak_memory_stats(fn, dev)
    resident = torch.empty(256 * MIB, dtype=torch.uint8, device=dev)
    beside = cu.peak_memory_stats(fn, dev)
    assert alone.peak_bytes >= 64 * MIB and beside.peak_bytes >= 64 * MIB
    assert abs(beside.peak_bytes - alone.peak_bytes) <= MIB, (alone, beside)
    assert beside.start_bytes - alone.start_bytes >= 256 * MIB
    assert beside.reserved_bytes >= beside.start_bytes + beside.peak_bytes
    assert cu.peak_memory(fn, "cuda") == cu.peak_memory(fn, dev)
    del resident


def grad_norm(model):
    return torch.linalg.vector_norm(torch.stack([p.grad.float().norm() for p in model.parameters()])).item()


def test_fp16_step_with_grad_scaler_unscales_before_clipping(dev):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    X, y = torch.randn(512, 64, device=dev) * 10, torch.randint(0, 10, (512,), device=dev)
    reference = copy.deepcopy(model)
    F.cross_entropy(reference(X), y).backward()
    max_norm = grad_norm(reference) / 4  # the true gradient is 4× over the limit: clipping acts
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0**10)
    loss = cu.train_step(model, (X, y), opt, amp_dtype=torch.float16, scaler=scaler, clip_grad_norm=max_norm)
    assert torch.isfinite(loss) and scaler.get_scale() == 2.0**10, "the step overflowed and was skipped"
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())
    # Unscaled, then clipped: the norm is the limit. Clipped while still scaled, it would be
    # limit / 1024 after unscaling.
    assert grad_norm(model) == pytest.approx(max_norm, rel=0.02)
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before)), "the optimizer did not step"


def test_bf16_detection_agrees_with_the_capability(dev):
    capability = torch.cuda.get_device_capability(dev)
    record = cu.env.environment_record(dev)
    assert record["gpu_capability"] == f"{capability[0]}.{capability[1]}"
    assert record["bf16_real"] is (capability >= (8, 0))
    assert record["bf16_real"] is torch.cuda.is_bf16_supported(including_emulation=False)
    assert cu.pick_amp_dtype(dev) == (torch.bfloat16 if capability >= (8, 0) else torch.float16)
    assert record["gpu_memory"] == torch.cuda.get_device_properties(dev).total_memory
    assert record["gpu_count"] == torch.cuda.device_count()
    if not torch.version.hip:
        assert record["driver"], "no NVIDIA driver version (NVML or nvidia-smi)"
    count = torch.cuda.device_count()
    name = re.sub(r"[^a-z0-9]+", "-", record["gpu_name"].lower()).strip("-")
    assert cu.env.machine_id(record).removeprefix(f"{count}x-" if count > 1 else "").startswith(name)
    with cu.env.autocast(dev, torch.bfloat16):
        assert (torch.ones(8, 8, device=dev) @ torch.ones(8, 8, device=dev)).dtype == torch.bfloat16


def test_choose_device_honours_local_rank_on_this_gpu(monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", str(torch.cuda.device_count() - 1))
    assert cu.choose_device() == torch.device("cuda", torch.cuda.device_count() - 1)
    monkeypatch.setenv("LOCAL_RANK", str(torch.cuda.device_count()))
    with pytest.raises(ValueError, match="CUDA device"):
        cu.choose_device()


@pytest.mark.parametrize("amp_dtype", [None, torch.bfloat16], ids=["fp32", "bf16"])
def test_train_makes_no_host_sync_between_steps(dev, amp_dtype):
    if amp_dtype is torch.bfloat16 and torch.cuda.get_device_capability(dev) < (8, 0):
        pytest.skip("bf16 needs sm_80")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(dev)
    batches = [(torch.randn(128, 32, device=dev), torch.randint(0, 10, (128,), device=dev)) for _ in range(4)]
    steps, calls = 40, []

    def step(*args, **kwargs):
        # From the first step to the last, any synchronising CUDA call (an .item(), a blocking
        # copy, an event read, a device sync) raises: the loop must queue step after step.
        calls.append(1)
        torch.cuda.set_sync_debug_mode("error")
        try:
            return cu.train_step(*args, **kwargs)
        finally:
            if len(calls) == steps:
                torch.cuda.set_sync_debug_mode(0)  # the end of the run reads the times: allowed

    try:
        history = cu.train(model, batches, steps=steps, step_fn=step, device=dev, amp_dtype=amp_dtype,
                           label="sync check")
    except RuntimeError as e:
        pytest.fail(f"train() synchronised with the GPU between steps: {e}")
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert len(calls) == steps and history.steps == steps
    assert len(history.step_time) == steps and all(t > 0 for t in history.step_time)


class Spy:
    """An iterable over ``loader`` that records whether each batch it hands out is in pinned memory."""

    def __init__(self, loader):
        self.loader, self.pinned = loader, []

    def __iter__(self):
        for X, y in self.loader:
            self.pinned.append(X.is_pinned() and y.is_pinned())
            yield X, y


def test_dataloader_workers_with_pinned_memory_through_train(dev):
    # Two worker processes, pinned batches, non_blocking copies: the trained weights must equal those
    # of the same batches handed over on the GPU already (no batch lost, reordered or used before its
    # copy finished), and every batch must have arrived pinned.
    torch.manual_seed(0)
    X, y = torch.randn(1024, 64), torch.randint(0, 10, (1024,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=128, shuffle=False,
                                         num_workers=2, pin_memory=True, persistent_workers=False)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    twin = copy.deepcopy(model)
    spy = Spy(loader)
    steps = 20  # 2.5 epochs: the loader is cycled epoch after epoch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DataLoader's notes about worker processes
        history = cu.train(model, spy, steps=steps, device=dev, lr=0.05, progress=False)
    on_gpu = [(X[i:i + 128].to(dev), y[i:i + 128].to(dev)) for i in range(0, 1024, 128)]
    reference = cu.train(twin, on_gpu, steps=steps, device=dev, lr=0.05, progress=False)
    assert history.steps == steps and len(spy.pinned) >= steps and all(spy.pinned), spy.pinned
    assert all(t >= 0 for t in history.data_time) and len(history.data_time) == steps
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
    assert history.loss == pytest.approx(reference.loss, rel=1e-4, abs=1e-5)


def test_batches_make_no_host_sync_across_epochs(dev):
    # A Dataset on the GPU: cu.train samples its batches with cu.data.loaders.batches, three epochs here;
    # a permutation copied from pageable CPU memory per epoch would be a sync (an error in this mode).
    g = torch.Generator().manual_seed(0)
    data = cu.Dataset("synthetic", torch.randn(512, 1, 8, 8, generator=g), torch.randint(0, 10, (512,), generator=g),
                      torch.randn(64, 1, 8, 8, generator=g), torch.randint(0, 10, (64,), generator=g),
                      tuple(str(i) for i in range(10))).to(dev)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 10)).to(dev)
    stream = cu.batches(data.X_train, data.y_train, 128, seed=0)
    Xb, yb = next(stream)  # the first epoch's set-up and one step (cuBLAS handles, autograd), outside the check
    F.cross_entropy(model(Xb), yb).backward()
    torch.cuda.synchronize(dev)
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3 * 4):
            Xb, yb = next(stream)
            F.cross_entropy(model(Xb), yb).backward()
    except RuntimeError as e:
        pytest.fail(f"batches() synchronised with the GPU: {e}")
    finally:
        torch.cuda.set_sync_debug_mode(0)


def test_out_of_memory_is_recovered_and_the_memory_returned(dev):
    # The step holds 256 MiB, then asks for more than the GPU has: fits() must say "does not fit" and
    # return the 256 MiB to the driver (the exception, which references the step's frame, is dropped
    # before the cache is emptied). Afterwards a step that fits runs.
    from course_utils.counters.memory import fits

    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved(dev)
    total = torch.cuda.get_device_properties(dev).total_memory

    def too_big():
        held = torch.empty(256 * MIB, dtype=torch.uint8, device=dev)
        huge = torch.empty(2 * total, dtype=torch.uint8, device=dev)
        return held, huge

    assert fits(too_big) is False
    assert torch.cuda.memory_reserved(dev) <= before + 8 * MIB, "the failed step's memory was kept"
    assert fits(lambda: torch.ones(MIB, device=dev).sum().item()) is True


@pytest.mark.parametrize("message", [
    "cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
    "GET was unable to find an engine to execute this computation",
    "FIND was unable to find an engine to execute this computation",  # what cudnn.benchmark = True reports
])
def test_cudnn_out_of_memory_is_recovered_too(dev, message):
    # Near a memory cap cuDNN reports an out-of-memory as a plain RuntimeError: simulated here by a
    # step that holds 256 MiB on the GPU and then raises what cuDNN raises. It counts as "does not
    # fit", and the memory comes back. A RuntimeError that only mentions memory must propagate.
    from course_utils.counters.memory import fits, is_out_of_memory

    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    before = torch.cuda.memory_reserved(dev)

    def cudnn_fails():
        held = torch.empty(256 * MIB, dtype=torch.uint8, device=dev)
        raise RuntimeError(message + f" (holding {held.numel()} bytes)")

    assert is_out_of_memory(RuntimeError(message))
    assert fits(cudnn_fails) is False
    assert torch.cuda.memory_reserved(dev) <= before + 8 * MIB, "the failed step's memory was kept"

    def illegal_access():
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    with pytest.raises(RuntimeError, match="illegal memory access"):
        fits(illegal_access)


def test_a_real_cudnn_convolution_fits_under_a_cap_or_reports_out_of_memory(dev):
    # The real thing, under a memory cap: a conv step either fits or fails with one of the two kinds
    # (never another error), and after the cap is lifted the same step runs.
    from course_utils.counters.memory import fits, memory_cap

    conv = nn.Conv2d(64, 64, 3, padding=1).to(dev)
    x = torch.randn(512, 64, 56, 56, device=dev)  # 392 MiB of input: more than the cap allows

    def step():
        conv(x).sum().backward()

    with memory_cap(64 * MIB, dev):
        assert fits(step) is False
    assert fits(step) is True


def test_a_capped_search_with_cudnn_benchmark_on_says_does_not_fit(dev):
    # With cudnn.benchmark = True, cuDNN tries every algorithm (FIND) and, near a cap, reports "FIND was unable to
    # find an engine": a capped search must read that as "does not fit", not crash. The input is sized so that it
    # fits the cap while the algorithms' workspaces mostly do not; either kind of out-of-memory is accepted.
    from course_utils.counters.memory import fits, memory_cap

    conv = nn.Conv2d(64, 64, 3, padding=1).to(dev)
    x = torch.randn(64, 64, 56, 56, device=dev)  # 49 MiB
    saved = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = True
    try:
        with memory_cap(96 * MIB, dev):
            fitted = fits(lambda: conv(x).sum().backward())  # True or False, never an exception
        assert fitted in (True, False)
        assert fits(lambda: conv(x[:2]).sum().backward()) is True
    finally:
        torch.backends.cudnn.benchmark = saved


@pytest.mark.clock
def test_profiler_table_shows_the_gpu_time(dev):
    # A step that spins ~5 ms on the GPU: the table must have CUDA columns and a total self CUDA time
    # of at least the spin (the profiler saw the kernels and the step was synchronised before it
    # stopped), with the matmul's row among them.
    cycles = sleep_cycles_for(0.005, dev)
    known = spin_seconds(cycles, dev)
    a = torch.randn(1024, 1024, device=dev)

    def step():
        torch.cuda._sleep(cycles)
        return a @ a

    def total_s(table):
        m = re.search(r"Self (?:CUDA|cuda|Device|DEVICE) time total:\s*([\d.]+)\s*(us|ms|s)", table)
        return float(m[1]) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m[2]] if m else 0.0

    table = retried(lambda s: cu.profile_table(step, device=dev, row_limit=50), lambda t: total_s(t) >= 0.9 * known)
    assert re.search(r"Self (CUDA|cuda|Device)", table), table
    m = re.search(r"Self (?:CUDA|cuda|Device|DEVICE) time total:\s*([\d.]+)\s*(us|ms|s)", table)
    assert m, table
    seconds = float(m[1]) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[m[2]]
    assert seconds >= 0.9 * known, (seconds, known, table)
    assert "aten::mm" in table or "aten::matmul" in table, table


def test_the_capstone_scripts_run_on_cuda(dev, tmp_path, monkeypatch):
    # the naive script (PNG files, anomaly detection, .item() each step) and the stack (decoded on the GPU,
    # bf16 or fp16 with a GradScaler by capability, workers and pinned memory) reach a low target; a stacked
    # step runs on the GPU; the test set is evaluated once, after the validation stop
    monkeypatch.setenv("COURSE_DATA", str(tmp_path))
    prepared = cu.capstone.prepare("digits", "smoke", verbose=False)
    config = cu.capstone.fast_config(cu.capstone.DeviceInfo.here(dev))
    assert config.amp_dtype in (torch.float16, torch.bfloat16) and config.pin_memory
    for stack in (cu.capstone.Stack.naive(), cu.capstone.Stack.full()):
        r = cu.capstone.run_once(stack, prepared, seed=0, config=config, device=dev, target=0.3)
        assert r.time_to_target is not None and r.step_s is not None, r.summary()
        assert [e["event"] for e in r.log][-3:] == ["stop", "eval", "end"], r.log
    step = cu.capstone.stepper(cu.capstone.Stack.full(), prepared, config=config, device=dev)
    loss = step()
    assert loss.device.type == "cuda" and torch.isfinite(loss)
