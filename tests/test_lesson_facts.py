"""A lesson's facts live in its solution notebook's metadata (tools/lesson_facts.py); the rest follows.

Every lesson has complete facts, consistent with its title cell and its code; the packaged
``course_utils/results/lessons.json`` (what ``CLAIMS`` reads, pip-installed) is fresh; the README's
lesson table is the metadata's; and the checks can fail.
"""

import copy
import json
import re
from pathlib import Path

import pytest
import tomllib

import course_utils as cu
from tools import estimate_gpu as eg
from tools import lesson_facts as lf

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = lf.solutions()


def test_every_lesson_is_read_and_the_datasets_are_the_library_s() -> None:
    assert len(SOLUTIONS) == 20, [p.name for p in SOLUTIONS]
    assert set(lf.DATASETS) == {*cu.data.datasets.DATASETS, "synthetic"}


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.parent.name)
def test_every_lesson_has_complete_consistent_facts(path: Path) -> None:
    problems = lf.problems(json.loads(path.read_text(encoding="utf-8")), path.parent.name)
    assert not problems, "\n".join(problems)


def test_lessons_json_is_fresh() -> None:
    fresh, diff = lf.check()
    assert fresh, f"course_utils/results/lessons.json is stale: run python tools/lesson_facts.py\n{diff}"
    assert lf.main(["--check"]) == 0


def test_lessons_json_ships_with_the_package_and_claims_read_it() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "lessons.json" in data.get("course_utils.results", []), "pyproject.toml must ship lessons.json"
    shipped = json.loads(lf.LESSONS_JSON.read_text(encoding="utf-8"))
    claims = cu.results.store.CLAIMS
    assert {k: v for k, v in claims.items() if k in shipped} == {k: v["claim"] for k, v in shipped.items()}
    assert set(claims) - set(shipped) == {"speedrun_cli"}, "a claim outside lessons.json besides the CLI's"


def test_the_readme_lesson_table_is_the_metadata_s() -> None:
    rows = [line for line in (ROOT / "README.md").read_text().splitlines() if re.match(r"^\| \d\d \| `", line)]
    want = lf.table()
    assert rows == want, "README's lesson table differs from the notebooks' metadata (python tools/lesson_facts.py " \
                         "--table prints it):\n" + "\n".join(f"- {a}\n+ {b}" for a, b in zip(rows, want) if a != b)


def test_the_estimator_reads_the_metadata() -> None:
    path = SOLUTIONS[0]
    gpu = lf.facts(path)["gpu"]
    assert eg.lesson_compute(path) == eg.Compute.from_facts(gpu) and eg.Compute.from_facts(gpu).to_facts() == gpu


@pytest.fixture
def lesson() -> dict:
    """Lesson 11 as JSON, to break."""
    return json.loads((ROOT / "solutions/11_zero_grad_set_to_none/11_zero_grad_set_to_none.ipynb").read_text())


@pytest.mark.parametrize(("change", "expected"), [
    (lambda f: f.update(claim=f["claim"] + " (37 % faster)"), "the claim's 37 not in the title cell"),
    (lambda f: f.pop("summary"), "fact 'summary' is missing"),
    (lambda f: f.update(claim=""), "fact 'claim' is empty"),
    (lambda f: f.update(status="done"), "status 'done' is not one of"),
    (lambda f: f.update(dataset="synthetic"), "dataset 'synthetic', but the code loads ['fashionmnist']"),
    (lambda f: f.update(dataset="imagenet"), "dataset 'imagenet' is not one of"),
    (lambda f: f.update(extra=1), "unknown fact 'extra'"),
    (lambda f: f["gpu"].pop("forks"), "gpu sizing figures: missing ['forks']"),
    (lambda f: f["gpu"].update(tflop="3"), "gpu sizing figures: tflop: not a number"),
    (lambda f: f.update(gpu=eg.DEFAULT.to_facts()), "the skeleton's assumed ones"),
])
def test_the_facts_check_can_fail(lesson: dict, change, expected: str) -> None:
    broken = copy.deepcopy(lesson)
    change(broken["metadata"]["course"])
    problems = "\n".join(lf.problems(broken, "11_zero_grad_set_to_none"))
    assert expected in problems, problems
    assert not lf.problems(lesson, "11_zero_grad_set_to_none")
    del broken["metadata"]["course"]
    assert "no 'course' facts" in "\n".join(lf.problems(broken, "11_zero_grad_set_to_none"))


def test_the_freshness_check_can_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "lessons.json"
    lessons = lf.shipped()
    lessons["11_zero_grad_set_to_none"]["status"] = "planned"
    stale.write_text(lf.render(lessons))
    fresh, diff = lf.check(target=stale)
    assert not fresh and '-  "status": "planned"' in diff and '+  "status": "ready"' in diff, diff
