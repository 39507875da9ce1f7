"""Other processes: the fork server and child runner behind ``cu.in_processes``, and ``torchrun`` launches."""

from . import launch  # noqa: F401  (``cu.procs.<module>.<name>`` always resolves)
