"""What test cells and unfinished exercises use: readable assertions, spies, property checks, ``needs``."""

from . import checks, exercises, opwatch, properties, restores  # noqa: F401  (``cu.lesson.<module>.<name>`` always resolves)
