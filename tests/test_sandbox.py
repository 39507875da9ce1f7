"""The grading sandbox's parts, without nbgrader: what it binds, its limits, its CPUs, a real kernel.

The attacks through the whole workflow are in tests/test_grading_safety.py (``make test-grading``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools import sandbox  # noqa: E402
from tools.autograding import cpu_sets  # noqa: E402
from tools.grade_runs import digest, sandbox_slot  # noqa: E402


def test_sizes_and_limits_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_SANDBOX_MEMORY", "1.5G")
    monkeypatch.setenv("COURSE_SANDBOX_DISK", "256M")
    monkeypatch.setenv("COURSE_SANDBOX_PROCESSES", "64")
    limits = sandbox.Limits.from_env()
    assert (limits.memory, limits.disk, limits.processes) == (int(1.5 * 1024 ** 3), 256 * 1024 ** 2, 64)
    assert limits.cpu_seconds == sandbox.Limits().cpu_seconds


def test_cpu_shares_split_the_cpus_and_wrap_when_too_few():
    assert cpu_sets(2, [0, 1, 2, 3]) == [[0, 1], [2, 3]]
    assert cpu_sets(3, [0, 1, 2, 3]) == [[0], [1], [2, 3]]
    assert cpu_sets(3, [0, 1]) == [[0], [1], [0]]
    assert cpu_sets(1, [4, 5]) == [[4, 5]]


def test_the_course_folder_is_never_shown_to_the_sandbox():
    """Only the environment's folders and course_utils: never the course root or a folder above it."""
    for path in sandbox.python_paths():
        assert not ROOT.resolve().is_relative_to(path), f"{path} would show solutions/ and the gradebook"
    argv = sandbox.bwrap_argv("bwrap", submission=ROOT / "tests" / "fixtures" / "99_fixture", workdir="/sandbox/x",
                              ipc_dir=Path("/tmp/ipc"), private=Path("/tmp/private"), limits=sandbox.Limits(),
                              uid=60000, command=["python"])
    sources = [argv[i + 1] for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")]
    writable = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert writable == ["/tmp/ipc"], writable
    for source in sources:
        assert not ROOT.resolve().is_relative_to(Path(source).resolve()), source
        assert "solutions" not in Path(source).parts and "gradebook.db" not in source, source
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv[argv.index("--reuid=60000") - 1] == "/usr/bin/setpriv"


def test_the_kernel_environment_keeps_no_instructor_secret(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("COURSE_SANDBOX_SLOT", "3")
    monkeypatch.setenv("COURSE_PROFILE", "smoke")
    env = sandbox.kernel_env(sandbox.Limits(), [0, 1])
    assert "AWS_SECRET_ACCESS_KEY" not in env and "COURSE_SANDBOX_SLOT" not in env
    assert env["COURSE_PROFILE"] == "smoke" and env["OMP_NUM_THREADS"] in {"2", os.environ.get("OMP_NUM_THREADS")}
    assert env["HOME"].startswith(sandbox.SANDBOX) and env["COURSE_RESULTS_DIR"].startswith(sandbox.SANDBOX)


def test_the_kernelspec_runs_the_sandbox_launcher(tmp_path):
    spec = json.loads((sandbox.write_kernelspec(tmp_path) / "kernel.json").read_text())
    assert spec["argv"][1].endswith("sandbox_kernel.py") and spec["argv"][-1] == "{connection_file}"
    assert spec["interrupt_mode"] == "message"  # a signal would stop at bubblewrap


def test_two_graders_never_share_a_sandbox_user():
    with sandbox_slot() as first, sandbox_slot() as second:
        assert first != second


def test_a_run_belongs_to_one_hand_in(tmp_path):
    folder = tmp_path / "submitted" / "ann" / "99_fixture"
    folder.mkdir(parents=True)
    (folder / "99_fixture.ipynb").write_text("{}")
    first = digest("ann", "99_fixture", tmp_path)
    (folder / "99_fixture.ipynb").write_text("{ }")
    assert digest("ann", "99_fixture", tmp_path) != first


@pytest.mark.slow
@pytest.mark.notebooks
@pytest.mark.skipif(sandbox.find() is None, reason=sandbox.WHY_NOT)
def test_a_sandboxed_kernel_runs_code_and_sees_only_its_own_files(tmp_path):
    """A real kernel through the course-sandbox kernel spec, over ipc:// sockets, as nbgrader starts it."""
    import nbformat
    from nbclient import NotebookClient
    from traitlets.config import Config

    (tmp_path / "submitted" / "ann" / "99_fixture").mkdir(parents=True)
    (tmp_path / "submitted" / "ann" / "99_fixture" / "mine.txt").write_text("mine")
    run = tmp_path / "run" / "ann" / "99_fixture"
    run.mkdir(parents=True)
    (tmp_path / "ipc").mkdir()
    sandbox.write_kernelspec(tmp_path / "jupyter")
    cells = [f"import os; print(sorted(os.listdir('.')), os.path.exists({str(ROOT / 'solutions')!r}))",
             "open('scratch.txt', 'w').write('ok'); print(open('mine.txt').read())"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(tmp_path / "ipc" / "k")
    env = {"JUPYTER_PATH": str(tmp_path / "jupyter"), "COURSE_SANDBOX_SUBMITTED": str(tmp_path / "submitted")}
    old = {k: os.environ.get(k) for k in [*env, "COURSE_SANDBOX_SLOT"]}
    os.environ.update(env)
    try:
        with sandbox_slot() as slot:  # a sandbox user no grader running beside this test holds
            os.environ["COURSE_SANDBOX_SLOT"] = str(slot)
            NotebookClient(nb, kernel_name=sandbox.KERNEL_NAME, timeout=120, config=config).execute(cwd=str(run))
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    outputs = [o["text"] for c in nb.cells for o in c.outputs]
    assert outputs == ["['mine.txt'] False\n", "mine\n"], outputs
    assert not (tmp_path / "submitted" / "ann" / "99_fixture" / "scratch.txt").exists()
