"""Build lesson notebooks with the course anatomy and nbgrader metadata, from Python.

The notebooks in solutions/ are the source of truth; this module only helps to write a new one
(or regenerate cells) with the right cell metadata, so that nobody hand-edits nbgrader JSON:

    from tools.notebook_builder import Lesson
    nb = Lesson("04_mixed_precision", "Mixed precision")
    nb.md("# 04 · Mixed precision", nb.badge(), "The claim …")
    nb.md("## Learning goals", "- …")
    nb.setup()                                  # the one locked setup cell
    nb.code("model = …")                        # an ordinary cell
    nb.answer("ex1_answer", "def f(x):\\n    ### BEGIN SOLUTION\\n    …\\n    ### END SOLUTION")
    nb.tests("ex1_tests", "assert f(1) == 2\\n### BEGIN HIDDEN TESTS\\n…\\n### END HIDDEN TESTS", points=2)
    nb.written("q1_answer", "A model answer …", points=2)
    nb.closing("step_time", step_time="step_time", peak_memory="peak")   # the reference run, then cu.save
    nb.write()                                  # solutions/04_mixed_precision/04_mixed_precision.ipynb
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]


def _course_utils():
    import sys

    sys.path.insert(0, str(ROOT))
    import course_utils

    return course_utils


def _repo_url() -> str:
    return _course_utils().REPO_URL


def setup_source(cpu_threads: int | None = 1) -> str:
    """The locked setup cell's source: the Colab install pinned to this release, then ``cu.setup``.

    Every lesson's setup cell is this text, byte for byte (``tests/test_structure.py`` checks it).

    Args:
        cpu_threads: what ``cu.setup`` pins torch's CPU threads to on a CPU (1, for steady
            timings); None for a lesson that first shows torch's own count (00 pins later).
    """
    cu = _course_utils()
    threads = "one torch thread" if cpu_threads == 1 else f"{cpu_threads} torch threads"
    call = "cu.setup(seed=0)" if cpu_threads is None else (
        f"cu.setup(seed=0, cpu_threads={cpu_threads})  # on a CPU, {threads}: steadier timings")
    return (
        "# Setup: run this cell first; don't change it.\n"
        "import sys\n\n"
        "if \"google.colab\" in sys.modules:  # Colab: install the course library (keeps Colab's torch)\n"
        f"    %pip install -q \"course_utils @ git+{cu.REPO_URL}@v{cu.__version__}\"\n\n"
        "import course_utils as cu\n\n"
        f"env = {call}"
    )


#: The lead-in of every lesson's closing cell (:meth:`Lesson.closing`).
CLOSING = ("Last, the stored GPU reference run for this lesson (if one has been recorded), and your results saved "
           "with their environment record for the course scoreboard.")


def _nbgrader(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
              points: float | None = None, task: bool = False) -> dict:
    md = {"schema_version": 3, "grade": grade, "solution": solution, "locked": locked,
          "task": task, "grade_id": grade_id}
    if grade:
        md["points"] = points
    return md


class Lesson:
    """A notebook under construction, one cell at a time."""

    def __init__(self, slug: str, title: str) -> None:
        self.slug = slug
        self.title = title
        self.cells: list = []

    def badge(self) -> str:
        """The "Open in Colab" badge for this lesson's student notebook."""
        path = self._github_path()
        return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
                f"(https://colab.research.google.com/github/{path}/blob/main/notebooks/"
                f"{self.slug}/{self.slug}.ipynb)")

    @staticmethod
    def _github_path() -> str:
        return _repo_url().removeprefix("https://github.com/")

    def md(self, *paragraphs: str) -> None:
        """A markdown cell; paragraphs are joined by blank lines."""
        self.cells.append(new_markdown_cell("\n\n".join(p.strip("\n") for p in paragraphs)))

    def code(self, source: str, *, tags: tuple[str, ...] = ()) -> None:
        """An ordinary code cell (tags such as ``nbval-skip`` optional)."""
        cell = new_code_cell(source.strip("\n"))
        if tags:
            cell.metadata["tags"] = list(tags)
        self.cells.append(cell)

    def setup(self, extra: str = "", *, cpu_threads: int | None = 1) -> None:
        """The one locked setup cell (:func:`setup_source`): Colab install of this release, ``cu.setup``.

        ``cpu_threads``: 1 pins torch to one thread on a CPU; None keeps torch's own count (00).
        """
        src = setup_source(cpu_threads)
        if extra:
            src += "\n" + extra.strip("\n")
        cell = new_code_cell(src)
        cell.metadata["nbgrader"] = _nbgrader("setup", locked=True)
        self.cells.append(cell)

    def closing(self, headline: str, **measurements: str) -> None:
        """The closing cells: one sentence, then the stored reference run and ``cu.save`` of the results.

        ``measurements`` maps each saved name to the expression that gives it (``step_time="step_time"``).
        One that is None in a run (an exercise not finished yet, a figure this device does not give)
        is left out by ``cu.save``: no ``if x is not None`` in the cell.

        Raises:
            ValueError: ``headline`` is not one of ``measurements``.
        """
        if headline not in measurements:
            raise ValueError(f"headline {headline!r} is not one of the measurements: {sorted(measurements)}")
        self.md(CLOSING)
        args = "".join(f",\n            {name}={expression}" for name, expression in measurements.items())
        self.code(f'cu.references("{self.slug}")\n_ = cu.save("{self.slug}", env, headline="{headline}"{args})')

    def answer(self, grade_id: str, source: str) -> None:
        """An autograded answer cell: the solution sits between BEGIN/END SOLUTION markers."""
        cell = new_code_cell(source.strip("\n"))
        cell.metadata["nbgrader"] = _nbgrader(grade_id, solution=True)
        self.cells.append(cell)

    def tests(self, grade_id: str, source: str, *, points: float) -> None:
        """A locked test cell worth ``points``: visible asserts, then BEGIN/END HIDDEN TESTS."""
        cell = new_code_cell(source.strip("\n"))
        cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=True, locked=True, points=points)
        self.cells.append(cell)

    def written(self, grade_id: str, model_answer: str, *, points: float) -> None:
        """A manually graded written answer; the release shows "YOUR ANSWER HERE" instead."""
        cell = new_markdown_cell(model_answer.strip("\n"))
        cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=True, solution=True, points=points)
        self.cells.append(cell)

    def write(self, root: Path = ROOT) -> Path:
        """Write ``<root>/solutions/<slug>/<slug>.ipynb`` (outputs empty; root: this checkout) and return its path."""
        nb = new_notebook(cells=self.cells)
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                     "language": "python"}
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{self.slug[:2]}-{i:03d}"  # stable ids: clean diffs, deterministic release
        nbformat.validate(nb)
        path = root / "solutions" / self.slug / f"{self.slug}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        return path
