"""cu.procs.sources: source written to files for other processes, and a function run on N real ranks."""

import importlib.util
import os
import subprocess
import sys

import pytest

import course_utils as cu
from course_utils.procs.sources import module_from_source, run_on_ranks


def test_a_module_from_source_is_dedented_written_and_importable(tmp_path):
    path = module_from_source('''
        def double(x):
            return 2 * x
    ''', "doubling", folder=tmp_path)
    assert path == tmp_path / "doubling.py" and path.read_text().startswith("def double(x):")
    spec = importlib.util.spec_from_file_location("doubling", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.double(21) == 42


def test_a_typo_fails_in_the_notebook_with_its_line_and_writes_nothing(tmp_path):
    with pytest.raises(SyntaxError) as caught:
        module_from_source("x = 1\ndef broken(:\n    pass\n", "broken", folder=tmp_path)
    assert caught.value.lineno == 2 and not (tmp_path / "broken.py").exists()
    with pytest.raises(ValueError, match="module name"):
        module_from_source("x = 1", "not-a-name", folder=tmp_path)
    with pytest.raises(ValueError, match="module name"):
        module_from_source("x = 1", "class", folder=tmp_path)


def test_the_default_folder_goes_when_python_exits_but_not_when_a_forked_child_does(tmp_path):
    code = ("import os, sys\n"
            "from course_utils.procs.sources import module_from_source\n"
            "path = module_from_source('x = 1', 'kept')\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    sys.exit(0)  # a child that exits normally runs the parent's atexit handlers\n"
            "os.waitpid(pid, 0)\n"
            "print(path, path.exists())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    path, existed = out[0], out[1]
    assert existed == "True", "a forked child's exit removed the parent's module"
    assert not os.path.exists(path), "the temporary folder outlived the process"


def test_run_on_ranks_refuses_a_script_without_the_marker():
    def f():
        return 1

    with pytest.raises(ValueError, match="{source}"):
        run_on_ranks(f, [], 2, script="print('no marker')")
    with pytest.raises(ValueError, match="at least 1"):
        run_on_ranks(f, [], 0, script="{source}")


JOB = """
import json, sys
import torch
import torch.distributed as dist
import course_utils as cu

{source}

dist.init_process_group("gloo")
cases = json.loads(open(sys.argv[1]).read())
cu.procs.launch.report({"rank": dist.get_rank(), "results": [summed(c) for c in cases]})
dist.destroy_process_group()
"""


def summed(case):
    """Every rank's rank + case, all-reduced: the same on every rank."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([float(dist.get_rank() + case)])
    dist.all_reduce(t)
    return t.item()


@pytest.mark.slow
def test_a_function_runs_on_real_ranks_and_each_rank_reports():
    ranks = run_on_ranks(summed, [0, 10], 2, script=JOB, timeout=120)
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["results"] == [1.0, 21.0] for r in ranks)  # (0 + 1) and (10 + 11): a real all-reduce


@pytest.mark.slow
def test_a_failing_rank_fails_the_call():
    def summed(case):  # the same name, broken: the script calls summed
        raise RuntimeError("broken on purpose")

    with pytest.raises(RuntimeError, match="broken on purpose|exited"):
        run_on_ranks(summed, [0], 2, script=JOB, timeout=120)


def test_cu_procs_sources_resolves():
    assert cu.procs.sources.module_from_source is module_from_source
