"""The house has floors: no import cycles in course_utils/ or tools/, and storage never imports presentation.

Every module is parsed with ``ast`` (nothing is imported), and every import counts: at module
level, inside functions and methods, under ``if TYPE_CHECKING:``, relative (``from .plots import
x``, ``from . import plots``) and absolute (``import course_utils.results.plots``, ``from tools.grading
import y``). An edge ``a -> b`` means module ``a`` names module ``b`` in an import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("course_utils", "tools")
#: Storage modules: what saves and names results. They must not reach presentation (tables, charts).
STORAGE = ("course_utils.results.store", "course_utils.results.labels")
PRESENTATION = ("course_utils.results.report", "course_utils.results.plots")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _resolve(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    """The absolute module a ``from ... import`` names (before its imported names are considered)."""
    if not node.level:
        return node.module or ""
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(name: str, path: Path, known: set[str], *, type_checking: bool = True) -> dict[str, int]:
    """The course modules ``name`` imports, each with the line of its first import.

    ``type_checking=False`` leaves out the imports under ``if TYPE_CHECKING:``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = set()
    if not type_checking:
        for block in ast.walk(tree):
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test):
                skipped |= {id(n) for stmt in block.body for n in ast.walk(stmt)}
    is_package = path.name == "__init__.py"
    found: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        # ``import course_utils.results.plots`` / ``from course_utils.results.plots import x``: the deepest known one
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.setdefault(target, line)

    for node in ast.walk(tree):  # every level: module, function, method, TYPE_CHECKING block
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, name, is_package)
            for alias in node.names:  # ``from . import plots`` / ``from course_utils import report``
                sub = f"{base}.{alias.name}" if base else alias.name
                add(sub if sub in known else base, node.lineno)
    return found


def import_graph() -> tuple[dict[str, dict[str, int]], dict[str, Path]]:
    mods = modules()
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}, mods


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (or a self-loop), each as one cycle path.

    Tarjan's algorithm; for each group, one concrete cycle through it is returned, in import order.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_cycle_in(group, graph) for group in groups]


def _cycle_in(group: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest cycle through the group's first module, staying inside the group (breadth first)."""
    members, start = set(group), group[0]
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                return [*paths[v], start]
            if w in members and w not in paths:
                paths[w] = [*paths[v], w]
                todo.append(w)
    return group  # unreachable for a strongly connected group


def describe_cycle(cycle: list[str], graph: dict[str, dict[str, int]], mods: dict[str, Path]) -> str:
    steps = [f"{a} -> {b} ({mods[a].relative_to(ROOT)}:{graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
    return " -> ".join(cycle) + "\n      " + "\n      ".join(steps)


def test_the_parser_sees_every_kind_of_import(tmp_path):
    """The graph builder itself: relative, absolute, function-level and TYPE_CHECKING imports all count."""
    files = {
        "course_utils": ("__init__.py", "from . import a\n"),
        "course_utils.a": ("a.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import X\n"),
        "course_utils.b": ("b.py", "def f():\n    import course_utils.c\n"),
        "course_utils.c": ("c.py", "class K:\n    def g(self):\n        from course_utils import a as alias\n"),
        "course_utils.d": ("d.py", "from .a import thing\nimport os\n"),
    }
    (tmp_path / "course_utils").mkdir()
    for file, text in files.values():
        (tmp_path / "course_utils" / file).write_text(text)
    graph = {n: imports_of(n, tmp_path / "course_utils" / file, set(files)) for n, (file, _) in files.items()}
    assert {n: set(g) for n, g in graph.items()} == {
        "course_utils": {"course_utils.a"}, "course_utils.a": {"course_utils.b"},
        "course_utils.b": {"course_utils.c"}, "course_utils.c": {"course_utils.a"},
        "course_utils.d": {"course_utils.a"}}
    assert find_cycles(graph) == [["course_utils.a", "course_utils.b", "course_utils.c", "course_utils.a"]]


def test_there_are_modules_to_check():
    graph, mods = import_graph()
    assert {"course_utils.results.store", "course_utils.results.report", "tools.make_reference",
            "tools.run_notebooks"} <= set(mods)
    assert "course_utils.results.labels" in graph["course_utils.results.store"], "store names results through labels"


def test_no_import_cycles_in_course_utils_or_tools():
    graph, mods = import_graph()
    cycles = find_cycles(graph)
    if cycles:
        pytest.fail(f"{len(cycles)} import cycle(s); cut each at one of its edges (module-level, function-level and "
                    "TYPE_CHECKING imports all count):\n  "
                    + "\n  ".join(describe_cycle(c, graph, mods) for c in cycles), pytrace=False)


def test_storage_does_not_import_presentation():
    graph, mods = import_graph()

    def reach(start: str) -> dict[str, list[str]]:
        paths, todo = {start: [start]}, [start]
        while todo:
            v = todo.pop()
            for w in graph[v]:
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    todo.append(w)
        return paths

    wrong = []
    for storage in STORAGE:
        paths = reach(storage)
        wrong += [" -> ".join(paths[p]) for p in PRESENTATION if p in paths]
    assert not wrong, "storage reaches presentation (results and labels must not import report or plots):\n" + \
        "\n".join(wrong)


#: The lowest floor: top-level modules that every subpackage may use.
FLOOR = {"units", "env", "hardware", "devices", "progress", "_moved"}  # _moved: 0.1 names, until 0.3
#: What each subpackage may import besides the floor and itself (course_utils/README.md draws it).
#: ``capstone`` may import anything; nothing imports ``capstone``.
LAYERS: dict[str, set[str]] = {
    "data": set(),
    "procs": set(),
    "counters": set(),
    "training": {"data"},
    "measure": {"procs"},
    "lesson": {"counters"},
    "results": {"measure", "counters", "training"},
    "calibration": {"data", "training", "measure", "procs", "results"},
    "doctor": {"data", "training", "measure", "procs", "results", "counters", "lesson"},
    "capstone": {"data", "training", "measure", "procs", "results", "counters", "lesson", "calibration", "doctor"},
}


def _unit(module: str) -> str | None:
    """The layer a course_utils module belongs to: its subpackage, or its own name on the floor."""
    parts = module.split(".")
    return parts[1] if parts[0] == "course_utils" and len(parts) > 1 else None


def runtime_imports(path: Path, name: str, known: set[str]) -> dict[str, int]:
    """Like :func:`imports_of`, without imports under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    return imports_of(name, path, known, type_checking=False)


def layer_violations(graph: dict[str, dict[str, int]], mods: dict[str, Path]) -> list[str]:
    """Every import from a module to a layer its own may not use, with the rule it breaks."""
    wrong = []
    for a, targets in graph.items():
        ua = _unit(a)
        if ua is None:
            continue
        allowed = FLOOR if ua in FLOOR else FLOOR | LAYERS[ua] | {ua}
        rule = f"the floor imports only {sorted(FLOOR)}" if ua in FLOOR else \
            f"{ua} may import only {sorted(allowed - {ua})}"
        wrong += [f"{a} -> {b} ({mods[a].relative_to(ROOT)}:{line}): {rule}"
                  for b, line in targets.items() if _unit(b) not in allowed | {None}]
    return wrong


def test_each_subpackage_imports_only_the_layers_below_it():
    mods = {n: p for n, p in modules().items() if n.startswith("course_utils.")}
    known = set(modules())
    graph = {n: runtime_imports(p, n, known) for n, p in mods.items()}
    wrong = layer_violations(graph, mods)
    assert not wrong, "imports across the layers (course_utils/README.md):\n" + "\n".join(wrong)
    assert not [a for a, t in graph.items() if any(_unit(b) == "capstone" for b in t) and _unit(a) != "capstone"]


def test_the_layer_check_can_fail():
    mods = {"course_utils.measure.x": ROOT / "course_utils/measure/x.py", "course_utils.units": ROOT / "u.py"}
    graph = {"course_utils.measure.x": {"course_utils.results.plots": 3}, "course_utils.units": {"course_utils.env": 1,
             "course_utils.measure.x": 2}}
    wrong = layer_violations(graph, mods)
    assert len(wrong) == 2 and "measure may import only" in wrong[0] and "the floor imports only" in wrong[1]


def test_every_subpackage_is_in_the_layer_table_and_the_wheel():
    subpackages = {p.parent.name for p in (ROOT / "course_utils").glob("*/__init__.py")}
    assert subpackages == set(LAYERS), "a subpackage without a layer rule (tests/test_imports.py LAYERS)"
    listed = ROOT.joinpath("pyproject.toml").read_text(encoding="utf-8")
    assert all(f'"course_utils.{p}"' in listed for p in subpackages), "pyproject.toml's packages miss a subpackage"
    top = {p.stem for p in (ROOT / "course_utils").glob("*.py")} - {"__init__"}
    assert top == FLOOR, f"top-level modules are the floor only: {sorted(top - FLOOR)}"
