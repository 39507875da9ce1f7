"""The engine's error rates on the real clock: real A/A comparisons of real workloads, false verdicts counted.

``make calibrate`` runs ``python -m course_utils.calibration``; a notebook calls :func:`calibrate` or reads
the last run with :func:`load_calibration`. ``runner`` runs and saves, ``workloads`` holds what is
compared, ``records`` what each comparison gave.
"""

from .runner import Calibration, calibrate, load_calibration

__all__ = ["Calibration", "calibrate", "load_calibration"]


def __getattr__(name: str) -> object:
    """0.1's ``cu.calibration.<name>`` (the module this subpackage replaced), with a DeprecationWarning, until 0.3."""
    from .._moved import old_attribute

    return old_attribute("calibration", name)
