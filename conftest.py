"""Test session set-up for every pytest run in this checkout (tests/ and `pytest solutions/NN_slug`).

CPU smoke profile, results into a temporary folder, no GUI backend. These variables are set
before any notebook kernel starts, so the kernels the tests start (nbval's, nbgrader's) inherit
them. ``COURSE_RESULTS_DIR`` is always replaced, even when the caller set it: a test run never
writes into the course's results/.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

os.environ["COURSE_PROFILE"] = "smoke"
os.environ["MPLBACKEND"] = "Agg"
os.environ["COURSE_RESULTS_DIR"] = tempfile.mkdtemp(prefix="course-results-")
atexit.register(shutil.rmtree, os.environ["COURSE_RESULTS_DIR"], True)
os.environ.setdefault("COURSE_DATA", str(Path(tempfile.gettempdir()) / "course-data-tests"))
