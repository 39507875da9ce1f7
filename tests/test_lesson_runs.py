"""Every lesson executed once more, in the smoke profile: offline on digits, with a forced verdict.

Two checks share one execution of each solution notebook, so that they cost one run:

- **Offline** (COURSE_DESIGN.md, Data): a learner offline, without root or off Debian has no
  Fashion-MNIST, and ``load_dataset`` falls back to scikit-learn's digits with a printed warning.
  ``COURSE_DATASET=digits`` forces that path; a lesson that loads data (found by grepping for
  ``load_dataset`` / ``image_folder``, so new lessons are picked up) must run clean on it and
  name digits.
- **Every reading branch** (issue: readings true to their numbers): one run shows only the
  verdicts this machine's noise picked. ``COURSE_FORCE_VERDICT`` (:mod:`course_utils.measure.forcing`,
  smoke profile only) makes every comparison earn the verdict forced, with consistent numbers;
  :func:`course_utils.reading` then also builds every other verdict's text, and logs the one it
  printed. The run must have no cell error, print at least one reading, and every reading it
  printed must be the forced verdict's and appear in the notebook's output.

Lesson number *i* gets verdict ``VERDICTS[(i + r) % 4]`` for each rotation *r* in
``COURSE_FORCE_ROTATIONS`` (``0`` in ``make test``: each verdict on five lessons, and every
branch's text built in every run; ``.ci/run`` asks for ``0,1,2,3``: every lesson under every
verdict). Two lessons run at a time, one thread each. Select with ``pytest -m offline``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

import course_utils as cu
from course_utils.data.datasets import DatasetFallbackWarning
from course_utils.measure.forcing import FORCE_ENV, FORCE_LOG_ENV, FORCEABLE
from course_utils.measure.rates import HIGHER, LOWER
from course_utils.measure.stats import UNRESOLVED
from tools.run_notebooks import Executed, execute_notebook

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.offline
LOADS_DATA = re.compile(r"\b(load_dataset|image_folder)\s*\(")
JOBS = 2  # lessons at once, on 2 cores
CELL_TIMEOUT_S = 120  # nbgrader_config.py's per-cell limit for autograding
ALL = sorted(ROOT.glob("solutions/[0-9]*/*.ipynb"))
FORCED = list(FORCEABLE)  # faster, slower, not_resolvable, control_failed
ROTATIONS = [int(r) for r in os.environ.get("COURSE_FORCE_ROTATIONS", "0").split(",") if r.strip()]


def loads_data(path: Path) -> bool:
    """Whether a notebook has a code cell that calls ``load_dataset`` or ``image_folder``."""
    nb = nbformat.read(path, as_version=4)
    return any(c.cell_type == "code" and LOADS_DATA.search(c.source) for c in nb.cells)


LESSONS = [p for p in ALL if loads_data(p)]
RUNS = [(p.parent.name, FORCED[(i + r) % len(FORCED)]) for r in ROTATIONS for i, p in enumerate(ALL)]


def expected_kinds(forced: str) -> set[str]:
    """What a reading may choose under ``forced``: the verdict, or a rate comparison's reading of it."""
    verdict = FORCEABLE[forced]
    rate = {"faster": LOWER, "slower": HIGHER}.get(forced, UNRESOLVED)
    return {verdict, rate}


def flat(text: str) -> str:
    """Text with every run of whitespace made one space (a reading may be wrapped when printed)."""
    return " ".join(text.split())


def outputs(run: Executed) -> str:
    """Everything the executed notebook shows as text: streams, and plain-text results."""
    parts = []
    for cell in run.nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            parts.append(o.get("text", "") if o.get("output_type") == "stream" else
                         "".join(o.get("data", {}).get("text/plain", "")))
    return flat("\n".join(parts))


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[tuple[str, str], tuple[Executed, list[dict]]]:
    """(slug, forced verdict) -> its run and the readings it logged; data lessons on digits."""
    tmp = tmp_path_factory.mktemp("lesson-runs")
    by_slug = {p.parent.name: p for p in ALL}

    def run(job: tuple[str, str]) -> tuple[Executed, list[dict]]:
        slug, forced = job
        out, log = tmp / f"{slug}.{forced}", tmp / f"{slug}.{forced}.jsonl"
        env = {"COURSE_DATASET": "digits", "COURSE_PROFILE": "smoke", "OMP_NUM_THREADS": "1",
               "COURSE_RESULTS_DIR": str(tmp / "results" / forced), FORCE_ENV: forced, FORCE_LOG_ENV: str(log)}
        done = execute_notebook(by_slug[slug], out, CELL_TIMEOUT_S, env=env)
        logged = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return done, logged

    t0 = time.perf_counter()
    with ThreadPoolExecutor(JOBS) as pool:
        runs = dict(zip(RUNS, pool.map(run, RUNS)))
    times = ", ".join(f"{slug} {r.seconds:.0f} s" for (slug, _), (r, _) in runs.items())
    print(f"\n{len(runs)} lesson runs in {time.perf_counter() - t0:.0f} s wall, {JOBS} at a time ({times})",
          file=sys.stderr)
    return runs


def test_the_data_loading_lessons_are_found():
    names = [p.parent.name for p in LESSONS]
    assert {"01_lr_schedules", "02_dataloader_workers", "17_input_normalization"} <= set(names), names


def test_every_verdict_is_forced_on_some_lesson():
    assert {forced for _, forced in RUNS} == set(FORCED)
    assert {slug for slug, _ in RUNS} == {p.parent.name for p in ALL}


@pytest.mark.slow  # executes every lesson
@pytest.mark.notebooks
@pytest.mark.parametrize(("lesson", "forced"), RUNS, ids=[f"{s}-{f}" for s, f in RUNS])
def test_lesson_runs_clean_and_prints_the_forced_readings(executed, lesson, forced):
    run, logged = executed[(lesson, forced)]
    assert not run.error, f"{lesson} failed with {FORCE_ENV}={forced} after {run.seconds:.0f} s:\n{run.error}"
    assert logged, f"{lesson} printed no reading through cu.reading under {FORCE_ENV}={forced}"
    wrong = [e for e in logged if e["kind"] not in expected_kinds(forced)]
    assert not wrong, (f"{lesson}: under {FORCE_ENV}={forced} these readings chose another verdict (a result "
                       f"the engine did not build, or a verdict read by hand): {wrong[:3]}")
    shown = outputs(run)
    missing = [e["text"][:120] for e in logged if flat(e["text"])[:80] not in shown]
    assert not missing, f"{lesson}: readings chosen but not shown in the output under {forced}: {missing[:3]}"


@pytest.mark.slow  # executes every data-loading lesson
@pytest.mark.notebooks
@pytest.mark.parametrize("lesson", [p.parent.name for p in LESSONS])
def test_lesson_runs_clean_on_digits(executed, lesson):
    (run, _), = [v for (slug, _), v in executed.items() if slug == lesson][:1]
    assert not run.error, f"{lesson} failed on digits after {run.seconds:.0f} s:\n{run.error}"
    loaded = re.findall(r"^dataset +(\w+)", run.stdout, flags=re.MULTILINE)
    assert loaded and set(loaded) == {"digits"}, f"{lesson} must load and name digits, printed: {loaded}"
    if "fashionmnist" in (ROOT / "solutions" / lesson / f"{lesson}.ipynb").read_text():
        assert "COURSE_DATASET=digits is set; using the offline default dataset 'digits'" in run.stdout

# --- the switch itself, and `make data` / `make test` ------------------------------------------

def test_course_dataset_forces_digits_with_a_printed_warning(tmp_path, monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("COURSE_DATASET=digits must not look for Fashion-MNIST")

    monkeypatch.setattr(cu.data.datasets, "_fashionmnist", never)
    monkeypatch.setenv("COURSE_DATASET", "digits")
    with pytest.warns(DatasetFallbackWarning, match="not loading fashionmnist: COURSE_DATASET=digits"):
        d = cu.load_dataset("fashionmnist", root=tmp_path, train_size=50, test_size=20)
    out = capsys.readouterr().out
    assert "WARNING: not loading fashionmnist: COURSE_DATASET=digits is set; using the offline default " \
           "dataset 'digits' instead" in out
    assert "dataset     digits: 50 train / 20 test" in out
    assert d.name == "digits" and d.input_shape == (1, 28, 28)  # Fashion-MNIST's shape, as on a real fallback
    cu.load_dataset("digits", root=tmp_path)
    assert "WARNING" not in capsys.readouterr().out  # asking for digits is no fallback
    monkeypatch.setenv("COURSE_DATASET", "fashion")
    with pytest.raises(ValueError, match="COURSE_DATASET='fashion' is not supported"):
        cu.load_dataset("digits", root=tmp_path)


def test_make_data_with_course_dataset_digits_succeeds_at_once(tmp_path, monkeypatch, capsys):
    from tools import get_data

    monkeypatch.setenv("COURSE_DATASET", "digits")
    monkeypatch.setattr(get_data, "apt_install", lambda: pytest.fail("no apt-get when digits are forced"))
    assert get_data.main(["--root", str(tmp_path)]) == 0
    assert "lessons will use scikit-learn's handwritten digits" in capsys.readouterr().out
    assert not os.listdir(tmp_path)


def test_make_test_gets_the_data_as_make_run_does():
    rules = {line.split(":")[0]: line.split("##")[0] for line in (ROOT / "Makefile").read_text().splitlines()
             if re.match(r"^[a-z-]+:", line)}
    assert " data" in rules["run"] and " data" in rules["test"]
