# nbgrader configuration of the course (nbgrader 0.9.6). Read by every `nbgrader ...` command
# run from this folder, by `make release|autograde|feedback` and by the formgrader in `make lab`.
# The instructor workflow is in INSTRUCTORS.md. Nothing here is machine-specific: every path is
# derived from this file's location.
import os
import sys

c = get_config()
HERE = os.path.dirname(os.path.abspath(__file__))  # traitlets sets __file__; root must be absolute

c.CourseDirectory.course_id = "faster-pytorch"
c.CourseDirectory.root = HERE
c.CourseDirectory.source_directory = "solutions"  # instructor notebooks: solutions + hidden tests
c.CourseDirectory.release_directory = "notebooks"  # generated student notebooks (committed)
# submitted/, autograded/, feedback/, downloaded/ and gradebook.db (all git-ignored) sit next to
# this file (nbgrader's defaults).

# Per-cell limit when autograding. Autograding runs the smoke profile (nbgrader sets
# NBGRADER_EXECUTION, course_utils maps it to `smoke`), where a whole lesson takes under 30 s;
# 120 s leaves room for a slow machine and still cuts an infinite loop in an answer.
c.Execute.timeout = 120

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}

# LMS downloads for `make zip-collect`: files named <student>__<notebook>.ipynb (or zips of such
# files) in downloaded/<assignment>/archive/. The regexp is matched against the absolute path.
# strict = False: a wrongly named notebook (student__Copy of 01_x.ipynb) is collected as it is,
# so that `make check-submissions` names it, instead of being skipped with a log warning.
c.ZipCollectApp.strict = False
c.FileNameCollectorPlugin.named_regexp = (
    r".*/(?P<student_id>[A-Za-z0-9_.@+-]+?)__(?P<file_id>[^/]+\.ipynb)$"
)

# Course preprocessors (tools/nbgrader_plugins.py): the release drops execution-timing metadata
# (so it is the same on every machine), and feedback returned to students hides hidden tests
# (nbgrader shows them: its issue #917). To show them: COURSE_FEEDBACK_SHOW_HIDDEN=1
# (make feedback SHOW_HIDDEN=1) or --HideHiddenTests.enabled=False.
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.converters import GenerateAssignment  # noqa: E402
from nbgrader.preprocessors import GetGrades  # noqa: E402

from tools.nbgrader_plugins import HideHiddenTests, StripRunMetadata  # noqa: E402

c.GenerateAssignment.preprocessors = [StripRunMetadata, *GenerateAssignment.preprocessors.default()]
c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor]
c.HideHiddenTests.enabled = os.environ.get("COURSE_FEEDBACK_SHOW_HIDDEN", "") not in {"1", "true", "yes"}

# `make autograde` runs every submission in a sandbox first (tools/grade_runs.py), then scores the
# executed notebooks with one nbgrader call that must not clear or execute them again.
if os.environ.get("COURSE_GRADING_PHASE") == "merge":
    from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
    from nbgrader.preprocessors import (  # noqa: E402
        AssignLatePenalties,
        CheckCellMetadata,
        DeduplicateIds,
        IgnorePattern,
        LimitOutput,
        OverwriteCells,
        OverwriteKernelspec,
        SaveAutoGrades,
    )

    c.Autograde.sanitize_preprocessors = [DeduplicateIds, OverwriteKernelspec, OverwriteCells, CheckCellMetadata]
    c.Autograde.autograde_preprocessors = [IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
                                           AssignLatePenalties, CheckCellMetadata]

# Feedback HTML keeps no <script> or other active content a student's output could carry.
c.HTMLExporter.sanitize_html = True
