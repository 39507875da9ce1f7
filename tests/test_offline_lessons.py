"""Every lesson that loads a dataset runs clean offline, on digits (COURSE_DESIGN.md, Data).

A learner offline, without root or off Debian has no Fashion-MNIST: ``load_dataset`` falls back to
scikit-learn's digits with a printed warning. ``COURSE_DATASET=digits`` forces that path, so this
test executes each solution notebook that loads data (found by grepping for ``load_dataset`` /
``image_folder``, so new lessons are picked up) in the smoke profile, two at a time, with results
saved to a temporary folder, and checks that no cell fails and that the output names digits.
Select it with ``pytest -m offline``.
"""

from __future__ import annotations

import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

import course_utils as cu
from course_utils.data import DatasetFallbackWarning
from tools.run_notebooks import Executed, execute_notebook

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.offline
LOADS_DATA = re.compile(r"\b(load_dataset|image_folder)\s*\(")
JOBS = 2  # lessons at once: the test budget is 90 s on 2 cores
CELL_TIMEOUT_S = 120  # nbgrader_config.py's per-cell limit for autograding


def loads_data(path: Path) -> bool:
    """Whether a notebook has a code cell that calls ``load_dataset`` or ``image_folder``."""
    nb = nbformat.read(path, as_version=4)
    return any(c.cell_type == "code" and LOADS_DATA.search(c.source) for c in nb.cells)


LESSONS = sorted(p for p in ROOT.glob("solutions/[0-9]*/*.ipynb") if loads_data(p))


def execute(src: Path, out_dir: Path) -> Executed:
    """Run ``src`` headless in ``out_dir`` with the executor of ``make run``."""
    return execute_notebook(src, out_dir, CELL_TIMEOUT_S)


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> dict[str, Executed]:
    """slug -> its run; the kernels inherit COURSE_DATASET=digits and a temporary results folder."""
    tmp = tmp_path_factory.mktemp("offline-lessons")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COURSE_DATASET", "digits")
        mp.setenv("COURSE_PROFILE", "smoke")
        mp.setenv("OMP_NUM_THREADS", "1")  # two kernels on two cores: one thread each, not four
        mp.setenv("COURSE_RESULTS_DIR", str(tmp / "results"))
        t0 = time.perf_counter()
        with ThreadPoolExecutor(JOBS) as pool:
            runs = dict(zip([p.parent.name for p in LESSONS],
                            pool.map(lambda p: execute(p, tmp / p.parent.name), LESSONS)))
        wall = time.perf_counter() - t0
    times = ", ".join(f"{slug} {run.seconds:.0f} s" for slug, run in runs.items())
    print(f"\n{len(runs)} lessons on digits in {wall:.0f} s wall, {JOBS} at a time ({times})", file=sys.stderr)
    return runs


def test_the_data_loading_lessons_are_found():
    names = [p.parent.name for p in LESSONS]
    assert {"01_lr_schedules", "02_dataloader_workers", "17_input_normalization"} <= set(names), names


@pytest.mark.slow  # executes every data-loading lesson
@pytest.mark.parametrize("lesson", [p.parent.name for p in LESSONS])
def test_lesson_runs_clean_on_digits(executed, lesson):
    run = executed[lesson]
    assert not run.error, f"{lesson} failed on digits after {run.seconds:.0f} s:\n{run.error}"
    loaded = re.findall(r"^dataset +(\w+)", run.stdout, flags=re.MULTILINE)
    assert loaded and set(loaded) == {"digits"}, f"{lesson} must load and name digits, printed: {loaded}"
    if "fashionmnist" in (ROOT / "solutions" / lesson / f"{lesson}.ipynb").read_text():
        assert "COURSE_DATASET=digits is set; using the offline default dataset 'digits'" in run.stdout


# --- the switch itself, and `make data` / `make test` ------------------------------------------

def test_course_dataset_forces_digits_with_a_printed_warning(tmp_path, monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("COURSE_DATASET=digits must not look for Fashion-MNIST")

    monkeypatch.setattr(cu.data, "_fashionmnist", never)
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
