"""The doctor's checks: each reads a :class:`~course_utils.doctor.probe.Probe` and returns a finding or None.

A :class:`Check` is a function of the probe, the lesson that teaches the problem and the fix (a
:class:`~course_utils.doctor.fixes.Fix` the doctor applies and times, or None where the fix is a
change of code or of convergence the learner makes: then the finding says which lesson to read).
Every finding carries the measured number that triggered it. A learner's own check is a function
``check(probe) -> Finding | None`` passed to ``cu.doctor(..., extra_checks=[Check(...)])``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .fixes import FIXES, Fix
from .probe import Probe

__all__ = ["CHECKS", "Check", "Finding", "THRESHOLDS"]

#: Where each check starts to report, with why.
THRESHOLDS: dict[str, float] = {
    "data_share": 0.25,  # the batch fetch is ≥ 25 % of a step: the loader, not only the model, sets the pace
    "optimizer_share": 0.20,  # a for-loop optimizer step ≥ 20 % of the step (fetch excluded)
    "syncs_per_step": 1.0,  # one host sync every step stalls a GPU's queue each step
    "input_mean": 1.0,  # |mean| of the inputs above 1 …
    "input_std_high": 4.0,  # … or a standard deviation above 4 or below 0.05: not standardised
    "input_std_low": 0.05,
    "memory_low": 0.25,  # CUDA: a step's peak below a quarter of the device: room for a larger batch
    "memory_high": 0.90,  # … above 90 %: one larger batch from an out-of-memory error
}


@dataclass
class Finding:
    """One problem found, with the number that shows it, and (once measured) its fix timed."""

    check: str  #: the check's name
    problem: str  #: what is wrong, in a sentence
    evidence: str  #: the measured number(s) that triggered the check, in words
    value: float  #: the headline measured number
    lesson: str  #: the lesson(s) that teach it, e.g. "02, 12"
    change: str  #: what to change in the script
    fix: str | None = None  #: the :data:`~course_utils.doctor.fixes.FIXES` name the doctor applies, if any
    convergence: bool = False  #: the fix changes what the model learns: never applied by the doctor
    comparison: Any = None  #: the step (or evaluation) as written against the fixed one, once timed
    error: str | None = None  #: why the fix could not be timed

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the comparison as its own ``to_dict()``)."""
        out = {k: v for k, v in self.__dict__.items() if k != "comparison"}
        out["comparison"] = self.comparison.to_dict() if self.comparison is not None else None
        return out


@dataclass(frozen=True)
class Check:
    """A named detector: ``detect(probe)`` gives a :class:`Finding` or None."""

    name: str
    lesson: str
    detect: Callable[[Probe], Finding | None]
    devices: tuple[str, ...] = ("cpu", "cuda", "mps")  #: where it applies

    def run(self, probe: Probe) -> Finding | None:
        """The finding on ``probe``, or None (also where the check does not apply to the device)."""
        return self.detect(probe) if probe.device.type in self.devices else None


def _f(check: str, lesson: str, problem: str, evidence: str, value: float, change: str, fix: str | None = None,
       convergence: bool = False) -> Finding:
    if fix is not None and fix not in FIXES:
        raise ValueError(f"unknown fix {fix!r}")
    return Finding(check, problem, evidence, float(value), lesson, change, fix, convergence)


def _ms(s: float) -> str:
    return f"{s * 1e3:.3g} ms"


def data_wait(p: Probe) -> Finding | None:
    share = p.data_share
    if share < THRESHOLDS["data_share"]:
        return None
    import statistics

    workers = p.loader.get("num_workers")
    auto = p.loader.get("is_dataloader") and workers == 0
    return _f("data_wait", "02, 12", "the step waits for its data",
              f"the batch fetch is {share:.0%} of the step (median {_ms(statistics.median(p.fetch_s))} fetching, "
              f"{_ms(statistics.median(p.step_s))} computing), num_workers={workers}", share,
              FIXES["workers"].change if auto else "decode once and keep the data in memory, or more workers",
              "workers" if auto else None)


def dtype(p: Probe) -> Finding | None:
    total = sum(p.heavy_dtypes.values())
    doubles = p.heavy_dtypes.get("float64", 0)
    if doubles:
        return _f("dtype", "04", "the step computes in float64",
                  f"{doubles} of {total} matmuls/convolutions per step in float64", doubles / total,
                  FIXES["float32"].change, "float32")
    # a faster dtype only on an accelerator: on a CPU, bf16's gain depends on the chip (lesson 04: ~9× slower
    # without bf16 instructions, 1.4-1.6× faster with AMX), and a careful CPU script trains in float32
    if p.amp_dtype and p.device.type != "cpu" and total and p.heavy_dtypes.get("float32", 0) == total:
        return _f("dtype", "04", f"the step computes in float32 where this {p.device.type} runs {p.amp_dtype} faster",
                  f"{total} of {total} matmuls/convolutions per step in float32, on a {p.device.type} that computes "
                  f"{p.amp_dtype} faster", 1.0, FIXES["autocast"].change,
                  "autocast")
    return None


def optimizer(p: Probe) -> Finding | None:
    share = p.optimizer_share
    if p.optimizer["implementation"] != "for-loop" or share < THRESHOLDS["optimizer_share"]:
        return None
    return _f("optimizer", "05", f"{p.optimizer['class']} runs its for-loop implementation",
              f"optimizer.step is {share:.0%} of the step, one Python loop over {p.optimizer['tensors']} "
              "parameter tensors", share, FIXES["fused_optimizer"].change, "fused_optimizer")


def cudnn_benchmark(p: Probe) -> Finding | None:
    if not p.conv_layers or p.cudnn_benchmark or len(set(p.input_shapes)) != 1:
        return None
    return _f("cudnn_benchmark", "06", "cuDNN does not pick its fastest convolution algorithms",
              f"{p.conv_layers} convolutions, one input shape over {len(p.input_shapes)} steps, "
              "torch.backends.cudnn.benchmark False", p.conv_layers, FIXES["cudnn_benchmark"].change,
              "cudnn_benchmark")


def host_syncs(p: Probe) -> Finding | None:
    if p.syncs_per_step < THRESHOLDS["syncs_per_step"]:
        return None
    kinds = ", ".join(f"{k} ×{v:g}" for k, v in sorted(p.sync_kinds.items()))
    return _f("host_syncs", "07", "the step makes the host wait for the device",
              f"{p.syncs_per_step:g} host sync{'' if p.syncs_per_step == 1 else 's'} per step ({kinds})",
              p.syncs_per_step,
              "keep logged values on the device and read them every N steps (no .item() per step)")


def memory_headroom(p: Probe) -> Finding | None:
    if p.peak_bytes is None or not p.total_bytes:
        return None
    share = p.peak_bytes / p.total_bytes
    gib = f"{p.peak_bytes / 2**30:.2f} of {p.total_bytes / 2**30:.1f} GiB"
    if share < THRESHOLDS["memory_low"]:
        return _f("memory_headroom", "03", "the batch uses little of the device's memory",
                  f"a step peaks at {share:.0%} of the memory ({gib})", share,
                  "a larger batch, with the learning rate scaled and a warm-up", convergence=True)
    if share > THRESHOLDS["memory_high"]:
        return _f("memory_headroom", "08, 09", "the step is close to running out of memory",
                  f"a step peaks at {share:.0%} of the memory ({gib})", share,
                  "activation checkpointing or gradient accumulation", convergence=True)
    return None


def zero_grad(p: Probe) -> Finding | None:
    kept = sum(m is False for m in p.zero_grad_modes)
    if not kept:
        return None
    return _f("zero_grad", "11", "zero_grad fills the gradients with zeros instead of freeing them",
              f"{kept} of {len(p.zero_grad_modes)} zero_grad calls with set_to_none=False", kept,
              FIXES["set_to_none"].change, "set_to_none")


def debug_modes(p: Probe) -> Finding | None:
    if not p.forwards or not (p.anomaly_forwards or p.profiler_forwards):
        return None
    syncs = f" (adding {p.anomaly_syncs_per_step:g} host syncs per step)" if p.anomaly_syncs_per_step else ""
    on = [f"anomaly detection{syncs} in {p.anomaly_forwards}"] if p.anomaly_forwards else []
    on += [f"a profiler recording in {p.profiler_forwards}"] if p.profiler_forwards else []
    return _f("debug_modes", "13", "a debugging tool is left on while training",
              f"{' and '.join(on)} of {p.forwards} forward calls", (p.anomaly_forwards or p.profiler_forwards)
              / p.forwards, FIXES["no_anomaly"].change if p.anomaly_forwards else "stop the profiler after debugging",
              "no_anomaly" if p.anomaly_forwards else None)


def bias_before_bn(p: Probe) -> Finding | None:
    if not p.conv_bias_bn:
        return None
    return _f("bias_before_bn", "15", "convolutions keep a bias that the BatchNorm after them subtracts",
              f"{len(p.conv_bias_bn)} convolution{'' if len(p.conv_bias_bn) == 1 else 's'} with a bias "
              f"{'feeds' if len(p.conv_bias_bn) == 1 else 'feed'} a norm layer: {', '.join(p.conv_bias_bn)}",
              len(p.conv_bias_bn), FIXES["drop_conv_bias"].change, "drop_conv_bias")


def eval_autograd(p: Probe) -> Finding | None:
    if not p.eval_grad_forwards:
        return None
    saved = f", {p.eval_saved_bytes / 2**20:.2f} MiB saved for a backward that never runs" if p.eval_saved_bytes else ""
    return _f("eval_autograd", "16", "the evaluation records autograd graphs",
              f"{p.eval_grad_forwards} of {p.eval_forwards} evaluation forward calls with autograd on{saved}",
              p.eval_grad_forwards, FIXES["inference_eval"].change, "inference_eval")


def input_stats(p: Probe) -> Finding | None:
    if p.input_mean is None or p.input_std is None or p.first_layer_norm or not p.input_dtype.startswith(
            "torch.float"):
        return None
    t = THRESHOLDS
    if abs(p.input_mean) <= t["input_mean"] and t["input_std_low"] <= p.input_std <= t["input_std_high"]:
        return None
    return _f("input_stats", "17", "the inputs are not standardised",
              f"the inputs' mean is {p.input_mean:.3g} and their standard deviation {p.input_std:.3g}, "
              "and the model's first layer does not normalise", p.input_std,
              "standardise the inputs with the training set's mean and std (or a norm layer first)", convergence=True)


def lr_schedule(p: Probe) -> Finding | None:
    if p.scheduler or len(set(p.lrs)) != 1:
        return None
    return _f("lr_schedule", "01", "the learning rate is constant",
              f"the learning rate stayed {p.lrs[0]:g} over {len(p.lrs)} steps; no scheduler", p.lrs[0],
              "a one-cycle schedule with warm-up, its peak from an LR range test", convergence=True)


def compile_model(p: Probe) -> Finding | None:
    if p.compiled:
        return None
    return _f("compile", "18", "the model runs eagerly, one kernel launch per operator",
              f"{sum(p.ops.values())} operators dispatched per step, model not compiled", sum(p.ops.values()),
              FIXES["compile"].change, "compile")


def channels_last(p: Probe) -> Finding | None:
    if not p.conv_layers or p.channels_last or not p.amp_dtype or not any(len(s) == 4 for s in p.input_shapes):
        return None
    return _f("channels_last", "18", "convolutions read NCHW tensors, which tensor cores do not use directly",
              f"{p.conv_layers} convolutions on contiguous (NCHW) 4-D inputs", p.conv_layers,
              FIXES["channels_last"].change, "channels_last")


def sdpa(p: Probe) -> Finding | None:
    fused = sum(v for k, v in p.ops.items() if "scaled_dot_product" in k or "flash" in k)
    softmax, bmm = p.ops.get("_softmax", 0), p.ops.get("bmm", 0)
    if fused or not softmax or bmm < 2:
        return None
    return _f("sdpa", "18", "attention written by hand: the score matrix is materialised",
              f"{softmax} softmax and {bmm} batched matmuls per step, no fused attention operator", softmax,
              "torch.nn.functional.scaled_dot_product_attention(q, k, v)")


#: The doctor's checks, in the course's order.
CHECKS: tuple[Check, ...] = (
    Check("lr_schedule", "01", lr_schedule),
    Check("data_wait", "02, 12", data_wait),
    Check("dtype", "04", dtype),
    Check("optimizer", "05", optimizer),
    Check("cudnn_benchmark", "06", cudnn_benchmark, devices=("cuda",)),
    Check("host_syncs", "07", host_syncs),
    Check("memory_headroom", "03, 08, 09", memory_headroom, devices=("cuda",)),
    Check("zero_grad", "11", zero_grad),
    Check("debug_modes", "13", debug_modes),
    Check("bias_before_bn", "15", bias_before_bn),
    Check("eval_autograd", "16", eval_autograd),
    Check("input_stats", "17", input_stats),
    Check("compile", "18", compile_model, devices=("cuda",)),
    Check("channels_last", "18", channels_last, devices=("cuda",)),
    Check("sdpa", "18", sdpa, devices=("cuda",)),
)


def fix_of(finding: Finding) -> Fix | None:
    """The :class:`Fix` the doctor applies for ``finding`` (None: the learner changes the code)."""
    return FIXES.get(finding.fix) if finding.fix and not finding.convergence else None
