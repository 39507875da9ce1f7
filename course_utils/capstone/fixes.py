"""The fixes of the capstone's speed-run as switches, and the device-dependent choices they use.

:data:`FIXES` names each fix with the problem of the naive script it removes; a :class:`Stack`
says which are on; :class:`SpeedConfig` holds the choices that depend on the device (precision,
workers, batch and learning rate with warm-up), which :func:`fast_config` makes from a
:class:`DeviceInfo` (this machine's, or a faked one in tests).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

#: The fixes, each with the problem of the naive script it removes.
FIXES: dict[str, str] = {
    "decode_once": "images decoded once into a tensor on the device, batches indexed there "
                   "(not PNG files decoded every epoch and each batch copied)",
    "workers": "DataLoader workers (and pinned memory on CUDA) while the files are still read every epoch",
    "constants_on_device": "the loss's class weights built once on the device, not on the CPU and moved every step",
    "no_item_log": "no loss.item() (a host-device sync) logged every step",
    "no_anomaly": "autograd anomaly detection off (a debugging tool left on)",
    "no_conv_bias": "no conv bias before BatchNorm (BatchNorm subtracts it again)",
    "big_batch": "a larger batch with the learning rate scaled to it",
    "one_cycle": "a one-cycle schedule with warm-up instead of a constant learning rate",
    "amp": "mixed precision in the dtype the device computes fastest (none where it has none)",
    "inference_eval": "evaluation under torch.inference_mode, not with autograd recording",
}
#: The naive script's batch size and learning rate (the base of the scaling rule).
NAIVE_BATCH, NAIVE_LR = 32, 0.05
#: Warm-up share of the run with ``one_cycle`` (OneCycleLR's ``pct_start``). Short, because the
#: target comes before the budget ends: on the course's 2-core VM (cpu profile, 5 seeds, steps to
#: 65 % validation accuracy) a quarter of the budget in warm-up took 928 steps in all against 512
#: at the constant rate, 10 % took 608 and 5 % took 480.
WARMUP = 0.05
#: Peak learning rate of ``one_cycle`` as a multiple of the constant one: warm-up is what lets a
#: one-cycle run peak higher than a constant rate could start (lesson 01).
ONE_CYCLE_PEAK = 2.0


@dataclass(frozen=True)
class Stack:
    """Which fixes are on (all: the speed-run; none: the naive script)."""

    fixes: frozenset[str]

    def __post_init__(self) -> None:
        unknown = set(self.fixes) - set(FIXES)
        if unknown:
            raise ValueError(f"unknown fix(es) {sorted(unknown)}; the fixes are {', '.join(FIXES)}")

    @classmethod
    def full(cls, without: Iterable[str] = ()) -> Stack:
        """Every fix, less ``without``."""
        without = frozenset(without)
        cls(without)  # the same check and message for a misspelt name
        return cls(frozenset(FIXES) - without)

    @classmethod
    def naive(cls, plus: Iterable[str] = ()) -> Stack:
        """No fix, or only ``plus``."""
        return cls(frozenset(plus))

    @property
    def name(self) -> str:
        """"naive", "full stack", "naive + FIX" or "full stack − FIX"."""
        on = [f for f in FIXES if f in self.fixes]
        off = [f for f in FIXES if f not in self.fixes]
        if not on:
            return "naive"
        if not off:
            return "full stack"
        return "naive + " + " + ".join(on) if len(on) <= len(off) else "full stack − " + " − ".join(off)

    def __contains__(self, fix: object) -> bool:
        return fix in self.fixes


@dataclass(frozen=True)
class DeviceInfo:
    """What :func:`fast_config` decides from: real (:meth:`here`) or faked in tests."""

    type: str
    name: str = ""
    capability: tuple[int, int] | None = None
    cpu_count: int = 1
    cpu_bf16: bool = False

    @classmethod
    def here(cls, device: torch.device | str) -> DeviceInfo:
        """The facts of this machine for ``device``."""
        from ..hardware import cpu_bf16_support, cuda_capability, usable_cpus

        device = torch.device(device)
        cuda = device.type == "cuda"
        return cls(device.type, torch.cuda.get_device_name(device) if cuda else device.type,
                   cuda_capability(device) if cuda else None, usable_cpus(), cpu_bf16_support())


@dataclass(frozen=True)
class SpeedConfig:
    """The device-dependent choices of the stack (used by the fixes that are on)."""

    amp_dtype: torch.dtype | None
    num_workers: int
    pin_memory: bool
    batch_size: int
    lr: float
    warmup: float


def fast_config(info: DeviceInfo) -> SpeedConfig:
    """The course's choices for a device (lesson 19's exercise asks for the same rules).

    Precision: lesson 04's rule (bf16 on CUDA from sm_80 and on a CPU with real bf16, fp16 on
    older CUDA GPUs and on MPS, none on other CPUs). Workers: one per CPU beyond the main
    process, at most 8; pinned memory on CUDA only. Batch 256 on CUDA and 128 on MPS, with the
    learning rate scaled linearly from the naive script's (0.05 at 32); on a CPU the naive batch
    (32), since a CPU's step time grows about in proportion to the batch (lesson 03's inversion:
    on the course's 2-core VM batch 64 and 128 reached the cpu profile's target no sooner than 32).
    The first :data:`WARMUP` of the run warms up.
    """
    from ..hardware import pick_amp_dtype

    batch = {"cuda": 256, "mps": 128}.get(info.type, NAIVE_BATCH)
    return SpeedConfig(amp_dtype=pick_amp_dtype(info.type, info.capability, info.cpu_bf16),
                       num_workers=max(0, min(8, info.cpu_count - 1)), pin_memory=info.type == "cuda",
                       batch_size=batch, lr=NAIVE_LR * batch / NAIVE_BATCH, warmup=WARMUP)


def no_op_here(fix: str, config: SpeedConfig, device: torch.device | str) -> str | None:
    """Why switching ``fix`` on changes nothing on ``device`` with ``config`` (None: it changes something).

    A fix is a no-op where the device's choice equals the naive script's: ``big_batch`` where the
    batch and learning rate are the naive ones (a CPU), ``amp`` where there is no faster dtype
    (a CPU without real bf16), ``workers`` with 0 workers and no pinned memory (one CPU). Its
    arms then run the very same computation as the naive script and the full stack, so its
    ablation rows are one more A/A check, never a finding about the fix.
    """
    if fix not in FIXES:
        raise ValueError(f"unknown fix {fix!r}; the fixes are {', '.join(FIXES)}")
    kind = torch.device(device).type
    if fix == "big_batch" and config.batch_size == NAIVE_BATCH and config.lr == NAIVE_LR:
        return (f"the {kind}'s batch and learning rate are the naive script's ({NAIVE_BATCH} at {NAIVE_LR:g}): "
                "the same run")
    if fix == "amp" and config.amp_dtype is None:
        return f"no faster dtype on this {kind} (amp_dtype None): amp trains in fp32, as the naive script does"
    if fix == "workers" and config.num_workers == 0 and not (config.pin_memory and kind == "cuda"):
        return "0 workers and no pinned memory: the naive script's loader"
    return None


def no_ops_here(config: SpeedConfig, device: torch.device | str, fixes: Iterable[str] = FIXES) -> dict[str, str]:
    """:func:`no_op_here` for each of ``fixes``: {fix: why it is a no-op} for the no-ops only."""
    return {f: why for f in fixes if (why := no_op_here(f, config, device)) is not None}
