"""The reference training loop, what it records, and the small models the lessons train."""

from . import history, loop, models  # noqa: F401  (``cu.training.<module>.<name>`` always resolves)
