"""The capstone's runs that need more than this notebook's machine may have: CIFAR-10 and several GPUs.

:func:`cifar10_runs` times the full stack to a CIFAR-10 target, only on a CUDA GPU in the gpu
profile and only when CIFAR-10 can be had (its files already cached, or torchvision's download);
offline it prints one plain line, never the dataset fallback's warning, so the lesson's
Fashion-MNIST results stand on their own;
:func:`ddp_scaling` measures the stack's DDP scaling efficiency under ``torchrun`` (lesson 10's
launcher), only where there is more than one GPU. Where they cannot run, each prints why and
returns None: nothing is pretended.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..results.labels import Effect

if TYPE_CHECKING:
    from ..env import Env
    from .fixes import SpeedConfig

__all__ = ["AIRBENCH", "METHOD_DIFFERENCES", "cifar10_runs", "ddp_scaling"]

#: airbench's published record (its figure, for the side-by-side line; never ours).
AIRBENCH = "airbench94_muon: 94.01 % CIFAR-10 test accuracy in 2.59 s on one A100 (mean of 200 runs, torch 2.4.1)"
#: How airbench's figure was measured, against how this course measures (printed beside it).
METHOD_DIFFERENCES = (
    "not the same method: airbench trains a fixed 8 epochs and reports the mean test accuracy of 200 runs "
    "(its 'val' is the CIFAR-10 test set); its CUDA-event timer leaves out loading the data to the GPU, the "
    "per-epoch evaluations and a warm-up compile run. This course stops each run at the first evaluation of a "
    "split held out of the training images that reaches the target, clocks setup, decoding and every "
    "evaluation, touches the test set once, and reports the median over paired seeds: stricter on "
    "held-out data, slower on the clock")
_RANK_SCRIPT = Path(__file__).with_name("_ddp_rank.py")


def cifar10_runs(env: Env, *, config: SpeedConfig | None = None, seeds: tuple[int, ...] = (0, 1),
                 target: float | None = None, profile: str = "cifar10") -> dict[str, Any] | None:
    """The full stack to ``target`` validation accuracy on CIFAR-10, one run per seed, beside airbench's figure.

    Runs only in the gpu profile on CUDA (it is a GPU speed-run) and only when CIFAR-10 can be
    had: on disk, or downloaded first (:func:`~course_utils.data.cifar10.fetch_cifar10`; not with
    ``COURSE_OFFLINE=1`` nor when its host does not answer). Otherwise it prints why in one plain
    line, before preparing anything, and returns None: the dataset fallback (digits, and its
    warning) is never used here.

    Args:
        env: from ``cu.setup()``.
        config: the device-dependent choices (:func:`~course_utils.capstone.fixes.fast_config` of the device when None).
        seeds: one run per seed.
        target: validation accuracy to reach; ``profile``'s when None (not airbench's 94 %: see
            :data:`~course_utils.capstone.speedrun.PROFILES`).
        profile: the sizes (:data:`~course_utils.capstone.speedrun.PROFILES`).

    Returns:
        ``{"dataset", "target", "gpu", "runs", "airbench"}`` (each run without its log), or None.
    """
    from ..data.cifar10 import fetch_cifar10
    from ..data.datasets import FORCE_ENV, forced_dataset
    from .fixes import Stack
    from .speedrun import PROFILES, prepare, run_once

    if env.device.type != "cuda" or env.profile != "gpu":
        print(f"CIFAR-10: not run (a GPU speed-run: it runs in the gpu profile on CUDA; this is the "
              f"{env.profile} profile on a {env.device.type})")
        return None
    why = f"{FORCE_ENV}=digits is set" if forced_dataset() else None
    if why is None:
        try:  # the download here, before prepare: a failure is this line, not the dataset fallback's warning
            fetch_cifar10()
        except Exception as e:  # offline, unreachable, a failed download: no CIFAR-10 here
            why = " ".join(f"{type(e).__name__}: {e}".split())[:300]
    if why is not None:
        print(f"CIFAR-10: not run, it cannot be had here ({why}); nothing above depends on it")
        return None
    target = target if target is not None else PROFILES[profile].target
    prepared = prepare("cifar10", profile)
    if prepared.data.name != "cifar10":
        print("CIFAR-10: could not be read here (the warning above says why); not run")
        return None
    runs = [run_once(Stack.full(), prepared, seed=s, config=config, device=env.device, target=target)
            for s in seeds]
    for r in runs:
        print("CIFAR-10 " + r.summary())
    print(f"for comparison, not ours: {AIRBENCH}; other network, augmentation and schedule; {METHOD_DIFFERENCES}")
    return {"dataset": "cifar10", "target": target, "gpu": env.record.get("gpu_name"),
            "runs": [{k: v for k, v in r.to_dict().items() if k != "log"} for r in runs], "airbench": AIRBENCH}


def ddp_scaling(env: Env | None = None, *, nprocs: int | None = None, device_type: str | None = None,
                rounds: int = 3, steps: int = 50, dataset: str = "fashionmnist", profile: str | None = None,
                timeout: float = 600.0) -> Effect | None:
    """The stack's DDP scaling efficiency: examples/s on N devices over N × examples/s on one.

    One-process and N-process launches alternate ``rounds`` times (real ``torchrun`` processes,
    NCCL on GPUs, gloo on CPUs); each round gives one efficiency (weak scaling: the per-device
    batch stays, the global batch grows N×), and the result is their median with its min-max range.

    Args:
        env: from ``cu.setup()``; its device and profile are the defaults.
        nprocs: processes (devices); every GPU here when None.
        device_type: ``"cuda"`` or ``"cpu"`` (tests run it with gloo on CPU processes).
        rounds: alternations of the 1- and N-process launches.
        steps: timed steps per launch (after 5 untimed ones).
        dataset: the dataset the ranks train on.
        profile: its sizes (the env's profile when None).
        timeout: seconds each launch may take.

    Returns:
        An :class:`~course_utils.results.labels.Effect` (efficiency, 1 = perfect), or None where there is
        not more than one GPU (printed).
    """
    import torch

    from ..procs.launch import torchrun

    device_type = device_type or (env.device.type if env is not None else "cpu")
    profile = profile or (env.profile if env is not None else "smoke")
    if device_type == "cuda":
        gpus = torch.cuda.device_count()
        nprocs = nprocs or gpus
        if gpus < 2 or nprocs < 2:
            print(f"DDP: not run (it needs more than one GPU; this machine has {gpus}); lesson 10 shows DDP's "
                  "mechanics and its scaling on CPU processes")
            return None
    elif nprocs is None or nprocs < 2:
        print(f"DDP: not run (it measures GPU scaling; this is a {device_type})")
        return None
    args = ["--dataset", dataset, "--profile", profile, "--device", device_type, "--steps", str(steps)]
    rates: dict[int, list[float]] = {1: [], nprocs: []}
    for _ in range(rounds):
        for n in (1, nprocs):
            job = torchrun(_RANK_SCRIPT, nproc_per_node=n, args=args, stream=False, timeout=timeout)
            rates[n].append(sum(r["examples_per_s"] for r in job.ranks))
    eff = [many / (nprocs * one) for one, many in zip(rates[1], rates[nprocs])]
    result = Effect(f"DDP scaling efficiency, {nprocs} {device_type} processes (examples/s over {nprocs}× one)",
                    statistics.median(eff), low=min(eff), high=max(eff), unit="",
                    interval=f"min-max over {rounds} alternating rounds", metric="throughput per device")
    print(f"{result}; one process {statistics.median(rates[1]):,.0f} examples/s, {nprocs}: "
          f"{statistics.median(rates[nprocs]):,.0f}")
    return result
