"""``cu.doctor(script)``: load a training script, probe it, run the checks, time the fixes, report.

The steps, each in its own module: :mod:`~course_utils.doctor.contract` (load the script, build a
run), :mod:`~course_utils.doctor.probe` (measure it), :mod:`~course_utils.doctor.checks` (decide),
:mod:`~course_utils.doctor.trial` (time each fix with the engine) and
:mod:`~course_utils.doctor.report`. The script's files are only read; torch's global switches
(anomaly detection, ``cudnn.benchmark``, grad mode) are as they were when the doctor returns.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import torch

from .checks import CHECKS, Check, Finding
from .contract import DoctorError, _one_line, build, load_script
from .probe import Probe, probe
from .report import Report
from .trial import time_fixes

__all__ = ["PROBE_STEPS", "diagnose"]

#: Steps the probe times, per profile (after one untimed step).
PROBE_STEPS: dict[str, int] = {"smoke": 6, "cpu": 12, "gpu": 20}


@contextlib.contextmanager
def _torch_switches_kept() -> Iterator[None]:
    """What a script turns on globally (anomaly detection, a profiler, cudnn.benchmark, threads) is undone after."""
    saved = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled(), torch.backends.cudnn.benchmark,
             torch.is_grad_enabled(), torch.get_num_threads())
    profiling = torch.autograd._profiler_enabled()
    try:
        yield
    finally:
        if not profiling:  # a profiler the script started and never stopped (its make_training ran once an arm)
            for _ in range(100):
                if not torch.autograd._profiler_enabled():
                    break
                torch.autograd._disable_profiler()
            torch.autograd.profiler._is_profiler_enabled = False
        torch.set_anomaly_enabled(saved[0], saved[1])
        torch.backends.cudnn.benchmark = saved[2]
        torch.set_grad_enabled(saved[3])
        torch.set_num_threads(saved[4])


def _as_check(check: Check | Callable[[Probe], Finding | None]) -> Check:
    if isinstance(check, Check):
        return check
    if callable(check):
        return Check(getattr(check, "__name__", "my_check"), "—", check)
    raise TypeError(f"a check must be a cu.doctor.Check or a function probe -> Finding | None, got "
                    f"{type(check).__name__}")


def _run_check(check: Check, found: Probe) -> Finding | None:
    try:
        finding = check.run(found)
    except NotImplementedError:  # an exercise not finished yet: cu.needs says which
        raise
    except Exception as e:  # noqa: BLE001 -- a learner's check: its error, named
        raise DoctorError(f"the check {check.name!r} raised {_one_line(e)}") from None
    if finding is not None and not isinstance(finding, Finding):
        raise DoctorError(f"the check {check.name!r} returned {type(finding).__name__}, not a Finding or None")
    return finding


def diagnose(script: str | Path, *, device: torch.device | str | None = None, measure: bool = True,
             save: bool = True, progress: bool | None = None, checks: Iterable[Check] | None = None,
             extra_checks: Iterable[Check | Callable[[Probe], Finding | None]] = (), budget: float | None = None,
             root: str | Path | None = None, verbose: bool = False) -> Report:
    """Diagnose a training script: what slows it, each fix timed on this machine.

    Args:
        script: the path of a script that defines ``make_training(device)`` (see
            :mod:`course_utils.doctor.contract`).
        device: where to run it; :func:`~course_utils.devices.choose_device` when None.
        measure: time each fix the doctor can apply with the engine (False: the findings only, quick).
        save: write the report as JSON and Markdown under the results folder.
        progress: show a progress bar while timing (default: yes).
        checks: the checks to run (default :data:`~course_utils.doctor.checks.CHECKS`).
        extra_checks: more checks, e.g. a learner's own function ``probe -> Finding | None``.
        budget: seconds per comparison; the profile's (``cu.compare``'s) when None.
        root: the results folder for ``save`` (default: the course's).
        verbose: print the report.

    Returns:
        A :class:`~course_utils.doctor.report.Report`.

    Raises:
        DoctorError: the script cannot be diagnosed (no such file, no ``make_training``, its loader or step
            raised, the model on another device …): a one-line message.
    """
    from ..devices import check_device
    from ..env import environment_record, get_profile

    started = time.perf_counter()
    try:
        device = check_device(device)
    except (TypeError, ValueError) as e:
        raise DoctorError(str(e)) from None
    profile = get_profile(device)
    chosen = [_as_check(c) for c in (CHECKS if checks is None else checks)] + [_as_check(c) for c in extra_checks]
    with _torch_switches_kept():
        module = load_script(script)
        run = build(module, device)
        found = probe(run, steps=PROBE_STEPS[profile])
        run.close()
        del run
        findings = [f for c in chosen if (f := _run_check(c, found)) is not None]
        stacked = time_fixes(module, device, found, findings, budget=budget, progress=progress) if measure else None
    report = Report(script=Path(script).name, device=str(device), profile=profile, findings=findings,
                    checks=[c.name for c in chosen], stacked=stacked, env=environment_record(device),
                    probe={"step_ms": found.step_median_s * 1e3, "data_share": found.data_share,
                           "optimizer_share": found.optimizer_share, "syncs_per_step": found.syncs_per_step,
                           "steps": found.steps, "threads": torch.get_num_threads(),
                           "loader": {k: str(v) for k, v in found.loader.items()},
                           "optimizer": found.optimizer, "heavy_dtypes": dict(found.heavy_dtypes)})
    report.seconds = time.perf_counter() - started
    if save:
        report.save(root)
    if verbose:
        print(report)
    return report
