"""The reference training loop, what it records, and the small models the lessons train."""

from . import history, loop, models  # noqa: F401  (``cu.training.<module>.<name>`` always resolves)


def __getattr__(name: str) -> object:
    """0.1's ``cu.training.<name>`` (the module this subpackage replaced), with a DeprecationWarning, until 0.3."""
    from .._moved import old_attribute

    return old_attribute("training", name)
