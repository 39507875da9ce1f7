"""``python -m course_utils.doctor my_train.py``: the doctor in a terminal (``make doctor SCRIPT=...``)."""

from __future__ import annotations

import argparse
import os
import sys

from .contract import ENTRY, DoctorError

USAGE = f"""The script defines {ENTRY}(device) and returns a dict:
  model       an nn.Module on `device`           optimizer   over the model's parameters
  loss_fn     loss_fn(output, target) -> loss    loader      re-iterable (inputs, targets) batches
and optionally train_step(model, batch, optimizer, loss_fn) -> loss, evaluate(model) -> float, scheduler
(no other key: a misspelt one is an error, not ignored).
The script is imported, not run: its `if __name__ == "__main__":` block does not train. Its files are
only read. Examples: course_utils/doctor/examples/ (make doctor runs naive_train.py)."""


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the doctor, print the report; 2 with one line on stderr for bad input."""
    parser = argparse.ArgumentParser(prog="python -m course_utils.doctor", description=(
        "Diagnose a PyTorch training script: what slows it, each fix timed on this machine."),
        epilog=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("script", help="the training script (a .py file that defines make_training(device))")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1, mps (default: the best one here)")
    parser.add_argument("--profile", choices=("smoke", "cpu", "gpu"), default=None,
                        help="sizes the probe and each comparison's budget (default: COURSE_PROFILE, else by device)")
    parser.add_argument("--budget", type=float, default=None, help="seconds per comparison (default: the profile's)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads on a CPU (default 1, as the lessons: CPU timings on a shared machine are "
                             "far steadier); 0 keeps torch's default")
    parser.add_argument("--no-measure", action="store_true", help="the findings only, no fix timed (seconds)")
    parser.add_argument("--no-save", action="store_true", help="do not write the report under results/")
    parser.add_argument("--out", default=None, help="results folder (default: the course's results/)")
    args = parser.parse_args(argv)
    if args.profile:
        os.environ["COURSE_PROFILE"] = args.profile
    if args.budget is not None and args.budget <= 0:
        print(f"doctor: --budget must be a positive number of seconds, got {args.budget:g}", file=sys.stderr)
        return 2
    if args.threads < 0:
        print(f"doctor: --threads must be 0 (torch's default) or more, got {args.threads}", file=sys.stderr)
        return 2
    import torch

    from ..devices import check_device
    from .run import diagnose

    try:
        if args.threads and check_device(args.device).type == "cpu":
            torch.set_num_threads(args.threads)
    except (TypeError, ValueError) as e:
        print(f"doctor: {e}", file=sys.stderr)
        return 2
    try:
        report = diagnose(args.script, device=args.device, measure=not args.no_measure, save=not args.no_save,
                          budget=args.budget, root=args.out)
    except DoctorError as e:
        print(f"doctor: {e}", file=sys.stderr)
        return 2
    print(report)
    for path in report.saved:
        print(f"saved       {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
