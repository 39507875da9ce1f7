"""Units for printouts: durations and byte counts, formatted the same way everywhere.

The lowest room of the house: it imports nothing from ``course_utils``, so every module that
prints a number can use it without an import cycle.
"""

from __future__ import annotations

__all__ = ["format_bytes", "format_seconds"]


def format_seconds(seconds: float) -> str:
    """Format a duration with a unit that keeps 3 significant figures (``'12.3 ms'``)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:.3g} s"  # pragma: no cover


def format_bytes(n: float | None) -> str:
    """Format a byte count with a binary unit (``'1.50 MiB'``); ``'n/a'`` for None."""
    if n is None:
        return "n/a"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} GiB"  # pragma: no cover
