import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import course_utils as cu
from course_utils import hardware


def test_invalid_profile_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "turbo")
    with pytest.raises(ValueError, match="turbo.*smoke, cpu, gpu"):
        cu.env.get_profile()
    with pytest.raises(ValueError, match="smoke, cpu, gpu"):
        cu.setup(verbose=False)


def test_profile_rules(monkeypatch):
    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert cu.env.get_profile() == "smoke"
    monkeypatch.delenv("NBGRADER_EXECUTION")
    assert cu.env.get_profile(torch.device("cpu")) == "cpu"
    monkeypatch.setenv("COURSE_PROFILE", "gpu")
    assert cu.env.get_profile(torch.device("cpu")) == "gpu"


def test_setup_seeds_and_prints_the_record(capsys):
    env = cu.setup(seed=3)
    out = capsys.readouterr().out
    a = torch.rand(3)
    cu.setup(seed=3, verbose=False)
    assert torch.equal(a, torch.rand(3))
    assert env.profile == "smoke" and env.device.type == "cpu"
    for key in ("profile", "device", "torch", "TF32", "real bf16", "Colab", "threads"):
        assert key in out
    rec = env.record
    for key in ("gpu_name", "gpu_capability", "cuda", "cudnn", "cpu_count", "torch_threads",
                "tf32_matmul", "tf32_cudnn", "bf16_real", "colab"):
        assert key in rec
    assert rec["torch"] == torch.__version__ and rec["torch_threads"] == torch.get_num_threads()
    assert env.pick(smoke=1, cpu=2, gpu=3) == 1


def test_set_threads_sets_and_records(capsys):
    env = cu.setup(verbose=False)
    before = torch.get_num_threads()
    try:
        env.set_threads(1)
        assert torch.get_num_threads() == 1 and env.record["torch_threads"] == 1
        assert "torch threads set to 1" in capsys.readouterr().out
        with pytest.raises(ValueError, match=">= 1"):
            env.set_threads(0)
    finally:
        torch.set_num_threads(before)


def test_setup_pins_cpu_threads_on_a_cpu_and_says_so(capsys):
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        env = cu.setup(cpu_threads=1)
        out = capsys.readouterr().out
        assert torch.get_num_threads() == 1 and env.record["torch_threads"] == 1
        assert "torch threads 1" in out and "torch threads set to 1" in out  # the record printed shows the count used
        torch.set_num_threads(2)
        assert cu.setup(verbose=False).record["torch_threads"] == 2 == torch.get_num_threads()  # None: torch's count
        for bad, error in ((0, ValueError), (True, TypeError), (1.0, TypeError)):
            with pytest.raises(error, match="cpu_threads"):
                cu.setup(cpu_threads=bad, verbose=False)
        assert torch.get_num_threads() == 2  # refused before anything changed
    finally:
        torch.set_num_threads(before)


def test_setup_leaves_the_thread_count_alone_on_a_gpu(monkeypatch):
    fake_cuda(monkeypatch, count=1)
    monkeypatch.setattr(cu.env, "choose_device", lambda: torch.device("cuda"))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        env = cu.setup(cpu_threads=1, verbose=False)
        assert env.device.type == "cuda" and torch.get_num_threads() == 2 and env.record["torch_threads"] == 2
    finally:
        torch.set_num_threads(before)

# --- device choice, synchronisation and autocast, with CUDA and MPS faked on the CPU ---

def fake_cuda(monkeypatch, count=2, capability=(8, 0), name="NVIDIA A100-SXM4-80GB", memory=80 * 2**30):
    props = SimpleNamespace(name=name, major=capability[0], minor=capability[1], total_memory=memory)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)
    monkeypatch.setattr(hardware, "nvidia_driver_version", lambda: "550.54.15")


def test_choose_device_honours_local_rank(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fake_cuda(monkeypatch, count=2)
    assert cu.choose_device() == torch.device("cuda")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert cu.choose_device() == torch.device("cuda", 1)
    monkeypatch.setenv("LOCAL_RANK", "2")
    with pytest.raises(ValueError, match=r"LOCAL_RANK=2 but only 2 CUDA device\(s\) are visible"):
        cu.choose_device()
    monkeypatch.setenv("LOCAL_RANK", "first")
    with pytest.raises(ValueError, match="'first' is not a whole number"):
        cu.choose_device()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert cu.choose_device().type in ("cpu", "mps")  # LOCAL_RANK is about GPUs only


def test_synchronize_waits_on_the_device_it_is_given(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(("cuda", device)))
    monkeypatch.setattr(torch.mps, "synchronize", lambda: calls.append(("mps", None)))
    cu.env.synchronize("cpu")
    assert calls == []
    cu.env.synchronize("cuda:1")
    cu.env.synchronize(torch.device("mps"))
    assert calls == [("cuda", torch.device("cuda", 1)), ("mps", None)]


def test_autocast_builds_nothing_without_a_dtype():
    assert isinstance(cu.env.autocast("cpu", None), contextlib.nullcontext)
    assert isinstance(cu.env.autocast(torch.device("mps"), torch.float32), contextlib.nullcontext)
    with cu.env.autocast(torch.device("cpu"), torch.bfloat16):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    with pytest.raises(ValueError, match="torch.float16, torch.bfloat16 or None.*torch.int8"):
        cu.env.autocast("cpu", torch.int8)


@pytest.mark.parametrize(("capability", "expected"), [
    ((5, 2), torch.float16), ((6, 1), torch.float16), ((7, 0), torch.float16), ((7, 5), torch.float16),
    ((8, 0), torch.bfloat16), ((8, 6), torch.bfloat16), ((8, 9), torch.bfloat16), ((9, 0), torch.bfloat16),
    ((10, 0), torch.bfloat16), ((12, 1), torch.bfloat16),
])
def test_amp_dtype_follows_the_compute_capability(capability, expected):
    # Lesson 04's rule: bf16 from sm_80 (Ampere), fp16 with a GradScaler before.
    assert cu.pick_amp_dtype("cuda", capability) == expected
    assert cu.pick_amp_dtype("cuda:1", capability, bf16_real=False) == expected  # bf16_real is the CPU's


def test_amp_dtype_elsewhere_and_asked_of_the_device(monkeypatch):
    assert cu.pick_amp_dtype("mps") == torch.float16
    assert cu.pick_amp_dtype("cpu", bf16_real=True) == torch.bfloat16
    assert cu.pick_amp_dtype("cpu", bf16_real=False) is None
    assert cu.pick_amp_dtype("meta") is None
    monkeypatch.setattr(hardware, "cpu_bf16_support", lambda: False)
    assert cu.pick_amp_dtype(torch.device("cpu")) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="needs a CUDA device, and CUDA is not available"):
        cu.pick_amp_dtype("cuda")
    fake_cuda(monkeypatch, capability=(7, 5))
    assert cu.pick_amp_dtype("cuda") == torch.float16
    fake_cuda(monkeypatch, capability=(9, 0))
    assert cu.pick_amp_dtype("cuda") == torch.bfloat16


# --- CPU features: real bf16 on x86, ARM Linux and Apple silicon ---

X86_SAPPHIRE_RAPIDS = "processor\t: 0\nmodel name\t: Intel Xeon\nflags\t\t: fpu sse avx2 avx512f avx512_bf16 amx_bf16\n"
X86_SKYLAKE = "processor\t: 0\nmodel name\t: Intel Xeon\nflags\t\t: fpu sse avx2 avx512f avx512_vnni\n"
ARM_GRAVITON3 = ("processor\t: 0\nBogoMIPS\t: 2100.00\n"
                 "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics sve i8mm bf16 svebf16\n"
                 "CPU implementer\t: 0x41\nCPU part\t: 0xd40\n")
ARM_ALTRA = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics asimdrdm lrcpc dcpop\n"


def test_cpu_features_are_read_from_x86_and_arm_cpuinfo():
    assert {"avx512_bf16", "amx_bf16"} <= hardware.cpu_features(X86_SAPPHIRE_RAPIDS)
    assert {"sve", "bf16"} <= hardware.cpu_features(ARM_GRAVITON3)
    assert hardware.cpu_features("") == set()


@pytest.mark.parametrize(("cpuinfo", "machine", "apple", "expected"), [
    (X86_SAPPHIRE_RAPIDS, "x86_64", None, True),
    (X86_SKYLAKE, "x86_64", None, False),
    (X86_SKYLAKE, "AMD64", None, False),
    (ARM_GRAVITON3, "aarch64", "0", True),
    (ARM_ALTRA, "aarch64", "0", False),
    ("", "arm64", "1", True),   # Apple M2 and later: sysctl hw.optional.arm.FEAT_BF16 = 1
    ("", "arm64", "0", False),  # Apple M1
    ("", "riscv64", None, False),
])
def test_cpu_bf16_support(cpuinfo, machine, apple, expected):
    features = hardware.cpu_features(cpuinfo)
    assert hardware.cpu_bf16_support(features, machine=machine, apple_feat_bf16=apple) is expected


# --- the environment record, its rendering, and the machine id ---

def test_record_has_the_new_fields_on_cpu():
    rec = cu.env.environment_record("cpu")
    assert rec["float32_matmul_precision"] == torch.get_float32_matmul_precision()
    assert rec["cudnn_benchmark"] is torch.backends.cudnn.benchmark
    assert rec["cudnn_deterministic"] is torch.backends.cudnn.deterministic
    assert rec["driver"] is None and rec["gpu_memory"] is None and rec["gpu_count"] is None
    assert 1 <= rec["cpus_usable"] <= rec["cpu_count"]
    assert rec["ram"] is None or rec["ram"] > 2**26
    assert rec["bf16_real"] is hardware.cpu_bf16_support()
    json.dumps(rec)
    text = cu.env.format_record(rec)
    for key in ("usable", "RAM", "float32 matmul precision", "benchmark", "deterministic", "machine"):
        assert key in text
    old = {k: rec[k] for k in ("device", "torch", "cuda", "cudnn", "python", "cpu", "cpu_count", "torch_threads",
                               "cpu_capability", "tf32_matmul", "tf32_cudnn", "bf16_real", "colab")}
    assert "float32 matmul precision ?" in cu.env.format_record(old)  # a record saved before these fields


@pytest.mark.parametrize(("capability", "bf16"), [((7, 5), False), ((8, 0), True), ((9, 0), True)])
def test_record_on_a_faked_gpu(monkeypatch, capability, bf16):
    fake_cuda(monkeypatch, count=1, capability=capability, name="Tesla T4", memory=15 * 2**30)
    rec = cu.env.environment_record("cuda")
    assert rec["gpu_capability"] == f"{capability[0]}.{capability[1]}" and rec["gpu_memory"] == 15 * 2**30
    assert rec["driver"] == "550.54.15" and rec["gpu_count"] == 1
    assert rec["bf16_real"] is bf16 and (cu.pick_amp_dtype("cuda") == torch.bfloat16) is bf16
    text = cu.env.format_record(rec)
    assert f"Tesla T4 (sm_{capability[0]}{capability[1]}, 15.0 GiB, driver 550.54.15)" in text
    assert "machine     tesla-t4-15gb" in text


def test_machine_id_tells_machines_apart():
    mid = cu.env.machine_id
    h200 = {"device": "cuda", "gpu_name": "NVIDIA H200", "gpu_memory": 143771 * 2**20, "gpu_count": 1}
    assert mid(h200) == "nvidia-h200-140gb"
    a100_40 = {"device": "cuda", "gpu_name": "NVIDIA A100-SXM4-40GB", "gpu_memory": 40536 * 2**20}
    a100_80 = {"device": "cuda", "gpu_name": "NVIDIA A100-SXM4-80GB", "gpu_memory": 81920 * 2**20}
    assert mid(a100_40) == "nvidia-a100-sxm4-40gb" and mid(a100_80) == "nvidia-a100-sxm4-80gb"
    assert mid({**a100_80, "gpu_count": 8}) == "8x-nvidia-a100-sxm4-80gb"
    mac = {"device": "mps", "cpu": "Apple M2 Pro", "cpu_count": 12, "cpus_usable": 12, "ram": 32 * 2**30}
    assert mid(mac) == "mps-apple-m2-pro-12c-32gb"
    assert mid({**mac, "ram": 16 * 2**30}) != mid(mac)
    assert mid({**mac, "cpu": "Apple M1 Pro"}) != mid(mac)
    cpu = {"device": "cpu", "cpu": "AMD EPYC 7B13", "cpu_count": 64, "cpus_usable": 2, "ram": 24 * 2**30}
    assert mid(cpu) == "cpu-amd-epyc-7b13-2c-24gb"
    assert mid({"device": "cpu", "cpu": "AMD EPYC 7B13", "cpu_count": 2}) == "cpu-amd-epyc-7b13-2c"  # old record
    assert re.fullmatch(r"[a-z0-9-]+", mid(cu.env.environment_record("cpu")))


def test_driver_version_from_nvidia_smi_or_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML binding: fall back to nvidia-smi
    monkeypatch.setattr(hardware, "_run", lambda cmd, timeout=5.0: "550.54.15\n550.54.15")
    assert hardware.nvidia_driver_version() == "550.54.15"
    monkeypatch.setattr(hardware, "_run", lambda cmd, timeout=5.0: None)
    assert hardware.nvidia_driver_version() is None
    assert hardware._run(["surely-no-such-command-here"]) is None


def test_gpu_profile_from_a_cuda_device_string(monkeypatch):
    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert cu.env.get_profile(torch.device("cuda", 1)) == "gpu"
    assert cu.env.get_profile(torch.device("mps")) == "cpu"


@pytest.mark.parametrize("quiet", [False, True])
def test_setup_silences_the_cuda_home_line_of_a_cpu_only_compile(tmp_path, quiet):
    # torch logs it when inductor first loads cpp_extension on a CUDA build without a GPU; the control shows it
    if quiet:
        import importlib.util

        spec = importlib.util.find_spec("torch.utils.cpp_extension")
        if spec and spec.origin and 'print(f"No CUDA runtime' in Path(spec.origin).read_text():
            pytest.skip(f"torch {torch.__version__} prints the line with print(), which no logging filter reaches")
    code = ("import course_utils as cu\n" + ("cu.env.quiet_known_warnings()\n" if quiet else "")
            + "import torch.utils.cpp_extension\n")
    env = {**os.environ, "CUDA_HOME": str(tmp_path), "CUDA_VISIBLE_DEVICES": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert ("No CUDA runtime is found" in out.stderr) is not quiet


@pytest.mark.parametrize("quiet", [False, True])
def test_setup_silences_dynamos_item_graph_break_advice(quiet):
    code = ("import torch, course_utils as cu\n" + ("cu.env.quiet_known_warnings()\n" if quiet else "")
            + "def f(x):\n    return x * 2 if x.sum().item() > 0 else x\n"
            + "out = torch._dynamo.explain(f)(torch.ones(3))\nprint('breaks', out.graph_break_count)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "breaks 1" in out.stdout  # the break is still reported where it is asked for
    assert ("Graph break from `Tensor.item()`" in out.stderr) is not quiet


# --- arguments checked up front, each error naming its argument ---

@pytest.mark.parametrize(("seed", "error"), [("x", TypeError), (True, TypeError), (1.0, TypeError), (None, TypeError),
                                             (-1, ValueError), (2**32, ValueError)])
def test_setup_refuses_a_seed_that_is_not_one(seed, error):
    with pytest.raises(error, match="^seed must be a whole number"):
        cu.setup(seed=seed, verbose=False)
    with pytest.raises(error, match="^seed must be"):
        cu.seed_everything(seed)


def test_setup_takes_numpy_integers_as_seeds():
    import numpy as np

    assert cu.setup(seed=np.int64(7), verbose=False).seed == 7 and cu.env.check_seed(2**32 - 1) == 2**32 - 1


def test_check_device_says_what_this_machine_lacks(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    check = cu.env.check_device
    assert check(None) == torch.device("cpu") and check("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match=re.escape(
            "device='cuda' was asked for, but this machine has no CUDA GPU (torch.cuda.is_available() is False); "
            "leave device=None to use cpu")):
        check("cuda")
    with pytest.raises(ValueError, match=re.escape("trick_device='mps' was asked for, but this machine has no Apple "
                                                   "MPS device (torch.backends.mps.is_available() is False)")):
        check(torch.device("mps"), argument="trick_device")
    with pytest.raises(ValueError, match="device='gpu' names no device"):
        check("gpu")
    with pytest.raises(TypeError, match="device is a device such as"):
        check(1.5)
    fake_cuda(monkeypatch, count=2)
    assert check("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(ValueError, match=re.escape("device='cuda:2' was asked for, but this machine has only 2 "
                                                   "CUDA device(s) visible (cuda:0 to cuda:1); leave device=None "
                                                   "to use cuda")):
        check("cuda:2")


def test_compare_and_benchmark_check_the_device_before_any_call(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    calls = []
    arm = lambda: calls.append(1)  # noqa: E731
    with pytest.raises(ValueError, match=r"device='cuda' was asked for, but this machine has no CUDA GPU"):
        cu.compare(arm, arm, device="cuda")
    with pytest.raises(ValueError, match=r"device='cuda' was asked for"):
        cu.benchmark(arm, device="cuda")
    assert calls == [], "nothing ran before the device was checked"


@pytest.mark.parametrize("how", ["legacy", "new"])
def test_setup_reads_tf32_whichever_api_set_it(how):
    # torch >= 2.9: once the new fp32_precision API is used, reading the legacy flags raises "mix of the legacy
    # and new APIs"; the record must read what is in force either way (a fresh interpreter: the flags are global)
    if how == "new" and not hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        pytest.skip(f"torch {torch.__version__} has only the legacy TF32 flags")
    b = "torch.backends"
    setting = (f"{b}.cuda.matmul.allow_tf32 = True; {b}.cudnn.allow_tf32 = False" if how == "legacy"
               else f"{b}.cuda.matmul.fp32_precision = 'tf32'; {b}.cudnn.conv.fp32_precision = 'ieee'")
    code = ("import json, torch, course_utils as cu\n" + setting + "\n"
            "r = cu.env.environment_record(torch.device('cpu'))\n"
            "print(json.dumps([r['tf32_matmul'], r['tf32_cudnn'], r['float32_matmul_precision']]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, False, "high"]


@pytest.mark.parametrize("device, version, problem", [
    ("cpu", "2.5.1+cu121", False), ("cuda", "2.5.0", False), ("cuda", "2.4.1", True), ("cpu", "2.11.0", False),
    ("mps", "2.7.1", True), ("mps", "2.8.0", False), ("xpu", "2.4.0", False),
])
def test_a_torch_below_the_device_s_floor_is_named(device, version, problem):
    said = hardware.torch_floor_problem(device, version)
    assert (said is not None) is problem
    if problem:
        assert version in said and ">= 2." in said and "pip install -U torch" in said


def test_the_floor_is_the_one_pyproject_promises():
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    promised = re.search(r'"torch>=(\d+)\.(\d+)"', pyproject)
    floor = hardware.TORCH_FLOOR
    assert promised and tuple(map(int, promised.groups())) == floor["cuda"] == floor["cpu"]
