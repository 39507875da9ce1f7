"""What the doctor measures of a run before it decides anything: the :class:`Probe`.

:func:`probe` runs a few steps of a :class:`~course_utils.doctor.contract.Training` with the
course's instruments on: the batch fetch and the step timed apart (the data-wait share, lessons
02 and 12), the optimizer's step timed inside the step (05), host syncs counted
(:func:`~course_utils.counters.syncs.count_syncs`, 07), the operators of one step and the dtypes of
its matmuls and convolutions (04, 18), the modes a forward call runs under (anomaly detection and
the profiler, 13; autograd in the evaluation, 16), ``zero_grad``'s mode (11), which convolutions
feed a BatchNorm with a bias (15), the inputs' statistics (17) and the learning rate (01). Checks
(:mod:`course_utils.doctor.checks`) read only the probe, so a learner's own check can too.
"""

from __future__ import annotations

import collections
import statistics
import time
from dataclasses import dataclass
from typing import Any

import torch

from .contract import DoctorError, Training, _one_line
from .instruments import NORMS, OpCounter, anomaly_off, fast_dtype, implementation, inputs_of, loader_facts, sync

__all__ = ["Probe", "probe"]



@dataclass
class Probe:
    """Everything the checks read, measured on one run of a script (see :func:`probe`)."""

    name: str
    device: torch.device
    steps: int  #: steps timed (after one untimed step)
    fetch_s: list[float]  #: per step: seconds to get the batch from the loader
    step_s: list[float]  #: per step: seconds of the step itself (device synchronised)
    optimizer_s: list[float]  #: per step: seconds inside ``optimizer.step``
    loader: dict[str, Any]  #: the loader's settings (type, num_workers, pin_memory, batch_size …)
    optimizer: dict[str, Any]  #: class, implementation ("fused", "foreach", "for-loop"), parameter tensors
    ops: collections.Counter[str]  #: ATen operators of one step (no overload), e.g. ``{"addmm": 3}``
    heavy_dtypes: collections.Counter[str]  #: dtype of each matmul/convolution of one step, e.g. ``{"float32": 6}``
    syncs_per_step: float  #: host syncs per step, anomaly detection's left out
    sync_kinds: dict[str, float]  #: those syncs per step by kind (".item()" …)
    anomaly_syncs_per_step: float  #: the syncs per step anomaly detection adds (0 when it is off)
    forwards: int  #: forward calls of the model seen in the timed steps
    anomaly_forwards: int  #: of them, under anomaly detection
    profiler_forwards: int  #: of them, with a profiler recording
    zero_grad_modes: list[bool | None]  #: ``set_to_none`` of each zero_grad call in the timed steps
    conv_bias_bn: list[str]  #: convolutions with a bias whose output goes straight into a norm layer
    conv_layers: int
    first_layer_norm: bool  #: the first layer the model calls normalises its input
    input_shapes: list[tuple[int, ...]]
    input_dtype: str
    input_mean: float | None
    input_std: float | None
    lrs: list[float]  #: the first parameter group's learning rate after each step
    eval_forwards: int = 0
    eval_grad_forwards: int = 0  #: evaluation forward calls with autograd recording
    eval_saved_bytes: int | None = None  #: bytes autograd saved during one evaluation
    peak_bytes: int | None = None  #: CUDA: peak memory of one step above what was resident
    total_bytes: int | None = None  #: CUDA: the device's memory
    cudnn_benchmark: bool = False
    channels_last: bool = False
    compiled: bool = False
    amp_dtype: str | None = None  #: the dtype this device computes fastest (None: fp32 is it)
    scheduler: str | None = None  #: the class of the script's scheduler (None: it gave none)

    @property
    def data_share(self) -> float:
        """The share of the step's wall time spent waiting for the batch (median step)."""
        fetch, step = statistics.median(self.fetch_s), statistics.median(self.step_s)
        return fetch / (fetch + step) if fetch + step > 0 else 0.0

    @property
    def optimizer_share(self) -> float:
        """The share of the step (fetch excluded) spent in ``optimizer.step``."""
        step = statistics.median(self.step_s)
        return statistics.median(self.optimizer_s) / step if step > 0 and self.optimizer_s else 0.0

    @property
    def step_median_s(self) -> float:
        """Median seconds of a whole step, batch fetch included."""
        return statistics.median(f + s for f, s in zip(self.fetch_s, self.step_s))


def probe(run: Training, *, steps: int = 8) -> Probe:
    """Measure ``run``: one untimed step, ``steps`` timed ones, then one step under the op and sync counters.

    Raises:
        DoctorError: the loader or the step raised (one line: which, and the error).
    """
    from ..counters.syncs import count_syncs

    model, device = run.model, run.device
    seen: dict[str, Any] = {"fwd": 0, "anomaly": 0, "profiler": 0, "grad": 0, "order": [], "bias_out": {},
                            "pairs": []}

    def pre_forward(_m: Any, _args: Any) -> None:
        seen["fwd"] += 1
        seen["bias_out"].clear()  # one forward's conv outputs (held, so no id is reused meanwhile)
        seen["anomaly"] += torch.is_anomaly_enabled()
        seen["profiler"] += torch.autograd._profiler_enabled()
        seen["grad"] += torch.is_grad_enabled() and not torch.is_inference_mode_enabled()

    def leaf_pre(m: torch.nn.Module, args: Any) -> None:
        if len(seen["order"]) < 10_000:
            seen["order"].append(m)
        conv, out = seen["bias_out"].get(id(args[0]) if args else None, (None, None))
        if isinstance(m, NORMS) and out is not None and out is args[0]:
            seen["pairs"].append(conv)

    def leaf_post(m: torch.nn.Module, _args: Any, out: Any) -> None:
        if isinstance(m, torch.nn.modules.conv._ConvNd) and m.bias is not None and isinstance(out, torch.Tensor):
            seen["bias_out"][id(out)] = (m, out)

    names = {m: n for n, m in model.named_modules()}
    hooks = [model.register_forward_pre_hook(pre_forward)]
    leaves = [m for m in model.modules() if not list(m.children())]
    hooks += [h for m in leaves for h in (m.register_forward_pre_hook(leaf_pre), m.register_forward_hook(leaf_post))]
    modes: list[bool | None] = []
    zero_grads = []
    for owner in (run.optimizer, model):
        original = owner.zero_grad

        def spy(*a: Any, _original: Any = original, **kw: Any) -> Any:
            modes.append(kw.get("set_to_none", a[0] if a else True))
            return _original(*a, **kw)

        owner.zero_grad = spy  # type: ignore[method-assign]  # this run's own objects, never the script
        zero_grads.append(owner)
    opt_times: list[float] = []
    started: list[float] = []

    def opt_pre(*_: Any) -> None:  # a pre-hook that returned something would replace step's arguments
        sync(device)
        started.append(time.perf_counter())

    def opt_post(*_: Any) -> None:
        sync(device)
        opt_times.append(time.perf_counter() - started[-1])

    opt_hooks = [run.optimizer.register_step_pre_hook(opt_pre), run.optimizer.register_step_post_hook(opt_post)]
    fetch_s: list[float] = []
    step_s: list[float] = []
    shapes: list[tuple[int, ...]] = []
    stats: list[tuple[float, float, str]] = []
    lrs: list[float] = []
    ops = OpCounter()
    try:
        try:  # untimed: first-call costs, workers starting
            first = run.next_batch()
        except DoctorError:
            raise
        except Exception as e:  # noqa: BLE001
            raise DoctorError(f"{run.name}: the loader raised {_one_line(e)} when asked for a batch") from None
        try:
            run.run_step(first)
        except Exception as e:  # noqa: BLE001
            raise DoctorError(f"{run.name}: the first training step raised {_one_line(e)}") from None
        for key in ("fwd", "anomaly", "profiler", "grad"):
            seen[key] = 0
        seen["pairs"].clear()
        seen["order"].clear()
        modes.clear()
        opt_times.clear()
        for _ in range(steps):
            t0 = time.perf_counter()
            batch = run.next_batch()
            t1 = time.perf_counter()
            run.run_step(batch)
            sync(device)
            t2 = time.perf_counter()
            fetch_s.append(t1 - t0)
            step_s.append(t2 - t1)
            lrs.append(float(run.optimizer.param_groups[0]["lr"]))
            x = inputs_of(batch)
            if x is not None:
                shapes.append(tuple(x.shape))
                xf = x.detach().float()
                stats.append((float(xf.mean()), float(xf.std()) if xf.numel() > 1 else 0.0, str(x.dtype)))
        order, pairs = list(seen["order"]), list(dict.fromkeys(seen["pairs"]))
        modes_seen = {key: seen[key] for key in ("fwd", "anomaly", "profiler")}  # the timed steps' forward calls
        counted = 2
        batches = [run.next_batch() for _ in range(counted)]
        with count_syncs(device) as syncs, anomaly_off():  # the script's own reads; anomaly detection's apart
            for b in batches:
                run.run_step(b)
        anomaly_syncs = 0.0
        if seen["anomaly"]:
            batches = [run.next_batch() for _ in range(counted)]
            with count_syncs(device) as with_anomaly:
                for b in batches:
                    run.run_step(b)
            anomaly_syncs = max(0.0, (with_anomaly.count - syncs.count) / counted)
        batch = run.next_batch()
        with ops:
            run.run_step(batch)
    except DoctorError:
        raise
    except Exception as e:  # noqa: BLE001
        raise DoctorError(f"{run.name}: a training step raised {_one_line(e)}") from None
    finally:
        for h in hooks + opt_hooks:
            h.remove()
        for owner in zero_grads:
            del owner.zero_grad  # the class's method again
    fwd = modes_seen["fwd"]
    found = Probe(
        name=run.name, device=device, steps=steps, fetch_s=fetch_s, step_s=step_s, optimizer_s=opt_times,
        loader=loader_facts(run.loader),
        optimizer={"class": type(run.optimizer).__name__, "implementation": implementation(run.optimizer),
                   "tensors": sum(len(g["params"]) for g in run.optimizer.param_groups)},
        ops=ops.ops, heavy_dtypes=ops.dtypes, syncs_per_step=syncs.count / counted,
        sync_kinds={k: v / counted for k, v in syncs.by_op.items()}, anomaly_syncs_per_step=anomaly_syncs,
        forwards=fwd, anomaly_forwards=modes_seen["anomaly"], profiler_forwards=modes_seen["profiler"],
        zero_grad_modes=modes, conv_bias_bn=[names.get(m, type(m).__name__) for m in pairs],
        conv_layers=sum(isinstance(m, torch.nn.modules.conv._ConvNd) for m in model.modules()),
        first_layer_norm=bool(order) and isinstance(order[0], NORMS),
        input_shapes=shapes, input_dtype=stats[0][2] if stats else "",
        input_mean=statistics.fmean(s[0] for s in stats) if stats else None,
        input_std=statistics.fmean(s[1] for s in stats) if stats else None, lrs=lrs,
        cudnn_benchmark=bool(torch.backends.cudnn.benchmark),
        channels_last=any(len(s) == 4 for s in shapes) and all(
            x.is_contiguous(memory_format=torch.channels_last) for x in [inputs_of(batch)] if x is not None and
            x.dim() == 4),
        compiled=type(model).__name__ == "OptimizedModule",
        scheduler=type(run.scheduler).__name__ if run.scheduler is not None else None)
    _probe_eval(run, found)
    _probe_memory(run, found)
    amp = fast_dtype(device)
    found.amp_dtype = str(amp).removeprefix("torch.") if amp is not None else None
    return found


def _probe_eval(run: Training, found: Probe) -> None:
    """Run the evaluation once: how many forward calls autograd recorded, and the bytes it saved."""
    from ..counters.memory import saved_tensors

    if run.evaluate is None:
        return
    calls = {"fwd": 0, "grad": 0}

    def pre(_m: Any, _a: Any) -> None:
        calls["fwd"] += 1
        calls["grad"] += torch.is_grad_enabled() and not torch.is_inference_mode_enabled()

    hook = run.model.register_forward_pre_hook(pre)
    try:
        saved = saved_tensors(run.run_evaluate, exclude=list(run.model.parameters()))
    except Exception as e:  # noqa: BLE001
        raise DoctorError(f"{run.name}: evaluate(model) raised {_one_line(e)}") from None
    finally:
        hook.remove()
    found.eval_forwards, found.eval_grad_forwards, found.eval_saved_bytes = calls["fwd"], calls["grad"], saved.bytes


def _probe_memory(run: Training, found: Probe) -> None:
    """On CUDA: one step's peak memory above what was resident, and the device's memory."""
    if run.device.type != "cuda":
        return
    from ..counters.memory import peak_memory_stats

    batch = run.next_batch()
    peak = peak_memory_stats(lambda: run.run_step(batch), run.device)
    if peak is not None:
        found.peak_bytes = peak.peak_bytes + peak.start_bytes
        found.total_bytes = torch.cuda.get_device_properties(run.device).total_memory
