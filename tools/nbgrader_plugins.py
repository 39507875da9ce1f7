"""nbgrader preprocessors of the course, installed by nbgrader_config.py.

``StripRunMetadata`` (in ``generate_assignment``): drops the execution-timing metadata that
running a notebook in place records (``metadata.execution``, ``ExecuteTime``), so the release
in notebooks/ is the same whichever machine built it.

``HideHiddenTests`` (in ``generate_feedback``): hides hidden tests in the feedback HTML returned
to students. nbgrader renders feedback from the autograded notebook, in which the hidden tests
have been restored, so by default students would read them (nbgrader issue #917). In every cell
with a hidden-test block it:

* replaces the lines from ``### BEGIN HIDDEN TESTS`` to ``### END HIDDEN TESTS`` by one comment;
* replaces an error by a short message that does not reveal the test: "A hidden test failed:
  AssertionError" when the failing line is hidden, or the visible line and the error when it is
  visible (tracebacks show source lines, and assertion messages can show expected values);
* drops the cell's other outputs (a hidden test may print expected values).

As a safety net it also removes, from every cell's outputs, any output that quotes a hidden-test
line (a student's own cell could print the kernel's input history). The per-cell score that
nbgrader shows is untouched, so students still see which tests passed.

Switch: ``COURSE_FEEDBACK_SHOW_HIDDEN=1`` (``make feedback SHOW_HIDDEN=1``) or
``--HideHiddenTests.enabled=False`` leaves the feedback as nbgrader makes it.
"""

from __future__ import annotations

import re
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List, Unicode

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
FRAME = re.compile(r"Cell In\s*\[(\d+)\],\s*line (\d+)")


def hidden_line_numbers(source: str, begin: str, end: str) -> set[int]:
    """1-based numbers of the lines of ``source`` inside hidden-test blocks, markers included."""
    hidden, inside = set(), False
    for number, line in enumerate(source.split("\n"), 1):
        if begin in line:
            inside = True
        if inside:
            hidden.add(number)
        if end in line:
            inside = False
    return hidden


def failing_line(output: NotebookNode, execution_count: int | None) -> int | None:
    """Line of this cell where an error output was raised, read from its traceback, or None."""
    if execution_count is None:
        return None
    text = ANSI.sub("", "\n".join(output.get("traceback", [])))
    lines = [int(line) for count, line in FRAME.findall(text) if int(count) == execution_count]
    return lines[-1] if lines else None


def _output_text(output: NotebookNode) -> str:
    parts = [str(output.get("text", "")), str(output.get("evalue", ""))]
    parts += [ANSI.sub("", str(t)) for t in output.get("traceback", [])]
    for value in output.get("data", {}).values():
        parts.append(value if isinstance(value, str) else "".join(value) if isinstance(value, list) else "")
    return "\n".join(parts)


def _stream(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text)


class StripRunMetadata(NbGraderPreprocessor):
    """Remove per-run cell metadata (execution timestamps) before the release is written."""

    keys = List(["execution", "ExecuteTime"], help="Cell metadata keys to drop").tag(config=True)

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict[str, Any], index: int
    ) -> tuple[NotebookNode, dict[str, Any]]:
        """Drop ``keys`` from one cell's metadata."""
        for key in self.keys:
            cell.metadata.pop(key, None)
        return cell, resources


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden-test source, tracebacks and outputs from notebooks rendered as feedback."""

    # NbGraderPreprocessor redefines this trait without config=True, which makes traitlets warn
    # about nbconvert's HTML config for it; declaring it configurable keeps the log clean.
    display_data_priority = List(
        ["text/html", "application/pdf", "text/latex", "image/svg+xml", "image/png", "image/jpeg",
         "text/plain"]
    ).tag(config=True)

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS", help="Start of a hidden-test block").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS", help="End of a hidden-test block").tag(config=True)
    placeholder = Unicode("# (hidden tests: not shown)", help="Shown instead of the block").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        """Redact every cell, then drop any output anywhere that quotes a hidden-test line."""
        secrets = self._secret_lines(nb)
        nb, resources = super().preprocess(nb, resources)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            kept = [o for o in cell.get("outputs", []) if not any(s in _output_text(o) for s in secrets)]
            if len(kept) < len(cell.outputs):
                kept.append(_stream("(an output that showed hidden-test code was removed)\n"))
                cell.outputs = kept
        return nb, resources

    def _secret_lines(self, nb: NotebookNode) -> set[str]:
        """Stripped hidden-test lines that appear nowhere outside the hidden blocks (so are secret)."""
        hidden, visible = set(), set()
        for cell in nb.cells:
            lines = cell.source.split("\n")
            numbers = hidden_line_numbers(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
            for number, line in enumerate(lines, 1):
                (hidden if number in numbers else visible).add(line.strip())
        return {line for line in hidden - visible if len(line) >= 8 and "HIDDEN TESTS" not in line}

    def preprocess_cell(
        self, cell: NotebookNode, resources: dict[str, Any], index: int
    ) -> tuple[NotebookNode, dict[str, Any]]:
        """Replace the hidden block of one cell and rewrite its outputs."""
        numbers = hidden_line_numbers(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
        if not numbers:
            return cell, resources
        lines = cell.source.split("\n")
        source: list[str] = []
        for number, line in enumerate(lines, 1):
            if number not in numbers:
                source.append(line)
            elif number == 1 or number - 1 not in numbers:  # first line of a block
                indent = line[: len(line) - len(line.lstrip())]
                source.append(indent + self.placeholder)
        cell.source = "\n".join(source)
        if cell.cell_type == "code":
            cell.outputs = self._redact_outputs(cell, lines, numbers)
        return cell, resources

    def _redact_outputs(self, cell: NotebookNode, lines: list[str], hidden: set[int]) -> list[NotebookNode]:
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        outputs: list[NotebookNode] = []
        if len(errors) < len(cell.get("outputs", [])):  # a hidden test may print expected values
            outputs.append(_stream("(output of a cell with hidden tests is not shown)\n"))
        for error in errors:
            ename = error.get("ename", "Error")
            line = failing_line(error, cell.get("execution_count"))
            if line is not None and line not in hidden and line <= len(lines):
                shown = lines[line - 1].strip()
                message = f"A visible test failed: {shown}\n{ename}: {error.get('evalue', '')}"
            elif line is not None:
                message = f"A hidden test failed: {ename}"
            elif ename == "CellTimeoutError":
                message = "This test cell ran out of time (CellTimeoutError): is there an infinite loop?"
            else:
                message = f"A test in this cell failed: {ename}"
            outputs.append(NotebookNode(output_type="error", ename=ename, evalue="", traceback=[message]))
        return outputs
