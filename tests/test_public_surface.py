"""One public surface: ``cu.`` holds what the lessons use, every name has one path, and no reference rots.

The references checked are every ``cu.<dotted>`` in the lessons (code and prose), the committed answers
under tests/mutants, and the Markdown docs, and every ``course_utils.<dotted>`` in the library's,
the tools' and the tests' text (docstrings and ``:func:`` cross-references included). Each must
resolve by import and attribute access, without a DeprecationWarning.
"""

from __future__ import annotations

import importlib
import json
import re
import types
import warnings
from pathlib import Path

import pytest

import course_utils as cu
from course_utils import _moved

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(ROOT.glob("solutions/[0-9][0-9]_*/*.ipynb"))
CU_REF = re.compile(r"(?<![\w.])cu((?:\.[A-Za-z_]\w*)+)")
COURSE_UTILS_REF = re.compile(r"(?<![\w./])course_utils((?:\.[A-Za-z_]\w*)+)")
#: Names of sources that are not references (prose, file names): ``cu.save("x.json")`` is matched up to ``save``.
NOT_NAMES = {"py", "json", "md", "ipynb"}
#: Files whose ``course_utils.a`` and ``course_utils.x.y`` are made-up examples.
FAKE_NAMES = {"test_imports.py", "test_public_surface.py"}


def _cells(path: Path) -> list[tuple[str, str]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]


def _lesson_sources() -> dict[str, str]:
    """Every lesson's cells and every committed answer, by where they come from."""
    found = {f"{p.parent.name} cell {i}": src for p in LESSONS for i, (_, src) in enumerate(_cells(p))}
    mutants = sorted((ROOT / "tests/mutants").rglob("*.py"))
    found |= {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in mutants}
    return found


def resolve(root: str, dotted: str) -> object:
    """``root.dotted`` by attribute access from the package, importing submodules as Python would.

    Raises:
        AttributeError: when a part does not exist; DeprecationWarning (as an error) for a moved 0.1 name.
    """
    obj: object = cu
    path = "course_utils"
    for part in dotted.strip(".").split("."):
        if part in NOT_NAMES:
            break
        path = f"{path}.{part}"
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            if isinstance(obj, types.ModuleType) and not hasattr(obj, part):
                try:
                    importlib.import_module(path)
                except ModuleNotFoundError:
                    pass
            obj = getattr(obj, part)
    return obj


def test_the_surface_is_small_and_holds_no_modules():
    assert len(cu.__all__) <= 80, f"cu.__all__ has {len(cu.__all__)} names; the course keeps it to what lessons use"
    assert len(set(cu.__all__)) == len(cu.__all__), "a name is listed twice"
    modules = [n for n in cu.__all__ if isinstance(getattr(cu, n), types.ModuleType)]
    assert not modules, f"module objects in cu.__all__: {modules}"
    for name in cu.__all__:
        assert name.split(".")[0] in (cu.__doc__ or ""), f"the package docstring does not list cu.{name}"


def test_every_exported_name_is_used_by_a_lesson():
    text = "\n".join(_lesson_sources().values())
    unused = [n for n in cu.__all__ if not re.search(rf"(?<![\w.])cu\.{n}\b", text)]
    assert not unused, f"cu.__all__ exports names no lesson uses (give them a module path instead): {unused}"


def test_every_cu_reference_in_the_lessons_and_docs_resolves():
    sources = _lesson_sources()
    sources |= {p.name: p.read_text(encoding="utf-8") for p in (ROOT / n for n in
                ("README.md", "CONTRIBUTING.md", "INSTRUCTORS.md", "course_utils/README.md")) if p.exists()}
    code = [p for d in ("course_utils", "tools") for p in sorted((ROOT / d).rglob("*.py"))  # docstrings, messages
            if p.name != "_moved.py"]  # it names the 0.1 paths on purpose
    sources |= {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in code}
    broken = []
    for where, text in sources.items():
        for m in CU_REF.finditer(text):
            try:
                resolve("cu", m.group(1))
            except (AttributeError, DeprecationWarning) as e:
                broken.append(f"{where}: cu{m.group(1)} ({type(e).__name__}: {e})")
    assert not broken, "references that no longer resolve:\n" + "\n".join(sorted(set(broken)))


def test_one_path_per_name_in_the_lessons():
    """No lesson reaches ``cu.<package>.<module>.<f>`` where ``cu.<f>`` (or ``cu.capstone.<f>``) is that object."""
    twice = []
    for where, text in _lesson_sources().items():
        for m in CU_REF.finditer(text):
            parts = m.group(1).strip(".").split(".")
            for depth in range(2, len(parts)):
                short_root = cu.capstone if parts[0] == "capstone" and depth > 1 else cu
                name = parts[depth]
                try:
                    obj = resolve("cu", ".".join(parts[: depth + 1]))
                except (AttributeError, DeprecationWarning):
                    continue
                exported = getattr(short_root, "__all__", ())
                if name in exported and getattr(short_root, name) is obj:
                    short = "cu.capstone" if short_root is not cu else "cu"
                    twice.append(f"{where}: cu.{'.'.join(parts[: depth + 1])} is {short}.{name}")
    assert not twice, "use the short path:\n" + "\n".join(sorted(set(twice)))


@pytest.mark.parametrize("name", sorted(cu._MOVED))
def test_a_moved_name_still_works_for_one_release_and_says_where_it_went(name):
    module, attr = cu._MOVED[name]
    new = importlib.import_module(module)
    new = getattr(new, attr) if attr else new
    with pytest.warns(DeprecationWarning, match=rf"cu\.{name} moved to cu\.") as record:
        old = getattr(cu, name)
    assert "0.3" in str(record[0].message)
    if attr or len(_moved.OLD_MODULES[name]) == 1:
        assert old is new
    else:  # a module split in 0.2: every name of each of its homes, through the old module
        for home in _moved.OLD_MODULES[name]:
            mod = importlib.import_module(f"course_utils.{home}")
            for public in getattr(mod, "__all__", ()):
                assert getattr(old, public) is getattr(mod, public), f"cu.{name}.{public}"


@pytest.mark.parametrize("old", _moved.PACKAGE_NAMES)
def test_a_subpackage_that_took_an_old_module_name_answers_its_old_names(old):
    package = importlib.import_module(f"course_utils.{old}")
    for home in _moved.OLD_MODULES[old]:
        mod = importlib.import_module(f"course_utils.{home}")
        names = [n for n in getattr(mod, "__all__", ()) if n not in vars(package)]
        for name in names:
            with pytest.warns(DeprecationWarning, match=rf"cu\.{old}\.{name} moved to cu\.{old}\.\w+\.{name}"):
                assert getattr(package, name) is getattr(mod, name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018


def test_the_old_names_of_a_saved_0_1_lesson_resolve():
    """What 0.1's lessons 02, 10 and 19 said, as a learner's saved copy still says it."""
    with pytest.warns(DeprecationWarning):
        assert cu.launch.slurm_locally is cu.procs.slurm.slurm_locally
        assert cu.data.worker_counts is cu.data.loaders.worker_counts
        assert cu.training.evaluate is cu.evaluate
        assert cu.fixes.NAIVE_BATCH == cu.capstone.fixes.NAIVE_BATCH and cu.prepare is cu.capstone.prepare


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        cu.no_such_name  # noqa: B018


def test_every_course_utils_reference_in_the_code_and_docs_resolves():
    """Docstrings, comments and ``:func:`~course_utils.x.y``` cross-references would rot silently on a move."""
    files = [p for d in ("course_utils", "tools", "tests") for p in sorted((ROOT / d).rglob("*.py"))]
    files += [ROOT / n for n in ("README.md", "CONTRIBUTING.md", "INSTRUCTORS.md", "Makefile")]
    files.append(ROOT / "course_utils/README.md")
    broken = []
    for path in files:
        if not path.exists() or "mutants" in path.parts or path.name in FAKE_NAMES:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in COURSE_UTILS_REF.finditer(line):
                if m.group(1).startswith((".reference_results", ".__")):
                    continue
                try:
                    resolve("course_utils", m.group(1))
                except (AttributeError, DeprecationWarning) as e:
                    broken.append(f"{path.relative_to(ROOT)}:{n}: course_utils{m.group(1)} ({e})")
    assert not broken, "references that no longer resolve:\n" + "\n".join(broken)


def test_the_checker_catches_a_stale_reference():
    with pytest.raises(AttributeError):
        resolve("cu", ".measure.stats.no_such_function")
    with pytest.raises(DeprecationWarning):
        resolve("cu", ".stats.median_ci")
    assert resolve("cu", ".measure.stats.median_ci") is cu.measure.stats.median_ci
    assert resolve("cu", ".capstone.fixes.NAIVE_BATCH") == cu.capstone.fixes.NAIVE_BATCH
