"""What a result means and where it goes: saving, labels, the readings a lesson prints, the report and the figures.

``store`` and ``labels`` never import ``report`` or ``plots`` (tests/test_imports.py).
"""

from . import labels, plots, readings, report, store  # noqa: F401  (``cu.results.<module>.<name>`` always resolves)


def __getattr__(name: str) -> object:
    """0.1's ``cu.results.<name>`` (the module this subpackage replaced), with a DeprecationWarning, until 0.3."""
    from .._moved import old_attribute

    return old_attribute("results", name)
