"""Device, seeding, run profile and the environment record every notebook prints.

Nothing here runs on import: a notebook calls :func:`setup` once in its setup cell. What the
hardware is and can do (CPU features, real bf16, machine id) lives in :mod:`.hardware`; choosing
and checking the device (:func:`choose_device`, :func:`check_device`, :func:`synchronize`,
:func:`autocast`) in :mod:`.devices`, re-exported here.
"""

from __future__ import annotations

import logging
import numbers
import os
import platform
import random
import sys
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch

from . import hardware
from .devices import autocast, check_device, choose_device, synchronize
from .hardware import machine_id, pick_amp_dtype

__all__ = [
    "PROFILES",
    "Env",
    "autocast",
    "check_device",
    "check_seed",
    "choose_device",
    "environment_record",
    "format_record",
    "get_profile",
    "in_colab",
    "machine_id",
    "pick_amp_dtype",
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


def check_seed(seed: object, argument: str = "seed") -> int:
    """``seed`` as an int if it can seed Python, NumPy and PyTorch: a whole number from 0 to 2**32 − 1.

    Raises:
        TypeError: not a whole number (a bool is not a seed; nor is ``"0"`` or ``1.0``).
        ValueError: negative, or beyond NumPy's 2**32 − 1.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{argument} must be a whole number >= 0 (an int; a bool is not a seed), got {seed!r}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"{argument} must be a whole number from 0 to 2**32 - 1, got {seed}")
    return int(seed)


def seed_everything(seed: int = 0) -> None:
    """Seed Python's, NumPy's and PyTorch's random generators (all devices).

    Raises:
        TypeError, ValueError: ``seed`` is not a whole number from 0 to 2**32 − 1 (see :func:`check_seed`).
    """
    seed = check_seed(seed)
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


def environment_record(device: torch.device | str | None = None) -> dict[str, Any]:
    """Collect what a measurement depends on, as a JSON-serialisable dict.

    Args:
        device: the device measured on; :func:`choose_device` when omitted.

    Returns:
        A dict with the device; GPU name, compute capability, memory (bytes), count and driver;
        torch/CUDA/cuDNN/Python versions; CPU model, architecture, count, the CPUs this process
        may use, RAM (bytes) and torch threads; TF32 flags, float32 matmul precision, cuDNN
        benchmark and deterministic flags; real bf16 support; whether in Colab.
    """
    device = torch.device(device) if device is not None else choose_device()
    cuda = device.type == "cuda"
    props = torch.cuda.get_device_properties(device) if cuda else None
    gpu_memory = int(props.total_memory) if props is not None else None
    if device.type == "mps" and hasattr(torch.mps, "recommended_max_memory"):
        gpu_memory = int(torch.mps.recommended_max_memory())  # Metal's share of unified memory
    record: dict[str, Any] = {
        "device": device.type,
        "gpu_name": props.name if props is not None else None,
        "gpu_capability": f"{props.major}.{props.minor}" if props is not None else None,
        "gpu_memory": gpu_memory,
        "gpu_count": torch.cuda.device_count() if cuda else None,
        "driver": hardware.nvidia_driver_version() if cuda and not torch.version.hip else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "python": platform.python_version(),
        "cpu": hardware.cpu_name(),
        "arch": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": hardware.usable_cpus(),
        "ram": hardware.ram_bytes(),
        "torch_threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        **hardware.tf32_flags(),
        "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
        "cudnn_deterministic": bool(torch.backends.cudnn.deterministic),
        # CUDA: sm_80 and up, what is_bf16_supported(including_emulation=False) checks, but for
        # this device rather than the current one. CPU: bf16 instructions. MPS: not claimed.
        "bf16_real": (props.major, props.minor) >= (8, 0) if props is not None else False,
        "colab": in_colab(),
    }
    if device.type == "cpu":
        record["bf16_real"] = hardware.cpu_bf16_support()
    return record


def _gib(n: float | None) -> str:
    return f"{n / 2**30:.1f} GiB" if n else "? GiB"


def format_record(record: dict[str, Any]) -> str:
    """Render an environment record as a few readable lines (older records lack some fields)."""
    get = record.get
    if get("device") == "cuda":
        count = f", {get('gpu_count')} GPUs" if (get("gpu_count") or 1) > 1 else ""
        sm = str(get("gpu_capability")).replace(".", "")
        hw = f"{get('gpu_name')} (sm_{sm}, {_gib(get('gpu_memory'))}{count}, driver {get('driver') or '?'})"
    else:
        hw = f"{str(get('device', 'cpu')).upper()}: {get('cpu')}"
    usable = get("cpus_usable")
    lines = [
        f"device      {hw}",
        f"machine     {machine_id(record)}",
        f"torch       {get('torch')}  CUDA {get('cuda') or '-'}  cuDNN {get('cudnn') or '-'}"
        f"  Python {get('python')}",
        f"CPU         {get('cpu_count')} cores{f' ({usable} usable)' if usable is not None else ''},"
        f" {_gib(get('ram'))} RAM, torch threads {get('torch_threads')}, ISA {get('cpu_capability')}",
        f"TF32        matmul {get('tf32_matmul')}, cuDNN conv {get('tf32_cudnn')};"
        f" float32 matmul precision {get('float32_matmul_precision', '?')}",
        f"cuDNN       benchmark {get('cudnn_benchmark', '?')}, deterministic {get('cudnn_deterministic', '?')}",
        f"real bf16   {get('bf16_real')}",
        f"Colab       {get('colab')}",
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

    def set_threads(self, num_threads: int, *, verbose: bool = True) -> None:
        """Set torch's intra-op thread count for the rest of the notebook, and record it.

        CPU timings on a shared 2-core machine are far less noisy on one thread; the saved
        environment record shows the count actually used. :func:`setup` does this on a CPU when
        given ``cpu_threads``; ``verbose`` prints the count set.
        """
        if num_threads < 1:
            raise ValueError(f"num_threads must be >= 1, got {num_threads}")
        torch.set_num_threads(num_threads)
        self.record["torch_threads"] = torch.get_num_threads()
        if verbose:
            print(f"torch threads set to {self.record['torch_threads']}")

    def __str__(self) -> str:
        return format_record(self.record)


class _DropMessage(logging.Filter):
    """A logging filter that drops the records whose message starts with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefix)


#: torch log lines that say nothing to a learner on the course's machines: (logger, message start).
_NOISE = [
    # a CUDA build of torch on a machine without a GPU, the first time inductor compiles C++
    ("torch.utils.cpp_extension", "No CUDA runtime is found"),
    # Dynamo's advice at every .item() graph break; torch._dynamo.explain reports the break itself
    ("torch._dynamo.variables.tensor", "Graph break from `Tensor.item()`"),
]


def quiet_known_warnings() -> None:
    """Silence torch's log lines listed in ``_NOISE`` (idempotent; :func:`setup` calls it)."""
    for name, prefix in _NOISE:
        log = logging.getLogger(name)
        if not any(isinstance(f, _DropMessage) and f.prefix == prefix for f in log.filters):
            log.addFilter(_DropMessage(prefix))


def setup(seed: int = 0, *, cpu_threads: int | None = None, verbose: bool = True) -> Env:
    """Choose the device and profile, seed every generator and print the environment record.

    Args:
        seed: the seed for Python, NumPy and PyTorch: a whole number from 0 to 2**32 − 1.
        cpu_threads: on a CPU, pin torch's intra-op threads to this many for the rest of the
            notebook (:meth:`Env.set_threads`: recorded, and said): CPU timings on a small or
            shared machine are far steadier on one thread. None keeps torch's own count, as a GPU
            or MPS device always does.
        verbose: print the record (every notebook does, so each result names its hardware).

    Returns:
        The :class:`Env` that later calls take their device and sizes from.

    Raises:
        TypeError: ``seed`` or ``cpu_threads`` is not a whole number (a bool is neither).
        ValueError: ``COURSE_PROFILE`` names no valid profile, ``seed`` is out of range, or
            ``cpu_threads`` is below 1.
    """
    seed = check_seed(seed)
    if cpu_threads is not None:  # checked before anything changes
        if isinstance(cpu_threads, bool) or not isinstance(cpu_threads, numbers.Integral):
            raise TypeError(f"cpu_threads must be a whole number >= 1 or None, got {cpu_threads!r}")
        if cpu_threads < 1:
            raise ValueError(f"cpu_threads must be >= 1 or None, got {cpu_threads}")
    quiet_known_warnings()
    device = choose_device()
    profile = get_profile(device)
    seed_everything(seed)
    record = environment_record(device)
    record["profile"] = profile
    env = Env(device=device, profile=profile, seed=seed, record=record)
    pinned = cpu_threads is not None and device.type == "cpu"
    if pinned and cpu_threads is not None:
        env.set_threads(int(cpu_threads), verbose=False)  # before the record prints: it shows the count used
    if verbose:
        print(env)
        if pinned:
            print(f"torch threads set to {env.record['torch_threads']} for this notebook (cpu_threads={cpu_threads}): "
                  "CPU timings on a shared machine are far steadier that way")
    floor = hardware.torch_floor_problem(device.type)
    if floor:
        print(f"WARNING: {floor}")
    return env
