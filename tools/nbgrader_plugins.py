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

As a safety net it also withholds any output, in any cell, that holds hidden-test text: the
student's code runs in the kernel that ran the hidden tests, so it can read them (input history,
``inspect``) and print them, verbatim or encoded. An output that quotes a hidden line is removed;
one whose text, or a decoding of it (base64, hex, rot13, zlib, ...: tools/leaks.py), holds a
24-character fingerprint of the hidden tests is replaced by "(an output that held hidden-test
text, encoded as <encoding>, was removed)"; so is each output of the shortest run of outputs that
leaks only when read together (a leak split over prints or cells), and an output too big to check.
Every output is checked (stream, error name, value and traceback, each data value, a PNG's text
chunks but not its pixels, metadata), the messages written here included, and so is the widget
state that the HTML embeds (dropped if it leaks). Fingerprints found in the notebook's other cells
or in the source of ``public_packages`` (course_utils, torch: students read it in tracebacks) are
not secret. ``resources["course_leaks"]`` lists (cell index, encoding) for what was withheld (cell
-1: the widget state), and the log names it. Limits: a cipher that is not one of tools/leaks.py's
decodings, text drawn into an image, or leaks shorter than 24 letters
and digits (one expected value) get through. The per-cell score that nbgrader shows is untouched,
so students still see which tests passed. (Script in an HTML output is stripped by the
feedback exporter: ``HTMLExporter.sanitize_html`` in nbgrader_config.py.)

Switch: ``COURSE_FEEDBACK_SHOW_HIDDEN=1`` (``make feedback SHOW_HIDDEN=1``) or
``--HideHiddenTests.enabled=False`` leaves the feedback as nbgrader makes it.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List, Unicode

from tools import leaks

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
    public_packages = List(Unicode(), ["course_utils", "torch"], help=(
        "Packages whose source students can read (in tracebacks, say): hidden-test text found there too "
        "(an idiom, a torch error message) is not secret")).tag(config=True)
    MAX_SPLIT_LEAKS = 20  # runs of outputs that leak joined, looked for one by one; past that, all withheld
    _not_public: dict[tuple[tuple[str, ...], str], set[str]] = {}  # fingerprints by (packages, hidden text)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        """Redact every cell, then withhold any output anywhere that holds hidden-test text."""
        secrets, (self._hidden, self._prints) = self._secret_lines(nb), self._fingerprints(nb)
        self._narrowed = not self.public_packages
        nb, resources = super().preprocess(nb, resources)
        resources["course_leaks"] = self._withhold(nb, secrets)
        return nb, resources

    def _fingerprints(self, nb: NotebookNode) -> tuple[str, set[str]]:
        """The hidden blocks and their fingerprints (tools/leaks.py) less those of every other source line."""
        hidden, visible = [], []
        for cell in nb.cells:
            numbers = hidden_line_numbers(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
            for number, line in enumerate(cell.source.split("\n"), 1):
                if number not in numbers:
                    visible.append(line)
                elif self.begin_test_delimeter not in line and self.end_test_delimeter not in line:
                    hidden.append(line)
        return "\n".join(hidden), leaks.fingerprints("\n".join(hidden), "\n".join(visible))

    def _find(self, find: Any, what: Any) -> Any:
        """``find(what, fingerprints)``; on a first find, drop the fingerprints public packages hold, retry.

        Their source (~2 s for torch's) is read only once something is found, once per process; the
        fingerprints it leaves are kept per assignment (hidden text).
        """
        found = find(what, self._prints)
        if found and not self._narrowed:
            key, self._narrowed = (tuple(self.public_packages), self._hidden), True
            if key not in self._not_public:
                self._not_public[key] = leaks.fingerprints(key[1], self._public_source(key[0]))
            self._prints &= self._not_public[key]
            found = find(what, self._prints)
        return found

    @staticmethod
    @functools.lru_cache(maxsize=2)
    def _public_source(packages: tuple[str, ...]) -> str:
        """The Python source of these installed packages, joined (a package not installed adds nothing)."""
        texts = []
        for name in packages:
            spec = importlib.util.find_spec(name)
            for folder in (spec.submodule_search_locations or []) if spec else []:
                texts += [path.read_text(errors="ignore") for path in sorted(Path(folder).rglob("*.py"))]
        return "\n".join(texts)

    @staticmethod
    def _notice(name: str) -> NotebookNode:
        if name == leaks.TOO_BIG:
            return _stream("(an output too big to check for hidden-test text was removed)\n")
        if name == "verbatim":
            return _stream("(an output that showed hidden-test code was removed)\n")
        return _stream(f"(an output that held hidden-test text, encoded as {name}, was removed)\n")

    def _withhold(self, nb: NotebookNode, secrets: set[str]) -> list[tuple[int, str]]:
        """Replace each leaking output, then each run of outputs that leaks joined; what was removed."""
        removed: list[tuple[int, str]] = []
        shown: list[tuple[int, NotebookNode, str]] = []  # (cell index, output, its text) still shown
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            outputs = []
            for output in cell.get("outputs", []):
                text = leaks.output_text(output)
                name = "verbatim" if any(s in _output_text(output) for s in secrets) else self._find(leaks.leak, text)
                if name:
                    outputs.append(self._notice(name))
                    removed.append((index, name))
                else:
                    outputs.append(output)
                    shown.append((index, output, text))
            cell.outputs = outputs
        for _ in range(self.MAX_SPLIT_LEAKS):
            window = self._find(leaks.leaking_window, [text for _, _, text in shown])
            if window is None:
                break
            first, end, name = window
            run, shown[first:end] = shown[first:end], []
            removed += self._replace(nb, run, f"{name}, split over {len(run)} outputs" if len(run) > 1 else name)
        else:  # so many leaks that checking on would take too long: withhold what is left
            removed += self._replace(nb, shown, leaks.TOO_BIG) if shown else []
        widgets = nb.metadata.get("widgets")  # the state of the kernel's widgets, which the HTML embeds
        if widgets and (name := self._find(leaks.leak, leaks.output_text({"data": widgets}))):
            del nb.metadata["widgets"]
            removed.append((-1, name))  # -1: the notebook's metadata
        if removed:
            self.log.warning("Feedback: withheld %d output(s) holding hidden-test text: %s", len(removed),
                             ", ".join(f"cell {index} ({name})" for index, name in removed))
        return removed

    def _replace(self, nb: NotebookNode, run: list[tuple[int, NotebookNode, str]], name: str) -> list[tuple[int, str]]:
        """Put one notice where the first output of ``run`` was in each of its cells; drop the rest."""
        cells = list(dict.fromkeys(index for index, _, _ in run))
        for index in cells:
            gone, cell = {id(o) for i, o, _ in run if i == index}, nb.cells[index]
            at = min(k for k, o in enumerate(cell.outputs) if id(o) in gone)
            kept = [*cell.outputs[:at], self._notice(name), *cell.outputs[at:]]
            cell.outputs = [o for o in kept if id(o) not in gone]
        return [(index, name) for index in cells]

    def _secret_lines(self, nb: NotebookNode) -> set[str]:
        """Stripped hidden-test lines that appear nowhere outside the hidden blocks (so are secret)."""
        hidden, visible = set[str](), set[str]()
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
