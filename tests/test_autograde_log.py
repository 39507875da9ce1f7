"""nbgrader's expected "checksum has changed" notes stay out of the autograde log and output."""

from __future__ import annotations

import subprocess

from tools import nbgrader_run
from tools.autograding import failures, last_submission, restored_line
from tools.nbgrader_run import restored_cells, without_restored

# the line as nbgrader 0.9.6 writes it (OverwriteCells.report_change, a log.warning)
NOTE = ("[AutogradeApp | WARNING] Attribute 'checksum' for cell ex{0}_tests has changed! "
        "(should be: 0a1b2c{0}, got: 9f8e7d{0})")
LOG = "\n".join([
    "[AutogradeApp | INFO] Sanitizing /tmp/course-autograde-x/submitted/ann/08_x/08_x.ipynb",
    NOTE.format(1),
    NOTE.format(2),
    "[AutogradeApp | WARNING] Attribute 'points' for cell ex3_tests has changed! (should be: 2.0, got: 5.0)",
    "[AutogradeApp | ERROR] There was an error processing assignment: /c/submitted/ann/01_x",
    "[AutogradeApp | ERROR] Traceback (most recent call last):",
    "      File \"x.py\", line 1, in f",
    "    nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{'",
    NOTE.format(3),
    "[AutogradeApp | INFO] Sanitizing /tmp/course-autograde-x/submitted/bob/02_y/02_y.ipynb",
]) + "\n"


def test_checksum_notes_are_counted_and_dropped_other_warnings_kept():
    assert restored_cells(LOG) == 3
    kept = without_restored(LOG)
    assert "'checksum'" not in kept and restored_cells(kept) == 0
    assert "Attribute 'points' for cell ex3_tests has changed!" in kept  # a real warning stays
    assert kept.count("\n") == LOG.count("\n") - 3
    # the failure parsing reads the same from the filtered text as from the full one
    for text in (LOG, kept):
        want = "nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{'"
        assert failures(text) == {("ann", "01_x"): want}
        assert last_submission(text) == ("bob", "02_y")
    assert restored_line(3).startswith("3 hidden-test cell(s) restored from the release")


def test_nbgrader_run_leaves_the_notes_out_of_log_and_echo(tmp_path, monkeypatch):
    class FakeProc:  # stands in for `python -m nbgrader`: prints LOG, exits 0
        def __init__(self, *args, **kwargs):
            self.stdout = iter(LOG.splitlines(keepends=True))

        def wait(self):
            return 0

    monkeypatch.setattr(subprocess, "Popen", FakeProc)
    echoed = []
    log = tmp_path / "autograde.log"
    rc, text = nbgrader_run.nbgrader(["autograde"], log=log, echo=lambda line: echoed.append(line) or None)
    assert rc == 0 and restored_cells(text) == 3  # the caller can still count them
    saved = log.read_text()
    assert "'checksum'" not in saved and "'points'" in saved and "There was an error processing" in saved
    assert len(echoed) == len(LOG.splitlines()) - 3 and not any("'checksum'" in e for e in echoed)
