"""Save every measurement with its environment record; find the saved and the reference results.

Layout, keyed by machine, lesson **and profile**, so that no run replaces another profile's::

    results/<machine-id>/<notebook>.<profile>.json            your runs (git-ignored)
    results/reference/<machine-id>/<notebook>.<profile>.json  GPU reference runs (committed)

The profile is part of the file name rather than a folder, so one machine's results stay in one
folder and the reference layout ``results/reference/<machine-id>/*.json`` is unchanged; a file
copied alone still says its profile. A smoke run (CI, autograding) therefore never overwrites a
cpu or gpu result, and a run replaces only the earlier run of the same lesson, machine and profile.

The reference runs also ship inside the installed package (``course_utils/reference_results/``,
package data mapped from ``results/reference/`` in pyproject.toml), so a learner who installed
``course_utils`` with pip in Colab, with no checkout, sees them too; a checkout's copy takes
precedence. :mod:`course_utils.results.report` reads everything back as the scoreboard.

Storage does not import presentation: what a result means in words (:class:`Effect`,
:func:`~course_utils.results.labels.describe`) comes from :mod:`course_utils.results.labels`, and ``Effect``
stays importable from here.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..env import PROFILES, Env
from ..hardware import machine_id
from .labels import Effect, describe, interval_kind

__all__ = ["CLAIMS", "Effect", "load_result", "machine_id", "packaged_references_dir", "profile_rank",
           "reference_files", "references", "result_files", "results_dir", "save"]


def _lesson_claims() -> dict[str, str]:
    """Each lesson's claim from ``lessons.json``, package data written from the solution notebooks' metadata."""
    lessons = json.loads(Path(__file__).with_name("lessons.json").read_text(encoding="utf-8"))
    return {slug: facts["claim"] for slug, facts in lessons.items()}


#: The sources' claim per lesson (their figures, not ours), shown beside every measured effect. A lesson's
#: claim lives in its solution notebook's metadata (``course.claim``); tools/lesson_facts.py copies it into
#: lessons.json, which ships with the package (no notebooks in Colab). The command line's is no lesson's.
CLAIMS: dict[str, str] = {
    **_lesson_claims(),
    "speedrun_cli": "make speedrun, the capstone's stack: airbench 94 % on CIFAR-10 in 2.59 s (A100, fixed epochs, "
                    "mean of 200 runs), another method than this first crossing of a held-out target",
}


def _course_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / "nbgrader_config.py").exists() and (folder / "course_utils").is_dir():
            return folder
    return None


def results_dir() -> Path:
    """Return the results folder.

    ``$COURSE_RESULTS_DIR`` when set (``make autograde`` and the test suite set it to a temporary
    folder); else, while nbgrader executes the notebook (``$NBGRADER_EXECUTION``, e.g. an
    instructor's own ``nbgrader autograde``), a folder in the system's temporary directory, so a
    student's run never lands in the course's results; else ``results/`` of the course checkout
    that contains the working directory; else ``./results``.
    """
    if os.environ.get("COURSE_RESULTS_DIR"):
        return Path(os.environ["COURSE_RESULTS_DIR"])
    if os.environ.get("NBGRADER_EXECUTION"):
        return Path(tempfile.gettempdir()) / "course-results-nbgrader"
    root = _course_root(Path.cwd().resolve())
    return (root / "results") if root else Path("results")


def _as_json(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    return value


def save(notebook: str, env: Env, *, headline: str, root: str | Path | None = None,
         **measurements: Any) -> Path:
    """Save a notebook's measurements with its environment record as JSON.

    Args:
        notebook: the lesson slug, e.g. ``"04_mixed_precision"``.
        env: the :class:`~course_utils.env.Env` from ``cu.setup()``.
        headline: the name of the measurement the scoreboard shows for this lesson.
        root: results folder; :func:`results_dir` when omitted.
        **measurements: named results (``Comparison``, ``Effect``, ``TargetResult``, numbers …); one
            that is None (an exercise not finished yet, a figure this device does not give) is left
            out, and the line printed says so.

    Returns:
        The path written, ``<root>/<machine-id>/<notebook>.<profile>.json``: it replaces only an
        earlier run of the same lesson on the same machine in the same profile.

    Raises:
        ValueError: ``headline`` names none of ``measurements`` or one that is None, ``notebook``
            is not a slug, or the profile is not one of :data:`~course_utils.env.PROFILES`.
    """
    left_out = sorted(name for name, value in measurements.items() if value is None)
    if headline in left_out:
        raise ValueError(f"the headline measurement {headline!r} is None (an exercise not finished?): nothing saved")
    measurements = {name: value for name, value in measurements.items() if value is not None}
    if headline not in measurements:
        raise ValueError(f"headline {headline!r} is not one of the measurements: {sorted(measurements)}")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", notebook):
        raise ValueError(f"notebook must be a lesson slug such as '04_mixed_precision', got {notebook!r}")
    if env.profile not in PROFILES:
        raise ValueError(f"env.profile must be one of {', '.join(PROFILES)}, got {env.profile!r}")
    folder = Path(root) if root is not None else results_dir()
    path = folder / machine_id(env.record) / f"{notebook}.{env.profile}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "notebook": notebook,
        "profile": env.profile,
        "machine": machine_id(env.record),
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "claim": CLAIMS.get(notebook),
        "env": env.record,
        "headline": headline,
        "measurements": _as_json(measurements),
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)  # an interrupted save leaves the earlier result whole, never half a file
    print(f"saved       {path}" + (f" (left out, None: {', '.join(left_out)})" if left_out else ""))
    return path


def profile_rank(profile: str | None) -> int:
    """Order of a profile by size: smoke < cpu < gpu; an unknown profile ranks below smoke."""
    return PROFILES.index(profile) if profile in PROFILES else -1


def load_result(path: Path) -> dict[str, Any] | None:
    """A saved result, or None.

    None comes with a warning naming the file when it cannot be read, and silently when it is
    another JSON file (such as the ``environment.json`` beside the reference runs).
    """
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(d, dict) and "notebook" not in d and "measurements" not in d:
            return None
        d["measurements"][d["headline"]]  # noqa: B018 - the scoreboard needs the headline
        d["notebook"], d["machine"]  # noqa: B018
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as e:
        print(f"WARNING: skipping unreadable result {path}: {type(e).__name__}: {e}")
        return None
    return d


def result_files(root: str | Path | None = None) -> list[Path]:
    """Your saved results under ``root`` (:func:`results_dir` by default), references excluded."""
    folder = Path(root) if root is not None else results_dir()
    return sorted(p for p in folder.glob("*/*.json") if p.parent.name != "reference")


def packaged_references_dir() -> Path | None:
    """The reference results shipped inside the installed package, or None when there are none.

    A wheel has them in ``course_utils/reference_results/``; an editable install maps that
    package to the checkout's ``results/reference/``.
    """
    here = Path(__file__).resolve().parents[1] / "reference_results"
    if here.is_dir():
        return here
    try:
        spec = importlib.util.find_spec("course_utils.reference_results")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations and Path(locations[0]).is_dir() else None


def reference_files(root: str | Path | None = None, notebook: str | None = None) -> list[Path]:
    """Reference result files: ``<root>/reference/<machine-id>/*.json``, then the packaged ones.

    A packaged file is left out when the checkout has a file of the same machine and name (the
    checkout's copy takes precedence: it is the newer one while references are being recorded).
    ``notebook`` keeps only that lesson's files.
    """
    folders = [(Path(root) if root is not None else results_dir()) / "reference"]
    packaged = packaged_references_dir()
    if packaged is not None and packaged.resolve() != folders[0].resolve():
        folders.append(packaged)
    found: dict[tuple[str, str], Path] = {}
    for folder in folders:
        for path in sorted(folder.glob("*/*.json")):
            stem = path.name.removesuffix(".json")
            if notebook is not None and stem != notebook and stem.rsplit(".", 1)[0] != notebook:
                continue
            found.setdefault((path.parent.name, path.name), path)
    return list(found.values())


def references(notebook: str, root: str | Path | None = None, *, verbose: bool = True) -> list[dict[str, Any]]:
    """Load the reference results of ``notebook`` (runs on GPUs) and print their headlines.

    Args:
        notebook: the lesson slug, e.g. ``"04_mixed_precision"``.
        root: results folder whose ``reference/`` is read first; :func:`results_dir` by default.
            The references shipped with the installed package are read too (the checkout's copy
            of a file wins).
        verbose: print one line per reference (or say that there is none yet).

    Returns:
        The saved results (dicts as written by :func:`save`), one per machine and profile.
    """
    found = [d for d in map(load_result, reference_files(root, notebook)) if d and d["notebook"] == notebook]
    if verbose:
        if not found:
            print(f"No reference result for {notebook} has been recorded yet "
                  "(reference runs on a GPU are committed under results/reference/).")
        for d in found:
            env = d.get("env", {})
            m = d["measurements"][d["headline"]]
            print(f"reference   {env.get('gpu_name') or env.get('cpu')}, torch {env.get('torch')}, "
                  f"profile {d.get('profile')}: {describe(m)} ({interval_kind(m)})")
    return found
