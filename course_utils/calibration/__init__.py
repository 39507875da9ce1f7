"""The engine's error rates on the real clock: real A/A comparisons of real workloads, false verdicts counted.

``make calibrate`` runs ``python -m course_utils.calibration``; a notebook calls :func:`calibrate` or reads
the last run with :func:`load_calibration`. ``runner`` runs and saves, ``workloads`` holds what is
compared, ``records`` what each comparison gave.
"""

from .runner import Calibration, calibrate, load_calibration

__all__ = ["Calibration", "calibrate", "load_calibration"]
