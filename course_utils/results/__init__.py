"""What a result means and where it goes: saving, labels, the readings a lesson prints, the report and the figures.

``store`` and ``labels`` never import ``report`` or ``plots`` (tests/test_imports.py).
"""

from . import labels, plots, readings, report, store  # noqa: F401  (``cu.results.<module>.<name>`` always resolves)
