"""Test session set-up: CPU smoke profile, results into a temporary folder, no GUI backend.

These variables are set before any notebook kernel starts, so nbval's kernels inherit them.
"""

import os
import tempfile
from pathlib import Path

os.environ["COURSE_PROFILE"] = "smoke"
os.environ["MPLBACKEND"] = "Agg"
os.environ.setdefault("COURSE_RESULTS_DIR", tempfile.mkdtemp(prefix="course-results-"))
os.environ.setdefault("COURSE_DATA", str(Path(tempfile.gettempdir()) / "course-data-tests"))

# Fixture notebooks are inputs of the grading tests, not notebooks for nbval to execute.
collect_ignore_glob = ["fixtures/*"]
