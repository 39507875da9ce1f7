"""Student code that attacks the grader, through the real workflow: make collect, autograde, feedback.

Each attack is one student's submission of the fixture (tests/fixtures/99_fixture): the solution
with attack code added to the first answer cell, so it runs while nbgrader executes the notebook.
The course is a temporary copy with the real Makefile, graded with two workers at once (JOBS=2).
Every attack must be blocked (the harm did not happen) or named in that student's grade line, every
other submission graded in full, and no feedback file may hold hidden-test text in any encoding
tried here. Without the sandbox (the code before it, or ``UNSAFE=1``) the read, write, socket and
kill attacks succeed: ``test_without_the_sandbox_the_read_attack_succeeds`` shows that the checks can fail.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from grading_attacks import FIXTURE, attacks  # noqa: E402

from tools import sandbox  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.notebooks, pytest.mark.grading,
              pytest.mark.skipif(sandbox.find() is None, reason=sandbox.WHY_NOT)]


def make_course(root: Path) -> Path:
    """A temporary course: the real Makefile, config and grading tools, the fixture released."""
    for name in ("Makefile", "nbgrader_config.py", "requirements-lock.txt", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    (root / "tools").mkdir()
    for path in (ROOT / "tools").glob("*.py"):
        shutil.copy(path, root / "tools" / path.name)
    (root / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    # a copy, not a link: `make release` rewrites course_utils/results/lessons.json from the course's solutions
    shutil.copytree(ROOT / "course_utils", root / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests" / "fixtures" / FIXTURE, root / "solutions" / FIXTURE)
    (root / "results" / "m").mkdir(parents=True)
    (root / "results" / "m" / "04_mixed_precision.cpu.json").write_text('{"earlier": "run"}\n')
    facts = (ROOT / "course_utils" / "results" / "lessons.json").read_bytes()
    proc = make(root, "release")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (ROOT / "course_utils" / "results" / "lessons.json").read_bytes() == facts, "the course wrote the checkout"
    return root


def make(course: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """``make ARGS`` in the course, the venv taken as installed."""
    proc = subprocess.run(["make", "-o", ".venv/.installed", *args], cwd=course, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=1800)
    assert proc.returncode in (0, 1, 2), proc.stdout + proc.stderr
    return proc


def secrets(course: Path) -> list[str]:
    """Hidden-test lines of the fixture that appear nowhere else in it."""
    nb = nbformat.read(course / "solutions" / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    hidden, visible, inside = set(), set(), False
    for c in nb.cells:
        for line in c.source.splitlines():
            if "BEGIN HIDDEN TESTS" in line:
                inside = True
            elif "END HIDDEN TESTS" in line:
                inside = False
            else:
                (hidden if inside else visible).add(line.strip())
    return [s for s in hidden - visible if len(s) >= 12]


def decodings(text: str) -> list[str]:
    """The text and what it decodes to in the encodings an attacker would try."""
    out = [text, text[::-1], codecs.decode(text, "rot13")]
    squashed = re.sub(r"\s+", "", text)
    tokens = re.findall(r"[A-Za-z0-9+/=_-]{16,}", text) + [squashed]
    for token in tokens:
        for decode in (base64.b64decode, base64.urlsafe_b64decode, base64.b32decode, binascii.unhexlify):
            try:
                raw = decode(token + "=" * (-len(token) % 4) if decode is not binascii.unhexlify else token)
            except (ValueError, binascii.Error):
                continue
            for data in (raw, *([zlib.decompress(raw)] if raw[:1] == b"x" else [])):
                decoded = data.decode("utf-8", "ignore")
                out += [decoded, decoded[::-1]]
    return out


def listener() -> tuple[int, list[str]]:
    """A TCP server on this machine's loopback; the list collects who connected."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    seen: list[str] = []

    def accept() -> None:
        while True:
            try:
                conn, addr = server.accept()
            except OSError:
                return
            seen.append(str(addr))
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    return server.getsockname()[1], seen


def snapshot(course: Path) -> dict[str, bytes]:
    """The files an attacker wants to read or change."""
    paths = [course / "solutions" / FIXTURE / f"{FIXTURE}.ipynb", course / "gradebook.db",
             course / "submitted" / "alice" / FIXTURE / f"{FIXTURE}.ipynb", *sorted((course / "results").rglob("*"))]
    return {str(p): p.read_bytes() for p in paths if p.is_file()}


def sandbox_processes() -> list[int]:
    """PIDs of processes owned by a sandbox user (uid 60000 and up) on this machine."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if sandbox.UID_BASE <= os.stat(f"/proc/{pid}").st_uid < sandbox.UID_BASE + 1000:
                found.append(int(pid))
        except OSError:
            continue
    return found


def hand_in(course: Path, folder: Path, port: int, students: list[str]) -> None:
    """Write each student's notebook into FOLDER/<student>/99_fixture/ (what make collect reads)."""
    sol = nbformat.read(course / "solutions" / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in sol.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    code = attacks(course, port)
    for student in ["alice", *students]:  # the release as students get it, with the solution's answers
        nb = nbformat.read(course / "notebooks" / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
        for c in nb.cells:
            grade_id = c.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                c.source = answers[grade_id] + ("\n" + code[student] if student in code and
                                                grade_id == "speedup_answer" else "")
        (folder / student / FIXTURE).mkdir(parents=True)
        nbformat.write(nb, folder / student / FIXTURE / f"{FIXTURE}.ipynb")


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """The course after make collect, make autograde JOBS=2, make grades and make feedback."""
    course = make_course(tmp_path_factory.mktemp("course"))
    port, seen = listener()
    hand_in(course, tmp_path_factory.mktemp("inbox"), port, [])  # alice first: the one others try to read
    make(course, "collect", f"FROM={course.parent}")
    inbox = tmp_path_factory.mktemp("inbox")
    hand_in(course, inbox, port, list(attacks(course, port)))
    make(course, "collect", f"FROM={inbox}")
    before = snapshot(course)
    graded = make(course, "autograde", "JOBS=2", "TIMEOUT=30", COURSE_SANDBOX_MEMORY="1G", COURSE_SANDBOX_DISK="256M",
                  COURSE_SANDBOX_CPU_SECONDS="120")
    grades = make(course, "grades")
    feedback = make(course, "feedback")
    rows = {line.split()[0]: line for line in graded.stdout.splitlines() if line.startswith("  ") and "/6.0" in line}
    return {"course": course, "before": before, "after": snapshot(course), "seen": seen, "graded": graded,
            "grades": grades, "feedback": feedback, "rows": rows}


def autograded_text(course: Path, student: str) -> str:
    """Every output of a student's autograded notebook, as text ('' when there is none)."""
    path = course / "autograded" / student / FIXTURE / f"{FIXTURE}.ipynb"
    if not path.exists():
        return ""
    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(str(o.get("text", "")) + str(o.get("evalue", "")) for c in cells for o in c.get("outputs", []))


def test_every_sound_submission_is_graded_beside_the_attacks(attacked):
    rows = attacked["rows"]
    assert "5.0/6.0" in rows["alice"], attacked["graded"].stdout
    for student in attacks(attacked["course"], 0):
        assert student in rows, f"{student} has no grade line:\n{attacked['graded'].stdout}"


def test_nothing_outside_the_submission_can_be_read_or_written(attacked):
    course = attacked["course"]
    assert "ATTACK-READ 0 []" in autograded_text(course, "reader"), autograded_text(course, "reader")[-3000:]
    assert "ATTACK-WROTE" not in autograded_text(course, "writer")
    changed = [p for p in attacked["before"] if attacked["after"].get(p) != attacked["before"][p]
               and not p.endswith("gradebook.db")]  # grading itself writes the gradebook
    assert changed == [], changed
    assert (course / "results" / "m" / "04_mixed_precision.cpu.json").exists()


def test_no_socket_reaches_the_machine_or_beyond(attacked):
    assert attacked["seen"] == []
    assert "ATTACK-SOCKET" not in autograded_text(attacked["course"], "network")


def test_limits_stop_a_fork_bomb_a_memory_hog_and_a_disk_filler(attacked):
    rows = attacked["rows"]
    assert "MemoryError in speedup_answer" in rows["hog"], rows["hog"]
    assert "OSError in speedup_answer" in rows["filler"], rows["filler"]
    assert "CellTimeoutError" in rows["forker"] or "cell timed out" in rows["forker"], rows["forker"]
    assert sandbox_processes() == [], "sandbox processes outlived grading"


def test_the_parent_and_other_processes_are_out_of_reach(attacked):
    row = attacked["rows"]["killer"]  # it sees only its own kernel: no parent, no nbgrader to kill
    assert "graded" in row and "ProcessLookupError in speedup_answer" in row, row
    assert "5.0/6.0" in attacked["rows"]["alice"]


def test_no_feedback_holds_hidden_tests_in_any_encoding(attacked):
    course = attacked["course"]
    files = sorted((course / "feedback").rglob("*.html"))
    assert len(files) >= 8, attacked["feedback"].stdout
    hidden = secrets(course)
    assert hidden
    for path in files:
        text = html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")))
        for view in decodings(text):
            assert not [s for s in hidden if s in view], f"{path} holds hidden tests"
    named = [line for line in attacked["feedback"].stdout.splitlines() if "holding hidden-test text" in line]
    assert named and all(line.strip().startswith(f"leaker/{FIXTURE}:") for line in named), attacked["feedback"].stdout


def test_without_the_sandbox_the_read_attack_succeeds(tmp_path):
    """No bubblewrap on PATH: autograde refuses in one line; with UNSAFE=1 it grades, and the reader
    finds the solutions (what every submission could do before the sandbox)."""
    (tmp_path / "c").mkdir()
    course = make_course(tmp_path / "c")
    hand_in(course, tmp_path / "inbox", 0, ["reader"])
    (tmp_path / "bin").mkdir()
    os.symlink(shutil.which("make"), tmp_path / "bin" / "make")
    env = {"PATH": str(tmp_path / "bin")}  # bwrap is not found; the Makefile needs nothing else from PATH
    make(course, "collect", f"FROM={tmp_path / 'inbox'}", **env)
    refused = make(course, "autograde", **env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert [line for line in refused.stdout.splitlines() if "refused" in line] == [
        f"autograde refused: {sandbox.WHY_NOT}"]
    unsafe = make(course, "autograde", "UNSAFE=1", "JOBS=1", **env)
    assert "WITHOUT a sandbox" in unsafe.stdout, unsafe.stdout
    found = re.search(r"ATTACK-READ (\d+)", autograded_text(course, "reader"))
    assert found and int(found.group(1)) >= 2, autograded_text(course, "reader")[-2000:]
