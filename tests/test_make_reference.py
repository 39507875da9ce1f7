"""`make reference` plumbing on a CPU: no lesson runs here (tests/test_gpu.py is the GPU side)."""

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import torch

from tools import make_reference as mr
from tools import reference_lesson, reference_record, reference_setup

from clock import retried


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
@pytest.mark.clock  # killed within a second of its 3 s limit: wall time, retried
def test_a_lesson_past_its_limit_is_killed_with_what_it_started(tmp_path):
    # The child starts a grandchild in a session of its own, as Jupyter starts a kernel.
    def run(seed):
        pid_file = tmp_path / f"pid{seed}"
        code = ("import subprocess, sys, time; "
                "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True); "
                f"open({str(pid_file)!r}, 'w').write(str(g.pid)); time.sleep(60)")
        t0 = time.perf_counter()
        status, seconds = reference_lesson.run_with_limit([sys.executable, "-c", code], limit=3)
        return status, seconds, time.perf_counter() - t0, pid_file

    status, seconds, wall, pid_file = retried(
        run, lambda r: r[0] is None and 3 <= r[1] < 3 + reference_lesson.GRACE_S + 1 and r[2] < 5)
    assert status is None and 3 <= seconds < 3 + reference_lesson.GRACE_S + 1 and wall < 5
    grandchild = int(pid_file.read_text())
    time.sleep(0.5)
    try:
        state = Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("gone", "Z", "X"), f"the grandchild {grandchild} still runs (state {state})"
    assert reference_lesson.run_with_limit([sys.executable, "-c", "pass"], limit=30)[0] == 0


def test_the_profiles_are_the_course_s():
    import course_utils as cu

    assert tuple(mr.PROFILES) == tuple(cu.env.PROFILES)


def test_a_python_without_torch_is_told_so(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    assert mr.main(["--profile", "smoke", "--out", "/nonexistent"]) == 2
    assert "has no torch" in capsys.readouterr().err


def test_environment_names_the_torch_stack(tmp_path):
    assert any(line.startswith("torch==") for line in reference_record.stack_versions())
    env = reference_record.environment({"device": "cpu", "cpu": "x", "cpu_count": 2}, "smoke",
                         [{"lesson": "00_measuring", "ok": True, "seconds": 1.0, "error": None}], 1.0, 480)
    assert env["profile"] == "smoke" and env["lessons"][0]["lesson"] == "00_measuring"
    assert {"machine", "record", "nvidia_smi", "packages", "git_commit", "total_seconds"} <= set(env)
    assert os.environ["COURSE_PROFILE"] == "smoke"  # conftest's: nothing here ran a lesson


# --- the notebook executor: offline means the wheelhouse only ---------------------------------------------------------

class FakePip:
    """Records every command; plans the given packages, installs nothing (the test says what then imports)."""

    def __init__(self, plan=("nbclient==0.11.0", "pyzmq==27.3.0")):
        self.calls, self.plan = [], list(plan)

    def __call__(self, cmd, env=None, **kwargs):
        self.calls.append((list(cmd), dict(env or {})))
        if "--dry-run" in cmd:
            report = Path(cmd[cmd.index("--report") + 1])
            report.write_text(json.dumps({"install": [
                {"metadata": {"name": n.split("==")[0], "version": n.split("==")[1]}} for n in self.plan]}))
        return subprocess.CompletedProcess(cmd, 0, "", "")


def test_a_python_with_the_executor_installs_nothing():
    pip = FakePip()
    assert reference_setup.ensure_kernel(run=pip)["how"] == "present"  # this venv has nbclient & co.
    assert pip.calls == []


def test_offline_without_a_wheelhouse_refuses_and_runs_no_pip(monkeypatch, tmp_path):
    monkeypatch.setattr(reference_setup, "missing_modules", lambda names: list(names))
    monkeypatch.setenv("COURSE_OFFLINE", "1")
    pip = FakePip()
    with pytest.raises(reference_setup.SetupError, match="COURSE_OFFLINE is set.*make wheelhouse"):
        reference_setup.ensure_kernel(wheelhouse=tmp_path / "none", site=tmp_path / "site", run=pip)
    assert pip.calls == []


@pytest.mark.parametrize("offline", ["1", ""])
def test_with_a_wheelhouse_pip_never_sees_a_registry(monkeypatch, tmp_path, offline):
    # Online or not: with wheels at hand, every pip command is --no-index --find-links wheelhouse, and
    # pip reads no configuration (this machine's config names extra indexes and find-links).
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    (wheelhouse / "nbclient-0.11.0-py3-none-any.whl").write_bytes(b"")
    installed = []
    monkeypatch.setattr(reference_setup, "missing_modules", lambda names: [] if installed else list(names))
    monkeypatch.setenv("COURSE_OFFLINE", offline)
    monkeypatch.setenv("PIP_INDEX_URL", "https://registry.invalid/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://registry.invalid/more")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    pip = FakePip()

    def run(cmd, env=None, **kw):
        if "--dry-run" not in cmd:
            installed.append(cmd)
        return pip(cmd, env=env, **kw)

    done = reference_setup.ensure_kernel(wheelhouse=wheelhouse, site=tmp_path / "site", run=run)
    assert done["how"] == "installed" and done["packages"] == pip.plan
    assert len(pip.calls) == 2
    for cmd, env in pip.calls:
        assert cmd[:3] == [sys.executable, "-m", "pip"] and "install" in cmd
        assert "--no-index" in cmd and cmd[cmd.index("--find-links") + 1] == str(wheelhouse)
        assert env["PIP_CONFIG_FILE"] == os.devnull and env["PIP_NO_INDEX"] == "1"
        assert not any(k in env for k in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"))
    install = pip.calls[1][0]
    assert "--no-deps" in install and install[-2:] == pip.plan  # only what pip's plan said is missing
    target = install[install.index("--target") + 1]
    assert target == str(tmp_path / "site" / f"py{sys.version_info[0]}{sys.version_info[1]}")
    assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == target


def test_make_reference_never_runs_apt_and_the_makefile_skips_the_venv_when_told(monkeypatch):
    for module in (mr, reference_lesson, reference_record, reference_setup):
        source = Path(module.__file__).read_text()
        assert '"apt-get"' not in source and "get_data" not in source, module.__name__
    env = {k: v for k, v in os.environ.items() if k not in ("PY", "COURSE_OFFLINE", "MAKEFLAGS", "MAKELEVEL")}
    root = Path(mr.__file__).resolve().parents[1]

    def dry(*args, **extra):
        done = subprocess.run(["make", "-n", "-C", str(root), *args], env={**env, **extra}, capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if not line.startswith("make")]

    assert dry("reference", PY="python3") == ["python3 tools/make_reference.py  "]
    assert dry("reference", "PY=/usr/bin/python3", "A=00") == ["/usr/bin/python3 tools/make_reference.py --lessons 00 "]
    offline = dry("reference", COURSE_OFFLINE="1")
    assert len(offline) == 1 and offline[0].endswith("tools/make_reference.py  "), offline
    assert not any("pip" in line or "get_data" in line or "apt" in line for line in offline)


# --- the data: never a reference on digits ---------------------------------------------------------------------------

def test_a_gpu_run_on_the_digits_fallback_is_refused(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("COURSE_DATASET", "digits")
    assert mr.main(["--out", str(tmp_path), "--lessons", "00"]) == 2
    err = capsys.readouterr().err
    assert "COURSE_DATASET=digits" in err and "never saved on it" in err
    assert list(tmp_path.iterdir()) == []


def test_carried_gz_files_are_found_through_a_relative_course_data(monkeypatch, tmp_path):
    import gzip

    from course_utils.data.fashion_mnist import FILES

    carried = tmp_path / "carried"
    carried.mkdir()
    for name, (size, magic, count) in FILES.items():  # tiny stand-ins are rejected: the real headers and sizes
        with gzip.open(carried / f"{name}.gz", "wb", compresslevel=1) as f:
            f.write(magic.to_bytes(4, "big") + count.to_bytes(4, "big") + bytes(size - 8))
    monkeypatch.setattr(reference_setup, "ROOT", tmp_path)
    monkeypatch.setattr(reference_setup, "DATA_BUILD", tmp_path / "build" / "data")
    monkeypatch.setenv("COURSE_DATA", "carried")
    monkeypatch.delenv("COURSE_DATASET", raising=False)
    assert reference_setup.data_folder() == carried
    root, note = reference_setup.ensure_fashionmnist()
    assert root == tmp_path / "build" / "data" and "carried" in note
    assert sorted(p.name for p in carried.iterdir()) == sorted(f"{n}.gz" for n in FILES), "the carried folder grew"


# --- partial runs keep what finished; the watchdog kills at the limit -------------------------------------------------

def fake_lesson(folder, slug, cells):
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
        for i, c in enumerate(cells)]}
    path = folder / slug / f"{slug}.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(nb))
    return path


#: A kernel-free stand-in for the ``--run-one`` child (Jupyter's start-up would dominate these tests): it runs
#: each cell with exec, and writes the notebook after every cell, as the real child does.
FAKE_RUNNER = """
import contextlib, io, json, os, sys, time
args = sys.argv[1:]
build, src, result = args[args.index("--build") + 1], args[args.index("--run-one") + 1], args[-1]
nb = json.load(open(src))
slug = os.path.basename(os.path.dirname(src))
out = os.path.join(build, slug, os.path.basename(src))
os.makedirs(os.path.dirname(out), exist_ok=True)
t0, scope = time.perf_counter(), {}
for cell in nb["cells"]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(cell["source"], scope)
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": buf.getvalue()}]
    json.dump(nb, open(out + ".part", "w")); os.replace(out + ".part", out)
json.dump({"ok": True, "seconds": time.perf_counter() - t0, "error": ""}, open(result, "w"))
"""

SAVE = ("import os, pathlib; d = pathlib.Path(os.environ['COURSE_RESULTS_DIR']) / os.environ['PROBE_MID']; "
        "d.mkdir(parents=True, exist_ok=True); (d / '{slug}.smoke.json').write_text('{{}}'); print('saved')")


def use_fake_runner(monkeypatch, tmp_path):
    """Run lessons in :data:`FAKE_RUNNER` (no kernel), on the real data; return this machine's id (``PROBE_MID``)."""
    import course_utils as cu

    runner = tmp_path / "runner.py"
    runner.write_text(FAKE_RUNNER)
    monkeypatch.setattr(mr, "CHILD", [sys.executable, "-S", str(runner)])
    mid = cu.results.store.machine_id(cu.env.environment_record())
    monkeypatch.setenv("PROBE_MID", mid)
    monkeypatch.delenv("COURSE_DATASET", raising=False)
    return mid


@pytest.mark.clock  # a 5.5 s deadline and 3 s lesson limits: which lessons run is wall time (retried)
def test_a_partial_run_keeps_what_finished(monkeypatch, tmp_path):
    import nbformat

    mid = use_fake_runner(monkeypatch, tmp_path)
    lessons = tmp_path / "lessons"
    good = fake_lesson(lessons, "97_good", [
        "import os, pathlib; print(sorted(p.name for p in pathlib.Path(os.environ['PROBE_OUT']).rglob('*.json')))",
        SAVE.format(slug="97_good")])
    digits = fake_lesson(lessons, "98_digits", [
        "print(\"WARNING: could not load fashionmnist; using the offline default dataset 'digits' instead\")",
        SAVE.format(slug="98_digits")])
    hangs = fake_lesson(lessons, "99_hangs", [SAVE.format(slug="99_hangs"), "print('first cell done')",
                                              "import time; time.sleep(60)"])
    late = fake_lesson(lessons, "99_late", ["print('never')"])
    limit = 3

    def run(seed):
        attempt = tmp_path / f"try{seed}"
        out, archive = attempt / "out", attempt / "ref.tar.gz"
        monkeypatch.setenv("PROBE_OUT", str(out))
        t0 = time.perf_counter()
        code = mr.main(["--profile", "smoke", "--out", str(out), "--build", str(attempt / "build"),
                        "--lesson-timeout", str(limit), "--budget", "5.5", "--archive", str(archive),
                        "--lessons", *map(str, (good, digits, hangs, late))])
        return code, time.perf_counter() - t0, out, archive

    def in_time(result):
        code, seconds, out, _ = result
        env_file = out / mid / "environment.json"
        if not env_file.exists():
            return False
        by = {x["lesson"]: x for x in json.loads(env_file.read_text())["lessons"]}
        skipped = [by.get(slug, {}).get("error") == "skipped: out of time"
                   for slug in ("97_good", "98_digits", "99_hangs", "99_late")]
        return (code == 1 and seconds < 8 and skipped == [False, False, False, True]
                and limit <= by["99_hangs"]["seconds"] < limit + reference_lesson.GRACE_S + 1)

    code, seconds, out, archive = retried(run, in_time)
    assert code == 1 and seconds < 8
    folder = out / mid
    env = json.loads((folder / "environment.json").read_text())
    by = {x["lesson"]: x for x in env["lessons"]}
    assert env["complete"] and [x["lesson"] for x in env["lessons"]] == ["97_good", "98_digits", "99_hangs", "99_late"]
    assert by["97_good"]["ok"] and (folder / "97_good.smoke.json").exists() and (folder / "97_good.ipynb").exists()
    # the environment record was there before the first lesson ran
    first = nbformat.read(folder / "97_good.ipynb", as_version=4).cells[0].outputs[0]["text"]
    assert "environment.json" in first
    # a lesson that fell back to digits is kept aside, never as a reference
    assert not by["98_digits"]["ok"] and "digits" in by["98_digits"]["error"]
    assert (folder / "failed" / "98_digits.smoke.json").exists() and not (folder / "98_digits.smoke.json").exists()
    # killed at its limit, not later; the cells it finished are kept (aside), with a note
    assert not by["99_hangs"]["ok"] and "killed" in by["99_hangs"]["error"]
    assert limit <= by["99_hangs"]["seconds"] < limit + reference_lesson.GRACE_S + 1
    killed = nbformat.read(folder / "failed" / "99_hangs.ipynb", as_version=4)
    assert killed.cells[1].outputs[0]["text"] == "first cell done\n" and "killed" in killed.cells[-1].source
    assert (folder / "failed" / "99_hangs.smoke.json").exists()
    # no time left for the last one: skipped, and said so
    assert by["99_late"]["error"] == "skipped: out of time"
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {f"{mid}/environment.json", f"{mid}/97_good.smoke.json", f"{mid}/failed/99_hangs.ipynb"} <= names


@pytest.mark.slow  # a real Jupyter kernel executes a notebook
@pytest.mark.notebooks
@pytest.mark.clock  # the kernel must be up and the first cell done within 25 s: retried on a busy machine
def test_the_real_child_writes_the_notebook_after_every_cell(tmp_path):
    # The real --run-one child (nbclient and a kernel): once the first cell has finished, the notebook
    # on disk holds its output while the second still runs; killed then, the first cell stays.
    import nbformat

    src = fake_lesson(tmp_path / "lessons", "97_slow", ["print('one')", "import time; time.sleep(60)"])

    def run(seed):
        build = tmp_path / f"build{seed}"
        executed = build / "97_slow" / "97_slow.ipynb"
        proc = subprocess.Popen([*mr.CHILD, "--build", str(build), "--lesson-timeout", "60",
                                 "--run-one", str(src), str(tmp_path / f"r{seed}.json")])
        try:
            deadline = time.monotonic() + 25
            while not executed.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            on_disk = executed.exists()
            if on_disk:
                time.sleep(0.3)
            return executed, on_disk, proc.poll() is None
        finally:
            tree = [*reversed(reference_lesson._descendants(proc.pid)), proc.pid]
            reference_lesson._signal(tree, 9)
            proc.wait()

    executed, on_disk, running = retried(run, lambda r: r[1])
    assert on_disk, "no notebook on disk after the first cell"
    assert running, "the child ended: the second cell did not run"
    nb = nbformat.read(executed, as_version=4)
    assert nb.cells[0].outputs[0]["text"] == "one\n" and nb.cells[1].outputs == []


@pytest.mark.clock  # killed within a second of its 2 s limit (and the grace): wall time, retried
def test_the_watchdog_kills_at_the_limit_even_a_child_that_ignores_sigterm():
    code = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); "
            "time.sleep(60)")
    status, seconds = retried(lambda s: reference_lesson.run_with_limit([sys.executable, "-c", code], limit=2),
                              lambda r: r[0] is None and 2 <= r[1] < 2 + reference_lesson.GRACE_S + 1)
    assert status is None and 2 <= seconds < 2 + reference_lesson.GRACE_S + 1


def test_the_gpu_window_script_parses_and_keeps_its_output_under_out(tmp_path):
    script = Path(mr.__file__).resolve().parent / "gpu_window.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "DRY_RUN", "STAGES")}
    assert subprocess.run(["bash", str(script)], env=env, capture_output=True, timeout=30).returncode == 2  # no $OUT
    done = subprocess.run(["bash", str(script)], env={**env, "DRY_RUN": "1", "OUT": str(tmp_path / "out"),
                                                     "STAGES": "facts", "PY": sys.executable},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["facts.txt", "window.log"]
    facts = (tmp_path / "out" / "facts.txt").read_text()
    assert "torch " in facts and "nbclient==" in facts and "wheelhouse:" in facts
