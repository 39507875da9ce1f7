"""What this machine is and can do: CPU model and features, real bf16, memory, GPU driver, id.

Every function reads the machine only when called (nothing on import), and the decisions that
depend on a GPU take the capability or the record as an argument, so they are tested on a CPU
with a faked capability.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from typing import Any

import torch

__all__ = [
    "cpu_bf16_support",
    "cpu_features",
    "cpu_name",
    "cuda_capability",
    "machine_id",
    "nvidia_driver_version",
    "pick_amp_dtype",
    "ram_bytes",
    "tf32_flags",
    "torch_floor_problem",
    "usable_cpus",
]

#: x86 flags (``/proc/cpuinfo`` "flags") of instructions that compute bf16 at full speed.
X86_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def _run(cmd: list[str], timeout: float = 5.0) -> str | None:
    """Return the stdout of ``cmd`` stripped, or None when it is missing, fails or times out."""
    if shutil.which(cmd[0]) is None:
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _sysctl(name: str) -> str | None:
    """A macOS ``sysctl -n`` value, or None elsewhere."""
    return _run(["sysctl", "-n", name], timeout=2.0) if platform.system() == "Darwin" else None


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def cpu_features(cpuinfo: str | None = None) -> set[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (x86 "flags", ARM "Features" lines).

    Args:
        cpuinfo: the text of ``/proc/cpuinfo``; read from the machine when None.

    Returns:
        The lower-case flag names; empty where there is no ``/proc/cpuinfo`` (macOS, Windows).
    """
    text = _read("/proc/cpuinfo") if cpuinfo is None else cpuinfo
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return {flag.lower() for flag in value.split()}
    return set()


def cpu_bf16_support(features: set[str] | None = None, *, machine: str | None = None,
                     apple_feat_bf16: str | None = None) -> bool:
    """Whether the CPU computes bf16 in hardware rather than emulating it.

    x86: AVX512-BF16 or AMX (``avx512_bf16`` / ``amx_bf16`` flags). ARM (aarch64, e.g. Graviton3,
    Neoverse V1/V2, Grace): the Armv8.6 ``bf16`` feature. Apple silicon: ``sysctl
    hw.optional.arm.FEAT_BF16`` is 1 (M2 and later). Without these, bf16 autocast still runs
    but converts to fp32 and back around every op, and is slower than fp32.

    Args:
        features: CPU flags as from :func:`cpu_features`; read from the machine when None.
        machine: ``platform.machine()`` (``"x86_64"``, ``"aarch64"``, ``"arm64"``); the
            machine's own when None.
        apple_feat_bf16: the value of ``sysctl -n hw.optional.arm.FEAT_BF16``; read on macOS
            when None.

    Returns:
        True for real bf16 instructions, False otherwise (including when it cannot be told).
    """
    machine = (machine or platform.machine()).lower()
    if features is None:
        features = cpu_features()
    if machine in ("x86_64", "amd64", "i386", "i686", "x86"):
        return bool(features & X86_BF16_FLAGS)
    if machine in ("aarch64", "arm64") or machine.startswith("arm"):
        if "bf16" in features:
            return True
        if apple_feat_bf16 is None:
            apple_feat_bf16 = _sysctl("hw.optional.arm.FEAT_BF16")
        return (apple_feat_bf16 or "").strip() == "1"
    return False


def cpu_name() -> str:
    """The CPU model: ``/proc/cpuinfo``, ``lscpu`` (ARM Linux), ``sysctl`` (macOS), else the arch."""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    if platform.system() == "Darwin":
        name = _sysctl("machdep.cpu.brand_string")  # "Apple M2 Pro"
        if name:
            return name
    if platform.system() == "Linux":
        for line in (_run(["lscpu"], timeout=2.0) or "").splitlines():
            if line.startswith("Model name:") and line.split(":", 1)[1].strip() not in ("", "-"):
                return line.split(":", 1)[1].strip()  # e.g. "Neoverse-V1" on Graviton3
    return platform.processor() or platform.machine() or "unknown"


def usable_cpus() -> int:
    """CPUs this process may run on (``sched_getaffinity``), which a container may limit."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def ram_bytes() -> int | None:
    """Total physical memory in bytes, or None when it cannot be read."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        value = _sysctl("hw.memsize")
        return int(value) if value and value.isdigit() else None


def nvidia_driver_version() -> str | None:
    """The NVIDIA driver version (``"550.54.15"``) from NVML, else ``nvidia-smi``; None if absent."""
    try:
        import pynvml  # shipped as nvidia-ml-py; torch uses it when present

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # no NVML, no driver, or an old binding: try nvidia-smi
        pass
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.splitlines()[0].strip() if out else None


def cuda_capability(device: torch.device | str | None = None) -> tuple[int, int]:
    """The compute capability ``(major, minor)`` of a CUDA device (the current one when None).

    Raises:
        RuntimeError: CUDA is not available.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("cuda_capability needs a CUDA device, and CUDA is not available here")
    major, minor = torch.cuda.get_device_capability(device)
    return int(major), int(minor)


def pick_amp_dtype(device: torch.device | str, capability: tuple[int, int] | None = None,
                   bf16_real: bool | None = None) -> torch.dtype | None:
    """The autocast dtype worth training in on ``device``, or None to stay in fp32.

    The rule of lesson 04: CUDA from sm_80 (Ampere) on has real bf16, which needs no
    GradScaler, so bf16; older CUDA GPUs (T4, V100) get fp16 with a GradScaler; Apple GPUs
    (MPS) fp16; a CPU bf16 only with real bf16 instructions (:func:`cpu_bf16_support`), else
    None; any other device None.

    Args:
        device: the device trained on.
        capability: the CUDA compute capability; asked of ``device`` when None on CUDA. Pass it
            to decide for a GPU that is not here (tests fake a T4 with ``(7, 5)``).
        bf16_real: whether the CPU has real bf16; detected when None on the CPU.

    Returns:
        ``torch.bfloat16``, ``torch.float16`` or None.
    """
    device = torch.device(device)
    if device.type == "cuda":
        major, minor = capability if capability is not None else cuda_capability(device)
        return torch.bfloat16 if (int(major), int(minor)) >= (8, 0) else torch.float16
    if device.type == "mps":
        return torch.float16
    if device.type == "cpu":
        return torch.bfloat16 if (cpu_bf16_support() if bf16_real is None else bf16_real) else None
    return None


def tf32_flags() -> dict[str, Any]:
    """TF32 for matmuls and for cuDNN convolutions, and the float32 matmul precision, as in force now.

    From torch 2.9 on, TF32 is set per backend with ``fp32_precision`` (``"ieee"``, ``"tf32"``, or
    ``"none"``: the parent's setting), and once anyone has used that API, reading the legacy flags
    (``allow_tf32``, ``get_float32_matmul_precision()``) raises "mix of the legacy and new APIs". So
    the new API is read where it exists (it also reflects legacy writes); older torch has only the
    legacy flags.
    """
    b = torch.backends
    matmul = getattr(b.cuda.matmul, "fp32_precision", None)
    if matmul is None:  # torch < 2.9
        return {"tf32_matmul": bool(b.cuda.matmul.allow_tf32), "tf32_cudnn": bool(b.cudnn.allow_tf32),
                "float32_matmul_precision": torch.get_float32_matmul_precision()}

    def resolve(*levels: str | None) -> str:
        return next((v for v in levels if v not in (None, "none")), "ieee")

    top = getattr(b, "fp32_precision", None)
    mm = resolve(matmul, top)
    conv = resolve(getattr(getattr(b.cudnn, "conv", None), "fp32_precision", None),
                   getattr(b.cudnn, "fp32_precision", None), top)
    try:
        precision = torch.get_float32_matmul_precision()
    except RuntimeError:  # the new API was used: the legacy name of what it set
        precision = "high" if mm == "tf32" else "highest"
    return {"tf32_matmul": mm == "tf32", "tf32_cudnn": conv == "tf32", "float32_matmul_precision": precision}


#: The oldest torch each device type runs every lesson on (pyproject.toml and the README say the same; `make compat`
#: tests the CPU/CUDA floor). MPS: autocast and fused Adam from 2.5, GradScaler's kernels and inductor from 2.8.
TORCH_FLOOR: dict[str, tuple[int, int]] = {"cpu": (2, 5), "cuda": (2, 5), "mps": (2, 8)}


def torch_floor_problem(device_type: str, version: str | None = None) -> str | None:
    """One line when this torch is older than what ``device_type`` needs for every lesson, else None."""
    version = version or torch.__version__
    have = tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0])[:2])
    need = TORCH_FLOOR.get(device_type)
    if need is None or have >= need:
        return None
    why = (" (mixed precision with GradScaler, fused Adam and torch.compile need it: lessons 04, 05, 14, 18 and 19 "
           "stop at those parts)" if device_type == "mps" else "")
    return (f"torch {version} is older than this course needs on {device_type}: torch >= {need[0]}.{need[1]}{why}; "
            "upgrade with `pip install -U torch torchvision`")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")


def _gib(n: Any) -> str:
    return f"{round(n / 2**30)}gb" if isinstance(n, (int, float)) and n > 0 else ""


def machine_id(record: dict[str, Any]) -> str:
    """A readable folder name for the hardware of an environment record.

    Two machines get the same id only when the measurement would see the same hardware:
    CUDA: GPU count (when above one), GPU name and memory (``nvidia-h200-140gb``,
    ``2x-nvidia-a100-sxm4-80gb``); MPS: ``mps-`` with the chip, cores and memory
    (``mps-apple-m2-pro-12c-32gb``); CPU: ``cpu-`` with the model, the CPUs this process may use
    and the memory (``cpu-amd-epyc-7b13-2c-24gb``). Older records without a field get the id
    without it.

    Args:
        record: an environment record from :func:`course_utils.env.environment_record`.

    Returns:
        Lower-case letters, digits and dashes.
    """
    device = record.get("device") or "cpu"
    if device == "cuda" and record.get("gpu_name"):
        name = _slug(record["gpu_name"])
        memory = _gib(record.get("gpu_memory"))
        if memory and not re.search(rf"(^|-){memory}($|-)", name):
            name = f"{name}-{memory}"
        count = record.get("gpu_count") or 1
        return f"{count}x-{name}" if count > 1 else name
    cores = record.get("cpus_usable") or record.get("cpu_count")
    parts = [device, _slug(record.get("cpu") or "unknown"), f"{cores}c" if cores else "",
             _gib(record.get("ram"))]
    return "-".join(p for p in parts if p)
