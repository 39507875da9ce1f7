"""``python -m course_utils.calibration [--comparisons N] [--profile P]`` (``make calibrate``)."""

from .runner import main

raise SystemExit(main())
