"""`make reference` plumbing on a CPU: no lesson runs here (tests/test_gpu.py is the GPU side)."""

import os
import sys
import time
from pathlib import Path

import pytest
import torch

from tools import make_reference as mr


def test_without_a_gpu_it_says_so_and_exits_0(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert mr.main(["--out", str(tmp_path)]) == 0
    assert "no CUDA GPU is visible here" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_a_cpu_profile_never_writes_into_the_committed_references(capsys):
    assert mr.main(["--profile", "smoke", "--lessons", "00"]) == 2
    assert "must not write into" in capsys.readouterr().err
    assert mr.main(["--profile", "cpu", "--out", str(mr.REFERENCE / "x")]) == 2


def test_lessons_are_chosen_by_prefix_or_path(tmp_path):
    everything = mr.select_lessons(None)
    assert everything and all(p.parent.parent.name == "solutions" for p in everything)
    assert [p.parent.name for p in mr.select_lessons(["00"])] == ["00_measuring"]
    nb = tmp_path / "97_x" / "97_x.ipynb"
    nb.parent.mkdir()
    nb.write_text("{}")
    assert mr.select_lessons([str(nb), "00", "00_m"])[0] == nb.resolve()
    assert len(mr.select_lessons(["00", "00_m"])) == 1
    with pytest.raises(SystemExit, match="no lesson in solutions/ starts with 99"):
        mr.select_lessons(["99"])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_a_lesson_past_its_limit_is_killed_with_what_it_started(tmp_path):
    # The child starts a grandchild in a session of its own, as Jupyter starts a kernel.
    pid_file = tmp_path / "pid"
    code = ("import subprocess, sys, time; "
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True); "
            f"open({str(pid_file)!r}, 'w').write(str(g.pid)); time.sleep(60)")
    t0 = time.perf_counter()
    status, seconds = mr.run_with_limit([sys.executable, "-c", code], limit=3)
    assert status is None and 3 <= seconds < 30 and time.perf_counter() - t0 < 30
    grandchild = int(pid_file.read_text())
    time.sleep(0.5)
    try:
        state = Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("gone", "Z", "X"), f"the grandchild {grandchild} still runs (state {state})"
    assert mr.run_with_limit([sys.executable, "-c", "pass"], limit=30)[0] == 0


def test_environment_names_the_torch_stack(tmp_path):
    assert any(line.startswith("torch==") for line in mr.stack_versions())
    env = mr.environment({"device": "cpu", "cpu": "x", "cpu_count": 2}, "smoke",
                         [{"lesson": "00_measuring", "ok": True, "seconds": 1.0, "error": None}], 1.0, 480)
    assert env["profile"] == "smoke" and env["lessons"][0]["lesson"] == "00_measuring"
    assert {"machine", "record", "nvidia_smi", "packages", "git_commit", "total_seconds"} <= set(env)
    assert os.environ["COURSE_PROFILE"] == "smoke"  # conftest's: nothing here ran a lesson
