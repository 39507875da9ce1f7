"""One run of :func:`course_utils.processes.in_processes` in a fresh interpreter.

``python -m course_utils._child target kwargs.json result.json``
"""

import sys

from .processes import child_main

if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
