"""Every test that executes a notebook is marked ``notebooks`` (and ``slow``), found from its source.

``pytest -m "not notebooks"`` is the quick run and ``make check`` leaves ``slow`` out, so a test that
executes a notebook without the marker would silently make both slow. A test *executes a notebook* when
its body, a module-level helper or fixture it uses (in its own module or imported from another test
module), reaches one of :data:`TRIGGERS`: a Jupyter kernel (nbclient, nbconvert, tools/run_notebooks,
tools/make_reference's child), nbgrader (tools/grading.py, ``make autograde``) or the mutants' runner
of a lesson's cells.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: Names (imported, called or read as an attribute) that run a notebook's cells.
NAMES = {
    "execute_notebook": "tools/run_notebooks.py runs a notebook in a Jupyter kernel",
    "run_notebook": "tools/run_notebooks.py runs a notebook in a Jupyter kernel",
    "NotebookClient": "nbclient runs a notebook in a Jupyter kernel",
    "ExecutePreprocessor": "nbconvert runs a notebook in a Jupyter kernel",
    "CHILD": "tools/make_reference.py's child runs a lesson in a Jupyter kernel",
}
#: Strings in a command (a program, a script or a make target) that run nbgrader or a lesson's cells.
COMMANDS = {
    "tools/grading.py": "the course's nbgrader tool (release, autograde, feedback)",
    "autograde": "`make autograde` runs nbgrader on the submissions",
    "autograde-slurm": "`make autograde-slurm` runs nbgrader on the submissions",
    "run.py": "tests/mutants/run.py runs a lesson's answer and test cells",
}
TRIGGERS = {**NAMES, **COMMANDS}
#: Calls whose string arguments are values, not commands (``monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")``).
NOT_COMMANDS = {"setenv", "setitem", "setattr", "getenv", "get"}


#: Tests that reach a trigger without executing anything, and why.
NOT_EXECUTING = {
    "test_autograde_log.py::test_nbgrader_run_leaves_the_notes_out_of_log_and_echo":
        "runs nbgrader_run.nbgrader with subprocess.Popen faked",
}


@dataclass
class Case:
    """A test function: its id, its marks and the triggers it reaches."""

    id: str
    marks: set[str]
    reaches: set[str] = field(default_factory=set)


def _marks(decorators: list[ast.expr]) -> set[str]:
    """``pytest.mark.X`` and ``pytest.mark.X(...)`` among decorators (or a ``pytestmark`` value)."""
    found = set()
    for d in decorators:
        d = d.func if isinstance(d, ast.Call) else d
        if isinstance(d, ast.Attribute) and isinstance(d.value, ast.Attribute) and d.value.attr == "mark":
            found.add(d.attr)
    return found


def _direct(node: ast.AST) -> tuple[set[str], set[str]]:
    """(triggers in ``node``'s source, names it loads): the names are followed to helpers and fixtures."""
    values = {id(a) for n in ast.walk(node) if isinstance(n, ast.Call)
              and (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")) in NOT_COMMANDS
              for a in n.args}
    triggers, names = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name | ast.Attribute | ast.alias):
            word = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.asname or n.name
            names.add(word)
            triggers |= {word} & NAMES.keys()
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in values:
            triggers |= {c for c in COMMANDS if n.value == c or n.value.endswith("/" + c)}
    return triggers, names


def analyse(sources: dict[str, str]) -> list[Case]:
    """Every test of ``sources`` (test module name -> source) with its marks and reached triggers."""
    functions: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
    imported: dict[tuple[str, str], tuple[str, str]] = {}
    module_marks: dict[str, set[str]] = {}
    tests: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, set[str]]] = []
    stems = {Path(name).stem: name for name in sources}
    for name, source in sources.items():
        tree = ast.parse(source)
        module_marks[name] = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[name, node.name] = node
                if node.name.startswith("test"):
                    tests.append((name, node, _marks(node.decorator_list)))
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                        tests.append((name, item, _marks(node.decorator_list) | _marks(item.decorator_list)))
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                      for t in node.targets):
                value = node.value
                module_marks[name] |= _marks(list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value])
            elif isinstance(node, ast.ImportFrom) and node.module in stems:
                for alias in node.names:
                    imported[name, alias.asname or alias.name] = (stems[node.module], alias.name)

    def reaches(module: str, node: ast.AST, seen: set[tuple[str, str]]) -> set[str]:
        triggers, names = _direct(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # fixtures by parameter name
            names |= {a.arg for a in node.args.args}
        for word in names:
            key = imported.get((module, word), (module, word))
            if key in functions and key not in seen:
                seen.add(key)
                triggers |= reaches(key[0], functions[key], seen)
        return triggers

    return [Case(f"{module}::{node.name}", module_marks[module] | marks, reaches(module, node, {(module, node.name)}))
            for module, node, marks in tests]


def problems(tests: list[Case], exempt: dict[str, str]) -> list[str]:
    """What is wrong with the marks of ``tests``: one line per test."""
    out = []
    for t in tests:
        if t.reaches and "notebooks" not in t.marks and t.id not in exempt:
            why = "; ".join(TRIGGERS[r] for r in sorted(t.reaches))
            out.append(f"{t.id} executes notebooks ({why}) but is not marked @pytest.mark.notebooks")
        if "notebooks" in t.marks and "slow" not in t.marks:
            out.append(f"{t.id} is marked notebooks but not slow (make check would run it)")
    return out


def test_every_test_that_executes_a_notebook_is_marked_notebooks_and_slow():
    sources = {p.name: p.read_text() for p in sorted(TESTS.glob("test_*.py"))}
    tests = analyse(sources)
    assert not problems(tests, NOT_EXECUTING), "\n".join(problems(tests, NOT_EXECUTING))
    by_id = {t.id: t for t in tests}
    for test_id in NOT_EXECUTING:
        assert test_id in by_id and by_id[test_id].reaches, f"stale entry in NOT_EXECUTING: {test_id}"
    assert sum("notebooks" in t.marks for t in tests) >= 10


UNMARKED = '''
import pytest
from tools.run_notebooks import execute_notebook

@pytest.fixture
def executed(tmp_path):
    return execute_notebook(tmp_path / "a.ipynb", tmp_path, timeout=60)

def run_one(path):
    return execute_notebook(path, path.parent, timeout=60)

def test_direct(tmp_path):
    execute_notebook(tmp_path / "a.ipynb", tmp_path, timeout=60)

def test_through_a_fixture(executed):
    assert executed

def test_through_a_helper(tmp_path):
    assert run_one(tmp_path)

def test_through_nbgrader(tmp_path):
    subprocess.run([sys.executable, "tools/grading.py", "autograde"], cwd=tmp_path)

def test_plain():
    assert 1 + 1 == 2

@pytest.mark.slow
@pytest.mark.notebooks
def test_marked(tmp_path):
    execute_notebook(tmp_path / "a.ipynb", tmp_path, timeout=60)

@pytest.mark.notebooks
def test_not_slow(tmp_path):
    execute_notebook(tmp_path / "a.ipynb", tmp_path, timeout=60)
'''


def test_the_check_names_an_unmarked_test_however_it_reaches_the_kernel():
    found = problems(analyse({"test_fake.py": UNMARKED}), {})
    assert [line.split(" ")[0] for line in found] == [
        "test_fake.py::test_direct", "test_fake.py::test_through_a_fixture", "test_fake.py::test_through_a_helper",
        "test_fake.py::test_through_nbgrader", "test_fake.py::test_not_slow"], found
    marked = "import pytest\npytestmark = [pytest.mark.slow, pytest.mark.notebooks]\n" + UNMARKED
    assert problems(analyse({"test_fake.py": marked}), {}) == []
    helper = "from test_fake import run_one\n\ndef test_elsewhere(tmp_path):\n    run_one(tmp_path)\n"
    found = problems(analyse({"test_fake.py": UNMARKED, "test_other.py": helper}), {})
    assert "test_other.py::test_elsewhere" in {line.split(" ")[0] for line in found}
