"""Device, seeding, run profile and the environment record every notebook prints.

Nothing here runs on import: a notebook calls :func:`setup` once in its setup cell.
"""

from __future__ import annotations

import os
import platform
import random
import sys
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch

__all__ = [
    "PROFILES",
    "Env",
    "choose_device",
    "environment_record",
    "format_record",
    "get_profile",
    "in_colab",
    "seed_everything",
    "setup",
    "synchronize",
]

#: The run profiles, smallest first. ``smoke``: CI and autograding (seconds on 2 CPU cores);
#: ``cpu``: meaningful on a laptop (minutes); ``gpu``: full size, clear effects on a T4 and up.
PROFILES: tuple[str, ...] = ("smoke", "cpu", "gpu")

T = TypeVar("T")


def get_profile(device: torch.device | None = None) -> str:
    """Return the run profile.

    ``COURSE_PROFILE`` wins when set; during nbgrader execution (``NBGRADER_EXECUTION`` set) the
    profile is ``smoke``; otherwise ``gpu`` with CUDA and ``cpu`` without.

    Args:
        device: the device the notebook runs on; chosen with :func:`choose_device` when omitted.

    Returns:
        One of :data:`PROFILES`.

    Raises:
        ValueError: ``COURSE_PROFILE`` is set to something that is not a profile.
    """
    requested = os.environ.get("COURSE_PROFILE", "").strip()
    if requested:
        if requested not in PROFILES:
            raise ValueError(
                f"COURSE_PROFILE={requested!r} is not a valid profile; use one of {', '.join(PROFILES)}"
            )
        return requested
    if os.environ.get("NBGRADER_EXECUTION"):
        return "smoke"
    device = device or choose_device()
    return "gpu" if device.type == "cuda" else "cpu"


def choose_device() -> torch.device:
    """Return the best available device: CUDA, then Apple MPS, then the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int = 0) -> None:
    """Seed Python's, NumPy's and PyTorch's random generators (all devices)."""
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # pragma: no cover - numpy ships with torch's stack
        pass
    torch.manual_seed(seed)  # also seeds every CUDA device


def in_colab() -> bool:
    """Return True when running inside Google Colab."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def synchronize(device: torch.device | str) -> None:
    """Wait until all queued work on ``device`` has finished (a no-op on the CPU)."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def environment_record(device: torch.device | str | None = None) -> dict[str, Any]:
    """Collect what a measurement depends on, as a JSON-serialisable dict.

    Args:
        device: the device measured on; :func:`choose_device` when omitted.

    Returns:
        A dict with the device, GPU name and compute capability, torch/CUDA/cuDNN versions,
        CPU model and count, torch threads, TF32 flags, real bf16 support and whether in Colab.
    """
    device = torch.device(device) if device is not None else choose_device()
    cuda = device.type == "cuda"
    record: dict[str, Any] = {
        "device": device.type,
        "gpu_name": torch.cuda.get_device_name(device) if cuda else None,
        "gpu_capability": ".".join(map(str, torch.cuda.get_device_capability(device))) if cuda else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "python": platform.python_version(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "tf32_cudnn": torch.backends.cudnn.allow_tf32,
        "bf16_real": bool(cuda and torch.cuda.is_bf16_supported(including_emulation=False)),
        "colab": in_colab(),
    }
    if device.type == "cpu":
        # A CPU computes bf16 at full speed only with AVX512-BF16 or AMX; otherwise it emulates.
        record["bf16_real"] = bool(_cpu_flags() & {"avx512_bf16", "amx_bf16"})
    return record


def format_record(record: dict[str, Any]) -> str:
    """Render an environment record as a few readable lines."""
    if record["device"] == "cuda":
        hw = f"{record['gpu_name']} (sm_{record['gpu_capability'].replace('.', '')})"
    else:
        hw = f"{record['device'].upper()}: {record['cpu']}"
    lines = [
        f"device      {hw}",
        f"torch       {record['torch']}  CUDA {record['cuda'] or '-'}  cuDNN {record['cudnn'] or '-'}"
        f"  Python {record['python']}",
        f"CPU         {record['cpu_count']} cores, torch threads {record['torch_threads']},"
        f" ISA {record['cpu_capability']}",
        f"TF32        matmul {record['tf32_matmul']}, cuDNN conv {record['tf32_cudnn']}",
        f"real bf16   {record['bf16_real']}",
        f"Colab       {record['colab']}",
    ]
    if "profile" in record:
        lines.insert(0, f"profile     {record['profile']}")
    return "\n".join(lines)


@dataclass
class Env:
    """What :func:`setup` chose: device, profile, seed and the environment record."""

    device: torch.device
    profile: str
    seed: int
    record: dict[str, Any] = field(default_factory=dict)

    def pick(self, *, smoke: T, cpu: T, gpu: T) -> T:
        """Return the value for the current profile, e.g. ``env.pick(smoke=64, cpu=256, gpu=1024)``."""
        return {"smoke": smoke, "cpu": cpu, "gpu": gpu}[self.profile]

    def set_threads(self, num_threads: int) -> None:
        """Set torch's intra-op thread count for the rest of the notebook, and record it.

        CPU timings on a shared 2-core machine are far less noisy on one thread; a notebook that
        does this says so, and the saved environment record shows the count actually used.
        """
        if num_threads < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        torch.set_num_threads(num_threads)
        self.record["torch_threads"] = torch.get_num_threads()
        print(f"torch threads set to {self.record['torch_threads']}")

    def __str__(self) -> str:
        return format_record(self.record)


def setup(seed: int = 0, *, verbose: bool = True) -> Env:
    """Choose the device and profile, seed every generator and print the environment record.

    Args:
        seed: the seed for Python, NumPy and PyTorch.
        verbose: print the record (every notebook does, so each result names its hardware).

    Returns:
        The :class:`Env` that later calls take their device and sizes from.

    Raises:
        ValueError: ``COURSE_PROFILE`` names no valid profile.
    """
    device = choose_device()
    profile = get_profile(device)
    seed_everything(seed)
    record = environment_record(device)
    record["profile"] = profile
    env = Env(device=device, profile=profile, seed=seed, record=record)
    if verbose:
        print(env)
    return env
