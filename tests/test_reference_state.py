"""`make reference` across windows: resuming by code digest, a budget that skips what cannot finish, the commit
without .git (tools/reference_state.py, tools/make_reference.py). Kernel-free: the lessons run in a stand-in."""

import json

import pytest
from test_make_reference import SAVE, fake_lesson, use_fake_runner

from tools import make_reference as mr
from tools import reference_state as rs

COUNT = "import os; open(os.environ['PROBE_RUNS'], 'a').write('{slug}\\n')"


@pytest.fixture
def lessons(tmp_path, monkeypatch):
    """Three stand-in lessons that save a result and log that they ran; the machine id of this machine."""
    mid = use_fake_runner(monkeypatch, tmp_path)
    monkeypatch.setenv("PROBE_RUNS", str(tmp_path / "runs.log"))
    paths = [fake_lesson(tmp_path / "lessons", slug, [COUNT.format(slug=slug), SAVE.format(slug=slug)])
             for slug in ("95_a", "96_b", "97_c")]
    return paths, mid, tmp_path


def run(tmp_path, paths, *extra):
    return mr.main(["--profile", "smoke", "--out", str(tmp_path / "out"), "--build", str(tmp_path / "build"),
                    "--lesson-timeout", "60", *extra, "--lessons", *map(str, paths)])


def ran(tmp_path):
    log = tmp_path / "runs.log"
    lines = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return lines


def test_a_second_run_of_the_same_code_keeps_what_the_first_saved(lessons, monkeypatch):
    paths, mid, tmp = lessons
    assert run(tmp, paths[:2]) == 0 and ran(tmp) == ["95_a", "96_b"]
    # the next window: the same code on the same machine runs only what is missing
    assert run(tmp, paths) == 0 and ran(tmp) == ["97_c"]
    env = json.loads((tmp / "out" / mid / "environment.json").read_text())
    by = {e["lesson"]: e for e in env["lessons"]}
    assert [e["lesson"] for e in env["lessons"]] == ["95_a", "96_b", "97_c"]
    assert by["95_a"].get("resumed") and by["95_a"]["ok"] and not by["97_c"].get("resumed")
    assert env["code_digest"] == rs.code_digest(mr.ROOT)
    # --no-resume runs everything; a change of code does too
    assert run(tmp, paths, "--no-resume") == 0 and ran(tmp) == ["95_a", "96_b", "97_c"]
    monkeypatch.setattr(rs, "code_digest", lambda root: "another-code")
    assert run(tmp, paths) == 0 and ran(tmp) == ["95_a", "96_b", "97_c"]


def test_a_lesson_whose_file_is_gone_is_run_again(lessons):
    paths, mid, tmp = lessons
    assert run(tmp, paths[:2]) == 0 and ran(tmp) == ["95_a", "96_b"]
    (tmp / "out" / mid / "96_b.smoke.json").unlink()
    assert run(tmp, paths[:2]) == 0 and ran(tmp) == ["96_b"]


def test_resume_from_another_root_copies_its_files(lessons, capsys):
    paths, mid, tmp = lessons
    assert run(tmp, paths[:1]) == 0 and ran(tmp) == ["95_a"]
    committed = tmp / "committed"
    (tmp / "out").rename(committed)
    assert mr.main(["--profile", "smoke", "--saved", "--resume-from", str(committed)]) == 0
    assert "1 lesson(s) saved" in capsys.readouterr().out
    assert mr.main(["--profile", "smoke", "--saved", "--resume-from", str(tmp / "empty")]) == 1
    assert run(tmp, paths[:2], "--resume-from", str(committed)) == 0 and ran(tmp) == ["96_b"]
    assert (tmp / "out" / mid / "95_a.smoke.json").is_file() and (tmp / "out" / mid / "96_b.smoke.json").is_file()


def test_a_budget_skips_a_lesson_whose_estimate_does_not_fit_and_runs_a_smaller_one(lessons, monkeypatch):
    paths, mid, tmp = lessons
    monkeypatch.setattr(mr, "lesson_estimates", lambda notebooks, profile: {"95_a": 1.0, "96_b": 500.0, "97_c": 2.0})
    assert run(tmp, paths, "--budget", "60") == 1  # one lesson skipped: not a complete reference
    assert ran(tmp) == ["95_a", "97_c"]
    env = json.loads((tmp / "out" / mid / "environment.json").read_text())
    by = {e["lesson"]: e for e in env["lessons"]}
    assert by["96_b"]["error"].startswith("skipped: out of time (estimate 500 s") and by["97_c"]["ok"]


def test_the_estimates_are_for_the_gpu_profile_and_cover_every_lesson():
    assert mr.lesson_estimates(mr.select_lessons(None), "smoke") == {}
    gpu = mr.lesson_estimates(mr.select_lessons(None), "gpu")
    assert sorted(gpu) == [p.parent.name for p in mr.select_lessons(None)] and all(s > 0 for s in gpu.values())


def test_the_commit_comes_from_git_else_from_the_caller(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_GIT_COMMIT", raising=False)
    assert rs.commit(tmp_path)["git_commit"] is None  # no .git, nothing given: said so
    assert "unknown" in rs.commit(tmp_path)["commit_from"]
    monkeypatch.setenv("COURSE_GIT_COMMIT", "abc123")
    monkeypatch.setenv("COURSE_GIT_DIRTY", "1")
    assert rs.commit(tmp_path) == {"git_commit": "abc123", "git_dirty": True, "commit_from": "COURSE_GIT_COMMIT"}
    if (mr.ROOT / ".git").exists():
        assert rs.commit(mr.ROOT)["commit_from"] == ".git"


def test_the_code_digest_follows_the_code_and_not_the_results(tmp_path):
    (tmp_path / "course_utils").mkdir()
    (tmp_path / "course_utils" / "a.py").write_text("x = 1\n")
    (tmp_path / "results" / "reference").mkdir(parents=True)
    first = rs.code_digest(tmp_path)
    (tmp_path / "results" / "reference" / "r.json").write_text("{}")
    assert rs.code_digest(tmp_path) == first
    (tmp_path / "course_utils" / "a.py").write_text("x = 2\n")
    assert rs.code_digest(tmp_path) != first
