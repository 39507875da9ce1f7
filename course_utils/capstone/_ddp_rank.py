"""One rank of the capstone's DDP throughput run; ``torchrun`` starts this file once per rank.

Every rank builds the full stack (:func:`course_utils.capstone.script.build`, images decoded once onto its
device), wraps the model in DDP, trains on its own shard of the training images at the per-device
batch and reports its examples per second over ``--steps`` steps after ``--warmup`` untimed ones
(the clock starts and stops at a barrier, after a device synchronisation). Rank 0 writes the PNG
files first; the others wait for it.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    from course_utils.capstone import speedrun
    from course_utils.capstone.fixes import DeviceInfo, Stack, fast_config
    from course_utils.capstone.script import build
    from course_utils.data.loaders import batches
    from course_utils.procs import launch

    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="fashionmnist")
    p.add_argument("--profile", default="gpu")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = args.device == "cuda"
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo", timeout=timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        speedrun.prepare(args.dataset, args.profile, verbose=False)  # writes the PNG files once
    dist.barrier()
    prepared = speedrun.prepare(args.dataset, args.profile, verbose=False)
    config = fast_config(DeviceInfo.here(device))
    s = build(Stack.full(), prepared, seed=0, config=config, device=device)
    model = DDP(s.model, device_ids=[local] if cuda else None)
    X, y = s.source.X_train[rank::world], s.source.y_train[rank::world]
    feed = batches(X, y, min(s.batch_size, len(X)), seed=rank)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)
        dist.barrier()

    for _ in range(args.warmup):
        s.step(model, next(feed), s.optimizer, amp_dtype=s.amp, scaler=s.scaler)
    sync()
    start = time.perf_counter()
    for _ in range(args.steps):
        s.step(model, next(feed), s.optimizer, amp_dtype=s.amp, scaler=s.scaler)
    sync()
    elapsed = time.perf_counter() - start
    batch = min(s.batch_size, len(X))
    launch.report({"examples_per_s": args.steps * batch / elapsed, "seconds": elapsed, "steps": args.steps,
                   "batch_per_device": batch, "device": str(device)})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
