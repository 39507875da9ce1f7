"""The CUDA paths, on a real GPU: event timing, peak memory, fp16 with a GradScaler, bf16, no per-step sync.

Skipped as a whole without CUDA (the branch logic is tested on the CPU with faked capabilities in
test_env.py and test_memory.py). About a minute on one GPU: `pytest tests/test_gpu.py`.
"""

import copy
import re
import time

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import course_utils as cu

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

MIB = 2**20


@pytest.fixture(scope="module")
def dev():
    return torch.device("cuda", torch.cuda.current_device())


def sleep_cycles_for(seconds, device):
    """GPU clock cycles that ``torch.cuda._sleep`` spins for about ``seconds`` on ``device``."""
    with torch.cuda.device(device):
        torch.cuda._sleep(20_000_000)  # let the clocks ramp up first
        torch.cuda.synchronize()
        cycles = 20_000_000
        t0 = time.perf_counter()
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()
        per_second = cycles / (time.perf_counter() - t0)
    return int(per_second * seconds)


def test_event_timing_waits_for_the_gpu(dev):
    # A kernel that spins ~20 ms on the GPU returns to Python at once: a clock read without
    # events or a sync would see microseconds.
    cycles = sleep_cycles_for(0.02, dev)
    timing = cu.benchmark(lambda: torch.cuda._sleep(cycles), device=dev, min_run_time=0.3)
    assert 0.005 < timing.median_s < 0.1, timing


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_event_timing_on_the_given_device_not_the_current_one():
    other = torch.device("cuda", 1)
    cycles = sleep_cycles_for(0.02, other)
    torch.cuda.set_device(0)

    def spin_on_gpu1():
        with torch.cuda.device(other):
            torch.cuda._sleep(cycles)

    timing = cu.benchmark(spin_on_gpu1, device=other, min_run_time=0.3)
    assert 0.005 < timing.median_s < 0.1, timing


def test_matmul_timing_and_a_twice_slower_trick(dev):
    a, b = torch.randn(2048, 2048, device=dev), torch.randn(2048, 2048, device=dev)

    def work(n):
        def fn():
            for _ in range(n):
                a @ b
        return fn

    timing = cu.benchmark(work(4), device=dev, min_run_time=0.3)
    assert 1e-6 < timing.median_s < 1.0, timing
    result = cu.compare(work(4), work(8), names=("4 matmuls", "8 matmuls"), budget=6, device=dev)
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
    record = cu.environment_record(dev)
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
